/*
 * test_act_offload.c: Megatron-Core's CPU offloading of activations (act_offload_layers): the
 * first N repeated layers' saved tensors wait in host memory, and the copies cost the GPU only
 * what the next layer's work does not hide (sim/setup.c eci_setup_offload_wait_s).  Each check
 * fails without its term.
 */
#include "ec_test.h"

#include <stdio.h>
#include <string.h>

/* Llama 3.1 8B (32 layers) at 4096 tokens under ZeRO-1 on 8 GPUs, the peak at the backward's start. */
static void predict(ec_ctx *ctx, const char *gpu, const char *extra, ec_result *res)
{
    char g[64], x[64];
    snprintf(g, sizeof g, "gpu=%s", gpu);
    snprintf(x, sizeof x, "%s", extra);
    const char *w[] = {"model=llama-3.1-8b", g, "precision=amp_bf16", "num_gpus=8", "strategy=zero", "zero_stage=1",
                       "batch_per_gpu=1", "seq_len=4096", "kernels=te", x};
    ec_test_predict_words(ctx, w, extra[0] ? 10 : 9, res);
}

/* Memory: each offloaded layer takes one layer's saved bytes off the GPU (one layer: the peak's
 * activations less by what the host holds) and into pinned host memory, alike for every layer
 * (host(8) = 8 x host(1)); at most 31 of the 32 layers move (Megatron-Core refuses
 * cpu_offloading_num_layers >= num_layers). */
static void test_offload_memory(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result r0, r1, r8, rall;
    predict(ctx, "h100-sxm5-80gb", "", &r0);
    predict(ctx, "h100-sxm5-80gb", "act_offload_layers=1", &r1);
    predict(ctx, "h100-sxm5-80gb", "act_offload_layers=8", &r8);
    predict(ctx, "h100-sxm5-80gb", "act_offload_layers=1000", &rall);
    double layer = r1.host_pinned_bytes - r0.host_pinned_bytes;
    assert_true(layer > 0);
    assert_rel(r0.memory.activations_bytes - r1.memory.activations_bytes, layer, EC_TOL_CLOSED_FORM);
    assert_rel(r8.host_pinned_bytes - r0.host_pinned_bytes, 8 * layer, EC_TOL_CLOSED_FORM);
    assert_rel(rall.host_pinned_bytes - r0.host_pinned_bytes, 31 * layer, EC_TOL_CLOSED_FORM);
    assert_true(r8.memory.peak_bytes < r0.memory.peak_bytes);
    assert_false(r8.warnings & EC_WARN_KEY_IGNORED);
    ec_ctx_free(ctx);
}

/* Time: over an H100's PCIe a layer's copy outlasts the next layer's forward, so the wait (shown as
 * transfer) grows with the layers moved (16 layers wait twice what 8 do: each pass N x (copy - work));
 * * over a GB200's NVLink-C2C (gpus.csv h2d_pinned_bytes_per_s 4.5e11) the work hides every copy. */
static void test_offload_time(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result r0, r8, r16;
    predict(ctx, "h100-sxm5-80gb", "", &r0);
    predict(ctx, "h100-sxm5-80gb", "act_offload_layers=8", &r8);
    predict(ctx, "h100-sxm5-80gb", "act_offload_layers=16", &r16);
    assert_true(r8.step_s > r0.step_s);
    assert_rel(r16.breakdown.h2d_s - r0.breakdown.h2d_s, 2 * (r8.breakdown.h2d_s - r0.breakdown.h2d_s), EC_TOL_CLOSED_FORM);
    predict(ctx, "gb200", "", &r0);
    predict(ctx, "gb200", "act_offload_layers=8", &r8);
    assert_rel(r8.step_s, r0.step_s, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* words[0..n-1] with act_offload_layers last: the key is named as ignored for `why`, and the
 * prediction (memory and step) is that of the same words without it. */
static void check_ignored(const char *const *words, size_t n, const char *why)
{
    ec_ctx *ctx = ec_test_ctx();
    ec_result with, without;
    ec_test_predict_words(ctx, words, n, &with);
    ec_test_predict_words(ctx, words, n - 1, &without);
    assert_true(with.warnings & EC_WARN_KEY_IGNORED);
    assert_non_null(strstr(with.warning_text, why));
    assert_rel(with.memory.peak_bytes, without.memory.peak_bytes, EC_TOL_EXACT);
    assert_rel(with.memory.activations_bytes, without.memory.activations_bytes, EC_TOL_EXACT);
    assert_rel(with.step_s, without.step_s, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* Megatron-Core refuses CPU offloading beside recomputation: the memory is checkpointing's alone. */
static void test_offload_ignored(void **state)
{
    (void)state;
    const char *w[] = {"model=llama-3.1-8b", "gpu=h100-sxm5-80gb", "precision=amp_bf16", "batch_per_gpu=1",
                       "seq_len=4096", "kernels=te", "checkpointing=1", "act_offload_layers=8"};
    check_ignored(w, 8, "act_offload_layers (without checkpointing and pipeline parallelism");
}

/* A network without repeated layers (ResNet-50's stages are not a checkpointable repeat) has no
 * layer to move: nothing waits in host memory. */
static void test_offload_no_layers(void **state)
{
    (void)state;
    const char *w[] = {"model=resnet50", "gpu=h100-sxm5-80gb", "precision=amp_bf16", "batch_per_gpu=64",
                       "act_offload_layers=4"};
    check_ignored(w, 5, "act_offload_layers (a network of repeated layers only)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offload_memory),
        cmocka_unit_test(test_offload_time),
        cmocka_unit_test(test_offload_ignored),
        cmocka_unit_test(test_offload_no_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
