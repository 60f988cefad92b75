/*
 * l_runs.c: ec.load_runs(path), measured run records (docs/DESIGN.md section 4) as plain
 * tables whose config subtable holds only the keys the file set, so it can be passed
 * straight back to ec.predict.  Loading and validation are the core's (ec_runs_load);
 * a missing or malformed file returns nil, "EPARSE: file:line:col: ...", code.
 */
#include "lec_priv.h"

#include <string.h>

static const char *const metric_names[] = {"samples_per_s", "step_time_ms", "epoch_time_s", "tokens_per_s",
                                           "peak_bytes"};

const char *ecL_metric_name(ec_metric m)
{
    if ((size_t)m >= sizeof metric_names / sizeof metric_names[0])
        return "unknown";
    return metric_names[m];
}

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

/* ec.load_runs(path) -> {{id=, source=, metric=, value=, line=, config={...}}, ...}
 *                     | nil, msg, code */
static int l_runs_load_runs(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    const char *path = luaL_checkstring(L, 1);
    void **slot = ecL_newbox(L, ecL_free_runs);      /* box */
    ec_runs *runs = NULL;
    int st = ec_runs_load(ctx, path, &runs);
    *slot = runs;
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    size_t n = ec_runs_count(runs);
    lua_createtable(L, (int)n, 0);                    /* box arr */
    for (size_t i = 0; i < n; i++) {
        const ec_run *r = ec_runs_get(runs, i);
        lua_createtable(L, 0, 6);                     /* box arr t */
        lua_pushstring(L, r->id != NULL ? r->id : ""); /* box arr t id */
        lua_setfield(L, -2, "id");                    /* box arr t */
        lua_pushstring(L, r->source != NULL ? r->source : "");
        lua_setfield(L, -2, "source");
        lua_pushstring(L, ecL_metric_name(r->metric));
        lua_setfield(L, -2, "metric");
        lua_pushnumber(L, (lua_Number)r->value);
        lua_setfield(L, -2, "value");
        lua_pushinteger(L, (lua_Integer)r->line);
        lua_setfield(L, -2, "line");                  /* box arr t */
        push_config(L, &r->config);                   /* box arr t cfg */
        lua_setfield(L, -2, "config");                /* box arr t */
        lua_rawseti(L, -2, (lua_Integer)i + 1);       /* box arr */
    }
    ec_runs_free((ec_runs *)ecL_unbox(L, -2));
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
