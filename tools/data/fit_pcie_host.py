#!/usr/bin/env python3
"""Fit constants.csv pcie_host_busbw_frac on 2-GPU DDP runs, report it on the runs held out.

    python3 tools/data/fit_pcie_host.py [--build DIR] [RUNS.csv]
        (defaults: build, bench/data/calibration_dle.csv)

pcie_host_busbw_frac is the NCCL ring bus bandwidth of GPUs without peer-to-peer (GeForce:
every byte goes through host memory), as a fraction of the GPU's pinned host-to-device
bandwidth.  nccl-tests on an idle Gen5 H100 box gives 0.71 (hardware README 2.6); what a
training job sees on the Gen3/Gen4 GeForce boxes of the calibration runs is a physical
quantity of its own, so it is fitted here.

Fit set: the 2-GPU DDP pairs (multi-GPU run + same-config single-GPU run, paired by
build/bench/bench_scaling) on GPUs whose default topology in models/gpus.csv is pcie-host.
Least squares on scaling efficiency, golden-section search over [0.05, 1].
Held out: the 3-8 GPU pairs of the same GPUs, never seen by the fit; and leave-one-GPU-out:
each GPU's pairs predicted with the value fitted on the other GPUs' 2-GPU pairs.
Python 3 stdlib only; needs DIR/bench/bench_scaling built from this tree (a stale one refuses
today's models/ folder, and the script says so).
"""
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

BENCH = "build/bench/bench_scaling"  # without --build DIR: DIR/bench/bench_scaling
KEY = "pcie_host_busbw_frac"


def pcie_host_gpus():
    with open("models/gpus.csv", newline="") as f:
        return {r["id"] for r in csv.DictReader(f) if r["default_topology"] == "pcie-host"}


def pairs_at(frac, runs, tmp, bench):
    """bench_scaling's pairs with KEY set to frac in a copy of models/."""
    models = os.path.join(tmp, "models")
    shutil.rmtree(models, ignore_errors=True)
    shutil.copytree("models", models)
    path = os.path.join(models, "constants.csv")
    with open(path) as f:
        text = f.read()
    text, n = re.subn(rf"^{KEY},[^,]*,", f"{KEY},{frac:.6g},", text, flags=re.M)
    if n != 1:
        sys.exit(f"fit_pcie_host: {KEY} not found once in models/constants.csv")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, "pairs.csv")
    env = dict(os.environ, EPOCHCAST_MODELS=models)
    run_bench(bench, runs, out, env)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def bench_of(args, prog):
    """DIR/bench/bench_scaling of a `--build DIR` in args (taken out of it), else build/'s."""
    if "--build" not in args:
        return BENCH
    i = args.index("--build")
    if i + 1 >= len(args):
        sys.exit(f"{prog}: --build needs a DIR (the CMake build folder)")
    bench = os.path.join(args[i + 1], "bench", "bench_scaling")
    del args[i:i + 2]
    return bench


def run_bench(bench, runs, out, env):
    """bench_scaling RUNS OUT under env, exiting with its message when it is missing or fails."""
    if not os.access(bench, os.X_OK):
        sys.exit(f"{bench} is missing (build the project, or pass --build DIR)")
    done = subprocess.run([bench, runs, out], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{bench} failed (exit {done.returncode}; a build older than models/?): {done.stderr.strip()}")


def stats(pairs):
    d = [float(p["diff_pp"]) for p in pairs]
    if not d:
        return "no pairs"
    return f"{len(d)} pairs, mean abs {sum(map(abs, d)) / len(d):.1f} pp, bias {sum(d) / len(d):+.1f} pp"


def main():
    args = sys.argv[1:]
    bench = bench_of(args, "fit_pcie_host")
    runs = args[0] if args else "bench/data/calibration_dle.csv"
    gpus = pcie_host_gpus()
    fit = lambda p: p["gpu"] in gpus and p["num_gpus"] == "2"
    held = lambda p: p["gpu"] in gpus and p["num_gpus"] != "2"
    with tempfile.TemporaryDirectory() as tmp:
        best = golden_fit(fit, runs, tmp, bench)
        print(f"runs: {runs}; pcie-host GPUs: {', '.join(sorted(gpus))}")
        print(f"fitted {KEY} = {best} (least squares on the 2-GPU pairs)")
        for frac in (0.71, best):
            pairs = pairs_at(frac, runs, tmp, bench)
            print(f"  {KEY}={frac}: fit set {stats([p for p in pairs if fit(p)])}; "
                  f"held out (3-8 GPUs) {stats([p for p in pairs if held(p)])}")
        print("leave one GPU out (fit on the other GPUs' 2-GPU pairs, predict this GPU's pairs):")
        for gpu in sorted(gpus):
            if not any(p["gpu"] == gpu for p in pairs):
                continue
            frac = golden_fit(lambda p: fit(p) and p["gpu"] != gpu, runs, tmp, bench)
            mine = [p for p in pairs_at(frac, runs, tmp, bench) if p["gpu"] == gpu]
            print(f"  {gpu}: fitted {frac}; 2 GPUs {stats([p for p in mine if p['num_gpus'] == '2'])}; "
                  f"3-8 GPUs {stats([p for p in mine if p['num_gpus'] != '2'])}")


def golden_fit(select, runs, tmp, bench):
    """The value of KEY in [0.05, 1] that minimises the mean squared diff of the selected pairs."""
    def loss(frac):
        d = [float(p["diff_pp"]) for p in pairs_at(frac, runs, tmp, bench) if select(p)]
        return sum(x * x for x in d) / len(d)

    return round(golden_min(loss, 0.05, 1.0, 0.005), 3)


def golden_min(loss, lo, hi, tol):
    """Golden-section search for the minimum of a unimodal loss on [lo, hi], to width tol."""
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    la, lb = loss(a), loss(b)
    while hi - lo > tol:
        if la < lb:
            hi, b, lb = b, a, la
            a = hi - g * (hi - lo)
            la = loss(a)
        else:
            lo, a, la = a, b, lb
            b = lo + g * (hi - lo)
            lb = loss(b)
    return (lo + hi) / 2


if __name__ == "__main__":
    main()
