/*
 * workers.h: threads with contexts of their own (workers.c), for sweep.c and optimize.c.
 */
#ifndef EC_WORKERS_H
#define EC_WORKERS_H

#include "catalog/catalog.h"

typedef struct eci_workers eci_workers;

/* The body of worker i (0..n-1), run on its own thread with its own context wctx (loaded from
 * the caller's).  Its status comes back from eci_workers_join, its message with it. */
typedef int (*eci_worker_fn)(void *ud, ec_ctx *wctx, int i);

/* Cores this process may run on (its CPU affinity; else the online cores; at least 1). */
EC_INTERNAL int eci_workers_available(void);
/* Start n threads; each loads its context from ctx, and once all have, runs fn.  Returns after
 * every context is loaded, so ctx is the caller's again.  A context that fails to load fails
 * the start (its message on ctx, every thread joined).  EC_ENOMEM, EC_EINVAL (n < 1, or a
 * thread that cannot start). */
EC_INTERNAL int eci_workers_start(ec_ctx *ctx, int n, eci_worker_fn fn, void *ud, eci_workers **out);
/* Free the worker contexts ctx keeps for its next workers (ec_ctx_free calls it). */
EC_INTERNAL void eci_workers_pool_free(ec_ctx *ctx);
/* Wait for every worker to return and free them: EC_OK, or the first failing worker's status
 * (in worker order) with its message on ctx.  NULL is a no-op. */
EC_INTERNAL int eci_workers_join(eci_workers *w);

#endif /* EC_WORKERS_H */
