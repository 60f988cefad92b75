#!/usr/bin/env bash
# test_causal_mask_tensor.sh: causal_mask_tensor=1 says SDPA gets the causal mask as a tensor though
# no token is padded (Hugging Face transformers under torch.compile: masking_utils'
# _ignore_causal_mask_sdpa returns False while Dynamo traces).  SDPA then reads every key block
# instead of skipping those above the diagonal, and its flash backend is not eligible (it takes no
# attn_mask): a long causal step is slower with it, on a B200 at torch 2.13 (cuDNN, which takes a
# mask) and on an A100 at torch 2.4 (flash -> memory-efficient).  A batch that already carries a
# padding mask (lengths=) runs the same with and without it.
#   bash tests/cli/test_causal_mask_tensor.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_causal_mask_tensor.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"

step() { # shellcheck disable=SC2086
  "$EC" predict model=llama-3.1-8b batch_per_gpu=1 precision=bf16 compile=1 "$@" 2>/dev/null |
    awk '/step time/ { print $3; exit }'; }
b200="gpu=b200 seq_len=8192 torch_version=2.13 checkpointing=1 optimizer=none"
a100="gpu=a100-sxm4-80gb seq_len=4096 torch_version=2.4"
# shellcheck disable=SC2086
b0=$(step $b200) b1=$(step $b200 causal_mask_tensor=1)
# shellcheck disable=SC2086
a0=$(step $a100) a1=$(step $a100 causal_mask_tensor=1)
# shellcheck disable=SC2086
p0=$(step $a100 "lengths=fixed(2000)") p1=$(step $a100 "lengths=fixed(2000)" causal_mask_tensor=1)
slower() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { exit !(a > 0 && b > a * 1.02) }'; }
check "B200, torch 2.13: every key block with the mask (${b0:-?} -> ${b1:-?} ms)" "slower '$b0' '$b1'"
check "A100, torch 2.4: no flash with the mask (${a0:-?} -> ${a1:-?} ms)" "slower '$a0' '$a1'"
check "padding mask already there: no change (${p0:-?} vs ${p1:-?} ms)" '[ -n "$p0" ] && [ "$p0" = "$p1" ]'

echo "test_causal_mask_tensor: $((n - fails))/$n passed"
[ "$fails" -eq 0 ]
