"""Results equal to the CLI's for the same keys: `epochcast predict KEY=VALUE... --csv` against
Result.to_dict(), every result column, for configurations across the model's paths; and the
binding's column list against the CLI's header."""
import csv
import io

import pytest

import epochcast as ec

CONFIGS = [
    dict(model="bert-base", task="classify", gpu="a16", precision="fp32", batch_per_gpu=16, seq_len=256),
    dict(model="llama-3.1-8b", gpu="h100", precision="amp_bf16", batch_per_gpu=1, seq_len=4096),
    dict(model="llama-3.1-8b", gpu="rtx4090", lora_r=16, lora_targets="all_linear", base_precision="nf4",
         precision="bf16", checkpointing=1, batch_per_gpu=2, seq_len=2048, data="synthetic"),
    dict(model="llama-3.1-70b", gpu="h100-sxm5-80gb", num_gpus=64, strategy="fsdp", tp=8, pp=2,
         network="ib-ndr-400", batch_per_gpu=1, seq_len=8192, grad_accum=8, precision="amp_bf16",
         checkpointing=1),
    dict(model="resnet50", gpu="t4", precision="amp_fp16", batch_per_gpu=64, num_workers=4, pin_memory=True,
         dataset_samples=1281167, epochs=2),
    dict(model="bert-base", gpu="a16", num_gpus=8, strategy="dp", precision="amp_fp16", batch_per_gpu=32,
         seq_len=128, dataset_samples=1000000, tokenize="on_the_fly", tokenizer="python"),
]


def cli_row(cli, keys):
    words = ["%s=%s" % (k, (1 if v is True else v)) for k, v in keys.items()]
    out = cli("predict", *words, "--csv").stdout
    rd = list(csv.reader(io.StringIO(out)))
    return dict(zip(rd[0], rd[1])), rd[0]


def same(py, text):
    if isinstance(py, bool):
        return text == ("1" if py else "0")
    if isinstance(py, (int, float)):
        # the CLI prints "%.6g" (ec_format_number); whole numbers in full
        return float(text) == pytest.approx(py, rel=5e-6, abs=1e-300)
    return py == text


@pytest.mark.parametrize("keys", CONFIGS, ids=[c["model"] + "-" + c["gpu"] for c in CONFIGS])
def test_predict_equals_cli(cli, keys):
    row, _header = cli_row(cli, keys)
    d = ec.predict(**keys).to_dict()
    for col in ec.RESULT_COLUMNS:
        assert same(d[col], row[col]), "%s: python %r, cli %r" % (col, d[col], row[col])


def test_result_columns_are_the_clis(cli):
    _row, header = cli_row(cli, CONFIGS[0])
    nkeys = len(ec.KEYS)
    assert header[:nkeys] == ec.KEYS
    assert header[nkeys:] == ec.RESULT_COLUMNS


def test_sweep_equals_cli_sweep_rows(cli):
    keys = CONFIGS[0]
    t = ec.sweep(keys, {"batch_per_gpu": [4, 8, 16]})
    from conftest import rows
    for r in rows(t):
        row, _ = cli_row(cli, dict(keys, batch_per_gpu=r["batch_per_gpu"]))
        for col in ("step_s", "samples_per_s", "peak_bytes", "mfu_frac"):
            assert same(r[col], row[col])
