#!/usr/bin/env python3
"""Regenerate models/gpus.csv (hardware profiles) from the rows of the gpus_*.py modules.

Every number there is taken from ../shared/data/hardware/{gpus.csv,microbench.csv}
(or, for nvidia-smi memory totals, from public nvidia-smi printouts: key NVSMI);
the measured value and the peak it is divided by are written out so the ratio
can be checked by hand.  Python 3 stdlib only.

    gpus_common.py        units, defaults, eff()/med(), FP8 columns, gpu() and ROWS
    gpus_original.py      rows: T4 ... K80 (the original set)
    gpus_rented.py        rows: GPUs people rent now (issue 21)
    gpus_public_runs.py   rows: GPUs of the public runs and Lambda benchmarks (issue 19)
    make_gpus.py          this file: column order, row order, checks, CSV writing

    python3 tools/data/make_gpus.py            # writes models/gpus.csv
    python3 tools/data/make_gpus.py --check    # only validates, prints a table
"""
import csv
import io
import os
import sys

# The row modules add their GPUs to ROWS when imported (gpu() appends), in this order.
import gpus_original
import gpus_rented
import gpus_public_runs
from gpus_common import ROWS

ROW_MODULES = (gpus_original, gpus_rented, gpus_public_runs)

COLUMNS = ["id", "name", "aliases", "architecture", "compute_capability", "sm_count",
           "peak_fp32_flop_per_s", "peak_tf32_flop_per_s", "peak_fp16_flop_per_s",
           "peak_bf16_flop_per_s", "emulated_bf16_flop_per_s",
           "gemm_eff_fp32_frac", "gemm_eff_tf32_frac", "gemm_eff_fp16_frac", "gemm_eff_bf16_frac",
           "peak_fp8_flop_per_s", "gemm_eff_fp8_frac", "sustained_tensor_frac",
           "memory_bytes", "memory_bandwidth_bytes_per_s", "memory_eff_frac", "l2_bytes",
           "pcie_gen", "pcie_lanes", "h2d_pinned_bytes_per_s", "h2d_pageable_bytes_per_s",
           "nvlink_bytes_per_s", "p2p", "gpus_per_board", "default_topology",
           "kernel_floor_s", "measured", "refuse", "source"]


ORDER = ["t4", "a16", "rtx4090", "a100-pcie-40gb", "a100-sxm4-40gb", "a100-sxm4-80gb",
         "a100-pcie-80gb", "v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb",
         "h100-sxm5-80gb", "h100-pcie-80gb", "h200-sxm-141gb", "h100-sxm5-96gb-500w", "a10", "a10g", "l4", "l40s",
         "rtx3090", "rtx2080ti", "p100-sxm2-16gb", "p100-pcie-16gb", "k80",
         "b200", "h100-nvl", "h200-nvl", "gh200", "rtx6000-ada", "a40", "rtx-a6000", "rtx5090", "mi300x",
         "titan-rtx", "rtx2060-super", "rtx3080ti-laptop-16gb", "gb200", "gb300",
         "quadro-rtx8000", "quadro-rtx6000", "quadro-rtx5000", "rtx-a4000", "rtx-a4500", "rtx-a5000",
         "rtx-a5500", "rtx3070", "rtx3080", "v100-sxm3-32gb", "v100-sxm3-32gb-h"]


def fmt(v):
    """Plain numbers: integers as integers, others in %.6g with a compact exponent (1.95e13)."""
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        s = "%.6g" % v
        if "e" in s:
            mant, exp = s.split("e")
            s = "%se%d" % (mant, int(exp))
        return s
    if isinstance(v, str) and ";" in v:
        parts = []
        for p in v.split(";"):          # de-duplicate keys, keep order
            if p not in parts:
                parts.append(p)
        return ";".join(parts)
    return str(v)


def check(rows):
    ids = [r["id"] for r in rows]
    assert ids == ORDER, ids
    seen = {}
    for r in rows:
        assert set(r) == set(COLUMNS), (r["id"], set(COLUMNS) ^ set(r))
        for key in [r["id"], r["name"]] + r["aliases"].split(";"):
            k = key.strip().lower()
            assert k, r["id"]
            assert k not in seen or seen[k] == r["id"], (key, seen.get(k), r["id"])
            seen[k] = r["id"]
        assert r["default_topology"] in ("nvlink", "pcie-switch", "pcie-host", "a16-board")
        for entry in filter(None, r["refuse"].split("|")):
            prec, _, why = entry.partition(":")
            assert prec.strip() in ("fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp16"), (r["id"], prec)
            assert why.strip(), (r["id"], prec)
        for c in COLUMNS:
            assert fmt(r[c]) != "" or c == "refuse", (r["id"], c)
        for c in ("gemm_eff_fp32_frac", "gemm_eff_tf32_frac", "gemm_eff_fp16_frac",
                  "gemm_eff_bf16_frac", "memory_eff_frac"):
            assert 0.2 < r[c] < 1.2, (r["id"], c, r[c])
        assert (r["peak_fp8_flop_per_s"] > 0) == (r["gemm_eff_fp8_frac"] > 0), r["id"]
        assert r["gemm_eff_fp8_frac"] == 0 or 0.2 < r["gemm_eff_fp8_frac"] < 1.2, r["id"]
        assert r["peak_fp8_flop_per_s"] == 0 or float(r["compute_capability"]) >= 8.9 or r["id"] == "mi300x", r["id"]
        if r["peak_bf16_flop_per_s"] == 0:
            assert r["emulated_bf16_flop_per_s"] > 0, r["id"]
        else:
            assert r["emulated_bf16_flop_per_s"] == 0, r["id"]


def main():
    rows = sorted(ROWS, key=lambda r: ORDER.index(r["id"]))
    check(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([fmt(r[c]) for c in COLUMNS])
    if "--check" in sys.argv:
        sys.stdout.write(buf.getvalue())
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "models", "gpus.csv")
    with open(path, "w", newline="") as f:
        f.write(buf.getvalue())
    print("wrote %s (%d rows)" % (path, len(rows)))


if __name__ == "__main__":
    main()
