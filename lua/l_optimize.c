/*
 * l_optimize.c: ec.optimize{...}, the Lua face of ec_optimize (core/src/search/optimize.c).
 *
 *   local r = ec.optimize{ model = "llama-3.1-70b", gpu = "h100-sxm5-80gb", num_gpus = 64,
 *                          seq_len = 8192, global_batch_tokens = 4194304, tp = {1, 2, 4, 8},
 *                          top = 5, threads = 2 }
 *   r.layouts[1].tokens_per_s, r.layouts[2].reason, r.no_fit, r.stats.priced
 *
 * A key the search knows (ec_optimize_is_key) takes a value or a list of values; every other
 * key fixes the base configuration.  The result: layouts (the best first, at most top), no_fit
 * (the near misses memory rules out), stats (considered, pruned_divide, pruned_memory, priced,
 * refused, fit, search_s, threads).  A search the library refuses returns nil, msg, code;
 * misuse (a non-table, a value of the wrong type) raises.  No search logic here.
 */
#include "lec_priv.h"

#include <string.h>

static void free_optimize(void *p)
{
    ec_optimize_free((ec_optimize *)p);
}

/* The value at idx as text: a scalar as ec_config_set reads it, a list joined by commas. */
static const char *value_text(lua_State *L, int idx, const char *key)
{
    char buf[64];
    if (!lua_istable(L, idx)) {
        const char *s = ecL_config_text(L, idx, key, buf, sizeof buf);
        lua_pushstring(L, s);
        return lua_tostring(L, -1);
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n == 0)
        luaL_error(L, "ec.optimize: key '%s': an empty list", key);
    for (lua_Integer i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, ',');                             /* the buffer on top */
        lua_rawgeti(L, idx, i);                                /* ... b v */
        const char *s = ecL_config_text(L, lua_gettop(L), key, buf, sizeof buf);
        lua_pushstring(L, s);                                  /* ... b v s */
        lua_remove(L, -2);                                     /* ... b s */
        luaL_addvalue(&b);                                     /* ... b */
    }
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

static void setnum(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static void setint(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static void setstr(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

static void push_layout(lua_State *L, const ec_optimize_layout *l)
{
    lua_createtable(L, 0, 40);
    static const char *const cfg_keys[] = {"model", "gpu", "num_gpus", "tp", "pp", "cp", "ep", "strategy",
                                           "sharding", "zero_stage", "pp_schedule", "pp_chunks", "batch_per_gpu",
                                           "grad_accum", "checkpointing", "precision", "seq_len"};
    for (size_t i = 0; i < sizeof cfg_keys / sizeof cfg_keys[0]; i++) {
        char buf[EC_PATH_MAX];
        if (ec_config_get(&l->config, cfg_keys[i], buf, sizeof buf) == EC_OK)
            setstr(L, cfg_keys[i], buf);
    }
    setint(L, "num_gpus", l->config.num_gpus);
    setint(L, "tp", l->config.tp);
    setint(L, "pp", l->config.pp);
    setint(L, "cp", l->config.cp);
    setint(L, "ep", l->config.ep);
    setint(L, "dp", l->dp);
    setint(L, "batch_per_gpu", l->config.batch_per_gpu);
    setint(L, "grad_accum", l->config.grad_accum);
    setint(L, "zero_stage", l->config.zero_stage);
    setint(L, "pp_chunks", l->config.pp_chunks);
    setnum(L, "global_batch", l->global_batch);
    setnum(L, "tokens_per_s", l->tokens_per_s);
    setnum(L, "mfu_frac", l->mfu_frac);
    setnum(L, "hfu_frac", l->hfu_frac);
    setnum(L, "step_s", l->step_s);
    setnum(L, "peak_bytes", l->peak_bytes);
    setnum(L, "capacity_bytes", l->capacity_bytes);
    lua_pushboolean(L, l->fits);
    lua_setfield(L, -2, "fits");
    lua_pushboolean(L, l->at_edge);
    lua_setfield(L, -2, "at_edge");
    setnum(L, "needed_bytes", l->needed_bytes);
    setnum(L, "headroom_bytes", l->headroom_bytes);
    setnum(L, "train_s", l->train_s);
    setnum(L, "cost", l->cost);
    setnum(L, "price_per_hour", l->price_per_hour);
    setnum(L, "train_time_h", l->train_time_h);
    setnum(L, "cost_usd", l->cost_usd);
    setstr(L, "price_currency", l->price_currency);
    setstr(L, "price_offer", l->price_offer);
    setnum(L, "exposed_comm_s", l->exposed_comm_s);
    setnum(L, "pp_bubble_s", l->comm.pp_bubble_s);
    setnum(L, "recompute_s", l->recompute_s);
    setnum(L, "behind_frac", l->behind_frac);
    setstr(L, "lost", ec_optimize_loss_name(l->lost));
    setstr(L, "reason", l->reason);
}

static void push_list(lua_State *L, const ec_optimize *opt, int no_fit, size_t top)
{
    size_t n = no_fit ? ec_optimize_no_fit_count(opt) : ec_optimize_count(opt);
    if (n > top)
        n = top;
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        ec_optimize_layout l;
        if (ec_optimize_get(opt, no_fit, i, &l) != EC_OK)
            break;
        push_layout(L, &l);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* ec.optimize{...} -> {layouts = {...}, no_fit = {...}, stats = {...}} | nil, msg, code */
static int l_optimize(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    ec_config base;
    ec_config_init(&base);
    int st = EC_OK;
    /* The base first (config keys), then the search keys, checked against it. */
    lua_pushnil(L);                                            /* t k */
    while (lua_next(L, 1) != 0) {                              /* t k v */
        if (lua_type(L, -2) != LUA_TSTRING)
            return luaL_error(L, "ec.optimize: keys must be strings");
        const char *key = lua_tostring(L, -2);
        if (!ec_optimize_is_key(key) && st == EC_OK) {
            char buf[64];
            const char *v = ecL_config_text(L, lua_gettop(L), key, buf, sizeof buf);
            st = ec_config_set(ctx, &base, key, v);
        }
        lua_settop(L, 2);                                      /* t k */
    }
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    void **slot = ecL_newbox(L, free_optimize);                /* t box */
    ec_optimize *opt = NULL;
    if ((st = ec_optimize_new(ctx, &base, &opt)) != EC_OK)
        return ecL_fail(L, ctx, st);
    *slot = opt;
    size_t top = 10;
    lua_pushnil(L);                                            /* t box k */
    while (lua_next(L, 1) != 0) {                              /* t box k v */
        const char *key = lua_tostring(L, -2);
        if (ec_optimize_is_key(key)) {
            const char *v = value_text(L, 4, key);             /* t box k v text */
            if (strcmp(key, "top") == 0)
                top = (size_t)lua_tointeger(L, 4);
            st = ec_optimize_set(opt, key, v);
            if (st != EC_OK)
                return ecL_fail(L, ctx, st);
        }
        lua_settop(L, 3);                                      /* t box k */
    }
    if ((st = ec_optimize_run(opt)) != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_createtable(L, 0, 3);                                  /* t box r */
    push_list(L, opt, 0, top);
    lua_setfield(L, -2, "layouts");
    push_list(L, opt, 1, top);
    lua_setfield(L, -2, "no_fit");
    ec_optimize_stats s;
    ec_optimize_stats_get(opt, &s);
    lua_createtable(L, 0, 10);
    setint(L, "considered", (lua_Integer)s.considered);
    setint(L, "pruned_divide", (lua_Integer)s.pruned_divide);
    setint(L, "pruned_memory", (lua_Integer)s.pruned_memory);
    setint(L, "priced", (lua_Integer)s.priced);
    setint(L, "refused", (lua_Integer)s.refused);
    setint(L, "fit", (lua_Integer)s.fit);
    setint(L, "ranked", (lua_Integer)ec_optimize_count(opt));
    setnum(L, "search_s", s.search_s);
    setint(L, "threads", s.threads);
    setstr(L, "first_divide", s.first_divide);
    lua_setfield(L, -2, "stats");
    ec_optimize_free((ec_optimize *)ecL_unbox(L, 2));
    return 1;
}

static const luaL_Reg optimize_funcs[] = {{"optimize", l_optimize}, {NULL, NULL}};

int ecL_open_optimize(lua_State *L)
{
    luaL_setfuncs(L, optimize_funcs, 1); /* the context box as upvalue, as every binding */
    return 0;
}
