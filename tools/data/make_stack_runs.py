#!/usr/bin/env python3
"""Build bench/data/stack_runs.csv: the public measurements of the ordinary PyTorch / Hugging Face
stack (bench/data/stack/measurements.csv, one row per published number, as transcribed) written
as run records in epochcast's config vocabulary, each with a fit / holdout / excluded split.
Python 3 stdlib only.

    python3 tools/data/make_stack_runs.py           # write bench/data/stack_runs.csv
    python3 tools/data/make_stack_runs.py --check   # exit 1 if the committed file differs
    python3 tools/data/make_stack_runs.py --summary # counts by split, source, GPU and metric

The output uses the config vocabulary of issue 19 (memory_format, trainer, max_grad_norm,
num_workers, pin_memory, padding, epochs, eval_samples, compile=reduce-overhead|max-autotune,
the optimizer names adamw_hf|adamw_torch|adafactor|adamw_8bit|sgd_momentum|none, precision
fp16/bf16 for a model held in half, data=on_gpu, metric peak_bytes with a memory_reading
column, oom, train_time_s and first_step_s); bench/data/stack/README.md says what each one
means and where it was read.  Columns named note_* are for people (ec_runs_load ignores
them); split is kept on each run.  Rows that are not a training step (a CUDA context or the
weights read alone) have no batch_per_gpu; bench_stack checks them against the context and
weight terms.

Conversion rules (every one is a renaming or an exact unit change; no number is estimated):
  * model: HF ids and torchvision / timm names map to the presets where the architecture is
    the preset's (models/networks.csv: bert-base, bert-large, distilbert-base, gpt2,
    gpt2-large, llama-3.2-1b, llama-3.1-8b, resnet18..152, vit-b16, vit-l16, and the presets
    added for these runs: pythia-410m, opt-350m, vit-s16, bert-base-multilingual-cased,
    deberta-v3-base, bloomz-7b1); the others (timm convnext_tiny, efficientnet_b0, mt0-xxl,
    LayoutLMv3, T0_3B) keep their HF id: no preset, not predicted.
  * precision: fp32 under set_float32_matmul_precision('high'|'medium') is tf32 (the matmuls
    run on TF32 tensor cores), which is what precision=tf32 means.
  * gpu: the source's GPU name maps to a models/gpus.csv id; GPUs without a profile get a
    planned id (gpu_known=0).  Where the source gives the memory size but not the form
    factor (A100-80GB, V100 16GB) the SXM id is written and gpu_note says so.
  * metric/value: steps_per_s x batch -> samples_per_s; memory values -> bytes (MiB x 2^20,
    MB x 1e6, GB x 1e9, GiB x 2^30) as metric peak_bytes with memory_reading = nvml |
    reserved | allocated; oom stays 0/1; times stay as published (ms, s).
  * notes' key=value tokens (epochs, dataset_samples, data, num_workers, ...) become columns.

Split (by source, never by how well a row is predicted; see bench/data/stack/README.md):
  fit      sources that time one fixed synthetic step with a published loop, each isolating
           one mechanism: SDPA vs eager attention (RTX 3080 Ti, L40S, RTX 2060), NHWC vs NCHW
           convolutions (timm on RTX 3090), torch.compile modes (B200).
  holdout  end-to-end runs as users run them (HF Trainer epochs with NVML memory on V100,
           run_glue on Titan RTX / V100, optimum-benchmark Trainer memory on A10G, OOM reports
           on T4 / P100 / A100, CUDA-context readings on A100) and the one A100 SDPA table.  No GPU of a holdout source is in
           the fit set, so the holdout error is also an unseen-GPU error.
  excluded rows that cannot be a run record: GPU not named, or precision / loop / memory
           reading not stated, or cells the source itself shows as copied.
"""
import csv
import os
import re
import sys

FIT = {"hf_sdpa_rtx3080ti", "hf_sdpa_opt_l40s", "hf_sdpa_distilbert_rtx2060", "timm_rtx3090_train",
       "stas00_ml_engineering"}
HOLDOUT = {"hf_perf_train_gpu_one_v100", "hf_sdpa_bert_a100", "stas00_ml_engineering_context", "hf_glue_readme_titanrtx", "optimum_benchmark_a10g",
           "github_issues_oom", "peft_readme_a100"}
EXCLUDED = {"rasbt_pytorch_memory_optim": "GPU not named in the repository",
            "rasbt_cvpr2023": "GPU not named in the repository",
            "pytorch_channels_last_tutorial": "GPU not named (text says Volta)",
            "hf_sdpa_layoutlmv3_a100": "precision (bf16 how), loop, optimizer and memory reading not stated"}

MODELS = {
    "google-bert/bert-base-uncased": "bert-base", "google-bert/bert-base-cased": "bert-base",
    "google-bert/bert-large-uncased": "bert-large", "distilbert/distilbert-base-uncased": "distilbert-base",
    "openai-community/gpt2": "gpt2", "torchvision/resnet50": "resnet50", "timm/resnet50": "resnet50",
    "timm/resnet18": "resnet18", "timm/resnet34": "resnet34", "timm/resnet101": "resnet101", "timm/resnet152": "resnet152",
    "timm/vit_base_patch16_224": "vit-b16", "torchvision/vit_b_16": "vit-b16",
    "timm/vit_large_patch16_224": "vit-l16", "torchvision/vit_l_16": "vit-l16",
    "openai-community/gpt2-large": "gpt2-large", "NousResearch/Llama-3.2-1B": "llama-3.2-1b",
    "meta-llama/Llama-3.1-8B": "llama-3.1-8b", "EleutherAI/pythia-410m-deduped": "pythia-410m",
    "facebook/opt-350m": "opt-350m", "timm/vit_small_patch16_224": "vit-s16",
    "google-bert/bert-base-multilingual-cased": "bert-base-multilingual-cased",
    "microsoft/deberta-v3-base": "deberta-v3-base",
    "bigscience/bloomz-7b1": "bloomz-7b1", "none": "",  # bigscience/mt0-xxl: no exact published count, no preset
}
# source GPU text (prefix match) -> (gpu id, note)
GPUS = [
    ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb", ""),
    ("Tesla V100 16GB (form factor not stated)", "v100-sxm2-16gb", "V100 16GB form factor not stated; SXM2 written"),
    ("A100-80GB (form factor not stated)", "a100-sxm4-80gb", "A100 80GB form factor not stated; SXM4 written"),
    ("A100 80GB (form factor not stated", "a100-sxm4-80gb", "A100 80GB form factor not stated; SXM4 written"),
    ("GeForce RTX 3090", "rtx3090", ""),
    ("NVIDIA A10G", "a10g", ""),
    ("L40S", "l40s", ""),
    ("Tesla T4", "t4", ""),
    ("16 GB Colab GPU reporting 15.90 GiB", "p100-pcie-16gb", "GPU not named; 15.90 GiB total capacity is what a P100-PCIE-16GB reports"),
    ("RTX 3080 Ti 16GB", "rtx3080ti-laptop-16gb", "stated 'rtx3080ti-16GB'; only the Laptop 3080 Ti has 16 GB"),
    ("GeForce RTX 2060 8GB", "rtx2060-super", "stated 'RTX 2060 8GB': the 8 GB Turing 2060 is the RTX 2060 SUPER (the RTX 2060 has 6 or 12 GB)"),
    ("Titan RTX", "titan-rtx", ""),
    ("NVIDIA B200", "b200", ""),
]
PRECISION = {"fp32": "fp32", "tf32": "tf32", "amp_fp16": "amp_fp16", "amp_bf16": "amp_bf16", "fp16": "fp16", "bf16": "bf16",
             "fp16_apex_o2": "fp16", "fp32_matmul_medium": "fp32", "unstated": "", "bf16_unstated": ""}
MEM_UNIT = {"MiB": 2 ** 20, "MB(1e6 B)": 1e6, "GB(1e9 B)": 1e9, "GiB": 2 ** 30,
            "GB(unstated)": 1e9}  # excluded rows only (reading not stated either); 1e9 taken
READING = {"nvml": "nvml", "nvml_global": "nvml", "mem_get_info": "nvml", "reserved": "reserved", "allocated": "allocated"}
DATA = {"on_gpu": "on_gpu", "on_cpu_dataset": "real", "real": "real", "pretokenized": "real"}
TRAINER = {"hf": "hf", "plain": "plain", "lightning_fabric": "plain", "accelerate_loop": "plain", "none": "", "unstated": ""}
TASKS = {"classify": "classify", "clm": "lm", "mlm": "lm", "seq2seq": "lm", "token_classify": "token_classify",
         "imagenet_synthetic": "imagenet", "imagenet_folder": "imagenet", "image_classify_cifar10_224": "imagenet",
         "weights_only": "", "context_only": "", "unstated_head": "", "classify_xnli": "classify"}

FIELDS = ["id", "model", "task", "gpu", "num_gpus", "strategy", "precision", "torch_version", "batch_per_gpu",
          "seq_len", "image_size", "grad_accum", "optimizer", "checkpointing", "compile", "attention", "memory_format",
          "trainer", "max_grad_norm", "data", "num_workers", "pin_memory", "padding", "dataset_samples", "epochs",
          "eval_samples", "metric", "memory_reading", "value", "source", "split", "note_split", "note_gpu_known",
          "note_gpu", "note_reading_of", "note_task", "loss"]

# Sources whose loop backpropagates logits.sum() rather than the head's loss (key loss=sum).
SUM_LOSS = {"hf_sdpa_bert_a100", "hf_sdpa_rtx3080ti", "hf_sdpa_opt_l40s", "hf_sdpa_distilbert_rtx2060",
            "hf_sdpa_layoutlmv3_a100"}
# Sources whose 16-bit causal LM takes transformers' own loss (labels=...): ForCausalLMLoss upcasts the
# logits to fp32 before the cross entropy (key loss=cross_entropy_fp32); under autocast the default
# cross_entropy already runs in fp32.
FP32_LOSS = {"stas00_ml_engineering"}

KV_RE = re.compile(r"^([a-z_]+)=([^\s;,]+)$")

# Training-set sizes of public datasets a source names without giving the size (as the GLUE
# rows carry theirs): XNLI trains on MultiNLI's 392,702 English pairs (Conneau et al. 2018,
# XNLI: "the English MultiNLI training set"; run_xnli.py reads the machine-translated copy of it).
PUBLIC_SIZES = {"classify_xnli": "392702"}


def root_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def known_gpus():
    with open(os.path.join(root_dir(), "models", "gpus.csv"), newline="") as f:
        return {r["id"] for r in csv.DictReader(f)}


def notes_kv(notes):
    kv = {}
    for tok in notes.split(";"):
        m = KV_RE.match(tok.strip())
        if m:
            kv[m.group(1)] = m.group(2)
    return kv


def gpu_of(text):
    for prefix, gid, note in GPUS:
        if text.startswith(prefix):
            return gid, note
    return "", "GPU not named"


# PyTorch 1.x releases by date (the PyTorch release notes on GitHub): the release a run of a given
# month used when its source names none is the newest out before that month began.
TORCH_RELEASES = (("2019-10", "1.3"), ("2020-01", "1.4"), ("2020-04", "1.5"), ("2020-07", "1.6"), ("2020-10", "1.7"),
                  ("2021-03", "1.8"), ("2021-06", "1.9"), ("2021-10", "1.10"), ("2022-03", "1.11"), ("2022-06", "1.12"))


def torch_version(m):
    """The PyTorch release the source states ("PyTorch 1.6", "torch ~1.5"); for a run dated by month
    before PyTorch 1.12 (2022-06-28) the release out before that month (TORCH_RELEASES); 1 (a 1.x
    of unknown release) for a run dated by year alone up to 2021.  The model prices a 1.x before
    1.12 with the bias pass of models/constants.csv linear_bias_epilogue_from_version, one before
    1.10 with clip_grad_norm_'s host sync (clip_sync_until_version) and one before 1.6 with a sync
    per parameter's norm (clip_norm_stacked_from_version), so a later run stays unnamed ('' =
    current)."""
    v = m["framework_versions"]
    hit = re.search(r"(?:PyTorch|torch) ~?(\d+\.\d+)", v)
    if hit:
        return hit.group(1)
    months = re.findall(r"\b(20\d\d-[01]\d)\b", v)
    if months:
        month = max(months)
        out = [rel for start, rel in TORCH_RELEASES if start < month]
        return out[-1] if out and month < "2022-07" else ""
    years = [int(y) for y in re.findall(r"\b(20\d\d)\b", v)]
    return "1" if years and max(years) <= 2021 else ""


def matmul_precision(m):
    """torch.set_float32_matmul_precision as the source's script sets it ('' = torch default)."""
    n = m["notes"]
    for level in ("medium", "high"):
        if "matmul precision '%s'" % level in n or "set_float32_matmul_precision('%s')" % level in n:
            return level
    return ""


def convert(m, gpus):
    kv = notes_kv(m["notes"])
    gid, gnote = gpu_of(m["gpu"])
    image = m["task"].startswith("image") or m["model"].startswith(("timm/", "torchvision/"))
    metric, value, reading = m["metric"], m["value"], ""
    if metric == "steps_per_s":
        metric, value = "samples_per_s", "%.6g" % (float(value) * int(m["batch_per_gpu"]))
    elif metric.startswith("peak_bytes"):
        reading = READING.get(kv.get("mem_reading", ""), "")
        scale = MEM_UNIT.get(m["unit"])
        value = "%d" % round(float(value) * scale) if scale else ""
        metric = "peak_bytes"
    elif metric == "oom":
        value = "1" if m["value"] == "1" else "0"
    src = m["source"]
    split, reason = ("fit", "") if src in FIT else ("holdout", "") if src in HOLDOUT else ("excluded", EXCLUDED.get(src, "source not classified"))
    if split != "excluded":
        why = []
        if not gid:
            why.append("GPU not named")
        if metric == "peak_bytes" and (not reading or not value):
            why.append("memory reading or unit not stated")
        if ("CAUTION" in m["notes"] and m["attention"] == "sdpa" and m["seq_len_or_image"] == "2048"
                and m["batch_per_gpu"] in ("4", "8")):
            why.append("cells repeat the seq 1024 row (source shows them copied)")
        if m["precision"] in ("unstated", "bf16_unstated") and metric != "oom":
            why.append("precision not stated")
        if metric in ("peak_bytes",) and m["task"] in ("context_only", "weights_only"):
            pass  # still a valid memory reading (CUDA context / weights only)
        if why:
            split, reason = "excluded", "; ".join(why)
    ng = int(m["num_gpus"] or 1)
    comp = m["compile"]
    precision = PRECISION[m["precision"]]
    if precision == "fp32" and matmul_precision(m) in ("high", "medium"):
        precision = "tf32"
    no_step = m["task"] in ("context_only", "weights_only")
    task = TASKS.get(m["task"], "classify" if m["task"].startswith("classify_glue") else m["task"])
    note_task = ""
    if src == "hf_sdpa_bert_a100" and m["task"] == "unstated_head":
        task = "lm"
        note_task = ("head not stated; the template's logits.sum() on AutoModelForCausalLM / AutoModelForMaskedLM "
                     "gives BERT a vocabulary head over every token")
    return {
        "id": m["id"],
        "model": MODELS.get(m["model"], m["model"]),
        "task": task,
        "gpu": gid,
        "num_gpus": ng,
        "strategy": "ddp" if ng > 1 else "single",
        "precision": precision,
        "torch_version": torch_version(m),
        "batch_per_gpu": "" if no_step else m["batch_per_gpu"],
        "seq_len": "" if image else m["seq_len_or_image"],
        "image_size": m["seq_len_or_image"] if image else "",
        "grad_accum": m["grad_accum"],
        "optimizer": "" if m["optimizer"] == "unstated" else m["optimizer"],
        "checkpointing": m["checkpointing"],
        "compile": comp,
        "attention": m["attention"] if m["attention"] in ("eager", "sdpa", "flash") else "",
        "memory_format": m["memory_format"] if m["memory_format"] in ("contiguous", "channels_last") else "",
        "trainer": TRAINER.get(m["trainer"], m["trainer"]),
        "max_grad_norm": kv.get("max_grad_norm", "0" if m["trainer"] == "plain" else ""),
        "data": DATA.get(kv.get("data", ""), ""),
        "num_workers": kv.get("num_workers", ""),
        "pin_memory": kv.get("pin_memory", ""),
        "padding": kv.get("padding", ""),
        "dataset_samples": kv.get("dataset_samples", PUBLIC_SIZES.get(m["task"], "")),
        "epochs": kv.get("epochs", ""),
        "eval_samples": kv.get("eval_samples", ""),
        "metric": metric,
        "memory_reading": reading,
        "value": value,
        "source": "%s: %s" % (src, m["source_location"]),
        "split": split,
        "note_split": reason,
        "note_gpu_known": "1" if gid in gpus else "0",
        "note_gpu": gnote,
        "note_reading_of": m["task"] if no_step else "",
        "note_task": note_task,
        # the SDPA tables' template backpropagates outputs.logits.sum() (bench/data/stack/README.md)
        "loss": "sum" if src in SUM_LOSS else "cross_entropy_fp32" if src in FP32_LOSS else "",
    }


def build():
    src = os.path.join(root_dir(), "bench", "data", "stack", "measurements.csv")
    gpus = known_gpus()
    with open(src, newline="") as f:
        return [convert(m, gpus) for m in csv.DictReader(f)]


def write(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def summary(rows):
    from collections import Counter
    for key in ("split", "source", "gpu", "metric"):
        c = Counter((r["split"], r[key]) if key != "split" else r["split"] for r in rows)
        print("by %s:" % key)
        for k, n in sorted(c.items(), key=lambda kv: (str(kv[0]))):
            print("  %-60s %4d" % (k if isinstance(k, str) else " / ".join(k), n))


def main(argv):
    dst = os.path.join(root_dir(), "bench", "data", "stack_runs.csv")
    rows = build()
    if argv[1:] == ["--summary"]:
        summary(rows)
        return 0
    if argv[1:] == ["--check"]:
        tmp = dst + ".tmp"
        write(rows, tmp)
        with open(tmp, "rb") as a:
            new = a.read()
        os.remove(tmp)
        try:
            with open(dst, "rb") as b:
                same = new == b.read()
        except FileNotFoundError:
            same = False
        print("%s %s what make_stack_runs.py makes of bench/data/stack/measurements.csv" % (dst, "is" if same else "differs from"))
        return 0 if same else 1
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    tmp = dst + ".tmp"
    write(rows, tmp)
    os.replace(tmp, dst)
    print("wrote %s (%d rows: %d fit, %d holdout, %d excluded)" % (
        dst, len(rows), sum(r["split"] == "fit" for r in rows), sum(r["split"] == "holdout" for r in rows),
        sum(r["split"] == "excluded" for r in rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
