/*
 * ddp_layers.c: DDP's backward over repeated layers (docs/DESIGN.md 3.3, modeling.md 6.2).
 * Each repetition is walked by walk.c with DDP's hook (the Reducer of comm.c filling and
 * launching gradient buckets); the repetitions that move everything as the last ones did are
 * added by multiplication.  ctx->ddp_every_layer walks every one instead, the reference the
 * jumps must equal (tests/unit/test_ddp_walk.c).
 */
#include "sim/walk.h"

#include <math.h>
#include <string.h>

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

/* The repetitions walked last (eci_ddp_layers): the state at the last boundaries and each
 * layer's least slacks, indexed by repetition modulo the ring's size. */
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

void eci_ddp_layers(timeline *t, plan *p, int reps)
{
    ddp_ring r;
    r.at[0] = ddp_mark_now(t, p);
    int walked = 0; /* repetitions walked since the start or the last jump */
    for (int l = 0; l < reps; l++) {
        p->slack_host_s = INFINITY;
        p->slack_comm_s = INFINITY;
        eci_walk_backward_layer(t, p);
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
