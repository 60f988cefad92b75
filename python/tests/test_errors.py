"""Bad input from Python raises an epochcast.Error subclass with the library's message, never
crashes the interpreter: unknown keys and names, wrong types, None for a required key, files
that do not exist or do not parse, exceptions inside callbacks, cancellation."""
import subprocess
import sys
import textwrap

import pytest

import epochcast as ec
from epochcast._errors import error_class
from conftest import BERT

CASES = [
    (dict(BERT, bogus=1), ec.UnknownKeyError, "unknown key 'bogus'"),
    (dict(BERT, batch_per_gpu="x"), ec.BadValueError, "key 'batch_per_gpu': 'x' is not a number"),
    (dict(BERT, batch_per_gpu=None), ec.BadValueError, "key 'batch_per_gpu' is required"),
    (dict(BERT, batch_per_gpu=[16]), ec.BadValueError, "key 'batch_per_gpu': a list is not a config value"),
    (dict(BERT, batch_per_gpu=0), ec.BadValueError, "out of range"),
    (dict(BERT, gpu="nope"), ec.UnknownNameError, "unknown gpu 'nope'"),
    (dict(BERT, model="no-such-model"), ec.UnknownNameError, "no-such-model"),
    (dict(BERT, model="/nonexistent/config.json"), ec.UnknownNameError, "cannot open"),
    (dict(BERT, profile="/nonexistent/profile.csv"), ec.FileError, "cannot open"),
    (dict(BERT, gpu="t4\0x"), ec.BadValueError, "NUL"),
    (dict(BERT, gpu=object()), ec.BadValueError, "is not a config value"),
    (dict(BERT, torch_version=2.10), ec.BadValueError,
     "key 'torch_version': give the release as a string ('2.10'): the float 2.1 cannot tell 2.1 from 2.10"),
    (dict(BERT, cudnn_version="9.x"), ec.BadValueError, "key 'cudnn_version': '9.x' is not a release"),
]


def test_release_as_text():
    """A release given as text is read as a release (2.10 is PyTorch 2.10, after 2.9), an int as the
    major release."""
    assert ec.predict(**dict(BERT, torch_version="2.10")).step_s > 0
    assert ec.predict(**dict(BERT, torch_version=2)).step_s > 0


@pytest.mark.parametrize("keys,cls,text", CASES, ids=[c[2][:30] for c in CASES])
def test_predict_bad_input(keys, cls, text):
    with pytest.raises(cls) as e:
        ec.predict(**keys)
    assert text in str(e.value)
    assert isinstance(e.value, ec.Error) and e.value.status == cls.status


def test_error_classes_are_builtin_kinds():
    assert issubclass(ec.BadValueError, ValueError)
    assert issubclass(ec.UnknownNameError, LookupError) and issubclass(ec.UnknownKeyError, ec.UnknownNameError)
    assert issubclass(ec.FileError, OSError) and issubclass(ec.ParseError, ec.FileError)
    assert issubclass(ec.OutOfMemoryError, MemoryError)
    e = ec.UnknownKeyError("x", 6, "k")
    assert e.key == "k" and e.code == "EC_ENOTFOUND" and str(e) == "x"


def test_every_status_has_its_class():
    expect = {1: ec.OutOfMemoryError, 2: ec.BadValueError, 3: ec.DomainError, 4: ec.ParseError, 5: ec.FileError,
              6: ec.UnknownNameError, 7: ec.UnsupportedError, 8: ec.MisuseError, 9: ec.CanceledError}
    for st, cls in expect.items():
        assert error_class(st) is cls and cls.status == st
    assert error_class(99) is ec.Error


def test_key_named_on_the_error():
    with pytest.raises(ec.BadValueError) as e:
        ec.predict(BERT, seq_len="long")
    assert e.value.key == "seq_len"


def test_malformed_config_json(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"model_type": "llama", "hidden_size": ')
    with pytest.raises(ec.ParseError) as e:
        ec.predict(BERT, model=str(p))
    assert str(p) in str(e.value)


def test_missing_models_dir():
    with pytest.raises(ec.FileError, match="cannot open"):
        ec.Context(models_dir="/nonexistent/models")


def test_bad_profile_for_context(tmp_path):
    p = tmp_path / "p.csv"
    p.write_text("not,a,profile\n1,2,3\n")
    with pytest.raises(ec.Error, match="p.csv"):
        ec.Context(profile=p)


def test_runs_file_errors(tmp_path):
    with pytest.raises(ec.FileError):
        ec.validate(tmp_path / "none.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("id,model,gpu,batch_per_gpu,metric,value\nr1,bert-base,t44,16,samples_per_s,150\n")
    with pytest.raises(ec.UnknownNameError, match="unknown gpu 't44'"):
        ec.validate(bad)
    with pytest.raises(ec.Error):
        ec.calibrate(bad)


def test_exception_inside_a_callback_propagates(runs_csv):
    def boom(what, done, total):
        raise ZeroDivisionError("from the callback")
    with pytest.raises(ZeroDivisionError, match="from the callback"):
        ec.calibrate(runs_csv, progress=boom)
    with pytest.raises(ZeroDivisionError):
        ec.optimize(model="llama-3.1-8b", gpu="h100-sxm5-80gb", num_gpus=8, seq_len=4096,
                    global_batch_tokens=1048576, progress=boom)
    with pytest.raises(ZeroDivisionError):
        ec.sweep(BERT, {"batch_per_gpu": list(range(1, 600))}, progress=lambda d, t: 1 / 0)
    # the context is still usable afterwards
    assert ec.predict(**BERT).step_s > 0


def test_callback_asking_to_stop_cancels(runs_csv):
    with pytest.raises(ec.CanceledError):
        ec.optimize(model="llama-3.1-8b", gpu="h100-sxm5-80gb", num_gpus=8, seq_len=4096,
                    global_batch_tokens=1048576, progress=lambda what, done, total: True)
    with pytest.raises(ec.CanceledError):
        ec.sweep(BERT, {"batch_per_gpu": list(range(1, 600))}, progress=lambda d, t: True)
    with pytest.raises(ec.BadValueError):
        ec.calibrate(runs_csv, progress="not callable")


def test_sweep_plan_optimize_bad_keys():
    with pytest.raises(ec.UnknownKeyError, match="bogus"):
        ec.sweep(BERT, {"bogus": [1, 2]})
    with pytest.raises(ec.BadValueError, match="batch_per_gpu"):
        ec.sweep(BERT, {"batch_per_gpu": [1, "x"]})
    with pytest.raises(ec.BadValueError):
        ec.sweep(BERT, {"batch_per_gpu": [1, None]})
    with pytest.raises(ec.BadValueError):
        ec.sweep(BERT, "batch_per_gpu")
    with pytest.raises(ec.BadValueError):
        ec.sweep(BERT, {"batch_per_gpu": [1]}, threads=-1)
    with pytest.raises(ec.UnknownKeyError):
        ec.plan(BERT, dataset_samples=1000, gpu=["t4"], bogus=[1])
    with pytest.raises(ec.BadValueError):
        ec.plan(BERT, dataset_samples=1000, gpu=["t4"], deadline_h="soon")
    with pytest.raises(ec.Error):
        ec.optimize(model="llama-3.1-8b", gpu="h100-sxm5-80gb", num_gpus=8, seq_len=4096, tp=[],
                    global_batch_tokens=1048576)
    with pytest.raises(ec.BadValueError):
        ec.max_batch(BERT, limit=-1)


def test_bad_input_never_crashes_the_interpreter():
    """The cases above in a child interpreter: it must exit normally (no signal, no abort)."""
    code = textwrap.dedent("""
        import epochcast as ec
        bad = [dict(bogus=1), dict(batch_per_gpu="x"), dict(batch_per_gpu=None), dict(batch_per_gpu=[1]),
               dict(model="/nonexistent/config.json"), dict(gpu=b"t4"), dict(gpu="\\0"), dict(seq_len=-1),
               dict(seq_len=10**30), dict(batch_per_gpu=float("nan"))]
        n = 0
        for kw in bad:
            try:
                ec.predict(dict(model="bert-base", gpu="t4", batch_per_gpu=8), **kw)
            except ec.Error:
                n += 1
        for bad_net in [{}, {"id": "x"}, {"id": "x", "layers": [("nope",)], "heads": []},
                        {"id": "x", "layers": [{"kind": "linear", "out": "wide"}], "heads": [{"task": "lm"}]},
                        {"id": "x", "layers": [{"kind": "embedding", "vocab": 10, "dim": 7},
                                               {"kind": "attention", "heads": 3}],
                         "heads": [{"task": "lm", "kind": "causal_lm"}]}]:
            try:
                ec.network(bad_net)
            except ec.Error:
                n += 1
        print("raised", n, "of", len(bad) + 5)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "raised 15 of 15" in out.stdout, out.stdout + out.stderr
