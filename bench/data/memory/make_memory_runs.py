#!/usr/bin/python3
"""make_memory_runs.py: writes bench/data/memory_runs.csv, the public peak-memory and
out-of-memory measurements of issue 40, as run records (docs/accuracy.md "Your own measured
runs").

Input: the transcriptions below, one dict per measured run, each with the source it came from
(repository@commit + file + line/section, or the URL) and the configuration its script really ran
(bench/data/memory/README.md says source by source what was read).  Output: the run file, in
the columns of bench/data/stack_runs.csv followed by the extra config keys these runs need
(LoRA, base precision, ZeRO, FSDP sharding, T5 target length) and note_* columns (ignored by
epochcast).  Usage:

    /usr/bin/python3 bench/data/memory/make_memory_runs.py          # (re)write the file
    /usr/bin/python3 bench/data/memory/make_memory_runs.py --check  # fail if it is stale

Units: a source's "GB" is converted as the script that printed it divided (1e9, 2^30, or
MiB x 1000 for the PEFT README, see there); the factor is in each row's note.
"""
import csv
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "memory_runs.csv")

STACK_COLS = ("id,model,task,gpu,num_gpus,strategy,precision,torch_version,batch_per_gpu,seq_len,"
              "image_size,grad_accum,optimizer,checkpointing,compile,attention,memory_format,trainer,"
              "max_grad_norm,data,num_workers,pin_memory,padding,dataset_samples,epochs,eval_samples,"
              "metric,memory_reading,value,source,split,note_split,note_gpu_known,note_gpu,"
              "note_reading_of,note_task").split(",")
EXTRA_COLS = ["lora_r", "lora_targets", "base_precision", "zero_stage", "offload", "sharding",
              "target_len", "note_reading_stated", "note_unexpressed", "note"]
COLS = STACK_COLS + EXTRA_COLS

GIB = 2 ** 30
MIB = 2 ** 20

rows = []


def add(**kw):
    for k in kw:
        if k not in COLS:
            raise SystemExit(f"unknown column {k}")
    rows.append(kw)


# ---------------------------------------------------------------- torchtune (split torchtune)
TT_2409 = "pytorch/torchtune@30b8519e8 README.md 'Memory and training speed' (table unchanged to bd2a0fc7)"
TT_2405 = "pytorch/torchtune@0217d44c2 README.md table 'Peak Memory per GPU (GB)' (Update readme table #955)"
TT_2411 = "pytorch/torchtune@1814feb17 README.md 'Optimization flags' table (Llama 3.2 3B)"
TT_CFG31 = "recipes/configs/llama3_1/8B_{}_single_device.yaml@30b8519e8"

tt_common = dict(task="lm", num_gpus=1, strategy="single", precision="bf16", torch_version="2.4",
                 grad_accum=1, optimizer="adamw", checkpointing=1, compile=1, attention="sdpa",
                 trainer="plain", data="real", padding="max_length", metric="peak_bytes",
                 memory_reading="allocated", split="torchtune", note_reading_stated=0)
for gpu, gname, lora_v, qlora_v, full_v, line in (
        ("rtx4090", "4090", 16.2, 7.4, 18.9, (127, 129, 125)),
        ("rtx-a6000", "A6000", 30.3, None, 37.4, (128, None, 126))):
    add(id=f"tt31-lora-8b-{gpu}", model="llama-3.1-8b", gpu=gpu, batch_per_gpu=2, seq_len=2048,
        lora_r=8, lora_targets="qv", value=round(lora_v * GIB),
        source=f"{TT_2409} L{line[0]}: 'Llama 3.1 8B | LoRA | 1x {gname} | {lora_v} GiB'",
        note_unexpressed="loss=CEWithChunkedOutputLoss",
        note=f"{TT_CFG31.format('lora')}: lora_rank 8 on q_proj,v_proj, AdamW, activation checkpointing, bf16; "
             "README: batch 2 no accumulation, packed to 2048, compile on; GiB x 2^30; statistic "
             "(active/alloc/reserved) not stated, taken as allocated (torchtune logs active = allocated)",
        **tt_common)
    add(id=f"tt31-full-8b-{gpu}", model="llama-3.1-8b", gpu=gpu, batch_per_gpu=2, seq_len=2048,
        value=round(full_v * GIB), **{**tt_common, "optimizer": "paged_adamw_8bit"},
        source=f"{TT_2409} L{line[2]}: 'Llama 3.1 8B | Full finetune | 1x {gname} | {full_v} GiB'",
        note_unexpressed="optimizer_in_bwd=True;loss=CEWithChunkedOutputLoss",
        note=f"{TT_CFG31.format('full')}: bitsandbytes PagedAdamW8bit with optimizer_in_bwd (each gradient "
             "freed after its step), activation checkpointing, bf16; batch 2 packed 2048, compile; GiB x 2^30; "
             "statistic not stated (allocated assumed)")
    if qlora_v is not None:
        add(id=f"tt31-qlora-8b-{gpu}", model="llama-3.1-8b", gpu=gpu, batch_per_gpu=2, seq_len=2048,
            lora_r=8, lora_targets="attention_mlp", base_precision="nf4", value=round(qlora_v * GIB),
            source=f"{TT_2409} L{line[1]}: 'Llama 3.1 8B | QLoRA | 1x {gname} | {qlora_v} GiB'",
            note_unexpressed="loss=CEWithChunkedOutputLoss",
            note=f"{TT_CFG31.format('qlora')}: NF4 base, lora_rank 8 on q,k,v,output_proj + MLP, AdamW, "
                 "activation checkpointing; batch 2 packed 2048, compile; GiB x 2^30; statistic not stated",
            **tt_common)

# May 2024 table: Llama2-7B, batch 4, seq 2048, torchtune's GB = bytes / 1e9 (torchtune/utils/memory.py@0217d44c2)
tt05 = {**tt_common, "torch_version": "2.3", "compile": 0}
L2 = "memory/configs/llama-2-7b-hf.json"
add(id="tt05-qlora-l2-7b-rtx4090", model=L2, gpu="rtx4090", batch_per_gpu=4, seq_len=2048, lora_r=8,
    lora_targets="attention_mlp", base_precision="nf4", value=round(12.3e9), **{**tt05, "compile": 1},
    source=f"{TT_2405}: '1 x RTX 4090 | QLoRA ** | Llama2-7B | Batch Size = 4, Seq Length = 2048 | 12.3 GB' (** torch compile)",
    note="recipes/configs/llama2/7B_qlora_single_device.yaml@0217d44c2: NF4 base, rank 8 on q,v,k,output_proj + MLP, "
         "AdamW, activation checkpointing, plain CrossEntropyLoss; GB = bytes/1e9 (memory.py); statistic not stated")
add(id="tt05-lora-l2-7b-rtx4090", model=L2, gpu="rtx4090", batch_per_gpu=4, seq_len=2048, lora_r=8,
    lora_targets="qv", value=round(21.3e9), **tt05,
    source=f"{TT_2405}: '1 x RTX 4090 | LoRA | Llama2-7B | Batch Size = 4, Seq Length = 2048 | 21.3 GB'",
    note="7B_lora_single_device.yaml@0217d44c2: rank 8 on q_proj,v_proj, AdamW, activation checkpointing, "
         "CrossEntropyLoss, bf16; GB = bytes/1e9; statistic not stated")
add(id="tt05-lora-l2-7b-2xrtx4090", model=L2, gpu="rtx4090", batch_per_gpu=4, seq_len=2048, lora_r=8,
    lora_targets="qv", value=round(16.2e9), **{**tt05, "num_gpus": 2, "strategy": "fsdp", "checkpointing": 0},
    sharding="full_shard",
    source=f"{TT_2405}: '2 x RTX 4090 | LoRA | Llama2-7B | Batch Size = 4, Seq Length = 2048 | 16.2 GB'",
    note="7B_lora.yaml@0217d44c2 (lora_finetune_distributed, FSDP FULL_SHARD): rank 8 q,v, AdamW, "
         "enable_activation_checkpointing False; GB = bytes/1e9; per GPU; statistic not stated")
add(id="tt05-full-l2-7b-rtx4090", model=L2, gpu="rtx4090", batch_per_gpu=4, seq_len=2048,
    value=round(24.1e9), **tt05,
    source=f"{TT_2405}: '1 x RTX 4090 | Full finetune * | Llama2-7B | ... | 24.1 GB' (* PagedAdamW)",
    note_unexpressed="optimizer_in_bwd=True;optimizer=bitsandbytes PagedAdamW (32-bit, paged)",
    note="7B_full_low_memory.yaml@0217d44c2: bitsandbytes PagedAdamW with optimizer_in_bwd, activation "
         "checkpointing; torchtune PR #961 could not reproduce 24.1 (20.2 GB allocated on its GPU, 22.3 on an A100)")
add(id="tt05-full-l2-7b-4xrtx4090", model=L2, gpu="rtx4090", batch_per_gpu=4, seq_len=2048,
    value=round(24.1e9), **{**tt05, "num_gpus": 4, "strategy": "fsdp"}, sharding="full_shard",
    source=f"{TT_2405}: '4 x RTX 4090 | Full finetune | Llama2-7B | ... | 24.1 GB'",
    note="7B_full.yaml@0217d44c2 (full_finetune_distributed, FSDP FULL_SHARD): torch AdamW on bf16 "
         "parameters (states bf16), activation checkpointing; GB = bytes/1e9; per GPU; statistic not stated")

# Nov 2024 optimization flags table: Llama 3.2 3B, full_finetune_single_device, batch 2, seq 4096, bf16, "A100"
tt11 = {**tt_common, "torch_version": "2.5", "checkpointing": 0, "compile": 0, "note_reading_stated": 1,
        "optimizer": "adamw"}
L32 = "memory/configs/llama-3.2-3b.json"
for tid, label, val, ac, comp, unexp in (
        ("packed", "+ Packed Dataset", 60.0, 0, 0, ""),
        ("compile", "+ Compile", 51.0, 0, 1, ""),
        ("chunked-ce", "+ Chunked Cross Entropy", 42.9, 0, 1, "loss=CEWithChunkedOutputLoss"),
        ("ac", "+ Activation Checkpointing", 24.9, 1, 1, "loss=CEWithChunkedOutputLoss")):
    add(id=f"tt11-3b-a100-{tid}", model=L32, gpu="a100-sxm4-80gb", batch_per_gpu=2, seq_len=4096,
        value=round(val * GIB), **{**tt11, "checkpointing": ac, "compile": comp},
        source=f"{TT_2411}: '{label} | {val}' (column 'Peak Memory Active (GiB)')",
        note_unexpressed=unexp, note_gpu="A100 (60 GiB active: the 80 GB part; SXM/PCIe not stated)",
        note="baseline: batch 2, max seq 4096, bf16, full_finetune_single_device; each technique on top of the "
             "previous; before '+ Fuse optimizer step into backward' and '+ 8-bit AdamW' the optimizer is torch "
             "AdamW without optimizer_in_bwd; packed to 4096; 'Peak Memory Active' = active_bytes.all.peak "
             "(memory.py), taken as allocated; GiB x 2^30")

# ---------------------------------------------------------------- PEFT README (split peft)
PEFT = "huggingface/peft@5de175184 README.md 'Use Cases' table (Hardware: Single A100 80GB GPU with CPU RAM above 64GB)"
peft_common = dict(task="lm", gpu="a100-sxm4-80gb", num_gpus=1, strategy="single", precision="fp32",
                   torch_version="1.13", batch_per_gpu=8, grad_accum=1, optimizer="adamw_torch",
                   checkpointing=0, compile=0, attention="eager", trainer="plain", data="real",
                   padding="max_length", split="peft", note_reading_stated=1,
                   note_gpu="A100 80GB (SXM4 assumed)")
T0 = "memory/configs/t0_3b.json"
MT0 = "memory/configs/mt0_xxl.json"
seq2seq_note = ("examples/pet_lora_seq2seq_accelerate_ds_zero3_offload.py@5de175184: batch 8, AdamW, fp32 "
                "(no mixed precision), ought/raft twitter_complaints tweets padded to the longest in the batch "
                "(seq_len 64 here, an estimate of the longest tweet), labels padded to the longest class name "
                "(target_len 4); peak = torch.cuda.max_memory_allocated printed in MiB by TorchTracemalloc "
                "('GPU Total Peak Memory'), README GB read as MiB/1000 (value = GB x 1000 x 2^20; the GB/GiB "
                "readings would be 5% lower / 2% higher)")
clm_note = ("examples/causal_language_modeling/pet_lora_clm_accelerate_ds_zero3_offload.py@73d7224b5: "
            "bigscience/bloomz-7b1, batch 8, inputs left-padded to max_length 64, LoRA r=8 (PEFT default "
            "target query_key_value), AdamW, fp32; reading as the seq2seq example (max_memory_allocated, MiB)")
add(id="peft-t0_3b-full", model=T0, seq_len=64, target_len=4, metric="peak_bytes", memory_reading="allocated",
    value=round(47.14 * 1000 * MIB), source=f"{PEFT} L51: 'bigscience/T0_3B | 47.14GB GPU' (Full Finetuning)",
    note=seq2seq_note + "; full fine-tuning = the same script without get_peft_model", **peft_common)
add(id="peft-t0_3b-lora", model=T0, seq_len=64, target_len=4, lora_r=8, lora_targets="qv", metric="peak_bytes",
    memory_reading="allocated", value=round(14.4 * 1000 * MIB),
    source=f"{PEFT} L51: '14.4GB GPU' (PEFT-LoRA PyTorch)", note=seq2seq_note + "; LoRA r=8 alpha 32 on q,v (T5 default)",
    **peft_common)
add(id="peft-t0_3b-lora-ds3off", model=T0, seq_len=64, target_len=4, lora_r=8, lora_targets="qv",
    metric="peak_bytes", memory_reading="allocated", value=round(9.8 * 1000 * MIB),
    **{**peft_common, "strategy": "zero"}, zero_stage=3, offload="optimizer_and_params",
    source=f"{PEFT} L51: '9.8GB GPU / 17.8GB CPU' (PEFT-LoRA DeepSpeed with CPU Offloading)",
    note=seq2seq_note + "; accelerate + DeepSpeed ZeRO-3 with parameters and optimizer offloaded to CPU")
add(id="peft-mt0_xxl-full-oom", model=MT0, seq_len=64, target_len=4, metric="oom", value=1,
    source=f"{PEFT} L52: 'bigscience/mt0-xxl (12B params) | OOM GPU' (Full Finetuning)",
    note=seq2seq_note + "; full fine-tuning of 12.9B parameters in fp32 with AdamW", **peft_common)
add(id="peft-mt0_xxl-lora", model=MT0, seq_len=64, target_len=4, lora_r=8, lora_targets="qv", metric="peak_bytes",
    memory_reading="allocated", value=round(56 * 1000 * MIB), source=f"{PEFT} L52: '56GB GPU / 3GB CPU' (PEFT-LoRA PyTorch)",
    note=seq2seq_note, **peft_common)
add(id="peft-mt0_xxl-lora-ds3off", model=MT0, seq_len=64, target_len=4, lora_r=8, lora_targets="qv",
    metric="peak_bytes", memory_reading="allocated", value=round(22 * 1000 * MIB),
    **{**peft_common, "strategy": "zero"}, zero_stage=3, offload="optimizer_and_params",
    source=f"{PEFT} L52: '22GB GPU / 52GB CPU' (PEFT-LoRA DeepSpeed with CPU Offloading)", note=seq2seq_note)
PEFT_B = PEFT.replace("5de175184", "73d7224b5")
add(id="peft-bloomz_7b1-full-oom", model="bloomz-7b1", seq_len=64, metric="oom", value=1,
    source=f"{PEFT_B} L53: 'bigscience/bloomz-7b1 (7B params) | OOM GPU' (Full Finetuning)",
    note=clm_note + "; full fine-tuning of 7.1B parameters in fp32 with AdamW", **peft_common)
add(id="peft-bloomz_7b1-lora", model="bloomz-7b1", seq_len=64, lora_r=8, lora_targets="qv", metric="peak_bytes",
    memory_reading="allocated", value=round(32 * 1000 * MIB), source=f"{PEFT_B} L53: '32GB GPU / 3.8GB CPU' (PEFT-LoRA PyTorch)",
    note=clm_note, **peft_common)
add(id="peft-bloomz_7b1-lora-ds3off", model="bloomz-7b1", seq_len=64, lora_r=8, lora_targets="qv",
    metric="peak_bytes", memory_reading="allocated", value=round(18.1 * 1000 * MIB),
    **{**peft_common, "strategy": "zero"}, zero_stage=3, offload="optimizer_and_params",
    source=f"{PEFT_B} L53: '18.1GB GPU / 35GB CPU' (PEFT-LoRA DeepSpeed with CPU Offloading)", note=clm_note)

# ---------------------------------------------------------------- Unsloth (split unsloth)
US = "unslothai/unsloth@0acd1c7e README.md 'Context length benchmarks'"
us_common = dict(task="lm", num_gpus=1, strategy="single", precision="amp_bf16", torch_version="2.5",
                 batch_per_gpu=1, grad_accum=1, optimizer="adamw_8bit", checkpointing=1, compile=0,
                 attention="flash", trainer="hf", data="real", padding="max_length", metric="oom",
                 lora_r=32, lora_targets="attention_mlp", base_precision="nf4", split="unsloth",
                 note_reading_stated=1)
us_note = ("Hugging Face + FlashAttention-2 column: 4-bit QLoRA on all linear layers (q,k,v,o,gate,up,down), "
           "rank 32, batch 1, sequences padded to the length; the table's GPU is a VRAM size: the GPU here is a "
           "profile of that size able to run FA2 (unsloth.ai/blog/llama3-3: 'tested ... on a 80GB A100'); "
           "gradient checkpointing, adamw_8bit and autocast bf16 are the HF QLoRA defaults assumed for the baseline")
# (VRAM tier, gpu profile, line, HF+FA2 max length that fits, the next tier's max: must not fit here)
tiers = ((16, "rtx3080ti-laptop-16gb", 403, 2551, 5789), (24, "l4", 404, 5789, 12264),
         (40, "a100-sxm4-40gb", 405, 12264, 15502), (48, "rtx-a6000", 406, 15502, 28454),
         (80, "a100-sxm4-80gb", 407, 28454, None))
for gb, gpu, line, fits, over in tiers:
    add(id=f"unsloth-l31-8b-{gb}gb-s{fits}-fits", model="llama-3.1-8b", gpu=gpu, seq_len=fits, value=0,
        source=f"{US} L{line}: Llama 3.1 (8B) max. context length, '{gb} GB' row, Hugging Face+FA2 '{fits:,}'",
        note_gpu=f"{gb} GB VRAM tier", note=us_note + "; the longest length that fits: oom=0", **us_common)
    if over:
        add(id=f"unsloth-l31-8b-{gb}gb-s{over}-oom", model="llama-3.1-8b", gpu=gpu, seq_len=over, value=1,
            source=f"{US} L{line}: '{gb} GB' row, Hugging Face+FA2 max '{fits:,}' < {over:,}",
            note_gpu=f"{gb} GB VRAM tier",
            note=us_note + f"; {over} is the next tier's HF+FA2 maximum, above this tier's {fits}: it does not fit",
            **us_common)
add(id="unsloth-l33-70b-80gb-s6916-fits", model="llama-3.1-70b", gpu="a100-sxm4-80gb", seq_len=6916, value=0,
    source=f"{US} L415: Llama 3.3 (70B) max. context length, '80 GB' row, Hugging Face+FA2 '6,916'",
    note=us_note + "; Llama 3.3 70B has Llama 3.1 70B's architecture (preset llama-3.1-70b)", **us_common)
add(id="unsloth-l33-70b-80gb-s12106-oom", model="llama-3.1-70b", gpu="a100-sxm4-80gb", seq_len=12106, value=1,
    source=f"{US} L415: '80 GB' row, Hugging Face+FA2 max '6,916' < 12,106",
    note=us_note + "; 12106 (Unsloth's 48 GB length) is above HF+FA2's 80 GB maximum 6916", **us_common)
add(id="unsloth-l33-70b-48gb-s6916-oom", model="llama-3.1-70b", gpu="rtx-a6000", seq_len=6916, value=1,
    source=f"{US} L414: '48 GB' row, Hugging Face+FA2 'OOM'", note_gpu="48 GB VRAM tier",
    note=us_note + "; HF+FA2 goes out of memory at 48 GB at every length tried; recorded at 6916", **us_common)

# ---------------------------------------------------------------- LitGPT resource tables (split litgpt)
LG = ("Lightning-AI/litgpt@0cc02afa tutorials/resource-tables.md (LitGPT commit 8641822, NVIDIA A100-SXM4-40GB, "
      "PyTorch 2.1.0+cu121, bitsandbytes 0.41.1, --precision bf16-true)")
lg_common = dict(task="lm", gpu="a100-sxm4-40gb", num_gpus=1, strategy="single", precision="bf16",
                 torch_version="2.1", grad_accum=1, optimizer="adamw_torch", checkpointing=0, compile=0,
                 attention="sdpa", trainer="plain", data="real", padding="max_length", lora_r=8,
                 lora_targets="qv", split="litgpt", note_reading_stated=1,
                 note_unexpressed="lm_head_chunk_size=128 + chunked_cross_entropy")
lg_note = ("finetune/lora.py@8641822: lora_r 8 on query and value, torch AdamW (bnb PagedAdamW when quantized), "
           "bf16-true weights, no activation checkpointing on one GPU; the first step is forced to hold the "
           "longest Alpaca sample (Llama 2: 1304 tokens, StableLM Alpha 1034, Falcon 1079) and batches pad to "
           "their longest, so the peak step is micro-batch x that length; 'Max GPU RAM' = "
           "torch.cuda.max_memory_allocated()/1e9")
models = {"l2-7b": ("memory/configs/llama-2-7b-hf.json", "7 B  | Llama 2", 1304),
          "l2-13b": ("memory/configs/llama-2-13b-hf.json", "13 B  | Llama 2", 1304),
          "stablelm-3b": ("memory/configs/stablelm-base-alpha-3b.json", "3 B   | StableLM Alpha", 1034),
          "falcon-40b": ("memory/configs/falcon-40b.json", "40 B  | Falcon", 1079)}
single = (("stablelm-3b", None, 1, 9.69), ("stablelm-3b", "nf4", 1, 6.35), ("stablelm-3b", None, 2, 12.10),
          ("stablelm-3b", None, 4, 16.92),
          ("l2-7b", None, 1, 21.30), ("l2-7b", "nf4", 1, 14.14), ("l2-7b", None, 2, 29.07), ("l2-7b", None, 4, "OOM"),
          ("l2-13b", None, 1, 38.12), ("l2-13b", "nf4", 1, 23.14), ("l2-13b", None, 2, "OOM"),
          ("l2-13b", None, 4, "OOM"),
          ("falcon-40b", None, 1, "OOM"), ("falcon-40b", "nf4", 1, "OOM"))
for key, quant, mb, val in single:
    path, label, seq = models[key]
    q = quant or "None"
    rid = f"litgpt-lora-{key}-{'nf4' if quant else 'bf16'}-mb{mb}"
    extra = {"base_precision": "nf4", "optimizer": "adamw_torch"} if quant else {}
    src = f"{LG} 'Finetuning with LoRA on 1 GPU': '{label} | {'bnb.nf4' if quant else 'None'} | {mb} | ... | {val}'"
    if val == "OOM":
        add(id=rid + "-oom", model=path, batch_per_gpu=mb, seq_len=seq, metric="oom", value=1, source=src,
            note=lg_note, **{**lg_common, **extra})
    else:
        add(id=rid, model=path, batch_per_gpu=mb, seq_len=seq, metric="peak_bytes", memory_reading="allocated",
            value=round(val * 1e9), source=src, note=lg_note, **{**lg_common, **extra})
multi = (("stablelm-3b", 2, 1, 12.75), ("stablelm-3b", 2, 2, 12.94), ("stablelm-3b", 2, 4, 13.45),
         ("l2-7b", 2, 1, 22.18), ("l2-7b", 2, 2, 22.47), ("l2-7b", 2, 4, 23.39), ("l2-13b", 2, 1, "OOM"),
         ("l2-13b", 4, 1, 35.57), ("falcon-40b", 4, 1, "OOM"))
for key, n, mb, val in multi:
    path, label, seq = models[key]
    rid = f"litgpt-lora-{key}-{n}xa100-mb{mb}"
    src = f"{LG} 'Finetuning with LoRA on Multiple GPUs': '{label} | None | {mb} | ... | {n} x A100 | {val}'"
    mnote = lg_note + ("; devices > 1: FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}) "
                       "= FULL_SHARD with every block checkpointed; value per GPU")
    common = {**lg_common, "num_gpus": n, "strategy": "fsdp", "checkpointing": 1}
    if val == "OOM":
        add(id=rid + "-oom", model=path, batch_per_gpu=mb, seq_len=seq, metric="oom", value=1, source=src,
            sharding="full_shard", note=mnote, **common)
    else:
        add(id=rid, model=path, batch_per_gpu=mb, seq_len=seq, metric="peak_bytes", memory_reading="allocated",
            value=round(val * 1e9), source=src, sharding="full_shard", note=mnote, **common)

# ---------------------------------------------------------------- GitHub issue OOM reports (split github_oom)
add(id="issue-llamacookbook413-l2-7b-a100-80-oom", model=L2, task="lm", gpu="a100-sxm4-80gb", num_gpus=1,
    strategy="single", precision="fp32", torch_version="2.2", batch_per_gpu=4, seq_len=4096, grad_accum=1,
    optimizer="adamw_torch", checkpointing=0, compile=0, attention="sdpa", trainer="plain", data="real",
    padding="max_length", metric="oom", value=1, split="github_oom", note_reading_stated=1,
    source="https://github.com/meta-llama/llama-cookbook/issues/413 (description: torch 2.2.1, "
           "NVIDIA A100-SXM4-80GB, 'python3 finetuning.py --model_name ../llama-2-7b-hf --output_dir ...', "
           "CUDA out of memory)",
    note="llama-recipes src/llama_recipes/configs/training.py defaults: batch_size_training 4, batching_strategy "
         "packing, context_length 4096, no FSDP, use_fp16 False (no autocast), no PEFT: the model is loaded "
         "without torch_dtype (fp32) and trained with torch AdamW")

# ---------------------------------------------------------------- write
def render():
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLS, lineterminator="\n")
    w.writeheader()
    seen = set()
    for r in rows:
        if r["id"] in seen:
            raise SystemExit(f"duplicate id {r['id']}")
        seen.add(r["id"])
        w.writerow({k: r.get(k, "") for k in COLS})
    return buf.getvalue()


def main():
    text = render()
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{OUT} is stale: rerun {sys.argv[0]}", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {len(rows)} rows to {os.path.normpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
