#!/usr/bin/env bash
# ir_per_prediction.sh: instructions per prediction (callgrind) for the configs of
# bench/results/speed.md, independent of the machine's load.  For each config it runs
# bench_ir under callgrind for N1 and N2 predictions after a warm-up and prints
# (Ir(N2) - Ir(N1)) / (N2 - N1) of measured_loop, as a Markdown table.
#   bash bench/ir_per_prediction.sh [BUILD_DIR] [MODELS_DIR]
set -euo pipefail
build=${1:-build}
models=${2:-models}
bin=$build/bench/bench_ir
command -v valgrind >/dev/null || { echo "ir_per_prediction.sh: valgrind is not installed" >&2; exit 2; }
[ -x "$bin" ] || { echo "ir_per_prediction.sh: $bin is missing (build the project first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ir() { # N config... -> instructions of measured_loop
  local n=$1; shift
  valgrind --tool=callgrind --toggle-collect=measured_loop --callgrind-out-file="$tmp/out" \
    "$bin" "$models" "$n" "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  callgrind_annotate "$tmp/out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
n1=${IR_N1:-2000} n2=${IR_N2:-6000}
echo "| config | instructions per prediction |"
echo "|---|---:|"
while IFS= read -r cfg; do
  [ -z "$cfg" ] && continue
  # shellcheck disable=SC2086
  a=$(ir $n1 $cfg); b=$(ir $n2 $cfg)
  echo "| \`$cfg\` | $(( (b - a) / (n2 - n1) )) |"
done <<'CONFIGS'
model=bert-large task=squad seq_len=384 precision=amp_fp16
model=resnet50 precision=amp_fp16 num_workers=8 pin_memory=1
model=resnet50 precision=amp_fp16 data=synthetic
model=bert-large task=squad seq_len=384 precision=amp_fp16 num_gpus=8 strategy=ddp
model=llama-3.1-8b seq_len=4096 precision=amp_bf16 data=synthetic
model=resnet152 precision=amp_fp16 data=synthetic
model=mixtral-8x7b seq_len=4096 precision=amp_bf16 data=synthetic
--layouts model=llama-3.1-8b gpu=h100-sxm5-80gb seq_len=4096 precision=amp_bf16 data=synthetic num_gpus=64 network=ib-ndr-400 grad_accum=16 attention=flash
CONFIGS
