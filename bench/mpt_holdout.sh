#!/usr/bin/env bash
# mpt_holdout.sh: regenerate bench/results/mpt_validation.md (MosaicML's MPT runs, leave one
# model size out and leave one GPU count out) and bench/results/llm_validation.md (the other
# public LLM runs, no fitting), from the repository root.
#   bash bench/mpt_holdout.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
for bin in bench_mpt_holdout bench_llm_runs; do
  [ -x "$build/bench/$bin" ] || { echo "mpt_holdout.sh: $build/bench/$bin is missing (build the project first)" >&2; exit 2; }
done
"$build/bench/bench_mpt_holdout" --models models -o bench/results/mpt_validation.md
"$build/bench/bench_llm_runs" --models models -o bench/results/llm_validation.md
