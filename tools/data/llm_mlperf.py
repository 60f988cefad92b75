"""llm_mlperf.py: MLPerf Training results as run records of bench/data/llm_runs.csv, for
make_llm_runs.py (which writes the file).  Python 3 stdlib.

Converts bench/data/llm/mlperf_llama31_8b.csv (v5.1 Llama 3.1 8B pre-training, transcribed by
mlperf_llama31_from_logs.py), bench/data/llm/mlperf_llama2_70b_lora.csv (v4.0 and v5.1 Llama 2 70B
LoRA, by mlperf_lora_from_logs.py) and bench/data/llm/mlperf_training.csv (NVIDIA's closed-division
BERT and GPT-3 runs, by mlperf_from_logs.py); bench/data/llm/README.md says where every number
sits.  bert_flat_copies and bert_grad_buckets read a BERT config's EXTRA_PARAMS flags; make_llm_runs.py
--check holds the committed rows to them too.
"""
import re

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
                "zero_stage=1 (use_distributed_optimizer=True, pretrain.py get_optimizer), optimizer=adamw_apex_fused (Megatron "
                "'adam' with weight decay, logged opt_name adamw: Transformer Engine's FusedAdam, one "
                "multi_tensor_adam kernel a chunk, megatron/core/optimizer/__init__.py@d98e8a64 L14-20), overlap_param_gather=1 (OVERLAP_GRAD_REDUCE, "
                "OVERLAP_PARAM_GATHER), cuda_graphs=1 (config_common_cg.sh: FULL_CUDA_GRAPH=1, MCORE_CUDA_GRAPH=1), "
                "max_grad_norm=1 (logged opt_gradient_clip_norm), no activation recompute; fp8_params=1 where "
                "FP8_PARAM_GATHER=True (config_common.sh L73: Megatron's fp8_param_gather, the parameters held and "
                "all-gathered in FP8, a byte a weight); B200: network left to the reference system's (DGX B200: 8 x 400 "
                "Gb/s; the systems state 'InfiniBand' with 500 GB/s PCIe-NIC, 'ROCE2', or nothing); GB200 / GB300: "
                "4 GPUs per node (DGXNGPU) on an NVL72 rack (network=gb200-nvl72 / gb300-nvl72: the NVLink domain, "
                "then the racks' 4 x ConnectX-7 NDR 400 / ConnectX-8 XDR 800 Gb/s per node, as the systems state); "
                "not described: SEGMENT=16 in the 512-GPU configs places the job in 16-tray (64-GPU) NVLink "
                "segments, priced as the 72-GPU domains of the network preset (no key for a job's placement), and "
                "their USE_TE_OPS=False (Megatron-Core's TE layers without TE's op fuser; kernels=te either way); "
                "sequence_parallel and tp_comm_overlap (TE userbuffers) as the config sets them; NCCL's channels "
                "per communicator as config_common.sh's NCCL_CFG_PATH sets them (conf/nccl/custom_communicator_cta.yaml, "
                "one file in every submitter's directory: dp and dp_cp max_ctas 8, cp 1, tp 8): nccl_dp_ctas=8, "
                "nccl_cp_ctas=1 where cp > 1, nccl_tp_ctas=8 where tp > 1 (the LoRA configs' file sets 32 on every "
                "communicator, which caps nothing)")


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
               "cp": cp, "sequence_parallel": int(env["SEQ_PARALLEL"] == "True"), "precision": "amp_fp8", "fp8_recipe": "current", "optimizer": "adamw_apex_fused",
               "attention": "cudnn", "cudnn_version": "9.13", "kernels": "te", "batch_per_gpu": mbs, "grad_accum": ga, "seq_len": seq,
               "cuda_graphs": 1, "overlap_param_gather": 1, "max_grad_norm": 1, "metric": "tokens_per_s",
               "value": "%.6g" % (gbs * seq / float(r["value"]))}
        if env["TP_COMM_OVERLAP"] == "True" and tp > 1:  # TE userbuffers (MC_TP_OVERLAP_AG/RS in config_common.sh)
            rec["tp_comm_overlap"] = 1
        if env.get("FP8_PARAM_GATHER") == "True":
            rec["fp8_params"] = 1
        # NCCL_CFG_PATH=conf/nccl/custom_communicator_cta.yaml (config_common.sh L44, the same file in every
        # submitter's directory): max_ctas 8 on dp and dp_cp, 1 on cp, 8 on tp
        rec["nccl_dp_ctas"] = 8
        if cp > 1:
            rec["nccl_cp_ctas"] = 1
        if tp > 1:
            rec["nccl_tp_ctas"] = 8
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
               "(its state is the LoRA parameters': nothing measurable to shard); optimizer=adamw_apex_fused (apex's FusedAdam); max_grad_norm=0.3 "
               "(trainer.gradient_clip_val); sequence_parallel=1 (SP=1); tp_comm_overlap=1 where TP_COMM_OVERLAP=True "
               "(H100, H200: TE userbuffers with the implementation's conf/tp_overlap/h100tp4mbs1.yaml or h100tp2mbs1.yaml, "
               "tp_overlap_cfg=mlperf40_lora_h100_tp4_mbs1 / mlperf40_lora_h200_tp2_mbs1); no activation checkpointing "
               "(ACG unset), no CUDA graphs; network: the systems' compute fabric (DGX H100 / H200: 8 x ConnectX-7 NDR "
               "400 Gb/s, ib-ndr-400; L40S: '2xBF3 400Gbps for EW' per 4-GPU node, bf3-2x400); fp8_params=1 in v4.0 "
               "(conf/megatron_gpt_peft_tuning_config.yaml L80 fp8_params: FP8, True in every config: the frozen "
               "base held in FP8); not priced: FP8_ACTIVATION (the H200's: the yaml's fp8_activation_input_store, "
               "a name no Python file found in the v4.0 submissions reads, unlike v5.1's activation_func_fp8_input_store), LORA_A2A (the adapters' experimental all-to-all under sequence parallelism), SHARP "
               "(the 8- and 128-node H100 runs' in-network reductions), VBOOST_VALUE (the 1-node runs' clock setting), "
               "atomic GEMMs in the userbuffers reduce-scatters, the answer-only loss (the same compute); the frozen "
               "base's width (Megatron-Core holds it in 16 bits): base_precision changes no throughput, so the rows "
               "leave it unset (the run table's rule: every key a row sets must move its prediction)")
MLPERF_LORA_V51 = ("v5.1 (B200 servers and GB200 / GB300 NVL72 racks of the submitters named, each running "
                   "NVIDIA's NeMo 25.09 implementation from its own directory, train.py: LoRA(dim 16, alpha 32, dropout 0.1, target_modules "
                   "linear_proj and linear_qkv), clip_grad 0.3, use_distributed_optimizer True): tp 1 with cp 1-8, "
                   "FP8 attention (FP8_DPA=1), fp8_recipe delayed (the yaml's default, FP8_RECIPE unset); "
                   "cuda_graphs=1 where MCORE_CUDA_GRAPH=1 (full-iteration graphs: cuda_graph_scope "
                   "full_iteration); fp8_params=1 (custom_llama.py CustomLlamaModel.configure_model builds the model "
                   "under te.fp8_model_init when FP8 is set, as every v5.1 config does: the frozen base held in FP8, "
                   "FP8_PARAM_GATHER=0 notwithstanding); fp8_act_store=1 where FP8_ACT=1 (train.py passes it as "
                   "activation_func_fp8_input_store: the SwiGLU's input kept in FP8); cp_comm_type=a2a where cp > 1 "
                   "(the yaml's cp_comm_type default, CP_COMM_TYPE unset: Transformer Engine's all-to-all context "
                   "parallelism); network: B200 left to the reference system's (DGX B200: 8 x 400 Gb/s; the "
                   "systems state 'InfiniBand'), GB200 / GB300 4 GPUs per node on NVL72 racks (gb200-nvl72, "
                   "gb300-nvl72); not priced: SEGMENT (where set: the job placed in NVLink segments of that many "
                   "trays, priced as the 72-GPU domains), NCCL_NET=Socket (two Supermicro B200 servers, one node), Thunder's fused LoRA dropout, TE's op fuser and cuDNN norms (USE_TE_OPS, "
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
               "optimizer": "adamw_apex_fused", "attention": "cudnn_fp8" if fp8_attention else "cudnn", "kernels": "te",
               "lora_r": 16, "lora_targets": "attention", "lora_dropout": "0.1", "batch_per_gpu": mbs, "grad_accum": ga,
               "seq_len": seq, "max_grad_norm": "0.3", "metric": "tokens_per_s"}
        v51 = r["metric"] == "train_step_time_median_s"
        if v51:
            rec["value"] = "%.6g" % (gbs * seq / float(r["value"]))
            what = "tokens_per_s = GBS %d x %d / %s s (the median step time)" % (gbs, seq, r["value"])
            if env["MCORE_CUDA_GRAPH"] in ("1", "True"):
                rec["cuda_graphs"] = 1
            if env["FP8"] == "True":  # custom_llama.py: te.fp8_model_init under FP8
                rec["fp8_params"] = 1
            if env.get("FP8_ACT") in ("1", "True"):  # train.py: activation_func_fp8_input_store
                rec["fp8_act_store"] = 1
            if cp > 1:  # the yaml: cp_comm_type ${oc.env:CP_COMM_TYPE,'a2a'}
                cp_comm = env.get("CP_COMM_TYPE", "(unset)")
                rec["cp_comm_type"] = "a2a" if cp_comm == "(unset)" else cp_comm
        else:
            rec["value"] = "%.6g" % (float(r["value"]) * seq)
            what = "tokens_per_s = %s samples/s (the median logged throughput) x %d tokens" % (r["value"], seq)
            if env["TP_COMM_OVERLAP"] == "True" and tp > 1:
                rec.update(tp_comm_overlap=1, tp_overlap_cfg=ub)
            if env["FP8"] == "True":  # v4.0's yaml: fp8_params follows FP8
                rec["fp8_params"] = 1
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
               "zero_stage=1 (USE_DIST_OPTIMIZER=True), optimizer=adamw_apex_fused (logged opt_name adam: "
               "a fused multi-tensor Adam); overlap_param_gather=1: apex DistributedFusedAdam with overlap_grad_sync and overlap_param_sync true (v3.0 "
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
            rec.update(model="mlperf-gpt3-175b", precision="amp_fp8", optimizer="adamw_apex_fused", tp=tp, pp=pp, kernels="te",
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
