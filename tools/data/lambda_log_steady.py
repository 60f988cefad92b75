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
"""
import datetime
import re
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
    """(I, n, b, T, E1, iterations run, tqdm step s) of an NGC 20.01 run, or None."""
    text = text.replace("\r", "\n")
    tail = re.search(r"training throughput: [\d.]+\s+x+\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)", text)
    first = re.search(r"Epoch: +50%\|[^|]*\| 1/2 \[[0-9:]+<[^,]*, *([\d.]+)s/it", text)
    bars = re.findall(r"Iteration: +\d+%\|[^|]*\| (\d+)/(\d+) \[[0-9:]+<[^,]*, *([\d.]+)(it/s|s/it)", text)
    if tail is None or first is None or not bars:
        return None
    inside = [bar for bar in bars if 0 < int(bar[0]) < int(bar[1])]
    step = None
    if inside:
        rate, unit = float(inside[-1][2]), inside[-1][3]
        step = 1 / rate if unit == "it/s" else rate
    i, n, b, t = int(tail.group(1)), int(tail.group(2)), int(tail.group(3)), float(tail.group(4))
    return i, n, b, t, float(first.group(1)), int(bars[-1][1]), step


def main_2001(repo, commit, systems):
    files = git(repo, "ls-tree", "-r", "--name-only", commit).split()
    print("| system | model | precision | GPUs | batch | I | run | E1 s | E2 s | figure | over E2 | tqdm step s "
          "| figure / (n b / step) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for system in systems:
        for path in files:
            m = re.match(LOG % re.escape(system), path)
            got = read_log_2001(git(repo, "show", "%s:%s" % (commit, path))) if m else None
            if got is None:
                continue
            i, n, b, t, e1, ran, step = got
            e2 = 2 * t - e1
            print("| %s | bert-%s | %s | %d | %d | %d | %d | %.2f | %.2f | %.1f | %.1f | %s | %s |"
                  % (system, m.group(1), m.group(2), n, b, i, ran, e1, e2, i * n * b / t, i * n * b / e2,
                     "%.3f" % step if step else "-", "%.2f" % (i * n * b / t / (n * b / step)) if step else "-"))
    return 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "--ngc2001":
        return main_2001(argv[2], argv[3], argv[4:])
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    repo, commit, systems = argv[1], argv[2], argv[3:]
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
    sys.exit(main(sys.argv))
