/*
 * test_remat.c: what torch.compile keeps for backward (eci_shape.remat, issue 40).  AOTAutograd's
 * min-cut partitioner (torch/_functorch/partitioners.py) rebuilds pointwise intermediates inside
 * the backward kernels, so a compiled step keeps: an RMSNorm's input as it comes and one rstd per
 * row (eager: the fp32 input and product and the statistics), RoPE nothing (its backward needs
 * only cos and sin), the gated product up's output only (act(gate) is rebuilt from gate's output,
 * which the activation keeps), a Python-op activation (GPT-2's gelu_new) its input only.  Each
 * check fails when its term is removed; and a compiled Llama step needs less memory.
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double ROWS = 2.0 * 128; /* batch 2 x seq 128 */

static eci_shape shape(int remat)
{
    eci_shape sh = ec_test_lm_shape(EC_PREC_AMP_BF16, 2, 128);
    sh.weights_16 = 1;
    sh.remat = remat;
    return sh;
}

static const eci_op *first_op(ec_ctx *ctx, const char *model, int remat, const char *name)
{
    const eci_net *net = eci_net_find(ctx, model);
    if (net == NULL)
        fail_msg("%s: %s", model, ec_ctx_errmsg(ctx));
    eci_shape sh = shape(remat);
    const eci_workload *wl;
    if (eci_workload_get(ctx, net, eci_task_parse("lm"), &sh, &wl) != EC_OK)
        fail_msg("%s: %s", model, ec_ctx_errmsg(ctx));
    for (size_t i = 0; i < wl->n_ops; i++)
        if (strcmp(wl->ops[i].name, name) == 0)
            return &wl->ops[i];
    fail_msg("%s: no op '%s'", model, name);
    return NULL;
}

/* Llama 3.1 8B: width 4096, 8 K/V heads of 128, ffn 14336; a 16-bit stream (weights_16).
 * RMSNorm: eager the fp32 input and product + two fp32 numbers per row; compiled the bf16 input
 * + rstd. */
static void test_rmsnorm(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double h = 4096;
    assert_rel(first_op(ctx, "llama-3.1-8b", 0, "norm")->saved_bytes, ROWS * (2.0 * h * 4 + 8), EC_TOL_EXACT);
    assert_rel(first_op(ctx, "llama-3.1-8b", 1, "norm")->saved_bytes, ROWS * (h * 2 + 4), EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* RoPE on Q (4096) and K (8 x 128): eager Q, K and their rotations; compiled nothing. */
static void test_rope(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double qk = 4096 + 8 * 128;
    assert_rel(first_op(ctx, "llama-3.1-8b", 0, "rope")->saved_bytes, 2.0 * ROWS * qk * 2, EC_TOL_EXACT);
    assert_true(first_op(ctx, "llama-3.1-8b", 1, "rope")->saved_bytes == 0);
    ec_ctx_free(ctx);
}

/* The gated product: eager act(gate) and up's output, compiled up's output; SiLU is one op and
 * keeps its input either way. */
static void test_gate_mul(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double ffn = 14336;
    assert_rel(first_op(ctx, "llama-3.1-8b", 0, "gate_mul")->saved_bytes, 2.0 * ROWS * ffn * 2, EC_TOL_EXACT);
    assert_rel(first_op(ctx, "llama-3.1-8b", 1, "gate_mul")->saved_bytes, ROWS * ffn * 2, EC_TOL_EXACT);
    assert_rel(first_op(ctx, "llama-3.1-8b", 1, "silu")->saved_bytes, ROWS * ffn * 2, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* GPT-2's gelu_new in Python ops keeps about four tensors eager, its input compiled; the ffn
 * output is 16-bit under FSDP's 16-bit weights. */
static void test_gelu_new(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double n = ROWS * 4 * 768;
    assert_rel(first_op(ctx, "gpt2", 0, "gelu_new")->saved_bytes, 4.0 * n * 2, EC_TOL_EXACT);
    assert_rel(first_op(ctx, "gpt2", 1, "gelu_new")->saved_bytes, n * 2, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* The step: compile=1 keeps fewer activations than compile=0, and the allocated peak drops. */
static void test_compiled_step(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result eager, compiled;
    const char *common = "model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=8 strategy=fsdp precision=amp_bf16 "
                         "batch_per_gpu=1 seq_len=4096 torch_version=2.6";
    char words[512];
    snprintf(words, sizeof words, "%s compile=0", common);
    ec_test_predict(ctx, words, &eager);
    snprintf(words, sizeof words, "%s compile=1", common);
    ec_test_predict(ctx, words, &compiled);
    assert_true(compiled.memory.activations_bytes < 0.8 * eager.memory.activations_bytes);
    assert_true(compiled.memory.allocated_bytes < eager.memory.allocated_bytes);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_rope),
        cmocka_unit_test(test_gate_mul),
        cmocka_unit_test(test_gelu_new),
        cmocka_unit_test(test_compiled_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
