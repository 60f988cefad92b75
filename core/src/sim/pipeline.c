/*
 * pipeline.c: a discrete-event simulation of one epoch of a PyTorch training loop with its
 * DataLoader (docs/DESIGN.md 3.2, modeling.md 5.1-5.4).  Inputs come from epoch.c: the DataLoader
 * settings of the config, the host profile (cores, worker start-up) and the step model
 * evaluated at a few padded lengths (knots, interpolated linearly with GSL).
 *
 * What is simulated, with PyTorch's semantics:
 *   - batch i is built by worker i mod W, whole (every sample's CPU cost, then collate);
 *     at most W x prefetch_factor batches are dispatched ahead of the one the loop consumes;
 *     batches reach the loop in order;
 *   - without persistent_workers the workers start at every epoch, one after another;
 *   - a pin-memory thread (pin_memory with W > 0) copies each finished batch, in arrival order;
 *   - with W = 0 the main process loads (and pins) each batch itself before the step;
 *   - the main thread then runs the step: host work (dispatch, syncs) on a core and a wall
 *     time from the step model; the step ends in a host sync (loss.item()), so the GPU is
 *     idle while the loop waits for its next batch;
 *   - workers, the pin thread and the main thread share the host's cores by processor
 *     sharing: with r runnable and c cores each runs at min(1, c / r) -- oversubscription
 *     slows the loader and the loop's own dispatch alike.
 * Per-batch padded lengths and token counts come from lengths.c (a batch drawn whole, not
 * sample by sample, unless bucketed) and per-batch CPU costs from a gamma distribution around
 * their mean, all from one gsl_rng per replica: same seed, same numbers (pipeline_draw.c).
 * This file holds the events; pipeline_stats.c sums a run up, pipeline_closed.c has the same
 * runs as recurrences and the closed forms, pipeline_epoch.c the epoch of replicas.
 */
#include "sim/pipeline_sim.h"

#include <math.h>
#include <string.h>

/* ---- the step model at a padded length ---------------------------------------------------- */
static void interp_free(interp_set *s)
{
    for (int k = 0; k < ECI_S_MECHANICS; k++)
        if (s->fn[k] != NULL)
            gsl_interp_free(s->fn[k]);
    if (s->acc != NULL)
        gsl_interp_accel_free(s->acc);
}

static int interp_init(ec_ctx *ctx, const eci_pipe_in *in, interp_set *s)
{
    memset(s, 0, sizeof *s);
    if (in->n_knots < 2)
        return EC_OK;
    s->acc = gsl_interp_accel_alloc();
    for (int k = 0; k < ECI_S_MECHANICS; k++) {
        s->fn[k] = gsl_interp_alloc(gsl_interp_linear, in->n_knots);
        if (s->fn[k] == NULL || s->acc == NULL ||
            gsl_interp_init(s->fn[k], in->knot_len, in->knot_val[k], in->n_knots) != GSL_SUCCESS) {
            interp_free(s);
            return eci_error(ctx, EC_ENOMEM, "pipeline: cannot set up the step-model interpolation");
        }
    }
    return EC_OK;
}

/* ---- the event loop ----------------------------------------------------------------------- */
enum main_state { M_WAIT, M_LOAD, M_CPU, M_GPU, M_DONE };

typedef struct worker {
    double ready_at;  /* started */
    long next;        /* next batch it builds */
    long batch;       /* -1: idle */
    double rem, start;
} worker;

typedef struct sim {
    const eci_pipe_in *in;
    const batches *bt;
    long n;
    double now;
    worker *w;
    int nw;
    long taken;               /* batches the loop has taken */
    unsigned char *avail;     /* batch finished (and pinned) */
    long *pinq;               /* pin-memory FIFO (ring) */
    long pin_head, pin_len, pin_batch;
    double pin_rem, pin_start;
    /* main thread */
    int state;
    long j;
    double rem, step_end, wait_start, step_start;
    double *ends;
    double *stall_at;         /* per batch: the loop's wait for it (or its loading) */
    double last_ready;        /* when the last worker has started */
    long warm;                /* first batch taken with every worker started (-1: none yet) */
    long avail_upto;          /* batches 0 .. avail_upto - 1 are all available */
    long settled;             /* see eci_pipe_run_out.settled_from (-1: not yet) */
    int scan_workers;         /* a worker may have become able to start a batch since the last scan */
    double busy;
    interp_set fx;
    double *hist;
    eci_trace_buf *trace;
} sim;

static void record(sim *s, int track, const char *name, long step, double start, double dur)
{
    eci_trace_buf *t = s->trace;
    if (t == NULL || step >= t->max_steps || t->n >= t->cap)
        return;
    t->ev[t->n++] = (eci_trace_event){.track = track, .name = name, .step = step, .start_s = start, .dur_s = dur};
}

static int can_dispatch(const sim *s, long i)
{
    return i < s->n && i < s->taken + (long)s->nw * s->in->prefetch_factor;
}

/* The loop takes batch j with every worker started and the whole prefetch window after it
 * (batches < j + W pf) available: record j + W pf as settled_from (closed_workers' proof). */
static void note_settled(sim *s)
{
    if (s->settled >= 0 || s->nw == 0 || s->now < s->last_ready)
        return;
    while (s->avail_upto < s->n && s->avail[s->avail_upto])
        s->avail_upto++;
    long window = (long)s->nw * s->in->prefetch_factor;
    if (s->avail_upto >= s->j + window)
        s->settled = s->j + window;
}

/* The loop takes batch j (it is ready): start the step's host work and its wall clock. */
static void start_step(sim *s)
{
    const eci_pipe_in *in = s->in;
    double len = s->bt->len[s->j];
    double wall = series_at(in, s->fx.fn[ECI_S_WALL], s->fx.acc, ECI_S_WALL, len);
    double host = series_at(in, s->fx.fn[ECI_S_HOST], s->fx.acc, ECI_S_HOST, len);
    double busy = series_at(in, s->fx.fn[ECI_S_BUSY], s->fx.acc, ECI_S_BUSY, len);
    if (s->warm < 0 && s->now >= s->last_ready)
        s->warm = s->j;
    note_settled(s);
    s->state = M_CPU;
    s->rem = host < wall ? host : wall;
    s->step_start = s->now;
    s->step_end = s->now + wall;
    s->busy += busy;
    if (s->hist != NULL)
        s->hist[s->bt->len[s->j] - 1] += 1;
}

/* Zero-time transitions at s->now: start work that can start, hand over finished work. */
static void settle(sim *s)
{
    const eci_pipe_in *in = s->in;
    for (int changed = 1; changed;) {
        changed = 0;
        /* A worker starts a batch when it is idle, up and let through by the prefetch gate;
         * none of these changes unless a worker finished or came up (advance) or the loop
         * took a batch (below): otherwise a scan would start nothing. */
        for (int k = 0; k < s->nw && s->scan_workers; k++) {
            worker *w = &s->w[k];
            if (w->batch < 0 && s->now >= w->ready_at && can_dispatch(s, w->next)) {
                w->batch = w->next;
                w->next += s->nw;
                w->rem = s->bt->cpu[w->batch];
                w->start = s->now;
                changed = 1;
            }
        }
        s->scan_workers = 0;
        if (s->pin_batch < 0 && s->pin_len > 0) {
            s->pin_batch = s->pinq[s->pin_head];
            s->pin_head = s->pin_head + 1 < s->n ? s->pin_head + 1 : 0; /* the ring wraps at n */
            s->pin_len--;
            s->pin_rem = s->bt->pin[s->pin_batch];
            s->pin_start = s->now;
            changed = 1;
        }
        switch (s->state) {
        case M_WAIT:
            if (s->nw == 0) { /* num_workers = 0: the loop loads (and pins) the batch itself */
                s->state = M_LOAD;
                s->rem = s->bt->cpu[s->j] + (in->pin_memory ? s->bt->pin[s->j] : 0);
                changed = 1;
            } else if (s->avail[s->j]) {
                s->taken = s->j + 1;
                s->scan_workers = 1;
                s->stall_at[s->j] = s->now - s->wait_start;
                record(s, ECI_TRACK_MAIN, "wait for batch", s->j, s->wait_start, s->now - s->wait_start);
                start_step(s);
                changed = 1;
            }
            break;
        case M_LOAD:
            if (s->rem <= DONE_EPS_S) {
                s->taken = s->j + 1;
                s->scan_workers = 1;
                s->stall_at[s->j] = s->now - s->wait_start;
                record(s, ECI_TRACK_MAIN, "load batch", s->j, s->wait_start, s->now - s->wait_start);
                start_step(s);
                changed = 1;
            }
            break;
        case M_CPU:
            if (s->rem <= DONE_EPS_S) {
                s->state = M_GPU;
                changed = 1;
            }
            break;
        case M_GPU:
            if (s->now >= s->step_end - DONE_EPS_S) {
                record(s, ECI_TRACK_MAIN, "step", s->j, s->step_start, s->now - s->step_start);
                s->ends[s->j] = s->now;
                s->wait_start = s->now;
                s->state = ++s->j < s->n ? M_WAIT : M_DONE;
                changed = 1;
            }
            break;
        default:
            break;
        }
    }
}

/* fmin for a that is never NaN (a NaN b is ignored, as fmin does), inlined: the event loop
 * calls it for every worker at every event. */
static inline double min_s(double a, double b)
{
    return b < a ? b : a;
}

/* Advance to the next event under processor sharing; 0 when nothing can happen. */
static int advance(sim *s)
{
    int main_cpu = s->state == M_LOAD || s->state == M_CPU;
    int runnable = main_cpu + (s->pin_batch >= 0);
    /* The least CPU work left of what runs, divided by the rate once: min(x_i) / rate is
     * min(x_i / rate) exactly, as rounding is monotone. */
    double least_rem = INFINITY, next_up = INFINITY;
    if (main_cpu)
        least_rem = min_s(least_rem, s->rem);
    if (s->pin_batch >= 0)
        least_rem = min_s(least_rem, s->pin_rem);
    for (int k = 0; k < s->nw; k++) {
        const worker *w = &s->w[k];
        if (w->batch >= 0) {
            runnable++;
            least_rem = min_s(least_rem, w->rem);
        } else if (w->ready_at > s->now && can_dispatch(s, w->next)) {
            next_up = min_s(next_up, w->ready_at - s->now);
        }
    }
    double rate = runnable > s->in->cores ? (double)s->in->cores / runnable : 1.0;
    double dt = min_s(least_rem / rate, next_up);
    if (s->state == M_GPU)
        dt = min_s(dt, s->step_end - s->now);
    if (!isfinite(dt))
        return 0;
    if (dt < 0)
        dt = 0;
    double before = s->now;
    s->now += dt;
    double work = dt * rate;
    if (main_cpu)
        s->rem -= work;
    if (s->pin_batch >= 0 && (s->pin_rem -= work) <= DONE_EPS_S) {
        record(s, ECI_TRACK_PIN, "pin batch", s->pin_batch, s->pin_start, s->now - s->pin_start);
        s->avail[s->pin_batch] = 1;
        s->pin_batch = -1;
    }
    for (int k = 0; k < s->nw; k++) {
        worker *w = &s->w[k];
        if (w->batch < 0) {
            if (!(before >= w->ready_at) && s->now >= w->ready_at)
                s->scan_workers = 1; /* it came up */
            continue;
        }
        if ((w->rem -= work) > DONE_EPS_S)
            continue;
        record(s, ECI_TRACK_WORKER0 + k, "build batch", w->batch, w->start, s->now - w->start);
        if (s->in->pin_thread) {
            long tail = s->pin_head + s->pin_len; /* < 2n: the ring wraps at n */
            s->pinq[tail < s->n ? tail : tail - s->n] = w->batch;
            s->pin_len++;
        } else {
            s->avail[w->batch] = 1;
        }
        w->batch = -1;
        s->scan_workers = 1;
    }
    return 1;
}

/* eci_pipe_run, with the batch-means variance of a run of `extend_to` >= n steps whose steps
 * after the n simulated ones take `step` each. */
int eci_pipe_run_extended(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, double *hist,
                          long extend_to, double step, eci_pipe_run_out *out)
{
    memset(out, 0, sizeof *out);
    int rc = eci_pipe_check(ctx, in, n);
    if (rc != EC_OK)
        return rc;
    sim s = {.in = in, .n = n, .nw = in->num_workers, .pin_batch = -1, .state = M_WAIT, .hist = hist,
             .trace = in->trace, .warm = -1, .settled = -1, .scan_workers = 1};
    batches bt = {0};
    s.ends = eci_scratch(ctx, ECI_SCRATCH_RUN_ENDS, (size_t)n, sizeof *s.ends);
    s.stall_at = eci_scratch(ctx, ECI_SCRATCH_RUN_STALL, (size_t)n, sizeof *s.stall_at);
    s.avail = eci_scratch(ctx, ECI_SCRATCH_RUN_AVAIL, (size_t)n, 1);
    s.pinq = eci_scratch(ctx, ECI_SCRATCH_RUN_PINQ, (size_t)n, sizeof *s.pinq);
    s.w = eci_scratch(ctx, ECI_SCRATCH_RUN_WORKERS, s.nw > 0 ? (size_t)s.nw : 1, sizeof *s.w);
    if (!s.ends || !s.stall_at || !s.avail || !s.pinq || !s.w)
        return eci_error(ctx, EC_ENOMEM, "pipeline: out of memory for %ld steps", n);
    if ((rc = eci_pipe_draw(ctx, in, n, stream, &bt)) != EC_OK || (rc = interp_init(ctx, in, &s.fx)) != EC_OK)
        return rc;
    s.bt = &bt;
    for (int k = 0; k < s.nw; k++) {
        s.w[k].ready_at = in->persistent ? 0 : (k + 1) * in->worker_start_s;
        if (s.w[k].ready_at > s.last_ready)
            s.last_ready = s.w[k].ready_at;
        s.w[k].next = k;
        s.w[k].batch = -1;
    }
    settle(&s);
    while (s.state != M_DONE) {
        if (!advance(&s)) {
            rc = eci_error(ctx, EC_EINVAL, "pipeline: the simulation stalled at batch %ld", s.j);
            break;
        }
        settle(&s);
    }
    if (rc == EC_OK) {
        eci_pipe_summary(s.ends, s.stall_at, n, s.warm, extend_to, step, out);
        out->busy_s = s.busy;
        out->settled_from = s.settled;
    }
    interp_free(&s.fx);
    return rc;
}

int eci_pipe_run(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, double *hist, eci_pipe_run_out *out)
{
    return eci_pipe_run_extended(ctx, in, n, stream, hist, n, 0, out);
}
