#!/usr/bin/env bash
# test_sweep_threads.sh: `epochcast sweep --threads N` writes, row for row and in the same order,
# what one thread writes (CSV on stdout and -o FILE, refused points included, the list of refused
# points on stderr too), and a bad --threads value is refused with a message and exit status 2.
#   bash tests/cli/test_sweep_threads.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_sweep_threads.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

# 3 x 3 x 3 x 3 x 3 x 2 = 486 points; tp=2 is refused on 1 GPU and for resnet-50 (no attention).
axes="model=bert-base,resnet-50,gpt2 gpu=t4,a100-sxm4-80gb,h100-sxm5-80gb batch_per_gpu=1,8,64
      num_gpus=1,2,8 precision=fp32,amp_fp16,bf16 tp=1,2"
# shellcheck disable=SC2086
"$EC" sweep $axes --csv --threads 1 -o "$tmp/t1.csv" >"$tmp/t1.out" 2>"$tmp/t1.err"; rc1=$?
for t in 2 4 7; do
  # shellcheck disable=SC2086
  "$EC" sweep $axes --csv --threads $t -o "$tmp/t$t.csv" >"$tmp/t$t.out" 2>"$tmp/t$t.err"; rc=$?
  if [ $rc -ne $rc1 ]; then bad "threads=$t exit status" "exit $rc, one thread $rc1"
  elif ! cmp -s "$tmp/t1.out" "$tmp/t$t.out"; then bad "threads=$t stdout CSV identical" "$(diff "$tmp/t1.out" "$tmp/t$t.out" | head -5)"
  elif ! cmp -s "$tmp/t1.csv" "$tmp/t$t.csv"; then bad "threads=$t -o CSV identical"
  elif ! cmp -s "$tmp/t1.err" "$tmp/t$t.err"; then bad "threads=$t refused list identical"
  else ok "threads=$t: stdout, -o file and refused list identical to one thread"; fi
done
rows=$(($(wc -l <"$tmp/t1.out") - 1))
refused=$(grep -cE '(^|,"?)E[A-Z]+: ' "$tmp/t1.out")
if [ "$rc1" -eq 1 ] && [ "$rows" -eq 486 ] && [ "$refused" -gt 0 ] && [ "$refused" -lt 486 ]; then
  ok "the compared sweep has 486 rows, $refused refused"
else bad "the compared sweep" "exit $rc1, $rows rows, $refused refused"; fi
# The readable table too, and the default (the cores available).
# shellcheck disable=SC2086
a=$("$EC" sweep $axes --threads 1 2>&1); b=$("$EC" sweep $axes 2>&1); c=$("$EC" sweep $axes -j 3 2>&1)
if [ "$a" = "$b" ] && [ "$a" = "$c" ]; then ok "table identical: --threads 1, default, -j 3"; else bad "table identical"; fi

expect_usage() {
  local name=$1 pattern=$2; shift 2
  local out rc
  out=$("$EC" sweep model=bert-base gpu=t4 batch_per_gpu=8,16 "$@" 2>&1); rc=$?
  if [ $rc -ne 2 ]; then bad "$name" "exit $rc, wanted 2: $out"; return; fi
  if ! grep -qF -- "$pattern" <<<"$out"; then bad "$name" "output lacks '$pattern': $out"; return; fi
  ok "$name"
}
expect_usage "--threads without a value" "--threads needs a number of threads" --threads
expect_usage "--threads -1" "--threads needs a number of threads from 0" --threads -1
expect_usage "--threads abc" "--threads needs a number of threads" --threads abc
expect_usage "--threads 2x" "--threads needs a number of threads" --threads 2x
expect_usage "--threads 100000" "to 1024" --threads 100000
out=$("$EC" sweep --help); grep -qF -- "--threads N" <<<"$out" && ok "sweep --help names --threads" || bad "sweep --help names --threads"

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
