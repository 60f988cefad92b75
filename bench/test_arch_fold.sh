#!/usr/bin/env bash
# test_arch_fold.sh: the held-out architecture folds of loao.md (issue 39 item 4).
# bench/arch_fold.sh refuses an architecture no GPU has, naming it; for ampere it writes a profile
# fitted without any Ampere run (its stack file keeps no A100 row and the profile's unseen-
# architecture error names the architectures it was measured on, Ampere not among them), the LLM
# report predicted with it, and that fit's predictions of every Ampere run it left out and of the
# Ampere rows of holdout_runs.csv (only Ampere rows, each time row with its p10-p90);
# arch_stack_table.py --fold prints the Hopper fold (the shipped fit) and the Ampere fold with its
# stack, DLE, holdout and all-stacks lines, and refuses a --fold
# without its two arguments or whose folder lacks a fold's file; coverage_scan.py reads the same
# folds and finds the sd factors that put them inside 70-90%; probe_band.sh refuses a NAME=VALUE
# that is not a constants.csv name and a number before it writes anything, and takes a device
# run's measured masked-kernel efficiency (--device-profile) as the prior it probes.
#   bash bench/test_arch_fold.sh BUILD_DIR      (from the repository root; ctest arch_fold)
set -u
build=${1:?usage: test_arch_fold.sh BUILD_DIR}
cd "$(dirname "$0")/.."
fails=0 n=0
ok()  { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/     /'; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$(bash bench/arch_fold.sh nonesuch "$build" "$tmp" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "no GPU of models/gpus.csv has architecture 'nonesuch'" <<<"$out"; then
  ok "unknown architecture refused"; else bad "unknown architecture refused" "exit $rc: $out"; fi

out=$(EPOCHCAST_MODELS="$tmp/nonesuch" bash bench/arch_fold.sh ampere "$build" "$tmp" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "$tmp/nonesuch/gpus.csv: No such file or directory" <<<"$out"; then
  ok "missing EPOCHCAST_MODELS folder named"; else bad "missing EPOCHCAST_MODELS folder named" "exit $rc: $out"; fi

out=$(bash bench/arch_fold.sh ampere "$build" "$tmp" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && [ -s "$tmp/profile_no_ampere.csv" ] && [ -s "$tmp/llm_no_ampere.md" ] &&
   grep -qxF -- "--fold ampere $tmp" <<<"$out"; then
  ok "ampere fold written"; else bad "ampere fold written" "exit $rc: $out"; fi
if grep -q ",a100-" "$tmp/stack_no_ampere.csv" "$tmp/dle_no_ampere.csv"; then bad "no Ampere row in the fold's files"; else
  ok "no Ampere row in the fold's files"; fi
for set in stack dle holdout; do
  f="$tmp/${set}_of_ampere.pred.csv"
  n_rows=$(tail -n +2 "$f" 2>/dev/null | wc -l)
  others=$(python3 - "$f" <<'PY' 2>&1
import csv, sys
arch = {}
for r in csv.DictReader(open("models/gpus.csv", newline="")):
    for name in [r["id"]] + [a for a in r["aliases"].split(";") if a]:
        arch[name.lower()] = r["architecture"]
print(" ".join(sorted({r["gpu"] for r in csv.DictReader(open(sys.argv[1], newline=""))
                       if arch.get(r["gpu"].lower()) != "ampere"})))
PY
)
  timed=$(awk -F, 'NR > 1 && $4 ~ /^(samples_per_s|step_time_ms|train_time_s|epoch_time_s)$/ && $10 == ""' "$f" 2>/dev/null | wc -l)
  min=20; [ "$set" = holdout ] && min=10  # holdout_runs.csv: the A40's and RTX A6000's runs
  if [ "$n_rows" -gt "$min" ] && [ -z "$others" ] && [ "$timed" -eq 0 ]; then ok "$set runs of ampere predicted by the fold"; else
    bad "$set runs of ampere predicted by the fold" "$n_rows rows; other GPUs: $others; time rows without p10-p90: $timed"; fi
done
unseen=$(grep '^error_log_sd_unseen_arch,' "$tmp/profile_no_ampere.csv")
if [ -n "$unseen" ] && ! grep -q "ampere" <<<"$unseen" && grep -q "volta" <<<"$unseen"; then
  ok "the fold's fit has no Ampere run"; else bad "the fold's fit has no Ampere run" "$unseen"; fi

out=$(python3 bench/arch_stack_table.py models --fold ampere "$tmp" 2>&1); rc=$?
for want in "| Hopper (shipped fit: no Hopper run; sd " "| Ampere (fit without its runs; sd " "| MLPerf GPT-3 (NeMo, TE FP8) |" \
            "| PyTorch / HF stack (all splits) |" "| DLE / Lambda PyTorch |" \
            "| DLE / Lambda PyTorch, GPUs no fit has (holdout_runs.csv) |" "| **all stacks** |"; do
  if [ "$rc" -eq 0 ] && grep -qF -- "$want" <<<"$out"; then ok "table has '$want'"; else
    bad "table has '$want'" "exit $rc: $(tail -5 <<<"$out")"; fi
done
# every bias reads one way: > 0 predicted faster (a rate too high, a duration too short)
out=$(python3 -c 'import sys; sys.path.insert(0, "bench"); import arch_stack_table as t
print(t.rel_error("step_time_ms", 90.0, 100.0) > 0, t.rel_error("tokens_per_s", 110.0, 100.0) > 0,
      t.rel_error("train_time_s", 110.0, 100.0) < 0)' 2>&1)
if [ "$out" = "True True True" ]; then ok "bias signed one way"; else bad "bias signed one way" "$out"; fi
# sd holding 80%: the 8th smallest of 10 |log errors| over z_0.9 (heldout.c's quantile rule)
out=$(python3 -c 'import sys; sys.path.insert(0, "bench"); import arch_stack_table as t
print(abs(t.sd_holding([0.1] * 8 + [1.0] * 2) * t.Z90 - 0.1) < 1e-12, abs(t.sd_holding([0.1] * 7 + [1.0] * 3) * t.Z90 - 1.0) < 1e-12)' 2>&1)
if [ "$out" = "True True" ]; then ok "sd holding 80% is the 0.8 quantile over z_0.9"; else
  bad "sd holding 80% is the 0.8 quantile over z_0.9" "$out"; fi
# coverage_scan.py: ten rows of ratio (i + 0.3) / 10 are 70-90% inside for a GPU-bound factor 0.65-0.90,
# ten of twice that for a host-bound one 1.30-1.50 (the scan's top): 6 x 5 x 21 choices, the closest to 1 kept,
# the choices' ranges those
out=$(python3 -c 'import sys; sys.path.insert(0, "bench"); import coverage_scan as c
w, f, cov, ins = c.scan({"A": [((i + 0.3) / 10, "gpu") for i in range(10)], "B": [((i + 0.3) / 5, "host") for i in range(10)]})
print(w, f, cov, len(ins), [(min(x[i] for x in ins), max(x[i] for x in ins)) for i in range(3)])' 2>&1)
if [ "$out" = "0.0 {'gpu': 0.9, 'host': 1.3, 'multi': 1.0} {'A': 0.9, 'B': 0.7} 630 [(0.65, 0.9), (1.3, 1.5), (0.5, 1.5)]" ]; then
  ok "coverage scan finds the band's factors"; else bad "coverage scan finds the band's factors" "$out"; fi
out=$(python3 bench/coverage_scan.py models --fold ampere "$tmp" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -q "^| Hopper | [0-9]* |" <<<"$out" && grep -q "^| Ampere | [0-9]* | [0-9]*, [0-9]*% |" <<<"$out" &&
   grep -q "^Closest: x " <<<"$out"; then ok "coverage scan over the Hopper and Ampere folds"; else
  bad "coverage scan over the Hopper and Ampere folds" "exit $rc: $out"; fi
# an architecture the fit has runs of, none of the row's kernel class: said in the seen column
out=$(python3 bench/arch_stack_table.py models 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -qF -- "| blackwell | **no** (kernels=te) | Megatron-Bridge (TE) |" <<<"$out"; then
  ok "kernel class not fitted said"; else bad "kernel class not fitted said" "exit $rc: $(head -12 <<<"$out")"; fi
out=$(python3 bench/arch_stack_table.py models --fold ampere 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "needs ARCH DIR" <<<"$out"; then ok "short --fold refused"; else
  bad "short --fold refused" "exit $rc: $out"; fi
rm "$tmp/dle_of_ampere.pred.csv"
out=$(python3 bench/arch_stack_table.py models --fold ampere "$tmp" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "no dle_of_ampere.pred.csv there" <<<"$out"; then ok "incomplete fold folder refused"; else
  bad "incomplete fold folder refused" "exit $rc: $out"; fi
out=$(python3 bench/coverage_scan.py models --fold ampere "$tmp" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "no dle_of_ampere.pred.csv there" <<<"$out"; then ok "coverage scan refuses it too"; else
  bad "coverage scan refuses it too" "exit $rc: $out"; fi

out=$(python3 bench/arch_stack_table.py --help 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -qF "arch_stack_table.py [MODELS_DIR] [--fold ARCH DIR]" <<<"$out"; then ok "table --help"; else
  bad "table --help" "exit $rc: $(head -3 <<<"$out")"; fi
out=$(python3 bench/arch_stack_table.py "$tmp" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "no gpus.csv there" <<<"$out"; then ok "table refuses a folder without gpus.csv"; else
  bad "table refuses a folder without gpus.csv" "exit $rc: $out"; fi
# coverage_scan.py: --help, a missing --hopper report, a stray argument
out=$(python3 bench/coverage_scan.py --help 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -qF "coverage_scan.py [MODELS_DIR] [--hopper LLM_REPORT]" <<<"$out"; then ok "coverage scan --help"; else
  bad "coverage scan --help" "exit $rc: $out"; fi
out=$(python3 bench/coverage_scan.py models --hopper "$tmp/nonesuch.md" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF -- "--hopper needs an existing LLM report" <<<"$out"; then ok "missing --hopper report refused"; else
  bad "missing --hopper report refused" "exit $rc: $out"; fi
out=$(python3 bench/coverage_scan.py models extra 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "unexpected argument 'extra'" <<<"$out"; then ok "stray argument refused"; else
  bad "stray argument refused" "exit $rc: $out"; fi
# probe_band.sh checks every NAME=VALUE against models/constants.csv before it writes anything
for args in "sdpa_mask_eff_frac=abc|'abc' is not a number" "nonesuch=1|'nonesuch' is not a name of models/constants.csv" \
            "sdpa_mask_eff_frac|'sdpa_mask_eff_frac' is not NAME=VALUE"; do
  out=$(bash bench/probe_band.sh --build "$build" --out "$tmp/probe" "${args%%|*}" 2>&1); rc=$?
  if [ "$rc" -ne 0 ] && grep -qF -- "${args#*|}" <<<"$out" && [ ! -e "$tmp/probe" ]; then ok "probe refuses ${args%%|*}"; else
    bad "probe refuses ${args%%|*}" "exit $rc: $out"; fi
done
out=$(bash bench/probe_band.sh --help 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -qF "probe_band.sh [--build DIR] [--out DIR] [--device-profile FILE] [NAME=VALUE ...]" <<<"$out"; then
  ok "probe --help"; else bad "probe --help" "exit $rc: $out"; fi
# --device-profile: device_check.sh's attn_mask_eff row becomes the prior sdpa_mask_eff_frac (set in
# the copy's constants.csv in order with the pairs: here a bad pair after it stops the probe before
# anything is written); a missing file or one without the row is refused naming it
printf 'parameter,architecture,value,stderr,runs,fitted_on,kernels,meaning\nattn_mask_eff,,0.71,,,,cudnn,device_check on h200\n' \
  > "$tmp/device_profile.csv"
printf 'parameter,architecture,value\ngemm_scale,,1.1\n' > "$tmp/no_mask.csv"
out=$(bash bench/probe_band.sh --build "$build" --out "$tmp/probe" --device-profile "$tmp/device_profile.csv" nonesuch=1 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "attn_mask_eff 0.71 (device_check on h200; kernels cudnn)" <<<"$out" \
   && grep -qE "sdpa_mask_eff_frac: [0-9.]+ -> 0.71 " <<<"$out" && [ ! -e "$tmp/probe" ]; then
  ok "probe --device-profile: the measured attn_mask_eff becomes sdpa_mask_eff_frac"; else
  bad "probe --device-profile: the measured attn_mask_eff becomes sdpa_mask_eff_frac" "exit $rc: $out"; fi
for f in "$tmp/nonesuch.csv|No such file" "$tmp/no_mask.csv|no attn_mask_eff row"; do
  file=${f%%|*}
  out=$(bash bench/probe_band.sh --build "$build" --out "$tmp/probe" --device-profile "$file" 2>&1); rc=$?
  if [ "$rc" -eq 2 ] && grep -qF -- "--device-profile $file: " <<<"$out" && grep -qF "${f#*|}" <<<"$out" && [ ! -e "$tmp/probe" ]; then
    ok "probe refuses --device-profile ${file##*/}"; else bad "probe refuses --device-profile ${file##*/}" "exit $rc: $out"; fi
done

echo "$((n - fails))/$n passed"
[ "$fails" -eq 0 ]
