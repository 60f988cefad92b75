/*
 * test_lengths.c: the lengths= key (core/src/sim/lengths.c): every named distribution and the
 * histogram CSV, the closed forms of the padded length (E[max of b], E[max^2]) against
 * exact cases and against Monte-Carlo draws, and bad specs and bad histogram files.
 */
#include "ec_test.h"
#include "sim/lengths.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static eci_lengths *parse_ok(ec_ctx *ctx, const char *spec, int cap)
{
    eci_lengths *l = NULL;
    if (eci_lengths_parse(ctx, spec, cap, &l) != EC_OK)
        fail_msg("eci_lengths_parse(%s): %s", spec, ec_ctx_errmsg(ctx));
    return l;
}

static void expect_bad(ec_ctx *ctx, const char *spec, int code, const char *msg)
{
    eci_lengths *l = (eci_lengths *)1;
    int rc = eci_lengths_parse(ctx, spec, 512, &l);
    if (rc != code)
        fail_msg("%s: rc %d, expected %d (%s)", spec, rc, code, ec_ctx_errmsg(ctx));
    assert_null(l);
    assert_contains(ec_ctx_errmsg(ctx), msg);
}

/* The CDF is a CDF: 0 at 0, 1 at the cap, never decreasing. */
static void check_cdf(const eci_lengths *l)
{
    assert_true(l->cdf[0] == 0.0);
    assert_true(l->cdf[l->cap] == 1.0);
    for (int k = 1; k <= l->cap; k++)
        assert_true(l->cdf[k] >= l->cdf[k - 1]);
}

/* Mean of min(max of b draws, cap) and of its square by drawing, n batches. */
static void monte_carlo(const eci_lengths *l, int b, long n, double *mean, double *sq)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 12345);
    double s = 0, s2 = 0;
    for (long i = 0; i < n; i++) {
        int m = 0;
        for (int j = 0; j < b; j++) {
            int x = eci_lengths_draw(l, rng);
            assert_true(x >= 1 && x <= l->cap);
            if (x > m)
                m = x;
        }
        s += m;
        s2 += (double)m * m;
    }
    gsl_rng_free(rng);
    *mean = s / n;
    *sq = s2 / n;
}

static void test_exact_cases(void **state)
{
    ec_ctx *ctx = *state;
    /* fixed(n): every batch is n tokens, E[P] = n, E[P^2] = n^2 */
    eci_lengths *l = parse_ok(ctx, "fixed(100)", 512);
    check_cdf(l);
    assert_rel(eci_lengths_padded_mean(l, 16), 100.0, EC_TOL_CLOSED_FORM);
    assert_rel(eci_lengths_padded_sq_mean(l, 16), 1e4, EC_TOL_CLOSED_FORM);
    assert_rel(l->mean, 100.0, EC_TOL_CLOSED_FORM);
    eci_lengths_free(ctx, l);
    /* fixed above the cap is truncated to the cap */
    l = parse_ok(ctx, "fixed(1000)", 512);
    assert_rel(eci_lengths_padded_mean(l, 4), 512.0, EC_TOL_CLOSED_FORM);
    eci_lengths_free(ctx, l);
    /* uniform(lo,hi), b = 1: E = (lo + hi) / 2; b = 2 on 1..n: E[max] = (n+1)(4n-1)/(6n) */
    l = parse_ok(ctx, "uniform(10, 30)", 512);
    check_cdf(l);
    assert_rel(eci_lengths_padded_mean(l, 1), 20.0, EC_TOL_CLOSED_FORM);
    assert_int_equal(l->min_len, 10);
    eci_lengths_free(ctx, l);
    l = parse_ok(ctx, "uniform(1,10)", 512);
    assert_rel(eci_lengths_padded_mean(l, 2), 11.0 * 39.0 / 60.0, EC_TOL_CLOSED_FORM);
    /* the 0.5-quantile of the max of 2: F(k)^2 >= 0.5 -> k/10 >= 0.7071 -> k = 8 */
    assert_int_equal(eci_lengths_padded_quantile(l, 2, 0.5), 8);
    eci_lengths_free(ctx, l);
}

/* Closed forms agree with drawing within the 2% (20,000 batches: MC error < 0.5%). */
static void test_closed_form_vs_draws(void **state)
{
    ec_ctx *ctx = *state;
    static const char *const specs[] = {"lognormal(60,0.7)", "normal(200,80)", "uniform(5,400)",
                                        "lognormal(300,1.2)"};
    static const int batches[] = {1, 8, 32};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        eci_lengths *l = parse_ok(ctx, specs[i], 512);
        check_cdf(l);
        for (size_t j = 0; j < sizeof batches / sizeof batches[0]; j++) {
            double mean, sq;
            monte_carlo(l, batches[j], 20000, &mean, &sq);
            assert_rel(mean, eci_lengths_padded_mean(l, batches[j]), 0.02);
            assert_rel(sq, eci_lengths_padded_sq_mean(l, batches[j]), 0.02);
            /* E[P^2] >= E[P]^2 (Jensen): attention cost needs the former */
            assert_true(eci_lengths_padded_sq_mean(l, batches[j]) >=
                        pow(eci_lengths_padded_mean(l, batches[j]), 2) * (1 - EC_TOL_CLOSED_FORM));
        }
        /* the padded length grows with the batch and never passes the cap */
        assert_true(eci_lengths_padded_mean(l, 32) > eci_lengths_padded_mean(l, 8));
        assert_true(eci_lengths_padded_mean(l, 32) <= 512);
        eci_lengths_free(ctx, l);
    }
}

/* The whole-batch table (lengths.h) against the laws of total expectation and variance, which
 * it satisfies exactly since its conditional moments are exact (P(M = m) = F(m)^b - F(m-1)^b):
 *   sum_m P(M = m) E[S | M = m]                                   = b E[X]
 *   sum_m P(M = m) (Var[S | M = m] + E[S | M = m]^2) - (b E[X])^2 = b Var[X]
 * The variance identity holds to EC_TOL_INTEGRAL: it subtracts two sums of ~(b E[X])^2. */
static void test_batch_table_moments(void **state)
{
    ec_ctx *ctx = *state;
    static const char *const specs[] = {"lognormal(60,0.7)", "normal(200,80)", "uniform(5,400)",
                                        "lognormal(300,1.2)", "fixed(100)"};
    static const int batches[] = {1, 2, 8, 32, 64};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        eci_lengths *l = parse_ok(ctx, specs[i], 512);
        double ex2 = 0;
        for (int k = 1; k <= l->cap; k++)
            ex2 += (double)k * k * (l->cdf[k] - l->cdf[k - 1]);
        double vx = ex2 - l->mean * l->mean;
        for (size_t j = 0; j < sizeof batches / sizeof batches[0]; j++) {
            int b = batches[j];
            const eci_batch_lengths *t = eci_lengths_batch(ctx, l, b);
            assert_non_null(t);
            double e = 0, e2 = 0;
            for (int m = 1; m <= l->cap; m++) {
                double pm = pow(l->cdf[m], b) - pow(l->cdf[m - 1], b), mean, sd;
                eci_lengths_batch_tokens(t, m, &mean, &sd);
                e += pm * mean;
                e2 += pm * (sd * sd + mean * mean);
            }
            assert_rel(e, b * l->mean, EC_TOL_CLOSED_FORM);
            assert_true(fabs(e2 - e * e - b * vx) <= EC_TOL_INTEGRAL * e * e);
        }
        eci_lengths_free(ctx, l);
    }
}

/* Whole-batch draws against b separate draws: the mean longest, the mean tokens and their
 * standard deviation over 20,000 batches (each estimate's Monte-Carlo error below 1%, so
 * 2 x EC_TOL_SIMULATION), every draw within [m + (b-1) min_len, b m]. */
static void test_batch_draws_vs_samples(void **state)
{
    ec_ctx *ctx = *state;
    static const char *const specs[] = {"lognormal(60,0.7)", "uniform(5,400)", "lognormal(300,1.2)"};
    static const int batches[] = {1, 8, 32};
    const long n = 20000;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        eci_lengths *l = parse_ok(ctx, specs[i], 512);
        for (size_t j = 0; j < sizeof batches / sizeof batches[0]; j++) {
            int b = batches[j];
            const eci_batch_lengths *t = eci_lengths_batch(ctx, l, b);
            assert_non_null(t);
            double whole[3] = {0, 0, 0}, apart[3] = {0, 0, 0};
            gsl_rng_set(rng, 777);
            for (long k = 0; k < n; k++) {
                int m;
                double s;
                eci_lengths_batch_draw(t, rng, &m, &s);
                assert_true(m >= 1 && m <= l->cap);
                assert_true(s >= m + (double)(b - 1) * l->min_len && s <= (double)b * m);
                whole[0] += m;
                whole[1] += s;
                whole[2] += s * s;
                int mx = 0;
                double sum = 0;
                for (int r = 0; r < b; r++) {
                    int x = eci_lengths_draw(l, rng);
                    sum += x;
                    mx = x > mx ? x : mx;
                }
                apart[0] += mx;
                apart[1] += sum;
                apart[2] += sum * sum;
            }
            assert_rel(whole[0] / n, apart[0] / n, 2 * EC_TOL_SIMULATION);
            assert_rel(whole[1] / n, apart[1] / n, 2 * EC_TOL_SIMULATION);
            double sd_whole = sqrt(whole[2] / n - pow(whole[1] / n, 2));
            double sd_apart = sqrt(apart[2] / n - pow(apart[1] / n, 2));
            if (b > 1 || sd_apart > 0)
                assert_rel(sd_whole, sd_apart, 4 * EC_TOL_SIMULATION);
        }
        eci_lengths_free(ctx, l);
    }
    gsl_rng_free(rng);
}

/* lognormal(median, sigma): half the mass below the median (to the rounding of whole tokens). */
static void test_lognormal_median(void **state)
{
    ec_ctx *ctx = *state;
    eci_lengths *l = parse_ok(ctx, "lognormal(60,0.7)", 512);
    /* P(length <= 60) = F(60.5) = Phi(ln(60.5/60)/0.7) = Phi(0.01189) */
    assert_rel(l->cdf[60], 0.5047295, 1e-5);
    eci_lengths_free(ctx, l);
}

static void test_histogram(void **state)
{
    ec_ctx *ctx = *state;
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "h.csv");
    const char csv[] = "tokens,count,source\n10,1,made up for a test\n20,2,\n600,1,\n";
    ec_test_write_file(path, csv, strlen(csv));
    eci_lengths *l = parse_ok(ctx, path, 512);
    check_cdf(l);
    /* P(10) = 1/4, P(20) = 1/2, P(512) = 1/4 (600 truncated to the cap) */
    assert_rel(l->mean, 0.25 * 10 + 0.5 * 20 + 0.25 * 512, EC_TOL_CLOSED_FORM);
    /* b = 2: P(max = 10) = 1/16, P(max <= 20) = 9/16 */
    assert_rel(eci_lengths_padded_mean(l, 2), 10.0 / 16 + 20.0 * 8 / 16 + 512.0 * 7 / 16, EC_TOL_CLOSED_FORM);
    eci_lengths_free(ctx, l);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
}

/* The example histogram shipped in models/lengths/ parses. */
static void test_shipped_histogram(void **state)
{
    ec_ctx *ctx = *state;
    const char *src = getenv("EC_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/models/lengths/review_lengths_example.csv", src ? src : "..");
    eci_lengths *l = parse_ok(ctx, path, 512);
    check_cdf(l);
    assert_true(l->mean > 100 && l->mean < 512);
    eci_lengths_free(ctx, l);
}

static void test_bad_specs(void **state)
{
    ec_ctx *ctx = *state;
    expect_bad(ctx, "", EC_EINVAL, "'lengths' is empty");
    expect_bad(ctx, "gamma(3,4)", EC_EINVAL, "unknown distribution");
    expect_bad(ctx, "lognormal(60)", EC_EINVAL, "lognormal(median,sigma)");
    expect_bad(ctx, "lognormal(60,0)", EC_EINVAL, "sigma > 0");
    expect_bad(ctx, "lognormal(60,)", EC_EINVAL, "missing");
    expect_bad(ctx, "lognormal(sixty,0.5)", EC_EINVAL, "'sixty' is not a number");
    expect_bad(ctx, "normal(100,-1)", EC_EINVAL, "sd > 0");
    expect_bad(ctx, "uniform(30,10)", EC_EINVAL, "lo <= hi");
    expect_bad(ctx, "fixed(2.5)", EC_EINVAL, "whole n");
    expect_bad(ctx, "fixed(1,2,3)", EC_EINVAL, "1 or 2 numbers");
    expect_bad(ctx, "/nonexistent/lengths.csv", EC_EIO, "lengths.csv");
    /* a known distribution with unbalanced parentheses is a syntax error, not a file to open
     * (issue 21: "lognormal(60,0.7" said "cannot open: No such file") */
    expect_bad(ctx, "lognormal(60,0.7", EC_EINVAL, "expected one ')' closing the parentheses");
    expect_bad(ctx, " normal (100,5", EC_EINVAL, "expected one ')'");
    expect_bad(ctx, "uniform(1,2) ", EC_EINVAL, "expected one ')'");
    expect_bad(ctx, "fixed((3))", EC_EINVAL, "expected one ')'");
    expect_bad(ctx, "lognormal(60,0.7))", EC_EINVAL, "expected one ')'");
}

/* Bad histogram files: errors name file:line:column. */
static void test_bad_histograms(void **state)
{
    ec_ctx *ctx = *state;
    static const struct { const char *csv; int code; const char *msg; } cases[] = {
        {"tokens,weight\n10,1\n", EC_EPARSE, "count"},
        {"tokens,count\n10,1\n0,1\n", EC_EPARSE, ":3:1:"},
        {"tokens,count\n10,-1\n", EC_EPARSE, ":2:4:"},
        {"tokens,count\n10,x\n", EC_EPARSE, ":2:4:"},
        {"tokens,count\n10,0\n", EC_EPARSE, "sum to 0"},
        {"tokens,count\n", EC_EPARSE, "no data rows"},
    };
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "bad.csv");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_test_write_file(path, cases[i].csv, strlen(cases[i].csv));
        eci_lengths *l = NULL;
        int rc = eci_lengths_parse(ctx, path, 512, &l);
        if (rc != cases[i].code)
            fail_msg("case %zu: rc %d (%s)", i, rc, ec_ctx_errmsg(ctx));
        assert_null(l);
        assert_contains(ec_ctx_errmsg(ctx), cases[i].msg);
        assert_contains(ec_ctx_errmsg(ctx), "bad.csv");
    }
    ec_test_rmtree(dir);
    free(path);
    free(dir);
}

/* The corpus of broken histograms in tests/bad/lengths: each file's message in EXPECTED. */
static void test_bad_corpus(void **state)
{
    ec_ctx *ctx = *state;
    const char *src = getenv("EC_SOURCE_DIR");
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/tests/bad/lengths", src ? src : "..");
    snprintf(path, sizeof path, "%s/EXPECTED", dir);
    char *text = ec_test_read_file(path, NULL);
    if (text == NULL)
        fail_msg("cannot read %s", path);
    int n = 0;
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"), n++) {
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        *tab = '\0';
        snprintf(path, sizeof path, "%s/%s", dir, line);
        eci_lengths *l = (eci_lengths *)&l;
        int rc = eci_lengths_parse(ctx, path, 512, &l);
        if (rc != EC_EPARSE)
            fail_msg("%s: rc %d (%s)", line, rc, ec_ctx_errmsg(ctx));
        assert_null(l);
        assert_contains(ec_ctx_errmsg(ctx), tab + 1);
    }
    assert_true(n >= 8);
    free(text);
}

/* Out of memory anywhere in parsing: an error, no leak. */
static void test_oom(void **state)
{
    (void)state;
    for (long k = 1; k < 12; k++) {
        ec_test_failalloc fa;
        ec_test_failalloc_init(&fa, 0, 0);
        ec_ctx *ctx;
        assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx), EC_OK);
        fa.fail_at = fa.count + k;
        eci_lengths *l = NULL;
        int rc = eci_lengths_parse(ctx, "lognormal(60,0.7)", 512, &l);
        if (rc == EC_OK) {
            /* and in the whole-batch table: NULL with EC_ENOMEM's message, or a table */
            if (eci_lengths_batch(ctx, l, 16) == NULL)
                assert_contains(ec_ctx_errmsg(ctx), "sampling table of a batch");
            eci_lengths_free(ctx, l);
        } else
            assert_int_equal(rc, EC_ENOMEM);
        ec_ctx_free(ctx);
        assert_int_equal(fa.live_blocks, 0);
    }
}

static int setup(void **state)
{
    *state = ec_test_ctx();
    return 0;
}

static int teardown(void **state)
{
    ec_ctx_free(*state);
    return 0;
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_cases),
        cmocka_unit_test(test_closed_form_vs_draws),
        cmocka_unit_test(test_batch_table_moments),
        cmocka_unit_test(test_batch_draws_vs_samples),
        cmocka_unit_test(test_lognormal_median),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_shipped_histogram),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_bad_histograms),
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
