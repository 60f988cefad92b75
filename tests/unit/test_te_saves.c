/*
 * test_te_saves.c: what Megatron-Core's Transformer Engine layers (kernels=te) keep for backward,
 * term by term (issue 40: two Megatron-Bridge MoE runs that ran were predicted not to fit).
 *  - TE's RMSNorm keeps its input and rsigma, the fused RoPE nothing, bias_swiglu its input once:
 *    kernels=te sets the shape's remat, as torch.compile's partitioner keeps the same;
 *  - a flash kernel (flash-attn, TE/cuDNN fused attention) keeps K and V as it reads them, the
 *    grouped key/value heads, not one copy per query head (SDPA after HF's repeat_kv does);
 *  - the experts weight by the router's probabilities inside the fused activation
 *    (TEGroupedMLP: weighted_bias_swiglu_impl), so the combine keeps no copy of the experts' output;
 *  - under FP8, TE's linears (and the experts' grouped GEMMs) keep their input as the FP8 cast, one
 *    byte per element; the router, a plain linear, keeps it as it comes;
 *  - Megatron's vocab-parallel cross entropy makes the logits' gradient in place in its fp32
 *    softmax and casts it to 16 bits: the loss's backward transient is one 16-bit gradient;
 *  - an interleaved pipeline's last stage holds its head (final norm, head, loss) for one
 *    micro-batch, however many of its blocks' micro-batches are in flight;
 *  - the output projection keeps the attention's output, which the attention keeps already (a view
 *    in Megatron), unless it keeps its own FP8 cast.
 *  - the queries, keys and values are one GEMM, Megatron-Core's linear_qkv, with one LoRA adapter;
 *  - fp8_params holds the blocks' linear weights at a byte each, and all-gathers them so;
 *  - fp8_act_store keeps the SwiGLU's input at a byte an element.
 * Each check fails on the code before the fix.
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/memory.h"
#include "model/workload.h"
#include "sim/setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double ROWS = 2.0 * 128; /* batch 2 x seq 128 */

static const eci_workload *workload_p(ec_ctx *ctx, const char *model, int precision, int flash, int te);

static const eci_workload *workload(ec_ctx *ctx, const char *model, int flash, int te)
{
    return workload_p(ctx, model, EC_PREC_AMP_BF16, flash, te);
}

static const eci_workload *workload_p(ec_ctx *ctx, const char *model, int precision, int flash, int te)
{
    eci_shape sh = ec_test_lm_shape(precision, 2, 128);
    sh.weights_16 = 1;
    sh.flash = flash;
    sh.remat = te;
    sh.te_layers = te;
    return ec_test_lm_workload(ctx, model, &sh);
}

/* kernels=te keeps what the partitioner keeps (remat) and marks Megatron's TE layers; the other
 * kernel choices do neither. */
static void test_te_shape(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_config_init(&cfg);
    eci_resolved r;
    memset(&r, 0, sizeof r);
    r.tp = r.cp = r.ep = 1;
    eci_shape sh;
    cfg.kernels = EC_KERNELS_TE;
    eci_setup_shape(ctx, &cfg, &r, 128, 2, &sh);
    assert_int_equal(sh.remat, 1);
    assert_int_equal(sh.te_layers, 1);
    cfg.kernels = EC_KERNELS_FUSED;
    eci_setup_shape(ctx, &cfg, &r, 128, 2, &sh);
    assert_int_equal(sh.remat, 0);
    assert_int_equal(sh.te_layers, 0);
    ec_ctx_free(ctx);
}

/* Llama 3.1 8B: 32 query heads, 8 key/value heads of 128.  Flash keeps Q and the output at 32
 * heads, K and V at 8, and a log-sum-exp per query head and row; SDPA (flash=0) reads the copies
 * repeat_kv made, 32 heads each. */
static void test_flash_gqa_kv(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double hd = 128, lse = ROWS * 32 * 4.0;
    double flash = ec_test_first_op(workload(ctx, "llama-3.1-8b", 1, 0), "sdpa")->saved_bytes;
    double sdpa = ec_test_first_op(workload(ctx, "llama-3.1-8b", 0, 0), "sdpa")->saved_bytes;
    assert_rel(flash, ROWS * (32 + 8) * 2.0 * hd * 2 + lse, EC_TOL_EXACT);
    assert_rel(sdpa, ROWS * (32 + 32) * 2.0 * hd * 2 + lse, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* gpt-oss-20b's experts: the scatter keeps the experts' output (HF's routing weight multiply)
 * unless TE's layers weighted it inside the activation. */
static void test_te_expert_scatter(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_op *hf = ec_test_first_op(workload(ctx, "gpt-oss-20b", 1, 0), "expert_scatter");
    const eci_op *gather = ec_test_first_op(workload(ctx, "gpt-oss-20b", 1, 0), "expert_gather");
    assert_true(hf->saved_bytes > 0);
    assert_rel(hf->saved_bytes, gather->saved_bytes, EC_TOL_EXACT); /* rows x width in bf16, both */
    const eci_op *te = ec_test_first_op(workload(ctx, "gpt-oss-20b", 1, 1), "expert_scatter");
    assert_true(te->saved_bytes == 0);
    ec_ctx_free(ctx);
}

/* gpt-oss-20b under amp_fp8: width 2880, top-4 of 32 experts (per expert rows x 4 / 32), ffn 2880.
 * kernels=te keeps the inputs of q (a TE linear), expert_up (the gather) and expert_down at one
 * byte; the router's at two; without te (HF's code under FP8 GEMMs) every one at two. */
static void test_te_fp8_inputs(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double h = 2880, per = ROWS * 4 / 32;
    const eci_workload *te = workload_p(ctx, "gpt-oss-20b", EC_PREC_AMP_FP8, 1, 1);
    const eci_workload *hf = workload_p(ctx, "gpt-oss-20b", EC_PREC_AMP_FP8, 1, 0);
    assert_rel(ec_test_first_op(te, "router")->saved_bytes, ROWS * h * 2, EC_TOL_EXACT);
    assert_rel(ec_test_first_op(te, "expert_gather")->saved_bytes, per * h * 1, EC_TOL_EXACT);
    assert_rel(ec_test_first_op(hf, "expert_gather")->saved_bytes, per * h * 2, EC_TOL_EXACT);
    assert_rel(ec_test_first_op(te, "expert_down")->saved_bytes, per * h * 1, EC_TOL_EXACT);
    assert_rel(ec_test_first_op(hf, "expert_down")->saved_bytes, per * h * 2, EC_TOL_EXACT);
    const eci_op *q_te = ec_test_first_op(te, "qkv"), *q_hf = ec_test_first_op(hf, "q");
    assert_true(q_hf->saved_bytes > 0);
    assert_rel(q_te->saved_bytes, q_hf->saved_bytes / 2, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* Llama 3.1 8B's 128,256-word head under amp_bf16: autocast's loss holds two fp32 gradients
 * (loss_bytes = rows x vocabulary x 4, priced twice), Megatron's one bf16 gradient. */
static void test_te_loss(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double n = ROWS * 128256;
    assert_rel(workload(ctx, "llama-3.1-8b", 1, 0)->loss_bytes, n * 4, EC_TOL_EXACT);
    assert_rel(2.0 * workload(ctx, "llama-3.1-8b", 1, 1)->loss_bytes, n * 2, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* Two micro-batches in flight (act_copies), the head's kept once (head_copies = 1): the activations
 * drop by exactly one copy of what the ops after the last block keep. */
static void test_interleaved_head(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_workload *wl = workload(ctx, "llama-3.1-8b", 1, 0);
    double head = 0;
    for (size_t i = wl->blocks[wl->n_blocks - 1].end; i < wl->n_ops; i++)
        head += wl->ops[i].block < 0 ? wl->ops[i].saved_bytes * wl->ops[i].count : 0;
    assert_true(head > 0);
    eci_mem_in in = {.wl = wl, .precision = EC_PREC_AMP_BF16, .optimizer = EC_OPT_SGD, .act_copies = 2,
                     .grad_accum = 2, .num_gpus = 1, .capacity_bytes = 80e9, .allocator_scale = 1.0,
                     .weight_shards = 1, .grad_shards = 1, .opt_shards = 1, .expert_split = 1};
    ec_memory both, once;
    eci_memory_estimate(ctx, &in, &both);
    in.head_copies = 1;
    eci_memory_estimate(ctx, &in, &once);
    assert_true(both.activations_bytes > 0);
    assert_rel(both.activations_bytes - once.activations_bytes, head, 1e-9);
    ec_ctx_free(ctx);
}

/* Llama 3.1 8B's attn_out (input 32 x 128 = 4096 wide): HF's merged copy in bf16; TE's view of the
 * attention's own output, nothing more; under FP8 TE's one-byte cast. */
static void test_te_attn_out(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    assert_rel(ec_test_first_op(workload(ctx, "llama-3.1-8b", 1, 0), "attn_out")->saved_bytes, ROWS * 4096 * 2,
               EC_TOL_EXACT);
    assert_true(ec_test_first_op(workload(ctx, "llama-3.1-8b", 1, 1), "attn_out")->saved_bytes == 0);
    assert_rel(ec_test_first_op(workload_p(ctx, "llama-3.1-8b", EC_PREC_AMP_FP8, 1, 1), "attn_out")->saved_bytes,
               ROWS * 4096 * 1, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* Llama 3.1 8B (32 layers, 32 query heads and 8 key/value heads of 128): under kernels=te one
 * linear_qkv per layer, 4096 + 2 x 1024 wide, where HF's code runs q, k and v apart; with LoRA on
 * the attention, two adapters a layer (linear_qkv, linear_proj) against HF's four. */
static void test_te_fused_qkv(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_workload *te = workload(ctx, "llama-3.1-8b", 1, 1), *hf = workload(ctx, "llama-3.1-8b", 1, 0);
    assert_int_equal(ec_test_count_ops(te, "q") + ec_test_count_ops(te, "k") + ec_test_count_ops(te, "v"), 0);
    assert_int_equal(ec_test_count_ops(te, "qkv"), 1); /* in the repeated block */
    assert_rel(ec_test_first_op(te, "qkv")->n, 4096 + 2 * 1024, EC_TOL_EXACT);
    assert_int_equal(ec_test_count_ops(hf, "q"), 1);
    eci_shape sh = ec_test_lm_shape(EC_PREC_AMP_BF16, 2, 128);
    sh.weights_16 = sh.flash = sh.remat = sh.te_layers = 1;
    sh.lora_r = 16;
    sh.lora_targets = EC_LORA_ATTENTION;
    assert_int_equal(ec_test_count_ops(ec_test_lm_workload(ctx, "llama-3.1-8b", &sh), "lora_A"), 2);
    sh.remat = sh.te_layers = 0;
    assert_int_equal(ec_test_count_ops(ec_test_lm_workload(ctx, "llama-3.1-8b", &sh), "lora_A"), 4);
    ec_ctx_free(ctx);
}

/* A memory key on Llama 3.1 8B under ZeRO-1 on 8 GPUs with kernels=te at `precision` and `seq`:
 * *off without it (KEY=0), *on with it (KEY=1); then with `other_kernels` instead of te, where it
 * must change nothing and be named as ignored with `ignored` (the warning's text). */
static void key_pair(const char *key, const char *precision, const char *seq, const char *other_kernels,
                     const char *ignored, ec_result *off, ec_result *on)
{
    ec_ctx *ctx = ec_test_ctx();
    char k0[64], k1[64];
    snprintf(k0, sizeof k0, "%s=0", key);
    snprintf(k1, sizeof k1, "%s=1", key);
    const char *w[] = {"model=llama-3.1-8b", "gpu=h100-sxm5-80gb", precision, "num_gpus=8", "batch_per_gpu=1", seq,
                       "strategy=zero", "zero_stage=1", "kernels=te", k0};
    ec_test_predict_words(ctx, w, 10, off);
    w[9] = k1;
    ec_test_predict_words(ctx, w, 10, on);
    assert_false(on->warnings & EC_WARN_KEY_IGNORED);
    ec_result other;
    w[8] = other_kernels;
    ec_test_predict_words(ctx, w, 10, &other);
    assert_true(other.warnings & EC_WARN_KEY_IGNORED);
    assert_non_null(strstr(other.warning_text, ignored));
    ec_ctx_free(ctx);
}

/* fp8_params on Llama 3.1 8B (32 layers of 4096 + 2 x 1024 (qkv), 4096 (proj) and 3 x 14336
 * (MLP) columns of 4096 inputs) under ZeRO-1 on 8 GPUs: the blocks' linear weights at a byte each,
 * 1 byte less than their 16-bit copy; the embedding, norms and head as they were.  Without
 * kernels=te the key changes nothing and is named as ignored. */
static void test_te_fp8_params(void **state)
{
    (void)state;
    ec_result b16, b8;
    key_pair("fp8_params", "precision=amp_fp8", "seq_len=1024", "kernels=fused", "fp8_params (precision=amp_fp8 kernels=te",
             &b16, &b8);
    double linear = 32.0 * 4096 * (4096 + 2 * 1024 + 4096 + 3 * 14336);
    assert_rel(b16.memory.weights_bytes - b8.memory.weights_bytes, linear, EC_TOL_CLOSED_FORM);
    /* ZeRO-1's all-gather of the updated parameters moves those weights a byte each too */
    assert_true(b8.comm.shard_wait_s < b16.comm.shard_wait_s);
}

/* The all-gather's bytes under fp8_params (Megatron's fp8_param_gather), Llama 3.1 8B: the
 * trained parameters at 2 bytes less a byte for each of the blocks' linear weights (the count
 * above, every one of them inside the repeated block: none left to FSDP's root unit); without
 * the key, or in an 8-bit compute dtype, every parameter at the dtype's width. */
static void test_fp8_gather_bytes(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_workload *wl = workload_p(ctx, "llama-3.1-8b", EC_PREC_AMP_FP8, 1, 1);
    assert_non_null(wl);
    double linear = 32.0 * 4096 * (4096 + 2 * 1024 + 4096 + 3 * 14336), in_blocks = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        in_blocks += wl->blocks[b].fp8_trainable * wl->blocks[b].reps;
    assert_rel(in_blocks, linear, EC_TOL_CLOSED_FORM);
    assert_true(eci_workload_root_fp8(wl) == 0);
    double n = wl->trainable_params;
    assert_rel(eci_workload_gather_bytes(2.0, 1, n, wl->fp8_trained_params), 2.0 * n - linear, EC_TOL_CLOSED_FORM);
    assert_rel(eci_workload_gather_bytes(2.0, 0, n, wl->fp8_trained_params), 2.0 * n, EC_TOL_CLOSED_FORM);
    assert_rel(eci_workload_gather_bytes(1.0, 1, n, wl->fp8_trained_params), n, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* fp8_act_store on Llama 3.1 8B (32 layers, a SwiGLU of 14336 columns) at 4096 tokens under ZeRO-1
 * on 8 GPUs (the peak at the backward's start, every activation alive): the SwiGLU's input, the
 * gate's and up's outputs (2 x 14336 per token), kept at a byte an element instead of two:
 * 32 x 4096 x 2 x 14336 x (2 - 1) bytes fewer; the casts there and back take time.
 * Without kernels=te the key changes nothing and is named as ignored. */
static void test_te_fp8_act_store(void **state)
{
    (void)state;
    ec_result b16, b8;
    key_pair("fp8_act_store", "precision=amp_bf16", "seq_len=4096", "kernels=eager",
             "fp8_act_store (kernels=te with a SwiGLU MLP only)", &b16, &b8);
    assert_rel(b16.memory.activations_bytes - b8.memory.activations_bytes, 32.0 * 4096 * 2 * 14336, EC_TOL_CLOSED_FORM);
    assert_true(b8.step_s > b16.step_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_te_shape),
        cmocka_unit_test(test_flash_gqa_kv),
        cmocka_unit_test(test_te_expert_scatter),
        cmocka_unit_test(test_te_fp8_inputs),
        cmocka_unit_test(test_te_loss),
        cmocka_unit_test(test_interleaved_head),
        cmocka_unit_test(test_te_attn_out),
        cmocka_unit_test(test_te_fused_qkv),
        cmocka_unit_test(test_te_fp8_params),
        cmocka_unit_test(test_fp8_gather_bytes),
        cmocka_unit_test(test_te_fp8_act_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
