/*
 * l_predict.c: ec.predict(cfg) and ec.max_batch(cfg [, limit]), the Lua face of
 * ec_predict and ec_max_batch.  A config table is read by the shared ecL_toconfig (bad
 * keys or values raise); expected failures of the prediction itself (unknown GPU, model
 * or task, missing batch) return nil, message, code.  Results come from l_result.c.
 */
#include "lec_priv.h"

#include <limits.h>

/* ec.predict(cfg) -> result table | nil, msg, code */
static int l_predict_predict(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    ec_config cfg;
    ec_result res;
    int st = ecL_toconfig(L, 1, ctx, &cfg);
    if (st == EC_OK)
        st = ec_predict(ctx, &cfg, &res);
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    ecL_pushresult_sized(L, &res, 6);
    ecL_setresolved(L, ctx, &cfg);
    return 1;
}

/* ec.max_batch(cfg [, limit]) -> integer (0: not even batch 1 fits) | nil, msg, code.
 * batch_per_gpu may be left out of cfg: it is the unknown. */
static int l_predict_max_batch(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    ec_config cfg;
    lua_Integer limit = luaL_optinteger(L, 2, 0);
    luaL_argcheck(L, limit >= 0 && limit <= INT_MAX, 2, "limit out of range");
    int batch = 0;
    int st = ecL_toconfig(L, 1, ctx, &cfg);
    if (st == EC_OK)
        st = ec_max_batch(ctx, &cfg, (int)limit, &batch);
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_pushinteger(L, batch);
    return 1;
}

static const luaL_Reg predict_funcs[] = {
    {"predict", l_predict_predict},
    {"max_batch", l_predict_max_batch},
    {NULL, NULL},
};

int ecL_open_predict(lua_State *L)
{
    luaL_setfuncs(L, predict_funcs, 1);
    return 0;
}
