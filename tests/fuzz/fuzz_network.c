/*
 * fuzz_network.c: libFuzzer harness for ec_network_define (net.c: the checks of a description,
 * its bounds as a whole, the trial expansion in workload*.c) and a prediction of what it accepts.
 * The bytes are a description in lines, one layer a line: a kind and its fields in the order
 * of their struct in epochcast.h (a kind given as a number is taken as it is; a '+' after the
 * kind sets on_skip), e.g.
 *
 *   net 0 0 128 0 1 0                      image_size image_channels default_seq_len max_positions
 *                                          loss_in_forward attention (optional)
 *   embedding 320 64 0 0 0 0 0
 *   repeat 4 2 0 1                         layers times shared_params checkpoint
 *   norm 1 0 0
 *   attention 4 0 0 1 0 0 0 0 1 0 0 0 0 0 0 0
 *   mlp 256 3 1 0 0
 *   norm 1 0 0
 *   head lm 0 0 0 0 1 0 0 0 0              task kind classes pooler transform tied bias pool
 *                                          fused_loss metric_losses
 *
 * A description the library accepts must predict (model=<its id>, one GPU, a small batch) with a
 * finite result or refuse with a message; a refused one must say why.  Seeds in
 * tests/fuzz/corpus/network/.
 */
#include "fuzz_common.h"

#include <limits.h>
#include <stdint.h>

#define FUZZ_MAX_LAYERS 2048
#define FUZZ_MAX_HEADS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const kinds[] = {"embedding", "patches", "linear", "conv2d", "norm", "attention", "mlp",
                                    "moe", "activation", "dropout", "residual", "pool", "repeat", "decoder"};

/* The integers after the first word of a line (at most max); the rest are 0. */
static int numbers(const char *s, long long *v, int max)
{
    int n = 0;
    memset(v, 0, (size_t)max * sizeof *v);
    while (n < max) {
        char *end;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        long long x = strtoll(s, &end, 10);
        if (end == s)
            break;
        v[n++] = x;
        s = end;
    }
    return n;
}

static int i32(long long v)
{
    return v < INT_MIN ? INT_MIN : v > INT_MAX ? INT_MAX : (int)v;
}

/* The fields of layer l from v, in the order of its struct. */
static void fill(ec_layer *l, const long long *v)
{
    switch (l->kind) {
    case EC_LAYER_EMBEDDING:
        l->u.embedding = (ec_embedding_layer){v[0], v[1], v[2], v[3], i32(v[4]), i32(v[5]), i32(v[6])};
        break;
    case EC_LAYER_PATCHES: l->u.patches = (ec_patches_layer){i32(v[0]), i32(v[1])}; break;
    case EC_LAYER_LINEAR: l->u.linear = (ec_linear_layer){v[0], i32(v[1])}; break;
    case EC_LAYER_CONV2D:
        l->u.conv2d = (ec_conv2d_layer){v[0], i32(v[1]), i32(v[2]), i32(v[3]), i32(v[4]), i32(v[5])};
        break;
    case EC_LAYER_NORM: l->u.norm = (ec_norm_layer){(ec_norm_kind)i32(v[0]), i32(v[1]), i32(v[2])}; break;
    case EC_LAYER_ATTENTION: {
        ec_attention_layer *a = &l->u.attention;
        a->heads = i32(v[0]), a->kv_heads = i32(v[1]), a->head_dim = i32(v[2]), a->causal = i32(v[3]);
        a->cross = i32(v[4]), a->qkv_fused = i32(v[5]), a->qkv_bias = i32(v[6]), a->out_bias = i32(v[7]);
        a->position = (ec_position)i32(v[8]), a->window = v[9], a->rel_buckets = i32(v[10]);
        a->dropout = i32(v[11]), a->qk_norm = i32(v[12]), a->softcap = i32(v[13]);
        a->relative_span = i32(v[14]), a->softmax_fp32 = i32(v[15]);
        break;
    }
    case EC_LAYER_MLP:
        l->u.mlp = (ec_mlp_layer){v[0], (ec_activation)i32(v[1]), i32(v[2]), i32(v[3]), i32(v[4])};
        break;
    case EC_LAYER_MOE:
        l->u.moe = (ec_moe_layer){i32(v[0]), i32(v[1]), v[2], (ec_activation)i32(v[3]), i32(v[4]), i32(v[5]), v[6],
                                  i32(v[7])};
        break;
    case EC_LAYER_ACTIVATION: l->u.activation.act = (ec_activation)i32(v[0]); break;
    case EC_LAYER_RESIDUAL: l->u.residual.op = (ec_residual_op)i32(v[0]); break;
    case EC_LAYER_POOL: l->u.pool = (ec_pool_layer){(ec_pool_kind)i32(v[0]), i32(v[1]), i32(v[2]), i32(v[3])}; break;
    case EC_LAYER_REPEAT: l->u.repeat = (ec_repeat_layer){i32(v[0]), i32(v[1]), i32(v[2]), i32(v[3])}; break;
    default: break;
    }
}

typedef struct desc {
    ec_layer layers[FUZZ_MAX_LAYERS];
    ec_head heads[FUZZ_MAX_HEADS];
    char tasks[FUZZ_MAX_HEADS][32];
    ec_network_def def;
} desc;

/* One line of the description into d. */
static void parse_line(desc *d, char *line)
{
    char word[32];
    int len = 0;
    while (line[len] != '\0' && line[len] != ' ' && line[len] != '\t' && len < (int)sizeof word - 1) {
        word[len] = line[len];
        len++;
    }
    word[len] = '\0';
    const char *rest = line + len;
    long long v[16];
    if (strcmp(word, "net") == 0) {
        numbers(rest, v, 6);
        d->def.image_size = i32(v[0]), d->def.image_channels = i32(v[1]), d->def.default_seq_len = i32(v[2]);
        d->def.max_positions = i32(v[3]), d->def.loss_in_forward = i32(v[4]);
        d->def.attention = (ec_attention_impl)i32(v[5]);
    } else if (strcmp(word, "head") == 0 && d->def.n_heads < FUZZ_MAX_HEADS) {
        char *t = d->tasks[d->def.n_heads];
        while (*rest == ' ')
            rest++;
        int n = 0;
        while (rest[n] != '\0' && rest[n] != ' ' && n < 31) {
            t[n] = rest[n];
            n++;
        }
        t[n] = '\0';
        numbers(rest + n, v, 9);
        d->heads[d->def.n_heads++] = (ec_head){t, (ec_head_kind)i32(v[0]), v[1], i32(v[2]), v[3], i32(v[4]),
                                               i32(v[5]), i32(v[6]), i32(v[7]), i32(v[8])};
    } else if (len > 0 && d->def.n_layers < FUZZ_MAX_LAYERS) {
        ec_layer *l = &d->layers[d->def.n_layers++];
        memset(l, 0, sizeof *l);
        if (word[len - 1] == '+') {
            l->on_skip = 1;
            word[len - 1] = '\0';
        }
        char *end;
        long k = strtol(word, &end, 10);
        l->kind = (ec_layer_kind)(end != word && *end == '\0' ? i32(k) : -1);
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if (strcmp(word, kinds[i]) == 0)
                l->kind = (ec_layer_kind)i;
        numbers(rest, v, 16);
        fill(l, v);
    }
}

static ec_ctx *fresh_ctx(ec_ctx *old)
{
    ec_ctx_free(old);
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, fuzz_models_dir()) != EC_OK)
        abort();
    return ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ec_ctx *ctx;
    static unsigned long runs;
    static desc d;
    if (ctx == NULL || runs % 512 == 0) /* networks pile up on a context: a fresh one now and then */
        ctx = fresh_ctx(ctx);
    char id[32];
    snprintf(id, sizeof id, "fuzz-%lu", runs++);
    memset(&d.def, 0, sizeof d.def);
    d.def.id = id;
    d.def.layers = d.layers;
    d.def.heads = d.heads;
    d.def.loss_in_forward = 1;
    char line[512];
    size_t i = 0;
    while (i < size) {
        size_t n = 0;
        while (i < size && data[i] != '\n') {
            if (n + 1 < sizeof line)
                line[n++] = data[i] == '\0' ? ' ' : (char)data[i];
            i++;
        }
        i++;
        line[n] = '\0';
        parse_line(&d, line);
    }
    int rc = ec_network_define(ctx, &d.def);
    fuzz_check_error(ctx, rc);
    if (rc != EC_OK)
        return 0;
    ec_config c;
    ec_config_init(&c);
    snprintf(c.model, sizeof c.model, "%s", id);
    snprintf(c.gpu, sizeof c.gpu, "a100-sxm4-80gb");
    c.batch_per_gpu = 2;
    if (d.def.layers[0].kind == EC_LAYER_EMBEDDING)
        c.seq_len = 64;
    ec_result res;
    rc = ec_predict(ctx, &c, &res);
    fuzz_check_error(ctx, rc);
    if (rc == EC_OK)
        fuzz_check_result(&res);
    return 0;
}
