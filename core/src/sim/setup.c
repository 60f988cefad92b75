/*
 * setup.c: what one step's walk is set up from (docs/DESIGN.md 3.1, 3.3).  From the config and
 * its resolution (model/resolve.c, layout.c): the job's links and the groups of its layout
 * (comm.c), sharded data parallelism's schedule (shard.c) and how far each state is sharded,
 * bytes per element of gathers, reductions and frozen parameters, the collectives inside the
 * ops, FSDP's root unit, the host's dispatch costs under torch.compile, the shape of one
 * micro-step (the workload's key, workload.c) and the rates its kernels run at (compute.c).
 */
#include "catalog/consts.h"
#include "sim/setup.h"

#include <string.h>

/* The dp x cp ranks split into groups of `inner` consecutive data-parallel ranks (a node's for
 * FSDP's hybrid_shard, zero_shard_size for ZeRO-1/2): a shard group and the replicas across them. */
static void split_dp(const layout_comm *lc, const eci_resolved *r, int inner, eci_group *shard, eci_group *replica)
{
    int group = r->dp * r->cp;
    *shard = lc->dp;
    memset(replica, 0, sizeof *replica);
    replica->n = 1;
    if (inner < 1 || group <= 1)
        return;
    if (inner > group)
        inner = group;
    eci_comm_group(&lc->comm, inner, r->tp, lc->domain, lc->net_bytes_per_s, lc->net_frac, shard);
    eci_comm_group(&lc->comm, group / inner, r->tp * inner, lc->domain, lc->net_bytes_per_s, lc->net_frac, replica);
}

/* The job's links and the groups of its layout (Megatron's rank order: tensor parallel
 * innermost, then context, data, pipeline; the expert layers etp innermost, then ep, then the
 * expert data parallel edp, within a stage: Megatron-Core's parallel folding, parallel_state.py
 * @d98e8a64 L870-895, RankGenerator order tp-ep-dp-pp with tp = expert_tensor_parallel_size). */
int eci_setup_layout_comm(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *calib,
                          layout_comm *lc)
{
    memset(lc, 0, sizeof *lc);
    lc->comm.n = lc->comm.nodes = 1;
    lc->comm.h2d_share_frac = 1.0;
    lc->dp.n = lc->edp.n = 1;
    int n = cfg->num_gpus;
    lc->dp_is_job = r->dp == n && r->fabric == NULL && r->nodes == 1 && cfg->nccl_dp_ctas == 0;
    lc->zero_shard = lc->dp;
    lc->zero_replica.n = 1;
    if (n <= 1)
        return EC_OK;
    int rc = eci_comm_init(ctx, r->gpu, r->host, r->topology, n, r->nodes, r->node_net_bytes_per_s,
                           cfg->busbw_bytes_per_s, &lc->comm);
    if (rc != EC_OK)
        return rc;
    lc->net_frac = r->fabric != NULL && r->fabric->efficiency_frac > 0 ? r->fabric->efficiency_frac
                                                                        : calib->internode_frac;
    lc->domain = r->fabric != NULL && r->fabric->domain_gpus > 0 ? (int)r->fabric->domain_gpus : r->per_node;
    lc->net_bytes_per_s = r->gpu_net_bytes_per_s;
    int tp = r->tp, cp = r->cp;
    eci_comm_group(&lc->comm, tp, 1, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->groups[ECI_GROUP_TP]);
    eci_comm_group(&lc->comm, cp, tp, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->groups[ECI_GROUP_CP]);
    eci_comm_group(&lc->comm, r->etp, 1, lc->domain, lc->net_bytes_per_s, lc->net_frac,
                   &lc->groups[ECI_GROUP_ETP]);
    eci_comm_group(&lc->comm, r->ep, r->etp, lc->domain, lc->net_bytes_per_s, lc->net_frac,
                   &lc->groups[ECI_GROUP_EP]);
    eci_comm_group(&lc->comm, r->edp, r->etp * r->ep, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->edp);
    eci_comm_group(&lc->comm, r->dp * cp, tp, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->dp);
    eci_comm_group(&lc->comm, r->pp, tp * cp * r->dp, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->pp);
    split_dp(lc, r, cfg->zero_shard_size, &lc->zero_shard, &lc->zero_replica);
    /* NCCL's channel limits on the communicators (cfg nccl_*_ctas): the gradient and parameter
     * collectives of the dp x cp ranks (and of the ZeRO shard groups split from them), context
     * parallelism's exchange, tensor parallelism's */
    double channel = eci_nccl_channel_bytes_per_s(ctx, lc->comm.compute_capability);
    eci_group_cap_channels(&lc->dp, cfg->nccl_dp_ctas, channel);
    eci_group_cap_channels(&lc->zero_shard, cfg->nccl_dp_ctas, channel);
    eci_group_cap_channels(&lc->zero_replica, cfg->nccl_dp_ctas, channel);
    eci_group_cap_channels(&lc->groups[ECI_GROUP_CP], cfg->nccl_cp_ctas, channel);
    eci_group_cap_channels(&lc->groups[ECI_GROUP_TP], cfg->nccl_tp_ctas, channel);
    return EC_OK;
}

/* The rates of the ops' collectives: the layout's links and groups (none on one GPU). */
void eci_setup_rates(const layout_comm *lc, eci_rates *rates)
{
    if (lc->comm.n <= 1)
        return;
    memcpy(rates->groups, lc->groups, sizeof rates->groups);
    rates->comm = &lc->comm;
}

/* Sharded data parallelism that gathers per unit (FSDP full/hybrid/grad-op sharding, ZeRO-3):
 * the schedule's groups and dtypes.  Returns 0 (and leaves s alone) for any other strategy. */
int eci_setup_shard(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const layout_comm *lc,
                    eci_shard *s)
{
    int fsdp = r->strategy == EC_STRATEGY_FSDP && cfg->sharding != EC_SHARD_NONE;
    if (!fsdp && !(r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage == 3))
        return 0;
    memset(s, 0, sizeof *s);
    s->comm = &lc->comm;
    s->shard = lc->dp;
    s->replica.n = 1;
    if (fsdp && cfg->sharding == EC_SHARD_HYBRID) { /* shard within a node, replicate across */
        int in_node = lc->domain / r->tp;
        split_dp(lc, r, in_node < 1 ? 1 : in_node, &s->shard, &s->replica);
    }
    s->regather = !(fsdp && cfg->sharding == EC_SHARD_GRAD_OP);
    s->limit = (int)eci_const(ctx, EC_C_fsdp_gathers_in_flight);
    s->slowdown = eci_const(ctx, EC_C_overlap_compute_slowdown_frac);
    if (cfg->offload == EC_OFFLOAD_OPTIMIZER_AND_PARAMS) /* parameters live in pinned host memory */
        s->offload_bytes_per_s = r->gpu->h2d_pinned_bytes_per_s;
    return 1;
}

/* Ranks the parameters, gradients and optimizer states are split over (memory, optimizer). */
void eci_setup_shard_degrees(const ec_config *cfg, const eci_resolved *r, double *w, double *g, double *o)
{
    double group = (double)r->dp * r->cp;
    *w = *g = *o = 1;
    if (r->strategy == EC_STRATEGY_ZERO) { /* ZeRO-1/2 over zero_shard_size ranks when given */
        double z = cfg->zero_stage < 3 && cfg->zero_shard_size > 0 && cfg->zero_shard_size < group
                       ? cfg->zero_shard_size : group;
        *o = z;
        *g = cfg->zero_stage >= 2 ? z : 1;
        *w = cfg->zero_stage >= 3 ? group : 1;
    } else if (r->strategy == EC_STRATEGY_FSDP && cfg->sharding != EC_SHARD_NONE) {
        double s = group;
        if (cfg->sharding == EC_SHARD_HYBRID) { /* the node's share of the group */
            double in_node = (double)r->per_node / r->tp;
            s = in_node < 1 ? 1 : (in_node > group ? group : in_node);
        }
        *o = *g = *w = s;
    }
}
double eci_setup_reduce_elem_bytes(const ec_config *cfg, const eci_resolved *r, double param_bytes)
{
    switch (cfg->reduce_dtype) {
    case EC_REDUCE_FP32:
        return 4.0;
    case EC_REDUCE_BF16:
    case EC_REDUCE_FP16:
        return 2.0;
    default: /* DDP reduces the gradients in the parameters' dtype (fp32 under AMP); sharded
              * strategies in the dtype they gather in (FSDP MixedPrecision, DeepSpeed bf16) */
        return r->strategy == EC_STRATEGY_FSDP || r->strategy == EC_STRATEGY_ZERO ? compute_elem_bytes(cfg->precision)
                                                                                   : param_bytes;
    }
}

/* Exposed time of the ops' collectives on the compute stream by group, per micro-step: the
 * forward's (twice for checkpointed blocks, whose forward runs again in backward) and the
 * backward's.  They are busy GPU time that the breakdown moves from forward/backward to comm. */
void eci_setup_inline_comm(const eci_workload *wl, const eci_op_cost_t *cost, const eci_rates *rates, int checkpointing,
                           double *fwd_s, double *bwd_s, double *group_s, double *launched_s)
{
    *fwd_s = *bwd_s = *launched_s = 0;
    for (int gi = 0; gi < ECI_N_GROUPS; gi++)
        group_s[gi] = 0;
    for (size_t i = wl->comm_begin; i < wl->comm_end; i = wl->ops[i].next_comm) { /* the collectives only */
        const eci_op *op = &wl->ops[i];
        const eci_block *blk = op->block >= 0 ? &wl->blocks[op->block] : NULL;
        double reps = (blk != NULL ? blk->reps : 1) * op->count;
        /* recomputed in backward: under checkpointing=1, and under selective_op unless kept (a reduce-scatter) */
        int rerun = blk != NULL && blk->checkpoint && (checkpointing == 1 || (checkpointing == EC_CKPT_OP && !op->op_keep));
        double again = rerun ? cost[i].fwd_s : 0;
        *fwd_s += reps * cost[i].fwd_s;
        *bwd_s += reps * (cost[i].bwd_s + again);
        group_s[op->group] += reps * (cost[i].fwd_s + cost[i].bwd_s + again);
        if (op->hidden && rates->comm != NULL) { /* the whole exchange, not only what attention left exposed */
            const eci_group *g = &rates->groups[op->group];
            double f = eci_coll_s(rates->comm, g, (eci_coll)op->fwd_coll, op->comm_bytes);
            double b = eci_coll_s(rates->comm, g, (eci_coll)op->bwd_coll, op->comm_bytes);
            if (op->hidden > 1 && op->bwd_bytes > 0) /* a ring's backward: dK/dV passed on every step
                                                      * (Transformer Engine's: every step but the first) */
                b += (op->hidden - op->ring_te) * eci_coll_s(rates->comm, g, ECI_COLL_P2P, op->bwd_bytes);
            *launched_s += reps * (f + b + (rerun ? f : 0));
        } else {
            *launched_s += reps * (cost[i].fwd_s + cost[i].bwd_s + again);
        }
    }
}

/* Parameters outside every repeated block (embeddings, final norm, head): FSDP's root unit;
 * *trained: those of them that are trained. */
double eci_setup_root_params(const eci_workload *wl, double *trained)
{
    double in_blocks = 0, trained_in_blocks = 0;
    for (size_t b = 0; b < wl->n_blocks; b++) {
        double n = wl->blocks[b].shared_params ? 1 : wl->blocks[b].reps;
        in_blocks += wl->blocks[b].params * n;
        trained_in_blocks += wl->blocks[b].trainable * n;
    }
    double root = wl->params - in_blocks;
    *trained = wl->trainable_params - trained_in_blocks > 0 ? wl->trainable_params - trained_in_blocks : 0;
    return root > 0 ? root : 0;
}

/* LoRA: bytes per frozen base parameter as stored (quantized linears at base_quant_bytes, the
 * rest of a quantized base, and a base loaded in 16 bits, at 2; else the parameters' dtype),
 * and the quantized linears' bytes alone (0 without quantization). */
static double base_quant_bytes(const ec_ctx *ctx, const ec_config *cfg)
{
    if (cfg->base_precision == EC_BASE_NF4)
        return eci_const(ctx, EC_C_nf4_bytes_per_param);
    if (cfg->base_precision == EC_BASE_NF4_NODQ)
        return eci_const(ctx, EC_C_nf4_nodq_bytes_per_param);
    return cfg->base_precision == EC_BASE_INT8 ? eci_const(ctx, EC_C_int8_bytes_per_param) : 0;
}

double eci_setup_frozen_elem_bytes(const ec_ctx *ctx, const ec_config *cfg, const eci_workload *wl, double param_bytes)
{
    double frozen = wl->params - wl->trainable_params, q = base_quant_bytes(ctx, cfg);
    if (frozen <= 0)
        return param_bytes;
    double other = cfg->base_precision == EC_BASE_SAME ? param_bytes : 2.0;
    return (wl->quant_params * q + (frozen - wl->quant_params) * other) / frozen;
}

/* The dispatch costs of the model's own passes (setup.h). */
void eci_setup_model_dispatch(const ec_ctx *ctx, const ec_config *cfg, const eci_host *host, const plan *p,
                              double *fwd_s, double *bwd_s, double *op_s, double *call_s)
{
    *fwd_s = p->dispatch_fwd_s;
    *bwd_s = p->dispatch_bwd_s;
    *op_s = p->op_fwd_s;
    *call_s = 0;
    if (cfg->compile != EC_COMPILE_OFF) { /* generated code: no module Python around the launches;
                                           * each pass is one call of the compiled graph */
        *fwd_s = *bwd_s = *op_s = eci_const(ctx, EC_C_compile_host_launch_frac) * host->dispatch_fwd_s;
        *call_s = eci_const(ctx, EC_C_compile_graph_call_s);
    }
    if (cuda_graphs(cfg)) {
        *fwd_s = *bwd_s = *op_s = 0;
        *call_s = eci_const(ctx, EC_C_cudagraph_replay_s);
    }
}

/* The keys one query attends to, on average, in a sample of seq tokens: all of them, or with
 * packed sequences (packed_seq_len) those of its own sequence (resolve.c admits only the
 * variable-length kernels then).  seq_sq = seq x this span makes the attention's work
 * sum_i l_i^2 over the pack's sequences with every l_i at the mean. */
static double packed_span(const ec_config *cfg, double seq)
{
    return cfg->packed_seq_len > 0 && cfg->packed_seq_len < seq ? (double)cfg->packed_seq_len : seq;
}

/* The shape of one micro-step of cfg at padded length seq and a batch per GPU. */
void eci_setup_shape(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, double seq, double batch,
                     eci_shape *shape)
{
    int sharded_dp = r->strategy == EC_STRATEGY_FSDP || r->strategy == EC_STRATEGY_ZERO;
    /* fused chains (torch.compile, kernels=fused|te): one RMSNorm kernel, one RoPE kernel per tensor */
    int fused = cfg->compile != EC_COMPILE_OFF || cfg->kernels != EC_KERNELS_EAGER;
    *shape = (eci_shape){.precision = cfg->precision, .batch = batch, .seq = seq,
                         .seq_sq = seq * packed_span(cfg, seq), .target_seq = r->target_seq > 0 ? r->target_seq : seq,
                         .image_size = r->image_size,
                         .mask_bytes = eci_const(ctx, EC_C_dropout_mask_bytes_per_elem),
                         .mlm_frac = cfg->mlm_all_positions ? 1.0 : eci_const(ctx, EC_C_mlm_mask_frac),
                         .eager_attention = cfg->attention == EC_ATTN_EAGER,
                         .flash = cfg->attention != EC_ATTN_SDPA && cfg->attention != EC_ATTN_EAGER,
                         .gelu_new_kernels = (int)eci_const(ctx, EC_C_gelu_new_kernels),
                         .gelu_python_kernels = (int)eci_const(ctx, EC_C_gelu_python_kernels),
                         .act_impl = cfg->activation,
                         .rmsnorm_kernels = (int)eci_const(ctx, fused ? EC_C_rmsnorm_fused_kernels
                                                                      : EC_C_rmsnorm_eager_kernels),
                         .rmsnorm_passes = eci_const(ctx, fused ? EC_C_rmsnorm_fused_passes : EC_C_rmsnorm_eager_passes),
                         /* eager: pow, mean and the rsqrt product on an fp32 copy, cast to and from it */
                         .rmsnorm_fp32_passes = fused ? 0 : eci_const(ctx, EC_C_rmsnorm_eager_fp32_passes),
                         .rmsnorm_cast_kernels = fused ? 0 : (int)eci_const(ctx, EC_C_rmsnorm_eager_cast_kernels),
                         .rope_kernels = (int)eci_const(ctx, fused ? EC_C_rope_fused_kernels : EC_C_rope_eager_kernels),
                         .tp = r->tp, .cp = r->cp, .ep = r->ep, .etp = r->etp, .sp = r->sp,
                         /* 2: torchtitan compiles each block, SDPA's ring inside it (workload_blocks.c) */
                         .cp_torch = r->cp <= 1 || cfg->kernels == EC_KERNELS_TE ? 0
                                     : cfg->compile != EC_COMPILE_OFF        ? 2
                                                                             : 1,
                         .stage_lo = r->stage_lo, .stage_hi = r->stage_hi,
                         /* FSDP MixedPrecision and DeepSpeed hold the compute copy in 16 bits */
                         .weights_16 = sharded_dp,
                         .lora_r = cfg->lora_r, .lora_targets = cfg->lora_targets,
                         .lora_dropout = cfg->lora_r > 0 && cfg->lora_dropout > 0,
                         .base_16 = cfg->base_precision != EC_BASE_SAME,
                         .base_quant_bytes = base_quant_bytes(ctx, cfg),
                         .channels_last = cfg->memory_format == EC_MEMFMT_CHANNELS_LAST,
                         .fused = fused,
                         .unmasked = !eci_sdpa_masked(ctx, cfg),
                         .loss_sum = cfg->loss == EC_LOSS_KIND_SUM,
                         .quant_head = cfg->quant_head && cfg->lora_r > 0 && base_quant_bytes(ctx, cfg) > 0,
                         .loss_fp32 = cfg->loss == EC_LOSS_KIND_CROSS_ENTROPY_FP32,
                         .loss_fused = cfg->loss == EC_LOSS_KIND_FUSED_CROSS_ENTROPY          ? 1
                                     : cfg->loss == EC_LOSS_KIND_FUSED_LINEAR_CROSS_ENTROPY ? 2
                                                                                           : 0,
                         /* torch.compile's partitioner, and Megatron-Core's Transformer Engine layers
                          * (kernels=te), keep the same: TE's RMSNorm its input and rsigma (te
                          * pytorch/module/layernorm_linear.py, _RMSNorm), the fused RoPE nothing but
                          * the frequencies (megatron/core/models/common/embeddings/rope_utils.py,
                          * FusedRoPEFunc), bias_swiglu its input once (megatron/core/fusions/
                          * fused_bias_swiglu.py, BiasSwiGLUFunction: ctx.save_for_backward(input)) */
                         .remat = cfg->compile != EC_COMPILE_OFF || cfg->kernels == EC_KERNELS_TE,
                         .te_layers = cfg->kernels == EC_KERNELS_TE,
                         .bias_pass = cfg->kernels != EC_KERNELS_TE && cfg->torch_release > 0 &&
                                      cfg->torch_release < eci_const(ctx, EC_C_linear_bias_epilogue_from_version),
                         .fp8_act_store = cfg->fp8_act_store && cfg->kernels == EC_KERNELS_TE,
                         .cp_a2a = cfg->cp_comm_type == EC_CP_COMM_A2A && cfg->kernels == EC_KERNELS_TE && r->cp > 1};
}

/* fp8_params where it applies (setup.h). */
int eci_setup_fp8_params(const ec_config *cfg, const eci_resolved *r)
{
    return cfg->fp8_params && cfg->precision == EC_PREC_AMP_FP8 && cfg->kernels == EC_KERNELS_TE &&
           (r->strategy == EC_STRATEGY_ZERO || r->strategy == EC_STRATEGY_FSDP);
}

/* act_offload_layers where it applies (setup.h): Megatron-Core's TransformerConfig refuses CPU
 * offloading beside recomputation and pipeline parallelism. */
int eci_setup_act_offload_allowed(const ec_config *cfg, const eci_resolved *r)
{
    return !cfg->checkpointing && r->pp <= 1;
}

int eci_setup_act_offload(const ec_config *cfg, const eci_resolved *r, const eci_workload *wl)
{
    return eci_setup_act_offload_allowed(cfg, r) ? eci_workload_offloaded_layers(wl, cfg->act_offload_layers) : 0;
}

/* Transformer Engine's offload handler (transformer_engine/pytorch/cpu_offload.py,
 * AsyncDoubleBufferGroupOffloadHandler) copies a layer's saved tensors on a side stream once its
 * forward is done and waits for that copy before the forward after next; in backward it fetches
 * a layer's tensors while the layer after it computes its gradients.  One layer's work hides one
 * copy: what is left over waits (setup.h). */
void eci_setup_offload_wait_s(const eci_workload *wl, const eci_op_cost_t *cost, int layers, double link_bytes_per_s,
                              double wait_s[2])
{
    const eci_block *blk = eci_workload_layers(wl);
    wait_s[0] = wait_s[1] = 0;
    if (layers <= 0 || blk == NULL || link_bytes_per_s <= 0)
        return;
    double work_s[2] = {0, 0}, copy_s = blk->saved_bytes / link_bytes_per_s;
    for (size_t i = blk->begin; i < blk->end; i++) { /* an op's runs counted (eci_op_cost) */
        work_s[0] += cost[i].fwd_s;
        work_s[1] += cost[i].bwd_s;
    }
    for (int pass = 0; pass < 2; pass++)
        wait_s[pass] = copy_s > work_s[pass] ? layers * (copy_s - work_s[pass]) : 0;
}

/* cfg resolved (names, layout, checks) and the calibration that applies to it. */
int eci_setup_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r, eci_params *calib)
{
    int rc = eci_resolve(ctx, cfg, r);
    return rc == EC_OK ? eci_params_current(ctx, cfg, calib) : rc;
}

void eci_setup_kernel_rates(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *calib,
                            int unmasked, int casts, eci_rates *rates)
{
    eci_rates_init(ctx, r->gpu, cfg->precision, calib, r->net != NULL && r->net->cnn, cfg->kernels, rates);
    /* the fused kernel attention= picks, and what its rates rest on (the warnings), only where the
     * network's attention runs one: eager ops and a network without attention (a CNN) price no
     * fused kernel, and eci_rates_init has set SDPA's pick for the rest without a word */
    if (r->net == NULL || eci_attn_kernel_of(ctx, r->gpu, r->net, cfg) >= 0)
        eci_rates_attention(ctx, r->gpu, cfg->attention, cfg->precision, cfg->torch_release, cfg->cudnn_release,
                            !unmasked, rates);
    if (cfg->kernels == EC_KERNELS_TE)
        eci_rates_te(rates, casts, cfg->fp8_recipe, eci_setup_fp8_params(cfg, r));
    rates->tp_overlap = cfg->kernels == EC_KERNELS_TE && cfg->tp_comm_overlap
                            ? 1 + eci_tp_overlap_index(ctx, cfg->tp_overlap_cfg) : 0;
}
