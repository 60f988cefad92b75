/*
 * step.h: one training step's model (step.c) and the pipeline-parallel step over its stages
 * (stages.c), private to sim/: what the epoch (epoch.c) and the prediction (predict.c) price.
 */
#ifndef EC_SIM_STEP_H
#define EC_SIM_STEP_H

#include "sim/setup.h"

/* One optimizer step at padded length seq, without the input pipeline (pipeline.c adds it):
 * fills res's step time, breakdown, kernel counts, FLOPs and memory; gpu_scale multiplies
 * every compute kernel (gpu_step_s calibrates it); *host_s is the host time of the step.
 * lc: the layout's links when worked out already (a pipeline's stages), else NULL.  Sets
 * rp's input_bytes, tokens, micro_s and stage_input_bytes. */
EC_INTERNAL int eci_step_model(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib,
                               double seq, double gpu_scale, const layout_comm *lc, ec_result *res, double *host_s);
/* One evaluation batch per GPU, forward only: its time in *out_s. */
EC_INTERNAL int eci_step_eval(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *calib,
                              double seq, double gpu_scale, double *out_s);
/* eci_step_model, or under pipeline parallelism (rp->pp > 1) the pipeline's step over its stages. */
EC_INTERNAL int eci_stages_model(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib,
                                 double seq, double gpu_scale, ec_result *res, double *host_s);

#endif /* EC_SIM_STEP_H */
