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
"""
import csv
import os
import re
import sys

HEADER = ["id", "model", "gpu", "num_gpus", "gpus_per_node", "network", "strategy", "zero_stage",
          "tp", "pp", "pp_schedule", "pp_chunks", "cp", "ep", "sequence_parallel", "precision",
          "base_precision", "lora_r", "lora_targets", "optimizer", "attention", "kernels", "checkpointing",
          "compile", "batch_per_gpu", "grad_accum", "seq_len", "metric", "value", "source", "loss_chunks",
          "optimizer_in_bwd", "reduce_dtype", "task", "zero_reduce", "zero_shard_size", "packed_seq_len",
          "pp_split", "cuda_graphs", "overlap_param_gather", "grad_buckets", "fsdp_api", "max_grad_norm", "etp",
          "zero_flat_copies", "moe_a2a_overlap", "fp8_recipe",
          "tp_comm_overlap", "tp_overlap_cfg", "trainer", "torch_version", "gradient_as_bucket_view",
          "loss", "offload", "bucket_cap_mb", "cudnn_version", "lora_dropout", "attn_mask", "host"]

GPU = {"H100-SXM5-80GB (DGX-H100)": ("h100-sxm5-80gb", "ib-ndr-400"),
       "B200 (DGX-B200)": ("b200", ""),  # gpus.csv b200 (alias B200-SXM6-180GB)
       "GB200 (DGX-GB200, NVL72)": ("gb200", "gb200-nvl72"),
       "GB300 (DGX-GB300)": ("gb300", ""),
       "A100-SXM4-80GB": ("a100-sxm4-80gb", ""),
       "RTX 4090": ("rtx4090", ""),
       "RTX A6000": ("rtx-a6000", "")}
MODEL = {"GPT3-5B": "nemo-gpt3-5b", "GPT3-20B": "nemo-gpt3-20b", "GPT3-175B": "nemo-gpt3-175b",
         "LLAMA2-7B": "meta-llama/Llama-2-7b-hf", "LLAMA2-13B": "meta-llama/Llama-2-13b-hf",
         "LLAMA2-70B": "meta-llama/Llama-2-70b-hf", "Nemotron-8B": "nemo-nemotron-8b",
         "Nemotron-22B": "nemo-nemotron-22b", "Nemotron-340B": "nvidia/Nemotron-4-340B-Base",
         "LLAMA3-8B": "meta-llama/Meta-Llama-3-8B", "LLAMA3-70B": "meta-llama/Meta-Llama-3-70B",
         "LLAMA3_8B": "meta-llama/Meta-Llama-3-8B", "LLAMA3_70B": "meta-llama/Meta-Llama-3-70B",
         "LLAMA3.1_405B": "meta-llama/Llama-3.1-405B", "DeepSeekV3": "deepseek-ai/DeepSeek-V3",
         "GPT OSS 120B": "openai/gpt-oss-120b", "Qwen3_30B_a3B": "Qwen/Qwen3-30B-A3B",
         "Qwen3_235B_a22B": "Qwen/Qwen3-235B-A22B",
         "Llama 3.1 8B": "meta-llama/Llama-3.1-8B",
         "GPT3-125M": "flash-attn-gpt3-125m", "GPT3-355M": "flash-attn-gpt3-355m",
         "GPT3-760M": "flash-attn-gpt3-760m", "GPT3-1.3B": "flash-attn-gpt3-1.3b",
         "GPT3-2.7B": "flash-attn-gpt3-2.7b-hdim128"}
PRECISION = {"fp8": "amp_fp8", "FP8-CS": "amp_fp8", "FP8": "amp_fp8", "BF16": "amp_bf16"}
MEGATRON_DEFAULTS = ("zero_stage=1 = Megatron distributed optimizer (NeMo/Megatron-Bridge recipe default, "
                     "use_distributed_optimizer=True); sequence_parallel=1 with tp>1 (recipe default); "
                     "the table states neither; kernels=te: Megatron-Core's Transformer "
                     "Engine layer spec (TELayerNormColumnParallelLinear, bias-SwiGLU and RoPE fusions) "
                     "with gradient_accumulation_fusion (NeMo-Framework-Launcher "
                     "conf/training/llama/llama2_7b.yaml@064e6769: gradient_accumulation_fusion, "
                     "apply_rope_fusion, persist_layer_norm true); "
                     "attention: TE DotProductAttention's backend, cuDNN fused attention (attention=cudnn) on "
                     "Hopper and later (TE @7d576ed2, the NeMo 24.07 pin, transformer_engine/pytorch/attention.py "
                     "L4000-4005; TE v2.9 dot_product_attention/utils.py L1118-1124: 'Disabling "
                     "FlashAttention to give FusedAttention preference on Hopper+'), else flash-attn 2 "
                     "(attention=flash)")
# The fine-tuning rows run SQuAD v1.1 packed to the sequence length (NeMo 24.07: "the inputs are packed to
# 4096 tokens"; Megatron-Bridge's perf recipes: offline packing of default_squad_config, pad_to_max_length),
# and Transformer Engine's THD attention attends within each packed example (cu_seqlens; NeMo
# docs/source/features/throughput_optimizations.rst@e400b6de L29-31: "the complexity of attention remains
# at sum_i s_i^2").  packed_seq_len = the mean SQuAD v1.1 training example in tokens: 79,346,108 bytes over
# 87,599 examples (the dataset card of rajpurkar/squad, README.md dataset_info@7b6d24c: every field, id and
# title too, an upper side) = 905.8 bytes, at 3.17 characters per token for Llama 2's tokenizer and 3.94
# for Llama 3's (Llama 3 paper, arXiv:2407.21783, section 3.2: "from 3.17 to 3.94 characters per token").
SQUAD_BYTES_PER_EXAMPLE = 79346108 / 87599
CHARS_PER_TOKEN = {"meta-llama/Llama-2-7b-hf": 3.17, "meta-llama/Llama-2-13b-hf": 3.17,
                   "meta-llama/Llama-2-70b-hf": 3.17, "meta-llama/Meta-Llama-3-70B": 3.94,
                   "meta-llama/Meta-Llama-3-8B": 3.94}
PACKING = ("; packed_seq_len=%d: SQuAD v1.1 packed into each sample, attention within each example (TE THD, "
           "cu_seqlens): 905.8 bytes per training example (rajpurkar/squad dataset card @7b6d24c: 79,346,108 "
           "bytes, 87,599 examples) / %.2f characters per token (arXiv:2407.21783 section 3.2)")
# NeMo 24.07's fine-tuning rows as NeMo-Framework-Launcher's H100 PEFT examples run them
# (examples/peft/llama/h100/*.sh @97f45c18, 2024-06-25; their GPUs, TP, PP, GBS 32 and MBS 1 match the
# table row for row; all set packed_sequence=true, pad_to_max_length=true, max_seq_length=4096, fp8 with
# fp8_params): SFT (peft=llama/sft, distributed_fused_adam) of 13B with virtual_pipeline_model_parallel_size
# 10 and of 70B with 20; LoRA with optim.name=fused_adam and the distributed optimizer's settings removed,
# the 70B one without sequence_parallel (conf/peft/llama/sft.yaml default False; NeMo
# megatron_base_model.py then turns ub_tp_comm_overlap off).  The LoRA rows keep strategy=zero: it is
# epochcast's description of the 16-bit model copy that megatron_amp_O2 holds (strategy=ddp would price
# PyTorch DDP's fp32 weights under autocast); sharded or not, the adapters' optimizer states and
# gradients are a few MB.
NEMO_FT = {("LLAMA2-13B", "sft"): ({"vp": "10"}, "13b_1node.sh: virtual_pipeline_model_parallel_size=10"),
           ("LLAMA2-70B", "sft"): ({"vp": "20"}, "70b_2node.sh: virtual_pipeline_model_parallel_size=20"),
           ("LLAMA2-7B", "lora"): ({}, "7b_1node_lora.sh: fused_adam (the adapters only)"),
           ("LLAMA2-13B", "lora"): ({}, "13b_1node_lora.sh: fused_adam (the adapters only)"),
           ("LLAMA2-70B", "lora"): ({}, "70b_1node_lora.sh: fused_adam (the adapters only), sequence_parallel "
                                    "unset (sft.yaml: False)")}
# Megatron-Bridge recipes that count the embedding and the loss as a pipeline layer each
# (Megatron-Core account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split)
PP_SPLIT = {"meta-llama/Llama-3.1-405B": "src/megatron/bridge/recipes/llama/llama31_405b.py@3594df94 model_config",
            "Qwen/Qwen3-235B-A22B": "src/megatron/bridge/recipes/qwen/qwen3_235b_a22b.py@3594df94 model_config"}
# Megatron-Bridge perf recipes of the NeMo 25.11 container (v0.2.0 = 7af9601c) that set Megatron-Core's
# expert_tensor_parallel_size: the experts' width unsplit (etp=1) however far tp splits the dense layers
ETP = {"Qwen/Qwen3-235B-A22B": (1, "scripts/performance/configs/qwen3/workload_base_configs.py@7af9601c L22-24 "
                                   "BASE_QWEN3_235B_A22B_CONFIG"),
       "Qwen/Qwen3-30B-A3B": (1, "scripts/performance/configs/qwen3/workload_base_configs.py@7af9601c L27-31 "
                                 "BASE_QWEN3_30B_A3B_CONFIG"),
       "openai/gpt-oss-120b": (1, "scripts/performance/configs/gpt_oss/workload_base_configs.py@7af9601c L22-28 "
                                  "BASE_GPT_OSS_120B_CONFIG")}
# Megatron-Bridge rows whose printed layout is not what the NeMo 25.11 container's perf scripts ran
# (Megatron-Bridge v0.2.0 = 7af9601c, "25.11 release notes"; issue 39).  The override replaces the
# table's cells before the layout is converted; the raw file keeps the printed numbers.
# * Qwen3 30B-A3B, H100, FP8-CS: scripts/performance/configs/qwen3/workload_base_configs.py@7af9601c
#   L233-239 QWEN3_30B_A3B_H100_FP8_CS_BASE_CONFIG = PP 2, VP 12, moe_a2a_overlap, no micro_batch_size,
#   so WorkloadBaseConfig's default 1 (scripts/performance/utils/utils.py@7af9601c L45), which
#   utils/helpers.py L66 set_workload_base_configs writes to cfg.train.micro_batch_size: MBS 1, VP 12,
#   GA 512 / (1 x 8) = 64.  The table prints MBS 2, VP 24, GA 32: the layout of the 25.09 row
#   (docs/performance-summary.md@fa0315ae L77, "Qwen3_30B_a3B (tokendrop)", from
#   configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml@cac49dcd h100 fp8_cs: vp 24, mbs 2).  The preset lost
#   VP 24 on 2025-10-14 (47ff4882: vp 24 -> 12) and MBS 2 on 2025-11-21 (8aed9a22, PR #1348, which
#   added moe_a2a_overlap, MBRIDGE_A2A_OVERLAP below), both before v0.2.0.  MBS 2 without recompute is also at the edge of 80 GB
#   (epochcast: 79.65 of 79.65 GiB), MBS 1 is not (58 GiB).
# * GPT-OSS 120B, B200, BF16: scripts/performance/configs/gpt_oss/workload_base_configs.py@7af9601c
#   L50-55 GPT_OSS_120B_B200_BF16_BASE_CONFIG = EP 64, MBS 4 (GBS 512 from L22-28: GA 512 / (4 x 64)
#   = 2, as printed); the table's EP 8 is the base config's (L24), which the preset overrides
#   (since 34641780, 2025-11-20, "fix GPT-OSS perf scripts").  EP 8 x MBS 4 would not fit in 180 GB
#   (epochcast: 196 GiB; EP 64: 146 GiB).  Its recompute_modules ["layernorm", "moe_act"] (L54) take
#   no effect at v0.2.0: helpers.py set_recompute_overrides (L178-179) does not set
#   recompute_granularity = "selective" (added after v0.2.0 by 6afd5c74), and Megatron-Core recomputes
#   those modules only under it (core_v0.15.0 transformer_layer.py L377-378, moe/experts.py L809-810).
# The printed layouts could only have run through the scripts' command-line overrides (argument_parser.py
# @7af9601c L310-342: -vp, -ep, -mb, default None), which nothing published records.
MBRIDGE_RUN = {
    ("Qwen3_30B_a3B", "H100-SXM5-80GB (DGX-H100)", "FP8-CS"): (
        {"micro_batch": "1", "vp": "12", "grad_accum": "64"},
        "layout as run: MBS 1, VP 12, GA 64 (the table prints the 25.09 row's MBS 2, VP 24, GA 32): "
        "NVIDIA-NeMo/Megatron-Bridge@7af9601c scripts/performance/configs/qwen3/workload_base_configs.py "
        "L233-239 QWEN3_30B_A3B_H100_FP8_CS_BASE_CONFIG (PP 2, VP 12, moe_a2a_overlap; no micro_batch_size) "
        "and scripts/performance/utils/utils.py L45 (micro_batch_size default 1), utils/helpers.py L66; "
        "recompute none (configs/qwen3/qwen3_llm_pretrain.py L36-38)"),
    ("GPT OSS 120B", "B200 (DGX-B200)", "BF16"): (
        {"ep": "64"},
        "ep=64 as run (the table prints the base config's EP 8): NVIDIA-NeMo/Megatron-Bridge@7af9601c "
        "scripts/performance/configs/gpt_oss/workload_base_configs.py L50-55 GPT_OSS_120B_B200_BF16_BASE_CONFIG "
        "(expert_model_parallel_size=64, micro_batch_size=4); its recompute_modules [layernorm, moe_act] "
        "take no effect at v0.2.0 (helpers.py L178-179 leaves recompute_granularity unset; Megatron-Core "
        "core_v0.15.0 transformer_layer.py L377-378 and moe/experts.py L809-810 recompute them only when "
        "it is 'selective')")}
# Megatron-Bridge 25.11 presets with moe_a2a_overlap=True (7af9601c scripts/performance/configs/qwen3/
# workload_base_configs.py; utils/helpers.py L182-186 set_moe_a2a_overlap_overrides: Megatron-Core's
# overlap_moe_expert_parallel_comm and delay_wgrad_compute): one micro-batch's expert all-to-alls under
# another's compute (moe_a2a_overlap=1).  The GB200/GB300 presets of these models and GPT-OSS's set none.
MBRIDGE_A2A_OVERLAP = {("Qwen3_30B_a3B", "H100-SXM5-80GB (DGX-H100)", "FP8-CS"): "L233-239 QWEN3_30B_A3B_H100_FP8_CS_BASE_CONFIG",
                       ("Qwen3_235B_a22B", "H100-SXM5-80GB (DGX-H100)", "FP8-CS"): "L135-144 QWEN3_235B_A22B_H100_FP8_CS_BASE_CONFIG"}
# What the runs' recipes set for Megatron's distributed optimizer and recompute (issue 39).
# NeMo 24.07: NeMo-Framework-Launcher @ tag 24.07 (8325688d), launcher_scripts/conf/training/<file>.yaml: every
# pre-training config runs optim distributed_fused_adam with overlap_grad_sync and overlap_param_sync true
# (overlap_param_gather=1: the updated parameters all-gathered under the next forward); the perf table's
# layout overrides the config's where they differ (nemotron_340b.yaml has TP 8 PP 12 VP 8, the table 8/8/12).
NEMO_PRETRAIN_CONF = {"GPT3-5B": ("gpt3/5b", "L170-173"), "GPT3-20B": ("gpt3/20b", "L171-174"),
                      "GPT3-175B": ("gpt3/175b", "L171-174"), "LLAMA2-7B": ("llama/llama2_7b", "L150-158"),
                      "LLAMA2-13B": ("llama/llama2_13b", "L150-158"), "LLAMA2-70B": ("llama/llama2_70b", "L151-159"),
                      "Nemotron-8B": ("nemotron/nemotron_8b", "L171-174"),
                      "Nemotron-22B": ("nemotron/nemotron_22b", "L173-177"),
                      "Nemotron-340B": ("nemotron/nemotron_340b", "L159-164"),
                      "LLAMA3-8B": ("llama/llama3_8b", "L147-155"), "LLAMA3-70B": ("llama/llama3_70b", "L147-157")}
# Transformer Engine's userbuffers (tp_comm_overlap=1): the configs that set ub_tp_comm_overlap true at 24.07
# (false in gpt3/5b L149, gpt3/175b L149, llama2_7b L138, llama2_13b L136, nemotron_340b L156, llama3_8b L136);
# NeMo's megatron_base_model.py turns it off without sequence parallelism, so only on TP > 1 rows
NEMO_PRETRAIN_UB = {"GPT3-20B": "L149", "LLAMA2-70B": "L136", "Nemotron-8B": "L158", "Nemotron-22B": "L158",
                    "LLAMA3-70B": "L136"}
# ... and the userbuffers configuration each names (models/tp_overlap.csv ids): the configs' defaults line L3
# "optional tp_overlap@model.ub_tp_comm_overlap_cfg: <file>" (NeMo-Framework-Launcher@064e6769
# launcher_scripts/conf/training/...); none named: TE's initialize_ub defaults (te_defaults)
NEMO_TP = "NeMo-Framework-Launcher@064e6769 launcher_scripts/conf/training/"
NEMO_PRETRAIN_UB_CFG = {
    "GPT3-20B": ("h100_h6144_tp2_mbs2_seqlen2048", NEMO_TP + "gpt3/20b.yaml L3: ub_cfg_h100_h6144_tp2_mbs2_seqlen2048"),
    "LLAMA2-70B": ("h100_h8192_tp4_mbs1_seqlen4096", NEMO_TP + "llama/llama2_70b.yaml L3: ub_cfg_h100_h8192_tp4_mbs1_seqlen4096"),
    "Nemotron-8B": ("te_defaults", NEMO_TP + "nemotron/nemotron_8b.yaml L3: ub_tp_comm_overlap_cfg empty, TE's defaults"),
    "Nemotron-22B": ("te_defaults", NEMO_TP + "nemotron/nemotron_22b.yaml L3: ub_tp_comm_overlap_cfg empty, TE's defaults"),
    "LLAMA3-70B": ("h100_h8192_tp4_mbs1_seqlen8192", NEMO_TP + "llama/llama3_70b.yaml L3: ub_cfg_h100_h8192_tp4_mbs1_seqlen8192")}
NEMO_FT_UB_CFG = ("te_defaults", "NeMo-Framework-Launcher@064e6769 launcher_scripts/conf/peft/llama/sft.yaml L3: "
                  "ub_tp_comm_overlap_cfg empty and 70b_2node.sh (@97f45c18) names none: TE's defaults")
# ... and the PEFT example that sets it with sequence parallelism (70b_1node_lora.sh L27 sets it too, without
# sequence parallelism: off)
NEMO_FT_UB = {("LLAMA2-70B", "sft"): "70b_2node.sh L27, L30: sequence_parallel=true, ub_tp_comm_overlap=true"}
# recompute the configs set (activations_checkpoint_granularity; null in every other config above)
NEMO_PRETRAIN_CKPT = {"Nemotron-340B": ("selective", "L122 activations_checkpoint_granularity: selective "
                                                     "(Megatron-Core recomputes the core attention)")}
NEMO_SFT_OPTIM = ("launcher_scripts/conf/peft/llama/sft.yaml @ 24.07 L250-260: optim distributed_fused_adam with "
                  "overlap_grad_sync and overlap_param_sync True, grad_sync_dtype bf16 (L258: reduce_dtype auto) and "
                  "dtype bf16 (L257: optimizer states in bf16, not expressed) (the examples/peft/llama/h100 scripts do "
                  "not override optim)")
# Megatron-Bridge: the library recipes' DistributedDataParallelConfig (v0.2.0 = 7af9601c,
# src/megatron/bridge/recipes/llama/llama3.py L556-559, qwen/qwen3_moe.py L314-318, gpt_oss/gpt_oss.py
# L287-290: overlap_grad_reduce, overlap_param_gather and use_distributed_optimizer True) and
# src/megatron/bridge/training/comm_overlap.py L539-546 (with data parallelism > 1 and the distributed
# optimizer: overlap_param_gather True, align_param_gather under an interleaved pipeline); the perf scripts
# turn it off only for fp8_mx (scripts/performance/configs/*/*_llm_pretrain.py), which these rows do not use.
MBRIDGE_OPG = ("overlap_param_gather=1: Megatron-Bridge recipe DDP config overlap_param_gather=True "
               "(NVIDIA-NeMo/Megatron-Bridge@7af9601c src/megatron/bridge/recipes/%s; training/comm_overlap.py "
               "L539-546: on with dp > 1 and the distributed optimizer; the perf scripts disable it for fp8_mx only)")
MBRIDGE_RECIPE = {"meta-llama/Meta-Llama-3-8B": "llama/llama3.py L556-559",
                  "meta-llama/Meta-Llama-3-70B": "llama/llama3.py L556-559",
                  "meta-llama/Llama-3.1-405B": "llama/llama3.py L556-559",
                  "Qwen/Qwen3-235B-A22B": "qwen/qwen3_moe.py L314-318",
                  "Qwen/Qwen3-30B-A3B": "qwen/qwen3_moe.py L314-318",
                  "openai/gpt-oss-120b": "gpt_oss/gpt_oss.py L287-290"}
# Megatron-Bridge's Llama 3 8B pre-training presets on Blackwell (v0.2.0 = 7af9601c,
# scripts/performance/configs/llama3/workload_base_configs.py) capture the whole iteration in CUDA graphs:
# cuda_graph_impl="local", cuda_graph_scope="full_iteration" (utils/helpers.py L70-75 set_cuda_graph_overrides
# -> model.cuda_graph_impl/cuda_graph_scope), on GB300, GB200 and B200 alike (BF16 and FP8-CS presets; FP8-MX
# reuses FP8-CS); the H100 presets set none.  The GB300 preset's micro_batch_size is 4 where the table prints
# MBS 2 and GA 8 (the table's layout is kept).
MBRIDGE_CUDA_GRAPHS = {("meta-llama/Meta-Llama-3-8B", "gb300"): "L158-163 LLAMA3_8B_GB300_FP8_CS_BASE_CONFIG "
                                                               "(micro_batch_size=4 there; the table's MBS 2 kept)",
                       ("meta-llama/Meta-Llama-3-8B", "gb200"): "L182-187 LLAMA3_8B_GB200_FP8_CS_BASE_CONFIG",
                       ("meta-llama/Meta-Llama-3-8B", "b200"): "L207-212 LLAMA3_8B_B200_FP8_CS_BASE_CONFIG"}
# Megatron-Bridge's FP8 is Transformer Engine's per-tensor current scaling: the perf scripts map
# --compute_dtype fp8_cs to bf16_with_fp8_current_scaling_mixed() (v0.2.0 = 7af9601c
# scripts/performance/utils/helpers.py L35-41); the 25.11 pre-training table prints FP8-CS
# (docs/performance-summary-archive.md @ 4ab94dfa L552-590), and the 26.06 table's "FP8" beside "MXFP8" is
# the FP8_CS preset: v0.5.0 (fcbb6031) scripts/performance/configs/llama/llama3_workload_base_configs.py
# L531-532, L549-553, L568, L592-597, L622-635, L699 define the Llama 3 70B SFT and LoRA FP8 presets as
# _FP8_CS_V1 and _FP8_MX_V1 only (no delayed-scaling preset; --compute_dtype bf16, fp8_cs, fp8_mx, fp8_sc, nvfp4).
MBRIDGE_FP8_CS = ("fp8_recipe=current: Transformer Engine FP8 current scaling (Megatron-Bridge --compute_dtype fp8_cs: "
                  "bf16_with_fp8_current_scaling_mixed, NVIDIA-NeMo/Megatron-Bridge@7af9601c "
                  "scripts/performance/utils/helpers.py L35-41, first_last_layers_bf16 False: every layer in FP8; "
                  "src/megatron/bridge/training/mixed_precision.py L272-290 also sets fp8_param_gather True, not "
                  "expressed: the parameters all-gathered in FP8; %s)")
# Megatron-Bridge SFT and LoRA of Llama 3 70B (the NeMo 26.06 rows), as Megatron-Bridge v0.5.0 (= fcbb6031,
# tagged 2026-06-16, the release of that container's month; the table names no version) runs them:
# scripts/performance/configs/llama/llama3_llm_finetune.py set_llama3_common_peft_configs L48-49 turns the
# distributed optimizer on for SFT and LoRA alike, every 70B SFT/LoRA config sets a CommOverlapConfig, and
# src/megatron/bridge/training/comm_overlap.py L563-566 then sets overlap_param_gather with dp > 1 (LoRA: the
# adapters' parameters only; on the H100 LoRA row dp = 1, nothing to gather).  llama3_workload_base_configs.py
# L695-702: recompute_num_layers=1 on the H100 LoRA BF16 preset only; the FP8_CS preset (the table's TP 2 x PP 4
# x VP 20) recomputes nothing.
MBRIDGE_FT_OPG = {("sft", "h100-sxm5-80gb"): "L166-193 llama3_70b_sft_config_h100",
                  ("sft", "gb200"): "L136-163 llama3_70b_sft_config_gb200",
                  ("sft", "gb300"): "L100-127 llama3_70b_sft_config_gb300",
                  ("lora", "h100-sxm5-80gb"): "L331-351 llama3_70b_lora_config_h100",
                  ("lora", "gb200"): "L230-257 llama3_70b_lora_config_gb200",
                  ("lora", "gb300"): "L196-216 llama3_70b_lora_config_gb300"}
MBRIDGE_FT_NOTE = ("overlap_param_gather=1: NVIDIA-NeMo/Megatron-Bridge v0.5.0 (fcbb6031) scripts/performance/configs/llama/"
                   "llama3_llm_finetune.py L48-49 (use_distributed_optimizer True) and %s (a CommOverlapConfig; "
                   "src/megatron/bridge/training/comm_overlap.py L563-566: overlap_param_gather on with dp > 1)")
# ... and the userbuffers configuration the perf scripts pick (models/tp_overlap.csv ids; FP8 rows: the fp8 presets)
MB_PERF = "NVIDIA-NeMo/Megatron-Bridge@7af9601c scripts/performance/configs/"
MBRIDGE_UB_CFG = {
    ("pretrain", "meta-llama/Meta-Llama-3-70B", "h100-sxm5-80gb"): (
        "bridge_fp8_h100_h8192_tp4", MB_PERF + "llama3/llama3_llm_pretrain.py L158-167 llama3_70b_h100_config: "
        "userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192 for FP8"),
    ("pretrain", "meta-llama/Llama-3.1-405B", "h100-sxm5-80gb"): (
        "bridge_fp8_h100_h16384_tp8_cp2", MB_PERF + "llama31/llama31_llm_pretrain.py L148-163 llama31_405b_h100_config: "
        "userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192 (L157) for FP8"),
    ("pretrain", "meta-llama/Llama-3.1-405B", "b200"): (
        "bridge_fp8_b200_h16384_tp4_cp2", MB_PERF + "llama31/llama31_llm_pretrain.py L118-137 llama31_405b_b200_config: "
        "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192 (L131) for FP8"),
    ("pretrain", "meta-llama/Llama-3.1-405B", "gb200"): (
        "bridge_fp8_b200_h16384_tp4_cp2", MB_PERF + "llama31/llama31_llm_pretrain.py L83-107 llama31_405b_gb200_config: "
        "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192 (L96) for FP8"),
    ("pretrain", "meta-llama/Llama-3.1-405B", "gb300"): (
        "bridge_fp8_b200_h16384_tp4_cp2", MB_PERF + "llama31/llama31_llm_pretrain.py L49-72 llama31_405b_gb300_config: "
        "userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192 (L62) for FP8")}
MBRIDGE_FT_UB_CFG = ("te_defaults", "NVIDIA-NeMo/Megatron-Bridge v0.5.0 (fcbb6031) scripts/performance/configs/llama/"
                     "llama3_llm_finetune.py: CommOverlapConfig without tp_comm_overlap_cfg; src/megatron/bridge/training/"
                     "comm_overlap.py L607-612: 'Initializing TP comm overlap with the default config' (TE's defaults)")
# Megatron-Bridge's tp_comm_overlap (CommOverlapConfig; src/megatron/bridge/training/comm_overlap.py L439-448 turns it
# off with TP < 2 or without sequence parallelism).  Pre-training at 7af9601c: the Llama recipes set it True
# (src/megatron/bridge/recipes/llama/llama3.py L302 llama3_70b_pretrain_config, L416 llama31_405b_pretrain_config) and
# the perf configs keep it but for nvfp4 (scripts/performance/configs/llama3/llama3_llm_pretrain.py L158-178,
# llama31/llama31_llm_pretrain.py L49-165); Qwen3 235B sets it per GPU (qwen3/qwen3_llm_pretrain.py L141-153: False
# on H100).  SFT/LoRA at v0.5.0 (fcbb6031): scripts/performance/configs/llama/llama3_llm_finetune.py
# CommOverlapConfig(tp_comm_overlap=bool(tp > 1)).
MBRIDGE_UB = {("pretrain", "meta-llama/Meta-Llama-3-70B"): (1, "7af9601c src/megatron/bridge/recipes/llama/llama3.py "
                                                               "L302, scripts/performance/configs/llama3/"
                                                               "llama3_llm_pretrain.py L158-178"),
              ("pretrain", "meta-llama/Llama-3.1-405B"): (1, "7af9601c src/megatron/bridge/recipes/llama/llama3.py L416, "
                                                             "scripts/performance/configs/llama31/llama31_llm_pretrain.py "
                                                             "L49-165 (off for nvfp4 only)"),
              ("pretrain", "Qwen/Qwen3-235B-A22B", "h100-sxm5-80gb"): (0, ""),
              ("sft", "meta-llama/Meta-Llama-3-70B", "h100-sxm5-80gb"): (1, "fcbb6031 scripts/performance/configs/llama/"
                                                                          "llama3_llm_finetune.py L187-188"),
              ("lora", "meta-llama/Meta-Llama-3-70B", "h100-sxm5-80gb"): (1, "fcbb6031 scripts/performance/configs/llama/"
                                                                           "llama3_llm_finetune.py L351")}
# GPUs where TE's DotProductAttention runs cuDNN's fused attention rather than flash-attn (compute
# capability 9.0 and later)
TE_CUDNN = {"h100-sxm5-80gb", "b200", "gb200", "gb300"}
# ... unless the launcher turns FusedAttention off.  NeMo-Framework-Launcher exports its config.yaml
# env_vars into every job (launcher_scripts/nemo_launcher/core/stages.py @ tag 24.07 L352-354 and L511-523),
# and at the 24.07 tag (8325688d) and on main until 04b8d098 (2024-08-29) those hold
# NVTE_FUSED_ATTN: 0 "Disable cudnn FA until we've tested it more" (launcher_scripts/conf/config.yaml L72);
# TE @7d576ed2 (the NeMo 24.07 pin) then leaves DotProductAttention no FusedAttention
# (transformer_engine/pytorch/attention.py L3467-3470) and runs flash-attn 2 (attention=flash).  The only
# exception of the perf table's generation: Sangkug Lym's 95c77b59 ("Enable cuDNN FlashAtt only for 175B",
# 2024-07-17, on main from 20ab57b3, 2024-08-13, with the VP 6 of the table's 175B rows: 77b69bba) adds
# +env_vars.NVTE_FUSED_ATTN=1 to examples/training/gpt/h100/175b_fp8_16node.sh only.
NEMO2407_CUDNN = {"GPT3-175B"}
# The distributed optimizer's gradient reduce-scatter dtype (apex DistributedFusedAdam grad_sync_dtype; NeMo
# megatron_base_model.py @r2.0.0rc1 L785-786 makes its dtype fp32, and apex @810ffae distributed_fused_adam.py
# L574-575 reduces in that dtype unless grad_sync_dtype is set).  The launcher's H100 FP8 examples @ 24.07 set
# +training.model.optim.grad_sync_dtype=bf16, nemotron_340b.yaml sets it itself: reduce_dtype auto (the
# distributed optimizer's bf16) describes them.  The Nemotron 8B/22B yaml and examples leave it unset (fp32),
# but the table's 64-GPU layouts (GBS 256, MBS 4 / 2) are neither theirs, so what those runs set is not known.
NEMO2407_GRAD_SYNC = {
    "GPT3-5B": "examples/training/gpt/h100/5b_fp8_8node.sh L23", "GPT3-20B": "examples/training/gpt/h100/20b_fp8_8node.sh L23",
    "GPT3-175B": "examples/training/gpt/h100/175b_fp8_16node.sh L24",
    "LLAMA2-7B": "examples/training/llama/h100/llama2_7b_fp8.sh L22",
    "LLAMA2-13B": "examples/training/llama/h100/llama2_13b_fp8.sh L22",
    "LLAMA2-70B": "examples/training/llama/h100/llama2_70b_fp8.sh L21",
    "LLAMA3-8B": "examples/training/llama/h100/llama3_8b_fp8.sh L22",
    "LLAMA3-70B": "examples/training/llama/h100/llama3_70b_fp8.sh L21",
    "Nemotron-340B": "launcher_scripts/conf/training/nemotron/nemotron_340b.yaml L161"}
NEMO2407_GRAD_SYNC_UNSET = ("gradient reduce-scatter dtype not known: nemotron_8b/22b.yaml and their examples @ 24.07 "
                            "leave grad_sync_dtype unset (fp32), the table's layout is neither's; kept at the "
                            "distributed optimizer's bf16 (reduce_dtype=fp32 would predict 1.3% slower on 8B)")
NEMO2407_ATTN = ("but here attention=flash (flash-attn 2), not TE's cuDNN FusedAttention: "
                 "NeMo-Framework-Launcher launcher_scripts/conf/config.yaml @ 24.07 (8325688d) L72 env_vars "
                 "NVTE_FUSED_ATTN: 0 ('Disable cudnn FA until we've tested it more', there until 04b8d098, "
                 "2024-08-29), exported to every job (nemo_launcher/core/stages.py L352-354, L511-523); TE "
                 "@7d576ed2 attention.py L3467-3470: use_fused_attention = NVTE_FUSED_ATTN, so flash-attn runs")
NEMO2407_ATTN_175B = ("attention=cudnn: NeMo-Framework-Launcher 95c77b59 ('Enable cuDNN FlashAtt only for 175B', "
                      "on main from 20ab57b3, 2024-08-13, with 77b69bba's VP 6 that the table's 175B rows run) "
                      "sets +env_vars.NVTE_FUSED_ATTN=1 in examples/training/gpt/h100/175b_fp8_16node.sh, over "
                      "config.yaml's NVTE_FUSED_ATTN: 0 for every other model")


def root_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(name):
    with open(os.path.join(root_dir(), "bench", "data", "llm", name), newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    return int(s) if s not in ("", "n/a") else None


def megatron_layout(r, rec):
    """tp/pp/cp/ep/vp/fsdp/GA of a NeMo or Megatron-Bridge row -> planned keys, or a reason."""
    n, tp, pp, cp = int(r["num_gpus"]), num(r["tp"]) or 1, num(r["pp"]) or 1, num(r["cp"]) or 1
    ep, vp = num(r["ep"]) or 1, num(r["vp"])
    if n % (tp * pp * cp):
        return "num_gpus %d not divisible by tp x pp x cp = %d" % (n, tp * pp * cp)
    dp = n // (tp * pp * cp)
    gbs, mbs = int(r["global_batch"]), int(r["micro_batch"])
    if gbs % (mbs * dp):
        return "global batch %d not divisible by micro-batch %d x dp %d" % (gbs, mbs, dp)
    ga = gbs // (mbs * dp)
    if r.get("grad_accum") and int(r["grad_accum"]) != ga:
        return "table GA %s != global/(micro x dp) = %d" % (r["grad_accum"], ga)
    fsdp = num(r.get("fsdp", ""))
    rec.update(tp=tp, pp=pp, cp=cp, ep=ep if ep > 1 else "", batch_per_gpu=mbs, grad_accum=ga,
               seq_len=int(r["seq_len"]), sequence_parallel=1 if tp > 1 else 0)
    if pp > 1:
        rec.update(pp_schedule="interleaved" if vp and vp > 1 else "1f1b", pp_chunks=vp if vp and vp > 1 else "")
    if fsdp:
        rec.update(strategy="fsdp")
    else:
        rec.update(strategy="zero", zero_stage=1)
    return None


def from_tables(rows, tag, skipped):
    out = []
    by_key = {}
    for r in rows:
        if r["metric"] != "tokens_per_s_per_gpu":
            continue
        why = None
        if r["gpu"] not in GPU:
            why = "GPU %s has no id" % r["gpu"]
        elif r["precision"] not in PRECISION:
            why = "precision %s outside the planned vocabulary" % r["precision"]
        elif r["model"] not in MODEL:
            why = "model %s has no id" % r["model"]
        if why:
            skipped.append((tag, r["model"], why))
            continue
        gpu, net = GPU[r["gpu"]]
        # DGX-GB200/GB300 compute trays hold 4 GPUs; the NVLink domain (network gb200-nvl72) is the rack
        per_node = 4 if gpu in ("gb200", "gb300") else 8
        rec = {"model": MODEL[r["model"]], "gpu": gpu, "num_gpus": int(r["num_gpus"]), "gpus_per_node": per_node,
               "network": net, "precision": PRECISION[r["precision"]],
               "attention": "cudnn" if gpu in TE_CUDNN else "flash", "kernels": "te"}
        method = r["method"]
        nemo = "NeMo 24.07" in r["source"]
        if nemo and gpu in TE_CUDNN and r["model"] not in NEMO2407_CUDNN:
            rec["attention"] = "flash"
        launcher = NEMO_FT.get((r["model"], method)) if nemo else None
        as_run = MBRIDGE_RUN.get((r["model"], r["gpu"], r["precision"])) if tag == "mbridge" else None
        why = megatron_layout(dict(r, **launcher[0]) if launcher else dict(r, **as_run[0]) if as_run else r, rec)
        if why:
            skipped.append((tag, r["model"], why))
            continue
        note = MEGATRON_DEFAULTS
        if nemo and gpu in TE_CUDNN:
            note += "; " + (NEMO2407_ATTN_175B if r["model"] in NEMO2407_CUDNN else NEMO2407_ATTN)
        if launcher:
            note += ("; NeMo-Framework-Launcher examples/peft/llama/h100/%s (@97f45c18, the table's layout)" %
                     launcher[1])
            if (r["model"], method) == ("LLAMA2-70B", "lora"):
                rec.update(sequence_parallel=0)
        if nemo and method == "pretrain" and r["model"] in NEMO_PRETRAIN_CONF:
            conf, lines = NEMO_PRETRAIN_CONF[r["model"]]
            rec["overlap_param_gather"] = 1
            note += ("; overlap_param_gather=1: NeMo-Framework-Launcher launcher_scripts/conf/training/%s.yaml @ 24.07 "
                     "%s: optim distributed_fused_adam, overlap_grad_sync and overlap_param_sync true" % (conf, lines))
            if r["model"] in NEMO2407_GRAD_SYNC:
                note += ("; reduce_dtype auto (bf16): NeMo-Framework-Launcher %s @ 24.07 grad_sync_dtype=bf16" %
                         NEMO2407_GRAD_SYNC[r["model"]])
            else:
                note += "; " + NEMO2407_GRAD_SYNC_UNSET
            if r["model"] in NEMO_PRETRAIN_CKPT:
                rec["checkpointing"] = NEMO_PRETRAIN_CKPT[r["model"]][0]
                note += "; checkpointing=%s: %s.yaml @ 24.07 %s" % (rec["checkpointing"], conf,
                                                                    NEMO_PRETRAIN_CKPT[r["model"]][1])
        ub = (NEMO_PRETRAIN_UB.get(r["model"]) if nemo and method == "pretrain" else
              NEMO_FT_UB.get((r["model"], method)) if nemo else None)
        if ub and rec["sequence_parallel"] == 1:
            rec["tp_comm_overlap"] = 1
            if method == "pretrain":
                note += ("; tp_comm_overlap=1: NeMo-Framework-Launcher launcher_scripts/conf/training/%s.yaml @ 24.07 "
                         "%s: ub_tp_comm_overlap true (Transformer Engine userbuffers)" % (NEMO_PRETRAIN_CONF[r["model"]][0],
                                                                                          ub))
            else:
                note += ("; tp_comm_overlap=1: NeMo-Framework-Launcher examples/peft/llama/h100/%s (@97f45c18; "
                         "Transformer Engine userbuffers)" % ub)
            ucfg = NEMO_PRETRAIN_UB_CFG[r["model"]] if method == "pretrain" else NEMO_FT_UB_CFG
            rec["tp_overlap_cfg"] = ucfg[0]
            note += "; tp_overlap_cfg=%s: %s" % ucfg
        if nemo and method == "sft":
            rec["overlap_param_gather"] = 1
            note += "; overlap_param_gather=1: NeMo-Framework-Launcher " + NEMO_SFT_OPTIM
        if as_run:
            note += "; " + as_run[1]
        a2a = MBRIDGE_A2A_OVERLAP.get((r["model"], r["gpu"], r["precision"])) if tag == "mbridge" else None
        if a2a and rec.get("ep"):
            rec["moe_a2a_overlap"] = 1
            note += ("; moe_a2a_overlap=1: NVIDIA-NeMo/Megatron-Bridge@7af9601c scripts/performance/configs/qwen3/"
                     "workload_base_configs.py %s (moe_a2a_overlap=True; utils/helpers.py L182-186: "
                     "overlap_moe_expert_parallel_comm and delay_wgrad_compute)" % a2a)
        if tag == "mbridge" and method == "pretrain" and rec["strategy"] == "zero" and rec["model"] in MBRIDGE_RECIPE:
            rec["overlap_param_gather"] = 1
            note += "; " + MBRIDGE_OPG % MBRIDGE_RECIPE[rec["model"]]
        if tag == "mbridge" and (method, gpu) in MBRIDGE_FT_OPG:
            rec["overlap_param_gather"] = 1
            note += "; " + MBRIDGE_FT_NOTE % MBRIDGE_FT_OPG[(method, gpu)]
        if tag == "mbridge" and r["precision"] in ("FP8-CS", "FP8"):
            rec["fp8_recipe"] = "current"
            note += "; " + MBRIDGE_FP8_CS % (
                "the table's FP8-CS" if r["precision"] == "FP8-CS" else
                "the 26.06 table's FP8 is the FP8_CS preset: v0.5.0 (fcbb6031) scripts/performance/configs/llama/"
                "llama3_workload_base_configs.py L531-699 defines only _FP8_CS_V1 and _FP8_MX_V1 Llama 3 70B SFT/LoRA presets")
        if tag == "mbridge" and method == "pretrain" and (rec["model"], gpu) in MBRIDGE_CUDA_GRAPHS:
            rec["cuda_graphs"] = 1
            note += ("; cuda_graphs=1: cuda_graph_impl='local', cuda_graph_scope='full_iteration' "
                     "(NVIDIA-NeMo/Megatron-Bridge@7af9601c scripts/performance/configs/llama3/workload_base_configs.py "
                     "%s; utils/helpers.py L70-75)" % MBRIDGE_CUDA_GRAPHS[(rec["model"], gpu)])
        mub = MBRIDGE_UB.get((method, rec["model"], gpu)) or MBRIDGE_UB.get((method, rec["model"]))
        if tag == "mbridge" and mub and mub[0] and rec["sequence_parallel"] == 1:
            rec["tp_comm_overlap"] = 1
            note += ("; tp_comm_overlap=1: Megatron-Bridge CommOverlapConfig tp_comm_overlap True (NVIDIA-NeMo/"
                     "Megatron-Bridge@%s; training/comm_overlap.py L439-448: kept with TP > 1 and sequence "
                     "parallelism)" % mub[1])
            ucfg = MBRIDGE_UB_CFG.get((method, rec["model"], gpu)) if method == "pretrain" else MBRIDGE_FT_UB_CFG
            if ucfg is None or (method == "pretrain" and r["precision"] not in ("FP8-CS", "FP8")):
                raise SystemExit("make_llm_runs: no userbuffers configuration for %s %s %s %s" %
                                 (method, rec["model"], gpu, r["precision"]))
            rec["tp_overlap_cfg"] = ucfg[0]
            note += "; tp_overlap_cfg=%s: %s" % ucfg
        if tag == "mbridge" and rec["model"] in PP_SPLIT and rec["pp"] > 1:
            rec["pp_split"] = "embedding_loss"
            note += ("; pp_split=embedding_loss: the recipe sets account_for_embedding_in_pipeline_split and "
                     "account_for_loss_in_pipeline_split True (NVIDIA-NeMo/Megatron-Bridge %s)" % PP_SPLIT[rec["model"]])
        if tag == "mbridge" and rec["model"] in ETP and rec.get("ep"):
            rec["etp"] = ETP[rec["model"]][0]
            note += ("; etp=%d: expert_tensor_parallel_size=%d (NVIDIA-NeMo/Megatron-Bridge %s)" %
                     (rec["etp"], rec["etp"], ETP[rec["model"]][1]))
        if method == "lora":
            # qv: on a Llama built as separate q/k/v projections, the adapters of q and v (two, where
            # Megatron's one adapter sits on the fused linear_qkv); no adapter on the output projection
            if nemo:
                rec.update(lora_r=32, lora_targets="qv")
                note += ("; lora_r=32, lora_targets=qv: NeMo 1 megatron_gpt_finetuning_config lora_tuning "
                         "defaults (adapter_dim 32, target_modules ['attention_qkv'], i.e. the fused QKV only)")
            else:
                rec.update(lora_r=16, lora_targets="qv")
                note += ("; lora_r=16, lora_targets=qv: Megatron-Bridge recipes/llama/llama3.py "
                         "llama3_70b_peft_config@38803fd4 (peft_cfg.dim = 16, alpha 32) and the perf config's "
                         "cfg.peft.target_modules = ['linear_qkv'] (scripts/performance/configs/llama/"
                         "llama3_llm_finetune.py since 8b2f81eb, 2026-02; perf_recipes/llama/h100/llama3.py "
                         "@381d0b82), i.e. the fused QKV only")
        if method in ("sft", "lora") and rec["model"] in CHARS_PER_TOKEN:
            cpt = CHARS_PER_TOKEN[rec["model"]]
            rec["packed_seq_len"] = int(round(SQUAD_BYTES_PER_EXAMPLE / cpt))
            note += PACKING % (rec["packed_seq_len"], cpt)
        rec["metric"] = "tokens_per_s"
        rec["value"] = int(r["value"]) * int(r["num_gpus"])
        rec["source"] = "%s (%s; %s); tokens_per_s = tokens/s/GPU %s x %s GPUs; %s" % (
            r["source_path"], r["source"], method, r["value"], r["num_gpus"], note)
        key = (tag, rec["model"], gpu, rec["num_gpus"], rec["precision"], method)
        by_key[key] = by_key.get(key, 0) + 1
        rec["id"] = "%s-%s-%s-%s-%dx-%s-%d" % (tag, method, rec["model"].split("/")[-1].lower(), gpu,
                                               rec["num_gpus"], rec["precision"], by_key[key])
        out.append(rec)
    return out


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


MLPERF_LLAMA_GPU = {"NVIDIA Blackwell GPU (B200-SXM-180GB)": ("b200", ""),
                    "NVIDIA Blackwell GPU (GB200)": ("gb200", "gb200-nvl72"),
                    "NVIDIA Blackwell Ultra GPU (GB300)": ("gb300", "gb300-nvl72")}
MLPERF_LLAMA = ("model=meta-llama/Llama-3.1-8B (MLPerf's llama31_8b: Llama 3.1 8B from scratch on C4); NVIDIA's NeMo "
                "implementation (pretrain.py, Megatron-Core with Transformer Engine, the submission's b200_nemo "
                "directory, container 25.09): kernels=te (USE_TE_OPS, FUSED_QKV_ROPE, CE_FUSION_IMPL=te), "
                "attention=cudnn (TE's fused attention on sm100; no FP8 attention: config_common_fp8attn.sh not "
                "sourced) at cudnn_version=9.13 (the Dockerfiles install libcudnn9-cuda-13=9.13.1.26 over "
                "pytorch:25.09: NVIDIA/benchmarks/llama31_8b/implementations/nemo/Dockerfile L43, Dell's nemo L41, "
                "University-of-Florida's b200_nemo L43; Oracle's directory has none, its system description states "
                "cudnn_version 9.13.1.26, Dell's states 9.8.0.87 against its Dockerfile), precision=amp_fp8 (FP8=True, FP8_HYBRID=True, bf16 parameters with fp32 main weights) "
                "with fp8_recipe=current (FP8_RECIPE=tensorwise: per-tensor current scaling), strategy=zero "
                "zero_stage=1 (use_distributed_optimizer=True, pretrain.py get_optimizer), optimizer=adam (Megatron "
                "'adam' with weight decay; logged opt_name adamw), overlap_param_gather=1 (OVERLAP_GRAD_REDUCE, "
                "OVERLAP_PARAM_GATHER), cuda_graphs=1 (config_common_cg.sh: FULL_CUDA_GRAPH=1, MCORE_CUDA_GRAPH=1), "
                "max_grad_norm=1 (logged opt_gradient_clip_norm), no activation recompute; not priced: FP8 parameter "
                "all-gather (FP8_PARAM_GATHER=True); B200: network left to the reference system's (DGX B200: 8 x 400 "
                "Gb/s; the systems state 'InfiniBand' with 500 GB/s PCIe-NIC, 'ROCE2', or nothing); GB200 / GB300: "
                "4 GPUs per node (DGXNGPU) on an NVL72 rack (network=gb200-nvl72 / gb300-nvl72: the NVLink domain, "
                "then the racks' 4 x ConnectX-7 NDR 400 / ConnectX-8 XDR 800 Gb/s per node, as the systems state); "
                "not described: SEGMENT=16 in the 512-GPU configs places the job in 16-tray (64-GPU) NVLink "
                "segments, priced as the 72-GPU domains of the network preset (no key for a job's placement), and "
                "their USE_TE_OPS=False (Megatron-Core's TE layers without TE's op fuser; kernels=te either way); "
                "sequence_parallel and tp_comm_overlap (TE userbuffers) as the config sets them")


def from_mlperf_llama(rows):
    """MLPerf Training v5.1 Llama 3.1 8B runs of NVIDIA's NeMo implementation in FP8 (mlperf_llama31_8b.csv)."""
    out = []
    for r in rows:
        n, gbs, mbs, ga, seq = (int(r[k]) for k in ("num_gpus", "global_batch", "micro_batch", "grad_accum", "seq_len"))
        tp, pp, cp = int(r["tp"]), int(r["pp"]), int(r["cp"])
        gpu, net = MLPERF_LLAMA_GPU[r["gpu"]]
        env = dict(re.findall(r"(\w+)=(\S+?)[,;]", r["notes"]))
        rec = {"model": "meta-llama/Llama-3.1-8B", "gpu": gpu, "network": net, "num_gpus": n,
               "gpus_per_node": int(env["DGXNGPU"]), "strategy": "zero", "zero_stage": 1, "tp": tp, "pp": pp,
               "cp": cp, "sequence_parallel": int(env["SEQ_PARALLEL"] == "True"), "precision": "amp_fp8", "fp8_recipe": "current", "optimizer": "adam",
               "attention": "cudnn", "cudnn_version": "9.13", "kernels": "te", "batch_per_gpu": mbs, "grad_accum": ga, "seq_len": seq,
               "cuda_graphs": 1, "overlap_param_gather": 1, "max_grad_norm": 1, "metric": "tokens_per_s",
               "value": "%.6g" % (gbs * seq / float(r["value"]))}
        if env["TP_COMM_OVERLAP"] == "True" and tp > 1:  # TE userbuffers (MC_TP_OVERLAP_AG/RS in config_common.sh)
            rec["tp_comm_overlap"] = 1
        bucket = int(re.search(r"BUCKET_SIZE=(\d+)", r["notes"]).group(1))
        rec["bucket_cap_mb"] = "%.6g" % (bucket * 2 / 2 ** 20)
        what = ("tokens_per_s = GBS %d x %d / %s s (the median step time); bucket_cap_mb = BUCKET_SIZE %d parameters "
                "x 2 bytes (bf16 gradients: grad_reduce_in_fp32=False) / 2^20" % (gbs, seq, r["value"], bucket))
        rec["source"] = "%s (%s); %s; %s; %s" % (r["source_path"], r["source"], r["notes"], what, MLPERF_LLAMA)
        system = r["source_path"].split("/results/")[1].split("/")[0]
        rec["id"] = "mlperf-llama31-8b-v51-%s-%dx-%s" % (gpu, n, system.replace(".", "-"))
        out.append(rec)
    return out


# gpus.csv id, network (the systems' compute fabric), the TE userbuffers configuration its tp_overlap yaml sets,
# and the hosts.csv host where the system's CPUs set a rate the prediction reads (the PCIe L40S nodes' ring
# hops between sockets: systems/l40s_n16_ngc24.04_nemo.json "Intel(R) Xeon(R) Gold 6448Y", 2 per node, a 4th
# generation Xeon Scalable, Sapphire Rapids)
MLPERF_LORA_GPU = {"NVIDIA H100-SXM5-80GB": ("h100-sxm5-80gb", "ib-ndr-400", "mlperf40_lora_h100_tp4_mbs1", ""),
                   "NVIDIA H200-SXM5-141GB": ("h200-sxm-141gb", "ib-ndr-400", "mlperf40_lora_h200_tp2_mbs1", ""),
                   "NVIDIA L40S": ("l40s", "bf3-2x400", "", "server-spr"),
                   "NVIDIA Blackwell GPU (B200-SXM-180GB)": ("b200", "", "", ""),
                   "NVIDIA Blackwell GPU (GB200)": ("gb200", "gb200-nvl72", "", ""),
                   "NVIDIA Blackwell Ultra GPU (GB300)": ("gb300", "gb300-nvl72", "", "")}
MLPERF_LORA = ("model=meta-llama/Llama-2-70b-hf (MLPerf's llama2_70b_lora: LoRA fine-tuning of Llama 2 70B on GovReport, "
               "each sample one sequence of 8192 tokens: the implementation's README section 2 and "
               "scripts/convert_dataset.py, seq_start_id [0]); NVIDIA's NeMo implementation (train.py, Megatron-Core with "
               "Transformer Engine, NeMo 24.04): kernels=te (transformer_engine True, apply_rope_fusion, "
               "bias_activation_fusion); TE's cuDNN fused attention (NVTE_FUSED_ATTN=1, NVTE_FLASH_ATTN=0), in FP8 where "
               "FP8_DPA=1 (attention=cudnn_fp8: config_common.sh's default, the H100 and H200 configs) and in bf16 where "
               "FP8_DPA=False (attention=cudnn at cudnn_version=9.1, the systems' cuDNN 9.1.0.70: the L40S configs), causal "
               "over each whole sample (packed_sequence_return_cu_seqlen False, one sequence per sample); precision=amp_fp8 "
               "(FP8=True, fp8_hybrid) with fp8_recipe=delayed (FP8_AMAX_HISTORY, FP8_AMAX_ALGO: TE's delayed "
               "scaling); lora_r=16, lora_targets=attention (conf/megatron_gpt_peft_tuning_config.yaml peft.lora_tuning: "
               "adapter_dim 16, target_modules ['attention'], NeMo's linear_qkv and linear_proj), lora_dropout=0.1 "
               "(adapter_dropout, dropout_position pre); strategy=zero zero_stage=1 prices Megatron's 16-bit parameters "
               "(megatron_amp_O2 True) as the other NeMo rows do, where the optimizer is fused_adam, not distributed "
               "(its state is the LoRA parameters': nothing measurable to shard); optimizer=adam; max_grad_norm=0.3 "
               "(trainer.gradient_clip_val); sequence_parallel=1 (SP=1); tp_comm_overlap=1 where TP_COMM_OVERLAP=True "
               "(H100, H200: TE userbuffers with the implementation's conf/tp_overlap/h100tp4mbs1.yaml or h100tp2mbs1.yaml, "
               "tp_overlap_cfg=mlperf40_lora_h100_tp4_mbs1 / mlperf40_lora_h200_tp2_mbs1); no activation checkpointing "
               "(ACG unset), no CUDA graphs; network: the systems' compute fabric (DGX H100 / H200: 8 x ConnectX-7 NDR "
               "400 Gb/s, ib-ndr-400; L40S: '2xBF3 400Gbps for EW' per 4-GPU node, bf3-2x400); not priced: FP8 "
               "parameters (fp8_params: the frozen base held in FP8, priced as 16-bit), FP8_ACTIVATION (the H200's FP8 "
               "activation store), LORA_A2A (the adapters' experimental all-to-all under sequence parallelism), SHARP "
               "(the 8- and 128-node H100 runs' in-network reductions), VBOOST_VALUE (the 1-node runs' clock setting), "
               "atomic GEMMs in the userbuffers reduce-scatters, the answer-only loss (the same compute); the frozen "
               "base's width (Megatron-Core holds it in 16 bits): base_precision changes no throughput, so the rows "
               "leave it unset (the run table's rule: every key a row sets must move its prediction)")
MLPERF_LORA_V51 = ("v5.1 (B200 servers and GB200 / GB300 NVL72 racks of the submitters named, each running "
                   "NVIDIA's NeMo 25.09 implementation from its own directory, train.py: LoRA(dim 16, alpha 32, dropout 0.1, target_modules "
                   "linear_proj and linear_qkv), clip_grad 0.3, use_distributed_optimizer True): tp 1 with cp 1-8, "
                   "FP8 attention (FP8_DPA=1), fp8_recipe delayed (the yaml's default, FP8_RECIPE unset); "
                   "cuda_graphs=1 where MCORE_CUDA_GRAPH=1 (full-iteration graphs: cuda_graph_scope "
                   "full_iteration); network: B200 left to the reference system's (DGX B200: 8 x 400 Gb/s; the "
                   "systems state 'InfiniBand'), GB200 / GB300 4 GPUs per node on NVL72 racks (gb200-nvl72, "
                   "gb300-nvl72); not priced: SEGMENT (where set: the job placed in NVLink segments of that many "
                   "trays, priced as the 72-GPU domains), NCCL_NET=Socket (two Supermicro B200 servers, one node), cp_comm_type a2a (context parallelism by all-to-all, "
                   "Megatron-Core's; kernels=te prices no context-parallel exchange), FP8_ACT (the activation's FP8 "
                   "input store), Thunder's fused LoRA dropout, TE's op fuser and cuDNN norms (USE_TE_OPS, "
                   "NVTE_NORM_*_USE_CUDNN), SHARP")


def from_mlperf_lora(rows):
    """MLPerf Training v4.0 Llama 2 70B LoRA runs of NVIDIA's NeMo implementation (mlperf_llama2_70b_lora.csv)."""
    out = []
    for r in rows:
        n, gbs, mbs, ga, seq = (int(r[k]) for k in ("num_gpus", "global_batch", "micro_batch", "grad_accum", "seq_len"))
        tp, pp, cp = int(r["tp"]), int(r["pp"]), int(r["cp"])
        if r["gpu"] not in MLPERF_LORA_GPU:
            raise SystemExit("mlperf_llama2_70b_lora.csv: GPU %r has no mapping" % r["gpu"])
        gpu, net, ub, host = MLPERF_LORA_GPU[r["gpu"]]
        env = dict(re.findall(r"(\w+)=(\S+?)[,;]", r["notes"]))
        fp8_attention = env["FP8_DPA"] in ("1", "True")
        rec = {"model": "meta-llama/Llama-2-70b-hf", "gpu": gpu, "network": net, "num_gpus": n,
               "gpus_per_node": int(env["DGXNGPU"]), "strategy": "zero", "zero_stage": 1, "tp": tp, "pp": pp, "cp": cp,
               "sequence_parallel": int(env["SP"] in ("1", "True")), "precision": "amp_fp8", "fp8_recipe": "delayed",
               "optimizer": "adam", "attention": "cudnn_fp8" if fp8_attention else "cudnn", "kernels": "te",
               "lora_r": 16, "lora_targets": "attention", "lora_dropout": "0.1", "batch_per_gpu": mbs, "grad_accum": ga,
               "seq_len": seq, "max_grad_norm": "0.3", "metric": "tokens_per_s"}
        v51 = r["metric"] == "train_step_time_median_s"
        if v51:
            rec["value"] = "%.6g" % (gbs * seq / float(r["value"]))
            what = "tokens_per_s = GBS %d x %d / %s s (the median step time)" % (gbs, seq, r["value"])
            if env["MCORE_CUDA_GRAPH"] in ("1", "True"):
                rec["cuda_graphs"] = 1
        else:
            rec["value"] = "%.6g" % (float(r["value"]) * seq)
            what = "tokens_per_s = %s samples/s (the median logged throughput) x %d tokens" % (r["value"], seq)
            if env["TP_COMM_OVERLAP"] == "True" and tp > 1:
                rec.update(tp_comm_overlap=1, tp_overlap_cfg=ub)
        if not fp8_attention:
            rec["cudnn_version"] = "9.1"
        if host:
            rec["host"] = host
        rec["source"] = "%s (%s); %s; %s; %s%s" % (r["source_path"], r["source"], r["notes"], what, MLPERF_LORA,
                                                   "; " + MLPERF_LORA_V51 if v51 else "")
        system = r["source_path"].split("/results/")[1].split("/")[0]
        rec["id"] = "mlperf-llama2-70b-lora-%s-%s-%dx-%s" % ("v51" if v51 else "v40", gpu, n, system.replace(".", "-"))
        out.append(rec)
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


MLPERF_GPU = {"NVIDIA A100-SXM4-80GB": ("a100-sxm4-80gb", "ib-hdr-200"),
              "NVIDIA H100-SXM5-80GB": ("h100-sxm5-80gb", "ib-ndr-400")}
MLPERF_BERT = ("model=bert-large task=pretrain (MLPerf phase 2: BERT-large, MLM on at most 76 masked positions + NSP; "
               "--dense_seq_output runs the MLM head on the masked positions only, as the pretrain head prices it), "
               "task=lm where EXTRA_PARAMS lack --dense_seq_output (modeling.py v3.0 BertPreTrainingHeads.forward "
               "L924-929 gathers the masked positions only under dense_seq_output, else the transform, the 30,522-way "
               "decoder and the cross entropy run on all 512 positions of every pack: the lm head, which leaves out "
               "only NSP's pooled 2-way classifier on one token per sequence); "
               "precision=fp16: run_and_time.sh passes --fp16 --distributed_lamb, and run_pretraining.py then calls "
               "model.half() (pure fp16 model, fp32 master weights in the optimizer); optimizer=lamb with "
               "strategy=zero zero_stage=1: apex DistributedFusedLAMB (each rank updates its shard, all-gather of the "
               "parameters); zero_shard_size=8: run_pretraining.py's --dwu-group-size defaults to 0 ('defaults to one "
               "node', v2.0 L552-556, v2.1 L556-560, v3.0 L595-599, v3.1 L614-618) and no config sets it; apex "
               "distributed_fused_lamb.py (NVIDIA/apex@7972dd25 __init__) then takes _group_size = "
               "torch.cuda.device_count() = DGXNGPU 8: optimizer states sharded over a node's 8 GPUs, parameters "
               "all-gathered within the node; on more than one node zero_reduce=all_reduce: run_pretraining.py passes "
               "full_ar = torch.cuda.device_count() < torch.distributed.get_world_size() (v2.0 L815, v2.1 L852/L819, "
               "v3.0 L900, v3.1 L919), and with full_ar apex all-reduces the gradients over every rank (one AR group "
               "of range(world_size)) instead of reduce-scatter within the node + all-reduce across; on one node "
               "(full_ar False, one group) reduce-scatter within the node; kernels=fused: --fused_bias_fc, --fused_bias_mha, "
               "--fused_dropout_add (and --fused_gemm_gelu where set); attention=flash: NVIDIA's fused multi-head "
               "attention kernel (fmha, --pad_fmha) on each packed sample; batch_per_gpu = d_batch_size packed samples "
               "of 512 tokens, each holding average_packing_rate sequences (logged GBS / (d_batch_size x GPUs)); "
               "tokens_per_s = measured sequences/s / average_packing_rate x 512 (positions computed, padding of a "
               "pack included), the sequences/s a run's log shows between its first and its last evaluation "
               "(mlperf_from_logs.py): after run_start run_pretraining.py loads the first training shard in the timed "
               "loop and the first evaluation waits for the evaluation set (v3.0 L1607, L1612, L1658, L1817-1818), "
               "so train_samples / (run_stop - run_start) also holds that one-time start-up (the steps before the "
               "first evaluation take 1.5-1.9x as long on 64-512 nodes, 3-6% of those 7-25 s runs; the notes keep "
               "that quotient); grad_buckets: apex's gradient blocks, reduced as backward fills them with "
               "--dwu-overlap-reductions (the config's --dwu-num-blocks=5 on the v3.0 64/96-node and v3.1 434-node "
               "rows), else one block reduced after backward (run_and_time.sh --dwu-num-blocks=1; run_pretraining.py "
               "v3.0 L654-655: 'With overlap reductions turned off, dwu_num_chunks and dwu_num_blocks should be set "
               "to 1', L916-918 passes overlap_reductions and dwu_num_blocks to DistributedFusedLAMB): "
               "grad_buckets=1; cuda_graphs=1 where EXTRA_PARAMS has --use_cuda_graph (run_pretraining.py 'Enable CUDA "
               "graph execution', v2.0 L528, v3.0 L571-574, v3.1 L590; --cuda_graph_mode 'segmented' captures the "
               "model's forward and backward, 'full_iteration' the whole step with the optimizer and collectives, "
               "v3.0 L303-308: either way one replay per pass instead of one launch per kernel); zero_flat_copies=1 "
               "where EXTRA_PARAMS has --dwu-overlap-reductions or --use_transformer_engine2: run_pretraining.py then "
               "passes set_param_views_to_flat_buffer=False (v2.1 preview L854-857, v3.0 L902-905, v3.1 L921-924), so "
               "the model's parameters are not views into the optimizer's flat buffer and apex "
               "(distributed_fused_lamb.py @91fcaaf7) copies every gradient into it as backward flushes each block "
               "(_flatten_grad_mt L730/L755, L901-932, on the compute stream) and the all-gathered buffer back into "
               "the model's parameters after the gather (step() L1001-1016, maybe_cast_mt, which the next step waits "
               "for): one read and one write of the fp16 gradients and of the fp16 parameters a step. Not expressed: "
               "attention masked to each sequence of a pack (priced as full 512 x 512), the measured rate including "
               "the evaluations (10,000 samples every 150k-325k trained, 4 ms each where v3.1 logs eval_start/"
               "eval_stop, one every 0.4 s on 434 nodes), "
               "--use_transformer_engine2 where set (v2.1 preview, v3.0 1 and 8 nodes): 'Enable FP8 layers' "
               "(run_pretraining.py v3.0 L638-641, v3.1 L657-660): modeling.py's BertEncoder (v3.0 L703-709, L774) "
               "runs te_layers.py's FP8_MHA (FP8 QKV and output GEMMs, FP8 fused attention) and LayerNormMLP "
               "(FP8 FC1/FC2) under fp8_autocast (DelayedScaling, HYBRID) inside the pure fp16 model; amp_fp8 "
               "prices an autocast model, so these rows stay precision=fp16")
MLPERF_GPT3 = ("model=mlperf-gpt3-175b (bench/data/llm/models.csv); NeMo Megatron GPT with Transformer Engine "
               "(conf/megatron_gpt_config.yaml): precision=amp_fp8 (FP8=True, FP8_HYBRID=True: E4M3 forward, E5M2 "
               "backward, amax history 1024), megatron_amp_O2 bf16 with fp32 main parameters; strategy=zero "
               "zero_stage=1 (USE_DIST_OPTIMIZER=True), optimizer=adam (logged opt_name adam); overlap_param_gather=1: "
               "apex DistributedFusedAdam with overlap_grad_sync and overlap_param_sync true (v3.0 "
               "conf/megatron_gpt_config.yaml L223-228, v3.1 conf/optim/distributed_fused_adam.yaml L1-6, the "
               "environment default that no config overrides), one bucket per interleaved chunk (NeMo bd0b818a "
               "megatron_gpt_model.py configure_optimizers), each chunk's gradients reduce-scattered once its last "
               "micro-batch's backward is through and its parameters all-gathered while the chunk before it runs "
               "its forward (Megatron-LM df727128 schedules.py L558-563, L622-628; epochcast prices both for "
               "interleaved pipelines); tp/pp from the config "
               "name, pp_schedule=interleaved pp_chunks=12 (INTERLEAVED_PIPELINE=12: one layer per chunk), "
               "sequence_parallel=1 (SEQ_PARALLEL default True), no activation checkpointing (ACT_CKPT_GRANULARITY "
               "null); kernels=te (Megatron's Transformer Engine layers: persistent fused LayerNorm, bias-GeLU and "
               "bias-dropout-add fusions, with gradient_accumulation_fusion, the setting kernels=te prices); attention=flash: TE DotProductAttention runs flash-attn (TE "
               "release_v0.8 transformer.py: flash_attn_unpadded_func unless NVTE_FLASH_ATTN=0; TE 09ba8427 "
               "attention.py: flash-attn returned before FusedAttention is tried); "
               "network=ib-ndr-400 (systems json: 8x ConnectX-7 IB NDR 400Gb/s compute per node); "
               "tokens_per_s = GBS x 2048 / the median logged train_step_timing. The interleaved schedule's "
               "p2p exchanges overlap the next chunk (Megatron's overlap_p2p_comm, priced for every interleaved "
               "layout) and kernels=te runs the TP backward's collectives under its GEMMs. Not expressed: the TP "
               "forward's communication overlapped with GEMMs through userbuffers (TP_COMM_OVERLAP=True, "
               "h100tp4pp8mbs1 config; priced as exposed TP collectives), the step timing's "
               "first steps and evaluations (the median excludes them)")


def bert_flat_copies(flags):
    """run_pretraining.py passes DistributedFusedLAMB set_param_views_to_flat_buffer = False under
    --use_transformer_engine2 and else `not args.dwu_overlap_reductions` (v2.1 preview L854-857, v3.0
    L902-905, v3.1 L921-924; v2.0 L817 without the TE clause): without the views apex copies through its
    flat buffers (MLPERF_BERT, zero_flat_copies)."""
    return 1 if "--dwu-overlap-reductions" in flags or "--use_transformer_engine2" in flags else 0


def bert_grad_buckets(flags):
    """apex DistributedFusedLAMB's gradient blocks: --dwu-num-blocks=N (run_and_time.sh passes 1, a
    config's EXTRA_PARAMS may override it) reduced as backward fills them with --dwu-overlap-reductions,
    else one block reduced after backward."""
    if "--dwu-overlap-reductions" not in flags:
        return 1
    blocks = [f.split("=", 1)[1] for f in flags if f.startswith("--dwu-num-blocks=")]
    return int(blocks[-1]) if blocks else 1


MLPERF_GPT3_BUCKETS = ("; bucket_cap_mb=100: apex DistributedFusedAdam's gradient buckets (v3.0 conf/megatron_gpt_config.yaml "
                       "L224 bucket_cap_mb: 100, run_and_time.sh L85 BUCKET_CAP_MB default 100; v3.1 "
                       "conf/optim/distributed_fused_adam.yaml L2; no config of either round sets BUCKET_CAP_MB), not "
                       "Megatron-Core's DistributedDataParallel (kernels=te's default bucket)")

def from_mlperf(rows, skipped):
    """MLPerf Training closed-division NVIDIA runs (bench/data/llm/mlperf_training.csv)."""
    out = []
    for r in rows:
        gpu, net = MLPERF_GPU[r["gpu"]]
        n, gbs, mbs, ga = (int(r[k]) for k in ("num_gpus", "global_batch", "micro_batch", "grad_accum"))
        system = r["source_path"].split("/results/")[1].split("/")[0]
        rnd = r["source_path"].split("training_results_")[1].split(":")[0]
        rec = {"num_gpus": n, "gpus_per_node": 8, "network": net, "gpu": gpu, "kernels": "fused", "attention": "flash",
               "strategy": "zero", "zero_stage": 1, "grad_accum": ga, "batch_per_gpu": mbs,
               "seq_len": int(r["seq_len"]), "metric": "tokens_per_s"}
        if r["metric"] == "sequences_per_s_median":
            raise SystemExit("mlperf_training.csv: %s: BERT value is train_samples / (run_stop - run_start), which "
                             "holds the first training shard's load (a one-time cost); regenerate it with "
                             "tools/data/mlperf_from_logs.py (the rate between the first and the last evaluation)"
                             % r["source_path"])
        bert = r["metric"] == "sequences_per_s_between_evals_median"
        if bert:  # apex DistributedFusedLAMB: shards within a node, full_ar across nodes (MLPERF_BERT)
            rec["zero_shard_size"] = 8
            if n > 8:
                rec["zero_reduce"] = "all_reduce"
        if bert:
            rate = gbs // (mbs * ga * n)
            if rate == 1:
                skipped.append(("mlperf", r["model"], "BERT without packing runs --unpad (each sequence at its own "
                                "length, exchange_padding across GPUs), which no padding mode expresses"))
                continue
            tok = float(r["value"]) / rate * int(r["seq_len"])
            rec.update(model="bert-large", task="pretrain", precision="fp16", optimizer="lamb", value=int(round(tok)))
            flags = r["notes"].split("EXTRA_PARAMS:")[-1].split()
            if "--use_cuda_graph" in flags:
                rec["cuda_graphs"] = 1
            if "--dense_seq_output" not in flags:  # the MLM head on every position of a pack (MLPERF_BERT)
                rec["task"] = "lm"
            rec["grad_buckets"] = bert_grad_buckets(flags)
            if bert_flat_copies(flags):
                rec["zero_flat_copies"] = 1
            note = MLPERF_BERT
            what = ("tokens_per_s = %s sequences/s (between the first and the last evaluation) / %d x 512"
                    % (r["value"], rate))
            tag = "bert"
        else:
            tp, pp, vp = int(r["tp"]), int(r["pp"]), int(r["vp"])
            dp = n // (tp * pp)
            if gbs != mbs * ga * dp:
                skipped.append(("mlperf", r["model"], "GBS != micro x GA x dp"))
                continue
            rec.update(model="mlperf-gpt3-175b", precision="amp_fp8", optimizer="adam", tp=tp, pp=pp, kernels="te",
                       pp_schedule="interleaved", pp_chunks=vp, sequence_parallel=1, overlap_param_gather=1,
                       bucket_cap_mb=100, value=int(round(gbs * int(r["seq_len"]) / float(r["value"]))))
            note = MLPERF_GPT3 + MLPERF_GPT3_BUCKETS
            if rnd == "v3.0":
                rec["attention"] = "flash1"
                note += "; v3.0 image: flash_attn 1.0.5 (FlashAttention-1: attention=flash1), TE release_v0.8"
            else:
                note += "; v3.1 image: flash-attn 2.0.8, TE 09ba8427"
            what = "tokens_per_s = GBS %d x 2048 / %s s" % (gbs, r["value"])
            tag = "gpt3"
        if "preview" in system:  # the v2.1 preview systems' json leaves host_networking empty
            rec["network"] = ""
            note += "; network not stated (preview system), left to the reference system's"
        rec["source"] = "%s (%s); %s; %s; %s" % (r["source_path"], r["source"], r["notes"], what, note)
        rec["id"] = "mlperf-%s-%s-%s-%dx-%s" % (tag, rnd.replace(".", ""), gpu, n, system.split("_")[0])
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
