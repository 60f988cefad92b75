/*
 * test_packing.c: packed sequences (packed_seq_len; sim/setup.c packed_span, model/resolve.c,
 * model/workload_blocks.c).  NeMo's and Megatron-Bridge's fine-tuning recipes pack SQuAD examples
 * into samples of seq_len tokens, and Transformer Engine's THD attention (cu_seqlens), like
 * flash-attn's varlen functions, attends within each example only: each query sees the keys of
 * its own sequence, so the attention's work is sum_i l_i^2 over the pack, not seq_len^2 (NeMo
 * docs/source/features/throughput_optimizations.rst@e400b6de L29-31).  Every check fails on the
 * code before the key (which priced every pack as one causal sequence of seq_len tokens).
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "sim/setup.h"

#include <string.h>

/* NeMo 24.07's Llama 2 7B fine-tuning row (bench/data/llm_runs.csv nemo2407-sft-llama-2-7b-...),
 * on the Llama 3.1 8B preset: 32 heads of 128, 8 K/V heads. */
#define FT "model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=8 strategy=zero zero_stage=1 precision=amp_fp8 " \
           "attention=flash kernels=te batch_per_gpu=1 grad_accum=4 seq_len=4096 "

/* The fused attention op of the workload that cfg's micro-step builds. */
static eci_op attention_op(ec_ctx *ctx, const char *words)
{
    ec_config cfg;
    ec_test_config(ctx, &cfg, words);
    eci_resolved r;
    eci_params calib;
    if (eci_setup_resolve(ctx, &cfg, &r, &calib) != EC_OK)
        fail_msg("resolve: %s", ec_ctx_errmsg(ctx));
    eci_shape sh;
    eci_setup_shape(ctx, &cfg, &r, r.seq, cfg.batch_per_gpu, &sh);
    const eci_workload *wl;
    if (eci_workload_get(ctx, r.net, r.task, &sh, &wl) != EC_OK)
        fail_msg("workload: %s", ec_ctx_errmsg(ctx));
    return *ec_test_first_op(wl, "sdpa");
}

/* Each query of a causal pack sees (l + 1) / 2 keys of its own sequence on average: 143.5 for
 * sequences of 286 tokens, against 2048.5 of the whole 4096-token sample unpacked.  The queries
 * (the pack's 4096 positions), the head widths and the heads stay. */
static void test_attention_within_each_sequence(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_op full = attention_op(ctx, FT), packed = attention_op(ctx, FT "packed_seq_len=286");
    assert_rel(full.n, 4097.0 / 2, EC_TOL_EXACT);
    assert_rel(packed.n, 287.0 / 2, EC_TOL_EXACT);
    assert_rel(packed.m, full.m, EC_TOL_EXACT);
    assert_rel(packed.k, full.k, EC_TOL_EXACT);
    assert_rel(packed.batch, full.batch, EC_TOL_EXACT);
    assert_true(packed.attn_causal && full.attn_causal);
    /* a mean longer than the sample is the sample: one sequence per pack */
    eci_op whole = attention_op(ctx, FT "packed_seq_len=8192");
    assert_rel(whole.n, full.n, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* The step: the model's FLOPs lose the attention's quadratic part and the step gets shorter;
 * nothing else moves (the GEMMs run over the same 4096 positions, the memory is the same). */
static void test_packed_step(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result full, packed;
    ec_test_predict(ctx, FT, &full);
    ec_test_predict(ctx, FT "packed_seq_len=286", &packed);
    print_message("step %.1f -> %.1f ms, %.3g -> %.3g FLOP\n", full.step_s * 1e3, packed.step_s * 1e3,
                  full.flop_per_step, packed.flop_per_step);
    assert_true(packed.step_s < 0.95 * full.step_s);
    assert_true(packed.flop_per_step < full.flop_per_step);
    assert_rel(packed.memory.peak_bytes, full.memory.peak_bytes, 1e-9);
    ec_ctx_free(ctx);
}

/* SDPA and eager attention run a pack under a block-diagonal mask over every key (and MPT's
 * Triton kernel has no varlen form): the key is refused there, naming it; so is dynamic padding,
 * which pads single sequences instead of packing them. */
static void test_needs_a_varlen_kernel(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *bad[] = {"attention=sdpa", "attention=eager", "attention=flash_triton",
                         "padding=dynamic lengths=lognormal(300,0.5)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char words[512];
        snprintf(words, sizeof words, FT "packed_seq_len=286 %s", bad[i]);
        ec_config cfg;
        ec_test_config(ctx, &cfg, words);
        ec_result res;
        assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EINVAL);
        assert_contains(ec_ctx_errmsg(ctx), "packed_seq_len");
    }
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_within_each_sequence),
        cmocka_unit_test(test_packed_step),
        cmocka_unit_test(test_needs_a_varlen_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
