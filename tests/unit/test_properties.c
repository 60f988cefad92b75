/*
 * test_properties.c: properties over the whole config space (issue 7), on random configs
 * drawn with GSL's mt19937 from a fixed seed:
 *   - every prediction is finite and non-negative, or a clean error with a message;
 *   - a GPU with more FLOP/s, or more memory bandwidth, never predicts a slower step
 *     (tested through data: a copy of models/ whose gpus.csv scales those columns);
 *   - a larger batch never predicts less peak memory;
 *   - results do not depend on the order of a sweep (the context caches workloads).
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_CONFIGS 1000 /* each a full epoch simulation: ~10 s in all, ~40 s under ASan */
#define SEED 20240607u

static const char *pick(gsl_rng *r, const char *const *list, size_t n)
{
    return list[gsl_rng_uniform_int(r, n)];
}

static void set(ec_ctx *ctx, ec_config *c, const char *key, const char *value)
{
    if (ec_config_set(ctx, c, key, value) != EC_OK)
        fail_msg("%s=%s: %s", key, value, ec_ctx_errmsg(ctx));
}

static void set_int(ec_ctx *ctx, ec_config *c, const char *key, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    set(ctx, c, key, buf);
}

/* A random config over every model, GPU, precision, optimizer and the numeric axes. */
static void random_config(ec_ctx *ctx, gsl_rng *r, ec_config *c)
{
    static const char *const precisions[] = {"fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp16"};
    static const char *const optimizers[] = {"sgd", "adam", "adamw", "adamw_foreach", "adamw_fused", "lamb"};
    static const char *const tasks[] = {"", "classify", "squad", "pretrain", "lm", "imagenet"};
    static const char *const topologies[] = {"", "nvlink", "pcie-switch", "pcie-host", "a16-board"};
    static const long gpus_n[] = {1, 1, 1, 2, 4, 8, 16, 64};
    ec_model_info m;
    ec_gpu_info g;
    ec_config_init(c);
    assert_int_equal(ec_model_get(ctx, gsl_rng_uniform_int(r, ec_model_count(ctx)), &m), EC_OK);
    assert_int_equal(ec_gpu_get(ctx, gsl_rng_uniform_int(r, ec_gpu_count(ctx)), &g), EC_OK);
    set(ctx, c, "model", m.id);
    set(ctx, c, "gpu", g.id);
    if (gsl_rng_uniform(r) < 0.2)
        set(ctx, c, "task", pick(r, tasks, 6));
    set(ctx, c, "precision", pick(r, precisions, 6));
    set(ctx, c, "optimizer", pick(r, optimizers, 6));
    set_int(ctx, c, "batch_per_gpu", 1 + (long)gsl_rng_uniform_int(r, 512));
    if (gsl_rng_uniform(r) < 0.5)
        set_int(ctx, c, "seq_len", 1 + (long)gsl_rng_uniform_int(r, 2048));
    if (gsl_rng_uniform(r) < 0.3)
        set_int(ctx, c, "image_size", 16 + (long)gsl_rng_uniform_int(r, 600));
    set_int(ctx, c, "checkpointing", (long)gsl_rng_uniform_int(r, 2));
    long n = gpus_n[gsl_rng_uniform_int(r, 8)];
    set_int(ctx, c, "num_gpus", n);
    if (n > 1) {
        set(ctx, c, "strategy", gsl_rng_uniform(r) < 0.3 ? "dp" : "ddp");
        set(ctx, c, "topology", pick(r, topologies, 5));
    }
    set_int(ctx, c, "grad_accum", 1 + (long)gsl_rng_uniform_int(r, 8));
    set_int(ctx, c, "num_workers", (long)gsl_rng_uniform_int(r, 17));
    set_int(ctx, c, "pin_memory", (long)gsl_rng_uniform_int(r, 2));
    set(ctx, c, "attention", gsl_rng_uniform(r) < 0.5 ? "sdpa" : "eager");
    set(ctx, c, "tokenize", gsl_rng_uniform(r) < 0.5 ? "upfront" : "on_the_fly");
    set(ctx, c, "tokenizer", gsl_rng_uniform(r) < 0.5 ? "fast" : "python");
    set(ctx, c, "data", gsl_rng_uniform(r) < 0.2 ? "synthetic" : "real");
    if (gsl_rng_uniform(r) < 0.7)
        set_int(ctx, c, "dataset_samples", 1 + (long)gsl_rng_uniform_int(r, 10000000));
    set_int(ctx, c, "eval_samples", (long)gsl_rng_uniform_int(r, 10000));
}

static int finite_nonneg(double x)
{
    return isfinite(x) && x >= 0;
}

/* Every number of a result is finite and non-negative; the step takes time. */
static void check_result(const ec_result *res, const char *what)
{
    const double v[] = {res->step_s, res->samples_per_s, res->epoch_s, res->run_s, res->gpu_util_frac,
                        res->gpu_busy_s, res->cpu_issue_s, res->flop_per_step, res->mfu_frac,
                        res->kernels_per_step, res->steps_per_epoch, res->epoch_p10_s, res->epoch_p50_s,
                        res->epoch_p90_s, res->breakdown.forward_s, res->breakdown.backward_s,
                        res->breakdown.optimizer_s, res->breakdown.h2d_s, res->breakdown.cpu_overhead_s,
                        res->breakdown.loader_s, res->breakdown.comm_s, res->memory.weights_bytes,
                        res->memory.grads_bytes, res->memory.optimizer_bytes, res->memory.cast_cache_bytes,
                        res->memory.activations_bytes, res->memory.workspace_bytes, res->memory.context_bytes,
                        res->memory.allocator_bytes, res->memory.peak_bytes, res->memory.capacity_bytes};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!finite_nonneg(v[i]))
            fail_msg("%s: result field %zu is %g", what, i, v[i]);
    if (!(res->step_s > 0) || !(res->memory.peak_bytes > 0) || res->gpu_util_frac > 1.0)
        fail_msg("%s: step_s %g, peak_bytes %g, gpu_util_frac %g", what, res->step_s, res->memory.peak_bytes,
                 res->gpu_util_frac);
}

static void describe(const ec_config *c, char *buf, size_t n)
{
    snprintf(buf, n, "model=%s gpu=%s precision=%d optimizer=%d batch=%d seq=%d image=%d ckpt=%d gpus=%d "
             "strategy=%d topology=%s accum=%d workers=%d pin=%d attention=%d",
             c->model, c->gpu, (int)c->precision, (int)c->optimizer, c->batch_per_gpu, c->seq_len, c->image_size,
             c->checkpointing, c->num_gpus, (int)c->strategy, c->topology, c->grad_accum, c->num_workers,
             c->pin_memory, (int)c->attention);
}

static void test_finite_nonnegative(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, SEED);
    size_t ok = 0;
    for (int i = 0; i < N_CONFIGS; i++) {
        ec_config c;
        ec_result res;
        char what[1024];
        random_config(ctx, r, &c);
        describe(&c, what, sizeof what);
        int rc = ec_predict(ctx, &c, &res);
        if (rc != EC_OK) { /* e.g. squad on gpt2: a clean refusal that says why */
            if (ec_ctx_errmsg(ctx)[0] == '\0' || rc == EC_ENOMEM || rc == EC_EMISUSE)
                fail_msg("%s: status %d without a proper message", what, rc);
            continue;
        }
        check_result(&res, what);
        int best = 0;
        assert_int_equal(ec_max_batch(ctx, &c, 4096, &best), EC_OK);
        assert_true(best >= 0 && best <= 4096);
        ok++;
    }
    assert_true(ok > N_CONFIGS / 2); /* most random configs are valid: the property is exercised */
    gsl_rng_free(r);
    ec_ctx_free(ctx);
}

/* A copy of models/ whose gpus.csv multiplies the given columns by factor (read with the
 * library's libcsv reader, written with its libcsv writer). */
static char *scaled_models(const char *const *cols, size_t ncols, double factor)
{
    const char *src = getenv("EPOCHCAST_MODELS");
    char *dir = ec_test_tmpdir();
    static const char *const copy[] = {"hosts.csv", "interconnects.csv", "networks.csv", "constants.csv", "profile.csv",
                                       "reference_systems.csv", "attention.csv", "membw.csv", "l2.csv",
                                       "gemm.csv", "gemm_shapes.csv", "sdpa_backends.csv", "conv_algos.csv",
        "nccl_tuning.csv", "tp_overlap.csv"};
    for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++) {
        char *from = ec_test_path(src, copy[i]), *to = ec_test_path(dir, copy[i]);
        size_t len;
        char *data = ec_test_read_file(from, &len);
        assert_non_null(data);
        ec_test_write_file(to, data, len);
        free(data);
        free(from);
        free(to);
    }
    ec_test_link_networks(dir);
    ec_ctx *ctx = ec_test_ctx_bare();
    char *from = ec_test_path(src, "gpus.csv"), *to = ec_test_path(dir, "gpus.csv");
    eci_table *t;
    ec_csv_writer *w;
    assert_int_equal(eci_table_load(ctx, from, &t), EC_OK);
    assert_int_equal(ec_csv_open(ctx, to, &w), EC_OK);
    size_t nc = eci_table_cols(t);
    const char **fields = calloc(nc, sizeof *fields);
    char (*num)[64] = calloc(nc, sizeof *num);
    for (size_t c = 0; c < nc; c++)
        fields[c] = eci_table_header(t, c);
    assert_int_equal(ec_csv_row(w, fields, nc), EC_OK);
    for (size_t row = 0; row < eci_table_rows(t); row++) {
        for (size_t c = 0; c < nc; c++) {
            fields[c] = eci_table_cell(t, row, (int)c);
            for (size_t k = 0; k < ncols; k++)
                if (strcmp(eci_table_header(t, c), cols[k]) == 0) {
                    snprintf(num[c], sizeof num[c], "%.17g", atof(fields[c]) * factor);
                    fields[c] = num[c];
                }
        }
        assert_int_equal(ec_csv_row(w, fields, nc), EC_OK);
    }
    assert_int_equal(ec_csv_close(w), EC_OK);
    eci_table_free(t);
    free(fields);
    free(num);
    free(from);
    free(to);
    ec_ctx_free(ctx);
    return dir;
}

/* Same configs on the shipped GPUs and on GPUs with `cols` doubled: never slower. */
static void check_faster_hardware(const char *const *cols, size_t ncols)
{
    ec_ctx *base = ec_test_ctx();
    char *dir = scaled_models(cols, ncols, 2.0);
    ec_ctx *fast = ec_test_ctx_bare();
    if (ec_ctx_load_models(fast, dir) != EC_OK)
        fail_msg("scaled models: %s", ec_ctx_errmsg(fast));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, SEED + 1);
    size_t compared = 0;
    for (int i = 0; i < N_CONFIGS; i++) {
        ec_config c;
        ec_result a, b;
        char what[1024];
        random_config(base, r, &c);
        if (ec_predict(base, &c, &a) != EC_OK)
            continue;
        describe(&c, what, sizeof what);
        if (ec_predict(fast, &c, &b) != EC_OK)
            fail_msg("%s doubled: %s for %s", cols[0], ec_ctx_errmsg(fast), what);
        /* The same arithmetic on larger rates: equal up to rounding at worst. */
        if (b.step_s > a.step_s * (1 + EC_TOL_EXACT))
            fail_msg("%s doubled: step %.9g s > %.9g s for %s", cols[0], b.step_s, a.step_s, what);
        compared++;
    }
    assert_true(compared > N_CONFIGS / 2);
    gsl_rng_free(r);
    ec_ctx_free(fast);
    ec_ctx_free(base);
    ec_test_rmtree(dir);
    free(dir);
}

static void test_more_flops_never_slower(void **state)
{
    (void)state;
    static const char *const cols[] = {"peak_fp32_flop_per_s", "peak_tf32_flop_per_s", "peak_fp16_flop_per_s",
                                       "peak_bf16_flop_per_s", "emulated_bf16_flop_per_s"};
    check_faster_hardware(cols, 5);
}

static void test_more_bandwidth_never_slower(void **state)
{
    (void)state;
    static const char *const cols[] = {"memory_bandwidth_bytes_per_s"};
    check_faster_hardware(cols, 1);
}

static void test_larger_batch_more_memory(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, SEED + 2);
    for (int i = 0; i < N_CONFIGS; i++) {
        ec_config c;
        ec_result a, b;
        char what[1024];
        random_config(ctx, r, &c);
        if (ec_predict(ctx, &c, &a) != EC_OK)
            continue;
        ec_config bigger = c;
        bigger.batch_per_gpu = c.batch_per_gpu + 1 + (int)gsl_rng_uniform_int(r, 64);
        assert_int_equal(ec_predict(ctx, &bigger, &b), EC_OK);
        describe(&c, what, sizeof what);
        if (b.memory.peak_bytes < a.memory.peak_bytes)
            fail_msg("batch %d -> %d: peak %.6g < %.6g bytes for %s", c.batch_per_gpu, bigger.batch_per_gpu,
                     b.memory.peak_bytes, a.memory.peak_bytes, what);
    }
    gsl_rng_free(r);
    ec_ctx_free(ctx);
}

/* Predict a list forward, then backward on the same context: bit-identical results. */
static void test_sweep_order_independent(void **state)
{
    (void)state;
    enum { N = 400 };
    ec_ctx *ctx = ec_test_ctx();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, SEED + 3);
    ec_config *cfg = calloc(N, sizeof *cfg);
    ec_result *fwd = calloc(N, sizeof *fwd), *rev = calloc(N, sizeof *rev);
    int *rc = calloc(N, sizeof *rc);
    for (int i = 0; i < N; i++) {
        random_config(ctx, r, &cfg[i]);
        if (i % 3 == 1) /* neighbours that share a workload, as in a real sweep */
            cfg[i] = cfg[i - 1], cfg[i].optimizer = EC_OPT_SGD;
        rc[i] = ec_predict(ctx, &cfg[i], &fwd[i]);
    }
    for (int i = N; i-- > 0;) {
        assert_int_equal(ec_predict(ctx, &cfg[i], &rev[i]), rc[i]);
        if (rc[i] == EC_OK && memcmp(&fwd[i], &rev[i], sizeof fwd[i]) != 0)
            fail_msg("config %d: step %.17g s forward, %.17g s reversed", i, fwd[i].step_s, rev[i].step_s);
    }
    free(cfg);
    free(fwd);
    free(rev);
    free(rc);
    gsl_rng_free(r);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finite_nonnegative),
        cmocka_unit_test(test_more_flops_never_slower),
        cmocka_unit_test(test_more_bandwidth_never_slower),
        cmocka_unit_test(test_larger_batch_more_memory),
        cmocka_unit_test(test_sweep_order_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
