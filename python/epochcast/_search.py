"""_search.py: Context.optimize (ec_optimize, the layout search) and Context.plan (ec_plan, the
cheapest or fastest configuration under constraints), as the Lua ec.optimize and ec.plan: the
keys are split into base config, search keys or plan options and axes exactly as there, the
search runs in C, and the rows are copied out.  Nothing is modelled here."""
from ._context import KEYS, KEY_SET, _Progress, raise_status, text_of
from ._errors import BadValueError, UnknownKeyError
from ._lib import ffi, lib
from ._result import RESULT_FIELDS, RowDecoder, _duration, _money
from . import _table

_LAYOUT_TEXT_KEYS = ("model", "gpu", "strategy", "sharding", "pp_schedule", "checkpointing", "precision",
                     "seq_len")
_LAYOUT_COLUMNS = ["model", "gpu", "num_gpus", "dp", "tp", "pp", "cp", "ep", "strategy", "sharding", "zero_stage",
                   "pp_schedule", "pp_chunks", "batch_per_gpu", "grad_accum", "checkpointing", "precision", "seq_len",
                   "global_batch", "tokens_per_s", "mfu_frac", "hfu_frac", "step_s", "peak_bytes", "capacity_bytes",
                   "fits", "train_s", "cost", "price_per_hour", "exposed_comm_s", "pp_bubble_s", "recompute_s",
                   "behind_frac", "lost", "reason", "train_time_h", "cost_usd", "price_currency", "price_offer"]


def value_of_text(t):
    """A config value's text as the Lua rows have it: a number when it reads as one."""
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def _list_text(key, v):
    if isinstance(v, (list, tuple)):
        if not v:
            raise BadValueError("key '%s': an empty list" % key, lib.EC_EINVAL, key)
        return b",".join(text_of(key, x) for x in v)
    return text_of(key, v)


class Optimized:
    """The result of a layout search: .layouts (the ranked layouts that fit, best first),
    .no_fit (near misses that do not fit), .stats (considered, pruned_divide, pruned_memory,
    priced, refused, fit, ranked, search_s, threads, first_divide), .best (the best row or
    None)."""

    def __init__(self, layouts, no_fit, stats, best):
        self.layouts, self.no_fit, self.stats, self.best = layouts, no_fit, stats, best

    def plot(self, y="tokens_per_s", ax=None):
        """Bars of the ranked layouts' y (tokens_per_s, cost, ...) with matplotlib."""
        from . import plot as _plot
        return _plot.layouts(self.layouts, y=y, ax=ax)

    def __repr__(self):
        s = self.stats
        head = "optimize: %d candidates, %d priced, %d fit" % (s["considered"], s["priced"], s["fit"])
        if self.best is None:
            return head + "; no layout fits"
        b = self.best
        return head + "; best: dp %s x tp %s x pp %s x cp %s, %s, micro-batch %s, %.0f tokens/s, MFU %.1f %%" % (
            b["dp"], b["tp"], b["pp"], b["cp"], b["strategy"], b["batch_per_gpu"], b["tokens_per_s"],
            100 * b["mfu_frac"])


def _layout_row(l):
    r = {}
    buf = ffi.new("char[]", lib.EC_PATH_MAX)
    for k in _LAYOUT_TEXT_KEYS:
        if lib.ec_config_get(ffi.addressof(l, "config"), k.encode(), buf, lib.EC_PATH_MAX) == 0:
            r[k] = ffi.string(buf).decode("utf-8", "replace")
    c = l.config
    r.update(num_gpus=c.num_gpus, tp=c.tp, pp=c.pp, cp=c.cp, ep=c.ep, dp=l.dp, batch_per_gpu=c.batch_per_gpu,
             grad_accum=c.grad_accum, zero_stage=c.zero_stage, pp_chunks=c.pp_chunks, global_batch=l.global_batch,
             tokens_per_s=l.tokens_per_s, mfu_frac=l.mfu_frac, hfu_frac=l.hfu_frac, step_s=l.step_s,
             peak_bytes=l.peak_bytes, capacity_bytes=l.capacity_bytes, fits=bool(l.fits), train_s=l.train_s,
             cost=l.cost, price_per_hour=l.price_per_hour, exposed_comm_s=l.exposed_comm_s,
             pp_bubble_s=l.comm.pp_bubble_s, recompute_s=l.recompute_s, behind_frac=l.behind_frac,
             lost=ffi.string(lib.ec_optimize_loss_name(l.lost)).decode(),
             reason=ffi.string(l.reason).decode("utf-8", "replace"), train_time_h=l.train_time_h,
             cost_usd=l.cost_usd, price_currency=ffi.string(l.price_currency).decode("utf-8", "replace"),
             price_offer=ffi.string(l.price_offer).decode("utf-8", "replace"))
    r["checkpointing"] = value_of_text(r.get("checkpointing", "0"))
    r["seq_len"] = value_of_text(r.get("seq_len", "0"))
    return r


def optimize(ctx, keys, progress):
    h = ctx._h()
    base, search = {}, {}
    for k, v in keys.items():
        if v is None:
            continue
        (search if lib.ec_optimize_is_key(k.encode()) else base)[k] = v
    cfg = ctx._config(h, base)
    out = ffi.new("ec_optimize **")
    st = lib.ec_optimize_new(h, cfg, out)
    if st != 0:
        raise_status(h, st)
    opt = ffi.gc(out[0], lib.ec_optimize_free)
    top = 10
    for k, v in search.items():
        text = _list_text(k, v)
        if k == "top":
            top = int(text)
        st = lib.ec_optimize_set(opt, k.encode(), text)
        if st != 0:
            raise_status(h, st, key=k, cls=UnknownKeyError if st == lib.EC_ENOTFOUND else None)
    with _Progress(h, progress) as p:
        st = lib.ec_optimize_run(opt)
        p.check(st)
    lay = ffi.new("ec_optimize_layout *")
    lists = []
    for no_fit in (0, 1):
        n = lib.ec_optimize_no_fit_count(opt) if no_fit else lib.ec_optimize_count(opt)
        rows = []
        for i in range(min(n, top)):
            if lib.ec_optimize_get(opt, no_fit, i, lay) != 0:
                break
            rows.append(_layout_row(lay[0]))
        lists.append(rows)
    s = ffi.new("ec_optimize_stats *")
    lib.ec_optimize_stats_get(opt, s)
    stats = {"considered": s.considered, "pruned_divide": s.pruned_divide, "pruned_memory": s.pruned_memory,
             "priced": s.priced, "refused": s.refused, "fit": s.fit, "no_price": s.no_price,
             "ranked": lib.ec_optimize_count(opt), "search_s": s.search_s, "threads": s.threads,
             "first_divide": ffi.string(s.first_divide).decode("utf-8", "replace") if s.first_divide else ""}
    ffi.release(opt)
    best = lists[0][0] if lists[0] else None
    return Optimized(_table.from_rows(lists[0], _LAYOUT_COLUMNS), _table.from_rows(lists[1], _LAYOUT_COLUMNS),
                     stats, best)


# ---- plan ---------------------------------------------------------------------------------

_PLAN_DERIVED = frozenset(("strategy", "topology", "nodes", "task", "seq_len", "image_size"))


class Plan:
    """The result of a plan: .rows (every point: its config keys, verdict, message, on_front,
    best, then the result columns), .best (the chosen row, or None), .front (the Pareto front
    of run time against cost, by run time), .reason (why nothing was chosen, or None)."""

    def __init__(self, rows, best, front, reason, options):
        self.rows, self.best, self.front, self.reason, self.options = rows, best, front, reason, options

    def plot(self, ax=None):
        """Run time against cost of every priced point, the front joined, the best starred,
        the deadline and budget as lines (matplotlib)."""
        from . import plot as _plot
        return _plot.plan(self, ax=ax)

    def __repr__(self):
        if self.best is None:
            return "plan: %s" % self.reason
        b = self.best
        return "plan: best %s x %s, batch_per_gpu %s: run %s, cost %s (%s)" % (
            b.get("gpu"), b.get("num_gpus", 1), b.get("batch_per_gpu"), _duration(b["run_s"]),
            _money(b["cost_run"], b.get("price_currency", "")), b.get("price_offer", ""))


def plan(ctx, keys):
    h = ctx._h()
    opts = ffi.new("ec_plan_opts *")
    lib.ec_plan_opts_init(opts)
    base, axes = {}, {}
    for k, v in keys.items():
        if v is None:
            continue
        if lib.ec_plan_opts_is_key(k.encode()):
            st = lib.ec_plan_opts_set(h, opts, k.encode(), text_of(k, v))
            if st != 0:
                raise_status(h, st, key=k)
        elif isinstance(v, (list, tuple)):
            if k not in KEY_SET:
                raise UnknownKeyError("plan: unknown key '%s'" % k, lib.EC_ENOTFOUND, k)
            axes[k] = v
        else:
            base[k] = v
    cfg = ctx._config(h, base)
    out = ffi.new("ec_plan **")
    st = lib.ec_plan_new(h, cfg, opts, out)
    if st != 0:
        raise_status(h, st)
    pl = ffi.gc(out[0], lib.ec_plan_free)
    for k in sorted(axes, key=KEYS.index):
        if not axes[k]:
            raise BadValueError("plan: key '%s': an empty list" % k, lib.EC_EINVAL, k)
        texts = [ffi.new("char[]", text_of(k, x)) for x in axes[k]]
        st = lib.ec_plan_axis(pl, k.encode(), ffi.new("char *[]", texts), len(texts))
        if st != 0:
            raise_status(h, st, key=k)
    st = lib.ec_plan_run(pl)
    if st != 0:
        raise_status(h, st)
    rows = _plan_rows(h, pl)
    best_i = lib.ec_plan_best(pl)
    ffi.release(pl)
    best = rows[best_i] if best_i >= 0 else None
    front = sorted((r for r in rows if r["on_front"]), key=lambda r: r["run_s"])
    reason = None if best is not None else \
        "no configuration meets every constraint (see each row's verdict and message)"
    cfg_cols = [k for k in KEYS if any(k in r for r in rows)]
    order = cfg_cols + ["verdict", "message", "on_front", "best"]
    order += [c for c, _p, _k in RESULT_FIELDS if c not in order]  # dp, tp, ...: one column each
    options = {"deadline_s": opts.deadline_s, "budget": opts.budget, "max_gpus": opts.max_gpus,
               "must_fit": bool(opts.must_fit), "goal": "fastest" if opts.goal else "cheapest",
               "global_batch": opts.global_batch, "max_batch_per_gpu": opts.max_batch_per_gpu}
    return Plan(_table.from_rows(rows, order), best, _table.from_rows(front, order), reason, options)


def _plan_rows(h, pl):
    dec = RowDecoder()
    pt = ffi.new("ec_plan_point *")
    shown = ffi.new("ec_config *")
    buf = ffi.new("char[]", lib.EC_PATH_MAX)
    rows = []
    for i in range(lib.ec_plan_count(pl)):
        lib.ec_plan_get(pl, i, pt)
        predicted = pt.verdict not in (lib.EC_PLAN_REFUSED, lib.EC_PLAN_TOO_MANY_GPUS)
        row = {}
        ffi.memmove(shown, pt.config, ffi.sizeof("ec_config"))
        if predicted:
            lib.ec_config_resolve(h, pt.config, shown)
        for k, key in enumerate(KEYS):
            if lib.ec_config_get_at(shown, k, buf, lib.EC_PATH_MAX) != 0 or buf[0] == b"\0":
                continue
            if not lib.ec_config_is_set(shown, k) and not (predicted and key in _PLAN_DERIVED):
                continue
            row[key] = value_of_text(ffi.string(buf).decode("utf-8", "replace"))
        row["verdict"] = ffi.string(lib.ec_plan_verdict_name(pt.verdict)).decode()
        row["message"] = ffi.string(pt.message).decode("utf-8", "replace")
        row["on_front"] = bool(pt.on_front)
        row["best"] = bool(pt.best)
        vals = dec.convert(dec.struct.unpack_from(ffi.buffer(pt.result, ffi.sizeof("ec_result"))))
        if predicted:
            row.update(zip(dec.columns, vals))
        else:
            row.update((c, None) for c in dec.columns)
        rows.append(row)
    return rows
