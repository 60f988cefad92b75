/*
 * test_sweep.c: ec_sweep, the library's sweep over a product of config-key values (sweep.c):
 * on several threads it hands back, in order, exactly the points ec_predict gives on one
 * context (refused points with their message), also when the caller reads faster than the
 * workers predict and predicts chunks itself; the parts of a sweep split over processes
 * cover every point once; a sweep stopped early frees its threads; misuse and bad axes are
 * refused naming the key.  Also ec_ctx_load_from, which gives each thread its context.
 */
#include "ec_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const models[] = {"bert-base", "resnet-50", "gpt2"};
static const char *const gpus[] = {"t4", "a100-sxm4-80gb", "h100-sxm5-80gb"};
static const char *const batches[] = {"1", "8", "64"};
static const char *const counts[] = {"1", "2", "8"};
static const char *const tps[] = {"1", "2"};
#define N_POINTS (3 * 3 * 3 * 3 * 2)

static ec_sweep *make(ec_ctx *ctx, const ec_sweep_opts *opts)
{
    ec_config base;
    ec_config_init(&base);
    ec_sweep *sw = NULL;
    assert_int_equal(ec_sweep_new(ctx, &base, opts, &sw), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "model", models, 3), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "gpu", gpus, 3), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "batch_per_gpu", batches, 3), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "num_gpus", counts, 3), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "tp", tps, 2), EC_OK);
    return sw;
}

/* Point i's config set key by key and predicted directly (last axis fastest). */
static int direct(ec_ctx *ctx, size_t i, ec_config *out, ec_result *res, char *msg, size_t n)
{
    ec_config cfg;
    ec_config_init(&cfg);
    size_t tp = i % 2, ng = i / 2 % 3, b = i / 6 % 3, g = i / 18 % 3, m = i / 54;
    assert_int_equal(ec_config_set(ctx, &cfg, "model", models[m]), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu", gpus[g]), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "batch_per_gpu", batches[b]), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "num_gpus", counts[ng]), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "tp", tps[tp]), EC_OK);
    int st = ec_predict(ctx, &cfg, res);
    snprintf(msg, n, "%s", st == EC_OK ? "" : ec_ctx_errmsg(ctx));
    if (out != NULL)
        *out = cfg;
    return st;
}

static void check_threads(int threads)
{
    ec_ctx *ctx = ec_test_ctx();
    ec_sweep_opts opts;
    ec_sweep_opts_init(&opts);
    opts.threads = threads;
    opts.resolve = 1;
    ec_sweep *sw = make(ctx, &opts);
    assert_int_equal(ec_sweep_count(sw), N_POINTS);
    assert_int_equal(ec_sweep_share(sw), N_POINTS);
    size_t n = 0, refused = 0;
    while (!ec_sweep_done(sw)) {
        ec_sweep_point pt;
        assert_int_equal(ec_sweep_next(sw, &pt), EC_OK);
        assert_int_equal(pt.index, n);
        /* The context must stay the caller's between points: predict on it here. */
        ec_result want;
        char msg[1024]; /* the context's message buffer (EC_ERRMSG_MAX in internal.h) */
        ec_config want_cfg;
        int st = direct(ctx, n, &want_cfg, &want, msg, sizeof msg);
        assert_int_equal(pt.status, st);
        /* the axis values, parsed once when the axes were added, give the point the config
         * ec_config_set gives, byte for byte (fields and which keys count as given) */
        if (memcmp(pt.config, &want_cfg, sizeof want_cfg) != 0)
            fail_msg("point %zu: the config differs from the one set key by key", n);
        if (st == EC_OK) {
            /* bit-identical: the same arithmetic on another context */
            if (pt.result->step_s != want.step_s || pt.result->memory.peak_bytes != want.memory.peak_bytes ||
                pt.result->samples_per_s != want.samples_per_s)
                fail_msg("point %zu: step %.17g s, direct %.17g s", n, pt.result->step_s, want.step_s);
            /* the point's resolved config (taken from the prediction's own resolution) is
             * ec_config_resolve's, byte for byte: derived strategy, nodes, topology, task,
             * seq_len or image_size */
            ec_config resolved;
            assert_int_equal(ec_config_resolve(ctx, pt.config, &resolved), EC_OK);
            if (memcmp(pt.resolved, &resolved, sizeof resolved) != 0)
                fail_msg("point %zu: the resolved config differs from ec_config_resolve's", n);
        } else {
            assert_ptr_equal(pt.resolved, pt.config);
            assert_string_equal(pt.message, msg);
            refused++;
        }
        assert_int_equal(pt.values[4], n % 2);
        assert_string_equal(pt.config->gpu, gpus[n / 18 % 3]);
        n++;
    }
    assert_int_equal(n, N_POINTS);
    assert_true(refused > 0 && refused < N_POINTS);
    assert_int_equal(ec_sweep_threads(sw), threads);
    ec_sweep_point pt;
    assert_int_equal(ec_sweep_next(sw, &pt), EC_EMISUSE); /* done */
    ec_sweep_free(sw);
    ec_ctx_free(ctx);
}

static void test_one_thread(void **state)
{
    (void)state;
    check_threads(1);
}

static void test_four_threads(void **state)
{
    (void)state;
    check_threads(4);
}

/* A caller that only reads the points (no work between them) predicts most chunks itself,
 * the next untaken one whenever the one it hands out is still being predicted; a caller that
 * works between points leaves them to the workers, which then wait for free slots.  Either
 * way, on 2 and 3 threads, the points are one thread's: same order, statuses and step times
 * to the bit, over 20 sweeps each (the hand-offs differ from one run to the next). */
static void test_fast_caller(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    int status[N_POINTS];
    double step_s[N_POINTS];
    ec_sweep *sw = make(ctx, NULL); /* threads 0: 162 points are one thread's */
    for (size_t n = 0; !ec_sweep_done(sw); n++) {
        ec_sweep_point pt;
        assert_int_equal(ec_sweep_next(sw, &pt), EC_OK);
        assert_int_equal(pt.index, n);
        status[n] = pt.status;
        step_s[n] = pt.status == EC_OK ? pt.result->step_s : 0;
    }
    assert_int_equal(ec_sweep_threads(sw), 1);
    ec_sweep_free(sw);
    for (int threads = 2; threads <= 3; threads++)
        for (int rep = 0; rep < 20; rep++) {
            ec_sweep_opts opts;
            ec_sweep_opts_init(&opts);
            opts.threads = threads;
            sw = make(ctx, &opts);
            size_t n = 0;
            while (!ec_sweep_done(sw)) {
                ec_sweep_point pt;
                assert_int_equal(ec_sweep_next(sw, &pt), EC_OK);
                assert_int_equal(pt.index, n);
                assert_int_equal(pt.status, status[n]);
                if (pt.status == EC_OK && pt.result->step_s != step_s[n])
                    fail_msg("%d threads, sweep %d, point %zu: step %.17g s, one thread %.17g s", threads, rep, n,
                             pt.result->step_s, step_s[n]);
                n++;
            }
            assert_int_equal(n, N_POINTS);
            assert_int_equal(ec_sweep_threads(sw), threads);
            ec_sweep_free(sw);
        }
    ec_ctx_free(ctx);
}

/* On one thread (runs of points predicted ahead across the blocks) and on two. */
static void check_parts(int threads)
{
    ec_ctx *ctx = ec_test_ctx();
    unsigned char seen[N_POINTS] = {0};
    size_t sum = 0;
    for (size_t part = 0; part < 3; part++) {
        ec_sweep_opts opts;
        ec_sweep_opts_init(&opts);
        opts.part = part;
        opts.parts = 3;
        opts.block = 7;
        opts.threads = threads;
        ec_sweep *sw = make(ctx, &opts);
        size_t share = ec_sweep_share(sw), n = 0, last = 0;
        while (!ec_sweep_done(sw)) {
            ec_sweep_point pt;
            assert_int_equal(ec_sweep_next(sw, &pt), EC_OK);
            assert_true(pt.index < N_POINTS);
            assert_int_equal(pt.index / 7 % 3, part); /* block b goes to part b % parts */
            assert_true(n == 0 || pt.index > last);
            last = pt.index;
            seen[pt.index]++;
            n++;
        }
        assert_int_equal(n, share);
        sum += share;
        ec_sweep_free(sw);
    }
    assert_int_equal(sum, N_POINTS);
    for (size_t i = 0; i < N_POINTS; i++)
        assert_int_equal(seen[i], 1);
    ec_ctx_free(ctx);
}

static void test_parts_cover_every_point_once(void **state)
{
    (void)state;
    check_parts(1);
    check_parts(2);
}

static void test_stopped_early(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    for (int threads = 1; threads <= 4; threads += 3) {
        ec_sweep_opts opts;
        ec_sweep_opts_init(&opts);
        opts.threads = threads;
        ec_sweep *sw = make(ctx, &opts);
        for (int i = 0; i < 5; i++) {
            ec_sweep_point pt;
            assert_int_equal(ec_sweep_next(sw, &pt), EC_OK);
        }
        /* the workers stop, or the run predicted ahead is dropped; nothing leaks (the ASan build checks) */
        ec_sweep_free(sw);
        sw = make(ctx, &opts);
        ec_sweep_free(sw); /* never started */
    }
    ec_ctx_free(ctx);
}

/* An empty value resets the key to its default and leaves it not given, as ec_config_set does:
 * the parsed-once value is put back that way too, over a base that had the key set. */
static void test_empty_values_reset(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config base;
    ec_test_config(ctx, &base, "model=bert-base gpu=t4 batch_per_gpu=8 task=squad seq_len=256");
    static const char *const tasks[] = {"", "classify"}, *const lens[] = {"128", ""};
    ec_sweep *sw = NULL;
    assert_int_equal(ec_sweep_new(ctx, &base, NULL, &sw), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "task", tasks, 2), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "seq_len", lens, 2), EC_OK);
    for (size_t i = 0; i < 4; i++) {
        ec_sweep_point pt;
        assert_int_equal(ec_sweep_next(sw, &pt), EC_OK);
        ec_config want = base;
        assert_int_equal(ec_config_set(ctx, &want, "task", tasks[i / 2]), EC_OK);
        assert_int_equal(ec_config_set(ctx, &want, "seq_len", lens[i % 2]), EC_OK);
        if (memcmp(pt.config, &want, sizeof want) != 0)
            fail_msg("point %zu: the config differs from the one set key by key", i);
        assert_int_equal(ec_config_is_set(pt.config, (size_t)ec_config_key_index("task")), i / 2 == 1);
        assert_int_equal(ec_config_is_set(pt.config, (size_t)ec_config_key_index("seq_len")), i % 2 == 0);
    }
    assert_true(ec_sweep_done(sw));
    ec_sweep_free(sw);
    ec_ctx_free(ctx);
}

static void test_misuse_and_bad_axes(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config base;
    ec_config_init(&base);
    ec_sweep_opts opts;
    ec_sweep_opts_init(&opts);
    ec_sweep *sw = NULL;
    opts.threads = -1;
    assert_int_equal(ec_sweep_new(ctx, &base, &opts, &sw), EC_EINVAL);
    assert_null(sw);
    opts.threads = 0;
    opts.part = 2;
    opts.parts = 2;
    assert_int_equal(ec_sweep_new(ctx, &base, &opts, &sw), EC_EINVAL);
    assert_int_equal(ec_sweep_new(ctx, NULL, NULL, &sw), EC_EMISUSE);
    assert_int_equal(ec_sweep_new(ctx, &base, NULL, &sw), EC_OK);
    ec_sweep_point pt;
    const char *const bad[] = {"8", "-2"};
    assert_int_equal(ec_sweep_axis(sw, "batch_per_gpu", bad, 2), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "batch_per_gpu");
    assert_int_equal(ec_sweep_axis(sw, "bach", bad, 1), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "bach");
    assert_int_equal(ec_sweep_axis(sw, "batch_per_gpu", bad, 0), EC_EINVAL);
    assert_int_equal(ec_sweep_axis(sw, "batch_per_gpu", bad, 1), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "batch_per_gpu", bad, 1), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "twice");
    ec_sweep_free(sw);
    assert_int_equal(ec_sweep_new(ctx, &base, NULL, &sw), EC_OK);
    assert_int_equal(ec_sweep_count(sw), 0);
    assert_int_equal(ec_sweep_next(sw, &pt), EC_EINVAL); /* no axes */
    ec_sweep_free(sw);
    ec_sweep_free(NULL);
    /* ec_ctx_load_from */
    ec_ctx *bare = ec_test_ctx_bare(), *other = ec_test_ctx_bare();
    assert_int_equal(ec_ctx_load_from(bare, NULL), EC_EMISUSE);
    assert_int_equal(ec_ctx_load_from(bare, bare), EC_EMISUSE);
    assert_int_equal(ec_ctx_load_from(bare, other), EC_EMISUSE); /* no models on the source */
    assert_int_equal(ec_ctx_load_from(bare, ctx), EC_OK);
    ec_ctx_free(bare);
    ec_ctx_free(other);
    ec_ctx_free(ctx);
}

/* Every point of a 2-thread sweep over bert-base equals ec_predict on ctx; returns the sum of
 * step times. */
static double sweep_matches_direct(ec_ctx *ctx)
{
    static const char *const b[] = {"1", "2", "4", "8", "16", "32"};
    static const char *const g[] = {"t4", "a100-sxm4-80gb", "h100-sxm5-80gb"};
    ec_config base;
    ec_config_init(&base);
    assert_int_equal(ec_config_set(ctx, &base, "model", "bert-base"), EC_OK);
    ec_sweep_opts opts;
    ec_sweep_opts_init(&opts);
    opts.threads = 2;
    ec_sweep *sw;
    assert_int_equal(ec_sweep_new(ctx, &base, &opts, &sw), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "gpu", g, 3), EC_OK);
    assert_int_equal(ec_sweep_axis(sw, "batch_per_gpu", b, 6), EC_OK);
    double sum = 0;
    while (!ec_sweep_done(sw)) {
        ec_sweep_point pt;
        assert_int_equal(ec_sweep_next(sw, &pt), EC_OK);
        assert_int_equal(pt.status, EC_OK);
        ec_result want;
        assert_int_equal(ec_predict(ctx, pt.config, &want), EC_OK);
        if (want.step_s != pt.result->step_s)
            fail_msg("point %zu: %.17g s on a worker, %.17g s on the caller's context", pt.index, pt.result->step_s,
                     want.step_s);
        sum += want.step_s;
    }
    assert_int_equal(ec_sweep_threads(sw), 2);
    ec_sweep_free(sw);
    return sum;
}

/* The workers' contexts are kept between sweeps (workers.c's pool); a fit set or reset on the
 * caller's context in between must reach them. */
static void test_kept_contexts_follow_the_fit(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    double plain = sweep_matches_direct(ctx);
    assert_rel(sweep_matches_direct(ctx), plain, EC_TOL_EXACT); /* kept contexts */
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "slow.csv");
    static const char text[] = "parameter,value\ndispatch_scale,40\n";
    ec_test_write_file(path, text, sizeof text - 1);
    ec_fit_report rep;
    assert_int_equal(ec_profile_read(ctx, path, &rep), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_OK);
    double fitted = sweep_matches_direct(ctx);
    /* models/profile.csv's fit replaced by the priors with dispatch_scale 40 (the fit's is ~9): other times */
    assert_true(fitted < plain * (1 - 1e-3) || fitted > plain * (1 + 1e-3));
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK); /* the priors */
    double priors = sweep_matches_direct(ctx);
    assert_true(priors < fitted * (1 - 1e-3) || priors > fitted * (1 + 1e-3));
    /* models/profile.csv again: the first sweep's figures */
    char *models_fit = ec_test_path(getenv("EPOCHCAST_MODELS"), "profile.csv");
    assert_int_equal(ec_profile_read(ctx, models_fit, &rep), EC_OK);
    assert_int_equal(ec_ctx_set_fit(ctx, &rep), EC_OK);
    assert_rel(sweep_matches_direct(ctx), plain, EC_TOL_EXACT);
    free(models_fit);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread),
        cmocka_unit_test(test_four_threads),
        cmocka_unit_test(test_fast_caller),
        cmocka_unit_test(test_parts_cover_every_point_once),
        cmocka_unit_test(test_stopped_early),
        cmocka_unit_test(test_empty_values_reset),
        cmocka_unit_test(test_misuse_and_bad_axes),
        cmocka_unit_test(test_kept_contexts_follow_the_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
