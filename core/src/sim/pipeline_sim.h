/*
 * pipeline_sim.h: what the files of the input pipeline's simulation share, private to
 * sim/pipeline*.c (callers outside use sim/pipeline.h): the simulation sizes, a replica's
 * batches, the step model at a padded length, and the steps each file lends the others --
 * the draws (pipeline_draw.c), the run and epoch statistics (pipeline_stats.c), the events
 * (pipeline.c), the recurrence and closed forms (pipeline_closed.c).
 */
#ifndef EC_PIPELINE_SIM_H
#define EC_PIPELINE_SIM_H

#include "sim/pipeline.h"

#include <gsl/gsl_interp.h>

/* Simulation sizes: numerical choices, not model constants. */
#define STEADY_STEPS 256     /* micro-steps simulated when the epoch length is unknown */
#define MAX_SIM_STEPS 10000  /* longer epochs are extrapolated from this many */
#define STEP_BUDGET 4000     /* micro-steps over all replicas for the epoch interval */
#define MAX_REPLICAS 100
#define EMPIRICAL_MIN 30     /* replicas needed to read quantiles off the sample */
#define BATCH_MEANS 20       /* blocks of the batch-means variance estimate */
#define STARTUP_STEPS 512    /* steps simulated to measure persistent workers' first start-up */
#define DONE_EPS_S 1e-12     /* remaining work below this is done */

/* ---- the batches of one replica, in sampler order ----------------------------------------- */
typedef struct batches {
    int *len;      /* padded length */
    double *cpu;   /* CPU seconds to build (one core) */
    double *pin;   /* pinning copy seconds */
} batches;

/* ---- the step model at a padded length ---------------------------------------------------- */
typedef struct interp_set {
    gsl_interp *fn[ECI_S_MECHANICS];
    gsl_interp_accel *acc;
} interp_set;

/* Series k of the step model at padded length len (clamped to the knots). */
static inline double series_at(const eci_pipe_in *in, const gsl_interp *fn, gsl_interp_accel *acc, int k, double len)
{
    if (in->n_knots < 2)
        return in->knot_val[k][0];
    double lo = in->knot_len[0], hi = in->knot_len[in->n_knots - 1], y;
    len = len < lo ? lo : len > hi ? hi : len;
    if (gsl_interp_eval_e(fn, in->knot_len, in->knot_val[k], len, acc, &y) != GSL_SUCCESS)
        return in->knot_val[k][0];
    return y;
}

/* ---- pipeline_draw.c ---------------------------------------------------------------------- */
/* What every run checks of its input. */
EC_INTERNAL int eci_pipe_check(ec_ctx *ctx, const eci_pipe_in *in, long n);
/* The n batches of a run in sampler order, from stream `stream` of in->seed (context scratch). */
EC_INTERNAL int eci_pipe_draw(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, batches *bt);

/* ---- pipeline_stats.c --------------------------------------------------------------------- */
/* A run's summary from its step ends and the loop's waits (stall_at[j]: for batch j). */
EC_INTERNAL void eci_pipe_summary(const double *ends, const double *stall_at, long n, long warm, long extend_to,
                                  double step, eci_pipe_run_out *out);
/* Steps simulated per replica, and replicas, for an epoch of in->steps (0: unknown). */
EC_INTERNAL void eci_pipe_plan(const eci_pipe_in *in, long *n, int *reps);
/* Mean and p10/p50/p90 of the epoch from the replicas' totals (sorted in place). */
EC_INTERNAL void eci_pipe_spread(double *totals, int reps, double var_s2, eci_pipe_epoch *out);

/* ---- pipeline.c: the events --------------------------------------------------------------- */
/* eci_pipe_run, with the batch-means variance of a run of `extend_to` >= n steps whose steps
 * after the n simulated ones take `step` each. */
EC_INTERNAL int eci_pipe_run_extended(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, double *hist,
                                      long extend_to, double step, eci_pipe_run_out *out);

/* ---- pipeline_closed.c: the recurrence and the closed forms ------------------------------- */
/* Persistent workers' start-up, once per run (0 when they are not persistent). */
EC_INTERNAL int eci_pipe_startup_once(ec_ctx *ctx, const eci_pipe_in *in, long m, int recurrence, double *out);
/* 1 and *rc when a closed form applied, 0 when the epoch must be simulated. */
EC_INTERNAL int eci_pipe_closed_form(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out, int *rc);

#endif /* EC_PIPELINE_SIM_H */
