/*
 * model/layout.h: a config resolved into what it names and implies (resolve.c) and its
 * parallel layout (layout.c): the GPU, host and network, task and shapes, strategy, the data,
 * tensor, pipeline, context and expert degrees, nodes and the inter-node network.
 */
#ifndef EC_LAYOUT_H
#define EC_LAYOUT_H

#include "model/net.h"

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
    /* The parallel layout (layout.c): num_gpus = dp x tp x pp x cp; the expert layers' own layout
     * (Megatron-Core's parallel folding) etp x ep x edp = tp x cp x dp, etp = tp unless given. */
    int dp, tp, pp, cp, ep, sp, etp, edp;
    int per_node;               /* GPUs per node */
    const eci_fabric *fabric;   /* network= preset, or the GPU's reference system's across nodes; NULL: none */
    int fabric_defaulted;       /* fabric is the reference system's (no network= given) */
    double node_net_bytes_per_s, gpu_net_bytes_per_s; /* inter-node rate per node and per GPU's NIC */
    double input_bytes;         /* one micro-batch's input tensors (set by the step model) */
    double tokens;              /* tokens (or images) of one micro-batch on one GPU (set by the step model) */
    /* The pipeline stage the step model prices (stage_hi = 0: the whole network) and the
     * micro-batches whose activations it holds at once (its schedule's warm-up). */
    int stage_lo, stage_hi;
    double in_flight;
    int micro_wanted;           /* the caller reads micro_s (stages.c): the step model then walks it even
                                   where the step does not (DDP with one or two micro-steps) */
    double micro_s;             /* set by the step model: one steady micro-batch, forward and backward */
    double stage_input_bytes;   /* set by the step model: the activation entering its first block */
} eci_resolved;

/* The routed experts' parameters are held by 1 / (ep x etp / tp) of the data-parallel ranks that
 * hold a dense parameter (dp x cp of them; the expert data-parallel group is edp = tp x cp x dp /
 * (ep x etp)): what divides those ranks' count for an expert's state. */
static inline double eci_expert_split(const eci_resolved *r)
{
    return (double)r->ep * r->etp / r->tp;
}

/* Resolve cfg into r: find its ids, apply its defaults, check it, lay it out (resolve.c). */
EC_INTERNAL int eci_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r);
/* cfg with what r derived from it (the GPU's and host's ids, strategy, nodes, topology, the
 * network's defaults) into out, which must not be cfg: r's names may point into cfg. */
EC_INTERNAL void eci_resolved_config(const ec_config *cfg, const eci_resolved *r, ec_config *out);
/* The parallel layout of cfg into r (r's gpu, net and strategy set): layout.c. */
EC_INTERNAL int eci_layout_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r);
/* The repeated layers [lo, hi) pipeline stage s of pp holds, of `layers`, as cfg's pp_split
 * splits them (the layers alone: s x layers / pp on; Megatron-Core's embedding and loss counted). */
EC_INTERNAL void eci_pp_stage_range(const ec_config *cfg, int layers, int pp, int s, int *lo, int *hi);
/* pp_split's value by name ("layers", "embedding_loss", ...). */
EC_INTERNAL const char *eci_pp_split_name(int split);

#endif /* EC_LAYOUT_H */
