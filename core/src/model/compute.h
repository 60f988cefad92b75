/*
 * compute.h: per-op GPU time (compute.c).  eci_rates holds what one GPU gives one
 * precision: the matmul rate of the unit that really runs it, the streaming bandwidth,
 * the kernel floor and the tile shapes; gemm_scale and mem_scale are the calibration
 * hooks (1.0 unless a fitted profile says otherwise).
 */
#ifndef EC_COMPUTE_H
#define EC_COMPUTE_H

#include "catalog/params.h"
#include "model/comm.h"
#include "model/workload.h"

#include <math.h>

typedef struct eci_rates {
    double gemm_peak_flop_per_s;  /* dense peak of the unit used (for MFU) */
    double gemm_flop_per_s;       /* peak x measured large-GEMM efficiency */
    double gemm_in_bytes;         /* bytes per GEMM operand element */
    double mem_bytes_per_s;       /* bandwidth x measured streaming efficiency */
    double mem_overhead_s;        /* a memory-bound kernel's start-up and tail (membw.csv) */
    double floor_s;               /* GPU-side time of an empty kernel */
    double sm_count;
    double tile_large_m, tile_large_n, tile_small_m, tile_small_n, tile_small_eff;
    double k_half, conv_eff, attn_eff;
    double gemm_fixed_s;          /* a GEMM kernel's start-up and tail, added to its math or memory time (gemm.csv) */
    int tensor_cores;             /* the matmul unit is a tensor core */
    double fp8_flop_per_s;        /* precision=amp_fp8: FP8 peak x measured efficiency for the GEMMs
                                     Transformer Engine runs in FP8 (eci_op.fp8); 0 otherwise */
    double gemm_scale, mem_scale; /* calibration factors */
    /* Fused attention (issue 39): the dense peak of the unit its kernel runs on (16-bit tensor
     * cores; fp32 inputs: 3xTF32 on Ampere and later, CUDA cores before) and the kernel's
     * achieved fraction of it by pass (0 forward, 1 backward) and causal mask (0 no, 1 yes), from
     * models/attention.csv for the config's attention= (eci_rates_attention); x attn_eff.  The
     * fractions hold at head dim 128; where attention.csv gives head dims (attn_n_hd > 0, at most
     * ECI_AK_HD_MAX), an op of head dim d takes them x eci_attn_hd_interp(attn_hd,
     * attn_hd_scale[pass][causal], attn_n_hd, d) (eci_attn_frac). */
    double attn_flop_per_s, attn_frac[2][2];
    double attn_n_hd, attn_hd[ECI_AK_HD_MAX], attn_hd_scale[2][2][ECI_AK_HD_MAX];
    /* kernels=te (te 1): Transformer Engine's FP8 casts and its overlapped tensor-parallel
     * backward, and the share of micro-steps that cast the weights (1 / grad_accum: Megatron
     * passes is_first_microbatch, TE caches the FP8 weight and its transpose for the rest of the
     * step); eci_rates_te.  te_fp8_non_tn 1: the GPU's FP8 GEMMs take non-TN layouts
     * (Transformer Engine 2.x on compute capability 10.x, constants.csv te_fp8_non_tn_*_cc), so
     * TE makes no transposed FP8 copies there; eci_rates_init.  te_fp8_current 1: fp8_recipe=current
     * (an amax pass before each cast; eci_rates_te_recipe).  te_fp8_params 1: fp8_params, the
     * weights held in FP8: transposed once a step, never cast (te_fp8_gemm_cost) */
    double te, fp8_weight_cast_frac, te_fp8_non_tn, te_fp8_current, te_fp8_params;
    /* moe_a2a_overlap: the share of micro-steps whose forward runs together with another's backward
     * (Megatron-Core's combined 1F1B), their expert all-to-alls under the other's compute; 0: none */
    double ep_overlap_frac;
    /* tp_comm_overlap (kernels=te): Transformer Engine's userbuffers overlap the forward's
     * sequence-parallel collectives too (overlap.c te_tp_forward_overlap): 1 + the index of its
     * configuration in models/tp_overlap.csv (eci_tp_overlap_at); 0: off */
    double tp_overlap;
    /* models/l2.csv: the achieved L2 read bandwidth and the footprint read at that rate; a memory-
     * bound op reads what the kernel just before it wrote from L2 where it fits (eci_op.l2_in_bytes,
     * model/l2chain.c); 0: no row, no L2 effect */
    double l2_bytes_per_s, l2_usable_bytes;
    /* The smallest head dim the fused attention kernel is built for when it runs a head dim d in
     * the kernel of the next power of two >= d from it (FlashAttention v1: 32, constants.csv
     * flash1_kernel_head_dim_min), that kernel's work and rate; 0: d at its own width
     * (eci_attn_run_head_dim). */
    double attn_hd_kernel_min;
    unsigned warnings;
    char warning_text[EC_WARNING_TEXT_MAX];
    /* The collectives of COMM ops (tensor-, context-, expert-parallel groups): their links and
     * the NCCL ramp of comm (NULL on one GPU).  Part of the cost cache's key. */
    const eci_comm *comm;
    eci_group groups[ECI_N_GROUPS];
    /* The attention kernels the fit's attn_eff was fitted on (eci_params.attn_kernels, 0: all):
     * eci_rates_attention prices any other kernel at its attention.csv efficiency as published
     * (attn_eff then at its prior).  Not in the cost key: it acts through attn_eff. */
    unsigned attn_eff_kernels;
    double attn_eff_fit; /* the fit's attn_eff, which attn_eff holds for those kernels */
    double attn_mask_eff; /* the fit's attn_mask_eff: attn_eff's multiplier where SDPA is given an explicit
                             mask (eci_rates_attention), on the kernels of attn_mask_kernels only (the
                             masked runs' kernels; 0: none, the prior).  Neither is in the cost key:
                             they act through attn_eff. */
    unsigned attn_mask_kernels;
    /* The peak of the 16-bit (or fp32) unit: attn_flop_per_s for every kernel but cuDNN's FP8 one
     * (the GPU's FP8 peak).  Not in the cost key: it acts through attn_flop_per_s. */
    double attn_unit_flop_per_s;
    /* The GPU's sustained_tensor_frac where that unit is its tensor cores, else 1: set_kernel applies it
     * to a kernel timed in short runs (attention.csv back_to_back 0).  Not in the cost key: it acts
     * through attn_flop_per_s. */
    double attn_sustained;
} eci_rates;

typedef struct eci_op_cost_t {
    double fwd_s, bwd_s;
    int fwd_kernels, bwd_kernels;
    int host_kernels;   /* launches the host issues in the forward (the op's fwd_kernels) */
    int host_cast;      /* 1: an autocast cast or a linear's bias pass, issued inside ATen at the backward
                           dispatch cost */
    int host_ops;       /* Python-level calls of the op (its count; 0 for a marker): the model code's
                           overhead (module call, views) comes once per call, the further kernels of
                           a multi-kernel op (a Python RMSNorm, gelu_new) at the op rate */
    int bwd_prev;       /* the nearest earlier op whose backward launches kernels (-1: none): the
                           backward walks step over the others (most of a transformer's ops) */
    double grad_params; /* the op's parameters that get gradients (0: none, or frozen), every run of
                           it (count): what its backward hands DDP's buckets, without the walk
                           reading the op */
    int expert_grads;   /* they are a routed expert's: reduced over the expert data-parallel group */
} eci_op_cost_t;

/* 1 when the GPU has TF32 tensor cores: Ampere (compute capability 8.0) on, with a TF32 peak in
 * gpus.csv; before it allow_tf32 has no effect and fp32 runs on the CUDA cores. */
EC_INTERNAL int eci_gpu_tf32(const eci_gpu *g);
/* The share of its short-run tensor-core rates (gpus.csv GEMM efficiencies, attention.csv) the GPU
 * keeps when tensor-bound kernels run back to back through a step: gpus.csv sustained_tensor_frac,
 * 1 where a row leaves it 0 (a profile built in code). */
EC_INTERNAL double eci_gpu_sustained(const eci_gpu *g);
/* Adds warning `bit` (EC_WARN_*) and its text to r once (attn_rates.c). */
EC_INTERNAL void eci_rates_warn(eci_rates *r, unsigned bit, const char *text);
/* cnn: the network is a CNN (eci_net.cnn): its memory-bound kernels take mem_scale_cnn, else mem_scale.
 * kernels: the run's kernel class (EC_KERNELS_*): an architecture's fitted scales apply only where
 * the fit had runs of that class on it (catalog/params.c eci_params_arch_for). */
EC_INTERNAL void eci_rates_init(const ec_ctx *ctx, const eci_gpu *g, int precision, const eci_params *c, int cnn,
                                int kernels, eci_rates *r);
/* attention= as the config spells it (ec_attention). */
EC_INTERNAL const char *eci_attention_name(int attention);
/* The fused attention kernel (ECI_AK_*) attention= runs on g at this precision: flash2, flash3, flash4,
 * triton and cudnn as named; sdpa (and eager where the network has only a fused path) as
 * PyTorch's SDPA dispatch picks it: its flash backend, FlashAttention-2, for 16-bit inputs from
 * compute capability 8.0, else the memory-efficient backend; masked: the batch carries a padding
 * mask (HF passes SDPA an attn_mask), which flash does not take (sdpa_backends.csv attn_mask). */
EC_INTERNAL int eci_attn_kernel_for(const ec_ctx *ctx, const eci_gpu *g, int attention, int precision,
                                    int torch_release, int masked);
/* The kernel whose attention.csv rows price attention= on g: eci_attn_kernel_for's, or SDPA's pick
 * where g has no row and no prior of that kernel (layout.c refuses a kernel named explicitly
 * there), or the memory-efficient kernel where it has none of that either. */
EC_INTERNAL int eci_attn_kernel_priced(const ec_ctx *ctx, const eci_gpu *g, int attention, int precision,
                                       int torch_release, int masked);
/* Whether a causal self-attention hands SDPA a mask (attn_mask): as the key says; auto: a batch
 * padded by lengths= carries HF's padding mask, and from the PyTorch release of constants.csv
 * hf_compile_mask_from_version (torch_version unset: the current stack) HF transformers'
 * masking_utils builds the causal mask whenever torch.compile traces.  Masked, SDPA runs without
 * is_causal: every key block, on a backend that takes a mask (sdpa_backends.csv attn_mask). */
EC_INTERNAL int eci_sdpa_masked(const ec_ctx *ctx, const ec_config *cfg);
/* Whether cfg's attention on g runs through SDPA's dispatch, where attn_mask applies: attention=sdpa
 * (or eager on a network with a fused path only) and a fused kernel at all (eci_attn_kernel_of). */
EC_INTERNAL int eci_attn_through_sdpa(const ec_ctx *ctx, const eci_gpu *g, const eci_net *net,
                                      const ec_config *cfg);
/* The fused attention kernel (ECI_AK_*) a prediction of cfg on g prices, -1 when it runs none: a
 * network without attention layers, or attention computed op by op (attention=eager, or a network
 * with no fused path).  The calibration records the kernels of its runs (fit/calibrate.c). */
EC_INTERNAL int eci_attn_kernel_of(const ec_ctx *ctx, const eci_gpu *g, const eci_net *net, const ec_config *cfg);
/* Set r's fused-attention rates (after eci_rates_init) for attention= on g: the kernel's row of
 * models/attention.csv for g's architecture, else its prior row, which a kernel named explicitly
 * warns about (EC_WARN_MODEL_DEFAULTED, naming the key and the file); cuDNN's at the release of
 * cudnn_release (EC_RELEASE, 0: the newest measured).  A kernel that neither is among
 * r->attn_eff_kernels nor derives from one (attention.csv derived_from) runs at its efficiency as
 * published: attn_eff at its prior, with EC_WARN_MODEL_DEFAULTED naming the kernel (not
 * EC_WARN_UNCALIBRATED: the interval stays the architecture's, and cross-validation counts the run
 * with its architecture's). */
EC_INTERNAL void eci_rates_attention(const ec_ctx *ctx, const eci_gpu *g, int attention, int precision,
                                     int torch_release, int cudnn_release, int masked, eci_rates *r);
/* eci_rates_init's default until the config's attention is known: SDPA's pick, unmasked, the
 * newest cuDNN rows, attn_eff as fitted. */
EC_INTERNAL void eci_rates_attention_sdpa(const ec_ctx *ctx, const eci_gpu *g, int precision, eci_rates *r);
/* The fused attention kernel's fraction of r for a pass (0 forward, 1 backward), causal mask and
 * head dim (attn_frac at head dim 128, scaled by attention.csv's head-dim rows where it has them). */
EC_INTERNAL double eci_attn_frac(const eci_rates *r, int pass, int causal, double head_dim);
/* The head dim the kernel runs for an op of head dim d (attn_hd_kernel_min). */
EC_INTERNAL double eci_attn_run_head_dim(const eci_rates *r, double head_dim);
EC_INTERNAL double eci_gemm_util(const eci_rates *r, double m, double n, double k, double batch);
/* A GEMM-shaped pass at the rate `peak` running flop_frac of its FLOPs, never faster than moving
 * `bytes` (kernel_time.c); eci_gemm_at: a GEMM (kind ECI_OP_CONV: x conv_eff) whose operands are
 * in_bytes per element. */
EC_INTERNAL double eci_matmul_at(const eci_rates *r, double peak, double m, double n, double k, double batch,
                                 double flop_frac, double bytes);
EC_INTERNAL double eci_gemm_at(const eci_rates *r, double peak, double in_bytes, double m, double n, double k,
                               double batch, int kind);
EC_INTERNAL double eci_gemm_time_s(const eci_rates *r, double m, double n, double k, double batch, int conv);
/* A fused attention kernel of m queries, n keys, k = 2 x head dim, batch x heads: flop_factor x
 * its forward FLOPs (1 forward, sdpa_bwd_flop_factor backward) at the attention peak x frac (the
 * kernel's attention.csv efficiency) x attn_eff x tile utilization; bounded below by Q, K, V and
 * the output through DRAM (never the s x s scores, which stay on chip) and the kernel floor. */
EC_INTERNAL double eci_attn_time_s(const eci_rates *r, double m, double n, double k, double batch, double frac,
                                   double flop_factor);
/* A memory-bound pass of `bytes` over `kernels` launches (a double: an optimizer over many tensors
 * launches more than an int counts). */
EC_INTERNAL double eci_mem_time_s(const eci_rates *r, double bytes, double kernels);
/* The bytes of an op's pass (0 forward, 1 backward) read from L2 on this GPU (l2.csv, l2chain.c). */
EC_INTERNAL double eci_l2_hit_bytes(const eci_rates *r, const eci_op *op, int pass);
/* kernels=te: Transformer Engine's FP8 casts, the weights cast on one micro-step of grad_accum, under
 * fp8_recipe (ec_fp8_recipe). */
EC_INTERNAL void eci_rates_te(eci_rates *r, int grad_accum, int fp8_recipe, int fp8_params);
EC_INTERNAL void eci_op_cost(const ec_ctx *ctx, const eci_rates *r, const eci_op *op, eci_op_cost_t *c);
/* c (a collective overlapping the op before it, costing `under`) -> what stays exposed: the
 * excess over `under`, or for a ring of op->hidden steps over its first step (overlap.c). */
EC_INTERNAL void eci_ring_exposed(const eci_rates *r, const eci_op *op, const eci_op_cost_t *under, eci_op_cost_t *c);
/* The overlaps of wl's ops applied to their costs, each priced alone before (overlap.c). */
EC_INTERNAL void eci_overlap_apply(const ec_ctx *ctx, const eci_rates *r, const eci_workload *wl, eci_op_cost_t *cost);
/* The costs of all of wl's ops on r, fwd_s and bwd_s x gpu_scale: from the context's cost
 * cache when wl comes from the workload cache (eci_workload_get) and was priced on the same
 * rates before, else priced now (into the cache, or into a scratch buffer of the context when
 * wl is not cached or the cache cannot grow).  Valid until the next call on ctx; NULL only
 * when memory runs out (EC_ENOMEM on the context). */
EC_INTERNAL const eci_op_cost_t *eci_op_costs(ec_ctx *ctx, const eci_rates *r, const eci_workload *wl,
                                              double gpu_scale);
/* A run of ops the step model's timeline walks one after another (sim/walk.c), summed once at
 * one set of dispatch costs: what the run adds to the host's and the GPU's clocks and kernel
 * count, and lead_s, the most the host's issue of an op gets ahead of the GPU's queue (max
 * over the run's ops i of host time up to and including i minus GPU time before i).  The walk
 * then ends at max(gpu, cpu + lead_s) + gpu_s (max-plus algebra), the GPU idle for the excess. */
typedef struct eci_walk_sum {
    size_t from, to;   /* the run's ops, as the walk names them; to == 0: not worked out yet */
    double host_s, gpu_s, kernels, lead_s;
} eci_walk_sum;

/* The sums of no op: lead_s = -infinity (no op ever held the GPU up). */
static inline eci_walk_sum eci_walk_sum_none(void)
{
    return (eci_walk_sum){.lead_s = -INFINITY};
}

/* One more op at the end of s: issued after host_s more of the host's time, gpu_s on the GPU. */
static inline void eci_walk_sum_add(eci_walk_sum *s, double host_s, double gpu_s, double kernels)
{
    s->host_s += host_s;
    if (s->host_s - s->gpu_s > s->lead_s)
        s->lead_s = s->host_s - s->gpu_s;
    s->gpu_s += gpu_s;
    s->kernels += kernels;
}

/* a, then b: b's ops issue after a's host time, their GPU time queued behind a's, so b's
 * lead comes a->host_s - a->gpu_s later. */
static inline void eci_walk_sum_then(eci_walk_sum *a, const eci_walk_sum *b)
{
    double lead_s = a->host_s - a->gpu_s + b->lead_s;
    if (lead_s > a->lead_s)
        a->lead_s = lead_s;
    a->host_s += b->host_s;
    a->gpu_s += b->gpu_s;
    a->kernels += b->kernels;
}

/* n >= 1 runs of s, one after another: n times its sums, and the lead of the last when the
 * host gains on the GPU in each (host_s > gpu_s), else of the first. */
static inline eci_walk_sum eci_walk_sum_repeat(const eci_walk_sum *s, double n)
{
    double gain_s = s->host_s - s->gpu_s;
    return (eci_walk_sum){.host_s = n * s->host_s, .gpu_s = n * s->gpu_s, .kernels = n * s->kernels,
                          .lead_s = s->lead_s + (gain_s > 0 ? (n - 1) * gain_s : 0)};
}

/* Room for the step model's per-op forward host costs beside the cached costs `cost` of wl (as
 * eci_op_costs just returned them), keyed by ECI_HOST_KEY_VALUES doubles (the dispatch costs
 * they are worked out at).  *valid = 1: it already holds them for key; 0: the caller fills
 * all wl->n_ops now.  NULL when cost is not from the cache or no memory (no error: the caller
 * works them out elsewhere).  *sums: 2 x wl->n_ops run sums at the same key (forward runs by
 * their first op, then backward runs), then ECI_PASS_SUMS for whole passes (sim/pass.c,
 * pass_walk), all not worked out when *valid is 0; NULL when there is no room.  Both valid
 * until the next eci_op_costs call on ctx. */
#define ECI_HOST_KEY_VALUES 4
#define ECI_PASS_SUMS 6 /* 3 passes (forward, backward, backward with recompute) x (first op, rest) */
EC_INTERNAL double *eci_op_costs_host(ec_ctx *ctx, const eci_workload *wl, const eci_op_cost_t *cost,
                                      const double key[ECI_HOST_KEY_VALUES], int *valid, eci_walk_sum **sums);
/* Cost lookups answered from the cache and pricings done, since the context was created. */
EC_INTERNAL void eci_op_costs_stats(const ec_ctx *ctx, size_t *hits, size_t *misses);

/* Free the op cost cache (registered with eci_ctx_on_free). */
EC_INTERNAL void eci_compute_ctx_free(ec_ctx *ctx);

#endif /* EC_COMPUTE_H */
