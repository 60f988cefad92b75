/*
 * test_calib_unseen.c: calibration that knows what it has seen (issue 39 items 2 and 3).
 * A prediction on an architecture (or a matmul unit of one) that the fit has no runs of says
 * so (EC_WARN_UNCALIBRATED) and takes the wider leave-one-architecture-out error for its
 * p10-p90; a profile keeps the runs behind each entry and that error; and on a small synthetic
 * calibration set (architectures whose scales differ, measurements made with a known fit)
 * ec_calibrate_cv_arch measures the wider error, and the intervals of leave-one-architecture-
 * out predictions cover the held-out runs where the leave-one-GPU-out error alone does not.
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

static void set_cfg(ec_ctx *ctx, ec_config *cfg, const char *model, const char *gpu, const char *precision,
                    const char *batch)
{
    ec_config_init(cfg);
    const char *keys[] = {"model", "gpu", "precision", "batch_per_gpu"};
    const char *vals[] = {model, gpu, precision, batch};
    for (int k = 0; k < 4; k++)
        if (ec_config_set(ctx, cfg, keys[k], vals[k]) != EC_OK)
            fail_msg("%s=%s: %s", keys[k], vals[k], ec_ctx_errmsg(ctx));
}

/* p90 / p10 of the step time of cfg, and its warnings into *res. */
static double step_ratio(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    if (ec_predict(ctx, cfg, res) != EC_OK)
        fail_msg("%s", ec_ctx_errmsg(ctx));
    return res->step_p90_s / res->step_p10_s;
}

/* ec_calibrate into *rep on runs written as path: each (gpu, model, precision, kernels) row of
 * rows, batch 16, measured at scale x its prediction under the context's current fit. */
static void fit_scaled_runs(ec_ctx *ctx, const char *path, const char *const (*rows)[4], size_t n, double scale,
                            ec_fit_report *rep)
{
    char csv[2048];
    size_t len = (size_t)snprintf(csv, sizeof csv, "id,model,gpu,precision,kernels,batch_per_gpu,metric,value\n");
    for (size_t i = 0; i < n; i++) {
        ec_config cfg;
        ec_result res;
        set_cfg(ctx, &cfg, rows[i][1], rows[i][0], rows[i][2], "16");
        assert_int_equal(ec_config_set(ctx, &cfg, "kernels", rows[i][3]), EC_OK);
        assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
        len += (size_t)snprintf(csv + len, sizeof csv - len, "r%zu,%s,%s,%s,%s,16,samples_per_s,%.9g\n", i, rows[i][1],
                                rows[i][0], rows[i][2], rows[i][3], scale * res.samples_per_s);
    }
    assert_true(len < sizeof csv);
    ec_test_write_file(path, csv, len);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    assert_int_equal(ec_calibrate(ctx, runs, NULL, rep), EC_OK);
    ec_runs_free(runs);
}

static const char PROFILE[] = "parameter,architecture,value,stderr,runs\n"
                              "gemm_scale,,1.0,,40\n"
                              "gemm_scale,ampere,0.9,,30\n"
                              "mem_scale,ampere,0.95,,30\n"
                              "error_log_sd,,0.1,,40\n"
                              "error_log_sd_unseen_arch,,0.3,,40\n";

/* step_ratio of h100 under a profile of Ampere's scales and the given sd rows (written in dir as
 * name: a profile is read once per path). */
static double h100_with(ec_ctx *ctx, const char *dir, const char *name, ec_config *h100, const char *sd_rows,
                        ec_result *res)
{
    char text[256];
    int len = snprintf(text, sizeof text, "parameter,architecture,value\ngemm_scale,ampere,0.9\nmem_scale,ampere,0.9\n%s",
                       sd_rows);
    assert_true(len > 0 && (size_t)len < sizeof text);
    char *path = ec_test_path(dir, name);
    ec_test_write_file(path, text, (size_t)len);
    assert_int_equal(ec_config_set(ctx, h100, "profile", path), EC_OK);
    free(path);
    return step_ratio(ctx, h100, res);
}

static void test_uncalibrated_warning(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "p.csv");
    ec_test_write_file(path, PROFILE, sizeof PROFILE - 1);
    ec_config a100, h100, a100_fp32;
    ec_result res;
    set_cfg(ctx, &a100, "bert-base", "a100-sxm4-80gb", "amp_fp16", "32");
    set_cfg(ctx, &h100, "bert-base", "h100-sxm5-80gb", "amp_bf16", "32");
    set_cfg(ctx, &a100_fp32, "bert-base", "a100-sxm4-80gb", "fp32", "32");
    /* the priors alone (not models/profile.csv): no fit to have seen anything, no warning */
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    step_ratio(ctx, &h100, &res);
    assert_false(res.warnings & EC_WARN_UNCALIBRATED);
    for (ec_config *c = &a100; c != NULL; c = c == &a100 ? &h100 : c == &h100 ? &a100_fp32 : NULL)
        assert_int_equal(ec_config_set(ctx, c, "profile", path), EC_OK);
    /* calibrated: the held-out GPU error, no warning */
    double r_a = step_ratio(ctx, &a100, &res);
    assert_false(res.warnings & EC_WARN_UNCALIBRATED);
    assert_rel(r_a, exp(2 * Z90 * 0.1), EC_TOL_CLOSED_FORM);
    /* Hopper has no runs in the fit: said, and the interval is the leave-one-architecture-out one */
    double r_h = step_ratio(ctx, &h100, &res);
    assert_true(res.warnings & EC_WARN_UNCALIBRATED);
    assert_contains(res.warning_text, "no calibration runs on hopper");
    assert_contains(res.warning_text, "interval widened");
    assert_rel(r_h, exp(2 * Z90 * 0.3), EC_TOL_CLOSED_FORM);
    assert_true(r_h > r_a);
    /* fp32 matmuls on Ampere run on CUDA cores, which the fit has no Ampere runs of */
    double r_f = step_ratio(ctx, &a100_fp32, &res);
    assert_true(res.warnings & EC_WARN_UNCALIBRATED);
    assert_contains(res.warning_text, "no calibration runs on ampere with matmuls on CUDA cores");
    assert_rel(r_f, r_h, EC_TOL_CLOSED_FORM);
    /* a profile without the leave-one-architecture-out row says it cannot widen */
    r_h = h100_with(ctx, dir, "old.csv", &h100, "error_log_sd,,0.1\n", &res);
    assert_true(res.warnings & EC_WARN_UNCALIBRATED);
    assert_contains(res.warning_text, "no leave-one-architecture-out error");
    assert_rel(r_h, r_a, EC_TOL_CLOSED_FORM);
    /* an unseen-architecture sd below the calibrated GPUs' one: the interval is still the
     * leave-one-architecture-out one (its errors hold the scatter as well as the shift; no floor at
     * error_log_sd), and the warning says it is the narrower, not "widened" */
    r_h = h100_with(ctx, dir, "low.csv", &h100, "error_log_sd,,0.4\nerror_log_sd_unseen_arch,,0.3\n", &res);
    assert_rel(r_h, exp(2 * Z90 * 0.3), EC_TOL_CLOSED_FORM);
    assert_contains(res.warning_text, "(interval: leave-one-architecture-out log error sd 0.300, below the 0.400 of "
                                      "GPUs left out of calibrated architectures)");
    assert_null(strstr(res.warning_text, "widened"));

    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

static void test_profile_keeps_runs(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *in = ec_test_path(dir, "in.csv"), *out = ec_test_path(dir, "out.csv");
    ec_test_write_file(in, PROFILE, sizeof PROFILE - 1);
    ec_fit_report rep, back;
    assert_int_equal(ec_profile_read(ctx, in, &rep), EC_OK);
    assert_int_equal(rep.runs[0], 40);
    assert_int_equal(rep.cv_runs, 40);
    assert_rel(rep.arch_error_log_sd, 0.3, EC_TOL_EXACT);
    assert_int_equal(rep.arch_cv_runs, 40);
    assert_int_equal(ec_profile_write(ctx, &rep, out), EC_OK);
    assert_int_equal(ec_profile_read(ctx, out, &back), EC_OK);
    assert_int_equal(back.n_params, rep.n_params);
    for (size_t j = 0; j < rep.n_params; j++)
        assert_int_equal(back.runs[j], rep.runs[j]);
    assert_rel(back.arch_error_log_sd, 0.3, EC_TOL_EXACT);
    char *text = ec_test_read_file(out, NULL);
    assert_non_null(text);
    assert_contains(text, "parameter,architecture,value,stderr,runs,fitted_on,kernels,meaning\n");
    assert_contains(text, "gemm_scale,ampere,0.9,0,30,ampere,");
    assert_contains(text, "error_log_sd_unseen_arch,,0.3,,40,ampere,");
    free(text);
    free(in);
    free(out);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- a synthetic calibration set over four architectures -------------------------------- */

/* The truth: each architecture's tensor-core GEMM and bandwidth scales off the global ones. */
static const char TRUTH[] = "parameter,architecture,value\n"
                            "gemm_scale,volta,1.15\nmem_scale,volta,0.95\n"
                            "gemm_scale,turing,0.9\nmem_scale,turing,1.1\n"
                            "gemm_scale,ampere,0.75\nmem_scale,ampere,0.9\n"
                            "gemm_scale,ada,1.25\nmem_scale,ada,0.8\n";
static const char *const GPUS[] = {"v100-sxm2-16gb", "v100-sxm2-32gb", "t4", "rtx2080ti",
                                   "a100-sxm4-80gb", "a10g", "l4",     "rtx4090"};
static const char *const MODELS[][3] = {{"bert-base", "classify", "32"}, {"gpt2", "lm", "4"}, {"resnet50", "imagenet", "64"}};
#define N_GPUS (sizeof GPUS / sizeof GPUS[0])
#define N_MODELS (sizeof MODELS / sizeof MODELS[0])
#define N_SYN (N_GPUS * N_MODELS)

/* Measurements made with the truth, times a scatter of up to 4% (a fixed sequence). */
static void write_synthetic(ec_ctx *ctx, const char *dir, const char *path)
{
    char *truth = ec_test_path(dir, "truth.csv");
    ec_test_write_file(truth, TRUTH, sizeof TRUTH - 1);
    ec_fit_report t;
    assert_int_equal(ec_profile_read(ctx, truth, &t), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &t), EC_OK);
    char csv[8192];
    size_t len = (size_t)snprintf(csv, sizeof csv, "id,model,task,gpu,precision,batch_per_gpu,metric,value\n");
    unsigned seed = 12345;
    for (size_t g = 0; g < N_GPUS; g++)
        for (size_t m = 0; m < N_MODELS; m++) {
            ec_config cfg;
            set_cfg(ctx, &cfg, MODELS[m][0], GPUS[g], "amp_fp16", MODELS[m][2]);
            assert_int_equal(ec_config_set(ctx, &cfg, "task", MODELS[m][1]), EC_OK);
            ec_result res;
            if (ec_predict(ctx, &cfg, &res) != EC_OK)
                fail_msg("%s on %s: %s", MODELS[m][0], GPUS[g], ec_ctx_errmsg(ctx));
            seed = seed * 1103515245u + 12345u;
            double u = ((seed >> 16) & 0x7fff) / 16383.5 - 1.0; /* [-1, 1] */
            len += (size_t)snprintf(csv + len, sizeof csv - len, "r%zu_%zu,%s,%s,%s,amp_fp16,%s,samples_per_s,%.9g\n",
                                    g, m, MODELS[m][0], MODELS[m][1], GPUS[g], MODELS[m][2],
                                    res.samples_per_s * exp(0.04 * u));
            assert_true(len < sizeof csv);
        }
    ec_test_write_file(path, csv, len);
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    free(truth);
}

/* The synthetic runs written into a fresh folder (*dir, for free_synthetic) and loaded. */
static ec_runs *synthetic_runs(ec_ctx *ctx, char **dir)
{
    *dir = ec_test_tmpdir();
    char *path = ec_test_path(*dir, "runs.csv");
    write_synthetic(ctx, *dir, path);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    free(path);
    return runs;
}

static void free_synthetic(ec_runs *runs, char *dir)
{
    ec_runs_free(runs);
    ec_test_rmtree(dir);
    free(dir);
}

/* Leave one architecture out: fit without it, the interval's sd from a nested
 * leave-one-architecture-out on the others (as_unseen) or their leave-one-GPU-out error only
 * (the interval before issue 39); the share of its runs inside their p10-p90. */
static double loao_coverage(ec_ctx *ctx, const ec_runs *runs, int as_unseen)
{
    const char *archs[] = {"volta", "turing", "ampere", "ada"};
    size_t n = ec_runs_count(runs), covered = 0, total = 0;
    unsigned char use[N_SYN];
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < n; i++) {
            const eci_gpu *g = eci_hw_find(ctx, ec_runs_get(runs, i)->config.gpu);
            use[i] = strcmp(g->architecture, archs[k]) != 0;
        }
        ec_fit_report rep;
        assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
        assert_int_equal(ec_calibrate(ctx, runs, use, &rep), EC_OK);
        assert_int_equal(ec_calibrate_cv(ctx, runs, use, &rep), EC_OK);
        if (as_unseen)
            assert_int_equal(ec_calibrate_cv_arch(ctx, runs, use, &rep), EC_OK);
        assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_OK);
        for (size_t i = 0; i < n; i++) {
            if (use[i])
                continue;
            const ec_run *r = ec_runs_get(runs, i);
            ec_result res;
            assert_int_equal(ec_predict(ctx, &r->config, &res), EC_OK);
            assert_true(res.warnings & EC_WARN_UNCALIBRATED); /* the fold never saw this architecture */
            double p10, p90;
            ec_result_metric_interval(&res, r->metric, &p10, &p90);
            covered += r->value >= p10 && r->value <= p90;
            total++;
        }
    }
    assert_int_equal(total, n);
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    return (double)covered / (double)total;
}

static void test_loao_coverage(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = NULL;
    ec_runs *runs = synthetic_runs(ctx, &dir);
    assert_int_equal(ec_runs_count(runs), N_SYN);
    ec_fit_report rep;
    assert_int_equal(ec_calibrate(ctx, runs, NULL, &rep), EC_OK);
    assert_int_equal(ec_calibrate_cv(ctx, runs, NULL, &rep), EC_OK);
    assert_int_equal(ec_calibrate_cv_arch(ctx, runs, NULL, &rep), EC_OK);
    assert_int_equal(rep.arch_cv_runs, N_SYN);
    /* an architecture never seen is predicted worse than a GPU never seen of a seen architecture */
    assert_true(rep.arch_error_log_sd > 1.5 * rep.error_log_sd);
    /* every run of the fit is counted against the entries it exercises: an architecture's GEMM
     * scale by its 2 GPUs x 3 models, its memory scales by the transformers' runs and the CNN's */
    for (size_t j = 0; j < rep.n_params; j++) {
        size_t want = !rep.architectures[j][0] ? N_SYN
                      : strcmp(rep.names[j], "mem_scale") == 0 ? 2 * (N_MODELS - 1)
                      : strcmp(rep.names[j], "mem_scale_cnn") == 0 ? 2 : N_SYN / 4;
        assert_int_equal(rep.runs[j], want);
    }
    double wide = loao_coverage(ctx, runs, 1), narrow = loao_coverage(ctx, runs, 0);
    if (getenv("EC_TEST_VERBOSE"))
        print_message("sd: held-out GPU %.3f, held-out architecture %.3f; LOAO coverage %.2f (%.2f with the GPU sd)\n",
                      rep.error_log_sd, rep.arch_error_log_sd, wide, narrow);
    assert_true(wide >= 0.6 && wide > narrow);
    /* one architecture: nothing to leave out */
    unsigned char use[N_SYN] = {0};
    use[0] = use[1] = 1;
    assert_int_equal(ec_calibrate_cv_arch(ctx, runs, use, &rep), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "at least two architectures");
    assert_int_equal(ec_calibrate_cv_arch(ctx, NULL, NULL, &rep), EC_EMISUSE);
    free_synthetic(runs, dir);
    ec_ctx_free(ctx);
}

/* The unseen-architecture sd treats each architecture left out as one sample and widens for how
 * few there are (docs/accuracy.md): on the synthetic set with unequal run counts per
 * architecture (all 6 runs of Volta and Ampere, 2 of Turing, 3 of Ada), it is the 0.8 quantile
 * of the held-out |log error| with each of the 4 architectures weighing the same, over z_0.9,
 * times t_0.9,4 / z_0.9, recomputed here fold by fold; the estimate before that (every held-out
 * run pooled, the normal quantile) is far from it (these errors are near normal, so the root of
 * the mean over architectures of each one's mean square is not: test_heldout.c shows where the
 * quantile parts from it).  The runs are those the folds predict GPU-bound (arch_error_log_sd is
 * their class's; test_calib_hostbound.c checks the split). */
static void test_unseen_sd_per_arch(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = NULL;
    ec_runs *runs = synthetic_runs(ctx, &dir);
    const char *archs[] = {"volta", "turing", "ampere", "ada"};
    const size_t keep[] = {6, 2, 6, 3}; /* runs kept of each architecture, in file order */
    size_t n = ec_runs_count(runs), seen[4] = {0};
    unsigned char use[N_SYN], train[N_SYN];
    int arch_of[N_SYN];
    for (size_t i = 0; i < n; i++) {
        const eci_gpu *g = eci_hw_find(ctx, ec_runs_get(runs, i)->config.gpu);
        arch_of[i] = -1;
        for (int k = 0; k < 4; k++)
            if (strcmp(g->architecture, archs[k]) == 0)
                arch_of[i] = k;
        assert_true(arch_of[i] >= 0);
        use[i] = seen[arch_of[i]]++ < keep[arch_of[i]];
    }
    ec_fit_report rep;
    assert_int_equal(ec_calibrate_cv_arch(ctx, runs, use, &rep), EC_OK);
    assert_int_equal(rep.arch_cv_archs, 4);
    assert_int_equal(rep.arch_cv_runs, 17);
    double sum_msq = 0, sum_sq = 0, bound = eci_const(ctx, EC_C_host_bound_util_frac), err[N_SYN];
    int err_arch[N_SYN];
    size_t n_gpu = 0, k_gpu = 0;
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < n; i++)
            train[i] = use[i] && arch_of[i] != k;
        ec_fit_report fold;
        assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
        assert_int_equal(ec_calibrate(ctx, runs, train, &fold), EC_OK);
        assert_int_equal(ec_ctx_set_fit(ctx, &fold), EC_OK);
        double sq = 0;
        size_t cnt = 0;
        for (size_t i = 0; i < n; i++) {
            if (!use[i] || arch_of[i] != k)
                continue;
            const ec_run *r = ec_runs_get(runs, i);
            ec_result res;
            assert_int_equal(ec_predict(ctx, &r->config, &res), EC_OK);
            if (res.gpu_util_frac < bound)
                continue;
            double e = log(ec_result_metric(&res, r->metric) / r->value);
            sq += e * e;
            cnt++;
            err[n_gpu + cnt - 1] = fabs(e);
            err_arch[n_gpu + cnt - 1] = k;
        }
        if (cnt > 0) {
            sum_msq += sq / (double)cnt;
            k_gpu++;
        }
        sum_sq += sq;
        n_gpu += cnt;
    }
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    double t90_4 = 1.533206273713144; /* Student's t, 4 degrees of freedom, p = 0.9 */
    assert_rel(gsl_cdf_tdist_Pinv(0.9, 4), t90_4, 1e-9);
    assert_int_equal(k_gpu, 4);
    double want = ec_test_q80(err, err_arch, n_gpu, 1, -1) / Z90 * t90_4 / Z90;
    double pooled = sqrt(sum_sq / (double)n_gpu), rms = sqrt(sum_msq / 4) * t90_4 / Z90;
    if (getenv("EC_TEST_VERBOSE"))
        print_message("unseen-architecture sd %.4f (recomputed %.4f; pooled over runs, normal: %.4f; rms per "
                      "architecture: %.4f)\n",
                      rep.arch_error_log_sd, want, pooled, rms);
    assert_rel(rep.arch_error_log_sd, want, 1e-6);
    assert_true(fabs(pooled / want - 1) > 0.1);
    free_synthetic(runs, dir);
    ec_ctx_free(ctx);
}

/* CNN and transformer runs never share one memory parameter (issue 39 item 2): measured with a
 * truth whose CNN memory scale on Ampere is far below the transformers', a fit from the priors
 * gives Ampere two memory scales, each near its truth, and a CNN and a transformer on the same
 * GPU are priced with different ones. */
static const char CNN_TRUTH[] = "parameter,architecture,value\n"
                                "mem_scale,ampere,1.0\nmem_scale_cnn,ampere,0.6\n";

static void test_cnn_memory_apart(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *truth = ec_test_path(dir, "truth.csv"), *path = ec_test_path(dir, "runs.csv");
    ec_test_write_file(truth, CNN_TRUTH, sizeof CNN_TRUTH - 1);
    ec_fit_report rep;
    assert_int_equal(ec_profile_read(ctx, truth, &rep), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_OK);
    static const char *const gpus[] = {"a100-sxm4-80gb", "a10g", "a100-sxm4-40gb"};
    static const char *const models[][3] = {{"bert-base", "classify", "32"}, {"gpt2", "lm", "8"},
                                            {"resnet50", "imagenet", "128"}, {"resnet18", "imagenet", "256"}};
    char csv[4096];
    size_t len = (size_t)snprintf(csv, sizeof csv, "id,model,task,gpu,precision,batch_per_gpu,metric,value\n");
    for (size_t g = 0; g < 3; g++)
        for (size_t m = 0; m < 4; m++) {
            ec_config cfg;
            set_cfg(ctx, &cfg, models[m][0], gpus[g], "amp_fp16", models[m][2]);
            assert_int_equal(ec_config_set(ctx, &cfg, "task", models[m][1]), EC_OK);
            ec_result res;
            if (ec_predict(ctx, &cfg, &res) != EC_OK)
                fail_msg("%s on %s: %s", models[m][0], gpus[g], ec_ctx_errmsg(ctx));
            len += (size_t)snprintf(csv + len, sizeof csv - len, "c%zu_%zu,%s,%s,%s,amp_fp16,%s,samples_per_s,%.9g\n",
                                    g, m, models[m][0], models[m][1], gpus[g], models[m][2], res.samples_per_s);
        }
    ec_test_write_file(path, csv, len);
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    assert_int_equal(ec_calibrate(ctx, runs, NULL, &rep), EC_OK);
    double mem = 0, mem_cnn = 0;
    for (size_t j = 0; j < rep.n_params; j++) {
        if (strcmp(rep.architectures[j], "ampere") != 0)
            continue;
        if (strcmp(rep.names[j], "mem_scale") == 0)
            mem = rep.values[j];
        if (strcmp(rep.names[j], "mem_scale_cnn") == 0)
            mem_cnn = rep.values[j];
    }
    if (getenv("EC_TEST_VERBOSE"))
        print_message("ampere: mem_scale %.3f, mem_scale_cnn %.3f (truth 1.0, 0.6)\n", mem, mem_cnn);
    assert_true(mem > 0 && mem_cnn > 0);
    assert_true(mem_cnn < 0.85 * mem);
    /* the fit's parameters price a CNN and a transformer on one GPU with different memory scales */
    eci_params c;
    assert_int_equal(eci_params_from_report(ctx, &rep, &c), EC_OK);
    eci_rates cnn, tf;
    eci_rates_init(ctx, eci_hw_find(ctx, "a100-sxm4-80gb"), EC_PREC_AMP_FP16, &c, 1, EC_KERNELS_EAGER, &cnn);
    eci_rates_init(ctx, eci_hw_find(ctx, "a100-sxm4-80gb"), EC_PREC_AMP_FP16, &c, 0, EC_KERNELS_EAGER, &tf);
    assert_rel(cnn.mem_scale, mem_cnn, EC_TOL_EXACT);
    assert_rel(tf.mem_scale, mem, EC_TOL_EXACT);
    /* a profile without mem_scale_cnn (written before it) keeps one memory scale for both */
    static const char OLD[] = "parameter,architecture,value\nmem_scale,,0.8\nmem_scale,ampere,0.7\n";
    ec_test_write_file(truth, OLD, sizeof OLD - 1);
    assert_int_equal(ec_profile_read(ctx, truth, &rep), EC_OK);
    assert_int_equal(eci_params_from_report(ctx, &rep, &c), EC_OK);
    assert_rel(c.mem_scale_cnn, 0.8, EC_TOL_EXACT);
    assert_rel(eci_params_arch_find(&c, "ampere")->mem_scale_cnn, 0.7, EC_TOL_EXACT);
    ec_runs_free(runs);
    free(truth);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* A fitted parameter applies to the kernel classes it was fitted on (issue 39 item 2): an
 * architecture's scales fitted on kernels=eager runs price an eager run on it, while a
 * kernels=te run on it is priced as on an unseen architecture (the GEMM prior 1, the global
 * memory scale, the unseen-architecture sd) and says so; a profile keeps the classes in its
 * kernels column, a profile without the column applies its entries to every class, and a bad
 * cell is refused naming file, line and column. */
static void test_kernel_class_gate(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "gate.csv"), *old = ec_test_path(dir, "old.csv"), *out = ec_test_path(dir, "out.csv");
    static const char GATE[] = "parameter,architecture,value,kernels\n"
                               "mem_scale,,0.8,\n"
                               "gemm_scale,ampere,1.3,eager\n"
                               "mem_scale,ampere,0.5,eager\n"
                               "error_log_sd,,0.1,\n"
                               "error_log_sd_unseen_arch,,0.2,\n";
    ec_test_write_file(path, GATE, sizeof GATE - 1);
    ec_fit_report rep, back;
    assert_int_equal(ec_profile_read(ctx, path, &rep), EC_OK);
    eci_params c;
    assert_int_equal(eci_params_from_report(ctx, &rep, &c), EC_OK);
    const eci_gpu *a100 = eci_hw_find(ctx, "a100-sxm4-80gb");
    eci_rates eager, te;
    eci_rates_init(ctx, a100, EC_PREC_AMP_BF16, &c, 0, EC_KERNELS_EAGER, &eager);
    eci_rates_init(ctx, a100, EC_PREC_AMP_BF16, &c, 0, EC_KERNELS_TE, &te);
    assert_rel(eager.gemm_scale, 1.3, EC_TOL_EXACT);
    assert_rel(eager.mem_scale, 0.5, EC_TOL_EXACT);
    assert_rel(te.gemm_scale, 1.0, EC_TOL_EXACT); /* the prior: gpus.csv's measured efficiency */
    assert_rel(te.mem_scale, 0.8, EC_TOL_EXACT);  /* the global memory scale */
    int unseen = -1;
    assert_rel(eci_params_error_sd(&c, "ampere", EC_KERNELS_EAGER, 1, 0, 0, &unseen), 0.1, EC_TOL_EXACT);
    assert_int_equal(unseen, 0);
    assert_rel(eci_params_error_sd(&c, "ampere", EC_KERNELS_TE, 1, 0, 0, &unseen), 0.2, EC_TOL_EXACT);
    assert_int_equal(unseen, 1);
    /* the prediction says which kernels the architecture's runs had, and widens by the unseen sd */
    ec_config cfg;
    ec_result res;
    set_cfg(ctx, &cfg, "bert-base", "a100-sxm4-80gb", "amp_bf16", "32");
    assert_int_equal(ec_config_set(ctx, &cfg, "profile", path), EC_OK);
    assert_rel(step_ratio(ctx, &cfg, &res), exp(2 * Z90 * 0.1), EC_TOL_CLOSED_FORM);
    assert_false(res.warnings & EC_WARN_UNCALIBRATED);
    assert_int_equal(ec_config_set(ctx, &cfg, "kernels", "te"), EC_OK);
    assert_rel(step_ratio(ctx, &cfg, &res), exp(2 * Z90 * 0.2), EC_TOL_CLOSED_FORM);
    assert_true(res.warnings & EC_WARN_UNCALIBRATED);
    assert_contains(res.warning_text, "no calibration runs on ampere with kernels=te (its fitted scales are of "
                                      "kernels=eager runs): GEMMs at gpus.csv's efficiency (prior), memory at the "
                                      "fit's global scale");
    /* written and read back with the classes */
    assert_int_equal(ec_profile_write(ctx, &rep, out), EC_OK);
    assert_int_equal(ec_profile_read(ctx, out, &back), EC_OK);
    for (size_t j = 0; j < rep.n_params; j++)
        assert_int_equal(back.kernels[j], rep.kernels[j]);
    char *text = ec_test_read_file(out, NULL);
    assert_non_null(text);
    assert_contains(text, "gemm_scale,ampere,1.3,0,,ampere,eager,");
    free(text);
    /* a profile without the column: its entries price every kernel class */
    static const char OLD[] = "parameter,architecture,value\ngemm_scale,ampere,1.3\n";
    ec_test_write_file(old, OLD, sizeof OLD - 1);
    assert_int_equal(ec_profile_read(ctx, old, &rep), EC_OK);
    assert_int_equal(eci_params_from_report(ctx, &rep, &c), EC_OK);
    eci_rates_init(ctx, a100, EC_PREC_AMP_BF16, &c, 0, EC_KERNELS_TE, &te);
    assert_rel(te.gemm_scale, 1.3, EC_TOL_EXACT);
    /* bad cells: a word that is no kernels= value, a class on a global row */
    static const char *const BAD[][2] = {
        {"parameter,architecture,value,kernels\ngemm_scale,ampere,1.3,eager triton\n", "gate.csv:2:4: unknown kernel class 'triton'"},
        {"parameter,architecture,value,kernels\ngemm_scale,,1.3,eager\n", "gate.csv:2:4: 'gemm_scale' is global"},
    };
    for (size_t b = 0; b < sizeof BAD / sizeof BAD[0]; b++) {
        ec_test_write_file(path, BAD[b][0], strlen(BAD[b][0]));
        assert_int_equal(ec_profile_read(ctx, path, &rep), EC_EPARSE);
        assert_contains(ec_ctx_errmsg(ctx), BAD[b][1]);
    }
    /* the fitter records each architecture entry's classes: its runs' kernels= values */
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    static const char *const runs_of[][4] = {
        {"a100-sxm4-80gb", "bert-base", "amp_fp16", "te"}, {"a100-sxm4-80gb", "gpt2", "amp_fp16", "eager"},
        {"a100-sxm4-40gb", "bert-base", "amp_fp16", "te"}, {"v100-sxm2-16gb", "bert-base", "amp_fp16", "eager"},
        {"v100-sxm2-16gb", "gpt2", "amp_fp16", "eager"},   {"t4", "bert-base", "amp_fp16", "eager"}};
    fit_scaled_runs(ctx, path, runs_of, sizeof runs_of / sizeof runs_of[0], 1.1, &rep);
    size_t checked = 0;
    for (size_t j = 0; j < rep.n_params; j++) {
        unsigned want = strcmp(rep.architectures[j], "ampere") == 0 ? 1u << EC_KERNELS_TE | 1u << EC_KERNELS_EAGER
                        : rep.architectures[j][0] != '\0'          ? 1u << EC_KERNELS_EAGER
                                                                  : 0u;
        assert_int_equal(rep.kernels[j], want);
        checked += want != 0;
    }
    assert_true(checked >= 3); /* ampere's, volta's and turing's GEMM scales at least */
    char names[64];
    ec_fit_kernels_names(1u << EC_KERNELS_TE | 1u << EC_KERNELS_EAGER, names, sizeof names);
    assert_string_equal(names, "eager te");
    free(path);
    free(old);
    free(out);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* A profile's attn_eff of `value` fitted on the attention kernels `kernels` ("": every kernel),
 * written as dir/name; the step time of `config` under it, its warnings into *res. */
static double step_with_attn(ec_ctx *ctx, const char *dir, const char *name, const char *value, const char *kernels,
                             const char *config, ec_result *res)
{
    char text[160], *path = ec_test_path(dir, name);
    int len = snprintf(text, sizeof text, "parameter,architecture,value,kernels\nattn_eff,,%s,%s\n", value, kernels);
    ec_test_write_file(path, text, (size_t)len);
    char line[512];
    snprintf(line, sizeof line, "%s profile=%s", config, path);
    ec_test_predict(ctx, line, res);
    free(path);
    return res->step_s;
}

/* attn_eff applies to the attention kernels it was fitted on (issue 39 item 2) and to those whose
 * rows are ratios of theirs (attention.csv derived_from); any other kernel runs at its efficiency
 * as published, and the prediction says so.  Fitted on FlashAttention-2 alone (0.5): flash3 on an
 * H100 prices as with no attention scale at all (1), with the warning; the Triton kernel (derived
 * from FlashAttention-2) and SDPA's FlashAttention-2 on an A100 as with a scale for every kernel.
 * The profile keeps the kernels in attn_eff's kernels cell; the fitter records its runs'. */
static void test_attention_kernel_gate(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    ec_result res;
    static const char H100[] = "model=gpt2 task=lm gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=8 "
                               "seq_len=1024 data=on_gpu attention=flash3";
    double unscaled = step_with_attn(ctx, dir, "one.csv", "1", "", H100, &res);
    double every = step_with_attn(ctx, dir, "every.csv", "0.5", "", H100, &res);
    assert_true(every > 1.01 * unscaled); /* the scale reaches flash3 when it names no kernel */
    assert_null(strstr(res.warning_text, "no calibration runs with attention kernel"));
    assert_rel(step_with_attn(ctx, dir, "flash2.csv", "0.5", "flash2", H100, &res), unscaled, EC_TOL_EXACT);
    assert_true(res.warnings & EC_WARN_MODEL_DEFAULTED);
    assert_contains(res.warning_text, "no calibration runs with attention kernel flash3 (the fit's attn_eff is of "
                                      "flash2 runs): models/attention.csv's efficiency as published");
    static const char *const A100[] = {"model=gpt2 task=lm gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=8 "
                                       "seq_len=1024 data=on_gpu attention=flash_triton",
                                       "model=gpt2 task=lm gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=8 "
                                       "seq_len=1024 data=on_gpu attention=sdpa"};
    for (size_t i = 0; i < 2; i++) {
        double all = step_with_attn(ctx, dir, "every.csv", "0.5", "", A100[i], &res);
        assert_rel(step_with_attn(ctx, dir, "flash2.csv", "0.5", "flash2", A100[i], &res), all, EC_TOL_EXACT);
        assert_null(strstr(res.warning_text, "no calibration runs with attention kernel"));
    }
    /* the memory-efficient kernel on fp32 inputs (three TF32 passes on an A100, CUDA cores on a T4) is
     * a class of its own: a scale fitted on its 16-bit runs leaves it as published, warned */
    static const char T4_FP32[] = "model=bert-base task=classify gpu=t4 precision=fp32 batch_per_gpu=8 seq_len=256 "
                                  "data=on_gpu attention=sdpa";
    double fp32_unscaled = step_with_attn(ctx, dir, "one.csv", "1", "", T4_FP32, &res);
    assert_rel(step_with_attn(ctx, dir, "mem16.csv", "0.5", "sdpa_mem_efficient", T4_FP32, &res), fp32_unscaled,
               EC_TOL_EXACT);
    assert_contains(res.warning_text, "no calibration runs with attention kernel sdpa_mem_efficient_fp32");
    assert_true(step_with_attn(ctx, dir, "mem32.csv", "0.5", "sdpa_mem_efficient_fp32", T4_FP32, &res) >
                1.01 * fp32_unscaled);
    /* read, written and read back */
    ec_fit_report rep, back;
    char *in = ec_test_path(dir, "two.csv"), *out = ec_test_path(dir, "back.csv"), names[160];
    static const char TWO[] = "parameter,architecture,value,kernels\nattn_eff,,0.8,sdpa_mem_efficient  flash2\n";
    ec_test_write_file(in, TWO, sizeof TWO - 1);
    assert_int_equal(ec_profile_read(ctx, in, &rep), EC_OK);
    ec_fit_attn_kernels_names(rep.attn_kernels, names, sizeof names);
    assert_string_equal(names, "flash2 sdpa_mem_efficient");
    assert_int_equal(ec_profile_write(ctx, &rep, out), EC_OK);
    assert_int_equal(ec_profile_read(ctx, out, &back), EC_OK);
    assert_int_equal(back.attn_kernels, rep.attn_kernels);
    char *text = ec_test_read_file(out, NULL);
    assert_contains(text, ",flash2 sdpa_mem_efficient,multiplies the fused attention kernels");
    free(text);
    /* the fitter records the kernels its runs price: SDPA's FlashAttention-2 for 16 bits on an A100,
     * the memory-efficient kernel on fp32 inputs for fp32 on a T4; a CNN's none */
    static const char *const runs_of[][4] = {{"a100-sxm4-80gb", "gpt2", "amp_bf16", "eager"},
                                             {"t4", "bert-base", "fp32", "eager"},
                                             {"a100-sxm4-80gb", "resnet50", "amp_fp16", "eager"},
                                             {"v100-sxm2-16gb", "resnet50", "fp32", "eager"}};
    fit_scaled_runs(ctx, in, runs_of, sizeof runs_of / sizeof runs_of[0], 0.9, &rep);
    ec_fit_attn_kernels_names(rep.attn_kernels, names, sizeof names);
    assert_string_equal(names, "flash2 sdpa_mem_efficient_fp32");
    free(in);
    free(out);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Only a prediction that runs a fused attention kernel says what that kernel's rate rests on:
 * attention computed op by op (attention=eager) and a network without attention (a CNN) price
 * none, so neither warns of one; the same BERT through SDPA does (its fp32 inputs take the
 * memory-efficient kernel), and the eager and SDPA steps differ, so the eager one is not SDPA's. */
static void test_no_fused_kernel_no_kernel_warning(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result sdpa, eager, cnn;
#define T4_BERT "model=bert-base task=classify gpu=t4 precision=fp32 batch_per_gpu=8 seq_len=256 data=on_gpu "
    ec_test_predict(ctx, T4_BERT "attention=sdpa", &sdpa);
    ec_test_predict(ctx, T4_BERT "attention=eager", &eager);
#undef T4_BERT
    ec_test_predict(ctx, "model=resnet50 gpu=t4 precision=fp32 batch_per_gpu=8 data=on_gpu", &cnn);
    assert_contains(sdpa.warning_text, "attention kernel sdpa_mem_efficient_fp32");
    assert_null(strstr(eager.warning_text, "attention kernel"));
    assert_null(strstr(cnn.warning_text, "attention kernel"));
    assert_true(fabs(eager.step_s - sdpa.step_s) > 1e-3 * sdpa.step_s);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uncalibrated_warning),
        cmocka_unit_test(test_profile_keeps_runs),
        cmocka_unit_test(test_loao_coverage),
        cmocka_unit_test(test_unseen_sd_per_arch),
        cmocka_unit_test(test_cnn_memory_apart),
        cmocka_unit_test(test_kernel_class_gate),
        cmocka_unit_test(test_attention_kernel_gate),
        cmocka_unit_test(test_no_fused_kernel_no_kernel_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
