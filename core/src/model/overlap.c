/*
 * overlap.c: what a collective running beside other kernels leaves exposed, per op of a workload
 * whose ops compute.c has priced alone: a context-parallel ring's steps under the attention they
 * feed, Transformer Engine's tensor-parallel backward collectives under their GEMMs (and with
 * tp_comm_overlap its userbuffers' forward ones, chunked GEMMs on the SMs they leave), and
 * Megatron-Core's expert all-to-alls under another micro-batch's compute (moe_a2a_overlap).
 * Inputs: the workload's ops (model/workload.h), their costs and the rates' communication groups
 * (model/compute.h, model/comm.h); the slowdown of overlapped compute from models/constants.csv, TE's
 * userbuffers configuration of the run (tp_overlap_cfg) from models/tp_overlap.csv (catalog/tpoverlap.c).
 */
#include "model/compute.h"
#include "catalog/catalog.h"
#include "catalog/consts.h"

#include <math.h>
#include <stddef.h>

/* kernels=te with sequence parallelism: Transformer Engine's column-parallel linears
 * (LayerNormLinear) gather their input again in the backward for the weight gradient,
 * asynchronously under the input-gradient GEMM, and reduce-scatter the input gradient
 * asynchronously under the weight-gradient GEMM (TransformerEngine@7d576ed2
 * transformer_engine/pytorch/module/layernorm_linear.py L432-433, L547, L551-552, L639).  The
 * all-gather's backward is then what those two collectives take beyond the GEMMs they run under:
 * half of the backward of the linears that read the gathered tensor each (the GEMMs after it, up
 * to attention, the next collective or a GEMM of another input width). */
static void te_tp_backward_overlap(const eci_rates *r, const eci_workload *wl, eci_op_cost_t *cost)
{
    for (size_t i = 0; i < wl->n_ops; i++) {
        const eci_op *op = &wl->ops[i];
        if (op->kind != ECI_OP_COMM || op->group != ECI_GROUP_TP || op->fwd_coll != ECI_COLL_ALLGATHER ||
            op->bwd_coll != ECI_COLL_REDUCE_SCATTER || op->hidden)
            continue;
        double under = 0, k = -1;
        for (size_t j = i + 1; j < wl->n_ops; j++) {
            const eci_op *c = &wl->ops[j];
            if (c->kind == ECI_OP_COMM || c->kind == ECI_OP_ATTN)
                break;
            if (c->kind != ECI_OP_GEMM)
                continue;
            if (k >= 0 && c->k != k)
                break;
            k = c->k;
            under += cost[j].bwd_s;
        }
        if (k < 0)
            continue;
        double gather = eci_coll_s(r->comm, &r->groups[op->group], ECI_COLL_ALLGATHER, op->comm_bytes);
        double rs = cost[i].bwd_s - under / 2, ag = gather - under / 2;
        cost[i].bwd_s = (rs > 0 ? rs : 0) + (ag > 0 ? ag : 0);
    }
}

/* The GEMMs a tensor-parallel collective overlaps: from op i on in direction step (1: after, the
 * column-parallel linears reading an all-gather; -1: before, the row-parallel ones making a
 * reduce-scatter) up to attention, another collective or a GEMM of another width (k after, n
 * before).  Their indices into idx (at most max); returns how many. */
static size_t tp_gemms(const eci_workload *wl, size_t i, ptrdiff_t step, size_t *idx, size_t max)
{
    size_t n = 0;
    double width = -1;
    for (ptrdiff_t j = (ptrdiff_t)i + step; j >= 0 && j < (ptrdiff_t)wl->n_ops && n < max; j += step) {
        const eci_op *c = &wl->ops[j];
        if (c->kind == ECI_OP_COMM || c->kind == ECI_OP_ATTN)
            break;
        if (c->kind != ECI_OP_GEMM)
            continue;
        if (width >= 0 && (step > 0 ? c->k : c->n) != width)
            break;
        width = step > 0 ? c->k : c->n;
        idx[n++] = (size_t)j;
    }
    return n;
}

/* A GEMM's time split into `chunks` along m (tokens) or n (output features), over its time whole:
 * the smaller chunks' lower efficiency (eci_gemm_time_s on the chunk's shape). */
static double chunked_frac(const eci_rates *r, const eci_op *g, double chunks, int along_n)
{
    double whole = eci_gemm_time_s(r, g->m, g->n, g->k, g->batch, 0);
    double part = along_n ? eci_gemm_time_s(r, g->m, g->n / chunks, g->k, g->batch, 0)
                          : eci_gemm_time_s(r, g->m / chunks, g->n, g->k, g->batch, 0);
    return whole > 0 ? chunks * part / whole : 1.0;
}

/* The GEMM's time on the SMs its userbuffers communication leaves (set_sm_margin: TE's _math_sms =
 * SMs - num_sm, TransformerEngine@7d576ed2 transformer_engine/pytorch/csrc/comm_gemm_overlap.h L118):
 * x SMs / (SMs - num_sm); 1 without the margin. */
static double sm_slow(const eci_rates *r, const eci_ub_gemm *u)
{
    double sms = r->sm_count;
    return u->set_sm_margin && sms > u->num_sm ? sms / (sms - u->num_sm) : 1.0;
}

/* tp_comm_overlap: Transformer Engine's userbuffers overlap the forward's sequence-parallel
 * collectives with the GEMM that reads or makes them, and the row-parallel linears' backward
 * all-gather with their input-gradient GEMM (TransformerEngine@7d576ed2
 * transformer_engine/pytorch/module/base.py L83-93 and csrc/comm_gemm_overlap.h), each GEMM by the
 * method of the row's configuration (models/tp_overlap.csv; a block's first all-gather feeds
 * qkv_fprop, the next fc1_fprop; its first reduce-scatter comes from proj_fprop and proj_dgrad, the
 * next from fc2_fprop and fc2_dgrad):
 *  - ring_exchange: the GEMM runs in tp chunks of the tokens, each beside the copy-engine send of the
 *    next chunk (use_ce, no SMs taken but set_sm_margin's): g + (tp - 1) max(g, p), g one chunk's
 *    GEMM, p one of the tp - 1 exchange steps; the collective shows (tp - 1) max(0, p - g);
 *  - pipeline (reduce-scatters only: base.py L130-132): the GEMM in num_splits chunks of its output
 *    features on the SMs the reduce-scatter kernels leave (sm_slow), each chunk's reduce-scatter
 *    after it, the last exposed: (splits - 1) max(0, c - g) + c;
 *  - bulk: a collective beside a GEMM that does not need it (TE's dgrad/wgrad overlaps, priced by
 *    te_tp_backward_overlap); on these GEMMs, which read or make it, nothing hides: priced alone.
 * The GEMMs carry their chunked (and slowed) time; the collective what shows beyond it. */
static void te_tp_forward_overlap(const ec_ctx *ctx, const eci_rates *r, const eci_workload *wl,
                                  eci_op_cost_t *cost)
{
    const eci_tp_overlap *cfg = eci_tp_overlap_at(ctx, (int)r->tp_overlap - 1);
    double tp = r->groups[ECI_GROUP_TP].n;
    int block = -2, n_ag = 0, n_rs = 0;
    if (tp < 2 || cfg == NULL)
        return;
    for (size_t i = 0; i < wl->n_ops; i++) {
        const eci_op *op = &wl->ops[i];
        int ag = op->fwd_coll == ECI_COLL_ALLGATHER && op->bwd_coll == ECI_COLL_REDUCE_SCATTER;
        int rs = op->fwd_coll == ECI_COLL_REDUCE_SCATTER && op->bwd_coll == ECI_COLL_ALLGATHER;
        if (op->kind != ECI_OP_COMM || op->group != ECI_GROUP_TP || op->hidden || !(ag || rs))
            continue;
        if (op->block != block)
            block = op->block, n_ag = n_rs = 0;
        size_t idx[8], n = tp_gemms(wl, i, ag ? 1 : -1, idx, 8);
        if (n == 0)
            continue;
        const eci_ub_gemm *u = ag ? &cfg->gemm[n_ag++ > 0 ? ECI_UB_FC1_FPROP : ECI_UB_QKV_FPROP]
                                  : &cfg->gemm[n_rs > 0 ? ECI_UB_FC2_FPROP : ECI_UB_PROJ_FPROP];
        const eci_ub_gemm *d = rs ? &cfg->gemm[n_rs++ > 0 ? ECI_UB_FC2_DGRAD : ECI_UB_PROJ_DGRAD] : NULL;
        double chunks = u->method == ECI_UB_PIPELINE ? u->num_splits : tp, slow = sm_slow(r, u), g = 0;
        if (u->method != ECI_UB_BULK) {
            for (size_t t = 0; t < n; t++) {
                /* ring exchange: tp chunks of the tokens; pipeline: num_splits of the output features */
                cost[idx[t]].fwd_s *= chunked_frac(r, &wl->ops[idx[t]], chunks, u->method == ECI_UB_PIPELINE) * slow;
                g += cost[idx[t]].fwd_s / chunks;
            }
            double c = cost[i].fwd_s / (u->method == ECI_UB_PIPELINE ? chunks : tp - 1), f = c - g;
            cost[i].fwd_s = u->method == ECI_UB_PIPELINE ? (chunks - 1) * (f > 0 ? f : 0) + c
                                                         : (tp - 1) * (f > 0 ? f : 0);
        }
        if (d == NULL || d->method != ECI_UB_RING)
            continue;
        double dgrad = 0, dslow = sm_slow(r, d); /* proj_dgrad, fc2_dgrad: ring exchange */
        for (size_t t = 0; t < n; t++) {
            double half = cost[idx[t]].bwd_s / 2, fr = chunked_frac(r, &wl->ops[idx[t]], tp, 0) * dslow;
            cost[idx[t]].bwd_s += half * (fr - 1); /* the input gradient in tp token chunks */
            dgrad += half * fr / tp;
        }
        double p = cost[i].bwd_s / (tp - 1), b = p - dgrad;
        cost[i].bwd_s = (tp - 1) * (b > 0 ? b : 0);
    }
}

/* Megatron-Core's batch-level all-to-all overlap (overlap_moe_expert_parallel_comm): a micro-batch's
 * forward and the previous one's backward run layer by layer together, the communication on its own
 * stream (megatron/core/models/common/model_chunk_schedule_plan.py @core_v0.15.0 L173-236,
 * TransformerLayerSchedulePlan.run):
 *     comm:    combine bwd        | dispatch fwd, dispatch bwd | combine fwd
 *     compute: attention fwd      | mlp bwd, mlp fwd           | attention bwd
 * with "attention" everything before the dispatch (norms, attention, router) and "mlp" the experts
 * between dispatch and combine.  A layer pair takes max(Cb, Af) + max(Df + Db, Mb + Mf) + max(Cf, Ab):
 * what that hides of the four all-to-alls, on the share frac of micro-steps that pair (the pipeline's
 * warm-up and cool-down run alone), comes off their cost in proportion, less the slowdown of the
 * compute that runs beside it (overlap_compute_slowdown_frac, as under DDP's overlapped buckets). */
static void ep_a2a_overlap(const eci_workload *wl, double frac, double slowdown, eci_op_cost_t *cost)
{
    for (size_t b = 0; b < wl->n_blocks; b++) {
        const eci_block *blk = &wl->blocks[b];
        size_t d = blk->end, c = blk->end;
        for (size_t i = blk->begin; i < blk->end; i++) {
            const eci_op *op = &wl->ops[i];
            if (op->kind != ECI_OP_COMM || op->group != ECI_GROUP_EP || op->fwd_coll != ECI_COLL_ALLTOALL)
                continue;
            if (d == blk->end)
                d = i;
            else if (c == blk->end)
                c = i;
        }
        if (c == blk->end)
            continue;
        double af = 0, ab = 0, mf = 0, mb = 0;
        for (size_t i = blk->begin; i < c; i++) {
            if (i == d)
                continue;
            *(i < d ? &af : &mf) += cost[i].fwd_s;
            *(i < d ? &ab : &mb) += cost[i].bwd_s;
        }
        const eci_op_cost_t *D = &cost[d], *C = &cost[c];
        double comm = D->fwd_s + D->bwd_s + C->fwd_s + C->bwd_s;
        double paired = fmax(C->bwd_s, af) + fmax(D->fwd_s + D->bwd_s, mb + mf) + fmax(C->fwd_s, ab);
        double hidden = comm + af + ab + mf + mb - paired;
        if (comm <= 0 || hidden <= 0)
            continue;
        double keep = 1.0 - frac * (1.0 - slowdown) * hidden / comm;
        cost[d].fwd_s *= keep, cost[d].bwd_s *= keep, cost[c].fwd_s *= keep, cost[c].bwd_s *= keep;
    }
}

/* Transformer Engine's K/V ring of `hidden` = cp steps (op->ring_te, workload_blocks.c cp_ring): the
 * forward's all-gather is cp - 1 sends of one GPU's K/V (x each), each under one step's attention
 * (under / cp); the backward's cp sends are x (K/V), then x + d (K/V and dK/dV) cp - 2 times, then d
 * (the dK/dV, bwd_bytes, a peer-to-peer send of the K/V's size), each under one step. */
static void te_ring_exposed(const eci_rates *r, const eci_op *op, const eci_op_cost_t *under, eci_op_cost_t *c)
{
    double steps = op->hidden > 1 ? op->hidden : 2, fs = under->fwd_s / steps, bs = under->bwd_s / steps;
    double x = c->fwd_s / (steps - 1), d = 0;
    if (op->bwd_bytes > 0 && r->comm != NULL)
        d = eci_coll_s(r->comm, &r->groups[op->group], ECI_COLL_P2P, op->bwd_bytes);
    c->fwd_s = (steps - 1) * fmax(0, x - fs);
    c->bwd_s = fmax(0, x - bs) + (steps - 2) * fmax(0, x + d - bs) + fmax(0, d - bs);
}

/* What a collective overlapping the op before it leaves exposed.  A ring of `hidden` steps (PyTorch 2.6
 * experimental/_attention.py): K/V all-gathered, waited for at step 2: hidden by 1/steps of the op; the
 * backward passes fp32 dK/dV on after each step (ALL_TO_ALL) under the next, the last waited for.
 * op->ring_waited (the ring traced into a compiled graph): every collective waited for where it is
 * issued, nothing hidden: the all-gathers and all `hidden` dK/dV passes in full. */
void eci_ring_exposed(const eci_rates *r, const eci_op *op, const eci_op_cost_t *under, eci_op_cost_t *c)
{
    if (op->ring_te) {
        te_ring_exposed(r, op, under, c);
        return;
    }
    double steps = op->hidden > 1 ? op->hidden : 1, f = c->fwd_s - under->fwd_s / steps;
    double b = c->bwd_s - under->bwd_s / steps, pass = 0, over = 0;
    if (steps > 1 && op->bwd_bytes > 0 && r->comm != NULL) {
        pass = eci_coll_s(r->comm, &r->groups[op->group], ECI_COLL_P2P, op->bwd_bytes);
        over = pass - under->bwd_s / steps;
    }
    if (op->ring_waited) {
        c->bwd_s += steps * pass;
        return;
    }
    c->fwd_s = f > 0 ? f : 0;
    c->bwd_s = (b > 0 ? b : 0) + (steps - 1) * (over > 0 ? over : 0) + pass;
}

/* Adjust cost[] for the overlaps of wl's ops (after each op is priced alone). */
void eci_overlap_apply(const ec_ctx *ctx, const eci_rates *r, const eci_workload *wl, eci_op_cost_t *cost)
{
    for (size_t i = 1; i < wl->n_ops; i++)
        if (wl->ops[i].hidden) /* overlapping the op before it: only the excess shows */
            eci_ring_exposed(r, &wl->ops[i], &cost[i - 1], &cost[i]);
    if (r->te > 0 && r->comm != NULL)
        te_tp_backward_overlap(r, wl, cost);
    if (r->tp_overlap > 0 && r->comm != NULL)
        te_tp_forward_overlap(ctx, r, wl, cost);
    if (r->ep_overlap_frac > 0 && r->comm != NULL)
        ep_a2a_overlap(wl, r->ep_overlap_frac, eci_const(ctx, EC_C_overlap_compute_slowdown_frac), cost);
}
