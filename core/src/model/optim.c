/*
 * optim.c: the optimizer catalogue (docs/DESIGN.md 3.1 and 3.4) and what runs between the
 * last backward of a step and the next forward, as the stack runs it:
 *   GradScaler (amp_fp16): unscale_ = _amp_foreach_non_finite_check_and_unscale_ over every
 *     gradient, then found_inf.item() in scaler.step (a sync), then _amp_update_scale_; a
 *     fused optimizer takes the scale and the inf flag in its own kernel (no pass, no sync)
 *     unless clipping needs the gradients unscaled first;
 *   clipping (max_grad_norm): torch.nn.utils.clip_grad_norm_ with foreach: _foreach_norm,
 *     stack, vector_norm, the clip coefficient, clamp, _foreach_mul_ (before 1.10 a host sync
 *     on the factor); or apex's multi_tensor_l2norm, .item(), multi_tensor_scale
 *     (clip_impl=multi_tensor);
 *   the optimizer: foreach ops over chunks of tensors (torch.optim), one fused kernel per
 *     chunk, or a Python loop over the parameters issuing a few kernels each
 *     (transformers.AdamW, transformers.Adafactor, bitsandbytes, which also synchronizes
 *     after every tensor, DeepLearningExamples' BertAdam, which also clips every tensor).
 * Kernel counts and bytes per parameter are software constants (models/constants.csv, read
 * from the optimizers' source code); states come from the catalogue and, for Adafactor's
 * factored statistics, from the shapes of the weights (workload.c).  A pure 16-bit model keeps
 * 16-bit states where the optimizer follows the parameters' dtype, except under ZeRO, whose
 * optimizer updates an fp32 master of its shard with fp32 states (fp32_states; apex
 * DistributedFusedLAMB @91fcaaf7 L380-390: _fp32_p, _fp32_m, _fp32_v, _fp32_u of the shard
 * beside the fp16 _fp16_p and _fp16_g, under NVIDIA's MLPerf BERT's model.half()).
 */
#include "model/optim.h"
#include "catalog/consts.h"

#include <math.h>
#include <string.h>

void eci_optim_get(const ec_ctx *ctx, int optimizer, eci_optim *o)
{
    memset(o, 0, sizeof *o);
    o->steps = 1;
    o->states_follow_params = 1;
    switch (optimizer) {
    case EC_OPT_SGD:
    case EC_OPT_SGD_MOMENTUM: /* torch.optim.SGD(momentum>0): one momentum buffer, foreach */
        o->name = "sgd_momentum";
        o->state_bytes_per_param = 4;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_sgd_bytes_per_param);
        o->foreach_ops = eci_const(ctx, EC_C_opt_foreach_ops_sgd);
        break;
    case EC_OPT_LAMB:
        o->name = "lamb";
        o->state_bytes_per_param = 8;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_lamb_bytes_per_param);
        o->foreach_ops = eci_const(ctx, EC_C_opt_foreach_ops_lamb);
        break;
    case EC_OPT_ADAMW_FUSED:
    case EC_OPT_ADAMW_TORCH_FUSED: /* torch.optim.AdamW(fused=True): one kernel per chunk */
        o->name = "adamw_fused";
        o->state_bytes_per_param = 8;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_adam_fused_bytes_per_param);
        o->foreach_ops = 1;
        o->takes_scaler = 1;
        break;
    case EC_OPT_ADAMW_HF: /* transformers.AdamW: mul_, add_, mul_, addcmul_, sqrt, add_, addcdiv_ per tensor */
        o->name = "adamw_hf";
        o->state_bytes_per_param = 8;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_adamw_hf_bytes_per_param);
        o->kernels_per_tensor = eci_const(ctx, EC_C_opt_adamw_hf_kernels_per_tensor);
        break;
    case EC_OPT_ADAFACTOR: /* transformers.Adafactor as the Trainer builds it (no first moment) */
        o->name = "adafactor";
        o->factored = 1;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_adafactor_bytes_per_param);
        o->kernels_per_tensor = eci_const(ctx, EC_C_opt_adafactor_kernels_per_tensor);
        break;
    case EC_OPT_ADAMW_8BIT:
    case EC_OPT_PAGED_ADAMW_8BIT: /* bitsandbytes Optimizer2State, blockwise 8-bit states */
        o->name = optimizer == EC_OPT_ADAMW_8BIT ? "adamw_8bit" : "paged_adamw_8bit";
        o->state_bytes_per_param = eci_const(ctx, EC_C_opt_8bit_state_bytes_per_param);
        o->states_follow_params = 0;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_8bit_bytes_per_param);
        o->kernels_per_tensor = 1;
        o->syncs_per_tensor = eci_const(ctx, EC_C_opt_8bit_syncs_per_tensor);
        o->paged = optimizer == EC_OPT_PAGED_ADAMW_8BIT;
        break;
    case EC_OPT_PAGED_ADAMW: /* bitsandbytes PagedAdamW: Optimizer2State with 32-bit states, one
                              * optimizer_update_32bit kernel per tensor (the traffic of a fused AdamW),
                              * the step loop of Optimizer8bit (a sync per tensor), states paged */
        o->name = "paged_adamw";
        o->state_bytes_per_param = 8;
        o->states_follow_params = 0; /* fp32 states whatever the parameters' dtype */
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_adam_fused_bytes_per_param);
        o->kernels_per_tensor = 1;
        o->syncs_per_tensor = eci_const(ctx, EC_C_opt_8bit_syncs_per_tensor);
        o->paged = 1;
        break;
    case EC_OPT_ADAMW_APEX_FUSED: /* apex.optimizers.FusedAdam: multi_tensor_adam, one kernel per chunk; apex
                                   * amp (or GradScaler) unscales before it */
        o->name = "adamw_apex_fused";
        o->state_bytes_per_param = 8;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_adam_fused_bytes_per_param);
        o->foreach_ops = 1;
        break;
    case EC_OPT_BERTADAM: /* DLE optimization.py BertAdam: per tensor clip_grad_norm_(p), then Adam in ~10 ops */
        o->name = "bertadam";
        o->state_bytes_per_param = 8;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_bertadam_bytes_per_param);
        o->kernels_per_tensor = eci_const(ctx, EC_C_opt_bertadam_kernels_per_tensor);
        o->clips_per_tensor = 1;
        break;
    case EC_OPT_NONE:
        o->name = "none";
        o->steps = 0;
        o->states_follow_params = 0;
        break;
    default: /* adam, adamw, adamw_foreach, adamw_torch: torch.optim's foreach implementation */
        o->name = "adamw";
        o->state_bytes_per_param = 8;
        o->step_bytes_per_param = eci_const(ctx, EC_C_opt_adam_foreach_bytes_per_param);
        o->temp_bytes_per_param = 1.0; /* denom = sqrt(exp_avg_sq): one parameter-sized tensor */
        o->foreach_ops = eci_const(ctx, EC_C_opt_foreach_ops_adam);
        break;
    }
}

static int pure16(int precision)
{
    return precision == EC_PREC_BF16 || precision == EC_PREC_FP16;
}

/* Adafactor's states: a row and a column statistic per matrix (fp32, as the gradient),
 * the full second moment of every other tensor. */
static double factored_bytes(const eci_workload *wl)
{
    double bytes = 0;
    for (size_t i = 0; i < wl->n_ops; i++) {
        const eci_op *op = &wl->ops[i];
        if (op->params <= 0 || op->frozen) /* LoRA's base has no states */
            continue;
        const eci_block *blk = op->block >= 0 ? &wl->blocks[op->block] : NULL;
        double reps = blk != NULL && !blk->shared_params ? blk->reps : 1;
        double n = op->params;
        if ((op->kind == ECI_OP_GEMM || op->kind == ECI_OP_CONV) && op->cast_params > 0) {
            /* weight (k x n per group) -> k + n statistics; the rest (a bias) in full */
            n = (op->k + op->n) * op->batch + (op->params - op->cast_params);
        }
        bytes += 4.0 * n * op->count * reps;
    }
    return bytes < 4.0 * wl->trainable_params ? bytes : 4.0 * wl->trainable_params;
}

double eci_optim_state_bytes(const ec_ctx *ctx, const eci_optim *o, const eci_workload *wl, int precision)
{
    (void)ctx;
    if (!o->steps)
        return 0;
    if (o->factored)
        return factored_bytes(wl);
    double scale = o->states_follow_params && pure16(precision) ? 0.5 : 1.0;
    return wl->trainable_params * o->state_bytes_per_param * scale;
}

double eci_optim_temp_bytes(const eci_optim *o, const eci_workload *wl, int precision)
{
    return wl->trainable_params * o->temp_bytes_per_param * (pure16(precision) ? 2.0 : 4.0);
}

/* A foreach phase: `ops` multi-tensor ops over every parameter tensor, each launching one
 * kernel per chunk of tensors, plus `fixed` single kernels; bytes per parameter. */
static void foreach_phase(const ec_ctx *ctx, const eci_step_in *in, double ops, double fixed, double bytes_per_param,
                          eci_phase *ph)
{
    double chunks = ceil(in->tensors / eci_const(ctx, EC_C_foreach_tensors_per_kernel));
    ph->kernels = ops * chunks + fixed;
    ph->host_s = in->dispatch_fwd_s * (ops + fixed) + in->dispatch_bwd_s * ops * chunks;
    ph->gpu_s = eci_mem_time_s(in->rates, bytes_per_param * in->params, ph->kernels) * in->gpu_scale;
}

/* PyTorch 1.x: torch.optim's foreach=None meant the per-tensor loop (foreach became the CUDA
 * default in 2.0), clip_grad_norm_ took one torch.norm and one mul_ per tensor, and
 * zero_grad(set_to_none=False) filled every gradient with zeros. */
static int torch1(int torch_release)
{
    return torch_release > 0 && torch_release < EC_RELEASE(2, 0);
}

/* clip_grad_norm_ before clip_sync_until_version: `if clip_coef < 1` reads the factor on the host. */
static int clip_syncs(const ec_ctx *ctx, int torch_release)
{
    return torch_release > 0 && torch_release < eci_const(ctx, EC_C_clip_sync_until_version);
}

/* clip_grad_norm_ before clip_norm_stacked_from_version: each parameter's norm read with .item(). */
static int clip_itemized(const ec_ctx *ctx, int torch_release)
{
    return torch_release > 0 && torch_release < eci_const(ctx, EC_C_clip_norm_stacked_from_version);
}

int eci_optim_loops(const eci_optim *o, int optimizer, int torch_release)
{
    int explicit_foreach = optimizer == EC_OPT_ADAMW_FOREACH || optimizer == EC_OPT_LAMB ||
                           optimizer == EC_OPT_ADAMW_APEX_FUSED;
    return torch1(torch_release) && o->foreach_ops > 0 && !o->takes_scaler && !explicit_foreach;
}

int eci_zero_grad_kept(int zero_grad, int torch_release, int *fill)
{
    int zeros = zero_grad == EC_ZERO_GRAD_ZEROS || (zero_grad == EC_ZERO_GRAD_AUTO && torch1(torch_release));
    if (fill != NULL)
        *fill = zeros;
    return zeros || zero_grad == EC_ZERO_GRAD_NEVER;
}

/* A multi-tensor pass over every gradient or weight: one kernel per chunk issued from C++. */
static void chunk_pass(const ec_ctx *ctx, const eci_step_in *in, double bytes_per_param, eci_phase *p)
{
    double chunks = ceil(in->tensors / eci_const(ctx, EC_C_foreach_tensors_per_kernel));
    p->kernels = chunks;
    p->host_s = in->dispatch_fwd_s + in->dispatch_bwd_s * chunks;
    p->gpu_s = eci_mem_time_s(in->rates, bytes_per_param * in->params, chunks) * in->gpu_scale;
}

/* Clipping at max_grad_norm over gradients of grad_bytes each. */
static void clip_phase(const ec_ctx *ctx, const eci_step_in *in, double grad_bytes, eci_phase *c)
{
    double bytes = eci_const(ctx, EC_C_clip_bytes_per_param) * grad_bytes / 4.0;
    if (in->clip_impl == EC_CLIP_MULTI_TENSOR) { /* l2norm and scale over chunks; the norm read on the host */
        foreach_phase(ctx, in, eci_const(ctx, EC_C_clip_foreach_ops),
                      eci_const(ctx, EC_C_clip_multi_tensor_fixed_kernels), bytes, c);
        c->sync_after = 1;
    } else if (torch1(in->torch_release)) { /* one norm and one mul_ per tensor */
        int itemized = clip_itemized(ctx, in->torch_release); /* each norm read on the host, the rest a float */
        c->kernels = eci_const(ctx, EC_C_clip_foreach_ops) * in->tensors +
                     (itemized ? 0 : eci_const(ctx, EC_C_clip_fixed_kernels));
        c->host_s = in->dispatch_fwd_s * c->kernels;
        c->gpu_s = eci_mem_time_s(in->rates, bytes * in->params, c->kernels) * in->gpu_scale;
        c->serial = itemized;
        c->sync_after = clip_syncs(ctx, in->torch_release);
    } else { /* clip_grad_norm_(foreach): _foreach_norm and _foreach_mul_ over the gradients */
        foreach_phase(ctx, in, eci_const(ctx, EC_C_clip_foreach_ops), eci_const(ctx, EC_C_clip_fixed_kernels),
                      bytes, c);
    }
}

void eci_optim_phases(const ec_ctx *ctx, const eci_step_in *in, eci_phase ph[ECI_N_PHASES])
{
    memset(ph, 0, ECI_N_PHASES * sizeof *ph);
    eci_optim o;
    eci_optim_get(ctx, in->optimizer, &o);
    if (eci_optim_loops(&o, in->optimizer, in->torch_release)) {
        o.kernels_per_tensor = o.foreach_ops; /* _single_tensor_adam(w) / _single_tensor_sgd */
        o.foreach_ops = 0;
    }
    double grad_bytes = pure16(in->precision) ? 2.0 : 4.0;
    int scaler = in->precision == EC_PREC_AMP_FP16 && o.steps;
    int clip = in->max_grad_norm > 0;
    /* an fp32 master copy (apex amp O2): the optimizer and the clip see its fp32 gradients */
    int master = in->master_weights && pure16(in->precision) && o.steps;

    /* GradScaler.unscale_: one read and write of every gradient with the inf check; the
     * host issues it from Python once and the chunks from C++ */
    if (scaler && (!o.takes_scaler || clip))
        chunk_pass(ctx, in, eci_const(ctx, EC_C_gradscaler_bytes_per_param), &ph[ECI_PHASE_UNSCALE]);
    if (master) { /* amp O2: the 16-bit gradients into fp32 master gradients, unscaled, the overflow read on the
                   * host under fp16's dynamic loss scale; after every later micro-step's backward amp adds that
                   * micro-step's gradients into them (unscale_with_stashed), priced here with the step's */
        eci_phase *u = &ph[ECI_PHASE_UNSCALE], add;
        chunk_pass(ctx, in, eci_const(ctx, EC_C_master_grad_copy_bytes_per_param), u);
        if (in->grad_accum > 1) {
            chunk_pass(ctx, in, eci_const(ctx, EC_C_master_grad_accumulate_bytes_per_param), &add);
            u->kernels += add.kernels * (in->grad_accum - 1);
            u->host_s += add.host_s * (in->grad_accum - 1);
            u->gpu_s += add.gpu_s * (in->grad_accum - 1);
        }
        u->sync_after = in->precision == EC_PREC_FP16;
    }
    if (clip)
        clip_phase(ctx, in, master ? 4.0 : grad_bytes, &ph[ECI_PHASE_CLIP]);
    /* scaler.step's found_inf.item() (not with an optimizer that takes the scaler) */
    if (scaler && !o.takes_scaler)
        (clip ? &ph[ECI_PHASE_CLIP] : &ph[ECI_PHASE_UNSCALE])->sync_after = 1;

    if (o.steps) {
        eci_phase *p = &ph[ECI_PHASE_OPTIMIZER];
        double scale = o.states_follow_params && pure16(in->precision) && !in->fp32_states && !master ? 0.5 : 1.0;
        if (o.clips_per_tensor && clip_itemized(ctx, in->torch_release)) /* the clip: a norm and its .item() */
            o.kernels_per_tensor -= eci_const(ctx, EC_C_opt_bertadam_clip_kernels_per_tensor) - 1.0;
        if (o.kernels_per_tensor > 0) { /* a Python loop over the parameter tensors */
            p->kernels = o.kernels_per_tensor * in->tensors;
            p->host_s = in->dispatch_fwd_s * p->kernels;
            p->gpu_s = eci_mem_time_s(in->rates, o.step_bytes_per_param * scale * in->params, p->kernels) *
                       in->gpu_scale;
            p->serial = o.syncs_per_tensor > 0 || (o.clips_per_tensor && clip_syncs(ctx, in->torch_release));
        } else {
            foreach_phase(ctx, in, o.foreach_ops, 0, o.step_bytes_per_param * scale, p);
        }
    }
    if (master) /* the updated master weights back into the model's 16-bit weights */
        chunk_pass(ctx, in, eci_const(ctx, EC_C_master_weight_copy_bytes_per_param), &ph[ECI_PHASE_MASTER_COPY]);
    if (in->zero_fill) { /* zero_grad(): a fill of every gradient, one kernel each */
        eci_phase *p = &ph[ECI_PHASE_OPTIMIZER];
        p->kernels += in->tensors;
        p->host_s += in->dispatch_fwd_s * in->tensors;
        p->gpu_s += eci_mem_time_s(in->rates, grad_bytes * in->params, in->tensors) * in->gpu_scale;
    }
    if (scaler) { /* scaler.update: _amp_update_scale_ and the found_inf bookkeeping */
        double k = eci_const(ctx, EC_C_gradscaler_fixed_kernels);
        ph[ECI_PHASE_SCALER_UPDATE].kernels = k;
        ph[ECI_PHASE_SCALER_UPDATE].host_s = in->dispatch_fwd_s * k;
        ph[ECI_PHASE_SCALER_UPDATE].gpu_s = in->rates->floor_s * k * in->gpu_scale;
    }
}
