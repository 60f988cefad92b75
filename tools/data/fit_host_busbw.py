#!/usr/bin/env python3
"""Fit a host's through-host NCCL rate (models/hosts.csv through_host_busbw_bytes_per_s) on the
2-GPU pairs of the runs that name it; report its 4-8 GPU pairs, which the fit never sees.

    python3 tools/data/fit_host_busbw.py [--build DIR] [RUNS.csv] [HOST]
    (defaults: bench/data/calibration_dle.csv, server-epyc; DIR/bench/bench_scaling, else build/'s)

When NCCL moves every gradient byte through host memory (Lambda's v1 harness exports
NCCL_P2P_DISABLE=1, bench/results/lambda_v1_steady_state.md; GeForce cards have no PCIe
peer-to-peer), the rate a training job gets can be set by the host rather than by the GPU's
PCIe link that pcie_host_busbw_frac scales: the raw logs of Lambda's 2-socket EPYC HGX A100 give
about 3.5 GB/s of gradients a step against 8 GB/s in its V100 cloud VMs.  The runs whose machine
is such a host carry `host=HOST` (tools/data/make_dle_runs.py EPYC_THROUGH_HOST names each
machine and its sys_pytorch.txt board).  The rate is fitted by least squares on the scaling
efficiency of their 2-GPU pairs (bench_scaling's pairs: multi-GPU run + same-config single-GPU
run; golden-section search on log rate over 0.3-300 GB/s, each candidate written into a copy of
models/hosts.csv), then the host's 3-8 GPU pairs are predicted with it.  Prints the fitted value
for hosts.csv and the errors by GPU and GPU count, against the link-bound price (rate 0).
Python 3 stdlib only.
"""
import csv
import math
import os
import shutil
import sys
import tempfile

from fit_pcie_host import bench_of, golden_min, run_bench, stats

COLUMN = "through_host_busbw_bytes_per_s"


def pairs_at(rate_bytes_per_s, host, runs, tmp, bench):
    """bench_scaling's pairs with HOST's through-host rate set to rate in a copy of models/."""
    models = os.path.join(tmp, "models")
    shutil.rmtree(models, ignore_errors=True)
    shutil.copytree("models", models)
    path = os.path.join(models, "hosts.csv")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    if COLUMN not in fields or not any(r["id"] == host for r in rows):
        sys.exit(f"fit_host_busbw: models/hosts.csv has no column {COLUMN} or no host '{host}'")
    for r in rows:
        if r["id"] == host:
            r[COLUMN] = f"{rate_bytes_per_s:.6g}"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    out = os.path.join(tmp, "pairs.csv")
    run_bench(bench, runs, out, dict(os.environ, EPOCHCAST_MODELS=models))
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def main():
    args = sys.argv[1:]
    bench = bench_of(args, "fit_host_busbw")
    runs = args[0] if args else "bench/data/calibration_dle.csv"
    host = args[1] if len(args) > 1 else "server-epyc"
    with open(runs, newline="") as f:
        on_host = {r["id"] for r in csv.DictReader(f) if r.get("host") == host}
    if not on_host:
        sys.exit(f"fit_host_busbw: no row of {runs} has host={host}")
    mine = lambda p: p["id"] in on_host
    with tempfile.TemporaryDirectory() as tmp:
        def loss(log_gbyte):
            d = [float(p["diff_pp"]) for p in pairs_at(math.exp(log_gbyte) * 1e9, host, runs, tmp, bench)
                 if mine(p) and p["num_gpus"] == "2"]
            return sum(x * x for x in d) / len(d)

        rate = round(math.exp(golden_min(loss, math.log(0.3), math.log(300), 0.01)), 2)
        fitted = [p for p in pairs_at(rate * 1e9, host, runs, tmp, bench) if mine(p)]
        before = [p for p in pairs_at(0, host, runs, tmp, bench) if mine(p)]
    print(f"runs: {runs}; host {host}: {len(on_host)} rows")
    print(f"fitted {COLUMN} = {rate:.3g}e9 ({rate} GB/s; least squares on the 2-GPU pairs)")
    for gpu in sorted({p["gpu"] for p in fitted}):
        for n in ("2", "4", "8"):
            sel = lambda p: p["gpu"] == gpu and p["num_gpus"] == n
            if any(sel(p) for p in fitted):
                role = "fit set" if n == "2" else "held out"
                print(f"  {gpu}, {n} GPUs ({role}): {stats([p for p in fitted if sel(p)])}"
                      f"   [link-bound: {stats([p for p in before if sel(p)])}]")
    held = lambda p: p["num_gpus"] != "2"
    print(f"all held-out pairs: {stats([p for p in fitted if held(p)])}"
          f"   [link-bound: {stats([p for p in before if held(p)])}]")


if __name__ == "__main__":
    main()
