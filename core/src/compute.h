/*
 * compute.h: per-op GPU time (compute.c).  eci_rates holds what one GPU gives one
 * precision: the matmul rate of the unit that really runs it, the streaming bandwidth,
 * the kernel floor and the tile shapes; gemm_scale and mem_scale are the calibration
 * hooks (1.0 unless a fitted profile says otherwise).
 */
#ifndef EC_COMPUTE_H
#define EC_COMPUTE_H

#include "workload.h"

typedef struct eci_rates {
    double gemm_peak_flop_per_s;  /* dense peak of the unit used (for MFU) */
    double gemm_flop_per_s;       /* peak x measured large-GEMM efficiency */
    double gemm_in_bytes;         /* bytes per GEMM operand element */
    double mem_bytes_per_s;       /* bandwidth x measured streaming efficiency */
    double floor_s;               /* GPU-side time of an empty kernel */
    double sm_count;
    double tile_large_m, tile_large_n, tile_small_m, tile_small_n, tile_small_eff;
    double k_half, conv_eff, attn_eff;
    int tensor_cores;             /* the matmul unit is a tensor core */
    double gemm_scale, mem_scale; /* calibration factors */
    unsigned warnings;
    char warning_text[EC_WARNING_TEXT_MAX];
} eci_rates;

typedef struct eci_op_cost_t {
    double fwd_s, bwd_s;
    int fwd_kernels, bwd_kernels;
} eci_op_cost_t;

/* Fitted physical parameters (calibrate.c); all 1.0 / the constants.csv priors by default. */
typedef struct eci_calib {
    double gemm_scale;     /* multiplies measured large-GEMM efficiency on tensor cores (tf32, 16-bit) */
    double simt_scale;     /* multiplies measured large-GEMM efficiency on CUDA cores (fp32, emulated) */
    double mem_scale;      /* multiplies every measured streaming-bandwidth efficiency */
    double conv_eff;       /* cuDNN convolution throughput relative to a GEMM */
    double attn_eff;       /* fused attention throughput relative to a GEMM */
    double dispatch_scale; /* multiplies the host's per-op dispatch times */
} eci_calib;

EC_INTERNAL void eci_calib_default(const ec_ctx *ctx, eci_calib *c);
/* The parameters a prediction of cfg uses: its profile= file, else the context's fit, else
 * the priors (calibrate.c). */
EC_INTERNAL int eci_calib_current(ec_ctx *ctx, const ec_config *cfg, eci_calib *c);
EC_INTERNAL void eci_rates_init(const ec_ctx *ctx, const eci_gpu *g, int precision, const eci_calib *c,
                                eci_rates *r);
EC_INTERNAL double eci_gemm_util(const eci_rates *r, double m, double n, double k, double batch);
EC_INTERNAL double eci_gemm_time_s(const eci_rates *r, double m, double n, double k, double batch, int conv);
EC_INTERNAL double eci_mem_time_s(const eci_rates *r, double bytes, int kernels);
EC_INTERNAL void eci_op_cost(const ec_ctx *ctx, const eci_rates *r, const eci_op *op, eci_op_cost_t *c);

#endif /* EC_COMPUTE_H */
