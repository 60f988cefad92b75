"""GPU profile rows, part 2: GPUs people rent now (issue 21): B200, GB200/GB300, H100/H200 NVL,
GH200, RTX 6000 Ada, A40, RTX A6000, RTX 5090, MI300X.

Each gpu() call holds one GPU's dense vendor peaks, its GEMM efficiencies (a public measurement of
that GPU where one exists, else a named sibling's, with the measured value and peak written out)
and its source keys (models/README.md "Source keys"; the data in
../shared/data/hardware/{gpus.csv,microbench.csv}).  Importing the module appends its rows to
gpus_common.ROWS; make_gpus.py writes them.
"""
from gpus_common import G, GDDR_EFF, HBM_EFF, MiB, T, eff, gpu, med


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
    # FI-2899: on a B200, FlashAttention-4 (bf16, b 4, s 8192, 16 heads, d 128) timed over 100
    # back-to-back iterations peaks at 1450 TFLOP/s (iterations 10-19) and holds 1237 once the
    # 1000 W limit has pulled the SM clock from 1965 to about 1580 MHz (iterations 70-79); the
    # efficiencies above and attention.csv's B200 rows are short-run timings (MLE-ACC26's
    # mamf-finder.py, 150 calls a shape, each after an L2-flush memset; cudnn-frontend's
    # benchmark_single_sdpa.py, 10 synchronized calls), a training step runs such kernels back to back.  AO-2427's host-timed
    # torch.mm loop, 1.42 PFLOP/s at 8192^3, is 0.84 of AIC-B200's graph-replayed 1.69 there.
    sustained_tensor_frac=eff(1237, 1450),
    memory_bytes=184320 * MiB,                  # 180 GiB: the size Lambda's API reports (SKY-LAMBDA)
    memory_bandwidth_bytes_per_s=7700 * G, memory_eff_frac=HBM_EFF,   # NV-BW-DS 7.7 TB/s; unmeasured
    l2_bytes=0,                                 # not published per SKU (NV-BW-DS lists none)
    pcie_gen=5,
    nvlink_bytes_per_s=900 * G,                 # NVLink 5: 18 links x 50 GB/s per direction
    default_topology="nvlink", measured=1,
    source="NV-BW-DS;NV-MPS-B200;MLE-ACC26;FI-2899;SKY-LAMBDA")

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
    # OINK-GB300: a bf16 STREAM-like triad (Triton, 1 GB a buffer) measured on a GB300 at 7.140 TB/s
    **dict(GB_NVL72, memory_eff_frac=eff(7140, 8000)),
    # NV-GB300-NVL72: up to 20 TB HBM3e and 576 TB/s for 72 GPUs -> 277.8 GB and 8 TB/s each
    # (NV-BWU-BLOG: 288 GB HBM3e and 8 TB/s per Blackwell Ultra GPU; the rack's total is what a GPU
    # can use, as the B200's 180 GB of 192)
    memory_bytes=round(20e12 / 72),
    measured=0,                                  # the GEMM efficiencies are the GB200's (MLE-ACC26 note 24)
    source="MLE-ACC26;NV-GB300-NVL72;NV-BWU-BLOG;NV-MPS-B200;ZZC;OINK-GB300")

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
