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
 * DDP and a 64-GPU layout (backward walks with hooks keep walking op by op).  A pass that only
 * issues kernels is one run, built from its blocks' sums (compute.h: eci_walk_sum_then for
 * one run after another, eci_walk_sum_repeat for a block's repetitions); test_sum_algebra
 * checks those against the definition above on random runs.
 */
#include "model/compute.h"
#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>

/* ---- the algebra ----------------------------------------------------------------------- */
#define MAX_OPS 64

typedef struct run {
    size_t n;
    double host_s[MAX_OPS], gpu_s[MAX_OPS];
} run;

/* The definition: H_n, G_n, and max_i (H_i - G_{i-1}) over the ops in order. */
static eci_walk_sum by_definition(const run *const *parts, size_t n_parts)
{
    double h = 0, g = 0, lead = -INFINITY, kernels = 0;
    for (size_t k = 0; k < n_parts; k++)
        for (size_t i = 0; i < parts[k]->n; i++) {
            h += parts[k]->host_s[i];
            lead = h - g > lead ? h - g : lead;
            g += parts[k]->gpu_s[i];
            kernels += 1;
        }
    return (eci_walk_sum){.host_s = h, .gpu_s = g, .kernels = kernels, .lead_s = lead};
}

static eci_walk_sum summed(const run *r)
{
    eci_walk_sum s = eci_walk_sum_none();
    for (size_t i = 0; i < r->n; i++)
        eci_walk_sum_add(&s, r->host_s[i], r->gpu_s[i], 1);
    return s;
}

/* A run of 1..MAX_OPS ops whose host and GPU times are uniform in [0, host_max) and [0, gpu_max). */
static void random_run(gsl_rng *rng, run *r, double host_max, double gpu_max)
{
    r->n = 1 + gsl_rng_uniform_int(rng, MAX_OPS);
    for (size_t i = 0; i < r->n; i++) {
        r->host_s[i] = host_max * gsl_rng_uniform(rng);
        r->gpu_s[i] = gpu_max * gsl_rng_uniform(rng);
    }
}

static void assert_sums(const eci_walk_sum *got, const eci_walk_sum *want)
{
    /* sums of the same terms in another order: |got - want| <= EC_TOL_CLOSED_FORM x |want| */
    assert_rel(got->host_s, want->host_s, EC_TOL_CLOSED_FORM);
    assert_rel(got->gpu_s, want->gpu_s, EC_TOL_CLOSED_FORM);
    assert_rel(got->kernels, want->kernels, EC_TOL_CLOSED_FORM);
    assert_rel(got->lead_s, want->lead_s, EC_TOL_CLOSED_FORM);
}

/* Runs where the host gains on the GPU, loses, or about breaks even: a then b, and a repeated
 * 1..40 times, equal their definition over the ops in order. */
static void test_sum_algebra(void **state)
{
    (void)state;
    static const double host_gpu[][2] = {{2, 1}, {1, 2}, {1, 1}, {0.1, 3}, {3, 0.1}};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20261124);
    static run a, b;
    for (int trial = 0; trial < 500; trial++) {
        const double *m = host_gpu[trial % 5], *m2 = host_gpu[(trial / 5) % 5];
        random_run(rng, &a, m[0], m[1]);
        random_run(rng, &b, m2[0], m2[1]);
        const run *ab[] = {&a, &b};
        eci_walk_sum then = summed(&a), sb = summed(&b), want = by_definition(ab, 2);
        eci_walk_sum_then(&then, &sb);
        assert_sums(&then, &want);
        size_t n = 1 + gsl_rng_uniform_int(rng, 40);
        const run *an[40];
        for (size_t k = 0; k < n; k++)
            an[k] = &a;
        eci_walk_sum sa = summed(&a), rep = eci_walk_sum_repeat(&sa, (double)n);
        want = by_definition(an, n);
        assert_sums(&rep, &want);
    }
    eci_walk_sum none = eci_walk_sum_none(), sa = summed(&a), copy = sa;
    eci_walk_sum_then(&copy, &none); /* nothing after a: a */
    assert_sums(&copy, &sa);
    eci_walk_sum_then(&none, &sa); /* a after nothing: a */
    assert_sums(&none, &sa);
    gsl_rng_free(rng);
}

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
        cmocka_unit_test(test_sum_algebra),
        cmocka_unit_test(test_single_gpu),
        cmocka_unit_test(test_dispatch_changes),
        cmocka_unit_test(test_multi_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
