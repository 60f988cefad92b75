#!/usr/bin/env bash
# test_nccl_scale.sh: data-parallel gradient all-reduces at scale take NCCL's algorithm choice
# (models/nccl_tuning.csv, from NVIDIA/nccl src/graph/tuning.cc).  BERT-large pretraining under
# DDP on 64 and 512 A100 or H100 (8 per node, the reference system's network): at 512 GPUs the
# exposed gradient reduction stays within 3x that of 64 GPUs and the step within 20% (the tree's
# latency grows with log2 of the nodes; the ring-only pricing made it 30-75x and the step 3.2-4.6x), and
# the trace names the algorithm of each bucket: tree across 64 nodes, ring on one node.
#   bash tests/cli/test_nccl_scale.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_nccl_scale.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

# GPU N -> "exposed-gradient-reduce-s step-s" of the prediction (the Lua API: --csv quotes cells).
cat > "$tmp/p.lua" <<'LUA'
local ec = require "epochcast"
local r = assert(ec.predict{ model = "bert-large", task = "pretrain", gpu = arg[1], num_gpus = tonumber(arg[2]),
                             batch_per_gpu = 8, seq_len = 512, precision = "amp_fp16" })
print(string.format("%.9g %.9g", r.comm.dp_reduce_s, r.step_s))
LUA
for gpu in a100-sxm4-80gb h100-sxm5-80gb; do
  read -r r64 s64 < <("$EC" run "$tmp/p.lua" $gpu 64 2>/dev/null)
  read -r r512 s512 < <("$EC" run "$tmp/p.lua" $gpu 512 2>/dev/null)
  check "$gpu: exposed gradient reduce at 512 GPUs within 3x of 64 GPUs (${r512:-?} s vs ${r64:-?} s)" \
    "awk -v a=${r64:-0} -v b=${r512:-0} 'BEGIN { exit !(a > 0 && b < 3 * a) }'"
  check "$gpu: step at 512 GPUs within 20% of 64 GPUs (${s512:-?} s vs ${s64:-?} s)" \
    "awk -v a=${s64:-0} -v b=${s512:-0} 'BEGIN { exit !(a > 0 && b < 1.2 * a) }'"
done

"$EC" predict model=bert-large task=pretrain gpu=h100-sxm5-80gb num_gpus=512 batch_per_gpu=8 seq_len=512 \
  precision=amp_fp16 --trace "$tmp/big.json" > /dev/null 2>&1
"$EC" predict model=bert-large task=pretrain gpu=h100-sxm5-80gb num_gpus=8 batch_per_gpu=8 seq_len=512 \
  precision=amp_fp16 --trace "$tmp/one.json" > /dev/null 2>&1
check "trace: buckets across 64 nodes run as tree" 'grep -q "\"algorithm\":\"tree\"" "$tmp/big.json"'
check "trace: buckets on one node run as ring" \
  'grep -q "\"algorithm\":\"ring\"" "$tmp/one.json" && ! grep -q "\"algorithm\":\"tree\"" "$tmp/one.json"'

echo "test_nccl_scale: $((n - fails))/$n passed"
[ "$fails" -eq 0 ]
