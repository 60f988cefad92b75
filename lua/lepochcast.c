/*
 * lepochcast.c: luaopen_epochcast(), the opener of require "epochcast", and the helpers
 * every binding file shares.  It creates one ec_ctx per module instance, held in a box
 * that is upvalue 1 of every module function (lmathlib's setrandfunc, cjson's config),
 * and loads the models/ folder into it.  It does not touch GSL's error handler: that is
 * process-global, so hosts set it.  No model logic lives in lua/ (style guide B6).
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "lec_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BOX_META "epochcast.Box"

/* ---- owned-pointer boxes ------------------------------------------------------------ */

typedef struct ecL_box {
    void *p;
    void (*fn)(void *p);
} ecL_box;

static int l_box_gc(lua_State *L)
{
    ecL_box *box = (ecL_box *)luaL_checkudata(L, 1, BOX_META);
    if (box->p != NULL) {
        void *p = box->p;
        box->p = NULL; /* idempotent: __gc after __close does nothing */
        box->fn(p);
    }
    return 0;
}

static const luaL_Reg box_meta[] = {
    {"__gc", l_box_gc},
    {"__close", l_box_gc},
    {NULL, NULL},
};

void **ecL_newbox(lua_State *L, void (*fn)(void *))
{
    ecL_box *box = (ecL_box *)lua_newuserdatauv(L, sizeof *box, 0); /* box */
    box->p = NULL;
    box->fn = fn;
    if (luaL_newmetatable(L, BOX_META)) {  /* box mt */
        luaL_setfuncs(L, box_meta, 0);
        lua_pushliteral(L, "epochcast internal");
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);               /* box */
    return &box->p;
}

void *ecL_unbox(lua_State *L, int idx)
{
    ecL_box *box = (ecL_box *)luaL_checkudata(L, idx, BOX_META);
    void *p = box->p;
    box->p = NULL;
    return p;
}

void ecL_free_ctx(void *p) { ec_ctx_free((ec_ctx *)p); }
void ecL_free_runs(void *p) { ec_runs_free((ec_runs *)p); }
void ecL_close_runs_reader(void *p) { ec_runs_close((ec_runs_reader *)p); }
void ecL_abort_csv(void *p) { ec_csv_abort((ec_csv_writer *)p); }
void ecL_free_plan(void *p) { ec_plan_free((ec_plan *)p); }

/* ---- the context -------------------------------------------------------------------- */

const char *ecL_models_dir(lua_State *L)
{
    const char *dir = NULL;
    if (lua_getfield(L, LUA_REGISTRYINDEX, ECL_MODELS_DIR_KEY) == LUA_TSTRING)
        dir = lua_tostring(L, -1); /* the registry keeps the string alive */
    lua_pop(L, 1);
    if (dir == NULL) {
        dir = getenv("EPOCHCAST_MODELS");
        if (dir != NULL && dir[0] == '\0')
            dir = NULL;
    }
    return dir;
}

ec_ctx *ecL_pushctx(lua_State *L, const char *dir)
{
    const ecL_host *host = NULL;
    if (lua_getfield(L, LUA_REGISTRYINDEX, ECL_HOST_KEY) == LUA_TLIGHTUSERDATA)
        host = (const ecL_host *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    void **slot = ecL_newbox(L, ecL_free_ctx); /* box */
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(host != NULL ? host->alloc : NULL, host != NULL ? host->alloc_ud : NULL, &ctx) != EC_OK)
        luaL_error(L, "cannot create an epochcast context: %s", ec_strerror(EC_ENOMEM));
    *slot = ctx;
    if (host != NULL) {
        ec_ctx_set_progress(ctx, host->progress, host->progress_ud);
        ec_ctx_set_alloc_threadsafe(ctx, host->alloc_threadsafe);
    }
    int st = ec_ctx_load_models(ctx, dir);
    if (st == EC_OK) {
        if (lua_getfield(L, LUA_REGISTRYINDEX, ECL_PROFILE_KEY) == LUA_TSTRING) {
            ec_fit_report rep; /* the host's --profile: the fit of every prediction here */
            st = ec_profile_read(ctx, lua_tostring(L, -1), &rep);
            if (st == EC_OK)
                st = ec_ctx_set_fit(ctx, &rep);
        }
        lua_pop(L, 1);
    }
    if (st != EC_OK) {
        const char *msg = ec_ctx_errmsg(ctx);
        luaL_error(L, "%s", msg[0] != '\0' ? msg : ec_strerror(st));
    }
    return ctx;
}

ec_ctx *ecL_ctx(lua_State *L)
{
    ecL_box *box = (ecL_box *)lua_touserdata(L, lua_upvalueindex(1));
    if (box == NULL || box->p == NULL)
        luaL_error(L, "attempt to use a closed epochcast context");
    return (ec_ctx *)box->p;
}

/* ---- strings and paths ---------------------------------------------------------------- */

const char *ecL_checkpath(lua_State *L, int idx)
{
    size_t len;
    const char *s = luaL_checklstring(L, idx, &len);
    if (strlen(s) != len)
        luaL_argerror(L, idx, "string with an embedded NUL byte");
    return s;
}

void ecL_check_output(lua_State *L, const char *path)
{
    int sandbox = lua_getfield(L, LUA_REGISTRYINDEX, ECL_SANDBOX_KEY) == LUA_TBOOLEAN && lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (!sandbox)
        return;
    if (path[0] == '/')
        luaL_error(L, "sandbox: '%s' is an absolute path; a sandboxed scenario writes below the current folder",
                   path);
    for (const char *p = path; *p != '\0'; p += strcspn(p, "/"), p += *p == '/') {
        if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
            luaL_error(L, "sandbox: '%s' climbs out with '..'; a sandboxed scenario writes below the current folder",
                       path);
    }
    /* The folder it lands in, links resolved, must be the current one or below it. */
    const char *slash = strrchr(path, '/');
    lua_pushlstring(L, path, slash != NULL ? (size_t)(slash - path) : 0);   /* dir */
    const char *dir = lua_tostring(L, -1);
    char *real = realpath(dir[0] != '\0' ? dir : ".", NULL);
    char *cwd = realpath(".", NULL);
    size_t n = cwd != NULL ? strlen(cwd) : 0;
    int inside = real != NULL && cwd != NULL && strncmp(real, cwd, n) == 0 &&
                 (real[n] == '\0' || real[n] == '/' || (n == 1 && cwd[0] == '/'));
    free(real);
    free(cwd);
    lua_pop(L, 1);
    if (!inside)
        luaL_error(L, "sandbox: '%s' is not below the current folder (links resolved)", path);
}

void ecL_check_input(lua_State *L, const char *path)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, ECL_SANDBOX_READ_KEY) != LUA_TSTRING) {
        lua_pop(L, 1);
        return;
    }
    const char *root = lua_tostring(L, -1); /* the registry keeps it */
    lua_pop(L, 1);
    char *real = realpath(path, NULL);
    if (real == NULL) {
        if (errno == ENOENT)
            return; /* nothing there to read: its reader says so */
        luaL_error(L, "sandbox: '%s' cannot be read (%s)", path, strerror(errno));
    }
    size_t n = strlen(root);
    int inside = strncmp(real, root, n) == 0 && (real[n] == '\0' || real[n] == '/' || (n == 1 && root[0] == '/'));
    free(real);
    if (!inside)
        luaL_error(L, "sandbox: '%s' is not below the scenario's folder %s (links resolved); a sandboxed scenario "
                   "reads only there", path, root);
}

/* ---- status codes ------------------------------------------------------------------- */

static const char *const status_names[] = {
    "OK", "ENOMEM", "EINVAL", "EDOM", "EPARSE", "EIO", "ENOTFOUND", "ENOTSUP", "EMISUSE",
    "ECANCELED",
};

const char *ecL_status_name(int status)
{
    if (status < 0 || (size_t)status >= sizeof status_names / sizeof status_names[0])
        return "EUNKNOWN";
    return status_names[status];
}

int ecL_fail(lua_State *L, ec_ctx *ctx, int status)
{
    const char *msg = ec_ctx_errmsg(ctx);
    if (msg[0] == '\0')
        msg = ec_strerror(status);
    /* Misuse, and a failure the script must not carry on from (out of memory under a
     * budget, a cancellation by a time budget or an interrupt), raise. */
    if (status == EC_EMISUSE)
        return luaL_error(L, "%s", msg);
    if (status == EC_ENOMEM || status == EC_ECANCELED)
        return luaL_error(L, "%s: %s", ecL_status_name(status), msg);
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", ecL_status_name(status), msg);
    lua_pushstring(L, ecL_status_name(status));
    return 3;
}

/* ---- config tables ------------------------------------------------------------------ */

/* The text form of one config value, as ec_config_set reads it: integers without ".0",
 * floats with the shortest of %.15g / %.17g that reads back exactly, booleans as true/false. */
const char *ecL_config_text(lua_State *L, int idx, const char *key, char *buf, size_t n)
{
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            snprintf(buf, n, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, idx));
        } else {
            int k = ec_config_key_index(key);
            if (k >= 0 && ec_config_key_is_release((size_t)k))
                luaL_error(L, "config key '%s': give the release as a string (\"2.10\"): the number %s cannot "
                           "tell 2.1 from 2.10", key, lua_tostring(L, idx));
            double x = (double)lua_tonumber(L, idx);
            snprintf(buf, n, "%.15g", x);
            if (strtod(buf, NULL) != x)
                snprintf(buf, n, "%.17g", x);
        }
        return buf;
    case LUA_TBOOLEAN:
        /* "true"/"false", not 1/0: only a boolean key reads them (batch_per_gpu=true is refused) */
        return lua_toboolean(L, idx) ? "true" : "false";
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        if (strlen(s) != len)
            luaL_error(L, "config key '%s': the value has an embedded NUL byte", key);
        /* the keys whose value may name a file the library reads (a model's folder: its
         * config.json, which may be a link out of it) */
        if (strcmp(key, "model") == 0 || strcmp(key, "lengths") == 0 || strcmp(key, "profile") == 0 ||
            strcmp(key, "prices") == 0) {
            ecL_check_input(L, s);
            struct stat st;
            char cfg[EC_PATH_MAX + 16];
            if (strcmp(key, "model") == 0 && stat(s, &st) == 0 && S_ISDIR(st.st_mode) &&
                snprintf(cfg, sizeof cfg, "%s/config.json", s) < (int)sizeof cfg)
                ecL_check_input(L, cfg);
        }
        return s;
    }
    default:
        luaL_error(L, "config key '%s': number, boolean or string expected, got %s", key,
                   luaL_typename(L, idx));
        return NULL;
    }
}

int ecL_toconfig(lua_State *L, int idx, ec_ctx *ctx, ec_config *cfg)
{
    char buf[64];
    int status = EC_OK;
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    ec_config_init(cfg);
    lua_pushnil(L);                                   /* nil */
    while (lua_next(L, idx) != 0) {                   /* key value */
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "config keys must be strings (got a %s key)", luaL_typename(L, -2));
        size_t klen;
        const char *key = lua_tolstring(L, -2, &klen);
        if (strlen(key) != klen)
            luaL_error(L, "config key '%s...' has an embedded NUL byte", key);
        const char *text = ecL_config_text(L, -1, key, buf, sizeof buf);
        int st = status == EC_OK ? ec_config_set(ctx, cfg, key, text) : EC_OK;
        /* A known key whose name value the registries do not know (gpu=t44) is an expected
         * failure, returned after the table was checked; an unknown key or a bad value raises. */
        if (st == EC_ENOTFOUND && ec_config_key_index(key) >= 0)
            status = st;
        else if (st != EC_OK)
            luaL_error(L, "%s", ec_ctx_errmsg(ctx));
        lua_pop(L, 1);                                /* key */
    }
    return status;
}

/* The values a prediction derived (ec_config_resolve) as keys of the table on top. */
static const char *const resolved_keys[ECL_N_RESOLVED] = {"strategy", "topology", "nodes", "task", "seq_len",
                                                          "image_size"};

void ecL_setresolved(lua_State *L, ec_ctx *ctx, const ec_config *cfg)
{
    ec_config r;
    if (ec_config_resolve(ctx, cfg, &r) != EC_OK)
        return; /* cannot fail after a prediction of cfg succeeded */
    ecL_setresolved_cfg(L, &r);
}

/* Push resolved's value of key i (an integer when its text is one), or nothing and 0 when the
 * key has no value. */
static int push_resolved(lua_State *L, const ec_config *resolved, int i)
{
    char buf[EC_NAME_MAX];
    if (i < 0 || ec_config_get_at(resolved, (size_t)i, buf, sizeof buf) != EC_OK || buf[0] == '\0')
        return 0;
    /* only a text that starts like a number can be one (names skip lua_stringtonumber) */
    if ((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '-') {
        if (lua_stringtonumber(L, buf) != 0) {        /* n */
            lua_Integer v = lua_tointeger(L, -1);
            lua_pop(L, 1);
            lua_pushinteger(L, v);                    /* v */
            return 1;
        }
    }
    lua_pushstring(L, buf);                           /* v */
    return 1;
}

void ecL_setresolved_cfg(lua_State *L, const ec_config *resolved)
{
    for (size_t i = 0; i < ECL_N_RESOLVED; i++)
        if (push_resolved(L, resolved, ec_config_key_index(resolved_keys[i]))) /* t v */
            lua_setfield(L, -2, resolved_keys[i]);    /* t */
}

int ecL_resolved_names_push(lua_State *L, int *index)
{
    luaL_checkstack(L, ECL_N_RESOLVED + LUA_MINSTACK, "a sweep's resolved keys");
    int first = lua_gettop(L) + 1;
    for (size_t i = 0; i < ECL_N_RESOLVED; i++) {
        index[i] = ec_config_key_index(resolved_keys[i]);
        lua_pushstring(L, resolved_keys[i]);
    }
    return first;
}

void ecL_setresolved_named(lua_State *L, const ec_config *resolved, int names, const int *index)
{
    int t = lua_gettop(L);
    for (size_t i = 0; i < ECL_N_RESOLVED; i++) {
        if (index[i] < 0)                             /* the caller sets this key itself */
            continue;
        lua_pushvalue(L, names + (int)i);             /* t k */
        if (push_resolved(L, resolved, index[i]))     /* t k v */
            lua_rawset(L, t);                         /* t */
        else
            lua_pop(L, 1);                            /* t */
    }
}

/* ---- the module --------------------------------------------------------------------- */

typedef int (*ecL_opener)(lua_State *L);

static const ecL_opener openers[] = {
    ecL_open_predict, ecL_open_registry, ecL_open_runs, ecL_open_csv, ecL_open_result,
    ecL_open_sweep,  ecL_open_plot,     ecL_open_trace,    ecL_open_network,  ecL_open_plan,
    ecL_open_optimize,
};

LUAMOD_API int luaopen_epochcast(lua_State *L)
{
    luaL_checkversion(L);
    const char *dir = ecL_models_dir(L);
    lua_createtable(L, 0, 16);                        /* mod */
    ecL_pushctx(L, dir);                              /* mod ctxbox */
    int box = lua_gettop(L);
    for (size_t i = 0; i < sizeof openers / sizeof openers[0]; i++) {
        lua_pushvalue(L, box - 1);                    /* mod ctxbox mod */
        lua_pushvalue(L, box);                        /* mod ctxbox mod ctxbox */
        openers[i](L);                                /* mod ctxbox mod */
        lua_pop(L, 1);                                /* mod ctxbox */
    }
    lua_pop(L, 1);                                    /* mod */
    lua_pushliteral(L, EC_VERSION);                   /* mod version */
    lua_setfield(L, -2, "_VERSION");                  /* mod */
    return 1;
}
