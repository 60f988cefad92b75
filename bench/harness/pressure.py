#!/usr/bin/env python3
"""pressure.py: does a multi-GPU job at a batch that only just fits one GPU thrash the allocator?

    python3 bench/harness/pressure.py OUT_DIR [key=value ...] [--steps N] [--extra-bytes N]

A multi-GPU job holds more than the same job on one GPU (NCCL buffers, DDP's bucket copy,
apex's flat buffers).  At a batch that only just fits one GPU, the extra bytes can leave a step
short of memory; PyTorch's caching allocator then frees its cache and retries, step after
step (torch.cuda.memory_stats num_alloc_retries), and throughput collapses.  epochcast warns
about it (EC_WARN_NEAR_CAPACITY) but prices nothing, because no public run isolates it: the
Lambda pairs near capacity were all v1-harness runs with NCCL_P2P_DISABLE=1
(bench/results/lambda_v1_steady_state.md).  One GPU is enough to measure it:

 1. find the edge batch the way Lambda did: the largest batch whose short run does not run
    out of memory (doubling, then bisection; each try a fresh train.py process);
 2. time the edge batch and half of it, each with nothing held and with the extra bytes a
    multi-GPU job holds (default: epochcast's own predicted peak on 2 GPUs less on 1) held
    through the run (train.py --reserve-bytes), and the edge batch with a per-backward
    temporary of DDP's 25 MiB bucket (--step-temp-bytes);
 3. write OUT_DIR/pressure.md: step time and allocator retries of each, and the slowdown the
    held bytes cause at the edge against half the batch.

Default configuration: model=bert-large task=squad seq_len=384 precision=amp_fp16 (a
SQuAD fine-tune like the Lambda runs that were chosen at their edge batch).  Every command is appended to OUT_DIR/commands.txt.
"""
import argparse
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_WORDS = ["model=bert-large", "task=squad", "seq_len=384", "precision=amp_fp16"]
BUCKET_BYTES = 25 << 20  # torch DDP bucket_cap_mb default


def find_edge(fits, start=8, limit=1 << 14):
    """Largest batch b >= 1 with fits(b), given fits is monotone (True up to the edge):
    doubles from start until a batch fails, then bisects.  None when batch 1 does not fit."""
    lo, hi, b = 0, None, max(1, start)
    while b <= limit:
        if fits(b):
            lo, b = b, 2 * b
        else:
            hi = b
            break
    if hi is None:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo or None


def plan(edge, extra_bytes):
    """The timed runs: (label, batch, reserve_bytes, step_temp_bytes)."""
    half = max(1, edge // 2)
    return [("edge", edge, 0, 0),
            ("edge + multi-GPU extra", edge, extra_bytes, 0),
            ("edge + DDP bucket temporary", edge, 0, BUCKET_BYTES),
            ("half", half, 0, 0),
            ("half + multi-GPU extra", half, extra_bytes, 0)]


def summarize(rows):
    """Markdown lines from the sidecar rows of plan()'s runs (dicts with label, batch,
    step_time_ms, alloc_retries, reserve_bytes, step_temp_bytes, samples_per_s)."""
    out = ["| run | batch | held GiB | temporary MiB | ms/step | samples/s | allocator retries |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {r['label']} | {r['batch']} | {int(r['reserve_bytes']) / 2**30:.2f} | {int(r['step_temp_bytes']) / 2**20:.0f} |"
        if r.get("step_time_ms") is None:
            out.append(head + " failed (out of memory?) | | |")
            continue
        out.append(f"{head} {float(r['step_time_ms']):.1f} | {float(r['samples_per_s']):.1f} | {r['alloc_retries']} |")
    by = {r["label"]: r for r in rows if r.get("step_time_ms") is not None}

    def slowdown(a, b):
        if a in by and b in by:
            return float(by[a]["step_time_ms"]) / float(by[b]["step_time_ms"])
        return None

    edge, half = slowdown("edge + multi-GPU extra", "edge"), slowdown("half + multi-GPU extra", "half")
    out.append("")
    if edge is not None and half is not None:
        out.append(f"Held bytes slow a step by {edge:.3f}x at the edge batch and {half:.3f}x at half of it "
                   "(1.000 = no effect; a 2-8 GPU run at this per-GPU batch would pay the edge figure "
                   "on top of its communication).")
    else:
        out.append("Some runs failed (see commands.txt); no slowdown computed.")
    return out


def gpu_name():
    """nvidia-smi's name of GPU 0 (epochcast resolves it), else the A100 of the Lambda rows."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    except OSError:
        pass
    return "a100-sxm4-80gb"


class Session:
    def __init__(self, out_dir, words, steps, dry):
        self.out, self.words, self.steps, self.dry = out_dir, words, steps, dry
        os.makedirs(out_dir, exist_ok=True)

    def run(self, argv):
        with open(os.path.join(self.out, "commands.txt"), "a") as f:
            f.write("+ " + " ".join(argv) + "\n")
        print("+", " ".join(argv), flush=True)
        if self.dry:
            return 0
        return subprocess.run(argv).returncode

    def train(self, batch, out_csv, extra=(), steps=None, warmup=None):
        argv = [sys.executable, os.path.join(HERE, "train.py"), *self.words, f"batch_per_gpu={batch}",
                "--steps", str(steps or self.steps), "--warmup", str(warmup or 10), "--out", out_csv, *extra]
        return self.run(argv)

    def fits(self, batch):
        return self.train(batch, os.path.join(self.out, "edge_search.csv"), steps=2, warmup=1) == 0

    def predicted_extra_bytes(self):
        """epochcast's peak on 2 GPUs less its peak on 1: NCCL buffers and DDP's bucket copy."""
        ec = os.path.join(ROOT, "build", "epochcast")
        if not os.access(ec, os.X_OK):
            sys.exit(f"pressure.py: {ec} not found: build epochcast first, or give --extra-bytes")
        peaks = []
        for n in (2, 1):
            p = subprocess.run([ec, "predict", *self.words, "batch_per_gpu=8", f"num_gpus={n}", "--csv"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"pressure.py: epochcast predict failed: {p.stderr.strip()}")
            peaks.append(float(next(csv.DictReader(p.stdout.splitlines()))["peak_bytes"]))
        return int(peaks[0] - peaks[1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("words", nargs="*", help="config key=value words [%s]" % " ".join(DEFAULT_WORDS))
    ap.add_argument("--steps", type=int, default=100, help="timed steps per run [100]")
    ap.add_argument("--extra-bytes", type=int, default=None,
                    help="bytes a multi-GPU job holds beyond one GPU [epochcast: peak on 2 GPUs - on 1]")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run none (edge taken as 64)")
    args = ap.parse_args(argv)
    if any(w.startswith(("batch_per_gpu=", "num_gpus=", "strategy=")) for w in args.words):
        ap.error("the batch is searched and the runs are single-GPU: leave out batch_per_gpu, num_gpus, strategy")
    words = args.words or list(DEFAULT_WORDS)
    try:  # a bad word would otherwise make every try fail and read as "batch 1 does not fit"
        train.parse_words(words + ["batch_per_gpu=1"])
    except train.ConfigError as e:
        ap.error(str(e))
    if not any(w.startswith("gpu=") for w in words):
        words.append("gpu=" + gpu_name())
    s = Session(args.out_dir, words, args.steps, args.dry_run)
    extra = args.extra_bytes if args.extra_bytes is not None else s.predicted_extra_bytes()
    edge = 64 if args.dry_run else find_edge(s.fits)
    if edge is None:
        sys.exit("pressure.py: batch 1 does not fit; nothing to measure")
    print(f"pressure.py: edge batch {edge}; multi-GPU extra {extra / 2**30:.2f} GiB", flush=True)
    mem = os.path.join(args.out_dir, "pressure_memory.csv")
    rows = []
    for label, batch, reserve, temp in plan(edge, extra):
        rc = s.train(batch, os.path.join(args.out_dir, "pressure.csv"),
                     extra=["--memory-out", mem, "--id", f"pressure-b{batch}-r{reserve}-t{temp}",
                            "--reserve-bytes", str(reserve), "--step-temp-bytes", str(temp)])
        if args.dry_run:
            continue
        row = {"reserve_bytes": reserve, "step_temp_bytes": temp}
        if rc == 0:
            with open(mem, newline="") as f:
                row = list(csv.DictReader(f))[-1]
        rows.append(dict(row, label=label, batch=batch))
    if args.dry_run:
        return 0
    with open(os.path.join(args.out_dir, "pressure.md"), "w") as f:
        f.write(f"# Allocator pressure at the edge batch ({' '.join(s.words)})\n\n")
        f.write(f"Command: `python3 bench/harness/pressure.py {' '.join(sys.argv[1:] if argv is None else argv)}`. "
                f"Edge batch {edge} (largest that ran 2 steps). Extra bytes held: {extra} "
                f"({'given' if args.extra_bytes is not None else 'epochcast predicted peak, 2 GPUs - 1 GPU'}).\n\n")
        f.write("\n".join(summarize(rows)) + "\n")
    with open(os.path.join(args.out_dir, "pressure.md")) as f:
        print(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
