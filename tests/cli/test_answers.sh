#!/usr/bin/env bash
# test_answers.sh: what issue 21 asked the command line to answer -- plan (cheapest under a
# deadline, Pareto front as CSV and PNG), compare, max-batch, validate's p10-p90 coverage, the
# resolved values in CSV, and the cases that used to pass silently.  Every check here fails on
# the behaviour before issue 21.
#   bash tests/cli/test_answers.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_answers.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
# column NAME of row 2 of the CSV on stdin (RFC 4180 quoting), through lua5.4
cat > "$tmp/col.lua" <<'LUA'
local want = arg[1]
local fields = dofile("lua/csv_fields.lua")
local head, row = fields(io.read("l")), fields(io.read("l"))
for k, name in ipairs(head) do if name == want then print(row[k]) end end
LUA
col() { lua5.4 "$tmp/col.lua" "$1"; }

# ---- plan -----------------------------------------------------------------------------------
expect "plan --help" 0 "usage: epochcast plan" -- plan --help
expect "--help lists plan, compare, max-batch" 0 "max-batch" -- --help
PLAN="model=bert-base gpu=t4,a10,a100-sxm4-80gb,h100-sxm5-80gb num_gpus=1,2,4,8 dataset_samples=1000000 epochs=3"
out=$(cd "$tmp" && "$EC" plan $PLAN deadline_h=10 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -qF "chosen (cheapest meeting every constraint):" <<<"$out" \
   && grep -qF "Pareto front of run time against cost" <<<"$out" && [ -s "$tmp/plan.csv" ]; then
  ok "plan: the cheapest configuration meeting the deadline, the front, plan.csv"
else
  bad "plan: the cheapest configuration meeting the deadline, the front, plan.csv" "exit $rc: $out"
fi
if command -v gnuplot >/dev/null; then
  [ -s "$tmp/plan.png" ] && ok "plan: plan.png drawn" || bad "plan: plan.png drawn" "$(ls "$tmp")"
fi
# the chosen row meets the deadline and no point that meets it is cheaper
cat > "$tmp/best.lua" <<'LUA'
local fields = dofile("lua/csv_fields.lua")
local it = io.lines(arg[1])
local idx = {}
for i, h in ipairs(fields(it())) do idx[h] = i end
local best, cheapest = nil, math.huge
for line in it do
  local f = fields(line)
  if f[idx.verdict] == "meets" then
    local c = tonumber(f[idx.cost_run])
    if c < cheapest then cheapest = c end
    if f[idx.best] == "1" then best = f end
  end
end
assert(best, "no best row")
assert(tonumber(best[idx.run_s]) <= 36000, "best misses the deadline")
assert(tonumber(best[idx.cost_run]) == cheapest, "a cheaper point meets the deadline")
LUA
lua5.4 "$tmp/best.lua" "$tmp/plan.csv" && ok "plan.csv: the chosen point is the cheapest that meets the deadline" \
  || bad "plan.csv: the chosen point is the cheapest that meets the deadline"
expect "plan: no configuration meets an impossible deadline (exit 1)" 1 "no configuration meets every constraint" \
  -- plan $PLAN deadline_h=0.01 -o "$tmp/p2.csv" --no-plot
expect "plan: a point without a price says so" 1 "no price for 2 x a10" \
  -- plan $PLAN deadline_h=0.01 -o "$tmp/p3.csv" --no-plot
expect "plan: price_per_gpu_hour prices every GPU" 0 "price_per_gpu_hour USD 1 x" \
  -- plan model=bert-base gpu=t4,a10 dataset_samples=100000 price_per_gpu_hour=1 -o "$tmp/p4.csv" --no-plot
expect "plan needs the run's length" 1 "a plan needs the run's length" \
  -- plan model=bert-base gpu=t4,a10 batch_per_gpu=8 -o "$tmp/p5.csv" --no-plot
expect "plan: unknown plan key suggests" 1 "unknown key 'deadline_hours'" \
  -- plan $PLAN deadline_hours=3 --no-plot
expect "plan: bad deadline names the key" 1 "plan key 'deadline_h'" -- plan $PLAN deadline_h=-3 --no-plot
expect "plan: max_gpus" 0 "too_many_gpus" -- plan $PLAN max_gpus=2 -o "$tmp/p6.csv" --no-plot
expect "plan: global_batch holds the training fixed" 0 "accum" \
  -- plan $PLAN global_batch=256 -o "$tmp/p7.csv" --no-plot
expect "plan: an unknown provider suggests one" 1 "no offer from 'lamda'" \
  -- plan $PLAN provider=lamda --no-plot -o "$tmp/p8.csv"

# ---- compare and max-batch ----------------------------------------------------------------------
expect "compare: B changes A" 0 "precision: fp32 -> amp_fp16" \
  -- compare model=bert-base gpu=t4 batch_per_gpu=32 -- precision=amp_fp16
expect "compare: speedup" 0 "speedup (samples/s, B over A)" \
  -- compare model=bert-base gpu=t4 batch_per_gpu=32 -- precision=amp_fp16
expect "compare: a derived default is no change" 0 "changed (B against A): nothing" \
  -- compare model=bert-base gpu=t4 num_gpus=2 batch_per_gpu=8 -- strategy=ddp
expect "compare without --" 2 "then --" -- compare model=bert-base gpu=t4 batch_per_gpu=8
# each side's step p10-p90 (ms) is the interval predict --csv gives that configuration
band() { "$EC" predict model=bert-base batch_per_gpu=8 gpu="$1" --csv 2>/dev/null |
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "step_p10_s") a = i; if ($i == "step_p90_s") b = i } }
           NR == 2 { printf "%.4g-%.4g\n", $a * 1e3, $b * 1e3 }'; }
got=$("$EC" compare model=bert-base gpu=t4 batch_per_gpu=8 -- gpu=h100-sxm5-80gb 2>&1 | awk '/step p10-p90/ { print $4, $5 }')
want="$(band t4) $(band h100-sxm5-80gb)"
[ "$got" = "$want" ] && ok "compare: each side's step p10-p90 ($got)" || bad "compare: step p10-p90" "'$got' vs '$want'"
expect "compare: B's error is named" 1 "B: unknown gpu" -- compare model=bert-base gpu=t4 batch_per_gpu=8 -- gpu=t44
out=$("$EC" compare model=bert-base gpu=t4 batch_per_gpu=8 -- gpu=a10 --csv 2>&1)
[ "$(printf '%s\n' "$out" | wc -l)" -eq 3 ] && ok "compare --csv: header and two rows" || bad "compare --csv: header and two rows" "$out"
expect "max-batch" 0 "max batch_per_gpu" -- max-batch model=bert-base gpu=t4 seq_len=128
mb=$("$EC" max-batch model=bert-base gpu=t4 seq_len=128 --csv | tail -1 | cut -d, -f1)
lmb=$(lua5.4 -e 'local ec=require "epochcast"; print(ec.max_batch{model="bert-base", gpu="t4", seq_len=128})' 2>/dev/null)
if [ -n "$mb" ] && { [ -z "$lmb" ] || [ "$mb" = "$lmb" ]; }; then ok "max-batch answers what ec.max_batch answers ($mb)"
else bad "max-batch answers what ec.max_batch answers" "cli $mb lua $lmb"; fi
expect "max-batch --limit" 0 "(the --limit)" -- max-batch model=bert-base gpu=a100-sxm4-80gb --limit 8
expect "max-batch: nothing fits" 0 "not even batch_per_gpu 1 fits" -- max-batch model=gpt2-medium gpu=t4 seq_len=16384

# ---- resolved values in CSV (a DDP row said strategy=single) -----------------------------------
r=$("$EC" predict model=bert-base gpu=t4 num_gpus=2 batch_per_gpu=8 --csv)
[ "$(col strategy <<<"$r")" = ddp ] && ok "predict --csv: strategy as simulated (ddp)" || bad "predict --csv: strategy as simulated (ddp)" "$(col strategy <<<"$r")"
[ "$(col task <<<"$r")" = classify ] && [ "$(col seq_len <<<"$r")" = 128 ] && [ "$(col topology <<<"$r")" = pcie-switch ] \
  && ok "predict --csv: task, seq_len and topology filled in" || bad "predict --csv: task, seq_len and topology filled in" "$r"
r=$("$EC" sweep model=bert-base gpu=t4 num_gpus=2,4 batch_per_gpu=8 --csv)
[ "$(col strategy <<<"$r")" = ddp ] && ok "sweep --csv: strategy as simulated" || bad "sweep --csv: strategy as simulated" "$r"
r=$("$EC" predict model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=32 dataset_samples=100000 --csv)
c=$(col cost_per_epoch <<<"$r")
[ -n "$c" ] && [ "$c" != 0 ] && ok "predict --csv: cost_per_epoch ($c)" || bad "predict --csv: cost_per_epoch" "$r"

# ---- silent cases -------------------------------------------------------------------------------
expect "malformed lengths spec is a syntax error" 1 "expected one ')'" \
  -- predict model=bert-base gpu=t4 batch_per_gpu=8 padding=dynamic "lengths=lognormal(60,0.7"
expect "gpu=A100 lists the A100 SKUs" 1 "a100-pcie-40gb, a100-sxm4-40gb, a100-sxm4-80gb, a100-pcie-80gb" \
  -- predict model=bert-base gpu=A100 batch_per_gpu=8
expect "gpu=h100 resolves" 0 "h100-sxm5-80gb" -- predict model=bert-base gpu=h100 batch_per_gpu=8
expect "lengths= without dynamic padding warns" 0 "padded to seq_len" \
  -- predict model=bert-base gpu=t4 batch_per_gpu=8 "lengths=lognormal(60,0.7)"
expect "keys with no effect are named" 0 "epochs (needs dataset_samples)" -- predict model=bert-base gpu=t4 batch_per_gpu=8 epochs=3
expect "the loader is named when the GPU waits on it" 0 "input" \
  -- predict gpu=rtx4090 host=workstation batch_per_gpu=1 gpu_step_s=0.05 sample_cpu_s=0.2 num_workers=4 pin_memory=1 dataset_samples=25 epochs=200
expect "a precision the GPU refuses" 1 "gpu 'mi300x' refuses precision=tf32" -- predict model=bert-base gpu=mi300x batch_per_gpu=8 precision=tf32
printf 'id,model,gpu,batch_per_gpu,metric,value,source\nr1,bert-base,t4,16,epoch_time_s,2700,test\n' > "$tmp/epoch.csv"
expect "epoch_time_s without dataset_samples names file:line:col" 1 "epoch.csv:2:5: metric epoch_time_s needs dataset_samples" \
  -- validate "$tmp/epoch.csv"
printf 'id,model,gpu,batch_per_gpu,metric,value,source\nr1,bert-base,t4,16,samples_per_s,150,test\nr2,bert-base,t4,32,step_time_ms,300,test\n' > "$tmp/runs.csv"
expect "validate reports the p10-p90 coverage" 0 "p10-p90%" -- validate "$tmp/runs.csv"

echo "$((n - fails)) of $n checks passed"
[ "$fails" -eq 0 ]
