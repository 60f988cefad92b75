/*
 * numfmt.c: the text of numbers in what epochcast writes (CSV result columns, config values).
 * The format is C's: whole numbers as "%.0f" would print them, others as "%.6g".  A CLI sweep
 * to CSV spent about 40% of its instructions in glibc's printf for these (bench/results/speed.md),
 * so the common cases are printed here, digit by digit, to the same text:
 *   - whole numbers below 2^53, exactly (every digit is the integer's);
 *   - "%.6g" for |x| in [1e-16, 1e27): the six digits are round(|x| 10^k), one product or
 *     quotient by an exact power of ten (|k| <= 22), whose error (half an ulp of a number
 *     below 1e6, < 1e-10) decides the rounding unless the seventh digit onward is within
 *     1e-6 of a tie; then C's rule picks fixed or exponent notation from the exponent;
 * anything else (near-ties, tiny or huge numbers, NaN, infinities) goes to snprintf.
 * tests/unit/test_numfmt.c compares both paths with snprintf on millions of numbers.
 */
#include "base/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIG_DIGITS 6        /* %.6g */
#define TIE_MARGIN 1e-6     /* a seventh digit within this of ...5000 goes to snprintf */
#define EXACT_INT 9007199254740992.0 /* 2^53: every whole double below it is an integer we can hold */

/* Decimal digits of v (0 <= v < 2^63) at buf, no NUL; returns their count. */
static size_t put_digits(unsigned long long v, char *buf)
{
    char rev[24];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = rev[n - 1 - i];
    return n;
}

size_t eci_format_int(long long v, char *buf)
{
    size_t n = 0;
    unsigned long long u = (unsigned long long)v;
    if (v < 0) {
        buf[n++] = '-';
        u = 0ULL - u;
    }
    n += put_digits(u, buf + n);
    buf[n] = '\0';
    return n;
}

size_t eci_format_fixed(double x, int decimals, char *buf)
{
    static const double scale[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
    if (decimals < 0)
        decimals = 0;
    if (decimals > 6)
        decimals = 6;
    if (!(x >= 0 && x < 1e15 / scale[decimals] * 100)) {
        snprintf(buf, 32, "%.*f", decimals, x);
        return strlen(buf);
    }
    unsigned long long units = (unsigned long long)floor(x * scale[decimals] + 0.5);
    unsigned long long whole = units / (unsigned long long)scale[decimals];
    size_t n = put_digits(whole, buf);
    if (decimals > 0) {
        unsigned long long frac = units % (unsigned long long)scale[decimals];
        buf[n++] = '.';
        for (int d = decimals - 1; d >= 0; d--) {
            buf[n + (size_t)d] = (char)('0' + frac % 10);
            frac /= 10;
        }
        n += (size_t)decimals;
    }
    buf[n] = '\0';
    return n;
}

size_t eci_format_fixed2(double x, char *buf)
{
    return eci_format_fixed(x, 2, buf);
}

/* a x 10^k with one rounding: 10^|k| <= 1e22 is an exact double. */
static double scaled(double a, int k)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    return k >= 0 ? a * p10[k] : a / p10[-k];
}

/* The six digits of a (> 0) and its decimal exponent e after rounding to them: 0 when the
 * case is left to snprintf (a near-tie, or a beyond the exact powers of ten). */
static int six_digits(double a, char d[SIG_DIGITS], int *e)
{
    if (!(a >= 1e-16 && a < 1e27))
        return 0;
    int x = (int)floor(log10(a)); /* may be one off near a power of ten: corrected below */
    double m = scaled(a, 5 - x);
    if (m >= 1e6)
        m = scaled(a, 5 - ++x);
    else if (m < 1e5)
        m = scaled(a, 5 - --x);
    double whole = floor(m), frac = m - whole;
    if (m < 1e5 || m >= 1e6 || fabs(frac - 0.5) < TIE_MARGIN)
        return 0;
    unsigned long long r = (unsigned long long)whole + (frac > 0.5);
    if (r == 1000000ULL) { /* rounding carried into a seventh digit */
        r = 100000ULL;
        x++;
    }
    put_digits(r, d);
    *e = x;
    return 1;
}

/* "%.6g" of a = |x| (the sign already written) at buf; returns its length, 0 when the case is
 * left to snprintf. */
static size_t g6(double a, char *buf)
{
    char d[SIG_DIGITS];
    int e;
    if (!six_digits(a, d, &e))
        return 0;
    int fixed = e >= -4 && e < SIG_DIGITS;   /* C's rule for %g with precision 6 */
    int point = fixed && e > 0 ? e : 0;      /* digits before the point, less one */
    int last = SIG_DIGITS - 1;               /* %g drops the fraction's trailing zeros */
    while (last > point && d[last] == '0')
        last--;
    size_t n = 0;
    if (fixed && e < 0) {
        buf[n++] = '0';
        buf[n++] = '.';
        for (int z = 0; z < -e - 1; z++)
            buf[n++] = '0';
        memcpy(buf + n, d, (size_t)last + 1);
        return n + (size_t)last + 1;
    }
    memcpy(buf, d, (size_t)point + 1);
    n = (size_t)point + 1;
    if (last > point) {
        buf[n++] = '.';
        memcpy(buf + n, d + point + 1, (size_t)(last - point));
        n += (size_t)(last - point);
    }
    if (!fixed) { /* e+XX: a sign and at least two digits */
        buf[n++] = 'e';
        buf[n++] = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae < 10)
            buf[n++] = '0';
        n += put_digits((unsigned long long)ae, buf + n);
    }
    return n;
}

void ec_format_number(double x, char *buf, size_t n)
{
    char tmp[32];
    if (buf == NULL || n == 0)
        return;
    if (x == 0) { /* also -0 */
        eci_strlcpy(buf, "0", n);
        return;
    }
    if (isfinite(x) && x == floor(x) && fabs(x) < 1e15) {
        eci_format_int((long long)x, tmp);
        eci_strlcpy(buf, tmp, n);
        return;
    }
    size_t len = 0;
    if (isfinite(x)) {
        tmp[0] = '-';
        size_t sign = x < 0;
        len = g6(fabs(x), tmp + sign);
        if (len > 0)
            tmp[len + sign] = '\0';
    }
    if (len == 0)
        snprintf(tmp, sizeof tmp, "%.6g", x);
    eci_strlcpy(buf, tmp, n);
}

/* Shortest text of v / scale that reads back (x scale) to exactly v: whole numbers
 * without an exponent ("87599", not "8.7599e+04"), others the shortest %.*g. */
void eci_format_scaled(double v, double scale, char *buf, size_t n)
{
    double text = v / scale;

    if (fabs(text) < 1e16 && text == floor(text) && !(text == 0 && signbit(text))) {
        /* a whole double below 1e16 is an integer a long long holds, and its digits read back
         * as exactly text ("-0" is left to %g below, which prints it as "%.0f" did) */
        char digits[24];
        if (text * scale == v) {
            eci_format_int((long long)text, digits);
            eci_strlcpy(buf, digits, n);
            return;
        }
    }
    for (int prec = 1; prec <= 17; prec++) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*g", prec, text);
        if (strtod(tmp, NULL) * scale == v) {
            snprintf(buf, n, "%s", tmp);
            return;
        }
    }
    snprintf(buf, n, "%.17g", text);
}
