"""optimize, plan, validate, calibrate, network and Context(profile=): each against the CLI or
the library's own figures."""
import pytest

import epochcast as ec
from conftest import rows

OPT = dict(model="llama-3.1-70b", gpu="h100-sxm5-80gb", num_gpus=64, network="ib-ndr-400", seq_len=8192,
           global_batch_tokens=4194304)


def test_optimize(cli, tables):
    o = ec.optimize(**OPT, top=5)
    lay = rows(o.layouts)
    assert 0 < len(lay) <= 5 and lay[0]["reason"] == "best" and o.best == lay[0]
    assert all(a["tokens_per_s"] >= b["tokens_per_s"] for a, b in zip(lay, lay[1:]))
    assert o.stats["considered"] == o.stats["pruned_divide"] + o.stats["pruned_memory"] + o.stats["priced"]
    out = cli("optimize", *["%s=%s" % kv for kv in OPT.items()], "--top", "1").stdout
    assert "%.0f" % lay[0]["tokens_per_s"] in out.replace(",", "")
    assert "optimize:" in repr(o)


def test_optimize_lists_and_goal():
    o = ec.optimize(OPT, tp=[1, 2, 4, 8], pp=[1, 2], goal="cost", train_tokens=1e11, top=3)
    lay = rows(o.layouts)
    assert all(r["tp"] in (1, 2, 4, 8) and r["pp"] in (1, 2) for r in lay)
    assert lay[0]["cost"] > 0
    assert lay[0]["price_currency"] == "USD" and lay[0]["price_offer"] and lay[0]["cost_usd"] == lay[0]["cost"]
    assert abs(lay[0]["train_time_h"] * 3600 - lay[0]["train_s"]) <= 1e-9 * lay[0]["train_s"]


def test_optimize_train_samples_and_ties():
    o = ec.optimize(OPT, goal="cost", train_samples=1000, top=5)
    lay = rows(o.layouts)
    seq = lay[0]["seq_len"]
    assert abs(lay[0]["train_s"] * lay[0]["tokens_per_s"] - 1000 * seq) <= 1e-6 * 1000 * seq
    for r in lay[1:]:  # a layout with the best's figures ties; a dearer one says by how much
        assert "a dearer job: " not in r["reason"]
        if r["cost"] == lay[0]["cost"]:
            assert r["reason"].startswith("ties with the best")


def test_plan_train_tokens():
    p = ec.plan(dict(model="bert-base", task="classify", seq_len=128, precision="amp_fp16", train_tokens=1e9),
                gpu=["t4", "a10g"])
    assert p.best is not None and p.best["cost_usd"] > 0 and p.best["train_time_h"] > 0
    assert p.best["price_currency"] == "USD"


PLAN = dict(model="bert-base", task="classify", seq_len=128, precision="amp_fp16", dataset_samples=1000000)


def test_plan(cli, tables, tmp_path):
    p = ec.plan(PLAN, gpu=["t4", "a10", "a100-sxm4-80gb"], num_gpus=[1, 2, 4], deadline_h=2)
    r = rows(p.rows)
    assert len(r) == 9 and p.best is not None and p.best["best"] is True and p.best["verdict"] == "meets"
    assert {x["verdict"] for x in r} <= {"meets", "refused", "does_not_fit", "too_many_gpus", "no_price", "late",
                                          "over_budget"}
    front = rows(p.front)
    assert front and all(a["run_s"] <= b["run_s"] for a, b in zip(front, front[1:]))
    out = cli("plan", *["%s=%s" % kv for kv in PLAN.items()], "gpu=t4,a10,a100-sxm4-80gb", "num_gpus=1,2,4",
              "deadline_h=2", check=False, cwd=tmp_path).stdout  # the CLI writes plan.csv and plan.png
    assert p.best["gpu"] in out
    assert "plan: best" in repr(p)


def test_plan_nothing_meets():
    p = ec.plan(PLAN, gpu=["t4"], deadline_h=0.001)
    assert p.best is None and "no configuration" in p.reason


def test_validate(runs_csv, cli, tables):
    v = ec.validate(runs_csv)
    r = rows(v.rows)
    assert [x["id"] for x in r] == ["r1", "r2"] and r[0]["gpu"] == "v100-sxm2-16gb"
    assert v.stats["n"] == 2 and v.stats["mape_frac"] > 0
    out = cli("validate", str(runs_csv), "-o", str(runs_csv.parent / "v.csv")).stdout
    import csv
    with open(runs_csv.parent / "v.csv") as f:
        clirows = list(csv.DictReader(f))
    for a, b in zip(r, clirows):
        assert float(b["predicted"]) == pytest.approx(a["predicted"], rel=5e-6)
        assert float(b["error_pct"]) == pytest.approx(a["error_pct"], rel=5e-6)
    assert "MAPE" in repr(v) and "%.1f" % (100 * v.stats["mape_frac"]) in out
    assert len(rows(v.by_gpu)) == 2
    # each metric scored as itself, with the CLI's "by metric" figures
    bm = rows(v.by_metric)
    assert [x["metric"] for x in bm] == sorted({x["metric"] for x in r if x["metric"] != "oom"})
    for x in bm:
        assert "  %-24s %6d %8.1f" % (x["metric"], x["n"], 100 * x["mape_frac"]) in out


def test_calibrate_and_profile(runs_csv, tmp_path, tables):
    out = tmp_path / "prof.csv"
    c = ec.calibrate(runs_csv, out=out)
    assert c.n_runs == 2 and out.exists() and c.profile == str(out)
    params = rows(c.params)
    assert any(p["parameter"] == "gemm_scale" for p in params)
    # an architecture's entry names the kernel classes it prices (the runs' kernels=, eager by default)
    assert all(p["kernels"] == ("eager" if p["architecture"] else "") for p in params)
    assert c.mape_after_frac <= c.mape_before_frac + 1e-12
    keys = dict(model="bert-base", gpu="v100-sxm2-16gb", precision="amp_fp16", batch_per_gpu=32, seq_len=128)
    plain = ec.predict(**keys)
    fitted = ec.Context(profile=out).predict(**keys)
    assert fitted.step_s != plain.step_s
    assert fitted == ec.predict(keys, profile=str(out))  # the same fit through the profile= key


def test_calibrate_unseen_architecture_terms(cli, tmp_path, tables):
    """Runs of three architectures: the leave-one-architecture-out sds and each architecture's fold
    (its rows inside the p10-p90 of the sd the others give) are the library's, as the CLI and the
    written profile show them."""
    import csv
    import os
    from conftest import ROOT
    with open(os.path.join(ROOT, "bench", "data", "calibration_dle.csv"), newline="") as f:
        rd = csv.reader(f)
        head = next(rd)
        g, n = head.index("gpu"), head.index("num_gpus")
        keep = [r for r in rd if r[n] == "1" and r[g] in ("v100-sxm2-16gb", "rtx2080ti", "a100-sxm4-40gb")]
    runs = tmp_path / "runs.csv"
    with open(runs, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([head] + keep)
    out = tmp_path / "prof.csv"
    c = ec.calibrate(runs, out=out)
    assert c.arch_error_log_sd is not None and c.arch_error_log_sd > 0
    # one communication sd per path (no multi-GPU run here: 0 each)
    assert c.comm_error_log_sd == {"direct": 0.0, "host": 0.0, "host_shared": 0.0}
    with open(out, newline="") as f:
        prof = {r["parameter"]: float(r["value"]) for r in csv.DictReader(f) if not r["architecture"]}
    assert abs(prof["error_log_sd_unseen_arch"] / c.arch_error_log_sd - 1) < 1e-3
    terms = rows(c.arch_terms)
    assert {t["architecture"] for t in terms} == {"volta", "turing", "ampere"}
    assert all(0 <= t["covered"] <= t["runs"] and t["sd_without"] > 0 for t in terms)
    text = cli("calibrate", str(runs), "-o", str(tmp_path / "cli.csv")).stdout
    for t in terms:
        if t["class"] == "gpu":
            assert "%10.3f %5.0f%%" % (t["sd_without"], 100.0 * t["covered"] / t["runs"]) in text


TINY = {"id": "tiny-llama-py", "default_seq_len": 2048,
        "layers": [{"kind": "embedding", "vocab": 32000, "dim": 2048},
                   ("repeat", {"times": 22},
                    ("residual", "save"), ("norm", "rms"),
                    {"kind": "attention", "heads": 32, "kv_heads": 4, "causal": True, "position": "rope"},
                    ("residual", "add"), ("residual", "save"), ("norm", "rms"),
                    {"kind": "mlp", "ffn": 5632, "act": "silu", "gated": True}, ("residual", "add")),
                   ("norm", "rms")],
        "heads": [{"task": "lm", "kind": "causal_lm"}]}

TINY_LUA = """
local ec = require "epochcast"
ec.network{ id = "tiny-llama-py", default_seq_len = 2048,
  layers = { {"embedding", vocab = 32000, dim = 2048},
             {"repeat", times = 22, {"residual", "save"}, {"norm", "rms"},
                {"attention", heads = 32, kv_heads = 4, causal = true, position = "rope"},
                {"residual", "add"}, {"residual", "save"}, {"norm", "rms"},
                {"mlp", ffn = 5632, act = "silu", gated = true}, {"residual", "add"}},
             {"norm", "rms"} },
  heads = { {task = "lm", kind = "causal_lm"} } }
local r = assert(ec.predict{model = "tiny-llama-py", gpu = "a100-sxm4-80gb", precision = "amp_bf16",
                            batch_per_gpu = 4})
print(string.format("%.17g %.17g", r.step_s, r.memory.peak_bytes))
"""


def test_network_equals_lua(cli, tmp_path):
    ctx = ec.Context()
    assert ctx.network(TINY) == "tiny-llama-py"
    r = ctx.predict(model="tiny-llama-py", gpu="a100-sxm4-80gb", precision="amp_bf16", batch_per_gpu=4)
    assert any(m["id"] == "tiny-llama-py" for m in rows(ctx.models()))
    script = tmp_path / "net.lua"
    script.write_text(TINY_LUA)
    step, peak = map(float, cli("run", str(script)).stdout.split())
    assert r.step_s == step and r.peak_bytes == peak
    with pytest.raises(ec.BadValueError, match="already"):
        ctx.network(TINY)
    # another context does not see it
    with pytest.raises(ec.UnknownNameError):
        ec.Context().predict(model="tiny-llama-py", gpu="t4", batch_per_gpu=1)


@pytest.mark.parametrize("bad,text", [
    ({"layers": [], "heads": []}, "'id'"),
    ({"id": "n1", "layers": [("nope",)], "heads": [{"task": "lm"}]}, "unknown kind 'nope'"),
    ({"id": "n2", "layers": [{"kind": "linear", "out": "wide"}], "heads": [{"task": "lm"}]}, "must be an integer"),
    ({"id": "n3", "layers": [{"kind": "norm", "kind2": 1}], "heads": [{"task": "lm"}]}, "unknown field 'kind2'"),
    ({"id": "n4", "layers": [("norm", "cubic")], "heads": [{"task": "lm"}]}, "'cubic' is not one of"),
    ({"id": "n5", "layers": [{"kind": "embedding", "vocab": 10, "dim": 7}, {"kind": "attention", "heads": 3}],
      "heads": [{"task": "lm", "kind": "causal_lm"}]}, "layer 2"),
    ({"id": "n6", "layers": [{"kind": "embedding", "vocab": 10, "dim": 8}], "heads": []}, "at least one head"),
    ({"id": "n7", "wat": 1}, "unknown key 'wat'"),
])
def test_network_errors(bad, text):
    with pytest.raises(ec.Error, match=text):
        ec.Context().network(bad)


def test_validate_metrics_and_oom(tmp_path, cli, tables):
    """Every metric by its own name; out-of-memory outcomes as caught / missed, never in the
    MAPE (a run that ran has value 0: no relative error exists)."""
    p = tmp_path / "oom_runs.csv"
    p.write_text("id,model,gpu,batch_per_gpu,seq_len,precision,metric,memory_reading,value,source\n"
                 "m1,bert-base,t4,16,128,amp_fp16,samples_per_s,,150,test\n"
                 "m2,bert-base,t4,16,128,amp_fp16,peak_bytes,reserved,5000000000,test\n"
                 "m3,bert-base,t4,512,512,fp32,oom,,1,test\n"
                 "m4,bert-base,t4,8,128,fp32,oom,,0,test\n")
    v = ec.validate(str(p))
    r = rows(v.rows)
    assert [x["metric"] for x in r] == ["samples_per_s", "reserved_bytes", "oom", "oom"]
    assert r[3]["error_pct"] is None or r[3]["error_pct"] != r[3]["error_pct"]  # None, or NaN in a DataFrame
    assert v.stats["n"] == 2
    assert v.oom == {"died": 1, "caught": 1, "missed": 0, "ran": 1, "false_alarm": 0}
    out = cli("validate", str(p)).stdout
    assert "1 died, 1 predicted not to fit (caught)" in out
