/*
 * test_heldout.c: the sd that widens a p10-p90 is the held-out errors' 0.8 quantile over z_0.9
 * (fit/heldout.c): per run, or with each group (a GPU or architecture left out) weighing the
 * same and the sd widened by t_0.9,k / z_0.9; picked by path, class and seen/unseen, with one
 * group left out on request.  Hand-computed cases, and the heavy tail where the root mean
 * square of the rule before gives an interval that holds every error.
 */
#include "ec_test.h"

#include "fit/heldout.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

#define Z90 1.2815515655446004

/* Two groups: A (0) with 0.1, 0.2, 0.3, 0.4 and B (1) with 1.0, all single-GPU and GPU-bound. */
static const eci_heldout TWO[] = {
    {0.1, 0, 0, -1, 0}, {0.2, 0, 0, -1, 0}, {0.3, 0, 0, -1, 0}, {0.4, 0, 0, -1, 0}, {1.0, 1, 0, -1, 0},
};
static const eci_heldout_pick ALL = {-1, -1, -1, ECI_HELDOUT_NONE};

/* Per run each of the 5 weighs 0.2: 0.8 of the weight is at or below 0.4.  Per group A's four
 * share 0.5 (0.125 each) and B's one 0.5: the cumulated weight passes 0.8 only at 1.0, and the
 * two groups widen it by t_0.9,2 / z_0.9 (1.886 / 1.2816). */
static void test_hand_quantiles(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    double sd;
    size_t k;
    assert_int_equal(eci_heldout_sd(ctx, TWO, 5, &ALL, ECI_HELDOUT_PER_RUN, &sd, &k), EC_OK);
    assert_rel(sd, 0.4 / Z90, EC_TOL_EXACT);
    assert_int_equal(k, 2);
    assert_int_equal(eci_heldout_sd(ctx, TWO, 5, &ALL, ECI_HELDOUT_PER_GROUP, &sd, &k), EC_OK);
    assert_rel(sd, 1.0 / Z90 * gsl_cdf_tdist_Pinv(0.9, 2) / Z90, EC_TOL_EXACT);
    /* without group B: A alone, 0.8 of its weight at or below 0.4 (t_0.9,1 = 3.078) */
    eci_heldout_pick no_b = {-1, -1, -1, 1};
    assert_int_equal(eci_heldout_sd(ctx, TWO, 5, &no_b, ECI_HELDOUT_PER_GROUP, &sd, &k), EC_OK);
    assert_rel(sd, 0.4 / Z90 * gsl_cdf_tdist_Pinv(0.9, 1) / Z90, EC_TOL_EXACT);
    assert_int_equal(k, 1);
    /* nothing picked: 0 and no groups */
    eci_heldout_pick host = {-1, 1, -1, ECI_HELDOUT_NONE};
    assert_int_equal(eci_heldout_sd(ctx, TWO, 5, &host, ECI_HELDOUT_PER_RUN, &sd, &k), EC_OK);
    assert_true(sd == 0 && k == 0);
    ec_ctx_free(ctx);
}

/* The pick: a path's multi-GPU runs only, single-GPU runs only, a class, seen or unseen. */
static void test_pick(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    static const eci_heldout mixed[] = {
        {0.05, 0, 0, -1, 0}, /* one GPU, GPU-bound, seen */
        {0.50, 0, 1, -1, 0}, /* one GPU, host-bound */
        {0.70, 0, 0, -1, 1}, /* one GPU, unseen architecture */
        {0.90, 0, 0, 1, 0},  /* several GPUs, path 1 */
        {0.30, 0, 0, 0, 0},  /* several GPUs, path 0 */
    };
    struct {
        eci_heldout_pick pick;
        double q80;
    } cases[] = {
        {{-1, 0, 0, ECI_HELDOUT_NONE}, 0.05}, {{-1, 1, -1, ECI_HELDOUT_NONE}, 0.50},
        {{-1, -1, 1, ECI_HELDOUT_NONE}, 0.70}, {{1, -1, -1, ECI_HELDOUT_NONE}, 0.90},
        {{0, -1, -1, ECI_HELDOUT_NONE}, 0.30},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double sd;
        size_t k;
        assert_int_equal(eci_heldout_sd(ctx, mixed, 5, &cases[c].pick, ECI_HELDOUT_PER_RUN, &sd, &k), EC_OK);
        assert_rel(sd, cases[c].q80 / Z90, EC_TOL_EXACT);
    }
    ec_ctx_free(ctx);
}

/* A heavy tail, one run in 20 far off (19 errors of 0.05, one of 3.0, as Lambda's EPYC RTX 3090
 * rows are of the rest): the root mean square of the rule before is sqrt((19 x 0.05^2 + 3^2) /
 * 20) = 0.672, an interval of |log error| <= 1.2816 x 0.672 = 0.861 holding 19 of the 20; the
 * quantile's sd is 0.05 / z_0.9, an interval of |log error| <= 0.05 holding the same 19, 17x
 * narrower. */
static void test_heavy_tail(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    eci_heldout e[20];
    for (int i = 0; i < 20; i++)
        e[i] = (eci_heldout){i < 19 ? 0.05 : 3.0, (size_t)i, 0, -1, 0};
    double sd, rms = 0;
    size_t k;
    for (int i = 0; i < 20; i++)
        rms += e[i].abs_log * e[i].abs_log / 20;
    rms = sqrt(rms);
    assert_int_equal(eci_heldout_sd(ctx, e, 20, &ALL, ECI_HELDOUT_PER_RUN, &sd, &k), EC_OK);
    assert_rel(sd, 0.05 / Z90, EC_TOL_EXACT);
    assert_true(rms / sd > 15); /* the rms interval is 17x as wide for the same 19 of 20 inside */
    ec_ctx_free(ctx);
}

/* Out of memory: EC_ENOMEM, nothing leaked. */
static void test_oom(void **state)
{
    (void)state;
    ec_test_failalloc fa;
    ec_test_failalloc_init(&fa, 0, 0);
    ec_ctx *ctx = NULL;
    assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx), EC_OK);
    long live = fa.live_blocks;
    fa.fail_at = fa.count + 1;
    double sd;
    size_t k;
    assert_int_equal(eci_heldout_sd(ctx, TWO, 5, &ALL, ECI_HELDOUT_PER_RUN, &sd, &k), EC_ENOMEM);
    assert_int_equal(fa.live_blocks, live);
    ec_ctx_free(ctx);
    assert_int_equal(fa.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_quantiles),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_heavy_tail),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
