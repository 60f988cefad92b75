/*
 * checked.c: products of counts (batch x GPUs x sequence ...) that cannot overflow, with an
 * error that names the keys they come from when a product passes its limit.
 */
#include "base/base.h"

#include <stdint.h>
#include <stdio.h>

int eci_product(ec_ctx *ctx, const eci_factor *f, size_t n, int64_t limit, const char *what, int64_t *out)
{
    int64_t p = 1;
    int over = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = f[i].value;
        if (v < 0)
            return eci_error(ctx, EC_EINVAL, "key '%s': %lld is negative", f[i].key, (long long)v);
        int64_t pv;
        if (!over && (__builtin_mul_overflow(p, v, &pv) || pv > limit))
            over = 1; /* p * v > limit (or past int64): no division, every prediction checks */
        else if (!over)
            p = pv;
    }
    for (size_t i = 0; i < n && over; i++)
        if (f[i].value == 0)
            over = 0, p = 0;
    if (!over) {
        if (out != NULL)
            *out = p;
        return EC_OK;
    }
    char keys[256] = "", values[256] = "";
    size_t kl = 0, vl = 0;
    for (size_t i = 0; i < n; i++) {
        int a = snprintf(keys + kl, sizeof keys - kl, "%s%s", i ? " x " : "", f[i].key);
        int b = snprintf(values + vl, sizeof values - vl, "%s%lld", i ? " x " : "", (long long)f[i].value);
        if (a > 0 && (size_t)a < sizeof keys - kl)
            kl += (size_t)a;
        if (b > 0 && (size_t)b < sizeof values - vl)
            vl += (size_t)b;
    }
    return eci_error(ctx, EC_EINVAL, "%s = %s is more than %lld %s: lower %s", keys, values, (long long)limit, what,
                     n > 1 ? "one of them" : "it");
}
