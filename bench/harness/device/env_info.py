"""env_info.py: what the measurements ran on, into DIR/env.txt: Python, torch and its CUDA and
cuDNN, the driver and GPU as nvidia-smi gives them, the GPU's row of models/gpus.csv, and the
versions of transformers, peft, accelerate, timm and flash_attn (absent ones said so).
"""
import importlib
import os
import subprocess

import common

PACKAGES = ["torch", "transformers", "peft", "accelerate", "timm", "flash_attn", "pynvml", "numpy"]


def smi():
    try:
        q = "name,driver_version,memory.total,power.limit,clocks.max.sm,pcie.link.gen.max"
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv"], capture_output=True, text=True,
                             timeout=20)
        return out.stdout.strip() or out.stderr.strip()
    except Exception as e:
        return f"nvidia-smi: {type(e).__name__}: {e}"


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    lines = [f"{k}: {v}" for k, v in sorted(common.env_dict(args.dry_run).items())]
    for p in PACKAGES:
        if args.dry_run:
            lines.append(f"package {p}: (dry run, not imported)")
            continue
        try:
            lines.append(f"package {p}: {getattr(importlib.import_module(p), '__version__', '?')}")
        except Exception as e:
            lines.append(f"package {p}: absent ({type(e).__name__})")
    lines.append("nvidia-smi: " + ("(dry run)" if args.dry_run else smi()))
    row = common.gpu_row(common.device_name(args.dry_run))
    lines.append("models/gpus.csv row: " + (f"{row['id']} ({row['architecture']})" if row else "none (no profile)"))
    lines.append("cpu: " + str(os.cpu_count()))
    with open(os.path.join(args.out, "env.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
