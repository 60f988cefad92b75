/*
 * alloc.c: every allocation of the library goes through the context's allocator
 * (lua_Alloc shape), so hosts can account, cap or fail allocations (OOM tests).
 * GSL and libcsv allocate internally with malloc; they cannot be hooked.
 */
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

void *eci_malloc(ec_ctx *ctx, size_t n)
{
    void *p = ctx->alloc(ctx->ud, NULL, 0, n ? n : 1);
    if (p == NULL)
        eci_error(ctx, EC_ENOMEM, "out of memory allocating %zu bytes", n);
    return p;
}

void *eci_calloc(ec_ctx *ctx, size_t n, size_t size)
{
    if (size != 0 && n > (size_t)-1 / size) {
        eci_error(ctx, EC_ENOMEM, "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    void *p = eci_malloc(ctx, n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

void *eci_realloc(ec_ctx *ctx, void *p, size_t osize, size_t nsize)
{
    void *q = ctx->alloc(ctx->ud, p, osize, nsize ? nsize : 1);
    if (q == NULL)
        eci_error(ctx, EC_ENOMEM, "out of memory growing a block to %zu bytes", nsize);
    return q;
}

void eci_free(ec_ctx *ctx, void *p, size_t size)
{
    if (p != NULL)
        ctx->alloc(ctx->ud, p, size, 0);
}

char *eci_strdup(ec_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = eci_malloc(ctx, n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

void eci_strfree(ec_ctx *ctx, char *s)
{
    if (s != NULL)
        eci_free(ctx, s, strlen(s) + 1);
}

void *eci_scratch_raw(ec_ctx *ctx, int slot, size_t n, size_t size)
{
    if (size != 0 && n > (size_t)-1 / size) {
        eci_error(ctx, EC_ENOMEM, "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    size_t bytes = n * size > 0 ? n * size : 1;
    if (bytes > ctx->scratch_bytes[slot]) {
        size_t grow = bytes > 2 * ctx->scratch_bytes[slot] ? bytes : 2 * ctx->scratch_bytes[slot];
        void *p = eci_malloc(ctx, grow);
        if (p == NULL)
            return NULL;
        eci_free(ctx, ctx->scratch[slot], ctx->scratch_bytes[slot]);
        ctx->scratch[slot] = p;
        ctx->scratch_bytes[slot] = grow;
    }
    return ctx->scratch[slot];
}

void *eci_scratch(ec_ctx *ctx, int slot, size_t n, size_t size)
{
    void *p = eci_scratch_raw(ctx, slot, n, size);
    if (p != NULL)
        memset(p, 0, n * size > 0 ? n * size : 1);
    return p;
}

void eci_scratch_free(ec_ctx *ctx)
{
    for (int i = 0; i < ECI_SCRATCH_SLOTS; i++) {
        eci_free(ctx, ctx->scratch[i], ctx->scratch_bytes[i]);
        ctx->scratch[i] = NULL;
        ctx->scratch_bytes[i] = 0;
    }
}
