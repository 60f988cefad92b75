/*
 * kernel_time.c: the time of one GEMM-shaped kernel on one GPU (docs/DESIGN.md 3.1): tile and wave
 * utilization, the fused-attention kernel (at the head dim its kernel is built for), and a GEMM at
 * a given peak with the calibration scale, the architecture's fixed start-up (gemm.csv) and a
 * memory floor.  compute.c prices ops with it,
 * overlap.c the chunks Transformer Engine's userbuffers split a GEMM into.  Inputs: the rates
 * (model/compute.h, from gpus.csv, gemm.csv, attention.csv and constants.csv).
 */
#include "model/compute.h"

#include <math.h>
#include <stddef.h>

/* Useful share of the tiles launched: tile quantization (partial tiles at the edges) and
 * wave quantization (the last wave leaves SMs idle), ceil(C/S) waves for C tiles.  When
 * the output has fewer tiles than SMs, cuBLAS and cuDNN split the reduction (split-K) so
 * every SM gets a slice of k: a weight gradient of 64 x 147 summed over 3.2M rows is not
 * run on 2 SMs. */
static double tile_util(double m, double n, double k, double batch, double tm, double tn, double sms,
                        double k_chunk)
{
    double tiles = ceil(m / tm) * ceil(n / tn) * batch;
    double splits = 1;
    if (tiles < sms) {
        splits = floor(sms / tiles);
        double max_splits = floor(k / k_chunk);
        if (splits > max_splits)
            splits = max_splits > 1 ? max_splits : 1;
    }
    double waves = ceil(tiles * splits / sms);
    return (m * n * batch * splits) / (waves * sms * tm * tn);
}

/* The better of the large and the small tile, as cuBLAS's heuristics would pick. */
static double shape_util(const eci_rates *r, double m, double n, double k, double batch)
{
    double sms = r->sm_count;
    double k_chunk = 4.0 * r->tile_large_m; /* a split still reduces several tiles' worth of k */
    double large = tile_util(m, n, k, batch, r->tile_large_m, r->tile_large_n, sms, k_chunk);
    double small = tile_util(m, n, k, batch, r->tile_small_m, r->tile_small_n, sms, k_chunk) * r->tile_small_eff;
    return large > small ? large : small;
}

double eci_gemm_util(const eci_rates *r, double m, double n, double k, double batch)
{
    /* Short reductions spend a larger share in the prologue and epilogue. */
    double k_util = k / (k + r->k_half);
    return shape_util(r, m, n, k, batch) * k_util;
}

/* A fused attention kernel over flop_factor x the FLOPs of its two products (m x n x k/2 each,
 * batch heads): at the attention unit's peak x the kernel's efficiency frac (attention.csv) x
 * attn_eff x the tile and wave utilization (the table's efficiencies are measured at long
 * sequences and head dims 64-128, so no short-reduction term), never faster than streaming Q,
 * K, V and the output (forward; the backward about twice that).  The s x s scores stay on chip. */
double eci_attn_frac(const eci_rates *r, int pass, int causal, double head_dim)
{
    double f = r->attn_frac[pass][causal];
    return r->attn_n_hd > 0 ? f * eci_attn_hd_interp(r->attn_hd, r->attn_hd_scale[pass][causal], (int)r->attn_n_hd,
                                                     head_dim)
                            : f;
}

double eci_attn_run_head_dim(const eci_rates *r, double head_dim)
{
    double d = r->attn_hd_kernel_min;
    if (!(d > 0))
        return head_dim;
    while (d < head_dim)
        d *= 2.0;
    return d;
}

double eci_attn_time_s(const eci_rates *r, double m, double n, double k, double batch, double frac,
                       double flop_factor)
{
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
        return 0;
    double rate = r->attn_flop_per_s * frac * r->attn_eff * shape_util(r, m, n, k, batch);
    double t_math = flop_factor * 2.0 * m * n * k * batch / rate;
    double t_mem = (flop_factor > 1 ? 2.0 : 1.0) * (m + n) * k * batch * r->gemm_in_bytes /
                   (r->mem_bytes_per_s * r->mem_scale);
    double t = t_math > t_mem ? t_math : t_mem;
    return t > r->floor_s ? t : r->floor_s;
}

/* A GEMM-shaped pass at the large-GEMM rate `peak` (shape utilization and the calibration scale
 * applied) that executes flop_frac of its 2 m n k batch FLOPs, never faster than moving `bytes`,
 * plus the fixed start-up and tail of a GEMM kernel on its architecture (gemm.csv fixed_s).  On
 * tensor cores the fitted scale lifts a shape's utilization toward `peak`, the GPU's measured
 * best-shape rate, never past it: no GEMM of a model beats the microbenchmark's best shape, so a
 * scale fitted on mid-sized GEMMs does not speed the large ones of an LLM beyond it.  CUDA-core
 * GEMMs keep simt_scale uncapped: gpus.csv's fp32 figures of one chip disagree, and the fitted
 * scale carries that (docs/accuracy.md, "The GEMM ceiling"). */
double eci_matmul_at(const eci_rates *r, double peak, double m, double n, double k, double batch, double flop_frac,
                     double bytes)
{
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
        return 0;
    double flop = 2.0 * m * n * k * batch * flop_frac;
    double u = r->gemm_scale * eci_gemm_util(r, m, n, k, batch);
    double rate = peak * (r->tensor_cores ? fmin(1.0, u) : u);
    double t_math = flop / rate;
    double t_mem = bytes / (r->mem_bytes_per_s * r->mem_scale);
    double t = r->gemm_fixed_s + (t_math > t_mem ? t_math : t_mem);
    return t > r->floor_s ? t : r->floor_s;
}

/* A GEMM at the large-GEMM rate `peak` (a convolution's: x conv_eff), never faster than streaming
 * its operands of in_bytes each. */
double eci_gemm_at(const eci_rates *r, double peak, double in_bytes, double m, double n, double k, double batch,
                   int kind)
{
    return eci_matmul_at(r, kind == ECI_OP_CONV ? peak * r->conv_eff : peak, m, n, k, batch, 1.0,
                     (m * k + k * n + m * n) * batch * in_bytes);
}

/* kind: ECI_OP_GEMM or ECI_OP_CONV (x conv_eff). */
double eci_gemm_time_s(const eci_rates *r, double m, double n, double k, double batch, int kind)
{
    return eci_gemm_at(r, r->gemm_flop_per_s, r->gemm_in_bytes, m, n, k, batch, kind);
}
