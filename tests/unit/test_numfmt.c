/*
 * test_numfmt.c: ec_format_number (core/src/base/numfmt.c) prints the same bytes as the snprintf
 * formats it replaces -- "%.0f" for whole numbers below 1e15, "%.6g" for the rest -- on the
 * numbers where a digit-by-digit printer goes wrong first: powers of ten and their neighbours
 * one ulp away, values that round up into a seventh digit (9.999995...), exact ties in binary
 * (123456.5), every exponent from 1e-300 to 1e300, whole numbers near 2^53, and two million
 * random doubles spread log-uniformly over the fixed-notation range and over 1e-20..1e30,
 * with both signs.  Also
 * eci_format_int against "%lld" and truncation to the buffer as snprintf truncates.
 */
#include "ec_test.h"
#include "internal.h"

#include <float.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define RANDOM_NUMBERS 2000000

/* What the writers printed before numfmt.c (lua/l_result.c, 2026-11-23). */
static void reference(double x, char *buf, size_t n)
{
    if (x == 0)
        snprintf(buf, n, "0");
    else if (isfinite(x) && x == floor(x) && fabs(x) < 1e15)
        snprintf(buf, n, "%.0f", x);
    else
        snprintf(buf, n, "%.6g", x);
}

static void same_as_snprintf(double x)
{
    char want[64], got[64];
    reference(x, want, sizeof want);
    memset(got, 'x', sizeof got);
    ec_format_number(x, got, sizeof got);
    if (strcmp(want, got) != 0)
        fail_msg("%.17g: ec_format_number gave \"%s\", snprintf \"%s\"", x, got, want);
}

static void both_signs(double x)
{
    same_as_snprintf(x);
    same_as_snprintf(-x);
}

static void test_edges(void **state)
{
    (void)state;
    static const double cases[] = {
        0.0, -0.0, 1, 0.5, 0.1, 0.25, 1.5, 2.5, 123456.5, 12345.65, 0.0001, 0.00010000005,
        9.9999949999e-5, 9.999995e-5, 9.9999951e-5, 999999.4, 999999.5, 999999.6, 999999.9999,
        9.999995, 9.9999949, 99999.95, 0.1234565, 1.0000005, 3.14159265358979, 2.718281828,
        1e-5, 1e-300, 1e300, 5e-324, DBL_MAX, DBL_MIN, 1e15 - 1, 1e15, 1e15 + 0.5, 9007199254740991.0,
        9007199254740992.0, 1e16, 123456789012.25, 0.000123456789, 42.0000001, 1e6, 1e6 - 1e-9,
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        both_signs(cases[i]);
    same_as_snprintf(NAN);
    same_as_snprintf(INFINITY);
    same_as_snprintf(-INFINITY);
    /* every power of ten in range and its neighbours one and two ulps away */
    for (int e = -300; e <= 300; e++) {
        double p = pow(10, e);
        double lo = nextafter(p, 0), hi = nextafter(p, INFINITY);
        both_signs(p);
        both_signs(lo);
        both_signs(hi);
        both_signs(nextafter(lo, 0));
        both_signs(nextafter(hi, INFINITY));
    }
    /* six-digit ties and near-ties at every exponent of the fixed notation */
    for (int e = -4; e <= 5; e++)
        for (int d = 100000; d < 1000000; d += 7919) {
            double t = (d + 0.5) * pow(10, e - 5);
            both_signs(t);
            both_signs(nextafter(t, 0));
            both_signs(nextafter(t, INFINITY));
        }
}

static void test_random(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20261124);
    for (long i = 0; i < RANDOM_NUMBERS; i++) {
        /* log-uniform over [1e-6, 1e8) (the fixed notation and both sides of it), every other
         * one over [1e-20, 1e30) (the exponent notation and past the exact powers of ten) */
        double x = i % 2 == 0 ? pow(10, -6 + 14 * gsl_rng_uniform(rng)) : pow(10, -20 + 50 * gsl_rng_uniform(rng));
        if (i % 4 == 0) /* whole numbers and halves as well */
            x = floor(x * 2) / 2;
        same_as_snprintf(gsl_rng_uniform(rng) < 0.5 ? -x : x);
    }
    gsl_rng_free(rng);
}

static void test_int_and_truncation(void **state)
{
    (void)state;
    static const long long ints[] = {0, 1, -1, 9, 10, -10, 123456789, -987654321, 9223372036854775807LL,
                                     -9223372036854775807LL - 1};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        char want[32], got[32];
        snprintf(want, sizeof want, "%lld", ints[i]);
        assert_int_equal(eci_format_int(ints[i], got), strlen(want));
        assert_string_equal(got, want);
    }
    /* truncated to n - 1 bytes and terminated, as snprintf truncates */
    static const double xs[] = {123456789, 0.000123456, -3.25, 1.5e300};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        for (size_t n = 1; n < 12; n++) {
            char full[32], want[32], got[32];
            reference(xs[i], full, sizeof full);
            memcpy(want, full, n - 1); /* snprintf(want, n, ...) keeps the first n - 1 bytes */
            want[n - 1] = '\0';
            if (strlen(full) < n)
                strcpy(want, full);
            ec_format_number(xs[i], got, n);
            assert_string_equal(got, want);
        }
}

/* eci_format_fixed2 prints what "%.2f" prints, away from ties of the third decimal (where it
 * rounds x x 100 + 0.5 down and printf rounds the exact binary value): GiB in warnings. */
static void test_fixed2(void **state)
{
    (void)state;
    static const double edges[] = {0, 0.004, 0.005001, 0.994, 0.996, 1, 9.999, 14.89, 15, 79.65, 1023.999, 1e14, -1,
                                   1e15, 1e20};
    char a[64], b[64];
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        eci_format_fixed2(edges[i], a);
        snprintf(b, sizeof b, "%.2f", edges[i]);
        assert_string_equal(a, b);
    }
    unsigned long long s = 0x9e3779b97f4a7c15ULL;
    int compared = 0;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double x = ldexp((double)(s >> 11), -53) * pow(10.0, (double)(i % 9)); /* [0, 1e8) */
        double third = fmod(x * 1000.0, 10.0);
        if (fabs(third - 5.0) < 1e-3) /* a tie of the third decimal: the two roundings may differ */
            continue;
        eci_format_fixed2(x, a);
        snprintf(b, sizeof b, "%.2f", x);
        assert_string_equal(a, b);
        compared++;
    }
    assert_true(compared > 199000);
}

/* eci_format_fixed prints what "%.*f" prints for 0, 1, 3 and 6 decimals, away from ties of the
 * next decimal (interval sds in warnings take three). */
static void test_fixed_decimals(void **state)
{
    (void)state;
    static const int decimals[] = {0, 1, 3, 6};
    static const double edges[] = {0, 0.0004, 0.1288, 0.1327, 0.9996, 1, 9.9999, 12345.678, -1, 1e15};
    char a[64], b[64];
    for (size_t d = 0; d < sizeof decimals / sizeof decimals[0]; d++) {
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
            eci_format_fixed(edges[i], decimals[d], a);
            snprintf(b, sizeof b, "%.*f", decimals[d], edges[i]);
            assert_string_equal(a, b);
        }
        unsigned long long s = 0x9e3779b97f4a7c15ULL + (unsigned long long)d;
        int compared = 0;
        double unit = pow(10.0, (double)decimals[d]);
        for (int i = 0; i < 50000; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            double x = ldexp((double)(s >> 11), -53) * pow(10.0, (double)(i % 6)); /* [0, 1e5) */
            double next = fmod(x * unit * 10.0, 10.0);
            if (fabs(next - 5.0) < 1e-3) /* a tie of the next decimal: the two roundings may differ */
                continue;
            eci_format_fixed(x, decimals[d], a);
            snprintf(b, sizeof b, "%.*f", decimals[d], x);
            assert_string_equal(a, b);
            compared++;
        }
        assert_true(compared > 49000);
    }
}

/* Durations and money as the answers print them (readable.c): the unit switches at 1 s, 120 s,
 * 2 h and 3 days; cents below 100,000, thousands separated; "-" when not positive. */
static void test_readable(void **state)
{
    (void)state;
    char b[48];
    static const struct { double s; const char *want; } d[] = {
        {0.85, "850 ms"}, {42, "42.0 s"}, {750, "12.5 min"}, {4.2 * 3600, "4.2 h"},
        {46.6 * 86400, "46.6 days"}, {0, "-"}, {-1, "-"}, {NAN, "-"}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        assert_string_equal(ec_format_duration(d[i].s, b, sizeof b), d[i].want);
    assert_string_equal(ec_format_money(0.0123, "USD", b, sizeof b), "USD 0.0123");
    assert_string_equal(ec_format_money(1021.44, "USD", b, sizeof b), "USD 1,021.44");
    assert_string_equal(ec_format_money(1082388.4, "USD", b, sizeof b), "USD 1,082,388");
    assert_string_equal(ec_format_money(99999.994, "EUR", b, sizeof b), "EUR 99,999.99");
    assert_string_equal(ec_format_money(5.06, "", b, sizeof b), "5.06");
    assert_string_equal(ec_format_money(0, "USD", b, sizeof b), "-");
    char small[6];
    assert_string_equal(ec_format_money(1021.44, "USD", small, sizeof small), "USD 1"); /* cut like snprintf */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_int_and_truncation),
        cmocka_unit_test(test_fixed2),
        cmocka_unit_test(test_fixed_decimals),
        cmocka_unit_test(test_readable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
