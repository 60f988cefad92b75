/*
 * attn_rates.c: which fused attention kernel attention= runs on a GPU (SDPA's dispatch from
 * models/sdpa_backends.csv) and its rates there: the kernel's efficiencies of models/attention.csv
 * (catalog/attention.c: the GPU's architecture's rows, else the prior; cuDNN's at the release the
 * run names, key cudnn_version), scaled from the part the
 * rows were measured on (their reference_gpu) to this GPU by the two parts' measured large-GEMM
 * efficiencies of the same unit (gpus.csv gemm_eff_*_frac).  Split from compute.c, which prices
 * the ops at these rates (eci_attn_time_s).
 */
#include "model/compute.h"
#include "catalog/consts.h"

#include <stdio.h>
#include <string.h>

/* Adds warning `bit` and its text to the rates once (shared with compute.c); a bit can carry
 * several texts. */
void eci_rates_warn(eci_rates *r, unsigned bit, const char *text)
{
    if ((r->warnings & bit) && strstr(r->warning_text, text) != NULL)
        return;
    r->warnings |= bit;
    size_t len = strlen(r->warning_text);
    snprintf(r->warning_text + len, sizeof r->warning_text - len, "%s%s", len ? "; " : "", text);
}

int eci_gpu_tf32(const eci_gpu *g)
{
    return g->peak_tf32_flop_per_s > 0 && g->compute_capability >= 8.0;
}

double eci_gpu_sustained(const eci_gpu *g)
{
    return g->sustained_tensor_frac > 0 ? g->sustained_tensor_frac : 1.0;
}

const char *eci_attention_name(int attention)
{
    static const char *const NAMES[] = {"sdpa",   "eager",  "flash",  "flash_triton", "flash3",
                                        "cudnn", "flash1", "flash4", "cudnn_fp8"};
    return attention >= 0 && attention < (int)(sizeof NAMES / sizeof NAMES[0]) ? NAMES[attention] : "?";
}

int eci_attn_kernel_for(const ec_ctx *ctx, const eci_gpu *g, int attention, int precision, int torch_release,
                        int masked)
{
    switch (attention) {
    case EC_ATTN_FLASH:
        return ECI_AK_FLASH2;
    case EC_ATTN_FLASH3:
        return ECI_AK_FLASH3;
    case EC_ATTN_FLASH_TRITON:
        return ECI_AK_TRITON;
    case EC_ATTN_CUDNN:
        return ECI_AK_CUDNN;
    case EC_ATTN_FLASH1:
        return ECI_AK_FLASH1;
    case EC_ATTN_FLASH4:
        return ECI_AK_FLASH4;
    case EC_ATTN_CUDNN_FP8:
        return ECI_AK_CUDNN_FP8;
    default: /* SDPA's dispatch by release, GPU, dtype and padding mask: models/sdpa_backends.csv */
        return eci_sdpa_kernel(ctx, torch_release, g->compute_capability,
                               precision != EC_PREC_FP32 && precision != EC_PREC_TF32, masked);
    }
}

/* The measured large-GEMM rate over the peak (gpus.csv gemm_eff_*_frac) of the unit a fused
 * attention kernel runs on at this precision (eci_rates_init: 16 bits on the matmul unit as
 * pick_gemm_rate picks it, fp32 inputs on TF32 from Ampere on, else on the CUDA cores). */
static double attn_unit_eff(const eci_gpu *g, int precision, int kernel)
{
    if (kernel == ECI_AK_CUDNN_FP8)
        return g->gemm_eff_fp8_frac;
    switch (precision) {
    case EC_PREC_AMP_FP16:
    case EC_PREC_FP16:
        return g->peak_fp16_flop_per_s > 0 ? g->gemm_eff_fp16_frac : g->gemm_eff_fp32_frac;
    case EC_PREC_AMP_BF16:
    case EC_PREC_AMP_FP8:
    case EC_PREC_BF16:
        if (g->peak_bf16_flop_per_s > 0)
            return g->gemm_eff_bf16_frac;
        return g->emulated_bf16_flop_per_s > 0 && g->peak_fp32_flop_per_s > 0
                   ? g->emulated_bf16_flop_per_s * g->gemm_eff_bf16_frac / g->peak_fp32_flop_per_s
                   : g->gemm_eff_fp32_frac;
    default:
        return eci_gpu_tf32(g) ? g->gemm_eff_tf32_frac : g->gemm_eff_fp32_frac;
    }
}

/* A kernel's fractions (attention.csv) were measured on one part, its reference_gpu; on another
 * they scale by the measured tensor-core throughput of the two, GEMM efficiency x peak of the
 * same unit, over the peak the fraction multiplies: a power- or clock-limited part (the 500 W
 * H100, A100 PCIe, A10) runs attention slower than the part it was measured on, as it runs
 * GEMMs slower; the reference part itself is unchanged. */
static double attn_gpu_scale(const ec_ctx *ctx, const eci_gpu *g, const eci_attn_eff *e, int precision, int kernel)
{
    if (e->from == ECI_AK_NONE || e->ref_gpu < 0 || (size_t)e->ref_gpu >= ctx->n_gpus)
        return 1.0;
    double own = attn_unit_eff(g, precision, kernel), ref = attn_unit_eff(&ctx->gpus[e->ref_gpu], precision, kernel);
    return own > 0 && ref > 0 ? own / ref : 1.0;
}

/* cuDNN's kernel on g at a release (EC_RELEASE; 0: the newest measured): the rows of the newest
 * release at or before it; before every release measured, the oldest, with a warning. */
static const eci_attn_eff *cudnn_at(const eci_gpu *g, int release, eci_rates *r)
{
    if (release <= 0 || g->n_cudnn_releases == 0)
        return &g->attn[ECI_AK_CUDNN];
    int i = g->n_cudnn_releases - 1;
    while (i > 0 && g->cudnn_releases[i].release > release)
        i--;
    const eci_attn_eff *e = &g->cudnn_releases[i];
    if (e->release > release) {
        char text[200], want[24], have[24];
        snprintf(text, sizeof text, "key 'cudnn_version': %s is older than every cuDNN release models/attention.csv "
                 "measured on %s: priced at %s", eci_release_text(release, want, sizeof want), g->id,
                 eci_release_text(e->release, have, sizeof have));
        eci_rates_warn(r, EC_WARN_MODEL_DEFAULTED, text);
    }
    return e;
}

int eci_attn_kernel_priced(const ec_ctx *ctx, const eci_gpu *g, int attention, int precision, int torch_release,
                           int masked)
{
    int k = eci_attn_kernel_for(ctx, g, attention, precision, torch_release, masked);
    if (g->attn[k].from == ECI_AK_NONE) /* no row and no prior (refused at resolve, model/layout.c): SDPA's pick */
        k = eci_attn_kernel_for(ctx, g, EC_ATTN_SDPA, precision, torch_release, masked);
    return g->attn[k].from == ECI_AK_NONE ? ECI_AK_MEM_EFFICIENT : k; /* it has a prior */
}

int eci_sdpa_masked(const ec_ctx *ctx, const ec_config *cfg)
{
    if (cfg->attn_mask != EC_ATTN_MASK_AUTO)
        return cfg->attn_mask == EC_ATTN_MASK_EXPLICIT;
    if (cfg->lengths[0] != '\0')
        return 1;
    return cfg->compile != EC_COMPILE_OFF &&
           (cfg->torch_release == 0 || cfg->torch_release >= eci_const(ctx, EC_C_hf_compile_mask_from_version));
}

int eci_attn_through_sdpa(const ec_ctx *ctx, const eci_gpu *g, const eci_net *net, const ec_config *cfg)
{
    return (cfg->attention == EC_ATTN_SDPA || cfg->attention == EC_ATTN_EAGER) &&
           eci_attn_kernel_of(ctx, g, net, cfg) >= 0;
}

int eci_attn_kernel_of(const ec_ctx *ctx, const eci_gpu *g, const eci_net *net, const ec_config *cfg)
{
    if (g == NULL || net == NULL || eci_net_attention_eager(net, cfg->attention == EC_ATTN_EAGER))
        return -1;
    for (size_t i = 0; i < net->n_layers; i++)
        if (net->layers[i].kind == EC_LAYER_ATTENTION)
            return eci_attn_kernel_priced(ctx, g, cfg->attention, cfg->precision, cfg->torch_release,
                                          eci_sdpa_masked(ctx, cfg));
    return -1;
}

/* The rates of kernel k (g has rows or a prior of it) at attn_eff as fitted; cudnn_release as
 * eci_rates_attention's. */
static void set_kernel(const ec_ctx *ctx, const eci_gpu *g, int k, int precision, int cudnn_release, eci_rates *r)
{
    const eci_attn_eff *e = k == ECI_AK_CUDNN ? cudnn_at(g, cudnn_release, r) : &g->attn[k];
    double scale = attn_gpu_scale(ctx, g, e, precision, k);
    /* the FP8 kernel's fractions are of the FP8 peak (model/layout.c admits it with FP8 tensor cores only) */
    /* a kernel timed in short runs at the clock a step of back-to-back kernels holds (gpus.csv
     * sustained_tensor_frac); one timed back to back has it already */
    double unit = r->attn_sustained > 0 ? r->attn_sustained : 1.0; /* 0: rates built in code */
    double held = e->back_to_back ? 1.0 : k == ECI_AK_CUDNN_FP8 ? eci_gpu_sustained(g) : unit;
    r->attn_flop_per_s = (k == ECI_AK_CUDNN_FP8 ? g->peak_fp8_flop_per_s : r->attn_unit_flop_per_s) * held;
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < 2; c++)
            r->attn_frac[p][c] = e->frac[p][c] * scale;
    r->attn_n_hd = e->n_hd;
    /* FlashAttention v1's kernels: head dims 32, 64, 128 (constants.csv flash1_kernel_head_dim_min) */
    r->attn_hd_kernel_min = k == ECI_AK_FLASH1 ? eci_const(ctx, EC_C_flash1_kernel_head_dim_min) : 0;
    memcpy(r->attn_hd, e->hd, sizeof r->attn_hd);
    memcpy(r->attn_hd_scale, e->hd_scale, sizeof r->attn_hd_scale);
    r->attn_eff = r->attn_eff_fit;
}

void eci_rates_attention_sdpa(const ec_ctx *ctx, const eci_gpu *g, int precision, eci_rates *r)
{
    set_kernel(ctx, g, eci_attn_kernel_priced(ctx, g, EC_ATTN_SDPA, precision, 0, 0), precision, 0, r);
}

/* attn_eff applies to the kernels it was fitted on and to those whose rows are ratios of theirs
 * (attention.csv derived_from: the Triton kernel's of FlashAttention-2's), the memory-efficient
 * kernel on fp32 inputs only where fp32 runs of it were fitted; any other kernel runs at its
 * efficiency as published, which the warning says (docs/accuracy.md, "Kernel classes"). */
static void calibrated_only(const ec_ctx *ctx, const eci_gpu *g, int k, int precision, eci_rates *r)
{
    unsigned fitted = r->attn_eff_kernels;
    int cls = eci_attn_class(k, precision); /* the fp32 inputs' path is a class of its own */
    if (fitted == 0 || (fitted & (1u << cls | (cls == k ? 1u << g->attn[k].base : 0))) != 0)
        return;
    r->attn_eff = eci_const(ctx, EC_C_sdpa_eff_frac);
    char text[320], names[160];
    ec_fit_attn_kernels_names(fitted, names, sizeof names);
    snprintf(text, sizeof text, "no calibration runs with attention kernel %s (the fit's attn_eff is of %s runs): "
             "models/attention.csv's efficiency as published", eci_attn_class_name(cls), names);
    eci_rates_warn(r, EC_WARN_MODEL_DEFAULTED, text);
}

void eci_rates_attention(const ec_ctx *ctx, const eci_gpu *g, int attention, int precision, int torch_release,
                         int cudnn_release, int masked, eci_rates *r)
{
    int k = eci_attn_kernel_priced(ctx, g, attention, precision, torch_release, masked);
    set_kernel(ctx, g, k, precision, cudnn_release, r);
    calibrated_only(ctx, g, k, precision, r);
    int named = attention != EC_ATTN_SDPA && attention != EC_ATTN_EAGER;
    /* SDPA given a mask (eci_sdpa_masked): the kernel reads a mask tile beside each key and value
     * tile and skips no block (workload_blocks.c prices every block); attn_mask_eff (fitted, prior
     * constants.csv sdpa_mask_eff_frac) is its efficiency over the same kernel without one, on the
     * kernels the fit ran masked (attn_mask_kernels); any other kernel at the prior.  A kernel
     * named explicitly (flash-attn, TE) gets no mask. */
    if (masked && !named)
        r->attn_eff *= (r->attn_mask_kernels & 1u << eci_attn_class(k, precision))
                           ? r->attn_mask_eff
                           : eci_const(ctx, EC_C_sdpa_mask_eff_frac);
    if (named && g->attn[k].from == ECI_AK_PRIOR) {
        char text[200];
        snprintf(text, sizeof text, "attention=%s: models/attention.csv has no row for architecture '%s': its "
                 "prior (architecture '*') is used", eci_attn_kernel_name(k), g->architecture);
        eci_rates_warn(r, EC_WARN_MODEL_DEFAULTED, text);
    }
}
