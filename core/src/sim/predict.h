/*
 * predict.h: a whole prediction (predict.c) for the entry points above the simulation
 * (sweeps, searches, calibration, validation): with explicit fitted parameters, with its
 * resolved config, and the inputs of the epoch simulation (epoch.c).
 */
#ifndef EC_PREDICT_H
#define EC_PREDICT_H

#include "model/compute.h"
#include "model/layout.h"
#include "sim/pipeline.h"


/* ec_predict with explicit calibration parameters (NULL: the context's current ones). */
EC_INTERNAL int eci_predict(ec_ctx *ctx, const ec_config *cfg, const eci_params *calib, ec_result *res);
/* ec_predict, and when it succeeds ec_config_resolve of cfg into resolved (not cfg) from the
 * prediction's own resolution: a sweep's rows carry both without resolving twice. */
EC_INTERNAL int eci_predict_resolved(ec_ctx *ctx, const ec_config *cfg, ec_result *res, ec_config *resolved);
/* Everything the epoch simulation needs from a config: the step model at the padded-length
 * knots and the loader settings (in), the step at the longest knot (top: memory, warnings)
 * and the parsed lengths= (*lengths, freed by the caller with eci_lengths_free; in points
 * into it).  fixed: calibration parameters, NULL for the context's current ones. */
EC_INTERNAL int eci_pipe_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, eci_pipe_in *in,
                                 ec_result *top, eci_lengths **lengths);

/* Free the cache of one-GPU references (predict.c; registered with eci_ctx_on_free). */
EC_INTERNAL void eci_predict_ctx_free(ec_ctx *ctx);

#endif /* EC_PREDICT_H */
