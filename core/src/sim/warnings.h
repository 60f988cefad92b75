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
EC_INTERNAL void eci_warn_all(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res);

#endif /* EC_SIM_WARNINGS_H */
