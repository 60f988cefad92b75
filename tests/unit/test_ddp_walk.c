/*
 * test_ddp_walk.c: DDP's backward over repeated layers (predict.c, ddp_layers) walks a layer
 * or two and adds the rest by multiplication, jumping a draining backlog in one step.  Each
 * case here is predicted twice, with the jumps and with every layer walked
 * (ctx->ddp_every_layer, the reference), and the two must agree to rounding.
 *
 * The closed form checked: a layer that leaves the bucket as it found it moves everything by
 * the same amounts d as the next ones as long as neither the host nor the stream holds the
 * GPU up in a way that depends on their leads.  With S_h the layer's least slack of the GPU
 * over the host before a kernel, S_c the least slack of the stream past a fully slowed kernel
 * and a bucket's ready time, and dh, dc the changes of the host's and the stream's leads over
 * the layer, the j-th layer after it still moves by d while
 *     S_h - j dh >= 0   and   S_c + j dc >= 0,
 * so J = min(floor(S_h / dh) if dh > 0, floor(S_c / -dc) if dc < 0) more layers are added as
 * J x d (all of them when the backlog grows or stays), and the layer after them is walked.
 * Where the buckets span layers (BERT-large: a bucket every layer and a half), the unit is a
 * run of up to DDP_UNIT_MAX layers that leaves the bucket as it found it, with the same test.
 * The cases below (64 H100s, Llama-3.1-8B; the layouts of bench_speed's 64-GPU section; BERT-
 * large on 8 GPUs) were picked by printing the stream's lead layer by layer: it drains over
 * several layers, grows, stays at a small lead each layer, or is idle at the layer boundaries.
 */
#include "ec_test.h"
#include "internal.h"

#include <stdio.h>

#define LLAMA64 \
    "model=llama-3.1-8b gpu=h100-sxm5-80gb seq_len=4096 precision=amp_bf16 data=synthetic num_gpus=64 " \
    "network=ib-ndr-400 grad_accum=16 attention=flash "

/* With jumps and with every layer walked: the same prediction to rounding (EC_TOL_CLOSED_FORM;
 * the jumps add d J times instead of J times one after another, ~1e-15 apart). */
static void check_against_walk(const char *words)
{
    ec_ctx *ctx = ec_test_ctx();
    ec_result walked, jumped;
    ctx->ddp_every_layer = 1;
    ec_test_predict(ctx, words, &walked);
    ctx->ddp_every_layer = 0;
    ec_test_predict(ctx, words, &jumped);
    print_message("%s: step %.17g walked, %.17g jumped\n", words, walked.step_s, jumped.step_s);
    assert_rel(jumped.step_s, walked.step_s, EC_TOL_CLOSED_FORM);
    assert_rel(jumped.breakdown.backward_s, walked.breakdown.backward_s, EC_TOL_CLOSED_FORM);
    assert_rel(jumped.breakdown.comm_s, walked.breakdown.comm_s, EC_TOL_CLOSED_FORM);
    assert_rel(jumped.comm.dp_reduce_s, walked.comm.dp_reduce_s, EC_TOL_CLOSED_FORM);
    assert_rel(jumped.comm.overlap_s, walked.comm.overlap_s, EC_TOL_CLOSED_FORM);
    assert_rel(jumped.comm_total_s, walked.comm_total_s, EC_TOL_CLOSED_FORM);
    assert_rel(jumped.gpu_busy_s, walked.gpu_busy_s, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* The stream's backlog falls each layer until it idles within one: jumped to that layer
 * (11, 7, 3 and 5 layers at once), which is walked, then the layers that repeat it. */
static void test_backlog_drains(void **state)
{
    (void)state;
    check_against_walk(LLAMA64 "tp=2 pp=1 sequence_parallel=1 batch_per_gpu=2");
    check_against_walk(LLAMA64 "tp=1 pp=4 batch_per_gpu=1");
    check_against_walk(LLAMA64 "tp=8 pp=1 sequence_parallel=1 batch_per_gpu=4");
    check_against_walk(LLAMA64 "tp=2 pp=2 sequence_parallel=1 batch_per_gpu=2");
    check_against_walk(LLAMA64 "tp=8 pp=4 sequence_parallel=1 batch_per_gpu=2");
}

/* The backlog grows each layer: every kernel runs beside an all-reduce to the end. */
static void test_backlog_grows(void **state)
{
    (void)state;
    check_against_walk(LLAMA64 "tp=1 pp=1 batch_per_gpu=1");
    check_against_walk(LLAMA64 "tp=2 pp=1 sequence_parallel=1 batch_per_gpu=1");
    check_against_walk(LLAMA64 "tp=8 pp=2 sequence_parallel=1 batch_per_gpu=1");
    /* two layers per unit: the backlog grows by two different amounts in turn */
    check_against_walk("model=bert-large task=squad seq_len=384 precision=amp_fp16 gpu=t4 batch_per_gpu=1 num_gpus=8 "
                       "strategy=ddp");
}

/* The stream ends each layer the same small time behind the GPU, or idle. */
static void test_backlog_stays(void **state)
{
    (void)state;
    check_against_walk(LLAMA64 "tp=1 pp=1 batch_per_gpu=2");
    check_against_walk(LLAMA64 "tp=1 pp=2 batch_per_gpu=4");
    check_against_walk(LLAMA64 "tp=2 pp=8 sequence_parallel=1 batch_per_gpu=1");
    /* idle at every boundary, each layer's last bucket a different time behind: a jump must
     * move the stream's clock with the GPU's, not by the first layer's (that made 4% here) */
    check_against_walk("model=gpt2 gpu=h100-sxm5-80gb batch_per_gpu=1 num_gpus=8 strategy=ddp precision=amp_bf16");
    /* two layers per unit, the stream idle at the unit's ends */
    check_against_walk("model=bert-large task=squad seq_len=384 precision=amp_fp16 gpu=a100-sxm4-80gb batch_per_gpu=8 "
                       "num_gpus=8 strategy=ddp");
    /* a recompute's forward kernels are not in the host's slack: the jump relies on the rest */
    check_against_walk(LLAMA64 "tp=2 pp=2 sequence_parallel=1 batch_per_gpu=2 checkpointing=1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backlog_drains),
        cmocka_unit_test(test_backlog_grows),
        cmocka_unit_test(test_backlog_stays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
