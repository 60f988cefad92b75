/*
 * test_expert_layout.c: Megatron-Core's expert layout ("MoE parallel folding", key etp;
 * model/layout.c, model/workload_blocks.c eci_wl_moe, sim/setup.c, sim/step.c).  The expert
 * layers lay a pipeline stage's tp x cp x dp GPUs out as etp x ep x edp (parallel_state.py
 * initialize_model_parallel: a second RankGenerator, order tp-ep-dp-pp, with
 * expert_tensor_parallel_size), so ep can span the tensor-parallel ranks when etp < tp, as
 * Megatron-Bridge's Qwen3-235B-A22B run on 256 H100 (tp 2, dp 16, ep 32, etp 1) does: refused
 * before the key ("ep must divide dp").  Each expert's width splits over etp, not tp; the
 * experts' gradients are reduced over the expert data-parallel group only (none where edp =
 * 1), every local expert's (the walk used to hand the buckets one expert's of each loop).
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MIXTRAL "model=mixtral-8x7b gpu=h100-sxm5-80gb precision=amp_bf16 kernels=te attention=cudnn batch_per_gpu=1 " \
                "seq_len=1024 gpus_per_node=8 strategy=zero zero_stage=1 "

static void expect_refused(ec_ctx *ctx, const char *words, const char *want)
{
    ec_config cfg;
    ec_result res;
    ec_test_config(ctx, &cfg, words);
    int rc = ec_predict(ctx, &cfg, &res);
    if (rc != EC_EINVAL || strstr(ec_ctx_errmsg(ctx), want) == NULL)
        fail_msg("%s: got %d '%s', want EC_EINVAL naming '%s'", words, rc, ec_ctx_errmsg(ctx), want);
}

/* ep x etp must divide tp x cp x dp: on 8 GPUs with tp 2 (dp 4), ep 8 runs with etp 1 (the
 * experts' 8 ranks span the tensor-parallel pairs) and is refused with the default etp = tp. */
static void test_ep_spans_tensor_parallel_ranks(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    ec_test_predict(ctx, MIXTRAL "num_gpus=8 tp=2 sequence_parallel=1 ep=8 etp=1", &res);
    assert_int_equal(res.ep, 8);
    assert_int_equal(res.dp, 4);
    assert_true(res.step_s > 0 && res.comm.ep_s > 0);
    expect_refused(ctx, MIXTRAL "num_gpus=8 tp=2 sequence_parallel=1 ep=8", "etp=2");
    expect_refused(ctx, MIXTRAL "num_gpus=8 tp=2 sequence_parallel=1 ep=4 etp=4", "etp=4");
    /* Megatron-Core trains MoE under tensor parallelism only with sequence parallelism */
    expect_refused(ctx, MIXTRAL "num_gpus=8 tp=2 ep=8 etp=1", "sequence_parallel");
    /* a dense model has no experts to lay out */
    expect_refused(ctx, "model=qwen3-8b gpu=h100-sxm5-80gb batch_per_gpu=1 seq_len=1024 num_gpus=8 tp=2 sequence_parallel=1 etp=1", "etp=1");
    /* etp must divide the experts' width (mixtral: 14336 = 2^11 x 7) */
    expect_refused(ctx, MIXTRAL "num_gpus=8 tp=1 ep=1 etp=3", "etp=3");
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "etp", "0"), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "etp");
    ec_ctx_free(ctx);
}

static const eci_workload *mixtral_wl(ec_ctx *ctx, int tp, int etp, int ep)
{
    eci_shape sh = ec_test_lm_shape(EC_PREC_AMP_BF16, 1, 512);
    sh.flash = 1;
    sh.tp = tp;
    sh.sp = tp > 1;
    sh.ep = ep;
    sh.etp = etp;
    sh.te_layers = 1;
    return ec_test_lm_workload(ctx, "mixtral-8x7b", &sh);
}

/* Each expert's width splits over etp, not tp: with tp 2 and etp 1 a GPU holds its experts
 * whole, twice the default's share; etp > 1 outside the tensor-parallel region gathers the
 * pairs over the expert tensor-parallel group and scatters them back. */
static void test_expert_width_over_etp(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    double dflt = mixtral_wl(ctx, 2, 0, 4)->expert_params, whole = mixtral_wl(ctx, 2, 1, 4)->expert_params;
    double expert = 32.0 * 8 / 4 * 3 * 4096 * 14336; /* 32 layers x 2 local experts x gate, up, down */
    assert_rel(whole, expert, 1e-9);
    assert_rel(dflt, expert / 2, 1e-9);
    const eci_workload *folded = mixtral_wl(ctx, 1, 2, 4);
    assert_rel(folded->expert_params, expert / 2, 1e-9);
    assert_true(ec_test_count_ops(folded, "etp_allgather") > 0 && ec_test_count_ops(folded, "etp_reduce_scatter") > 0);
    assert_int_equal(ec_test_count_ops(mixtral_wl(ctx, 2, 0, 4), "etp_allgather"), 0);
    ec_ctx_free(ctx);
}

/* The experts' gradients are reduced over the expert data-parallel group: on 8 GPUs with ep 8
 * (edp 1) only the dense gradients are reduced; with ep 4 (edp 2) the experts' too, four times
 * the dense bytes.  One bucket after backward (grad_buckets=1) exposes the whole reduction. */
static void test_expert_grads_over_edp(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result ep8, ep4;
    ec_test_predict(ctx, MIXTRAL "num_gpus=8 ep=8 grad_buckets=1", &ep8);
    ec_test_predict(ctx, MIXTRAL "num_gpus=8 ep=4 grad_buckets=1", &ep4);
    print_message("exposed gradient reduction: ep 8 (edp 1) %.3f ms, ep 4 (edp 2) %.3f ms\n",
                  ep8.comm.dp_reduce_s * 1e3, ep4.comm.dp_reduce_s * 1e3);
    assert_true(ep8.comm.dp_reduce_s > 0);
    assert_true(ep8.comm.dp_reduce_s < 0.5 * ep4.comm.dp_reduce_s);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ep_spans_tensor_parallel_ranks),
        cmocka_unit_test(test_expert_width_over_etp),
        cmocka_unit_test(test_expert_grads_over_edp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
