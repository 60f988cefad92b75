/*
 * workload.h: the op list of one forward micro-step on one GPU, expanded by workload.c from
 * a network description (net.c: its layers and the head of the task), a precision and the
 * (padded) batch shape.  compute.c prices each op on a GPU, memory.c sums what it saves for
 * backward, sim/ lays the ops on a CPU/GPU timeline.  A repeated block of the
 * description (a transformer layer, ResNet's identical bottlenecks) is expanded once and
 * recorded as a block with its repetitions, so a 200-layer network costs one layer's ops.
 */
#ifndef EC_WORKLOAD_H
#define EC_WORKLOAD_H

#include "catalog/catalog.h"
#include "model/net.h"

typedef enum {
    ECI_OP_GEMM = 0, /* matmul on tensor cores or CUDA cores: 2*m*n*k*batch FLOPs */
    ECI_OP_CONV,     /* convolution, GEMM-shaped (m = N*Ho*Wo, n = Cout, k = Cin*kh*kw), priced by its
                        algorithm class (conv_algos.csv) and its input, weight and output tensors */
    ECI_OP_MEM,      /* memory-bound kernel: elementwise, normalisation, softmax, gather, copy */
    ECI_OP_CAST,     /* autocast dtype conversion (memory-bound, issued inside ATen) */
    ECI_OP_ATTN,     /* fused attention (SDPA): 4*b*heads*s^2*d FLOPs, backward recomputes */
    ECI_OP_COMM      /* a collective on the compute stream (tensor/context/expert parallel): fwd_coll in the
                        forward, bwd_coll in the backward, over group `group`, of comm_bytes */
} eci_op_kind;

/* Collectives (nccl-tests bus factors: all-reduce 2(n-1)/n, all-gather, reduce-scatter and
 * all-to-all (n-1)/n of the whole buffer; p2p the message); comm.c prices them. */
typedef enum { ECI_COLL_NONE = 0, ECI_COLL_ALLREDUCE, ECI_COLL_ALLGATHER, ECI_COLL_REDUCE_SCATTER,
               ECI_COLL_ALLTOALL, ECI_COLL_P2P } eci_coll;

/* The groups whose collectives sit inside a step's ops (data parallelism's are sim/step.c's). */
/* ETP: the expert tensor-parallel group (etp != tp, workload_blocks.c eci_wl_moe) */
typedef enum { ECI_GROUP_TP = 0, ECI_GROUP_CP, ECI_GROUP_EP, ECI_GROUP_ETP, ECI_N_GROUPS } eci_group_id;

typedef struct eci_op {
    const char *name;      /* static label ("qkv", "softmax", ...) for traces */
    eci_op_kind kind;
    double m, n, k, batch; /* GEMM/CONV shape; batch = independent GEMMs in one kernel (bmm) */
    int tensor_math;       /* GEMM runs at the 16-bit tensor-core rate (autocast or pure 16-bit) */
    double fwd_bytes;      /* MEM/CAST: bytes read + written in the forward */
    double bwd_bytes;      /* MEM/CAST: bytes of the backward; 0 = fwd_bytes x bwd_mem_bytes_factor;
                            * COMM of a ring (hidden > 1): what each backward step passes on (P2P) */
    double saved_bytes;    /* activation bytes this op keeps for backward */
    double params;         /* parameters owned by the op (weights, biases, norms) */
    double param_tensors;  /* parameter tensors owned by the op */
    double cast_params;    /* weight elements autocast casts to 16 bits (the weight cache) */
    int fwd_kernels;       /* kernels the op launches in the forward (0: a marker that runs nothing) */
    int count;             /* the op runs this many times back to back (a Python loop over experts) */
    int fwd_coll, bwd_coll;/* COMM: eci_coll of the forward and of the backward (ECI_COLL_NONE: nothing) */
    int group;             /* COMM: eci_group_id */
    double comm_bytes;     /* COMM: the collective's whole buffer */
    int hidden;            /* COMM: overlaps the op before it (ring attention): only the excess is exposed;
                            * > 1: a ring of that many steps, waited for after the first, so only
                            * 1/hidden of the op before it hides the exchange (compute.c) */
    int tied;              /* a projection whose weight is the embedding's (counted there) */
    int frozen;            /* its parameters get no gradient (LoRA's base): a GEMM computes no weight
                              gradient, an embedding no backward at all */
    int fp8;               /* a GEMM Transformer Engine runs in FP8 under precision=amp_fp8 */
    int quant;             /* its frozen weight is stored quantized (QLoRA's base: base_quant_bytes) */
    int expert;            /* one routed expert's (run once per local expert): expert-parallel weights */
    int attn_core;         /* the attention core (scores, softmax, dropout, context; the fused kernel):
                              what selective checkpointing recomputes instead of keeping */
    int bwd;               /* has a backward (0 for casts of weights, index ops) */
    int block;             /* index of the repeated block the op belongs to, -1: none */
    int layer;             /* index of the description layer it comes from (heads: n_layers) */
    size_t twin;           /* index of the first op with the same cost-relevant fields (itself if none):
                            * identical ops are priced once */
    /* Appended for issue 19. */
    double out_bytes;      /* MEM/CAST: bytes the forward writes (what the next op of a chain reads) */
    double conv_in_elems;  /* CONV: elements of its input (N x H x W x Cin); the output's are m x n x batch,
                            * the weight's n x k x batch: the tensors its passes move (compute.c) */
    double conv_kernel, conv_stride; /* CONV: filter size and stride (conv_algos.csv picks the algorithm) */
    int conv_nhwc;         /* CONV: its tensors are channels_last (NHWC); 0: contiguous NCHW */
    int attn_causal;       /* ATTN: a causal (or sliding-window) mask: the kernel's causal rate (compute.c) */
    double attn_keys_frac; /* ATTN under SDPA: the share of key blocks the kernel visits (causal skipping;
                              0 = all), in its time only (model FLOPs keep the whole square) */
    size_t next_comm;      /* COMM: the index of the next COMM op, comm_end after the last (a step's pass
                              over its collectives then touches only them) */
    int loss;              /* part of a cross entropy (eci_wl_cross_entropy): its backward transient is
                              priced from eci_workload.loss_bytes (memory.c) */
    double keep_bytes;     /* the output per-op selective checkpointing caches when it keeps this op (a
                              GEMM's m x n x batch, fused attention's output and log-sum-exp, a TP reduce-
                              scatter's shard; workload_build.h) */
    int op_keep;           /* checkpointing=selective_op keeps its output instead of recomputing it
                              (eci_wl_sum_up: torchtitan's _save_list and every-second-mm policy) */
    int in_normed;         /* a GEMM whose input a norm just wrote: Transformer Engine's LayerNormLinear
                              writes that input in FP8 itself (compute.c, kernels=te) */
    int host_sync;         /* the host waits for the GPU before it issues this op's forward (a device-to-
                              host copy it needs: Megatron-Core's dropless all-to-all split sizes); the
                              step's walks (sim/walk.c) drain the GPU's queue there */
    int ring_waited;       /* COMM of a ring (hidden > 1) traced into a compiled graph: each collective is
                              waited for where it is issued, so no attention step hides it (overlap.c) */
    int ring_te;           /* COMM of Transformer Engine's K/V ring (hidden = cp steps): each exchange under one
                              step's attention, backward's dK/dV passed in the K/V dtype (overlap.c) */
    int l2_chain;          /* its first input is the output of the op launched just before it (l2chain.c) */
    int linear_bias;       /* MEM: a linear's bias pass (eci_shape.bias_pass): in place in the GEMM's output (no
                              tensor of its own), issued from inside at::linear (C++: host priced as a cast's) */
    double l2_in_bytes[2]; /* MEM/CAST, [forward, backward]: the bytes it reads that the kernel launched just
                              before it wrote (0: none; l2chain.c), read from L2 where they fit (compute.c) */
    double l2_reuse_bytes[2][2]; /* [pass][first, last element of that tensor]: bytes moved between its write
                              and its read (LRU reuse distance), linear in between */
} eci_op;

/* A run of ops [begin, end) that the network repeats `reps` times. */
typedef struct eci_block {
    size_t begin, end;
    int reps;
    int shared_params;      /* every repetition uses the same weights: parameters counted once */
    int checkpoint;         /* a unit of activation checkpointing */
    double input_bytes;     /* bytes of one repetition's input (what checkpointing keeps) */
    double input_elems;     /* its elements (a pipeline sends them between stages) */
    double saved_bytes;     /* saved_bytes of one repetition's ops */
    double params;          /* parameters of one repetition (an FSDP unit's) */
    double trainable;       /* those of them that are trained (LoRA: the adapters) */
    double fp8_trainable;   /* those of them that are the weights of GEMMs Transformer Engine runs in FP8
                               (op.fp8): fp8_params gathers them a byte each */
    double flop;            /* forward FLOPs of one repetition (as model_flop counts them) */
    double core_saved_bytes; /* what its unfused attention core keeps (s x s scores, probabilities,
                                masks): selective checkpointing recomputes it instead */
    double core_flop;       /* forward FLOPs of that unfused core */
    double op_keep_bytes;   /* what checkpointing=selective_op caches of one repetition (keep_bytes of its
                               op_keep ops) beside its input */
    double op_keep_flop;    /* forward FLOPs of those ops: not recomputed */
} eci_block;

/* The most ops one expansion holds: net.c holds a description to EC_NETWORK_MAX_LAYERS layers
 * once unrolled, which expand to a few ops each (an attention layer to about fifteen); 2^21 ops
 * (about half a GiB) leave room for that and bound what any description costs to expand. */
#define ECI_WL_MAX_OPS (1 << 21)

typedef struct eci_workload {
    eci_op *ops;            /* n_ops, allocated through the context (cap_ops) */
    size_t n_ops, cap_ops;
    eci_block *blocks;      /* in op order, non-overlapping (cap_blocks) */
    size_t n_blocks, cap_blocks;
    double params;          /* all parameters */
    double param_tensors;   /* parameter tensors */
    double trainable_params; /* parameters that get gradients and optimizer states (all but LoRA's base) */
    double trainable_tensors; /* their tensors (optimizer and gradient-accumulation launches) */
    double quant_params;    /* frozen parameters stored quantized (QLoRA) */
    double fp8_trained_params, fp8_frozen_params; /* the weights of the GEMMs Transformer Engine runs in FP8
                                                     (op.fp8), trained and frozen: fp8_params holds them */
    double expert_params;   /* trained parameters of this GPU's routed experts (held by dp / ep ranks) */
    double matmul_params;   /* parameters of GEMM/CONV weights: the autocast cast cache */
    double saved_other_bytes; /* saved_bytes of the ops outside every block */
    double input_bytes;     /* bytes copied host-to-device per micro-step */
    double tokens;          /* tokens (or images) per micro-step per GPU */
    double model_flop;      /* forward FLOPs of GEMM/CONV/ATTN ops per micro-step (all repetitions) */
    double frozen_flop;     /* those of frozen GEMMs (LoRA's base: no weight gradient in backward) */
    double conv_flop;       /* those of CONV ops (which unit cuDNN runs them on: sim/warnings.c) */
    double output_bytes;    /* logits the model returns per micro-step (DataParallel gathers them) */
    unsigned long long serial; /* this expansion's number on its context (eci_workload_get, from 1);
                                * 0: not from the cache.  Keys caches of values derived from it. */
    double table_params;    /* the largest table with a backward (a MEM op: the token embedding), whose
                               dense gradient memory.c prices at the end of backward */
    int tied_head;          /* a GEMM projects through a weight it does not own (cast_params > 2 params) */
    size_t comm_begin, comm_end; /* the ops from the first collective (COMM) to the last (none: equal) */
    int loop_block;         /* the first block that is a checkpointing unit, -1: none (where a forward's
                               per-sample Python loop runs: before it, or before every op) */
    double conv_io_bytes;   /* the largest convolution's input + output bytes (cuDNN's workspace, memory.c) */
    double conv_layout_bytes; /* the largest NCHW convolution's NHWC copies alive in its backward (input,
                               its gradient and the output's gradient) when it runs on tensor cores */
    double loss_bytes;      /* the largest cross entropy's log-probabilities (rows x classes at the width
                               the loss runs in: fp32 under autocast): its backward makes two such tensors */
    double head_dequant_bytes; /* a quantized head's weight dequantized for its input gradient, alive at the
                               start of backward (quant_head) */
    size_t host_syncs;      /* ops with host_sync (0: the walks' whole-pass sums apply) */
} eci_workload;

typedef struct eci_shape {
    int precision;          /* ec_precision */
    double batch;           /* samples per micro-step per GPU */
    double seq;             /* padded sequence length (tokens); encoder side of an encoder-decoder */
    double seq_sq;          /* seq x the keys a query attends to (attention cost): seq*seq, or seq x
                               packed_seq_len with packed sequences */
    double target_seq;      /* decoder tokens per sample of an encoder-decoder (0 = seq) */
    int image_size;         /* pixels per side */
    double mask_bytes;      /* bytes per element of a dropout mask */
    double mlm_frac;        /* share of positions predicted by the MLM head */
    int eager_attention;    /* 1: HF eager attention (s x s scores kept); 0: fused SDPA */
    int flash;              /* a flash-style kernel (attention=flash/flash2, flash3, flash4, triton, cudnn): causal
                               blocks skipped, sliding windows honoured, grouped K/V read in place */
    int gelu_new_kernels;   /* elementwise kernels of GPT-2's Python gelu_new (constants.csv) */
    int gelu_python_kernels; /* elementwise kernels of the Python erf GELU, gelu_python (constants.csv) */
    int act_impl;           /* ec_act_impl (key activation): the MLP activation as the code computes it,
                               0 (EC_ACTIMPL_NETWORK): as the network's config names it */
    int rmsnorm_kernels;    /* kernels of HF's Python RMSNorm (constants.csv) */
    double rmsnorm_passes;  /* passes over the elements those kernels make together (constants.csv) */
    double rmsnorm_fp32_passes; /* of those, the passes over its fp32 copy whatever the input's dtype */
    int rmsnorm_cast_kernels; /* its .to(float32) and .to(input_dtype) copies of a 16-bit input (0: fused) */
    int rope_kernels;       /* kernels of HF's apply_rotary_pos_emb on Q and K (constants.csv) */
    int tp, cp, ep;         /* tensor-, context- and expert-parallel degrees (1: none) */
    int etp;                /* expert tensor-parallel degree (layout.c: tp unless given); etp != tp: the
                               experts outside the tensor-parallel region (workload_blocks.c eci_wl_moe) */
    int cp_torch;           /* cp > 1 by PyTorch's context_parallel ring (torchtitan): its merge kernels
                               and its exchange waited for at the second step (workload_blocks.c); 2: the
                               ring inside torch.compile's graph, each exchange waited for at once;
                               0 with kernels=te (Megatron's ring in Transformer Engine, not modeled) */
    int sp;                 /* Megatron sequence parallelism (with tp > 1) */
    int weights_16;         /* weights kept in the 16-bit compute dtype (FSDP MixedPrecision's
                               param_dtype, DeepSpeed bf16): autocast has no weights to cast */
    int lora_r;             /* LoRA rank (0: every parameter trained) */
    int lora_targets;       /* ec_lora_targets: the linears that get adapters */
    int base_16;            /* LoRA: the frozen base is held in 16 bits (no autocast cast of it) */
    double base_quant_bytes; /* LoRA: bytes per frozen weight of a quantized base (int8 ~1, nf4 ~0.5
                               with its constants), dequantized on every use; 0: not quantized */
    int stage_lo, stage_hi; /* a pipeline stage: the repeated blocks' layers [lo, hi) in order, with
                               the ops before them (first stage) and the head (last); hi = 0: all */
    /* Appended for issue 19. */
    int channels_last;      /* CNN tensors in NHWC (memory_format=channels_last) */
    int fused;              /* fusion.c rewrites the op list as Inductor fuses it: torch.compile, or a
                               framework's fused kernels (kernels=fused) */
    int inference;          /* evaluation (model.eval()): no dropout kernels */
    int unmasked;           /* SDPA gets no mask and is_causal=True (compute.h eci_sdpa_masked: no
                               lengths, and not HF's causal mask under torch.compile) */
    /* Appended for issue 40. */
    int loss_sum;           /* loss=sum: the loop backpropagates logits.sum(), no cross entropy */
    int quant_head;         /* a quantized base's output head is quantized too (Lightning's bitsandbytes) */
    int loss_fp32;          /* loss=cross_entropy_fp32: the logits are upcast to fp32 before the cross entropy */
    int remat;              /* torch.compile, and kernels=te (its TE layers keep the same: setup.c).
                               AOTAutograd's min-cut partitioner (torch/_functorch/partitioners.py,
                               min_cut_rematerialization_partition) saves the fewest
                               bytes from which backward can rebuild what it reads; pointwise ops, casts
                               and means are on its recomputable list, so their intermediates are
                               rebuilt inside the backward kernels, and a node is kept only when an
                               unfusible op (a GEMM, SDPA) reads it in backward, when it is random
                               (dropout masks), or when it is a reduction 4x smaller than its input
                               (a norm's rstd).  What changes: a Python-op activation keeps its input
                               only, an RMSNorm its input and rstd, the gated product its GEMM input
                               (up's output; act(gate) is rebuilt), RoPE nothing (its backward needs only
                               cos and sin) */
    int te_layers;          /* kernels=te: Megatron-Core's Transformer Engine layers, which apply the router's
                               probabilities inside the experts' fused activation (experts.py TEGroupedMLP:
                               weighted_bias_swiglu_impl), so the combine's unpermute keeps only its index map */
    int lora_dropout;       /* LoRA: lora_dropout > 0, each adapter's input passes an nn.Dropout */
    int loss_fused;         /* 1: loss=fused_cross_entropy, a causal LM's loss in one xentropy kernel on the
                               16-bit logits (the head's fused_loss); 2: fused_linear_cross_entropy, the
                               projection and the loss chunk by chunk, no logits kept (workload_heads.c) */
    int bias_pass;          /* a linear's bias costs a pass of its own over the output (PyTorch before
                               constants.csv linear_bias_epilogue_from_version: add_ after matmul, or
                               addmm's copy of the bias before its GEMM); 0: the GEMM's epilogue adds it */
    int fp8_act_store;      /* kernels=te with fp8_act_store: a SwiGLU keeps its input as float8_e4m3fn */
    int cp_a2a;             /* kernels=te, cp > 1, cp_comm_type=a2a: context parallelism by all-to-all */
} eci_shape;

/* Build the op list into wl (which must be zeroed or hold an earlier expansion: its arrays are
 * reused).  Returns EC_EINVAL for a task the network has no head for or a description whose
 * shapes do not flow (a repeat that changes the tensor, a vocabulary head on images),
 * EC_ENOMEM. */
EC_INTERNAL int eci_workload_expand(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *shape,
                                    eci_workload *wl);
/* Release the arrays of an expansion (wl itself is the caller's). */
EC_INTERNAL void eci_workload_release(ec_ctx *ctx, eci_workload *wl);

/* The op list of (net, task, shape) from the context's cache of recent expansions, expanding
 * it on a miss.  *out stays valid until the next call on ctx.  Adds EC_ENOMEM to the
 * returns of eci_workload_expand. */
EC_INTERNAL int eci_workload_get(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *shape,
                                 const eci_workload **out);
/* Lookups answered from the cache and expansions done, since the context was created. */
EC_INTERNAL void eci_workload_cache_stats(const ec_ctx *ctx, size_t *hits, size_t *misses);

/* Layers a pipeline splits: the repetitions of the network's top-level repeated blocks. */
EC_INTERNAL int eci_net_pipeline_layers(const eci_net *net);

/* Parameter count of a network with a task head, independent of shape and precision;
 * 0 when the network has no head for the task (or memory ran out). */
EC_INTERNAL double eci_workload_params(ec_ctx *ctx, const eci_net *net, int task);

/* The shape used to count parameters and check a description: one short sample. */
EC_INTERNAL void eci_shape_probe(const eci_net *net, eci_shape *sh);

/* torch.compile (fusion.c): merge each chain of elementwise and normalization kernels between
 * two matmuls into one fused kernel, as Inductor generates it; blocks are kept intact. */
EC_INTERNAL void eci_fusion_apply(eci_workload *wl);
/* l2chain.c: each marked op's bytes read from the kernel just before it and their reuse distances
 * (forward, and backward for its producer), on the final op list. */
EC_INTERNAL void eci_wl_l2_chains(const ec_ctx *ctx, eci_workload *wl);

/* Activation bytes kept for backward at the peak (memory.c): every op's saved bytes, or under
 * checkpointing the inputs of each checkpointed repetition plus one repetition's own (selective:
 * every op's but the unfused attention cores'; selective_op: each input and what its kept ops
 * cache, plus one repetition's own); `copies`
 * micro-batches of them in flight (a pipeline stage), the recomputed repetition once. */
EC_INTERNAL double eci_workload_saved_bytes(const eci_workload *wl, int checkpointing, double copies);
/* Forward FLOPs that checkpointing runs again in backward: the checkpointed blocks' (checkpointing
 * 1), their unfused attention cores' (EC_CKPT_SELECTIVE), those of the ops they do not keep
 * (EC_CKPT_OP), 0 without. */
EC_INTERNAL double eci_workload_recompute_flop(const eci_workload *wl, int checkpointing);
/* The repeated layers: the checkpointable block with the most repetitions (NULL: none). */
EC_INTERNAL const eci_block *eci_workload_layers(const eci_workload *wl);
/* Layers whose activations CPU offloading moves to the host (act_offload_layers): `asked`, at most
 * all of those layers but one (Megatron-Core's TransformerConfig refuses cpu_offloading_num_layers
 * >= num_layers), 0 without repeated layers. */
EC_INTERNAL int eci_workload_offloaded_layers(const eci_workload *wl, int asked);
/* Parameters of the largest repetition of any block (the largest FSDP unit). */
EC_INTERNAL double eci_workload_largest_unit(const eci_workload *wl);
/* Bytes a parameter all-gather (ZeRO-1/2's of the updated parameters, FSDP's per unit) moves for
 * `trained` trained parameters, `fp8` of them the weights of FP8 GEMMs: elem_bytes each (the
 * compute dtype), but a byte for those under fp8_gather (fp8_params, where it applies). */
EC_INTERNAL double eci_workload_gather_bytes(double elem_bytes, int fp8_gather, double trained, double fp8);
/* The trained FP8 GEMMs' weights outside every repeated block (FSDP's root unit). */
EC_INTERNAL double eci_workload_root_fp8(const eci_workload *wl);

/* Expansions a context keeps: a sweep's batch sizes for one network and precision. */
#define ECI_WL_CACHE_ENTRIES 128
/* Free the context's workload cache (registered with eci_ctx_on_free). */
EC_INTERNAL void eci_workload_cache_free(ec_ctx *ctx);

#endif /* EC_WORKLOAD_H */
