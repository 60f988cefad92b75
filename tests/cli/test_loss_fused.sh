#!/usr/bin/env bash
# test_loss_fused.sh: loss=fused_cross_entropy prices a causal LM's loss as one xentropy kernel
# on the 16-bit logits (apex / flash-attn, as flash-attention's GPT training runs it): a GPT-2
# step is faster than with HF's shifted fp32 cross entropy; on a head that is not a causal LM
# the key is reported as having no effect; a misspelled value is refused with the values listed.
#   bash tests/cli/test_loss_fused.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_loss_fused.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"

gpt="model=gpt2 gpu=a100-sxm4-80gb batch_per_gpu=8 seq_len=1024 precision=amp_bf16"
# shellcheck disable=SC2086
expect "misspelled value: refused, values listed" 1 "fused_cross_entropy" -- predict $gpt loss=fused_xent
# shellcheck disable=SC2086
expect "bert-base classify: no effect, said" 0 "loss=fused_cross_entropy (a causal LM head only)" -- \
  predict model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=8 loss=fused_cross_entropy
step() { # shellcheck disable=SC2086
  "$EC" predict $gpt "$@" 2>/dev/null | awk '/step time/ { print $3; exit }'; }
hf_s=$(step) fused_s=$(step loss=fused_cross_entropy)
check "fused cross entropy faster than HF's (${fused_s:-?} vs ${hf_s:-?} ms)" \
  "awk -v a=${fused_s:-0} -v b=${hf_s:-0} 'BEGIN { exit !(a > 0 && a < b) }'"

echo "test_loss_fused: $((n - fails))/$n passed"
[ "$fails" -eq 0 ]
