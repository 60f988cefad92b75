/*
 * fuzz_lengths.c: libFuzzer harness for the lengths= parser (core/src/sim/lengths.c): the spec
 * strings (lognormal(...), normal(...), uniform(...), fixed(...)) and the length-histogram CSV
 * (columns tokens,count).  Byte 0 picks the form (even: the rest is the spec text; odd: the
 * rest is a CSV file whose path is the spec), byte 1 the cap (seq_len, 1..1021).  On success
 * the distribution must be one: cdf non-decreasing from 0 to 1, min_len and the mean inside
 * 1..cap, draws inside 1..cap, padded-length closed forms finite and inside [min_len, cap].
 */
#include "fuzz_common.h"
#include "sim/lengths.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SPEC 4096

static void check_distribution(const eci_lengths *l, int cap)
{
    if (l->cap != cap || l->min_len < 1 || l->min_len > cap || l->cdf[0] != 0 || fabs(l->cdf[cap] - 1) > 1e-9)
        abort();
    for (int k = 1; k <= cap; k++)
        if (!(l->cdf[k] >= l->cdf[k - 1]) || (k < l->min_len && l->cdf[k] != 0))
            abort();
    if (!(l->mean >= l->min_len - 1e-9 && l->mean <= cap + 1e-9))
        abort();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL)
        abort();
    for (int i = 0; i < 64; i++) {
        int x = eci_lengths_draw(l, rng);
        if (x < l->min_len || x > cap)
            abort();
    }
    gsl_rng_free(rng);
    for (int b = 1; b <= 64; b *= 4) {
        double m = eci_lengths_padded_mean(l, b), sq = eci_lengths_padded_sq_mean(l, b);
        int q = eci_lengths_padded_quantile(l, b, 0.5);
        if (!isfinite(m) || m < l->min_len - 1e-6 || m > cap + 1e-6 || !isfinite(sq) || sq < m * m * (1 - 1e-9) ||
            q < l->min_len || q > cap)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size - 2 > MAX_SPEC)
        return 0;
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK)
        return 0;
    int cap = 1 + data[1] * 4;
    char spec[MAX_SPEC + 1];
    if (data[0] % 2 == 0) { /* the spec text itself, up to its first NUL */
        memcpy(spec, data + 2, size - 2);
        spec[size - 2] = '\0';
    } else {
        snprintf(spec, sizeof spec, "%s", fuzz_write("lengths.csv", data + 2, size - 2));
    }
    eci_lengths *l = NULL;
    int rc = eci_lengths_parse(ctx, spec, cap, &l);
    fuzz_check_error(ctx, rc);
    if (rc == EC_OK) {
        if (l == NULL)
            abort();
        check_distribution(l, cap);
    } else if (l != NULL) {
        abort();
    }
    eci_lengths_free(ctx, l);
    ec_ctx_free(ctx);
    return 0;
}
