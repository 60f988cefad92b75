/*
 * warnings.h: a prediction's warnings (warnings.c), private to sim/: said in res's bits and
 * text, not refused.
 */
#ifndef EC_SIM_WARNINGS_H
#define EC_SIM_WARNINGS_H

#include "model/compute.h"
#include "model/layout.h"

/* Set bit and append text unless that text is already there: two different warnings under
 * one bit (keys ignored by the model and by the configuration) are both said. */
EC_INTERNAL void eci_warn_add(ec_result *res, unsigned bit, const char *text);
/* precision=fp32 on a GPU where PyTorch's defaults run convolutions in TF32 (the step's). */
EC_INTERNAL void eci_warn_fp32_convs(const ec_ctx *ctx, const ec_config *cfg, const eci_gpu *g,
                                     const eci_workload *wl, ec_result *res);
/* The prediction's own warnings once its figures are known: memory, GPU, lengths, keys with no
 * effect, the network. */
EC_INTERNAL void eci_warn_all(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res);
/* The model error (log sd) that widens the prediction's p10-p90: the fit's held-out GPU error
 * where it has calibration runs on the GPU's architecture for the unit its matmuls run on and
 * for its memory system, else the leave-one-architecture-out error (of host-bound predictions
 * when the prediction's gpu_util_frac is below constants.csv host_bound_util_frac: known only
 * once the epoch is assembled), said in res's warnings
 * (EC_WARN_UNCALIBRATED; res NULL: not said); for more than one GPU, with the communication
 * part of the path its gradients take (eci_comm_path, eci_params_comm_sd) in quadrature. */
EC_INTERNAL double eci_calibration_sd(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *c,
                                      double gpu_util_frac, ec_result *res);

#endif /* EC_SIM_WARNINGS_H */
