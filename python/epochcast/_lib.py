"""_lib.py: libepochcast opened with cffi in ABI mode, and where it and models/ are found.

The declarations are _cdef.h, generated from core/include/epochcast.h by
python/tools/gen_cdef.py (a ctest checks it is current, another that cffi lays the structs out
as the compiler does).  Nothing is compiled when the package is installed: cffi reads the
declarations and calls the shared library through libffi.

The library, the first of:
  1. $EPOCHCAST_LIB: the file libepochcast.so(.N), or a folder holding it;
  2. the copy bundled into the package by `pip install ./python` (epochcast/_bundle/);
  3. the CMake install (EC_PYTHON=ON): _location.py, written by `cmake --install`, names it
     relative to the package, so an installed tree may move;
  4. the source tree the package sits in: build/core/ (then any build*/core/ not built with a
     sanitizer, newest first);
  5. the system's loader: libepochcast.so.0 on its search path.
models/ (Context(models_dir=...) first): $EPOCHCAST_MODELS, the bundled copy, the CMake
install's, and otherwise the library's own search (ec_default_models_dir: installed prefix,
source tree).
"""
import glob
import os

import cffi

_HERE = os.path.dirname(os.path.abspath(__file__))
SONAME = "libepochcast.so.0"

ffi = cffi.FFI()
with open(os.path.join(_HERE, "_cdef.h"), encoding="utf-8") as _f:
    ffi.cdef(_f.read())

try:  # written by the CMake install (python/CMakeLists.txt)
    from . import _location  # type: ignore[attr-defined]
except ImportError:  # not installed by CMake
    _location = None


def _in_dir(d):
    for name in (SONAME, "libepochcast.so"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    return None


def _sanitized(core_dir):
    """A build with ASan or TSan (its CMakeCache.txt says so): its library cannot load into a
    stock interpreter without the sanitizer's runtime preloaded."""
    try:
        with open(os.path.join(os.path.dirname(core_dir), "CMakeCache.txt"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return False
    return "EC_SANITIZE:BOOL=ON" in text or "EC_TSAN:BOOL=ON" in text


def library_candidates():
    """The places searched for libepochcast, in order (for messages and tests)."""
    out = []
    env = os.environ.get("EPOCHCAST_LIB")
    if env:
        out.append(("$EPOCHCAST_LIB", _in_dir(env) if os.path.isdir(env) else env))
    out.append(("bundled", _in_dir(os.path.join(_HERE, "_bundle"))))
    if _location is not None:
        out.append(("installed", os.path.normpath(os.path.join(_HERE, _location.LIBRARY))))
    src = os.path.dirname(os.path.dirname(_HERE))  # python/epochcast -> the source tree
    if os.path.isfile(os.path.join(src, "core", "include", "epochcast.h")):
        builds = [os.path.join(src, "build", "core")]
        others = [d for d in glob.glob(os.path.join(src, "build*", "core")) if d not in builds and not _sanitized(d)]
        others.sort(key=lambda d: os.path.getmtime(d), reverse=True)
        for d in builds + others:
            out.append(("source tree", _in_dir(d)))
    return [(what, p) for what, p in out if p]


def _open():
    tried = []
    env = os.environ.get("EPOCHCAST_LIB")
    for what, path in library_candidates():
        if what == "$EPOCHCAST_LIB" and not os.path.exists(path):
            raise OSError("EPOCHCAST_LIB=%s: no such file (or no libepochcast.so in that folder)" % env)
        if os.path.isfile(path):
            return ffi.dlopen(path), path
        tried.append(path)
    try:
        return ffi.dlopen(SONAME), SONAME
    except OSError as e:
        tried.append("%s (%s)" % (SONAME, e))
    raise OSError("libepochcast not found; build it (cmake -S . -B build && cmake --build build) or "
                  "set EPOCHCAST_LIB to libepochcast.so; tried: " + "; ".join(tried))


lib, library_path = _open()


def bundled_models_dir():
    """The models/ the package should load unless told otherwise, or None for the library's
    own search."""
    env = os.environ.get("EPOCHCAST_MODELS")
    if env:
        return env
    d = os.path.join(_HERE, "_bundle", "models")
    if os.path.isfile(os.path.join(d, "gpus.csv")):
        return d
    if _location is not None:
        d = os.path.normpath(os.path.join(_HERE, _location.MODELS))
        if os.path.isfile(os.path.join(d, "gpus.csv")):
            return d
    return None
