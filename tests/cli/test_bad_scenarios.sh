#!/usr/bin/env bash
# test_bad_scenarios.sh: the scenarios of tests/bad/scenarios/ (listed with their expected
# messages in EXPECTED) each fail cleanly: exit status 1, the message, no hang (time budget),
# no crash (memory limit), no output file left; and the run limits' options work.
#   bash tests/cli/test_bad_scenarios.sh path/to/epochcast      (cwd tests/)
set -u
EC=${1:?usage: test_bad_scenarios.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1: $2"; }

while IFS=$'\t' read -r script want; do
  case $script in ''|'#'*) continue ;; esac
  out=$(EPOCHCAST_MAX_SECONDS=5 EPOCHCAST_MAX_MEMORY_MB=64 timeout 60 "$EC" run "bad/scenarios/$script" "$tmp/out.csv" 2>&1)
  rc=$?
  if [ "$rc" -ne 1 ]; then bad "$script" "exit $rc, wanted 1: $out"
  elif ! grep -qF -- "$want" <<<"$out"; then bad "$script" "output lacks '$want': $out"
  elif [ -e "$tmp/out.csv" ] || [ -e "$tmp/out.csv.tmp" ]; then bad "$script" "left an output file"
  else ok "$script"; fi
done < bad/scenarios/EXPECTED

# The options override the environment; a bad value is a usage error (exit 2).
out=$(EPOCHCAST_MAX_SECONDS=100 timeout 60 "$EC" run --max-seconds 1 bad/scenarios/infinite_loop.lua 2>&1); rc=$?
if [ "$rc" -eq 1 ] && grep -qF "time budget of 1.0 s" <<<"$out"; then ok "--max-seconds"; else bad "--max-seconds" "exit $rc: $out"; fi
out=$(timeout 60 "$EC" run --max-memory-mb 32 bad/scenarios/alloc_bomb.lua 2>&1); rc=$?
if [ "$rc" -eq 1 ] && grep -qF "limit of 32 MiB" <<<"$out"; then ok "--max-memory-mb"; else bad "--max-memory-mb" "exit $rc: $out"; fi
out=$("$EC" run --max-seconds soon bad/scenarios/infinite_loop.lua 2>&1); rc=$?
if [ "$rc" -eq 2 ]; then ok "bad --max-seconds"; else bad "bad --max-seconds" "exit $rc: $out"; fi
# A good scenario still runs under the default limits.
echo 'local ec = require "epochcast"; print(#ec.gpus() > 0)' > "$tmp/good.lua"
out=$("$EC" run "$tmp/good.lua" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && [ "$out" = "true" ]; then ok "good scenario"; else bad "good scenario" "exit $rc: $out"; fi

echo "$((n - fails))/$n passed"
[ "$fails" -eq 0 ]
