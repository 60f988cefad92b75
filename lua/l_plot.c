/*
 * l_plot.c: ec.plot{kind=, rows=, path=, ...}, pictures of predictions through gnuplot.
 *
 * Presentation only: it reads rows (from ec.sweep, ec.predict or a validate CSV), writes a
 * gnuplot script and a data file, and has gnuplot draw them into path (l_plot_run.c: a
 * fresh temporary folder, the picture renamed into place, so a failure never leaves half an
 * image; a clear nil, message, "ENOTFOUND" without gnuplot on PATH).  PNG (pngcairo when
 * that terminal exists, else png) or SVG, chosen by the path's extension.  This file checks
 * the spec and hands it to its kind; l_plot.h lists the files of the others.
 *
 * Kinds:
 *   line       y against x (a swept key), one line per value of group
 *   breakdown  the step's parts (forward, backward, ...) as stacked bars, one bar per row
 *   memory     peak memory against x with each GPU's capacity as a dashed line
 *   validate   predicted against measured, one panel per metric, with y = x and the +-20% band
 *   scatter    y against x as points, one colour per group, the rows flagged by `front` (a
 *              Pareto front) joined and circled, the `best` row starred, optional xline /
 *              yline (a deadline, a budget) as dashed lines
 */
#include "l_plot.h"

#include <string.h>
#include <strings.h>

/* spec.path, checked: a .png or .svg name (*svg says which) that gnuplot cannot read as a
 * pipe and that hides no line break, escape or NUL; the module may write it (a sandbox). */
static const char *check_path(lua_State *L, int *svg)
{
    const char *path = plot_spec_string(L, P_SPEC, "path", NULL);
    if (path == NULL) {
        luaL_error(L, "plot: path expected (a .png or .svg file)");
        return NULL; /* not reached: luaL_error raises */
    }
    size_t plen = strlen(path);
    *svg = plen > 4 && strcasecmp(path + plen - 4, ".svg") == 0;
    if (!*svg && !(plen > 4 && strcasecmp(path + plen - 4, ".png") == 0))
        luaL_error(L, "plot: path '%s' must end in .png or .svg", path);
    /* A name gnuplot would read as a pipe, or one that hides a line break or an escape. */
    for (size_t i = 0; i < plen; i++)
        if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
            luaL_error(L, "plot: path has a control character (byte %d)", (int)(unsigned char)path[i]);
    if (path[0] == '|')
        luaL_error(L, "plot: path '%s' starts with '|' (gnuplot would run it as a command)", path);
    lua_getfield(L, P_SPEC, "path");
    size_t rawlen;
    lua_tolstring(L, -1, &rawlen);
    lua_pop(L, 1);
    if (rawlen != plen)
        luaL_error(L, "plot: path has an embedded NUL byte");
    ecL_check_output(L, path);
    return path;
}

/* Build the script sb and the data db of the kind; raises on an unknown kind. */
static void build(lua_State *L, const char *kind, plot_text *sb, plot_text *db)
{
    if (strcmp(kind, "line") == 0)
        plot_build_lines(L, sb, db, 0);
    else if (strcmp(kind, "memory") == 0)
        plot_build_lines(L, sb, db, 1);
    else if (strcmp(kind, "breakdown") == 0)
        plot_build_breakdown(L, sb, db);
    else if (strcmp(kind, "validate") == 0)
        plot_build_validate(L, sb, db);
    else if (strcmp(kind, "scatter") == 0)
        plot_build_scatter(L, sb, db);
    else
        luaL_error(L, "plot: unknown kind '%s' (line, breakdown, memory, validate or scatter)", kind);
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
    const char *kind = plot_spec_string(L, P_SPEC, "kind", NULL);
    if (kind == NULL)
        return luaL_error(L, "plot: kind expected (line, breakdown, memory, validate or scatter)");
    int svg = 0;
    const char *path = check_path(L, &svg);
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
    plot_text db, sb;
    plot_text_new(L, &db);                                         /* P_DATA */
    plot_text_new(L, &sb);                                         /* P_SCRIPT */
    plot_add(&sb, "");                                             /* the terminal, set last */
    build(L, kind, &sb, &db);
    plot_set_terminal(&sb, svg);
    plot_text_push(&db);
    size_t data_len, script_len;
    const char *data = lua_tolstring(L, -1, &data_len);
    plot_text_push(&sb);
    const char *script = lua_tolstring(L, -1, &script_len);
    int kst = plot_keep_script(L, ctx, path, script, script_len, data, data_len);
    if (kst != EC_OK)
        return plot_fail(L, ecL_status_name(kst), ec_ctx_errmsg(ctx));
    return plot_draw(L, ctx, path, svg, script, script_len, data, data_len);
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
