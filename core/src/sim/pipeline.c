/*
 * pipeline.c: a discrete-event simulation of one epoch of a PyTorch training loop with its
 * DataLoader (docs/DESIGN.md 3.2, modeling.md 5.1-5.4).  Inputs come from predict.c: the DataLoader
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
 * their mean, all from one gsl_rng per replica: same seed, same numbers.
 */
#include "sim/pipeline.h"

#include <gsl/gsl_interp.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Simulation sizes: numerical choices, not model constants. */
#define STEADY_STEPS 256     /* micro-steps simulated when the epoch length is unknown */
#define MAX_SIM_STEPS 10000  /* longer epochs are extrapolated from this many */
#define STEP_BUDGET 4000     /* micro-steps over all replicas for the epoch interval */
#define MAX_REPLICAS 100
#define EMPIRICAL_MIN 30     /* replicas needed to read quantiles off the sample */
#define BATCH_MEANS 20       /* blocks of the batch-means variance estimate */
#define STARTUP_STEPS 512    /* steps simulated to measure persistent workers' first start-up */
#define DONE_EPS_S 1e-12     /* remaining work below this is done */

/* ---- random streams ---------------------------------------------------------------------- */
/* splitmix64: a well-mixed 64-bit seed per (seed, stream) for gsl_rng_set. */
static unsigned long stream_seed(uint64_t seed, uint64_t stream)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (unsigned long)(z ^ (z >> 31));
}

/* ---- the batches of one replica, in sampler order ----------------------------------------- */
typedef struct batches {
    int *len;      /* padded length */
    double *cpu;   /* CPU seconds to build (one core) */
    double *pin;   /* pinning copy seconds */
} batches;

static double cpu_noise(const eci_pipe_in *in, gsl_rng *rng)
{
    if (in->cpu_cv <= 0)
        return 1.0;
    /* the sum of b i.i.d. per-sample costs with CV cv: mean 1, CV cv / sqrt(b), as a gamma */
    double shape = in->batch / (in->cpu_cv * in->cpu_cv);
    return gsl_ran_gamma(rng, shape, 1.0 / shape);
}

static void set_batch(const eci_pipe_in *in, gsl_rng *rng, batches *bt, long i, int padded, double tokens)
{
    bt->len[i] = padded;
    bt->cpu[i] = in->batch_fixed_s +
                 cpu_noise(in, rng) * (in->batch * in->sample_fixed_s + tokens * in->sample_token_s);
    bt->pin[i] = in->pin_s * padded / in->seq;
}

/* The n batches of a run: t is the whole-batch table (lengths.h), NULL when lengths are
 * bucketed or absent. */
static void draw_batches(const eci_pipe_in *in, const eci_batch_lengths *t, gsl_rng *rng, long n, int *scratch,
                         batches *bt)
{
    int b = in->batch;
    const eci_lengths *l = in->lengths;
    if (l != NULL && in->padding == EC_PAD_BUCKETED) {
        /* HF LengthGroupedSampler: mega-batches sorted longest first, cut into batches.  The
         * lengths are whole tokens in 1..cap, so the sort is a count per length (scratch). */
        int per = in->mega_batch / b > 0 ? in->mega_batch / b : 1;
        for (long i = 0; i < n;) {
            memset(scratch, 0, ((size_t)l->cap + 1) * sizeof *scratch);
            for (int s = 0; s < per * b; s++)
                scratch[eci_lengths_draw(l, rng)]++;
            int len = l->cap;
            for (int k = 0; k < per && i < n; k++, i++) {
                double tokens = 0;
                int longest = 0;
                for (int s = 0; s < b; s++) {
                    while (scratch[len] == 0)
                        len--;
                    scratch[len]--;
                    tokens += len;
                    if (longest == 0)
                        longest = len;
                }
                set_batch(in, rng, bt, i, longest, tokens);
            }
        }
        return;
    }
    for (long i = 0; i < n; i++) {
        if (l == NULL) {
            set_batch(in, rng, bt, i, in->seq, (double)b * in->seq);
            continue;
        }
        int longest;
        double tokens;
        eci_lengths_batch_draw(t, rng, &longest, &tokens);
        set_batch(in, rng, bt, i, in->padding == EC_PAD_MAX_LENGTH ? in->seq : longest, tokens);
    }
}

/* ---- the step model at a padded length ---------------------------------------------------- */
typedef struct interp_set {
    gsl_interp *fn[ECI_S_MECHANICS];
    gsl_interp_accel *acc;
} interp_set;

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

/* Series k of the step model at padded length len (clamped to the knots). */
static double series_at(const eci_pipe_in *in, const gsl_interp *fn, gsl_interp_accel *acc, int k, double len)
{
    if (in->n_knots < 2)
        return in->knot_val[k][0];
    double lo = in->knot_len[0], hi = in->knot_len[in->n_knots - 1], y;
    len = len < lo ? lo : len > hi ? hi : len;
    if (gsl_interp_eval_e(fn, in->knot_len, in->knot_val[k], len, acc, &y) != GSL_SUCCESS)
        return in->knot_val[k][0];
    return y;
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
    if (s->trace != NULL && s->j < s->trace->max_steps) {
        double h2d = series_at(in, s->fx.fn[ECI_S_H2D], s->fx.acc, ECI_S_H2D, len);
        double comm = series_at(in, s->fx.fn[ECI_S_COMM], s->fx.acc, ECI_S_COMM, len);
        double coll = series_at(in, s->fx.fn[ECI_S_COLL_BUSY], s->fx.acc, ECI_S_COLL_BUSY, len);
        double hidden = series_at(in, s->fx.fn[ECI_S_COLL_HIDDEN], s->fx.acc, ECI_S_COLL_HIDDEN, len);
        double t = s->now, compute = busy - coll > 0 ? busy - coll : 0;
        record(s, ECI_TRACK_H2D, "copy batch", s->j, t, h2d);
        record(s, ECI_TRACK_GPU, "kernels", s->j, t + h2d, compute);
        if (hidden > 0) /* beside the kernels, ending with them (a summary: their spread is not simulated) */
            record(s, ECI_TRACK_OVERLAP, "collectives beside compute", s->j,
                   t + h2d + (compute > hidden ? compute - hidden : 0), hidden < compute ? hidden : compute);
        if (comm > 0)
            record(s, ECI_TRACK_COMM, "exposed communication", s->j, t + h2d + compute, comm);
    }
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

/* ---- the generator: mt19937, replayed ---------------------------------------------------
 * A run draws from mt19937 seeded with its stream's seed.  Seeding writes 624 words and the
 * first draw regenerates all 624 (the twist): more than a short run's ~80 draws, and a sweep
 * seeds the same few streams again and again.  So the first REPLAY_DRAWS outputs of each of
 * the last REPLAY_SEEDS seeds are kept with the generator's state after them, and a run draws
 * through a generator type of its own that returns those outputs, then continues from the
 * kept state: mt19937's numbers exactly (its get_double is get / 2^32, as GSL's mt.c). */
#define REPLAY_DRAWS 128
#define REPLAY_SEEDS 4

typedef struct replay_seed {
    unsigned long seed;
    int valid;
    unsigned long v[REPLAY_DRAWS];
    gsl_rng *after;          /* mt19937 after the REPLAY_DRAWS draws */
} replay_seed;

struct eci_pipe_rngs {
    replay_seed slot[REPLAY_SEEDS];
    unsigned next;           /* the slot a new seed takes (round robin) */
    gsl_rng *rng;            /* the replay generator runs draw from */
    gsl_rng *tail;           /* mt19937 continuing a replay past its kept draws */
};

typedef struct replay_state {
    const replay_seed *s;
    size_t pos;
    gsl_rng *tail;
} replay_state;

static unsigned long replay_get(void *vstate)
{
    replay_state *st = (replay_state *)vstate;
    if (st->pos < REPLAY_DRAWS)
        return st->s->v[st->pos++];
    if (st->pos == REPLAY_DRAWS) {
        gsl_rng_memcpy(st->tail, st->s->after);
        st->pos++;
    }
    return gsl_rng_get(st->tail);
}

static double replay_get_double(void *vstate)
{
    return (double)replay_get(vstate) / 4294967296.0;
}

static void replay_set(void *vstate, unsigned long seed)
{
    (void)seed; /* seeded by eci_pipe_rng, which points it at a kept seed */
    memset(vstate, 0, sizeof(replay_state));
}

static const gsl_rng_type replay_type = {"epochcast-mt19937-replay", 0xffffffffUL, 0, sizeof(replay_state),
                                         replay_set, replay_get, replay_get_double};

static int rngs_alloc(ec_ctx *ctx)
{
    struct eci_pipe_rngs *g;
    if (eci_ctx_on_free(ctx, eci_pipe_ctx_free) != EC_OK || (g = eci_calloc(ctx, 1, sizeof *g)) == NULL)
        return 0;
    ctx->pipe_rngs = g;
    g->rng = gsl_rng_alloc(&replay_type);
    g->tail = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < REPLAY_SEEDS && g->tail != NULL; i++)
        if ((g->slot[i].after = gsl_rng_alloc(gsl_rng_mt19937)) == NULL)
            return 0;
    return g->rng != NULL && g->tail != NULL;
}

gsl_rng *eci_pipe_rng(ec_ctx *ctx, unsigned long seed)
{
    if (ctx->pipe_rngs == NULL && !rngs_alloc(ctx)) {
        eci_pipe_ctx_free(ctx);
        return NULL;
    }
    struct eci_pipe_rngs *g = ctx->pipe_rngs;
    replay_seed *s = NULL;
    for (int i = 0; i < REPLAY_SEEDS && s == NULL; i++)
        if (g->slot[i].valid && g->slot[i].seed == seed)
            s = &g->slot[i];
    if (s == NULL) {
        s = &g->slot[g->next];
        g->next = (g->next + 1) % REPLAY_SEEDS;
        gsl_rng_set(s->after, seed);
        for (int k = 0; k < REPLAY_DRAWS; k++)
            s->v[k] = gsl_rng_get(s->after);
        s->seed = seed;
        s->valid = 1;
    }
    replay_state *st = (replay_state *)g->rng->state;
    *st = (replay_state){.s = s, .pos = 0, .tail = g->tail};
    return g->rng;
}

/* End of step j of a run that simulated m steps and continues one step per `step` after them
 * (closed_workers: every step past the simulated ones takes T). */
static double end_at(const double *ends, long m, double step, long j)
{
    return j < m ? ends[j] : ends[m - 1] + (double)(j - m + 1) * step;
}

/* Var(sum of the step durations) by batch means: m blocks, m x the variance of block sums,
 * over n steps of which the first m were simulated. */
static double batch_means_var(const double *ends, long m, double step, long n)
{
    if (n < 2 * BATCH_MEANS + 1)
        return 0;
    long k = (n - 1) / BATCH_MEANS; /* block b: the durations ending at ends[b k + 1 .. (b + 1) k] */
    double sums[BATCH_MEANS];
    for (int b = 0; b < BATCH_MEANS; b++)
        sums[b] = end_at(ends, m, step, (b + 1) * k) - end_at(ends, m, step, b * k);
    /* scale from blocks of k steps to the n - 1 durations after the first */
    return gsl_stats_variance(sums, 1, BATCH_MEANS) * (double)(n - 1) / k;
}

/* What every run checks of its input. */
static int run_check(ec_ctx *ctx, const eci_pipe_in *in, long n)
{
    if (n < 1 || in->batch < 1 || in->seq < 1 || in->n_knots < 1 || in->cores < 1 ||
        (in->num_workers > 0 && in->prefetch_factor < 1))
        return eci_error(ctx, EC_EINVAL, "pipeline: steps, batch, seq_len, knots, cores and prefetch_factor must be >= 1");
    return EC_OK;
}

/* The n batches of a run in sampler order (context scratch: a sweep of epochs allocates
 * nothing after the first), from the context's generator set to stream `stream` of in->seed:
 * a run's numbers depend on (seed, stream) only. */
static int run_batches(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, batches *bt)
{
    size_t mb = in->lengths != NULL ? (size_t)in->lengths->cap + 1 : 1; /* bucketed: count per length */
    bt->len = eci_scratch(ctx, ECI_SCRATCH_RUN_LEN, (size_t)n, sizeof *bt->len);
    bt->cpu = eci_scratch(ctx, ECI_SCRATCH_RUN_CPU, (size_t)n, sizeof *bt->cpu);
    bt->pin = eci_scratch(ctx, ECI_SCRATCH_RUN_PIN, (size_t)n, sizeof *bt->pin);
    int *counts = eci_scratch(ctx, ECI_SCRATCH_RUN_COUNTS, mb, sizeof *counts);
    gsl_rng *rng = eci_pipe_rng(ctx, stream_seed(in->seed, stream));
    if (!bt->len || !bt->cpu || !bt->pin || !counts || !rng)
        return eci_error(ctx, EC_ENOMEM, "pipeline: out of memory for %ld steps", n);
    const eci_batch_lengths *whole = NULL;
    if (in->lengths != NULL && in->padding != EC_PAD_BUCKETED &&
        (whole = eci_lengths_batch(ctx, in->lengths, in->batch)) == NULL)
        return EC_ENOMEM;
    draw_batches(in, whole, rng, n, counts, bt);
    return EC_OK;
}

/* A run's summary from its step ends and the loop's waits (stall_at[j]: for batch j): the
 * steady state from the first batch taken with every worker up (warm), when two steps follow
 * it; the batch-means variance of a run of `extend_to` >= n steps whose steps after the n
 * simulated ones take `step` each. */
static void run_summary(const double *ends, const double *stall_at, long n, long warm, long extend_to, double step,
                        eci_pipe_run_out *out)
{
    long w0 = warm >= 0 && warm + 2 < n ? warm : 0;
    out->steps = n;
    out->total_s = ends[n - 1];
    out->first_end_s = ends[0];
    out->warm_step = w0;
    out->warm_end_s = ends[w0];
    for (long j = w0 + 1; j < n; j++) /* the wait for the first batch is the pipeline fill */
        out->stall_s += stall_at[j];
    long ext = extend_to > n ? extend_to : n;
    out->var_sum_s2 = batch_means_var(ends + w0, n - w0, step, ext - w0) * (ext - 1) / (ext - w0 > 1 ? ext - w0 - 1 : 1);
}

/* eci_pipe_run, with the batch-means variance of a run of `extend_to` >= n steps whose steps
 * after the n simulated ones take `step` each. */
static int run_extended(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, double *hist, long extend_to,
                        double step, eci_pipe_run_out *out)
{
    memset(out, 0, sizeof *out);
    int rc = run_check(ctx, in, n);
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
    if ((rc = run_batches(ctx, in, n, stream, &bt)) != EC_OK || (rc = interp_init(ctx, in, &s.fx)) != EC_OK)
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
        run_summary(s.ends, s.stall_at, n, s.warm, extend_to, step, out);
        out->busy_s = s.busy;
        out->settled_from = s.settled;
    }
    interp_free(&s.fx);
    return rc;
}

/* ---- the same run where nothing shares a core: a recurrence -------------------------------
 * With workers, the pin thread and the loop each on a core of their own (W + pin + 1 <=
 * cores, which the closed forms below require) and one padded length, nothing in
 * run_extended's simulation is ever slowed by sharing, and its events follow in batch order.
 * With t_j when the loop takes batch j, f_i and p_i when batch i is built and available:
 *   batch i (worker i mod W) starts at max(the worker's previous batch built, or its start-up;
 *     t_{i - W pf}, the prefetch gate) and f_i is that plus its CPU cost c_i;
 *   the pin thread takes built batches in order of arrival -- by f, and within DONE_EPS_S (one
 *     event of the simulation) by worker index -- and p_i = max(f_i, the pin before ends) +
 *     pin_i; without a pin thread p_i = f_i;
 *   t_j = max(p_j, the end of step j - 1) (0 for j = 0), and step j ends at t_j + T.
 * A batch that arrives before f_j has an index below j + W pf (batch i >= j + W pf starts at
 * t_j or later, and t_j >= p_j >= f_j), so the batches up to there are built before p_j is
 * taken, and the pin order is final.  The same numbers as the events up to rounding (the
 * closed-form tests compare both); a 26-step run of 8 workers takes about an eighth of the
 * events' instructions, and such runs are every prediction's start-up with workers. */
typedef struct direct {
    const batches *bt;
    int nw;
    double *built, *avail;    /* f_i; p_i (-1: not yet) */
    long *pend;               /* built batches waiting for the pin thread, by arrival */
    long n_pend;
    double pin_free_s;        /* when the pin thread is next free */
} direct;

/* The pin thread takes the next batch that arrived (DONE_EPS_S apart: the same event, taken
 * in worker order as the simulation's loop over workers queues them). */
static void pin_next(direct *d)
{
    const double *f = d->built;
    long best = 0;
    for (long q = 1; q < d->n_pend && f[d->pend[q]] <= f[d->pend[0]] + DONE_EPS_S; q++)
        if (d->pend[q] % d->nw < d->pend[best] % d->nw)
            best = q;
    long i = d->pend[best];
    memmove(d->pend + best, d->pend + best + 1, (size_t)(d->n_pend - best - 1) * sizeof *d->pend);
    d->n_pend--;
    double start = f[i] > d->pin_free_s ? f[i] : d->pin_free_s;
    d->pin_free_s = start + d->bt->pin[i];
    d->avail[i] = d->pin_free_s;
}

/* Batch i was built: available at once, or queued for the pin thread by arrival. */
static void built_batch(direct *d, int pin_thread, long i)
{
    if (!pin_thread) {
        d->avail[i] = d->built[i];
        return;
    }
    d->avail[i] = -1;
    long q = d->n_pend;
    while (q > 0 && d->built[d->pend[q - 1]] > d->built[i])
        q--;
    memmove(d->pend + q + 1, d->pend + q, (size_t)(d->n_pend - q) * sizeof *d->pend);
    d->pend[q] = i;
    d->n_pend++;
}

static int run_direct(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, long extend_to, double step,
                      eci_pipe_run_out *out)
{
    int nw = in->num_workers;
    if (nw < 1 || nw + (in->pin_thread ? 1 : 0) + 1 > in->cores || in->n_knots != 1 || in->trace != NULL ||
        in->force_des)
        return run_extended(ctx, in, n, stream, NULL, extend_to, step, out); /* it does not apply */
    memset(out, 0, sizeof *out);
    int rc = run_check(ctx, in, n);
    if (rc != EC_OK)
        return rc;
    batches bt = {0};
    direct d = {.bt = &bt, .nw = nw};
    double *ends = eci_scratch(ctx, ECI_SCRATCH_RUN_ENDS, (size_t)n, sizeof *ends);
    double *taken = eci_scratch(ctx, ECI_SCRATCH_RUN_STALL, (size_t)n, sizeof *taken);
    d.built = eci_scratch(ctx, ECI_SCRATCH_RUN_BUILT, (size_t)n, sizeof *d.built);
    d.avail = eci_scratch(ctx, ECI_SCRATCH_RUN_AVAILABLE, (size_t)n, sizeof *d.avail);
    d.pend = eci_scratch(ctx, ECI_SCRATCH_RUN_PINQ, (size_t)n, sizeof *d.pend);
    double *free_s = eci_scratch(ctx, ECI_SCRATCH_RUN_WORKERS, (size_t)nw, sizeof *free_s);
    if (!ends || !taken || !d.built || !d.avail || !d.pend || !free_s)
        return eci_error(ctx, EC_ENOMEM, "pipeline: out of memory for %ld steps", n);
    if ((rc = run_batches(ctx, in, n, stream, &bt)) != EC_OK)
        return rc;
    double last_ready = 0, wall = in->knot_val[ECI_S_WALL][0], busy = in->knot_val[ECI_S_BUSY][0];
    for (int k = 0; k < nw; k++) {
        free_s[k] = in->persistent ? 0 : (k + 1) * in->worker_start_s;
        last_ready = free_s[k] > last_ready ? free_s[k] : last_ready;
    }
    long window = (long)nw * in->prefetch_factor, n_built = 0, warm = -1, settled = -1, avail_upto = 0;
    double prev_end = 0;
    for (long j = 0; j < n; j++) {
        for (long upto = j + window < n ? j + window : n; n_built < upto; n_built++) {
            long i = n_built;
            double gate = i >= window ? taken[i - window] : 0, *w = &free_s[i % nw];
            d.built[i] = (*w > gate ? *w : gate) + bt.cpu[i];
            *w = d.built[i];
            built_batch(&d, in->pin_thread, i);
        }
        while (d.avail[j] < 0)
            pin_next(&d);
        double t = d.avail[j] > prev_end ? d.avail[j] : prev_end;
        taken[j] = t;
        if (warm < 0 && t >= last_ready)
            warm = j;
        if (settled < 0 && t >= last_ready) { /* as note_settled: batches < j + W pf available? */
            while (d.n_pend > 0 && d.built[d.pend[0]] <= t)
                pin_next(&d);
            while (avail_upto < n_built && d.avail[avail_upto] >= 0 && d.avail[avail_upto] <= t)
                avail_upto++;
            if (avail_upto >= j + window)
                settled = j + window;
        }
        ends[j] = t + wall;
        out->busy_s += busy;
        prev_end = ends[j];
    }
    for (long j = n; j-- > 0;) /* the loop's wait for batch j (stall_at), in place */
        taken[j] -= j > 0 ? ends[j - 1] : 0;
    run_summary(ends, taken, n, warm, extend_to, step, out);
    out->settled_from = settled;
    return EC_OK;
}

void eci_pipe_ctx_free(ec_ctx *ctx)
{
    struct eci_pipe_rngs *g = ctx->pipe_rngs;
    if (g == NULL)
        return;
    if (g->rng != NULL)
        gsl_rng_free(g->rng);
    if (g->tail != NULL)
        gsl_rng_free(g->tail);
    for (int i = 0; i < REPLAY_SEEDS; i++)
        if (g->slot[i].after != NULL)
            gsl_rng_free(g->slot[i].after);
    eci_free(ctx, g, sizeof *g);
    ctx->pipe_rngs = NULL;
}

int eci_pipe_run(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, double *hist, eci_pipe_run_out *out)
{
    return run_extended(ctx, in, n, stream, hist, n, 0, out);
}

int eci_pipe_run_direct(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, eci_pipe_run_out *out)
{
    return run_direct(ctx, in, n, stream, n, 0, out);
}

/* ---- the epoch: replicas, extrapolation, interval ------------------------------------------ */
/* Every series averaged over the padded lengths in hist. */
static int average_series(ec_ctx *ctx, const eci_pipe_in *in, const double *hist, eci_pipe_epoch *out)
{
    gsl_interp *fn = NULL;
    gsl_interp_accel *acc = NULL;
    if (in->n_knots >= 2) {
        fn = gsl_interp_alloc(gsl_interp_linear, in->n_knots);
        acc = gsl_interp_accel_alloc();
        if (fn == NULL || acc == NULL) {
            if (fn != NULL)
                gsl_interp_free(fn);
            if (acc != NULL)
                gsl_interp_accel_free(acc);
            return eci_error(ctx, EC_ENOMEM, "pipeline: out of memory");
        }
    }
    double count = 0, sum = 0, sq = 0;
    for (int L = 1; L <= in->seq; L++)
        if (hist[L - 1] > 0) {
            count += hist[L - 1];
            sum += hist[L - 1] * L;
            sq += hist[L - 1] * (double)L * L;
            out->distinct_lengths++;
        }
    for (size_t k = 0; k < in->n_series; k++) {
        double acc_v = 0;
        if (fn != NULL)
            gsl_interp_init(fn, in->knot_len, in->knot_val[k], in->n_knots);
        for (int L = 1; L <= in->seq; L++)
            if (hist[L - 1] > 0)
                acc_v += hist[L - 1] * series_at(in, fn, acc, (int)k, L);
        out->mean_s[k] = count > 0 ? acc_v / count : 0;
    }
    out->padded_len = count > 0 ? sum / count : 0;
    out->padded_sq = count > 0 ? sq / count : 0;
    if (fn != NULL) {
        gsl_interp_free(fn);
        gsl_interp_accel_free(acc);
    }
    return EC_OK;
}

/* Persistent workers start once per run: the first epoch minus a steady one, same stream,
 * over m steps (any m past both runs' start-up gives the same difference).  `recurrence`: the
 * runs as run_direct's recurrence where it applies (the closed forms), else the simulation's
 * events (simulate_all: its numbers to the bit, with or without force_des). */
static int startup_once(ec_ctx *ctx, const eci_pipe_in *in, long m, int recurrence, double *out)
{
    *out = 0;
    if (!in->persistent || in->num_workers == 0 || in->worker_start_s <= 0)
        return EC_OK;
    eci_pipe_in first = *in;
    first.persistent = 0;
    first.trace = NULL;
    eci_pipe_run_out a, b;
    int rc = recurrence ? run_direct(ctx, &first, m, 0, m, 0, &a) : eci_pipe_run(ctx, &first, m, 0, NULL, &a);
    if (rc == EC_OK)
        rc = recurrence ? run_direct(ctx, in, m, 0, m, 0, &b) : eci_pipe_run(ctx, in, m, 0, NULL, &b);
    if (rc == EC_OK)
        *out = a.total_s > b.total_s ? a.total_s - b.total_s : 0;
    return rc;
}

/* Steps simulated per replica, and replicas, for an epoch of in->steps (0: unknown). */
static void sim_plan(const eci_pipe_in *in, long *n, int *reps)
{
    long target = in->steps;
    *n = target > 0 ? (target < MAX_SIM_STEPS ? target : MAX_SIM_STEPS) : STEADY_STEPS;
    *reps = 1;
    if (target > 0) {
        long r = STEP_BUDGET / *n;
        *reps = r < 1 ? 1 : r > MAX_REPLICAS ? MAX_REPLICAS : (int)r;
    }
}

/* Mean and p10/p50/p90 of the epoch from the replicas' totals: read off the sample when there
 * are enough replicas, else a sum of many steps, normal with variance var_s2. */
static void epoch_spread(double *totals, int reps, double var_s2, eci_pipe_epoch *out)
{
    out->epoch_s = gsl_stats_mean(totals, 1, (size_t)reps);
    if (reps >= EMPIRICAL_MIN) {
        gsl_sort(totals, 1, (size_t)reps);
        out->p10_s = gsl_stats_quantile_from_sorted_data(totals, 1, (size_t)reps, 0.1);
        out->p50_s = gsl_stats_quantile_from_sorted_data(totals, 1, (size_t)reps, 0.5);
        out->p90_s = gsl_stats_quantile_from_sorted_data(totals, 1, (size_t)reps, 0.9);
    } else {
        double half = ECI_NORMAL_P90 * sqrt(var_s2 > 0 ? var_s2 : 0);
        out->p10_s = out->epoch_s - half;
        out->p50_s = out->epoch_s;
        out->p90_s = out->epoch_s + half;
    }
}

/* Every step simulated: replicas of eci_pipe_run, extrapolated past MAX_SIM_STEPS. */
static int simulate_all(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out)
{
    long target = in->steps, n;
    int reps;
    sim_plan(in, &n, &reps);
    double *hist = eci_scratch(ctx, ECI_SCRATCH_SIM_HIST, (size_t)in->seq, sizeof *hist);
    double *totals = eci_scratch(ctx, ECI_SCRATCH_SIM_TOTALS, (size_t)reps, sizeof *totals);
    if (hist == NULL || totals == NULL)
        return EC_ENOMEM;
    eci_pipe_in quiet = *in;
    quiet.trace = NULL;
    double interval = 0, stall = 0, busy = 0, var = 0;
    int rc = EC_OK;
    for (int r = 0; r < reps && rc == EC_OK; r++) {
        eci_pipe_run_out o;
        if ((rc = eci_pipe_run(ctx, &quiet, n, (uint64_t)r, hist, &o)) != EC_OK)
            break;
        long after = n - 1 - o.warm_step; /* steady steps */
        double iv = after > 0 ? (o.total_s - o.warm_end_s) / after : o.total_s;
        interval += iv / reps;
        stall += (after > 0 ? o.stall_s / after : 0) / reps;
        busy += o.busy_s / n / reps;
        totals[r] = o.total_s + (double)(target - n) * iv;
        var += o.var_sum_s2 * (target > n ? (double)target / n : 1.0) / reps;
    }
    if (rc == EC_OK)
        rc = average_series(ctx, in, hist, out);
    if (rc == EC_OK && target > 0)
        rc = startup_once(ctx, in, n < STARTUP_STEPS ? n : STARTUP_STEPS, 0, &out->startup_once_s);
    if (rc == EC_OK) {
        out->step_s = interval;
        out->stall_s = stall;
        out->busy_s = busy;
        out->simulated_steps = n;
        out->replicas = reps;
        if (target > 0)
            epoch_spread(totals, reps, var, out);
    }
    return rc;
}

/* ---- closed forms where the simulation can only settle one way ----------------------------
 * With one padded length (no lengths=, or max_length padding) every step has the same wall
 * time T, host part H <= T and GPU time B, and a batch's CPU cost is
 *   c = batch_fixed + G x X,  X = b sample_fixed + tokens x token_s,  G ~ Gamma(k, 1/k), k = b / cv^2.
 * The loop loading its own batches (num_workers = 0) runs alone on a core: every step takes
 * c + pin + T, i.i.d., so the epoch is a sum with known mean and variance.  With workers that
 * never share a core (W + pin thread + loop <= cores), a step lasts exactly T once its batch is
 * there, and no step after the first one taken with every worker up (the DES's warm step)
 * waits for its batch when C + W pf P <= T, C a bound on c and P the pin copy (proof: batch j
 * is dispatched by the time step j - W pf, batch j - W, and the last worker's start-up are
 * all at least T before step j would start back to back, so it is built by then + C; the pin
 * thread holds at most W pf dispatched batches, so it is pinned within W pf P more).  Then the
 * steady state is T with no stall, exactly what the simulation gives, and only the start-up
 * steps need simulating for a known epoch.  C is exceeded with probability below
 * exp(-TAIL_NATS) per batch: P(G >= m) <= exp(-k (m - 1 - ln m)) for m > 1 (Chernoff, from
 * the gamma's moment generating function (1 - t/k)^-k).
 *
 * The pin-memory thread with C + W pf P > T: it is one FIFO server, and at start-up it can
 * hold a backlog of up to W pf batches, so early steps may wait; but with C + P <= T the
 * backlog never comes back once it has cleared.  Let t_j be when the loop takes batch j
 * (t_{j+1} >= t_j + T: every step lasts T), d_i, f_i, p_i when batch i is dispatched, built
 * and pinned, and i0 >= W pf ("settled_from", seen in the simulation) such that at t_{i0-W pf}
 * every worker has started and every batch < i0 is pinned.  Claim, for i >= i0:
 *   (a) d_i = t_{i-W pf},  (b) f_i <= t_{i-W pf} + C,  (c) p_i <= t_{i-W pf} + C + P.
 * By induction on i.  (a): the gate opens at t_{i-W pf}; the worker is up by then and has
 * finished batch i - W: by t_{i0-W pf} if i - W < i0, else by t_{i-W-W pf} + C <=
 * t_{i-W pf} - W T + C <= t_{i-W pf}.  (b): it builds alone on a core.  (c): when batch i
 * reaches the pin thread (f_i >= t_{i-W pf}) every earlier batch k is pinned (k < i0 by
 * t_{i0-W pf}; k >= i0 by t_{k-W pf} + C + P <= t_{i-1-W pf} + T <= t_{i-W pf}) and no later
 * one has arrived (f_k >= d_k >= t_{k-W pf} >= t_{i-W pf} + T > f_i, as C < T when P > 0), so
 * it is pinned P after it is built.  Hence p_i <= t_{i-W pf} + T <= t_{i-1} + T: no step from
 * i0 on waits.  A run of m >= i0 steps is the same as the full one up to t_{m-W pf} (batch m
 * is not dispatched before), so both take batch i0 at the same time and then one per T. */
#define TAIL_NATS 27.6 /* -ln(1e-12): a bound no batch of any simulated epoch exceeds in practice */

typedef struct steady {
    double wall, busy;        /* a micro-step once it has its batch */
    double x_mean, x_var;     /* X: a batch's CPU cost before batch_fixed and the noise */
    double x_max;             /* X's largest value */
    double pin;               /* a batch's pinning copy */
} steady;

static int one_padded_length(const eci_pipe_in *in)
{
    return in->n_knots == 1 && (in->lengths == NULL || in->padding == EC_PAD_MAX_LENGTH);
}

/* X's moments: tokens are b x seq, or the sum of b lengths drawn from lengths= (needed only
 * when tokens cost CPU time). */
static steady steady_of(const eci_pipe_in *in)
{
    const eci_lengths *l = in->lengths;
    double b = in->batch, st = in->sample_token_s;
    steady k = {.wall = in->knot_val[ECI_S_WALL][0], .busy = in->knot_val[ECI_S_BUSY][0], .pin = in->pin_s};
    double tok_mean = b * in->seq, tok_var = 0;
    if (l != NULL && st > 0) {
        double sq = 0;
        for (int L = 1; L <= l->cap; L++)
            sq += (double)L * L * (l->cdf[L] - l->cdf[L - 1]);
        tok_mean = b * l->mean;
        tok_var = b * (sq - l->mean * l->mean);
    }
    k.x_mean = b * in->sample_fixed_s + tok_mean * st;
    k.x_var = tok_var * st * st;
    k.x_max = b * in->sample_fixed_s + b * in->seq * st;
    return k;
}

/* Does no batch cost more than `budget` of CPU (up to exp(-TAIL_NATS) per batch)? */
static int cpu_within(const eci_pipe_in *in, const steady *k, double budget)
{
    double room = budget - in->batch_fixed_s;
    if (k->x_max <= 0)
        return room >= 0;
    double m = room / k->x_max;
    if (in->cpu_cv <= 0)
        return m >= 1;
    double shape = in->batch / (in->cpu_cv * in->cpu_cv);
    return m > 1 && shape * (m - 1 - log(m)) >= TAIL_NATS;
}

/* What every closed form shares: one padded length, so every series is its knot value. */
static void fill_one_length(const eci_pipe_in *in, const steady *k, long n, int reps, eci_pipe_epoch *out)
{
    for (size_t s = 0; s < in->n_series; s++)
        out->mean_s[s] = in->knot_val[s][0];
    out->padded_len = in->seq;
    out->padded_sq = (double)in->seq * in->seq;
    out->distinct_lengths = 1;
    out->busy_s = k->busy;
    out->simulated_steps = n;
    out->replicas = reps;
    out->closed_form = 1;
}

/* num_workers = 0: step = c + pin (if pin_memory) + T, i.i.d.  The epoch's spread is normal
 * (a sum of many independent steps) with Var(c) = E[G^2] E[X^2] - E[X]^2, E[G^2] = 1 + cv^2 / b. */
static void closed_in_loop(const eci_pipe_in *in, const steady *k, eci_pipe_epoch *out)
{
    long n;
    int reps;
    sim_plan(in, &n, &reps);
    double load = in->batch_fixed_s + k->x_mean + (in->pin_memory ? k->pin : 0);
    fill_one_length(in, k, n, reps, out);
    out->step_s = load + k->wall;
    out->stall_s = load;
    if (in->steps > 0) {
        double g2 = 1.0 + in->cpu_cv * in->cpu_cv / in->batch;
        double var_c = g2 * (k->x_var + k->x_mean * k->x_mean) - k->x_mean * k->x_mean;
        out->epoch_s = (double)in->steps * out->step_s;
        double half = ECI_NORMAL_P90 * sqrt((double)in->steps * (var_c > 0 ? var_c : 0));
        out->p10_s = out->epoch_s - half;
        out->p50_s = out->epoch_s;
        out->p90_s = out->epoch_s + half;
    }
}

/* Did a run of m steps settle (the pin-queue proof) early enough that its warm step is the
 * full simulation's too (warm <= settled_from - W pf, and the run keeps it when warm + 2 < m)? */
static int settled_in(const eci_pipe_in *in, const eci_pipe_run_out *o, long m)
{
    return o->settled_from >= 0 && o->settled_from - (long)in->num_workers * in->prefetch_factor + 2 < m;
}

/* Workers that keep up without sharing cores: the steady state is T; a known epoch simulates
 * each replica's first m steps (past the warm step, and past the last step whose batch the
 * first m can see) and adds T per step after them, as the full simulation would.  With
 * `settle` (the pin-queue proof) even the steady interval needs the start, and every run
 * must have settled within its m steps: *applies is 0 when one has not. */
static int closed_workers(ec_ctx *ctx, const eci_pipe_in *in, const steady *k, long m, int settle, int *applies,
                          eci_pipe_epoch *out)
{
    long target = in->steps, n;
    int reps;
    sim_plan(in, &n, &reps);
    fill_one_length(in, k, n, reps, out);
    out->step_s = k->wall;
    *applies = 1;
    if (target <= 0 && !settle)
        return EC_OK;
    out->closed_form = settle ? 2 : 1;
    double *totals = eci_scratch(ctx, ECI_SCRATCH_SIM_TOTALS, (size_t)reps, sizeof *totals);
    if (totals == NULL)
        return EC_ENOMEM;
    eci_pipe_in quiet = *in;
    quiet.trace = NULL;
    double interval = 0, stall = 0, var = 0;
    for (int r = 0; r < reps; r++) {
        eci_pipe_run_out o;
        int rc = run_direct(ctx, &quiet, m, (uint64_t)r, n, k->wall, &o);
        if (rc != EC_OK)
            return rc;
        if (settle && !settled_in(in, &o, m)) {
            *applies = 0;
            return EC_OK;
        }
        double total_n = o.total_s + (double)(n - m) * k->wall; /* the simulation's n steps */
        long after = n - 1 - o.warm_step;
        double iv = (total_n - o.warm_end_s) / after;
        interval += iv / reps;
        stall += o.stall_s / after / reps;
        totals[r] = total_n + (double)(target - n) * iv;
        var += o.var_sum_s2 * (target > n ? (double)target / n : 1.0) / reps; /* as simulate_all */
    }
    out->step_s = interval;
    out->stall_s = stall;
    if (target <= 0)
        return EC_OK;
    epoch_spread(totals, reps, var, out);
    if (settle && in->persistent && in->worker_start_s > 0) {
        /* startup_once's first epoch (workers started one by one) must settle within m too */
        eci_pipe_in first = quiet;
        first.persistent = 0;
        eci_pipe_run_out a;
        int rc = run_direct(ctx, &first, m, 0, m, 0, &a);
        if (rc != EC_OK || !settled_in(in, &a, m)) {
            *applies = 0;
            return rc;
        }
    }
    return startup_once(ctx, in, m, 1, &out->startup_once_s);
}

/* 1 and *rc when a closed form applied, 0 when the epoch must be simulated. */
static int closed_form(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out, int *rc)
{
    *rc = EC_OK;
    if (in->force_des || !one_padded_length(in) || in->batch < 1 || in->seq < 1 || in->cores < 1)
        return 0;
    steady k = steady_of(in);
    int w = in->num_workers;
    if (w == 0) {
        closed_in_loop(in, &k, out);
        return 1;
    }
    long n;
    int reps;
    sim_plan(in, &n, &reps);
    long window = (long)w * in->prefetch_factor, m = window + w + 2;
    double pin = in->pin_thread ? k.pin : 0;
    if (in->prefetch_factor < 1 || w + (in->pin_thread ? 1 : 0) + 1 > in->cores || m >= n)
        return 0;
    int settle = 0; /* 0: proven from the warm step; 1: from a settled start (pin queue) */
    if (!cpu_within(in, &k, k.wall - (double)window * pin)) {
        if (!in->pin_thread || !cpu_within(in, &k, k.wall - pin))
            return 0;
        settle = 1;
    }
    int applies;
    *rc = closed_workers(ctx, in, &k, m, settle, &applies, out);
    if (*rc == EC_OK && !applies) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    return 1;
}

int eci_pipe_simulate(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (closed_form(ctx, in, out, &rc))
        return rc;
    return simulate_all(ctx, in, out);
}
