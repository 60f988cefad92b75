/*
 * l_result.c: the one description of an ec_result's fields outside the core.  A single
 * table drives both the Lua result table of ec.predict (docs/DESIGN.md section 5) and the result
 * columns of every CSV we write (ec.write_csv, epochcast predict --csv), so the names, the
 * order and the number formatting cannot drift apart.  It computes nothing: values are
 * copied from the struct the core filled.
 */
#include "lec_priv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum { F_NUM, F_BOOL, F_INT, F_BOTTLENECK, F_WARNINGS, F_TEXT, F_PHASE } field_kind;

/* The subtables, in the order of groups[] below. */
enum { G_TOP = -1, G_BREAKDOWN, G_MEMORY, G_INTERVAL, G_COMM, N_GROUPS };

typedef struct result_field {
    const char *column; /* CSV column name, units in the name */
    int group;          /* Lua subtable: an index into groups[] (G_BREAKDOWN...), G_TOP: none */
    const char *key;    /* key in the Lua table or subtable */
    field_kind kind;
    size_t offset;      /* into ec_result */
    int alias;          /* same column as an earlier field: not a CSV column of its own */
} result_field;

#define F(col, grp, key, kind, member, alias) {col, grp, key, kind, offsetof(ec_result, member), alias}

/* The documented column order: headline numbers, the step's anatomy, the breakdown,
 * memory by part, the epoch interval, multi-GPU scaling, the step interval and the cost, then
 * the warnings. */
static const result_field fields[] = {
    F("step_s", G_TOP, "step_s", F_NUM, step_s, 0),
    F("samples_per_s", G_TOP, "samples_per_s", F_NUM, samples_per_s, 0),
    F("epoch_s", G_TOP, "epoch_s", F_NUM, epoch_s, 0),
    F("run_s", G_TOP, "run_s", F_NUM, run_s, 0),
    F("gpu_util_frac", G_TOP, "gpu_util_frac", F_NUM, gpu_util_frac, 0),
    F("bottleneck", G_TOP, "bottleneck", F_BOTTLENECK, bottleneck, 0),
    F("peak_bytes", G_TOP, "peak_bytes", F_NUM, memory.peak_bytes, 0),
    F("capacity_bytes", G_TOP, "capacity_bytes", F_NUM, memory.capacity_bytes, 0),
    F("fits", G_TOP, "fits", F_BOOL, memory.fits, 0),
    F("gpu_busy_s", G_TOP, "gpu_busy_s", F_NUM, gpu_busy_s, 0),
    F("cpu_issue_s", G_TOP, "cpu_issue_s", F_NUM, cpu_issue_s, 0),
    F("flop_per_step", G_TOP, "flop_per_step", F_NUM, flop_per_step, 0),
    F("mfu_frac", G_TOP, "mfu_frac", F_NUM, mfu_frac, 0),
    F("kernels_per_step", G_TOP, "kernels_per_step", F_NUM, kernels_per_step, 0),
    F("steps_per_epoch", G_TOP, "steps_per_epoch", F_NUM, steps_per_epoch, 0),
    F("breakdown_forward_s", G_BREAKDOWN, "forward_s", F_NUM, breakdown.forward_s, 0),
    F("breakdown_backward_s", G_BREAKDOWN, "backward_s", F_NUM, breakdown.backward_s, 0),
    F("breakdown_optimizer_s", G_BREAKDOWN, "optimizer_s", F_NUM, breakdown.optimizer_s, 0),
    F("breakdown_h2d_s", G_BREAKDOWN, "h2d_s", F_NUM, breakdown.h2d_s, 0),
    F("breakdown_cpu_overhead_s", G_BREAKDOWN, "cpu_overhead_s", F_NUM, breakdown.cpu_overhead_s, 0),
    F("breakdown_loader_s", G_BREAKDOWN, "loader_s", F_NUM, breakdown.loader_s, 0),
    F("breakdown_comm_s", G_BREAKDOWN, "comm_s", F_NUM, breakdown.comm_s, 0),
    F("memory_weights_bytes", G_MEMORY, "weights_bytes", F_NUM, memory.weights_bytes, 0),
    F("memory_grads_bytes", G_MEMORY, "grads_bytes", F_NUM, memory.grads_bytes, 0),
    F("memory_optimizer_bytes", G_MEMORY, "optimizer_bytes", F_NUM, memory.optimizer_bytes, 0),
    F("memory_cast_cache_bytes", G_MEMORY, "cast_cache_bytes", F_NUM, memory.cast_cache_bytes, 0),
    F("memory_activations_bytes", G_MEMORY, "activations_bytes", F_NUM, memory.activations_bytes, 0),
    F("memory_workspace_bytes", G_MEMORY, "workspace_bytes", F_NUM, memory.workspace_bytes, 0),
    F("memory_context_bytes", G_MEMORY, "context_bytes", F_NUM, memory.context_bytes, 0),
    F("memory_allocator_bytes", G_MEMORY, "allocator_bytes", F_NUM, memory.allocator_bytes, 0),
    F("peak_bytes", G_MEMORY, "peak_bytes", F_NUM, memory.peak_bytes, 1),
    F("capacity_bytes", G_MEMORY, "capacity_bytes", F_NUM, memory.capacity_bytes, 1),
    F("fits", G_MEMORY, "fits", F_BOOL, memory.fits, 1),
    F("epoch_p10_s", G_INTERVAL, "p10", F_NUM, epoch_p10_s, 0),
    F("epoch_p50_s", G_INTERVAL, "p50", F_NUM, epoch_p50_s, 0),
    F("epoch_p90_s", G_INTERVAL, "p90", F_NUM, epoch_p90_s, 0),
    F("single_gpu_samples_per_s", G_TOP, "single_gpu_samples_per_s", F_NUM, single_gpu_samples_per_s, 0),
    F("scaling_efficiency_frac", G_TOP, "scaling_efficiency_frac", F_NUM, scaling_efficiency_frac, 0),
    F("busbw_bytes_per_s", G_TOP, "busbw_bytes_per_s", F_NUM, busbw_bytes_per_s, 0),
    F("comm_total_s", G_TOP, "comm_total_s", F_NUM, comm_total_s, 0),
    F("straggler_s", G_TOP, "straggler_s", F_NUM, straggler_s, 0),
    F("other_gpu_busy_s", G_TOP, "other_gpu_busy_s", F_NUM, other_gpu_busy_s, 0),
    F("other_gpu_peak_bytes", G_TOP, "other_gpu_peak_bytes", F_NUM, other_gpu_peak_bytes, 0),
    F("step_p10_s", G_TOP, "step_p10_s", F_NUM, step_p10_s, 0),
    F("step_p90_s", G_TOP, "step_p90_s", F_NUM, step_p90_s, 0),
    F("price_per_hour", G_TOP, "price_per_hour", F_NUM, price_per_hour, 0),
    F("cost_per_epoch", G_TOP, "cost_per_epoch", F_NUM, cost_per_epoch, 0),
    F("cost_run", G_TOP, "cost_run", F_NUM, cost_run, 0),
    F("price_offer", G_TOP, "price_offer", F_TEXT, price_offer, 0),
    F("tokens_per_s", G_TOP, "tokens_per_s", F_NUM, tokens_per_s, 0),
    F("gpu_s_per_token", G_TOP, "gpu_s_per_token", F_NUM, gpu_s_per_token, 0),
    F("hfu_frac", G_TOP, "hfu_frac", F_NUM, hfu_frac, 0),
    F("dp", G_TOP, "dp", F_INT, dp, 0),
    F("tp", G_TOP, "tp", F_INT, tp, 0),
    F("pp", G_TOP, "pp", F_INT, pp, 0),
    F("cp", G_TOP, "cp", F_INT, cp, 0),
    F("ep", G_TOP, "ep", F_INT, ep, 0),
    F("comm_tp_s", G_COMM, "tp_s", F_NUM, comm.tp_s, 0),
    F("comm_cp_s", G_COMM, "cp_s", F_NUM, comm.cp_s, 0),
    F("comm_ep_s", G_COMM, "ep_s", F_NUM, comm.ep_s, 0),
    F("comm_dp_reduce_s", G_COMM, "dp_reduce_s", F_NUM, comm.dp_reduce_s, 0),
    F("comm_shard_wait_s", G_COMM, "shard_wait_s", F_NUM, comm.shard_wait_s, 0),
    F("comm_overlap_s", G_COMM, "overlap_s", F_NUM, comm.overlap_s, 0),
    F("comm_offload_s", G_COMM, "offload_s", F_NUM, comm.offload_s, 0),
    F("comm_pp_bubble_s", G_COMM, "pp_bubble_s", F_NUM, comm.pp_bubble_s, 0),
    F("comm_pp_p2p_s", G_COMM, "pp_p2p_s", F_NUM, comm.pp_p2p_s, 0),
    F("host_pinned_bytes", G_TOP, "host_pinned_bytes", F_NUM, host_pinned_bytes, 0),
    /* issue 19: the memory readings, evaluation, the first step */
    F("memory_allocated_bytes", G_MEMORY, "allocated_bytes", F_NUM, memory.allocated_bytes, 0),
    F("memory_reserved_bytes", G_MEMORY, "reserved_bytes", F_NUM, memory.reserved_bytes, 0),
    F("memory_nvml_bytes", G_MEMORY, "nvml_bytes", F_NUM, memory.nvml_bytes, 0),
    F("eval_s", G_TOP, "eval_s", F_NUM, eval_s, 0),
    F("eval_step_s", G_TOP, "eval_step_s", F_NUM, eval_step_s, 0),
    F("first_step_s", G_TOP, "first_step_s", F_NUM, first_step_s, 0),
    F("train_s", G_TOP, "train_s", F_NUM, train_s, 0),
    /* issue 40: when the peak happens, what must be allocated, the headroom */
    F("memory_peak_phase", G_MEMORY, "peak_phase", F_PHASE, memory.peak_phase, 0),
    F("memory_needed_bytes", G_MEMORY, "needed_bytes", F_NUM, memory.needed_bytes, 0),
    F("memory_headroom_bytes", G_MEMORY, "headroom_bytes", F_NUM, memory.headroom_bytes, 0),
    F("memory_at_edge", G_MEMORY, "at_edge", F_BOOL, memory.at_edge, 0),
    /* issue 41: the run in hours and money */
    F("train_time_h", G_TOP, "train_time_h", F_NUM, train_time_h, 0),
    F("cost_usd", G_TOP, "cost_usd", F_NUM, cost_usd, 0),
    F("cost_per_million_tokens", G_TOP, "cost_per_million_tokens", F_NUM, cost_per_million_tokens, 0),
    F("price_currency", G_TOP, "price_currency", F_TEXT, price_currency, 0),
    F("warnings", G_TOP, "warnings", F_WARNINGS, warning_text, 0),
};

#define N_FIELDS (sizeof fields / sizeof fields[0])

static const char *const groups[N_GROUPS] = {"breakdown", "memory", "interval", "comm"};

static double field_num(const ec_result *res, const result_field *f)
{
    const char *base = (const char *)res;
    double x;
    memcpy(&x, base + f->offset, sizeof x);
    return x;
}

static int field_int(const ec_result *res, const result_field *f)
{
    const char *base = (const char *)res;
    int i;
    memcpy(&i, base + f->offset, sizeof i);
    return i;
}

static ec_bottleneck field_bottleneck(const ec_result *res, const result_field *f)
{
    const char *base = (const char *)res;
    ec_bottleneck b;
    memcpy(&b, base + f->offset, sizeof b);
    return b;
}

/* Push warning_text ("a; b; c") as the array {"a", "b", "c"}. */
static void push_warnings(lua_State *L, const char *text)
{
    lua_newtable(L);                                  /* arr */
    lua_Integer n = 0;
    while (*text != '\0') {
        const char *end = strstr(text, "; ");
        size_t len = end != NULL ? (size_t)(end - text) : strlen(text);
        if (len > 0) {
            lua_pushlstring(L, text, len);            /* arr s */
            lua_rawseti(L, -2, ++n);                  /* arr */
        }
        text += len;
        if (end != NULL)
            text += 2;
    }
}

static void push_field(lua_State *L, const ec_result *res, const result_field *f)
{
    switch (f->kind) {
    case F_NUM: lua_pushnumber(L, (lua_Number)field_num(res, f)); break;
    case F_BOOL: lua_pushboolean(L, field_int(res, f) != 0); break;
    case F_INT: lua_pushinteger(L, field_int(res, f)); break;
    case F_BOTTLENECK: lua_pushstring(L, ec_bottleneck_name(field_bottleneck(res, f))); break;
    case F_PHASE: lua_pushstring(L, ec_peak_phase_name(field_int(res, f))); break;
    case F_WARNINGS: push_warnings(L, (const char *)res + f->offset); break;
    case F_TEXT: lua_pushstring(L, (const char *)res + f->offset); break;
    }
}

/* Keys of each group's table, size[g + 1] for group g (size[0]: the result table itself,
 * the subtables included): the tables are created at their final size, so filling them
 * never rehashes.  One pass over the fields (a row is built per sweep point). */
static void group_sizes(int size[N_GROUPS + 1])
{
    for (int g = 0; g <= N_GROUPS; g++)
        size[g] = 0;
    size[0] = N_GROUPS;
    for (size_t i = 0; i < N_FIELDS; i++)
        size[fields[i].group + 1]++;
}

static int group_size(int g)
{
    int size[N_GROUPS + 1];
    group_sizes(size);
    return size[g + 1];
}

/* The registry's array of the field names then the group names as Lua strings, made once
 * per state (keyed by the address of fields[]): setting a row's keys from it skips
 * interning each name again (lua_setfield hashes a C string on every call). */
static int push_names(lua_State *L)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, fields) == LUA_TTABLE) /* names */
        return lua_gettop(L);
    lua_pop(L, 1);
    lua_createtable(L, (int)(N_FIELDS + N_GROUPS), 0); /* names */
    for (size_t i = 0; i < N_FIELDS; i++) {
        lua_pushstring(L, fields[i].key);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    for (int g = 0; g < N_GROUPS; g++) {
        lua_pushstring(L, groups[g]);
        lua_rawseti(L, -2, (lua_Integer)(N_FIELDS + (size_t)g) + 1);
    }
    lua_pushvalue(L, -1);                             /* names names */
    lua_rawsetp(L, LUA_REGISTRYINDEX, fields);        /* names */
    return lua_gettop(L);
}

/* The name of key k (fields, then groups) from the names: a table (push_names) or, with
 * `stacked`, stack slots names, names + 1, ... (ecL_result_names_push). */
static void push_name(lua_State *L, int names, int stacked, size_t k)
{
    if (stacked)
        lua_pushvalue(L, names + (int)k);
    else
        lua_rawgeti(L, names, (lua_Integer)k + 1);
}

/* The row; keys from names as push_name reads them.  Raw sets: a fresh table has no metatable. */
static void push_row(lua_State *L, const ec_result *res, int extra, int names, int stacked)
{
    luaL_checkstack(L, N_GROUPS + 6, "a result row");
    int size[N_GROUPS + 1];
    group_sizes(size);
    lua_createtable(L, 0, size[0] + extra);           /* res */
    int top = lua_gettop(L), sub[N_GROUPS];
    for (int g = 0; g < N_GROUPS; g++) { /* the subtables first, as the keys' order always was */
        lua_createtable(L, 0, size[g + 1]);           /* res sub... sub */
        sub[g] = lua_gettop(L);
        push_name(L, names, stacked, N_FIELDS + (size_t)g); /* ... sub name */
        lua_pushvalue(L, sub[g]);                     /* ... sub name sub */
        lua_rawset(L, top);                           /* ... sub */
    }
    for (size_t i = 0; i < N_FIELDS; i++) {
        const result_field *f = &fields[i];
        push_name(L, names, stacked, i);              /* ... name */
        push_field(L, res, f);                        /* ... name v */
        lua_rawset(L, f->group == G_TOP ? top : sub[f->group]);
    }
    lua_settop(L, top);                               /* res */
}

void ecL_pushresult_sized(lua_State *L, const ec_result *res, int extra)
{
    int names = push_names(L);                        /* names */
    push_row(L, res, extra, names, 0);                /* names res */
    lua_remove(L, names);                             /* res */
}

int ecL_result_names_push(lua_State *L)
{
    luaL_checkstack(L, (int)(N_FIELDS + N_GROUPS) + LUA_MINSTACK, "a sweep's result keys");
    int first = lua_gettop(L) + 1;
    for (size_t i = 0; i < N_FIELDS; i++)
        lua_pushstring(L, fields[i].key);
    for (int g = 0; g < N_GROUPS; g++)
        lua_pushstring(L, groups[g]);
    return first;
}

void ecL_pushresult_named(lua_State *L, const ec_result *res, int extra, int names)
{
    push_row(L, res, extra, names, 1);
}

void ecL_pushmemory(lua_State *L, const ec_memory *m)
{
    ec_result res;
    memset(&res, 0, sizeof res);
    res.memory = *m;
    lua_createtable(L, 0, group_size(G_MEMORY));
    for (size_t i = 0; i < N_FIELDS; i++)
        if (fields[i].group == G_MEMORY) {
            push_field(L, &res, &fields[i]);
            lua_setfield(L, -2, fields[i].key);
        }
}

void ecL_pushresult(lua_State *L, const ec_result *res)
{
    ecL_pushresult_sized(L, res, 0);
}

int ecL_result_key(const char *key)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (fields[i].group == G_TOP && strcmp(fields[i].key, key) == 0)
            return (int)i;
    for (int g = 0; g < N_GROUPS; g++)
        if (strcmp(groups[g], key) == 0)
            return -g - 2;
    return -1;
}

void ecL_pushresult_keys(lua_State *L, const ec_result *res, const int *keys, size_t n, int extra)
{
    lua_createtable(L, 0, (int)n + extra);            /* res */
    for (size_t k = 0; k < n; k++) {
        if (keys[k] >= 0) {
            push_field(L, res, &fields[keys[k]]);     /* res v */
            lua_setfield(L, -2, fields[keys[k]].key); /* res */
            continue;
        }
        int g = -keys[k] - 2;
        lua_createtable(L, 0, group_size(g));         /* res sub */
        for (size_t i = 0; i < N_FIELDS; i++)
            if (fields[i].group == g) {
                push_field(L, res, &fields[i]);       /* res sub v */
                lua_setfield(L, -2, fields[i].key);   /* res sub */
            }
        lua_setfield(L, -2, groups[g]);               /* res */
    }
}

/* ---- CSV columns -------------------------------------------------------------------- */

/* text at buf, truncated to n - 1 bytes (n > 0), as snprintf "%s" without its cost */
static void copy_text(const char *text, char *buf, size_t n)
{
    size_t len = strlen(text);
    if (len >= n)
        len = n - 1;
    memcpy(buf, text, len);
    buf[len] = '\0';
}

/* The i-th field that is a CSV column of its own. */
static const result_field *column(size_t i)
{
    for (size_t k = 0; k < N_FIELDS; k++) {
        if (fields[k].alias)
            continue;
        if (i-- == 0)
            return &fields[k];
    }
    return NULL;
}

size_t ecL_result_column_count(void)
{
    size_t n = 0;
    for (size_t k = 0; k < N_FIELDS; k++)
        n += !fields[k].alias;
    return n;
}

const char *ecL_result_column_name(size_t i)
{
    const result_field *f = column(i);
    return f != NULL ? f->column : NULL;
}

static void field_text(const ec_result *res, const result_field *f, char *buf, size_t n)
{
    switch (f->kind) {
    case F_NUM: ec_format_number(field_num(res, f), buf, n); break;
    case F_BOOL: copy_text(field_int(res, f) != 0 ? "1" : "0", buf, n); break;
    case F_INT: ec_format_number(field_int(res, f), buf, n); break; /* whole: as "%d" */
    case F_BOTTLENECK: copy_text(ec_bottleneck_name(field_bottleneck(res, f)), buf, n); break;
    case F_PHASE: copy_text(ec_peak_phase_name(field_int(res, f)), buf, n); break;
    case F_WARNINGS:
    case F_TEXT: copy_text((const char *)res + f->offset, buf, n); break;
    }
}

void ecL_result_column_text(const ec_result *res, size_t i, char *buf, size_t n)
{
    const result_field *f = column(i);
    if (n == 0)
        return;
    buf[0] = '\0';
    if (f != NULL)
        field_text(res, f, buf, n);
}

void ecL_result_row_text(const ec_result *res, char *cells, size_t cell_max)
{
    if (cell_max == 0)
        return;
    size_t c = 0;
    for (size_t k = 0; k < N_FIELDS; k++)
        if (!fields[k].alias)
            field_text(res, &fields[k], cells + c++ * cell_max, cell_max);
}

const char *ecL_result_nested_column(const char *group, const char *key)
{
    for (size_t k = 0; k < N_FIELDS; k++)
        if (fields[k].group != G_TOP && strcmp(groups[fields[k].group], group) == 0
            && strcmp(fields[k].key, key) == 0)
            return fields[k].column;
    return NULL;
}

/* ec.result_columns() -> {"step_s", "samples_per_s", ...}: the CSV result columns in order. */
static int l_result_columns(lua_State *L)
{
    size_t n = ecL_result_column_count();
    lua_createtable(L, (int)n, 0);                    /* arr */
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, ecL_result_column_name(i)); /* arr name */
        lua_rawseti(L, -2, (lua_Integer)i + 1);       /* arr */
    }
    return 1;
}

static const luaL_Reg result_funcs[] = {
    {"result_columns", l_result_columns},
    {NULL, NULL},
};

int ecL_open_result(lua_State *L)
{
    luaL_setfuncs(L, result_funcs, 1);
    return 0;
}
