/*
 * test_cuda_graphs.c: CUDA graphs a training script captures itself, without torch.compile
 * (cuda_graphs=1; sim/setup.h cuda_graphs(), sim/setup.c eci_setup_model_dispatch).  NVIDIA's
 * MLPerf BERT passes --use_cuda_graph (run_pretraining.py "Enable CUDA graph execution",
 * training_results_v3.0 L571-574) on its large-scale H100 and A100 runs: the model's forward and
 * backward are replayed from captured graphs, one replay per pass instead of one launch per
 * kernel.  At 2 packed samples per GPU (434 nodes) the eager launches outlast the GPU's work, so
 * the step is host-bound without graphs and GPU-bound with them; the GPU's own work does not
 * change.  At 48 packed samples per GPU (one node) the GPU's work hides the launches either way.
 * Fails on the old code (no key 'cuda_graphs').
 */
#include "ec_test.h"

#include <stdio.h>

/* MLPerf BERT-large phase 2 as bench/data/llm_runs.csv describes it */
#define BERT \
    "model=bert-large task=pretrain gpu=h100-sxm5-80gb precision=fp16 optimizer=lamb attention=flash " \
    "kernels=fused seq_len=512 gpus_per_node=8 network=ib-ndr-400 strategy=zero zero_stage=1 zero_shard_size=8 "
#define EOS434 BERT "num_gpus=3472 zero_reduce=all_reduce batch_per_gpu=2 "
#define NODE1 BERT "num_gpus=8 batch_per_gpu=48 "

static void test_graphs_remove_the_launches(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result eager, graphs;
    ec_test_predict(ctx, EOS434, &eager);
    ec_test_predict(ctx, EOS434 "cuda_graphs=1", &graphs);
    print_message("434 nodes: eager %.3f ms (host %.3f ms), graphs %.3f ms (host %.3f ms)\n", eager.step_s * 1e3,
                  eager.breakdown.cpu_overhead_s * 1e3, graphs.step_s * 1e3, graphs.breakdown.cpu_overhead_s * 1e3);
    /* eager: the host's launches leave the GPU idle for a large part of the step */
    assert_true(eager.breakdown.cpu_overhead_s > 0.2 * eager.step_s);
    /* graphs: a replay per pass, the host idle time all but gone */
    assert_true(graphs.breakdown.cpu_overhead_s < 0.01 * graphs.step_s);
    assert_true(graphs.step_s < 0.8 * eager.step_s);
    /* the GPU's kernels are the same */
    assert_rel(graphs.breakdown.forward_s, eager.breakdown.forward_s, EC_TOL_CLOSED_FORM);
    assert_rel(graphs.breakdown.backward_s, eager.breakdown.backward_s, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* One node, 48 packed samples per GPU: the GPU-bound step is the same to within the launches
 * the GPU used to hide. */
static void test_gpu_bound_step_unchanged(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result eager, graphs;
    ec_test_predict(ctx, NODE1, &eager);
    ec_test_predict(ctx, NODE1 "cuda_graphs=1", &graphs);
    assert_true(graphs.step_s <= eager.step_s);
    assert_rel(graphs.step_s, eager.step_s, 0.01);
    ec_ctx_free(ctx);
}

/* The key is a 0/1 switch: other values are refused with the key's name. */
static void test_bad_value_refused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "cuda_graphs", "2"), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "cuda_graphs");
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphs_remove_the_launches),
        cmocka_unit_test(test_gpu_bound_step_unchanged),
        cmocka_unit_test(test_bad_value_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
