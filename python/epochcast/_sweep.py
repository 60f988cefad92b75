"""_sweep.py: Context.sweep over the library's ec_sweep.

The points come back from ec_sweep_next in order, predicted on the library's threads (each with
its own context) while Python only copies each result's bytes into a chunk buffer (one
ffi.memmove); a chunk is decoded into columns with struct.iter_unpack, so a 10,000-point sweep
costs a few milliseconds of Python on top of the predictions.  The axes' columns are the values
the caller gave, by the point's position in the product.  Nothing is modelled here.
"""
import numbers
import struct

from ._context import KEY_SET, raise_status, text_of
from ._errors import BadValueError, CanceledError, UnknownKeyError
from ._lib import ffi, lib
from ._result import RESULT_FIELDS, RowDecoder
from . import _table

CHUNK = 4096
PROGRESS_EVERY = 256


def _axes_list(axes):
    if isinstance(axes, dict):
        items = list(axes.items())
    elif isinstance(axes, (list, tuple)):
        items = []
        for a in axes:
            if not isinstance(a, (list, tuple)) or len(a) != 2:
                raise BadValueError("sweep: an axis is a (key, [values]) pair, not %r" % (a,), lib.EC_EINVAL)
            items.append((a[0], a[1]))
    else:
        raise BadValueError("sweep: axes is a dict {key: [values]} or a list of (key, [values]) pairs",
                            lib.EC_EINVAL)
    out = []
    for key, values in items:
        if not isinstance(key, str):
            raise BadValueError("sweep: an axis key is a str, not %r" % (key,), lib.EC_EINVAL)
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            values = [values]
        values = list(values)
        for v in values:
            if v is None:
                raise BadValueError("sweep axis '%s': None is not a value" % key, lib.EC_EINVAL, key)
        out.append((key, values))
    return out


def run_sweep(ctx, base, axes, threads, fields, strict, progress):
    base = ctx._merge(base if base is not None else {}, {})
    axes = _axes_list(axes)
    if threads is not None and (not isinstance(threads, numbers.Integral) or isinstance(threads, bool)
                                or not 0 <= threads <= 4096):
        raise BadValueError("sweep: threads must be an integer in 0..4096 (0 or None: the cores available), "
                            "not %r" % (threads,), lib.EC_EINVAL, "threads")
    if progress is not None and not callable(progress):
        raise BadValueError("sweep: progress must be callable (done, total)", lib.EC_EINVAL, "progress")
    dec = RowDecoder(columns=fields)
    h = ctx._h()
    cfg = ctx._config(h, base)
    opts = ffi.new("ec_sweep_opts *")
    lib.ec_sweep_opts_init(opts)
    if threads is not None:
        opts.threads = int(threads)
    out = ffi.new("ec_sweep **")
    st = lib.ec_sweep_new(h, cfg, opts, out)
    if st != 0:
        raise_status(h, st)
    sw = ffi.gc(out[0], lib.ec_sweep_free)
    try:
        for key, values in axes:
            texts = [ffi.new("char[]", text_of(key, v)) for v in values]
            arr = ffi.new("char *[]", texts)
            st = lib.ec_sweep_axis(sw, key.encode(), arr, len(texts))
            if st != 0:
                raise_status(h, st, key=key, cls=UnknownKeyError if key not in KEY_SET else None)
        return _collect(ctx, h, sw, axes, dec, strict, progress)
    finally:
        ffi.release(sw)  # stops the library's threads at once, also on an exception


def _collect(ctx, h, sw, axes, dec, strict, progress):
    n = lib.ec_sweep_count(sw)
    rs = ffi.sizeof("ec_result")
    pad = rs - dec.size
    rec = struct.Struct(dec.struct.format + ("%dx" % pad if pad > 0 else ""))
    chunk = bytearray(CHUNK * rs)
    cbuf = ffi.from_buffer(chunk)
    zero = bytes(rs)
    pt = ffi.new("ec_sweep_point *")
    done, nxt, memmove = lib.ec_sweep_done, lib.ec_sweep_next, ffi.memmove
    values_rows, errors = [], {}
    k = i = 0
    while not done(sw):
        st = nxt(sw, pt)
        if st != 0:
            raise_status(h, st)
        if pt.status == 0:
            memmove(cbuf + k * rs, pt.result, rs)
        else:
            msg = ffi.string(pt.message).decode("utf-8", "replace")
            if strict:
                _refused(pt.status, msg, i)
            errors[i] = msg
            chunk[k * rs:(k + 1) * rs] = zero
        k += 1
        i += 1
        if k == CHUNK:
            values_rows.extend(rec.iter_unpack(chunk))
            k = 0
        if progress is not None and i % PROGRESS_EVERY == 0:
            if progress(i, n):
                raise CanceledError("sweep: stopped by the progress callback after %d of %d points" % (i, n),
                                    lib.EC_ECANCELED)
    if k:
        values_rows.extend(rec.iter_unpack(bytes(chunk[:k * rs])))
    if progress is not None:
        progress(i, n)
    return _build(axes, dec, values_rows, errors, i)


def _refused(status, msg, i):
    from ._errors import error_class
    raise error_class(status)("sweep point %d: %s" % (i, msg), status)


def _build(axes, dec, values_rows, errors, n):
    columns, order = {}, []
    stride = 1
    strides = []
    for _key, values in reversed(axes):
        strides.append(stride)
        stride *= len(values)
    strides.reverse()
    for (key, values), s in zip(axes, strides):
        m = len(values)
        columns[key] = [values[(p // s) % m] for p in range(n)]
        order.append(key)
    cols = list(zip(*values_rows)) if values_rows else [()] * len(dec.columns)
    for col, kind, vals in zip(dec.columns, dec.kinds, cols):
        if kind in ("num", "int"):
            vals = list(vals)
        else:
            vals = dec_convert_column(kind, vals)
        if errors:
            for p in errors:
                vals[p] = None
        columns[col] = vals
    wanted = [c for c, _p, _k in RESULT_FIELDS if c in columns]
    order.extend(wanted)
    columns["error"] = [errors.get(p) for p in range(n)]
    order.append("error")
    return _table.from_columns(columns, order)


def dec_convert_column(kind, vals):
    from ._result import BOTTLENECKS, PEAK_PHASES, _text
    if kind == "bool":
        return [v != 0 for v in vals]
    if kind == "bottleneck":
        return [BOTTLENECKS[v] if 0 <= v < len(BOTTLENECKS) else str(v) for v in vals]
    if kind == "phase":
        return [PEAK_PHASES[v] if 0 <= v < len(PEAK_PHASES) else str(v) for v in vals]
    cache = {}
    out = []
    for v in vals:
        t = cache.get(v)
        if t is None:
            t = cache[v] = _text(v)
        out.append(t)
    return out
