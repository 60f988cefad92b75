/*
 * epoch.h: the epoch around the step model (epoch.c), private to sim/: the inputs of the
 * epoch's simulation (pipeline.c), and the step, epoch and run assembled from what it gives.
 */
#ifndef EC_SIM_EPOCH_H
#define EC_SIM_EPOCH_H

#include "catalog/params.h"
#include "model/layout.h"
#include "sim/pipeline.h"

/* eci_pipe_prepare (predict.h), also handing back cfg resolved (*resolved, as eci_resolve
 * gives it) and the calibration it used (*calib_out: fixed, the context's, or the priors in *buf). */
EC_INTERNAL int eci_epoch_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, eci_pipe_in *in,
                                  ec_result *top, eci_lengths **lengths, eci_resolved *resolved, eci_params *buf,
                                  const eci_params **calib_out);
/* The step (means over the padded lengths drawn), the epoch (evaluation and checkpoints
 * included) and the run (epochs and one-time costs) from the simulated epoch ep of in, and
 * torch.compile's compilations: res's figures but memory, warnings, cost and scaling. */
EC_INTERNAL void eci_epoch_assemble(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_lengths *l,
                                    const eci_pipe_in *in, const eci_pipe_epoch *ep, ec_result *res);

#endif /* EC_SIM_EPOCH_H */
