/*
 * predict.c: one training step on a CPU/GPU timeline (docs/DESIGN.md 3.1-3.5, modeling.md 10.1).
 * The host issues each op after paying its dispatch cost (hosts.csv); the GPU runs it when
 * it is issued and the previous kernel is done (compute.c prices it); syncs (loss.item(),
 * GradScaler's inf check, pageable copies) make the host wait for the GPU.  Idle GPU time
 * is charged to whatever the host was doing: dispatch, loading, copying.  Small batches
 * thus come out CPU-bound from the same arithmetic that makes large ones compute-bound.
 * Gradient communication (comm.c: DDP buckets filled as the backward walk produces
 * gradients; DataParallel's scatter, broadcast, gather and reduce through GPU 0), memory
 * (memory.c) and the epoch come on top.  Inputs: the context's models/ tables.
 */
#include "model/comm.h"
#include "model/compute.h"
#include "catalog/consts.h"
#include "model/memory.h"
#include "model/optim.h"
#include "sim/pipeline.h"
#include "sim/predict.h"
#include "model/trainer.h"
#include "model/shard.h"
#include "catalog/price.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Knots of the step model over the padded length: an attention-quadratic, tile-stepped curve
 * is within a few per cent of linear between 16 knots; a numerical choice, not a model constant. */
#define PAD_KNOTS 16

/* ---- the timeline ---------------------------------------------------------------------- */
enum cause { CAUSE_DISPATCH = 0, CAUSE_LOADER, CAUSE_H2D, CAUSE_COMM, N_CAUSES };

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

/* The GPU waits for a collective on another stream that ends at until_s (sharded data
 * parallelism's gathers and reductions): idle time charged to communication. */
static void comm_wait(timeline *t, double until_s)
{
    if (until_s > t->gpu) {
        t->gap[CAUSE_COMM] += until_s - t->gpu;
        t->gpu = until_s;
    }
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
    const eci_block *blk;        /* the repeated block being walked */
    int loop_block;              /* the block the Python loop runs before (-1: before every op) */
    const eci_host *host;
    double dispatch_fwd_s, dispatch_bwd_s;
    double op_fwd_s;             /* a further kernel of a multi-kernel forward op (no module Python) */
    double host_factor;          /* DataParallel: one Python process issues every replica's forward */
    int checkpointing;
    double fwd_s, bwd_s;         /* kernel time accumulated by the walk */
    /* A per-sample Python loop in forward (seed 002): batch x loop_syncs iterations, each
     * creating a tensor on the device (a tiny blocking copy) and issuing loop_ops / loop_syncs
     * one-element kernels, every one of them with its own autograd node in backward. */
    double loop_ops, loop_syncs; /* per micro-step (already x batch) */
    double loop_kernel_s;        /* a one-element kernel: the GPU's kernel floor */
    double loop_copy_s;          /* a tiny blocking host-to-device copy (host latency) */
    eci_ddp_sched *ddp;          /* DDP's Reducer on the micro-step that all-reduces, else NULL */
    double grad_elem_bytes;      /* bytes per gradient element */
    double overlap_slowdown;     /* compute slowdown while an all-reduce runs beside it */
    double overlap_s;            /* backward time added by that slowdown (this micro-step) */
    eci_shard *shard;            /* FSDP / ZeRO-3: per-unit gathers and reductions, else NULL */
    double gather_elem_bytes;    /* ...bytes per trained parameter gathered (the compute dtype) */
    double frozen_elem_bytes;    /* ...per frozen parameter (LoRA's base, as stored) */
    const double *fwd_host;      /* fwd_host_s of every op at the dispatch costs fwd_host_at, worked out
                                    once per step (the forward walks' costs), or NULL */
    double fwd_host_at[3];       /* ...dispatch_fwd_s, op_fwd_s, dispatch_bwd_s they were worked out at */
    eci_walk_sum *fwd_sum;       /* the forward runs' sums at fwd_host_at, by first op (n_ops), or NULL */
    eci_walk_sum *bwd_sum;       /* ...the backward runs' (n_ops; also at fwd_host_at), or NULL */
    eci_walk_sum *pass_sum;      /* ...whole passes' (pass_walk; ECI_PASS_SUMS), or NULL */
    /* The DDP walk's least slacks since ddp_layers reset them (ddp_steady_reps): how far the
     * GPU stayed ahead of the host before each kernel (>= 0: the host never held it up), and
     * how far the stream stayed busy past each kernel's fully slowed end and each bucket's
     * ready time (>= 0: every kernel ran beside an all-reduce, every bucket waited for the stream). */
    double slack_host_s, slack_comm_s;
    int every_layer;             /* the DDP walk prices every repetition (ctx->ddp_every_layer) */
} plan;

static double fwd_host_s(const plan *p, const eci_op_cost_t *c)
{
    if (c->host_cast)
        return p->dispatch_bwd_s * c->host_kernels * p->host_factor;
    return (p->dispatch_fwd_s * c->host_ops + p->op_fwd_s * (c->host_kernels - c->host_ops)) * p->host_factor;
}

/* The timeline's running sums while a run of ops is walked, in locals the compiler keeps in
 * registers (the walk is most of a prediction's time). */
typedef struct walk {
    double cpu, gpu, busy, kernels, host_busy, gap_dispatch, kernel_s;
} walk;

static walk walk_begin(const timeline *t, double kernel_s)
{
    return (walk){.cpu = t->cpu, .gpu = t->gpu, .busy = t->busy, .kernels = t->kernels, .host_busy = t->host_busy,
                  .gap_dispatch = t->gap[CAUSE_DISPATCH], .kernel_s = kernel_s};
}

static void walk_end(timeline *t, const walk *w, double *kernel_s)
{
    t->cpu = w->cpu;
    t->gpu = w->gpu;
    t->busy = w->busy;
    t->kernels = w->kernels;
    t->host_busy = w->host_busy;
    t->gap[CAUSE_DISPATCH] = w->gap_dispatch;
    *kernel_s = w->kernel_s;
}

/* gpu_op for a kernel issued when the host has nothing pending (the previous op was a gpu_op):
 * its dispatch is the only pending work, so charge_gap's shares come to gap x host_s / host_s
 * for the dispatch (the same expression, so the same rounding) and exact zeros for the others. */
static inline void walk_kernel(walk *w, double host_s, double gpu_s, double kernels)
{
    w->cpu += host_s;
    w->host_busy += host_s;
    if (w->cpu > w->gpu) {
        double gap = w->cpu - w->gpu;
        w->gap_dispatch += host_s > 0 ? gap * host_s / host_s : gap;
        w->gpu = w->cpu;
    }
    w->gpu += gpu_s;
    w->busy += gpu_s;
    w->kernels += kernels;
}

/* DDP's hook while backward_ops walks: what it updates for every op, in locals (as walk's
 * sums; stores through p would make the compiler reload them after each) and back in p and
 * the Reducer when the walk ends. */
typedef struct ddp_walk {
    eci_ddp_sched *s;
    double free_s;               /* s->comm_free_s */
    double overlap_s, slack_comm_s, slowdown, elem_bytes;
} ddp_walk;

static ddp_walk ddp_walk_begin(const plan *p)
{
    return (ddp_walk){.s = p->ddp, .free_s = p->ddp->comm_free_s, .overlap_s = p->overlap_s,
                      .slack_comm_s = p->slack_comm_s, .slowdown = p->overlap_slowdown,
                      .elem_bytes = p->grad_elem_bytes};
}

static void ddp_walk_end(plan *p, const ddp_walk *dw)
{
    p->overlap_s = dw->overlap_s;
    p->slack_comm_s = dw->slack_comm_s;
}

/* Op c's backward kernels just ended at gpu: those that ran beside an all-reduce were slowed
 * by it (eci_overlap_stretch_s), then its gradients are ready and DDP's autograd hook fills a
 * bucket.  Returns the slowdown, which the caller adds to its running gpu and busy sums (by
 * value, so that the walk's sums stay in registers). */
static inline double ddp_grads_ready(ddp_walk *dw, const eci_op_cost_t *c, double gpu)
{
    double bwd_s = c->bwd_s, slow = 0, free_s = dw->free_s;
    /* the stream is busy past the kernel slowed in full, gpu - bwd_s + bwd_s (1 + slowdown),
     * which is also past its bucket's ready time gpu + slow */
    double slack = free_s - gpu - bwd_s * dw->slowdown;
    if (slack < dw->slack_comm_s)
        dw->slack_comm_s = slack;
    if (free_s > gpu - bwd_s) { /* (an idle stream slows nothing: skip the call) */
        slow = eci_overlap_stretch_s(free_s, gpu - bwd_s, bwd_s, dw->slowdown);
        dw->overlap_s += slow;
    }
    if (c->grad_params > 0) { /* trained parameters (not LoRA's frozen base) */
        eci_ddp_ready(dw->s, gpu + slow, c->grad_params * dw->elem_bytes);
        dw->free_s = dw->s->comm_free_s;
    }
    return slow;
}

/* The run's walk in one step: the GPU idles until the host has issued the op that holds it up
 * most (when any does), then runs the run's kernels.  Equal to walking it op by op but for
 * rounding (the sums are added in another order). */
static void walk_sum_apply(timeline *t, const eci_walk_sum *s, double *kernel_s)
{
    double start = t->cpu + s->lead_s;
    if (start > t->gpu) {
        t->gap[CAUSE_DISPATCH] += start - t->gpu;
        t->gpu = start;
    }
    t->cpu += s->host_s;
    t->host_busy += s->host_s;
    t->gpu += s->gpu_s;
    t->busy += s->gpu_s;
    t->kernels += s->kernels;
    *kernel_s += s->gpu_s;
}

/* The sum slot of the run from..to in sums (by from), or NULL when the run has fewer than
 * three walked ops (as cheap to walk) or the slot holds another run (walk it op by op). */
static eci_walk_sum *walk_sum_slot(eci_walk_sum *sums, size_t from, size_t to, size_t walked)
{
    if (sums == NULL || walked < 3)
        return NULL;
    eci_walk_sum *s = &sums[from];
    if (s->to == 0) {
        *s = eci_walk_sum_none();
        s->from = from;
        s->to = to;
    } else if (s->from != from || s->to != to) {
        return NULL;
    }
    return s;
}

/* The forward ops from..to-1 in order.  The first goes through gpu_op (the host may have work
 * pending before it); after it nothing is pending, and the rest are walked in locals.  Their
 * host costs come from p->fwd_host when it was worked out at the current dispatch costs, and
 * then the rest is walked once, summed, and the sums used on later walks of the same run. */
static void forward_ops(timeline *t, plan *p, size_t from, size_t to)
{
    if (from >= to)
        return;
    const eci_op_cost_t *cost = p->cost;
    const double *host = p->fwd_host != NULL && p->dispatch_fwd_s == p->fwd_host_at[0] &&
                                 p->op_fwd_s == p->fwd_host_at[1] && p->dispatch_bwd_s == p->fwd_host_at[2]
                             ? p->fwd_host
                             : NULL;
    gpu_op(t, host != NULL ? host[from] : fwd_host_s(p, &cost[from]), cost[from].fwd_s, cost[from].fwd_kernels, 1);
    p->fwd_s += cost[from].fwd_s;
    eci_walk_sum *sum = host != NULL ? walk_sum_slot(p->fwd_sum, from, to, to - from - 1) : NULL;
    if (sum != NULL) {
        if (sum->lead_s == -INFINITY) /* first walk of this run: sum it */
            for (size_t i = from + 1; i < to; i++)
                eci_walk_sum_add(sum, host[i], cost[i].fwd_s, cost[i].fwd_kernels);
        walk_sum_apply(t, sum, &p->fwd_s);
        return;
    }
    walk w = walk_begin(t, p->fwd_s);
    if (host != NULL) {
        for (size_t i = from + 1; i < to; i++) {
            walk_kernel(&w, host[i], cost[i].fwd_s, cost[i].fwd_kernels);
            w.kernel_s += cost[i].fwd_s;
        }
    } else {
        for (size_t i = from + 1; i < to; i++) {
            walk_kernel(&w, fwd_host_s(p, &cost[i]), cost[i].fwd_s, cost[i].fwd_kernels);
            w.kernel_s += cost[i].fwd_s;
        }
    }
    walk_end(t, &w, &p->fwd_s);
}

/* One past the last op of from..to-1 whose backward launches kernels (from: none does). */
static size_t bwd_end(const eci_op_cost_t *cost, size_t from, size_t to)
{
    while (to > from && cost[to - 1].bwd_kernels == 0)
        to--;
    return to;
}

/* backward_ops under DDP: the hook after each op's kernels, and the least slack of the host
 * before each kernel (ddp_steady_units).  Apart from backward_ops' plain walk, which the
 * single-GPU predictions run. */
static void backward_ops_ddp(timeline *t, plan *p, size_t from, size_t to)
{
    const eci_op_cost_t *cost = p->cost;
    size_t i = bwd_end(cost, from, to);
    if (i == from)
        return;
    i--; /* the first op that launches: through gpu_op, as in forward_ops */
    double host_s = p->dispatch_bwd_s * cost[i].bwd_kernels;
    double slack_host_s = t->gpu - (t->cpu + host_s) < p->slack_host_s ? t->gpu - (t->cpu + host_s) : p->slack_host_s;
    gpu_op(t, host_s, cost[i].bwd_s, cost[i].bwd_kernels, 1);
    p->bwd_s += cost[i].bwd_s;
    ddp_walk dw = ddp_walk_begin(p);
    double slow = ddp_grads_ready(&dw, &cost[i], t->gpu);
    t->gpu += slow;
    t->busy += slow;
    walk w = walk_begin(t, p->bwd_s);
    double dispatch_s = p->dispatch_bwd_s;
    for (long k = cost[i].bwd_prev; k >= (long)from; k = cost[k].bwd_prev) { /* the ops that launch */
        const eci_op_cost_t *c = &cost[k];
        host_s = dispatch_s * c->bwd_kernels;
        if (w.gpu - (w.cpu + host_s) < slack_host_s)
            slack_host_s = w.gpu - (w.cpu + host_s);
        walk_kernel(&w, host_s, c->bwd_s, c->bwd_kernels);
        w.kernel_s += c->bwd_s;
        slow = ddp_grads_ready(&dw, c, w.gpu);
        w.gpu += slow;
        w.busy += slow;
    }
    p->slack_host_s = slack_host_s;
    ddp_walk_end(p, &dw);
    walk_end(t, &w, &p->bwd_s);
}

/* The backward ops to-1 down to from (ops without a backward launch nothing).  DDP's hook
 * sees each op's gradients ready when its kernels are issued. */
static void backward_ops(timeline *t, plan *p, size_t from, size_t to)
{
    if (p->ddp != NULL) {
        backward_ops_ddp(t, p, from, to);
        return;
    }
    const eci_op_cost_t *cost = p->cost;
    size_t i = bwd_end(cost, from, to);
    if (i == from)
        return;
    i--; /* the first op that launches: through gpu_op, as in forward_ops */
    gpu_op(t, p->dispatch_bwd_s * cost[i].bwd_kernels, cost[i].bwd_s, cost[i].bwd_kernels, 1);
    p->bwd_s += cost[i].bwd_s;
    eci_walk_sum *sum = p->dispatch_bwd_s == p->fwd_host_at[2] ? walk_sum_slot(p->bwd_sum, from, to, i - from) : NULL;
    if (sum != NULL) { /* as in forward_ops */
        if (sum->lead_s == -INFINITY)
            for (long k = cost[i].bwd_prev; k >= (long)from; k = cost[k].bwd_prev)
                eci_walk_sum_add(sum, p->dispatch_bwd_s * cost[k].bwd_kernels, cost[k].bwd_s, cost[k].bwd_kernels);
        walk_sum_apply(t, sum, &p->bwd_s);
        return;
    }
    walk w = walk_begin(t, p->bwd_s);
    for (long k = cost[i].bwd_prev; k >= (long)from; k = cost[k].bwd_prev) {
        const eci_op_cost_t *c = &cost[k];
        /* Backward runs in the C++ autograd engine, one thread per device: no GIL, even under dp. */
        walk_kernel(&w, p->dispatch_bwd_s * c->bwd_kernels, c->bwd_s, c->bwd_kernels);
        w.kernel_s += c->bwd_s;
    }
    walk_end(t, &w, &p->bwd_s);
}

/* Add what the timeline did between `before` and now `times` more times.  Exact when each
 * repetition starts from the same relative state (after a sync, or a host always ahead). */
static void timeline_repeat(timeline *t, const timeline *before, double times)
{
    timeline d = *t;
    t->cpu += times * (d.cpu - before->cpu);
    t->gpu += times * (d.gpu - before->gpu);
    t->busy += times * (d.busy - before->busy);
    t->copy += times * (d.copy - before->copy);
    t->kernels += times * (d.kernels - before->kernels);
    t->host_busy += times * (d.host_busy - before->host_busy);
    for (int c = 0; c < N_CAUSES; c++)
        t->gap[c] += times * (d.gap[c] - before->gap[c]);
}

/* One iteration of the Python loop: an optional blocking tensor creation, then its ops. */
static void loop_iteration(timeline *t, plan *p, int backward, double ops, int sync)
{
    if (backward) {
        gpu_op(t, p->dispatch_bwd_s * ops, p->loop_kernel_s * ops, ops, 1); /* autograd threads: no GIL */
        p->bwd_s += p->loop_kernel_s * ops;
        return;
    }
    if (sync) { /* torch.tensor(..., device=cuda): the host builds it, waits for the stream,
                 * and copies a few bytes: latency the host pays, not GPU work */
        host_work(t, CAUSE_DISPATCH, p->op_fwd_s * p->host_factor);
        sync_host(t);
        host_work(t, CAUSE_DISPATCH, p->loop_copy_s * p->host_factor);
    }
    /* bare tensor ops at the host's rate (no module around them: not dispatch_scale'd) */
    gpu_op(t, p->op_fwd_s * ops * p->host_factor, p->loop_kernel_s * ops, ops, 1);
    p->fwd_s += p->loop_kernel_s * ops;
}

/* Did two consecutive iterations move the timeline by the same amounts?  Then every later
 * one will too (the state relative to the iteration's start repeats). */
static int same_delta(const timeline *a0, const timeline *a1, const timeline *b0, const timeline *b1)
{
    double da[3 + N_CAUSES] = {a1->cpu - a0->cpu, a1->gpu - a0->gpu, (a1->gpu - a1->cpu) - (a0->gpu - a0->cpu)};
    double db[3 + N_CAUSES] = {b1->cpu - b0->cpu, b1->gpu - b0->gpu, (b1->gpu - b1->cpu) - (b0->gpu - b0->cpu)};
    for (int c = 0; c < N_CAUSES; c++) {
        da[3 + c] = a1->gap[c] - a0->gap[c];
        db[3 + c] = b1->gap[c] - b0->gap[c];
    }
    for (int i = 0; i < 3 + N_CAUSES; i++)
        if (fabs(da[i] - db[i]) > 1e-12 * (fabs(da[i]) + fabs(db[i])) + 1e-18)
            return 0;
    return 1;
}

/* The whole loop: simulate iterations until one repeats the previous exactly (at once after
 * a sync; in backward, once the host has used up its lead over the GPU), then repeat it. */
static void python_loop(timeline *t, plan *p, int backward)
{
    if (p->loop_ops <= 0 && p->loop_syncs <= 0)
        return;
    int sync = p->loop_syncs > 0;
    double iters = sync ? p->loop_syncs : p->loop_ops;
    double ops = sync ? p->loop_ops / p->loop_syncs : 1.0;
    double whole = floor(iters), done = 0;
    double *kernel_s = backward ? &p->bwd_s : &p->fwd_s;
    timeline prev0 = *t, prev1 = *t;
    while (done < whole) {
        timeline start = *t;
        double start_s = *kernel_s;
        loop_iteration(t, p, backward, ops, sync);
        done++;
        if (done >= 2 && same_delta(&prev0, &prev1, &start, t)) {
            double rest = whole - done;
            *kernel_s += rest * (*kernel_s - start_s);
            timeline_repeat(t, &start, rest);
            break;
        }
        prev0 = start;
        prev1 = *t;
    }
    if (iters > whole) /* a fractional iteration: its ops without a sync */
        loop_iteration(t, p, backward, ops * (iters - whole), 0);
}

/* One repetition of the current block: its forward ops. */
static void forward_layer(timeline *t, plan *p)
{
    forward_ops(t, p, p->blk->begin, p->blk->end);
}

/* One repetition of the current block in backward: recompute under checkpointing (blocks
 * that are checkpointing units), then the backward ops in reverse. */
static void backward_layer(timeline *t, plan *p)
{
    if (p->checkpointing == EC_CKPT_SELECTIVE && p->blk->checkpoint) { /* Megatron's selective recompute:
                                                                        * the unfused attention core only */
        double before = p->fwd_s;
        for (size_t i = p->blk->begin; i < p->blk->end; i++)
            if (p->wl->ops[i].attn_core && p->wl->ops[i].kind != ECI_OP_ATTN)
                forward_ops(t, p, i, i + 1);
        p->bwd_s += p->fwd_s - before;
        p->fwd_s = before;
    } else if (p->checkpointing && p->blk->checkpoint) { /* torch.utils.checkpoint re-runs the layer's forward first */
        double before = p->fwd_s;
        forward_layer(t, p);
        p->bwd_s += p->fwd_s - before; /* recompute is backward time */
        p->fwd_s = before;
    }
    backward_ops(t, p, p->blk->begin, p->blk->end);
}

/* Equal but for rounding: a layer walked from a start a few ulps away ends a few ulps away. */
static int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (fabs(a) + fabs(b)) + 1e-18;
}

/* Run the current block `layers` times.  The timeline is translation-invariant: what a layer
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
        int same_state = near(d1, d0) && memcmp(loc.pending, t->pending, sizeof loc.pending) == 0;
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

/* The current block's repetitions are sharded units: their compute (walked from t0 to now)
 * is laid beside the units' gathers and reductions (shard.c); the GPU ends when the last
 * unit does, its waits charged to communication and its slowed kernels to busy time. */
static void shard_units(timeline *t, plan *p, double t0, int backward)
{
    int reps = p->blk->reps;
    if (reps < 1)
        return;
    double unit_s = (t->gpu - t0) / reps, stretch0 = p->shard->stretch_s;
    double trained = p->blk->trainable, gather = trained * p->gather_elem_bytes +
                                                (p->blk->params - trained) * p->frozen_elem_bytes;
    double end = backward ? eci_shard_backward(p->shard, t0, unit_s, reps, gather, trained * p->grad_elem_bytes)
                          : eci_shard_forward(p->shard, t0, unit_s, reps, gather);
    double stretch = p->shard->stretch_s - stretch0;
    t->busy += stretch;
    t->gpu += stretch;
    comm_wait(t, end);
}

/* ---- a whole pass in one step ------------------------------------------------------------
 * A pass that only issues kernels (no Python loop, no DDP hook, no sharded units, no selective
 * recompute) is one run in walk order, its blocks' repetitions included: its first op goes
 * through gpu_op (the host may have work pending before it), and the sums of the rest
 * (walk_sum_apply) are built once per cached op costs and dispatch costs from the blocks'
 * sums, a repetition by the closed form of max-plus algebra: n runs of s, each starting
 * where the last ended, add n times host_s, gpu_s and kernels, and their lead is
 * s.lead_s + (n - 1) max(0, host_s - gpu_s), the lead of the last repetition when the host
 * gains on the GPU in each, of the first when it loses.  Equal to walking op by op but for
 * rounding, like the runs' sums; a 24-layer pass costs a few lookups instead of two or three
 * walks per block. */
typedef struct pass_build {
    int started;                 /* the pass's first op is taken */
    eci_walk_sum first, rest;    /* that op (host_s, gpu_s, kernels) and the sums of the rest */
} pass_build;

typedef struct pass_seg {
    eci_walk_sum all, tail;      /* the segment's sums, and without the pass's first op */
    int took_first;              /* the pass's first op is in this segment */
} pass_seg;

static void seg_op(pass_build *b, pass_seg *s, double host_s, double gpu_s, double kernels)
{
    eci_walk_sum_add(&s->all, host_s, gpu_s, kernels);
    if (b->started) {
        eci_walk_sum_add(&s->tail, host_s, gpu_s, kernels);
        return;
    }
    b->started = s->took_first = 1;
    b->first = (eci_walk_sum){.host_s = host_s, .gpu_s = gpu_s, .kernels = kernels};
}

/* Forward ops from..to-1 in order (also checkpointing's recompute), backward ops to-1 down to
 * from that launch kernels, at the costs forward_ops and backward_ops walk them with. */
static void seg_forward(pass_build *b, pass_seg *s, const plan *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        seg_op(b, s, p->fwd_host[i], p->cost[i].fwd_s, p->cost[i].fwd_kernels);
}

static void seg_backward(pass_build *b, pass_seg *s, const plan *p, size_t from, size_t to)
{
    for (size_t i = to; i-- > from;)
        if (p->cost[i].bwd_kernels != 0)
            seg_op(b, s, p->dispatch_bwd_s * p->cost[i].bwd_kernels, p->cost[i].bwd_s, p->cost[i].bwd_kernels);
}

static pass_seg seg_begin(void)
{
    return (pass_seg){.all = eci_walk_sum_none(), .tail = eci_walk_sum_none()};
}

/* Segment s, run reps times, joins the pass: its first repetition without the pass's first op
 * when that is in it, the others whole. */
static void seg_end(pass_build *b, const pass_seg *s, int reps)
{
    if (reps < 1)
        return;
    eci_walk_sum_then(&b->rest, s->took_first ? &s->tail : &s->all);
    if (reps > 1) {
        eci_walk_sum more = eci_walk_sum_repeat(&s->all, reps - 1);
        eci_walk_sum_then(&b->rest, &more);
    }
}

static void build_forward(pass_build *b, const plan *p)
{
    const eci_workload *wl = p->wl;
    size_t at = 0;
    for (size_t k = 0; k < wl->n_blocks; k++) {
        const eci_block *blk = &wl->blocks[k];
        pass_seg s = seg_begin();
        seg_forward(b, &s, p, at, blk->begin);
        seg_end(b, &s, 1);
        if (blk->reps >= 1) { /* (a block of no repetitions: its ops are not walked) */
            s = seg_begin();
            seg_forward(b, &s, p, blk->begin, blk->end);
            seg_end(b, &s, blk->reps);
        }
        at = blk->end;
    }
    pass_seg s = seg_begin();
    seg_forward(b, &s, p, at, wl->n_ops);
    seg_end(b, &s, 1);
}

static void build_backward(pass_build *b, const plan *p)
{
    const eci_workload *wl = p->wl;
    size_t at = wl->n_ops;
    for (size_t k = wl->n_blocks; k-- > 0;) {
        const eci_block *blk = &wl->blocks[k];
        pass_seg s = seg_begin();
        seg_backward(b, &s, p, blk->end, at);
        seg_end(b, &s, 1);
        if (blk->reps >= 1) {
            s = seg_begin();
            if (p->checkpointing && blk->checkpoint) /* torch.utils.checkpoint: the forward again */
                seg_forward(b, &s, p, blk->begin, blk->end);
            seg_backward(b, &s, p, blk->begin, blk->end);
            seg_end(b, &s, blk->reps);
        }
        at = blk->begin;
    }
    pass_seg s = seg_begin();
    seg_backward(b, &s, p, 0, at);
    seg_end(b, &s, 1);
}

/* The forward (backward: 1) pass in one step when it qualifies; 0: walk it block by block.
 * Its sums: p->pass_sum[2 v] (the first op; from = 1 when the pass has one) and [2 v + 1]
 * (the rest; to = 1 once built), v = 0 forward, 1 backward, 2 backward with recompute. */
static int pass_walk(timeline *t, plan *p, int backward)
{
    if (p->pass_sum == NULL || p->shard != NULL || p->ddp != NULL || p->loop_ops > 0 || p->loop_syncs > 0 ||
        p->checkpointing == EC_CKPT_SELECTIVE || p->dispatch_fwd_s != p->fwd_host_at[0] ||
        p->op_fwd_s != p->fwd_host_at[1] || p->dispatch_bwd_s != p->fwd_host_at[2])
        return 0;
    eci_walk_sum *s = &p->pass_sum[2 * (backward ? 1 + (p->checkpointing != 0) : 0)];
    if (s[1].to == 0) {
        pass_build b = {.rest = eci_walk_sum_none()};
        if (backward)
            build_backward(&b, p);
        else
            build_forward(&b, p);
        s[0] = b.first;
        s[0].from = (size_t)b.started;
        s[1] = b.rest;
        s[1].to = 1;
    }
    if (s[0].from == 0) /* no op to walk */
        return 1;
    double *kernel_s = backward ? &p->bwd_s : &p->fwd_s;
    gpu_op(t, s[0].host_s, s[0].gpu_s, s[0].kernels, 1);
    *kernel_s += s[0].gpu_s;
    walk_sum_apply(t, &s[1], kernel_s);
    return 1;
}

static void forward_pass(timeline *t, plan *p)
{
    if (pass_walk(t, p, 0))
        return;
    const eci_workload *wl = p->wl;
    size_t at = 0;
    if (p->loop_block < 0)
        python_loop(t, p, 0);
    for (size_t b = 0; b < wl->n_blocks; b++) {
        p->blk = &wl->blocks[b];
        forward_ops(t, p, at, p->blk->begin);
        if ((int)b == p->loop_block)
            python_loop(t, p, 0);
        double t0 = t->gpu;
        repeat_layers(t, p, p->blk->reps, forward_layer);
        if (p->shard != NULL)
            shard_units(t, p, t0, 0);
        at = p->blk->end;
    }
    forward_ops(t, p, at, wl->n_ops);
}

/* The forward pass moves the timeline by amounts that depend only on the state it starts
 * from relative to the GPU (the host's lead, its pending work): a micro-step whose forward
 * starts as the previous one's did (each after a sync; the leads equal but for rounding) adds
 * what that one added instead of walking it again.  Not with sharded units, whose gathers
 * run on absolute clocks.  m: NULL when no later micro-step will repeat it. */
typedef struct fwd_memo {
    int valid;
    double lead_s;                     /* cpu - gpu at the start */
    double pending[N_CAUSES];          /* ...and the host work pending then */
    timeline moved;                    /* what the pass added (pending: what it left pending) */
    double fwd_s;                      /* ...and the kernel time */
} fwd_memo;

static void forward_pass_memo(timeline *t, plan *p, fwd_memo *m)
{
    if (m == NULL) { /* no later micro-step to repeat it */
        forward_pass(t, p);
        return;
    }
    double lead_s = t->cpu - t->gpu;
    if (m->valid && near(lead_s, m->lead_s) && memcmp(t->pending, m->pending, sizeof m->pending) == 0) {
        t->cpu += m->moved.cpu;
        t->gpu += m->moved.gpu;
        t->busy += m->moved.busy;
        t->copy += m->moved.copy;
        t->kernels += m->moved.kernels;
        t->host_busy += m->moved.host_busy;
        for (int c = 0; c < N_CAUSES; c++)
            t->gap[c] += m->moved.gap[c];
        memcpy(t->pending, m->moved.pending, sizeof t->pending);
        p->fwd_s += m->fwd_s;
        return;
    }
    timeline before = *t;
    double fwd0 = p->fwd_s;
    forward_pass(t, p);
    *m = (fwd_memo){.valid = p->shard == NULL, .lead_s = lead_s, .fwd_s = p->fwd_s - fwd0,
                    .moved = {.cpu = t->cpu - before.cpu, .gpu = t->gpu - before.gpu, .busy = t->busy - before.busy,
                              .copy = t->copy - before.copy, .kernels = t->kernels - before.kernels,
                              .host_busy = t->host_busy - before.host_busy}};
    memcpy(m->pending, before.pending, sizeof m->pending);
    memcpy(m->moved.pending, t->pending, sizeof m->moved.pending);
    for (int c = 0; c < N_CAUSES; c++)
        m->moved.gap[c] = t->gap[c] - before.gap[c];
}

/* ---- DDP over repeated layers ------------------------------------------------------------
 * DDP's hook needs each repetition's real times, but a repetition that leaves the state it
 * depends on as it found it, or that depends on neither the host's nor the stream's lead
 * (ddp_steady_reps), moves everything by the same amounts as the next ones, which are added
 * by multiplication.  Failing that, two repetitions in a row that moved everything by the
 * same amounts from states that keep repeating are taken to repeat: a state keeps repeating
 * when the bucket being filled is as full at both ends, and for both the host and the
 * communication stream either its lead over the GPU is unchanged, or it is ahead and pulling
 * away (the host: never idles the GPU), or it is behind and falling further behind (the
 * stream: busy all repetition long). */
typedef struct ddp_mark {
    timeline t;
    double comm_free, comm_busy, launched, fwd_s, bwd_s, overlap_s, open;
} ddp_mark;

static ddp_mark ddp_mark_now(const timeline *t, const plan *p)
{
    return (ddp_mark){.t = *t, .comm_free = p->ddp->comm_free_s, .comm_busy = p->ddp->comm_busy_s,
                      .launched = p->ddp->launched, .fwd_s = p->fwd_s, .bwd_s = p->bwd_s,
                      .overlap_s = p->overlap_s, .open = p->ddp->open_bytes};
}

/* The repetition's moves as a vector; d[0..N_DDP_DELTA) */
enum { N_DDP_DELTA = 11 + N_CAUSES };
static void ddp_delta(const ddp_mark *a, const ddp_mark *b, double *d)
{
    double v[N_DDP_DELTA] = {b->t.cpu - a->t.cpu, b->t.gpu - a->t.gpu, b->t.busy - a->t.busy,
                             b->t.copy - a->t.copy, b->t.kernels - a->t.kernels, b->t.host_busy - a->t.host_busy,
                             b->comm_free - a->comm_free, b->comm_busy - a->comm_busy, b->launched - a->launched,
                             b->bwd_s - a->bwd_s, b->overlap_s - a->overlap_s};
    for (int c = 0; c < N_CAUSES; c++)
        v[11 + c] = b->t.gap[c] - a->t.gap[c];
    memcpy(d, v, sizeof v);
}

static int keeps_repeating(const ddp_mark *m0, const ddp_mark *m1)
{
    double h0 = m0->t.cpu - m0->t.gpu, h1 = m1->t.cpu - m1->t.gpu;
    double c0 = m0->comm_free - m0->t.gpu, c1 = m1->comm_free - m1->t.gpu;
    int host = near(h0, h1) || (h1 < h0 && h1 <= 0) || (h1 > h0 && h0 >= 0);
    int comm = near(c0, c1) || (c0 <= 0 && c1 <= 0) || (c1 > c0 && c0 >= 0);
    return host && comm && m0->open == m1->open && memcmp(m0->t.pending, m1->t.pending, sizeof m0->t.pending) == 0;
}

/* Add what one repetition moved (ddp_delta) `times` more times. */
static void ddp_advance(timeline *t, plan *p, const double *d, double times)
{
    t->cpu += times * d[0];
    t->gpu += times * d[1];
    t->busy += times * d[2];
    t->copy += times * d[3];
    t->kernels += times * d[4];
    t->host_busy += times * d[5];
    for (int c = 0; c < N_CAUSES; c++)
        t->gap[c] += times * d[11 + c];
    p->ddp->comm_free_s += times * d[6];
    p->ddp->comm_busy_s += times * d[7];
    p->ddp->launched += (int)(times * d[8]);
    p->bwd_s += times * d[9];
    p->overlap_s += times * d[10];
}

/* How many more units (runs of repetitions, walked from m0 to m1, whose least slacks were
 * slack_host_s and slack_comm_s) move exactly as this one did.  A unit depends on its start
 * only through the host's lead h = cpu - gpu and the stream's c = comm_free - gpu (the bucket
 * being equal).  Where the host never held the GPU up (least slack S_h >= 0) its lead does
 * not matter, and the j-th unit after this one starts at h + j dh, its slack S_h - j dh: still
 * >= 0 for j <= S_h / dh (all j when dh <= 0).  Where the stream stayed busy past every kernel
 * and bucket (S_c >= 0), its lead does not matter either, and the slack is S_c + j dc: >= 0
 * for j <= S_c / -dc (all j when dc >= 0: a backlog that grows or stays).  A lead the unit left
 * as it found it repeats as well, and so does an idle stream at both ends (ddp_idle_ends).  A
 * draining backlog is thus jumped in one step to the unit where the stream first idles. */
static double ddp_steady_units(const ddp_mark *m0, const ddp_mark *m1, double slack_host_s, double slack_comm_s,
                               int recompute)
{
    if (m0->open != m1->open || (m0->launched == 0 && m1->launched > 0) || /* the first bucket's cap */
        memcmp(m0->t.pending, m1->t.pending, sizeof m0->t.pending) != 0)
        return 0;
    double h0 = m0->t.cpu - m0->t.gpu, h1 = m1->t.cpu - m1->t.gpu, dh = h1 - h0;
    double c0 = m0->comm_free - m0->t.gpu, c1 = m1->comm_free - m1->t.gpu, dc = c1 - c0;
    /* a recompute's forward kernels are not in the host's slack */
    double host = near(h0, h1)                    ? INFINITY
                  : recompute || slack_host_s < 0 ? 0
                  : dh > 0                        ? floor(slack_host_s / dh)
                                                  : INFINITY;
    double comm = near(c0, c1) || (c0 <= 0 && c1 <= 0) ? INFINITY
                  : slack_comm_s < 0                    ? 0
                  : dc < 0                              ? floor(slack_comm_s / -dc)
                                                        : INFINITY;
    return host < comm ? host : comm;
}

/* An idle stream at both ends of a unit that repeats: from any idle start the unit leaves the
 * stream c1 behind the GPU, so the later ones move the stream's clock as far as the GPU's. */
static int ddp_idle_ends(const ddp_mark *m0, const ddp_mark *m1)
{
    double c0 = m0->comm_free - m0->t.gpu, c1 = m1->comm_free - m1->t.gpu;
    return !near(c0, c1) && c0 <= 0 && c1 <= 0;
}

/* Units of up to this many repetitions are tried: gradient buckets that span several layers
 * (BERT-large's 25 MiB buckets hold a layer and a half) repeat every few layers, not every one. */
#define DDP_UNIT_MAX 4

/* The repetitions walked last (ddp_layers): the state at the last boundaries and each layer's
 * least slacks, indexed by repetition modulo the ring's size. */
typedef struct ddp_ring {
    ddp_mark at[DDP_UNIT_MAX + 1];     /* at[b % (DDP_UNIT_MAX + 1)]: before repetition b */
    double slack_host_s[DDP_UNIT_MAX], slack_comm_s[DDP_UNIT_MAX]; /* [l % DDP_UNIT_MAX]: of repetition l */
} ddp_ring;

/* The unit of the last k repetitions (l-k+1..l, all walked): how many more such units repeat it
 * (0: none), its moves in d.  k = 1 also takes the older test: two repetitions in a row that
 * moved everything alike, from states that keep repeating. */
static double ddp_unit_repeats(const ddp_ring *r, const plan *p, int l, int k, int walked, double *d)
{
    const ddp_mark *m0 = &r->at[(l + 1 - k) % (DDP_UNIT_MAX + 1)], *m1 = &r->at[(l + 1) % (DDP_UNIT_MAX + 1)];
    double sh = INFINITY, sc = INFINITY;
    for (int j = l + 1 - k; j <= l; j++) {
        sh = r->slack_host_s[j % DDP_UNIT_MAX] < sh ? r->slack_host_s[j % DDP_UNIT_MAX] : sh;
        sc = r->slack_comm_s[j % DDP_UNIT_MAX] < sc ? r->slack_comm_s[j % DDP_UNIT_MAX] : sc;
    }
    double units = ddp_steady_units(m0, m1, sh, sc, p->checkpointing && p->blk->checkpoint);
    if (units < 1 && k > 1)
        return 0;
    ddp_delta(m0, m1, d);
    if (units >= 1) {
        if (ddp_idle_ends(m0, m1))
            d[6] = d[1];
        return units;
    }
    if (walked < 2 || !keeps_repeating(m0, m1)) /* drifting the same way each time? */
        return 0;
    double prev[N_DDP_DELTA];
    ddp_delta(&r->at[(l + DDP_UNIT_MAX) % (DDP_UNIT_MAX + 1)], m0, prev);
    for (int i = 0; i < N_DDP_DELTA; i++)
        if (!near(d[i], prev[i]))
            return 0;
    return INFINITY;
}

static void ddp_layers(timeline *t, plan *p, int reps)
{
    ddp_ring r;
    r.at[0] = ddp_mark_now(t, p);
    int walked = 0; /* repetitions walked since the start or the last jump */
    for (int l = 0; l < reps; l++) {
        p->slack_host_s = INFINITY;
        p->slack_comm_s = INFINITY;
        backward_layer(t, p);
        walked++;
        r.slack_host_s[l % DDP_UNIT_MAX] = p->slack_host_s;
        r.slack_comm_s[l % DDP_UNIT_MAX] = p->slack_comm_s;
        r.at[(l + 1) % (DDP_UNIT_MAX + 1)] = ddp_mark_now(t, p);
        /* d is read only after a unit repeats, which fills it (zeroed for GCC's analysis, which
         * under profile feedback (EC_PGO) cannot see that) */
        double rest = reps - l - 1, d[N_DDP_DELTA] = {0};
        for (int k = 1; k <= DDP_UNIT_MAX && k <= walked && k <= rest && !p->every_layer; k++) {
            double units = ddp_unit_repeats(&r, p, l, k, walked, d), fit = floor(rest / k);
            double times = units < fit ? units : fit;
            if (times >= 1) {
                ddp_advance(t, p, d, times);
                l += (int)times * k;
                r.at[(l + 1) % (DDP_UNIT_MAX + 1)] = ddp_mark_now(t, p);
                walked = 0;
                break;
            }
        }
    }
}

static void backward_pass(timeline *t, plan *p)
{
    if (pass_walk(t, p, 1))
        return;
    const eci_workload *wl = p->wl;
    size_t at = wl->n_ops;
    for (size_t b = wl->n_blocks; b-- > 0;) {
        p->blk = &wl->blocks[b];
        backward_ops(t, p, p->blk->end, at);
        double t0 = t->gpu;
        if (p->ddp != NULL) /* DDP's hook needs the repetitions' real times */
            ddp_layers(t, p, p->blk->reps);
        else
            repeat_layers(t, p, p->blk->reps, backward_layer);
        if (p->shard != NULL)
            shard_units(t, p, t0, 1);
        if ((int)b == p->loop_block)
            python_loop(t, p, 1);
        at = p->blk->begin;
    }
    backward_ops(t, p, 0, at);
    if (p->loop_block < 0)
        python_loop(t, p, 1);
}

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

/* ---- helpers ----------------------------------------------------------------------------- */

/* Set bit and append text unless that text is already there: two different warnings under
 * one bit (keys ignored by the model and by the configuration) are both said. */
static void add_warning(ec_result *res, unsigned bit, const char *text)
{
    if ((res->warnings & bit) == bit && strstr(res->warning_text, text) != NULL)
        return;
    res->warnings |= bit;
    /* "; " and text appended, cut as snprintf would cut them (copies: snprintf's format
     * parsing cost more than the rest of a prediction's warnings) */
    size_t len = strlen(res->warning_text), room = sizeof res->warning_text - len;
    char *end = res->warning_text + len;
    if (len > 0 && room > 1) {
        size_t sep = eci_strlcpy(end, "; ", room) < room ? 2 : room - 1;
        end += sep;
        room -= sep;
    }
    eci_strlcpy(end, text, room);
}

/* ---- the prediction ---------------------------------------------------------------------- */
int ec_predict(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    if (ctx == NULL || cfg == NULL || res == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_predict: NULL argument") : EC_EMISUSE;
    return eci_predict(ctx, cfg, NULL, res);
}

/* ---- the layout's communication ------------------------------------------------------------ */
typedef struct layout_comm {
    eci_comm comm;              /* every GPU of the job (n = 1: none) */
    eci_group groups[ECI_N_GROUPS]; /* tensor-, context-, expert-parallel groups of the ops' collectives */
    eci_group dp;               /* gradient reduction: the dp x cp ranks holding the same shard (stride tp) */
    eci_group pp;               /* pipeline neighbours */
    int dp_is_job;              /* every GPU a data-parallel replica on the default network: DDP keeps the
                                   job's ring (comm), as calibrated */
    double net_bytes_per_s;     /* one GPU's NIC */
    double net_frac;            /* collective bus bandwidth over it */
    int domain;                 /* GPUs that reach each other over NVLink (a node, or an NVL72 rack) */
} layout_comm;

/* The job's links and the groups of its layout (Megatron's rank order: tensor parallel
 * innermost, then context, data, pipeline; experts within data parallelism). */
static int layout_comm_init(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *calib,
                            layout_comm *lc)
{
    memset(lc, 0, sizeof *lc);
    lc->comm.n = lc->comm.nodes = 1;
    lc->comm.h2d_share_frac = 1.0;
    lc->dp.n = 1;
    int n = cfg->num_gpus;
    lc->dp_is_job = r->dp == n && r->fabric == NULL && r->nodes == 1;
    if (n <= 1)
        return EC_OK;
    int rc = eci_comm_init(ctx, r->gpu, r->topology, n, r->nodes, r->node_net_bytes_per_s, cfg->busbw_bytes_per_s,
                           &lc->comm);
    if (rc != EC_OK)
        return rc;
    lc->net_frac = r->fabric != NULL && r->fabric->efficiency_frac > 0 ? r->fabric->efficiency_frac
                                                                        : calib->internode_frac;
    lc->domain = r->fabric != NULL && r->fabric->domain_gpus > 0 ? (int)r->fabric->domain_gpus : r->per_node;
    lc->net_bytes_per_s = r->gpu_net_bytes_per_s;
    int tp = r->tp, cp = r->cp;
    eci_comm_group(&lc->comm, tp, 1, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->groups[ECI_GROUP_TP]);
    eci_comm_group(&lc->comm, cp, tp, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->groups[ECI_GROUP_CP]);
    eci_comm_group(&lc->comm, r->ep, tp * cp, lc->domain, lc->net_bytes_per_s, lc->net_frac,
                   &lc->groups[ECI_GROUP_EP]);
    eci_comm_group(&lc->comm, r->dp * cp, tp, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->dp);
    eci_comm_group(&lc->comm, r->pp, tp * cp * r->dp, lc->domain, lc->net_bytes_per_s, lc->net_frac, &lc->pp);
    return EC_OK;
}

/* The rates of the ops' collectives: the layout's links and groups (none on one GPU). */
static void rates_of_layout(const layout_comm *lc, eci_rates *rates)
{
    if (lc->comm.n <= 1)
        return;
    memcpy(rates->groups, lc->groups, sizeof rates->groups);
    rates->comm = &lc->comm;
}

/* Sharded data parallelism that gathers per unit (FSDP full/hybrid/grad-op sharding, ZeRO-3):
 * the schedule's groups and dtypes.  Returns 0 (and leaves s alone) for any other strategy. */
static int shard_setup(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const layout_comm *lc,
                       eci_shard *s)
{
    int fsdp = r->strategy == EC_STRATEGY_FSDP && cfg->sharding != EC_SHARD_NONE;
    if (!fsdp && !(r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage == 3))
        return 0;
    memset(s, 0, sizeof *s);
    s->comm = &lc->comm;
    s->shard = lc->dp;
    s->replica.n = 1;
    int group = r->dp * r->cp;
    if (fsdp && cfg->sharding == EC_SHARD_HYBRID && group > 1) { /* shard within a node, replicate across */
        int in_node = lc->domain / r->tp;
        if (in_node < 1)
            in_node = 1;
        if (in_node > group)
            in_node = group;
        eci_comm_group(&lc->comm, in_node, r->tp, lc->domain, lc->net_bytes_per_s, lc->net_frac, &s->shard);
        eci_comm_group(&lc->comm, group / in_node, r->tp * in_node, lc->domain, lc->net_bytes_per_s, lc->net_frac,
                       &s->replica);
    }
    s->regather = !(fsdp && cfg->sharding == EC_SHARD_GRAD_OP);
    s->limit = (int)eci_const(ctx, EC_C_fsdp_gathers_in_flight);
    s->slowdown = eci_const(ctx, EC_C_overlap_compute_slowdown_frac);
    if (cfg->offload == EC_OFFLOAD_OPTIMIZER_AND_PARAMS) /* parameters live in pinned host memory */
        s->offload_bytes_per_s = r->gpu->h2d_pinned_bytes_per_s;
    return 1;
}

/* Ranks the parameters, gradients and optimizer states are split over (memory, optimizer). */
static void shard_degrees(const ec_config *cfg, const eci_resolved *r, double *w, double *g, double *o)
{
    double group = (double)r->dp * r->cp;
    *w = *g = *o = 1;
    if (r->strategy == EC_STRATEGY_ZERO) {
        *o = group;
        *g = cfg->zero_stage >= 2 ? group : 1;
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

/* Bytes per element of a collective of the compute dtype (a 16-bit precision gathers and
 * reduces 16-bit values), of the gradients reduced, and of the parameters held. */
static double compute_elem_bytes(int precision)
{
    return precision == EC_PREC_FP32 || precision == EC_PREC_TF32 ? 4.0 : 2.0;
}

static double reduce_elem_bytes(const ec_config *cfg, const eci_resolved *r, double param_bytes)
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
static void inline_comm(const eci_workload *wl, const eci_op_cost_t *cost, const eci_rates *rates, int checkpointing,
                        double *fwd_s, double *bwd_s, double *group_s, double *launched_s)
{
    *fwd_s = *bwd_s = *launched_s = 0;
    for (int gi = 0; gi < ECI_N_GROUPS; gi++)
        group_s[gi] = 0;
    for (size_t i = wl->comm_begin; i < wl->comm_end; i = wl->ops[i].next_comm) { /* the collectives only */
        const eci_op *op = &wl->ops[i];
        const eci_block *blk = op->block >= 0 ? &wl->blocks[op->block] : NULL;
        double reps = (blk != NULL ? blk->reps : 1) * op->count;
        double again = checkpointing == 1 && blk != NULL && blk->checkpoint ? cost[i].fwd_s : 0;
        *fwd_s += reps * cost[i].fwd_s;
        *bwd_s += reps * (cost[i].bwd_s + again);
        group_s[op->group] += reps * (cost[i].fwd_s + cost[i].bwd_s + again);
        if (op->hidden && rates->comm != NULL) { /* the whole exchange, not only what attention left exposed */
            const eci_group *g = &rates->groups[op->group];
            double f = eci_coll_s(rates->comm, g, (eci_coll)op->fwd_coll, op->comm_bytes);
            double b = eci_coll_s(rates->comm, g, (eci_coll)op->bwd_coll, op->comm_bytes);
            *launched_s += reps * (f + b + (checkpointing == 1 && blk != NULL && blk->checkpoint ? f : 0));
        } else {
            *launched_s += reps * (cost[i].fwd_s + cost[i].bwd_s + again);
        }
    }
}

/* Parameters outside every repeated block (embeddings, final norm, head): FSDP's root unit;
 * *trained: those of them that are trained. */
static double root_params(const eci_workload *wl, double *trained)
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
    return cfg->base_precision == EC_BASE_INT8 ? eci_const(ctx, EC_C_int8_bytes_per_param) : 0;
}

static double frozen_elem_bytes(const ec_ctx *ctx, const ec_config *cfg, const eci_workload *wl, double param_bytes)
{
    double frozen = wl->params - wl->trainable_params, q = base_quant_bytes(ctx, cfg);
    if (frozen <= 0)
        return param_bytes;
    double other = cfg->base_precision == EC_BASE_SAME ? param_bytes : 2.0;
    return (wl->quant_params * q + (frozen - wl->quant_params) * other) / frozen;
}

/* torch.compile: the model's kernels are launched by Inductor's generated code; with CUDA
 * graphs (reduce-overhead, max-autotune) one replay per pass launches all of them. */
static int cuda_graphs(const ec_config *cfg)
{
    return cfg->compile == EC_COMPILE_REDUCE_OVERHEAD || cfg->compile == EC_COMPILE_MAX_AUTOTUNE;
}

static void model_dispatch(const ec_ctx *ctx, const ec_config *cfg, const eci_host *host, const plan *p,
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

/* The shape of one micro-step of cfg at padded length seq and a batch per GPU. */
static void fill_shape(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, double seq, double batch,
                       eci_shape *shape)
{
    int sharded_dp = r->strategy == EC_STRATEGY_FSDP || r->strategy == EC_STRATEGY_ZERO;
    *shape = (eci_shape){.precision = cfg->precision, .batch = batch, .seq = seq,
                         .seq_sq = seq * seq, .target_seq = r->target_seq > 0 ? r->target_seq : seq,
                         .image_size = r->image_size,
                         .mask_bytes = eci_const(ctx, EC_C_dropout_mask_bytes_per_elem),
                         .mlm_frac = eci_const(ctx, EC_C_mlm_mask_frac),
                         .eager_attention = cfg->attention == EC_ATTN_EAGER,
                         .flash = cfg->attention == EC_ATTN_FLASH || cfg->attention == EC_ATTN_FLASH_TRITON,
                         .gelu_new_kernels = (int)eci_const(ctx, EC_C_gelu_new_kernels),
                         .rmsnorm_kernels = (int)eci_const(ctx, EC_C_rmsnorm_eager_kernels),
                         .rmsnorm_passes = eci_const(ctx, EC_C_rmsnorm_eager_passes),
                         .rope_kernels = (int)eci_const(ctx, EC_C_rope_eager_kernels),
                         .tp = r->tp, .cp = r->cp, .ep = r->ep, .sp = r->sp,
                         .stage_lo = r->stage_lo, .stage_hi = r->stage_hi,
                         /* FSDP MixedPrecision and DeepSpeed hold the compute copy in 16 bits */
                         .weights_16 = sharded_dp,
                         .lora_r = cfg->lora_r, .lora_targets = cfg->lora_targets,
                         .base_16 = cfg->base_precision != EC_BASE_SAME,
                         .base_quant_bytes = base_quant_bytes(ctx, cfg),
                         .channels_last = cfg->memory_format == EC_MEMFMT_CHANNELS_LAST,
                         .fused = cfg->compile != EC_COMPILE_OFF || cfg->kernels == EC_KERNELS_FUSED,
                         .unpadded = cfg->lengths[0] == '\0',
                         .flash_triton = cfg->attention == EC_ATTN_FLASH_TRITON};
}

/* precision=fp32 prices IEEE fp32 everywhere, as torch.backends.cudnn.allow_tf32=False runs it
 * (the harness's fp32).  PyTorch's default (allow_tf32=True for cuDNN, False for matmuls since
 * 1.12; docs/modeling.md) runs convolutions on TF32 tensor cores from Ampere on, so a CNN kept
 * at the defaults runs much faster than this: said when convolutions carry most of the FLOPs
 * (constants.csv fp32_conv_warn_frac; a ViT's one patch convolution does not matter). */
static void fp32_conv_warning(const ec_ctx *ctx, const ec_config *cfg, const eci_gpu *g, const eci_workload *wl,
                              ec_result *res)
{
    if (cfg->precision != EC_PREC_FP32 || !eci_gpu_tf32(g) || wl->conv_flop <= 0 ||
        wl->conv_flop < eci_const(ctx, EC_C_fp32_conv_warn_frac) * wl->model_flop)
        return;
    add_warning(res, EC_WARN_FP32_CONVS, "precision=fp32 prices the convolutions in IEEE fp32 "
                "(torch.backends.cudnn.allow_tf32=False), while PyTorch's default runs them in TF32 on this GPU: "
                "give precision=tf32 for a script that keeps the default");
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

/* One optimizer step at padded length seq, without the input pipeline (pipeline.c adds it):
 * fills res's step time, breakdown, kernel counts, FLOPs and memory; gpu_scale multiplies
 * every compute kernel (gpu_step_s calibrates it); *host_s is the host time of the step. */
static int step_model(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib_in, double seq,
                      double gpu_scale, const layout_comm *lc_in, ec_result *res, double *host_s)
{
    step_result_clear(res);
    eci_resolved r = *rp;
    int rc;
    const eci_gpu *g = r.gpu;
    const eci_host *host = r.host;
    int n = cfg->num_gpus, ga = cfg->grad_accum;

    eci_shape shape;
    fill_shape(ctx, cfg, &r, seq, cfg->batch_per_gpu, &shape);
    const eci_workload *wl;
    if ((rc = eci_workload_get(ctx, r.net, r.task, &shape, &wl)) != EC_OK)
        return rc;

    const eci_params *calib = calib_in;
    eci_rates rates;
    eci_rates_init(ctx, g, cfg->precision, calib, &rates);
    layout_comm lc;
    if (lc_in != NULL)
        lc = *lc_in;
    else if ((rc = layout_comm_init(ctx, cfg, &r, calib, &lc)) != EC_OK)
        return rc;
    rates_of_layout(&lc, &rates);
    const eci_comm *comm = &lc.comm;
    const eci_op_cost_t *cost = eci_op_costs(ctx, &rates, wl, gpu_scale);
    if (cost == NULL)
        return EC_ENOMEM;

    plan p = {.wl = wl, .cost = cost, .loop_block = wl->loop_block, .host = host,
              .dispatch_fwd_s = host->dispatch_fwd_s * calib->dispatch_scale,
              .dispatch_bwd_s = host->dispatch_bwd_s, .op_fwd_s = host->dispatch_fwd_s,
              .host_factor = r.strategy == EC_STRATEGY_DP ? n : 1, .checkpointing = cfg->checkpointing,
              .loop_ops = cfg->loop_ops_per_sample * cfg->batch_per_gpu,
              .loop_syncs = cfg->loop_syncs_per_sample * cfg->batch_per_gpu,
              .loop_kernel_s = rates.floor_s, .loop_copy_s = eci_const(ctx, EC_C_h2d_latency_s),
              .every_layer = ctx->ddp_every_layer};

    double param_bytes = (cfg->precision == EC_PREC_BF16 || cfg->precision == EC_PREC_FP16) ? 2.0 : 4.0;
    double grad_bytes = wl->trainable_params * param_bytes, bcast_bytes = wl->params * param_bytes;
    double trained_tensors = wl->trainable_tensors;
    double reduce_bytes = reduce_elem_bytes(cfg, &r, param_bytes);
    p.grad_elem_bytes = reduce_bytes; /* AMP all-reduces the fp32 gradients (modeling.md 6.2) */
    p.gather_elem_bytes = compute_elem_bytes(cfg->precision);
    p.frozen_elem_bytes = frozen_elem_bytes(ctx, cfg, wl, param_bytes);
    p.overlap_slowdown = eci_const(ctx, EC_C_overlap_compute_slowdown_frac);
    int dp = r.strategy == EC_STRATEGY_DP;
    /* Gradient buckets reduced as backward produces them: DDP, FSDP without sharding, ZeRO-1/2
     * (reduce-scatter); FSDP and ZeRO-2 reduce on every micro-step, DDP and ZeRO-1 on the last. */
    eci_shard shard;
    int per_unit = shard_setup(ctx, cfg, &r, &lc, &shard);
    int bucketed = n > 1 && lc.dp.n > 1 && !per_unit &&
                   (r.strategy == EC_STRATEGY_DDP || r.strategy == EC_STRATEGY_FSDP || r.strategy == EC_STRATEGY_ZERO);
    int reduce_each_micro = r.strategy == EC_STRATEGY_FSDP || (r.strategy == EC_STRATEGY_ZERO && cfg->zero_stage >= 2);
    double busbw = comm->busbw_bytes_per_s, hop_s = comm->hop_latency_s, copy_bw = comm->copy_bytes_per_s;
    /* DataParallel broadcasts parameters and reduces gradients in coalesced chunks, one NCCL
     * call each (torch/cuda/comm.py), so each call sees the bus bandwidth of a chunk. */
    double dp_chunk_bytes = eci_const(ctx, EC_C_dp_coalesce_buffer_bytes);
    double dp_chunks = ceil(grad_bytes / dp_chunk_bytes), bcast_chunks = ceil(bcast_bytes / dp_chunk_bytes);
    double output_grad_bytes = r.net->loss_in_forward ? 0 : wl->output_bytes; /* per replica, dp */
    double root_trained, root = root_params(wl, &root_trained);
    double root_gather_s = per_unit ? eci_shard_gather_s(&shard, root_trained * p.gather_elem_bytes +
                                                                     (root - root_trained) * p.frozen_elem_bytes)
                                    : 0;
    double root_reduce_s = per_unit ? eci_shard_reduce_s(&shard, root_trained * reduce_bytes) : 0;

    /* The batch reaches the GPU (the loader itself is simulated by pipeline.c). */
    int pinned = cfg->pin_memory;
    double h2d_bw = pinned ? g->h2d_pinned_bytes_per_s : g->h2d_pageable_bytes_per_s;
    if (!dp) /* every GPU copies its batch at once: GPUs behind one uplink share it */
        h2d_bw *= comm->h2d_share_frac;
    double h2d_s = wl->input_bytes / h2d_bw + eci_const(ctx, EC_C_h2d_latency_s);
    if (dp) /* one process loads the global batch and copies it all to GPU 0 */
        h2d_s *= n;

    /* dispatch_scale (fitted) prices the model's eager forward: its Python (module calls,
     * views) around each kernel.  The rest of the host's work is one op at the host's rate:
     * issuing copies, the trainer's and the optimizer's Python, the C++ autograd engine. */
    double eager_fwd_s = p.dispatch_fwd_s, eager_bwd_s = p.dispatch_bwd_s, eager_op_s = p.op_fwd_s;
    double model_fwd_s, model_bwd_s, model_op_s, replay_s;
    double op_s = host->dispatch_fwd_s;
    model_dispatch(ctx, cfg, host, &p, &model_fwd_s, &model_bwd_s, &model_op_s, &replay_s);
    { /* every forward walk runs at the model's dispatch costs: each op's host cost once, kept
       * beside the cached op costs for the next prediction at the same dispatch costs */
        const double key[ECI_HOST_KEY_VALUES] = {model_fwd_s, model_op_s, model_bwd_s, p.host_factor};
        int valid;
        eci_walk_sum *sums;
        double *fwd_host = eci_op_costs_host(ctx, wl, cost, key, &valid, &sums);
        if (fwd_host == NULL && (fwd_host = eci_scratch_raw(ctx, ECI_SCRATCH_FWD_HOST, wl->n_ops, sizeof *fwd_host)) == NULL)
            return EC_ENOMEM;
        if (!valid) {
            plan at = p;
            at.dispatch_fwd_s = model_fwd_s;
            at.op_fwd_s = model_op_s;
            at.dispatch_bwd_s = model_bwd_s;
            for (size_t i = 0; i < wl->n_ops; i++)
                fwd_host[i] = fwd_host_s(&at, &cost[i]);
        }
        p.fwd_host = fwd_host;
        if (ctx->walk_op_by_op)
            sums = NULL;
        p.fwd_sum = sums;
        p.bwd_sum = sums != NULL ? sums + wl->n_ops : NULL;
        p.pass_sum = sums != NULL ? sums + 2 * wl->n_ops : NULL;
        p.fwd_host_at[0] = model_fwd_s;
        p.fwd_host_at[1] = model_op_s;
        p.fwd_host_at[2] = model_bwd_s;
    }
    int copy_batch = cfg->data_synthetic == EC_DATA_REAL; /* synthetic or on_gpu: made on the GPU */
    double syncs = eci_const(ctx, EC_C_syncs_per_micro_step);
    eci_trainer tr;
    eci_trainer_get(ctx, cfg->trainer, &tr);
    timeline t = {0};
    double micro_s[2] = {0, 0};
    timeline micro_start = t, last_micro = t; /* last_micro: what the last simulated micro-step added */
    int simulate = ga < 2 ? ga : 2;
    double dp_comm_s = 0;           /* DataParallel exchanges of the simulated micro-steps */
    double shard_comm[2] = {0, 0};  /* per simulated micro-step: gathers + reductions launched, stretch */
    eci_ddp_sched sched;            /* DDP: only the last micro-step all-reduces (no_sync before) */
    eci_ddp_begin(&sched, comm, eci_const(ctx, EC_C_ddp_first_bucket_bytes), eci_const(ctx, EC_C_ddp_bucket_bytes));
    if (!lc.dp_is_job || r.strategy == EC_STRATEGY_ZERO) { /* the data-parallel group of a model-parallel or
                                                             * networked layout, ZeRO's reduce-scatter */
        sched.group = &lc.dp;
        sched.coll = r.strategy == EC_STRATEGY_ZERO ? ECI_COLL_REDUCE_SCATTER : ECI_COLL_ALLREDUCE;
    }
    double exposed_total = 0;       /* bucketed reductions left after backward, all micro-steps simulated */
    double last_fwd0 = 0, last_bwd0 = 0; /* kernel time before the last simulated micro-step */
    fwd_memo fwd_once = {0};        /* the first micro-step's forward pass, for the second */
    for (int micro = 0; micro < simulate; micro++) {
        double start = t.cpu;
        micro_start = t;
        last_fwd0 = p.fwd_s;
        last_bwd0 = p.bwd_s;
        if (!copy_batch) {
            /* the batch is already on the GPU */
        } else if (pinned) {
            gpu_op(&t, op_s, h2d_s, 0, 0);
        } else { /* pageable: the host stages the batch and blocks on the copy */
            host_work(&t, CAUSE_H2D, wl->input_bytes / host->memcpy_bytes_per_s);
            gpu_op(&t, op_s, h2d_s, 0, 0);
            t.pending[CAUSE_H2D] += h2d_s;
            sync_host(&t);
        }
        int all_reduce = bucketed && (reduce_each_micro || micro == simulate - 1);
        if (dp) { /* scatter the inputs from GPU 0; replicate(): Python builds n-1 module
                   * replicas and NCCL broadcasts the parameters from GPU 0 */
            dp_exchange(&t, &p, (n - 1) * wl->input_bytes / copy_bw, n - 1, &dp_comm_s);
            host_work(&t, CAUSE_DISPATCH, eci_const(ctx, EC_C_dp_replicate_tensor_s) * wl->param_tensors * (n - 1));
            dp_exchange(&t, &p, eci_comm_bcast_chunked_s(comm, bcast_bytes, dp_chunk_bytes), bcast_chunks, &dp_comm_s);
        }
        if (per_unit) { /* the root unit (embeddings, head) is gathered before the first op runs */
            eci_shard_begin(&shard, t.gpu);
            comm_wait(&t, eci_shard_launch(&shard, t.gpu, root_gather_s, 1));
            p.shard = &shard;
        }
        p.dispatch_fwd_s = model_fwd_s;
        p.dispatch_bwd_s = model_bwd_s;
        p.op_fwd_s = model_op_s;
        host_work(&t, CAUSE_DISPATCH, replay_s);
        forward_pass_memo(&t, &p, simulate > 1 ? &fwd_once : NULL);
        p.dispatch_fwd_s = eager_fwd_s;
        p.dispatch_bwd_s = eager_bwd_s;
        p.op_fwd_s = eager_op_s;
        if (dp) /* gather every replica's outputs on GPU 0 */
            dp_exchange(&t, &p, (n - 1) * (wl->output_bytes / copy_bw + hop_s), n - 1, &dp_comm_s);
        p.ddp = all_reduce ? &sched : NULL;
        if (all_reduce)
            eci_ddp_restart(&sched);
        p.overlap_s = 0;
        p.dispatch_fwd_s = model_fwd_s; /* checkpointing's recompute */
        p.dispatch_bwd_s = model_bwd_s;
        p.op_fwd_s = model_op_s;
        host_work(&t, CAUSE_DISPATCH, replay_s);
        backward_pass(&t, &p);
        p.dispatch_fwd_s = eager_fwd_s;
        p.dispatch_bwd_s = eager_bwd_s;
        p.op_fwd_s = eager_op_s;
        p.ddp = NULL;
        if (per_unit) { /* the root's gradients are reduced last; the step waits for every reduction */
            comm_wait(&t, eci_shard_launch(&shard, t.gpu, root_reduce_s, 0));
            shard_comm[micro] = shard.gather_s + shard.reduce_s;
            p.overlap_s = shard.stretch_s;
            p.shard = NULL;
        }
        if (micro > 0) { /* AccumulateGrad adds into the existing .grad of every tensor */
            double acc = eci_mem_time_s(&rates, 3.0 * grad_bytes, (int)trained_tensors) * gpu_scale;
            gpu_op(&t, p.dispatch_bwd_s * trained_tensors, acc, trained_tensors, 1);
            p.bwd_s += acc;
        }
        if (dp) { /* Gather's backward scatters the gradients of the outputs the loss used:
                   * the logits when the loss runs on GPU 0 after the gather, only the n
                   * per-replica losses when the forward returns them (HF heads given labels;
                   * the gathered logits then have no gradient).  Broadcast's backward
                   * (ReduceAddCoalesced) NCCL-reduces every replica's gradients onto GPU 0 */
            dp_exchange(&t, &p, (n - 1) * (output_grad_bytes / copy_bw + hop_s), n - 1, &dp_comm_s);
            /* ReduceAddCoalesced is Python under the GIL (torch/cuda/comm.py): zip(*inputs)
             * and _take_tensors walk every replica's gradient list before the first NCCL
             * reduce can be issued, so GPU 0 waits for n x param_tensors Python steps. */
            host_work(&t, CAUSE_DISPATCH, op_s * trained_tensors * n);
            dp_exchange(&t, &p, eci_comm_bcast_chunked_s(comm, grad_bytes, dp_chunk_bytes), dp_chunks, &dp_comm_s);
        }
        double exposed = 0;
        if (all_reduce) { /* the buckets still in flight when backward ends are exposed */
            exposed = eci_ddp_finish(&sched, t.gpu);
            gpu_op(&t, p.dispatch_bwd_s, exposed, sched.launched, 1);
            exposed_total += exposed;
        }
        if (tr.micro_kernels > 0) /* the trainer's own small kernels (HF: the nan filter, tr_loss) */
            gpu_op(&t, op_s * tr.micro_kernels, rates.floor_s * tr.micro_kernels * gpu_scale, tr.micro_kernels, 1);
        host_work(&t, CAUSE_DISPATCH, op_s * (tr.micro_host_ops + tr.micro_host_ops_per_tensor * trained_tensors));
        if (syncs > 0)
            sync_host(&t);
        micro_s[micro] = t.cpu - start;
        last_micro.busy = t.busy - micro_start.busy;
        last_micro.copy = t.copy - micro_start.copy;
        last_micro.kernels = t.kernels - micro_start.kernels;
        last_micro.host_busy = t.host_busy - micro_start.host_busy;
        for (int c = 0; c < N_CAUSES; c++)
            last_micro.gap[c] = t.gap[c] - micro_start.gap[c];
        if (all_reduce && !reduce_each_micro) { /* micro-steps 3..ga that repeat this one run under no_sync */
            micro_s[micro] -= exposed + p.overlap_s;
            last_micro.busy -= exposed + p.overlap_s;
            last_micro.kernels -= sched.launched;
        }
        /* backward slowed by the collectives beside it is a cost of communication too */
        res->comm.overlap_s += p.overlap_s * (reduce_each_micro && simulate > 1 && micro == 1 ? ga - 1 : 1);
    }
    /* Micro-steps after the second repeat the second exactly (each ends in a sync). */
    double scale_rest = ga > 2 ? (double)(ga - 2) : 0;
    double micro_weight = reduce_each_micro ? (double)ga / simulate : 1.0; /* simulated micro-steps stand for ga */
    res->comm.dp_reduce_s = exposed_total * micro_weight;

    /* Last micro-step: GradScaler, clipping, the optimizer (optim.c; on GPU 0 only under dp,
     * over this GPU's shard), then the loop's bookkeeping (trainer.c). */
    double w_shards, g_shards, o_shards;
    shard_degrees(cfg, &r, &w_shards, &g_shards, &o_shards);
    double opt_params = eci_memory_shard_share(wl, 1.0, o_shards, r.ep);
    eci_phase ph[ECI_N_PHASES];
    eci_step_in si = {.wl = wl, .params = opt_params, .tensors = trained_tensors, .rates = &rates,
                      .optimizer = cfg->optimizer, .precision = cfg->precision,
                      .max_grad_norm = eci_trainer_max_grad_norm(ctx, cfg), .dispatch_fwd_s = op_s,
                      .dispatch_bwd_s = host->dispatch_bwd_s, .gpu_scale = gpu_scale,
                      .torch_version = cfg->torch_version};
    eci_optim_phases(ctx, &si, ph);
    if (cfg->offload != EC_OFFLOAD_NONE) /* the update runs on the host (below), not on the GPU */
        ph[ECI_PHASE_OPTIMIZER] = (eci_phase){0};
    double opt_gpu_s = 0;
    for (int i = 0; i < ECI_N_PHASES; i++) {
        if (ph[i].kernels <= 0)
            continue;
        if (ph[i].serial) { /* the host waits after every tensor: issue and kernels add up */
            host_work(&t, CAUSE_DISPATCH, ph[i].host_s);
            gpu_op(&t, 0, ph[i].gpu_s, ph[i].kernels, 1);
            sync_host(&t);
        } else {
            gpu_op(&t, ph[i].host_s, ph[i].gpu_s, ph[i].kernels, 1);
        }
        opt_gpu_s += ph[i].gpu_s;
        if (ph[i].sync_after)
            sync_host(&t);
    }
    if (cfg->offload != EC_OFFLOAD_NONE) { /* the optimizer runs on the host (DeepSpeedCPUAdam, FSDP CPUOffload):
                                            * gradients down and parameters back over PCIe, the update on the CPU */
        double pcie = opt_params * (reduce_bytes + compute_elem_bytes(cfg->precision)) / g->h2d_pinned_bytes_per_s;
        double cpu = opt_params * eci_const(ctx, EC_C_host_optimizer_bytes_per_param) /
                     eci_const(ctx, EC_C_host_optimizer_bytes_per_s);
        if (cfg->offload == EC_OFFLOAD_OPTIMIZER_AND_PARAMS) /* FSDP moved them with each reduction already */
            pcie = 0;
        host_work(&t, CAUSE_COMM, cpu + pcie);
        sync_host(&t);
        res->comm.offload_s = cpu + pcie;
    }
    double zero_gather_s = 0;
    if (r.strategy == EC_STRATEGY_ZERO && cfg->zero_stage < 3 && lc.dp.n > 1) {
        /* ZeRO-1/2: every rank all-gathers the updated 16-bit parameters of the others' shards */
        zero_gather_s = eci_coll_s(comm, &lc.dp, ECI_COLL_ALLGATHER,
                                   wl->trainable_params * compute_elem_bytes(cfg->precision));
        gpu_op(&t, op_s, zero_gather_s, 1, 1);
    }
    host_work(&t, CAUSE_DISPATCH, host->step_overhead_s +
              op_s * (tr.step_host_ops + tr.step_host_ops_per_tensor * trained_tensors));
    sync_host(&t);

    /* Assemble the step: simulated part plus the repeated micro-steps. */
    double step_s = t.cpu + scale_rest * micro_s[simulate - 1];
    double rest_frac = simulate > 1 ? scale_rest : 0;
    /* micro-steps 3..ga repeat the second, AccumulateGrad included */
    double micro_fwd = p.fwd_s - last_fwd0, micro_bwd = p.bwd_s - last_bwd0;
    double inline_fwd, inline_bwd, group_s[ECI_N_GROUPS], inline_launched;
    inline_comm(wl, cost, &rates, cfg->checkpointing, &inline_fwd, &inline_bwd, group_s, &inline_launched);
    res->breakdown.forward_s = p.fwd_s + rest_frac * micro_fwd - ga * inline_fwd;
    res->breakdown.backward_s = p.bwd_s + rest_frac * micro_bwd - ga * inline_bwd;
    res->comm.tp_s = ga * group_s[ECI_GROUP_TP];
    res->comm.cp_s = ga * group_s[ECI_GROUP_CP];
    res->comm.ep_s = ga * group_s[ECI_GROUP_EP];
    res->breakdown.optimizer_s = opt_gpu_s;
    /* Micro-steps 3..ga repeat the last simulated one; once-per-step work is not scaled. */
    res->breakdown.cpu_overhead_s = t.gap[CAUSE_DISPATCH] + scale_rest * last_micro.gap[CAUSE_DISPATCH];
    res->breakdown.loader_s = t.gap[CAUSE_LOADER] + scale_rest * last_micro.gap[CAUSE_LOADER];
    res->breakdown.h2d_s = t.gap[CAUSE_H2D] + t.copy + scale_rest * (last_micro.gap[CAUSE_H2D] + last_micro.copy);
    double waits = t.gap[CAUSE_COMM] + scale_rest * last_micro.gap[CAUSE_COMM];
    /* the GPU's waits: for gathers and reductions, or for the host optimizer under offload */
    res->comm.shard_wait_s = waits - res->comm.offload_s > 0 ? waits - res->comm.offload_s : 0;
    res->comm.shard_wait_s += zero_gather_s;
    res->breakdown.comm_s = waits + (ga * (inline_fwd + inline_bwd)) + res->comm.dp_reduce_s + res->comm.overlap_s +
                            zero_gather_s;
    if (dp) /* DataParallel's exchanges happen every micro-step */
        res->breakdown.comm_s += dp_comm_s * (double)ga / simulate;
    res->comm_total_s = dp ? dp_comm_s * (double)ga / simulate
                           : sched.comm_busy_s * micro_weight + (shard_comm[0] + shard_comm[simulate - 1] * (ga - 1)) +
                                 ga * inline_launched + zero_gather_s;
    if (n > 1) { /* a synchronous step waits for the slowest GPU (order statistics) */
        double e_max;
        if ((rc = eci_expected_max_normal(ctx, n, &e_max)) != EC_OK)
            return rc;
        double compute_s = res->breakdown.forward_s + res->breakdown.backward_s + res->breakdown.optimizer_s;
        res->straggler_s = eci_const(ctx, EC_C_gpu_speed_cv_frac) * e_max * compute_s;
        step_s += res->straggler_s;
        res->breakdown.comm_s += res->straggler_s;
    }
    double busy = t.busy + scale_rest * last_micro.busy;
    res->kernels_per_step = t.kernels + scale_rest * last_micro.kernels;
    double host_busy = t.host_busy + scale_rest * last_micro.host_busy;

    res->step_s = step_s;
    res->gpu_busy_s = busy;
    res->cpu_issue_s = host_busy;
    *host_s = host_busy;
    res->samples_per_s = (double)cfg->batch_per_gpu * ga * r.dp / step_s;
    res->gpu_util_frac = busy / step_s > 1.0 ? 1.0 : busy / step_s;
    /* forward + backward (twice the forward; a frozen GEMM's backward only once) */
    res->flop_per_step = (3.0 * wl->model_flop - wl->frozen_flop) * ga;
    res->mfu_frac = res->flop_per_step / (step_s * rates.gemm_peak_flop_per_s);
    res->hfu_frac = (res->flop_per_step + ga * eci_workload_recompute_flop(wl, cfg->checkpointing)) /
                    (step_s * rates.gemm_peak_flop_per_s);

    /* Memory: GPU 0, and under dp the other GPUs, which hold no optimizer.  DataParallel's
     * GPU 0 also keeps every replica's gathered outputs. */
    eci_mem_in mi = {.wl = wl, .precision = cfg->precision, .optimizer = cfg->optimizer,
                     .checkpointing = cfg->checkpointing,
                     .ddp_bucket_copy = r.strategy == EC_STRATEGY_DDP && n > 1 && !cfg->gradient_as_bucket_view,
                     .dp_role = dp ? 1 : 0, .num_gpus = n,
                     .dynamic_shapes = cfg->padding != EC_PAD_MAX_LENGTH, .capacity_bytes = g->memory_bytes,
                     .allocator_scale = 1.0, .weight_shards = w_shards, .grad_shards = g_shards,
                     .opt_shards = o_shards, .zero = r.strategy == EC_STRATEGY_ZERO,
                     .opt_on_host = cfg->offload != EC_OFFLOAD_NONE,
                     .weights_on_host = cfg->offload == EC_OFFLOAD_OPTIMIZER_AND_PARAMS,
                     .act_copies = r.in_flight, .frozen_elem_bytes = p.frozen_elem_bytes, .ep = r.ep,
                     .grad_accum = ga, .expandable_segments = cfg->expandable_segments,
                     .keep_grads = cfg->torch_version > 0 && cfg->torch_version < 2.0};
    if (per_unit) { /* gathered 16-bit units in flight (the rate limiter's; without resharding after forward,
                     * every unit stays gathered until backward), the root, and one unit's unsharded
                     * gradients before their reduce-scatter */
        double unit = eci_workload_largest_unit(wl);
        double gathered = shard.regather ? shard.limit * unit + root : wl->params;
        mi.gathered_bytes = gathered * compute_elem_bytes(cfg->precision) +
                            unit * reduce_bytes * wl->trainable_params / wl->params;
    }
    if (dp) /* the gathered logits, and their gradients unless the forward returned the loss */
        mi.extra_workspace_bytes = (1.0 + (output_grad_bytes > 0)) * n * wl->output_bytes;
    eci_memory_estimate(ctx, &mi, &res->memory);
    res->host_pinned_bytes = mi.host_bytes;
    res->other_gpu_peak_bytes = res->memory.peak_bytes;
    res->other_gpu_busy_s = busy;
    if (dp) {
        ec_memory other;
        mi.dp_role = 2;
        mi.extra_workspace_bytes = 0;
        eci_memory_estimate(ctx, &mi, &other);
        res->other_gpu_peak_bytes = other.peak_bytes;
        res->other_gpu_busy_s = busy - opt_gpu_s;
    }

    res->busbw_bytes_per_s = n > 1 ? busbw : 0;

    /* The rest (input pipeline, epoch, warnings) is eci_predict's; hand back the rates' warnings. */
    if (rates.warnings)
        add_warning(res, rates.warnings, rates.warning_text);
    fp32_conv_warning(ctx, cfg, g, wl, res);
    rp->input_bytes = wl->input_bytes;
    rp->tokens = wl->tokens;
    rp->micro_s = micro_s[simulate - 1];
    /* a pipeline sends the stage's input in the compute dtype (Megatron's bf16 hidden states) */
    rp->stage_input_bytes = wl->n_blocks > 0 ? wl->blocks[0].input_elems * compute_elem_bytes(cfg->precision) : 0;
    res->tokens_per_s = wl->tokens * ga * r.dp / step_s;
    res->dp = r.dp;
    res->tp = r.tp;
    res->pp = r.pp;
    res->cp = r.cp;
    res->ep = r.ep;
    return EC_OK;
}

/* One evaluation batch per GPU (docs/DESIGN.md 3.5): the model in eval mode (no dropout) and
 * under no_grad, forward only, at eval_batch; its input copy (real data), the loop's read of
 * its loss or predictions (eval_syncs_per_step), and what its own DataLoader adds: loading in
 * the loop without workers, else the workers' rate when they are slower than the step. */
static int eval_step(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *calib, double seq,
                     double gpu_scale, double *out_s)
{
    *out_s = 0;
    int batch = cfg->eval_batch > 0 ? cfg->eval_batch : cfg->batch_per_gpu, rc;
    eci_shape shape;
    fill_shape(ctx, cfg, r, seq, batch, &shape);
    shape.inference = 1;
    const eci_workload *wl;
    if ((rc = eci_workload_get(ctx, r->net, r->task, &shape, &wl)) != EC_OK)
        return rc;
    eci_rates rates;
    eci_rates_init(ctx, r->gpu, cfg->precision, calib, &rates);
    layout_comm lc; /* the layout's groups price a tensor-parallel model's collectives */
    if ((rc = layout_comm_init(ctx, cfg, r, calib, &lc)) != EC_OK)
        return rc;
    rates_of_layout(&lc, &rates);
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
    model_dispatch(ctx, cfg, host, &p, &p.dispatch_fwd_s, &p.dispatch_bwd_s, &p.op_fwd_s, &replay_s);
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
    forward_pass(&t, &p);
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

/* ---- pipeline parallelism ----------------------------------------------------------------
 * Megatron splits the repeated layers evenly over pp stages (the embeddings go with the first,
 * the head with the last: their imbalance is priced, not assumed away).  Each distinct stage is
 * priced alone by step_model: its steady micro-batch u_s and what follows the last micro-batch
 * (optimizer, gradient reduction).  Then the schedule: m = grad_accum micro-batches through the
 * stages take m x max u + (sum u - max u) / v, the fill and drain shortened by v model chunks
 * per stage (interleaved 1F1B; GPipe and 1F1B have the same bubble, Narayanan et al. 2021),
 * each micro-batch's activation and its gradient crossing every chunk boundary (p2p, exposed).
 * 1F1B holds pp - s micro-batches' activations on stage s, GPipe all m. */
typedef struct stage_key {
    int first, last, count, block; /* block: the one block all its layers are in, -1: spans blocks */
} stage_key;

/* The top-level block holding layer `layer` of the pipeline's order. */
static int block_of(const eci_net *net, int layer)
{
    int off = 0, b = 0;
    for (size_t i = 0; i < net->n_layers; i++) {
        if (net->layers[i].kind != EC_LAYER_REPEAT)
            continue;
        off += net->layers[i].u.repeat.times;
        if (layer < off)
            return b;
        b++;
        i += (size_t)net->layers[i].u.repeat.layers;
    }
    return b;
}

static double stage_in_flight(const ec_config *cfg, int s, int pp)
{
    double m = cfg->grad_accum, v = cfg->pp_chunks, n;
    if (cfg->pp_schedule == EC_PP_GPIPE)
        n = m;
    else if (cfg->pp_schedule == EC_PP_INTERLEAVED) /* warm-up chunk-micro-batches, each 1/v of the stage */
        n = ((pp - s - 1) * 2.0 + (v - 1) * pp + 1) / v;
    else
        n = pp - s;
    return n < m ? n : m;
}

/* The pipeline's step; stages != NULL (pp entries): every stage priced on its own and described. */
static int pipeline_model_stages(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib,
                                 double seq, double gpu_scale, ec_result *res, double *host_s, ec_stage *stages)
{
    int pp = rp->pp;
    if (pp <= 1 || rp->net == NULL)
        return step_model(ctx, cfg, rp, calib, seq, gpu_scale, NULL, res, host_s);
    int L = eci_net_pipeline_layers(rp->net), m = cfg->grad_accum, rc;
    layout_comm lc; /* every stage's links: worked out once */
    if ((rc = layout_comm_init(ctx, cfg, rp, calib, &lc)) != EC_OK)
        return rc;
    double v = cfg->pp_schedule == EC_PP_INTERLEAVED ? cfg->pp_chunks : 1;
    eci_resolved st = *rp;
    ec_result one, crit, worst;
    stage_key prev = {-1, -1, -1, -1};
    double u = 0, tail = 0, u_sum = 0, u_max = -1, tail_max = 0, flop = 0, hw_flop = 0, p2p = 0, crit_host = 0,
           crit_tail = 0;
    memset(&worst, 0, sizeof worst);
    for (int s = 0; s < pp; s++) {
        int lo = (int)((long)s * L / pp), hi = (int)((long)(s + 1) * L / pp);
        int b0 = block_of(rp->net, lo), b1 = block_of(rp->net, hi - 1);
        stage_key k = {s == 0, s == pp - 1, hi - lo, b0 == b1 ? b0 : -1};
        int same = stages == NULL && k.block >= 0 && memcmp(&k, &prev, sizeof k) == 0;
        if (!same) { /* middle stages of one block are alike: priced once (with the most in flight) */
            st.stage_lo = lo;
            st.stage_hi = hi;
            st.in_flight = stage_in_flight(cfg, s, pp);
            double stage_host;
            if ((rc = step_model(ctx, cfg, &st, calib, seq, gpu_scale, &lc, &one, &stage_host)) != EC_OK)
                return rc;
            if (s == 0) /* the boundary's activation: one p2p send to the next stage */
                p2p = eci_coll_s(&lc.comm, &lc.pp, ECI_COLL_P2P, st.stage_input_bytes);
            u = st.micro_s + 2.0 * v * p2p;
            tail = one.step_s - m * st.micro_s;
            if (stages != NULL)
                stages[s] = (ec_stage){.first_layer = lo, .layers = hi - lo, .micro_s = st.micro_s,
                                       .in_flight = st.in_flight > 0 ? st.in_flight : 1, .memory = one.memory};
            if (one.memory.peak_bytes > worst.memory.peak_bytes)
                worst = one;
            if (u > u_max) {
                u_max = u;
                crit = one;
                crit_host = stage_host;
                crit_tail = tail;
            }
        }
        prev = k;
        u_sum += u;
        tail_max = tail > tail_max ? tail : tail_max;
        flop += one.flop_per_step;
        hw_flop += one.mfu_frac > 0 ? one.flop_per_step * one.hfu_frac / one.mfu_frac : one.flop_per_step;
    }
    double step = m * u_max + (u_sum - u_max) / v + tail_max;
    *res = crit;
    *host_s = crit_host;
    res->memory = worst.memory;
    res->host_pinned_bytes = worst.host_pinned_bytes;
    res->other_gpu_peak_bytes = worst.memory.peak_bytes;
    res->comm.pp_p2p_s = 2.0 * v * p2p * m;
    double extra = step - (m * (u_max - 2.0 * v * p2p) + crit_tail); /* beyond the critical stage alone */
    res->comm.pp_bubble_s = extra - res->comm.pp_p2p_s > 0 ? extra - res->comm.pp_p2p_s : 0;
    res->breakdown.comm_s += extra;
    res->step_s = step;
    res->samples_per_s = (double)cfg->batch_per_gpu * m * rp->dp / step;
    res->tokens_per_s = rp->tokens * m * rp->dp / step;
    res->flop_per_step = flop / pp; /* per GPU: the stages' mean */
    double peak = crit.mfu_frac > 0 ? crit.flop_per_step / (crit.mfu_frac * crit.step_s) : 0;
    res->mfu_frac = peak > 0 ? res->flop_per_step / (step * peak) : 0;
    res->hfu_frac = peak > 0 ? hw_flop / pp / (step * peak) : 0; /* the stages' recompute, summed */
    res->gpu_util_frac = res->gpu_busy_s / step > 1.0 ? 1.0 : res->gpu_busy_s / step;
    rp->input_bytes = st.input_bytes;
    rp->tokens = st.tokens;
    return EC_OK;
}

static int pipeline_model(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib, double seq,
                          double gpu_scale, ec_result *res, double *host_s)
{
    return pipeline_model_stages(ctx, cfg, rp, calib, seq, gpu_scale, res, host_s, NULL);
}

/* cfg resolved (names, layout, checks) and the calibration that applies to it. */
static int resolve_with_calib(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r, eci_params *calib)
{
    int rc = eci_resolve(ctx, cfg, r);
    return rc == EC_OK ? eci_params_current(ctx, cfg, calib) : rc;
}

int ec_predict_stages(ec_ctx *ctx, const ec_config *cfg, ec_stage *out, size_t cap, size_t *n)
{
    if (ctx == NULL || cfg == NULL || n == NULL || (out == NULL && cap > 0))
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_predict_stages: NULL argument") : EC_EMISUSE;
    *n = 0;
    eci_resolved r;
    eci_params calib;
    int rc = resolve_with_calib(ctx, cfg, &r, &calib);
    if (rc != EC_OK)
        return rc;
    if (r.net == NULL)
        return eci_error(ctx, EC_EINVAL, "ec_predict_stages: gpu_step_s without a model has no stages");
    size_t stages = r.pp > 1 ? (size_t)r.pp : 1;
    if (cap < stages)
        return eci_error(ctx, EC_EINVAL, "ec_predict_stages: %zu stages (pp) do not fit in %zu entries", stages, cap);
    ec_result res;
    double host_s;
    if (r.pp <= 1) {
        if ((rc = step_model(ctx, cfg, &r, &calib, r.seq, 1.0, NULL, &res, &host_s)) != EC_OK)
            return rc;
        out[0] = (ec_stage){.first_layer = 0, .layers = eci_net_pipeline_layers(r.net), .micro_s = r.micro_s,
                            .in_flight = 1, .memory = res.memory};
    } else if ((rc = pipeline_model_stages(ctx, cfg, &r, &calib, r.seq, 1.0, &res, &host_s, out)) != EC_OK) {
        return rc;
    }
    *n = stages;
    return EC_OK;
}

/* ---- the input pipeline and the epoch (pipeline.c simulates them; docs/DESIGN.md 3.2, 3.5) - */
/* gpu_step_s without a model: one block of kernels per micro-step, ended by the loop's sync. */
static void measured_step(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res, double *host_s)
{
    memset(res, 0, sizeof *res);
    const eci_host *host = r->host;
    int ga = cfg->grad_accum;
    timeline t = {0};
    for (int m = 0; m < ga; m++) {
        gpu_op(&t, host->dispatch_fwd_s, cfg->gpu_step_s / ga, 1, 1);
        sync_host(&t);
    }
    host_work(&t, CAUSE_DISPATCH, host->step_overhead_s);
    sync_host(&t);
    /* forward : backward as the backward GEMM factor says (the split is only descriptive) */
    double bwd = eci_const(ctx, EC_C_bwd_gemm_flop_factor);
    res->step_s = t.cpu;
    res->gpu_busy_s = t.busy;
    res->cpu_issue_s = *host_s = t.host_busy;
    res->kernels_per_step = t.kernels;
    res->breakdown.forward_s = t.busy / (1.0 + bwd);
    res->breakdown.backward_s = t.busy - res->breakdown.forward_s;
    res->breakdown.cpu_overhead_s = t.gap[CAUSE_DISPATCH];
    res->memory.capacity_bytes = r->gpu->memory_bytes;
    res->memory.fits = 1;
}

/* Padded lengths at which the step model is evaluated: seq alone for max_length padding,
 * else up to PAD_KNOTS whole lengths spread evenly from the shortest sample to the cap. */
static size_t pad_knots(const ec_config *cfg, const eci_lengths *l, int seq, double *len)
{
    if (l == NULL || cfg->padding == EC_PAD_MAX_LENGTH) {
        len[0] = seq;
        return 1;
    }
    int lo = l->min_len, span = seq - lo;
    int k = span + 1 < PAD_KNOTS ? span + 1 : PAD_KNOTS;
    size_t n = 0;
    for (int i = 0; i < k; i++) {
        double v = k > 1 ? floor(lo + (double)i * span / (k - 1) + 0.5) : lo;
        if (n == 0 || v > len[n - 1])
            len[n++] = v;
    }
    return n;
}

/* Collective kernels on the step's critical path (busy GPU time): DDP's exposed buckets, the
 * tensor/context/expert collectives on the compute stream, ZeRO's gather after the step. */
static double coll_busy_s(const ec_result *r)
{
    const ec_comm_parts *c = &r->comm;
    return c->tp_s + c->cp_s + c->ep_s + c->dp_reduce_s + c->overlap_s;
}

/* Collective time that ran beside compute: all launched, less what was exposed. */
static double coll_hidden_s(const ec_result *r)
{
    const ec_comm_parts *c = &r->comm;
    double exposed = c->tp_s + c->cp_s + c->ep_s + c->dp_reduce_s + c->shard_wait_s + c->pp_p2p_s;
    return r->comm_total_s > exposed ? r->comm_total_s - exposed : 0;
}

/* Series the pipeline averages for the result beyond the ones that drive it. */
enum { S_FWD = ECI_S_MECHANICS, S_BWD, S_OPT, S_H2D_EXPOSED, S_CPU, S_KERNELS, S_FLOP, S_PEAK, N_SERIES };

static void pipe_loader(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_lengths *l,
                        double input_bytes, eci_pipe_in *in)
{
    const eci_host *host = r->host;
    double per_gpu = (double)cfg->batch_per_gpu * r->dp; /* samples per micro-step over the replicas */
    in->steps = cfg->dataset_samples > 0 ? (long)ceil(cfg->dataset_samples / per_gpu) : 0;
    /* dp: one process (one DataLoader) builds the global batch; ddp and the other multi-process
     * strategies: one DataLoader per GPU process, their workers sharing the host's cores */
    int dp = r->strategy == EC_STRATEGY_DP;
    int procs = dp || r->strategy == EC_STRATEGY_SINGLE ? 1 : r->per_node < cfg->num_gpus ? r->per_node : cfg->num_gpus;
    in->batch = dp ? cfg->batch_per_gpu * cfg->num_gpus : cfg->batch_per_gpu;
    in->num_workers = cfg->num_workers;
    in->prefetch_factor = cfg->prefetch_factor;
    in->persistent = cfg->persistent_workers;
    in->worker_start_s = host->worker_start_s;
    in->cores = host->cores / procs > 1 ? host->cores / procs : 1;
    in->pin_memory = cfg->pin_memory;
    in->pin_thread = cfg->pin_memory && cfg->num_workers > 0;
    in->padding = cfg->padding;
    in->lengths = l;
    in->seq = r->seq > 0 ? r->seq : 1;
    /* HF LengthGroupedSampler: mega-batches of min(50, N / (4 b)) batches, at least one */
    double mult = eci_const(ctx, EC_C_bucket_mega_batch_mult);
    if (cfg->dataset_samples > 0 && floor(cfg->dataset_samples / (4.0 * cfg->batch_per_gpu)) < mult)
        mult = floor(cfg->dataset_samples / (4.0 * cfg->batch_per_gpu));
    in->mega_batch = (int)(mult >= 1 ? mult : 1) * cfg->batch_per_gpu;
    in->seed = cfg->seed;
    in->cpu_cv = eci_const(ctx, EC_C_loader_cpu_cv);
    if (cfg->data_synthetic)
        return; /* no input pipeline cost at all */
    in->pin_s = input_bytes / host->memcpy_bytes_per_s;
    if (cfg->sample_cpu_s >= 0) {
        in->sample_fixed_s = cfg->sample_cpu_s;
        return;
    }
    in->sample_fixed_s = host->collate_per_sample_s;
    if (cfg->tokenize == EC_TOKENIZE_ON_THE_FLY && r->text)
        in->sample_token_s = 1.0 / (cfg->tokenizer == EC_TOKENIZER_PYTHON ? host->python_tokenizer_tokens_per_s
                                                                           : host->fast_tokenizer_tokens_per_s);
}

/* eci_pipe_prepare, also handing back cfg resolved (*resolved, as eci_resolve gives it) and
 * the calibration it used (*calib_out: fixed, the context's, or the priors in *buf). */
static int pipe_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, eci_pipe_in *in, ec_result *top,
                        eci_lengths **lengths, eci_resolved *resolved, eci_params *buf, const eci_params **calib_out)
{
    /* every field but the knots' arrays (~3 KB), which are filled below as far as they are
     * read (n_knots lengths of n_series series) */
    memset(in, 0, offsetof(eci_pipe_in, knot_len));
    in->n_series = 0;
    memset(&in->seed, 0, sizeof *in - offsetof(eci_pipe_in, seed));
    /* top: written whole by the step of the first knot (step_model and measured_step zero it) */
    *lengths = NULL;
    eci_resolved r;
    int rc = eci_resolve(ctx, cfg, &r);
    if (rc != EC_OK)
        return rc;
    *resolved = r;
    if (fixed != NULL)
        *calib_out = fixed;
    else if ((rc = eci_params_ref(ctx, cfg, buf, calib_out)) != EC_OK)
        return rc;
    const eci_params *calib = *calib_out;
    if (cfg->lengths[0] != '\0' && (rc = eci_lengths_parse(ctx, cfg->lengths, r.seq, lengths)) != EC_OK)
        return rc;
    const eci_lengths *l = *lengths;
    int ga = cfg->grad_accum;
    in->n_knots = pad_knots(cfg, l, r.seq, in->knot_len);
    in->n_series = N_SERIES;

    /* gpu_step_s with a model: scale every kernel so that the step at the typical padded
     * length takes what was measured (communication excluded). */
    double scale = 1.0, host_s;
    ec_result kr;
    if (cfg->gpu_step_s > 0 && r.net != NULL) {
        double ref = l != NULL && cfg->padding != EC_PAD_MAX_LENGTH ? eci_lengths_padded_mean(l, cfg->batch_per_gpu)
                                                                     : r.seq;
        if ((rc = pipeline_model(ctx, cfg, &r, calib, ref, 1.0, &kr, &host_s)) != EC_OK)
            goto fail;
        double compute_s = kr.gpu_busy_s - kr.breakdown.comm_s;
        scale = compute_s > 0 ? cfg->gpu_step_s / compute_s : 1.0;
    }
    /* each knot is stepped into top: the last, the longest padded length, stays (the memory peak) */
    for (size_t k = 0; k < in->n_knots; k++) {
        if (r.net == NULL)
            measured_step(ctx, cfg, &r, top, &host_s);
        else if ((rc = pipeline_model(ctx, cfg, &r, calib, in->knot_len[k], scale, top, &host_s)) != EC_OK)
            goto fail;
        const ec_breakdown *b = &top->breakdown;
        double v[N_SERIES] = {
            [ECI_S_WALL] = top->step_s, [ECI_S_HOST] = host_s, [ECI_S_BUSY] = top->gpu_busy_s,
            [ECI_S_H2D] = b->h2d_s, [ECI_S_COMM] = b->comm_s, [ECI_S_COLL_BUSY] = coll_busy_s(top),
            [ECI_S_COLL_HIDDEN] = coll_hidden_s(top), [S_FWD] = b->forward_s, [S_BWD] = b->backward_s,
            [S_OPT] = b->optimizer_s, [S_H2D_EXPOSED] = b->h2d_s, [S_CPU] = b->cpu_overhead_s,
            [S_KERNELS] = top->kernels_per_step, [S_FLOP] = top->flop_per_step,
            [S_PEAK] = top->mfu_frac > 0 ? top->flop_per_step / (top->mfu_frac * top->step_s) : 0};
        for (int j = 0; j < N_SERIES; j++)
            in->knot_val[j][k] = j == S_PEAK ? v[j] : v[j] / ga; /* per micro-step */
    }
    if (r.net != NULL && cfg->eval_samples > 0) { /* at the typical padded length of an evaluation batch */
        int eb = cfg->eval_batch > 0 ? cfg->eval_batch : cfg->batch_per_gpu;
        double len = l != NULL && cfg->padding != EC_PAD_MAX_LENGTH ? eci_lengths_padded_mean(l, eb) : r.seq;
        if ((rc = eval_step(ctx, cfg, &r, calib, len, scale, &top->eval_step_s)) != EC_OK)
            goto fail;
    }
    pipe_loader(ctx, cfg, &r, l, r.net != NULL ? r.input_bytes : 0, in);
    return EC_OK;
fail:
    eci_lengths_free(ctx, *lengths);
    *lengths = NULL;
    return rc;
}

int eci_pipe_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, eci_pipe_in *in, ec_result *top,
                     eci_lengths **lengths)
{
    eci_resolved r;
    eci_params buf;
    const eci_params *calib;
    return pipe_prepare(ctx, cfg, fixed, in, top, lengths, &r, &buf, &calib);
}

/* Bottleneck: compute when kernels fill most of the step, else the largest idle cause; and
 * the input pipeline whenever the GPU waits on it for more than loader_frac of the step
 * (constants.csv loader_bottleneck_frac: a GPU idle 36% of the step on the loader is
 * input-bound even though its kernels fill the other 64%). */
static ec_bottleneck bottleneck(const ec_breakdown *b, double step_s, double loader_frac)
{
    double idle[] = {b->cpu_overhead_s, b->loader_s, b->h2d_s, b->comm_s};
    ec_bottleneck which[] = {EC_BOTTLENECK_CPU, EC_BOTTLENECK_INPUT, EC_BOTTLENECK_H2D, EC_BOTTLENECK_COMM};
    ec_bottleneck out = EC_BOTTLENECK_COMPUTE;
    double compute_s = b->forward_s + b->backward_s + b->optimizer_s, worst = 0;
    for (int i = 0; i < 4; i++)
        if (idle[i] > worst) {
            worst = idle[i];
            if (idle[i] > compute_s)
                out = which[i];
        }
    if (out == EC_BOTTLENECK_COMPUTE && step_s > 0 && b->loader_s > loader_frac * step_s)
        out = EC_BOTTLENECK_INPUT;
    return out;
}

/* The step from the simulated epoch: means over the padded lengths it drew. */
static void assemble_step(const ec_config *cfg, const eci_resolved *r, const eci_lengths *l, const eci_pipe_in *in,
                          const eci_pipe_epoch *ep, double loader_frac, ec_result *res)
{
    double ga = cfg->grad_accum;
    const double *m = ep->mean_s;
    /* A known epoch: the step an epoch really averages (what tqdm shows), pipeline fill and
     * worker start-up included; they are loader wait.  Unknown: the steady state. */
    double fill = in->steps > 0 ? ep->epoch_s / in->steps - ep->step_s : 0;
    if (fill < 0)
        fill = 0;
    res->step_s = (ep->step_s + fill) * ga;
    res->breakdown.forward_s = m[S_FWD] * ga;
    res->breakdown.backward_s = m[S_BWD] * ga;
    res->breakdown.optimizer_s = m[S_OPT] * ga;
    res->breakdown.h2d_s = m[S_H2D_EXPOSED] * ga;
    res->breakdown.comm_s = m[ECI_S_COMM] * ga;
    res->breakdown.loader_s = (ep->stall_s + fill) * ga;
    /* a loop slowed by workers sharing its cores shows as CPU overhead */
    double contention = ep->step_s - ep->stall_s - m[ECI_S_WALL];
    res->breakdown.cpu_overhead_s = (m[S_CPU] + (contention > 0 ? contention : 0)) * ga;
    res->gpu_busy_s = m[ECI_S_BUSY] * ga;
    res->cpu_issue_s = m[ECI_S_HOST] * ga;
    res->kernels_per_step = m[S_KERNELS] * ga;
    res->flop_per_step = m[S_FLOP] * ga;
    res->samples_per_s = (double)cfg->batch_per_gpu * ga * r->dp / res->step_s;
    /* tokens: the padded length each sample runs at (dynamic padding: the mean batch maximum) */
    double per_sample = !r->text ? 1.0
                        : l != NULL && cfg->padding != EC_PAD_MAX_LENGTH ? eci_lengths_padded_mean(l, cfg->batch_per_gpu)
                                                                         : (double)r->seq;
    res->tokens_per_s = res->samples_per_s * per_sample;
    res->gpu_s_per_token = res->tokens_per_s > 0 ? cfg->num_gpus / res->tokens_per_s : 0;
    res->mfu_frac = m[S_PEAK] > 0 ? res->flop_per_step / (res->step_s * m[S_PEAK]) : 0;
    double util = res->gpu_busy_s / res->step_s;
    res->gpu_util_frac = util > 1.0 ? 1.0 : util;
    res->bottleneck = bottleneck(&res->breakdown, res->step_s, loader_frac);
}

/* One compilation of the step by torch.compile in cfg's mode, CUDA graph capture included. */
static double compile_time_s(const ec_ctx *ctx, const ec_config *cfg)
{
    if (cfg->compile == EC_COMPILE_OFF)
        return 0;
    double s = eci_const(ctx, EC_C_compile_s);
    if (cfg->compile == EC_COMPILE_MAX_AUTOTUNE || cfg->compile == EC_COMPILE_MAX_AUTOTUNE_NO_CUDAGRAPHS)
        s *= eci_const(ctx, EC_C_compile_max_autotune_factor);
    if (cuda_graphs(cfg))
        s += eci_const(ctx, EC_C_compile_cudagraph_capture_s);
    return s;
}

/* All of torch.compile's compilations in a run: one, one recompile once shapes change
 * (automatic_dynamic_shapes: dynamic padding or a ragged last batch), and evaluation (eval mode,
 * no grad) is a graph of its own. */
static double compile_once_s(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_pipe_epoch *ep)
{
    if (cfg->compile == EC_COMPILE_OFF)
        return 0;
    double per_gpu = (double)cfg->batch_per_gpu * r->dp;
    int ragged = cfg->dataset_samples > 0 && fmod(cfg->dataset_samples, per_gpu) != 0;
    int shapes = ep->distinct_lengths > 1 || ragged;
    return compile_time_s(ctx, cfg) *
           (1.0 + shapes * eci_const(ctx, EC_C_compile_dynamic_recompiles) + (cfg->eval_samples > 0));
}

/* Epoch = simulated training + evaluation + checkpoint writes; run = epochs + one-time costs. */
static void assemble_epoch(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_pipe_in *in,
                           const eci_lengths *l, const eci_pipe_epoch *ep, ec_result *res)
{
    if (cfg->dataset_samples <= 0)
        return;
    double per_gpu = (double)cfg->batch_per_gpu * r->dp; /* samples per micro-step over the replicas */
    res->steps_per_epoch = ceil(cfg->dataset_samples / (per_gpu * cfg->grad_accum));
    double extra = 0;
    if (cfg->eval_samples > 0) { /* eval_step: each replica evaluates its share, eval_batch at a time */
        double eval_batch = cfg->eval_batch > 0 ? cfg->eval_batch : cfg->batch_per_gpu;
        double evals = cfg->eval_every_steps > 0 ? floor(res->steps_per_epoch / cfg->eval_every_steps) : 1;
        double startup = cfg->num_workers > 0 && !cfg->persistent_workers && cfg->data_synthetic == EC_DATA_REAL
                             ? r->host->worker_start_s : 0; /* a new iterator starts its workers */
        res->eval_s = evals * (ceil(cfg->eval_samples / (eval_batch * r->dp)) * res->eval_step_s + startup);
        extra += res->eval_s;
    }
    if (cfg->checkpoints_per_epoch > 0) /* torch.save of weights and optimizer states */
        extra += cfg->checkpoints_per_epoch * (res->memory.weights_bytes + res->memory.optimizer_bytes) /
                 eci_const(ctx, EC_C_checkpoint_write_bytes_per_s);
    res->epoch_s = ep->epoch_s + extra;
    res->epoch_p10_s = ep->p10_s + extra;
    res->epoch_p50_s = ep->p50_s + extra;
    res->epoch_p90_s = ep->p90_s + extra;
    double util = ep->busy_s * in->steps / ep->epoch_s; /* nvidia-smi over the epoch, fill included */
    res->gpu_util_frac = util > 1.0 ? 1.0 : util;
    double once = ep->startup_once_s;
    if (r->text && cfg->tokenize == EC_TOKENIZE_UPFRONT && !cfg->data_synthetic && cfg->sample_cpu_s < 0) {
        double tokens = l != NULL ? l->mean : in->seq; /* datasets.map(batched=True) on every core */
        double rate = cfg->tokenizer == EC_TOKENIZER_PYTHON ? r->host->python_tokenizer_tokens_per_s
                                                            : r->host->fast_tokenizer_tokens_per_s;
        once += cfg->dataset_samples * tokens / (rate * r->host->cores);
    }
    once += compile_once_s(ctx, cfg, r, ep);
    res->run_s = res->epoch_s * cfg->epochs + once;
}

/* Keys given explicitly that this configuration never reads: one warning naming them. */
static void ignored_keys(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    char text[EC_WARNING_TEXT_MAX / 2] = "";
    size_t len = 0;
#define IGNORED(cond, what)                                                                          \
    do {                                                                                             \
        if ((cond) && len < sizeof text)                                                             \
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", len ? ", " : "", what);   \
    } while (0)
#define GIVEN(key) eci_config_given(ctx, cfg, ECI_KEY_##key)
    int no_epoch = cfg->dataset_samples <= 0;
    IGNORED(no_epoch && GIVEN(EPOCHS), "epochs (needs dataset_samples)");
    IGNORED(no_epoch && cfg->eval_samples > 0, "eval_samples (needs dataset_samples)");
    IGNORED(no_epoch && cfg->checkpoints_per_epoch > 0, "checkpoints_per_epoch (needs dataset_samples)");
    IGNORED(r->strategy != EC_STRATEGY_DDP && cfg->gradient_as_bucket_view, "gradient_as_bucket_view (ddp only)");
    IGNORED(cfg->num_workers == 0 && GIVEN(PREFETCH_FACTOR), "prefetch_factor (needs num_workers > 0)");
    int derived_loader = cfg->sample_cpu_s < 0 && !cfg->data_synthetic;
    IGNORED(!derived_loader && GIVEN(TOKENIZE), "tokenize (sample_cpu_s or data=synthetic replaces it)");
    IGNORED(!derived_loader && GIVEN(TOKENIZER), "tokenizer (sample_cpu_s or data=synthetic replaces it)");
    IGNORED(cfg->data_synthetic && cfg->sample_cpu_s >= 0, "sample_cpu_s (data=synthetic has no loader cost)");
#undef GIVEN
#undef IGNORED
    if (len > 0) {
        char msg[EC_WARNING_TEXT_MAX];
        snprintf(msg, sizeof msg, "keys with no effect in this configuration: %s", text);
        add_warning(res, EC_WARN_KEY_IGNORED, msg);
    }
}

/* Keys given that this model does not use, a parameter count that disagrees with its
 * published one, and checkpointing on a network without checkpointed blocks: said, not ignored. */
static void model_warnings(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    const eci_net *net = r->net;
    char text[EC_WARNING_TEXT_MAX];
    const char *ignored = NULL;
    /* a value off its default means the key was given (cheap: no key-name search per prediction) */
    if (!net->text && (cfg->seq_len > 0 || cfg->lengths[0] != '\0' || eci_config_given(ctx, cfg, ECI_KEY_TOKENIZE) ||
                       eci_config_given(ctx, cfg, ECI_KEY_TOKENIZER)))
        ignored = "seq_len, lengths, tokenize and tokenizer do not apply to an image network";
    else if (net->text && cfg->image_size > 0)
        ignored = "image_size does not apply to a text network";
    else if (!net->encdec && cfg->target_len > 0)
        ignored = "target_len applies to encoder-decoder networks only";
    else if (net->attention == EC_NET_ATTN_FUSED && cfg->attention == EC_ATTN_EAGER)
        ignored = "attention=eager has no effect: this network always runs a fused attention kernel (torchvision)";
    else if (net->attention == EC_NET_ATTN_EAGER && eci_config_given(ctx, cfg, ECI_KEY_ATTENTION) &&
             cfg->attention != EC_ATTN_EAGER)
        ignored = "attention= has no effect: this network has no fused attention path in its code (priced as eager)";
    if (ignored != NULL) {
        snprintf(text, sizeof text, "%s (model '%s'): ignored", ignored, net->id);
        add_warning(res, EC_WARN_KEY_IGNORED, text);
    }
    if (cfg->checkpointing) {
        int units = 0;
        for (size_t i = 0; i < net->n_layers; i++)
            units |= net->layers[i].kind == EC_LAYER_REPEAT && net->layers[i].u.repeat.checkpoint;
        if (!units) {
            snprintf(text, sizeof text, "checkpointing=%s has no effect on '%s': it has no checkpointed blocks",
                     cfg->checkpointing == EC_CKPT_SELECTIVE ? "selective" : "1", net->id);
            add_warning(res, EC_WARN_KEY_IGNORED, text);
        } else if (cfg->checkpointing == EC_CKPT_SELECTIVE && net->attention != EC_NET_ATTN_EAGER &&
                   cfg->attention != EC_ATTN_EAGER) {
            snprintf(text, sizeof text, "checkpointing=selective has no effect with a fused attention kernel "
                     "(attention=%s): it recomputes its scores in backward already",
                     cfg->attention == EC_ATTN_FLASH          ? "flash"
                     : cfg->attention == EC_ATTN_FLASH_TRITON ? "flash_triton"
                                                              : "sdpa");
            add_warning(res, EC_WARN_KEY_IGNORED, text);
        }
    }
    double pub = net->published_params;
    if (pub > 0 && fabs(net->params_published - pub) > 0.005 * pub) { /* |P_shapes - P_published| > 0.5% */
        snprintf(text, sizeof text, "'%s' (%s head): its shapes give %.4g parameters, its source states %.4g (%+.2f%%)",
                 net->id, net->published_task, net->params_published, pub,
                 100.0 * (net->params_published - pub) / pub);
        add_warning(res, EC_WARN_PARAMS_MISMATCH, text);
    }
}

static void add_warnings(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    const eci_gpu *g = r->gpu;
    double near = eci_const(ctx, EC_C_near_capacity_warn_frac);
    if (r->net == NULL)
        add_warning(res, EC_WARN_MEMORY_UNKNOWN, "gpu_step_s without a model: memory is not predicted");
    else if (!res->memory.fits)
        add_warning(res, EC_WARN_DOES_NOT_FIT, "predicted peak memory exceeds the GPU's capacity (out of memory)");
    else if (cfg->num_gpus > 1 && res->memory.peak_bytes > near * res->memory.capacity_bytes) {
        /* a multi-GPU job holds more than one GPU (NCCL buffers, DDP's copies); when a step no
         * longer fits, the caching allocator frees its cache and retries, step after step, and
         * throughput collapses.  Nothing in the step model prices that, so it is a warning. */
        char text[200];
        snprintf(text, sizeof text, "peak memory above %.0f%% of capacity on several GPUs: leave headroom "
                 "(allocator retries can slow every step)", 100 * near);
        add_warning(res, EC_WARN_NEAR_CAPACITY, text);
    }
    if (r->net != NULL && r->net->max_positions > 0 && r->seq > r->net->max_positions)
        add_warning(res, EC_WARN_SEQ_TRUNCATED, "seq_len exceeds the model's position embeddings");
    if (r->net != NULL)
        model_warnings(ctx, cfg, r, res);
    if (g->compute_capability < 5.0)
        add_warning(res, EC_WARN_UNSUPPORTED_GPU, "current PyTorch (CUDA 12) cannot run on Kepler GPUs");
    if (!g->measured && cfg->gpu_step_s <= 0)
        add_warning(res, EC_WARN_MODEL_DEFAULTED, "no measured GEMM efficiency for this GPU: architecture defaults used");
    /* lengths= prices padding only with padding=dynamic or bucketed; with max_length it still
     * sets how many tokens the tokenizer reads, when tokenization is priced at all. */
    int tokens_priced = r->text && !cfg->data_synthetic && cfg->sample_cpu_s < 0;
    if (cfg->lengths[0] != '\0' && cfg->padding == EC_PAD_MAX_LENGTH)
        add_warning(res, EC_WARN_LENGTHS_UNPADDED, tokens_priced
                    ? "lengths= with padding=max_length: every batch is padded to seq_len, so the lengths only set "
                      "the tokenizer's work (padding=dynamic pads each batch to its longest sample)"
                    : "lengths= has no effect here: padding=max_length pads every batch to seq_len and no tokenization "
                      "is priced (padding=dynamic pads each batch to its longest sample)");
    ignored_keys(ctx, cfg, r, res);
    if (r->nodes > 1 && r->fabric == NULL && cfg->network_bytes_per_s <= 0) {
        char text[240];
        snprintf(text, sizeof text, "%d nodes joined by the default network, %.0f Gb/s per node (constants.csv "
                 "internode_bytes_per_s): name yours with network= (epochcast networks) or network_gbit_per_s=",
                 r->nodes, r->node_net_bytes_per_s * 8 / 1e9);
        add_warning(res, EC_WARN_NETWORK_DEFAULTED, text);
    }
}

/* What the epoch and the run cost to rent (price.c): the job's hourly price x their time. */
static int add_cost(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    eci_quote q;
    int rc = eci_price_quote(ctx, cfg, r->gpu, r->nodes, &q);
    if (rc != EC_OK)
        return rc;
    res->price_per_hour = q.per_hour;
    res->cost_per_epoch = res->epoch_s * q.per_hour / 3600.0;
    res->cost_run = res->run_s * q.per_hour / 3600.0;
    eci_strlcpy(res->price_offer, q.offer, sizeof res->price_offer);
    return EC_OK;
}

/* The multi-GPU figures of the step at the longest padded length (comm.c via step_model). */
static void copy_multi_gpu(const ec_result *top, ec_result *res)
{
    res->hfu_frac = top->mfu_frac > 0 ? res->mfu_frac * top->hfu_frac / top->mfu_frac : 0;
    res->host_pinned_bytes = top->host_pinned_bytes;
    res->comm = top->comm;
    res->dp = top->dp;
    res->tp = top->tp;
    res->pp = top->pp;
    res->cp = top->cp;
    res->ep = top->ep;
    res->busbw_bytes_per_s = top->busbw_bytes_per_s;
    res->comm_total_s = top->comm_total_s;
    res->straggler_s = top->straggler_s;
    res->other_gpu_peak_bytes = top->other_gpu_peak_bytes;
    /* GPU 0 alone runs the optimizer under dp; the others are busy for the rest */
    res->other_gpu_busy_s = res->gpu_busy_s - (top->gpu_busy_s - top->other_gpu_busy_s);
}

static int predict_full(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res, int reference,
                        eci_resolved *r);

/* A sweep over layouts, GPU counts or networks divides by the same one-GPU throughput again and
 * again: the context keeps the last few, keyed by the one-GPU config and the calibration it
 * was predicted with (byte for byte: a false miss only costs a prediction). */
#define REF_CACHE_ENTRIES 8
struct eci_ref_cache {
    struct {
        ec_config cfg;
        eci_params calib;
        double samples_per_s;
        int used;
    } e[REF_CACHE_ENTRIES];
    unsigned next;
};

void eci_predict_ctx_free(ec_ctx *ctx)
{
    eci_free(ctx, ctx->ref_cache, sizeof *ctx->ref_cache);
    ctx->ref_cache = NULL;
}

static int reference_samples_per_s(ec_ctx *ctx, const ec_config *one, const eci_params *fixed, double *out)
{
    eci_params buf;
    const eci_params *calib = fixed;
    int rc = fixed != NULL ? EC_OK : eci_params_ref(ctx, one, &buf, &calib);
    if (rc != EC_OK)
        return rc;
    if (ctx->ref_cache == NULL) {
        if ((rc = eci_ctx_on_free(ctx, eci_predict_ctx_free)) != EC_OK)
            return rc;
        if ((ctx->ref_cache = eci_calloc(ctx, 1, sizeof *ctx->ref_cache)) == NULL)
            return EC_ENOMEM;
    }
    struct eci_ref_cache *c = ctx->ref_cache;
    /* the fields a sweep varies first: the 2.7 KB memcmp of an entry not in the level-1 cache
     * costs some forty misses, and most entries differ in the batch or the sequence length */
    for (int i = 0; i < REF_CACHE_ENTRIES; i++)
        if (c->e[i].used && c->e[i].cfg.batch_per_gpu == one->batch_per_gpu &&
            c->e[i].cfg.seq_len == one->seq_len && c->e[i].cfg.grad_accum == one->grad_accum &&
            memcmp(&c->e[i].cfg, one, sizeof *one) == 0 && memcmp(&c->e[i].calib, calib, sizeof *calib) == 0) {
            *out = c->e[i].samples_per_s;
            return EC_OK;
        }
    ec_result r1;
    eci_resolved resolved1;
    if ((rc = predict_full(ctx, one, calib, &r1, 1, &resolved1)) != EC_OK)
        return rc;
    unsigned k = c->next++ % REF_CACHE_ENTRIES;
    c->e[k].cfg = *one;
    c->e[k].calib = *calib;
    c->e[k].samples_per_s = r1.samples_per_s;
    c->e[k].used = 1;
    *out = r1.samples_per_s;
    return EC_OK;
}

/* Scaling against the same config on one GPU, input pipeline included. */
static int scaling_efficiency(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res)
{
    res->single_gpu_samples_per_s = res->samples_per_s;
    res->scaling_efficiency_frac = 1.0;
    if (cfg->num_gpus <= 1)
        return EC_OK;
    ec_config one = *cfg;
    one.num_gpus = 1;
    one.nodes = 1;
    one.strategy = EC_STRATEGY_SINGLE;
    /* the whole model on the one GPU: no tensor, pipeline, context or expert split, no sharding */
    one.tp = one.pp = one.cp = one.ep = one.pp_chunks = 1;
    one.sequence_parallel = 0;
    one.pp_schedule = EC_PP_1F1B;
    one.sharding = EC_SHARD_FULL;
    one.zero_stage = 0;
    one.offload = EC_OFFLOAD_NONE;
    one.reduce_dtype = EC_REDUCE_AUTO;
    /* no key counts as given: only warnings read that, and the reference's are not kept */
    memset(one.set_mask, 0, sizeof one.set_mask);
    double single;
    int rc = reference_samples_per_s(ctx, &one, fixed, &single);
    if (rc != EC_OK)
        return rc;
    res->single_gpu_samples_per_s = single;
    res->scaling_efficiency_frac = res->samples_per_s / (cfg->num_gpus * single);
    return EC_OK;
}

/* Was key `name` given explicitly?  By name: asked only on the rare results check_result
 * refuses or caps, so it needs no index of eci_key. */
static int given_by_name(const ec_config *cfg, const char *name)
{
    int i = ec_config_key_index(name);
    return i >= 0 && ec_config_is_set(cfg, (size_t)i);
}

/* Every figure check_result checks (all doubles): the field, its least and its greatest value. */
#define RESULT_CHECKS(X) \
    X(step_s, DBL_MIN, DBL_MAX) X(samples_per_s, DBL_MIN, DBL_MAX) X(epoch_s, 0, DBL_MAX) \
    X(run_s, 0, DBL_MAX) X(gpu_util_frac, 0, 1) X(gpu_busy_s, 0, DBL_MAX) X(cpu_issue_s, 0, DBL_MAX) \
    X(flop_per_step, 0, DBL_MAX) X(mfu_frac, 0, 1) X(kernels_per_step, 0, DBL_MAX) \
    X(steps_per_epoch, 0, DBL_MAX) X(epoch_p10_s, 0, DBL_MAX) X(epoch_p50_s, 0, DBL_MAX) \
    X(epoch_p90_s, 0, DBL_MAX) X(breakdown.forward_s, 0, DBL_MAX) X(breakdown.backward_s, 0, DBL_MAX) \
    X(breakdown.optimizer_s, 0, DBL_MAX) X(breakdown.h2d_s, 0, DBL_MAX) \
    X(breakdown.cpu_overhead_s, 0, DBL_MAX) X(breakdown.loader_s, 0, DBL_MAX) \
    X(breakdown.comm_s, 0, DBL_MAX) X(memory.weights_bytes, 0, DBL_MAX) X(memory.grads_bytes, 0, DBL_MAX) \
    X(memory.optimizer_bytes, 0, DBL_MAX) X(memory.cast_cache_bytes, 0, DBL_MAX) \
    X(memory.activations_bytes, 0, DBL_MAX) X(memory.workspace_bytes, 0, DBL_MAX) \
    X(memory.context_bytes, 0, DBL_MAX) X(memory.allocator_bytes, 0, DBL_MAX) \
    X(memory.peak_bytes, 0, DBL_MAX) X(memory.capacity_bytes, 0, DBL_MAX) \
    X(memory.allocated_bytes, 0, DBL_MAX) X(memory.reserved_bytes, 0, DBL_MAX) \
    X(memory.nvml_bytes, 0, DBL_MAX) X(single_gpu_samples_per_s, 0, DBL_MAX) \
    X(scaling_efficiency_frac, 0, DBL_MAX) X(busbw_bytes_per_s, 0, DBL_MAX) X(comm_total_s, 0, DBL_MAX) \
    X(straggler_s, 0, DBL_MAX) X(other_gpu_busy_s, 0, DBL_MAX) X(other_gpu_peak_bytes, 0, DBL_MAX) \
    X(step_p10_s, 0, DBL_MAX) X(step_p90_s, 0, DBL_MAX) X(price_per_hour, 0, DBL_MAX) \
    X(cost_per_epoch, 0, DBL_MAX) X(cost_run, 0, DBL_MAX) X(tokens_per_s, 0, DBL_MAX) \
    X(gpu_s_per_token, 0, DBL_MAX) X(hfu_frac, 0, DBL_MAX) X(host_pinned_bytes, 0, DBL_MAX) \
    X(comm.tp_s, 0, DBL_MAX) X(comm.cp_s, 0, DBL_MAX) X(comm.ep_s, 0, DBL_MAX) \
    X(comm.dp_reduce_s, 0, DBL_MAX) X(comm.shard_wait_s, 0, DBL_MAX) X(comm.overlap_s, 0, DBL_MAX) \
    X(comm.offload_s, 0, DBL_MAX) X(comm.pp_bubble_s, 0, DBL_MAX) X(comm.pp_p2p_s, 0, DBL_MAX) \
    X(eval_s, 0, DBL_MAX) X(eval_step_s, 0, DBL_MAX) X(first_step_s, 0, DBL_MAX) X(train_s, 0, DBL_MAX)

/* Every figure of a result is finite and physically possible, or the prediction is refused
 * (issue 20): no NaN, infinity or MFU above 100% reaches a user.  The message names the field
 * and the keys given that can drive it (a rate, a time, a measured step, a profile). */
static double field_value(const ec_result *res, size_t off)
{
    double v;
    memcpy(&v, (const char *)res + off, sizeof v);
    return v;
}

static int check_result(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    /* MFU above 1 from the model's own rates alone (no measured step, no profile): the peak it
     * is measured against can sit below what some kernels reach (an emulated precision with
     * a changed memory system); the figure is capped, since no step beats the peak. */
    if (res->mfu_frac > 1 && !given_by_name(cfg, "gpu_step_s") && !given_by_name(cfg, "profile"))
        res->mfu_frac = 1;
    static const char *const suspects[] = {"gpu_step_s", "busbw_gbyte_per_s", "network_gbit_per_s", "sample_cpu_s",
                                           "dataset_samples", "eval_samples", "checkpoints_per_epoch",
                                           "loop_ops_per_sample", "loop_syncs_per_sample", "profile", "prices"};
    /* every field at once, without a branch (straight-line code, each field's bounds constants).
     * A field in [0, DBL_MAX], most of them, by its bits u: the sign bit is set for a negative
     * number, and u + 2^52 carries into it when the exponent is all ones (an infinity or a
     * NaN), so the sign bit of the OR of u | (u + 2^52) over them is clear when all are finite
     * and >= 0 (integer ORs: no floating-point latency chain).  -0.0 sets it too, and is
     * let through by the search below.  The others: a NaN fails both comparisons, an infinity
     * one of them (every bound is finite). */
    const uint64_t exponent_lsb = UINT64_C(1) << 52;
    int ok = 1;
    uint64_t bits = 0;
#define IN_RANGE(field, lo, hi)                                                                  \
    if ((lo) == 0 && (hi) == DBL_MAX) {                                                          \
        uint64_t u_;                                                                             \
        memcpy(&u_, &res->field, sizeof u_);                                                     \
        bits |= u_ | (u_ + exponent_lsb);                                                        \
    } else {                                                                                     \
        ok &= (res->field >= (lo)) & (res->field <= (hi));                                       \
    }
    RESULT_CHECKS(IN_RANGE)
#undef IN_RANGE
    ok &= (int)(bits >> 63) == 0;
    if (ok)
        return EC_OK;
    /* then, only for a refusal, the first field out of range, from a table of the same checks */
    static const struct { const char *name; size_t off; double lo, hi; } f[] = {
#define ENTRY(field, lo, hi) {#field, offsetof(ec_result, field), lo, hi},
        RESULT_CHECKS(ENTRY)
#undef ENTRY
    };
    size_t i = 0, n = sizeof f / sizeof f[0];
    double v = 0;
    while (i < n && (v = field_value(res, f[i].off), isfinite(v) && v >= f[i].lo && v <= f[i].hi))
        i++;
    if (i == n) /* only a -0.0 set the sign bit above */
        return EC_OK;
    char keys[EC_ERRMSG_MAX / 2] = "";
    size_t len = 0;
    for (size_t k = 0; k < sizeof suspects / sizeof suspects[0]; k++) {
        int idx = ec_config_key_index(suspects[k]);
        char value[EC_PATH_MAX];
        if (idx < 0 || !ec_config_is_set(cfg, (size_t)idx) || ec_config_get(cfg, suspects[k], value, sizeof value) != EC_OK)
            continue;
        int w = snprintf(keys + len, sizeof keys - len, "%s%s=%.40s", len ? ", " : "", suspects[k], value);
        if (w > 0 && (size_t)w < sizeof keys - len)
            len += (size_t)w;
    }
    const char *what = !isfinite(v) ? "is not a finite number" : v > f[i].hi ? "is above" : "is below";
    char bound[48] = "";
    if (isfinite(v))
        snprintf(bound, sizeof bound, " %g", v > f[i].hi ? f[i].hi : f[i].lo);
    if (strcmp(f[i].name, "mfu_frac") == 0)
        return eci_error(ctx, EC_EDOM, "the step's %.4g FLOP in %.4g s would be %.0f%% of the GPU's peak (MFU above "
                         "100%%): %s", res->flop_per_step, res->step_s, 100 * res->mfu_frac,
                         len ? keys : "the model's own rates are wrong here (please report this config)");
    return eci_error(ctx, EC_EDOM, "the prediction's %s (%g) %s%s: refused; %s%s", f[i].name, v, what, bound,
                     len ? "it follows from " : "no key given drives it (please report this config)", keys);
}

int eci_predict(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res)
{
    eci_resolved r;
    return predict_full(ctx, cfg, fixed, res, 0, &r);
}

int eci_predict_resolved(ec_ctx *ctx, const ec_config *cfg, ec_result *res, ec_config *resolved)
{
    eci_resolved r;
    int rc = predict_full(ctx, cfg, NULL, res, 0, &r);
    if (rc == EC_OK && resolved != NULL)
        eci_resolved_config(cfg, &r, resolved);
    return rc;
}

/* The prediction; reference: only the one-GPU throughput a scaling efficiency divides by is
 * wanted (no warnings, no cost, no scaling of its own).  *r: the resolution of cfg it predicted
 * with (set once cfg resolved). */
static int predict_full(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res, int reference,
                        eci_resolved *r)
{
    memset(res, 0, sizeof *res);
    /* eci_pipe_prepare zeroes it first thing */
    eci_pipe_in *in = eci_scratch_raw(ctx, ECI_SCRATCH_PREDICT_IN, 1, sizeof *in);
    if (in == NULL)
        return EC_ENOMEM;
    eci_lengths *l = NULL;
    ec_result top;
    eci_pipe_epoch ep;
    eci_params buf;
    const eci_params *calib = NULL; /* the model's own error (profile error_log_sd) widens the simulated spread */
    int rc = pipe_prepare(ctx, cfg, fixed, in, &top, &l, r, &buf, &calib);
    if (rc == EC_OK)
        rc = eci_pipe_simulate(ctx, in, &ep);
    if (rc == EC_OK) {
        res->memory = top.memory;
        res->eval_step_s = top.eval_step_s;
        res->warnings = top.warnings;
        /* the text and its terminator (res is zeroed past it, as top is) */
        memcpy(res->warning_text, top.warning_text, strlen(top.warning_text) + 1);
        assemble_step(cfg, r, l, in, &ep, eci_const(ctx, EC_C_loader_bottleneck_frac), res);
        assemble_epoch(ctx, cfg, r, in, l, &ep, res);
        res->first_step_s = res->step_s + compile_time_s(ctx, cfg);
        if (res->epoch_s > 0)
            res->train_s = res->epoch_s * cfg->epochs + compile_once_s(ctx, cfg, r, &ep);
        if (!reference)
            add_warnings(ctx, cfg, r, res);
        copy_multi_gpu(&top, res);
        if (res->epoch_s > 0)
            eci_interval_widen(calib, res->epoch_p50_s, &res->epoch_p10_s, &res->epoch_p90_s);
        /* the step's interval: only the model's own held-out error (a steady step has no spread) */
        res->step_p10_s = res->step_p90_s = res->step_s;
        eci_interval_widen(calib, res->step_s, &res->step_p10_s, &res->step_p90_s);
        if (!reference)
            rc = add_cost(ctx, cfg, r, res);
    }
    eci_lengths_free(ctx, l);
    /* after the scratch is done with: the one-GPU prediction reuses it */
    if (rc == EC_OK && !reference)
        rc = scaling_efficiency(ctx, cfg, fixed, res);
    return rc == EC_OK ? check_result(ctx, cfg, res) : rc;
}

/* Peak memory of cfg alone: the step model at the longest padded length, as ec_predict's
 * memory, without simulating the epoch (max_batch asks only this, many times). */
static int predict_memory(ec_ctx *ctx, const ec_config *cfg, ec_memory *out)
{
    eci_resolved r;
    eci_params calib;
    int rc = resolve_with_calib(ctx, cfg, &r, &calib);
    if (rc != EC_OK)
        return rc;
    if (r.net == NULL) /* gpu_step_s without a model: memory is not predicted */
        return eci_error(ctx, EC_EINVAL, "max_batch needs a model: gpu_step_s alone does not predict memory");
    ec_result step;
    double host_s;
    if ((rc = pipeline_model(ctx, cfg, &r, &calib, r.seq, 1.0, &step, &host_s)) != EC_OK)
        return rc;
    *out = step.memory;
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
    ec_memory mem = {0}; /* filled by predict_memory when it succeeds */
    /* Peak memory grows with the batch, so bisect on fits over [lo fits, hi does not]. */
    c.batch_per_gpu = 1;
    int rc = predict_memory(ctx, &c, &mem);
    if (rc != EC_OK)
        return rc;
    if (!mem.fits)
        return EC_OK;
    int lo = 1, hi = limit + 1;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        c.batch_per_gpu = mid;
        if ((rc = predict_memory(ctx, &c, &mem)) != EC_OK)
            return rc;
        if (mem.fits)
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
