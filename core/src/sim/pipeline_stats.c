/*
 * pipeline_stats.c: the statistics of the input pipeline's runs and epochs (modeling.md 5.4):
 * a run's summary from its step ends and waits, with the batch-means variance of its total;
 * how many steps and replicas an epoch simulates; the epoch's mean and interval from the
 * replicas' totals.  The runs come from the events (pipeline.c) or the recurrence
 * (pipeline_closed.c).
 */
#include "sim/pipeline_sim.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>

/* End of step j of a run that simulated m steps and continues one step per `step` after them
 * (closed_workers: every step past the simulated ones takes T). */
static double end_at(const double *ends, long m, double step, long j)
{
    return j < m ? ends[j] : ends[m - 1] + (double)(j - m + 1) * step;
}

/* Var(sum of the step durations) by batch means: m blocks, m x the variance of block sums,
 * over n steps of which the first m were simulated. */
static double batch_means_var(const double *ends, long m, double step, long n)
{
    if (n < 2 * BATCH_MEANS + 1)
        return 0;
    long k = (n - 1) / BATCH_MEANS; /* block b: the durations ending at ends[b k + 1 .. (b + 1) k] */
    double sums[BATCH_MEANS];
    for (int b = 0; b < BATCH_MEANS; b++)
        sums[b] = end_at(ends, m, step, (b + 1) * k) - end_at(ends, m, step, b * k);
    /* scale from blocks of k steps to the n - 1 durations after the first */
    return gsl_stats_variance(sums, 1, BATCH_MEANS) * (double)(n - 1) / k;
}

/* A run's summary from its step ends and the loop's waits (stall_at[j]: for batch j): the
 * steady state from the first batch taken with every worker up (warm), when two steps follow
 * it; the batch-means variance of a run of `extend_to` >= n steps whose steps after the n
 * simulated ones take `step` each. */
void eci_pipe_summary(const double *ends, const double *stall_at, long n, long warm, long extend_to, double step,
                      eci_pipe_run_out *out)
{
    long w0 = warm >= 0 && warm + 2 < n ? warm : 0;
    out->steps = n;
    out->total_s = ends[n - 1];
    out->first_end_s = ends[0];
    out->warm_step = w0;
    out->warm_end_s = ends[w0];
    for (long j = w0 + 1; j < n; j++) /* the wait for the first batch is the pipeline fill */
        out->stall_s += stall_at[j];
    long ext = extend_to > n ? extend_to : n;
    out->var_sum_s2 = batch_means_var(ends + w0, n - w0, step, ext - w0) * (ext - 1) / (ext - w0 > 1 ? ext - w0 - 1 : 1);
}

/* Steps simulated per replica, and replicas, for an epoch of in->steps (0: unknown). */
void eci_pipe_plan(const eci_pipe_in *in, long *n, int *reps)
{
    long target = in->steps;
    *n = target > 0 ? (target < MAX_SIM_STEPS ? target : MAX_SIM_STEPS) : STEADY_STEPS;
    *reps = 1;
    if (target > 0) {
        long r = STEP_BUDGET / *n;
        *reps = r < 1 ? 1 : r > MAX_REPLICAS ? MAX_REPLICAS : (int)r;
    }
}

/* Mean and p10/p50/p90 of the epoch from the replicas' totals: read off the sample when there
 * are enough replicas, else a sum of many steps, normal with variance var_s2. */
void eci_pipe_spread(double *totals, int reps, double var_s2, eci_pipe_epoch *out)
{
    out->epoch_s = gsl_stats_mean(totals, 1, (size_t)reps);
    if (reps >= EMPIRICAL_MIN) {
        gsl_sort(totals, 1, (size_t)reps);
        out->p10_s = gsl_stats_quantile_from_sorted_data(totals, 1, (size_t)reps, 0.1);
        out->p50_s = gsl_stats_quantile_from_sorted_data(totals, 1, (size_t)reps, 0.5);
        out->p90_s = gsl_stats_quantile_from_sorted_data(totals, 1, (size_t)reps, 0.9);
    } else {
        double half = ECI_NORMAL_P90 * sqrt(var_s2 > 0 ? var_s2 : 0);
        out->p10_s = out->epoch_s - half;
        out->p50_s = out->epoch_s;
        out->p90_s = out->epoch_s + half;
    }
}

