/*
 * memory.c: peak GPU memory of a training step (docs/DESIGN.md 3.4, modeling.md 2 and 10.2).
 *   persistent = weights + optimizer states (bytes per parameter by precision and optimizer)
 *                + DDP's gradient buckets (a copy of every gradient, from construction on)
 *   peak = context + persistent + max(backward peak, optimizer-step peak) + allocator slack
 *   backward peak  = cast cache + max(activations + loss gradients, gradients + table's) + workspace
 *                    (activations are freed layer by layer while gradients appear, so the
 *                    sum A(1-t) + G t peaks at one end); the loss's gradients are fp32 under
 *                    autocast (workload_build.c), one chunk's with a chunked loss
 *   optimizer peak = gradients + step temporaries (foreach AdamW's denom)
 * The moment that holds the peak is reported (ec_peak_phase), and whether it fits is decided
 * with a headroom kept free (docs/memory.md).
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

/* The largest tensor an op of the head writes (the logits of a vocabulary head), the cross
 * entropy's apart (loss_transient_bytes): at the start of backward its gradient and its
 * input's gradient are alive beside everything. */
static double head_out_bytes(const eci_workload *wl)
{
    size_t from = wl->n_blocks > 0 ? wl->blocks[wl->n_blocks - 1].end : 0;
    double most = 0;
    for (size_t i = from; i < wl->n_ops; i++)
        if (!wl->ops[i].loss && !wl->ops[i].linear_bias && wl->ops[i].out_bytes > most)
            most = wl->ops[i].out_bytes;
    return most;
}

/* What the ops after the last repeated block keep (the final norm, the head, the loss); 0 for a
 * network without repeated blocks. */
static double head_saved_bytes(const eci_workload *wl)
{
    size_t from = wl->n_blocks > 0 ? wl->blocks[wl->n_blocks - 1].end : wl->n_ops;
    double saved = 0;
    for (size_t i = from; i < wl->n_ops; i++)
        if (wl->ops[i].block < 0)
            saved += wl->ops[i].saved_bytes * wl->ops[i].count;
    return saved;
}

/* What the loss holds at the start of backward beside the saved activations: its backward makes
 * the gradient of the log-probabilities and then of the logits, both at the loss's width (fp32
 * under autocast), one chunk at a time with a chunked loss (torchtune's CEWithChunkedOutputLoss);
 * and the logits the model returned, when the loop still holds its outputs (a plain loop's
 * `out = model(**batch); out.loss.backward()`; HF's Trainer drops them in compute_loss). */
static double loss_transient_bytes(const eci_mem_in *in)
{
    const eci_workload *wl = in->wl;
    double chunks = in->loss_chunks > 1 ? in->loss_chunks : 1;
    return 2.0 * wl->loss_bytes / chunks + (in->outputs_held ? wl->output_bytes : 0);
}

/* The CUDA context and the kernels loaded into it by PyTorch release (constants.csv): before
 * 1.13 every kernel of the binary was loaded at start; from 2.0 PyTorch sets
 * CUDA_MODULE_LOADING=LAZY and kernels load on first use. */
static double context_bytes(const ec_ctx *ctx, int torch_release)
{
    if (torch_release > 0 && torch_release < eci_const(ctx, EC_C_cuda_context_old_until_version))
        return eci_const(ctx, EC_C_cuda_context_old_bytes);
    if (torch_release > 0 && torch_release < eci_const(ctx, EC_C_cuda_context_eager_until_version))
        return eci_const(ctx, EC_C_cuda_context_eager_bytes);
    return eci_const(ctx, EC_C_cuda_context_bytes);
}

/* Blocks the caching allocator keeps from the convolutions' temporaries (cuDNN's workspace, and
 * the NHWC copies of NCHW tensors on tensor cores): they are made and freed in the forward and
 * backward of the largest convolutions, away from the peak, and stay in the cache, so they add
 * to reserved and nvidia-smi, not to what must be allocated (a failed cudaMalloc frees them,
 * and PyTorch then falls back to an algorithm with less workspace). */
static double conv_cache_bytes(const ec_ctx *ctx, const eci_mem_in *in)
{
    const eci_workload *wl = in->wl;
    return eci_const(ctx, EC_C_cudnn_workspace_io_frac) * wl->conv_io_bytes +
           (in->conv_transposes ? wl->conv_layout_bytes : 0);
}

/* What the end of backward adds beside the gradients: the token table's dense gradient
 * (embedding_dense_backward allocates vocab x width before it joins .grad) and, when a head
 * reuses the table (tied), the sum of the two gradients. */
static double table_grad_bytes(const eci_workload *wl, double grad_bytes)
{
    double tied = wl->tied_head ? 1 : 0; /* the table and the tie: workload.c sums them up from the ops */
    return wl->table_params * grad_bytes * (1.0 + tied);
}

/* The readings of the peak (docs/memory.md) and whether it fits, from the bytes the tensors
 * hold at the peak (`allocated`, in the allocator's blocks):
 *   needed   = allocated x (1 + allocator_frac_min) + context: on a failed cudaMalloc the
 *              allocator frees every cached block and retries, so only the rounding of live
 *              blocks and splits of live segments remain; paged states can be evicted;
 *   reserved = allocated x (1 + slack) + the convolutions' cached temporaries: the caching
 *              allocator's segments, with the rounding and fragmentation of its pools (more
 *              with shapes that change every step, less with expandable_segments); when the
 *              step can run it is at most what the context leaves, since the allocator frees
 *              its cache before it fails;
 *   nvml     = reserved + CUDA context and loaded kernels (+ NCCL) + paged optimizer states
 *              (unified memory resident on the GPU, evicted first): what nvidia-smi shows;
 *   fits     = needed + headroom <= capacity, the headroom by default the usual slack beyond
 *              allocator_frac_min (a step that fits then never needs the free-and-retry,
 *              which stalls every step and fails on fragmentation) plus memory_headroom_frac
 *              of needed (the memory model's own error); at_edge: it fits only without it.
 * m->context_bytes is set; the other parts are the caller's. */
static void memory_readings(const ec_ctx *ctx, const eci_mem_in *in, double allocated, double paged, ec_memory *m)
{
    double frac = in->expandable_segments ? eci_const(ctx, EC_C_allocator_frac_expandable)
                  : in->dynamic_shapes     ? eci_const(ctx, EC_C_allocator_frac_dynamic)
                                           : eci_const(ctx, EC_C_allocator_frac_static);
    double least = allocated * (1.0 + eci_const(ctx, EC_C_allocator_frac_min));
    double usual = allocated * (1.0 + frac * in->allocator_scale) + conv_cache_bytes(ctx, in);
    if (usual < least)
        usual = least;
    m->allocated_bytes = allocated;
    m->needed_bytes = least + m->context_bytes;
    m->headroom_bytes = in->headroom_bytes >= 0 ? in->headroom_bytes
                                                : usual - least + eci_const(ctx, EC_C_memory_headroom_frac) * m->needed_bytes;
    int runs = m->needed_bytes <= m->capacity_bytes;
    m->fits = m->needed_bytes + m->headroom_bytes <= m->capacity_bytes;
    m->at_edge = runs && !m->fits;
    double reserved = usual;
    if (runs && reserved + m->context_bytes > m->capacity_bytes) /* the cache is freed before it overflows */
        reserved = m->capacity_bytes - m->context_bytes;
    double room = m->capacity_bytes - m->context_bytes - reserved; /* paged states are evicted first */
    if (runs && paged > room)
        paged = room;
    m->reserved_bytes = reserved;
    m->allocator_bytes = reserved - allocated;
    m->nvml_bytes = reserved + m->context_bytes + paged;
    m->peak_bytes = m->nvml_bytes;
}

static double shards(double s) { return s > 1 ? s : 1; }

/* Bytes of the trained parameters at `bytes` each over `s` ranks: a routed expert's state is
 * sharded over s / split of them (split = ep x etp / tp, eci_expert_split: the expert data-
 * parallel group of Megatron-Core's expert layout); unsharded state (s = 1) stays whole. */
double eci_memory_shard_share(const eci_workload *wl, double bytes, double s, double split)
{
    double e = wl->expert_params, other = wl->trainable_params - e;
    double es = s > 1 ? shards(s / (split > 0 ? split : 1)) : 1;
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
    } else if ((in->zero || in->master_weights) && w == 2.0) { /* a pure 16-bit model: the fp32 master (of the
                                        * shard) with the states (apex DistributedFusedLAMB, optim.c; amp O2) */
        master = 4.0;
    }
    double frozen_w = in->frozen_elem_bytes > 0 ? in->frozen_elem_bytes : w;
    m->weights_bytes = eci_memory_shard_share(wl, w, ws, in->expert_split) + frozen * frozen_w / ws;
    if (in->fp8_params) /* TE's FP8 parameters: a byte for each FP8 GEMM's weight, trained or frozen
                         * (a quantized base stays as it is stored) */
        m->weights_bytes -= (wl->fp8_trained_params * (w > 1 ? w - 1 : 0) +
                             wl->fp8_frozen_params * (frozen_w > 1 ? frozen_w - 1 : 0)) / ws;
    m->optimizer_bytes = eci_memory_shard_share(wl, o + master, os, in->expert_split);
    /* the gradients alive between micro-steps: sharded, or whole under FSDP's no_sync (its docstring: "FSDP
     * will accumulate the full model gradients (instead of gradient shards) until the eventual sync"),
     * and for the frozen weights too when they share a unit with trained ones */
    double gs = in->unsharded_accum && in->grad_accum > 1 ? 1 : in->grad_shards;
    *grads = eci_memory_shard_share(wl, g, gs, in->expert_split) + in->unit_frozen_params * g / shards(gs);
    *host = 0;
    if (in->opt_on_host) { /* the states, the master copy and the fp32 gradients the CPU updates from */
        *host += eci_memory_shard_share(wl, o + master + 4.0, os, in->expert_split);
        m->optimizer_bytes = 0;
    }
    if (in->weights_on_host) {
        *host += m->weights_bytes;
        m->weights_bytes = 0;
    }
    m->weights_bytes += in->gathered_bytes;
}

/* The largest parameter tensor's gradient (optimizer_in_bwd frees each after its step). */
static double largest_param_bytes(const eci_workload *wl, double grad_bytes)
{
    double most = 0;
    for (size_t i = 0; i < wl->n_ops; i++)
        if (!wl->ops[i].frozen && wl->ops[i].params > most)
            most = wl->ops[i].params;
    return most * grad_bytes;
}

/* The transient part of the peak, the larger of backward's and the optimizer step's, with the
 * parts set as they stand at that moment and the moment named (m->peak_phase).  Backward: at
 * its start every activation is alive with the loss's gradients and the head's (the largest
 * transient); then activations are freed while gradients appear, and at its end the token
 * table's gradient is made.  With gradient accumulation the gradients of the earlier
 * micro-steps are alive through the later ones (and across steps where zero_grad keeps zeroed
 * gradients): activations and gradients add up. */
static double peak_transient(const eci_mem_in *in, double g, double grads, double opt_peak, double opt_temp,
                             ec_memory *m)
{
    const eci_workload *wl = in->wl;
    double acts = m->activations_bytes, head = 2.0 * head_out_bytes(wl), loss = loss_transient_bytes(in);
    if (loss > head)
        head = loss;
    if (wl->head_dequant_bytes > head) /* a quantized head's weight, dequantized for its input gradient */
        head = wl->head_dequant_bytes;
    double table = wl->trainable_params < wl->params ? 0 : table_grad_bytes(wl, g); /* LoRA: a frozen table */
    double late = head > table ? head : table;
    int keep = (in->grad_accum > 1 || in->keep_grads) && !in->optimizer_in_bwd;
    double core = keep ? acts + grads + late : (acts + head > grads + table ? acts + head : grads + table);
    double bwd_peak = m->cast_cache_bytes + core + m->workspace_bytes;
    if (opt_peak >= bwd_peak) {
        m->peak_phase = EC_PEAK_OPTIMIZER;
        m->activations_bytes = 0;
        m->cast_cache_bytes = 0;
        m->workspace_bytes = 0;
        m->optimizer_bytes += opt_temp;
        return opt_peak;
    }
    if (keep) {
        m->peak_phase = EC_PEAK_ACCUMULATE;
        m->workspace_bytes += late; /* both: the accumulated gradients beside the activations */
    } else if (acts + head > grads + table) {
        m->peak_phase = EC_PEAK_BACKWARD_START;
        m->grads_bytes = 0;
        m->workspace_bytes += head;
    } else {
        m->peak_phase = EC_PEAK_BACKWARD_END;
        m->activations_bytes = 0;
        m->workspace_bytes += table;
    }
    return bwd_peak;
}

const char *ec_peak_phase_name(int phase)
{
    static const char *const names[] = {"backward start", "backward end", "backward with accumulated gradients",
                                        "optimizer step"};
    return phase >= 0 && (size_t)phase < sizeof names / sizeof names[0] ? names[phase] : "unknown";
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
    o = eci_optim_state_bytes(ctx, &opt, wl, in->zero || in->master_weights ? EC_PREC_FP32 : in->precision) *
        per_param; /* ZeRO, an fp32 master copy: fp32 states */
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
                                                                          in->opt_shards, in->expert_split);
    if (opt_temp > 0 && eci_optim_loops(&opt, in->optimizer, in->torch_release)) {
        /* PyTorch 1.x's per-tensor loop: denom = exp_avg_sq.sqrt() / bias_correction2_sqrt makes two
         * temporaries of one tensor at a time, the largest one's at most (_single_tensor_adamw) */
        double one = 2.0 * largest_param_bytes(wl, eci_optim_temp_bytes(&opt, wl, in->precision) * per_param);
        opt_temp = opt_temp < one ? opt_temp : one;
    }
    if (in->master_weights && w == 2.0 && !replica && !in->opt_on_host) /* amp O2's fp32 master gradients */
        opt_temp += eci_memory_shard_share(wl, 4.0, in->opt_shards, in->expert_split);
    m->grads_bytes = grads;
    int amp = in->precision == EC_PREC_AMP_FP16 || in->precision == EC_PREC_AMP_BF16 ||
              in->precision == EC_PREC_AMP_FP8;
    m->cast_cache_bytes = amp ? wl->matmul_params * 2.0 : 0;

    /* Activations: a block's ops repeat reps times; the rest (embeddings, head) once. */
    double copies = in->act_copies > 0 ? in->act_copies : 1.0;
    double acts = eci_workload_saved_bytes(wl, in->checkpointing, copies);
    if (in->head_copies > 0 && in->head_copies < copies)
        acts -= (copies - in->head_copies) * head_saved_bytes(wl);
    if (in->act_offload_layers > 0) { /* CPU offloading: those layers' saved tensors wait in host memory */
        double moved = copies * in->act_offload_layers * eci_workload_layers(wl)->saved_bytes;
        acts -= moved;
        in->host_bytes += moved;
    }
    m->activations_bytes = acts;
    m->workspace_bytes = eci_const(ctx, EC_C_cublas_workspace_bytes) + in->extra_workspace_bytes;
    m->context_bytes = context_bytes(ctx, in->torch_release) +
                       (in->num_gpus > 1 ? eci_const(ctx, EC_C_nccl_context_bytes) : 0);
    if (in->optimizer_in_bwd) { /* each gradient lives from its accumulation to its parameter's step */
        double one = largest_param_bytes(wl, g);
        grads = grads < one ? grads : one;
        m->grads_bytes = grads;
        opt_temp = 0;
    }
    /* paged 8-bit states live in CUDA unified memory, outside PyTorch's allocator */
    double paged = opt.paged ? m->optimizer_bytes : 0;
    /* DeepSpeed ZeRO-3 with contiguous_gradients copies each gradient into a flat bucket of
     * reduce_bucket_size elements, allocated when the optimizer is built: a gradient buffer */
    buckets += in->zero_bucket_bytes;
    double persistent = m->weights_bytes + m->optimizer_bytes - paged + buckets;
    double allocated = persistent + peak_transient(in, g, grads, replica ? 0 : grads + opt_temp, opt_temp, m);
    m->grads_bytes += buckets;
    m->capacity_bytes = in->capacity_bytes;
    memory_readings(ctx, in, allocated, paged, m);
}
