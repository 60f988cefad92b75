/*
 * l_plot_style.c: how ec.plot's pictures look, written as gnuplot text.
 *
 * The script and the data file are built as pieces in a Lua table (plot_text) and joined at
 * the end; this file owns that builder, the terminal lines (PNG through pngcairo when this
 * gnuplot has it, else png; or SVG), the series' palette (distinct up to 20 series, then
 * dashes and point shapes), the legend below the axes, and the axes' labels and units (from
 * a column's name: _s, _bytes, _frac ...).  Inputs: the kinds (l_plot_kinds.c,
 * l_plot_validate.c) and the spec's title/xlabel/ylabel.  Presentation only.
 */
#include "l_plot.h"

#include <stdio.h>
#include <string.h>

/* ---- gnuplot text, built as pieces in a Lua table and joined at the end ------------------ */

void plot_text_new(lua_State *L, plot_text *b)
{
    lua_newtable(L);
    b->L = L;
    b->t = lua_gettop(L);
    b->n = 0;
    b->width = PLOT_WIDTH;
    b->height = PLOT_HEIGHT;
}

void plot_add(plot_text *b, const char *s)
{
    lua_pushstring(b->L, s);
    lua_rawseti(b->L, b->t, ++b->n);
}

/* Add the value on top of the stack (popped). */
void plot_add_top(plot_text *b)
{
    lua_rawseti(b->L, b->t, ++b->n);
}

void plot_add_number(plot_text *b, double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.9g", x);
    plot_add(b, buf);
}

/* Add s between two q's, with each from inside made to and line breaks made spaces. */
static void add_enclosed(plot_text *b, const char *q, const char *s, const char *from, const char *to)
{
    lua_State *L = b->L;
    plot_add(b, q);
    luaL_gsub(L, s, from, to);
    luaL_gsub(L, lua_tostring(L, -1), "\n", " ");
    lua_remove(L, -2);
    plot_add_top(b);
    plot_add(b, q);
}

/* Add s as a gnuplot single-quoted string ('' stands for a quote inside). */
void plot_add_quoted(plot_text *b, const char *s)
{
    add_enclosed(b, "'", s, "'", "''");
}

/* Add a data-file string cell: double quotes, with any inside made single. */
void plot_add_cell_text(plot_text *b, const char *s)
{
    add_enclosed(b, "\"", s, "\"", "'");
}

/* Push the joined text (the pieces table stays). */
void plot_text_push(plot_text *b)
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
void plot_set_terminal(plot_text *b, int svg)
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

const char *plot_colour(int i)
{
    return palette[i % N_PALETTE];
}

/* The style of series s (0-based): colour, dash type and point shape. */
void plot_add_series_style(plot_text *b, int s, int lines)
{
    int round = s / PALETTE_SOLID;
    if (lines)
        lua_pushfstring(b->L, " lc rgb '%s' dt %d pt %d", palette[s % N_PALETTE], 1 + round % 5, shapes[round % 6]);
    else
        lua_pushfstring(b->L, " lc rgb '%s' pt %d", palette[s % N_PALETTE], shapes[round % 6]);
    plot_add_top(b);
}

/* The legend goes below the axes, entries side by side in as many columns as the width
 * holds: the axes keep the picture's whole width whatever the number of series, and the
 * picture grows by the legend's rows.  longest: the longest entry's length in characters. */
void plot_add_key(plot_text *b, int entries, size_t longest)
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
    plot_add(b, buf);
}

/* The longest series label (P_LABELS), at least min. */
size_t plot_longest_label(lua_State *L, int labels, size_t min)
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

void plot_add_setting(plot_text *b, const char *what, const char *value)
{
    plot_add(b, "set ");
    plot_add(b, what);
    plot_add(b, " ");
    plot_add_quoted(b, value);
    plot_add(b, "\n");
}

/* ---- axis labels, units and titles ------------------------------------------------------ */

int plot_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Display unit of a column from its name's unit suffix and the largest value shown. */
axis_unit plot_unit_of(const char *name, double max_abs)
{
    if (plot_ends_with(name, "_bytes"))
        return (axis_unit){1 / GIB, "GiB"};
    if (plot_ends_with(name, "_frac"))
        return (axis_unit){100, "%"};
    if (plot_ends_with(name, "_ms"))
        return (axis_unit){1, "ms"};
    if (plot_ends_with(name, "_per_s"))
        return (axis_unit){1, "per s"};
    if (plot_ends_with(name, "_s"))
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
void plot_push_axis_label(lua_State *L, const char *name, axis_unit u)
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

void plot_add_titles(lua_State *L, plot_text *b, const char *title, const char *xlabel, const char *ylabel)
{
    plot_add_setting(b, "title", plot_spec_string(L, P_SPEC, "title", title));
    plot_add_setting(b, "xlabel", plot_spec_string(L, P_SPEC, "xlabel", xlabel));
    plot_add_setting(b, "ylabel", plot_spec_string(L, P_SPEC, "ylabel", ylabel));
}

/* The axes' labels of y against x and the title "Y against X"; the labels stay on the stack
 * (x's, then y's), so the kind may use y's as a series' title later. */
const char *plot_axis_titles(lua_State *L, plot_text *b, const char *xkey, axis_unit xu, const char *ykey,
                             axis_unit yu)
{
    plot_push_axis_label(L, xkey, xu);
    plot_push_axis_label(L, ykey, yu);
    const char *xl = lua_tostring(L, -2), *yl = lua_tostring(L, -1);
    lua_pushfstring(L, "%s against %s", yl, xl);
    plot_add_titles(L, b, lua_tostring(L, -1), xl, yl);
    lua_pop(L, 1);
    return yl;
}
