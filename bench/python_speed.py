#!/usr/bin/env python3
"""python_speed.py: the Python binding's speed (issue 43): predict calls per second from Python
and the time of a 10,000-point sweep returned as a DataFrame.  Figures: bench/results/python_speed.md.

    EPOCHCAST_LIB=build/core/libepochcast.so PYTHONPATH=python \\
        taskset -c 0 /usr/bin/python3 bench/python_speed.py [--repeat 5] [--calls 20000]

taskset -c 0 pins the process to one core (the library's sweep threads too, so `sweep` runs
on that core alone).  Each figure is the median of --repeat runs, with the best and worst, both
by the process's CPU time (time.process_time: the work of one core, which other jobs on a shared
machine do not inflate) and by wall-clock time (which they do).
Sections:
  predict/*        epochcast.predict(**keys) in a loop: build the config from keyword arguments
                   (ec_config_set per key), ec_predict, wrap the Result (its fields read lazily);
                   "varying" changes batch_per_gpu and seq_len every call; "issue" is the
                   issue's example (8B on one H100: a does-not-fit warning issued every call)
  ec_predict/raw   ec_predict through cffi on one prepared ec_config: the library plus the cost
                   of one cffi call, the floor of any binding
  sweep/*          epochcast.sweep of 10,000 points (gpu x batch_per_gpu x seq_len x num_workers)
                   to a DataFrame (all 72 result columns), on 1 thread and on the default threads
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import epochcast as ec
from epochcast._lib import ffi, lib

BERT = dict(model="bert-base", task="classify", gpu="a100-sxm4-80gb", precision="amp_bf16", batch_per_gpu=32,
            seq_len=128)
ISSUE = dict(model="llama-3.1-8b", gpu="h100", precision="amp_bf16", batch_per_gpu=1, seq_len=4096)
SWEEP_BASE = {"model": "bert-base", "precision": "amp_bf16"}
SWEEP_AXES = {"gpu": ["t4", "a10", "l4", "a100-sxm4-80gb", "h100"], "batch_per_gpu": list(range(1, 101)),
              "seq_len": [64, 128, 256, 512, 1024], "num_workers": [0, 2, 4, 8]}  # 5 x 100 x 5 x 4 = 10,000


def timed(fn, repeat):
    """(cpu, wall): each the (median, best, worst) seconds of `repeat` runs of fn."""
    cpu, wall = [], []
    for _ in range(repeat):
        c, t = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return [(statistics.median(x), min(x), max(x)) for x in (cpu, wall)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20000)
    a = ap.parse_args()
    n = a.calls
    warnings.simplefilter("default", ec.EpochcastWarning)  # Python's default: shown once, issued every call
    ctx = ec.default_context()
    print("python %s, library %s, cores allowed %d" % (sys.version.split()[0], ec.library_path,
                                                         len(os.sched_getaffinity(0))))
    print("%-22s %-5s %10s %10s %10s" % ("section", "clock", "median", "best", "worst"))

    def rate(name, fn, calls):
        for clock, (med, best, worst) in zip(("cpu", "wall"), timed(fn, a.repeat)):
            print("%-22s %-5s %10.0f %10.0f %10.0f  calls/s (median %.2f us/call)" % (
                name, clock, calls / med, calls / best, calls / worst, med / calls * 1e6))

    predict = ec.predict
    rate("predict/bert", lambda: [predict(**BERT) for _ in range(n)], n)
    rate("predict/issue", lambda: [predict(**ISSUE) for _ in range(n)], n)
    batches, seqs = [1, 2, 4, 8, 16, 32, 64], [128, 256, 512]

    def varying():
        for i in range(n):
            predict(model="bert-base", gpu="a100-sxm4-80gb", precision="amp_bf16", batch_per_gpu=batches[i % 7],
                    seq_len=seqs[i % 3])
    rate("predict/varying", varying, n)
    rate("ctx.predict/bert", lambda: [ctx.predict(**BERT) for _ in range(n)], n)
    h = ctx._h()
    cfg = ctx._config(h, BERT)
    res = ffi.new("ec_result *")
    p = lib.ec_predict

    def raw():
        for _ in range(n):
            p(h, cfg, res)
    rate("ec_predict/raw", raw, n)

    points = 1
    for v in SWEEP_AXES.values():
        points *= len(v)
    for threads in (1, None):
        df = None

        def sw():
            nonlocal df
            df = ec.sweep(SWEEP_BASE, SWEEP_AXES, threads=threads)
        times = timed(sw, a.repeat)
        kind = type(df).__name__
        errors = sum(1 for e in (df["error"] if kind == "DataFrame" else [r["error"] for r in df]) if e)
        for clock, (med, best, worst) in zip(("cpu", "wall"), times):
            print("%-22s %-5s %10.3f %10.3f %10.3f  s for %d points -> %s %s (%d refused)" % (
                "sweep/threads=%s" % (threads or "default"), clock, med, best, worst, points, kind,
                getattr(df, "shape", len(df)), errors))


if __name__ == "__main__":
    main()
