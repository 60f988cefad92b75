/*
 * l_plot.h: what the files of ec.plot share (private to lua/, not installed).
 *
 * ec.plot is one Lua function (l_plot.c) built from files of one concern each:
 *   l_plot.c           the spec's checks, the kinds' dispatch, the module's registration
 *   l_plot_rows.c      reading the rows and the spec: fields, labels, the points of a series
 *   l_plot_style.c     the gnuplot text builder, the terminal, the palette, the legend, the
 *                      axes' labels and units
 *   l_plot_kinds.c     the kinds line, memory, breakdown and scatter
 *   l_plot_validate.c  the validate kind: one panel per metric (a gnuplot multiplot)
 *   l_plot_run.c       the gnuplot process, its work folder, the kept script and the picture
 * Every function builds on the Lua stack of ecL_plot, whose slots are P_* below.
 */
#ifndef L_PLOT_H
#define L_PLOT_H

#include "lec_priv.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Picture size in pixels (a kind may grow it: the legend's rows, the validate panels). */
#define PLOT_WIDTH 1000
#define PLOT_HEIGHT 620

/* Spec slots on the stack of ecL_plot. */
enum { P_SPEC = 1, P_ROWS, P_GROUP, P_LABELS, P_OUT, P_DATA, P_SCRIPT, P_POINTS };

/* ---- l_plot_style.c: gnuplot text, built as pieces in a Lua table and joined at the end ---- */

typedef struct plot_text {
    lua_State *L;
    int t;             /* stack index of the table of pieces */
    lua_Integer n;
    int width, height; /* the script's picture size in pixels (a kind may grow it) */
} plot_text;

/* Push a new, empty text (its table of pieces) and set b up on it. */
void plot_text_new(lua_State *L, plot_text *b);
void plot_add(plot_text *b, const char *s);
/* Add the value on top of the stack (popped). */
void plot_add_top(plot_text *b);
void plot_add_number(plot_text *b, double x);
/* Add s as a gnuplot single-quoted string ('' stands for a quote inside). */
void plot_add_quoted(plot_text *b, const char *s);
/* Add a data-file string cell: double quotes, with any inside made single. */
void plot_add_cell_text(plot_text *b, const char *s);
/* set what 'value' */
void plot_add_setting(plot_text *b, const char *what, const char *value);
/* Push the joined text (the pieces table stays). */
void plot_text_push(plot_text *b);
/* Fill the script's first piece (left empty by ecL_plot) with the terminal and output lines. */
void plot_set_terminal(plot_text *b, int svg);

/* Colour i of the palette (20 that stay apart on white, then round again). */
const char *plot_colour(int i);
/* The style of series s (0-based): colour, dash type (lines) and point shape. */
void plot_add_series_style(plot_text *b, int s, int lines);
/* The legend below the axes for entries of at most longest characters; grows b->height. */
void plot_add_key(plot_text *b, int entries, size_t longest);
/* The longest series label (P_LABELS), at least min. */
size_t plot_longest_label(lua_State *L, int labels, size_t min);

/* Display unit of a column: values are multiplied by scale to be shown in unit. */
typedef struct axis_unit {
    double scale;
    const char *unit; /* "" for none */
} axis_unit;

int plot_ends_with(const char *s, const char *suffix);
/* Display unit of a column from its name's unit suffix and the largest value shown. */
axis_unit plot_unit_of(const char *name, double max_abs);
/* Push the axis label of a column: "epoch time (s)", "peak GPU memory (GiB)". */
void plot_push_axis_label(lua_State *L, const char *name, axis_unit u);
/* title, xlabel and ylabel: spec.title/xlabel/ylabel, else the ones given. */
void plot_add_titles(lua_State *L, plot_text *b, const char *title, const char *xlabel, const char *ylabel);
/* The axes' labels of y against x and the title "Y against X": the two labels are left on
 * the stack (x's, then y's: they stay alive while the kind uses them); returns y's. */
const char *plot_axis_titles(lua_State *L, plot_text *b, const char *xkey, axis_unit xu, const char *ykey,
                             axis_unit yu);

/* ---- l_plot_rows.c: the rows and the spec ------------------------------------------------ */

/* Optional string field of the spec, else def (the string stays alive in the spec). */
const char *plot_spec_string(lua_State *L, int spec, const char *key, const char *def);
/* spec[key] as a number, or 0 when absent. */
double plot_spec_number(lua_State *L, const char *key);

/* Push row i of P_ROWS, which must be a table (raises otherwise); its stack index. */
int plot_row_at(lua_State *L, lua_Integer i);
/* Push row[name], looking in the breakdown/memory subtables too; its type. */
int plot_push_field(lua_State *L, int row, const char *name);
/* row[name] as a number (numeric strings from CSV rows too); 0 when it is not one. */
int plot_field_number(lua_State *L, int row, const char *name, double *x);
/* Push the label of a row: the key (or keys) at stack index keys, joined with " ". */
void plot_push_label(lua_State *L, int row, int keys);
/* Push the row's series label: its P_GROUP label, "" without a group. */
void plot_push_series_label(lua_State *L, int row);
/* Does the row carry an error (a sweep point the library refused)? */
int plot_is_error_row(lua_State *L, int row);
/* row[key] true (or a non-zero number)? */
int plot_row_flag(lua_State *L, int row, const char *key);
/* The index of string s in the table at idx (label -> index), adding it (and to the array
 * at list) when new; *n counts them. */
int plot_index_of(lua_State *L, int idx, int list, const char *s, int *n);

/* A point of a series. */
typedef struct point {
    int series;
    double x, y;
} point;

/* Order by series, then x. */
int plot_compare_points(const void *a, const void *b);
/* Collect (x, y) of every usable row into a point array (a userdata left at P_POINTS) and
 * the series labels, in order of first appearance, into P_LABELS.  Returns the count. */
size_t plot_collect(lua_State *L, const char *xkey, const char *ykey, int skip_oom, point **out);
/* One gnuplot data block per series, x and y scaled. */
void plot_add_blocks(plot_text *d, const point *pts, size_t n, double xs, double ys);
double plot_max_abs_y(const point *pts, size_t n);
/* set logscale x 2 when x spans a wide positive range, unless spec.logx says otherwise. */
void plot_maybe_logx(lua_State *L, plot_text *b, const point *pts, size_t n);

/* ---- the kinds: each builds the script sb and the data db from the rows ------------------ */

/* l_plot_kinds.c */
void plot_build_lines(lua_State *L, plot_text *sb, plot_text *db, int memory);
void plot_build_breakdown(lua_State *L, plot_text *sb, plot_text *db);
void plot_build_scatter(lua_State *L, plot_text *sb, plot_text *db);
/* l_plot_validate.c */
void plot_build_validate(lua_State *L, plot_text *sb, plot_text *db);

/* ---- l_plot_run.c: gnuplot ------------------------------------------------------------------ */

/* nil, "CODE: msg", "CODE": ec.plot's failure (3 results). */
int plot_fail(lua_State *L, const char *code, const char *msg);
/* The context the picture is written through (the module's, or a bare one for the CLI). */
ec_ctx *plot_ctx(lua_State *L);
/* spec.script / EPOCHCAST_PLOT_SCRIPT: keep the script and its data there.  EC_OK or a
 * status with the message on ctx. */
int plot_keep_script(lua_State *L, ec_ctx *ctx, const char *picture, const char *script, size_t script_len,
                     const char *data, size_t data_len);
/* Run gnuplot on script and data in a fresh work folder and put the picture at path:
 * ec.plot's results (true, or nil, msg, code). */
int plot_draw(lua_State *L, ec_ctx *ctx, const char *path, int svg, const char *script, size_t script_len,
              const char *data, size_t data_len);

#endif /* L_PLOT_H */
