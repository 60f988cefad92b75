/*
 * walk.h: one micro-step's ops walked on the timeline (timeline.h), private to sim/.  A plan
 * holds what the walks read (the workload of model/workload.c, the op costs of model/compute.c,
 * the host's dispatch costs, DDP's Reducer and the sharded units of model/comm.c and shard.c)
 * and the kernel time they add up; step.c fills it.  The walks, bottom up: runs of ops and a
 * block's repetitions (walk.c), DDP's backward over repeated layers (ddp_layers.c), whole
 * passes (pass.c).  The walk's tiny helpers are inline here, for the files that walk ops.
 */
#ifndef EC_SIM_WALK_H
#define EC_SIM_WALK_H

#include "model/comm.h"
#include "model/compute.h"
#include "model/shard.h"
#include "model/workload.h"
#include "sim/timeline.h"

#include <math.h>
#include <stddef.h>

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
    double expert_grad_elem_bytes; /* the same for a routed expert's gradients, weighted by their
                                    reduction's time over the expert data-parallel group relative
                                    to the data-parallel one's (step.c expert_reduce_frac) */
    double overlap_slowdown;     /* compute slowdown while an all-reduce runs beside it */
    double overlap_s;            /* backward time added by that slowdown (this micro-step) */
    double grad_copy_s_per_byte; /* zero_flat_copies: compute-stream time per gradient byte copied into the
                                    optimizer's flat buffer before its bucket may launch, else 0 */
    eci_shard *shard;            /* FSDP / ZeRO-3: per-unit gathers and reductions, else NULL */
    double gather_elem_bytes;    /* ...bytes per trained parameter gathered (the compute dtype) */
    int fp8_gather;              /* fp8_params: the FP8 GEMMs' weights gathered a byte each (workload.h
                                    eci_workload_gather_bytes) */
    double frozen_elem_bytes;    /* ...per frozen parameter (LoRA's base, as stored) */
    const double *fwd_host;      /* fwd_host_s of every op at the dispatch costs fwd_host_at, worked out
                                    once per step (the forward walks' costs), or NULL */
    double fwd_host_at[3];       /* ...dispatch_fwd_s, op_fwd_s, dispatch_bwd_s they were worked out at */
    eci_walk_sum *fwd_sum;       /* the forward runs' sums at fwd_host_at, by first op (n_ops), or NULL */
    eci_walk_sum *bwd_sum;       /* ...the backward runs' (n_ops; also at fwd_host_at), or NULL */
    eci_walk_sum *pass_sum;      /* ...whole passes' (pass_walk; ECI_PASS_SUMS), or NULL */
    /* The DDP walk's least slacks since eci_ddp_layers reset them (ddp_steady_reps): how far the
     * GPU stayed ahead of the host before each kernel (>= 0: the host never held it up), and
     * how far the stream stayed busy past each kernel's fully slowed end and each bucket's
     * ready time (>= 0: every kernel ran beside an all-reduce, every bucket waited for the stream). */
    double slack_host_s, slack_comm_s;
    int every_layer;             /* the DDP walk prices every repetition (ctx->ddp_every_layer) */
} plan;

static inline double fwd_host_s(const plan *p, const eci_op_cost_t *c)
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

static inline walk walk_begin(const timeline *t, double kernel_s)
{
    return (walk){.cpu = t->cpu, .gpu = t->gpu, .busy = t->busy, .kernels = t->kernels, .host_busy = t->host_busy,
                  .gap_dispatch = t->gap[CAUSE_DISPATCH], .kernel_s = kernel_s};
}

static inline void walk_end(timeline *t, const walk *w, double *kernel_s)
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

/* The run's walk in one step: the GPU idles until the host has issued the op that holds it up
 * most (when any does), then runs the run's kernels.  Equal to walking it op by op but for
 * rounding (the sums are added in another order). */
static inline void walk_sum_apply(timeline *t, const eci_walk_sum *s, double *kernel_s)
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

/* Equal but for rounding: a layer walked from a start a few ulps away ends a few ulps away. */
static inline int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (fabs(a) + fabs(b)) + 1e-18;
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

/* ---- walk.c: runs of ops and a block's repetitions ---------------------------------------- */
/* The forward ops from..to-1 in order, at p's dispatch costs (their run sums when they apply). */
EC_INTERNAL void eci_walk_forward_ops(timeline *t, plan *p, size_t from, size_t to);
/* The backward ops to-1 down to from, DDP's hook after each when p->ddp is set. */
EC_INTERNAL void eci_walk_backward_ops(timeline *t, plan *p, size_t from, size_t to);
/* The per-sample Python loop of the forward (backward: 1, its autograd nodes). */
EC_INTERNAL void eci_walk_python_loop(timeline *t, plan *p, int backward);
/* One repetition of p->blk: its forward ops; its recompute (checkpointing) and backward ops. */
EC_INTERNAL void eci_walk_forward_layer(timeline *t, plan *p);
EC_INTERNAL void eci_walk_backward_layer(timeline *t, plan *p);
/* p->blk run `layers` times by `one`, the repetitions that repeat the last added by multiplication. */
EC_INTERNAL void eci_walk_repeat_layers(timeline *t, plan *p, int layers, void (*one)(timeline *, plan *));
/* p->blk's repetitions, walked from t0 to now, laid beside the sharded units' collectives. */
EC_INTERNAL void eci_walk_shard_units(timeline *t, plan *p, double t0, int backward);

/* ---- ddp_layers.c --------------------------------------------------------------------------- */
/* p->blk's repetitions in backward under DDP's hook (p->ddp), reps of them. */
EC_INTERNAL void eci_ddp_layers(timeline *t, plan *p, int reps);

/* ---- pass.c: whole passes ------------------------------------------------------------------- */
EC_INTERNAL void eci_pass_forward(timeline *t, plan *p);
/* eci_pass_forward, or what the memo's pass added when this one starts alike (m: NULL, none). */
EC_INTERNAL void eci_pass_forward_memo(timeline *t, plan *p, fwd_memo *m);
EC_INTERNAL void eci_pass_backward(timeline *t, plan *p);

#endif /* EC_SIM_WALK_H */
