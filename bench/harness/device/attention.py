"""attention.py: fused attention by implementation, sequence and head dim, into DIR/attention.csv.

Implementations: torch's scaled_dot_product_attention pinned to each backend it has (math,
efficient = memory-efficient, flash = FlashAttention-2 inside PyTorch, cudnn where the
torch has it), the backend SDPA picks by itself (`auto`), and the flash_attn package's
flash_attn_func when it is installed. Grid: sequence 512, 2,048, 8,192 (the math backend to
2,048: its s x s scores), head dim 64 and 128, causal and not, bf16, 16 heads and batch
16,384 / seq (the same tokens in every cell). Each cell times the forward, then forward and
backward; the backward's row is their difference. FLOPs: 4 b h s^2 d for the forward, 2.5
times that for the backward, halved when causal (FlashAttention's accounting).

Masked cells (impl `sdpa_mask`): SDPA given the causal mask as a boolean (1, 1, s, s) tensor and
is_causal False, as Hugging Face under torch.compile calls it (docs/stack.md, attn_mask), on the
backends that take a mask (efficient, cudnn) and the one SDPA picks (auto), sequence 2,048 and
8,192, head dim 128. Every key block is computed, so their FLOPs are the non-causal ones
(`causal` 0); against the same backend's non-causal cell they measure attn_mask_eff (profile.py).
"""
import common

SEQS = [512, 2048, 8192]
HEAD_DIMS = [64, 128]
HEADS = 16
TOKENS = 16384
IMPLS = [("sdpa", "auto"), ("sdpa", "math"), ("sdpa", "efficient"), ("sdpa", "flash"), ("sdpa", "cudnn"),
         ("flash_attn", "flash_attn_func")]
MASK_BACKENDS = ["auto", "efficient", "cudnn"]
MASK_SEQS = [2048, 8192]


def plan():
    cells = []
    for impl, backend in IMPLS:
        for seq in SEQS:
            if backend == "math" and seq > 2048:
                continue
            for hd in HEAD_DIMS:
                for causal in (0, 1):
                    cells.append((impl, backend, max(1, TOKENS // seq), seq, hd, causal))
    for backend in MASK_BACKENDS:
        for seq in MASK_SEQS:
            cells.append(("sdpa_mask", backend, max(1, TOKENS // seq), seq, 128, 0))
    return cells


def fwd_flop(batch, seq, hd, causal):
    return 4.0 * batch * HEADS * seq * seq * hd * (0.5 if causal else 1.0)


def row(impl, backend, batch, seq, hd, causal, pass_, t, flop, status):
    return dict(impl=impl, backend=backend, batch=batch, heads=HEADS, seq=seq, head_dim=hd, causal=causal,
                pass_=pass_, dtype="bf16", time_s=t, flop_per_s=flop / t if t else "", status=status)


def emit(out, rows):
    common.write_table(out, "attention", [{("pass" if k == "pass_" else k): v for k, v in r.items()} for r in rows])


def dry_rows():
    rows = []
    for impl, backend, b, s, hd, c in plan():
        f = fwd_flop(b, s, hd, c)
        rows.append(row(impl, backend, b, s, hd, c, "fwd", f / 3e14, f, "dry-run"))
        rows.append(row(impl, backend, b, s, hd, c, "bwd", 2.5 * f / 2.5e14, 2.5 * f, "dry-run"))
    return rows


def backend_context(torch, backend):
    """A context manager that pins SDPA to one backend, on the torch at hand."""
    import contextlib
    if backend == "auto":
        return contextlib.nullcontext()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        kind = {"math": "MATH", "efficient": "EFFICIENT_ATTENTION", "flash": "FLASH_ATTENTION",
                "cudnn": "CUDNN_ATTENTION"}[backend]
        if not hasattr(SDPBackend, kind):
            raise RuntimeError(f"this torch has no SDPBackend.{kind}")
        return sdpa_kernel(getattr(SDPBackend, kind))
    except ImportError:  # torch < 2.3
        if backend == "cudnn":
            raise RuntimeError("this torch has no cuDNN SDPA backend")
        return torch.backends.cuda.sdp_kernel(enable_math=backend == "math", enable_flash=backend == "flash",
                                              enable_mem_efficient=backend == "efficient")


def measure(args):
    import torch
    import torch.nn.functional as F
    from gemm import time_call
    try:
        from flash_attn import flash_attn_func
    except Exception:
        flash_attn_func = None
    budget = common.Budget(args.cap_s)
    for impl, backend, b, s, hd, c in plan():
        f = fwd_flop(b, s, hd, c)
        if not budget.ok(2.0):
            emit(args.out, [row(impl, backend, b, s, hd, c, "fwd", "", f, "skipped: time cap")])
            continue
        if impl == "flash_attn" and flash_attn_func is None:
            emit(args.out, [row(impl, backend, b, s, hd, c, "fwd", "", f, "skipped: flash_attn not installed")])
            continue
        mask = None
        try:
            if impl == "flash_attn":  # (batch, seq, heads, head_dim)
                shape = (b, s, HEADS, hd)

                def attn(q, k, v):
                    return flash_attn_func(q, k, v, causal=bool(c))
                ctx = backend_context(torch, "auto")
            elif impl == "sdpa_mask":  # HF's mask under torch.compile: every block, a mask tile each
                shape = (b, HEADS, s, hd)
                mask = torch.ones(s, s, device="cuda", dtype=torch.bool).tril_()[None, None]

                def attn(q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=False)
                ctx = backend_context(torch, backend)
            else:  # (batch, heads, seq, head_dim)
                shape = (b, HEADS, s, hd)

                def attn(q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=bool(c))
                ctx = backend_context(torch, backend)
            q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
            grad = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
            with ctx:
                with torch.no_grad():
                    t_fwd = time_call(torch, lambda: attn(q, k, v))

                def fwd_bwd():
                    attn(q, k, v).backward(grad)
                t_all = time_call(torch, fwd_bwd)
            t_bwd = max(t_all - t_fwd, 1e-9)
            emit(args.out, [row(impl, backend, b, s, hd, c, "fwd", t_fwd, f, "ok"),
                            row(impl, backend, b, s, hd, c, "bwd", t_bwd, 2.5 * f, "ok")])
        except Exception as e:
            emit(args.out, [row(impl, backend, b, s, hd, c, "fwd", "", f,
                                f"failed: {type(e).__name__}: {e}"[:200].replace("\n", " "))])
        finally:
            q = k = v = grad = mask = None
            torch.cuda.empty_cache()


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    if args.dry_run:
        emit(args.out, dry_rows())
    else:
        measure(args)


if __name__ == "__main__":
    main()
