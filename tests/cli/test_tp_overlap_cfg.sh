#!/usr/bin/env bash
# test_tp_overlap_cfg.sh: tp_overlap_cfg names Transformer Engine's userbuffers configuration of
# tp_comm_overlap=1 (a row of models/tp_overlap.csv).  An unknown id is refused with the key named
# and the ids listed; without tp_comm_overlap the key is reported as having no effect; two
# configurations that give the row-parallel GEMMs different SMs predict different steps, and unset
# predicts as h100_h8192_tp4_mbs1_seqlen8192 (the default).
#   bash tests/cli/test_tp_overlap_cfg.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_tp_overlap_cfg.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"

base="model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=8 tp=2 sequence_parallel=1 kernels=te batch_per_gpu=1
      seq_len=4096 precision=amp_bf16"
# shellcheck disable=SC2086
expect "unknown id: refused, key named, ids listed" 1 "key 'tp_overlap_cfg': unknown configuration 'nope'" -- \
  predict $base tp_comm_overlap=1 tp_overlap_cfg=nope
# shellcheck disable=SC2086
expect "unknown id: the ids listed" 1 "te_defaults" -- predict $base tp_comm_overlap=1 tp_overlap_cfg=nope
# shellcheck disable=SC2086
expect "without tp_comm_overlap: no effect, said" 0 "tp_overlap_cfg (tp_comm_overlap=1 only)" -- \
  predict $base tp_overlap_cfg=te_defaults
step() { # shellcheck disable=SC2086
  "$EC" predict $base tp_comm_overlap=1 "$@" 2>/dev/null | awk '/step time/ { print $3; exit }'; }
unset_s=$(step) def_s=$(step tp_overlap_cfg=h100_h8192_tp4_mbs1_seqlen8192) te_s=$(step tp_overlap_cfg=te_defaults)
check "unset = h100_h8192_tp4_mbs1_seqlen8192 (${unset_s:-?} vs ${def_s:-?} ms)" '[ -n "$unset_s" ] && [ "$unset_s" = "$def_s" ]'
check "te_defaults (no SM margin) faster than 24/16 SMs given up (${te_s:-?} vs ${def_s:-?} ms)" \
  "awk -v a=${te_s:-0} -v b=${def_s:-0} 'BEGIN { exit !(a > 0 && a < b) }'"

echo "test_tp_overlap_cfg: $((n - fails))/$n passed"
[ "$fails" -eq 0 ]
