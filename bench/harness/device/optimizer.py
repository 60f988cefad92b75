"""optimizer.py: optimizer steps alone over BERT-large's fp32 parameters, into DIR/optimizer.csv.

BERT-large's 391 trained tensors as DLE's run_squad.py has them (the embeddings, 24 layers of
q/k/v/o, the two MLP matrices, their biases and LayerNorms, the QA head; no pooler): 334M fp32
parameters with their gradients set, weight decay 0.01 on the matrices and none on the biases
and LayerNorms. Each optimizer takes a few warm-up steps, then single steps between two
synchronizes, timed on the host (the step's wall time):

  adamw_foreach  torch.optim.AdamW(foreach=True)                    epochcast optimizer=adamw_foreach
  adamw_fused    torch.optim.AdamW(fused=True)                      epochcast optimizer=adamw_fused
  adamw_hf       transformers' old AdamW, a Python loop over the tensors at weight decay 0
                 (mul_, add_, mul_, addcmul_, sqrt, add_, addcdiv_)  epochcast optimizer=adamw_hf
  bertadam_sync  DLE BERT's BertAdam before 2022, as PyTorch 1.7-1.9 ran its per-tensor
                 clip_grad_norm_ (norm, stack, norm, + 1e-6, max_norm / total, the `if clip_coef
                 < 1` that waits for the GPU), then its update (mul_, add_, mul_, addcmul_, sqrt,
                 + e, /, the decay's * and +=, * lr, neg, add_): no epochcast optimizer
                 (docs/accuracy.md, "Known gaps"); the measurement that would decide it

compare.py sets each beside `epochcast predict model=bert-large task=squad precision=fp32
optimizer=NAME` (its breakdown_optimizer_s).
"""
import time

import common

# (name, the epochcast optimizer it is, "" for none)
OPTIMIZERS = [("adamw_foreach", "adamw_foreach"), ("adamw_fused", "adamw_fused"), ("adamw_hf", "adamw_hf"),
              ("bertadam_sync", "")]
HIDDEN, FFN, LAYERS, VOCAB, POSITIONS = 1024, 4096, 24, 30522, 512


def shapes():
    """(shape, decayed) of BERT-large's trained tensors in run_squad.py (pooler removed)."""
    h, f = HIDDEN, FFN
    out = [((VOCAB, h), True), ((POSITIONS, h), True), ((2, h), True), ((h,), False), ((h,), False)]
    for _ in range(LAYERS):
        out += [((h, h), True), ((h,), False)] * 4          # query, key, value, attention output
        out += [((h,), False), ((h,), False)]               # attention LayerNorm
        out += [((f, h), True), ((f,), False), ((h, f), True), ((h,), False)]  # MLP in, out
        out += [((h,), False), ((h,), False)]               # output LayerNorm
    out += [((2, h), True), ((2,), False)]                  # QA head
    return out


def params_count():
    n = 0
    for shape, _ in shapes():
        k = 1
        for d in shape:
            k *= d
        n += k
    return n


def adamw_hf_step(torch, params, states, lr=1e-5, b1=0.9, b2=0.999, eps=1e-6):
    for p, (m, v) in zip(params, states):
        g = p.grad
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = v.sqrt().add_(eps)
        p.addcdiv_(m, denom, value=-lr)


def clip_norm_torch1(torch, p, max_norm=1.0):
    """torch.nn.utils.clip_grad_norm_(p, max_norm) of PyTorch 1.7-1.9 on one tensor."""
    total = torch.norm(torch.stack([torch.norm(p.grad.detach(), 2.0)]), 2.0)
    clip_coef = max_norm / (total + 1e-6)
    if clip_coef < 1:  # a CUDA tensor's truth value: the host waits for the GPU
        p.grad.detach().mul_(clip_coef)


def bertadam_step(torch, params, states, decayed, lr=1e-5, b1=0.9, b2=0.999, eps=1e-6, wd=0.01):
    for p, (m, v), dec in zip(params, states, decayed):
        g = p.grad
        clip_norm_torch1(torch, p)
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        update = m / (v.sqrt() + eps)
        if dec:
            update += wd * p.data
        p.data.add_(-(lr * update))


def make_step(torch, name, params, decayed):
    if name in ("adamw_foreach", "adamw_fused"):
        groups = [{"params": [p for p, d in zip(params, decayed) if d], "weight_decay": 0.01},
                  {"params": [p for p, d in zip(params, decayed) if not d], "weight_decay": 0.0}]
        kw = {"foreach": True} if name == "adamw_foreach" else {"fused": True}
        return torch.optim.AdamW(groups, lr=1e-5, **kw).step
    states = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    loop = adamw_hf_step if name == "adamw_hf" else bertadam_step

    def step():  # as torch.optim's step: no autograd on the in-place updates of the leaves
        with torch.no_grad():
            loop(torch, params, states, *([] if name == "adamw_hf" else [decayed]))
    return step


def dry_rows(gpu):
    n, t = params_count(), len(shapes())
    return [dict(optimizer=name, epochcast_optimizer=ec, gpu=gpu, tensors=t, params=n, dtype="fp32",
                 time_s=0.01 * (i + 1), steps=5, status="dry-run") for i, (name, ec) in enumerate(OPTIMIZERS)]


def measure(args, gpu):
    import torch
    budget = common.Budget(args.cap_s)
    shp = shapes()
    params = [torch.nn.Parameter(torch.randn(s, device="cuda") * 0.02) for s, _ in shp]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    decayed = [d for _, d in shp]
    n = sum(p.numel() for p in params)
    for name, ec in OPTIMIZERS:
        base = dict(optimizer=name, epochcast_optimizer=ec, gpu=gpu, tensors=len(params), params=n, dtype="fp32")
        if not budget.ok(4.0):
            common.write_table(args.out, "optimizer", [dict(base, status="skipped: time cap")])
            continue
        try:
            step = make_step(torch, name, params, decayed)
            for _ in range(2):
                step()
            torch.cuda.synchronize()
            times = []
            while len(times) < 10 and (len(times) < 3 or budget.ok(2.0 + 2 * max(times))):
                t0 = time.perf_counter()
                step()
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            times.sort()
            common.write_table(args.out, "optimizer", [dict(base, time_s=times[len(times) // 2], steps=len(times),
                                                            status="ok")])
        except Exception as e:
            common.write_table(args.out, "optimizer", [dict(base, status=f"failed: {type(e).__name__}: {e}"[:200])])
        finally:
            step = None
            torch.cuda.empty_cache()


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    row = common.gpu_row(common.device_name(args.dry_run))
    gpu = row["id"] if row is not None else ""
    if args.dry_run:
        common.write_table(args.out, "optimizer", dry_rows(gpu))
        return
    measure(args, gpu)


if __name__ == "__main__":
    main()
