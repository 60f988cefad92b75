/*
 * predict.h: what ec_predict resolves from a config before pricing it (predict.c), shared
 * with the other entry points that predict (max_batch, validation).
 */
#ifndef EC_PREDICT_H
#define EC_PREDICT_H

#include "compute.h"
#include "pipeline.h"

typedef struct eci_resolved {
    const eci_gpu *gpu;
    const eci_host *host;
    const eci_net *net;         /* NULL when gpu_step_s stands in for the model */
    int task;
    int seq, image_size;
    int target_seq;             /* decoder tokens of an encoder-decoder (target_len, else seq) */
    int text;                   /* samples are token sequences (tokenizer, lengths, padding apply) */
    ec_strategy strategy;
    int nodes;
    const char *topology;
    /* The parallel layout (layout.c): num_gpus = dp x tp x pp x cp; ep divides dp. */
    int dp, tp, pp, cp, ep, sp;
    int per_node;               /* GPUs per node */
    const eci_fabric *fabric;   /* network= preset, NULL without one */
    double node_net_bytes_per_s, gpu_net_bytes_per_s; /* inter-node rate per node and per GPU's NIC */
    double input_bytes;         /* one micro-batch's input tensors (set by the step model) */
    double tokens;              /* tokens (or images) of one micro-batch on one GPU (set by the step model) */
    /* The pipeline stage the step model prices (stage_hi = 0: the whole network) and the
     * micro-batches whose activations it holds at once (its schedule's warm-up). */
    int stage_lo, stage_hi;
    double in_flight;
    double micro_s;             /* set by the step model: one steady micro-batch, forward and backward */
    double stage_input_bytes;   /* set by the step model: the activation entering its first block */
} eci_resolved;

/* ec_predict with explicit calibration parameters (NULL: the context's current ones). */
EC_INTERNAL int eci_predict(ec_ctx *ctx, const ec_config *cfg, const eci_calib *calib, ec_result *res);
/* ec_predict, and when it succeeds ec_config_resolve of cfg into resolved (not cfg) from the
 * prediction's own resolution: a sweep's rows carry both without resolving twice. */
EC_INTERNAL int eci_predict_resolved(ec_ctx *ctx, const ec_config *cfg, ec_result *res, ec_config *resolved);
EC_INTERNAL int eci_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r);
/* The parallel layout of cfg into r (r's gpu, net and strategy set): layout.c. */
EC_INTERNAL int eci_layout_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r);
/* Everything the epoch simulation needs from a config: the step model at the padded-length
 * knots and the loader settings (in), the step at the longest knot (top: memory, warnings)
 * and the parsed lengths= (*lengths, freed by the caller with eci_lengths_free; in points
 * into it).  fixed: calibration parameters, NULL for the context's current ones. */
EC_INTERNAL int eci_pipe_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_calib *fixed, eci_pipe_in *in,
                                 ec_result *top, eci_lengths **lengths);

#endif /* EC_PREDICT_H */
