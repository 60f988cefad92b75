/*
 * workload_layers.c: the layers of a description that are not a transformer block (embeddings,
 * convolutions, patches, pooling, residual adds, the encoder-decoder switch), the dispatcher
 * that expands one layer of any kind (the blocks are workload_blocks.c's), and the list: a
 * top-level REPEAT expanded once and recorded as a block with its repetitions (eci_block).  The
 * description comes from net.c, the builder from workload.c.
 */
#include "model/workload_build.h"

#include <math.h>

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
    if (e->idle_params > 0 && (op = mem(b, "idle_tower", 0, 0, 0)) != NULL) { /* a vision tower on text: */
        op->params = (double)e->idle_params; /* held and stepped, a marker that runs nothing */
        op->param_tensors = 1;
        op->fwd_kernels = 0;
        op->bwd = 0;
    }
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
        eci_wl_shape_error(b, "the kernel is larger than the padded feature map");
        return;
    }
    double w = cout * cin / groups * k * k;
    if (b->amp) {
        if (t->f32) /* the fp32 image */
            cast(b, "cast_in", n * hw * hw * cin, 0);
        if (casts_weights(b)) { /* and the bias, if any, in a kernel of its own (as nn.Linear's) */
            cast(b, "cast_w", w + (c->bias ? cout : 0), 0);
            if (c->bias && b->rc == EC_OK)
                b->wl->ops[b->wl->n_ops - 1].fwd_kernels = 2;
        }
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
        /* the tensors its passes move; the algorithm each pass runs (and the layout transposes
         * cuDNN makes around it) is priced from them (compute.c, conv_algos.csv) */
        op->conv_in_elems = n * hw * hw * cin;
        op->conv_kernel = k;
        op->conv_stride = s;
        op->conv_nhwc = b->sh->channels_last != 0;
        /* NCHW on tensor cores: cuDNN's NHWC copies of the input, its gradient and the output's
         * gradient are alive in the backward (memory.c) */
        double in = n * hw * hw * cin * b->act, out = n * hout * hout * cout * b->act;
        if (!b->sh->channels_last && 2.0 * in + out > b->wl->conv_layout_bytes)
            b->wl->conv_layout_bytes = 2.0 * in + out;
        if (in + out > b->wl->conv_io_bytes)
            b->wl->conv_io_bytes = in + out;
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
        eci_wl_shape_error(b, "PATCHES needs a feature map (a CONV2D before it)");
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

void eci_wl_pool(builder *b, const ec_pool_layer *p)
{
    tensor *t = &b->cur;
    if (!t->image) {
        eci_wl_shape_error(b, "POOL needs a feature map");
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
            eci_wl_shape_error(b, "the pooling window is larger than the padded feature map");
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
        eci_wl_shape_error(b, "RESIDUAL add without a saved tensor (a RESIDUAL save before the branch)");
        return;
    }
    tensor *c = &b->cur, *s = &b->skip;
    if (c->image != s->image || elems(c) != elems(s)) {
        eci_wl_shape_error(b, "RESIDUAL add of tensors of different shapes (a projection on the skip path is missing)");
        return;
    }
    int out_f32 = c->f32 || s->f32;
    double n = elems(c), out_e = out_f32 ? b->f32k : b->act;
    int relu = r->op == EC_RESIDUAL_ADD_RELU;
    chained(mem(b, relu ? "residual_add_relu" : "residual_add", n,
                tbytes(b, c) + 2.0 * tbytes(b, s) + (relu ? 2.0 * out_e : 0), 0)); /* reads the branch's output */
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
        eci_wl_shape_error(b, "on_skip with no saved tensor (a RESIDUAL save before it)");
        return;
    }
    int text_kind = l->kind == EC_LAYER_LINEAR || l->kind == EC_LAYER_ATTENTION || l->kind == EC_LAYER_MLP ||
                    l->kind == EC_LAYER_MOE;
    if (text_kind && t->image) {
        eci_wl_shape_error(b, "needs a token stream, not a feature map (PATCHES or POOL before it)");
        return;
    }
    if (l->kind == EC_LAYER_CONV2D && !t->image) {
        eci_wl_shape_error(b, "CONV2D needs a feature map, not a token stream");
        return;
    }
    switch (l->kind) {
    case EC_LAYER_EMBEDDING: embedding(b, &l->u.embedding); break;
    case EC_LAYER_PATCHES: patches(b, &l->u.patches); break;
    case EC_LAYER_LINEAR: eci_wl_linear(b, "linear", (double)l->u.linear.out, l->u.linear.bias); break;
    case EC_LAYER_CONV2D: conv2d_on(b, t, &l->u.conv2d, l->on_skip ? "downsample" : "conv"); break;
    case EC_LAYER_NORM:
        eci_wl_norm_on(b, l->u.norm.kind == EC_NORM_BATCH ? "batch_norm" : "norm", t, &l->u.norm);
        break;
    case EC_LAYER_ATTENTION: eci_wl_attention(b, &l->u.attention); break;
    case EC_LAYER_MLP: eci_wl_mlp(b, &l->u.mlp); break;
    case EC_LAYER_MOE: eci_wl_moe(b, &l->u.moe); break;
    case EC_LAYER_ACTIVATION: eci_wl_activation(b, l->u.activation.act); break;
    case EC_LAYER_DROPOUT: eci_wl_dropout(b, "dropout"); break;
    case EC_LAYER_RESIDUAL: residual(b, &l->u.residual); break;
    case EC_LAYER_POOL: eci_wl_pool(b, &l->u.pool); break;
    case EC_LAYER_DECODER: decoder(b); break;
    case EC_LAYER_REPEAT: break; /* handled by eci_wl_expand_list */
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
void eci_wl_expand_list(builder *b, size_t from, size_t to, int depth)
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
                eci_wl_expand_list(b, body, end, depth + 1);
        } else {
            tensor before = b->cur;
            int had_skip = b->has_skip;
            size_t begin = b->wl->n_ops;
            b->block = (int)b->wl->n_blocks;
            eci_wl_expand_list(b, body, end, 1);
            b->layer = (int)i;
            if (b->rc == EC_OK && (!same_shape(&before, &b->cur) || had_skip != b->has_skip))
                eci_wl_shape_error(b, "a repeated block must leave the tensor as it found it (its shape, no "
                                      "residual left open)");
            if (b->rc == EC_OK)
                add_block(b, begin, r, elems(&before), elems(&before) * tbytes(b, &before));
            b->block = -1;
        }
        i = end - 1;
    }
}
