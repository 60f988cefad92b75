#!/usr/bin/env python3
"""Check the memory model against runs that ran: every measured run must be predicted to run.

    python3 tools/data/check_runs_fit.py [RUNS.csv] [N] [EPOCHCAST]
    (default bench/data/calibration_dle.csv, 25, ./build/epochcast)

A measured run fitted in its GPU's memory, so what it needs at its predicted peak (`epochcast
predict`, memory_needed_bytes / capacity_bytes) should be at most 1; it may sit at the edge of
out-of-memory (memory_at_edge: it fits only without the memory headroom, docs/memory.md).  Lambda's v1 harness picks each batch by
lowering it until the run stops running out of memory (lambdal/deeplearning-benchmark
pytorch/README.md, "reduce the batch size ... for tests that failed due to out of memory"),
so its runs also show how close to capacity the model puts a batch that only just fits.
Prints the count predicted not to fit and the N runs closest to capacity.  Python 3 stdlib
only; needs build/epochcast.
"""
import csv
import subprocess
import sys

KEYS = ["model", "task", "gpu", "num_gpus", "strategy", "precision", "batch_per_gpu", "seq_len", "image_size",
        "grad_accum", "optimizer", "checkpointing", "compile", "data", "topology", "attention",
        "gradient_as_bucket_view"]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/data/calibration_dle.csv"
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    exe = sys.argv[3] if len(sys.argv) > 3 else "./build/epochcast"
    with open(path, newline="") as f:
        runs = list(csv.DictReader(f))
    frac = []
    for r in runs:
        words = [f"{k}={r[k]}" for k in KEYS if r.get(k)]
        p = subprocess.run([exe, "predict", "--csv"] + words, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"check_runs_fit: {r['id']}: {p.stderr.strip()}")
        d = next(csv.DictReader(p.stdout.splitlines()))
        frac.append((float(d["memory_needed_bytes"]) / float(d["capacity_bytes"]), r["id"],
                     "fits" if d["fits"] == "1" else "at the edge" if d["memory_at_edge"] == "1" else "does not run"))
    frac.sort()
    print(f"{path}: {len(frac)} runs, {sum(1 for f, _, _ in frac if f > 1)} predicted not to run, "
          f"{sum(1 for _, _, v in frac if v == 'at the edge')} at the edge of out-of-memory")
    print("| needed / capacity | verdict | run |\n|---|---|---|")
    for f, run, v in frac[-top:]:
        print(f"| {f:.3f} | {v} | {run} |")


if __name__ == "__main__":
    main()
