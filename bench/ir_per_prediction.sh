#!/usr/bin/env bash
# ir_per_prediction.sh: instructions per prediction (callgrind) for the configs of
# bench/results/speed.md, independent of the machine's load.  For each config it runs
# bench_ir under callgrind for N1 and N2 predictions after a warm-up and prints
# (Ir(N2) - Ir(N1)) / (N2 - N1) of measured_loop, as a Markdown table.
#   bash bench/ir_per_prediction.sh [BUILD_DIR] [MODELS_DIR]
# With CACHE_SIM=1 callgrind also simulates the caches and the branch predictor (about twice
# as slow) and the table gains, per prediction: level-1 instruction-cache misses, level-1
# data-cache misses (reads and writes), mispredicted branches (conditional and indirect) and
# callgrind's cycle estimate, Ir + 10 x (L1 misses + mispredictions) + 100 x last-level misses.
# Instructions alone miss what made the code of 2026-11-24 slower than fewer instructions
# say: a per-prediction code path larger than the 32 KB instruction cache (results/speed.md).
set -euo pipefail
build=${1:-build}
models=${2:-models}
bin=$build/bench/bench_ir
sim=${CACHE_SIM:-0}
command -v valgrind >/dev/null || { echo "ir_per_prediction.sh: valgrind is not installed" >&2; exit 2; }
[ -x "$bin" ] || { echo "ir_per_prediction.sh: $bin is missing (build the project first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
opts=()
[ "$sim" = 1 ] && opts=(--cache-sim=yes --branch-sim=yes)
# N config... -> the totals of measured_loop, one number per event, in callgrind's order:
# Ir [Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim]
totals() {
  local n=$1; shift
  valgrind --tool=callgrind "${opts[@]}" --toggle-collect=measured_loop --callgrind-out-file="$tmp/out" \
    "$bin" "$models" "$n" "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  callgrind_annotate "$tmp/out" | awk '/PROGRAM TOTALS/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9,]+$/) {gsub(",", "", $i); printf "%s ", $i}; print ""}'
}
n1=${IR_N1:-2000} n2=${IR_N2:-6000}
if [ "$sim" = 1 ]; then
  echo "| config | instructions | I1 misses | D1 misses | mispredicted branches | estimated cycles |"
  echo "|---|---:|---:|---:|---:|---:|"
else
  echo "| config | instructions per prediction |"
  echo "|---|---:|"
fi
while IFS= read -r cfg; do
  [ -z "$cfg" ] && continue
  read -ra words <<< "$cfg" # a config is several words
  a=$(totals "$n1" "${words[@]}"); b=$(totals "$n2" "${words[@]}")
  awk -v a="$a" -v b="$b" -v d=$((n2 - n1)) -v cfg="$cfg" -v sim="$sim" 'BEGIN {
    na = split(a, x, " "); split(b, y, " ")
    for (i = 1; i <= na; i++) p[i] = (y[i] - x[i]) / d
    if (sim != 1) { printf "| `%s` | %d |\n", cfg, p[1]; exit }
    l1 = p[4] + p[5] + p[6]; ll = p[7] + p[8] + p[9]; bm = p[11] + p[13]
    printf "| `%s` | %d | %.1f | %.1f | %.1f | %d |\n", cfg, p[1], p[4], p[5] + p[6], bm, p[1] + 10 * (l1 + bm) + 100 * ll
  }'
done <<'CONFIGS'
model=bert-large task=squad seq_len=384 precision=amp_fp16
model=resnet50 precision=amp_fp16
model=resnet50 precision=amp_fp16 num_workers=8 pin_memory=1
model=resnet50 precision=amp_fp16 data=synthetic
model=bert-large task=squad seq_len=384 precision=amp_fp16 num_gpus=8 strategy=ddp
model=llama-3.1-8b seq_len=4096 precision=amp_bf16 data=synthetic
model=resnet152 precision=amp_fp16 data=synthetic
model=mixtral-8x7b seq_len=4096 precision=amp_bf16 data=synthetic
--layouts model=llama-3.1-8b gpu=h100-sxm5-80gb seq_len=4096 precision=amp_bf16 data=synthetic num_gpus=64 network=ib-ndr-400 grad_accum=16 attention=flash
CONFIGS
