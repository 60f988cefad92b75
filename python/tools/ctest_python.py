#!/usr/bin/env python3
"""ctest_python.py: the Python binding's checks as ctest runs them (python/CMakeLists.txt).

    /usr/bin/python3 python/tools/ctest_python.py CHECK [ARG]

CHECK is one of
    pytest       python/tests with pytest against $EPOCHCAST_LIB and $EPOCHCAST_MODELS
    cdef         python/epochcast/_cdef.h is what gen_cdef.py derives from epochcast.h
    example      examples/python/qlora_vs_fsdp.py runs (plots written to a scratch folder)
    notebook     the notebook is current with the script (gen_notebook.py --check), and its code
                 cells run in order as one script
    pip_install  `pip install --no-build-isolation ./python` into a fresh virtual environment made
                 with --system-site-packages (offline), then the README's one-liner from outside
                 the source tree: the wheel bundles the library and models/
    installed    the package that the CMake install put under ARG (a prefix) finds that prefix's
                 library and models/ by itself
Exit 77 (ctest: skipped), with the reason, only when this interpreter lacks cffi: the binding
needs it (Debian: python3-cffi, which tools/bootstrap.sh installs).  Any other missing piece
(pytest, venv) fails the check with what to install.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("EC_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.path.join(SRC, "python")
EXAMPLE = os.path.join(SRC, "examples", "python", "qlora_vs_fsdp.py")
NOTEBOOK = os.path.join(SRC, "examples", "python", "qlora_vs_fsdp.ipynb")
ONE_LINER = ("import epochcast; print(epochcast.predict(model='llama-3.1-8b', gpu='h100', precision='amp_bf16', "
             "batch_per_gpu=1, seq_len=4096))")


def need(module, package):
    try:
        __import__(module)
    except ImportError:
        print("FAILED: %s lacks the module %s (Debian: apt install %s; tools/bootstrap.sh installs it)"
              % (sys.executable, module, package))
        sys.exit(1)


def env_with_path():
    env = dict(os.environ)
    env["PYTHONPATH"] = PY + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw).returncode


def notebook_script(path):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    parts = []
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        src = "".join(cell["source"])
        # IPython magics (%matplotlib inline) have no meaning in a script
        src = "\n".join(l for l in src.split("\n") if not l.lstrip().startswith(("%", "!")))
        parts.append("# ---- cell %d\n%s\n" % (i, src))
    return "\n".join(parts)


def main():
    check = sys.argv[1] if len(sys.argv) > 1 else "pytest"
    try:
        import cffi  # noqa: F401
    except ImportError:
        print("SKIPPED: %s lacks cffi, which the Python binding needs (Debian: apt install python3-cffi; "
              "tools/bootstrap.sh installs it)" % sys.executable)
        return 77
    if check == "pytest":
        need("pytest", "python3-pytest")
        return run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(PY, "tests")],
                   env=env_with_path())
    if check == "cdef":
        return run([sys.executable, os.path.join(PY, "tools", "gen_cdef.py"), "--check"])
    if check in ("example", "notebook"):
        with tempfile.TemporaryDirectory(prefix="ec-py-") as tmp:
            env = env_with_path()
            env["EC_EXAMPLE_OUT"] = tmp
            if check == "example":
                return run([sys.executable, EXAMPLE, tmp], env=env, cwd=tmp)
            if run([sys.executable, os.path.join(PY, "tools", "gen_notebook.py"), "--check"]) != 0:
                return 1
            script = os.path.join(tmp, "notebook.py")
            with open(script, "w", encoding="utf-8") as f:
                f.write(notebook_script(NOTEBOOK))
            return run([sys.executable, script], env=env, cwd=tmp)
    if check == "pip_install":
        need("venv", "python3-venv")
        need("ensurepip", "python3-venv")
        with tempfile.TemporaryDirectory(prefix="ec-venv-") as tmp:
            venv = os.path.join(tmp, "venv")
            if run([sys.executable, "-m", "venv", "--system-site-packages", venv]) != 0:
                return 1
            vpy = os.path.join(venv, "bin", "python")
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)
            env["PIP_NO_INDEX"] = "1"  # offline: nothing may be downloaded
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            # a copy of python/ so that the in-tree build leaves the source tree alone
            pkg = os.path.join(tmp, "src", "python")
            shutil.copytree(PY, pkg, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            if run([vpy, "-m", "pip", "install", "-q", "--no-build-isolation", pkg], env=env) != 0:
                return 1
            # from outside any source tree, without the test's variables: what the wheel bundled
            env.pop("EPOCHCAST_LIB", None)
            env.pop("EPOCHCAST_MODELS", None)
            out = subprocess.run([vpy, "-c", ONE_LINER + "; print('lib', epochcast.library_path); "
                                  "print('models', epochcast.default_context().models_dir)"],
                                 env=env, cwd=tmp, capture_output=True, text=True)
            print(out.stdout + out.stderr)
            ok = out.returncode == 0 and "step time" in out.stdout and "tokens/s" in out.stdout \
                and "peak" in out.stdout and "price" in out.stdout and "lib " + venv in out.stdout \
                and "models " + venv in out.stdout
            print("pip install: %s" % ("ok" if ok else "FAILED"))
            return 0 if ok else 1
    if check == "installed":
        prefix = sys.argv[2]
        pydir = os.path.join(prefix, os.environ["EC_INSTALL_PYTHONDIR"])
        env = dict(os.environ)
        for k in ("EPOCHCAST_LIB", "EPOCHCAST_MODELS"):
            env.pop(k, None)
        env["PYTHONPATH"] = pydir
        out = subprocess.run([sys.executable, "-c", ONE_LINER + "; print('lib', epochcast.library_path); "
                              "print('models', epochcast.default_context().models_dir)"],
                             env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True)
        print(out.stdout + out.stderr)
        real = os.path.realpath(prefix)
        libline = [l for l in out.stdout.splitlines() if l.startswith("lib ")]
        modline = [l for l in out.stdout.splitlines() if l.startswith("models ")]
        ok = (out.returncode == 0 and libline and os.path.realpath(libline[0][4:]).startswith(real)
              and modline and os.path.realpath(modline[0][7:]).startswith(real))
        print("installed package: %s" % ("ok" if ok else "FAILED"))
        return 0 if ok else 1
    print("usage: ctest_python.py pytest|cdef|example|notebook|pip_install|installed [PREFIX]")
    return 2


if __name__ == "__main__":
    sys.exit(main())
