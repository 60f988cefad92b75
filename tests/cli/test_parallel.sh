#!/usr/bin/env bash
# test_parallel.sh: parallel layouts (issue 18) on the command line: the bad layouts of the issue
# exit 1 with a message naming the keys and leave no -o file behind; a dp x tp x pp x cp job's CSV
# row carries the layout, tokens/s, GPU-seconds per token and the exposed communication by kind,
# with dp x tp x pp x cp = num_gpus, tokens = samples x seq_len and tokens/s x GPU-s/token =
# num_gpus; a sweep over tp lists the point that leaves the node as refused (exit 1).
#   bash tests/cli/test_parallel.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_parallel.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

L="model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=2048"

# refused NAME ARGS... -- NEEDLE...: predict -o must exit 1, name every needle, write no file.
refused() {
  local name=$1; shift
  local args=() needles=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  needles=("$@")
  local out rc
  rm -f "$tmp/out.csv"
  out=$("$EC" predict "${args[@]}" -o "$tmp/out.csv" 2>&1); rc=$?
  if [ "$rc" -ne 1 ]; then bad "$name" "exit $rc, wanted 1: $out"; return; fi
  for k in "${needles[@]}"; do
    if ! grep -qF -- "$k" <<<"$out"; then bad "$name" "message lacks '$k': $out"; return; fi
  done
  if [ -e "$tmp/out.csv" ] || ls "$tmp"/out.csv.* >/dev/null 2>&1; then bad "$name" "an output file was left"; return; fi
  ok "$name"
}

refused "a layout that does not divide num_gpus" $L num_gpus=12 tp=8 -- "num_gpus=12" "tp"
refused "pp x tp x cp that does not divide" $L num_gpus=16 tp=2 pp=3 -- "num_gpus=16" "tp" "pp" "cp"
refused "tp larger than a node" $L num_gpus=16 tp=16 -- "tp=16" "gpus_per_node"
refused "tp larger than gpus_per_node" $L num_gpus=8 tp=8 gpus_per_node=4 -- "tp=8" "gpus_per_node=4"
refused "FP8 on a GPU without FP8 tensor cores" model=llama-3.1-8b gpu=a100-sxm4-80gb precision=amp_fp8 \
  batch_per_gpu=1 -- "precision=amp_fp8" "a100-sxm4-80gb"
refused "QLoRA with tp" $L num_gpus=2 tp=2 lora_r=16 base_precision=nf4 -- "lora_r" "base_precision" "tp"
refused "QLoRA with pp" $L num_gpus=2 pp=2 lora_r=16 base_precision=int8 -- "lora_r" "base_precision" "pp"
refused "zero_reduce with ddp" $L num_gpus=8 strategy=ddp zero_reduce=all_reduce -- "key 'zero_reduce'" \
  "strategy=zero"
refused "zero_reduce with ZeRO-3" $L num_gpus=8 strategy=zero zero_stage=3 zero_reduce=all_reduce -- \
  "key 'zero_reduce'" "zero_stage=1 or 2"
refused "zero_reduce: a value not among its choices" $L num_gpus=8 strategy=zero zero_stage=2 zero_reduce=gather -- \
  "key 'zero_reduce'" "'gather' is not one of reduce_scatter, all_reduce"
# Megatron-Core's expert layout (etp): ep x etp must divide tp x cp x dp
M="model=mixtral-8x7b gpu=h100-sxm5-80gb batch_per_gpu=1 seq_len=512 precision=amp_bf16 num_gpus=8 tp=2"
refused "ep x etp that does not divide a stage's GPUs" $M sequence_parallel=1 ep=8 -- "ep=8" "etp=2" "tp x cp x dp"
refused "etp != tp without sequence parallelism" $M ep=8 etp=1 -- "etp=1" "sequence_parallel"
refused "etp of 0" $M ep=4 etp=0 -- "etp"
expect "ep spanning the tensor-parallel ranks with etp=1" 0 "(ep 8, etp 1)" -- predict $M sequence_parallel=1 ep=8 etp=1

# ---- one layout's CSV row ------------------------------------------------------------------
cat > "$tmp/check.lua" <<'LUA'
-- reads a predict --csv file; checks the layout columns and the identities; prints problems
local fields = dofile("lua/csv_fields.lua")
local f = assert(io.open(arg[1]))
local head, row = fields(f:read("l")), fields(f:read("l"))
f:close()
local v = {}
for k, name in ipairs(head) do v[name] = row[k] end
local problems = {}
local function num(name)
  local x = tonumber(v[name])
  if x == nil then problems[#problems + 1] = "no number in column " .. name end
  return x or 0
end
-- the CSV prints 6 significant digits: identities hold to 1e-5
local function close(a, b, what)
  if math.abs(a - b) > 1e-5 * math.abs(b) then problems[#problems + 1] = string.format("%s: %g vs %g", what, a, b) end
end
local n = num("num_gpus")
close(num("dp") * num("tp") * num("pp") * num("cp"), n, "dp x tp x pp x cp = num_gpus")
close(num("tokens_per_s"), num("samples_per_s") * num("seq_len"), "tokens = samples x seq_len")
close(num("tokens_per_s") * num("gpu_s_per_token"), n, "tokens/s x GPU-s/token = num_gpus")
local comm = num("straggler_s")
for _, k in ipairs { "tp_s", "cp_s", "ep_s", "dp_reduce_s", "shard_wait_s", "overlap_s", "offload_s", "pp_bubble_s",
                     "pp_p2p_s" } do
  local x = num("comm_" .. k)
  if x < 0 then problems[#problems + 1] = "comm_" .. k .. " < 0" end
  comm = comm + x
end
close(comm, num("breakdown_comm_s"), "comm parts + straggler = breakdown_comm_s")
if num("comm_tp_s") <= 0 or num("comm_pp_bubble_s") <= 0 then problems[#problems + 1] = "tp_s and pp_bubble_s > 0" end
if num("hfu_frac") < num("mfu_frac") then problems[#problems + 1] = "hfu < mfu" end
io.write(table.concat(problems, "; "))
LUA
out=$("$EC" predict $L num_gpus=32 tp=4 pp=2 cp=2 grad_accum=2 strategy=fsdp -o "$tmp/row.csv" 2>&1); rc=$?
if [ "$rc" -ne 0 ]; then
  bad "a dp x tp x pp x cp job predicts" "exit $rc: $out"
else
  problems=$(lua5.4 "$tmp/check.lua" "$tmp/row.csv")
  if [ -n "$problems" ]; then bad "the CSV row's layout and identities" "$problems"; else ok "the CSV row's layout and identities"; fi
fi

# ---- a sweep over tp: the point beyond the node is refused, the sweep exits 1 ---------------
out=$("$EC" sweep $L num_gpus=16 tp=1,2,4,8,16 2>&1); rc=$?
if [ "$rc" -ne 1 ]; then bad "sweep over tp exits 1 with a refused point" "exit $rc: $out"
elif ! grep -qF "tp=16 exceeds gpus_per_node=8" <<<"$out"; then bad "sweep names the refused tp" "$out"
elif [ "$(grep -cE '^(1|2|4|8) +[0-9]' <<<"$out")" -ne 4 ]; then bad "sweep predicts tp=1,2,4,8" "$out"
else ok "sweep over tp: 4 points, tp=16 refused naming gpus_per_node"; fi

# ---- the text report: layout, tokens/s, the comm parts adding up to comm, the stage table --------
out=$("$EC" predict $L num_gpus=16 tp=4 pp=2 grad_accum=4 strategy=fsdp 2>&1); rc=$?
if [ "$rc" -ne 0 ]; then bad "text report of a tp x pp job" "exit $rc: $out"
elif ! grep -qE '^  layout +dp 2 x tp 4 x pp 2 x cp 1' <<<"$out"; then bad "text report names the layout" "$out"
elif ! grep -qE '^  tokens/s +[0-9]' <<<"$out"; then bad "text report gives tokens/s" "$out"
elif [ "$(sed -n '/^pipeline stages/,$p' <<<"$out" | grep -cE '^  [0-9]+ +[0-9]+-[0-9]+ ')" -ne 2 ]; then
  bad "text report lists the 2 pipeline stages" "$out"
else
  # the indented parts under "comm" (ms, 3 decimals each: 0.0005 rounding apiece) add up to it
  check=$(awk '/^  comm /{c=$2; on=1; next} on && /^    /{s+=$NF; n++; next} on{on=0}
               END{d=s-c; if (d<0) d=-d; if (n<2 || d>0.0005*(n+1)) print "parts " s " (" n ") vs comm " c}' <<<"$out")
  if [ -n "$check" ]; then bad "text report: comm parts add up" "$check"; else ok "text report: layout, tokens/s, comm parts, stages"; fi
fi

echo "$((n - fails)) of $n checks passed"
[ "$fails" -eq 0 ]
