"""Thread use: several Python threads predicting on one Context (each on its own ec_ctx) give
what one thread gives; a network defined meanwhile reaches every thread; separate Contexts."""
import threading
from concurrent.futures import ThreadPoolExecutor

import epochcast as ec

CONFIGS = [dict(model=m, gpu=g, batch_per_gpu=b, precision="amp_bf16", seq_len=512)
           for m in ("bert-base", "gpt2", "llama-3.2-1b") for g in ("a10", "a100-sxm4-80gb", "h100")
           for b in (1, 4, 16)]


def test_threads_same_results_as_one():
    ctx = ec.Context()
    want = [ctx.predict(**c).to_dict() for c in CONFIGS]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(3):
            got = list(pool.map(lambda c: ctx.predict(**c).to_dict(), CONFIGS))
            assert got == want


def test_default_context_from_threads():
    want = [ec.predict(**c).step_s for c in CONFIGS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(lambda c: ec.predict(**c).step_s, CONFIGS)) == want


def test_network_defined_reaches_running_threads():
    ctx = ec.Context()
    ctx.predict(**CONFIGS[0])  # this thread's context exists before the definition
    ready, go = threading.Barrier(2), threading.Event()
    out = {}

    def worker():
        ctx.predict(**CONFIGS[1])
        ready.wait()
        go.wait()
        out["r"] = ctx.predict(model="mlp-net-thread", gpu="t4", batch_per_gpu=8)

    t = threading.Thread(target=worker, daemon=True)
    t.start()
    ready.wait()
    try:
        ctx.network({"id": "mlp-net-thread", "image_size": 32,
                     "layers": [("conv2d", {"out": 16, "kernel": 3}), ("activation", "relu")],
                     "heads": [{"task": "imagenet", "kind": "image_classify", "classes": 10, "pool": True}]})
    finally:
        go.set()
        t.join(60)
    assert out["r"].step_s > 0
    assert ctx.predict(model="mlp-net-thread", gpu="t4", batch_per_gpu=8) == out["r"]


def test_sweeps_in_parallel_contexts():
    base = {"model": "bert-base", "seq_len": 128}
    axes = {"gpu": ["t4", "a10"], "batch_per_gpu": list(range(1, 33))}
    want = ec.sweep(base, axes, threads=1, fields=["step_s"])
    from conftest import rows
    with ThreadPoolExecutor(max_workers=3) as pool:
        res = list(pool.map(lambda _: rows(ec.Context().sweep(base, axes, threads=2, fields=["step_s"])), range(3)))
    assert all(r == rows(want) for r in res)
