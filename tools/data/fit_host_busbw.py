#!/usr/bin/env python3
"""Fit one through-host bus bandwidth per Lambda v1 host on its 2-GPU pairs; report 4-8 GPUs.

    python3 tools/data/fit_host_busbw.py [RUNS.csv]     (default bench/data/calibration_dle.csv)

Lambda's v1 harness exports NCCL_P2P_DISABLE=1 (bench/results/lambda_v1_steady_state.md), so
its A100 SXM4 and V100 SXM2 multi-GPU runs moved gradients through host memory, at a rate
the raw logs show to depend on the host (about 3.5 GB/s on the bare-metal 2x EPYC 7H12 HGX
A100, about 8 GB/s in the V100 cloud VMs), not on the GPU's PCIe link that
pcie_host_busbw_frac scales.  The question here: given a host's in-training rate, as a user
would give it with busbw_gbyte_per_s after a 2-GPU run on their machine, does the ring
model carry it from 2 GPUs to 4 and 8?

Per host: busbw_gbyte_per_s fitted by least squares on the scaling efficiency of its 2-GPU
pairs (golden-section search on log busbw over 0.3-300 GB/s), then its 4- and 8-GPU pairs
predicted with that value, never seen by the fit.  Pairs are bench_scaling's (multi-GPU run
+ same-config single-GPU run); the rate goes into a temporary copy of RUNS as a
busbw_gbyte_per_s column on that host's multi-GPU rows.  Python 3 stdlib only; needs
build/bench/bench_scaling.
"""
import csv
import math
import os
import subprocess
import sys
import tempfile

from fit_pcie_host import BENCH, golden_min, stats

# The v1 multi-GPU rows that ran with P2P off, by GPU: one host (machine type) each.
HOSTS = {
    "a100-sxm4-80gb": "8x A100 SXM4 HGX, 2x EPYC 7H12, bare metal",
    "v100-sxm2-16gb": "Lambda Cloud V100 VMs",
}


def on_host(row, gpu):
    return row["gpu"] == gpu and row["topology"] == "pcie-host" and row["num_gpus"] != "1"


def pairs_at(rates, runs, tmp):
    """bench_scaling's pairs with busbw_gbyte_per_s = rates[gpu] on each host's multi-GPU rows."""
    with open(runs, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames + ["busbw_gbyte_per_s"]
        rows = list(reader)
    path = os.path.join(tmp, "runs.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            gpu = r["gpu"]
            r["busbw_gbyte_per_s"] = f"{rates[gpu]:.6g}" if gpu in rates and on_host(r, gpu) else ""
            w.writerow(r)
    out = os.path.join(tmp, "pairs.csv")
    subprocess.run([BENCH, path, out], check=True, stdout=subprocess.DEVNULL)
    topology = {r["id"]: r["topology"] for r in rows}
    with open(out, newline="") as f:
        pairs = list(csv.DictReader(f))
    for p in pairs:
        p["topology"] = topology[p["id"]]
    return pairs


def fit_host(gpu, runs, tmp):
    def loss(log_rate):
        d = [float(p["diff_pp"]) for p in pairs_at({gpu: math.exp(log_rate)}, runs, tmp)
             if on_host(p, gpu) and p["num_gpus"] == "2"]
        return sum(x * x for x in d) / len(d)

    return round(math.exp(golden_min(loss, math.log(0.3), math.log(300), 0.01)), 2)


def main():
    runs = sys.argv[1] if len(sys.argv) > 1 else "bench/data/calibration_dle.csv"
    print(f"runs: {runs}")
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        for gpu in HOSTS:
            rates[gpu] = fit_host(gpu, runs, tmp)
        pairs = pairs_at(rates, runs, tmp)
        default = pairs_at({}, runs, tmp)
    for gpu, host in HOSTS.items():
        mine = [p for p in pairs if on_host(p, gpu)]
        before = [p for p in default if on_host(p, gpu)]
        print(f"{gpu} ({host}): fitted busbw_gbyte_per_s = {rates[gpu]}")
        for label, sel in (("2 GPUs (fit set)", lambda p: p["num_gpus"] == "2"),
                           ("4 GPUs (held out)", lambda p: p["num_gpus"] == "4"),
                           ("8 GPUs (held out)", lambda p: p["num_gpus"] == "8")):
            print(f"  {label}: {stats([p for p in mine if sel(p)])}"
                  f"   [with pcie_host_busbw_frac: {stats([p for p in before if sel(p)])}]")
    sxm8 = lambda p: p["num_gpus"] == "8" and "-sxm" in p["gpu"]
    print("all 8-GPU A100/V100 SXM pairs as their scripts ran them (NVLink, or through host at the "
          f"fitted rates): {stats([p for p in pairs if sxm8(p)])}")


if __name__ == "__main__":
    main()
