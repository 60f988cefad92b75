/*
 * pipeline_epoch.c: the input pipeline's epoch (modeling.md 5.4), eci_pipe_simulate: a closed
 * form where one applies (pipeline_closed.c), else replicas of the event simulation
 * (pipeline.c) over every step, extrapolated past MAX_SIM_STEPS, with every series of the
 * step model averaged over the padded lengths the runs drew.
 */
#include "sim/pipeline_sim.h"

#include <string.h>

/* ---- the epoch: replicas, extrapolation, interval ------------------------------------------ */
/* Every series averaged over the padded lengths in hist. */
static int average_series(ec_ctx *ctx, const eci_pipe_in *in, const double *hist, eci_pipe_epoch *out)
{
    gsl_interp *fn = NULL;
    gsl_interp_accel *acc = NULL;
    if (in->n_knots >= 2) {
        fn = gsl_interp_alloc(gsl_interp_linear, in->n_knots);
        acc = gsl_interp_accel_alloc();
        if (fn == NULL || acc == NULL) {
            if (fn != NULL)
                gsl_interp_free(fn);
            if (acc != NULL)
                gsl_interp_accel_free(acc);
            return eci_error(ctx, EC_ENOMEM, "pipeline: out of memory");
        }
    }
    double count = 0, sum = 0, sq = 0;
    for (int L = 1; L <= in->seq; L++)
        if (hist[L - 1] > 0) {
            count += hist[L - 1];
            sum += hist[L - 1] * L;
            sq += hist[L - 1] * (double)L * L;
            out->distinct_lengths++;
        }
    for (size_t k = 0; k < in->n_series; k++) {
        double acc_v = 0;
        if (fn != NULL)
            gsl_interp_init(fn, in->knot_len, in->knot_val[k], in->n_knots);
        for (int L = 1; L <= in->seq; L++)
            if (hist[L - 1] > 0)
                acc_v += hist[L - 1] * series_at(in, fn, acc, (int)k, L);
        out->mean_s[k] = count > 0 ? acc_v / count : 0;
    }
    out->padded_len = count > 0 ? sum / count : 0;
    out->padded_sq = count > 0 ? sq / count : 0;
    if (fn != NULL) {
        gsl_interp_free(fn);
        gsl_interp_accel_free(acc);
    }
    return EC_OK;
}

/* Every step simulated: replicas of eci_pipe_run, extrapolated past MAX_SIM_STEPS. */
static int simulate_all(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out)
{
    long target = in->steps, n;
    int reps;
    eci_pipe_plan(in, &n, &reps);
    double *hist = eci_scratch(ctx, ECI_SCRATCH_SIM_HIST, (size_t)in->seq, sizeof *hist);
    double *totals = eci_scratch(ctx, ECI_SCRATCH_SIM_TOTALS, (size_t)reps, sizeof *totals);
    if (hist == NULL || totals == NULL)
        return EC_ENOMEM;
    eci_pipe_in quiet = *in;
    quiet.trace = NULL;
    double interval = 0, stall = 0, busy = 0, var = 0;
    int rc = EC_OK;
    for (int r = 0; r < reps && rc == EC_OK; r++) {
        eci_pipe_run_out o;
        if ((rc = eci_pipe_run(ctx, &quiet, n, (uint64_t)r, hist, &o)) != EC_OK)
            break;
        long after = n - 1 - o.warm_step; /* steady steps */
        double iv = after > 0 ? (o.total_s - o.warm_end_s) / after : o.total_s;
        interval += iv / reps;
        stall += (after > 0 ? o.stall_s / after : 0) / reps;
        busy += o.busy_s / n / reps;
        totals[r] = o.total_s + (double)(target - n) * iv;
        var += o.var_sum_s2 * (target > n ? (double)target / n : 1.0) / reps;
    }
    if (rc == EC_OK)
        rc = average_series(ctx, in, hist, out);
    if (rc == EC_OK && target > 0)
        rc = eci_pipe_startup_once(ctx, in, n < STARTUP_STEPS ? n : STARTUP_STEPS, 0, &out->startup_once_s);
    if (rc == EC_OK) {
        out->step_s = interval;
        out->stall_s = stall;
        out->busy_s = busy;
        out->simulated_steps = n;
        out->replicas = reps;
        if (target > 0)
            eci_pipe_spread(totals, reps, var, out);
    }
    return rc;
}

int eci_pipe_simulate(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (eci_pipe_closed_form(ctx, in, out, &rc))
        return rc;
    return simulate_all(ctx, in, out);
}
