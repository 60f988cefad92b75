/*
 * workload.c: expands a network preset (networks.csv) and a task head into the ops of one
 * forward micro-step: GEMMs with shapes, convolutions as implicit GEMMs, and memory-bound
 * kernels with the bytes they move and the activations they keep for backward.
 * The per-layer accounting follows Korthikanti et al. (modeling.md 2.2): 66·sbh + 9·a·s²·b
 * bytes per BERT layer in fp32, about 42·sbh + 7·a·s²·b under autocast, as HF eager runs it.
 * Ops flagged `layer` form one block that predict.c repeats `layers` times.
 */
#include "workload.h"
#include "consts.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const task_names[] = {"classify", "squad", "pretrain", "lm", "imagenet"};

int eci_task_parse(const char *name)
{
    for (int i = 0; i < (int)(sizeof task_names / sizeof task_names[0]); i++)
        if (name != NULL && strcmp(name, task_names[i]) == 0)
            return i;
    return -1;
}

const char *eci_task_name(int task)
{
    return task >= 0 && task < (int)(sizeof task_names / sizeof task_names[0]) ? task_names[task] : "?";
}

/* Byte sizes of the tensors an op touches, from the precision (modeling.md 2.2, 9):
 * act: GEMM inputs/outputs and pointwise ops that follow them (2 bytes under autocast);
 * f32k: ops autocast keeps in fp32 (softmax, layer norm, the fp32 residual stream,
 * embeddings); both are 2 bytes for a pure 16-bit model and 4 in fp32/tf32. */
typedef struct builder {
    eci_workload *wl;
    const eci_shape *sh;
    double act, f32k, mask;
    int amp, tensor_math, layer;
    int overflow;
} builder;

static eci_op *push(builder *b, const char *name, eci_op_kind kind)
{
    if (b->wl->n_ops >= ECI_MAX_OPS) {
        b->overflow = 1;
        return NULL;
    }
    eci_op *op = &b->wl->ops[b->wl->n_ops++];
    memset(op, 0, sizeof *op);
    op->name = name;
    op->kind = kind;
    op->fwd_kernels = 1;
    op->bwd = 1;
    op->layer = b->layer;
    op->batch = 1;
    return op;
}

/* A memory-bound kernel over `elems` elements moving `bytes_per_elem` (reads + writes). */
static eci_op *mem(builder *b, const char *name, double elems, double bytes_per_elem, double saved_bytes)
{
    eci_op *op = push(b, name, ECI_OP_MEM);
    if (op != NULL) {
        op->fwd_bytes = elems * bytes_per_elem;
        op->saved_bytes = saved_bytes;
    }
    return op;
}

/* An autocast cast of `elems` fp32 elements to 16 bits (read 4, write 2). */
static void cast(builder *b, const char *name, double elems, double saved_bytes)
{
    eci_op *op = push(b, name, ECI_OP_CAST);
    if (op != NULL) {
        op->fwd_bytes = elems * 6.0;
        op->saved_bytes = saved_bytes;
    }
}

static eci_op *gemm(builder *b, const char *name, double m, double n, double k, double batch, double saved_bytes)
{
    eci_op *op = push(b, name, ECI_OP_GEMM);
    if (op != NULL) {
        op->m = m;
        op->n = n;
        op->k = k;
        op->batch = batch;
        op->tensor_math = b->tensor_math;
        op->saved_bytes = saved_bytes;
    }
    return op;
}

/* nn.Linear on `rows` rows, in -> out, with bias.  Under autocast the fp32 input is cast
 * (the copy is what backward keeps) unless it is already 16-bit, and so is the weight
 * (the autocast weight cache).  save_input = 0 when another op already keeps the input. */
static void linear(builder *b, const char *name, double rows, double in, double out, int input_is_f32,
                   int save_input, int bias)
{
    double saved = 0;
    if (b->amp && input_is_f32) {
        cast(b, "cast_in", rows * in, rows * in * 2.0);
    } else if (save_input) {
        saved = rows * in * (input_is_f32 ? b->f32k : b->act);
    }
    if (b->amp)
        cast(b, "cast_w", in * out, 0);
    eci_op *op = gemm(b, name, rows, out, in, 1, saved);
    if (op != NULL) {
        op->params = in * out + (bias ? out : 0);
        op->param_tensors = bias ? 2 : 1;
        op->cast_params = in * out;
    }
}

static void layer_norm(builder *b, const char *name, double rows, double width, double elem_bytes)
{
    /* Saves its input and two fp32 statistics per row. */
    eci_op *op = mem(b, name, rows * width, 2.0 * elem_bytes, rows * width * elem_bytes + rows * 8.0);
    if (op != NULL) {
        op->params = 2.0 * width;
        op->param_tensors = 2;
    }
}

static void dropout(builder *b, const char *name, double elems, double elem_bytes)
{
    mem(b, name, elems, 2.0 * elem_bytes + b->mask, elems * b->mask);
}

/* Eager attention as HF runs it (BertSelfAttention, GPT2Attention): explicit s x s scores,
 * scale, mask, softmax (fp32 under autocast), dropout, and two batched GEMMs.
 * seq_sq = E[L^2] so dynamic padding prices the quadratic part right. */
static void attention_core(builder *b, double batch, double heads, double seq, double seq_sq, double head_dim,
                           int causal)
{
    double T = batch * seq, h = heads * head_dim;
    double scores = batch * heads * seq_sq;
    gemm(b, "scores", seq, seq_sq / seq, head_dim, batch * heads, 2.0 * T * h * b->act);
    mem(b, "scale", scores, 2.0 * b->act, 0);
    mem(b, causal ? "causal_mask" : "mask_add", scores, 2.0 * b->act, 0);
    mem(b, "softmax", scores, b->act + b->f32k, scores * b->f32k);
    dropout(b, "attn_dropout", scores, b->f32k);
    double probs_saved = scores * b->f32k;
    if (b->amp) {
        cast(b, "cast_probs", scores, scores * 2.0);
        probs_saved = 0;
    }
    gemm(b, "context", seq, head_dim, seq_sq / seq, batch * heads, probs_saved + T * h * b->act);
    mem(b, "merge_heads", T * h, 2.0 * b->act, 0);
}

/* A fused scaled-dot-product attention kernel (F.scaled_dot_product_attention: HF's
 * default "sdpa" implementation, torchvision ViT's fast path): the QK^T and PV FLOPs in one
 * kernel, no s x s tensor kept; it keeps Q, K, V, the output and a log-sum-exp per row,
 * and backward recomputes the scores.  seq_sq = E[L^2] prices dynamic padding. */
static void attention_fused(builder *b, double batch, double heads, double seq, double seq_sq, double head_dim)
{
    double T = batch * seq, h = heads * head_dim;
    eci_op *op = gemm(b, "sdpa", seq, seq_sq / seq, 2.0 * head_dim, batch * heads,
                      4.0 * T * h * b->act + T * heads * 4.0);
    if (op != NULL)
        op->kind = ECI_OP_ATTN;
    mem(b, "merge_heads", T * h, 2.0 * b->act, 0);
}

static void attention(builder *b, double batch, double heads, double seq, double seq_sq, double head_dim, int causal)
{
    if (b->sh->eager_attention)
        attention_core(b, batch, heads, seq, seq_sq, head_dim, causal);
    else
        attention_fused(b, batch, heads, seq, seq_sq, head_dim);
}

static void encoder_embeddings(builder *b, const eci_net *net, double T)
{
    double h = net->hidden, e = b->f32k;
    eci_op *op = mem(b, "word_emb", T * h, 2.0 * e, 0);
    if (op != NULL) {
        op->params = (double)net->vocab * h;
        op->param_tensors = 1;
        /* Backward writes a dense vocab x hidden gradient (zero fill + index_add). */
        op->bwd_bytes = (double)net->vocab * h * 4.0 * 2.0 + T * h * e;
    }
    op = mem(b, "pos_emb", T * h, 2.0 * e, 0);
    if (op != NULL) {
        op->params = (double)net->max_positions * h;
        op->param_tensors = 1;
    }
    if (net->type_vocab > 0) {
        op = mem(b, "type_emb", T * h, 3.0 * e, 0);
        if (op != NULL) {
            op->params = (double)net->type_vocab * h;
            op->param_tensors = 1;
        }
    }
    mem(b, "emb_add", T * h, 3.0 * e, 0);
    layer_norm(b, "emb_ln", T, h, e);
    dropout(b, "emb_dropout", T * h, e);
}

/* One post-LN encoder layer (BERT, RoBERTa, DistilBERT). */
static void encoder_layer(builder *b, const eci_net *net, double batch, double seq, double seq_sq)
{
    double T = batch * seq, h = net->hidden, f = net->ffn, a = net->heads;
    linear(b, "q", T, h, h, 1, 1, 1);
    linear(b, "k", T, h, h, 1, 0, 1);
    linear(b, "v", T, h, h, 1, 0, 1);
    attention(b, batch, a, seq, seq_sq, h / a, 0);
    linear(b, "attn_out", T, h, h, 0, 1, 1);
    dropout(b, "out_dropout", T * h, b->act);
    mem(b, "residual_add", T * h, b->act + 2.0 * b->f32k, 0);
    layer_norm(b, "ln_attn", T, h, b->f32k);
    linear(b, "ffn_in", T, h, f, 1, 1, 1);
    mem(b, "gelu", T * f, 2.0 * b->act, T * f * b->act);
    linear(b, "ffn_out", T, f, h, 0, 1, 1);
    dropout(b, "ffn_dropout", T * h, b->act);
    mem(b, "residual_add", T * h, b->act + 2.0 * b->f32k, 0);
    layer_norm(b, "ln_ffn", T, h, b->f32k);
}

/* One pre-LN decoder layer (GPT-2): fused c_attn, causal mask, gelu_new written in Python
 * (eight elementwise kernels in eager mode). */
static void decoder_layer(builder *b, const eci_net *net, double batch, double seq, double seq_sq)
{
    double T = batch * seq, h = net->hidden, f = net->ffn, a = net->heads;
    layer_norm(b, "ln_1", T, h, b->f32k);
    linear(b, "c_attn", T, h, 3.0 * h, 1, 1, 1);
    attention(b, batch, a, seq, seq_sq, h / a, 1);
    linear(b, "attn_proj", T, h, h, 0, 1, 1);
    dropout(b, "resid_dropout", T * h, b->act);
    mem(b, "residual_add", T * h, b->act + 2.0 * b->f32k, 0);
    layer_norm(b, "ln_2", T, h, b->f32k);
    linear(b, "c_fc", T, h, f, 1, 1, 1);
    /* Each of its elementwise ops reads one or two tensors and writes one (~2.5 passes);
     * autograd keeps about four of the intermediates. */
    int k = b->sh->gelu_new_kernels > 0 ? b->sh->gelu_new_kernels : 1;
    eci_op *op = mem(b, "gelu_new", T * f, k * 2.5 * b->act, 4.0 * T * f * b->act);
    if (op != NULL)
        op->fwd_kernels = k;
    linear(b, "mlp_proj", T, f, h, 0, 1, 1);
    dropout(b, "mlp_dropout", T * h, b->act);
    mem(b, "residual_add", T * h, b->act + 2.0 * b->f32k, 0);
}

/* One pre-LN ViT encoder block (torchvision EncoderBlock). */
static void vit_layer(builder *b, const eci_net *net, double batch, double seq)
{
    double T = batch * seq, h = net->hidden, f = net->ffn, a = net->heads;
    layer_norm(b, "ln_1", T, h, b->f32k);
    linear(b, "in_proj", T, h, 3.0 * h, 1, 1, 1);
    attention_fused(b, batch, a, seq, seq * seq, h / a);
    linear(b, "out_proj", T, h, h, 0, 1, 1);
    dropout(b, "dropout", T * h, b->act);
    mem(b, "residual_add", T * h, b->act + 2.0 * b->f32k, 0);
    layer_norm(b, "ln_2", T, h, b->f32k);
    linear(b, "mlp_1", T, h, f, 1, 1, 1);
    mem(b, "gelu", T * f, 2.0 * b->act, T * f * b->act);
    dropout(b, "mlp_dropout_1", T * f, b->act);
    linear(b, "mlp_2", T, f, h, 0, 1, 1);
    dropout(b, "mlp_dropout_2", T * h, b->act);
    mem(b, "residual_add", T * h, b->act + 2.0 * b->f32k, 0);
}

/* Cross entropy over rows x classes: autocast runs log_softmax in fp32, and backward keeps
 * its output.  Under autocast the 16-bit logits are cast up first. */
static void cross_entropy(builder *b, double rows, double classes)
{
    double n = rows * classes;
    b->wl->output_bytes += n * b->act;
    if (b->amp)
        cast(b, "cast_logits", n, 0);
    mem(b, "log_softmax", n, 2.0 * b->f32k, n * b->f32k);
    mem(b, "nll_loss", rows, 16.0, 0);
}

static int task_head(builder *b, const eci_net *net, int task, double batch, double seq)
{
    double T = batch * seq, h = net->hidden, V = net->vocab;
    int decoder = strcmp(net->family, "decoder") == 0;
    switch (task) {
    case ECI_TASK_CLASSIFY:
        if (decoder) { /* GPT2ForSequenceClassification: score on the last token, no bias */
            linear(b, "score", batch, h, net->num_classes, 1, 1, 0);
        } else { /* pooler (or DistilBERT's pre_classifier) + classifier on the first token */
            linear(b, "pooler", batch, h, h, 1, 1, 1);
            mem(b, "tanh", batch * h, 2.0 * b->act, batch * h * b->act);
            linear(b, "classifier", batch, h, net->num_classes, 0, 1, 1);
        }
        cross_entropy(b, batch, net->num_classes);
        return EC_OK;
    case ECI_TASK_SQUAD: /* span head: start and end logits for every token */
        if (decoder)
            return EC_EINVAL;
        linear(b, "qa_outputs", T, h, 2, 1, 1, 1);
        mem(b, "split_logits", T * 2, 2.0 * b->act, 0);
        cross_entropy(b, 2.0 * batch, seq);
        return EC_OK;
    case ECI_TASK_PRETRAIN: { /* MLM on masked positions + NSP (NVIDIA DLE BERT) */
        if (decoder)
            return EC_EINVAL;
        double Tm = ceil(T * b->sh->mlm_frac);
        mem(b, "gather_masked", Tm * h, 2.0 * b->f32k, 0);
        linear(b, "mlm_transform", Tm, h, h, 1, 1, 1);
        mem(b, "mlm_gelu", Tm * h, 2.0 * b->act, Tm * h * b->act);
        layer_norm(b, "mlm_ln", Tm, h, b->f32k);
        linear(b, "mlm_decoder", Tm, h, V, 1, 1, 1);
        b->wl->ops[b->wl->n_ops - 1].params = V; /* decoder weight tied to the word embeddings */
        b->wl->ops[b->wl->n_ops - 1].param_tensors = 1;
        cross_entropy(b, Tm, V);
        linear(b, "pooler", batch, h, h, 1, 1, 1);
        mem(b, "tanh", batch * h, 2.0 * b->act, batch * h * b->act);
        linear(b, "nsp", batch, h, 2, 0, 1, 1);
        cross_entropy(b, batch, 2);
        return EC_OK;
    }
    case ECI_TASK_LM: { /* full-vocabulary head on every token, weight tied (GPT-2; BERT MLM on all) */
        if (net->vocab == 0)
            return EC_EINVAL;
        if (!decoder) {
            linear(b, "mlm_transform", T, h, h, 1, 1, 1);
            mem(b, "mlm_gelu", T * h, 2.0 * b->act, T * h * b->act);
            layer_norm(b, "mlm_ln", T, h, b->f32k);
        }
        linear(b, "lm_head", T, h, V, 1, 1, !decoder);
        b->wl->ops[b->wl->n_ops - 1].params = decoder ? 0 : V;
        b->wl->ops[b->wl->n_ops - 1].param_tensors = decoder ? 0 : 1;
        if (decoder) /* HF shifts the logits: a contiguous copy of all of them */
            mem(b, "shift_logits", T * V, 2.0 * b->act, T * V * b->act);
        cross_entropy(b, T, V);
        return EC_OK;
    }
    default:
        return EC_EINVAL;
    }
}

/* ---- ResNet (torchvision resnet50, v1.5: stride in the 3x3 conv) ---------------------- */
/* save_input = 0 when another op already keeps the same input tensor (the downsample
 * branch reads the block input that conv1x1_a keeps). */
static void conv(builder *b, const char *name, double n, double *hw, double cin, double cout, double ksize,
                 double stride, int first, int save_input)
{
    double pad = floor(ksize / 2.0);
    double hout = floor((*hw + 2.0 * pad - ksize) / stride) + 1.0;
    if (b->amp) {
        if (first)
            cast(b, "cast_in", n * *hw * *hw * cin, 0);
        cast(b, "cast_w", cout * cin * ksize * ksize, 0);
    }
    eci_op *op = push(b, name, ECI_OP_CONV);
    if (op != NULL) {
        op->m = n * hout * hout;
        op->n = cout;
        op->k = cin * ksize * ksize;
        op->tensor_math = b->tensor_math;
        op->saved_bytes = save_input ? n * *hw * *hw * cin * b->act : 0;
        op->params = cout * cin * ksize * ksize;
        op->param_tensors = 1;
        op->cast_params = op->params;
    }
    *hw = hout;
}

static void batch_norm(builder *b, double elems, double channels)
{
    /* Training BN reads its input twice (statistics, normalise) and writes once; keeps the input. */
    eci_op *op = mem(b, "batch_norm", elems, 3.0 * b->act, elems * b->act);
    if (op != NULL) {
        op->params = 2.0 * channels;
        op->param_tensors = 2;
    }
}

static void resnet(builder *b, const eci_net *net, double n)
{
    double hw = b->sh->image_size, c = 64;
    conv(b, "stem_conv", n, &hw, 3, 64, 7, 2, 1, 1);
    batch_norm(b, n * hw * hw * 64, 64);
    mem(b, "relu", n * hw * hw * 64, 2.0 * b->act, 0);
    double hin = hw;
    hw = floor((hw + 2.0 - 3.0) / 2.0) + 1.0;
    mem(b, "maxpool", n * hin * hin * 64, b->act, n * hin * hin * 64 * b->act + n * hw * hw * 64 * 8.0);
    static const double widths[] = {64, 128, 256, 512};
    int stage = 0;
    const char *p = net->blocks;
    for (; *p != '\0' && stage < 4; stage++) {
        char *end;
        long blocks = strtol(p, &end, 10);
        p = *end == ';' ? end + 1 : end;
        double w = widths[stage];
        for (long blk = 0; blk < blocks; blk++) {
            double stride = (blk == 0 && stage > 0) ? 2 : 1;
            double h_in = hw;
            conv(b, "conv1x1_a", n, &hw, c, w, 1, 1, 0, 1);
            batch_norm(b, n * hw * hw * w, w);
            mem(b, "relu", n * hw * hw * w, 2.0 * b->act, 0);
            conv(b, "conv3x3", n, &hw, w, w, 3, stride, 0, 1);
            batch_norm(b, n * hw * hw * w, w);
            mem(b, "relu", n * hw * hw * w, 2.0 * b->act, 0);
            conv(b, "conv1x1_b", n, &hw, w, 4 * w, 1, 1, 0, 1);
            batch_norm(b, n * hw * hw * 4 * w, 4 * w);
            if (blk == 0) {
                double hd = h_in;
                conv(b, "downsample", n, &hd, c, 4 * w, 1, stride, 0, 0);
                batch_norm(b, n * hd * hd * 4 * w, 4 * w);
            }
            /* Its output is the next block's input, which that block's convs keep. */
            mem(b, "residual_add_relu", n * hw * hw * 4 * w, 5.0 * b->act, 0);
            c = 4 * w;
        }
    }
    mem(b, "avgpool", n * hw * hw * c, b->act, 0);
    linear(b, "fc", n, c, net->num_classes, 0, 1, 1);
    cross_entropy(b, n, net->num_classes);
}

static void vit(builder *b, const eci_net *net, double n)
{
    double h = net->hidden, p = net->patch, img = b->sh->image_size;
    double patches = floor(img / p) * floor(img / p), seq = patches + 1;
    if (b->amp) {
        cast(b, "cast_in", n * 3 * img * img, 0);
        cast(b, "cast_w", h * 3 * p * p, 0);
    }
    eci_op *op = push(b, "patch_embed", ECI_OP_CONV);
    if (op != NULL) {
        op->m = n * patches;
        op->n = h;
        op->k = 3 * p * p;
        op->tensor_math = b->tensor_math;
        op->saved_bytes = n * 3 * img * img * b->act;
        op->params = h * 3 * p * p + h;
        op->param_tensors = 2;
        op->cast_params = h * 3 * p * p;
    }
    op = mem(b, "cls_pos_embed", n * seq * h, 3.0 * b->f32k, 0);
    if (op != NULL) {
        op->params = h + seq * h;
        op->param_tensors = 2;
    }
    b->layer = 1;
    vit_layer(b, net, n, seq);
    b->layer = 0;
    layer_norm(b, "ln_final", n * seq, h, b->f32k);
    linear(b, "head", n, h, net->num_classes, 1, 1, 1);
    cross_entropy(b, n, net->num_classes);
    b->wl->layers = net->layers;
    b->wl->layer_input_bytes = n * seq * h * b->f32k;
    b->wl->tokens = n;
}

/* The fields eci_op_cost reads, bit for bit: two ops that agree on them cost the same. */
typedef struct cost_key {
    double m, n, k, batch, fwd_bytes, bwd_bytes, params, param_tensors;
    int kind, tensor_math, fwd_kernels, bwd;
} cost_key;

static void cost_key_of(const eci_op *op, cost_key *key)
{
    memset(key, 0, sizeof *key);
    key->m = op->m;
    key->n = op->n;
    key->k = op->k;
    key->batch = op->batch;
    key->fwd_bytes = op->fwd_bytes;
    key->bwd_bytes = op->bwd_bytes;
    key->params = op->params;
    key->param_tensors = op->param_tensors;
    key->kind = op->kind;
    key->tensor_math = op->tensor_math;
    key->fwd_kernels = op->fwd_kernels;
    key->bwd = op->bwd;
}

/* A hash of a key struct of `size` bytes (zeroed padding included), eight bytes at a time
 * (multiply-xorshift mixing); a tail shorter than eight bytes is left out. */
static uint64_t bytes_hash(const void *key, size_t size)
{
    uint64_t h = 0, w;
    const unsigned char *b = (const unsigned char *)key;
    for (size_t i = 0; i + sizeof w <= size; i += sizeof w) {
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 0x9E3779B97F4A7C15u;
        h ^= h >> 29;
    }
    return h;
}

/* Point each op at the first op with the same cost key, through an open-addressing table
 * of op indices (twice ECI_MAX_OPS slots, so it never fills). */
static void find_twins(eci_workload *wl)
{
    enum { SLOTS = 2 * ECI_MAX_OPS };
    size_t table[SLOTS];
    cost_key keys[ECI_MAX_OPS];
    for (size_t s = 0; s < SLOTS; s++)
        table[s] = ECI_MAX_OPS;
    for (size_t i = 0; i < wl->n_ops; i++) {
        cost_key_of(&wl->ops[i], &keys[i]);
        size_t s = (size_t)(bytes_hash(&keys[i], sizeof keys[i]) % SLOTS);
        while (table[s] != ECI_MAX_OPS && memcmp(&keys[table[s]], &keys[i], sizeof keys[i]) != 0)
            s = (s + 1) % SLOTS;
        if (table[s] == ECI_MAX_OPS)
            table[s] = i;
        wl->ops[i].twin = table[s];
    }
}

static void sum_up(eci_workload *wl)
{
    wl->params = 0;
    wl->param_tensors = 0;
    wl->model_flop = 0;
    wl->matmul_params = 0;
    wl->layer_begin = wl->layer_end = 0;
    wl->saved_layer_bytes = wl->saved_other_bytes = 0;
    for (size_t i = 0; i < wl->n_ops; i++) {
        const eci_op *op = &wl->ops[i];
        if (op->layer) {
            if (wl->layer_end == 0)
                wl->layer_begin = i;
            wl->layer_end = i + 1;
            wl->saved_layer_bytes += op->saved_bytes;
        } else {
            wl->saved_other_bytes += op->saved_bytes;
        }
        double reps = op->layer ? wl->layers : 1;
        wl->params += op->params * reps;
        wl->param_tensors += op->param_tensors * reps;
        wl->matmul_params += op->cast_params * reps;
        if (op->kind == ECI_OP_GEMM || op->kind == ECI_OP_CONV || op->kind == ECI_OP_ATTN)
            wl->model_flop += 2.0 * op->m * op->n * op->k * op->batch * reps;
    }
}

int eci_workload_expand(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *sh, eci_workload *wl)
{
    memset(wl, 0, sizeof *wl);
    int p = sh->precision;
    builder b = {.wl = wl, .sh = sh, .mask = sh->mask_bytes};
    b.amp = p == EC_PREC_AMP_FP16 || p == EC_PREC_AMP_BF16;
    int pure16 = p == EC_PREC_BF16 || p == EC_PREC_FP16;
    b.tensor_math = b.amp || pure16;
    b.act = (b.amp || pure16) ? 2.0 : 4.0;
    b.f32k = pure16 ? 2.0 : 4.0;
    wl->layers = 1;
    int rc = EC_OK;
    if (strcmp(net->family, "resnet") == 0) {
        if (task != ECI_TASK_IMAGENET)
            rc = EC_EINVAL;
        else
            resnet(&b, net, sh->batch);
        wl->tokens = sh->batch;
        wl->input_bytes = sh->batch * (3.0 * sh->image_size * sh->image_size * 4.0 + 8.0);
    } else if (strcmp(net->family, "vit") == 0) {
        if (task != ECI_TASK_IMAGENET)
            rc = EC_EINVAL;
        else
            vit(&b, net, sh->batch);
        wl->input_bytes = sh->batch * (3.0 * sh->image_size * sh->image_size * 4.0 + 8.0);
    } else {
        if (task == ECI_TASK_IMAGENET) {
            rc = EC_EINVAL;
        } else {
            double T = sh->batch * sh->seq;
            int decoder = strcmp(net->family, "decoder") == 0;
            if (decoder) {
                eci_op *op = mem(&b, "wte_wpe", T * net->hidden, 3.0 * b.f32k, 0);
                if (op != NULL) {
                    op->params = ((double)net->vocab + net->max_positions) * net->hidden;
                    op->param_tensors = 2;
                    op->bwd_bytes = (double)net->vocab * net->hidden * 8.0;
                }
                dropout(&b, "emb_dropout", T * net->hidden, b.f32k);
            } else {
                encoder_embeddings(&b, net, T);
            }
            b.layer = 1;
            if (decoder)
                decoder_layer(&b, net, sh->batch, sh->seq, sh->seq_sq);
            else
                encoder_layer(&b, net, sh->batch, sh->seq, sh->seq_sq);
            b.layer = 0;
            if (decoder)
                layer_norm(&b, "ln_f", T, net->hidden, b.f32k);
            wl->layers = net->layers;
            rc = task_head(&b, net, task, sh->batch, sh->seq);
            wl->tokens = T;
            wl->layer_input_bytes = T * net->hidden * b.f32k;
            /* input_ids, attention_mask, token_type_ids (int64) plus labels */
            wl->input_bytes = T * 8.0 * (net->type_vocab > 0 ? 3.0 : 2.0) + sh->batch * 16.0 +
                              (task == ECI_TASK_LM || task == ECI_TASK_PRETRAIN ? T * 8.0 : 0);
        }
    }
    if (rc == EC_OK && b.overflow)
        rc = eci_error(ctx, EC_ENOTSUP, "model '%s' expands to more than %d ops", net->id, ECI_MAX_OPS);
    else if (rc != EC_OK)
        rc = eci_error(ctx, EC_EINVAL, "model '%s' (%s) cannot run task '%s'", net->id, net->family,
                       eci_task_name(task));
    if (rc == EC_OK) {
        sum_up(wl);
        find_twins(wl);
    }
    return rc;
}

/* ---- the context's workload cache ------------------------------------------------------ */
/* A sweep predicts many configs that share a network, a task and a shape (all GPUs, all
 * optimizers, all DataLoader settings of one batch size), so the context keeps the last
 * ECI_WL_CACHE_ENTRIES expansions.  The key is everything eci_workload_expand reads: the
 * network (its row in this context's registry, constant once loaded), the task and every
 * field of the shape.  Entries are allocated on first use through the context's allocator
 * and replaced round-robin; nothing else invalidates them because models/ tables cannot be
 * reloaded into a context (ec_ctx_load_models refuses a second load). */
typedef struct wl_key {
    const eci_net *net;
    int task, precision, image_size, eager_attention, gelu_new_kernels;
    double batch, seq, seq_sq, mask_bytes, mlm_frac;
} wl_key;

typedef struct wl_entry {
    wl_key key;
    uint64_t hash;        /* of key: most lookups are told apart without comparing keys */
    eci_workload wl;
} wl_entry;

struct eci_wl_cache {
    wl_entry *entries[ECI_WL_CACHE_ENTRIES];
    size_t next;          /* the slot to replace on the next miss */
    size_t hits, misses;  /* for tests and the speed benchmark */
    unsigned long long serials; /* expansions numbered so far (eci_workload.serial) */
};

static void make_key(const eci_net *net, int task, const eci_shape *sh, wl_key *k)
{
    memset(k, 0, sizeof *k); /* padding bytes too: keys are compared with memcmp */
    k->net = net;
    k->task = task;
    k->precision = sh->precision;
    k->image_size = sh->image_size;
    k->eager_attention = sh->eager_attention;
    k->gelu_new_kernels = sh->gelu_new_kernels;
    k->batch = sh->batch;
    k->seq = sh->seq;
    k->seq_sq = sh->seq_sq;
    k->mask_bytes = sh->mask_bytes;
    k->mlm_frac = sh->mlm_frac;
}

int eci_workload_get(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *sh, const eci_workload **out)
{
    *out = NULL;
    if (ctx->wl_cache == NULL && (ctx->wl_cache = eci_calloc(ctx, 1, sizeof *ctx->wl_cache)) == NULL)
        return EC_ENOMEM;
    struct eci_wl_cache *c = ctx->wl_cache;
    wl_key key;
    make_key(net, task, sh, &key);
    uint64_t hash = bytes_hash(&key, sizeof key);
    for (size_t i = 0; i < ECI_WL_CACHE_ENTRIES && c->entries[i] != NULL; i++)
        if (c->entries[i]->hash == hash && memcmp(&c->entries[i]->key, &key, sizeof key) == 0) {
            c->hits++;
            *out = &c->entries[i]->wl;
            return EC_OK;
        }
    c->misses++;
    size_t slot = c->next;
    if (c->entries[slot] == NULL && (c->entries[slot] = eci_malloc(ctx, sizeof(wl_entry))) == NULL)
        return EC_ENOMEM;
    wl_entry *e = c->entries[slot];
    memset(&e->key, 0, sizeof e->key); /* never matches while it holds no valid expansion */
    int rc = eci_workload_expand(ctx, net, task, sh, &e->wl);
    if (rc != EC_OK)
        return rc;
    e->key = key;
    e->hash = hash;
    e->wl.serial = ++c->serials;
    c->next = (slot + 1) % ECI_WL_CACHE_ENTRIES;
    *out = &e->wl;
    return EC_OK;
}

void eci_workload_cache_stats(const ec_ctx *ctx, size_t *hits, size_t *misses)
{
    *hits = ctx->wl_cache != NULL ? ctx->wl_cache->hits : 0;
    *misses = ctx->wl_cache != NULL ? ctx->wl_cache->misses : 0;
}

void eci_workload_cache_free(ec_ctx *ctx)
{
    if (ctx->wl_cache == NULL)
        return;
    for (size_t i = 0; i < ECI_WL_CACHE_ENTRIES; i++)
        eci_free(ctx, ctx->wl_cache->entries[i], sizeof(wl_entry));
    eci_free(ctx, ctx->wl_cache, sizeof *ctx->wl_cache);
    ctx->wl_cache = NULL;
}

double eci_workload_params(const eci_net *net, int task)
{
    eci_workload wl;
    eci_shape sh = {.precision = EC_PREC_FP32, .batch = 1, .seq = 8, .seq_sq = 64,
                    .image_size = net->image_size > 0 ? net->image_size : 224, .mask_bytes = 1, .mlm_frac = 0.15};
    if (eci_workload_expand(NULL, net, task, &sh, &wl) != EC_OK)
        return 0;
    return wl.params;
}
