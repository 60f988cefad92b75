/*
 * test_cp_ring.c: context parallelism as PyTorch's experimental ring attention runs it
 * (torch/distributed/tensor/experimental/_attention.py of PyTorch 2.6: _templated_ring_attention,
 * its backward, _SDPAMerger, the all-gather K/V rotater and the ALL_TO_ALL dK/dV rotater).
 * Each check fails without its term: the memory-bound merge of every ring step
 * (workload_blocks.c cp_ring_merge) and the exchange hidden only by the first step's attention,
 * with the fp32 dK/dV passed on in backward (compute.c ring_exposed), and under compile=1 the
 * exchange waited for where it is issued (overlap.c, op->ring_waited) and the merge fused.
 * And Transformer Engine's other exchange (cp_comm_type=a2a): all-to-alls around the attention.
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/comm.h"
#include "model/compute.h"
#include "model/workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Llama 3.1 8B: 32 query heads and 8 K/V heads of 128; a 16-bit stream (2 bytes). */
static eci_shape shape(int cp, int torch, int flash)
{
    eci_shape sh = ec_test_lm_shape(EC_PREC_AMP_BF16, 1, 32768);
    sh.weights_16 = 1;
    sh.flash = flash;
    sh.tp = 1;
    sh.cp = cp;
    sh.cp_torch = torch;
    sh.ep = 1;
    return sh;
}

/* flash 1: a kernel that reads the grouped K/V heads in place; 0: SDPA after the model's repeat_kv */
static const eci_op *find_op_as(ec_ctx *ctx, int cp, int torch, int flash, const char *name)
{
    const eci_net *net = eci_net_find(ctx, "llama-3.1-8b");
    if (net == NULL)
        fail_msg("llama-3.1-8b: %s", ec_ctx_errmsg(ctx));
    eci_shape sh = shape(cp, torch, flash);
    const eci_workload *wl;
    if (eci_workload_get(ctx, net, eci_task_parse("lm"), &sh, &wl) != EC_OK)
        fail_msg("workload: %s", ec_ctx_errmsg(ctx));
    for (size_t i = 0; i < wl->n_ops; i++)
        if (strcmp(wl->ops[i].name, name) == 0)
            return &wl->ops[i];
    return NULL;
}

static const eci_op *find_op(ec_ctx *ctx, int cp, int torch, const char *name)
{
    return find_op_as(ctx, cp, torch, 1, name);
}

/* What eci_ring_exposed leaves of a ring op's cost c beside the attention `under`, with no network
 * model (no dK/dV sends priced): fwd_s and bwd_s as given. */
static void check_ring_exposed(const eci_op *op, eci_op_cost_t under, eci_op_cost_t c, double fwd_s, double bwd_s)
{
    eci_rates r;
    memset(&r, 0, sizeof r);
    eci_ring_exposed(&r, op, &under, &c);
    assert_rel(c.fwd_s, fwd_s, EC_TOL_EXACT);
    assert_rel(c.bwd_s, bwd_s, EC_TOL_EXACT);
}

/* The merge, cp = 8, N = 4096 local rows x 32 x 128 output elements, KV = 4096 x (1024 + 1024).
 * Forward bytes per N: step 0's output cast to fp32 (2 + 4); each later step either merges the
 * whole output (cast 6, out - out_i 12, x sigmoid 8, out - ... 12: 38) or, its second half of the
 * queries only, half of that plus the torch.cat of the fp32 output (3 + 6 + 4 + 6 + 8: 27),
 * half the steps each on average; the result cast back (4 + 2); per KV: the K/V concatenated
 * for the next step (2 x 2, 7 steps).  Backward per N and per KV: zeroed fp32 accumulators (4),
 * step 0's gradient added (4 + 2 + 4), each later step added whole (10) or by half with a cat
 * (4 + 1 + 8: 13), 11.5 on average, the cast back (6); per KV the fp32 concat for the ring (8,
 * all 8 steps).  Without cp, or with kernels=te (cp_torch 0), no merge. */
static void test_ring_merge_bytes(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double rows = 32768.0 / 8, n = rows * 32 * 128, kv = rows * 2 * 8 * 128;
    const eci_op *op = find_op(ctx, 8, 1, "cp_ring_merge");
    assert_non_null(op);
    assert_rel(op->fwd_bytes, n * (6 + 7 * (38 + 27) / 2.0 + 6) + kv * 7 * 4, EC_TOL_EXACT);
    assert_rel(op->bwd_bytes, (n + kv) * (4 + 10 + 7 * 11.5 + 6) + kv * 8 * 8, EC_TOL_EXACT);
    assert_int_equal(op->fwd_kernels, 2 + 11 * 7);
    assert_rel(op->saved_bytes, 0, EC_TOL_EXACT);
    assert_null(find_op(ctx, 1, 0, "cp_ring_merge"));
    assert_null(find_op(ctx, 8, 0, "cp_ring_merge")); /* kernels=te: Megatron's ring, not this one */
    ec_ctx_free(ctx);
}

/* Compiled (cp_torch 2: the ring traced into Inductor's graph), the same cp = 8 shapes: each later
 * step's casts and merge one fused pass, the fp32 output read and written and the step's output
 * read (8 + 2 = 10), the half-query steps reading the step's output on half the rows with the
 * torch.cat rewriting the whole (8 + 1 = 9), 9.5 on average; the K/V concatenated once for the
 * all-gather (2 x 2; the later concatenations have no user).  Backward per N: the first gradient
 * cast to fp32 (2 + 4), each later step's add 9.5; per KV the same, and the last dK/dV received
 * cast back (4 + 2).  One kernel a step and the concatenation. */
static void test_ring_merge_compiled_bytes(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double rows = 32768.0 / 8, n = rows * 32 * 128, kv = rows * 2 * 8 * 128;
    const eci_op *op = find_op(ctx, 8, 2, "cp_ring_merge");
    assert_non_null(op);
    assert_rel(op->fwd_bytes, n * 7 * 9.5 + kv * 4, EC_TOL_EXACT);
    assert_rel(op->bwd_bytes, n * (6 + 7 * 9.5) + kv * (6 + 7 * 9.5 + 6), EC_TOL_EXACT);
    assert_int_equal(op->fwd_kernels, 8);
    ec_ctx_free(ctx);
}

/* The exchange: a ring of cp steps, the fp32 dK/dV of the local rows passed on in backward. */
static void test_ring_exchange_op(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double rows = 32768.0 / 8, kv = rows * 2 * 8 * 128;
    const eci_op *op = find_op(ctx, 8, 1, "cp_kv_ring");
    assert_non_null(op);
    assert_int_equal(op->hidden, 8);
    assert_rel(op->comm_bytes, kv * 8 * 2, EC_TOL_EXACT);
    assert_rel(op->bwd_bytes, kv * 4, EC_TOL_EXACT);
    op = find_op(ctx, 8, 0, "cp_kv_ring"); /* kernels=te: a step per GPU, dK/dV in the K/V's 2 bytes */
    assert_non_null(op);
    assert_int_equal(op->hidden, 8);
    assert_true(op->ring_te);
    assert_rel(op->bwd_bytes, kv * 2, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* Transformer Engine's ring (AttnFuncWithCPAndKVP2P), cp = 4: the forward's 60 ms all-gather is
 * three 20 ms sends, each under one step of the 40 ms attention (10 ms): 3 x (20 - 10) = 30 ms
 * exposed (PyTorch's ring, hidden by the first step only: 60 - 10 = 50).  Backward, 40 ms of
 * attention (10 a step), no network model (the dK/dV sends free): the K/V send, the two middle
 * K/V + dK/dV sends, 20 - 10 each, and the last dK/dV send alone: 10 + 2 x 10 + 0 = 30 ms. */
static void test_ring_te_exposed(void **state)
{
    (void)state;
    eci_op op = {.kind = ECI_OP_COMM, .hidden = 4, .ring_te = 1};
    check_ring_exposed(&op, (eci_op_cost_t){.fwd_s = 0.040, .bwd_s = 0.040},
                       (eci_op_cost_t){.fwd_s = 0.060, .bwd_s = 0.060}, 0.030, 0.030);
}

/* attention=sdpa: the model expands the 8 K/V heads to the 32 query heads before SDPA (HF's and
 * torchtitan's repeat_kv, torchtitan/models/llama/model.py L201-202@9dec370), and PyTorch's ring
 * all-gathers, concatenates and passes back the gradients of the tensors SDPA was given: every
 * K/V byte of the ring x 4 (32 / 8).  Before, the ring moved the grouped heads only. */
static void test_ring_repeated_kv(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const double rows = 32768.0 / 8, n = rows * 32 * 128, kv = rows * 2 * 32 * 128;
    const eci_op *op = find_op_as(ctx, 8, 1, 0, "cp_kv_ring");
    assert_non_null(op);
    assert_rel(op->comm_bytes, kv * 8 * 2, EC_TOL_EXACT);
    assert_rel(op->bwd_bytes, kv * 4, EC_TOL_EXACT);
    op = find_op_as(ctx, 8, 1, 0, "cp_ring_merge");
    assert_non_null(op);
    assert_rel(op->fwd_bytes, n * (6 + 7 * (38 + 27) / 2.0 + 6) + kv * 7 * 4, EC_TOL_EXACT);
    assert_rel(op->bwd_bytes, (n + kv) * (4 + 10 + 7 * 11.5 + 6) + kv * 8 * 8, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* cp_comm_type=a2a (kernels=te): before the attention one all-to-all of this GPU's Q, K and V
 * (4096 local rows x (32 + 8 + 8) heads x 128 x 2 bytes), after it one of the output (4096 x 32 x
 * 128 x 2), each the same collective in backward, hidden by nothing; no ring.  Before the key,
 * kernels=te priced the ring hidden under the whole attention for every Megatron run. */
static void test_cp_a2a_ops(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = eci_net_find(ctx, "llama-3.1-8b");
    assert_non_null(net);
    eci_shape sh = shape(8, 0, 1);
    sh.remat = sh.te_layers = sh.cp_a2a = 1;
    const eci_workload *wl;
    assert_int_equal(eci_workload_get(ctx, net, eci_task_parse("lm"), &sh, &wl), EC_OK);
    const double rows = 32768.0 / 8;
    const eci_op *qkv = ec_test_first_op(wl, "cp_a2a_qkv"), *out = ec_test_first_op(wl, "cp_a2a_out");
    assert_rel(qkv->comm_bytes, rows * (32 + 8 + 8) * 128 * 2, EC_TOL_EXACT);
    assert_rel(out->comm_bytes, rows * 32 * 128 * 2, EC_TOL_EXACT);
    assert_int_equal(qkv->fwd_coll, ECI_COLL_ALLTOALL);
    assert_int_equal(qkv->bwd_coll, ECI_COLL_ALLTOALL);
    assert_int_equal(qkv->hidden, 0);
    assert_int_equal(ec_test_count_ops(wl, "cp_a2a_qkv"), 1); /* the repeated block's, once */
    assert_int_equal(ec_test_count_ops(wl, "cp_kv_ring"), 0);
    ec_ctx_free(ctx);
}

static void predict(ec_ctx *ctx, ec_result *res, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ec_config cfg;
    ec_config_init(&cfg);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        if (ec_config_set_word(ctx, &cfg, w) != EC_OK)
            fail_msg("ec_config_set_word(%s): %s", w, ec_ctx_errmsg(ctx));
    if (ec_predict(ctx, &cfg, res) != EC_OK)
        fail_msg("ec_predict(%s): %s", fmt, ec_ctx_errmsg(ctx));
}

#define CP8 "model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 attention=flash2 strategy=fsdp " \
            "batch_per_gpu=1 num_gpus=8 cp=8"

/* The key through ec_predict: a2a's exchanges add to the context-parallel time, which the hidden
 * ring leaves at zero for kernels=te; on one GPU of context (cp=1), or without kernels=te, the key
 * is named as ignored. */
static void test_cp_a2a_predict(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result p2p, a2a;
    predict(ctx, &p2p, CP8 " seq_len=32768 kernels=te attention=cudnn");
    predict(ctx, &a2a, CP8 " seq_len=32768 kernels=te attention=cudnn cp_comm_type=a2a");
    assert_true(a2a.comm.cp_s > p2p.comm.cp_s);
    assert_true(a2a.step_s > p2p.step_s);
    assert_false(a2a.warnings & EC_WARN_KEY_IGNORED);
    predict(ctx, &a2a, "model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=4096 "
                       "kernels=te cp_comm_type=a2a");
    assert_true(a2a.warnings & EC_WARN_KEY_IGNORED);
    assert_non_null(strstr(a2a.warning_text, "cp_comm_type (kernels=te with cp > 1 only)"));
    ec_ctx_free(ctx);
}

/* NCCL's channel limit (NCCL_CFG_PATH max_ctas): a group limited to N channels moves at most N x the
 * generation's per-channel ring rate, 30 GB/s on Hopper (NCCL search.cc: sm90SpeedArrayIntra's 60
 * GB/s halved by ncclTopoDupChannels), 45 on Blackwell, 20 before; bus and peer-to-peer alike, and
 * a group of one rank or N = 0 keeps its rates.  Through ec_predict the context-parallel exchange of
 * one channel is exposed where NVLink's rate hid it, and 64 channels (1.9 TB/s) change nothing. */
static void test_nccl_ctas(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    assert_rel(eci_nccl_channel_bytes_per_s(ctx, 9.0), 30e9, EC_TOL_EXACT);
    assert_rel(eci_nccl_channel_bytes_per_s(ctx, 10.0), 45e9, EC_TOL_EXACT);
    assert_rel(eci_nccl_channel_bytes_per_s(ctx, 8.0), 20e9, EC_TOL_EXACT);
    eci_group g = {.n = 8, .nodes = 1, .busbw_bytes_per_s = 400e9, .p2p_bytes_per_s = 400e9};
    eci_group_cap_channels(&g, 8, 30e9);
    assert_rel(g.busbw_bytes_per_s, 240e9, EC_TOL_EXACT);
    assert_rel(g.p2p_bytes_per_s, 240e9, EC_TOL_EXACT);
    eci_group_cap_channels(&g, 0, 30e9);
    assert_rel(g.busbw_bytes_per_s, 240e9, EC_TOL_EXACT);
    eci_group one = {.n = 1, .busbw_bytes_per_s = 400e9, .p2p_bytes_per_s = 400e9};
    eci_group_cap_channels(&one, 1, 30e9);
    assert_rel(one.busbw_bytes_per_s, 400e9, EC_TOL_EXACT);
    ec_result base, one_cta, wide;
    predict(ctx, &base, CP8 " seq_len=32768 kernels=te attention=cudnn");
    predict(ctx, &one_cta, CP8 " seq_len=32768 kernels=te attention=cudnn nccl_cp_ctas=1");
    predict(ctx, &wide, CP8 " seq_len=32768 kernels=te attention=cudnn nccl_cp_ctas=64");
    assert_true(one_cta.comm.cp_s > base.comm.cp_s);
    assert_true(one_cta.step_s > base.step_s);
    assert_rel(wide.step_s, base.step_s, EC_TOL_EXACT);
    assert_false(one_cta.warnings & EC_WARN_KEY_IGNORED);
    predict(ctx, &one_cta, "model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=4096 "
                           "nccl_cp_ctas=1 nccl_tp_ctas=8 nccl_dp_ctas=8"); /* one GPU: no group to limit */
    assert_true(one_cta.warnings & EC_WARN_KEY_IGNORED);
    assert_non_null(strstr(one_cta.warning_text, "nccl_cp_ctas (cp > 1 only)"));
    assert_non_null(strstr(one_cta.warning_text, "nccl_tp_ctas (tp > 1 only)"));
    assert_non_null(strstr(one_cta.warning_text, "nccl_dp_ctas (dp x cp > 1 only)"));
    ec_ctx_free(ctx);
}

/* eci_ring_exposed: a ring of 8 steps hides its exchange under the first step's attention only:
 * 30 ms of all-gather under 80 ms of forward attention leaves 30 - 80/8 = 20 ms exposed (under
 * the whole attention, as one overlapping op: nothing); backward 30 under 160: 10 ms. */
static void test_ring_exposed_closed_form(void **state)
{
    (void)state;
    eci_rates r;
    memset(&r, 0, sizeof r); /* no network model: no dK/dV passes priced */
    eci_op op = {.kind = ECI_OP_COMM, .hidden = 8};
    eci_op_cost_t under = {.fwd_s = 0.080, .bwd_s = 0.160}, c = {.fwd_s = 0.030, .bwd_s = 0.030};
    eci_ring_exposed(&r, &op, &under, &c);
    assert_rel(c.fwd_s, 0.020, EC_TOL_EXACT);
    assert_rel(c.bwd_s, 0.010, EC_TOL_EXACT);
    op.hidden = 1; /* one overlapping op: the excess over all of it */
    c = (eci_op_cost_t){.fwd_s = 0.030, .bwd_s = 0.030};
    eci_ring_exposed(&r, &op, &under, &c);
    assert_rel(c.fwd_s, 0, EC_TOL_EXACT);
    assert_rel(c.bwd_s, 0, EC_TOL_EXACT);
}

/* At 256k tokens the all-gather hides under the first step's attention, but each layer's last
 * dK/dV pass (fp32, 32768 rows x 2048) is waited for after the backward ring: exposed (at most
 * NVLink's 900 GB/s each), a small part of the step; before, the whole exchange hid. */
static void test_ring_exposure(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result r;
    predict(ctx, &r, CP8 " seq_len=262144");
    const double pass_bytes = 32768.0 * 2048 * 4, nvlink_max = 900e9;
    assert_true(r.comm.cp_s >= 32 * pass_bytes / nvlink_max);
    assert_true(r.comm.cp_s < 0.01 * r.step_s);
    ec_ctx_free(ctx);
}

/* compile=1 (torchtitan compiles each block with its SDPA, so the ring is traced into the graph,
 * where functional collectives are waited for where they are issued and Inductor moves no wait by
 * default): the ring's op is marked, and nothing hides its exchange: 30 ms of all-gather stays
 * 30 ms in both passes (no network model here: no dK/dV passes priced). */
static void test_ring_compiled_waits(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_op *op = find_op(ctx, 8, 2, "cp_kv_ring");
    assert_non_null(op);
    assert_int_equal(op->hidden, 8);
    assert_true(op->ring_waited);
    op = find_op(ctx, 8, 1, "cp_kv_ring");
    assert_non_null(op);
    assert_false(op->ring_waited);
    ec_ctx_free(ctx);
    eci_op ring = {.kind = ECI_OP_COMM, .hidden = 8, .ring_waited = 1};
    check_ring_exposed(&ring, (eci_op_cost_t){.fwd_s = 0.080, .bwd_s = 0.160},
                       (eci_op_cost_t){.fwd_s = 0.030, .bwd_s = 0.030}, 0.030, 0.030);
}

/* The same 256k-token run compiled: per layer the K/V all-gather (8 x 32768 rows x 2048 x 2
 * bytes, 7/8 of it received) in the forward and again in the backward, and all eight fp32 dK/dV
 * passes, each in full: at least their bytes at NVLink's 900 GB/s; eager leaves less than that. */
static void test_ring_compiled_exposure(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result eager, compiled;
    predict(ctx, &eager, CP8 " seq_len=262144");
    predict(ctx, &compiled, CP8 " seq_len=262144 compile=1");
    const double pass_bytes = 32768.0 * 2048 * 4, gather_bytes = 8 * 32768.0 * 2048 * 2, nvlink_max = 900e9;
    const double floor_s = 32 * (2 * gather_bytes * 7 / 8 + 8 * pass_bytes) / nvlink_max;
    assert_true(compiled.comm.cp_s >= floor_s);
    assert_true(eager.comm.cp_s < floor_s);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_merge_bytes),
        cmocka_unit_test(test_ring_merge_compiled_bytes),
        cmocka_unit_test(test_ring_exchange_op),
        cmocka_unit_test(test_cp_a2a_ops),
        cmocka_unit_test(test_cp_a2a_predict),
        cmocka_unit_test(test_nccl_ctas),
        cmocka_unit_test(test_ring_te_exposed),
        cmocka_unit_test(test_ring_repeated_kv),
        cmocka_unit_test(test_ring_exposed_closed_form),
        cmocka_unit_test(test_ring_exposure),
        cmocka_unit_test(test_ring_compiled_waits),
        cmocka_unit_test(test_ring_compiled_exposure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
