/*
 * test_ddp_no_sync.c: DDP with gradient accumulation (sim/step.c).  Every micro-step but the
 * last runs under no_sync: no hook, no reduction, no kernel slowed beside one.  The step model
 * walks the first micro-step, one that the later no_sync ones repeat, and the last, which
 * all-reduces.  It used to take the repeated one as the reducing one less its exposed
 * reductions and its overlap slowdown; on a host-bound step the slowed kernels hide in the
 * GPU's idle gaps, so that difference undercounted the micro-step by the slowdown, and a
 * faster GPU (less slowdown to subtract) predicted a slower step (test_properties' case, drawn
 * once the deepseek and gpt-oss presets changed its draws).  With one or two micro-steps the
 * step has no such micro-step, but a pipeline's stages (stages.c) and the stage table take it
 * for their micro-batch: walked aside for them.  Fails on the subtraction (the fix's parent).
 */
#include "ec_test.h"
#include "internal.h"

/* Host-bound: 6 samples of BERT-base with eager attention; 2 nodes of 8 H100 behind PCIe. */
#define CASE \
    "model=bert-base-multilingual-cased gpu=h100-sxm5-80gb precision=amp_bf16 optimizer=adamw_fused " \
    "batch_per_gpu=6 num_gpus=16 strategy=ddp topology=pcie-switch num_workers=3 pin_memory=1 attention=eager "

/* Every GPU's peak FLOP/s multiplied by f (test_properties does it through a copy of gpus.csv). */
static void scale_peaks(ec_ctx *ctx, double f)
{
    for (size_t i = 0; i < ctx->n_gpus; i++) {
        eci_gpu *g = &ctx->gpus[i];
        g->peak_fp32_flop_per_s *= f;
        g->peak_tf32_flop_per_s *= f;
        g->peak_fp16_flop_per_s *= f;
        g->peak_bf16_flop_per_s *= f;
        g->emulated_bf16_flop_per_s *= f;
    }
}

/* Each case at grad_accum 1..8 on the shipped GPUs and with twice their FLOP/s: never slower. */
static void check_faster_gpu(const char *words)
{
    ec_ctx *base = ec_test_ctx(), *fast = ec_test_ctx();
    scale_peaks(fast, 2.0);
    for (int ga = 1; ga <= 8; ga++) {
        char cfg[512];
        snprintf(cfg, sizeof cfg, "%sgrad_accum=%d", words, ga);
        ec_result a, b;
        ec_test_predict(base, cfg, &a);
        ec_test_predict(fast, cfg, &b);
        print_message("%s: step %.9g s, %.9g s with twice the FLOP/s\n", cfg, a.step_s, b.step_s);
        assert_true(b.breakdown.forward_s + b.breakdown.backward_s < a.breakdown.forward_s + a.breakdown.backward_s);
        if (b.step_s > a.step_s * (1 + EC_TOL_EXACT))
            fail_msg("%s: step %.9g s > %.9g s with twice the FLOP/s", cfg, b.step_s, a.step_s);
    }
    ec_ctx_free(fast);
    ec_ctx_free(base);
}

/* test_properties' failing draw (grad_accum 6: 140.373 -> 140.460 ms with twice the FLOP/s),
 * and a pipeline of 2 stages whose micro-batch (stages.c) was the reducing micro-step less the
 * same difference at grad_accum 1 and 2. */
static void test_faster_gpu_never_slower(void **state)
{
    (void)state;
    check_faster_gpu(CASE);
    check_faster_gpu("model=bert-base gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=1 num_gpus=16 pp=2 "
                     "network=ib-ndr-400 ");
}

/* A micro-step under no_sync is the single-GPU micro-step: one more of them adds the same
 * time under DDP as on one GPU, but for the slowest GPU's wait (a share of the compute). */
static void test_no_sync_micro_step_is_single_gpu(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result d3, d4, s3, s4;
    ec_test_predict(ctx, CASE "grad_accum=3", &d3);
    ec_test_predict(ctx, CASE "grad_accum=4", &d4);
    ec_test_predict(ctx, CASE "grad_accum=3 num_gpus=1 strategy=single", &s3);
    ec_test_predict(ctx, CASE "grad_accum=4 num_gpus=1 strategy=single", &s4);
    double ddp_s = (d4.step_s - d4.straggler_s) - (d3.step_s - d3.straggler_s), single_s = s4.step_s - s3.step_s;
    print_message("one more micro-step: %.17g s under DDP, %.17g s on one GPU\n", ddp_s, single_s);
    assert_rel(ddp_s, single_s, EC_TOL_CLOSED_FORM);
    assert_rel(d4.gpu_busy_s - d3.gpu_busy_s, s4.gpu_busy_s - s3.gpu_busy_s, EC_TOL_CLOSED_FORM);
    assert_rel(d4.breakdown.cpu_overhead_s - d3.breakdown.cpu_overhead_s,
               s4.breakdown.cpu_overhead_s - s3.breakdown.cpu_overhead_s, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* The stage table's micro-batch (ec_predict_stages) is that micro-step too, also where the step
 * has only one or two micro-steps and none runs under no_sync without reducing after it. */
static void test_stage_micro_batch_is_no_sync(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result s3, s4;
    ec_test_predict(ctx, CASE "grad_accum=3 num_gpus=1 strategy=single", &s3);
    ec_test_predict(ctx, CASE "grad_accum=4 num_gpus=1 strategy=single", &s4);
    for (int ga = 2; ga <= 4; ga++) {
        char words[512];
        snprintf(words, sizeof words, CASE "grad_accum=%d", ga);
        ec_config cfg;
        ec_test_config(ctx, &cfg, words);
        ec_stage st[1];
        size_t n = 0;
        assert_int_equal(ec_predict_stages(ctx, &cfg, st, 1, &n), EC_OK);
        assert_int_equal(n, 1);
        print_message("grad_accum %d: stage micro-batch %.17g s\n", ga, st[0].micro_s);
        assert_rel(st[0].micro_s, s4.step_s - s3.step_s, EC_TOL_CLOSED_FORM);
    }
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_faster_gpu_never_slower),
        cmocka_unit_test(test_no_sync_micro_step_is_single_gpu),
        cmocka_unit_test(test_stage_micro_batch_is_no_sync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
