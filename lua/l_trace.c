/*
 * l_trace.c: ec.trace(cfg, path [, max_steps]), the Lua face of ec_trace_write: the simulated
 * steps of cfg's epoch as a Chrome trace (open it in ui.perfetto.dev).  Bad keys raise, as in
 * ec.predict; expected failures (unknown GPU, an unwritable path) return nil, message, code.
 */
#include "lec_priv.h"

#include <limits.h>

/* ec.trace(cfg, path [, max_steps]) -> true | nil, msg, code */
static int l_trace_write(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    ec_config cfg;
    int st = ecL_toconfig(L, 1, ctx, &cfg);
    const char *path = ecL_checkpath(L, 2);
    ecL_check_output(L, path);
    lua_Integer steps = luaL_optinteger(L, 3, 0);
    luaL_argcheck(L, steps >= 0 && steps <= INT_MAX, 3, "max_steps out of range");
    if (st == EC_OK)
        st = ec_trace_write(ctx, &cfg, path, (int)steps);
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg trace_funcs[] = {
    {"trace", l_trace_write},
    {NULL, NULL},
};

int ecL_open_trace(lua_State *L)
{
    luaL_setfuncs(L, trace_funcs, 1);
    return 0;
}
