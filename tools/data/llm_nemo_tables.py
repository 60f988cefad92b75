"""llm_nemo_tables.py: the NeMo and Megatron-Bridge performance tables as run records of
bench/data/llm_runs.csv, for make_llm_runs.py (which writes the file).  Python 3 stdlib.

Converts bench/data/llm/nemo_24_07_perf_summary.csv (NeMo 24.07 performance summary: pre-training,
SFT and LoRA on DGX-H100) and bench/data/llm/megatron_bridge_perf_summary.csv (Megatron-Bridge
performance summary: NeMo 25.11 pre-training, NeMo 26.06 SFT and LoRA), both transcribed from the
published tables (bench/data/llm/README.md says where every number sits).  Here: the tables' GPU,
model and precision names, what those runs' recipes and launcher configs set that the tables do
not print (optimizer, userbuffers, recompute, CUDA graphs, attention kernel, packing, layouts the
perf scripts ran), megatron_layout and from_tables.
"""

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
# The optimizer Megatron's and NeMo's runs step with: a fused multi-tensor Adam, not torch.optim's foreach one.
FUSED_ADAM = ("optimizer=adamw_apex_fused: Megatron-Core's Adam is Transformer Engine's FusedAdam, else apex's "
              "(NVIDIA/Megatron-LM megatron/core/optimizer/__init__.py@d98e8a64 L14-20), and NeMo 1.x's "
              "distributed_fused_adam and fused_adam are apex's DistributedFusedAdam and FusedAdam: one "
              "multi_tensor_adam kernel a chunk of tensors")
PRECISION = {"fp8": "amp_fp8", "FP8-CS": "amp_fp8", "FP8": "amp_fp8", "BF16": "amp_bf16"}
MEGATRON_DEFAULTS = ("zero_stage=1 = Megatron distributed optimizer (NeMo/Megatron-Bridge recipe default, "
                     "use_distributed_optimizer=True); " + FUSED_ADAM + "; sequence_parallel=1 with tp>1 (recipe default); "
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
NEMO_FT = {("LLAMA2-7B", "sft"): ({}, "7b_1node.sh"),
           ("LLAMA2-13B", "sft"): ({"vp": "10"}, "13b_1node.sh: virtual_pipeline_model_parallel_size=10"),
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
# Megatron-Bridge's Llama 3 70B FP8-CS pre-training on GB200 / GB300 (Megatron FSDP, GBS 256, MBS 2):
# activations of the first N layers offloaded to host memory (scripts/performance/utils/overrides.py
# L139-141: cpu_offloading True, cpu_offloading_weights False, cpu_offloading_num_layers N)
MBRIDGE_ACT_OFFLOAD = {("meta-llama/Meta-Llama-3-70B", "gb300"): (20, "L211-218 LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_CS_V2"),
                       ("meta-llama/Meta-Llama-3-70B", "gb200"): (40, "L241-248 LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2")}
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
                  "src/megatron/bridge/training/mixed_precision.py L272-290 also sets fp8_param_gather True: "
                  "fp8_params=1, the parameters held and all-gathered in FP8, a byte a weight; %s)")
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


def nemo_notes(r, rec, method, launcher):
    """What a NeMo 24.07 table's row ran beyond Megatron's defaults (its launcher's attention, fine-tuning
    layout, overlaps, checkpointing, userbuffers), set on rec; returns the source note's additions."""
    gpu, nemo, note = rec["gpu"], "NeMo 24.07" in r["source"], ""
    if nemo and gpu in TE_CUDNN:
        note += "; " + (NEMO2407_ATTN_175B if r["model"] in NEMO2407_CUDNN else NEMO2407_ATTN)
    if launcher:
        note += ("; NeMo-Framework-Launcher examples/peft/llama/h100/%s (@97f45c18, the table's layout)" %
                 launcher[1])
        if rec["precision"] == "amp_fp8":  # every H100 PEFT example sets fp8 with fp8_params
            rec["fp8_params"] = 1
            note += "; fp8_params=1: the example's model.fp8_params=True (the weights held in FP8)"
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
    return note


def mbridge_notes(r, rec, method, as_run):
    """What a Megatron-Bridge table's row ran beyond Megatron's defaults (the recipe's overlaps, FP8
    recipe, CUDA graphs, userbuffers, pipeline split, expert tensor parallelism), set on rec; returns the
    source note's additions."""
    gpu, note = rec["gpu"], ""
    if as_run:
        note += "; " + as_run[1]
    a2a = MBRIDGE_A2A_OVERLAP.get((r["model"], r["gpu"], r["precision"]))
    if a2a and rec.get("ep"):
        rec["moe_a2a_overlap"] = 1
        note += ("; moe_a2a_overlap=1: NVIDIA-NeMo/Megatron-Bridge@7af9601c scripts/performance/configs/qwen3/"
                 "workload_base_configs.py %s (moe_a2a_overlap=True; utils/helpers.py L182-186: "
                 "overlap_moe_expert_parallel_comm and delay_wgrad_compute)" % a2a)
    if method == "pretrain" and rec["strategy"] == "zero" and rec["model"] in MBRIDGE_RECIPE:
        rec["overlap_param_gather"] = 1
        note += "; " + MBRIDGE_OPG % MBRIDGE_RECIPE[rec["model"]]
    if (method, gpu) in MBRIDGE_FT_OPG:
        rec["overlap_param_gather"] = 1
        note += "; " + MBRIDGE_FT_NOTE % MBRIDGE_FT_OPG[(method, gpu)]
    if r["precision"] in ("FP8-CS", "FP8"):
        rec["fp8_recipe"] = "current"
        rec["fp8_params"] = 1
        note += "; " + MBRIDGE_FP8_CS % (
            "the table's FP8-CS" if r["precision"] == "FP8-CS" else
            "the 26.06 table's FP8 is the FP8_CS preset: v0.5.0 (fcbb6031) scripts/performance/configs/llama/"
            "llama3_workload_base_configs.py L531-699 defines only _FP8_CS_V1 and _FP8_MX_V1 Llama 3 70B SFT/LoRA presets")
    off = MBRIDGE_ACT_OFFLOAD.get((rec["model"], gpu))
    if method == "pretrain" and off and rec["strategy"] == "fsdp" and r["precision"] == "FP8-CS":
        rec["act_offload_layers"] = off[0]
        note += ("; act_offload_layers=%d: cpu_offloading_num_layers=%d (NVIDIA-NeMo/Megatron-Bridge@5dd02f53 "
                 "scripts/performance/configs/llama/llama3_workload_base_configs.py %s, the GBS 256 presets the table's "
                 "layout matches; utils/overrides.py L139-141: activations only)" % (off[0], off[0], off[1]))
    if method == "pretrain" and (rec["model"], gpu) in MBRIDGE_CUDA_GRAPHS:
        rec["cuda_graphs"] = 1
        note += ("; cuda_graphs=1: cuda_graph_impl='local', cuda_graph_scope='full_iteration' "
                 "(NVIDIA-NeMo/Megatron-Bridge@7af9601c scripts/performance/configs/llama3/workload_base_configs.py "
                 "%s; utils/helpers.py L70-75)" % MBRIDGE_CUDA_GRAPHS[(rec["model"], gpu)])
    mub = MBRIDGE_UB.get((method, rec["model"], gpu)) or MBRIDGE_UB.get((method, rec["model"]))
    if mub and mub[0] and rec["sequence_parallel"] == 1:
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
    if rec["model"] in PP_SPLIT and rec["pp"] > 1:
        rec["pp_split"] = "embedding_loss"
        note += ("; pp_split=embedding_loss: the recipe sets account_for_embedding_in_pipeline_split and "
                 "account_for_loss_in_pipeline_split True (NVIDIA-NeMo/Megatron-Bridge %s)" % PP_SPLIT[rec["model"]])
    if rec["model"] in ETP and rec.get("ep"):
        rec["etp"] = ETP[rec["model"]][0]
        note += ("; etp=%d: expert_tensor_parallel_size=%d (NVIDIA-NeMo/Megatron-Bridge %s)" %
                 (rec["etp"], rec["etp"], ETP[rec["model"]][1]))
    return note


def finetune_notes(rec, method, nemo):
    """A LoRA row's adapters and a fine-tuning row's packed sequence length, set on rec; returns the
    source note's additions."""
    note = ""
    if method == "lora":
        # qv: under kernels=te Megatron's fused linear_qkv with its one adapter (epochcast's qv targets
        # the fused QKV where a network has one); no adapter on the output projection
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
    return note


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
               "attention": "cudnn" if gpu in TE_CUDNN else "flash", "kernels": "te", "optimizer": "adamw_apex_fused"}
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
        note = MEGATRON_DEFAULTS + nemo_notes(r, rec, method, launcher)
        if tag == "mbridge":
            note += mbridge_notes(r, rec, method, as_run)
        note += finetune_notes(rec, method, nemo)
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
