/*
 * l_registry.c: ec.gpus() and ec.models(), what the context loaded from models/, as arrays
 * of plain tables in registry order (ec_gpu_get, ec_model_get).  Figures are in the core's
 * SI units (bytes, bytes/s, flop/s); scripts scale them for display.  Read only: nothing
 * here adds to or changes the registries.
 */
#include "lec_priv.h"

static void set_string(lua_State *L, const char *key, const char *value)
{
    lua_pushstring(L, value != NULL ? value : "");    /* t s */
    lua_setfield(L, -2, key);                         /* t */
}

static void set_number(lua_State *L, const char *key, double value)
{
    lua_pushnumber(L, (lua_Number)value);             /* t x */
    lua_setfield(L, -2, key);                         /* t */
}

static void set_integer(lua_State *L, const char *key, lua_Integer value)
{
    lua_pushinteger(L, value);                        /* t i */
    lua_setfield(L, -2, key);                         /* t */
}

/* ec.gpus() -> {{id=, name=, architecture=, compute_capability=, sm_count=, memory_bytes=,
 * memory_bandwidth_bytes_per_s=, peak_fp32_flop_per_s=, peak_tf32_flop_per_s=,
 * peak_fp16_flop_per_s=, peak_bf16_flop_per_s=}, ...} */
static int l_registry_gpus(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    size_t n = ec_gpu_count(ctx);
    lua_createtable(L, (int)n, 0);                    /* arr */
    for (size_t i = 0; i < n; i++) {
        ec_gpu_info g;
        int st = ec_gpu_get(ctx, i, &g);
        if (st != EC_OK)
            return ecL_fail(L, ctx, st);
        lua_createtable(L, 0, 11);                    /* arr t */
        set_string(L, "id", g.id);
        set_string(L, "name", g.name);
        set_string(L, "architecture", g.architecture);
        set_number(L, "compute_capability", g.compute_capability);
        set_integer(L, "sm_count", g.sm_count);
        set_number(L, "memory_bytes", g.memory_bytes);
        set_number(L, "memory_bandwidth_bytes_per_s", g.memory_bandwidth_bytes_per_s);
        set_number(L, "peak_fp32_flop_per_s", g.peak_fp32_flop_per_s);
        set_number(L, "peak_tf32_flop_per_s", g.peak_tf32_flop_per_s);
        set_number(L, "peak_fp16_flop_per_s", g.peak_fp16_flop_per_s);
        set_number(L, "peak_bf16_flop_per_s", g.peak_bf16_flop_per_s);
        lua_rawseti(L, -2, (lua_Integer)i + 1);       /* arr */
    }
    return 1;
}

/* ec.models() -> {{id=, family=, default_task=, params=, default_seq_len=,
 * default_image_size=}, ...} */
static int l_registry_models(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    size_t n = ec_model_count(ctx);
    lua_createtable(L, (int)n, 0);                    /* arr */
    for (size_t i = 0; i < n; i++) {
        ec_model_info m;
        int st = ec_model_get(ctx, i, &m);
        if (st != EC_OK)
            return ecL_fail(L, ctx, st);
        lua_createtable(L, 0, 6);                     /* arr t */
        set_string(L, "id", m.id);
        set_string(L, "family", m.family);
        set_string(L, "default_task", m.default_task);
        set_number(L, "params", m.params);
        set_integer(L, "default_seq_len", m.default_seq_len);
        set_integer(L, "default_image_size", m.default_image_size);
        lua_rawseti(L, -2, (lua_Integer)i + 1);       /* arr */
    }
    return 1;
}

/* ec.models_dir(): the models/ folder this module reads (the CLI's --models, else
 * $EPOCHCAST_MODELS, else the one installed beside it; ec_default_models_dir). */
static int l_registry_models_dir(lua_State *L)
{
    const char *dir = ecL_models_dir(L);
    if (dir != NULL) {
        lua_pushstring(L, dir);
        return 1;
    }
    char buf[EC_PATH_MAX];
    int st = ec_default_models_dir(buf, sizeof buf);
    if (st != EC_OK)
        return ecL_fail(L, ecL_ctx(L), st);
    lua_pushstring(L, buf);
    return 1;
}

static const luaL_Reg registry_funcs[] = {
    {"gpus", l_registry_gpus},
    {"models", l_registry_models},
    {"models_dir", l_registry_models_dir},
    {NULL, NULL},
};

int ecL_open_registry(lua_State *L)
{
    luaL_setfuncs(L, registry_funcs, 1);
    return 0;
}
