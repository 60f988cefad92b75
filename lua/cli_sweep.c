/*
 * cli_sweep.c: `epochcast sweep key=v1,v2,... key=value ...`: every combination of the axes'
 * values over the fixed keys, predicted by ecL_sweep_run (l_sweep.c; split over MPI ranks by
 * ecC_sweep_run, cli_mpi.c) on worker threads and shown as a table, as CSV (--csv, -o FILE:
 * every config key, the result columns, error) and as a picture through ec.plot (--plot FILE).
 * A point the model refuses is listed at the end and makes the exit status 1.
 */
#include "cli.h"

#include <csv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char sweep_usage[] =
    "usage: epochcast sweep key=v1,v2,... [key=value ...] [--csv] [-o FILE] [--plot FILE] [--threads N]\n"
    "\n"
    "Predict every combination of the listed values (the first axis varies slowest) over\n"
    "the fixed keys, and print one line per point: the axes' values, step time,\n"
    "throughput, GPU utilization, bottleneck, peak memory and whether it fits.  A point\n"
    "the model refuses (an unsupported combination) prints its reason and the sweep goes on.\n"
    "  --csv     print CSV instead: every config key, then the result columns, then error\n"
    "  -o FILE   write that CSV to FILE (atomically)\n"
    "  --plot FILE  draw the points (.png or .svg, needs gnuplot): epoch time (samples/s\n"
    "            without dataset_samples) against the numeric axis with the most values,\n"
    "            one line per combination of the other axes; no numeric axis: the step's\n"
    "            breakdown, one bar per point\n"
    "  --threads N, -j N  predict on N threads (default 0: the cores available, fewer for\n"
    "            a short sweep); the output is the same, row for row, on any number\n"
    "Under mpirun (mpirun -n K epochcast-mpi sweep ...) the points are split over the K\n"
    "processes and rank 0 writes the same output as one process.\n"
    "A comma inside parentheses does not split: lengths=lognormal(60,0.7) is one value.\n"
    "\n"
    "example: epochcast sweep model=bert-base gpu=t4,a100-sxm4-80gb precision=fp32,amp_fp16 batch_per_gpu=8,32\n";

typedef struct cli_sweep {
    lua_State *L;
    ec_ctx *ctx;
    const ecL_axis *axes;
    size_t n_axes;
    int table, csv;            /* print the readable table; print CSV on stdout */
    int *widths;               /* column width of each axis */
    ec_csv_writer *w;          /* -o FILE, or NULL */
    const char **fields;       /* n_cols field pointers */
    char *cells;               /* n_cols x CELL_MAX */
    size_t n_cols;
    size_t refused;            /* points the library refused: listed at the end, exit status 1 */
    int refused_idx;           /* stack index of a table of "  key=v key=v: message" lines */
    int plot_rows;             /* --plot: stack index of the predicted points' rows, else 0 */
    int epoch_unknown;         /* a predicted point without an epoch time (no dataset_samples) */
} cli_sweep;

/* --plot: keep a predicted point as a row for ec.plot: the axes' values (numbers where they
 * read as numbers) and the few result fields a picture uses (a slim row: a long sweep keeps
 * every point until the end). */
static void sweep_plot_row(cli_sweep *sw, const ec_sweep_point *pt)
{
    lua_State *L = sw->L;
    const ec_result *res = pt->result;
    const ec_breakdown *b = &res->breakdown;
    const double fields[] = {res->epoch_s, res->samples_per_s, b->forward_s, b->backward_s, b->optimizer_s,
                             b->h2d_s, b->cpu_overhead_s, b->loader_s, b->comm_s};
    static const char *const names[] = {"epoch_s", "samples_per_s", "breakdown_forward_s", "breakdown_backward_s",
        "breakdown_optimizer_s", "breakdown_h2d_s", "breakdown_cpu_overhead_s", "breakdown_loader_s",
        "breakdown_comm_s"};
    lua_createtable(L, 0, (int)(sizeof names / sizeof names[0] + sw->n_axes + 1));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        lua_pushnumber(L, fields[i]);
        lua_setfield(L, -2, names[i]);
    }
    lua_pushboolean(L, res->memory.fits);
    lua_setfield(L, -2, "fits");
    for (size_t a = 0; a < sw->n_axes; a++) {
        const char *v = sw->axes[a].values[pt->values[a]];
        if (lua_stringtonumber(L, v) == 0)
            lua_pushstring(L, v);
        lua_setfield(L, -2, sw->axes[a].key);
    }
    lua_rawseti(L, sw->plot_rows, (lua_Integer)lua_rawlen(L, sw->plot_rows) + 1);
    sw->epoch_unknown |= !(pt->result->epoch_s > 0);
}

/* --plot FILE: the points through ec.plot.  An axis whose values are all numbers (the one
 * with the most values) is x, the other axes the series, y the epoch time (samples/s when
 * the epoch is unknown); with no numeric axis, the step's breakdown, one bar per point. */
static int sweep_plot(lua_State *L, int ctxbox, const cli_sweep *sw, const char *path)
{
    int x = -1;
    for (size_t a = 0; a < sw->n_axes; a++) {
        int numeric = 1;
        for (size_t v = 0; v < sw->axes[a].n && numeric; v++) {
            numeric = lua_stringtonumber(L, sw->axes[a].values[v]) != 0;
            if (numeric)
                lua_pop(L, 1);
        }
        if (numeric && (x < 0 || sw->axes[a].n > sw->axes[x].n))
            x = (int)a;
    }
    lua_pushvalue(L, ctxbox);                         /* ctx: the picture is written through it */
    lua_pushcclosure(L, ecL_plot, 1);                 /* f */
    lua_createtable(L, 0, 6);                         /* f spec */
    lua_pushstring(L, x >= 0 ? "line" : "breakdown");
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    lua_createtable(L, (int)sw->n_axes, 0);           /* f spec keys: the series (or the bars' labels) */
    for (size_t a = 0, k = 0; a < sw->n_axes; a++) {
        if ((int)a == x)
            continue;
        lua_pushstring(L, sw->axes[a].key);
        lua_rawseti(L, -2, (lua_Integer)++k);
    }
    lua_setfield(L, -2, x >= 0 ? "group" : "x");
    if (x >= 0) {
        lua_pushstring(L, sw->axes[x].key);
        lua_setfield(L, -2, "x");
        lua_pushstring(L, sw->epoch_unknown ? "samples_per_s" : "epoch_s");
        lua_setfield(L, -2, "y");
    }
    lua_pushvalue(L, sw->plot_rows);
    lua_setfield(L, -2, "rows");
    if (lua_rawlen(L, sw->plot_rows) == 0) {
        lua_pop(L, 2);
        return ecC_error("--plot: no point was predicted, nothing to draw");
    }
    lua_call(L, 1, 2);                                /* ok msg */
    int rc = lua_toboolean(L, -2) ? (printf("wrote %s\n", path), 0) : ecC_error("%s", lua_tostring(L, -1));
    lua_pop(L, 2); /* the stack as it was: the caller's text is on top */
    return rc;
}

/* The CSV row of a point: every config key, the result columns (empty after an error), error. */
static void sweep_csv_fields(cli_sweep *sw, const ec_sweep_point *pt)
{
    size_t nk = ec_config_key_count(), nr = ecL_result_column_count();
    /* a predicted point: the values it derived (strategy, task, ...) */
    const ec_config *cfg = pt->status == EC_OK ? pt->resolved : pt->config;
    for (size_t i = 0; i < nk; i++)
        if (ec_config_get_at(cfg, i, sw->cells + i * CELL_MAX, CELL_MAX) != EC_OK)
            sw->cells[i * CELL_MAX] = '\0';
    char *error = sw->cells + (nk + nr) * CELL_MAX;
    error[0] = '\0';
    if (pt->status == EC_OK)
        ecL_result_row_text(pt->result, sw->cells + nk * CELL_MAX, CELL_MAX);
    else {
        for (size_t i = nk; i < nk + nr; i++)
            sw->cells[i * CELL_MAX] = '\0';
        snprintf(error, CELL_MAX, "%s: %s", ecL_status_name(pt->status), pt->message);
    }
    for (size_t i = 0; i < sw->n_cols; i++)
        sw->fields[i] = sw->cells + i * CELL_MAX;
}

static int sweep_point_cli(void *ud, const ec_sweep_point *pt)
{
    cli_sweep *sw = (cli_sweep *)ud;
    const ec_result *res = pt->result;
    if (pt->status != EC_OK) { /* kept for the list at the end (a table: the sweep's box is on top) */
        lua_State *L = sw->L;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addstring(&b, " ");
        for (size_t a = 0; a < sw->n_axes; a++) {
            luaL_addchar(&b, ' ');
            luaL_addstring(&b, sw->axes[a].key);
            luaL_addchar(&b, '=');
            luaL_addstring(&b, sw->axes[a].values[pt->values[a]]);
        }
        luaL_addstring(&b, ": ");
        luaL_addstring(&b, pt->message);
        luaL_addchar(&b, '\n');
        luaL_pushresult(&b);
        lua_rawseti(L, sw->refused_idx, (lua_Integer)++sw->refused);
    }
    if (sw->table) {
        for (size_t a = 0; a < sw->n_axes; a++)
        {
            const char *v = sw->axes[a].values[pt->values[a]];
            ecC_put_escaped(stdout, v); /* a value from the command line, shown as it was given */
            printf("%*s  ", sw->widths[a] > (int)strlen(v) ? sw->widths[a] - (int)strlen(v) : 0, "");
        }
        if (pt->status == EC_OK) {
            char epoch[32], run[32], cost[64] = "-";
            ec_format_duration(res->epoch_s, epoch, sizeof epoch);
            ec_format_duration(res->run_s, run, sizeof run);
            if (res->cost_run > 0) {
                ec_format_money(res->cost_run, res->price_currency, cost, sizeof cost);
            } else if (res->cost_per_million_tokens > 0) { /* no run: a million tokens' worth */
                ec_format_money(res->cost_per_million_tokens, res->price_currency, cost, sizeof cost);
                strncat(cost, "/1Mtok", sizeof cost - strlen(cost) - 1);
            }
            char band[48]; /* the step's p10-p90 in ms, as predict prints it */
            printf("%10.3f %15s %10.1f %10s %10s %16s %5.1f  %-10s %8.2f %-4s%s\n", res->step_s * 1e3,
                   ecC_step_band(res, band, sizeof band),
                   res->samples_per_s, epoch, run, cost, res->gpu_util_frac * 100, ec_bottleneck_name(res->bottleneck),
                   res->memory.peak_bytes / GIB, res->memory.fits ? "yes" : "no",
                   res->warning_text[0] != '\0' ? "  *" : "");
        } else {
            fputs("error: ", stdout);
            ecC_put_escaped(stdout, pt->message);
            putchar('\n');
        }
    }
    if (sw->plot_rows != 0 && pt->status == EC_OK)
        sweep_plot_row(sw, pt);
    if (sw->csv || sw->w != NULL) {
        sweep_csv_fields(sw, pt);
        if (sw->csv)
            (void)ec_csv_print_row(stdout, sw->fields, sw->n_cols);
        if (sw->w != NULL)
            return ec_csv_row(sw->w, sw->fields, sw->n_cols);
    }
    return EC_OK;
}

/* sweep's command line: the fixed keys (key=value) set in base, the axes (key=v1,v2,...: their
 * words kept on the stack), the options. */
typedef struct sweep_args {
    ec_config base;
    ecL_axis axes[ECL_SWEEP_MAX_AXES];
    size_t n_axes;
    const char *out, *plot; /* -o FILE, --plot FILE; NULL without */
    int csv, threads;
} sweep_args;

/* Parse sweep's arguments into sa.  Returns -1 when the command should go on, else the exit
 * status (a usage error, a fixed key the library refuses). */
static int parse_sweep_args(lua_State *L, ec_ctx *ctx, int argc, char **argv, sweep_args *sa)
{
    ec_config_init(&sa->base);
    sa->n_axes = 0;
    sa->out = sa->plot = NULL;
    sa->csv = sa->threads = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const char *eq = strchr(a, '=');
        int m;
        if (strcmp(a, "--csv") == 0) {
            sa->csv = 1;
        } else if ((m = ecC_opt_value(argc, argv, &i, "--output", "-o", &v)) != 0) {
            if (m < 0)
                return ecC_usage_error("sweep", "sweep: %s needs a file name", a);
            sa->out = v;
        } else if ((m = ecC_opt_value(argc, argv, &i, "--plot", NULL, &v)) != 0) {
            if (m < 0)
                return ecC_usage_error("sweep", "sweep: %s needs a file name (.png or .svg)", a);
            sa->plot = v;
            size_t len = strlen(v); /* said now, not after a long sweep */
            if (len < 5 || (strcasecmp(v + len - 4, ".png") != 0 && strcasecmp(v + len - 4, ".svg") != 0))
                return ecC_usage_error("sweep", "sweep: --plot '%s' must end in .png or .svg", v);
        } else if ((m = ecC_opt_value(argc, argv, &i, "--threads", "-j", &v)) != 0) {
            if (m < 0 || (sa->threads = ecC_threads_arg(v)) < 0)
                return ecC_usage_error("sweep", "sweep: %s needs a number of threads from 0 (the cores available) to %d",
                                   a, ECL_SWEEP_MAX_THREADS);
        } else if (a[0] == '-') {
            return ecC_usage_error("sweep", "sweep: unknown option '%s'", a);
        } else if (eq == NULL) {
            return ecC_usage_error("sweep", "sweep: expected key=value or key=v1,v2,..., got '%s'", a);
        } else {
            char *value;
            char *word = ecC_key_word(L, a, eq, &value);
            const char **parts;
            size_t n = ecC_split_kept(L, value, &parts);
            if (n == 1) {
                if (ec_config_set(ctx, &sa->base, word, value) != EC_OK)
                    return ecC_error("%s", ec_ctx_errmsg(ctx));
            } else {
                if (sa->n_axes == ECL_SWEEP_MAX_AXES)
                    return ecC_usage_error("sweep", "sweep: at most %d axes", ECL_SWEEP_MAX_AXES);
                sa->axes[sa->n_axes++] = (ecL_axis){word, n, parts};
            }
        }
    }
    if (sa->n_axes == 0)
        return ecC_usage_error("sweep", "sweep: no axis; give at least one key=v1,v2,...");
    return -1;
}

/* The sweep's columns (every config key, the result columns, error: their names after the
 * n_cols cells' pointers in fields) and each axis's width in the table, in userdata on the stack. */
static void sweep_columns(lua_State *L, cli_sweep *sw)
{
    sw->n_cols = ec_config_key_count() + ecL_result_column_count() + 1;
    sw->fields = (const char **)lua_newuserdatauv(L, 2 * sw->n_cols * sizeof *sw->fields, 0);
    sw->cells = (char *)lua_newuserdatauv(L, sw->n_cols * CELL_MAX, 0);
    sw->widths = (int *)lua_newuserdatauv(L, sw->n_axes * sizeof *sw->widths, 0);
    for (size_t c = 0; c < sw->n_cols; c++) {
        size_t nk = ec_config_key_count(), nr = ecL_result_column_count();
        sw->fields[sw->n_cols + c] = c < nk        ? ec_config_key_name(c)
                                     : c < nk + nr ? ecL_result_column_name(c - nk)
                                                   : "error";
    }
    for (size_t a = 0; a < sw->n_axes; a++) {
        sw->widths[a] = (int)strlen(sw->axes[a].key);
        for (size_t v = 0; v < sw->axes[a].n; v++)
            if ((int)strlen(sw->axes[a].values[v]) > sw->widths[a])
                sw->widths[a] = (int)strlen(sw->axes[a].values[v]);
    }
}

/* Push the refused points' lines (sw->refused_idx) as one text, listed after the table. */
static void push_refused_text(lua_State *L, const cli_sweep *sw)
{
    luaL_Buffer refused_text;
    luaL_buffinit(L, &refused_text);
    for (size_t r = 1; r <= sw->refused; r++) {
        lua_rawgeti(L, sw->refused_idx, (lua_Integer)r);
        luaL_addvalue(&refused_text);
    }
    luaL_pushresult(&refused_text);
}

int ecC_cmd_sweep(lua_State *L, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (ecC_is_help(argv[i]))
            return fputs(sweep_usage, stdout), 0;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    int ctxbox = lua_gettop(L);
    sweep_args sa;
    int code = parse_sweep_args(L, ctx, argc, argv, &sa);
    if (code >= 0)
        return code;
    const ec_config *base = &sa.base;
    const ecL_axis *axes = sa.axes;
    size_t n_axes = sa.n_axes;
    const char *out = sa.out, *plot = sa.plot;
    int csv = sa.csv, threads = sa.threads;
    char msg[EC_WARNING_TEXT_MAX];
    size_t total = 0;
    if (ecL_sweep_check(ctx, base, axes, n_axes, &total, msg, sizeof msg) != EC_OK)
        return ecC_error("%s", msg);

    lua_newtable(L); /* the refused points' lines */
    cli_sweep sw = {L, ctx, axes, n_axes, !csv, csv, NULL, NULL, NULL, NULL, 0, 0, lua_gettop(L), 0, 0};
    if (plot != NULL && ecC_mpi_rank() == 0) { /* under mpirun rank 0 draws */
        lua_newtable(L);
        sw.plot_rows = lua_gettop(L);
    }
    sweep_columns(L, &sw);
    void **wslot = ecL_newbox(L, ecL_abort_csv);
    int wbox = lua_gettop(L);
    if (ecC_mpi_rank() != 0)
        out = NULL; /* under mpirun rank 0 writes the file */
    int ready = EC_OK;
    if (out != NULL) {
        ready = ec_csv_open(ctx, out, &sw.w);
        *wslot = sw.w;
        if (ready == EC_OK)
            ready = ec_csv_row(sw.w, sw.fields + sw.n_cols, sw.n_cols);
    }
    /* Under mpirun every rank learns whether rank 0 can write -o (a link, a FIFO, a folder or an
     * input is refused there) before any of them starts: none is left waiting for it. */
    if (ecC_mpi_agree(ready != EC_OK))
        return ecC_error("%s", ready != EC_OK ? ec_ctx_errmsg(ctx) : "another MPI rank cannot start the sweep");
    if (csv)
        (void)ec_csv_print_row(stdout, sw.fields + sw.n_cols, sw.n_cols);
    if (sw.table) {
        for (size_t a = 0; a < n_axes; a++)
            printf("%-*s  ", sw.widths[a], axes[a].key);
        printf("%10s %15s %10s %10s %10s %16s %5s  %-10s %8s %-4s\n", "step_ms", "p10-p90", "samples/s", "epoch",
               "run", "cost",
               "GPU%", "bottleneck", "peak_GiB", "fits");
    }
    ec_sweep_opts so;
    ec_sweep_opts_init(&so);
    so.threads = threads;
    so.resolve = 1;
    int st = ecC_sweep_run(L, ctx, base, axes, n_axes, &so, sweep_point_cli, &sw, msg, sizeof msg);
    push_refused_text(L, &sw);
    if (st != EC_OK) {
        ec_csv_abort((ec_csv_writer *)ecL_unbox(L, wbox));
        return ecC_error("%s", msg);
    }
    if (out != NULL && ec_csv_close((ec_csv_writer *)ecL_unbox(L, wbox)) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    if (sw.table) {
        printf("%zu points%s\n", total, " (* = see warnings with epochcast predict; epoch needs dataset_samples, "
               "run and cost need dataset_samples, train_tokens or train_samples, else cost is per 1M tokens)");
        if (out != NULL)
            printf("wrote %s\n", out);
    }
    int plot_rc = sw.plot_rows != 0 ? sweep_plot(L, ctxbox, &sw, plot) : 0; /* refused points listed still */
    if (sw.refused > 0) { /* a refused point is an error of the sweep: listed, exit status 1 */
        fprintf(stderr, "epochcast: %zu of %zu sweep points refused:\n", sw.refused, total);
        ecC_put_escaped(stderr, lua_tostring(L, -1));
        return EXIT_FAILURE;
    }
    return plot_rc != 0 ? EXIT_FAILURE : 0;
}
