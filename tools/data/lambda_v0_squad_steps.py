#!/usr/bin/env python3
"""Write tools/data/lambda_v0_squad_steps.csv: the SQuAD arguments of Lambda's v0-harness configs
(lambdal/deeplearning-benchmark pytorch/scripts/config/config_pytorch_<system>.sh at commit
fe450482, the commit of the throughput tables that ../shared/data/measurements/lambda_v0_pytorch_dle.csv
copies): per system, model and precision the epochs, the batch per GPU and max_steps that
run_squad.sh passes to run_squad.py (its arguments 3, 4 and 14: `"2.0" "<batch>" ... "<max_steps>"`).
make_holdout.py reads the file to describe the NGC 20.10+ rows as run (its docstring).  Needs a
clone of that repository; Python 3 stdlib only.

    python3 tools/data/lambda_v0_squad_steps.py GIT_DIR   # GIT_DIR: a clone (bare is fine)
"""
import csv
import os
import re
import subprocess
import sys

COMMIT = "fe450482b982f1790e05e0bd57724a3f692b2d0f"
CONFIG = re.compile(r"pytorch/scripts/config/config_pytorch_(.*)\.sh$")
PARAMS = re.compile(r"PyTorch_bert_(base|large)_squad_(FP16|FP32)_PARAMS=\((.*?)\)", re.S)


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), capture_output=True, text=True,
                          check=True).stdout


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    repo, rows = argv[1], []
    for path in git(repo, "ls-tree", "-r", "--name-only", COMMIT).split():
        name = CONFIG.match(path)
        if name is None:
            continue
        text = git(repo, "show", "%s:%s" % (COMMIT, path))
        gpus = re.search(r"NUM_GPU=(\d+)", text)
        for m in PARAMS.finditer(text):
            args = re.findall(r'"([^"]*)"', m.group(3))
            rows.append({"system": name.group(1), "num_gpus": gpus.group(1) if gpus else "",
                         "model": "bert-" + m.group(1), "precision": m.group(2).lower(),
                         "epochs": args[2], "batch_per_gpu": args[3], "max_steps": args[-1]})
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lambda_v0_squad_steps.csv")
    with open(out + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(sorted(rows, key=lambda r: (r["system"], r["model"], r["precision"])))
    os.replace(out + ".tmp", out)
    print("wrote %s (%d rows, lambdal/deeplearning-benchmark@%s)" % (out, len(rows), COMMIT[:8]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
