"""setup.py: the package epochcast with libepochcast and models/ bundled into it.

`pip install ./python` (with Debian's setuptools: `pip install --no-build-isolation ./python`)
copies into the built package, under epochcast/_bundle/:
  - the shared library: $EPOCHCAST_LIB (the file or its folder), else the source tree's
    build/core/libepochcast.so.0, else the newest of build*/core/ not built with a sanitizer;
  - models/: $EPOCHCAST_MODELS, else the source tree's models/.
On a clean clone, with no library built and cmake on PATH, the library is built first
(cmake into build-python/: the library alone, no tests, benches, Lua or PGO; EC_PY_NO_BUILD=1
skips this).  Without a library to bundle the package still installs and then looks for an
installed libepochcast at import (python/epochcast/_lib.py).  Nothing is downloaded here.
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def find_library():
    env = os.environ.get("EPOCHCAST_LIB")
    if env:
        if not os.path.isabs(env) and not os.path.exists(env):
            env = os.path.join(SRC, env)  # pip builds in python/: relative to the source tree
        if os.path.isdir(env):
            for name in ("libepochcast.so.0", "libepochcast.so"):
                if os.path.isfile(os.path.join(env, name)):
                    return os.path.join(env, name)
            sys.exit("setup.py: EPOCHCAST_LIB=%s holds no libepochcast.so" % env)
        if not os.path.isfile(env):
            sys.exit("setup.py: EPOCHCAST_LIB=%s: no such file" % env)
        return env
    found = [p for p in glob.glob(os.path.join(SRC, "build*", "core", "libepochcast.so.0"))
             if os.path.isfile(p) and not sanitized(os.path.dirname(os.path.dirname(p)))]
    main = os.path.join(SRC, "build", "core", "libepochcast.so.0")
    if main in found:
        return main
    found.sort(key=os.path.getmtime, reverse=True)
    return found[0] if found else build_library()


def sanitized(build_dir):
    """A build with ASan or TSan: its library needs the sanitizer's runtime, not for a wheel."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return False
    return "EC_SANITIZE:BOOL=ON" in text or "EC_TSAN:BOOL=ON" in text


def build_library():
    """Build libepochcast from the source tree this package sits in (a clean clone), or None."""
    if os.environ.get("EC_PY_NO_BUILD") or shutil.which("cmake") is None or \
            not os.path.isfile(os.path.join(SRC, "CMakeLists.txt")):
        return None
    out = os.path.join(SRC, "build-python")
    print("setup.py: no built libepochcast: building it in %s (cmake)" % out, file=sys.stderr)
    try:
        subprocess.run(["cmake", "-S", SRC, "-B", out, "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DEC_PGO=OFF",
                        "-DEC_BUILD_TESTS=OFF", "-DEC_BUILD_BENCH=OFF", "-DEC_BUILD_LUA=OFF"],
                       check=True, stdout=sys.stderr)
        subprocess.run(["cmake", "--build", out, "--target", "epochcast_shared", "-j", str(os.cpu_count() or 2)],
                       check=True, stdout=sys.stderr)
    except (OSError, subprocess.CalledProcessError) as e:
        print("setup.py: building libepochcast failed (%s)" % e, file=sys.stderr)
        return None
    lib = os.path.join(out, "core", "libepochcast.so.0")
    return lib if os.path.isfile(lib) else None


def find_models():
    env = os.environ.get("EPOCHCAST_MODELS")
    if env:
        return env if os.path.isabs(env) or os.path.exists(env) else os.path.join(SRC, env)
    d = os.path.join(SRC, "models")
    return d if os.path.isfile(os.path.join(d, "gpus.csv")) else None


class BuildPyBundle(build_py):
    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "epochcast", "_bundle")
        if os.path.isdir(dest):
            shutil.rmtree(dest)
        libpath, models = find_library(), find_models()
        if libpath is None:
            print("setup.py: no built libepochcast to bundle (build it first, or set EPOCHCAST_LIB); the package "
                  "will look for an installed one", file=sys.stderr)
        else:
            os.makedirs(dest, exist_ok=True)
            shutil.copy2(os.path.realpath(libpath), os.path.join(dest, "libepochcast.so.0"))
            print("setup.py: bundling %s" % os.path.realpath(libpath), file=sys.stderr)
        if models is not None:
            shutil.copytree(models, os.path.join(dest, "models"),
                            ignore=shutil.ignore_patterns("*.tmp", ".*"))


setup(packages=["epochcast"], package_data={"epochcast": ["_cdef.h"]}, cmdclass={"build_py": BuildPyBundle},
      zip_safe=False)
