/*
 * steprec.c: the record of one optimizer step that a trace asks the step model for (steprec.h):
 * the compute stream's phases as step.c closes them, each collective the Reducer (comm.c) and
 * the sharded units (shard.c) launch, and the pipeline's stages (stages.c).  The micro-steps
 * the step model adds by multiplication are laid out here as copies of the second (the one it
 * repeats: under DDP's no_sync, walked without the all-reduce), so the phases tile the step.
 */
#include "model/comm.h"
#include "sim/steprec.h"

#include <stdio.h>
#include <string.h>

void eci_rec_begin(eci_step_rec *r, int ga, int simulate)
{
    r->n = 0;
    r->boundary_s = 0;
    r->micro = 0;
    r->pass = NULL;
    r->bucket = 0;
    r->root = 0;
    memset(r->micro_first, 0, sizeof r->micro_first);
    memset(r->micro_last, 0, sizeof r->micro_last);
    memset(r->micro_t0, 0, sizeof r->micro_t0);
    memset(r->micro_t1, 0, sizeof r->micro_t1);
    r->ga = ga;
    r->simulate = simulate;
    r->step_s = 0;
    r->pp = 0;
}

/* A free slot at the end, or NULL (nomem set) when the events cannot grow. */
static eci_rec_event *push(eci_step_rec *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap > 0 ? 2 * r->cap : 256;
        eci_rec_event *ev = eci_realloc(r->ctx, r->ev, r->cap * sizeof *ev, cap * sizeof *ev);
        if (ev == NULL) {
            r->nomem = 1;
            return NULL;
        }
        r->ev = ev;
        r->cap = cap;
    }
    eci_rec_event *e = &r->ev[r->n++];
    memset(e, 0, sizeof *e);
    e->micro = -1;
    e->unit = -1;
    return e;
}

static void add(eci_step_rec *r, int track, const char *name, const char *cat, double start_s, double dur_s)
{
    eci_rec_event *e = push(r);
    if (e == NULL)
        return;
    e->track = track;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->cat = cat;
    e->pass = r->pass;
    e->micro = r->micro;
    e->start_s = start_s;
    e->dur_s = dur_s > 0 ? dur_s : 0;
}

void eci_rec_phase(eci_step_rec *r, const char *name, double end_s)
{
    if (end_s <= r->boundary_s)
        return;
    const char *pass = r->pass;
    r->pass = NULL;
    add(r, ECI_REC_COMPUTE, name, "phase", r->boundary_s, end_s - r->boundary_s);
    r->pass = pass;
    r->boundary_s = end_s;
}

void eci_rec_micro_begin(eci_step_rec *r, int micro, double t0_s)
{
    r->micro = micro;
    r->bucket = 0;
    r->boundary_s = t0_s > r->boundary_s ? t0_s : r->boundary_s;
    if (micro < 3) {
        r->micro_first[micro] = r->n;
        r->micro_t0[micro] = r->boundary_s;
    }
}

void eci_rec_micro_end(eci_step_rec *r, double t1_s)
{
    if (r->micro >= 0 && r->micro < 3) {
        r->micro_last[r->micro] = r->n;
        r->micro_t1[r->micro] = t1_s;
    }
    r->micro = -1;
    r->pass = NULL;
}

void eci_rec_ddp_launch(void *rec, double start_s, double dur_s, double bytes, int coll, const char *algo)
{
    eci_step_rec *r = rec;
    char name[ECI_REC_NAME_MAX];
    snprintf(name, sizeof name, "%s bucket %d", coll == ECI_COLL_REDUCE_SCATTER ? "reduce-scatter" : "all-reduce",
             r->bucket);
    add(r, ECI_REC_COMM, name, coll == ECI_COLL_REDUCE_SCATTER ? "zero" : "ddp", start_s, dur_s);
    if (!r->nomem) {
        r->ev[r->n - 1].unit = r->bucket;
        r->ev[r->n - 1].bytes = bytes;
        r->ev[r->n - 1].algo = algo;
    }
    r->bucket++;
}

void eci_rec_shard_launch(void *rec, double start_s, double dur_s, int gather, int unit)
{
    eci_step_rec *r = rec;
    char name[ECI_REC_NAME_MAX], which[16];
    if (unit < 0)
        snprintf(which, sizeof which, "root");
    else
        snprintf(which, sizeof which, "unit %d", unit);
    if (gather)
        snprintf(name, sizeof name, "%s all-gather %s", r->pass != NULL ? r->pass : "forward", which);
    else
        snprintf(name, sizeof name, "reduce-scatter %s", which);
    add(r, ECI_REC_COMM, name, "fsdp", start_s, dur_s);
    if (!r->nomem)
        r->ev[r->n - 1].unit = unit < 0 ? -2 : unit;
}

void eci_rec_comm(eci_step_rec *r, const char *name, const char *cat, double start_s, double dur_s, double bytes)
{
    add(r, ECI_REC_COMM, name, cat, start_s, dur_s);
    if (!r->nomem)
        r->ev[r->n - 1].bytes = bytes;
}

/* Copy k (0-based) of micro-step 1 as the repeated micro-step 1 + k, starting at t0_s and
 * repeat_s long: micro-step 1 is the one the step model repeats (under DDP's no_sync, the
 * walked micro-step without the reduction, step.c); its last phase ends the repeat. */
static void repeat_micro(eci_step_rec *r, int k, double t0_s, double repeat_s)
{
    double shift = t0_s - r->micro_t0[1];
    size_t last_phase = (size_t)-1;
    for (size_t i = r->micro_first[1]; i < r->micro_last[1] && !r->nomem; i++) {
        eci_rec_event e = r->ev[i]; /* (push may move ev) */
        e.start_s += shift;
        e.micro = 1 + k;
        eci_rec_event *slot = push(r);
        if (slot == NULL)
            return;
        *slot = e;
        if (e.track == ECI_REC_COMPUTE)
            last_phase = r->n - 1;
    }
    if (last_phase != (size_t)-1) { /* the repeat's length as the model adds it */
        eci_rec_event *e = &r->ev[last_phase];
        double end = t0_s + repeat_s;
        e->dur_s = end > e->start_s ? end - e->start_s : 0;
    }
}

void eci_rec_step_end(eci_step_rec *r, double end_s, double repeat_s, double straggler_s)
{
    int repeats = r->simulate > 1 && r->ga > r->simulate ? r->ga - r->simulate : 0;
    double shift = repeats * repeat_s;
    if (repeats > 0) {
        size_t n0 = r->n;
        for (int k = 0; k < repeats && (r->max_micro <= 0 || 1 + k < r->max_micro); k++)
            repeat_micro(r, k, r->micro_t0[1] + k * repeat_s, repeat_s);
        for (size_t i = r->micro_first[1]; i < n0; i++) { /* the last micro-step and what follows it */
            r->ev[i].start_s += shift;
            if (r->ev[i].micro >= 1) /* the walked micro-steps from the repeated one on */
                r->ev[i].micro += repeats;
        }
    }
    r->micro = -1;
    r->boundary_s = end_s + shift > r->boundary_s + shift ? end_s + shift : r->boundary_s + shift;
    if (straggler_s > 0)
        eci_rec_phase(r, "wait for the slowest GPU", r->boundary_s + straggler_s);
    r->step_s = r->boundary_s;
}

void eci_rec_stage(eci_step_rec *r, int s, int first, int layers, double fwd_s, double bwd_s, double p2p_s,
                   double tail_s)
{
    if (s < 0 || s >= ECI_REC_MAX_STAGES)
        return;
    r->stage_first[s] = first;
    r->stage_layers[s] = layers;
    r->stage_fwd_s[s] = fwd_s;
    r->stage_bwd_s[s] = bwd_s;
    r->stage_p2p_s[s] = p2p_s;
    r->stage_tail_s[s] = tail_s;
}

/* Stage s's micro-batch i: its forward, the activation's send, its backward, the gradient's send. */
static void stage_micro(eci_step_rec *r, int s, int i, double t)
{
    char name[ECI_REC_NAME_MAX];
    double f = r->stage_fwd_s[s], b = r->stage_bwd_s[s], p = r->stage_p2p_s[s];
    r->micro = i;
    snprintf(name, sizeof name, "micro-batch %d", i);
    add(r, ECI_REC_STAGE0 + s, name, "pipeline", t, f + b + 2 * p);
    r->pass = "forward";
    add(r, ECI_REC_STAGE0 + s, "forward", "pipeline", t, f);
    r->pass = NULL;
    if (p > 0)
        add(r, ECI_REC_STAGE0 + s, "send activations", "pipeline", t + f, p);
    r->pass = "backward";
    add(r, ECI_REC_STAGE0 + s, "backward", "pipeline", t + f + p, b);
    r->pass = NULL;
    if (p > 0)
        add(r, ECI_REC_STAGE0 + s, "send gradients", "pipeline", t + f + p + b, p);
}

void eci_rec_stages(eci_step_rec *r, int pp, int m, double v, double u_max, double step_s, double tail_max_s)
{
    r->n = 0; /* the last stage's own record: the stages replace it */
    r->pp = pp < ECI_REC_MAX_STAGES ? pp : ECI_REC_MAX_STAGES;
    r->pass = NULL;
    double fill = 0;
    for (int s = 0; s < r->pp; s++) {
        double u = r->stage_fwd_s[s] + r->stage_bwd_s[s] + 2 * r->stage_p2p_s[s];
        for (int i = 0; i < m && (r->max_micro <= 0 || i < r->max_micro); i++)
            stage_micro(r, s, i, fill + i * u_max);
        r->micro = -1;
        if (r->stage_tail_s[s] > 0)
            add(r, ECI_REC_STAGE0 + s, "optimizer step", "phase", step_s - tail_max_s, r->stage_tail_s[s]);
        fill += u / v;
    }
    r->micro = -1;
    r->step_s = step_s;
}

void eci_rec_free(eci_step_rec *r)
{
    eci_free(r->ctx, r->ev, r->cap * sizeof *r->ev);
    r->ev = NULL;
    r->n = r->cap = 0;
}
