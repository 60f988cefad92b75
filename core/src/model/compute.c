/*
 * compute.c: GPU time of one op on one GPU (docs/DESIGN.md 3.1, modeling.md 7 and 10.1).
 *   GEMM: t = max(fixed + max(FLOPs / (peak x eff_large x held x shape_util x k_util), bytes / (BW x eff_bw)), floor),
 *   held = gpus.csv sustained_tensor_frac on tensor cores (the share of the short-run rate a GPU keeps
 *   when such kernels run back to back, as through a step), 1 on CUDA cores;
 *   fixed per architecture (gemm.csv: a GEMM kernel's start-up and tail);
 *   shape_util = useful tiles / (waves x SMs x tile): tile and wave quantization, with the
 *   better of a large and a small tile as cuBLAS's heuristics would pick;
 *   memory-bound: t = max(overhead + bytes / (BW x eff_bw), floor) per kernel, overhead from membw.csv
 *   (small kernels achieve less bandwidth than large ones); the bytes it reads that the kernel just
 *   before it wrote come from L2 where they still fit (l2.csv, l2chain.c): overhead + max(DRAM
 *   bytes / (BW x eff_bw), all bytes / (L2 BW x eff_bw)).
 *   fused attention: t = max(FLOPs / (peak x kernel_eff x attn_eff x shape_util), Q K V O bytes / (BW x eff_bw),
 *   floor), kernel_eff per kernel, architecture, pass and causal mask from models/attention.csv,
 *   x the GPU's measured GEMM efficiency over that of the part the row was measured on, x held unless
 *   attention.csv marks the kernel's rows back_to_back (timed that way already: attn_rates.c).
 * Peaks, efficiencies: gpus.csv, attention.csv, gemm.csv (k_half), constants.csv (tiles, software).
 * Convolutions: each pass by its cuDNN algorithm class (conv_algos.csv) over the input, weight and
 * output tensors, with the layout transposes cuDNN makes where the class reads another layout.
 * Also picks the unit a precision runs on, warning where it is emulated or has no effect.
 */
#include "model/compute.h"
#include "catalog/consts.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* The matmul rate a precision gets on a GPU: the unit that really runs it. */
static void pick_gemm_rate(const eci_gpu *g, int precision, eci_rates *r)
{
    double fp32 = g->peak_fp32_flop_per_s * g->gemm_eff_fp32_frac;
    r->gemm_peak_flop_per_s = g->peak_fp32_flop_per_s;
    r->gemm_flop_per_s = fp32;
    r->tensor_cores = 0;
    switch (precision) {
    case EC_PREC_FP32:
        break;
    case EC_PREC_TF32:
        if (eci_gpu_tf32(g)) {
            r->gemm_peak_flop_per_s = g->peak_tf32_flop_per_s;
            r->gemm_flop_per_s = g->peak_tf32_flop_per_s * g->gemm_eff_tf32_frac;
            r->tensor_cores = 1;
        } else {
            eci_rates_warn(r, EC_WARN_TF32_NO_EFFECT, "tf32 has no effect before Ampere (compute capability < 8.0): matmuls run in fp32");
        }
        break;
    case EC_PREC_AMP_FP16:
    case EC_PREC_FP16:
        if (g->peak_fp16_flop_per_s > 0) {
            r->gemm_peak_flop_per_s = g->peak_fp16_flop_per_s;
            r->gemm_flop_per_s = g->peak_fp16_flop_per_s * g->gemm_eff_fp16_frac;
            r->tensor_cores = 1;
        } else {
            eci_rates_warn(r, EC_WARN_FP16_NO_TENSOR, "this GPU has no fp16 tensor cores: fp16 matmuls run at the fp32 rate");
        }
        break;
    case EC_PREC_AMP_BF16:
    case EC_PREC_AMP_FP8: /* bf16 for what TE leaves in 16 bits; its FP8 GEMMs: fp8_flop_per_s */
    case EC_PREC_BF16:
        if (g->peak_bf16_flop_per_s > 0) {
            r->gemm_peak_flop_per_s = g->peak_bf16_flop_per_s;
            r->gemm_flop_per_s = g->peak_bf16_flop_per_s * g->gemm_eff_bf16_frac;
            r->tensor_cores = 1;
        } else {
            double emu = g->emulated_bf16_flop_per_s > 0 ? g->emulated_bf16_flop_per_s : fp32;
            /* the emulation runs on the CUDA cores: MFU is against their dense fp32 peak, not
             * against the measured emulated rate (which would make a slow GEMM look efficient) */
            r->gemm_peak_flop_per_s = g->peak_fp32_flop_per_s;
            r->gemm_flop_per_s = emu * (g->emulated_bf16_flop_per_s > 0 ? g->gemm_eff_bf16_frac : 1.0);
            eci_rates_warn(r, EC_WARN_BF16_EMULATED, "bf16 is emulated on this GPU (no bf16 tensor cores before Ampere): matmuls run at the measured emulated rate");
        }
        break;
    default:
        break;
    }
}

/* only padding between warning_text and comm, which eci_rates_init zeroes from */
_Static_assert(offsetof(eci_rates, comm) - offsetof(eci_rates, warning_text) - EC_WARNING_TEXT_MAX < sizeof(void *),
               "a field follows warning_text in eci_rates: eci_rates_init must zero it");

void eci_rates_init(const ec_ctx *ctx, const eci_gpu *g, int precision, const eci_params *c, int cnn, int kernels,
                    eci_rates *r)
{
    /* every field zero, the warning text empty (its 512 bytes are read only up to the NUL) */
    memset(r, 0, offsetof(eci_rates, warning_text));
    r->warning_text[0] = '\0';
    memset(&r->comm, 0, sizeof *r - offsetof(eci_rates, comm));
    pick_gemm_rate(g, precision, r);
    /* A training step runs tensor-bound kernels back to back: the clock its power limit holds, not
     * the short-run one the efficiencies were timed at (gpus.csv sustained_tensor_frac) */
    double sustained = eci_gpu_sustained(g);
    if (r->tensor_cores)
        r->gemm_flop_per_s *= sustained;
    r->mem_bytes_per_s = g->memory_bandwidth_bytes_per_s * g->memory_eff_frac;
    r->mem_overhead_s = g->mem_overhead_s;
    r->l2_bytes_per_s = g->l2_read_bytes_per_s;
    r->l2_usable_bytes = g->l2_usable_bytes;
    r->floor_s = g->kernel_floor_s;
    r->sm_count = g->sm_count;
    r->tile_large_m = eci_const(ctx, EC_C_gemm_tile_large_m);
    r->tile_large_n = eci_const(ctx, EC_C_gemm_tile_large_n);
    r->tile_small_m = eci_const(ctx, EC_C_gemm_tile_small_m);
    r->tile_small_n = eci_const(ctx, EC_C_gemm_tile_small_n);
    r->tile_small_eff = eci_const(ctx, EC_C_gemm_tile_small_eff_frac);
    r->k_half = g->gemm_k_half; /* gemm.csv, per architecture */
    r->gemm_fixed_s = g->gemm_fixed_s;
    r->conv_eff = c->conv_eff;
    r->attn_eff = c->attn_eff;
    r->attn_eff_kernels = c->attn_kernels;
    r->attn_eff_fit = c->attn_eff;
    r->attn_mask_eff = c->attn_mask_eff;
    r->attn_mask_kernels = c->attn_mask_kernels;
    /* The architecture's fitted scales where the fit has runs of it with these kernels (catalog/
     * params.c says what an architecture it has not seen gets); a CNN's memory-bound kernels have
     * their own scale (fitted on CNN runs only). */
    const eci_params_arch *a = eci_params_arch_for(c, g->architecture, kernels);
    r->gemm_scale = eci_params_scale(c, a, r->tensor_cores ? ECI_P_GEMM : ECI_P_SIMT);
    r->mem_scale = eci_params_scale(c, a, cnn ? ECI_P_MEM_CNN : ECI_P_MEM);
    int half = precision == EC_PREC_AMP_FP16 || precision == EC_PREC_AMP_BF16 || precision == EC_PREC_FP16 ||
               precision == EC_PREC_BF16 || precision == EC_PREC_AMP_FP8;
    r->gemm_in_bytes = half ? 2.0 : 4.0;
    /* Fused attention's unit: 16-bit inputs on the matmul unit's peak; fp32 inputs (fp32 and
     * tf32 alike: allow_tf32 does not reach it) go to the memory-efficient kernel, which
     * multiplies with 3xTF32 on tensor cores from Ampere on (CUTLASS OpMultiplyAddFastF32) and
     * on CUDA cores before.  Its efficiency: eci_rates_attention (SDPA's pick until then). */
    r->attn_unit_flop_per_s = r->gemm_peak_flop_per_s;
    if (!half)
        r->attn_unit_flop_per_s = eci_gpu_tf32(g) ? g->peak_tf32_flop_per_s / eci_const(ctx, EC_C_sdpa_fp32_tf32_passes)
                                                  : g->peak_fp32_flop_per_s;
    r->attn_sustained = (half ? r->tensor_cores : eci_gpu_tf32(g)) ? sustained : 1.0; /* that unit on tensor cores */
    r->attn_flop_per_s = r->attn_unit_flop_per_s;
    eci_rates_attention_sdpa(ctx, g, precision, r);
    if (precision == EC_PREC_AMP_FP8 && g->peak_fp8_flop_per_s > 0)
        r->fp8_flop_per_s = g->peak_fp8_flop_per_s * g->gemm_eff_fp8_frac * sustained;
    /* Transformer Engine's nvte_is_non_tn_fp8_gemm_supported (constants.csv te_fp8_non_tn_*_cc) */
    double cc = g->compute_capability;
    r->te_fp8_non_tn = (cc >= eci_const(ctx, EC_C_te_fp8_non_tn_min_cc) && cc < eci_const(ctx, EC_C_te_fp8_non_tn_below_cc)) ||
                       cc >= eci_const(ctx, EC_C_te_fp8_non_tn_again_cc);
}

void eci_rates_te(eci_rates *r, int grad_accum, int fp8_recipe, int fp8_params)
{
    r->te = 1;
    r->fp8_weight_cast_frac = 1.0 / (grad_accum > 1 ? grad_accum : 1);
    r->te_fp8_current = fp8_recipe == EC_FP8_CURRENT;
    r->te_fp8_params = fp8_params != 0;
}

/* The same under Transformer Engine as Megatron-Core drives it (kernels=te; TransformerEngine
 * @7d576ed2, the NeMo 24.07 pin, transformer_engine/pytorch/module/): LayerNormLinear's norm
 * writes its output in FP8 (layernorm_linear.py L125-139, the cast is the norm's store) and the
 * backward transposes it for the weight gradient (L570 fp8_transpose: te_fp8_transpose_bytes);
 * Linear casts a 16-bit input and its transpose in one kernel (linear.py L129
 * fp8_cast_transpose_fused: te_fp8_cast_transpose_bytes), and the output gradient likewise in
 * the backward; the weight and its transpose are cast on the step's first micro-batch only
 * (linear.py L988-997: update_workspace only when is_first_microbatch; fp8_weight_cast_frac).
 * Where the FP8 GEMMs take non-TN layouts (te_fp8_non_tn: TE 2.x on compute capability 10.x) TE
 * makes no transposed copies: each cast writes the row-wise FP8 copy only (te_fp8_cast_bytes) and
 * the norm's output is not transposed (TransformerEngine v2.9 pytorch/csrc/quantizer.cpp L137,
 * L340: with_transpose = columnwise_usage && !nvte_is_non_tn_fp8_gemm_supported()).
 * Current scaling (te_fp8_current, fp8_recipe=current; TE v2.9 quantizer.cpp L497-549
 * Float8CurrentScalingQuantizer::quantize_impl): each cast first reads its 16-bit input for the
 * amax (nvte_compute_amax, te_fp8_amax_bytes), then casts; the norm stores its output in 16 bits
 * with the amax fused (extensions/normalization.cpp rmsnorm_fwd L340-344, L410-412:
 * FUSED_NORM_AMAX_FP8) and TE casts it (quantize_with_amax: no amax pass), transposed copy
 * included where one is made, so the backward transposes nothing.
 * FP8 parameters (te_fp8_params, fp8_params=1): the weight is an FP8 tensor already, so no cast;
 * its backward transposes it once a step (linear.py, TransformerEngine 1.x: primary_weights_in_fp8,
 * weight.transpose_2d(cache=..., noop_flag=skip_fp8_weight_update): te_fp8_transpose_bytes), and
 * not at all where the FP8 GEMMs take non-TN layouts.  The optimizer's write of a trained weight
 * in FP8 (where the 16-bit copy was written before) is not priced. */
static void te_fp8_gemm_cost(const ec_ctx *ctx, const eci_rates *r, const eci_op *op, eci_op_cost_t *c)
{
    double m = op->m, n = op->n, k = op->k, b = op->batch, bw = r->mem_bytes_per_s * r->mem_scale;
    int non_tn = r->te_fp8_non_tn != 0;
    double ct = eci_const(ctx, non_tn ? EC_C_te_fp8_cast_bytes : EC_C_te_fp8_cast_transpose_bytes);
    int normed = op->in_normed != 0, cur = r->te_fp8_current != 0;
    double tr = non_tn || cur ? 0.0 : eci_const(ctx, EC_C_te_fp8_transpose_bytes);
    double am = cur ? eci_const(ctx, EC_C_te_fp8_amax_bytes) : 0.0; /* the amax pass before a cast */
    double in_b = normed ? (cur ? ct : 0.0) : am + ct;                /* the input's cast per element */
    double w_b = !r->te_fp8_params ? am + ct : non_tn ? 0.0 : eci_const(ctx, EC_C_te_fp8_transpose_bytes);
    c->fwd_s = eci_gemm_at(r, r->fp8_flop_per_s, 1.0, m, n, k, b, ECI_OP_GEMM) +
               (in_b * m * k + w_b * k * n * r->fp8_weight_cast_frac) * b / bw;
    c->fwd_kernels = 1 + (normed ? cur : 1 + cur);
    if (!op->bwd)
        return;
    c->bwd_s = eci_gemm_at(r, r->fp8_flop_per_s, 1.0, m, k, n, b, ECI_OP_GEMM) + (am + ct) * m * n * b / bw;
    c->bwd_kernels = 2 + cur; /* the output gradient's (amax and) cast and transpose, the input's gradient */
    if (!op->frozen) {
        c->bwd_s += eci_gemm_at(r, r->fp8_flop_per_s, 1.0, n, k, m, b, ECI_OP_GEMM) + (normed ? tr * m * k * b / bw : 0);
        c->bwd_kernels += 1 + (normed && tr > 0);
    }
}

/* A GEMM Transformer Engine runs in FP8 (forward E4M3, backward E5M2 gradients): the three
 * GEMMs at the FP8 rate with 1-byte operands, plus the quantization TE adds around them
 * (delayed scaling): the input and the weight cast to FP8 in the forward (read 2, write 1 byte
 * each), the output gradient cast and the transposed FP8 copies the backward GEMMs read. */
static void fp8_gemm_cost(const ec_ctx *ctx, const eci_rates *r, const eci_op *op, eci_op_cost_t *c)
{
    double m = op->m, n = op->n, k = op->k, b = op->batch, bw = r->mem_bytes_per_s * r->mem_scale;
    if (r->te > 0) { /* Transformer Engine's own casts (kernels=te) */
        te_fp8_gemm_cost(ctx, r, op, c);
        return;
    }
    c->fwd_s = eci_gemm_at(r, r->fp8_flop_per_s, 1.0, m, n, k, b, ECI_OP_GEMM) + 3.0 * (m * k + k * n) * b / bw;
    c->fwd_kernels = 2; /* the GEMM and the fused cast of its input (the weight's is cached per step) */
    if (!op->bwd)
        return;
    c->bwd_s = eci_gemm_at(r, r->fp8_flop_per_s, 1.0, m, k, n, b, ECI_OP_GEMM) + (3.0 * m * n + m * k + k * n) * b / bw;
    c->bwd_kernels = 2;
    if (!op->frozen) {
        c->bwd_s += eci_gemm_at(r, r->fp8_flop_per_s, 1.0, n, k, m, b, ECI_OP_GEMM);
        c->bwd_kernels++;
    }
}

/* A memory-bound op of `kernels` kernels moving `bytes`, hit_bytes of which it reads from L2: a
 * roofline of the two levels (every byte passes through L2, only the others reach the DRAM; the
 * writes drain to it), never slower than without the hit.  The kernels' achieved share of a
 * streaming benchmark's rate (mem_scale) applies to either level. */
static double mem_l2_time_s(const eci_rates *r, double bytes, double kernels, double hit_bytes)
{
    double n = kernels > 0 ? kernels : 1;
    double bw = r->mem_bytes_per_s * r->mem_scale, t_mem = bytes / bw;
    if (hit_bytes > 0 && r->l2_bytes_per_s > 0) {
        double dram = (bytes - hit_bytes) / bw, l2 = bytes / (r->l2_bytes_per_s * r->mem_scale);
        double t_l2 = dram > l2 ? dram : l2;
        t_mem = t_l2 < t_mem ? t_l2 : t_mem;
    }
    double t = n * r->mem_overhead_s + t_mem;
    double floor_s = r->floor_s * n;
    return t > floor_s ? t : floor_s;
}

double eci_mem_time_s(const eci_rates *r, double bytes, double kernels)
{
    return mem_l2_time_s(r, bytes, kernels, 0);
}

/* The bytes of pass (0 forward, 1 backward) an op reads from L2: those the kernel just before it
 * wrote (l2chain.c) whose reuse distance, linear from the first element's to the last's, is
 * within the GPU's usable L2 (an LRU cache keeps a line while fewer bytes than its capacity were
 * touched since: gpu-l2-cache's plateau is that capacity for a repeatedly read footprint). */
double eci_l2_hit_bytes(const eci_rates *r, const eci_op *op, int pass)
{
    double in = op->l2_in_bytes[pass], c = r->l2_usable_bytes;
    if (in <= 0 || c <= 0 || r->l2_bytes_per_s <= 0)
        return 0;
    double a = op->l2_reuse_bytes[pass][0], z = op->l2_reuse_bytes[pass][1];
    double lo = a < z ? a : z, hi = a < z ? z : a;
    double frac = hi <= c ? 1.0 : lo >= c ? 0.0 : (c - lo) / (hi - lo);
    return in * frac;
}

/* ---- convolutions ----------------------------------------------------------------------
 * Each pass runs the algorithm class models/conv_algos.csv gives for the unit (tensor cores or
 * CUDA cores), filter, stride and groups: the forward (m x n, reducing k), the data gradient
 * (m x k, reducing n) and the weight gradient (n x k, reducing m) at the GEMM rate of that shape
 * (x conv_eff where the class takes it) on flop_frac of the direct FLOPs (Winograd executes
 * fewer), never faster than moving the convolution's input, weight and output once plus the
 * class's workspace traffic.  The im2col matrix (m x k) is never written: implicit GEMM indexes
 * the input in place.  The model's FLOPs stay the direct convolution's (workload_sums.c). */
static const eci_conv_algo DIRECT = {.name = "implicit_gemm", .flop_frac = 1.0, .conv_eff = 1};

static double conv_pass_s(const eci_rates *r, const eci_conv_algo *a, double m, double n, double k, double groups,
                          double io_bytes, double in_out_bytes)
{
    double peak = r->gemm_flop_per_s * (a->conv_eff ? r->conv_eff : 1.0);
    return eci_matmul_at(r, peak, m, n, k, groups, a->flop_frac, io_bytes + a->workspace_io_frac * in_out_bytes);
}

/* A pass whose kernels read another layout than the tensors': cuDNN transposes around it. */
static int transposes(const eci_conv_algo *a, int nhwc)
{
    return a->layout != ECI_CONV_ANY && a->layout != (nhwc ? ECI_CONV_NHWC : ECI_CONV_NCHW);
}

/* cuDNN's layout transposes (each reads and writes a tensor, one kernel each) where a pass's
 * kernels read another layout than the tensors': NCHW tensors on NHWC kernels transpose the
 * input in the forward (the kernel writes the NCHW output itself, ..._nhwckrsc_nchw), the
 * output's gradient and the data gradient back around dgrad, and the input for wgrad (the
 * output's gradient once for both): 1 and 3 kernels, as counted in a public fp16 ResNet-50
 * profile (3.0 nchwToNhwc and 1.3 nhwcToNchw per convolution and step); NHWC tensors on NCHW
 * kernels (Winograd) transpose the input and the output around the pass. */
static void conv_transposes(const eci_rates *r, const eci_op *op, const eci_conv_algo *const a[ECI_CONV_PASSES],
                            int dgrad_only, double in, double out, eci_op_cost_t *c)
{
    int nhwc = op->conv_nhwc;
    if (transposes(a[ECI_CONV_FWD], nhwc)) {
        int kernels = nhwc ? 2 : 1;
        c->fwd_s += eci_mem_time_s(r, 2.0 * (in + (nhwc ? out : 0)), kernels);
        c->fwd_kernels += kernels;
    }
    if (!op->bwd)
        return;
    double bytes = 0;
    int kernels = 0, dy_done = 0;
    if (transposes(a[ECI_CONV_DGRAD], nhwc)) { /* the output's gradient in, the data gradient out */
        bytes += 2.0 * (out + in);
        kernels += 2;
        dy_done = 1;
    }
    if (!dgrad_only && transposes(a[ECI_CONV_WGRAD], nhwc)) { /* the input, and the output's gradient */
        bytes += 2.0 * (in + (dy_done ? 0 : out));
        kernels += dy_done ? 1 : 2;
    }
    if (kernels > 0) {
        c->bwd_s += eci_mem_time_s(r, bytes, kernels);
        c->bwd_kernels += kernels;
    }
}

static void conv_cost(const ec_ctx *ctx, const eci_rates *r, const eci_op *op, eci_op_cost_t *c)
{
    double m = op->m, n = op->n, k = op->k, g = op->batch, e = r->gemm_in_bytes;
    double in = op->conv_in_elems * e, out = m * n * g * e, io = in + n * k * g * e + out;
    const eci_conv_algo *a[ECI_CONV_PASSES];
    for (int p = 0; p < ECI_CONV_PASSES; p++) {
        a[p] = eci_conv_algo_for(ctx, r->tensor_cores, op->conv_kernel, op->conv_stride, g, p);
        if (a[p] == NULL) /* no conv_algos.csv loaded (not after ec_ctx_load_models) */
            a[p] = &DIRECT;
    }
    c->fwd_s = conv_pass_s(r, a[ECI_CONV_FWD], m, n, k, g, io, in + out);
    c->fwd_kernels = 1;
    int dgrad_only = op->frozen; /* a frozen filter: the input's gradient only */
    if (op->bwd) {
        c->bwd_s = conv_pass_s(r, a[ECI_CONV_DGRAD], m, k, n, g, io, in + out);
        c->bwd_kernels = 1;
        if (!dgrad_only) {
            c->bwd_s += conv_pass_s(r, a[ECI_CONV_WGRAD], n, k, m, g, io, in + out);
            c->bwd_kernels++;
            if (op->param_tensors >= 2) { /* the bias gradient: a reduction over the rows */
                c->bwd_s += eci_mem_time_s(r, out, 1);
                c->bwd_kernels++;
            }
        }
    }
    conv_transposes(r, op, a, dgrad_only, in, out, c);
}

/* One launch of the op (count = 1). */
static void op_cost_once(const ec_ctx *ctx, const eci_rates *r, const eci_op *op, eci_op_cost_t *c)
{
    double bwd_factor = eci_const(ctx, EC_C_bwd_mem_bytes_factor);
    switch (op->kind) {
    case ECI_OP_ATTN: {
        /* FlashAttention-style backward: dQ, dK, dV plus recomputing the scores, at the
         * kernel's backward rate. */
        double keys = op->n * (op->attn_keys_frac > 0 ? op->attn_keys_frac : 1.0);
        int causal = op->attn_causal != 0;
        /* k: the query-key plus the value head width; a kernel built for fewer head dims runs
         * this one at the next it has (eci_attn_run_head_dim): that width's work at its rate */
        double head_dim = eci_attn_run_head_dim(r, op->k / 2), k = 2.0 * head_dim;
        c->fwd_s = eci_attn_time_s(r, op->m, keys, k, op->batch, eci_attn_frac(r, 0, causal, head_dim), 1.0);
        c->fwd_kernels = 1;
        c->bwd_s = eci_attn_time_s(r, op->m, keys, k, op->batch, eci_attn_frac(r, 1, causal, head_dim),
                                   eci_const(ctx, EC_C_sdpa_bwd_flop_factor));
        c->bwd_kernels = 2;
        break;
    }
    case ECI_OP_CONV:
        conv_cost(ctx, r, op, c);
        break;
    case ECI_OP_GEMM: {
        if (op->fp8 && r->fp8_flop_per_s > 0) {
            fp8_gemm_cost(ctx, r, op, c);
            break;
        }
        c->fwd_s = eci_gemm_time_s(r, op->m, op->n, op->k, op->batch, ECI_OP_GEMM);
        c->fwd_kernels = 1;
        if (op->bwd && op->frozen) { /* a frozen weight (LoRA's base): the input's gradient only */
            c->bwd_s = eci_gemm_time_s(r, op->m, op->k, op->n, op->batch, ECI_OP_GEMM);
            c->bwd_kernels = 1;
        } else if (op->bwd) {
            /* dgrad: (m x k) = (m x n)(n x k); wgrad or the second input's grad:
             * (n x k) = (n x m)(m x k); a bias adds a reduction over the rows. */
            c->bwd_s = eci_gemm_time_s(r, op->m, op->k, op->n, op->batch, ECI_OP_GEMM) +
                       eci_gemm_time_s(r, op->n, op->k, op->m, op->batch, ECI_OP_GEMM);
            c->bwd_kernels = 2;
            if (op->param_tensors >= 2) {
                c->bwd_s += eci_mem_time_s(r, op->m * op->n * r->gemm_in_bytes, 1);
                c->bwd_kernels++;
            }
        }
        break;
    }
    case ECI_OP_COMM: /* NCCL kernels of the layout's groups, on the compute stream */
        if (r->comm == NULL)
            break;
        c->fwd_s = eci_coll_s(r->comm, &r->groups[op->group], (eci_coll)op->fwd_coll, op->comm_bytes);
        c->bwd_s = eci_coll_s(r->comm, &r->groups[op->group], (eci_coll)op->bwd_coll, op->comm_bytes);
        c->fwd_kernels = op->fwd_coll != ECI_COLL_NONE;
        c->bwd_kernels = op->bwd_coll != ECI_COLL_NONE;
        break;
    case ECI_OP_MEM:
    case ECI_OP_CAST:
        if (op->fwd_kernels == 0) /* a marker (what an op keeps, nothing launched) */
            break;
        c->fwd_s = mem_l2_time_s(r, op->fwd_bytes, op->fwd_kernels, eci_l2_hit_bytes(r, op, 0));
        c->fwd_kernels = op->fwd_kernels;
        if (op->bwd) {
            double bytes = op->bwd_bytes > 0 ? op->bwd_bytes : op->fwd_bytes * bwd_factor;
            /* Norms compute the input grad and the weight grads in two kernels (frozen: one). */
            c->bwd_kernels = op->fwd_kernels + (op->params > 0 && !op->frozen && op->kind == ECI_OP_MEM ? 1 : 0);
            c->bwd_s = mem_l2_time_s(r, bytes, c->bwd_kernels, eci_l2_hit_bytes(r, op, 1));
        }
        break;
    }
}

void eci_op_cost(const ec_ctx *ctx, const eci_rates *r, const eci_op *op, eci_op_cost_t *c)
{
    memset(c, 0, sizeof *c);
    op_cost_once(ctx, r, op, c);
    /* an op of a Python loop (one per expert) runs count times back to back, each run's gradients its own */
    int n = op->count > 1 ? op->count : 1;
    c->fwd_s *= n, c->bwd_s *= n;
    c->fwd_kernels *= n;
    c->bwd_kernels *= n;
    c->host_kernels = op->fwd_kernels * n;
    c->host_cast = op->kind == ECI_OP_CAST || op->linear_bias; /* issued inside ATen */
    c->host_ops = op->fwd_kernels > 0 ? n : 0;
    c->grad_params = op->params > 0 && !op->frozen ? op->params * n : 0;
    c->expert_grads = op->expert;
}

/* ---- the context's cost cache ----------------------------------------------------------
 * A sweep re-prices the same op list on the same GPU many times (every optimizer, loader
 * setting and GPU count of one batch size and GPU), so the context keeps the costs of each
 * cached workload on up to ECI_COST_CACHE_WAYS different rates.  The key is everything
 * eci_op_cost reads besides the op: the workload expansion (its serial number: a new
 * expansion never matches an old one's costs), every field of the rates but the warnings,
 * the gpu_step_s scale and the two constants it reads.  Slots are grouped by the workload's
 * serial modulo the workload cache's size (the live expansions have consecutive serials, so
 * each has its own group); in a group an empty or stale slot is taken first, else round-robin. */
#define ECI_COST_CACHE_WAYS 16

enum { ATTN_HD_KEY = 44, COST_KEY_VALUES = ATTN_HD_KEY + 5 * ECI_AK_HD_MAX + 4 * ECI_N_GROUPS };

typedef struct cost_key {
    double v[COST_KEY_VALUES];
} cost_key;

typedef struct cost_slot {
    unsigned long long serial; /* the workload's serial; 0: empty */
    cost_key key;
    size_t n_ops, cap;
    eci_op_cost_t *cost;
    /* The step model's per-op forward host costs at host_key (its dispatch costs), worked out
     * from these costs (eci_op_costs_host); host_valid: 0 until then, and after a re-pricing. */
    double host_key[ECI_HOST_KEY_VALUES];
    int host_valid;
    size_t host_cap;
    double *host;
    size_t sums_cap;    /* ...and the walk's run sums at host_key (2 per op, then the passes') */
    eci_walk_sum *sums;
} cost_slot;

struct eci_cost_cache {
    cost_slot slot[ECI_WL_CACHE_ENTRIES][ECI_COST_CACHE_WAYS];
    unsigned next[ECI_WL_CACHE_ENTRIES]; /* round-robin victim per group */
    size_t hits, misses;
};

/* make_cost_key lists every field of eci_rates before `warnings` (16 doubles, tensor_cores,
 * fp8_flop_per_s, gemm_scale, mem_scale, attn_flop_per_s, attn_frac, te, fp8_weight_cast_frac,
 * ep_overlap_frac, tp_overlap, te_fp8_non_tn, te_fp8_current, te_fp8_params, the L2's two, attn_hd_kernel_min, the attention head-dim table): a field added there must join the key, or changing it would return
 * stale costs. */
_Static_assert(offsetof(eci_rates, warnings) == (36 + 5 * ECI_AK_HD_MAX) * sizeof(double),
               "eci_rates changed: add the new field to make_cost_key");

static void make_cost_key(const ec_ctx *ctx, const eci_rates *r, double gpu_scale, cost_key *k)
{
    const double v[COST_KEY_VALUES] = {
        r->gemm_peak_flop_per_s, r->gemm_flop_per_s, r->gemm_in_bytes, r->mem_bytes_per_s, r->floor_s,
        r->sm_count, r->tile_large_m, r->tile_large_n, r->tile_small_m, r->tile_small_n, r->tile_small_eff,
        r->k_half, r->conv_eff, r->attn_eff, (double)r->tensor_cores, r->gemm_scale, r->mem_scale, gpu_scale,
        eci_const(ctx, EC_C_bwd_mem_bytes_factor), eci_const(ctx, EC_C_sdpa_bwd_flop_factor), r->fp8_flop_per_s,
        r->attn_flop_per_s, r->attn_frac[0][0], r->attn_frac[0][1], r->attn_frac[1][0], r->attn_frac[1][1],
        r->mem_overhead_s, r->gemm_fixed_s, r->te, r->fp8_weight_cast_frac,
        eci_const(ctx, EC_C_te_fp8_cast_transpose_bytes), eci_const(ctx, EC_C_te_fp8_transpose_bytes), r->attn_n_hd, r->ep_overlap_frac,
        eci_const(ctx, EC_C_overlap_compute_slowdown_frac), r->te_fp8_non_tn, eci_const(ctx, EC_C_te_fp8_cast_bytes),
        r->te_fp8_current, eci_const(ctx, EC_C_te_fp8_amax_bytes), r->tp_overlap, r->l2_bytes_per_s,
        r->l2_usable_bytes, r->attn_hd_kernel_min, r->te_fp8_params};
    memcpy(k->v, v, sizeof v);
    memcpy(&k->v[ATTN_HD_KEY], r->attn_hd, sizeof r->attn_hd);
    memcpy(&k->v[ATTN_HD_KEY + ECI_AK_HD_MAX], r->attn_hd_scale, sizeof r->attn_hd_scale);
    for (int g = 0; g < ECI_N_GROUPS; g++) { /* the groups the COMM ops run over */
        const eci_group *gr = &r->groups[g];
        double *w = &k->v[COST_KEY_VALUES - 4 * ECI_N_GROUPS + 4 * g];
        w[0] = r->comm != NULL ? gr->n : 0;
        w[1] = gr->busbw_bytes_per_s;
        w[2] = gr->p2p_bytes_per_s;
        w[3] = gr->hop_latency_s;
    }
}

/* Price every op of wl into cost: ops with an earlier twin copy its cost. */
static void price_ops(const ec_ctx *ctx, const eci_rates *r, const eci_workload *wl, double gpu_scale,
                      eci_op_cost_t *cost)
{
    for (size_t i = 0; i < wl->n_ops; i++) {
        const eci_op *op = &wl->ops[i];
        if (op->twin < i && !op->hidden) { /* same shape as an earlier op: same cost */
            cost[i] = cost[op->twin];
            continue;
        }
        eci_op_cost(ctx, r, op, &cost[i]);
        if (op->kind == ECI_OP_COMM)
            continue; /* the network's time: gpu_step_s scales the kernels only */
        cost[i].fwd_s *= gpu_scale;
        cost[i].bwd_s *= gpu_scale;
    }
    eci_overlap_apply(ctx, r, wl, cost); /* collectives under the kernels beside them (overlap.c) */
    int prev = -1;
    for (size_t i = 0; i < wl->n_ops; i++) {
        cost[i].bwd_prev = prev;
        if (cost[i].bwd_kernels != 0)
            prev = (int)i;
    }
}

/* The slot to fill for a workload that missed: an empty or stale one, else round-robin. */
static cost_slot *victim(struct eci_cost_cache *c, size_t group, unsigned long long serial)
{
    cost_slot *ways = c->slot[group];
    for (size_t w = 0; w < ECI_COST_CACHE_WAYS; w++)
        if (ways[w].serial != serial)
            return &ways[w];
    unsigned w = c->next[group];
    c->next[group] = (w + 1) % ECI_COST_CACHE_WAYS;
    return &ways[w];
}

/* Not from the cache (a workload outside it, or no memory for the cache): price into the
 * context's scratch buffer, taken only here so that the cached path costs no memset.  A
 * failed cache allocation is no error; the prediction does without the cache. */
static const eci_op_cost_t *uncached(ec_ctx *ctx, const eci_rates *r, const eci_workload *wl, double gpu_scale)
{
    eci_op_cost_t *cost = eci_scratch(ctx, ECI_SCRATCH_OP_COSTS, wl->n_ops, sizeof *cost);
    if (cost == NULL)
        return NULL;
    if (wl->serial != 0)
        eci_error_clear(ctx);
    price_ops(ctx, r, wl, gpu_scale, cost);
    return cost;
}

/* The context's cost cache, made on first use (freed with the context). */
static int cost_cache_new(ec_ctx *ctx)
{
    int rc = eci_ctx_on_free(ctx, eci_compute_ctx_free);
    if (rc == EC_OK && (ctx->cost_cache = eci_calloc(ctx, 1, sizeof *ctx->cost_cache)) == NULL)
        rc = EC_ENOMEM;
    return rc;
}

const eci_op_cost_t *eci_op_costs(ec_ctx *ctx, const eci_rates *r, const eci_workload *wl, double gpu_scale)
{
    if (wl->serial == 0 || (ctx->cost_cache == NULL && cost_cache_new(ctx) != EC_OK))
        return uncached(ctx, r, wl, gpu_scale);
    struct eci_cost_cache *c = ctx->cost_cache;
    cost_key key;
    make_cost_key(ctx, r, gpu_scale, &key);
    size_t group = (size_t)(wl->serial % ECI_WL_CACHE_ENTRIES);
    for (size_t w = 0; w < ECI_COST_CACHE_WAYS; w++) {
        cost_slot *s = &c->slot[group][w];
        if (s->serial == wl->serial && memcmp(&s->key, &key, sizeof key) == 0) {
            c->hits++;
            return s->cost;
        }
    }
    c->misses++;
    cost_slot *s = victim(c, group, wl->serial);
    s->serial = 0; /* never matches while it holds no valid costs */
    if (s->cap < wl->n_ops) {
        eci_op_cost_t *grown = eci_realloc(ctx, s->cost, s->cap * sizeof *s->cost, wl->n_ops * sizeof *s->cost);
        if (grown == NULL)
            return uncached(ctx, r, wl, gpu_scale);
        s->cost = grown;
        s->cap = wl->n_ops;
    }
    price_ops(ctx, r, wl, gpu_scale, s->cost);
    s->host_valid = 0;
    s->key = key;
    s->n_ops = wl->n_ops;
    s->serial = wl->serial;
    return s->cost;
}

/* The run sums of n_ops ops: 2 per op, then the passes' (ECI_PASS_SUMS). */
static size_t n_sums(size_t n_ops)
{
    return 2 * n_ops + ECI_PASS_SUMS;
}

/* Room for the run sums of slot s, none worked out.  NULL without memory (no error: the
 * walk goes op by op). */
static eci_walk_sum *fresh_sums(ec_ctx *ctx, cost_slot *s, size_t n_ops)
{
    if (s->sums_cap < n_sums(n_ops)) {
        eci_walk_sum *grown = eci_realloc(ctx, s->sums, s->sums_cap * sizeof *s->sums, n_sums(n_ops) * sizeof *s->sums);
        if (grown == NULL) {
            eci_error_clear(ctx);
            return NULL;
        }
        s->sums = grown;
        s->sums_cap = n_sums(n_ops);
    }
    memset(s->sums, 0, n_sums(n_ops) * sizeof *s->sums);
    return s->sums;
}

double *eci_op_costs_host(ec_ctx *ctx, const eci_workload *wl, const eci_op_cost_t *cost,
                          const double key[ECI_HOST_KEY_VALUES], int *valid, eci_walk_sum **sums)
{
    *valid = 0;
    *sums = NULL;
    struct eci_cost_cache *c = ctx->cost_cache;
    if (c == NULL || wl->serial == 0)
        return NULL;
    size_t group = (size_t)(wl->serial % ECI_WL_CACHE_ENTRIES);
    for (size_t w = 0; w < ECI_COST_CACHE_WAYS; w++) {
        cost_slot *s = &c->slot[group][w];
        if (s->serial != wl->serial || s->cost != cost)
            continue;
        if (s->host_valid && memcmp(s->host_key, key, sizeof s->host_key) == 0) {
            *valid = 1;
            *sums = s->sums_cap >= n_sums(wl->n_ops) ? s->sums : NULL;
            return s->host;
        }
        if (s->host_cap < wl->n_ops) {
            double *grown = eci_realloc(ctx, s->host, s->host_cap * sizeof *s->host, wl->n_ops * sizeof *s->host);
            if (grown == NULL) {
                eci_error_clear(ctx); /* no error: the caller works them out without the cache */
                return NULL;
            }
            s->host = grown;
            s->host_cap = wl->n_ops;
        }
        memcpy(s->host_key, key, sizeof s->host_key);
        s->host_valid = 1; /* the caller fills it now */
        *sums = fresh_sums(ctx, s, wl->n_ops);
        return s->host;
    }
    return NULL;
}

void eci_op_costs_stats(const ec_ctx *ctx, size_t *hits, size_t *misses)
{
    *hits = ctx->cost_cache != NULL ? ctx->cost_cache->hits : 0;
    *misses = ctx->cost_cache != NULL ? ctx->cost_cache->misses : 0;
}

void eci_compute_ctx_free(ec_ctx *ctx)
{
    struct eci_cost_cache *c = ctx->cost_cache;
    if (c == NULL)
        return;
    for (size_t g = 0; g < ECI_WL_CACHE_ENTRIES; g++)
        for (size_t w = 0; w < ECI_COST_CACHE_WAYS; w++)
        {
            eci_free(ctx, c->slot[g][w].cost, c->slot[g][w].cap * sizeof *c->slot[g][w].cost);
            eci_free(ctx, c->slot[g][w].host, c->slot[g][w].host_cap * sizeof *c->slot[g][w].host);
            eci_free(ctx, c->slot[g][w].sums, c->slot[g][w].sums_cap * sizeof *c->slot[g][w].sums);
        }
    eci_free(ctx, c, sizeof *c);
    ctx->cost_cache = NULL;
}
