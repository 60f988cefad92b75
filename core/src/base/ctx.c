/*
 * ctx.c: the context object: its allocator (and whether worker threads may share it), the cleanups of the state the layers above keep
 * on it (each registers its own with eci_ctx_on_free), and progress and cancellation.  What
 * a models/ folder holds is loaded by model/load.c.
 */
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

int eci_alloc_counts(const ec_ctx *ctx)
{
    return ctx->alloc != default_alloc;
}

int ec_ctx_new(ec_alloc_fn alloc, void *ud, ec_ctx **out)
{
    if (out == NULL)
        return EC_EMISUSE;
    *out = NULL;
    if (alloc == NULL)
        alloc = default_alloc;
    ec_ctx *ctx = alloc(ud, NULL, 0, sizeof *ctx);
    if (ctx == NULL)
        return EC_ENOMEM;
    *ctx = (ec_ctx){.alloc = alloc, .ud = ud};
    *out = ctx;
    return EC_OK;
}

void ec_ctx_free(ec_ctx *ctx)
{
    if (ctx == NULL)
        return;
    while (ctx->n_cleanups > 0)
        ctx->cleanups[--ctx->n_cleanups](ctx);
    eci_scratch_free(ctx);
    ctx->alloc(ctx->ud, ctx, sizeof *ctx, 0);
}

int eci_ctx_on_free(ec_ctx *ctx, eci_cleanup_fn fn)
{
    for (size_t i = 0; i < ctx->n_cleanups; i++)
        if (ctx->cleanups[i] == fn)
            return EC_OK;
    if (ctx->n_cleanups == ECI_CLEANUPS_MAX)
        return eci_error(ctx, EC_EMISUSE, "more than %d modules keep state on one context (ECI_CLEANUPS_MAX)",
                         ECI_CLEANUPS_MAX);
    ctx->cleanups[ctx->n_cleanups++] = fn;
    return EC_OK;
}

void ec_ctx_set_alloc_threadsafe(ec_ctx *ctx, int threadsafe)
{
    if (ctx != NULL)
        ctx->alloc_threadsafe = threadsafe != 0 && ctx->alloc != default_alloc;
}

void ec_ctx_set_progress(ec_ctx *ctx, ec_progress_fn fn, void *ud)
{
    if (ctx == NULL)
        return;
    ctx->progress = fn;
    ctx->progress_ud = fn != NULL ? ud : NULL;
}

int eci_progress(ec_ctx *ctx, const char *what, double done, double total)
{
    if (ctx->progress == NULL || ctx->progress(ctx->progress_ud, what, done, total) == 0)
        return EC_OK;
    return eci_error(ctx, EC_ECANCELED, "%s: cancelled", what);
}

int ec_ctx_progress(ec_ctx *ctx, const char *what, double done, double total)
{
    if (ctx == NULL)
        return EC_EMISUSE;
    return eci_progress(ctx, what != NULL ? what : "operation", done, total);
}
