/*
 * workload_build.h: the builder that expands a network description into the ops of one forward
 * micro-step, shared by the files that build (workload_build.c: the ops every layer is made of;
 * workload_blocks.c: attention and feed-forward blocks; workload_layers.c: the other layers and
 * the list with its repeated blocks; workload_heads.c: the task heads) and by workload.c, which
 * sets the builder up from a network (net.c) and a shape (eci_shape, workload.h) and runs it,
 * then trims, sums (workload_sums.c) and caches what it made.  Private to those files.
 */
#ifndef EC_WORKLOAD_BUILD_H
#define EC_WORKLOAD_BUILD_H

#include "model/workload.h"

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
                                        seq_sq: the whole sequence x the keys a query sees */
    double kv_seq;                   /* the whole sequence: the keys attention runs over */
    int f32;
    unsigned id;
    int normed;                      /* a norm's output, unchanged since (fresh() clears it) */
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
    int fp8_store;           /* ops pushed now keep what they keep as float8_e4m3fn, a byte an element
                                (a SwiGLU under fp8_act_store: workload_blocks.c) */
    double batch;
    int tp, cp, ep, sp;      /* parallel degrees (1: none); sp: sequence-parallel regions */
    int etp;                 /* expert tensor-parallel degree (1: none) */
    int block, layer;
    tensor cur, skip, memory;
    int has_skip, has_memory;
    unsigned next_id;
    unsigned saved[SAVED_RING]; /* ids of tensors already kept for backward, most recent last */
    size_t n_saved;
    int rc;                  /* first failure (EC_ENOMEM, EC_EINVAL with the message set) */
} builder;

static inline double tbytes(const builder *b, const tensor *t) { return t->f32 ? b->f32k : b->act; }
/* Bytes per element an op keeps of a tensor of e bytes an element: one under fp8_store (float8_e4m3fn). */
static inline double kept_elem_bytes(const builder *b, double e) { return b->fp8_store ? 1.0 : e; }
static inline double elems(const tensor *t) { return t->image ? t->n * t->c * t->hw * t->hw : t->rows * t->width; }

static inline void fresh(builder *b, tensor *t)
{
    t->id = ++b->next_id;
    t->normed = 0;
}

static inline int is_saved(const builder *b, unsigned id)
{
    for (size_t i = 0; i < b->n_saved && i < SAVED_RING; i++)
        if (b->saved[i] == id)
            return 1;
    return 0;
}

static inline void mark_saved(builder *b, unsigned id)
{
    b->saved[b->n_saved++ % SAVED_RING] = id;
}

/* ---- ops ------------------------------------------------------------------------------- */
static inline eci_op *push(builder *b, const char *name, eci_op_kind kind)
{
    eci_workload *wl = b->wl;
    if (b->rc != EC_OK)
        return NULL;
    if (wl->n_ops == wl->cap_ops) {
        size_t cap = wl->cap_ops ? 2 * wl->cap_ops : 128;
        if (cap > ECI_WL_MAX_OPS) { /* net.c bounds the layers; this bounds what they expand to */
            b->rc = eci_error(b->ctx, EC_EINVAL, "network '%s': its expansion passes ECI_WL_MAX_OPS = %d ops (%zu "
                              "bytes each)", b->net->id, ECI_WL_MAX_OPS, sizeof *wl->ops);
            return NULL;
        }
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
static inline eci_op *mem(builder *b, const char *name, double n, double bytes_per_elem, double saved_bytes)
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
static inline eci_op *cast(builder *b, const char *name, double n, double saved_bytes)
{
    eci_op *op = push(b, name, ECI_OP_CAST);
    if (op != NULL) {
        op->fwd_bytes = n * 6.0;
        op->saved_bytes = saved_bytes;
        op->out_bytes = n * 2.0;
    }
    return op;
}

/* The op (NULL: none was pushed) reads the output of the op launched just before it: where that
 * still sits in L2, it reads it from there (l2chain.c, compute.c). */
static inline eci_op *chained(eci_op *op)
{
    if (op != NULL)
        op->l2_chain = 1;
    return op;
}

static inline eci_op *gemm(builder *b, const char *name, double m, double n, double k, double batch, double saved_bytes)
{
    eci_op *op = push(b, name, ECI_OP_GEMM);
    if (op != NULL) {
        op->m = m;
        op->n = n;
        op->k = k;
        op->batch = batch;
        op->tensor_math = b->tensor_math;
        op->saved_bytes = saved_bytes;
        op->keep_bytes = m * n * batch * b->act; /* its 16-bit (fp32: 4-byte) output */
    }
    return op;
}

/* A collective on the compute stream over a group of the layout (COMM ops are priced with
 * the group's rates, compute.c): fwd in the forward, bwd in the backward; hidden: it overlaps
 * the op before it (ring attention). */
static inline void comm(builder *b, const char *name, int group, int fwd, int bwd, double bytes, int hidden)
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
        if (fwd == ECI_COLL_REDUCE_SCATTER && group == ECI_GROUP_TP) /* its output: this GPU's shard */
            op->keep_bytes = bytes / (b->tp > 1 ? b->tp : 1);
    }
}

/* Does autocast cast the weights of the ops pushed now?  Not when they are held in 16 bits: FSDP
 * and DeepSpeed mixed precision, or a frozen LoRA base loaded in 16 bits (or dequantized to it). */
static inline int casts_weights(const builder *b)
{
    return b->cast_w && !(b->freeze && b->sh->base_16);
}

/* Bytes per element a linear of the blocks keeps of its input (given: as it comes): Transformer
 * Engine's layers under FP8 keep the FP8 cast, one byte (TE pytorch/module/linear.py and
 * grouped_linear.py: saved_inputmat = inputmat after the quantizer, column-wise usage only; TE 1.x
 * inputmat_t, the FP8 transpose). */
static inline double kept_input_bytes(const builder *b, double bytes)
{
    return b->sh->te_layers && b->sh->precision == EC_PREC_AMP_FP8 && b->layer < (int)b->net->n_layers ? 1.0 : bytes;
}

/* ---- workload_build.c: shape errors, tensor parallelism, linears, norms, activations -------- */
/* The first shape error wins; it names the layer (index and kind). */
EC_INTERNAL void eci_wl_shape_error(builder *b, const char *what);
/* Megatron's tensor-parallel region around a block: entered (the stream gathered or copied) and
 * left (the partial outputs reduced). */
EC_INTERNAL void eci_wl_tp_enter(builder *b);
EC_INTERNAL void eci_wl_tp_exit(builder *b);
/* This GPU's share of a dimension the tensor-parallel group splits; one it does not divide is a
 * shape error naming tp. */
EC_INTERNAL double eci_wl_tp_share(builder *b, double whole, const char *what);
/* A quantized frozen weight of n elements dequantized before use (QLoRA): 1 when it is. */
EC_INTERNAL int eci_wl_dequant(builder *b, const char *name, double n);
/* nn.Linear on t (rows x in) -> rows x out, with its casts and LoRA adapter; the op, or NULL. */
EC_INTERNAL eci_op *eci_wl_linear_on(builder *b, const char *name, tensor *t, double out, int bias);
/* A linear on the stream: the stream becomes its 16-bit output. */
EC_INTERNAL eci_op *eci_wl_linear(builder *b, const char *name, double out, int bias);
EC_INTERNAL void eci_wl_dropout(builder *b, const char *name);
/* Cross entropy over rows x classes (log_softmax in fp32 under autocast). */
EC_INTERNAL void eci_wl_cross_entropy(builder *b, double rows, double classes);
/* LayerNorm, RMSNorm, BatchNorm (or a low-precision one) on t. */
EC_INTERNAL void eci_wl_norm_on(builder *b, const char *name, tensor *t, const ec_norm_layer *nl);
/* An activation's kernels, passes over the elements per kernel, and tensors kept for backward. */
EC_INTERNAL void eci_wl_act_shape(const builder *b, ec_activation a, int *kernels, double *passes, double *kept);
EC_INTERNAL void eci_wl_activation(builder *b, ec_activation a);
EC_INTERNAL ec_activation eci_wl_mlp_act(const builder *b, ec_activation act);

/* ---- workload_blocks.c: attention, MLP, mixture of experts ---------------------------------- */
EC_INTERNAL void eci_wl_attention(builder *b, const ec_attention_layer *a);
EC_INTERNAL void eci_wl_mlp(builder *b, const ec_mlp_layer *m);
EC_INTERNAL void eci_wl_moe(builder *b, const ec_moe_layer *m);

/* ---- workload_layers.c: the other layers, and the list ------------------------------------- */
EC_INTERNAL void eci_wl_pool(builder *b, const ec_pool_layer *p);
/* Layers [from, to) of the description (depth 0: the top level, whose REPEATs become blocks). */
EC_INTERNAL void eci_wl_expand_list(builder *b, size_t from, size_t to, int depth);

/* ---- workload_heads.c ----------------------------------------------------------------------- */
/* The head of the task after the last layer: its layers and its loss. */
EC_INTERNAL void eci_wl_head(builder *b, const ec_head *hd);

/* ---- workload_sums.c: what workload.c does with a built op list ----------------------------- */
/* Keep the ops of pipeline stage [lo, hi) of the repeated blocks' layers. */
EC_INTERNAL void eci_wl_keep_stage(eci_workload *wl, int lo, int hi);
/* The workload's and its blocks' sums (parameters, FLOPs, saved bytes), the collectives' chain
 * and the first checkpointed block. */
EC_INTERNAL void eci_wl_sum_up(eci_workload *wl);

#endif /* EC_WORKLOAD_BUILD_H */
