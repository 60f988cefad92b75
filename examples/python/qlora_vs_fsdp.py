#!/usr/bin/env python3
"""Fine-tuning Llama-3.1-8B: QLoRA on one consumer GPU against a full fine-tune with FSDP on
eight H100s, a batch sweep plotted, and a plan with its cost: epochcast from Python.

    EPOCHCAST_LIB=build/core/libepochcast.so PYTHONPATH=python \\
        /usr/bin/python3 examples/python/qlora_vs_fsdp.py [OUT_DIR]

(or with the package installed: python3 examples/python/qlora_vs_fsdp.py).  The figures go to
OUT_DIR (default: the current folder).  qlora_vs_fsdp.ipynb is the same as a notebook, cell for
cell (the cell marks below).  CI runs both (ctest python_example, python_notebook).
"""
# %%
import os
import sys
import warnings

import epochcast as ec

out_dir = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else \
    os.environ.get("EC_EXAMPLE_OUT", ".")
warnings.simplefilter("ignore", ec.EpochcastWarning)  # each prediction's warnings are in .warnings

# %% [markdown]
# ## QLoRA on one RTX 4090 against a full fine-tune with FSDP on 8 H100s
# The same model, sequence length and tokens per optimizer step (16 x 2048).

# %%
common = dict(model="llama-3.1-8b", seq_len=2048, dataset_samples=50_000, data="synthetic")
qlora = ec.predict(common, gpu="rtx4090", lora_r=16, lora_targets="all_linear", base_precision="nf4",
                   precision="bf16", checkpointing=1, batch_per_gpu=2, grad_accum=8)
fsdp = ec.predict(common, gpu="h100-sxm5-80gb", num_gpus=8, strategy="fsdp", precision="amp_bf16",
                  checkpointing=1, batch_per_gpu=2)
print(qlora)
print()
print(fsdp)

# %%
rows = []
for name, r in (("QLoRA, 1x RTX 4090", qlora), ("full, FSDP 8x H100", fsdp)):
    rows.append({"setup": name, "fits": r.fits, "peak_GiB": r.peak_bytes / 2 ** 30, "step_s": r.step_s,
                 "tokens_per_s": r.tokens_per_s, "epoch_h": r.epoch_s / 3600, "cost_per_epoch": r.cost_per_epoch,
                 "price_offer": r.price_offer})
try:
    import pandas as pd
    print(pd.DataFrame(rows).to_string(index=False))
except ImportError:
    for r in rows:
        print(r)

# %% [markdown]
# ## How far does the QLoRA micro-batch go on the 4090, and what does it buy?

# %%
largest = ec.max_batch(common, gpu="rtx4090", lora_r=16, lora_targets="all_linear", base_precision="nf4",
                       precision="bf16", checkpointing=1)
print("largest micro-batch that fits on the RTX 4090:", largest)
table = ec.sweep(dict(common, lora_r=16, lora_targets="all_linear", base_precision="nf4", precision="bf16",
                      checkpointing=1),
                 {"gpu": ["rtx4090", "l4", "a100-sxm4-80gb"], "batch_per_gpu": [1, 2, 4, 8, 16]},
                 fields=["tokens_per_s", "peak_bytes", "fits"])
print(table)

# %%
try:
    import matplotlib
    if "ipykernel" not in sys.modules:  # a script: files only; a notebook shows them inline too
        matplotlib.use("Agg")
    ax = ec.plot.sweep(table, x="batch_per_gpu", y="tokens_per_s", group="gpu", logx=True)
    ax.set_title("QLoRA Llama-3.1-8B, seq 2048: tokens/s by micro-batch")
    ax.figure.savefig(os.path.join(out_dir, "qlora_sweep.png"), dpi=100)
    qlora.plot("memory").figure.savefig(os.path.join(out_dir, "qlora_memory.png"), dpi=100)
    print("wrote", os.path.join(out_dir, "qlora_sweep.png"), "and qlora_memory.png")
except ImportError:
    print("matplotlib not installed: no figures")

# %% [markdown]
# ## A plan: the cheapest full fine-tune of one epoch within 12 hours

# %%
p = ec.plan(common, strategy="fsdp", precision="amp_bf16", checkpointing=1, global_batch=32,
            gpu=["a100-sxm4-80gb", "h100-sxm5-80gb"], num_gpus=[4, 8, 16], deadline_h=12)
print(p)
front = p.front
print(front[["gpu", "num_gpus", "batch_per_gpu", "run_s", "cost_run"]] if hasattr(front, "columns") else front)
try:
    import matplotlib  # noqa: F811
    p.plot().figure.savefig(os.path.join(out_dir, "plan.png"), dpi=100)
except ImportError:
    pass
