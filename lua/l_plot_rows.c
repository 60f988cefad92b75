/*
 * l_plot_rows.c: what ec.plot reads: the rows and the spec.
 *
 * Rows come from ec.sweep / ec.predict (nested: breakdown.forward_s, memory.peak_bytes), a
 * validate CSV or the CLI (flat: breakdown_forward_s, numbers as strings); a field is read
 * either way.  A row with an `error` (a refused sweep point) is never drawn, nor a time of a
 * configuration that does not fit (fits = false).  The points of a plot are grouped into
 * series by the spec's group key(s), in order of first appearance, each series one gnuplot
 * data block.
 */
#include "l_plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x spans at least this ratio: a log2 axis (batch sizes 1..256). */
#define LOGX_RATIO 8.0

/* ---- reading rows ---------------------------------------------------------------------- */

/* Push row[name]; for a name that l_result.c puts in a subtable ("breakdown_forward_s",
 * "memory_weights_bytes") also look there, so flat CSV rows and nested result rows both work. */
int plot_push_field(lua_State *L, int row, const char *name)
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
int plot_field_number(lua_State *L, int row, const char *name, double *x)
{
    plot_push_field(L, row, name);
    int isnum = 0;
    lua_Number v = lua_tonumberx(L, -1, &isnum);
    lua_pop(L, 1);
    *x = (double)v;
    return isnum && isfinite(*x);
}

/* Push the label of a row: the values of the key (a string) or keys (an array of strings)
 * at stack index keys, joined with " ". */
void plot_push_label(lua_State *L, int row, int keys)
{
    if (lua_type(L, keys) == LUA_TSTRING) {
        plot_push_field(L, row, lua_tostring(L, keys));
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
        plot_push_field(L, row, luaL_tolstring(L, -1, NULL));
        lua_remove(L, -2);
        lua_remove(L, -2);
        luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);
        parts_on_stack++;
    }
    lua_concat(L, parts_on_stack);
}

/* Does the row carry an error (a sweep point the library refused)? */
int plot_is_error_row(lua_State *L, int row)
{
    int t = lua_getfield(L, row, "error");
    lua_pop(L, 1);
    return t != LUA_TNIL;
}

int plot_row_flag(lua_State *L, int row, const char *key)
{
    lua_getfield(L, row, key);
    int on = lua_isboolean(L, -1) ? lua_toboolean(L, -1) : (lua_isnumber(L, -1) && lua_tonumber(L, -1) != 0);
    lua_pop(L, 1);
    return on;
}

/* ---- the spec -------------------------------------------------------------------------- */

/* Optional string field of the spec, else def (the string stays alive in the spec). */
const char *plot_spec_string(lua_State *L, int spec, const char *key, const char *def)
{
    lua_getfield(L, spec, key);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : def;
    lua_pop(L, 1);
    return s;
}

/* spec[key] as a number, or 0 when absent. */
double plot_spec_number(lua_State *L, const char *key)
{
    lua_getfield(L, P_SPEC, key);
    double v = lua_isnumber(L, -1) ? (double)lua_tonumber(L, -1) : 0;
    lua_pop(L, 1);
    return v;
}

/* ---- series: points grouped by a label --------------------------------------------------- */

/* Push row i of P_ROWS (it must be a table); its stack index. */
int plot_row_at(lua_State *L, lua_Integer i)
{
    if (lua_geti(L, P_ROWS, i) != LUA_TTABLE)
        luaL_error(L, "plot: row %d is not a table", (int)i);
    return lua_gettop(L);
}

/* Push the row's series label: the value(s) of the spec's group key(s), "" without one. */
void plot_push_series_label(lua_State *L, int row)
{
    if (lua_isnil(L, P_GROUP))
        lua_pushliteral(L, "");
    else
        plot_push_label(L, row, P_GROUP);
}

/* The index of string s in the table at idx (label -> index), adding it (and to the array
 * at list) when new; *n counts them. */
int plot_index_of(lua_State *L, int idx, int list, const char *s, int *n)
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

int plot_compare_points(const void *a, const void *b)
{
    const point *p = (const point *)a, *q = (const point *)b;
    if (p->series != q->series)
        return p->series < q->series ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

/* Is row.fits false (a configuration that runs out of memory has no time to plot)? */
static int does_not_fit(lua_State *L, int row)
{
    lua_getfield(L, row, "fits");
    int no = (lua_isboolean(L, -1) && !lua_toboolean(L, -1))
             || (lua_type(L, -1) != LUA_TNIL && lua_isnumber(L, -1) && lua_tonumber(L, -1) == 0);
    lua_pop(L, 1);
    return no;
}

/* Collect (x, y) of every usable row into a point array (a userdata left at P_POINTS) and
 * the series labels, in order of first appearance, into P_LABELS.  Returns the count. */
size_t plot_collect(lua_State *L, const char *xkey, const char *ykey, int skip_oom, point **out)
{
    lua_Integer n = (lua_Integer)luaL_len(L, P_ROWS);
    point *pts = (point *)lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *pts, 0); /* P_POINTS */
    lua_newtable(L);                                          /* label -> series */
    int index = lua_gettop(L);
    size_t k = 0;
    int n_series = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        int row = plot_row_at(L, i);
        double x, y;
        if (!plot_is_error_row(L, row) && !(skip_oom && does_not_fit(L, row))
            && plot_field_number(L, row, xkey, &x) && plot_field_number(L, row, ykey, &y)) {
            plot_push_series_label(L, row);
            int series = plot_index_of(L, index, P_LABELS, lua_tostring(L, -1), &n_series);
            pts[k++] = (point){series, x, y};
        }
        lua_settop(L, index);
    }
    lua_settop(L, P_POINTS);
    qsort(pts, k, sizeof *pts, plot_compare_points);
    *out = pts;
    return k;
}

/* One gnuplot data block per series ("index i" in plot commands), blocks apart by two
 * blank lines. */
void plot_add_blocks(plot_text *d, const point *pts, size_t n, double xs, double ys)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pts[i].series != pts[i - 1].series)
            plot_add(d, "\n\n");
        plot_add_number(d, pts[i].x * xs);
        plot_add(d, " ");
        plot_add_number(d, pts[i].y * ys);
        plot_add(d, "\n");
    }
}

double plot_max_abs_y(const point *pts, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(pts[i].y));
    return m;
}

/* set logscale x 2 when x is positive and spans LOGX_RATIO or more (batch sizes), unless
 * spec.logx says otherwise. */
void plot_maybe_logx(lua_State *L, plot_text *b, const point *pts, size_t n)
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
        plot_add(b, "set logscale x 2\n");
}
