/*
 * workload_build.c: the ops every layer of the expansion is made of (workload_build.h holds the
 * builder's state and its smallest primitives: push, mem, cast, gemm, comm): shape errors,
 * Megatron's tensor-parallel regions, nn.Linear with autocast's casts, QLoRA's dequantization
 * and LoRA's adapters, dropout, cross entropy, normalisation and activations.  The builder comes
 * from workload.c (a network from net.c, a precision and a batch shape); the layers that call
 * these are workload_blocks.c's, workload_layers.c's and workload_heads.c's.
 */
#include "model/workload_build.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- shape errors, tensor parallelism -------------------------------------------------------- */
/* The first shape error wins; it names the layer (index and kind). */
void eci_wl_shape_error(builder *b, const char *what)
{
    if (b->rc != EC_OK)
        return;
    if (b->layer < (int)b->net->n_layers)
        b->rc = eci_error(b->ctx, EC_EINVAL, "network '%s': layer %d (%s): %s", b->net->id, b->layer + 1,
                          ec_layer_kind_name(b->net->layers[b->layer].kind), what);
    else
        b->rc = eci_error(b->ctx, EC_EINVAL, "network '%s': head: %s", b->net->id, what);
}

/* Megatron's tensor-parallel region around a block (attention, MLP, a vocabulary head): on
 * entry the stream is gathered from its sequence shards (sequence parallelism: all-gather,
 * reduce-scatter of its gradient) or copied (an all-reduce of its gradient in backward); on
 * exit the partial outputs are reduced (all-reduce, or reduce-scatter back to the shards). */
void eci_wl_tp_enter(builder *b)
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

void eci_wl_tp_exit(builder *b)
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
double eci_wl_tp_share(builder *b, double whole, const char *what)
{
    if (b->tp <= 1)
        return whole;
    if (fmod(whole, b->tp) != 0) {
        char why[160];
        snprintf(why, sizeof why, "tp=%d must divide %s (%.0f)", b->tp, what, whole);
        eci_wl_shape_error(b, why);
        return whole;
    }
    return whole / b->tp;
}

/* ---- LoRA, quantization, linears, the loss ------------------------------------------------------ */
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

/* Is the frozen weight of the linear being built stored quantized?  transformers' bitsandbytes
 * leaves the output head unquantized; Lightning's BitsandbytesPrecision converts every nn.Linear,
 * the head's too (quant_head). */
static int quantized(const builder *b)
{
    if (b->sh->base_quant_bytes <= 0 || !b->freeze)
        return 0;
    return b->layer < (int)b->net->n_layers || b->sh->quant_head;
}

/* A quantized frozen weight of n elements (QLoRA) is dequantized to 16 bits before every use:
 * in the forward and again for the input gradient (bitsandbytes' matmul_4bit). */
int eci_wl_dequant(builder *b, const char *name, double n)
{
    if (!quantized(b))
        return 0;
    eci_op *op = mem(b, name, n, b->sh->base_quant_bytes + 2.0, 0);
    if (op != NULL)
        op->bwd_bytes = op->fwd_bytes;
    return 1;
}

/* LoRA's adapter beside a frozen linear (rows x in -> out): x A^T B^T x scaling added to the
 * base output.  A keeps its input (the base's, already kept), B keeps A's output; under autocast
 * PEFT's fp32 adapter weights are cast like any other.  With lora_dropout > 0 the input first
 * passes the adapter's own nn.Dropout (PEFT LoraLayer.update_layer: one per adapted linear,
 * nn.Identity at 0): a new 16-bit tensor, which A keeps instead of x, and its bool mask. */
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
    if (b->sh->lora_dropout && !b->sh->inference) /* the dropped copy and its mask, kept for backward */
        mem(b, "lora_dropout", rows * in, 2.0 * b->act + b->mask, rows * in * (b->act + b->mask));
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

/* The bias of a linear as PyTorch before linear_bias_epilogue_from_version adds it (constants.csv):
 * one more kernel over the GEMM's output of n elements, which it reads (from L2 where it still
 * is) and writes in place; its backward passes the gradient through (the bias's own gradient is
 * the GEMM backward's reduction, compute.c). */
static void bias_pass(builder *b, double n)
{
    eci_op *op = chained(mem(b, "bias_add", n, 2.0 * b->act, 0));
    if (op != NULL) {
        op->out_bytes = n * b->act;
        op->linear_bias = 1;
        op->bwd = 0;
    }
}

/* nn.Linear on t (rows x in) -> rows x out.  Under autocast an fp32 input is cast (the copy is
 * what backward keeps), and so is the weight (the autocast weight cache); otherwise the input
 * is kept unless an earlier op keeps the same tensor.  A frozen linear (LoRA's base) keeps its
 * input only for its adapter's weight gradient (with lora_dropout the adapter keeps its dropped copy instead): PyTorch saves mm's input only when the weight
 * needs a gradient.  A bitsandbytes-quantized one keeps it whatever: MatMul4Bit.forward (and
 * MatMul8bitLt's) stores `ctx.tensors = (A, B)` when any input needs a gradient, and the
 * activations do (bitsandbytes autograd/_functions.py). */
eci_op *eci_wl_linear_on(builder *b, const char *name, tensor *t, double out, int bias)
{
    double rows = t->rows, in = t->width, saved = 0;
    int target = lora_target(b, name), keep = !b->freeze || quantized(b) || (target && !b->sh->lora_dropout);
    int cast_w = casts_weights(b);
    if (b->amp && t->f32) {
        cast(b, "cast_in", rows * in, keep ? rows * in * 2.0 : 0);
    } else if (keep && !is_saved(b, t->id)) { /* Megatron's router: a plain linear, not TE's (router.py) */
        saved = rows * in * (strcmp(name, "router") == 0 ? tbytes(b, t) : kept_input_bytes(b, tbytes(b, t)));
        mark_saved(b, t->id);
    }
    if (cast_w) { /* autocast casts every floating argument of F.linear (cached_cast in its
                   * lower_precision_fp wrapper, aten/src/ATen/autocast_mode.h): the bias in a kernel of its own */
        cast(b, "cast_w", in * out + (bias ? out : 0), 0);
        if (bias && b->rc == EC_OK)
            b->wl->ops[b->wl->n_ops - 1].fwd_kernels = 2;
    }
    int quant = eci_wl_dequant(b, "dequant_w", in * out);
    eci_op *op = gemm(b, name, rows, out, in, 1, saved);
    if (op == NULL)
        return NULL;
    op->quant = quant;
    op->params = in * out + (bias ? out : 0);
    op->param_tensors = bias ? 2 : 1;
    op->cast_params = cast_w ? in * out : 0;
    op->fp8 = b->layer < (int)b->net->n_layers; /* Transformer Engine's layers; heads stay 16-bit */
    op->in_normed = t->normed;
    size_t at = b->wl->n_ops - 1;
    if (bias && b->sh->bias_pass) /* (setup.c: not under kernels=te) */
        bias_pass(b, rows * out);
    if (target) /* (pushing may move the op list) */
        lora_adapter(b, rows, in, out);
    return b->rc == EC_OK ? &b->wl->ops[at] : NULL;
}

/* A linear on the stream: the stream becomes its 16-bit output. */
eci_op *eci_wl_linear(builder *b, const char *name, double out, int bias)
{
    eci_op *op = eci_wl_linear_on(b, name, &b->cur, out, bias);
    b->cur.width = out;
    b->cur.f32 = 0;
    fresh(b, &b->cur);
    return op;
}

void eci_wl_dropout(builder *b, const char *name)
{
    if (b->sh->inference) /* model.eval(): nn.Dropout is the identity, no kernel */
        return;
    double n = elems(&b->cur);
    chained(mem(b, name, n, 2.0 * tbytes(b, &b->cur) + b->mask, n * b->mask));
    fresh(b, &b->cur);
}

/* Cross entropy over rows x classes: autocast runs it in fp32 (cross_entropy is on autocast's
 * fp32 list), so the 16-bit logits are first copied up to fp32, and log_softmax writes and keeps
 * fp32 log-probabilities; so does a 16-bit model whose code upcasts its logits (loss=
 * cross_entropy_fp32: torchtune's TransformerDecoder returns output(h).float(), its chunked loss
 * runs logits.float() per chunk), which also returns the fp32 copy to the loop.  Its backward makes two tensors of that size at once, the gradient of
 * the log-probabilities and of the logits (memory.c prices them from wl->loss_bytes); these ops
 * are marked `loss` so that the head's other transients are priced apart from them. */
void eci_wl_cross_entropy(builder *b, double rows, double classes)
{
    double n = rows * classes;
    size_t first = b->wl->n_ops;
    int up = b->sh->loss_fp32 && !b->sh->loss_sum && b->act < 4.0;
    double width = b->amp || up ? 4.0 : b->f32k; /* the log-probabilities' */
    b->wl->output_bytes += n * (up ? 4.0 : b->act);
    if (b->sh->loss_sum) { /* loss=sum (benchmarks' logits.sum()): one read; its backward is an expanded
                            * view the head's backward reads as one gradient of the logits' size */
        eci_op *op = mem(b, "logits_sum", n, b->act, 0);
        if (op != NULL)
            op->loss = 1;
        if (n * b->act / 2.0 > b->wl->loss_bytes)
            b->wl->loss_bytes = n * b->act / 2.0; /* memory.c prices two loss_bytes */
        return;
    }
    if (b->amp || up) {
        cast(b, "cast_logits", n, 0);
        if (b->rc == EC_OK) /* an upcast: read 2, write 4 */
            b->wl->ops[b->wl->n_ops - 1].out_bytes = n * 4.0;
    }
    eci_op *op = mem(b, "log_softmax", n, 2.0 * width, n * width);
    if (op != NULL)
        op->out_bytes = n * width;
    mem(b, "nll_loss", rows, 16.0, 0);
    for (size_t i = first; b->rc == EC_OK && i < b->wl->n_ops; i++)
        b->wl->ops[i].loss = 1;
    /* Megatron-Core's vocab-parallel cross entropy (kernels=te; megatron/core/tensor_parallel/
     * cross_entropy.py): the fp32 copy is exponentiated and normalized in place and kept as the
     * softmax (above); backward turns it into the logits' gradient in place and casts that to 16
     * bits (calculate_gradients: grad_input.to(torch.bfloat16)): one 16-bit gradient, not two fp32
     * ones (memory.c prices two loss_bytes) */
    double grads = b->sh->te_layers && !up ? n * b->act / 2.0 : n * width;
    if (grads > b->wl->loss_bytes)
        b->wl->loss_bytes = grads;
}

/* ---- normalisation and activations ------------------------------------------------------ */
/* LayerNorm (autocast runs it in fp32): keeps its input and two fp32 statistics per row.
 * HF's Python RMSNorm (Llama, T5, Gemma) is several eager kernels (constants.csv): pow, mean,
 * rsqrt, the scaling and the weight, and on a 16-bit input (a model held in half) the copies to
 * fp32 and back; it keeps the fp32 input and the normalized product.
 * BatchNorm in training reads its input twice (statistics, normalise) and writes once.
 * A low-precision norm under autocast (llm-foundry's LPLayerNorm/LPRMSNorm) casts an fp32
 * input down first (that copy is what backward keeps) and runs at the 16-bit width: a
 * 16-bit output the next linear reads without a cast. */
void eci_wl_norm_on(builder *b, const char *name, tensor *t, const ec_norm_layer *nl)
{
    double n = elems(t), e = b->f32k;
    eci_op *op;
    int stream = t == &b->cur; /* the stream: the output of the op just before (l2chain.c) */
    if (nl->low_precision && b->amp && nl->kind != EC_NORM_BATCH) {
        int down = t->f32; /* _cast_if_autocast_enabled(x): a copy only when x is fp32 */
        if (down && (op = cast(b, "norm_cast_in", n, n * b->act)) != NULL)
            op->l2_chain = stream;
        if (casts_weights(b)) /* and the fp32 weight (and bias) */
            cast(b, "norm_cast_w", (nl->bias ? 2.0 : 1.0) * t->width, 0);
        else
            stream = stream || down;
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
            op->l2_chain = stream && !casts_weights(b);
            op->params = (nl->bias ? 2.0 : 1.0) * t->width;
            op->param_tensors = nl->bias ? 2 : 1;
        }
        t->f32 = 0;
        fresh(b, t);
        t->normed = 1;
        return;
    }
    if (nl->kind == EC_NORM_BATCH) {
        op = mem(b, name, n, 3.0 * b->act, n * b->act);
        if (op != NULL) {
            op->l2_chain = stream;
            op->params = 2.0 * t->c;
            op->param_tensors = 2;
        }
        t->f32 = 0;
    } else {
        double rows = t->rows, width = t->width;
        if (nl->kind == EC_NORM_RMS) { /* eager: the fp32 input and product and the statistics; compiled:
                                        * the input as it comes and one rstd per row (sh->remat) */
            int k = b->sh->rmsnorm_kernels > 0 ? b->sh->rmsnorm_kernels : 1;
            double keep = b->sh->remat ? n * tbytes(b, t) + rows * 4.0 : 2.0 * n * e + 2.0 * rows * 4.0;
            double pass_bytes = b->sh->rmsnorm_passes * e, w = tbytes(b, t);
            if (b->sh->rmsnorm_cast_kernels > 0 && w < 4.0) {
                /* a 16-bit input (a model held in half): .to(float32) and .to(input_dtype) copy it up
                 * and back (read w, write 4; read 4, write w), pow, mean and the rsqrt product run
                 * on the fp32 copy, the weight's product at the input's width */
                double f32 = b->sh->rmsnorm_fp32_passes;
                pass_bytes = f32 * 4.0 + (b->sh->rmsnorm_passes - f32) * w +
                             b->sh->rmsnorm_cast_kernels * (w + 4.0);
                k += b->sh->rmsnorm_cast_kernels;
            }
            op = mem(b, name, n, pass_bytes, keep);
            if (op != NULL)
                op->fwd_kernels = k;
        } else {
            if (b->amp && !t->f32) { /* autocast runs layer_norm in fp32: a 16-bit input is copied up first */
                if ((op = cast(b, "norm_cast_up", n, 0)) != NULL)
                    op->l2_chain = stream;
                stream = 1; /* the norm reads the copy */
            }
            op = mem(b, name, n, 2.0 * e, n * e + rows * 8.0);
        }
        if (op != NULL) {
            op->l2_chain = stream;
            op->params = (nl->bias ? 2.0 : 1.0) * width;
            op->param_tensors = nl->bias ? 2 : 1;
        }
        /* autocast runs layer_norm in fp32; an RMSNorm's output has its weight's dtype
         * (weight * x.to(input dtype)): 16 bits when the weights are (FSDP MixedPrecision,
         * DeepSpeed, Megatron's bf16 parameters) */
        t->f32 = nl->kind == EC_NORM_RMS && b->amp && b->sh->weights_16 ? 0 : 1;
    }
    fresh(b, t);
    t->normed = nl->kind != EC_NORM_BATCH;
}

/* Kernels, passes over the elements per kernel, and tensors kept for backward. */
void eci_wl_act_shape(const builder *b, ec_activation a, int *kernels, double *passes, double *kept)
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
        if (b->sh->fused) { /* not the Python ops: one kernel, keeping its input */
            /* torch.compile: Inductor's one pointwise kernel reads x and writes y.  kernels=fused:
             * flash-attn's FusedDenseGeluDense (flash_attn/modules/mlp.py, ops/fused_dense.py
             * @4a6eaa9f, heuristic 0) runs it in fc1's cuBLASLt epilogue (linear_gelu_forward),
             * which writes the pre-activation beside the output; the backward's DGELU runs in
             * fc2's gradient GEMM (linear_gelu_linear_backward), reading it: one pass each way */
            *passes = b->sh->remat ? 2.0 : 1.0;
            break;
        }
        *kernels = b->sh->gelu_new_kernels > 0 ? b->sh->gelu_new_kernels : 1;
        *passes = 2.5;
        *kept = 4.0;
        break;
    case EC_ACT_GELU_PYTHON: /* x * 0.5 * (1 + erf(x / sqrt 2)) in Python: div, erf, add, mul, mul read
                              * 11 tensors and write 5 (2.2 passes a kernel); autograd keeps x / sqrt 2
                              * (erf's input), x * 0.5 and 1 + erf (the last product's two factors) */
        if (b->sh->fused) { /* torch.compile: Inductor's one pointwise kernel */
            *passes = b->sh->remat ? 2.0 : 1.0;
            break;
        }
        *kernels = b->sh->gelu_python_kernels > 0 ? b->sh->gelu_python_kernels : 1;
        *passes = 2.2;
        *kept = 3.0;
        break;
    case EC_ACT_QUICK_GELU: /* x * sigmoid(1.702 x): mul, sigmoid, mul */
        *kernels = 3;
        *passes = 2.5;
        *kept = 2.0;
        break;
    case EC_ACT_RELU2: /* relu then square (transformers' ReLUSquaredActivation: two kernels, the relu's
                        * output kept for both backwards); Megatron-Core's squared_relu is one
                        * @jit_fuser kernel (megatron/core/activations.py), as torch.compile makes it */
        *kernels = b->sh->te_layers || b->sh->remat ? 1 : 2;
        break;
    default:
        break;
    }
    if (b->sh->remat && *kept > 1.0) /* Python ops under torch.compile: the input alone (sh->remat) */
        *kept = 1.0;
}

/* The activation of an MLP or expert layer as the code computes it: the network's, unless the
 * config's activation key says how (sh->act_impl, ec_act_impl). */
ec_activation eci_wl_mlp_act(const builder *b, ec_activation act)
{
    switch ((ec_act_impl)b->sh->act_impl) {
    case EC_ACTIMPL_GELU: return EC_ACT_GELU;
    case EC_ACTIMPL_GELU_NEW: return EC_ACT_GELU_TANH;
    case EC_ACTIMPL_GELU_PYTHON: return EC_ACT_GELU_PYTHON;
    default: return act;
    }
}

static const char *act_name(ec_activation a)
{
    static const char *const names[] = {"gelu", "gelu_new", "relu", "silu", "tanh", "quick_gelu", "relu2",
                                        "gelu_python"};
    return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "act";
}

/* GPT-2's gelu_new in eager mode under autocast on a 16-bit input x: torch.pow is on autocast's
 * fp32 list (AT_FORALL_FP32 in aten/src/ATen/autocast_mode.h: a cast of x to fp32 first), and
 * type promotion carries the fp32 through the rest of 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))
 * (transformers activations.py NewGELUActivation): cast (x16 -> x32), pow, mul, add (x16 +
 * fp32), mul, tanh, add, 0.5*x (16-bit), the last mul (16-bit x fp32): 5 16-bit and 15 fp32
 * element reads and writes, and the output is fp32 (the next linear casts it back).  Autograd
 * keeps the fp32 copy (pow), tanh's output, 0.5*x and 1+tanh. */
static void gelu_new_autocast(builder *b, int kernels)
{
    double n = elems(&b->cur), e16 = b->act, e32 = b->f32k;
    eci_op *op = chained(mem(b, "gelu_new", n, 5.0 * e16 + 15.0 * e32, (3.0 * e32 + e16) * n));
    if (op != NULL) {
        op->fwd_kernels = kernels + 1;
        op->out_bytes = n * e32;
    }
    b->cur.f32 = 1;
    fresh(b, &b->cur);
}

void eci_wl_activation(builder *b, ec_activation a)
{
    int k;
    double passes, kept, n = elems(&b->cur), e = tbytes(b, &b->cur);
    eci_wl_act_shape(b, a, &k, &passes, &kept);
    if (a == EC_ACT_GELU_TANH && b->amp && !b->cur.f32 && k > 1 && !b->sh->fused) { /* eager: not fused */
        gelu_new_autocast(b, k);
        return;
    }
    eci_op *op = chained(mem(b, act_name(a), n, k * passes * e, kept * n * kept_elem_bytes(b, e)));
    if (op != NULL)
        op->fwd_kernels = k;
    fresh(b, &b->cur);
}
