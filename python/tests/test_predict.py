"""predict: the result object, its columns, units and summary, warnings, Result.config."""
import math
import warnings

import pytest

import epochcast as ec
from conftest import BERT, LLAMA


def test_predict_result_attributes():
    r = ec.predict(**BERT)
    assert isinstance(r, ec.Result)
    assert r.step_s > 0 and r.samples_per_s > 0 and r.tokens_per_s > 0
    assert r.peak_bytes > 0 and r.capacity_bytes > 0 and r.fits is True
    assert r.bottleneck in ("compute", "cpu", "input", "h2d", "comm")
    parts = (r.breakdown_forward_s + r.breakdown_backward_s + r.breakdown_optimizer_s + r.breakdown_h2d_s
             + r.breakdown_cpu_overhead_s + r.breakdown_loader_s + r.breakdown_comm_s)
    assert math.isclose(parts, r.step_s, rel_tol=1e-6)
    assert r["step_s"] == r.step_s
    assert isinstance(r.warnings, list)


def test_to_dict_has_every_column_in_order():
    d = ec.predict(**BERT).to_dict()
    assert list(d) == ec.RESULT_COLUMNS
    assert isinstance(d["warnings"], str) and isinstance(d["fits"], bool) and isinstance(d["dp"], int)


def test_summary_prints_step_tokens_memory_cost():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ec.EpochcastWarning)
        text = str(ec.predict(**LLAMA))
    assert text.startswith("llama-3.1-8b (lm task) on h100-sxm5-80gb x 1, amp_bf16, batch_per_gpu 1, seq_len 4096")
    for part in ("step time", "tokens/s", "peak", "fits:", "cost", "price"):
        assert part in text
    r = ec.predict(**LLAMA)  # the step line carries the interval, as the CLI's does
    step = next(line for line in text.splitlines() if "step time" in line)
    assert step.endswith("(p10 %#.4g, p90 %#.4g ms)" % (r.step_p10_s * 1e3, r.step_p90_s * 1e3))
    assert repr(ec.predict(**BERT)) == str(ec.predict(**BERT))


def test_hours_and_money():
    r = ec.predict(**dict(BERT, gpu="t4", train_tokens=1e9))
    assert r.run_s > 0 and abs(r.train_time_h * 3600 - r.run_s) <= 1e-9 * r.run_s
    assert r.price_currency == "USD" and r.cost_usd == r.cost_run > 0
    text = str(r)
    assert "run time" in text and "USD " in text
    n = ec.predict(**dict(BERT, gpu="t4"))
    assert n.cost_usd == 0 and n.cost_per_million_tokens > 0 and "per 1M tokens" in str(n)


def test_warnings_are_python_warnings():
    with pytest.warns(ec.EpochcastWarning, match="exceeds the GPU's capacity") as rec:
        r = ec.predict(**LLAMA)  # 8B full fine-tune on one H100: does not fit
    assert r.fits is False
    assert any("exceeds" in w for w in r.warnings)
    assert rec[0].filename == __file__  # attributed to the caller, not the package


def test_config_as_simulated():
    c = ec.predict(**BERT).config
    assert c["gpu"] == "a16" and c["strategy"] == "single" and c["batch_per_gpu"] == 16 and c["seq_len"] == 256


def test_dict_and_keywords_merge():
    a = ec.predict(BERT)
    b = ec.predict(dict(BERT, batch_per_gpu=8), batch_per_gpu=16)
    assert a == b


def test_value_types():
    base = dict(BERT)
    r1 = ec.predict(base, pin_memory=True, num_workers=2)
    r2 = ec.predict(base, pin_memory="1", num_workers="2")
    assert r1 == r2
    assert ec.predict(base, sample_cpu_s=0.001) == ec.predict(base, sample_cpu_s="0.001")
    np = pytest.importorskip("numpy")
    assert ec.predict(base, batch_per_gpu=np.int64(16)) == ec.predict(base)


def test_none_is_the_default():
    assert ec.predict(BERT, num_workers=None) == ec.predict(BERT)


def test_max_batch(cli):
    keys = dict(model="bert-large", gpu="t4", precision="amp_fp16", seq_len=256)
    b = ec.max_batch(**keys)
    out = cli("max-batch", *["%s=%s" % kv for kv in keys.items()]).stdout
    assert "max batch_per_gpu %d" % b in out
    assert ec.max_batch(keys, limit=8) == 8


def test_compare():
    c = ec.compare(BERT, {"gpu": "a100-sxm4-80gb"})
    assert c["speedup"] > 1 and c["a"].step_s > c["b"].step_s


def test_trace(tmp_path):
    import json
    p = ec.trace(tmp_path / "t.json", BERT, steps=2)
    assert (tmp_path / "t.json").read_text().lstrip().startswith(("{", "["))
    assert p.endswith("t.json")
    names = [e["name"] for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]]
    assert names.count("forward") == 2 and names.count("optimizer step") == 2  # issue 41: the step's phases


def test_keys_and_registries(tables):
    from conftest import rows
    keys = ec.keys()
    assert "batch_per_gpu" in keys and keys["batch_per_gpu"]
    g = rows(ec.gpus())
    assert any(r["id"] == "t4" for r in g) and all(r["memory_bytes"] > 0 for r in g)
    m = rows(ec.models())
    assert any(r["id"] == "llama-3.1-8b" and r["params"] > 7e9 for r in m)
    assert any(r["id"] == "ib-ndr-400" for r in rows(ec.networks()))


def test_model_info(cli, tables):
    from conftest import rows
    mi = ec.model_info("llama-3.1-8b", seq_len=4096, precision="amp_bf16")
    assert mi.info["family"] == "llama" and "lm" in mi.info["tasks"]
    assert mi.params > 7e9 and mi.fwd_flop_per_sample > 0 and mi.weights_bytes > 0
    layers = rows(mi.layers)
    assert layers and layers[-1]["kind"] == "head"
    out = cli("model-info", "model=llama-3.1-8b", "seq_len=4096", "precision=amp_bf16").stdout
    assert "%.4g" % mi.params in out or str(int(mi.params)) in out.replace(",", "") or "8.03" in out


def test_stages(tables):
    from conftest import rows
    st = rows(ec.stages(model="llama-3.1-70b", gpu="h100-sxm5-80gb", num_gpus=64, strategy="fsdp", tp=8, pp=4,
                        batch_per_gpu=1, seq_len=8192, grad_accum=16, precision="amp_bf16", checkpointing=1))
    assert len(st) == 4 and st[0]["first_layer"] == 0 and all(s["micro_s"] > 0 for s in st)
    assert sum(s["layers"] for s in st) == 80
    assert len(rows(ec.stages(**BERT))) == 1
