/*
 * test_calib_comm.c: the communication part of a multi-GPU prediction's interval (issue 39,
 * honest intervals).  The path a job's gradients take (eci_comm_path: GPU to GPU, through host
 * memory between two GPUs a node, or between more) picks one of the profile's
 * error_log_sd_comm_direct / _host / _host_shared rows, added in quadrature to the sd of the GPU
 * (a profile without _host_shared gives those jobs _host's); one GPU is unchanged.  On a small synthetic calibration set
 * (single-GPU runs measured with the priors, multi-GPU runs off by a shift per GPU), the
 * leave-one-GPU-out folds never fit the multi-GPU runs, score them per GPU and path, and the
 * sds are what the rule of docs/accuracy.md ("The communication sd") gives, recomputed here
 * fold by fold.  Bad profile rows (negative, NaN) are refused naming the file, line and row.
 */
#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* p90 of the standard normal (Abramowitz & Stegun 26.2). */
#define Z90 1.2815515655446004

static void set_cfg(ec_ctx *ctx, ec_config *cfg, const char *model, const char *task, const char *gpu,
                    const char *batch, const char *gpus, const char *topology)
{
    ec_config_init(cfg);
    const char *keys[] = {"model", "task", "gpu", "precision", "batch_per_gpu", "num_gpus", "topology"};
    const char *vals[] = {model, task, gpu, "amp_fp16", batch, gpus, topology};
    for (int k = 0; k < 7; k++)
        if (vals[k] != NULL && ec_config_set(ctx, cfg, keys[k], vals[k]) != EC_OK)
            fail_msg("%s=%s: %s", keys[k], vals[k], ec_ctx_errmsg(ctx));
}

static int path_of(ec_ctx *ctx, const char *gpu, const char *topology, int n, int nodes)
{
    int path = -1;
    const eci_gpu *g = eci_hw_find(ctx, gpu);
    assert_non_null(g);
    const char *t = topology != NULL ? topology : g->default_topology;
    if (eci_comm_path(ctx, g, t, n, nodes, &path) != EC_OK)
        fail_msg("%s on %s: %s", gpu, t, ec_ctx_errmsg(ctx));
    return path;
}

/* Which path a job's gradients take, from the topology and the GPU's peer-to-peer (gpus.csv). */
static void test_comm_path(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    assert_int_equal(path_of(ctx, "a100-sxm4-80gb", NULL, 8, 1), EC_COMM_DIRECT);      /* NVSwitch */
    /* NCCL_P2P_DISABLE=1: two GPUs through the host, eight sharing its root ports and sockets */
    assert_int_equal(path_of(ctx, "a100-sxm4-80gb", "pcie-host", 2, 1), EC_COMM_HOST);
    assert_int_equal(path_of(ctx, "a100-sxm4-80gb", "pcie-host", 8, 1), EC_COMM_HOST_SHARED);
    assert_int_equal(path_of(ctx, "a100-pcie-40gb", "pcie-switch", 4, 1), EC_COMM_DIRECT); /* peer-to-peer */
    assert_int_equal(path_of(ctx, "rtx3090", NULL, 2, 1), EC_COMM_HOST);               /* GeForce: no p2p */
    assert_int_equal(path_of(ctx, "rtx3090", NULL, 4, 1), EC_COMM_HOST_SHARED);
    assert_int_equal(path_of(ctx, "rtx3090", "pcie-switch", 4, 1), EC_COMM_HOST_SHARED); /* a switch, still no p2p */
    assert_int_equal(path_of(ctx, "a16", NULL, 4, 1), EC_COMM_DIRECT);                 /* one board's switch */
    assert_int_equal(path_of(ctx, "a16", NULL, 8, 1), EC_COMM_HOST_SHARED);            /* two boards: the uplinks */
    assert_int_equal(path_of(ctx, "rtx3090", NULL, 4, 4), EC_COMM_DIRECT);             /* one GPU a node: the network */
    assert_int_equal(path_of(ctx, "rtx3090", NULL, 8, 4), EC_COMM_HOST);               /* two a node, through the host */
    assert_int_equal(path_of(ctx, "rtx3090", NULL, 16, 4), EC_COMM_HOST_SHARED);       /* four a node */
    assert_string_equal(ec_comm_path_name(EC_COMM_HOST_SHARED), "host_shared");
    assert_string_equal(ec_comm_path_name(EC_COMM_PATHS), "?");
    int path;
    assert_int_equal(eci_comm_path(ctx, eci_hw_find(ctx, "rtx3090"), "nvlinx", 2, 1, &path), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "unknown topology 'nvlinx'");
    ec_ctx_free(ctx);
}

static const char PROFILE[] = "parameter,architecture,value,stderr,runs\n"
                              "gemm_scale,ampere,0.9,,30\n"
                              "mem_scale,ampere,0.95,,30\n"
                              "error_log_sd,,0.1,,40\n"
                              "error_log_sd_unseen_arch,,0.3,,40\n"
                              "error_log_sd_comm_direct,,0.2,,12\n"
                              "error_log_sd_comm_host,,0.4,,9\n"
                              "error_log_sd_comm_host_shared,,0.6,,7\n";

/* log(p90 / p10) / (2 z) of cfg's step: the sd its interval was widened by. */
static double step_sd(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    if (ec_predict(ctx, cfg, res) != EC_OK)
        fail_msg("%s", ec_ctx_errmsg(ctx));
    return log(res->step_p90_s / res->step_p10_s) / (2 * Z90);
}

static void test_comm_interval(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "p.csv"), *old = ec_test_path(dir, "old.csv");
    ec_test_write_file(path, PROFILE, sizeof PROFILE - 1);
    ec_config one, nvlink, host, host2, h100, h100_8;
    ec_result res;
    set_cfg(ctx, &one, "bert-base", "classify", "a100-sxm4-80gb", "32", "1", NULL);
    set_cfg(ctx, &nvlink, "bert-base", "classify", "a100-sxm4-80gb", "32", "8", NULL);
    set_cfg(ctx, &host, "bert-base", "classify", "a100-sxm4-80gb", "32", "8", "pcie-host");
    set_cfg(ctx, &host2, "bert-base", "classify", "a100-sxm4-80gb", "32", "2", "pcie-host");
    set_cfg(ctx, &h100, "bert-base", "classify", "h100-sxm5-80gb", "32", "1", NULL);
    set_cfg(ctx, &h100_8, "bert-base", "classify", "h100-sxm5-80gb", "32", "8", NULL);
    ec_config *all[] = {&one, &nvlink, &host, &host2, &h100, &h100_8};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(ec_config_set(ctx, all[i], "profile", path), EC_OK);
    /* one GPU: the GPU's sd alone, as before */
    assert_rel(step_sd(ctx, &one, &res), 0.1, EC_TOL_CLOSED_FORM);
    /* several: the path's communication sd in quadrature */
    assert_rel(step_sd(ctx, &nvlink, &res), sqrt(0.1 * 0.1 + 0.2 * 0.2), EC_TOL_CLOSED_FORM);
    assert_rel(step_sd(ctx, &host2, &res), sqrt(0.1 * 0.1 + 0.4 * 0.4), EC_TOL_CLOSED_FORM);
    assert_rel(step_sd(ctx, &host, &res), sqrt(0.1 * 0.1 + 0.6 * 0.6), EC_TOL_CLOSED_FORM);
    /* on an architecture the fit has not seen, on top of the unseen-architecture sd; the warning is
     * the one-GPU job's */
    assert_rel(step_sd(ctx, &h100, &res), 0.3, EC_TOL_CLOSED_FORM);
    char text[EC_WARNING_TEXT_MAX];
    snprintf(text, sizeof text, "%s", res.warning_text);
    assert_rel(step_sd(ctx, &h100_8, &res), sqrt(0.3 * 0.3 + 0.2 * 0.2), EC_TOL_CLOSED_FORM);
    assert_true(res.warnings & EC_WARN_UNCALIBRATED);
    assert_contains(res.warning_text, "leave-one-architecture-out log error sd 0.300)");
    assert_contains(res.warning_text, text);
    /* a profile without the rows (written before them): no communication part */
    static const char before[] = "parameter,architecture,value\ngemm_scale,ampere,0.9\nmem_scale,ampere,0.9\n"
                                 "error_log_sd,,0.1\n";
    ec_test_write_file(old, before, sizeof before - 1);
    assert_int_equal(ec_config_set(ctx, &host, "profile", old), EC_OK);
    assert_rel(step_sd(ctx, &host, &res), 0.1, EC_TOL_CLOSED_FORM);
    /* one from before the _host_shared row (stop 64): eight GPUs through the host take _host's */
    static const char no_shared[] = "parameter,architecture,value\ngemm_scale,ampere,0.9\nmem_scale,ampere,0.9\n"
                                    "error_log_sd,,0.1\nerror_log_sd_comm_host,,0.4\n";
    char *older = ec_test_path(dir, "no_shared.csv");
    ec_test_write_file(older, no_shared, sizeof no_shared - 1);
    assert_int_equal(ec_config_set(ctx, &host, "profile", older), EC_OK);
    assert_rel(step_sd(ctx, &host, &res), sqrt(0.1 * 0.1 + 0.4 * 0.4), EC_TOL_CLOSED_FORM);
    free(path);
    free(old);
    free(older);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* The rows read and written back with their runs; a bad value is refused naming file, line and
 * row, and a report with one is neither taken nor written. */
static void test_comm_profile_rows(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *in = ec_test_path(dir, "in.csv"), *out = ec_test_path(dir, "out.csv"), *bad = ec_test_path(dir, "bad.csv");
    ec_test_write_file(in, PROFILE, sizeof PROFILE - 1);
    ec_fit_report rep, back;
    assert_int_equal(ec_profile_read(ctx, in, &rep), EC_OK);
    assert_rel(rep.comm_error_log_sd[EC_COMM_DIRECT], 0.2, EC_TOL_EXACT);
    assert_rel(rep.comm_error_log_sd[EC_COMM_HOST], 0.4, EC_TOL_EXACT);
    assert_int_equal(rep.comm_cv_runs[EC_COMM_DIRECT], 12);
    assert_int_equal(rep.comm_cv_runs[EC_COMM_HOST], 9);
    assert_rel(rep.comm_error_log_sd[EC_COMM_HOST_SHARED], 0.6, EC_TOL_EXACT);
    assert_int_equal(rep.comm_cv_runs[EC_COMM_HOST_SHARED], 7);
    assert_int_equal(ec_profile_write(ctx, &rep, out), EC_OK);
    assert_int_equal(ec_profile_read(ctx, out, &back), EC_OK);
    assert_rel(back.comm_error_log_sd[EC_COMM_HOST], 0.4, EC_TOL_EXACT);
    assert_int_equal(back.comm_cv_runs[EC_COMM_HOST], 9);
    char *text = ec_test_read_file(out, NULL);
    assert_non_null(text);
    assert_contains(text, "\nerror_log_sd_comm_direct,,0.2,,12,ampere,");
    assert_contains(text, "\nerror_log_sd_comm_host,,0.4,,9,ampere,");
    assert_contains(text, "\nerror_log_sd_comm_host_shared,,0.6,,7,ampere,");
    free(text);
    static const char *const values[] = {"-0.1", "nan", "11"};
    for (int v = 0; v < 3; v++) {
        char csv[256];
        int len = snprintf(csv, sizeof csv, "parameter,value\nerror_log_sd,0.1\nerror_log_sd_comm_host,%s\n", values[v]);
        ec_test_write_file(bad, csv, (size_t)len);
        assert_int_equal(ec_profile_read(ctx, bad, &back), EC_EPARSE);
        assert_contains(ec_ctx_errmsg(ctx), "bad.csv:3:");
        assert_contains(ec_ctx_errmsg(ctx), "error_log_sd_comm_host");
    }
    /* a misspelt row is an unknown parameter, with the nearest name */
    static const char typo[] = "parameter,value\nerror_log_sd_comm_hots,0.3\n";
    ec_test_write_file(bad, typo, sizeof typo - 1);
    assert_int_equal(ec_profile_read(ctx, bad, &back), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "did you mean 'error_log_sd_comm_host'");
    /* a report: refused by the context and by the writer, naming the row */
    rep.comm_error_log_sd[EC_COMM_DIRECT] = NAN;
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "error_log_sd_comm_direct");
    assert_int_equal(ec_profile_write(ctx, &rep, out), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "error_log_sd_comm_direct");
    rep.comm_error_log_sd[EC_COMM_DIRECT] = -0.5;
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_EINVAL);
    free(in);
    free(out);
    free(bad);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- a synthetic calibration set: single-GPU runs and multi-GPU runs on five GPUs ------------ */

static const char *const GPUS[] = {"a100-sxm4-80gb", "a100-sxm4-40gb", "rtx3090", "v100-sxm2-16gb", "v100-sxm2-32gb"};
#define N_GPUS 5
/* Multi-GPU runs: the GPU (index into GPUS), its topology (NULL: gpus.csv's default), its GPU
 * count, the shift of its measurement (log) and its path.  Through host memory the shifts are
 * large and differ by machine, larger on more than two GPUs; GPU to GPU they are small. */
static const struct {
    int gpu;
    const char *topology;
    const char *gpus;
    double shift;
    int path;
} MULTI[] = {
    {0, NULL, "4", 0.03, EC_COMM_DIRECT},          {1, NULL, "4", -0.02, EC_COMM_DIRECT},
    {3, NULL, "4", 0.04, EC_COMM_DIRECT},          {4, NULL, "4", 0.01, EC_COMM_DIRECT},
    {0, "pcie-host", "2", 0.35, EC_COMM_HOST},     {2, NULL, "2", -0.25, EC_COMM_HOST},
    {3, "pcie-host", "2", 0.15, EC_COMM_HOST},     {0, "pcie-host", "8", 0.55, EC_COMM_HOST_SHARED},
    {2, NULL, "4", -0.45, EC_COMM_HOST_SHARED},    {3, "pcie-host", "8", 0.40, EC_COMM_HOST_SHARED},
};
#define N_MULTI (sizeof MULTI / sizeof MULTI[0])
static const char *const MODELS[][3] = {{"bert-base", "classify", "32"}, {"resnet50", "imagenet", "64"}};
#define N_MODELS 2
#define N_RUNS ((N_GPUS + N_MULTI) * N_MODELS)

static size_t put_run(ec_ctx *ctx, char *csv, size_t len, size_t cap, const char *id, int gpu, int model,
                      const char *gpus, const char *topology, double factor)
{
    ec_config cfg;
    set_cfg(ctx, &cfg, MODELS[model][0], MODELS[model][1], GPUS[gpu], MODELS[model][2], gpus, topology);
    ec_result res;
    if (ec_predict(ctx, &cfg, &res) != EC_OK)
        fail_msg("%s on %s: %s", MODELS[model][0], GPUS[gpu], ec_ctx_errmsg(ctx));
    len += (size_t)snprintf(csv + len, cap - len, "%s,%s,%s,%s,amp_fp16,%s,%s,%s,samples_per_s,%.9g\n", id,
                            MODELS[model][0], MODELS[model][1], GPUS[gpu], MODELS[model][2], gpus,
                            topology != NULL ? topology : "", res.samples_per_s * factor);
    assert_true(len < cap);
    return len;
}

/* Measurements made with the priors: single-GPU runs off by a scatter of up to 5% (a fixed
 * sequence), multi-GPU runs by their MULTI shift. */
static ec_runs *synthetic_runs(ec_ctx *ctx, char **dir)
{
    *dir = ec_test_tmpdir();
    char *path = ec_test_path(*dir, "runs.csv");
    char csv[8192], id[32];
    size_t len = (size_t)snprintf(csv, sizeof csv, "id,model,task,gpu,precision,batch_per_gpu,num_gpus,topology,"
                                                   "metric,value\n");
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    unsigned seed = 4242;
    for (int g = 0; g < N_GPUS; g++)
        for (int m = 0; m < N_MODELS; m++) {
            seed = seed * 1103515245u + 12345u;
            double u = ((seed >> 16) & 0x7fff) / 16383.5 - 1.0; /* [-1, 1] */
            snprintf(id, sizeof id, "s%d_%d", g, m);
            len = put_run(ctx, csv, len, sizeof csv, id, g, m, "1", NULL, exp(0.05 * u));
        }
    for (size_t k = 0; k < N_MULTI; k++)
        for (int m = 0; m < N_MODELS; m++) {
            snprintf(id, sizeof id, "m%zu_%d", k, m);
            len = put_run(ctx, csv, len, sizeof csv, id, MULTI[k].gpu, m, MULTI[k].gpus, MULTI[k].topology,
                          exp(-MULTI[k].shift));
        }
    ec_test_write_file(path, csv, len);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    assert_int_equal(ec_runs_count(runs), N_RUNS);
    free(path);
    return runs;
}

/* The folds recomputed: for each GPU, fit on the other GPUs' single-GPU runs, predict its runs;
 * the base is the 0.8 quantile of the single-GPU |log errors| pooled over runs, over z_0.9; each
 * path's total the same of its multi-GPU runs with each GPU weighing the same, times
 * t_0.9,k / z_0.9 (fit/heldout.c's rule). */
static void recompute(ec_ctx *ctx, const ec_runs *runs, double *base, double comm[EC_COMM_PATHS],
                      size_t gpus[EC_COMM_PATHS])
{
    double single_err[N_RUNS], path_err[EC_COMM_PATHS][N_RUNS];
    int single_gpu[N_RUNS], path_gpu[EC_COMM_PATHS][N_RUNS];
    size_t n_single = 0, n_path[EC_COMM_PATHS] = {0}, n = ec_runs_count(runs);
    unsigned char train[N_RUNS];
    for (int g = 0; g < N_GPUS; g++) {
        const eci_gpu *held = eci_hw_find(ctx, GPUS[g]);
        for (size_t i = 0; i < n; i++) {
            const ec_run *r = ec_runs_get(runs, i);
            train[i] = r->config.num_gpus == 1 && eci_hw_find(ctx, r->config.gpu) != held;
        }
        ec_fit_report fold;
        assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
        assert_int_equal(ec_calibrate(ctx, runs, train, &fold), EC_OK);
        assert_int_equal(ec_ctx_set_fit(ctx, &fold), EC_OK);
        size_t count[EC_COMM_PATHS] = {0};
        for (size_t i = 0; i < n; i++) {
            const ec_run *r = ec_runs_get(runs, i);
            if (eci_hw_find(ctx, r->config.gpu) != held)
                continue;
            ec_result res;
            assert_int_equal(ec_predict(ctx, &r->config, &res), EC_OK);
            assert_false(res.warnings & EC_WARN_UNCALIBRATED); /* every GPU has a sibling of its architecture */
            double e = log(ec_result_metric(&res, r->metric) / r->value);
            if (r->config.num_gpus == 1) {
                single_err[n_single] = fabs(e);
                single_gpu[n_single++] = g;
                continue;
            }
            int host = r->config.topology[0] != '\0' || strcmp(GPUS[g], "rtx3090") == 0;
            int p = !host ? EC_COMM_DIRECT : r->config.num_gpus > 2 ? EC_COMM_HOST_SHARED : EC_COMM_HOST;
            path_err[p][n_path[p]] = fabs(e);
            path_gpu[p][n_path[p]++] = g;
            count[p]++;
        }
        for (int p = 0; p < EC_COMM_PATHS; p++)
            gpus[p] += count[p] > 0;
    }
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    *base = ec_test_q80(single_err, single_gpu, n_single, 0, -1) / Z90;
    for (int p = 0; p < EC_COMM_PATHS; p++) {
        double k = (double)gpus[p];
        /* the part above the base in quadrature, widened by t_0.9,k / z_0.9 alone (the base rests on every GPU) */
        double total = ec_test_q80(path_err[p], path_gpu[p], n_path[p], 1, -1) / Z90;
        comm[p] = total > *base ? gsl_cdf_tdist_Pinv(0.9, k) / Z90 * sqrt(total * total - *base * *base) : 0;
    }
}

static void test_cv_comm_sd(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = NULL;
    ec_runs *runs = synthetic_runs(ctx, &dir);
    size_t n = ec_runs_count(runs);
    unsigned char single[N_RUNS];
    for (size_t i = 0; i < n; i++)
        single[i] = ec_runs_get(runs, i)->config.num_gpus == 1;
    /* the single-GPU runs alone: no communication sd */
    ec_fit_report alone, rep;
    memset(&alone, 0, sizeof alone);
    memset(&rep, 0, sizeof rep);
    assert_int_equal(ec_calibrate_cv(ctx, runs, single, &alone), EC_OK);
    assert_true(alone.comm_error_log_sd[EC_COMM_HOST] == 0 && alone.comm_cv_runs[EC_COMM_HOST] == 0);
    /* every run: the multi-GPU runs are scored, never fitted, and leave the GPU's sd as it was */
    assert_int_equal(ec_calibrate_cv(ctx, runs, NULL, &rep), EC_OK);
    assert_rel(rep.error_log_sd, alone.error_log_sd, EC_TOL_EXACT);
    assert_int_equal(rep.cv_runs, N_GPUS * N_MODELS);
    assert_int_equal(rep.comm_cv_runs[EC_COMM_DIRECT], 4 * N_MODELS);
    assert_int_equal(rep.comm_cv_runs[EC_COMM_HOST], 3 * N_MODELS);
    assert_int_equal(rep.comm_cv_runs[EC_COMM_HOST_SHARED], 3 * N_MODELS);
    assert_int_equal(rep.comm_cv_gpus[EC_COMM_DIRECT], 4);
    assert_int_equal(rep.comm_cv_gpus[EC_COMM_HOST], 3);
    assert_int_equal(rep.comm_cv_gpus[EC_COMM_HOST_SHARED], 3);
    double base, comm[EC_COMM_PATHS];
    size_t gpus[EC_COMM_PATHS] = {0};
    recompute(ctx, runs, &base, comm, gpus);
    if (getenv("EC_TEST_VERBOSE"))
        print_message("error_log_sd %.4f (recomputed %.4f); comm direct %.4f (%.4f), host %.4f (%.4f), shared %.4f (%.4f)\n",
                      rep.error_log_sd, base, rep.comm_error_log_sd[0], comm[0], rep.comm_error_log_sd[1], comm[1],
                      rep.comm_error_log_sd[2], comm[2]);
    assert_rel(rep.error_log_sd, base, 1e-9);
    assert_rel(rep.comm_error_log_sd[EC_COMM_HOST], comm[EC_COMM_HOST], 1e-6);
    assert_rel(rep.comm_error_log_sd[EC_COMM_HOST_SHARED], comm[EC_COMM_HOST_SHARED], 1e-6);
    assert_true(fabs(rep.comm_error_log_sd[EC_COMM_DIRECT] - comm[EC_COMM_DIRECT]) < 1e-6);
    /* through host memory the shifts (0.15 to 0.35) dwarf the rest; GPU to GPU they do not */
    assert_true(rep.comm_error_log_sd[EC_COMM_HOST] > 0.2);
    assert_true(rep.comm_error_log_sd[EC_COMM_DIRECT] < rep.comm_error_log_sd[EC_COMM_HOST] / 2);
    assert_true(rep.comm_error_log_sd[EC_COMM_HOST_SHARED] > rep.comm_error_log_sd[EC_COMM_HOST]);
    /* the profile keeps them, and a multi-GPU prediction through host memory is widened by them */
    char *prof = ec_test_path(dir, "profile.csv");
    assert_int_equal(ec_calibrate(ctx, runs, single, &rep), EC_OK);
    assert_int_equal(ec_calibrate_cv(ctx, runs, NULL, &rep), EC_OK);
    assert_int_equal(ec_profile_write(ctx, &rep, prof), EC_OK);
    ec_config cfg;
    set_cfg(ctx, &cfg, "bert-base", "classify", "rtx3090", "32", "2", NULL);
    assert_int_equal(ec_config_set(ctx, &cfg, "profile", prof), EC_OK);
    ec_result res;
    assert_rel(step_sd(ctx, &cfg, &res), hypot(rep.error_log_sd, rep.comm_error_log_sd[EC_COMM_HOST]), 1e-3);
    assert_int_equal(ec_config_set(ctx, &cfg, "num_gpus", "4"), EC_OK);
    assert_rel(step_sd(ctx, &cfg, &res), hypot(rep.error_log_sd, rep.comm_error_log_sd[EC_COMM_HOST_SHARED]), 1e-3);
    /* single-GPU runs on one GPU only: nothing to cross-validate, whatever the multi-GPU runs */
    unsigned char one[N_RUNS] = {0};
    for (size_t i = 0; i < n; i++)
        one[i] = eci_hw_find(ctx, ec_runs_get(runs, i)->config.gpu) == eci_hw_find(ctx, "a100-sxm4-80gb") ||
                 !single[i];
    assert_int_equal(ec_calibrate_cv(ctx, runs, one, &rep), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "single-GPU runs on at least two GPUs");
    free(prof);
    ec_runs_free(runs);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_path),
        cmocka_unit_test(test_comm_interval),
        cmocka_unit_test(test_comm_profile_rows),
        cmocka_unit_test(test_cv_comm_sd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
