"""GPU profile rows, part 1: the original set (T4, A16, RTX 4090, A100, V100, H100/H200, A10/A10G,
L4/L40S, RTX 3090/2080 Ti, P100, K80).

Each gpu() call holds one GPU's spec-sheet peaks, its measured GEMM and memory efficiencies (the
measured value and the peak it is divided by, with the citation next to it) and its source keys.
Every number is taken from ../shared/data/hardware/{gpus.csv,microbench.csv} (or, for nvidia-smi
memory totals, from public nvidia-smi printouts: key NVSMI); keys in models/README.md "Source keys".
Importing the module appends its rows to gpus_common.ROWS; make_gpus.py writes them.
"""
import math

from gpus_common import G, GDDR_EFF, HBM_EFF, MiB, T, eff, gpu, med


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
