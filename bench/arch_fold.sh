#!/usr/bin/env bash
# arch_fold.sh: one leave-one-architecture-out fold on the LLM run records (issue 39): fit the
# shipped profile's way (bench_stack --write-profile on stack_runs.csv + calibration_dle.csv, the
# command in the header of bench/results/loao.md) without any run of ARCH, then predict
# bench/data/llm_runs.csv with that fit.  Nothing is fitted to the LLM rows.  From the repository root:
#   bash bench/arch_fold.sh ARCH [BUILD_DIR] [OUT_DIR]
# writes OUT_DIR/profile_no_ARCH.csv and OUT_DIR/llm_no_ARCH.md (bench_llm_runs' report, whose
# second-fit columns are the fold's predictions) and prints the arch_stack_table.py --fold arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:?usage: arch_fold.sh ARCH [BUILD_DIR] [OUT_DIR]}
build=${2:-build}
out=${3:-${TMPDIR:-/tmp}}
for bin in bench_stack bench_llm_runs; do
  [ -x "$build/bench/$bin" ] || { echo "arch_fold.sh: $build/bench/$bin is missing (build the project first)" >&2; exit 2; }
done
python3 - "$arch" "$out" <<'EOF'
import csv, sys
arch, out = sys.argv[1].lower(), sys.argv[2]
gpu_arch = {}
with open("models/gpus.csv", newline="") as f:
    for r in csv.DictReader(f):
        for name in [r["id"]] + [a for a in r["aliases"].split(";") if a]:
            gpu_arch[name.lower()] = r["architecture"].lower()
if arch not in set(gpu_arch.values()):
    sys.exit("arch_fold.sh: no GPU of models/gpus.csv has architecture '%s'" % arch)
# the models loao.md's profile command leaves out of stack_runs.csv
skip_models = {"microsoft/layoutlmv3-base", "timm/convnext_tiny", "timm/efficientnet_b0", "bigscience/T0_3B",
               "bigscience/mt0-xxl"}
for src, dst, skip in (("bench/data/stack_runs.csv", "stack", skip_models), ("bench/data/calibration_dle.csv", "dle", set())):
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    g, m = rows[0].index("gpu"), rows[0].index("model")
    kept = [r for r in rows[1:] if gpu_arch.get(r[g].lower()) != arch and r[m] not in skip]
    with open("%s/%s_no_%s.csv" % (out, dst, arch), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([rows[0]] + kept)
    print("%s: %d of %d rows kept" % (src, len(kept), len(rows) - 1))
EOF
"$build/bench/bench_stack" "$out/stack_no_$arch.csv" "$out/stack_no_$arch.out.csv" --also "$out/dle_no_$arch.csv" \
  --write-profile "$out/profile_no_$arch.csv" > "$out/stack_no_$arch.log"
cp bench/results/llm_validation.md "$out/llm_no_$arch.md"  # bench_llm_runs keeps the part above its marker
"$build/bench/bench_llm_runs" --models models --profile "$out/profile_no_$arch.csv" -o "$out/llm_no_$arch.md"
echo "--fold $arch $out/profile_no_$arch.csv $out/llm_no_$arch.md"
