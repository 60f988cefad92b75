/*
 * net.c: network presets, one row of models/networks.csv each (layers, hidden size, heads,
 * FFN size, vocabulary, ResNet stage blocks, published parameter count and its source, and
 * whether its forward returns the loss, which decides what DataParallel gathers).
 * The op lists built from a preset live in workload.c.
 */
#include "internal.h"
#include "workload.h"

#include <stddef.h>
#include <string.h>

#define N(col, kind, field, lo, hi) {col, kind, offsetof(eci_net, field), lo, hi}
static const eci_field net_fields[] = {
    N("id", ECI_F_STR, id, 0, 0),
    N("family", ECI_F_STR, family, 0, 0),
    N("default_task", ECI_F_STR, default_task, 0, 0),
    N("layers", ECI_F_INT, layers, 0, 1000),
    N("hidden", ECI_F_INT, hidden, 0, 1 << 20),
    N("heads", ECI_F_INT, heads, 0, 4096),
    N("ffn", ECI_F_INT, ffn, 0, 1 << 22),
    N("vocab", ECI_F_INT, vocab, 0, 1 << 24),
    N("max_positions", ECI_F_INT, max_positions, 0, 1 << 24),
    N("type_vocab", ECI_F_INT, type_vocab, 0, 1024),
    N("default_seq_len", ECI_F_INT, default_seq_len, 0, 1 << 24),
    N("image_size", ECI_F_INT, image_size, 0, 65536),
    N("patch", ECI_F_INT, patch, 0, 4096),
    N("num_classes", ECI_F_INT, num_classes, 0, 1 << 24),
    N("blocks", ECI_F_STR, blocks, 0, 0),
    N("published_params", ECI_F_DOUBLE, published_params, 1, 1e13),
    N("loss_in_forward", ECI_F_INT, loss_in_forward, 0, 1),
    N("source", ECI_F_STR, source, 0, 0),
};
#undef N
#define N_NET_FIELDS (sizeof net_fields / sizeof net_fields[0])

static const char *const families[] = {"encoder", "distil", "decoder", "resnet", "vit"};

/* ResNet stage depths: 1 to 4 ';'-separated integers in [1, 64] ("3;4;6;3"). */
static int blocks_valid(const char *s)
{
    int stages = 0;
    for (const char *p = s;; p++) {
        long v = 0;
        int digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 3)
            v = v * 10 + (*p++ - '0'), digits++;
        if (digits == 0 || v < 1 || v > 64 || ++stages > 4)
            return 0;
        if (*p == '\0')
            return 1;
        if (*p != ';')
            return 0;
    }
}

/* Shape checks the column ranges cannot express: a zero that the workload would divide
 * by, heads that do not divide the hidden size, a patch larger than the image. */
static int check_net(ec_ctx *ctx, const char *path, const eci_net *net)
{
    const char *why = NULL;
    int vision = strcmp(net->family, "resnet") == 0 || strcmp(net->family, "vit") == 0;
    if (strcmp(net->family, "resnet") != 0) {
        if (net->layers < 1 || net->hidden < 1 || net->heads < 1 || net->ffn < 1)
            why = "layers, hidden, heads and ffn must be >= 1";
        else if (net->hidden % net->heads != 0)
            why = "heads must divide hidden";
    } else if (!blocks_valid(net->blocks)) {
        why = "blocks must be 1 to 4 ';'-separated stage depths in [1, 64]";
    }
    if (why == NULL && !vision && (net->vocab < 1 || net->max_positions < 1 || net->default_seq_len < 1))
        why = "a text model needs vocab, max_positions and default_seq_len >= 1";
    if (why == NULL && vision && net->image_size < 1)
        why = "a vision model needs image_size >= 1";
    if (why == NULL && strcmp(net->family, "vit") == 0 && (net->patch < 1 || net->patch > net->image_size))
        why = "a vit needs 1 <= patch <= image_size";
    if (why == NULL && net->num_classes < 1)
        why = "num_classes must be >= 1";
    if (why != NULL)
        return eci_error(ctx, EC_EPARSE, "%s: network '%s': %s", path, net->id, why);
    return EC_OK;
}

int eci_net_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, net_fields, N_NET_FIELDS, sizeof(eci_net), &rows, &n);
    if (rc != EC_OK)
        return rc;
    ctx->nets = rows;
    ctx->n_nets = n;
    for (size_t i = 0; i < n; i++) {
        const eci_net *net = &ctx->nets[i];
        size_t f = 0;
        while (f < sizeof families / sizeof families[0] && strcmp(families[f], net->family) != 0)
            f++;
        if (f == sizeof families / sizeof families[0])
            rc = eci_error(ctx, EC_EPARSE, "%s: network '%s': unknown family '%s' (encoder, distil, decoder, resnet, vit)",
                           path, net->id, net->family);
        else if (eci_task_parse(net->default_task) < 0)
            rc = eci_error(ctx, EC_EPARSE, "%s: network '%s': unknown default_task '%s'", path, net->id,
                           net->default_task);
        else
            rc = check_net(ctx, path, net);
        if (rc != EC_OK) {
            eci_net_free(ctx);
            return rc;
        }
    }
    return EC_OK;
}

void eci_net_free(ec_ctx *ctx)
{
    eci_rows_free(ctx, net_fields, N_NET_FIELDS, sizeof(eci_net), ctx->nets, ctx->n_nets);
    ctx->nets = NULL;
    ctx->n_nets = 0;
}

const eci_net *eci_net_find(ec_ctx *ctx, const char *name)
{
    enum { MAXN = 128 };
    const char *ids[MAXN];
    for (size_t i = 0; i < ctx->n_nets; i++) /* the exact id first: the common case, and cheap */
        if (strcmp(ctx->nets[i].id, name) == 0)
            return &ctx->nets[i];
    for (size_t i = 0; i < ctx->n_nets; i++)
        if (eci_name_eq(ctx->nets[i].id, name))
            return &ctx->nets[i];
    size_t n = ctx->n_nets < MAXN ? ctx->n_nets : MAXN;
    for (size_t i = 0; i < n; i++)
        ids[i] = ctx->nets[i].id;
    const char *near = eci_nearest(name, ids, n);
    eci_error(ctx, EC_ENOTFOUND, "unknown model '%s' (did you mean '%s'? `epochcast models` lists all)", name,
              near ? near : "");
    return NULL;
}

size_t ec_model_count(const ec_ctx *ctx)
{
    return ctx != NULL ? ctx->n_nets : 0;
}

int ec_model_get(const ec_ctx *ctx, size_t i, ec_model_info *out)
{
    if (ctx == NULL || out == NULL || i >= ctx->n_nets)
        return EC_EINVAL;
    const eci_net *net = &ctx->nets[i];
    out->id = net->id;
    out->family = net->family;
    out->default_task = net->default_task;
    out->params = eci_workload_params(net, eci_task_parse(net->default_task));
    out->default_seq_len = net->default_seq_len;
    out->default_image_size = net->image_size;
    return EC_OK;
}

int ec_model_params(ec_ctx *ctx, const char *model, const char *task, double *params)
{
    if (ctx == NULL || model == NULL || params == NULL)
        return EC_EMISUSE;
    const eci_net *net = eci_net_find(ctx, model);
    if (net == NULL)
        return EC_ENOTFOUND;
    int t = eci_task_parse(task != NULL && task[0] != '\0' ? task : net->default_task);
    if (t < 0)
        return eci_error(ctx, EC_ENOTFOUND, "unknown task '%s' (classify, squad, pretrain, lm, imagenet)", task);
    *params = eci_workload_params(net, t);
    return EC_OK;
}
