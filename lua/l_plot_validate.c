/*
 * l_plot_validate.c: ec.plot's validate kind, predicted against measured.
 *
 * One panel per metric (a gnuplot multiplot), each on its own axes (log when its runs span
 * 50x or more) with y = x, the +-20% band, each run's p10-p90 bar and the panel's MAPE in its
 * title, then a legend panel with the series (GPUs).  Outcome rows (metric oom or fits) are
 * counted in the title, never drawn.  Rows: a validate CSV (measured, predicted, metric, p10,
 * p90) or the CLI's `validate --plot` (lua/cli_validate.c); read through l_plot_rows.c.
 */
#include "l_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run on the validate plot: its panel (metric), its point (series: the GPU, x: measured,
 * y: predicted) and the prediction's p10-p90 interval (lo = hi = y when the row has none). */
typedef struct vpoint {
    int panel;
    point p;
    double lo, hi;
} vpoint;

/* Order by panel, then as plot_compare_points (series, then x). */
static int compare_vpoints(const void *a, const void *b)
{
    const vpoint *p = (const vpoint *)a, *q = (const vpoint *)b;
    if (p->panel != q->panel)
        return p->panel < q->panel ? -1 : 1;
    return plot_compare_points(&p->p, &q->p);
}

/* Outcomes (the run died of out-of-memory, or fitted) are scored apart: never on an axis. */
static int is_outcome(const char *metric)
{
    return strcmp(metric, "oom") == 0 || strcmp(metric, "fits") == 0;
}

/* Read the rows into vpoints (a userdata left at P_POINTS), series labels into P_LABELS and
 * panel names into the table at panels (pushed, P_POINTS + 1).  *outcomes counts the rows of
 * an outcome metric, *skipped the rows without positive numbers. */
static size_t collect_validate(lua_State *L, int *n_panels, size_t *outcomes, size_t *skipped, vpoint **out)
{
    const char *xkey = plot_spec_string(L, P_SPEC, "x", "measured");
    const char *ykey = plot_spec_string(L, P_SPEC, "y", "predicted");
    const char *pkey = plot_spec_string(L, P_SPEC, "panel", "metric");
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
        int row = plot_row_at(L, i);
        const char *panel = plot_push_field(L, row, pkey) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        double x, y, lo, hi;
        if (plot_is_error_row(L, row)) {
        } else if (is_outcome(panel)) {
            (*outcomes)++;
        } else if (!plot_field_number(L, row, xkey, &x) || !plot_field_number(L, row, ykey, &y) || x <= 0 || y <= 0) {
            (*skipped)++;
        } else {
            if (!plot_field_number(L, row, "p10", &lo) || !plot_field_number(L, row, "p90", &hi) || lo <= 0 || hi < lo)
                lo = hi = y;
            int p = plot_index_of(L, panel_idx, panels, panel, n_panels);
            plot_push_series_label(L, row);
            int s = plot_index_of(L, series_idx, P_LABELS, lua_tostring(L, -1), &n_series);
            pts[k++] = (vpoint){p, {s, x, y}, fmin(lo, y), fmax(hi, y)};
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
static int add_validate_panel(lua_State *L, plot_text *sb, plot_text *db, const char *metric, const vpoint *pts,
                              size_t n, int first_block)
{
    double lo = HUGE_VAL, hi = 0, ape = 0;
    size_t within = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, fmin(pts[i].p.x, pts[i].lo));
        hi = fmax(hi, fmax(pts[i].p.x, pts[i].hi));
        ape += fabs(pts[i].p.y - pts[i].p.x) / pts[i].p.x;
        within += fabs(pts[i].p.y - pts[i].p.x) <= 0.2 * pts[i].p.x;
    }
    axis_unit u = plot_unit_of(metric, hi);
    int logxy = hi / lo >= 50; /* log axes when the runs span 50x or more */
    double pad = 0.15 * (hi - lo + 0.1 * hi); /* linear axes: room around the runs */
    double a = logxy ? lo / 1.3 : fmax(0, lo - pad), b = logxy ? hi * 1.3 : hi + pad;
    plot_push_axis_label(L, metric[0] != '\0' ? metric : "value", u);
    const char *label = lua_tostring(L, -1);
    char mape[16];
    snprintf(mape, sizeof mape, "%.1f", 100 * ape / (double)n);
    lua_pushfstring(L, "%d run%s, MAPE %s%%, %d within +-20%%", (int)n, n == 1 ? "" : "s", mape, (int)within);
    plot_add(sb, "set title "); /* two lines: the metric, then the panel's scores */
    plot_add_quoted(sb, label);
    plot_add(sb, ".\"\\n\".");
    plot_add_quoted(sb, lua_tostring(L, -1));
    plot_add(sb, "\n");
    lua_pushfstring(L, "measured %s", label);
    plot_add_setting(sb, "xlabel", lua_tostring(L, -1));
    lua_pushfstring(L, "predicted %s", label);
    plot_add_setting(sb, "ylabel", lua_tostring(L, -1));
    lua_pop(L, 4);
    char buf[480];
    snprintf(buf, sizeof buf, "unset logscale\n%sset xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\nset size ratio -1\n"
             "plot '+' using 1:($1*0.8):($1*1.2) with filledcurves fc rgb '#d8d8d8' notitle, \\\n"
             "     x with lines lw 1.5 lc rgb '#333333' notitle",
             logxy ? "set logscale xy\n" : "", a * u.scale, b * u.scale, a * u.scale, b * u.scale);
    plot_add(sb, buf);
    int block = first_block;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pts[i].p.series == pts[i - 1].p.series)
            continue;
        plot_add(db, block > 0 ? "\n\n" : "");
        for (size_t j = i; j < n && pts[j].p.series == pts[i].p.series; j++) {
            snprintf(buf, sizeof buf, "%.9g %.9g %.9g %.9g\n", pts[j].p.x * u.scale, pts[j].p.y * u.scale,
                     pts[j].lo * u.scale, pts[j].hi * u.scale);
            plot_add(db, buf);
        }
        lua_pushfstring(L, ", \\\n     ecdata index %d using 1:2:3:4 with yerrorbars ps 0.7 lw 1", block++);
        plot_add_top(sb);
        plot_add_series_style(sb, pts[i].p.series, 0);
        plot_add(sb, " notitle");
    }
    plot_add(sb, "\n");
    return block;
}

/* The legend panel: the series, the band and the bars, on an empty frame. */
static void add_legend_panel(lua_State *L, plot_text *sb, int n_series)
{
    plot_add(sb, "unset logscale\nunset title\nunset xlabel\nunset ylabel\nunset border\nunset tics\nunset grid\n"
                 "set size noratio\nset xrange [0:1]\nset yrange [0:1]\n");
    char buf[160];
    snprintf(buf, sizeof buf, "set key center center vertical Left reverse maxrows %d font ',10'\n",
             n_series + 3 < 18 ? n_series + 3 : 18);
    plot_add(sb, buf);
    plot_add(sb, "plot NaN with lines lw 1.5 lc rgb '#333333' title 'predicted = measured', \\\n"
                 "     NaN with boxes fs solid noborder fc rgb '#d8d8d8' title 'within +-20%', \\\n"
                 "     NaN with lines lw 1 lc rgb '#000000' title 'bars: p10-p90 of the prediction'");
    for (int s = 0; s < n_series; s++) {
        lua_rawgeti(L, P_LABELS, s + 1);
        const char *label = lua_tostring(L, -1);
        plot_add(sb, ", \\\n     NaN with points ps 1");
        plot_add_series_style(sb, s, 0);
        plot_add(sb, " title ");
        plot_add_quoted(sb, label[0] != '\0' ? label : "runs");
        lua_pop(L, 1);
    }
}

/* validate: predicted against measured, one panel per metric (each on its own axes, log
 * when it spans 50x or more), with y = x, the +-20% band and the p10-p90 bars; the series
 * (GPUs) in a legend panel.  Outcome rows (oom, fits) are counted in the title, not drawn. */
void plot_build_validate(lua_State *L, plot_text *sb, plot_text *db)
{
    vpoint *pts;
    int n_panels;
    size_t outcomes = 0, skipped = 0;
    size_t n = collect_validate(L, &n_panels, &outcomes, &skipped, &pts);
    int panels = P_POINTS + 1;
    if (n == 0)
        luaL_error(L, "plot: no row has positive numbers in both '%s' and '%s'%s",
                   plot_spec_string(L, P_SPEC, "x", "measured"), plot_spec_string(L, P_SPEC, "y", "predicted"),
                   outcomes > 0 ? " (out-of-memory outcomes are scored apart, not drawn)" : "");
    int n_series = (int)lua_rawlen(L, P_LABELS);
    int cells = n_panels + 1, cols = cells <= 3 ? cells : cells == 4 ? 2 : 3, rows = (cells + cols - 1) / cols;
    sb->width = cols * 420;
    sb->height = rows * 430 + 40;
    lua_pushfstring(L, "%s: %d runs", plot_spec_string(L, P_SPEC, "title", "predicted against measured"), (int)n);
    if (outcomes > 0)
        lua_pushfstring(L, "; %d out-of-memory outcome%s scored apart, not drawn", (int)outcomes,
                        outcomes == 1 ? "" : "s");
    else
        lua_pushliteral(L, "");
    if (skipped > 0)
        lua_pushfstring(L, "; %d rows without positive numbers", (int)skipped);
    else
        lua_pushliteral(L, "");
    lua_pushstring(L, plot_spec_string(L, P_SPEC, "note", ""));
    lua_concat(L, 4);
    char buf[160];
    snprintf(buf, sizeof buf, "set multiplot layout %d,%d title ", rows, cols);
    plot_add(sb, buf);
    plot_add_quoted(sb, lua_tostring(L, -1));
    lua_pop(L, 1);
    plot_add(sb, "\nunset key\nset samples 200\nset bars small\n");
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
    add_legend_panel(L, sb, n_series);
    plot_add(sb, "\nunset multiplot\n");
    lua_settop(L, P_SCRIPT);
}

