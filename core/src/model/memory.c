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
#include "model/memory.h"
#include "catalog/consts.h"
#include "model/optim.h"

#include <string.h>

/* Bytes per parameter of weights, gradients and optimizer states (docs/model.md, 2.1 table;
 * the states from optim.c's catalogue: Adafactor's factored statistics depend on the shapes,
 * eci_optim_state_bytes, and count 0 here). */
void eci_memory_param_bytes(const ec_ctx *ctx, int precision, int optimizer, double *w, double *g, double *opt)
{
    int pure16 = precision == EC_PREC_BF16 || precision == EC_PREC_FP16;
    double p = pure16 ? 2.0 : 4.0; /* parameter dtype; grads and most states follow it */
    eci_optim o;
    eci_optim_get(ctx, optimizer, &o);
    *w = p;
    *g = p;
    *opt = o.factored ? 0 : o.state_bytes_per_param * (o.states_follow_params ? p / 4.0 : 1.0);
}

/* The largest tensor an op of the head writes (the logits of a vocabulary head): at the
 * start of backward its gradient and its input's gradient are alive beside everything. */
static double head_out_bytes(const eci_workload *wl)
{
    size_t from = wl->n_blocks > 0 ? wl->blocks[wl->n_blocks - 1].end : 0;
    double most = 0;
    for (size_t i = from; i < wl->n_ops; i++)
        if (wl->ops[i].out_bytes > most)
            most = wl->ops[i].out_bytes;
    return most;
}

/* What the end of backward adds beside the gradients: the token table's dense gradient
 * (embedding_dense_backward allocates vocab x width before it joins .grad) and, when a head
 * reuses the table (tied), the sum of the two gradients. */
static double table_grad_bytes(const eci_workload *wl, double grad_bytes)
{
    double tied = wl->tied_head ? 1 : 0; /* the table and the tie: workload.c sums them up from the ops */
    return wl->table_params * grad_bytes * (1.0 + tied);
}

/* The three readings of the peak (README "Memory") and whether it fits, from the bytes the
 * tensors hold at the peak (`allocated`, in the allocator's blocks):
 *   reserved = allocated x (1 + slack): the caching allocator's segments, with the
 *              rounding and fragmentation of its pools (more with shapes that change every
 *              step, less with expandable_segments, which map 2 MiB pages as segments grow);
 *   nvml     = reserved + CUDA context and loaded kernels (+ NCCL) + paged optimizer states
 *              (unified memory resident on the GPU): what nvidia-smi shows;
 *   fits     = allocated x (1 + allocator_frac_min) + context <= capacity: on a failed
 *              cudaMalloc the allocator frees every cached block and retries, so only the
 *              rounding of live blocks and splits of live segments remain; paged states
 *              can be evicted to the host.
 * m->context_bytes is set; the other parts are the caller's. */
static void memory_readings(const ec_ctx *ctx, const eci_mem_in *in, double allocated, double paged, ec_memory *m)
{
    double frac = in->expandable_segments ? eci_const(ctx, EC_C_allocator_frac_expandable)
                  : in->dynamic_shapes     ? eci_const(ctx, EC_C_allocator_frac_dynamic)
                                           : eci_const(ctx, EC_C_allocator_frac_static);
    m->allocator_bytes = allocated * frac * in->allocator_scale;
    m->allocated_bytes = allocated;
    m->reserved_bytes = allocated + m->allocator_bytes;
    m->nvml_bytes = m->reserved_bytes + m->context_bytes + paged;
    double must = allocated * (1.0 + eci_const(ctx, EC_C_allocator_frac_min)) + m->context_bytes;
    m->fits = must <= m->capacity_bytes;
    if (m->fits && m->nvml_bytes > m->capacity_bytes) /* the cache is freed before it overflows */
        m->nvml_bytes = m->capacity_bytes;
    m->peak_bytes = m->nvml_bytes;
}

static double shards(double s) { return s > 1 ? s : 1; }

/* Bytes of the trained parameters at `bytes` each over `s` ranks: a routed expert is held by
 * only s / ep of them (expert parallelism splits the experts, sharding the rest). */
double eci_memory_shard_share(const eci_workload *wl, double bytes, double s, int ep)
{
    double e = wl->expert_params, other = wl->trainable_params - e, es = shards(s / (ep > 1 ? ep : 1));
    return (other / shards(s) + e / es) * bytes;
}

/* Weights, gradients and optimizer states of this GPU's share (sharded data parallelism),
 * and the pinned host memory offload moves them to. */
static void model_states(const eci_mem_in *in, double w, double g, double o, ec_memory *m, double *grads,
                         double *host)
{
    const eci_workload *wl = in->wl;
    double params = wl->trainable_params, ws = shards(in->weight_shards), os = shards(in->opt_shards);
    double frozen = wl->params - params, master = 0;
    if (in->zero && w == 4.0) { /* DeepSpeed AMP: 16-bit weights and gradients, fp32 master with the states */
        w = 2.0;
        g = 2.0;
        master = 4.0;
    }
    m->weights_bytes = eci_memory_shard_share(wl, w, ws, in->ep) +
                       frozen * (in->frozen_elem_bytes > 0 ? in->frozen_elem_bytes : w) / ws;
    m->optimizer_bytes = eci_memory_shard_share(wl, o + master, os, in->ep);
    *grads = eci_memory_shard_share(wl, g, in->grad_shards, in->ep);
    *host = 0;
    if (in->opt_on_host) { /* the states, the master copy and the fp32 gradients the CPU updates from */
        *host += eci_memory_shard_share(wl, o + master + 4.0, os, in->ep);
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
    eci_optim opt;
    eci_optim_get(ctx, in->optimizer, &opt);
    eci_memory_param_bytes(ctx, in->precision, in->optimizer, &w, &g, &o);
    int replica = in->dp_role == 2;
    double grads;
    /* the states from optim.c's catalogue, per trained parameter (Adafactor's factored
     * statistics from the shapes, on average) */
    double per_param = wl->trainable_params > 0 ? 1.0 / wl->trainable_params : 0;
    o = eci_optim_state_bytes(ctx, &opt, wl, in->precision) * per_param;
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
                                                 : eci_memory_shard_share(wl, eci_optim_temp_bytes(&opt, wl, in->precision) *
                                                                                  per_param,
                                                                          in->opt_shards, in->ep);
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

    /* Backward: at its start every activation is alive with the gradient of the head's
     * output and of its input (the largest transient); then activations are freed while
     * gradients appear, and at its end the token table's gradient is made.  With gradient
     * accumulation the gradients of the earlier micro-steps are alive through the later ones
     * (and across steps where zero_grad keeps zeroed gradients): activations and gradients
     * add up. */
    double head = 2.0 * head_out_bytes(wl);
    double table = wl->trainable_params < wl->params ? 0 : table_grad_bytes(wl, g); /* LoRA: a frozen table */
    double late = head > table ? head : table;
    int keep = in->grad_accum > 1 || in->keep_grads;
    double core = keep ? acts + grads + late
                                     : (acts + head > grads + table ? acts + head : grads + table);
    double bwd_peak = m->cast_cache_bytes + core + m->workspace_bytes;
    double opt_peak = replica ? 0 : grads + opt_temp;
    double transient = bwd_peak > opt_peak ? bwd_peak : opt_peak;
    /* paged 8-bit states live in CUDA unified memory, outside PyTorch's allocator */
    double paged = opt.paged ? m->optimizer_bytes : 0;
    double allocated = m->weights_bytes + m->optimizer_bytes - paged + buckets + transient;

    /* Report the parts as they stand at the peak: whichever transient phase is larger. */
    if (opt_peak >= bwd_peak) {
        m->activations_bytes = 0;
        m->cast_cache_bytes = 0;
        m->workspace_bytes = 0;
        m->optimizer_bytes += opt_temp;
    } else if (keep) {
        m->workspace_bytes += late; /* both: the accumulated gradients beside the activations */
    } else if (acts + head > grads + table) {
        m->grads_bytes = 0;
        m->workspace_bytes += head;
    } else {
        m->activations_bytes = 0;
        m->workspace_bytes += table;
    }
    m->grads_bytes += buckets;
    m->capacity_bytes = in->capacity_bytes;
    memory_readings(ctx, in, allocated, paged, m);
}
