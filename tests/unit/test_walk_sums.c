/*
 * test_walk_sums.c: the step model walks a run of ops (a block's forward, its backward, the
 * ops between blocks) op by op the first time and keeps its sums beside the cached op costs
 * (predict.c, walk_sum_add / walk_sum_apply); later walks of the run at the same dispatch
 * costs take one step.  Each case here is predicted twice, with the sums and with every run
 * walked op by op (ctx->walk_op_by_op, the reference), and the two must agree to rounding.
 *
 * The closed form checked (max-plus algebra): op i of a run issues after the host's h_i and
 * runs g_i on the GPU, kernels wait for their issue, so with H_i = h_1 + ... + h_i and
 * G_i = g_1 + ... + g_i the run that starts with the host at cpu and the GPU free at gpu ends
 *     gpu' = max(gpu, cpu + max_i (H_i - G_{i-1})) + G_n,   cpu' = cpu + H_n,
 * the GPU idle (charged to dispatch) for max(0, cpu + max_i (H_i - G_{i-1}) - gpu).
 * The cases cover host-bound and GPU-bound runs (small and large batches, slow and fast GPUs),
 * CUDA graphs (no forward host cost), checkpointing (a recomputed forward at other dispatch
 * costs), grad_accum (a second micro-step reusing the sums), DataParallel (the host factor),
 * DDP and a 64-GPU layout (backward walks with hooks keep walking op by op).
 */
#include "ec_test.h"
#include "internal.h"

#include <stdio.h>

/* With the run sums and op by op: the same prediction to rounding (EC_TOL_CLOSED_FORM; the
 * sums add the run's times in another order, ~1e-15 apart).  The first prediction of each
 * context fills the sums; the second of the summed context uses them. */
static void check_against_op_by_op(const char *words)
{
    ec_ctx *ref = ec_test_ctx(), *ctx = ec_test_ctx();
    ec_result walked, summed;
    ref->walk_op_by_op = 1;
    ec_test_predict(ref, words, &walked);
    ec_test_predict(ctx, words, &summed); /* sums filled */
    ec_test_predict(ctx, words, &summed); /* sums used */
    print_message("%s: step %.17g op by op, %.17g summed\n", words, walked.step_s, summed.step_s);
    assert_rel(summed.step_s, walked.step_s, EC_TOL_CLOSED_FORM);
    assert_rel(summed.gpu_busy_s, walked.gpu_busy_s, EC_TOL_CLOSED_FORM);
    assert_rel(summed.cpu_issue_s, walked.cpu_issue_s, EC_TOL_CLOSED_FORM);
    assert_rel(summed.kernels_per_step, walked.kernels_per_step, EC_TOL_CLOSED_FORM);
    assert_rel(summed.breakdown.forward_s, walked.breakdown.forward_s, EC_TOL_CLOSED_FORM);
    assert_rel(summed.breakdown.backward_s, walked.breakdown.backward_s, EC_TOL_CLOSED_FORM);
    assert_rel(summed.breakdown.cpu_overhead_s + 1.0, walked.breakdown.cpu_overhead_s + 1.0, EC_TOL_CLOSED_FORM);
    assert_rel(summed.epoch_s + 1.0, walked.epoch_s + 1.0, EC_TOL_CLOSED_FORM);
    assert_int_equal(summed.bottleneck, walked.bottleneck);
    ec_ctx_free(ref);
    ec_ctx_free(ctx);
}

/* One GPU: host-bound (small batch, fast GPU) and GPU-bound (large batch, slow GPU) runs. */
static void test_single_gpu(void **state)
{
    (void)state;
    check_against_op_by_op("model=bert-large task=squad seq_len=384 precision=amp_fp16 gpu=h100-sxm5-80gb batch_per_gpu=1");
    check_against_op_by_op("model=bert-large task=squad seq_len=384 precision=amp_fp16 gpu=t4 batch_per_gpu=32");
    check_against_op_by_op("model=resnet50 precision=amp_fp16 gpu=a100-sxm4-80gb batch_per_gpu=2 data=synthetic");
    check_against_op_by_op("model=resnet152 precision=amp_fp16 gpu=l4 batch_per_gpu=64 num_workers=8 pin_memory=1");
    check_against_op_by_op("model=llama-3.1-8b seq_len=4096 precision=amp_bf16 gpu=h100-sxm5-80gb batch_per_gpu=1 "
                           "data=synthetic");
    check_against_op_by_op("model=mixtral-8x7b seq_len=1024 precision=amp_bf16 gpu=h100-sxm5-80gb batch_per_gpu=1 "
                           "data=synthetic");
    check_against_op_by_op("model=gpt2 gpu=rtx4090 batch_per_gpu=4 precision=fp32 grad_accum=4");
}

/* Other dispatch costs on the way: CUDA graphs, checkpointing's recompute, a per-sample loop. */
static void test_dispatch_changes(void **state)
{
    (void)state;
    check_against_op_by_op("model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=8 precision=amp_bf16 compile=1");
    check_against_op_by_op("model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=8 precision=amp_bf16 "
                           "compile=reduce-overhead");
    check_against_op_by_op("model=llama-3.2-1b seq_len=2048 precision=amp_bf16 gpu=a10g batch_per_gpu=2 "
                           "checkpointing=1 data=synthetic");
    check_against_op_by_op("model=llama-3.2-1b seq_len=2048 precision=amp_bf16 gpu=a10g batch_per_gpu=2 "
                           "checkpointing=selective attention=eager data=synthetic");
    check_against_op_by_op("model=bert-base gpu=t4 batch_per_gpu=8 loop_ops_per_sample=6 loop_syncs_per_sample=2");
}

/* Several GPUs: DataParallel's one process, DDP's hooks, a 64-GPU layout. */
static void test_multi_gpu(void **state)
{
    (void)state;
    check_against_op_by_op("model=bert-base gpu=a16 batch_per_gpu=16 num_gpus=8 strategy=dp");
    check_against_op_by_op("model=bert-large task=squad seq_len=384 precision=amp_fp16 gpu=a100-sxm4-80gb "
                           "batch_per_gpu=8 num_gpus=8 strategy=ddp grad_accum=4");
    check_against_op_by_op("model=llama-3.1-8b gpu=h100-sxm5-80gb seq_len=4096 precision=amp_bf16 data=synthetic "
                           "num_gpus=64 network=ib-ndr-400 grad_accum=16 attention=flash tp=2 pp=4 batch_per_gpu=1");
    check_against_op_by_op("model=llama-3.1-8b gpu=h100-sxm5-80gb seq_len=4096 precision=amp_bf16 data=synthetic "
                           "num_gpus=8 strategy=fsdp batch_per_gpu=1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_gpu),
        cmocka_unit_test(test_dispatch_changes),
        cmocka_unit_test(test_multi_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
