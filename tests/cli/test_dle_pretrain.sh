#!/usr/bin/env bash
# test_dle_pretrain.sh: NVIDIA DeepLearningExamples BERT pre-training rows of
# bench/data/calibration_dle.csv described as run_pretraining.py ran them (tools/data/make_dle_runs.py):
# the README tables' accumulation steps are the rows' grad_accum (one LAMB step and one all-reduce per
# accumulated batch), and a median of tables that ran differently (accumulation, memory format, PyTorch release) is split
# into one row per table, each with its README value; Lambda's RTX A4000 systems filed under
# RTX 3090 and the 2021 phase-2 rows on LDDL's binned data are left out; the 2019-2020 rows run the MLM head on every position (mlm_all_positions);
# the SQuAD rows clip gradients (max_grad_norm=1); Lambda's RTX 2080 Ti BERT-large "fp16" multi-GPU rows (one
# GPU in fp32) are left out, and three RTX 3090 SQuAD rows count the steps they ran, not max_steps.
#   bash tests/cli/test_dle_pretrain.sh path/to/epochcast      (run from tests/, as ctest does)
set -u
EC=${1:?usage: test_dle_pretrain.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
CAL="$(dirname "$0")/../../bench/data/calibration_dle.csv"

# col ID NAME: the value of column NAME in the row ID of calibration_dle.csv
col() {
  awk -F, -v id="$1" -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
                                  $1 == id { print $c }' "$CAL"
}
# README.md@78ec6802 line 923: 1 V100-32GB, seq 512, "32768 and 32768 | 16384 and 8192"
check "20.06 DGX-1 1x fp16 seq512: 8192 accumulation steps" \
  '[ "$(col v100-sxm2-32gb-bert-large-pretrain-1x-amp_fp16-b4-142 grad_accum)" = 8192 ]'
# README.md@78ec6802 line 852: 1 A100-40GB, seq 128, "65232 and 65536 | 1208 and 1024"
check "20.06 DGX A100 1x tf32 seq128: 1208 accumulation steps" \
  '[ "$(col a100-sxm4-40gb-bert-large-pretrain-1x-tf32-b54-88 grad_accum)" = 1208 ]'
# README.md@729963dd line 851: 8 V100-32GB (21.11), seq 128, "4096 and 4096 | 128 and 64"
check "21.11 DGX-1 8x fp16 seq128: 64 accumulation steps" \
  '[ "$(col v100-sxm2-32gb-bert-large-pretrain-8x-amp_fp16-b64-157 grad_accum)" = 64 ]'
# README.md@78ec6802: the 20.06 DGX-1 table (line 948; 8 GPUs, seq 512: 263 seq/s, 1024 accumulation steps)
# and the 19.07 multi-node table (line 962; 1 node: 195.93 seq/s) were one median (229.47); the 19.07 table
# states no accumulation, its commit's configurations.yml (@6fe463fe bert--DGX1_1x8x4x1024: BATCHSIZE 4096,
# GRADIENT_STEPS 1024) and run.sub (--allreduce_post_accumulation) say how it ran; the two containers ran
# PyTorch 1.6 and 1.2
check "20.06 / 19.07 median split: no median row left" \
  '[ -z "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134 value)" ]'
check "20.06 part: its value and 1024 accumulation steps" \
  '[ "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134-L948 value)" = 263.0 ] &&
   [ "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134-L948 grad_accum)" = 1024 ]'
check "19.07 part: its value, configurations.yml's 1024 accumulation steps, one all-reduce after them" \
  '[ "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134-L962 value)" = 195.93 ] &&
   [ "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134-L962 grad_accum)" = 1024 ] &&
   [ "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134-L962 grad_buckets)" = 1 ] &&
   [ "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134-L962 torch_version)" = 1.2 ] &&
   [ "$(col v100-sxm2-16gb-bert-large-pretrain-8x-amp_fp16-b4-134-L948 torch_version)" = 1.6 ]'
# ConvNets resnet50v1.5/README.md@46ff3707 (pytorch-20.06) benchmark commands: --amp, no --memory-format
# (NCHW); @729963dd (pytorch-21.03): --memory-format nhwc
check "2020 ResNet-50 AMP table ran NCHW, 2021 channels_last" \
  '[ -z "$(col a100-sxm4-40gb-resnet50-imagenet-1x-amp_fp16-b256-280 memory_format)" ] &&
   [ "$(col a100-sxm4-80gb-resnet50-imagenet-1x-amp_fp16-b256-292 memory_format)" = channels_last ]'
check "NCHW / NHWC ResNet-50 median split" \
  '[ "$(col v100-sxm2-16gb-resnet50-imagenet-1x-amp_fp16-b256-338-L584 value)" = 856.52 ] &&
   [ -z "$(col v100-sxm2-16gb-resnet50-imagenet-1x-amp_fp16-b256-338-L584 memory_format)" ] &&
   [ "$(col v100-sxm2-16gb-resnet50-imagenet-1x-amp_fp16-b256-338-L604 value)" = 1200.0 ] &&
   [ "$(col v100-sxm2-16gb-resnet50-imagenet-1x-amp_fp16-b256-338-L604 memory_format)" = channels_last ]'
# README.md@78ec6802 line 936 (pytorch:20.06, 67.0 seq/s) and @729963dd line 862 (pytorch:21.11, 85.5): one
# median (76.25) of two PyTorch releases, which the rows describe (torch_version)
check "medians of tables of two PyTorch releases split (SQuAD 2020 / 2021)" \
  '[ -z "$(col v100-sxm2-32gb-bert-large-squad-8x-fp32-b8-260 value)" ] &&
   [ "$(col v100-sxm2-32gb-bert-large-squad-8x-fp32-b8-260-L936 value)" = 67.0 ] &&
   [ "$(col v100-sxm2-32gb-bert-large-squad-8x-fp32-b8-260-L936 torch_version)" = 1.6 ] &&
   [ "$(col v100-sxm2-32gb-bert-large-squad-8x-fp32-b8-260-L862 value)" = 85.5 ] &&
   [ "$(col v100-sxm2-32gb-bert-large-squad-8x-fp32-b8-260-L862 torch_version)" = 1.11 ]'
# run_pretraining.py@78ec6802 line 421: without accumulation, apex DDP(message_size=250000000), 250M fp16
# elements a bucket; with it (line 434) one flat all-reduce after accumulation; @729963dd line 457: torch DDP
# with bucket_cap_mb = the GPU's memory, one bucket; the 2019 code (@6fe463fe) under run.sub always the flat
# all-reduce (configurations.yml bert--DGX1_4x8x16x128: GRADIENT_STEPS 128)
check "2019 32-GPU row: 128 accumulation steps, one all-reduce after them" \
  '[ "$(col v100-sxm2-16gb-bert-large-pretrain-32x-amp_fp16-b16-139 grad_accum)" = 128 ] &&
   [ "$(col v100-sxm2-16gb-bert-large-pretrain-32x-amp_fp16-b16-139 grad_buckets)" = 1 ] &&
   [ -z "$(col v100-sxm2-16gb-bert-large-pretrain-32x-amp_fp16-b16-139 bucket_cap_mb)" ]'
check "20.06 4x row with accumulation: one all-reduce after backward" \
  '[ "$(col v100-sxm2-16gb-bert-large-pretrain-4x-amp_fp16-b16-131 grad_buckets)" = 1 ]'
check "21.11 DGX A100 256x row: torch DDP's one bucket" \
  '[ "$(col a100-sxm4-80gb-bert-large-pretrain-256x-amp_fp16-b256-123 grad_buckets)" = 1 ]'
check "one-GPU and SQuAD rows: DDP's default buckets" \
  '[ -z "$(col v100-sxm2-16gb-bert-large-pretrain-1x-amp_fp16-b16-127 grad_buckets)" ] &&
   [ -z "$(col a100-pcie-40gb-bert-base-squad-2x-amp_fp16-b88-4 grad_buckets)" ]'
# the 2021 DGX A100 table already had it in its notes ("grad accumulation steps=32")
check "21.11 DGX A100 1x fp16 seq128: 32 accumulation steps" \
  '[ "$(col a100-sxm4-80gb-bert-large-pretrain-1x-amp_fp16-b256-98 grad_accum)" = 32 ]'

# Lambda's rows "4x RTX A4000" / "8x RTX A4000" (pytorch-train-throughput-fp16.csv@fe450482: BERT-large
# 98 and 324 seq/s) were filed under GeForce RTX 3090: not in calibration_dle.csv; "4x RTX 3090" (67) is
check "4x RTX A4000 BERT-large fp16 row is not an RTX 3090 run" \
  '[ -z "$(col rtx3090-bert-large-squad-4x-amp_fp16-b8-224 value)" ]'
check "8x RTX A4000 ResNet-50 tf32 row is not an RTX 3090 run" \
  '[ -z "$(col rtx3090-resnet50-imagenet-8x-tf32-b148-336 value)" ]'
check "4x RTX 3090 BERT-large fp16 row stays" \
  '[ "$(col rtx3090-bert-large-squad-4x-amp_fp16-b16-225 value)" = 67.0 ]'

# mlm_all_positions=1 (DLE 2019-2020 BertForPreTraining, HF BertForPreTraining): the LM transform and the
# vocabulary projection run on all 128 positions, not on ceil(0.15 x 128) = 20: their forward + backward
# FLOP, 6 x d x (d + V) per position, on 108 more positions x 16 samples (d 1024, V 30522)
flop() {
  "$EC" predict model=bert-large task=pretrain gpu=v100-sxm2-32gb precision=fp16 attention=eager batch_per_gpu=16 \
    seq_len=128 "$@" --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "flop_per_step") c = i } NR == 2 { print $c }'
}
f0=$(flop); f1=$(flop mlm_all_positions=1)
check "mlm_all_positions=1 adds the head's FLOP on the unmasked positions" \
  'awk -v a="$f0" -v b="$f1" "BEGIN { want = 6 * 1024 * (1024 + 30522) * 108 * 16; d = (b - a) / want; exit !(d > 0.99 && d < 1.02) }"' \
  "flop_per_step $f0 -> $f1"
expect "mlm_all_positions outside task=pretrain is named as having no effect" 0 \
  "mlm_all_positions (task=pretrain only)" -- predict model=bert-base task=squad gpu=a100-sxm4-80gb batch_per_gpu=8 mlm_all_positions=1
check "2020 DGX-1 rows run the head on every position" \
  '[ "$(col v100-sxm2-32gb-bert-large-pretrain-1x-amp_fp16-b4-142 mlm_all_positions)" = 1 ]'
check "2021 (pytorch:21.11) rows gather the masked positions first" \
  '[ -z "$(col a100-sxm4-80gb-bert-large-pretrain-1x-amp_fp16-b256-98 mlm_all_positions)" ]'
# the 2021 phase-2 rows ran on LDDL's 64-token bins (pretrain_config.sh phase2_bin_size=64): left out
check "2021 phase-2 rows (LDDL binned) are left out" \
  '[ -z "$(col a100-sxm4-80gb-bert-large-pretrain-1x-amp_fp16-b32-97 value)" ] &&
   [ -z "$(col v100-sxm2-32gb-bert-large-pretrain-8x-amp_fp16-b8-155 value)" ]'
check "2021 phase-1 rows (unbinned) stay" \
  '[ "$(col a100-sxm4-80gb-bert-large-pretrain-8x-tf32-b126-104 value)" = 2486.0 ]'

# One GELU kernel on every BERT row, the network's: the 2019-2020/01 code TorchScript-fuses bias_gelu
# (DLE modeling.py@a7089640 lines 119-127), run_squad.py and run_pretraining.py from 2020-07 set
# ACT2FN["bias_gelu"] = bias_gelu_training, F.gelu (@f8b3a63f lines 928 and 350; Lambda's v0 copy @7bb2ca8a
# line 928): no activation column (stop 53's gelu_python misread modeling.py without that line)
check "no activation override (one GELU kernel, as the scripts ran it)" \
  '! head -n 1 "$CAL" | tr , "\n" | grep -qx activation && ! grep -q gelu_python "$CAL"'

# run_squad.py clips every micro-step at 1.0 (GradientClipper, lines 1036/1076 @78ec6802); ResNet-50 does not
check "SQuAD rows clip at max_grad_norm 1" \
  '[ "$(col v100-sxm2-32gb-bert-large-squad-1x-amp_fp16-b10-248 max_grad_norm)" = 1 ] &&
   [ "$(col rtx3090-bert-base-squad-2x-tf32-b48-56 max_grad_norm)" = 1 ]'
check "ResNet-50 rows do not clip" '[ -z "$(col v100-sxm2-32gb-resnet50-imagenet-1x-fp32-b112-357 max_grad_norm)" ]'

# Lambda's config_pytorch_{2,4,8}x2080Ti_trt.sh / ...NVlink_trt.sh pass "${NUM_GPU}" "1" where the
# precision and GPU count go: their BERT-large "fp16" run was one GPU in fp32 (raw logs: python run_squad.py,
# "distributed training: False, 16-bits training: False"), the 1x fp32 b2 row's run: left out
check "RTX 2080 Ti BERT-large 'fp16' rows on 2/4/8 GPUs (one GPU in fp32) are left out" \
  '[ -z "$(col rtx2080ti-bert-large-squad-2x-amp_fp16-b2-208 value)" ] &&
   [ -z "$(col rtx2080ti-bert-large-squad-8x-amp_fp16-b2-212 value)" ]'
# ... at their logs' steady rate (NGC 20.01: the published 20 held two epochs' start-up; the logs
# of 8x2080Ti_trt and 8x2080TiNVlink_trt run 8 x 2 / 0.704 s and 8 x 2 / 0.621 s: (22.7 + 25.8) / 2)
check "RTX 2080 Ti BERT-large fp32 rows on 2/4/8 GPUs (torch.distributed.launch) stay, at the logs' steady rate" \
  '[ "$(col rtx2080ti-bert-large-squad-8x-fp32-b2-213 value)" = 24.2 ]'
# run_squad.py reports batch x max_steps x GPUs / time: 8x RTX 3090 BERT-base fp16 b52 made 428 of
# max_steps 1000 (2 epochs of ceil(88641 / 8 / 52) = 214), tqdm 1.45 it/s x 416 = 603 seq/s, not 1402
check "8x RTX 3090 BERT-base fp16 b52 counts the 428 steps it ran" \
  '[ "$(col rtx3090-bert-base-squad-8x-amp_fp16-b52-64 value)" = 600.1 ]'
check "4x RTX 3090 BERT-base tf32 b26 (1706 steps >= max_steps) keeps its value" \
  '[ "$(col rtx3090-bert-base-squad-4x-tf32-b26-62 value)" = 142.0 ]'

echo "$((n - fails))/$n passed"
[ "$fails" -eq 0 ]
