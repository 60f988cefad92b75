#!/usr/bin/env bash
# test_arch_fold.sh: the held-out architecture folds of loao.md (issue 39 item 4).
# bench/arch_fold.sh refuses an architecture no GPU has, naming it; for ampere it writes a profile
# fitted without any Ampere run (its stack file keeps no A100 row and the profile's unseen-
# architecture error names the architectures it was measured on, Ampere not among them) and the LLM
# report predicted with it; arch_stack_table.py --fold prints the Hopper fold (the shipped fit) and
# the Ampere fold with an all-stacks line, and refuses a --fold without its three arguments.
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

out=$(bash bench/arch_fold.sh ampere "$build" "$tmp" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && [ -s "$tmp/profile_no_ampere.csv" ] && [ -s "$tmp/llm_no_ampere.md" ]; then
  ok "ampere fold written"; else bad "ampere fold written" "exit $rc: $out"; fi
if grep -q ",a100-" "$tmp/stack_no_ampere.csv" "$tmp/dle_no_ampere.csv"; then bad "no Ampere row in the fold's files"; else
  ok "no Ampere row in the fold's files"; fi
unseen=$(grep '^error_log_sd_unseen_arch,' "$tmp/profile_no_ampere.csv")
if [ -n "$unseen" ] && ! grep -q "ampere" <<<"$unseen" && grep -q "volta" <<<"$unseen"; then
  ok "the fold's fit has no Ampere run"; else bad "the fold's fit has no Ampere run" "$unseen"; fi

out=$(python3 bench/arch_stack_table.py models --fold ampere "$tmp/profile_no_ampere.csv" "$tmp/llm_no_ampere.md" 2>&1); rc=$?
for want in "| Hopper (shipped fit: no Hopper run; sd " "| Ampere (fit without its runs; sd " "| MLPerf GPT-3 (NeMo, TE FP8) |" \
            "| **all stacks** |"; do
  if [ "$rc" -eq 0 ] && grep -qF -- "$want" <<<"$out"; then ok "table has '$want'"; else
    bad "table has '$want'" "exit $rc: $(tail -5 <<<"$out")"; fi
done
out=$(python3 bench/arch_stack_table.py models --fold ampere 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "needs ARCH PROFILE.csv LLM.md" <<<"$out"; then ok "short --fold refused"; else
  bad "short --fold refused" "exit $rc: $out"; fi

echo "$((n - fails))/$n passed"
[ "$fails" -eq 0 ]
