/*
 * optimize.c: the layout search (ec_optimize_*): every combination of the searched keys'
 * values (gpu, num_gpus, global batch, tp, pp, cp, ep, strategy with its sharding or ZeRO
 * stage, pipeline schedule, micro-batch, checkpointing) over a base configuration is a
 * candidate, numbered in that nesting order (the first slowest).  A candidate is pruned
 * before its step is priced when its degrees cannot divide the GPUs, the global batch or the
 * network (ec_predict's own layout checks, eci_resolve), or when its model states alone
 * (weights, gradients and optimizer states per GPU at the memory model's bytes per
 * parameter, a lower bound of the peak) exceed the GPU's memory; the rest are predicted
 * with ec_predict on worker threads (workers.c), each candidate's figures stored at its
 * number, so the ranking (goal, then number) is the same on any number of threads or
 * processes (part of parts, merged with ec_optimize_pack / ec_optimize_merge).  Why a rival
 * lost is read from its result's parts against the best's, per token trained.  Inputs: the
 * caller's configuration and lists; every figure comes from ec_predict.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "model/memory.h"
#include "model/optim.h"
#include "search/optimize.h"
#include "sim/predict.h"
#include "search/workers.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_VALUES 64                 /* values per searched key */
#define MAX_CANDIDATES 1000000        /* records held: about 200 bytes each */
#define CHUNK 64                      /* candidates a worker takes at once */
#define PART_BLOCK 256                /* candidates per block of a part (block b to part b % parts) */
#define PACK_MAGIC 0x45434f5054000001ull
#define DEFAULT_TOP 10
/* A rival that does not fit is listed when it would rank above the best and its peak is within
 * this factor of the capacity (a near miss: a smaller micro-batch or more sharding may fit). */
#define NEAR_MISS_PEAK_FRAC 1.25

enum { S_SKIP = 0, S_DIVIDE, S_MEMORY, S_REFUSED, S_PRICED, S_NOT_MINE };

/* A key searched over: its values as text (ec_config_set's form) and whether it was given. */
typedef struct list {
    const char *key;
    char values[MAX_VALUES][EC_NAME_MAX];
    size_t n;
    int given;
} list;

enum { L_GPU, L_NUM_GPUS, L_GB, L_TP, L_PP, L_CP, L_EP, L_STRATEGY, L_SHARDING, L_ZERO, L_SCHED, L_MICRO, L_CKPT,
       N_LISTS };
static const char *const list_keys[N_LISTS] = {"gpu", "num_gpus", "global_batch", "tp", "pp", "cp", "ep", "strategy",
                                               "sharding", "zero_stage", "pp_schedule", "batch_per_gpu",
                                               "checkpointing"};

/* A strategy with its sharding or ZeRO stage (the product of the strategy, sharding and
 * zero_stage lists, each sharding with fsdp and each stage with zero only). */
typedef struct strat {
    char strategy[16], sharding[16], zero[4];
} strat;

/* The figures of a priced candidate. */
typedef struct rec {
    int state;
    int fits;
    double tokens_per_s, step_s, mfu, hfu, peak_bytes, capacity_bytes, price_per_hour;
    double fwd_bwd_s, busy_s, straggler_s;
    ec_comm_parts comm;
} rec;

static const struct {
    const char *key, *help;
} keys[] = {
    {"gpu", "GPU types to search (ids of `epochcast gpus`) [the base's gpu]"},
    {"num_gpus", "GPU counts to search [the base's num_gpus]"},
    {"global_batch", "samples per optimizer step (one or several); or global_batch_tokens"},
    {"global_batch_tokens", "tokens per optimizer step (one or several): global_batch = tokens / seq_len"},
    {"tp", "tensor-parallel degrees [1,2,4,8 up to gpus_per_node]"},
    {"pp", "pipeline stages [powers of 2 up to num_gpus and the network's layers]"},
    {"cp", "context-parallel degrees [1, and 2, 4, 8 while seq_len / cp >= 4096]"},
    {"ep", "expert-parallel degrees [1; 1,2,4,8 for a mixture-of-experts network]"},
    {"strategy", "data-parallel strategies: ddp, fsdp, zero [ddp,fsdp,zero; single on one GPU]"},
    {"sharding", "FSDP shardings with strategy fsdp [full_shard,shard_grad_op]"},
    {"zero_stage", "ZeRO stages with strategy zero [1,2,3]"},
    {"pp_schedule", "pipeline schedules with pp > 1 [1f1b,interleaved]; interleaved uses pp_chunks (2 when not given)"},
    {"batch_per_gpu", "micro-batches per GPU [1,2,4,8]; grad_accum = global_batch / (dp x micro-batch)"},
    {"checkpointing", "activation checkpointing [0,selective,1]"},
    {"goal", "what ranks: tokens_per_s, train_time (needs train_tokens) or cost (price table) [tokens_per_s]"},
    {"train_tokens", "tokens to train: train_time and cost of the whole run [0: per million tokens]"},
    {"top", "layouts listed [10]"},
    {"threads", "threads that price (0: the cores available) [0]"},
    {"part", "this process's part of a search split over processes, 0-based [0]"},
    {"parts", "processes the search is split over [1]"},
};
#define N_KEYS (sizeof keys / sizeof keys[0])

struct ec_optimize {
    ec_ctx *ctx;
    ec_config base;
    list lists[N_LISTS];
    int gb_tokens;                /* global batch given in tokens */
    ec_optimize_goal goal;
    double train_tokens;
    int top, threads;
    size_t part, parts;
    /* set by run */
    int ran;
    int seq;                      /* the sequence length the global batch divides by */
    double gb_samples[MAX_VALUES];
    strat strats[MAX_VALUES * MAX_VALUES];
    size_t n_strats;
    size_t radix[N_LISTS];        /* values per nesting level (L_STRATEGY holds the combined list) */
    size_t n_combos;
    double params;                /* the network's parameters (0: no memory bound) */
    int bound;                    /* the model-state bound applies (no LoRA, no offload) */
    rec *recs;
    size_t n_recs_alloc;
    ec_optimize_stats stats;
    size_t first_divide_index;
    char first_divide[EC_ERRMSG_MAX];
    size_t *ranked, n_ranked, *no_fit, n_no_fit;
    /* workers */
    pthread_mutex_t lock;
    size_t next;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int ec_optimize_is_key(const char *key)
{
    for (size_t i = 0; key != NULL && i < N_KEYS; i++)
        if (strcmp(keys[i].key, key) == 0)
            return 1;
    return 0;
}

const char *ec_optimize_key_name(size_t i)
{
    return i < N_KEYS ? keys[i].key : NULL;
}

const char *ec_optimize_key_help(size_t i)
{
    return i < N_KEYS ? keys[i].help : NULL;
}

const char *ec_optimize_loss_name(ec_optimize_loss loss)
{
    static const char *const names[] = {"best", "does_not_fit", "exposed_comm", "pipeline_bubble",
                                        "recompute", "compute", "overhead", "price"};
    return (unsigned)loss < sizeof names / sizeof names[0] ? names[loss] : "?";
}

int ec_optimize_new(ec_ctx *ctx, const ec_config *base, ec_optimize **out)
{
    if (out != NULL)
        *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (base == NULL || out == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_optimize_new: NULL argument");
    ec_optimize *o = eci_calloc(ctx, 1, sizeof *o);
    if (o == NULL)
        return EC_ENOMEM;
    o->ctx = ctx;
    o->base = *base;
    for (int l = 0; l < N_LISTS; l++)
        o->lists[l].key = list_keys[l];
    o->top = DEFAULT_TOP;
    o->parts = 1;
    o->first_divide_index = (size_t)-1;
    pthread_mutex_init(&o->lock, NULL);
    *out = o;
    return EC_OK;
}

void ec_optimize_free(ec_optimize *o)
{
    if (o == NULL)
        return;
    ec_ctx *ctx = o->ctx;
    pthread_mutex_destroy(&o->lock);
    eci_free(ctx, o->recs, o->n_recs_alloc * sizeof *o->recs);
    eci_free(ctx, o->ranked, o->n_combos * sizeof *o->ranked);
    eci_free(ctx, o->no_fit, o->n_combos * sizeof *o->no_fit);
    eci_free(ctx, o, sizeof *o);
}

static int parse_count(ec_ctx *ctx, const char *key, const char *value, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end != '\0' || !(v >= lo && v <= hi) || v != floor(v))
        return eci_error(ctx, EC_EINVAL, "optimize: %s='%s' must be a whole number from %.0f to %.0f", key, value, lo,
                         hi);
    *out = v;
    return EC_OK;
}

/* Split a comma list into l, each value checked on the base through ec_config_set (config_key:
 * the key it is set as; NULL: a count checked by the caller). */
static int set_list(ec_optimize *o, list *l, const char *config_key, const char *value)
{
    ec_ctx *ctx = o->ctx;
    l->n = 0;
    const char *p = value;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= EC_NAME_MAX)
            return eci_error(ctx, EC_EINVAL, "optimize: %s='%s': %s", l->key, value,
                             len == 0 ? "an empty value in the list" : "a value too long");
        if (l->n == MAX_VALUES)
            return eci_error(ctx, EC_EINVAL, "optimize: %s: at most %d values", l->key, MAX_VALUES);
        memcpy(l->values[l->n], p, len);
        l->values[l->n][len] = '\0';
        if (config_key != NULL) {
            ec_config scratch = o->base;
            int st = ec_config_set(ctx, &scratch, config_key, l->values[l->n]);
            if (st != EC_OK)
                return st;
        } else {
            double v;
            int st = parse_count(ctx, l->key, l->values[l->n], 1, 1e15, &v);
            if (st != EC_OK)
                return st;
        }
        l->n++;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    l->given = 1;
    return EC_OK;
}

int ec_optimize_set(ec_optimize *o, const char *key, const char *value)
{
    if (o == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = o->ctx;
    if (key == NULL || value == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_optimize_set: NULL argument");
    if (o->ran)
        return eci_error(ctx, EC_EMISUSE, "ec_optimize_set: '%s' set after ec_optimize_run", key);
    double v = 0;
    int st;
    if (strcmp(key, "global_batch") == 0 || strcmp(key, "global_batch_tokens") == 0) {
        o->lists[L_GB].key = strcmp(key, "global_batch") == 0 ? "global_batch" : "global_batch_tokens";
        o->gb_tokens = key[12] == '_';
        return set_list(o, &o->lists[L_GB], NULL, value);
    }
    for (int l = 0; l < N_LISTS; l++)
        if (l != L_GB && strcmp(key, list_keys[l]) == 0)
            return set_list(o, &o->lists[l], key, value);
    if (strcmp(key, "goal") == 0) {
        if (strcmp(value, "tokens_per_s") == 0)
            o->goal = EC_OPTIMIZE_TOKENS_PER_S;
        else if (strcmp(value, "train_time") == 0)
            o->goal = EC_OPTIMIZE_TRAIN_TIME;
        else if (strcmp(value, "cost") == 0)
            o->goal = EC_OPTIMIZE_COST;
        else
            return eci_error(ctx, EC_EINVAL, "optimize: goal='%s' is not one of tokens_per_s, train_time, cost", value);
        return EC_OK;
    }
    if (strcmp(key, "train_tokens") == 0) {
        char *end;
        v = strtod(value, &end);
        if (end == value || *end != '\0' || !(v > 0 && v < 1e18))
            return eci_error(ctx, EC_EINVAL, "optimize: train_tokens='%s' must be a number of tokens > 0", value);
        o->train_tokens = v;
        return EC_OK;
    }
    if (strcmp(key, "top") == 0) {
        if ((st = parse_count(ctx, key, value, 1, 1e6, &v)) == EC_OK)
            o->top = (int)v;
        return st;
    }
    if (strcmp(key, "threads") == 0) {
        if ((st = parse_count(ctx, key, value, 0, 1024, &v)) == EC_OK)
            o->threads = (int)v;
        return st;
    }
    if (strcmp(key, "part") == 0 || strcmp(key, "parts") == 0) {
        if ((st = parse_count(ctx, key, value, key[4] == 's' ? 1 : 0, 1e6, &v)) == EC_OK)
            *(key[4] == 's' ? &o->parts : &o->part) = (size_t)v;
        return st;
    }
    /* Not a search key: a config key is fixed on the base (the caller's business); name the
     * nearest config key for a typo. */
    ec_config scratch = o->base;
    st = ec_config_set(ctx, &scratch, key, value);
    if (st == EC_OK)
        return eci_error(ctx, EC_ENOTFOUND, "optimize: '%s' is a config key, not a searched one: set it on the base "
                         "configuration", key);
    return st;
}

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

/* The default lists and the combined strategies, once the base resolves. */
static int prepare(ec_optimize *o)
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
    /* Resolve the base once (model, task, sequence length, the network) on a probe layout. */
    ec_config probe = o->base;
    eci_strlcpy(probe.gpu, L[L_GPU].values[0], sizeof probe.gpu);
    probe.batch_per_gpu = 1;
    probe.num_gpus = 1;
    probe.strategy = EC_STRATEGY_SINGLE;
    probe.tp = probe.pp = probe.cp = probe.ep = 1;
    probe.pp_chunks = 1;
    probe.pp_schedule = EC_PP_1F1B;
    probe.sharding = EC_SHARD_FULL;
    probe.zero_stage = 0;
    eci_resolved r;
    int st = eci_resolve(ctx, &probe, &r);
    if (st != EC_OK)
        return st;
    if (r.net == NULL)
        return eci_error(ctx, EC_EINVAL, "optimize: key 'model' is required");
    o->seq = r.seq > 0 ? r.seq : 1;
    int layers = eci_net_pipeline_layers(r.net);
    long max_gpus = 1;
    for (size_t i = 0; i < L[L_NUM_GPUS].n; i++)
        if (atol(L[L_NUM_GPUS].values[i]) > max_gpus)
            max_gpus = atol(L[L_NUM_GPUS].values[i]);
    for (size_t i = 0; i < L[L_GB].n; i++) {
        double g = strtod(L[L_GB].values[i], NULL);
        if (o->gb_tokens) {
            if (fmod(g, (double)o->seq) != 0)
                return eci_error(ctx, EC_EINVAL, "optimize: global_batch_tokens=%s is not divisible by seq_len=%d: "
                                 "global_batch = global_batch_tokens / seq_len samples", L[L_GB].values[i], o->seq);
            g /= o->seq;
        }
        o->gb_samples[i] = g;
    }
    int per_node = o->base.gpus_per_node > 0 ? o->base.gpus_per_node : r.per_node;
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
        if (is_moe(r.net))
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
    /* The nesting (first slowest): gpu, num_gpus, gb, tp, pp, cp, ep, strategy, schedule, micro, ckpt. */
    double combos = 1;
    for (int l = 0; l < N_LISTS; l++) {
        o->radix[l] = l == L_STRATEGY ? o->n_strats : (l == L_SHARDING || l == L_ZERO) ? 1 : L[l].n;
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

/* Candidate i's value index at each level. */
static void decode(const ec_optimize *o, size_t i, size_t *idx)
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
static int build(const ec_optimize *o, ec_ctx *ctx, size_t i, ec_config *cfg, double *gb, int *skip, char *why,
                 size_t why_n)
{
    size_t idx[N_LISTS];
    decode(o, i, idx);
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
    st = st ? st : set_key(ctx, cfg, "batch_per_gpu", L[L_MICRO].values[idx[L_MICRO]]);
    st = st ? st : set_key(ctx, cfg, "checkpointing", L[L_CKPT].values[idx[L_CKPT]]);
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

static void evaluate(ec_optimize *o, ec_ctx *ctx, size_t i, rec *r)
{
    memset(r, 0, sizeof *r);
    ec_config cfg;
    double gb;
    int skip;
    char why[EC_ERRMSG_MAX];
    int st = build(o, ctx, i, &cfg, &gb, &skip, why, sizeof why);
    if (skip) {
        r->state = S_SKIP;
        return;
    }
    eci_resolved res_in;
    if (st == EC_OK && why[0] == '\0')
        st = eci_resolve(ctx, &cfg, &res_in);
    if (st != EC_OK || why[0] != '\0') {
        if (st == EC_ENOMEM || st == EC_EMISUSE) {
            r->state = S_REFUSED;
            return;
        }
        r->state = S_DIVIDE;
        pthread_mutex_lock(&o->lock);
        if (i < o->first_divide_index) {
            o->first_divide_index = i;
            eci_strlcpy(o->first_divide, why[0] != '\0' ? why : ec_ctx_errmsg(ctx), sizeof o->first_divide);
        }
        pthread_mutex_unlock(&o->lock);
        return;
    }
    r->capacity_bytes = res_in.gpu->memory_bytes;
    if (o->bound && o->params > 0 && eci_optimize_state_bound_bytes(ctx, &cfg, res_in.dp, o->params) > r->capacity_bytes) {
        r->state = S_MEMORY;
        return;
    }
    ec_result res;
    st = ec_predict(ctx, &cfg, &res);
    if (st != EC_OK) {
        r->state = S_REFUSED;
        return;
    }
    r->state = S_PRICED;
    r->fits = res.memory.fits;
    r->tokens_per_s = res.tokens_per_s;
    r->step_s = res.step_s;
    r->mfu = res.mfu_frac;
    r->hfu = res.hfu_frac;
    r->peak_bytes = res.memory.peak_bytes;
    r->capacity_bytes = res.memory.capacity_bytes;
    r->price_per_hour = res.price_per_hour;
    r->fwd_bwd_s = res.breakdown.forward_s + res.breakdown.backward_s;
    r->busy_s = res.gpu_busy_s;
    r->straggler_s = res.straggler_s;
    r->comm = res.comm;
}

static int mine(const ec_optimize *o, size_t i)
{
    return (i / PART_BLOCK) % o->parts == o->part;
}

static int work(void *ud, ec_ctx *wctx, int worker)
{
    ec_optimize *o = ud;
    (void)worker;
    for (;;) {
        pthread_mutex_lock(&o->lock);
        size_t first = o->next;
        o->next += CHUNK;
        pthread_mutex_unlock(&o->lock);
        if (first >= o->n_combos)
            return EC_OK;
        /* On the caller's thread (one thread), the host's progress callback may stop the search. */
        if (wctx == o->ctx) {
            int st = eci_progress(wctx, "optimize", (double)first, (double)o->n_combos);
            if (st != EC_OK)
                return st;
        }
        for (size_t i = first; i < first + CHUNK && i < o->n_combos; i++) {
            if (mine(o, i))
                evaluate(o, wctx, i, &o->recs[i]);
            else
                o->recs[i].state = S_NOT_MINE;
        }
    }
}

/* ---- ranking --------------------------------------------------------------------------- */

/* The goal's value, higher better; 0 when it cannot be ranked (cost without a price). */
static double score(const ec_optimize *o, const rec *r)
{
    if (r->tokens_per_s <= 0)
        return 0;
    double tokens = o->train_tokens > 0 ? o->train_tokens : 1e6;
    switch (o->goal) {
    case EC_OPTIMIZE_TRAIN_TIME:
        return r->tokens_per_s / tokens; /* 1 / time */
    case EC_OPTIMIZE_COST:
        return r->price_per_hour > 0 ? 1.0 / (r->price_per_hour / 3600.0 * tokens / r->tokens_per_s) : 0;
    default:
        return r->tokens_per_s;
    }
}

/* Sorting by score needs the search; qsort_r is not C11, so a small merge sort. */
static int before(const ec_optimize *o, size_t a, size_t b)
{
    double sa = score(o, &o->recs[a]), sb = score(o, &o->recs[b]);
    return sa > sb || (sa == sb && a < b);
}

static void merge_sort(const ec_optimize *o, size_t *v, size_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(o, v, tmp, h);
    merge_sort(o, v + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = before(o, v[j], v[i]) ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

static int rank_all(ec_optimize *o)
{
    ec_ctx *ctx = o->ctx;
    ec_optimize_stats *s = &o->stats;
    size_t considered = s->considered;
    memset(s, 0, sizeof *s);
    s->considered = considered;
    if (o->ranked == NULL) {
        o->ranked = eci_malloc(ctx, (o->n_combos ? o->n_combos : 1) * sizeof *o->ranked);
        o->no_fit = eci_malloc(ctx, (o->n_combos ? o->n_combos : 1) * sizeof *o->no_fit);
        if (o->ranked == NULL || o->no_fit == NULL)
            return EC_ENOMEM;
    }
    o->n_ranked = o->n_no_fit = 0;
    for (size_t i = 0; i < o->n_combos; i++) {
        const rec *r = &o->recs[i];
        switch (r->state) {
        case S_DIVIDE: s->pruned_divide++; break;
        case S_MEMORY: s->pruned_memory++; break;
        case S_REFUSED: s->priced++; s->refused++; break;
        case S_PRICED:
            s->priced++;
            if (!r->fits)
                o->no_fit[o->n_no_fit++] = i;
            else if (score(o, r) > 0)
                o->ranked[o->n_ranked++] = i;
            else
                s->no_price++;
            s->fit += r->fits != 0;
            break;
        default: break;
        }
    }
    size_t *tmp = eci_malloc(ctx, (o->n_combos ? o->n_combos : 1) * sizeof *tmp);
    if (tmp == NULL)
        return EC_ENOMEM;
    merge_sort(o, o->ranked, tmp, o->n_ranked);
    merge_sort(o, o->no_fit, tmp, o->n_no_fit);
    eci_free(ctx, tmp, (o->n_combos ? o->n_combos : 1) * sizeof *tmp);
    /* The rivals that do not fit: near misses above the best (all, when nothing fits). */
    if (o->n_ranked > 0) {
        double best = score(o, &o->recs[o->ranked[0]]);
        size_t k = 0;
        for (size_t j = 0; j < o->n_no_fit && score(o, &o->recs[o->no_fit[j]]) > best; j++) {
            const rec *r = &o->recs[o->no_fit[j]];
            if (r->peak_bytes <= NEAR_MISS_PEAK_FRAC * r->capacity_bytes)
                o->no_fit[k++] = o->no_fit[j];
        }
        o->n_no_fit = k;
    }
    s->first_divide = o->first_divide;
    return EC_OK;
}

int ec_optimize_run(ec_optimize *o)
{
    if (o == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = o->ctx;
    if (o->ran)
        return eci_error(ctx, EC_EMISUSE, "ec_optimize_run: the search has run already");
    if (o->part >= o->parts)
        return eci_error(ctx, EC_EINVAL, "optimize: part=%zu of parts=%zu (0 <= part < parts)", o->part, o->parts);
    if (o->goal != EC_OPTIMIZE_TOKENS_PER_S && o->goal != EC_OPTIMIZE_COST && o->train_tokens <= 0)
        return eci_error(ctx, EC_EINVAL, "optimize: goal=train_time needs train_tokens= (the tokens to train)");
    double t0 = now_s();
    o->ran = 1;
    int st = prepare(o);
    if (st != EC_OK)
        return st;
    o->n_recs_alloc = o->n_combos ? o->n_combos : 1;
    o->recs = eci_calloc(ctx, o->n_recs_alloc, sizeof *o->recs);
    if (o->recs == NULL)
        return EC_ENOMEM;
    /* Considered: every combination but the repeats (pipeline schedules without a pipeline). */
    size_t idx[N_LISTS], considered = 0;
    for (size_t i = 0; i < o->n_combos; i++) {
        decode(o, i, idx);
        considered += !(atoi(o->lists[L_PP].values[idx[L_PP]]) == 1 && idx[L_SCHED] > 0);
    }
    size_t share = 0;
    for (size_t i = 0; i < o->n_combos; i++)
        share += mine(o, i);
    int t = o->threads;
    if (t == 0) {
        t = eci_workers_available();
        if ((size_t)t > share / 256 + 1) /* a worker's context loads in about the time of a few hundred */
            t = (int)(share / 256 + 1);
    }
    if ((size_t)t > share / CHUNK + 1)
        t = (int)(share / CHUNK + 1);
    o->next = 0;
    if (t <= 1) {
        t = 1;
        st = work(o, ctx, 0);
    } else {
        eci_workers *w = NULL;
        st = eci_workers_start(ctx, t, work, o, &w);
        /* While they work, this thread reports progress to the host, whose callback may stop
         * the search: the workers then take no more candidates. */
        int cancel = EC_OK;
        while (st == EC_OK && ctx->progress != NULL) {
            pthread_mutex_lock(&o->lock);
            size_t next = o->next < o->n_combos ? o->next : o->n_combos;
            pthread_mutex_unlock(&o->lock);
            if ((cancel = eci_progress(ctx, "optimize", (double)next, (double)o->n_combos)) != EC_OK) {
                pthread_mutex_lock(&o->lock);
                o->next = o->n_combos;
                pthread_mutex_unlock(&o->lock);
                break;
            }
            if (next >= o->n_combos) /* every candidate taken: the workers finish theirs */
                break;
            struct timespec pause = {0, 2000000}; /* 2 ms */
            nanosleep(&pause, NULL);
        }
        if (st == EC_OK)
            st = eci_workers_join(w);
        if (st == EC_OK && cancel != EC_OK)
            st = eci_error(ctx, cancel, "optimize: cancelled");
    }
    if (st != EC_OK)
        return st;
    o->stats.considered = considered;
    st = rank_all(o);
    o->stats.threads = t;
    o->stats.search_s = now_s() - t0;
    return st;
}

void ec_optimize_stats_get(const ec_optimize *o, ec_optimize_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (o != NULL) {
        *out = o->stats;
        out->first_divide = o->first_divide;
    } else {
        out->first_divide = "";
    }
}

size_t ec_optimize_count(const ec_optimize *o)
{
    return o != NULL ? o->n_ranked : 0;
}

size_t ec_optimize_no_fit_count(const ec_optimize *o)
{
    return o != NULL ? o->n_no_fit : 0;
}

/* Parts of a step, per token trained. */
typedef struct parts {
    double comm, bubble, recompute, compute, overhead;
} parts;

static parts per_token(const rec *r)
{
    parts p;
    const ec_comm_parts *c = &r->comm;
    double tokens = r->tokens_per_s * r->step_s;
    double recompute = r->hfu > 0 ? (r->hfu - r->mfu) / r->hfu * r->fwd_bwd_s : 0;
    p.comm = c->tp_s + c->cp_s + c->ep_s + c->dp_reduce_s + c->shard_wait_s + c->overlap_s + c->offload_s +
             c->pp_p2p_s + r->straggler_s;
    p.bubble = c->pp_bubble_s;
    p.recompute = recompute;
    p.compute = r->fwd_bwd_s - recompute;
    p.overhead = r->step_s - p.comm - p.bubble - r->fwd_bwd_s;
    if (p.overhead < 0)
        p.overhead = 0;
    if (tokens > 0) {
        p.comm /= tokens;
        p.bubble /= tokens;
        p.recompute /= tokens;
        p.compute /= tokens;
        p.overhead /= tokens;
    }
    return p;
}

static void explain(const ec_optimize *o, const rec *r, const rec *best, ec_optimize_layout *out)
{
    if (best == NULL)
        return;
    if (r == best) {
        snprintf(out->reason, sizeof out->reason, "best");
        return;
    }
    if (!r->fits) {
        out->lost = EC_LOSS_NO_FIT;
        snprintf(out->reason, sizeof out->reason, "does not fit: peak %.1f GiB of %.1f GiB", r->peak_bytes / 1073741824.0,
                 r->capacity_bytes / 1073741824.0);
        return;
    }
    if (o->goal == EC_OPTIMIZE_COST && r->tokens_per_s >= best->tokens_per_s) {
        out->lost = EC_LOSS_PRICE;
        snprintf(out->reason, sizeof out->reason, "a dearer job: %.2f per hour against %.2f", r->price_per_hour,
                 best->price_per_hour);
        return;
    }
    parts a = per_token(r), b = per_token(best);
    const double d[] = {a.comm - b.comm, a.bubble - b.bubble, a.recompute - b.recompute, a.compute - b.compute,
                        a.overhead - b.overhead};
    static const ec_optimize_loss loss[] = {EC_LOSS_EXPOSED_COMM, EC_LOSS_BUBBLE, EC_LOSS_RECOMPUTE, EC_LOSS_COMPUTE,
                                            EC_LOSS_OVERHEAD};
    static const char *const words[] = {"more exposed communication", "a larger pipeline bubble", "more recompute",
                                        "slower compute", "more host overhead"};
    size_t k = 0;
    for (size_t j = 1; j < 5; j++)
        if (d[j] > d[k])
            k = j;
    if (score(o, r) == score(o, best)) { /* the same figures: it ranks below by its number only */
        snprintf(out->reason, sizeof out->reason, "ties with the best (listed after it)");
        return;
    }
    out->lost = loss[k];
    /* seconds per million tokens: the difference per token times a million; the other parts
     * may make up for some of it, so the net loss comes first */
    snprintf(out->reason, sizeof out->reason, "%.2g %% behind: %s (+%.3g s per 1M tokens)", 100 * out->behind_frac,
             words[k], d[k] * 1e6);
}

int ec_optimize_get(const ec_optimize *o, int no_fit, size_t i, ec_optimize_layout *out)
{
    if (o == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = o->ctx;
    if (out == NULL || !o->ran)
        return eci_error(ctx, EC_EMISUSE, "ec_optimize_get: %s", out == NULL ? "NULL argument" : "run the search first");
    size_t n = no_fit ? o->n_no_fit : o->n_ranked;
    if (i >= n)
        return eci_error(ctx, EC_EINVAL, "ec_optimize_get: layout %zu of %zu", i, n);
    size_t c = no_fit ? o->no_fit[i] : o->ranked[i];
    const rec *r = &o->recs[c];
    const rec *best = o->n_ranked > 0 ? &o->recs[o->ranked[0]] : NULL;
    memset(out, 0, sizeof *out);
    double gb;
    int skip;
    char why[EC_ERRMSG_MAX];
    int st = build(o, ctx, c, &out->config, &gb, &skip, why, sizeof why);
    if (st != EC_OK)
        return st;
    out->dp = out->config.num_gpus / (out->config.tp * out->config.pp * out->config.cp);
    out->global_batch = gb;
    out->tokens_per_s = r->tokens_per_s;
    out->mfu_frac = r->mfu;
    out->hfu_frac = r->hfu;
    out->step_s = r->step_s;
    out->peak_bytes = r->peak_bytes;
    out->capacity_bytes = r->capacity_bytes;
    out->fits = r->fits;
    out->train_s = o->train_tokens > 0 && r->tokens_per_s > 0 ? o->train_tokens / r->tokens_per_s : 0;
    out->price_per_hour = r->price_per_hour;
    double tokens = o->train_tokens > 0 ? o->train_tokens : 1e6;
    out->cost = r->price_per_hour > 0 && r->tokens_per_s > 0 ? r->price_per_hour / 3600.0 * tokens / r->tokens_per_s : 0;
    out->comm = r->comm;
    parts p = per_token(r);
    double tok_step = r->tokens_per_s * r->step_s;
    out->exposed_comm_s = p.comm * tok_step;
    out->recompute_s = p.recompute * tok_step;
    double sb = best != NULL ? score(o, best) : 0;
    out->behind_frac = sb > 0 ? 1 - score(o, r) / sb : 0;
    explain(o, r, best, out);
    return EC_OK;
}

/* ---- a search split over processes ---------------------------------------------------------- */

typedef struct pack_head {
    unsigned long long magic;
    size_t n_combos, part, parts, first_divide_index, n_mine;
    char first_divide[EC_ERRMSG_MAX];
} pack_head;

int ec_optimize_pack(const ec_optimize *o, void *buf, size_t *bytes)
{
    if (o == NULL)
        return EC_EMISUSE;
    if (bytes == NULL || !o->ran || o->recs == NULL)
        return eci_error(o->ctx, EC_EMISUSE, "ec_optimize_pack: %s", bytes == NULL ? "NULL argument" : "run it first");
    size_t n_mine = 0;
    for (size_t i = 0; i < o->n_combos; i++)
        n_mine += mine(o, i);
    size_t need = sizeof(pack_head) + n_mine * (sizeof(size_t) + sizeof(rec));
    if (buf == NULL) {
        *bytes = need;
        return EC_OK;
    }
    if (*bytes < need)
        return eci_error(o->ctx, EC_EINVAL, "ec_optimize_pack: a buffer of %zu bytes, %zu needed", *bytes, need);
    pack_head h;
    memset(&h, 0, sizeof h);
    h.magic = PACK_MAGIC;
    h.n_combos = o->n_combos;
    h.part = o->part;
    h.parts = o->parts;
    h.first_divide_index = o->first_divide_index;
    h.n_mine = n_mine;
    eci_strlcpy(h.first_divide, o->first_divide, sizeof h.first_divide);
    unsigned char *p = buf;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    for (size_t i = 0; i < o->n_combos; i++)
        if (mine(o, i)) {
            memcpy(p, &i, sizeof i);
            memcpy(p + sizeof i, &o->recs[i], sizeof(rec));
            p += sizeof i + sizeof(rec);
        }
    *bytes = need;
    return EC_OK;
}

int ec_optimize_merge(ec_optimize *o, const void *buf, size_t bytes)
{
    if (o == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = o->ctx;
    if (buf == NULL || !o->ran || o->recs == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_optimize_merge: %s", buf == NULL ? "NULL argument" : "run it first");
    double t0 = now_s();
    pack_head h;
    if (bytes < sizeof h)
        return eci_error(ctx, EC_EINVAL, "ec_optimize_merge: %zu bytes, not a packed search", bytes);
    memcpy(&h, buf, sizeof h);
    if (h.magic != PACK_MAGIC || h.n_combos != o->n_combos || h.parts != o->parts || h.part >= h.parts ||
        h.part == o->part || bytes != sizeof h + h.n_mine * (sizeof(size_t) + sizeof(rec)))
        return eci_error(ctx, EC_EINVAL, "ec_optimize_merge: the buffer is not another part of this search");
    const unsigned char *p = (const unsigned char *)buf + sizeof h;
    for (size_t k = 0; k < h.n_mine; k++) {
        size_t i;
        memcpy(&i, p, sizeof i);
        if (i >= o->n_combos || (i / PART_BLOCK) % h.parts != h.part)
            return eci_error(ctx, EC_EINVAL, "ec_optimize_merge: candidate %zu is not part %zu's", i, h.part);
        memcpy(&o->recs[i], p + sizeof i, sizeof(rec));
        p += sizeof i + sizeof(rec);
    }
    if (h.first_divide_index < o->first_divide_index) {
        o->first_divide_index = h.first_divide_index;
        h.first_divide[sizeof h.first_divide - 1] = '\0';
        eci_strlcpy(o->first_divide, h.first_divide, sizeof o->first_divide);
    }
    int threads = o->stats.threads;
    double search_s = o->stats.search_s;
    int st = rank_all(o);
    o->stats.threads = threads;
    o->stats.search_s = search_s + (now_s() - t0);
    return st;
}
