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
              "reduce_dtype", "target_len", "loss_chunks", "optimizer_in_bwd", "loss", "logits_held", "fsdp_no_sync",
              "lora_fsdp_wrap", "quant_head", "note_reading_stated",
              "note_unexpressed", "note"]
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
TT_2409 = "pytorch/torchtune@30b8519e8 README.md 'Memory and training speed' (table unchanged to bd2a0fc7, there L125-129)"
TT_2405 = "pytorch/torchtune@0217d44c2 README.md table 'Peak Memory per GPU (GB)' (Update readme table #955)"
TT_2411 = "pytorch/torchtune@1814feb17 README.md 'Optimization flags' table (Llama 3.2 3B)"
TT_CFG31 = "recipes/configs/llama3_1/8B_{}_single_device.yaml@30b8519e8"

tt_common = dict(task="lm", num_gpus=1, strategy="single", precision="bf16", torch_version="2.4",
                 grad_accum=1, optimizer="adamw", checkpointing=1, compile=1, attention="sdpa",
                 trainer="plain", data="real", padding="max_length", metric="peak_bytes",
                 memory_reading="allocated", split="torchtune", note_reading_stated=0)
# The A6000 rows ran without activation checkpointing (the recipes' default is on; the README names batch,
# packing and compile only): at the same recipe and batch its peaks are twice the 4090's (LoRA 30.3 against
# 16.2 GiB), and with checkpointing the A6000 LoRA row's 4,699 tokens/s would take 206 TFLOP/s, above the
# card's 154.8 TFLOP/s bf16 peak (tools/data/make_llm_runs.py TORCHTUNE_A6000_NO_AC).
TT_A6000_NO_AC = ("; checkpointing=0 on the A6000: inferred from the README's own figures (its A6000 peaks twice "
                  "the 4090's at the same recipe and batch; with checkpointing its LoRA tokens/s would exceed the "
                  "card's bf16 peak)")
for gpu, gname, lora_v, qlora_v, full_v, line, ac in (
        ("rtx4090", "4090", 16.2, 7.4, 18.9, (84, 86, 82), 1),
        ("rtx-a6000", "A6000", 30.3, None, 37.4, (85, None, 83), 0)):
    ac_note = "activation checkpointing" if ac else "activation checkpointing in the recipe, off here"
    ac_why = "" if ac else TT_A6000_NO_AC
    add(id=f"tt31-lora-8b-{gpu}", model="llama-3.1-8b", gpu=gpu, batch_per_gpu=2, seq_len=2048,
        lora_r=8, lora_targets="qv", value=round(lora_v * GIB),
        source=f"{TT_2409} L{line[0]}: 'Llama 3.1 8B | LoRA | 1x {gname} | {lora_v} GiB'",
        note_unexpressed="loss=CEWithChunkedOutputLoss",
        note=f"{TT_CFG31.format('lora')}: lora_rank 8 on q_proj,v_proj, AdamW, {ac_note}, bf16; "
             "README: batch 2 no accumulation, packed to 2048, compile on; GiB x 2^30; statistic "
             "(active/alloc/reserved) not stated, taken as allocated (torchtune logs active = allocated)" + ac_why,
        **{**tt_common, "checkpointing": ac})
    add(id=f"tt31-full-8b-{gpu}", model="llama-3.1-8b", gpu=gpu, batch_per_gpu=2, seq_len=2048,
        value=round(full_v * GIB), **{**tt_common, "optimizer": "paged_adamw_8bit", "checkpointing": ac},
        source=f"{TT_2409} L{line[2]}: 'Llama 3.1 8B | Full finetune | 1x {gname} | {full_v} GiB'",
        note_unexpressed="optimizer_in_bwd=True;loss=CEWithChunkedOutputLoss",
        note=f"{TT_CFG31.format('full')}: bitsandbytes PagedAdamW8bit with optimizer_in_bwd (each gradient "
             f"freed after its step), {ac_note}, bf16; batch 2 packed 2048, compile; GiB x 2^30; "
             "statistic not stated (allocated assumed)" + ac_why)
    if qlora_v is not None:
        add(id=f"tt31-qlora-8b-{gpu}", model="llama-3.1-8b", gpu=gpu, batch_per_gpu=2, seq_len=2048,
            lora_r=8, lora_targets="attention_mlp", base_precision="nf4", value=round(qlora_v * GIB),
            source=f"{TT_2409} L{line[1]}: 'Llama 3.1 8B | QLoRA | 1x {gname} | {qlora_v} GiB'",
            note_unexpressed="loss=CEWithChunkedOutputLoss",
            note=f"{TT_CFG31.format('qlora')}: NF4 base, lora_rank 8 on q,k,v,output_proj + MLP, AdamW, "
                 "activation checkpointing; batch 2 packed 2048, compile; GiB x 2^30; statistic not stated",
            **tt_common)

# May 2024 table: Llama2-7B, batch 4, seq 2048, torchtune's GB = bytes / 1e9 (torchtune/utils/memory.py@0217d44c2)
# the loss: TransformerDecoder.forward returns self.output(h).float() (torchtune/modules/transformer.py@0217d44c2
# L210), the recipe keeps `logits` (its shifted .contiguous() fp32 copy) through loss.backward() (no del):
# loss=cross_entropy_fp32, logits held (a plain loop's default)
tt05 = {**tt_common, "torch_version": "2.3", "compile": 0, "loss": "cross_entropy_fp32"}
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
    lora_targets="qv", value=round(16.2e9), **{**tt05, "num_gpus": 2, "strategy": "fsdp"},
    sharding="full_shard",
    source=f"{TT_2405}: '2 x RTX 4090 | LoRA | Llama2-7B | Batch Size = 4, Seq Length = 2048 | 16.2 GB'",
    note="7B_lora.yaml@0217d44c2 (lora_finetune_distributed, FSDP FULL_SHARD): rank 8 q,v, AdamW; the yaml says "
         "enable_activation_checkpointing False and batch_size 2, so the table's run (batch 4) set its keys on the "
         "command line, and it had checkpointing on: without it the 4 x 2048 tokens keep 43 GiB of activations "
         "per GPU (32 layers of Llama-2-7B, epochcast's breakdown), which a 24 GB RTX 4090 cannot hold, and the "
         "run completed (16.2 GB per GPU); GB = bytes/1e9; per GPU; statistic not stated")
add(id="tt05-full-l2-7b-rtx4090", model=L2, gpu="rtx4090", batch_per_gpu=4, seq_len=2048,
    value=round(24.1e9), **{**tt05, "optimizer": "paged_adamw"},
    source=f"{TT_2405}: '1 x RTX 4090 | Full finetune * | Llama2-7B | ... | 24.1 GB' (* PagedAdamW)",
    note_unexpressed="optimizer_in_bwd=True",
    note="7B_full_low_memory.yaml@0217d44c2: bitsandbytes PagedAdamW with optimizer_in_bwd, activation "
         "checkpointing; torchtune PR #961 could not reproduce 24.1 (20.2 GB allocated on its GPU, 22.3 on an A100)")
add(id="tt05-full-l2-7b-4xrtx4090", model=L2, gpu="rtx4090", batch_per_gpu=4, seq_len=2048,
    value=round(24.1e9), **{**tt05, "num_gpus": 4, "strategy": "fsdp"}, sharding="full_shard",
    source=f"{TT_2405}: '4 x RTX 4090 | Full finetune | Llama2-7B | ... | 24.1 GB'",
    note="7B_full.yaml@0217d44c2 (full_finetune_distributed, FSDP FULL_SHARD): torch AdamW on bf16 "
         "parameters (states bf16), activation checkpointing; GB = bytes/1e9; per GPU; statistic not stated")

# Nov 2024 optimization flags table: Llama 3.2 3B, full_finetune_single_device, batch 2, seq 4096, bf16, "A100"
# the loss at 1814feb17: unchunked, TransformerDecoder returns self.output(h).float() (modules/transformer.py L652)
# and the recipe deletes the logits before backward (full_finetune_single_device.py L645 'del logits'):
# loss=cross_entropy_fp32, logits_held=0.  Chunked (CEWithChunkedOutputLoss), the model returns bf16 chunks
# and compile=True compiles only "the upcast + cross-entropy calculation" (training/_compile.py compile_loss):
# the fp32 copy is fused away and the 16-bit chunk is what the backward keeps, the plain cross_entropy's
# accounting of a bf16 model.
tt11 = {**tt_common, "torch_version": "2.5", "checkpointing": 0, "compile": 0, "note_reading_stated": 1,
        "optimizer": "adamw_fused", "logits_held": "0"}
L32 = "memory/configs/llama-3.2-3b.json"
for tid, label, val, ac, comp, unexp in (
        ("packed", "+ Packed Dataset", 60.0, 0, 0, ""),
        ("compile", "+ Compile", 51.0, 0, 1, ""),
        ("chunked-ce", "+ Chunked Cross Entropy", 42.9, 0, 1, "loss=CEWithChunkedOutputLoss"),
        ("ac", "+ Activation Checkpointing", 24.9, 1, 1, "loss=CEWithChunkedOutputLoss")):
    add(id=f"tt11-3b-a100-{tid}", model=L32, gpu="a100-sxm4-80gb", batch_per_gpu=2, seq_len=4096,
        value=round(val * GIB), **{**tt11, "checkpointing": ac, "compile": comp,
                                   "loss": "cross_entropy" if unexp else "cross_entropy_fp32"},
        source=f"{TT_2411}: '{label} | {val}' (column 'Peak Memory Active (GiB)')",
        note_unexpressed=unexp, note_gpu="A100 (60 GiB active: the 80 GB part; SXM/PCIe not stated)",
        note="baseline: batch 2, max seq 4096, bf16, full_finetune_single_device; each technique on top of the "
             "previous; before '+ Fuse optimizer step into backward' and '+ 8-bit AdamW' the optimizer is torch "
             "AdamW without optimizer_in_bwd, and a fused one (AdamW(fused=True), as torchtune's 3B_full.yaml sets): "
             "the '+ Activation Checkpointing' peak, 24.9 GiB, is below the 29.9 GiB that foreach AdamW's step "
             "needs (bf16 weights 5.98 + gradients 5.98 + states 11.97 + the sqrt(exp_avg_sq) temporaries 5.98, "
             "torch/optim/adamw.py _multi_tensor_adamw); packed to 4096; 'Peak Memory Active' = active_bytes.all.peak "
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
    source=f"{PEFT_B} L48: 'bigscience/bloomz-7b1 (7B params) | OOM GPU' (Full Finetuning)",
    note=clm_note + "; full fine-tuning of 7.1B parameters in fp32 with AdamW", **peft_common)
add(id="peft-bloomz_7b1-lora", model="bloomz-7b1", seq_len=64, lora_r=8, lora_targets="qv", metric="peak_bytes",
    memory_reading="allocated", value=round(32 * 1000 * MIB), source=f"{PEFT_B} L48: '32GB GPU / 3.8GB CPU' (PEFT-LoRA PyTorch)",
    note=clm_note, **peft_common)
add(id="peft-bloomz_7b1-lora-ds3off", model="bloomz-7b1", seq_len=64, lora_r=8, lora_targets="qv",
    metric="peak_bytes", memory_reading="allocated", value=round(18.1 * 1000 * MIB),
    **{**peft_common, "strategy": "zero"}, zero_stage=3, offload="optimizer_and_params",
    source=f"{PEFT_B} L48: '18.1GB GPU / 35GB CPU' (PEFT-LoRA DeepSpeed with CPU Offloading)", note=clm_note)

# ---------------------------------------------------------------- Unsloth (split unsloth)
US = "unslothai/unsloth@0acd1c7e README.md 'Context length benchmarks'"
us_common = dict(task="lm", num_gpus=1, strategy="single", precision="amp_bf16", torch_version="2.5",
                 batch_per_gpu=1, grad_accum=1, optimizer="adamw_8bit", checkpointing=1, compile=0,
                 attention="flash", trainer="hf", data="real", padding="max_length", metric="oom",
                 lora_r=32, lora_targets="attention_mlp", base_precision="nf4", split="unsloth",
                 note_reading_stated=1)
us_note = ("Hugging Face + FlashAttention-2 column: 4-bit QLoRA on all linear layers (q,k,v,o,gate,up,down), "
           "rank 32, batch 1, sequences padded to the length; the table's GPU is a VRAM size: the GPU here is a "
           "profile of that size in GiB able to run FA2 (unsloth.ai/blog/llama3-3: 'tested ... on a 80GB A100'); "
           "gradient checkpointing, adamw_8bit and autocast bf16 are the HF QLoRA defaults assumed for the baseline")
# (VRAM tier, gpu profile, line, HF+FA2 max length that fits, the next tier's max: must not fit here)
tiers = ((16, "rtx3080ti-laptop-16gb", 403, 2551, 5789), (24, "rtx4090", 404, 5789, 12264),
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
                 torch_version="2.1", optimizer="adamw_torch", checkpointing=0, compile=0,
                 attention="sdpa", trainer="plain", data="real", padding="max_length", lora_r=8,
                 lora_targets="qv", split="litgpt", note_reading_stated=1, logits_held="1")
lg_note = ("finetune/lora.py@8641822: lora_r 8 on query and value, torch AdamW (bnb PagedAdamW when quantized), "
           "bf16-true weights, no activation checkpointing on one GPU; the first step is forced to hold the "
           "longest Alpaca sample (Llama 2: 1304 tokens, StableLM Alpha 1034, Falcon 1079) and batches pad to "
           "their longest, so the peak step is micro-batch x that length; 'Max GPU RAM' = "
           "torch.cuda.max_memory_allocated()/1e9; batch_size 128 = micro-batch x gradient_accumulation_iters "
           "(grad_accum 128 / micro-batch); model(input_ids, lm_head_chunk_size=128) returns the logits in "
           "128-token chunks and chunked_cross_entropy (lit_gpt/utils.py) takes the loss chunk by chunk: "
           "loss_chunks = ceil(length / 128); the loop keeps the list `logits` through backward")


def lg_keys(mb, seq):
    """grad_accum and loss_chunks of a LitGPT row (finetune/lora.py@8641822, lit_gpt/lora.py GPT.forward)."""
    return {"grad_accum": 128 // mb, "loss_chunks": -(-seq // 128)}


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
    # --quantize bnb.nf4: BitsandbytesPrecision("nf4") = _NF4Linear (compress_statistics=False: no double
    # quantization) for every nn.Linear the model builds, the LoRA head's too (lightning@71aed751)
    extra = {"base_precision": "nf4_nodq", "quant_head": 1, "optimizer": "adamw_torch"} if quant else {}
    src = f"{LG} 'Finetuning with LoRA on 1 GPU': '{label} | {'bnb.nf4' if quant else 'None'} | {mb} | ... | {val}'"
    if val == "OOM":
        add(id=rid + "-oom", model=path, batch_per_gpu=mb, seq_len=seq, metric="oom", value=1, source=src,
            note=lg_note, **{**lg_common, **extra, **lg_keys(mb, seq)})
    else:
        add(id=rid, model=path, batch_per_gpu=mb, seq_len=seq, metric="peak_bytes", memory_reading="allocated",
            value=round(val * 1e9), source=src, note=lg_note, **{**lg_common, **extra, **lg_keys(mb, seq)})
multi = (("stablelm-3b", 2, 1, 12.75), ("stablelm-3b", 2, 2, 12.94), ("stablelm-3b", 2, 4, 13.45),
         ("l2-7b", 2, 1, 22.18), ("l2-7b", 2, 2, 22.47), ("l2-7b", 2, 4, 23.39), ("l2-13b", 2, 1, "OOM"),
         ("l2-13b", 4, 1, 35.57), ("falcon-40b", 4, 1, "OOM"))
for key, n, mb, val in multi:
    path, label, seq = models[key]
    rid = f"litgpt-lora-{key}-{n}xa100-mb{mb}"
    src = f"{LG} 'Finetuning with LoRA on Multiple GPUs': '{label} | None | {mb} | ... | {n} x A100 | {val}'"
    mnote = lg_note + ("; devices > 1: FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}) "
                       "= FULL_SHARD with every block checkpointed; value per GPU; Lightning @71aed751 (LitGPT's "
                       "pin) sets use_orig_params=True, so each Block's unit (LoRA adapters beside the frozen "
                       "weights) gets a gradient for all of it (lora_fsdp_wrap=block), and the loop's "
                       "fabric.no_backward_sync(model, enabled=is_accumulating) is FSDP's no_sync(): the "
                       "unsharded gradients stay until the last micro-step (fsdp_no_sync=1)")
    common = {**lg_common, "num_gpus": n, "strategy": "fsdp", "checkpointing": 1, **lg_keys(mb, seq),
              "fsdp_no_sync": 1, "lora_fsdp_wrap": "block"}
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

# ---------------------------------------------------------------- PEFT MetaMathQA benchmark (split peft_metamathqa)
MM = "huggingface/peft method_comparison/MetaMathQA/results/{}.json@{} train_info.accelerator_memory_max"
mm_common = dict(task="lm", gpu="l40s", num_gpus=1, strategy="single", precision="bf16", batch_per_gpu=4,
                 seq_len=768, grad_accum=1, optimizer="adamw_torch", checkpointing=0, compile=0, attention="sdpa",
                 trainer="plain", max_grad_norm=1.0, data="real", padding="max_length", metric="peak_bytes",
                 memory_reading="reserved", split="peft_metamathqa", note_reading_stated=1,
                 note_unexpressed="evaluation by generate() at batch 50 up to 800 tokens every 250 steps")
mm_note = ("run.py/utils.py: Llama-3.2-3B loaded in bfloat16 (use_amp False: pure bf16), batch 4, MetaMathQA "
           "query+response truncated to 768 tokens and padded to the longest in the batch (the peak batch is taken "
           "at 768), torch AdamW lr 1e-4 wd 0.1, grad clip 1.0, no gradient checkpointing, no compile, default "
           "(sdpa) attention, 5000 steps; accelerator_memory_max = torch.cuda.max_memory_reserved() at the end "
           "minus the reserved memory before the model was loaded (2 MB: a 1x1 Linear), so the peak of the whole "
           "run, evaluation included; system_info.accelerator 'NVIDIA L40S'")
for name, rid, extra, runs in (
        ("full-finetuning--llama-3.2-3B-lr_0.00001", "full", {},
         (("bda9665bc", "2.7", 37241225216), ("a99942694", "2.9", 38549848064), ("51c2ff666", "2.13", 38868615168))),
        ("lora--llama-3.2-3B-rank32", "lora-r32", {"lora_r": 32, "lora_targets": "qv"},
         (("bda9665bc", "2.7", 22273851392), ("a99942694", "2.9", 22286434304), ("51c2ff666", "2.13", 22292725760))),
        ("lora--llama-3.2-3B-rank64", "lora-r64", {"lora_r": 64, "lora_targets": "qv"},
         (("bda9665bc", "2.7", 22540189696), ("a99942694", "2.9", 22554869760), ("51c2ff666", "2.13", 22552772608)))):
    for commit, tv, val in runs:
        add(id=f"peftmm-3b-{rid}-torch{tv}", model=L32, torch_version=tv, value=val,
            source=MM.format(name, commit) + f" = {val} (meta_info torch {tv})",
            note=mm_note + ("; full fine-tuning: every parameter trainable, AdamW states in bf16"
                            if rid == "full" else f"; LoRA r={extra['lora_r']} on q_proj, v_proj, adapters in fp32 "
                            "(autocast_adapter_dtype)"), **{**mm_common, **extra})

# ---------------------------------------------------------------- Answer.AI fsdp_qlora (split answerai_fsdp_qlora)
AA = "AnswerDotAI/fsdp_qlora@4cd6923 benchmarks_03_2024.md"
aa_common = dict(task="lm", num_gpus=2, strategy="fsdp", sharding="full_shard", precision="bf16",
                 torch_version="2.2", grad_accum=1, optimizer="adamw_torch", checkpointing=1, compile=0,
                 attention="sdpa", trainer="plain", data="synthetic", padding="max_length", lora_r=64,
                 lora_targets="attention_mlp", loss="cross_entropy_fp32", metric="peak_bytes",
                 memory_reading="reserved", split="answerai_fsdp_qlora", note_reading_stated=1)
aa_note = ("train.py@4cd6923 defaults and the post's template command: --dataset dummy (every sample truncated to "
           "context_length), --precision bf16 (bf16 weights, no autocast), LoRA rank 64 on k,q,v,up,down,gate "
           "(o_proj not adapted), torch AdamW, FSDP FULL_SHARD with every decoder layer checkpointed (reentrant "
           "for QLoRA), bnb NF4 base for QLoRA; 'DDP' = FSDP NO_SHARD; 'CPU Offload' = FSDP CPUOffload(params); "
           "peak = torch.cuda.max_memory_reserved (the post's NB: 'the reported peak reserved memory'), GiB x 2^30, "
           "per GPU; the loss is the model's own: model(input_ids, labels=...).loss (train.py L840-846), and "
           "LlamaForCausalLM/MistralForCausalLM.forward of the transformers the README installs "
           "('transformers!=4.38.*,!=4.39.*', runs of Feb-Mar 2024: 4.37) upcast the bf16 logits "
           "(logits = logits.float(), removed only after 4.45: huggingface/transformers#30860, #33902) before the "
           "shifted cross entropy (loss=cross_entropy_fp32); the loop keeps `output` (the fp32 logits) until "
           "after backward (output = None, L894: logits held, the plain loop's default)")
L70 = "memory/configs/llama-2-70b-hf.json"
YI = "memory/configs/yi-34b.json"
aa_rows = (  # gpu, model, qlora, batch, seq, sharding, offload, value GiB, table
    ("rtx3090", L2, 1, 1, 512, "full_shard", 0, 4.98, "Llama-2 7B with a batch size of one (QLoRA, 512)"),
    ("rtx3090", L2, 1, 1, 2048, "full_shard", 0, 5.21, "Llama-2 7B with a batch size of one (QLoRA, 2048)"),
    ("rtx3090", L2, 0, 1, 512, "full_shard", 0, 10.24, "Llama-2 7B with a batch size of one (LoRA, 512)"),
    ("rtx3090", L2, 0, 1, 2048, "full_shard", 0, 10.22, "Llama-2 7B with a batch size of one (LoRA, 2048)"),
    ("rtx3090", L2, 1, 4, 2048, "full_shard", 0, 11.22, "Llama-2 7B with Context Length of 2048 (QLoRA, batch 4)"),
    ("rtx3090", L2, 1, 10, 2048, "full_shard", 0, 20.97, "Llama-2 7B with Context Length of 2048 (QLoRA, batch 10)"),
    ("rtx3090", L2, 0, 4, 2048, "full_shard", 0, 16.14, "Llama-2 7B with Context Length of 2048 (LoRA, batch 4)"),
    ("rtx3090", L2, 0, 6, 2048, "full_shard", 0, 21.35, "Llama-2 7B with Context Length of 2048 (LoRA, batch 6)"),
    ("rtx3090", L2, 1, 8, 2048, "no_shard", 0, 20.94, "DDP table (QLoRA, DDP True, batch 8)"),
    ("rtx3090", L2, 0, 4, 2048, "no_shard", 0, 22.04, "DDP table (LoRA, DDP True, batch 4)"),
    ("rtx3090", YI, 1, 2, 2048, "full_shard", 0, 23.05, "Yi 34B with Context Length of 2048 (CPU Offload False, batch 2)"),
    ("rtx3090", YI, 1, 4, 2048, "full_shard", 1, 22.98, "Yi 34B with Context Length of 2048 (CPU Offload True, batch 4)"),
    ("rtx3090", L70, 1, 2, 2048, "full_shard", 1, 14.92, "Llama-2 70B with Context Length of 2048 (CPU Offload True, batch 2)"),
    ("rtx4090", L2, 0, 10, 2048, "full_shard", 1, 22.69, "dual 4090, Llama-2 7B (LoRA, CPU Offload True, DDP False, batch 10)"),
    ("rtx4090", L2, 1, 12, 2048, "full_shard", 1, 22.38, "dual 4090, Llama-2 7B (QLoRA, CPU Offload True, DDP False, batch 12)"),
    ("rtx4090", "mistral-7b", 1, 12, 2048, "full_shard", 1, 22.54, "dual 4090, Bonus: Mistral 7B v0.2 (QLoRA, offload, batch 12, 2,048)"),
    ("rtx4090", "mistral-7b", 1, 1, 24576, "full_shard", 1, 22.54, "dual 4090, Bonus: Mistral 7B v0.2 (QLoRA, offload, batch 1, 24,576)"))
for gpu, model, qlora, b, seq, shard, off, val, table in aa_rows:
    mname = {L2: "l2-7b", YI: "yi-34b", L70: "l2-70b", "mistral-7b": "mistral-7b"}[model]
    rid = f"aa-{gpu}-{mname}-{'qlora' if qlora else 'lora'}-b{b}-s{seq}{'-ddp' if shard == 'no_shard' else ''}{'-offload' if off else ''}"
    extra = {"base_precision": "nf4"} if qlora else {}
    add(id=rid, model=model, gpu=gpu, batch_per_gpu=b, seq_len=seq, value=round(val * GIB),
        source=f"{AA} table '{table}': {val} GiB", note_gpu=("2x RTX 3090 (no NVLink, 280 W)" if gpu == "rtx3090"
                                                             else "2x RTX 4090 (PCIe 4.0 x16, no NVLink)"),
        note=aa_note + ("; Mistral 7B v0.2 has mistral-7b's shapes (32k context, no sliding window)"
                        if model == "mistral-7b" else ""),
        **{**aa_common, "sharding": shard, "offload": "optimizer_and_params" if off else "", **extra})

add(id="aa-rtx4090-mistral-7b-qlora-b1-s32768-offload-oom", model="mistral-7b", gpu="rtx4090", batch_per_gpu=1,
    seq_len=32768, value=1,
    source=f"{AA} 'Bonus: Mistral 7B': '24GB of memory per GPU isn't quite enough to finetune at the full context "
           "length [32K] even using QLoRA, but we can manage a respectable 24K tokens'",
    note_gpu="2x RTX 4090 (PCIe 4.0 x16, no NVLink)", note=aa_note + "; the full 32,768-token context did not fit",
    **{**aa_common, "offload": "optimizer_and_params", "base_precision": "nf4", "metric": "oom",
       "memory_reading": ""})

# ---------------------------------------------------------------- torchtitan (split torchtitan)
TT = "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md@820504e20"
tt_t_common = dict(model="llama-3.1-8b", task="lm", gpu="h100-sxm5-96gb-500w", strategy="fsdp", sharding="full_shard",
                   precision="amp_bf16", torch_version="2.6", batch_per_gpu=2, seq_len=8192, grad_accum=1,
                   optimizer="adamw_foreach", checkpointing="selective_op", attention="sdpa", trainer="plain", data="real",
                   padding="max_length", metric="peak_bytes", memory_reading="reserved", split="torchtitan",
                   note_reading_stated=1,
                   note_gpu="H100 SXM 96 GB HBM2e (Grand Teton, 500 W): gpu=h100-sxm5-96gb-500w, its own profile "
                            "(until branch hopper the H100 NVL 94 GB, the nearest capacity)")
tt_t_note = ("torchtitan@9dec370 train_configs/llama3_8b.toml: seq_len 8192, AdamW (optimizer.fused False: foreach), activation_checkpoint mode "
             "selective with selective_ac_option 'op' (checkpointing=selective_op: each block keeps its input, the SDPA output and every second mm's output), FSDP2 (param bf16, reduce fp32), the loss on logits upcast "
             "to fp32 (train.py L131-134) after which the loop drops the bf16 logits: 'del pred' before "
             "loss.backward() (train.py L303-308, logits_held=0); Table footnote: memory is the max over GPUs; train.py logs device_mem_stats.max_reserved_gib "
             "('memory: X GiB'); GiB x 2^30")
for n, tab, label, comp, val in ((8, "Table 1", "FSDP", 0, 82.4), (8, "Table 1", "FSDP + torch.compile", 1, 77.0),
                                 (128, "Table 3", "FSDP", 0, 67.0), (128, "Table 3", "FSDP + torch.compile", 1, 62.0)):
    add(id=f"titan-l31-8b-{n}xh100-{'compile' if comp else 'eager'}", num_gpus=n, compile=comp,
        value=round(val * GIB), reduce_dtype="fp32", logits_held="0",
        source=f"{TT} {tab} (1D FSDP, Llama 3.1 8B, {n} GPUs, local batch 2, selective AC): '{label} | ... | {val}'",
        note=tt_t_note, **tt_t_common)

# ---------------------------------------------------------------- HF model docs SDPA table: ALBERT (split hf_docs)
HFA = ("huggingface/transformers docs/source/en/model_doc/albert.md section 'Using Scaled Dot Product Attention "
       "(SDPA)' / 'Training for 100 iterations' (index id 32201354665; GeForce RTX 2060-8GB, PyTorch 2.3.1, float16)")
hfa_common = dict(model="memory/configs/albert-base-v1-no-dropout.json", task="classify", gpu="rtx2060-super",
                  num_gpus=1, strategy="single", precision="fp16", torch_version="2.3", grad_accum=1, optimizer="none",
                  checkpointing=0, compile=0, trainer="plain", max_grad_norm=0, data="on_gpu", padding="max_length",
                  metric="peak_bytes", memory_reading="allocated", split="hf_docs", note_reading_stated=1,
                  note_gpu="'RTX 2060-8GB': the 8 GB Turing 2060 is the RTX 2060 SUPER")
hfa_note = ("the SDPA training template of these model docs (optimum tests/benchmark/benchmark_bettertransformer_"
            "training.py@258ca811, see bench/data/stack/README.md): whole model in float16, random input_ids already "
            "on the GPU, model.zero_grad(); loss = outputs.logits.sum() (on AlbertModel, which returns no logits, the sum "
            "of its output); loss.backward() -- no optimizer step; peak = "
            "torch.cuda.max_memory_allocated() x 1e-6 ('MB'). The model is the doc's snippet, "
            "AlbertModel.from_pretrained('albert/albert-base-v1', torch_dtype=torch.float16, attn_implementation="
            "'sdpa'): no vocabulary head, so no 30,000-word logits (at b8 s512 they and their gradient would be "
            "0.49 GB, and the 12 layers' activations alone come to 2.1 GB of the 2.22 GB measured); task=classify "
            "carries AlbertModel's pooler (its 768x2 classifier adds 1,538 parameters). Dropout was inactive: the "
            "eager - sdpa difference of every row is one fp16 copy of the attention probabilities per layer "
            "(b8 s512: 2820.398 - 2219.695 = 600.7 MB; 12 layers x 12 heads x 512^2 x 8 x 2 B = 604.0 MB less "
            "SDPA's fp32 log-sum-exp, 2.4 MB), where a p=0.1 dropout in training mode also keeps its mask and "
            "its output (5 B per score, 1.51 GB): configs/albert-base-v1-no-dropout.json")
for b, s, eager, sdpa in ((2, 256, 358.411, 321.088), (2, 512, 753.458, 602.660), (4, 256, 679.534, 602.660),
                          (4, 512, 1434.820, 1134.140), (8, 256, 1283.825, 1134.140), (8, 512, 2820.398, 2219.695)):
    for att, val in (("eager", eager), ("sdpa", sdpa)):
        add(id=f"hfdoc-albert-2060-{att}-b{b}-s{s}", batch_per_gpu=b, seq_len=s, attention=att,
            value=round(val * 1e6), source=f"{HFA}: row batch {b}, seq {s}, {att} peak mem {val} MB",
            note=hfa_note, loss="sum", **hfa_common)

# ---------------------------------------------------------------- Raschka, LLMs-from-scratch (split rasbt_llm_speed)
RB = ("rasbt/LLMs-from-scratch@0636158 ch05/10_llm-training-speed/README.md (script printouts, 'PyTorch version: "
      "2.6.0+cu124', 'All experiments were run on A100 GPUs')")
rb_common = dict(task="lm", gpu="a100-sxm4-40gb", num_gpus=1, strategy="single", torch_version="2.6", seq_len=1024,
                 grad_accum=1, checkpointing=0, trainer="plain", data="real", num_workers=4,
                 padding="max_length", metric="peak_bytes", memory_reading="reserved", split="rasbt_llm_speed",
                 note_reading_stated=1,
                 note_gpu="'A100': the 40 GB part -- batch 32 (22.5 GiB) is 'the largest power of 2 supported', "
                          "so batch 64 (about 45 GiB) did not fit; SXM4 or PCIe not stated")
rb_note = ("GPT-2 124M trained from scratch on a public-domain book with the book's own GPTModel (untied output head, "
           "no qkv bias, dropout 0.1), context 1024, torch AdamW (lr 5e-4, wd 0.1), cross-entropy on the logits as "
           "they come; 'Reserved memory' = torch.cuda.memory_reserved()/1024**3 printed after each epoch (the "
           "caching allocator keeps its segments, so the peak reserved), GiB x 2^30; each step adds to the previous")
G50257 = "memory/configs/gpt2-124m-untied-v50257.json"
G50304 = "memory/configs/gpt2-124m-untied-v50304.json"
# from step 6 on the model runs nn.GELU(approximate='tanh'), HF's gelu_pytorch_tanh (one kernel)
G50257T = "memory/configs/gpt2-124m-untied-v50257-tanh.json"
G50304T = "memory/configs/gpt2-124m-untied-v50304-tanh.json"
# calc_loss_batch returns the loss only: the logits die with it, the cross entropy's log_softmax
# keeps its own output (logits_held=0); the targets are shifted in the dataset (GPTDatasetV1), so
# the loss reads the logits as they come (flatten(0, 1) is a view).  The tanh-GELU in Python ops
# of steps 1-5 is HF's gelu_new (the configs without -tanh).
DROPS = ""
SCRATCH = ("from-scratch LayerNorm (mean, var, (x - mean) / sqrt(var + eps), scale, shift as separate ops: "
           "autograd keeps x, x - mean and the normalized x, nn.LayerNorm keeps x and two statistics per row)")
rb_rows = (  # id, label, model, precision, batch, attention, compile, optimizer, pin, n, value GiB, unexpressed, script
    ("baseline", "Baseline (00_orig.py): 'Reserved memory: 26.2617 GB'", G50257, "fp32", 8, "eager", 0, "adamw_torch",
     0, 1, 26.2617, SCRATCH, "00_orig.py: fp32, explicit masked attention, batch 8"),
    ("tf32", "2. Use tensor cores: 'After ... Reserved memory: 26.2422 GB'", G50257, "tf32", 8, "eager", 0, "adamw_torch",
     0, 1, 26.2422, SCRATCH, "+ causal mask made on the fly, + torch.set_float32_matmul_precision('high')"),
    ("bf16", "5. Using bfloat16 precision: 'After ... Reserved memory: 13.7871 GB'", G50257, "bf16", 8, "eager", 0,
     "adamw_torch_fused", 1, 1, 13.7871, SCRATCH, "+ fused AdamW, + pin_memory, + model.to(torch.bfloat16) (pure bf16)"),
    ("native-ln-gelu", "6. Replacing from-scratch code by PyTorch classes: 'After ... 11.5645 GB'", G50257T, "bf16", 8,
     "eager", 0, "adamw_torch_fused", 1, 1, 11.5645, DROPS, "+ nn.LayerNorm and nn.GELU(approximate='tanh')"),
    ("sdpa", "7. Using FlashAttention: 'After ... Reserved memory: 5.9004 GB'", G50257T, "bf16", 8, "sdpa", 0,
     "adamw_torch_fused", 1, 1, 5.9004, DROPS, "+ F.scaled_dot_product_attention(is_causal=True, dropout 0.1)"),
    ("compile", "8. Using pytorch.compile: 'After ... Reserved memory: 6.1875 GB'", G50257T, "bf16", 8, "sdpa", 1,
     "adamw_torch_fused", 1, 1, 6.1875, DROPS, "+ torch.compile(model)"),
    ("vocab50304", "9. Using a nicer vocab size value: 'After ... Reserved memory: 5.8906 GB'", G50304T, "bf16", 8, "sdpa",
     1, "adamw_torch_fused", 1, 1, 5.8906, DROPS, "+ vocab 50,304"),
    ("b32", "10. Increasing the batch size: 'After ... Reserved memory: 22.5078 GB'", G50304T, "bf16", 32, "sdpa", 1,
     "adamw_torch_fused", 1, 1, 22.5078, DROPS, "01_opt_single_gpu.py: + batch 32"),
    ("ddp4-b32", "Multi-GPU speed comparisons: 'After (4 GPUs) ... Reserved memory: 22.7969 GB'", G50304T, "bf16", 32,
     "sdpa", 1, "adamw_torch_fused", 1, 4, 22.7969, DROPS, "02_opt_multi_gpu_ddp.py: DDP over 4 GPUs, batch 32 per GPU, rank 0's reading"))
for rid, label, model, prec, b, att, comp, opt, pin, n, val, unexp, what in rb_rows:
    add(id=f"rasbt-gpt2-124m-{rid}", model=model, precision=prec, batch_per_gpu=b, attention=att, compile=comp,
        optimizer=opt, pin_memory=pin, value=round(val * GIB), note_unexpressed=unexp, logits_held="0",
        source=f"{RB} section '{label}'", note=rb_note + "; " + what,
        **{**rb_common, "num_gpus": n, "strategy": "ddp" if n > 1 else "single"})

# ---------------------------------------------------------------- keys added with issue 40
# Two settings the transcriptions name in note_unexpressed became keys: torchtune's
# CEWithChunkedOutputLoss is loss_chunks=8 (its num_output_chunks default,
# torchtune/modules/loss/ce_chunked_output_loss.py) and optimizer_in_bwd=True is optimizer_in_bwd=1.
KEYED = {"loss=CEWithChunkedOutputLoss": ("loss_chunks", "8"), "optimizer_in_bwd=True": ("optimizer_in_bwd", "1")}
for r in rows:
    left = []
    for part in filter(None, r.get("note_unexpressed", "").split(";")):
        if part in KEYED:
            r[KEYED[part][0]] = KEYED[part][1]
        else:
            left.append(part)
    r["note_unexpressed"] = ";".join(left)


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
