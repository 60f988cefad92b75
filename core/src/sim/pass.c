/*
 * pass.c: a micro-step's whole forward and backward passes on the timeline (docs/DESIGN.md
 * 3.1): the ops between the repeated blocks and each block's repetitions (walk.c), the Python
 * loop where the network runs it, DDP's repetitions (ddp_layers.c), sharded units.  Its fast
 * paths sit by the walk they must equal: a pass of kernels only in one step from sums built
 * once per cached op costs (pass_walk; ctx->walk_op_by_op walks it block by block instead,
 * tests/unit/test_walk_sums.c compares them), and a second micro-step's forward as the first's
 * (eci_pass_forward_memo).  The plan comes from step.c.
 */
#include "sim/walk.h"

#include <stddef.h>
#include <string.h>

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
 * from that launch kernels, at the costs eci_walk_forward_ops and eci_walk_backward_ops walk
 * them with (walk.c). */
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
        p->wl->host_syncs > 0 ||
        p->checkpointing >= EC_CKPT_SELECTIVE || p->dispatch_fwd_s != p->fwd_host_at[0] ||
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

void eci_pass_forward(timeline *t, plan *p)
{
    if (pass_walk(t, p, 0))
        return;
    const eci_workload *wl = p->wl;
    size_t at = 0;
    if (p->loop_block < 0)
        eci_walk_python_loop(t, p, 0);
    for (size_t b = 0; b < wl->n_blocks; b++) {
        p->blk = &wl->blocks[b];
        eci_walk_forward_ops(t, p, at, p->blk->begin);
        if ((int)b == p->loop_block)
            eci_walk_python_loop(t, p, 0);
        double t0 = t->gpu;
        eci_walk_repeat_layers(t, p, p->blk->reps, eci_walk_forward_layer);
        if (p->shard != NULL)
            eci_walk_shard_units(t, p, t0, 0);
        at = p->blk->end;
    }
    eci_walk_forward_ops(t, p, at, wl->n_ops);
}

/* The forward pass, or what the memo's pass added when this one starts as it did (fwd_memo, walk.h). */
void eci_pass_forward_memo(timeline *t, plan *p, fwd_memo *m)
{
    if (m == NULL) { /* no later micro-step to repeat it */
        eci_pass_forward(t, p);
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
    eci_pass_forward(t, p);
    *m = (fwd_memo){.valid = p->shard == NULL, .lead_s = lead_s, .fwd_s = p->fwd_s - fwd0,
                    .moved = {.cpu = t->cpu - before.cpu, .gpu = t->gpu - before.gpu, .busy = t->busy - before.busy,
                              .copy = t->copy - before.copy, .kernels = t->kernels - before.kernels,
                              .host_busy = t->host_busy - before.host_busy}};
    memcpy(m->pending, before.pending, sizeof m->pending);
    memcpy(m->moved.pending, t->pending, sizeof m->moved.pending);
    for (int c = 0; c < N_CAUSES; c++)
        m->moved.gap[c] = t->gap[c] - before.gap[c];
}

void eci_pass_backward(timeline *t, plan *p)
{
    if (pass_walk(t, p, 1))
        return;
    const eci_workload *wl = p->wl;
    size_t at = wl->n_ops;
    for (size_t b = wl->n_blocks; b-- > 0;) {
        p->blk = &wl->blocks[b];
        eci_walk_backward_ops(t, p, p->blk->end, at);
        double t0 = t->gpu;
        if (p->ddp != NULL) /* DDP's hook needs the repetitions' real times */
            eci_ddp_layers(t, p, p->blk->reps);
        else
            eci_walk_repeat_layers(t, p, p->blk->reps, eci_walk_backward_layer);
        if (p->shard != NULL)
            eci_walk_shard_units(t, p, t0, 1);
        if ((int)b == p->loop_block)
            eci_walk_python_loop(t, p, 1);
        at = p->blk->begin;
    }
    eci_walk_backward_ops(t, p, 0, at);
    if (p->loop_block < 0)
        eci_walk_python_loop(t, p, 1);
}
