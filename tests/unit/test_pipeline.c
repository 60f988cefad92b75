/*
 * test_pipeline.c: the discrete-event epoch simulation (core/src/sim/pipeline.c) against closed
 * forms where they exist -- the loop loading its own batches, a single worker slower or faster
 * than the step, an always-ready loader, worker start-up, two workers sharing one core --
 * determinism under a seed, p10-p90 coverage on synthetic data, the padded-length mean against
 * lengths.c's closed form, and bucketing; then ec_predict end to end (seed 003's shape).
 */
#include "ec_test.h"
#include "internal.h"
#include "catalog/consts.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pipeline with deterministic costs: batch CPU c, step wall T (host part H), GPU busy B. */
static void base(eci_pipe_in *in, int workers, double c, double T, double H, double B)
{
    memset(in, 0, sizeof *in);
    in->batch = 1;
    in->num_workers = workers;
    in->prefetch_factor = 2;
    in->persistent = 1;
    in->cores = 16;
    in->sample_fixed_s = c;
    in->seq = 128;
    in->padding = EC_PAD_MAX_LENGTH;
    in->n_knots = 1;
    in->knot_len[0] = 128;
    in->n_series = ECI_S_MECHANICS;
    in->knot_val[ECI_S_WALL][0] = T;
    in->knot_val[ECI_S_HOST][0] = H;
    in->knot_val[ECI_S_BUSY][0] = B;
    in->seed = 7;
}

static eci_pipe_run_out run(ec_ctx *ctx, const eci_pipe_in *in, long n)
{
    eci_pipe_run_out o;
    int rc = eci_pipe_run(ctx, in, n, 0, NULL, &o);
    if (rc != EC_OK)
        fail_msg("eci_pipe_run: %s", ec_ctx_errmsg(ctx));
    return o;
}

/* num_workers = 0: every step loads then runs, total = N (c + T); stall per step = c. */
static void test_in_loop_loading(void **state)
{
    ec_ctx *ctx = *state;
    eci_pipe_in in;
    base(&in, 0, 0.2, 0.05, 0.001, 0.049);
    eci_pipe_run_out o = run(ctx, &in, 25);
    assert_rel(o.total_s, 25 * (0.2 + 0.05), EC_TOL_CLOSED_FORM);
    assert_rel(o.stall_s, 24 * 0.2, EC_TOL_CLOSED_FORM); /* steps after the first */
    assert_rel(o.busy_s, 25 * 0.049, EC_TOL_CLOSED_FORM);
}

/* One worker slower than the step (c > T): batch j is ready at (j+1) c, the loop follows it:
 * total = N c + T.  Faster (c < T): the first batch fills the pipe, then the steps run back
 * to back: total = c + N T. */
static void test_single_worker(void **state)
{
    ec_ctx *ctx = *state;
    eci_pipe_in in;
    base(&in, 1, 0.2, 0.05, 0.001, 0.05);
    eci_pipe_run_out o = run(ctx, &in, 40);
    assert_rel(o.total_s, 40 * 0.2 + 0.05, EC_TOL_CLOSED_FORM);
    /* every steady step waits c - T */
    assert_rel(o.stall_s / (40 - 1 - o.warm_step), 0.2 - 0.05, EC_TOL_CLOSED_FORM);
    base(&in, 1, 0.01, 0.05, 0.001, 0.05);
    o = run(ctx, &in, 40);
    assert_rel(o.total_s, 0.01 + 40 * 0.05, EC_TOL_CLOSED_FORM);
    assert_abs(o.stall_s, 0, EC_TOL_CLOSED_FORM);
}

/* A loader that is always ready (no CPU cost): the compute-bound closed form N T. */
static void test_always_ready(void **state)
{
    ec_ctx *ctx = *state;
    eci_pipe_in in;
    base(&in, 4, 0, 0.03, 0.002, 0.028);
    eci_pipe_run_out o = run(ctx, &in, 100);
    assert_rel(o.total_s, 100 * 0.03, EC_TOL_CLOSED_FORM);
    assert_abs(o.stall_s, 0, EC_TOL_CLOSED_FORM);
    base(&in, 0, 0, 0.03, 0.002, 0.028);
    o = run(ctx, &in, 100);
    assert_rel(o.total_s, 100 * 0.03, EC_TOL_CLOSED_FORM);
}

/* Workers that start with the epoch: one worker, start s, c < T: total = s + c + N T. */
static void test_worker_start(void **state)
{
    ec_ctx *ctx = *state;
    eci_pipe_in in;
    base(&in, 1, 0.01, 0.05, 0.001, 0.05);
    in.persistent = 0;
    in.worker_start_s = 0.3;
    eci_pipe_run_out o = run(ctx, &in, 40);
    assert_rel(o.total_s, 0.3 + 0.01 + 40 * 0.05, EC_TOL_CLOSED_FORM);
    /* what persistent workers save once: eci_pipe_simulate's startup_once is that start */
    in.persistent = 1;
    in.steps = 40;
    eci_pipe_epoch ep;
    assert_int_equal(eci_pipe_simulate(ctx, &in, &ep), EC_OK);
    assert_rel(ep.startup_once_s, 0.3, EC_TOL_CLOSED_FORM);
}

/* Two workers on one core, the loop needing no CPU (H = 0): each batch takes 2c of wall time
 * but two are built at once, so batches 2k and 2k+1 are ready at 2(k+1)c and run back to
 * back (T < c): total = N c + 2 T. */
static void test_oversubscribed(void **state)
{
    ec_ctx *ctx = *state;
    eci_pipe_in in;
    base(&in, 2, 0.1, 0.02, 0, 0.02);
    in.cores = 1;
    eci_pipe_run_out o = run(ctx, &in, 20);
    assert_rel(o.total_s, 20 * 0.1 + 2 * 0.02, EC_TOL_CLOSED_FORM);
    /* with a loop that needs the CPU, sharing slows the steps too: more workers than cores
     * make the epoch longer than with as many workers as cores */
    base(&in, 1, 0.1, 0.12, 0.1, 0.02);
    in.cores = 2;
    double one = run(ctx, &in, 50).total_s;
    in.num_workers = 8;
    double eight = run(ctx, &in, 50).total_s;
    assert_true(eight > one);
}

/* Same seed, same numbers (bit for bit); another seed, other numbers. */
static void test_deterministic(void **state)
{
    ec_ctx *ctx = *state;
    eci_pipe_in in;
    base(&in, 3, 0.05, 0.02, 0.002, 0.018);
    in.cpu_cv = 0.3;
    in.batch = 8;
    in.steps = 500;
    eci_pipe_epoch a, b, c;
    assert_int_equal(eci_pipe_simulate(ctx, &in, &a), EC_OK);
    assert_int_equal(eci_pipe_simulate(ctx, &in, &b), EC_OK);
    assert_memory_equal(&a, &b, sizeof a);
    in.seed = 8;
    assert_int_equal(eci_pipe_simulate(ctx, &in, &c), EC_OK);
    assert_true(c.epoch_s != a.epoch_s);
}

/* p10-p90 covers 80% of independent epochs: the empirical path (short epochs, many replicas)
 * and the batch-means normal path (long epochs).  Epochs from streams the prediction did not
 * use; binomial sd for M epochs is sqrt(0.16 / M). */
static void coverage(ec_ctx *ctx, eci_pipe_in *in, long steps, int m, double tol)
{
    in->steps = steps;
    eci_pipe_epoch ep;
    assert_int_equal(eci_pipe_simulate(ctx, in, &ep), EC_OK);
    assert_true(ep.p10_s < ep.p50_s && ep.p50_s < ep.p90_s);
    int inside = 0;
    for (int i = 0; i < m; i++) {
        eci_pipe_run_out o;
        assert_int_equal(eci_pipe_run(ctx, in, steps, 100000 + (uint64_t)i, NULL, &o), EC_OK);
        inside += o.total_s >= ep.p10_s && o.total_s <= ep.p90_s;
    }
    assert_abs((double)inside / m, 0.8, tol);
}

static void test_interval_coverage(void **state)
{
    ec_ctx *ctx = *state;
    eci_pipe_in in;
    base(&in, 1, 0.2, 0.05, 0.001, 0.05); /* input-bound: the loader's spread is the epoch's */
    in.cpu_cv = 0.25;
    coverage(ctx, &in, 25, 400, 4 * 0.02);  /* 100 replicas: empirical quantiles */
    base(&in, 2, 0.08, 0.03, 0.001, 0.03);
    in.cpu_cv = 0.25;
    coverage(ctx, &in, 2000, 100, 4 * 0.04); /* 2 replicas: batch-means normal interval */
}

/* Dynamic padding: the simulated mean padded length matches the closed form within 2%;
 * bucketing (group_by_length) pads less than plain dynamic padding. */
static void test_padding(void **state)
{
    ec_ctx *ctx = *state;
    eci_lengths *l;
    assert_int_equal(eci_lengths_parse(ctx, "lognormal(80,0.9)", 512, &l), EC_OK);
    eci_pipe_in in;
    base(&in, 0, 0, 0.01, 0.001, 0.01);
    in.batch = 16;
    in.seq = 512;
    in.lengths = l;
    in.padding = EC_PAD_DYNAMIC;
    in.steps = 3000;
    eci_pipe_epoch ep;
    assert_int_equal(eci_pipe_simulate(ctx, &in, &ep), EC_OK);
    assert_rel(ep.padded_len, eci_lengths_padded_mean(l, 16), 0.02);
    assert_rel(ep.padded_sq, eci_lengths_padded_sq_mean(l, 16), 0.02);
    assert_true(ep.distinct_lengths > 10);
    in.padding = EC_PAD_BUCKETED;
    in.mega_batch = 50 * 16;
    eci_pipe_epoch bk;
    assert_int_equal(eci_pipe_simulate(ctx, &in, &bk), EC_OK);
    assert_true(bk.padded_len < 0.8 * ep.padded_len);
    /* sorted mega-batches pad each batch to about its samples' own lengths: above the mean */
    assert_true(bk.padded_len > l->mean);
    eci_lengths_free(ctx, l);
}

/* ---- ec_predict end to end ------------------------------------------------------------------ */
static void predict(ec_ctx *ctx, const char *words, ec_result *res)
{
    ec_config cfg;
    char buf[512];
    ec_config_init(&cfg);
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        if (ec_config_set_word(ctx, &cfg, w) != EC_OK)
            fail_msg("%s: %s", w, ec_ctx_errmsg(ctx));
    if (ec_predict(ctx, &cfg, res) != EC_OK)
        fail_msg("ec_predict(%s): %s", words, ec_ctx_errmsg(ctx));
}

/* Seed 003's shape: batch 1, 0.2 s of loader CPU per sample, 50 ms of GPU work.  In the loop:
 * step = load + GPU + host overheads, input-bound, GPU busy = 0.05 / step.  Four workers
 * supply 4 / 0.2 = 20 batches/s, the GPU takes 20/s: the step comes down to about 50 ms. */
static void test_measured_gpu_step(void **state)
{
    ec_ctx *ctx = *state;
    ec_result before, after;
    const char *base_words = "gpu=rtx4090 host=workstation batch_per_gpu=1 gpu_step_s=0.05 sample_cpu_s=0.2 "
                             "dataset_samples=25 epochs=200";
    predict(ctx, base_words, &before);
    assert_int_equal(before.bottleneck, EC_BOTTLENECK_INPUT);
    assert_rel(before.gpu_busy_s, 0.05, EC_TOL_CLOSED_FORM);
    assert_rel(before.step_s, 0.25, 0.02); /* 0.2 + 0.05 + dispatch and bookkeeping */
    assert_rel(before.gpu_util_frac, 0.05 / before.step_s, 0.03);
    assert_true(before.warnings & EC_WARN_MEMORY_UNKNOWN);
    char words[512];
    snprintf(words, sizeof words, "%s num_workers=4 pin_memory=1 persistent_workers=1 prefetch_factor=2", base_words);
    predict(ctx, words, &after);
    assert_true(after.step_s < 0.07 && after.step_s >= 0.05);
    /* epoch: without the per-sample spread 25 batches from 4 workers take ceil(25 / 4) x 0.2 s,
     * then the last step; the spread (in-order delivery waits for the slowest) only adds */
    assert_true(after.epoch_s >= (7 * 0.2 + 0.05) * (1 - EC_TOL_SIMULATION));
    assert_true(after.epoch_s < (7 * 0.2 + 0.05) * 1.15);
    assert_true(after.run_s > 200 * after.epoch_s); /* + the workers' one start-up */
    assert_true(after.epoch_p10_s <= after.epoch_p50_s && after.epoch_p50_s <= after.epoch_p90_s);
}

/* Dynamic padding on a skewed distribution is cheaper than padding to max_length; compile
 * fuses kernels (a shorter epoch) and adds its compile and one recompile (the shapes change)
 * to the run: run - epoch grows by exactly 2 x compile_s. */
static void test_dynamic_vs_max_length(void **state)
{
    ec_ctx *ctx = *state;
    ec_result maxlen, dyn, comp;
    const char *w = "model=bert-base gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=32 seq_len=512 "
                    "lengths=lognormal(100,0.6) dataset_samples=32000";
    char words[512];
    predict(ctx, w, &maxlen);
    snprintf(words, sizeof words, "%s padding=dynamic", w);
    predict(ctx, words, &dyn);
    /* Model FLOPs are linear (GEMMs) plus quadratic (attention) in the padded length P, so
     * dynamic / max_length lies between E[P^2] / 512^2 and E[P] / 512 (closed forms; P <= 512),
     * up to the simulation's sampling error */
    eci_lengths *l;
    assert_int_equal(eci_lengths_parse(ctx, "lognormal(100,0.6)", 512, &l), EC_OK);
    double ratio = dyn.flop_per_step / maxlen.flop_per_step;
    assert_true(ratio <= eci_lengths_padded_mean(l, 32) / 512 * (1 + 2 * EC_TOL_SIMULATION));
    assert_true(ratio >= eci_lengths_padded_sq_mean(l, 32) / (512.0 * 512) * (1 - 2 * EC_TOL_SIMULATION));
    eci_lengths_free(ctx, l);
    assert_true(dyn.step_s < 0.8 * maxlen.step_s);
    snprintf(words, sizeof words, "%s padding=bucketed", w);
    ec_result bucketed;
    predict(ctx, words, &bucketed);
    assert_true(bucketed.step_s < dyn.step_s);
    snprintf(words, sizeof words, "%s padding=dynamic compile=1", w);
    predict(ctx, words, &comp);
    assert_true(comp.epoch_s < dyn.epoch_s);
    assert_rel((comp.run_s - comp.epoch_s) - (dyn.run_s - dyn.epoch_s), 2.0 * eci_const(ctx, EC_C_compile_s),
               EC_TOL_CLOSED_FORM);
}


/* The closed forms (eci_pipe_simulate without force_des) against the full simulation over
 * random configurations (fixed seed).  Workers that keep up: the same numbers up to rounding,
 * since only the steps the closed form provably cannot change are skipped.  The loop loading
 * its own batches: the closed form is the exact mean and variance, the simulation a Monte-Carlo
 * estimate from n steps x replicas, so they agree within SE_MULT standard errors of it. */
#define SE_MULT 5.0      /* standard errors of the simulation's estimate allowed */
#define SPREAD_REL 0.7   /* p90 - p10: the batch-means sd over 20 blocks is off by ~1/sqrt(38) = 16%
                          * (sd of a sample sd), the empirical 10%/90% quantiles of >= 30 replicas
                          * by more; 0.7 is about 4 of the former */
static void test_closed_form_vs_des(void **state)
{
    ec_ctx *ctx = *state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20240607);
    eci_lengths *l;
    assert_int_equal(eci_lengths_parse(ctx, "lognormal(200,0.5)", 512, &l), EC_OK);
    static const long steps[] = {0, 40, 300, 5000, 25000};
    static const int workers[] = {0, 0, 1, 2, 4, 8};
    int closed_in_loop = 0, closed_workers = 0, closed_pin_queue = 0, simulated = 0;
    for (int i = 0; i < 200; i++) {
        eci_pipe_in in;
        double T = 0.005 + 0.1 * gsl_rng_uniform(rng);
        base(&in, workers[gsl_rng_uniform_int(rng, 6)], 0, T, T * gsl_rng_uniform(rng), T * 0.9);
        in.batch = 1 + (int)gsl_rng_uniform_int(rng, 32);
        in.seq = 512;
        in.knot_len[0] = 512;
        in.steps = steps[gsl_rng_uniform_int(rng, 5)];
        in.prefetch_factor = 1 + (int)gsl_rng_uniform_int(rng, 3);
        in.persistent = (int)gsl_rng_uniform_int(rng, 2);
        in.worker_start_s = 0.2 * gsl_rng_uniform(rng);
        in.cores = 2 + (int)gsl_rng_uniform_int(rng, 16);
        in.pin_memory = i % 2 || gsl_rng_uniform_int(rng, 2);
        in.pin_thread = in.pin_memory && in.num_workers > 0;
        /* pin copies small enough for the window bound, or up to 0.6 T: only the pin-queue
         * proof (C + P <= T, settled in the simulated start) can cover those */
        in.pin_s = (i % 2 ? 0.6 : 0.02) * T * gsl_rng_uniform(rng);
        in.cpu_cv = gsl_rng_uniform_int(rng, 3) == 0 ? 0 : 0.3 * gsl_rng_uniform(rng);
        /* per-batch CPU from far below the step to several steps */
        double cpu = T * 3 * gsl_rng_uniform(rng) * gsl_rng_uniform(rng);
        in.batch_fixed_s = 0.2 * cpu;
        in.sample_fixed_s = 0.4 * cpu / in.batch;
        if (gsl_rng_uniform_int(rng, 2)) { /* tokens cost CPU: lengths drawn, padded to seq */
            in.lengths = l;
            in.sample_token_s = 0.4 * cpu / (in.batch * l->mean);
        }
        in.seed = (uint64_t)i;
        eci_pipe_epoch fast, des;
        assert_int_equal(eci_pipe_simulate(ctx, &in, &fast), EC_OK);
        in.force_des = 1;
        assert_int_equal(eci_pipe_simulate(ctx, &in, &des), EC_OK);
        assert_false(des.closed_form);
        if (!fast.closed_form) {
            simulated++;
            assert_memory_equal(&fast, &des, sizeof fast); /* the same simulation */
            continue;
        }
        assert_rel(fast.busy_s, des.busy_s, EC_TOL_CLOSED_FORM);
        assert_rel(fast.padded_len, des.padded_len, EC_TOL_EXACT);
        assert_int_equal(fast.distinct_lengths, des.distinct_lengths);
        for (size_t k = 0; k < in.n_series; k++)
            assert_rel(fast.mean_s[k], des.mean_s[k], EC_TOL_EXACT);
        if (in.num_workers > 0) { /* the steps it skips all take T: rounding only */
            closed_workers++;
            closed_pin_queue += fast.closed_form == 2;
            assert_rel(fast.step_s, des.step_s, EC_TOL_CLOSED_FORM);
            assert_abs(fast.stall_s, des.stall_s, EC_TOL_CLOSED_FORM * T);
            assert_rel(fast.epoch_s, des.epoch_s, EC_TOL_CLOSED_FORM);
            assert_abs(fast.p10_s, des.p10_s, EC_TOL_CLOSED_FORM * des.epoch_s + 1e-6 * T);
            assert_abs(fast.p90_s, des.p90_s, EC_TOL_CLOSED_FORM * des.epoch_s + 1e-6 * T);
            assert_abs(fast.startup_once_s, des.startup_once_s, EC_TOL_CLOSED_FORM * (1 + des.startup_once_s));
            continue;
        }
        closed_in_loop++;
        /* sd of a batch's CPU cost: X fixed (no token cost) or bounded by its largest value */
        double x_max = in.batch * in.sample_fixed_s + (double)in.batch * in.seq * in.sample_token_s;
        double sd_c = x_max * (in.cpu_cv / sqrt(in.batch) + (in.lengths != NULL ? 1.0 : 0.0));
        double n_eff = (double)(des.simulated_steps - 1) * des.replicas;
        assert_abs(fast.step_s, des.step_s, SE_MULT * sd_c / sqrt(n_eff) + EC_TOL_CLOSED_FORM * T);
        assert_abs(fast.stall_s, des.stall_s, SE_MULT * sd_c / sqrt(n_eff) + EC_TOL_CLOSED_FORM * T);
        if (in.steps > 0) {
            double se_epoch = sd_c * in.steps / sqrt(n_eff + 1);
            assert_abs(fast.epoch_s, des.epoch_s, SE_MULT * se_epoch + EC_TOL_CLOSED_FORM * des.epoch_s);
            double width = fast.p90_s - fast.p10_s;
            assert_abs(width, des.p90_s - des.p10_s, SPREAD_REL * width + SE_MULT * se_epoch / 10 + 1e-9);
        }
    }
    /* every path exercised */
    assert_true(closed_in_loop >= 10);
    assert_true(closed_workers >= 10);
    assert_true(closed_pin_queue >= 10);
    assert_true(simulated >= 10);
    eci_lengths_free(ctx, l);
    gsl_rng_free(rng);
}

/* eci_pipe_run_direct's recurrence against the simulation's events, every field of the run,
 * over random runs where nothing shares a core (fixed seed): workers from far behind the loop
 * to far ahead, with and without a pin thread, persistent or started one by one, and equal
 * batch costs (cpu_cv 0, so workers finish together and the pin thread's order is the
 * simulation's within one event).  Times agree up to rounding: the recurrence adds each cost
 * once where the events add them in slices. */
static void test_direct_vs_events(void **state)
{
    ec_ctx *ctx = *state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20261124);
    int settled = 0, behind = 0;
    for (int i = 0; i < 400; i++) {
        eci_pipe_in in;
        double T = 0.005 + 0.1 * gsl_rng_uniform(rng);
        base(&in, 1 + (int)gsl_rng_uniform_int(rng, 8), 0, T, T * gsl_rng_uniform(rng), T * 0.9);
        in.batch = 1 + (int)gsl_rng_uniform_int(rng, 32);
        in.prefetch_factor = 1 + (int)gsl_rng_uniform_int(rng, 3);
        in.persistent = (int)gsl_rng_uniform_int(rng, 2);
        in.worker_start_s = gsl_rng_uniform_int(rng, 4) == 0 ? 0 : 0.2 * gsl_rng_uniform(rng);
        in.pin_memory = (int)gsl_rng_uniform_int(rng, 2);
        in.pin_thread = in.pin_memory;
        in.cores = in.num_workers + in.pin_thread + 1 + (int)gsl_rng_uniform_int(rng, 3);
        in.pin_s = T * gsl_rng_uniform(rng) * gsl_rng_uniform(rng);
        in.cpu_cv = gsl_rng_uniform_int(rng, 3) == 0 ? 0 : 0.3 * gsl_rng_uniform(rng);
        double cpu = T * 3 * in.num_workers * gsl_rng_uniform(rng) * gsl_rng_uniform(rng);
        in.batch_fixed_s = 0.2 * cpu;
        in.sample_fixed_s = 0.8 * cpu / in.batch;
        in.seed = (uint64_t)i;
        long n = 2 + (long)gsl_rng_uniform_int(rng, 120);
        eci_pipe_run_out d, e;
        assert_int_equal(eci_pipe_run_direct(ctx, &in, n, (uint64_t)(i % 3), &d), EC_OK);
        assert_int_equal(eci_pipe_run(ctx, &in, n, (uint64_t)(i % 3), NULL, &e), EC_OK);
        assert_int_equal(d.steps, e.steps);
        assert_int_equal(d.warm_step, e.warm_step);
        assert_int_equal(d.settled_from, e.settled_from);
        assert_rel(d.total_s, e.total_s, EC_TOL_EXACT);
        assert_rel(d.first_end_s, e.first_end_s, EC_TOL_EXACT);
        assert_rel(d.warm_end_s, e.warm_end_s, EC_TOL_EXACT);
        assert_rel(d.busy_s, e.busy_s, EC_TOL_EXACT);
        /* sums of differences of times near total_s: rounding of total_s per step */
        assert_abs(d.stall_s, e.stall_s, EC_TOL_EXACT * e.total_s * (double)n);
        assert_abs(d.var_sum_s2, e.var_sum_s2, EC_TOL_EXACT * e.total_s * e.total_s * (double)n);
        settled += e.settled_from >= 0;
        behind += e.stall_s > T * n / 4;
    }
    /* both regimes exercised: a settled pin queue, and workers that keep the loop waiting */
    assert_true(settled >= 50);
    assert_true(behind >= 50);
    gsl_rng_free(rng);
}

/* Two batches built at the same instant by different rounds: worker 0's second batch (batch
 * 2) and worker 1's first (batch 1, its worker started c later), each costing c with workers
 * started c apart, both end at 3c.  The simulation queues them for the pin thread in worker
 * order, batch 2 first, so batch 1 is pinned 2P after 3c and the loop, done with batch 0 long
 * before, takes it then, and batch 2 right after: total = 3c + 2P + 2T for three steps (in
 * batch order batch 1 would be taken at 3c + P and batch 2 at 3c + 2P: 3c + 2P + T). */
static void test_direct_pin_order(void **state)
{
    ec_ctx *ctx = *state;
    const double c = 0.01, P = c / 4, T = c / 10;
    eci_pipe_in in;
    base(&in, 2, c, T, T / 2, T / 2);
    in.persistent = 0;
    in.worker_start_s = c;
    in.pin_memory = in.pin_thread = 1;
    in.pin_s = P;
    in.seq = in.knot_len[0] = 128;
    eci_pipe_run_out d, e;
    assert_int_equal(eci_pipe_run_direct(ctx, &in, 3, 0, &d), EC_OK);
    assert_int_equal(eci_pipe_run(ctx, &in, 3, 0, NULL, &e), EC_OK);
    assert_rel(e.total_s, 3 * c + 2 * P + 2 * T, EC_TOL_EXACT);
    assert_rel(d.total_s, e.total_s, EC_TOL_EXACT);
}

static int setup(void **state)
{
    *state = ec_test_ctx();
    return 0;
}

/* eci_pipe_rng replays mt19937: for seeds taken in turn (more than it keeps, so some are seeded
 * again) the same integers, uniforms and gamma variates as a fresh gsl_rng_mt19937, also past
 * the draws it keeps (256 integers, then 512 uniforms and 64 gammas: over a thousand draws). */
static void test_rng_replay(void **state)
{
    ec_ctx *ctx = *state;
    const unsigned long seeds[] = {1, 42, 0x9e3779b97f4a7c15UL & 0xffffffffUL, 42, 7, 123456789, 1, 99, 42, 1};
    gsl_rng *ref = gsl_rng_alloc(gsl_rng_mt19937);
    assert_non_null(ref);
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        gsl_rng *r = eci_pipe_rng(ctx, seeds[k]);
        assert_non_null(r);
        gsl_rng_set(ref, seeds[k]);
        size_t draws = 40 + 300 * (k % 3); /* some runs end inside the kept draws, some past them */
        for (size_t i = 0; i < draws; i++)
            assert_int_equal(gsl_rng_get(r), gsl_rng_get(ref));
        for (size_t i = 0; i < 512; i++)
            assert_true(gsl_rng_uniform(r) == gsl_rng_uniform(ref));
        for (size_t i = 0; i < 64; i++)
            assert_true(gsl_ran_gamma(r, 3.5, 0.25) == gsl_ran_gamma(ref, 3.5, 0.25));
    }
    gsl_rng_free(ref);
}

static int teardown(void **state)
{
    ec_ctx_free(*state);
    return 0;
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_loop_loading),
        cmocka_unit_test(test_single_worker),
        cmocka_unit_test(test_always_ready),
        cmocka_unit_test(test_worker_start),
        cmocka_unit_test(test_oversubscribed),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_interval_coverage),
        cmocka_unit_test(test_padding),
        cmocka_unit_test(test_direct_vs_events),
        cmocka_unit_test(test_direct_pin_order),
        cmocka_unit_test(test_closed_form_vs_des),
        cmocka_unit_test(test_measured_gpu_step),
        cmocka_unit_test(test_dynamic_vs_max_length),
        cmocka_unit_test(test_rng_replay),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
