/*
 * test_memory_litgpt.c: the allocations of LoRA and QLoRA as LitGPT runs them (finetune/lora.py
 * @8641822 on Lightning @71aed751; bench/data/memory/README.md, litgpt), each a term a test
 * here loses when it is removed:
 *   unit grads   lora_fsdp_wrap=block: FSDP's flat gradient covers the frozen weights of a unit
 *                that holds adapters (use_orig_params), sharded like the trained ones
 *   no_sync      fsdp_no_sync=1 with grad_accum > 1: the gradients stay unsharded between
 *                micro-steps, beside the activations
 *   bnb input    a bitsandbytes-quantized frozen linear keeps its input for backward
 *                (MatMul4Bit's ctx.tensors), where a 16-bit frozen one keeps none
 *   nodq         base_precision=nf4_nodq stores nf4_nodq_bytes_per_param per quantized weight
 *   quant head   quant_head=1: the head's weight quantized, and dequantized whole (fp16, then a
 *                bf16 copy) for its input gradient at the start of backward
 *   lora dropout lora_dropout > 0: each adapted linear keeps its dropped 16-bit copy of the input
 *                and the 1-byte mask (PEFT's per-adapter nn.Dropout; fsdp_qlora's default 0.1)
 *   zero base    strategy=zero under autocast holds the frozen base in 16 bits, as it holds the
 *                trained weights (DeepSpeed's engine casts the whole module; Megatron's
 *                Float16Module), where DDP keeps it at the fp32 parameters' width
 * on llama-3.1-8b (32 layers, width 4096, 8 KV heads of 128, MLP 14336, vocabulary 128256,
 * untied) and on memory.c's inputs directly.
 */
#include "ec_test.h"
#include "internal.h"
#include "catalog/consts.h"
#include "model/memory.h"

#include <string.h>

/* llama-3.1-8b's shapes (models/ preset) */
static const double D = 4096, KV = 1024, FFN = 14336, V = 128256, LAYERS = 32;

/* memory.c's gradients: P trained parameters, F frozen ones sharing their FSDP units, 2 ranks. */
static void test_unit_grads_closed_form(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_workload wl;
    eci_op op;
    memset(&wl, 0, sizeof wl);
    memset(&op, 0, sizeof op);
    const double P = 3.0e6, F = 7.0e9;
    wl.ops = &op;
    wl.n_ops = wl.cap_ops = 1;
    wl.params = P + F;
    wl.trainable_params = P;
    eci_mem_in in = {.wl = &wl, .precision = EC_PREC_BF16, .optimizer = EC_OPT_ADAMW, .num_gpus = 2,
                     .capacity_bytes = 80.0 * 1073741824.0, .allocator_scale = 1.0, .headroom_bytes = -1,
                     .weight_shards = 2, .grad_shards = 2, .opt_shards = 2, .grad_accum = 4};
    ec_memory m;
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.grads_bytes, P * 2.0 / 2.0, EC_TOL_CLOSED_FORM);
    in.unit_frozen_params = F; /* the frozen weights' gradients, sharded */
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.grads_bytes, (P + F) * 2.0 / 2.0, EC_TOL_CLOSED_FORM);
    in.unsharded_accum = 1; /* no_sync: whole between micro-steps */
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.grads_bytes, (P + F) * 2.0, EC_TOL_CLOSED_FORM);
    assert_int_equal(m.peak_phase, EC_PEAK_ACCUMULATE);
    in.grad_accum = 1; /* one micro-step: nothing is accumulated, the reduce-scatter shards them */
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.grads_bytes, (P + F) * 2.0 / 2.0, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* LitGPT's FSDP LoRA on 2 GPUs: every Block is a unit with its adapters inside, the root unit
 * (embedding, final norm, head) has none. */
static void test_fsdp_block_no_sync(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *w[] = {"model=llama-3.1-8b", "gpu=a100-sxm4-80gb", "num_gpus=2", "strategy=fsdp",
                       "precision=bf16", "batch_per_gpu=1", "seq_len=1024", "checkpointing=1", "lora_r=8",
                       "grad_accum=4", "lora_fsdp_wrap=separate", "fsdp_no_sync=0"};
    const size_t n = sizeof w / sizeof w[0];
    ec_result sep, block, nosync, both;
    ec_test_predict_words(ctx, w, n, &sep);
    w[n - 2] = "lora_fsdp_wrap=block";
    ec_test_predict_words(ctx, w, n, &block);
    w[n - 1] = "fsdp_no_sync=1";
    ec_test_predict_words(ctx, w, n, &both);
    w[n - 2] = "lora_fsdp_wrap=separate";
    ec_test_predict_words(ctx, w, n, &nosync);
    double lora = LAYERS * 8.0 * ((D + D) + (D + KV));                     /* q and v adapters */
    double layer = 2.0 * D * D + 2.0 * D * KV + 3.0 * D * FFN + 2.0 * D; /* attention, MLP, norms */
    double in_blocks = LAYERS * layer + lora;
    assert_rel(sep.memory.grads_bytes, lora * 2.0 / 2.0, EC_TOL_CLOSED_FORM);
    assert_rel(block.memory.grads_bytes, in_blocks * 2.0 / 2.0, EC_TOL_CLOSED_FORM);
    assert_rel(nosync.memory.grads_bytes, lora * 2.0, EC_TOL_CLOSED_FORM);
    assert_rel(both.memory.grads_bytes, in_blocks * 2.0, EC_TOL_CLOSED_FORM);
    assert_int_equal(both.memory.peak_phase, EC_PEAK_ACCUMULATE);
    /* the same plus the unsharded gradients in what must be allocated */
    assert_true(both.memory.allocated_bytes - sep.memory.allocated_bytes > 0.99 * (in_blocks - lora) * 2.0);
    ec_ctx_free(ctx);
}

/* bitsandbytes keeps the input of every quantized linear; a 16-bit frozen base keeps only the
 * adapters' (q and v here): the attention output's, the MLP's input (gate and up share it) and
 * down's, in every layer. */
static void test_bnb_keeps_inputs(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *w[] = {"model=llama-3.1-8b", "gpu=a100-sxm4-80gb", "precision=bf16", "batch_per_gpu=1",
                       "seq_len=1024", "lora_r=8", "base_precision=bf16"};
    ec_result b16, nf4, nodq;
    ec_test_predict_words(ctx, w, 7, &b16);
    w[6] = "base_precision=nf4";
    ec_test_predict_words(ctx, w, 7, &nf4);
    w[6] = "base_precision=nf4_nodq";
    ec_test_predict_words(ctx, w, 7, &nodq);
    assert_rel(nf4.memory.activations_bytes - b16.memory.activations_bytes, LAYERS * 1024.0 * (D + D + FFN) * 2.0,
               EC_TOL_CLOSED_FORM);
    /* without double quantization: 4 bits and an fp32 absmax per 64 weights on every block linear */
    double quant = LAYERS * (2.0 * D * D + 2.0 * D * KV + 3.0 * D * FFN);
    assert_rel(eci_const(ctx, EC_C_nf4_nodq_bytes_per_param), 0.5625, EC_TOL_EXACT);
    assert_rel(nodq.memory.weights_bytes - nf4.memory.weights_bytes,
               quant * (eci_const(ctx, EC_C_nf4_nodq_bytes_per_param) - eci_const(ctx, EC_C_nf4_bytes_per_param)),
               EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* Lightning quantizes the head too: its weight at nf4_nodq bytes, its input kept, and at the start
 * of backward its weight dequantized to fp16 and copied to bf16 (4 bytes per weight). */
static void test_quant_head(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *w[] = {"model=llama-3.1-8b", "gpu=a100-sxm4-80gb", "precision=bf16", "batch_per_gpu=1",
                       "seq_len=1024", "lora_r=8", "base_precision=nf4_nodq", "quant_head=0"};
    ec_result off, on;
    ec_test_predict_words(ctx, w, 8, &off);
    w[7] = "quant_head=1";
    ec_test_predict_words(ctx, w, 8, &on);
    double q = eci_const(ctx, EC_C_nf4_nodq_bytes_per_param);
    assert_rel(off.memory.weights_bytes - on.memory.weights_bytes, V * D * (2.0 - q), EC_TOL_CLOSED_FORM);
    assert_rel(on.memory.activations_bytes - off.memory.activations_bytes, 1024.0 * D * 2.0, EC_TOL_CLOSED_FORM);
    assert_int_equal(on.memory.peak_phase, EC_PEAK_BACKWARD_START);
    assert_rel(on.memory.workspace_bytes, eci_const(ctx, EC_C_cublas_workspace_bytes) + 4.0 * V * D,
               EC_TOL_CLOSED_FORM);
    assert_true(off.memory.workspace_bytes < on.memory.workspace_bytes - 2.0 * V * D);
    ec_ctx_free(ctx);
}

/* lora_dropout: q and v (lora_targets=qv) each keep a dropped copy of their input (2 bytes) and
 * its bool mask (1 byte) in every layer; the nf4 base keeps x itself whatever. */
static void test_lora_dropout(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *w[] = {"model=llama-3.1-8b", "gpu=a100-sxm4-80gb", "precision=bf16", "batch_per_gpu=1",
                       "seq_len=1024", "lora_r=8", "base_precision=nf4", "lora_dropout=0"};
    ec_result off, on;
    ec_test_predict_words(ctx, w, 8, &off);
    w[7] = "lora_dropout=0.1";
    ec_test_predict_words(ctx, w, 8, &on);
    assert_rel(on.memory.activations_bytes - off.memory.activations_bytes, LAYERS * 1024.0 * 2.0 * D * (2.0 + 1.0),
               EC_TOL_CLOSED_FORM);
    w[5] = "lora_targets=qv"; /* no adapters: the key is named as ignored */
    w[6] = "precision=bf16";
    ec_test_predict_words(ctx, w, 8, &on);
    assert_non_null(strstr(on.warning_text, "lora_dropout (needs lora_r)"));
    ec_ctx_free(ctx);
}

/* ZeRO under autocast: every weight, the frozen base's and the adapters' alike, at 2 bytes; DDP's
 * fp32 model at 4 bytes, so ZeRO's weights are exactly half DDP's (before the fix the frozen base,
 * nearly all of them, stayed at 4 bytes).  Stage 1 shards no weights. */
static void test_zero_frozen_base_16(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *w[] = {"model=llama-3.1-8b", "gpu=h100-sxm5-80gb", "precision=amp_bf16", "num_gpus=8",
                       "batch_per_gpu=1", "seq_len=1024", "lora_r=16", "zero_stage=1", "strategy=zero"};
    ec_result zero, ddp;
    ec_test_predict_words(ctx, w, 9, &zero);
    w[7] = "strategy=ddp";
    ec_test_predict_words(ctx, w, 8, &ddp);
    assert_rel(2.0 * zero.memory.weights_bytes, ddp.memory.weights_bytes, EC_TOL_CLOSED_FORM);
    double base = LAYERS * (2.0 * D * D + 2.0 * D * KV + 3.0 * D * FFN + 2.0 * D) + 2.0 * V * D + D;
    assert_true(ddp.memory.weights_bytes > 4.0 * base); /* every weight counted, the adapters' on top */
    ec_ctx_free(ctx);
}

/* The three keys given where they change nothing are named in a warning. */
static void test_ignored_keys(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *w[] = {"model=llama-3.2-1b", "gpu=a100-sxm4-80gb", "batch_per_gpu=1", "fsdp_no_sync=1",
                       "lora_fsdp_wrap=block", "quant_head=1"};
    ec_result res;
    ec_test_predict_words(ctx, w, 6, &res);
    assert_true(res.warnings & EC_WARN_KEY_IGNORED);
    assert_non_null(strstr(res.warning_text, "fsdp_no_sync (fsdp only)"));
    assert_non_null(strstr(res.warning_text, "lora_fsdp_wrap"));
    assert_non_null(strstr(res.warning_text, "quant_head (needs a quantized base)"));
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unit_grads_closed_form), cmocka_unit_test(test_fsdp_block_no_sync),
        cmocka_unit_test(test_bnb_keeps_inputs),       cmocka_unit_test(test_quant_head),
        cmocka_unit_test(test_ignored_keys),           cmocka_unit_test(test_lora_dropout),
        cmocka_unit_test(test_zero_frozen_base_16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
