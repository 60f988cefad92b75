/*
 * optimize_candidates.c: the layout search's candidates (optimize.c runs them): the lists of
 * the keys not given, defaulted from the base resolved once on a probe layout (its network,
 * sequence length and node size); the strategies combined with their sharding or ZeRO stage;
 * candidate i's configuration, decoded from its number in the nesting order; and the
 * model-state bound that prunes a candidate before it is priced.
 */
#include "model/layout.h"
#include "model/memory.h"
#include "model/optim.h"
#include "search/optimize_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CANDIDATES 1000000        /* records held: about 200 bytes each */

/* ---- the candidates ------------------------------------------------------------------ */

static int is_moe(const eci_net *net)
{
    for (size_t i = 0; i < net->n_layers; i++)
        if (net->layers[i].kind == EC_LAYER_MOE)
            return 1;
    return 0;
}

static void add_value(list *l, const char *fmt, long v)
{
    if (l->n < MAX_VALUES)
        snprintf(l->values[l->n++], EC_NAME_MAX, fmt, v);
}

static void powers(list *l, long hi)
{
    for (long v = 1; v <= hi && l->n < MAX_VALUES; v *= 2)
        add_value(l, "%ld", v);
}

/* What the base must give (a global batch, a GPU), and its own gpu, num_gpus and precision
 * where the lists and the base leave them out. */
static int base_defaults(ec_optimize *o)
{
    ec_ctx *ctx = o->ctx;
    list *L = o->lists;
    if (!L[L_GB].given)
        return eci_error(ctx, EC_EINVAL, "optimize: give global_batch_tokens= (tokens per optimizer step) or "
                         "global_batch= (samples)");
    if (!L[L_GPU].given) {
        if (o->base.gpu[0] == '\0')
            return eci_error(ctx, EC_EINVAL, "optimize: key 'gpu' is required (one or several, `epochcast gpus`)");
        eci_strlcpy(L[L_GPU].values[0], o->base.gpu, EC_NAME_MAX);
        L[L_GPU].n = 1;
    }
    if (!L[L_NUM_GPUS].given) {
        L[L_NUM_GPUS].n = 0;
        add_value(&L[L_NUM_GPUS], "%ld", o->base.num_gpus);
    }
    /* Training at LLM scale is mixed precision: bf16 autocast unless the base says otherwise. */
    if (!ec_config_is_set(&o->base, (size_t)ec_config_key_index("precision"))) {
        int st = ec_config_set(ctx, &o->base, "precision", "amp_bf16");
        if (st != EC_OK)
            return st;
    }
    return EC_OK;
}

/* Resolve the base once (model, task, sequence length, the network) on a probe layout. */
static int resolve_probe(ec_optimize *o, eci_resolved *r)
{
    ec_ctx *ctx = o->ctx;
    ec_config probe = o->base;
    eci_strlcpy(probe.gpu, o->lists[L_GPU].values[0], sizeof probe.gpu);
    probe.batch_per_gpu = 1;
    probe.num_gpus = 1;
    probe.strategy = EC_STRATEGY_SINGLE;
    probe.tp = probe.pp = probe.cp = probe.ep = 1;
    probe.etp = 0;
    probe.pp_chunks = 1;
    probe.pp_schedule = EC_PP_1F1B;
    probe.pp_split = EC_PP_SPLIT_LAYERS;
    probe.sharding = EC_SHARD_FULL;
    probe.zero_stage = 0;
    probe.zero_reduce = EC_ZERO_REDUCE_SCATTER;
    probe.zero_shard_size = 0;
    int st = eci_resolve(ctx, &probe, r);
    if (st != EC_OK)
        return st;
    if (r->net == NULL)
        return eci_error(ctx, EC_EINVAL, "optimize: key 'model' is required");
    o->seq = r->seq > 0 ? r->seq : 1;
    return EC_OK;
}

/* The global batches in samples (given in tokens: divided by the sequence length). */
static int global_batches(ec_optimize *o)
{
    const list *L = o->lists;
    for (size_t i = 0; i < L[L_GB].n; i++) {
        double g = strtod(L[L_GB].values[i], NULL);
        if (o->gb_tokens) {
            if (fmod(g, (double)o->seq) != 0)
                return eci_error(o->ctx, EC_EINVAL, "optimize: global_batch_tokens=%s is not divisible by seq_len=%d: "
                                 "global_batch = global_batch_tokens / seq_len samples", L[L_GB].values[i], o->seq);
            g /= o->seq;
        }
        o->gb_samples[i] = g;
    }
    return EC_OK;
}

/* The lists not given, from the resolved base: its network's layers and experts, the GPUs per
 * node and the most GPUs searched. */
static void default_lists(ec_optimize *o, const eci_resolved *r)
{
    list *L = o->lists;
    int layers = eci_net_pipeline_layers(r->net);
    long max_gpus = 1;
    for (size_t i = 0; i < L[L_NUM_GPUS].n; i++)
        if (atol(L[L_NUM_GPUS].values[i]) > max_gpus)
            max_gpus = atol(L[L_NUM_GPUS].values[i]);
    int per_node = o->base.gpus_per_node > 0 ? o->base.gpus_per_node : r->per_node;
    if (per_node < 1)
        per_node = 8;
    if (!L[L_TP].given)
        powers(&L[L_TP], per_node < max_gpus ? per_node : max_gpus);
    if (!L[L_PP].given)
        powers(&L[L_PP], layers < max_gpus ? (layers > 0 ? layers : 1) : max_gpus);
    if (!L[L_CP].given) {
        add_value(&L[L_CP], "%ld", 1);
        for (long c = 2; c <= 8 && o->seq / c >= 4096 && c <= max_gpus; c *= 2)
            add_value(&L[L_CP], "%ld", c);
    }
    if (!L[L_EP].given) {
        if (is_moe(r->net))
            powers(&L[L_EP], 8 < max_gpus ? 8 : max_gpus);
        else
            add_value(&L[L_EP], "%ld", 1);
    }
    if (!L[L_STRATEGY].given) {
        if (max_gpus == 1) {
            eci_strlcpy(L[L_STRATEGY].values[L[L_STRATEGY].n++], "single", EC_NAME_MAX);
        } else {
            eci_strlcpy(L[L_STRATEGY].values[L[L_STRATEGY].n++], "ddp", EC_NAME_MAX);
            eci_strlcpy(L[L_STRATEGY].values[L[L_STRATEGY].n++], "fsdp", EC_NAME_MAX);
            eci_strlcpy(L[L_STRATEGY].values[L[L_STRATEGY].n++], "zero", EC_NAME_MAX);
        }
    }
    if (!L[L_SHARDING].given) {
        eci_strlcpy(L[L_SHARDING].values[L[L_SHARDING].n++], "full_shard", EC_NAME_MAX);
        eci_strlcpy(L[L_SHARDING].values[L[L_SHARDING].n++], "shard_grad_op", EC_NAME_MAX);
    }
    if (!L[L_ZERO].given)
        for (long z = 1; z <= 3; z++)
            add_value(&L[L_ZERO], "%ld", z);
    if (!L[L_SCHED].given) {
        eci_strlcpy(L[L_SCHED].values[L[L_SCHED].n++], "1f1b", EC_NAME_MAX);
        eci_strlcpy(L[L_SCHED].values[L[L_SCHED].n++], "interleaved", EC_NAME_MAX);
    }
    if (!L[L_MICRO].given)
        powers(&L[L_MICRO], 8);
    if (!L[L_CKPT].given) {
        eci_strlcpy(L[L_CKPT].values[L[L_CKPT].n++], "0", EC_NAME_MAX);
        eci_strlcpy(L[L_CKPT].values[L[L_CKPT].n++], "selective", EC_NAME_MAX);
        eci_strlcpy(L[L_CKPT].values[L[L_CKPT].n++], "1", EC_NAME_MAX);
    }
}

/* The combined strategies: each strategy, fsdp with each sharding, zero with each stage. */
static void combine_strategies(ec_optimize *o)
{
    const list *L = o->lists;
    o->n_strats = 0;
    for (size_t s = 0; s < L[L_STRATEGY].n; s++) {
        const char *name = L[L_STRATEGY].values[s];
        size_t n = strcmp(name, "fsdp") == 0 ? L[L_SHARDING].n : strcmp(name, "zero") == 0 ? L[L_ZERO].n : 1;
        for (size_t k = 0; k < n; k++) {
            strat *t = &o->strats[o->n_strats++];
            memset(t, 0, sizeof *t);
            eci_strlcpy(t->strategy, name, sizeof t->strategy);
            if (strcmp(name, "fsdp") == 0)
                eci_strlcpy(t->sharding, L[L_SHARDING].values[k], sizeof t->sharding);
            else if (strcmp(name, "zero") == 0)
                eci_strlcpy(t->zero, L[L_ZERO].values[k], sizeof t->zero);
        }
    }
}

/* The nesting's radices and the candidates' count (at most MAX_CANDIDATES), and whether the
 * model-state bound applies. */
static int count_candidates(ec_optimize *o)
{
    ec_ctx *ctx = o->ctx;
    /* The nesting (first slowest): gpu, num_gpus, gb, tp, pp, cp, ep, strategy, schedule, micro, ckpt. */
    double combos = 1;
    for (int l = 0; l < N_LISTS; l++) {
        o->radix[l] = l == L_STRATEGY ? o->n_strats : (l == L_SHARDING || l == L_ZERO) ? 1 : o->lists[l].n;
        combos *= (double)o->radix[l];
    }
    if (combos > MAX_CANDIDATES)
        return eci_error(ctx, EC_EINVAL, "optimize: %.0f candidates, more than %d: give fewer values to search "
                         "(tp=, pp=, batch_per_gpu=, strategy=, ...)", combos, MAX_CANDIDATES);
    o->n_combos = (size_t)combos;
    /* The model-state bound: not for LoRA (frozen base) or CPU offload (states in host memory). */
    o->bound = o->base.lora_r == 0 && o->base.offload == 0;
    if (o->bound && ec_model_params(ctx, o->base.model, o->base.task, &o->params) != EC_OK)
        o->bound = 0;
    return EC_OK;
}

/* The default lists and the combined strategies, once the base resolves. */
int eci_optimize_prepare(ec_optimize *o)
{
    eci_resolved r;
    int st = base_defaults(o);
    if (st == EC_OK)
        st = resolve_probe(o, &r);
    if (st == EC_OK)
        st = global_batches(o);
    if (st != EC_OK)
        return st;
    default_lists(o, &r);
    combine_strategies(o);
    return count_candidates(o);
}

/* Candidate i's value index at each level. */
void eci_optimize_decode(const ec_optimize *o, size_t i, size_t *idx)
{
    for (int l = N_LISTS; l-- > 0;) {
        idx[l] = i % o->radix[l];
        i /= o->radix[l];
    }
}

static int set_key(ec_ctx *ctx, ec_config *cfg, const char *key, const char *value)
{
    return value[0] != '\0' ? ec_config_set(ctx, cfg, key, value) : EC_OK;
}

/* Candidate i's configuration on ctx.  *skip: a combination that repeats another (a pipeline
 * schedule other than the first without a pipeline). */
int eci_optimize_build(const ec_optimize *o, ec_ctx *ctx, size_t i, ec_config *cfg, double *gb, int *skip, char *why,
                       size_t why_n)
{
    size_t idx[N_LISTS];
    eci_optimize_decode(o, i, idx);
    const list *L = o->lists;
    *cfg = o->base;
    *skip = 0;
    why[0] = '\0';
    int pp = atoi(L[L_PP].values[idx[L_PP]]);
    const char *sched = L[L_SCHED].values[idx[L_SCHED]];
    if (pp == 1 && idx[L_SCHED] > 0) {
        *skip = 1;
        return EC_OK;
    }
    const strat *s = &o->strats[idx[L_STRATEGY]];
    int st = EC_OK;
    st = st ? st : set_key(ctx, cfg, "gpu", L[L_GPU].values[idx[L_GPU]]);
    st = st ? st : set_key(ctx, cfg, "num_gpus", L[L_NUM_GPUS].values[idx[L_NUM_GPUS]]);
    st = st ? st : set_key(ctx, cfg, "tp", L[L_TP].values[idx[L_TP]]);
    st = st ? st : set_key(ctx, cfg, "pp", L[L_PP].values[idx[L_PP]]);
    st = st ? st : set_key(ctx, cfg, "cp", L[L_CP].values[idx[L_CP]]);
    st = st ? st : set_key(ctx, cfg, "ep", L[L_EP].values[idx[L_EP]]);
    st = st ? st : set_key(ctx, cfg, "strategy", s->strategy);
    st = st ? st : set_key(ctx, cfg, "sharding", s->sharding);
    st = st ? st : set_key(ctx, cfg, "zero_stage", s->zero);
    if (cfg->strategy != EC_STRATEGY_ZERO || cfg->zero_stage == 3) { /* ZeRO-1/2 candidates' keys only */
        cfg->zero_reduce = EC_ZERO_REDUCE_SCATTER;
        cfg->zero_shard_size = 0;
    }
    st = st ? st : set_key(ctx, cfg, "batch_per_gpu", L[L_MICRO].values[idx[L_MICRO]]);
    st = st ? st : set_key(ctx, cfg, "checkpointing", L[L_CKPT].values[idx[L_CKPT]]);
    if (pp == 1) /* the base's pp_split says how a pipeline splits: none here */
        cfg->pp_split = EC_PP_SPLIT_LAYERS;
    if (pp > 1) {
        st = st ? st : set_key(ctx, cfg, "pp_schedule", sched);
        if (st == EC_OK && cfg->pp_schedule == EC_PP_INTERLEAVED && cfg->pp_chunks < 2)
            st = set_key(ctx, cfg, "pp_chunks", "2");
        if (st == EC_OK && cfg->pp_schedule != EC_PP_INTERLEAVED && cfg->pp_chunks > 1)
            st = set_key(ctx, cfg, "pp_chunks", "1");
    }
    if (st != EC_OK)
        return st;
    *gb = o->gb_samples[idx[L_GB]];
    int model_par = cfg->tp * cfg->pp * cfg->cp;
    if (cfg->num_gpus % model_par != 0) /* eci_resolve says so too; the accumulation needs dp first */
        return EC_OK;
    double dp = cfg->num_gpus / model_par, per_step = dp * cfg->batch_per_gpu;
    if (fmod(*gb, per_step) != 0) {
        snprintf(why, why_n, "global batch %.0f samples is not divisible by dp x batch_per_gpu = %.0f x %d",
                 *gb, dp, cfg->batch_per_gpu);
        return EC_OK;
    }
    char accum[32];
    snprintf(accum, sizeof accum, "%.0f", *gb / per_step);
    return ec_config_set(ctx, cfg, "grad_accum", accum);
}

/* Model states per GPU, a lower bound of what the memory model allocates: the parameters split
 * over tp x pp (the average stage, at most the largest) and over ep; DDP (and FSDP no_shard)
 * replicate weights, gradients and optimizer states at the memory model's bytes per parameter;
 * ZeRO keeps 16-bit weights and gradients beside its fp32 partition (so at most 2 bytes each
 * counted), the optimizer states (and gradients from stage 2, weights at stage 3) over the dp
 * ranks; FSDP shards everything at rest (what it gathers comes and goes).  A sharding not
 * known here counts as fully sharded: a smaller bound prunes less, never a layout that fits.
 * Paged optimizer states live outside the GPU's allocator and do not count.
 * (Checked against ec_predict's allocated bytes over every priced layout of a few searches:
 * the bound stays below.) */
double eci_optimize_state_bound_bytes(ec_ctx *ctx, const ec_config *cfg, int dp, double params)
{
    double w, g, opt;
    eci_memory_param_bytes(ctx, cfg->precision, cfg->optimizer, &w, &g, &opt);
    eci_optim info;
    eci_optim_get(ctx, cfg->optimizer, &info);
    if (info.paged)
        opt = 0;
    double ws = dp, gs = dp, os = dp;
    if (cfg->strategy == EC_STRATEGY_SINGLE || cfg->strategy == EC_STRATEGY_DP || cfg->strategy == EC_STRATEGY_DDP ||
        (cfg->strategy == EC_STRATEGY_FSDP && cfg->sharding == EC_SHARD_NONE)) {
        ws = gs = os = 1;
    } else if (cfg->strategy == EC_STRATEGY_ZERO) {
        w = w < 2 ? w : 2;
        g = g < 2 ? g : 2;
        ws = cfg->zero_stage >= 3 ? dp : 1;
        gs = cfg->zero_stage >= 2 ? dp : 1;
    }
    double split = (double)cfg->tp * cfg->pp * cfg->ep;
    return params / split * (w / ws + g / gs + opt / os);
}

