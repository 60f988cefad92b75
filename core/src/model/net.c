/*
 * net.c: the networks a context knows.  Presets are rows of models/networks.csv (id, the
 * config file in models/networks/ that holds its shapes, default task and sequence length,
 * the published parameter count and its source); each config goes through hfconfig.c and
 * arch.c into a description.  ec_network_define registers a description made by a program
 * (or by Lua's ec.network{}), and model=PATH reads a Hugging Face config.json once per
 * context.  Every description is checked field by field and expanded once on a short sample
 * (workload.c), so a network that cannot be priced fails when it is registered.
 */
#include "catalog/arch.h"
#include "model/workload.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- checking a description ---------------------------------------------------------------- */
/* Limits that rule out absurd dimensions (and overflow in products of them); a network near
 * them is far beyond anything trained. */
#define LIM_WIDTH (1LL << 20)
#define LIM_FFN (1LL << 24)
#define LIM_VOCAB (1LL << 26)
#define LIM_POS (1LL << 24)
#define LIM_HEADS (1 << 14)
#define LIM_EXPERTS (1 << 16)
#define LIM_TIMES 100000
#define LIM_METRIC_LOSSES 16 /* a head's metric cross-entropies (Composer computes 2); ec.network's bound */

typedef struct checker {
    ec_ctx *ctx;
    const char *id;
    int rc;
} checker;

static void bad(checker *c, size_t i, const ec_layer *l, const char *field, long long v, const char *rule)
{
    if (c->rc == EC_OK)
        c->rc = eci_error(c->ctx, EC_EINVAL, "network '%s': layer %zu (%s): field '%s' = %lld %s", c->id, i + 1,
                          ec_layer_kind_name(l->kind), field, v, rule);
}

#define RANGE(field, v, lo, hi)                                                       \
    do {                                                                              \
        long long v_ = (long long)(v);                                                \
        if (v_ < (long long)(lo) || v_ > (long long)(hi)) {                           \
            char r_[64];                                                              \
            snprintf(r_, sizeof r_, "is out of range [%lld, %lld]", (long long)(lo), (long long)(hi)); \
            bad(c, i, l, field, v_, r_);                                              \
        }                                                                             \
    } while (0)

/* The fields of one layer kind, each in its range (RANGE reads c, i and l); check_layer runs the
 * one of the layer's kind and checks the small kinds itself. */
static void check_embedding(checker *c, size_t i, const ec_layer *l)
{
    const ec_embedding_layer *e = &l->u.embedding;
    RANGE("vocab", e->vocab, 1, LIM_VOCAB);
    RANGE("dim", e->dim, 1, LIM_WIDTH);
    RANGE("positions", e->positions, 0, LIM_POS);
    RANGE("type_vocab", e->type_vocab, 0, 1 << 16);
    RANGE("fused", e->fused, 0, 1);
    RANGE("scale", e->scale, 0, 1);
    RANGE("shared", e->shared, 0, 1);
    RANGE("idle_params", e->idle_params, 0, (long long)EC_NETWORK_MAX_PARAMS);
}

static void check_conv2d(checker *c, size_t i, const ec_layer *l)
{
    const ec_conv2d_layer *v = &l->u.conv2d;
    RANGE("out", v->out, 1, LIM_WIDTH);
    RANGE("kernel", v->kernel, 1, 1024);
    RANGE("stride", v->stride, 0, 1024);
    RANGE("padding", v->padding, -1, 1024);
    RANGE("groups", v->groups, 0, v->out);
    RANGE("bias", v->bias, 0, 1);
    if (v->groups > 1 && v->out % v->groups != 0)
        bad(c, i, l, "groups", v->groups, "must divide out");
}

static void check_attention(checker *c, size_t i, const ec_layer *l)
{
    const ec_attention_layer *a = &l->u.attention;
    RANGE("heads", a->heads, 1, LIM_HEADS);
    RANGE("kv_heads", a->kv_heads, 0, a->heads > 0 ? a->heads : 1);
    if (a->kv_heads > 0 && a->heads % a->kv_heads != 0)
        bad(c, i, l, "kv_heads", a->kv_heads, "must divide heads");
    RANGE("head_dim", a->head_dim, 0, 1 << 16);
    RANGE("position", a->position, EC_POS_NONE, EC_POS_RELATIVE);
    RANGE("window", a->window, 0, LIM_POS);
    RANGE("rel_buckets", a->rel_buckets, 0, 1 << 16);
    RANGE("relative_span", a->relative_span, 0, LIM_POS);
    RANGE("causal", a->causal, 0, 1);
    RANGE("cross", a->cross, 0, 1);
    RANGE("qkv_fused", a->qkv_fused, 0, 1);
    RANGE("qkv_bias", a->qkv_bias, 0, 1);
    RANGE("out_bias", a->out_bias, 0, 1);
    RANGE("dropout", a->dropout, 0, 1);
    RANGE("qk_norm", a->qk_norm, 0, 1);
    RANGE("softcap", a->softcap, 0, 1);
    RANGE("q_rank", a->q_rank, 0, 1 << 20);
    RANGE("kv_rank", a->kv_rank, 0, 1 << 20);
    RANGE("rope_dim", a->rope_dim, 0, a->kv_rank > 0 && a->head_dim > 0 ? a->head_dim : 0);
    RANGE("v_head_dim", a->v_head_dim, 0, 1 << 16);
    RANGE("sinks", a->sinks, 0, 1);
    if (a->kv_rank > 0 && (a->head_dim < 1 || a->cross))
        bad(c, i, l, "kv_rank", a->kv_rank, "needs head_dim and self-attention (latent attention)");
    if (a->q_rank > 0 && a->kv_rank == 0)
        bad(c, i, l, "q_rank", a->q_rank, "needs kv_rank (latent attention)");
}

static void check_moe(checker *c, size_t i, const ec_layer *l)
{
    const ec_moe_layer *m = &l->u.moe;
    RANGE("experts", m->experts, 1, LIM_EXPERTS);
    RANGE("top_k", m->top_k, 1, m->experts > 0 ? m->experts : 1);
    RANGE("ffn", m->ffn, 1, LIM_FFN);
    RANGE("act", m->act, EC_ACT_GELU, EC_ACT_GELU_PYTHON);
    RANGE("gated", m->gated, 0, 1);
    RANGE("shared_experts", m->shared_experts, 0, 1024);
    RANGE("shared_ffn", m->shared_ffn, m->shared_experts > 0 ? 1 : 0, LIM_FFN);
    RANGE("shared_gate", m->shared_gate, 0, 1);
    RANGE("bias", m->bias, 0, 1);
}

static void check_layer(checker *c, size_t i, const ec_layer *l, size_t n)
{
    RANGE("on_skip", l->on_skip, 0, 1);
    switch (l->kind) {
    case EC_LAYER_EMBEDDING:
        check_embedding(c, i, l);
        break;
    case EC_LAYER_PATCHES:
        RANGE("cls_tokens", l->u.patches.cls_tokens, 0, 64);
        RANGE("positions", l->u.patches.positions, 0, 1);
        break;
    case EC_LAYER_LINEAR:
        RANGE("out", l->u.linear.out, 1, LIM_VOCAB);
        RANGE("bias", l->u.linear.bias, 0, 1);
        break;
    case EC_LAYER_CONV2D:
        check_conv2d(c, i, l);
        break;
    case EC_LAYER_NORM:
        RANGE("kind", l->u.norm.kind, EC_NORM_LAYER, EC_NORM_BATCH);
        RANGE("bias", l->u.norm.bias, 0, 1);
        break;
    case EC_LAYER_ATTENTION:
        check_attention(c, i, l);
        break;
    case EC_LAYER_MLP:
        RANGE("ffn", l->u.mlp.ffn, 1, LIM_FFN);
        RANGE("act", l->u.mlp.act, EC_ACT_GELU, EC_ACT_GELU_PYTHON);
        RANGE("gated", l->u.mlp.gated, 0, 1);
        RANGE("bias", l->u.mlp.bias, 0, 1);
        RANGE("dropout", l->u.mlp.dropout, 0, 1);
        break;
    case EC_LAYER_MOE:
        check_moe(c, i, l);
        break;
    case EC_LAYER_ACTIVATION:
        RANGE("act", l->u.activation.act, EC_ACT_GELU, EC_ACT_GELU_PYTHON);
        break;
    case EC_LAYER_RESIDUAL:
        RANGE("op", l->u.residual.op, EC_RESIDUAL_SAVE, EC_RESIDUAL_ADD_RELU);
        break;
    case EC_LAYER_POOL:
        RANGE("kind", l->u.pool.kind, EC_POOL_MAX, EC_POOL_AVG_GLOBAL);
        if (l->u.pool.kind == EC_POOL_MAX) {
            RANGE("kernel", l->u.pool.kernel, 1, 1024);
            RANGE("stride", l->u.pool.stride, 0, 1024);
            RANGE("padding", l->u.pool.padding, 0, l->u.pool.kernel > 0 ? l->u.pool.kernel - 1 : 0);
        }
        break;
    case EC_LAYER_REPEAT:
        RANGE("times", l->u.repeat.times, 1, LIM_TIMES);
        RANGE("layers", l->u.repeat.layers, 1, (long long)(n - i - 1));
        RANGE("shared_params", l->u.repeat.shared_params, 0, 1);
        RANGE("checkpoint", l->u.repeat.checkpoint, 0, 1);
        break;
    case EC_LAYER_DROPOUT:
    case EC_LAYER_DECODER:
        break;
    default:
        if (c->rc == EC_OK)
            c->rc = eci_error(c->ctx, EC_EINVAL, "network '%s': layer %zu: unknown kind %d (embedding, patches, "
                              "linear, conv2d, norm, attention, mlp, moe, activation, dropout, residual, pool, "
                              "repeat, decoder)", c->id, i + 1, (int)l->kind);
    }
}

/* A nested REPEAT must end inside the block that holds it; and the description as a whole stays
 * inside EC_NETWORK_MAX_LAYERS (layers held once the repeats inside a repeat are unrolled, as
 * workload_layers.c expands them) and EC_NETWORK_MAX_STEP_LAYERS (every repeat multiplied out):
 * nested repeats multiply, so a description of a few entries could otherwise ask for 10^20
 * layers.  Products in doubles: they cannot overflow before the bound stops them. */
static void check_nesting(checker *c, const ec_layer *layers, size_t n)
{
    size_t ends[64];
    double held_mult[64], step_mult[64]; /* the products of the enclosing repeats' times */
    double held = 0, step = 0;
    int depth = 0;
    for (size_t i = 0; i < n && c->rc == EC_OK; i++) {
        while (depth > 0 && i >= ends[depth - 1])
            depth--;
        const ec_layer *l = &layers[i];
        if (l->kind == EC_LAYER_DECODER && depth > 0)
            bad(c, i, l, "depth", depth, "(a decoder cannot start inside a repeat)");
        double held_here = depth > 1 ? held_mult[depth - 1] : 1, step_here = depth > 0 ? step_mult[depth - 1] : 1;
        held += held_here;
        step += step_here;
        if (held > EC_NETWORK_MAX_LAYERS || step > EC_NETWORK_MAX_STEP_LAYERS) {
            c->rc = eci_error(c->ctx, EC_EINVAL, "network '%s': layer %zu (%s): the description grows past %s = %.0f "
                              "%s (nested repeats multiply their times)", c->id, i + 1,
                              ec_layer_kind_name(l->kind),
                              held > EC_NETWORK_MAX_LAYERS ? "EC_NETWORK_MAX_LAYERS" : "EC_NETWORK_MAX_STEP_LAYERS",
                              held > EC_NETWORK_MAX_LAYERS ? (double)EC_NETWORK_MAX_LAYERS
                                                           : (double)EC_NETWORK_MAX_STEP_LAYERS,
                              held > EC_NETWORK_MAX_LAYERS ? "layers held once the repeats inside a repeat are unrolled"
                                                           : "layers one step runs");
            return;
        }
        if (l->kind != EC_LAYER_REPEAT)
            continue;
        size_t end = i + 1 + (size_t)l->u.repeat.layers;
        if (depth > 0 && end > ends[depth - 1])
            bad(c, i, l, "layers", l->u.repeat.layers, "runs past the end of the repeat that holds it");
        else if (depth == (int)(sizeof ends / sizeof ends[0]))
            bad(c, i, l, "depth", depth, "(repeats nested too deep)");
        else {
            held_mult[depth] = depth > 0 ? held_here * l->u.repeat.times : 1;
            step_mult[depth] = step_here * l->u.repeat.times;
            ends[depth++] = end;
        }
    }
}

/* A name of the network that listings, messages and CSV cells show: no control characters (a
 * newline would forge a row or a line of output).  The text itself is not shown. */
static int check_name(ec_ctx *ctx, const char *key, const char *s)
{
    long at = s != NULL ? eci_control_at(s) : -1;
    if (at < 0)
        return EC_OK;
    return eci_error(ctx, EC_EINVAL, "network: key '%s' holds a control character (a newline, tab or other byte "
                     "below 0x20, DEL or U+0080..U+009F) at byte %ld: refused, since it would reach listings and "
                     "CSV cells", key, at + 1);
}

static int check_def(ec_ctx *ctx, const ec_network_def *def)
{
    if (def->id == NULL || def->id[0] == '\0' || strlen(def->id) >= EC_PATH_MAX)
        return eci_error(ctx, EC_EINVAL, "a network needs an id of 1 to %d characters", EC_PATH_MAX - 1);
    int rc = check_name(ctx, "id", def->id);
    if (rc == EC_OK)
        rc = check_name(ctx, "family", def->family);
    if (rc == EC_OK)
        rc = check_name(ctx, "default_task", def->default_task);
    if (rc == EC_OK)
        rc = check_name(ctx, "published_task", def->published_task);
    if (rc == EC_OK)
        rc = check_name(ctx, "source", def->source);
    if (rc != EC_OK)
        return rc;
    checker c = {.ctx = ctx, .id = def->id};
    if (def->n_layers < 1 || def->layers == NULL)
        return eci_error(ctx, EC_EINVAL, "network '%s': no layers", def->id);
    if (def->n_layers > EC_NETWORK_MAX_LAYERS)
        return eci_error(ctx, EC_EINVAL, "network '%s': %zu layers, over EC_NETWORK_MAX_LAYERS = %d", def->id,
                         def->n_layers, EC_NETWORK_MAX_LAYERS);
    if (def->n_heads < 1 || def->n_heads > 16 || def->heads == NULL)
        return eci_error(ctx, EC_EINVAL, "network '%s': it needs 1 to 16 heads (one per task it can train)", def->id);
    for (size_t i = 0; i < def->n_layers && c.rc == EC_OK; i++)
        check_layer(&c, i, &def->layers[i], def->n_layers);
    if (c.rc == EC_OK)
        check_nesting(&c, def->layers, def->n_layers);
    if (c.rc != EC_OK)
        return c.rc;
    for (size_t i = 0; i < def->n_heads; i++) {
        const ec_head *h = &def->heads[i];
        if (h->task == NULL || eci_task_parse(h->task) < 0)
            return eci_error(ctx, EC_EINVAL, "network '%s': head %zu: unknown task '%s' (%s)", def->id, i + 1,
                             h->task ? h->task : "", eci_task_names());
        for (size_t j = 0; j < i; j++)
            if (strcmp(def->heads[j].task, h->task) == 0)
                return eci_error(ctx, EC_EINVAL, "network '%s': two heads for task '%s'", def->id, h->task);
        if ((unsigned)h->kind > EC_HEAD_IMAGE_CLASSIFY)
            return eci_error(ctx, EC_EINVAL, "network '%s': head '%s': unknown kind %d", def->id, h->task, (int)h->kind);
        int labelled = h->kind == EC_HEAD_CLASSIFY || h->kind == EC_HEAD_TOKEN_CLASSIFY ||
                       h->kind == EC_HEAD_IMAGE_CLASSIFY;
        if (labelled && (h->classes < 1 || h->classes > (1LL << 24)))
            return eci_error(ctx, EC_EINVAL, "network '%s': head '%s': field 'classes' = %lld is out of range [1, %lld]",
                             def->id, h->task, (long long)h->classes, 1LL << 24);
        if (h->transform < 0 || h->transform > LIM_WIDTH)
            return eci_error(ctx, EC_EINVAL, "network '%s': head '%s': field 'transform' = %lld is out of range",
                             def->id, h->task, (long long)h->transform);
        const struct { const char *name; int v, hi; } f[] = {
            {"pooler", h->pooler, 1}, {"tied", h->tied, 1}, {"bias", h->bias, 1}, {"pool", h->pool, 1},
            {"fused_loss", h->fused_loss, 1}, {"metric_losses", h->metric_losses, LIM_METRIC_LOSSES},
        };
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
            if (f[k].v < 0 || f[k].v > f[k].hi)
                return eci_error(ctx, EC_EINVAL, "network '%s': head '%s': field '%s' = %d is out of range [0, %d]",
                                 def->id, h->task, f[k].name, f[k].v, f[k].hi);
    }
    int text = def->layers[0].kind == EC_LAYER_EMBEDDING;
    if (!text && (def->image_size < 1 || def->image_size > 65536))
        return eci_error(ctx, EC_EINVAL, "network '%s': a network that does not start with an embedding takes images: "
                         "image_size = %d must be in [1, 65536]", def->id, def->image_size);
    if (def->image_channels < 0 || def->image_channels > 4096 || def->default_seq_len < 0 ||
        def->default_seq_len > LIM_POS || def->max_positions < 0 || def->max_positions > LIM_POS)
        return eci_error(ctx, EC_EINVAL, "network '%s': image_channels, default_seq_len or max_positions out of range",
                         def->id);
    if (!(def->published_params >= 0 && def->published_params < 1e15))
        return eci_error(ctx, EC_EINVAL, "network '%s': published_params must be in [0, 1e15)", def->id);
    if ((unsigned)def->attention > EC_NET_ATTN_EAGER)
        return eci_error(ctx, EC_EINVAL, "network '%s': unknown attention implementation %d", def->id,
                         (int)def->attention);
    return EC_OK;
}

/* ---- the registry ------------------------------------------------------------------------------ */
static void net_release(ec_ctx *ctx, eci_net *n)
{
    if (n == NULL)
        return;
    eci_strfree(ctx, n->id);
    eci_strfree(ctx, n->family);
    eci_strfree(ctx, n->default_task);
    eci_strfree(ctx, n->source);
    eci_strfree(ctx, n->path);
    eci_strfree(ctx, n->tasks);
    eci_strfree(ctx, n->published_task);
    if (n->head_tasks != NULL)
        for (size_t i = 0; i < n->n_heads; i++)
            eci_strfree(ctx, n->head_tasks[i]);
    eci_free(ctx, n->head_tasks, n->n_heads * sizeof *n->head_tasks);
    eci_free(ctx, n->heads, n->n_heads * sizeof *n->heads);
    eci_free(ctx, n->layers, n->n_layers * sizeof *n->layers);
    eci_free(ctx, n, sizeof *n);
}

static int any_null(const eci_net *n)
{
    if (n->id == NULL || n->family == NULL || n->default_task == NULL || n->source == NULL || n->tasks == NULL ||
        n->published_task == NULL ||
        n->layers == NULL || n->heads == NULL || n->head_tasks == NULL)
        return 1;
    for (size_t i = 0; i < n->n_heads; i++)
        if (n->head_tasks[i] == NULL)
            return 1;
    return 0;
}

/* A deep copy of def (without the checks). */
static eci_net *net_copy(ec_ctx *ctx, const ec_network_def *def, const char *path)
{
    eci_net *n = eci_calloc(ctx, 1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->n_layers = def->n_layers;
    n->n_heads = def->n_heads;
    n->id = eci_strdup(ctx, def->id);
    n->family = eci_strdup(ctx, def->family != NULL ? def->family : "custom");
    n->default_task = eci_strdup(ctx, def->default_task != NULL ? def->default_task : def->heads[0].task);
    n->published_task = eci_strdup(ctx, def->published_task != NULL && def->published_task[0] != '\0'
                                             ? def->published_task : n->default_task != NULL ? n->default_task : "");
    n->source = eci_strdup(ctx, def->source != NULL ? def->source : "");
    n->path = path != NULL ? eci_strdup(ctx, path) : NULL;
    n->layers = eci_malloc(ctx, def->n_layers * sizeof *n->layers);
    n->heads = eci_malloc(ctx, def->n_heads * sizeof *n->heads);
    n->head_tasks = eci_calloc(ctx, def->n_heads, sizeof *n->head_tasks);
    char tasks[256] = "";
    for (size_t i = 0; n->heads != NULL && n->head_tasks != NULL && i < def->n_heads; i++) {
        n->heads[i] = def->heads[i];
        n->head_tasks[i] = eci_strdup(ctx, def->heads[i].task);
        n->heads[i].task = n->head_tasks[i];
        size_t len = strlen(tasks);
        snprintf(tasks + len, sizeof tasks - len, "%s%s", len ? ", " : "", def->heads[i].task);
    }
    n->tasks = eci_strdup(ctx, tasks);
    if (n->layers != NULL)
        memcpy(n->layers, def->layers, def->n_layers * sizeof *n->layers);
    if (any_null(n) || (path != NULL && n->path == NULL)) {
        net_release(ctx, n);
        return NULL;
    }
    n->text = def->layers[0].kind == EC_LAYER_EMBEDDING;
    int conv = 0, token = 0;
    for (size_t i = 0; i < def->n_layers; i++) {
        int k = (int)def->layers[i].kind;
        n->encdec |= k == EC_LAYER_DECODER;
        conv |= k == EC_LAYER_CONV2D;
        n->mlp |= k == EC_LAYER_MLP || k == EC_LAYER_MOE;
        token |= k == EC_LAYER_ATTENTION || k == EC_LAYER_MLP || k == EC_LAYER_MOE || k == EC_LAYER_PATCHES;
    }
    n->cnn = conv && !token;
    n->default_seq_len = n->text ? (def->default_seq_len > 0 ? def->default_seq_len : 512) : 0;
    n->max_positions = def->max_positions;
    n->image_size = n->text ? 0 : def->image_size;
    n->image_channels = n->text ? 0 : (def->image_channels > 0 ? def->image_channels : 3);
    n->loss_in_forward = def->loss_in_forward != 0;
    n->attention = def->attention;
    n->published_params = def->published_params;
    n->listed = 1;
    return n;
}

/* What one expansion adds up to against the bounds on the whole description: kernels a forward
 * pass launches (each block's ops times its repetitions) and parameters. */
static int check_totals(ec_ctx *ctx, const eci_net *n, const eci_workload *wl)
{
    double kernels = 0;
    for (size_t i = 0; i < wl->n_ops; i++) {
        const eci_op *op = &wl->ops[i];
        double reps = op->block >= 0 ? wl->blocks[op->block].reps : 1;
        kernels += (double)op->fwd_kernels * op->count * reps;
    }
    if (kernels > EC_NETWORK_MAX_STEP_KERNELS)
        return eci_error(ctx, EC_EINVAL, "network '%s': a forward pass launches %.3g kernels, over "
                         "EC_NETWORK_MAX_STEP_KERNELS = %.0f", n->id, kernels, (double)EC_NETWORK_MAX_STEP_KERNELS);
    if (!(wl->params <= EC_NETWORK_MAX_PARAMS))
        return eci_error(ctx, EC_EINVAL, "network '%s': %.3g parameters, over EC_NETWORK_MAX_PARAMS = %.0e", n->id,
                         wl->params, EC_NETWORK_MAX_PARAMS);
    return EC_OK;
}

/* Expand every head on a short sample: shapes that do not flow fail here, and the
 * default head's parameter count is kept. */
static int trial(ec_ctx *ctx, eci_net *n)
{
    if (eci_task_parse(n->default_task) < 0 || n->default_task[0] == '\0')
        return eci_error(ctx, EC_EINVAL, "network '%s': unknown default task '%s' (%s)", n->id, n->default_task,
                         eci_task_names());
    int found = 0;
    eci_workload wl = {0};
    eci_shape sh;
    eci_shape_probe(n, &sh);
    int rc = EC_OK;
    for (size_t i = 0; i < n->n_heads && rc == EC_OK; i++) {
        int task = eci_task_parse(n->heads[i].task);
        rc = eci_workload_expand(ctx, n, task, &sh, &wl);
        if (rc == EC_OK)
            rc = check_totals(ctx, n, &wl);
        if (rc == EC_OK && strcmp(n->heads[i].task, n->default_task) == 0) {
            n->params = wl.params;
            found |= 1;
        }
        if (rc == EC_OK && strcmp(n->heads[i].task, n->published_task) == 0) {
            n->params_published = wl.params;
            found |= 2;
        }
    }
    eci_workload_release(ctx, &wl);
    if (rc == EC_OK && !(found & 1))
        rc = eci_error(ctx, EC_EINVAL, "network '%s': default task '%s' has no head (it has %s)", n->id,
                       n->default_task, n->tasks);
    if (rc == EC_OK && !(found & 2))
        rc = eci_error(ctx, EC_EINVAL, "network '%s': published_task '%s' has no head (it has %s)", n->id,
                       n->published_task, n->tasks);
    return rc;
}

/* The index of the network named exactly id (presets, defined networks, paths read before),
 * n_nets when there is none. */
static size_t lookup(const ec_ctx *ctx, const char *id)
{
    size_t i = 0;
    while (i < ctx->n_nets && strcmp(ctx->nets[i]->id, id) != 0)
        i++;
    return i;
}

int eci_net_add(ec_ctx *ctx, const ec_network_def *def, int listed, const char *path, const eci_net **out)
{
    if (out != NULL)
        *out = NULL;
    int rc = check_def(ctx, def);
    if (rc != EC_OK)
        return rc;
    if (lookup(ctx, def->id) < ctx->n_nets)
        return eci_error(ctx, EC_EINVAL, "network '%s' is already defined", def->id);
    if (ctx->n_nets == ctx->cap_nets) {
        size_t cap = ctx->cap_nets ? 2 * ctx->cap_nets : 64;
        eci_net **grown = eci_realloc(ctx, ctx->nets, ctx->cap_nets * sizeof *grown, cap * sizeof *grown);
        if (grown == NULL)
            return EC_ENOMEM;
        ctx->nets = grown;
        ctx->cap_nets = cap;
    }
    eci_net *n = net_copy(ctx, def, path);
    if (n == NULL)
        return EC_ENOMEM;
    n->listed = listed;
    if ((rc = trial(ctx, n)) != EC_OK) {
        net_release(ctx, n);
        return rc;
    }
    ctx->nets[ctx->n_nets++] = n;
    if (out != NULL)
        *out = n;
    return EC_OK;
}

/* Register the network of one config file under id (a preset row, or model=PATH). */
static int add_config(ec_ctx *ctx, const char *id, const char *file, const eci_arch *arch_in, int listed,
                      double published, const char *published_task, const char *source, const eci_net **out)
{
    eci_desc d;
    ec_network_def def;
    int rc = eci_arch_build(ctx, arch_in, id, &d, &def);
    if (rc != EC_OK)
        return rc;
    def.published_params = published;
    def.published_task = published_task;
    def.source = source;
    rc = eci_net_add(ctx, &def, listed, listed ? NULL : file, out);
    eci_desc_free(&d);
    return rc;
}

/* ---- models/networks.csv ------------------------------------------------------------------- */
typedef struct preset_row {
    char *id, *config, *default_task, *published_task, *source;
    int default_seq_len;
    double published_params;
} preset_row;

#define P(col, kind, field, lo, hi) {col, kind, offsetof(preset_row, field), lo, hi}
static const eci_field preset_fields[] = {
    P("id", ECI_F_STR, id, 0, 0),
    P("config", ECI_F_STR, config, 0, 0),
    P("default_task", ECI_F_STR, default_task, 0, 0),
    P("default_seq_len", ECI_F_INT, default_seq_len, 0, 1 << 24),
    P("published_params", ECI_F_DOUBLE, published_params, 1, 1e13),
    P("published_task", ECI_F_STR, published_task, 0, 0),
    P("source", ECI_F_STR, source, 0, 0),
};
#undef P
#define N_PRESET_FIELDS (sizeof preset_fields / sizeof preset_fields[0])

int eci_net_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, preset_fields, N_PRESET_FIELDS, sizeof(preset_row), &rows, &n);
    if (rc != EC_OK)
        return rc;
    const char *slash = strrchr(path, '/');
    int dir_len = slash != NULL ? (int)(slash - path) : 1;
    const char *dir = slash != NULL ? path : ".";
    const preset_row *pr = rows;
    for (size_t i = 0; i < n && rc == EC_OK; i++) {
        char file[EC_PATH_MAX + 64];
        eci_arch a;
        int len = snprintf(file, sizeof file, "%.*s/%s", dir_len, dir, pr[i].config);
        if (len < 0 || (size_t)len >= sizeof file) {
            rc = eci_error(ctx, EC_EINVAL, "%s: network '%s': config path too long", path, pr[i].id);
            break;
        }
        if ((rc = eci_hf_load(ctx, file, &a)) == EC_OK) {
            if (pr[i].default_task[0] != '\0')
                eci_strlcpy(a.default_task, pr[i].default_task, sizeof a.default_task);
            if (pr[i].default_seq_len > 0)
                a.default_seq_len = pr[i].default_seq_len;
            rc = add_config(ctx, pr[i].id, file, &a, 1, pr[i].published_params, pr[i].published_task,
                            pr[i].source, NULL);
        }
        if (rc != EC_OK && rc != EC_ENOMEM) { /* a preset that does not build: a bad data file */
            char msg[EC_ERRMSG_MAX];
            eci_strlcpy(msg, ec_ctx_errmsg(ctx), sizeof msg);
            rc = eci_error(ctx, rc == EC_EIO ? EC_EIO : EC_EPARSE, "%s: preset '%s' (config %s): %s", path, pr[i].id,
                           pr[i].config, msg);
        }
    }
    eci_rows_free(ctx, preset_fields, N_PRESET_FIELDS, sizeof(preset_row), rows, n);
    if (rc != EC_OK)
        eci_net_free(ctx);
    return rc;
}

void eci_net_free(ec_ctx *ctx)
{
    for (size_t i = 0; i < ctx->n_nets; i++)
        net_release(ctx, ctx->nets[i]);
    eci_free(ctx, ctx->nets, ctx->cap_nets * sizeof *ctx->nets);
    ctx->nets = NULL;
    ctx->n_nets = ctx->cap_nets = 0;
}

/* The presets come first in both contexts (ec_ctx_load_models reads networks.csv before
 * anything can be defined), so src's networks after dst's presets are the defined ones and the
 * config.json paths src has read. */
int eci_net_copy_defined(ec_ctx *dst, const ec_ctx *src)
{
    size_t presets = dst->n_nets;
    for (size_t i = 0; i < presets && i < src->n_nets; i++)
        if (strcmp(src->nets[i]->id, dst->nets[i]->id) != 0)
            return eci_error(dst, EC_EINVAL, "models folder changed since it was first loaded: preset %zu is '%s', "
                             "was '%s'", i + 1, dst->nets[i]->id, src->nets[i]->id);
    for (size_t i = presets; i < src->n_nets; i++) {
        const eci_net *n = src->nets[i];
        if (!n->listed || n->path != NULL)
            continue; /* a config.json: read again when dst's configs name it */
        ec_network_def def = {
            .id = n->id, .family = n->family, .layers = n->layers, .n_layers = n->n_layers,
            .heads = n->heads, .n_heads = n->n_heads, .default_task = n->default_task,
            .default_seq_len = n->default_seq_len, .max_positions = n->max_positions,
            .image_size = n->image_size, .image_channels = n->image_channels,
            .loss_in_forward = n->loss_in_forward, .attention = (ec_attention_impl)n->attention,
            .published_params = n->published_params, .published_task = n->published_task,
            .source = n->source,
        };
        int rc = eci_net_add(dst, &def, 1, NULL, NULL);
        if (rc != EC_OK)
            return rc;
    }
    return EC_OK;
}

/* ---- finding a network ---------------------------------------------------------------------- */
static int looks_like_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') != NULL || (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

/* model=owner/name, no path here: the listed preset its name matches (hfid.c). */
static const eci_net *from_hf_id(ec_ctx *ctx, const char *name, int *rc)
{
    enum { MAXN = 256 };
    const char *ids[MAXN];
    size_t n = 0;
    for (size_t i = 0; i < ctx->n_nets && n < MAXN; i++)
        if (ctx->nets[i]->listed && ctx->nets[i]->path == NULL)
            ids[n++] = ctx->nets[i]->id;
    const char *id = eci_hf_id_preset(name, ids, n);
    if (id == NULL) {
        *rc = eci_hf_id_error(ctx, name);
        return NULL;
    }
    return eci_net_find_rc(ctx, id, rc);
}

/* model=PATH: a config.json, or a folder holding one (a Hugging Face checkpoint folder). */
static const eci_net *from_path(ec_ctx *ctx, const char *name, int *rc)
{
    char file[EC_PATH_MAX + 16];
    struct stat st;
    if (stat(name, &st) != 0) {
        if (errno == ENOENT && eci_hf_id_like(name)) /* owner/name: a Hugging Face id */
            return from_hf_id(ctx, name, rc);
        *rc = eci_error(ctx, EC_ENOTFOUND, "model '%s': cannot open: %s (a preset id, a config.json or a folder "
                        "holding one; `epochcast models` lists the presets)", name, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode))
        snprintf(file, sizeof file, "%s/config.json", name);
    else if (S_ISREG(st.st_mode))
        snprintf(file, sizeof file, "%s", name);
    else {
        *rc = eci_error(ctx, EC_EINVAL, "model '%s': not a regular file or a folder", name);
        return NULL;
    }
    if (stat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
        *rc = eci_error(ctx, EC_ENOTFOUND, "model '%s': %s is not a readable file", name, file);
        return NULL;
    }
    eci_arch a;
    const eci_net *net = NULL;
    if ((*rc = eci_hf_load(ctx, file, &a)) == EC_OK)
        *rc = add_config(ctx, name, file, &a, 0, 0, NULL, file, &net);
    return net;
}

const eci_net *eci_net_find(ec_ctx *ctx, const char *name)
{
    int rc;
    return eci_net_find_rc(ctx, name, &rc);
}

const eci_net *eci_net_find_rc(ec_ctx *ctx, const char *name, int *rc)
{
    *rc = EC_OK;
    enum { MAXN = 256 };
    const char *ids[MAXN];
    size_t last = ctx->net_found; /* any index: checked against n_nets and the id itself */
    if (last < ctx->n_nets && strcmp(ctx->nets[last]->id, name) == 0)
        return ctx->nets[last];
    size_t exact = lookup(ctx, name);
    if (exact < ctx->n_nets) {
        ctx->net_found = exact;
        return ctx->nets[exact];
    }
    for (size_t i = 0; i < ctx->n_nets; i++)
        if (ctx->nets[i]->listed && eci_name_eq(ctx->nets[i]->id, name))
            return ctx->nets[i];
    if (looks_like_path(name))
        return from_path(ctx, name, rc);
    size_t n = 0;
    for (size_t i = 0; i < ctx->n_nets && n < MAXN; i++)
        if (ctx->nets[i]->listed)
            ids[n++] = ctx->nets[i]->id;
    const char *near = eci_nearest(name, ids, n);
    *rc = eci_error(ctx, EC_ENOTFOUND, "unknown model '%s' (did you mean '%s'? `epochcast models` lists the presets; a "
              "config.json path works too)", name, near ? near : "");
    return NULL;
}

/* ---- public API -------------------------------------------------------------------------------- */
const char *ec_model_types(void)
{
    return eci_hf_supported();
}

int ec_network_define(ec_ctx *ctx, const ec_network_def *def)
{
    if (ctx == NULL)
        return EC_EMISUSE;
    if (def == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_network_define: NULL definition");
    if (!ctx->models_loaded)
        return eci_error(ctx, EC_EMISUSE, "models are not loaded: call ec_ctx_load_models first");
    return eci_net_add(ctx, def, 1, NULL, NULL);
}

static void info_of(const eci_net *net, ec_model_info *out)
{
    out->id = net->id;
    out->family = net->family;
    out->default_task = net->default_task;
    out->params = net->params;
    out->default_seq_len = net->default_seq_len;
    out->default_image_size = net->image_size;
    out->published_params = net->published_params;
    out->published_task = net->published_task;
    out->published_task_params = net->params_published;
    out->source = net->source;
    out->tasks = net->tasks;
}

size_t ec_model_count(const ec_ctx *ctx)
{
    size_t n = 0;
    for (size_t i = 0; ctx != NULL && i < ctx->n_nets; i++)
        n += ctx->nets[i]->listed;
    return n;
}

int ec_model_get(const ec_ctx *ctx, size_t i, ec_model_info *out)
{
    if (ctx == NULL || out == NULL)
        return EC_EINVAL;
    for (size_t k = 0; k < ctx->n_nets; k++)
        if (ctx->nets[k]->listed && i-- == 0) {
            info_of(ctx->nets[k], out);
            return EC_OK;
        }
    return EC_EINVAL;
}

int ec_model_find(ec_ctx *ctx, const char *model, ec_model_info *out)
{
    if (ctx == NULL || model == NULL || out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_model_find: NULL argument") : EC_EMISUSE;
    int rc;
    const eci_net *net = eci_net_find_rc(ctx, model, &rc);
    if (net == NULL)
        return rc;
    info_of(net, out);
    return EC_OK;
}

int ec_model_params(ec_ctx *ctx, const char *model, const char *task, double *params)
{
    if (ctx == NULL || model == NULL || params == NULL)
        return EC_EMISUSE;
    int rc;
    const eci_net *net = eci_net_find_rc(ctx, model, &rc);
    if (net == NULL)
        return rc;
    int t = eci_task_parse(task != NULL && task[0] != '\0' ? task : net->default_task);
    if (t < 0)
        return eci_error(ctx, EC_ENOTFOUND, "unknown task '%s' (%s)", task, eci_task_names());
    eci_workload wl = {0};
    eci_shape sh;
    eci_shape_probe(net, &sh);
    rc = eci_workload_expand(ctx, net, t, &sh, &wl);
    *params = rc == EC_OK ? wl.params : 0;
    eci_workload_release(ctx, &wl);
    return rc;
}
