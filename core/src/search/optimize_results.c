/*
 * optimize_results.c: the layout search's results: the priced candidates (optimize.c) ranked
 * by the goal, then by number, so any number of threads or processes ranks alike; the near
 * misses that do not fit; and each listed layout's figures with why it lost to the best, read
 * from its result's parts against the best's, per token trained.
 */
#include "catalog/price.h"
#include "model/layout.h"
#include "search/optimize_search.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A rival that does not fit is listed when it would rank above the best and its peak is within
 * this factor of the capacity (a near miss: a smaller micro-batch or more sharding may fit). */
#define NEAR_MISS_PEAK_FRAC 1.25


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

int eci_optimize_rank(ec_optimize *o)
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
    /* The rivals that do not fit: near misses above the best, and the layouts at the edge of
     * out-of-memory that would rank among the top listed (all, when nothing fits). */
    if (o->n_ranked > 0) {
        double best = score(o, &o->recs[o->ranked[0]]);
        size_t shown = o->top > 0 && (size_t)o->top < o->n_ranked ? (size_t)o->top : o->n_ranked;
        double last = score(o, &o->recs[o->ranked[shown - 1]]);
        size_t k = 0;
        for (size_t j = 0; j < o->n_no_fit; j++) {
            const rec *r = &o->recs[o->no_fit[j]];
            double sc = score(o, r);
            if ((sc > best && r->peak_bytes <= NEAR_MISS_PEAK_FRAC * r->capacity_bytes) || (r->at_edge && sc >= last))
                o->no_fit[k++] = o->no_fit[j];
        }
        o->n_no_fit = k;
    }
    s->first_divide = o->first_divide;
    return EC_OK;
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
        if (r->at_edge)
            snprintf(out->reason, sizeof out->reason, "at the edge: needs %.1f of %.1f GiB, less free than the %.1f GiB "
                     "headroom", r->needed_bytes / 1073741824.0, r->capacity_bytes / 1073741824.0,
                     r->headroom_bytes / 1073741824.0);
        else
            snprintf(out->reason, sizeof out->reason, "does not fit: needs %.1f GiB of %.1f GiB",
                     r->needed_bytes / 1073741824.0, r->capacity_bytes / 1073741824.0);
        return;
    }
    if (score(o, r) == score(o, best)) { /* the same figures: it ranks below by its number only */
        snprintf(out->reason, sizeof out->reason, "ties with the best (listed after it)");
        return;
    }
    if (o->goal == EC_OPTIMIZE_COST && r->tokens_per_s >= best->tokens_per_s) {
        out->lost = EC_LOSS_PRICE;
        const char *cur = out->price_currency[0] != '\0' ? out->price_currency : "";
        snprintf(out->reason, sizeof out->reason, "%.2g %% behind: a dearer job, %s%s%.2f per hour against %.2f",
                 100 * out->behind_frac, cur, cur[0] ? " " : "", r->price_per_hour, best->price_per_hour);
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
    out->lost = loss[k];
    /* seconds per million tokens: the difference per token times a million; the other parts
     * may make up for some of it, so the net loss comes first */
    snprintf(out->reason, sizeof out->reason, "%.2g %% behind: %s (+%.3g s per 1M tokens)", 100 * out->behind_frac,
             words[k], d[k] * 1e6);
}

/* A layout's figures reach CSV cells and Lua numbers: a NaN or an infinity there (from a merged
 * buffer, or a prediction gone wrong) is an error of the search, never a number to print. */
static int finite_layout(ec_ctx *ctx, int no_fit, size_t i, const ec_optimize_layout *l)
{
    const struct { const char *name; double v; } f[] = {
        {"global_batch", l->global_batch}, {"tokens_per_s", l->tokens_per_s}, {"mfu_frac", l->mfu_frac},
        {"hfu_frac", l->hfu_frac}, {"step_s", l->step_s}, {"peak_bytes", l->peak_bytes},
        {"capacity_bytes", l->capacity_bytes}, {"train_s", l->train_s}, {"cost", l->cost},
        {"price_per_hour", l->price_per_hour}, {"exposed_comm_s", l->exposed_comm_s},
        {"recompute_s", l->recompute_s}, {"behind_frac", l->behind_frac}, {"comm.tp_s", l->comm.tp_s},
        {"comm.cp_s", l->comm.cp_s}, {"comm.ep_s", l->comm.ep_s}, {"comm.dp_reduce_s", l->comm.dp_reduce_s},
        {"comm.shard_wait_s", l->comm.shard_wait_s}, {"comm.overlap_s", l->comm.overlap_s},
        {"comm.offload_s", l->comm.offload_s}, {"comm.pp_bubble_s", l->comm.pp_bubble_s},
        {"comm.pp_p2p_s", l->comm.pp_p2p_s},
    };
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        if (!isfinite(f[k].v))
            return eci_error(ctx, EC_EINVAL, "optimize: layout %zu%s: %s is %g, not a finite number", i + 1,
                             no_fit ? " (of those that do not fit)" : "", f[k].name, f[k].v);
    return EC_OK;
}

/* The offer a layout is priced at and its currency (price.c, as ec_predict quoted it). */
static int quote(ec_ctx *ctx, ec_optimize_layout *out)
{
    eci_resolved res_in;
    eci_quote q;
    int st = eci_resolve(ctx, &out->config, &res_in);
    if (st == EC_OK)
        st = eci_price_quote(ctx, &out->config, res_in.gpu, res_in.nodes, &q);
    if (st != EC_OK)
        return st;
    eci_strlcpy(out->price_offer, q.offer, sizeof out->price_offer);
    eci_strlcpy(out->price_currency, q.currency, sizeof out->price_currency);
    return EC_OK;
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
    int st = eci_optimize_build(o, ctx, c, &out->config, &gb, &skip, why, sizeof why);
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
    out->at_edge = r->at_edge;
    out->needed_bytes = r->needed_bytes;
    out->headroom_bytes = r->headroom_bytes;
    out->train_s = o->train_tokens > 0 && r->tokens_per_s > 0 ? o->train_tokens / r->tokens_per_s : 0;
    out->price_per_hour = r->price_per_hour;
    double tokens = o->train_tokens > 0 ? o->train_tokens : 1e6;
    out->cost = r->price_per_hour > 0 && r->tokens_per_s > 0 ? r->price_per_hour / 3600.0 * tokens / r->tokens_per_s : 0;
    out->train_time_h = out->train_s / 3600.0;
    if (r->price_per_hour > 0 && (st = quote(ctx, out)) != EC_OK)
        return st;
    out->cost_usd = out->train_s > 0 && strcmp(out->price_currency, "USD") == 0 ? out->cost : 0;
    out->comm = r->comm;
    parts p = per_token(r);
    double tok_step = r->tokens_per_s * r->step_s;
    out->exposed_comm_s = p.comm * tok_step;
    out->recompute_s = p.recompute * tok_step;
    double sb = best != NULL ? score(o, best) : 0;
    out->behind_frac = sb > 0 && isfinite(sb) ? 1 - score(o, r) / sb : 0;
    explain(o, r, best, out);
    return finite_layout(ctx, no_fit, i, out);
}

