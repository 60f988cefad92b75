"""epochcast: predict deep-learning training time, memory and cost from Python.

A thin binding over libepochcast (cffi, ABI mode): every number comes from the C library, as
from the CLI and the Lua module.  The module-level functions use a default Context (the
models/ folder found as the CLI finds it); make your own with Context(models_dir=...,
profile=...).  Tables are pandas DataFrames when pandas imports, else lists of dicts
(set_tables).  Reference: docs/python.md.

    >>> import epochcast
    >>> r = epochcast.predict(model="llama-3.1-8b", gpu="h100", precision="amp_bf16",
    ...                       batch_per_gpu=1, seq_len=4096)
    >>> r.step_s, r.tokens_per_s, r.peak_bytes, r.fits
"""
import threading as _threading

from ._errors import (BadValueError, CanceledError, DomainError, EpochcastWarning, Error, FileError,
                      MisuseError, OutOfMemoryError, ParseError, UnknownKeyError, UnknownNameError,
                      UnsupportedError)
from ._lib import ffi as _ffi, lib as _lib, library_path
from ._context import Context, KEYS
from ._result import RESULT_COLUMNS, Result
from ._table import set_tables
from . import plot  # matplotlib is imported only when a picture is drawn

__version__ = "0.1.0"
__all__ = ["Context", "Result", "Error", "BadValueError", "CanceledError", "DomainError", "EpochcastWarning",
           "FileError", "MisuseError", "OutOfMemoryError", "ParseError", "UnknownKeyError", "UnknownNameError",
           "UnsupportedError", "predict", "sweep", "compare", "optimize", "plan", "max_batch", "model_info",
           "validate", "calibrate", "network", "gpus", "models", "networks", "keys", "trace", "stages",
           "default_context", "set_default_context", "set_tables", "plot", "RESULT_COLUMNS", "KEYS", "library_path",
           "library_version"]

_default = [None]
_default_lock = _threading.Lock()


def default_context():
    """The Context the module-level functions use (made at the first call)."""
    c = _default[0]
    if c is None:
        with _default_lock:
            if _default[0] is None:
                _default[0] = Context()
            c = _default[0]
    return c


def set_default_context(ctx):
    """Make ctx (a Context) the one the module-level functions use; returns the previous one."""
    if not isinstance(ctx, Context):
        raise TypeError("set_default_context: a Context is needed")
    old, _default[0] = _default[0], ctx
    return old


def library_version():
    """The version string the library was built with (EC_VERSION)."""
    return __version__


def predict(config=None, /, **keys):
    return default_context().predict(config, **keys)


def max_batch(config=None, /, limit=0, **keys):
    return default_context().max_batch(config, limit=limit, **keys)


def sweep(base, axes, threads=None, fields=None, strict=False, progress=None):
    return default_context().sweep(base, axes, threads=threads, fields=fields, strict=strict, progress=progress)


def compare(a, b):
    return default_context().compare(a, b)


def trace(path, config=None, /, steps=0, **keys):
    return default_context().trace(path, config, steps=steps, **keys)


def stages(config=None, /, **keys):
    return default_context().stages(config, **keys)


def optimize(config=None, /, progress=None, **keys):
    return default_context().optimize(config, progress=progress, **keys)


def plan(config=None, /, **keys):
    return default_context().plan(config, **keys)


def model_info(model=None, /, **keys):
    return default_context().model_info(model, **keys)


def validate(path, profile=None, allow_paths=False, progress=None):
    return default_context().validate(path, profile=profile, allow_paths=allow_paths, progress=progress)


def calibrate(path, out=None, all=False, allow_paths=False, cross_validate=True, progress=None):  # noqa: A002
    return default_context().calibrate(path, out=out, all=all, allow_paths=allow_paths,
                                       cross_validate=cross_validate, progress=progress)


def network(definition):
    return default_context().network(definition)


def gpus():
    return default_context().gpus()


def models():
    return default_context().models()


def networks():
    return default_context().networks()


def keys():
    return default_context().keys()


for _name in ("predict", "max_batch", "sweep", "compare", "trace", "stages", "optimize", "plan", "model_info",
              "validate",
              "calibrate", "network", "gpus", "models", "networks", "keys"):
    globals()[_name].__doc__ = getattr(Context, _name).__doc__ + "\n\n(On the default context.)"
