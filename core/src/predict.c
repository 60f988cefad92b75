/*
 * predict.c: one training step on a CPU/GPU timeline (DESIGN 3.1-3.5, modeling.md 10.1).
 * The host issues each op after paying its dispatch cost (hosts.csv); the GPU runs it when
 * it is issued and the previous kernel is done (compute.c prices it); syncs (loss.item(),
 * GradScaler's inf check, pageable copies) make the host wait for the GPU.  Idle GPU time
 * is charged to whatever the host was doing: dispatch, loading, copying.  Small batches
 * thus come out CPU-bound from the same arithmetic that makes large ones compute-bound.
 * Gradient communication (DDP buckets, DataParallel's broadcast and reduce), memory
 * (memory.c) and the epoch come on top.  Inputs: the context's models/ tables.
 */
#include "compute.h"
#include "consts.h"
#include "memory.h"
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the timeline ---------------------------------------------------------------------- */
enum cause { CAUSE_DISPATCH = 0, CAUSE_LOADER, CAUSE_H2D, N_CAUSES };

typedef struct timeline {
    double cpu, gpu;             /* when each side is next free */
    double busy;                 /* kernel time */
    double copy;                 /* copy-engine time on the compute stream */
    double gap[N_CAUSES];        /* idle GPU time by cause */
    double pending[N_CAUSES];    /* host work since the last kernel was issued */
    double kernels;
    double host_busy;            /* host time spent issuing, loading, copying */
} timeline;

static void host_work(timeline *t, int cause, double s)
{
    t->cpu += s;
    t->host_busy += s;
    t->pending[cause] += s;
}

/* The GPU sat idle from t->gpu to `until`: charge that gap to the host work that kept it. */
static void charge_gap(timeline *t, double until)
{
    double gap = until - t->gpu, total = 0;
    for (int c = 0; c < N_CAUSES; c++)
        total += t->pending[c];
    if (gap > 0) {
        for (int c = 0; c < N_CAUSES; c++)
            t->gap[c] += total > 0 ? gap * t->pending[c] / total : (c == CAUSE_DISPATCH ? gap : 0);
        t->gpu = until;
    }
    memset(t->pending, 0, sizeof t->pending);
}

static void gpu_op(timeline *t, double host_s, double gpu_s, double kernels, int is_kernel)
{
    host_work(t, CAUSE_DISPATCH, host_s);
    if (t->cpu > t->gpu)
        charge_gap(t, t->cpu);
    else
        memset(t->pending, 0, sizeof t->pending);
    t->gpu += gpu_s;
    if (is_kernel)
        t->busy += gpu_s;
    else
        t->copy += gpu_s;
    t->kernels += kernels;
}

static void sync_host(timeline *t)
{
    if (t->cpu > t->gpu)
        charge_gap(t, t->cpu);
    t->cpu = t->gpu;
    memset(t->pending, 0, sizeof t->pending);
}

/* ---- one micro-step --------------------------------------------------------------------- */
typedef struct plan {
    const eci_workload *wl;
    const eci_op_cost_t *cost;   /* per op */
    size_t first_layer, end_layer;
    const eci_host *host;
    double dispatch_fwd_s, dispatch_bwd_s;
    double host_factor;          /* DataParallel: one Python process issues every replica */
    int checkpointing;
    double fwd_s, bwd_s;         /* kernel time accumulated by the walk */
} plan;

static double fwd_host_s(const plan *p, const eci_op *op)
{
    double per = op->kind == ECI_OP_CAST ? p->dispatch_bwd_s : p->dispatch_fwd_s;
    return per * op->fwd_kernels * p->host_factor;
}

static void forward_op(timeline *t, plan *p, size_t i)
{
    const eci_op_cost_t *c = &p->cost[i];
    gpu_op(t, fwd_host_s(p, &p->wl->ops[i]), c->fwd_s, c->fwd_kernels, 1);
    p->fwd_s += c->fwd_s;
}

static void backward_op(timeline *t, plan *p, size_t i)
{
    const eci_op_cost_t *c = &p->cost[i];
    if (c->bwd_kernels == 0)
        return;
    gpu_op(t, p->dispatch_bwd_s * c->bwd_kernels * p->host_factor, c->bwd_s, c->bwd_kernels, 1);
    p->bwd_s += c->bwd_s;
}

/* One repetition of the layer block: its forward ops. */
static void forward_layer(timeline *t, plan *p)
{
    for (size_t i = p->first_layer; i < p->end_layer; i++)
        forward_op(t, p, i);
}

/* One repetition of the layer block in backward: recompute under checkpointing, then
 * the backward ops in reverse. */
static void backward_layer(timeline *t, plan *p)
{
    if (p->checkpointing) { /* torch.utils.checkpoint re-runs the layer's forward first */
        double before = p->fwd_s;
        forward_layer(t, p);
        p->bwd_s += p->fwd_s - before; /* recompute is backward time */
        p->fwd_s = before;
    }
    for (size_t i = p->end_layer; i-- > p->first_layer;)
        backward_op(t, p, i);
}

/* Run the layer block `layers` times.  The timeline is translation-invariant: what a layer
 * adds depends only on how far the host is ahead of the GPU (cpu - gpu) and on its pending
 * host work, so each layer is walked in a frame where the GPU starts at 0.  When a layer
 * leaves that state as it found it, or the GPU stays ahead and never idles (the host's lead
 * cannot grow), every later layer adds exactly the same, and the rest are added by one
 * multiplication: a 24-layer model costs two or three walks instead of 24. */
static void repeat_layers(timeline *t, plan *p, int layers, void (*one)(timeline *, plan *))
{
    for (int l = 0; l < layers; l++) {
        double d0 = t->cpu - t->gpu, fwd0 = p->fwd_s, bwd0 = p->bwd_s;
        timeline loc = {.cpu = d0};
        memcpy(loc.pending, t->pending, sizeof loc.pending);
        one(&loc, p);
        double d1 = loc.cpu - loc.gpu;
        int same_state = d1 == d0 && memcmp(loc.pending, t->pending, sizeof loc.pending) == 0;
        int never_idle = d1 <= d0;
        for (int c = 0; c < N_CAUSES; c++)
            never_idle = never_idle && loc.gap[c] == 0 && loc.pending[c] == 0;
        double reps = same_state || never_idle ? layers - l : 1;
        t->cpu += reps * (loc.cpu - d0);
        t->gpu += reps * loc.gpu;
        t->busy += reps * loc.busy;
        t->copy += reps * loc.copy;
        t->kernels += reps * loc.kernels;
        t->host_busy += reps * loc.host_busy;
        for (int c = 0; c < N_CAUSES; c++)
            t->gap[c] += reps * loc.gap[c];
        memcpy(t->pending, loc.pending, sizeof t->pending);
        p->fwd_s = fwd0 + reps * (p->fwd_s - fwd0);
        p->bwd_s = bwd0 + reps * (p->bwd_s - bwd0);
        if (reps > 1)
            break;
    }
}

static void forward_pass(timeline *t, plan *p)
{
    const eci_workload *wl = p->wl;
    for (size_t i = 0; i < p->first_layer; i++)
        forward_op(t, p, i);
    if (p->first_layer < p->end_layer)
        repeat_layers(t, p, wl->layers, forward_layer);
    for (size_t i = p->end_layer; i < wl->n_ops; i++)
        forward_op(t, p, i);
}

static void backward_pass(timeline *t, plan *p)
{
    const eci_workload *wl = p->wl;
    for (size_t i = wl->n_ops; i-- > p->end_layer;)
        backward_op(t, p, i);
    if (p->first_layer < p->end_layer)
        repeat_layers(t, p, wl->layers, backward_layer);
    for (size_t i = p->first_layer; i-- > 0;)
        backward_op(t, p, i);
}

/* ---- communication ----------------------------------------------------------------------- */
/* Ring all-reduce (nccl-tests PERFORMANCE.md): t = alpha + 2(n-1)/n x S / busbw. */
double eci_allreduce_s(double bytes, int n, double busbw_bytes_per_s, double alpha_s)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    return alpha_s + 2.0 * (n - 1) / n * bytes / busbw_bytes_per_s;
}

/* Bus bandwidth of a ring over the GPUs of the config. */
static double bus_bandwidth(const ec_ctx *ctx, const eci_gpu *g, const char *topology, int num_gpus, int nodes,
                            double network_bytes_per_s)
{
    double pcie = g->h2d_pinned_bytes_per_s * eci_const(ctx, EC_C_pcie_busbw_frac);
    double intra;
    if (strcmp(topology, "nvlink") == 0 && g->nvlink_bytes_per_s > 0)
        intra = g->nvlink_bytes_per_s * eci_const(ctx, EC_C_nvlink_busbw_frac);
    else if (strcmp(topology, "pcie-host") == 0 || !g->p2p)
        intra = pcie / 2.0; /* no peer-to-peer: every byte goes through host memory twice */
    else if (strcmp(topology, "a16-board") == 0) {
        /* 4 GPUs per board share one x16 uplink; peers on a board talk through the switch. */
        int boards = (num_gpus / nodes + g->gpus_per_board - 1) / g->gpus_per_board;
        intra = boards > 1 ? pcie * 2.0 / g->gpus_per_board : pcie;
    } else
        intra = pcie;
    if (nodes <= 1)
        return intra;
    double per_gpu_net = network_bytes_per_s > 0 ? network_bytes_per_s / ((double)num_gpus / nodes)
                                                 : eci_const(ctx, EC_C_internode_bytes_per_s);
    return intra < per_gpu_net ? intra : per_gpu_net;
}

/* DDP: buckets of ddp_bucket_bytes all-reduced as backward produces them (reverse order);
 * the last bucket (first layers, embeddings) only starts after backward ends, the rest
 * hides behind backward unless it takes longer.  backward_s is backward's wall time on
 * the GPU, idle gaps included: NCCL's stream runs while the GPU waits for the host too, so
 * a faster GPU (less kernel time, same host-bound span) hides no less. */
static double ddp_exposed_s(const ec_ctx *ctx, double grad_bytes, double last_bucket_bytes, int n, double busbw,
                            double backward_s)
{
    double alpha = eci_const(ctx, EC_C_allreduce_latency_s);
    double bucket = eci_const(ctx, EC_C_ddp_bucket_bytes);
    if (last_bucket_bytes > grad_bytes)
        last_bucket_bytes = grad_bytes;
    double rest = grad_bytes - last_bucket_bytes;
    double n_rest = ceil(rest / bucket);
    double t_rest = n_rest * alpha + (rest > 0 ? eci_allreduce_s(rest, n, busbw, 0) : 0);
    double t_last = eci_allreduce_s(last_bucket_bytes, n, busbw, alpha);
    double hidden = t_rest < backward_s ? t_rest : backward_s;
    return t_last + (t_rest - hidden);
}

/* ---- helpers ----------------------------------------------------------------------------- */
/* The set_mask bit of a config key (0 for an unknown name). */
static uint64_t key_bit(const char *name)
{
    for (size_t i = 0; i < ec_config_key_count(); i++)
        if (strcmp(ec_config_key_name(i), name) == 0)
            return (uint64_t)1 << i;
    return 0;
}

static void add_warning(ec_result *res, unsigned bit, const char *text)
{
    if (res->warnings & bit)
        return;
    res->warnings |= bit;
    size_t len = strlen(res->warning_text);
    snprintf(res->warning_text + len, sizeof res->warning_text - len, "%s%s", len ? "; " : "", text);
}

/* Host seconds per sample for the input pipeline (collate, and tokenization on the fly). */
static double sample_cpu_s(const ec_config *cfg, const eci_host *host, double tokens_per_sample)
{
    if (cfg->sample_cpu_s >= 0)
        return cfg->sample_cpu_s;
    double s = host->collate_per_sample_s;
    if (cfg->tokenize == EC_TOKENIZE_ON_THE_FLY && tokens_per_sample > 0) {
        double rate = cfg->tokenizer == EC_TOKENIZER_PYTHON ? host->python_tokenizer_tokens_per_s
                                                            : host->fast_tokenizer_tokens_per_s;
        s += tokens_per_sample / rate;
    }
    return s;
}

int eci_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r)
{
    memset(r, 0, sizeof *r);
    if (!ctx->models_loaded)
        return eci_error(ctx, EC_EMISUSE, "models are not loaded: call ec_ctx_load_models first");
    if (cfg->gpu[0] == '\0')
        return eci_error(ctx, EC_EINVAL, "key 'gpu' is required (`epochcast gpus` lists the ids)");
    if ((r->gpu = eci_hw_find(ctx, cfg->gpu)) == NULL)
        return EC_ENOTFOUND;
    if ((r->host = eci_host_find(ctx, cfg->host)) == NULL)
        return EC_ENOTFOUND;
    if (cfg->model[0] == '\0')
        return eci_error(ctx, EC_EINVAL, "key 'model' is required (`epochcast models` lists the ids)");
    if ((r->net = eci_net_find(ctx, cfg->model)) == NULL)
        return EC_ENOTFOUND;
    const char *task = cfg->task[0] != '\0' ? cfg->task : r->net->default_task;
    if ((r->task = eci_task_parse(task)) < 0)
        return eci_error(ctx, EC_ENOTFOUND, "unknown task '%s' (classify, squad, pretrain, lm, imagenet)", task);
    if (cfg->batch_per_gpu < 1)
        return eci_error(ctx, EC_EINVAL, "key 'batch_per_gpu' is required: samples per GPU per micro-step (>= 1)");
    if (cfg->num_gpus < 1 || cfg->grad_accum < 1 || cfg->nodes < 1)
        return eci_error(ctx, EC_EINVAL, "num_gpus, grad_accum and nodes must be >= 1");
    if (cfg->padding != EC_PAD_MAX_LENGTH || cfg->lengths[0] != '\0')
        return eci_error(ctx, EC_ENOTSUP, "key 'padding': padding=%s and lengths= need the input-pipeline model, "
                         "which this build does not have yet; use padding=max_length",
                         cfg->padding == EC_PAD_DYNAMIC ? "dynamic" : cfg->padding == EC_PAD_BUCKETED ? "bucketed"
                                                                                                     : "max_length");
    if (cfg->compile)
        return eci_error(ctx, EC_ENOTSUP, "key 'compile': torch.compile is not modelled by this build yet; use compile=0");
    if (cfg->gpu_step_s > 0)
        return eci_error(ctx, EC_ENOTSUP, "key 'gpu_step_s': a measured GPU step time needs the input-pipeline "
                         "model, which this build does not have yet");
    r->seq = cfg->seq_len > 0 ? cfg->seq_len : r->net->default_seq_len;
    r->image_size = cfg->image_size > 0 ? cfg->image_size : r->net->image_size;
    r->strategy = cfg->strategy;
    /* strategy is the DESIGN default: single for one GPU, ddp for several unless given */
    if (cfg->num_gpus > 1 && r->strategy == EC_STRATEGY_SINGLE) {
        if (cfg->set_mask & key_bit("strategy"))
            return eci_error(ctx, EC_EINVAL, "strategy=single with num_gpus=%d: use strategy=ddp or dp", cfg->num_gpus);
        r->strategy = EC_STRATEGY_DDP;
    }
    if (cfg->num_gpus == 1)
        r->strategy = EC_STRATEGY_SINGLE;
    r->nodes = cfg->nodes;
    int per_node = (int)eci_const(ctx, EC_C_gpus_per_node);
    if (!(cfg->set_mask & key_bit("nodes")) && cfg->num_gpus > per_node)
        r->nodes = (cfg->num_gpus + per_node - 1) / per_node; /* more than one server */
    if (r->nodes > cfg->num_gpus)
        return eci_error(ctx, EC_EINVAL, "nodes=%d exceeds num_gpus=%d", r->nodes, cfg->num_gpus);
    r->topology = cfg->topology[0] != '\0' ? cfg->topology : r->gpu->default_topology;
    return EC_OK;
}

/* ---- the prediction ---------------------------------------------------------------------- */
int ec_predict(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    if (ctx == NULL || cfg == NULL || res == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_predict: NULL argument") : EC_EMISUSE;
    return eci_predict(ctx, cfg, NULL, res);
}

int eci_predict(ec_ctx *ctx, const ec_config *cfg, const eci_calib *fixed, ec_result *res)
{
    memset(res, 0, sizeof *res);
    eci_resolved r;
    int rc = eci_resolve(ctx, cfg, &r);
    if (rc != EC_OK)
        return rc;
    const eci_gpu *g = r.gpu;
    const eci_host *host = r.host;
    int n = cfg->num_gpus, ga = cfg->grad_accum;

    eci_shape shape = {.precision = cfg->precision, .batch = cfg->batch_per_gpu, .seq = r.seq,
                       .seq_sq = (double)r.seq * r.seq, .image_size = r.image_size,
                       .mask_bytes = eci_const(ctx, EC_C_dropout_mask_bytes_per_elem),
                       .mlm_frac = eci_const(ctx, EC_C_mlm_mask_frac),
                       .eager_attention = cfg->attention == EC_ATTN_EAGER,
                       .gelu_new_kernels = (int)eci_const(ctx, EC_C_gelu_new_kernels)};
    const eci_workload *wl;
    if ((rc = eci_workload_get(ctx, r.net, r.task, &shape, &wl)) != EC_OK)
        return rc;

    eci_calib calib;
    if (fixed != NULL)
        calib = *fixed;
    else if ((rc = eci_calib_current(ctx, cfg, &calib)) != EC_OK)
        return rc;
    eci_rates rates;
    eci_rates_init(ctx, g, cfg->precision, &calib, &rates);
    eci_op_cost_t cost[ECI_MAX_OPS];
    size_t first = wl->n_ops, end = wl->n_ops;
    for (size_t i = 0; i < wl->n_ops; i++) {
        if (wl->ops[i].twin < i) /* same shape as an earlier op: same cost */
            cost[i] = cost[wl->ops[i].twin];
        else
            eci_op_cost(ctx, &rates, &wl->ops[i], &cost[i]);
        if (wl->ops[i].layer) {
            if (first == wl->n_ops)
                first = i;
            end = i + 1;
        }
    }
    if (first == wl->n_ops)
        first = end = 0;

    plan p = {.wl = wl, .cost = cost, .first_layer = first, .end_layer = end, .host = host,
              .dispatch_fwd_s = host->dispatch_fwd_s * calib.dispatch_scale,
              .dispatch_bwd_s = host->dispatch_bwd_s * calib.dispatch_scale,
              .host_factor = r.strategy == EC_STRATEGY_DP ? n : 1, .checkpointing = cfg->checkpointing};

    double param_bytes = (cfg->precision == EC_PREC_BF16 || cfg->precision == EC_PREC_FP16) ? 2.0 : 4.0;
    double grad_bytes = wl->params * param_bytes;
    double busbw = n > 1 ? bus_bandwidth(ctx, g, r.topology, n, r.nodes, cfg->network_bytes_per_s) : 0;

    /* Input pipeline, issue-2 level: loading in the loop with num_workers = 0, otherwise a
     * steady-state stall if the workers cannot keep up (the discrete-event pipeline refines it). */
    double tokens_per_sample = wl->tokens / cfg->batch_per_gpu;
    double batch_cpu_s = cfg->data_synthetic ? 0 : sample_cpu_s(cfg, host, r.net->vocab > 0 ? tokens_per_sample : 0) *
                                                       cfg->batch_per_gpu;
    int pinned = cfg->pin_memory;
    double h2d_bw = pinned ? g->h2d_pinned_bytes_per_s : g->h2d_pageable_bytes_per_s;
    double h2d_s = wl->input_bytes / h2d_bw + eci_const(ctx, EC_C_h2d_latency_s);
    if (r.strategy == EC_STRATEGY_DP) /* scatter of the whole batch from GPU 0's host copy */
        h2d_s *= n;

    double syncs = eci_const(ctx, EC_C_syncs_per_micro_step);
    timeline t = {0};
    double micro_s[2] = {0, 0};
    double bwd_span_s = 0; /* GPU wall time of the last backward: what DDP's buckets overlap */
    timeline micro_start = t, last_micro = t; /* last_micro: what the last simulated micro-step added */
    int simulate = ga < 2 ? ga : 2;
    for (int micro = 0; micro < simulate; micro++) {
        double start = t.cpu;
        micro_start = t;
        if (cfg->num_workers == 0 && batch_cpu_s > 0)
            host_work(&t, CAUSE_LOADER, batch_cpu_s);
        if (pinned) {
            gpu_op(&t, p.dispatch_fwd_s, h2d_s, 0, 0);
        } else { /* pageable: the host stages the batch and blocks on the copy */
            host_work(&t, CAUSE_H2D, wl->input_bytes / host->memcpy_bytes_per_s);
            gpu_op(&t, p.dispatch_fwd_s, h2d_s, 0, 0);
            t.pending[CAUSE_H2D] += h2d_s;
            sync_host(&t);
        }
        if (r.strategy == EC_STRATEGY_DP) { /* replicate the parameters from GPU 0 */
            double bcast = (n - 1) * grad_bytes / busbw;
            gpu_op(&t, p.dispatch_fwd_s * n, bcast, n - 1, 1);
            res->breakdown.comm_s += bcast;
        }
        forward_pass(&t, &p);
        double bwd_start = t.gpu;
        backward_pass(&t, &p);
        bwd_span_s = t.gpu - bwd_start;
        if (micro > 0) { /* AccumulateGrad adds into the existing .grad of every tensor */
            double acc = eci_mem_time_s(&rates, 3.0 * grad_bytes, (int)wl->param_tensors);
            gpu_op(&t, p.dispatch_bwd_s * wl->param_tensors, acc, wl->param_tensors, 1);
            p.bwd_s += acc;
        }
        if (r.strategy == EC_STRATEGY_DP) { /* reduce every replica's gradients onto GPU 0 */
            double reduce = (n - 1) * grad_bytes / busbw;
            gpu_op(&t, p.dispatch_bwd_s * n, reduce, n - 1, 1);
            res->breakdown.comm_s += reduce;
        }
        if (syncs > 0)
            sync_host(&t);
        micro_s[micro] = t.cpu - start;
        last_micro.busy = t.busy - micro_start.busy;
        last_micro.copy = t.copy - micro_start.copy;
        last_micro.kernels = t.kernels - micro_start.kernels;
        last_micro.host_busy = t.host_busy - micro_start.host_busy;
        for (int c = 0; c < N_CAUSES; c++)
            last_micro.gap[c] = t.gap[c] - micro_start.gap[c];
    }
    /* Micro-steps after the second repeat the second exactly (each ends in a sync). */
    double scale_rest = ga > 2 ? (double)(ga - 2) : 0;

    /* Last micro-step: DDP's exposed all-reduce, then the optimizer. */
    if (r.strategy == EC_STRATEGY_DDP) {
        double last_bucket = wl->ops[0].params * param_bytes; /* embeddings or stem: ready last */
        double first_bucket_min = eci_const(ctx, EC_C_ddp_first_bucket_bytes);
        if (last_bucket < first_bucket_min)
            last_bucket = first_bucket_min;
        double exposed = ddp_exposed_s(ctx, grad_bytes, last_bucket, n, busbw, bwd_span_s);
        gpu_op(&t, p.dispatch_bwd_s, exposed, 1, 1);
        res->breakdown.comm_s += exposed;
    }
    double opt_bytes, opt_ops;
    switch (cfg->optimizer) {
    case EC_OPT_SGD:
        opt_bytes = eci_const(ctx, EC_C_opt_sgd_bytes_per_param);
        opt_ops = eci_const(ctx, EC_C_opt_foreach_ops_sgd);
        break;
    case EC_OPT_LAMB:
        opt_bytes = eci_const(ctx, EC_C_opt_lamb_bytes_per_param);
        opt_ops = eci_const(ctx, EC_C_opt_foreach_ops_lamb);
        break;
    case EC_OPT_ADAMW_FUSED:
        opt_bytes = eci_const(ctx, EC_C_opt_adam_fused_bytes_per_param);
        opt_ops = 1;
        break;
    default:
        opt_bytes = eci_const(ctx, EC_C_opt_adam_foreach_bytes_per_param);
        opt_ops = eci_const(ctx, EC_C_opt_foreach_ops_adam);
        break;
    }
    opt_bytes *= param_bytes / 4.0;
    double chunks = ceil(wl->param_tensors / eci_const(ctx, EC_C_foreach_tensors_per_kernel));
    double opt_gpu_s = 0;
    if (cfg->precision == EC_PREC_AMP_FP16 && cfg->optimizer != EC_OPT_ADAMW_FUSED) {
        /* GradScaler: unscale + inf check over every gradient, then found_inf.item() */
        double s = eci_mem_time_s(&rates, eci_const(ctx, EC_C_gradscaler_bytes_per_param) * wl->params, (int)chunks);
        gpu_op(&t, p.dispatch_fwd_s + p.dispatch_bwd_s * chunks, s, chunks, 1);
        opt_gpu_s += s;
        sync_host(&t);
    }
    double opt_s = eci_mem_time_s(&rates, opt_bytes * wl->params, (int)(opt_ops * chunks));
    gpu_op(&t, p.dispatch_fwd_s * opt_ops + p.dispatch_bwd_s * opt_ops * chunks, opt_s, opt_ops * chunks, 1);
    opt_gpu_s += opt_s;
    host_work(&t, CAUSE_DISPATCH, host->step_overhead_s);
    sync_host(&t);

    /* Assemble the step: simulated part plus the repeated micro-steps. */
    double step_s = t.cpu + scale_rest * micro_s[simulate - 1];
    double rest_frac = simulate > 1 ? scale_rest : 0;
    double micro_fwd = p.fwd_s / simulate, micro_bwd = p.bwd_s / simulate;
    res->breakdown.forward_s = p.fwd_s + rest_frac * micro_fwd;
    res->breakdown.backward_s = p.bwd_s + rest_frac * micro_bwd;
    res->breakdown.optimizer_s = opt_gpu_s;
    /* Micro-steps 3..ga repeat the last simulated one; once-per-step work is not scaled. */
    res->breakdown.cpu_overhead_s = t.gap[CAUSE_DISPATCH] + scale_rest * last_micro.gap[CAUSE_DISPATCH];
    res->breakdown.loader_s = t.gap[CAUSE_LOADER] + scale_rest * last_micro.gap[CAUSE_LOADER];
    res->breakdown.h2d_s = t.gap[CAUSE_H2D] + t.copy + scale_rest * (last_micro.gap[CAUSE_H2D] + last_micro.copy);
    if (r.strategy == EC_STRATEGY_DP) /* broadcast and reduce happen every micro-step */
        res->breakdown.comm_s *= (double)ga / simulate;
    double busy = t.busy + scale_rest * last_micro.busy;
    res->kernels_per_step = t.kernels + scale_rest * last_micro.kernels;
    double host_busy = t.host_busy + scale_rest * last_micro.host_busy;

    /* Workers in the background: a stall when one batch per worker period is slower than a micro-step. */
    if (cfg->num_workers > 0 && batch_cpu_s > 0) {
        double cores = host->cores - 1 > 1 ? host->cores - 1 : 1;
        double workers = cfg->num_workers < cores ? cfg->num_workers : cores;
        double period = batch_cpu_s / workers;
        double micro = step_s / ga;
        if (period > micro) {
            double stall = (period - micro) * ga;
            step_s += stall;
            res->breakdown.loader_s += stall;
        }
    }

    res->step_s = step_s;
    res->gpu_busy_s = busy;
    res->cpu_issue_s = host_busy;
    res->samples_per_s = (double)cfg->batch_per_gpu * ga * n / step_s;
    res->gpu_util_frac = busy / step_s > 1.0 ? 1.0 : busy / step_s;
    res->flop_per_step = 3.0 * wl->model_flop * ga;
    res->mfu_frac = res->flop_per_step / (step_s * rates.gemm_peak_flop_per_s);

    /* Bottleneck: compute when kernels fill most of the step, else the largest idle cause. */
    const ec_breakdown *b = &res->breakdown;
    double idle[] = {b->cpu_overhead_s, b->loader_s, b->h2d_s, b->comm_s};
    ec_bottleneck which[] = {EC_BOTTLENECK_CPU, EC_BOTTLENECK_INPUT, EC_BOTTLENECK_H2D, EC_BOTTLENECK_COMM};
    res->bottleneck = EC_BOTTLENECK_COMPUTE;
    double compute_s = b->forward_s + b->backward_s + b->optimizer_s, worst = 0;
    for (int i = 0; i < 4; i++)
        if (idle[i] > worst) {
            worst = idle[i];
            if (idle[i] > compute_s)
                res->bottleneck = which[i];
        }

    /* Memory. */
    eci_mem_in mi = {.wl = wl, .precision = cfg->precision, .optimizer = cfg->optimizer,
                     .checkpointing = cfg->checkpointing, .ddp = r.strategy == EC_STRATEGY_DDP, .num_gpus = n,
                     .dynamic_shapes = cfg->padding != EC_PAD_MAX_LENGTH, .capacity_bytes = g->memory_bytes,
                     .allocator_scale = 1.0};
    eci_memory_estimate(ctx, &mi, &res->memory);

    /* Epoch and run (deterministic here; the input-pipeline simulation gives intervals). */
    double global_batch = (double)cfg->batch_per_gpu * n * ga;
    if (cfg->dataset_samples > 0) {
        res->steps_per_epoch = ceil(cfg->dataset_samples / global_batch);
        double epoch = res->steps_per_epoch * step_s;
        if (cfg->num_workers > 0 && !cfg->persistent_workers)
            epoch += host->worker_start_s + batch_cpu_s;
        if (cfg->eval_samples > 0) /* forward only, same batch, all GPUs */
            epoch += cfg->eval_samples / ((double)cfg->batch_per_gpu * n) * micro_fwd;
        res->epoch_s = epoch;
        res->run_s = epoch * cfg->epochs;
        if (cfg->tokenize == EC_TOKENIZE_UPFRONT && r.net->vocab > 0 && !cfg->data_synthetic)
            res->run_s += cfg->dataset_samples * tokens_per_sample / (host->fast_tokenizer_tokens_per_s * host->cores);
        res->epoch_p10_s = res->epoch_p50_s = res->epoch_p90_s = epoch;
    }

    /* Warnings. */
    if (rates.warnings)
        add_warning(res, rates.warnings, rates.warning_text);
    if (!res->memory.fits)
        add_warning(res, EC_WARN_DOES_NOT_FIT, "predicted peak memory exceeds the GPU's capacity (out of memory)");
    if (r.net->max_positions > 0 && r.seq > r.net->max_positions)
        add_warning(res, EC_WARN_SEQ_TRUNCATED, "seq_len exceeds the model's position embeddings");
    if (g->compute_capability < 5.0)
        add_warning(res, EC_WARN_UNSUPPORTED_GPU, "current PyTorch (CUDA 12) cannot run on Kepler GPUs");
    if (!g->measured)
        add_warning(res, EC_WARN_MODEL_DEFAULTED, "no measured GEMM efficiency for this GPU: architecture defaults used");
    return EC_OK;
}

int ec_max_batch(ec_ctx *ctx, const ec_config *cfg, int limit, int *out_batch)
{
    if (ctx == NULL || cfg == NULL || out_batch == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_max_batch: NULL argument") : EC_EMISUSE;
    *out_batch = 0;
    if (limit <= 0)
        limit = 65536;
    ec_config c = *cfg;
    ec_result res;
    /* Peak memory grows with the batch, so bisect on fits over [lo fits, hi does not]. */
    c.batch_per_gpu = 1;
    int rc = ec_predict(ctx, &c, &res);
    if (rc != EC_OK)
        return rc;
    if (!res.memory.fits)
        return EC_OK;
    int lo = 1, hi = limit + 1;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        c.batch_per_gpu = mid;
        if ((rc = ec_predict(ctx, &c, &res)) != EC_OK)
            return rc;
        if (res.memory.fits)
            lo = mid;
        else
            hi = mid;
    }
    *out_batch = lo;
    return EC_OK;
}

const char *ec_bottleneck_name(ec_bottleneck b)
{
    static const char *const names[] = {"compute", "cpu", "input", "h2d", "comm"};
    return (unsigned)b < sizeof names / sizeof names[0] ? names[b] : "unknown";
}
