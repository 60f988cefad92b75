/*
 * test_moe_a2a_overlap.c: Megatron-Core's batch-level expert all-to-all overlap (moe_a2a_overlap;
 * model/compute.c ep_a2a_overlap, sim/step.c ep_paired_frac).  Under overlap_moe_expert_parallel_comm
 * a micro-batch's forward and the previous one's backward run layer by layer together, each layer
 * pairing combine-backward with attention-forward, dispatch forward and backward with the experts'
 * backward and forward, combine-forward with attention-backward
 * (megatron/core/models/common/model_chunk_schedule_plan.py @core_v0.15.0 L173-236).  Where the
 * compute outlasts the all-to-alls (Qwen3-30B-A3B's expert group inside one NVLink node) all of a
 * paired micro-step's all-to-all hides but for the slowdown of the compute beside it
 * (constants.csv overlap_compute_slowdown_frac, s), so what is left is the unpaired share u plus s
 * of the rest: u = the first forward without a pipeline (1 / ga), the warm-up forwards through an
 * interleaved one ((pp + (v - 1) x pp) / (v x ga), schedules.py get_pp_rank_microbatches).  Fails on the code before
 * the key (ec_config_set rejects it).
 */
#include "ec_test.h"
#include "catalog/consts.h"
#include "internal.h"

#include <math.h>

#define QWEN30B \
    "model=data/hf/qwen3-30b-a3b/config.json gpu=h100-sxm5-80gb precision=amp_bf16 kernels=te " \
    "attention=cudnn strategy=zero zero_stage=1 etp=1 batch_per_gpu=1 seq_len=4096 "

static void test_hidden_but_unpaired(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result off, on;
    ec_test_predict(ctx, QWEN30B "num_gpus=8 ep=8 grad_accum=8", &off);
    ec_test_predict(ctx, QWEN30B "num_gpus=8 ep=8 grad_accum=8 moe_a2a_overlap=1", &on);
    print_message("no pipeline: all-to-all %.2f -> %.2f ms, step %.2f -> %.2f ms\n", off.comm.ep_s * 1e3,
                  on.comm.ep_s * 1e3, off.step_s * 1e3, on.step_s * 1e3);
    assert_true(off.comm.ep_s > 0);
    const double s = eci_const(ctx, EC_C_overlap_compute_slowdown_frac);
    assert_true(s > 0 && s < 1);
    assert_rel(on.comm.ep_s, off.comm.ep_s * (1.0 / 8 + s * 7.0 / 8), 1e-6);
    assert_true(on.step_s < off.step_s);
    /* interleaved pipeline, pp 2 x 2 chunks, ga 8: 2 + 1 x 2 of 16 chunk steps run alone */
    ec_test_predict(ctx, QWEN30B "num_gpus=16 gpus_per_node=8 ep=8 pp=2 pp_schedule=interleaved pp_chunks=2 "
                                 "grad_accum=8", &off);
    ec_test_predict(ctx, QWEN30B "num_gpus=16 gpus_per_node=8 ep=8 pp=2 pp_schedule=interleaved pp_chunks=2 "
                                 "grad_accum=8 moe_a2a_overlap=1", &on);
    print_message("pp 2 x 2: all-to-all %.2f -> %.2f ms\n", off.comm.ep_s * 1e3, on.comm.ep_s * 1e3);
    assert_rel(on.comm.ep_s, off.comm.ep_s * (4.0 / 16 + s * 12.0 / 16), 1e-6);
    ec_ctx_free(ctx);
}

/* An all-to-all longer than the compute it pairs with (the expert group across nodes at one NIC per
 * GPU) shows its excess: less is hidden than the compute of the layer pair. */
static void test_excess_shows(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result off, on;
    ec_test_predict(ctx, QWEN30B "num_gpus=32 gpus_per_node=8 network=ib-ndr-400 ep=32 grad_accum=8", &off);
    ec_test_predict(ctx, QWEN30B "num_gpus=32 gpus_per_node=8 network=ib-ndr-400 ep=32 grad_accum=8 "
                                 "moe_a2a_overlap=1", &on);
    print_message("4 nodes: all-to-all %.2f -> %.2f ms, forward + backward %.2f ms\n", off.comm.ep_s * 1e3,
                  on.comm.ep_s * 1e3, (off.breakdown.forward_s + off.breakdown.backward_s) * 1e3);
    const double s = eci_const(ctx, EC_C_overlap_compute_slowdown_frac);
    assert_true(on.comm.ep_s > off.comm.ep_s * (1.0 / 8 + s * 7.0 / 8) * 1.01);
    assert_true(on.comm.ep_s < off.comm.ep_s);
    /* what hides is at most the compute of the paired micro-steps */
    assert_true(off.comm.ep_s - on.comm.ep_s <= off.breakdown.forward_s + off.breakdown.backward_s);
    ec_ctx_free(ctx);
}

/* Without expert parallelism there is no all-to-all: the key changes nothing. */
static void test_no_ep(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result off, on;
    ec_test_predict(ctx, QWEN30B "num_gpus=8 grad_accum=8", &off);
    ec_test_predict(ctx, QWEN30B "num_gpus=8 grad_accum=8 moe_a2a_overlap=1", &on);
    assert_true(on.step_s == off.step_s);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hidden_but_unpaired),
        cmocka_unit_test(test_excess_shows),
        cmocka_unit_test(test_no_ep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
