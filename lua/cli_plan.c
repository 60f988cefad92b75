/*
 * cli_plan.c: `epochcast plan`, the CLI face of ec_plan (core/src/search/plan.c).  Words are the
 * config vocabulary: key=v1,v2,... is an axis, key=value the base config, and the plan keys
 * (deadline_h, budget, max_gpus, must_fit, goal, global_batch, max_batch_per_gpu) set the
 * constraints.  It prints the chosen configuration and the Pareto front of run time against
 * cost, writes every point as CSV (plan.csv unless -o) and draws the front through ec.plot's
 * scatter kind (plan.png unless --plot or --no-plot).  Exit status 0 when a configuration
 * meets every constraint, 1 when none does (the files are written all the same) or on error.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char plan_usage[] =
    "usage: epochcast plan key=v1,v2,... [key=value ...] [plan keys] [-o FILE] [--plot FILE] [--no-plot] [--csv]\n"
    "\n"
    "Find the cheapest (or fastest) configuration that meets a deadline, a budget, a GPU\n"
    "count and memory, among every combination of the listed values (the first axis varies\n"
    "slowest) over the fixed keys, and the Pareto front of run time against cost.  Each\n"
    "point is predicted as `epochcast predict` would and priced from the price table\n"
    "(models/prices.csv, prices=FILE, provider=NAME or price_per_gpu_hour=X).  A plan needs\n"
    "the run's length: train_tokens=N, train_samples=N or dataset_samples=N (with epochs [1]).\n"
    "\n"
    "plan keys:\n"
    "  deadline_h=H          the run must finish within H hours\n"
    "  budget=X              the run must cost at most X (the price table's currency)\n"
    "  max_gpus=N            at most N GPUs\n"
    "  must_fit=0|1          predicted peak memory must fit the GPU [1]\n"
    "  goal=cheapest|fastest what the chosen configuration minimises [cheapest]\n"
    "  global_batch=N        every point trains with N samples per optimizer step\n"
    "                        (batch_per_gpu x num_gpus x grad_accum; grad_accum grows until it fits)\n"
    "  max_batch_per_gpu=N   without batch_per_gpu or global_batch, each point uses the largest\n"
    "                        power of two up to N that fits [64]\n"
    "\n"
    "  -o FILE       write every point as CSV to FILE [plan.csv]: config keys, results,\n"
    "                verdict, message, on_front, best\n"
    "  --plot FILE   draw cost against run time, the front and the choice (.png/.svg) [plan.png]\n"
    "  --no-plot     no picture\n"
    "  --csv         print the CSV on stdout instead of the table\n"
    "\n"
    "example: epochcast plan model=bert-base gpu=t4,a10,a100-sxm4-80gb,h100-sxm5-80gb num_gpus=1,2,4,8 \\\n"
    "             dataset_samples=1000000 epochs=3 deadline_h=10\n"
    "         epochcast plan model=llama-3.1-70b gpu=h100-sxm5-80gb,b200 num_gpus=64,128,256 train_tokens=1e12\n";

#define CELL 512
#define MAX_AXES 16

typedef struct axis_words {
    const char *key;
    const char **values;
    size_t n;
} axis_words;

/* The CSV of every point: header row then one row per point, written to w and/or stdout. */
static int plan_csv(lua_State *L, ec_ctx *ctx, const ec_plan *plan, ec_csv_writer *w, int to_stdout)
{
    size_t nk = ec_config_key_count(), nr = ecL_result_column_count(), n_cols = nk + nr + 4;
    const char **fields = (const char **)lua_newuserdatauv(L, n_cols * sizeof *fields, 0);
    char *cells = (char *)lua_newuserdatauv(L, n_cols * CELL, 0);
    static const char *const tail[] = {"verdict", "message", "on_front", "best"};
    for (size_t c = 0; c < n_cols; c++)
        fields[c] = c < nk ? ec_config_key_name(c) : c < nk + nr ? ecL_result_column_name(c - nk) : tail[c - nk - nr];
    if (w != NULL && ec_csv_row(w, fields, n_cols) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    if (to_stdout)
        (void)ec_csv_print_row(stdout, fields, n_cols);
    for (size_t i = 0; i < ec_plan_count(plan); i++) {
        ec_plan_point pt;
        ec_plan_get(plan, i, &pt);
        int predicted = pt.verdict != EC_PLAN_REFUSED && pt.verdict != EC_PLAN_TOO_MANY_GPUS;
        ec_config shown = *pt.config;
        if (predicted)
            ec_config_resolve(ctx, pt.config, &shown);
        for (size_t c = 0; c < n_cols; c++) {
            char *cell = cells + c * CELL;
            cell[0] = '\0';
            if (c < nk) {
                if (ec_config_get(&shown, ec_config_key_name(c), cell, CELL) != EC_OK)
                    cell[0] = '\0';
            } else if (c < nk + nr) {
                if (predicted)
                    ecL_result_column_text(pt.result, c - nk, cell, CELL);
            } else if (c == nk + nr) {
                snprintf(cell, CELL, "%s", ec_plan_verdict_name(pt.verdict));
            } else if (c == nk + nr + 1) {
                snprintf(cell, CELL, "%s", pt.message);
            } else {
                snprintf(cell, CELL, "%d", c == nk + nr + 2 ? pt.on_front : pt.best);
            }
            fields[c] = cell;
        }
        if (w != NULL && ec_csv_row(w, fields, n_cols) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        if (to_stdout)
            (void)ec_csv_print_row(stdout, fields, n_cols);
    }
    lua_pop(L, 2);
    return 0;
}

/* One line of the table: the axes' values, the batch, run time, cost, price, verdict. */
static void print_point(const ec_plan *plan, size_t i, const axis_words *axes, size_t n_axes, const int *width,
                        int show_accum)
{
    ec_plan_point pt;
    ec_plan_get(plan, i, &pt);
    printf("  %s", pt.best ? "*" : " ");
    for (size_t a = 0; a < n_axes; a++) {
        char buf[EC_PATH_MAX];
        if (ec_config_get(pt.config, axes[a].key, buf, sizeof buf) != EC_OK)
            buf[0] = '\0';
        printf(" %-*s", width[a], buf);
    }
    printf(" %5d", pt.config->batch_per_gpu);
    if (show_accum)
        printf(" %5d", pt.config->grad_accum);
    char run[32], cost[48], per_h[48];
    printf(" %10s %14s %12s  %-11s %s\n", ec_format_duration(pt.result->run_s, run, sizeof run),
           ec_format_money(pt.result->cost_run, pt.result->price_currency, cost, sizeof cost),
           ec_format_money(pt.result->price_per_hour, pt.result->price_currency, per_h, sizeof per_h),
           ec_plan_verdict_name(pt.verdict), pt.result->price_offer);
}

/* Draw the points through ec.plot's scatter kind: 0 drawn, -1 nothing drawn (said why), 1 error. */
static int plan_plot(lua_State *L, ec_ctx *ctx, int ctxbox, const ec_plan *plan, const char *path, const char *group,
                     int explicit_path)
{
    const ec_plan_opts *o = ec_plan_options(plan);
    lua_pushvalue(L, ctxbox);                         /* ctx: it knows the inputs (prices=) */
    lua_pushcclosure(L, ecL_plot, 1);                 /* f */
    lua_createtable(L, 0, 10);                        /* f spec */
    lua_pushliteral(L, "scatter");
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, "run_s");
    lua_setfield(L, -2, "x");
    lua_pushliteral(L, "cost_run");
    lua_setfield(L, -2, "y");
    lua_pushstring(L, group);
    lua_setfield(L, -2, "group");
    lua_pushliteral(L, "cost against run time: every point that fits, the Pareto front and the choice");
    lua_setfield(L, -2, "title");
    if (o->deadline_s > 0) {
        lua_pushnumber(L, o->deadline_s);
        lua_setfield(L, -2, "xline");
    }
    if (o->budget > 0) {
        lua_pushnumber(L, o->budget);
        lua_setfield(L, -2, "yline");
    }
    size_t n = ec_plan_count(plan);
    for (size_t i = 0; i < n; i++) {                  /* the y axis in the prices' currency */
        ec_plan_point pt;
        ec_plan_get(plan, i, &pt);
        if (pt.verdict != EC_PLAN_REFUSED && pt.verdict != EC_PLAN_TOO_MANY_GPUS && pt.result->price_currency[0]) {
            lua_pushfstring(L, "cost of the run (%s)", pt.result->price_currency);
            lua_setfield(L, -2, "ylabel");
            break;
        }
    }
    lua_createtable(L, (int)n, 0);                    /* f spec rows */
    lua_Integer k = 0;
    for (size_t i = 0; i < n; i++) {
        ec_plan_point pt;
        ec_plan_get(plan, i, &pt);
        if (pt.verdict != EC_PLAN_MEETS && pt.verdict != EC_PLAN_LATE && pt.verdict != EC_PLAN_OVER_BUDGET)
            continue; /* refused, too big, too many GPUs or unpriced: no point on the plane */
        ecL_push_plan_row(L, ctx, plan, i);           /* f spec rows row */
        lua_rawseti(L, -2, ++k);                      /* f spec rows */
    }
    lua_setfield(L, -2, "rows");                      /* f spec */
    if (k == 0) {
        lua_pop(L, 2);
        printf("no picture: no point is priced and fits\n");
        return -1;
    }
    lua_call(L, 1, 2);                                /* ok msg */
    if (!lua_toboolean(L, -2)) {
        const char *msg = lua_tostring(L, -1);
        int missing = msg != NULL && strncmp(msg, "ENOTFOUND", 9) == 0;
        if (explicit_path || !missing)
            return ecC_error("%s", msg != NULL ? msg : "plot failed");
        printf("no picture: %s\n", msg); /* the default plot, gnuplot absent: not an error */
        lua_pop(L, 2);
        return -1;
    }
    lua_pop(L, 2);
    return 0;
}

/* plan's command line: the base config, the plan keys, the axes (key=v1,v2,...: their words
 * kept on the stack) and the options. */
typedef struct plan_args {
    ec_config base;
    ec_plan_opts opts;
    axis_words axes[MAX_AXES];
    size_t n_axes;
    const char *out, *plot; /* -o FILE [plan.csv], --plot FILE [plan.png]; plot NULL: --no-plot */
    int csv, plot_given;
} plan_args;

/* Parse plan's arguments into pa.  -1 when the command should go on, else the exit status. */
static int parse_plan_args(lua_State *L, ec_ctx *ctx, int argc, char **argv, plan_args *pa)
{
    ec_config_init(&pa->base);
    ec_plan_opts_init(&pa->opts);
    pa->n_axes = 0;
    pa->out = "plan.csv";
    pa->plot = "plan.png";
    pa->csv = pa->plot_given = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (strcmp(a, "--csv") == 0) {
            pa->csv = 1;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--plot") == 0) {
            if (++i >= argc)
                return ecC_usage_error("plan", "plan: %s needs a file name", a);
            if (a[1] == 'o' || a[2] == 'o')
                pa->out = argv[i];
            else {
                pa->plot = argv[i];
                pa->plot_given = 1;
            }
        } else if (strcmp(a, "--no-plot") == 0) {
            pa->plot = NULL;
        } else if (a[0] == '-') {
            return ecC_usage_error("plan", "plan: unknown option '%s'", a);
        } else if (eq == NULL) {
            return ecC_usage_error("plan", "plan: expected key=value or key=v1,v2,..., got '%s'", a);
        } else {
            char *value;
            char *word = ecC_key_word(L, a, eq, &value);
            if (ec_plan_opts_is_key(word)) {
                if (ec_plan_opts_set(ctx, &pa->opts, word, value) != EC_OK)
                    return ecC_error("%s", ec_ctx_errmsg(ctx));
                continue;
            }
            const char **parts;
            size_t n = ecC_split_kept(L, value, &parts);
            if (n == 1) {
                if (ec_config_set(ctx, &pa->base, word, value) != EC_OK)
                    return ecC_error("%s", ec_ctx_errmsg(ctx));
            } else {
                if (pa->n_axes == MAX_AXES)
                    return ecC_usage_error("plan", "plan: at most %d axes", MAX_AXES);
                pa->axes[pa->n_axes++] = (axis_words){word, parts, n};
            }
        }
    }
    return -1;
}

/* The table's first lines: what is planned (model, run length, constraints), how the batch is
 * chosen, the column names. */
static void print_plan_head(const plan_args *pa, size_t n, const int *width, int show_accum)
{
    const ec_config *base = &pa->base;
    const ec_plan_opts *opts = &pa->opts;
    char model[EC_PATH_MAX] = "", length[96] = "";
    ec_config_get(base, "model", model, sizeof model);
    if (base->train_tokens > 0)
        snprintf(length, sizeof length, "%.15g tokens", base->train_tokens);
    else if (base->train_samples > 0)
        snprintf(length, sizeof length, "%.15g samples", base->train_samples);
    else if (base->dataset_samples > 0)
        snprintf(length, sizeof length, "%.15g samples x %d epoch%s", base->dataset_samples, base->epochs,
                 base->epochs > 1 ? "s" : "");
    else
        snprintf(length, sizeof length, "run length per point");
    printf("plan: %s, %s; %zu configuration%s", model[0] ? model : "(model per point)", length, n,
           n == 1 ? "" : "s");
    if (opts->deadline_s > 0)
        printf("; deadline %.4g h", opts->deadline_s / 3600.0);
    if (opts->budget > 0)
        printf("; budget %.6g", opts->budget);
    if (opts->max_gpus > 0)
        printf("; at most %d GPUs", opts->max_gpus);
    printf("; goal %s\n", opts->goal == EC_PLAN_CHEAPEST ? "cheapest" : "fastest");
    if (!ec_config_is_set(base, (size_t)ec_config_key_index("batch_per_gpu")))
        printf("batch_per_gpu: %s\n", opts->global_batch > 0
                                          ? "global_batch / (num_gpus x grad_accum), grad_accum doubled until it fits"
                                          : "the largest power of two that fits, up to max_batch_per_gpu "
                                            "(set batch_per_gpu= or global_batch= to fix it)");
    printf("  %s", " ");
    for (size_t a = 0; a < pa->n_axes; a++)
        printf(" %-*s", width[a], pa->axes[a].key);
    printf(" %5s", "batch");
    if (show_accum)
        printf(" %5s", "accum");
    printf(" %10s %14s %12s  %-11s %s\n", "run", "cost", "per hour", "verdict", "offer");
}

/* The chosen point (best, -1 for none) and its offer. */
static void print_plan_choice(const ec_plan *plan, long best, const plan_args *pa, const int *width, int show_accum)
{
    if (best < 0) {
        printf("no configuration meets every constraint\n");
        return;
    }
    printf("chosen (%s meeting every constraint):\n", pa->opts.goal == EC_PLAN_CHEAPEST ? "cheapest" : "fastest");
    print_point(plan, (size_t)best, pa->axes, pa->n_axes, width, show_accum);
    ec_plan_point bp;
    ec_plan_get(plan, (size_t)best, &bp);
    char cost[48], d[32];
    printf("chosen offer: %s; %s in %s\n", bp.result->price_offer[0] ? bp.result->price_offer : "(no price)",
           ec_format_money(bp.result->cost_run, bp.result->price_currency, cost, sizeof cost),
           ec_format_duration(bp.result->run_s, d, sizeof d));
    if (bp.message[0] != '\0')
        printf("chosen layout: %s\n", bp.message);
}

/* The Pareto front, by run time. */
static void print_plan_front(lua_State *L, const ec_plan *plan, const plan_args *pa, const int *width,
                             int show_accum)
{
    size_t n = ec_plan_count(plan);
    size_t *order = (size_t *)lua_newuserdatauv(L, (n + 1) * sizeof *order, 0);
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        ec_plan_point pt;
        ec_plan_get(plan, i, &pt);
        if (!pt.on_front)
            continue;
        size_t at = nf++;
        while (at > 0) {
            ec_plan_point prev;
            ec_plan_get(plan, order[at - 1], &prev);
            if (prev.result->run_s <= pt.result->run_s)
                break;
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    printf("Pareto front of run time against cost (%zu point%s; * = chosen):\n", nf, nf == 1 ? "" : "s");
    for (size_t f = 0; f < nf; f++)
        print_point(plan, order[f], pa->axes, pa->n_axes, width, show_accum);
}

/* How many points got each verdict, then why each point off the plane is there. */
static void print_plan_verdicts(const ec_plan *plan, const plan_args *pa)
{
    size_t n = ec_plan_count(plan);
    size_t counts[EC_PLAN_OVER_BUDGET + 1] = {0};
    for (size_t i = 0; i < n; i++) {
        ec_plan_point pt;
        ec_plan_get(plan, i, &pt);
        counts[pt.verdict]++;
    }
    printf("verdicts:");
    for (int v = 0; v <= EC_PLAN_OVER_BUDGET; v++)
        if (counts[v] > 0)
            printf(" %s %zu", ec_plan_verdict_name((ec_plan_verdict)v), counts[v]);
    printf("\n");
    for (size_t i = 0; i < n; i++) { /* why a point has no place on the plane */
        ec_plan_point pt;
        ec_plan_get(plan, i, &pt);
        if (pt.verdict == EC_PLAN_MEETS || pt.verdict == EC_PLAN_LATE || pt.verdict == EC_PLAN_OVER_BUDGET)
            continue;
        printf("  %-13s", ec_plan_verdict_name(pt.verdict));
        for (size_t a = 0; a < pa->n_axes; a++) {
            char buf[EC_PATH_MAX];
            if (ec_config_get(pt.config, pa->axes[a].key, buf, sizeof buf) != EC_OK)
                buf[0] = '\0';
            printf(" %s=%s", pa->axes[a].key, buf);
        }
        printf(": %s\n", pt.message);
    }
}

/* The table (without --csv): the plan, the choice, the front, the verdicts. */
static void print_plan(lua_State *L, const ec_plan *plan, long best, const plan_args *pa)
{
    int width[MAX_AXES], show_accum = pa->opts.global_batch > 0;
    for (size_t a = 0; a < pa->n_axes; a++) {
        width[a] = (int)strlen(pa->axes[a].key);
        for (size_t v = 0; v < pa->axes[a].n; v++)
            if ((int)strlen(pa->axes[a].values[v]) > width[a])
                width[a] = (int)strlen(pa->axes[a].values[v]);
    }
    print_plan_head(pa, ec_plan_count(plan), width, show_accum);
    print_plan_choice(plan, best, pa, width, show_accum);
    print_plan_front(L, plan, pa, width, show_accum);
    print_plan_verdicts(plan, pa);
}

/* Every point as CSV, atomically, to pa->out (none for "-") and with --csv on stdout: 0 or 1. */
static int write_plan_csv(lua_State *L, ec_ctx *ctx, const ec_plan *plan, const plan_args *pa, int *wrote)
{
    void **wslot = ecL_newbox(L, ecL_abort_csv);
    int wbox = lua_gettop(L);
    ec_csv_writer *w = NULL;
    *wrote = 0;
    if (pa->out != NULL && strcmp(pa->out, "-") != 0) {
        int st = ec_csv_open(ctx, pa->out, &w);
        *wslot = w;
        if (st != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
    }
    if (plan_csv(L, ctx, plan, w, pa->csv) != 0)
        return 1;
    if (w != NULL && ec_csv_close((ec_csv_writer *)ecL_unbox(L, wbox)) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    *wrote = w != NULL;
    return 0;
}

int ecC_cmd_plan(lua_State *L, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (ecC_is_help(argv[i]))
            return fputs(plan_usage, stdout), 0;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    int ctxbox = lua_gettop(L);
    plan_args pa;
    int code = parse_plan_args(L, ctx, argc, argv, &pa);
    if (code >= 0)
        return code;
    const axis_words *axes = pa.axes;
    void **slot = ecL_newbox(L, ecL_free_plan);
    int box = lua_gettop(L);
    ec_plan *plan = NULL;
    int st = ec_plan_new(ctx, &pa.base, &pa.opts, &plan);
    *slot = plan;
    if (st != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    for (size_t a = 0; a < pa.n_axes; a++)
        if (ec_plan_axis(plan, axes[a].key, axes[a].values, axes[a].n) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
    if (ec_plan_run(plan) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    int wrote;
    if (write_plan_csv(L, ctx, plan, &pa, &wrote) != 0)
        return 1;
    long best = ec_plan_best(plan);
    if (!pa.csv) {
        print_plan(L, plan, best, &pa);
        if (wrote)
            printf("wrote %s\n", pa.out);
    }
    if (pa.plot != NULL) {
        const char *group = pa.n_axes > 0 ? axes[0].key : "gpu";
        for (size_t a = 0; a < pa.n_axes; a++)
            if (strcmp(axes[a].key, "gpu") == 0)
                group = "gpu";
        int drawn = plan_plot(L, ctx, ctxbox, plan, pa.plot, group, pa.plot_given);
        if (drawn > 0)
            return 1;
        if (drawn == 0 && !pa.csv)
            printf("wrote %s\n", pa.plot);
    }
    ec_plan_free((ec_plan *)ecL_unbox(L, box));
    return best >= 0 ? 0 : 1;
}
