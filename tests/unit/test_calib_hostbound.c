/*
 * test_calib_hostbound.c: the unseen-architecture sd split by whether a prediction is host-bound
 * (issue 39; docs/accuracy.md, "The host-bound unseen-architecture sd").  A held-out run is
 * host-bound when its fold's prediction has ec_result_host_util_frac below constants.csv
 * host_bound_util_frac; ec_calibrate_cv_arch gives each class its own sd (per architecture the
 * mean squared log error of its runs of that class, the mean over the architectures with such
 * runs, times t_0.9,k / z_0.9 for their number k), a profile keeps the host-bound one as
 * error_log_sd_unseen_arch_host, and a prediction on an architecture with no calibration runs
 * takes it when its own ec_result_host_util_frac is below the threshold (with the communication sd in
 * quadrature on several GPUs); calibrated architectures keep error_log_sd.
 */
#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define Z90 1.2815515655446004

static void set_cfg(ec_ctx *ctx, ec_config *cfg, const char *model, const char *task, const char *gpu,
                    const char *batch)
{
    char words[256];
    snprintf(words, sizeof words, "model=%s task=%s gpu=%s precision=amp_fp16 batch_per_gpu=%s", model, task, gpu,
             batch);
    ec_test_config(ctx, cfg, words);
}

static double predict(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    if (ec_predict(ctx, cfg, res) != EC_OK)
        fail_msg("%s", ec_ctx_errmsg(ctx));
    return res->step_p90_s / res->step_p10_s;
}

/* the host's dispatch 5x the prior's (the shipped fit's is 9: small steps host-bound); error_log_sd
 * 0.1, GPU-bound unseen 0.2, host-bound unseen 0.5, direct communication 0.3 */
static const char PROFILE[] = "parameter,architecture,value,stderr,runs\n"
                              "gemm_scale,,1.0,,40\n"
                              "dispatch_scale,,5,,40\n"
                              "gemm_scale,ampere,0.9,,30\n"
                              "mem_scale,ampere,0.95,,30\n"
                              "error_log_sd,,0.1,,40\n"
                              "error_log_sd_unseen_arch,,0.2,,30\n"
                              "error_log_sd_unseen_arch_host,,0.5,,10\n"
                              "error_log_sd_comm_direct,,0.3,,12\n";

static void test_interval_by_class(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    double bound = eci_const(ctx, EC_C_host_bound_util_frac);
    assert_rel(bound, 0.9, EC_TOL_EXACT);
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "p.csv"), *old = ec_test_path(dir, "old.csv");
    ec_test_write_file(path, PROFILE, sizeof PROFILE - 1);
    ec_config host, gpu, cal_host, host8;
    set_cfg(ctx, &host, "bert-base", "classify", "h100-sxm5-80gb", "1");
    set_cfg(ctx, &gpu, "gpt2", "lm", "h100-sxm5-80gb", "8");
    set_cfg(ctx, &cal_host, "bert-base", "classify", "a100-sxm4-80gb", "1");
    set_cfg(ctx, &host8, "bert-base", "classify", "h100-sxm5-80gb", "1");
    assert_int_equal(ec_config_set(ctx, &host8, "num_gpus", "8"), EC_OK);
    ec_config *all[] = {&host, &gpu, &cal_host, &host8};
    for (int i = 0; i < 4; i++)
        assert_int_equal(ec_config_set(ctx, all[i], "profile", path), EC_OK);
    ec_result res;
    /* Hopper, host-bound: the host-bound sd, said in the warning */
    double r = predict(ctx, &host, &res);
    assert_true(ec_result_host_util_frac(&res) < bound);
    assert_true(res.warnings & EC_WARN_UNCALIBRATED);
    assert_contains(res.warning_text, "log error sd 0.500 of host-bound predictions");
    assert_rel(r, exp(2 * Z90 * 0.5), EC_TOL_CLOSED_FORM);
    /* Hopper, GPU-bound: the GPU-bound sd */
    r = predict(ctx, &gpu, &res);
    assert_true(ec_result_host_util_frac(&res) >= bound);
    assert_contains(res.warning_text, "log error sd 0.200)");
    assert_rel(r, exp(2 * Z90 * 0.2), EC_TOL_CLOSED_FORM);
    /* a calibrated architecture, host-bound or not: error_log_sd */
    r = predict(ctx, &cal_host, &res);
    assert_true(ec_result_host_util_frac(&res) < bound);
    assert_false(res.warnings & EC_WARN_UNCALIBRATED);
    assert_rel(r, exp(2 * Z90 * 0.1), EC_TOL_CLOSED_FORM);
    /* eight GPUs, host-bound: the communication sd in quadrature with the host-bound one */
    r = predict(ctx, &host8, &res);
    assert_true(ec_result_host_util_frac(&res) < bound);
    assert_rel(r, exp(2 * Z90 * hypot(0.5, 0.3)), EC_TOL_CLOSED_FORM);
    /* a pipeline's bubble idles the GPU (gpu_util_frac about 0.5) but not for its host: GPU-bound,
     * so the GPU-bound sd with the direct communication sd (NVLink) in quadrature */
    ec_config pipe;
    set_cfg(ctx, &pipe, "llama-3.1-8b", "lm", "h100-sxm5-80gb", "1");
    const char *pk[] = {"precision", "seq_len", "num_gpus", "pp", "grad_accum", "profile"};
    const char *pv[] = {"bf16", "2048", "4", "4", "2", path};
    for (int k = 0; k < 6; k++)
        assert_int_equal(ec_config_set(ctx, &pipe, pk[k], pv[k]), EC_OK);
    r = predict(ctx, &pipe, &res);
    assert_true(res.gpu_util_frac < bound);
    assert_true(ec_result_host_util_frac(&res) >= bound);
    assert_rel(r, exp(2 * Z90 * hypot(0.2, 0.3)), EC_TOL_CLOSED_FORM);
    /* a profile without the host-bound row: every unseen prediction as before it */
    static const char before[] = "parameter,architecture,value\ndispatch_scale,,5\ngemm_scale,ampere,0.9\n"
                                 "mem_scale,ampere,0.9\n"
                                 "error_log_sd,,0.1\nerror_log_sd_unseen_arch,,0.2\n";
    ec_test_write_file(old, before, sizeof before - 1);
    assert_int_equal(ec_config_set(ctx, &host, "profile", old), EC_OK);
    r = predict(ctx, &host, &res);
    assert_true(ec_result_host_util_frac(&res) < bound);
    assert_rel(r, exp(2 * Z90 * 0.2), EC_TOL_CLOSED_FORM);
    assert_contains(res.warning_text, "log error sd 0.200)");
    /* the profile keeps the row and its runs; a bad value names the row, file and line */
    ec_fit_report rep, back;
    assert_int_equal(ec_profile_read(ctx, path, &rep), EC_OK);
    assert_rel(rep.arch_host_error_log_sd, 0.5, EC_TOL_EXACT);
    assert_int_equal(rep.arch_host_cv_runs, 10);
    assert_int_equal(rep.arch_cv_runs, 40);
    char *out = ec_test_path(dir, "out.csv");
    assert_int_equal(ec_profile_write(ctx, &rep, out), EC_OK);
    assert_int_equal(ec_profile_read(ctx, out, &back), EC_OK);
    assert_rel(back.arch_host_error_log_sd, 0.5, EC_TOL_EXACT);
    assert_rel(back.arch_error_log_sd, 0.2, EC_TOL_EXACT);
    assert_int_equal(back.arch_host_cv_runs, 10);
    assert_int_equal(back.arch_cv_runs, 40);
    static const char bad[] = "parameter,architecture,value\nerror_log_sd,,0.1\nerror_log_sd_unseen_arch_host,,-1\n";
    ec_test_write_file(old, bad, sizeof bad - 1);
    assert_int_equal(ec_profile_read(ctx, old, &rep), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "old.csv:3:");
    assert_contains(ec_ctx_errmsg(ctx), "error_log_sd_unseen_arch_host is a log error sd");
    free(out);
    free(old);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- a synthetic calibration set: host-bound runs measured slower than the model says ------ */

static const char TRUTH[] = "parameter,architecture,value\ndispatch_scale,,5\n"
                            "gemm_scale,volta,1.15\nmem_scale,volta,0.95\n"
                            "gemm_scale,turing,0.9\nmem_scale,turing,1.1\n"
                            "gemm_scale,ampere,0.75\nmem_scale,ampere,0.9\n"
                            "gemm_scale,ada,1.25\nmem_scale,ada,0.8\n";
static const char *const GPUS[] = {"v100-sxm2-16gb", "v100-sxm2-32gb", "t4", "rtx2080ti",
                                   "a100-sxm4-80gb", "a10g", "l4", "rtx4090"};
static const char *const MODELS[][3] = {
    {"bert-base", "classify", "32"}, {"gpt2", "lm", "4"}, {"bert-base", "classify", "1"}, {"gpt2", "lm", "1"},
    {"bert-base", "classify", "2"}};
#define N_GPUS (sizeof GPUS / sizeof GPUS[0])
#define N_MODELS (sizeof MODELS / sizeof MODELS[0])
#define N_SYN (N_GPUS * N_MODELS)

/* Measured with the truth times a scatter of up to 4%; a run the truth predicts host-bound is
 * measured slower again by a host factor of its GPU (the hosts the runs came from differ). */
static ec_runs *synthetic_runs(ec_ctx *ctx, const char *dir)
{
    char *truth = ec_test_path(dir, "truth.csv"), *path = ec_test_path(dir, "runs.csv");
    ec_test_write_file(truth, TRUTH, sizeof TRUTH - 1);
    ec_fit_report t;
    assert_int_equal(ec_profile_read(ctx, truth, &t), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &t), EC_OK);
    double bound = eci_const(ctx, EC_C_host_bound_util_frac);
    char csv[8192];
    size_t len = (size_t)snprintf(csv, sizeof csv, "id,model,task,gpu,precision,batch_per_gpu,metric,value\n");
    unsigned seed = 777;
    for (size_t g = 0; g < N_GPUS; g++)
        for (size_t m = 0; m < N_MODELS; m++) {
            ec_config cfg;
            set_cfg(ctx, &cfg, MODELS[m][0], MODELS[m][1], GPUS[g], MODELS[m][2]);
            ec_result res;
            if (ec_predict(ctx, &cfg, &res) != EC_OK)
                fail_msg("%s on %s: %s", MODELS[m][0], GPUS[g], ec_ctx_errmsg(ctx));
            seed = seed * 1103515245u + 12345u;
            double u = ((seed >> 16) & 0x7fff) / 16383.5 - 1.0; /* [-1, 1] */
            double host = ec_result_host_util_frac(&res) < bound ? exp(-0.25 - 0.1 * (double)(g % 4)) : 1.0;
            len += (size_t)snprintf(csv + len, sizeof csv - len, "h%zu_%zu,%s,%s,%s,amp_fp16,%s,samples_per_s,%.9g\n",
                                    g, m, MODELS[m][0], MODELS[m][1], GPUS[g], MODELS[m][2],
                                    res.samples_per_s * host * exp(0.04 * u));
            assert_true(len < sizeof csv);
        }
    ec_test_write_file(path, csv, len);
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    free(truth);
    free(path);
    return runs;
}

/* The held-out errors of one class: |log error| and architecture of each run. */
typedef struct class_errors {
    double abs_log[N_SYN];
    int arch[N_SYN];
    size_t n;
} class_errors;

/* A class's sd by the rule of fit/heldout.c, recomputed: the 0.8 quantile of its errors with each
 * architecture (but `without`, -1: none) weighing the same, over z_0.9, times t_0.9,k / z_0.9. */
static double class_sd(const class_errors *c, int without)
{
    size_t k = 0;
    for (int a = 0; a < 4; a++) {
        size_t j = 0;
        while (j < c->n && c->arch[j] != a)
            j++;
        k += a != without && j < c->n;
    }
    return ec_test_q80(c->abs_log, c->arch, c->n, 1, without) / Z90 * gsl_cdf_tdist_Pinv(0.9, (double)k) / Z90;
}

/* The report's per-architecture samples (arch_terms) are the folds' recomputed ones, each one's
 * sd without it is its class's rule on the others, and its covered count is its runs of the class
 * with |log error| <= z_0.9 x that sd. */
static void check_arch_terms(const ec_fit_report *rep, const char *const archs[4], size_t runs[4][2],
                             double msq[4][2], double mean[4][2], const class_errors err[2])
{
    assert_int_equal(rep->n_arch_terms, 4);
    size_t k[2] = {0, 0};
    for (size_t j = 0; j < rep->n_arch_terms; j++) {
        const ec_fit_arch_term *t = &rep->arch_terms[j];
        int a = 0;
        while (a < 4 && strcmp(t->architecture, archs[a]) != 0)
            a++;
        if (a == 4)
            fail_msg("arch_terms[%zu] names %s, not an architecture of the runs", j, t->architecture);
        for (int h = 0; h < 2; h++) {
            assert_int_equal(t->runs[h], runs[a][h]);
            assert_rel(t->msq_log[h] + 1, msq[a][h] + 1, 1e-9);
            assert_rel(t->bias_log[h] + 1, mean[a][h] + 1, 1e-9);
            k[h] += t->runs[h] > 0;
        }
    }
    double sd[2] = {rep->arch_error_log_sd, rep->arch_host_error_log_sd};
    for (int h = 0; h < 2; h++) {
        assert_true(k[h] >= 2);
        for (size_t j = 0; j < rep->n_arch_terms; j++) {
            const ec_fit_arch_term *t = &rep->arch_terms[j];
            int a = 0;
            while (strcmp(t->architecture, archs[a]) != 0)
                a++;
            double without = t->runs[h] == 0 ? sd[h] : class_sd(&err[h], a);
            assert_rel(t->sd_without[h], without, 1e-9);
            size_t covered = 0;
            for (size_t i = 0; i < err[h].n; i++)
                covered += err[h].arch[i] == a && err[h].abs_log[i] <= Z90 * without;
            assert_int_equal(t->covered[h], covered);
            if (getenv("EC_TEST_VERBOSE"))
                print_message("%s class %d: %zu of %zu runs inside the interval of sd %.4f\n", t->architecture, h,
                              covered, t->runs[h], without);
        }
    }
}

/* Each class's sd recomputed fold by fold: the fold's fit, its prediction's class and log error
 * of each held-out run, then per class the 0.8 quantile with each architecture weighing the same,
 * over z_0.9, times t_0.9,k / z_0.9 over the architectures with runs of the class. */
static void test_unseen_sd_by_class(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    ec_runs *runs = synthetic_runs(ctx, dir);
    double bound = eci_const(ctx, EC_C_host_bound_util_frac);
    const char *archs[] = {"volta", "turing", "ampere", "ada"};
    size_t n = ec_runs_count(runs);
    assert_int_equal(n, N_SYN);
    unsigned char train[N_SYN];
    double all_msq = 0;
    static class_errors err[2];
    err[0].n = err[1].n = 0;
    size_t class_runs[2] = {0, 0}, class_archs[2] = {0, 0};
    /* each architecture's sample by class: runs, mean square and mean of the log errors (the bias, in
     * the direction of time) */
    double arch_msq[4][2] = {{0}}, arch_mean[4][2] = {{0}};
    size_t arch_runs[4][2] = {{0}};
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < n; i++)
            train[i] = strcmp(eci_hw_find(ctx, ec_runs_get(runs, i)->config.gpu)->architecture, archs[k]) != 0;
        ec_fit_report fold;
        assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
        assert_int_equal(ec_calibrate(ctx, runs, train, &fold), EC_OK);
        assert_int_equal(ec_ctx_set_fit(ctx, &fold), EC_OK);
        double sq[2] = {0, 0}, sum[2] = {0, 0};
        size_t cnt[2] = {0, 0};
        for (size_t i = 0; i < n; i++) {
            if (train[i])
                continue;
            const ec_run *r = ec_runs_get(runs, i);
            ec_result res;
            assert_int_equal(ec_predict(ctx, &r->config, &res), EC_OK);
            double e = log(ec_result_metric(&res, r->metric) / r->value);
            int h = ec_result_host_util_frac(&res) < bound;
            err[h].abs_log[err[h].n] = fabs(e);
            err[h].arch[err[h].n++] = k;
            sq[h] += e * e;
            sum[h] += r->metric == EC_METRIC_SAMPLES_PER_S || r->metric == EC_METRIC_TOKENS_PER_S ? -e : e;
            cnt[h]++;
        }
        for (int h = 0; h < 2; h++)
            if ((arch_runs[k][h] = cnt[h]) > 0) {
                arch_msq[k][h] = sq[h] / (double)cnt[h];
                arch_mean[k][h] = sum[h] / (double)cnt[h];
                class_runs[h] += cnt[h];
                class_archs[h]++;
            }
        all_msq += (sq[0] + sq[1]) / (double)(cnt[0] + cnt[1]);
    }
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    /* both classes held out, each on at least two architectures */
    assert_true(class_runs[0] > 0 && class_runs[1] > 0);
    assert_true(class_archs[1] >= 2);
    double want[2];
    for (int h = 0; h < 2; h++)
        want[h] = class_sd(&err[h], -1);
    double pooled = sqrt(all_msq / 4) * gsl_cdf_tdist_Pinv(0.9, 4) / Z90; /* the sd before the split */
    ec_fit_report rep;
    assert_int_equal(ec_calibrate_cv_arch(ctx, runs, NULL, &rep), EC_OK);
    if (getenv("EC_TEST_VERBOSE"))
        print_message("unseen sd: GPU-bound %.4f (%zu runs on %zu archs; recomputed %.4f), host-bound %.4f (%zu "
                      "on %zu; recomputed %.4f), pooled %.4f\n",
                      rep.arch_error_log_sd, class_runs[0], class_archs[0], want[0], rep.arch_host_error_log_sd,
                      class_runs[1], class_archs[1], want[1], pooled);
    assert_rel(rep.arch_error_log_sd, want[0], 1e-6);
    assert_rel(rep.arch_host_error_log_sd, want[1], 1e-6);
    assert_int_equal(rep.arch_host_cv_runs, class_runs[1]);
    assert_int_equal(rep.arch_host_cv_archs, class_archs[1]);
    assert_int_equal(rep.arch_cv_runs, N_SYN);
    assert_int_equal(rep.arch_cv_archs, 4);
    /* the host factor shows in the host-bound class only, and the pooled sd was neither */
    assert_true(want[1] > 1.5 * want[0]);
    assert_true(fabs(pooled / want[0] - 1) > 0.1);
    check_arch_terms(&rep, archs, arch_runs, arch_msq, arch_mean, err);
    ec_runs_free(runs);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval_by_class),
        cmocka_unit_test(test_unseen_sd_by_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
