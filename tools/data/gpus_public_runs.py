"""GPU profile rows, part 3: GPUs of the stack's public runs (issue 19: TITAN RTX, RTX 2060 SUPER,
RTX 3080 Ti Laptop) and of Lambda's public benchmarks (Quadro RTX 8000/6000/5000, RTX A4000-A5500,
RTX 3070/3080, V100 SXM3).

Mostly spec-sheet peaks with their arithmetic and datasheet keys; efficiencies are the nearest
measured sibling's (measured=0) unless a row cites its own measurement (measured=1).  Source keys:
models/README.md "Source keys"; the data in ../shared/data/hardware/{gpus.csv,microbench.csv}.
The V100 SXM3 rows reuse the V100 groups of gpus_original.  Importing the module appends its rows
to gpus_common.ROWS; make_gpus.py writes them.
"""
from gpus_common import G, GDDR_EFF, MiB, T, eff, gpu, med
from gpus_original import V100, V100_SXM


# ---------------------------------------------------------------- issue 19: GPUs of the stack's public runs
# Spec-sheet figures only (measured=0: efficiencies are architecture priors, predictions warn),
# unless a row says measured=1.
# Turing consumer/prosumer (TU102/TU106), figures from NV-TU-WP appendix tables.  The TITAN RTX's
# GEMM rates since stop 65: ZZC #127 (torch 2.7, cu128; its summary row "| NVIDIA TITAN RTX | 11.91 |
# 8.79 | 66.32 | 5.01 |", the largest rate of each dtype over N = 1024-10240, as the 2080 Ti's):
# FP16 66.32 TF is 0.51 of the full-rate 130.5 (its sizes run 40-66 TF: a card at its power
# limit), FP32 11.91 of 16.3.  Before, priors: SIMT 0.9 (2080 Ti), tensor 0.78 (V100).
TITAN_RTX_FP32_TF, TITAN_RTX_FP16_TF, TITAN_RTX_BF16_EMU_TF = 11.91, 66.32, 5.01   # ZZC #127
gpu(id="titan-rtx", name="NVIDIA TITAN RTX",
    aliases="TITAN RTX;Titan RTX;NVIDIA Titan RTX",
    architecture="turing", compute_capability="7.5", sm_count=72,
    peak_fp32_flop_per_s=16.3 * T, peak_tf32_flop_per_s=0,
    peak_fp16_flop_per_s=130.5 * T,             # full-rate FP32 accumulate (not halved as on GeForce)
    peak_bf16_flop_per_s=0,
    emulated_bf16_flop_per_s=TITAN_RTX_BF16_EMU_TF * T,              # ZZC #127
    gemm_eff_fp32_frac=eff(TITAN_RTX_FP32_TF, 16.3),                 # ZZC #127
    gemm_eff_tf32_frac=eff(TITAN_RTX_FP32_TF, 16.3),                 # no TF32: runs as FP32
    gemm_eff_fp16_frac=eff(TITAN_RTX_FP16_TF, 130.5),                # ZZC #127
    gemm_eff_bf16_frac=1.0,
    memory_bytes=24576 * MiB,
    memory_bandwidth_bytes_per_s=672 * G, memory_eff_frac=GDDR_EFF,
    l2_bytes=6 * MiB, pcie_gen=3,
    nvlink_bytes_per_s=50 * G,                  # NVLink2 bridge, pairs: 100 GB/s total
    p2p=0, default_topology="pcie-host", measured=1,
    source="NV-TU-WP;ZZC")
gpu(id="rtx2060-super", name="NVIDIA GeForce RTX 2060 SUPER",
    aliases="GeForce RTX 2060 SUPER;RTX 2060 SUPER;RTX 2060 8GB;RTX2060S",
    architecture="turing", compute_capability="7.5", sm_count=34,
    peak_fp32_flop_per_s=7.2 * T, peak_tf32_flop_per_s=0,
    peak_fp16_flop_per_s=28.7 * T,              # GeForce: FP32-accumulate tensor math at half rate
    peak_bf16_flop_per_s=0,
    emulated_bf16_flop_per_s=round(7.1 * 7.2 / 13.4, 1) * T,
    gemm_eff_fp32_frac=0.9, gemm_eff_tf32_frac=0.9,          # prior: Turing SIMT (2080 Ti 0.92)
    gemm_eff_fp16_frac=1.0,                     # prior: GeForce Turing boosts past its half-rate spec (2080 Ti 1.07)
    gemm_eff_bf16_frac=1.0,
    memory_bytes=8192 * MiB,
    memory_bandwidth_bytes_per_s=448 * G, memory_eff_frac=GDDR_EFF,
    l2_bytes=4 * MiB, pcie_gen=3,
    nvlink_bytes_per_s=0, p2p=0, default_topology="pcie-host", measured=0,
    source="NV-TU-WP")
# Ampere laptop GPU (GA103, 58 SMs, 16 GB GDDR6 256-bit at 16 Gbps), at its highest boost clock
# (1590 MHz; the TGP the laptop ran at is not known): 58 x 128 x 2 x 1.59 GHz = 23.6 TF FP32.
gpu(id="rtx3080ti-laptop-16gb", name="NVIDIA GeForce RTX 3080 Ti Laptop GPU",
    aliases="GeForce RTX 3080 Ti Laptop GPU;RTX 3080 Ti Laptop;RTX 3080 Ti 16GB",
    architecture="ampere", compute_capability="8.6", sm_count=58,
    peak_fp32_flop_per_s=23.6 * T, peak_tf32_flop_per_s=23.6 * T,
    peak_fp16_flop_per_s=47.2 * T, peak_bf16_flop_per_s=47.2 * T,   # 2x FP32, as on the RTX 3090
    gemm_eff_fp32_frac=0.6, gemm_eff_tf32_frac=0.8,           # priors: a power-limited laptop part
    gemm_eff_fp16_frac=0.8, gemm_eff_bf16_frac=0.8,
    memory_bytes=16384 * MiB,
    memory_bandwidth_bytes_per_s=512 * G, memory_eff_frac=GDDR_EFF,
    l2_bytes=4 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=0, p2p=0, default_topology="pcie-host", measured=0,
    source="NV-GA102-WP;NV-3080TI-LAPTOP")

# ---------------------------------------------------------------- issue 19 follow-up: Lambda benchmark GPUs
# GPUs of Lambda Labs' public benchmark measurements (../shared/data/measurements/lambda_v0_pytorch_dle.csv,
# column gpu, and nvidia_dle_readmes.csv for the V100 SXM3) without a profile so far.  Spec-sheet peaks only
# (dense, no sparsity), the arithmetic next to each; measured=0: every efficiency is the nearest measured
# sibling's (named per group), and predictions on these rows warn.  Laptop Max-Q parts and the GTX 1080 Ti
# are not added.
#
# Quadro RTX (Turing, professional): full-rate FP32-accumulate tensor math, as on the TITAN RTX, so the
# TITAN RTX's measured efficiencies (ZZC #127: FP32 0.73, FP16 0.51; stop 65, before: SIMT 0.9 from the
# 2080 Ti, tensor 0.78 from the V100) and its emulated BF16 rate x the FP32 ratio.
# Professional cards: P2P over PCIe and a PCIe GPU server, as the RTX A6000.
QRTX = dict(architecture="turing", compute_capability="7.5",
            peak_tf32_flop_per_s=0, peak_bf16_flop_per_s=0,
            gemm_eff_fp32_frac=eff(TITAN_RTX_FP32_TF, 16.3),     # the TITAN RTX's (ZZC #127); no TF32
            gemm_eff_tf32_frac=eff(TITAN_RTX_FP32_TF, 16.3),
            gemm_eff_fp16_frac=eff(TITAN_RTX_FP16_TF, 130.5),    # the TITAN RTX's (ZZC #127)
            gemm_eff_bf16_frac=1.0,                              # relative to the emulated rate
            memory_eff_frac=GDDR_EFF, pcie_gen=3,
            default_topology="pcie-switch", measured=0)
# TU102, 72 SMs: 72 x 64 x 2 x 1.770 GHz = 16.3 TF FP32; 576 tensor cores x 64 FMA x 2 x 1.770 = 130.5 TF
# (FP16 with FP16 or FP32 accumulate); 384-bit GDDR6 at 14 Gbps = 672 GB/s; NVLink bridge 100 GB/s for 2.
gpu(id="quadro-rtx8000", name="NVIDIA Quadro RTX 8000",
    aliases="Quadro RTX 8000;Quadro RTX8000;RTX 8000", **QRTX, sm_count=72,
    peak_fp32_flop_per_s=16.3 * T, peak_fp16_flop_per_s=130.5 * T,        # NV-QRTX8000-DS
    emulated_bf16_flop_per_s=TITAN_RTX_BF16_EMU_TF * T,                  # as titan-rtx (same peaks)
    memory_bytes=48 * 1024 * MiB,               # nominal 48 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=672 * G, l2_bytes=6 * MiB,
    nvlink_bytes_per_s=50 * G,                  # NVLink2 bridge, pairs: 100 GB/s total / 2
    source="NV-QRTX8000-DS;NV-TU-WP")
# The actively cooled card (the workstation part): the passive server board is rated lower
# (NV-QRTX6000-DS passive: 14.9 TF FP32, 119.4 tensor, 624 GB/s at 250 W).
gpu(id="quadro-rtx6000", name="NVIDIA Quadro RTX 6000",
    aliases="Quadro RTX 6000;Quadro RTX6000", **QRTX, sm_count=72,
    peak_fp32_flop_per_s=16.3 * T, peak_fp16_flop_per_s=130.5 * T,        # NV-QRTX6000-DS (as the 8000)
    emulated_bf16_flop_per_s=TITAN_RTX_BF16_EMU_TF * T,
    memory_bytes=24 * 1024 * MiB,               # nominal 24 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=672 * G, l2_bytes=6 * MiB,
    nvlink_bytes_per_s=50 * G,                  # NVLink2 bridge, pairs: 100 GB/s total / 2
    source="NV-QRTX6000-DS;NV-TU-WP")
# TU104, 48 SMs: 48 x 64 x 2 x 1.815 GHz = 11.2 TF FP32; 384 tensor cores x 64 x 2 x 1.815 = 89.2 TF;
# 256-bit GDDR6 at 14 Gbps = 448 GB/s; NVLink bridge for 2 cards, 50 GB/s bidirectional.
gpu(id="quadro-rtx5000", name="NVIDIA Quadro RTX 5000",
    aliases="Quadro RTX 5000;Quadro RTX5000", **QRTX, sm_count=48,
    peak_fp32_flop_per_s=11.2 * T, peak_fp16_flop_per_s=89.2 * T,          # NV-QRTX5000-DS
    emulated_bf16_flop_per_s=round(TITAN_RTX_BF16_EMU_TF * 11.2 / 16.3, 2) * T,
    memory_bytes=16 * 1024 * MiB,               # nominal 16 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=448 * G, l2_bytes=4 * MiB,
    nvlink_bytes_per_s=25 * G,                  # NVLink2 bridge, pairs: 50 GB/s total / 2
    source="NV-QRTX5000-DS;NV-TU-WP")

# Professional RTX A-series (Ampere GA102/GA104): full-rate FP32-accumulate tensor math like the RTX A6000
# and A40, so the RTX A6000's measured efficiencies (ZZC #46; TF32 and memory from the A40, ZZC #185 and
# GPUB).  Datasheets give tensor TFLOPS with sparsity: dense FP16/BF16 = half, TF32 = a quarter
# (per SM 4 tensor cores x 128 dense FP16 FMA x 2).  L2 512 KiB per 32-bit memory controller (NV-GA102-WP).
RTXA = dict(architecture="ampere", compute_capability="8.6",
            gemm_eff_fp32_frac=eff(23.92, 38.7),                 # RTX A6000, ZZC #46
            gemm_eff_tf32_frac=eff(59.52, 74.8),                 # A40, ZZC #185
            gemm_eff_fp16_frac=eff(120.49, 154.8), gemm_eff_bf16_frac=eff(123.34, 154.8),   # ZZC #46
            memory_eff_frac=0.94,                                # A40 (GPUB), as rtx-a6000
            pcie_gen=4, default_topology="pcie-switch", measured=0)
RTXA_SRC = ";NV-GA102-WP;ZZC-46;ZZC-185;GPUB"
# GA104, 48 SMs: 48 x 128 x 2 x 1.560 GHz = 19.2 TF FP32; 153.4 TF tensor with sparsity -> 76.7 FP16/BF16
# (48 x 4 x 256 x 1.560), 38.35 TF32; 256-bit GDDR6 at 14 Gbps = 448 GB/s; no NVLink (single slot).
# Its own GEMM rates since stop 65 (the TITAN RTX's rule: a public per-GPU measurement replaces the
# sibling's): ZZC #97 (torch 2.8, cu129, in a VM), its summary row "| NVIDIA RTX A4000 | 11.90 | 34.32 |
# 65.44 | 62.78 |", the largest rate of each dtype over N = 1024-10240.
RTXA4000 = dict(RTXA, gemm_eff_fp32_frac=eff(11.90, 19.2), gemm_eff_tf32_frac=eff(34.32, 38.35),
                gemm_eff_fp16_frac=eff(65.44, 76.7), gemm_eff_bf16_frac=eff(62.78, 76.7), measured=1)
gpu(id="rtx-a4000", name="NVIDIA RTX A4000",
    aliases="RTX A4000;A4000;RTXA4000;NVIDIA RTX A4000 16GB", **RTXA4000, sm_count=48,
    peak_fp32_flop_per_s=19.2 * T, peak_tf32_flop_per_s=38.35 * T,        # NV-RTXA4000-DS
    peak_fp16_flop_per_s=76.7 * T, peak_bf16_flop_per_s=76.7 * T,
    memory_bytes=16 * 1024 * MiB,               # nominal 16 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=448 * G, l2_bytes=4 * MiB,
    nvlink_bytes_per_s=0,
    source="NV-RTXA4000-DS;ZZC" + RTXA_SRC)
# GA102, 56 SMs: 56 x 128 x 2 x 1.650 GHz = 23.7 TF FP32; 189.2 TF tensor with sparsity -> 94.6 FP16/BF16
# (56 x 4 x 256 x 1.650), 47.3 TF32; 320-bit GDDR6 at 16 Gbps = 640 GB/s, 10 controllers -> 5 MiB L2.
gpu(id="rtx-a4500", name="NVIDIA RTX A4500",
    aliases="RTX A4500;A4500;RTXA4500;NVIDIA RTX A4500 20GB", **RTXA, sm_count=56,
    peak_fp32_flop_per_s=23.7 * T, peak_tf32_flop_per_s=47.3 * T,         # NV-RTXA4500-DS
    peak_fp16_flop_per_s=94.6 * T, peak_bf16_flop_per_s=94.6 * T,
    memory_bytes=20 * 1024 * MiB,               # nominal 20 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=640 * G, l2_bytes=5 * MiB,
    nvlink_bytes_per_s=56.25 * G,               # NVLink bridge, pairs: 112.5 GB/s total / 2
    source="NV-RTXA4500-DS" + RTXA_SRC)
# GA102, 64 SMs: 64 x 128 x 2 x 1.695 GHz = 27.8 TF FP32; 222.2 TF tensor with sparsity -> 111.1 FP16/BF16
# (64 x 4 x 256 x 1.695), 55.55 TF32; 384-bit GDDR6 at 16 Gbps = 768 GB/s.
gpu(id="rtx-a5000", name="NVIDIA RTX A5000",
    aliases="RTX A5000;A5000;RTXA5000;NVIDIA RTX A5000 24GB", **RTXA, sm_count=64,
    peak_fp32_flop_per_s=27.8 * T, peak_tf32_flop_per_s=55.55 * T,        # NV-RTXA5000-DS
    peak_fp16_flop_per_s=111.1 * T, peak_bf16_flop_per_s=111.1 * T,
    memory_bytes=24 * 1024 * MiB,               # nominal 24 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=768 * G, l2_bytes=6 * MiB,
    nvlink_bytes_per_s=56.25 * G,               # NVLink bridge, pairs: 112.5 GB/s total / 2
    source="NV-RTXA5000-DS" + RTXA_SRC)
# GA102, 80 SMs: 80 x 128 x 2 x 1.665 GHz = 34.1 TF FP32; 272.8 TF tensor with sparsity -> 136.4 FP16/BF16
# (80 x 4 x 256 x 1.665), 68.2 TF32; 384-bit GDDR6 at 16 Gbps = 768 GB/s.
gpu(id="rtx-a5500", name="NVIDIA RTX A5500",
    aliases="RTX A5500;A5500;RTXA5500;NVIDIA RTX A5500 24GB", **RTXA, sm_count=80,
    peak_fp32_flop_per_s=34.1 * T, peak_tf32_flop_per_s=68.2 * T,         # NV-RTXA5500-DS
    peak_fp16_flop_per_s=136.4 * T, peak_bf16_flop_per_s=136.4 * T,
    memory_bytes=24 * 1024 * MiB,               # nominal 24 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=768 * G, l2_bytes=6 * MiB,
    nvlink_bytes_per_s=56.25 * G,               # NVLink bridge, pairs: 112.5 GB/s total / 2
    source="NV-RTXA5500-DS" + RTXA_SRC)

# GeForce RTX 30 (Ampere): FP32-accumulate tensor math at half rate (TF32 = FP32 rate), as the RTX 3090,
# whose measured efficiencies (ZZC x2; TF32 MLI 3090 Ti; memory CHS copy) are copied; no P2P, a workstation.
RTX30 = dict(architecture="ampere", compute_capability="8.6",
             gemm_eff_fp32_frac=eff(med(24.46, 24.84), 35.6),             # RTX 3090, ZZC x2
             gemm_eff_tf32_frac=eff(42, 40),                              # RTX 3090's (MLI 3090 Ti proxy)
             gemm_eff_fp16_frac=eff(med(75.64, 75.88), 71),               # RTX 3090, ZZC x2
             gemm_eff_bf16_frac=eff(med(76.34, 76.68), 71),               # RTX 3090, ZZC x2
             memory_eff_frac=eff(831, 936),                               # RTX 3090, CHS copy
             pcie_gen=4, nvlink_bytes_per_s=0, p2p=0, default_topology="pcie-host", measured=0)
# GA104, 46 SMs: 46 x 128 x 2 x 1.725 GHz = 20.3 TF FP32 (= TF32); FP16/BF16 tensor with FP32 accumulate
# 46 x 4 x 128 x 1.725 = 40.6 TF (81.3 with FP16 accumulate); 256-bit GDDR6 at 14 Gbps = 448 GB/s.
gpu(id="rtx3070", name="NVIDIA GeForce RTX 3070",
    aliases="GeForce RTX 3070;RTX 3070;RTX3070", **RTX30, sm_count=46,
    peak_fp32_flop_per_s=20.3 * T, peak_tf32_flop_per_s=20.3 * T,         # NV-GA102-WP appendix A
    peak_fp16_flop_per_s=40.6 * T, peak_bf16_flop_per_s=40.6 * T,
    memory_bytes=8 * 1024 * MiB,                # nominal 8 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=448 * G, l2_bytes=4 * MiB,
    source="NV-GA102-WP;ZZC;MLI;CHS")
# GA102, 68 SMs: 68 x 128 x 2 x 1.710 GHz = 29.8 TF FP32 (= TF32); FP16/BF16 tensor with FP32 accumulate
# 68 x 4 x 128 x 1.710 = 59.5 TF (119 with FP16 accumulate); 320-bit GDDR6X at 19 Gbps = 760 GB/s; 5 MiB L2.
gpu(id="rtx3080", name="NVIDIA GeForce RTX 3080",
    aliases="GeForce RTX 3080;RTX 3080;RTX3080;RTX 3080 10GB", **RTX30, sm_count=68,
    peak_fp32_flop_per_s=29.8 * T, peak_tf32_flop_per_s=29.8 * T,         # NV-GA102-WP table 1
    peak_fp16_flop_per_s=59.5 * T, peak_bf16_flop_per_s=59.5 * T,
    memory_bytes=10 * 1024 * MiB,               # nominal 10 GB GDDR6X (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=760 * G, l2_bytes=5 * MiB,
    source="NV-GA102-WP;ZZC;MLI;CHS")

# V100 SXM3 (DGX-2, DGX-2H): the GV100 of the V100 SXM2 (80 SMs, 32 GB HBM2 at 900 GB/s) on the DGX-2's
# NVSwitch baseboards; each GPU's six NVLink2 links (300 GB/s total, 150 per direction, the SXM2's
# figure) go into the switches, so every pair talks at the full rate.  Efficiencies: the V100 SXM2's
# (ZZC #140), not measured on SXM3.
V100_SXM3 = dict(V100_SXM, measured=0)
# DGX-2: 2 PFLOPS tensor over 16 GPUs = 125 TF each, the SXM2's rate (1530 MHz): FP32 15.7.
gpu(id="v100-sxm3-32gb", name="Tesla V100-SXM3-32GB",
    aliases="V100-SXM3-32GB;NVIDIA V100-SXM3-32GB;V100-SXM3-32GB (DGX-2)", **V100, **V100_SXM3,
    memory_bytes=32 * 1024 * MiB,               # nominal 32 GiB (nvidia-smi total not verified)
    source="NV-DGX2-DS;NV-V100-DS;ZZC;GPUB")
# DGX-2H (450 W per GPU): 2.1 PFLOPS tensor / 16 = 131.25 TF each = 640 tensor cores x 128 x 1.602 GHz;
# FP32 at the same clock: 80 x 64 x 2 x 1.602 = 16.4 TF (131.25 / 8, Volta's tensor:FP32 ratio);
# emulated BF16: the SXM2's 10.34 TF x 131.25 / 125.
gpu(id="v100-sxm3-32gb-h", name="Tesla V100-SXM3-32GB-H",
    aliases="V100-SXM3-32GB-H (450W);V100-SXM3-32GB-H;NVIDIA V100-SXM3-32GB-H;V100-SXM3-32GB-H (DGX-2H)",
    **V100, **dict(V100_SXM3, peak_fp32_flop_per_s=16.4 * T, peak_fp16_flop_per_s=131.25 * T,
                   emulated_bf16_flop_per_s=round(10.34 * 131.25 / 125, 1) * T),
    memory_bytes=32 * 1024 * MiB,               # nominal 32 GiB (nvidia-smi total not verified)
    source="NV-DGX2H-DS;NV-DGX2-DS;NV-V100-DS;ZZC;GPUB")
