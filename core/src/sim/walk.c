/*
 * walk.c: runs of ops and a block's repetitions on the step's timeline (docs/DESIGN.md 3.1,
 * modeling.md 10.1): the forward ops in order and the backward ops in reverse, each op's host
 * dispatch (hosts.csv, through the plan step.c fills) before its kernels (compute.c's op costs),
 * DDP's autograd hook after each backward op (comm.c's Reducer fills its buckets), the
 * per-sample Python loop, checkpointing's recompute, a block's repetitions added by
 * multiplication once they repeat, and FSDP / ZeRO-3's units beside their collectives
 * (shard.c).  Each fast path sits by the plain walk it must equal: a run's sums
 * (eci_walk_sum, cached with the op costs) against its op-by-op walk (ctx->walk_op_by_op
 * selects the plain one; tests/unit/test_walk_sums.c compares them).
 */
#include "sim/walk.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* DDP's hook while eci_walk_backward_ops walks: what it updates for every op, in locals (as
 * walk's sums; stores through p would make the compiler reload them after each) and back in p
 * and the Reducer when the walk ends. */
typedef struct ddp_walk {
    eci_ddp_sched *s;
    double free_s;               /* s->comm_free_s */
    double overlap_s, slack_comm_s, slowdown, elem_bytes, expert_elem_bytes, copy_s_per_byte;
    double copy_s;               /* the copies into the flat buffer (zero_flat_copies): backward's own time */
} ddp_walk;

static ddp_walk ddp_walk_begin(const plan *p)
{
    return (ddp_walk){.s = p->ddp, .free_s = p->ddp->comm_free_s, .overlap_s = p->overlap_s,
                      .slack_comm_s = p->slack_comm_s, .slowdown = p->overlap_slowdown,
                      .elem_bytes = p->grad_elem_bytes, .expert_elem_bytes = p->expert_grad_elem_bytes,
                      .copy_s_per_byte = p->grad_copy_s_per_byte};
}

static void ddp_walk_end(plan *p, const ddp_walk *dw)
{
    p->overlap_s = dw->overlap_s;
    p->slack_comm_s = dw->slack_comm_s;
    p->bwd_s += dw->copy_s;
}

/* Op c's backward kernels just ended at gpu: those that ran beside an all-reduce were slowed
 * by it (eci_overlap_stretch_s), then its gradients are ready and DDP's autograd hook fills a
 * bucket (after copying them into the optimizer's flat buffer on the compute stream under
 * zero_flat_copies).  Returns the slowdown and the copy, which the caller adds to its running
 * gpu and busy sums (by value, so that the walk's sums stay in registers). */
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
        double bytes = c->grad_params * (c->expert_grads ? dw->expert_elem_bytes : dw->elem_bytes);
        double copy_s = bytes * dw->copy_s_per_byte; /* apex _flatten_grad_mt: read and written before the block's
                                                      * reduction */
        dw->copy_s += copy_s;
        slow += copy_s;
        eci_ddp_ready(dw->s, gpu + slow, bytes);
        dw->free_s = dw->s->comm_free_s;
    }
    return slow;
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
static void forward_run(timeline *t, plan *p, size_t from, size_t to)
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

/* The forward ops from..to-1: runs of them between the ops the host waits before
 * (eci_op.host_sync: Megatron-Core's dropless dispatcher, workload_blocks.c), each run as
 * forward_run walks it.  At such an op the host waits for the GPU's queue to drain and for the
 * small device-to-host copy it needs (loop_copy_s, as a Python loop's blocking copy), so the
 * GPU then idles while the host issues what follows. */
void eci_walk_forward_ops(timeline *t, plan *p, size_t from, size_t to)
{
    if (p->wl->host_syncs == 0) {
        forward_run(t, p, from, to);
        return;
    }
    size_t start = from;
    for (size_t i = from; i < to; i++) {
        if (!p->wl->ops[i].host_sync)
            continue;
        forward_run(t, p, start, i);
        sync_host(t);
        host_work(t, CAUSE_DISPATCH, p->loop_copy_s * p->host_factor);
        start = i;
    }
    forward_run(t, p, start, to);
}

/* One past the last op of from..to-1 whose backward launches kernels (from: none does). */
static size_t bwd_end(const eci_op_cost_t *cost, size_t from, size_t to)
{
    while (to > from && cost[to - 1].bwd_kernels == 0)
        to--;
    return to;
}

/* eci_walk_backward_ops under DDP: the hook after each op's kernels, and the least slack of the
 * host before each kernel (ddp_layers.c's ddp_steady_units).  Apart from eci_walk_backward_ops'
 * plain walk, which the single-GPU predictions run. */
static void backward_ops_ddp(timeline *t, plan *p, size_t from, size_t to)
{
    const eci_op_cost_t *cost = p->cost;
    size_t i = bwd_end(cost, from, to);
    if (i == from)
        return;
    i--; /* the first op that launches: through gpu_op, as in eci_walk_forward_ops */
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
    walk_end(t, &w, &p->bwd_s);
    ddp_walk_end(p, &dw); /* after walk_end, which sets bwd_s to the walk's kernel sum */
}

/* The backward ops to-1 down to from (ops without a backward launch nothing).  DDP's hook
 * sees each op's gradients ready when its kernels are issued. */
void eci_walk_backward_ops(timeline *t, plan *p, size_t from, size_t to)
{
    if (p->ddp != NULL) {
        backward_ops_ddp(t, p, from, to);
        return;
    }
    const eci_op_cost_t *cost = p->cost;
    size_t i = bwd_end(cost, from, to);
    if (i == from)
        return;
    i--; /* the first op that launches: through gpu_op, as in eci_walk_forward_ops */
    gpu_op(t, p->dispatch_bwd_s * cost[i].bwd_kernels, cost[i].bwd_s, cost[i].bwd_kernels, 1);
    p->bwd_s += cost[i].bwd_s;
    eci_walk_sum *sum = p->dispatch_bwd_s == p->fwd_host_at[2] ? walk_sum_slot(p->bwd_sum, from, to, i - from) : NULL;
    if (sum != NULL) { /* as in eci_walk_forward_ops */
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
void eci_walk_python_loop(timeline *t, plan *p, int backward)
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
void eci_walk_forward_layer(timeline *t, plan *p)
{
    eci_walk_forward_ops(t, p, p->blk->begin, p->blk->end);
}

/* One repetition of the current block in backward: recompute under checkpointing (blocks
 * that are checkpointing units), then the backward ops in reverse. */
void eci_walk_backward_layer(timeline *t, plan *p)
{
    if (p->checkpointing == EC_CKPT_SELECTIVE && p->blk->checkpoint) { /* Megatron's selective recompute:
                                                                        * the unfused attention core only */
        double before = p->fwd_s;
        for (size_t i = p->blk->begin; i < p->blk->end; i++)
            if (p->wl->ops[i].attn_core && p->wl->ops[i].kind != ECI_OP_ATTN)
                eci_walk_forward_ops(t, p, i, i + 1);
        p->bwd_s += p->fwd_s - before;
        p->fwd_s = before;
    } else if (p->checkpointing == EC_CKPT_OP && p->blk->checkpoint) { /* torchtitan's per-op policy: the
                                                                        * ops whose outputs it did not keep */
        double before = p->fwd_s;
        for (size_t i = p->blk->begin; i < p->blk->end; i++)
            if (!p->wl->ops[i].op_keep)
                eci_walk_forward_ops(t, p, i, i + 1);
        p->bwd_s += p->fwd_s - before;
        p->fwd_s = before;
    } else if (p->checkpointing && p->blk->checkpoint) { /* torch.utils.checkpoint re-runs the layer's forward first */
        double before = p->fwd_s;
        eci_walk_forward_layer(t, p);
        p->bwd_s += p->fwd_s - before; /* recompute is backward time */
        p->fwd_s = before;
    }
    eci_walk_backward_ops(t, p, p->blk->begin, p->blk->end);
}

/* Run the current block `layers` times.  The timeline is translation-invariant: what a layer
 * adds depends only on how far the host is ahead of the GPU (cpu - gpu) and on its pending
 * host work, so each layer is walked in a frame where the GPU starts at 0.  When a layer
 * leaves that state as it found it, or the GPU stays ahead and never idles (the host's lead
 * cannot grow), every later layer adds exactly the same, and the rest are added by one
 * multiplication: a 24-layer model costs two or three walks instead of 24. */
void eci_walk_repeat_layers(timeline *t, plan *p, int layers, void (*one)(timeline *, plan *))
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
void eci_walk_shard_units(timeline *t, plan *p, double t0, int backward)
{
    int reps = p->blk->reps;
    if (reps < 1)
        return;
    double unit_s = (t->gpu - t0) / reps, stretch0 = p->shard->stretch_s, copy0 = p->shard->copy_out_s;
    double trained = p->blk->trainable,
           gather = eci_workload_gather_bytes(p->gather_elem_bytes, p->fp8_gather, trained, p->blk->fp8_trainable) +
                    (p->blk->params - trained) * p->frozen_elem_bytes;
    if (p->shard->on_launch != NULL) { /* a trace: number the units after the blocks before this one */
        p->shard->unit_base = 0;
        for (const eci_block *b = p->wl->blocks; b < p->blk; b++)
            p->shard->unit_base += b->reps > 0 ? b->reps : 0;
    }
    double end = backward ? eci_shard_backward(p->shard, t0, unit_s, reps, gather, trained * p->grad_elem_bytes)
                          : eci_shard_forward(p->shard, t0, unit_s, reps, gather);
    double stretch = p->shard->stretch_s - stretch0, copied = p->shard->copy_out_s - copy0;
    t->busy += stretch + copied; /* FSDP2's copy-outs run on the compute stream: the pass's own time */
    t->gpu += stretch + copied;
    if (backward)
        p->bwd_s += copied;
    else
        p->fwd_s += copied;
    comm_wait(t, end);
}
