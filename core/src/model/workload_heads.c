/*
 * workload_heads.c: the head of the task after the network's last layer (a pooled or last-token
 * classifier, span QA, token classification, BERT's pretraining heads, a masked or causal LM's
 * vocabulary projection and loss, an image classifier), as Hugging Face's *For<Task> classes
 * run them.  The head comes from the description (net.c), the builder from workload.c.
 */
#include "model/workload_build.h"

#include <math.h>

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
    eci_wl_linear(b, "pooler", b->cur.width, 1);
    eci_wl_activation(b, EC_ACT_TANH);
    eci_wl_linear(b, name, classes, 1);
    eci_wl_cross_entropy(b, b->batch, classes);
}

/* dense + GELU + LayerNorm before a vocabulary projection (BertLMPredictionHead). */
static void mlm_transform(builder *b, const ec_head *hd)
{
    ec_norm_layer ln = {.kind = EC_NORM_LAYER, .bias = 1};
    eci_wl_linear(b, "mlm_transform", hd->transform > 0 ? (double)hd->transform : b->cur.width, 1);
    eci_wl_activation(b, EC_ACT_GELU);
    eci_wl_norm_on(b, "mlm_ln", &b->cur, &ln);
}

/* The head's projection onto the vocabulary (V columns; a tied weight is the embedding's, only a
 * bias of its own); returns its linear op (NULL on error), valid until the next op is added. */
static eci_op *vocab_projection(builder *b, const ec_head *hd, double V)
{
    double in = b->cur.width;
    eci_op *op = eci_wl_linear(b, "lm_head", V, hd->bias);
    if (op != NULL && hd->tied) {
        op->params = hd->bias ? V : 0;
        op->param_tensors = hd->bias ? 1 : 0;
        op->tied = 1;
    }
    /* A quantized head (Lightning's bitsandbytes, quant_head): the first op of backward computes the
     * input gradient through the weight dequantized whole, `F.dequantize_4bit(B, state).to(dtype)`,
     * beside every saved activation.  Lightning quantizes from an fp16 copy of the weight
     * (_Linear4bit._quantize_weight: `.to(dtype=torch.half)`), so the dequantized weight is fp16 and
     * `.to(torch.bfloat16)` makes a second copy under bf16 (lightning@71aed751 plugins/precision/
     * bitsandbytes.py; bitsandbytes MatMul4Bit.backward). */
    if (op != NULL && op->quant && !hd->tied) {
        int bf16 = b->sh->precision == EC_PREC_BF16 || b->sh->precision == EC_PREC_AMP_BF16;
        b->wl->head_dequant_bytes = V * in * (bf16 ? 4.0 : 2.0);
    }
    return op;
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

/* Liger's fused linear cross-entropy (liger_kernel/ops/fused_linear_cross_entropy.py, the
 * training forward of its Llama-family models): rows in chunks of next_power_of_2(ceil(T /
 * ceil(V / width))), each chunk's logits made, turned into their gradient in place by one kernel
 * (read and write 16 bits) and multiplied back into the input's and the weight's gradients, all in
 * the forward; the backward only scales those.  The projection's GEMMs are the head's (the same
 * FLOPs, run in the forward); memory holds one chunk of logits, never all of them, and the
 * input's gradient in place of the saved input. */
static void fused_linear_loss(builder *b, const ec_head *hd, double T, double V)
{
    double width = b->cur.width, inc = ceil(V / width);
    double chunk = exp2(ceil(log2(ceil(T / inc)))), rows = chunk < T ? chunk : T;
    eci_op *op = vocab_projection(b, hd, V);
    if (op == NULL)
        return;
    op->out_bytes = rows * V * b->act; /* one chunk's logits */
    op = mem(b, "fused_linear_xentropy", T * V, 2.0 * b->act, T * 4.0);
    if (op != NULL) {
        op->out_bytes = 0;
        op->bwd_bytes = 2.0 * T * width * b->act; /* grad_input x grad_output */
        op->loss = 1;
    }
}

/* A causal LM's vocabulary projection (V: this GPU's slice) and its loss over T rows: fused (xentropy,
 * or Liger's fused linear cross-entropy), or HF's shifted cross entropy; then the trainer's metric losses. */
static void causal_lm(builder *b, const ec_head *hd, double T, double V)
{
    if (b->sh->loss_fused == 2) {
        fused_linear_loss(b, hd, T, V);
        vocab_parallel_loss(b, T);
        return;
    }
    vocab_projection(b, hd, V);
    if (hd->fused_loss || b->sh->loss_fused) { /* xentropy (the config's loss_fn, or loss=
                                                * fused_cross_entropy): reads the 16-bit logits once, keeps
                                                * them and a log-sum-exp per row; backward reads them and
                                                * writes their gradient */
        b->wl->output_bytes += T * V * b->act;
        eci_op *op = mem(b, "fused_xentropy", T * V, b->act, T * V * b->act + T * 4.0);
        if (op != NULL)
            op->bwd_bytes = 2.0 * T * V * b->act;
    } else {
        /* HF shifts the logits of a decoder: a contiguous copy of all of them, read by the loss and
         * then dropped (autograd keeps none of it: log_softmax saves its output, nll_loss the
         * log-probabilities, `contiguous`'s clone nothing; derivatives.yaml), so it costs traffic,
         * not memory at the backward peak.  Only when the model computes the loss: a loop that
         * backpropagates logits.sum() (loss=sum: the SDPA benchmark gist, model(input_ids,
         * attention_mask) with no labels) gets the unshifted logits, since HF's *ForCausalLM.forward
         * shifts inside `if labels is not None` (e.g. OPTForCausalLM, GPT2LMHeadModel). */
        if (!b->has_memory && !b->sh->loss_sum)
            mem(b, "shift_logits", T * V, 2.0 * b->act, 0);
        eci_wl_cross_entropy(b, T, V);
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
}

void eci_wl_head(builder *b, const ec_head *hd)
{
    b->layer = (int)b->net->n_layers;
    /* LoRA: a new task head is trained whole (PEFT's modules_to_save), a vocabulary head stays frozen */
    if (hd->kind != EC_HEAD_CAUSAL_LM && hd->kind != EC_HEAD_MASKED_LM && hd->kind != EC_HEAD_PRETRAIN)
        b->freeze = 0;
    double V = vocab_of(b->net), C = (double)hd->classes;
    int needs_tokens = hd->kind != EC_HEAD_IMAGE_CLASSIFY || !hd->pool;
    if (needs_tokens && b->cur.image) {
        eci_wl_shape_error(b, "this head needs a token stream; the network ends in a feature map");
        return;
    }
    if ((hd->kind == EC_HEAD_CAUSAL_LM || hd->kind == EC_HEAD_MASKED_LM || hd->kind == EC_HEAD_PRETRAIN) && V <= 0) {
        eci_wl_shape_error(b, "a vocabulary head needs an EMBEDDING (the network has no token table)");
        return;
    }
    if (!b->cur.image)
        eci_wl_tp_enter(b); /* the whole stream on every tensor-parallel GPU (gathered under sequence parallelism) */
    tensor trunk = b->cur;
    double T = trunk.rows;
    V = ceil(V / b->tp); /* a vocabulary-parallel projection: this GPU's slice of the logits */
    switch (hd->kind) {
    case EC_HEAD_CLASSIFY:
        if (hd->pooler) {
            pooled_classifier(b, "classifier", C);
        } else { /* decoders score the last token (HF *ForSequenceClassification), no bias */
            first_token(b);
            eci_wl_linear(b, "score", C, hd->bias);
            eci_wl_cross_entropy(b, b->batch, C);
        }
        break;
    case EC_HEAD_SPAN_QA: /* start and end logits for every token */
        eci_wl_linear(b, "qa_outputs", 2, 1);
        mem(b, "split_logits", T * 2, 2.0 * b->act, 0);
        eci_wl_cross_entropy(b, 2.0 * b->batch, trunk.seq);
        break;
    case EC_HEAD_TOKEN_CLASSIFY:
        eci_wl_dropout(b, "dropout");
        eci_wl_linear(b, "classifier", C, 1);
        eci_wl_cross_entropy(b, T, C);
        break;
    case EC_HEAD_PRETRAIN: { /* MLM on the masked positions (or all: mlm_frac 1) + NSP on the pooled first token */
        double Tm = ceil(T * b->sh->mlm_frac);
        if (Tm < T) { /* DLE's dense_seq_output: index_select of the masked rows, then the head */
            mem(b, "gather_masked", Tm * trunk.width, 2.0 * b->f32k, 0);
            b->cur.rows = Tm;
            fresh(b, &b->cur);
        }
        mlm_transform(b, hd);
        vocab_projection(b, hd, V);
        eci_wl_cross_entropy(b, Tm, V);
        vocab_parallel_loss(b, Tm);
        b->cur = trunk;
        pooled_classifier(b, "nsp", 2);
        break;
    }
    case EC_HEAD_MASKED_LM:
        mlm_transform(b, hd);
        vocab_projection(b, hd, V);
        eci_wl_cross_entropy(b, T, V);
        vocab_parallel_loss(b, T);
        break;
    case EC_HEAD_CAUSAL_LM:
        causal_lm(b, hd, T, V);
        break;
    case EC_HEAD_IMAGE_CLASSIFY:
        if (hd->pool) {
            if (!b->cur.image) {
                eci_wl_shape_error(b, "pool=1 needs a feature map; a token stream uses its class token (pool=0)");
                return;
            }
            ec_pool_layer avg = {.kind = EC_POOL_AVG_GLOBAL};
            eci_wl_pool(b, &avg);
        } else {
            first_token(b);
        }
        eci_wl_linear(b, "head", C, 1);
        eci_wl_cross_entropy(b, b->batch, C);
        break;
    }
}
