#!/usr/bin/env python3
"""Build bench/data/llm_runs.csv: the rows of the public LLM measurements in bench/data/llm/*.csv
that the planned config vocabulary of issue 18 can express, as run records.  Python 3 stdlib only.

    python3 tools/data/make_llm_runs.py           # write bench/data/llm_runs.csv
    python3 tools/data/make_llm_runs.py --check   # exit 1 if the committed file differs or a
                                                  # layout check fails

The raw files (one per source, bench/data/llm/README.md says what each is and where every
number sits) keep every published number; this script only converts.  Conversions are exact
arithmetic on published numbers, never estimates:
  * tokens_per_s (all GPUs) = the table's tokens/s/GPU x num_gpus;
  * peak_bytes = GiB x 2^30;
  * grad_accum = global batch / (micro-batch x dp) with dp = num_gpus / (tp x pp x cp); when
    the table also prints GA the two must agree (else the row is refused with the reason).
Keys the tables do not state are filled only from the framework's documented defaults, and the
`source` cell says which (e.g. "zero_stage=1: NeMo/Megatron-Bridge distributed optimizer
default").  Rows with an unknown GPU variant, an unknown micro-batch, or a precision outside
the planned vocabulary (MXFP8, NVFP4) stay in the raw files only; the script prints how many
rows of each raw file it used and why it skipped the others.

Planned keys used (issue 18): gpus_per_node, network (models/interconnects.csv), strategy=fsdp|
zero|ddp|single, zero_stage, tp, pp, pp_schedule=1f1b|interleaved, pp_chunks, cp, ep, etp,
sequence_parallel, precision=amp_bf16|amp_fp8, lora_r, lora_targets=attention|attention_mlp|
all_linear, base_precision=nf4, optimizer=paged_adamw_8bit|adamw, attention=sdpa|flash|flash1|flash2|cudnn, kernels=eager|fused|te,
checkpointing, compile, reduce_dtype, fsdp_api, max_grad_norm, attn_mask=none (torchtitan's and torchtune's own
attention: SDPA with is_causal, not HF's masking_utils), task (MLPerf BERT: pretrain), metric=tokens_per_s|peak_bytes|reserved_bytes.  Model ids are Hugging Face ids or,
for models without one, "<framework>-<name>" ids listed in bench/data/llm/README.md with the
config that defines them.

Where each conversion lives: the NeMo / Megatron-Bridge performance tables in llm_nemo_tables.py,
the MLPerf results in llm_mlperf.py; torchtune, flash-attention, torchtitan and stas00's sweep
here, with build, write and the --check rules.
"""
import csv
import os
import sys

from llm_nemo_tables import GPU, MBRIDGE_RUN, MODEL, PRECISION, TE_CUDNN, from_tables
from llm_mlperf import bert_flat_copies, bert_grad_buckets, from_mlperf, from_mlperf_llama, from_mlperf_lora

HEADER = ["id", "model", "gpu", "num_gpus", "gpus_per_node", "network", "strategy", "zero_stage",
          "tp", "pp", "pp_schedule", "pp_chunks", "cp", "ep", "sequence_parallel", "precision",
          "base_precision", "lora_r", "lora_targets", "optimizer", "attention", "kernels", "checkpointing",
          "compile", "batch_per_gpu", "grad_accum", "seq_len", "metric", "value", "source", "loss_chunks",
          "optimizer_in_bwd", "reduce_dtype", "task", "zero_reduce", "zero_shard_size", "packed_seq_len",
          "pp_split", "cuda_graphs", "overlap_param_gather", "grad_buckets", "fsdp_api", "max_grad_norm", "etp",
          "zero_flat_copies", "moe_a2a_overlap", "fp8_recipe",
          "tp_comm_overlap", "tp_overlap_cfg", "trainer", "torch_version", "gradient_as_bucket_view",
          "loss", "offload", "bucket_cap_mb", "cudnn_version", "lora_dropout", "attn_mask", "host", "fp8_params",
          "fp8_act_store", "cp_comm_type", "act_offload_layers", "nccl_dp_ctas", "nccl_cp_ctas", "nccl_tp_ctas"]


def root_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(name):
    with open(os.path.join(root_dir(), "bench", "data", "llm", name), newline="") as f:
        return list(csv.DictReader(f))


# The README's RTX A6000 rows ran without activation checkpointing, the recipes' default (True in
# 8B_*_single_device.yaml@30b8519e); the README names batch, packing and compile only.  Its own
# figures say so: (1) at the same recipe and batch the A6000 peaks are about twice the 4090's
# (LoRA 30.3 against 16.2 GiB, full 37.4 against 18.9), where only the activations can differ;
# (2) with checkpointing the A6000 LoRA row's 4,699 tokens/s would need about 180 TFLOP per 4,096
# tokens (forward, its recompute, the frozen base's input gradients: 2 x 7.5e9 matmul parameters x
# 4,096 x 3) in 0.87 s, 206 TFLOP/s, above the card's 154.8 TFLOP/s bf16 peak (NV-RTXA6000-DS).
TORCHTUNE_A6000_NO_AC = ("; checkpointing=0: the README's A6000 rows ran without activation checkpointing "
                         "(enable_activation_checkpointing=False), inferred from the README's own figures: its A6000 "
                         "peaks are about twice the 4090's at the same recipe and batch (LoRA 30.3 vs 16.2 GiB, full "
                         "37.4 vs 18.9), and with checkpointing the A6000 LoRA row would run ~180 TFLOP per 4,096 "
                         "tokens at 206 TFLOP/s, above the RTX A6000's 154.8 TFLOP/s bf16 peak")


TORCHTUNE_MASK = ("attn_mask=none: torchtune's attention (torchtune/modules/attention_utils.py "
                  "_sdpa_or_flex_attention) runs SDPA with is_causal when no mask is given and a packed batch's "
                  "block-causal mask as flex attention's BlockMask (torch >= 2.5, compute capability >= 7.5), which "
                  "skips the blocks it masks: no materialized mask, priced as is_causal")


def from_torchtune(rows, skipped):
    out = []
    # every recipe of that README runs torchtune's CEWithChunkedOutputLoss (8 chunks by default): loss_chunks=8
    # attn_mask=none: torchtune's own attention, not HF's masking_utils (TORCHTUNE_MASK)
    base = {"model": "meta-llama/Llama-3.1-8B", "num_gpus": 1, "strategy": "single", "precision": "bf16",
            "checkpointing": 1, "compile": 1, "batch_per_gpu": 2, "grad_accum": 1, "seq_len": 2048, "loss_chunks": 8,
            "attn_mask": "none"}
    cfg = {"Full finetune": ({"optimizer": "paged_adamw_8bit", "optimizer_in_bwd": 1},
                             "recipes/configs/llama3_1/8B_full_single_device.yaml@30b8519e: bitsandbytes PagedAdamW8bit, "
                             "optimizer_in_bwd True (each gradient freed after its step), activation checkpointing"),
           "LoRA": ({"lora_r": 8, "lora_targets": "qv", "optimizer": "adamw_fused"},
                    "8B_lora_single_device.yaml@30b8519e: lora_rank 8, lora_attn_modules [q_proj, v_proj] only "
                    "(a subset of attention), apply_lora_to_mlp False, torch.optim.AdamW fused True, activation "
                    "checkpointing"),
           "QLoRA": ({"lora_r": 8, "lora_targets": "all_linear", "base_precision": "nf4", "optimizer": "adamw_fused"},
                     "8B_qlora_single_device.yaml@30b8519e: qlora_llama3_1_8b (NF4 base), lora_rank 8, "
                     "[q_proj, v_proj, k_proj, output_proj] + MLP (output head excluded), torch.optim.AdamW fused "
                     "True, activation checkpointing")}
    for r in rows:
        if not r["source"].startswith("pytorch/torchtune README, Memory"):
            continue
        if r["model"] != "Llama 3.1 8B" or r["gpu"] not in GPU:
            skipped.append(("torchtune", r["model"], "multi-GPU row: GPU variant (A100 40/80, SXM/PCIe) and "
                            "per-GPU vs total tokens/s not stated"))
            continue
        extra, cfgnote = cfg[r["method"]]
        gpu = GPU[r["gpu"]][0]
        rec = dict(base, gpu=gpu, **extra)
        # the README overrides: batch 2, no accumulation, packed to 2048, compile on
        note = ("%s (%s); README note: batch size 2 without gradient accumulation, packed to 2048, torch compile "
                "enabled; %s; %s" % (r["source_path"], r["method"], cfgnote, TORCHTUNE_MASK))
        if gpu == "rtx-a6000":
            rec["checkpointing"] = 0
            note += TORCHTUNE_A6000_NO_AC
        if r["metric"] == "tokens_per_s":
            rec.update(metric="tokens_per_s", value=r["value"],
                       source=note + "; tokens/s over one full epoch: the recipes' tokens_per_second_per_gpu, "
                       "batch['tokens'].numel() (2 x 2048, a pack's padding included) over the time per step "
                       "(recipes/lora_finetune_single_device.py L696, L724-728; full_finetune_single_device.py L571, "
                       "L599-609 @30b8519e)")
        elif r["metric"] == "peak_memory_per_gpu_gib":
            rec.update(metric="reserved_bytes", value=int(round(float(r["value"]) * 2 ** 30)),
                       source=note + "; peak %s GiB x 2^30: one of the recipes' logged peak_memory_active, "
                       "peak_memory_alloc, peak_memory_reserved (torchtune/training/memory.py get_memory_stats "
                       "L210-214@30b8519e: torch.cuda statistics, without the CUDA context or the paged optimizer's "
                       "unified memory; the README does not say which), compared with reserved, the largest of "
                       "the three" % r["value"])
        else:
            continue
        rec["id"] = "torchtune-%s-llama-3.1-8b-%s-%s" % (r["method"].split()[0].lower(), gpu, rec["metric"])
        out.append(rec)
    return out


# The stack of flash-attention's GPT3 table (training/ at 4a6eaa9f, the commit that added it): its
# Dockerfile builds on nvcr.io/nvidia/pytorch:22.11-py3 (PyTorch 1.13.0a0+936e930, the version the
# NGC 22.11 image ships) with pytorch-lightning==1.7.7; configs/experiment/pile/base.yaml sets
# trainer.precision bf16 and gradient_clip_val 1.0.
FA_STACK = ("trainer=lightning, torch_version=1.13: training/Dockerfile@4a6eaa9f 'FROM "
            "nvcr.io/nvidia/pytorch:22.11-py3' (PyTorch 1.13.0a0+936e930) and 'pip install ... "
            "pytorch-lightning==1.7.7'; max_grad_norm=1: configs/experiment/pile/base.yaml trainer.gradient_clip_val "
            "1.0; kernels=fused: the GPT's FusedDenseGeluDense computes gelu_new in fc1's cuBLASLt epilogue and its "
            "gradient in fc2's backward GEMM (flash_attn/modules/mlp.py, ops/fused_dense.py@4a6eaa9f, heuristic 0); "
            "loss=fused_cross_entropy: base.yaml train.loss_fn src.losses.cross_entropy_apex.CrossEntropyLossApex "
            "(xentropy_cuda_lib on the 16-bit logits, inplace_backward True), the labels shifted by the dataset "
            "(src/datamodules/datasets/lm_dataset.py __getitem__: data[:-1], data[1:]); the train perplexity metric's "
            "second xentropy forward (src/metrics/perplexity.py, no grad) is not priced")
FA_DDP = ("; optimizer=adamw_fused: base.yaml's optimizer adamw-apex, apex.optimizers.FusedAdam(adam_w_mode=True) "
          "(configs/optimizer/adamw-apex.yaml), a multi-tensor kernel per chunk; Lightning's DDP (trainer.strategy "
          "null, 8 devices)")
FA_ZERO1 = ("; optimizer=adamw with torch_version=1.13: configs/optimizer/adamw-zero.yaml wraps torch.optim.AdamW "
            "in torch.distributed.optim.ZeroRedundancyOptimizer, whose AdamW in PyTorch 1.13 loops over its shard's "
            "tensors (foreach off by default before 2.0); zero_reduce=all_reduce: the strategy is "
            "src/utils/ddp_zero1.py DDPStrategyZero1, Lightning's DDPStrategy (DDP all-reduces every gradient, the "
            "optimizer keeps its shard and broadcasts the updated parameters); gradient_as_bucket_view=1: the "
            "yamls' trainer.strategy.gradient_as_bucket_view True")


def from_flash_attention(rows):
    out = []
    cfg = {"GPT3-125M": (32, 1, "ddp", ""), "GPT3-355M": (32, 1, "ddp", ""), "GPT3-760M": (16, 2, "zero", 1),
           "GPT3-1.3B": (8, 8, "zero", 1), "GPT3-2.7B": (4, 16, "zero", 1)}
    for r in rows:
        mb, ga, strat, zs = cfg[r["model"]]
        rec = {"id": "flash-attn-" + MODEL[r["model"]].replace("flash-attn-", "") + "-a100-sxm4-80gb-8x",
               "model": MODEL[r["model"]], "gpu": "a100-sxm4-80gb", "num_gpus": 8, "gpus_per_node": 8,
               "strategy": strat, "zero_stage": zs, "precision": "amp_bf16", "attention": "flash1",
               "kernels": "fused",  # the yamls' fused_bias_fc, fused_mlp, fused_dropout_add_ln, xentropy
               "checkpointing": 0, "batch_per_gpu": mb, "grad_accum": ga, "seq_len": 2048,
               "trainer": "lightning", "max_grad_norm": 1, "torch_version": "1.13", "loss": "fused_cross_entropy",
               "metric": "tokens_per_s", "value": r["value"],
               "source": "%s; micro-batch/accumulation/strategy from training/configs/experiment/pile/"
                         "gpt3*-flash.yaml@88173a1a with gpu_mem=82 on A100 80GB (bench/data/llm/README.md); "
                         "attention=flash1: the table came with commit 4a6eaa9f (2022-11-29, 'Update configs, "
                         "add results'), before FlashAttention-2 (assets/flash2_*_benchmark.png, 2023-07-17), "
                         "so FlashAttention v1; %s" % (r["source_path"], FA_STACK)}
        if strat == "ddp":  # configs/optimizer/adamw-apex.yaml: apex.optimizers.FusedAdam(adam_w_mode=True)
            rec["optimizer"] = "adamw_fused"
            rec["source"] += FA_DDP
        else:
            rec.update(optimizer="adamw", zero_reduce="all_reduce", gradient_as_bucket_view=1)
            rec["source"] += FA_ZERO1
        out.append(rec)
    return out


TITAN_MODEL = {"Llama 3.1 8B": "meta-llama/Llama-3.1-8B", "Llama 3.1 70B": "meta-llama/Llama-3.1-70B",
               "Llama 3.1 405B": "meta-llama/Llama-3.1-405B", "Llama 3 8B": "meta-llama/Meta-Llama-3-8B",
               "Llama 3 70B": "meta-llama/Meta-Llama-3-70B", "Llama 2 13B": "meta-llama/Llama-2-13b-hf",
               "Llama 2 70B": "meta-llama/Llama-2-70b-hf"}
TITAN_COMMON = ("strategy=fsdp with reduce_dtype=fp32: FSDP2 fully_shard with MixedPrecisionPolicy(param_dtype bf16, "
                "reduce_dtype fp32) (config_manager.py mixed_precision_reduce default float32; hard-coded in "
                "parallelize_llama.py in April 2024); fsdp_api=fully_shard: FSDP2 copies each gathered unit out "
                "of the all-gather buffer into its parameters and the gradients into one reduce-scatter buffer "
                "(foreach_all_gather_copy_out, foreach_reduce_scatter_copy_in in "
                "torch/distributed/_composable/fsdp/_fsdp_collectives.py); max_grad_norm=1: train.py clips with "
                "clip_grad_norm_(foreach=True) at training.max_norm, 1.0 in every train_configs/*.toml at both commits "
                "and config_manager.py's default; attention=sdpa: the model expands the key/value heads to every "
                "query head (repeat_kv, torchtitan/models/llama/model.py L201-202@9dec370) and calls "
                "F.scaled_dot_product_attention(is_causal=True) with no mask (attn_mask=none), whose backend is PyTorch's flash kernel "
                "(FlashAttention-2, models/sdpa_backends.csv) on A100 and on H100 with that torch (cuDNN attention "
                "opt-in since pytorch/pytorch#138522, Oct 2024; #142132: the 2.6 nightly of 2024-12-04 does not pick "
                "cuDNN on H100), and the CP rows restrict SDPA to flash/efficient (torchtitan/utils.py "
                "get_train_context@9dec370), so PyTorch's ring passes the expanded K/V; checkpointing=selective_op is torchtitan's op-level "
                "selective AC (ac_config mode selective, selective_ac_option op): each block keeps its input, the "
                "SDPA output and every second mm's output (wq, wv, w1, w2), and recomputes the other mms (wk, wo, "
                "w3: about 37% of the block's forward GEMM FLOPs for Llama 3 8B) and the elementwise ops")
TITAN_H100 = ("gpu=h100-sxm5-96gb-500w, the GPU that ran: SXM H100 with 96GB HBM2e at 2.4 TB/s and the default "
              "500 W power limit (the file's Hardware section; footnote 2: peak between SXM and NVL); its GEMM "
              "efficiencies are derived from the H100 PCIe and SXM measurements (models/gpus.csv, "
              "tools/data/make_gpus.py), not from these rows; network=roce-3200: 'backend RDMA network with "
              "400 Gb/s per GPU', 8 GPUs per host")


def titan_layout(r, rec):
    """fsdp/tp/pp/cp/global/micro of a torchtitan row -> planned keys, or a reason."""
    n, tp, pp, cp, dp = (int(r[k]) for k in ("num_gpus", "tp", "pp", "cp", "fsdp"))
    if dp * tp * pp * cp != n:
        return "FSDP x TP x PP x CP = %d != %d GPUs" % (dp * tp * pp * cp, n)
    if not r["micro_batch"]:
        return "micro-batch not stated (interleaved schedule: stages per rank not stated)"
    gbs, mbs = int(r["global_batch"]), int(r["micro_batch"])
    if gbs % (mbs * dp):
        return "global batch %d not divisible by micro-batch %d x dp %d" % (gbs, mbs, dp)
    rec.update(strategy="fsdp", fsdp_api="fully_shard", max_grad_norm=1, reduce_dtype="fp32", tp=tp, pp=pp, cp=cp, batch_per_gpu=mbs,
               grad_accum=gbs // (mbs * dp), seq_len=int(r["seq_len"]), sequence_parallel=1 if tp > 1 else 0)
    if pp > 1:
        rec.update(pp_schedule="1f1b")
    return None


def from_torchtitan(h100, a100, skipped):
    """torchtitan's H100 benchmark (2024-12) and A100 performance.md (2024-04): tokens/s rows."""
    out = []
    for tag, rows in (("h100", h100), ("a100", a100)):
        for r in rows:
            if r["metric"] not in ("tokens_per_s_per_gpu", "peak_memory_per_gpu_gib"):
                continue
            mem = r["metric"] == "peak_memory_per_gpu_gib"
            text = r["method"] + " " + r["notes"]
            why = None
            if "H100" in r["gpu"] and "Grand Teton" not in r["gpu"]:
                why = "405B on 128 H100 (performance.md): torch.compile per row not stated"
            elif "selective layer" in text:
                why = "selective layer AC: the layer frequency N is not stated"
            elif "AsyncTP" in r["method"]:
                why = "AsyncTP (async tensor parallel) has no key; the plain 2D row of the same table is kept"
            if why:
                skipped.append(("torchtitan", r["model"], why))
                continue
            rec = {"model": TITAN_MODEL[r["model"]], "num_gpus": int(r["num_gpus"]), "gpus_per_node": 8,
                   "precision": "amp_fp8" if r["precision"] == "fp8" else "amp_bf16", "attention": "sdpa",
                   "compile": 1 if "torch.compile" in text else 0}
            why = titan_layout(r, rec)
            if why:
                skipped.append(("torchtitan", r["model"], why))
                continue
            if "AC no" in text:
                rec["checkpointing"] = 0
            elif "full activation checkpointing" in text or "AC full" in text:
                rec["checkpointing"] = 1
            else:
                rec["checkpointing"] = "selective_op"  # op-level SAC: see TITAN_COMMON
            notes = [TITAN_COMMON]
            rec["attn_mask"] = "none"  # torchtitan's own model calls SDPA with is_causal=True (TITAN_COMMON)
            if tag == "h100":
                rec.update(gpu="h100-sxm5-96gb-500w", network="roce-3200")
                notes.append(TITAN_H100)
                if rec["precision"] == "amp_fp8":
                    notes.append("precision=amp_fp8: torchao Float8Linear on every nn.Linear but the output head "
                                 "(float8.py module_filter_fn), dynamic tensorwise scaling; attention stays bf16")
                if "AsyncTP" in r["notes"]:
                    notes.append("AsyncTP has no key: priced as plain TP with sequence parallelism")
            else:
                rec.update(gpu="a100-sxm4-80gb")
                notes.append("gpu=a100-sxm4-80gb: the page says '64 A100 (80GB memory)', not SXM4 or PCIe (SXM4 "
                             "assumed: 8-GPU HGX nodes); network not stated, left to the reference system's")
            if mem:
                # train.py logs device_mem_stats.max_reserved_gib: torch.cuda.max_memory_reserved
                rec["metric"] = "reserved_bytes"
                rec["value"] = int(round(float(r["value"]) * 2 ** 30))
                what = ("reserved_bytes = %s GiB x 2^30 (torch.cuda.max_memory_reserved, the largest over the "
                        "GPUs)" % r["value"])
            else:
                rec["metric"] = "tokens_per_s"
                rec["value"] = int(r["value"]) * rec["num_gpus"]
                what = ("tokens_per_s = TPS/GPU %s x %s GPUs (torchtitan divides by the non-data-parallel size, so "
                        "TPS/GPU x GPUs is the total)" % (r["value"], r["num_gpus"]))
            rec["source"] = "%s (%s; %s); %s; %s; %s" % (
                r["source_path"], r["source"], r["method"], r["notes"], what, "; ".join(notes))
            out.append(rec)
    by_key = {}
    for rec in out:
        key = "torchtitan-%s-%s-%dx-%s%s" % (rec["gpu"].split("-")[0], rec["model"].split("/")[-1].lower(),
                                             rec["num_gpus"], rec["precision"],
                                             "-mem" if rec["metric"] == "reserved_bytes" else "")
        by_key[key] = by_key.get(key, 0) + 1
        rec["id"] = "%s-%d" % (key, by_key[key])
    return out


UPGRADE_GPU = {"H200": ("h200-sxm-141gb", "flash3"), "B200": ("b200", "flash4")}
UPGRADE_COMMON = ("model=meta-llama/Llama-3.1-8B (real weights), 8 GPUs in one node, precision=bf16: DeepSpeed's bf16 "
                  "(16-bit model, fp32 master weights and Adam states in the optimizer), max_grad_norm=1 "
                  "(gradient_clipping 1.0); attention: HF attn_implementation as benchmark.py's detect_backend picks it, "
                  "flash_attention_3 on the H200 (attention=flash3), flash_attention_4 on the B200 (attention=flash4); "
                  "torch_version=2.13 (2.13.0/cu130 on both)")


def from_stas00_upgrade(rows):
    """stas00's H200 vs B200 Llama-3.1-8B DeepSpeed sweep and 8k decomposition (bench/data/llm/README.md)."""
    out = []
    for r in rows:
        gpu, attention = UPGRADE_GPU[r["gpu"]]
        seq = int(r["seq_len"])
        sweep = r["method"].startswith("sweep")
        rec = {"model": "meta-llama/Llama-3.1-8B", "gpu": gpu, "num_gpus": 8, "gpus_per_node": 8, "strategy": "zero",
               "precision": "bf16", "attention": attention, "batch_per_gpu": 1, "grad_accum": 1, "seq_len": seq,
               "max_grad_norm": 1, "torch_version": "2.13", "compile": 0}
        if sweep:
            rec.update(zero_stage=3, offload="optimizer", optimizer="adamw", checkpointing=1, kernels="fused",
                       loss="fused_linear_cross_entropy")
            how = ("zero_stage=3 offload=optimizer: ZeRO-3 with offload_optimizer cpu (DeepSpeedCPUAdam on the host, "
                   "the host's CPU and memory not stated); checkpointing=1: gradient_checkpointing_enable on every "
                   "decoder layer; kernels=fused: Liger's fused RMSNorm, RoPE and SwiGLU; "
                   "loss=fused_linear_cross_entropy: Liger's fused linear cross-entropy (in training mode) runs the "
                   "head and the loss in chunks of next_power_of_2(cdiv(tokens, cdiv(vocab, hidden))) tokens "
                   "(liger_kernel/ops/fused_linear_cross_entropy.py), no full logits")
        else:
            rec.update(zero_stage=2, zero_reduce="all_reduce", optimizer="adamw_fused", checkpointing=0,
                       kernels="eager", loss="cross_entropy_fp32")
            how = ("zero_stage=2 zero_reduce=all_reduce: DeepSpeed ZeRO-2 (docs/keys.md); optimizer=adamw_fused: "
                   "DeepSpeed's FusedAdam (multi-tensor, adam_w_mode) for optimizer type AdamW without offload; "
                   "kernels=eager, no Liger; loss=cross_entropy_fp32: transformers' ForCausalLMLoss upcasts the "
                   "logits to fp32")
        if r["metric"] == "tflops_per_gpu":
            dense_n = (4096 * 14336 * 3 + 4096 * (4096 + 1024 + 1024 + 4096)) * 32 + 128256 * 4096
            tflop = (6 * dense_n * seq + 6 * seq ** 2 * 128 * 32 * 32) / 1e12
            step_s = tflop / float(r["value"])
            rec.update(metric="tokens_per_s", value="%.6g" % (8 * seq / step_s))
            what = ("tokens_per_s = 8 GPUs x %d tokens / step, step = %.4g TFLOP (estimate_tflos: 6 x %d dense "
                    "parameters x tokens + 6 x seq^2 x 128 x 32 heads x 32 layers) / %s TFLOPS = %.4g s"
                    % (seq, tflop, dense_n, r["value"], step_s))
            tag = ""
        else:
            rec.update(metric="reserved_bytes", value=int(round(float(r["value"]) * 2 ** 30)))
            what = "reserved_bytes = %s GiB x 2^30 (max_memory_reserved, the largest over the ranks)" % r["value"]
            tag = "-mem"
        rec["id"] = "stas00-upgrade-%s-llama-3.1-8b-%s-s%d%s" % (
            gpu.split("-")[0], "zero3-offload" if sweep else "zero2", seq, tag)
        rec["source"] = "%s (%s; %s); %s; %s; %s; %s" % (r["source_path"], r["source"], r["method"], r["notes"], what,
                                                         how, UPGRADE_COMMON)
        out.append(rec)
    return out




def build():
    skipped = []
    runs = []
    runs += from_tables(read("nemo_24_07_perf_summary.csv"), "nemo2407", skipped)
    runs += from_tables(read("megatron_bridge_perf_summary.csv"), "mbridge", skipped)
    runs += from_torchtune(read("torchtune_readme.csv"), skipped)
    runs += from_flash_attention(read("flash_attention_training.csv"))
    runs += from_torchtitan(read("torchtitan_h100_202412.csv"), read("torchtitan_performance_md.csv"), skipped)
    runs += from_mlperf(read("mlperf_training.csv"), skipped)
    runs += from_stas00_upgrade(read("stas00_upgrade.csv"))
    runs += from_mlperf_llama(read("mlperf_llama31_8b.csv"))
    runs += from_mlperf_lora(read("mlperf_llama2_70b_lora.csv"))
    ids = [r["id"] for r in runs]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate ids: %s" % sorted({i for i in ids if ids.count(i) > 1}))
    return runs, skipped


def write(path, runs):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER, lineterminator="\n")
        w.writeheader()
        for r in runs:
            w.writerow({k: r.get(k, "") for k in HEADER})


def as_run_errors(row):
    """A Megatron-Bridge row of MBRIDGE_RUN against the layout its perf script ran (not the table's)."""
    errors = []
    cols = {"micro_batch": "batch_per_gpu", "vp": "pp_chunks", "grad_accum": "grad_accum", "ep": "ep"}
    for (model, gpu, prec), (cells, _) in MBRIDGE_RUN.items():
        prefix = "mbridge-pretrain-%s-%s-" % (MODEL[model].split("/")[-1].lower(), GPU[gpu][0])
        if not row["id"].startswith(prefix) or row["precision"] != PRECISION[prec]:
            continue
        for cell, want in cells.items():
            if row.get(cols[cell], "") != want:
                errors.append("%s: %s is '%s', its perf script ran %s (MBRIDGE_RUN)" %
                              (row["id"], cols[cell], row.get(cols[cell], "<no column>"), want))
    return errors


def mlperf_graph_errors(path):
    """The committed MLPerf BERT rows against their own scripts' flags: cuda_graphs=1 exactly where the
    config's EXTRA_PARAMS (quoted in `source`) passes --use_cuda_graph, task=pretrain (the MLM head on the
    masked positions) exactly where it passes --dense_seq_output, else task=lm (every position); every MLPerf
    GPT-3 row overlap_param_gather=1 (its round's distributed_fused_adam config: overlap_param_sync true), and
    so every NeMo 24.07 pre-training/SFT row and every Megatron-Bridge row with the distributed optimizer; every
    NeMo 24.07 row attention=flash (the launcher's NVTE_FUSED_ATTN=0) but GPT3-175B's (cudnn)."""
    errors = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["id"].startswith("mlperf-gpt3-") and row.get("overlap_param_gather", "") != "1":
                errors.append("%s: overlap_param_gather is '%s', the round's optimizer config sets "
                              "overlap_param_sync true" % (row["id"], row.get("overlap_param_gather", "<no column>")))
            megatron_opt = (row["id"].startswith(("nemo2407-pretrain-", "nemo2407-sft-", "mbridge-sft-", "mbridge-lora-")) or
                            (row["id"].startswith("mbridge-pretrain-") and row["strategy"] == "zero"))
            if megatron_opt and row.get("overlap_param_gather", "") != "1":
                errors.append("%s: overlap_param_gather is '%s', its recipe's distributed optimizer gathers the "
                              "parameters under the forward (NEMO_PRETRAIN_CONF, NEMO_SFT_OPTIM, MBRIDGE_OPG, MBRIDGE_FT_OPG)" %
                              (row["id"], row.get("overlap_param_gather", "<no column>")))
            if row["id"].startswith("nemo2407-") and row["gpu"] in TE_CUDNN:
                want = "cudnn" if row["model"] == MODEL["GPT3-175B"] else "flash"
                if row["attention"] != want:
                    errors.append("%s: attention is '%s'; NeMo-Framework-Launcher's config.yaml sets NVTE_FUSED_ATTN=0 "
                                  "for NeMo 24.07 (flash-attn runs), the 175B example 1 (NEMO2407_ATTN, "
                                  "NEMO2407_ATTN_175B): want '%s'" % (row["id"], row["attention"], want))
            errors += as_run_errors(row)
            if not row["id"].startswith("mlperf-bert-"):
                continue
            flags = row["source"].split("EXTRA_PARAMS:")[-1].split(";")[0].split()
            want = "1" if "--use_cuda_graph" in flags else ""
            if row.get("cuda_graphs", "") != want:
                errors.append("%s: cuda_graphs is '%s', its EXTRA_PARAMS say '%s'" %
                              (row["id"], row.get("cuda_graphs", "<no column>"), want))
            if row.get("grad_buckets", "") != str(bert_grad_buckets(flags)):
                errors.append("%s: grad_buckets is '%s', its EXTRA_PARAMS say %d" %
                              (row["id"], row.get("grad_buckets", "<no column>"), bert_grad_buckets(flags)))
            want = "1" if bert_flat_copies(flags) else ""
            if row.get("zero_flat_copies", "") != want:
                errors.append("%s: zero_flat_copies is '%s', its EXTRA_PARAMS say '%s'" %
                              (row["id"], row.get("zero_flat_copies", "<no column>"), want))
            task = "pretrain" if "--dense_seq_output" in flags else "lm"
            if row["task"] != task:
                errors.append("%s: task is '%s', its EXTRA_PARAMS (--dense_seq_output or not) say '%s'" %
                              (row["id"], row["task"], task))
    return errors


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        sys.stderr.write(__doc__)
        return 2
    runs, skipped = build()
    counts = {}
    for tag, model, why in skipped:
        counts[(tag, why)] = counts.get((tag, why), 0) + 1
    for (tag, why), k in sorted(counts.items()):
        print("skipped %d %s row(s): %s" % (k, tag, why))
    dst = os.path.join(root_dir(), "bench", "data", "llm_runs.csv")
    tmp = dst + ".tmp"
    write(tmp, runs)
    if check:
        with open(tmp, "rb") as a, open(dst, "rb") as b:
            same = a.read() == b.read()
        os.remove(tmp)
        print("%s %s what make_llm_runs.py makes of bench/data/llm/" % (dst, "is" if same else "differs from"))
        errors = mlperf_graph_errors(dst)
        for e in errors:
            print("bad row: " + e)
        return 0 if same and not errors else 1
    os.replace(tmp, dst)
    print("wrote %s (%d rows)" % (dst, len(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
