"""_result.py: an ec_result as a Python object and as table rows.

RESULT_FIELDS is the binding's copy of the result columns of lua/l_result.c (the CSV columns of
`epochcast predict --csv`, in order, units in the names): the same names from the CLI, Lua and
Python (tests/test_cli_parity.py checks the list against the CLI's header).  Nothing is
computed: every value is copied from the struct the library filled.  A Result reads its
fields lazily from that struct; table rows decode many results at once with one struct.unpack
per row (RowDecoder).
"""
import struct
import sys
import warnings

from ._errors import EpochcastWarning
from ._lib import ffi, lib

# (column, path in ec_result, kind): kinds num (double), int, bool, bottleneck, text, warnings
RESULT_FIELDS = [
    ("step_s", "step_s", "num"), ("samples_per_s", "samples_per_s", "num"), ("epoch_s", "epoch_s", "num"),
    ("run_s", "run_s", "num"), ("gpu_util_frac", "gpu_util_frac", "num"),
    ("bottleneck", "bottleneck", "bottleneck"),
    ("peak_bytes", "memory.peak_bytes", "num"), ("capacity_bytes", "memory.capacity_bytes", "num"),
    ("fits", "memory.fits", "bool"),
    ("gpu_busy_s", "gpu_busy_s", "num"), ("cpu_issue_s", "cpu_issue_s", "num"),
    ("flop_per_step", "flop_per_step", "num"), ("mfu_frac", "mfu_frac", "num"),
    ("kernels_per_step", "kernels_per_step", "num"), ("steps_per_epoch", "steps_per_epoch", "num"),
    ("breakdown_forward_s", "breakdown.forward_s", "num"), ("breakdown_backward_s", "breakdown.backward_s", "num"),
    ("breakdown_optimizer_s", "breakdown.optimizer_s", "num"), ("breakdown_h2d_s", "breakdown.h2d_s", "num"),
    ("breakdown_cpu_overhead_s", "breakdown.cpu_overhead_s", "num"),
    ("breakdown_loader_s", "breakdown.loader_s", "num"), ("breakdown_comm_s", "breakdown.comm_s", "num"),
    ("memory_weights_bytes", "memory.weights_bytes", "num"), ("memory_grads_bytes", "memory.grads_bytes", "num"),
    ("memory_optimizer_bytes", "memory.optimizer_bytes", "num"),
    ("memory_cast_cache_bytes", "memory.cast_cache_bytes", "num"),
    ("memory_activations_bytes", "memory.activations_bytes", "num"),
    ("memory_workspace_bytes", "memory.workspace_bytes", "num"),
    ("memory_context_bytes", "memory.context_bytes", "num"),
    ("memory_allocator_bytes", "memory.allocator_bytes", "num"),
    ("epoch_p10_s", "epoch_p10_s", "num"), ("epoch_p50_s", "epoch_p50_s", "num"),
    ("epoch_p90_s", "epoch_p90_s", "num"),
    ("single_gpu_samples_per_s", "single_gpu_samples_per_s", "num"),
    ("scaling_efficiency_frac", "scaling_efficiency_frac", "num"),
    ("busbw_bytes_per_s", "busbw_bytes_per_s", "num"), ("comm_total_s", "comm_total_s", "num"),
    ("straggler_s", "straggler_s", "num"), ("other_gpu_busy_s", "other_gpu_busy_s", "num"),
    ("other_gpu_peak_bytes", "other_gpu_peak_bytes", "num"),
    ("step_p10_s", "step_p10_s", "num"), ("step_p90_s", "step_p90_s", "num"),
    ("price_per_hour", "price_per_hour", "num"), ("cost_per_epoch", "cost_per_epoch", "num"),
    ("cost_run", "cost_run", "num"), ("price_offer", "price_offer", "text"),
    ("tokens_per_s", "tokens_per_s", "num"), ("gpu_s_per_token", "gpu_s_per_token", "num"),
    ("hfu_frac", "hfu_frac", "num"),
    ("dp", "dp", "int"), ("tp", "tp", "int"), ("pp", "pp", "int"), ("cp", "cp", "int"), ("ep", "ep", "int"),
    ("comm_tp_s", "comm.tp_s", "num"), ("comm_cp_s", "comm.cp_s", "num"), ("comm_ep_s", "comm.ep_s", "num"),
    ("comm_dp_reduce_s", "comm.dp_reduce_s", "num"), ("comm_shard_wait_s", "comm.shard_wait_s", "num"),
    ("comm_overlap_s", "comm.overlap_s", "num"), ("comm_offload_s", "comm.offload_s", "num"),
    ("comm_pp_bubble_s", "comm.pp_bubble_s", "num"), ("comm_pp_p2p_s", "comm.pp_p2p_s", "num"),
    ("host_pinned_bytes", "host_pinned_bytes", "num"),
    ("memory_allocated_bytes", "memory.allocated_bytes", "num"),
    ("memory_reserved_bytes", "memory.reserved_bytes", "num"), ("memory_nvml_bytes", "memory.nvml_bytes", "num"),
    ("eval_s", "eval_s", "num"), ("eval_step_s", "eval_step_s", "num"), ("first_step_s", "first_step_s", "num"),
    ("train_s", "train_s", "num"),
    ("memory_peak_phase", "memory.peak_phase", "phase"), ("memory_needed_bytes", "memory.needed_bytes", "num"),
    ("memory_headroom_bytes", "memory.headroom_bytes", "num"), ("memory_at_edge", "memory.at_edge", "bool"),
    ("train_time_h", "train_time_h", "num"), ("cost_usd", "cost_usd", "num"),
    ("cost_per_million_tokens", "cost_per_million_tokens", "num"), ("price_currency", "price_currency", "text"),
    ("warnings", "warning_text", "warnings"),
]
RESULT_COLUMNS = [f[0] for f in RESULT_FIELDS]

BOTTLENECKS = [ffi.string(lib.ec_bottleneck_name(i)).decode() for i in range(5)]
PEAK_PHASES = [ffi.string(lib.ec_peak_phase_name(i)).decode() for i in range(4)]


def _duration(s):
    """A duration as the CLI prints it (ec_format_duration): "850 ms", "4.2 h", "46.6 days"; "-" unknown."""
    buf = ffi.new("char[48]")
    return ffi.string(lib.ec_format_duration(s if s is not None else 0.0, buf, 48)).decode()


def _money(x, currency):
    """An amount as the CLI prints it (ec_format_money): "USD 1,021.44", "USD 1,082,388"; "-" unknown."""
    buf = ffi.new("char[96]")
    cur = (currency or "").encode("utf-8", "replace")
    return ffi.string(lib.ec_format_money(x if x is not None else 0.0, cur, buf, 96)).decode("utf-8", "replace")


def _text(b):
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


def split_warnings(text):
    return [w for w in text.split("; ") if w]


class RowDecoder:
    """Decode the bytes of an ec_result (or of `stride`-byte records holding one at `base`)
    into the values of `columns` (RESULT_COLUMNS by default) with one struct.unpack."""

    def __init__(self, ctype="ec_result", base=0, columns=None, fields=RESULT_FIELDS):
        chosen = [f for f in fields if columns is None or f[0] in columns]
        if columns is not None:
            unknown = set(columns) - {f[0] for f in fields}
            if unknown:
                raise KeyError("unknown result column(s): %s" % ", ".join(sorted(unknown)))
        items = []
        for col, path, kind in chosen:
            off = base + ffi.offsetof(ctype, *path.split("."))
            if kind == "num":
                code, size = "d", 8
            elif kind in ("int", "bool", "bottleneck", "phase"):
                code, size = "i", 4
            else:
                size = _array_size(ctype, path)
                code = "%ds" % size
            items.append((off, code, size, col, kind))
        order = sorted(range(len(items)), key=lambda i: items[i][0])
        fmt, pos = ["="], 0
        for i in order:
            off, code, size = items[i][0], items[i][1], items[i][2]
            if off > pos:
                fmt.append("%dx" % (off - pos))
            fmt.append(code)
            pos = off + size
        self.struct = struct.Struct("".join(fmt))
        self.columns = [items[i][3] for i in order]
        self.kinds = [items[i][4] for i in order]
        self.size = pos

    def convert(self, values):
        """Python values of one unpacked row, in self.columns order."""
        out = []
        for v, kind in zip(values, self.kinds):
            if kind == "num" or kind == "int":
                out.append(v)
            elif kind == "bool":
                out.append(v != 0)
            elif kind == "bottleneck":
                out.append(BOTTLENECKS[v] if 0 <= v < len(BOTTLENECKS) else str(v))
            elif kind == "phase":
                out.append(PEAK_PHASES[v] if 0 <= v < len(PEAK_PHASES) else str(v))
            else:
                out.append(_text(v))
        return out


def _array_size(ctype, path):
    t = ffi.typeof(ctype)
    for part in path.split("."):
        t = dict(t.fields)[part].type
    return ffi.sizeof(t)


def _getter(path, kind):
    parts = path.split(".")
    if kind == "num" or kind == "int":
        if len(parts) == 1:
            return lambda self: getattr(self._r, parts[0])
        return lambda self: getattr(getattr(self._r, parts[0]), parts[1])
    if kind == "bool":
        return lambda self: getattr(getattr(self._r, parts[0]), parts[1]) != 0
    if kind == "bottleneck":
        return lambda self: BOTTLENECKS[self._r.bottleneck]
    if kind == "phase":
        return lambda self: PEAK_PHASES[self._r.memory.peak_phase]
    if kind == "text":
        return lambda self: ffi.string(getattr(self._r, parts[0])).decode("utf-8", "replace")
    return lambda self: split_warnings(ffi.string(self._r.warning_text).decode("utf-8", "replace"))


GIB = 1024.0 ** 3


class Result:
    """One prediction.  Attributes are the result columns (step_s, samples_per_s, tokens_per_s,
    peak_bytes, fits, breakdown_forward_s, memory_activations_bytes, cost_per_epoch, ...; units
    in the names) and .warnings (a list); .config is the configuration as simulated (derived
    values filled in), .to_dict() the columns as a dict, str() the CLI's summary."""

    __slots__ = ("_r", "_cfg", "_ctx", "_config")

    def __init__(self, res, cfg, ctx):
        self._r = res
        self._cfg = cfg
        self._ctx = ctx
        self._config = None

    @property
    def config(self):
        """The configuration as ec_predict read it (ec_config_resolve): {key: value} of the
        keys given or derived (numbers as int or float, the rest as text)."""
        if self._config is None:
            from ._search import value_of_text
            self._config = {k: value_of_text(v) for k, v in self._ctx._resolved_config(self._cfg).items()
                            if v != ""}
        return dict(self._config)

    def to_dict(self):
        """The result columns (the CSV's) in order; warnings as the CSV's "; "-joined text."""
        out = {}
        for col, _path, kind in RESULT_FIELDS:
            v = getattr(self, col)
            out[col] = "; ".join(v) if kind == "warnings" else v
        return out

    def __getitem__(self, key):
        if key in _COLUMN_SET:
            return getattr(self, key)
        raise KeyError(key)

    def keys(self):
        return list(RESULT_COLUMNS)

    def __eq__(self, other):
        """The library filled both identically: every field's bytes equal (padding aside)."""
        if not isinstance(other, Result):
            return NotImplemented
        a, b = ffi.buffer(self._r), ffi.buffer(other._r)
        return all(a[lo:hi] == b[lo:hi] for lo, hi in _field_spans())

    __hash__ = None

    def plot(self, kind="breakdown", ax=None):
        """A bar chart of the step's time by part (kind="breakdown") or of peak memory by part
        against the GPU's capacity (kind="memory") with matplotlib; returns the Axes."""
        from . import plot as _plot
        return _plot.result(self, kind=kind, ax=ax)

    def summary(self):
        """The CLI's `epochcast predict` summary, plus the price and cost when known."""
        c = self._ctx._resolved_config(self._cfg, full=True)
        r = self._r

        def val(key):
            v = c.get(key, "")
            return "default" if v == "" or (key == "seq_len" and v == "0") else v

        lines = ["%s (%s task) on %s x %s, %s, batch_per_gpu %s, seq_len %s" % (
            val("model"), val("task"), val("gpu"), val("num_gpus"), val("precision"), val("batch_per_gpu"),
            val("seq_len"))]
        if r.tp > 1 or r.pp > 1 or r.cp > 1 or r.ep > 1:
            lines.append("  layout             dp %d x tp %d x pp %d x cp %d (ep %d)" % (r.dp, r.tp, r.pp, r.cp, r.ep))
        if r.step_p10_s > 0 and r.step_p90_s > r.step_s:  # the CLI's interval: the profile's p10-p90
            lines.append("  step time          %12.3f ms   (p10 %#.4g, p90 %#.4g ms)" % (
                r.step_s * 1e3, r.step_p10_s * 1e3, r.step_p90_s * 1e3))
        else:
            lines.append("  step time          %12.3f ms" % (r.step_s * 1e3))
        lines.append("  samples/s          %12.1f" % r.samples_per_s)
        if r.tokens_per_s != r.samples_per_s:
            lines.append("  tokens/s           %12.0f   (%.3g GPU-s per 1M tokens)" % (r.tokens_per_s,
                                                                                     r.gpu_s_per_token * 1e6))
        if r.epoch_s > 0:
            lines.append("  epoch time         %12s   (%.1f s; p10 %s, p90 %s; %.0f steps)" % (
                _duration(r.epoch_s), r.epoch_s, _duration(r.epoch_p10_s), _duration(r.epoch_p90_s),
                r.steps_per_epoch))
        if r.run_s > 0:
            lines.append("  run time           %12s   (%.1f s)" % (_duration(r.run_s), r.run_s))
        b = r.breakdown
        lines.append("per step (ms)")
        for name, v in (("forward", b.forward_s), ("backward", b.backward_s), ("optimizer", b.optimizer_s),
                        ("transfer (H2D)", b.h2d_s), ("CPU overhead", b.cpu_overhead_s), ("loader", b.loader_s),
                        ("comm", b.comm_s)):
            lines.append("  %-19s%12.3f" % (name, v * 1e3))
        lines.append("GPU busy             %12.1f %%" % (r.gpu_util_frac * 100))
        lines.append("bottleneck           %12s" % BOTTLENECKS[r.bottleneck])
        lines.append("MFU                  %12.1f %%" % (r.mfu_frac * 100))
        m = r.memory
        lines.append("memory (GiB)")
        for name, v in (("weights", m.weights_bytes), ("gradients", m.grads_bytes),
                        ("optimizer states", m.optimizer_bytes), ("autocast cache", m.cast_cache_bytes),
                        ("activations", m.activations_bytes), ("workspace", m.workspace_bytes),
                        ("CUDA context", m.context_bytes), ("allocator", m.allocator_bytes)):
            lines.append("  %-19s%12.2f" % (name, v / GIB))
        lines.append("  peak               %12.2f of %.2f   fits: %s" % (m.peak_bytes / GIB, m.capacity_bytes / GIB,
                                                                       "yes" if m.fits else
                                                                       "at the edge" if m.at_edge else "no"))
        lines.append("  peak at            %12s%s" % ("", PEAK_PHASES[m.peak_phase]))
        lines.append("  headroom           %12.2f   kept free" % (m.headroom_bytes / GIB))
        lines.append("cost")
        if r.price_per_hour > 0:
            cur = self.price_currency
            lines.append("  price              %12s per hour   (%s)" % (_money(r.price_per_hour, cur),
                                                                    self.price_offer))
            if r.cost_run > 0:
                if r.cost_per_epoch > 0:
                    lines.append("  per epoch          %12s" % _money(r.cost_per_epoch, cur))
                lines.append("  run                %12s   (%s)" % (_money(r.cost_run, cur), _duration(r.run_s)))
            else:
                lines.append("  per 1M tokens      %12s   (give train_tokens=, train_samples= or dataset_samples= "
                             "for the run and its cost)" % _money(r.cost_per_million_tokens, cur))
        else:
            lines.append("  no price known for this GPU (give price_per_gpu_hour=)")
        ws = self.warnings
        if ws:
            lines.append("warnings")
            lines.extend("  - " + w for w in ws)
        return "\n".join(lines)

    def __str__(self):
        return self.summary()

    def __repr__(self):
        return self.summary()

    def _repr_pretty_(self, p, cycle):  # IPython
        p.text(self.summary())


_SPANS = []


def _field_spans():
    """(start, end) byte ranges of the result's fields in ec_result (made once)."""
    if not _SPANS:
        for _col, path, kind in RESULT_FIELDS:
            off = ffi.offsetof("ec_result", *path.split("."))
            _SPANS.append((off, off + _array_size("ec_result", path)))
    return _SPANS


for _col, _path, _kind in RESULT_FIELDS:
    setattr(Result, _col, property(_getter(_path, _kind)))
_COLUMN_SET = frozenset(RESULT_COLUMNS)


def emit_warnings(res):
    """A prediction's warnings as Python warnings (EpochcastWarning), attributed to the first
    caller outside this package."""
    level, f = 2, sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "").partition(".")[0] == "epochcast":
        level += 1
        f = f.f_back
    for w in split_warnings(ffi.string(res.warning_text).decode("utf-8", "replace")):
        warnings.warn(w, EpochcastWarning, stacklevel=level)
