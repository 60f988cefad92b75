"""compare.py: predicted against measured, after the sections: `epochcast validate` on DIR/runs.csv
with the shipped models/profile.csv (DIR/validate.csv, validate.txt) and with the device's own
profile rows (DIR/device_profile.csv: validate_device_profile.csv, .txt), then one summary,
DIR/predicted_vs_measured.md: every run record (time, the three memory readings, the
out-of-memory run) with both predictions, and the microbenchmarks' headline figures.

  python3 compare.py --out DIR --ec path/to/epochcast [--dry-run]

It runs the same in the dry run (on its synthetic rows): that is the check that the run
records and the profile rows are in the formats epochcast reads. A non-zero exit of either
validate is this script's failure.
"""
import argparse
import csv
import os
import subprocess
import sys

import common


def validate(ec, out, tag, extra):
    runs = os.path.join(out, "runs.csv")
    per_run = os.path.join(out, f"{tag}.csv")
    cmd = [ec, "validate", runs, "-o", per_run] + extra
    with open(os.path.join(out, "commands.txt"), "a") as f:
        f.write("+ " + " ".join(cmd) + f" > {tag}.txt\n")
    res = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out, f"{tag}.txt"), "w") as f:
        f.write(res.stdout + res.stderr)
    if res.returncode != 0:
        sys.exit(f"compare: {' '.join(cmd)} exited {res.returncode}: {res.stderr.strip()[:300]}")
    with open(per_run, newline="") as f:
        return {r["id"]: r for r in csv.DictReader(f)}


def fmt_value(metric, v):
    if v in ("", None):
        return ""
    x = float(v)
    if metric.startswith("peak") or metric.endswith("bytes"):
        return f"{x / 2**30:.2f} GiB"
    return f"{x:.4g}"


def predicted_optimizer_s(ec, gpu, optimizer):
    """epochcast's optimizer phase for BERT-large in fp32 with `optimizer` (breakdown_optimizer_s)."""
    cmd = [ec, "predict", "model=bert-large", "task=squad", f"gpu={gpu}", "precision=fp32", "batch_per_gpu=1",
           f"optimizer={optimizer}", "--csv"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    rows = list(csv.DictReader(res.stdout.splitlines())) if res.returncode == 0 else []
    return float(rows[0]["breakdown_optimizer_s"]) if rows and rows[0].get("breakdown_optimizer_s") else None


def optimizer_lines(out, ec):
    """The optimizer steps of optimizer.py beside epochcast's optimizer phase."""
    rows = common.read_table(out, "optimizer")
    if not rows:
        return []
    lines = ["", "## Optimizer steps over BERT-large's fp32 parameters (optimizer.py)", "",
             "| optimizer | tensors | parameters | measured ms | epochcast optimizer | predicted ms | error % |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: |"]
    for r in rows:
        meas = float(r["time_s"]) if r["time_s"] else None
        pred = predicted_optimizer_s(ec, r["gpu"], r["epochcast_optimizer"]) if r["epochcast_optimizer"] and r["gpu"] else None
        err = f"{100 * (pred / meas - 1):+.1f}" if meas and pred else ""
        lines.append(f"| {r['optimizer']} | {r['tensors']} | {r['params']} | "
                     f"{'' if meas is None else f'{meas * 1e3:.2f}'} | {r['epochcast_optimizer'] or '(none)'} | "
                     f"{'' if pred is None else f'{pred * 1e3:.2f}'} | {err or ('' if r['status'] == 'ok' else r['status'])} |")
    return lines


def summary(out, shipped, device, has_profile, ec):
    lines = ["# Predicted against measured (bench/harness/device_check.sh)", ""]
    env = os.path.join(out, "env.txt")
    if os.path.exists(env):
        lines += ["```", open(env).read().strip(), "```", ""]
    lines += ["Run records (`runs.csv`) predicted by `epochcast validate` with the shipped `models/profile.csv`" +
              (" and with this GPU's microbenchmark profile (`device_profile.csv`)." if has_profile else "."), "",
              "| id | metric | measured | predicted | error % | in p10-p90 |" +
              (" predicted (device profile) | error % |" if has_profile else ""),
              "| --- | --- | ---: | ---: | ---: | :---: |" + (" ---: | ---: |" if has_profile else "")]
    with open(os.path.join(out, "runs.csv"), newline="") as f:
        runs = list(csv.DictReader(f))
    for r in runs:
        v = shipped.get(r["id"], {})
        metric = r["metric"] + (f" ({r['memory_reading']})" if r.get("memory_reading") else "")
        row = (f"| {r['id']} | {metric} | {fmt_value(r['metric'], r['value'])} | "
               f"{fmt_value(r['metric'], v.get('predicted'))} | {v.get('error_pct', '')} | {v.get('in_p10_p90', '')} |")
        if has_profile:
            d = device.get(r["id"], {})
            row += f" {fmt_value(r['metric'], d.get('predicted'))} | {d.get('error_pct', '')} |"
        lines.append(row)
    lines += ["", "## Microbenchmarks", ""]
    gemm = [r for r in common.read_table(out, "gemm") if r["efficiency_frac"]]
    for d in ("fp32", "tf32", "fp16", "bf16", "fp8"):
        rs = [r for r in gemm if r["dtype"] == d]
        if rs:
            b = max(rs, key=lambda r: float(r["efficiency_frac"]))
            lines.append(f"- GEMM {d}: best {float(b['flop_per_s']) / 1e12:.1f} TFLOP/s = {float(b['efficiency_frac']):.2f}"
                         f" of peak at {b['m']}x{b['n']}x{b['k']}")
    for r in common.read_table(out, "gemm_sustained"):
        if r.get("sustained_tensor_frac"):
            lines.append(f"- GEMM bf16 {r['m']}x{r['n']}x{r['k']} back to back for {float(r['back_to_back_s']):.0f} s: "
                         f"{float(r['back_to_back_flop_per_s']) / 1e12:.1f} TFLOP/s against "
                         f"{float(r['short_flop_per_s']) / 1e12:.1f} in short synchronized calls: "
                         f"sustained_tensor_frac {float(r['sustained_tensor_frac']):.3f} (models/gpus.csv's column)")
    att = [r for r in common.read_table(out, "attention") if r["flop_per_s"] and r["seq"] == "2048"
           and r["head_dim"] == "128" and r["causal"] == "1"]
    for r in att:
        lines.append(f"- attention {r['impl']}/{r['backend']} causal, seq 2048, head dim 128, {r['pass']}: "
                     f"{float(r['flop_per_s']) / 1e12:.1f} TFLOP/s")
    for r in common.read_table(out, "bandwidth"):
        if r["bytes_per_s"] and int(r["elements"]) == 1 << 27:
            lines.append(f"- {r['kernel']} at 2^27 elements: {float(r['bytes_per_s']) / 1e9:.0f} GB/s"
                         + (f" = {float(r['efficiency_frac']):.2f} of spec" if r["efficiency_frac"] else ""))
    for r in common.read_table(out, "launch"):
        if r["value_s"]:
            lines.append(f"- {r['metric']}: {float(r['value_s']) * 1e6:.2f} us")
    lines += optimizer_lines(out, ec)
    fails = common.read_table(out, "failures")
    if fails:
        lines += ["", "## Sections that failed", ""] + [f"- {r['section']}: exit {r['exit_code']}: {r['note']}" for r in fails]
    with open(os.path.join(out, "predicted_vs_measured.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--ec", required=True, help="the epochcast binary")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    if not os.path.exists(os.path.join(args.out, "runs.csv")):
        sys.exit("compare: no runs.csv (every training section failed?)")
    shipped = validate(args.ec, args.out, "validate", [])
    profile = os.path.join(args.out, "device_profile.csv")
    has_profile = os.path.exists(profile)
    device = validate(args.ec, args.out, "validate_device_profile", ["--profile", profile]) if has_profile else {}
    summary(args.out, shipped, device, has_profile, args.ec)
    print(f"{len(shipped)} runs validated" + (", also with the device profile" if has_profile else ""))


if __name__ == "__main__":
    main()
