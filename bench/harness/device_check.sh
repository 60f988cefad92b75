#!/usr/bin/env bash
# device_check.sh: one prepared run on one GPU (an H100 or H200 lent for a session), at most
# 9 minutes, of the measurements issue 39 asks for: GEMM throughput over training shapes and
# dtypes, SDPA backends and flash attention by sequence and head dim, memory-bound kernels and
# launch latency, optimizer steps alone over BERT-large's parameters (foreach, fused and
# per-tensor Python loops), timed training steps (Llama-style 1.2B in bf16 plain, checkpointed and LoRA;
# BERT-base under the HF Trainer with fp16 autocast; ResNet-50 NCHW and channels_last) with
# allocated, reserved and NVML peak memory, and one deliberate out-of-memory run. Then the
# microbenchmarks as profile rows, and predicted against measured (`epochcast validate`).
#
#   bash bench/harness/device_check.sh OUT_DIR [--dry-run]
#
# Needs PyTorch with CUDA, transformers, peft, accelerate and timm; nothing is downloaded
# (every model is built from its config with random weights). Each section is one Python file
# of bench/harness/device/ run under its own time cap (`timeout`); a section that fails or runs
# out of time is written to OUT_DIR/failures.csv and the next one runs. Every command is
# appended to OUT_DIR/commands.txt. The epochcast binary: $EC_CLI, else build/epochcast, else
# one built here into build-device/ (cmake, no PGO or LTO); validation is skipped, and said so,
# when none can be had.
#
# --dry-run runs on a CPU machine without torch: it byte-compiles every Python file, checks
# the plan (caps within the 9 minutes), runs every section with --dry-run (synthetic rows
# through the same writers), then the same validation steps on them: `epochcast validate` must
# read the run records and `epochcast predict profile=...` the profile rows. tests/cli/
# test_device_check.sh runs it under ctest.
set -uo pipefail
usage="usage: device_check.sh OUT_DIR [--dry-run]"
out=${1:?$usage}
dry=${2:-}
[ -z "$dry" ] || [ "$dry" = --dry-run ] || { echo "$usage" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
dev=$root/bench/harness/device
py=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in the source tree
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
t_start=$(date +%s)
total_cap_s=${DEVICE_CHECK_TOTAL_S:-540}

# The plan: section, time cap in seconds. The caps add up to under 9 minutes with the
# validation's build; a section started late gets what is left.
plan=(
  "env_info 15"
  "gemm 44"
  "attention 64"
  "bandwidth 30"
  "optimizer 20"
  "train_llama 100"
  "train_bert 60"
  "train_resnet 50"
  "oom 30"
  "profile 15"
)
validate_cap_s=110

flag=()
[ "$dry" = --dry-run ] && flag=(--dry-run)
log() { echo "$*" | tee -a "$out/commands.txt"; }
fail() { # section rc elapsed cap note
  local f=$out/failures.csv
  [ -s "$f" ] || echo "section,exit_code,elapsed_s,cap_s,note" >"$f"
  echo "$1,$2,$3,$4,\"${5//\"/\'}\"" >>"$f"
  echo "section $1 failed (exit $2): $5" >&2
}

log "# device_check.sh $* ($(date -u +%FT%TZ), $(uname -n))"

# 1. The dry run's own checks: every Python file compiles, the plan fits the time.
if [ "$dry" = --dry-run ]; then
  log "+ $py -c 'compile(...)' $dev/*.py   (a syntax check that writes no .pyc)"
  $py - "$dev"/*.py <<'PY' || { echo "device_check: a Python file does not compile" >&2; exit 1; }
import sys
for f in sys.argv[1:]:
    with open(f) as src:
        compile(src.read(), f, "exec")
PY
  sum=$validate_cap_s
  for s in "${plan[@]}"; do
    set -- $s
    [ -f "$dev/$1.py" ] || { echo "device_check: plan names $1, no $dev/$1.py" >&2; exit 1; }
    sum=$((sum + $2))
  done
  [ "$sum" -le "$total_cap_s" ] || { echo "device_check: the caps add up to ${sum}s, over ${total_cap_s}s" >&2; exit 1; }
  log "# plan: ${#plan[@]} sections + validation, caps ${sum}s of ${total_cap_s}s"
fi

# 2. The sections, each under its cap (shrunk to what is left of the total).
for s in "${plan[@]}"; do
  set -- $s
  name=$1 cap=$2
  left=$((total_cap_s - validate_cap_s - ($(date +%s) - t_start)))
  [ "$cap" -gt "$left" ] && cap=$left
  if [ "$cap" -lt 5 ]; then
    fail "$name" 124 0 "$cap" "not started: the total time was spent"
    continue
  fi
  cmd=(timeout -k 5 "$cap" "$py" "$dev/$name.py" --out "$out" --cap-s "$((cap - 5))" "${flag[@]}")
  log "+ ${cmd[*]}"
  t0=$(date +%s)
  (cd "$dev" && "${cmd[@]}") >>"$out/$name.log" 2>&1
  rc=$?
  el=$(($(date +%s) - t0))
  if [ "$rc" -ne 0 ]; then
    fail "$name" "$rc" "$el" "$cap" "$( [ "$rc" -eq 124 ] && echo "time cap" || tail -n 1 "$out/$name.log")"
  fi
done

# 3. Predicted against measured: the epochcast binary (built here if need be), then validate.
ec=${EC_CLI:-}
if [ -z "$ec" ] && [ -x "$root/build/epochcast" ]; then ec=$root/build/epochcast; fi
left_s() { local l=$((total_cap_s - ($(date +%s) - t_start) - ${1:-0})); [ "$l" -lt 5 ] && l=5; echo "$l"; }
if [ -z "$ec" ] && [ "$dry" != --dry-run ]; then
  left=$(left_s 30)
  log "+ cmake -S $root -B $root/build-device -DEC_PGO=OFF -DEC_LTO=OFF -DCMAKE_BUILD_TYPE=Release && cmake --build $root/build-device --target epochcast -j"
  if timeout "$left" cmake -S "$root" -B "$root/build-device" -DEC_PGO=OFF -DEC_LTO=OFF -DCMAKE_BUILD_TYPE=Release \
       >"$out/build.log" 2>&1 &&
     timeout "$left" cmake --build "$root/build-device" --target epochcast -j "$(nproc)" >>"$out/build.log" 2>&1; then
    ec=$root/build-device/epochcast
  else
    fail build $? "$(($(date +%s) - t_start))" "$left" "epochcast did not build here (build.log): validation skipped; run bench/harness/device/compare.py on the results where it builds"
  fi
fi
if [ -n "$ec" ]; then
  case $ec in /*) ;; */*) ec=$(cd "$(dirname "$ec")" && pwd)/$(basename "$ec") ;; esac
  cmd=("$py" "$dev/compare.py" --out "$out" --ec "$ec" "${flag[@]}")
  log "+ ${cmd[*]}"
  left=$(left_s)
  (cd "$dev" && EPOCHCAST_MODELS=${EPOCHCAST_MODELS:-$root/models} timeout "$left" "${cmd[@]}") >>"$out/compare.log" 2>&1 ||
    fail compare $? 0 "$left" "$(tail -n 1 "$out/compare.log")"
elif [ "$dry" = --dry-run ]; then
  echo "device_check: --dry-run needs the epochcast binary (EC_CLI or build/epochcast) to check the formats" >&2
  exit 1
fi

el=$(($(date +%s) - t_start))
log "# done in ${el}s"
if [ "$dry" = --dry-run ] && [ -s "$out/failures.csv" ]; then
  echo "device_check --dry-run: failures:" >&2
  cat "$out/failures.csv" >&2
  exit 1
fi
exit 0
