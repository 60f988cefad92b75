/*
 * lengths.h: sequence-length distributions for dynamic padding (lengths.c): the lengths=
 * spec parsed into a discrete distribution over 1..cap tokens (cap = seq_len, longer samples
 * are truncated), sampled with GSL, and the closed forms of the padded length of a batch.
 */
#ifndef EC_LENGTHS_H
#define EC_LENGTHS_H

#include "base/base.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

typedef enum {
    ECI_LEN_FIXED = 0, /* fixed(n) */
    ECI_LEN_LOGNORMAL, /* lognormal(median, sigma): exp(N(ln median, sigma^2)) */
    ECI_LEN_NORMAL,    /* normal(mean, sd) */
    ECI_LEN_UNIFORM,   /* uniform(lo, hi): integers lo..hi, equally likely */
    ECI_LEN_HISTOGRAM  /* a CSV with columns tokens,count */
} eci_len_kind;

typedef struct eci_lengths {
    eci_len_kind kind;
    int cap;                     /* longest length (seq_len); longer samples are truncated */
    int min_len;                 /* shortest length with non-zero probability */
    double *cdf;                 /* cdf[k] = P(length <= k), k = 0..cap; cdf[0] = 0, cdf[cap] = 1 */
    gsl_ran_discrete_t *walker;  /* sampling table over lengths 1..cap (Walker's alias method) */
    double mean;                 /* E[length] after truncation */
} eci_lengths;

/* Parse a lengths= spec: "lognormal(median,sigma)", "normal(mean,sd)", "uniform(lo,hi)",
 * "fixed(n)" or the path of a histogram CSV (columns tokens,count; errors name file:line:col).
 * Continuous distributions are rounded to whole tokens and truncated to 1..cap.
 * Exceptional returns: EC_EINVAL (bad spec or parameters, message names key 'lengths'),
 * EC_EIO, EC_EPARSE, EC_ENOMEM. */
EC_INTERNAL int eci_lengths_parse(ec_ctx *ctx, const char *spec, int cap, eci_lengths **out);
EC_INTERNAL void eci_lengths_free(ec_ctx *ctx, eci_lengths *l);
/* 1 when a lengths= spec names a histogram file rather than a distribution "name(args)". */
EC_INTERNAL int eci_lengths_is_path(const char *spec);

/* One sample's length in tokens, 1..cap. */
EC_INTERNAL int eci_lengths_draw(const eci_lengths *l, gsl_rng *rng);

/* A batch of b samples drawn as a whole, for the loader simulation: what it needs of a batch
 * is its longest sample (the padded length) and its token count (the CPU cost), not the b
 * lengths.  The longest, M, is drawn exactly from P(M = k) = F(k)^b - F(k-1)^b (a Walker
 * table); the tokens, S, from their exact mean and variance given M (modeling.md 5.4):
 * with q = P(X = m | X <= m) and K, the samples of length m, ~ Binomial(b, q) given K >= 1,
 * and mu', v' the mean and variance of a length below m,
 *   E[S | M = m]   = E[K] m + (b - E[K]) mu'
 *   Var[S | M = m] = (b - E[K]) v' + (m - mu')^2 Var[K]
 * as a normal (the central limit over the b - 1 others), kept within [m + (b-1) min, b m].
 * Two draws per batch instead of b. */
typedef struct eci_batch_lengths eci_batch_lengths;
/* The table for batches of b samples of l, cached on the context: built when b or the
 * distribution differs from the last call's.  NULL only when out of memory (message set). */
EC_INTERNAL const eci_batch_lengths *eci_lengths_batch(ec_ctx *ctx, const eci_lengths *l, int b);
EC_INTERNAL void eci_lengths_batch_draw(const eci_batch_lengths *t, gsl_rng *rng, int *longest, double *tokens);
/* The mean and standard deviation of S given M = m (for tests). */
EC_INTERNAL void eci_lengths_batch_tokens(const eci_batch_lengths *t, int m, double *mean, double *sd);

/* Closed forms for the padded length of a batch of b i.i.d. samples under dynamic padding,
 * P = max of the b lengths (already capped): P(P <= k) = F(k)^b, so
 *   E[P]   = sum_{k=0}^{cap-1} (1 - F(k)^b)                (tail sum, modeling.md 5.4)
 *   E[P^2] = sum_{k=1}^{cap} k^2 (F(k)^b - F(k-1)^b)        (attention cost) */
EC_INTERNAL double eci_lengths_padded_mean(const eci_lengths *l, int b);
EC_INTERNAL double eci_lengths_padded_sq_mean(const eci_lengths *l, int b);
/* Smallest k with F(k)^b >= p: the p-quantile of the padded length. */
EC_INTERNAL int eci_lengths_padded_quantile(const eci_lengths *l, int b, double p);

/* Free the context's batch sampling table (registered with eci_ctx_on_free). */
EC_INTERNAL void eci_lengths_ctx_free(ec_ctx *ctx);

#endif /* EC_LENGTHS_H */
