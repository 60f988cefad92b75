/*
 * plan.c: the cheapest (or fastest) configuration that meets a deadline, a budget, a GPU count
 * and memory, among the product of a few axes (gpu, num_gpus, precision, ...) over a base
 * config, and the Pareto front of run time against cost.  Every point is predicted by
 * ec_predict (time, memory) and priced by price.c (cost); this file only chooses the batch
 * of a point when none was given, judges each point against the constraints and ranks them.
 * Inputs: a base ec_config, axes of config-key values (checked through ec_config_set), the
 * options of ec_plan_opts (text forms through ec_plan_opts_set).  Shared by C, Lua (ec.plan)
 * and the CLI (epochcast plan).
 */
#include "catalog/catalog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_MAX_AXES 16
#define PLAN_MAX_POINTS 65536      /* a planner's product, not a sweep's: each point bisects memory */
#define PLAN_MSG_MAX 256

typedef struct plan_axis {
    int key;                   /* ec_config_key_index */
    char **values;
    size_t n;
} plan_axis;

typedef struct plan_point {
    ec_config cfg;
    ec_result res;
    ec_plan_verdict verdict;
    char msg[PLAN_MSG_MAX];
    int on_front, best;
} plan_point;

struct ec_plan {
    ec_ctx *ctx;
    ec_config base;
    ec_plan_opts opts;
    plan_axis axes[PLAN_MAX_AXES];
    size_t n_axes;
    plan_point *points;
    size_t n_points;
    long best;
};

/* ---- options ------------------------------------------------------------------------- */

static const char *const opt_keys[] = {"deadline_h", "budget", "max_gpus", "must_fit", "goal", "global_batch",
                                       "max_batch_per_gpu"};
#define N_OPT_KEYS (sizeof opt_keys / sizeof opt_keys[0])

void ec_plan_opts_init(ec_plan_opts *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->must_fit = 1;
    o->goal = EC_PLAN_CHEAPEST;
    o->max_batch_per_gpu = 64;
}

int ec_plan_opts_is_key(const char *key)
{
    for (size_t i = 0; key != NULL && i < N_OPT_KEYS; i++)
        if (strcmp(key, opt_keys[i]) == 0)
            return 1;
    return 0;
}

int ec_plan_opts_set(ec_ctx *ctx, ec_plan_opts *o, const char *key, const char *value)
{
    if (ctx == NULL)
        return EC_EMISUSE;
    if (o == NULL || key == NULL || value == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_plan_opts_set: NULL argument");
    double d;
    long l;
    if (strcmp(key, "goal") == 0) {
        if (strcmp(value, "cheapest") == 0)
            o->goal = EC_PLAN_CHEAPEST;
        else if (strcmp(value, "fastest") == 0)
            o->goal = EC_PLAN_FASTEST;
        else
            return eci_error(ctx, EC_EINVAL, "plan key 'goal': '%s' is not one of cheapest, fastest", value);
        return EC_OK;
    }
    if (strcmp(key, "must_fit") == 0) {
        if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0 || strcmp(value, "yes") == 0)
            o->must_fit = 1;
        else if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0 || strcmp(value, "no") == 0)
            o->must_fit = 0;
        else
            return eci_error(ctx, EC_EINVAL, "plan key 'must_fit': '%s' is not one of 0, 1, true, false, yes, no",
                             value);
        return EC_OK;
    }
    if (strcmp(key, "deadline_h") == 0 || strcmp(key, "budget") == 0) {
        if (eci_parse_double(value, &d) != 0 || !(d > 0) || d > 1e12)
            return eci_error(ctx, EC_EINVAL, "plan key '%s': '%s' is not a number in (0, 1e12]", key, value);
        if (key[0] == 'd')
            o->deadline_s = d * 3600.0;
        else
            o->budget = d;
        return EC_OK;
    }
    if (strcmp(key, "max_gpus") == 0 || strcmp(key, "global_batch") == 0 || strcmp(key, "max_batch_per_gpu") == 0) {
        long hi = key[0] == 'g' ? 1L << 30 : 65536;
        if (eci_parse_long(value, &l) != 0 || l < 1 || l > hi)
            return eci_error(ctx, EC_EINVAL, "plan key '%s': '%s' is not an integer in [1, %ld]", key, value, hi);
        if (key[0] == 'g')
            o->global_batch = (int)l;
        else if (strcmp(key, "max_gpus") == 0)
            o->max_gpus = (int)l;
        else
            o->max_batch_per_gpu = (int)l;
        return EC_OK;
    }
    const char *near = eci_nearest(key, opt_keys, N_OPT_KEYS);
    return eci_error(ctx, EC_ENOTFOUND, "unknown plan key '%s' (did you mean '%s'?)", key, near);
}

const char *ec_plan_verdict_name(ec_plan_verdict v)
{
    static const char *const names[] = {"meets", "refused", "does_not_fit", "too_many_gpus", "no_price", "late",
                                        "over_budget"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "unknown";
}

/* ---- the object ------------------------------------------------------------------------- */

int ec_plan_new(ec_ctx *ctx, const ec_config *base, const ec_plan_opts *opts, ec_plan **out)
{
    if (out != NULL)
        *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (base == NULL || out == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_plan_new: NULL argument");
    ec_plan *p = eci_calloc(ctx, 1, sizeof *p);
    if (p == NULL)
        return EC_ENOMEM;
    p->ctx = ctx;
    p->base = *base;
    if (opts != NULL)
        p->opts = *opts;
    else
        ec_plan_opts_init(&p->opts);
    p->best = -1;
    *out = p;
    return EC_OK;
}

void ec_plan_free(ec_plan *p)
{
    if (p == NULL)
        return;
    ec_ctx *ctx = p->ctx;
    for (size_t a = 0; a < p->n_axes; a++) {
        for (size_t v = 0; v < p->axes[a].n; v++)
            eci_strfree(ctx, p->axes[a].values[v]);
        eci_free(ctx, p->axes[a].values, p->axes[a].n * sizeof *p->axes[a].values);
    }
    eci_free(ctx, p->points, p->n_points * sizeof *p->points);
    eci_free(ctx, p, sizeof *p);
}

int ec_plan_axis(ec_plan *p, const char *key, const char *const *values, size_t n)
{
    if (p == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = p->ctx;
    if (key == NULL || (values == NULL && n > 0))
        return eci_error(ctx, EC_EMISUSE, "ec_plan_axis: NULL argument");
    int k = ec_config_key_index(key);
    if (k < 0) {
        ec_config scratch = p->base;
        return ec_config_set(ctx, &scratch, key, ""); /* the unknown-key message, with the nearest key */
    }
    if (n == 0)
        return eci_error(ctx, EC_EINVAL, "plan axis '%s' has no values", key);
    if (p->n_axes == PLAN_MAX_AXES)
        return eci_error(ctx, EC_EINVAL, "a plan has at most %d axes", PLAN_MAX_AXES);
    for (size_t a = 0; a < p->n_axes; a++)
        if (p->axes[a].key == k)
            return eci_error(ctx, EC_EINVAL, "plan axis '%s' is given twice", key);
    for (size_t v = 0; v < n; v++) { /* every value checked once, before any prediction */
        ec_config scratch = p->base;
        int rc = ec_config_set(ctx, &scratch, key, values[v]);
        if (rc != EC_OK)
            return rc;
    }
    plan_axis *ax = &p->axes[p->n_axes];
    if ((ax->values = eci_calloc(ctx, n, sizeof *ax->values)) == NULL)
        return EC_ENOMEM;
    for (size_t v = 0; v < n; v++)
        if ((ax->values[v] = eci_strdup(ctx, values[v])) == NULL) {
            for (size_t w = 0; w < v; w++)
                eci_strfree(ctx, ax->values[w]);
            eci_free(ctx, ax->values, n * sizeof *ax->values);
            ax->values = NULL;
            return EC_ENOMEM;
        }
    ax->key = k;
    ax->n = n;
    p->n_axes++;
    return EC_OK;
}

/* ---- one point ---------------------------------------------------------------------------- */

static int set_int(ec_ctx *ctx, ec_config *cfg, const char *key, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    return ec_config_set(ctx, cfg, key, buf);
}

static int key_is_set(const ec_config *cfg, const char *key)
{
    int i = ec_config_key_index(key);
    return i >= 0 && ec_config_is_set(cfg, (size_t)i);
}

/* Does batch b fit?  (ec_max_batch with limit b answers b exactly when it does.) */
static int fits(ec_ctx *ctx, ec_config *cfg, int b, int *ok)
{
    int got = 0;
    cfg->batch_per_gpu = b;
    int rc = ec_max_batch(ctx, cfg, b, &got);
    *ok = got == b;
    return rc;
}

/* The batch of a point that gave none (ec_plan_opts): a status of ec_predict's kind, or
 * EC_OK with *no_fit set when not even batch 1 fits. */
static int choose_batch(ec_plan *p, ec_config *cfg, int *no_fit, char *msg)
{
    ec_ctx *ctx = p->ctx;
    *no_fit = 0;
    if (key_is_set(cfg, "batch_per_gpu"))
        return EC_OK;
    int rc, ok;
    if (p->opts.global_batch > 0) {
        /* the same training on every point: batch_per_gpu x num_gpus x grad_accum = global_batch,
         * halving the micro-batch and doubling grad_accum until it fits (unless grad_accum is given) */
        long n = cfg->num_gpus, ga = cfg->grad_accum;
        if (p->opts.global_batch % (n * ga) != 0) {
            snprintf(msg, PLAN_MSG_MAX, "global_batch %d is not a multiple of num_gpus %ld x grad_accum %ld",
                     p->opts.global_batch, n, ga);
            return EC_EINVAL;
        }
        long b = p->opts.global_batch / (n * ga);
        int ga_given = key_is_set(cfg, "grad_accum");
        while ((rc = fits(ctx, cfg, (int)b, &ok)) == EC_OK && !ok && !ga_given && b % 2 == 0) {
            b /= 2;
            ga *= 2;
        }
        if (rc != EC_OK)
            return rc;
        *no_fit = !ok;
        if ((rc = set_int(ctx, cfg, "batch_per_gpu", b)) != EC_OK)
            return rc;
        return ga != cfg->grad_accum ? set_int(ctx, cfg, "grad_accum", ga) : EC_OK;
    }
    /* the largest power of two up to max_batch_per_gpu that fits */
    int mb = 0;
    cfg->batch_per_gpu = 1;
    if ((rc = ec_max_batch(ctx, cfg, p->opts.max_batch_per_gpu, &mb)) != EC_OK)
        return rc;
    int b = 1;
    while (b * 2 <= mb)
        b *= 2;
    *no_fit = mb == 0;
    return set_int(ctx, cfg, "batch_per_gpu", b);
}

static double hours(double s)
{
    return s / 3600.0;
}

/* A point the model does not fit with data parallelism (DDP) on: may its layout be searched?
 * Only on several GPUs, when the point gives no layout of its own (strategy, degrees, batch). */
static int layout_searchable(const ec_config *given)
{
    static const char *const layout_keys[] = {"strategy", "sharding", "zero_stage", "tp", "pp", "cp", "ep",
                                              "batch_per_gpu", "grad_accum", "checkpointing", "offload"};
    if (given->num_gpus < 2)
        return 0;
    for (size_t k = 0; k < sizeof layout_keys / sizeof layout_keys[0]; k++)
        if (key_is_set(given, layout_keys[k]))
            return 0;
    return 1;
}

static int opt_set_num(ec_optimize *o, const char *key, double v)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    return ec_optimize_set(o, key, buf);
}

/* The layout search (optimize.c) for a point the model does not fit on with DDP: the cheapest
 * (goal cheapest) or fastest layout on the point's GPUs for the plan's global batch, else for
 * num_gpus x each power of two up to max_batch_per_gpu samples; *cfg becomes the best layout
 * that fits, *found 0 when none does.  msg says what was chosen. */
static int search_layout(ec_plan *p, const ec_config *given, const char *goal, ec_config *cfg, int *found,
                         int *no_price, char *msg)
{
    ec_ctx *ctx = p->ctx;
    *found = *no_price = 0;
    ec_config base = *given;
    base.dataset_samples = base.train_tokens = base.train_samples = 0; /* the run's length: options below */
    ec_optimize *o = NULL;
    int rc = ec_optimize_new(ctx, &base, &o);
    char list[64 * 24] = "";
    if (p->opts.global_batch > 0) {
        snprintf(list, sizeof list, "%d", p->opts.global_batch);
    } else {
        size_t len = 0;
        for (long b = 1; b <= p->opts.max_batch_per_gpu && len + 24 < sizeof list; b *= 2)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%ld", len ? "," : "", b * given->num_gpus);
    }
    char n[16];
    snprintf(n, sizeof n, "%d", given->num_gpus);
    if (rc == EC_OK)
        rc = ec_optimize_set(o, "gpu", given->gpu);
    if (rc == EC_OK)
        rc = ec_optimize_set(o, "num_gpus", n);
    if (rc == EC_OK)
        rc = ec_optimize_set(o, "global_batch", list);
    if (rc == EC_OK)
        rc = ec_optimize_set(o, "goal", goal);
    if (rc == EC_OK)
        rc = given->train_tokens > 0 ? opt_set_num(o, "train_tokens", given->train_tokens)
                                     : opt_set_num(o, "train_samples", given->train_samples > 0
                                                                          ? given->train_samples
                                                                          : given->dataset_samples * given->epochs);
    if (rc == EC_OK)
        rc = ec_optimize_run(o);
    ec_optimize_layout best;
    if (rc == EC_OK && ec_optimize_count(o) > 0 && (rc = ec_optimize_get(o, 0, 0, &best)) == EC_OK) {
        *cfg = best.config;
        /* the run's length as the point gave it */
        cfg->dataset_samples = given->dataset_samples;
        cfg->train_tokens = given->train_tokens;
        cfg->train_samples = given->train_samples;
        char strat[EC_NAME_MAX] = "", prec[EC_NAME_MAX] = "", ckpt[EC_NAME_MAX] = "";
        ec_config_get(cfg, cfg->strategy == EC_STRATEGY_FSDP ? "sharding" : "strategy", strat, sizeof strat);
        ec_config_get(cfg, "precision", prec, sizeof prec);
        ec_config_get(cfg, "checkpointing", ckpt, sizeof ckpt);
        snprintf(msg, PLAN_MSG_MAX, "does not fit with ddp: layout searched (%zu fit): %s%s%s, dp %d x tp %d x pp %d "
                 "x cp %d, micro-batch %d x %d steps, checkpointing %s, %s", ec_optimize_count(o),
                 cfg->strategy == EC_STRATEGY_FSDP ? "fsdp/" : "", strat,
                 cfg->strategy == EC_STRATEGY_ZERO ? (cfg->zero_stage == 3 ? "-3" : cfg->zero_stage == 2 ? "-2" : "-1")
                                                   : "",
                 best.dp, cfg->tp, cfg->pp, cfg->cp, cfg->batch_per_gpu, cfg->grad_accum, ckpt, prec);
        *found = 1;
    } else if (rc != EC_OK) {
        snprintf(msg, PLAN_MSG_MAX, "layout search: %s", ec_ctx_errmsg(ctx));
    } else {
        ec_optimize_stats st;
        ec_optimize_stats_get(o, &st);
        *no_price = st.no_price > 0;
    }
    ec_optimize_free(o);
    return rc;
}

/* Predict one point and judge it against the constraints. */
static void run_point(ec_plan *p, plan_point *pt)
{
    ec_ctx *ctx = p->ctx;
    const ec_plan_opts *o = &p->opts;
    int no_fit = 0;
    char msg[PLAN_MSG_MAX] = "";
    int rc = EC_OK;
    if (!(pt->cfg.dataset_samples > 0) && !(pt->cfg.train_tokens > 0) && !(pt->cfg.train_samples > 0)) {
        snprintf(pt->msg, sizeof pt->msg, "a plan needs the run's length: train_tokens, train_samples or "
                 "dataset_samples (the samples of one epoch, with epochs)");
        pt->verdict = EC_PLAN_REFUSED;
        return;
    }
    if (o->max_gpus > 0 && pt->cfg.num_gpus > o->max_gpus) { /* no need to predict it */
        pt->verdict = EC_PLAN_TOO_MANY_GPUS;
        snprintf(pt->msg, sizeof pt->msg, "num_gpus %d > max_gpus %d", pt->cfg.num_gpus, o->max_gpus);
        return;
    }
    ec_config given = pt->cfg;
    rc = choose_batch(p, &pt->cfg, &no_fit, msg);
    if (rc == EC_OK && no_fit && layout_searchable(&given)) {
        int found = 0, no_price = 0;
        ec_config layout;
        rc = search_layout(p, &given, o->goal == EC_PLAN_CHEAPEST ? "cost" : "train_time", &layout, &found,
                           &no_price, msg);
        if (rc == EC_OK && !found && no_price) /* layouts fit but are not priced: the fastest, judged below */
            rc = search_layout(p, &given, "train_time", &layout, &found, &no_price, msg);
        if (rc == EC_OK && found) {
            pt->cfg = layout;
            no_fit = 0;
        } else if (rc == EC_OK) {
            snprintf(msg, PLAN_MSG_MAX, "no layout of the search fits either (strategy, tp, pp, cp, micro-batch, "
                     "checkpointing)");
        }
    }
    if (rc == EC_OK)
        rc = ec_predict(ctx, &pt->cfg, &pt->res);
    if (rc != EC_OK) {
        pt->verdict = EC_PLAN_REFUSED;
        snprintf(pt->msg, sizeof pt->msg, "%s", msg[0] != '\0' ? msg : ec_ctx_errmsg(ctx));
        return;
    }
    if (msg[0] != '\0') /* the layout searched */
        snprintf(pt->msg, sizeof pt->msg, "%s", msg);
    int need_price = o->goal == EC_PLAN_CHEAPEST || o->budget > 0;
    if (o->must_fit && (no_fit || !pt->res.memory.fits)) {
        const ec_memory *m = &pt->res.memory;
        pt->verdict = EC_PLAN_NO_FIT;
        if (m->at_edge)
            snprintf(pt->msg, sizeof pt->msg, "at the edge of out-of-memory even at batch_per_gpu %d: needs %.1f of "
                     "%.1f GiB, less free than the %.1f GiB headroom", pt->cfg.batch_per_gpu,
                     m->needed_bytes / 1073741824.0, m->capacity_bytes / 1073741824.0, m->headroom_bytes / 1073741824.0);
        else
            snprintf(pt->msg, sizeof pt->msg, "needs %.1f GiB > %.1f GiB even at batch_per_gpu %d%s%s",
                     m->needed_bytes / 1073741824.0, m->capacity_bytes / 1073741824.0, pt->cfg.batch_per_gpu,
                     msg[0] != '\0' ? "; " : "", msg);
    } else if (need_price && !(pt->res.price_per_hour > 0)) {
        pt->verdict = EC_PLAN_NO_PRICE;
        snprintf(pt->msg, sizeof pt->msg, "no price for %d x %s in the price table (give price_per_gpu_hour or "
                 "prices=)", pt->cfg.num_gpus, pt->cfg.gpu);
    } else if (o->deadline_s > 0 && pt->res.run_s > o->deadline_s) {
        pt->verdict = EC_PLAN_LATE;
        snprintf(pt->msg, sizeof pt->msg, "run %.2f h > deadline %.2f h", hours(pt->res.run_s), hours(o->deadline_s));
    } else if (o->budget > 0 && pt->res.cost_run > o->budget) {
        pt->verdict = EC_PLAN_OVER_BUDGET;
        snprintf(pt->msg, sizeof pt->msg, "cost %.2f > budget %.2f", pt->res.cost_run, o->budget);
    } else {
        pt->verdict = EC_PLAN_MEETS;
    }
}

/* A point on the time-against-cost plane: predicted, priced, fits, within max_gpus. */
static int on_plane(const plan_point *pt)
{
    return (pt->verdict == EC_PLAN_MEETS || pt->verdict == EC_PLAN_LATE || pt->verdict == EC_PLAN_OVER_BUDGET) &&
           pt->res.price_per_hour > 0;
}

static int cmp_plane(const void *a, const void *b)
{
    const plan_point *pa = *(const plan_point *const *)a, *pb = *(const plan_point *const *)b;
    if (pa->res.run_s != pb->res.run_s)
        return pa->res.run_s < pb->res.run_s ? -1 : 1;
    if (pa->res.cost_run != pb->res.cost_run)
        return pa->res.cost_run < pb->res.cost_run ? -1 : 1;
    return pa < pb ? -1 : pa > pb;
}

/* The Pareto front: points no other point beats on both run time and cost (ties: the first). */
static int mark_front(ec_plan *p)
{
    size_t n = 0;
    plan_point **order = eci_calloc(p->ctx, p->n_points + 1, sizeof *order);
    if (order == NULL)
        return EC_ENOMEM;
    for (size_t i = 0; i < p->n_points; i++)
        if (on_plane(&p->points[i]))
            order[n++] = &p->points[i];
    qsort(order, n, sizeof *order, cmp_plane);
    double best_cost = HUGE_VAL;
    for (size_t i = 0; i < n; i++)
        if (order[i]->res.cost_run < best_cost) {
            order[i]->on_front = 1;
            best_cost = order[i]->res.cost_run;
        }
    eci_free(p->ctx, order, (p->n_points + 1) * sizeof *order);
    return EC_OK;
}

int ec_plan_run(ec_plan *p)
{
    if (p == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = p->ctx;
    size_t total = 1;
    for (size_t a = 0; a < p->n_axes; a++) {
        if (total > PLAN_MAX_POINTS / p->axes[a].n)
            return eci_error(ctx, EC_EINVAL, "a plan has at most %d points; narrow the axes", PLAN_MAX_POINTS);
        total *= p->axes[a].n;
    }
    eci_free(ctx, p->points, p->n_points * sizeof *p->points);
    p->n_points = 0;
    p->best = -1;
    if ((p->points = eci_calloc(ctx, total, sizeof *p->points)) == NULL)
        return EC_ENOMEM;
    p->n_points = total;
    size_t index[PLAN_MAX_AXES] = {0};
    for (size_t i = 0; i < total; i++) {
        plan_point *pt = &p->points[i];
        pt->cfg = p->base;
        for (size_t a = 0; a < p->n_axes; a++) /* checked in ec_plan_axis: cannot fail */
            ec_config_set(ctx, &pt->cfg, ec_config_key_name((size_t)p->axes[a].key), p->axes[a].values[index[a]]);
        run_point(p, pt);
        for (size_t a = p->n_axes; a-- > 0;) { /* odometer: the first axis varies slowest */
            if (++index[a] < p->axes[a].n)
                break;
            index[a] = 0;
        }
    }
    int rc = mark_front(p);
    if (rc != EC_OK)
        return rc;
    /* the best point meeting every constraint: cheapest (then fastest), or fastest (then cheapest) */
    for (size_t i = 0; i < total; i++) {
        const plan_point *pt = &p->points[i];
        if (pt->verdict != EC_PLAN_MEETS)
            continue;
        if (p->best < 0) {
            p->best = (long)i;
            continue;
        }
        const ec_result *a = &pt->res, *b = &p->points[p->best].res;
        int better = p->opts.goal == EC_PLAN_CHEAPEST
                         ? (a->cost_run < b->cost_run || (a->cost_run == b->cost_run && a->run_s < b->run_s))
                         : (a->run_s < b->run_s || (a->run_s == b->run_s && a->cost_run < b->cost_run));
        if (better)
            p->best = (long)i;
    }
    if (p->best >= 0)
        p->points[p->best].best = 1;
    eci_error_clear(ctx);
    return EC_OK;
}

size_t ec_plan_count(const ec_plan *p)
{
    return p != NULL ? p->n_points : 0;
}

long ec_plan_best(const ec_plan *p)
{
    return p != NULL ? p->best : -1;
}

int ec_plan_get(const ec_plan *p, size_t i, ec_plan_point *out)
{
    if (p == NULL || out == NULL || i >= p->n_points)
        return EC_EINVAL;
    const plan_point *pt = &p->points[i];
    out->config = &pt->cfg;
    out->result = &pt->res;
    out->verdict = pt->verdict;
    out->message = pt->msg;
    out->on_front = pt->on_front;
    out->best = pt->best;
    return EC_OK;
}

const ec_plan_opts *ec_plan_options(const ec_plan *p)
{
    return p != NULL ? &p->opts : NULL;
}
