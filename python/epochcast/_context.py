"""_context.py: epochcast.Context, the Python face of an ec_ctx and the functions over it.

A Context loads a models/ folder (and optionally a calibrated profile) once, into a template
ec_ctx that no prediction touches.  Each thread that uses the Context gets its own ec_ctx,
loaded from the template with ec_ctx_load_from (the library's way to give each thread its own
context), so predictions from several Python threads run in parallel: cffi releases the GIL
around every call into the library.  Defining a network changes the template under a lock and
bumps a generation number; each thread's context is reloaded at its next call.

Config values reach the library as the text the CLI would pass (ec_config_set): str as is,
int and float (repr: exact), bool as 1/0, os.PathLike as its path; None leaves a key at its
default; anything else, or a str holding a NUL byte, raises BadValueError naming the key.
"""
import numbers
import os
import threading

from . import _errors
from ._errors import BadValueError, Error, UnknownKeyError
from ._lib import bundled_models_dir, ffi, lib
from ._result import RESULT_FIELDS, Result, RowDecoder, emit_warnings
from . import _table

KEYS = [ffi.string(lib.ec_config_key_name(i)).decode() for i in range(lib.ec_config_key_count())]
KEY_SET = frozenset(KEYS)
# Keys ec_config_resolve fills in when a prediction derives them (shown in Result.config).
DERIVED = frozenset(("gpu", "host", "strategy", "nodes", "topology", "task", "seq_len", "image_size",
                     "target_len"))


def _message(h, st):
    msg = ffi.string(lib.ec_ctx_errmsg(h)).decode("utf-8", "replace") if h is not None else ""
    return msg or ffi.string(lib.ec_strerror(st)).decode()


def raise_status(h, st, key=None, cls=None, prefix=""):
    """Raise the Error subclass of status st with the library's message on context h."""
    if cls is None:
        cls = _errors.error_class(st)
        if key is not None and st == lib.EC_ENOTFOUND and key not in KEY_SET:
            cls = UnknownKeyError
    raise cls(prefix + _message(h, st), st, key)


def _refuse_release_float(key, v):
    """A release key (torch_version, cudnn_version) takes text: the float 2.1 cannot tell 2.1 from 2.10."""
    i = lib.ec_config_key_index(key.encode()) if isinstance(key, str) else -1
    if i >= 0 and lib.ec_config_key_is_release(i):
        raise BadValueError("key '%s': give the release as a string ('2.10'): the float %r cannot tell 2.1 from "
                            "2.10" % (key, v), lib.EC_EINVAL, key)


def text_of(key, v):
    """The text ec_config_set reads for a Python value (bytes), or BadValueError."""
    t = type(v)
    if t is int:
        return str(v).encode()
    if t is str:
        b = v.encode()
    elif t is float:
        _refuse_release_float(key, v)
        return repr(v).encode()
    elif t is bool:
        return b"1" if v else b"0"
    elif isinstance(v, bool):
        return b"1" if v else b"0"
    elif isinstance(v, numbers.Integral):
        return str(int(v)).encode()
    elif isinstance(v, numbers.Real):
        _refuse_release_float(key, v)
        return repr(float(v)).encode()
    elif isinstance(v, str):
        b = str(v).encode()
    elif isinstance(v, os.PathLike):
        b = os.fsencode(v)
    else:
        raise BadValueError("key '%s': a %s is not a config value (give a str, int, float or bool)"
                            % (key, type(v).__name__), lib.EC_EINVAL, key)
    if b"\0" in b:
        raise BadValueError("key '%s': the value holds a NUL byte" % key, lib.EC_EINVAL, key)
    return b


def _new_ctx():
    out = ffi.new("ec_ctx **")
    st = lib.ec_ctx_new(ffi.NULL, ffi.NULL, out)
    if st != 0:
        raise_status(None, st)
    return ffi.gc(out[0], lib.ec_ctx_free)


class _Progress:
    """A Python progress callback installed on a context for one operation.  fn(what, done,
    total) returns a true value (or raises) to stop; its exception is re-raised after the
    library has cleaned up (the operation returns EC_ECANCELED)."""

    def __init__(self, h, fn):
        self.h, self.fn, self.exc = h, fn, None
        self.cb = None
        if fn is not None:
            if not callable(fn):
                raise BadValueError("progress: a callable (what, done, total) is needed, not a %s"
                                    % type(fn).__name__, lib.EC_EINVAL)
            self.cb = ffi.callback("ec_progress_fn", self._call)

    def _call(self, ud, what, done, total):
        try:
            return 1 if self.fn(ffi.string(what).decode(), done, total) else 0
        except BaseException as e:  # noqa: BLE001 - re-raised by check() on the caller's side
            self.exc = e
            return 1

    def __enter__(self):
        if self.cb is not None:
            lib.ec_ctx_set_progress(self.h, self.cb, ffi.NULL)
        return self

    def __exit__(self, *exc):
        if self.cb is not None:
            lib.ec_ctx_set_progress(self.h, ffi.cast("ec_progress_fn", 0), ffi.NULL)
        return False

    def check(self, st, key=None):
        """Raise for status st: the callback's own exception first (chained to the library's
        message), else the library's error."""
        if self.exc is not None:
            exc, self.exc = self.exc, None
            raise exc
        if st != 0:
            raise_status(self.h, st, key=key)


class Context:
    """The models/ folder (gpus, hosts, networks, constants, prices) and the calibrated
    profile that predictions use.

    Context(models_dir=None, profile=None): models_dir defaults to $EPOCHCAST_MODELS, the
    copy installed with the package, else the library's own search (the installed prefix, the
    source tree); profile is a profile CSV from calibrate() whose fitted parameters every
    prediction of this context uses.  Thread-safe: each thread predicts on its own copy.
    """

    def __init__(self, models_dir=None, profile=None):
        self._lock = threading.Lock()
        self._gen = 0
        self._local = threading.local()
        tmpl = _new_ctx()
        d = os.fspath(models_dir) if models_dir is not None else bundled_models_dir()
        st = lib.ec_ctx_load_models(tmpl, os.fsencode(d) if d else ffi.NULL)
        if st != 0:
            raise_status(tmpl, st)
        if d is None:
            buf = ffi.new("char[]", 4096)
            d = ffi.string(buf).decode() if lib.ec_default_models_dir(buf, 4096) == 0 else None
        self.models_dir = d
        self.profile = None
        if profile is not None:
            rep = ffi.new("ec_fit_report *")
            path = os.fsencode(profile)
            st = lib.ec_profile_read(tmpl, path, rep)
            if st == 0:
                st = lib.ec_ctx_set_fit(tmpl, rep)
            if st != 0:
                raise_status(tmpl, st, prefix="profile %s: " % os.fsdecode(path))
            self.profile = os.fsdecode(profile)
        self._tmpl = tmpl

    def __repr__(self):
        return "epochcast.Context(models_dir=%r, profile=%r)" % (self.models_dir, self.profile)

    # ---- contexts per thread ------------------------------------------------------------
    def _h(self):
        loc = self._local
        if getattr(loc, "gen", -1) == self._gen:
            return loc.h
        with self._lock:
            h = _new_ctx()
            st = lib.ec_ctx_load_from(h, self._tmpl)
            if st != 0:
                raise_status(h, st)
            loc.h, loc.gen = h, self._gen
        return h

    def _changed(self):
        """The template changed (a network defined): every thread reloads at its next call."""
        self._gen += 1

    # ---- configurations -------------------------------------------------------------------
    def _config(self, h, keys, into=None):
        cfg = into
        if cfg is None:
            cfg = ffi.new("ec_config *")
            lib.ec_config_init(cfg)
        for k, v in keys.items():
            if v is None:
                continue
            st = lib.ec_config_set(h, cfg, k.encode(), text_of(k, v))
            if st != 0:
                raise_status(h, st, key=k)
        return cfg

    def _resolved_config(self, cfg, full=False):
        """{key: text} of cfg as ec_predict reads it: the keys given and those derived, or
        every key (full)."""
        h = self._h()
        out = ffi.new("ec_config *")
        if lib.ec_config_resolve(h, cfg, out) != 0:
            out = cfg
        buf = ffi.new("char[]", 4096)
        conf = {}
        for i, k in enumerate(KEYS):
            if full or lib.ec_config_is_set(out, i) or k in DERIVED:
                if lib.ec_config_get_at(out, i, buf, 4096) == 0:
                    conf[k] = ffi.string(buf).decode("utf-8", "replace")
        return conf

    @staticmethod
    def _merge(config, keys):
        if config is None:
            return keys
        if not isinstance(config, dict):
            raise BadValueError("a config is a dict of keys (or keyword arguments), not a %s"
                                % type(config).__name__, lib.EC_EINVAL)
        merged = dict(config)
        merged.update(keys)
        return merged

    # ---- predictions --------------------------------------------------------------------
    def predict(self, config=None, /, **keys):
        """Predict one configuration: predict(model=..., gpu=..., batch_per_gpu=..., ...) or
        predict({"model": ...}, seq_len=...).  Returns a Result; its warnings are also issued
        as EpochcastWarning."""
        if config is not None:
            keys = self._merge(config, keys)
        h = self._h()
        cfg = self._config(h, keys)
        res = ffi.new("ec_result *")
        st = lib.ec_predict(h, cfg, res)
        if st != 0:
            raise_status(h, st)
        if res.warnings:
            emit_warnings(res)
        return Result(res, cfg, self)

    def max_batch(self, config=None, /, limit=0, **keys):
        """The largest batch_per_gpu (1..limit, limit 0: 65536) that fits in memory; 0 when
        not even 1 does.  batch_per_gpu itself is the unknown."""
        keys = self._merge(config, keys)
        if not isinstance(limit, numbers.Integral) or isinstance(limit, bool) or not 0 <= limit <= 2 ** 31 - 1:
            raise BadValueError("max_batch: limit must be an integer in 0..2147483647, not %r" % (limit,),
                                lib.EC_EINVAL, "limit")
        h = self._h()
        cfg = self._config(h, keys)
        out = ffi.new("int *")
        st = lib.ec_max_batch(h, cfg, int(limit), out)
        if st != 0:
            raise_status(h, st)
        return out[0]

    def sweep(self, base, axes, threads=None, fields=None, strict=False, progress=None):
        """Predict every point of the product of axes over base: a table (DataFrame or list of
        dicts), one row per point in order (the first axis varies slowest): the axes' values,
        the result columns (or only `fields`), and `error` (None, or why the library refused
        the point; with strict=True a refused point raises instead).  threads: predicting
        threads (None: the cores available); the rows are the same whatever the number.
        progress(done, total) is called every 256 points; a true return stops the sweep
        (CanceledError)."""
        from ._sweep import run_sweep
        return run_sweep(self, base, axes, threads, fields, strict, progress)

    def compare(self, a, b):
        """Predict a and b (dicts; b is a changed by its keys) and return both results with
        speedup (b's samples/s over a's), step_ratio (b's step over a's), epoch_ratio and
        peak_delta_bytes, all from the two predictions."""
        ra = self.predict(dict(a))
        rb = self.predict(self._merge(dict(a), dict(b)))
        return {"a": ra, "b": rb,
                "speedup": rb.samples_per_s / ra.samples_per_s if ra.samples_per_s else float("nan"),
                "step_ratio": rb.step_s / ra.step_s if ra.step_s else float("nan"),
                "epoch_ratio": rb.epoch_s / ra.epoch_s if ra.epoch_s else float("nan"),
                "peak_delta_bytes": rb.peak_bytes - ra.peak_bytes}

    def trace(self, path, config=None, /, steps=0, **keys):
        """Write the first `steps` simulated micro-steps (0: 20, at most 10,000) as a Chrome
        trace JSON file (ui.perfetto.dev); returns the path."""
        keys = self._merge(config, keys)
        h = self._h()
        cfg = self._config(h, keys)
        st = lib.ec_trace_write(h, cfg, os.fsencode(path), int(steps))
        if st != 0:
            raise_status(h, st)
        return os.fspath(path)

    def stages(self, config=None, /, **keys):
        """A pipeline's stages (one row without a pipeline): first_layer, layers, micro_s (a
        micro-batch's forward and backward on it), in_flight (micro-batches it holds) and its
        GPUs' peak memory by part (memory_*_bytes), as a table."""
        keys = self._merge(config, keys)
        h = self._h()
        cfg = self._config(h, keys)
        cap = max(cfg.pp, 1)
        out = ffi.new("ec_stage[]", cap)
        n = ffi.new("size_t *")
        st = lib.ec_predict_stages(h, cfg, out, cap, n)
        if st != 0:
            raise_status(h, st)
        mem = ("weights_bytes", "grads_bytes", "optimizer_bytes", "cast_cache_bytes", "activations_bytes",
               "workspace_bytes", "context_bytes", "allocator_bytes", "peak_bytes", "capacity_bytes")
        rows = []
        for i in range(n[0]):
            s = out[i]
            r = {"stage": i, "first_layer": s.first_layer, "layers": s.layers, "micro_s": s.micro_s,
                 "in_flight": s.in_flight}
            r.update(("memory_" + m, getattr(s.memory, m)) for m in mem)
            r["fits"] = bool(s.memory.fits)
            rows.append(r)
        return _table.from_rows(rows)

    # ---- what is loaded ----------------------------------------------------------------
    def gpus(self):
        """The GPU profiles (models/gpus.csv): a table of id, name, architecture,
        compute_capability, sm_count, memory_bytes, memory_bandwidth_bytes_per_s and the peak
        flop/s by precision."""
        h = self._h()
        g = ffi.new("ec_gpu_info *")
        rows = []
        for i in range(lib.ec_gpu_count(h)):
            if lib.ec_gpu_get(h, i, g) != 0:
                continue
            rows.append({"id": _s(g.id), "name": _s(g.name), "architecture": _s(g.architecture),
                         "compute_capability": g.compute_capability, "sm_count": g.sm_count,
                         "memory_bytes": g.memory_bytes,
                         "memory_bandwidth_bytes_per_s": g.memory_bandwidth_bytes_per_s,
                         "peak_fp32_flop_per_s": g.peak_fp32_flop_per_s,
                         "peak_tf32_flop_per_s": g.peak_tf32_flop_per_s,
                         "peak_fp16_flop_per_s": g.peak_fp16_flop_per_s,
                         "peak_bf16_flop_per_s": g.peak_bf16_flop_per_s,
                         "peak_fp8_flop_per_s": g.peak_fp8_flop_per_s,
                         "default_topology": _s(g.default_topology)})
        return _table.from_rows(rows)

    def models(self):
        """The network presets and the networks defined on this context: a table of id,
        family, default_task, tasks, params, default_seq_len, default_image_size,
        published_params, source."""
        h = self._h()
        m = ffi.new("ec_model_info *")
        rows = []
        for i in range(lib.ec_model_count(h)):
            if lib.ec_model_get(h, i, m) != 0:
                continue
            rows.append(_model_row(m))
        return _table.from_rows(rows)

    def networks(self):
        """The inter-node network presets (models/interconnects.csv) that network= names."""
        h = self._h()
        n = ffi.new("ec_interconnect_info *")
        rows = []
        for i in range(lib.ec_interconnect_count(h)):
            if lib.ec_interconnect_get(h, i, n) != 0:
                continue
            rows.append({"id": _s(n.id), "description": _s(n.description), "gpu_bytes_per_s": n.gpu_bytes_per_s,
                         "node_bytes_per_s": n.node_bytes_per_s, "efficiency_frac": n.efficiency_frac,
                         "domain_gpus": n.domain_gpus, "source": _s(n.source)})
        return _table.from_rows(rows)

    def keys(self):
        """The config keys with their help text: {key: help}."""
        return {k: ffi.string(lib.ec_config_key_help(i)).decode() for i, k in enumerate(KEYS)}

    def model_info(self, model=None, /, **keys):
        """What a model is (epochcast model-info): a ModelInfo with the registry entry (family,
        tasks, params, published_params, source), the summary for the config's task, seq_len
        (or image_size), precision and optimizer (params, fwd/bwd flop per sample, weights,
        gradients and optimizer bytes, activation bytes per sample) and .layers, a table."""
        from ._info import model_info
        if model is not None:
            keys = dict(keys, model=model)
        return model_info(self, keys)

    # ---- searches, runs, networks -------------------------------------------------------
    def optimize(self, config=None, /, progress=None, **keys):
        """The layout search (epochcast optimize): config keys plus the search keys (gpu,
        num_gpus, global_batch or global_batch_tokens, tp, pp, cp, ep, batch_per_gpu,
        checkpointing, strategy, sharding, zero_stage, pp_schedule: a value or a list) and
        options (goal, train_tokens, top, threads).  Returns an Optimized: .layouts, .no_fit
        (tables), .stats (dict), .best (a row), .plot()."""
        from ._search import optimize
        return optimize(self, self._merge(config, keys), progress)

    def plan(self, config=None, /, **keys):
        """The cheapest (or fastest) configuration under constraints (epochcast plan): config
        keys (a list is an axis: gpu=["t4", "a10"]) and the options deadline_h, budget,
        max_gpus, must_fit, goal, global_batch, max_batch_per_gpu.  Every point needs
        dataset_samples.  Returns a Plan: .best (a row or None), .front, .rows (tables),
        .reason, .plot()."""
        from ._search import plan
        return plan(self, self._merge(config, keys))

    def validate(self, path, profile=None, allow_paths=False, progress=None):
        """Predict the measured runs of a run-record CSV (epochcast validate): a Validation
        with .rows (id, gpu, model, metric, predicted, p10, p90, measured, error_pct,
        in_p10_p90), .stats (MAPE, bias, within 10/20 %, all and by metric, GPU and model) and
        .plot()."""
        from ._runs import validate
        return validate(self, path, profile, allow_paths, progress)

    def calibrate(self, path, out=None, all=False, allow_paths=False, cross_validate=True, progress=None):
        """Fit the model's physical parameters to the measured runs of a CSV (epochcast
        calibrate): a Calibration with .params (a table), the before/after MAPE and, with
        cross_validate and runs on two GPUs or more, the leave-one-GPU-out error.  out: write
        the profile CSV there (use it with Context(profile=out) or profile=out).  all=False
        fits only single-GPU runs, as the CLI does."""
        from ._runs import calibrate
        return calibrate(self, path, out, all, allow_paths, cross_validate, progress)

    def network(self, definition):
        """Define a network from a dict (as ec.network in Lua; docs/networks.md): its id is
        accepted as model= by every later call on this context.  Returns the id."""
        from ._network import define
        with self._lock:
            nid = define(self._tmpl, definition)
            self._changed()
        return nid


def _s(p):
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""


def _model_row(m):
    return {"id": _s(m.id), "family": _s(m.family), "default_task": _s(m.default_task), "tasks": _s(m.tasks),
            "params": m.params, "default_seq_len": m.default_seq_len, "default_image_size": m.default_image_size,
            "published_params": m.published_params, "published_task": _s(m.published_task),
            "source": _s(m.source)}


__all__ = ["Context", "Error", "KEYS", "RESULT_FIELDS", "RowDecoder"]
