/*
 * workload.c: expands a network description (net.c: an ordered list of layers with repeated
 * blocks, and the head of the task) into the ops of one forward micro-step: GEMMs with
 * shapes, convolutions as implicit GEMMs, fused or eager attention, and memory-bound kernels
 * with the bytes they move and the activations they keep for backward.  One expansion serves
 * every network: shapes flow down the list (each layer reads the tensor the one before made).
 * The per-op accounting follows what PyTorch and Hugging Face run in eager mode; for BERT it
 * gives Korthikanti et al.'s 66·sbh + 9·a·s²·b bytes per layer in fp32, about 42·sbh + 7·a·s²·b
 * under autocast (docs/model.md; tests/unit/test_workload.c checks both).  A repeated block is
 * expanded once and recorded with its repetitions (eci_block): predict.c and memory.c multiply.
 */
#include "model/workload.h"
#include "catalog/consts.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the builder's state ---------------------------------------------------------------
 * A tensor is either a token stream (rows = samples x seq, width) or a feature map (n x c x
 * hw x hw).  f32: its elements are in the dtype autocast keeps in fp32 (the residual stream,
 * norms' outputs, embeddings: f32k bytes) rather than the 16-bit GEMM dtype (act bytes); both
 * are 4 in fp32/tf32 and 2 in a pure 16-bit model.  id: which ops read the same tensor, so
 * that it is kept for backward once (Q, K and V read one input). */
typedef struct tensor {
    int image;
    double n, c, hw;
    double rows, width, seq, seq_sq; /* seq: this GPU's share of the sequence (context parallelism);
                                        seq_sq: E[L^2] of the whole sequence */
    double kv_seq;                   /* the whole sequence: the keys attention runs over */
    int f32;
    unsigned id;
} tensor;

#define SAVED_RING 16

typedef struct builder {
    ec_ctx *ctx;
    eci_workload *wl;
    const eci_net *net;
    const eci_shape *sh;
    double act, f32k, mask;
    int amp, tensor_math, eager, flash;
    int core;                /* ops pushed now belong to the attention core (eci_op.attn_core) */
    int freeze;              /* LoRA: ops pushed now own frozen parameters (the base model) */
    int cast_w;              /* autocast casts the weights (fp32 weights under amp; not when they are
                                held 16-bit: FSDP/ZeRO mixed precision) */
    double batch;
    int tp, cp, ep, sp;      /* parallel degrees (1: none); sp: sequence-parallel regions */
    int block, layer;
    tensor cur, skip, memory;
    int has_skip, has_memory;
    unsigned next_id;
    unsigned saved[SAVED_RING]; /* ids of tensors already kept for backward, most recent last */
    size_t n_saved;
    int rc;                  /* first failure (EC_ENOMEM, EC_EINVAL with the message set) */
} builder;

static double tbytes(const builder *b, const tensor *t) { return t->f32 ? b->f32k : b->act; }
static double elems(const tensor *t) { return t->image ? t->n * t->c * t->hw * t->hw : t->rows * t->width; }

static void fresh(builder *b, tensor *t) { t->id = ++b->next_id; }

static int is_saved(const builder *b, unsigned id)
{
    for (size_t i = 0; i < b->n_saved && i < SAVED_RING; i++)
        if (b->saved[i] == id)
            return 1;
    return 0;
}

static void mark_saved(builder *b, unsigned id)
{
    b->saved[b->n_saved++ % SAVED_RING] = id;
}

/* The first shape error wins; it names the layer (index and kind). */
static void shape_error(builder *b, const char *what)
{
    if (b->rc != EC_OK)
        return;
    if (b->layer < (int)b->net->n_layers)
        b->rc = eci_error(b->ctx, EC_EINVAL, "network '%s': layer %d (%s): %s", b->net->id, b->layer + 1,
                          ec_layer_kind_name(b->net->layers[b->layer].kind), what);
    else
        b->rc = eci_error(b->ctx, EC_EINVAL, "network '%s': head: %s", b->net->id, what);
}

/* ---- ops ------------------------------------------------------------------------------- */
static eci_op *push(builder *b, const char *name, eci_op_kind kind)
{
    eci_workload *wl = b->wl;
    if (b->rc != EC_OK)
        return NULL;
    if (wl->n_ops == wl->cap_ops) {
        size_t cap = wl->cap_ops ? 2 * wl->cap_ops : 128;
        eci_op *grown = eci_realloc(b->ctx, wl->ops, wl->cap_ops * sizeof *grown, cap * sizeof *grown);
        if (grown == NULL) {
            b->rc = EC_ENOMEM;
            return NULL;
        }
        wl->ops = grown;
        wl->cap_ops = cap;
    }
    eci_op *op = &wl->ops[wl->n_ops++];
    memset(op, 0, sizeof *op);
    op->name = name;
    op->kind = kind;
    op->fwd_kernels = 1;
    op->count = 1;
    op->bwd = 1;
    op->block = b->block;
    op->layer = b->layer;
    op->batch = 1;
    op->attn_core = b->core;
    op->frozen = b->freeze;
    return op;
}

/* A memory-bound kernel over `n` elements moving `bytes_per_elem` (reads + writes). */
static eci_op *mem(builder *b, const char *name, double n, double bytes_per_elem, double saved_bytes)
{
    eci_op *op = push(b, name, ECI_OP_MEM);
    if (op != NULL) {
        op->fwd_bytes = n * bytes_per_elem;
        op->saved_bytes = saved_bytes;
        /* the output: one element of the stream's dtype, or half the traffic of a one-pass op */
        double e = tbytes(b, &b->cur);
        op->out_bytes = n * (bytes_per_elem / 2.0 < e ? bytes_per_elem / 2.0 : e);
    }
    return op;
}

/* An autocast cast of `n` fp32 elements to 16 bits (read 4, write 2). */
static void cast(builder *b, const char *name, double n, double saved_bytes)
{
    eci_op *op = push(b, name, ECI_OP_CAST);
    if (op != NULL) {
        op->fwd_bytes = n * 6.0;
        op->saved_bytes = saved_bytes;
        op->out_bytes = n * 2.0;
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

/* A collective on the compute stream over a group of the layout (COMM ops are priced with
 * the group's rates, compute.c): fwd in the forward, bwd in the backward; hidden: it overlaps
 * the op before it (ring attention). */
static void comm(builder *b, const char *name, int group, int fwd, int bwd, double bytes, int hidden)
{
    eci_op *op = push(b, name, ECI_OP_COMM);
    if (op != NULL) {
        op->group = group;
        op->fwd_coll = fwd;
        op->bwd_coll = bwd;
        op->comm_bytes = bytes;
        op->hidden = hidden;
        op->fwd_kernels = fwd != ECI_COLL_NONE;
        op->bwd = bwd != ECI_COLL_NONE;
    }
}

/* Megatron's tensor-parallel region around a block (attention, MLP, a vocabulary head): on
 * entry the stream is gathered from its sequence shards (sequence parallelism: all-gather,
 * reduce-scatter of its gradient) or copied (an all-reduce of its gradient in backward); on
 * exit the partial outputs are reduced (all-reduce, or reduce-scatter back to the shards). */
static void tp_enter(builder *b)
{
    if (b->tp <= 1)
        return;
    double full = b->cur.rows * (b->sp ? b->tp : 1);
    /* Megatron's regions communicate the compute dtype: its (TE) norms hand bf16 to the linears */
    double bytes = full * b->cur.width * b->act;
    if (b->sp) {
        comm(b, "tp_allgather", ECI_GROUP_TP, ECI_COLL_ALLGATHER, ECI_COLL_REDUCE_SCATTER, bytes, 0);
        b->cur.rows = full;
        fresh(b, &b->cur);
    } else {
        comm(b, "tp_copy", ECI_GROUP_TP, ECI_COLL_NONE, ECI_COLL_ALLREDUCE, bytes, 0);
    }
}

static void tp_exit(builder *b)
{
    if (b->tp <= 1)
        return;
    double bytes = b->cur.rows * b->cur.width * b->act;
    if (b->sp) {
        comm(b, "tp_reduce_scatter", ECI_GROUP_TP, ECI_COLL_REDUCE_SCATTER, ECI_COLL_ALLGATHER, bytes, 0);
        b->cur.rows /= b->tp;
    } else {
        comm(b, "tp_allreduce", ECI_GROUP_TP, ECI_COLL_ALLREDUCE, ECI_COLL_NONE, bytes, 0);
    }
    fresh(b, &b->cur);
}

/* This GPU's share of a dimension the tensor-parallel group splits (heads, FFN, vocabulary);
 * a dimension it does not divide is a shape error naming tp. */
static double tp_share(builder *b, double whole, const char *what)
{
    if (b->tp <= 1)
        return whole;
    if (fmod(whole, b->tp) != 0) {
        char why[160];
        snprintf(why, sizeof why, "tp=%d must divide %s (%.0f)", b->tp, what, whole);
        shape_error(b, why);
        return whole;
    }
    return whole / b->tp;
}

/* Does autocast cast the weights of the ops pushed now?  Not when they are held in 16 bits: FSDP
 * and DeepSpeed mixed precision, or a frozen LoRA base loaded in 16 bits (or dequantized to it). */
static int casts_weights(const builder *b)
{
    return b->cast_w && !(b->freeze && b->sh->base_16);
}

/* Does PEFT put a LoRA adapter on this linear (lora_targets, by the module's role)?  Heads never. */
static int lora_target(const builder *b, const char *name)
{
    static const char *const qv[] = {"q", "v", "qkv"}, *const attn[] = {"k", "attn_out"},
                             *const mlp[] = {"gate", "up", "mlp_in", "mlp_out"};
    if (b->sh->lora_r <= 0 || b->layer >= (int)b->net->n_layers)
        return 0;
    int t = b->sh->lora_targets, hit = 0;
    for (size_t i = 0; i < 3; i++)
        hit |= strcmp(name, qv[i]) == 0;
    for (size_t i = 0; i < 2 && t >= EC_LORA_ATTENTION; i++)
        hit |= strcmp(name, attn[i]) == 0;
    for (size_t i = 0; i < 4 && t >= EC_LORA_ATTENTION_MLP; i++)
        hit |= strcmp(name, mlp[i]) == 0;
    return hit || t == EC_LORA_ALL_LINEAR;
}

/* A quantized frozen weight of n elements (QLoRA) is dequantized to 16 bits before every use:
 * in the forward and again for the input gradient (bitsandbytes' matmul_4bit). */
static int dequant(builder *b, const char *name, double n)
{
    if (b->sh->base_quant_bytes <= 0 || !b->freeze || b->layer >= (int)b->net->n_layers)
        return 0; /* bitsandbytes leaves the output head unquantized */
    eci_op *op = mem(b, name, n, b->sh->base_quant_bytes + 2.0, 0);
    if (op != NULL)
        op->bwd_bytes = op->fwd_bytes;
    return 1;
}

/* LoRA's adapter beside a frozen linear (rows x in -> out): x A^T B^T x scaling added to the
 * base output.  A keeps its input (the base's, already kept), B keeps A's output; under autocast
 * PEFT's fp32 adapter weights are cast like any other. */
static void lora_adapter(builder *b, double rows, double in, double out)
{
    double r = b->sh->lora_r;
    int freeze = b->freeze;
    b->freeze = 0;
    if (b->amp) { /* one cast per adapter matrix */
        cast(b, "lora_cast_w", r * (in + out), 0);
        if (b->rc == EC_OK)
            b->wl->ops[b->wl->n_ops - 1].fwd_kernels = 2;
    }
    eci_op *a = gemm(b, "lora_A", rows, r, in, 1, 0);
    if (a != NULL) {
        a->params = in * r;
        a->param_tensors = 1;
    }
    eci_op *bb = gemm(b, "lora_B", rows, out, r, 1, rows * r * b->act);
    if (bb != NULL) {
        bb->params = r * out;
        bb->param_tensors = 1;
    }
    eci_op *add = mem(b, "lora_scale_add", rows * out, 3.0 * b->act, 0);
    if (add != NULL)
        add->fwd_kernels = 2;
    b->freeze = freeze;
}

/* nn.Linear on t (rows x in) -> rows x out.  Under autocast an fp32 input is cast (the copy is
 * what backward keeps), and so is the weight (the autocast weight cache); otherwise the input
 * is kept unless an earlier op keeps the same tensor.  A frozen linear (LoRA's base) keeps its
 * input only for its adapter's weight gradient. */
static eci_op *linear_on(builder *b, const char *name, tensor *t, double out, int bias)
{
    double rows = t->rows, in = t->width, saved = 0;
    int target = lora_target(b, name), keep = !b->freeze || target;
    int cast_w = casts_weights(b);
    if (b->amp && t->f32) {
        cast(b, "cast_in", rows * in, keep ? rows * in * 2.0 : 0);
    } else if (keep && !is_saved(b, t->id)) {
        saved = rows * in * tbytes(b, t);
        mark_saved(b, t->id);
    }
    if (cast_w)
        cast(b, "cast_w", in * out, 0);
    int quant = dequant(b, "dequant_w", in * out);
    eci_op *op = gemm(b, name, rows, out, in, 1, saved);
    if (op == NULL)
        return NULL;
    op->quant = quant;
    op->params = in * out + (bias ? out : 0);
    op->param_tensors = bias ? 2 : 1;
    op->cast_params = cast_w ? in * out : 0;
    op->fp8 = b->layer < (int)b->net->n_layers; /* Transformer Engine's layers; heads stay 16-bit */
    size_t at = b->wl->n_ops - 1;
    if (target) /* (pushing may move the op list) */
        lora_adapter(b, rows, in, out);
    return b->rc == EC_OK ? &b->wl->ops[at] : NULL;
}

/* A linear on the stream: the stream becomes its 16-bit output. */
static eci_op *linear(builder *b, const char *name, double out, int bias)
{
    eci_op *op = linear_on(b, name, &b->cur, out, bias);
    b->cur.width = out;
    b->cur.f32 = 0;
    fresh(b, &b->cur);
    return op;
}

static void dropout(builder *b, const char *name)
{
    if (b->sh->inference) /* model.eval(): nn.Dropout is the identity, no kernel */
        return;
    double n = elems(&b->cur);
    mem(b, name, n, 2.0 * tbytes(b, &b->cur) + b->mask, n * b->mask);
    fresh(b, &b->cur);
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

/* ---- normalisation and activations ------------------------------------------------------ */
/* LayerNorm (autocast runs it in fp32): keeps its input and two fp32 statistics per row.
 * HF's Python RMSNorm (Llama, T5, Gemma) is several eager kernels (constants.csv): pow, mean,
 * rsqrt, the scaling and the weight; it keeps the fp32 input and the normalized product.
 * BatchNorm in training reads its input twice (statistics, normalise) and writes once.
 * A low-precision norm under autocast (llm-foundry's LPLayerNorm/LPRMSNorm) casts an fp32
 * input down first (that copy is what backward keeps) and runs at the 16-bit width: a
 * 16-bit output the next linear reads without a cast. */
static void norm_on(builder *b, const char *name, tensor *t, const ec_norm_layer *nl)
{
    double n = elems(t), e = b->f32k;
    eci_op *op;
    if (nl->low_precision && b->amp && nl->kind != EC_NORM_BATCH) {
        int down = t->f32; /* _cast_if_autocast_enabled(x): a copy only when x is fp32 */
        if (down)
            cast(b, "norm_cast_in", n, n * b->act);
        if (casts_weights(b)) /* and the fp32 weight (and bias) */
            cast(b, "norm_cast_w", (nl->bias ? 2.0 : 1.0) * t->width, 0);
        e = b->act;
        double rows = t->rows, kept = (down ? 0 : n * e) + rows * 8.0;
        if (nl->kind == EC_NORM_RMS) {
            int k = b->sh->rmsnorm_kernels > 0 ? b->sh->rmsnorm_kernels : 1;
            op = mem(b, name, n, b->sh->rmsnorm_passes * e, kept + n * e);
            if (op != NULL)
                op->fwd_kernels = k;
        } else {
            op = mem(b, name, n, 2.0 * e, kept);
        }
        if (op != NULL) {
            op->params = (nl->bias ? 2.0 : 1.0) * t->width;
            op->param_tensors = nl->bias ? 2 : 1;
        }
        t->f32 = 0;
        fresh(b, t);
        return;
    }
    if (nl->kind == EC_NORM_BATCH) {
        op = mem(b, name, n, 3.0 * b->act, n * b->act);
        if (op != NULL) {
            op->params = 2.0 * t->c;
            op->param_tensors = 2;
        }
        t->f32 = 0;
    } else {
        double rows = t->rows, width = t->width;
        if (nl->kind == EC_NORM_RMS) {
            int k = b->sh->rmsnorm_kernels > 0 ? b->sh->rmsnorm_kernels : 1;
            op = mem(b, name, n, b->sh->rmsnorm_passes * e, 2.0 * n * e + 2.0 * rows * 4.0);
            if (op != NULL)
                op->fwd_kernels = k;
        } else {
            if (b->amp && !t->f32) /* autocast runs layer_norm in fp32: a 16-bit input is copied up first */
                cast(b, "norm_cast_up", n, 0);
            op = mem(b, name, n, 2.0 * e, n * e + rows * 8.0);
        }
        if (op != NULL) {
            op->params = (nl->bias ? 2.0 : 1.0) * width;
            op->param_tensors = nl->bias ? 2 : 1;
        }
        t->f32 = 1;
    }
    fresh(b, t);
}

/* Kernels, passes over the elements per kernel, and tensors kept for backward. */
static void act_shape(const builder *b, ec_activation a, int *kernels, double *passes, double *kept)
{
    *kernels = 1;
    *passes = 2.0;
    *kept = 1.0;
    switch (a) {
    case EC_ACT_RELU: /* in place after a convolution: the next op keeps its output */
        *kept = 0.0;
        break;
    case EC_ACT_GELU_TANH: /* GPT-2's gelu_new in Python: each elementwise op reads one or two
                            * tensors and writes one (~2.5 passes); autograd keeps about four */
        *kernels = b->sh->gelu_new_kernels > 0 ? b->sh->gelu_new_kernels : 1;
        *passes = 2.5;
        *kept = 4.0;
        break;
    case EC_ACT_QUICK_GELU: /* x * sigmoid(1.702 x): mul, sigmoid, mul */
        *kernels = 3;
        *passes = 2.5;
        *kept = 2.0;
        break;
    default:
        break;
    }
}

static const char *act_name(ec_activation a)
{
    static const char *const names[] = {"gelu", "gelu_new", "relu", "silu", "tanh", "quick_gelu"};
    return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "act";
}

static void activation(builder *b, ec_activation a)
{
    int k;
    double passes, kept, n = elems(&b->cur), e = tbytes(b, &b->cur);
    act_shape(b, a, &k, &passes, &kept);
    eci_op *op = mem(b, act_name(a), n, k * passes * e, kept * n * e);
    if (op != NULL)
        op->fwd_kernels = k;
    fresh(b, &b->cur);
}

/* ---- attention ---------------------------------------------------------------------------
 * Eager attention as HF runs it (BertSelfAttention, GPT2Attention, LlamaAttention's eager
 * path): explicit s x s scores, scale, mask, softmax (fp32 under autocast), dropout, and two
 * batched GEMMs.  sq, sk: query and key lengths; sk_eff = E[L^2]/L for self-attention under
 * dynamic padding (the quadratic part priced right).  h = heads x head_dim. */
static void attention_eager(builder *b, const ec_attention_layer *a, double heads, double head_dim, double sq,
                            double sk_eff, double rows_q, double rows_k)
{
    double batch = b->batch, h = heads * head_dim;
    double scores = batch * heads * sq * sk_eff;
    gemm(b, "scores", sq, sk_eff, head_dim, batch * heads, (rows_q + rows_k) * h * b->act);
    mem(b, "scale", scores, 2.0 * b->act, 0);
    if (a->softcap) /* scores / cap, tanh, x cap (Gemma 2) */
        mem(b, "softcap", scores, 3.0 * 2.0 * b->act, scores * b->act);
    /* under autocast the additive mask is fp32 (HF builds it in the parameters' dtype): adding
     * it promotes the 16-bit scores to fp32, which the softmax then reads */
    double masked = b->amp ? b->f32k : b->act;
    mem(b, a->causal ? "causal_mask" : "mask_add", scores, b->act + masked, 0);
    /* the softmax's dtype: fp32 under autocast and in fp32, and in a 16-bit model whose code
     * upcasts it (softmax_fp32); then cast back for the matmul */
    double sm = a->softmax_fp32 && b->act < 4.0 ? 4.0 : b->f32k;
    mem(b, "softmax", scores, masked + sm, scores * sm);
    if (a->dropout && !b->sh->inference)
        mem(b, "attn_dropout", scores, 2.0 * sm + b->mask, scores * b->mask);
    double probs_saved = scores * sm;
    if (b->amp || sm > b->act) {
        cast(b, "cast_probs", scores, scores * 2.0);
        probs_saved = 0;
    }
    gemm(b, "context", sq, head_dim, sk_eff, batch * heads, probs_saved + rows_k * h * b->act);
}

/* A fused scaled-dot-product attention kernel (F.scaled_dot_product_attention: HF's "sdpa",
 * torchvision's fast path): the QK^T and PV FLOPs in one kernel, no s x s tensor kept; it
 * keeps Q, K, V, the output and a log-sum-exp per row, and backward recomputes the scores. */
/* The share of the keys FlashAttention visits per query: a causal mask skips the blocks above
 * the diagonal ((s + 1) / 2s of them), a sliding window of w keys visits about w - w^2 / 2s;
 * the ragged edge of each tile is ignored. */
static double flash_keys_frac(const ec_attention_layer *a, double s)
{
    if (a->cross || s <= 1)
        return 1.0;
    double w = a->window > 0 && (double)a->window < s ? (double)a->window : 0;
    if (w > 0)
        return (w - w * w / (2.0 * s)) / s;
    return a->causal ? (s + 1.0) / (2.0 * s) : 1.0;
}

/* The same for torch's SDPA: HF calls it with is_causal=True when it builds no mask (no
 * padding token in the batch), and its flash and memory-efficient kernels then skip the
 * blocks above the diagonal; a padding mask or a sliding window goes in as an explicit mask,
 * which every key block is read against. */
static double sdpa_keys_frac(const builder *b, const ec_attention_layer *a, double s)
{
    if (!b->sh->unpadded || a->window > 0)
        return 1.0;
    return flash_keys_frac(a, s);
}

static void attention_fused(builder *b, double heads, double head_dim, double sq, double sk_eff, double rows_q,
                            double rows_k)
{
    double batch = b->batch, h = heads * head_dim;
    eci_op *op = gemm(b, "sdpa", sq, sk_eff, 2.0 * head_dim, batch * heads,
                      (2.0 * rows_q + 2.0 * rows_k) * h * b->act + rows_q * heads * 4.0);
    if (op != NULL) {
        op->kind = ECI_OP_ATTN;
        op->attn_triton = b->sh->flash_triton;
    }
}

/* Q, K and V projections (one fused GEMM or three), rotary embedding, Q/K norms, the
 * key/value heads repeated for grouped-query attention, the core, and the output projection. */
static void attention(builder *b, const ec_attention_layer *a)
{
    if (a->cross && !b->has_memory) {
        shape_error(b, "cross-attention needs an encoder memory (a DECODER layer before it)");
        return;
    }
    double width = b->cur.width, heads = a->heads, kv = a->kv_heads > 0 ? a->kv_heads : a->heads;
    if (a->head_dim == 0 && fmod(width, heads) != 0) {
        char why[160];
        snprintf(why, sizeof why, "heads (%d) must divide the stream width (%.0f), or head_dim must be given",
                 a->heads, width);
        shape_error(b, why);
        return;
    }
    double hd = a->head_dim > 0 ? a->head_dim : width / heads;
    /* tensor parallelism: this GPU's heads; key/value heads fewer than tp are replicated */
    heads = tp_share(b, heads, "the attention heads");
    kv = kv >= b->tp ? tp_share(b, kv, "the key/value heads") : 1;
    tp_enter(b);
    double q_out = heads * hd, kv_out = kv * hd;
    tensor in = b->cur, *src = a->cross ? &b->memory : &b->cur;
    /* queries: this GPU's share of the sequence; keys: the whole of it (context parallelism) */
    double rows_q = in.rows, rows_k = src->rows, sq = in.seq;
    double sk_eff = a->cross ? src->seq : in.seq_sq / in.kv_seq;
    if (a->qkv_fused && !a->cross) {
        linear_on(b, "qkv", &in, q_out + 2.0 * kv_out, a->qkv_bias);
    } else {
        linear_on(b, "q", &in, q_out, a->qkv_bias);
        linear_on(b, "k", src, kv_out, a->qkv_bias);
        linear_on(b, "v", src, kv_out, a->qkv_bias);
    }
    if (a->qk_norm) { /* RMSNorm over each head of Q and K (Qwen3): weights of head_dim each */
        tensor q = {.rows = rows_q * heads, .width = hd}, k = {.rows = rows_k * kv, .width = hd};
        ec_norm_layer rms = {.kind = EC_NORM_RMS};
        norm_on(b, "q_norm", &q, &rms);
        norm_on(b, "k_norm", &k, &rms);
    }
    if (a->position == EC_POS_ROPE && !a->cross) {
        /* apply_rotary_pos_emb on Q and K: mul by cos, rotate_half (neg, cat), mul by sin,
         * add: about two passes per kernel; autograd keeps Q, K and their rotations */
        double n = rows_q * q_out + rows_k * kv_out;
        eci_op *op = mem(b, "rope", n, b->sh->rope_kernels * b->act, 2.0 * n * b->act);
        if (op != NULL)
            op->fwd_kernels = b->sh->rope_kernels > 0 ? b->sh->rope_kernels : 1;
    }
    if (a->position == EC_POS_RELATIVE && a->rel_buckets > 0) {
        /* T5: the bucketed bias is computed once (first layer) and added in every layer */
        eci_op *op = mem(b, "rel_bias", heads * in.seq * sk_eff, 2.0 * b->f32k, 0);
        if (op != NULL) {
            op->params = (double)a->rel_buckets * heads;
            op->param_tensors = 1;
        }
    }
    if (kv < heads && !b->flash) { /* HF's repeat_kv: K and V expanded to every query head (a copy each);
                                    * FlashAttention reads the grouped heads in place */
        mem(b, "repeat_kv", 2.0 * rows_k * q_out, 2.0 * b->act, 0);
    }
    b->core = 1;
    if (b->eager)
        attention_eager(b, a, heads, hd, sq, sk_eff, rows_q, rows_k);
    else
    {
        attention_fused(b, heads, hd, sq, b->flash ? sk_eff * flash_keys_frac(a, in.kv_seq) : sk_eff, rows_q, rows_k);
        /* SDPA's causal skipping is priced in time only: the model's FLOPs (MFU, HFU) count
         * the whole s x s square, as Narayanan et al. and PaLM do */
        eci_op *last = b->rc == EC_OK && b->wl->n_ops > 0 ? &b->wl->ops[b->wl->n_ops - 1] : NULL;
        if (!b->flash && last != NULL && last->kind == ECI_OP_ATTN)
            last->attn_keys_frac = sdpa_keys_frac(b, a, in.kv_seq);
    }
    b->core = 0;
    if (b->cp > 1 && !a->cross) /* ring attention: the other GPUs' keys and values pass by while the
                                  * local blocks compute (backward: again, and their gradients back) */
        comm(b, "cp_kv_ring", ECI_GROUP_CP, ECI_COLL_ALLGATHER, ECI_COLL_ALLGATHER, 2.0 * rows_k * b->cp * kv_out * b->act,
             1);
    mem(b, "merge_heads", rows_q * q_out, 2.0 * b->act, 0);
    b->cur.width = q_out;
    b->cur.f32 = 0;
    fresh(b, &b->cur);
    linear(b, "attn_out", width, a->out_bias);
    tp_exit(b);
}

/* ---- feed-forward blocks ------------------------------------------------------------------ */
/* up (and gate), activation, down on this GPU's ffn columns. */
static void mlp_body(builder *b, const ec_mlp_layer *m, double ffn)
{
    double width = b->cur.width;
    if (m->gated) { /* down(act(gate(x)) * up(x)): the product keeps both of its inputs */
        tensor in = b->cur;
        linear(b, "gate", ffn, m->bias);
        activation(b, m->act);
        linear_on(b, "up", &in, ffn, m->bias);
        double n = elems(&b->cur);
        mem(b, "gate_mul", n, 3.0 * b->act, 2.0 * n * b->act);
        fresh(b, &b->cur);
    } else {
        linear(b, "mlp_in", ffn, m->bias);
        activation(b, m->act);
    }
    if (m->dropout)
        dropout(b, "mlp_dropout");
    linear(b, "mlp_out", width, m->bias);
}

static void mlp(builder *b, const ec_mlp_layer *m)
{
    double ffn = tp_share(b, (double)m->ffn, "the MLP width (ffn)");
    tp_enter(b);
    mlp_body(b, m, ffn);
    tp_exit(b);
}

/* A mixture-of-experts block as HF's eager code runs it (MixtralSparseMoeBlock,
 * Qwen2MoeSparseMoeBlock): a router, a softmax in fp32 and top-k, then a Python loop over the
 * experts, each gathering its tokens, running its MLP and scattering the weighted result back.
 * Tokens are taken as spread evenly over the experts.  Expert parallelism (ep): this GPU holds
 * experts/ep of them, and two all-to-alls over the expert group carry every token-expert pair
 * to its expert's GPU and back; each local expert then sees rows x top_k x ep / experts rows.
 * Tensor parallelism splits each expert's inner width as it splits an MLP's. */
static void moe(builder *b, const ec_moe_layer *m)
{
    if (fmod(m->experts, b->ep) != 0) {
        char why[96];
        snprintf(why, sizeof why, "ep=%d must divide the experts (%d)", b->ep, m->experts);
        shape_error(b, why);
        return;
    }
    double ffn = tp_share(b, (double)m->ffn, "the experts' width (ffn)");
    tp_enter(b);
    tensor in = b->cur;
    double width = in.width, rows = in.rows, E = m->experts, k = m->top_k, local = E / b->ep;
    double per = rows * k / local;
    linear_on(b, "router", &in, E, 0);
    mem(b, "router_softmax_topk", rows * E, 2.0 * b->f32k + 2.0 * b->act, rows * E * b->f32k);
    double pairs = rows * k * width * b->act; /* the token-expert pairs' activations */
    if (b->ep > 1)
        comm(b, "ep_dispatch", ECI_GROUP_EP, ECI_COLL_ALLTOALL, ECI_COLL_ALLTOALL, pairs, 0);
    /* one expert's work, launched once per local expert */
    size_t first = b->wl->n_ops;
    double x = per * width;
    mem(b, "expert_gather", x, 2.0 * tbytes(b, &in), x * b->act);
    double up_n = m->gated ? 2.0 : 1.0;
    int quant = dequant(b, "expert_dequant_w", (up_n + 1.0) * width * ffn);
    if (b->amp) { /* the gathered fp32 tokens and the expert's weights (autocast's weight cache) */
        if (in.f32)
            cast(b, "expert_cast_in", x, 0);
        if (casts_weights(b))
            cast(b, "expert_cast_w", (up_n + 1.0) * width * ffn, 0);
    }
    eci_op *op = gemm(b, "expert_up", per, up_n * ffn, width, 1, 0);
    if (op != NULL) {
        op->params = up_n * width * ffn;
        op->param_tensors = up_n;
        op->cast_params = casts_weights(b) ? op->params : 0;
        op->quant = quant;
    }
    int kernels;
    double passes, kept;
    act_shape(b, m->act, &kernels, &passes, &kept);
    eci_op *a = mem(b, "expert_act", per * ffn, kernels * passes * b->act + (m->gated ? 3.0 * b->act : 0),
                    (kept + (m->gated ? 2.0 : 0)) * per * ffn * b->act);
    if (a != NULL)
        a->fwd_kernels = kernels + (m->gated ? 1 : 0);
    eci_op *down = gemm(b, "expert_down", per, width, ffn, 1, per * ffn * b->act);
    if (down != NULL) {
        down->params = ffn * width;
        down->param_tensors = 1;
        down->cast_params = casts_weights(b) ? down->params : 0;
        down->quant = quant;
    }
    mem(b, "expert_scatter", x, 3.0 * b->act, x * b->act);
    for (size_t i = first; b->rc == EC_OK && i < b->wl->n_ops; i++) {
        b->wl->ops[i].count = (int)local;
        b->wl->ops[i].expert = 1;
    }
    if (b->ep > 1)
        comm(b, "ep_combine", ECI_GROUP_EP, ECI_COLL_ALLTOALL, ECI_COLL_ALLTOALL, pairs, 0);
    b->cur = in;
    b->cur.f32 = 0;
    fresh(b, &b->cur);
    if (m->shared_experts > 0) { /* Qwen-MoE: a dense expert every token goes through */
        tensor moe_out = b->cur;
        b->cur = in;
        ec_mlp_layer sm = {.ffn = m->shared_ffn, .act = m->act, .gated = m->gated};
        mlp_body(b, &sm, tp_share(b, (double)m->shared_ffn, "the shared experts' width"));
        if (m->shared_gate) {
            linear_on(b, "shared_gate", &in, 1, 0);
            mem(b, "shared_gate_mul", rows * width, 3.0 * b->act, rows * width * b->act);
        }
        mem(b, "moe_add", rows * width, 3.0 * b->act, 0);
        b->cur = moe_out;
        fresh(b, &b->cur);
    }
    tp_exit(b);
}

/* ---- embeddings, patches, convolutions, pooling ---------------------------------------- */
/* A frozen embedding (LoRA) gets no gradient: nothing from first to the end runs a backward. */
static void no_backward_from(builder *b, size_t first)
{
    if (!b->freeze || b->rc != EC_OK)
        return;
    for (size_t i = first; i < b->wl->n_ops; i++) {
        b->wl->ops[i].bwd = 0;
        b->wl->ops[i].bwd_coll = ECI_COLL_NONE;
    }
}

static void embedding(builder *b, const ec_embedding_layer *e)
{
    size_t first = b->wl->n_ops;
    /* the lookups return the tables' dtype: fp32, or 16 bits when the weights are held in 16 bits
     * (FSDP MixedPrecision, DeepSpeed, a 16-bit frozen LoRA base), and the residual stream stays so */
    int f32 = casts_weights(b) || !b->amp;
    double full = b->has_memory ? b->sh->target_seq : b->sh->seq, h = (double)e->dim, f = f32 ? b->f32k : b->act;
    double seq = full / b->cp, T = b->batch * seq; /* context parallelism: this GPU's share */
    b->cur = (tensor){.rows = T, .width = h, .seq = seq, .seq_sq = b->has_memory ? full * full : b->sh->seq_sq,
                      .kv_seq = full, .f32 = f32};
    /* tensor parallelism: Megatron's vocabulary-parallel embedding (each GPU a slice of rows) */
    double V = ceil((double)e->vocab / b->tp), P = (double)e->positions, Tv = (double)e->type_vocab;
    eci_op *op;
    if (e->fused) { /* GPT-2: wte and wpe gathered and added in one pass */
        op = mem(b, "wte_wpe", T * h, 3.0 * f, 0);
        if (op != NULL) {
            op->params = e->shared ? 0 : (V + P) * h;
            op->param_tensors = e->shared ? 0 : (P > 0 ? 2 : 1);
            op->bwd_bytes = V * h * 8.0;
        }
    } else {
        op = mem(b, "word_emb", T * h, 2.0 * f, 0);
        if (op != NULL) {
            op->params = e->shared ? 0 : V * h;
            op->param_tensors = e->shared ? 0 : 1;
            /* Backward writes a dense vocab x hidden gradient (zero fill + index_add). */
            op->bwd_bytes = V * h * 4.0 * 2.0 + T * h * f;
        }
        if (P > 0 && (op = mem(b, "pos_emb", T * h, 2.0 * f, 0)) != NULL) {
            op->params = P * h;
            op->param_tensors = 1;
        }
        if (Tv > 0 && (op = mem(b, "type_emb", T * h, 3.0 * f, 0)) != NULL) {
            op->params = Tv * h;
            op->param_tensors = 1;
        }
        if (P > 0 || Tv > 0)
            mem(b, "emb_add", T * h, 3.0 * f, 0);
    }
    if (e->scale) /* Gemma: x sqrt(hidden) */
        mem(b, "emb_scale", T * h, 2.0 * f, 0);
    if (b->tp > 1) { /* each GPU looked up its slice: the partial sums are reduced (to the shards) */
        int sp = b->sp;
        comm(b, sp ? "tp_emb_reduce_scatter" : "tp_emb_allreduce", ECI_GROUP_TP,
             sp ? ECI_COLL_REDUCE_SCATTER : ECI_COLL_ALLREDUCE, sp ? ECI_COLL_ALLGATHER : ECI_COLL_NONE, T * h * b->act,
             0);
        if (sp)
            b->cur.rows = T / b->tp;
    }
    no_backward_from(b, first);
    fresh(b, &b->cur);
}

static void conv2d_on(builder *b, tensor *t, const ec_conv2d_layer *c, const char *name)
{
    double k = c->kernel, s = c->stride > 0 ? c->stride : 1, pad = c->padding >= 0 ? c->padding : floor(k / 2.0);
    double groups = c->groups > 1 ? c->groups : 1, cin = t->c, cout = (double)c->out, n = t->n, hw = t->hw;
    double hout = floor((hw + 2.0 * pad - k) / s) + 1.0;
    if (hout < 1) {
        shape_error(b, "the kernel is larger than the padded feature map");
        return;
    }
    double w = cout * cin / groups * k * k;
    if (b->amp) {
        if (t->f32) /* the fp32 image */
            cast(b, "cast_in", n * hw * hw * cin, 0);
        if (casts_weights(b))
            cast(b, "cast_w", w, 0);
    }
    eci_op *op = push(b, name, ECI_OP_CONV);
    if (op != NULL) {
        op->m = n * hout * hout;
        op->n = cout / groups;
        op->k = cin / groups * k * k;
        op->batch = groups;
        op->tensor_math = b->tensor_math;
        op->saved_bytes = is_saved(b, t->id) ? 0 : n * hw * hw * cin * b->act;
        op->params = w + (c->bias ? cout : 0);
        op->param_tensors = c->bias ? 2 : 1;
        op->cast_params = casts_weights(b) ? w : 0;
        /* NCHW on tensor cores: cuDNN's kernels read NHWC (xmma ..._nhwckrsc_nchw writes the
         * NCHW output itself), so the input is transposed in the forward; the backward
         * transposes the output's gradient and the input (wgrad) and the data gradient back
         * (constants.csv cudnn_nchw_transposes_*); each transpose reads and writes a tensor */
        if (!b->sh->channels_last) {
            double in = n * hw * hw * cin * b->act, out = n * hout * hout * cout * b->act;
            op->layout_bytes = 2.0 * in;
            op->layout_bwd_bytes = 2.0 * (2.0 * in + out);
        }
    }
    mark_saved(b, t->id);
    t->c = cout;
    t->hw = hout;
    t->f32 = 0;
    fresh(b, t);
}

/* Class tokens and learned positions added to a feature map turned into tokens (ViT):
 * torch.cat and the position add, in fp32 (the class token is an fp32 parameter). */
static void patches(builder *b, const ec_patches_layer *p)
{
    if (!b->cur.image) {
        shape_error(b, "PATCHES needs a feature map (a CONV2D before it)");
        return;
    }
    double n = b->cur.n, h = b->cur.c, seq = b->cur.hw * b->cur.hw + p->cls_tokens;
    eci_op *op = mem(b, "cls_pos_embed", n * seq * h, 3.0 * b->f32k, 0);
    if (op != NULL) {
        op->params = p->cls_tokens * h + (p->positions ? seq * h : 0);
        op->param_tensors = (p->cls_tokens > 0) + (p->positions != 0);
    }
    b->cur = (tensor){.rows = n * seq, .width = h, .seq = seq, .seq_sq = seq * seq, .kv_seq = seq, .f32 = 1};
    fresh(b, &b->cur);
}

static void pool(builder *b, const ec_pool_layer *p)
{
    tensor *t = &b->cur;
    if (!t->image) {
        shape_error(b, "POOL needs a feature map");
        return;
    }
    double in = elems(t), e = tbytes(b, t);
    if (p->kind == EC_POOL_AVG_GLOBAL) {
        mem(b, "avgpool", in, e, 0);
        *t = (tensor){.rows = t->n, .width = t->c, .seq = 1, .seq_sq = 1, .kv_seq = 1, .f32 = t->f32};
    } else {
        double k = p->kernel, s = p->stride > 0 ? p->stride : 1, pad = p->padding;
        double hout = floor((t->hw + 2.0 * pad - k) / s) + 1.0;
        if (hout < 1) {
            shape_error(b, "the pooling window is larger than the padded feature map");
            return;
        }
        double out = t->n * t->c * hout * hout;
        mem(b, "maxpool", in, e, in * e + out * 8.0); /* keeps its input and the argmax indices */
        t->hw = hout;
    }
    fresh(b, t);
}

/* stream = branch + saved (+ relu): reads both, writes one; relu in place reads and writes. */
static void residual(builder *b, const ec_residual_layer *r)
{
    if (r->op == EC_RESIDUAL_SAVE) {
        b->skip = b->cur;
        b->has_skip = 1;
        return;
    }
    if (!b->has_skip) {
        shape_error(b, "RESIDUAL add without a saved tensor (a RESIDUAL save before the branch)");
        return;
    }
    tensor *c = &b->cur, *s = &b->skip;
    if (c->image != s->image || elems(c) != elems(s)) {
        shape_error(b, "RESIDUAL add of tensors of different shapes (a projection on the skip path is missing)");
        return;
    }
    int out_f32 = c->f32 || s->f32;
    double n = elems(c), out_e = out_f32 ? b->f32k : b->act;
    int relu = r->op == EC_RESIDUAL_ADD_RELU;
    mem(b, relu ? "residual_add_relu" : "residual_add", n,
        tbytes(b, c) + 2.0 * tbytes(b, s) + (relu ? 2.0 * out_e : 0), 0);
    c->f32 = out_f32;
    b->has_skip = 0;
    fresh(b, c);
}

/* encoder-decoder: the encoder's output becomes the memory every cross-attention reads (kept
 * once for backward, by a marker that launches nothing), and the decoder stream starts. */
static void decoder(builder *b)
{
    b->memory = b->cur;
    b->has_memory = 1;
    b->has_skip = 0;
    eci_op *op = mem(b, "encoder_out", 0, 0, elems(&b->memory) * tbytes(b, &b->memory));
    if (op != NULL) {
        op->fwd_kernels = 0;
        op->bwd = 0;
    }
    mark_saved(b, b->memory.id);
}

/* ---- one layer, and the list ------------------------------------------------------------- */
static void layer(builder *b, const ec_layer *l)
{
    tensor *t = l->on_skip ? &b->skip : &b->cur;
    if (l->on_skip && !b->has_skip) {
        shape_error(b, "on_skip with no saved tensor (a RESIDUAL save before it)");
        return;
    }
    int text_kind = l->kind == EC_LAYER_LINEAR || l->kind == EC_LAYER_ATTENTION || l->kind == EC_LAYER_MLP ||
                    l->kind == EC_LAYER_MOE;
    if (text_kind && t->image) {
        shape_error(b, "needs a token stream, not a feature map (PATCHES or POOL before it)");
        return;
    }
    if (l->kind == EC_LAYER_CONV2D && !t->image) {
        shape_error(b, "CONV2D needs a feature map, not a token stream");
        return;
    }
    switch (l->kind) {
    case EC_LAYER_EMBEDDING: embedding(b, &l->u.embedding); break;
    case EC_LAYER_PATCHES: patches(b, &l->u.patches); break;
    case EC_LAYER_LINEAR: linear(b, "linear", (double)l->u.linear.out, l->u.linear.bias); break;
    case EC_LAYER_CONV2D: conv2d_on(b, t, &l->u.conv2d, l->on_skip ? "downsample" : "conv"); break;
    case EC_LAYER_NORM: norm_on(b, l->u.norm.kind == EC_NORM_BATCH ? "batch_norm" : "norm", t, &l->u.norm); break;
    case EC_LAYER_ATTENTION: attention(b, &l->u.attention); break;
    case EC_LAYER_MLP: mlp(b, &l->u.mlp); break;
    case EC_LAYER_MOE: moe(b, &l->u.moe); break;
    case EC_LAYER_ACTIVATION: activation(b, l->u.activation.act); break;
    case EC_LAYER_DROPOUT: dropout(b, "dropout"); break;
    case EC_LAYER_RESIDUAL: residual(b, &l->u.residual); break;
    case EC_LAYER_POOL: pool(b, &l->u.pool); break;
    case EC_LAYER_DECODER: decoder(b); break;
    case EC_LAYER_REPEAT: break; /* handled by expand_list */
    }
}

/* The dtype may differ: ALBERT's first layer reads the 16-bit output of the embedding
 * projection, the others the fp32 stream; every repetition is priced like the first. */
static int same_shape(const tensor *a, const tensor *b)
{
    return a->image == b->image && a->n == b->n && a->c == b->c && a->hw == b->hw && a->rows == b->rows &&
           a->width == b->width && a->seq == b->seq;
}

static void add_block(builder *b, size_t begin, const ec_repeat_layer *r, double input_elems, double input_bytes)
{
    eci_workload *wl = b->wl;
    if (wl->n_blocks == wl->cap_blocks) {
        size_t cap = wl->cap_blocks ? 2 * wl->cap_blocks : 16;
        eci_block *grown = eci_realloc(b->ctx, wl->blocks, wl->cap_blocks * sizeof *grown, cap * sizeof *grown);
        if (grown == NULL) {
            b->rc = EC_ENOMEM;
            return;
        }
        wl->blocks = grown;
        wl->cap_blocks = cap;
    }
    wl->blocks[wl->n_blocks++] = (eci_block){.begin = begin, .end = wl->n_ops, .reps = r->times,
                                             .shared_params = r->shared_params, .checkpoint = r->checkpoint,
                                             .input_bytes = input_bytes, .input_elems = input_elems};
}

/* Layers [from, to) of the description.  A REPEAT at the top level becomes a block expanded
 * once; a REPEAT inside a block is unrolled (the outer block is what repeats). */
static void expand_list(builder *b, size_t from, size_t to, int depth)
{
    const ec_layer *L = b->net->layers;
    for (size_t i = from; i < to && b->rc == EC_OK; i++) {
        b->layer = (int)i;
        if (L[i].kind != EC_LAYER_REPEAT) {
            layer(b, &L[i]);
            continue;
        }
        const ec_repeat_layer *r = &L[i].u.repeat;
        size_t body = i + 1, end = i + 1 + (size_t)r->layers;
        if (depth > 0) {
            for (int k = 0; k < r->times && b->rc == EC_OK; k++)
                expand_list(b, body, end, depth + 1);
        } else {
            tensor before = b->cur;
            int had_skip = b->has_skip;
            size_t begin = b->wl->n_ops;
            b->block = (int)b->wl->n_blocks;
            expand_list(b, body, end, 1);
            b->layer = (int)i;
            if (b->rc == EC_OK && (!same_shape(&before, &b->cur) || had_skip != b->has_skip))
                shape_error(b, "a repeated block must leave the tensor as it found it (its shape, no residual left open)");
            if (b->rc == EC_OK)
                add_block(b, begin, r, elems(&before), elems(&before) * tbytes(b, &before));
            b->block = -1;
        }
        i = end - 1;
    }
}

/* ---- heads -------------------------------------------------------------------------------- */
/* The first token of every sample (a view; the next op keeps it as a new tensor). */
static void first_token(builder *b)
{
    b->cur.rows = b->batch;
    b->cur.seq = b->cur.seq_sq = b->cur.kv_seq = 1;
    fresh(b, &b->cur);
}

/* BERT's pooler (dense + tanh on the first token), then a classifier. */
static void pooled_classifier(builder *b, const char *name, double classes)
{
    first_token(b);
    linear(b, "pooler", b->cur.width, 1);
    activation(b, EC_ACT_TANH);
    linear(b, name, classes, 1);
    cross_entropy(b, b->batch, classes);
}

/* dense + GELU + LayerNorm before a vocabulary projection (BertLMPredictionHead). */
static void mlm_transform(builder *b, const ec_head *hd)
{
    ec_norm_layer ln = {.kind = EC_NORM_LAYER, .bias = 1};
    linear(b, "mlm_transform", hd->transform > 0 ? (double)hd->transform : b->cur.width, 1);
    activation(b, EC_ACT_GELU);
    norm_on(b, "mlm_ln", &b->cur, &ln);
}

/* A vocabulary projection: a tied weight is the embedding's (only a bias of its own). */
static void vocab_projection(builder *b, const ec_head *hd, double V)
{
    eci_op *op = linear(b, "lm_head", V, hd->bias);
    if (op != NULL && hd->tied) {
        op->params = hd->bias ? V : 0;
        op->param_tensors = hd->bias ? 1 : 0;
        op->tied = 1;
    }
}

/* Megatron's vocabulary-parallel cross entropy: each GPU's slice of the logits, then the
 * row maxima, sums of exponentials and target logits reduced over the tensor-parallel group
 * (three fp32 numbers per row). */
static void vocab_parallel_loss(builder *b, double rows)
{
    if (b->tp > 1)
        comm(b, "tp_vocab_loss", ECI_GROUP_TP, ECI_COLL_ALLREDUCE, ECI_COLL_NONE, rows * 12.0, 0);
}

static double vocab_of(const eci_net *net)
{
    for (size_t i = 0; i < net->n_layers; i++)
        if (net->layers[i].kind == EC_LAYER_EMBEDDING)
            return (double)net->layers[i].u.embedding.vocab;
    return 0;
}

static void head(builder *b, const ec_head *hd)
{
    b->layer = (int)b->net->n_layers;
    /* LoRA: a new task head is trained whole (PEFT's modules_to_save), a vocabulary head stays frozen */
    if (hd->kind != EC_HEAD_CAUSAL_LM && hd->kind != EC_HEAD_MASKED_LM && hd->kind != EC_HEAD_PRETRAIN)
        b->freeze = 0;
    double V = vocab_of(b->net), C = (double)hd->classes;
    int needs_tokens = hd->kind != EC_HEAD_IMAGE_CLASSIFY || !hd->pool;
    if (needs_tokens && b->cur.image) {
        shape_error(b, "this head needs a token stream; the network ends in a feature map");
        return;
    }
    if ((hd->kind == EC_HEAD_CAUSAL_LM || hd->kind == EC_HEAD_MASKED_LM || hd->kind == EC_HEAD_PRETRAIN) && V <= 0) {
        shape_error(b, "a vocabulary head needs an EMBEDDING (the network has no token table)");
        return;
    }
    if (!b->cur.image)
        tp_enter(b); /* the whole stream on every tensor-parallel GPU (gathered under sequence parallelism) */
    tensor trunk = b->cur;
    double T = trunk.rows;
    V = ceil(V / b->tp); /* a vocabulary-parallel projection: this GPU's slice of the logits */
    switch (hd->kind) {
    case EC_HEAD_CLASSIFY:
        if (hd->pooler) {
            pooled_classifier(b, "classifier", C);
        } else { /* decoders score the last token (HF *ForSequenceClassification), no bias */
            first_token(b);
            linear(b, "score", C, hd->bias);
            cross_entropy(b, b->batch, C);
        }
        break;
    case EC_HEAD_SPAN_QA: /* start and end logits for every token */
        linear(b, "qa_outputs", 2, 1);
        mem(b, "split_logits", T * 2, 2.0 * b->act, 0);
        cross_entropy(b, 2.0 * b->batch, trunk.seq);
        break;
    case EC_HEAD_TOKEN_CLASSIFY:
        dropout(b, "dropout");
        linear(b, "classifier", C, 1);
        cross_entropy(b, T, C);
        break;
    case EC_HEAD_PRETRAIN: { /* MLM on the masked positions + NSP on the pooled first token */
        double Tm = ceil(T * b->sh->mlm_frac);
        mem(b, "gather_masked", Tm * trunk.width, 2.0 * b->f32k, 0);
        b->cur.rows = Tm;
        fresh(b, &b->cur);
        mlm_transform(b, hd);
        vocab_projection(b, hd, V);
        cross_entropy(b, Tm, V);
        vocab_parallel_loss(b, Tm);
        b->cur = trunk;
        pooled_classifier(b, "nsp", 2);
        break;
    }
    case EC_HEAD_MASKED_LM:
        mlm_transform(b, hd);
        vocab_projection(b, hd, V);
        cross_entropy(b, T, V);
        vocab_parallel_loss(b, T);
        break;
    case EC_HEAD_CAUSAL_LM:
        vocab_projection(b, hd, V);
        if (hd->fused_loss) { /* xentropy: reads the 16-bit logits once, keeps them and a log-sum-exp
                               * per row; backward reads them and writes their gradient */
            b->wl->output_bytes += T * V * b->act;
            eci_op *op = mem(b, "fused_xentropy", T * V, b->act, T * V * b->act + T * 4.0);
            if (op != NULL)
                op->bwd_bytes = 2.0 * T * V * b->act;
        } else {
            if (!b->has_memory) /* HF shifts the logits of a decoder: a contiguous copy of all of them */
                mem(b, "shift_logits", T * V, 2.0 * b->act, T * V * b->act);
            cross_entropy(b, T, V);
        }
        vocab_parallel_loss(b, T);
        for (int k = 0; k < hd->metric_losses; k++) { /* the trainer's metrics: torch cross-entropy under
                                                        * autocast and no_grad (fp32 copy, log_softmax, nll) */
            size_t first = b->wl->n_ops;
            if (b->amp)
                cast(b, "metric_cast_logits", T * V, 0);
            mem(b, "metric_log_softmax", T * V, 2.0 * b->f32k, 0);
            mem(b, "metric_nll", T, 16.0, 0);
            for (size_t i = first; b->rc == EC_OK && i < b->wl->n_ops; i++)
                b->wl->ops[i].bwd = 0;
        }
        break;
    case EC_HEAD_IMAGE_CLASSIFY:
        if (hd->pool) {
            if (!b->cur.image) {
                shape_error(b, "pool=1 needs a feature map; a token stream uses its class token (pool=0)");
                return;
            }
            ec_pool_layer avg = {.kind = EC_POOL_AVG_GLOBAL};
            pool(b, &avg);
        } else {
            first_token(b);
        }
        linear(b, "head", C, 1);
        cross_entropy(b, b->batch, C);
        break;
    }
}

/* ---- sums, twins ---------------------------------------------------------------------------- */
/* The fields eci_op_cost reads, bit for bit: two ops that agree on them cost the same. */
typedef struct cost_key {
    double m, n, k, batch, fwd_bytes, bwd_bytes, params, param_tensors, comm_bytes, layout_bytes, layout_bwd_bytes,
        attn_keys_frac;
    int kind, tensor_math, fwd_kernels, bwd, count, fwd_coll, bwd_coll, group, hidden, frozen, fp8, attn_triton;
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
    key->layout_bytes = op->layout_bytes;
    key->layout_bwd_bytes = op->layout_bwd_bytes;
    key->kind = op->kind;
    key->tensor_math = op->tensor_math;
    key->fwd_kernels = op->fwd_kernels;
    key->bwd = op->bwd;
    key->count = op->count;
    key->fwd_coll = op->fwd_coll;
    key->bwd_coll = op->bwd_coll;
    key->group = op->group;
    key->hidden = op->hidden;
    key->comm_bytes = op->comm_bytes;
    key->frozen = op->frozen;
    key->fp8 = op->fp8;
    key->attn_triton = op->attn_triton;
    key->attn_keys_frac = op->attn_keys_frac;
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
 * of op indices (twice the ops' count in slots, so it never fills). */
static int find_twins(ec_ctx *ctx, eci_workload *wl)
{
    size_t n = wl->n_ops, slots = 2 * n + 1;
    size_t *table = eci_malloc(ctx, slots * sizeof *table);
    cost_key *keys = table != NULL ? eci_malloc(ctx, n * sizeof *keys) : NULL;
    if (keys == NULL) {
        eci_free(ctx, table, slots * sizeof *table);
        return EC_ENOMEM;
    }
    for (size_t s = 0; s < slots; s++)
        table[s] = n;
    for (size_t i = 0; i < n; i++) {
        cost_key_of(&wl->ops[i], &keys[i]);
        size_t s = (size_t)(bytes_hash(&keys[i], sizeof keys[i]) % slots);
        while (table[s] != n && memcmp(&keys[table[s]], &keys[i], sizeof keys[i]) != 0)
            s = (s + 1) % slots;
        if (table[s] == n)
            table[s] = i;
        wl->ops[i].twin = table[s];
    }
    eci_free(ctx, keys, n * sizeof *keys);
    eci_free(ctx, table, slots * sizeof *table);
    return EC_OK;
}

int eci_net_pipeline_layers(const eci_net *net)
{
    int layers = 0;
    for (size_t i = 0; i < net->n_layers; i++) {
        if (net->layers[i].kind != EC_LAYER_REPEAT)
            continue;
        layers += net->layers[i].u.repeat.times;
        i += (size_t)net->layers[i].u.repeat.layers; /* a nested repeat is unrolled inside its block */
    }
    return layers;
}

/* Layers of [off, off + n) inside [lo, hi). */
static int overlap(int off, int n, int lo, int hi)
{
    int a = off > lo ? off : lo, z = off + n < hi ? off + n : hi;
    return z > a ? z - a : 0;
}

/* Keep the ops of pipeline stage [lo, hi) (Megatron's split of the layers): each block its
 * repetitions inside the range; an op outside the blocks goes with the layer after it (the
 * embeddings with the first stage), the head with the last layer.  A tied projection on a
 * stage without the embedding holds its own copy of the weights (Megatron keeps one on the last
 * stage and all-reduces the two copies' gradients). */
static void keep_stage(eci_workload *wl, int lo, int hi)
{
    int total = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        total += wl->blocks[b].reps;
    size_t out = 0, nb = 0, b = 0, i = 0;
    int off = 0;
    while (i < wl->n_ops) {
        if (b < wl->n_blocks && i == wl->blocks[b].begin) {
            eci_block blk = wl->blocks[b];
            int k = overlap(off, blk.reps, lo, hi);
            off += blk.reps;
            i = blk.end;
            b++;
            if (k == 0)
                continue;
            size_t begin = out;
            for (size_t j = blk.begin; j < blk.end; j++) {
                wl->ops[out] = wl->ops[j];
                wl->ops[out++].block = (int)nb;
            }
            blk.begin = begin;
            blk.end = out;
            blk.reps = k;
            wl->blocks[nb++] = blk; /* nb < b: a block already read */
            continue;
        }
        int owner = b < wl->n_blocks ? off : total - 1;
        if (owner >= lo && owner < hi) {
            wl->ops[out] = wl->ops[i];
            if (wl->ops[out].tied && lo > 0) {
                eci_op *op = &wl->ops[out];
                op->params += op->n * op->k;
                op->param_tensors += 1;
            }
            out++;
        }
        i++;
    }
    wl->n_ops = out;
    wl->n_blocks = nb;
}

static void sum_up(eci_workload *wl)
{
    wl->params = wl->param_tensors = wl->model_flop = wl->matmul_params = 0;
    wl->trainable_params = wl->trainable_tensors = wl->quant_params = wl->frozen_flop = wl->expert_params = 0;
    wl->saved_other_bytes = wl->table_params = 0;
    wl->tied_head = 0;
    wl->comm_begin = wl->comm_end = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        wl->blocks[b].saved_bytes = wl->blocks[b].params = wl->blocks[b].flop = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        wl->blocks[b].core_saved_bytes = wl->blocks[b].core_flop = wl->blocks[b].trainable = 0;
    for (size_t i = 0; i < wl->n_ops; i++) {
        if (wl->ops[i].params <= 0) /* frozen means frozen weights: an op without any computes as usual */
            wl->ops[i].frozen = 0;
        const eci_op *op = &wl->ops[i];
        const eci_block *blk = op->block >= 0 ? &wl->blocks[op->block] : NULL;
        double reps = blk != NULL ? blk->reps : 1, preps = blk != NULL && blk->shared_params ? 1 : reps;
        double saved = op->saved_bytes * op->count;
        if (blk != NULL)
            wl->blocks[op->block].saved_bytes += saved;
        else
            wl->saved_other_bytes += saved;
        /* an op run once per expert owns each expert's weights */
        wl->params += op->params * op->count * preps;
        wl->param_tensors += op->param_tensors * op->count * preps;
        if (!op->frozen) {
            wl->trainable_params += op->params * op->count * preps;
            wl->trainable_tensors += op->param_tensors * op->count * preps;
            if (op->expert)
                wl->expert_params += op->params * op->count * preps;
        } else if (op->quant) {
            wl->quant_params += op->params * op->count * preps;
        }
        wl->matmul_params += op->cast_params * op->count * preps;
        if (op->kind == ECI_OP_MEM && op->bwd_bytes > 0 && op->params > wl->table_params)
            wl->table_params = op->params;
        if (op->kind == ECI_OP_GEMM && op->cast_params > 2.0 * op->params)
            wl->tied_head = 1; /* a projection through a weight it does not own */
        if (op->kind == ECI_OP_COMM) {
            if (wl->comm_end == 0)
                wl->comm_begin = i;
            wl->comm_end = i + 1;
        }
        double flop = 0;
        if (op->kind == ECI_OP_GEMM || op->kind == ECI_OP_CONV || op->kind == ECI_OP_ATTN)
            flop = 2.0 * op->m * op->n * op->k * op->batch * op->count;
        wl->model_flop += flop * reps;
        if (op->kind == ECI_OP_CONV)
            wl->conv_flop += flop * reps;
        if (op->frozen && op->kind != ECI_OP_MEM)
            wl->frozen_flop += flop * reps;
        if (blk != NULL) {
            wl->blocks[op->block].params += op->params * op->count;
            wl->blocks[op->block].trainable += op->frozen ? 0 : op->params * op->count;
            wl->blocks[op->block].flop += flop;
            if (op->attn_core && op->kind != ECI_OP_ATTN) { /* a fused kernel recomputes in its own backward */
                wl->blocks[op->block].core_saved_bytes += saved;
                wl->blocks[op->block].core_flop += flop;
            }
        }
    }
    size_t next = wl->comm_end; /* chain the collectives, last to first */
    for (size_t i = wl->comm_end; i-- > wl->comm_begin;)
        if (wl->ops[i].kind == ECI_OP_COMM) {
            wl->ops[i].next_comm = next;
            next = i;
        }
    wl->loop_block = -1;
    for (size_t b = 0; b < wl->n_blocks && wl->loop_block < 0; b++)
        if (wl->blocks[b].checkpoint)
            wl->loop_block = (int)b;
}

/* Bytes the batch needs on the GPU: input_ids and attention_mask (and token_type_ids) as
 * int64, the labels (per token for LM and token heads), or the images in fp32. */
static double input_bytes(const eci_net *net, const ec_head *hd, const eci_shape *sh)
{
    if (!net->text)
        return sh->batch * (net->image_channels * (double)sh->image_size * sh->image_size * 4.0 + 8.0);
    double T = sh->batch * sh->seq, types = 0;
    for (size_t i = 0; i < net->n_layers; i++)
        if (net->layers[i].kind == EC_LAYER_EMBEDDING && net->layers[i].u.embedding.type_vocab > 0)
            types = 1;
    double Tl = net->encdec ? sh->batch * sh->target_seq : T;
    int per_token = hd->kind == EC_HEAD_CAUSAL_LM || hd->kind == EC_HEAD_MASKED_LM ||
                    hd->kind == EC_HEAD_PRETRAIN || hd->kind == EC_HEAD_TOKEN_CLASSIFY;
    return T * 8.0 * (2.0 + types) + sh->batch * 16.0 + (per_token ? Tl * 8.0 : 0);
}

static const ec_head *find_head(const eci_net *net, int task)
{
    for (size_t i = 0; i < net->n_heads; i++)
        if (eci_task_parse(net->heads[i].task) == task)
            return &net->heads[i];
    return NULL;
}

void eci_workload_release(ec_ctx *ctx, eci_workload *wl)
{
    eci_free(ctx, wl->ops, wl->cap_ops * sizeof *wl->ops);
    eci_free(ctx, wl->blocks, wl->cap_blocks * sizeof *wl->blocks);
    memset(wl, 0, sizeof *wl);
}

int eci_workload_expand(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *sh, eci_workload *wl)
{
    eci_op *ops = wl->ops;
    eci_block *blocks = wl->blocks;
    size_t cap_ops = wl->cap_ops, cap_blocks = wl->cap_blocks;
    memset(wl, 0, sizeof *wl); /* keep the arrays of an earlier expansion */
    wl->ops = ops;
    wl->cap_ops = cap_ops;
    wl->blocks = blocks;
    wl->cap_blocks = cap_blocks;
    const ec_head *hd = find_head(net, task);
    if (hd == NULL)
        return eci_error(ctx, EC_EINVAL, "model '%s' (%s) cannot run task '%s': it has heads for %s", net->id,
                         net->family, eci_task_name(task), net->tasks);
    int p = sh->precision;
    builder b = {.ctx = ctx, .wl = wl, .net = net, .sh = sh, .mask = sh->mask_bytes, .batch = sh->batch,
                 .tp = sh->tp > 1 ? sh->tp : 1, .cp = sh->cp > 1 ? sh->cp : 1, .ep = sh->ep > 1 ? sh->ep : 1,
                 .sp = sh->tp > 1 && sh->sp, .block = -1};
    b.amp = p == EC_PREC_AMP_FP16 || p == EC_PREC_AMP_BF16 || p == EC_PREC_AMP_FP8;
    b.cast_w = b.amp && !sh->weights_16;
    b.freeze = sh->lora_r > 0;
    int pure16 = p == EC_PREC_BF16 || p == EC_PREC_FP16;
    b.tensor_math = b.amp || pure16;
    b.act = (b.amp || pure16) ? 2.0 : 4.0;
    b.f32k = pure16 ? 2.0 : 4.0;
    b.eager = net->attention == EC_NET_ATTN_EAGER || (net->attention == EC_NET_ATTN_CONFIG && sh->eager_attention);
    b.flash = !b.eager && net->attention == EC_NET_ATTN_CONFIG && sh->flash;
    if (!net->text) { /* the fp32 image */
        b.cur = (tensor){.image = 1, .n = sh->batch, .c = net->image_channels, .hw = sh->image_size, .f32 = 1};
        fresh(&b, &b.cur);
    }
    expand_list(&b, 0, net->n_layers, 0);
    if (b.rc == EC_OK && b.has_skip)
        shape_error(&b, "a RESIDUAL save is never added back");
    if (b.rc == EC_OK)
        head(&b, hd);
    if (b.rc != EC_OK)
        return b.rc == EC_ENOMEM ? eci_error(ctx, EC_ENOMEM, "out of memory expanding model '%s'", net->id) : b.rc;
    wl->tokens = net->text ? sh->batch * sh->seq : sh->batch;
    wl->input_bytes = input_bytes(net, hd, sh);
    if (sh->stage_hi > 0)
        keep_stage(wl, sh->stage_lo, sh->stage_hi);
    if (sh->fused) /* torch.compile's Inductor or a framework's fused kernels (fusion.c) */
        eci_fusion_apply(wl);
    sum_up(wl);
    return find_twins(ctx, wl);
}

double eci_workload_saved_bytes(const eci_workload *wl, int checkpointing, double copies)
{
    double acts = wl->saved_other_bytes, live = 0;
    for (size_t i = 0; i < wl->n_blocks; i++) {
        const eci_block *blk = &wl->blocks[i];
        if (checkpointing == EC_CKPT_SELECTIVE && blk->checkpoint) {
            acts += blk->reps * (blk->saved_bytes - blk->core_saved_bytes);
        } else if (checkpointing && blk->checkpoint && blk->reps > 1) {
            acts += blk->reps * blk->input_bytes; /* each repetition's input; one recomputed at a time */
            if (blk->saved_bytes > live)
                live = blk->saved_bytes;
        } else {
            acts += blk->reps * blk->saved_bytes;
        }
    }
    return copies * acts + live;
}

/* ---- the context's workload cache ------------------------------------------------------ */
/* A sweep predicts many configs that share a network, a task and a shape (all GPUs, all
 * optimizers, all DataLoader settings of one batch size), so the context keeps the last
 * ECI_WL_CACHE_ENTRIES expansions.  The key is everything eci_workload_expand reads: the
 * network (its registry entry, constant once registered: entries are never changed or
 * freed before the context), the task and every field of the shape.  Entries are allocated
 * on first use through the context's allocator and replaced round-robin. */
typedef struct wl_key {
    const eci_net *net;
    int task, precision, image_size, eager_attention, gelu_new_kernels, rmsnorm_kernels, rope_kernels;
    int tp, cp, ep, sp, weights_16, stage_lo, stage_hi, flash, lora_r, lora_targets, base_16;
    int channels_last, fused, inference, unpadded, flash_triton;
    double batch, seq, seq_sq, target_seq, mask_bytes, mlm_frac, rmsnorm_passes, base_quant_bytes;
} wl_key;

typedef struct wl_entry {
    wl_key key;
    eci_workload wl;
} wl_entry;

/* The keys' hashes side by side (0: the slot holds no valid expansion), so that a lookup reads
 * one entry, the one whose hash matches, not every entry's: a full cache of separately
 * allocated entries cost some fifty data-cache misses per prediction of a layout sweep.  hint
 * maps a hash's top byte to the slot that last held such a hash, tried before the scan. */
struct eci_wl_cache {
    wl_entry *entries[ECI_WL_CACHE_ENTRIES];
    uint64_t hash[ECI_WL_CACHE_ENTRIES];
    unsigned char hint[256];
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
    k->rmsnorm_kernels = sh->rmsnorm_kernels;
    k->rope_kernels = sh->rope_kernels;
    k->channels_last = sh->channels_last;
    k->fused = sh->fused;
    k->inference = sh->inference;
    k->unpadded = sh->unpadded;
    k->flash_triton = sh->flash_triton;
    k->batch = sh->batch;
    k->seq = sh->seq;
    k->seq_sq = sh->seq_sq;
    k->target_seq = sh->target_seq;
    k->mask_bytes = sh->mask_bytes;
    k->mlm_frac = sh->mlm_frac;
    k->rmsnorm_passes = sh->rmsnorm_passes;
    k->tp = sh->tp;
    k->cp = sh->cp;
    k->ep = sh->ep;
    k->sp = sh->sp;
    k->weights_16 = sh->weights_16;
    k->stage_lo = sh->stage_lo;
    k->stage_hi = sh->stage_hi;
    k->flash = sh->flash;
    k->lora_r = sh->lora_r;
    k->lora_targets = sh->lora_targets;
    k->base_16 = sh->base_16;
    k->base_quant_bytes = sh->base_quant_bytes;
}

_Static_assert(ECI_WL_CACHE_ENTRIES <= 256, "eci_wl_cache.hint holds slot numbers in a byte");

/* The slot holding key (hash its hash), or ECI_WL_CACHE_ENTRIES: the hinted slot, then the
 * slots in use (they fill from 0). */
static size_t find(const struct eci_wl_cache *c, const wl_key *key, uint64_t hash)
{
    size_t i = c->hint[hash >> 56];
    if (c->hash[i] == hash && memcmp(&c->entries[i]->key, key, sizeof *key) == 0)
        return i;
    for (i = 0; i < ECI_WL_CACHE_ENTRIES && c->entries[i] != NULL; i++)
        if (c->hash[i] == hash && memcmp(&c->entries[i]->key, key, sizeof *key) == 0)
            return i;
    return ECI_WL_CACHE_ENTRIES;
}

int eci_workload_get(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *sh, const eci_workload **out)
{
    *out = NULL;
    if (ctx->wl_cache == NULL) {
        int rc = eci_ctx_on_free(ctx, eci_workload_cache_free);
        if (rc != EC_OK)
            return rc;
        if ((ctx->wl_cache = eci_calloc(ctx, 1, sizeof *ctx->wl_cache)) == NULL)
            return EC_ENOMEM;
    }
    struct eci_wl_cache *c = ctx->wl_cache;
    wl_key key;
    make_key(net, task, sh, &key);
    uint64_t hash = bytes_hash(&key, sizeof key) | 1; /* never 0, the empty slot's */
    size_t i = find(c, &key, hash);
    if (i < ECI_WL_CACHE_ENTRIES) {
        c->hits++;
        c->hint[hash >> 56] = (unsigned char)i;
        *out = &c->entries[i]->wl;
        return EC_OK;
    }
    c->misses++;
    size_t slot = c->next;
    if (c->entries[slot] == NULL && (c->entries[slot] = eci_calloc(ctx, 1, sizeof(wl_entry))) == NULL)
        return EC_ENOMEM;
    wl_entry *e = c->entries[slot];
    c->hash[slot] = 0; /* never matches while it holds no valid expansion */
    int rc = eci_workload_expand(ctx, net, task, sh, &e->wl);
    if (rc != EC_OK)
        return rc;
    e->key = key;
    c->hash[slot] = hash;
    c->hint[hash >> 56] = (unsigned char)slot;
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
        if (ctx->wl_cache->entries[i] != NULL) {
            eci_workload_release(ctx, &ctx->wl_cache->entries[i]->wl);
            eci_free(ctx, ctx->wl_cache->entries[i], sizeof(wl_entry));
        }
    eci_free(ctx, ctx->wl_cache, sizeof *ctx->wl_cache);
    ctx->wl_cache = NULL;
}

void eci_shape_probe(const eci_net *net, eci_shape *sh)
{
    *sh = (eci_shape){.precision = EC_PREC_FP32, .batch = 1, .seq = 8, .seq_sq = 64, .target_seq = 8,
                      .image_size = net->image_size > 0 ? net->image_size : 224, .mask_bytes = 1,
                      .mlm_frac = 0.15, .gelu_new_kernels = 1, .rmsnorm_kernels = 1, .rmsnorm_passes = 2,
                      .rope_kernels = 1};
}

double eci_workload_params(ec_ctx *ctx, const eci_net *net, int task)
{
    eci_workload wl = {0};
    eci_shape sh;
    eci_shape_probe(net, &sh);
    double p = eci_workload_expand(ctx, net, task, &sh, &wl) == EC_OK ? wl.params : 0;
    eci_workload_release(ctx, &wl);
    return p;
}

double eci_workload_recompute_flop(const eci_workload *wl, int checkpointing)
{
    double flop = 0;
    if (checkpointing)
        for (size_t b = 0; b < wl->n_blocks; b++)
            if (wl->blocks[b].checkpoint)
                flop += (checkpointing == EC_CKPT_SELECTIVE ? wl->blocks[b].core_flop : wl->blocks[b].flop) *
                        wl->blocks[b].reps;
    return flop;
}

double eci_workload_largest_unit(const eci_workload *wl)
{
    double most = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        if (wl->blocks[b].params > most)
            most = wl->blocks[b].params;
    return most;
}
