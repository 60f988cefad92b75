/*
 * l_sweep.c: sweeps and comparisons, the Lua face of "predict many configurations".
 *
 *   ec.sweep(base, axes [, opts]) -> rows    the product of the axes over a base config
 *   ec.compare(a, b) -> table                two configs' results side by side, as ratios
 *
 * The loop runs here in C (ecL_sweep_run, shared with the CLI's `sweep` command) over the
 * library's ec_sweep: every point is the base config with each axis value set through
 * ec_config_set, so any config key can be an axis, then ec_predict, on opts.threads threads
 * that hand the points back in order.  Axis values are checked once before the first
 * point, so a bad key or value raises naming it; a point the library refuses (an
 * unsupported combination, an unknown GPU) becomes a row with an `error` field unless
 * opts.strict.  Nothing here models anything: values come from the core's result.
 */
#define _POSIX_C_SOURCE 200809L /* isatty, fileno */

#include "lec_priv.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the loop, shared with the CLI ---------------------------------------------------- */

/* Progress bar width in characters and the sweep length from which it is drawn. */
#define BAR_WIDTH 30
#define BAR_MIN_POINTS 32
/* Points between two calls of the context's progress callback (a power of two). */
#define SWEEP_CHECK_POINTS 256

int ecL_sweep_check(ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                    size_t *n_points, char *msg, size_t msg_size)
{
    size_t n = 1;
    if (n_axes == 0 || n_axes > ECL_SWEEP_MAX_AXES) {
        snprintf(msg, msg_size, "a sweep has 1 to %d axes, got %zu", ECL_SWEEP_MAX_AXES, n_axes);
        return EC_EINVAL;
    }
    for (size_t a = 0; a < n_axes; a++) {
        if (axes[a].n == 0) {
            snprintf(msg, msg_size, "sweep axis '%s' has no values", axes[a].key);
            return EC_EINVAL;
        }
        for (size_t b = 0; b < a; b++) {
            if (strcmp(axes[a].key, axes[b].key) == 0) {
                snprintf(msg, msg_size, "sweep axis '%s' is given twice", axes[a].key);
                return EC_EINVAL;
            }
        }
        for (size_t v = 0; v < axes[a].n; v++) {
            ec_config scratch = *base;
            int st = ec_config_set(ctx, &scratch, axes[a].key, axes[a].values[v]);
            if (st != EC_OK) {
                snprintf(msg, msg_size, "%s", ec_ctx_errmsg(ctx));
                return st;
            }
        }
        if (n > ((size_t)-1) / axes[a].n) {
            snprintf(msg, msg_size, "sweep has too many points");
            return EC_EINVAL;
        }
        n *= axes[a].n;
    }
    *n_points = n;
    return EC_OK;
}

static void progress(size_t done, size_t total)
{
    int filled = (int)(done * BAR_WIDTH / total);
    fprintf(stderr, "\rsweep [%.*s%*s] %zu/%zu", filled, "##############################",
            BAR_WIDTH - filled, "", done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

void ecL_free_sweep(void *p)
{
    ec_sweep_free((ec_sweep *)p);
}

int ecL_sweep_run(lua_State *L, ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                  const ec_sweep_opts *opts, int show_progress, ecL_point_fn fn, void *ud, char *msg,
                  size_t msg_size)
{
    size_t total = 0;
    int st = ecL_sweep_check(ctx, base, axes, n_axes, &total, msg, msg_size);
    if (st != EC_OK)
        return st;
    void **slot = ecL_newbox(L, ecL_free_sweep);              /* ... box */
    ec_sweep *sw = NULL;
    st = ec_sweep_new(ctx, base, opts, &sw);
    *slot = sw;
    for (size_t a = 0; a < n_axes && st == EC_OK; a++)
        st = ec_sweep_axis(sw, axes[a].key, axes[a].values, axes[a].n);
    size_t share = st == EC_OK ? ec_sweep_share(sw) : 0, done = 0;
    show_progress = show_progress && share >= BAR_MIN_POINTS && isatty(fileno(stderr));
    size_t step = share / BAR_WIDTH > 0 ? share / BAR_WIDTH : 1;
    while (st == EC_OK && !ec_sweep_done(sw)) {
        ec_sweep_point pt;
        /* The host's progress callback may stop a long sweep (a time budget, an interrupt):
         * asked on this thread, between points; freeing the sweep stops its workers. */
        if ((done & (SWEEP_CHECK_POINTS - 1)) == 0 &&
            (st = ec_ctx_progress(ctx, "sweep", (double)done, (double)share)) != EC_OK)
            break;
        st = ec_sweep_next(sw, &pt);
        if (st == EC_OK)
            st = fn(ud, &pt);
        done++;
        if (st == EC_OK && show_progress && (done % step == 0 || done == share))
            progress(done, share);
    }
    if (st != EC_OK)
        snprintf(msg, msg_size, "%s", ec_ctx_errmsg(ctx));
    ec_sweep_free((ec_sweep *)ecL_unbox(L, -1));
    lua_pop(L, 1);                                            /* ... */
    return st;
}

/* ---- ec.sweep ----------------------------------------------------------------------- */

/* Stack slots of l_sweep_sweep. */
enum { S_BASE = 1, S_AXES, S_OPTS, S_KEYS, S_VALUES, S_TEXTS, S_PAIRS, S_ROWS };

typedef struct sweep_state {
    lua_State *L;
    ec_ctx *ctx;
    const ecL_axis *axes;
    size_t n_axes;
    int strict;
    int row_keys;      /* config keys a row gets besides the result's: base pairs + axes */
    int n_base;        /* base's pairs, in S_PAIRS */
    const int *keys;   /* opts.fields as ecL_result_key values; NULL: every result field */
    size_t n_keys;
    int names;         /* full rows: the first stack slot of the result's key names... */
    int resolved;      /* ...and of the resolved keys' (ecL_result_names_push, ecL_resolved_names_push) */
    int resolved_index[ECL_N_RESOLVED];
} sweep_state;

/* Position of a config key in ec_config_key_name order (unknown keys last). */
static size_t key_rank(const char *key)
{
    size_t n = ec_config_key_count();
    for (size_t i = 0; i < n; i++)
        if (strcmp(ec_config_key_name(i), key) == 0)
            return i;
    return n;
}

/* Read the axes argument into S_KEYS (array of key names) and S_VALUES (array of arrays
 * of Lua values).  An array of {key, values} pairs keeps its order; a map is put in the
 * config vocabulary's order, so the product's order never depends on hashing. */
static void read_axes(lua_State *L)
{
    lua_Integer n = 0;
    lua_newtable(L);                                          /* keys */
    lua_newtable(L);                                          /* keys values */
    if (lua_rawlen(L, S_AXES) > 0) {
        lua_Integer len = (lua_Integer)lua_rawlen(L, S_AXES);
        for (lua_Integer i = 1; i <= len; i++) {
            if (lua_rawgeti(L, S_AXES, i) != LUA_TTABLE)      /* ... pair */
                luaL_error(L, "sweep axis %I: {key, values} expected, got %s", (LUAI_UACINT)i,
                           luaL_typename(L, -1));
            if (lua_rawgeti(L, -1, 1) != LUA_TSTRING)         /* ... pair key */
                luaL_error(L, "sweep axis %I: key (a string) expected first", (LUAI_UACINT)i);
            if (lua_rawgeti(L, -2, 2) != LUA_TTABLE)          /* ... pair key values */
                luaL_error(L, "sweep axis '%s': array of values expected second", lua_tostring(L, -2));
            lua_rawseti(L, S_KEYS + 1, i);                    /* ... pair key */
            lua_rawseti(L, S_KEYS, i);                        /* ... pair */
            lua_pop(L, 1);
        }
        n = len;
    } else {
        /* Collect the keys, then order them by rank (few keys: insertion sort). */
        lua_pushnil(L);
        while (lua_next(L, S_AXES) != 0) {                    /* ... k v */
            if (lua_type(L, -2) != LUA_TSTRING)
                luaL_error(L, "sweep axes: keys must be config key names (got a %s key)",
                           luaL_typename(L, -2));
            if (lua_type(L, -1) != LUA_TTABLE)
                luaL_error(L, "sweep axis '%s': array of values expected, got %s",
                           lua_tostring(L, -2), luaL_typename(L, -1));
            lua_Integer at = ++n;
            size_t rank = key_rank(lua_tostring(L, -2));
            while (at > 1) {
                lua_rawgeti(L, S_KEYS, at - 1);
                size_t prev = key_rank(lua_tostring(L, -1));
                int later = prev > rank || (prev == rank && strcmp(lua_tostring(L, -1), lua_tostring(L, -3)) > 0);
                if (!later) {
                    lua_pop(L, 1);
                    break;
                }
                lua_rawseti(L, S_KEYS, at);
                lua_rawgeti(L, S_VALUES, at - 1);
                lua_rawseti(L, S_VALUES, at);
                at--;
            }
            lua_pushvalue(L, -2);
            lua_rawseti(L, S_KEYS, at);
            lua_rawseti(L, S_VALUES, at);                     /* ... k */
        }
    }
    if (n == 0)
        luaL_error(L, "sweep: no axes (give at least one key with a list of values)");
}

/* opts.fields (on top): an array of result keys, checked here once. */
static size_t read_fields(lua_State *L, int *keys)
{
    if (!lua_istable(L, -1))
        luaL_error(L, "sweep: opts.fields must be an array of result keys");
    size_t n = (size_t)lua_rawlen(L, -1);
    if (n > ECL_SWEEP_MAX_FIELDS)
        luaL_error(L, "sweep: opts.fields has %d keys, at most %d", (int)n, ECL_SWEEP_MAX_FIELDS);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        const char *key = lua_tostring(L, -1);
        keys[i] = key != NULL ? ecL_result_key(key) : -1;
        if (keys[i] == -1)
            luaL_error(L, "sweep: opts.fields[%d]: '%s' is not a key of a result", (int)i + 1,
                       key != NULL ? key : luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    return n;
}

/* Copy base's pairs (S_PAIRS: k1, v1, k2, v2, ...) and the point's axis values into the row
 * table on top. */
static void set_config(lua_State *L, const sweep_state *s, const size_t *index)
{
    int row = lua_gettop(L);
    for (int i = 1; i < 2 * s->n_base; i += 2) {
        lua_rawgeti(L, S_PAIRS, i);                           /* row k */
        lua_rawgeti(L, S_PAIRS, i + 1);                       /* row k v */
        lua_rawset(L, row);                                   /* row */
    }
    for (size_t a = 0; a < s->n_axes; a++) {
        lua_rawgeti(L, S_KEYS, (lua_Integer)a + 1);           /* row k */
        lua_rawgeti(L, S_VALUES, (lua_Integer)a + 1);         /* row k vals */
        lua_rawgeti(L, -1, (lua_Integer)index[a] + 1);        /* row k vals v */
        lua_replace(L, -2);                                   /* row k v */
        lua_rawset(L, row);                                   /* row */
    }
}

static int sweep_point(void *ud, const ec_sweep_point *pt)
{
    sweep_state *s = (sweep_state *)ud;
    lua_State *L = s->L;
    if (pt->status == EC_OK) {
        if (s->keys != NULL) {
            ecL_pushresult_keys(L, pt->result, s->keys, s->n_keys, s->row_keys); /* row */
        } else {
            ecL_pushresult_named(L, pt->result, s->row_keys + ECL_N_RESOLVED, s->names); /* row */
            /* the point's own keys overwrite these below */
            ecL_setresolved_named(L, pt->resolved, s->resolved, s->resolved_index);
        }
    } else {
        if (s->strict) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (size_t a = 0; a < s->n_axes; a++) {
                lua_pushfstring(L, "%s%s=%s", a > 0 ? " " : "", s->axes[a].key,
                                s->axes[a].values[pt->values[a]]);
                luaL_addvalue(&b);
            }
            luaL_pushresult(&b);
            return luaL_error(L, "sweep point %d (%s): %s: %s", (int)pt->index + 1, lua_tostring(L, -1),
                              ecL_status_name(pt->status), pt->message);
        }
        lua_createtable(L, 0, s->row_keys + 1);               /* row */
        lua_pushfstring(L, "%s: %s", ecL_status_name(pt->status), pt->message);
        lua_setfield(L, -2, "error");
    }
    set_config(L, s, pt->values);
    lua_rawseti(L, S_ROWS, (lua_Integer)pt->index + 1);
    return EC_OK;
}

/* ec.sweep's opts: strict, progress (show), threads, fields (only: given; their keys). */
typedef struct sweep_opts {
    int strict, show, threads, only;
    int keys[ECL_SWEEP_MAX_FIELDS];
    size_t n_keys;
} sweep_opts;

static void read_sweep_opts(lua_State *L, sweep_opts *o)
{
    o->strict = 0;
    o->show = 1;
    o->threads = 0;
    o->only = 0; /* opts.fields given: rows carry only those result keys */
    o->n_keys = 0;
    if (!lua_istable(L, S_OPTS))
        return;
    lua_getfield(L, S_OPTS, "strict");
    o->strict = lua_toboolean(L, -1);
    lua_getfield(L, S_OPTS, "progress");
    o->show = lua_isnil(L, -1) || lua_toboolean(L, -1);
    lua_getfield(L, S_OPTS, "threads");
    if (!lua_isnil(L, -1)) {
        int isint = 0;
        lua_Integer t = lua_tointegerx(L, -1, &isint);
        if (!isint || t < 0 || t > ECL_SWEEP_MAX_THREADS)
            luaL_error(L, "sweep: opts.threads must be an integer from 0 (the cores available) to %d",
                       ECL_SWEEP_MAX_THREADS);
        o->threads = (int)t;
    }
    lua_pop(L, 3);
    o->only = lua_getfield(L, S_OPTS, "fields") != LUA_TNIL;
    if (o->only)
        o->n_keys = read_fields(L, o->keys);
    lua_pop(L, 1);
}

/* The axes of S_KEYS and S_VALUES as texts (as the config reads each value): pushes S_TEXTS,
 * which keeps the strings and their array alive. */
static void push_axis_texts(lua_State *L, ecL_axis *axes, size_t n_axes)
{
    size_t n_texts = 0;
    for (size_t a = 0; a < n_axes; a++) {
        lua_rawgeti(L, S_VALUES, (lua_Integer)a + 1);
        n_texts += (size_t)lua_rawlen(L, -1);
        lua_pop(L, 1);
    }
    lua_createtable(L, (int)n_texts, 0);                      /* S_TEXTS: keeps the strings alive */
    const char **texts = (const char **)lua_newuserdatauv(L, (n_texts + 1) * sizeof *texts, 0);
    lua_rawseti(L, S_TEXTS, 0);
    size_t t = 0;
    for (size_t a = 0; a < n_axes; a++) {
        lua_rawgeti(L, S_KEYS, (lua_Integer)a + 1);
        size_t klen;
        axes[a].key = lua_tolstring(L, -1, &klen);            /* alive in S_KEYS */
        if (strlen(axes[a].key) != klen)
            luaL_error(L, "sweep axis '%s...': the key has an embedded NUL byte", axes[a].key);
        lua_pop(L, 1);
        lua_rawgeti(L, S_VALUES, (lua_Integer)a + 1);         /* vals */
        axes[a].n = (size_t)lua_rawlen(L, -1);
        axes[a].values = texts + t;
        for (size_t v = 0; v < axes[a].n; v++) {
            char buf[64];
            lua_rawgeti(L, -1, (lua_Integer)v + 1);           /* vals x */
            lua_pushstring(L, ecL_config_text(L, -1, axes[a].key, buf, sizeof buf)); /* vals x s */
            texts[t] = lua_tostring(L, -1);
            lua_rawseti(L, S_TEXTS, (lua_Integer)++t);        /* vals x */
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
}

/* ec.sweep(base, axes [, opts]) -> {row, ...}
 * axes: {key = {v1, v2, ...}, ...} or {{key, {v1, ...}}, ...}; opts: {strict = bool,
 * progress = bool}.  Row k of the product (first axis slowest) is the base table with the
 * point's axis values and the prediction's fields (as ec.predict), or, for a point the
 * library refused, the config and error = "ENAME: message".  opts.fields = {key, ...}
 * (result keys such as "step_s", or "memory", "breakdown", "interval") keeps only those
 * result fields in a row: the same predictions with smaller rows.  opts.threads = N predicts
 * on N threads (each with its own context; 0 or absent: the cores available, fewer for a short
 * sweep): the same rows in the same order as on one. */
static int l_sweep_sweep(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    luaL_checktype(L, S_BASE, LUA_TTABLE);
    luaL_checktype(L, S_AXES, LUA_TTABLE);
    if (!lua_isnoneornil(L, S_OPTS))
        luaL_checktype(L, S_OPTS, LUA_TTABLE);
    lua_settop(L, S_OPTS);
    sweep_opts o;
    read_sweep_opts(L, &o);
    int strict = o.strict, show = o.show, threads = o.threads, only = o.only;
    int *keys = o.keys;
    size_t n_keys = o.n_keys;
    ec_config base;
    int bst = ecL_toconfig(L, S_BASE, ctx, &base);
    read_axes(L);
    if (bst != EC_OK)
        return ecL_fail(L, ctx, bst);                                             /* S_KEYS S_VALUES */

    size_t n_axes = (size_t)lua_rawlen(L, S_KEYS);
    if (n_axes > ECL_SWEEP_MAX_AXES)
        return luaL_error(L, "sweep: at most %d axes, got %d", ECL_SWEEP_MAX_AXES, (int)n_axes);
    ecL_axis axes[ECL_SWEEP_MAX_AXES];
    push_axis_texts(L, axes, n_axes);                         /* S_TEXTS */
    size_t total = 0;
    char msg[EC_WARNING_TEXT_MAX];
    if (ecL_sweep_check(ctx, &base, axes, n_axes, &total, msg, sizeof msg) != EC_OK)
        return luaL_error(L, "sweep: %s", msg);
    lua_newtable(L);                                          /* S_PAIRS: base's pairs, read once */
    int n_base = 0;
    lua_pushnil(L);
    while (lua_next(L, S_BASE) != 0) {                        /* ... k v */
        lua_pushvalue(L, -2);                                 /* ... k v k */
        lua_rawseti(L, S_PAIRS, 2 * ++n_base - 1);            /* ... k v */
        lua_rawseti(L, S_PAIRS, 2 * n_base);                  /* ... k */
    }
    lua_createtable(L, total < (1u << 24) ? (int)total : 0, 0); /* S_ROWS */
    int row_keys = (int)n_axes + n_base;
    sweep_state s = {L, ctx, axes, n_axes, strict, row_keys, n_base, only ? keys : NULL, n_keys, 0, 0, {0}};
    if (!only) { /* above S_ROWS, dropped with the rest at the end */
        s.names = ecL_result_names_push(L);
        s.resolved = ecL_resolved_names_push(L, s.resolved_index);
        /* a resolved key the point's own keys set (set_config) is not set twice */
        for (int i = 0; i < ECL_N_RESOLVED; i++) {
            lua_pushvalue(L, s.resolved + i);
            int own = lua_rawget(L, S_BASE) != LUA_TNIL;
            lua_pop(L, 1);
            for (size_t a = 0; a < n_axes; a++)
                own = own || strcmp(axes[a].key, lua_tostring(L, s.resolved + i)) == 0;
            if (own)
                s.resolved_index[i] = -1; /* ecL_setresolved_named skips it */
        }
    }
    ec_sweep_opts so;
    ec_sweep_opts_init(&so);
    so.threads = threads;
    so.resolve = !only;
    int st = ecL_sweep_run(L, ctx, &base, axes, n_axes, &so, show, sweep_point, &s, msg, sizeof msg);
    if (st != EC_OK) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", ecL_status_name(st), msg);
        lua_pushstring(L, ecL_status_name(st));
        return 3;
    }
    lua_settop(L, S_ROWS);
    return 1;
}

/* ---- ec.compare ----------------------------------------------------------------------- */

static double ratio(double num, double den)
{
    return den > 0 ? num / den : 0;
}

static void set_num(lua_State *L, const char *key, double x)
{
    lua_pushnumber(L, (lua_Number)x);
    lua_setfield(L, -2, key);
}

/* ec.compare(a, b) -> {a = result, b = result, changed = {keys...}, speedup = b/a samples
 * per second, step_ratio, epoch_ratio (0 when unknown), peak_delta_bytes = b - a,
 * gpu_util_delta_frac = b - a} | nil, msg, code */
static int l_sweep_compare(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    ec_config ca, cb;
    ec_result ra, rb;
    int st = ecL_toconfig(L, 1, ctx, &ca), st_b = ecL_toconfig(L, 2, ctx, &cb);
    if (st == EC_OK)
        st = st_b;
    if (st == EC_OK)
        st = ec_predict(ctx, &ca, &ra);
    if (st == EC_OK)
        st = ec_predict(ctx, &cb, &rb);
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_createtable(L, 0, 8);                                 /* t */
    ecL_pushresult_sized(L, &ra, 6);
    ecL_setresolved(L, ctx, &ca);
    lua_setfield(L, -2, "a");
    ecL_pushresult_sized(L, &rb, 6);
    ecL_setresolved(L, ctx, &cb);
    lua_setfield(L, -2, "b");
    /* Changed keys between what was simulated: strategy=ddp given on one side and derived on
     * the other is no change. */
    ec_config_resolve(ctx, &ca, &ca);
    ec_config_resolve(ctx, &cb, &cb);
    lua_newtable(L);                                          /* t changed */
    lua_Integer n = 0;
    for (size_t i = 0; i < ec_config_key_count(); i++) {
        char va[EC_PATH_MAX], vb[EC_PATH_MAX];
        const char *key = ec_config_key_name(i);
        if (ec_config_get(&ca, key, va, sizeof va) == EC_OK && ec_config_get(&cb, key, vb, sizeof vb) == EC_OK
            && strcmp(va, vb) != 0) {
            lua_pushstring(L, key);
            lua_rawseti(L, -2, ++n);
        }
    }
    lua_setfield(L, -2, "changed");                           /* t */
    set_num(L, "speedup", ratio(rb.samples_per_s, ra.samples_per_s));
    set_num(L, "step_ratio", ratio(rb.step_s, ra.step_s));
    set_num(L, "epoch_ratio", ratio(rb.epoch_s, ra.epoch_s));
    set_num(L, "peak_delta_bytes", rb.memory.peak_bytes - ra.memory.peak_bytes);
    set_num(L, "gpu_util_delta_frac", rb.gpu_util_frac - ra.gpu_util_frac);
    return 1;
}

static const luaL_Reg sweep_funcs[] = {
    {"sweep", l_sweep_sweep},
    {"compare", l_sweep_compare},
    {NULL, NULL},
};

int ecL_open_sweep(lua_State *L)
{
    luaL_setfuncs(L, sweep_funcs, 1);
    return 0;
}
