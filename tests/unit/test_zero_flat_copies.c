/*
 * test_zero_flat_copies.c: apex DistributedFusedLAMB's copies through its flat buffers
 * (zero_flat_copies; sim/step.c, sim/walk.c).  NVIDIA's MLPerf BERT passes
 * set_param_views_to_flat_buffer = not --dwu-overlap-reductions (run_pretraining.py v3.0 L902-905),
 * so with overlapped reductions the model's parameters are not views into the optimizer's buffer:
 * apex (distributed_fused_lamb.py @91fcaaf7) copies every gradient into the flat buffer as backward
 * flushes its block (_flatten_grad_mt, L730, L901-932, on the compute stream) and, after the
 * all-gather, the gathered buffer back into the model's parameters (maybe_cast_mt, L1001-1016, the
 * next step waiting for it).  Each copy reads and writes the 16-bit tensors once: backward and the
 * optimizer's step each grow by one such copy of the parameters, and the step by at least the
 * copy back (fails on the code before the key, which had no such copies).
 */
#include "ec_test.h"

#include <math.h>

/* MLPerf BERT-large phase 2 on 64 DGX H100 (bench/data/llm_runs.csv, mlperf-bert-v30-...-512x) */
#define BERT512 \
    "model=bert-large task=lm gpu=h100-sxm5-80gb precision=fp16 optimizer=lamb attention=flash " \
    "kernels=fused batch_per_gpu=3 seq_len=512 num_gpus=512 gpus_per_node=8 network=ib-ndr-400 strategy=zero " \
    "zero_stage=1 zero_reduce=all_reduce zero_shard_size=8 cuda_graphs=1 grad_buckets=5 "

static void test_copies_priced(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result off, on;
    ec_test_predict(ctx, BERT512, &off);
    ec_test_predict(ctx, BERT512 "zero_flat_copies=1", &on);
    double grad_copy = on.breakdown.backward_s - off.breakdown.backward_s;
    double param_copy = on.breakdown.optimizer_s - off.breakdown.optimizer_s;
    print_message("step %.3f -> %.3f ms: gradient copy %.3f ms, parameter copy %.3f ms\n", off.step_s * 1e3,
                  on.step_s * 1e3, grad_copy * 1e3, param_copy * 1e3);
    /* 336M fp16 parameters read and written: 1.34 GB, a few hundred microseconds on an H100 */
    assert_true(param_copy > 2e-4 && param_copy < 2e-3);
    /* the gradients are fp16 like the parameters: the same bytes each way */
    assert_true(fabs(grad_copy - param_copy) < 0.01 * param_copy);
    /* the copy back is exposed; the gradient copy may hide under a reduction-bound tail */
    assert_true(on.step_s - off.step_s >= param_copy);
    ec_ctx_free(ctx);
}

/* Nothing to copy outside ZeRO-1/2: the key is ignored (and named in the warnings). */
static void test_ignored_outside_zero(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result off, on;
    ec_test_predict(ctx, "model=bert-large gpu=h100-sxm5-80gb precision=fp16 batch_per_gpu=3 seq_len=512 "
                         "num_gpus=8 strategy=ddp", &off);
    ec_test_predict(ctx, "model=bert-large gpu=h100-sxm5-80gb precision=fp16 batch_per_gpu=3 seq_len=512 "
                         "num_gpus=8 strategy=ddp zero_flat_copies=1", &on);
    assert_true(on.step_s == off.step_s);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_priced),
        cmocka_unit_test(test_ignored_outside_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
