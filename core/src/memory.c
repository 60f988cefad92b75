/*
 * memory.c: peak GPU memory of a training step (docs/DESIGN.md 3.4, modeling.md 2 and 10.2).
 *   persistent = weights + optimizer states (bytes per parameter by precision and optimizer)
 *                + DDP's gradient buckets (a copy of every gradient, from construction on)
 *   peak = context + persistent + max(backward peak, optimizer-step peak) + allocator slack
 *   backward peak  = cast cache + max(activations, gradients) + workspace
 *                    (activations are freed layer by layer while gradients appear, so the
 *                    sum A(1-t) + G t peaks at one end)
 *   optimizer peak = gradients + step temporaries (foreach AdamW's denom)
 * Activations are what the op list keeps for backward (workload.c); checkpointing keeps each
 * layer's input plus one layer's activations.  Constants come from constants.csv.
 * DataParallel (modeling.md 6.1): GPU 0 holds the optimizer, the gathered outputs and, at
 * the reduce, its replica's gradients beside the reduced ones; the other GPUs hold a
 * replica (weights broadcast every step), its gradients and activations, no optimizer.
 */
#include "memory.h"
#include "consts.h"

#include <string.h>

/* Bytes per parameter of weights, gradients and optimizer states (docs/model.md, 2.1 table). */
void eci_memory_param_bytes(int precision, int optimizer, double *w, double *g, double *opt)
{
    int pure16 = precision == EC_PREC_BF16 || precision == EC_PREC_FP16;
    double p = pure16 ? 2.0 : 4.0; /* parameter dtype; grads and states follow it */
    *w = p;
    *g = p;
    switch (optimizer) {
    case EC_OPT_SGD:
        *opt = p; /* momentum buffer */
        break;
    default:      /* Adam, AdamW (all implementations) and LAMB: exp_avg and exp_avg_sq */
        *opt = 2.0 * p;
        break;
    }
}

static double opt_temp_bytes_per_param(int optimizer, double param_bytes)
{
    /* foreach AdamW materialises denom = sqrt(v) (one parameter-sized tensor); the fused
     * kernel and SGD do not (modeling.md 2.1, [R38]). */
    if (optimizer == EC_OPT_ADAM || optimizer == EC_OPT_ADAMW || optimizer == EC_OPT_ADAMW_FOREACH)
        return param_bytes;
    return 0;
}

static double shards(double s) { return s > 1 ? s : 1; }

/* Weights, gradients and optimizer states of this GPU's share (sharded data parallelism),
 * and the pinned host memory offload moves them to. */
static void model_states(const eci_mem_in *in, double w, double g, double o, ec_memory *m, double *grads,
                         double *host)
{
    double params = in->wl->trainable_params, ws = shards(in->weight_shards), os = shards(in->opt_shards);
    double frozen = in->wl->params - params, master = 0;
    if (in->zero && w == 4.0) { /* DeepSpeed AMP: 16-bit weights and gradients, fp32 master with the states */
        w = 2.0;
        g = 2.0;
        master = 4.0;
    }
    m->weights_bytes = (params * w + frozen * (in->frozen_elem_bytes > 0 ? in->frozen_elem_bytes : w)) / ws;
    m->optimizer_bytes = params * (o + master) / os;
    *grads = params * g / shards(in->grad_shards);
    *host = 0;
    if (in->opt_on_host) { /* the states, the master copy and the fp32 gradients the CPU updates from */
        *host += params * (o + master + 4.0) / os;
        m->optimizer_bytes = 0;
    }
    if (in->weights_on_host) {
        *host += m->weights_bytes;
        m->weights_bytes = 0;
    }
    m->weights_bytes += in->gathered_bytes;
}

void eci_memory_estimate(const ec_ctx *ctx, eci_mem_in *in, ec_memory *m)
{
    const eci_workload *wl = in->wl;
    memset(m, 0, sizeof *m);
    double w, g, o;
    eci_memory_param_bytes(in->precision, in->optimizer, &w, &g, &o);
    double params = wl->trainable_params;
    int replica = in->dp_role == 2;
    double grads;
    model_states(in, w, g, o, m, &grads, &in->host_bytes);
    if (replica)
        m->optimizer_bytes = 0;
    /* DDP's Reducer allocates its buckets, a flat copy of every gradient, when it is built
     * and keeps them, so they sit beside the activations as well as beside the optimizer
     * step.  gradient_as_bucket_view=True makes the gradients views into the buckets: "the
     * saved memory size will be equal to the total gradients size" (DistributedDataParallel
     * docstring).  DataParallel's GPU 0 holds its replica's gradients and the reduced sum
     * at once, only after backward. */
    double buckets = in->ddp_bucket_copy ? grads : 0;
    if (in->dp_role == 1)
        grads *= 2.0;
    double opt_temp = replica || in->opt_on_host ? 0
                                                 : params * opt_temp_bytes_per_param(in->optimizer, w) /
                                                       shards(in->opt_shards);
    m->grads_bytes = grads;
    int amp = in->precision == EC_PREC_AMP_FP16 || in->precision == EC_PREC_AMP_BF16 ||
              in->precision == EC_PREC_AMP_FP8;
    m->cast_cache_bytes = amp ? wl->matmul_params * 2.0 : 0;

    /* Activations: a block's ops repeat reps times; the rest (embeddings, head) once. */
    double acts = eci_workload_saved_bytes(wl, in->checkpointing, in->act_copies > 0 ? in->act_copies : 1.0);
    m->activations_bytes = acts;
    m->workspace_bytes = eci_const(ctx, EC_C_cublas_workspace_bytes) + in->extra_workspace_bytes;
    m->context_bytes = eci_const(ctx, EC_C_cuda_context_bytes) +
                       (in->num_gpus > 1 ? eci_const(ctx, EC_C_nccl_context_bytes) : 0);

    double bwd_peak = m->cast_cache_bytes + (acts > grads ? acts : grads) + m->workspace_bytes;
    double opt_peak = replica ? 0 : grads + opt_temp;
    double transient = bwd_peak > opt_peak ? bwd_peak : opt_peak;
    double allocated = m->weights_bytes + m->optimizer_bytes + buckets + transient;
    double frac = in->dynamic_shapes ? eci_const(ctx, EC_C_allocator_frac_dynamic)
                                     : eci_const(ctx, EC_C_allocator_frac_static);
    m->allocator_bytes = allocated * frac * in->allocator_scale;

    /* Report the parts as they stand at the peak: whichever transient phase is larger. */
    if (opt_peak >= bwd_peak) {
        m->activations_bytes = 0;
        m->cast_cache_bytes = 0;
        m->workspace_bytes = 0;
        m->optimizer_bytes += opt_temp;
    } else if (acts > grads) {
        m->grads_bytes = 0;
    } else {
        m->activations_bytes = 0;
    }
    m->grads_bytes += buckets;
    m->peak_bytes = m->context_bytes + allocated + m->allocator_bytes;
    m->capacity_bytes = in->capacity_bytes;
    m->fits = m->peak_bytes <= m->capacity_bytes;
}
