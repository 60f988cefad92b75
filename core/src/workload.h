/*
 * workload.h: the op list of one forward micro-step on one GPU, built by workload.c from
 * a network preset, a task head, a precision and the (padded) batch shape.  compute.c
 * prices each op on a GPU, memory.c sums what it saves for backward, predict.c lays the
 * ops on a CPU/GPU timeline.
 */
#ifndef EC_WORKLOAD_H
#define EC_WORKLOAD_H

#include "internal.h"

typedef enum { ECI_TASK_CLASSIFY = 0, ECI_TASK_SQUAD, ECI_TASK_PRETRAIN, ECI_TASK_LM, ECI_TASK_IMAGENET } eci_task;

/* Parse a task name; -1 when unknown. */
EC_INTERNAL int eci_task_parse(const char *name);
EC_INTERNAL const char *eci_task_name(int task);

typedef enum {
    ECI_OP_GEMM = 0, /* matmul on tensor cores or CUDA cores: 2*m*n*k*batch FLOPs */
    ECI_OP_CONV,     /* convolution as implicit GEMM (m = N*Ho*Wo, n = Cout, k = Cin*kh*kw) */
    ECI_OP_MEM,      /* memory-bound kernel: elementwise, normalisation, softmax, gather, copy */
    ECI_OP_CAST,     /* autocast dtype conversion (memory-bound, issued inside ATen) */
    ECI_OP_ATTN      /* fused attention (SDPA): 4*b*heads*s^2*d FLOPs, backward recomputes */
} eci_op_kind;

typedef struct eci_op {
    const char *name;      /* static label ("qkv", "softmax", ...) for traces */
    eci_op_kind kind;
    double m, n, k, batch; /* GEMM/CONV shape; batch = independent GEMMs (bmm) */
    int tensor_math;       /* GEMM runs at the 16-bit tensor-core rate (autocast or pure 16-bit) */
    double fwd_bytes;      /* MEM/CAST: bytes read + written in the forward */
    double bwd_bytes;      /* MEM/CAST: bytes of the backward; 0 = fwd_bytes x bwd_mem_bytes_factor */
    double saved_bytes;    /* activation bytes this op keeps for backward */
    double params;         /* parameters owned by the op (weights, biases, norms) */
    double param_tensors;  /* parameter tensors owned by the op */
    double cast_params;    /* weight elements autocast casts to 16 bits (the weight cache) */
    int fwd_kernels;       /* kernels the op launches in the forward */
    int bwd;               /* has a backward (0 for casts of weights, index ops) */
    int layer;             /* 1 when the op is part of the repeated layer block */
    size_t twin;           /* index of the first op with the same cost-relevant fields (itself if none):
                            * ResNet's repeated bottlenecks are priced once */
} eci_op;

#define ECI_MAX_OPS 256

typedef struct eci_workload {
    eci_op ops[ECI_MAX_OPS];
    size_t n_ops;
    int layers;             /* repeats of the ops with layer == 1 */
    size_t layer_begin, layer_end; /* the ops with layer == 1 are [layer_begin, layer_end) (0, 0: none) */
    double params;          /* all parameters */
    double param_tensors;   /* parameter tensors (optimizer launches) */
    double matmul_params;   /* parameters of GEMM/CONV weights: the autocast cast cache */
    double saved_layer_bytes, saved_other_bytes; /* saved_bytes summed over the layer block's ops
                            * (one repeat) and over the other ops, in op order */
    double layer_input_bytes; /* bytes of one layer's input (what checkpointing keeps) */
    double input_bytes;     /* bytes copied host-to-device per micro-step */
    double tokens;          /* tokens (or images) per micro-step per GPU */
    double model_flop;      /* forward FLOPs of GEMM/CONV ops per micro-step (all layers) */
    double output_bytes;    /* logits the model returns per micro-step (DataParallel gathers them) */
    unsigned long long serial; /* this expansion's number on its context (eci_workload_get, from 1);
                                * 0: not from the cache.  Keys caches of values derived from it. */
} eci_workload;

typedef struct eci_shape {
    int precision;          /* ec_precision */
    double batch;           /* samples per micro-step per GPU */
    double seq;             /* padded sequence length (tokens) */
    double seq_sq;          /* E[padded length^2] (attention cost), seq*seq for fixed padding */
    int image_size;         /* pixels per side */
    double mask_bytes;      /* bytes per element of a dropout mask */
    double mlm_frac;        /* share of positions predicted by the MLM head */
    int eager_attention;    /* 1: HF eager attention (s x s scores kept); 0: fused SDPA */
    int gelu_new_kernels;   /* elementwise kernels of GPT-2's Python gelu_new (constants.csv) */
} eci_shape;

/* Build the op list.  Returns EC_EINVAL for a task the family cannot run. */
EC_INTERNAL int eci_workload_expand(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *shape,
                                    eci_workload *wl);

/* The op list of (net, task, shape) from the context's cache of recent expansions, expanding
 * it on a miss.  *out stays valid until the next call on ctx.  Adds EC_ENOMEM to the
 * returns of eci_workload_expand. */
EC_INTERNAL int eci_workload_get(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *shape,
                                 const eci_workload **out);
/* Lookups answered from the cache and expansions done, since the context was created. */
EC_INTERNAL void eci_workload_cache_stats(const ec_ctx *ctx, size_t *hits, size_t *misses);

/* Parameter count of a preset with a task head, independent of shape and precision. */
EC_INTERNAL double eci_workload_params(const eci_net *net, int task);

#endif /* EC_WORKLOAD_H */
