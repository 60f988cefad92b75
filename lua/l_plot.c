/*
 * l_plot.c: ec.plot{kind=, rows=, path=, ...}, pictures of predictions through gnuplot.
 *
 * Presentation only: it reads rows (from ec.sweep, ec.predict or a validate CSV), writes a
 * gnuplot script and a data file into a fresh temporary folder, runs the gnuplot found on
 * PATH (looked up at run time; a clear nil, message, "ENOTFOUND" when it is missing) and
 * renames the picture into place, so a failure never leaves half an image.  gnuplot runs in
 * a process group of its own: a signal or a scenario's time budget (the host's progress
 * callback, polled while it draws) kills the group and removes the folder, and on Linux it
 * dies with epochcast.  PNG (pngcairo
 * when that terminal exists, else png) or SVG, chosen by the path's extension.
 *
 * Kinds:
 *   line       y against x (a swept key), one line per value of group
 *   breakdown  the step's parts (forward, backward, ...) as stacked bars, one bar per row
 *   memory     peak memory against x with each GPU's capacity as a dashed line
 *   validate   predicted against measured on log axes, with y = x and +-20% lines
 *   scatter    y against x as points, one colour per group, the rows flagged by `front` (a
 *              Pareto front) joined and circled, the `best` row starred, optional xline /
 *              yline (a deadline, a budget) as dashed lines
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, fork, waitpid, kill, nanosleep, dirfd */

#include "lec_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

extern char **environ;

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Picture size in pixels. */
#define PLOT_WIDTH 1000
#define PLOT_HEIGHT 620
/* More bars than this get slanted labels. */
#define BARS_UPRIGHT 6
/* x spans at least this ratio: a log2 axis (batch sizes 1..256). */
#define LOGX_RATIO 8.0

/* The parts of a step, in the order of ec_breakdown, with their legend names. */
static const char *const parts[][2] = {
    {"forward_s", "forward"},     {"backward_s", "backward"}, {"optimizer_s", "optimizer"},
    {"h2d_s", "H2D copy"},        {"cpu_overhead_s", "CPU overhead"},
    {"loader_s", "input loader"}, {"comm_s", "communication"},
};
#define N_PARTS (sizeof parts / sizeof parts[0])

/* ---- reading rows ---------------------------------------------------------------------- */

/* Push row[name]; for a name that l_result.c puts in a subtable ("breakdown_forward_s",
 * "memory_weights_bytes") also look there, so flat CSV rows and nested result rows both work. */
static int push_field(lua_State *L, int row, const char *name)
{
    if (lua_getfield(L, row, name) != LUA_TNIL)
        return lua_type(L, -1);
    static const char *const groups[] = {"breakdown", "memory"};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        size_t len = strlen(groups[g]);
        if (strncmp(name, groups[g], len) == 0 && name[len] == '_') {
            lua_pop(L, 1);
            if (lua_getfield(L, row, groups[g]) == LUA_TTABLE) {
                lua_getfield(L, -1, name + len + 1);
                lua_remove(L, -2);
            }
            return lua_type(L, -1);
        }
    }
    return lua_type(L, -1);
}

/* row[name] as a number (numeric strings from CSV rows too); 0 when it is not one. */
static int field_number(lua_State *L, int row, const char *name, double *x)
{
    push_field(L, row, name);
    int isnum = 0;
    lua_Number v = lua_tonumberx(L, -1, &isnum);
    lua_pop(L, 1);
    *x = (double)v;
    return isnum && isfinite(*x);
}

/* Push the label of a row: the values of the key (a string) or keys (an array of strings)
 * at stack index keys, joined with " ". */
static void push_label(lua_State *L, int row, int keys)
{
    if (lua_type(L, keys) == LUA_TSTRING) {
        push_field(L, row, lua_tostring(L, keys));
        luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);
        return;
    }
    int n = (int)lua_rawlen(L, keys), parts_on_stack = 0;
    luaL_checkstack(L, 2 * n + 2, "too many label keys");
    for (int i = 1; i <= n; i++) {
        if (i > 1) {
            lua_pushliteral(L, " ");
            parts_on_stack++;
        }
        lua_rawgeti(L, keys, i);
        push_field(L, row, luaL_tolstring(L, -1, NULL));
        lua_remove(L, -2);
        lua_remove(L, -2);
        luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);
        parts_on_stack++;
    }
    lua_concat(L, parts_on_stack);
}

/* Does the row carry an error (a sweep point the library refused)? */
static int is_error_row(lua_State *L, int row)
{
    int t = lua_getfield(L, row, "error");
    lua_pop(L, 1);
    return t != LUA_TNIL;
}

/* ---- axis labels and units -------------------------------------------------------------- */

typedef struct axis_unit {
    double scale;
    const char *unit; /* "" for none */
} axis_unit;

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Display unit of a column from its name's unit suffix and the largest value shown. */
static axis_unit unit_of(const char *name, double max_abs)
{
    if (ends_with(name, "_bytes"))
        return (axis_unit){1 / GIB, "GiB"};
    if (ends_with(name, "_frac"))
        return (axis_unit){100, "%"};
    if (ends_with(name, "_ms"))
        return (axis_unit){1, "ms"};
    if (ends_with(name, "_per_s"))
        return (axis_unit){1, "per s"};
    if (ends_with(name, "_s"))
        return max_abs < 1 ? (axis_unit){1e3, "ms"} : max_abs >= 3 * 3600.0 ? (axis_unit){1 / 3600.0, "h"}
                                                                     : (axis_unit){1, "s"};
    return (axis_unit){1, ""};
}

/* Friendly names of the usual axes; others are the key with spaces for underscores. */
static const char *const names[][2] = {
    {"step_s", "step time"},           {"epoch_s", "epoch time"},
    {"run_s", "run time"},             {"samples_per_s", "throughput (samples/s)"},
    {"gpu_util_frac", "GPU utilization"}, {"peak_bytes", "peak GPU memory"},
    {"batch_per_gpu", "batch per GPU (samples)"}, {"num_gpus", "GPUs"},
    {"num_workers", "DataLoader workers"}, {"seq_len", "sequence length (tokens)"},
    {"mfu_frac", "MFU"},               {"grad_accum", "gradient accumulation steps"},
    {"cost_run", "cost of the run"},   {"cost_per_epoch", "cost per epoch"},
    /* validate's metrics (ec_metric_name) */
    {"step_time_ms", "step time"},     {"epoch_time_s", "epoch time"},
    {"tokens_per_s", "throughput (tokens/s)"}, {"reserved_bytes", "reserved memory"},
    {"allocated_bytes", "allocated memory"}, {"train_time_s", "training time"},
    {"first_step_s", "first step time"},
};

/* Push the axis label of a column: "epoch time (s)", "peak GPU memory (GiB)". */
static void push_axis_label(lua_State *L, const char *name, axis_unit u)
{
    const char *nice = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i][0], name) == 0)
            nice = names[i][1];
    if (nice == NULL) {
        luaL_gsub(L, name, "_", " ");
        nice = lua_tostring(L, -1);
    } else {
        lua_pushstring(L, nice);
    }
    if (u.unit[0] != '\0' && strcmp(u.unit, "per s") != 0)
        lua_pushfstring(L, "%s (%s)", nice, u.unit);
    else
        lua_pushstring(L, nice);
    lua_remove(L, -2);
}

/* ---- gnuplot text, built as pieces in a Lua table and joined at the end ------------------ */

typedef struct text {
    lua_State *L;
    int t;            /* stack index of the table of pieces */
    lua_Integer n;
    int width, height; /* the script's picture size in pixels (a kind may grow it) */
} text;

static void text_new(lua_State *L, text *b)
{
    lua_newtable(L);
    b->L = L;
    b->t = lua_gettop(L);
    b->n = 0;
    b->width = PLOT_WIDTH;
    b->height = PLOT_HEIGHT;
}

static void add(text *b, const char *s)
{
    lua_pushstring(b->L, s);
    lua_rawseti(b->L, b->t, ++b->n);
}

/* Add the value on top of the stack (popped). */
static void add_top(text *b)
{
    lua_rawseti(b->L, b->t, ++b->n);
}

static void add_number(text *b, double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.9g", x);
    add(b, buf);
}

/* Add s as a gnuplot single-quoted string ('' stands for a quote inside). */
static void add_quoted(text *b, const char *s)
{
    lua_State *L = b->L;
    add(b, "'");
    luaL_gsub(L, s, "'", "''");
    luaL_gsub(L, lua_tostring(L, -1), "\n", " ");
    lua_remove(L, -2);
    add_top(b);
    add(b, "'");
}

/* Add a data-file string cell: double quotes, with any inside made single. */
static void add_cell_text(text *b, const char *s)
{
    lua_State *L = b->L;
    add(b, "\"");
    luaL_gsub(L, s, "\"", "'");
    luaL_gsub(L, lua_tostring(L, -1), "\n", " ");
    lua_remove(L, -2);
    add_top(b);
    add(b, "\"");
}

/* Push the joined text (the pieces table stays). */
static void text_push(text *b)
{
    luaL_Buffer buf;
    lua_State *L = b->L;
    luaL_buffinit(L, &buf);
    for (lua_Integer i = 1; i <= b->n; i++) {
        lua_rawgeti(L, b->t, i);
        luaL_addvalue(&buf);
    }
    luaL_pushresult(&buf);
}

/* The terminal and output lines: pngcairo if this gnuplot has it, else png; or svg.  The
 * output is the gnuplot variable ecout, set with -e to a file in the private work folder:
 * gnuplot never sees the user's path, so a name such as '|cmd' cannot open a pipe.  The
 * kinds build the rest first (their picture size can grow with the legend or the panels):
 * this fills the script's first piece, which ecL_plot leaves empty. */
static void set_terminal(text *b, int svg)
{
    char buf[512];
    if (svg)
        snprintf(buf, sizeof buf,
                 "set terminal svg size %d,%d dynamic noenhanced font 'Sans,12' background rgb 'white'\n",
                 b->width, b->height);
    else
        snprintf(buf, sizeof buf,
                 "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                 "  set terminal pngcairo size %d,%d noenhanced font 'Sans,11'\n"
                 "} else {\n"
                 "  set terminal png size %d,%d noenhanced\n"
                 "}\n"
                 "set output ecout\nset grid lc rgb '#dddddd'\nset border lc rgb '#555555'\n",
                 b->width, b->height, b->width, b->height);
    if (svg)
        strcat(buf, "set output ecout\nset grid lc rgb '#dddddd'\nset border lc rgb '#555555'\n");
    lua_pushstring(b->L, buf);
    lua_rawseti(b->L, b->t, 1);
}

/* ---- series styles: a palette distinct up to 20 series, the legend below the axes -------- */

/* 20 colours that stay apart on white (matplotlib's tab10, then ten darker or other hues);
 * series 11-20 are also dashed (lines) or drawn with another point shape, and past 20 the
 * colours come round again with the next dash type and shape: (colour, dash) pairs stay
 * distinct up to 100 series. */
static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#008080", "#e7ba52", "#6b6ecf", "#b5cf6b", "#d6616b",
};
#define N_PALETTE ((int)(sizeof palette / sizeof palette[0]))
#define PALETTE_SOLID 10 /* series from this one on are dashed */
static const int shapes[] = {7, 5, 9, 11, 13, 15};

/* The style of series s (0-based): colour, dash type and point shape. */
static void add_series_style(text *b, int s, int lines)
{
    int round = s / PALETTE_SOLID;
    if (lines)
        lua_pushfstring(b->L, " lc rgb '%s' dt %d pt %d", palette[s % N_PALETTE], 1 + round % 5, shapes[round % 6]);
    else
        lua_pushfstring(b->L, " lc rgb '%s' pt %d", palette[s % N_PALETTE], shapes[round % 6]);
    add_top(b);
}

/* The legend goes below the axes, entries side by side in as many columns as the width
 * holds: the axes keep the picture's whole width whatever the number of series, and the
 * picture grows by the legend's rows.  longest: the longest entry's length in characters. */
static void add_key(text *b, int entries, size_t longest)
{
    int per_entry = 80 + 17 * (int)(longest < 60 ? longest : 60) / 2; /* sample + text, px at 10 pt */
    int cols = (b->width - 40) / per_entry;
    if (cols < 1)
        cols = 1;
    int rows = (entries + cols - 1) / cols;
    b->height += rows > 1 ? (rows - 1) * 18 : 0;
    char buf[160];
    snprintf(buf, sizeof buf, "set key outside below center horizontal Left reverse samplen 4 maxcols %d height 1 "
             "font ',10' nobox\n", cols); /* no box: a box's top runs into the x label */
    add(b, buf);
}

/* The longest series label (P_LABELS), at least min. */
static size_t longest_label(lua_State *L, int labels, size_t min)
{
    size_t m = min;
    for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, labels); i <= n; i++) {
        lua_rawgeti(L, labels, i);
        size_t len = lua_rawlen(L, -1);
        m = len > m ? len : m;
        lua_pop(L, 1);
    }
    return m;
}

static void add_setting(text *b, const char *what, const char *value)
{
    add(b, "set ");
    add(b, what);
    add(b, " ");
    add_quoted(b, value);
    add(b, "\n");
}

/* Optional string field of the spec, else def (the string stays alive in the spec). */
static const char *spec_string(lua_State *L, int spec, const char *key, const char *def)
{
    lua_getfield(L, spec, key);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : def;
    lua_pop(L, 1);
    return s;
}

/* ---- series: points grouped by a label ----------------------------------------------------- */

typedef struct point {
    int series;
    double x, y;
} point;

static int compare_points(const void *a, const void *b)
{
    const point *p = (const point *)a, *q = (const point *)b;
    if (p->series != q->series)
        return p->series < q->series ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

/* Spec slots on the stack of ecL_plot. */
enum { P_SPEC = 1, P_ROWS, P_GROUP, P_LABELS, P_OUT, P_DATA, P_SCRIPT, P_POINTS };

/* Collect (x, y) of every usable row into a point array (a userdata left at P_POINTS) and
 * the series labels, in order of first appearance, into P_LABELS.  Returns the count. */
/* Is row.fits false (a configuration that runs out of memory has no time to plot)? */
static int does_not_fit(lua_State *L, int row)
{
    lua_getfield(L, row, "fits");
    int no = (lua_isboolean(L, -1) && !lua_toboolean(L, -1))
             || (lua_type(L, -1) != LUA_TNIL && lua_isnumber(L, -1) && lua_tonumber(L, -1) == 0);
    lua_pop(L, 1);
    return no;
}

static size_t collect(lua_State *L, const char *xkey, const char *ykey, int skip_oom, point **out)
{
    lua_Integer n = (lua_Integer)luaL_len(L, P_ROWS);
    point *pts = (point *)lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *pts, 0); /* P_POINTS */
    lua_newtable(L);                                          /* label -> series */
    int index = lua_gettop(L);
    size_t k = 0;
    int n_series = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_geti(L, P_ROWS, i) != LUA_TTABLE)
            luaL_error(L, "plot: row %d is not a table", (int)i);
        int row = lua_gettop(L);
        double x, y;
        if (is_error_row(L, row) || (skip_oom && does_not_fit(L, row)) || !field_number(L, row, xkey, &x)
            || !field_number(L, row, ykey, &y)) {
            lua_settop(L, index);
            continue;
        }
        if (lua_isnil(L, P_GROUP))
            lua_pushliteral(L, "");
        else
            push_label(L, row, P_GROUP);                      /* row label */
        int series;
        if (lua_getfield(L, index, lua_tostring(L, -1)) == LUA_TNUMBER) {
            series = (int)lua_tointeger(L, -1);
        } else {
            series = n_series++;
            lua_pushinteger(L, series);
            lua_setfield(L, index, lua_tostring(L, -3));
            lua_pushvalue(L, -2);
            lua_rawseti(L, P_LABELS, series + 1);
        }
        pts[k++] = (point){series, x, y};
        lua_settop(L, index);
    }
    lua_settop(L, P_POINTS);
    qsort(pts, k, sizeof *pts, compare_points);
    *out = pts;
    return k;
}

/* One gnuplot data block per series ("index i" in plot commands), blocks apart by two
 * blank lines. */
static void add_blocks(text *d, const point *pts, size_t n, double xs, double ys)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pts[i].series != pts[i - 1].series)
            add(d, "\n\n");
        add_number(d, pts[i].x * xs);
        add(d, " ");
        add_number(d, pts[i].y * ys);
        add(d, "\n");
    }
}

static double max_abs_y(const point *pts, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(pts[i].y));
    return m;
}

/* set logscale x 2 when x is positive and spans LOGX_RATIO or more (batch sizes), unless
 * spec.logx says otherwise. */
static void maybe_logx(lua_State *L, text *b, const point *pts, size_t n)
{
    double lo = HUGE_VAL, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, pts[i].x);
        hi = fmax(hi, pts[i].x);
    }
    lua_getfield(L, P_SPEC, "logx");
    int logx = lua_isnil(L, -1) ? (n > 0 && lo > 0 && hi / lo >= LOGX_RATIO) : lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (logx)
        add(b, "set logscale x 2\n");
}

static void add_titles(lua_State *L, text *b, const char *title, const char *xlabel, const char *ylabel)
{
    add_setting(b, "title", spec_string(L, P_SPEC, "title", title));
    add_setting(b, "xlabel", spec_string(L, P_SPEC, "xlabel", xlabel));
    add_setting(b, "ylabel", spec_string(L, P_SPEC, "ylabel", ylabel));
}

/* ---- the kinds ------------------------------------------------------------------------------ */

/* memory: one dashed line per distinct capacity_bytes among the rows, from xlo to xhi.
 * Returns how many blocks were added after the series' blocks; titles go to caps. */
static int add_capacity_blocks(lua_State *L, text *d, int caps, const char *xkey, double xlo,
                               double xhi, double xs, double ys)
{
    int n_caps = 0;
    lua_Integer nr = (lua_Integer)luaL_len(L, P_ROWS);
    lua_newtable(L);                                          /* seen capacities */
    int seen = lua_gettop(L);
    for (lua_Integer i = 1; i <= nr; i++) {
        lua_geti(L, P_ROWS, i);
        int row = lua_gettop(L);
        double cap, gx;
        if (lua_istable(L, row) && !is_error_row(L, row) && field_number(L, row, "capacity_bytes", &cap)
            && field_number(L, row, xkey, &gx)) {
            lua_pushnumber(L, cap);
            if (lua_rawget(L, seen) == LUA_TNIL) {
                lua_pushnumber(L, cap);
                lua_pushboolean(L, 1);
                lua_rawset(L, seen);
                char num[32];
                snprintf(num, sizeof num, "%.1f", cap / GIB);
                if (push_field(L, row, "gpu") == LUA_TSTRING)
                    lua_pushfstring(L, "capacity of %s (%s GiB)", lua_tostring(L, -1), num);
                else
                    lua_pushfstring(L, "capacity (%s GiB)", num);
                lua_rawseti(L, caps, ++n_caps);
                lua_pop(L, 1);
                lua_pushnumber(L, cap);
                lua_rawseti(L, caps, -n_caps); /* the capacity itself, for the y range */
                add(d, "\n\n");
                add_number(d, xlo * xs);
                add(d, " ");
                add_number(d, cap * ys);
                add(d, "\n");
                add_number(d, xhi * xs);
                add(d, " ");
                add_number(d, cap * ys);
                add(d, "\n");
            }
        }
        lua_settop(L, seen);
    }
    lua_pop(L, 1);
    return n_caps;
}

/* line and memory: y against x, one line per series; memory adds capacity lines. */
static void build_lines(lua_State *L, text *sb, text *db, int memory)
{
    const char *xkey = spec_string(L, P_SPEC, "x", "batch_per_gpu");
    const char *ykey = spec_string(L, P_SPEC, "y", memory ? "peak_bytes" : "epoch_s");
    if (memory && !ends_with(ykey, "_bytes"))
        luaL_error(L, "plot: kind 'memory' plots a _bytes column (peak_bytes by default), not '%s'", ykey);
    point *pts;
    size_t n = collect(L, xkey, ykey, !memory, &pts);
    if (n == 0)
        luaL_error(L, "plot: no row has numbers in both '%s' and '%s'", xkey, ykey);
    int n_series = (int)lua_rawlen(L, P_LABELS);
    double ymax = max_abs_y(pts, n), xlo = HUGE_VAL, xhi = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        xlo = fmin(xlo, pts[i].x);
        xhi = fmax(xhi, pts[i].x);
    }
    axis_unit xu = unit_of(xkey, xhi), yu = unit_of(ykey, ymax);
    add_blocks(db, pts, n, xu.scale, yu.scale);
    lua_newtable(L);
    int caps = lua_gettop(L);
    int n_caps = memory ? add_capacity_blocks(L, db, caps, xkey, xlo, xhi, xu.scale, yu.scale) : 0;

    push_axis_label(L, xkey, xu);
    push_axis_label(L, ykey, yu);
    const char *xl = lua_tostring(L, -2), *yl = lua_tostring(L, -1);
    lua_pushfstring(L, "%s against %s", yl, xl);
    add_titles(L, sb, lua_tostring(L, -1), xl, yl);
    lua_pop(L, 3);
    maybe_logx(L, sb, pts, n);
    if (n_caps > 0) {
        /* Room above the highest capacity line, so it does not sit on the border. */
        double top = ymax;
        for (int c = 1; c <= n_caps; c++) {
            lua_rawgeti(L, caps, -c);
            top = fmax(top, lua_tonumber(L, -1));
            lua_pop(L, 1);
        }
        char buf[64];
        snprintf(buf, sizeof buf, "set yrange [0:%.6g]\n", top * yu.scale * 1.1);
        add(sb, buf);
    } else {
        add(sb, "set yrange [0:*]\n");
    }
    add_key(sb, n_series + n_caps, longest_label(L, P_LABELS, n_caps > 0 ? 30 : 0));
    add(sb, "set pointsize 1.2\nplot ");
    for (int s = 0; s < n_series; s++) {
        lua_rawgeti(L, P_LABELS, s + 1);
        const char *label = lua_tostring(L, -1);
        if (s > 0)
            add(sb, ", \\\n     ");
        add(sb, "ecdata");
        lua_pushfstring(L, " index %d using 1:2 with linespoints lw 2", s);
        add_top(sb);
        add_series_style(sb, s, 1);
        add(sb, " title ");
        add_quoted(sb, label[0] != '\0' ? label : yl);
        lua_pop(L, 1);
    }
    for (int c = 0; c < n_caps; c++) {
        lua_rawgeti(L, caps, c + 1);
        add(sb, ", \\\n     ");
        add(sb, "ecdata");
        static const char *const cap_colors[] = {"#c00000", "#404040", "#8040c0", "#c07000"};
        lua_pushfstring(L, " index %d using 1:2 with lines dt %d lw 2 lc rgb '%s' title ", n_series + c,
                        2 + c % 3, cap_colors[c % 4]);
        add_top(sb);
        add_quoted(sb, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    add(sb, "\n");
    lua_settop(L, P_SCRIPT);
}

/* breakdown: one stacked bar per row, labelled by the x key(s), in milliseconds. */
static void build_breakdown(lua_State *L, text *sb, text *db)
{
    lua_getfield(L, P_SPEC, "x");
    int xkeys = lua_gettop(L);
    if (lua_type(L, xkeys) != LUA_TSTRING && lua_type(L, xkeys) != LUA_TTABLE)
        luaL_error(L, "plot: kind 'breakdown' needs x, the key (or keys) that label the bars");
    add(db, "label");
    for (size_t p = 0; p < N_PARTS; p++) {
        add(db, " ");
        add_cell_text(db, parts[p][1]);
    }
    add(db, "\n");
    lua_Integer n = (lua_Integer)luaL_len(L, P_ROWS), bars = 0;
    size_t longest = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_geti(L, P_ROWS, i) != LUA_TTABLE)
            luaL_error(L, "plot: row %d is not a table", (int)i);
        int row = lua_gettop(L);
        double v[N_PARTS];
        int ok = !is_error_row(L, row);
        for (size_t p = 0; p < N_PARTS && ok; p++) {
            char name[48];
            snprintf(name, sizeof name, "breakdown_%s", parts[p][0]);
            ok = field_number(L, row, name, &v[p]);
        }
        if (ok) {
            push_label(L, row, xkeys);
            if (lua_rawlen(L, -1) > longest)
                longest = lua_rawlen(L, -1);
            add_cell_text(db, lua_tostring(L, -1));
            lua_pop(L, 1);
            for (size_t p = 0; p < N_PARTS; p++) {
                add(db, " ");
                add_number(db, v[p] * 1e3);
            }
            add(db, "\n");
            bars++;
        }
        lua_settop(L, xkeys);
    }
    if (bars == 0)
        luaL_error(L, "plot: no row has a step breakdown");
    add_titles(L, sb, "where the time of one step goes", "", "time per step (ms)");
    add(sb, "set style data histograms\nset style histogram rowstacked\n"
            "set style fill solid 0.85 border -1\nset boxwidth 0.7 relative\n"
            "set yrange [0:*]\nset xtics nomirror\n");
    if (bars > BARS_UPRIGHT) {
        /* Slanted labels need a bottom margin that grows with the longest one. */
        char buf[80];
        snprintf(buf, sizeof buf, "set xtics rotate by 40 right\nset bmargin %d\n",
                 4 + (int)(0.42 * (double)longest)); /* the labels, then the legend's row */
        add(sb, buf);
    }
    add_key(sb, (int)N_PARTS, 14);
    add(sb, "ecparts = '");
    for (size_t p = 0; p < N_PARTS; p++) {
        add(sb, p > 0 ? " " : "");
        add(sb, palette[p]);
    }
    add(sb, "'\nplot for [i=2:8] ");
    add(sb, "ecdata");
    add(sb, " using i:xtic(1) lc rgb word(ecparts, i - 1) title columnheader(i)\n");
    lua_settop(L, P_SCRIPT);
}

/* ---- validate: one panel per metric ------------------------------------------------------- */

/* A run on the validate plot: its panel (metric), series (GPU), measured x, predicted y and
 * the prediction's p10-p90 interval (lo = hi = y when the row has none). */
typedef struct vpoint {
    int panel, series;
    double x, y, lo, hi;
} vpoint;

static int compare_vpoints(const void *a, const void *b)
{
    const vpoint *p = (const vpoint *)a, *q = (const vpoint *)b;
    if (p->panel != q->panel)
        return p->panel < q->panel ? -1 : 1;
    if (p->series != q->series)
        return p->series < q->series ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

/* Outcomes (the run died of out-of-memory, or fitted) are scored apart: never on an axis. */
static int is_outcome(const char *metric)
{
    return strcmp(metric, "oom") == 0 || strcmp(metric, "fits") == 0;
}

/* The index of string s in the table at idx (label -> index), adding it (and to the array
 * at list) when new; *n counts them. */
static int index_of(lua_State *L, int idx, int list, const char *s, int *n)
{
    if (lua_getfield(L, idx, s) == LUA_TNUMBER) {
        int i = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
        return i;
    }
    lua_pop(L, 1);
    lua_pushinteger(L, *n);
    lua_setfield(L, idx, s);
    lua_pushstring(L, s);
    lua_rawseti(L, list, *n + 1);
    return (*n)++;
}

/* Read the rows into vpoints (a userdata left at P_POINTS), series labels into P_LABELS and
 * panel names into the table at panels (pushed, P_POINTS + 1).  *outcomes counts the rows of
 * an outcome metric, *skipped the rows without positive numbers. */
static size_t collect_validate(lua_State *L, int *n_panels, size_t *outcomes, size_t *skipped, vpoint **out)
{
    const char *xkey = spec_string(L, P_SPEC, "x", "measured");
    const char *ykey = spec_string(L, P_SPEC, "y", "predicted");
    const char *pkey = spec_string(L, P_SPEC, "panel", "metric");
    lua_Integer n = (lua_Integer)luaL_len(L, P_ROWS);
    vpoint *pts = (vpoint *)lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *pts, 0); /* P_POINTS */
    lua_newtable(L);                                          /* panel names */
    lua_newtable(L);                                          /* series label -> index */
    lua_newtable(L);                                          /* panel name -> index */
    int panels = P_POINTS + 1, series_idx = P_POINTS + 2, panel_idx = P_POINTS + 3;
    size_t k = 0;
    int n_series = 0;
    *n_panels = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_geti(L, P_ROWS, i) != LUA_TTABLE)
            luaL_error(L, "plot: row %d is not a table", (int)i);
        int row = lua_gettop(L);
        const char *panel = push_field(L, row, pkey) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        double x, y, lo, hi;
        if (is_error_row(L, row)) {
        } else if (is_outcome(panel)) {
            (*outcomes)++;
        } else if (!field_number(L, row, xkey, &x) || !field_number(L, row, ykey, &y) || x <= 0 || y <= 0) {
            (*skipped)++;
        } else {
            if (!field_number(L, row, "p10", &lo) || !field_number(L, row, "p90", &hi) || lo <= 0 || hi < lo)
                lo = hi = y;
            int p = index_of(L, panel_idx, panels, panel, n_panels);
            if (lua_isnil(L, P_GROUP))
                lua_pushliteral(L, "");
            else
                push_label(L, row, P_GROUP);
            int s = index_of(L, series_idx, P_LABELS, lua_tostring(L, -1), &n_series);
            pts[k++] = (vpoint){p, s, x, y, fmin(lo, y), fmax(hi, y)};
        }
        lua_settop(L, panel_idx);
    }
    lua_settop(L, panels);
    qsort(pts, k, sizeof *pts, compare_vpoints);
    *out = pts;
    return k;
}

/* One panel: the +-20% band, y = x, and each series' runs with their p10-p90 bars.  pts
 * holds the panel's runs (sorted by series); first_block the data block of its first series. */
static int add_validate_panel(lua_State *L, text *sb, text *db, const char *metric, const vpoint *pts, size_t n,
                              int first_block)
{
    double lo = HUGE_VAL, hi = 0, ape = 0;
    size_t within = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, fmin(pts[i].x, pts[i].lo));
        hi = fmax(hi, fmax(pts[i].x, pts[i].hi));
        ape += fabs(pts[i].y - pts[i].x) / pts[i].x;
        within += fabs(pts[i].y - pts[i].x) <= 0.2 * pts[i].x;
    }
    axis_unit u = unit_of(metric, hi);
    int logxy = hi / lo >= 50; /* log axes when the runs span 50x or more */
    double pad = 0.15 * (hi - lo + 0.1 * hi); /* linear axes: room around the runs */
    double a = logxy ? lo / 1.3 : fmax(0, lo - pad), b = logxy ? hi * 1.3 : hi + pad;
    push_axis_label(L, metric[0] != '\0' ? metric : "value", u);
    const char *label = lua_tostring(L, -1);
    char mape[16];
    snprintf(mape, sizeof mape, "%.1f", 100 * ape / (double)n);
    lua_pushfstring(L, "%d run%s, MAPE %s%%, %d within +-20%%", (int)n, n == 1 ? "" : "s", mape, (int)within);
    add(sb, "set title "); /* two lines: the metric, then the panel's scores */
    add_quoted(sb, label);
    add(sb, ".\"\\n\".");
    add_quoted(sb, lua_tostring(L, -1));
    add(sb, "\n");
    lua_pushfstring(L, "measured %s", label);
    add_setting(sb, "xlabel", lua_tostring(L, -1));
    lua_pushfstring(L, "predicted %s", label);
    add_setting(sb, "ylabel", lua_tostring(L, -1));
    lua_pop(L, 4);
    char buf[480];
    snprintf(buf, sizeof buf, "unset logscale\n%sset xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\nset size ratio -1\n"
             "plot '+' using 1:($1*0.8):($1*1.2) with filledcurves fc rgb '#d8d8d8' notitle, \\\n"
             "     x with lines lw 1.5 lc rgb '#333333' notitle",
             logxy ? "set logscale xy\n" : "", a * u.scale, b * u.scale, a * u.scale, b * u.scale);
    add(sb, buf);
    int block = first_block;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pts[i].series == pts[i - 1].series)
            continue;
        add(db, block > 0 ? "\n\n" : "");
        for (size_t j = i; j < n && pts[j].series == pts[i].series; j++) {
            snprintf(buf, sizeof buf, "%.9g %.9g %.9g %.9g\n", pts[j].x * u.scale, pts[j].y * u.scale,
                     pts[j].lo * u.scale, pts[j].hi * u.scale);
            add(db, buf);
        }
        lua_pushfstring(L, ", \\\n     ecdata index %d using 1:2:3:4 with yerrorbars ps 0.7 lw 1", block++);
        add_top(sb);
        add_series_style(sb, pts[i].series, 0);
        add(sb, " notitle");
    }
    add(sb, "\n");
    return block;
}

/* validate: predicted against measured, one panel per metric (each on its own axes, log
 * when it spans 50x or more), with y = x, the +-20% band and the p10-p90 bars; the series
 * (GPUs) in a legend panel.  Outcome rows (oom, fits) are counted in the title, not drawn. */
static void build_validate(lua_State *L, text *sb, text *db)
{
    vpoint *pts;
    int n_panels;
    size_t outcomes = 0, skipped = 0;
    size_t n = collect_validate(L, &n_panels, &outcomes, &skipped, &pts);
    int panels = P_POINTS + 1;
    if (n == 0)
        luaL_error(L, "plot: no row has positive numbers in both '%s' and '%s'%s",
                   spec_string(L, P_SPEC, "x", "measured"), spec_string(L, P_SPEC, "y", "predicted"),
                   outcomes > 0 ? " (out-of-memory outcomes are scored apart, not drawn)" : "");
    int n_series = (int)lua_rawlen(L, P_LABELS);
    int cells = n_panels + 1, cols = cells <= 3 ? cells : cells == 4 ? 2 : 3, rows = (cells + cols - 1) / cols;
    sb->width = cols * 420;
    sb->height = rows * 430 + 40;
    lua_pushfstring(L, "%s: %d runs", spec_string(L, P_SPEC, "title", "predicted against measured"), (int)n);
    if (outcomes > 0)
        lua_pushfstring(L, "; %d out-of-memory outcome%s scored apart, not drawn", (int)outcomes,
                        outcomes == 1 ? "" : "s");
    else
        lua_pushliteral(L, "");
    if (skipped > 0)
        lua_pushfstring(L, "; %d rows without positive numbers", (int)skipped);
    else
        lua_pushliteral(L, "");
    lua_pushstring(L, spec_string(L, P_SPEC, "note", ""));
    lua_concat(L, 4);
    char buf[160];
    snprintf(buf, sizeof buf, "set multiplot layout %d,%d title ", rows, cols);
    add(sb, buf);
    add_quoted(sb, lua_tostring(L, -1));
    lua_pop(L, 1);
    add(sb, "\nunset key\nset samples 200\nset bars small\n");
    int block = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && pts[j].panel == pts[i].panel)
            j++;
        lua_rawgeti(L, panels, pts[i].panel + 1);
        block = add_validate_panel(L, sb, db, lua_tostring(L, -1), pts + i, j - i, block);
        lua_pop(L, 1);
        i = j;
    }
    /* The legend panel: the series, the band and the bars, on an empty frame. */
    add(sb, "unset logscale\nunset title\nunset xlabel\nunset ylabel\nunset border\nunset tics\nunset grid\n"
            "set size noratio\nset xrange [0:1]\nset yrange [0:1]\n");
    snprintf(buf, sizeof buf, "set key center center vertical Left reverse maxrows %d font ',10'\n",
             n_series + 3 < 18 ? n_series + 3 : 18);
    add(sb, buf);
    add(sb, "plot NaN with lines lw 1.5 lc rgb '#333333' title 'predicted = measured', \\\n"
            "     NaN with boxes fs solid noborder fc rgb '#d8d8d8' title 'within +-20%', \\\n"
            "     NaN with lines lw 1 lc rgb '#000000' title 'bars: p10-p90 of the prediction'");
    for (int s = 0; s < n_series; s++) {
        lua_rawgeti(L, P_LABELS, s + 1);
        const char *label = lua_tostring(L, -1);
        add(sb, ", \\\n     NaN with points ps 1");
        add_series_style(sb, s, 0);
        add(sb, " title ");
        add_quoted(sb, label[0] != '\0' ? label : "runs");
        lua_pop(L, 1);
    }
    add(sb, "\nunset multiplot\n");
    lua_settop(L, P_SCRIPT);
}

static int row_flag(lua_State *L, int row, const char *key)
{
    lua_getfield(L, row, key);
    int on = lua_isboolean(L, -1) ? lua_toboolean(L, -1) : (lua_isnumber(L, -1) && lua_tonumber(L, -1) != 0);
    lua_pop(L, 1);
    return on;
}

/* spec[key] as a number, or 0 when absent. */
static double spec_number(lua_State *L, const char *key)
{
    lua_getfield(L, P_SPEC, key);
    double v = lua_isnumber(L, -1) ? (double)lua_tonumber(L, -1) : 0;
    lua_pop(L, 1);
    return v;
}

/* scatter: y against x per group; the front joined and circled; the best starred; xline, yline. */
static void build_scatter(lua_State *L, text *sb, text *db)
{
    const char *xkey = spec_string(L, P_SPEC, "x", "run_s");
    const char *ykey = spec_string(L, P_SPEC, "y", "cost_run");
    const char *fkey = spec_string(L, P_SPEC, "front", "on_front");
    const char *bkey = spec_string(L, P_SPEC, "best", "best");
    point *pts;
    size_t n = collect(L, xkey, ykey, 0, &pts);
    if (n == 0)
        luaL_error(L, "plot: no row has numbers in both '%s' and '%s'", xkey, ykey);
    int n_series = (int)lua_rawlen(L, P_LABELS);
    double xmax = 0;
    for (size_t i = 0; i < n; i++)
        xmax = fmax(xmax, fabs(pts[i].x));
    double xline = spec_number(L, "xline"), yline = spec_number(L, "yline");
    xmax = fmax(xmax, xline);
    axis_unit xu = unit_of(xkey, xmax), yu = unit_of(ykey, fmax(max_abs_y(pts, n), yline));
    add_blocks(db, pts, n, xu.scale, yu.scale);
    /* the front's block (sorted by x) and the best point's, from the rows' flags */
    lua_Integer nr = (lua_Integer)luaL_len(L, P_ROWS);
    point *front = (point *)lua_newuserdatauv(L, ((size_t)nr + 1) * sizeof *front, 0);
    size_t nf = 0;
    int have_best = 0;
    double bx = 0, by = 0;
    for (lua_Integer i = 1; i <= nr; i++) {
        lua_geti(L, P_ROWS, i);
        int row = lua_gettop(L);
        double x, y;
        if (lua_istable(L, row) && !is_error_row(L, row) && field_number(L, row, xkey, &x) &&
            field_number(L, row, ykey, &y)) {
            if (row_flag(L, row, fkey))
                front[nf++] = (point){0, x, y};
            if (row_flag(L, row, bkey)) {
                have_best = 1;
                bx = x;
                by = y;
            }
        }
        lua_pop(L, 1);
    }
    qsort(front, nf, sizeof *front, compare_points);
    int blocks = n_series;
    int front_block = -1, best_block = -1;
    if (nf > 0) {
        add(db, "\n\n");
        add_blocks(db, front, nf, xu.scale, yu.scale);
        front_block = blocks++;
    }
    if (have_best) {
        add(db, "\n\n");
        point b = {0, bx, by};
        add_blocks(db, &b, 1, xu.scale, yu.scale);
        best_block = blocks++;
    }
    push_axis_label(L, xkey, xu);
    push_axis_label(L, ykey, yu);
    const char *xl = lua_tostring(L, -2), *yl = lua_tostring(L, -1);
    lua_pushfstring(L, "%s against %s", yl, xl);
    add_titles(L, sb, lua_tostring(L, -1), xl, yl);
    lua_pop(L, 3);
    add(sb, "set xrange [0:*]\nset yrange [0:*]\nset pointsize 1.3\n");
    char buf[160];
    if (xline > 0) {
        snprintf(buf, sizeof buf, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 lw 1.5 lc rgb '#c00000'\n",
                 xline * xu.scale, xline * xu.scale);
        add(sb, buf);
    }
    if (yline > 0) {
        snprintf(buf, sizeof buf, "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead dt 2 lw 1.5 "
                 "lc rgb '#c00000'\n", yline * yu.scale, yline * yu.scale);
        add(sb, buf);
    }
    add_key(sb, n_series + (front_block >= 0) + (best_block >= 0), longest_label(L, P_LABELS, 12));
    add(sb, "plot ");
    for (int s = 0; s < n_series; s++) {
        lua_rawgeti(L, P_LABELS, s + 1);
        const char *label = lua_tostring(L, -1);
        if (s > 0)
            add(sb, ", \\\n     ");
        add(sb, "ecdata");
        lua_pushfstring(L, " index %d using 1:2 with points", s);
        add_top(sb);
        add_series_style(sb, s, 0);
        add(sb, " title ");
        add_quoted(sb, label[0] != '\0' ? label : yl);
        lua_pop(L, 1);
    }
    if (front_block >= 0) {
        lua_pushfstring(L, ", \\\n     ecdata index %d using 1:2 with linespoints lw 2 lc rgb '#222222' pt 6 ps 2.2 "
                        "title 'Pareto front'", front_block);
        add_top(sb);
    }
    if (best_block >= 0) {
        lua_pushfstring(L, ", \\\n     ecdata index %d using 1:2 with points pt 3 ps 3.5 lw 2 lc rgb '#c00000' "
                        "title 'chosen'", best_block);
        add_top(sb);
    }
    add(sb, "\n");
    lua_settop(L, P_SCRIPT);
}

/* ---- running gnuplot ----------------------------------------------------------------------- */

/* Find an executable named name on PATH into buf; 0 when there is none. */
static int find_on_path(const char *name, char *buf, size_t n)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        return 0;
    while (*path != '\0') {
        size_t len = strcspn(path, ":");
        int w = len == 0 ? snprintf(buf, n, "./%s", name) : snprintf(buf, n, "%.*s/%s", (int)len, path, name);
        struct stat st;
        if (w > 0 && (size_t)w < n && stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 1;
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

static int write_file(const char *path, const char *content, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t w = fwrite(content, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

/* The child's side of run_gnuplot: its own process group (so the whole group can be
 * killed), killed itself when epochcast dies (Linux), stdin from /dev/null, stdout and
 * stderr into log.  Only async-signal-safe calls between fork and exec. */
static void exec_gnuplot(pid_t parent, char *const argv[], const char *log)
{
    setpgid(0, 0);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* epochcast died before the line above */
        _exit(127);
#else
    (void)parent;
#endif
    int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || in < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || dup2(in, 0) < 0)
        _exit(127);
    execve(argv[0], argv, environ);
    _exit(127);
}

/* Run gnuplot -e setdata script with stdout and stderr into log; the exit status, -1 when it
 * could not run, or PLOT_STOPPED when the host asked to stop (a signal, the scenario's time
 * budget: ctx's progress callback) while it drew: gnuplot's process group is then killed
 * and reaped, so nothing outlives the call. */
#define PLOT_STOPPED (-2)
static int run_gnuplot(ec_ctx *ctx, const char *gnuplot, const char *setdata, const char *script, const char *log)
{
    char *argv[5];
    /* execve takes char *const argv[]; it does not write to the strings. */
    argv[0] = (char *)(uintptr_t)gnuplot;
    argv[1] = (char *)(uintptr_t)"-e";
    argv[2] = (char *)(uintptr_t)setdata;
    argv[3] = (char *)(uintptr_t)script;
    argv[4] = NULL;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        exec_gnuplot(parent, argv, log);
    setpgid(pid, pid); /* also here: no kill(-pid) before the child's own call lands */
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        if (ec_ctx_progress(ctx, "plot", 0, 0) != EC_OK) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return PLOT_STOPPED;
        }
        struct timespec pause = {0, 10 * 1000 * 1000}; /* a signal cuts it short */
        nanosleep(&pause, NULL);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The first line of gnuplot's complaint, for the error message. */
static void read_log(const char *log, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(log, "rb");
    if (f == NULL)
        return;
    size_t len = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[len] = '\0';
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '\n' && p[1] != '\0')
            *p = ' ';
}

/* Remove the work folder: every file in it (what gnuplot wrote besides the picture too),
 * then the folder. */
static void cleanup(const char *work)
{
    DIR *d = opendir(work);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(work);
}

/* The context for writing the picture: the module's (upvalue 1, which knows the run's inputs)
 * or, for the plain C function the CLI calls, a bare one in a box on the stack. */
static ec_ctx *plot_ctx(lua_State *L)
{
    void *box = lua_touserdata(L, lua_upvalueindex(1));
    if (box != NULL)
        return ecL_ctx(L);
    const ecL_host *host = NULL; /* the host's allocator and progress (signals stop gnuplot) */
    if (lua_getfield(L, LUA_REGISTRYINDEX, ECL_HOST_KEY) == LUA_TLIGHTUSERDATA)
        host = (const ecL_host *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    void **slot = ecL_newbox(L, ecL_free_ctx);
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(host != NULL ? host->alloc : NULL, host != NULL ? host->alloc_ud : NULL, &ctx) != EC_OK)
        luaL_error(L, "plot: out of memory");
    *slot = ctx;
    if (host != NULL)
        ec_ctx_set_progress(ctx, host->progress, host->progress_ud);
    return ctx;
}

/* Copy the picture gnuplot drew (a file of the work folder) to path through the library's
 * output-file writer: a temporary beside path renamed into place; links, devices and the
 * run's inputs are refused.  EC_OK, or a status with the message on ctx. */
static int put_picture(ec_ctx *ctx, const char *pic, const char *path)
{
    FILE *in = fopen(pic, "rb");
    if (in == NULL)
        return EC_EIO;
    ec_outfile *out;
    int st = ec_outfile_open(ctx, path, &out);
    char buf[65536];
    size_t n;
    while (st == EC_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        st = ec_outfile_write(out, buf, n);
    if (st == EC_OK && ferror(in))
        st = EC_EIO;
    fclose(in);
    if (st == EC_OK)
        return ec_outfile_commit(out);
    if (out != NULL)
        ec_outfile_abort(out);
    return st;
}

/* Write len bytes to path through the library's output-file writer (a temporary renamed into
 * place; links, devices and the run's inputs refused).  EC_OK, or a status with the message on ctx. */
static int put_text(ec_ctx *ctx, const char *path, const char *s, size_t len)
{
    ec_outfile *out;
    int st = ec_outfile_open(ctx, path, &out);
    if (st == EC_OK)
        st = ec_outfile_write(out, s, len);
    if (st == EC_OK)
        return ec_outfile_commit(out);
    if (out != NULL)
        ec_outfile_abort(out);
    return st;
}

/* spec.script, or EPOCHCAST_PLOT_SCRIPT in the environment: keep the gnuplot script at that
 * path and its data beside it (path .. ".dat"), runnable by hand (`gnuplot FILE` draws the
 * picture), written before gnuplot is looked for, so a machine without it can still show
 * what would be drawn.  EC_OK or a status with the message on ctx. */
static int keep_script(lua_State *L, ec_ctx *ctx, const char *picture, const char *script, size_t script_len,
                       const char *data, size_t data_len)
{
    const char *keep = spec_string(L, P_SPEC, "script", getenv("EPOCHCAST_PLOT_SCRIPT"));
    if (keep == NULL || keep[0] == '\0')
        return EC_OK;
    ecL_check_output(L, keep);
    lua_pushfstring(L, "%s.dat", keep);
    const char *data_path = lua_tostring(L, -1);
    ecL_check_output(L, data_path);
    luaL_gsub(L, data_path, "'", "''");
    luaL_gsub(L, picture, "'", "''");
    lua_pushfstring(L, "# epochcast plot script: gnuplot %s draws %s from %s\n"
                    "ecdata = exists('ecdata') ? ecdata : '%s'\necout = exists('ecout') ? ecout : '%s'\n",
                    keep, picture, data_path, lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pushlstring(L, script, script_len);
    lua_concat(L, 2);
    size_t len;
    const char *body = lua_tolstring(L, -1, &len);
    int st = put_text(ctx, data_path, data, data_len);
    if (st == EC_OK)
        st = put_text(ctx, keep, body, len);
    lua_pop(L, 4);
    return st;
}

static int plot_fail(lua_State *L, const char *code, const char *msg)
{
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", code, msg);
    lua_pushstring(L, code);
    return 3;
}

/* ec.plot{kind = "line"|"breakdown"|"memory"|"validate"|"scatter", rows = {...}, path = "x.png"|"x.svg",
 *         x = key, y = key, group = key or {keys}, title =, xlabel =, ylabel =, logx = bool;
 *         scatter: front = key [on_front], best = key [best], xline =, yline = (in x's and y's units);
 *         validate: panel = key [metric], note = text for the title; script = FILE (also
 *         EPOCHCAST_PLOT_SCRIPT): keep the gnuplot script there and its data in FILE.dat}
 * -> true | nil, msg, code (ENOTFOUND when gnuplot is not on PATH, EIO when it fails). */
int ecL_plot(lua_State *L)
{
    luaL_checktype(L, P_SPEC, LUA_TTABLE);
    lua_settop(L, P_SPEC);
    const char *kind = spec_string(L, P_SPEC, "kind", NULL);
    const char *path = spec_string(L, P_SPEC, "path", NULL);
    if (kind == NULL)
        return luaL_error(L, "plot: kind expected (line, breakdown, memory, validate or scatter)");
    if (path == NULL)
        return luaL_error(L, "plot: path expected (a .png or .svg file)");
    size_t plen = strlen(path);
    int svg = plen > 4 && strcasecmp(path + plen - 4, ".svg") == 0;
    if (!svg && !(plen > 4 && strcasecmp(path + plen - 4, ".png") == 0))
        return luaL_error(L, "plot: path '%s' must end in .png or .svg", path);
    /* A name gnuplot would read as a pipe, or one that hides a line break or an escape. */
    for (size_t i = 0; i < plen; i++)
        if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
            return luaL_error(L, "plot: path has a control character (byte %d)", (int)(unsigned char)path[i]);
    if (path[0] == '|')
        return luaL_error(L, "plot: path '%s' starts with '|' (gnuplot would run it as a command)", path);
    lua_getfield(L, P_SPEC, "path");
    size_t rawlen;
    lua_tolstring(L, -1, &rawlen);
    lua_pop(L, 1);
    if (rawlen != plen)
        return luaL_error(L, "plot: path has an embedded NUL byte");
    ecL_check_output(L, path);
    if (lua_getfield(L, P_SPEC, "rows") != LUA_TTABLE)            /* P_ROWS */
        return luaL_error(L, "plot: rows expected (an array of tables)");
    lua_getfield(L, P_SPEC, "group");                              /* P_GROUP */
    int gt = lua_type(L, P_GROUP);
    if (gt != LUA_TNIL && gt != LUA_TSTRING && gt != LUA_TTABLE)
        return luaL_error(L, "plot: group must be a key or an array of keys");
    lua_newtable(L);                                               /* P_LABELS */
    ec_ctx *ctx = plot_ctx(L);                                     /* P_OUT: ctx box or none */
    lua_settop(L, P_OUT);

    /* Build both texts first, so every Lua error (a bad row or key) comes before any file
     * exists.  The script names the data file through the variable ecdata, set with -e. */
    text db, sb;
    text_new(L, &db);                                              /* P_DATA */
    text_new(L, &sb);                                              /* P_SCRIPT */
    add(&sb, "");                                                  /* the terminal, set last */
    if (strcmp(kind, "line") == 0)
        build_lines(L, &sb, &db, 0);
    else if (strcmp(kind, "memory") == 0)
        build_lines(L, &sb, &db, 1);
    else if (strcmp(kind, "breakdown") == 0)
        build_breakdown(L, &sb, &db);
    else if (strcmp(kind, "validate") == 0)
        build_validate(L, &sb, &db);
    else if (strcmp(kind, "scatter") == 0)
        build_scatter(L, &sb, &db);
    else
        return luaL_error(L, "plot: unknown kind '%s' (line, breakdown, memory, validate or scatter)", kind);
    set_terminal(&sb, svg);
    text_push(&db);
    size_t data_len, script_len;
    const char *data = lua_tolstring(L, -1, &data_len);
    text_push(&sb);
    const char *script = lua_tolstring(L, -1, &script_len);
    int kst = keep_script(L, ctx, path, script, script_len, data, data_len);
    if (kst != EC_OK)
        return plot_fail(L, ecL_status_name(kst), ec_ctx_errmsg(ctx));

    char gnuplot[EC_PATH_MAX];
    if (!find_on_path("gnuplot", gnuplot, sizeof gnuplot))
        return plot_fail(L, "ENOTFOUND", "gnuplot was not found on PATH; plots need it "
                                         "(Debian: apt-get install gnuplot-nox)");

    const char *tmpdir = getenv("TMPDIR");
    if (tmpdir == NULL || tmpdir[0] == '\0')
        tmpdir = "/tmp";
    char work[EC_PATH_MAX], data_path[EC_PATH_MAX + 16], script_path[EC_PATH_MAX + 16],
        log_path[EC_PATH_MAX + 16], pic_path[EC_PATH_MAX + 16], msg[512];
    if (snprintf(work, sizeof work, "%s/epochcast-plot-XXXXXX", tmpdir) >= (int)sizeof work)
        return plot_fail(L, "EIO", "TMPDIR is too long");
    if (mkdtemp(work) == NULL) {
        snprintf(msg, sizeof msg, "cannot create a temporary folder in %s: %s", tmpdir, strerror(errno));
        return plot_fail(L, "EIO", msg);
    }
    snprintf(data_path, sizeof data_path, "%s/plot.dat", work);
    snprintf(script_path, sizeof script_path, "%s/plot.gp", work);
    snprintf(log_path, sizeof log_path, "%s/gnuplot.log", work);
    snprintf(pic_path, sizeof pic_path, "%s/plot.%s", work, svg ? "svg" : "png");
    luaL_gsub(L, data_path, "'", "''");
    luaL_gsub(L, pic_path, "'", "''");
    const char *setdata = lua_pushfstring(L, "ecdata='%s'; ecout='%s'", lua_tostring(L, -2), lua_tostring(L, -1));
    int rc = -1;
    if (write_file(data_path, data, data_len) == 0 && write_file(script_path, script, script_len) == 0)
        rc = run_gnuplot(ctx, gnuplot, setdata, script_path, log_path);
    if (rc == PLOT_STOPPED) {
        cleanup(work);
        return ecL_fail(L, ctx, EC_ECANCELED); /* raises: the run is being stopped */
    }
    if (rc != 0) {
        char log[400];
        read_log(log_path, log, sizeof log);
        snprintf(msg, sizeof msg, "gnuplot could not draw %s (exit %d): %s", path, rc,
                 log[0] != '\0' ? log : "no message");
        cleanup(work);
        return plot_fail(L, "EIO", msg);
    }
    int st = put_picture(ctx, pic_path, path);
    cleanup(work);
    if (st != EC_OK) {
        snprintf(msg, sizeof msg, "%s", st == EC_EIO && ec_ctx_errmsg(ctx)[0] == '\0'
                 ? "cannot read the picture gnuplot drew" : ec_ctx_errmsg(ctx));
        return plot_fail(L, ecL_status_name(st), msg);
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg plot_funcs[] = {
    {"plot", ecL_plot},
    {NULL, NULL},
};

int ecL_open_plot(lua_State *L)
{
    luaL_setfuncs(L, plot_funcs, 1);
    return 0;
}
