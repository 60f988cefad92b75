/*
 * workload_blocks.c: a transformer's blocks expanded into ops: attention (eager as Hugging Face
 * runs it, or one fused kernel: SDPA, FlashAttention), the MLP, and a mixture of experts with
 * its routing and expert parallelism.  The layer descriptions come from net.c (through
 * workload_layers.c's dispatcher), the builder from workload.c; the ops they are made of are
 * workload_build.c's.
 */
#include "model/workload_build.h"

#include <math.h>
#include <stdio.h>

/* ---- attention ---------------------------------------------------------------------------
 * Eager attention as HF runs it (BertSelfAttention, GPT2Attention, LlamaAttention's eager
 * path): explicit s x s scores, scale, mask, softmax (fp32 under autocast), dropout, and two
 * batched GEMMs, each kernel reading what the one before it wrote (chained: from L2 where it fits).
 * sq, sk: query and key lengths; sk_eff = the keys a query sees (the sequence,
 * or its own packed sequence under a varlen kernel: seq_sq / kv_seq).  h = heads x head_dim. */
static void attention_eager(builder *b, const ec_attention_layer *a, double heads, double head_dim, double v_dim,
                            double sq, double sk_eff, double rows_q, double rows_k)
{
    double batch = b->batch, h = heads * head_dim;
    double scores = batch * heads * sq * sk_eff;
    gemm(b, "scores", sq, sk_eff, head_dim, batch * heads, (rows_q + rows_k) * h * b->act);
    chained(mem(b, "scale", scores, 2.0 * b->act, 0));
    if (a->softcap) /* scores / cap, tanh, x cap (Gemma 2) */
        chained(mem(b, "softcap", scores, 3.0 * 2.0 * b->act, scores * b->act));
    /* under autocast the additive mask is fp32 (HF builds it in the parameters' dtype): adding
     * it promotes the 16-bit scores to fp32, which the softmax then reads */
    double masked = b->amp ? b->f32k : b->act;
    chained(mem(b, a->causal ? "causal_mask" : "mask_add", scores, b->act + masked, 0));
    /* the softmax's dtype: fp32 under autocast and in fp32, and in a 16-bit model whose code
     * upcasts it (softmax_fp32); then cast back for the matmul */
    double sm = a->softmax_fp32 && b->act < 4.0 ? 4.0 : b->f32k;
    if (a->sinks) { /* gpt-oss: cat the sink logit to every row, subtract the row max (three kernels);
                     * the softmax then runs on the widened copy and the sink column is sliced off */
        eci_op *op = chained(mem(b, "sinks_cat_max", scores, 5.0 * masked, 0));
        if (op != NULL)
            op->fwd_kernels = 3;
    }
    chained(mem(b, "softmax", scores, masked + sm, scores * sm));
    int dropped = a->dropout && !b->sh->inference;
    if (dropped)
        chained(mem(b, "attn_dropout", scores, 2.0 * sm + b->mask, scores * b->mask));
    /* the context GEMM keeps the probabilities it reads: the dropout's output (a tensor of its
     * own beside the softmax's and the mask), the cast's (below), or else the softmax's output
     * itself, which the softmax already keeps: one tensor, kept once */
    double probs_saved = dropped ? scores * sm : 0;
    if (b->amp || sm > b->act) {
        chained(cast(b, "cast_probs", scores, scores * 2.0));
        probs_saved = 0;
    }
    chained(gemm(b, "context", sq, v_dim, sk_eff, batch * heads, probs_saved + rows_k * heads * v_dim * b->act));
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
 * padding token in the batch, and not traced by torch.compile: compute.h eci_sdpa_masked), and
 * its flash and memory-efficient kernels then skip the blocks above the diagonal; a padding mask,
 * a causal mask built under torch.compile or a sliding window goes in as an explicit mask, which
 * every key block is read against. */
static double sdpa_keys_frac(const builder *b, const ec_attention_layer *a, double s)
{
    if (!b->sh->unmasked || a->window > 0)
        return 1.0;
    return flash_keys_frac(a, s);
}

static void attention_fused(builder *b, double heads, double kv, double head_dim, double v_dim, double sq,
                            double sk_eff, double rows_q, double rows_k)
{
    /* QK^T over head_dim, PV over v_dim; it keeps Q, K (head_dim), V and the output (v_dim).  K and
     * V as it reads them: a flash kernel the grouped key/value heads in place (kv of them: flash-attn's
     * _flash_attn_forward saves q, k, v, out, softmax_lse; TE's FusedAttnFunc q, k, v, out and the
     * softmax statistics), SDPA after HF's repeat_kv every query head's copy */
    double kv_kept = b->flash ? kv : heads;
    eci_op *op = gemm(b, "sdpa", sq, sk_eff, head_dim + v_dim, b->batch * heads,
                      (rows_q * heads + rows_k * kv_kept) * (head_dim + v_dim) * b->act + rows_q * heads * 4.0);
    if (op != NULL) {
        op->kind = ECI_OP_ATTN;
        op->keep_bytes = rows_q * heads * (v_dim * b->act + 4.0); /* its output and fp32 log-sum-exp */
    }
}

/* Multi-head latent attention's projections as HF's DeepseekV3Attention runs them in training
 * (no weight absorption): Q through q_a, its RMSNorm and q_b (or one q projection); kv_a makes
 * the latent and the shared rotary key; the latent's RMSNorm and kv_b make every head's
 * non-rotary key and its value.  What backward keeps of K and V is the latent (the norm's input,
 * kv_b's input), not the heads' keys and values.  Rotary embedding on the queries' rotary part
 * and the one key, then Q and K concatenated (copies), the key's rotary part expanded to each head. */
static void latent_qkv(builder *b, const ec_attention_layer *a, const tensor *in, double heads, double hd, double vd)
{
    double rows = in->rows, rope = a->rope_dim, nope = hd - rope;
    ec_norm_layer rms = {.kind = EC_NORM_RMS};
    if (a->q_rank > 0) {
        b->cur = *in;
        eci_wl_linear(b, "q_a", a->q_rank, a->qkv_bias);
        eci_wl_norm_on(b, "q_a_norm", &b->cur, &rms);
        eci_wl_linear(b, "q_b", heads * hd, 0);
    } else {
        tensor x = *in;
        eci_wl_linear_on(b, "q", &x, heads * hd, 0);
    }
    b->cur = *in;
    eci_wl_linear(b, "kv_a", a->kv_rank + rope, a->qkv_bias);
    b->cur.width = a->kv_rank; /* the latent: a view of kv_a's output without the rotary key */
    eci_wl_norm_on(b, "kv_a_norm", &b->cur, &rms);
    eci_wl_linear(b, "kv_b", heads * (nope + vd), 0);
    double n = rows * (heads + 1.0) * rope;
    eci_op *op = mem(b, "rope", n, b->sh->rope_kernels * b->act, b->sh->remat ? 0 : 2.0 * n * b->act);
    if (op != NULL)
        op->fwd_kernels = b->sh->rope_kernels > 0 ? b->sh->rope_kernels : 1;
    mem(b, "latent_cat_qk", 2.0 * rows * heads * hd, 2.0 * b->act, 0);
    b->cur = *in;
}

/* Ring attention's own memory-bound kernels (context parallelism, PyTorch's experimental
 * context_parallel: torch/distributed/tensor/experimental/_attention.py of PyTorch 2.6,
 * _templated_ring_attention and its backward, with _cp_options' defaults convert_to_f32 and
 * enable_load_balance).  The SDPA calls of the cp ring steps do the core's FLOPs (priced by the
 * attention op); around them, on N = rows_q x heads x v_dim output and KV = rows_k x (K + V
 * width) key/value elements, each in bytes per element (a: the 16-bit dtype's size):
 * forward: every step's output cast to fp32 (a + 4) and, after the first, merged with the running
 * output through its logsumexp, out - sigmoid(lse_i - lse) x (out - out_i): three fp32 passes
 * (12 + 8 + 12); on the steps a rank runs with the second half of its queries only (load
 * balance, half of the later steps on average) the merge covers half the rows and
 * _partial_update's torch.cat rewrites the whole fp32 output (8); the K/V concatenated for the
 * next step (2a per KV element, every step but the last); the merged output cast back (4 + a).
 * Backward: fp32 gradient accumulators zeroed (4), each step's dQ, dK, dV added to them in fp32
 * (8 + a; halves plus a torch.cat of the whole on the partial steps: 12 + a/2), dK and dV
 * concatenated in fp32 for the ring (8 per KV element, every step), and cast back (4 + a).
 * Kernels: about 11 per step (cast, three merge passes, the logsumexp update, the cats).
 * Compiled (cp_torch 2, the ring traced into Inductor's graph, cp_ring): each step's casts and merge
 * fuse into one pointwise kernel, reading the running fp32 output and the step's output and writing
 * the fp32 output (8 + a; on the half-query steps the torch.cat reads the untouched half and writes
 * the whole, the merge's reads on half the rows: 8 + a/2), the first step's cast and the final cast
 * back fused into the merges beside them; only the first K/V concatenation has a user (the
 * all-gather rotater gathers once), the later ones are dead code Inductor removes
 * (Scheduler.dead_node_elimination).  Backward: the zero-filled accumulators fused into the first
 * step's cast (a + 4), each later step's dQ add (8 + a, the half-query steps 8 + a/2), the dK/dV
 * adds fused into the fp32 concatenation for the ring (the same bytes per KV element), the dK/dV
 * received last cast back (4 + a). */
static void cp_ring_merge(builder *b, double n_out, double n_kv)
{
    double a = b->act, later = b->cp - 1.0;
    double fwd, bwd;
    int kernels;
    if (b->sh->cp_torch == 2) {
        double step = ((8.0 + a) + (8.0 + a / 2.0)) / 2.0;
        fwd = n_out * later * step + n_kv * 2.0 * a;
        bwd = n_out * ((a + 4.0) + later * step) + n_kv * ((a + 4.0) + later * step + (4.0 + a));
        kernels = 1 + (int)later;
    } else {
        double full = (a + 4.0) + 12.0 + 8.0 + 12.0, part = (a + 4.0) / 2.0 + 6.0 + 4.0 + 6.0 + 8.0;
        fwd = n_out * ((a + 4.0) + later * (full + part) / 2.0 + (4.0 + a)) + n_kv * later * 2.0 * a;
        double add = 8.0 + a, add_half = 12.0 + a / 2.0, step = (add + add_half) / 2.0;
        bwd = (n_out + n_kv) * (4.0 + add + later * step + (4.0 + a)) + n_kv * b->cp * 8.0;
        kernels = 2 + 11 * (int)later;
    }
    eci_op *op = mem(b, "cp_ring_merge", 1.0, fwd, 0);
    if (op != NULL) {
        op->fwd_kernels = kernels;
        op->bwd_bytes = bwd;
        op->out_bytes = n_out * a;
    }
}

/* Ring attention (cp > 1): the other GPUs' keys and values (n_kv elements of this GPU's) gathered
 * while the first (local) step computes, a ring of cp steps (backward: again, and the fp32 dK/dV
 * passed on after each step), then the merge.  kernels=te (Transformer Engine's
 * AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/attention/dot_product_attention/
 * context_parallel.py @d0067d0d): each of the forward's cp - 1 K/V sends is issued before the step
 * whose attention hides it and waited for at the next; the backward's cp sends are the K/V, then K/V
 * and dK/dV together, the last the dK/dV alone, in the K/V dtype (p2p_comm_buffers, the non-FP8
 * path), each under one step (overlap.c); its output and LSE corrections are not priced.
 * cp_torch 2 (compile=1): torchtitan compiles each TransformerBlock, fullgraph=True (pytorch/
 * torchtitan torchtitan/parallelisms/parallelize_llama.py L297-306@9dec370), so the ring that the
 * block's SDPA dispatches to is traced into the graph, where a functional collective is waited for
 * where it is issued (torch/distributed/_functional_collectives.py _maybe_wrap_tensor: under tracing
 * `return wait_tensor(self)`, no AsyncCollectiveTensor) and Inductor moves no wait without its
 * opt-in passes (torch/_inductor/config.py reorder_for_compute_comm_overlap = False): the K/V
 * all-gather and every dK/dV pass run before the SDPA step that follows them. */
static void cp_ring(builder *b, double n_out, double n_kv)
{
    int torch = b->sh->cp_torch;
    comm(b, "cp_kv_ring", ECI_GROUP_CP, ECI_COLL_ALLGATHER, ECI_COLL_ALLGATHER, n_kv * b->cp * b->act,
         torch ? b->cp : 1);
    eci_op *ring = b->rc == EC_OK && b->wl->n_ops > 0 ? &b->wl->ops[b->wl->n_ops - 1] : NULL;
    if (ring != NULL && ring->kind == ECI_OP_COMM && torch) {
        ring->bwd_bytes = n_kv * 4.0;
        ring->ring_waited = torch == 2;
    } else if (ring != NULL && ring->kind == ECI_OP_COMM) { /* Transformer Engine's ring: a step per GPU */
        ring->hidden = b->cp;
        ring->bwd_bytes = n_kv * b->act;
        ring->ring_te = 1;
    }
    if (torch && !b->eager) /* after the exchange, which hides under the attention before it */
        cp_ring_merge(b, n_out, n_kv);
}

/* Context parallelism by all-to-all (cp_comm_type=a2a, kernels=te): Transformer Engine's
 * AttnFuncWithCPAndQKVOA2A (transformer_engine/pytorch/attention/dot_product_attention/
 * context_parallel.py) turns Q, K and V from this GPU's share of the sequence into its share of the
 * heads over the whole sequence before the attention, and the output back after it; the backward
 * sends dO and returns dQ, dK, dV the same way.  Waited for where issued: nothing hides them.
 * `elems`: the elements this GPU holds of what one exchange moves. */
static void cp_a2a(builder *b, const char *name, double elems)
{
    comm(b, name, ECI_GROUP_CP, ECI_COLL_ALLTOALL, ECI_COLL_ALLTOALL, elems * b->act, 0);
}

/* Q and K after their projections (q_rows and k_rows: this GPU's rows x its query / key heads):
 * the RMSNorm over each head (Qwen3), then the rotary embedding. */
static void qk_norm_rope(builder *b, const ec_attention_layer *a, double q_rows, double k_rows, double hd)
{
    if (a->qk_norm) { /* RMSNorm over each head of Q and K (Qwen3): weights of head_dim each */
        tensor q = {.rows = q_rows, .width = hd}, k = {.rows = k_rows, .width = hd};
        ec_norm_layer rms = {.kind = EC_NORM_RMS};
        eci_wl_norm_on(b, "q_norm", &q, &rms);
        eci_wl_norm_on(b, "k_norm", &k, &rms);
    }
    if (a->position == EC_POS_ROPE && !a->cross && a->kv_rank == 0) {
        /* apply_rotary_pos_emb on Q and K: mul by cos, rotate_half (neg, cat), mul by sin,
         * add: about two passes per kernel; autograd keeps Q, K and their rotations (compiled:
         * nothing, sh->remat) */
        double n = (q_rows + k_rows) * hd;
        eci_op *op = mem(b, "rope", n, b->sh->rope_kernels * b->act, b->sh->remat ? 0 : 2.0 * n * b->act);
        if (op != NULL)
            op->fwd_kernels = b->sh->rope_kernels > 0 ? b->sh->rope_kernels : 1;
    }
}

/* Q, K and V projections (one fused GEMM or three; latent attention's above), rotary embedding,
 * Q/K norms, the key/value heads repeated for grouped-query attention, the core (with attention
 * sinks: eager unless a flash kernel takes them, as SDPA has no sink), and the output projection. */
void eci_wl_attention(builder *b, const ec_attention_layer *a)
{
    if (a->cross && !b->has_memory) {
        eci_wl_shape_error(b, "cross-attention needs an encoder memory (a DECODER layer before it)");
        return;
    }
    double width = b->cur.width, heads = a->heads, kv = a->kv_heads > 0 ? a->kv_heads : a->heads;
    if (a->head_dim == 0 && fmod(width, heads) != 0) {
        char why[160];
        snprintf(why, sizeof why, "heads (%d) must divide the stream width (%.0f), or head_dim must be given",
                 a->heads, width);
        eci_wl_shape_error(b, why);
        return;
    }
    double hd = a->head_dim > 0 ? a->head_dim : width / heads, vd = a->v_head_dim > 0 ? a->v_head_dim : hd;
    /* tensor parallelism: this GPU's heads; key/value heads fewer than tp are replicated */
    heads = eci_wl_tp_share(b, heads, "the attention heads");
    kv = kv >= b->tp ? eci_wl_tp_share(b, kv, "the key/value heads") : 1;
    eci_wl_tp_enter(b);
    double q_out = heads * hd, kv_out = kv * hd, v_out = kv * vd;
    tensor in = b->cur, *src = a->cross ? &b->memory : &b->cur;
    /* queries: this GPU's share of the sequence; keys: the whole of it (context parallelism) */
    double rows_q = in.rows, rows_k = src->rows, sq = in.seq;
    double sk_eff = a->cross ? src->seq : in.seq_sq / in.kv_seq;
    if (a->kv_rank > 0) {
        latent_qkv(b, a, &in, heads, hd, vd);
    } else if ((a->qkv_fused || b->sh->te_layers) && !a->cross) { /* kernels=te: Megatron's linear_qkv */
        eci_wl_linear_on(b, "qkv", &in, q_out + kv_out + v_out, a->qkv_bias);
    } else {
        eci_wl_linear_on(b, "q", &in, q_out, a->qkv_bias);
        eci_wl_linear_on(b, "k", src, kv_out, a->qkv_bias);
        eci_wl_linear_on(b, "v", src, v_out, a->qkv_bias);
    }
    qk_norm_rope(b, a, rows_q * heads, rows_k * kv, hd);
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
        mem(b, "repeat_kv", rows_k * heads * (hd + vd), 2.0 * b->act, 0);
    }
    if (a->sinks) { /* the learned sink logit of each head */
        eci_op *op = mem(b, "sinks", heads, 2.0 * b->f32k, 0);
        if (op != NULL) {
            op->params = heads;
            op->param_tensors = 1;
        }
    }
    int a2a = b->cp > 1 && !a->cross && b->sh->cp_a2a;
    if (a2a)
        cp_a2a(b, "cp_a2a_qkv", rows_q * (q_out + kv_out + v_out));
    b->core = 1;
    if (b->eager || (a->sinks && !b->flash))
        attention_eager(b, a, heads, hd, vd, sq, sk_eff, rows_q, rows_k);
    else {
        double span = a->cross ? in.kv_seq : sk_eff; /* what a causal query ranges over: its own sequence
                                                      * when packed */
        attention_fused(b, heads, kv, hd, vd, sq, b->flash ? sk_eff * flash_keys_frac(a, span) : sk_eff, rows_q,
                        rows_k);
        /* SDPA's causal skipping is priced in time only: the model's FLOPs (MFU, HFU) count
         * the whole s x s square, as Narayanan et al. and PaLM do */
        eci_op *last = b->rc == EC_OK && b->wl->n_ops > 0 ? &b->wl->ops[b->wl->n_ops - 1] : NULL;
        if (!b->flash && last != NULL && last->kind == ECI_OP_ATTN)
            last->attn_keys_frac = sdpa_keys_frac(b, a, span);
        if (last != NULL && last->kind == ECI_OP_ATTN) { /* blocks skipped: the kernel's causal rate */
            double keys = b->flash ? flash_keys_frac(a, span) : last->attn_keys_frac;
            last->attn_causal = keys > 0 && keys < 1.0;
        }
    }
    b->core = 0;
    if (a2a)
        cp_a2a(b, "cp_a2a_out", rows_q * heads * vd);
    else if (b->cp > 1 && !a->cross) /* K and V as SDPA receives them: after repeat_kv every query head's */
        cp_ring(b, rows_q * heads * vd, rows_k * (b->flash ? kv : heads) * (hd + vd));
    mem(b, "merge_heads", rows_q * heads * vd, 2.0 * b->act, 0);
    b->cur.width = heads * vd;
    b->cur.f32 = 0;
    fresh(b, &b->cur);
    /* Megatron's TE layers hand the attention's output to the projection as a view (sbhd layout:
     * core_attn_out.view(s, b, h)); the projection keeps that tensor, which the attention keeps
     * already, unless it keeps an FP8 cast of its own */
    if (b->sh->te_layers && kept_input_bytes(b, b->act) == b->act)
        mark_saved(b, b->cur.id);
    eci_wl_linear(b, "attn_out", width, a->out_bias);
    eci_wl_tp_exit(b);
}

/* ---- feed-forward blocks ------------------------------------------------------------------ */
/* fp8_act_store (kernels=te): Megatron-Core's SwiGLU keeps its input, the gate's and up's outputs,
 * as float8_e4m3fn (megatron/core/fusions/fused_bias_swiglu.py, SwiGLUFunction and
 * WeightedSwiGLUFunction: input.to(torch.float8_e4m3fn) before save_for_backward, .to(the input's
 * dtype) in backward), for the SwiGLU only (bias_swiglu_impl; a GeGLU keeps 16 bits). */
static int swiglu_fp8_store(const builder *b, ec_activation act, int gated)
{
    return b->sh->fp8_act_store && gated && act == EC_ACT_SILU;
}

/* The two casts of that store over its n elements: 16 bits to one byte in the forward, back in
 * the backward (a kernel each, reading one and writing the other). */
static void swiglu_fp8_casts(builder *b, double n)
{
    eci_op *op = mem(b, "swiglu_fp8_store", n, b->act + 1.0, 0);
    if (op != NULL)
        op->bwd_bytes = n * (1.0 + b->act);
}

/* up (and gate), activation, down on this GPU's ffn columns. */
static void mlp_body(builder *b, const ec_mlp_layer *m, double ffn)
{
    double width = b->cur.width;
    if (m->gated) { /* down(act(gate(x)) * up(x)): the product keeps both of its inputs */
        tensor in = b->cur;
        ec_activation act = eci_wl_mlp_act(b, m->act);
        int fp8 = swiglu_fp8_store(b, act, 1);
        eci_wl_linear(b, "gate", ffn, m->bias);
        b->fp8_store = fp8;
        eci_wl_activation(b, act);
        eci_wl_linear_on(b, "up", &in, ffn, m->bias);
        double n = elems(&b->cur);
        chained(mem(b, "gate_mul", n, 3.0 * b->act, (b->sh->remat ? 1.0 : 2.0) * n * kept_elem_bytes(b, b->act))); /* compiled: up's only */
        b->fp8_store = 0;
        if (fp8)
            swiglu_fp8_casts(b, 2.0 * n);
        fresh(b, &b->cur);
    } else {
        eci_wl_linear(b, "mlp_in", ffn, m->bias);
        eci_wl_activation(b, eci_wl_mlp_act(b, m->act));
    }
    if (m->dropout)
        eci_wl_dropout(b, "mlp_dropout");
    eci_wl_linear(b, "mlp_out", width, m->bias);
}

void eci_wl_mlp(builder *b, const ec_mlp_layer *m)
{
    double ffn = eci_wl_tp_share(b, (double)m->ffn, "the MLP width (ffn)");
    eci_wl_tp_enter(b);
    mlp_body(b, m, ffn);
    eci_wl_tp_exit(b);
}

/* The chunk sort around expert parallelism's all-to-all: one gather of `bytes` (every
 * token-expert pair's row), read and written once; its backward applies the inverse order to
 * the gradients, the same traffic.  Index order only: nothing is kept for backward. */
static void ep_sort(builder *b, const char *name, double bytes)
{
    eci_op *op = mem(b, name, bytes, 2.0, 0);
    if (op != NULL) {
        op->bwd_bytes = op->fwd_bytes;
        op->out_bytes = bytes;
    }
}

/* This GPU's share of the experts' width under expert tensor parallelism (etp ranks). */
static double etp_share(builder *b, double whole)
{
    if (b->etp <= 1)
        return whole;
    if (fmod(whole, b->etp) != 0) {
        char why[96];
        snprintf(why, sizeof why, "etp=%d must divide the experts' width (ffn %.0f)", b->etp, whole);
        eci_wl_shape_error(b, why);
        return whole;
    }
    return whole / b->etp;
}

/* One routed expert's MLP (run once per local expert, eci_wl_moe): up (and gate), the
 * activation, down, with their weights' casts or dequantization. */
static void expert_mlp(builder *b, const ec_moe_layer *m, const tensor *in, double per, double ffn)
{
    double width = in->width, x = per * width;
    double up_n = m->gated ? 2.0 : 1.0;
    int quant = eci_wl_dequant(b, "expert_dequant_w", (up_n + 1.0) * width * ffn);
    if (b->amp) { /* the gathered fp32 tokens and the expert's weights (autocast's weight cache) */
        if (in->f32)
            cast(b, "expert_cast_in", x, 0);
        if (casts_weights(b))
            cast(b, "expert_cast_w", (up_n + 1.0) * width * ffn, 0);
    }
    /* Megatron-Core's TEGroupedMLP runs the experts as Transformer Engine GroupedLinear layers,
     * which under FP8 quantize each expert's rows and gradients and run FP8 grouped GEMMs
     * (transformer_engine/pytorch/module/grouped_linear.py L126-171 and L301-323 @v2.9:
     * tex.split_quantize, general_grouped_gemm; Float8CurrentScalingQuantizer among its
     * quantizers): priced as TE's other FP8 GEMMs, casts included (compute.c) */
    int te_fp8 = b->sh->te_layers && b->layer < (int)b->net->n_layers;
    eci_op *op = gemm(b, "expert_up", per, up_n * ffn, width, 1, 0);
    if (op != NULL) {
        op->fp8 = te_fp8;
        op->params = up_n * width * ffn + (m->bias ? up_n * ffn : 0);
        op->param_tensors = up_n * (m->bias ? 2 : 1);
        op->cast_params = casts_weights(b) ? op->params : 0;
        op->quant = quant;
    }
    int kernels;
    double passes, kept;
    ec_activation act = eci_wl_mlp_act(b, m->act);
    int fp8 = swiglu_fp8_store(b, act, m->gated);
    eci_wl_act_shape(b, act, &kernels, &passes, &kept);
    b->fp8_store = fp8;
    eci_op *a = mem(b, "expert_act", per * ffn, kernels * passes * b->act + (m->gated ? 3.0 * b->act : 0),
                    (kept + (m->gated ? (b->sh->remat ? 1.0 : 2.0) : 0)) * per * ffn * kept_elem_bytes(b, b->act));
    b->fp8_store = 0;
    if (a != NULL)
        a->fwd_kernels = kernels + (m->gated ? 1 : 0);
    if (fp8)
        swiglu_fp8_casts(b, 2.0 * per * ffn);
    eci_op *down = gemm(b, "expert_down", per, width, ffn, 1, per * ffn * kept_input_bytes(b, b->act));
    if (down != NULL) {
        down->fp8 = te_fp8;
        down->params = ffn * width + (m->bias ? width : 0);
        down->param_tensors = m->bias ? 2 : 1;
        down->cast_params = casts_weights(b) ? down->params : 0;
        down->quant = quant;
    }
}

/* A mixture-of-experts block as HF's eager code runs it (MixtralSparseMoeBlock,
 * Qwen2MoeSparseMoeBlock): a router, a softmax in fp32 and top-k, then a Python loop over the
 * experts, each gathering its tokens, running its MLP and scattering the weighted result back.
 * Tokens are taken as spread evenly over the experts.  Expert parallelism (ep): this GPU holds
 * experts/ep of them, and two all-to-alls over the expert group carry every token-expert pair
 * to its expert's GPU and back; each local expert then sees rows x top_k x ep / experts rows.
 * The all-to-all hands over its rows in source-rank order, not grouped by expert: with more
 * than one local expert they are sorted by expert before the experts run and put back in rank
 * order before the combine, one copy of every pair each way, forward and backward alike
 * (Megatron-Core's MoEAlltoAllTokenDispatcher, "Permutation 2" / "Unpermutation 2":
 * sort_chunks_by_idxs when num_local_experts > 1, megatron/core/transformer/moe/
 * token_dispatcher.py dispatch_postprocess and combine_preprocess).
 * Tensor parallelism splits each expert's inner width as it splits an MLP's (etp = tp: the block
 * inside the tensor-parallel region).  Under Megatron-Core's parallel folding with etp != tp
 * the block leaves that region: this GPU routes its own sequence-parallel rows, the all-to-all
 * runs over its expert-parallel group (etp ranks apart, across the tensor-parallel ranks), the
 * expert tensor-parallel group all-gathers the pairs its etp ranks received (backward: reduce-
 * scatters their gradients) and each expert's width splits over etp; the output reduce-scatters
 * back before the combine (MoEAlltoAllTokenDispatcher with tp_group = expt_tp:
 * token_dispatcher.py dispatch_postprocess gather_from_sequence_parallel_region and
 * combine_preprocess reduce_scatter_to_sequence_parallel_region @d98e8a64).  The shared experts
 * stay a tensor-parallel MLP. */
void eci_wl_moe(builder *b, const ec_moe_layer *m)
{
    if (fmod(m->experts, b->ep) != 0) {
        char why[96];
        snprintf(why, sizeof why, "ep=%d must divide the experts (%d)", b->ep, m->experts);
        eci_wl_shape_error(b, why);
        return;
    }
    int folded = b->etp != b->tp; /* the experts outside the tensor-parallel region */
    double ffn = folded ? etp_share(b, (double)m->ffn) : eci_wl_tp_share(b, (double)m->ffn, "the experts' width (ffn)");
    if (!folded)
        eci_wl_tp_enter(b);
    tensor in = b->cur;
    double width = in.width, rows = in.rows, E = m->experts, k = m->top_k, local = E / b->ep;
    double gathered = folded ? b->etp : 1; /* the expert tensor-parallel ranks' pairs, gathered */
    double per = rows * k * gathered / local;
    eci_op *router = eci_wl_linear_on(b, "router", &in, E, m->bias);
    /* Megatron-Core's router is a plain matmul in the input's dtype (router_gating_linear,
     * megatron/core/transformer/moe/router.py L91-96 and moe_utils.py L939-1008 @core_v0.15.0), not
     * a Transformer Engine layer: no FP8 */
    if (router != NULL && b->sh->te_layers)
        router->fp8 = 0;
    mem(b, "router_softmax_topk", rows * E, 2.0 * b->f32k + 2.0 * b->act, rows * E * b->f32k);
    double pairs = rows * k * width * b->act; /* the token-expert pairs' activations */
    size_t dispatch = b->wl->n_ops;
    if (b->ep > 1)
        comm(b, "ep_dispatch", ECI_GROUP_EP, ECI_COLL_ALLTOALL, ECI_COLL_ALLTOALL, pairs, 0);
    if (gathered > 1)
        comm(b, "etp_allgather", ECI_GROUP_ETP, ECI_COLL_ALLGATHER, ECI_COLL_REDUCE_SCATTER, pairs * gathered, 0);
    if (b->ep > 1 && local > 1)
        ep_sort(b, "ep_sort", pairs * gathered);
    /* one expert's work, launched once per local expert */
    size_t first = b->wl->n_ops;
    double x = per * width;
    mem(b, "expert_gather", x, 2.0 * tbytes(b, &in), x * kept_input_bytes(b, b->act)); /* up's input */
    /* Megatron-Core's token-dropless all-to-all dispatcher copies the routing's split sizes to
     * the host (the all-to-all and the grouped GEMM take them as host integers) and waits for
     * that copy: with expert parallelism before the all-to-all, else before the experts
     * (MoEAlltoAllTokenDispatcher.preprocess, cuda_sync_point 'before_ep_alltoall' or
     * 'before_finish', and _maybe_dtoh_and_synchronize's d2h_event.synchronize();
     * megatron/core/transformer/moe/token_dispatcher.py L470-534 and L822-861 @core_v0.15.0).
     * Only a capacity factor with padding skips it, which no key here describes. */
    if (b->sh->te_layers && b->rc == EC_OK) {
        size_t at = b->ep > 1 ? dispatch : first;
        b->wl->ops[at].host_sync = 1;
    }
    expert_mlp(b, m, &in, per, ffn);
    /* the weighting by the router's probability keeps the expert's output; Megatron-Core's TE layers
     * weight inside the activation (its input, kept above) and unpermute keeps only its index map
     * (megatron/core/transformer/moe/experts.py @60e039626, TEGroupedMLP.forward: bias_act_func ->
     * weighted_bias_swiglu_impl(intermediate, bias, permuted_probs); token_dispatcher.py combine) */
    mem(b, "expert_scatter", x, 3.0 * b->act, b->sh->te_layers ? 0 : x * b->act);
    for (size_t i = first; b->rc == EC_OK && i < b->wl->n_ops; i++) {
        b->wl->ops[i].count = (int)local;
        b->wl->ops[i].expert = 1;
    }
    if (b->ep > 1 && local > 1)
        ep_sort(b, "ep_unsort", pairs * gathered);
    if (gathered > 1)
        comm(b, "etp_reduce_scatter", ECI_GROUP_ETP, ECI_COLL_REDUCE_SCATTER, ECI_COLL_ALLGATHER, pairs * gathered, 0);
    if (b->ep > 1)
        comm(b, "ep_combine", ECI_GROUP_EP, ECI_COLL_ALLTOALL, ECI_COLL_ALLTOALL, pairs, 0);
    b->cur = in;
    b->cur.f32 = 0;
    fresh(b, &b->cur);
    if (m->shared_experts > 0) { /* Qwen-MoE: a dense expert every token goes through */
        tensor moe_out = b->cur;
        b->cur = in;
        ec_mlp_layer sm = {.ffn = m->shared_ffn, .act = m->act, .gated = m->gated};
        double shared = eci_wl_tp_share(b, (double)m->shared_ffn, "the shared experts' width");
        if (folded) /* a tensor-parallel MLP of its own (its rows gathered and scattered back) */
            eci_wl_tp_enter(b);
        tensor sin = b->cur;
        mlp_body(b, &sm, shared);
        if (m->shared_gate) {
            eci_wl_linear_on(b, "shared_gate", &sin, 1, 0);
            mem(b, "shared_gate_mul", sin.rows * width, 3.0 * b->act, sin.rows * width * b->act);
        }
        if (folded)
            eci_wl_tp_exit(b);
        mem(b, "moe_add", rows * width, 3.0 * b->act, 0);
        b->cur = moe_out;
        fresh(b, &b->cur);
    }
    if (!folded)
        eci_wl_tp_exit(b);
}
