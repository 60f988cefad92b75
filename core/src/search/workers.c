/*
 * workers.c: threads with contexts of their own, for work split over the cores (sweeps,
 * searches).  A context must not be used by two threads at once, so each worker loads its
 * own from the caller's (ec_ctx_load_from: the same models/ folder, fit and defined networks)
 * and predicts exactly what the caller's would.  Starting returns once every worker has its
 * context, so the caller's context is only read while nobody else uses it.  What the workers
 * do, and how they share it out, is the caller's (sweep.c's ordered chunks, optimize.c's
 * candidates); nothing here knows about predictions.  POSIX threads; no globals.  A worker
 * context allocates through the caller's allocator when the host declared it thread-safe
 * (ec_ctx_set_alloc_threadsafe: its memory budget then covers the workers), else with
 * realloc/free.
 *
 * Loading a context reads the models/ folder again (a few milliseconds), so the contexts of
 * finished workers stay on the caller's context (its pool) for the next sweep or search, as
 * long as what they copied is unchanged: the same defined networks (they are only ever added,
 * so their count says) and the same fit (compared byte for byte; a difference only costs a
 * reload).  The pool is touched only by the caller's thread, before the workers start and
 * after they are joined.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */

#include "search/workers.h"
#include "model/compute.h" /* eci_params */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct eci_workers {
    ec_ctx *ctx;                  /* the caller's: errors are reported there */
    eci_worker_fn fn;
    void *ud;
    int n, started;               /* threads asked for, threads running */
    pthread_t *threads;
    ec_ctx **ctxs;                /* each worker's own context */
    int *status;                  /* fn's status per worker */
    pthread_mutex_t lock;
    pthread_cond_t loaded_cond;
    int loaded;                   /* workers whose context is ready (or failed) */
    int load_failed;              /* index + 1 of the first worker whose context failed, 0: none */
    int go;                       /* 1: run fn; -1: give up (a context failed) */
};

/* Idle worker contexts and the state of the caller's context they were loaded from. */
struct eci_pool {
    ec_ctx **ctxs;
    int n, cap;
    size_t n_nets;
    int has_fit;
    int alloc_threadsafe;         /* the caller's, when they were made: whose allocator they use */
    eci_params fit;
};

typedef struct arg {
    eci_workers *w;
    int i;
} arg;

int eci_workers_available(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void *worker_main(void *p)
{
    arg *a = p;
    eci_workers *w = a->w;
    int i = a->i;
    ec_ctx *ctx = w->ctxs[i]; /* a pooled context, set before this thread started */
    int st = EC_OK;
    if (ctx == NULL) {
        /* A worker allocates through the caller's allocator when the host said it is
         * thread-safe (its memory budget then covers every thread), else with realloc/free. */
        const ec_ctx *parent = w->ctx;
        int shared = parent->alloc_threadsafe;
        st = ec_ctx_new(shared ? parent->alloc : NULL, shared ? parent->ud : NULL, &ctx);
        if (st == EC_OK) {
            ctx->alloc_threadsafe = shared;
            st = ec_ctx_load_from(ctx, w->ctx);
        }
    }
    pthread_mutex_lock(&w->lock);
    w->ctxs[i] = ctx;
    w->status[i] = st;
    if (st != EC_OK && w->load_failed == 0)
        w->load_failed = i + 1;
    w->loaded++;
    pthread_cond_broadcast(&w->loaded_cond);
    while (w->go == 0)
        pthread_cond_wait(&w->loaded_cond, &w->lock);
    int go = w->go;
    pthread_mutex_unlock(&w->lock);
    if (go > 0)
        w->status[i] = w->fn(w->ud, ctx, i);
    return NULL;
}

/* 1 when the pool's contexts were loaded from ctx as it is now (and allocate as it says). */
static int pool_current(const ec_ctx *ctx, const struct eci_pool *p)
{
    if (p->n_nets != ctx->n_nets || p->has_fit != (ctx->fit != NULL) || p->alloc_threadsafe != ctx->alloc_threadsafe)
        return 0;
    return ctx->fit == NULL || memcmp(&p->fit, ctx->fit, sizeof p->fit) == 0;
}

void eci_workers_pool_free(ec_ctx *ctx)
{
    struct eci_pool *p = ctx->pool;
    if (p == NULL)
        return;
    for (int i = 0; i < p->n; i++)
        ec_ctx_free(p->ctxs[i]);
    eci_free(ctx, p->ctxs, (size_t)p->cap * sizeof *p->ctxs);
    eci_free(ctx, p, sizeof *p);
    ctx->pool = NULL;
}

/* The pool, emptied when ctx changed since its contexts were loaded (NULL: out of memory). */
static struct eci_pool *pool_for(ec_ctx *ctx)
{
    struct eci_pool *p = ctx->pool;
    if (p != NULL && !pool_current(ctx, p)) {
        for (int i = 0; i < p->n; i++)
            ec_ctx_free(p->ctxs[i]);
        p->n = 0;
    }
    if (p == NULL) {
        if (eci_ctx_on_free(ctx, eci_workers_pool_free) != EC_OK || (p = eci_calloc(ctx, 1, sizeof *p)) == NULL)
            return NULL;
        ctx->pool = p;
    }
    p->n_nets = ctx->n_nets;
    p->has_fit = ctx->fit != NULL;
    p->alloc_threadsafe = ctx->alloc_threadsafe;
    if (ctx->fit != NULL)
        memcpy(&p->fit, ctx->fit, sizeof p->fit);
    return p;
}

/* Keep a finished worker's context for the next workers, or free it. */
static void pool_put(ec_ctx *ctx, ec_ctx *wctx)
{
    struct eci_pool *p = ctx->pool;
    if (wctx == NULL)
        return;
    if (p == NULL || !pool_current(ctx, p)) {
        ec_ctx_free(wctx);
        return;
    }
    if (p->n == p->cap) {
        int cap = p->cap > 0 ? 2 * p->cap : 8;
        ec_ctx **grown = eci_realloc(ctx, p->ctxs, (size_t)p->cap * sizeof *grown, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            ec_ctx_free(wctx);
            return;
        }
        p->ctxs = grown;
        p->cap = cap;
    }
    p->ctxs[p->n++] = wctx;
}

static void release(eci_workers *w)
{
    ec_ctx *ctx = w->ctx;
    for (int i = 0; i < w->n; i++) {
        if (w->status[i] == EC_OK)
            pool_put(ctx, w->ctxs[i]);
        else
            ec_ctx_free(w->ctxs[i]); /* a context that failed is not kept */
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->loaded_cond);
    eci_free(ctx, w->threads, (size_t)w->n * sizeof *w->threads);
    eci_free(ctx, w->ctxs, (size_t)w->n * sizeof *w->ctxs);
    eci_free(ctx, w->status, (size_t)w->n * sizeof *w->status);
    eci_free(ctx, w, sizeof *w);
}

/* Join every started thread; the first failing worker's status, its message copied to ctx. */
static int join_all(eci_workers *w)
{
    for (int i = 0; i < w->started; i++)
        pthread_join(w->threads[i], NULL);
    int st = EC_OK;
    /* The files a worker read are inputs of the caller's run too (a config.json that only a
     * worker opened): its writers must not replace them (outfile.c). */
    for (int i = 0; i < w->started && st == EC_OK; i++)
        if (w->ctxs[i] != NULL)
            st = eci_inputs_merge(w->ctx, w->ctxs[i]);
    for (int i = 0; i < w->started && st == EC_OK; i++)
        if (w->status[i] != EC_OK) {
            st = w->status[i];
            eci_error(w->ctx, st, "%s", w->ctxs[i] != NULL ? ec_ctx_errmsg(w->ctxs[i]) : ec_strerror(st));
        }
    return st;
}

int eci_workers_start(ec_ctx *ctx, int n, eci_worker_fn fn, void *ud, eci_workers **out)
{
    *out = NULL;
    if (n < 1)
        return eci_error(ctx, EC_EINVAL, "workers: %d threads asked for, at least 1 needed", n);
    eci_workers *w = eci_calloc(ctx, 1, sizeof *w);
    if (w == NULL)
        return EC_ENOMEM;
    w->ctx = ctx;
    w->fn = fn;
    w->ud = ud;
    w->n = n;
    w->threads = eci_calloc(ctx, (size_t)n, sizeof *w->threads);
    w->ctxs = eci_calloc(ctx, (size_t)n, sizeof *w->ctxs);
    w->status = eci_calloc(ctx, (size_t)n, sizeof *w->status);
    arg *args = eci_calloc(ctx, (size_t)n, sizeof *args);
    if (w->threads == NULL || w->ctxs == NULL || w->status == NULL || args == NULL) {
        eci_free(ctx, w->threads, (size_t)n * sizeof *w->threads);
        eci_free(ctx, w->ctxs, (size_t)n * sizeof *w->ctxs);
        eci_free(ctx, w->status, (size_t)n * sizeof *w->status);
        eci_free(ctx, args, (size_t)n * sizeof *args);
        eci_free(ctx, w, sizeof *w);
        return EC_ENOMEM;
    }
    struct eci_pool *pool = pool_for(ctx);
    for (int i = 0; pool != NULL && i < n && pool->n > 0; i++)
        w->ctxs[i] = pool->ctxs[--pool->n];
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->loaded_cond, NULL);
    int st = EC_OK;
    for (int i = 0; i < n; i++) {
        args[i] = (arg){w, i};
        int e = pthread_create(&w->threads[i], NULL, worker_main, &args[i]);
        if (e != 0) {
            st = eci_error(ctx, e == EAGAIN ? EC_ENOMEM : EC_EINVAL, "workers: cannot start thread %d of %d: %s",
                           i + 1, n, strerror(e));
            break;
        }
        w->started++;
    }
    /* Wait until every started worker has its context: the caller's context is free again. */
    pthread_mutex_lock(&w->lock);
    while (w->loaded < w->started)
        pthread_cond_wait(&w->loaded_cond, &w->lock);
    w->go = st == EC_OK && w->load_failed == 0 ? 1 : -1;
    int failed = w->load_failed;
    pthread_cond_broadcast(&w->loaded_cond);
    pthread_mutex_unlock(&w->lock);
    if (st == EC_OK && failed != 0)
        st = join_all(w);
    else if (st != EC_OK) {
        char msg[EC_ERRMSG_MAX];
        eci_strlcpy(msg, ec_ctx_errmsg(ctx), sizeof msg);
        join_all(w);
        eci_error(ctx, st, "%s", msg);
    }
    eci_free(ctx, args, (size_t)n * sizeof *args); /* threads read their arg only before loading */
    if (st != EC_OK) {
        release(w);
        return st;
    }
    *out = w;
    return EC_OK;
}

int eci_workers_join(eci_workers *w)
{
    if (w == NULL)
        return EC_OK;
    int st = join_all(w);
    release(w);
    return st;
}
