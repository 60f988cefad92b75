/*
 * catalog/catalog.h: what the data files of models/ say, as the layers above read it
 * (catalog/README.md): GPU, host and inter-node network profiles, software constants, the
 * config key vocabulary and its tasks.  The fitted parameters (params.h), prices (price.h),
 * constants' names (consts.h) and config.json families (arch.h) have headers of their own.
 * Includes only base/.
 */
#ifndef EC_CATALOG_H
#define EC_CATALOG_H

#include "base/base.h"

/* ---- attention kernels (models/attention.csv, attention.c) ---------------------- */
/* The fused attention kernels models/attention.csv prices; eager attention (and SDPA's math
 * backend, the same ops) is priced op by op instead. */
typedef enum {
    ECI_AK_FLASH2 = 0, ECI_AK_FLASH3, ECI_AK_TRITON, ECI_AK_CUDNN, ECI_AK_MEM_EFFICIENT, ECI_AK_FLASH1, ECI_AK_FLASH4,
    ECI_AK_CUDNN_FP8, /* cuDNN's FP8 fused attention (Transformer Engine's fp8_dot_product_attention): its
                         fractions are of the GPU's FP8 peak */
    ECI_AK_N
} eci_attn_kernel;
/* The most head dims attention.csv gives one kernel on one architecture (its head_dim column). */
enum { ECI_AK_HD_MAX = 4 };
/* The most cuDNN releases attention.csv gives cuDNN's kernel on one architecture (cudnn_version). */
enum { ECI_AK_RELEASES_MAX = 4 };
/* Where a GPU's efficiency for one kernel comes from. */
enum { ECI_AK_NONE = 0, ECI_AK_OWN, ECI_AK_PRIOR };
/* One kernel on one GPU: achieved FLOP/s over the dense peak of the unit that runs it, by pass
 * (0 forward, 1 backward) and causal masking (0 no, 1 yes), at head dim 128 (ECI_ATTN_REF_HEAD_DIM),
 * and where it comes from.  Where the rows give head dims (n_hd > 0), the fraction at head dim d
 * is frac x eci_attn_hd_interp(hd, hd_scale[pass][causal], n_hd, d). */
typedef struct eci_attn_eff {
    double frac[2][2];
    int from;                         /* ECI_AK_NONE (no row: the GPU cannot run it), _OWN, _PRIOR */
    int n_hd;                         /* head dims with rows, 0: the fractions hold at any head dim */
    double hd[ECI_AK_HD_MAX];         /* ascending */
    double hd_scale[2][2][ECI_AK_HD_MAX]; /* the fraction at hd[i] over frac */
    int ref_gpu;                      /* ctx->gpus index of the part its rows were measured on
                                         (attention.csv reference_gpu) */
    int release;                      /* the cuDNN release its rows were measured with (EC_RELEASE,
                                         attention.csv cudnn_version), 0: they hold for any */
    int base;                         /* the kernel whose fitted attention scale scales it: itself, or the
                                         one its rows are ratios of (attention.csv derived_from) */
    int back_to_back;                 /* 1: its rows were timed back to back long enough for the power
                                         limit to hold the clock down (attention.csv back_to_back), so the
                                         GPU's sustained_tensor_frac is already in them */
} eci_attn_eff;
#define ECI_ATTN_REF_HEAD_DIM 128.0

/* ---- hardware profile (one row of models/gpus.csv) ---------------------------- */
typedef struct eci_gpu {
    char *id, *name, *aliases, *architecture, *default_topology, *source;
    char *refuse;                     /* "precision: reason|..." precisions this GPU refuses, "" none */
    double compute_capability;
    int sm_count;
    double peak_fp32_flop_per_s;
    double peak_tf32_flop_per_s;      /* 0: no TF32 tensor cores */
    double peak_fp16_flop_per_s;      /* tensor cores with fp32 accumulate; 0: none */
    double peak_bf16_flop_per_s;      /* 0: no native bf16 */
    double emulated_bf16_flop_per_s;  /* measured bf16 GEMM rate where bf16 is not native */
    double gemm_eff_fp32_frac, gemm_eff_tf32_frac, gemm_eff_fp16_frac, gemm_eff_bf16_frac;
    double peak_fp8_flop_per_s;   /* dense FP8 tensor-core peak (FP32 accumulate), 0: no FP8 */
    double gemm_eff_fp8_frac;     /* measured large FP8 GEMM over that peak (0 without FP8) */
    double sustained_tensor_frac; /* tensor-core rate kept when tensor-bound kernels run back to back
                                     for longer than the power limit's window (a training step), over
                                     the short-run rate the efficiencies and attention.csv measure */
    double memory_bytes;
    double memory_bandwidth_bytes_per_s;
    double memory_eff_frac;
    double l2_bytes;
    int pcie_gen, pcie_lanes;
    double h2d_pinned_bytes_per_s, h2d_pageable_bytes_per_s;
    double nvlink_bytes_per_s;        /* per GPU per direction, 0: none */
    int p2p;                          /* GPU peer-to-peer over PCIe allowed */
    int gpus_per_board;
    double kernel_floor_s;            /* GPU-side time of an empty back-to-back kernel */
    int measured;                     /* efficiencies measured (1) or architecture defaults (0) */
    const struct eci_refsys *refsys;  /* its reference system (reference_systems.csv), NULL: none */
    eci_attn_eff attn[ECI_AK_N];      /* fused attention kernels on its architecture (attention.csv); the
                                         cuDNN kernel's at its newest release measured */
    eci_attn_eff cudnn_releases[ECI_AK_RELEASES_MAX]; /* cuDNN's kernel at each release its rows name,
                                         oldest first (the last is attn[ECI_AK_CUDNN]) */
    int n_cudnn_releases;             /* 0: its cuDNN rows name no release (they hold for any) */
    double mem_overhead_s;            /* a memory-bound kernel's start-up and tail, added to bytes / bandwidth
                                         (membw.csv: its id's row, its architecture's, else the prior) */
    double gemm_k_half;               /* reduction length at half the large-k GEMM rate (gemm.csv: its
                                         architecture's row, else the prior) */
    double gemm_fixed_s;              /* time a GEMM kernel adds to its math or memory time (gemm.csv) */
    double l2_read_bytes_per_s;       /* achieved L2 read bandwidth (l2.csv), 0: no row, no L2 effect */
    double l2_usable_bytes;           /* footprint still read at that rate (l2.csv), <= l2_bytes */
} eci_gpu;

/* ---- host profile (one row of models/hosts.csv) -------------------------------- */
typedef struct eci_host {
    char *id, *description, *source;
    int cores;
    double dispatch_fwd_s;            /* host time to issue one eager forward op */
    double dispatch_bwd_s;            /* host time per backward op (C++ autograd engine) */
    double step_overhead_s;           /* Python training-loop bookkeeping per optimizer step */
    double memcpy_bytes_per_s;        /* host memcpy (pin-memory copy) */
    double host_hop_busbw_bytes_per_s; /* NCCL ring hop between peer-to-peer PCIe GPUs under different root ports
                                        * or sockets, which NCCL stages through host memory (comm.c) */
    double through_host_busbw_bytes_per_s; /* NCCL ring bus bandwidth in training when every byte passes
                                            * through host memory (P2P off or impossible); 0: the GPU's PCIe
                                            * link at pcie_host_busbw_frac sets it (comm.c) */
    int socket_gpus;                  /* GPUs a socket's root ports hold; a through-host ring of more spans the
                                       * sockets; 0: not known, one rate for every ring */
    double cross_socket_busbw_bytes_per_s; /* that ring's rate through host memory across the socket link;
                                            * 0: the through-host rate holds (comm.c) */
    double fast_tokenizer_tokens_per_s;   /* HF tokenizers (Rust), one thread */
    double python_tokenizer_tokens_per_s; /* slow Python tokenizer, one thread */
    double worker_start_s;            /* fork + dataset init of one DataLoader worker */
    double collate_per_sample_s;      /* default collate + __getitem__ cost per sample */
} eci_host;

/* ---- inter-node network preset (one row of models/interconnects.csv, fabrics.c) -------- */
typedef struct eci_fabric {
    char *id, *description, *source;
    double gpu_gbit_per_s;    /* per direction, each GPU's own NIC (rail-optimized), -1: not per GPU */
    double node_gbit_per_s;   /* per direction, the whole node, -1: not given (per GPU x GPUs per node) */
    double latency_us;        /* one hop, -1: not published (constants.csv default) */
    double efficiency_frac;   /* measured all-reduce bus bandwidth over the link rate, -1: not measured */
    double domain_gpus;       /* GPUs in one NVLink switch domain (GB200 NVL72), -1: none */
} eci_fabric;

/* ---- NCCL's tuner model (models/nccl_tuning.csv, nccl.c) ------------------------------- */
/* The latency and bus-bandwidth constants NCCL's tuner (src/graph/tuning.cc) prices an
 * all-reduce with, per algorithm (ring, tree) and protocol (LL, LL128, Simple); comm.c takes
 * the algorithm NCCL's model finds fastest.  Times in seconds. */
enum { ECI_NCCL_RING, ECI_NCCL_TREE, ECI_NCCL_ALGOS };
enum { ECI_NCCL_LL, ECI_NCCL_LL128, ECI_NCCL_SIMPLE, ECI_NCCL_PROTOS };
#define ECI_NCCL_SIZE_CLASSES 23 /* treeCorrectionFactor applies below 64 B x 2^23 */
typedef struct eci_nccl_proto {
    double base_s;             /* baseLatencies */
    double intra_s[2];         /* hwLatencies of one step within a node: [0] NVLink, [1] PCI */
    double net_s;              /* hwLatencies[NET]: one step across nodes */
    double net_step_floor_s;   /* a ring across nodes: each intra-node step at least this (0: none) */
    double net_large_mult;     /* a ring across nodes: latency x this (ring Simple's plateau), else 1 */
    double net_large_mult_before_sm80; /* the same on GPUs below compute capability 8.0 */
    double net_large_min_bytes_per_rank; /* ... from this many bytes per rank and channel on */
    double min_compute_capability; /* the protocol runs from this compute capability on (LL128: 7.0) */
    double busbw_frac, busbw_frac_one_node; /* bus bandwidth over the link's, across nodes / on one */
    int needs_nvlink;          /* LL128: only where the GPUs of a node talk over NVLink */
    int n_corr;                /* size classes with a bandwidth correction (0: none) */
    double corr_first_bytes;   /* the size of corr's first class (NCCL: 64 B) */
    double corr[ECI_NCCL_SIZE_CLASSES]; /* by floor(log2(bytes / corr_first_bytes)) */
} eci_nccl_proto;
typedef struct eci_nccl_tuner {
    eci_nccl_proto p[ECI_NCCL_ALGOS][ECI_NCCL_PROTOS];
} eci_nccl_tuner;

/* ---- a GPU's reference system (one row of models/reference_systems.csv, refsys.c) ---- */
typedef struct eci_refsys {
    char *gpu, *system, *network, *fabric_text, *source;
    double gpus_per_node;       /* GPUs in one such machine; -1: not stated (constants.csv gpus_per_node) */
    const eci_fabric *fabric;   /* the row of interconnects.csv `network` names (set at load) */
} eci_refsys;

/* ---- config keys a prediction asks about (config.c) ------------------------------ */
/* Keys whose being given explicitly (not only their value) changes a prediction or its
 * warnings.  Their indices in the key table are looked up by name once, when models are
 * loaded (eci_config_keys_init), instead of on every prediction. */
typedef enum eci_key {
    ECI_KEY_STRATEGY, ECI_KEY_NODES, ECI_KEY_EPOCHS, ECI_KEY_PREFETCH_FACTOR, ECI_KEY_TOKENIZE,
    ECI_KEY_TOKENIZER, ECI_KEY_ATTENTION, ECI_N_KEYS
} eci_key;
/* Fill ctx->key_index (ec_ctx_load_models). */
EC_INTERNAL void eci_config_keys_init(ec_ctx *ctx);
/* 1 when key k was given explicitly in cfg (ec_config_is_set). */
EC_INTERNAL int eci_config_given(const ec_ctx *ctx, const ec_config *cfg, eci_key k);
/* ec_config_set of the key at index i (ec_config_key_index), for callers that look a key up
 * once and set it many times (a sweep's axes). */
EC_INTERNAL int eci_config_set_at(ec_ctx *ctx, ec_config *cfg, size_t i, const char *value);
/* Key i's field as bytes: its size, a copy of it, and putting a copy back with whether the key
 * was given (ec_config_is_set).  A sweep sets each axis value once on a scratch config and puts
 * its field into every point's config: what eci_config_set_at would store, without parsing. */
EC_INTERNAL size_t eci_config_key_size(size_t i);
EC_INTERNAL void eci_config_key_get(const ec_config *cfg, size_t i, void *field);
EC_INTERNAL void eci_config_key_put(ec_config *cfg, size_t i, const void *field, int given);

/* The task vocabulary (config key `task`); a network has heads for some of them. */
typedef enum {
    ECI_TASK_CLASSIFY = 0, ECI_TASK_SQUAD, ECI_TASK_PRETRAIN, ECI_TASK_LM, ECI_TASK_IMAGENET,
    ECI_TASK_TOKEN_CLASSIFY, ECI_TASK_COUNT
} eci_task;

/* Parse a task name; -1 when unknown. */
EC_INTERNAL int eci_task_parse(const char *name);
EC_INTERNAL const char *eci_task_name(int task);
/* ", "-separated list of every task name, for messages. */
EC_INTERNAL const char *eci_task_names(void);

/* ---- the tables of models/ (gpus.c, hosts.c, fabrics.c, consts.c) ----------------- */
EC_INTERNAL int eci_hw_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_hw_free(ec_ctx *ctx);
EC_INTERNAL const eci_gpu *eci_hw_find(ec_ctx *ctx, const char *name); /* sets EC_ENOTFOUND */
/* The index of the gpus.csv row whose id is `id` (eci_name_eq: no name or alias), ctx->n_gpus when
 * none: how the models/ tables that name a GPU by its id (membw.csv, l2.csv, attention.csv
 * reference_gpu) find it, their loaders reporting an unknown id with their own file and line. */
EC_INTERNAL size_t eci_gpu_id_index(const ec_ctx *ctx, const char *id);
/* The reason g refuses a precision (its name as config.c spells it, "tf32") into buf, or NULL
 * when it does not (gpus.csv column refuse). */
EC_INTERNAL const char *eci_hw_refusal(const eci_gpu *g, const char *precision, char *buf, size_t n);
/* 1 when name is an interconnect the communication model knows (nvlink, pcie-switch, ...). */
EC_INTERNAL int eci_hw_topology_known(const char *name);

EC_INTERNAL int eci_host_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_host_free(ec_ctx *ctx);
EC_INTERNAL const eci_host *eci_host_find(ec_ctx *ctx, const char *name);

EC_INTERNAL int eci_fabric_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_fabric_free(ec_ctx *ctx);
EC_INTERNAL const eci_fabric *eci_fabric_find(ec_ctx *ctx, const char *name); /* sets EC_ENOTFOUND */

/* ---- Transformer Engine's userbuffers configurations (models/tp_overlap.csv, tpoverlap.c) ---- */
/* The GEMMs tp_comm_overlap prices (model/overlap.c) and the methods TE overlaps them by. */
enum { ECI_UB_QKV_FPROP, ECI_UB_PROJ_FPROP, ECI_UB_FC1_FPROP, ECI_UB_FC2_FPROP, ECI_UB_PROJ_DGRAD, ECI_UB_FC2_DGRAD,
       ECI_UB_GEMMS };
enum { ECI_UB_RING, ECI_UB_PIPELINE, ECI_UB_BULK };
#define ECI_TP_OVERLAP_DEFAULT "h100_h8192_tp4_mbs1_seqlen8192" /* tp_overlap_cfg unset */
typedef struct eci_ub_gemm {
    int method;          /* ECI_UB_RING, ECI_UB_PIPELINE, ECI_UB_BULK */
    double num_sm;       /* SMs the communication kernels hold */
    double num_splits;   /* pipeline: chunks of the GEMM's output features */
    int set_sm_margin;   /* 1: the GEMM runs on the SMs less num_sm */
} eci_ub_gemm;
typedef struct eci_tp_overlap {
    char id[EC_NAME_MAX];
    eci_ub_gemm gemm[ECI_UB_GEMMS];
} eci_tp_overlap;
EC_INTERNAL int eci_tp_overlap_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_tp_overlap_free(ec_ctx *ctx);
/* The row of id ("" = ECI_TP_OVERLAP_DEFAULT), or -1 with an error naming the key and listing the ids. */
EC_INTERNAL int eci_tp_overlap_index(ec_ctx *ctx, const char *id);
EC_INTERNAL const eci_tp_overlap *eci_tp_overlap_at(const ec_ctx *ctx, int index); /* NULL: none */

/* models/nccl_tuning.csv: exactly the six rows ring_ll ... tree_simple (nccl.c). */
EC_INTERNAL int eci_nccl_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_nccl_free(ec_ctx *ctx);

/* The skeleton of a per-GPU table read after gpus.csv (gpu_table.c): its columns (all
 * required), parse (one data row into row_size bytes, NULL when row_size is 0; col[] holds the
 * columns' indices in spec order), link (the parsed rows onto ctx->gpus; NULL: none) and reset
 * (clear one GPU's fields after an error; NULL: none). */
#define ECI_GPU_TABLE_COLS_MAX 16
typedef struct eci_gpu_table {
    const char *const *columns;
    int n_columns;
    size_t row_size;
    int (*parse)(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, void *row);
    int (*link)(ec_ctx *ctx, const char *path, const void *rows, size_t n);
    void (*reset)(eci_gpu *g);
} eci_gpu_table;
/* Load, require the columns, refuse a file without data rows, parse each row, link, free; on
 * an error every GPU is reset and the first error's status returned (its message in ctx). */
EC_INTERNAL int eci_gpu_table_load(ec_ctx *ctx, const char *path, const eci_gpu_table *spec);

/* attention.csv, after gpus.csv: sets each GPU's attn[] from its architecture's rows, else the
 * prior rows (architecture '*'); a row without a source is refused, naming file and line. */
EC_INTERNAL int eci_attn_load(ec_ctx *ctx, const char *path);
/* The kernel's name as attention.csv spells it. */
EC_INTERNAL const char *eci_attn_kernel_name(int kernel);
/* The kernel (ECI_AK_) attention.csv spells `name`, -1 for none. */
EC_INTERNAL int eci_attn_kernel_index(const char *name);
/* The classes attn_eff is fitted on and applies to (ec_fit_report.attn_kernels, bit 1 << class):
 * the kernels above, and the memory-efficient kernel on fp32 inputs (fp32 and tf32 runs: three
 * TF32 passes per product from Ampere on, CUDA cores before; constants.csv sdpa_fp32_tf32_passes),
 * another instruction path than its 16-bit one. */
enum { ECI_AK_CLASS_MEM_EFFICIENT_FP32 = ECI_AK_N, ECI_AK_CLASSES };
/* The class of kernel k on inputs of precision p (an ec_precision). */
EC_INTERNAL int eci_attn_class(int kernel, int precision);
/* Its name ("sdpa_mem_efficient_fp32" for the fp32 class, else the kernel's; "?" if none) and
 * the class of a name (-1: none). */
EC_INTERNAL const char *eci_attn_class_name(int cls);
EC_INTERNAL int eci_attn_class_index(const char *name);
/* v at head dim d from its values at the n >= 1 ascending head dims hd: linear in log2(head
 * dim) between two of them, the nearest one's value outside their range. */
EC_INTERNAL double eci_attn_hd_interp(const double *hd, const double *v, int n, double d);
/* l2.csv, after gpus.csv: sets the l2_ fields of the GPUs it has a row for (the others keep 0: no
 * L2 effect); a row naming no gpus.csv id, a second row, an empty source, a usable size over the
 * GPU's l2_bytes or a number out of range is refused, naming file and line. */
EC_INTERNAL int eci_l2_load(ec_ctx *ctx, const char *path);
/* membw.csv, after gpus.csv: sets each GPU's mem_overhead_s from the row of its id, else of its
 * architecture, else the prior (architecture '*'); a row without a source is refused, naming file
 * and line. */
EC_INTERNAL int eci_membw_load(ec_ctx *ctx, const char *path);
/* sdpa_backends.csv: the kernel (ECI_AK_) PyTorch's SDPA runs for a release (EC_RELEASE, 0:
 * unset), a compute capability, 16-bit (half) or fp32 inputs and with or without an attn_mask
 * (masked: a padding mask; flash takes none); the first row that applies. */
EC_INTERNAL int eci_sdpa_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_sdpa_free(ec_ctx *ctx);
EC_INTERNAL int eci_sdpa_kernel(const ec_ctx *ctx, int torch_release, double compute_capability, int half,
                                 int masked);
/* ---- convolution algorithms (models/conv_algos.csv, convalgo.c) ---------------- */
/* The passes of a convolution, the unit that multiplies and the tensor layouts. */
enum { ECI_CONV_FWD = 0, ECI_CONV_DGRAD, ECI_CONV_WGRAD, ECI_CONV_PASSES };
enum { ECI_CONV_ANY = 0, ECI_CONV_SIMT, ECI_CONV_TENSOR };
enum { ECI_CONV_NCHW = 1, ECI_CONV_NHWC = 2 }; /* a kernel's layout; ECI_CONV_ANY: reads either */
/* One algorithm class, as a row of conv_algos.csv: where it applies and how it prices against a
 * GEMM of the convolution's shape. */
typedef struct eci_conv_algo {
    char name[32];
    int unit;                 /* ECI_CONV_ANY, _SIMT (CUDA cores), _TENSOR */
    double kernel, stride, groups; /* filter size, stride, groups it applies to; 0: any */
    unsigned passes;          /* 1 << ECI_CONV_FWD | ... */
    int layout;               /* the layout its kernels read: ECI_CONV_ANY, _NCHW, _NHWC */
    double flop_frac;         /* the share of the direct convolution's FLOPs it executes (Winograd < 1) */
    double workspace_io_frac; /* workspace bytes read and written over the input + output bytes */
    int conv_eff;             /* the fitted conv_eff applies (0: priced as a plain GEMM) */
    size_t line;
} eci_conv_algo;
/* conv_algos.csv: every unit and pass needs a row for any filter, stride and groups. */
EC_INTERNAL int eci_conv_algos_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_conv_algos_free(ec_ctx *ctx);
/* The algorithm of one pass (ECI_CONV_FWD...) of a convolution on tensor cores (tensor) or CUDA
 * cores, of a kernel x kernel filter, stride and groups: the first row that applies. */
EC_INTERNAL const eci_conv_algo *eci_conv_algo_for(const ec_ctx *ctx, int tensor, double kernel, double stride,
                                                   double groups, int pass);
EC_INTERNAL const char *eci_conv_pass_name(int pass);
/* gemm.csv, after gpus.csv: sets each GPU's gemm_k_half from its architecture's row, else the
 * prior (architecture '*'); gemm_shapes.csv: the public shape measurements, checked, not kept.
 * A row without a source is refused, naming file and line. */
EC_INTERNAL int eci_gemm_load(ec_ctx *ctx, const char *path);
EC_INTERNAL int eci_gemm_shapes_load(ec_ctx *ctx, const char *path);
/* reference_systems.csv, after gpus.csv and interconnects.csv: sets each GPU's refsys. */
EC_INTERNAL int eci_refsys_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_refsys_free(ec_ctx *ctx);

EC_INTERNAL int eci_consts_load(ec_ctx *ctx, const char *path);
EC_INTERNAL void eci_consts_free(ec_ctx *ctx);
/* A software constant from constants.csv by name; absent names are a load-time error,
 * so lookups of the names the model uses cannot fail after ec_ctx_load_models. */
EC_INTERNAL double eci_const(const ec_ctx *ctx, int which);

#endif /* EC_CATALOG_H */
