/*
 * predict.c: the whole prediction and its entry points (ec_predict, eci_predict,
 * ec_max_batch; docs/DESIGN.md 3).  The step model and the epoch's inputs (epoch.c, over
 * stages.c, step.c and the walks), the epoch's simulation (pipeline.c), their assembly, the
 * warnings (warnings.c), the price (price.c), the scaling efficiency against one GPU (kept in
 * a cache of references on the context), and the check that every figure is possible.
 * Inputs: the context's models/ tables and fitted parameters.
 */
#include "catalog/price.h"
#include "sim/epoch.h"
#include "sim/predict.h"
#include "sim/step.h"
#include "sim/warnings.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- the prediction ---------------------------------------------------------------------- */
int ec_predict(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    if (ctx == NULL || cfg == NULL || res == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_predict: NULL argument") : EC_EMISUSE;
    return eci_predict(ctx, cfg, NULL, res);
}

/* A run given as tokens or samples instead of epochs (train_tokens, train_samples): that many
 * at the steady rate, plus torch.compile's compilation of the first step (no epoch, no
 * evaluation, no upfront tokenization: their size is not known). */
static void add_run_length(const ec_config *cfg, ec_result *res)
{
    double s = 0;
    if (cfg->train_tokens > 0 && res->tokens_per_s > 0)
        s = cfg->train_tokens / res->tokens_per_s;
    else if (cfg->train_samples > 0 && res->samples_per_s > 0)
        s = cfg->train_samples / res->samples_per_s;
    if (s <= 0 || res->run_s > 0)
        return;
    double compile_s = res->first_step_s > res->step_s ? res->first_step_s - res->step_s : 0;
    res->run_s = res->train_s = s + compile_s;
}

/* What the epoch and the run cost to rent (price.c): the job's hourly price x their time. */
static int add_cost(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    eci_quote q;
    add_run_length(cfg, res);
    res->train_time_h = res->run_s / 3600.0;
    int rc = eci_price_quote(ctx, cfg, r->gpu, r->nodes, &q);
    if (rc != EC_OK)
        return rc;
    res->price_per_hour = q.per_hour;
    res->cost_per_epoch = res->epoch_s * q.per_hour / 3600.0;
    res->cost_run = res->run_s * q.per_hour / 3600.0;
    res->cost_usd = strcmp(q.currency, "USD") == 0 ? res->cost_run : 0;
    res->cost_per_million_tokens = res->tokens_per_s > 0 ? q.per_hour / 3600.0 * 1e6 / res->tokens_per_s : 0;
    eci_strlcpy(res->price_offer, q.offer, sizeof res->price_offer);
    eci_strlcpy(res->price_currency, q.per_hour > 0 ? q.currency : "", sizeof res->price_currency);
    return EC_OK;
}

/* The run's length comes from one of dataset_samples (x epochs), train_tokens, train_samples. */
static int check_run_length(ec_ctx *ctx, const ec_config *cfg)
{
    const char *given[3];
    int n = 0;
    if (cfg->dataset_samples > 0)
        given[n++] = "dataset_samples";
    if (cfg->train_tokens > 0)
        given[n++] = "train_tokens";
    if (cfg->train_samples > 0)
        given[n++] = "train_samples";
    if (n < 2)
        return EC_OK;
    return eci_error(ctx, EC_EINVAL, "%s and %s both give the run's length: give one of dataset_samples (with "
                     "epochs), train_tokens or train_samples", given[0], given[1]);
}

/* The multi-GPU figures of the step at the longest padded length (comm.c via eci_step_model). */
static void copy_multi_gpu(const ec_result *top, ec_result *res)
{
    res->hfu_frac = top->mfu_frac > 0 ? res->mfu_frac * top->hfu_frac / top->mfu_frac : 0;
    if (res->hfu_frac < res->mfu_frac) /* hardware FLOPs hold the model's: a rounding never puts it below */
        res->hfu_frac = res->mfu_frac;
    res->host_pinned_bytes = top->host_pinned_bytes;
    res->comm = top->comm;
    res->dp = top->dp;
    res->tp = top->tp;
    res->pp = top->pp;
    res->cp = top->cp;
    res->ep = top->ep;
    res->busbw_bytes_per_s = top->busbw_bytes_per_s;
    res->comm_total_s = top->comm_total_s;
    res->straggler_s = top->straggler_s;
    res->other_gpu_peak_bytes = top->other_gpu_peak_bytes;
    /* GPU 0 alone runs the optimizer under dp; the others are busy for the rest */
    res->other_gpu_busy_s = res->gpu_busy_s - (top->gpu_busy_s - top->other_gpu_busy_s);
}

static int predict_full(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res, int reference,
                        eci_resolved *r);

/* A sweep over layouts, GPU counts or networks divides by the same one-GPU throughput again and
 * again: the context keeps the last few, keyed by the one-GPU config and the calibration it
 * was predicted with (byte for byte: a false miss only costs a prediction). */
#define REF_CACHE_ENTRIES 8
struct eci_ref_cache {
    struct {
        ec_config cfg;
        eci_params calib;
        double samples_per_s;
        int used;
    } e[REF_CACHE_ENTRIES];
    unsigned next;
};

void eci_predict_ctx_free(ec_ctx *ctx)
{
    eci_free(ctx, ctx->ref_cache, sizeof *ctx->ref_cache);
    ctx->ref_cache = NULL;
}

static int reference_samples_per_s(ec_ctx *ctx, const ec_config *one, const eci_params *fixed, double *out)
{
    eci_params buf;
    const eci_params *calib = fixed;
    int rc = fixed != NULL ? EC_OK : eci_params_ref(ctx, one, &buf, &calib);
    if (rc != EC_OK)
        return rc;
    if (ctx->ref_cache == NULL) {
        if ((rc = eci_ctx_on_free(ctx, eci_predict_ctx_free)) != EC_OK)
            return rc;
        if ((ctx->ref_cache = eci_calloc(ctx, 1, sizeof *ctx->ref_cache)) == NULL)
            return EC_ENOMEM;
    }
    struct eci_ref_cache *c = ctx->ref_cache;
    /* the fields a sweep varies first: the 2.7 KB memcmp of an entry not in the level-1 cache
     * costs some forty misses, and most entries differ in the batch or the sequence length */
    for (int i = 0; i < REF_CACHE_ENTRIES; i++)
        if (c->e[i].used && c->e[i].cfg.batch_per_gpu == one->batch_per_gpu &&
            c->e[i].cfg.seq_len == one->seq_len && c->e[i].cfg.grad_accum == one->grad_accum &&
            memcmp(&c->e[i].cfg, one, sizeof *one) == 0 && memcmp(&c->e[i].calib, calib, sizeof *calib) == 0) {
            *out = c->e[i].samples_per_s;
            return EC_OK;
        }
    ec_result r1;
    eci_resolved resolved1;
    if ((rc = predict_full(ctx, one, calib, &r1, 1, &resolved1)) != EC_OK)
        return rc;
    unsigned k = c->next++ % REF_CACHE_ENTRIES;
    c->e[k].cfg = *one;
    c->e[k].calib = *calib;
    c->e[k].samples_per_s = r1.samples_per_s;
    c->e[k].used = 1;
    *out = r1.samples_per_s;
    return EC_OK;
}

/* Scaling against the same config on one GPU, input pipeline included. */
static int scaling_efficiency(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res)
{
    res->single_gpu_samples_per_s = res->samples_per_s;
    res->scaling_efficiency_frac = 1.0;
    if (cfg->num_gpus <= 1)
        return EC_OK;
    ec_config one = *cfg;
    one.num_gpus = 1;
    one.nodes = 1;
    one.strategy = EC_STRATEGY_SINGLE;
    /* the whole model on the one GPU: no tensor, pipeline, context or expert split, no sharding */
    one.tp = one.pp = one.cp = one.ep = one.pp_chunks = 1;
    one.etp = 0;
    one.sequence_parallel = one.tp_comm_overlap = 0;
    one.pp_schedule = EC_PP_1F1B;
    one.pp_split = EC_PP_SPLIT_LAYERS;
    one.sharding = EC_SHARD_FULL;
    one.zero_stage = 0;
    one.zero_reduce = EC_ZERO_REDUCE_SCATTER;
    one.zero_shard_size = 0;
    one.offload = EC_OFFLOAD_NONE;
    one.reduce_dtype = EC_REDUCE_AUTO;
    /* no key counts as given: only warnings read that, and the reference's are not kept */
    memset(one.set_mask, 0, sizeof one.set_mask);
    double single;
    int rc = reference_samples_per_s(ctx, &one, fixed, &single);
    if (rc != EC_OK)
        return rc;
    res->single_gpu_samples_per_s = single;
    res->scaling_efficiency_frac = res->samples_per_s / (cfg->num_gpus * single);
    return EC_OK;
}

/* Was key `name` given explicitly?  By name: asked only on the rare results check_result
 * refuses or caps, so it needs no index of eci_key. */
static int given_by_name(const ec_config *cfg, const char *name)
{
    int i = ec_config_key_index(name);
    return i >= 0 && ec_config_is_set(cfg, (size_t)i);
}

/* Every figure check_result checks (all doubles): the field, its least and its greatest value. */
#define RESULT_CHECKS(X) \
    X(step_s, DBL_MIN, DBL_MAX) X(samples_per_s, DBL_MIN, DBL_MAX) X(epoch_s, 0, DBL_MAX) \
    X(run_s, 0, DBL_MAX) X(gpu_util_frac, 0, 1) X(gpu_busy_s, 0, DBL_MAX) X(cpu_issue_s, 0, DBL_MAX) \
    X(flop_per_step, 0, DBL_MAX) X(mfu_frac, 0, 1) X(kernels_per_step, 0, DBL_MAX) \
    X(steps_per_epoch, 0, DBL_MAX) X(epoch_p10_s, 0, DBL_MAX) X(epoch_p50_s, 0, DBL_MAX) \
    X(epoch_p90_s, 0, DBL_MAX) X(breakdown.forward_s, 0, DBL_MAX) X(breakdown.backward_s, 0, DBL_MAX) \
    X(breakdown.optimizer_s, 0, DBL_MAX) X(breakdown.h2d_s, 0, DBL_MAX) \
    X(breakdown.cpu_overhead_s, 0, DBL_MAX) X(breakdown.loader_s, 0, DBL_MAX) \
    X(breakdown.comm_s, 0, DBL_MAX) X(memory.weights_bytes, 0, DBL_MAX) X(memory.grads_bytes, 0, DBL_MAX) \
    X(memory.optimizer_bytes, 0, DBL_MAX) X(memory.cast_cache_bytes, 0, DBL_MAX) \
    X(memory.activations_bytes, 0, DBL_MAX) X(memory.workspace_bytes, 0, DBL_MAX) \
    X(memory.context_bytes, 0, DBL_MAX) X(memory.allocator_bytes, 0, DBL_MAX) \
    X(memory.peak_bytes, 0, DBL_MAX) X(memory.capacity_bytes, 0, DBL_MAX) \
    X(memory.allocated_bytes, 0, DBL_MAX) X(memory.reserved_bytes, 0, DBL_MAX) \
    X(memory.nvml_bytes, 0, DBL_MAX) X(single_gpu_samples_per_s, 0, DBL_MAX) \
    X(scaling_efficiency_frac, 0, DBL_MAX) X(busbw_bytes_per_s, 0, DBL_MAX) X(comm_total_s, 0, DBL_MAX) \
    X(straggler_s, 0, DBL_MAX) X(other_gpu_busy_s, 0, DBL_MAX) X(other_gpu_peak_bytes, 0, DBL_MAX) \
    X(step_p10_s, 0, DBL_MAX) X(step_p90_s, 0, DBL_MAX) X(price_per_hour, 0, DBL_MAX) \
    X(cost_per_epoch, 0, DBL_MAX) X(cost_run, 0, DBL_MAX) X(tokens_per_s, 0, DBL_MAX) \
    X(gpu_s_per_token, 0, DBL_MAX) X(hfu_frac, 0, DBL_MAX) X(host_pinned_bytes, 0, DBL_MAX) \
    X(comm.tp_s, 0, DBL_MAX) X(comm.cp_s, 0, DBL_MAX) X(comm.ep_s, 0, DBL_MAX) \
    X(comm.dp_reduce_s, 0, DBL_MAX) X(comm.shard_wait_s, 0, DBL_MAX) X(comm.overlap_s, 0, DBL_MAX) \
    X(comm.offload_s, 0, DBL_MAX) X(comm.pp_bubble_s, 0, DBL_MAX) X(comm.pp_p2p_s, 0, DBL_MAX) \
    X(eval_s, 0, DBL_MAX) X(eval_step_s, 0, DBL_MAX) X(first_step_s, 0, DBL_MAX) X(train_s, 0, DBL_MAX) \
    X(train_time_h, 0, DBL_MAX) X(cost_usd, 0, DBL_MAX) X(cost_per_million_tokens, 0, DBL_MAX)

/* Every figure of a result is finite and physically possible, or the prediction is refused
 * (issue 20): no NaN, infinity or MFU above 100% reaches a user.  The message names the field
 * and the keys given that can drive it (a rate, a time, a measured step, a profile). */
static double field_value(const ec_result *res, size_t off)
{
    double v;
    memcpy(&v, (const char *)res + off, sizeof v);
    return v;
}

static int check_result(ec_ctx *ctx, const ec_config *cfg, int fitting, ec_result *res)
{
    /* MFU above 1 from the model's own rates alone (no measured step, no profile, no parameters
     * being fitted, which a profile would then hold): the peak it is measured against can sit
     * below what some kernels reach (an emulated precision with a changed memory system); the
     * figure is capped, since no step beats the peak. */
    if (res->mfu_frac > 1 && !fitting && !given_by_name(cfg, "gpu_step_s") && !given_by_name(cfg, "profile"))
        res->mfu_frac = 1;
    static const char *const suspects[] = {"gpu_step_s", "busbw_gbyte_per_s", "network_gbit_per_s", "sample_cpu_s",
                                           "dataset_samples", "eval_samples", "checkpoints_per_epoch",
                                           "loop_ops_per_sample", "loop_syncs_per_sample", "profile", "prices",
                                           "train_tokens", "train_samples", "price_per_gpu_hour"};
    /* every field at once, without a branch (straight-line code, each field's bounds constants).
     * A field in [0, DBL_MAX], most of them, by its bits u: the sign bit is set for a negative
     * number, and u + 2^52 carries into it when the exponent is all ones (an infinity or a
     * NaN), so the sign bit of the OR of u | (u + 2^52) over them is clear when all are finite
     * and >= 0 (integer ORs: no floating-point latency chain).  -0.0 sets it too, and is
     * let through by the search below.  The others: a NaN fails both comparisons, an infinity
     * one of them (every bound is finite). */
    const uint64_t exponent_lsb = UINT64_C(1) << 52;
    int ok = 1;
    uint64_t bits = 0;
#define IN_RANGE(field, lo, hi)                                                                  \
    if ((lo) == 0 && (hi) == DBL_MAX) {                                                          \
        uint64_t u_;                                                                             \
        memcpy(&u_, &res->field, sizeof u_);                                                     \
        bits |= u_ | (u_ + exponent_lsb);                                                        \
    } else {                                                                                     \
        ok &= (res->field >= (lo)) & (res->field <= (hi));                                       \
    }
    RESULT_CHECKS(IN_RANGE)
#undef IN_RANGE
    ok &= (int)(bits >> 63) == 0;
    if (ok)
        return EC_OK;
    /* then, only for a refusal, the first field out of range, from a table of the same checks */
    static const struct { const char *name; size_t off; double lo, hi; } f[] = {
#define ENTRY(field, lo, hi) {#field, offsetof(ec_result, field), lo, hi},
        RESULT_CHECKS(ENTRY)
#undef ENTRY
    };
    size_t i = 0, n = sizeof f / sizeof f[0];
    double v = 0;
    while (i < n && (v = field_value(res, f[i].off), isfinite(v) && v >= f[i].lo && v <= f[i].hi))
        i++;
    if (i == n) /* only a -0.0 set the sign bit above */
        return EC_OK;
    char keys[EC_ERRMSG_MAX / 2] = "";
    size_t len = 0;
    for (size_t k = 0; k < sizeof suspects / sizeof suspects[0]; k++) {
        int idx = ec_config_key_index(suspects[k]);
        char value[EC_PATH_MAX];
        if (idx < 0 || !ec_config_is_set(cfg, (size_t)idx) || ec_config_get(cfg, suspects[k], value, sizeof value) != EC_OK)
            continue;
        int w = snprintf(keys + len, sizeof keys - len, "%s%s=%.40s", len ? ", " : "", suspects[k], value);
        if (w > 0 && (size_t)w < sizeof keys - len)
            len += (size_t)w;
    }
    const char *what = !isfinite(v) ? "is not a finite number" : v > f[i].hi ? "is above" : "is below";
    char bound[48] = "";
    if (isfinite(v))
        snprintf(bound, sizeof bound, " %g", v > f[i].hi ? f[i].hi : f[i].lo);
    if (strcmp(f[i].name, "mfu_frac") == 0)
        return eci_error(ctx, EC_EDOM, "the step's %.4g FLOP in %.4g s would be %.0f%% of the GPU's peak (MFU above "
                         "100%%): %s", res->flop_per_step, res->step_s, 100 * res->mfu_frac,
                         len ? keys : "the model's own rates are wrong here (please report this config)");
    return eci_error(ctx, EC_EDOM, "the prediction's %s (%g) %s%s: refused; %s%s", f[i].name, v, what, bound,
                     len ? "it follows from " : "no key given drives it (please report this config)", keys);
}

int eci_predict(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res)
{
    eci_resolved r;
    return predict_full(ctx, cfg, fixed, res, 0, &r);
}

int eci_predict_resolved(ec_ctx *ctx, const ec_config *cfg, ec_result *res, ec_config *resolved)
{
    eci_resolved r;
    int rc = predict_full(ctx, cfg, NULL, res, 0, &r);
    if (rc == EC_OK && resolved != NULL)
        eci_resolved_config(cfg, &r, resolved);
    return rc;
}

/* The prediction; reference: only the one-GPU throughput a scaling efficiency divides by is
 * wanted (no warnings, no cost, no scaling of its own).  *r: the resolution of cfg it predicted
 * with (set once cfg resolved). */
static int predict_full(ec_ctx *ctx, const ec_config *cfg, const eci_params *fixed, ec_result *res, int reference,
                        eci_resolved *r)
{
    memset(res, 0, sizeof *res);
    int rc0 = reference ? EC_OK : check_run_length(ctx, cfg);
    if (rc0 != EC_OK)
        return rc0;
    /* eci_pipe_prepare zeroes it first thing */
    eci_pipe_in *in = eci_scratch_raw(ctx, ECI_SCRATCH_PREDICT_IN, 1, sizeof *in);
    if (in == NULL)
        return EC_ENOMEM;
    eci_lengths *l = NULL;
    ec_result top;
    eci_pipe_epoch ep;
    eci_params buf;
    const eci_params *calib = NULL; /* the model's own error (profile error_log_sd) widens the simulated spread */
    int rc = eci_epoch_prepare(ctx, cfg, fixed, in, &top, &l, r, &buf, &calib);
    if (rc == EC_OK)
        rc = eci_pipe_simulate(ctx, in, &ep);
    if (rc == EC_OK) {
        res->memory = top.memory;
        res->eval_step_s = top.eval_step_s;
        res->warnings = top.warnings;
        /* the text and its terminator (res is zeroed past it, as top is) */
        memcpy(res->warning_text, top.warning_text, strlen(top.warning_text) + 1);
        eci_epoch_assemble(ctx, cfg, r, l, in, &ep, res);
        if (!reference)
            eci_warn_all(ctx, cfg, r, res);
        copy_multi_gpu(&top, res);
        /* the model's held-out error: wider on an architecture the fit has no runs of, wider
         * still there when host-bound (so after eci_epoch_assemble set the breakdown) */
        double sd = eci_calibration_sd(ctx, cfg, r, calib, ec_result_host_util_frac(res), reference ? NULL : res);
        if (res->epoch_s > 0)
            eci_interval_widen_sd(sd, res->epoch_p50_s, &res->epoch_p10_s, &res->epoch_p90_s);
        /* the step's interval: only the model's own held-out error (a steady step has no spread) */
        res->step_p10_s = res->step_p90_s = res->step_s;
        eci_interval_widen_sd(sd, res->step_s, &res->step_p10_s, &res->step_p90_s);
        if (!reference)
            rc = add_cost(ctx, cfg, r, res);
    }
    eci_lengths_free(ctx, l);
    /* after the scratch is done with: the one-GPU prediction reuses it */
    if (rc == EC_OK && !reference)
        rc = scaling_efficiency(ctx, cfg, fixed, res);
    /* fixed: parameters being fitted (calibrate.c), which a profile will hold; a reference
     * prediction passes the parameters in use whatever they are */
    return rc == EC_OK ? check_result(ctx, cfg, fixed != NULL && !reference, res) : rc;
}

/* Peak memory of cfg alone: the step model at the longest padded length, as ec_predict's
 * memory, without simulating the epoch (max_batch asks only this, many times). */
static int predict_memory(ec_ctx *ctx, const ec_config *cfg, ec_memory *out)
{
    eci_resolved r;
    eci_params calib;
    int rc = eci_setup_resolve(ctx, cfg, &r, &calib);
    if (rc != EC_OK)
        return rc;
    if (r.net == NULL) /* gpu_step_s without a model: memory is not predicted */
        return eci_error(ctx, EC_EINVAL, "max_batch needs a model: gpu_step_s alone does not predict memory");
    ec_result step;
    double host_s;
    if ((rc = eci_stages_model(ctx, cfg, &r, &calib, r.seq, 1.0, &step, &host_s)) != EC_OK)
        return rc;
    *out = step.memory;
    return EC_OK;
}

int ec_max_batch(ec_ctx *ctx, const ec_config *cfg, int limit, int *out_batch)
{
    if (ctx == NULL || cfg == NULL || out_batch == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_max_batch: NULL argument") : EC_EMISUSE;
    *out_batch = 0;
    if (limit <= 0)
        limit = 65536;
    ec_config c = *cfg;
    ec_memory mem = {0}; /* filled by predict_memory when it succeeds */
    /* Peak memory grows with the batch, so bisect on fits over [lo fits, hi does not]. */
    c.batch_per_gpu = 1;
    int rc = predict_memory(ctx, &c, &mem);
    if (rc != EC_OK)
        return rc;
    if (!mem.fits)
        return EC_OK;
    int lo = 1, hi = limit + 1;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        c.batch_per_gpu = mid;
        if ((rc = predict_memory(ctx, &c, &mem)) != EC_OK)
            return rc;
        if (mem.fits)
            lo = mid;
        else
            hi = mid;
    }
    *out_batch = lo;
    return EC_OK;
}

double ec_result_host_util_frac(const ec_result *res)
{
    if (res == NULL || !(res->step_s > 0))
        return 1;
    const ec_breakdown *b = &res->breakdown;
    double wait = (b->cpu_overhead_s + b->loader_s + b->h2d_s) / res->step_s;
    return wait < 0 ? 1 : wait > 1 ? 0 : 1 - wait;
}

const char *ec_bottleneck_name(ec_bottleneck b)
{
    static const char *const names[] = {"compute", "cpu", "input", "h2d", "comm"};
    return (unsigned)b < sizeof names / sizeof names[0] ? names[b] : "unknown";
}
