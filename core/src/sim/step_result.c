/*
 * step_result.c: a walked step (step.c) turned into the result: the step's time with the
 * micro-steps the walk repeats added, its breakdown into forward, backward, optimizer, host,
 * loader and communication, its rates (throughput, GPU busy, MFU) and its memory (memory.c).
 */
#include "catalog/consts.h"
#include "model/memory.h"
#include "model/optim.h"
#include "sim/step_state.h"
#include "sim/setup.h"
#include "sim/warnings.h"

#include <math.h>
#include <string.h>

/* ---- the result ------------------------------------------------------------------------- */
/* The step's time and its breakdown: the simulated part plus the repeated micro-steps, the
 * collectives inside the ops moved to communication, the slowest GPU's wait. */
int eci_step_breakdown(step *s, ec_result *res)
{
    const timeline *t = &s->t, *last = &s->rep_micro;
    const plan *p = &s->p;
    int ga = s->ga, simulate = s->simulate, rc;
    double scale_rest = s->scale_rest;
    /* Assemble the step: simulated part plus the repeated micro-steps. */
    s->step_s = t->cpu + scale_rest * s->micro_s[s->rep];
    double rest_frac = simulate > 1 ? scale_rest : 0;
    /* micro-steps 3..ga repeat the second, AccumulateGrad included */
    double micro_fwd = s->rep_fwd_s, micro_bwd = s->rep_bwd_s;
    double inline_fwd, inline_bwd, group_s[ECI_N_GROUPS], inline_launched;
    eci_setup_inline_comm(s->wl, s->cost, &s->rates, s->cfg->checkpointing, &inline_fwd, &inline_bwd, group_s,
                          &inline_launched);
    res->breakdown.forward_s = p->fwd_s + rest_frac * micro_fwd - ga * inline_fwd;
    res->breakdown.backward_s = p->bwd_s + rest_frac * micro_bwd - ga * inline_bwd;
    res->comm.tp_s = ga * group_s[ECI_GROUP_TP];
    res->comm.cp_s = ga * group_s[ECI_GROUP_CP];
    res->comm.ep_s = ga * (group_s[ECI_GROUP_EP] + group_s[ECI_GROUP_ETP]); /* the experts' collectives */
    res->breakdown.optimizer_s = s->opt_gpu_s;
    /* Micro-steps 3..ga repeat the last simulated one; once-per-step work is not scaled. */
    res->breakdown.cpu_overhead_s = t->gap[CAUSE_DISPATCH] + scale_rest * last->gap[CAUSE_DISPATCH];
    res->breakdown.loader_s = t->gap[CAUSE_LOADER] + scale_rest * last->gap[CAUSE_LOADER];
    res->breakdown.h2d_s = t->gap[CAUSE_H2D] + t->copy + scale_rest * (last->gap[CAUSE_H2D] + last->copy);
    double waits = t->gap[CAUSE_COMM] + scale_rest * last->gap[CAUSE_COMM];
    /* the GPU's waits: for gathers and reductions, or for the host optimizer under offload */
    res->comm.shard_wait_s = waits - res->comm.offload_s > 0 ? waits - res->comm.offload_s : 0;
    res->comm.shard_wait_s += s->zero_gather_wait_s;
    res->breakdown.comm_s = waits + (ga * (inline_fwd + inline_bwd)) + res->comm.dp_reduce_s + res->comm.overlap_s +
                            s->zero_gather_wait_s;
    if (s->dp) /* DataParallel's exchanges happen every micro-step */
        res->breakdown.comm_s += s->dp_comm_s * (double)ga / simulate;
    res->comm_total_s = s->dp ? s->dp_comm_s * (double)ga / simulate
                              : s->sched.comm_busy_s * s->micro_weight +
                                    (s->shard_comm[0] + s->shard_comm[simulate - 1] * (ga - 1)) +
                                    ga * inline_launched + s->zero_gather_s;
    if (s->n > 1) { /* a synchronous step waits for the slowest GPU (order statistics) */
        double e_max;
        if ((rc = eci_expected_max_normal(s->ctx, s->n, &e_max)) != EC_OK)
            return rc;
        double compute_s = res->breakdown.forward_s + res->breakdown.backward_s + res->breakdown.optimizer_s;
        res->straggler_s = eci_const(s->ctx, EC_C_gpu_speed_cv_frac) * e_max * compute_s;
        s->step_s += res->straggler_s;
        res->breakdown.comm_s += res->straggler_s;
    }
    if (s->rec != NULL)
        eci_rec_step_end(s->rec, t->cpu, s->micro_s[s->rep], res->straggler_s);
    return EC_OK;
}

/* The step's rates: busy and host time, throughput, utilization, FLOPs, MFU and HFU. */
void eci_step_rates(step *s, ec_result *res, double *host_s)
{
    const ec_config *cfg = s->cfg;
    const eci_workload *wl = s->wl;
    double step_s = s->step_s;
    int ga = s->ga;
    s->busy = s->t.busy + s->scale_rest * s->rep_micro.busy;
    res->kernels_per_step = s->t.kernels + s->scale_rest * s->rep_micro.kernels;
    double host_busy = s->t.host_busy + s->scale_rest * s->rep_micro.host_busy;

    res->step_s = step_s;
    res->gpu_busy_s = s->busy;
    res->cpu_issue_s = host_busy;
    *host_s = host_busy;
    res->samples_per_s = (double)cfg->batch_per_gpu * ga * s->r.dp / step_s;
    res->gpu_util_frac = s->busy / step_s > 1.0 ? 1.0 : s->busy / step_s;
    /* forward + backward (twice the forward; a frozen GEMM's backward only once) */
    res->flop_per_step = (3.0 * wl->model_flop - wl->frozen_flop) * ga;
    res->mfu_frac = res->flop_per_step / (step_s * s->rates.gemm_peak_flop_per_s);
    res->hfu_frac = (res->flop_per_step + ga * eci_workload_recompute_flop(wl, cfg->checkpointing)) /
                    (step_s * s->rates.gemm_peak_flop_per_s);
}

/* Frozen parameters that FSDP wraps in one unit with trained ones (LitGPT wraps each Block, its LoRA
 * adapters inside): a unit's FlatParameter needs a gradient when any of its parameters does, so with
 * use_orig_params (Lightning's default from PyTorch 2.0) the frozen ones get gradients too.  The
 * root unit (embeddings, head) holds no adapter here and stays without. */
static double unit_frozen_params(const eci_workload *wl)
{
    double frozen = 0;
    for (size_t b = 0; b < wl->n_blocks; b++) {
        const eci_block *blk = &wl->blocks[b];
        if (blk->trainable > 0)
            frozen += (blk->params - blk->trainable) * (blk->shared_params ? 1 : blk->reps);
    }
    return frozen;
}

/* Memory: GPU 0, and under dp the other GPUs, which hold no optimizer.  DataParallel's
 * GPU 0 also keeps every replica's gathered outputs. */
void eci_step_memory(step *s, ec_result *res)
{
    const ec_config *cfg = s->cfg;
    const eci_resolved *r = &s->r;
    const eci_workload *wl = s->wl;
    int n = s->n;
    eci_mem_in mi = {.wl = wl, .precision = cfg->precision, .optimizer = cfg->optimizer,
                     .checkpointing = cfg->checkpointing,
                     .ddp_bucket_copy = r->strategy == EC_STRATEGY_DDP && n > 1 && !cfg->gradient_as_bucket_view,
                     .dp_role = s->dp ? 1 : 0, .num_gpus = n,
                     .dynamic_shapes = cfg->padding != EC_PAD_MAX_LENGTH, .capacity_bytes = s->g->memory_bytes,
                     .allocator_scale = 1.0, .weight_shards = s->w_shards, .grad_shards = s->g_shards,
                     .opt_shards = s->o_shards, .zero = r->strategy == EC_STRATEGY_ZERO,
                     .opt_on_host = cfg->offload != EC_OFFLOAD_NONE,
                     .weights_on_host = cfg->offload == EC_OFFLOAD_OPTIMIZER_AND_PARAMS,
                     .act_copies = r->in_flight, .frozen_elem_bytes = s->p.frozen_elem_bytes, .expert_split = eci_expert_split(r),
                     .fp8_params = eci_setup_fp8_params(cfg, r), .act_offload_layers = eci_setup_act_offload(cfg, r, wl),
                     /* the last stage's last model chunk, where the head is, holds one micro-batch
                      * (Megatron's interleaved 1F1B: pipeline_parallel/schedules.py, a chunk's forward
                      * micro-batches come pp at a time; the last rank's warm-up ends on its last chunk) */
                     .head_copies = cfg->pp_schedule == EC_PP_INTERLEAVED && r->pp > 1 ? 1.0 : 0,
                     .grad_accum = s->ga, .expandable_segments = cfg->expandable_segments,
                     .keep_grads = eci_zero_grad_kept(cfg->zero_grad, cfg->torch_release, NULL),
                     .torch_release = cfg->torch_release, .master_weights = cfg->master_weights,
                     /* a plain loop keeps `out = model(x)` through backward; HF's Trainer and Lightning
                      * drop it, and recipes with a chunked loss (torchtune) `del logits` first */
                     .outputs_held = cfg->logits_held ? cfg->logits_held == 2
                                                      : cfg->trainer == EC_TRAINER_PLAIN && !s->dp && cfg->loss_chunks <= 1,
                     .loss_chunks = cfg->loss_chunks, .optimizer_in_bwd = cfg->optimizer_in_bwd,
                     .conv_transposes = s->rates.tensor_cores, .headroom_bytes = cfg->memory_headroom_bytes};
    int fsdp = r->strategy == EC_STRATEGY_FSDP;
    if (fsdp && cfg->lora_r > 0 && cfg->lora_fsdp_wrap == EC_LORA_FSDP_BLOCK)
        mi.unit_frozen_params = unit_frozen_params(wl);
    mi.unsharded_accum = fsdp && cfg->fsdp_no_sync;
    if (s->per_unit) { /* gathered 16-bit units in flight (the rate limiter's; without resharding after forward,
                        * every unit stays gathered until backward), the root, and one unit's unsharded
                        * gradients before their reduce-scatter (under no_sync, with the accumulated ones) */
        double unit = eci_workload_largest_unit(wl);
        double gathered = s->shard.regather ? s->shard.limit * unit + s->root : wl->params;
        double graded = mi.unit_frozen_params > 0 ? 1.0 : wl->trainable_params / wl->params;
        mi.gathered_bytes = gathered * compute_elem_bytes(cfg->precision) +
                            (mi.unsharded_accum && s->ga > 1 ? 0 : unit * s->reduce_bytes * graded);
    }
    if (r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage == 3 && wl->trainable_params > 0) /* in the gradients' dtype */
        mi.zero_bucket_bytes = eci_const(s->ctx, EC_C_zero3_reduce_bucket_elems) *
                               (cfg->precision == EC_PREC_FP32 || cfg->precision == EC_PREC_TF32 ? 4.0 : 2.0);
    if (s->dp) /* the gathered logits, and their gradients unless the forward returned the loss */
        mi.extra_workspace_bytes = (1.0 + (s->output_grad_bytes > 0)) * n * wl->output_bytes;
    eci_memory_estimate(s->ctx, &mi, &res->memory);
    res->host_pinned_bytes = mi.host_bytes;
    res->other_gpu_peak_bytes = res->memory.peak_bytes;
    res->other_gpu_busy_s = s->busy;
    if (s->dp) {
        ec_memory other;
        mi.dp_role = 2;
        mi.extra_workspace_bytes = 0;
        eci_memory_estimate(s->ctx, &mi, &other);
        res->other_gpu_peak_bytes = other.peak_bytes;
        res->other_gpu_busy_s = s->busy - s->opt_gpu_s;
    }
}
