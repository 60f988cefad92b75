"""bandwidth.py: memory-bound kernels and launch latency, into DIR/bandwidth.csv and DIR/launch.csv.

Kernels (eager PyTorch, bf16 unless named): copy, add (two inputs), gelu, layer_norm and
rms_norm over rows of 4,096, softmax over rows of 4,096, a cast fp32 -> bf16, and the fused
AdamW step (torch.optim.AdamW(fused=True) over one flat fp32 parameter: 16 bytes read and
12 written per element, its grad included), each at 2^20, 2^24 and 2^27 elements (2 MiB to
256 MiB of bf16: in L2, at its edge, far past it). bytes_moved counts each tensor read or
written once; efficiency_frac is the rate over the spec DRAM bandwidth of models/gpus.csv.
Launch: the host's cost of one small kernel launched back to back (5,000 launches, one
synchronize), the GPU's floor per kernel (1,000 kernels replayed from a CUDA graph), and one
launch plus synchronize.
"""
import common

SIZES = [1 << 20, 1 << 24, 1 << 27]
KERNELS = ["copy", "add", "gelu", "layer_norm", "rms_norm", "softmax", "cast_fp32_bf16", "adamw_fused"]
# bytes per element read + written, bf16 unless the kernel says otherwise
BYTES_PER_ELEMENT = {"copy": 4, "add": 6, "gelu": 4, "layer_norm": 4, "rms_norm": 4, "softmax": 4,
                     "cast_fp32_bf16": 6, "adamw_fused": 28}
LAUNCH_METRICS = ["launch_host_s", "kernel_floor_s", "launch_sync_s"]


def plan():
    return [(k, n) for k in KERNELS for n in SIZES]


def dry_rows(spec):
    rows = []
    for k, n in plan():
        b = BYTES_PER_ELEMENT[k] * n
        rate = 0.8 * spec if spec else 1e12
        rows.append(dict(kernel=k, dtype="fp32" if k == "adamw_fused" else "bf16", elements=n, bytes_moved=b,
                         time_s=b / rate, bytes_per_s=rate, spec_bytes_per_s=spec,
                         efficiency_frac=rate / spec if spec else "", status="dry-run"))
    launch = [dict(metric=m, value_s=v, launches=n, status="dry-run")
              for m, v, n in zip(LAUNCH_METRICS, (4e-6, 2.5e-6, 2e-5), (5000, 1000, 1))]
    return rows, launch


def kernel_fn(torch, name, n):
    import torch.nn.functional as F
    bf = torch.bfloat16
    if name == "copy":
        x, y = torch.randn(n, device="cuda", dtype=bf), torch.empty(n, device="cuda", dtype=bf)
        return lambda: y.copy_(x)
    if name == "add":
        x, y = torch.randn(n, device="cuda", dtype=bf), torch.randn(n, device="cuda", dtype=bf)
        return lambda: x + y
    if name == "gelu":
        x = torch.randn(n, device="cuda", dtype=bf)
        return lambda: F.gelu(x)
    if name in ("layer_norm", "rms_norm", "softmax"):
        x = torch.randn(n // 4096, 4096, device="cuda", dtype=bf)
        w = torch.ones(4096, device="cuda", dtype=bf)
        if name == "layer_norm":
            return lambda: F.layer_norm(x, (4096,), w)
        if name == "softmax":
            return lambda: torch.softmax(x, dim=-1)
        if hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(x, (4096,), w)
        return lambda: x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(bf) * w
    if name == "cast_fp32_bf16":
        x = torch.randn(n, device="cuda", dtype=torch.float32)
        return lambda: x.to(bf)
    if name == "adamw_fused":
        p = torch.nn.Parameter(torch.randn(n, device="cuda"))
        p.grad = torch.randn(n, device="cuda")
        opt = torch.optim.AdamW([p], lr=1e-4, fused=True)
        return opt.step
    raise ValueError(name)


def measure(args, spec):
    import torch
    from gemm import time_call
    budget = common.Budget(args.cap_s)
    for k, n in plan():
        base = dict(kernel=k, dtype="fp32" if k == "adamw_fused" else "bf16", elements=n,
                    bytes_moved=BYTES_PER_ELEMENT[k] * n, spec_bytes_per_s=spec)
        if not budget.ok(2.0):
            common.write_table(args.out, "bandwidth", [dict(base, status="skipped: time cap")])
            continue
        try:
            fn = kernel_fn(torch, k, n)
            t = time_call(torch, fn, target_s=0.02)
            rate = base["bytes_moved"] / t
            common.write_table(args.out, "bandwidth", [dict(base, time_s=t, bytes_per_s=rate,
                                                            efficiency_frac=rate / spec if spec else "", status="ok")])
        except Exception as e:
            common.write_table(args.out, "bandwidth", [dict(base, status=f"failed: {type(e).__name__}: {e}"[:200])])
        finally:
            fn = None
            torch.cuda.empty_cache()
    rows = []
    x = torch.zeros(1, device="cuda")
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    import time
    t0 = time.perf_counter()
    for _ in range(5000):
        x.add_(1)
    torch.cuda.synchronize()
    rows.append(dict(metric="launch_host_s", value_s=(time.perf_counter() - t0) / 5000, launches=5000, status="ok"))
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                x.add_(1)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(1000):
                x.add_(1)
        g.replay()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            g.replay()
        end.record()
        end.synchronize()
        rows.append(dict(metric="kernel_floor_s", value_s=start.elapsed_time(end) / 1e3 / 5000, launches=5000,
                         status="ok"))
    except Exception as e:
        rows.append(dict(metric="kernel_floor_s", status=f"failed: {type(e).__name__}: {e}"[:200]))
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        x.add_(1)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    times.sort()
    rows.append(dict(metric="launch_sync_s", value_s=times[len(times) // 2], launches=200, status="ok (median)"))
    common.write_table(args.out, "launch", rows)


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    row = common.gpu_row(common.device_name(args.dry_run))
    spec = float(row["memory_bandwidth_bytes_per_s"]) if row else 0.0
    if args.dry_run:
        rows, launch = dry_rows(spec)
        common.write_table(args.out, "bandwidth", rows)
        common.write_table(args.out, "launch", launch)
    else:
        measure(args, spec)


if __name__ == "__main__":
    main()
