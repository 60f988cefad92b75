/*
 * text.c: small text helpers shared by the loaders and the config parser: bounded copy,
 * forgiving name comparison for GPU and model names, strict number parsing.
 */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
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
    return tolower(c);
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

int eci_parse_double(const char *s, double *out)
{
    char *end;
    if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int eci_parse_long(const char *s, long *out)
{
    char *end;
    if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}
