/*
 * test_plan.c: ec_plan (core/src/search/plan.c): the verdicts, the Pareto front against a brute-force
 * dominance check, the chosen point against the constraints, the batch policies, the options'
 * errors.  Properties over the shipped price table, not hard-coded numbers.
 */
#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static ec_plan *make(ec_ctx *ctx, const char *words, const ec_plan_opts *opts)
{
    ec_config cfg;
    char buf[512];
    ec_config_init(&cfg);
    eci_strlcpy(buf, words, sizeof buf);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        if (ec_config_set_word(ctx, &cfg, w) != EC_OK)
            fail_msg("%s: %s", w, ec_ctx_errmsg(ctx));
    ec_plan *p = NULL;
    assert_int_equal(ec_plan_new(ctx, &cfg, opts, &p), EC_OK);
    return p;
}

static void axis(ec_plan *p, const char *key, const char *a, const char *b, const char *c, const char *d)
{
    const char *v[4] = {a, b, c, d};
    size_t n = d ? 4 : c ? 3 : b ? 2 : 1;
    if (ec_plan_axis(p, key, v, n) != EC_OK)
        fail_msg("axis %s", key);
}

/* The front is exactly the non-dominated priced points that fit; the best meets every
 * constraint and no point meeting them is cheaper. */
static void test_front_and_best(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_plan_opts o;
    ec_plan_opts_init(&o);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "deadline_h", "10"), EC_OK);
    ec_plan *p = make(ctx, "model=bert-base dataset_samples=1000000 epochs=3", &o);
    axis(p, "gpu", "t4", "a10", "a100-sxm4-80gb", "h100-sxm5-80gb");
    axis(p, "num_gpus", "1", "2", "4", "8");
    assert_int_equal(ec_plan_run(p), EC_OK);
    size_t n = ec_plan_count(p);
    assert_int_equal(n, 16);
    long best = ec_plan_best(p);
    assert_true(best >= 0);
    ec_plan_point b;
    assert_int_equal(ec_plan_get(p, (size_t)best, &b), EC_OK);
    assert_int_equal(b.verdict, EC_PLAN_MEETS);
    assert_true(b.best && b.on_front);
    assert_true(b.result->run_s <= 10 * 3600.0);
    size_t n_front = 0;
    for (size_t i = 0; i < n; i++) {
        ec_plan_point pi;
        ec_plan_get(p, i, &pi);
        /* a point in the first axis' product order: gpu slowest */
        static const char *const gpus[] = {"t4", "a10", "a100-sxm4-80gb", "h100-sxm5-80gb"};
        assert_string_equal(pi.config->gpu, gpus[i / 4]);
        if (pi.verdict == EC_PLAN_MEETS)
            assert_true(pi.result->cost_run >= b.result->cost_run);
        int plane = (pi.verdict == EC_PLAN_MEETS || pi.verdict == EC_PLAN_LATE || pi.verdict == EC_PLAN_OVER_BUDGET);
        if (pi.verdict == EC_PLAN_LATE)
            assert_true(pi.result->run_s > 10 * 3600.0);
        if (pi.verdict == EC_PLAN_NO_PRICE)
            assert_true(pi.result->price_per_hour == 0 && pi.result->cost_run == 0);
        if (plane) {
            assert_true(pi.result->cost_run > 0);
            /* cost = run time x the job's hourly price */
            assert_rel(pi.result->cost_run, pi.result->run_s * pi.result->price_per_hour / 3600.0, EC_TOL_CLOSED_FORM);
        }
        int dominated = 0;
        for (size_t j = 0; j < n && plane; j++) {
            ec_plan_point pj;
            ec_plan_get(p, j, &pj);
            if (j == i || !(pj.verdict == EC_PLAN_MEETS || pj.verdict == EC_PLAN_LATE || pj.verdict == EC_PLAN_OVER_BUDGET))
                continue;
            if (pj.result->run_s <= pi.result->run_s && pj.result->cost_run <= pi.result->cost_run &&
                (pj.result->run_s < pi.result->run_s || pj.result->cost_run < pi.result->cost_run))
                dominated = 1;
        }
        assert_int_equal(pi.on_front, plane && !dominated);
        n_front += pi.on_front;
        /* no batch was given: the largest power of two up to 64 that fits */
        if (pi.verdict != EC_PLAN_REFUSED) {
            int bb = pi.config->batch_per_gpu;
            assert_true(bb >= 1 && bb <= 64 && (bb & (bb - 1)) == 0);
        }
    }
    assert_true(n_front >= 1);
    ec_plan_free(p);
    ec_ctx_free(ctx);
}

/* train_tokens and train_samples are a run's length (issue 41: a plan needed dataset_samples):
 * the run is the tokens at the steady rate, in hours (train_time_h) and US dollars (cost_usd). */
static void test_train_tokens(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_plan_opts o;
    ec_plan_opts_init(&o);
    static const char *const words[] = {"model=bert-base seq_len=128 train_tokens=1e9",
                                        "model=bert-base seq_len=128 train_samples=1000000"};
    for (size_t w = 0; w < 2; w++) {
        ec_plan *p = make(ctx, words[w], &o);
        axis(p, "gpu", "t4", "a10g", NULL, NULL);
        assert_int_equal(ec_plan_run(p), EC_OK);
        long best = ec_plan_best(p);
        assert_true(best >= 0);
        for (size_t i = 0; i < ec_plan_count(p); i++) {
            ec_plan_point pi;
            ec_plan_get(p, i, &pi);
            assert_int_equal(pi.verdict, EC_PLAN_MEETS);
            const ec_result *r = pi.result;
            assert_true(r->epoch_s == 0 && r->run_s > 0);
            double rate = w == 0 ? 1e9 / r->tokens_per_s : 1e6 / r->samples_per_s;
            assert_rel(r->run_s, rate, EC_TOL_CLOSED_FORM);
            assert_rel(r->train_time_h, r->run_s / 3600.0, EC_TOL_CLOSED_FORM);
            assert_string_equal(r->price_currency, "USD");
            assert_rel(r->cost_usd, r->cost_run, EC_TOL_CLOSED_FORM);
            assert_rel(r->cost_run, r->run_s * r->price_per_hour / 3600.0, EC_TOL_CLOSED_FORM);
        }
        ec_plan_free(p);
    }
    ec_ctx_free(ctx);
}

/* global_batch: every point trains with the same global batch; grad_accum grows until it fits. */
static void test_global_batch(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_plan_opts o;
    ec_plan_opts_init(&o);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "global_batch", "512"), EC_OK);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "goal", "fastest"), EC_OK);
    ec_plan *p = make(ctx, "model=bert-large seq_len=512 dataset_samples=100000 precision=amp_fp16", &o);
    axis(p, "gpu", "t4", "a100-sxm4-80gb", NULL, NULL);
    axis(p, "num_gpus", "1", "8", NULL, NULL);
    assert_int_equal(ec_plan_run(p), EC_OK);
    int accumulated = 0;
    for (size_t i = 0; i < ec_plan_count(p); i++) {
        ec_plan_point pt;
        ec_plan_get(p, i, &pt);
        if (pt.verdict == EC_PLAN_REFUSED)
            continue;
        assert_int_equal(pt.config->batch_per_gpu * pt.config->num_gpus * pt.config->grad_accum, 512);
        accumulated |= pt.config->grad_accum > 1;
        if (pt.verdict != EC_PLAN_NO_FIT)
            assert_true(pt.result->memory.fits);
    }
    assert_true(accumulated); /* bert-large at 512 tokens: 512 samples do not fit one T4 at once */
    /* fastest: no point meeting the constraints is faster than the best */
    long best = ec_plan_best(p);
    assert_true(best >= 0);
    ec_plan_point b;
    ec_plan_get(p, (size_t)best, &b);
    for (size_t i = 0; i < ec_plan_count(p); i++) {
        ec_plan_point pt;
        ec_plan_get(p, i, &pt);
        if (pt.verdict == EC_PLAN_MEETS)
            assert_true(pt.result->run_s >= b.result->run_s);
    }
    ec_plan_free(p);
    /* a global batch the GPUs do not divide is a refused point, with the reason */
    p = make(ctx, "model=bert-base dataset_samples=1000", &o);
    axis(p, "gpu", "t4", NULL, NULL, NULL);
    axis(p, "num_gpus", "3", NULL, NULL, NULL);
    assert_int_equal(ec_plan_run(p), EC_OK);
    ec_plan_point pt;
    ec_plan_get(p, 0, &pt);
    assert_int_equal(pt.verdict, EC_PLAN_REFUSED);
    assert_contains(pt.message, "not a multiple of num_gpus 3");
    assert_int_equal(ec_plan_best(p), -1);
    ec_plan_free(p);
    ec_ctx_free(ctx);
}

/* The verdicts, in their order: refused, too many GPUs, no fit, no price, late, over budget. */
static void test_verdicts(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_plan_opts o;
    ec_plan_opts_init(&o);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "max_gpus", "4"), EC_OK);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "budget", "0.1"), EC_OK);
    ec_plan *p = make(ctx, "model=bert-base dataset_samples=100000 batch_per_gpu=32", &o);
    axis(p, "gpu", "k80", "t4", NULL, NULL);
    axis(p, "num_gpus", "1", "8", NULL, NULL);
    assert_int_equal(ec_plan_run(p), EC_OK);
    ec_plan_point pt;
    ec_plan_get(p, 0, &pt); /* k80 x1: no offer for a K80 */
    assert_int_equal(pt.verdict, EC_PLAN_NO_PRICE);
    ec_plan_get(p, 1, &pt); /* k80 x8 */
    assert_int_equal(pt.verdict, EC_PLAN_TOO_MANY_GPUS);
    assert_contains(pt.message, "max_gpus 4");
    ec_plan_get(p, 2, &pt); /* t4 x1 at fp32: over a 0.10 budget */
    assert_int_equal(pt.verdict, EC_PLAN_OVER_BUDGET);
    assert_true(pt.result->cost_run > 0.1);
    assert_string_equal(ec_plan_verdict_name(EC_PLAN_LATE), "late");
    ec_plan_free(p);
    /* must_fit: batch 4096 of bert-base does not fit a T4 */
    ec_plan_opts_init(&o);
    p = make(ctx, "model=bert-base dataset_samples=100000 batch_per_gpu=4096", &o);
    axis(p, "gpu", "t4", NULL, NULL, NULL);
    assert_int_equal(ec_plan_run(p), EC_OK);
    ec_plan_get(p, 0, &pt);
    assert_int_equal(pt.verdict, EC_PLAN_NO_FIT);
    assert_false(pt.on_front);
    ec_plan_free(p);
    ec_ctx_free(ctx);
}

static void test_options_and_misuse(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_plan_opts o;
    ec_plan_opts_init(&o);
    assert_int_equal(o.must_fit, 1);
    assert_int_equal(o.max_batch_per_gpu, 64);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "deadline_h", "2.5"), EC_OK);
    assert_rel(o.deadline_s, 9000, EC_TOL_EXACT);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "deadline_h", "0"), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "plan key 'deadline_h'");
    assert_int_equal(ec_plan_opts_set(ctx, &o, "goal", "cheap"), EC_EINVAL);
    assert_int_equal(ec_plan_opts_set(ctx, &o, "deadlin_h", "3"), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "did you mean 'deadline_h'");
    assert_true(ec_plan_opts_is_key("budget"));
    assert_false(ec_plan_opts_is_key("gpu"));
    ec_plan *p = make(ctx, "model=bert-base dataset_samples=1000", NULL);
    const char *bad[] = {"t4", "t44"};
    assert_int_equal(ec_plan_axis(p, "gpu", bad, 2), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "unknown gpu 't44'");
    assert_int_equal(ec_plan_axis(p, "gpuu", bad, 1), EC_ENOTFOUND);
    assert_int_equal(ec_plan_axis(p, "gpu", bad, 0), EC_EINVAL);
    assert_int_equal(ec_plan_axis(p, "gpu", bad, 1), EC_OK);
    assert_int_equal(ec_plan_axis(p, "gpu", bad, 1), EC_EINVAL); /* twice */
    ec_plan_point pt;
    assert_int_equal(ec_plan_get(p, 0, &pt), EC_EINVAL);        /* not run */
    assert_int_equal(ec_plan_best(p), -1);
    ec_plan_free(p);
    ec_plan_free(NULL);
    assert_int_equal(ec_plan_new(ctx, NULL, NULL, &p), EC_EMISUSE);
    assert_null(p);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_front_and_best),
        cmocka_unit_test(test_train_tokens),
        cmocka_unit_test(test_global_batch),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_options_and_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
