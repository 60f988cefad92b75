#!/usr/bin/env bash
# run_matrix.sh: the GPU-session matrix of issue 6, in order: predict first (with a profile
# not fitted to these runs), then the probe, then the real runs, then validate.
#   bash bench/harness/run_matrix.sh OUT_DIR [--dry-run]
# Needs a CUDA GPU, PyTorch (+ torchvision; transformers optional) and a build with
# epochcast-probe (cmake finds nvcc).  Every command is echoed before it runs and appended
# to OUT_DIR/commands.txt, so the results committed under bench/results/ carry them.
set -euo pipefail
out=${1:?usage: run_matrix.sh OUT_DIR [--dry-run]}
dry=${2:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
ec=$here/build/epochcast
probe=$here/build/bench/epochcast-probe
train="python3 $here/bench/harness/train.py"
mkdir -p "$out"
run() { echo "+ $*" | tee -a "$out/commands.txt"; [ "$dry" = --dry-run ] || eval "$@"; }

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || echo "NVIDIA A100-SXM4-80GB")

# 1. The configurations, as key=value words (DESIGN section 2).
configs=(
  # BERT-base SQuAD, seq 384: batch and precision sweep
  "model=bert-base task=squad seq_len=384 precision=fp32 batch_per_gpu=8"
  "model=bert-base task=squad seq_len=384 precision=tf32 batch_per_gpu=16"
  "model=bert-base task=squad seq_len=384 precision=amp_fp16 batch_per_gpu=16"
  "model=bert-base task=squad seq_len=384 precision=amp_fp16 batch_per_gpu=32"
  "model=bert-base task=squad seq_len=384 precision=amp_bf16 batch_per_gpu=32"
  # BERT-base classify, seq 128, small batch: CPU-dispatch bound
  "model=bert-base task=classify seq_len=128 precision=amp_fp16 batch_per_gpu=2"
  # ResNet-50: batch and precision, synthetic data
  "model=resnet50 precision=fp32 batch_per_gpu=64 data=synthetic"
  "model=resnet50 precision=amp_fp16 batch_per_gpu=64 data=synthetic"
  "model=resnet50 precision=amp_fp16 batch_per_gpu=256 data=synthetic"
  "model=resnet50 precision=amp_bf16 batch_per_gpu=256 data=synthetic"
  # DataLoader-bound: per-sample CPU work with 0, then 8 workers (pinned)
  "model=resnet50 precision=amp_fp16 batch_per_gpu=256 data=real num_workers=0"
  "model=resnet50 precision=amp_fp16 batch_per_gpu=256 data=real num_workers=8 pin_memory=1"
  # memory limit: the largest batch epochcast says fits, then twice that (expect OOM)
  "model=bert-large task=squad seq_len=384 precision=amp_fp16 batch_per_gpu=MAXB"
)

# 2. Predict first, with the shipped profile (fitted on public runs, not on these).
maxb=$("$ec" run - <<LUA
local ec = require "epochcast"
print(ec.max_batch { model = "bert-large", task = "squad", seq_len = 384, precision = "amp_fp16", gpu = "$gpu", batch_per_gpu = 1 })
LUA
)
for c in "${configs[@]}"; do
  c=${c/MAXB/$maxb}
  run "'$ec' predict $c gpu='$gpu' --csv >> '$out/predicted.csv.part'"
done
[ "$dry" = --dry-run ] || awk 'NR == 1 || !/^model,/' "$out/predicted.csv.part" > "$out/predicted.csv"

# 3. The probe: a profile row of this GPU, the GEMM curve, transfers and launch latency.
run "'$probe' -o '$out'"

# 4. The real runs (200 timed steps after 20 warm-up steps).
for c in "${configs[@]}"; do
  c=${c/MAXB/$maxb}
  run "$train $c --steps 200 --warmup 20 --out '$out/runs.csv' || echo 'run failed (OOM is expected past max_batch)'"
done
run "$train model=bert-large task=squad seq_len=384 precision=amp_fp16 batch_per_gpu=$((2 * maxb)) --steps 20 --out '$out/runs.csv' || echo 'OOM as predicted'"
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
  run "torchrun --nproc_per_node 2 $here/bench/harness/train.py model=resnet50 precision=amp_fp16 batch_per_gpu=128 data=synthetic num_gpus=2 strategy=ddp --out '$out/runs.csv'"
  run "$train model=resnet50 precision=amp_fp16 batch_per_gpu=128 data=synthetic num_gpus=2 strategy=dp --out '$out/runs.csv'"
fi

# 5. Predicted against measured: time (validate) and memory (the sidecar vs predict --csv).
run "'$ec' validate '$out/runs.csv' -o '$out/validate.csv' | tee '$out/validate.txt'"
