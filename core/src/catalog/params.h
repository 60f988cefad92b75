/*
 * catalog/params.h: the fitted physical parameters as a value (params.c).  Calibration
 * (fit/calibrate.c) produces them as an ec_fit_report, a profile.csv keeps them, the context
 * holds the ones in use (ec_ctx_set_fit, a models/ folder's profile.csv); pricing reads them
 * through eci_params_ref and never includes the fitting.
 */
#ifndef EC_PARAMS_H
#define EC_PARAMS_H

#include "catalog/catalog.h"

/* Fitted physical parameters (fit/calibrate.c fits them, profile.csv keeps them); all 1.0 /
 * the constants.csv priors by default. */
#define ECI_PARAMS_MAX_ARCH 8

/* The scales that depend on the architecture (its cuBLAS/cuDNN kernels and memory system),
 * fitted per architecture with a hierarchical prior anchored to the global values; a GPU
 * whose architecture (or matmul unit, or kind of network) has no fitted entry uses the prior 1
 * for its GEMM scale and the global value for its memory scale (eci_params_scale). */
typedef struct eci_params_arch {
    char name[EC_NAME_MAX]; /* gpus.csv `architecture`, e.g. "ampere" */
    double gemm_scale, simt_scale, mem_scale, mem_scale_cnn;
    unsigned fitted; /* bit 1 << ECI_P_GEMM/_SIMT/_MEM/_MEM_CNN: that scale was fitted on runs of this
                        architecture (else it holds the global value) */
    unsigned kernels; /* bit 1 << EC_KERNELS_*: the kernel classes of those runs (ec_config.kernels); the
                         scales apply to predictions of these classes only (eci_params_arch_for); 0: not
                         recorded (a profile without the kernels column), every class */
} eci_params_arch;

typedef struct eci_params {
    double gemm_scale;     /* multiplies measured large-GEMM efficiency on tensor cores (tf32, 16-bit) */
    double simt_scale;     /* multiplies measured large-GEMM efficiency on CUDA cores (fp32, emulated) */
    double mem_scale;      /* multiplies every measured streaming-bandwidth efficiency (transformers and
                              every network that is not a CNN) */
    double mem_scale_cnn;  /* the same for CNNs (eci_net.cnn): their memory-bound kernels (batch norm,
                              ReLU, pooling on NCHW feature maps) are fitted apart from a transformer's */
    double conv_eff;       /* cuDNN convolution throughput relative to a GEMM */
    double attn_eff;       /* multiplier on the fused attention kernels' efficiencies (attention.csv) */
    unsigned attn_kernels; /* bit 1 << ECI_AK_*: the attention kernels attn_eff was fitted on (it scales
                              them and the kernels derived from them, model/attn_rates.c); 0: all */
    double dispatch_scale; /* multiplies the host's per-op dispatch times */
    double internode_frac; /* NCCL bus bandwidth across nodes over the NICs' link rate, for networks
                              whose interconnects.csv row has no measured efficiency_frac */
    double attn_mask_eff;  /* multiplies attn_eff for SDPA given an explicit mask (model/attn_rates.c):
                              a kernel adding a mask tile to every score tile, no blocks skipped */
    unsigned attn_mask_kernels; /* bit 1 << ECI_AK_*: the attention kernels attn_mask_eff was fitted on
                              (masked runs of them); it scales those only */
    size_t n_arch;
    eci_params_arch arch[ECI_PARAMS_MAX_ARCH];
    /* Model error: the log error sd whose p10-p90 holds 80% of the predictions of GPUs
     * left out of the fit (their 0.8 quantile of |log(predicted / measured)| over z_0.9) (the profile's error_log_sd row, from leave-one-GPU-out
     * cross-validation).  0 without a profile: the priors carry no measured error. */
    double error_log_sd;
    /* The same over architectures left out of the fit (the profile's error_log_sd_unseen_arch
     * row, leave-one-architecture-out): the error of a prediction on an architecture, or a
     * matmul unit of one, that no calibration run exercised.  0: not measured. */
    double unseen_error_log_sd;
    /* The same for a host-bound prediction (gpu_util_frac below constants.csv
     * host_bound_util_frac; the profile's error_log_sd_unseen_arch_host row), unseen_error_log_sd
     * then being the GPU-bound one's.  0: not measured (a host-bound prediction takes
     * unseen_error_log_sd, as before the row). */
    double unseen_host_error_log_sd;
    /* The communication part of a multi-GPU prediction's error by the path its gradients take
     * (EC_COMM_DIRECT, EC_COMM_HOST, EC_COMM_HOST_SHARED; the profile's error_log_sd_comm_direct /
     * _host / _host_shared rows, from the multi-GPU runs of leave-one-GPU-out cross-validation):
     * added in quadrature to the sd above (eci_params_comm_sd).  0: not measured (_host_shared's
     * then takes _host's). */
    double comm_error_log_sd[EC_COMM_PATHS];
} eci_params;

/* The parameters one by one, in the order of a fit report's global entries; the first
 * ECI_N_ARCH_PARAMS may also take a value per architecture. */
enum {
    ECI_P_GEMM, ECI_P_SIMT, ECI_P_MEM, ECI_P_MEM_CNN, ECI_P_CONV, ECI_P_ATTN, ECI_P_DISPATCH, ECI_P_NET, ECI_P_ATTN_MASK,
    ECI_N_PARAMS
};
#define ECI_N_ARCH_PARAMS 4
/* The range parameter `which` may take, globally or for an architecture: one definition for the
 * profile reader, a fit report taken (ec_ctx_set_fit) and the fitter, which refuses to keep a fit
 * outside it (params.c gives each bound its reason).  error_log_sd: [0, ECI_ERROR_SD_MAX]. */
EC_INTERNAL void eci_params_bounds(int which, double *lo, double *hi);
#define ECI_ERROR_SD_MAX 10.0
/* Significant digits a profile keeps of each value (ec_profile_write): the fitter checks its fit
 * as the profile will hold it. */
#define ECI_PROFILE_DIGITS 6
/* The name of parameter `which` as profile.csv spells it ("gemm_scale"), NULL out of range. */
EC_INTERNAL const char *eci_params_name(int which);
/* The global values as an array in that order, and back. */
EC_INTERNAL void eci_params_to_array(const eci_params *c, double *x);
EC_INTERNAL void eci_params_from_array(const double *x, eci_params *c);
/* Parameter `which` (ECI_P_GEMM, _SIMT, _MEM or _MEM_CNN) of an architecture's entry. */
EC_INTERNAL double *eci_params_arch_field(eci_params_arch *a, int which);
/* The entry for an architecture, added with the global values when absent; NULL when full. */
EC_INTERNAL eci_params_arch *eci_params_arch_add(eci_params *c, const char *architecture);
/* The priors: 1.0 scales and constants.csv's efficiencies. */
EC_INTERNAL void eci_params_default(const ec_ctx *ctx, eci_params *c);
/* The parameters a prediction of cfg uses: its profile= file, else the context's fit, else
 * the priors (params.c). */
EC_INTERNAL int eci_params_current(ec_ctx *ctx, const ec_config *cfg, eci_params *c);
/* The same without a copy: *out points to the context's profile or fit (valid until the context
 * reads another profile or fits again), or to buf filled with the priors. */
EC_INTERNAL int eci_params_ref(ec_ctx *ctx, const ec_config *cfg, eci_params *buf, const eci_params **out);
/* The value of scale `which` (ECI_P_GEMM, _SIMT, _MEM or _MEM_CNN) a GPU whose architecture has
 * entry a (NULL: none) is priced with: the architecture's own where the fit has runs of it on that
 * unit or network kind; else, for a fit with architectures, the prior 1 for a GEMM scale (gpus.csv's
 * measured efficiency as it is) and the global value for a memory scale (params.c says why); the
 * global value when the fit has no architectures (the priors, an old profile). */
EC_INTERNAL double eci_params_scale(const eci_params *c, const eci_params_arch *a, int which);
/* The per-architecture entry for an architecture name, NULL when it has none (params.c). */
EC_INTERNAL const eci_params_arch *eci_params_arch_find(const eci_params *c, const char *architecture);
/* The entry whose scales a prediction of kernel class `kernels` (EC_KERNELS_*) on that architecture
 * takes: eci_params_arch_find's, NULL when it has none or was fitted on runs of other kernel classes
 * only (that prediction is priced as on an unseen architecture: eci_params_scale, eci_params_error_sd). */
EC_INTERNAL const eci_params_arch *eci_params_arch_for(const eci_params *c, const char *architecture, int kernels);
/* Check a fit report and turn it into parameters (params.c); EC_EINVAL naming the bad entry. */
EC_INTERNAL int eci_params_from_report(ec_ctx *ctx, const ec_fit_report *rep, eci_params *c);
/* Widen a p10/p50/p90 interval (in any quantity proportional to step time or throughput) by
 * the model error: in log space the interval's own half-widths and z_0.9 x error_log_sd
 * add in quadrature (independent errors), so p10 = p50 exp(-sqrt(lo^2 + (z sd)^2)) and
 * likewise p90.  *p10 and *p90 hold the interval to widen (p50 for a point prediction). */
EC_INTERNAL void eci_interval_widen(const eci_params *c, double p50, double *p10, double *p90);
/* The same by a model error given as its log sd. */
EC_INTERNAL void eci_interval_widen_sd(double error_log_sd, double p50, double *p10, double *p90);
/* The model error of a prediction on an architecture whose matmuls run on tensor cores or not, of
 * a CNN or not, host-bound or not (its gpu_util_frac below constants.csv host_bound_util_frac):
 * error_log_sd where the fit saw runs of that architecture and kernel class (EC_KERNELS_*) on that
 * unit and on its memory system with that kind of network, else unseen_error_log_sd (host-bound: unseen_host_error_log_sd
 * where measured; error_log_sd when the profile has neither), with *unseen set (0 otherwise),
 * even where that is below error_log_sd: its held-out errors hold the architecture's scatter as
 * well as its shift (docs/accuracy.md, "The unseen-architecture sd").  Without a fit (no
 * architecture entries) the priors' error_log_sd and *unseen 0. */
EC_INTERNAL double eci_params_error_sd(const eci_params *c, const char *architecture, int kernels, int tensor_cores,
                                       int cnn, int host_bound, int *unseen);
/* The model error of a prediction of num_gpus GPUs whose gradients take `path` (EC_COMM_*,
 * model/comm.c's eci_comm_path), given sd, the error of its GPU (eci_params_error_sd):
 * sqrt(sd^2 + comm_error_log_sd[path]^2) for more than one GPU, sd for one. */
EC_INTERNAL double eci_params_comm_sd(const eci_params *c, double sd, int num_gpus, int path);
/* Room for a set of parameters the context keeps (ctx->fit, ctx->profile_fit) into *slot,
 * freed with the context; EC_ENOMEM when there is none. */
EC_INTERNAL int eci_params_keep(ec_ctx *ctx, eci_params **slot);
/* Free the context's fitted parameters (registered with eci_ctx_on_free). */
EC_INTERNAL void eci_params_release(ec_ctx *ctx);

#endif /* EC_PARAMS_H */
