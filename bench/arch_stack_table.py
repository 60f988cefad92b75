#!/usr/bin/env python3
"""arch_stack_table.py: throughput error by GPU architecture x software stack (issue 39), as a
Markdown table, from the per-row outputs the benchmarks already write (nothing is predicted or
fitted here):

  * DeepLearningExamples / Lambda PyTorch harness: bench/results/loao.csv (bench_logo --by-arch:
    each architecture predicted by a fit that never saw it);
  * the same harness on GPUs no fit has (bench/data/holdout_runs.csv):
    bench/results/holdout_accuracy.csv (epochcast validate -o with the shipped profile, each row with
    the library's p10-p90);
  * PyTorch / Hugging Face stack: bench/results/stack_accuracy.csv (bench_stack: its holdout
    split, time metrics only);
  * LLM stacks of bench/data/llm_runs.csv (NeMo and Megatron-Bridge on Transformer Engine,
    torchtune, flash-attention's GPT training, torchtitan's FSDP2 runs): bench/results/llm_validation.md's "Every row"
    table (bench_llm_runs, shipped fit), priced rows only.

GPU ids map to architectures through models/gpus.csv.  The p10-p90 column: the DLE rows carry
the library's own interval (loao.csv), and so do the LLM rows (the "in p10-p90" column
bench_llm_runs writes for each fit, from ec_result_metric_interval).  The PyTorch / HF holdout rows
carry none: for them it is the interval the shipped profile (models/profile.csv) gives a steady
step, p50 x exp(-+1.2816 sd) with sd its error_log_sd (every such row is on an architecture the fit
has runs of; by architecture only: an fp32 row on an architecture without CUDA-core runs is counted
as calibrated here, where the library widens it).  An LLM report without the column (older
reports) falls back to that reconstruction: error_log_sd_unseen_arch, or _host when the row's
"host util %" is below constants.csv host_bound_util_frac, on an architecture the fit has not
seen, with the communication sd of the GPU's default path in quadrature on several GPUs
(error_log_sd_comm_host where gpus.csv's default_topology is pcie-host, or pcie-switch without
p2p; else _direct).  Usage, from the repository root:

  python3 bench/arch_stack_table.py [MODELS_DIR] [--fold ARCH DIR]...

Errors are (predicted - measured) / measured of the row's metric, a duration's (step, epoch, run
time) with its sign turned: MAPE reads the metric as given, and bias > 0 always means predicted
faster than measured.

After the table it prints "Held-out architecture folds": for each architecture, every priced row of
that architecture predicted by a fit that has no run of it, by stack, with MAPE, bias and p10-p90
coverage.  Hopper: the shipped fit is such a fit (models/profile.csv has no Hopper row), so its LLM
rows are read from llm_validation.md.  Another architecture needs `--fold ARCH DIR`, DIR the output
folder of `bench/arch_fold.sh ARCH BUILD DIR`: a profile fitted the shipped way without any run of
that architecture (DIR/profile_no_ARCH.csv), the llm_validation-style report bench_llm_runs wrote
with it (DIR/llm_no_ARCH.md, whose second-fit columns are that fold's predictions and the library's
p10-p90 under that profile), and `epochcast validate`'s predictions of the architecture's own runs
of stack_runs.csv, calibration_dle.csv and holdout_runs.csv under that profile
(DIR/stack_of_ARCH.pred.csv, DIR/dle_of_ARCH.pred.csv, DIR/holdout_of_ARCH.pred.csv; time metrics
only, each with the library's p10-p90).
"""
import csv
import math
import os
import signal
import sys

Z90 = 1.2815515655446004

TIME_METRICS = {"samples_per_s", "step_time_ms", "epoch_time_s", "train_time_s", "tokens_per_s"}
DURATIONS = {"step_time_ms", "epoch_time_s", "train_time_s"}  # the others are rates


def rel_error(metric, pred, meas):
    """(predicted - measured) / measured with a duration's sign turned, so that every bias reads the same
    way: > 0, predicted faster than measured (a rate too high or a duration too short)."""
    e = (pred - meas) / meas
    return -e if metric in DURATIONS else e
LLM_STACKS = [("nemo2407", "NeMo 24.07 (Megatron-Core, TE)"), ("mbridge", "Megatron-Bridge (TE)"),
              ("torchtune", "torchtune"), ("flash", "flash-attention GPT"),
              ("torchtitan", "torchtitan (FSDP2, SDPA flash)"),
              ("mlperf-bert", "MLPerf BERT (PyTorch, apex/TE fused, packed)"),
              ("mlperf-gpt3", "MLPerf GPT-3 (NeMo, TE FP8)"),
              ("stas00", "DeepSpeed ZeRO (stas00: FA3 / FA4, Liger)"),
              ("mlperf-llama31", "MLPerf Llama 3.1 8B (NeMo, TE FP8)"),
              ("mlperf-llama2", "MLPerf Llama 2 70B LoRA (NeMo, TE FP8)")]


def architectures(models):
    arch = {}
    with open(os.path.join(models, "gpus.csv"), newline="") as f:
        for row in csv.DictReader(f):
            arch[row["id"].lower()] = row["architecture"]
            for alias in row["aliases"].split(";"):
                if alias:
                    arch[alias.lower()] = row["architecture"]
    return arch


def profile_kernels(models):
    """{architecture: the kernel classes (kernels= values) its fitted rows name, None when the profile does
    not record them}: a prediction of another class on it is priced as on an unseen architecture
    (catalog/params.c eci_params_arch_for)."""
    out = {}
    with open(os.path.join(models, "profile.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["architecture"]:
                words = set(row.get("kernels", "").split())
                out[row["architecture"]] = (out.get(row["architecture"]) or set()) | words or None
    return out


def llm_kernels():
    """{run id: its kernels= value (eager when empty)} of bench/data/llm_runs.csv."""
    with open("bench/data/llm_runs.csv", newline="") as f:
        return {r["id"]: r["kernels"] or "eager" for r in csv.DictReader(f)}


def profile_sd(models, path=None):
    """(architectures with fitted rows, error_log_sd, {False: the unseen-architecture sd of a GPU-bound
    prediction, True: of a host-bound one}, {path: communication sd}) of profile.csv (or path), each
    unseen sd as the library takes it (catalog/params.c eci_params_error_sd: error_log_sd only when
    the profile has no unseen sd; a profile without error_log_sd_unseen_arch_host gives host-bound
    predictions the GPU-bound sd)."""
    fitted, sd, unseen, host, comm = set(), 0.0, 0.0, 0.0, {"direct": 0.0, "host": 0.0, "host_shared": 0.0}
    with open(path or os.path.join(models, "profile.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["architecture"]:
                fitted.add(row["architecture"])
            elif row["parameter"] == "error_log_sd":
                sd = float(row["value"])
            elif row["parameter"] == "error_log_sd_unseen_arch":
                unseen = float(row["value"])
            elif row["parameter"] == "error_log_sd_unseen_arch_host":
                host = float(row["value"])
            elif row["parameter"].startswith("error_log_sd_comm_"):
                comm[row["parameter"][len("error_log_sd_comm_"):]] = float(row["value"])
    gpu_bound = unseen if unseen > 0 else sd
    return fitted, sd, {False: gpu_bound, True: host if host > 0 else gpu_bound}, comm


def host_bound_util_frac(models):
    """constants.csv host_bound_util_frac: a prediction whose share of the step without host waits is below it is host-bound."""
    with open(os.path.join(models, "constants.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["name"] == "host_bound_util_frac":
                return float(row["value"])
    sys.exit("arch_stack_table.py: %s/constants.csv has no host_bound_util_frac" % models)


def unseen_sd(unseen, util, bound, what):
    """The unseen-architecture sd of a row predicted at host utilization util (the step without host waits) (None: not known)."""
    if util is None:
        sys.exit("arch_stack_table.py: %s: on an architecture the fit has not seen, and its predicted GPU "
                 "utilization is not known (host-bound or not picks its interval)" % what)
    return unseen[util < bound]


def gradient_paths(models):
    """GPU id or alias -> the path a multi-GPU job's gradients take on its default topology."""
    path = {}
    with open(os.path.join(models, "gpus.csv"), newline="") as f:
        for row in csv.DictReader(f):
            host = row["default_topology"] == "pcie-host" or (row["default_topology"] == "pcie-switch" and
                                                              row["p2p"] == "0")
            for name in [row["id"]] + [a for a in row["aliases"].split(";") if a]:
                path[name.lower()] = "host" if host else "direct"
    return path


def widened(sd, comm, paths, gpu, gpus):
    """The sd of a row of `gpus` GPUs: sd, with the communication sd of its path for more than one."""
    return math.hypot(sd, comm.get(paths.get(gpu.lower(), "direct"), 0.0)) if gpus > 1 else sd


def llm_stack(run_id):
    for prefix, name in LLM_STACKS:
        if run_id.startswith(prefix):
            return name
    return "LLM: " + run_id.split("-")[0]


def rows_llm(path, second_fit=False):
    """(gpu, stack, predicted, measured, GPUs, predicted share of the step without host waits, inside) of
    the priced rows of llm_validation.md's Every row (with second_fit, the prediction of the report's
    second fit: its MPT-fit columns); the utilization None when the report has no "host util %" column;
    inside: whether the measurement lies in the library's own p10-p90 of that prediction (the
    "in p10-p90" column bench_llm_runs writes), None when the report has none."""
    out, inside = [], False
    with open(path) as f:
        for line in f:
            if line.startswith("## Every row"):
                inside = True
                continue
            if inside and line.startswith("## "):
                break
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not inside or len(cells) < 11 or cells[10] != "priced" or cells[4] != "tokens/s":
                continue
            utils = cells[11].split(" / ") if len(cells) > 11 else []
            util = utils[1 if second_fit else 0] if len(utils) > (1 if second_fit else 0) else None
            ins = cells[12].split(" / ") if len(cells) > 12 else []
            ins = ins[1 if second_fit else 0] if len(ins) > (1 if second_fit else 0) else None
            out.append((cells[2], llm_stack(cells[0]), float(cells[8 if second_fit else 6]), float(cells[5]),
                        int(cells[3].replace(",", "")), float(util) / 100 if util not in (None, "-") else None,
                        {"yes": True, "no": False}.get(ins), cells[0]))
    return out


def rows_validated(path):
    """(relative error, inside p10-p90, |log(predicted / measured)|) of the time-metric rows of an
    `epochcast validate -o` file."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["metric"] not in TIME_METRICS:
                continue
            if r["in_p10_p90"] not in ("0", "1"):
                sys.exit("arch_stack_table.py: %s: row %s has no p10-p90" % (path, r["id"]))
            pred, meas = float(r["predicted"]), float(r["measured"])
            out.append((rel_error(r["metric"], pred, meas), r["in_p10_p90"] == "1", abs(math.log(pred / meas))))
    return out


def wilson(k, n, z=1.6448536269514722):
    """The Wilson score interval of a share k / n at 90% (z = z_0.95): (low, high)."""
    p, d = k / n, 1 + z * z / n
    mid, half = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return mid - half, mid + half


def sd_holding(abs_logs, share=0.8):
    """The sd whose p50 x exp(-+z_0.9 sd) holds `share` of these |log errors|: their share-quantile
    (the smallest error with that share at or below it, as heldout.c takes it) over z_0.9."""
    v = sorted(abs_logs)
    return v[max(0, math.ceil(share * len(v)) - 1)] / Z90


def summary_line(label, stack, rows, interval=False):
    """One table row of (relative error, inside p10-p90, |log error|) rows, its last column the sd
    that would hold 80% of them (sd_holding); with interval, the coverage's 90% Wilson interval, the
    rows taken as independent draws (they are not: a source's rows share its errors, so the interval
    is too narrow)."""
    n = len(rows)
    errs = [e for e, _, _ in rows]
    k = sum(c for _, c, _ in rows)
    cover = "%.0f%%" % (100 * k / n)
    if interval:
        cover += " (%.0f-%.0f)" % tuple(100 * x for x in wilson(k, n))
    return "| %s | %s | %d | %.1f | %+.1f | %.0f%% | %s | %.3f |" % (
        label, stack, n, 100 * sum(abs(e) for e in errs) / n, 100 * sum(errs) / n,
        100 * sum(abs(e) <= 0.10 for e in errs) / n, cover, sd_holding([a for _, _, a in rows]))


def folds(arch, fitted, unseen, comm, paths, extra, bound):
    """The held-out architecture folds: Hopper from the shipped fit, the others from --fold."""
    print()
    print("### Held-out architecture folds")
    print()
    print("| held out (fit without it) | stack | rows | MAPE % | bias % | within 10 % | p10-p90 covers | "
          "sd holding 80% |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    todo = [("hopper", "bench/results/llm_validation.md", False, unseen, comm, None)]
    for a, d in extra:
        prof = os.path.join(d, "profile_no_%s.csv" % a)
        todo.append((a, os.path.join(d, "llm_no_%s.md" % a), True) + profile_sd(d, prof)[2:] + (d,))
    for a, md, second, sd, fold_comm, fold_dir in todo:
        if a in fitted and not second:
            print("| %s | (the shipped fit has runs of it: pass --fold) | | | | | |" % a)
            continue
        groups = {}
        for gpu, stack, pred, meas, gpus, util, ins, _ in rows_llm(md, second):
            if arch.get(gpu.lower(), "?") == a:
                if ins is None:
                    row_sd = unseen_sd(sd, util, bound, "%s row on %s" % (md, gpu))
                    ins = abs(math.log(pred / meas)) <= Z90 * widened(row_sd, fold_comm, paths, gpu, gpus)
                groups.setdefault(stack, []).append(((pred - meas) / meas, ins, abs(math.log(pred / meas))))
        if fold_dir:
            for name, stack in (("stack", "PyTorch / HF stack (all splits)"), ("dle", "DLE / Lambda PyTorch"),
                                ("holdout", "DLE / Lambda PyTorch, GPUs no fit has (holdout_runs.csv)")):
                for r in rows_validated(os.path.join(fold_dir, "%s_of_%s.pred.csv" % (name, a))):
                    groups.setdefault(stack, []).append(r)
        else:
            with open("bench/results/stack_accuracy.csv", newline="") as f:
                for r in csv.DictReader(f):
                    if (r["split"] == "holdout" and r["metric"] in TIME_METRICS and
                            arch.get(r["gpu"].lower(), "?") == a):
                        pred, meas = float(r["predicted"]), float(r["measured"])
                        row_sd = unseen_sd(sd, None, bound, "stack_accuracy.csv row %s" % r["id"])
                        err = abs(math.log(pred / meas))
                        groups.setdefault("PyTorch / HF stack (holdout)", []).append(
                            (rel_error(r["metric"], pred, meas), err <= Z90 * row_sd, err))
        label = "%s (%s; sd %.3f, host-bound %.3f%s)" % (a.capitalize(), "shipped fit: no Hopper run" if not
                                                          second else "fit without its runs", sd[False], sd[True],
                                          ", comm direct %.3f / host %.3f / %.3f" % (
                                              fold_comm["direct"], fold_comm["host"], fold_comm["host_shared"])
                                          if any(fold_comm.values()) else "")
        everything = []
        for stack, rows in sorted(groups.items()):
            print(summary_line(label, stack, rows))
            everything += rows
        if everything:
            print(summary_line(label, "**all stacks**", everything, interval=True))
        else:
            print("| %s | (no priced rows) | 0 | | | | | |" % label)


def parse_folds(args, prog):
    """The (ARCH, DIR) of each `--fold ARCH DIR` in args, taken out of it; refuses one without its two
    arguments or whose DIR lacks a file bench/arch_fold.sh writes for ARCH, naming it."""
    extra = []
    while "--fold" in args:
        i = args.index("--fold")
        if len(args) < i + 3:
            sys.exit("%s: --fold needs ARCH DIR (DIR: bench/arch_fold.sh's output folder)" % prog)
        a, d = args[i + 1].lower(), args[i + 2]
        for name in ("profile_no_%s.csv", "llm_no_%s.md", "stack_of_%s.pred.csv", "dle_of_%s.pred.csv",
                     "holdout_of_%s.pred.csv"):
            if not os.path.exists(os.path.join(d, name % a)):
                sys.exit("%s: --fold %s %s: no %s there (run bench/arch_fold.sh %s BUILD %s)" %
                         (prog, a, d, name % a, a, d))
        extra.append((a, d))
        del args[i:i + 3]
    return extra


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return
    extra = parse_folds(args, "arch_stack_table.py")
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.exit("arch_stack_table.py: unexpected argument '%s' (--help)" % args[-1])
    models = args[0] if args else "models"
    if not os.path.exists(os.path.join(models, "gpus.csv")):
        sys.exit("arch_stack_table.py: %s: no gpus.csv there (MODELS_DIR is a models/ folder)" % models)
    arch = architectures(models)
    fitted, sd, unseen, comm = profile_sd(models)
    paths = gradient_paths(models)
    bound = host_bound_util_frac(models)
    classes, run_kernels = profile_kernels(models), llm_kernels()
    groups = {}

    seen = {}

    def add(gpu, stack, pred, meas, covered=None, gpus=1, util=None, what="", left_out=False, metric="rate",
            kernels="eager"):
        """covered: whether the library's own p10-p90 holds the measurement (None: the profile's sd here)."""
        a = arch.get(gpu.lower(), "?")
        unseen_class = a in fitted and classes.get(a) is not None and kernels not in classes[a]
        label = ("no (left out)" if left_out else "**no** (kernels=%s)" % kernels if unseen_class
                 else "yes" if a in fitted else "**no**")
        old = seen.get((a, stack))
        seen[(a, stack)] = label if old in (None, label) else " / ".join(sorted({old, label}))
        if covered is None:
            row_sd = sd if a in fitted else unseen_sd(unseen, util, bound, what)
            covered = abs(math.log(pred / meas)) <= Z90 * widened(row_sd, comm, paths, gpu, gpus)
        groups.setdefault((a, stack), []).append((rel_error(metric, pred, meas), covered))

    with open("bench/results/loao.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["held_out_by"] != "arch":
                continue
            meas = float(r["measured"])
            add(r["gpu"], "DLE / Lambda PyTorch (arch. left out)", float(r["predicted"]), meas,
                float(r["p10"]) <= meas <= float(r["p90"]), left_out=True)
    with open("bench/results/stack_accuracy.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["split"] == "holdout" and r["metric"] in TIME_METRICS:
                add(r["gpu"], "PyTorch / HF stack (holdout)", float(r["predicted"]), float(r["measured"]),
                    what="stack_accuracy.csv row " + r["id"], metric=r["metric"])
    with open("bench/results/holdout_accuracy.csv", newline="") as f:  # epochcast validate -o, shipped profile
        for r in csv.DictReader(f):
            if r["metric"] in TIME_METRICS:
                add(r["gpu"], "DLE / Lambda PyTorch, GPUs no fit has (holdout_runs.csv)", float(r["predicted"]),
                    float(r["measured"]), r["in_p10_p90"] == "1", metric=r["metric"])
    for gpu, stack, pred, meas, gpus, util, ins, run_id in rows_llm("bench/results/llm_validation.md"):
        add(gpu, stack, pred, meas, ins, gpus=gpus, util=util, what="llm_validation.md row on " + gpu,
            kernels=run_kernels.get(run_id, "eager"))

    print("| architecture | the fit has runs of it | stack | rows | MAPE % | bias % | within 10 % | p10-p90 covers |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (a, stack), rows in sorted(groups.items()):
        n = len(rows)
        errs = [e for e, _ in rows]
        print("| %s | %s | %s | %d | %.1f | %+.1f | %.0f%% | %.0f%% |" % (
            a, seen[(a, stack)], stack, n, 100 * sum(abs(e) for e in errs) / n,
            100 * sum(errs) / n, 100 * sum(abs(e) <= 0.10 for e in errs) / n,
            100 * sum(c for _, c in rows) / n))
    folds(arch, fitted, unseen, comm, paths, extra, bound)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly, as a Unix filter does
    main()
