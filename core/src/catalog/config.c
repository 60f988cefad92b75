/*
 * config.c: the one config vocabulary (docs/DESIGN.md section 2) -- defaults, setting a key
 * from its text form, reading it back, and the key list with its help.
 *
 * One static const table, KEYS, drives everything: name, kind, field offset, range,
 * choices, default and help of every key, in the stable order of ec_config's fields.
 * Its inputs are text from the CLI, Lua tables and run-record CSV cells (runs.c).
 * Names that the context's registries know (gpu, host) and names from a fixed list (task,
 * topology) are checked when they are set, so a typo fails at its key and not later at
 * ec_predict; a context whose models are not loaded yet defers the registry checks to
 * ec_predict.  Model ids are checked by ec_predict (a model may be a path or a network
 * defined later on the context).
 */
#include "catalog/catalog.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enums are stored through an int; C lets an enum type be narrower, so check. */
_Static_assert(sizeof(ec_strategy) == sizeof(int) && sizeof(ec_precision) == sizeof(int) &&
               sizeof(ec_padding) == sizeof(int) && sizeof(ec_optimizer) == sizeof(int) &&
               sizeof(ec_tokenize) == sizeof(int) && sizeof(ec_tokenizer) == sizeof(int) &&
               sizeof(ec_attention) == sizeof(int) && sizeof(ec_memory_format) == sizeof(int) &&
               sizeof(ec_trainer) == sizeof(int) && sizeof(ec_kernels) == sizeof(int) &&
               sizeof(ec_loss_kind) == sizeof(int) && sizeof(ec_zero_grad) == sizeof(int) &&
               sizeof(ec_pp_split) == sizeof(int) && sizeof(ec_fsdp_api) == sizeof(int) &&
               sizeof(ec_act_impl) == sizeof(int) && sizeof(ec_clip_impl) == sizeof(int) &&
               sizeof(ec_attn_mask) == sizeof(int) && sizeof(ec_cp_comm) == sizeof(int), "enum storage");

typedef enum key_kind {
    KIND_STR,   /* char[size], must fit with its NUL */
    KIND_INT,   /* int in [lo, hi] */
    KIND_DBL,   /* double: field = text value x scale, text value in [lo, hi] */
    KIND_BOOL,  /* int 0/1; accepts 0/1/true/false/yes/no */
    KIND_ENUM,  /* int-sized enum: index into choices */
    KIND_U64,   /* uint64_t over its full range */
    KIND_RELEASE /* int EC_RELEASE(major, minor) from "major.minor[.patch]", in [lo, hi] (0: unset) */
} key_kind;

/* The table holds no pointers: a pointer in a static const table needs a relocation in a
 * PIC build, which puts it in .data.rel.ro, and nm reports that as writable data ('d'). */
typedef struct key_def {
    char name[24];
    key_kind kind;
    size_t off;            /* offsetof(ec_config, field) */
    size_t size;           /* sizeof the field */
    double lo, hi;         /* valid range of the text value (KIND_INT, KIND_DBL) */
    double scale;          /* KIND_DBL: field = value x scale */
    double def;            /* default (numeric kinds; enum index) */
    char choices[256];     /* KIND_ENUM: ", "-separated names in enum order */
    char help[160];        /* one line, with the unit and default */
    double minpos;         /* KIND_DBL: 0 or at least this (no subnormal or absurdly small rate or time) */
    int whole;             /* KIND_DBL: a whole number (a count of samples) */
} key_def;

#define FSIZE(f) sizeof(((ec_config *)0)->f)
#define STR(f, help) { #f, KIND_STR, offsetof(ec_config, f), FSIZE(f), 0, 0, 1, 0, "", help, 0, 0 }
#define INT(f, lo, hi, def, help) { #f, KIND_INT, offsetof(ec_config, f), FSIZE(f), lo, hi, 1, def, "", help, 0, 0 }
#define DBL(n, f, lo, hi, sc, def, help) { n, KIND_DBL, offsetof(ec_config, f), FSIZE(f), lo, hi, sc, def, "", help, 0, 0 }
/* A rate, time or count that is 0 (its default meaning) or in [minpos, hi]; whole: a count. */
#define DBLZ(n, f, minpos, hi, sc, def, whole, help) \
    { n, KIND_DBL, offsetof(ec_config, f), FSIZE(f), 0, hi, sc, def, "", help, minpos, whole }
/* A software release, written "2.10", kept as EC_RELEASE(2, 10): 0 (the default) or in [lo, hi]. */
#define REL(n, f, lo, hi, help) { n, KIND_RELEASE, offsetof(ec_config, f), FSIZE(f), lo, hi, 1, 0, "", help, 0, 0 }
#define BOOL(f, help) { #f, KIND_BOOL, offsetof(ec_config, f), FSIZE(f), 0, 1, 1, 0, "", help, 0, 0 }
#define ENUM(n, f, def, ch, help) { n, KIND_ENUM, offsetof(ec_config, f), FSIZE(f), 0, 0, 1, def, ch, help, 0, 0 }

static const key_def KEYS[] = {
    STR(model, "network preset id (bert-base, llama-3.1-8b, ...), a config.json path or a Hugging Face id (owner/name) [required]"),
    STR(task, "head: classify, squad, pretrain, lm, imagenet, token_classify [the model's default]"),
    STR(gpu, "hardware profile id, alias or nvidia-smi name, e.g. a100-sxm4-80gb [required]"),
    INT(num_gpus, 1, 65536, 1, "GPUs taking part, 1..65536 [1]"),
    ENUM("strategy", strategy, 0, "single, dp, ddp, fsdp, zero",
         "single, dp, ddp, fsdp (sharding=), zero (DeepSpeed, zero_stage=) [single; ddp if num_gpus > 1]"),
    STR(topology, "GPU interconnect: nvlink, pcie-switch, pcie-host, a16-board [profile default]"),
    INT(nodes, 1, 4096, 1, "machines, 1..4096 [1]"),
    DBLZ("network_gbit_per_s", network_bytes_per_s, 1e-3, 1e6, 1e9 / 8, 0, 0,
         "inter-node bandwidth per node in Gbit/s (1e9 bit/s), 0.001..1e6 [0 = profile default]"),
    DBLZ("busbw_gbyte_per_s", busbw_bytes_per_s, 1e-3, 1e5, 1e9, 0, 0,
         "measured in-training NCCL all-reduce busbw in a node, GB/s (1e9 B/s), 0.001..1e5 [0 = topology]"),
    BOOL(gradient_as_bucket_view, "DDP gradient_as_bucket_view: no bucket copy of the gradients, 0/1 [0]"),
    ENUM("precision", precision, 0, "fp32, tf32, amp_fp16, amp_bf16, bf16, fp16, amp_fp8",
         "fp32, tf32, amp_fp16, amp_bf16, bf16, fp16 (pure), amp_fp8 (Transformer Engine) [fp32]"),
    INT(batch_per_gpu, 1, 1048576, 0, "micro-batch per GPU in samples, 1..1048576 [required]"),
    INT(seq_len, 1, 1048576, 0, "tokens per sample, or the cap with padding=dynamic [preset default]"),
    ENUM("padding", padding, 0, "max_length, dynamic, bucketed",
         "max_length, dynamic (longest in batch), bucketed (group_by_length) [max_length]"),
    STR(lengths, "length distribution: lognormal(median,sigma), normal, uniform, fixed, or a CSV path"),
    INT(image_size, 1, 65536, 0, "pixels per side for vision models [preset default]"),
    INT(grad_accum, 1, 1048576, 1, "micro-steps per optimizer step, 1..1048576 [1]"),
    ENUM("optimizer", optimizer, EC_OPT_ADAMW,
         "sgd, adam, adamw, adamw_foreach, adamw_fused, lamb, adamw_torch, adamw_torch_fused, adamw_hf, "
         "adafactor, adamw_8bit, paged_adamw_8bit, sgd_momentum, none, paged_adamw, adamw_apex_fused, bertadam",
         "sgd, adam(w), adamw_foreach/_fused, lamb, adamw_torch(_fused), adamw_hf, adafactor, (paged_)adamw(_8bit), "
         "adamw_apex_fused, bertadam, none [adamw]"),
    ENUM("checkpointing", checkpointing, 0, "0, 1, selective, selective_op",
         "activation checkpointing: 0, 1 (each layer), selective (the attention core), selective_op "
         "(torchtitan's per-op) [0]"),
    ENUM("compile", compile, 0, "0, 1, reduce-overhead, max-autotune, max-autotune-no-cudagraphs",
         "torch.compile: 0 (eager), 1 (default mode), reduce-overhead, max-autotune(-no-cudagraphs) [0]"),
    ENUM("attention", attention, 0, "sdpa, eager, flash, flash_triton, flash3, cudnn, flash1, flash4, cudnn_fp8",
         "sdpa (HF default), eager (s x s scores), flash = flash2, flash1, flash3, flash4, flash_triton = "
         "triton, cudnn, cudnn_fp8 [sdpa]"),
    INT(num_workers, 0, 1024, 0, "DataLoader worker processes, 0..1024 [0]"),
    INT(prefetch_factor, 1, 1024, 2, "batches in flight per DataLoader worker, 1..1024 [2]"),
    BOOL(pin_memory, "DataLoader pin_memory, 0/1 [0]"),
    BOOL(persistent_workers, "DataLoader persistent_workers, 0/1 [0]"),
    ENUM("tokenize", tokenize, 0, "upfront, on_the_fly",
         "when text is tokenized: upfront (once) or on_the_fly (in the loader) [upfront]"),
    ENUM("tokenizer", tokenizer, 0, "fast, python", "tokenizer kind: fast (Rust) or python [fast]"),
    DBLZ("sample_cpu_s", sample_cpu_s, 1e-9, 3600, 1, -1, 0,
         "explicit loader CPU seconds per sample, 0 or 1e-9..3600 [derived from tokenizer and host]"),
    STR(host, "host CPU profile id, a row of models/hosts.csv (dispatch, loader, PCIe host-hop and through-host rates) [default]"),
    DBLZ("dataset_samples", dataset_samples, 1, 1e15, 1, 0, 1,
         "training samples per epoch, a whole number 0..1e15 [0 = unknown, no epoch time]"),
    INT(epochs, 1, 1000000, 1, "epochs, 1..1000000 [1]"),
    DBLZ("eval_samples", eval_samples, 1, 1e15, 1, 0, 1, "evaluation samples per epoch, a whole number 0..1e15 [0]"),
    DBLZ("checkpoints_per_epoch", checkpoints_per_epoch, 1e-6, 1e6, 1, 0, 0,
         "checkpoint writes (weights + optimizer states) per epoch, 0 or 1e-6..1e6 [0]"),
    ENUM("data", data_synthetic, 0, "real, synthetic, on_gpu",
         "real, synthetic (made on the GPU by the benchmark: no loader, no copy), on_gpu (already on the GPU) [real]"),
    DBLZ("gpu_step_s", gpu_step_s, 1e-6, 3600, 1, 0, 0,
         "measured GPU step time in seconds replacing the compute model, 1e-6..3600 [0 = model]"),
    STR(profile, "calibrated profile CSV from calibrate [none]"),
    { "seed", KIND_U64, offsetof(ec_config, seed), FSIZE(seed), 0, 0, 1, 0x5eed, "",
      "simulation random seed, 0..18446744073709551615 [24301]", 0, 0 },
    DBLZ("loop_ops_per_sample", loop_ops_per_sample, 1e-6, 1e6, 1, 0, 0,
         "small eager ops per sample issued from a Python loop in forward (each + backward) [0]"),
    DBLZ("loop_syncs_per_sample", loop_syncs_per_sample, 1e-6, 1e6, 1, 0, 0,
         "torch.tensor(..., device=cuda) calls per sample in that loop; each blocks the host [0]"),
    INT(target_len, 1, 1048576, 0, "decoder tokens per sample of encoder-decoder models (T5) [seq_len]"),
    ENUM("sharding", sharding, 0, "full_shard, shard_grad_op, hybrid_shard, no_shard",
         "with strategy=fsdp: full_shard, shard_grad_op, hybrid_shard, no_shard [full_shard]"),
    ENUM("reduce_dtype", reduce_dtype, 0, "auto, fp32, bf16, fp16",
         "gradient reduction dtype (FSDP MixedPrecision reduce_dtype) [auto: the parameters' dtype]"),
    INT(zero_stage, 1, 3, 0, "with strategy=zero: DeepSpeed ZeRO stage 1, 2 or 3 [required then]"),
    ENUM("zero_reduce", zero_reduce, 0, "reduce_scatter, all_reduce",
         "ZeRO-1/2 gradient buckets: reduce_scatter (Megatron's distributed optimizer), all_reduce (DeepSpeed) "
         "[reduce_scatter]"),
    ENUM("offload", offload, 0, "none, optimizer, optimizer_and_params",
         "ZeRO/FSDP CPU offload: none, optimizer, optimizer_and_params [none]"),
    INT(tp, 1, 1024, 1, "tensor-parallel degree (Megatron, within a node) [1]"),
    BOOL(sequence_parallel, "Megatron sequence parallelism with tp > 1, 0/1 [0]"),
    INT(pp, 1, 1024, 1, "pipeline-parallel stages [1]"),
    ENUM("pp_schedule", pp_schedule, 0, "1f1b, gpipe, interleaved",
         "pipeline schedule: 1f1b, gpipe, interleaved (pp_chunks per stage) [1f1b]"),
    INT(pp_chunks, 1, 1024, 1, "model chunks per pipeline stage with pp_schedule=interleaved [1]"),
    INT(ep, 1, 65536, 1, "expert-parallel degree of mixture-of-experts layers (ep x etp divides tp x cp x dp) [1]"),
    INT(cp, 1, 1024, 1, "context-parallel degree: the sequence split over cp GPUs [1]"),
    INT(gpus_per_node, 1, 1024, 0, "GPUs per machine [0 = the GPU's reference system's, else 8]"),
    STR(network, "inter-node network preset of models/interconnects.csv, e.g. ib-ndr-400 [reference_systems.csv]"),
    INT(lora_r, 1, 65536, 0, "LoRA rank; 0 = full fine-tune [0]"),
    ENUM("lora_targets", lora_targets, 0, "qv, attention, attention_mlp, all_linear",
         "linears with LoRA adapters: qv (PEFT default), attention, attention_mlp, all_linear [qv]"),
    ENUM("base_precision", base_precision, 0, "same, bf16, fp16, int8, nf4, nf4_nodq",
         "frozen base with lora_r: same, bf16, fp16, int8, nf4 (QLoRA), nf4_nodq (no double quant: "
         "Lightning's bnb.nf4) [same]"),
    DBLZ("price_per_gpu_hour", price_per_gpu_hour, 1e-6, 1e6, 1, 0, 0,
         "price of one GPU-hour overriding the table's offers, in its currency (USD) [0 = cheapest offer]"),
    STR(prices, "price table CSV: provider,instance,gpu,gpus,price_per_hour,... [models/prices.csv]"),
    STR(provider, "provider whose offers price the run, e.g. aws, gcp, lambda [cheapest of any]"),
    /* issue 19: the ordinary PyTorch / Hugging Face stack */
    ENUM("memory_format", memory_format, 0, "contiguous, channels_last",
         "CNN tensor layout: contiguous (NCHW) or channels_last (NHWC) [contiguous]"),
    ENUM("trainer", trainer, 0, "plain, hf, lightning",
         "training loop: plain (hand-written), hf (transformers.Trainer), lightning [plain]"),
    DBLZ("max_grad_norm", max_grad_norm, 1e-6, 1e12, 1, -1, 0,
         "gradient clipping by total norm, 0 = off [trainer's default: hf 1.0, plain/lightning off]"),
    INT(eval_batch, 1, 1048576, 0, "evaluation batch per GPU, 1..1048576 [batch_per_gpu]"),
    INT(eval_every_steps, 1, 1000000000, 0, "evaluate every N optimizer steps [once per epoch]"),
    BOOL(expandable_segments, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, 0/1 [0]"),
    REL("torch_version", torch_release, EC_RELEASE(1, 0), EC_RELEASE(99, 999),
        "PyTorch release whose defaults apply (SDPA's backend; <2.0: zeroed grads, optimizer loops; <1.12: bias add_) [current]"),
    /* issue 18: what the framework around the layers fuses */
    ENUM("kernels", kernels, 0, "eager, fused, te",
         "elementwise kernels: eager (one per op: HF), fused (flash-attn), te (Megatron with TE) [eager]"),
    /* issue 40: memory as PyTorch allocates it */
    DBLZ("memory_headroom_gib", memory_headroom_bytes, 1e-6, 1e5, 1073741824.0, -1, 0,
         "GiB kept free beyond what must be allocated, 0..the GPU's memory [auto: the allocator's usual slack]"),
    INT(loss_chunks, 1, 65536, 1, "chunked cross entropy, fp32 logits one chunk at a time (torchtune: 8) [1]"),
    BOOL(optimizer_in_bwd, "optimizer step in backward, freeing each gradient (torchtune), 0/1 [0]"),
    ENUM("loss", loss, 0, "cross_entropy, sum, cross_entropy_fp32, fused_cross_entropy, fused_linear_cross_entropy",
         "cross_entropy, sum, cross_entropy_fp32 (upcast), fused_cross_entropy (xentropy), "
         "fused_linear_cross_entropy [cross_entropy]"),
    ENUM("zero_grad", zero_grad, 0, "auto, set_to_none, zeros, never",
         "how the loop clears gradients: set_to_none, zeros (kept alive), never [auto: zeros before 2.0]"),
    /* issue 41: a run's length without an epoch */
    DBLZ("train_tokens", train_tokens, 1, 1e18, 1, 0, 0,
         "tokens the run trains (run time and cost without dataset_samples), 1..1e18 [0 = dataset_samples x epochs]"),
    DBLZ("train_samples", train_samples, 1, 1e18, 1, 0, 1,
         "samples the run trains (run time and cost without dataset_samples), a whole number 1..1e18 [0]"),
    /* LoRA under FSDP as LitGPT runs it */
    BOOL(fsdp_no_sync, "FSDP accumulation in no_sync (Fabric's no_backward_sync): unsharded gradients until the "
                       "last micro-step, 0/1 [0]"),
    ENUM("lora_fsdp_wrap", lora_fsdp_wrap, 0, "separate, block",
         "FSDP units of the LoRA adapters: separate (torchtune) or block (LitGPT: the frozen weights get "
         "gradients too) [separate]"),
    BOOL(quant_head, "with a quantized base, the output head's linear quantized too (Lightning's "
                     "BitsandbytesPrecision, LitGPT), 0/1 [0]"),
    /* issue 40: what the loop keeps of the model's outputs */
    ENUM("logits_held", logits_held, 0, "auto, 0, 1",
         "the loop holds the returned logits through backward: 0 (del logits), 1 [auto: plain loop, unchunked]"),
    /* Issue 39: ZeRO-1/2 over groups of the data-parallel ranks (apex DistributedFusedLAMB's dwu_group_size) */
    INT(zero_shard_size, 1, 65536, 0, "ZeRO-1/2 shard group: dp ranks sharing one optimizer-state copy (apex "
        "dwu_group_size) [all dp ranks]"),
    /* LoRA's dropout on the adapters' input (PEFT LoraConfig.lora_dropout) */
    DBL("lora_dropout", lora_dropout, 0, 0.999, 1, 0,
        "LoRA dropout on each adapter's input, 0..0.999 (PEFT lora_dropout): a kept copy and mask per adapter [0]"),
    /* Issue 39: packed sequences (NeMo packed_sequence): attention within each packed sequence */
    INT(packed_seq_len, 1, 1048576, 0, "mean tokens per sequence packed into each seq_len sample; varlen "
        "attention (flash, cudnn) within each [0 = unpacked]"),
    /* Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split */
    ENUM("pp_split", pp_split, 0, "layers, embedding, loss, embedding_loss",
         "with pp > 1, what the stages split: layers, or the embedding and/or loss as one layer each "
         "(Megatron-Core) [layers]"),
    /* Issue 39: the pretrain head on every position (HF BertForPreTraining, NVIDIA DLE 2019-2021) */
    BOOL(mlm_all_positions, "pretrain MLM head on every position (HF BertForPreTraining, DLE before 2022), "
                            "not the masked only, 0/1 [0]"),
    /* CUDA graphs captured by the script (torch.cuda.graphs; NVIDIA's MLPerf BERT --use_cuda_graph) */
    BOOL(cuda_graphs, "forward and backward replayed from CUDA graphs the script captured (torch.cuda.graphs), "
         "0/1 [0]"),
    /* Megatron's distributed optimizer: --overlap-param-gather (NeMo overlap_param_sync) */
    BOOL(overlap_param_gather, "ZeRO-1/2 parameter all-gather under the next forward (Megatron "
         "--overlap-param-gather), 0/1 [0]"),
    /* apex DistributedFusedLAMB/Adam: --dwu-num-blocks buckets, 1 without --dwu-overlap-reductions */
    INT(grad_buckets, 0, 65536, 0, "gradients reduced in N equal buckets as backward fills them (apex "
        "--dwu-num-blocks); 1: after backward [0 = DDP's]"),
    /* FSDP2's fully_shard (torchtitan, torchtune): parameters copied out of the all-gather, gradients in */
    ENUM("fsdp_api", fsdp_api, 0, "flat_param, fully_shard",
         "FSDP: flat_param (FullyShardedDataParallel) or fully_shard (FSDP2: copies in and out of the "
         "collectives' buffers) [flat_param]"),
    /* Megatron-Core's expert_tensor_parallel_size (MoE parallel folding) */
    INT(etp, 1, 1024, 0, "expert tensor-parallel degree: each expert's width over etp GPUs, ep x etp "
        "dividing tp x cp x dp (Megatron-Core) [tp]"),
    /* apex DistributedFusedLAMB with set_param_views_to_flat_buffer=False (apex's default; NVIDIA's MLPerf
     * BERT run_pretraining.py under --dwu-overlap-reductions): its step copies through the flat buffers */
    BOOL(zero_flat_copies, "ZeRO-1/2 as apex DistributedFusedLAMB copying gradients into its flat buffer and "
         "gathered parameters back, 0/1 [0]"),
    /* Megatron-Core overlap_moe_expert_parallel_comm (Megatron-Bridge moe_a2a_overlap): the combined 1F1B
     * schedule of megatron/core/models/common/model_chunk_schedule_plan.py @core_v0.15.0 */
    BOOL(moe_a2a_overlap, "expert all-to-all under another micro-batch's compute (Megatron-Core "
         "overlap_moe_expert_parallel_comm), 0/1 [0]"),
    /* Transformer Engine's FP8 recipe: TE 2.x Float8CurrentScaling (Megatron-Bridge --compute_dtype fp8_cs) */
    ENUM("fp8_recipe", fp8_recipe, 0, "delayed, current",
         "Transformer Engine FP8 scaling (amp_fp8, kernels=te): delayed (TE 1.x), current (an amax pass "
         "before each cast) [delayed]"),
    /* Transformer Engine userbuffers: Megatron --tp-comm-overlap, NeMo ub_tp_comm_overlap */
    BOOL(tp_comm_overlap, "kernels=te, sequence_parallel: forward TP collectives under the GEMMs too (TE "
         "userbuffers), 0/1 [0]"),
    /* NeMo ub_tp_comm_overlap_cfg, Megatron-Bridge CommOverlapConfig tp_comm_overlap_cfg */
    STR(tp_overlap_cfg, "TE userbuffers configuration of tp_comm_overlap, an id of models/tp_overlap.csv "
        "[h100_h8192_tp4_mbs1_seqlen8192]"),
    DBL("bucket_cap_mb", bucket_cap_mb, 0.001, 1e9, 1, 0,
        "DDP gradient bucket size in MiB (torch bucket_cap_mb; apex message_size x gradient bytes) [25]"),
    ENUM("activation", activation, 0, "network, gelu, gelu_new, gelu_python",
         "MLP activation as the code computes it: network (as its config names it), gelu, gelu_new, "
         "gelu_python [network]"),
    /* issue 39: the kernels' releases */
    REL("cudnn_version", cudnn_release, EC_RELEASE(7, 0), EC_RELEASE(99, 999),
        "cuDNN release of attention=cudnn, e.g. 9.13 (models/attention.csv cudnn_version) [the newest measured]"),
    ENUM("clip_impl", clip_impl, 0, "torch, multi_tensor",
         "what clips at max_grad_norm: torch (clip_grad_norm_ as torch_version has it), multi_tensor (apex "
         "amp_C: DLE BERT, Megatron) [torch]"),
    BOOL(master_weights, "fp16/bf16 model stepping an fp32 master copy (apex amp O2): fp32 states, gradients copied in, "
                         "weights copied back, 0/1 [0]"),
    ENUM("attn_mask", attn_mask, 0, "auto, none, explicit",
         "mask SDPA gets: none (is_causal), explicit (every key block) [auto: explicit with lengths, and under "
         "compile (HF; constants.csv hf_compile_mask_from_version)]"),
    /* NeMo fp8_params, Megatron --fp8-param-gather, TE fp8_model_init */
    BOOL(fp8_params, "the blocks' linear weights held in FP8 (TE fp8_model_init; amp_fp8, kernels=te, zero or "
                     "fsdp): a byte a weight, transposed, not cast, gathered so, 0/1 [0]"),
    /* Megatron-Core activation_func_fp8_input_store (MLPerf FP8_ACT) */
    BOOL(fp8_act_store, "the SwiGLU's input kept for backward in FP8 (Megatron activation_func_fp8_input_store; "
                        "kernels=te): a byte an element, cast there and back, 0/1 [0]"),
    ENUM("cp_comm_type", cp_comm_type, 0, "p2p, a2a",
         "context parallelism's exchange, kernels=te (Megatron cp_comm_type): p2p (a ring, a send "
         "under each step), a2a (all-to-alls of Q, K, V and output) [p2p]"),
    INT(act_offload_layers, 0, 65535, 0, "repeated layers whose activations wait in host memory from forward to "
        "backward (Megatron cpu_offloading_num_layers), 0..65535 [0]"),
    INT(nccl_dp_ctas, 0, 64, 0, "NCCL channels (max_ctas) of the dp x cp gradient and parameter collectives [0: NCCL's own]"),
    INT(nccl_cp_ctas, 0, 64, 0, "NCCL channels of context parallelism's exchange [0: NCCL's own]"),
    INT(nccl_tp_ctas, 0, 64, 0, "NCCL channels of tensor parallelism's collectives [0: NCCL's own]"),
};

#define N_KEYS (sizeof KEYS / sizeof KEYS[0])
_Static_assert(N_KEYS <= 64 * EC_CONFIG_MASK_WORDS, "set_mask has room for every key");

static const char BOOL_CHOICES[] = "0, 1, true, false, yes, no";

/* ---- helpers ----------------------------------------------------------------------- */

static int find_key(const char *name, size_t len)
{
    if (len == 0)
        return -1;
    for (size_t i = 0; i < N_KEYS; i++) /* the first letter rules out most keys without a strlen */
        if (KEYS[i].name[0] == name[0] && strncmp(KEYS[i].name, name, len) == 0 && KEYS[i].name[len] == '\0')
            return (int)i;
    return -1;
}

static int unknown_key(ec_ctx *ctx, const char *name, size_t len)
{
    const char *names[N_KEYS];
    char word[EC_NAME_MAX];

    for (size_t i = 0; i < N_KEYS; i++)
        names[i] = KEYS[i].name;
    if (len >= sizeof word)
        len = sizeof word - 1;
    memcpy(word, name, len);
    word[len] = '\0';
    return eci_error(ctx, EC_ENOTFOUND, "unknown key '%s' (did you mean '%s'?)", word,
                     eci_nearest(word, names, N_KEYS));
}

static int ascii_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int ca = (*a >= 'A' && *a <= 'Z') ? *a + 32 : *a;
        int cb = (*b >= 'A' && *b <= 'Z') ? *b + 32 : *b;
        if (ca != cb)
            return 0;
    }
    return *a == *b;
}

/* Index of value among the ", "-separated names of choices, or -1. */
static int find_choice(const char *choices, const char *value)
{
    char tok[sizeof KEYS[0].choices];
    const char *p = choices;
    int idx = 0;

    while (*p) {
        size_t len = strcspn(p, ",");
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (eci_name_eq(tok, value))
            return idx;
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
        idx++;
    }
    return -1;
}

/* Other spellings of an enum key's values: attention=flash2 is attention=flash (FlashAttention-2,
 * what `flash` meant in every fit), attention=triton is attention=flash_triton. */
static const struct {
    char key[24], alias[16], value[16];
} ENUM_ALIASES[] = {{"attention", "flash2", "flash"}, {"attention", "triton", "flash_triton"}};

/* find_choice, with the key's aliases. */
static int find_choice_alias(const key_def *k, const char *value)
{
    int e = find_choice(k->choices, value);
    for (size_t i = 0; e < 0 && i < sizeof ENUM_ALIASES / sizeof ENUM_ALIASES[0]; i++)
        if (strcmp(ENUM_ALIASES[i].key, k->name) == 0 && eci_name_eq(ENUM_ALIASES[i].alias, value))
            e = find_choice(k->choices, ENUM_ALIASES[i].value);
    return e;
}

/* The idx-th name of choices into buf (n >= sizeof choices); 0 when idx is out of range. */
static int choice_name(const char *choices, int idx, char *buf, size_t n)
{
    const char *p = choices;

    for (int i = 0; *p; i++) {
        size_t len = strcspn(p, ",");
        if (i == idx) {
            if (len >= n)
                return 0;
            memcpy(buf, p, len);
            buf[len] = '\0';
            return 1;
        }
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

static int out_of_range(ec_ctx *ctx, const key_def *k, const char *value)
{
    if (k->kind == KIND_INT)
        return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is out of range [%ld, %ld]", k->name,
                         value, (long)k->lo, (long)k->hi);
    if (k->kind == KIND_RELEASE) {
        char lo[24], hi[24];
        return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is out of range [%s, %s]", k->name, value,
                         eci_release_text((int)k->lo, lo, sizeof lo), eci_release_text((int)k->hi, hi, sizeof hi));
    }
    if (k->minpos > 0)
        return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is out of range: 0 or [%g, %g]", k->name, value,
                         k->minpos, k->hi);
    return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is out of range [%g, %g]", k->name, value,
                     k->lo, k->hi);
}

/* Put key i back to its default, as ec_config_init does. */
static void reset_key(ec_config *cfg, size_t i)
{
    const key_def *k = &KEYS[i];
    char *field = (char *)cfg + k->off;

    switch (k->kind) {
    case KIND_STR:
        field[0] = '\0';
        break;
    case KIND_INT:
    case KIND_BOOL:
    case KIND_ENUM:
    case KIND_RELEASE: {
        int v = (int)k->def;
        memcpy(field, &v, sizeof v);
        break;
    }
    case KIND_DBL: {
        double v = k->def * k->scale;
        memcpy(field, &v, sizeof v);
        break;
    }
    case KIND_U64: {
        uint64_t v = (uint64_t)k->def;
        memcpy(field, &v, sizeof v);
        break;
    }
    }
}

/* Key i counts as given (ec_config_is_set) or not. */
static void mark_given(ec_config *cfg, size_t i, int given)
{
    if (given)
        cfg->set_mask[i / 64] |= (uint64_t)1 << (i % 64);
    else
        cfg->set_mask[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* An empty value means the default, as an empty CSV cell does: the key is reset and its
 * set_mask bit cleared.  Any other value must parse and lie in range; on failure cfg is
 * left as it was. */
static int set_key(ec_ctx *ctx, ec_config *cfg, size_t i, const char *value)
{
    const key_def *k = &KEYS[i];
    char *field = (char *)cfg + k->off;

    if (value[0] == '\0') {
        reset_key(cfg, i);
        mark_given(cfg, i, 0);
        return EC_OK;
    }
    switch (k->kind) {
    case KIND_STR: {
        size_t len = strlen(value);
        if (len >= k->size)
            return eci_error(ctx, EC_EINVAL, "key '%s': value is too long (%zu bytes, at most %zu)",
                             k->name, len, k->size - 1);
        memcpy(field, value, len + 1);
        break;
    }
    case KIND_INT: {
        long l;
        double d;
        int iv;
        if (eci_parse_long(value, &l) != 0) {
            if (eci_parse_double(value, &d) != 0)
                return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is not a number", k->name, value);
            if (d < k->lo || d > k->hi)
                return out_of_range(ctx, k, value);
            return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is not an integer", k->name, value);
        }
        if (l < (long)k->lo || l > (long)k->hi)
            return out_of_range(ctx, k, value);
        iv = (int)l;
        memcpy(field, &iv, sizeof iv);
        break;
    }
    case KIND_DBL: {
        double d;
        if (eci_parse_double(value, &d) != 0)
            return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is not a number", k->name, value);
        if (d < k->lo || d > k->hi || (d > 0 && d < k->minpos))
            return out_of_range(ctx, k, value);
        if (k->whole && d != floor(d))
            return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is not a whole number", k->name, value);
        d *= k->scale;
        memcpy(field, &d, sizeof d);
        break;
    }
    case KIND_RELEASE: {
        int r;
        if (eci_parse_release(value, &r) != 0)
            return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is not a release (major.minor, e.g. 2.10 or 9.13.1)",
                             k->name, value);
        if (r < (int)k->lo || r > (int)k->hi)
            return out_of_range(ctx, k, value);
        memcpy(field, &r, sizeof r);
        break;
    }
    case KIND_BOOL: {
        int b;
        if (strcmp(value, "1") == 0 || ascii_ieq(value, "true") || ascii_ieq(value, "yes"))
            b = 1;
        else if (strcmp(value, "0") == 0 || ascii_ieq(value, "false") || ascii_ieq(value, "no"))
            b = 0;
        else
            return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is not one of %s", k->name, value,
                             BOOL_CHOICES);
        memcpy(field, &b, sizeof b);
        break;
    }
    case KIND_ENUM: {
        int e = find_choice_alias(k, value);
        if (e < 0 && (ascii_ieq(value, "true") || ascii_ieq(value, "yes")))
            e = find_choice(k->choices, "1"); /* checkpointing=true: the bool spellings of 0 and 1 */
        else if (e < 0 && (ascii_ieq(value, "false") || ascii_ieq(value, "no")))
            e = find_choice(k->choices, "0");
        if (e < 0)
            return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is not one of %s", k->name, value,
                             k->choices);
        memcpy(field, &e, sizeof e);
        break;
    }
    case KIND_U64: {
        uint64_t u;
        int overflow;
        if (eci_parse_u64(value, &u, &overflow) != 0) {
            if (overflow)
                return eci_error(ctx, EC_EINVAL, "key '%s': '%s' is out of range [0, %llu]",
                                 k->name, value, (unsigned long long)UINT64_MAX);
            return eci_error(ctx, EC_EINVAL,
                             "key '%s': '%s' is not a number (expected an integer in [0, %llu])",
                             k->name, value, (unsigned long long)UINT64_MAX);
        }
        memcpy(field, &u, sizeof u);
        break;
    }
    }
    mark_given(cfg, i, 1);
    return EC_OK;
}

/* A name-valued key's value checked against what the context knows; EC_OK for other keys,
 * for "" (the default) and, for registry names, while the context has no models loaded. */
static int check_name(ec_ctx *ctx, const key_def *k, const char *value)
{
    if (value[0] == '\0')
        return EC_OK;
    if (strcmp(k->name, "gpu") == 0 && ctx->models_loaded)
        return eci_hw_find(ctx, value) != NULL ? EC_OK : EC_ENOTFOUND;
    if (strcmp(k->name, "host") == 0 && ctx->models_loaded)
        return eci_host_find(ctx, value) != NULL ? EC_OK : EC_ENOTFOUND;
    if (strcmp(k->name, "tp_overlap_cfg") == 0 && ctx->models_loaded)
        return eci_tp_overlap_index(ctx, value) >= 0 ? EC_OK : EC_ENOTFOUND;
    if (strcmp(k->name, "task") == 0 && eci_task_parse(value) < 0)
        return eci_error(ctx, EC_ENOTFOUND, "key 'task': unknown task '%s' (classify, squad, pretrain, lm, "
                         "imagenet)", value);
    if (strcmp(k->name, "topology") == 0 && !eci_hw_topology_known(value))
        return eci_error(ctx, EC_EINVAL, "key 'topology': '%s' is not one of nvlink, pcie-switch, pcie-host, "
                         "a16-board", value);
    return EC_OK;
}

/* ---- public API ---------------------------------------------------------------------- */

void ec_config_init(ec_config *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < N_KEYS; i++)
        reset_key(cfg, i);
    memset(cfg->set_mask, 0, sizeof cfg->set_mask);
}

int ec_config_is_set(const ec_config *cfg, size_t i)
{
    return cfg != NULL && i < N_KEYS && (cfg->set_mask[i / 64] >> (i % 64) & 1u) != 0;
}

int ec_config_key_index(const char *key)
{
    return key != NULL ? find_key(key, strlen(key)) : -1;
}

/* ---- the task vocabulary (key `task`) ---- */
static const char *const task_names[ECI_TASK_COUNT] = {"classify", "squad", "pretrain", "lm", "imagenet",
                                                        "token_classify"};

int eci_task_parse(const char *name)
{
    for (int i = 0; i < ECI_TASK_COUNT; i++) /* the first letters before a call (every prediction asks) */
        if (name != NULL && name[0] == task_names[i][0] && strcmp(name, task_names[i]) == 0)
            return i;
    return -1;
}

const char *eci_task_name(int task)
{
    return task >= 0 && task < ECI_TASK_COUNT ? task_names[task] : "?";
}

const char *eci_task_names(void)
{
    return "classify, squad, pretrain, lm, imagenet, token_classify";
}

/* The names of the eci_key keys, in that enum's order. */
static const char KEY_NAMES[ECI_N_KEYS][24] = {
    [ECI_KEY_STRATEGY] = "strategy", [ECI_KEY_NODES] = "nodes", [ECI_KEY_EPOCHS] = "epochs",
    [ECI_KEY_PREFETCH_FACTOR] = "prefetch_factor", [ECI_KEY_TOKENIZE] = "tokenize",
    [ECI_KEY_TOKENIZER] = "tokenizer", [ECI_KEY_ATTENTION] = "attention"};

_Static_assert(ECI_N_KEYS <= ECI_CTX_KEYS, "ec_ctx's key_index has no room for every eci_key");

void eci_config_keys_init(ec_ctx *ctx)
{
    for (int k = 0; k < ECI_N_KEYS; k++)
        ctx->key_index[k] = ec_config_key_index(KEY_NAMES[k]);
}

int eci_config_given(const ec_ctx *ctx, const ec_config *cfg, eci_key k)
{
    int i = ctx->key_index[k];
    return i >= 0 && ec_config_is_set(cfg, (size_t)i);
}

int ec_config_set(ec_ctx *ctx, ec_config *cfg, const char *key, const char *value)
{
    int i;

    if (ctx == NULL)
        return EC_EMISUSE;
    if (cfg == NULL || key == NULL || value == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_config_set: NULL argument");
    i = find_key(key, strlen(key));
    if (i < 0)
        return unknown_key(ctx, key, strlen(key));
    return eci_config_set_at(ctx, cfg, (size_t)i, value);
}

int eci_config_set_at(ec_ctx *ctx, ec_config *cfg, size_t i, const char *value)
{
    int rc = check_name(ctx, &KEYS[i], value);
    return rc == EC_OK ? set_key(ctx, cfg, i, value) : rc;
}

size_t eci_config_key_size(size_t i)
{
    return i < N_KEYS ? KEYS[i].size : 0;
}

void eci_config_key_get(const ec_config *cfg, size_t i, void *field)
{
    memcpy(field, (const char *)cfg + KEYS[i].off, KEYS[i].size);
}

void eci_config_key_put(ec_config *cfg, size_t i, const void *field, int given)
{
    memcpy((char *)cfg + KEYS[i].off, field, KEYS[i].size);
    mark_given(cfg, i, given);
}

int ec_config_set_word(ec_ctx *ctx, ec_config *cfg, const char *word)
{
    const char *eq;
    int i;

    if (ctx == NULL)
        return EC_EMISUSE;
    if (cfg == NULL || word == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_config_set_word: NULL argument");
    eq = strchr(word, '=');
    if (eq == NULL)
        return eci_error(ctx, EC_EINVAL, "'%s' is not key=value", word);
    i = find_key(word, (size_t)(eq - word));
    if (i < 0)
        return unknown_key(ctx, word, (size_t)(eq - word));
    return eci_config_set_at(ctx, cfg, (size_t)i, eq + 1);
}

/* Defaults outside the settable range mean "unset, derive it" (batch_per_gpu 0, seq_len 0
 * "preset default", sample_cpu_s -1 "derive").  ec_config_get writes them as "", which
 * ec_config_set reads back as the default, so get-then-set round-trips every config. */
static int unsettable_default(const key_def *k)
{
    return k->def < k->lo || k->def > k->hi;
}

int ec_config_get(const ec_config *cfg, const char *key, char *buf, size_t n)
{
    if (cfg == NULL || key == NULL || buf == NULL || n == 0)
        return EC_EMISUSE;
    buf[0] = '\0';
    int i = find_key(key, strlen(key));
    if (i < 0)
        return EC_ENOTFOUND;
    return ec_config_get_at(cfg, (size_t)i, buf, n);
}

int ec_config_get_at(const ec_config *cfg, size_t i, char *buf, size_t n)
{
    const key_def *k;
    const char *field;
    char tmp[EC_PATH_MAX + 8];

    if (cfg == NULL || buf == NULL || n == 0)
        return EC_EMISUSE;
    buf[0] = '\0';
    if (i >= N_KEYS)
        return EC_ENOTFOUND;
    k = &KEYS[i];
    field = (const char *)cfg + k->off;
    switch (k->kind) {
    case KIND_STR: {
        /* A field filled directly may lack its NUL; never read past it. */
        const char *end = memchr(field, '\0', k->size);
        size_t len = end != NULL ? (size_t)(end - field) : k->size;
        if (len >= sizeof tmp)
            len = sizeof tmp - 1;
        memcpy(tmp, field, len);
        tmp[len] = '\0';
        break;
    }
    case KIND_INT:
    case KIND_BOOL: {
        int v;
        memcpy(&v, field, sizeof v);
        if (k->kind == KIND_INT && v == (int)k->def && unsettable_default(k))
            tmp[0] = '\0';
        else
            eci_format_int(v, tmp);
        break;
    }
    case KIND_DBL: {
        double v;
        memcpy(&v, field, sizeof v);
        if ((v < 0 || v == k->def * k->scale) && unsettable_default(k))
            tmp[0] = '\0'; /* sample_cpu_s < 0: derived */
        else
            eci_format_scaled(v, k->scale, tmp, sizeof tmp);
        break;
    }
    case KIND_RELEASE: {
        int v;
        memcpy(&v, field, sizeof v);
        if (v == 0)
            tmp[0] = '\0'; /* unset: the current release */
        else
            eci_release_text(v, tmp, sizeof tmp);
        break;
    }
    case KIND_ENUM: {
        int v;
        memcpy(&v, field, sizeof v);
        if (!choice_name(k->choices, v, tmp, sizeof tmp))
            return EC_EINVAL; /* a field set directly to a value outside the enum */
        break;
    }
    case KIND_U64: {
        uint64_t v;
        memcpy(&v, field, sizeof v);
        if (v <= (uint64_t)LLONG_MAX)
            eci_format_int((long long)v, tmp);
        else
            snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
        break;
    }
    }
    if (eci_strlcpy(buf, tmp, n) >= n)
        return EC_EINVAL; /* truncated; EC_PATH_MAX bytes always suffice */
    return EC_OK;
}

size_t ec_config_key_count(void)
{
    return N_KEYS;
}

const char *ec_config_key_name(size_t i)
{
    return i < N_KEYS ? KEYS[i].name : NULL;
}

const char *ec_config_key_help(size_t i)
{
    return i < N_KEYS ? KEYS[i].help : NULL;
}

int ec_config_key_is_release(size_t i)
{
    return i < N_KEYS && KEYS[i].kind == KIND_RELEASE;
}
