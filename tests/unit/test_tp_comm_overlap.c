/*
 * test_tp_comm_overlap.c: Transformer Engine's userbuffers under tp_comm_overlap=1 (model/overlap.c
 * te_tp_forward_overlap), against its closed form on a synthetic tensor-parallel layer: an all-gather
 * under the column-parallel GEMM after it (ring exchange: tp token chunks at every SM, the copy
 * engines moving the next chunk), a reduce-scatter under the row-parallel GEMM before it (pipeline:
 * num_splits output chunks on the SMs the reduce-scatter kernels leave, set_sm_margin), and the
 * reduce-scatter's backward all-gather under the input gradient in tp chunks, with the per-GEMM
 * settings of the configuration tp_overlap_cfg names (models/tp_overlap.csv).  The overlapped GEMMs
 * take longer than alone, so the old free overlap (which left them as they were) fails here, as does
 * the code before the key (it has no rates.tp_overlap).  test_configs_differ: two configurations
 * give their closed-form difference (the code before tp_overlap.csv priced every row with one).
 * test_parallel.c test_te_tp_comm_overlap checks a prediction and the refusals.
 */
#include "ec_test.h"
#include "catalog/catalog.h"
#include "internal.h"
#include "model/compute.h"

#include <math.h>
#include <string.h>

static double chunked(const eci_rates *r, double m, double n, double k, double chunks, int along_n)
{
    double part = along_n ? eci_gemm_time_s(r, m, n / chunks, k, 1, 0) : eci_gemm_time_s(r, m / chunks, n, k, 1, 0);
    return chunks * part / eci_gemm_time_s(r, m, n, k, 1, 0);
}

/* A synthetic tensor-parallel layer: all-gather, fc1, fc2, reduce-scatter (Llama 3 70B, tp 4, one 8k sequence). */
enum { TP = 4 };
static const double M = 8192, H = 8192, FF = 28672 / 4;

static void layer(eci_rates *r, eci_op ops[4], eci_workload *wl, eci_comm *comm)
{
    r->groups[ECI_GROUP_TP].n = TP;
    memset(comm, 0, sizeof *comm); /* only its presence is read: the costs below are given */
    r->comm = comm;
    memset(ops, 0, 4 * sizeof *ops);
    ops[0] = (eci_op){.name = "ag", .kind = ECI_OP_COMM, .group = ECI_GROUP_TP, .fwd_coll = ECI_COLL_ALLGATHER,
                      .bwd_coll = ECI_COLL_REDUCE_SCATTER, .block = 0};
    ops[1] = (eci_op){.name = "fc1", .kind = ECI_OP_GEMM, .m = M, .n = 2 * FF, .k = H, .batch = 1, .block = 0};
    ops[2] = (eci_op){.name = "fc2", .kind = ECI_OP_GEMM, .m = M, .n = H, .k = FF, .batch = 1, .block = 0};
    ops[3] = (eci_op){.name = "rs", .kind = ECI_OP_COMM, .group = ECI_GROUP_TP, .fwd_coll = ECI_COLL_REDUCE_SCATTER,
                      .bwd_coll = ECI_COLL_ALLGATHER, .block = 0};
    memset(wl, 0, sizeof *wl);
    wl->ops = ops, wl->n_ops = 4;
}

static void price(ec_ctx *ctx, eci_rates *r, const char *cfg_id, double coll, eci_op_cost_t cost[4])
{
    eci_op ops[4];
    eci_workload wl;
    eci_comm comm;
    layer(r, ops, &wl, &comm);
    int idx = eci_tp_overlap_index(ctx, cfg_id);
    assert_true(idx >= 0);
    r->tp_overlap = 1 + idx;
    const double g1 = eci_gemm_time_s(r, M, 2 * FF, H, 1, 0), g2 = eci_gemm_time_s(r, M, H, FF, 1, 0);
    memset(cost, 0, 4 * sizeof *cost);
    cost[0].fwd_s = coll, cost[0].bwd_s = coll;
    cost[1].fwd_s = g1, cost[1].bwd_s = 2 * g1;
    cost[2].fwd_s = g2, cost[2].bwd_s = 2 * g2;
    cost[3].fwd_s = coll, cost[3].bwd_s = coll;
    eci_overlap_apply(ctx, r, &wl, cost);
}

static void h100_rates(ec_ctx *ctx, eci_rates *r)
{
    eci_params calib;
    eci_params_default(ctx, &calib);
    eci_rates_init(ctx, eci_hw_find(ctx, "h100-sxm5-80gb"), EC_PREC_AMP_BF16, &calib, 0, EC_KERNELS_EAGER, r);
}

static void test_closed_form(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_rates r;
    h100_rates(ctx, &r);
    const double tp = TP, m = M, h = H, f = FF;
    const double g1 = eci_gemm_time_s(&r, m, 2 * f, h, 1, 0), g2 = eci_gemm_time_s(&r, m, h, f, 1, 0);
    const double coll[2] = {3.0 * g1, 0.2 * g2}; /* a slow link (collective exposed), a fast one (hidden) */
    const eci_tp_overlap *cfg = eci_tp_overlap_at(ctx, eci_tp_overlap_index(ctx, "")); /* unset: the default */
    assert_non_null(cfg);
    assert_string_equal(cfg->id, "h100_h8192_tp4_mbs1_seqlen8192");
    const eci_ub_gemm *proj = &cfg->gemm[ECI_UB_PROJ_FPROP];
    assert_int_equal(proj->method, ECI_UB_PIPELINE);
    for (int c = 0; c < 2; c++) {
        eci_op_cost_t cost[4];
        price(ctx, &r, "", coll[c], cost);
        /* ring exchange: fc1 in tp token chunks, the collective's excess over them */
        double fc1 = g1 * chunked(&r, m, 2 * f, h, tp, 0), p = coll[c] / (tp - 1);
        assert_rel(cost[1].fwd_s, fc1, 1e-12);
        assert_rel(cost[0].fwd_s + 1e-30, (tp - 1) * fmax(0, p - fc1 / tp) + 1e-30, 1e-9);
        /* pipeline: fc2 in num_splits output chunks on SMs - num_sm (the block's only reduce-scatter: proj's) */
        double splits = proj->num_splits, num_sm = proj->num_sm;
        double slow = proj->set_sm_margin ? r.sm_count / (r.sm_count - num_sm) : 1;
        assert_true(splits > 1 && num_sm > 0 && slow > 1);
        double fc2 = g2 * chunked(&r, m, h, f, splits, 1) * slow, ch = coll[c] / splits;
        assert_rel(cost[2].fwd_s, fc2, 1e-12);
        assert_rel(cost[3].fwd_s, (splits - 1) * fmax(0, ch - fc2 / splits) + ch, 1e-9);
        /* its backward all-gather: ring exchange under the input gradient (half the backward) in tp chunks */
        double dgrad = g2 * chunked(&r, m, h, f, tp, 0);
        assert_rel(cost[2].bwd_s, g2 + dgrad, 1e-12);
        assert_rel(cost[3].bwd_s + 1e-30, (tp - 1) * fmax(0, coll[c] / (tp - 1) - dgrad / tp) + 1e-30, 1e-9);
        /* the overlapped GEMMs are slower than alone: not free */
        assert_true(cost[1].fwd_s > g1 && cost[2].fwd_s > g2 * slow);
    }
    ec_ctx_free(ctx);
}

/* Two configurations, their closed-form difference: NeMo's GPT-3 20B config gives proj_fprop 16 SMs
 * where the Llama 3 70B one gives 24 (the pipelined GEMM's time in the ratio (SMs - 16) / (SMs - 24)
 * of the two); TE's defaults take no SM margin (the chunked GEMM at every SM); Megatron-Bridge's FP8
 * preset ring-exchanges the reduce-scatter (tp token chunks, 1 SM given up, no exposed last chunk). */
static void test_configs_differ(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_rates r;
    h100_rates(ctx, &r);
    const double sms = r.sm_count, g2 = eci_gemm_time_s(&r, M, H, FF, 1, 0), coll = 3.0 * g2, tp = TP;
    const double split4 = g2 * chunked(&r, M, H, FF, 4, 1);
    eci_op_cost_t a[4], b[4], te[4], fp8[4];
    price(ctx, &r, "h100_h8192_tp4_mbs1_seqlen8192", coll, a);
    price(ctx, &r, "h100_h6144_tp2_mbs2_seqlen2048", coll, b);
    price(ctx, &r, "te_defaults", coll, te);
    price(ctx, &r, "bridge_fp8_h100_h8192_tp4", coll, fp8);
    assert_rel(a[2].fwd_s, split4 * sms / (sms - 24), 1e-12);
    assert_rel(b[2].fwd_s, split4 * sms / (sms - 16), 1e-12);
    assert_rel(a[2].fwd_s - b[2].fwd_s, split4 * sms * (1 / (sms - 24) - 1 / (sms - 16)), 1e-9);
    assert_rel(te[2].fwd_s, split4, 1e-12);
    double ring = g2 * chunked(&r, M, H, FF, tp, 0) * sms / (sms - 1), p = coll / (tp - 1);
    assert_rel(fp8[2].fwd_s, ring, 1e-12);
    assert_rel(fp8[3].fwd_s + 1e-30, (tp - 1) * fmax(0, p - ring / tp) + 1e-30, 1e-9);
    assert_true(a[2].fwd_s > b[2].fwd_s && b[2].fwd_s > te[2].fwd_s);
    ec_ctx_free(ctx);
}

/* An unknown id: the key named, the ids listed. */
static void test_unknown_id(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "tp_overlap_cfg", "h100_nope"), EC_ENOTFOUND);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "key 'tp_overlap_cfg': unknown configuration 'h100_nope'"));
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "te_defaults"));
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "bridge_fp8_b200_h16384_tp4_cp2"));
    assert_int_equal(ec_config_set(ctx, &cfg, "tp_overlap_cfg", "te_defaults"), EC_OK);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_form),
        cmocka_unit_test(test_configs_differ),
        cmocka_unit_test(test_unknown_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
