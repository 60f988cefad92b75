/*
 * test_zero_shard_group.c: ZeRO-1/2 sharded over groups of the data-parallel ranks
 * (zero_shard_size; sim/setup.c, sim/step.c, model/comm.c).  apex's DistributedFusedLAMB, which
 * NVIDIA's MLPerf BERT runs, shards the optimizer states over one node's GPUs (dwu_group_size 0:
 * torch.cuda.device_count()): gradients reduce-scattered within the node and the shard
 * all-reduced across nodes (or, with full_ar, all-reduced over every rank), the updated
 * parameters all-gathered within the node.  A flat ZeRO-1 over 512 GPUs runs NCCL's ring
 * reduce-scatter and all-gather over all of them, whose latency grows with the ranks and is paid
 * by every bucket: at 64 nodes the grouped step's exposed communication is far below the flat
 * one's (fails without the key's pricing, which priced the flat collectives whatever the key).
 * Memory: the optimizer states (ZeRO-2: the gradients too) are divided by the group, not by dp.
 */
#include "ec_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* MLPerf BERT-large phase 2 on 64 DGX H100 (bench/data/llm_runs.csv, mlperf-bert-v30-...-512x) */
#define BERT512 \
    "model=bert-large task=pretrain gpu=h100-sxm5-80gb precision=fp16 optimizer=lamb attention=flash " \
    "kernels=fused batch_per_gpu=3 seq_len=512 num_gpus=512 gpus_per_node=8 network=ib-ndr-400 strategy=zero "

static double exposed_dp_s(const ec_result *r)
{
    return r->comm.dp_reduce_s + r->comm.shard_wait_s;
}

static void test_grouped_zero1_exposes_far_less_at_64_nodes(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result flat, rs, ar;
    ec_test_predict(ctx, BERT512 "zero_stage=1", &flat);
    ec_test_predict(ctx, BERT512 "zero_stage=1 zero_shard_size=8", &rs);
    ec_test_predict(ctx, BERT512 "zero_stage=1 zero_shard_size=8 zero_reduce=all_reduce", &ar);
    print_message("exposed data-parallel comm: flat %.3f ms, grouped (RS+AR) %.3f ms, grouped (full AR) %.3f ms\n",
                  exposed_dp_s(&flat) * 1e3, exposed_dp_s(&rs) * 1e3, exposed_dp_s(&ar) * 1e3);
    assert_true(exposed_dp_s(&rs) < 0.2 * exposed_dp_s(&flat));
    assert_true(exposed_dp_s(&ar) < 0.2 * exposed_dp_s(&flat));
    /* the all-gather of the updated parameters runs inside a node: far below the 512-rank ring's */
    assert_true(rs.comm.shard_wait_s < 0.5 * flat.comm.shard_wait_s);
    assert_true(rs.step_s < 0.5 * flat.step_s && ar.step_s < 0.5 * flat.step_s);
    ec_ctx_free(ctx);
}

/* The optimizer states are sharded over the group: 64 times the flat ZeRO-1's share on 512
 * GPUs with groups of 8; ZeRO-2 divides the gradients (those kept between micro-steps) by the
 * group too; weights unchanged. */
static void test_states_sharded_over_the_group(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result f1, g1, f2, g2;
    ec_test_predict(ctx, BERT512 "zero_stage=1", &f1);
    ec_test_predict(ctx, BERT512 "zero_stage=1 zero_shard_size=8", &g1);
    /* the gradients kept between micro-steps: grad_accum 2 */
    ec_test_predict(ctx, BERT512 "zero_stage=2 grad_accum=2", &f2);
    ec_test_predict(ctx, BERT512 "zero_stage=2 grad_accum=2 zero_shard_size=8", &g2);
    assert_true(f1.memory.optimizer_bytes > 0);
    assert_true(fabs(g1.memory.optimizer_bytes / f1.memory.optimizer_bytes - 64.0) < 1e-9 * 64);
    assert_true(fabs(g1.memory.weights_bytes - f1.memory.weights_bytes) <= 1e-9 * f1.memory.weights_bytes);
    assert_true(fabs(g1.memory.grads_bytes - f1.memory.grads_bytes) <= 1e-9 * f1.memory.grads_bytes);
    assert_true(fabs(g2.memory.grads_bytes / f2.memory.grads_bytes - 64.0) < 1e-9 * 64);
    assert_true(fabs(g2.memory.optimizer_bytes / f2.memory.optimizer_bytes - 64.0) < 1e-9 * 64);
    ec_ctx_free(ctx);
}

/* A group of every data-parallel rank is the flat ZeRO: the same prediction, to the bit. */
static void test_whole_group_is_flat(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result a, b, c, d;
    ec_test_predict(ctx, BERT512 "zero_stage=1", &a);
    ec_test_predict(ctx, BERT512 "zero_stage=1 zero_shard_size=512", &b);
    assert_true(a.step_s == b.step_s && a.memory.peak_bytes == b.memory.peak_bytes);
    ec_test_predict(ctx, BERT512 "num_gpus=8 zero_stage=2", &c);
    ec_test_predict(ctx, BERT512 "num_gpus=8 zero_stage=2 zero_shard_size=8", &d);
    assert_true(c.step_s == d.step_s && c.memory.peak_bytes == d.memory.peak_bytes);
    ec_ctx_free(ctx);
}

static void refused(ec_ctx *ctx, const char *words, const char *want)
{
    ec_config cfg;
    ec_result res;
    ec_config_init(&cfg);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        assert_int_equal(ec_config_set_word(ctx, &cfg, w), EC_OK);
    int rc = ec_predict(ctx, &cfg, &res);
    if (rc != EC_EINVAL || strstr(ec_ctx_errmsg(ctx), want) == NULL)
        fail_msg("%s: got %d '%s', want EC_EINVAL naming '%s'", words, rc, ec_ctx_errmsg(ctx), want);
}

static void test_bad_groups_refused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    refused(ctx, BERT512 "zero_stage=1 zero_shard_size=7", "zero_shard_size=7 must divide");
    refused(ctx, BERT512 "zero_stage=3 zero_shard_size=8", "key 'zero_shard_size'");
    refused(ctx, BERT512 "strategy=ddp zero_shard_size=8", "key 'zero_shard_size'");
    refused(ctx, BERT512 "strategy=fsdp zero_shard_size=8", "sharding=hybrid_shard");
    ec_ctx_free(ctx);
}

/* grad_buckets (apex --dwu-num-blocks): one block is reduced after backward, all of it exposed;
 * five blocks launched as backward fills them hide all but what runs past the backward.  Fails on
 * the old code (no key grad_buckets). */
static void test_grad_buckets(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result ddp, one, five;
    const char *ar = BERT512 "zero_stage=1 zero_shard_size=8 zero_reduce=all_reduce ";
    char w[1024];
    ec_test_predict(ctx, ar, &ddp);
    snprintf(w, sizeof w, "%sgrad_buckets=1", ar);
    ec_test_predict(ctx, w, &one);
    snprintf(w, sizeof w, "%sgrad_buckets=5", ar);
    ec_test_predict(ctx, w, &five);
    print_message("exposed gradient reduction: DDP buckets %.3f ms, 1 block %.3f ms, 5 blocks %.3f ms\n",
                  ddp.comm.dp_reduce_s * 1e3, one.comm.dp_reduce_s * 1e3, five.comm.dp_reduce_s * 1e3);
    /* one block: no overlap, so no compute slowed beside it, and the whole reduction is exposed */
    assert_abs(one.comm.overlap_s, 0.0, EC_TOL_EXACT);
    assert_true(one.comm.dp_reduce_s > 2.0 * five.comm.dp_reduce_s);
    assert_true(one.comm.dp_reduce_s > 2.0 * ddp.comm.dp_reduce_s);
    assert_true(five.comm.dp_reduce_s > 0);
    assert_true(one.step_s > five.step_s);
    /* the compute does not change */
    assert_rel(one.breakdown.backward_s, ddp.breakdown.backward_s, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grouped_zero1_exposes_far_less_at_64_nodes),
        cmocka_unit_test(test_states_sharded_over_the_group),
        cmocka_unit_test(test_whole_group_is_flat),
        cmocka_unit_test(test_bad_groups_refused),
        cmocka_unit_test(test_grad_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
