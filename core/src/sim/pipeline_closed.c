/*
 * pipeline_closed.c: the input pipeline's epoch where the simulation can only settle one way
 * (modeling.md 5.3): the events of pipeline.c as per-batch recurrences where nothing shares a
 * core, persistent workers' start-up, and the closed forms of the steady state.  They must
 * equal the events (test_pipeline and test_direct_vs_events compare them); the inputs are
 * pipeline.c's, the eci_pipe_in that epoch.c fills.
 */
#include "sim/pipeline_sim.h"

#include <math.h>
#include <string.h>

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
        return eci_pipe_run_extended(ctx, in, n, stream, NULL, extend_to, step, out); /* it does not apply */
    memset(out, 0, sizeof *out);
    int rc = eci_pipe_check(ctx, in, n);
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
    if ((rc = eci_pipe_draw(ctx, in, n, stream, &bt)) != EC_OK)
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
    eci_pipe_summary(ends, taken, n, warm, extend_to, step, out);
    out->settled_from = settled;
    return EC_OK;
}

int eci_pipe_run_direct(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, eci_pipe_run_out *out)
{
    return run_direct(ctx, in, n, stream, n, 0, out);
}

/* Persistent workers start once per run: the first epoch minus a steady one, same stream,
 * over m steps (any m past both runs' start-up gives the same difference).  `recurrence`: the
 * runs as run_direct's recurrence where it applies (the closed forms), else the simulation's
 * events (simulate_all: its numbers to the bit, with or without force_des). */
int eci_pipe_startup_once(ec_ctx *ctx, const eci_pipe_in *in, long m, int recurrence, double *out)
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
    eci_pipe_plan(in, &n, &reps);
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
    eci_pipe_plan(in, &n, &reps);
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
    eci_pipe_spread(totals, reps, var, out);
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
    return eci_pipe_startup_once(ctx, in, m, 1, &out->startup_once_s);
}

/* 1 and *rc when a closed form applied, 0 when the epoch must be simulated. */
int eci_pipe_closed_form(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out, int *rc)
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
    eci_pipe_plan(in, &n, &reps);
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

