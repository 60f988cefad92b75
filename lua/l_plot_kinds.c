/*
 * l_plot_kinds.c: ec.plot's kinds of one set of axes, as gnuplot script and data.
 *
 *   line       y against x (a swept key), one line per value of group
 *   memory     peak memory against x with each GPU's capacity as a dashed line
 *   breakdown  the step's parts (forward, backward, ...) as stacked bars, one bar per row
 *   scatter    y against x as points, one colour per group, the rows flagged by `front` (a
 *              Pareto front) joined and circled, the `best` row starred, optional xline /
 *              yline (a deadline, a budget) as dashed lines
 *
 * Each reads the rows and the spec on ecL_plot's stack (l_plot_rows.c) and writes through the
 * text builder and styles of l_plot_style.c; the validate kind is l_plot_validate.c.
 */
#include "l_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* More bars than this get slanted labels. */
#define BARS_UPRIGHT 6

/* The parts of a step, in the order of ec_breakdown, with their legend names. */
static const char *const parts[][2] = {
    {"forward_s", "forward"},     {"backward_s", "backward"}, {"optimizer_s", "optimizer"},
    {"h2d_s", "H2D copy"},        {"cpu_overhead_s", "CPU overhead"},
    {"loader_s", "input loader"}, {"comm_s", "communication"},
};
#define N_PARTS (sizeof parts / sizeof parts[0])

/* The plot command's series: "ecdata index s using 1:2 <with>" in series s's style, titled by
 * its label (fallback for the lone series of a plot without a group). */
static void add_series_plots(lua_State *L, plot_text *sb, int n_series, const char *with, int lines,
                             const char *fallback)
{
    for (int s = 0; s < n_series; s++) {
        lua_rawgeti(L, P_LABELS, s + 1);
        const char *label = lua_tostring(L, -1);
        if (s > 0)
            plot_add(sb, ", \\\n     ");
        plot_add(sb, "ecdata");
        lua_pushfstring(L, " index %d using 1:2 %s", s, with);
        plot_add_top(sb);
        plot_add_series_style(sb, s, lines);
        plot_add(sb, " title ");
        plot_add_quoted(sb, label[0] != '\0' ? label : fallback);
        lua_pop(L, 1);
    }
}

/* ---- line and memory ------------------------------------------------------------------- */

/* memory: one dashed line per distinct capacity_bytes among the rows, from xlo to xhi.
 * Returns how many blocks were added after the series' blocks; titles go to caps. */
static int add_capacity_blocks(lua_State *L, plot_text *d, int caps, const char *xkey, double xlo,
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
        if (lua_istable(L, row) && !plot_is_error_row(L, row) && plot_field_number(L, row, "capacity_bytes", &cap)
            && plot_field_number(L, row, xkey, &gx)) {
            lua_pushnumber(L, cap);
            if (lua_rawget(L, seen) == LUA_TNIL) {
                lua_pushnumber(L, cap);
                lua_pushboolean(L, 1);
                lua_rawset(L, seen);
                char num[32];
                snprintf(num, sizeof num, "%.1f", cap / GIB);
                if (plot_push_field(L, row, "gpu") == LUA_TSTRING)
                    lua_pushfstring(L, "capacity of %s (%s GiB)", lua_tostring(L, -1), num);
                else
                    lua_pushfstring(L, "capacity (%s GiB)", num);
                lua_rawseti(L, caps, ++n_caps);
                lua_pop(L, 1);
                lua_pushnumber(L, cap);
                lua_rawseti(L, caps, -n_caps); /* the capacity itself, for the y range */
                const point line[2] = {{0, xlo, cap}, {0, xhi, cap}};
                plot_add(d, "\n\n");
                plot_add_blocks(d, line, 2, xs, ys);
            }
        }
        lua_settop(L, seen);
    }
    lua_pop(L, 1);
    return n_caps;
}

/* memory's y range: room above the highest capacity line (caps[-1..-n_caps], bytes), so it
 * does not sit on the border; ymax: the highest point's bytes, yscale: the axis's unit. */
static void add_capacity_yrange(lua_State *L, plot_text *sb, int caps, int n_caps, double ymax, double yscale)
{
    double top = ymax;
    for (int c = 1; c <= n_caps; c++) {
        lua_rawgeti(L, caps, -c);
        top = fmax(top, lua_tonumber(L, -1));
        lua_pop(L, 1);
    }
    char buf[64];
    snprintf(buf, sizeof buf, "set yrange [0:%.6g]\n", top * yscale * 1.1);
    plot_add(sb, buf);
}

/* memory's capacity lines in the plot command: the blocks after the n_series series'. */
static void add_capacity_plots(lua_State *L, plot_text *sb, int caps, int n_caps, int n_series)
{
    static const char *const cap_colors[] = {"#c00000", "#404040", "#8040c0", "#c07000"};
    for (int c = 0; c < n_caps; c++) {
        lua_rawgeti(L, caps, c + 1);
        plot_add(sb, ", \\\n     ");
        plot_add(sb, "ecdata");
        lua_pushfstring(L, " index %d using 1:2 with lines dt %d lw 2 lc rgb '%s' title ", n_series + c,
                        2 + c % 3, cap_colors[c % 4]);
        plot_add_top(sb);
        plot_add_quoted(sb, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
}

/* line and memory: y against x, one line per series; memory adds capacity lines. */
void plot_build_lines(lua_State *L, plot_text *sb, plot_text *db, int memory)
{
    const char *xkey = plot_spec_string(L, P_SPEC, "x", "batch_per_gpu");
    const char *ykey = plot_spec_string(L, P_SPEC, "y", memory ? "peak_bytes" : "epoch_s");
    if (memory && !plot_ends_with(ykey, "_bytes"))
        luaL_error(L, "plot: kind 'memory' plots a _bytes column (peak_bytes by default), not '%s'", ykey);
    point *pts;
    size_t n = plot_collect(L, xkey, ykey, !memory, &pts);
    if (n == 0)
        luaL_error(L, "plot: no row has numbers in both '%s' and '%s'", xkey, ykey);
    int n_series = (int)lua_rawlen(L, P_LABELS);
    double ymax = plot_max_abs_y(pts, n), xlo = HUGE_VAL, xhi = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        xlo = fmin(xlo, pts[i].x);
        xhi = fmax(xhi, pts[i].x);
    }
    axis_unit xu = plot_unit_of(xkey, xhi), yu = plot_unit_of(ykey, ymax);
    plot_add_blocks(db, pts, n, xu.scale, yu.scale);
    lua_newtable(L);
    int caps = lua_gettop(L);
    int n_caps = memory ? add_capacity_blocks(L, db, caps, xkey, xlo, xhi, xu.scale, yu.scale) : 0;
    const char *yl = plot_axis_titles(L, sb, xkey, xu, ykey, yu);
    plot_maybe_logx(L, sb, pts, n);
    if (n_caps > 0)
        add_capacity_yrange(L, sb, caps, n_caps, ymax, yu.scale);
    else
        plot_add(sb, "set yrange [0:*]\n");
    plot_add_key(sb, n_series + n_caps, plot_longest_label(L, P_LABELS, n_caps > 0 ? 30 : 0));
    plot_add(sb, "set pointsize 1.2\nplot ");
    add_series_plots(L, sb, n_series, "with linespoints lw 2", 1, yl);
    add_capacity_plots(L, sb, caps, n_caps, n_series);
    plot_add(sb, "\n");
    lua_settop(L, P_SCRIPT);
}

/* ---- breakdown ----------------------------------------------------------------------------- */

/* breakdown: one stacked bar per row, labelled by the x key(s), in milliseconds. */
void plot_build_breakdown(lua_State *L, plot_text *sb, plot_text *db)
{
    lua_getfield(L, P_SPEC, "x");
    int xkeys = lua_gettop(L);
    if (lua_type(L, xkeys) != LUA_TSTRING && lua_type(L, xkeys) != LUA_TTABLE)
        luaL_error(L, "plot: kind 'breakdown' needs x, the key (or keys) that label the bars");
    plot_add(db, "label");
    for (size_t p = 0; p < N_PARTS; p++) {
        plot_add(db, " ");
        plot_add_cell_text(db, parts[p][1]);
    }
    plot_add(db, "\n");
    lua_Integer n = (lua_Integer)luaL_len(L, P_ROWS), bars = 0;
    size_t longest = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        int row = plot_row_at(L, i);
        double v[N_PARTS];
        int ok = !plot_is_error_row(L, row);
        for (size_t p = 0; p < N_PARTS && ok; p++) {
            char name[48];
            snprintf(name, sizeof name, "breakdown_%s", parts[p][0]);
            ok = plot_field_number(L, row, name, &v[p]);
        }
        if (ok) {
            plot_push_label(L, row, xkeys);
            if (lua_rawlen(L, -1) > longest)
                longest = lua_rawlen(L, -1);
            plot_add_cell_text(db, lua_tostring(L, -1));
            lua_pop(L, 1);
            for (size_t p = 0; p < N_PARTS; p++) {
                plot_add(db, " ");
                plot_add_number(db, v[p] * 1e3);
            }
            plot_add(db, "\n");
            bars++;
        }
        lua_settop(L, xkeys);
    }
    if (bars == 0)
        luaL_error(L, "plot: no row has a step breakdown");
    plot_add_titles(L, sb, "where the time of one step goes", "", "time per step (ms)");
    plot_add(sb, "set style data histograms\nset style histogram rowstacked\n"
                 "set style fill solid 0.85 border -1\nset boxwidth 0.7 relative\n"
                 "set yrange [0:*]\nset xtics nomirror\n");
    if (bars > BARS_UPRIGHT) {
        /* Slanted labels need a bottom margin that grows with the longest one. */
        char buf[80];
        snprintf(buf, sizeof buf, "set xtics rotate by 40 right\nset bmargin %d\n",
                 4 + (int)(0.42 * (double)longest)); /* the labels, then the legend's row */
        plot_add(sb, buf);
    }
    plot_add_key(sb, (int)N_PARTS, 14);
    plot_add(sb, "ecparts = '");
    for (size_t p = 0; p < N_PARTS; p++) {
        plot_add(sb, p > 0 ? " " : "");
        plot_add(sb, plot_colour((int)p));
    }
    plot_add(sb, "'\nplot for [i=2:8] ");
    plot_add(sb, "ecdata");
    plot_add(sb, " using i:xtic(1) lc rgb word(ecparts, i - 1) title columnheader(i)\n");
    lua_settop(L, P_SCRIPT);
}

/* ---- scatter ------------------------------------------------------------------------------- */

/* scatter's blocks after the n_series series': the rows flagged by spec.front (a Pareto front,
 * sorted by x), then the row flagged by spec.best; their block numbers (-1: none). */
static void add_front_blocks(lua_State *L, plot_text *db, const char *xkey, const char *ykey, axis_unit xu,
                             axis_unit yu, int n_series, int *front_block, int *best_block)
{
    const char *fkey = plot_spec_string(L, P_SPEC, "front", "on_front");
    const char *bkey = plot_spec_string(L, P_SPEC, "best", "best");
    lua_Integer nr = (lua_Integer)luaL_len(L, P_ROWS);
    point *front = (point *)lua_newuserdatauv(L, ((size_t)nr + 1) * sizeof *front, 0);
    size_t nf = 0;
    int have_best = 0;
    double bx = 0, by = 0;
    for (lua_Integer i = 1; i <= nr; i++) {
        lua_geti(L, P_ROWS, i);
        int row = lua_gettop(L);
        double x, y;
        if (lua_istable(L, row) && !plot_is_error_row(L, row) && plot_field_number(L, row, xkey, &x) &&
            plot_field_number(L, row, ykey, &y)) {
            if (plot_row_flag(L, row, fkey))
                front[nf++] = (point){0, x, y};
            if (plot_row_flag(L, row, bkey)) {
                have_best = 1;
                bx = x;
                by = y;
            }
        }
        lua_pop(L, 1);
    }
    qsort(front, nf, sizeof *front, plot_compare_points);
    int blocks = n_series;
    *front_block = *best_block = -1;
    if (nf > 0) {
        plot_add(db, "\n\n");
        plot_add_blocks(db, front, nf, xu.scale, yu.scale);
        *front_block = blocks++;
    }
    if (have_best) {
        plot_add(db, "\n\n");
        point b = {0, bx, by};
        plot_add_blocks(db, &b, 1, xu.scale, yu.scale);
        *best_block = blocks++;
    }
    lua_pop(L, 1);
}

/* spec.xline / spec.yline (a deadline, a budget; > 0) as dashed lines across the axes. */
static void add_limit_lines(plot_text *sb, double xline, double yline, axis_unit xu, axis_unit yu)
{
    char buf[160];
    if (xline > 0) {
        snprintf(buf, sizeof buf, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 lw 1.5 lc rgb '#c00000'\n",
                 xline * xu.scale, xline * xu.scale);
        plot_add(sb, buf);
    }
    if (yline > 0) {
        snprintf(buf, sizeof buf, "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead dt 2 lw 1.5 "
                 "lc rgb '#c00000'\n", yline * yu.scale, yline * yu.scale);
        plot_add(sb, buf);
    }
}

/* scatter: y against x per group; the front joined and circled; the best starred; xline, yline. */
void plot_build_scatter(lua_State *L, plot_text *sb, plot_text *db)
{
    const char *xkey = plot_spec_string(L, P_SPEC, "x", "run_s");
    const char *ykey = plot_spec_string(L, P_SPEC, "y", "cost_run");
    point *pts;
    size_t n = plot_collect(L, xkey, ykey, 0, &pts);
    if (n == 0)
        luaL_error(L, "plot: no row has numbers in both '%s' and '%s'", xkey, ykey);
    int n_series = (int)lua_rawlen(L, P_LABELS);
    double xmax = 0;
    for (size_t i = 0; i < n; i++)
        xmax = fmax(xmax, fabs(pts[i].x));
    double xline = plot_spec_number(L, "xline"), yline = plot_spec_number(L, "yline");
    xmax = fmax(xmax, xline);
    axis_unit xu = plot_unit_of(xkey, xmax), yu = plot_unit_of(ykey, fmax(plot_max_abs_y(pts, n), yline));
    plot_add_blocks(db, pts, n, xu.scale, yu.scale);
    int front_block, best_block;
    add_front_blocks(L, db, xkey, ykey, xu, yu, n_series, &front_block, &best_block);
    const char *yl = plot_axis_titles(L, sb, xkey, xu, ykey, yu);
    plot_add(sb, "set xrange [0:*]\nset yrange [0:*]\nset pointsize 1.3\n");
    add_limit_lines(sb, xline, yline, xu, yu);
    plot_add_key(sb, n_series + (front_block >= 0) + (best_block >= 0), plot_longest_label(L, P_LABELS, 12));
    plot_add(sb, "plot ");
    add_series_plots(L, sb, n_series, "with points", 0, yl);
    if (front_block >= 0) {
        lua_pushfstring(L, ", \\\n     ecdata index %d using 1:2 with linespoints lw 2 lc rgb '#222222' pt 6 ps 2.2 "
                        "title 'Pareto front'", front_block);
        plot_add_top(sb);
    }
    if (best_block >= 0) {
        lua_pushfstring(L, ", \\\n     ecdata index %d using 1:2 with points pt 3 ps 3.5 lw 2 lc rgb '#c00000' "
                        "title 'chosen'", best_block);
        plot_add_top(sb);
    }
    plot_add(sb, "\n");
    lua_settop(L, P_SCRIPT);
}
