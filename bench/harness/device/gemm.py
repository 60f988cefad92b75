"""gemm.py: GEMM throughput over the shapes training runs and each dtype, into DIR/gemm.csv.

Shapes: the Llama-3.2-1B and BERT-base linears at 8,192 and 4,096 tokens (forward; the backward
GEMMs are the same shapes transposed), the tied LM head, LoRA's rank-16 skinny products, and
square 2,048-8,192. Dtypes: fp32 (TF32 off), tf32 (TF32 on), fp16, bf16, and fp8 (e4m3 x e4m3
into bf16 through torch._scaled_mm) where the GPU has FP8 tensor cores (compute capability
8.9 or more). Each shape: a warm-up call, then enough calls for about 40 ms between CUDA
events. efficiency_frac is the rate over the dense peak of models/gpus.csv for this GPU.

First, on a GPU that has rested a second, DIR/gemm_sustained.csv: bf16 8192^3 in short
synchronized calls (the way the GEMM efficiencies of gpus.csv were timed), then back to back
for BACK_TO_BACK_S seconds (a training step's regime, where a power limit holds the clock
down); sustained_tensor_frac is the rate of the last quarter over the short-run one: the
measurement behind models/gpus.csv's column of that name (the B200's from flashinfer PR 2899).
"""
import time

import common

# (m, n, k, what): C[m,n] = A[m,k] B[k,n]
SHAPES = [
    (8192, 2048, 2048, "llama-1b q/o proj, 8k tokens"),
    (8192, 512, 2048, "llama-1b k/v proj (8 kv heads)"),
    (8192, 8192, 2048, "llama-1b gate/up"),
    (8192, 2048, 8192, "llama-1b down"),
    (8192, 32768, 2048, "llama-1b LM head, a quarter of the vocabulary"),
    (4096, 768, 768, "bert-base attention proj, 4k tokens"),
    (4096, 3072, 768, "bert-base intermediate"),
    (4096, 768, 3072, "bert-base output"),
    (8192, 16, 2048, "LoRA A, r=16"),
    (8192, 2048, 16, "LoRA B, r=16"),
    (2048, 2048, 2048, "square 2k"),
    (4096, 4096, 4096, "square 4k"),
    (8192, 8192, 8192, "square 8k"),
]
DTYPES = ["fp32", "tf32", "fp16", "bf16", "fp8"]


def shape_class(m, n, k):
    if min(m, n, k) <= 128:
        return "skinny"
    return "large" if m * n * k >= 4096 ** 3 else "medium"


def plan():
    return [(m, n, k, d) for d in DTYPES for (m, n, k, _) in SHAPES]


def dry_rows(row):
    rows = []
    for m, n, k, d in plan():
        peak = common.peak_flop_per_s(row, d)
        rate = 0.5 * peak if peak else 1e12
        flop = 2.0 * m * n * k
        rows.append(dict(m=m, n=n, k=k, dtype=d, shape_class=shape_class(m, n, k), time_s=flop / rate,
                         flop_per_s=rate, peak_flop_per_s=peak, efficiency_frac=rate / peak if peak else "",
                         status="dry-run"))
    return rows


BACK_TO_BACK_S = 3.0
SUSTAINED_SHAPE = (8192, 8192, 8192)


def sustained_dry_row():
    m, n, k = SUSTAINED_SHAPE
    return dict(m=m, n=n, k=k, dtype="bf16", short_flop_per_s=1e15, back_to_back_s=BACK_TO_BACK_S,
                back_to_back_flop_per_s=0.9e15, sustained_tensor_frac=0.9, status="dry-run")


def measure_sustained(torch, out):
    """Short synchronized calls after a rest, then back to back; the rate the clock holds."""
    m, n, k = SUSTAINED_SHAPE
    base = dict(m=m, n=n, k=k, dtype="bf16", back_to_back_s=BACK_TO_BACK_S)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    flop = 2.0 * m * n * k
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.mm(a, b)
    torch.cuda.synchronize()
    time.sleep(1.0)
    short = []
    for _ in range(5):  # one call at a time, each synchronized, as the microbenchmarks time them
        start.record()
        torch.mm(a, b)
        end.record()
        end.synchronize()
        short.append(start.elapsed_time(end) / 1e3)
    short_rate = flop / sorted(short)[len(short) // 2]
    # back to back: batches of calls with no gap, until BACK_TO_BACK_S; the last quarter's rate
    t0, tail = time.monotonic(), []
    while time.monotonic() - t0 < BACK_TO_BACK_S:
        start.record()
        for _ in range(20):
            torch.mm(a, b)
        end.record()
        end.synchronize()
        tail.append((time.monotonic() - t0, start.elapsed_time(end) / 1e3 / 20))
    last = [t for (at, t) in tail if at >= 0.75 * BACK_TO_BACK_S] or [tail[-1][1]]
    held = flop / (sum(last) / len(last))
    common.write_table(out, "gemm_sustained", [dict(base, short_flop_per_s=short_rate, back_to_back_flop_per_s=held,
                                                    sustained_tensor_frac=held / short_rate, status="ok")])


def time_call(torch, fn, target_s=0.04):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end) / 1e3, 1e-6)
    iters = int(min(max(target_s / once, 3), 500))
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def measure(args, row):
    import torch
    cap = torch.cuda.get_device_capability(0)
    has_fp8 = cap >= (8, 9) and hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")
    budget = common.Budget(args.cap_s)
    try:
        measure_sustained(torch, args.out)
    except Exception as e:  # the sweep below runs whatever this did
        common.write_table(args.out, "gemm_sustained", [dict(status=f"failed: {type(e).__name__}: {e}"[:200])])
    torch.cuda.empty_cache()
    for m, n, k, d in plan():
        base = dict(m=m, n=n, k=k, dtype=d, shape_class=shape_class(m, n, k),
                    peak_flop_per_s=common.peak_flop_per_s(row, d))
        if not budget.ok(2.0):
            common.write_table(args.out, "gemm", [dict(base, status="skipped: time cap")])
            continue
        if d == "fp8" and not has_fp8:
            common.write_table(args.out, "gemm", [dict(base, status=f"skipped: no fp8 on capability {cap}")])
            continue
        try:
            torch.backends.cuda.matmul.allow_tf32 = d == "tf32"
            if d == "fp8":
                a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
                b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
                one = torch.tensor(1.0, device="cuda")

                def fn():
                    torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            else:
                dt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[d]
                a = torch.randn(m, k, device="cuda", dtype=dt)
                b = torch.randn(k, n, device="cuda", dtype=dt)

                def fn():
                    torch.mm(a, b)
            t = time_call(torch, fn)
            rate = 2.0 * m * n * k / t
            peak = base["peak_flop_per_s"]
            common.write_table(args.out, "gemm", [dict(base, time_s=t, flop_per_s=rate,
                                                       efficiency_frac=rate / peak if peak else "", status="ok")])
        except Exception as e:  # one shape failing (fp8 layout rules, OOM) does not end the section
            common.write_table(args.out, "gemm", [dict(base, status=f"failed: {type(e).__name__}: {e}"[:200])])
        finally:
            a = b = None
            torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    row = common.gpu_row(common.device_name(args.dry_run))
    if args.dry_run:
        common.write_table(args.out, "gemm_sustained", [sustained_dry_row()])
        common.write_table(args.out, "gemm", dry_rows(row))
    else:
        measure(args, row)


if __name__ == "__main__":
    main()
