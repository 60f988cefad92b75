"""Shared pieces of the GPU profile rows: units, the defaults a row falls back on, eff() and
med(), the FP8 columns, and gpu(), which fills a row's defaults and appends it to ROWS.

The gpus_*.py row modules call gpu() once per GPU; make_gpus.py checks ROWS and writes them as
models/gpus.csv.  The FP8 peaks and measured rates below come from the same sources as the rows
(../shared/data/hardware/{gpus.csv,microbench.csv}; keys in models/README.md "Source keys").
Python 3 stdlib only.
"""
import statistics

T = 1e12          # TFLOP/s -> FLOP/s
G = 1e9           # GB/s   -> B/s
MiB = 1 << 20

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
    kw.setdefault("sustained_tensor_frac", 1)   # no public back-to-back measurement: the short-run rates
    gen = kw["pcie_gen"]
    if "h2d_pinned_bytes_per_s" not in kw:
        kw["h2d_pinned_bytes_per_s"] = PINNED[gen] * kw["pcie_lanes"] / 16
    if "h2d_pageable_bytes_per_s" not in kw:
        kw["h2d_pageable_bytes_per_s"] = round(PAGEABLE_FRAC * kw["h2d_pinned_bytes_per_s"] / 1e8) * 1e8
    ROWS.append(kw)
