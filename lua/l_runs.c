/*
 * l_runs.c: ec.load_runs(path), measured run records (docs/DESIGN.md section 4) as plain
 * tables whose config subtable holds only the keys the file set, so it can be passed
 * straight back to ec.predict.  Loading and validation are the core's (ec_runs_load);
 * a missing or malformed file returns nil, "EPARSE: file:line:col: ...", code.
 */
#include "lec_priv.h"

#include <string.h>


/* Push the explicitly set keys of cfg as {key = value}; values that read as numbers
 * become numbers, the rest stay strings.  A digit string too long for a Lua integer
 * (a 64-bit seed) stays a string so that it goes back to ec_config_set unrounded. */
static void push_config(lua_State *L, const ec_config *cfg)
{
    char buf[EC_PATH_MAX];
    size_t n = ec_config_key_count();
    lua_createtable(L, 0, 8);                         /* t */
    for (size_t i = 0; i < n; i++) {
        if (!ec_config_is_set(cfg, i))
            continue;
        const char *key = ec_config_key_name(i);
        if (ec_config_get(cfg, key, buf, sizeof buf) != EC_OK)
            continue;
        if (lua_stringtonumber(L, buf) == 0) {        /* t v */
            lua_pushstring(L, buf);
        } else if (!lua_isinteger(L, -1)) {
            const char *digits = buf + (buf[0] == '-' || buf[0] == '+');
            if (strspn(digits, "0123456789") == strlen(digits)) {
                lua_pop(L, 1);                        /* t */
                lua_pushstring(L, buf);               /* t v */
            }
        }
        lua_setfield(L, -2, key);                     /* t */
    }
}

/* ec.load_runs(path [, opts]) -> {{id=, source=, metric=, value=, line=, config={...}}, ...}
 *                              | nil, msg, code
 * The file streams through ec_runs_open/next: the tables are the only copy held (so a
 * memory budget on the Lua heap covers them).  opts.allow_paths = true lets lengths= and
 * profile= cells name files outside the run file's folder. */
static int l_runs_load_runs(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    const char *path = ecL_checkpath(L, 1);
    ecL_check_input(L, path);
    unsigned flags = 0;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_getfield(L, 2, "allow_paths");
        if (lua_toboolean(L, -1)) {
            if (lua_getfield(L, LUA_REGISTRYINDEX, ECL_SANDBOX_KEY) == LUA_TBOOLEAN && lua_toboolean(L, -1))
                return luaL_error(L, "sandbox: ec.load_runs' allow_paths is refused (a run file's paths stay in "
                                  "its folder)");
            lua_pop(L, 1);
            flags |= EC_RUNS_ALLOW_PATHS;
        }
        lua_pop(L, 1);
    }
    lua_settop(L, 1);
    void **slot = ecL_newbox(L, ecL_close_runs_reader); /* path box */
    ec_runs_reader *rd = NULL;
    int st = ec_runs_open(ctx, path, flags, &rd);
    *slot = rd;
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_newtable(L);                                  /* path box arr */
    for (lua_Integer i = 1;; i++) {
        const ec_run *r = NULL;
        if ((st = ec_runs_next(rd, &r)) != EC_OK)
            return ecL_fail(L, ctx, st);
        if (r == NULL)
            break;
        lua_createtable(L, 0, 6);                     /* path box arr t */
        lua_pushstring(L, r->id != NULL ? r->id : ""); /* ... t id */
        lua_setfield(L, -2, "id");                    /* ... t */
        lua_pushstring(L, r->source != NULL ? r->source : "");
        lua_setfield(L, -2, "source");
        lua_pushstring(L, ec_metric_name(r->metric));
        lua_setfield(L, -2, "metric");
        lua_pushnumber(L, (lua_Number)r->value);
        lua_setfield(L, -2, "value");
        lua_pushinteger(L, (lua_Integer)r->line);
        lua_setfield(L, -2, "line");                  /* ... t */
        push_config(L, &r->config);                   /* ... t cfg */
        lua_setfield(L, -2, "config");                /* ... t */
        lua_rawseti(L, -2, i);                        /* path box arr */
    }
    ec_runs_close((ec_runs_reader *)ecL_unbox(L, 2));
    return 1;
}

static const luaL_Reg runs_funcs[] = {
    {"load_runs", l_runs_load_runs},
    {NULL, NULL},
};

int ecL_open_runs(lua_State *L)
{
    luaL_setfuncs(L, runs_funcs, 1);
    return 0;
}
