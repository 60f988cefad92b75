#!/usr/bin/env bash
# holdout_report.sh: accuracy on GPUs outside the calibration (issue 39's "DeepLearningExamples on
# unseen GPUs", measured on the public runs the project has of such GPUs).  Predicts every row of
# bench/data/holdout_runs.csv (Lambda's runs of NVIDIA's DeepLearningExamples scripts, and NVIDIA's
# own README tables, on GPUs no calibration row is on: tools/data/make_holdout.py) with the shipped
# profile, which was fitted without them, and writes
#   bench/results/holdout_accuracy.csv  each row's prediction, p10-p90 and measurement (validate -o)
#   bench/results/holdout_accuracy.md   the summary by GPU, model, precision, GPU count and harness
# From the repository root:
#   bash bench/holdout_report.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -x "$build/epochcast" ] || { echo "holdout_report.sh: $build/epochcast is missing (build the project first)" >&2; exit 2; }
csv=bench/results/holdout_accuracy.csv md=bench/results/holdout_accuracy.md
summary=$("$build/epochcast" validate bench/data/holdout_runs.csv --profile models/profile.csv -o "$csv.tmp")
mv "$csv.tmp" "$csv"
python3 - "$csv" "$summary" > "$md.tmp" <<'EOF'
import csv, sys
path, summary = sys.argv[1], sys.argv[2]
arch = {r["id"]: r["architecture"] for r in csv.DictReader(open("models/gpus.csv", newline=""))}
runs = {r["id"]: r for r in csv.DictReader(open("bench/data/holdout_runs.csv", newline=""))}
rows = [r for r in csv.DictReader(open(path, newline="")) if r["measured"]]
print("""# Accuracy on GPUs outside the calibration (bench/data/holdout_runs.csv)

Every row of `bench/data/holdout_runs.csv`, predicted with the shipped profile (`models/profile.csv`),
which no row of it was fitted to: Lambda's runs of NVIDIA's DeepLearningExamples BERT SQuAD and
ResNet-50 scripts (v0 and v1 harness) and NVIDIA's own README tables, on the GPUs of those files
that `../shared/data/runs/calibration.csv` has no row of, each described as its script ran it by
the rules that describe the calibration rows (`tools/data/make_holdout.py`, `make_dle_runs.py`).
The GPUs' profiles are spec-sheet figures (`models/gpus.csv`, `measured=0`: their efficiencies are
their architecture's); an architecture the fit has runs of gives each prediction the
leave-one-GPU-out interval (`error_log_sd`).  Nothing here is fitted to, or compared with,
Lambda's RTX 4090 / A10 / H100 / H200 results (the issue's external check; not in the shared files).

    python3 tools/data/make_holdout.py        # bench/data/holdout_runs.csv (ctest holdout_runs_current)
    bash bench/holdout_report.sh build        # this file and holdout_accuracy.csv
""")
def line(name, rs):
    errs = [(float(r["predicted"]) - float(r["measured"])) / float(r["measured"]) for r in rs]
    n = len(errs)
    cov = sum(r["in_p10_p90"] == "1" for r in rs)
    return "| %s | %d | %.1f | %+.1f | %.0f%% | %.0f%% |" % (
        name, n, 100 * sum(map(abs, errs)) / n, 100 * sum(errs) / n,
        100 * sum(abs(e) <= 0.10 for e in errs) / n, 100 * cov / n)
head = "| {} | rows | MAPE % | bias % | within 10 % | p10-p90 covers |\n| --- | ---: | ---: | ---: | ---: | ---: |"
for title, key in (("GPU (architecture)", lambda r: "%s (%s)" % (r["gpu"], arch.get(r["gpu"], "?"))),
                   ("model", lambda r: r["model"]),
                   ("precision as run", lambda r: runs[r["id"]]["precision"]),
                   ("GPUs", lambda r: "%5d" % int(runs[r["id"]]["num_gpus"])),
                   ("harness (note_harness), GPUs", lambda r: "%s, %s" % (runs[r["id"]]["note_harness"], "one GPU" if
                                                   runs[r["id"]]["num_gpus"] == "1" else "several"))):
    print(head.format(title))
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    for k in sorted(groups):
        print(line(k, groups[k]))
    print(line("**all**", rows))
    print()
print("Lambda's v0 harness on NGC 20.01 (2020) printed its own BERT SQuAD figure, ceil(max_steps / (n x b)) x n x b")
print("over tqdm's epoch rate of a run cut to max_steps examples, the first epoch's warm-up in it")
print("(`scripts/patch/run_squad.sh`@95d34b5a lines 112-115; `tools/data/make_holdout.py` harness_of).")
print()
print("Bias > 0: predicted faster than measured (every metric here is a rate).  `epochcast validate`'s own")
print("summary:\n\n```")
print(summary.strip())
print("```")
EOF
mv "$md.tmp" "$md"
echo "wrote $csv and $md"
