/*
 * step.c: one training step on the CPU/GPU timeline (docs/DESIGN.md 3.1-3.5, modeling.md 10.1).
 * The batch's copy, each micro-step's forward and backward passes (pass.c) with DataParallel's
 * exchanges through GPU 0, DDP's buckets filled as the backward walk produces gradients and
 * FSDP / ZeRO-3's gathers and reductions (comm.c, shard.c), the optimizer and the trainer's
 * bookkeeping (optim.c, trainer.c); the state it runs over is step_state.h, the step's
 * breakdown, rates and memory come from it in step_result.c.
 * Its inputs come from setup.c (links, sharding, dispatch costs, shape, kernel rates), the op costs from
 * compute.c, the host's and GPU's tables from models/.  The input pipeline and the epoch come
 * on top (epoch.c); so does the evaluation step, priced here.
 */
#include "catalog/consts.h"
#include "model/memory.h"
#include "model/optim.h"
#include "model/trainer.h"
#include "sim/step.h"
#include "sim/steprec.h"
#include "sim/warnings.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* ---- communication -----------------------------------------------------------------------
 * DataParallel's data exchanges all pass through GPU 0 and run on its compute stream,
 * serialized with its kernels: they are busy time on GPU 0 and exposed communication. */
static void dp_exchange(timeline *t, const plan *p, double s, double kernels, double *comm_s)
{
    if (s <= 0)
        return;
    gpu_op(t, p->dispatch_fwd_s * kernels, s, kernels, 1);
    *comm_s += s;
}

/* Every field of res zero and its texts empty: their bytes past the NUL are left as they were
 * (the step model's results are read field by field, the texts up to their NUL; ec_predict
 * hands back a result zeroed whole). */
static void step_result_clear(ec_result *res)
{
    memset(res, 0, offsetof(ec_result, warning_text));
    res->warning_text[0] = '\0';
    memset(&res->single_gpu_samples_per_s, 0,
           offsetof(ec_result, price_offer) - offsetof(ec_result, single_gpu_samples_per_s));
    res->price_offer[0] = '\0';
    memset(&res->tokens_per_s, 0, sizeof *res - offsetof(ec_result, tokens_per_s));
}
/* only padding between each text and the field step_result_clear zeroes from after it */
_Static_assert(offsetof(ec_result, single_gpu_samples_per_s) - offsetof(ec_result, warning_text) - EC_WARNING_TEXT_MAX <
                   sizeof(double), "a field follows warning_text in ec_result: step_result_clear must zero it");
_Static_assert(offsetof(ec_result, tokens_per_s) - offsetof(ec_result, price_offer) - sizeof(((ec_result *)0)->price_offer) <
                   sizeof(double), "a field follows price_offer in ec_result: step_result_clear must zero it");

#include "sim/step_state.h"

/* The compute stream's phase `name` ends at end_s, in the trace's record. */
static void phase(const step *s, const char *name, double end_s)
{
    if (s->rec != NULL)
        eci_rec_phase(s->rec, name, end_s);
}

/* moe_a2a_overlap: the share of micro-steps whose forward pairs with another's backward (Megatron-Core
 * combined 1F1B).  Without a pipeline each forward but the first runs with the backward before it:
 * (ga - 1) / ga.  A pipeline's warm-up forwards run alone (megatron/core/pipeline_parallel/schedules.py
 * get_pp_rank_microbatches @core_v0.15.0 L717-734): interleaved, (pp - rank - 1) x 2 + (v - 1) x pp,
 * plus one under this overlap, of v x ga chunk steps, pp + (v - 1) x pp over the ranks on average;
 * plain 1F1B pp - rank - 1, (pp - 1) / 2 on average. */
static double ep_paired_frac(const step *s)
{
    double ga = s->cfg->grad_accum > 0 ? s->cfg->grad_accum : 1, pp = s->r.pp > 1 ? s->r.pp : 1;
    int interleaved = s->r.pp > 1 && s->cfg->pp_schedule == EC_PP_INTERLEAVED && s->cfg->pp_chunks > 1;
    double v = interleaved ? s->cfg->pp_chunks : 1;
    double alone = pp <= 1 ? 1 : interleaved ? pp + (v - 1) * pp : (pp - 1) / 2, all = v * ga;
    return alone >= all ? 0 : 1.0 - alone / all;
}

/* The step's ops at padded length seq, priced: the shape, the workload (workload.c's cache),
 * the GPU's rates with the layout's links (lc_in when worked out already), the op costs
 * (compute.c's cache). */
static int step_price(step *s, double seq, const layout_comm *lc_in)
{
    ec_ctx *ctx = s->ctx;
    const ec_config *cfg = s->cfg;
    int rc;
    s->g = s->r.gpu;
    s->host = s->r.host;
    s->n = cfg->num_gpus;
    s->ga = cfg->grad_accum;

    eci_shape shape;
    eci_setup_shape(ctx, cfg, &s->r, seq, cfg->batch_per_gpu, &shape);
    if ((rc = eci_workload_get(ctx, s->r.net, s->r.task, &shape, &s->wl)) != EC_OK)
        return rc;

    eci_setup_kernel_rates(ctx, cfg, &s->r, s->calib, shape.unmasked, cfg->grad_accum, &s->rates);
    if (cfg->moe_a2a_overlap && s->r.ep > 1)
        s->rates.ep_overlap_frac = ep_paired_frac(s);
    if (lc_in != NULL)
        s->lc = *lc_in;
    else if ((rc = eci_setup_layout_comm(ctx, cfg, &s->r, s->calib, &s->lc)) != EC_OK)
        return rc;
    eci_setup_rates(&s->lc, &s->rates);
    s->comm = &s->lc.comm;
    s->cost = eci_op_costs(ctx, &s->rates, s->wl, s->gpu_scale);
    if (s->cost == NULL)
        return EC_ENOMEM;
    return EC_OK;
}

/* ZeRO-1/2 through apex DistributedFusedLAMB without parameter views into its flat buffer
 * (zero_flat_copies): the gradients copied in, the gathered parameters copied back. */
static int flat_copies(const step *s)
{
    return s->r.strategy == EC_STRATEGY_ZERO && s->cfg->zero_stage < 3 && s->cfg->zero_flat_copies;
}

/* The plan the walks read (walk.h), the bytes each exchange moves, the strategy's buckets or
 * sharded units, the batch's copy. */
static void step_plan(step *s)
{
    ec_ctx *ctx = s->ctx;
    const ec_config *cfg = s->cfg;
    const eci_resolved *r = &s->r;
    const eci_workload *wl = s->wl;
    const eci_host *host = s->host;
    int n = s->n;
    s->p = (plan){.wl = wl, .cost = s->cost, .loop_block = wl->loop_block, .host = host,
                  .dispatch_fwd_s = host->dispatch_fwd_s * s->calib->dispatch_scale,
                  .dispatch_bwd_s = host->dispatch_bwd_s, .op_fwd_s = host->dispatch_fwd_s,
                  .host_factor = r->strategy == EC_STRATEGY_DP ? n : 1, .checkpointing = cfg->checkpointing,
                  .loop_ops = cfg->loop_ops_per_sample * cfg->batch_per_gpu,
                  .loop_syncs = cfg->loop_syncs_per_sample * cfg->batch_per_gpu,
                  .loop_kernel_s = s->rates.floor_s, .loop_copy_s = eci_const(ctx, EC_C_h2d_latency_s),
                  .every_layer = ctx->ddp_every_layer || s->rec != NULL}; /* a trace: every bucket */
    plan *p = &s->p;

    double param_bytes = (cfg->precision == EC_PREC_BF16 || cfg->precision == EC_PREC_FP16) ? 2.0 : 4.0;
    s->grad_bytes = wl->trainable_params * param_bytes, s->bcast_bytes = wl->params * param_bytes;
    s->trained_tensors = wl->trainable_tensors;
    s->reduce_bytes = eci_setup_reduce_elem_bytes(cfg, r, param_bytes);
    p->grad_elem_bytes = p->expert_grad_elem_bytes = s->reduce_bytes; /* AMP all-reduces the fp32 gradients
                                                                       * (modeling.md 6.2) */
    p->gather_elem_bytes = compute_elem_bytes(cfg->precision);
    p->fp8_gather = eci_setup_fp8_params(cfg, r);
    /* ZeRO holds the whole module in 16 bits, a frozen LoRA base too, as memory.c's model_states
     * holds the trained weights: DeepSpeed's engine casts the module (module.half() /
     * .bfloat16()), Megatron's Float16Module wraps all of it */
    double stored_bytes = r->strategy == EC_STRATEGY_ZERO && param_bytes == 4.0 ? 2.0 : param_bytes;
    p->frozen_elem_bytes = eci_setup_frozen_elem_bytes(ctx, cfg, wl, stored_bytes);
    p->overlap_slowdown = eci_const(ctx, EC_C_overlap_compute_slowdown_frac);
    /* zero_flat_copies (apex DistributedFusedLAMB, set_param_views_to_flat_buffer=False): _flatten_grad_mt's
     * multi_tensor_scale reads each gradient and writes it into the flat buffer, on the compute stream */
    p->grad_copy_s_per_byte = flat_copies(s) ? 2.0 * s->gpu_scale / (s->rates.mem_bytes_per_s * s->rates.mem_scale) : 0;
    s->dp = r->strategy == EC_STRATEGY_DP;
    /* Gradient buckets reduced as backward produces them: DDP, FSDP without sharding, ZeRO-1/2
     * (reduce-scatter); FSDP and ZeRO-2 reduce on every micro-step, DDP and ZeRO-1 on the last. */
    s->per_unit = eci_setup_shard(ctx, cfg, r, &s->lc, &s->shard);
    if (s->per_unit && r->strategy == EC_STRATEGY_FSDP && cfg->fsdp_api == EC_FSDP_FULLY_SHARD) {
        /* FSDP2's copies around its collectives (shard.h), memory-bound kernels at the GPU's rate;
         * autograd produces the gradients in the dtype the parameters were gathered in */
        s->shard.copy_bytes_per_s = s->rates.mem_bytes_per_s * s->rates.mem_scale / s->gpu_scale;
        s->shard.grad_read_frac = p->gather_elem_bytes / s->reduce_bytes;
    }
    if (s->per_unit && s->rec != NULL) {
        s->shard.on_launch = eci_rec_shard_launch;
        s->shard.on_launch_arg = s->rec;
    }
    s->bucketed = n > 1 && s->lc.dp.n > 1 && !s->per_unit &&
                  (r->strategy == EC_STRATEGY_DDP || r->strategy == EC_STRATEGY_FSDP || r->strategy == EC_STRATEGY_ZERO);
    s->reduce_each_micro = r->strategy == EC_STRATEGY_FSDP || (r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage >= 2);
    s->busbw = s->comm->busbw_bytes_per_s, s->hop_s = s->comm->hop_latency_s, s->copy_bw = s->comm->copy_bytes_per_s;
    /* DataParallel broadcasts parameters and reduces gradients in coalesced chunks, one NCCL
     * call each (torch/cuda/comm.py), so each call sees the bus bandwidth of a chunk. */
    s->dp_chunk_bytes = eci_const(ctx, EC_C_dp_coalesce_buffer_bytes);
    s->dp_chunks = ceil(s->grad_bytes / s->dp_chunk_bytes), s->bcast_chunks = ceil(s->bcast_bytes / s->dp_chunk_bytes);
    s->output_grad_bytes = r->net->loss_in_forward ? 0 : wl->output_bytes; /* per replica, dp */
    s->root = eci_setup_root_params(wl, &s->root_trained);
    double root_gathered = eci_workload_gather_bytes(p->gather_elem_bytes, p->fp8_gather, s->root_trained,
                                                  eci_workload_root_fp8(wl)) +
                           (s->root - s->root_trained) * p->frozen_elem_bytes;
    s->root_gather_s = s->per_unit ? eci_shard_gather_s(&s->shard, root_gathered) : 0;
    s->root_reduce_s = s->per_unit ? eci_shard_reduce_s(&s->shard, s->root_trained * s->reduce_bytes) : 0;
    s->root_copy_s = s->per_unit ? eci_shard_copy_out_s(&s->shard, root_gathered) : 0;

    /* The batch reaches the GPU (the loader itself is simulated by pipeline.c). */
    s->pinned = cfg->pin_memory;
    double h2d_bw = s->pinned ? s->g->h2d_pinned_bytes_per_s : s->g->h2d_pageable_bytes_per_s;
    if (!s->dp) /* every GPU copies its batch at once: GPUs behind one uplink share it */
        h2d_bw *= s->comm->h2d_share_frac;
    s->h2d_s = wl->input_bytes / h2d_bw + eci_const(ctx, EC_C_h2d_latency_s);
    if (s->dp) /* one process loads the global batch and copies it all to GPU 0 */
        s->h2d_s *= n;
    eci_setup_offload_wait_s(wl, s->cost, eci_setup_act_offload(cfg, r, wl), s->g->h2d_pinned_bytes_per_s,
                             s->offload_wait_s); /* act_offload_layers: over the link the batch takes */
}

/* A routed expert's gradients are reduced over the expert data-parallel group (edp ranks,
 * Megatron-Core's expert layout; its distributed optimizer keeps the experts' buffers apart):
 * the time of a bucket of `bytes` there relative to the data-parallel group the buckets run
 * over, by which the walk weights their bytes (0 where edp = 1: nothing to reduce).  1 where
 * the expert layout is the dense one's (ep x etp = tp). */
static double expert_reduce_frac(const step *s, double bytes)
{
    const eci_resolved *r = &s->r;
    if (r->ep * r->etp == r->tp || s->lc.comm.n <= 1)
        return 1;
    if (r->edp <= 1)
        return 0;
    const eci_group *g = s->sched.group != NULL ? s->sched.group : &s->lc.dp;
    eci_coll coll = s->sched.group != NULL ? s->sched.coll : ECI_COLL_ALLREDUCE;
    double dense = eci_coll_s(s->comm, g, coll, bytes);
    return dense > 0 ? eci_coll_s(s->comm, &s->lc.edp, coll, bytes) / dense : 1;
}

/* The host's dispatch costs: eager, and the model's own passes' (setup.c: torch.compile, CUDA
 * graphs), with each op's forward host cost and the walks' sums at the latter. */
static int step_dispatch(step *s)
{
    ec_ctx *ctx = s->ctx;
    const eci_workload *wl = s->wl;
    const eci_op_cost_t *cost = s->cost;
    plan *p = &s->p;
    /* dispatch_scale (fitted) prices the model's eager forward: its Python (module calls,
     * views) around each kernel.  The rest of the host's work is one op at the host's rate:
     * issuing copies, the trainer's and the optimizer's Python, the C++ autograd engine. */
    s->eager_fwd_s = p->dispatch_fwd_s, s->eager_bwd_s = p->dispatch_bwd_s, s->eager_op_s = p->op_fwd_s;
    s->op_s = s->host->dispatch_fwd_s;
    eci_setup_model_dispatch(ctx, s->cfg, s->host, p, &s->model_fwd_s, &s->model_bwd_s, &s->model_op_s,
                             &s->replay_s);
    /* every forward walk runs at the model's dispatch costs: each op's host cost once, kept
     * beside the cached op costs for the next prediction at the same dispatch costs */
    const double key[ECI_HOST_KEY_VALUES] = {s->model_fwd_s, s->model_op_s, s->model_bwd_s, p->host_factor};
    int valid;
    eci_walk_sum *sums;
    double *fwd_host = eci_op_costs_host(ctx, wl, cost, key, &valid, &sums);
    if (fwd_host == NULL && (fwd_host = eci_scratch_raw(ctx, ECI_SCRATCH_FWD_HOST, wl->n_ops, sizeof *fwd_host)) == NULL)
        return EC_ENOMEM;
    if (!valid) {
        plan at = *p;
        at.dispatch_fwd_s = s->model_fwd_s;
        at.op_fwd_s = s->model_op_s;
        at.dispatch_bwd_s = s->model_bwd_s;
        for (size_t i = 0; i < wl->n_ops; i++)
            fwd_host[i] = fwd_host_s(&at, &cost[i]);
    }
    p->fwd_host = fwd_host;
    if (ctx->walk_op_by_op)
        sums = NULL;
    p->fwd_sum = sums;
    p->bwd_sum = sums != NULL ? sums + wl->n_ops : NULL;
    p->pass_sum = sums != NULL ? sums + 2 * wl->n_ops : NULL;
    p->fwd_host_at[0] = s->model_fwd_s;
    p->fwd_host_at[1] = s->model_op_s;
    p->fwd_host_at[2] = s->model_bwd_s;
    return EC_OK;
}

/* DDP's gradient bucket in bytes: the config's bucket_cap_mb, else Megatron-Core's default under kernels=te,
 * else constants.csv's 25 MiB. */
static double ddp_bucket_bytes(const step *s)
{
    if (s->cfg->bucket_cap_mb > 0)
        return s->cfg->bucket_cap_mb * 1048576.0;
    if (s->cfg->kernels == EC_KERNELS_TE) /* Megatron-Core's DDP: max(4e7, 1e6 x dp x cp) parameters a bucket */
        return s->p.grad_elem_bytes * fmax(eci_const(s->ctx, EC_C_megatron_bucket_min_params),
                                           eci_const(s->ctx, EC_C_megatron_bucket_params_per_rank) * s->lc.dp.n);
    return eci_const(s->ctx, EC_C_ddp_bucket_bytes);
}

/* An empty timeline, the trainer's costs (trainer.c), DDP's Reducer (comm.c) on the job's ring
 * or the data-parallel group. */
static void step_begin(step *s)
{
    ec_ctx *ctx = s->ctx;
    s->copy_batch = s->cfg->data_synthetic == EC_DATA_REAL; /* synthetic or on_gpu: made on the GPU */
    s->syncs = eci_const(ctx, EC_C_syncs_per_micro_step);
    eci_trainer_get(ctx, s->cfg->trainer, &s->tr);
    s->t = (timeline){0};
    s->micro_s[0] = s->micro_s[1] = s->micro_s[2] = 0;
    s->micro_start = s->rep_micro = s->t;
    /* The first micro-step (no gradients to accumulate into), one that the later ones repeat
     * (AccumulateGrad), and under DDP's no_sync (buckets reduced on the last micro-step only)
     * the last, which all-reduces: walked apart from the repeated one, which runs without the
     * hook (the hook's reductions slow kernels that a host-bound step may hide in its gaps, so
     * the no_sync micro-step is not the reducing one less its exposed reductions and slowdown). */
    s->simulate = s->ga < 2 ? s->ga : 2;
    if (s->bucketed && !s->reduce_each_micro && s->ga > 2)
        s->simulate = 3;
    s->rep = s->simulate > 1 ? 1 : 0;
    s->dp_comm_s = 0;
    s->shard_comm[0] = s->shard_comm[1] = s->shard_comm[2] = 0;
    double first_cap = eci_const(ctx, EC_C_ddp_first_bucket_bytes), cap = ddp_bucket_bytes(s);
    if (first_cap > cap || s->cfg->kernels == EC_KERNELS_TE) /* DDP's 1 MiB first bucket (Megatron has none) */
        first_cap = cap;
    if (s->cfg->grad_buckets > 0) /* apex's --dwu-num-blocks: the gradients in grad_buckets equal blocks, each
                                   * reduced once backward has filled it; one block: reduced after backward */
        first_cap = cap = s->wl->trainable_params * s->p.grad_elem_bytes / s->cfg->grad_buckets * (1 - 1e-9);
    eci_ddp_begin(&s->sched, s->comm, first_cap, cap);
    if (s->rec != NULL) {
        eci_rec_begin(s->rec, s->ga, s->simulate);
        s->sched.on_launch = eci_rec_ddp_launch;
        s->sched.on_launch_arg = s->rec;
    }
    if (!s->lc.dp_is_job || s->r.strategy == EC_STRATEGY_ZERO) { /* the data-parallel group of a model-parallel
                                                                   * or networked layout, ZeRO's reduce-scatter
                                                                   * (zero_reduce=all_reduce: DeepSpeed's) */
        int rs = s->r.strategy == EC_STRATEGY_ZERO && s->cfg->zero_reduce == EC_ZERO_REDUCE_SCATTER;
        s->sched.group = rs ? &s->lc.zero_shard : &s->lc.dp; /* zero_shard_size: within the shard group, */
        s->sched.replica = rs ? &s->lc.zero_replica : NULL;  /* then the shard across the replicas */
        s->sched.coll = rs ? ECI_COLL_REDUCE_SCATTER : ECI_COLL_ALLREDUCE;
    }
    s->p.expert_grad_elem_bytes = s->p.grad_elem_bytes * expert_reduce_frac(s, cap);
    s->exposed_total = 0;
    s->micro_fwd0 = s->micro_bwd0 = s->rep_fwd_s = s->rep_bwd_s = 0;
    s->fwd_once = (fwd_memo){0};
}

/* ---- one micro-step ----------------------------------------------------------------------- */
/* Its inputs: the batch copied to the GPU, DataParallel's scatter and replicas, the sharded
 * root unit gathered. */
static void micro_inputs(step *s, int micro)
{
    timeline *t = &s->t;
    plan *p = &s->p;
    const eci_workload *wl = s->wl;
    int n = s->n;
    s->micro_t0 = t->cpu;
    s->micro_start = *t;
    s->micro_fwd0 = p->fwd_s;
    s->micro_bwd0 = p->bwd_s;
    if (s->rec != NULL)
        eci_rec_micro_begin(s->rec, micro, t->cpu);
    if (!s->copy_batch) {
        /* the batch is already on the GPU */
    } else if (s->pinned) {
        gpu_op(t, s->op_s, s->h2d_s, 0, 0);
    } else { /* pageable: the host stages the batch and blocks on the copy */
        host_work(t, CAUSE_H2D, wl->input_bytes / s->host->memcpy_bytes_per_s);
        gpu_op(t, s->op_s, s->h2d_s, 0, 0);
        t->pending[CAUSE_H2D] += s->h2d_s;
        sync_host(t);
    }
    phase(s, "copy batch", t->gpu);
    s->all_reduce = s->bucketed && (s->reduce_each_micro || micro == s->simulate - 1);
    if (s->dp) { /* scatter the inputs from GPU 0; replicate(): Python builds n-1 module
                  * replicas and NCCL broadcasts the parameters from GPU 0 */
        dp_exchange(t, p, (n - 1) * wl->input_bytes / s->copy_bw, n - 1, &s->dp_comm_s);
        host_work(t, CAUSE_DISPATCH, eci_const(s->ctx, EC_C_dp_replicate_tensor_s) * wl->param_tensors * (n - 1));
        dp_exchange(t, p, eci_comm_bcast_chunked_s(s->comm, s->bcast_bytes, s->dp_chunk_bytes), s->bcast_chunks,
                    &s->dp_comm_s);
        phase(s, "DataParallel scatter + broadcast", t->gpu);
    }
    if (s->per_unit) { /* the root unit (embeddings, head) is gathered before the first op runs */
        eci_shard_begin(&s->shard, t->gpu);
        if (s->rec != NULL)
            s->rec->pass = "forward";
        comm_wait(t, eci_shard_launch(&s->shard, t->gpu, s->root_gather_s, 1));
        p->shard = &s->shard;
        phase(s, "wait for the root's all-gather", t->gpu);
        if (s->root_copy_s > 0) { /* FSDP2: the root's parameters copied out of the all-gather buffer */
            gpu_op(t, 0, s->root_copy_s, 1, 1);
            s->p.fwd_s += s->root_copy_s;
            phase(s, "copy out the root's parameters", t->gpu);
        }
    }
}

/* The forward pass at the model's dispatch costs, then DataParallel's gather of the outputs. */
static void micro_forward(step *s)
{
    timeline *t = &s->t;
    plan *p = &s->p;
    p->dispatch_fwd_s = s->model_fwd_s;
    p->dispatch_bwd_s = s->model_bwd_s;
    p->op_fwd_s = s->model_op_s;
    host_work(t, CAUSE_DISPATCH, s->replay_s);
    if (s->rec != NULL)
        s->rec->pass = "forward";
    eci_pass_forward_memo(t, p, s->simulate > 1 ? &s->fwd_once : NULL);
    if (s->offload_wait_s[0] > 0)
        gpu_op(t, 0, s->offload_wait_s[0], 0, 0);
    phase(s, "forward", t->gpu);
    p->dispatch_fwd_s = s->eager_fwd_s;
    p->dispatch_bwd_s = s->eager_bwd_s;
    p->op_fwd_s = s->eager_op_s;
    if (s->dp) /* gather every replica's outputs on GPU 0 */
        dp_exchange(t, p, (s->n - 1) * (s->wl->output_bytes / s->copy_bw + s->hop_s), s->n - 1, &s->dp_comm_s);
    phase(s, "DataParallel gather", t->gpu);
}

/* The backward pass with DDP's hook when this micro-step reduces, the sharded root's reduction,
 * AccumulateGrad after the first micro-step. */
static void micro_backward(step *s, int micro)
{
    timeline *t = &s->t;
    plan *p = &s->p;
    p->ddp = s->all_reduce ? &s->sched : NULL;
    if (s->all_reduce)
        eci_ddp_restart(&s->sched);
    p->overlap_s = 0;
    p->dispatch_fwd_s = s->model_fwd_s; /* checkpointing's recompute */
    p->dispatch_bwd_s = s->model_bwd_s;
    p->op_fwd_s = s->model_op_s;
    host_work(t, CAUSE_DISPATCH, s->replay_s);
    if (s->rec != NULL)
        s->rec->pass = "backward";
    eci_pass_backward(t, p);
    if (s->offload_wait_s[1] > 0)
        gpu_op(t, 0, s->offload_wait_s[1], 0, 0);
    phase(s, "backward", t->gpu);
    p->dispatch_fwd_s = s->eager_fwd_s;
    p->dispatch_bwd_s = s->eager_bwd_s;
    p->op_fwd_s = s->eager_op_s;
    p->ddp = NULL;
    if (s->per_unit) { /* the root's gradients are reduced last; the step waits for every reduction */
        comm_wait(t, eci_shard_launch(&s->shard, t->gpu, s->root_reduce_s, 0));
        phase(s, "wait for the reduce-scatters", t->gpu);
        s->shard_comm[micro] = s->shard.gather_s + s->shard.reduce_s;
        p->overlap_s = s->shard.stretch_s;
        p->shard = NULL;
    }
    /* AccumulateGrad adds into the existing .grad of every tensor; Megatron's fused accumulation
     * (kernels=te) does it in the weight-gradient GEMMs' epilogue: no pass of its own */
    double passes = eci_const(s->ctx, s->cfg->kernels == EC_KERNELS_TE ? EC_C_te_accumulate_grad_passes
                                                                        : EC_C_accumulate_grad_passes);
    if (micro > 0 && passes > 0) {
        double acc = eci_mem_time_s(&s->rates, passes * s->grad_bytes, s->trained_tensors) * s->gpu_scale;
        gpu_op(t, p->dispatch_bwd_s * s->trained_tensors, acc, s->trained_tensors, 1);
        p->bwd_s += acc;
        phase(s, "accumulate gradients", t->gpu);
    }
}

/* DataParallel's gradients through GPU 0, and the buckets still in flight when backward ends. */
/* Megatron's interleaved pipeline (pp_schedule=interleaved, pp_chunks model chunks per stage)
 * runs each chunk's micro-batches in groups of pp (megatron/core/pipeline_parallel/schedules.py
 * @df727128 get_model_chunk_id, is_last_microbatch_for_model_chunk): a chunk's gradients are final
 * once its last group's backward is through, and the schedule then launches that chunk's
 * reduction (grad_sync_func, L622-628; NeMo's distributed optimizer keeps one bucket per chunk,
 * megatron_gpt_model.py @bd0b818a configure_optimizers), which runs while the later chunks' backward
 * goes on; only the last chunk's reduction, or what the windows cannot hide, is left after
 * backward.  Likewise each chunk's parameters are gathered while the chunk before it runs its
 * forward (param_sync_func, L558-563).  The number of chunks; 1 outside such a pipeline. */
static double interleaved_chunks(const step *s)
{
    return s->r.pp > 1 && s->cfg->pp_schedule == EC_PP_INTERLEAVED && s->cfg->pp_chunks > 1 ? s->cfg->pp_chunks : 1;
}

/* overlap_param_gather: the updated parameters are all-gathered under the next step's forward,
 * launched ahead of the parameters' first use (Megatron --overlap-param-gather, NeMo's
 * overlap_param_sync): chunk by chunk under an interleaved pipeline (a group of pp micro-batches
 * per chunk), else bucket by bucket (the DDP bucket size) under the first micro-batch's forward.
 * The GPU waits for the first piece and for what the forward cannot hide, and the forward it
 * hides under is slowed as DDP's backward is beside its all-reduces. */
static double overlapped_gather_s(const step *s, double bytes)
{
    double v = interleaved_chunks(s), fwd = s->rep_fwd_s, wait;
    if (v > 1) {
        double g = s->r.pp < s->ga ? s->r.pp : s->ga;
        wait = eci_chunked_exposed_s(s->zero_gather_s, v, g * fwd / v);
    } else {
        double pieces = ceil(bytes / ddp_bucket_bytes(s));
        wait = eci_chunked_exposed_s(s->zero_gather_s, pieces, fwd / pieces);
    }
    /* the forward beside the hidden part runs slower (overlap_compute_slowdown_frac), counted here */
    return wait + s->p.overlap_slowdown * (s->zero_gather_s - wait);
}

static void micro_exchange(step *s)
{
    timeline *t = &s->t;
    plan *p = &s->p;
    int n = s->n;
    if (s->dp) { /* Gather's backward scatters the gradients of the outputs the loss used:
                  * the logits when the loss runs on GPU 0 after the gather, only the n
                  * per-replica losses when the forward returns them (HF heads given labels;
                  * the gathered logits then have no gradient).  Broadcast's backward
                  * (ReduceAddCoalesced) NCCL-reduces every replica's gradients onto GPU 0 */
        dp_exchange(t, p, (n - 1) * (s->output_grad_bytes / s->copy_bw + s->hop_s), n - 1, &s->dp_comm_s);
        /* ReduceAddCoalesced is Python under the GIL (torch/cuda/comm.py): zip(*inputs)
         * and _take_tensors walk every replica's gradient list before the first NCCL
         * reduce can be issued, so GPU 0 waits for n x param_tensors Python steps. */
        host_work(t, CAUSE_DISPATCH, s->op_s * s->trained_tensors * n);
        dp_exchange(t, p, eci_comm_bcast_chunked_s(s->comm, s->grad_bytes, s->dp_chunk_bytes), s->dp_chunks,
                    &s->dp_comm_s);
        phase(s, "DataParallel reduce", t->gpu);
    }
    s->exposed = 0;
    if (s->all_reduce) { /* the buckets still in flight when backward ends are exposed */
        s->exposed = eci_ddp_finish(&s->sched, t->gpu);
        double v = interleaved_chunks(s), stretch = 0;
        if (v > 1 && !s->reduce_each_micro) { /* the stage's reductions chunk by chunk (interleaved_chunks) */
            double g = s->r.pp < s->ga ? s->r.pp : s->ga, bwd = p->bwd_s - s->micro_bwd0;
            double chunked = eci_chunked_exposed_s(s->sched.comm_busy_s, v, g * bwd / v);
            if (chunked < s->exposed) { /* what it hides beyond this backward slows the compute beside it */
                stretch = p->overlap_slowdown * (s->exposed - chunked);
                p->overlap_s += stretch;
                s->exposed = chunked;
            }
        }
        gpu_op(t, 0, stretch, 0, 1);
        gpu_op(t, p->dispatch_bwd_s, s->exposed, s->sched.launched, 1);
        s->exposed_total += s->exposed;
        phase(s, "gradient reduction wait", t->gpu);
    }
}

/* The trainer's own work and the loop's sync, then what the micro-step added. */
static void micro_end(step *s, int micro, ec_result *res)
{
    timeline *t = &s->t;
    const eci_trainer *tr = &s->tr;
    if (tr->micro_kernels > 0) /* the trainer's own small kernels (HF: the nan filter, tr_loss) */
        gpu_op(t, s->op_s * tr->micro_kernels, s->rates.floor_s * tr->micro_kernels * s->gpu_scale, tr->micro_kernels,
               1);
    host_work(t, CAUSE_DISPATCH, s->op_s * (tr->micro_host_ops + tr->micro_host_ops_per_tensor * s->trained_tensors));
    if (s->syncs > 0)
        sync_host(t);
    phase(s, "trainer + sync", t->cpu);
    s->micro_s[micro] = t->cpu - s->micro_t0;
    if (micro == s->rep) {
        timeline *rep = &s->rep_micro;
        rep->busy = t->busy - s->micro_start.busy;
        rep->copy = t->copy - s->micro_start.copy;
        rep->kernels = t->kernels - s->micro_start.kernels;
        rep->host_busy = t->host_busy - s->micro_start.host_busy;
        for (int c = 0; c < N_CAUSES; c++)
            rep->gap[c] = t->gap[c] - s->micro_start.gap[c];
        s->rep_fwd_s = s->p.fwd_s - s->micro_fwd0;
        s->rep_bwd_s = s->p.bwd_s - s->micro_bwd0;
    }
    if (s->rec != NULL)
        eci_rec_micro_end(s->rec, t->cpu);
    /* backward slowed by the collectives beside it is a cost of communication too */
    res->comm.overlap_s += s->p.overlap_s * (s->reduce_each_micro && s->simulate > 1 && micro == 1 ? s->ga - 1 : 1);
}

/* One or two micro-steps under DDP's no_sync: the one that repeats reduces, and none repeats
 * it.  The micro-step without the reduction, which a pipeline's stages (stages.c) take for a
 * micro-batch, is walked aside (accumulating when there are two) and the timeline put back;
 * only when the caller reads it (rp->micro_wanted), as the step's time does not. */
static void micro_no_sync_aside(step *s, ec_result *res)
{
    timeline t = s->t;
    plan p = s->p;
    eci_step_rec *rec = s->rec; /* a trace draws the step as it runs, not this aside */
    s->rec = NULL;
    micro_inputs(s, 2); /* not the last of simulate <= 2: no reduction */
    micro_forward(s);
    micro_backward(s, s->ga > 1);
    micro_exchange(s);
    micro_end(s, 2, res);
    s->steady_s = s->micro_s[2];
    s->t = t;
    s->p = p;
    s->rec = rec;
}

/* The first two micro-steps walked (three under DDP's no_sync, step_begin); the later ones
 * repeat the second exactly (each ends in a sync), and are added when the step is assembled. */
static void micro_steps(step *s, ec_result *res)
{
    for (int micro = 0; micro < s->simulate; micro++) {
        micro_inputs(s, micro);
        micro_forward(s);
        micro_backward(s, micro);
        micro_exchange(s);
        micro_end(s, micro, res);
    }
    s->steady_s = s->micro_s[s->rep];
    if (s->r.micro_wanted && s->bucketed && !s->reduce_each_micro && s->simulate < 3)
        micro_no_sync_aside(s, res);
    s->scale_rest = (double)(s->ga - s->simulate);
    s->micro_weight = s->reduce_each_micro ? (double)s->ga / s->simulate : 1.0; /* simulated micro-steps stand for ga */
    res->comm.dp_reduce_s = s->exposed_total * s->micro_weight;
}

/* ---- after the last micro-step ------------------------------------------------------------ */
/* Last micro-step: GradScaler, clipping, the optimizer (optim.c; on GPU 0 only under dp,
 * over this GPU's shard). */
static void step_optimizer(step *s)
{
    ec_ctx *ctx = s->ctx;
    const ec_config *cfg = s->cfg;
    timeline *t = &s->t;
    eci_setup_shard_degrees(cfg, &s->r, &s->w_shards, &s->g_shards, &s->o_shards);
    s->opt_params = eci_memory_shard_share(s->wl, 1.0, s->o_shards, eci_expert_split(&s->r));
    eci_phase ph[ECI_N_PHASES];
    eci_step_in si = {.wl = s->wl, .params = s->opt_params, .tensors = s->trained_tensors, .rates = &s->rates,
                      .optimizer = cfg->optimizer, .precision = cfg->precision,
                      .max_grad_norm = eci_trainer_max_grad_norm(ctx, cfg), .dispatch_fwd_s = s->op_s,
                      .dispatch_bwd_s = s->host->dispatch_bwd_s, .gpu_scale = s->gpu_scale,
                      .torch_release = cfg->torch_release, .fp32_states = s->r.strategy == EC_STRATEGY_ZERO,
                      .clip_impl = cfg->clip_impl, .master_weights = cfg->master_weights, .grad_accum = s->ga};
    eci_zero_grad_kept(cfg->zero_grad, cfg->torch_release, &si.zero_fill);
    eci_optim_phases(ctx, &si, ph);
    if (cfg->offload != EC_OFFLOAD_NONE) /* the update runs on the host (step_after_update), not on the GPU */
        ph[ECI_PHASE_OPTIMIZER] = (eci_phase){0};
    s->opt_gpu_s = 0;
    for (int i = 0; i < ECI_N_PHASES; i++) {
        if (ph[i].kernels <= 0)
            continue;
        if (ph[i].serial) { /* the host waits after every tensor: the first wait drains the queue, then
                             * issue and kernels add up */
            sync_host(t);
            host_work(t, CAUSE_DISPATCH, ph[i].host_s);
            gpu_op(t, 0, ph[i].gpu_s, ph[i].kernels, 1);
            sync_host(t);
        } else {
            gpu_op(t, ph[i].host_s, ph[i].gpu_s, ph[i].kernels, 1);
        }
        s->opt_gpu_s += ph[i].gpu_s;
        if (ph[i].sync_after)
            sync_host(t);
    }
    phase(s, "optimizer step", t->gpu);
}

/* The host's update under offload, ZeRO-1/2's gather of the updated parameters, then the
 * loop's bookkeeping (trainer.c) and the step's sync. */
static void step_after_update(step *s, ec_result *res)
{
    ec_ctx *ctx = s->ctx;
    const ec_config *cfg = s->cfg;
    timeline *t = &s->t;
    if (cfg->offload != EC_OFFLOAD_NONE) { /* the optimizer runs on the host (DeepSpeedCPUAdam, FSDP CPUOffload):
                                            * gradients down and parameters back over PCIe, the update on the CPU,
                                            * where every GPU of the node updates its shard at the same time and
                                            * they share the host's memory bandwidth (constants.csv) */
        double pcie = s->opt_params * (s->reduce_bytes + compute_elem_bytes(cfg->precision)) /
                      s->g->h2d_pinned_bytes_per_s;
        double cpu = s->opt_params * s->r.per_node * eci_const(ctx, EC_C_host_optimizer_bytes_per_param) /
                     eci_const(ctx, EC_C_host_optimizer_bytes_per_s);
        if (cfg->offload == EC_OFFLOAD_OPTIMIZER_AND_PARAMS) /* FSDP moved them with each reduction already */
            pcie = 0;
        host_work(t, CAUSE_COMM, cpu + pcie);
        sync_host(t);
        res->comm.offload_s = cpu + pcie;
        phase(s, "optimizer on the host (offload)", t->gpu);
    }
    s->zero_gather_s = s->zero_gather_wait_s = 0;
    if (s->r.strategy == EC_STRATEGY_ZERO && cfg->zero_stage < 3 && s->lc.zero_shard.n > 1) {
        /* ZeRO-1/2: every rank all-gathers the updated 16-bit parameters (FP8 ones under fp8_params) of
         * the others' shards (of its shard group's under zero_shard_size) */
        double eb = s->p.gather_elem_bytes, p16 = s->wl->trainable_params * eb,
               bytes = eci_workload_gather_bytes(eb, s->p.fp8_gather, s->wl->trainable_params, s->wl->fp8_trained_params);
        s->zero_gather_s = eci_coll_s(s->comm, &s->lc.zero_shard, ECI_COLL_ALLGATHER, bytes);
        if (s->r.ep * s->r.etp != s->r.tp) { /* the routed experts' over the expert data-parallel group
                                               * (their GEMMs are TE's grouped linears: FP8 ones) */
            double e = eci_workload_gather_bytes(eb, s->p.fp8_gather, s->wl->expert_params, s->wl->expert_params);
            s->zero_gather_s = eci_coll_s(s->comm, &s->lc.zero_shard, ECI_COLL_ALLGATHER, bytes - e) +
                               eci_coll_s(s->comm, &s->lc.edp, ECI_COLL_ALLGATHER, e);
        }
        s->zero_gather_wait_s = s->zero_gather_s;
        if (cfg->overlap_param_gather) /* under the next step's forward, bucket by bucket (of 16-bit parameters) */
            s->zero_gather_wait_s = overlapped_gather_s(s, p16);
        gpu_op(t, s->op_s, s->zero_gather_wait_s, 1, 1);
        if (s->rec != NULL)
            eci_rec_comm(s->rec, "ZeRO all-gather of the parameters", "zero", t->gpu - s->zero_gather_wait_s,
                         s->zero_gather_wait_s, bytes);
        phase(s, "parameter all-gather (ZeRO)", t->gpu);
    }
    if (flat_copies(s)) { /* apex step(): maybe_cast_mt copies the gathered flat buffer into the model's
                           * parameters (read and write) on the completion stream the next step waits for */
        double bytes = s->wl->trainable_params * compute_elem_bytes(cfg->precision);
        double copy_s = 2.0 * bytes * s->gpu_scale / (s->rates.mem_bytes_per_s * s->rates.mem_scale);
        gpu_op(t, s->op_s, copy_s, 1, 1);
        s->opt_gpu_s += copy_s; /* the optimizer's step() runs it */
        phase(s, "copy the gathered parameters into the model (apex)", t->gpu);
    }
    host_work(t, CAUSE_DISPATCH, s->host->step_overhead_s +
              s->op_s * (s->tr.step_host_ops + s->tr.step_host_ops_per_tensor * s->trained_tensors));
    sync_host(t);
    phase(s, "bookkeeping + sync", t->cpu);
}

/* The layout's figures and the rates' warnings in res; what the step learned in rp. */
static void step_finish(step *s, eci_resolved *rp, ec_result *res)
{
    const ec_config *cfg = s->cfg;
    const eci_resolved *r = &s->r;
    const eci_workload *wl = s->wl;
    res->busbw_bytes_per_s = s->n > 1 ? s->busbw : 0;

    /* The rest (input pipeline, epoch, warnings) is eci_predict's; hand back the rates' warnings. */
    if (s->rates.warnings)
        eci_warn_add(res, s->rates.warnings, s->rates.warning_text);
    eci_warn_fp32_convs(s->ctx, cfg, s->g, wl, res);
    rp->input_bytes = wl->input_bytes;
    rp->tokens = wl->tokens;
    rp->micro_s = s->steady_s;
    /* a pipeline sends the stage's input in the compute dtype (Megatron's bf16 hidden states) */
    rp->stage_input_bytes = wl->n_blocks > 0 ? wl->blocks[0].input_elems * compute_elem_bytes(cfg->precision) : 0;
    res->tokens_per_s = wl->tokens * s->ga * r->dp / s->step_s;
    res->dp = r->dp;
    res->tp = r->tp;
    res->pp = r->pp;
    res->cp = r->cp;
    res->ep = r->ep;
}

/* One optimizer step at padded length seq, without the input pipeline (pipeline.c adds it):
 * fills res's step time, breakdown, kernel counts, FLOPs and memory; gpu_scale multiplies
 * every compute kernel (gpu_step_s calibrates it); *host_s is the host time of the step. */
int eci_step_model(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib, double seq,
                   double gpu_scale, const layout_comm *lc, ec_result *res, double *host_s)
{
    step_result_clear(res);
    step s;
    s.ctx = ctx;
    s.cfg = cfg;
    s.r = *rp;
    s.calib = calib;
    s.gpu_scale = gpu_scale;
    s.rec = ctx->step_rec;
    int rc;
    if ((rc = step_price(&s, seq, lc)) != EC_OK)
        return rc;
    step_plan(&s);
    if ((rc = step_dispatch(&s)) != EC_OK)
        return rc;
    step_begin(&s);
    micro_steps(&s, res);
    step_optimizer(&s);
    step_after_update(&s, res);
    if ((rc = eci_step_breakdown(&s, res)) != EC_OK)
        return rc;
    eci_step_rates(&s, res, host_s);
    eci_step_memory(&s, res);
    step_finish(&s, rp, res);
    return EC_OK;
}

/* One evaluation batch per GPU (docs/DESIGN.md 3.5): the model in eval mode (no dropout) and
 * under no_grad, forward only, at eval_batch; its input copy (real data), the loop's read of
 * its loss or predictions (eval_syncs_per_step), and what its own DataLoader adds: loading in
 * the loop without workers, else the workers' rate when they are slower than the step. */
int eci_step_eval(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *calib, double seq,
                  double gpu_scale, double *out_s)
{
    *out_s = 0;
    int batch = cfg->eval_batch > 0 ? cfg->eval_batch : cfg->batch_per_gpu, rc;
    eci_shape shape;
    eci_setup_shape(ctx, cfg, r, seq, batch, &shape);
    shape.inference = 1;
    const eci_workload *wl;
    if ((rc = eci_workload_get(ctx, r->net, r->task, &shape, &wl)) != EC_OK)
        return rc;
    eci_rates rates;
    eci_setup_kernel_rates(ctx, cfg, r, calib, shape.unmasked, 1, &rates); /* each batch casts the weights */
    layout_comm lc; /* the layout's groups price a tensor-parallel model's collectives */
    if ((rc = eci_setup_layout_comm(ctx, cfg, r, calib, &lc)) != EC_OK)
        return rc;
    eci_setup_rates(&lc, &rates);
    const eci_op_cost_t *cost = eci_op_costs(ctx, &rates, wl, gpu_scale);
    if (cost == NULL)
        return EC_ENOMEM;
    const eci_host *host = r->host;
    int n = cfg->num_gpus;
    plan p = {.wl = wl, .cost = cost, .loop_block = -1, .host = host,
              .dispatch_fwd_s = host->dispatch_fwd_s * calib->dispatch_scale,
              .dispatch_bwd_s = host->dispatch_bwd_s, .op_fwd_s = host->dispatch_fwd_s,
              .host_factor = r->strategy == EC_STRATEGY_DP ? n : 1,
              .loop_kernel_s = rates.floor_s, .loop_copy_s = eci_const(ctx, EC_C_h2d_latency_s)};
    double replay_s;
    eci_setup_model_dispatch(ctx, cfg, host, &p, &p.dispatch_fwd_s, &p.dispatch_bwd_s, &p.op_fwd_s, &replay_s);
    timeline t = {0};
    if (cfg->data_synthetic == EC_DATA_REAL) {
        double bw = cfg->pin_memory ? r->gpu->h2d_pinned_bytes_per_s : r->gpu->h2d_pageable_bytes_per_s;
        double h2d_s = wl->input_bytes * (r->strategy == EC_STRATEGY_DP ? n : 1) / bw + eci_const(ctx, EC_C_h2d_latency_s);
        if (!cfg->pin_memory)
            host_work(&t, CAUSE_H2D, wl->input_bytes / host->memcpy_bytes_per_s);
        gpu_op(&t, host->dispatch_fwd_s, h2d_s, 0, 0);
        if (!cfg->pin_memory)
            sync_host(&t);
    }
    host_work(&t, CAUSE_DISPATCH, replay_s);
    eci_pass_forward(&t, &p);
    if (eci_const(ctx, EC_C_eval_syncs_per_step) > 0)
        sync_host(&t);
    double step_s = t.cpu;
    if (cfg->data_synthetic == EC_DATA_REAL) { /* the evaluation DataLoader's CPU work per batch */
        double per_sample = cfg->sample_cpu_s >= 0 ? cfg->sample_cpu_s : host->collate_per_sample_s;
        if (cfg->sample_cpu_s < 0 && cfg->tokenize == EC_TOKENIZE_ON_THE_FLY && r->text)
            per_sample += seq / (cfg->tokenizer == EC_TOKENIZER_PYTHON ? host->python_tokenizer_tokens_per_s
                                                                        : host->fast_tokenizer_tokens_per_s);
        double load_s = per_sample * batch * (r->strategy == EC_STRATEGY_DP ? n : 1);
        if (cfg->num_workers == 0) {
            step_s += load_s;
        } else {
            int procs = r->strategy == EC_STRATEGY_DDP ? n : 1, cores = host->cores / procs > 1 ? host->cores / procs : 1;
            double par = cfg->num_workers < cores ? cfg->num_workers : cores;
            if (load_s / par > step_s)
                step_s = load_s / par;
        }
    }
    *out_s = step_s;
    return EC_OK;
}

