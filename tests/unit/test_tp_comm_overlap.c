/*
 * test_tp_comm_overlap.c: Transformer Engine's userbuffers under tp_comm_overlap=1 (model/overlap.c
 * te_tp_forward_overlap), against its closed form on a synthetic tensor-parallel layer: an all-gather
 * under the column-parallel GEMM after it (ring exchange: tp token chunks at every SM, the copy
 * engines moving the next chunk), a reduce-scatter under the row-parallel GEMM before it (pipeline:
 * te_ub_num_splits output chunks on the SMs the reduce-scatter kernels leave, set_sm_margin), and the
 * reduce-scatter's backward all-gather under the input gradient in tp chunks.  The overlapped GEMMs
 * take longer than alone, so the old free overlap (which left them as they were) fails here, as does
 * the code before the key (it has no rates.tp_overlap).  test_parallel.c test_te_tp_comm_overlap
 * checks a prediction and the refusals.
 */
#include "ec_test.h"
#include "catalog/consts.h"
#include "internal.h"
#include "model/compute.h"

#include <math.h>
#include <string.h>

static double chunked(const eci_rates *r, double m, double n, double k, double chunks, int along_n)
{
    double part = along_n ? eci_gemm_time_s(r, m, n / chunks, k, 1, 0) : eci_gemm_time_s(r, m / chunks, n, k, 1, 0);
    return chunks * part / eci_gemm_time_s(r, m, n, k, 1, 0);
}

static void test_closed_form(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_params calib;
    eci_params_default(ctx, &calib);
    eci_rates r;
    eci_rates_init(ctx, eci_hw_find(ctx, "h100-sxm5-80gb"), EC_PREC_AMP_BF16, &calib, 0, &r);
    const double tp = 4, m = 8192, h = 8192, f = 28672 / 4; /* Llama 3 70B, tp 4, one 8k sequence */
    r.groups[ECI_GROUP_TP].n = (int)tp;
    r.tp_overlap = 1;
    eci_comm comm; /* only its presence is read: the costs below are given */
    memset(&comm, 0, sizeof comm);
    r.comm = &comm;
    eci_op ops[4];
    memset(ops, 0, sizeof ops);
    ops[0] = (eci_op){.name = "ag", .kind = ECI_OP_COMM, .group = ECI_GROUP_TP, .fwd_coll = ECI_COLL_ALLGATHER,
                      .bwd_coll = ECI_COLL_REDUCE_SCATTER, .block = 0};
    ops[1] = (eci_op){.name = "fc1", .kind = ECI_OP_GEMM, .m = m, .n = 2 * f, .k = h, .batch = 1, .block = 0};
    ops[2] = (eci_op){.name = "fc2", .kind = ECI_OP_GEMM, .m = m, .n = h, .k = f, .batch = 1, .block = 0};
    ops[3] = (eci_op){.name = "rs", .kind = ECI_OP_COMM, .group = ECI_GROUP_TP, .fwd_coll = ECI_COLL_REDUCE_SCATTER,
                      .bwd_coll = ECI_COLL_ALLGATHER, .block = 0};
    eci_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.ops = ops, wl.n_ops = 4;
    const double g1 = eci_gemm_time_s(&r, m, 2 * f, h, 1, 0), g2 = eci_gemm_time_s(&r, m, h, f, 1, 0);
    const double coll[2] = {3.0 * g1, 0.2 * g2}; /* a slow link (collective exposed), a fast one (hidden) */
    for (int c = 0; c < 2; c++) {
        eci_op_cost_t cost[4];
        memset(cost, 0, sizeof cost);
        cost[0].fwd_s = coll[c], cost[0].bwd_s = coll[c];
        cost[1].fwd_s = g1, cost[1].bwd_s = 2 * g1;
        cost[2].fwd_s = g2, cost[2].bwd_s = 2 * g2;
        cost[3].fwd_s = coll[c], cost[3].bwd_s = coll[c];
        eci_overlap_apply(ctx, &r, &wl, cost);
        /* ring exchange: fc1 in tp token chunks, the collective's excess over them */
        double fc1 = g1 * chunked(&r, m, 2 * f, h, tp, 0), p = coll[c] / (tp - 1);
        assert_rel(cost[1].fwd_s, fc1, 1e-12);
        assert_rel(cost[0].fwd_s + 1e-30, (tp - 1) * fmax(0, p - fc1 / tp) + 1e-30, 1e-9);
        /* pipeline: fc2 in num_splits output chunks on SMs - num_sm (the block's only reduce-scatter: proj's) */
        double splits = eci_const(ctx, EC_C_te_ub_num_splits), num_sm = eci_const(ctx, EC_C_te_ub_proj_fprop_num_sm);
        double slow = eci_const(ctx, EC_C_te_ub_set_sm_margin) > 0 ? r.sm_count / (r.sm_count - num_sm) : 1;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
