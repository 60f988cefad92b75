#!/usr/bin/env bash
# arch_fold.sh: one leave-one-architecture-out fold (issue 39): fit the shipped profile's way
# (bench_stack --write-profile on stack_runs.csv + calibration_dle.csv, the command in the header of
# bench/results/loao.md) without any run of ARCH, then predict with that fit bench/data/llm_runs.csv
# and every run of ARCH the fit left out: its rows of stack_runs.csv (all splits but "excluded") and
# of calibration_dle.csv, and its rows of holdout_runs.csv (GPUs no fit ever sees), as `epochcast
# validate --profile` predicts them.  Nothing is fitted to the rows it predicts.  From the repository root:
#   bash bench/arch_fold.sh ARCH [BUILD_DIR] [OUT_DIR]
# writes to OUT_DIR profile_no_ARCH.csv, llm_no_ARCH.md (bench_llm_runs' report, whose second-fit
# columns are the fold's predictions), stack_of_ARCH.pred.csv, dle_of_ARCH.pred.csv and
# holdout_of_ARCH.pred.csv (validate -o:
# each left-out run's prediction, p10-p90 and measurement; no rows when the file has no run of
# ARCH) and prints the arch_stack_table.py --fold arguments (ARCH OUT_DIR).  ARCH `none` leaves
# nothing out: profile_no_none.csv is the shipped fit (bench/probe_band.sh).  The catalog is
# $EPOCHCAST_MODELS when set (a changed copy of models/, as bench/probe_band.sh makes), else models/.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:?usage: arch_fold.sh ARCH [BUILD_DIR] [OUT_DIR]}
build=${2:-build}
out=${3:-${TMPDIR:-/tmp}}
for bin in bench/bench_stack bench/bench_llm_runs epochcast; do
  [ -x "$build/$bin" ] || { echo "arch_fold.sh: $build/$bin is missing (build the project first)" >&2; exit 2; }
done
models=${EPOCHCAST_MODELS:-models}
python3 - "$arch" "$out" "$models" <<'EOF'
import csv, sys
arch, out, models = sys.argv[1].lower(), sys.argv[2], sys.argv[3]
gpu_arch = {}
try:
    f = open(models + "/gpus.csv", newline="")
except OSError as e:
    sys.exit("arch_fold.sh: %s/gpus.csv: %s (EPOCHCAST_MODELS names a models/ folder)" % (models, e.strerror))
with f:
    for r in csv.DictReader(f):
        for name in [r["id"]] + [a for a in r["aliases"].split(";") if a]:
            gpu_arch[name.lower()] = r["architecture"].lower()
if arch != "none" and arch not in set(gpu_arch.values()):
    sys.exit("arch_fold.sh: no GPU of %s/gpus.csv has architecture '%s'" % (models, arch))
# the models loao.md's profile command leaves out of stack_runs.csv
skip_models = {"microsoft/layoutlmv3-base", "timm/convnext_tiny", "timm/efficientnet_b0", "bigscience/T0_3B",
               "bigscience/mt0-xxl"}
for src, dst, skip in (("bench/data/stack_runs.csv", "stack", skip_models), ("bench/data/calibration_dle.csv", "dle", set()),
                       ("bench/data/holdout_runs.csv", "holdout", set())):
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    g, m = rows[0].index("gpu"), rows[0].index("model")
    if dst != "holdout":  # the fit's rows (holdout_runs.csv is never fitted)
        kept = [r for r in rows[1:] if gpu_arch.get(r[g].lower()) != arch and r[m] not in skip]
        with open("%s/%s_no_%s.csv" % (out, dst, arch), "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows([rows[0]] + kept)
        print("%s: %d of %d rows kept" % (src, len(kept), len(rows) - 1))
    # to predict: not excluded, and a training step (bench_stack too skips readings without a batch,
    # such as the weights alone)
    split = rows[0].index("split") if "split" in rows[0] else None
    b = rows[0].index("batch_per_gpu")
    left = [r for r in rows[1:] if gpu_arch.get(r[g].lower()) == arch and r[m] not in skip and r[b] and
            (split is None or r[split] != "excluded")]
    with open("%s/%s_of_%s.csv" % (out, dst, arch), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([rows[0]] + left)
    print("%s: %d rows of %s to predict" % (src, len(left), arch))
EOF
"$build/bench/bench_stack" "$out/stack_no_$arch.csv" "$out/stack_no_$arch.out.csv" --also "$out/dle_no_$arch.csv" \
  --write-profile "$out/profile_no_$arch.csv" > "$out/stack_no_$arch.log"
cp bench/results/llm_validation.md "$out/llm_no_$arch.md"  # bench_llm_runs keeps the part above its marker
"$build/bench/bench_llm_runs" --models "$models" --profile "$out/profile_no_$arch.csv" -o "$out/llm_no_$arch.md"
for set in stack dle holdout; do
  if [ "$(wc -l < "$out/${set}_of_$arch.csv")" -gt 1 ]; then
    "$build/epochcast" validate "$out/${set}_of_$arch.csv" --profile "$out/profile_no_$arch.csv" \
      -o "$out/${set}_of_$arch.pred.csv" > "$out/${set}_of_$arch.log"
  else  # no run of ARCH in that file: a prediction file without rows
    echo "id,gpu,model,metric,predicted,p10,p90,measured,error_pct,in_p10_p90" > "$out/${set}_of_$arch.pred.csv"
  fi
done
echo "--fold $arch $out"
