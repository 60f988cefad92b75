"""_runs.py: Context.validate and Context.calibrate, the CLI's commands on a run-record CSV
(docs/DESIGN.md section 4), over ec_runs_open/ec_runs_next, ec_predict, ec_result_metric,
ec_error_stats_compute, ec_calibrate, ec_calibrate_cv and ec_profile_write.  Every number is
the library's; the rows and statistics are those `epochcast validate -o` and `calibrate` print."""
import os

from ._context import _Progress, raise_status
from ._lib import ffi, lib
from . import _table

METRICS = [ffi.string(lib.ec_metric_name(i)).decode() for i in range(lib.EC_METRIC_FIRST_STEP_S + 1)]
VALIDATE_COLUMNS = ["id", "gpu", "model", "metric", "predicted", "p10", "p90", "measured", "error_pct",
                    "in_p10_p90"]
STATS = ("n", "mape_frac", "bias_frac", "max_abs_frac", "within_10_frac", "within_20_frac")


def _error_stats(pred, meas):
    n = len(pred)
    s = ffi.new("ec_error_stats *")
    lib.ec_error_stats_compute(ffi.new("double[]", pred or [0.0]), ffi.new("double[]", meas or [0.0]), n, s)
    return {k: getattr(s, k) for k in STATS}


class Validation:
    """Measured runs against predictions: .rows (a table as `epochcast validate -o`), .stats
    (n, mape_frac, bias_frac, max_abs_frac, within_10_frac, within_20_frac over the runs with a
    continuous metric), .by_metric, .by_gpu and .by_model (tables of the same statistics per
    group: each metric scored as itself), and
    .oom: out-of-memory outcomes (metric oom, never in the MAPE) as died, caught, missed, ran,
    false_alarm."""

    def __init__(self, path, rows, stats, by_metric, by_gpu, by_model, oom):
        self.path, self.rows, self.stats, self.by_gpu, self.by_model = path, rows, stats, by_gpu, by_model
        self.by_metric, self.oom = by_metric, oom

    def plot(self, ax=None):
        """Predicted against measured, one colour per GPU, with the y = x line (matplotlib)."""
        from . import plot as _plot
        return _plot.validate(self.rows, ax=ax)

    def __repr__(self):
        s = self.stats
        return "%s: %d runs, MAPE %.1f %%, within 10 %% %.1f %%, within 20 %% %.1f %%, bias %+.1f %%" % (
            self.path, s["n"], 100 * s["mape_frac"], 100 * s["within_10_frac"], 100 * s["within_20_frac"],
            100 * s["bias_frac"])


def _groups(rows, key):
    by = {}
    for r in rows:
        if r["metric"] == "oom":
            continue
        by.setdefault(r[key], ([], []))
        by[r[key]][0].append(r["predicted"])
        by[r[key]][1].append(r["measured"])
    out = []
    for k in sorted(by):
        d = {key: k}
        d.update(_error_stats(*by[k]))
        out.append(d)
    return _table.from_rows(out, [key] + list(STATS))


def validate(ctx, path, profile, allow_paths, progress):
    h = ctx._h()
    out = ffi.new("ec_runs_reader **")
    spath = os.fsencode(path)
    st = lib.ec_runs_open(h, spath, lib.EC_RUNS_ALLOW_PATHS if allow_paths else 0, out)
    if st != 0:
        raise_status(h, st)
    rd = ffi.gc(out[0], lib.ec_runs_close)
    run = ffi.new("ec_run **")
    res = ffi.new("ec_result *")
    gi = ffi.new("size_t *")
    info = ffi.new("ec_gpu_info *")
    lo, hi = ffi.new("double *"), ffi.new("double *")
    cfg = ffi.new("ec_config *")
    rows = []
    with _Progress(h, progress) as p:
        while True:
            st = lib.ec_runs_next(rd, run)
            p.check(st)
            r = run[0]
            if r == ffi.NULL:
                break
            ffi.memmove(cfg, ffi.addressof(r, "config"), ffi.sizeof("ec_config"))
            st = lib.ec_ctx_progress(h, b"validate", lib.ec_runs_read_frac(rd), 1)
            if st == 0 and profile is not None:
                st = lib.ec_config_set(h, cfg, b"profile", os.fsencode(profile))
            if st == 0:
                st = lib.ec_predict(h, cfg, res)
            if st != 0:
                p.check(0)  # the callback's exception first
                raise_status(h, st, prefix="%s:%d: " % (os.fsdecode(spath), r.line)
                             if st != lib.EC_ECANCELED else "")
            if lib.ec_gpu_find(h, r.config.gpu, gi) == 0 and lib.ec_gpu_get(h, gi[0], info) == 0:
                gpu = ffi.string(info.id).decode()
            else:
                gpu = ffi.string(r.config.gpu).decode()
            pred = lib.ec_result_metric(res, r.metric)
            meas = r.value
            lib.ec_result_metric_interval(res, r.metric, lo, hi)
            covered = (lo[0] <= meas <= hi[0]) if hi[0] > 0 else None
            rows.append({"id": ffi.string(r.id).decode("utf-8", "replace"), "gpu": gpu,
                         "model": ffi.string(r.config.model).decode("utf-8", "replace"),
                         "metric": METRICS[r.metric] if 0 <= r.metric < len(METRICS) else str(r.metric),
                         "predicted": pred, "p10": lo[0] if covered is not None else None,
                         "p90": hi[0] if covered is not None else None, "measured": meas,
                         "error_pct": None if r.metric == lib.EC_METRIC_OOM else (pred - meas) / meas * 100,
                         "in_p10_p90": covered})
    ffi.release(rd)
    cont = [r for r in rows if r["metric"] != "oom"]
    stats = _error_stats([r["predicted"] for r in cont], [r["measured"] for r in cont])
    outcomes = [(r["measured"] > 0.5, r["predicted"] > 0.5) for r in rows if r["metric"] == "oom"]
    oom = {"died": sum(1 for m, _ in outcomes if m), "caught": sum(1 for m, p in outcomes if m and p),
           "missed": sum(1 for m, p in outcomes if m and not p), "ran": sum(1 for m, _ in outcomes if not m),
           "false_alarm": sum(1 for m, p in outcomes if not m and p)}
    return Validation(os.fsdecode(spath), _table.from_rows(rows, VALIDATE_COLUMNS), stats, _groups(rows, "metric"),
                      _groups(rows, "gpu"), _groups(rows, "model"), oom)


def _kernels(rep, j):
    """Entry j's kernels: an architecture's kernel classes, as kernels= spells them; attn_eff's
    attention kernels (ec_fit_report.attn_kernels), as models/attention.csv spells them."""
    buf = ffi.new("char[]", 96)
    if ffi.string(rep.names[j]).decode() == "attn_eff" and not rep.architectures[j][0]:
        lib.ec_fit_attn_kernels_names(rep.attn_kernels, buf, 96)
    else:
        lib.ec_fit_kernels_names(rep.kernels[j], buf, 96)
    return ffi.string(buf).decode()


class Calibration:
    """A fit of the physical parameters: .params (a table: parameter, architecture, value,
    stderr, kernels: an architecture's entry's kernel classes, the only ones it prices; attn_eff's,
    the attention kernels it scales), n_runs, iterations, mape_before_frac, mape_after_frac, and from the
    leave-one-GPU-out cross-validation (None when it did not run) cv_mape_frac, cv_runs,
    error_log_sd and comm_error_log_sd ({"direct": sd, "host": sd, "host_shared": sd}: the communication part of a
    multi-GPU prediction's sd, from the file's multi-GPU runs, never fitted); from the
    leave-one-architecture-out one (None when it did not run: runs of one architecture)
    arch_error_log_sd and arch_host_error_log_sd (the sds of a GPU-bound and a host-bound
    prediction on an architecture the fit has not seen) and .arch_terms (a table: architecture,
    class "gpu" or "host", runs, rms_log, bias_log, sd_without, covered: each architecture's
    held-out runs of the class, their rms and mean log(predicted / measured) of the step time, the
    class's sd without that architecture and how many of its runs that sd's p10-p90 holds;
    docs/accuracy.md, "Which architecture sets the sd"); .profile is the CSV written (or None)."""

    def __init__(self, rep, cv_ran, profile, arch_ran=False):
        self.params = _table.from_rows(
            [{"parameter": ffi.string(rep.names[j]).decode(),
              "architecture": ffi.string(rep.architectures[j]).decode(),
              "value": rep.values[j], "stderr": rep.stderrs[j], "kernels": _kernels(rep, j)}
             for j in range(rep.n_params)],
            ["parameter", "architecture", "value", "stderr", "kernels"])
        self.n_runs, self.iterations = rep.n_runs, rep.iterations
        self.mape_before_frac, self.mape_after_frac = rep.mape_before_frac, rep.mape_after_frac
        self.cv_mape_frac = rep.cv_mape_frac if cv_ran else None
        self.cv_runs = rep.cv_runs if cv_ran else None
        self.error_log_sd = rep.error_log_sd if cv_ran else None
        self.comm_error_log_sd = ({"direct": rep.comm_error_log_sd[lib.EC_COMM_DIRECT],
                                   "host": rep.comm_error_log_sd[lib.EC_COMM_HOST],
                                   "host_shared": rep.comm_error_log_sd[lib.EC_COMM_HOST_SHARED]}
                                  if cv_ran else None)
        self.arch_error_log_sd = rep.arch_error_log_sd if arch_ran else None
        self.arch_host_error_log_sd = rep.arch_host_error_log_sd if arch_ran else None
        terms = []
        for j in range(rep.n_arch_terms if arch_ran else 0):
            t = rep.arch_terms[j]
            for h, name in ((lib.EC_CLASS_GPU, "gpu"), (lib.EC_CLASS_HOST, "host")):
                if t.runs[h] > 0:
                    terms.append({"architecture": ffi.string(t.architecture).decode(), "class": name,
                                  "runs": t.runs[h], "rms_log": t.msq_log[h] ** 0.5, "bias_log": t.bias_log[h],
                                  "sd_without": t.sd_without[h], "covered": t.covered[h]})
        self.arch_terms = _table.from_rows(terms, ["architecture", "class", "runs", "rms_log", "bias_log",
                                                   "sd_without", "covered"])
        self.n_left_out = rep.n_left_out
        self.profile = profile

    def __repr__(self):
        s = "calibration: %d runs in %d iterations; MAPE %.1f %% before, %.1f %% after (in-sample)" % (
            self.n_runs, self.iterations, 100 * self.mape_before_frac, 100 * self.mape_after_frac)
        if self.cv_mape_frac is not None:
            s += "; leave-one-GPU-out MAPE %.1f %% on %d runs" % (100 * self.cv_mape_frac, self.cv_runs)
        return s + ("; wrote %s" % self.profile if self.profile else "")


def calibrate(ctx, path, out, all_runs, allow_paths, cross_validate, progress):
    h = ctx._h()
    pr = ffi.new("ec_runs **")
    st = lib.ec_runs_load_v2(h, os.fsencode(path), lib.EC_RUNS_ALLOW_PATHS if allow_paths else 0, pr)
    if st != 0:
        raise_status(h, st)
    runs = ffi.gc(pr[0], lib.ec_runs_free)
    n = lib.ec_runs_count(runs)
    use = ffi.new("unsigned char[]", max(n, 1))
    cv_use = ffi.new("unsigned char[]", max(n, 1))  # + the multi-GPU runs the model prices: scored, never fitted
    res = ffi.new("ec_result *")
    for i in range(n):
        run = lib.ec_runs_get(runs, i)
        use[i] = 1 if all_runs or run.config.num_gpus == 1 else 0
        cv_use[i] = 1 if use[i] or lib.ec_predict(h, ffi.addressof(run, "config"), res) == 0 else 0
    rep = ffi.new("ec_fit_report *")
    cv_ran = arch_ran = False
    with _Progress(h, progress) as p:
        st = lib.ec_calibrate(h, runs, use, rep)
        p.check(st)
        if cross_validate:
            st = lib.ec_calibrate_cv(h, runs, cv_use, rep)
            if st not in (0, lib.EC_EINVAL):
                p.check(st)
            p.check(0)
            cv_ran = st == 0
            st = lib.ec_calibrate_cv_arch(h, runs, use, rep)
            if st not in (0, lib.EC_EINVAL):
                p.check(st)
            p.check(0)
            arch_ran = st == 0
        if out is not None:
            st = lib.ec_profile_write(h, rep, os.fsencode(out))
            p.check(st)
    ffi.release(runs)
    return Calibration(rep, cv_ran, os.fsdecode(out) if out is not None else None, arch_ran)
