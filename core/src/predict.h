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
    double input_bytes;         /* one micro-batch's input tensors (set by the step model) */
} eci_resolved;

/* ec_predict with explicit calibration parameters (NULL: the context's current ones). */
EC_INTERNAL int eci_predict(ec_ctx *ctx, const ec_config *cfg, const eci_calib *calib, ec_result *res);
EC_INTERNAL int eci_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r);
/* Everything the epoch simulation needs from a config: the step model at the padded-length
 * knots and the loader settings (in), the step at the longest knot (top: memory, warnings)
 * and the parsed lengths= (*lengths, freed by the caller with eci_lengths_free; in points
 * into it).  fixed: calibration parameters, NULL for the context's current ones. */
EC_INTERNAL int eci_pipe_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_calib *fixed, eci_pipe_in *in,
                                 ec_result *top, eci_lengths **lengths);

#endif /* EC_PREDICT_H */
