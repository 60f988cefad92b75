/*
 * probe_output.h: what epochcast-probe measured on one GPU, and the writer that turns it into
 * a hardware-profile row in the schema of models/gpus.csv, a GEMM-efficiency curve and a
 * list of raw measurements (probe_output.c, plain C over libepochcast, so it is built and
 * tested without CUDA).
 */
#ifndef EC_PROBE_OUTPUT_H
#define EC_PROBE_OUTPUT_H

#include "epochcast.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ecp_gemm_point {
    int m, n, k;
    const char *precision;  /* "fp32", "tf32", "fp16", "bf16" (static string) */
    double flop_per_s;      /* median over repeats, 2mnk / time */
} ecp_gemm_point;

typedef struct ecp_result {
    char name[256];                 /* cudaDeviceProp.name, what nvidia-smi prints */
    double compute_capability;      /* 8.6 */
    int sm_count;
    double memory_bytes;            /* total device memory */
    double l2_bytes;
    int n_gpus;                     /* devices visible */
    double h2d_pinned_bytes_per_s, h2d_pageable_bytes_per_s;
    double d2h_pinned_bytes_per_s, d2h_pageable_bytes_per_s;
    double d2d_copy_bytes_per_s;    /* cudaMemcpy device to device, read + write bytes */
    double elementwise_bytes_per_s; /* y = a x + y, read + write bytes */
    double launch_host_s;           /* host time of one cudaLaunchKernel of an empty kernel */
    double kernel_floor_s;          /* GPU time per empty kernel launched back to back */
    double p2p_bytes_per_s;         /* cudaMemcpyPeer 0 -> 1, 0 when not measured */
    const ecp_gemm_point *gemm;
    size_t n_gemm;
} ecp_result;

/* Smallest m*n*k counted as a "large" GEMM for the efficiency of the profile row. */
#define ECP_LARGE_GEMM_MNK (4096.0 * 4096.0 * 4096.0)

/* Write DIR/gpu_profile.csv (header of models/gpus.csv, one row), DIR/gemm_curve.csv
 * (m,n,k,precision,flop_per_s,efficiency_frac) and DIR/probe_measurements.csv
 * (metric,value,unit).  The profile row starts from the models/ row of the same GPU when
 * ec_gpu_find resolves the device name (peaks, bandwidth spec, PCIe, topology) and replaces
 * what was measured; an unknown GPU gets its measured best rates as peaks (efficiency 1).
 * gpus_csv is the models/gpus.csv to read.  Every file is written atomically. */
int ecp_write(ec_ctx *ctx, const ecp_result *r, const char *gpus_csv, const char *dir);

#ifdef __cplusplus
}
#endif
#endif /* EC_PROBE_OUTPUT_H */
