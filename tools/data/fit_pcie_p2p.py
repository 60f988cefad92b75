#!/usr/bin/env python3
"""Fit hosts.csv's default host_hop_busbw_bytes_per_s on 3-8 GPU peer-to-peer PCIe pairs; report held-out GPUs.

    python3 tools/data/fit_pcie_p2p.py [--build DIR] [FIT_RUNS.csv [HELD_OUT_RUNS.csv]]
        (defaults build, bench/data/calibration_dle.csv, bench/data/holdout_runs.csv)

NCCL takes peer-to-peer only between GPUs behind a common PCIe switch (NVIDIA/nccl
src/graph/paths.cc ncclTopoCheckP2p: p2pLevel PATH_PXB; across the CPU only for at most two
GPUs on AMD hosts), so a ring of more than two PCIe GPUs in a training server, spanning CPU
root ports or sockets, stages hops through host memory.  The rate of such a hop is the host's (NCCL's own topology
model sets it per CPU generation, src/graph/topo.h: SKL_QPI_BW 10, SRP_QPI_BW 22, AMD_BW 16
GB/s); the ring runs at the slower of it and the GPU's link.  Two GPUs keep the link's
pcie_p2p_busbw_frac (their pairs fit it within 1 pp, bench/results/scaling_dle.md).

Fit set: the 3-8 GPU DDP pairs (multi-GPU run + same-config single-GPU run, paired by
bench_scaling) of FIT_RUNS on GPUs with peer-to-peer whose default topology in models/gpus.csv
is pcie-switch (A100 PCIe), every one on the default host.  Least squares on scaling
efficiency, golden-section search over log rate in 1-100 GB/s.  Held out: the same pairs of HELD_OUT_RUNS (GPUs no fit has: RTX A-series, A40,
Quadro RTX; rows run through host memory, such as those of cloud VMs, are not on a switch),
never seen by the fit, with no hop limit (the rate of 2-GPU rings) and at the fitted
value; and the 2-GPU pairs of both files, which the rate must not move.  Python 3 stdlib only; needs
DIR/bench/bench_scaling built from this tree.
"""
import csv
import math
import os
import shutil
import sys
import tempfile

from fit_pcie_host import bench_of, golden_min, run_bench, stats

KEY = "host_hop_busbw_bytes_per_s"
UNLIMITED = 1e12  # hosts.csv's upper bound: the GPU's link then sets every ring


def pairs_at(rate, runs, tmp, bench):
    """bench_scaling's pairs with the default host's KEY set to rate in a copy of models/."""
    models = os.path.join(tmp, "models")
    shutil.rmtree(models, ignore_errors=True)
    shutil.copytree("models", models)
    path = os.path.join(models, "hosts.csv")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    col = rows[0].index(KEY)
    for r in rows[1:]:
        if r[0] == "default":
            r[col] = f"{rate:.4g}"
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    out = os.path.join(tmp, "pairs.csv")
    env = dict(os.environ, EPOCHCAST_MODELS=models)
    run_bench(bench, runs, out, env)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def golden_fit(select, runs, tmp, bench):
    """The default host's KEY in 1-100 GB/s that minimises the mean squared diff of the selected pairs."""
    def loss(log_rate):
        d = [float(p["diff_pp"]) for p in pairs_at(math.exp(log_rate), runs, tmp, bench) if select(p)]
        return sum(x * x for x in d) / len(d)

    return float(f"{math.exp(golden_min(loss, math.log(1e9), math.log(1e11), 0.002)):.3g}")


def p2p_switch_gpus():
    with open("models/gpus.csv", newline="") as f:
        return {r["id"] for r in csv.DictReader(f) if r["default_topology"] == "pcie-switch" and r["p2p"] == "1"}


def topologies(runs):
    """Each run's topology column (empty: the GPU's default)."""
    with open(runs, newline="") as f:
        return {r["id"]: r.get("topology", "") for r in csv.DictReader(f)}


def main():
    args = sys.argv[1:]
    bench = bench_of(args, "fit_pcie_p2p")
    fit_runs = args[0] if args else "bench/data/calibration_dle.csv"
    held_runs = args[1] if len(args) > 1 else "bench/data/holdout_runs.csv"
    gpus = p2p_switch_gpus()
    topo = {**topologies(fit_runs), **topologies(held_runs)}
    on_switch = lambda p: p["gpu"] in gpus and topo.get(p["id"], "") in ("", "pcie-switch")
    ring = lambda p: on_switch(p) and int(p["num_gpus"]) > 2
    pair = lambda p: on_switch(p) and p["num_gpus"] == "2"
    with tempfile.TemporaryDirectory() as tmp:
        best = golden_fit(ring, fit_runs, tmp, bench)
        print(f"fit: {fit_runs}; held out: {held_runs}; peer-to-peer pcie-switch GPUs: {len(gpus)}")
        print(f"fitted {KEY} = {best:.3g} (least squares on the 3-8 GPU pairs of the fit file)")
        for rate in (UNLIMITED, best):
            fit_pairs = pairs_at(rate, fit_runs, tmp, bench)
            held_pairs = pairs_at(rate, held_runs, tmp, bench)
            print(f"  {KEY}={rate:.3g}" + (" (no limit: the GPU's link)" if rate == UNLIMITED else "") + ":")
            print(f"    fit set, 3-8 GPUs: {stats([p for p in fit_pairs if ring(p)])}")
            print(f"    held out, 3+ GPUs: {stats([p for p in held_pairs if ring(p)])}")
            for n in sorted({int(p['num_gpus']) for p in held_pairs if ring(p)}):
                print(f"      {n} GPUs: {stats([p for p in held_pairs if ring(p) and int(p['num_gpus']) == n])}")
            print(f"    2 GPUs (unchanged by it): fit file {stats([p for p in fit_pairs if pair(p)])}; "
                  f"held out {stats([p for p in held_pairs if pair(p)])}")


if __name__ == "__main__":
    main()
