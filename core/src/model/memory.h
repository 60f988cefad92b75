/*
 * memory.h: the inputs of the peak-memory estimate (memory.c).
 */
#ifndef EC_MEMORY_H
#define EC_MEMORY_H

#include "model/workload.h"

typedef struct eci_mem_in {
    const eci_workload *wl;
    int precision, optimizer, checkpointing;
    int ddp_bucket_copy;          /* DDP without gradient_as_bucket_view: a persistent copy of the gradients */
    int dp_role;                  /* DataParallel: 0 not dp, 1 GPU 0, 2 one of the other GPUs */
    int num_gpus;                 /* > 1 adds NCCL buffers */
    int dynamic_shapes;           /* dynamic padding fragments the allocator more */
    double extra_workspace_bytes; /* e.g. DataParallel's gathered outputs on GPU 0 */
    double capacity_bytes;
    double allocator_scale;       /* calibration factor on allocator slack (1.0) */
    /* Sharded data parallelism (FSDP, ZeRO): ranks each part is split over (0 or 1: replicated). */
    double weight_shards, grad_shards, opt_shards;
    int zero;                     /* DeepSpeed: a 16-bit compute copy of the weights beside the fp32
                                     master partition (kept with the optimizer states) under AMP */
    int opt_on_host;              /* CPU offload: optimizer states (and the master weights) in host memory */
    int weights_on_host;          /* ...and the parameter shards too (FSDP CPUOffload, ZeRO-Infinity) */
    double gathered_bytes;        /* unsharded units and their gradients alive at once (FSDP, ZeRO-3) */
    double frozen_elem_bytes;     /* LoRA: bytes per frozen base parameter as stored */
    int fp8_params;               /* the blocks' linear weights held as FP8 (a byte each): eci_setup_fp8_params */
    double expert_split;          /* ep x etp / tp (eci_expert_split): routed experts' states shard over
                                     1/expert_split of the ranks */
    double act_copies;            /* micro-batches whose activations a pipeline stage holds (0 or 1: one) */
    double head_copies;           /* of them, those whose head (the ops after the last repeated block) it
                                     holds; 0: act_copies.  An interleaved schedule's last stage runs each
                                     micro-batch's backward of its last chunk right after its forward: 1 */
    double host_bytes;            /* out: pinned host memory the offload needs */
    /* Appended for issue 19. */
    int grad_accum;               /* > 1: gradients of earlier micro-steps stay beside the activations */
    int expandable_segments;      /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True */
    int keep_grads;               /* the gradients stay alive between steps (zero_grad=zeros or never; zeros by
                                     default before PyTorch 2.0): beside the next step's activations */
    /* Appended for issue 40. */
    int torch_release;            /* the CUDA context by release (EC_RELEASE, 0: current) */
    int master_weights;           /* a pure 16-bit model with an fp32 master copy (apex amp O2): fp32 states, the
                                     master weights, and fp32 master gradients through the optimizer step */
    int outputs_held;             /* the loop holds the model's outputs (the logits) through backward */
    int loss_chunks;              /* chunked cross entropy: its fp32 transients one chunk at a time (0, 1: whole) */
    int optimizer_in_bwd;         /* each gradient is freed by its parameter's optimizer step inside backward */
    int conv_transposes;          /* NCHW convolutions on tensor cores: cuDNN's NHWC copies are temporaries */
    double headroom_bytes;        /* kept free beyond what must be allocated, < 0: the allocator's usual slack */
    /* LoRA under FSDP as LitGPT runs it. */
    double unit_frozen_params;    /* frozen parameters in FSDP units beside trained ones: with use_orig_params the
                                     unit's flat gradient covers them (FSDP's docs: "equivalent to not freezing") */
    int unsharded_accum;          /* FSDP no_sync: the micro-steps before the last keep unsharded gradients */
    double zero_bucket_bytes;     /* DeepSpeed ZeRO-3's contiguous gradient bucket, allocated with the optimizer */
    int act_offload_layers;       /* repeated layers whose saved tensors wait in host memory (eci_setup_act_offload) */
} eci_mem_in;

EC_INTERNAL void eci_memory_estimate(const ec_ctx *ctx, eci_mem_in *in, ec_memory *m);
/* The trained parameters' bytes (at `bytes` each) on one of `shards` ranks that split them, the
 * routed experts over only shards / split of them (split = ep x etp / tp). */
EC_INTERNAL double eci_memory_shard_share(const eci_workload *wl, double bytes, double shards, double split);
/* Bytes per parameter of the weights, the gradients and the optimizer states. */
EC_INTERNAL void eci_memory_param_bytes(const ec_ctx *ctx, int precision, int optimizer, double *w, double *g, double *opt);

#endif /* EC_MEMORY_H */
