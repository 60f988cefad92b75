#!/usr/bin/env python3
"""Regenerate models/gpus.csv (hardware profiles) from the figures below.

Every number here is taken from ../shared/data/hardware/{gpus.csv,microbench.csv}
(or, for nvidia-smi memory totals, from public nvidia-smi printouts: key NVSMI);
the measured value and the peak it is divided by are written out so the ratio
can be checked by hand.  Python 3 stdlib only.

    python3 tools/data/make_gpus.py            # writes models/gpus.csv
    python3 tools/data/make_gpus.py --check    # only validates, prints a table
"""
import csv
import io
import math
import os
import statistics
import sys

T = 1e12          # TFLOP/s -> FLOP/s
G = 1e9           # GB/s   -> B/s
MiB = 1 << 20

COLUMNS = ["id", "name", "aliases", "architecture", "compute_capability", "sm_count",
           "peak_fp32_flop_per_s", "peak_tf32_flop_per_s", "peak_fp16_flop_per_s",
           "peak_bf16_flop_per_s", "emulated_bf16_flop_per_s",
           "gemm_eff_fp32_frac", "gemm_eff_tf32_frac", "gemm_eff_fp16_frac", "gemm_eff_bf16_frac",
           "peak_fp8_flop_per_s", "gemm_eff_fp8_frac",
           "memory_bytes", "memory_bandwidth_bytes_per_s", "memory_eff_frac", "l2_bytes",
           "pcie_gen", "pcie_lanes", "h2d_pinned_bytes_per_s", "h2d_pageable_bytes_per_s",
           "nvlink_bytes_per_s", "p2p", "gpus_per_board", "default_topology",
           "kernel_floor_s", "measured", "refuse", "source"]

# PCIe defaults (README section 2.4) when nothing was measured for the card:
PINNED = {3: 12.5 * G, 4: 24 * G, 5: 52 * G}     # x16
PAGEABLE_FRAC = 0.6                               # pageable ~0.54-0.77x pinned (RTX 4090 data)
HBM_EFF, GDDR_EFF = 0.85, 0.78                    # memory_eff defaults (README 2.3)
FLOOR = 2.5e-6                                    # GPU back-to-back kernel floor default


def eff(measured_tflops, peak_tflops):
    """Achieved fraction of a dense peak, rounded to 2 digits."""
    return round(measured_tflops / peak_tflops, 2)


def med(*xs):
    return statistics.median(xs)


ROWS = []


# FP8 tensor cores (Ada, Hopper, Blackwell, CDNA3): dense peaks with FP32 accumulate (what
# Transformer Engine's GEMMs use), 0 without FP8.  Efficiency: MAMF-measured on H100 SXM
# (1402.6 of 1979 TF) and H200 SXM (1453.4 of 1979), MLE-ACC; GH200 (1535.0), B200 (3432.5 of
# 4500) and GB200 (3615.6 of 5000), MLE-ACC26's FP8 table; elsewhere a proxy, the GPU's own
# bf16 efficiency scaled by the H100's FP8/bf16 ratio (0.71 / 0.80: FP8 GEMMs reach a smaller
# share of their doubled peak).
FP8_OVER_BF16_EFF = eff(1402.6, 1978.9) / eff(med(794.5, 797.51, 783.66), 989.4)


def fp8(kw, peak_tflops, measured_tflops=None):
    """FP8 columns: the dense peak and its measured efficiency, or the proxy above."""
    kw["peak_fp8_flop_per_s"] = peak_tflops * T
    kw["gemm_eff_fp8_frac"] = (eff(measured_tflops, peak_tflops) if measured_tflops
                               else round(kw["gemm_eff_bf16_frac"] * FP8_OVER_BF16_EFF, 2))


FP8_PEAKS = {   # id: (dense TF, measured TF or None), sources in each row's comment below
    # H100 SXM / H200 SXM / GH200: 3958 TF with sparsity (NV-H100-DS, NV-H200, NV-GH200) -> 1978.9
    # GH200: MLE-ACC26 FP8 MAMF 1535.0 (its 900 W 141 GiB version, as the bf16 row)
    "h100-sxm5-80gb": (1978.9, 1402.6), "h200-sxm-141gb": (1978.9, 1453.4), "gh200": (1978.9, 1535.0),
    "h100-pcie-80gb": (1513, None),      # NV-H100-DS: 3026 with sparsity
    "h100-sxm5-96gb-500w": (1978.9, None),  # the H100 SXM's (same GH100, 132 SMs); efficiency: proxy
    "h100-nvl": (1670.5, None), "h200-nvl": (1670.5, None),   # NV-H100-DS / NV-H200 NVL: 3341 sparse
    "b200": (4500, 3432.5),              # NV-BW-DS: 9 PF FP8 with sparsity per B200; MLE-ACC26 MAMF 3432.5
    "gb200": (5000, 3615.6),             # MLE-ACC26: 5000 dense per GPU (note 23); MAMF 3615.6
    "gb300": (5000, 3615.6),             # MLE-ACC26: 5000 (note 24); no GB300 MAMF: the GB200's
    "l4": (242.5, None), "l40s": (733, None),                 # NV-L4-DS 485 sparse; NV-L40S-DS 1466 sparse
    "rtx4090": (330.3, None),            # NV-ADA-WP: 330.3 dense with FP32 accumulate (660.6 FP16 acc)
    "rtx6000-ada": (728.5, None),        # NV-RTX6000ADA-DS: 1457 with sparsity
    "mi300x": (2614.9, None),            # AMD-MI300X: 2614.9 TF FP8 dense (5229.8 with sparsity)
}


def gpu(**kw):
    if kw["id"] in FP8_PEAKS:
        fp8(kw, *FP8_PEAKS[kw["id"]])
    kw.setdefault("peak_fp8_flop_per_s", 0)
    kw.setdefault("gemm_eff_fp8_frac", 0)
    kw.setdefault("pcie_lanes", 16)
    kw.setdefault("gpus_per_board", 1)
    kw.setdefault("p2p", 1)
    kw.setdefault("kernel_floor_s", FLOOR)
    kw.setdefault("emulated_bf16_flop_per_s", 0)
    kw.setdefault("refuse", "")
    gen = kw["pcie_gen"]
    if "h2d_pinned_bytes_per_s" not in kw:
        kw["h2d_pinned_bytes_per_s"] = PINNED[gen] * kw["pcie_lanes"] / 16
    if "h2d_pageable_bytes_per_s" not in kw:
        kw["h2d_pageable_bytes_per_s"] = round(PAGEABLE_FRAC * kw["h2d_pinned_bytes_per_s"] / 1e8) * 1e8
    ROWS.append(kw)


# ---------------------------------------------------------------- Turing / T4
gpu(id="t4", name="Tesla T4",
    aliases="T4;NVIDIA T4;NVIDIA Tesla T4;T4-16GB",
    architecture="turing", compute_capability="7.5", sm_count=40,
    peak_fp32_flop_per_s=8.1 * T, peak_tf32_flop_per_s=0, peak_fp16_flop_per_s=65 * T,
    peak_bf16_flop_per_s=0,
    emulated_bf16_flop_per_s=round(med(2.46, 2.27, 2.01, 2.25), 2) * T,  # ZZC x3 + CHS
    gemm_eff_fp32_frac=eff(4.43, 8.1),          # ZZC Kaggle best-over-N
    gemm_eff_tf32_frac=eff(4.43, 8.1),          # no TF32: runs as FP32
    gemm_eff_fp16_frac=eff(42.71, 65),          # ZZC Kaggle
    gemm_eff_bf16_frac=1.0,                     # relative to the emulated rate
    memory_bytes=15360 * MiB,                   # nvidia-smi total (NVSMI)
    memory_bandwidth_bytes_per_s=320 * G, memory_eff_frac=eff(240, 320),  # CHS crude copy
    l2_bytes=4 * MiB, pcie_gen=3,
    nvlink_bytes_per_s=0, default_topology="pcie-switch", measured=1,
    source="NV-T4-DS;TPU-T4;ZZC;CHS;NVSMI")

# ---------------------------------------------------------------- A16 (per GPU)
gpu(id="a16", name="NVIDIA A16",
    aliases="A16;NVIDIA A16 (per GPU);A16-16GB",
    architecture="ampere", compute_capability="8.6", sm_count=10,
    peak_fp32_flop_per_s=4.5 * T, peak_tf32_flop_per_s=9.0 * T, peak_fp16_flop_per_s=17.9 * T,
    peak_bf16_flop_per_s=17.9 * T,
    # nothing measured: power-capped PCIe inference part (~62 W per GPU) -> README 2.1
    # rule of thumb 0.5-0.7 for tensor GEMMs, Ampere SIMT FP32 0.5-0.7.
    gemm_eff_fp32_frac=0.55, gemm_eff_tf32_frac=0.55, gemm_eff_fp16_frac=0.60,
    gemm_eff_bf16_frac=0.60,
    memory_bytes=15356 * MiB,                   # nvidia-smi total (NVSMI)
    memory_bandwidth_bytes_per_s=200 * G, memory_eff_frac=GDDR_EFF,
    l2_bytes=2 * MiB, pcie_gen=4, pcie_lanes=8,  # GA107 is natively x8 (unverified for A16)
    nvlink_bytes_per_s=0, gpus_per_board=4, default_topology="a16-board", measured=0,
    source="NV-A16-DS;TPU-A16;TPU-A2;HFJS-974;NVSMI")

# ---------------------------------------------------------------- RTX 4090
gpu(id="rtx4090", name="NVIDIA GeForce RTX 4090",
    aliases="GeForce RTX 4090;RTX 4090;RTX4090",
    architecture="ada", compute_capability="8.9", sm_count=128,
    peak_fp32_flop_per_s=82.6 * T, peak_tf32_flop_per_s=82.6 * T,
    peak_fp16_flop_per_s=165.2 * T, peak_bf16_flop_per_s=165.2 * T,
    # ZZC runs are bursts (test.py: 10 warm-up + 30 timed calls per size, under 1 s; the value is
    # the best over N).  Checked against longer or differently timed runs (issue 39 audit):
    # ZZC #78 per size, fp16 168.38 / 155.50 / 156.88 and bf16 151.50 / 160.17 / 158.54 TF at
    # N = 4096 / 8192 / 10240 (0.94-0.97 at N >= 8192); MAG-MAMF (mamf-finder with an Optuna
    # search, bf16, median of 100 calls after 50 warm-up, L2 flushed and synchronized between
    # calls in the script @2268e5a) 178.5 TF = 1.08 at its best shape.  No public sustained (back-to-back, multi-second)
    # RTX 4090 GEMM measurement was found, so the best-over-N median stays.
    gemm_eff_fp32_frac=eff(med(55.01, 54.77, 53.84, 51.57), 82.6),            # ZZC x4
    gemm_eff_tf32_frac=eff(85.65, 82.6),                                      # ZZC
    gemm_eff_fp16_frac=eff(med(165.08, 171.06, 168.38, 165.94), 165.2),      # ZZC x4
    gemm_eff_bf16_frac=eff(med(170.06, 173.31, 164.81, 165.71), 165.2),      # ZZC x4
    memory_bytes=24564 * MiB,
    memory_bandwidth_bytes_per_s=1008 * G, memory_eff_frac=eff(912, 1008),     # CHS copy
    l2_bytes=72 * MiB, pcie_gen=4,
    h2d_pinned_bytes_per_s=23.9 * G,                                          # cuda-oxide#976
    h2d_pageable_bytes_per_s=round(med(13.73, 17.07, 18.42, 12.88), 1) * G,   # 1-64 MiB
    nvlink_bytes_per_s=0, p2p=0, default_topology="pcie-host", measured=1,
    source="NV-ADA-WP;LLMC-MFU;MLI;OHD-CSV;ZZC;CHS;MAG-MAMF;cuda-oxide#976;NVSMI")

# ---------------------------------------------------------------- A100
A100 = dict(architecture="ampere", compute_capability="8.0", sm_count=108,
            peak_fp32_flop_per_s=19.5 * T, peak_tf32_flop_per_s=156 * T,
            peak_fp16_flop_per_s=312 * T, peak_bf16_flop_per_s=312 * T,
            l2_bytes=40 * MiB, pcie_gen=4,
            h2d_pinned_bytes_per_s=25 * G,      # bam#54: A100 Gen4 x16 measured peak
            kernel_floor_s=2.7e-6)              # GPUB gpu-small-kernels, A100 80GB
A100_SRC = "NV-A100-DS;NV-GA100-WP;TPU-A100;MLE-ACC;GEEKS3D;GPUB;bam#54"
gpu(id="a100-pcie-40gb", name="NVIDIA A100-PCIE-40GB",
    aliases="A100-PCIE-40GB;A100-PCIe-40GB;A100 40GB PCIe", **A100,
    gemm_eff_fp32_frac=eff(17.56, 19.5),                    # ZZC AutoDL
    gemm_eff_tf32_frac=eff(108.32, 156),                    # ZZC AutoDL
    gemm_eff_fp16_frac=eff(241.49, 312),                    # ZZC AutoDL
    gemm_eff_bf16_frac=eff(med(234.14, 252.9), 312),        # ZZC + MAMF (A100 PCIe)
    memory_bytes=40960 * MiB,
    memory_bandwidth_bytes_per_s=1555 * G, memory_eff_frac=eff(1360, 1555),  # GPUB triad A100 40GB
    nvlink_bytes_per_s=300 * G,                 # optional bridge, pairs only: 600 total / 2
    default_topology="pcie-switch", measured=1,
    source=A100_SRC + ";ZZC;MLE-ACC")
gpu(id="a100-sxm4-40gb", name="NVIDIA A100-SXM4-40GB",
    aliases="A100-SXM4-40GB;A100 40GB SXM;A100-SXM-40GB", **A100,
    # not measured as such: the SXM4 80GB part's efficiencies (below). Same GA100 die, the same
    # 400 W board power and 1410 MHz boost clock (NV-A100-DS); only the HBM differs, which
    # large GEMMs do not touch. ZZC's "A100 40GB" (18.11 fp32, 247.63 fp16, 246.33 bf16 TF)
    # names no form factor, and its 0.79 bf16 lies between the measured PCIe 40GB (0.75, 250 W)
    # and SXM4 80GB (0.86), so it identifies neither part and is not used.
    gemm_eff_fp32_frac=eff(19.18, 19.5),        # ZZC A100 SXM4 80GB
    gemm_eff_tf32_frac=eff(116, 156),           # MLI A100 (fp32 label = TF32)
    gemm_eff_fp16_frac=eff(258.74, 312),        # ZZC A100 SXM4 80GB
    gemm_eff_bf16_frac=eff(med(271.2, 264.53), 312),  # MAMF + ZZC (A100 SXM)
    memory_bytes=40960 * MiB,
    memory_bandwidth_bytes_per_s=1555 * G, memory_eff_frac=eff(1360, 1555),
    nvlink_bytes_per_s=300 * G, default_topology="nvlink", measured=0,
    source=A100_SRC + ";ZZC;MLI;CNC-H100;MLE-NET")
gpu(id="a100-sxm4-80gb", name="NVIDIA A100-SXM4-80GB",
    aliases="A100-SXM4-80GB;A100 80GB SXM;A100-SXM-80GB", **A100,
    gemm_eff_fp32_frac=eff(19.18, 19.5),        # ZZC
    gemm_eff_tf32_frac=eff(116, 156),           # MLI A100 80GB (fp32 label = TF32)
    gemm_eff_fp16_frac=eff(258.74, 312),        # ZZC
    gemm_eff_bf16_frac=eff(med(271.2, 264.53), 312),  # MAMF + ZZC
    memory_bytes=81920 * MiB,
    memory_bandwidth_bytes_per_s=2039 * G, memory_eff_frac=eff(1759, 2039),  # GPUB triad A100 80GB
    nvlink_bytes_per_s=300 * G, default_topology="nvlink", measured=1,
    source=A100_SRC + ";ZZC;MLI;MLE-NET;NVSMI")
gpu(id="a100-pcie-80gb", name="NVIDIA A100 80GB PCIe",
    aliases="A100-PCIe-80GB;A100-PCIE-80GB;NVIDIA A100-PCIE-80GB", **A100,
    # not measured as such: same GA100 as the PCIe 40GB card (which was measured),
    # 300 W instead of 250 W; MAMF A100-PCIe (40/80 not stated) 252.9 for bf16.
    gemm_eff_fp32_frac=eff(17.56, 19.5), gemm_eff_tf32_frac=eff(108.32, 156),
    gemm_eff_fp16_frac=eff(241.49, 312), gemm_eff_bf16_frac=eff(252.9, 312),
    memory_bytes=81920 * MiB,
    memory_bandwidth_bytes_per_s=1935 * G, memory_eff_frac=eff(1759, 1935),
    nvlink_bytes_per_s=300 * G, default_topology="pcie-switch", measured=0,
    source=A100_SRC + ";ZZC;MLE-ACC;NVSMI")

# ---------------------------------------------------------------- V100
V100 = dict(architecture="volta", compute_capability="7.0", sm_count=80,
            peak_tf32_flop_per_s=0, peak_bf16_flop_per_s=0,
            l2_bytes=6 * MiB, pcie_gen=3,
            memory_bandwidth_bytes_per_s=900 * G,
            memory_eff_frac=eff(814, 900))          # GPUB triad, V100 (variant not stated)
V100_SXM = dict(peak_fp32_flop_per_s=15.7 * T, peak_fp16_flop_per_s=125 * T,
                emulated_bf16_flop_per_s=10.34 * T,                 # ZZC database
                gemm_eff_fp32_frac=eff(14.51, 15.7),                # ZZC #140 best (N=10240)
                gemm_eff_tf32_frac=eff(14.51, 15.7),                # no TF32: runs as FP32
                gemm_eff_fp16_frac=eff(97.36, 125),                 # ZZC #140 best (N=8192)
                gemm_eff_bf16_frac=1.0,
                nvlink_bytes_per_s=150 * G, default_topology="nvlink", measured=1)
gpu(id="v100-sxm2-16gb", name="Tesla V100-SXM2-16GB",
    aliases="V100-SXM2-16GB;NVIDIA V100-SXM2-16GB", **V100, **V100_SXM,
    memory_bytes=16160 * MiB,
    source="NV-V100-DS;NV-V100-WP;LLMC-MFU;HFGC;ZZC;GPUB;mlxcel#1654;NVSMI")
gpu(id="v100-sxm2-32gb", name="Tesla V100-SXM2-32GB",
    aliases="V100-SXM2-32GB;NVIDIA V100-SXM2-32GB", **V100, **V100_SXM,
    memory_bytes=32 * 1024 * MiB,               # nominal 32 GiB (nvidia-smi total not verified)
    source="NV-V100-DS;ZZC;MLI;CHS;GPUB")
gpu(id="v100-pcie-16gb", name="Tesla V100-PCIE-16GB",
    aliases="V100-PCIE-16GB;V100-PCIe-16GB;NVIDIA V100-PCIE-16GB;V100-PCIe (16GB/32GB)", **V100,
    peak_fp32_flop_per_s=14.0 * T, peak_fp16_flop_per_s=112 * T,
    # emulated BF16 not measured on this SKU: V100-SXM2 10.34 TF scaled by clock 1380/1530
    emulated_bf16_flop_per_s=round(10.34 * 1380 / 1530, 1) * T,
    # GEMM not measured on this SKU: same GV100 die as SXM2 (Volta SIMT ~0.9, tensor ~0.78);
    # GPUB: V100 PCIe holds 1380 MHz, the clock the 14/112 TF peaks assume.
    gemm_eff_fp32_frac=eff(14.51, 15.7), gemm_eff_tf32_frac=eff(14.51, 15.7),
    gemm_eff_fp16_frac=eff(97.36, 125), gemm_eff_bf16_frac=1.0,
    memory_bytes=16160 * MiB,
    h2d_pinned_bytes_per_s=12.35 * G,           # GPUB cuda-memcpy >=256 MB
    nvlink_bytes_per_s=0, default_topology="pcie-switch", measured=0,
    source="NV-V100-DS;GPUB;NVSMI")

# ---------------------------------------------------------------- Hopper
H_SXM = dict(architecture="hopper", compute_capability="9.0", sm_count=132,
             peak_fp32_flop_per_s=67 * T, peak_tf32_flop_per_s=494.7 * T,
             peak_fp16_flop_per_s=989.4 * T, peak_bf16_flop_per_s=989.4 * T,
             l2_bytes=50 * MiB, pcie_gen=5,
             nvlink_bytes_per_s=450 * G, default_topology="nvlink", measured=1)
gpu(id="h100-sxm5-80gb", name="NVIDIA H100 80GB HBM3",
    # bare "H100": the SKU clouds rent as "H100" (8-GPU HGX SXM5 nodes); the PCIe and NVL
    # cards are named as such.  "A100" stays ambiguous: 40 and 80 GB SXM are both common.
    aliases="H100;H100-SXM5-80GB;H100 SXM5;H100 SXM;NVIDIA H100-SXM5-80GB", **H_SXM,
    gemm_eff_fp32_frac=eff(med(51.88, 52.11), 67),               # ZZC docker + bare metal
    gemm_eff_tf32_frac=eff(402.15, 494.7),                       # ZZC #79
    gemm_eff_fp16_frac=eff(med(760.04, 758.14), 989.4),          # ZZC x2
    gemm_eff_bf16_frac=eff(med(794.5, 797.51, 783.66), 989.4),   # MAMF + ZZC x2
    memory_bytes=81559 * MiB,
    memory_bandwidth_bytes_per_s=3350 * G, memory_eff_frac=HBM_EFF,  # no HBM3 measurement
    source="NV-H100-DS;MLE-ACC;LLMC-MFU;CNC-H100;ZZC;MAG-MAMF;MLE-NET;nvbandwidth#24;NVSMI")
gpu(id="h100-pcie-80gb", name="NVIDIA H100 PCIe",
    aliases="H100-PCIe-80GB;H100 PCIe;NVIDIA H100-PCIe-80GB",
    architecture="hopper", compute_capability="9.0", sm_count=114,
    peak_fp32_flop_per_s=51 * T, peak_tf32_flop_per_s=378 * T,
    peak_fp16_flop_per_s=756 * T, peak_bf16_flop_per_s=756 * T,
    gemm_eff_fp32_frac=eff(36.95, 51),          # ZZC #95 (350 W cap)
    gemm_eff_tf32_frac=eff(240.43, 378),
    gemm_eff_fp16_frac=eff(458.03, 756),
    gemm_eff_bf16_frac=eff(495.93, 756),
    memory_bytes=81559 * MiB,
    memory_bandwidth_bytes_per_s=2000 * G, memory_eff_frac=eff(1832, 2000),  # GPUB triad
    l2_bytes=50 * MiB, pcie_gen=5,
    nvlink_bytes_per_s=300 * G,                 # NVLink bridge, pairs: 600 total / 2
    default_topology="pcie-switch", measured=1,
    source="NV-H100-DS;MLE-ACC;LLMC-MFU;CNC-H100;ZZC;MAG-MAMF;GPUB;nccl-tests#194;NVSMI")
gpu(id="h200-sxm-141gb", name="NVIDIA H200",
    aliases="H200;H200-SXM-141GB;H200 SXM;NVIDIA H200 141GB HBM3e", **H_SXM,
    gemm_eff_fp32_frac=eff(51.34, 67),          # ZZC
    gemm_eff_tf32_frac=eff(402.15, 494.7),      # not measured: H100 SXM value (same compute)
    gemm_eff_fp16_frac=eff(759.4, 989.4),       # ZZC
    gemm_eff_bf16_frac=eff(790.29, 989.4),      # ZZC
    memory_bytes=143771 * MiB,
    # GPUB gpu-stream: triad 3534 (0.74) is an occupancy-limited lower bound; the best
    # streaming kernel of the same run (init/write 3884) gives 0.81 -> 0.80.
    memory_bandwidth_bytes_per_s=4800 * G, memory_eff_frac=0.80,
    h2d_pinned_bytes_per_s=55.4 * G,            # MLE-NET nvbandwidth, copy engine
    kernel_floor_s=2.5e-6,                      # GPUB gpu-small-kernels H200
    source="NV-H200;MLE-ACC;TB-78;ZZC;GPUB;MLE-NET;NVSMI")

# ---------------------------------------------------------------- H100 SXM 96GB HBM2e at 500 W
# torchtitan's H100 (TT-H100: pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md
# @820504e2, "Hardware"): Grand Teton hosts of 8 H100 "fully connected with NVLink", each "96GB
# HBM2e with 2.4 TB/sec peak memory bandwidth", run at "the default 500W power limit, although
# tuning it up to 700W TDP can potentially provide further speedups"; footnote 2: "HBM2e-based
# SXM H100 with lower TDP, the actual peak TFLOPs number is between SXM and NVL, and we don't know
# its exact value".  An SXM5 GH100 (132 SMs, the H100 SXM's rated peaks) with six HBM2e stacks.
# No public GEMM measurement of this part exists, so its efficiencies are derived, not tuned to
# torchtitan's numbers: a power limit lowers the clock a GEMM sustains, not the rated peak.
# Two measured H100s bracket it in board power per SM: the H100 PCIe (114 SMs, 350 W, ZZC #95,
# power-capped) and the H100 SXM (132 SMs, 700 W, MAMF + ZZC).  Per precision, the measured
# large-GEMM rate per SM is interpolated geometrically in watts per SM (rate ~ (W/SM)^a, a from
# those two points: 0.59 for bf16) at 500 W / 132 SMs, times 132 SMs, over the SXM's peak.
# bf16: 0.66 of 989.4 (650 TF), inside "between SXM and NVL" (NVL: 835.5 rated, PCIe-class
# efficiency).  This assumes board power scales with the SMs' (HBM, NVLink and board power
# ignored: they make the 500 W part, if anything, slower).
H96_W, PCIE_W, SXM_W = 500.0, 350.0, 700.0        # TT-H100; NV-H100-DS (PCIe 350 W, SXM 700 W)
H96_T = math.log((H96_W / 132) / (PCIE_W / 114)) / math.log((SXM_W / 132) / (PCIE_W / 114))


def h96_eff(pcie_tflops, sxm_tflops, sxm_peak):
    """Derived GEMM efficiency of the 500 W part (see above) from the two measured H100s."""
    per_sm = (pcie_tflops / 114) ** (1 - H96_T) * (sxm_tflops / 132) ** H96_T
    return round(per_sm * 132 / sxm_peak, 2)


gpu(id="h100-sxm5-96gb-500w", name="NVIDIA H100 96GB HBM2e",   # name as NVML prints it: not verified
    aliases="H100-SXM5-96GB-HBM2e;H100 96GB HBM2e;H100 SXM 96GB HBM2e 500W",
    architecture="hopper", compute_capability="9.0", sm_count=132,
    peak_fp32_flop_per_s=67 * T, peak_tf32_flop_per_s=494.7 * T,     # the H100 SXM's (NV-H100-DS)
    peak_fp16_flop_per_s=989.4 * T, peak_bf16_flop_per_s=989.4 * T,
    gemm_eff_fp32_frac=h96_eff(36.95, med(51.88, 52.11), 67),           # ZZC #95 / ZZC
    gemm_eff_tf32_frac=h96_eff(240.43, 402.15, 494.7),                  # ZZC #95 / ZZC #79
    gemm_eff_fp16_frac=h96_eff(458.03, med(760.04, 758.14), 989.4),     # ZZC #95 / ZZC x2
    gemm_eff_bf16_frac=h96_eff(495.93, med(794.5, 797.51, 783.66), 989.4),  # ZZC #95 / MAMF + ZZC x2
    # six 16 GB HBM2e stacks, as the H100 NVL's six HBM3 stacks: its nvidia-smi total (NVSMI, 95830
    # MiB = 93.6 GiB) stands in (the Helma H100 HBM2e of ARXIV-2604.11391: "94 GiB"; torchtitan's
    # performance.md footnote: "95GB")
    memory_bytes=95830 * MiB,
    # TT-H100: 2.4 TB/s (= the H100 PCIe's 2.0 TB/s HBM2e over 5 stacks x 6/5; ARXIV-2604.11391:
    # 2.41 TB/s); streaming efficiency: the H100 PCIe's GPUB triad (same HBM2e and controllers)
    memory_bandwidth_bytes_per_s=2400 * G, memory_eff_frac=eff(1832, 2000),
    l2_bytes=50 * MiB, pcie_gen=5,
    nvlink_bytes_per_s=450 * G, default_topology="nvlink", measured=0,  # TT-H100: NVLink, 8 per host
    source="TT-H100;NV-H100-DS;ZZC;MLE-ACC;GPUB;ARXIV-2604.11391;NVSMI")

# ---------------------------------------------------------------- GA102 datacenter
gpu(id="a10", name="NVIDIA A10",
    aliases="A10;A10-24GB;NVIDIA A10 24GB",
    architecture="ampere", compute_capability="8.6", sm_count=72,
    peak_fp32_flop_per_s=31.2 * T, peak_tf32_flop_per_s=62.5 * T,
    peak_fp16_flop_per_s=125 * T, peak_bf16_flop_per_s=125 * T,
    # only crude data (CHS 54-56 TF, lower bounds; CUTLASS SIMT 12.5 TF with ~20 TF
    # "achievable" per the maintainer): 150 W power-capped PCIe card -> rule of thumb.
    gemm_eff_fp32_frac=0.60, gemm_eff_tf32_frac=0.55, gemm_eff_fp16_frac=0.60,
    gemm_eff_bf16_frac=0.60,
    memory_bytes=23028 * MiB,
    memory_bandwidth_bytes_per_s=600 * G, memory_eff_frac=eff(469, 600),  # CHS crude copy
    l2_bytes=6 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=0, default_topology="pcie-switch", measured=0,
    source="NV-A10-DS;LLMC-621;TPU-A10;NV-GA102-WP;CHS;cutlass#941;NVSMI")
gpu(id="a10g", name="NVIDIA A10G",
    aliases="A10G;NVIDIA A10G 24GB",
    architecture="ampere", compute_capability="8.6", sm_count=80,
    # derived peaks (80 SM x ~1.71 GHz, half-rate FP32-accumulate tensor), see shared README.
    # 80 SMs and the 6 MB L2 as torch reports them (TCODEC-A10G: get_device_properties on an
    # A10G, multi_processor_count=80, L2_cache_size=6MB); nvidia-smi shows a 300 W cap (NVSMI
    # printouts of g5 hosts), the A10's is 150 W: the A10G is not power-starved, and ZZC-126's
    # 69.5 TF at 1.71 GHz x 80 SMs can only be half-rate FP32-accumulate tensor throughput.
    peak_fp32_flop_per_s=35 * T, peak_tf32_flop_per_s=35 * T,
    peak_fp16_flop_per_s=70 * T, peak_bf16_flop_per_s=70 * T,
    gemm_eff_fp32_frac=eff(23.37, 35), gemm_eff_tf32_frac=eff(34.71, 35),
    gemm_eff_fp16_frac=eff(69.47, 70), gemm_eff_bf16_frac=eff(69.47, 70),   # ZZC-126
    memory_bytes=23028 * MiB,
    memory_bandwidth_bytes_per_s=600 * G, memory_eff_frac=GDDR_EFF,
    l2_bytes=6 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=0, default_topology="pcie-switch", measured=1,
    source="BASETEN-A10G;ZZC-126;TCODEC-A10G;NVSMI")

# ---------------------------------------------------------------- Ada datacenter
gpu(id="l4", name="NVIDIA L4",
    aliases="L4;NVIDIA L4 24GB",
    architecture="ada", compute_capability="8.9", sm_count=58,
    peak_fp32_flop_per_s=30.3 * T, peak_tf32_flop_per_s=60 * T,
    peak_fp16_flop_per_s=121 * T, peak_bf16_flop_per_s=121 * T,
    # 72 W cap: the N=2048 burst (0.51/0.53/0.57/0.59) is not sustained; use the median of the
    # long-running sizes N>=4096 (ZZC #120), as README caveat 1 asks for power-capped cards.
    gemm_eff_fp32_frac=eff(med(12.53, 10.66, 11.11), 30.3),
    gemm_eff_tf32_frac=eff(med(24.0, 25.69, 26.17), 60),
    gemm_eff_fp16_frac=eff(med(53.02, 53.8, 52.47), 121),
    gemm_eff_bf16_frac=eff(med(54.91, 59.4, 56.9), 121),
    memory_bytes=23034 * MiB,
    memory_bandwidth_bytes_per_s=300 * G, memory_eff_frac=eff(235, 300),  # CHS crude copy
    l2_bytes=48 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=0, default_topology="pcie-switch", measured=1,
    source="NV-L4-DS;IE-CHEAT;ZZC;CHS;NVSMI")
gpu(id="l40s", name="NVIDIA L40S",
    aliases="L40S;NVIDIA L40S 48GB",
    architecture="ada", compute_capability="8.9", sm_count=142,
    peak_fp32_flop_per_s=91.6 * T, peak_tf32_flop_per_s=183 * T,
    peak_fp16_flop_per_s=362 * T, peak_bf16_flop_per_s=362 * T,
    gemm_eff_fp32_frac=eff(46.88, 91.6),        # ZZC
    # TF32 not measured: 0.9 x the FP16 efficiency (ratio seen on the L4: 0.53/0.59)
    gemm_eff_tf32_frac=round(0.9 * eff(264.02, 362), 2),
    gemm_eff_fp16_frac=eff(264.02, 362),
    gemm_eff_bf16_frac=eff(269.15, 362),
    memory_bytes=46068 * MiB,
    memory_bandwidth_bytes_per_s=864 * G, memory_eff_frac=eff(768, 864),  # GPUB L40 triad (proxy)
    l2_bytes=96 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=0, default_topology="pcie-switch",
    kernel_floor_s=1.6e-6,                      # GPUB gpu-small-kernels L40 (proxy)
    measured=1,
    source="NV-L40S;MLE-ACC;ZZC;GPUB;NVSMI")

# ---------------------------------------------------------------- GeForce
gpu(id="rtx3090", name="NVIDIA GeForce RTX 3090",
    aliases="GeForce RTX 3090;RTX 3090;RTX3090",
    architecture="ampere", compute_capability="8.6", sm_count=82,
    peak_fp32_flop_per_s=35.6 * T, peak_tf32_flop_per_s=35.6 * T,
    peak_fp16_flop_per_s=71 * T, peak_bf16_flop_per_s=71 * T,
    gemm_eff_fp32_frac=eff(med(24.46, 24.84), 35.6),               # ZZC x2
    gemm_eff_tf32_frac=eff(42, 40),             # MLI 3090 Ti proxy: TF32 42 TF of its 40 TF peak
    gemm_eff_fp16_frac=eff(med(75.64, 75.88), 71),                 # ZZC x2
    gemm_eff_bf16_frac=eff(med(76.34, 76.68), 71),                 # ZZC x2
    memory_bytes=24576 * MiB,
    memory_bandwidth_bytes_per_s=936 * G, memory_eff_frac=eff(831, 936),   # CHS copy
    l2_bytes=6 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=56.25 * G,               # NVLink3 bridge, pairs: 112.5 total / 2
    p2p=0, default_topology="pcie-host", measured=1,
    source="NV-GA102-WP;LLMC-MFU;OHD-CSV;FDH-CSV;ZZC;MLI;CHS;NVSMI")
gpu(id="rtx2080ti", name="NVIDIA GeForce RTX 2080 Ti",
    aliases="GeForce RTX 2080 Ti;RTX 2080 Ti;RTX2080Ti",
    architecture="turing", compute_capability="7.5", sm_count=68,
    peak_fp32_flop_per_s=13.4 * T, peak_tf32_flop_per_s=0,
    peak_fp16_flop_per_s=53.8 * T, peak_bf16_flop_per_s=0,
    emulated_bf16_flop_per_s=round(med(7.28, 6.95), 1) * T,        # ZZC x2
    gemm_eff_fp32_frac=eff(med(13.04, 11.52), 13.4),               # ZZC x2 (0.86-0.97)
    gemm_eff_tf32_frac=eff(med(13.04, 11.52), 13.4),               # no TF32: runs as FP32
    gemm_eff_fp16_frac=eff(med(58.58, 56.78), 53.8),               # ZZC x2 (above spec clocks)
    gemm_eff_bf16_frac=1.0,
    memory_bytes=11016 * MiB,
    memory_bandwidth_bytes_per_s=616 * G, memory_eff_frac=GDDR_EFF,
    l2_bytes=round(5.5 * MiB), pcie_gen=3,
    h2d_pinned_bytes_per_s=13.1 * G,            # Helixer#22 bandwidthTest (runs varied 7.1-13.1)
    nvlink_bytes_per_s=50 * G,                  # NVLink2 bridge, pairs: 50 GB/s per direction
    p2p=0, default_topology="pcie-host", measured=1,
    source="NV-TU-WP;MIXB-14;FDH-CSV;ZZC;Helixer#22;NVSMI")

# ---------------------------------------------------------------- Pascal
P100 = dict(architecture="pascal", compute_capability="6.0", sm_count=56,
            peak_tf32_flop_per_s=0, peak_fp16_flop_per_s=0, peak_bf16_flop_per_s=0,
            memory_bytes=16280 * MiB,               # nvidia-smi total (P100-PCIE; SXM2 assumed equal)
            memory_bandwidth_bytes_per_s=732 * G, memory_eff_frac=HBM_EFF,
            l2_bytes=4 * MiB, pcie_gen=3, measured=1)
gpu(id="p100-sxm2-16gb", name="Tesla P100-SXM2-16GB",
    aliases="P100-SXM2-16GB;NVIDIA Tesla P100-SXM2-16GB", **P100,
    peak_fp32_flop_per_s=10.6 * T,
    emulated_bf16_flop_per_s=5.99 * T,                               # ZZC #180
    gemm_eff_fp32_frac=eff(9.5, 10.6), gemm_eff_tf32_frac=eff(9.5, 10.6),
    gemm_eff_fp16_frac=eff(8.82, 10.6),          # FP16 GEMM runs on the FP32 path
    gemm_eff_bf16_frac=1.0,
    nvlink_bytes_per_s=80 * G, default_topology="nvlink",
    source="NV-P100-DS;NV-GP100-WP;ZZC;NVSMI")
gpu(id="p100-pcie-16gb", name="Tesla P100-PCIE-16GB",
    aliases="P100-PCIE-16GB;P100-PCIe-16GB;NVIDIA Tesla P100-PCIE-16GB", **P100,
    peak_fp32_flop_per_s=9.3 * T,
    emulated_bf16_flop_per_s=round(med(6.11, 6.16), 2) * T,          # ZZC database + #174
    gemm_eff_fp32_frac=eff(8.63, 9.3), gemm_eff_tf32_frac=eff(8.63, 9.3),
    gemm_eff_fp16_frac=eff(8.39, 9.3),          # FP16 GEMM runs on the FP32 path
    gemm_eff_bf16_frac=1.0,
    h2d_pinned_bytes_per_s=12.15 * G,           # gearshifft#82, NUMA-local
    nvlink_bytes_per_s=0, default_topology="pcie-switch",
    source="NV-P100-DS;ZZC;gearshifft#82;NVSMI")

# ---------------------------------------------------------------- Kepler (per die)
gpu(id="k80", name="Tesla K80",
    aliases="K80;Tesla K80 (per GK210 die);K80 (single GK210);NVIDIA Tesla K80",
    architecture="kepler", compute_capability="3.7", sm_count=13,
    peak_fp32_flop_per_s=4.37 * T, peak_tf32_flop_per_s=0, peak_fp16_flop_per_s=0,
    peak_bf16_flop_per_s=0,
    # not measured (and current PyTorch does not run on CC 3.7): emulated BF16 on P100/V100
    # runs at ~0.65x their FP32 peak; applied to the K80's *sustained* SGEMM (~2.2 TF) -> 1.4 TF.
    emulated_bf16_flop_per_s=1.4 * T,
    gemm_eff_fp32_frac=eff(med(2.09, 2.27), 4.37),   # gpu-burn#8 sustained SGEMM
    gemm_eff_tf32_frac=eff(med(2.09, 2.27), 4.37),
    gemm_eff_fp16_frac=eff(med(2.09, 2.27), 4.37),   # no FP16 speed-up: FP32 path
    gemm_eff_bf16_frac=1.0,
    memory_bytes=11441 * MiB,                   # OPENMM-2386 nvidia-smi per die
    memory_bandwidth_bytes_per_s=240 * G, memory_eff_frac=GDDR_EFF,
    l2_bytes=round(1.5 * MiB), pcie_gen=3,
    nvlink_bytes_per_s=0, gpus_per_board=2, default_topology="pcie-switch", measured=1,
    source="NV-K80-DS;OPENMM-2386;gpu-burn#8")


# ================================================================ GPUs people rent now (issue 21)
# Peaks are dense (no sparsity) vendor figures; efficiencies are public GEMM measurements of
# that GPU where one exists, else a named sibling's (measured=0 when every precision is a proxy).

# ---------------------------------------------------------------- Blackwell datacenter
gpu(id="b200", name="NVIDIA B200",
    aliases="B200;B200-SXM6-180GB;B200 SXM;NVIDIA B200 SXM6 180GB",
    architecture="blackwell", compute_capability="10.0", sm_count=148,   # NV-MPS-B200: 148 SMs
    # NV-BW-DS (Blackwell datasheet 2025-10): FP32 75 TF; FP16/BF16 4.5 PF and TF32 2.2 PF with
    # sparsity -> dense 2.25 PF / 1.125 PF (MLE-ACC26 table: 2250 / 1125)
    peak_fp32_flop_per_s=75 * T, peak_tf32_flop_per_s=1125 * T,
    peak_fp16_flop_per_s=2250 * T, peak_bf16_flop_per_s=2250 * T,
    gemm_eff_bf16_frac=eff(1745.0, 2250),       # MLE-ACC26 MAMF, torch 2.7.1+cu128
    gemm_eff_fp16_frac=eff(1745.0, 2250),       # not measured: the bf16 value (same tensor path, same peak)
    # not measured on Blackwell: the H100 SXM values (ZZC #79 TF32, ZZC fp32)
    gemm_eff_tf32_frac=eff(402.15, 494.7), gemm_eff_fp32_frac=eff(med(51.88, 52.11), 67),
    memory_bytes=184320 * MiB,                  # 180 GiB: the size Lambda's API reports (SKY-LAMBDA)
    memory_bandwidth_bytes_per_s=7700 * G, memory_eff_frac=HBM_EFF,   # NV-BW-DS 7.7 TB/s; unmeasured
    l2_bytes=0,                                 # not published per SKU (NV-BW-DS lists none)
    pcie_gen=5,
    nvlink_bytes_per_s=900 * G,                 # NVLink 5: 18 links x 50 GB/s per direction
    default_topology="nvlink", measured=1,
    source="NV-BW-DS;NV-MPS-B200;MLE-ACC26;SKY-LAMBDA")

# The Blackwell GPUs of the NVL72 racks (issue 39: Megatron-Bridge's GB200 and GB300 rows).  Per GPU:
# MLE-ACC26's table lists the GB200 and GB300 per chip without sparsity (notes 23, 24: "GB200 is 2x
# B200 chips ... per chip", run faster than a standalone B200; GB300 "the same but faster fp4 and
# more memory"): FP32 80, TF32 1250, FP16/BF16 2500, FP8 5000 TF.  A compute tray holds 4 GPUs and
# 2 Grace CPUs, each GPU on NVLink-C2C to its Grace and on NVLink 5 to the 72-GPU switch domain.
GB_NVL72 = dict(architecture="blackwell", compute_capability="10.0",
                # not published for these SKUs: the HGX B200's 148 enabled SMs (NV-MPS-B200); the full
                # Blackwell Ultra die has 160 (NV-BWU-BLOG), how many a GB300 enables is not stated
                sm_count=148,
                peak_fp32_flop_per_s=80 * T, peak_tf32_flop_per_s=1250 * T,
                peak_fp16_flop_per_s=2500 * T, peak_bf16_flop_per_s=2500 * T,
                gemm_eff_bf16_frac=eff(1822.0, 2500),   # MLE-ACC26 MAMF of the GB200, torch 2.10 dev + cu130
                gemm_eff_fp16_frac=eff(1822.0, 2500),   # not measured: the bf16 value (same tensor path)
                # not measured on Blackwell: the H100 SXM values, as the B200's (ZZC #79 TF32, ZZC fp32)
                gemm_eff_tf32_frac=eff(402.15, 494.7), gemm_eff_fp32_frac=eff(med(51.88, 52.11), 67),
                memory_bandwidth_bytes_per_s=8000 * G, memory_eff_frac=HBM_EFF,  # unmeasured
                l2_bytes=0,                              # not published per SKU
                pcie_gen=5,
                # the host link is NVLink-C2C, 900 GB/s bidirectional (NV-GB200-NVL72): its per-direction
                # spec, unmeasured, as the GH200's
                h2d_pinned_bytes_per_s=450 * G,
                nvlink_bytes_per_s=900 * G,              # NVLink 5: 1.8 TB/s bidirectional per GPU
                gpus_per_board=4, default_topology="nvlink")
gpu(id="gb200", name="NVIDIA GB200 (Blackwell GPU of a GB200 NVL72)",
    aliases="GB200;GB200 SXM;GB200 NVL72;NVIDIA GB200",
    **GB_NVL72,
    # NV-GB200-NVL72: 13.4 TB HBM3e and 576 TB/s for 72 GPUs -> 186 GB and 8 TB/s each (MLE-ACC26's
    # memory table: GB200 SXM 186 GB HBM3e, 8.00 TB/s)
    memory_bytes=186 * 10**9,
    measured=1,
    source="MLE-ACC26;NV-GB200-NVL72;NV-MPS-B200;ZZC")
gpu(id="gb300", name="NVIDIA GB300 (Blackwell Ultra GPU of a GB300 NVL72)",
    aliases="GB300;GB300 SXM;GB300 NVL72;NVIDIA GB300",
    **GB_NVL72,
    # NV-GB300-NVL72: up to 20 TB HBM3e and 576 TB/s for 72 GPUs -> 277.8 GB and 8 TB/s each
    # (NV-BWU-BLOG: 288 GB HBM3e and 8 TB/s per Blackwell Ultra GPU; the rack's total is what a GPU
    # can use, as the B200's 180 GB of 192)
    memory_bytes=round(20e12 / 72),
    measured=0,                                  # every efficiency is the GB200's (MLE-ACC26 note 24)
    source="MLE-ACC26;NV-GB300-NVL72;NV-BWU-BLOG;NV-MPS-B200;ZZC")

# ---------------------------------------------------------------- Hopper PCIe NVL and Grace Hopper
H_NVL = dict(architecture="hopper", compute_capability="9.0", sm_count=132,
             # NV-H100-DS / NV-H200 NVL columns: FP32 60 TF; TF32 835 and FP16/BF16 1671 with
             # sparsity -> dense 417.5 / 835.5
             peak_fp32_flop_per_s=60 * T, peak_tf32_flop_per_s=417.5 * T,
             peak_fp16_flop_per_s=835.5 * T, peak_bf16_flop_per_s=835.5 * T,
             # not measured: the H100 PCIe's efficiencies (ZZC #95), the power-capped PCIe GH100
             gemm_eff_fp32_frac=eff(36.95, 51), gemm_eff_tf32_frac=eff(240.43, 378),
             gemm_eff_fp16_frac=eff(458.03, 756), gemm_eff_bf16_frac=eff(495.93, 756),
             l2_bytes=50 * MiB, pcie_gen=5, default_topology="pcie-switch", measured=0)
gpu(id="h100-nvl", name="NVIDIA H100 NVL",
    aliases="H100 NVL;H100-NVL-94GB;NVIDIA H100 NVL 94GB", **H_NVL,
    memory_bytes=94 * 1024 * MiB,               # nominal 94 GB (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=3900 * G, memory_eff_frac=HBM_EFF,
    nvlink_bytes_per_s=300 * G,                 # NVLink bridge, pairs: 600 GB/s total / 2
    source="NV-H100-DS;ZZC")
gpu(id="h200-nvl", name="NVIDIA H200 NVL",
    aliases="H200 NVL;H200-NVL-141GB;NVIDIA H200 NVL 141GB", **H_NVL,
    memory_bytes=143771 * MiB,                  # the H200 SXM's nvidia-smi total (same 141 GB HBM3e)
    memory_bandwidth_bytes_per_s=4800 * G, memory_eff_frac=0.80,  # the H200 SXM's (GPUB), same memory
    nvlink_bytes_per_s=450 * G,                 # 2- or 4-way NVLink bridge: 900 GB/s total / 2
    source="NV-H200;ZZC;GPUB;NVSMI")
gpu(id="gh200", name="NVIDIA GH200 480GB",
    aliases="GH200;GH200-96GB;NVIDIA GH200;GH200 Grace Hopper",
    architecture="hopper", compute_capability="9.0", sm_count=132,
    # the H100 SXM's peaks (MLE-ACC26 note 14: same GH100 compute)
    peak_fp32_flop_per_s=67 * T, peak_tf32_flop_per_s=494.7 * T,
    peak_fp16_flop_per_s=989.4 * T, peak_bf16_flop_per_s=989.4 * T,
    gemm_eff_bf16_frac=eff(828.6, 989.4),       # MLE-ACC26 MAMF (900 W, 141 GiB HBM3e version)
    gemm_eff_fp16_frac=eff(828.6, 989.4),       # not measured: the bf16 value (same tensor path)
    gemm_eff_tf32_frac=eff(402.15, 494.7),      # not measured: H100 SXM (ZZC #79)
    gemm_eff_fp32_frac=eff(med(51.88, 52.11), 67),  # not measured: H100 SXM (ZZC)
    memory_bytes=98304 * MiB,                   # 96 GiB HBM3: the size Lambda's API reports (SKY-LAMBDA)
    memory_bandwidth_bytes_per_s=4000 * G, memory_eff_frac=HBM_EFF,  # NV-GH200: 96 GB HBM3, 4 TB/s
    l2_bytes=50 * MiB, pcie_gen=5,
    # host link is NVLink-C2C, 900 GB/s bidirectional (NV-GH200): its per-direction spec, unmeasured
    h2d_pinned_bytes_per_s=450 * G,
    nvlink_bytes_per_s=450 * G, default_topology="nvlink", measured=1,
    source="NV-GH200;MLE-ACC26;ZZC;SKY-LAMBDA")

# ---------------------------------------------------------------- Ada / Ampere professional
gpu(id="rtx6000-ada", name="NVIDIA RTX 6000 Ada Generation",
    aliases="RTX 6000 Ada;RTX6000 Ada;RTX 6000 Ada Generation;RTX6000-Ada",
    architecture="ada", compute_capability="8.9", sm_count=142,
    # NV-RTX6000ADA-DS: 91.1 TF FP32; 1457 TF FP8 with sparsity -> FP16/BF16 dense 364.2, TF32 182.1
    peak_fp32_flop_per_s=91.1 * T, peak_tf32_flop_per_s=182.1 * T,
    peak_fp16_flop_per_s=364.2 * T, peak_bf16_flop_per_s=364.2 * T,
    # not measured (CHS issue #16 has crude fp32 only): the L40S's values, same AD102 at similar clocks
    gemm_eff_fp32_frac=eff(46.88, 91.6), gemm_eff_tf32_frac=round(0.9 * eff(264.02, 362), 2),
    gemm_eff_fp16_frac=eff(264.02, 362), gemm_eff_bf16_frac=eff(269.15, 362),
    memory_bytes=48 * 1024 * MiB,               # nominal 48 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=960 * G, memory_eff_frac=eff(768, 864),  # GPUB L40 triad (proxy)
    l2_bytes=96 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=0, default_topology="pcie-switch", measured=0,
    source="NV-RTX6000ADA-DS;ZZC;GPUB")
gpu(id="a40", name="NVIDIA A40",
    aliases="A40;A40-48GB;NVIDIA A40 48GB",
    architecture="ampere", compute_capability="8.6", sm_count=84,
    peak_fp32_flop_per_s=37.4 * T, peak_tf32_flop_per_s=74.8 * T,       # NV-A40-DS (dense)
    peak_fp16_flop_per_s=149.7 * T, peak_bf16_flop_per_s=149.7 * T,
    gemm_eff_fp32_frac=eff(23.73, 37.4), gemm_eff_tf32_frac=eff(59.52, 74.8),    # ZZC #185
    gemm_eff_fp16_frac=eff(119.18, 149.7), gemm_eff_bf16_frac=eff(122.29, 149.7),
    memory_bytes=48 * 1024 * MiB,               # nominal 48 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=696 * G, memory_eff_frac=0.94,   # GPUB gpu-stream A40 (hardware README 2.3)
    l2_bytes=6 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=56.25 * G,               # NVLink bridge, pairs: 112.5 GB/s total / 2
    kernel_floor_s=2.0e-6,                      # GPUB gpu-small-kernels A40
    default_topology="pcie-switch", measured=1,
    source="NV-A40-DS;ZZC-185;GPUB")
gpu(id="rtx-a6000", name="NVIDIA RTX A6000",
    aliases="RTX A6000;A6000;RTXA6000;NVIDIA RTX A6000 48GB",
    architecture="ampere", compute_capability="8.6", sm_count=84,
    # NV-RTXA6000-DS: 38.7 TF FP32; 309.7 TF tensor with sparsity -> FP16/BF16 dense 154.8, TF32 77.4
    peak_fp32_flop_per_s=38.7 * T, peak_tf32_flop_per_s=77.4 * T,
    peak_fp16_flop_per_s=154.8 * T, peak_bf16_flop_per_s=154.8 * T,
    gemm_eff_fp32_frac=eff(23.92, 38.7),        # ZZC #46 (docker)
    gemm_eff_tf32_frac=eff(59.52, 74.8),        # not measured: the A40's (same GA102, ZZC #185)
    gemm_eff_fp16_frac=eff(120.49, 154.8), gemm_eff_bf16_frac=eff(123.34, 154.8),   # ZZC #46
    memory_bytes=48 * 1024 * MiB,               # nominal 48 GB GDDR6 (nvidia-smi total not verified)
    memory_bandwidth_bytes_per_s=768 * G, memory_eff_frac=0.94,   # not measured: the A40's (GPUB)
    l2_bytes=6 * MiB, pcie_gen=4,
    nvlink_bytes_per_s=56.25 * G,               # NVLink bridge, pairs: 112.5 GB/s total / 2
    default_topology="pcie-switch", measured=1,
    source="NV-RTXA6000-DS;ZZC-46;ZZC-185;GPUB")

# ---------------------------------------------------------------- GeForce Blackwell
gpu(id="rtx5090", name="NVIDIA GeForce RTX 5090",
    aliases="GeForce RTX 5090;RTX 5090;RTX5090",
    architecture="blackwell", compute_capability="12.0", sm_count=170,
    # NV-RTXBW-WP: 104.8 TF FP32 (= TF32 on GeForce); FP16/BF16 tensor with FP32 accumulate 209.5
    peak_fp32_flop_per_s=104.8 * T, peak_tf32_flop_per_s=104.8 * T,
    peak_fp16_flop_per_s=209.5 * T, peak_bf16_flop_per_s=209.5 * T,
    # ZZC-PR15 (torch 2.8.0+cu128): fp32 the median of the long-running sizes N>=4096
    # (65.03, 66.34, 65.22; the N=2048 burst 69.16 is not sustained); fp16/bf16 best over N
    gemm_eff_fp32_frac=eff(med(65.03, 66.34, 65.22), 104.8),
    gemm_eff_tf32_frac=eff(85.65, 82.6),        # not measured: the RTX 4090's TF32 (ZZC)
    gemm_eff_fp16_frac=eff(224.41, 209.5), gemm_eff_bf16_frac=eff(236.03, 209.5),
    memory_bytes=round(31.4 * 1024) * MiB,      # ZZC-PR15: torch reports 31.4 GiB
    memory_bandwidth_bytes_per_s=1792 * G, memory_eff_frac=GDDR_EFF,   # unmeasured
    l2_bytes=96 * MiB, pcie_gen=5,
    nvlink_bytes_per_s=0, p2p=0, default_topology="pcie-host", measured=1,
    source="NV-RTXBW-WP;ZZC-PR15;ZZC")

# ---------------------------------------------------------------- AMD Instinct (ROCm PyTorch)
# compute_capability is what torch.cuda.get_device_capability() returns on ROCm: the gfx
# target's major.minor (gfx942 -> 9.4).  sm_count counts compute units.  The fully connected
# Infinity Fabric (xGMI) mesh between the 8 GPUs of a platform stands in as "nvlink".
gpu(id="mi300x", name="AMD Instinct MI300X",
    aliases="MI300X;AMD MI300X;MI300X-192GB",
    architecture="cdna3", compute_capability="9.4", sm_count=304,
    peak_fp32_flop_per_s=163.4 * T, peak_tf32_flop_per_s=653.7 * T,     # AMD-MI300X (dense)
    peak_fp16_flop_per_s=1307.4 * T, peak_bf16_flop_per_s=1307.4 * T,
    gemm_eff_bf16_frac=eff(668.4, 1307.4),      # MLE-ACC26 MAMF, ROCm 6.3, TunableOp on
    gemm_eff_fp16_frac=eff(668.4, 1307.4),      # not measured: the bf16 value (AMD lists equal rates)
    # fp32 and tf32 are refused (below): these two cells are never used
    gemm_eff_fp32_frac=eff(668.4, 1307.4), gemm_eff_tf32_frac=eff(668.4, 1307.4),
    refuse="fp32: no public FP32 GEMM measurement of the MI300X (the MAMF table has bf16 only); predict "
           "bf16 or amp_bf16, or give gpu_step_s from a measured step|"
           "tf32: TF32 (XF32) matmuls need HIPBLASLT_ALLOW_TF32=1 and a PyTorch/ROCm version that "
           "honours allow_tf32 (pytorch#130600, ROCm/pytorch#1911), and no public XF32 GEMM rate exists; "
           "predict bf16 or amp_bf16",
    memory_bytes=192 * 1024 * MiB,              # nominal 192 GB HBM3 (rocm-smi total not verified)
    memory_bandwidth_bytes_per_s=5300 * G, memory_eff_frac=HBM_EFF,     # AMD-MI300X; unmeasured
    l2_bytes=32 * MiB,                          # AMD-CDNA3-WP: 4 MB per XCD x 8 (plus 256 MB Infinity Cache)
    pcie_gen=5,
    nvlink_bytes_per_s=448 * G,                 # 7 xGMI links x 64 GB/s per direction (AMD-MI300X: 128 GB/s per link)
    default_topology="nvlink", measured=1,
    source="AMD-MI300X;AMD-CDNA3-WP;MLE-ACC26;pytorch#130600;ROCm/pytorch#1911")
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

ORDER = ["t4", "a16", "rtx4090", "a100-pcie-40gb", "a100-sxm4-40gb", "a100-sxm4-80gb",
         "a100-pcie-80gb", "v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb",
         "h100-sxm5-80gb", "h100-pcie-80gb", "h200-sxm-141gb", "h100-sxm5-96gb-500w", "a10", "a10g", "l4", "l40s",
         "rtx3090", "rtx2080ti", "p100-sxm2-16gb", "p100-pcie-16gb", "k80",
         "b200", "h100-nvl", "h200-nvl", "gh200", "rtx6000-ada", "a40", "rtx-a6000", "rtx5090", "mi300x",
         "titan-rtx", "rtx2060-super", "rtx3080ti-laptop-16gb", "gb200", "gb300",
         "quadro-rtx8000", "quadro-rtx6000", "quadro-rtx5000", "rtx-a4000", "rtx-a4500", "rtx-a5000",
         "rtx-a5500", "rtx3070", "rtx3080", "v100-sxm3-32gb", "v100-sxm3-32gb-h"]


def fmt(v):
    """Plain numbers: integers as integers, others in %.6g with a compact exponent (1.95e13)."""
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        s = "%.6g" % v
        if "e" in s:
            mant, exp = s.split("e")
            s = "%se%d" % (mant, int(exp))
        return s
    if isinstance(v, str) and ";" in v:
        parts = []
        for p in v.split(";"):          # de-duplicate keys, keep order
            if p not in parts:
                parts.append(p)
        return ";".join(parts)
    return str(v)


def check(rows):
    ids = [r["id"] for r in rows]
    assert ids == ORDER, ids
    seen = {}
    for r in rows:
        assert set(r) == set(COLUMNS), (r["id"], set(COLUMNS) ^ set(r))
        for key in [r["id"], r["name"]] + r["aliases"].split(";"):
            k = key.strip().lower()
            assert k, r["id"]
            assert k not in seen or seen[k] == r["id"], (key, seen.get(k), r["id"])
            seen[k] = r["id"]
        assert r["default_topology"] in ("nvlink", "pcie-switch", "pcie-host", "a16-board")
        for entry in filter(None, r["refuse"].split("|")):
            prec, _, why = entry.partition(":")
            assert prec.strip() in ("fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp16"), (r["id"], prec)
            assert why.strip(), (r["id"], prec)
        for c in COLUMNS:
            assert fmt(r[c]) != "" or c == "refuse", (r["id"], c)
        for c in ("gemm_eff_fp32_frac", "gemm_eff_tf32_frac", "gemm_eff_fp16_frac",
                  "gemm_eff_bf16_frac", "memory_eff_frac"):
            assert 0.2 < r[c] < 1.2, (r["id"], c, r[c])
        assert (r["peak_fp8_flop_per_s"] > 0) == (r["gemm_eff_fp8_frac"] > 0), r["id"]
        assert r["gemm_eff_fp8_frac"] == 0 or 0.2 < r["gemm_eff_fp8_frac"] < 1.2, r["id"]
        assert r["peak_fp8_flop_per_s"] == 0 or float(r["compute_capability"]) >= 8.9 or r["id"] == "mi300x", r["id"]
        if r["peak_bf16_flop_per_s"] == 0:
            assert r["emulated_bf16_flop_per_s"] > 0, r["id"]
        else:
            assert r["emulated_bf16_flop_per_s"] == 0, r["id"]


def main():
    rows = sorted(ROWS, key=lambda r: ORDER.index(r["id"]))
    check(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([fmt(r[c]) for c in COLUMNS])
    if "--check" in sys.argv:
        sys.stdout.write(buf.getvalue())
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "models", "gpus.csv")
    with open(path, "w", newline="") as f:
        f.write(buf.getvalue())
    print("wrote %s (%d rows)" % (path, len(rows)))


if __name__ == "__main__":
    main()
