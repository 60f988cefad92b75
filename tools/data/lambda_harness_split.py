#!/usr/bin/env python3
"""Scaling error of bench_scaling's pairs split by the Lambda harness that measured them.

    python3 tools/data/lambda_harness_split.py [bench/results/scaling.csv]

calibration.csv merges Lambda's v0 harness (NGC 20.x/21.x containers) and v1 harness
(NGC 22.09, PyTorch 1.13) under one source name.  This finds, for each Lambda multi-GPU
pair of bench_scaling's CSV, the measurement file row with the same model, GPU count,
precision, per-GPU batch and value, and prints mean |predicted - measured| scaling
efficiency (pp) and bias by harness, for 8 NVLink GPUs and for 2-8 NVLink GPUs.
Nothing is fitted.  Rows matched to neither file (medians of several) are 'unknown'.
"""
import csv
import sys
from collections import defaultdict

MEAS = "../shared/data/measurements/"
CAL = "../shared/data/runs/calibration.csv"
MODELS = (("BERT-base", "bert-base"), ("BERT-large uncased SQuAD", "bert-large"), ("ResNet-50", "resnet50"))


def harness_of_rows():
    found = {}
    for ver, name in (("v0", "lambda_v0_pytorch_dle.csv"), ("v1", "lambda_v1_pytorch_dle.csv")):
        with open(MEAS + name, newline="") as f:
            for r in csv.DictReader(f):
                model = next((m for key, m in MODELS if key in r["model"]), None)
                try:
                    value = round(float(r["value"]), 1)
                except ValueError:
                    continue
                if model:
                    found[(model, r["num_gpus"], r["precision"], r["per_gpu_batch"], value)] = ver
    return found


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/scaling.csv"
    found = harness_of_rows()
    with open(CAL, newline="") as f:
        cal = {r["id"]: r for r in csv.DictReader(f)}
    groups = defaultdict(list)
    with open(path, newline="") as f:
        for p in csv.DictReader(f):
            r = cal[p["id"]]
            if "lambda:" not in r["source"] or "sxm" not in r["gpu"]:
                continue
            key = (r["model"], r["num_gpus"], r["precision"], r["batch_per_gpu"], round(float(r["value"]), 1))
            ver = found.get(key, "unknown")
            diff = float(p["diff_pp"])
            groups[(ver, "8 GPUs")].append(diff) if r["num_gpus"] == "8" else None
            groups[(ver, "2-8 GPUs")].append(diff)
    print("| Lambda harness | NVLink GPUs | pairs | mean abs pp | bias pp |\n|---|---|---|---|---|")
    for (ver, n), d in sorted(groups.items()):
        print(f"| {ver} | {n} | {len(d)} | {sum(map(abs, d)) / len(d):.1f} | {sum(d) / len(d):+.1f} |")


if __name__ == "__main__":
    main()
