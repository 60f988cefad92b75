#!/usr/bin/env bash
# test_sac.sh: checkpointing=selective_op (torchtitan's per-op selective activation checkpointing)
# through the CLI: on Llama 3.2 1B its backward (the recompute of the ops it does not keep) and
# its activations lie strictly between checkpointing=0's and =1's; on a network without a matmul
# in a checkpointed layer (ResNet-50) it is refused, non-zero, with the key named and no output.
#   bash tests/cli/test_sac.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_sac.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
run() {
  "$EC" predict model=llama-3.2-1b gpu=a100-sxm4-80gb seq_len=2048 batch_per_gpu=2 precision=amp_bf16 \
    attention=flash2 checkpointing="$1" --csv 2>/dev/null
}
r0=$(run 0) r1=$(run 1) rop=$(run selective_op)
for k in breakdown_backward_s memory_activations_bytes; do
  a=$(col $k "$r0") b=$(col $k "$rop") c=$(col $k "$r1")
  if awk -v a="$a" -v b="$b" -v c="$c" -v k=$k 'BEGIN {
        if (k == "breakdown_backward_s") exit !(a < b && b < c); else exit !(c < b && b < a) }'; then
    ok "selective_op: $k between checkpointing=0 and 1 ($a / $b / $c)"
  else
    bad "selective_op: $k between checkpointing=0 and 1" "0: $a  selective_op: $b  1: $c"
  fi
done
out=$("$EC" predict model=resnet50 gpu=a100-sxm4-80gb batch_per_gpu=32 checkpointing=selective_op \
  -o "$tmp/out.csv" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "checkpointing=selective_op" <<<"$out" && grep -q resnet50 <<<"$out" &&
   [ ! -e "$tmp/out.csv" ]; then
  ok "selective_op on resnet50: refused, key named, no output"
else
  bad "selective_op on resnet50: refused, key named, no output" "rc=$rc: $out"
fi
echo "$((n - fails))/$n passed"
[ $fails -eq 0 ]
