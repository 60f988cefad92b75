/*
 * text.c: small text helpers shared by the loaders and the config parser: bounded copy,
 * forgiving name comparison for GPU and model names, strict number parsing.  No context,
 * no errors: the callers report.
 */
#include "base/base.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t eci_strlcpy(char *dst, const char *src, size_t n)
{
    size_t len = strlen(src);
    if (n > 0) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(dst, src, k);
        dst[k] = '\0';
    }
    return len;
}

static int name_char(const char **p)
{
    while (**p == ' ' || **p == '-' || **p == '_')
        (*p)++;
    int c = (unsigned char)**p;
    if (c != '\0')
        (*p)++;
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; /* ASCII: names are ASCII, whatever the locale */
}

int eci_dirname(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return snprintf(dir, n, ".") < (int)n ? 0 : -1;
    if (slash == path)
        return snprintf(dir, n, "/") < (int)n ? 0 : -1;
    if ((size_t)(slash - path) >= n)
        return -1;
    snprintf(dir, n, "%.*s", (int)(slash - path), path);
    return 0;
}

int eci_name_eq(const char *a, const char *b)
{
    for (;;) {
        int ca = name_char(&a), cb = name_char(&b);
        if (ca != cb)
            return 0;
        if (ca == '\0')
            return 1;
    }
}

int eci_name_prefix(const char *name, const char *prefix)
{
    for (;;) {
        int cp = name_char(&prefix);
        if (cp == '\0')
            return 1;
        if (name_char(&name) != cp)
            return 0;
    }
}

int eci_decimal_syntax(const char *s, int integer)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    while (s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (!integer && s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return 0;
    if (!integer && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = 0;
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++, e++;
        if (e == 0)
            return 0;
    }
    return s[i] == '\0';
}

double eci_strtod_c(const char *s, int *overflow)
{
    /* strtod reads the locale's decimal point, and the host may have called setlocale:
     * swap '.' for the locale's point in a copy. */
    char tmp[ECI_NUMBER_MAX + 1];
    eci_strlcpy(tmp, s, sizeof tmp);
    const char *dp = localeconv()->decimal_point;
    if (dp != NULL && dp[0] != '\0' && dp[0] != '.' && dp[1] == '\0') {
        char *q = strchr(tmp, '.');
        if (q != NULL)
            *q = dp[0];
    }
    errno = 0;
    double v = strtod(tmp, NULL);
    /* ERANGE with a tiny result is underflow to (sub)normal or zero: accepted. */
    *overflow = !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0);
    return v;
}

int eci_parse_double(const char *s, double *out)
{
    int overflow;
    if (s == NULL || strlen(s) > ECI_NUMBER_MAX || !eci_decimal_syntax(s, 0))
        return -1;
    double v = eci_strtod_c(s, &overflow);
    if (overflow)
        return -1;
    *out = v;
    return 0;
}

int eci_parse_long(const char *s, long *out)
{
    char *end;
    if (s == NULL || !eci_decimal_syntax(s, 1))
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

/* "major[.minor[.patch]]", each part 1-3 digits: major x 1000 + minor, so 2.10 comes after 2.9;
 * 9.13.1 is 9.13 (a patch is a bug-fix build of the same kernels). */
int eci_parse_release(const char *s, int *key)
{
    int part[3] = {0, 0, 0}, n = 0, digits = 0;
    if (s == NULL)
        return -1;
    for (const char *p = s;; p++) {
        if (*p >= '0' && *p <= '9' && digits < 3) {
            part[n] = part[n] * 10 + (*p - '0');
            digits++;
        } else if (*p == '.' && digits > 0 && n < 2) {
            n++;
            digits = 0;
        } else if (*p == '\0' && digits > 0) {
            *key = EC_RELEASE(part[0], part[1]);
            return 0;
        } else
            break;
    }
    return -1;
}

char *eci_release_text(int key, char *buf, size_t n)
{
    snprintf(buf, n, "%d.%d", key / 1000, key % 1000);
    return buf;
}

const char *eci_echo(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    int plain = len >= 1 && len <= ECI_ECHO_MAX;
    for (size_t i = 0; plain && i < len; i++) {
        unsigned char c = (unsigned char)src[i];
        plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '.' || c == '+' || c == '-';
    }
    if (plain)
        eci_strlcpy(dst, src, n);
    else
        snprintf(dst, n, "(%zu bytes, not shown)", len);
    return dst;
}

long eci_control_at(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return (long)(p - (const unsigned char *)s);
    return -1;
}

int eci_parse_u64(const char *s, uint64_t *out, int *overflow)
{
    char *end;
    unsigned long long v;
    int base = 10;

    *overflow = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
            return -1; /* strtoull would take a second prefix */
    }
    /* strtoull skips blanks and accepts a sign (negating!); we accept digits only. */
    if (!((*s >= '0' && *s <= '9') || (base == 16 && strchr("abcdefABCDEF", *s) && *s)))
        return -1;
    errno = 0;
    v = strtoull(s, &end, base);
    if (*end != '\0')
        return -1;
    if (errno == ERANGE) {
        *overflow = 1;
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}
