/*
 * optim.h: the optimizer catalogue and what runs between backward and the next forward
 * (optim.c): GradScaler's unscale and inf check, gradient clipping, the optimizer step and
 * the scaler's update, each as a phase of host work, GPU kernels and syncs that sim/step.c
 * lays on its timeline; and the bytes of the optimizer's states that memory.c adds.
 */
#ifndef EC_OPTIM_H
#define EC_OPTIM_H

#include "model/compute.h"

/* One optimizer as it runs: states, traffic and launches, per parameter or tensor. */
typedef struct eci_optim {
    const char *name;
    int steps;                     /* 0: no optimizer step at all (optimizer=none) */
    double state_bytes_per_param;  /* persistent states per parameter at 4-byte parameters */
    int factored;                  /* Adafactor: row and column statistics per matrix instead */
    int states_follow_params;      /* states are in the parameter dtype (2 bytes in a pure 16-bit model) */
    double step_bytes_per_param;   /* HBM traffic of one step per parameter (4-byte parameters) */
    double temp_bytes_per_param;   /* step temporaries (foreach AdamW's sqrt(v)) per parameter byte */
    double foreach_ops;            /* multi-tensor ops: ceil(tensors / foreach_tensors_per_kernel) kernels each */
    double kernels_per_tensor;     /* a Python loop over the parameters: kernels per parameter tensor */
    double syncs_per_tensor;       /* the host waits for the GPU after each tensor (bitsandbytes) */
    int clips_per_tensor;          /* the loop clips each tensor with clip_grad_norm_ (BertAdam): a sync per
                                      tensor where that release's clip syncs (clip_sync_until_version) */
    int takes_scaler;              /* the kernel takes GradScaler's scale and inf flag: no unscale pass, no sync */
    int paged;                     /* states in CUDA unified memory, outside PyTorch's caching allocator */
} eci_optim;

/* The catalogue entry of an ec_optimizer (unknown values: adamw). */
EC_INTERNAL void eci_optim_get(const ec_ctx *ctx, int optimizer, eci_optim *o);

/* Bytes of the optimizer's states for the parameters of wl at a precision (pure 16-bit
 * models keep their states in 16 bits where the optimizer follows the parameter dtype). */
EC_INTERNAL double eci_optim_state_bytes(const ec_ctx *ctx, const eci_optim *o, const eci_workload *wl,
                                         int precision);
/* Bytes of the step's temporaries at their peak (beside the gradients). */
EC_INTERNAL double eci_optim_temp_bytes(const eci_optim *o, const eci_workload *wl, int precision);

/* What runs after the last backward of a step, in order. */
enum {
    ECI_PHASE_UNSCALE = 0, ECI_PHASE_CLIP, ECI_PHASE_OPTIMIZER, ECI_PHASE_MASTER_COPY, ECI_PHASE_SCALER_UPDATE,
    ECI_N_PHASES
};

typedef struct eci_phase {
    double host_s;    /* host time to issue it (dispatch, Python) */
    double gpu_s;     /* kernel time (x gpu_scale) */
    double kernels;
    int serial;       /* the host waits after each tensor: host and GPU time add up */
    int sync_after;   /* the host waits for the GPU when it is issued (.item(), bool of a tensor) */
} eci_phase;

typedef struct eci_step_in {
    const eci_workload *wl;
    double params, tensors;   /* the parameters this GPU updates (trained ones; its shard) and their tensors */
    const eci_rates *rates;
    int optimizer, precision;
    double max_grad_norm;     /* resolved: 0 = no clipping */
    double dispatch_fwd_s;    /* host time per launch from Python */
    double dispatch_bwd_s;    /* host time per launch from C++ (a foreach op's chunks) */
    double gpu_scale;
    int torch_release;        /* EC_RELEASE, 0 = current; before 2.0 torch.optim loops over tensors, clip_grad_norm_
                                 takes one norm per tensor and zero_grad() fills the gradients with zeros */
    int zero_fill;            /* zero_grad() fills every gradient with zeros (eci_zero_grad_kept) */
    int fp32_states;          /* ZeRO: an fp32 master of the shard and fp32 states whatever the model's dtype */
    int clip_impl;            /* ec_clip_impl: what clips at max_grad_norm */
    int master_weights;       /* a pure 16-bit model steps an fp32 master copy (apex amp O2): fp32 states, its
                                 gradients copied in before and its weights copied back after the step */
    int grad_accum;           /* micro-steps per optimizer step (0 or 1: one); under master_weights amp adds each
                                 later micro-step's 16-bit gradients into the fp32 master gradients */
} eci_step_in;

/* Do the gradients stay alive between optimizer steps (zero_grad=zeros or never, or auto before
 * PyTorch 2.0, whose zero_grad() kept zeroed gradients)?  *fill: are they filled with zeros. */
EC_INTERNAL int eci_zero_grad_kept(int zero_grad, int torch_release, int *fill);
/* Does torch.optim loop over the tensors (PyTorch 1.x's foreach=None: _single_tensor_adamw),
 * for an optimizer of the catalogue that is foreach by default? */
EC_INTERNAL int eci_optim_loops(const eci_optim *o, int optimizer, int torch_release);

/* The phases of the optimizer step (those that do not run are zero). */
EC_INTERNAL void eci_optim_phases(const ec_ctx *ctx, const eci_step_in *in, eci_phase ph[ECI_N_PHASES]);

#endif /* EC_OPTIM_H */
