/*
 * stages.c: pipeline parallelism (docs/DESIGN.md 3.4): the stages of a pp layout priced one
 * by one by the step model (step.c) and joined by the pipeline's schedule, and the stages
 * described (ec_predict_stages).  The layers come from the network (net.c), the links of the
 * pipeline's neighbours from setup.c.
 */
#include "model/net.h"
#include "sim/step.h"
#include "sim/steprec.h"

#include <string.h>

/* ---- pipeline parallelism ----------------------------------------------------------------
 * Megatron splits the repeated layers evenly over pp stages (the embeddings go with the first,
 * the head with the last: their imbalance is priced, not assumed away), or with pp_split the
 * embedding and the loss counted as a layer each (layout.c eci_pp_stage_range).  Each distinct stage is
 * priced alone by eci_step_model: its steady micro-batch u_s and what follows the last
 * micro-batch (optimizer, gradient reduction).  Then the schedule: m = grad_accum micro-batches
 * through the stages take m x max u + (sum u - max u) / v, the fill and drain shortened by v
 * model chunks per stage (interleaved 1F1B; GPipe and 1F1B have the same bubble, Narayanan et
 * al. 2021), each micro-batch's activation and its gradient crossing every chunk boundary (p2p).
 * GPipe and 1F1B wait for each exchange; the interleaved schedule posts it asynchronously and
 * computes another chunk meanwhile (Megatron's overlap_p2p_comm, on by default for it: Megatron-LM
 * megatron/training/arguments.py --no-overlap-p2p-communication, forced off for the other schedules;
 * NeMo-Framework-Launcher conf/training/llama/llama2_70b.yaml@0446d2c0 overlap_p2p_comm true), so
 * only what a crossing takes beyond one chunk's forward is exposed.  1F1B holds pp - s
 * micro-batches' activations on stage s, GPipe all m. */
typedef struct stage_key {
    int first, last, count, block; /* block: the one block all its layers are in, -1: spans blocks */
} stage_key;

/* The top-level block holding layer `layer` of the pipeline's order. */
static int block_of(const eci_net *net, int layer)
{
    int off = 0, b = 0;
    for (size_t i = 0; i < net->n_layers; i++) {
        if (net->layers[i].kind != EC_LAYER_REPEAT)
            continue;
        off += net->layers[i].u.repeat.times;
        if (layer < off)
            return b;
        b++;
        i += (size_t)net->layers[i].u.repeat.layers;
    }
    return b;
}

static double stage_in_flight(const ec_config *cfg, int s, int pp)
{
    double m = cfg->grad_accum, v = cfg->pp_chunks, n;
    if (cfg->pp_schedule == EC_PP_GPIPE)
        n = m;
    else if (cfg->pp_schedule == EC_PP_INTERLEAVED) /* warm-up chunk-micro-batches, each 1/v of the stage */
        n = ((pp - s - 1) * 2.0 + (v - 1) * pp + 1) / v;
    else
        n = pp - s;
    return n < m ? n : m;
}

/* The pipeline's step; stages != NULL (pp entries): every stage priced on its own and described. */
static int pipeline_model_stages(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib,
                                 double seq, double gpu_scale, ec_result *res, double *host_s, ec_stage *stages)
{
    int pp = rp->pp;
    if (pp <= 1 || rp->net == NULL)
        return eci_step_model(ctx, cfg, rp, calib, seq, gpu_scale, NULL, res, host_s);
    int L = eci_net_pipeline_layers(rp->net), m = cfg->grad_accum, rc;
    layout_comm lc; /* every stage's links: worked out once */
    if ((rc = eci_setup_layout_comm(ctx, cfg, rp, calib, &lc)) != EC_OK)
        return rc;
    double v = cfg->pp_schedule == EC_PP_INTERLEAVED ? cfg->pp_chunks : 1;
    eci_resolved st = *rp;
    st.micro_wanted = 1; /* u below */
    ec_result one, crit, worst;
    stage_key prev = {-1, -1, -1, -1};
    double u = 0, tail = 0, u_sum = 0, u_max = -1, tail_max = 0, flop = 0, hw_flop = 0, p2p = 0, crit_host = 0,
           crit_tail = 0, x = 0, crit_x = 0; /* x: the part of one crossing the stage waits for */
    memset(&worst, 0, sizeof worst);
    for (int s = 0; s < pp; s++) {
        int lo, hi;
        eci_pp_stage_range(cfg, L, pp, s, &lo, &hi);
        int b0 = block_of(rp->net, lo), b1 = block_of(rp->net, hi - 1);
        stage_key k = {s == 0, s == pp - 1, hi - lo, b0 == b1 ? b0 : -1};
        int same = stages == NULL && k.block >= 0 && memcmp(&k, &prev, sizeof k) == 0;
        if (!same) { /* middle stages of one block are alike: priced once (with the most in flight) */
            st.stage_lo = lo;
            st.stage_hi = hi;
            st.in_flight = stage_in_flight(cfg, s, pp);
            double stage_host;
            if ((rc = eci_step_model(ctx, cfg, &st, calib, seq, gpu_scale, &lc, &one, &stage_host)) != EC_OK)
                return rc;
            if (s == 0) /* the boundary's activation: one p2p send to the next stage */
                p2p = eci_coll_s(&lc.comm, &lc.pp, ECI_COLL_P2P, st.stage_input_bytes);
            double fb = one.breakdown.forward_s + one.breakdown.backward_s;
            double f = fb > 0 ? st.micro_s * one.breakdown.forward_s / fb : st.micro_s / 3;
            x = p2p;
            if (v > 1) /* interleaved: the exchange runs under the next chunk's forward */
                x = p2p > f / v ? p2p - f / v : 0;
            u = st.micro_s + 2.0 * v * x;
            tail = one.step_s - m * st.micro_s;
            if (stages != NULL)
                stages[s] = (ec_stage){.first_layer = lo, .layers = hi - lo, .micro_s = st.micro_s,
                                       .in_flight = st.in_flight > 0 ? st.in_flight : 1, .memory = one.memory};
            if (ctx->step_rec != NULL) /* a trace: the stage's micro-batch, forward and backward as it splits them */
                eci_rec_stage(ctx->step_rec, s, lo, hi - lo, f, st.micro_s - f, v * x, tail);
            if (one.memory.peak_bytes > worst.memory.peak_bytes)
                worst = one;
            if (u > u_max) {
                u_max = u;
                crit = one;
                crit_host = stage_host;
                crit_tail = tail;
                crit_x = x;
            }
        }
        if (same && ctx->step_rec != NULL && s > 0 && s < ECI_REC_MAX_STAGES) { /* as the stage before */
            eci_step_rec *rec = ctx->step_rec;
            eci_rec_stage(rec, s, lo, hi - lo, rec->stage_fwd_s[s - 1], rec->stage_bwd_s[s - 1],
                          rec->stage_p2p_s[s - 1], rec->stage_tail_s[s - 1]);
        }
        prev = k;
        u_sum += u;
        tail_max = tail > tail_max ? tail : tail_max;
        flop += one.flop_per_step;
        hw_flop += one.mfu_frac > 0 ? one.flop_per_step * one.hfu_frac / one.mfu_frac : one.flop_per_step;
    }
    double step = m * u_max + (u_sum - u_max) / v + tail_max;
    if (ctx->step_rec != NULL)
        eci_rec_stages(ctx->step_rec, pp, m, v, u_max, step, tail_max);
    *res = crit;
    *host_s = crit_host;
    res->memory = worst.memory;
    res->host_pinned_bytes = worst.host_pinned_bytes;
    res->other_gpu_peak_bytes = worst.memory.peak_bytes;
    res->comm.pp_p2p_s = 2.0 * v * crit_x * m;
    double extra = step - (m * (u_max - 2.0 * v * crit_x) + crit_tail); /* beyond the critical stage alone */
    res->comm.pp_bubble_s = extra - res->comm.pp_p2p_s > 0 ? extra - res->comm.pp_p2p_s : 0;
    res->breakdown.comm_s += extra;
    res->step_s = step;
    res->samples_per_s = (double)cfg->batch_per_gpu * m * rp->dp / step;
    res->tokens_per_s = rp->tokens * m * rp->dp / step;
    res->flop_per_step = flop / pp; /* per GPU: the stages' mean */
    double peak = crit.mfu_frac > 0 ? crit.flop_per_step / (crit.mfu_frac * crit.step_s) : 0;
    res->mfu_frac = peak > 0 ? res->flop_per_step / (step * peak) : 0;
    res->hfu_frac = peak > 0 ? hw_flop / pp / (step * peak) : 0; /* the stages' recompute, summed */
    if (res->hfu_frac < res->mfu_frac) /* the same FLOPs summed in another order: never below */
        res->hfu_frac = res->mfu_frac;
    res->gpu_util_frac = res->gpu_busy_s / step > 1.0 ? 1.0 : res->gpu_busy_s / step;
    rp->input_bytes = st.input_bytes;
    rp->tokens = st.tokens;
    return EC_OK;
}

int eci_stages_model(ec_ctx *ctx, const ec_config *cfg, eci_resolved *rp, const eci_params *calib, double seq,
                     double gpu_scale, ec_result *res, double *host_s)
{
    return pipeline_model_stages(ctx, cfg, rp, calib, seq, gpu_scale, res, host_s, NULL);
}

int ec_predict_stages(ec_ctx *ctx, const ec_config *cfg, ec_stage *out, size_t cap, size_t *n)
{
    if (ctx == NULL || cfg == NULL || n == NULL || (out == NULL && cap > 0))
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_predict_stages: NULL argument") : EC_EMISUSE;
    *n = 0;
    eci_resolved r;
    eci_params calib;
    int rc = eci_setup_resolve(ctx, cfg, &r, &calib);
    if (rc != EC_OK)
        return rc;
    if (r.net == NULL)
        return eci_error(ctx, EC_EINVAL, "ec_predict_stages: gpu_step_s without a model has no stages");
    size_t stages = r.pp > 1 ? (size_t)r.pp : 1;
    if (cap < stages)
        return eci_error(ctx, EC_EINVAL, "ec_predict_stages: %zu stages (pp) do not fit in %zu entries", stages, cap);
    ec_result res;
    double host_s;
    if (r.pp <= 1) {
        r.micro_wanted = 1;
        if ((rc = eci_step_model(ctx, cfg, &r, &calib, r.seq, 1.0, NULL, &res, &host_s)) != EC_OK)
            return rc;
        out[0] = (ec_stage){.first_layer = 0, .layers = eci_net_pipeline_layers(r.net), .micro_s = r.micro_s,
                            .in_flight = 1, .memory = res.memory};
    } else if ((rc = pipeline_model_stages(ctx, cfg, &r, &calib, r.seq, 1.0, &res, &host_s, out)) != EC_OK) {
        return rc;
    }
    *n = stages;
    return EC_OK;
}

