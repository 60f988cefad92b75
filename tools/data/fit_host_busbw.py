#!/usr/bin/env python3
"""Fit a host's through-host NCCL rate (models/hosts.csv through_host_busbw_bytes_per_s) on the
2-GPU pairs of the runs that name it; report its 4-8 GPU pairs, which the fit never sees.
With --cross-socket, fit instead the rate of its rings that span both sockets
(cross_socket_busbw_bytes_per_s: more GPUs than the host's socket_gpus) on the pairs of one GPU
(--fit-gpu, default a100-sxm4-80gb) with that many GPUs, and report the other GPUs' such pairs.

    python3 tools/data/fit_host_busbw.py [--build DIR] [--cross-socket [--fit-gpu GPU]] [RUNS.csv] [HOST]
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
models/hosts.csv), then the host's 3-8 GPU pairs are predicted with it.  A ring of more GPUs
than one socket holds also crosses the socket link (NCCL stages it through both sockets' memory;
nccl-tests#74: A40s on a 2-socket EPYC 7302, the rate across sockets set by the NPS mode), which
--cross-socket fits the same way with the through-host rate as shipped.  Prints the fitted value
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
CROSS_COLUMN = "cross_socket_busbw_bytes_per_s"


def pairs_at(rate_bytes_per_s, host, runs, tmp, bench, column=COLUMN, also=None):
    """bench_scaling's pairs with HOST's column (a through-host rate) set to rate in a copy of models/
    (and the columns of `also`, a dict, to theirs)."""
    models = os.path.join(tmp, "models")
    shutil.rmtree(models, ignore_errors=True)
    shutil.copytree("models", models)
    path = os.path.join(models, "hosts.csv")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    cells = dict(also or {}, **{column: rate_bytes_per_s})
    if any(c not in fields for c in cells) or not any(r["id"] == host for r in rows):
        sys.exit(f"fit_host_busbw: models/hosts.csv has no column {' or '.join(cells)} or no host '{host}'")
    for r in rows:
        if r["id"] == host:
            r.update({c: f"{v:.6g}" for c, v in cells.items()})
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    out = os.path.join(tmp, "pairs.csv")
    run_bench(bench, runs, out, dict(os.environ, EPOCHCAST_MODELS=models))
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def fit_rate(loss, hi_gbyte=300):
    """The rate in GB/s, to 0.01, minimising loss(log GB/s) over 0.3-hi_gbyte GB/s."""
    return round(math.exp(golden_min(loss, math.log(0.3), math.log(hi_gbyte), 0.01)), 2)


def host_row(host):
    with open(os.path.join("models", "hosts.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["id"] == host]
    if not rows:
        sys.exit(f"fit_host_busbw: models/hosts.csv has no host '{host}'")
    return rows[0]


def fit_through_host(host, runs, mine, tmp, bench):
    """The through-host rate, fitted on the host's 2-GPU pairs; its 3-8 GPU pairs held out."""
    def loss(log_gbyte):
        d = [float(p["diff_pp"]) for p in pairs_at(math.exp(log_gbyte) * 1e9, host, runs, tmp, bench)
             if mine(p) and p["num_gpus"] == "2"]
        return sum(x * x for x in d) / len(d)

    rate = fit_rate(loss)
    print(f"fitted {COLUMN} = {rate:.3g}e9 ({rate} GB/s; least squares on the 2-GPU pairs)")
    fitted = [p for p in pairs_at(rate * 1e9, host, runs, tmp, bench) if mine(p)]
    before = [p for p in pairs_at(0, host, runs, tmp, bench, also={CROSS_COLUMN: 0}) if mine(p)]
    return fitted, before, lambda p: p["num_gpus"] == "2", lambda p: p["num_gpus"] != "2", "link-bound"


def fit_cross_socket(host, runs, mine, tmp, bench, fit_gpu):
    """The rate across sockets, fitted on fit_gpu's pairs of more GPUs than a socket holds, below the
    host's through-host rate (above it the through-host rate sets the ring, and the loss is flat)."""
    row = host_row(host)
    socket_gpus, through = int(row.get("socket_gpus") or 0), float(row.get(COLUMN) or 0)
    if socket_gpus < 1 or through <= 0:
        sys.exit(f"fit_host_busbw: --cross-socket: models/hosts.csv gives host '{host}' no socket_gpus or no {COLUMN}")
    across = lambda p: mine(p) and int(p["num_gpus"]) > socket_gpus
    in_fit = lambda p: across(p) and p["gpu"] == fit_gpu

    def loss(log_gbyte):
        d = [float(p["diff_pp"]) for p in pairs_at(math.exp(log_gbyte) * 1e9, host, runs, tmp, bench, CROSS_COLUMN)
             if in_fit(p)]
        if not d:
            sys.exit(f"fit_host_busbw: no {fit_gpu} pair of more than {socket_gpus} GPUs on host {host}")
        return sum(x * x for x in d) / len(d)

    rate = fit_rate(loss, through / 1e9)
    print(f"fitted {CROSS_COLUMN} = {rate:.3g}e9 ({rate} GB/s; least squares on {fit_gpu}'s pairs of more than "
          f"{socket_gpus} GPUs, {COLUMN} as shipped)")
    fitted = [p for p in pairs_at(rate * 1e9, host, runs, tmp, bench, CROSS_COLUMN) if mine(p)]
    before = [p for p in pairs_at(0, host, runs, tmp, bench, CROSS_COLUMN) if mine(p)]
    return fitted, before, in_fit, lambda p: across(p) and not in_fit(p), "one socket's rate"


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return
    bench = bench_of(args, "fit_host_busbw")
    cross = "--cross-socket" in args
    if cross:
        args.remove("--cross-socket")
    fit_gpu = "a100-sxm4-80gb"
    if "--fit-gpu" in args:
        i = args.index("--fit-gpu")
        if i + 1 >= len(args):
            sys.exit("fit_host_busbw: --fit-gpu needs a GPU id (models/gpus.csv)")
        fit_gpu = args[i + 1]
        del args[i:i + 2]
    unknown = [a for a in args if a.startswith("-")]
    if unknown or len(args) > 2:
        sys.exit(f"fit_host_busbw: unexpected argument {(unknown or args[2:])[0]!r} (--help for usage)")
    runs = args[0] if args else "bench/data/calibration_dle.csv"
    host = args[1] if len(args) > 1 else "server-epyc"
    try:
        with open(runs, newline="") as f:
            on_host = {r["id"] for r in csv.DictReader(f) if r.get("host") == host}
    except OSError as e:
        sys.exit(f"fit_host_busbw: {runs}: {e.strerror}")
    if not on_host:
        sys.exit(f"fit_host_busbw: no row of {runs} has host={host}")
    mine = lambda p: p["id"] in on_host
    print(f"runs: {runs}; host {host}: {len(on_host)} rows")
    with tempfile.TemporaryDirectory() as tmp:
        if cross:
            fitted, before, in_fit, held, base = fit_cross_socket(host, runs, mine, tmp, bench, fit_gpu)
        else:
            fitted, before, in_fit, held, base = fit_through_host(host, runs, mine, tmp, bench)
    for gpu in sorted({p["gpu"] for p in fitted}):
        for n in sorted({p["num_gpus"] for p in fitted if p["gpu"] == gpu}, key=int):
            sel = lambda p: p["gpu"] == gpu and p["num_gpus"] == n
            group = [p for p in fitted if sel(p)]
            role = "fit set" if any(map(in_fit, group)) else "held out" if any(map(held, group)) else "not priced by it"
            print(f"  {gpu}, {n} GPUs ({role}): {stats(group)}"
                  f"   [{base}: {stats([p for p in before if sel(p)])}]")
    print(f"all held-out pairs: {stats([p for p in fitted if held(p)])}"
          f"   [{base}: {stats([p for p in before if held(p)])}]")


if __name__ == "__main__":
    main()
