/*
 * test_calibrate.c: calibration (core/src/fit/calibrate.c).  Profiles round-trip through
 * ec_profile_write / ec_profile_read; broken profiles fail at line:col; ec_ctx_set_fit
 * refuses what it cannot use; and a fit on synthetic measurements -- predictions made with a
 * known fit, written as a run-record CSV -- recovers the parameters that made them.
 */
#include "ec_test.h"
#include "model/compute.h"
#include "internal.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

/* The priors as a report, read back from a one-row profile, so that the test follows the
 * parameter list of calibrate.c instead of copying it. */
static void prior_fit(ec_ctx *ctx, const char *dir, ec_fit_report *rep)
{
    char *path = ec_test_path(dir, "prior.csv");
    static const char text[] = "parameter,value\ndispatch_scale,1\n";
    ec_test_write_file(path, text, sizeof text - 1);
    int rc = ec_profile_read(ctx, path, rep);
    free(path);
    if (rc != EC_OK)
        fail_msg("ec_profile_read: %s", ec_ctx_errmsg(ctx));
}

static int param_index(const ec_fit_report *rep, const char *name)
{
    for (size_t j = 0; j < rep->n_params; j++)
        if (strcmp(rep->names[j], name) == 0)
            return (int)j;
    fail_msg("no parameter '%s'", name);
    return -1;
}

/* |a - b| <= 5e-6 |b|: equal to 6 significant digits (the profile writes %.6g). */
#define EC_TOL_6_DIGITS 5e-6

/* ---- profiles ---------------------------------------------------------------------------- */

static void test_profile_round_trip(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "profile.csv");
    ec_fit_report rep, back;
    prior_fit(ctx, dir, &rep);
    assert_true(rep.n_params >= 5 && rep.n_params <= EC_FIT_MAX_PARAMS);
    /* high-entropy values over several decades */
    static const double vals[] = {0.7303164921, 1.062620553, 0.000793921577, 1069.49333, 0.3964751, 3.71234567e5,
                                  2.5, 0.125, 0.6789012345};
    assert_true(rep.n_params <= sizeof vals / sizeof vals[0]);
    for (size_t j = 0; j < rep.n_params; j++) {
        rep.values[j] = vals[j];
        rep.stderrs[j] = 0.0123456 * (double)(j + 1);
    }
    assert_int_equal(ec_profile_write(ctx, &rep, path), EC_OK);
    assert_int_equal(ec_profile_read(ctx, path, &back), EC_OK);
    assert_int_equal(back.n_params, rep.n_params);
    for (size_t j = 0; j < rep.n_params; j++) {
        assert_string_equal(back.names[j], rep.names[j]);
        /* value read == value written, to 6 significant digits */
        assert_rel(back.values[j], rep.values[j], EC_TOL_6_DIGITS);
    }
    /* the file is a CSV with the documented header, and no temporary is left behind */
    char *text = ec_test_read_file(path, NULL);
    assert_non_null(text);
    assert_true(strncmp(text, "parameter,architecture,value,stderr,runs,fitted_on,kernels,meaning\n", 66) == 0);
    assert_contains(text, "gemm_scale,,0.730316,");
    free(text);
    char *tmp = ec_test_path(dir, "profile.csv.tmp");
    assert_false(ec_test_exists(tmp));
    free(tmp);

    /* A profile naming a subset leaves the others at their priors (mem_scale_cnn, absent, takes
     * mem_scale's value: a profile without it has one memory scale for every network). */
    ec_fit_report prior;
    prior_fit(ctx, dir, &prior);
    static const char part[] = "parameter,value\nmem_scale,1.234567\n";
    ec_test_write_file(path, part, sizeof part - 1);
    assert_int_equal(ec_profile_read(ctx, path, &back), EC_OK);
    for (size_t j = 0; j < back.n_params; j++) {
        double want = strncmp(back.names[j], "mem_scale", 9) == 0 ? 1.234567 : prior.values[j];
        assert_rel(back.values[j], want, EC_TOL_EXACT);
    }

    /* A file this context read is never replaced by it (outfile.c): writing path again fails. */
    assert_int_equal(ec_profile_write(ctx, &rep, path), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "is an input of this run");
    /* A profile used through the config key gives the same prediction as ec_ctx_set_fit. */
    char *path_key = ec_test_path(dir, "profile_key.csv");
    assert_int_equal(ec_profile_write(ctx, &rep, path_key), EC_OK);
    assert_int_equal(ec_profile_read(ctx, path_key, &back), EC_OK);
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "model=bert-base"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "gpu=t4"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "precision=amp_fp16"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "batch_per_gpu=24"), EC_OK);
    ec_result by_fit, by_key;
    assert_int_equal(ec_ctx_set_fit(ctx, &back), EC_OK);
    assert_int_equal(ec_predict(ctx, &cfg, &by_fit), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "profile", path_key), EC_OK);
    assert_int_equal(ec_predict(ctx, &cfg, &by_key), EC_OK);
    assert_rel(by_key.step_s, by_fit.step_s, EC_TOL_EXACT);

    free(path_key);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

static void expect_profile_error(ec_ctx *ctx, const char *dir, const char *text, int code, const char *want)
{
    char *path = ec_test_path(dir, "bad.csv");
    ec_test_write_file(path, text, strlen(text));
    ec_fit_report rep;
    int rc = ec_profile_read(ctx, path, &rep);
    if (rc != code)
        fail_msg("profile \"%s\": rc %d, expected %d: %s", text, rc, code, ec_ctx_errmsg(ctx));
    assert_contains(ec_ctx_errmsg(ctx), want);
    free(path);
}

static void test_profile_errors(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    /* an unknown parameter: file:line:col and the nearest name */
    expect_profile_error(ctx, dir, "parameter,value\ngemm_scale,0.9\nmem_scael,1.1\n", EC_EPARSE,
                         "bad.csv:3:1: unknown parameter 'mem_scael' (did you mean 'mem_scale'?)");
    /* parameter in the second column: the column number follows */
    expect_profile_error(ctx, dir, "value,parameter\n0.9,gemm_scale\n1.1,dispatch\n", EC_EPARSE,
                         "bad.csv:3:2: unknown parameter 'dispatch'");
    /* a value that is not a number, and one outside (1e-6, 1e6) */
    expect_profile_error(ctx, dir, "parameter,value\ngemm_scale,fast\n", EC_EPARSE, "bad.csv:2:");
    expect_profile_error(ctx, dir, "parameter,value\ngemm_scale,0\n", EC_EPARSE, "bad.csv:2:");
    expect_profile_error(ctx, dir, "parameter,value\ngemm_scale,-1\n", EC_EPARSE, "bad.csv:2:");
    /* missing columns */
    expect_profile_error(ctx, dir, "parameter,valeur\ngemm_scale,1\n", EC_EPARSE, "value");
    expect_profile_error(ctx, dir, "name,value\ngemm_scale,1\n", EC_EPARSE, "parameter");
    /* a file that is not there */
    ec_fit_report rep;
    char *missing = ec_test_path(dir, "absent.csv");
    assert_int_equal(ec_profile_read(ctx, missing, &rep), EC_EIO);
    /* ...and through a config, at prediction time */
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "model=bert-base"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "gpu=t4"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "batch_per_gpu=4"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "profile", missing), EC_OK);
    ec_result res;
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EIO);
    free(missing);
    /* writing where no file can be created */
    prior_fit(ctx, dir, &rep);
    assert_int_equal(ec_profile_write(ctx, &rep, "/nonexistent/dir/profile.csv"), EC_EIO);
    /* NULL arguments */
    assert_int_equal(ec_profile_read(ctx, NULL, &rep), EC_EMISUSE);
    assert_int_equal(ec_profile_read(ctx, "x.csv", NULL), EC_EMISUSE);
    assert_int_equal(ec_profile_read(NULL, "x.csv", &rep), EC_EMISUSE);
    assert_int_equal(ec_profile_write(ctx, NULL, "x.csv"), EC_EMISUSE);
    assert_int_equal(ec_profile_write(ctx, &rep, NULL), EC_EMISUSE);
    assert_int_equal(ec_profile_write(NULL, &rep, "x.csv"), EC_EMISUSE);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- ec_ctx_set_fit ---------------------------------------------------------------------- */

static void test_set_fit_rejects(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    ec_fit_report good, bad;
    prior_fit(ctx, dir, &good);
    assert_int_equal(ec_ctx_set_fit(ctx, &good), EC_OK);
    static const double wrong[] = {0.0, -0.8, NAN, INFINITY, -INFINITY};
    for (size_t j = 0; j < good.n_params; j++)
        for (size_t w = 0; w < sizeof wrong / sizeof wrong[0]; w++) {
            bad = good;
            bad.values[j] = wrong[w];
            assert_int_equal(ec_ctx_set_fit(ctx, &bad), EC_EINVAL);
            assert_contains(ec_ctx_errmsg(ctx), good.names[j]);
            assert_contains(ec_ctx_errmsg(ctx), "positive");
        }
    /* a report with the wrong number of parameters */
    bad = good;
    bad.n_params = good.n_params - 1;
    assert_int_equal(ec_ctx_set_fit(ctx, &bad), EC_EINVAL);
    bad.n_params = 0;
    assert_int_equal(ec_ctx_set_fit(ctx, &bad), EC_EINVAL);
    assert_int_equal(ec_ctx_set_fit(NULL, &good), EC_EMISUSE);

    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* A refused fit leaves the one in use unchanged. */
static void test_set_fit_atomic(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    ec_fit_report good, bad;
    prior_fit(ctx, dir, &good);
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "model=gpt2"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "gpu=a10g"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "precision=amp_bf16"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "batch_per_gpu=5"), EC_OK);
    ec_result before, after;
    good.values[param_index(&good, "mem_scale")] = 1.37;
    assert_int_equal(ec_ctx_set_fit(ctx, &good), EC_OK);
    assert_int_equal(ec_predict(ctx, &cfg, &before), EC_OK);
    bad = good;
    bad.values[param_index(&good, "mem_scale")] = 0.0;
    bad.values[param_index(&good, "gemm_scale")] = 3.0;
    assert_int_equal(ec_ctx_set_fit(ctx, &bad), EC_EINVAL);
    assert_int_equal(ec_predict(ctx, &cfg, &after), EC_OK);
    assert_rel(after.step_s, before.step_s, EC_TOL_EXACT);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* The message for a report of the wrong size gives the report's count and the expected one. */
static void test_set_fit_count_message(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    ec_fit_report rep;
    prior_fit(ctx, dir, &rep);
    char want[64];
    snprintf(want, sizeof want, "has %zu parameters", rep.n_params - 1);
    rep.n_params--;
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), want);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- the fit ------------------------------------------------------------------------------ */

/* Configurations chosen so that the data separate the parameters: GEMM-bound steps (large
 * batches on tensor cores, d log(throughput) / d log(gemm_scale) = 0.5-0.8), steps dominated
 * by memory-bound kernels (batch 1-2, where the optimizer's pass over the parameters and the
 * norms and elementwise ops fill the step: d/d log(mem_scale) = 0.7-0.95), fp32 steps on CUDA
 * cores (simt_scale), convolutions (conv_eff) and fused attention (attn_eff). */
static const char *const RUNS[] = {
    "bert-large,squad,a100-sxm4-80gb,tf32,16,384",
    "bert-base,classify,a10g,tf32,32,512",
    "roberta-base,classify,rtx3090,tf32,32,256",
    "vit-b16,imagenet,a100-sxm4-80gb,tf32,64,",
    "bert-large,squad,v100-sxm2-32gb,amp_fp16,32,512",
    "bert-large,squad,a100-pcie-40gb,amp_fp16,32,512",
    "bert-base,classify,a100-sxm4-80gb,amp_fp16,64,512",
    "bert-large,squad,a100-sxm4-80gb,amp_bf16,64,128",
    "vit-b16,imagenet,a100-sxm4-80gb,amp_bf16,128,",
    "bert-base,classify,t4,amp_fp16,32,256",
    "distilbert-base,classify,t4,amp_fp16,2,64",
    "roberta-base,classify,a10g,amp_bf16,1,64",
    "gpt2,lm,rtx4090,amp_bf16,1,128",
    "vit-b16,imagenet,l4,amp_bf16,2,",
    "bert-base,classify,v100-sxm2-16gb,amp_fp16,2,32",
    "gpt2-medium,lm,l4,amp_bf16,8,1024",
    "gpt2,lm,h100-sxm5-80gb,bf16,16,1024",
    "bert-large,squad,h100-pcie-80gb,amp_bf16,2,64",
    "bert-base,classify,v100-sxm2-16gb,fp32,32,128",
    "bert-large,squad,p100-pcie-16gb,fp32,4,384",
    "gpt2,lm,rtx2080ti,fp32,4,512",
    "resnet50,imagenet,v100-sxm2-16gb,amp_fp16,128,",
    "resnet50,imagenet,a100-sxm4-80gb,tf32,160,",
    "resnet50,imagenet,t4,fp32,48,",
};
#define N_RUNS (sizeof RUNS / sizeof RUNS[0])

/* Each RUNS row is measured at batch b, 2b and 3b: 72 runs. */
#define N_VARIANTS 3
#define N_MEASURED (N_RUNS * N_VARIANTS)

/* Predict every RUNS row (at each batch multiple) with the context's current fit and write
 * the predictions as measurements. */
static void write_runs(ec_ctx *ctx, const char *path)
{
    size_t cap = 16384, len = 0;
    char *csv = malloc(cap);
    assert_non_null(csv);
    len += (size_t)snprintf(csv + len, cap - len, "id,model,task,gpu,precision,batch_per_gpu,seq_len,metric,value\n");
    static const char *const keys[] = {"model", "task", "gpu", "precision", "batch_per_gpu", "seq_len"};
    for (size_t i = 0; i < N_RUNS; i++)
        for (int v = 1; v <= N_VARIANTS; v++) {
            char fields[256], cells[6][64], row[512];
            eci_strlcpy(fields, RUNS[i], sizeof fields);
            char *p = fields;
            for (size_t k = 0; k < 6; k++) {
                char *comma = strchr(p, ',');
                if (comma != NULL)
                    *comma = '\0';
                eci_strlcpy(cells[k], p, sizeof cells[k]);
                p = comma != NULL ? comma + 1 : p + strlen(p);
            }
            snprintf(cells[4], sizeof cells[4], "%d", atoi(cells[4]) * v);
            ec_config cfg;
            ec_config_init(&cfg);
            for (size_t k = 0; k < 6; k++)
                if (cells[k][0] != '\0' && ec_config_set(ctx, &cfg, keys[k], cells[k]) != EC_OK)
                    fail_msg("%s=%s: %s", keys[k], cells[k], ec_ctx_errmsg(ctx));
            ec_result res;
            if (ec_predict(ctx, &cfg, &res) != EC_OK)
                fail_msg("%s: %s", RUNS[i], ec_ctx_errmsg(ctx));
            int n = snprintf(row, sizeof row, "run%02zu_%d,%s,%s,%s,%s,%s,%s,samples_per_s,%.17g\n", i, v, cells[0],
                             cells[1], cells[2], cells[3], cells[4], cells[5], res.samples_per_s);
            assert_true(n > 0 && len + (size_t)n < cap);
            memcpy(csv + len, row, (size_t)n + 1);
            len += (size_t)n;
        }
    ec_test_write_file(path, csv, len);
    free(csv);
}

static void test_fit_recovers(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "runs.csv");
    ec_fit_report truth;
    prior_fit(ctx, dir, &truth);
    int g = param_index(&truth, "gemm_scale"), m = param_index(&truth, "mem_scale");
    truth.values[g] = 0.8;
    truth.values[m] = 1.2;
    assert_int_equal(ec_ctx_set_fit(ctx, &truth), EC_OK);
    write_runs(ctx, path);

    ec_runs *runs = NULL;
    if (ec_runs_load(ctx, path, &runs) != EC_OK)
        fail_msg("ec_runs_load: %s", ec_ctx_errmsg(ctx));
    assert_int_equal(ec_runs_count(runs), N_MEASURED);
    /* Back to the priors, then fit. */
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    ec_fit_report fit;
    int rc = ec_calibrate(ctx, runs, NULL, &fit);
    if (rc != EC_OK)
        fail_msg("ec_calibrate: %s", ec_ctx_errmsg(ctx));
    assert_int_equal(fit.n_runs, N_MEASURED);
    /* the six globals, then per-architecture entries for the architectures of RUNS */
    assert_true(fit.n_params > truth.n_params);
    if (getenv("EC_TEST_VERBOSE")) {
        for (size_t j = 0; j < fit.n_params; j++)
            print_message("%s %s = %g +- %g\n", fit.names[j], fit.architectures[j], fit.values[j], fit.stderrs[j]);
        print_message("iterations %zu mape %g -> %g\n", fit.iterations, fit.mape_before_frac, fit.mape_after_frac);
    }
    /* The synthetic data are exact, so without the prior the fit would return 0.8 and 1.2
     * exactly.  The prior adds one residual (log x - log x0) per parameter next to the data
     * residuals s_i·(log x - log x_true) / σ (σ = calib_run_log_sd, 0.2), with s_i = d
     * log(throughput_i) / d log x; in one dimension the minimum is pulled towards the prior
     * by 1 / (1 + Σs²/σ²): with s_i ~ 0.5-0.9 on half of 72 runs, under 1% of the log.
     * The per-architecture entries share the data with the global value, which loosens it
     * (the fit sees the architecture ratios as free within calib_arch_log_sd).
     * Recovered within 5%: */
    assert_rel(fit.values[g], 0.8, 0.05);
    assert_rel(fit.values[m], 1.2, 0.05);
    /* ...and on the prior's side of the truth (the bias has the sign the prior gives it). */
    assert_true(fit.values[g] > 0.8 - 1e-6 && fit.values[m] < 1.2 + 1e-6);
    /* Parameters the data generated at their priors stay within 5% of them; an
     * architecture's value (data made with one global value for every architecture) comes
     * out at the global truth of its parameter. */
    for (size_t j = 0; j < fit.n_params; j++) {
        int k = param_index(&truth, fit.names[j]);
        if (j < truth.n_params) {
            assert_string_equal(fit.architectures[j], "");
            if ((int)j == g || (int)j == m)
                continue;
        } else {
            assert_true(fit.architectures[j][0] != '\0');
            assert_true(k == g || k == m || strcmp(fit.names[j], "simt_scale") == 0 ||
                        strcmp(fit.names[j], "mem_scale_cnn") == 0); /* the CNN runs' own memory scale */
        }
        assert_rel(fit.values[j], truth.values[k], 0.05);
    }
    assert_true(fit.mape_after_frac < fit.mape_before_frac);
    assert_true(fit.mape_after_frac < 0.02);
    assert_true(fit.mape_before_frac > 0.05);
    assert_true(fit.iterations > 0);
    for (size_t j = 0; j < fit.n_params; j++)
        assert_true(fit.stderrs[j] >= 0 && isfinite(fit.stderrs[j]));
    /* The context's fit is untouched by ec_calibrate (still the priors). */
    ec_fit_report prior;
    prior_fit(ctx, dir, &prior);
    const ec_run *run0 = ec_runs_get(runs, 0);
    ec_result a, b;
    assert_int_equal(ec_predict(ctx, &run0->config, &a), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &prior), EC_OK);
    assert_int_equal(ec_predict(ctx, &run0->config, &b), EC_OK);
    assert_rel(a.step_s, b.step_s, EC_TOL_EXACT);

    /* Fitting a subset: the use mask counts. */
    unsigned char use[N_MEASURED];
    memset(use, 0, sizeof use);
    for (size_t i = 0; i < N_MEASURED; i += 2)
        use[i] = 1;
    assert_int_equal(ec_calibrate(ctx, runs, use, &fit), EC_OK);
    assert_int_equal(fit.n_runs, (N_MEASURED + 1) / 2);
    /* ...and an empty one is an error. */
    memset(use, 0, sizeof use);
    assert_int_equal(ec_calibrate(ctx, runs, use, &fit), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "no runs");
    /* NULL arguments */
    assert_int_equal(ec_calibrate(ctx, NULL, NULL, &fit), EC_EMISUSE);
    assert_int_equal(ec_calibrate(ctx, runs, NULL, NULL), EC_EMISUSE);
    assert_int_equal(ec_calibrate(NULL, runs, NULL, &fit), EC_EMISUSE);

    ec_runs_free(runs);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* A run that cannot be predicted stops the fit, naming the run and its line. */
static void test_fit_bad_run(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "runs.csv");
    static const char text[] = "id,model,task,gpu,precision,batch_per_gpu,seq_len,metric,value\n"
                               "ok,bert-base,classify,t4,amp_fp16,16,128,samples_per_s,101.5\n"
                               "bad,gpt2,pretrain,t4,amp_fp16,16,128,samples_per_s,37.7\n";
    ec_test_write_file(path, text, sizeof text - 1);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    ec_fit_report fit;
    assert_int_equal(ec_calibrate(ctx, runs, NULL, &fit), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "run 'bad' (line 3) cannot be predicted");
    assert_contains(ec_ctx_errmsg(ctx), "cannot run task 'pretrain'");
    ec_runs_free(runs);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- per-architecture parameters ------------------------------------------------------------ */

static void set_cfg(ec_ctx *ctx, ec_config *cfg, const char *model, const char *gpu, const char *prec, const char *batch)
{
    ec_config_init(cfg);
    assert_int_equal(ec_config_set(ctx, cfg, "model", model), EC_OK);
    assert_int_equal(ec_config_set(ctx, cfg, "gpu", gpu), EC_OK);
    assert_int_equal(ec_config_set(ctx, cfg, "precision", prec), EC_OK);
    assert_int_equal(ec_config_set(ctx, cfg, "batch_per_gpu", batch), EC_OK);
}

/* A profile with architecture rows: read, round-tripped, and used only for that architecture. */
/* internode_busbw_frac: the collective efficiency between nodes of a network without a measured
 * efficiency_frac (roce-1600): a lower value slows an FSDP step across two nodes, leaves one
 * node alone, and a network with its own measured efficiency (efa-p6-b200-3200) keeps it. */
static void test_profile_internode(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "net.csv");
    static const char text[] = "parameter,value\ninternode_busbw_frac,0.05\n";
    ec_test_write_file(path, text, sizeof text - 1);
    ec_fit_report rep;
    assert_int_equal(ec_profile_read(ctx, path, &rep), EC_OK);
    const char *cases[][3] = {{"a100-sxm4-80gb", "roce-1600", "16"}, {"a100-sxm4-80gb", "roce-1600", "8"},
                              {"b200", "efa-p6-b200-3200", "16"}};
    for (size_t k = 0; k < 3; k++) {
        ec_config cfg;
        ec_result a, b;
        set_cfg(ctx, &cfg, "gpt2-xl", cases[k][0], "amp_bf16", "4");
        assert_int_equal(ec_config_set(ctx, &cfg, "num_gpus", cases[k][2]), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "gpus_per_node", "8"), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "network", cases[k][1]), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "strategy", "fsdp"), EC_OK);
        assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
        assert_int_equal(ec_predict(ctx, &cfg, &a), EC_OK);
        assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_OK);
        assert_int_equal(ec_predict(ctx, &cfg, &b), EC_OK);
        if (k == 0)
            assert_true(b.step_s > a.step_s * 1.05); /* 0.05 against 0.73 of the link: exposed gathers */
        else
            assert_rel(b.step_s, a.step_s, EC_TOL_EXACT);
    }
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

static void test_profile_architecture(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "arch.csv");
    static const char text[] = "parameter,architecture,value\n"
                               "gemm_scale,,0.9\n"
                               "mem_scale,,0.8\n"
                               "gemm_scale,Ampere,0.6\n"
                               "mem_scale,volta,1.3\n"
                               "error_log_sd,,0.15\n";
    ec_test_write_file(path, text, sizeof text - 1);
    ec_fit_report rep, back;
    assert_int_equal(ec_profile_read(ctx, path, &rep), EC_OK);
    /* nine globals, two architecture rows and volta's mem_scale_cnn (a profile without that
     * parameter keeps one memory scale per architecture) */
    const size_t G = 9;
    assert_int_equal(rep.n_params, G + 3);
    int g = param_index(&rep, "gemm_scale");
    assert_rel(rep.values[g], 0.9, EC_TOL_EXACT);
    assert_string_equal(rep.names[G], "gemm_scale");
    assert_string_equal(rep.architectures[G], "ampere"); /* spelled as gpus.csv spells it */
    assert_rel(rep.values[G], 0.6, EC_TOL_EXACT);
    assert_string_equal(rep.names[G + 1], "mem_scale");
    assert_string_equal(rep.architectures[G + 1], "volta");
    assert_string_equal(rep.names[G + 2], "mem_scale_cnn");
    assert_rel(rep.values[G + 2], 1.3, EC_TOL_EXACT);
    assert_rel(rep.error_log_sd, 0.15, EC_TOL_EXACT);
    /* written and read back: the same entries */
    char *path2 = ec_test_path(dir, "arch2.csv");
    assert_int_equal(ec_profile_write(ctx, &rep, path2), EC_OK);
    assert_int_equal(ec_profile_read(ctx, path2, &back), EC_OK);
    assert_int_equal(back.n_params, rep.n_params);
    for (size_t j = 0; j < rep.n_params; j++) {
        assert_string_equal(back.names[j], rep.names[j]);
        assert_string_equal(back.architectures[j], rep.architectures[j]);
        assert_rel(back.values[j], rep.values[j], EC_TOL_6_DIGITS);
    }
    assert_rel(back.error_log_sd, 0.15, EC_TOL_6_DIGITS);

    /* The ampere entry changes an A100's prediction relative to the global value; a T4
     * (turing, no entry) is predicted as an architecture the fit has not seen: its GEMMs at the
     * prior 1 (gpus.csv's measured efficiency), not the global 0.9, and its memory-bound kernels
     * at the global mem_scale 0.8, not the prior 1 (catalog/params.c eci_params_scale). */
    ec_config a100, t4;
    set_cfg(ctx, &a100, "bert-large", "a100-sxm4-80gb", "amp_fp16", "64");
    set_cfg(ctx, &t4, "bert-large", "t4", "amp_fp16", "8");
    ec_fit_report global = rep;
    global.n_params = G; /* same globals, no architecture entries */
    ec_result a_arch, a_glob, t_arch, t_glob;
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_OK);
    assert_int_equal(ec_predict(ctx, &a100, &a_arch), EC_OK);
    assert_int_equal(ec_predict(ctx, &t4, &t_arch), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &global), EC_OK);
    assert_int_equal(ec_predict(ctx, &a100, &a_glob), EC_OK);
    assert_int_equal(ec_predict(ctx, &t4, &t_glob), EC_OK);
    assert_true(a_arch.step_s > a_glob.step_s * 1.1); /* 0.6 vs 0.9 on a GEMM-bound step */
    assert_true(t_arch.step_s < t_glob.step_s);         /* GEMMs at 1, not 0.9 */
    ec_fit_report unseen = global;                      /* what the T4 should get: gemm 1, mem 0.8 */
    unseen.values[g] = 1.0;
    ec_result t_unseen;
    assert_int_equal(ec_ctx_set_fit(ctx, &unseen), EC_OK);
    assert_int_equal(ec_predict(ctx, &t4, &t_unseen), EC_OK);
    assert_rel(t_arch.step_s, t_unseen.step_s, EC_TOL_EXACT);
    /* ...and the profile= key gives the same as ec_ctx_set_fit */
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    assert_int_equal(ec_config_set(ctx, &a100, "profile", path), EC_OK);
    ec_result by_key;
    assert_int_equal(ec_predict(ctx, &a100, &by_key), EC_OK);
    assert_rel(by_key.step_s, a_arch.step_s, EC_TOL_EXACT);

    /* errors: unknown architecture, an architecture on a global-only parameter, duplicates */
    expect_profile_error(ctx, dir, "parameter,architecture,value\ngemm_scale,amprere,0.9\n", EC_EPARSE,
                         "bad.csv:2:2: unknown architecture 'amprere' (did you mean 'ampere'?)");
    expect_profile_error(ctx, dir, "parameter,architecture,value\nconv_eff,ampere,0.9\n", EC_EPARSE,
                         "bad.csv:2:2: 'conv_eff' is global");
    expect_profile_error(ctx, dir, "parameter,architecture,value\nmem_scale,volta,0.9\nmem_scale,Volta,1\n",
                         EC_EPARSE, "bad.csv:3:1: parameter 'mem_scale' of volta already given on line 2");
    expect_profile_error(ctx, dir, "parameter,value\nerror_log_sd,-0.1\n", EC_EPARSE, "bad.csv:2:");
    /* a report with an entry that is neither global nor a per-architecture scale */
    rep.names[7] = "conv_eff";
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "entry 7");
    rep.names[7] = "mem_scale";
    rep.error_log_sd = NAN;
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "error_log_sd");
    free(path);
    free(path2);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Data made with a different tensor-core GEMM scale on Ampere than elsewhere: the fit finds
 * the Ampere value in the Ampere entry and the other value in the global one. */
static void test_fit_per_architecture(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *prof = ec_test_path(dir, "truth.csv");
    char *path = ec_test_path(dir, "runs.csv");
    static const char truth_text[] = "parameter,architecture,value\ngemm_scale,,1.0\ngemm_scale,ampere,0.7\n";
    ec_test_write_file(prof, truth_text, sizeof truth_text - 1);
    ec_fit_report truth, fit;
    assert_int_equal(ec_profile_read(ctx, prof, &truth), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &truth), EC_OK);
    write_runs(ctx, path);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    assert_int_equal(ec_calibrate(ctx, runs, NULL, &fit), EC_OK);
    int ampere = -1, volta = -1;
    for (size_t j = 6; j < fit.n_params; j++) {
        if (strcmp(fit.names[j], "gemm_scale") != 0)
            continue;
        if (strcmp(fit.architectures[j], "ampere") == 0)
            ampere = (int)j;
        if (strcmp(fit.architectures[j], "volta") == 0)
            volta = (int)j;
    }
    assert_true(ampere >= 0 && volta >= 0);
    if (getenv("EC_TEST_VERBOSE"))
        for (size_t j = 0; j < fit.n_params; j++)
            print_message("%s %s = %g +- %g\n", fit.names[j], fit.architectures[j], fit.values[j], fit.stderrs[j]);
    /* The hierarchical prior shrinks each architecture's log ratio to the global value (that
     * is its purpose), so the Ampere value lies between its truth and the others' value, but
     * the data dominate: it is nearer its own truth (within a third of the log distance). */
    double gap = log(1.0 / 0.7);
    assert_true(fit.values[ampere] > 0.7 - 1e-6);
    assert_true(log(fit.values[ampere] / 0.7) < gap / 3);
    assert_true(fabs(log(fit.values[volta])) < gap / 3);
    /* the fitted Ampere value is well separated from Volta's: beyond 3 standard errors */
    assert_true(fit.values[volta] - fit.values[ampere] > 3 * (fit.stderrs[volta] + fit.stderrs[ampere]));

    /* Leave-one-GPU-out on the same exact data: a small held-out error, every run counted
     * whose architecture and matmul unit its fold's fit still has runs of (not the P100, alone
     * in Pascal, nor the fp32 runs of a GPU whose architecture has no other fp32 run). */
    assert_int_equal(ec_calibrate_cv(ctx, runs, NULL, &fit), EC_OK);
    assert_in_range(fit.cv_runs, N_MEASURED / 2, N_MEASURED - 3);
    assert_true(fit.error_log_sd > 0 && fit.error_log_sd < 0.1);
    assert_true(fit.cv_mape_frac > 0 && fit.cv_mape_frac < 0.1);
    /* with one GPU there is nothing to cross-validate */
    unsigned char use[N_MEASURED] = {0};
    use[0] = use[1] = 1;
    assert_int_equal(ec_calibrate_cv(ctx, runs, use, &fit), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "at least two GPUs");
    assert_int_equal(ec_calibrate_cv(ctx, NULL, NULL, &fit), EC_EMISUSE);
    ec_runs_free(runs);
    free(prof);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- intervals ------------------------------------------------------------------------------ */

/* p90 of the standard normal, from tables (Abramowitz & Stegun 26.2): 1.2815515655446004. */
#define Z90 1.2815515655446004

static void test_interval_widen(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_params c;
    eci_params_default(ctx, &c);
    /* no model error: the interval is left as it is */
    double p10 = 90, p90 = 120;
    eci_interval_widen(&c, 100, &p10, &p90);
    assert_rel(p10, 90, EC_TOL_EXACT);
    /* the constant the widening uses is GSL's p90, bit for bit */
    assert_true(ECI_NORMAL_P90 == gsl_cdf_ugaussian_Pinv(0.9));
    assert_rel(p90, 120, EC_TOL_EXACT);
    /* a point prediction with sd 0.2: p50 exp(-+z sd) */
    c.error_log_sd = 0.2;
    p10 = p90 = 100;
    eci_interval_widen(&c, 100, &p10, &p90);
    assert_rel(p10, 100 * exp(-Z90 * 0.2), EC_TOL_CLOSED_FORM);
    assert_rel(p90, 100 * exp(Z90 * 0.2), EC_TOL_CLOSED_FORM);
    /* an interval of its own: half-widths add in quadrature in log space */
    p10 = 80;
    p90 = 110;
    eci_interval_widen(&c, 100, &p10, &p90);
    double m = Z90 * 0.2, lo = log(100.0 / 80), hi = log(110.0 / 100);
    assert_rel(p10, 100 * exp(-sqrt(lo * lo + m * m)), EC_TOL_CLOSED_FORM);
    assert_rel(p90, 100 * exp(sqrt(hi * hi + m * m)), EC_TOL_CLOSED_FORM);
    /* the sd a profile gives reaches the parameters a prediction uses */
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "p.csv");
    static const char text[] = "parameter,value\nerror_log_sd,0.125\n";
    ec_test_write_file(path, text, sizeof text - 1);
    ec_config cfg;
    set_cfg(ctx, &cfg, "bert-base", "t4", "amp_fp16", "8");
    assert_int_equal(ec_config_set(ctx, &cfg, "profile", path), EC_OK);
    assert_int_equal(eci_params_current(ctx, &cfg, &c), EC_OK);
    assert_rel(c.error_log_sd, 0.125, EC_TOL_EXACT);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_round_trip),
        cmocka_unit_test(test_profile_errors),
        cmocka_unit_test(test_set_fit_rejects),
        cmocka_unit_test(test_set_fit_atomic),
        cmocka_unit_test(test_set_fit_count_message),
        cmocka_unit_test(test_fit_recovers),
        cmocka_unit_test(test_fit_bad_run),
        cmocka_unit_test(test_profile_architecture),
        cmocka_unit_test(test_profile_internode),
        cmocka_unit_test(test_fit_per_architecture),
        cmocka_unit_test(test_interval_widen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
