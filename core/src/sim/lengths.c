/*
 * lengths.c: the lengths= key (docs/DESIGN.md 2, 3.2; modeling.md 5.4).  A spec is either a named
 * distribution -- lognormal(median,sigma), normal(mean,sd), uniform(lo,hi), fixed(n) -- or
 * the path of a histogram CSV with columns tokens,count (read through table.c, so errors
 * name file:line:column).  Every spec becomes one discrete distribution over 1..cap tokens:
 * continuous ones are rounded to the nearest token (P(k) = F(k+1/2) - F(k-1/2)), shorter
 * than 1 counts as 1 and longer than cap (seq_len, the tokenizer's max_length) as cap.
 * Sampling uses GSL's Walker tables; the padded-length closed forms use the CDF (F^b).
 */
#include "sim/lengths.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

#define MAX_ARGS 2

/* ---- the CDF of each named distribution ------------------------------------------------ */
static double cont_cdf(eci_len_kind kind, const double *a, double x)
{
    switch (kind) {
    case ECI_LEN_LOGNORMAL: return x <= 0 ? 0 : gsl_cdf_lognormal_P(x, log(a[0]), a[1]);
    case ECI_LEN_NORMAL: return gsl_cdf_gaussian_P(x - a[0], a[1]);
    default: return 0;
    }
}

/* Fill cdf[0..cap] of a named distribution with parameters a. */
static void named_cdf(eci_len_kind kind, const double *a, int cap, double *cdf)
{
    cdf[0] = 0;
    for (int k = 1; k < cap; k++) {
        double F;
        if (kind == ECI_LEN_FIXED)
            F = k >= a[0] ? 1 : 0;
        else if (kind == ECI_LEN_UNIFORM)
            F = k < a[0] ? 0 : k >= a[1] ? 1 : (k - a[0] + 1) / (a[1] - a[0] + 1);
        else
            F = cont_cdf(kind, a, k + 0.5);
        cdf[k] = F;
    }
    cdf[cap] = 1;
}

/* ---- parsing -------------------------------------------------------------------------- */
static void trim(const char **s, size_t *len)
{
    while (*len > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

/* Parse "a,b" (up to MAX_ARGS numbers) from text of length len. */
static int parse_args(ec_ctx *ctx, const char *spec, const char *p, size_t len, double *a, int *n)
{
    *n = 0;
    while (len > 0 || *n == 0) {
        size_t tok = 0;
        while (tok < len && p[tok] != ',')
            tok++;
        const char *s = p;
        size_t sl = tok;
        trim(&s, &sl);
        char buf[ECI_NUMBER_MAX + 1];
        if (sl == 0 || sl > ECI_NUMBER_MAX || *n == MAX_ARGS)
            return eci_error(ctx, EC_EINVAL, "key 'lengths': '%s': expected 1 or 2 numbers in the parentheses", spec);
        memcpy(buf, s, sl);
        buf[sl] = '\0';
        if (eci_parse_double(buf, &a[*n]) != 0)
            return eci_error(ctx, EC_EINVAL, "key 'lengths': '%s': '%s' is not a number", spec, buf);
        (*n)++;
        if (tok == len)
            break;
        p += tok + 1;
        len -= tok + 1;
        if (len == 0)
            return eci_error(ctx, EC_EINVAL, "key 'lengths': '%s': a number is missing after ','", spec);
    }
    return EC_OK;
}

static int check_params(ec_ctx *ctx, const char *spec, eci_len_kind kind, const double *a, int n)
{
    static const int want[] = {1, 2, 2, 2};
    static const char *const form[] = {"fixed(n)", "lognormal(median,sigma)", "normal(mean,sd)", "uniform(lo,hi)"};
    if (n != want[kind])
        return eci_error(ctx, EC_EINVAL, "key 'lengths': '%s': expected %s", spec, form[kind]);
    int ok = 1;
    switch (kind) {
    case ECI_LEN_FIXED: ok = a[0] >= 1 && a[0] == floor(a[0]); break;
    case ECI_LEN_LOGNORMAL: ok = a[0] > 0 && a[1] > 0; break;
    case ECI_LEN_NORMAL: ok = a[1] > 0; break;
    case ECI_LEN_UNIFORM: ok = a[0] >= 1 && a[1] >= a[0] && a[0] == floor(a[0]) && a[1] == floor(a[1]); break;
    default: break;
    }
    if (!ok)
        return eci_error(ctx, EC_EINVAL,
                         "key 'lengths': '%s': %s needs %s", spec, form[kind],
                         kind == ECI_LEN_FIXED     ? "a whole n >= 1"
                         : kind == ECI_LEN_UNIFORM ? "whole 1 <= lo <= hi"
                         : kind == ECI_LEN_NORMAL  ? "sd > 0"
                                                   : "median > 0 and sigma > 0");
    return EC_OK;
}

/* A histogram CSV: columns tokens (whole, >= 1) and count (>= 0); other columns (source) ignored. */
static int histogram_cdf(ec_ctx *ctx, const char *path, int cap, double *cdf)
{
    eci_table *t = NULL;
    int c_tok, c_cnt, rc = eci_table_load(ctx, path, &t);
    if (rc != EC_OK)
        return eci_error_key(ctx, rc, "lengths");
    eci_input_note(ctx, path);
    if ((rc = eci_table_require(ctx, t, "tokens", &c_tok)) != EC_OK ||
        (rc = eci_table_require(ctx, t, "count", &c_cnt)) != EC_OK)
        goto done;
    if (eci_table_rows(t) == 0) {
        rc = eci_error(ctx, EC_EPARSE, "%s: no data rows", path);
        goto done;
    }
    memset(cdf, 0, ((size_t)cap + 1) * sizeof *cdf);
    double total = 0;
    for (size_t r = 0; r < eci_table_rows(t); r++) {
        long tok;
        double cnt;
        if ((rc = eci_table_int(ctx, t, r, c_tok, 1, 1L << 30, &tok)) != EC_OK ||
            (rc = eci_table_number(ctx, t, r, c_cnt, 0, 1e18, &cnt)) != EC_OK)
            goto done;
        cdf[tok < cap ? tok : cap] += cnt; /* mass first, summed below */
        total += cnt;
    }
    if (!(total > 0)) {
        rc = eci_error(ctx, EC_EPARSE, "%s: the counts sum to 0", path);
        goto done;
    }
    double run = 0;
    for (int k = 0; k <= cap; k++) {
        run += cdf[k];
        cdf[k] = run / total;
    }
    cdf[cap] = 1;
done:
    eci_table_free(t);
    return rc != EC_OK ? eci_error_key(ctx, rc, "lengths") : rc;
}

/* Name of a distribution spec "name(args)": its kind, -1 when spec is not of that form (a
 * path), -2 for an unknown name, -3 for a known name whose parentheses do not close at the
 * end ("lognormal(60,0.7": a typo, not a file to open). */
static int spec_kind(const char *spec, const char **open)
{
    static const char *const names[] = {"fixed", "lognormal", "normal", "uniform"};
    size_t len = strlen(spec);
    const char *p = strchr(spec, '(');
    if (p == NULL || len == 0)
        return -1;
    *open = p;
    const char *s = spec;
    size_t nl = (size_t)(p - spec);
    trim(&s, &nl);
    int kind = -2;
    for (int k = 0; k < 4; k++)
        if (strlen(names[k]) == nl && memcmp(names[k], s, nl) == 0)
            kind = k;
    const char *close = strchr(p, ')');
    if (close == NULL || close != spec + len - 1 || strchr(p + 1, '(') != NULL)
        return kind >= 0 ? -3 : -1;
    return kind;
}

int eci_lengths_is_path(const char *spec)
{
    const char *open;
    return spec_kind(spec, &open) == -1;
}

int eci_lengths_parse(ec_ctx *ctx, const char *spec, int cap, eci_lengths **out)
{
    *out = NULL;
    if (spec == NULL || spec[0] == '\0')
        return eci_error(ctx, EC_EINVAL, "key 'lengths' is empty");
    if (cap < 1)
        return eci_error(ctx, EC_EINVAL, "key 'lengths': seq_len (the cap) must be >= 1");
    eci_lengths *l = eci_calloc(ctx, 1, sizeof *l);
    if (l == NULL)
        return EC_ENOMEM;
    l->cap = cap;
    int rc = EC_OK;
    if ((l->cdf = eci_malloc(ctx, ((size_t)cap + 1) * sizeof *l->cdf)) == NULL) {
        rc = EC_ENOMEM;
        goto fail;
    }
    const char *open = NULL;
    int kind = spec_kind(spec, &open);
    if (kind == -3) {
        rc = eci_error(ctx, EC_EINVAL, "key 'lengths': '%s': expected one ')' closing the parentheses at the end, "
                       "as in lognormal(60,0.7)", spec);
        goto fail;
    }
    if (kind == -2) {
        rc = eci_error(ctx, EC_EINVAL, "key 'lengths': unknown distribution in '%s' "
                       "(lognormal(median,sigma), normal(mean,sd), uniform(lo,hi), fixed(n), or a CSV path)", spec);
        goto fail;
    }
    if (kind >= 0) {
        double a[MAX_ARGS] = {0, 0};
        int n;
        size_t alen = strlen(open + 1) - 1; /* between the parentheses */
        if ((rc = parse_args(ctx, spec, open + 1, alen, a, &n)) != EC_OK ||
            (rc = check_params(ctx, spec, (eci_len_kind)kind, a, n)) != EC_OK)
            goto fail;
        l->kind = (eci_len_kind)kind;
        named_cdf(l->kind, a, cap, l->cdf);
    } else {
        l->kind = ECI_LEN_HISTOGRAM;
        if ((rc = histogram_cdf(ctx, spec, cap, l->cdf)) != EC_OK)
            goto fail;
    }
    /* probabilities over 1..cap for the Walker table, the mean and the shortest length */
    double *p = eci_malloc(ctx, (size_t)cap * sizeof *p);
    if (p == NULL) {
        rc = EC_ENOMEM;
        goto fail;
    }
    l->min_len = 0;
    for (int k = 1; k <= cap; k++) {
        double pk = l->cdf[k] - l->cdf[k - 1];
        p[k - 1] = pk > 0 ? pk : 0;
        l->mean += k * p[k - 1];
        if (l->min_len == 0 && p[k - 1] > 0)
            l->min_len = k;
    }
    l->walker = gsl_ran_discrete_preproc((size_t)cap, p);
    eci_free(ctx, p, (size_t)cap * sizeof *p);
    if (l->walker == NULL) {
        rc = eci_error(ctx, EC_ENOMEM, "key 'lengths': cannot build the sampling table");
        goto fail;
    }
    *out = l;
    return EC_OK;
fail:
    eci_lengths_free(ctx, l);
    return rc;
}

void eci_lengths_free(ec_ctx *ctx, eci_lengths *l)
{
    if (l == NULL)
        return;
    if (l->walker != NULL)
        gsl_ran_discrete_free(l->walker);
    eci_free(ctx, l->cdf, ((size_t)l->cap + 1) * sizeof *l->cdf);
    eci_free(ctx, l, sizeof *l);
}

int eci_lengths_draw(const eci_lengths *l, gsl_rng *rng)
{
    return (int)gsl_ran_discrete(rng, l->walker) + 1;
}

double eci_lengths_padded_mean(const eci_lengths *l, int b)
{
    double s = 0;
    for (int k = 0; k < l->cap; k++)
        s += 1.0 - pow(l->cdf[k], b);
    return s;
}

double eci_lengths_padded_sq_mean(const eci_lengths *l, int b)
{
    double s = 0, prev = 0;
    for (int k = 1; k <= l->cap; k++) {
        double cur = pow(l->cdf[k], b);
        s += (double)k * k * (cur - prev);
        prev = cur;
    }
    return s;
}

int eci_lengths_padded_quantile(const eci_lengths *l, int b, double p)
{
    for (int k = 1; k < l->cap; k++)
        if (pow(l->cdf[k], b) >= p)
            return k;
    return l->cap;
}

/* ---- whole batches (the loader simulation) ------------------------------------------------- */
struct eci_batch_lengths {
    int b, cap, min_len;
    double *cdf;                 /* a copy of the distribution's cdf[0..cap]: the cache's key */
    double *tok;                 /* tok[2m], tok[2m + 1]: mean and sd of S given M = m, m = 1..cap */
    gsl_ran_discrete_t *longest; /* P(M = k), k = 1..cap */
};

static void batch_free(ec_ctx *ctx, eci_batch_lengths *t)
{
    if (t == NULL)
        return;
    if (t->longest != NULL)
        gsl_ran_discrete_free(t->longest);
    eci_free(ctx, t->cdf, 3 * ((size_t)t->cap + 1) * sizeof *t->cdf);
    eci_free(ctx, t, sizeof *t);
}

void eci_lengths_ctx_free(ec_ctx *ctx)
{
    batch_free(ctx, ctx->len_batch);
    ctx->len_batch = NULL;
}

/* S given M = m (lengths.h), from the sums below m of P(k), k P(k) and k^2 P(k): p0 = F(m-1). */
static void tokens_given(const eci_lengths *l, int b, int m, double p0, double p1, double p2, double *tok)
{
    double pm = l->cdf[m] - l->cdf[m - 1];
    tok[0] = (double)b * m;
    tok[1] = 0;
    if (p0 <= 0 || pm <= 0) /* m is the shortest length (every sample has it) or never the longest */
        return;
    double q = pm / (p0 + pm), mu = p1 / p0, v = p2 / p0 - mu * mu;
    double z = -expm1(b * log1p(-q)); /* P(K >= 1) */
    double ek = 1, vk = 0;             /* q -> 0 (m far in the tail): exactly one sample is m */
    if (z > 0) {
        ek = b * q / z;
        vk = (b * q * (1 - q) + (double)b * b * q * q) / z - ek * ek;
    }
    tok[0] = ek * m + (b - ek) * mu;
    double var = (b - ek) * (v > 0 ? v : 0) + (m - mu) * (m - mu) * (vk > 0 ? vk : 0);
    tok[1] = var > 0 ? sqrt(var) : 0; /* b = 1: E[K] = 1 up to rounding, either side */
}

/* Fill t's key, its token moments and the probabilities p[0..cap-1] of the longest. */
static void batch_fill(const eci_lengths *l, int b, eci_batch_lengths *t, double *p)
{
    size_t n = (size_t)l->cap + 1;
    memcpy(t->cdf, l->cdf, n * sizeof *t->cdf);
    double prev = 0, p1 = 0, p2 = 0;
    for (int m = 1; m <= l->cap; m++) {
        double cur = pow(l->cdf[m], b);
        p[m - 1] = cur > prev ? cur - prev : 0;
        prev = cur;
        tokens_given(l, b, m, l->cdf[m - 1], p1, p2, &t->tok[2 * m]);
        double pk = l->cdf[m] - l->cdf[m - 1];
        if (pk > 0) {
            p1 += m * pk;
            p2 += (double)m * m * pk;
        }
    }
}

static eci_batch_lengths *batch_build(ec_ctx *ctx, const eci_lengths *l, int b)
{
    size_t n = (size_t)l->cap + 1;
    eci_batch_lengths *t = eci_calloc(ctx, 1, sizeof *t);
    double *p = eci_malloc(ctx, (size_t)l->cap * sizeof *p);
    if (t != NULL) {
        t->b = b;
        t->cap = l->cap;
        t->min_len = l->min_len;
        t->cdf = eci_malloc(ctx, 3 * n * sizeof *t->cdf);
    }
    if (t != NULL && t->cdf != NULL && p != NULL) {
        t->tok = t->cdf + n;
        batch_fill(l, b, t, p);
        t->longest = gsl_ran_discrete_preproc((size_t)l->cap, p);
    }
    eci_free(ctx, p, (size_t)l->cap * sizeof *p);
    if (t == NULL || t->longest == NULL) {
        batch_free(ctx, t);
        eci_error(ctx, EC_ENOMEM, "key 'lengths': cannot build the sampling table of a batch of %d", b);
        return NULL;
    }
    return t;
}

const eci_batch_lengths *eci_lengths_batch(ec_ctx *ctx, const eci_lengths *l, int b)
{
    eci_batch_lengths *t = ctx->len_batch;
    if (t != NULL && t->b == b && t->cap == l->cap &&
        memcmp(t->cdf, l->cdf, ((size_t)l->cap + 1) * sizeof *l->cdf) == 0)
        return t;
    eci_lengths_ctx_free(ctx);
    if (eci_ctx_on_free(ctx, eci_lengths_ctx_free) != EC_OK)
        return NULL;
    return ctx->len_batch = batch_build(ctx, l, b);
}

void eci_lengths_batch_draw(const eci_batch_lengths *t, gsl_rng *rng, int *longest, double *tokens)
{
    int m = (int)gsl_ran_discrete(rng, t->longest) + 1;
    double s = t->tok[2 * m], sd = t->tok[2 * m + 1];
    if (sd > 0)
        s += gsl_ran_gaussian_ziggurat(rng, sd);
    double lo = m + (double)(t->b - 1) * t->min_len, hi = (double)t->b * m;
    *longest = m;
    *tokens = s < lo ? lo : s > hi ? hi : s;
}

void eci_lengths_batch_tokens(const eci_batch_lengths *t, int m, double *mean, double *sd)
{
    *mean = t->tok[2 * m];
    *sd = t->tok[2 * m + 1];
}
