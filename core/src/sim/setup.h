/*
 * setup.h: what one step's walk is set up from (setup.c), private to sim/: the layout's links
 * and groups (comm.c), sharded data parallelism's schedule (shard.c), bytes per element, the
 * collectives inside the ops, the host's dispatch costs under torch.compile, the shape of a
 * micro-step (workload.c's input), and a config resolved with its calibration.
 */
#ifndef EC_SIM_SETUP_H
#define EC_SIM_SETUP_H

#include "catalog/params.h"
#include "model/layout.h"
#include "sim/walk.h"

/* ---- the layout's communication ------------------------------------------------------------ */
typedef struct layout_comm {
    eci_comm comm;              /* every GPU of the job (n = 1: none) */
    eci_group groups[ECI_N_GROUPS]; /* tensor-, context-, expert-parallel groups of the ops' collectives */
    eci_group dp;               /* gradient reduction: the dp x cp ranks holding the same shard (stride tp) */
    eci_group edp;              /* the routed experts' gradient reduction: the expert data-parallel ranks
                                   (edp of them, stride etp x ep) */
    eci_group pp;               /* pipeline neighbours */
    eci_group zero_shard;       /* ZeRO-1/2: the ranks one copy of the optimizer states is sharded over
                                   (zero_shard_size; else dp) */
    eci_group zero_replica;     /* the ranks holding the same ZeRO shard (n = 1: none) */
    int dp_is_job;              /* every GPU a data-parallel replica on the default network: DDP keeps the
                                   job's ring (comm), as calibrated */
    double net_bytes_per_s;     /* one GPU's NIC */
    double net_frac;            /* collective bus bandwidth over it */
    int domain;                 /* GPUs that reach each other over NVLink (a node, or an NVL72 rack) */
} layout_comm;

/* The job's links and the groups of its layout (Megatron's rank order: tensor parallel
 * innermost, then context, data, pipeline; the expert layers etp, ep, edp within a stage). */
EC_INTERNAL int eci_setup_layout_comm(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r,
                                      const eci_params *calib, layout_comm *lc);
/* The rates of the ops' collectives: the layout's links and groups (none on one GPU). */
EC_INTERNAL void eci_setup_rates(const layout_comm *lc, eci_rates *rates);
/* The rates of cfg's kernels on the GPU (model/compute.h): the fit's scales, fused attention (a
 * batch with a mask, model/workload.h unmasked, takes SDPA's masked pick), Transformer
 * Engine's FP8 casts (the weights' once per `casts` micro-batches) and its userbuffers (1 + the
 * row of models/tp_overlap.csv; layout.c checked the id). */
EC_INTERNAL void eci_setup_kernel_rates(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r,
                                        const eci_params *calib, int unmasked, int casts, eci_rates *rates);
/* Sharded data parallelism that gathers per unit (FSDP full/hybrid/grad-op sharding, ZeRO-3):
 * the schedule's groups and dtypes.  Returns 0 (and leaves s alone) for any other strategy. */
EC_INTERNAL int eci_setup_shard(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r,
                                const layout_comm *lc, eci_shard *s);
/* Ranks the parameters, gradients and optimizer states are split over (memory, optimizer). */
EC_INTERNAL void eci_setup_shard_degrees(const ec_config *cfg, const eci_resolved *r, double *w, double *g,
                                         double *o);

/* Bytes per element of a collective of the compute dtype (a 16-bit precision gathers and
 * reduces 16-bit values), of the gradients reduced, and of the parameters held. */
static inline double compute_elem_bytes(int precision)
{
    return precision == EC_PREC_FP32 || precision == EC_PREC_TF32 ? 4.0 : 2.0;
}

EC_INTERNAL double eci_setup_reduce_elem_bytes(const ec_config *cfg, const eci_resolved *r, double param_bytes);

/* Exposed time of the ops' collectives on the compute stream by group, per micro-step: the
 * forward's (twice for checkpointed blocks, whose forward runs again in backward) and the
 * backward's.  They are busy GPU time that the breakdown moves from forward/backward to comm. */
EC_INTERNAL void eci_setup_inline_comm(const eci_workload *wl, const eci_op_cost_t *cost, const eci_rates *rates,
                                       int checkpointing, double *fwd_s, double *bwd_s, double *group_s,
                                       double *launched_s);
/* Parameters outside every repeated block (embeddings, final norm, head): FSDP's root unit;
 * *trained: those of them that are trained. */
EC_INTERNAL double eci_setup_root_params(const eci_workload *wl, double *trained);
/* fp8_params as it applies: Transformer Engine's FP8 parameters (precision=amp_fp8, kernels=te)
 * beside the fp32 main copy of a sharded optimizer (strategy=zero or fsdp); 0 elsewhere (the
 * key is then named as ignored, warnings.c). */
EC_INTERNAL int eci_setup_fp8_params(const ec_config *cfg, const eci_resolved *r);
/* act_offload_layers as it applies: the layers CPU offloading moves (eci_workload_offloaded_layers), 0
 * under checkpointing or pipeline parallelism, which Megatron-Core refuses with it (the key is then
 * named as ignored, warnings.c). */
EC_INTERNAL int eci_setup_act_offload(const ec_config *cfg, const eci_resolved *r, const eci_workload *wl);
/* Whether Megatron-Core would run act_offload_layers with this configuration at all. */
EC_INTERNAL int eci_setup_act_offload_allowed(const ec_config *cfg, const eci_resolved *r);
/* The time per micro-step the GPU waits for CPU offloading's copies, wait_s[0] the forward's (to the
 * host), wait_s[1] the backward's (back): each of `layers` copies of one layer's saved bytes over
 * the host link at link_bytes_per_s, less the next layer's work in that pass, which it runs under. */
EC_INTERNAL void eci_setup_offload_wait_s(const eci_workload *wl, const eci_op_cost_t *cost, int layers,
                                          double link_bytes_per_s, double wait_s[2]);
/* LoRA: bytes per frozen base parameter as stored (setup.c's base_quant_bytes and the rest). */
EC_INTERNAL double eci_setup_frozen_elem_bytes(const ec_ctx *ctx, const ec_config *cfg, const eci_workload *wl,
                                               double param_bytes);

/* torch.compile: the model's kernels are launched by Inductor's generated code; with CUDA
 * graphs (reduce-overhead, max-autotune, or graphs the script captured itself: cuda_graphs=1)
 * one replay per pass launches all of them. */
static inline int cuda_graphs(const ec_config *cfg)
{
    return cfg->compile == EC_COMPILE_REDUCE_OVERHEAD || cfg->compile == EC_COMPILE_MAX_AUTOTUNE || cfg->cuda_graphs;
}

/* The dispatch costs of the model's own passes: p's eager ones, Inductor's launches under
 * torch.compile, none but a replay (*call_s, once per pass) under CUDA graphs. */
EC_INTERNAL void eci_setup_model_dispatch(const ec_ctx *ctx, const ec_config *cfg, const eci_host *host, const plan *p,
                                          double *fwd_s, double *bwd_s, double *op_s, double *call_s);
/* The shape of one micro-step of cfg at padded length seq and a batch per GPU. */
EC_INTERNAL void eci_setup_shape(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, double seq,
                                 double batch, eci_shape *shape);
/* cfg resolved (names, layout, checks) and the calibration that applies to it. */
EC_INTERNAL int eci_setup_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r, eci_params *calib);

#endif /* EC_SIM_SETUP_H */
