#!/usr/bin/env python3
"""Scaling error of bench_scaling's pairs split by the Lambda harness that measured them.

    python3 tools/data/lambda_harness_split.py [bench/results/scaling.csv]

calibration.csv merges Lambda's v0 harness (NGC 20.x/21.x containers) and v1 harness
(NGC 22.09, PyTorch 1.13) under one source name.  This finds, for each Lambda multi-GPU
pair of bench_scaling's CSV, the measurement file row with the same model, GPU count,
precision, per-GPU batch and value, and prints mean |predicted - measured| scaling
efficiency (pp) and bias by harness, for 8 NVLink GPUs and for 2-8 NVLink GPUs; then, over
every publisher, the 8-GPU SXM pairs split into those whose runs used NVLink and Lambda's v1
runs, whose harness exports NCCL_P2P_DISABLE=1 (tools/data/make_dle_runs.py says where).
Nothing is fitted.  Rows matched to neither file (medians of several) are 'unknown'.
"""
import csv
import os
import sys
from collections import defaultdict

MEAS = "../shared/data/measurements/"
CAL = "../shared/data/runs/calibration.csv"
MODELS = (("BERT-base", "bert-base"), ("BERT-large uncased SQuAD", "bert-large"), ("ResNet-50", "resnet50"))


def harness_of_rows(meas_dir=MEAS):
    """{(model, num_gpus, precision, per-GPU batch, value to 0.1): "v0" | "v1"} from Lambda's
    measurement files; calibration.csv rows are looked up with harness_key()."""
    found = {}
    for ver, name in (("v0", "lambda_v0_pytorch_dle.csv"), ("v1", "lambda_v1_pytorch_dle.csv")):
        with open(os.path.join(meas_dir, name), newline="") as f:
            for r in csv.DictReader(f):
                model = next((m for key, m in MODELS if key in r["model"]), None)
                try:
                    value = round(float(r["value"]), 1)
                except ValueError:
                    continue
                if model:
                    found[(model, r["num_gpus"], r["precision"], r["per_gpu_batch"], value)] = ver
    return found


def harness_key(row):
    """The harness_of_rows() key of a calibration.csv row."""
    return (row["model"], row["num_gpus"], row["precision"], row["batch_per_gpu"], round(float(row["value"]), 1))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/scaling.csv"
    found = harness_of_rows()
    with open(CAL, newline="") as f:
        cal = {r["id"]: r for r in csv.DictReader(f)}
    groups, eight = defaultdict(list), defaultdict(list)
    with open(path, newline="") as f:
        for p in csv.DictReader(f):
            r = cal[p["id"]]
            v1 = "lambda:" in r["source"] and found.get(harness_key(r)) == "v1"
            if "sxm" in r["gpu"] and r["num_gpus"] == "8":
                eight["Lambda v1 (P2P off)" if v1 else "used NVLink"].append(float(p["diff_pp"]))
            if "lambda:" not in r["source"] or "sxm" not in r["gpu"]:
                continue
            ver = found.get(harness_key(r), "unknown")
            diff = float(p["diff_pp"])
            groups[(ver, "8 GPUs")].append(diff) if r["num_gpus"] == "8" else None
            groups[(ver, "2-8 GPUs")].append(diff)
    print("| Lambda harness | NVLink GPUs | pairs | mean abs pp | bias pp |\n|---|---|---|---|---|")
    for (ver, n), d in sorted(groups.items()):
        print(f"| {ver} | {n} | {len(d)} | {sum(map(abs, d)) / len(d):.1f} | {sum(d) / len(d):+.1f} |")
    print("\n| 8-GPU SXM pairs, every publisher | pairs | mean abs pp | bias pp |\n|---|---|---|---|")
    for name, d in sorted(eight.items(), reverse=True):
        print(f"| {name} | {len(d)} | {sum(map(abs, d)) / len(d):.1f} | {sum(d) / len(d):+.1f} |")


if __name__ == "__main__":
    main()
