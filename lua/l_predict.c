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

/* ec.stages(cfg) -> {{first_layer=, layers=, micro_s=, in_flight=, memory={...}}, ...} | nil, msg, code:
 * the pipeline's stages (one without a pipeline) */
static int l_predict_stages(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    ec_config cfg;
    int st = ecL_toconfig(L, 1, ctx, &cfg);
    size_t n = 0, cap = cfg.pp > 1 ? (size_t)cfg.pp : 1;
    ec_stage *stages = NULL;
    if (st == EC_OK) {
        stages = lua_newuserdatauv(L, cap * sizeof *stages, 0); /* freed with the Lua value */
        st = ec_predict_stages(ctx, &cfg, stages, cap, &n);
    }
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        const ec_stage *s = &stages[i];
        lua_createtable(L, 0, 5);
        lua_pushinteger(L, s->first_layer);
        lua_setfield(L, -2, "first_layer");
        lua_pushinteger(L, s->layers);
        lua_setfield(L, -2, "layers");
        lua_pushnumber(L, s->micro_s);
        lua_setfield(L, -2, "micro_s");
        lua_pushnumber(L, s->in_flight);
        lua_setfield(L, -2, "in_flight");
        ecL_pushmemory(L, &s->memory);
        lua_setfield(L, -2, "memory");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
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
    {"stages", l_predict_stages},
    {NULL, NULL},
};

int ecL_open_predict(lua_State *L)
{
    luaL_setfuncs(L, predict_funcs, 1);
    return 0;
}
