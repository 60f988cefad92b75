#!/usr/bin/env bash
# test_cli.sh: the epochcast command line as a user meets it: exit codes (0 ok, 1 error,
# 2 usage), messages that name the key, the nearest id or file:line, --help everywhere,
# CSV shape, and no output file left behind by a failure.
#   bash tests/cli/test_cli.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_cli.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp



# Fields per line of a CSV file (RFC 4180 quoting), one count per line.
cat > "$tmp/count.lua" <<'LUA'
for line in io.lines(arg[1]) do
  local n, q = 1, false
  for c in line:gmatch(".") do
    if c == '"' then q = not q elseif c == "," and not q then n = n + 1 end
  end
  print(n)
end
LUA
csv_counts() { lua5.4 "$tmp/count.lua" "$1"; }

P="model=bert-base gpu=t4 batch_per_gpu=16 seq_len=128"

# ---- help, version, usage errors --------------------------------------------------------
expect "--help" 0 "usage: epochcast" -- --help
expect "--version" 0 "epochcast " -- --version
for cmd in gpus models predict validate calibrate run; do
  expect "$cmd --help" 0 "usage: epochcast $cmd" -- "$cmd" --help
done
expect "predict --help lists the keys" 0 "batch_per_gpu" -- predict --help
expect "no command" 2 "--help" --
expect "unknown command" 2 "unknown command 'predcit'" -- predcit
expect "unknown option" 2 "--help" -- --frobnicate
expect "predict word without =" 2 "expected key=value" -- predict bert-base
expect "predict unknown option" 2 "unknown option '--xml'" -- predict $P --xml
expect "validate without file" 2 "missing RUNS.csv" -- validate
expect "run without script" 2 "missing SCRIPT.lua" -- run

# ---- input pipeline (issue 3): dynamic padding, measured GPU step, bad lengths ------------
expect "dynamic padding predicts" 0 "epoch time" -- predict $P padding=dynamic "lengths=lognormal(60,0.7)" dataset_samples=1000
expect "padding=dynamic needs lengths" 1 "needs lengths=" -- predict $P padding=dynamic
expect "unknown length distribution" 1 "unknown distribution" -- predict $P padding=dynamic "lengths=gamma(2,3)"
expect "bad histogram names file:line:col" 1 "zero_tokens.csv:3:3:" -- predict $P padding=dynamic lengths=bad/lengths/zero_tokens.csv
expect "gpu_step_s without a model" 0 "input" -- predict gpu=rtx4090 batch_per_gpu=1 gpu_step_s=0.05 sample_cpu_s=0.2

# ---- registries -------------------------------------------------------------------------
expect "gpus" 0 "t4" -- gpus
expect "models" 0 "bert-base" -- models
expect "--models with a missing folder" 1 "epochcast: " -- --models "$tmp/nowhere" gpus

# ---- predict ------------------------------------------------------------------------------
expect "predict" 0 "fits: " -- predict $P
expect "predict shows the bottleneck" 0 "bottleneck" -- predict $P
expect "unknown gpu names the nearest id" 1 "'t4'" -- predict model=bert-base gpu=t44 batch_per_gpu=16
expect "unknown gpu message prefix" 1 "epochcast: " -- predict model=bert-base gpu=t44 batch_per_gpu=16
expect "unknown model" 1 "bert-bsae" -- predict model=bert-bsae gpu=t4 batch_per_gpu=16
expect "unknown key names the key" 1 "unknown key 'bach_per_gpu'" -- predict model=bert-base gpu=t4 bach_per_gpu=16
expect "unknown key suggests" 1 "batch_per_gpu" -- predict model=bert-base gpu=t4 bach_per_gpu=16
expect "negative batch names the key" 1 "batch_per_gpu" -- predict model=bert-base gpu=t4 batch_per_gpu=-4
expect "negative batch names the range" 1 "range" -- predict model=bert-base gpu=t4 batch_per_gpu=-4

out=$("$EC" predict $P --csv 2>"$tmp/err"); rc=$?
printf '%s\n' "$out" > "$tmp/p.csv"
counts=$(csv_counts "$tmp/p.csv" | sort -u | wc -l)
if [ $rc -eq 0 ] && [ "$(wc -l < "$tmp/p.csv")" -eq 2 ] && [ "$counts" -eq 1 ] \
   && head -1 "$tmp/p.csv" | grep -q '^model,.*,step_s,samples_per_s,'; then
  ok "predict --csv: 2 lines, same column count"
else
  bad "predict --csv: 2 lines, same column count" "rc=$rc $(cat "$tmp/err") $out"
fi

"$EC" predict $P -o "$tmp/o.csv" >/dev/null 2>&1; rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l < "$tmp/o.csv")" -eq 2 ] && [ ! -e "$tmp/o.csv.tmp" ] \
   && cmp -s "$tmp/o.csv" "$tmp/p.csv"; then
  ok "predict -o writes the same CSV"
else
  bad "predict -o writes the same CSV" "rc=$rc"
fi
"$EC" predict model=bert-base gpu=t44 batch_per_gpu=16 -o "$tmp/o2.csv" >/dev/null 2>&1
if [ ! -e "$tmp/o2.csv" ] && [ ! -e "$tmp/o2.csv.tmp" ]; then ok "failed predict -o leaves no file"
else bad "failed predict -o leaves no file"; fi

# ---- validate -----------------------------------------------------------------------------
cat > "$tmp/runs.csv" <<'EOF'
id,model,gpu,batch_per_gpu,seq_len,precision,metric,value,source
r1,bert-base,t4,16,128,amp_fp16,samples_per_s,150,test
r2,bert-base,Tesla T4,32,128,fp32,samples_per_s,60,test
r3,bert-base,a100-sxm4-80gb,32,128,amp_fp16,step_time_ms,40,test
EOF
expect "validate" 0 "by GPU" -- validate "$tmp/runs.csv"
expect "validate summary by model" 0 "bert-base" -- validate "$tmp/runs.csv"
"$EC" validate "$tmp/runs.csv" -o "$tmp/v.csv" >/dev/null 2>&1; rc=$?
if [ $rc -eq 0 ] && [ "$(head -1 "$tmp/v.csv")" = "id,gpu,model,metric,predicted,p10,p90,measured,error_pct,in_p10_p90" ] \
   && [ "$(wc -l < "$tmp/v.csv")" -eq 4 ] && grep -q '^r2,t4,' "$tmp/v.csv"; then
  ok "validate -o: one row per run, GPU aliases resolved"
else
  bad "validate -o: one row per run, GPU aliases resolved" "rc=$rc $(cat "$tmp/v.csv" 2>/dev/null)"
fi

# every metric by its own name in the per-run file; out-of-memory outcomes scored as caught or
# missed, never averaged into the MAPE (a 0/1 outcome has no relative error)
cat > "$tmp/oom_runs.csv" <<'EOF'
id,model,gpu,batch_per_gpu,seq_len,precision,metric,memory_reading,value,source
m1,bert-base,t4,16,128,amp_fp16,samples_per_s,,150,test
m2,bert-base,t4,16,128,amp_fp16,peak_bytes,reserved,5000000000,test
m3,bert-base,t4,512,512,fp32,oom,,1,test
m4,bert-base,t4,8,128,fp32,oom,,0,test
m5,bert-base,t4,16,128,amp_fp16,allocated_bytes,,4000000000,test
EOF
out=$("$EC" validate "$tmp/oom_runs.csv" -o "$tmp/oom_v.csv" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q '^  all  *3 ' <<<"$out" && grep -qF "1 died, 1 predicted not to fit (caught)" <<<"$out" \
   && grep -q '^m2,t4,bert-base,reserved_bytes,' "$tmp/oom_v.csv" && grep -q '^m3,t4,bert-base,oom,1,,,1,,$' "$tmp/oom_v.csv" \
   && grep -q '^m5,t4,bert-base,allocated_bytes,' "$tmp/oom_v.csv"; then
  ok "validate: metrics by name, out-of-memory rows as caught/missed outside the MAPE"
else
  bad "validate: metrics by name, out-of-memory rows as caught/missed outside the MAPE" "rc=$rc $out $(cat "$tmp/oom_v.csv" 2>/dev/null)"
fi
# MAPE and bias per metric: one line each for samples_per_s, reserved_bytes, allocated_bytes, and
# none for the oom outcome
if grep -q '^by metric$' <<<"$out" && grep -q '^  samples_per_s  *1 ' <<<"$out" \
   && grep -q '^  reserved_bytes  *1 ' <<<"$out" && grep -q '^  allocated_bytes  *1 ' <<<"$out" \
   && ! grep -q '^  oom ' <<<"$out"; then
  ok "validate: MAPE and bias per metric"
else
  bad "validate: MAPE and bias per metric" "$out"
fi

cat > "$tmp/malformed.csv" <<'EOF'
id,model,gpu,batch_per_gpu,metric,value,source
r1,bert-base,t4,16,samples_per_s,150,test
r2,bert-base,t4,sixteen,samples_per_s,150,test
EOF
expect "malformed runs CSV names file:line" 1 "malformed.csv:3" -- validate "$tmp/malformed.csv" -o "$tmp/m.csv"
if [ ! -e "$tmp/m.csv" ] && [ ! -e "$tmp/m.csv.tmp" ]; then ok "malformed runs leave no output file"
else bad "malformed runs leave no output file"; fi

cat > "$tmp/unknown_gpu.csv" <<'EOF'
id,model,gpu,batch_per_gpu,metric,value,source
r1,bert-base,t4,16,samples_per_s,150,test
r2,bert-base,t44,16,samples_per_s,150,test
EOF
expect "unknown gpu in a run names file:line:column" 1 "unknown_gpu.csv:3:3: unknown gpu 't44'" -- validate "$tmp/unknown_gpu.csv"
cat > "$tmp/unpredictable.csv" <<'EOF'
id,model,gpu,batch_per_gpu,num_gpus,strategy,metric,value,source
r1,bert-base,t4,16,1,,samples_per_s,150,test
r2,bert-base,t4,16,4,single,samples_per_s,150,test
EOF
expect "unpredictable run names file:line" 1 "unpredictable.csv:3: " -- validate "$tmp/unpredictable.csv" -o "$tmp/u.csv"
if [ ! -e "$tmp/u.csv" ] && [ ! -e "$tmp/u.csv.tmp" ]; then ok "failed validate -o leaves no output file"
else bad "failed validate -o leaves no output file"; fi
expect "missing runs file" 1 "epochcast: " -- validate "$tmp/none.csv"

# ---- run ----------------------------------------------------------------------------------
cat > "$tmp/ok.lua" <<'EOF'
local ec = require "epochcast"
local r = assert(ec.predict { model = "bert-base", gpu = "t4", batch_per_gpu = 8 })
print(arg[0]:match("[^/]*$"), arg[1], select("#", ...), r.fits ~= nil)
EOF
expect "run passes arg and ..." 0 "ok.lua	x	2	true" -- run "$tmp/ok.lua" x y
printf 'local x = 1\nerror("boom")\n' > "$tmp/boom.lua"
expect "run reports script:line" 1 "epochcast: $tmp/boom.lua:2: boom" -- run "$tmp/boom.lua"
expect "run shows a traceback" 1 "stack traceback" -- run "$tmp/boom.lua"
expect "run missing script" 1 "epochcast: " -- run "$tmp/none.lua"
printf 'local x = \n' > "$tmp/syntax.lua"
expect "run syntax error" 1 "syntax.lua:2:" -- run "$tmp/syntax.lua"

# ---- calibrate: a profile from measured runs, used by predict --------------------------
printf 'id,model,gpu,precision,batch_per_gpu,seq_len,metric,value\nr1,bert-base,v100-sxm2-16gb,amp_fp16,32,128,samples_per_s,400\nr2,resnet50,t4,fp32,64,,samples_per_s,120\n' > "$tmp/runs.csv"
expect "calibrate writes a profile" 0 "wrote $tmp/prof.csv" -- calibrate "$tmp/runs.csv" -o "$tmp/prof.csv"
expect "predict uses the profile" 0 "step time" -- predict $P profile="$tmp/prof.csv"
[ -f "$tmp/prof.csv" ] && grep -q '^gemm_scale,' "$tmp/prof.csv" && ok "profile file has gemm_scale" || bad "profile file has gemm_scale"
expect "calibrate without -o" 2 "missing -o" -- calibrate "$tmp/runs.csv"
printf 'id,model,gpu,metric,value\nr1,bert-base,no-such-gpu,samples_per_s,3\n' > "$tmp/badruns.csv"
expect "calibrate names the bad run" 1 "no-such-gpu" -- calibrate "$tmp/badruns.csv" -o "$tmp/prof2.csv"
[ ! -e "$tmp/prof2.csv" ] && [ ! -e "$tmp/prof2.csv.tmp" ] && ok "failed calibrate leaves no profile" || bad "failed calibrate leaves no profile"
printf 'parameter,value\ngemm_scael,0.9\n' > "$tmp/badprof.csv"
expect "bad profile names file:line" 1 "badprof.csv:2:1: unknown parameter 'gemm_scael'" -- predict $P profile="$tmp/badprof.csv"

expect "calibrate prints architectures" 0 "architecture" -- calibrate "$tmp/runs.csv" -o "$tmp/prof.csv"
grep -q '^error_log_sd,' "$tmp/prof.csv" && ok "profile of two GPUs has error_log_sd" || bad "profile of two GPUs has error_log_sd"
expect "predict --profile" 0 "step time" -- predict $P --profile "$tmp/prof.csv"
expect "predict --profile needs a file" 2 "--profile needs a file name" -- predict $P --profile
expect "global --profile names a bad file" 1 "badprof.csv:2:1: unknown parameter" -- --profile "$tmp/badprof.csv" predict $P
expect "predict --trace writes a Chrome trace" 0 "step time" -- predict $P --trace "$tmp/trace.json"
if grep -q '"traceEvents"' "$tmp/trace.json" 2>/dev/null && ! ls "$tmp"/trace.json.tmp >/dev/null 2>&1; then
  ok "predict --trace: JSON file in place, no temporary left"
else
  bad "predict --trace: JSON file in place, no temporary left" "$(ls "$tmp")"
fi
expect "predict --trace to a missing folder fails" 1 "No such file or directory" -- predict $P --trace "$tmp/no/such/t.json"
expect "predict --trace needs a file" 2 "--trace needs a file name" -- predict $P --trace
expect "run --profile names a bad file" 1 "badprof.csv:2:1: unknown parameter" -- run --profile "$tmp/badprof.csv" "$tmp/ok.lua"
expect "run --profile needs a file" 2 "--profile needs a file name" -- run --profile
expect "run --help mentions --profile" 0 "--profile P" -- run --help

echo "$((n - fails)) of $n checks passed"
[ "$fails" -eq 0 ]
