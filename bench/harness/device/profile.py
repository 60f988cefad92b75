"""profile.py: the microbenchmarks as fitted-parameter rows (models/profile.csv's format), into
DIR/device_profile.csv, for this GPU's architecture (models/gpus.csv):

  gemm_scale  the geometric mean over tf32, fp16 and bf16 of the best efficiency of the large
              GEMMs of gemm.csv over the gpus.csv row's gemm_eff_<dtype>_frac
  simt_scale  the same for fp32
  mem_scale   the best bandwidth of copy, add and gelu at 2^27 elements (bandwidth.csv) over
              spec bandwidth x memory_eff_frac
  attn_eff    (global) SDPA as PyTorch picks it (auto), forward + backward at sequence 2,048,
              head dim 128, not causal (attention.csv), against the time models/attention.csv's
              flash2 rows for this architecture (else its prior rows) give at the bf16 peak: the
              multiplier on those published efficiencies (1: as published)
  attn_mask_eff (global) SDPA given the causal mask as a tensor (attention.csv impl sdpa_mask)
              over the same backend without one, not causal, forward + backward at sequence
              2,048, head dim 128: the efficiency of the masked kernel, the backends pinned
              (cuDNN first: the kernel of the fit's masked runs, profile.csv's attn_mask_eff
              `kernels` cell, and SDPA's pick on sm90 / sm100 from PyTorch 2.11; then
              memory-efficient); the kernels cell names the one measured, which the scale then
              prices. `bench/probe_band.sh --device-profile DIR/device_profile.csv` takes its
              value as constants.csv's sdpa_mask_eff_frac (the prior) and reruns the folds

A parameter whose measurements are missing has no row. `epochcast predict ... profile=FILE`
reads it (device_check.sh checks that it loads).
"""
import csv
import math
import os

import common


def flash2_fracs(arch):
    """models/attention.csv's non-causal flash2 efficiencies (fwd, bwd) for arch, else its prior."""
    path = os.path.join(os.path.dirname(common.GPUS_CSV), "attention.csv")
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["kernel"] == "flash2" and r["causal"] in ("", "0")]
    for want in (arch, "*"):
        got = {r["pass"]: float(r["eff_frac"]) for r in rows if r["architecture"].lower() == want.lower()}
        if "fwd" in got and "bwd" in got:
            return got["fwd"], got["bwd"]
    return None


def best(rows, pred, key):
    vals = [float(r[key]) for r in rows if r.get("status") in ("ok", "dry-run") and r.get(key) and pred(r)]
    return max(vals) if vals else None


def rows_for(out, gpu):
    row = common.gpu_row(gpu)
    if row is None:
        return [], f"{gpu}: no row in models/gpus.csv, no profile rows"
    arch, rows = row["architecture"], []
    gemm = common.read_table(out, "gemm")
    ratios = []
    for d in ("tf32", "fp16", "bf16"):
        e = best(gemm, lambda r, d=d: r["dtype"] == d and r["shape_class"] == "large", "efficiency_frac")
        table = float(row.get(f"gemm_eff_{d}_frac") or 0)
        if e and table > 0:
            ratios.append(e / table)
    if ratios:
        rows.append(dict(parameter="gemm_scale", architecture=arch,
                         value=math.exp(sum(map(math.log, ratios)) / len(ratios)),
                         meaning=f"device_check on {gpu}: best large tf32/fp16/bf16 GEMM efficiency over gpus.csv's"))
    e = best(gemm, lambda r: r["dtype"] == "fp32" and r["shape_class"] == "large", "efficiency_frac")
    if e and float(row.get("gemm_eff_fp32_frac") or 0) > 0:
        rows.append(dict(parameter="simt_scale", architecture=arch, value=e / float(row["gemm_eff_fp32_frac"]),
                         meaning=f"device_check on {gpu}: best large fp32 GEMM efficiency over gpus.csv's"))
    bw = best(common.read_table(out, "bandwidth"),
              lambda r: r["kernel"] in ("copy", "add", "gelu") and int(r["elements"]) == 1 << 27, "bytes_per_s")
    spec, eff = float(row["memory_bandwidth_bytes_per_s"] or 0), float(row["memory_eff_frac"] or 0)
    if bw and spec > 0 and eff > 0:
        rows.append(dict(parameter="mem_scale", architecture=arch, value=bw / (spec * eff),
                         meaning=f"device_check on {gpu}: best streaming kernel at 256 MiB over spec x memory_eff_frac"))
    att = common.read_table(out, "attention")
    fwd = best(att, lambda r: r["impl"] == "sdpa" and r["backend"] == "auto" and r["seq"] == "2048"
               and r["head_dim"] == "128" and r["causal"] == "0" and r["pass"] == "fwd", "time_s")
    bwd = best(att, lambda r: r["impl"] == "sdpa" and r["backend"] == "auto" and r["seq"] == "2048"
               and r["head_dim"] == "128" and r["causal"] == "0" and r["pass"] == "bwd", "time_s")
    peak, fracs = common.peak_flop_per_s(row, "bf16"), flash2_fracs(arch)
    if fwd and bwd and peak > 0 and fracs:
        cell = [r for r in att if r["impl"] == "sdpa" and r["backend"] == "auto" and r["seq"] == "2048"
                and r["head_dim"] == "128" and r["causal"] == "0" and r["pass"] == "fwd"][0]
        flop = 4.0 * int(cell["batch"]) * int(cell["heads"]) * 2048 ** 2 * 128  # forward; backward 2.5x
        table_s = flop / (peak * fracs[0]) + 2.5 * flop / (peak * fracs[1])
        rows.append(dict(parameter="attn_eff", architecture="", value=table_s / (fwd + bwd),
                         meaning=f"device_check on {gpu}: SDPA (auto) fwd+bwd at 2048 x 128 against "
                                 "models/attention.csv's flash2 rows at the bf16 peak"))
    def cell_s(impl, backend):
        t = [best(att, lambda r: r["impl"] == impl and r["backend"] == backend and r["seq"] == "2048"
                  and r["head_dim"] == "128" and r["causal"] == "0" and r["pass"] == p, "time_s") for p in ("fwd", "bwd")]
        return t[0] + t[1] if t[0] and t[1] else None
    for backend in ("cudnn", "efficient"):  # the pinned pairs: the same kernel with and without the mask
        plain, masked = cell_s("sdpa", backend), cell_s("sdpa_mask", backend)
        if plain and masked:
            rows.append(dict(parameter="attn_mask_eff", architecture="", value=plain / masked,
                             kernels={"efficient": "sdpa_mem_efficient", "cudnn": "cudnn"}[backend],
                             meaning=f"device_check on {gpu}: SDPA ({backend}) fwd+bwd at 2048 x 128 without a "
                                     "mask over the same with HF's boolean causal mask"))
            break
    return rows, f"{len(rows)} profile rows for {arch}"


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    rows, note = rows_for(args.out, common.device_name(args.dry_run))
    if rows:
        common.write_profile(os.path.join(args.out, "device_profile.csv"), rows)
    print(note)


if __name__ == "__main__":
    main()
