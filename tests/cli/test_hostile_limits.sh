#!/usr/bin/env bash
# test_hostile_limits.sh: issue 42, the bounds on a whole input: a network description bounded
# as a whole (a repeat that holds itself, nested repeats that multiply), optimize's
# train_tokens, calibrate's fits (defects 6, 9 and 10; the MPI ones, defect 5, are in
# tests/mpi/test_mpi.sh).  Each check failed on the CLI before the fix (a hang killed after
# 20 s, an exit 0, a NaN, a profile its reader refuses).  Writes only under a temporary folder.
#   bash tests/cli/test_hostile_limits.sh path/to/epochcast   (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_hostile_limits.sh path/to/epochcast}
EC=$(cd "$(dirname "$EC")" && pwd)/$(basename "$EC")
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | head -20 | sed 's/^/     /'; }

# run ...: stdout+stderr in $out, the status in $rc, the seconds in $secs; killed (not asked:
# a hang in C ignores SIGTERM) after 20 s
run() {
  local t0; t0=$(date +%s.%N)
  out=$(timeout -s KILL 20 "$@" 2>&1); rc=$?
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
}
# peak resident KiB of a command (0 when /usr/bin/time is missing or under ASan)
peak_kib() {
  if [ -x /usr/bin/time ] && [ -z "${ASAN_OPTIONS:-}" ]; then
    timeout -s KILL 20 /usr/bin/time -f '%M' -o "$tmp/peak" "$@" >/dev/null 2>&1
    tail -1 "$tmp/peak"
  else
    "$@" >/dev/null 2>&1; echo 0
  fi
}
fast() { [ "$(echo "$secs < 10" | bc)" -eq 1 ]; }

HEAD='heads = {{task = "lm", kind = "causal_lm"}}'

# ---- 6. ec.network bounded as a whole --------------------------------------------------
cat > "$tmp/cycle.lua" <<EOF
local ec = require "epochcast"
local t = {"repeat", times = 2}
for i = 2, 12 do t[i] = t end
ec.network{id = "cycle", layers = {{"embedding", vocab = 320, dim = 64}, t}, $HEAD}
EOF
run "$EC" run "$tmp/cycle.lua"
check "6: a repeat that holds itself: refused in seconds, naming the path" \
  '[ $rc -eq 1 ] && fast && grep -qF "layers[2][2]: a repeat that contains itself (layers[2][2] is layers[2])" <<<"$out"' \
  "rc=$rc after ${secs}s: $out"

# the same table shared by many repeats (no cycle): 11^16 layers counted, not held
cat > "$tmp/shared.lua" <<EOF
local ec = require "epochcast"
local t = {"norm", "rms"}
for d = 1, 15 do local r = {"repeat", times = 1}; for i = 2, 12 do r[i] = t end; t = r end
ec.network{id = "shared", layers = {{"embedding", vocab = 320, dim = 64}, t}, $HEAD}
EOF
run "$EC" run "$tmp/shared.lua"
check "6: one table shared by nested repeats: refused in seconds at EC_NETWORK_MAX_LAYERS" \
  '[ $rc -eq 1 ] && fast && grep -qF "EC_NETWORK_MAX_LAYERS" <<<"$out"' "rc=$rc after ${secs}s: $out"

# nested repeats: four of 100 over a norm, 10^6 layers held once unrolled, 10^8 a step (the old
# code expanded them all: 7.6 GB for such a one)
cat > "$tmp/nested.lua" <<EOF
local ec = require "epochcast"
local body = {"repeat", times = 100, {"norm", "rms"}}
for i = 1, 3 do body = {"repeat", times = 100, body} end
assert(ec.network{id = "nested", layers = {{"embedding", vocab = 320, dim = 64}, body, {"norm", "rms"}}, $HEAD})
EOF
run "$EC" run "$tmp/nested.lua"
kib=$(peak_kib "$EC" run "$tmp/nested.lua")
echo "     nested repeats (10^6 layers held, 10^8 a step): refused in ${secs} s, peak ${kib} KiB"
check "6: nested repeats: refused in seconds at EC_NETWORK_MAX_LAYERS, under 200 MB" \
  '[ $rc -eq 1 ] && fast && grep -qF "the description grows past EC_NETWORK_MAX_LAYERS = 100000" <<<"$out" && [ "$kib" -lt 200000 ]' \
  "rc=$rc after ${secs}s, ${kib} KiB: $out"

# a top-level repeat of 100,000 over 200 layers: 2e7 layers a step (1e8 were priced, exit 0)
cat > "$tmp/step.lua" <<EOF
local ec = require "epochcast"
local body = {"repeat", times = 100000}
for i = 1, 200 do body[#body + 1] = {"norm", "rms"} end
assert(ec.network{id = "step", layers = {{"embedding", vocab = 320, dim = 64}, body, {"norm", "rms"}}, $HEAD})
print(ec.predict{model = "step", gpu = "h100-sxm5-80gb", batch_per_gpu = 1, seq_len = 16}.memory.peak_bytes)
EOF
run "$EC" run "$tmp/step.lua"
check "6: 2e7 layers a step: refused at EC_NETWORK_MAX_STEP_LAYERS" \
  '[ $rc -eq 1 ] && fast && grep -qF "EC_NETWORK_MAX_STEP_LAYERS" <<<"$out"' "rc=$rc after ${secs}s: $out"

# a real network still defines and predicts
cat > "$tmp/fine.lua" <<EOF
local ec = require "epochcast"
ec.network{id = "fine", layers = {{"embedding", vocab = 32000, dim = 512},
  {"repeat", times = 24, {"residual", "save"}, {"norm", "rms"},
    {"attention", heads = 8, causal = true, position = "rope"}, {"residual", "add"}},
  {"norm", "rms"}}, $HEAD}
print(ec.predict{model = "fine", gpu = "h100-sxm5-80gb", batch_per_gpu = 1, seq_len = 128}.step_s > 0)
EOF
run "$EC" run "$tmp/fine.lua"
check "6: a 24-layer network still defines and predicts" '[ $rc -eq 0 ] && [ "$out" = "true" ]' "rc=$rc: $out"

# ---- 9. optimize train_tokens ---------------------------------------------------------------
OPT="model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=16 seq_len=4096 global_batch_tokens=1048576"
for v in 1e-320 0.5 0 nan inf; do
  # shellcheck disable=SC2086
  run "$EC" optimize $OPT train_tokens=$v goal=train_time -o "$tmp/opt.csv"
  check "9: optimize train_tokens=$v: refused naming the key, no CSV" \
    '[ $rc -ne 0 ] && grep -qF "train_tokens='"'$v'"'" <<<"$out" && [ ! -e "$tmp/opt.csv" ] && ! grep -q -- "-nan" <<<"$out"' \
    "rc=$rc: $out"
done
cat > "$tmp/opt.lua" <<'EOF'
local ec = require "epochcast"
local r, msg = ec.optimize{model = "llama-3.1-8b", gpu = "h100-sxm5-80gb", num_gpus = 16, seq_len = 4096,
                           global_batch_tokens = 1048576, train_tokens = 1e-320, goal = "train_time"}
print(r, msg)
EOF
run "$EC" run "$tmp/opt.lua"
check "9: ec.optimize{train_tokens = 1e-320}: nil and a message naming the key" \
  'grep -q "^nil.*train_tokens" <<<"$out" && ! grep -qi "nan" <<<"$out"' "rc=$rc: $out"
# shellcheck disable=SC2086
run "$EC" optimize $OPT train_tokens=1 goal=train_time --top 50 -o "$tmp/opt1.csv"
check "9: train_tokens=1 ranks, with no NaN in the listing or the CSV" \
  '[ $rc -eq 0 ] && [ -s "$tmp/opt1.csv" ] && ! grep -qiw "nan" "$tmp/opt1.csv" <<<"$out" && ! grep -qiw nan <<<"$out" && ! grep -q "ties with the best" <<<"$(sed -n 3,4p <<<"$out")"' \
  "rc=$rc: $(head -5 <<<"$out")"

# ---- 10. calibrate keeps no fit its reader refuses, none worse than its start ------------------
cat > "$tmp/r1.csv" <<'EOF'
id,model,gpu,batch_per_gpu,seq_len,precision,metric,value
r1,bert-base,t4,16,128,fp32,samples_per_s,1e15
EOF
run "$EC" calibrate "$tmp/r1.csv" -o "$tmp/p1.csv"
if [ -e "$tmp/p1.csv" ]; then
  run "$EC" predict model=bert-base gpu=t4 batch_per_gpu=16 seq_len=128 precision=fp32 profile="$tmp/p1.csv"
  check "10: one run at 1e15 samples/s: the profile written reads back and predicts the run" '[ $rc -eq 0 ]' "$out"
else
  check "10: one run at 1e15 samples/s: refused, nothing written" \
    '[ $rc -eq 1 ] && grep -qF "the fit is not kept" <<<"$out"' "rc=$rc: $out"
fi
cat > "$tmp/r3.csv" <<'EOF'
id,model,gpu,batch_per_gpu,seq_len,precision,metric,value
r1,bert-base,t4,16,128,amp_fp16,samples_per_s,137
r2,bert-base,t4,16,128,amp_fp16,samples_per_s,137
r3,bert-base,t4,16,128,amp_fp16,samples_per_s,13700
EOF
run "$EC" calibrate "$tmp/r3.csv" -o "$tmp/p3.csv"
check "10: a fit worse than its start (MAPE 264% after 44%): refused, nothing written" \
  '[ $rc -eq 1 ] && grep -qF "worse than its start" <<<"$out" && [ ! -e "$tmp/p3.csv" ]' "rc=$rc: $out"
cat > "$tmp/r2.csv" <<'EOF'
id,model,gpu,batch_per_gpu,seq_len,precision,metric,value
r1,bert-base,t4,16,128,amp_fp16,samples_per_s,5000
r2,bert-base,a100-sxm4-80gb,16,128,amp_fp16,samples_per_s,90000
EOF
run "$EC" calibrate "$tmp/r2.csv" -o "$tmp/p2.csv"
if [ -e "$tmp/p2.csv" ]; then
  ok=1
  for g in t4 a100-sxm4-80gb; do
    "$EC" predict model=bert-base gpu=$g batch_per_gpu=16 seq_len=128 precision=amp_fp16 profile="$tmp/p2.csv" \
      >"$tmp/pred.out" 2>&1 || ok=0
  done
  check "10: runs 30x too fast: every fitted run predicts under the profile written (the old fit: 342% MFU)" \
    '[ $ok -eq 1 ]' "$(cat "$tmp/pred.out")"
else
  check "10: runs 30x too fast: refused, nothing written" '[ $rc -eq 1 ] && grep -qF "not kept" <<<"$out"' "$out"
fi

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
