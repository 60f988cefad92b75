"""sweep and the table forms: a DataFrame with pandas, a list of dicts without; the rows are
the same on any number of threads and equal to single predictions."""
import pytest

import epochcast as ec
from conftest import BERT, rows

BASE = {"model": "bert-base", "seq_len": 128, "precision": "amp_fp16"}
AXES = {"gpu": ["t4", "a100-sxm4-80gb", "k80"], "batch_per_gpu": [8, 16, 32]}


def test_sweep_rows_and_order(tables):
    t = ec.sweep(BASE, AXES, threads=1)
    if tables == "pandas":
        import pandas as pd
        assert isinstance(t, pd.DataFrame) and len(t) == 9
        assert list(t.columns[:2]) == ["gpu", "batch_per_gpu"] and t.columns[-1] == "error"
    else:
        assert isinstance(t, list) and isinstance(t[0], dict) and len(t) == 9
    r = rows(t)
    assert [(x["gpu"], x["batch_per_gpu"]) for x in r][:4] == [("t4", 8), ("t4", 16), ("t4", 32),
                                                                ("a100-sxm4-80gb", 8)]
    for x in r:
        p = ec.predict(BASE, gpu=x["gpu"], batch_per_gpu=x["batch_per_gpu"]).to_dict()
        for col, v in p.items():
            assert x[col] == v, col
        assert x["error"] is None


def test_sweep_threads_give_the_same_rows(tables):
    axes = {"gpu": ["t4", "a10", "a100-sxm4-80gb", "h100"], "batch_per_gpu": list(range(1, 65)),
            "num_workers": [0, 4]}
    one = rows(ec.sweep(BASE, axes, threads=1))
    four = rows(ec.sweep(BASE, axes, threads=4))
    assert len(one) == 512 and one == four


def test_sweep_fields_and_list_axes():
    t = rows(ec.sweep(BASE, [("batch_per_gpu", [8, 16]), ("gpu", "t4")], fields=["step_s", "fits"]))
    assert list(t[0]) == ["batch_per_gpu", "gpu", "step_s", "fits", "error"]
    assert t[1]["batch_per_gpu"] == 16 and t[1]["gpu"] == "t4"
    with pytest.raises(KeyError):
        ec.sweep(BASE, {"batch_per_gpu": [8]}, fields=["nope"])


def test_sweep_refused_point_is_a_row(tables):
    t = rows(ec.sweep(dict(BASE, gpu="t4"), {"precision": ["amp_fp16", "amp_fp8"], "batch_per_gpu": [8]}))
    assert t[0]["error"] is None and t[0]["step_s"] > 0
    assert "FP8" in t[1]["error"] and t[1]["step_s"] is None or t[1]["step_s"] != t[1]["step_s"]
    with pytest.raises(ec.BadValueError, match="FP8"):
        ec.sweep(dict(BASE, gpu="t4"), {"precision": ["amp_fp16", "amp_fp8"], "batch_per_gpu": [8]}, strict=True)


def test_sweep_progress_called():
    seen = []
    ec.sweep(BASE, {"batch_per_gpu": list(range(1, 1001))}, fields=["step_s"],
             progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (1000, 1000) and len(seen) >= 3


def test_set_tables_modes():
    with pytest.raises(ValueError):
        ec.set_tables("csv")
    old = ec.set_tables("dicts")
    try:
        assert isinstance(ec.gpus(), list)
    finally:
        ec.set_tables(old)


def test_plain_path_without_pandas(monkeypatch):
    """The fallback when pandas does not import at all."""
    import epochcast._table as tab
    monkeypatch.setattr(tab, "_pd", None)
    t = ec.sweep(BASE, {"batch_per_gpu": [8, 16]})
    assert isinstance(t, list) and t[0]["batch_per_gpu"] == 8
    assert isinstance(ec.models(), list)
    with pytest.raises(ImportError):
        ec.set_tables("pandas")


def test_empty_axis_and_no_axes():
    with pytest.raises(ec.BadValueError):
        ec.sweep(BASE, {"batch_per_gpu": []})
    with pytest.raises(ec.BadValueError):
        ec.sweep(BERT, {})
