"""Shared fixtures of the binding's tests.  ctest (python/CMakeLists.txt) runs them with
EPOCHCAST_LIB (this build's libepochcast.so), EPOCHCAST_MODELS (the source tree's models/),
EC_CLI (the CLI of the same build) and python/ on PYTHONPATH; run by hand:
    EPOCHCAST_LIB=build/core/libepochcast.so PYTHONPATH=python /usr/bin/python3 -m pytest python/tests
"""
import os
import subprocess
import warnings

import pytest

import epochcast as ec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BERT = dict(model="bert-base", task="classify", gpu="a16", precision="fp32", batch_per_gpu=16, seq_len=256)
LLAMA = dict(model="llama-3.1-8b", gpu="h100", precision="amp_bf16", batch_per_gpu=1, seq_len=4096)

RUNS_CSV = ("id,model,gpu,precision,batch_per_gpu,seq_len,metric,value\n"
            "r1,bert-base,v100-sxm2-16gb,amp_fp16,32,128,samples_per_s,400\n"
            "r2,resnet50,t4,fp32,64,,samples_per_s,120\n")


def cli_path():
    p = os.environ.get("EC_CLI")
    if p and os.path.isfile(p):
        return os.path.abspath(p)
    for d in ("build", "build-h"):
        c = os.path.join(ROOT, d, "epochcast")
        if os.path.isfile(c):
            return c
    return None


@pytest.fixture
def cli():
    p = cli_path()
    if p is None:
        pytest.skip("no epochcast CLI in this build (EC_CLI)")

    def run(*args, check=True, cwd=None):
        out = subprocess.run([p] + list(args), capture_output=True, text=True, cwd=cwd)
        if check and out.returncode != 0:
            raise AssertionError("epochcast %s: %s" % (" ".join(args), out.stderr))
        return out
    return run


@pytest.fixture
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ec.EpochcastWarning)
        yield


@pytest.fixture(params=["pandas", "dicts"])
def tables(request):
    """Run a test on both table paths (pandas skipped where it does not import)."""
    if request.param == "pandas":
        pytest.importorskip("pandas")
    old = ec.set_tables(request.param)
    yield request.param
    ec.set_tables(old)


def rows(table):
    """The rows of a table whatever its form."""
    from epochcast._table import rows_of
    return rows_of(table)


@pytest.fixture
def runs_csv(tmp_path):
    p = tmp_path / "runs.csv"
    p.write_text(RUNS_CSV)
    return p
