#!/usr/bin/env python3
"""code_footprint.py: the machine code one prediction runs, in 64-byte cache lines, by function.

    python3 bench/code_footprint.py [--build DIR] [--models DIR] [--n N] [--top K] [config...]

Runs bench_ir (the sweep of bench_speed: batches 1..32 over seven GPUs) under callgrind with
per-instruction counts for N predictions and counts the instruction-cache lines holding an
instruction run at least 0.9 x N times (a loop of a call that only some predictions make can
count too, so N well above bench_ir's 224-call warm-up): the hot path each prediction streams through the level-1
instruction cache (32 KB on the x86 cores this project is measured on).  When that path is larger
than the cache, every prediction refetches most of it and the core waits, whatever the
instruction count says (bench/results/speed.md, 2026-11-24 fifth session).  Prints the total and
the functions holding most of it (an inlined function counts where it was inlined).

The default config is BERT-large SQuAD (seq 384, amp_fp16), bench_speed's first section.
Needs valgrind and binutils (nm).
"""
import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile

LINE = 64          # bytes per instruction-cache line
HOT = 0.9          # a line is hot when some instruction in it runs >= 0.9 times per prediction
DEFAULT = ["model=bert-large", "task=squad", "seq_len=384", "precision=amp_fp16"]


def instruction_counts(path):
    """Executions of each instruction address (callgrind --dump-instr=yes, positions 'instr line')."""
    counts = collections.Counter()
    addr, after_call = 0, False
    pos = re.compile(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)")
    with open(path) as f:
        for ln in f:
            if ln.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
                continue
            m = pos.match(ln)
            if not m:
                continue
            a = m.group(1)
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a[0] in "+-":
                addr += int(a)
            if after_call:
                after_call = False
                continue
            counts[addr] += int(m.group(2))
    return counts


def symbols(binary):
    """(start, size, name) of the text symbols of binary, sorted by start."""
    out = subprocess.run(["nm", "-S", binary], capture_output=True, text=True, check=True).stdout
    syms = []
    for ln in out.splitlines():
        p = ln.split()
        if len(p) == 4 and p[2] in "tTwW":
            syms.append((int(p[0], 16), int(p[1], 16), p[3]))
    return sorted(syms)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--models", default="models")
    ap.add_argument("--n", type=int, default=6000, help="predictions measured (after bench_ir's warm-up)")
    ap.add_argument("--top", type=int, default=15, help="functions listed")
    ap.add_argument("config", nargs="*", help="key=value words for bench_ir (default: BERT-large SQuAD)")
    args = ap.parse_args()
    binary = os.path.join(args.build, "bench", "bench_ir")
    if not os.access(binary, os.X_OK):
        sys.exit(f"code_footprint.py: {binary} is missing (build the project first)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-pos=no", "--compress-strings=no",
               "--toggle-collect=measured_loop", f"--callgrind-out-file={out}", binary, args.models, str(args.n)]
        run = subprocess.run(cmd + (args.config or DEFAULT), capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"code_footprint.py: bench_ir failed:\n{run.stderr[-2000:]}")
        counts = instruction_counts(out)
    lines = collections.Counter()
    for a, c in counts.items():
        lines[a // LINE] = max(lines[a // LINE], c)
    hot = [ln for ln, c in lines.items() if c >= HOT * args.n]
    syms = symbols(binary)
    starts = [s[0] for s in syms]
    per = collections.Counter()
    for ln in hot:
        a = ln * LINE
        i = bisect.bisect_right(starts, a + LINE - 1) - 1
        inside = i >= 0 and a < syms[i][0] + max(syms[i][1], 1)
        per[syms[i][2] if inside else "(shared libraries)"] += 1
    kb = lambda k: k * LINE / 1024
    print(f"config: {' '.join(args.config or DEFAULT)}; {args.n} predictions")
    print(f"hot code: {len(hot)} lines of {LINE} bytes = {kb(len(hot)):.1f} KB "
          f"(an instruction run >= {HOT} times per prediction); all code run: {kb(len(lines)):.1f} KB")
    print("| function | hot KB |")
    print("|---|---:|")
    for name, k in per.most_common(args.top):
        print(f"| {name} | {kb(k):.2f} |")


if __name__ == "__main__":
    main()
