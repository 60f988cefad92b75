#!/usr/bin/env python3
"""Build bench/data/calibration_dle.csv: ../shared/data/runs/calibration.csv with the
settings its source scripts imply but its columns do not say.  Python 3 stdlib only.

    python3 tools/data/make_dle_runs.py               # write bench/data/calibration_dle.csv
    python3 tools/data/make_dle_runs.py --shared DIR  # shared folder (default ../shared)
    python3 tools/data/make_dle_runs.py --check       # exit 1 if the committed file differs,
                                                      # 77 (skip) without the shared folder

Every row of calibration.csv is a run of the NVIDIA DeepLearningExamples (DLE) PyTorch
scripts (NVIDIA's README tables, or Lambda's runs of the same scripts).  Their BERT is not
Hugging Face's current BertModel, which the presets describe with its defaults:

  * attention=eager for BERT rows.  DLE PyTorch/LanguageModeling/BERT/modeling.py,
    BertSelfAttention.forward: torch.matmul(query, key), / sqrt(head_size), + attention_mask,
    F.softmax, dropout, torch.matmul(probs, value) -- an explicit s x s score tensor, not
    F.scaled_dot_product_attention (the preset default "sdpa").
  * precision fp16 (the whole model in half) for BERT rows measured as amp_fp16.  DLE
    run_squad.py / run_pretraining.py enable mixed precision with apex
    amp.initialize(model, optimizer, opt_level="O2", keep_batchnorm_fp32=False): the model is
    cast to fp16, so softmax, LayerNorm (apex FusedLayerNorm) and the residual stream run in
    half, with no autocast casts; fp32 master weights live in the optimizer.  The config's
    amp_fp16 is torch.autocast, which keeps softmax, LayerNorm and the residual stream in
    fp32 and casts in front of every matmul.  fp16 prices the step's kernels as O2 runs them;
    it leaves out the fp32 master copy, which changes memory, not step time.
    (ResNet-50 rows are left as they are: DLE ConvNets and Lambda's runs use their own AMP.)
  * gradient_as_bucket_view=1 for multi-GPU BERT rows.  run_squad.py and run_pretraining.py
    wrap the model in apex.parallel.DistributedDataParallel (`from apex.parallel import
    DistributedDataParallel as DDP`), or all-reduce a flat copy after accumulation
    (--allreduce_post_accumulation).  Apex flattens each bucket into a temporary buffer,
    all-reduces it and copies it back (retain_allreduce_buffers=False), so no copy of the
    gradients stays allocated -- what torch DDP's gradient_as_bucket_view=True gives, not its
    default persistent bucket copy.  DLE ConvNets uses torch DDP with defaults
    (image_classification/training.py), so ResNet-50 rows keep the bucket copy.
  * torch_version: the PyTorch of the NGC container each row's sources ran (NGC_TORCH below for
    NVIDIA's tables, whose notes name the container; the framework column of Lambda's
    measurement files for Lambda's rows: 1.4 on NGC 20.01, 1.7 / 1.9 / 1.10 on 20.10-21.07,
    1.13 on 22.09 with LambdaLabsML's DLE fork), the oldest where a median mixes them; none for
    the four rows of ConvNets README line 591, whose table names no container.  Every one is a
    1.x: zero_grad() fills the gradients with zeros, torch.optim's SGD loops over the tensors
    (DLE ConvNets image_classification/training.py: torch.optim.SGD, optimizer.zero_grad()),
    and before 1.12 a linear's bias is its own kernel.
  * optimizer, clip_impl, zero_grad and master_weights of the BERT rows, as run_squad.py and run_pretraining.py
    run them (DLE @729963dd, LambdaLabsML's fork and Lambda's scripts/patch/run_squad.py
    @9aae2720..ae234114 alike): SQuAD fp16 steps apex.optimizers.FusedAdam (adamw_apex_fused)
    under amp O2, SQuAD fp32/TF32 steps optimization.py's BertAdam (bertadam: a Python loop that
    clips every tensor with clip_grad_norm_ before its update), and every SQuAD step first runs
    run_squad.py's GradientClipper (clip_impl=multi_tensor: amp_C.multi_tensor_l2norm,
    total_norm.item(), multi_tensor_scale) over amp.master_params(optimizer).  Pre-training
    clears the gradients with `param.grad = None` (run_pretraining.py @6fe463fe, @78ec6802) or
    zero_grad(set_to_none=True) (@729963dd): zero_grad=set_to_none.  Its 2019 BertLAMB
    (pytorch:19.07, optimization.py @6fe463fe) gathers the tensors in Python and steps them with
    apex multi-tensor LAMB kernels (apply_gradients, then multi_tensor_scale to the fp16 weights):
    lamb as the catalogue prices it.  SQuAD fp16 runs amp O2 with master weights (master_weights=1: fp32
    states, the fp16 gradients copied into fp32 master gradients with the overflow check's
    .item(), the master weights copied back after the step).  Pre-training's mixed-precision rows
    of the 2019 and 2020 code (pytorch:19.07, 20.06) run amp.initialize(opt_level="O2") too
    (run_pretraining.py @6fe463fe line 315, @78ec6802 line 391) and amp.scale_loss around every
    micro-step's backward: master_weights=1 (since stop 64), whose accumulated steps add each
    later micro-step's fp16 gradients into the fp32 master gradients (apex
    _process_optimizer.py post_backward_with_master_weights; constants.csv
    master_grad_accumulate_bytes_per_param).  The 2021 code (@729963dd) halves the model and
    keeps FusedLAMBAMP's own fp32 copies under torch.cuda.amp.GradScaler: left as it was.
  * topology=pcie-host for Lambda's v1-harness multi-GPU rows.  The v1 harness
    (lambdal/deeplearning-benchmark pytorch/scripts/benchmark_pytorch.sh, the version that
    sources config_v1/, commit 0a684b62) runs `export NCCL_P2P_DISABLE=1` before every
    launch, so NCCL moves every gradient byte through host memory even on NVLink/NVSwitch
    boards.  Rows are matched to the v1 measurement file as
    tools/data/lambda_harness_split.py does; v0 rows and unmatched rows (medians of several
    runs) keep their GPU's default topology.  Their raw logs agree
    (bench/results/lambda_v1_steady_state.md): on 2 A100-80GB SXM4 each step is slower than
    on one by 0.26-0.32 ms per MB of gradients, for BERT and ResNet-50 alike.

  * memory_format=channels_last for NVIDIA's own ResNet-50 mixed-precision rows of the 2021
    tables (pytorch-21.03, README.md@729963dd lines 596-612).  That README's training-performance
    commands pass `--amp --static-loss-scale 256 --memory-format nhwc`
    (NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets, resnet50v1.5/README.md
    "Training performance benchmark"); its FP32/TF32 commands keep the default nchw.  The 2020
    tables (pytorch-20.06, README.md@46ff3707 lines 577-591: DGX A100 40GB, DGX-1 16GB and 32GB)
    ran contiguous (NCHW) tensors: that README's benchmark commands are `--amp
    --static-loss-scale 256` with no memory format (its lines 489 and 494), and its line 60 says
    "We are currently working on adding NHWC data layout support for Mixed Precision training".
    Until stop 53 every NVIDIA AMP row was channels_last, which put the 2020 A100 rows +28-31%
    (leave one GPU out).  Lambda's harness runs main.py with `--amp --static-loss-scale 256` and
    no memory format (lambdal/deeplearning-benchmark pytorch/scripts config
    PyTorch_resnet50_AMP_PARAMS): contiguous (NCHW) as well.

  * Rows split where calibration.csv took the median of NVIDIA tables that ran differently
    (memory format, accumulation, or the PyTorch release of their containers, torch_version
    below): the median of a 2020 (NCHW) and a 2021 (NHWC) ResNet-50 AMP table (DGX-1 16GB on 1
    GPU, DGX-1 32GB on 1 and 8); of the 2020 BERT pre-training table (pytorch:20.06, PyTorch 1.6)
    with the 2019 multi-node one (pytorch:19.07, 1.2) on one DGX-1 16GB (8 GPUs, sequence 128
    and 512: 1236 and 263 against 874.24 and 195.93 sequences/s; the same accumulation, 512 and
    1024, below); and of the 2020 and 2021 DGX-1 32GB SQuAD fp32 tables (pytorch:20.06 and
    21.11, PyTorch 1.6 and 1.11; 1 and 8 GPUs: 12.0 and 67.0 against 12.0 and 85.5).  Each
    table becomes its own row, the README's value for that configuration
    (shared/data/measurements/nvidia_dle_readmes.csv), its id the median's with "-L<line>".
    The DGX-1 16GB 8-GPU ResNet-50 AMP row also held Lambda values, which cannot be told apart
    in the median: that row becomes the two NVIDIA rows alone.  Medians of tables that ran the
    same way (the same release, and a configuration these columns cannot tell apart) stay
    medians; until stop 64 the release was not compared, and the SQuAD median stayed one row
    priced as PyTorch 1.6.

  * Rows split where Lambda's table is the mean of two machines' runs: its four 2x RTX 3090 v0
    BERT SQuAD figures (BERT-base fp16 b52 and tf32 b26, BERT-large fp16 b16 and tf32 b8) are
    the means, truncated, of two logs each (lambdal/deeplearning-benchmark
    pytorch/results/2x3090/PyTorch_bert_*_squad_FP16|FP32/*.txt @e167f02c: 293 = (275.9 +
    311.8) / 2, 126 = (109.4 + 142.8) / 2, 76 = (62.6 + 89.8) / 2, 25 = (18.0 + 33.9) / 2).  Both
    logs of a pair ran the same container ("Container nvidia build = 16972326"), command and
    batch; the runs of 31 Oct 2020 scale 1.8-1.9x over one GPU, those of 5 Feb 2021 1.1-1.7x
    (that day's 4x and 8x RTX 3090 BERT-large rows run at 0.9-1.5x one GPU's rate): two machines
    whose GPU-to-GPU paths differ, neither named in the logs.  Each log becomes its own
    row (TWO_MACHINES: its id the table row's with "-r<date>", its value the log's
    training_sequences_per_second, its source the log); both keep the GPU's default topology.

  * grad_accum for NVIDIA's BERT pre-training rows of the 2020 tables (pytorch:20.06) and the
    DGX-1 table of the 2021 README (pytorch:21.11).  Their "Batch size / GPU" column is the
    accumulated batch and the "Accumulation steps" column says how many micro-batches make it
    (README.md@78ec6802 lines 852-853, 922-923, 948-949: e.g. "| 1 | 32768 and 32768 | 16384 and
    8192 | 512 |"; README.md@729963dd line 851: "| 1 | 2048 and 2048 | 512 and 256 | 512 |");
    the measurement file keeps it in its notes as "table batch/GPU B includes grad accumulation
    N -> micro-batch b".  run_pretraining.py divides train_batch_size by
    gradient_accumulation_steps (line 327 @78ec6802, line 363 @729963dd), steps LAMB once per N
    micro-batches and, with --allreduce_post_accumulation (run_pretraining.sh's default),
    all-reduces once per N; its training_sequences_per_second counts the accumulated batch
    (train_batch_size * gradient_accumulation_steps * gpus * steps / time, line 687 @78ec6802).
    calibration.csv gave these rows grad_accum 1, which prices a LAMB step and an all-reduce
    after every micro-batch.  The 2019 multi-node DGX-1 table (pytorch:19.07, README.md@78ec6802
    line 962) states no accumulation; the README of its commit (@6fe463fe "[BERT/PyT] Support for
    multi-node", line 403: "Variables to re-run the Training performance results are available
    in the configurations.yml file") points at configurations.yml @6fe463fe, whose DGX1 entries
    run BATCHSIZE 8192 / 2048 / 512 with GRADIENT_STEPS 512 / 128 / 32 on 1 / 4 / 16 nodes at
    sequence 128 (micro-batch 16, the table's) and 4096 / 1024 / 256 with 1024 / 256 / 64 at 512
    (micro-batch 4), through run.sub @6fe463fe, which passes --allreduce_post_accumulation
    --allreduce_post_accumulation_fp16 (ACCUM_19_07; until stop 64 these rows had 1, priced with
    apex DDP's buckets under every backward).  Its DGX2 entries do the same for the DGX-2H
    table's mixed-precision rows (holdout_runs.csv): 64 / 16 / 4 / 1 on 1 / 4 / 16 / 64 nodes
    at sequence 128 (micro-batch 64), 256 / 64 / 16 / 4 at 512 (micro-batch 8); its FP32 column
    (64 nodes) has no entry and keeps 1.  A row that is the median of sources with different
    accumulation keeps 1.

  * mlm_all_positions=1 for NVIDIA's BERT pre-training rows of the 2019 and 2020 tables
    (pytorch:19.07 and 20.06).  Their run_pretraining.py (@78ec6802) runs BertForPreTraining,
    whose forward (modeling.py@78ec6802 lines 897-902) passes the whole sequence_output to
    BertPreTrainingHeads: the LM transform (dense + GELU + LayerNorm) and the 30,522-way
    projection run on every position, and BertPretrainingCriterion (run_pretraining.py@78ec6802
    line 129) takes the cross entropy over all of them with ignore_index=-1.  The 2021 tables
    (pytorch:21.11, code of commit a9e2c1d5 "update LDDL + NVFuser") gather the masked rows
    first (modeling.py@729963dd BertPreTrainingHeads.forward: index_select of the positions whose
    label is not -1 when sequence_output_is_dense, which run_pretraining.py sets unless
    --no_dense_sequence_output) and keep the default 0.

  * How NVIDIA's multi-GPU BERT pre-training rows reduce their gradients.  run_pretraining.py of
    the 2021 tables (pytorch:21.11, @729963dd line 457) wraps the model in torch DDP with
    bucket_cap_mb=torch.cuda.get_device_properties(device).total_memory: one bucket, all-reduced
    after backward (under no_sync on the accumulation micro-steps), grad_buckets=1.  The 2019-2020
    code (@78ec6802) with accumulation runs --allreduce_post_accumulation (run_pretraining.sh's
    default): one flat all-reduce after the last micro-step's backward (take_optimizer_step,
    line 434), grad_buckets=1 as well.  Without accumulation (gradient_accumulation_steps == 1,
    line 306) it turns that off and wraps the model in apex DDP(message_size=250000000) (line 421):
    buckets of 250M fp16 elements, bucket_cap_mb = 250e6 x 2 / 2^20 = 476.837.  The 2019
    multi-node mixed-precision rows (pytorch:19.07) ran run.sub @6fe463fe, which passes
    --allreduce_post_accumulation, and that code (@6fe463fe) has no line turning it off without
    accumulation: grad_buckets=1 at every accumulation, the DGX-2H table's 64-node sequence-128
    row (GRADIENT_STEPS 1) too.  Until stop 52 all of them were priced with torch DDP's default
    25 MiB buckets under backward.

  * No activation override: every BERT row trains with one GELU kernel, the network's.  DLE's
    BERT runs its intermediate layer as LinearActivation(bias, act="gelu") -> ACT2FN["bias_gelu"],
    and which bias_gelu that is depends on the code's date (NVIDIA/DeepLearningExamples history):
    until 2020-02 (a7089640, 155578a7; NVIDIA's 2019 tables, pytorch:19.07, and the NGC 20.01
    container of Lambda's 2020 v0 runs) it is `@torch.jit.script def bias_gelu` (modeling.py
    @a7089640 lines 119-127), the bias add and the erf GELU fused by TorchScript; from f8b3a63f
    (2020-07-04, "Updating for Ampere and 20.06 container": NVIDIA's 2020 tables, then the NGC
    20.10-21.07 containers) run_squad.py and run_pretraining.py replace it for training with
    `modeling.ACT2FN["bias_gelu"] = modeling.bias_gelu_training`, `bias + y` then
    torch.nn.functional.gelu (run_squad.py@f8b3a63f line 928, run_pretraining.py line 350; the
    same line 928 in Lambda's v0-harness copy, scripts/patch/run_squad.py@7bb2ca8a); from a9e2c1d5
    (2022-03) `gelu` is torch.nn.functional.gelu.  The Python-op bias_gelu of modeling.py
    (`x * 0.5 * (1.0 + torch.erf(x / 1.41421))`, "used only for triton inference" from 482fe9ac
    on) trained only in run_squad.py between 2020-04-07 (56268469) and 2020-07-04 (run_pretraining.py
    @56268469 line 316 scripted it: `torch.jit.script(modeling.ACT2FN["bias_gelu"])`), code no row
    here ran.  Until
    stop 61 the DLE code before a9e2c1d5 was described as activation=gelu_python (five eager
    kernels), a misreading of modeling.py without the scripts' override; the eager bias add of the
    2020-07+ code is one kernel not priced, as for every network.

  * max_grad_norm=1 for the SQuAD rows (NVIDIA's and Lambda's runs of run_squad.py).  Every
    micro-step ends in gradClipper.step(amp.master_params(optimizer)) with
    GradientClipper(max_grad_norm=1.0) (run_squad.py@78ec6802 lines 1036 and 1076, @729963dd
    lines 1051 and 1092): apex multi_tensor_l2norm over the gradients, total_norm.item(), and
    multi_tensor_scale of them when the norm is above 1 (class GradientClipper, lines 702-723).
    The plain loop's default in epochcast is no clipping.

Rows dropped (made of a system other than the GPU they name):

  * Lambda v0 rows whose measurement notes say "system=4x RTX A4000" or "system=8x RTX A4000"
    but whose gpu is GeForce RTX 3090 (12 preset rows: BERT-base / BERT-large SQuAD and
    ResNet-50, fp16 and tf32, on 4 and 8 GPUs).  Lambda's published table has them on the
    rows "4x RTX A4000" and "8x RTX A4000" (lambdal/deeplearning-benchmark
    pytorch/pytorch-train-throughput-fp16.csv@fe450482: "4x RTX A4000,...,490.0,390.0,98.0,..."
    and "8x RTX A4000,...,984.0,765.0,324.0,..."; -fp32.csv likewise 166/30 and 293/54), not
    on "4x RTX 3090" / "8x RTX 3090", which are other rows of the same table (547/67 and
    1402/68 for BERT fp16).  make_holdout.py moves them to the RTX A4000 (bench/data/holdout_runs.csv).

  * NVIDIA's phase-2 (sequence 512) BERT pre-training rows of the 2021 tables (pytorch:21.11;
    18 rows: DGX A100 80GB on 1-256 GPUs, DGX-1 32GB on 1 and 8).  The README's changelog
    (README.md@729963dd line 895: "Binned pretraining for phase2 with LDDL using a bin size of
    64") and scripts/configs/pretrain_config.sh@729963dd (phase2_bin_size=64 in all four configs,
    DGX A100 80GB fp16/tf32 and DGX-1 32GB fp16/fp32, lines 50, 98, 146, 194; a9e2c1d5's copy
    says "All configs using bin size=64 with phase2 by default for improved throughput") say these runs read
    LDDL's binned phase-2 shards: every batch holds sequences of one 64-token bin and is padded
    to its longest sequence (NVIDIA/LDDL README "Sequence binning"; lddl/torch/bert.py pads to
    the batch's longest sequence, rounded up to sequence_length_alignment), so a batch is not 512 tokens long.  What length mix that
    gives is not published (Krell et al. 2021, arXiv:2107.02027: padding is over 50% of the
    tokens of Wikipedia at sequence 512; LDDL's README figure: bin size 64 trains phase 2 1.73x
    faster end to end than bin size 512 on 32 DGX A100 nodes), and priced as 512 tokens they come
    out ~2.2x slower than measured.  They cannot be described as they ran, so they are left out
    rather than fitted as 512-token steps.  The 21.11 phase-1 rows (sequence 128) read the
    unbinned shards (pretrain_config.sh: DATASET=pretrain/phase1/unbinned/parquet) and stay.

  * Lambda v0 BERT-large SQuAD "fp16" rows of RTX 2080 Ti systems on 2, 4 and 8 GPUs (3 rows,
    each the median of the "2x/4x/8x RTX 2080Ti" and "... NVLink" systems).  They ran on one GPU
    in fp32: the PyTorch_bert_large_squad_FP16_PARAMS of config_pytorch_{2,4,8}x2080Ti_trt.sh
    and config_pytorch_{2,4,8}x2080TiNVlink_trt.sh (lambdal/deeplearning-benchmark
    pytorch/scripts/config_v0/) pass `"2.0" "2" "0.0" "${NUM_GPU}" "1" "1" "/data/squad/v1.1"`
    where every other config passes `... "0.0" "fp16" "${NUM_GPU}" "1" ...`, so the
    run_squad.sh the harness copies in (scripts/patch/run_squad.sh@7bb2ca8a: precision=${5},
    num_gpu=${6}; --fp16 only when precision is "fp16", torch.distributed.launch only when
    num_gpu is not 1) reads precision="${NUM_GPU}" and num_gpu=1.  Their raw logs (pytorch/results/
    2x2080Ti_trt, 4x2080Ti_trt, 8x2080Ti_trt, 8x2080TiNVlink_trt PyTorch_bert_large_squad_FP16/
    *.txt @e167f02c) show `python run_squad.py ... --train_batch_size=2` with no
    torch.distributed.launch and no --fp16, and "distributed training: False, 16-bits
    training: False".  The value (6 sequences/s at every GPU count) is the 1-GPU fp32 batch-2
    run that calibration.csv already has (rtx2080ti-bert-large-squad-1x-fp32-b2-207).

Values corrected (the metric counts steps that did not run):

  * DLE run_squad.py computes training_sequences_per_second as train_batch_size *
    gradient_accumulation_steps * max_steps * world_size / time_to_train whenever max_steps is
    set, whether or not the run reached max_steps (NVIDIA/DeepLearningExamples
    PyTorch/LanguageModeling/BERT/run_squad.py, end of main(); Lambda's copy
    scripts/patch/run_squad.py@7bb2ca8a lines 1189-1190); the loop also stops after
    num_train_epochs (2.0 in Lambda's configs; line 1044 breaks at max_steps).  Lambda's config_pytorch_4x3090.sh and
    config_pytorch_8x3090.sh pass max_steps 1000; SQuAD v1.1's 88,641 training features give a
    rank ceil(88641/n / b) steps per epoch, so three RTX 3090 rows ran 2 epochs of fewer than
    1000 steps: 4x BERT-base fp16 b52 (427 per epoch, 854 in all), 8x BERT-base fp16 b52 (214,
    428) and 8x BERT-base tf32 b26 (427, 854).  Their logs (results/4x3090 and 8x3090
    PyTorch_bert_base_squad_FP16/FP32/*.txt @7bb2ca8a) agree: e2e_train_time 380.1 s, 296.7 s
    and 1155.1 s; tqdm 2.25 it/s, 1.45 it/s and 1.35 s/it, i.e. 468, 603 and 154 sequences/s
    against the reported 547, 1402 and 180.  The value is scaled by steps run / max_steps
    (STEP_COUNT below) and the source says so.

Steady rates of the NGC 20.01 runs (since stop 65):

  * Lambda's v0 harness on NGC 20.01 (2020: RTX 2080 Ti and V100 rows here, Quadro RTX 5000-8000
    and TITAN RTX in holdout_runs.csv) did not publish run_squad.py's figure: its
    scripts/patch/run_squad.sh (@e167f02c lines 112-115) prints I x n x b / T with
    I = ceil(max_steps / (n x b)) and T the tqdm Epoch bar's final s/it, the mean time of two
    epochs of max_steps examples.  An epoch runs more iterations than I (the last a partial
    batch: 52 against 50 for the 2080 Ti's BERT-base fp16), and at a large batch on many GPUs
    it is a few iterations (3 for BERT-base b108 on 8 Quadro RTX 8000), so T holds the
    epochs' start-up: the figure is 0.98 of the steady rate on one GPU (median; 0.93-1.00), 0.94 on
    two, 0.54-0.83 on eight with epochs under 10 iterations (bench/results/lambda_v1_steady_state.md).  Each such
    figure is replaced by its log's steady rate, n x b over tqdm's step at the last display of
    epoch 2 before its end (tools/data/lambda_v0_2001_steady.csv, written by
    tools/data/lambda_log_steady.py --ngc2001 --csv from lambdal/deeplearning-benchmark
    @e167f02c; a log is the one whose figure the table truncates), and a median of several runs
    takes the steady rates of those with a log (steady_medians; the others keep their figure).
    The source says how many.  The NGC 20.10+ runs publish run_squad.py's own figure over 100 or
    more steps (0.90-1.00 of the steady rate) and keep it.

Rows, ids, values and sources are otherwise copied unchanged; the added columns are the last
config columns before metric/value/source.
"""
import csv
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lambda_harness_split import harness_key, harness_of_rows  # noqa: E402
import dle_measurements  # noqa: E402
from dle_measurements import MEMBER_KEY, other_system  # noqa: E402


def root_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


ACCUM_NOTE = re.compile(r"includes grad accumulation (\d+) -> micro-batch (\d+)")


# The 2019 multi-node tables (pytorch:19.07) state no accumulation; their README (@6fe463fe line
# 403: "Variables to re-run the Training performance results are available in the
# configurations.yml file") points at configurations.yml @6fe463fe, whose DGX1 and DGX2 entries
# (mixed precision: run.sub passes --fp16) give BATCHSIZE / GRADIENT_STEPS = the table's
# micro-batch: (table, GPUs, sequence) -> GRADIENT_STEPS.  The DGX-2H table's FP32 column (64
# nodes) has no entry there and keeps 1.
DGX1_19_07 = "table: Pre-training on multiple NVIDIA DGX-1 With 16G"
DGX2H_19_07 = "table: Pre-training on multiple NVIDIA DGX-2H With 32G"
ACCUM_19_07 = {
    (DGX1_19_07, "8", "128"): "512", (DGX1_19_07, "32", "128"): "128", (DGX1_19_07, "128", "128"): "32",
    (DGX1_19_07, "8", "512"): "1024", (DGX1_19_07, "32", "512"): "256", (DGX1_19_07, "128", "512"): "64",
    (DGX2H_19_07, "16", "128"): "64", (DGX2H_19_07, "64", "128"): "16", (DGX2H_19_07, "256", "128"): "4",
    (DGX2H_19_07, "1024", "128"): "1", (DGX2H_19_07, "16", "512"): "256", (DGX2H_19_07, "64", "512"): "64",
    (DGX2H_19_07, "256", "512"): "16", (DGX2H_19_07, "1024", "512"): "4",
}


def accum_19_07(m, seq):
    """configurations.yml's GRADIENT_STEPS for a mixed-precision row of a 2019 multi-node table,
    None for any other measurement row."""
    if "container=pytorch:19.07" not in m["notes"] or m["precision"] != "amp_fp16":
        return None
    table = next((t for t in (DGX1_19_07, DGX2H_19_07) if t in m["notes"]), None)
    return ACCUM_19_07.get((table, m["num_gpus"], seq)) if table else None


def accumulation_of_readmes(measurements):
    """(README path#line, gpu id, GPUs, precision, micro-batch, seq) -> accumulation steps, from
    the NVIDIA README rows whose notes give the table's accumulated batch, and for the 2019
    multi-node table from configurations.yml (ACCUM_19_07)."""
    out = {}
    with open(os.path.join(measurements, "nvidia_dle_readmes.csv"), newline="") as f:
        for m in csv.DictReader(f):
            seq = m["seq_len_or_image"].replace("seq", "")
            hit = ACCUM_NOTE.search(m["notes"])
            if hit and hit.group(2) == m["per_gpu_batch"]:
                steps = hit.group(1)
            elif accum_19_07(m, seq):
                steps = accum_19_07(m, seq)
            else:
                continue
            key = (m["source_path"].split("@")[0], gpu_key(m["gpu"]), m["num_gpus"], m["precision"],
                   m["per_gpu_batch"], seq)
            out[key] = steps
    return out


def containers_of_readmes(measurements):
    """README path#line -> the NGC containers its NVIDIA rows name (notes "container=...")."""
    out = {}
    with open(os.path.join(measurements, "nvidia_dle_readmes.csv"), newline="") as f:
        for m in csv.DictReader(f):
            hit = re.search(r"container=([^;]+);", m["notes"])
            if hit:
                out.setdefault(m["source_path"].split("@")[0], set()).add(hit.group(1).strip())
    return out


# ConvNets README commits whose ResNet-50 AMP benchmark commands pass --memory-format nhwc (docstring)
NHWC_CONVNETS_COMMITS = ("729963dd",)


def readme_values(measurements):
    """(README path#line, gpu id, GPUs, precision, batch, sequence or image size) -> (value, commit)
    of the NVIDIA README rows."""
    out = {}
    with open(os.path.join(measurements, "nvidia_dle_readmes.csv"), newline="") as f:
        for m in csv.DictReader(f):
            path, _, commit = m["source_path"].partition("@")
            size = m["seq_len_or_image"].replace("seq", "").split("x")[0]
            out[(path, gpu_key(m["gpu"]), m["num_gpus"], m["precision"], m["per_gpu_batch"], size)] = (m["value"], commit)
    return out


def gpu_key(name):
    """A README row's GPU as the rows' gpu id spells it: "V100-SXM3-32GB-H (450W)" -> "v100-sxm3-32gb-h"."""
    return re.sub(r"\s*\(.*\)$", "", name).lower()


def readme_key(row, path):
    """The key of readme_values (and accumulation_of_readmes) for the row's configuration in a README table."""
    return (path, row["gpu"], row["num_gpus"], row["precision"], row["batch_per_gpu"], row["seq_len"] or row["image_size"])


def how_it_ran(row, path, values, accum, containers):
    """What a README table's run of the row's configuration set that the row's columns describe:
    (memory format, accumulation steps, PyTorch releases of its containers); None when the
    README has no such row."""
    key = readme_key(row, path)
    if key not in values:
        return None
    nhwc = (row["model"] == "resnet50" and row["precision"] == "amp_fp16" and
            values[key][1][:8] in NHWC_CONVNETS_COMMITS)
    releases = tuple(sorted(container_torch(n) for n in containers.get(path, ())))
    return ("channels_last" if nhwc else "", accum.get(key, "1") if row["task"] == "pretrain" else "", releases)


def split_by_run(row, values, accum, containers):
    """The row, or one row per NVIDIA table when it is the median of tables that ran differently
    (docstring, "Rows split"), each with that table's value and source."""
    paths = re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"])
    ways = {p: how_it_ran(row, p, values, accum, containers) for p in paths}
    if len(paths) < 2 or None in ways.values() or len(set(ways.values())) < 2:
        return [row]
    out = []
    for p in paths:
        out.append(dict(row, id="%s-%s" % (row["id"], p.rsplit("#", 1)[1]), value=values[readme_key(row, p)][0],
                        source="median of 1: nvidia:%s" % p))
    return out


def memory_format_of(row, values):
    """channels_last for an NVIDIA ResNet-50 AMP row whose every source ran --memory-format nhwc."""
    paths = re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"])
    if row["model"] != "resnet50" or row["precision"] != "amp_fp16" or not paths or "lambda:" in row["source"]:
        return ""
    ways = {how_it_ran(row, p, values, {}, {}) for p in paths}
    return "channels_last" if ways == {("channels_last", "", ())} else ""


def mlm_all_positions_of(row, containers):
    """1 for a BERT pre-training row whose every NVIDIA source ran a pre-2022 container."""
    paths = re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"])
    if row["task"] != "pretrain" or not paths or "lambda:" in row["source"]:
        return ""
    names = set().union(*(containers.get(p, {"?"}) for p in paths))
    return "1" if names and all(re.match(r"pytorch:(19|20)\.", n) for n in names) else ""


def grad_accum_of(row, accum):
    """The accumulation every source of the row states, or the row's own when they differ."""
    paths = re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"])
    if not paths or "lambda:" in row["source"]:
        return row["grad_accum"]
    found = {accum.get(readme_key(row, p)) for p in paths}
    return found.pop() if len(found) == 1 and None not in found else row["grad_accum"]


LAMBDA_GPU_WORD = {"GeForce RTX 3090": "3090", "GeForce RTX 2080 Ti": "2080", "V100": "V100", "A100": "A100"}
LAMBDA_FILES = ("lambda_v0_pytorch_dle.csv", "lambda_v1_pytorch_dle.csv")
LAMBDA_MODELS = (("BERT-base", "bert-base"), ("BERT-large", "bert-large"), ("ResNet-50", "resnet50"))


def lambda_rows(measurements):
    """(our model id, row) of every row of Lambda's measurement files whose model is a preset."""
    for name in LAMBDA_FILES:
        path = os.path.join(measurements, name)
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            for m in csv.DictReader(f):
                model = next((ours for theirs, ours in LAMBDA_MODELS if m["model"].startswith(theirs)), None)
                if model is not None:
                    yield model, m


def other_system_keys(measurements):
    """(gpu word, GPUs, precision, batch, model) of the Lambda preset-model rows made on a system
    of another GPU (other_system) whose gpu is a calibration GPU: the RTX A4000 rows above
    (make_holdout.py moves them to the RTX A4000 and drops the V100 rows)."""
    out = set()
    for model, m in lambda_rows(measurements):
        if other_system(m["notes"], m["gpu"]) is None:
            continue
        word = next((w for k, w in LAMBDA_GPU_WORD.items() if k in m["gpu"]), None)
        if word is not None:
            prec = "amp_fp16" if m["precision"] == "fp16" else m["precision"]
            out.add((word, m["num_gpus"], prec, m["per_gpu_batch"], model))
    return out


# Lambda v0 configurations whose BERT-large "fp16" run was one GPU in fp32 (config argument
# shift; see the docstring): (gpu, model, precision as calibration.csv has it, batch).
ONE_GPU_FP32 = {("rtx2080ti", "bert-large", "amp_fp16", "2")}

# (gpu, model, GPUs, precision after convert(), batch) -> (steps run, max_steps) for
# single-source Lambda rows whose run ended after 2 epochs before max_steps (docstring, "Values
# corrected").  Applied after convert(), whose v1-harness match keys on the published value.
STEP_COUNT = {
    ("rtx3090", "bert-base", "4", "fp16", "52"): (854, 1000),
    ("rtx3090", "bert-base", "8", "fp16", "52"): (428, 1000),
    ("rtx3090", "bert-base", "8", "tf32", "26"): (854, 1000),
}


# (gpu, model, GPUs, precision after convert(), batch) -> the logs a Lambda table figure is the
# mean of, each (date, log path under pytorch/results/ @e167f02c, its training_sequences_per_second)
# (docstring, "Rows split where Lambda's table is the mean of two machines' runs").
TWO_MACHINES = {
    ("rtx3090", "bert-base", "2", "fp16", "52"): [
        ("20201031", "2x3090/PyTorch_bert_base_squad_FP16/31-10-2020_08-57-59.txt", 311.8168004630706),
        ("20210205", "2x3090/PyTorch_bert_base_squad_FP16/05-02-2021_10-59-40.txt", 275.9020025847303)],
    ("rtx3090", "bert-base", "2", "tf32", "26"): [
        ("20201031", "2x3090/PyTorch_bert_base_squad_FP32/31-10-2020_09-18-26.txt", 142.81230560865546),
        ("20210205", "2x3090/PyTorch_bert_base_squad_FP32/05-02-2021_11-19-11.txt", 109.36781396964555)],
    ("rtx3090", "bert-large", "2", "fp16", "16"): [
        ("20201031", "2x3090/PyTorch_bert_large_squad_FP16/31-10-2020_09-29-06.txt", 89.81157130406012),
        ("20210205", "2x3090/PyTorch_bert_large_squad_FP16/05-02-2021_11-29-59.txt", 62.598932368376204)],
    ("rtx3090", "bert-large", "2", "tf32", "8"): [
        ("20201031", "2x3090/PyTorch_bert_large_squad_FP32/31-10-2020_09-06-58.txt", 33.930229136874935),
        ("20210205", "2x3090/PyTorch_bert_large_squad_FP32/05-02-2021_11-07-53.txt", 18.003902585653943)],
}


def split_by_machine(row):
    """The row, or one row per log when its Lambda figure is the mean of two machines' runs
    (TWO_MACHINES); after convert()."""
    key = (row["gpu"], row["model"], row["num_gpus"], row["precision"], row["batch_per_gpu"])
    if key not in TWO_MACHINES or not row["source"].startswith("median of 1: lambda:"):
        return [row]
    logs = TWO_MACHINES[key]
    mean = sum(v for _, _, v in logs) / len(logs)
    if abs(int(mean) - float(row["value"])) > 1:
        sys.exit("make_dle_runs: %s is %s, not the mean of its logs (%.1f)" % (row["id"], row["value"], mean))
    return [dict(row, id="%s-r%s" % (row["id"], date), value="%.1f" % value,
                 source="median of 1: lambda:pytorch/results/%s@e167f02c (one of the two runs whose mean, "
                        "truncated, is the table's %s)" % (path, row["value"]))
            for date, path, value in logs]


# Lambda's v0 harness on NGC 20.01 (2020): its BERT SQuAD figure is I x n x b over the mean time of
# two epochs of I = ceil(max_steps / (n x b)) iterations, which at a few iterations an epoch holds
# the epochs' start-up (module docstring, "Steady rates of the NGC 20.01 runs").  The steady rate of
# each log (n x b over tqdm's step near the end of epoch 2), read by
# tools/data/lambda_log_steady.py --ngc2001 --csv from lambdal/deeplearning-benchmark @e167f02c.
STEADY_2001 = "lambda_v0_2001_steady.csv"


def steady_logs(path):
    """{(result folder, model, FP16 | FP32, GPUs, batch): [(figure, steady)]} of the logs with a step."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["steady"]:
                key = (r["system"], r["model"], r["precision"], r["num_gpus"], r["batch_per_gpu"])
                out.setdefault(key, []).append((float(r["figure"]), float(r["steady"])))
    return out


def steady_member(m, logs):
    """A mapped measurement row's steady rate (dle_measurements.map_rows), or None: a Lambda v0 NGC
    20.01 SQuAD row whose result folder has the log of its figure (the table truncates it)."""
    if m["task"] != "squad" or not m["harness"].endswith("NGC 20.01 (2020)"):
        return None
    key = (m["resultdir"], m["model"], "FP16" if m["precision"] == "amp_fp16" else "FP32", str(m["num_gpus"]),
           str(m["batch_per_gpu"]))
    hits = [steady for figure, steady in logs.get(key, []) if abs(int(figure) - m["value"]) < 1.01]
    return hits[0] if hits else None


def steady_medians(shared):
    """{member key: (published median, steady median, members replaced, members)} of the configs
    whose median holds a Lambda NGC 20.01 SQuAD figure with a log (the medians calibration.csv and
    make_holdout.py take of the same members)."""
    gpus = dle_measurements.gpu_lookup(os.path.join(root_dir(), "models", "gpus.csv"))
    logs = steady_logs(os.path.join(root_dir(), "tools", "data", STEADY_2001))
    groups = {}
    for m in dle_measurements.map_rows(shared, gpus)[0]:
        steady = steady_member(m, logs)
        key = tuple(str(m[c]) for c in MEMBER_KEY)
        groups.setdefault(key, []).append((m["value"], steady))
    out = {}
    for key, members in groups.items():
        replaced = sum(s is not None for _, s in members)
        if replaced:
            out[key] = (statistics.median(v for v, _ in members),
                        statistics.median(v if s is None else s for v, s in members), replaced, len(members))
    return out


def steady_value(run, key, published, medians):
    """The run (after convert(), which reads the published value: torch_of_lambda_rows matches on
    it) with its median's NGC 20.01 figures replaced by their logs' steady rates; key and
    published are its calibration.csv row's (MEMBER_KEY's names, before convert()).  A part
    split_by_run gave another value keeps it."""
    hit = medians.get(key)
    if hit is None or abs(hit[0] - published) > 0.011 or abs(float(run["value"]) - published) > 0.011:
        return run
    old, new, replaced, members = hit
    return dict(run, value="%.1f" % new,
                source=run["source"] + " (the steady rate of %d of its %d runs' logs for their NGC 20.01 figure: "
                "tools/data/%s)" % (replaced, members, STEADY_2001))


SQUAD_V11_TRAIN_FEATURES = 88641  # run_squad.py's "training_features : 88641" (seq 384, stride 128)


def squad_steps_run(config, num_gpus, batch):
    """(steps run, max_steps) of a run_squad.py run from its config (a row of
    tools/data/lambda_v0_squad_steps.csv): each rank's DistributedSampler share of the training
    features in batches, for the config's epochs, cut at max_steps.  It gives STEP_COUNT's three
    rows (test_make_holdout.py checks it)."""
    per_epoch = math.ceil(math.ceil(SQUAD_V11_TRAIN_FEATURES / num_gpus) / batch)
    max_steps = int(config["max_steps"])
    return min(max_steps, int(float(config["epochs"]) * per_epoch)), max_steps


def ran_on_one_gpu(row):
    """A multi-GPU Lambda row whose every source ran one GPU (ONE_GPU_FP32)."""
    return ("lambda:" in row["source"] and "nvidia:" not in row["source"] and row["num_gpus"] != "1"
            and (row["gpu"], row["model"], row["precision"], row["batch_per_gpu"]) in ONE_GPU_FP32)


def steps_run_value(row):
    """The row's value over the steps its run made, for STEP_COUNT rows (one Lambda source);
    after convert()."""
    key = (row["gpu"], row["model"], row["num_gpus"], row["precision"], row["batch_per_gpu"])
    if key not in STEP_COUNT or not row["source"].startswith("median of 1: lambda:"):
        return row
    ran, max_steps = STEP_COUNT[key]
    row["value"] = "%.1f" % (float(row["value"]) * ran / max_steps)
    row["source"] += " (x %d/%d; run_squad counts max_steps; the run made %d steps)" % (ran, max_steps, ran)
    return row


def made_elsewhere(row, others):
    """A Lambda row (one source) whose configuration is one of other_system_keys."""
    if not row["source"].startswith("median of 1: lambda:"):
        return False
    word = next((w for k, w in (("rtx3090", "3090"), ("rtx2080ti", "2080"), ("v100", "V100"), ("a100", "A100"))
                 if row["gpu"].startswith(k)), None)
    return (word, row["num_gpus"], row["precision"], row["batch_per_gpu"], row["model"]) in others


def binned_phase2(row, containers):
    """A phase-2 pre-training row whose every NVIDIA source is a pytorch:21.11 table (LDDL bins)."""
    paths = re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"])
    if row["task"] != "pretrain" or row["seq_len"] != "512" or not paths or "lambda:" in row["source"]:
        return False
    names = set().union(*(containers.get(p, {"?"}) for p in paths))
    return all(n.startswith("pytorch:21.") for n in names)


APEX_DDP_BUCKET_MB = "476.837"  # apex DDP message_size=250000000 fp16 elements, in MiB


def gradient_reduction_of(row, containers):
    """(grad_buckets, bucket_cap_mb) of a multi-GPU BERT pre-training row of NVIDIA's tables, as its
    run_pretraining.py reduces the gradients (see the module docstring); ("", "") otherwise."""
    paths = re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"])
    if (row["task"] != "pretrain" or row["num_gpus"] == "1" or not paths or "lambda:" in row["source"]
            or not row["model"].startswith("bert")):
        return "", ""
    names = set().union(*(containers.get(p, {"?"}) for p in paths))
    if all(n.startswith("pytorch:21.") for n in names):
        return "1", ""
    if all(n.startswith("pytorch:19.07") for n in names) and row["precision"] == "amp_fp16":
        return "1", ""  # run.sub @6fe463fe: --allreduce_post_accumulation, which that code never turns off
    if all(re.match(r"pytorch:(19|20)\.", n) for n in names):
        return ("", APEX_DDP_BUCKET_MB) if row["grad_accum"] == "1" else ("1", "")
    return "", ""


# The PyTorch release of each NGC PyTorch container the rows ran (NVIDIA's PyTorch Release Notes,
# "Contents of the PyTorch container" of each release; Lambda's measurement files name the same
# builds in their framework column: 20.01 1.4.0a0+a5b4d78, 20.10 1.7.0a0+7036e91, 21.03
# 1.9.0a0+df837d0, 21.07 1.10.0a0+ecc3718, 22.09 1.13.0a0+d0d6b1f).  An "a0" build is the main
# branch before that release, so it is priced as the release before it where a rule's change
# came later (none of the rules in models/constants.csv falls inside one of these builds).
NGC_TORCH = {"19.07": "1.2", "20.01": "1.4", "20.06": "1.6", "20.10": "1.7", "21.03": "1.9", "21.07": "1.10",
             "21.11": "1.11", "22.09": "1.13", "22.10": "1.13"}
FRAMEWORK_TORCH = re.compile(r"(\d+\.\d+)\.\d+a0")


def torch_of_lambda_rows(meas_dir):
    """{(model, GPUs, precision, per-GPU batch): [(value, the PyTorch releases its framework column
    names)]} of Lambda's measurement rows."""
    found = {}
    for model, m in lambda_rows(meas_dir):
        try:
            value = round(float(m["value"]), 1)
        except ValueError:
            continue
        key = (model, m["num_gpus"], m["precision"], m["per_gpu_batch"])
        found.setdefault(key, []).append((value, set(FRAMEWORK_TORCH.findall(m["framework"]))))
    return found


def lambda_torch_of(lambda_torch, row, prec):
    """The releases of the Lambda measurement rows a calibration row's value is the median of: one
    row of the same value, or two whose mean it is ("median of 2")."""
    runs = lambda_torch.get((row["model"], row["num_gpus"], prec, row["batch_per_gpu"]), [])
    value = float(row["value"])
    one = set().union(*(v for x, v in runs if abs(x - value) < 0.051))
    if one or not row["source"].startswith("median of 2:"):
        return one
    return set().union(*(a[1] | b[1] for i, a in enumerate(runs) for b in runs[i + 1:]
                         if abs((a[0] + b[0]) / 2 - value) < 0.051))


def release_key(version):
    return tuple(int(x) for x in version.split("."))


def container_torch(name):
    """The PyTorch release of an NGC container name ("pytorch:20.06-py3"), "" when not known."""
    hit = re.search(r"(\d\d\.\d\d)", name)
    return NGC_TORCH.get(hit.group(1), "") if hit else ""


def torch_version_of(row, containers, lambda_torch):
    """The PyTorch release a row's sources ran: the oldest named by its NVIDIA tables' containers
    and its matched Lambda measurement row's framework; "" when no source names one (medians of
    several Lambda runs, unmatched)."""
    found = set()
    for p in re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"]):
        for name in containers.get(p, ()):
            if container_torch(name):
                found.add(container_torch(name))
    if "lambda:" in row["source"]:
        precs = ("amp_fp16", "fp16") if row["precision"] in ("amp_fp16", "fp16") else (row["precision"],)
        for prec in precs:
            found |= lambda_torch_of(lambda_torch, row, prec)
    return min(found, key=release_key) if found else ""


def optimizer_loop_of(row, containers):
    """(optimizer, clip_impl, zero_grad, master_weights) as the BERT scripts run them (module
    docstring); the row's optimizer and the defaults otherwise."""
    fp16 = row["precision"] == "fp16"
    if row["model"].startswith("bert") and row["task"] == "squad":
        return ("adamw_apex_fused" if fp16 else "bertadam"), "multi_tensor", "", "1" if fp16 else ""
    if row["model"].startswith("bert") and row["task"] == "pretrain":
        paths = re.findall(r"nvidia:(\S+?\.md#L\d+)", row["source"])
        names = set().union(*(containers.get(p, {"?"}) for p in paths)) if paths else set()
        amp_o2 = fp16 and names and all(re.match(r"pytorch:(19|20)\.", n) for n in names)
        return row["optimizer"], "", "set_to_none", "1" if amp_o2 else ""
    return row["optimizer"], "", "", ""


# Lambda's machines that ran multi-GPU runs with every gradient byte through host memory (the v1
# harness's NCCL_P2P_DISABLE=1; GeForce cards, which have no PCIe peer-to-peer) and whose
# sys_pytorch.txt (lambdal/deeplearning-benchmark pytorch/results/<system>/) names an AMD EPYC GPU
# server: models/hosts.csv `server-epyc`, whose through-host rate is below the GPU link's.  Only
# these rows carry a host, the only ones its rate prices.  gpu -> (the harness, None for any: the
# RTX 3070 and 3090 rows are all v0, whose lookup misses some AMP rows; GPU counts; systems).
EPYC_THROUGH_HOST = {
    "a100-sxm4-80gb": ("v1", ("2", "4", "8"), "2x/4x/8xA100_80GB_SXM4_v1: Supermicro H12DGO-6, 2x EPYC 7H12"),
    "a100-pcie-80gb": ("v1", ("2",), "2xA100_80GB_PCIe_v1: Gigabyte MZ22-G20, EPYC 7502"),
    "rtx-a6000": ("v1", ("2",), "2xA6000_v1: Gigabyte MZ22-G20, EPYC 7502"),
    "rtx3070": (None, ("2", "4", "8"), "2x/4x/8x3070: Supermicro H12DSG-O-CPU, 2x EPYC 7502"),
    # 2x3090's and 3x3090's sys_pytorch.txt name an ASRock TRX40 Creator (Threadripper 3970X)
    "rtx3090": (None, ("4", "8"), "4x/8x3090: Gigabyte MZ52-G40, 2x EPYC 7662"),
}


def host_of(row, kind):
    """`server-epyc` for a multi-GPU Lambda row of EPYC_THROUGH_HOST's machines, else '' (the default)."""
    if row["gpu"] not in EPYC_THROUGH_HOST or "lambda:" not in row["source"]:
        return ""
    harness, counts, _ = EPYC_THROUGH_HOST[row["gpu"]]
    return "server-epyc" if harness in (None, kind) and row["num_gpus"] in counts else ""


def convert(row, harness, accum, containers, values, lambda_torch):
    bert = row["model"].startswith("bert")
    row["memory_format"] = memory_format_of(row, values)
    if row["task"] == "pretrain":
        row["grad_accum"] = grad_accum_of(row, accum)
    row["mlm_all_positions"] = mlm_all_positions_of(row, containers)
    row["grad_buckets"], row["bucket_cap_mb"] = gradient_reduction_of(row, containers)
    row["max_grad_norm"] = "1" if bert and row["task"] == "squad" else ""
    kind = harness.get(harness_key(row)) if "lambda:" in row["source"] else None
    v1_multi = row["num_gpus"] != "1" and kind == "v1"
    row["topology"] = "pcie-host" if v1_multi or row.get("topology") == "pcie-host" else ""  # make_holdout's VM rows
    row["host"] = host_of(row, kind)
    row["attention"] = "eager" if bert else ""
    if bert and row["precision"] == "amp_fp16":
        row["precision"] = "fp16"
    row["gradient_as_bucket_view"] = "1" if bert and row["strategy"] == "ddp" else ""
    row["torch_version"] = torch_version_of(row, containers, lambda_torch)
    row["optimizer"], row["clip_impl"], row["zero_grad"], row["master_weights"] = optimizer_loop_of(row, containers)
    return row


ADDED_COLUMNS = ["topology", "host", "attention", "gradient_as_bucket_view", "memory_format", "mlm_all_positions",
                 "max_grad_norm", "grad_buckets", "bucket_cap_mb", "torch_version", "clip_impl", "zero_grad",
                 "master_weights"]


def as_run(rows, fields, shared):
    """Rows of calibration.csv's schema (dicts of strings) as their scripts ran them: the rows
    made of another system, LDDL-binned phase-2 rows and the one-GPU 2080 Ti rows dropped, the
    medians of tables that ran differently and the means of two machines' runs split, the added
    columns filled (module docstring).
    Returns (rows, fields); make_holdout.py puts its rows through the same."""
    mdir = os.path.join(shared, "data", "measurements")
    harness = harness_of_rows(mdir)
    accum = accumulation_of_readmes(mdir)
    others = other_system_keys(mdir)
    containers = containers_of_readmes(mdir)
    values = readme_values(mdir)
    lambda_torch = torch_of_lambda_rows(mdir)
    medians = steady_medians(shared)
    rows = [(r, tuple(r[c] for c in MEMBER_KEY), float(r["value"])) for r in rows]  # before convert() renames
    out = [steady_value(run, key, published, medians) for r, key, published in rows
           if not made_elsewhere(r, others) and not binned_phase2(r, containers) and not ran_on_one_gpu(r)
           for part in split_by_run(r, values, accum, containers)
           for run in split_by_machine(steps_run_value(convert(part, harness, accum, containers, values, lambda_torch)))]
    fields = list(fields)
    for c in ADDED_COLUMNS:
        fields.insert(fields.index("metric"), c)
    return out, fields


def write_csv(dst, fields, rows, check):
    """Write rows to dst atomically; with check, compare with dst instead (0 same, 1 differs)."""
    tmp = dst + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    if check:
        with open(tmp, "rb") as a, open(dst, "rb") as b:
            same = a.read() == b.read()
        os.remove(tmp)
        print("%s %s what the rules make" % (dst, "is" if same else "differs from"))
        return 0 if same else 1
    os.replace(tmp, dst)
    print("wrote %s (%d rows)" % (dst, len(rows)))
    return 0


def main(argv):
    shared = os.path.join(root_dir(), "..", "shared")
    check = len(argv) == 2 and argv[1] == "--check"
    if len(argv) == 3 and argv[1] == "--shared":
        shared = argv[2]
    elif len(argv) != 1 and not check:
        sys.stderr.write(__doc__)
        return 2
    src = os.path.join(shared, "data", "runs", "calibration.csv")
    dst = os.path.join(root_dir(), "bench", "data", "calibration_dle.csv")
    if check and not os.path.exists(src):
        print("make_dle_runs: no %s; nothing to check" % src)
        return 77
    with open(src, newline="") as f:
        reader = csv.DictReader(f)
        rows, fields = as_run(reader, reader.fieldnames, shared)
    return write_csv(dst, fields, rows, check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
