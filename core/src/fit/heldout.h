/*
 * fit/heldout.h: the sds that widen a prediction's p10-p90, from the log errors of runs held out
 * of the fit (heldout.c).  calibrate.c's cross-validation records one eci_heldout per run it
 * predicts; the profile's error_log_sd rows are read from them.
 */
#ifndef EC_HELDOUT_H
#define EC_HELDOUT_H

#include "base/base.h"

/* One held-out run's error, with what selects it into an sd. */
typedef struct eci_heldout {
    double abs_log; /* |log(predicted / measured)| */
    size_t group;   /* its sample: the GPU or architecture left out of its fold (equal within one) */
    int host_bound; /* its fold predicted it host-bound (constants.csv host_bound_util_frac) */
    int path;       /* EC_COMM_* of a multi-GPU run's gradients, -1 on one GPU */
    int unseen;     /* its fold's fit had no run of its architecture (EC_WARN_UNCALIBRATED) */
} eci_heldout;

/* Which errors an sd rests on: path -1 for single-GPU runs, else that path's multi-GPU runs;
 * host_bound and unseen -1 for either; without a group left out (ECI_HELDOUT_NONE: none). */
typedef struct eci_heldout_pick {
    int path, host_bound, unseen;
    size_t without;
} eci_heldout_pick;
#define ECI_HELDOUT_NONE ((size_t)-1)

/* How the picked errors are weighed: each run alike, or each group alike (the error of the next
 * group: one more GPU or architecture) with the sd then widened for the number of groups. */
enum { ECI_HELDOUT_PER_RUN, ECI_HELDOUT_PER_GROUP };

/* *sd: the log error sd whose p50 x exp(-+z_0.9 sd) holds 0.8 of the picked errors by weight
 * (their weighted 0.8 quantile over z_0.9); per group, times t_0.9,k / z_0.9 for k groups
 * (docs/accuracy.md, "The unseen-architecture sd").  *groups: k (0 and *sd 0 when none). */
EC_INTERNAL int eci_heldout_sd(ec_ctx *ctx, const eci_heldout *err, size_t n, const eci_heldout_pick *pick,
                               int weigh, double *sd, size_t *groups);

/* t_0.9,k / z_0.9: how much an sd estimated from k groups (k >= 1) is widened for their number. */
EC_INTERNAL double eci_heldout_widen(size_t groups);

#endif
