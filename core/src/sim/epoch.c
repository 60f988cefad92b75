/*
 * epoch.c: the input pipeline and the epoch around the step model (docs/DESIGN.md 3.2, 3.5):
 * the step (stages.c, step.c) at the padded lengths the loader draws, the DataLoader's
 * settings (eci_pipe_in for pipeline.c's simulation), the evaluation step, then the step, the
 * epoch and the run assembled from the simulated epoch, torch.compile's compilations on top.
 * A measured gpu_step_s without a model stands in for the step model.
 */
#include "catalog/consts.h"
#include "sim/epoch.h"
#include "sim/predict.h"
#include "sim/step.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Knots of the step model over the padded length: an attention-quadratic, tile-stepped curve
 * is within a few per cent of linear between 16 knots; a numerical choice, not a model constant. */
#define PAD_KNOTS 16

/* ---- the input pipeline and the epoch (pipeline.c simulates them; docs/DESIGN.md 3.2, 3.5) - */
/* gpu_step_s without a model: one block of kernels per micro-step, ended by the loop's sync. */
static void measured_step(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res, double *host_s)
{
    memset(res, 0, sizeof *res);
    const eci_host *host = r->host;
    int ga = cfg->grad_accum;
    timeline t = {0};
    for (int m = 0; m < ga; m++) {
        gpu_op(&t, host->dispatch_fwd_s, cfg->gpu_step_s / ga, 1, 1);
        sync_host(&t);
    }
    host_work(&t, CAUSE_DISPATCH, host->step_overhead_s);
    sync_host(&t);
    /* forward : backward as the backward GEMM factor says (the split is only descriptive) */
    double bwd = eci_const(ctx, EC_C_bwd_gemm_flop_factor);
    res->step_s = t.cpu;
    res->gpu_busy_s = t.busy;
    res->cpu_issue_s = *host_s = t.host_busy;
    res->kernels_per_step = t.kernels;
    res->breakdown.forward_s = t.busy / (1.0 + bwd);
    res->breakdown.backward_s = t.busy - res->breakdown.forward_s;
    res->breakdown.cpu_overhead_s = t.gap[CAUSE_DISPATCH];
    res->memory.capacity_bytes = r->gpu->memory_bytes;
    res->memory.fits = 1;
}

/* Padded lengths at which the step model is evaluated: seq alone for max_length padding,
 * else up to PAD_KNOTS whole lengths spread evenly from the shortest sample to the cap. */
static size_t pad_knots(const ec_config *cfg, const eci_lengths *l, int seq, double *len)
{
    if (l == NULL || cfg->padding == EC_PAD_MAX_LENGTH) {
        len[0] = seq;
        return 1;
    }
    int lo = l->min_len, span = seq - lo;
    int k = span + 1 < PAD_KNOTS ? span + 1 : PAD_KNOTS;
    size_t n = 0;
    for (int i = 0; i < k; i++) {
        double v = k > 1 ? floor(lo + (double)i * span / (k - 1) + 0.5) : lo;
        if (n == 0 || v > len[n - 1])
            len[n++] = v;
    }
    return n;
}

/* Series the pipeline averages for the result beyond the ones that drive it. */
enum { S_FWD = ECI_S_MECHANICS, S_BWD, S_OPT, S_H2D_EXPOSED, S_CPU, S_KERNELS, S_FLOP, S_PEAK, N_SERIES };

static void pipe_loader(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_lengths *l,
                        double input_bytes, eci_pipe_in *in)
{
    const eci_host *host = r->host;
    double per_gpu = (double)cfg->batch_per_gpu * r->dp; /* samples per micro-step over the replicas */
    in->steps = cfg->dataset_samples > 0 ? (long)ceil(cfg->dataset_samples / per_gpu) : 0;
    /* dp: one process (one DataLoader) builds the global batch; ddp and the other multi-process
     * strategies: one DataLoader per GPU process, their workers sharing the host's cores */
    int dp = r->strategy == EC_STRATEGY_DP;
    int procs = dp || r->strategy == EC_STRATEGY_SINGLE ? 1 : r->per_node < cfg->num_gpus ? r->per_node : cfg->num_gpus;
    in->batch = dp ? cfg->batch_per_gpu * cfg->num_gpus : cfg->batch_per_gpu;
    in->num_workers = cfg->num_workers;
    in->prefetch_factor = cfg->prefetch_factor;
    in->persistent = cfg->persistent_workers;
    in->worker_start_s = host->worker_start_s;
    in->cores = host->cores / procs > 1 ? host->cores / procs : 1;
    in->pin_memory = cfg->pin_memory;
    in->pin_thread = cfg->pin_memory && cfg->num_workers > 0;
    in->padding = cfg->padding;
    in->lengths = l;
    in->seq = r->seq > 0 ? r->seq : 1;
    /* HF LengthGroupedSampler: mega-batches of min(50, N / (4 b)) batches, at least one */
    double mult = eci_const(ctx, EC_C_bucket_mega_batch_mult);
    if (cfg->dataset_samples > 0 && floor(cfg->dataset_samples / (4.0 * cfg->batch_per_gpu)) < mult)
        mult = floor(cfg->dataset_samples / (4.0 * cfg->batch_per_gpu));
    in->mega_batch = (int)(mult >= 1 ? mult : 1) * cfg->batch_per_gpu;
    in->seed = cfg->seed;
    in->cpu_cv = eci_const(ctx, EC_C_loader_cpu_cv);
    if (cfg->data_synthetic)
        return; /* no input pipeline cost at all */
    in->pin_s = input_bytes / host->memcpy_bytes_per_s;
    if (cfg->sample_cpu_s >= 0) {
        in->sample_fixed_s = cfg->sample_cpu_s;
        return;
    }
    in->sample_fixed_s = host->collate_per_sample_s;
    if (cfg->tokenize == EC_TOKENIZE_ON_THE_FLY && r->text)
        in->sample_token_s = 1.0 / (cfg->tokenizer == EC_TOKENIZER_PYTHON ? host->python_tokenizer_tokens_per_s
                                                                           : host->fast_tokenizer_tokens_per_s);
}

/* eci_pipe_prepare, also handing back cfg resolved (*resolved, as eci_resolve gives it) and
 * the calibration it used (*calib_out: fixed, the context's, or the priors in *buf). */
int eci_epoch_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, eci_pipe_in *in, ec_result *top,
                      eci_lengths **lengths, eci_resolved *resolved, eci_params *buf, const eci_params **calib_out)
{
    /* every field but the knots' arrays (~3 KB), which are filled below as far as they are
     * read (n_knots lengths of n_series series) */
    memset(in, 0, offsetof(eci_pipe_in, knot_len));
    in->n_series = 0;
    memset(&in->seed, 0, sizeof *in - offsetof(eci_pipe_in, seed));
    /* top: written whole by the step of the first knot (eci_step_model and measured_step zero it) */
    *lengths = NULL;
    eci_resolved r;
    int rc = eci_resolve(ctx, cfg, &r);
    if (rc != EC_OK)
        return rc;
    *resolved = r;
    if (fixed != NULL)
        *calib_out = fixed;
    else if ((rc = eci_params_ref(ctx, cfg, buf, calib_out)) != EC_OK)
        return rc;
    const eci_params *calib = *calib_out;
    if (cfg->lengths[0] != '\0' && (rc = eci_lengths_parse(ctx, cfg->lengths, r.seq, lengths)) != EC_OK)
        return rc;
    const eci_lengths *l = *lengths;
    int ga = cfg->grad_accum;
    in->n_knots = pad_knots(cfg, l, r.seq, in->knot_len);
    in->n_series = N_SERIES;

    /* gpu_step_s with a model: scale every kernel so that the step at the typical padded
     * length takes what was measured (communication excluded). */
    double scale = 1.0, host_s;
    ec_result kr;
    if (cfg->gpu_step_s > 0 && r.net != NULL) {
        double ref = l != NULL && cfg->padding != EC_PAD_MAX_LENGTH ? eci_lengths_padded_mean(l, cfg->batch_per_gpu)
                                                                     : r.seq;
        if ((rc = eci_stages_model(ctx, cfg, &r, calib, ref, 1.0, &kr, &host_s)) != EC_OK)
            goto fail;
        double compute_s = kr.gpu_busy_s - kr.breakdown.comm_s;
        scale = compute_s > 0 ? cfg->gpu_step_s / compute_s : 1.0;
    }
    /* each knot is stepped into top: the last, the longest padded length, stays (the memory peak) */
    for (size_t k = 0; k < in->n_knots; k++) {
        if (r.net == NULL)
            measured_step(ctx, cfg, &r, top, &host_s);
        else if ((rc = eci_stages_model(ctx, cfg, &r, calib, in->knot_len[k], scale, top, &host_s)) != EC_OK)
            goto fail;
        const ec_breakdown *b = &top->breakdown;
        double v[N_SERIES] = {
            [ECI_S_WALL] = top->step_s, [ECI_S_HOST] = host_s, [ECI_S_BUSY] = top->gpu_busy_s,
            [ECI_S_H2D] = b->h2d_s, [ECI_S_COMM] = b->comm_s, [S_FWD] = b->forward_s, [S_BWD] = b->backward_s,
            [S_OPT] = b->optimizer_s, [S_H2D_EXPOSED] = b->h2d_s, [S_CPU] = b->cpu_overhead_s,
            [S_KERNELS] = top->kernels_per_step, [S_FLOP] = top->flop_per_step,
            [S_PEAK] = top->mfu_frac > 0 ? top->flop_per_step / (top->mfu_frac * top->step_s) : 0};
        for (int j = 0; j < N_SERIES; j++)
            in->knot_val[j][k] = j == S_PEAK ? v[j] : v[j] / ga; /* per micro-step */
    }
    if (r.net != NULL && cfg->eval_samples > 0) { /* at the typical padded length of an evaluation batch */
        int eb = cfg->eval_batch > 0 ? cfg->eval_batch : cfg->batch_per_gpu;
        double len = l != NULL && cfg->padding != EC_PAD_MAX_LENGTH ? eci_lengths_padded_mean(l, eb) : r.seq;
        if ((rc = eci_step_eval(ctx, cfg, &r, calib, len, scale, &top->eval_step_s)) != EC_OK)
            goto fail;
    }
    pipe_loader(ctx, cfg, &r, l, r.net != NULL ? r.input_bytes : 0, in);
    return EC_OK;
fail:
    eci_lengths_free(ctx, *lengths);
    *lengths = NULL;
    return rc;
}

int eci_pipe_prepare(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, eci_pipe_in *in, ec_result *top,
                     eci_lengths **lengths)
{
    eci_resolved r;
    eci_params buf;
    const eci_params *calib;
    return eci_epoch_prepare(ctx, cfg, fixed, in, top, lengths, &r, &buf, &calib);
}

/* Bottleneck: compute when kernels fill most of the step, else the largest idle cause; and
 * the input pipeline whenever the GPU waits on it for more than loader_frac of the step
 * (constants.csv loader_bottleneck_frac: a GPU idle 36% of the step on the loader is
 * input-bound even though its kernels fill the other 64%). */
static ec_bottleneck bottleneck(const ec_breakdown *b, double step_s, double loader_frac)
{
    double idle[] = {b->cpu_overhead_s, b->loader_s, b->h2d_s, b->comm_s};
    ec_bottleneck which[] = {EC_BOTTLENECK_CPU, EC_BOTTLENECK_INPUT, EC_BOTTLENECK_H2D, EC_BOTTLENECK_COMM};
    ec_bottleneck out = EC_BOTTLENECK_COMPUTE;
    double compute_s = b->forward_s + b->backward_s + b->optimizer_s, worst = 0;
    for (int i = 0; i < 4; i++)
        if (idle[i] > worst) {
            worst = idle[i];
            if (idle[i] > compute_s)
                out = which[i];
        }
    if (out == EC_BOTTLENECK_COMPUTE && step_s > 0 && b->loader_s > loader_frac * step_s)
        out = EC_BOTTLENECK_INPUT;
    return out;
}

/* The step from the simulated epoch: means over the padded lengths it drew. */
static void assemble_step(const ec_config *cfg, const eci_resolved *r, const eci_lengths *l, const eci_pipe_in *in,
                          const eci_pipe_epoch *ep, double loader_frac, ec_result *res)
{
    double ga = cfg->grad_accum;
    const double *m = ep->mean_s;
    /* A known epoch: the step an epoch really averages (what tqdm shows), pipeline fill and
     * worker start-up included; they are loader wait.  Unknown: the steady state. */
    double fill = in->steps > 0 ? ep->epoch_s / in->steps - ep->step_s : 0;
    if (fill < 0)
        fill = 0;
    res->step_s = (ep->step_s + fill) * ga;
    res->breakdown.forward_s = m[S_FWD] * ga;
    res->breakdown.backward_s = m[S_BWD] * ga;
    res->breakdown.optimizer_s = m[S_OPT] * ga;
    res->breakdown.h2d_s = m[S_H2D_EXPOSED] * ga;
    res->breakdown.comm_s = m[ECI_S_COMM] * ga;
    res->breakdown.loader_s = (ep->stall_s + fill) * ga;
    /* a loop slowed by workers sharing its cores shows as CPU overhead */
    double contention = ep->step_s - ep->stall_s - m[ECI_S_WALL];
    res->breakdown.cpu_overhead_s = (m[S_CPU] + (contention > 0 ? contention : 0)) * ga;
    res->gpu_busy_s = m[ECI_S_BUSY] * ga;
    res->cpu_issue_s = m[ECI_S_HOST] * ga;
    res->kernels_per_step = m[S_KERNELS] * ga;
    res->flop_per_step = m[S_FLOP] * ga;
    res->samples_per_s = (double)cfg->batch_per_gpu * ga * r->dp / res->step_s;
    /* tokens: the padded length each sample runs at (dynamic padding: the mean batch maximum) */
    double per_sample = !r->text ? 1.0
                        : l != NULL && cfg->padding != EC_PAD_MAX_LENGTH ? eci_lengths_padded_mean(l, cfg->batch_per_gpu)
                                                                         : (double)r->seq;
    res->tokens_per_s = res->samples_per_s * per_sample;
    res->gpu_s_per_token = res->tokens_per_s > 0 ? cfg->num_gpus / res->tokens_per_s : 0;
    res->mfu_frac = m[S_PEAK] > 0 ? res->flop_per_step / (res->step_s * m[S_PEAK]) : 0;
    double util = res->gpu_busy_s / res->step_s;
    res->gpu_util_frac = util > 1.0 ? 1.0 : util;
    res->bottleneck = bottleneck(&res->breakdown, res->step_s, loader_frac);
}

/* One compilation of the step by torch.compile in cfg's mode, CUDA graph capture included. */
static double compile_time_s(const ec_ctx *ctx, const ec_config *cfg)
{
    if (cfg->compile == EC_COMPILE_OFF)
        return 0;
    double s = eci_const(ctx, EC_C_compile_s);
    if (cfg->compile == EC_COMPILE_MAX_AUTOTUNE || cfg->compile == EC_COMPILE_MAX_AUTOTUNE_NO_CUDAGRAPHS)
        s *= eci_const(ctx, EC_C_compile_max_autotune_factor);
    if (cuda_graphs(cfg))
        s += eci_const(ctx, EC_C_compile_cudagraph_capture_s);
    return s;
}

/* All of torch.compile's compilations in a run: one, one recompile once shapes change
 * (automatic_dynamic_shapes: dynamic padding or a ragged last batch), and evaluation (eval mode,
 * no grad) is a graph of its own. */
static double compile_once_s(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_pipe_epoch *ep)
{
    if (cfg->compile == EC_COMPILE_OFF)
        return 0;
    double per_gpu = (double)cfg->batch_per_gpu * r->dp;
    int ragged = cfg->dataset_samples > 0 && fmod(cfg->dataset_samples, per_gpu) != 0;
    int shapes = ep->distinct_lengths > 1 || ragged;
    return compile_time_s(ctx, cfg) *
           (1.0 + shapes * eci_const(ctx, EC_C_compile_dynamic_recompiles) + (cfg->eval_samples > 0));
}

/* Epoch = simulated training + evaluation + checkpoint writes; run = epochs + one-time costs. */
static void assemble_epoch(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_pipe_in *in,
                           const eci_lengths *l, const eci_pipe_epoch *ep, ec_result *res)
{
    if (cfg->dataset_samples <= 0)
        return;
    double per_gpu = (double)cfg->batch_per_gpu * r->dp; /* samples per micro-step over the replicas */
    res->steps_per_epoch = ceil(cfg->dataset_samples / (per_gpu * cfg->grad_accum));
    double extra = 0;
    if (cfg->eval_samples > 0) { /* eci_step_eval: each replica evaluates its share, eval_batch at a time */
        double eval_batch = cfg->eval_batch > 0 ? cfg->eval_batch : cfg->batch_per_gpu;
        double evals = cfg->eval_every_steps > 0 ? floor(res->steps_per_epoch / cfg->eval_every_steps) : 1;
        double startup = cfg->num_workers > 0 && !cfg->persistent_workers && cfg->data_synthetic == EC_DATA_REAL
                             ? r->host->worker_start_s : 0; /* a new iterator starts its workers */
        res->eval_s = evals * (ceil(cfg->eval_samples / (eval_batch * r->dp)) * res->eval_step_s + startup);
        extra += res->eval_s;
    }
    if (cfg->checkpoints_per_epoch > 0) /* torch.save of weights and optimizer states */
        extra += cfg->checkpoints_per_epoch * (res->memory.weights_bytes + res->memory.optimizer_bytes) /
                 eci_const(ctx, EC_C_checkpoint_write_bytes_per_s);
    res->epoch_s = ep->epoch_s + extra;
    res->epoch_p10_s = ep->p10_s + extra;
    res->epoch_p50_s = ep->p50_s + extra;
    res->epoch_p90_s = ep->p90_s + extra;
    double util = ep->busy_s * in->steps / ep->epoch_s; /* nvidia-smi over the epoch, fill included */
    res->gpu_util_frac = util > 1.0 ? 1.0 : util;
    double once = ep->startup_once_s;
    if (r->text && cfg->tokenize == EC_TOKENIZE_UPFRONT && !cfg->data_synthetic && cfg->sample_cpu_s < 0) {
        double tokens = l != NULL ? l->mean : in->seq; /* datasets.map(batched=True) on every core */
        double rate = cfg->tokenizer == EC_TOKENIZER_PYTHON ? r->host->python_tokenizer_tokens_per_s
                                                            : r->host->fast_tokenizer_tokens_per_s;
        once += cfg->dataset_samples * tokens / (rate * r->host->cores);
    }
    once += compile_once_s(ctx, cfg, r, ep);
    res->run_s = res->epoch_s * cfg->epochs + once;
}

/* The step and the epoch from the simulated epoch ep of in, torch.compile's compilations on
 * top (epoch.h). */
void eci_epoch_assemble(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_lengths *l,
                        const eci_pipe_in *in, const eci_pipe_epoch *ep, ec_result *res)
{
    assemble_step(cfg, r, l, in, ep, eci_const(ctx, EC_C_loader_bottleneck_frac), res);
    assemble_epoch(ctx, cfg, r, in, l, ep, res);
    res->first_step_s = res->step_s + compile_time_s(ctx, cfg);
    if (res->epoch_s > 0)
        res->train_s = res->epoch_s * cfg->epochs + compile_once_s(ctx, cfg, r, ep);
}
