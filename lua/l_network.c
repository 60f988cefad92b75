/*
 * l_network.c: ec.network{...}, the Lua face of ec_network_define.  A network table is turned
 * field by field into the C description (ec_layer, ec_head, ec_network_def) and registered on
 * the module's context, so that model=<id> works in every later call.  No model logic here:
 * the library checks the description and prices it.
 *
 *   ec.network{ id = "tiny-llama", default_seq_len = 2048,
 *     layers = { {"embedding", vocab = 32000, dim = 2048},
 *                {"repeat", times = 22, {"residual", "save"}, {"norm", "rms"},
 *                   {"attention", heads = 32, kv_heads = 4, causal = true, position = "rope"},
 *                   {"residual", "add"}, {"residual", "save"}, {"norm", "rms"},
 *                   {"mlp", ffn = 5632, act = "silu", gated = true}, {"residual", "add"}},
 *                {"norm", "rms"} },
 *     heads = { {task = "lm", kind = "causal_lm"} } }
 *
 * A layer is {kind, fields...}; its first array item is the kind, a second one a shorthand
 * for its main choice ({"norm", "rms"}, {"residual", "add"}, {"activation", "relu"});
 * a repeat's further array items are its body.  An unknown kind, field or choice, or a value
 * of the wrong type, raises an error naming the layer; a description the library refuses
 * (heads that do not divide the width, a repeat that changes the shape) returns nil, msg, code.
 */
#include "lec_priv.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef enum { F_I64, F_INT, F_BOOL, F_ENUM } ftype;

typedef struct fdesc {
    int kind;                    /* ec_layer_kind, -1: every kind */
    const char *name;
    ftype type;
    size_t off;                  /* offsetof(ec_layer, ...) */
    const char *const *choices;  /* F_ENUM: names in enum order, NULL-terminated */
} fdesc;

static const char *const KINDS[] = {"embedding", "patches", "linear", "conv2d", "norm", "attention", "mlp", "moe",
                                    "activation", "dropout", "residual", "pool", "repeat", "decoder", NULL};
static const char *const NORMS[] = {"layer", "rms", "batch", NULL};
static const char *const POSITIONS[] = {"none", "rope", "alibi", "relative", NULL};
static const char *const ACTS[] = {"gelu", "gelu_tanh", "relu",  "silu", "tanh",
                                   "quick_gelu", "relu2", "gelu_python", NULL};
static const char *const RESIDUALS[] = {"save", "add", "add_relu", NULL};
static const char *const POOLS[] = {"max", "avg", NULL};
static const char *const HEAD_KINDS[] = {"causal_lm", "masked_lm", "pretrain", "classify", "token_classify",
                                         "span_qa", "image_classify", NULL};
static const char *const ATTENTION_IMPLS[] = {"config", "fused", "eager", NULL};

#define L(k, path, n, t, ch) {k, n, t, offsetof(ec_layer, path), ch}
static const fdesc FIELDS[] = {
    L(-1, on_skip, "on_skip", F_BOOL, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.vocab, "vocab", F_I64, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.dim, "dim", F_I64, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.positions, "positions", F_I64, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.type_vocab, "type_vocab", F_I64, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.fused, "fused", F_BOOL, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.scale, "scale", F_BOOL, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.shared, "shared", F_BOOL, NULL),
    L(EC_LAYER_EMBEDDING, u.embedding.idle_params, "idle_params", F_I64, NULL),
    L(EC_LAYER_PATCHES, u.patches.cls_tokens, "cls_tokens", F_INT, NULL),
    L(EC_LAYER_PATCHES, u.patches.positions, "positions", F_BOOL, NULL),
    L(EC_LAYER_LINEAR, u.linear.out, "out", F_I64, NULL),
    L(EC_LAYER_LINEAR, u.linear.bias, "bias", F_BOOL, NULL),
    L(EC_LAYER_CONV2D, u.conv2d.out, "out", F_I64, NULL),
    L(EC_LAYER_CONV2D, u.conv2d.kernel, "kernel", F_INT, NULL),
    L(EC_LAYER_CONV2D, u.conv2d.stride, "stride", F_INT, NULL),
    L(EC_LAYER_CONV2D, u.conv2d.padding, "padding", F_INT, NULL),
    L(EC_LAYER_CONV2D, u.conv2d.groups, "groups", F_INT, NULL),
    L(EC_LAYER_CONV2D, u.conv2d.bias, "bias", F_BOOL, NULL),
    L(EC_LAYER_NORM, u.norm.kind, "kind", F_ENUM, NORMS),
    L(EC_LAYER_NORM, u.norm.bias, "bias", F_BOOL, NULL),
    L(EC_LAYER_NORM, u.norm.low_precision, "low_precision", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.heads, "heads", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.kv_heads, "kv_heads", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.head_dim, "head_dim", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.causal, "causal", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.cross, "cross", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.qkv_fused, "qkv_fused", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.qkv_bias, "qkv_bias", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.out_bias, "out_bias", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.position, "position", F_ENUM, POSITIONS),
    L(EC_LAYER_ATTENTION, u.attention.window, "window", F_I64, NULL),
    L(EC_LAYER_ATTENTION, u.attention.rel_buckets, "rel_buckets", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.dropout, "dropout", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.qk_norm, "qk_norm", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.softcap, "softcap", F_BOOL, NULL),
    L(EC_LAYER_ATTENTION, u.attention.relative_span, "relative_span", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.q_rank, "q_rank", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.kv_rank, "kv_rank", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.rope_dim, "rope_dim", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.v_head_dim, "v_head_dim", F_INT, NULL),
    L(EC_LAYER_ATTENTION, u.attention.sinks, "sinks", F_BOOL, NULL),
    L(EC_LAYER_MLP, u.mlp.ffn, "ffn", F_I64, NULL),
    L(EC_LAYER_MLP, u.mlp.act, "act", F_ENUM, ACTS),
    L(EC_LAYER_MLP, u.mlp.gated, "gated", F_BOOL, NULL),
    L(EC_LAYER_MLP, u.mlp.bias, "bias", F_BOOL, NULL),
    L(EC_LAYER_MLP, u.mlp.dropout, "dropout", F_BOOL, NULL),
    L(EC_LAYER_MOE, u.moe.experts, "experts", F_INT, NULL),
    L(EC_LAYER_MOE, u.moe.top_k, "top_k", F_INT, NULL),
    L(EC_LAYER_MOE, u.moe.ffn, "ffn", F_I64, NULL),
    L(EC_LAYER_MOE, u.moe.act, "act", F_ENUM, ACTS),
    L(EC_LAYER_MOE, u.moe.gated, "gated", F_BOOL, NULL),
    L(EC_LAYER_MOE, u.moe.shared_experts, "shared_experts", F_INT, NULL),
    L(EC_LAYER_MOE, u.moe.shared_ffn, "shared_ffn", F_I64, NULL),
    L(EC_LAYER_MOE, u.moe.shared_gate, "shared_gate", F_BOOL, NULL),
    L(EC_LAYER_MOE, u.moe.bias, "bias", F_BOOL, NULL),
    L(EC_LAYER_ACTIVATION, u.activation.act, "act", F_ENUM, ACTS),
    L(EC_LAYER_RESIDUAL, u.residual.op, "op", F_ENUM, RESIDUALS),
    L(EC_LAYER_POOL, u.pool.kind, "kind", F_ENUM, POOLS),
    L(EC_LAYER_POOL, u.pool.kernel, "kernel", F_INT, NULL),
    L(EC_LAYER_POOL, u.pool.stride, "stride", F_INT, NULL),
    L(EC_LAYER_POOL, u.pool.padding, "padding", F_INT, NULL),
    L(EC_LAYER_REPEAT, u.repeat.times, "times", F_INT, NULL),
    L(EC_LAYER_REPEAT, u.repeat.shared_params, "shared_params", F_BOOL, NULL),
    L(EC_LAYER_REPEAT, u.repeat.checkpoint, "checkpoint", F_BOOL, NULL),
};
#undef L

/* The field a {"kind", "choice"} shorthand sets. */
static const char *shorthand_of(int kind)
{
    switch (kind) {
    case EC_LAYER_NORM: return "kind";
    case EC_LAYER_ACTIVATION: return "act";
    case EC_LAYER_RESIDUAL: return "op";
    case EC_LAYER_POOL: return "kind";
    default: return NULL;
    }
}

#define MAX_DEPTH 16

typedef struct builder {
    lua_State *L;
    ec_layer *layers;  /* inside a userdata on the stack: collected on any error */
    size_t n, cap;
    char where[64];    /* "layer 3 (attention)" of the message being raised */
} builder;

static int choice_of(lua_State *L, const builder *b, const char *field, const char *const *choices, int idx)
{
    const char *s = lua_tostring(L, idx);
    for (int i = 0; choices[i] != NULL; i++)
        if (strcmp(s, choices[i]) == 0)
            return i;
    luaL_Buffer msg;
    luaL_buffinit(L, &msg);
    lua_pushfstring(L, "ec.network: %s: field '%s': '%s' is not one of ", b->where, field, s);
    luaL_addvalue(&msg);
    for (int i = 0; choices[i] != NULL; i++) {
        luaL_addstring(&msg, i ? ", " : "");
        luaL_addstring(&msg, choices[i]);
    }
    luaL_pushresult(&msg);
    return lua_error(L);
}

/* Store the Lua value at idx into the field f of l. */
static void set_field(lua_State *L, builder *b, ec_layer *l, const fdesc *f, int idx)
{
    char *p = (char *)l + f->off;
    int t = lua_type(L, idx);
    if (f->type == F_BOOL) {
        int v = 0;
        if (t == LUA_TBOOLEAN)
            v = lua_toboolean(L, idx);
        else if (t == LUA_TNUMBER && lua_isinteger(L, idx) && (lua_tointeger(L, idx) == 0 || lua_tointeger(L, idx) == 1))
            v = (int)lua_tointeger(L, idx);
        else
            luaL_error(L, "ec.network: %s: field '%s' must be true or false", b->where, f->name);
        memcpy(p, &v, sizeof v);
    } else if (f->type == F_ENUM) {
        if (t != LUA_TSTRING)
            luaL_error(L, "ec.network: %s: field '%s' must be a name", b->where, f->name);
        int v = choice_of(L, b, f->name, f->choices, idx);
        memcpy(p, &v, sizeof v);
    } else {
        if (t != LUA_TNUMBER || !lua_isinteger(L, idx))
            luaL_error(L, "ec.network: %s: field '%s' must be an integer", b->where, f->name);
        lua_Integer v = lua_tointeger(L, idx);
        if (f->type == F_INT) {
            if (v < -2147483647 || v > 2147483647)
                luaL_error(L, "ec.network: %s: field '%s' is out of range", b->where, f->name);
            int iv = (int)v;
            memcpy(p, &iv, sizeof iv);
        } else {
            int64_t lv = (int64_t)v;
            memcpy(p, &lv, sizeof lv);
        }
    }
}

static const fdesc *find_field(int kind, const char *name)
{
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
        if ((FIELDS[i].kind == kind || FIELDS[i].kind == -1) && strcmp(FIELDS[i].name, name) == 0)
            return &FIELDS[i];
    return NULL;
}

/* "heads, kv_heads, ..." for a message about an unknown field. */
static void push_field_list(lua_State *L, int kind)
{
    luaL_Buffer buf;
    luaL_buffinit(L, &buf);
    int first = 1;
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
        if (FIELDS[i].kind == kind || FIELDS[i].kind == -1) {
            luaL_addstring(&buf, first ? "" : ", ");
            luaL_addstring(&buf, FIELDS[i].name);
            first = 0;
        }
    luaL_pushresult(&buf);
}

static ec_layer *new_layer(builder *b)
{
    if (b->n == b->cap)
        luaL_error(b->L, "ec.network: more than %d layers", (int)b->cap);
    ec_layer *l = &b->layers[b->n++];
    memset(l, 0, sizeof *l);
    return l;
}

static void read_list(builder *b, int idx, int first, int depth);

/* The layer table at idx (absolute). */
static void read_layer(builder *b, int idx, int depth)
{
    lua_State *L = b->L;
    size_t at = b->n;
    if (lua_rawgeti(L, idx, 1) != LUA_TSTRING)
        luaL_error(L, "ec.network: layer %d: the first item must be the kind (%s, ...)", (int)at + 1, KINDS[0]);
    const char *name = lua_tostring(L, -1);
    int kind = -1;
    for (int i = 0; KINDS[i] != NULL; i++)
        if (strcmp(name, KINDS[i]) == 0)
            kind = i;
    if (kind < 0)
        luaL_error(L, "ec.network: layer %d: unknown kind '%s' (embedding, patches, linear, conv2d, norm, "
                   "attention, mlp, moe, activation, dropout, residual, pool, repeat, decoder)", (int)at + 1, name);
    lua_pop(L, 1);
    snprintf(b->where, sizeof b->where, "layer %d (%s)", (int)at + 1, KINDS[kind]);
    ec_layer *l = new_layer(b);
    l->kind = (ec_layer_kind)kind;
    if (kind == EC_LAYER_CONV2D)
        l->u.conv2d.padding = -1; /* kernel / 2 unless given */
    if (kind == EC_LAYER_REPEAT)
        l->u.repeat.checkpoint = 1; /* a repeated layer is a checkpointing unit unless said */
    const char *sh = shorthand_of(kind);
    if (lua_rawgeti(L, idx, 2) == LUA_TSTRING && sh != NULL)
        set_field(L, b, l, find_field(kind, sh), lua_gettop(L));
    else if (lua_type(L, -1) == LUA_TSTRING || (lua_type(L, -1) != LUA_TNIL && kind != EC_LAYER_REPEAT))
        luaL_error(L, "ec.network: %s: unexpected item 2", b->where);
    lua_pop(L, 1);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) { /* named fields */
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *key = lua_tostring(L, -2);
            const fdesc *f = find_field(kind, key);
            if (f == NULL) {
                push_field_list(L, kind);
                luaL_error(L, "ec.network: %s: unknown field '%s' (fields: %s)", b->where, key, lua_tostring(L, -1));
            }
            set_field(L, b, &b->layers[at], f, lua_gettop(L));
        } else if (!lua_isinteger(L, -2)) {
            luaL_error(L, "ec.network: %s: keys must be field names", b->where);
        }
        lua_pop(L, 1);
    }
    if (kind == EC_LAYER_REPEAT) {
        if (depth >= MAX_DEPTH)
            luaL_error(L, "ec.network: %s: repeats nested more than %d deep", b->where, MAX_DEPTH);
        read_list(b, idx, 2, depth + 1);
        b->layers[at].u.repeat.layers = (int)(b->n - at - 1);
    }
}

/* The layer tables of the list at idx from array item `first` on. */
static void read_list(builder *b, int idx, int first, int depth)
{
    lua_State *L = b->L;
    luaL_checkstack(L, 8, "ec.network: layers nested too deep");
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer i = first; i <= n; i++) {
        if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
            luaL_error(L, "ec.network: layer %d: must be a table {kind, fields...}", (int)b->n + 1);
        read_layer(b, lua_gettop(L), depth);
        lua_pop(L, 1);
    }
}

/* Counting the layers of a description: the tables on the path from 'layers' down (table ->
 * its depth, in the table at `seen`) and the array index taken at each depth, for a message. */
typedef struct counter {
    lua_State *L;
    int seen;
    size_t n;
    lua_Integer path[MAX_DEPTH + 2];
} counter;

/* "layers[2][3]" for the first `depth` indices of the path. */
static const char *path_text(counter *k, int depth)
{
    luaL_Buffer buf;
    luaL_buffinit(k->L, &buf);
    luaL_addstring(&buf, "layers");
    for (int d = 0; d < depth; d++) {
        lua_pushfstring(k->L, "[%I]", k->path[d]);
        luaL_addvalue(&buf);
    }
    luaL_pushresult(&buf);
    return lua_tostring(k->L, -1);
}

/* How many layers the list at idx holds, repeats' bodies included, bounded by depth and by
 * EC_NETWORK_MAX_LAYERS (a table that several repeats share counts once per place, so a few
 * tables can describe more layers than memory holds); a table that contains itself (a repeat in
 * its own body) is an error naming the place. */
static void count_layers(counter *k, int idx, int first, int depth)
{
    lua_State *L = k->L;
    luaL_checkstack(L, 8, "ec.network: layers nested too deep"); /* a slot or two a level, MAX_DEPTH levels */
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer i = first; i <= len && depth < MAX_DEPTH + 1; i++) {
        if (lua_rawgeti(L, idx, i) == LUA_TTABLE) {
            k->path[depth] = i;
            lua_pushvalue(L, -1);
            if (lua_rawget(L, k->seen) != LUA_TNIL) {
                int at = (int)lua_tointeger(L, -1);
                const char *inner = path_text(k, depth + 1);
                luaL_error(L, "ec.network: %s: a repeat that contains itself (%s is %s)", inner, inner,
                           path_text(k, at));
            }
            lua_pop(L, 1);
            if (++k->n > EC_NETWORK_MAX_LAYERS)
                luaL_error(L, "ec.network: %s: the description holds more than EC_NETWORK_MAX_LAYERS = %d layers "
                           "(repeats' bodies counted where each appears)", path_text(k, depth + 1),
                           EC_NETWORK_MAX_LAYERS);
            lua_pushvalue(L, -1);
            lua_pushinteger(L, depth + 1);
            lua_rawset(L, k->seen); /* on the path */
            count_layers(k, lua_gettop(L), 2, depth + 1);
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, k->seen); /* off the path */
        }
        lua_pop(L, 1);
    }
}

/* The head table at idx (task may come from its key in a map of heads). */
static void read_head(lua_State *L, int idx, const char *task, ec_head *h)
{
    memset(h, 0, sizeof *h);
    h->task = task;
    if (lua_rawgeti(L, idx, 1) == LUA_TSTRING) {
        builder b = {.L = L};
        snprintf(b.where, sizeof b.where, "head '%s'", task ? task : "?");
        h->kind = (ec_head_kind)choice_of(L, &b, "kind", HEAD_KINDS, lua_gettop(L));
    }
    lua_pop(L, 1);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *key = lua_tostring(L, -2);
            builder b = {.L = L};
            snprintf(b.where, sizeof b.where, "head '%s'", task ? task : "?");
            if (strcmp(key, "task") == 0 && lua_type(L, -1) == LUA_TSTRING)
                h->task = lua_tostring(L, -1); /* kept alive by the heads table */
            else if (strcmp(key, "kind") == 0 && lua_type(L, -1) == LUA_TSTRING)
                h->kind = (ec_head_kind)choice_of(L, &b, "kind", HEAD_KINDS, lua_gettop(L));
            else if (strcmp(key, "classes") == 0 && lua_isinteger(L, -1))
                h->classes = (int64_t)lua_tointeger(L, -1);
            else if (strcmp(key, "transform") == 0 && lua_isinteger(L, -1))
                h->transform = (int64_t)lua_tointeger(L, -1);
            else if (strcmp(key, "pooler") == 0 && lua_isboolean(L, -1))
                h->pooler = lua_toboolean(L, -1);
            else if (strcmp(key, "tied") == 0 && lua_isboolean(L, -1))
                h->tied = lua_toboolean(L, -1);
            else if (strcmp(key, "bias") == 0 && lua_isboolean(L, -1))
                h->bias = lua_toboolean(L, -1);
            else if (strcmp(key, "pool") == 0 && lua_isboolean(L, -1))
                h->pool = lua_toboolean(L, -1);
            else if (strcmp(key, "fused_loss") == 0 && lua_isboolean(L, -1))
                h->fused_loss = lua_toboolean(L, -1);
            else if (strcmp(key, "metric_losses") == 0 && lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0 &&
                     lua_tointeger(L, -1) <= 16)
                h->metric_losses = (int)lua_tointeger(L, -1);
            else
                luaL_error(L, "ec.network: %s: unknown field '%s' or wrong type (task and kind: names; classes, "
                           "transform and metric_losses (0..16): integers; pooler, tied, bias, pool, fused_loss: "
                           "booleans)", b.where, key);
        }
        lua_pop(L, 1);
    }
    if (h->task == NULL)
        luaL_error(L, "ec.network: a head needs a task (heads = {{task = \"lm\", kind = \"causal_lm\"}, ...})");
}

/* The heads: an array of head tables with task=, or a map task -> head (sorted by task). */
static size_t read_heads(lua_State *L, int idx, ec_head *heads, size_t max)
{
    size_t n = 0;
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len > 0) {
        for (lua_Integer i = 1; i <= len; i++) {
            if (n == max)
                luaL_error(L, "ec.network: more than %d heads", (int)max);
            if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
                luaL_error(L, "ec.network: head %d must be a table", (int)i);
            read_head(L, lua_gettop(L), NULL, &heads[n++]);
            lua_pop(L, 1);
        }
        return n;
    }
    const char *tasks[16];
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TTABLE)
            luaL_error(L, "ec.network: heads must be a list of head tables or a map task -> head table");
        if (n == max || n == sizeof tasks / sizeof tasks[0])
            luaL_error(L, "ec.network: more than %d heads", (int)max);
        tasks[n++] = lua_tostring(L, -2);
        lua_pop(L, 1);
    }
    for (size_t i = 1; i < n; i++) /* deterministic order */
        for (size_t j = i; j > 0 && strcmp(tasks[j - 1], tasks[j]) > 0; j--) {
            const char *t = tasks[j];
            tasks[j] = tasks[j - 1];
            tasks[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        lua_getfield(L, idx, tasks[i]);
        read_head(L, lua_gettop(L), tasks[i], &heads[i]);
        lua_pop(L, 1);
    }
    return n;
}

static const char *opt_string(lua_State *L, int idx, const char *key)
{
    int t = lua_getfield(L, idx, key);
    const char *s = t == LUA_TSTRING ? lua_tostring(L, -1) : NULL; /* the network table keeps it */
    if (t != LUA_TNIL && t != LUA_TSTRING)
        luaL_error(L, "ec.network: '%s' must be a string", key);
    lua_pop(L, 1);
    return s;
}

static lua_Integer opt_integer(lua_State *L, int idx, const char *key, lua_Integer def)
{
    int t = lua_getfield(L, idx, key);
    if (t != LUA_TNIL && !lua_isinteger(L, -1))
        luaL_error(L, "ec.network: '%s' must be an integer", key);
    lua_Integer v = t == LUA_TNIL ? def : lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (v < 0 || v > 2147483647)
        luaL_error(L, "ec.network: '%s' is out of range", key);
    return v;
}

static const char *const NET_KEYS[] = {"id", "family", "layers", "heads", "default_task", "default_seq_len",
                                       "max_positions", "image_size", "image_channels", "loss_in_forward",
                                       "attention", "published_params", "published_task", "source", NULL};

/* ec.network(def) -> id | nil, msg, code */
static int l_network_define(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        int known = 0;
        for (int i = 0; lua_type(L, -2) == LUA_TSTRING && NET_KEYS[i] != NULL; i++)
            known |= strcmp(lua_tostring(L, -2), NET_KEYS[i]) == 0;
        if (!known)
            luaL_error(L, "ec.network: unknown key '%s' (id, family, layers, heads, default_task, default_seq_len, "
                       "max_positions, image_size, image_channels, loss_in_forward, attention, published_params, "
                       "published_task, source)", lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?");
        lua_pop(L, 1);
    }
    ec_network_def def = {0};
    def.id = opt_string(L, 1, "id");
    if (def.id == NULL)
        luaL_error(L, "ec.network: 'id' (the name model= will accept) is required");
    def.family = opt_string(L, 1, "family");
    def.default_task = opt_string(L, 1, "default_task");
    def.published_task = opt_string(L, 1, "published_task");
    def.source = opt_string(L, 1, "source");
    def.default_seq_len = (int)opt_integer(L, 1, "default_seq_len", 0);
    def.max_positions = (int)opt_integer(L, 1, "max_positions", 0);
    def.image_size = (int)opt_integer(L, 1, "image_size", 0);
    def.image_channels = (int)opt_integer(L, 1, "image_channels", 0);
    lua_getfield(L, 1, "loss_in_forward");
    def.loss_in_forward = lua_isnil(L, -1) ? 1 : lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "published_params") != LUA_TNIL) {
        if (!lua_isnumber(L, -1))
            luaL_error(L, "ec.network: 'published_params' must be a number");
        def.published_params = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "attention") != LUA_TNIL) {
        builder b = {.L = L};
        snprintf(b.where, sizeof b.where, "network");
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "ec.network: 'attention' must be a name (config, fused, eager)");
        def.attention = (ec_attention_impl)choice_of(L, &b, "attention", ATTENTION_IMPLS, lua_gettop(L));
    }
    lua_pop(L, 1);

    if (lua_getfield(L, 1, "layers") != LUA_TTABLE)
        luaL_error(L, "ec.network: 'layers' must be a list of layer tables");
    int layers_idx = lua_gettop(L);
    lua_newtable(L); /* the tables on the path being counted */
    counter k = {.L = L, .seen = lua_gettop(L)};
    lua_pushvalue(L, layers_idx);
    lua_pushinteger(L, 0);
    lua_rawset(L, k.seen);
    count_layers(&k, layers_idx, 1, 0);
    builder b = {.L = L};
    b.cap = k.n;
    if (b.cap == 0)
        luaL_error(L, "ec.network: 'layers' is empty");
    b.layers = lua_newuserdatauv(L, b.cap * sizeof *b.layers, 0); /* collected with the stack on error */
    read_list(&b, layers_idx, 1, 0);
    def.layers = b.layers;
    def.n_layers = b.n;

    if (lua_getfield(L, 1, "heads") != LUA_TTABLE)
        luaL_error(L, "ec.network: 'heads' must list at least one head ({task = \"lm\", kind = \"causal_lm\"})");
    ec_head heads[16];
    def.n_heads = read_heads(L, lua_gettop(L), heads, sizeof heads / sizeof heads[0]);
    def.heads = heads;
    int st = ec_network_define(ctx, &def);
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_pushstring(L, def.id);
    return 1;
}

static const luaL_Reg network_funcs[] = {
    {"network", l_network_define},
    {NULL, NULL},
};

int ecL_open_network(lua_State *L)
{
    luaL_setfuncs(L, network_funcs, 1);
    return 0;
}
