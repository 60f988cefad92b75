/*
 * heldout.c: the sds that widen a prediction's p10-p90 (the profile's error_log_sd rows), from
 * the log errors of runs held out of the fit, which calibrate.c's cross-validation records.
 *
 * The interval is p50 x exp(-+z_0.9 sd), so the sd that makes it hold 80% of the held-out
 * errors is their 0.8 quantile of |log(predicted / measured)| over z_0.9, not their root mean
 * square: the held-out errors are far from normal (a few runs, or one architecture, many times
 * the others' error), and z_0.9 x the rms then gives an interval that holds nearly all of them
 * (docs/accuracy.md, "The interval is a quantile").  Per group, every GPU or architecture left
 * out weighs the same whatever its run count (the error of the next one), and the k samples
 * widen the sd by Student's t_0.9,k / z_0.9 as before.
 */
#include "fit/heldout.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

/* The share of the weight below which the picked errors must lie: the p10-p90's 80%. */
#define INTERVAL_MASS 0.8
/* Round-off of summing 1 / n_g weights: a cumulated 0.8 x k may come out just below it. */
#define MASS_ROUNDOFF 1e-12

typedef struct weighed {
    double abs_log, weight;
    size_t group;
} weighed;

static int by_group(const void *a, const void *b)
{
    size_t x = ((const weighed *)a)->group, y = ((const weighed *)b)->group;
    return (x > y) - (x < y);
}

static int by_error(const void *a, const void *b)
{
    double x = ((const weighed *)a)->abs_log, y = ((const weighed *)b)->abs_log;
    return (x > y) - (x < y);
}

static int picked(const eci_heldout *e, const eci_heldout_pick *p)
{
    return (p->path < 0 ? e->path < 0 : e->path == p->path) && (p->host_bound < 0 || e->host_bound == p->host_bound) &&
           (p->unseen < 0 || e->unseen == p->unseen) && e->group != p->without;
}

int eci_heldout_sd(ec_ctx *ctx, const eci_heldout *err, size_t n, const eci_heldout_pick *pick, int weigh, double *sd,
                   size_t *groups)
{
    *sd = 0;
    *groups = 0;
    weighed *w = eci_calloc(ctx, n ? n : 1, sizeof *w);
    if (w == NULL)
        return EC_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (picked(&err[i], pick))
            w[m++] = (weighed){err[i].abs_log, 0, err[i].group};
    /* per group, each group's runs share a weight of 1 (k in all); else each run weighs 1 (m in all) */
    qsort(w, m, sizeof *w, by_group);
    size_t k = 0;
    for (size_t i = 0, j; i < m; i = j, k++) {
        for (j = i; j < m && w[j].group == w[i].group; j++)
            ;
        for (size_t q = i; q < j; q++)
            w[q].weight = weigh == ECI_HELDOUT_PER_GROUP ? 1.0 / (double)(j - i) : 1.0;
    }
    double total = weigh == ECI_HELDOUT_PER_GROUP ? (double)k : (double)m;
    /* the weighted 0.8 quantile: the smallest error with 0.8 of the weight at or below it */
    qsort(w, m, sizeof *w, by_error);
    double mass = 0, q80 = 0;
    for (size_t i = 0; i < m && mass < (INTERVAL_MASS - MASS_ROUNDOFF) * total; i++) {
        mass += w[i].weight;
        q80 = w[i].abs_log;
    }
    eci_free(ctx, w, (n ? n : 1) * sizeof *w);
    if (m == 0)
        return EC_OK;
    *groups = k;
    *sd = q80 / ECI_NORMAL_P90;
    if (weigh == ECI_HELDOUT_PER_GROUP)
        *sd *= eci_heldout_widen(k);
    return EC_OK;
}

double eci_heldout_widen(size_t groups)
{
    return gsl_cdf_tdist_Pinv(0.9, (double)groups) / ECI_NORMAL_P90;
}
