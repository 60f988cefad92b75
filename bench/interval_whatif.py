#!/usr/bin/env python3
"""interval_whatif.py: a what-if for issue 39's intervals, not the library's rule.  For each
leave-one-architecture-out fold written by bench/arch_fold.sh, compare the p10-p90 coverage of
the shipped symmetric interval (p50 x exp(-+1.2816 sd), sd the unseen-architecture sd of the
fold's class) with an asymmetric one: the 0.1 and 0.9 quantiles of the nested folds' signed log
errors, each architecture of the fold's "Which architecture sets the unseen-architecture sds"
table a normal with its bias and rms, weighing the same, widened by t_0.9,k / z_0.9 as the
shipped sd is.  A row's own communication part (its interval beyond the class sd) is kept in
quadrature.  The LLM rows take the fold's GPU-bound sd (their intervals are not in the report),
so "shipped" is close to, not equal to, bench/results/loao.md.  Usage, after arch_fold.sh:
    python3 bench/interval_whatif.py FOLDS_DIR ARCH [ARCH ...]
"""
import csv
import math
import re
import sys
from statistics import NormalDist

N = NormalDist()
T_09 = {2: 1.886, 3: 1.638, 4: 1.533, 5: 1.476, 6: 1.440}  # Student's t_0.9 by degrees of freedom
Z_09 = 1.2816


def fold_table(path):
    """Per architecture: GPU-bound (n, rms, bias) and host-bound (n, rms, bias); the two sds."""
    arch, sds = {}, None
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if "all: the sd" in line:
            sds = tuple(float(x) for x in re.findall(r"sd ([0-9.]+)", line))
        elif line.startswith("| ") and len(cells) == 11 and cells[0] != "architecture":
            arch[cells[0]] = ((int(cells[1]), float(cells[2]), float(cells[3])),
                              (int(cells[6]), float(cells[7]), float(cells[8])))
    if sds is None or not arch:
        sys.exit("interval_whatif.py: %s has no unseen-architecture table (run bench/arch_fold.sh)" % path)
    return arch, sds


def mixture_quantile(parts, q):
    lo, hi = -5.0, 5.0
    for _ in range(100):
        mid = (lo + hi) / 2
        cdf = sum(N.cdf((mid - m) / s) for m, s in parts) / len(parts)
        lo, hi = (mid, hi) if cdf < q else (lo, mid)
    return (lo + hi) / 2


def class_band(arch, host):
    parts = [(b, math.sqrt(max(rms * rms - b * b, 1e-6))) for g, h in arch.values()
             for n, rms, b in [h if host else g] if n > 0]
    widen = T_09[len(parts)] / Z_09
    return mixture_quantile(parts, 0.1) * widen, mixture_quantile(parts, 0.9) * widen


def main(folds, archs):
    gpu_arch = {}
    for r in csv.DictReader(open("models/gpus.csv")):
        for name in [r["id"]] + [a for a in r["aliases"].split(";") if a]:
            gpu_arch[name.lower()] = r["architecture"].lower()
    print("| fold | rows | shipped covers | asymmetric covers | GPU-bound q10 / q90 | host-bound q10 / q90 |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for a in archs:
        arch, (sd_gpu, sd_host) = fold_table("%s/stack_no_%s.log" % (folds, a))
        bands = (class_band(arch, False), class_band(arch, True))
        rows = []  # (log error of the step time, the row's sd)
        for name in ("stack", "dle"):
            for r in csv.DictReader(open("%s/%s_of_%s.pred.csv" % (folds, name, a))):
                if "byte" in r["metric"] or r["metric"] in ("oom", "first_step_s") or not r["p90"]:
                    continue
                p, m = float(r["predicted"]), float(r["measured"])
                rows.append((math.log(m / p) if "per_s" in r["metric"] else math.log(p / m),
                             math.log(float(r["p90"]) / p) / Z_09))
        for line in open("%s/llm_no_%s.md" % (folds, a)):
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) >= 13 and c[10] == "priced" and c[4].endswith("/s") and gpu_arch.get(c[2].lower()) == a:
                rows.append((math.log(float(c[5]) / float(c[8])), sd_gpu))
        old = new = 0
        for e, s in rows:
            host = s > 0.2 and abs(s - sd_host) < abs(s - sd_gpu)
            base = sd_host if host else sd_gpu
            q10, q90 = bands[host]
            half = math.sqrt(((q90 - q10) / 2) ** 2 + max(s * s - base * base, 0) * Z_09 ** 2)
            old += abs(e) <= Z_09 * s
            new += abs(e - (q10 + q90) / 2) <= half
        n = len(rows)
        print("| %s | %d | %d%% | %d%% | %+.3f / %+.3f | %+.3f / %+.3f |" % (
            a, n, round(100 * old / n), round(100 * new / n), *bands[0], *bands[1]))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], [a.lower() for a in sys.argv[2:]])
