#!/usr/bin/env bash
# test_device_check.sh: bench/harness/device_check.sh --dry-run on this CPU machine (no torch,
# no GPU), as CI runs it: every Python file of bench/harness/device/ compiles, the plan's caps
# fit in 9 minutes, every section writes its synthetic rows through the real writers, and
# `epochcast validate` reads the run records (time, the three memory readings, the oom run)
# and the profile rows load (validate --profile). Then, in a copy of the harness: a section
# that fails is recorded in failures.csv and the sections after it still run; a Python file
# that does not compile stops the dry run before any section.
#   bash tests/cli/test_device_check.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_device_check.sh path/to/epochcast}
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
header() { head -n 1 "$1" 2>/dev/null; }

out=$tmp/out
log=$(EC_CLI="$EC" bash "$here/bench/harness/device_check.sh" "$out" --dry-run 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then ok "dry run exits 0"; else bad "dry run exits 0" "exit $rc: $log"; fi
for f in commands.txt env.txt runs.csv memory.csv gemm.csv gemm_sustained.csv attention.csv bandwidth.csv launch.csv optimizer.csv \
         device_profile.csv validate.csv validate_device_profile.csv predicted_vs_measured.md; do
  if [ -s "$out/$f" ]; then ok "writes $f"; else bad "writes $f"; fi
done
[ ! -e "$out/failures.csv" ] && ok "no failures" || bad "no failures" "$(cat "$out/failures.csv")"
[ "$(header "$out/device_profile.csv")" = "$(header "$here/models/profile.csv")" ] &&
  ok "profile rows have models/profile.csv's header" || bad "profile rows have models/profile.csv's header"
for m in samples_per_s step_time_ms peak_bytes oom; do
  grep -q ",$m," "$out/runs.csv" && ok "run records of metric $m" || bad "run records of metric $m"
done
for r in nvml reserved allocated; do
  grep -q ",peak_bytes,$r," "$out/runs.csv" && ok "memory reading $r" || bad "memory reading $r"
done
for s in train_llama train_bert train_resnet oom; do
  grep -q ",$s\$" "$out/runs.csv" && ok "run records from $s" || bad "run records from $s"
done
grep -q "runs, profile .*device_profile.csv" "$out/validate_device_profile.txt" &&
  ok "validate read the device profile" || bad "validate read the device profile" "$(cat "$out/validate_device_profile.txt")"
nrec=$(($(wc -l <"$out/runs.csv") - 1))
grep -q "$nrec runs" "$out/validate.txt" && ok "validate read all $nrec run records" ||
  bad "validate read all $nrec run records" "$(head -3 "$out/validate.txt")"
for s in env_info gemm attention bandwidth optimizer train_llama train_bert train_resnet oom profile compare.py; do
  grep -q "device/$s" "$out/commands.txt" && ok "commands.txt has $s" || bad "commands.txt has $s"
done
# The optimizer steps beside epochcast's optimizer phase: BERT-large's 391 tensors, a prediction
# for each optimizer epochcast has, none for the BertAdam loop it has not.
opt=$(grep -E '^\| (adamw_foreach|adamw_fused|adamw_hf|bertadam_sync) \| 391 \|' "$out/predicted_vs_measured.md")
if [ "$(grep -c . <<<"$opt")" -eq 4 ] &&
   grep -qE '^\| adamw_foreach \| 391 \| [0-9]+ \| [0-9.]+ \| adamw_foreach \| [0-9.]+ \| [-+][0-9.]+ \|$' <<<"$opt" &&
   grep -qE '^\| bertadam_sync \| .*\| \(none\) \|  \| [a-z-]* \|$' <<<"$opt"; then
  ok "optimizer steps set beside epochcast's optimizer phase"
else bad "optimizer steps set beside epochcast's optimizer phase" "$opt"; fi

# The back-to-back GEMM (gemm_sustained.csv) reported as gpus.csv's sustained_tensor_frac.
grep -qE '^- GEMM bf16 8192x8192x8192 back to back for 3 s: .* sustained_tensor_frac 0\.900 ' "$out/predicted_vs_measured.md" &&
  ok "sustained_tensor_frac reported" || bad "sustained_tensor_frac reported" "$(grep -i 'back to back' "$out/predicted_vs_measured.md")"

# A copy of the harness with one section broken at run time: recorded, the rest goes on.
copy=$tmp/tree
mkdir -p "$copy/bench/harness"
cp -R "$here/bench/harness/device_check.sh" "$here/bench/harness/device" "$copy/bench/harness/"
cp -R "$here/models" "$copy/models"
printf 'raise SystemExit("gemm broken on purpose")\n' >"$copy/bench/harness/device/gemm.py"
log=$(EC_CLI="$EC" bash "$copy/bench/harness/device_check.sh" "$tmp/out2" --dry-run 2>&1); rc=$?
[ "$rc" -ne 0 ] && ok "a failed section fails the dry run" || bad "a failed section fails the dry run" "$log"
grep -q '^gemm,1,.*gemm broken on purpose' "$tmp/out2/failures.csv" 2>/dev/null &&
  ok "failures.csv names the section and its message" || bad "failures.csv names the section" "$(cat "$tmp/out2/failures.csv" 2>&1)"
[ -s "$tmp/out2/attention.csv" ] && [ -s "$tmp/out2/runs.csv" ] && [ -s "$tmp/out2/validate.csv" ] &&
  ok "the sections after it ran" || bad "the sections after it ran"
printf 'def broken(:\n' >"$copy/bench/harness/device/gemm.py"
log=$(EC_CLI="$EC" bash "$copy/bench/harness/device_check.sh" "$tmp/out3" --dry-run 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -q "does not compile" <<<"$log" && [ ! -e "$tmp/out3/env.txt" ]; then
  ok "a syntax error stops the dry run before any section"
else bad "a syntax error stops the dry run before any section" "exit $rc: $log"; fi
log=$(bash "$here/bench/harness/device_check.sh" "$tmp/out4" --dry 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q usage <<<"$log" && ok "a bad option: usage, exit 2" || bad "a bad option: usage, exit 2" "$log"

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
