#!/usr/bin/env bash
# test_paged_evicted.sh: a paged optimizer whose states do not fit beside PyTorch's reserved
# memory is migrated over PCIe every step (unified memory eviction, bitsandbytes prefetch_state),
# which the step time does not price: the prediction says so, with the evicted GiB and the least
# time at the link's pinned rate.  Llama 3.1 8B full fine-tune with PagedAdamW8bit and
# checkpointing at batch 2 x 2048 (torchtune's README row) on a 24 GB RTX 4090 evicts; on an
# 80 GB A100 nothing is evicted and nothing is said; a non-paged optimizer is not concerned.
#   bash tests/cli/test_paged_evicted.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_paged_evicted.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"

run="model=llama-3.1-8b precision=bf16 batch_per_gpu=2 seq_len=2048 checkpointing=1 compile=1 optimizer_in_bwd=1"
# shellcheck disable=SC2086
expect "RTX 4090: paged states evicted, said" 0 "GiB of states do not fit beside PyTorch's reserved memory" -- \
  predict $run gpu=rtx4090 optimizer=paged_adamw_8bit
# shellcheck disable=SC2086
expect "RTX 4090: the least time at the pinned rate" 0 "s a step at the link's pinned rate, not in the step time" -- \
  predict $run gpu=rtx4090 optimizer=paged_adamw_8bit
said() { # shellcheck disable=SC2086
  "$EC" predict $run "$@" 2>&1 | grep -c "do not fit beside PyTorch's reserved memory"; }
a100=$(said gpu=a100-sxm4-80gb optimizer=paged_adamw_8bit)
check "A100 80GB: the states fit, nothing said (${a100:-?})" '[ "${a100:-1}" = 0 ]'
plain=$(said gpu=a100-sxm4-80gb optimizer=adamw_8bit)
check "non-paged 8-bit AdamW: nothing said (${plain:-?})" '[ "${plain:-1}" = 0 ]'

echo "test_paged_evicted: $((n - fails))/$n passed"
[ "$fails" -eq 0 ]
