#!/usr/bin/env python3
"""The public DeepLearningExamples measurement rows (../shared/data/measurements: Lambda's v0, v1
and v2 harness files and NVIDIA's README tables) mapped to the run-record schema by the rules
that made ../shared/data/runs/calibration.csv (make_holdout.py's docstring lists them): each row
with its GPU's models/gpus.csv id, its harness, the system its notes name and its result folder.
make_holdout.py merges them into holdout_runs.csv; make_dle_runs.py reads the same members of a
median to replace Lambda's NGC 20.01 figures by their logs' steady rate.  Python 3 stdlib only.
"""
import csv
import os
import re

SYSTEM_NOTE = re.compile(r"system=(\d+x )?([^;]+);")
SYSTEM_PART = re.compile(r"(?<![\w.])([A-Z]?\d{3,4})")


def other_system(notes, gpu):
    """The system name a Lambda row's notes give ("system=4x RTX A4000" -> "RTX A4000") when its
    part number (the first word of the form [letter]digits: A4000, V100, 8000, 2080Ti) is not in
    the row's gpu, else None (also when no part number is named: p3.16xlarge, Titan RTX).  Two
    systems in the two files: "4x/8x RTX A4000" rows labeled GeForce RTX 3090 and "4x V100 32GB"
    rows labeled Quadro RTX 8000."""
    hit = SYSTEM_NOTE.search(notes)
    part = SYSTEM_PART.search(hit.group(2)) if hit else None
    if part is None or part.group(1).lower() in gpu.replace(" ", "").lower():
        return None
    return hit.group(2).strip()


# The columns whose rows one median merges (calibration.csv's rule; make_holdout.merge, and
# make_dle_runs.steady_medians over the same members).
MEMBER_KEY = ("model", "task", "gpu", "num_gpus", "strategy", "precision", "batch_per_gpu", "seq_len", "image_size",
              "grad_accum", "optimizer", "checkpointing", "compile", "data", "metric")
FILES = [("lambda", "lambda_v0_pytorch_dle.csv"), ("lambda", "lambda_v1_pytorch_dle.csv"),
         ("lambda", "lambda_v2_pytorch_dle.csv"), ("nvidia", "nvidia_dle_readmes.csv")]
SKIP_FLAGS = ("SUSPECT", "CAUTION", "LOW QUALITY")


def gpu_lookup(path):
    """nvidia-smi names, aliases and ids of models/gpus.csv -> id (case-insensitive)."""
    table = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for k in [r["id"], r["name"]] + r["aliases"].split(";"):
                table[k.strip().lower()] = r["id"]
    return table


def classify(model, source_path):
    m = model.lower()
    if "squad" in m and "bert-base" in m:
        return "bert-base", "squad"
    if "squad" in m and "bert-large" in m:
        return "bert-large", "squad"
    if "bert-large" in m and "pre-training" in m:
        return "bert-large", "pretrain"
    if m.startswith("resnet-50") and "ssd" not in m:
        return "resnet50", "imagenet"
    return None


def harness_of(fname, framework):
    """Which harness measured a row (the note_harness column; the report splits by it).  Lambda's
    v0 harness on NGC 20.01 (2020) printed its own BERT SQuAD figure, ceil(max_steps / (n x b))
    x n x b over tqdm's epoch rate of a run cut to max_steps examples, the first epoch's warm-up
    in it (scripts/patch/run_squad.sh@95d34b5a lines 112-115); on NGC 20.10 and later it reports
    run_squad.py's training_sequences_per_second over max_steps steps."""
    if fname.startswith("lambda_v0"):
        return "Lambda v0, NGC 20.01 (2020)" if "20.01" in framework else "Lambda v0, NGC 20.10-21.x"
    if fname.startswith("lambda_v1"):
        return "Lambda v1"
    if fname.startswith("lambda_v2"):
        return "Lambda v2"
    return "NVIDIA README"


def map_rows(shared, gpus):
    out, skipped = [], {}
    mdir = os.path.join(shared, "data", "measurements")
    for key, fname in FILES:
        path = os.path.join(mdir, fname)
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if key == "nvidia" and not r["source_path"].startswith("PyTorch/"):
                    continue
                mt = classify(r["model"], r["source_path"])
                if mt is None:
                    continue
                gid = gpus.get(r["gpu"].strip().lower())
                if gid is None:
                    skipped[("gpu not in models/gpus.csv", r["gpu"])] = \
                        skipped.get(("gpu not in models/gpus.csv", r["gpu"]), 0) + 1
                    continue
                notes = r["notes"]
                if not r["per_gpu_batch"]:
                    skipped[("no batch size", gid)] = skipped.get(("no batch size", gid), 0) + 1
                    continue
                flag = next((fl for fl in SKIP_FLAGS if fl in notes), None)
                if flag:
                    skipped[(flag, gid)] = skipped.get((flag, gid), 0) + 1
                    continue
                prec = {"amp_fp16": "amp_fp16", "fp16": "amp_fp16", "tf32": "tf32",
                        "fp32": "fp32"}.get(r["precision"])
                if prec is None:
                    skipped[("precision " + r["precision"], gid)] = \
                        skipped.get(("precision " + r["precision"], gid), 0) + 1
                    continue
                model, task = mt
                sl = r["seq_len_or_image"]
                seq = re.sub(r"^seq", "", sl) if model != "resnet50" else ""
                img = "224" if model == "resnet50" else ""
                ga = re.search(r"grad accumulation steps=(\d+)", notes)
                data = "synthetic" if (model == "resnet50" and "synthetic" in notes.lower()) \
                    else "real"
                n = int(r["num_gpus"])
                out.append({
                    "model": model, "task": task, "gpu": gid, "num_gpus": n,
                    "strategy": "single" if n == 1 else "ddp", "precision": prec,
                    "batch_per_gpu": int(r["per_gpu_batch"]), "seq_len": seq,
                    "image_size": img, "grad_accum": int(ga.group(1)) if ga else 1,
                    "optimizer": {"squad": "adam", "pretrain": "lamb",
                                  "imagenet": "sgd"}[task],
                    "checkpointing": 0, "compile": 0, "data": data,
                    "metric": "samples_per_s", "value": float(r["value"]),
                    "src": "%s:%s" % (key, r["source_path"].split("@")[0]),
                    "harness": harness_of(fname, r["framework"]),
                    "system": system_gpu(notes, r["gpu"], gpus),
                    "resultdir": (re.findall(r"resultdir=pytorch/results/([^;]+)", notes) or [""])[0].strip()})
    return out, skipped


def system_gpu(notes, gpu, gpus):
    """The models/gpus.csv id of the system a Lambda row's notes name when it is not the row's
    gpu (other_system), "?" when that system's GPU has no one profile ("V100
    32GB": SXM2 or PCIe not said), None when they agree."""
    name = other_system(notes, gpu)
    if name is None:
        return None
    return gpus.get(re.sub(r"\s+\d+GB.*$", "", name).lower(), "?")  # "V100 32GB" -> "v100": no one profile
