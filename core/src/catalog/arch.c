/*
 * arch.c: turns the hyperparameters of a network (eci_arch, from a config file read by
 * hfconfig.c) into a network description: the layer list with its repeated blocks and the
 * task heads its family has.  It writes down what the family's modeling code does (which
 * norms, where the residual adds are, which linears have biases, tied or separate heads),
 * from the Hugging Face modeling_*.py and torchvision sources named at each rule; all
 * pricing happens later, from the description alone (workload.c).
 */
#include "catalog/arch.h"

#include <string.h>

/* ---- the description under construction -------------------------------------------------- */
static ec_layer *add(eci_desc *d, ec_layer_kind kind)
{
    if (d->rc != EC_OK)
        return NULL;
    if (d->n_layers == d->cap_layers) {
        size_t cap = d->cap_layers ? 2 * d->cap_layers : 64;
        ec_layer *grown = eci_realloc(d->ctx, d->layers, d->cap_layers * sizeof *grown, cap * sizeof *grown);
        if (grown == NULL) {
            d->rc = EC_ENOMEM;
            return NULL;
        }
        d->layers = grown;
        d->cap_layers = cap;
    }
    ec_layer *l = &d->layers[d->n_layers++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    return l;
}

static void norm(eci_desc *d, const eci_arch *a)
{
    ec_layer *l = add(d, EC_LAYER_NORM);
    if (l != NULL)
        l->u.norm = (ec_norm_layer){.kind = a->norm, .bias = a->norm_bias, .low_precision = a->norm_low_precision};
}

static void residual(eci_desc *d, ec_residual_op op)
{
    ec_layer *l = add(d, EC_LAYER_RESIDUAL);
    if (l != NULL)
        l->u.residual.op = op;
}

static void dropout(eci_desc *d)
{
    add(d, EC_LAYER_DROPOUT);
}

/* Start a REPEAT; repeat_end fills in how many layers it spans. */
static size_t repeat_begin(eci_desc *d, int times, int shared, int checkpoint)
{
    ec_layer *l = add(d, EC_LAYER_REPEAT);
    if (l != NULL)
        l->u.repeat = (ec_repeat_layer){.times = times, .shared_params = shared, .checkpoint = checkpoint};
    return d->n_layers - 1;
}

static void repeat_end(eci_desc *d, size_t at)
{
    if (d->rc == EC_OK)
        d->layers[at].u.repeat.layers = (int)(d->n_layers - at - 1);
}

static void add_head(eci_desc *d, const char *task, ec_head_kind kind, const ec_head *opts)
{
    if (d->n_heads >= sizeof d->heads / sizeof d->heads[0])
        return;
    ec_head h = opts != NULL ? *opts : (ec_head){0};
    h.task = task;
    h.kind = kind;
    d->heads[d->n_heads++] = h;
}

void eci_desc_free(eci_desc *d)
{
    if (d->layers != NULL)
        eci_free(d->ctx, d->layers, d->cap_layers * sizeof *d->layers);
    memset(d, 0, sizeof *d);
}

/* ---- transformers ----------------------------------------------------------------------- */
static ec_attention_layer attention_of(const eci_arch *a, int causal, int cross, int window)
{
    return (ec_attention_layer){.heads = a->heads, .kv_heads = a->kv_heads, .head_dim = a->head_dim,
                                .causal = causal, .cross = cross, .qkv_fused = a->qkv_fused && !cross,
                                .qkv_bias = a->qkv_bias, .out_bias = a->out_bias,
                                .position = cross ? EC_POS_NONE : a->position, .window = window,
                                .dropout = a->attn_dropout, .qk_norm = a->qk_norm, .softcap = a->softcap,
                                .relative_span = a->relative_span, .softmax_fp32 = a->softmax_fp32,
                                .q_rank = cross ? 0 : a->q_rank, .kv_rank = cross ? 0 : a->kv_rank,
                                .rope_dim = cross ? 0 : a->rope_dim, .v_head_dim = a->v_head_dim,
                                .sinks = a->sinks};
}

static void attention(eci_desc *d, const ec_attention_layer *at)
{
    ec_layer *l = add(d, EC_LAYER_ATTENTION);
    if (l != NULL)
        l->u.attention = *at;
}

static void feed_forward(eci_desc *d, const eci_arch *a)
{
    ec_layer *l;
    if (a->experts > 0) {
        if ((l = add(d, EC_LAYER_MOE)) != NULL)
            l->u.moe = (ec_moe_layer){.experts = a->experts, .top_k = a->top_k, .ffn = a->expert_ffn, .act = a->act,
                                      .gated = a->gated, .shared_experts = a->shared_experts,
                                      .shared_ffn = a->shared_ffn, .shared_gate = a->shared_gate,
                                      .bias = a->moe_bias};
    } else if ((l = add(d, EC_LAYER_MLP)) != NULL) {
        l->u.mlp = (ec_mlp_layer){.ffn = a->ffn, .act = a->act, .gated = a->gated, .bias = a->mlp_bias,
                                  .dropout = a->mlp_dropout};
    }
}

/* One sub-layer with its residual: pre-norm (norm, f, dropout, [norm], add) or post-norm
 * (BERT: f, dropout, add, norm).  A parallel block (GPT-NeoX, Falcon) computes
 * x + attn(ln1(x)) + mlp(ln2(x)): the same kernels and bytes as the sequential form, so it
 * is written that way; Falcon-7B's single norm feeds both. */
static void sublayer(eci_desc *d, const eci_arch *a, const ec_attention_layer *at, int second)
{
    residual(d, EC_RESIDUAL_SAVE);
    int pre = !a->post_norm && !(a->parallel && a->parallel_one_norm && second);
    if (pre)
        norm(d, a);
    if (at != NULL)
        attention(d, at);
    else
        feed_forward(d, a);
    if (a->dropout && !(at == NULL && a->ffn_no_dropout))
        dropout(d);
    if (a->sandwich_norms)
        norm(d, a);
    residual(d, EC_RESIDUAL_ADD);
    if (a->post_norm)
        norm(d, a);
}

static void transformer_layer(eci_desc *d, const eci_arch *a, int causal, int cross, int window, int rel_buckets)
{
    ec_attention_layer self = attention_of(a, causal, 0, window);
    self.rel_buckets = rel_buckets;
    sublayer(d, a, &self, 0);
    if (cross) {
        ec_attention_layer x = attention_of(a, 0, 1, 0);
        sublayer(d, a, &x, 0);
    }
    sublayer(d, a, NULL, 1);
}

/* Layer j of a layer pattern (arch.h): its window, its position encoding, its feed-forward. */
static void pattern_layer(eci_desc *d, const eci_arch *a, int j, int causal, int cross)
{
    uint64_t bit = (uint64_t)1 << j;
    eci_arch l = *a;
    if (a->nope_mask & bit)
        l.position = EC_POS_NONE;
    if (a->dense_mask & bit)
        l.experts = 0;
    transformer_layer(d, &l, causal, cross, (a->local_mask & bit) ? a->window : 0, 0);
}

/* Positions i and j of a layer pattern build the same layer. */
static int same_kind(const eci_arch *a, int i, int j)
{
    uint64_t x = (uint64_t)1 << i, y = (uint64_t)1 << j;
    return !(a->local_mask & x) == !(a->local_mask & y) && !(a->nope_mask & x) == !(a->nope_mask & y) &&
           !(a->dense_mask & x) == !(a->dense_mask & y);
}

/* A stack of n layers as repeated blocks: T5's first layer owns the relative-position
 * buckets; Gemma 2 alternates sliding-window and global layers; ALBERT shares one layer.  A
 * layer pattern (Gemma 3's 5 local : 1 global, Llama 4's NoPE and dense layers) is one block per
 * run of alike layers, so that each decoder layer stays a unit of checkpointing and of FSDP's
 * gathers as in Hugging Face's code (5 local layers are a block of 5 repetitions). */
static void stack(eci_desc *d, const eci_arch *a, int n, int causal, int cross)
{
    if (a->experts > 0 && a->dense_layers > 0) { /* DeepSeek: dense MLPs first, then the MoE layers */
        eci_arch dense = *a, moe = *a;
        int k = a->dense_layers < n ? a->dense_layers : n;
        dense.experts = dense.dense_layers = moe.dense_layers = 0;
        stack(d, &dense, k, causal, cross);
        if (n > k)
            stack(d, &moe, n - k, causal, cross);
        return;
    }
    int first = 0;
    if (a->position == EC_POS_RELATIVE && a->rel_buckets > 0) {
        transformer_layer(d, a, causal, cross, 0, a->rel_buckets);
        first = 1;
    }
    int rest = n - first;
    if (rest <= 0)
        return;
    if (a->window > 0 && a->window_every == 2) {
        size_t r = repeat_begin(d, rest / 2, 0, 1);
        transformer_layer(d, a, causal, cross, a->window, 0);
        transformer_layer(d, a, causal, cross, 0, 0);
        repeat_end(d, r);
        if (rest % 2)
            transformer_layer(d, a, causal, cross, a->window, 0);
        return;
    }
    if (a->layer_period > 1 && a->layer_period <= ECI_ARCH_MAX_PERIOD) {
        for (int i = 0; i < rest && d->rc == EC_OK;) {
            int j = i % a->layer_period, k = 1;
            while (i + k < rest && same_kind(a, (i + k) % a->layer_period, j))
                k++;
            size_t r = repeat_begin(d, k, 0, 1);
            pattern_layer(d, a, j, causal, cross);
            repeat_end(d, r);
            i += k;
        }
        return;
    }
    size_t r = repeat_begin(d, rest, a->shared_layers, 1);
    transformer_layer(d, a, causal, cross, a->window, 0);
    repeat_end(d, r);
}

static void token_embedding(eci_desc *d, const eci_arch *a, int shared)
{
    ec_layer *l = add(d, EC_LAYER_EMBEDDING);
    if (l != NULL)
        l->u.embedding = (ec_embedding_layer){
            .vocab = a->vocab, .dim = a->embedding_size > 0 ? a->embedding_size : a->hidden,
            .positions = a->learned_positions && !shared ? a->max_positions : 0,
            .type_vocab = shared ? 0 : a->type_vocab, .fused = a->emb_fused, .scale = a->emb_scale, .shared = shared,
            .idle_params = shared ? 0 : a->idle_params};
}

static void text_input(eci_desc *d, const eci_arch *a)
{
    token_embedding(d, a, 0);
    if (a->emb_norm) { /* BertEmbeddings.LayerNorm (always with a bias) */
        ec_layer *l = add(d, EC_LAYER_NORM);
        if (l != NULL)
            l->u.norm = (ec_norm_layer){.kind = EC_NORM_LAYER, .bias = 1};
    }
    if (a->emb_dropout)
        dropout(d);
    if (a->embedding_size > 0 && a->embedding_size != a->hidden) { /* ALBERT's embedding_hidden_mapping_in,
                                                                    * OPT's project_in (no bias) */
        ec_layer *l = add(d, EC_LAYER_LINEAR);
        if (l != NULL)
            l->u.linear = (ec_linear_layer){.out = a->hidden, .bias = !a->emb_proj_nobias};
    }
}

static void vision_input(eci_desc *d, const eci_arch *a)
{
    ec_layer *l = add(d, EC_LAYER_CONV2D);
    if (l != NULL)
        l->u.conv2d = (ec_conv2d_layer){.out = a->hidden, .kernel = a->patch, .stride = a->patch, .padding = 0,
                                        .bias = a->patch_bias};
    if ((l = add(d, EC_LAYER_PATCHES)) != NULL)
        l->u.patches = (ec_patches_layer){.cls_tokens = 1, .positions = 1};
    if (a->vision_pre_norm)
        norm(d, a);
}

static void transformer_heads(eci_desc *d, const eci_arch *a)
{
    ec_head opt = {.classes = a->classes};
    if (a->vision) {
        add_head(d, "imagenet", EC_HEAD_IMAGE_CLASSIFY, &opt);
        return;
    }
    int decoder_only = a->encoder_layers == 0;
    if (a->decoder_layers > 0) { /* the vocabulary projection of the (decoder) stream */
        ec_head lm = {.tied = a->tie, .bias = a->lm_bias, .fused_loss = a->fused_loss,
                     .metric_losses = a->metric_losses};
        add_head(d, "lm", EC_HEAD_CAUSAL_LM, &lm);
    } else { /* masked LM: BertOnlyMLMHead and its cousins (ALBERT's transform is H -> E) */
        ec_head mlm = {.tied = 1, .bias = 1, .transform = a->embedding_size};
        add_head(d, "lm", EC_HEAD_MASKED_LM, &mlm);
        if (a->has_pretrain)
            add_head(d, "pretrain", EC_HEAD_PRETRAIN, &mlm);
    }
    if (a->no_classify)
        return;
    ec_head cls = {.classes = a->classes, .pooler = !decoder_only, .bias = !decoder_only};
    add_head(d, "classify", EC_HEAD_CLASSIFY, &cls);
    add_head(d, "token_classify", EC_HEAD_TOKEN_CLASSIFY, &opt);
    add_head(d, "squad", EC_HEAD_SPAN_QA, &opt);
}

static void transformer(eci_desc *d, const eci_arch *a)
{
    if (a->vision)
        vision_input(d, a);
    else
        text_input(d, a);
    if (a->encoder_layers > 0) {
        stack(d, a, a->encoder_layers, 0, 0);
        if (a->final_norm)
            norm(d, a);
        if (a->decoder_layers > 0 && a->dropout) /* T5Stack: dropout after the final norm */
            dropout(d);
    }
    if (a->decoder_layers > 0) {
        int cross = a->encoder_layers > 0;
        if (cross) { /* T5: the decoder reads the shared embedding, cross-attends to the encoder */
            add(d, EC_LAYER_DECODER);
            token_embedding(d, a, 1);
            if (a->emb_dropout)
                dropout(d);
        }
        stack(d, a, a->decoder_layers, 1, cross);
        if (a->final_norm)
            norm(d, a);
        if (cross && a->dropout)
            dropout(d);
        if (a->out_proj > 0) { /* OPT's project_out back to the embedding width */
            ec_layer *l = add(d, EC_LAYER_LINEAR);
            if (l != NULL)
                l->u.linear = (ec_linear_layer){.out = a->out_proj, .bias = 0};
        }
    }
    transformer_heads(d, a);
}

/* ---- ResNet (torchvision resnet.py: v1.5, the stride in the 3x3 conv) --------------------- */
static void conv(eci_desc *d, int out, int kernel, int stride, int on_skip)
{
    ec_layer *l = add(d, EC_LAYER_CONV2D);
    if (l != NULL) {
        l->u.conv2d = (ec_conv2d_layer){.out = out, .kernel = kernel, .stride = stride, .padding = -1};
        l->on_skip = on_skip;
    }
}

static void batch_norm(eci_desc *d, int on_skip)
{
    ec_layer *l = add(d, EC_LAYER_NORM);
    if (l != NULL) {
        l->u.norm.kind = EC_NORM_BATCH;
        l->on_skip = on_skip;
    }
}

static void relu(eci_desc *d)
{
    ec_layer *l = add(d, EC_LAYER_ACTIVATION);
    if (l != NULL)
        l->u.activation.act = EC_ACT_RELU;
}

/* Bottleneck(in, w, stride): 1x1 w, 3x3 w (stride), 1x1 4w; BasicBlock: 3x3 w (stride), 3x3 w.
 * A downsample (1x1 conv + BN on the skip path) when the shape changes. */
static void res_block(eci_desc *d, int bottleneck, int in, int w, int stride)
{
    int out = bottleneck ? 4 * w : w;
    residual(d, EC_RESIDUAL_SAVE);
    if (bottleneck) {
        conv(d, w, 1, 1, 0);
        batch_norm(d, 0);
        relu(d);
    }
    conv(d, w, 3, stride, 0);
    batch_norm(d, 0);
    relu(d);
    conv(d, out, bottleneck ? 1 : 3, 1, 0);
    batch_norm(d, 0);
    if (stride != 1 || in != out) {
        conv(d, out, 1, stride, 1);
        batch_norm(d, 1);
    }
    residual(d, EC_RESIDUAL_ADD_RELU);
}

static void resnet(eci_desc *d, const eci_arch *a)
{
    ec_layer *l;
    conv(d, 64, 7, 2, 0);
    batch_norm(d, 0);
    relu(d);
    if ((l = add(d, EC_LAYER_POOL)) != NULL)
        l->u.pool = (ec_pool_layer){.kind = EC_POOL_MAX, .kernel = 3, .stride = 2, .padding = 1};
    int c = 64, expansion = a->bottleneck ? 4 : 1;
    for (int s = 0; s < 4 && a->stages[s] > 0; s++) {
        int w = 64 << s;
        res_block(d, a->bottleneck, c, w, s > 0 ? 2 : 1);
        c = w * expansion;
        if (a->stages[s] > 1) { /* the identical blocks after the first: no checkpointing units */
            size_t r = repeat_begin(d, a->stages[s] - 1, 0, 0);
            res_block(d, a->bottleneck, c, w, 1);
            repeat_end(d, r);
        }
    }
    ec_head fc = {.classes = a->classes, .pool = 1, .bias = 1};
    add_head(d, "imagenet", EC_HEAD_IMAGE_CLASSIFY, &fc);
}

/* ---- checks and the definition ----------------------------------------------------------- */
static const char *check(const eci_arch *a)
{
    if (a->kind == ECI_ARCH_RESNET)
        return a->stages[0] < 1 ? "layers must list 1 to 4 stage depths >= 1" : NULL;
    if (a->encoder_layers + a->decoder_layers < 1)
        return "the number of layers must be >= 1";
    if (a->hidden < 1 || a->heads < 1)
        return "hidden size and attention heads must be >= 1";
    if (a->head_dim == 0 && a->hidden % a->heads != 0)
        return "the attention heads must divide the hidden size (or head_dim must be given)";
    if (a->kv_heads > 0 && a->heads % a->kv_heads != 0)
        return "the key/value heads must divide the attention heads";
    if (a->experts == 0 && a->ffn < 1)
        return "the feed-forward size must be >= 1";
    if (a->experts > 0 && (a->top_k < 1 || a->top_k > a->experts || a->expert_ffn < 1))
        return "a mixture of experts needs 1 <= experts per token <= experts and an expert size >= 1";
    if (a->experts > 0 && a->dense_layers > 0 && a->ffn < 1)
        return "dense layers before the experts need a feed-forward size >= 1";
    if (a->kv_rank > 0 && (a->head_dim < 1 || a->rope_dim > a->head_dim))
        return "latent attention needs a head size >= 1 holding its rotary part";
    if (a->vision && (a->patch < 1 || a->patch > a->image_size))
        return "a vision transformer needs 1 <= patch size <= image size";
    if (!a->vision && a->vocab < 1)
        return "the vocabulary size must be >= 1";
    return NULL;
}

int eci_arch_build(ec_ctx *ctx, const eci_arch *a, const char *id, eci_desc *d, ec_network_def *def)
{
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    const char *why = check(a);
    if (why != NULL)
        return eci_error(ctx, EC_EINVAL, "network '%s' (%s): %s", id, a->model_type, why);
    if (a->kind == ECI_ARCH_RESNET)
        resnet(d, a);
    else
        transformer(d, a);
    if (d->rc != EC_OK) {
        eci_desc_free(d);
        return eci_error(ctx, EC_ENOMEM, "out of memory building network '%s'", id);
    }
    int vision = a->kind == ECI_ARCH_RESNET || a->vision;
    *def = (ec_network_def){.id = id, .family = a->model_type, .layers = d->layers, .n_layers = d->n_layers,
                            .heads = d->heads, .n_heads = d->n_heads,
                            .default_task = a->default_task[0] ? a->default_task : NULL,
                            .default_seq_len = vision ? 0 : a->default_seq_len,
                            .max_positions = a->learned_positions ? a->max_positions : 0,
                            .image_size = vision ? a->image_size : 0, .image_channels = vision ? a->channels : 0,
                            .loss_in_forward = a->loss_in_forward, .attention = a->attention};
    return EC_OK;
}

/* The name of a layer kind, as descriptions and messages spell it. */
const char *ec_layer_kind_name(ec_layer_kind kind)
{
    static const char *const names[] = {"embedding", "patches", "linear", "conv2d", "norm", "attention", "mlp",
                                        "moe", "activation", "dropout", "residual", "pool", "repeat", "decoder"};
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}
