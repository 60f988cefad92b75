/*
 * timeline.h: the step's CPU/GPU timeline and its primitives (docs/DESIGN.md 3.1, modeling.md
 * 10.1).  The host issues each op after paying its dispatch cost (hosts.csv); the GPU runs it
 * when it is issued and the previous kernel is done; syncs (loss.item(), GradScaler's inf
 * check, pageable copies, Megatron's dropless MoE dispatch) make the host wait for the GPU.  Idle GPU time is charged to
 * whatever the host was doing: dispatch, loading, copying.  Small batches thus come out
 * CPU-bound from the same arithmetic that makes large ones compute-bound.  Private to sim/:
 * the walks (walk.c, ddp_layers.c, pass.c), the step (step.c) and the measured step (epoch.c)
 * lay their work on it; inline, as the walks call them for every op.
 */
#ifndef EC_SIM_TIMELINE_H
#define EC_SIM_TIMELINE_H

#include <string.h>

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

static inline void host_work(timeline *t, int cause, double s)
{
    t->cpu += s;
    t->host_busy += s;
    t->pending[cause] += s;
}

/* The GPU sat idle from t->gpu to `until`: charge that gap to the host work that kept it. */
static inline void charge_gap(timeline *t, double until)
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

static inline void gpu_op(timeline *t, double host_s, double gpu_s, double kernels, int is_kernel)
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
static inline void comm_wait(timeline *t, double until_s)
{
    if (until_s > t->gpu) {
        t->gap[CAUSE_COMM] += until_s - t->gpu;
        t->gpu = until_s;
    }
}

static inline void sync_host(timeline *t)
{
    if (t->cpu > t->gpu)
        charge_gap(t, t->cpu);
    t->cpu = t->gpu;
    memset(t->pending, 0, sizeof t->pending);
}

#endif /* EC_SIM_TIMELINE_H */
