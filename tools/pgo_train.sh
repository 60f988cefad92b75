#!/usr/bin/env bash
# pgo_train.sh BUILD_DIR: the training run of a profile-guided build (CMakeLists.txt, EC_PGO).
# BUILD_DIR was built with -DEC_PGO=GENERATE; its programs count where the library's code goes
# as they run this workload, and EC_PGO=USE then lays the library out by those counts.
# The workload is what users run, not the speed bench's loops: bench/predictions_digest.lua
# (2,240 predictions: 8 networks x 5 GPUs x 8 batch sizes x 7 layouts and input pipelines,
# caches hit and missed), a layout search, a CSV sweep on two threads and scenarios/sweep.lua
# (ec.sweep's full rows, each point's resolved config): about a second.
set -euo pipefail
b=${1:?usage: tools/pgo_train.sh BUILD_DIR}
dir=$(cd "$b" 2>/dev/null && pwd) || dir=$b # as given, before the cd to the repository
cli=$dir/epochcast
[ -x "$cli" ] || { echo "pgo_train.sh: $b/epochcast is missing (build $b with -DEC_PGO=GENERATE first)" >&2; exit 2; }
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for _ in 1 2 3; do
  "$cli" run bench/predictions_digest.lua > /dev/null
done
"$cli" optimize model=llama-3.1-70b gpu=h100-sxm5-80gb num_gpus=64 seq_len=8192 global_batch_tokens=4194304 > /dev/null
"$cli" sweep model=bert-large,resnet50,llama-3.1-8b gpu=t4,a100-sxm4-80gb,h100-sxm5-80gb,l4 \
  batch_per_gpu=1,2,4,8,16,32 num_workers=0,8 precision=amp_fp16 --csv --threads 2 > /dev/null
"$cli" run scenarios/sweep.lua "$tmp" > /dev/null
