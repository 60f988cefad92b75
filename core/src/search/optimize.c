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
 * caller's configuration and lists; every figure comes from ec_predict.  This file holds the
 * keys and the run over threads and processes; the candidates are optimize_candidates.c's,
 * the ranking and the listed layouts optimize_results.c's.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "model/layout.h"
#include "search/optimize_search.h"
#include "search/workers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 64                      /* candidates a worker takes at once */
#define PART_BLOCK 256                /* candidates per block of a part (block b to part b % parts) */
#define PACK_MAGIC 0x45434f5054000001ull
#define DEFAULT_TOP 10

static const char *const list_keys[N_LISTS] = {"gpu", "num_gpus", "global_batch", "tp", "pp", "cp", "ep", "strategy",
                                               "sharding", "zero_stage", "pp_schedule", "batch_per_gpu",
                                               "checkpointing"};

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
    {"train_samples", "or samples to train, of seq_len tokens each (train_tokens = train_samples x seq_len) [0]"},
    {"top", "layouts listed [10]"},
    {"threads", "threads that price (0: the cores available) [0]"},
    {"part", "this process's part of a search split over processes, 0-based [0]"},
    {"parts", "processes the search is split over [1]"},
};
#define N_KEYS (sizeof keys / sizeof keys[0])

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

/* train_tokens: a whole run's tokens.  At least one: a tiny or subnormal count (1e-320) makes every
 * layout's training time 0 and its score infinite, so every layout would tie and the fraction
 * behind the best be NaN. */
#define TRAIN_TOKENS_MIN 1.0
#define TRAIN_TOKENS_MAX 1e18

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
    if (strcmp(key, "train_tokens") == 0 || strcmp(key, "train_samples") == 0) {
        int samples = key[6] == 's';
        char *end;
        v = strtod(value, &end);
        if (end == value || *end != '\0' || !(v >= TRAIN_TOKENS_MIN && v <= TRAIN_TOKENS_MAX))
            return eci_error(ctx, EC_EINVAL, "optimize: %s='%s' must be a number of %s from %.0f to %.0e", key,
                             value, samples ? "samples" : "tokens", TRAIN_TOKENS_MIN, TRAIN_TOKENS_MAX);
        *(samples ? &o->train_samples : &o->train_tokens) = v;
        *(samples ? &o->train_tokens : &o->train_samples) = 0; /* the last one given counts */
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

static void evaluate(ec_optimize *o, ec_ctx *ctx, size_t i, rec *r)
{
    memset(r, 0, sizeof *r);
    ec_config cfg;
    double gb;
    int skip;
    char why[EC_ERRMSG_MAX];
    int st = eci_optimize_build(o, ctx, i, &cfg, &gb, &skip, why, sizeof why);
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
    r->at_edge = res.memory.at_edge;
    r->needed_bytes = res.memory.needed_bytes;
    r->headroom_bytes = res.memory.headroom_bytes;
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

int ec_optimize_run(ec_optimize *o)
{
    if (o == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = o->ctx;
    if (o->ran)
        return eci_error(ctx, EC_EMISUSE, "ec_optimize_run: the search has run already");
    if (o->part >= o->parts)
        return eci_error(ctx, EC_EINVAL, "optimize: part=%zu of parts=%zu (0 <= part < parts)", o->part, o->parts);
    if (o->train_tokens <= 0 && o->train_samples <= 0) { /* the base config's run length, when it has one */
        o->train_tokens = o->base.train_tokens;
        o->train_samples = o->base.train_samples;
    }
    if (o->goal != EC_OPTIMIZE_TOKENS_PER_S && o->goal != EC_OPTIMIZE_COST && o->train_tokens <= 0 &&
        o->train_samples <= 0)
        return eci_error(ctx, EC_EINVAL, "optimize: goal=train_time needs train_tokens= or train_samples= (what to "
                         "train)");
    double t0 = now_s();
    o->ran = 1;
    int st = eci_optimize_prepare(o);
    if (st != EC_OK)
        return st;
    if (o->train_samples > 0) /* every candidate trains samples of the same seq_len */
        o->train_tokens = o->train_samples * o->seq;
    o->n_recs_alloc = o->n_combos ? o->n_combos : 1;
    o->recs = eci_calloc(ctx, o->n_recs_alloc, sizeof *o->recs);
    if (o->recs == NULL)
        return EC_ENOMEM;
    /* Considered: every combination but the repeats (pipeline schedules without a pipeline). */
    size_t idx[N_LISTS], considered = 0;
    for (size_t i = 0; i < o->n_combos; i++) {
        eci_optimize_decode(o, i, idx);
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
    st = eci_optimize_rank(o);
    o->stats.threads = t;
    o->stats.search_s = now_s() - t0;
    return st;
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
    int st = eci_optimize_rank(o);
    o->stats.threads = threads;
    o->stats.search_s = search_s + (now_s() - t0);
    return st;
}
