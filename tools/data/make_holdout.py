#!/usr/bin/env python3
"""Build bench/data/holdout_runs.csv: measured public runs on GPUs that are NOT in
../shared/data/runs/calibration.csv, mapped to the run-record schema with the same
rules that produced calibration.csv, then described as their scripts ran them by the rules
that make calibration_dle.csv of calibration.csv (make_dle_runs.py's as_run: eager attention,
apex O2 fp16, the DDP buckets, Python GELU of the v0 harness, ...).  No fit reads this file:
it is the validation set of GPUs outside the calibration (bench/results/holdout_accuracy.md) and
the arch folds predict its rows (bench/arch_fold.sh).  Python 3 stdlib only.

    python3 tools/data/make_holdout.py                 # write bench/data/holdout_runs.csv
    python3 tools/data/make_holdout.py --check-file    # exit 1 if the committed file differs,
                                                       # 77 (skip) without the shared folder
    python3 tools/data/make_holdout.py --check         # apply the rules to the calibration
                                                       # GPUs and compare with calibration.csv
    python3 tools/data/make_holdout.py --shared DIR    # shared folder (default ../shared)

Rules (reverse-engineered from calibration.csv and its source rows):
  * sources: lambda_v0/v1/v2_pytorch_dle.csv (Lambda, NVIDIA DLE scripts) and the PyTorch
    READMEs in nvidia_dle_readmes.csv (source_path starting with "PyTorch/").
  * models: BERT-base / BERT-large SQuAD v1.1 fine-tune -> task squad, seq_len 384, adam;
    BERT-large pre-training (LAMB) -> task pretrain, seq_len 128/512, lamb, grad_accum from
    "grad accumulation steps=N" in notes (else 1); ResNet-50 v1.5 -> resnet50, task imagenet,
    image_size 224, sgd.
  * precision: amp_fp16 and Lambda v0's "fp16" (FP16 with FP32 master weights) -> amp_fp16;
    tf32 and fp32 kept; anything else is skipped.
  * data: ResNet-50 rows whose notes say "synthetic" -> synthetic, else real; BERT -> real.
  * strategy: single for 1 GPU, ddp otherwise; checkpointing 0, compile 0.
  * metric samples_per_s (sequences/s or images/s, total over all GPUs).
  * rows whose notes carry SUSPECT, CAUTION or LOW QUALITY are dropped.
  * rows with the same (model, task, gpu, num_gpus, precision, batch, seq_len, image_size,
    grad_accum, data) are merged into their median; source lists the distinct
    "lambda:<source_path>" / "nvidia:<source_path>" (commit stripped) as
    "median of N: a; b".
  * id: <gpu>-<model>-<task>-<n>x-<precision>-b<batch>-<running index>, rows sorted by
    model, task, gpu, num_gpus, precision, batch, data.
Two more, which calibration.csv was made without (so --check leaves them out):
  * a Lambda row made on a system of another GPU (system_gpu: "4x/8x RTX A4000" rows labeled
    RTX 3090) is that GPU's row; when that GPU has no one profile ("4x V100 32GB" rows labeled
    Quadro RTX 8000) or is a calibration GPU, it is dropped.
  * an NGC 20.10+ v0 SQuAD row whose run ended after its epochs before max_steps is scaled by
    steps run / max_steps (count_steps_run; tools/data/lambda_v0_squad_steps.csv).
  * an NGC 20.01 v0 SQuAD figure is its log's steady rate (make_dle_runs.py, "Steady rates of
    the NGC 20.01 runs"; applied by make_dle_runs.as_run to the merged rows).
  * a multi-GPU row measured in a cloud virtual machine (Lambda's result folders LambdaCloud_*
    and Linode_*, "system=Lambda Cloud" / "Linode Cloud" in the notes; AWS p3.*) on GPUs that
    models/gpus.csv joins by PCIe (default_topology not nvlink) is topology=pcie-host, and such
    rows are not merged with runs made outside a VM.  Inside a VM the NVIDIA driver does not use
    PCIe peer-to-peer unless the hypervisor tells it the host bridge allows it
    (cloud-hypervisor/cloud-hypervisor#6235: "Within a virtual machine, information about the
    host PCIe bridge is lost, so NVIDIA recommends the use of an injected PCI capability to
    signal support for PCIe P2P between GPUs", a 2024 addition; NVIDIA AI Enterprise vGPU
    "Peer-To-Peer CUDA Transfers": "P2P transfers over PCIe are not supported"), so NCCL moves
    the gradients through host memory, as make_dle_runs.py describes Lambda's v1 harness
    (NCCL_P2P_DISABLE=1).  NVLink peers keep their GPU's default (P2P over NVLink works there:
    the same vGPU page).  Calibration.csv has no such row (only NVLink V100s ran in VMs).
"""
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_dle_runs  # noqa: E402
from dle_measurements import MEMBER_KEY, gpu_lookup, map_rows  # noqa: E402

HEADER = ["id", "model", "task", "gpu", "num_gpus", "strategy", "precision", "batch_per_gpu",
          "seq_len", "image_size", "grad_accum", "optimizer", "checkpointing", "compile", "data",
          "metric", "value", "source"]
def root_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def squad_steps(path):
    """tools/data/lambda_v0_squad_steps.csv by (system, model, fp16 / fp32)."""
    with open(path, newline="") as f:
        return {(r["system"], r["model"], r["precision"]): r for r in csv.DictReader(f)}


def count_steps_run(rows, steps):
    """The NGC 20.10+ v0 SQuAD rows whose run ended (after its epochs) before max_steps: their
    figure, run_squad.py's b x max_steps x n / time, counts steps that did not run, so the value
    is scaled by steps run / max_steps (make_dle_runs.squad_steps_run, as STEP_COUNT does for the
    calibration rows) and the source says so.  The config is the one of the row's result folder."""
    for r in rows:
        if r["task"] != "squad" or not r["harness"].endswith("NGC 20.10-21.x"):
            continue
        cfg = steps.get((r["resultdir"], r["model"], "fp16" if r["precision"] == "amp_fp16" else "fp32"))
        if cfg is None or int(cfg["batch_per_gpu"]) != r["batch_per_gpu"]:
            continue
        ran, max_steps = make_dle_runs.squad_steps_run(cfg, r["num_gpus"], r["batch_per_gpu"])
        if ran < max_steps:
            r["value"] = round(r["value"] * ran / max_steps, 1)
            r["src"] += " (x %d/%d; run_squad counts max_steps; the run made %d steps)" % (ran, max_steps, ran)
    return rows


def relabel(rows, skipped, calib_gpus):
    """Rows a system of another GPU measured (system_gpu): moved to that GPU when it has a
    profile and no calibration row, else dropped and counted in skipped."""
    out = []
    for r in rows:
        s = r["system"]
        if s is not None and (s == "?" or s in calib_gpus):
            why = "made on a system of another GPU (%s)" % ("not one profile" if s == "?" else s)
            skipped[(why, r["gpu"])] = skipped.get((why, r["gpu"]), 0) + 1
            continue
        out.append(dict(r, gpu=s) if s is not None else r)
    return out


# Lambda's result folders of runs made in cloud virtual machines (docstring)
VM_RESULTDIRS = ("LambdaCloud_", "Linode_", "p3.")


def pcie_topologies(path):
    """The models/gpus.csv ids whose GPUs a board joins by PCIe (default_topology not nvlink)."""
    with open(path, newline="") as f:
        return {r["id"] for r in csv.DictReader(f) if r["default_topology"] != "nvlink"}


def through_host(r, pcie):
    """Whether a mapped row ran several GPUs in a VM over PCIe: NCCL through host memory (docstring)."""
    return r["num_gpus"] > 1 and r["gpu"] in pcie and r["resultdir"].startswith(VM_RESULTDIRS)


def merge(rows, pcie=frozenset()):
    groups = {}
    for r in rows:
        k = tuple(r[c] for c in MEMBER_KEY) + (through_host(r, pcie),)
        groups.setdefault(k, []).append(r)
    merged = []
    for k, rs in groups.items():
        base = dict(rs[0])
        base["value"] = round(statistics.median(x["value"] for x in rs), 2)
        srcs = []
        for x in rs:
            if x["src"] not in srcs:
                srcs.append(x["src"])
        base["source"] = "median of %d: %s" % (len(rs), "; ".join(srcs))
        base["note_harness"] = " + ".join(sorted({x["harness"] for x in rs}))
        base["topology"] = "pcie-host" if k[-1] else ""
        if k[-1]:
            base["source"] += " (run in a cloud VM, %s: NCCL through host memory)" % ", ".join(
                sorted({x["resultdir"] for x in rs}))
        merged.append(base)
    merged.sort(key=lambda r: (r["model"], r["task"], r["gpu"], r["num_gpus"], r["precision"],
                               r["batch_per_gpu"], r["data"]))
    for i, r in enumerate(merged):
        r["id"] = "%s-%s-%s-%dx-%s-b%d-%d" % (r["gpu"], r["model"], r["task"], r["num_gpus"],
                                              r["precision"], r["batch_per_gpu"], i)
    return merged


def fmt_value(v):
    return repr(float(v))


def main():
    args = sys.argv[1:]
    shared = os.path.join(os.path.dirname(root_dir()), "shared")
    if "--shared" in args:
        shared = args[args.index("--shared") + 1]
    if not os.path.exists(os.path.join(shared, "data", "runs", "calibration.csv")):
        print("make_holdout: no %s/data; nothing to make or check" % shared)
        return 77
    gpus = gpu_lookup(os.path.join(root_dir(), "models", "gpus.csv"))
    with open(os.path.join(shared, "data", "runs", "calibration.csv"), newline="") as f:
        calib = list(csv.DictReader(f))
    calib_gpus = sorted({r["gpu"] for r in calib})
    rows, skipped = map_rows(shared, gpus)

    if "--check" in args:
        mine = merge([r for r in rows if r["gpu"] in calib_gpus])
        cols = HEADER[1:-2]
        ck = {tuple(str(r[c]) for c in cols): r for r in calib}
        mk = {tuple(str(r[c]) for c in cols): r for r in mine}
        both = set(ck) & set(mk)
        same = sum(1 for k in both if abs(float(ck[k]["value"]) - mk[k]["value"]) < 0.011)
        print("calibration rows: %d, rows from these rules: %d" % (len(ck), len(mk)))
        print("same config: %d, same value too: %d" % (len(both), same))
        for k in sorted(set(ck) - set(mk))[:10]:
            print("  only in calibration:", ck[k]["id"])
        for k in sorted(set(mk) - set(ck))[:10]:
            print("  only from rules:   ", mk[k]["id"], mk[k]["source"])
        return

    # not for --check: calibration.csv kept the labels and values (make_dle_runs.py corrects them)
    rows = relabel(rows, skipped, calib_gpus)
    rows = count_steps_run(rows, squad_steps(os.path.join(root_dir(), "tools", "data", "lambda_v0_squad_steps.csv")))
    pcie = pcie_topologies(os.path.join(root_dir(), "models", "gpus.csv"))
    if any(through_host(r, pcie) for r in rows if r["gpu"] in calib_gpus):
        sys.exit("make_holdout: a calibration GPU ran over PCIe in a VM; calibration.csv does not say so")
    hold = merge([r for r in rows if r["gpu"] not in calib_gpus], pcie)
    # the calibration rows' own rules: dict rows of strings, then make_dle_runs.py's as_run
    as_text = [{c: fmt_value(r[c]) if c == "value" else str(r[c]) for c in HEADER} for r in hold]
    for t, r in zip(as_text, hold):
        t["note_harness"] = r["note_harness"]
        t["topology"] = r["topology"]  # make_dle_runs.convert keeps a pcie-host given here
    runs, fields = make_dle_runs.as_run(as_text, HEADER + ["note_harness"], shared)
    path = os.path.join(root_dir(), "bench", "data", "holdout_runs.csv")
    status = make_dle_runs.write_csv(path, fields, runs, "--check-file" in args)
    if "--check-file" not in args:
        for r in runs:
            print("  ", r["id"], r["value"])
    for (why, what), n in sorted(skipped.items()):
        if what not in calib_gpus:
            print("  skipped %4d rows: %s (%s)" % (n, why, what))
    return status


if __name__ == "__main__":
    sys.exit(main())
