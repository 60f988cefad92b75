#!/usr/bin/env python3
"""coverage_scan.py: can a different width of the p10-p90 alone put every leave-one-architecture-out
fold inside the 70-90% band of issue 39?  Reads the same fold files as arch_stack_table.py (the
shipped fit's Hopper rows, and each `--fold ARCH DIR` that bench/arch_fold.sh wrote); predicts and
fits nothing.

Each held-out row's interval is p50 x exp(-+z_0.9 sd), its sd one of three kinds the library
gives a prediction on an architecture the fit has not seen (catalog/params.c): GPU-bound
(error_log_sd_unseen_arch), host-bound (_host), or either on several GPUs (with the communication
sd of the gradients' path in quadrature).  The rows of an LLM report carry their GPU count and
host utilization, so their kind and sd are rebuilt as arch_stack_table.py does; a validated row
(`epochcast validate -o`) carries its p10 and p90, and its kind is read from its width: the
fold's GPU-bound sd, at least its host-bound sd, or between (several GPUs).

The scan multiplies every sd of a kind by one factor (0.50-1.50 in steps of 0.05, the three
factors chosen independently) and reports the factors that bring the worst fold closest to the
band: the best any rule that widens or narrows one kind of interval for every architecture alike
can do, chosen here with the folds' own errors in view (so it is optimistic).  Usage, from the
repository root:

  python3 bench/coverage_scan.py [MODELS_DIR] [--hopper LLM_REPORT] [--fold ARCH DIR]...

MODELS_DIR (default models) gives gpus.csv and the profile whose sds the Hopper fold takes; LLM_REPORT
(default bench/results/llm_validation.md) the Hopper rows as that profile predicted them
(bench/probe_band.sh passes both for a changed models/ copy).
"""
import bisect
import csv
import itertools
import math
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch_stack_table as ast  # noqa: E402  (the fold files' readers)

BAND = (0.70, 0.90)
KINDS = ("gpu", "host", "multi")
FACTORS = [round(0.50 + 0.05 * i, 2) for i in range(21)]
SD_MATCH = 1e-3  # a validated row's sd within this of the fold's GPU-bound sd is GPU-bound (p10, p90 rounded to 6 digits)


def kind_of_width(sd, unseen):
    """The kind of a validated row's interval from its sd: GPU-bound, host-bound or several GPUs."""
    if sd >= unseen[True] - SD_MATCH and unseen[True] > unseen[False]:
        return "host"
    return "gpu" if abs(sd - unseen[False]) < SD_MATCH else "multi"


def fold_rows(a, md, second, fold_dir, unseen, comm, arch, paths, bound):
    """(|log(predicted / measured)| over z_0.9 x the row's sd, kind) of every held-out time row of fold a:
    the row is inside its p10-p90 when that ratio is at most 1."""
    out = []
    for gpu, _stack, pred, meas, gpus, util, _ins, _id in ast.rows_llm(md, second):
        if arch.get(gpu.lower()) != a:
            continue
        base = ast.unseen_sd(unseen, util, bound, "%s row on %s" % (md, gpu))
        sd = ast.widened(base, comm, paths, gpu, gpus)
        kind = "host" if base == unseen[True] and unseen[True] != unseen[False] else "multi" if gpus > 1 else "gpu"
        out.append((abs(math.log(pred / meas)) / (ast.Z90 * sd), kind))
    if fold_dir:
        for name in ("stack", "dle", "holdout"):
            with open(os.path.join(fold_dir, "%s_of_%s.pred.csv" % (name, a)), newline="") as f:
                for r in csv.DictReader(f):
                    if r["metric"] not in ast.TIME_METRICS:
                        continue
                    p, lo, hi, m = (float(r[k]) for k in ("predicted", "p10", "p90", "measured"))
                    half = math.log(hi / p) if m >= p else math.log(p / lo)  # the side the measurement is on
                    out.append((abs(math.log(p / m)) / half, kind_of_width(half / ast.Z90, unseen)))
    else:  # the shipped fit: stack_accuracy.csv's holdout rows of this architecture, GPU-bound sd
        with open("bench/results/stack_accuracy.csv", newline="") as f:
            for r in csv.DictReader(f):
                if r["split"] == "holdout" and r["metric"] in ast.TIME_METRICS and arch.get(r["gpu"].lower()) == a:
                    err = abs(math.log(float(r["predicted"]) / float(r["measured"])))
                    out.append((err / (ast.Z90 * unseen[False]), "gpu"))
    return out


def coverage(by_kind, n, factors):
    """The share of a fold's rows inside their p10-p90 when each kind's sd is multiplied by factors[kind]:
    by_kind maps a kind to its rows' sorted ratios (|log error| over the half-width)."""
    return sum(bisect.bisect_right(v, factors[k]) for k, v in by_kind.items()) / n


def miss(cov):
    """How far a coverage lies outside the band (0 inside it)."""
    return max(0.0, BAND[0] - cov, cov - BAND[1])


def scan(folds):
    """folds: {name: [(ratio, kind)]}.  (worst miss, {kind: factor}, {name: coverage}) of the factors whose
    worst fold misses the band least (ties: the factors nearest 1), and the factor choices that put every
    fold inside it."""
    prepared = {}
    for name, rows in folds.items():
        by_kind = {k: sorted(r for r, kk in rows if kk == k) for k in KINDS}
        prepared[name] = ({k: v for k, v in by_kind.items() if v}, len(rows))
    best, inside = None, []
    for combo in itertools.product(FACTORS, repeat=len(KINDS)):
        factors = dict(zip(KINDS, combo))
        covs = {name: coverage(by_kind, n, factors) for name, (by_kind, n) in prepared.items()}
        worst = max(miss(c) for c in covs.values())
        if worst == 0:
            inside.append(combo)
        key = (round(worst, 9), sum(abs(math.log(x)) for x in combo))
        if best is None or key < best[0]:
            best = (key, factors, covs)
    return best[0][0], best[1], best[2], inside


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return
    hopper = "bench/results/llm_validation.md"
    if "--hopper" in args:
        i = args.index("--hopper")
        if len(args) < i + 2 or not os.path.exists(args[i + 1]):
            sys.exit("coverage_scan.py: --hopper needs an existing LLM report (bench_llm_runs -o FILE)")
        hopper = args[i + 1]
        del args[i:i + 2]
    extra = ast.parse_folds(args, "coverage_scan.py")
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.exit("coverage_scan.py: unexpected argument '%s' (--help)" % args[-1])
    models = args[0] if args else "models"
    if not os.path.exists(os.path.join(models, "gpus.csv")):
        sys.exit("coverage_scan.py: %s: no gpus.csv there (MODELS_DIR is a models/ folder)" % models)
    arch = ast.architectures(models)
    fitted, _sd, unseen, comm = ast.profile_sd(models)
    paths, bound = ast.gradient_paths(models), ast.host_bound_util_frac(models)
    todo = [] if "hopper" in fitted else [("hopper", hopper, False, None, unseen, comm)]
    for a, d in extra:
        _f, _s, fold_unseen, fold_comm = ast.profile_sd(d, os.path.join(d, "profile_no_%s.csv" % a))
        todo.append((a, os.path.join(d, "llm_no_%s.md" % a), True, d, fold_unseen, fold_comm))
    folds = {}
    print("| fold | rows | GPU-bound: rows, covered | host-bound | several GPUs | all |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for a, md, second, d, fold_unseen, fold_comm in todo:
        rows = fold_rows(a, md, second, d, fold_unseen, fold_comm, arch, paths, bound)
        if not rows:
            continue
        folds[a.capitalize()] = rows
        cells = []
        for k in KINDS:
            mine = [r for r, kk in rows if kk == k]
            cells.append("%d, %.0f%%" % (len(mine), 100 * sum(r <= 1 for r in mine) / len(mine)) if mine else "0")
        print("| %s | %d | %s | %.0f%% |" % (a.capitalize(), len(rows), " | ".join(cells),
                                            100 * sum(r <= 1 for r, _ in rows) / len(rows)))
    if not folds:
        sys.exit("coverage_scan.py: no held-out rows (pass --fold ARCH DIR)")
    pooled = [r for rows in folds.values() for r, _ in rows]
    shares = [sum(r <= 1 for r, _ in rows) / len(rows) for rows in folds.values()]
    print("| all folds | %d | | | | %.0f%% (each fold weighing the same: %.0f%%) |" % (
        len(pooled), 100 * sum(r <= 1 for r in pooled) / len(pooled), 100 * sum(shares) / len(shares)))
    worst, factors, covs, inside = scan(folds)
    print()
    print("Factors on the GPU-bound / host-bound / several-GPU sds scanned: %.2f-%.2f each (%d choices); "
          "choices putting every fold inside %.0f-%.0f%%: %d." % (FACTORS[0], FACTORS[-1], len(FACTORS) ** 3,
                                                                 100 * BAND[0], 100 * BAND[1], len(inside)))
    if inside:
        print("Their factors: %s." % ", ".join("%s %.2f-%.2f" % (k, min(c[i] for c in inside), max(c[i] for c in inside))
                                              for i, k in enumerate(("GPU-bound", "host-bound", "several-GPU"))))
    print("Closest: x %.2f / %.2f / %.2f, worst fold %.1f points outside: %s." % (
        factors["gpu"], factors["host"], factors["multi"], 100 * worst,
        ", ".join("%s %.0f%%" % (name, 100 * c) for name, c in covs.items())))


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
