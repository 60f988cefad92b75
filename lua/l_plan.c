/*
 * l_plan.c: ec.plan{...}, the Lua face of ec_plan (core/src/search/plan.c): the cheapest or fastest
 * configuration under a deadline, a budget, a GPU count and memory, and the Pareto front of run
 * time against cost.  One table holds everything, in the config vocabulary: a key whose value
 * is an array is an axis ({gpu = {"t4", "a10"}, num_gpus = {1, 2, 4}}), the plan keys
 * (deadline_h, budget, max_gpus, must_fit, goal, global_batch, max_batch_per_gpu) are options,
 * every other key is the base config.  Bad keys or values raise; the search runs in C.
 * ecL_push_plan_row is shared with the CLI's `epochcast plan` (cli_plan.c).
 */
#include "lec_priv.h"

#include <string.h>

/* Stack slots of l_plan_plan. */
enum { S_SPEC = 1, S_BASE, S_AXES, S_TEXTS };

void ecL_push_plan_row(lua_State *L, ec_ctx *ctx, const ec_plan *plan, size_t i)
{
    ec_plan_point pt;
    ec_plan_get(plan, i, &pt);
    int predicted = pt.verdict != EC_PLAN_REFUSED && pt.verdict != EC_PLAN_TOO_MANY_GPUS;
    if (predicted)
        ecL_pushresult_sized(L, pt.result, (int)ec_config_key_count() + 4); /* row */
    else
        lua_createtable(L, 0, (int)ec_config_key_count() + 4);             /* row */
    /* the point's configuration as simulated (derived values filled in when it was predicted) */
    ec_config shown = *pt.config;
    if (predicted)
        ec_config_resolve(ctx, pt.config, &shown);
    for (size_t k = 0; k < ec_config_key_count(); k++) {
        char buf[EC_PATH_MAX];
        const char *key = ec_config_key_name(k);
        if (ec_config_get(&shown, key, buf, sizeof buf) != EC_OK || buf[0] == '\0')
            continue;
        if (!ec_config_is_set(&shown, k) && !(predicted && (strcmp(key, "strategy") == 0 ||
                                                            strcmp(key, "topology") == 0 ||
                                                            strcmp(key, "nodes") == 0 || strcmp(key, "task") == 0 ||
                                                            strcmp(key, "seq_len") == 0 ||
                                                            strcmp(key, "image_size") == 0)))
            continue; /* defaults the point never set stay out of the row */
        if (lua_stringtonumber(L, buf) == 0)      /* row n|- */
            lua_pushstring(L, buf);               /* row s */
        lua_setfield(L, -2, key);                 /* row */
    }
    lua_pushstring(L, ec_plan_verdict_name(pt.verdict));
    lua_setfield(L, -2, "verdict");
    lua_pushstring(L, pt.message);
    lua_setfield(L, -2, "message");
    lua_pushboolean(L, pt.on_front);
    lua_setfield(L, -2, "on_front");
    lua_pushboolean(L, pt.best);
    lua_setfield(L, -2, "best");
}

/* Position of a config key in ec_config_key_name order. */
static size_t key_rank(const char *key)
{
    int i = ec_config_key_index(key);
    return i >= 0 ? (size_t)i : ec_config_key_count();
}

/* ec.plan's result: {best, front (by run time), rows, reason}, pushed. */
static void push_plan_result(lua_State *L, ec_ctx *ctx, const ec_plan *plan)
{
    size_t n = ec_plan_count(plan);
    lua_createtable(L, 0, 4);                                 /* ... box out */
    int out = lua_gettop(L);
    lua_createtable(L, n < (1u << 24) ? (int)n : 0, 0);       /* ... out rows */
    lua_newtable(L);                                          /* ... out rows front */
    lua_Integer nf = 0;
    for (size_t i = 0; i < n; i++) {
        ecL_push_plan_row(L, ctx, plan, i);                   /* ... rows front row */
        ec_plan_point pt;
        ec_plan_get(plan, i, &pt);
        if (pt.best) {
            lua_pushvalue(L, -1);
            lua_setfield(L, out, "best");
        }
        if (pt.on_front) { /* insertion by run time: fronts are short */
            lua_Integer at = ++nf;
            while (at > 1) {
                lua_rawgeti(L, -2, at - 1);                   /* ... front row prev */
                lua_getfield(L, -1, "run_s");
                double prev = (double)lua_tonumber(L, -1);
                lua_pop(L, 1);
                if (prev <= pt.result->run_s) {
                    lua_pop(L, 1);
                    break;
                }
                lua_rawseti(L, -3, at);                       /* ... front row */
                at--;
            }
            lua_pushvalue(L, -1);
            lua_rawseti(L, -3, at);
        }
        lua_rawseti(L, -3, (lua_Integer)i + 1);               /* ... rows front */
    }
    lua_setfield(L, out, "front");
    lua_setfield(L, out, "rows");
    if (ec_plan_best(plan) < 0) {
        lua_pushliteral(L, "no configuration meets every constraint (see each row's verdict and message)");
        lua_setfield(L, out, "reason");
    }
}

/* ec.plan(spec) -> {best = row | nil, front = {row, ...}, rows = {row, ...}, reason = text | nil}
 * Rows are results (as ec.predict) with the point's config keys and verdict, message,
 * on_front, best; front is sorted by run time.  Expected failures return nil, msg, code. */
static int l_plan_plan(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    luaL_checktype(L, S_SPEC, LUA_TTABLE);
    lua_settop(L, S_SPEC);
    lua_newtable(L);                                          /* S_BASE: config pairs */
    lua_newtable(L);                                          /* S_AXES: key -> array */
    lua_newtable(L);                                          /* S_TEXTS: keeps strings alive */
    ec_plan_opts opts;
    ec_plan_opts_init(&opts);
    lua_pushnil(L);
    while (lua_next(L, S_SPEC) != 0) {                        /* k v */
        if (lua_type(L, -2) != LUA_TSTRING)
            return luaL_error(L, "plan: keys must be strings (got a %s key)", luaL_typename(L, -2));
        const char *key = lua_tostring(L, -2);
        if (ec_plan_opts_is_key(key)) {
            char buf[64];
            const char *text = ecL_config_text(L, -1, key, buf, sizeof buf);
            if (ec_plan_opts_set(ctx, &opts, key, text) != EC_OK)
                return luaL_error(L, "plan: %s", ec_ctx_errmsg(ctx));
        } else if (lua_istable(L, -1)) {
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, S_AXES);
        } else {
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, S_BASE);
        }
        lua_pop(L, 1);                                        /* k */
    }
    ec_config base;
    int st = ecL_toconfig(L, S_BASE, ctx, &base);
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);

    /* axes in config-key order, so the product's order never depends on hashing */
    const char *keys[64];
    size_t n_axes = 0;
    lua_pushnil(L);
    while (lua_next(L, S_AXES) != 0) {                        /* k v */
        const char *key = lua_tostring(L, -2);
        if (n_axes == sizeof keys / sizeof keys[0])
            return luaL_error(L, "plan: too many axes");
        size_t at = n_axes++;
        while (at > 0 && key_rank(keys[at - 1]) > key_rank(key)) {
            keys[at] = keys[at - 1];
            at--;
        }
        keys[at] = key; /* alive: a key of S_AXES */
        lua_pop(L, 1);
    }
    void **slot = ecL_newbox(L, ecL_free_plan);              /* ... box */
    int box = lua_gettop(L);
    ec_plan *plan = NULL;
    st = ec_plan_new(ctx, &base, &opts, &plan);
    *slot = plan;
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    for (size_t a = 0; a < n_axes; a++) {
        lua_getfield(L, S_AXES, keys[a]);                     /* ... box arr */
        size_t n = (size_t)lua_rawlen(L, -1);
        const char **values = (const char **)lua_newuserdatauv(L, (n + 1) * sizeof *values, 0); /* ... arr ud */
        for (size_t v = 0; v < n; v++) {
            char buf[64];
            lua_rawgeti(L, -2, (lua_Integer)v + 1);           /* ... arr ud x */
            lua_pushstring(L, ecL_config_text(L, -1, keys[a], buf, sizeof buf)); /* ... arr ud x s */
            values[v] = lua_tostring(L, -1);
            lua_rawseti(L, S_TEXTS, (lua_Integer)lua_rawlen(L, S_TEXTS) + 1); /* ... arr ud x */
            lua_pop(L, 1);                                    /* ... arr ud */
        }
        if (ec_plan_axis(plan, keys[a], values, n) != EC_OK)
            return luaL_error(L, "plan: %s", ec_ctx_errmsg(ctx));
        lua_pop(L, 2);                                        /* ... box */
    }
    if ((st = ec_plan_run(plan)) != EC_OK)
        return ecL_fail(L, ctx, st);

    push_plan_result(L, ctx, plan);                          /* ... box out */
    ec_plan_free((ec_plan *)ecL_unbox(L, box));
    return 1;
}

static const luaL_Reg plan_funcs[] = {
    {"plan", l_plan_plan},
    {NULL, NULL},
};

int ecL_open_plan(lua_State *L)
{
    luaL_setfuncs(L, plan_funcs, 1);
    return 0;
}
