#!/usr/bin/env python3
"""gpu_pairs.py: does a prediction transfer from one GPU to another when nothing else changes?

Reads two sets of public runs no fit has seen, with what the shipped fit predicts of them: the LLM
runs (bench/data/llm_runs.csv; bench/results/llm_validation.md, "Every row") and the
DeepLearningExamples runs on GPUs outside the calibration (bench/data/holdout_runs.csv;
bench/results/holdout_accuracy.csv).  It groups the rows of one metric whose configurations are
the same in every column but the hardware ones (HARDWARE: the GPU, its network, GPUs per node,
topology and host) and the kernels a source's script picks for the GPU it finds (PICKED_BY_GPU:
FlashAttention-3 on Hopper and -4 on Blackwell in stas00's benchmark), and compares, for each pair
of GPUs in a group, the measured speed ratio with the predicted one.  A shift that a stack puts on every GPU alike
(its host code, its settings) cancels in the ratio; what is left is how the model moves between
GPUs, the question of issue 39.  Nothing is fitted.  From the repository root:

    /usr/bin/python3 bench/gpu_pairs.py [--check REPORT] > bench/results/gpu_pairs.md

--check REPORT compares what it would write with REPORT and exits 1 when they differ (ctest
gpu_pairs_current).  Several rows of one GPU in a group (MLPerf's submitters of one system) give
their median.  Ratios are B over A, A the older GPU (lower compute capability, then lower peak
bf16 rate, then id, from models/gpus.csv).
"""
import collections
import csv
import io
import os
import signal
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch_stack_table as ast  # noqa: E402  (llm_validation.md's reader)

GPUS = "models/gpus.csv"
HARDWARE = ("gpu", "network", "gpus_per_node", "topology", "host")
PICKED_BY_GPU = ("attention", "cudnn_version")
NOT_CONFIG = ("id", "value", "source")


def llm_predictions(path):
    """{run id: (measured, predicted)} of the LLM report's priced tokens/s rows (arch_stack_table's reader)."""
    return {rid: (meas, pred) for _gpu, _stack, pred, meas, _n, _util, _ins, rid in ast.rows_llm(path)}


def validated_predictions(path):
    """{run id: (measured, predicted)} of an `epochcast validate -o` file's rate rows."""
    out = {}
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        missing = {"id", "metric", "measured", "predicted"} - set(rows.fieldnames or ())
        if missing:
            sys.exit("gpu_pairs.py: %s:1: no column %s (an `epochcast validate -o` file)" % (
                path, ", ".join(sorted(missing))))
        for r in rows:
            if r["metric"] in ("tokens_per_s", "samples_per_s"):
                try:
                    out[r["id"]] = (float(r["measured"]), float(r["predicted"]))
                except (TypeError, ValueError):
                    sys.exit("gpu_pairs.py: %s:%d: run '%s': measured '%s' or predicted '%s' is not a number" % (
                        path, rows.line_num, r["id"], r["measured"], r["predicted"]))
    return out


# (name, runs, their predictions, reader, metric)
SOURCES = (("LLM", "bench/data/llm_runs.csv", "bench/results/llm_validation.md", llm_predictions, "tokens_per_s"),
           ("DLE", "bench/data/holdout_runs.csv", "bench/results/holdout_accuracy.csv", validated_predictions,
            "samples_per_s"))


def gpu_order(path):
    """A sort key per GPU id: (compute capability, peak bf16 FLOP/s, id)."""
    key = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key[r["id"]] = (float(r["compute_capability"] or 0), float(r["peak_bf16_flop_per_s"] or 0), r["id"])
    return key


def groups(runs, priced, metric):
    """[[row, ...]] of the priced rows of metric that differ only in HARDWARE and PICKED_BY_GPU columns
    (and notes), on two or more GPUs, in file order."""
    by_key = collections.OrderedDict()
    with open(runs, newline="") as f:
        for r in csv.DictReader(f):
            if r["metric"] != metric or r["id"] not in priced:
                continue
            key = tuple((k, v) for k, v in r.items()
                        if k not in HARDWARE + PICKED_BY_GPU + NOT_CONFIG and not k.startswith("note"))
            by_key.setdefault(key, []).append(r)
    return [g for g in by_key.values() if len({r["gpu"] for r in g}) > 1]


def pairs(group, priced, order):
    """(A, B, n A, n B, measured B/A, predicted B/A, A's error, B's error, what differs besides the GPU)
    for each pair of GPUs of a group, errors (predicted - measured) / measured of each GPU's medians."""
    by_gpu = collections.OrderedDict()
    for r in group:
        by_gpu.setdefault(r["gpu"], []).append(r)
    gpus = sorted(by_gpu, key=lambda g: order.get(g, (0.0, 0.0, g)))
    med = {g: tuple(statistics.median(priced[r["id"]][i] for r in by_gpu[g]) for i in (0, 1)) for g in gpus}
    out = []
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            (ma, pa), (mb, pb) = med[a], med[b]
            differs = sorted({k for k in PICKED_BY_GPU
                              if {r.get(k) for r in by_gpu[a]} != {r.get(k) for r in by_gpu[b]}})
            out.append((a, b, len(by_gpu[a]), len(by_gpu[b]), mb / ma, pb / pa,
                        (pa - ma) / ma, (pb - mb) / mb, differs))
    return out


def label(group):
    """The group's name: the words of its first run id that every run id of it has (the GPU's and a
    submitter's words dropped)."""
    words = [set(r["id"].split("-")) for r in group]
    return "-".join(w for w in group[0]["id"].split("-") if all(w in s for s in words))


def write(out, gpus):
    order = gpu_order(gpus)
    rows = []
    for name, runs, report, reader, metric in SOURCES:
        priced = reader(report)
        rows += [(name, label(g), g[0]["num_gpus"], p) for g in groups(runs, priced, metric)
                 for p in pairs(g, priced, order)]
    w = out.write
    w("# GPU pairs: measured against predicted speed ratio on identical configurations (issue 39)\n\n")
    w("Written by `/usr/bin/python3 bench/gpu_pairs.py > bench/results/gpu_pairs.md` from the public runs\n"
      "no fit has seen and the shipped fit's predictions of them (nothing fitted): LLM, `bench/data/llm_runs.csv`\n"
      "with `bench/results/llm_validation.md`; DLE, `bench/data/holdout_runs.csv` with\n"
      "`bench/results/holdout_accuracy.csv`. Each line is two GPUs that ran the same configuration: every\n"
      "column equal but the GPU, its network, GPUs per node, topology and host, and the attention kernel or\n"
      "cuDNN release the source's script picked for the GPU it found (the last column names it when it\n"
      "differs). A stack's own shift cancels in the ratio; what is left is how the prediction moves from\n"
      "GPU A to GPU B. Ratio error = predicted B/A over measured B/A - 1 (> 0: B priced too fast against A).\n\n")
    w("| data | runs | GPUs | A | B | rows A / B | measured B/A | predicted B/A | ratio error % | A err % | B err % "
      "| also differs |\n")
    w("| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
    for data, name, n, (a, b, na, nb, mr, pr, ea, eb, differs) in rows:
        w("| %s | %s | %s | %s | %s | %d / %d | %.3f | %.3f | %+.1f | %+.1f | %+.1f | %s |\n" % (
            data, name, n, a, b, na, nb, mr, pr, 100 * (pr / mr - 1), 100 * ea, 100 * eb, ", ".join(differs) or "-"))
    w("\n| GPU pair | pairs | ratio MAPE % | ratio bias % | rows' own MAPE % |\n| --- | ---: | ---: | ---: | ---: |\n")
    kinds = collections.OrderedDict()
    for _data, _name, _n, p in rows:
        kinds.setdefault("%s -> %s" % (p[0], p[1]), []).append(p)
    for data, *_ in SOURCES:
        kinds["every %s pair" % data] = [p for d, _name, _n, p in rows if d == data]
    kinds["every pair"] = [p for _data, _name, _n, p in rows]
    for kind, ps in kinds.items():
        if not ps:
            continue
        errs = [100 * (p[5] / p[4] - 1) for p in ps]
        own = [100 * abs(e) for p in ps for e in (p[6], p[7])]
        w("| %s | %d | %.1f | %+.1f | %.1f |\n" % (kind, len(ps), sum(map(abs, errs)) / len(errs),
                                                 sum(errs) / len(errs), sum(own) / len(own)))


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return 0
    check = None
    if args[:1] == ["--check"]:
        if len(args) != 2:
            sys.exit("gpu_pairs.py: --check needs a report file (--help)")
        check = args[1]
    elif args:
        sys.exit("gpu_pairs.py: unexpected argument '%s' (--help)" % args[0])
    for path in [GPUS] + [p for src in SOURCES for p in src[1:3]]:
        if not os.path.exists(path):
            sys.exit("gpu_pairs.py: %s: not found (run from the repository root)" % path)
    if check is None:
        write(sys.stdout, GPUS)
        return 0

    buf = io.StringIO()
    write(buf, GPUS)
    try:
        have = open(check, encoding="utf-8").read()
    except OSError as e:
        sys.exit("gpu_pairs.py: %s: %s" % (check, e.strerror))
    if have != buf.getvalue():
        sys.stderr.write("gpu_pairs.py: %s is stale: rerun /usr/bin/python3 bench/gpu_pairs.py > %s\n" % (check, check))
        return 1
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
