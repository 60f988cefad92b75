/*
 * cli_validate.c: `epochcast validate RUNS.csv`: every measured run of a run-record file
 * (bench/data/NAME_runs.csv: id, config keys, metric, value, source; streamed by ec_runs_open /
 * ec_runs_next) predicted and compared with its measurement: n, MAPE, share within +-10% and
 * +-20%, bias and p10-p90 coverage, overall, per GPU and per model; -o FILE writes one row per
 * run, --plot FILE draws predicted against measured through ec.plot.
 */
#include "cli.h"

#include <csv.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char validate_usage[] =
    "usage: epochcast validate RUNS.csv [-o OUT.csv] [--profile P] [--plot F] [--allow-paths]\n"
    "\n"
    "Predict every measured run of RUNS.csv (columns: id, config keys, metric, value,\n"
    "source) and print the error: n, MAPE, share within +-10% and +-20%, bias, overall\n"
    "and per GPU and per model.\n"
    "  -o OUT.csv    also write id,gpu,model,metric,predicted,p10,p90,measured,error_pct,\n"
    "                in_p10_p90 per run (p10/p90: the prediction's interval in the run's metric)\n"
    "The p10-p90% column is the share of measured runs inside their predicted p10-p90\n"
    "interval: about 80% when the intervals can be trusted on this hardware.\n"
    "  --plot FILE   draw predicted against measured, one panel per metric with y = x, the\n"
    "                +-20% band and the p10-p90 bars (.png or .svg, needs gnuplot)\n"
    "  --profile P   predict with the calibrated profile P (overrides the runs' profile)\n"
    "  --allow-paths let lengths=/profile= cells name files outside RUNS.csv's folder\n"
    "                (they are taken from that folder and confined to it by default)\n"
    "Options go in any order, each value also as --opt=VALUE.  The file is read as a\n"
    "stream (any size); a progress bar shows on a terminal; Ctrl-C stops cleanly.\n";

typedef struct vrow {
    const char *key; /* metric, GPU or model name of the group */
    double predicted, measured;
    int covered;     /* measured inside the prediction's p10-p90 interval: 1, outside 0, no interval -1 */
    const char *metric; /* ec_metric_name: the plot's panel */
    double p10, p90;    /* the prediction's interval (0 when it has none) */
} vrow;

static int compare_vrow(const void *a, const void *b)
{
    return strcmp(((const vrow *)a)->key, ((const vrow *)b)->key);
}

/* The error statistics of n runs, and the share of them inside their p10-p90 interval
 * (covered[i] 1 inside, 0 outside, -1 no interval). */
static void print_stats(const char *label, const double *p, const double *m, const int *covered, size_t n)
{
    ec_error_stats s;
    ec_error_stats_compute(p, m, n, &s);
    size_t with = 0, inside = 0;
    for (size_t i = 0; i < n; i++) {
        with += covered[i] >= 0;
        inside += covered[i] > 0;
    }
    char cov[16] = "-";
    if (with > 0)
        snprintf(cov, sizeof cov, "%.1f", 100.0 * (double)inside / (double)with);
    printf("  %-24s %6zu %8.1f %9.1f %9.1f %+8.1f %9s", label, s.n, s.mape_frac * 100,
           s.within_10_frac * 100, s.within_20_frac * 100, s.bias_frac * 100, cov);
    /* rows the statistics skip (a prediction or measurement that is not a positive finite
     * number) are said, never silently dropped */
    if (s.n < n)
        printf("  (%zu left out: not a finite positive number)", n - s.n);
    putchar('\n');
}

/* Sort rows by key and print one line per distinct key. */
static void print_groups(lua_State *L, const char *title, vrow *rows, size_t n)
{
    double *p = (double *)lua_newuserdatauv(L, (n + 1) * sizeof *p, 0);
    double *m = (double *)lua_newuserdatauv(L, (n + 1) * sizeof *m, 0);
    int *c = (int *)lua_newuserdatauv(L, (n + 1) * sizeof *c, 0);
    qsort(rows, n, sizeof *rows, compare_vrow);
    printf("by %s\n", title);
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        const char *key = rows[i].key;
        for (; i < n && strcmp(rows[i].key, key) == 0; i++, k++) {
            p[k] = rows[i].predicted;
            m[k] = rows[i].measured;
            c[k] = rows[i].covered;
        }
        print_stats(key, p, m, c, k);
    }
    lua_pop(L, 3);
}

/* Draw predicted against measured, one panel per metric and one colour per GPU, through
 * ec.plot's C function; the out-of-memory outcomes (ooms as validate_run counts them, scored
 * apart) are said in the title. */
static int plot_validate(lua_State *L, int ctxbox, const char *path, const vrow *rows, size_t n, const size_t ooms[4])
{
    char note[160] = "";
    if (ooms[0] + ooms[1] + ooms[2] + ooms[3] > 0)
        snprintf(note, sizeof note, "; out of memory (apart, not drawn): %zu caught, %zu missed, %zu false alarms",
                 ooms[3], ooms[2], ooms[1]);
    lua_pushvalue(L, ctxbox);                         /* ctx: the picture is written through it */
    lua_pushcclosure(L, ecL_plot, 1);                 /* f */
    lua_createtable(L, 0, 4);                         /* f spec */
    lua_pushliteral(L, "validate");
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, "gpu");
    lua_setfield(L, -2, "group");
    lua_pushstring(L, note);
    lua_setfield(L, -2, "note");
    lua_createtable(L, n < INT_MAX ? (int)n : 0, 0);  /* f spec rows */
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 6);
        lua_pushstring(L, rows[i].key);
        lua_setfield(L, -2, "gpu");
        lua_pushstring(L, rows[i].metric);
        lua_setfield(L, -2, "metric");
        if (rows[i].p90 > 0) {
            lua_pushnumber(L, rows[i].p10);
            lua_setfield(L, -2, "p10");
            lua_pushnumber(L, rows[i].p90);
            lua_setfield(L, -2, "p90");
        }
        lua_pushnumber(L, rows[i].predicted);
        lua_setfield(L, -2, "predicted");
        lua_pushnumber(L, rows[i].measured);
        lua_setfield(L, -2, "measured");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "rows");                      /* f spec */
    lua_call(L, 1, 2);                                /* ok msg */
    if (!lua_toboolean(L, -2))
        return ecC_error("%s", lua_tostring(L, -1));
    lua_pop(L, 2);
    printf("wrote %s\n", path);
    return 0;
}

/* Growing arrays of a validation, in one box (freed with it): the groups' rows and the
 * predicted and measured values.  Model names live in the interning table beside it. */
typedef struct vdata {
    vrow *by_gpu, *by_model;
    double *pred, *meas;
    int *covered;
    size_t n, cap;
} vdata;

static void vdata_free(void *p)
{
    vdata *v = p;
    free(v->by_gpu);
    free(v->by_model);
    free(v->pred);
    free(v->meas);
    free(v->covered);
    free(v);
}

static int vdata_push(vdata *v, vrow g, vrow m)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        vrow *a = realloc(v->by_gpu, cap * sizeof *a);
        if (a != NULL)
            v->by_gpu = a;
        vrow *b = a != NULL ? realloc(v->by_model, cap * sizeof *b) : NULL;
        if (b != NULL)
            v->by_model = b;
        double *c = b != NULL ? realloc(v->pred, cap * sizeof *c) : NULL;
        if (c != NULL)
            v->pred = c;
        double *d = c != NULL ? realloc(v->meas, cap * sizeof *d) : NULL;
        if (d != NULL)
            v->meas = d;
        int *e = d != NULL ? realloc(v->covered, cap * sizeof *e) : NULL;
        if (e == NULL)
            return -1;
        v->covered = e;
        v->cap = cap;
    }
    v->by_gpu[v->n] = g;
    v->by_model[v->n] = m;
    v->pred[v->n] = g.predicted;
    v->meas[v->n] = g.measured;
    v->covered[v->n] = g.covered;
    v->n++;
    return 0;
}

/* The string s kept alive as a key of the table at idx; its stable pointer. */
static const char *intern(lua_State *L, int idx, const char *s)
{
    /* t[s] = s, and the text returned is the object the table holds as the value: a string over
     * 40 bytes is not interned by Lua, so an equal one pushed later is another object, collected
     * once popped (ASan found the earlier version reading such a one). */
    lua_pushstring(L, s);                 /* s */
    if (lua_rawget(L, idx) == LUA_TNIL) { /* t[s] or nil */
        lua_pop(L, 1);
        lua_pushstring(L, s);             /* s */
        lua_pushvalue(L, -1);             /* s s */
        lua_pushvalue(L, -1);             /* s s s */
        lua_rawset(L, idx);               /* s: t[s] = s */
    }
    const char *p = lua_tostring(L, -1);  /* alive as the table's value */
    lua_pop(L, 1);
    return p;
}

/* validate's per-run CSV (-o FILE): its columns. */
enum { VALIDATE_COLS = 10, NUM_MAX = 32 };
static const char *const validate_header[VALIDATE_COLS] = {"id", "gpu", "model", "metric", "predicted", "p10", "p90",
                                                           "measured", "error_pct", "in_p10_p90"};

/* What validate keeps while the runs stream by. */
typedef struct vstate {
    lua_State *L;
    ec_ctx *ctx;
    const char *runs_path, *profile;
    vdata *v;         /* the groups' rows */
    int names;        /* stack index of the model names' interning table */
    ec_csv_writer *w; /* -o FILE's writer, or NULL */
    int wbox;         /* stack index of its box */
    size_t ooms[4];   /* metric oom rows by (measured died) x 2 + (predicted not to fit) */
} vstate;

/* Abort -o FILE (nothing half-written is left): before a failure. */
static void validate_abort(vstate *vs)
{
    ec_csv_abort((ec_csv_writer *)ecL_unbox(vs->L, vs->wbox));
}

/* -o FILE's row of run r: g its row in the GPU group (prediction, interval, coverage), model
 * its model, oom whether its metric is the outcome (no error_pct). */
static int validate_csv_row(vstate *vs, const ec_run *r, const vrow *g, const char *model, int oom)
{
    char p[NUM_MAX], mv[NUM_MAX], e[NUM_MAX], p10[NUM_MAX] = "", p90[NUM_MAX] = "", in[4] = "";
    ec_format_number(g->predicted, p, sizeof p);
    ec_format_number(g->measured, mv, sizeof mv);
    if (oom)
        e[0] = '\0';
    else
        ec_format_number((g->predicted - g->measured) / g->measured * 100, e, sizeof e);
    if (g->covered >= 0) {
        ec_format_number(g->p10, p10, sizeof p10);
        ec_format_number(g->p90, p90, sizeof p90);
        snprintf(in, sizeof in, "%d", g->covered);
    }
    const char *fields[VALIDATE_COLS] = {r->id, g->key, model, g->metric, p, p10, p90, mv, e, in};
    return ec_csv_row(vs->w, fields, VALIDATE_COLS);
}

/* Predict run r (read_frac: the share of the file read, for the progress), add it to its GPU's
 * and model's groups or count its oom outcome, and write its -o row.  0, or the exit status
 * after a failure (said, -o aborted). */
static int validate_run(vstate *vs, const ec_run *r, double read_frac)
{
    lua_State *L = vs->L;
    ec_ctx *ctx = vs->ctx;
    ec_config cfg = r->config;
    ec_result res;
    int st = ec_ctx_progress(ctx, "validate", read_frac, 1);
    if (st == EC_OK && vs->profile != NULL)
        st = ec_config_set(ctx, &cfg, "profile", vs->profile);
    if (st == EC_OK)
        st = ec_predict(ctx, &cfg, &res);
    if (st != EC_OK) {
        validate_abort(vs);
        return st == EC_ECANCELED ? ecC_error("%s", ec_ctx_errmsg(ctx))
                                  : ecC_error("%s:%zu: %s", vs->runs_path, r->line, ec_ctx_errmsg(ctx));
    }
    /* Group GPUs by profile id, whatever alias the file used. */
    const char *gpu = NULL;
    size_t gi;
    ec_gpu_info info;
    if (ec_gpu_find(ctx, r->config.gpu, &gi) == EC_OK && ec_gpu_get(ctx, gi, &info) == EC_OK)
        gpu = info.id; /* owned by the context */
    else
        gpu = intern(L, vs->names, r->config.gpu);
    const char *model = intern(L, vs->names, r->config.model);
    double pred = ec_result_metric(&res, r->metric), meas = r->value;
    double lo, hi; /* the prediction's p10-p90 interval in the run's metric */
    ec_result_metric_interval(&res, r->metric, &lo, &hi);
    int covered = hi > 0 ? (meas >= lo && meas <= hi) : -1;
    vrow g = {gpu, pred, meas, covered, ec_metric_name(r->metric), lo, hi}, m = g;
    m.key = model;
    int oom = r->metric == EC_METRIC_OOM; /* an outcome, scored as caught or missed, never in the MAPE */
    if (oom)
        vs->ooms[(meas > 0.5) * 2 + (pred > 0.5)]++;
    else if (vdata_push(vs->v, g, m) != 0) {
        validate_abort(vs);
        return ecC_error("out of memory");
    }
    if (vs->w != NULL && validate_csv_row(vs, r, &g, model, oom) != EC_OK) {
        validate_abort(vs);
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    }
    return 0;
}

/* validate's report: every run, then by metric, by GPU and by model, the oom outcomes on a line
 * apart. */
static void print_validate_report(lua_State *L, const vstate *vs)
{
    const vdata *v = vs->v;
    const size_t *ooms = vs->ooms;
    size_t n = v->n;
    size_t n_oom = ooms[0] + ooms[1] + ooms[2] + ooms[3];
    printf("%s: %zu runs%s%s%s\n", vs->runs_path, n + n_oom, vs->profile != NULL ? ", profile " : "",
           vs->profile != NULL ? vs->profile : "", n_oom > 0 ? " (out-of-memory outcomes apart)" : "");
    printf("  %-24s %6s %8s %9s %9s %8s %9s\n", "", "n", "MAPE_%", "within10%", "within20%", "bias_%", "p10-p90%");
    print_stats("all", v->pred, v->meas, v->covered, n);
    /* each metric scored as itself: an MAPE over seconds and bytes together says little */
    vrow *by_metric = (vrow *)lua_newuserdatauv(L, (n + 1) * sizeof *by_metric, 0);
    for (size_t i = 0; i < n; i++) {
        by_metric[i] = v->by_gpu[i];
        by_metric[i].key = by_metric[i].metric;
    }
    print_groups(L, "metric", by_metric, n);
    lua_pop(L, 1);
    print_groups(L, "GPU", v->by_gpu, n);
    print_groups(L, "model", v->by_model, n);
    if (n_oom > 0)
        printf("  out of memory (metric oom, not in the MAPE): %zu died, %zu predicted not to fit (caught), %zu "
               "predicted to fit (missed); %zu ran, %zu predicted not to fit (false alarm)\n",
               ooms[2] + ooms[3], ooms[3], ooms[2], ooms[0] + ooms[1], ooms[1]);
}

int ecC_cmd_validate(lua_State *L, int argc, char **argv)
{
    ecC_runs_args ra;
    int code = ecC_parse_runs_args("validate", validate_usage, ECC_OPT_PROFILE | ECC_OPT_PLOT, argc, argv, &ra);
    if (code >= 0)
        return code;
    const char *runs_path = ra.runs_path, *out = ra.out, *profile = ra.profile;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    int ctxbox = lua_gettop(L);
    /* The runs stream through a reader: memory for a block of rows, whatever the file's size. */
    void **rslot = ecL_newbox(L, ecL_close_runs_reader);
    int rbox = lua_gettop(L);
    ec_runs_reader *rd = NULL;
    int st = ec_runs_open(ctx, runs_path, ra.flags, &rd);
    *rslot = rd;
    if (st != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    void **vslot = ecL_newbox(L, vdata_free);
    vdata *v = calloc(1, sizeof *v);
    if (v == NULL)
        return ecC_error("out of memory");
    *vslot = v;
    lua_newtable(L);                                  /* model names */
    vstate vs = {L, ctx, runs_path, profile, v, lua_gettop(L), NULL, 0, {0, 0, 0, 0}};
    void **wslot = ecL_newbox(L, ecL_abort_csv);             /* ... writer */
    vs.wbox = lua_gettop(L);
    if (out != NULL) {
        st = ec_csv_open(ctx, out, &vs.w);
        *wslot = vs.w;
        if (st == EC_OK)
            st = ec_csv_row(vs.w, validate_header, VALIDATE_COLS);
        if (st != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
    }
    for (;;) {
        const ec_run *r = NULL;
        if ((st = ec_runs_next(rd, &r)) != EC_OK) {
            validate_abort(&vs);
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        }
        if (r == NULL)
            break;
        if ((code = validate_run(&vs, r, ec_runs_read_frac(rd))) != 0)
            return code;
    }
    ecC_clear_bar();
    ec_runs_close((ec_runs_reader *)ecL_unbox(L, rbox));
    if (vs.w != NULL && ec_csv_close((ec_csv_writer *)ecL_unbox(L, vs.wbox)) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    print_validate_report(L, &vs);
    return ra.plot != NULL ? plot_validate(L, ctxbox, ra.plot, v->by_gpu, v->n, vs.ooms) : 0;
}
