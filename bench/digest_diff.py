#!/usr/bin/env python3
"""digest_diff.py BEFORE AFTER: compare two outputs of bench/predictions_digest.lua.

Prints how many lines differ and the largest relative change of any number, with the line it
is on; exits 1 when the files do not have the same configs in the same order (or one refuses
a config the other predicts)."""
import sys


def main(before_path, after_path):
    before = open(before_path).read().splitlines()
    after = open(after_path).read().splitlines()
    if len(before) != len(after):
        sys.exit(f"digest_diff: {len(before)} lines against {len(after)}")
    differ, worst, where = 0, 0.0, None
    for n, (x, y) in enumerate(zip(before, after), 1):
        if x == y:
            continue
        kx, ky = x.split("\t")[:4], y.split("\t")[:4]
        vx, vy = x.split("\t")[4].split(), y.split("\t")[4].split()
        if kx != ky or len(vx) != len(vy) or len(vx) == 1:
            sys.exit(f"digest_diff: line {n} is not the same config or outcome:\n  {x}\n  {y}")
        differ += 1
        for u, v in zip(map(float, vx), map(float, vy)):
            if u != v:
                rel = abs(u - v) / max(abs(u), abs(v))
                if rel > worst:
                    worst, where = rel, (n, x, y)
    print(f"{differ} of {len(before)} lines differ; largest relative change {worst:.3g}")
    if where:
        print(f"  line {where[0]}:\n  {where[1]}\n  {where[2]}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
