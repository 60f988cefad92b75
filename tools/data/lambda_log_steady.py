#!/usr/bin/env python3
"""The published figure of Lambda's v0-harness BERT SQuAD runs on NGC 20.10+ against their steady
rate, read from the raw logs of lambdal/deeplearning-benchmark (pytorch/results/<system>/
PyTorch_bert_<size>_squad_<FP16|FP32>/<date>.txt; not in ../shared).  run_squad.py prints
training_sequences_per_second = b x max_steps x n / e2e_train_time, and e2e_train_time starts
at "train_start", before the first step's cuDNN / cuBLAS set-up and allocations; its DLL lines
log every 50th iteration with a timestamp, so the steady rate is b x n over the mean step
between the second logged iteration (51) and the last.  Prints a Markdown table; reads git
only (a bare clone is fine).  Python 3 stdlib only.

With --ngc2001 it reads the harness's 2020 runs (NGC 20.01) instead, which have no DLL lines:
run_squad.sh (scripts/patch/run_squad.sh@e167f02c) prints "training throughput" = I x n x b / T,
I = ceil(max_steps / (n x b)) and T the Epoch bar's final s/it, the mean of the two epochs' times.
The table gives each epoch's time (E1 from the bar at 1/2, E2 = 2T - E1), the iterations the
Iteration bar ran per epoch (the last a partial batch), the figure over epoch 2 alone, and tqdm's
smoothed step at the last display of epoch 2 before its end (2-3 significant figures): where an
epoch is a few iterations, the figure is set by what each epoch adds besides its steps.

    python3 tools/data/lambda_log_steady.py GIT_DIR COMMIT SYSTEM...   # e.g. aeb58dfe 3090 A5000
    python3 tools/data/lambda_log_steady.py --ngc2001 GIT_DIR COMMIT SYSTEM...   # e.g. e167f02c QuadroRTX8000
    python3 tools/data/lambda_log_steady.py --ngc2001 --csv tools/data/lambda_v0_2001_steady.csv GIT_DIR e167f02c SYSTEM...
"""
import argparse
import csv
import datetime
import os
import re
import statistics
import subprocess
import sys

DLL_TIME = "%Y-%m-%d %H:%M:%S.%f"
LOG = r"pytorch/results/%s/PyTorch_bert_(base|large)_squad_(FP16|FP32)/[^/]*\d\.txt$"


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), capture_output=True, text=True, check=True).stdout


def read_log(text):
    """(batch, GPUs, max_steps, e2e s, figure, steady samples/s, first step s) or None."""
    text = text.replace("\r", "\n")
    its = [(datetime.datetime.strptime(t, DLL_TIME), int(i))
           for t, i in re.findall(r"DLL (\S+ \S+) - Training Epoch: \d+ Training Iteration: (\d+) ", text)]
    start = re.search(r"DLL (\S+ \S+) - PARAMETER train_start", text)
    e2e = re.search(r"e2e_train_time : ([\d.]+)\s+training_sequences_per_second : ([\d.]+)", text)
    batch = re.search(r"--train_batch_size=(\d+)", text)
    steps = re.search(r"--max_steps=(\d+)", text)
    gpus = re.search(r"--nproc_per_node=(\d+)", text)
    if len(its) < 3 or e2e is None or batch is None or start is None:
        return None
    (t1, i1), (tn, i_n) = its[1], its[-1]
    step_s = (tn - t1).total_seconds() / (i_n - i1)
    n = int(gpus.group(1)) if gpus else 1
    first_s = (its[0][0] - datetime.datetime.strptime(start.group(1), DLL_TIME)).total_seconds()
    return (int(batch.group(1)), n, steps.group(1) if steps else "?", float(e2e.group(1)), float(e2e.group(2)),
            int(batch.group(1)) * n / step_s, first_s)


def read_log_2001(text):
    """(I, n, b, T, E1, iterations run, tqdm step s, figure) of an NGC 20.01 run, or None.  The June
    2020 logs end with run_squad.sh's I, n, b and T; the March 2020 ones (every rank's bars, no
    such block) give n and b on the command line, T as the last Epoch bar's s/it (what the
    script's `tail -1` took) and I = figure x T / (n x b)."""
    text = text.replace("\r", "\n")
    figure = re.search(r"training throughput: ([\d.]+)", text)
    tail = re.search(r"training throughput: [\d.]+\s+x+\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)", text)
    firsts = re.findall(r"Epoch: +50%\|[^|]*\| 1/2 \[[0-9:]+<[^,]*, *([\d.]+)s/it", text)
    ends = re.findall(r"Epoch: +100%\|[^|]*\| 2/2 \[[0-9:]+<[^,]*, *([\d.]+)s/it", text)
    bars = re.findall(r"Iteration: +\d+%\|[^|]*\| (\d+)/(\d+) \[[0-9:]+<[^,]*, *([\d.]+)(it/s|s/it)", text)
    if figure is None or not firsts or not bars:
        return None
    if tail is not None:
        i, n, b, t = int(tail.group(1)), int(tail.group(2)), int(tail.group(3)), float(tail.group(4))
    else:
        batch = re.search(r"--train_batch_size=(\d+)", text)
        gpus = re.search(r"--nproc_per_node=(\d+)", text)
        if batch is None or not ends:
            return None
        n, b, t = int(gpus.group(1)) if gpus else 1, int(batch.group(1)), float(ends[-1])
        i = round(float(figure.group(1)) * t / (n * b))
    inside = [bar for bar in bars if 0 < int(bar[0]) < int(bar[1])]
    step = None
    if inside:
        rate, unit = float(inside[-1][2]), inside[-1][3]
        step = 1 / rate if unit == "it/s" else rate
    e1 = statistics.median(float(x) for x in firsts)
    return i, n, b, t, e1, int(bars[-1][1]), step, float(figure.group(1))


CSV_FIELDS = ["system", "model", "precision", "num_gpus", "batch_per_gpu", "iterations", "epoch1_s", "epoch2_s",
              "figure", "step_s", "steady", "log"]


def rows_2001(repo, commit, systems):
    """One dict per NGC 20.01 BERT SQuAD log of the systems (CSV_FIELDS)."""
    files = git(repo, "ls-tree", "-r", "--name-only", commit).split()
    for system in systems:
        for path in files:
            m = re.match(LOG % re.escape(system), path)
            got = read_log_2001(git(repo, "show", "%s:%s" % (commit, path))) if m else None
            if got is None:
                continue
            i, n, b, t, e1, ran, step, figure = got
            yield {"system": system, "model": "bert-" + m.group(1), "precision": m.group(2), "num_gpus": n,
                   "batch_per_gpu": b, "iterations": "%d/%d" % (i, ran), "epoch1_s": "%.2f" % e1,
                   "epoch2_s": "%.2f" % (2 * t - e1), "figure": "%.1f" % figure,
                   "step_s": "%.3f" % step if step else "", "steady": "%.1f" % (n * b / step) if step else "",
                   "log": "%s@%s" % (path, commit[:8])}


def main_2001(repo, commit, systems, csv_path=None):
    rows = list(rows_2001(repo, commit, systems))
    if csv_path is not None:
        with open(csv_path + ".tmp", "w", newline="") as f:  # whole or not at all
            w = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        os.replace(csv_path + ".tmp", csv_path)
        print("wrote %s (%d logs)" % (csv_path, len(rows)))
        return 0
    print("| system | model | precision | GPUs | batch | I / run | E1 s | E2 s | figure | tqdm step s | steady "
          "| figure / steady |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        ratio = "%.2f" % (float(r["figure"]) / float(r["steady"])) if r["steady"] else "-"
        print("| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |"
              % (r["system"], r["model"], r["precision"], r["num_gpus"], r["batch_per_gpu"], r["iterations"],
                 r["epoch1_s"], r["epoch2_s"], r["figure"], r["step_s"] or "-", r["steady"] or "-", ratio))
    return 0


def parse_args(argv):
    """(ngc2001, csv path or None, repo, commit, systems), or a usage message on stderr and None."""
    ap = argparse.ArgumentParser(prog="lambda_log_steady.py", description=__doc__.strip().splitlines()[0])
    ap.add_argument("--ngc2001", action="store_true", help="read the 2020 (NGC 20.01) logs' Epoch bars")
    ap.add_argument("--csv", metavar="PATH", help="with --ngc2001: write the logs as CSV (CSV_FIELDS) to PATH")
    ap.add_argument("git_dir", help="a clone of lambdal/deeplearning-benchmark (bare is fine)")
    ap.add_argument("commit")
    ap.add_argument("systems", nargs="+", metavar="SYSTEM", help="result folders under pytorch/results/")
    try:
        a = ap.parse_args(argv[1:])
    except SystemExit:
        return None
    if a.csv is not None and not a.ngc2001:
        print("lambda_log_steady.py: --csv needs --ngc2001", file=sys.stderr)
        return None
    if not os.path.isdir(a.git_dir):
        print("lambda_log_steady.py: %s: not a directory (a clone of lambdal/deeplearning-benchmark)" % a.git_dir,
              file=sys.stderr)
        return None
    return a.ngc2001, a.csv, a.git_dir, a.commit, a.systems


def main(argv):
    args = parse_args(argv)
    if args is None:
        return 2
    ngc2001, csv_path, repo, commit, systems = args
    if ngc2001:
        return main_2001(repo, commit, systems, csv_path)
    files = git(repo, "ls-tree", "-r", "--name-only", commit).split()
    print("| system | model | precision | batch | GPUs | max_steps | e2e s | first step s | figure | steady | figure / steady |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for system in systems:
        for path in files:
            m = re.match(LOG % re.escape(system), path)
            if m is None:
                continue
            got = read_log(git(repo, "show", "%s:%s" % (commit, path)))
            if got is None:
                continue
            b, n, ms, e2e, fig, steady, first = got
            print("| %s | bert-%s | %s | %d | %d | %s | %.1f | %.2f | %.2f | %.2f | %.3f |"
                  % (system, m.group(1), m.group(2), b, n, ms, e2e, first, fig, steady, fig / steady))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except subprocess.CalledProcessError as e:  # a commit or path the clone does not have
        sys.exit("lambda_log_steady.py: git %s: %s" % (" ".join(e.cmd[3:]), (e.stderr or "").strip()))
