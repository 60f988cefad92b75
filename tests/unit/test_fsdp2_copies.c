/*
 * test_fsdp2_copies.c: PyTorch FSDP2's copies around its collectives (key fsdp_api=fully_shard;
 * model/shard.c, sim/step.c, sim/walk.c).  fully_shard keeps each parameter's shard as its own
 * tensor, so every all-gather is followed on the compute stream by foreach_all_gather_copy_out's
 * split_with_sizes_copy (the gathered buffer read, each parameter's unsharded tensor written),
 * and every reduce-scatter is preceded on its stream by the copy of the unsharded gradients into
 * one buffer of the reduce dtype (torch/distributed/_composable/fsdp/_fsdp_collectives.py, April
 * 2024; fsdp/_fully_shard/_fsdp_collectives.py since).  FSDP1's FlatParameter is the all-gather
 * buffer itself: no copy.  The copies are memory-bound: their time lies between the bytes moved
 * at the GPU's DRAM peak and at half of it.  Fails on the code before fsdp_api (the key did not
 * exist; the copies were not priced).
 */
#include "ec_test.h"

#include <math.h>
#include <string.h>

/* torchtitan's A100 row: Llama 3 8B, 64 A100 80GB, FSDP2, selective op AC, seq 8192 */
#define TITAN \
    "model=llama-3.1-8b gpu=a100-sxm4-80gb num_gpus=64 gpus_per_node=8 network=ib-hdr-200 strategy=fsdp " \
    "precision=amp_bf16 attention=sdpa checkpointing=selective_op batch_per_gpu=1 seq_len=8192 "

/* Llama 3 8B: 32 layers of 4096 x (4096 + 1024 + 1024 + 4096) + 3 x 4096 x 14336 + 2 x 4096
 * parameters, and the root unit (embedding, head, final norm) */
#define BLOCK_PARAMS (32.0 * (4096.0 * 10240 + 3.0 * 4096 * 14336 + 2.0 * 4096))
#define ROOT_PARAMS (2.0 * 128256 * 4096 + 4096)
/* A100 SXM4 80GB: 2,039 GB/s HBM2e (NVIDIA A100 datasheet) */
#define A100_BYTES_PER_S 2039e9

static void within_copy_bounds(double dt_s, double bytes)
{
    double fastest = bytes / A100_BYTES_PER_S;
    print_message("  %.3f ms for %.2f GB (DRAM peak: %.3f ms)\n", dt_s * 1e3, bytes / 1e9, fastest * 1e3);
    assert_true(dt_s >= fastest);
    assert_true(dt_s <= 2.0 * fastest);
}

/* The copy-out of each gathered unit runs on the compute stream: forward gathers every unit
 * (the root's too), backward gathers the layers again (reshard_after_forward); 2 bytes per bf16
 * parameter read and 2 written. */
static void test_copy_out_on_the_compute_stream(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result v1, v2;
    ec_test_predict(ctx, TITAN "reduce_dtype=fp32", &v1);
    ec_test_predict(ctx, TITAN "reduce_dtype=fp32 fsdp_api=fully_shard", &v2);
    print_message("forward copy-out:\n");
    within_copy_bounds(v2.breakdown.forward_s - v1.breakdown.forward_s, 2.0 * 2.0 * (BLOCK_PARAMS + ROOT_PARAMS));
    print_message("backward copy-out:\n");
    within_copy_bounds(v2.breakdown.backward_s - v1.breakdown.backward_s, 2.0 * 2.0 * BLOCK_PARAMS);
    assert_true(v2.step_s > v1.step_s);
    ec_ctx_free(ctx);
}

/* The gradients' copy-in runs on the reduce-scatter stream before each collective: bf16
 * gradients read (2 bytes) and written in the reduce dtype (fp32: 4, bf16: 2). */
static void test_copy_in_before_each_reduce_scatter(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result f1, f2, b1, b2;
    ec_test_predict(ctx, TITAN "reduce_dtype=fp32", &f1);
    ec_test_predict(ctx, TITAN "reduce_dtype=fp32 fsdp_api=fully_shard", &f2);
    ec_test_predict(ctx, TITAN "reduce_dtype=bf16", &b1);
    ec_test_predict(ctx, TITAN "reduce_dtype=bf16 fsdp_api=fully_shard", &b2);
    double fp32_s = f2.comm_total_s - f1.comm_total_s, bf16_s = b2.comm_total_s - b1.comm_total_s;
    print_message("reduce-scatter copy-in, fp32:\n");
    within_copy_bounds(fp32_s, (2.0 + 4.0) * (BLOCK_PARAMS + ROOT_PARAMS));
    print_message("reduce-scatter copy-in, bf16:\n");
    within_copy_bounds(bf16_s, (2.0 + 2.0) * (BLOCK_PARAMS + ROOT_PARAMS));
    assert_true(fabs(fp32_s / bf16_s - 1.5) < 1e-6);
    ec_ctx_free(ctx);
}

/* FSDP1 (the default) and ZeRO-3 are what they were; the key outside FSDP is named as ignored. */
static void test_flat_param_unchanged_and_key_ignored_elsewhere(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result a, b, z1, z2;
    ec_test_predict(ctx, TITAN "reduce_dtype=fp32", &a);
    ec_test_predict(ctx, TITAN "reduce_dtype=fp32 fsdp_api=flat_param", &b);
    assert_true(a.step_s == b.step_s);
    ec_test_predict(ctx, TITAN "strategy=zero zero_stage=3", &z1);
    ec_test_predict(ctx, TITAN "strategy=zero zero_stage=3 fsdp_api=fully_shard", &z2);
    assert_true(z1.step_s == z2.step_s);
    assert_non_null(strstr(z2.warning_text, "fsdp_api (fsdp only)"));
    assert_null(strstr(z1.warning_text, "fsdp_api"));
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_out_on_the_compute_stream),
        cmocka_unit_test(test_copy_in_before_each_reduce_scatter),
        cmocka_unit_test(test_flat_param_unchanged_and_key_ignored_elsewhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
