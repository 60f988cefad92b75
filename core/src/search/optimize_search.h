/*
 * optimize_search.h: what the files of the layout search share, private to search/optimize*.c
 * (the tests use search/optimize.h): the searched lists, a candidate's record, the search
 * itself, and the steps each file lends the others -- the candidates (optimize_candidates.c)
 * and the ranking (optimize_results.c); optimize.c runs the search.
 */
#ifndef EC_OPTIMIZE_SEARCH_H
#define EC_OPTIMIZE_SEARCH_H

#include "search/optimize.h"

#include <pthread.h>

#define MAX_VALUES 64                 /* values per searched key */

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

/* A strategy with its sharding or ZeRO stage (the product of the strategy, sharding and
 * zero_stage lists, each sharding with fsdp and each stage with zero only). */
typedef struct strat {
    char strategy[16], sharding[16], zero[4];
} strat;

/* The figures of a priced candidate. */
typedef struct rec {
    int state;
    int fits, at_edge;            /* at_edge: fits only without the memory headroom */
    double tokens_per_s, step_s, mfu, hfu, peak_bytes, capacity_bytes, price_per_hour;
    double needed_bytes, headroom_bytes;
    double fwd_bwd_s, busy_s, straggler_s;
    ec_comm_parts comm;
} rec;

struct ec_optimize {
    ec_ctx *ctx;
    ec_config base;
    list lists[N_LISTS];
    int gb_tokens;                /* global batch given in tokens */
    ec_optimize_goal goal;
    double train_tokens;          /* option train_tokens, or train_samples x seq once run */
    double train_samples;         /* option train_samples [0] */
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

/* ---- optimize_candidates.c ---------------------------------------------------------------- */
/* The default lists and the combined strategies, once the base resolves. */
EC_INTERNAL int eci_optimize_prepare(ec_optimize *o);
/* Candidate i's value index at each level. */
EC_INTERNAL void eci_optimize_decode(const ec_optimize *o, size_t i, size_t *idx);
/* Candidate i's configuration on ctx.  *skip: a combination that repeats another (a pipeline
 * schedule other than the first without a pipeline); why: why its batch does not divide. */
EC_INTERNAL int eci_optimize_build(const ec_optimize *o, ec_ctx *ctx, size_t i, ec_config *cfg, double *gb, int *skip,
                                   char *why, size_t why_n);

/* ---- optimize_results.c ------------------------------------------------------------------- */
/* Rank the priced candidates by the goal (then number), with the near misses that do not fit. */
EC_INTERNAL int eci_optimize_rank(ec_optimize *o);

#endif /* EC_OPTIMIZE_SEARCH_H */
