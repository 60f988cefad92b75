"""epochcast.plot: pictures of results with matplotlib (imported only here, only when a plot is
asked for).  Every function takes what the binding returned (a Result, a sweep table, a Plan,
a Validation's rows, a layout table), draws on `ax` (a new figure when None) and returns the
Axes.  They only draw the library's numbers."""
from ._table import rows_of


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib
        if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline") \
                and not _interactive():
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("epochcast.plot needs matplotlib (Debian: apt install python3-matplotlib)") from e
    _fig, ax = plt.subplots(figsize=(7, 4))
    return ax


def _interactive():
    import os
    return bool(os.environ.get("DISPLAY") or os.environ.get("MPLBACKEND"))


_BREAKDOWN = [("forward", "breakdown_forward_s"), ("backward", "breakdown_backward_s"),
              ("optimizer", "breakdown_optimizer_s"), ("H2D", "breakdown_h2d_s"),
              ("CPU overhead", "breakdown_cpu_overhead_s"), ("loader", "breakdown_loader_s"),
              ("comm", "breakdown_comm_s")]
_MEMORY = [("weights", "memory_weights_bytes"), ("gradients", "memory_grads_bytes"),
           ("optimizer", "memory_optimizer_bytes"), ("autocast", "memory_cast_cache_bytes"),
           ("activations", "memory_activations_bytes"), ("workspace", "memory_workspace_bytes"),
           ("context", "memory_context_bytes"), ("allocator", "memory_allocator_bytes")]


def result(res, kind="breakdown", ax=None):
    """A Result's step by part (ms) or its peak memory by part (GiB) against the capacity."""
    ax = _axes(ax)
    if kind == "breakdown":
        names = [n for n, _ in _BREAKDOWN]
        vals = [getattr(res, c) * 1e3 for _, c in _BREAKDOWN]
        ax.barh(names, vals)
        ax.set_xlabel("ms per step")
        ax.set_title("step %.1f ms, bottleneck %s" % (res.step_s * 1e3, res.bottleneck))
    elif kind == "memory":
        names = [n for n, _ in _MEMORY]
        vals = [getattr(res, c) / 2 ** 30 for _, c in _MEMORY]
        left = 0.0
        for n, v in zip(names, vals):
            ax.barh(["peak"], [v], left=left, label=n)
            left += v
        ax.axvline(res.capacity_bytes / 2 ** 30, color="k", linestyle="--", label="capacity")
        ax.set_xlabel("GiB")
        ax.legend(fontsize="small", ncol=3)
        ax.set_title("peak %.2f GiB of %.2f, fits: %s" % (res.peak_bytes / 2 ** 30, res.capacity_bytes / 2 ** 30,
                                                         "yes" if res.fits else "no"))
    else:
        raise ValueError("plot kind is 'breakdown' or 'memory', not %r" % (kind,))
    return ax


def sweep(table, x, y="step_s", group=None, ax=None, logx=False, logy=False):
    """y against x of a sweep's rows (refused points left out), one line per value of group."""
    ax = _axes(ax)
    rows = [r for r in rows_of(table) if not r.get("error")]
    groups = {}
    for r in rows:
        groups.setdefault(r[group] if group else y, []).append((r[x], r[y]))
    for g, pts in groups.items():
        pts.sort(key=lambda p: p[0])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=str(g))
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    if group:
        ax.legend(title=group, fontsize="small")
    return ax


def plan(p, ax=None):
    """A plan's run time (h) against cost: every priced point, the Pareto front joined, the
    best starred, the deadline and budget when given."""
    ax = _axes(ax)
    rows = [r for r in rows_of(p.rows) if r.get("cost_run") and r.get("run_s")]
    ax.scatter([r["run_s"] / 3600 for r in rows], [r["cost_run"] for r in rows], s=12, alpha=0.5, label="points")
    front = rows_of(p.front)
    if front:
        ax.plot([r["run_s"] / 3600 for r in front], [r["cost_run"] for r in front], "o-", label="front")
    if p.best is not None:
        ax.plot([p.best["run_s"] / 3600], [p.best["cost_run"]], "*", markersize=16, label="best")
    if p.options.get("deadline_s"):
        ax.axvline(p.options["deadline_s"] / 3600, color="r", linestyle="--", label="deadline")
    if p.options.get("budget"):
        ax.axhline(p.options["budget"], color="g", linestyle="--", label="budget")
    ax.set_xlabel("run time (h)")
    ax.set_ylabel("cost")
    ax.legend(fontsize="small")
    return ax


def validate(table, ax=None):
    """Predicted against measured, one colour per GPU, and the line y = x."""
    ax = _axes(ax)
    rows = rows_of(table)
    by = {}
    for r in rows:
        by.setdefault(r["gpu"], []).append((r["measured"], r["predicted"]))
    for g, pts in sorted(by.items()):
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=g, s=14)
    if rows:
        lo = min(min(r["measured"], r["predicted"]) for r in rows)
        hi = max(max(r["measured"], r["predicted"]) for r in rows)
        ax.plot([lo, hi], [lo, hi], "k--", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("measured")
    ax.set_ylabel("predicted")
    ax.legend(fontsize="small")
    return ax


def layouts(table, y="tokens_per_s", ax=None):
    """Bars of y for each layout of an optimize table, best first."""
    ax = _axes(ax)
    rows = rows_of(table)
    names = ["dp%s tp%s pp%s cp%s %s mb%s" % (r["dp"], r["tp"], r["pp"], r["cp"], r["strategy"], r["batch_per_gpu"])
             for r in rows]
    ax.barh(names[::-1], [r[y] for r in rows][::-1])
    ax.set_xlabel(y)
    return ax
