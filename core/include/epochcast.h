/*
 * epochcast.h: the one public header of libepochcast.
 *
 * epochcast predicts deep-learning training step time, epoch time and GPU memory
 * from a configuration (model, task, GPU, precision, batch, DataLoader settings)
 * before anyone rents a GPU. Anything not declared here is not API.
 *
 * Conventions (docs/DESIGN.md section 5):
 *   - every object hangs off an ec_ctx; nothing in the library is global and mutable;
 *   - functions return an ec_status (EC_OK = 0); on failure ec_ctx_errmsg() holds a
 *     detailed message such as "models/gpus.csv:12:4: 'mem_bytes' is not a number";
 *   - units are in the names: _s seconds, _bytes bytes, _bytes_per_s, _flop, _flop_per_s,
 *     _frac for fractions in 0..1;
 *   - the library never prints and never aborts.  Hosts that embed it should call
 *     gsl_set_error_handler_off() once at start-up (the library only uses GSL's _e
 *     functions or validates input first, but GSL's default handler is process-global).
 */
#ifndef EPOCHCAST_H
#define EPOCHCAST_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define EC_API __attribute__((visibility("default")))
#else
#define EC_API
#endif

#define EC_VERSION "0.1.0"

/* ---------------------------------------------------------------------------------
 * Status codes.  Append only; never renumber.
 */
typedef enum ec_status {
    EC_OK = 0,       /* success */
    EC_ENOMEM = 1,   /* an allocation failed */
    EC_EINVAL = 2,   /* invalid argument or configuration value */
    EC_EDOM = 3,     /* a query outside the domain a model or table covers */
    EC_EPARSE = 4,   /* malformed input file (CSV, histogram, profile) */
    EC_EIO = 5,      /* a file could not be opened, read, written or renamed */
    EC_ENOTFOUND = 6,/* unknown GPU, model, host, key or column */
    EC_ENOTSUP = 7,  /* the combination is not supported by this build or model */
    EC_EMISUSE = 8,  /* API misuse: NULL handle, wrong order of calls */
    EC_ECANCELED = 9 /* a long operation stopped because the progress callback asked it to */
} ec_status;

/* A static, one-line description of a status code ("out of memory", ...). Never NULL. */
EC_API const char *ec_strerror(int status);

/* ---------------------------------------------------------------------------------
 * Context.
 *
 * The context owns the allocator, the last error message and the registries of
 * hardware profiles, host profiles and network presets loaded from a models/ folder.
 * One context must not be used by two threads at once; separate contexts may.
 */
typedef struct ec_ctx ec_ctx;

/* Allocator in the shape of lua_Alloc: with nsize == 0 free ptr and return NULL;
 * otherwise behave like realloc(ptr, nsize).  osize is the old size when known, else 0. */
typedef void *(*ec_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

/* Create a context.  alloc == NULL means realloc/free.  *out is NULL on failure.
 * Exceptional returns: EC_EMISUSE (out == NULL), EC_ENOMEM. */
EC_API int ec_ctx_new(ec_alloc_fn alloc, void *ud, ec_ctx **out);

/* Free a context and everything it owns.  NULL is a no-op. */
EC_API void ec_ctx_free(ec_ctx *ctx);

/* Declare that the context's allocator may be called from several threads at once (an atomic
 * counter, a locking arena).  The worker threads of the sweeps and layout searches run from
 * ctx then allocate through it too, so a host's memory budget covers every thread; without
 * it they use realloc/free (the host's allocator need not be thread-safe), as does a context
 * made with alloc == NULL.  Contexts loaded from ctx by those workers inherit it.  NULL is a
 * no-op. */
EC_API void ec_ctx_set_alloc_threadsafe(ec_ctx *ctx, int threadsafe);

/* The detailed message of the last failure on this context ("" if none).
 * Owned by the context, valid until the next call that fails. */
EC_API const char *ec_ctx_errmsg(const ec_ctx *ctx);

/* Load the data tables of a models/ folder: gpus.csv (hardware profiles),
 * hosts.csv (host CPU profiles), networks.csv (network presets), constants.csv
 * (software constants) and, when present, profile.csv (fitted parameters, which become
 * the context's fit; see ec_ctx_set_fit).  dir == NULL loads the folder that
 * ec_default_models_dir() finds.  May be called once per context.  Exceptional returns:
 * EC_EIO, EC_EPARSE (with file:line:column), EC_ENOMEM, EC_EMISUSE (already loaded),
 * EC_ENOTFOUND (dir == NULL and no folder found). */
EC_API int ec_ctx_load_models(ec_ctx *ctx, const char *dir);

/* Load into ctx (a new context, without models) what src has: the models/ folder src loaded,
 * read again, src's current fit (ec_ctx_set_fit, or the folder's profile.csv) and every
 * network defined on src (ec_network_define), so that ctx predicts exactly what src does:
 * the way to give each thread its own context.  src is only read, and must not change while
 * this runs.  Config.json networks (model=PATH) are read again when ctx's configs name them.
 * Exceptional returns: EC_EMISUSE (ctx already loaded, src NULL, ctx itself or without
 * models), those of ec_ctx_load_models, EC_ENOMEM; after a failure free ctx. */
EC_API int ec_ctx_load_from(ec_ctx *ctx, const ec_ctx *src);

/* The models/ folder that ec_ctx_load_models(ctx, NULL) loads, written to buf (n bytes,
 * NUL-terminated).  The first of these that applies:
 *   1. $EPOCHCAST_MODELS when set and not empty (as given, whether or not it exists);
 *   2. PREFIX/share/epochcast/models of the installation holding this code, found at run
 *      time from the file it was loaded from: libepochcast.so in PREFIX/lib, the epochcast
 *      CLI in PREFIX/bin, the Lua module in PREFIX/lib/lua/5.4 (an installed tree may move);
 *   3. run from the build tree: the models/ of the source tree it was built from;
 *   4. the install prefix configured at build time (programs that link libepochcast.a,
 *      LuaRocks trees);
 *   5. the models/ of the source tree it was built from.
 * Folders 2-5 count only when they hold gpus.csv.  Exceptional returns: EC_ENOTFOUND
 * (none; buf is ""), EC_EINVAL (n too small; buf is ""), EC_EMISUSE (buf NULL or n 0). */
EC_API int ec_default_models_dir(char *buf, size_t n);

/* Progress of a long operation: `what` is a static name ("load runs", "calibrate",
 * "cross-validate", "write"), done of total units so far (total 0 when not known).  Return 0
 * to go on; any other value stops the operation, which cleans up (an output file's temporary
 * is removed) and returns EC_ECANCELED.  Called from the thread running the operation, at
 * most a few thousand times a second; it must not call back into this context. */
typedef int (*ec_progress_fn)(void *ud, const char *what, double done, double total);

/* Install (fn == NULL: remove) the progress callback of a context.  Hosts use it for progress
 * bars, time budgets and interrupts (a flag set by a signal handler, read by fn): the library
 * keeps no global state, so this is how a signal reaches it.  Operations that call it:
 * ec_runs_load, ec_runs_next, ec_calibrate, ec_calibrate_cv, ec_optimize_run ("optimize": candidates
 * taken of all) and every output file's writes. */
EC_API void ec_ctx_set_progress(ec_ctx *ctx, ec_progress_fn fn, void *ud);
/* A host's own long loop (a sweep over predictions) reports through the same callback:
 * EC_ECANCELED, with a message naming what, when it asks to stop; EC_OK otherwise. */
EC_API int ec_ctx_progress(ec_ctx *ctx, const char *what, double done, double total);

/* ---------------------------------------------------------------------------------
 * Configuration: the one vocabulary shared by C, Lua, the CLI and run-record CSVs
 * (docs/DESIGN.md section 2).  A plain struct; initialise it with ec_config_init() and set
 * fields either directly or by key with ec_config_set().
 */
typedef enum ec_strategy {
    EC_STRATEGY_SINGLE = 0,
    EC_STRATEGY_DP,    /* torch.nn.DataParallel */
    EC_STRATEGY_DDP,   /* DistributedDataParallel */
    EC_STRATEGY_FSDP,  /* FullyShardedDataParallel (sharding=) */
    EC_STRATEGY_ZERO   /* DeepSpeed ZeRO (zero_stage=) */
} ec_strategy;

typedef enum ec_sharding {
    EC_SHARD_FULL = 0,     /* FULL_SHARD: parameters, gradients and optimizer states (ZeRO-3) */
    EC_SHARD_GRAD_OP,      /* SHARD_GRAD_OP: gradients and optimizer states; parameters kept after forward */
    EC_SHARD_HYBRID,       /* HYBRID_SHARD: full sharding within a node, replicas across nodes */
    EC_SHARD_NONE          /* NO_SHARD: like DDP */
} ec_sharding;

typedef enum ec_reduce_dtype { EC_REDUCE_AUTO = 0, EC_REDUCE_FP32, EC_REDUCE_BF16, EC_REDUCE_FP16 } ec_reduce_dtype;
/* zero_reduce: the collective of ZeRO-1/2's gradient buckets.  Megatron's distributed optimizer
 * (and the ZeRO paper) reduce-scatter them; DeepSpeed's stage_1_and_2.py all-reduces each bucket
 * and keeps its partition (deepspeedai/DeepSpeed#5758). */
typedef enum ec_zero_reduce { EC_ZERO_REDUCE_SCATTER = 0, EC_ZERO_ALL_REDUCE } ec_zero_reduce;
typedef enum ec_offload { EC_OFFLOAD_NONE = 0, EC_OFFLOAD_OPTIMIZER, EC_OFFLOAD_OPTIMIZER_AND_PARAMS } ec_offload;
typedef enum ec_pp_schedule { EC_PP_1F1B = 0, EC_PP_GPIPE, EC_PP_INTERLEAVED } ec_pp_schedule;
/* What counts as a layer when the pipeline splits the repeated layers (key pp_split): the layers
 * alone, or Megatron-Core's account_for_embedding_in_pipeline_split and/or
 * account_for_loss_in_pipeline_split, where the embedding and the loss each take one layer's
 * place on the first and last (virtual) stage. */
typedef enum ec_pp_split {
    EC_PP_SPLIT_LAYERS = 0, EC_PP_SPLIT_EMBEDDING, EC_PP_SPLIT_LOSS, EC_PP_SPLIT_EMBEDDING_LOSS
} ec_pp_split;
/* Which FSDP runs strategy=fsdp (key fsdp_api): FullyShardedDataParallel's FlatParameter (FSDP1:
 * each unit's parameters are views into the buffer the all-gather fills) or fully_shard (FSDP2:
 * per-parameter DTensor shards, copied into one all-gather buffer and out of it into each
 * parameter, and the gradients copied into one reduce-scatter buffer). */
typedef enum ec_fsdp_api { EC_FSDP_FLAT_PARAM = 0, EC_FSDP_FULLY_SHARD } ec_fsdp_api;
typedef enum ec_lora_targets {
    EC_LORA_QV = 0,        /* the query and value projections (PEFT's default for Llama-family models) */
    EC_LORA_ATTENTION,     /* q, k, v and the output projection */
    EC_LORA_ATTENTION_MLP, /* those and the MLP's (or experts') projections */
    EC_LORA_ALL_LINEAR     /* every linear layer but the output head (PEFT "all-linear") */
} ec_lora_targets;
typedef enum ec_base_precision {
    EC_BASE_SAME = 0,      /* frozen base weights in the precision's parameter dtype */
    EC_BASE_BF16, EC_BASE_FP16,
    EC_BASE_INT8,          /* bitsandbytes LLM.int8 */
    EC_BASE_NF4,           /* bitsandbytes 4-bit NormalFloat with double quantization (QLoRA) */
    EC_BASE_NF4_NODQ       /* the same without double quantization: an fp32 absmax per 64 weights
                              (Lightning's bnb.nf4, LitGPT --quantize bnb.nf4) */
} ec_base_precision;

/* checkpointing: 0, 1 (every layer's input kept, the layer recomputed) or selective (only
 * the attention core recomputed, Korthikanti et al.), or selective_op (torchtitan's per-op
 * selective checkpointing: each layer keeps its input, the outputs of every second matmul, of
 * the fused attention and of tensor parallelism's reduce-scatters; the rest is recomputed). */
#define EC_CKPT_SELECTIVE 2
#define EC_CKPT_OP 3

typedef enum ec_precision {
    EC_PREC_FP32 = 0, /* IEEE fp32 matmuls on CUDA cores */
    EC_PREC_TF32,     /* fp32 tensors, TF32 tensor-core matmuls (Ampere and later) */
    EC_PREC_AMP_FP16, /* torch.autocast fp16 with GradScaler, fp32 master weights */
    EC_PREC_AMP_BF16, /* torch.autocast bf16, fp32 master weights, no scaler */
    EC_PREC_BF16,     /* pure bf16 model and optimizer states */
    EC_PREC_FP16,     /* pure fp16 model and optimizer states */
    EC_PREC_AMP_FP8   /* Transformer Engine FP8 GEMMs under bf16 autocast (compute capability >= 8.9) */
} ec_precision;

typedef enum ec_padding { EC_PAD_MAX_LENGTH = 0, EC_PAD_DYNAMIC, EC_PAD_BUCKETED } ec_padding;

/* The optimizers' states, bytes and kernels are in core/src/model/optim.c (the catalogue). */
typedef enum ec_optimizer {
    EC_OPT_SGD = 0, EC_OPT_ADAM, EC_OPT_ADAMW, EC_OPT_ADAMW_FOREACH, EC_OPT_ADAMW_FUSED, EC_OPT_LAMB,
    /* Appended after 0.1.0: the names Hugging Face's TrainingArguments.optim uses, and more. */
    EC_OPT_ADAMW_TORCH,        /* torch.optim.AdamW, foreach on CUDA (HF's default since 4.26): as adamw_foreach */
    EC_OPT_ADAMW_TORCH_FUSED,  /* torch.optim.AdamW(fused=True): as adamw_fused */
    EC_OPT_ADAMW_HF,           /* transformers.AdamW: a Python loop over the parameters, ~9 kernels each */
    EC_OPT_ADAFACTOR,          /* transformers.Adafactor: factored second moment, no first moment, per-parameter loop */
    EC_OPT_ADAMW_8BIT,         /* bitsandbytes AdamW8bit: blockwise 8-bit states, one kernel per parameter */
    EC_OPT_PAGED_ADAMW_8BIT,   /* bitsandbytes PagedAdamW8bit: the same states in unified (pageable) memory */
    EC_OPT_SGD_MOMENTUM,       /* torch.optim.SGD(momentum>0), foreach: as sgd */
    EC_OPT_NONE,               /* no optimizer step (a benchmark loop that times forward + backward) */
    EC_OPT_PAGED_ADAMW,        /* bitsandbytes PagedAdamW (32-bit): fp32 states in unified (pageable) memory */
    EC_OPT_ADAMW_APEX_FUSED,   /* apex.optimizers.FusedAdam (HF adamw_apex_fused, DeepLearningExamples' BERT
                                  fp16): one multi-tensor kernel per chunk whatever torch_version; unscales apart */
    EC_OPT_BERTADAM            /* BertAdam (DeepLearningExamples' BERT fp32/TF32, pytorch-pretrained-bert): a
                                  Python loop over the parameters, each clipped alone by clip_grad_norm_ */
} ec_optimizer;

typedef enum ec_compile {
    EC_COMPILE_OFF = 0,           /* eager */
    EC_COMPILE_DEFAULT,           /* torch.compile(): Inductor fuses elementwise and normalization chains */
    EC_COMPILE_REDUCE_OVERHEAD,   /* mode="reduce-overhead": the same, replayed as CUDA graphs */
    EC_COMPILE_MAX_AUTOTUNE,      /* mode="max-autotune": autotuned GEMMs (Triton templates), CUDA graphs */
    EC_COMPILE_MAX_AUTOTUNE_NO_CUDAGRAPHS /* mode="max-autotune-no-cudagraphs" */
} ec_compile;

/* The activation of the MLP (and expert) layers as the training code computes it (key activation). */
typedef enum ec_act_impl {
    EC_ACTIMPL_NETWORK = 0, /* as the network's config says (hidden_act) */
    EC_ACTIMPL_GELU,        /* F.gelu: one kernel */
    EC_ACTIMPL_GELU_NEW,    /* GPT-2's tanh approximation in Python (gelu_new) */
    EC_ACTIMPL_GELU_PYTHON  /* the exact erf GELU in Python (gelu_python) */
} ec_act_impl;

typedef enum ec_memory_format {
    EC_MEMFMT_CONTIGUOUS = 0,     /* NCHW tensors (PyTorch's default) */
    EC_MEMFMT_CHANNELS_LAST       /* NHWC (model.to(memory_format=torch.channels_last)) */
} ec_memory_format;

/* The kernels an eager model runs (issue 18): what the framework around the layers fuses. */
typedef enum ec_kernels {
    EC_KERNELS_EAGER = 0,         /* one kernel per PyTorch op (Hugging Face, timm, torchvision) */
    EC_KERNELS_FUSED,             /* fused elementwise and normalization chains without torch.compile:
                                     flash-attn's training scripts (fused layer norm, bias-GELU / SwiGLU,
                                     RoPE, cross-entropy) */
    EC_KERNELS_TE                 /* Megatron-Core with Transformer Engine (NeMo, Megatron-LM,
                                     Megatron-Bridge): the fused chains, and weight-gradient GEMMs that
                                     accumulate into the fp32 gradient buffer (gradient_accumulation_fusion);
                                     models/constants.csv te_* rows */
} ec_kernels;

/* Transformer Engine's FP8 scaling recipe (precision=amp_fp8, kernels=te). */
typedef enum ec_fp8_recipe {
    EC_FP8_DELAYED = 0,           /* delayed scaling: each cast takes its scale from the amax history and
                                     records the amax in the same kernel (TE 1.x; NeMo 24.07, MLPerf) */
    EC_FP8_CURRENT                /* per-tensor current scaling (TE 2.x Float8CurrentScaling; Megatron-Bridge
                                     fp8_cs): an amax pass over each tensor before its cast, the norm's output
                                     stored in 16 bits with its amax and then cast (constants.csv te_fp8_*) */
} ec_fp8_recipe;

typedef enum ec_trainer {
    EC_TRAINER_PLAIN = 0,         /* a hand-written loop: forward, backward, step, zero_grad */
    EC_TRAINER_HF,                /* transformers.Trainer */
    EC_TRAINER_LIGHTNING          /* lightning.Trainer (automatic optimization) */
} ec_trainer;

typedef enum ec_data {
    EC_DATA_REAL = 0,             /* a DataLoader over a dataset: loading, collating, host-to-device copies */
    EC_DATA_SYNTHETIC,            /* batches made on the host for free: only the copy to the GPU */
    EC_DATA_ON_GPU                /* the batch is already on the GPU: no loader, no copy */
} ec_data;

typedef enum ec_attention {
    EC_ATTN_SDPA = 0, /* fused F.scaled_dot_product_attention (HF's default implementation) */
    EC_ATTN_EAGER,    /* explicit s x s scores, softmax and dropout kernels (HF "eager") */
    EC_ATTN_FLASH,    /* FlashAttention-2 (also spelled flash2): skips masked blocks (causal, sliding window),
                         native GQA */
    EC_ATTN_FLASH_TRITON, /* FlashAttention in Triton (llm-foundry attn_impl=triton, 2023; also spelled triton):
                             the same work as flash at the Triton kernel's rate */
    EC_ATTN_FLASH3,   /* FlashAttention-3 (Hopper only): the same work as flash */
    EC_ATTN_CUDNN,    /* cuDNN fused attention (Transformer Engine, SDPA's cuDNN backend): the same work as flash;
                         each kernel's rate per GPU architecture: models/attention.csv */
    EC_ATTN_FLASH1,   /* FlashAttention v1 (flash-attn 1.x, 2022-23 stacks): the same work as flash at its rate */
    EC_ATTN_FLASH4,   /* FlashAttention-4 (flash-attn-4, CuTe DSL; HF attn_implementation flash_attention_4): the
                         same work as flash, on the architectures attention.csv has flash4 rows for (Blackwell) */
    EC_ATTN_CUDNN_FP8 /* cuDNN's FP8 fused attention (Transformer Engine fp8_dot_product_attention, NeMo FP8_DPA):
                         the same work as flash on the FP8 tensor cores; precision=amp_fp8, Hopper and later */
} ec_attention;

typedef enum ec_tokenize { EC_TOKENIZE_UPFRONT = 0, EC_TOKENIZE_ON_THE_FLY } ec_tokenize;
typedef enum ec_tokenizer { EC_TOKENIZER_FAST = 0, EC_TOKENIZER_PYTHON } ec_tokenizer;

#define EC_NAME_MAX 64
#define EC_PATH_MAX 512
#define EC_CONFIG_MASK_WORDS 4 /* room for 256 keys */

/* How the loop clears the gradients between optimizer steps (key zero_grad). */
/* What clips the gradients (key clip_impl). */
typedef enum ec_clip_impl {
    EC_CLIP_TORCH = 0,      /* torch.nn.utils.clip_grad_norm_ as torch_version has it (foreach from 2.0, one
                               norm and mul_ per tensor before; before 1.10 a host sync on the clip factor) */
    EC_CLIP_MULTI_TENSOR    /* apex amp_C multi_tensor_l2norm, .item() on the host, multi_tensor_scale
                               (DeepLearningExamples' BERT GradientClipper, Megatron-LM) */
} ec_clip_impl;

/* What SDPA is given for a causal self-attention (key attn_mask). */
typedef enum ec_attn_mask {
    EC_ATTN_MASK_AUTO = 0, /* explicit with lengths= (a padding mask), and under torch.compile from
                              constants.csv hf_compile_mask_from_version (HF transformers' masking_utils
                              builds the causal mask whenever Dynamo traces); else none */
    EC_ATTN_MASK_NONE,     /* no mask: is_causal=True, the kernel skips the key blocks above the diagonal
                              (torchtitan, torchtune, HF in eager) */
    EC_ATTN_MASK_EXPLICIT  /* a materialized mask: every key block is computed and the backend is one that
                              takes a mask (models/sdpa_backends.csv attn_mask) */
} ec_attn_mask;

/* How Transformer Engine's context parallelism exchanges the sequence (key cp_comm_type). */
typedef enum ec_cp_comm {
    EC_CP_COMM_P2P = 0, /* a ring of key/value passes hidden under the attention (Megatron-Core's default) */
    EC_CP_COMM_A2A      /* all-to-all: Q, K and V from sequence to head shards before the attention and the
                           output back after it, not hidden (TE's AttnFuncWithCPAndQKVOA2A, Ulysses) */
} ec_cp_comm;

typedef enum ec_zero_grad {
    EC_ZERO_GRAD_AUTO = 0,    /* torch_version's default: zeros before 2.0, set_to_none from 2.0 */
    EC_ZERO_GRAD_SET_TO_NONE, /* freed: no gradient alive between steps */
    EC_ZERO_GRAD_ZEROS,       /* filled with zeros: alive beside the next step's activations */
    EC_ZERO_GRAD_NEVER        /* never cleared (they accumulate): alive across steps, no fill */
} ec_zero_grad;

/* What the training loop backpropagates (key loss). */
typedef enum ec_lora_fsdp_wrap {
    EC_LORA_FSDP_SEPARATE = 0,    /* the adapters in units of their own (torchtune, PEFT's fsdp policy) */
    EC_LORA_FSDP_BLOCK            /* in their block's unit beside the frozen weights (LitGPT): with
                                     use_orig_params the unit's flat gradient covers them all */
} ec_lora_fsdp_wrap;

typedef enum ec_loss_kind {
    EC_LOSS_KIND_CROSS_ENTROPY = 0, /* the task head's loss (cross entropy) */
    EC_LOSS_KIND_SUM,               /* logits.sum(), as memory and speed benchmarks do: no log-probabilities */
    EC_LOSS_KIND_CROSS_ENTROPY_FP32, /* cross entropy on logits upcast to fp32 in a 16-bit model (torchtune's
                                       output(h).float() and CEWithChunkedOutputLoss' logits.float()) */
    EC_LOSS_KIND_FUSED_CROSS_ENTROPY, /* a causal LM's cross entropy in one kernel on the 16-bit logits, its
                                        gradient written in place (apex/flash-attn xentropy; labels shifted
                                        by the data loader, so no shifted copy of the logits) */
    EC_LOSS_KIND_FUSED_LINEAR_CROSS_ENTROPY /* a causal LM's vocabulary projection and cross entropy together, one
                                               chunk of rows at a time, both gradients made in the forward
                                               (Liger-Kernel's LigerFusedLinearCrossEntropy): no logits kept */
} ec_loss_kind;

/* A software release (torch_version, cudnn_version) as one ordered number: 2.10 is 2010, after
 * 2.9 (2009), where the decimal 2.10 would equal 2.1. */
#define EC_RELEASE(major, minor) ((major) * 1000 + (minor))

typedef struct ec_config {
    char model[EC_PATH_MAX];     /* network preset id ("bert-base"), a config.json path or a folder holding one,
                                    or a network defined on the context (ec_network_define) */
    char task[EC_NAME_MAX];      /* "classify", "squad", "pretrain", "lm", "imagenet"; "" = preset default */
    char gpu[EC_NAME_MAX];       /* hardware profile id or alias, e.g. "a100-sxm4-80gb" */
    int num_gpus;                /* GPUs taking part [1] */
    ec_strategy strategy;        /* [single; ddp when num_gpus > 1 and not set] */
    char topology[EC_NAME_MAX];  /* "" = profile default; "nvlink", "pcie-switch", "pcie-host", "a16-board" */
    int nodes;                   /* machines [1] */
    double network_bytes_per_s;  /* inter-node bandwidth per node [0 = profile default] */
    double busbw_bytes_per_s;    /* measured NCCL all-reduce bus bandwidth within a node [0 = topology model] */
    int gradient_as_bucket_view; /* DDP: gradients are views into the all-reduce buckets, 0/1 [0] */
    ec_precision precision;      /* [fp32] */
    int batch_per_gpu;           /* micro-batch per GPU (samples) [required, >= 1] */
    int seq_len;                 /* tokens per sample, or the cap with dynamic padding [preset default] */
    ec_padding padding;          /* [max_length] */
    char lengths[EC_PATH_MAX];   /* length distribution spec: "lognormal(60,0.7)", ..., or a CSV path */
    int image_size;              /* pixels per side for vision models [preset default] */
    int grad_accum;              /* micro-steps per optimizer step [1] */
    ec_optimizer optimizer;      /* [adamw] */
    int checkpointing;           /* activation checkpointing, 0, 1, EC_CKPT_SELECTIVE or EC_CKPT_OP [0] */
    int compile;                 /* torch.compile mode, an ec_compile [EC_COMPILE_OFF] */
    ec_attention attention;      /* attention implementation of transformer presets [sdpa] */
    int num_workers;             /* DataLoader workers [0] */
    int prefetch_factor;         /* batches per worker in flight [2] */
    int pin_memory;              /* [0] */
    int persistent_workers;      /* [0] */
    ec_tokenize tokenize;        /* [upfront] */
    ec_tokenizer tokenizer;      /* [fast] */
    double sample_cpu_s;         /* explicit CPU seconds per sample, < 0 = derive [-1] */
    char host[EC_NAME_MAX];      /* host CPU profile id ["" = "default"] */
    double dataset_samples;      /* samples per epoch [0 = unknown, no epoch time] */
    int epochs;                  /* [1] */
    double eval_samples;         /* evaluation samples per epoch [0] */
    double checkpoints_per_epoch; /* checkpoint writes (weights + optimizer states) per epoch [0] */
    int data_synthetic;          /* data=, an ec_data: real, synthetic (no loader cost), on_gpu (no copy either) [real] */
    double gpu_step_s;           /* a measured GPU step time replacing the compute model [0 = model] */
    char profile[EC_PATH_MAX];   /* calibrated profile CSV ["" = none] */
    uint64_t seed;               /* simulation seed [fixed default] */
    double loop_ops_per_sample;  /* tiny eager ops the forward issues per sample from a Python loop [0] */
    double loop_syncs_per_sample;/* host-to-device tensor creations per sample in that loop, each a sync [0] */
    int target_len;              /* decoder tokens per sample of an encoder-decoder (T5) [0 = seq_len] */
    /* Parallel layouts and fine-tuning (LLM scale).  num_gpus = dp x tp x pp x cp. */
    int sharding;                /* ec_sharding, with strategy=fsdp [full_shard] */
    int reduce_dtype;            /* ec_reduce_dtype: gradient reduction dtype [auto: the parameters'] */
    int zero_stage;              /* 1, 2, 3 with strategy=zero [0 = not set] */
    int zero_reduce;             /* ec_zero_reduce: ZeRO-1/2's gradient bucket collective [reduce_scatter] */
    int offload;                 /* ec_offload [none] */
    int tp;                      /* tensor-parallel degree [1] */
    int sequence_parallel;       /* Megatron sequence parallelism with tp > 1, 0/1 [0] */
    int pp;                      /* pipeline-parallel stages [1] */
    int pp_schedule;             /* ec_pp_schedule [1f1b] */
    int pp_chunks;               /* model chunks per stage (interleaved schedule) [1] */
    int ep;                      /* expert-parallel degree (ep x etp divides tp x cp x dp) [1] */
    int cp;                      /* context-parallel degree (ring attention over the sequence) [1] */
    int gpus_per_node;           /* GPUs per machine [0 = constants.csv gpus_per_node] */
    char network[EC_NAME_MAX];   /* inter-node network preset of models/interconnects.csv ["" = default] */
    int lora_r;                  /* LoRA rank, 0 = full fine-tune [0] */
    int lora_targets;            /* ec_lora_targets [qv] */
    int base_precision;          /* ec_base_precision: the frozen base's weights [same] */
    double price_per_gpu_hour;   /* price of one GPU for one hour, overriding the price table's offers, in
                                    its currency (USD without a table) [0 = the table's cheapest offer] */
    char prices[EC_PATH_MAX];    /* price table CSV (models/README.md, prices.csv) ["" = the models/
                                    folder's prices.csv] */
    char provider[EC_NAME_MAX];  /* provider whose offers price the run ("aws", "lambda") ["" = any] */
    /* The ordinary stack (issue 19): layout, the training loop around the step, evaluation, the allocator. */
    ec_memory_format memory_format; /* CNN tensor layout [contiguous] */
    ec_trainer trainer;          /* the loop around the step: per-step host work and syncs [plain] */
    double max_grad_norm;        /* gradient clipping by total norm, 0 = off, < 0 = the trainer's default
                                    (hf: 1.0, plain and lightning: off) [-1] */
    int eval_batch;              /* evaluation batch per GPU [0 = batch_per_gpu] */
    int eval_every_steps;        /* an evaluation every so many optimizer steps [0 = once per epoch] */
    int expandable_segments;     /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, 0/1 [0] */
    int torch_release;           /* key torch_version: the PyTorch release as EC_RELEASE(major, minor) (2.10:
                                    2010), where its defaults differ: SDPA's backend; before 2.0 zero_grad()
                                    keeps zeroed gradients and torch.optim loops over the tensors instead of
                                    foreach [0 = current, 2.x] */
    int cudnn_release;           /* key cudnn_version: the cuDNN release as EC_RELEASE(major, minor) (9.13:
                                    9013) whose fused attention attention=cudnn runs at (models/attention.csv
                                    cudnn_version) [0 = the newest release measured] */
    ec_kernels kernels;          /* eager, fused or te kernels (ec_kernels) [eager]; torch.compile
                                    fuses them whatever this says */
    /* Issue 40: memory as PyTorch allocates it (docs/memory.md). */
    double memory_headroom_bytes; /* memory kept free beyond what must be allocated (key memory_headroom_gib,
                                    in GiB) [< 0 = auto: the allocator's usual slack] */
    int loss_chunks;             /* chunked cross entropy: the fp32 logits and their gradients one chunk at a
                                    time (torchtune's CEWithChunkedOutputLoss: 8) [1] */
    int optimizer_in_bwd;        /* each parameter's optimizer step runs in backward and frees its gradient
                                    (torchtune optimizer_in_bwd), 0/1 [0] */
    ec_loss_kind loss;           /* what the loop backpropagates [EC_LOSS_KIND_CROSS_ENTROPY] */
    ec_zero_grad zero_grad;      /* how the loop clears the gradients [EC_ZERO_GRAD_AUTO] */
    /* Issue 41: a run's length without an epoch (dataset_samples x epochs gives it otherwise). */
    double train_tokens;         /* tokens the run trains: run_s = train_tokens / tokens_per_s plus compilation
                                    [0 = dataset_samples x epochs] */
    double train_samples;        /* samples the run trains, the same with samples_per_s [0] */
    /* LoRA under FSDP as LitGPT runs it (bench/data/memory/README.md, litgpt). */
    int fsdp_no_sync;            /* gradient accumulation inside FSDP's no_sync() (Lightning Fabric's
                                    no_backward_sync, Accelerate's accumulate): every micro-step but the last
                                    keeps the unsharded gradients, 0/1 [0: reduce-scatter every micro-step] */
    int lora_fsdp_wrap;          /* ec_lora_fsdp_wrap: the FSDP units the LoRA adapters sit in [separate] */
    int quant_head;              /* a quantized base's output head quantized too (Lightning's
                                    BitsandbytesPrecision converts every nn.Linear), 0/1 [0] */
    /* Issue 40: what the loop keeps of the model's outputs. */
    int logits_held;             /* does the loop hold the logits the model returned through backward: 0 = auto
                                    (a plain loop does unless the loss is chunked), 1 = no (`del logits`,
                                    a loss function returning only the loss), 2 = yes (key values auto, 0, 1) */
    /* Issue 39: ZeRO-1/2 sharded over groups of the data-parallel ranks (apex DistributedFusedLAMB). */
    int zero_shard_size;         /* data-parallel ranks one copy of the optimizer states is sharded over
                                    (dwu_group_size): gradients reduce-scattered within such a group and
                                    all-reduced across the groups, parameters all-gathered within it
                                    [0 = every data-parallel rank] */
    /* LoRA's dropout (PEFT LoraConfig.lora_dropout, LitGPT's lora_dropout). */
    double lora_dropout;         /* dropout probability on each adapter's input; above 0 every adapted linear
                                    keeps its dropped copy of the input and the mask (nn.Dropout) for backward,
                                    at 0 PEFT uses nn.Identity [0] */
    /* Sequence packing (NeMo/Megatron-Bridge packed_sequence, flash-attn varlen, TE THD). */
    int packed_seq_len;          /* mean tokens of the sequences packed into each sample of seq_len tokens;
                                    a variable-length attention kernel attends within each sequence only
                                    (cu_seqlens), so each query sees about this many keys, not seq_len
                                    [0 = one sequence per sample] */
    /* Megatron-Core's pipeline split (Megatron-Bridge's Llama 3.1 405B and Qwen3 235B recipes). */
    int pp_split;                /* ec_pp_split: the embedding and the loss counted as a layer each of the
                                    pipeline's split [layers: the repeated layers alone] */
    /* Issue 39: BERT pre-training's MLM head on every position (NVIDIA DLE before its 2022 rewrite). */
    int mlm_all_positions;       /* 1: the pretrain head's transform and vocabulary projection run on every
                                    position, as HF BertForPreTraining and NVIDIA DLE run_pretraining.py of
                                    2019-2021 do; 0: on the masked positions only (mlm_mask_frac of them:
                                    DLE's dense_seq_output since 2022, MLPerf) [0] */
    /* CUDA graphs captured by the training script itself (torch.cuda.graphs / make_graphed_callables,
       NVIDIA's MLPerf BERT --use_cuda_graph), without torch.compile. */
    int cuda_graphs;             /* 0/1: the forward and backward kernels replayed from captured graphs, one
                                    replay per pass instead of one launch per kernel [0] */
    /* ZeRO-1/2 as Megatron's distributed optimizer runs it with --overlap-param-gather (NeMo's
       overlap_param_sync). */
    int overlap_param_gather;    /* 0/1: the updated parameters all-gathered under the next step's forward,
                                    chunk by chunk under an interleaved pipeline, else bucket by bucket;
                                    0: after the optimizer step, exposed [0] */
    /* Gradient buckets as apex's distributed optimizers cut them (--dwu-num-blocks). */
    int grad_buckets;            /* the gradients reduced in this many equal buckets, each launched when
                                    backward has filled it; 1: one reduction after backward (apex without
                                    --dwu-overlap-reductions); 0: DDP's bucket_cap_mb buckets [0] */
    /* PyTorch's FSDP2 (torchtitan, torchtune): the copies around its collectives. */
    int fsdp_api;                /* ec_fsdp_api: the FSDP implementation under strategy=fsdp [flat_param] */
    /* Megatron-Core's MoE parallel folding (expert_tensor_parallel_size): the expert layers laid out
       apart from the dense ones, etp x ep x edp = tp x cp x dp GPUs of each pipeline stage. */
    int etp;                     /* expert tensor-parallel degree: each routed expert's width split over
                                    etp GPUs (consecutive ranks), the expert-parallel group etp ranks
                                    apart; 0: etp = tp, the experts inside the tensor-parallel region [0] */
    /* apex DistributedFusedLAMB without parameter views into its flat buffer
       (set_param_views_to_flat_buffer=False: NVIDIA's MLPerf BERT with --dwu-overlap-reductions). */
    int zero_flat_copies;        /* 0/1: each gradient copied into the optimizer's flat buffer as backward
                                    produces it, and the all-gathered parameters copied back into the
                                    model's tensors after the gather, on the compute stream [0] */
    /* Megatron-Core's batch-level expert-parallel all-to-all overlap (overlap_moe_expert_parallel_comm,
       Megatron-Bridge's moe_a2a_overlap): one micro-batch's forward and the previous one's backward
       run layer by layer together, each one's dispatch and combine under the other's compute. */
    int moe_a2a_overlap;         /* 0/1 [0] */
    int fp8_recipe;              /* ec_fp8_recipe: Transformer Engine's FP8 scaling under precision=amp_fp8
                                    kernels=te [EC_FP8_DELAYED] */
    /* Transformer Engine's userbuffers (Megatron --tp-comm-overlap, NeMo ub_tp_comm_overlap,
       Megatron-Bridge CommOverlapConfig tp_comm_overlap): with kernels=te and sequence_parallel. */
    int tp_comm_overlap;         /* 0/1: the sequence-parallel all-gathers run under the column-parallel
                                    GEMMs that read them, the reduce-scatters under the row-parallel GEMMs
                                    that make them (and their backward all-gathers under the dgrad) [0] */
    char tp_overlap_cfg[EC_NAME_MAX]; /* with tp_comm_overlap: the userbuffers configuration, an id of
                                    models/tp_overlap.csv (NeMo ub_tp_comm_overlap_cfg, Megatron-Bridge
                                    tp_comm_overlap_cfg; te_defaults: none named) ["" = the H100 Llama 3 70B
                                    one, h100_h8192_tp4_mbs1_seqlen8192] */
    /* The DDP gradient bucket (torch DDP bucket_cap_mb; apex DistributedDataParallel message_size x
       the gradient's bytes, e.g. NVIDIA's 2019 BERT pre-training: 250M fp16 elements = 476.8 MiB). */
    double bucket_cap_mb;        /* MiB; the first bucket stays DDP's 1 MiB when smaller; 0: DDP's 25 MiB,
                                    constants.csv ddp_bucket_bytes [0] */
    /* How the code computes the MLP's activation, when it is not how the network's config names it
       (DeepLearningExamples' BERT before 2022 writes its GELU as Python ops). */
    ec_act_impl activation;      /* [network] */
    /* Who clips the gradients when max_grad_norm > 0. */
    ec_clip_impl clip_impl;      /* [EC_CLIP_TORCH] */
    /* A pure 16-bit model (precision fp16/bf16) whose optimizer steps an fp32 master copy, as apex amp
       O2 runs it (DeepLearningExamples' BERT fp16): fp32 states and master weights, the gradients
       copied into fp32 master gradients before the step and the master weights back after it. */
    int master_weights;          /* 0/1 [0] */
    /* The mask a causal self-attention hands SDPA (attention=sdpa): none (is_causal) or explicit. */
    ec_attn_mask attn_mask;      /* [EC_ATTN_MASK_AUTO] */
    /* Transformer Engine holds the blocks' linear weights as FP8 parameters (NeMo fp8_params,
       Megatron --fp8-param-gather, TE fp8_model_init): a byte per weight instead of the 16-bit
       copy, transposed once a step instead of cast; with precision=amp_fp8, kernels=te and
       strategy=zero or fsdp (the fp32 main copy in the optimizer), else named as ignored. */
    int fp8_params;              /* 0/1 [0] */
    /* Megatron-Core keeps the SwiGLU's input (the gate's and up's outputs) for backward as
       float8_e4m3fn, cast there and back (activation_func_fp8_input_store, MLPerf's FP8_ACT):
       a byte per kept element; with kernels=te, else named as ignored. */
    int fp8_act_store;           /* 0/1 [0] */
    /* Context parallelism's exchange under kernels=te (Megatron-Core cp_comm_type): p2p or a2a. */
    ec_cp_comm cp_comm_type;     /* [EC_CP_COMM_P2P] */
    /* Megatron-Core's CPU offloading of activations (cpu_offloading_num_layers, activations only):
       the first N repeated layers' saved tensors go to pinned host memory after each layer's forward
       and come back before its backward, each copy hidden under the next layer's work as far as the
       GPU's host link allows; without checkpointing and pipeline parallelism, else named as ignored. */
    int act_offload_layers;      /* layers, 0..65535 [0] */
    /* NCCL's CTA (channel) limit on the communicators of the data-parallel (dp x cp) gradient and
       parameter collectives, of context parallelism's exchange and of tensor parallelism's
       (NCCL_CFG_PATH's per-communicator max_ctas, NCCL_MAX_CTAS): each group's bus and peer-to-peer
       bandwidth at most that many channels' rate (models/constants.csv nccl_channel_*); 0: NCCL's
       own channel count. */
    int nccl_dp_ctas;            /* channels, 0..64 [0] */
    int nccl_cp_ctas;            /* channels, 0..64 [0] */
    int nccl_tp_ctas;            /* channels, 0..64 [0] */
    uint64_t set_mask[EC_CONFIG_MASK_WORDS]; /* bit i % 64 of word i / 64 set when key i was given
                                    explicitly (ec_config_key_name(i)); read it with ec_config_is_set */
} ec_config;

/* Defaults of docs/DESIGN.md section 2.  batch_per_gpu is 0 (unset) and must be given. */
EC_API void ec_config_init(ec_config *cfg);

/* Set one key from its text form, as on the CLI ("batch_per_gpu", "16").  Names are checked
 * here: task and topology always; gpu and host once ctx has its models loaded (before that
 * the check waits for ec_predict's resolve).
 * Exceptional returns: EC_ENOTFOUND for an unknown key (message names the nearest
 * valid key) or an unknown task/topology/gpu/host name (message names the nearest or the
 * ids it prefixes), EC_EINVAL for a value that does not parse or is out of range (message
 * names the key, the value and the valid range or choices). */
EC_API int ec_config_set(ec_ctx *ctx, ec_config *cfg, const char *key, const char *value);

/* Parse "key=value" (one CLI word). */
EC_API int ec_config_set_word(ec_ctx *ctx, ec_config *cfg, const char *word);

/* The text form of a key's value ("" when it is a default empty string).
 * Returns EC_ENOTFOUND for an unknown key. */
EC_API int ec_config_get(const ec_config *cfg, const char *key, char *buf, size_t n);
/* The same for key i (ec_config_key_name(i)): a writer of many rows skips the name lookup.
 * Returns EC_ENOTFOUND for i >= ec_config_key_count(). */
EC_API int ec_config_get_at(const ec_config *cfg, size_t i, char *buf, size_t n);

/* 1 when key i (ec_config_key_name(i)) was given explicitly, 0 when it holds its default. */
EC_API int ec_config_is_set(const ec_config *cfg, size_t i);
/* Index of a key by name, or -1 when there is no such key. */
EC_API int ec_config_key_index(const char *key);

/* The config keys in their stable order (docs/DESIGN.md section 2), for CSV headers and help. */
EC_API size_t ec_config_key_count(void);
EC_API const char *ec_config_key_name(size_t i);
EC_API const char *ec_config_key_help(size_t i);
/* 1 when key i takes a software release (torch_version, cudnn_version: "2.10"), whose whole-number
 * minor a decimal cannot carry (2.10 == 2.1): a binding refuses a float for it and asks for text. */
EC_API int ec_config_key_is_release(size_t i);

/* The configuration as ec_predict reads it: out = cfg with every value a prediction derives
 * when it is not given filled in -- gpu and host as profile ids, strategy (ddp for several
 * GPUs), nodes, topology (the GPU's default), and for a network its task, seq_len (text),
 * image_size (vision) and target_len (encoder-decoder) -- so a CSV row or a Lua table says what was simulated
 * rather than a blank or a default that was not used.  set_mask is copied unchanged (derived
 * values stay "not given").  out may be cfg.  Exceptional returns: those of ec_predict's
 * checks (EC_EMISUSE models not loaded, EC_ENOTFOUND, EC_EINVAL). */
EC_API int ec_config_resolve(ec_ctx *ctx, const ec_config *cfg, ec_config *out);

/* ---------------------------------------------------------------------------------
 * Prediction.
 */
typedef enum ec_bottleneck {
    EC_BOTTLENECK_COMPUTE = 0,   /* GPU kernels fill the step */
    EC_BOTTLENECK_CPU,           /* the host cannot issue kernels fast enough */
    EC_BOTTLENECK_INPUT,         /* the input pipeline (DataLoader) starves the GPU */
    EC_BOTTLENECK_H2D,           /* host-to-device copies that do not overlap */
    EC_BOTTLENECK_COMM           /* exposed gradient communication */
} ec_bottleneck;

EC_API const char *ec_bottleneck_name(ec_bottleneck b);

/* Warnings, a bit set in ec_result.warnings; the text is in ec_result.warning_text. */
#define EC_WARN_BF16_EMULATED   (1u << 0) /* bf16 on a GPU without bf16 tensor cores */
#define EC_WARN_TF32_NO_EFFECT  (1u << 1) /* tf32 before Ampere: runs as fp32 */
#define EC_WARN_FP16_NO_TENSOR  (1u << 2) /* fp16 on a GPU without tensor cores */
#define EC_WARN_DOES_NOT_FIT    (1u << 3) /* predicted peak memory exceeds capacity */
#define EC_WARN_SEQ_TRUNCATED   (1u << 4) /* seq_len above the preset's position limit */
#define EC_WARN_UNSUPPORTED_GPU (1u << 5) /* the GPU cannot run current PyTorch (Kepler) */
#define EC_WARN_MODEL_DEFAULTED (1u << 6) /* a hardware figure came from the architecture, not a measurement */
#define EC_WARN_MEMORY_UNKNOWN  (1u << 7) /* gpu_step_s without a model: memory not predicted */
#define EC_WARN_NEAR_CAPACITY   (1u << 8) /* several GPUs with peak memory close to capacity */
#define EC_WARN_KEY_IGNORED     (1u << 9) /* a key given explicitly has no effect: it does not apply to this
                                             model, or this configuration never reads it */
#define EC_WARN_PARAMS_MISMATCH (1u << 10) /* the shapes' parameter count differs from the published one by > 0.5% */
#define EC_WARN_LENGTHS_UNPADDED (1u << 11) /* lengths= with padding=max_length: padded to seq_len anyway */
#define EC_WARN_NETWORK_DEFAULTED (1u << 12) /* several nodes, no network=: the GPU's reference system's network assumed */
#define EC_WARN_FP32_CONVS      (1u << 13) /* fp32 convolutions where PyTorch's default runs them in TF32 */
#define EC_WARN_MEMORY_EDGE     (1u << 14) /* fits only without the memory headroom: at the edge of out-of-memory */
#define EC_WARN_TORCH_UNKNOWN   (1u << 15) /* torch_version outside the releases models/constants.csv describes */
#define EC_WARN_UNCALIBRATED    (1u << 16) /* the GPU's architecture (or the unit its matmuls run on) has no calibration
                                             runs in the fit in use: global scales, interval widened */
#define EC_WARN_PAGED_EVICTED   (1u << 17) /* a paged optimizer's states do not all fit on the GPU: the driver migrates
                                             them over PCIe every step, which the step time does not include */
#define EC_WARN_COMPILE_MASK    (1u << 18) /* torch.compile with attn_mask=auto: Hugging Face hands SDPA the causal
                                             mask as a tensor, every key block computed (key attn_mask) */
#define EC_WARN_PCIE_HOST_HOP   (1u << 19) /* more than two PCIe GPUs a node, peer-to-peer: NCCL's ring crosses the host
                                             between root ports or sockets, at the host's rate (models/hosts.csv) */
#define EC_WARN_THROUGH_HOST    (1u << 20) /* NCCL's ring through host memory priced at the GPU's link: the host
                                              named has no through-host rate of its own (models/hosts.csv) */

/* Where the time of one optimizer step goes, per GPU (GPU 0 under dp). */
typedef struct ec_breakdown {
    double forward_s;       /* forward kernels (incl. recompute under checkpointing) */
    double backward_s;      /* backward kernels */
    double optimizer_s;     /* optimizer kernels (incl. GradScaler unscale) */
    double h2d_s;           /* host-to-device copy of the batch, and act_offload_layers' copies to the host
                               and back, the part not overlapped */
    double cpu_overhead_s;  /* GPU idle while the CPU issues kernels or syncs */
    double loader_s;        /* GPU idle waiting for the input pipeline */
    double comm_s;          /* communication that adds to the optimizer step: DDP's all-reduce
                               left after backward, DataParallel's scatter, broadcast, gather
                               and reduce, and the wait for the slowest GPU */
} ec_breakdown;

/* Peak GPU memory by part, per GPU (GPU 0 under dp). */
typedef struct ec_memory {
    double weights_bytes;       /* parameters (and fp32 master copy for pure 16-bit) */
    double grads_bytes;         /* gradients (+ DDP bucket copy) */
    double optimizer_bytes;     /* optimizer states and step temporaries */
    double cast_cache_bytes;    /* autocast 16-bit weight copies */
    double activations_bytes;   /* tensors saved for backward at the peak */
    double workspace_bytes;     /* cuBLAS/cuDNN workspaces, loss/logit temporaries */
    double context_bytes;       /* CUDA context and loaded kernels (+ NCCL) */
    double allocator_bytes;     /* caching-allocator rounding and fragmentation */
    double peak_bytes;          /* the sum above: what nvidia-smi would show at the peak (= nvml_bytes) */
    double capacity_bytes;      /* the GPU's memory */
    int fits;                   /* needed_bytes + headroom_bytes <= capacity: what must be allocated at
                                   the peak (tensors in the allocator's blocks, the fragmentation the
                                   allocator's free-and-retry cannot undo, context and NCCL) fits with
                                   the headroom left free (at_edge: only without it) */
    /* Appended for issue 19: the three readings users compare with (README "Memory"). */
    double allocated_bytes;     /* torch.cuda.max_memory_allocated(): tensors, in the allocator's blocks */
    double reserved_bytes;      /* torch.cuda.max_memory_reserved(): the caching allocator's segments */
    double nvml_bytes;          /* nvidia-smi / NVML used memory: reserved + CUDA context and loaded
                                   kernels + NCCL + memory outside PyTorch's allocator (paged states) */
    /* Appended for issue 40 (docs/memory.md).  When the step can run (needed_bytes <= capacity):
     * allocated <= reserved <= capacity - context - paged, and nvml = reserved + context + paged
     * <= capacity.  When it cannot, the readings are what it would need. */
    int peak_phase;             /* ec_peak_phase: the moment of the step that holds the peak */
    double needed_bytes;        /* what must be allocated at the peak, with the fragmentation an
                                   out-of-memory retry cannot free, the context and NCCL */
    double headroom_bytes;      /* kept free on top of needed_bytes: memory_headroom_gib, or by default
                                   the caching allocator's usual slack beyond that fragmentation */
    int at_edge;                /* needed_bytes fits the capacity, needed + headroom does not: it may
                                   run, but at the edge of out-of-memory (fits = 0) */
} ec_memory;

/* The moment of a training step that holds its peak memory (ec_memory.peak_phase). */
typedef enum ec_peak_phase {
    EC_PEAK_BACKWARD_START = 0, /* start of backward: every activation and the loss's gradients */
    EC_PEAK_BACKWARD_END,       /* end of backward: every gradient and the embedding table's */
    EC_PEAK_ACCUMULATE,         /* backward beside the gradients accumulated over earlier micro-steps */
    EC_PEAK_OPTIMIZER           /* the optimizer step: gradients and the step's temporaries */
} ec_peak_phase;
/* "backward start", "backward end", "backward with accumulated gradients", "optimizer step". */
EC_API const char *ec_peak_phase_name(int phase);

#define EC_WARNING_TEXT_MAX 512

/* Where a step's communication went (parallel layouts), seconds per optimizer step on GPU 0.
 * Exposed: on the critical path; collectives hidden behind compute are in comm_total_s only.
 * Their sum (with straggler_s) is breakdown.comm_s. */
typedef struct ec_comm_parts {
    double tp_s;          /* tensor parallel: all-reduces (all-gathers and reduce-scatters with
                             sequence_parallel) on the compute stream, recompute included */
    double cp_s;          /* context parallel: the ring's key/value exchange not hidden by attention */
    double ep_s;          /* expert parallel: token all-to-alls */
    double dp_reduce_s;   /* gradient buckets (DDP all-reduce, ZeRO-1/2 reduce-scatter) still running
                             after backward */
    double shard_wait_s;  /* FSDP / ZeRO-3: waits for parameter all-gathers and gradient reductions;
                             ZeRO-1/2: the all-gather of updated parameters after the step */
    double overlap_s;     /* compute slowed by collectives running beside it */
    double offload_s;     /* CPU offload: PCIe traffic and the host optimizer's update */
    double pp_bubble_s;   /* pipeline fill and drain (GPUs of a stage idle) */
    double pp_p2p_s;      /* activations and their gradients sent between pipeline stages */
} ec_comm_parts;

typedef struct ec_result {
    double step_s;            /* wall time of one optimizer step (grad_accum micro-steps) */
    double samples_per_s;     /* training throughput summed over all GPUs */
    double epoch_s;           /* one epoch, 0 when dataset_samples is unknown */
    double run_s;             /* all epochs plus one-time costs, 0 when unknown */
    double gpu_util_frac;     /* share of wall time with a kernel running (nvidia-smi) */
    ec_bottleneck bottleneck;
    double gpu_busy_s;        /* kernel time per step */
    double cpu_issue_s;       /* host time to issue one step */
    double flop_per_step;     /* model FLOPs of one optimizer step on one GPU */
    double mfu_frac;          /* model FLOPs / (step time x dense peak at that precision) */
    double kernels_per_step;  /* GPU kernels launched per optimizer step */
    double steps_per_epoch;   /* optimizer steps per epoch, 0 when unknown */
    double epoch_p10_s, epoch_p50_s, epoch_p90_s; /* epoch time interval */
    ec_breakdown breakdown;
    ec_memory memory;
    unsigned warnings;        /* EC_WARN_* bits */
    char warning_text[EC_WARNING_TEXT_MAX]; /* "; "-separated human text */
    /* Multi-GPU (docs/DESIGN.md 3.3).  The fields above describe GPU 0, which under dp does more. */
    double single_gpu_samples_per_s; /* the same config on one GPU (strategy single) */
    double scaling_efficiency_frac;  /* samples_per_s / (num_gpus x single_gpu_samples_per_s); 1 on one GPU */
    double busbw_bytes_per_s;        /* ring bus bandwidth of the topology; 0 on one GPU */
    double comm_total_s;             /* communication time per step, hidden behind backward or not */
    double straggler_s;              /* per step, waiting for the slowest GPU (part of breakdown.comm_s) */
    double other_gpu_busy_s;         /* kernel time per step of each of GPUs 1..n-1 (= gpu_busy_s unless dp) */
    double other_gpu_peak_bytes;     /* peak memory of each of GPUs 1..n-1 (= memory.peak_bytes unless dp) */
    /* Appended after 0.1.0. */
    double step_p10_s, step_p90_s;   /* step time interval from the model's held-out error (profile
                                        error_log_sd); both step_s when the fit has none */
    /* Cost (price.c): in the currency of the price (USD for models/prices.csv); 0 when unknown
     * (no price for this GPU, or no run: none of dataset_samples, train_tokens, train_samples). */
    double price_per_hour;           /* the whole job per hour: nodes x the chosen offer's price, or
                                        num_gpus x price_per_gpu_hour */
    double cost_per_epoch;           /* epoch_s x price_per_hour / 3600 */
    double cost_run;                 /* run_s x price_per_hour / 3600 */
    char price_offer[160];           /* "provider instance (gpus x gpu, date)" of the offer, "price_per_gpu_hour"
                                        when given, "" when no price is known */
    /* Parallel layouts (LLM scale). */
    double tokens_per_s;             /* tokens trained per second over all GPUs (samples x sequence; images
                                        for an image network) */
    double gpu_s_per_token;          /* GPU-seconds one token costs: num_gpus / tokens_per_s */
    double hfu_frac;                 /* hardware FLOPs utilization: mfu_frac with checkpointing's
                                        recomputed forward counted */
    double host_pinned_bytes;        /* pinned host memory per GPU that CPU offload needs */
    ec_comm_parts comm;              /* exposed communication by kind */
    int dp, tp, pp, cp, ep;          /* the layout: data, tensor, pipeline, context, expert degrees */
    /* Appended for issue 19. */
    double eval_s;                   /* evaluation time per epoch (eval_samples, eval_batch, eval_every_steps) */
    double eval_step_s;              /* one evaluation batch per GPU: forward only, its copy and its loader */
    double first_step_s;             /* the first optimizer step: torch.compile's compilation (and CUDA graph
                                        capture) plus a step */
    double train_s;                  /* epochs x epoch_s plus compilation: what a trainer's train_runtime
                                        reports (no upfront tokenization); 0 when the epoch is unknown */
    /* Issue 41: the run in hours and money (price.c, predict.c). */
    double train_time_h;             /* run_s in hours: what the rented GPUs are held for (one-time costs
                                        included); 0 when unknown (no dataset_samples, train_tokens or
                                        train_samples) */
    double cost_usd;                 /* cost_run when the price is in US dollars (models/prices.csv), 0 otherwise */
    double cost_per_million_tokens;  /* price_per_hour / 3600 x 1e6 / tokens_per_s, in price_currency: the
                                        steady cost of training one million tokens (images for an image
                                        network); 0 when no price is known */
    char price_currency[16];         /* the price's currency code ("USD"); "" when no price is known */
} ec_result;

/* Predict one configuration.  The result is fully written on EC_OK.
 * A configuration that does not fit in memory is a result (memory.fits = 0), not an error.
 * Exceptional returns: EC_EMISUSE (models not loaded), EC_ENOTFOUND (unknown gpu, model,
 * task or host; the message names the nearest valid ids), EC_EINVAL (missing batch,
 * impossible combination), EC_ENOMEM. */
EC_API int ec_predict(ec_ctx *ctx, const ec_config *cfg, ec_result *res);

/* One pipeline stage of a configuration (pp stages; one covering the whole network when pp = 1),
 * priced at seq_len (the longest padded length). */
typedef struct ec_stage {
    int first_layer, layers;   /* the repeated layers it holds, 0-based in order (the embeddings go
                                  with the first stage, the head with the last) */
    double micro_s;            /* one micro-batch's forward and backward on it, sends excluded */
    double in_flight;          /* micro-batches whose activations it holds at once (the schedule's) */
    ec_memory memory;          /* peak memory of each of its GPUs, by part */
} ec_stage;

/* The stages of cfg into out[0..cap): *n = pp (1 without a pipeline).  EC_EINVAL when cap is
 * smaller; the errors of ec_predict otherwise. */
EC_API int ec_predict_stages(ec_ctx *ctx, const ec_config *cfg, ec_stage *out, size_t cap, size_t *n);

/* Write a Chrome Trace Event JSON file (chrome://tracing, ui.perfetto.dev) of the first
 * max_steps micro-steps of the simulated epoch (max_steps <= 0: 20; at most
 * EC_TRACE_MAX_STEPS): the main thread's dispatch and waits, the pin-memory thread and each
 * DataLoader worker; the GPU's step phases as the step model prices them (copy, forward,
 * backward, exposed exchanges, optimizer step, bookkeeping) and its collectives (each FSDP
 * unit's all-gathers and reduce-scatter, each DDP bucket's all-reduce); one track per pipeline
 * stage; an evaluation after the steps when the run has one (docs/cli.md#traces).  Complete
 * events with ts and dur in microseconds.  Written through ec_outfile.  Exceptional returns:
 * those of ec_predict, EC_EINVAL (max_steps above the limit), EC_EIO, EC_ENOMEM, EC_ECANCELED. */
#define EC_TRACE_MAX_STEPS 10000
EC_API int ec_trace_write(ec_ctx *ctx, const ec_config *cfg, const char *path, int max_steps);

/* Largest batch_per_gpu in 1..limit that fits in memory (bisection over ec_predict's memory
 * model).  *out_batch is 0 when not even batch 1 fits.  limit <= 0 means 65536. */
EC_API int ec_max_batch(ec_ctx *ctx, const ec_config *cfg, int limit, int *out_batch);

/* ---------------------------------------------------------------------------------
 * Sweeps: every point of a product of config-key values, on as many threads as asked.
 *
 * A sweep is a base configuration and axes, each a config key and the text of its values
 * (checked once, through ec_config_set); point p of the product is the base with each axis'
 * value set, the last axis varying fastest.  ec_sweep_next hands the points back one by one
 * in that order whatever the number of threads: on one, the caller's context predicts a run of
 * 16 points at a time inside ec_sweep_next; with several, each thread predicts chunks of
 * consecutive points on its own context (ec_ctx_load_from) ahead of the caller into a ring of
 * a few chunks per thread, so a sweep of millions of points streams in bounded memory and
 * gives, byte for byte, the points one thread gives.  A point the library refuses is a point
 * with its status and message, not an error of the sweep.
 *
 *   ec_sweep *sw;  ec_sweep_point pt;
 *   ec_sweep_new(ctx, &base, NULL, &sw);  ec_sweep_axis(sw, "gpu", gpus, 3);  ...
 *   while (!ec_sweep_done(sw) && ec_sweep_next(sw, &pt) == EC_OK) use(&pt);
 *   ec_sweep_free(sw);
 */
typedef struct ec_sweep ec_sweep;

typedef struct ec_sweep_opts {
    int threads;          /* threads that predict; 0: the cores this process may run on, one per 2,048
                             points at most [0] */
    int resolve;          /* 1: give each predicted point ec_config_resolve's view of its config too [0] */
    size_t part, parts;   /* predict only the blocks b (points b x block .. (b + 1) x block - 1) with
                             b % parts == part: one process's share of a sweep split over several
                             (MPI ranks) [0, 1] */
    size_t block;         /* points per block [256] */
} ec_sweep_opts;

EC_API void ec_sweep_opts_init(ec_sweep_opts *opts);
/* A sweep over base (copied) with opts (copied; NULL: the defaults); it must not outlive ctx,
 * and ctx must not be used by another thread while ec_sweep_next runs.  Exceptional returns:
 * EC_EMISUSE, EC_EINVAL (threads < 0, part >= parts, block 0), EC_ENOMEM. */
EC_API int ec_sweep_new(ec_ctx *ctx, const ec_config *base, const ec_sweep_opts *opts, ec_sweep **out);
/* Stops its threads (also mid-sweep) and frees it.  NULL is a no-op. */
EC_API void ec_sweep_free(ec_sweep *sw);
/* Add an axis before the first point: a key and n values in their text form, copied, each
 * checked against the base (EC_ENOTFOUND / EC_EINVAL with ec_config_set's message); EC_EINVAL
 * for no values, a key given twice, a 17th axis or a product over SIZE_MAX points. */
EC_API int ec_sweep_axis(ec_sweep *sw, const char *key, const char *const *values, size_t n);
/* Points of the product (0 without axes), and those this part predicts. */
EC_API size_t ec_sweep_count(const ec_sweep *sw);
EC_API size_t ec_sweep_share(const ec_sweep *sw);
/* Threads predicting (known after the first ec_sweep_next; 1: on the caller's thread; N > 1: N - 1
 * worker threads and the caller's, inside ec_sweep_next, when the next chunk is not ready). */
EC_API int ec_sweep_threads(const ec_sweep *sw);

typedef struct ec_sweep_point {
    size_t index;                /* position in the product, 0-based */
    const size_t *values;        /* each axis' value index, in the order the axes were added */
    const ec_config *config;     /* the point's configuration (the base with the axes' values) */
    const ec_config *resolved;   /* with opts.resolve and status EC_OK: ec_config_resolve of it; else config */
    int status;                  /* ec_predict's status */
    const ec_result *result;     /* the prediction when status is EC_OK */
    const char *message;         /* why the point was refused; "" with EC_OK */
} ec_sweep_point;

/* The next point of this part, in order.  The pointers stay valid until the next call or
 * ec_sweep_free.  The first call starts the threads.  Exceptional returns: EC_EMISUSE (the
 * sweep is done, or the library's misuse inside a point), EC_ENOMEM (the sweep stops), EC_EINVAL
 * (no axes), errors loading the threads' contexts; the message on ctx. */
EC_API int ec_sweep_next(ec_sweep *sw, ec_sweep_point *out);
/* 1 when every point of this part has been handed out (or the sweep stopped on an error). */
EC_API int ec_sweep_done(const ec_sweep *sw);

/* ---------------------------------------------------------------------------------
 * Layout search: the best parallel layouts of a model for a global batch on a GPU budget.
 *
 * A search is a base configuration (model, seq_len, precision, ...) and lists of values for
 * the keys it searches (ec_optimize_set): gpu, num_gpus, global_batch or global_batch_tokens
 * (one or several), tp, pp, cp, ep, batch_per_gpu (the micro-batch; grad_accum follows from
 * the global batch), checkpointing, strategy with sharding and zero_stage, pp_schedule.  A key
 * left out is searched over its defaults (ec_optimize_key_help).  Every combination is a
 * candidate; candidates whose degrees cannot divide the GPUs, the global batch or the
 * network (ec_predict's layout checks), and those whose model states alone (weights,
 * gradients and optimizer states per GPU, a lower bound of the peak) exceed the GPU's
 * memory, are pruned before their step is priced; the others are predicted (ec_predict) on
 * opts threads and the layouts that fit are ranked by the goal.
 *
 *   ec_optimize *o;  ec_optimize_new(ctx, &base, &o);  ec_optimize_set(o, "num_gpus", "64");
 *   ec_optimize_set(o, "global_batch_tokens", "4194304");  ec_optimize_run(o);
 *   for (i = 0; i < ec_optimize_count(o) && i < 5; i++) ec_optimize_get(o, i, &layout);
 */
typedef struct ec_optimize ec_optimize;

typedef enum ec_optimize_goal {
    EC_OPTIMIZE_TOKENS_PER_S = 0, /* most tokens per second [default] */
    EC_OPTIMIZE_TRAIN_TIME,       /* least time to train train_tokens tokens */
    EC_OPTIMIZE_COST              /* least cost per token (or of train_tokens), from the price table */
} ec_optimize_goal;

/* A search over base (copied).  It must not outlive ctx.  Exceptional returns: EC_EMISUSE
 * (NULL argument, models not loaded), EC_ENOMEM. */
EC_API int ec_optimize_new(ec_ctx *ctx, const ec_config *base, ec_optimize **out);
EC_API void ec_optimize_free(ec_optimize *opt);
/* 1 when key is a search key or option of ec_optimize_set (not only a config key). */
EC_API int ec_optimize_is_key(const char *key);
/* Set a searched key to a comma-separated list of values ("1,2,4,8"; each checked through
 * ec_config_set), or an option: goal (tokens_per_s | train_time | cost), train_tokens (tokens
 * to train, for train_time and cost) or train_samples (samples of seq_len tokens), top (layouts
 * ec_optimize_get keeps ranked in detail, [10]), threads (0: the cores available [0]), part
 * and parts (this process prices only the candidates of part, 0-based, of parts: a search split
 * over processes, merged with ec_optimize_pack / ec_optimize_merge [0 of 1]).  Exceptional returns: EC_ENOTFOUND (not a
 * search key, naming the nearest config key), EC_EINVAL (a bad value, naming the key). */
EC_API int ec_optimize_set(ec_optimize *opt, const char *key, const char *value);
/* The keys ec_optimize_set knows, one per call (i from 0; NULL past the end), and their help. */
EC_API const char *ec_optimize_key_name(size_t i);
EC_API const char *ec_optimize_key_help(size_t i);
/* Enumerate, prune, price and rank.  Exceptional returns: EC_EINVAL (a global batch that the
 * sequence length does not divide, none given, more than 1,000,000 candidates; naming the key),
 * EC_ENOTFOUND / EC_EINVAL from the base configuration (model, gpu), EC_ENOMEM, EC_EMISUSE,
 * EC_ECANCELED (the context's progress callback asked to stop). */
EC_API int ec_optimize_run(ec_optimize *opt);

typedef struct ec_optimize_stats {
    size_t considered;            /* candidates enumerated (every combination of the lists) */
    size_t pruned_divide;         /* cannot divide: the GPUs, the global batch or the network (not priced) */
    size_t pruned_memory;         /* model states alone exceed the GPU's memory (not priced) */
    size_t priced;                /* predicted */
    size_t refused;               /* predicted and refused by the model (an unsupported combination) */
    size_t fit;                   /* priced and fit in memory: the ranked layouts */
    size_t no_price;              /* goal cost: fit but no price for the GPU (not ranked) */
    double search_s;              /* wall time of ec_optimize_run (and merges) */
    int threads;                  /* threads that priced */
    const char *first_divide;     /* the message of the first candidate pruned as cannot divide ("" none) */
} ec_optimize_stats;
EC_API void ec_optimize_stats_get(const ec_optimize *opt, ec_optimize_stats *out);

/* Why a layout ranks below the best one (ec_optimize_layout.lost). */
typedef enum ec_optimize_loss {
    EC_LOSS_NONE = 0,          /* the best layout, or one that ties with it */
    EC_LOSS_NO_FIT,            /* does not fit in memory */
    EC_LOSS_EXPOSED_COMM,      /* more exposed communication (tensor, context, expert, data parallel, shards, p2p) */
    EC_LOSS_BUBBLE,            /* a larger pipeline bubble */
    EC_LOSS_RECOMPUTE,         /* more recomputation (activation checkpointing) */
    EC_LOSS_COMPUTE,           /* slower kernels (smaller GEMMs per GPU, less overlap of compute) */
    EC_LOSS_OVERHEAD,          /* host overhead, loader, optimizer or stragglers */
    EC_LOSS_PRICE              /* goal cost: a dearer GPU hour */
} ec_optimize_loss;
/* "best", "does_not_fit", "exposed_comm", "pipeline_bubble", "recompute", "compute", "overhead", "price". */
EC_API const char *ec_optimize_loss_name(ec_optimize_loss loss);

typedef struct ec_optimize_layout {
    ec_config config;             /* the layout's configuration (degrees, micro-batch, grad_accum, ...) */
    int dp;                       /* data-parallel degree: num_gpus / (tp x pp x cp) */
    double global_batch;          /* samples per optimizer step */
    double tokens_per_s, mfu_frac, hfu_frac, step_s;
    double peak_bytes, capacity_bytes;
    int fits;
    double train_s;               /* train_tokens / tokens_per_s (0 without train_tokens or train_samples) */
    double cost;                  /* goal cost: cost of train_tokens, or per million tokens without it; 0 unknown */
    double price_per_hour;        /* the whole job's, 0 when unknown */
    ec_comm_parts comm;           /* exposed communication by kind, seconds per step */
    double exposed_comm_s;        /* their sum without the bubble, plus the slowest GPU's wait */
    double recompute_s;           /* the step's share spent recomputing activations (hfu - mfu of the kernels) */
    ec_optimize_loss lost;        /* why it ranks below the best (EC_LOSS_NONE for the best) */
    double behind_frac;           /* 1 - its goal value / the best's (0 for the best) */
    char reason[160];             /* lost in words: "more pipeline bubble (+1.21 s per step)" */
    /* Appended for issue 40: the memory verdict (ec_memory). */
    int at_edge;                  /* does not fit with the memory headroom, would without it */
    double needed_bytes;          /* what must be allocated at the peak, context included */
    double headroom_bytes;        /* kept free on top of it */
    /* Appended for issue 41: the offer the price came from (ec_result.price_offer, price_currency). */
    double cost_usd;              /* cost when the price is in US dollars and train_tokens is known, else 0 */
    double train_time_h;          /* train_s in hours */
    char price_offer[160];        /* ec_result.price_offer: "lambda gpu_8x_h100_sxm5 ... x 8"; "" unknown */
    char price_currency[16];      /* "USD"; "" when no price is known */
} ec_optimize_layout;

/* Layouts ranked (those that fit, best first); and the layouts that do not fit but would
 * rank above the best with a peak within 25 % of the capacity (the near misses memory rules
 * out), or that are at the edge of out-of-memory (ec_memory.at_edge) and would rank among the
 * top listed (every layout that does not fit when none fits), best first. */
EC_API size_t ec_optimize_count(const ec_optimize *opt);
EC_API size_t ec_optimize_no_fit_count(const ec_optimize *opt);
/* Layout i of the ranking (no_fit 0) or of the rivals that do not fit (no_fit 1).
 * Exceptional returns: EC_EINVAL (i out of range), EC_EMISUSE. */
EC_API int ec_optimize_get(const ec_optimize *opt, int no_fit, size_t i, ec_optimize_layout *out);

/* A search split over processes: each runs the same search with part = its rank of parts,
 * then one merges the others' priced candidates into its own and ranks them all, as one
 * process would.  ec_optimize_pack writes this part's candidates into buf (bytes; with buf
 * NULL only *bytes is set), for a process of the same build; ec_optimize_merge reads one
 * such buffer into opt.  Exceptional returns: EC_EINVAL (a buffer from another search or
 * too small), EC_EMISUSE (before ec_optimize_run). */
EC_API int ec_optimize_pack(const ec_optimize *opt, void *buf, size_t *bytes);
EC_API int ec_optimize_merge(ec_optimize *opt, const void *buf, size_t bytes);

/* ---------------------------------------------------------------------------------
 * Planning: the cheapest (or fastest) configuration under constraints.
 *
 * A plan is a base configuration and a few axes of config-key values (gpu, num_gpus,
 * precision, ...); every point of their product is predicted (ec_predict: time, memory, cost
 * from the price table), judged against the options and ranked.  A point that gives no
 * batch_per_gpu gets one: with global_batch, batch_per_gpu x num_gpus x grad_accum =
 * global_batch (the micro-batch halved and grad_accum doubled until it fits, unless grad_accum
 * is given); otherwise the largest power of two up to max_batch_per_gpu that fits.  Every
 * point needs the run's length: dataset_samples (x epochs), train_tokens or train_samples (a
 * plan ranks runs, not steps).
 */
typedef enum ec_plan_goal { EC_PLAN_CHEAPEST = 0, EC_PLAN_FASTEST } ec_plan_goal;

typedef struct ec_plan_opts {
    double deadline_s;          /* run_s must not exceed it; 0: no deadline (key deadline_h, hours) */
    double budget;              /* cost_run must not exceed it, in the price's currency; 0: none */
    int max_gpus;               /* num_gpus must not exceed it; 0: no limit */
    int must_fit;               /* predicted peak memory must fit the GPU [1] */
    ec_plan_goal goal;          /* what "best" means among the points that meet every constraint [cheapest] */
    int global_batch;           /* 0: per-GPU batch policy below; else the global batch every point trains with */
    int max_batch_per_gpu;      /* the largest batch_per_gpu tried when a point gives none [64] */
} ec_plan_opts;

EC_API void ec_plan_opts_init(ec_plan_opts *opts);
/* Set an option from its text: deadline_h (hours), budget, max_gpus, must_fit (0/1),
 * goal (cheapest|fastest), global_batch, max_batch_per_gpu.  Exceptional returns: EC_ENOTFOUND
 * for another key (naming the nearest), EC_EINVAL for a bad value (naming the key). */
EC_API int ec_plan_opts_set(ec_ctx *ctx, ec_plan_opts *opts, const char *key, const char *value);
/* 1 when key is one of those option keys (not a config key). */
EC_API int ec_plan_opts_is_key(const char *key);

typedef struct ec_plan ec_plan;

/* A plan over base (copied) with opts (copied; NULL: ec_plan_opts_init's defaults).  The plan
 * must not outlive ctx.  Exceptional returns: EC_EMISUSE, EC_ENOMEM. */
EC_API int ec_plan_new(ec_ctx *ctx, const ec_config *base, const ec_plan_opts *opts, ec_plan **out);
EC_API void ec_plan_free(ec_plan *plan);
/* Add an axis: a config key and n values in their text form, each checked at once through
 * ec_config_set (EC_ENOTFOUND / EC_EINVAL with its message).  The first axis varies slowest. */
EC_API int ec_plan_axis(ec_plan *plan, const char *key, const char *const *values, size_t n);
/* Predict and judge every point.  A point the library refuses is a point with verdict
 * EC_PLAN_REFUSED and its message, not an error.  Exceptional returns: EC_EINVAL (more than
 * 65536 points), EC_ENOMEM, EC_EMISUSE. */
EC_API int ec_plan_run(ec_plan *plan);
EC_API size_t ec_plan_count(const ec_plan *plan);

typedef enum ec_plan_verdict {
    EC_PLAN_MEETS = 0,          /* meets every constraint */
    EC_PLAN_REFUSED,            /* the prediction was refused (message says why) */
    EC_PLAN_NO_FIT,             /* does not fit in memory (must_fit) */
    EC_PLAN_TOO_MANY_GPUS,      /* num_gpus above max_gpus (not predicted) */
    EC_PLAN_NO_PRICE,           /* no price for the GPU (goal cheapest or a budget) */
    EC_PLAN_LATE,               /* run_s above the deadline */
    EC_PLAN_OVER_BUDGET         /* cost_run above the budget */
} ec_plan_verdict;
/* "meets", "refused", "does_not_fit", "too_many_gpus", "no_price", "late", "over_budget". */
EC_API const char *ec_plan_verdict_name(ec_plan_verdict v);

typedef struct ec_plan_point {
    const ec_config *config;    /* the point's configuration, its chosen batch included (borrowed) */
    const ec_result *result;    /* the prediction; zeros when verdict is refused or too_many_gpus */
    ec_plan_verdict verdict;    /* the first constraint it fails, in the enum's order */
    const char *message;        /* why ("run 12.3 h > deadline 10.0 h"); "" when it meets them */
    int on_front;               /* on the Pareto front of run time against cost (among priced points
                                   that fit and respect max_gpus, deadline and budget aside) */
    int best;                   /* the chosen configuration */
} ec_plan_point;

/* Point i (0..ec_plan_count-1) after ec_plan_run; pointers valid until the next ec_plan_run or
 * ec_plan_free.  Returns EC_EINVAL for i out of range. */
EC_API int ec_plan_get(const ec_plan *plan, size_t i, ec_plan_point *out);
/* Index of the best point, or -1 when no point meets every constraint. */
EC_API long ec_plan_best(const ec_plan *plan);
/* The plan's options (borrowed). */
EC_API const ec_plan_opts *ec_plan_options(const ec_plan *plan);

/* ---------------------------------------------------------------------------------
 * Registries: what was loaded from models/.
 */
typedef struct ec_gpu_info {
    const char *id;              /* "a100-sxm4-80gb" */
    const char *name;            /* "NVIDIA A100-SXM4-80GB" */
    const char *architecture;    /* "Ampere" */
    double compute_capability;   /* 8.0 */
    int sm_count;
    double memory_bytes;
    double memory_bandwidth_bytes_per_s;
    double peak_fp32_flop_per_s;
    double peak_tf32_flop_per_s;     /* 0 when absent */
    double peak_fp16_flop_per_s;     /* tensor cores, fp32 accumulate; 0 when absent */
    double peak_bf16_flop_per_s;     /* 0 when absent */
    const char *default_topology;    /* how several of them are joined unless topology= says:
                                        "nvlink", "pcie-switch", "pcie-host" (no peer-to-peer), "a16-board" */
    double peak_fp8_flop_per_s;      /* FP8 tensor cores, fp32 accumulate; 0 when absent (amp_fp8 refused) */
} ec_gpu_info;

EC_API size_t ec_gpu_count(const ec_ctx *ctx);
EC_API int ec_gpu_get(const ec_ctx *ctx, size_t i, ec_gpu_info *out);
/* Resolve an id, an alias or an nvidia-smi name to a registry index. */
EC_API int ec_gpu_find(ec_ctx *ctx, const char *name, size_t *index);

/* The inter-node network presets (models/interconnects.csv) that network= names. */
typedef struct ec_interconnect_info {
    const char *id;                  /* "ib-ndr-400" */
    const char *description;
    double gpu_bytes_per_s;          /* each GPU's own NIC, per direction; 0: shared per node */
    double node_bytes_per_s;         /* the whole node, per direction */
    double efficiency_frac;          /* measured collective bus bandwidth over the link; 0: the
                                        constants.csv default internode_busbw_frac applies */
    int domain_gpus;                 /* GPUs of one NVLink switch domain (GB200 NVL72); 0: a node */
    const char *source;
} ec_interconnect_info;

EC_API size_t ec_interconnect_count(const ec_ctx *ctx);
EC_API int ec_interconnect_get(const ec_ctx *ctx, size_t i, ec_interconnect_info *out);

typedef struct ec_model_info {
    const char *id;              /* "bert-base" */
    const char *family;          /* the architecture (config.json model_type): "bert", "llama", "torchvision_resnet", "custom" */
    const char *default_task;    /* "classify" */
    double params;               /* parameter count with the default task head */
    int default_seq_len;         /* tokens (transformers), 0 otherwise */
    int default_image_size;      /* pixels (vision), 0 otherwise */
    /* Appended after 0.1.0. */
    double published_params;     /* the count its source states (0: none); predictions warn beyond 0.5% */
    const char *published_task;  /* the task whose head that count is for (a bare BertModel: classify) */
    double published_task_params;/* the count of that task's head computed from the shapes */
    const char *source;          /* where the shapes and the published count come from ("" if none) */
    const char *tasks;           /* the tasks it has heads for, ", "-separated ("lm, classify") */
} ec_model_info;

EC_API size_t ec_model_count(const ec_ctx *ctx);
EC_API int ec_model_get(const ec_ctx *ctx, size_t i, ec_model_info *out);
/* Parameter count of a model with a given task head (task "" = default).  model may be a
 * preset id, a config.json path (or a folder holding one) or a network defined on ctx. */
EC_API int ec_model_params(ec_ctx *ctx, const char *model, const char *task, double *params);
/* The Hugging Face config.json model_type values model=PATH understands (", "-separated, static). */
EC_API const char *ec_model_types(void);

/* Describe one model (a preset id, a config.json path or a defined network) like an entry of
 * the registry.  The strings stay valid as long as ctx. */
EC_API int ec_model_find(ec_ctx *ctx, const char *model, ec_model_info *out);

/* ---------------------------------------------------------------------------------
 * Network descriptions.  A network is data: an ordered list of layers (some of them one
 * block repeated n times) and the task heads it can be trained with.  The presets of
 * models/networks.csv (each a config file in models/networks/), Hugging Face config.json
 * files (model=PATH), Lua tables (ec.network{...}) and C programs (ec_network_define) all
 * produce one; one expansion turns it into the kernels of a training step (FLOPs, bytes,
 * launches, saved activations, parameters), which the compute and memory models price.
 *
 * Shapes flow down the list: every layer reads the tensor the one before produced (tokens
 * x width for text, images x channels x height x width for vision) and states only what it
 * changes.  A text network starts with an EMBEDDING; a vision network takes an image of
 * image_channels x image_size x image_size.  Dimensions are counts (int64_t); 0 means "the
 * default" where a field says so.
 */
typedef enum ec_layer_kind {
    EC_LAYER_EMBEDDING = 0, /* token ids -> vectors: starts a token stream */
    EC_LAYER_PATCHES,       /* feature map -> tokens: class tokens and learned positions (ViT) */
    EC_LAYER_LINEAR,        /* nn.Linear on the stream's last dimension */
    EC_LAYER_CONV2D,        /* nn.Conv2d (cuDNN implicit GEMM) */
    EC_LAYER_NORM,          /* LayerNorm, RMSNorm or BatchNorm */
    EC_LAYER_ATTENTION,     /* self- or cross-attention with its Q, K, V and output projections */
    EC_LAYER_MLP,           /* feed-forward block: up (and gate), activation, down */
    EC_LAYER_MOE,           /* mixture-of-experts feed-forward block with its router */
    EC_LAYER_ACTIVATION,    /* elementwise activation */
    EC_LAYER_DROPOUT,       /* dropout (a mask kept for backward) */
    EC_LAYER_RESIDUAL,      /* save the stream, or add the saved tensor back */
    EC_LAYER_POOL,          /* max pooling or global average pooling of a feature map */
    EC_LAYER_REPEAT,        /* the next `layers` entries are one block, repeated `times` times */
    EC_LAYER_DECODER        /* encoder-decoder: the stream so far becomes the memory that cross-attention
                               reads, and the next EMBEDDING starts a stream of target_len tokens */
} ec_layer_kind;

typedef enum ec_activation {
    EC_ACT_GELU = 0,   /* exact erf GELU, one kernel */
    EC_ACT_GELU_TANH,  /* tanh approximation written in Python (GPT-2's gelu_new): several eager kernels */
    EC_ACT_RELU,
    EC_ACT_SILU,       /* SiLU / swish (Llama's SwiGLU gate) */
    EC_ACT_TANH,
    EC_ACT_QUICK_GELU, /* x * sigmoid(1.702 x) (CLIP): two kernels */
    EC_ACT_RELU2,      /* squared ReLU, relu(x)^2 (Primer; Nemotron's MLP): relu and square, fused
                          into one kernel by Megatron-Core's jit_fuser */
    EC_ACT_GELU_PYTHON /* exact erf GELU written in Python, x * 0.5 * (1 + erf(x / sqrt 2)) (transformers'
                          gelu_python; DeepLearningExamples' BERT before 2022): several eager kernels */
} ec_activation;

typedef enum ec_norm_kind { EC_NORM_LAYER = 0, EC_NORM_RMS, EC_NORM_BATCH } ec_norm_kind;

/* Where attention gets positions from (learned absolute positions live on the EMBEDDING). */
typedef enum ec_position {
    EC_POS_NONE = 0,
    EC_POS_ROPE,       /* rotary embedding applied to Q and K in every layer */
    EC_POS_ALIBI,      /* linear biases added to the scores */
    EC_POS_RELATIVE    /* T5-style bucketed relative bias added to the scores */
} ec_position;

typedef enum ec_residual_op {
    EC_RESIDUAL_SAVE = 0, /* remember the stream (the start of a residual branch) */
    EC_RESIDUAL_ADD,      /* stream = branch + saved */
    EC_RESIDUAL_ADD_RELU  /* stream = relu(branch + saved) (ResNet) */
} ec_residual_op;

typedef enum ec_pool_kind { EC_POOL_MAX = 0, EC_POOL_AVG_GLOBAL } ec_pool_kind;

typedef struct ec_embedding_layer {
    int64_t vocab;       /* rows of the token table */
    int64_t dim;         /* width of the stream it starts */
    int64_t positions;   /* learned absolute position rows, 0 = none (RoPE, ALiBi, relative) */
    int64_t type_vocab;  /* token-type rows (BERT's segment ids), 0 = none */
    int fused;           /* 1: the lookups and their sum priced as one pass (GPT-2's wte + wpe) */
    int scale;           /* 1: the embeddings are multiplied by sqrt(dim) (Gemma) */
    int shared;          /* 1: reuses the first EMBEDDING's token table (T5's decoder): no new parameters */
    /* Appended for issue 41. */
    int64_t idle_params; /* parameters the model holds that a text step does not run (a multimodal
                            checkpoint's vision tower and projector, Gemma 3, Llama 4): weights, gradients
                            and optimizer state like the others, no compute; 0 = none */
} ec_embedding_layer;

typedef struct ec_patches_layer {
    int cls_tokens;      /* class tokens prepended (1 for ViT) */
    int positions;       /* 1: a learned position vector per token */
} ec_patches_layer;

typedef struct ec_linear_layer {
    int64_t out;         /* output features */
    int bias;
} ec_linear_layer;

typedef struct ec_conv2d_layer {
    int64_t out;         /* output channels */
    int kernel, stride;
    int padding;         /* -1: kernel / 2 */
    int groups;          /* 0 or 1: dense */
    int bias;
} ec_conv2d_layer;

typedef struct ec_norm_layer {
    ec_norm_kind kind;
    int bias;            /* LayerNorm with a bias (RMSNorm has none; BatchNorm always has one) */
    int low_precision;   /* LayerNorm/RMSNorm run in the 16-bit compute dtype under autocast (llm-foundry's
                            low_precision_layernorm, Composer's LPLayerNorm): input and weights cast down,
                            16-bit output, so no fp32 stream and no cast before the next linear */
} ec_norm_layer;

typedef struct ec_attention_layer {
    int heads;           /* query heads */
    int kv_heads;        /* key/value heads (grouped-query attention), 0 = heads */
    int head_dim;        /* 0 = stream width / heads */
    int causal;          /* decoder self-attention */
    int cross;           /* queries from the stream, keys and values from the encoder's memory */
    int qkv_fused;       /* one projection produces Q, K and V (GPT-2's c_attn) */
    int qkv_bias, out_bias;
    ec_position position;
    int64_t window;      /* sliding-window attention span in tokens, 0 = full */
    int rel_buckets;     /* EC_POS_RELATIVE: bucket rows this layer owns (T5: 32 on the first layer, 0 after) */
    int dropout;         /* 1: dropout on the attention probabilities */
    int qk_norm;         /* 1: RMSNorm on each query and key head (Qwen3) */
    int softcap;         /* 1: tanh soft-capping of the scores (Gemma 2) */
    int relative_span;   /* DeBERTa-v2's disentangled attention: position buckets; the content-to-
                            position and position-to-content scores are computed too, 0 = none */
    /* Appended for issue 19. */
    int softmax_fp32;    /* 1: in a 16-bit model the eager softmax runs in fp32 and is cast back
                            (Llama, GPT-NeoX, OPT, MPT, T5, BLOOM code); autocast always does */
    /* Appended for issue 41: multi-head latent attention (DeepSeek-V2/V3) and attention sinks. */
    int q_rank;          /* MLA: queries through a rank-q_rank projection, an RMSNorm and the up-projection
                            to heads x head_dim; 0 = one projection */
    int kv_rank;         /* MLA: keys and values from a compressed latent of kv_rank (with its RMSNorm)
                            and the up-projection to heads x (head_dim - rope_dim + v_head_dim); the latent
                            (and the shared rotary key) is what the layer keeps; 0 = none (plain K and V) */
    int rope_dim;        /* MLA: the decoupled rotary part of head_dim, one key of it shared by every head */
    int v_head_dim;      /* width of a value head, 0 = head_dim */
    int sinks;           /* 1: a learned sink logit per head joins the softmax (gpt-oss) */
} ec_attention_layer;

typedef struct ec_mlp_layer {
    int64_t ffn;         /* inner width */
    ec_activation act;
    int gated;           /* act(gate(x)) * up(x) (SwiGLU, GeGLU) */
    int bias;
    int dropout;         /* 1: dropout between the activation and the down projection (ViT) */
} ec_mlp_layer;

typedef struct ec_moe_layer {
    int experts;         /* routed experts */
    int top_k;           /* experts per token */
    int64_t ffn;         /* inner width of one routed expert */
    ec_activation act;
    int gated;
    int shared_experts;  /* experts every token goes through (Qwen-MoE), 0 = none */
    int64_t shared_ffn;  /* inner width of the shared expert(s) together */
    int shared_gate;     /* 1: a sigmoid gate scales the shared experts' output */
    /* Appended for issue 41. */
    int bias;            /* 1: the router and every expert's linears have biases (gpt-oss) */
} ec_moe_layer;

typedef struct ec_activation_layer { ec_activation act; } ec_activation_layer;
typedef struct ec_residual_layer { ec_residual_op op; } ec_residual_layer;

typedef struct ec_pool_layer {
    ec_pool_kind kind;
    int kernel, stride, padding; /* EC_POOL_MAX */
} ec_pool_layer;

typedef struct ec_repeat_layer {
    int layers;          /* entries that follow in the block */
    int times;           /* repetitions (>= 1) */
    int shared_params;   /* 1: every repetition uses the same weights (ALBERT) */
    int checkpoint;      /* 1: a unit of activation checkpointing (checkpointing=1 recomputes each
                            repetition: HF's decoder and encoder layers) */
} ec_repeat_layer;

typedef struct ec_layer {
    ec_layer_kind kind;
    int on_skip;         /* applies to the saved residual tensor, not the stream (ResNet's downsample) */
    union {
        ec_embedding_layer embedding;
        ec_patches_layer patches;
        ec_linear_layer linear;
        ec_conv2d_layer conv2d;
        ec_norm_layer norm;
        ec_attention_layer attention;
        ec_mlp_layer mlp;
        ec_moe_layer moe;
        ec_activation_layer activation;
        ec_residual_layer residual;
        ec_pool_layer pool;
        ec_repeat_layer repeat;
    } u;
} ec_layer;

/* The objective a task trains, on top of the layers. */
typedef enum ec_head_kind {
    EC_HEAD_CAUSAL_LM = 0,  /* a vocabulary projection of every token of the stream, shifted labels
                               (decoders; encoder-decoders project the decoder stream) */
    EC_HEAD_MASKED_LM,      /* a transform (dense, GELU, LayerNorm) then the vocabulary, every token */
    EC_HEAD_PRETRAIN,       /* BERT pre-training: masked LM on the masked positions + next-sentence */
    EC_HEAD_CLASSIFY,       /* one label per sequence (pooled first token, or the last token) */
    EC_HEAD_TOKEN_CLASSIFY, /* one label per token (NER) */
    EC_HEAD_SPAN_QA,        /* start and end logits per token (SQuAD) */
    EC_HEAD_IMAGE_CLASSIFY  /* pooled feature map or class token, then a linear classifier */
} ec_head_kind;

typedef struct ec_head {
    const char *task;    /* the task name that selects it: "lm", "classify", "squad", "pretrain",
                            "token_classify", "imagenet" */
    ec_head_kind kind;
    int64_t classes;     /* CLASSIFY, TOKEN_CLASSIFY, IMAGE_CLASSIFY: labels */
    int pooler;          /* CLASSIFY, PRETRAIN: a dense + tanh on the first token (BERT's pooler);
                            0: CLASSIFY scores the last token (decoders) */
    int64_t transform;   /* MASKED_LM, PRETRAIN: width of the dense + GELU + LayerNorm transform before
                            the vocabulary (0 = stream width) */
    int tied;            /* the vocabulary projection reuses the token embedding's weight */
    int bias;            /* the final projection has a bias */
    int pool;            /* IMAGE_CLASSIFY: 1 = global average pool of a feature map, 0 = class token */
    int fused_loss;      /* CAUSAL_LM: one fused softmax cross-entropy kernel over the 16-bit logits, the
                            labels shifted instead of the logits (flash-attn's xentropy: llm-foundry's
                            loss_fn fused_crossentropy); 0: PyTorch's loss on shifted fp32 logits (HF) */
    int metric_losses;   /* CAUSAL_LM: cross-entropies the training loop computes on the logits after every
                            micro-step, without gradients, for its metrics (Composer's LanguageCrossEntropy
                            and LanguagePerplexity: 2), each an fp32 log_softmax of all of them; 0: none */
} ec_head;

/* How the attention of a network may be implemented (what its code offers). */
typedef enum ec_attention_impl {
    EC_NET_ATTN_CONFIG = 0, /* the config's attention= key (Hugging Face models with SDPA) */
    EC_NET_ATTN_FUSED,      /* always a fused kernel (torchvision's nn.MultiheadAttention) */
    EC_NET_ATTN_EAGER       /* no fused path (Hugging Face T5, DeBERTa): attention=sdpa warns */
} ec_attention_impl;

typedef struct ec_network_def {
    const char *id;              /* the name model= will accept */
    const char *family;          /* for listings, NULL = "custom" */
    const ec_layer *layers;
    size_t n_layers;
    const ec_head *heads;
    size_t n_heads;              /* >= 1 */
    const char *default_task;    /* NULL = the first head's task */
    int default_seq_len;         /* text: tokens per sample when seq_len is not given */
    int max_positions;           /* text: longest sequence its positions cover, 0 = unlimited */
    int image_size;              /* vision: default pixels per side */
    int image_channels;          /* vision: input channels (0 = 3) */
    int loss_in_forward;         /* 1: forward returns the loss (HF heads given labels); decides what
                                    DataParallel gathers */
    ec_attention_impl attention;
    double published_params;     /* the count a source states, 0 = none */
    const char *published_task;  /* the task whose head that count is for (NULL = default_task) */
    const char *source;          /* where it comes from (NULL = "") */
} ec_network_def;

/* Bounds on a description as a whole (every field has its own range besides), so that what a
 * definition costs in memory and time is bounded whatever its repeats multiply.  The deepest
 * networks trained have a few thousand layers (ResNet-1001; DeepNet's 1,000-layer
 * transformer): the bounds leave a hundred times that and keep a step's layer, tensor and
 * kernel counts far below 2^31. */
#define EC_NETWORK_MAX_LAYERS 100000         /* layers held in memory: the description's entries, and
                                                the layers once the repeats inside a repeat are unrolled */
#define EC_NETWORK_MAX_STEP_LAYERS 10000000  /* layers one step runs, every repeat multiplied out */
#define EC_NETWORK_MAX_STEP_KERNELS 100000000 /* kernels one forward pass launches */
#define EC_NETWORK_MAX_PARAMS 1e15           /* parameters (published_params has the same bound) */

/* Register a network on the context under def->id (copied; def may be freed afterwards).
 * The description is checked: a layer of an unknown kind, a dimension that is not positive
 * or absurdly large, heads that do not divide the width, a repeat that runs past the list
 * or changes the tensor's shape, a head that does not fit the stream (a vocabulary head on
 * an image network), a description over one of the EC_NETWORK_MAX_* bounds: EC_EINVAL naming
 * the layer (by index and kind) and the field, or the bound.  An id that is already a preset
 * or a defined network: EC_EINVAL. */
EC_API int ec_network_define(ec_ctx *ctx, const ec_network_def *def);
EC_API const char *ec_layer_kind_name(ec_layer_kind kind);

/* What a model is, for people (epochcast model-info): its size, its FLOPs and the memory of
 * its weights and optimizer for a config's model, task, seq_len (or image_size), precision
 * and optimizer; batch_per_gpu and gpu are not needed.  FLOPs are model FLOPs (2 per
 * multiply-add of GEMMs, convolutions and attention, no recompute): backward is twice the
 * forward (input and weight gradients). */
typedef struct ec_model_summary {
    double params;                   /* with the config's task head */
    double tokens_per_sample;        /* seq_len for text (encoder side), 1 for an image */
    double fwd_flop_per_sample;
    double bwd_flop_per_sample;
    double weights_bytes, grads_bytes, optimizer_bytes; /* at that precision and optimizer */
    double activations_bytes_per_sample; /* kept for backward, without checkpointing */
    size_t n_rows;                   /* rows of the layer table (ec_model_layers) */
} ec_model_summary;

/* One row of the layer table: a layer of the description (a repeat's body rows follow it,
 * one level deeper), then the task head. */
typedef struct ec_layer_row {
    int index;                       /* 1-based position in the description; 0: the head */
    int depth;                       /* repeats around it */
    const char *kind;                /* "attention", "repeat", "head" */
    int times;                       /* repetitions of a repeat row, else 1 */
    double params;                   /* of one repetition (a repeat: of its whole body) */
    double fwd_flop_per_sample;      /* of one repetition */
    double saved_bytes_per_sample;   /* activations kept for backward, one repetition */
} ec_layer_row;

/* Fill *out and, when rows != NULL, up to max_rows rows.  Exceptional returns: those of
 * ec_predict's model resolution (EC_ENOTFOUND, EC_EINVAL, ...), EC_ENOMEM. */
EC_API int ec_model_summary_get(ec_ctx *ctx, const ec_config *cfg, ec_model_summary *out, ec_layer_row *rows,
                                size_t max_rows);

/* ---------------------------------------------------------------------------------
 * Run records: measured runs in the config vocabulary plus a measurement
 * (docs/DESIGN.md section 4): columns id, the config keys, metric, value, source.
 */
typedef enum ec_metric {
    EC_METRIC_SAMPLES_PER_S = 0, EC_METRIC_STEP_TIME_MS, EC_METRIC_EPOCH_TIME_S,
    EC_METRIC_TOKENS_PER_S,   /* tokens per second over all GPUs (LLM benchmarks report it) */
    /* Appended for issue 19.  In a CSV: metric=peak_bytes with a memory_reading column
     * (nvml, reserved, allocated; none: nvml) names the three memory metrics. */
    EC_METRIC_PEAK_BYTES,       /* bytes, the NVML / nvidia-smi reading (memory.nvml_bytes) */
    EC_METRIC_RESERVED_BYTES,   /* bytes, torch.cuda.max_memory_reserved (memory.reserved_bytes) */
    EC_METRIC_ALLOCATED_BYTES,  /* bytes, torch.cuda.max_memory_allocated (memory.allocated_bytes) */
    EC_METRIC_OOM,              /* 1: the run died with CUDA out of memory, 0: it ran (1 - memory.fits) */
    EC_METRIC_TRAIN_TIME_S,     /* seconds of `epochs` epochs, compilation included (a trainer's train_runtime) */
    EC_METRIC_FIRST_STEP_S      /* seconds of the first step, torch.compile's compilation included */
} ec_metric;
/* The name a run file gives the metric ("samples_per_s", ..., "reserved_bytes", "oom"), "unknown"
 * outside the enum. */
EC_API const char *ec_metric_name(ec_metric m);

typedef struct ec_runs ec_runs;

typedef struct ec_run {
    const char *id;
    const char *source;
    ec_config config;
    ec_metric metric;
    double value;                /* in the metric's unit */
    size_t line;                 /* line of the row in its file */
    /* Appended for issue 19. */
    const char *split;           /* the split column ("fit", "holdout", "excluded"), "" when absent */
} ec_run;

/* Paths in run records.  A cell of lengths= (a histogram CSV), profile=, prices= or model= (a
 * config.json) that names a file is taken relative to the run file's folder, not the current
 * one, and must resolve (links included) to a regular file inside that folder: a run file
 * someone else wrote cannot make the library read the user's files.  The resolved absolute
 * path replaces the cell's text in the run's config.  EC_RUNS_ALLOW_PATHS lifts the
 * confinement (the file must still be a regular file, never a FIFO or a device). */
#define EC_RUNS_ALLOW_PATHS 1u
/* ec_runs_load holds every run (about 2 KiB each): a file with more is refused (EC_EINVAL);
 * ec_runs_open streams any number. */
#define EC_RUNS_LOAD_MAX 50000

/* Load a run-record CSV.  Unknown columns are an error (naming file, line and column), except
 * free-text columns named note or note_* (for people: ignored).  A split column is kept as
 * ec_run.split; memory_reading qualifies metric=peak_bytes.  Also errors:
 * a file with a header and no runs (EC_EPARSE), a duplicate id, a value that is not a
 * measurement (outside [1e-6, 1e15] in its metric's unit; oom is 0 or 1) and a path outside the file's
 * folder.  The file is remembered as an input of ctx (no output file may replace it).
 * Exceptional returns: EC_EIO, EC_EPARSE, EC_EINVAL, EC_ENOTFOUND, EC_ENOMEM, EC_ECANCELED. */
EC_API int ec_runs_load(ec_ctx *ctx, const char *path, ec_runs **out);
/* The same with flags (EC_RUNS_ALLOW_PATHS). */
EC_API int ec_runs_load_v2(ec_ctx *ctx, const char *path, unsigned flags, ec_runs **out);

/* Streaming: read a run-record file one run at a time, in memory bounded whatever its size
 * (a block of rows and the ids seen, for the duplicate check).  The same checks as
 * ec_runs_load.  The reader refers to ctx: the context must outlive it. */
typedef struct ec_runs_reader ec_runs_reader;
EC_API int ec_runs_open(ec_ctx *ctx, const char *path, unsigned flags, ec_runs_reader **out);
/* The next run in *run, or NULL at the end of the file.  The run (and its strings) is valid
 * until the next call or ec_runs_close.  After a failure the reader only closes.
 * Exceptional returns: those of ec_runs_load. */
EC_API int ec_runs_next(ec_runs_reader *rd, const ec_run **run);
/* The share of the file read so far, 0..1 (for progress bars). */
EC_API double ec_runs_read_frac(const ec_runs_reader *rd);
/* NULL is a no-op. */
EC_API void ec_runs_close(ec_runs_reader *rd);
EC_API void ec_runs_free(ec_runs *runs);
EC_API size_t ec_runs_count(const ec_runs *runs);
/* Borrowed pointer into runs; valid until ec_runs_free.  NULL when i is out of range. */
EC_API const ec_run *ec_runs_get(const ec_runs *runs, size_t i);

/* The metric of a prediction in the unit of a run's metric. */
EC_API double ec_result_metric(const ec_result *res, ec_metric metric);
/* The share of a result's step in which the GPU is not waiting for its host (the CPU issuing
 * kernels, the input pipeline, host-to-device copies): gpu_util_frac with exposed communication
 * and other GPU-side waits counted as busy; 1 for a result without a step.  Below constants.csv
 * host_bound_util_frac a prediction is host-bound, which picks an uncalibrated architecture's
 * interval (docs/accuracy.md, "The host-bound unseen-architecture sd"). */
EC_API double ec_result_host_util_frac(const ec_result *res);
/* The p10-p90 interval of that metric: epoch_p10_s..epoch_p90_s for epoch_time_s, the step's
 * interval for step_time_ms and, reversed, for samples_per_s (a slower step, fewer samples).
 * *p10 <= *p90; both 0 when the result has no interval (epoch_time_s without an epoch). */
EC_API void ec_result_metric_interval(const ec_result *res, ec_metric metric, double *p10, double *p90);

/* Error statistics of predictions against measurements (docs/DESIGN.md section 6).
 * Relative error e_i = (predicted_i - measured_i) / measured_i; rows with measured <= 0 are skipped. */
typedef struct ec_error_stats {
    size_t n;                 /* rows counted */
    double mape_frac;         /* mean |e_i| */
    double bias_frac;         /* mean e_i (positive: predictions too high) */
    double max_abs_frac;      /* max |e_i| */
    double within_10_frac;    /* share with |e_i| <= 0.10 */
    double within_20_frac;    /* share with |e_i| <= 0.20 */
} ec_error_stats;

EC_API void ec_error_stats_compute(const double *predicted, const double *measured, size_t n,
                                   ec_error_stats *out);

/* ---------------------------------------------------------------------------------
 * Calibration (docs/DESIGN.md section 6): a few physical parameters fitted to measured runs with
 * GSL's nonlinear least squares on log(predicted / measured):
 *   gemm_scale      multiplies each tensor-core GEMM's shape utilization, up to the GPU's measured
 *                   best-shape efficiency (gpus.csv), which no GEMM exceeds
 *   simt_scale      multiplies every GPU's measured large-GEMM efficiency on CUDA cores (fp32 matmuls)
 *   mem_scale       multiplies every GPU's measured streaming-bandwidth efficiency (networks that are
 *                   not CNNs: transformers, ViTs, MLPs)
 *   mem_scale_cnn   the same for CNNs (convolutions and no attention or MLP block), fitted on CNN
 *                   runs only, so CNN and transformer runs never share one memory parameter
 *   conv_eff        cuDNN convolution throughput relative to a GEMM of the same shape
 *   attn_eff        multiplies the fused attention kernels' efficiencies (models/attention.csv)
 *   dispatch_scale  multiplies the host time of each eager forward op of the model (the Python
 *                   around it: module calls, views); backward, optimizer and loop ops keep the host rate
 *   internode_busbw_frac  NCCL bus bandwidth between nodes over the NICs' link rate, for
 *                   networks without a measured efficiency_frac (interconnects.csv)
 * A weak prior (one e-fold, in log space) keeps parameters no run exercises at their prior.
 *
 * gemm_scale, simt_scale, mem_scale and mem_scale_cnn are also fitted per GPU architecture (gpus.csv
 * `architecture`: the cuBLAS/cuDNN kernels and the memory system differ by architecture)
 * for every architecture the fitted runs exercise: a hierarchical prior anchors the
 * architecture's value to the global one (log ratio ~ N(0, calib_arch_log_sd of
 * constants.csv)), so an architecture with few runs stays near the global value and one
 * with none uses it.  Those entries follow the eight global ones in a report, with their
 * architecture named in architectures[].
 */
#define EC_FIT_MAX_PARAMS 32
/* The path a multi-GPU job's gradients take, which sets the communication part of its interval
 * (ec_fit_report.comm_error_log_sd): */
#define EC_COMM_DIRECT 0 /* GPU to GPU: NVLink, PCIe peer-to-peer, the network between nodes */
#define EC_COMM_HOST 1   /* through host memory: topology=pcie-host, PCIe without peer-to-peer; two GPUs a node */
/* through host memory with more than two GPUs a node: the ring then shares the server's root ports,
 * PCIe switch uplinks and sockets, whose layout a run does not state (appended at stop 64) */
#define EC_COMM_HOST_SHARED 2
#define EC_COMM_PATHS 3
/* The classes of a held-out prediction on an unseen architecture (ec_fit_report.arch_terms): */
#define EC_CLASS_GPU 0  /* GPU-bound: arch_error_log_sd */
#define EC_CLASS_HOST 1 /* host-bound: arch_host_error_log_sd */
#define EC_FIT_MAX_ARCHS 16

/* One architecture's sample in the unseen-architecture sds (ec_calibrate_cv_arch): its single-GPU
 * runs predicted by the fit without it, by the class of each prediction ([EC_CLASS_GPU],
 * [EC_CLASS_HOST]).  A class's sd is the 0.8 quantile of |log(predicted / measured)| over its
 * runs, each of the k architectures with runs of it weighing the same, over z_0.9, times
 * t_0.9,k / z_0.9; sd_without says how much this sample moves it (docs/accuracy.md, "Which
 * architecture sets the sd"). */
typedef struct ec_fit_arch_term {
    char architecture[EC_NAME_MAX]; /* gpus.csv architecture ("ampere") */
    size_t runs[2];        /* held-out runs of each class (0: the architecture is no sample of it) */
    double msq_log[2];     /* their mean of log(predicted / measured)^2, whose root is the rms (0 without runs) */
    double bias_log[2];    /* their mean log error in the direction of time, log(predicted / measured)
                              of a time and of the step time a rate implies (its sign turned for
                              samples_per_s, tokens_per_s): > 0, predicted slower; the architecture's bias */
    double msq_log_all;    /* over both classes: the sample of the GPU-bound sd when no architecture has
                              GPU-bound runs */
    double bias_log_all;
    size_t covered[2];     /* its runs of the class inside p50 x exp(-+z_0.9 sd_without): the coverage of
                              the interval the others give it, its fold of the check that 70-90% of an
                              unseen architecture's runs fall inside (0 without runs) */
    double sd_without[2];  /* the class's sd with this architecture's sample left out (k - 1 samples;
                              0 when none is left, the class's sd when it is no sample of it) */
} ec_fit_arch_term;

typedef struct ec_fit_report {
    size_t n_params;
    const char *names[EC_FIT_MAX_PARAMS];   /* static strings */
    double values[EC_FIT_MAX_PARAMS];
    double stderrs[EC_FIT_MAX_PARAMS];      /* standard errors from the fit's covariance */
    size_t n_runs;                          /* runs fitted */
    double mape_before_frac;                /* on the fitted runs, with the priors */
    double mape_after_frac;                 /* on the fitted runs, with the fitted values */
    size_t iterations;
    /* Appended after 0.1.0 (per-architecture fit, held-out error). */
    char architectures[EC_FIT_MAX_PARAMS][EC_NAME_MAX]; /* "" for a global parameter, else the
                                               architecture the value applies to ("ampere") */
    /* Held-out error (ec_calibrate_cv; 0 until it runs): the log error sd whose p10-p90 holds 80% of
     * the predictions of GPUs left out of the fit whose architecture (and matmul unit) the fit
     * still has runs of (all of them when no GPU has such a fit): their 0.8 quantile of
     * |log(predicted / measured)| over z_0.9 (docs/accuracy.md, "The interval is a quantile").  A
     * profile stores it; predictions on calibrated architectures widen their p10-p90 by it. */
    double error_log_sd;
    double cv_mape_frac;                    /* MAPE of those held-out predictions */
    size_t cv_runs;                         /* held-out predictions counted */
    /* Appended for issue 20: runs left out of the error figures because their prediction was
     * not a finite positive number (at the fitted values, and in the held-out folds). */
    size_t n_left_out;
    /* Appended for issue 39 (calibration that knows what it has seen).  runs[j]: the fitted runs
     * that exercise entry j (a global entry: every run fitted; an architecture's: the runs on that
     * architecture whose kernels it scales); a profile keeps them in its runs column. */
    size_t runs[EC_FIT_MAX_PARAMS];
    /* Held-out error on architectures left out of the fit (ec_calibrate_cv_arch; 0 until it
     * runs): the 0.8 quantile of |log(predicted / measured)|, each architecture's runs weighing
     * as much as another's, over z_0.9, times t_0.9 / z_0.9 with as many degrees of freedom as
     * architectures (a p10-p90 from a spread seen on that few architectures; docs/accuracy.md),
     * over the held-out runs predicted GPU-bound (arch_host_error_log_sd below).  A prediction
     * on an architecture (or matmul unit) with no calibration runs widens its p10-p90 interval
     * by it (by arch_host_error_log_sd when host-bound). */
    double arch_error_log_sd;
    double arch_cv_mape_frac;               /* MAPE of those held-out predictions */
    size_t arch_cv_runs;                    /* held-out predictions counted */
    size_t arch_cv_archs;                   /* architectures left out in turn (appended) */
    /* Appended for issue 39 (honest intervals for multi-GPU jobs): the communication part of a
     * multi-GPU prediction's error, by the path its gradients take (EC_COMM_DIRECT, EC_COMM_HOST,
     * EC_COMM_HOST_SHARED),
     * from ec_calibrate_cv (0 until it runs, or when no multi-GPU run of that path was held out).
     * The multi-GPU runs of the use mask are never fitted in its folds, only predicted: each GPU's
     * runs of a path are one sample, weighing as much as another GPU's; with k GPUs, sd_total = the
     * 0.8 quantile of their |log(predicted / measured)| over z_0.9, and comm_error_log_sd =
     * t_0.9,k / z_0.9 x sqrt(max(0, sd_total^2 - error_log_sd^2)): a multi-GPU prediction's sd,
     * sqrt(error_log_sd^2 + comm_error_log_sd^2), is sd_total with the part the k GPUs estimate
     * widened for their number (docs/accuracy.md, "The communication sd"). */
    double comm_error_log_sd[EC_COMM_PATHS];
    size_t comm_cv_runs[EC_COMM_PATHS];     /* held-out multi-GPU runs of each path counted */
    size_t comm_cv_gpus[EC_COMM_PATHS];     /* GPUs (samples) they came from */
    /* Appended for issue 39 (host-bound predictions on unseen architectures): ec_calibrate_cv_arch
     * classes each held-out run by its fold's prediction: host-bound when its gpu_util_frac is
     * below constants.csv host_bound_util_frac (the GPU idles while the host, whose speed the runs
     * rarely state, paces the step), else GPU-bound.  arch_error_log_sd above is then the
     * GPU-bound class's sd (its runs: arch_cv_runs - arch_host_cv_runs) and this the host-bound
     * class's, each by the rule of arch_error_log_sd over the architectures with runs of that
     * class (0: no host-bound run held out).
     * A host-bound prediction on an architecture with no calibration runs widens its p10-p90 by
     * it (docs/accuracy.md, "The host-bound unseen-architecture sd"). */
    double arch_host_error_log_sd;
    size_t arch_host_cv_runs;               /* host-bound held-out predictions counted */
    size_t arch_host_cv_archs;              /* architectures they came from */
    /* Appended for issue 39 (which architecture sets the unseen-architecture sd): the samples behind
     * arch_error_log_sd and arch_host_error_log_sd, one per architecture left out (ec_calibrate_cv_arch;
     * none until it runs), in the order of their first run; the first EC_FIT_MAX_ARCHS when more
     * (arch_cv_archs counts them all). */
    size_t n_arch_terms;
    ec_fit_arch_term arch_terms[EC_FIT_MAX_ARCHS];
    /* Appended for issue 39 (a fitted parameter applies to the kernel classes it was fitted on):
     * kernels[j], bit 1 << EC_KERNELS_* for each kernel class (ec_config.kernels) among the runs
     * that exercise architecture entry j; 0 for a global entry, and in a profile written before
     * the column (its entries then apply to every class).  A prediction whose kernel class an
     * architecture's entries were not fitted on prices that architecture as unseen: the GEMM
     * prior, the global memory scale, the unseen-architecture sd (docs/accuracy.md, "Kernel
     * classes"); a profile keeps them in its kernels column. */
    unsigned kernels[EC_FIT_MAX_PARAMS];
    /* Appended for issue 39 (attn_eff applies to the attention kernels it was fitted on): the
     * fused attention kernels the fitted runs ran (models/attention.csv's kernel column; bit
     * 1 << k, named by ec_fit_attn_kernels_names).  attn_eff scales those kernels and the kernels
     * whose rows are ratios of theirs (attention.csv derived_from); any other kernel, one no run
     * of the fit ran, is priced at its attention.csv efficiency as published, with a warning
     * (docs/accuracy.md, "Kernel classes").  0: every kernel (a fit without fused attention, a
     * profile written before it); a profile keeps them in attn_eff's kernels cell. */
    unsigned attn_kernels;
    /* Appended for issue 39 (attn_mask): the same for attn_mask_eff, the fused attention kernels
     * the fitted runs ran with an explicit mask (key attn_mask; 0: none, attn_mask_eff then at its
     * prior).  attn_mask_eff scales a masked prediction of those kernels only; a profile keeps them
     * in attn_mask_eff's kernels cell. */
    unsigned attn_mask_kernels;
} ec_fit_report;

/* The kernel classes of bits (ec_fit_report.kernels: 1 << EC_KERNELS_*) as key kernels= spells
 * them ("eager", "fused", "te"), space-separated, into buf of n bytes ("" for 0; cut to fit). */
EC_API void ec_fit_kernels_names(unsigned bits, char *buf, size_t n);
/* The attention kernels of bits (ec_fit_report.attn_kernels) as models/attention.csv spells
 * them ("cudnn", "flash2", "sdpa_mem_efficient", ...; "sdpa_mem_efficient_fp32": that kernel on fp32
 * inputs, a class of its own), space-separated, into buf of n bytes ("" for 0; cut to fit). */
EC_API void ec_fit_attn_kernels_names(unsigned bits, char *buf, size_t n);
/* A gradient path (EC_COMM_*) as its profile row names it after "error_log_sd_comm_" ("direct",
 * "host", "host_shared"), and in words ("GPU to GPU", ...); "?" for another number. */
EC_API const char *ec_comm_path_name(int path);
EC_API const char *ec_comm_path_words(int path);


/* Fit the parameters on the runs with use[i] != 0 (use == NULL: all runs), starting from and
 * anchored to the priors of constants.csv.  The context's current fit is left unchanged.  A fit
 * is kept only inside the range a profile may hold, with every fitted run predicted under it
 * (never above the GPU's peak) and a MAPE no worse than the priors': else EC_EDOM, "the fit is
 * not kept: ..." (docs/safety.md, Bounds). */
EC_API int ec_calibrate(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *out);

/* Leave-one-GPU-out cross-validation of ec_calibrate on the same runs: for each GPU (by
 * profile id) of the runs with use[i] != 0, fit on the others' single-GPU runs and predict its
 * runs (a GPU alone in its architecture counts as leave-one-architecture-out and is left out).
 * Its single-GPU runs give report->error_log_sd, cv_mape_frac and cv_runs; its multi-GPU runs,
 * which no fold fits, give comm_error_log_sd, comm_cv_runs and comm_cv_gpus by gradient path
 * (EC_COMM_*).  Leaves the rest of the report alone.
 * Exceptional returns: EC_EINVAL (runs on fewer than two GPUs, or a fold whose fit is not
 * kept), those of ec_calibrate. */
EC_API int ec_calibrate_cv(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *report);

/* Leave-one-architecture-out cross-validation (gpus.csv `architecture`): for each architecture
 * of the single-GPU runs with use[i] != 0, fit on the single-GPU runs of the others and predict
 * its single-GPU runs (multi-GPU runs: ec_calibrate_cv's communication sd).  Sets
 * report->arch_error_log_sd (each architecture one sample, widened for their number; of the
 * GPU-bound held-out runs), arch_host_error_log_sd, arch_host_cv_runs and arch_host_cv_archs (of
 * the host-bound ones, see the struct), arch_cv_mape_frac, arch_cv_runs and arch_cv_archs (over
 * both), n_arch_terms and arch_terms (each architecture's sample) and leaves the rest alone.
 * Exceptional returns: EC_EINVAL (runs on fewer than two architectures, or a fold whose fit
 * is not kept), those of ec_calibrate. */
EC_API int ec_calibrate_cv_arch(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *report);

/* Use fitted parameters for every later prediction on this context (report == NULL: back to
 * the priors).  A config's profile=PATH overrides this for that prediction.  The report's
 * first six entries are the global parameters in the order above; any others name an
 * architecture.  Exceptional returns: EC_EINVAL (a value that is not positive and finite,
 * an unknown name or architecture, a report out of order). */
EC_API int ec_ctx_set_fit(ec_ctx *ctx, const ec_fit_report *report);

/* Write / read a profile CSV: columns parameter,architecture,value,stderr,runs,fitted_on,
 * meaning, one row per entry of the report ("" architecture: global; runs: the runs that
 * exercise it; fitted_on: the architectures of the fit) and, when known, an error_log_sd row
 * (leave-one-GPU-out), error_log_sd_unseen_arch and error_log_sd_unseen_arch_host rows
 * (leave-one-architecture-out: GPU-bound and host-bound predictions) and
 * error_log_sd_comm_direct / error_log_sd_comm_host rows (comm_error_log_sd).
 * Reading also accepts the older parameter,value[,stderr,meaning] files (global only);
 * parameters a file does not name keep their priors.  Writing is atomic. */
EC_API int ec_profile_write(ec_ctx *ctx, const ec_fit_report *report, const char *path);
EC_API int ec_profile_read(ec_ctx *ctx, const char *path, ec_fit_report *out);

/* ---------------------------------------------------------------------------------
 * Output files.  Every file the library writes (CSV, traces, profiles) goes through this one
 * writer, and hosts can use it for theirs (the Lua layer's pictures):
 *   - bytes go to a temporary file created with mkstemp beside the target (".NAME.XXXXXX",
 *     never an existing file or a link), fsync'ed and renamed over the target on commit, so
 *     readers see the old file or the whole new one, and two writers of one path each put a
 *     complete file in place (the last rename wins);
 *   - the target must be absent or a regular file: a symbolic link, device, FIFO, socket or
 *     folder is refused (EC_EIO), and so is a file this context (or a worker thread of it) read
 *     as an input (run records, profile=, lengths=, prices=, a config.json, the models folder's
 *     files), so an output can never replace what it was computed from, and so is any file in
 *     the context's models folder;
 *   - the file is made afresh: 0666 less the umask, narrowed to the read and write bits a
 *     replaced file had; never a set-ID, sticky or execute bit, never the replaced file's owner;
 *   - a path with a control character is refused (EC_EINVAL);
 *   - a failure, an abort or a cancellation (ec_ctx_set_progress) removes the temporary.
 */
typedef struct ec_outfile ec_outfile;

/* Start writing path.  *out is NULL on failure.  Exceptional returns: EC_EIO (the target is
 * not a regular file, is an input, or its folder cannot take the temporary), EC_EINVAL,
 * EC_ENOMEM, EC_EMISUSE. */
EC_API int ec_outfile_open(ec_ctx *ctx, const char *path, ec_outfile **out);
/* Append n bytes.  Exceptional returns: EC_EIO (the temporary is then gone: abort or commit
 * to free f), EC_ECANCELED. */
EC_API int ec_outfile_write(ec_outfile *f, const void *buf, size_t n);
/* Flush, fsync, set the mode and rename into place.  Frees f whatever the outcome. */
EC_API int ec_outfile_commit(ec_outfile *f);
/* Abandon: remove the temporary and free f.  NULL is a no-op. */
EC_API void ec_outfile_abort(ec_outfile *f);

/* ---------------------------------------------------------------------------------
 * CSV output through libcsv and the output-file writer above (so the same rules hold:
 * temporary beside the target, renamed on ec_csv_close; a failure never leaves half a
 * file).  Quoting follows RFC 4180.
 */
typedef struct ec_csv_writer ec_csv_writer;

EC_API int ec_csv_open(ec_ctx *ctx, const char *path, ec_csv_writer **out);
/* Write one row of n fields (each NUL-terminated text). */
EC_API int ec_csv_row(ec_csv_writer *w, const char *const *fields, size_t n);
/* The same row on any stream (the CLI's stdout): the same quoting, no temporary file.
 * EC_EMISUSE for no fields or a NULL one, EC_EIO when the stream fails. */
EC_API int ec_csv_print_row(FILE *fp, const char *const *fields, size_t n);
/* Flush, close and rename into place.  Frees w whatever the outcome. */
EC_API int ec_csv_close(ec_csv_writer *w);
/* Abandon: close and remove the temporary file.  NULL is a no-op. */
EC_API void ec_csv_abort(ec_csv_writer *w);

/* The text epochcast writes for a number in its CSVs: whole numbers below 1e15 in full
 * ("87599"), others as C's "%.6g" ("0.0123457", "1.5e+07"), "0" for -0; the same bytes
 * snprintf would give, faster.  Truncated to n - 1 bytes like snprintf; 32 bytes always suffice. */
EC_API void ec_format_number(double x, char *buf, size_t n);
/* A duration as the answers print it: "850 ms", "42.0 s", "12.5 min", "4.2 h", "46.6 days"; "-"
 * when not positive.  An amount of money: "USD 0.0123", "USD 1,021.44", "USD 1,082,388" (cents
 * below 100,000), the currency first when given; "-" when not positive.  Both write at most
 * n - 1 bytes and a NUL into buf and return buf; 48 bytes suffice for any price. */
EC_API const char *ec_format_duration(double s, char *buf, size_t n);
EC_API const char *ec_format_money(double amount, const char *currency, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* EPOCHCAST_H */
