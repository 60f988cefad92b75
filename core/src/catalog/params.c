/*
 * params.c: the fitted physical parameters as data: their names and meanings, the priors,
 * the value a prediction uses (its profile= file, else the context's fit, else the priors),
 * the interval widening by the model error, and the profile CSV that keeps a fit
 * (ec_profile_read, ec_profile_write, ec_ctx_set_fit).  fit/calibrate.c fits them;
 * model/compute.c reads them.
 */
#include "catalog/consts.h"
#include "catalog/params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const param_names[ECI_N_PARAMS] = {"gemm_scale", "simt_scale", "mem_scale", "mem_scale_cnn",
                                                  "conv_eff", "attn_eff", "dispatch_scale", "internode_busbw_frac",
                                                  "attn_mask_eff"};
static const char *const param_meaning[ECI_N_PARAMS] = {
    "multiplies each tensor-core GEMM's shape utilization (tf32, fp16, bf16, fp8), up to the GPU's measured best-shape "
    "efficiency, which no GEMM exceeds",
    "multiplies every GPU's measured large-GEMM efficiency on CUDA cores (fp32)",
    "multiplies every GPU's measured streaming-bandwidth efficiency (networks that are not CNNs)",
    "multiplies every GPU's measured streaming-bandwidth efficiency for CNNs (their rows fitted apart)",
    "cuDNN convolution throughput relative to a GEMM of the same shape",
    "multiplies the fused attention kernels' efficiencies of models/attention.csv",
    "multiplies the host time of each eager forward op of the model (module calls and views around it)",
    "NCCL bus bandwidth between nodes over the NICs' link rate (networks without a measured efficiency_frac)",
    "multiplies attn_eff where SDPA is given an explicit mask (attn_mask): every key block, a mask tile read with each",
};

/* The range of every parameter (eci_params_bounds): the profile reader's since profiles were
 * first read, now the fitter's too.  Each parameter multiplies or is a ratio of measured rates,
 * priced near 1 (the shipped profile: 0.69 to 9.4): six decades either way hold any fit of real
 * runs, and a value past them (one run at value=1e15 fitted simt_scale = 5e10) is a fit of wrong
 * runs.  Whether a fit's values price its runs at all (not above the GPU's peak) is checked on
 * the runs themselves (fit/calibrate.c). */
#define PARAM_MIN 1e-6
#define PARAM_MAX 1e6

void eci_params_bounds(int which, double *lo, double *hi)
{
    (void)which; /* one range for all today; the call names the parameter so each may get its own */
    *lo = PARAM_MIN;
    *hi = PARAM_MAX;
}

#define ERROR_SD_NAME "error_log_sd"
#define ERROR_SD_MEANING                                                                                   \
    "0.8 quantile of |log(predicted/measured)| over z_0.9 on GPUs left out of the fit whose architecture it "  \
    "has runs of (leave-one-GPU-out): the sd whose p10-p90 holds 80% of them; widens the p10-p90 interval"
#define UNSEEN_SD_NAME "error_log_sd_unseen_arch"
#define UNSEEN_SD_MEANING                                                                                  \
    "0.8 quantile of |log(predicted/measured)| over z_0.9 on architectures left out of the fit "          \
    "(leave-one-architecture-out), each architecture weighing the same, times t_0.9/z_0.9 for as many "     \
    "degrees of freedom as architectures; widens the p10-p90 interval of a GPU whose architecture (or "   \
    "matmul unit) has no calibration runs"

#define UNSEEN_HOST_SD_NAME "error_log_sd_unseen_arch_host"
#define UNSEEN_HOST_SD_MEANING                                                                             \
    "the same over the held-out runs whose fold predicted them host-bound (ec_result_host_util_frac below "          \
    "constants.csv host_bound_util_frac), error_log_sd_unseen_arch then being over the GPU-bound ones; "  \
    "widens the p10-p90 interval of a host-bound prediction on a GPU with no calibration runs"

/* The communication sds, by EC_COMM_* path. */
static const char *const comm_sd_names[EC_COMM_PATHS] = {"error_log_sd_comm_direct", "error_log_sd_comm_host",
                                                          "error_log_sd_comm_host_shared"};
static const char *const comm_sd_meaning[EC_COMM_PATHS] = {
    "communication part of the log error of a multi-GPU prediction whose gradients go GPU to GPU (NVLink, PCIe "
    "peer-to-peer, the network between nodes): from the leave-one-GPU-out predictions of the multi-GPU runs "
    "(never fitted), the 0.8 quantile of |log error| over z_0.9 with each GPU weighing the same, t_0.9/z_0.9-widened "
    "for their number, less error_log_sd in quadrature",
    "the same for gradients through host memory (topology=pcie-host, PCIe without peer-to-peer) between two GPUs "
    "a node",
    "the same through host memory between more than two GPUs a node, whose ring shares the server's root ports, "
    "switch uplinks and sockets (a layout the runs do not state); a profile without it takes error_log_sd_comm_host",
};

static const char *const comm_path_words[EC_COMM_PATHS] = {"GPU to GPU", "through host memory, two GPUs a node",
                                                            "through host memory, more than two GPUs a node"};

const char *ec_comm_path_name(int path)
{
    return path >= 0 && path < EC_COMM_PATHS ? comm_sd_names[path] + strlen("error_log_sd_comm_") : "?";
}

const char *ec_comm_path_words(int path)
{
    return path >= 0 && path < EC_COMM_PATHS ? comm_path_words[path] : "?";
}

void eci_params_to_array(const eci_params *c, double *x)
{
    x[ECI_P_GEMM] = c->gemm_scale;
    x[ECI_P_SIMT] = c->simt_scale;
    x[ECI_P_MEM] = c->mem_scale;
    x[ECI_P_MEM_CNN] = c->mem_scale_cnn;
    x[ECI_P_CONV] = c->conv_eff;
    x[ECI_P_ATTN] = c->attn_eff;
    x[ECI_P_DISPATCH] = c->dispatch_scale;
    x[ECI_P_NET] = c->internode_frac;
    x[ECI_P_ATTN_MASK] = c->attn_mask_eff;
}

void eci_params_from_array(const double *x, eci_params *c)
{
    c->gemm_scale = x[ECI_P_GEMM];
    c->simt_scale = x[ECI_P_SIMT];
    c->mem_scale = x[ECI_P_MEM];
    c->mem_scale_cnn = x[ECI_P_MEM_CNN];
    c->conv_eff = x[ECI_P_CONV];
    c->attn_eff = x[ECI_P_ATTN];
    c->dispatch_scale = x[ECI_P_DISPATCH];
    c->internode_frac = x[ECI_P_NET];
    c->attn_mask_eff = x[ECI_P_ATTN_MASK];
}

double *eci_params_arch_field(eci_params_arch *a, int which)
{
    return which == ECI_P_GEMM ? &a->gemm_scale : which == ECI_P_SIMT ? &a->simt_scale
                                                 : which == ECI_P_MEM ? &a->mem_scale : &a->mem_scale_cnn;
}

/* A scale the fit has no runs for on this architecture (the architecture, its matmul unit or its
 * kind of network unseen): a GEMM scale takes its prior 1, gpus.csv's measured best-shape GEMM
 * efficiency of that very GPU as it is, since the fitted architectures' GEMM scales scatter (0.68 to
 * 1.35) and their mean (1.06, faster than the GPU's own best GEMM) is no measurement of a new one;
 * a memory scale takes the fit's global value, since every fitted architecture puts PyTorch's
 * memory-bound kernels near 0.7 of the streaming benchmark (a property of the kernels, not of one
 * architecture).  The leave-one-architecture-out folds agree with both halves (docs/accuracy.md,
 * "An architecture the fit has not seen"). */
double eci_params_scale(const eci_params *c, const eci_params_arch *a, int which)
{
    if (a != NULL && (a->fitted & 1u << which))
        return which == ECI_P_GEMM ? a->gemm_scale : which == ECI_P_SIMT ? a->simt_scale
                                                 : which == ECI_P_MEM ? a->mem_scale : a->mem_scale_cnn;
    if (c->n_arch > 0 && (which == ECI_P_GEMM || which == ECI_P_SIMT))
        return 1.0; /* a fit with architectures, none of them this one on this unit: the prior */
    /* the memory scales; or the priors themselves, or a fit that kept no architectures (one value for all) */
    return which == ECI_P_GEMM ? c->gemm_scale : which == ECI_P_SIMT ? c->simt_scale
                                               : which == ECI_P_MEM ? c->mem_scale : c->mem_scale_cnn;
}

const eci_params_arch *eci_params_arch_find(const eci_params *c, const char *architecture)
{
    if (architecture == NULL)
        return NULL;
    for (size_t a = 0; a < c->n_arch; a++) /* as gpus.csv spells it (every prediction asks) */
        if (strcmp(c->arch[a].name, architecture) == 0)
            return &c->arch[a];
    for (size_t a = 0; a < c->n_arch; a++)
        if (eci_name_eq(c->arch[a].name, architecture))
            return &c->arch[a];
    return NULL;
}

const eci_params_arch *eci_params_arch_for(const eci_params *c, const char *architecture, int kernels)
{
    const eci_params_arch *a = eci_params_arch_find(c, architecture);
    if (a == NULL || a->kernels == 0 || (kernels >= 0 && kernels < 32 && (a->kernels & 1u << kernels)))
        return a;
    return NULL; /* fitted on other kernels only: what it learnt of this architecture is theirs */
}

void ec_fit_kernels_names(unsigned bits, char *buf, size_t n)
{
    size_t len = 0;
    if (buf == NULL || n == 0)
        return;
    buf[0] = '\0';
    ec_config tmp;
    ec_config_init(&tmp);
    for (int k = 0; k < 32 && len < n; k++) {
        char word[32];
        tmp.kernels = (ec_kernels)k;
        if ((bits & 1u << k) && ec_config_get(&tmp, "kernels", word, sizeof word) == EC_OK)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " " : "", word);
    }
}

eci_params_arch *eci_params_arch_add(eci_params *c, const char *architecture)
{
    for (size_t i = 0; i < c->n_arch; i++)
        if (eci_name_eq(c->arch[i].name, architecture))
            return &c->arch[i];
    if (c->n_arch == ECI_PARAMS_MAX_ARCH)
        return NULL;
    eci_params_arch *a = &c->arch[c->n_arch++];
    memset(a, 0, sizeof *a); /* padding too: the prediction cache compares parameters with memcmp */
    eci_strlcpy(a->name, architecture, sizeof a->name);
    a->gemm_scale = c->gemm_scale;
    a->simt_scale = c->simt_scale;
    a->mem_scale = c->mem_scale;
    a->mem_scale_cnn = c->mem_scale_cnn;
    return a;
}

void eci_params_default(const ec_ctx *ctx, eci_params *c)
{
    /* every byte: the prediction cache compares parameters with memcmp (unused architecture
     * entries and padding included) */
    memset(c, 0, sizeof *c);
    c->gemm_scale = 1.0;
    c->simt_scale = 1.0;
    c->mem_scale = 1.0;
    c->mem_scale_cnn = 1.0;
    c->conv_eff = eci_const(ctx, EC_C_conv_eff_frac);
    c->attn_eff = eci_const(ctx, EC_C_sdpa_eff_frac);
    c->dispatch_scale = 1.0;
    c->internode_frac = eci_const(ctx, EC_C_internode_busbw_frac);
    c->attn_mask_eff = eci_const(ctx, EC_C_sdpa_mask_eff_frac);
    c->n_arch = 0;
    c->error_log_sd = 0.0;
    c->unseen_error_log_sd = 0.0;
    c->unseen_host_error_log_sd = 0.0;
    for (int p = 0; p < EC_COMM_PATHS; p++)
        c->comm_error_log_sd[p] = 0.0;
}

void ec_fit_attn_kernels_names(unsigned bits, char *buf, size_t n)
{
    size_t len = 0;
    if (buf == NULL || n == 0)
        return;
    buf[0] = '\0';
    for (int k = 0; k < ECI_AK_CLASSES && len < n; k++)
        if (bits & 1u << k)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " " : "", eci_attn_class_name(k));
}

const char *eci_params_name(int which)
{
    return which >= 0 && which < ECI_N_PARAMS ? param_names[which] : NULL;
}

static int param_index(const char *name, int n)
{
    for (int j = 0; j < n; j++)
        if (strcmp(param_names[j], name) == 0)
            return j;
    return -1;
}

int eci_params_from_report(ec_ctx *ctx, const ec_fit_report *rep, eci_params *c)
{
    if (rep->n_params < ECI_N_PARAMS || rep->n_params > EC_FIT_MAX_PARAMS)
        return eci_error(ctx, EC_EINVAL, "a fit report has %zu parameters, not %d to %d", rep->n_params, ECI_N_PARAMS,
                         EC_FIT_MAX_PARAMS);
    for (size_t j = 0; j < rep->n_params; j++) { /* check every value before using any */
        double lo, hi;
        int which = rep->names[j] ? param_index(rep->names[j], ECI_N_PARAMS) : -1; /* unknown: refused below */
        eci_params_bounds(which, &lo, &hi);
        if (which >= 0 && !(rep->values[j] >= lo && rep->values[j] <= hi))
            return eci_error(ctx, EC_EINVAL, "fitted parameter '%s'%s%s = %g must be positive and within [%g, %g], "
                             "the range a profile may hold", rep->names[j] ? rep->names[j] : "?",
                             rep->architectures[j][0] ? " of " : "", rep->architectures[j], rep->values[j], lo, hi);
    }
    if (!(rep->error_log_sd >= 0 && rep->error_log_sd <= ECI_ERROR_SD_MAX))
        return eci_error(ctx, EC_EINVAL, "error_log_sd = %g is outside [0, %g]", rep->error_log_sd, ECI_ERROR_SD_MAX);
    if (!(rep->arch_error_log_sd >= 0 && rep->arch_error_log_sd <= ECI_ERROR_SD_MAX))
        return eci_error(ctx, EC_EINVAL, "%s = %g is outside [0, %g]", UNSEEN_SD_NAME, rep->arch_error_log_sd,
                         ECI_ERROR_SD_MAX);
    if (!(rep->arch_host_error_log_sd >= 0 && rep->arch_host_error_log_sd <= ECI_ERROR_SD_MAX))
        return eci_error(ctx, EC_EINVAL, "%s = %g is outside [0, %g]", UNSEEN_HOST_SD_NAME,
                         rep->arch_host_error_log_sd, ECI_ERROR_SD_MAX);
    for (int p = 0; p < EC_COMM_PATHS; p++)
        if (!(rep->comm_error_log_sd[p] >= 0 && rep->comm_error_log_sd[p] <= ECI_ERROR_SD_MAX))
            return eci_error(ctx, EC_EINVAL, "%s = %g is outside [0, %g]", comm_sd_names[p], rep->comm_error_log_sd[p],
                             ECI_ERROR_SD_MAX);
    eci_params_default(ctx, c);
    for (int j = 0; j < ECI_N_PARAMS; j++)
        if (rep->names[j] == NULL || strcmp(rep->names[j], param_names[j]) != 0 || rep->architectures[j][0])
            return eci_error(ctx, EC_EINVAL, "fit report entry %d is '%s', expected the global '%s'", j,
                             rep->names[j] ? rep->names[j] : "(null)", param_names[j]);
    eci_params_from_array(rep->values, c);
    for (size_t j = ECI_N_PARAMS; j < rep->n_params; j++) {
        int which = rep->names[j] ? param_index(rep->names[j], ECI_N_ARCH_PARAMS) : -1;
        if (which < 0 || rep->architectures[j][0] == '\0')
            return eci_error(ctx, EC_EINVAL,
                             "fit report entry %zu ('%s') must be gemm_scale, simt_scale, mem_scale or "
                             "mem_scale_cnn of an "
                             "architecture",
                             j, rep->names[j] ? rep->names[j] : "(null)");
        eci_params_arch *a = eci_params_arch_add(c, rep->architectures[j]);
        if (a == NULL)
            return eci_error(ctx, EC_EINVAL, "a fit report names more than %d architectures", ECI_PARAMS_MAX_ARCH);
        *eci_params_arch_field(a, which) = rep->values[j];
        a->fitted |= 1u << which;
        a->kernels |= rep->kernels[j];
    }
    c->attn_kernels = rep->attn_kernels;
    c->attn_mask_kernels = rep->attn_mask_kernels;
    c->error_log_sd = rep->error_log_sd;
    c->unseen_error_log_sd = rep->arch_error_log_sd;
    c->unseen_host_error_log_sd = rep->arch_host_error_log_sd;
    for (int p = 0; p < EC_COMM_PATHS; p++)
        c->comm_error_log_sd[p] = rep->comm_error_log_sd[p];
    return EC_OK;
}

void eci_params_release(ec_ctx *ctx)
{
    eci_free(ctx, ctx->fit, sizeof *ctx->fit);
    eci_free(ctx, ctx->profile_fit, sizeof *ctx->profile_fit);
    ctx->fit = ctx->profile_fit = NULL;
    ctx->profile_path[0] = '\0';
}

int eci_params_keep(ec_ctx *ctx, eci_params **slot)
{
    int rc = eci_ctx_on_free(ctx, eci_params_release);
    if (rc == EC_OK && (*slot = eci_malloc(ctx, sizeof **slot)) == NULL)
        rc = EC_ENOMEM;
    return rc;
}

int eci_params_current(ec_ctx *ctx, const ec_config *cfg, eci_params *c)
{
    const eci_params *p;
    int rc = eci_params_ref(ctx, cfg, c, &p);
    if (rc == EC_OK && p != c)
        *c = *p;
    return rc;
}

int eci_params_ref(ec_ctx *ctx, const ec_config *cfg, eci_params *buf, const eci_params **out)
{
    *out = buf;
    if (cfg != NULL && cfg->profile[0] != '\0') {
        if (ctx->profile_fit == NULL || strcmp(ctx->profile_path, cfg->profile) != 0) {
            ec_fit_report rep;
            eci_params parsed;
            int rc = ec_profile_read(ctx, cfg->profile, &rep);
            if (rc == EC_OK)
                rc = eci_params_from_report(ctx, &rep, &parsed);
            if (rc != EC_OK)
                return eci_error_key(ctx, rc, "profile");
            eci_input_note(ctx, cfg->profile);
            if (ctx->profile_fit == NULL && (rc = eci_params_keep(ctx, &ctx->profile_fit)) != EC_OK)
                return rc;
            *ctx->profile_fit = parsed;
            eci_strlcpy(ctx->profile_path, cfg->profile, sizeof ctx->profile_path);
        }
        *out = ctx->profile_fit;
    } else if (ctx->fit != NULL) {
        *out = ctx->fit;
    } else {
        eci_params_default(ctx, buf);
    }
    return EC_OK;
}

void eci_interval_widen(const eci_params *c, double p50, double *p10, double *p90)
{
    eci_interval_widen_sd(c->error_log_sd, p50, p10, p90);
}

double eci_params_error_sd(const eci_params *c, const char *architecture, int kernels, int tensor_cores, int cnn,
                           int host_bound, int *unseen)
{
    *unseen = 0;
    if (c->n_arch == 0) /* the priors, or a fit without architectures: nothing to tell apart */
        return c->error_log_sd;
    const eci_params_arch *a = eci_params_arch_for(c, architecture, kernels);
    unsigned need = 1u << (tensor_cores ? ECI_P_GEMM : ECI_P_SIMT) | 1u << (cnn ? ECI_P_MEM_CNN : ECI_P_MEM);
    if (a != NULL && (a->fitted & need) == need)
        return c->error_log_sd;
    *unseen = 1;
    /* the leave-one-architecture-out error as measured, not floored at error_log_sd: a different
     * population's (a new GPU of a calibrated architecture) */
    double u = host_bound && c->unseen_host_error_log_sd > 0 ? c->unseen_host_error_log_sd : c->unseen_error_log_sd;
    return u > 0 ? u : c->error_log_sd;
}

double eci_params_comm_sd(const eci_params *c, double sd, int num_gpus, int path)
{
    if (path == EC_COMM_HOST_SHARED && !(c->comm_error_log_sd[path] > 0)) /* a profile from before the row */
        path = EC_COMM_HOST;
    if (num_gpus <= 1 || path < 0 || path >= EC_COMM_PATHS || !(c->comm_error_log_sd[path] > 0))
        return sd;
    return sqrt(sd * sd + c->comm_error_log_sd[path] * c->comm_error_log_sd[path]);
}

void eci_interval_widen_sd(double error_log_sd, double p50, double *p10, double *p90)
{
    if (!(p50 > 0))
        return;
    double z = ECI_NORMAL_P90; /* p90 of a standard normal, 1.2816 */
    double model = z * error_log_sd;
    double lo = *p10 > 0 && *p10 < p50 ? log(p50 / *p10) : 0;
    double hi = *p90 > p50 ? log(*p90 / p50) : 0;
    *p10 = p50 * exp(-sqrt(lo * lo + model * model));
    *p90 = p50 * exp(sqrt(hi * hi + model * model));
}

int ec_ctx_set_fit(ec_ctx *ctx, const ec_fit_report *report)
{
    if (ctx == NULL)
        return EC_EMISUSE;
    if (report == NULL) {
        eci_free(ctx, ctx->fit, sizeof *ctx->fit);
        ctx->fit = NULL;
        return EC_OK;
    }
    eci_params c; /* parse fully before replacing the fit in use */
    int rc = eci_params_from_report(ctx, report, &c);
    if (rc != EC_OK)
        return rc;
    if (ctx->fit == NULL && (rc = eci_params_keep(ctx, &ctx->fit)) != EC_OK)
        return rc;
    *ctx->fit = c;
    return EC_OK;
}

/* ---- profiles --------------------------------------------------------------------------- */

/* The architectures a fit has entries for, space-separated, into buf (a profile's fitted_on). */
static void fitted_on(const eci_params *c, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t a = 0; a < c->n_arch && len < n; a++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", a ? " " : "", c->arch[a].name);
}

int ec_profile_write(ec_ctx *ctx, const ec_fit_report *report, const char *path)
{
    if (ctx == NULL || report == NULL || path == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_profile_write: NULL argument") : EC_EMISUSE;
    eci_params check; /* write only what can be read back */
    int rc = eci_params_from_report(ctx, report, &check);
    if (rc != EC_OK)
        return rc;
    for (size_t j = 0; j < report->n_params; j++)
        if (!isfinite(report->stderrs[j]) || report->stderrs[j] < 0)
            return eci_error(ctx, EC_EINVAL, "%s: not written: the standard error of %s is %g", path,
                             report->names[j], report->stderrs[j]);
    if (!isfinite(report->error_log_sd) || report->error_log_sd < 0)
        return eci_error(ctx, EC_EINVAL, "%s: not written: error_log_sd is %g", path, report->error_log_sd);
    char archs[ECI_PARAMS_MAX_ARCH * (EC_NAME_MAX + 1)];
    fitted_on(&check, archs, sizeof archs);
    ec_csv_writer *wr;
    if ((rc = ec_csv_open(ctx, path, &wr)) != EC_OK)
        return rc;
    const char *header[] = {"parameter", "architecture", "value", "stderr", "runs", "fitted_on", "kernels", "meaning"};
    rc = ec_csv_row(wr, header, 8);
    for (size_t j = 0; rc == EC_OK && j < report->n_params; j++) {
        char v[32], e[32], n[32], k[64];
        snprintf(v, sizeof v, "%.*g", ECI_PROFILE_DIGITS, report->values[j]);
        snprintf(e, sizeof e, "%.3g", report->stderrs[j]);
        snprintf(n, sizeof n, report->runs[j] ? "%zu" : "", report->runs[j]); /* "": not counted */
        if (report->architectures[j][0])
            ec_fit_kernels_names(report->kernels[j], k, sizeof k);
        else /* attn_eff's and attn_mask_eff's: the attention kernels each was fitted on */
            ec_fit_attn_kernels_names(j == ECI_P_ATTN        ? report->attn_kernels
                                      : j == ECI_P_ATTN_MASK ? report->attn_mask_kernels
                                                             : 0,
                                      k, sizeof k);
        int which = param_index(report->names[j], ECI_N_PARAMS);
        const char *on = report->architectures[j][0] ? report->architectures[j] : archs;
        const char *row[] = {report->names[j], report->architectures[j], v, e, n, on, k, param_meaning[which]};
        rc = ec_csv_row(wr, row, 8);
    }
    /* the unseen-architecture rows' runs: GPU-bound and host-bound (ec_profile_read adds them) */
    size_t host_runs = report->arch_host_error_log_sd > 0 ? report->arch_host_cv_runs : 0;
    size_t gpu_runs = report->arch_cv_runs > host_runs ? report->arch_cv_runs - host_runs : 0;
    const double sd[3] = {report->error_log_sd, report->arch_error_log_sd, report->arch_host_error_log_sd};
    const size_t sd_runs[3] = {report->cv_runs, gpu_runs, host_runs};
    const char *sd_name[3] = {ERROR_SD_NAME, UNSEEN_SD_NAME, UNSEEN_HOST_SD_NAME};
    const char *sd_meaning[3] = {ERROR_SD_MEANING, UNSEEN_SD_MEANING, UNSEEN_HOST_SD_MEANING};
    for (int k = 0; rc == EC_OK && k < 3 + EC_COMM_PATHS; k++) {
        double value = k < 3 ? sd[k] : report->comm_error_log_sd[k - 3];
        size_t runs = k < 3 ? sd_runs[k] : report->comm_cv_runs[k - 3];
        if (!(value > 0) && (k < 3 || runs == 0)) /* a path's sd measured at 0 on its runs is written */
            continue;
        char v[32], n[32];
        snprintf(v, sizeof v, "%.4g", value);
        snprintf(n, sizeof n, runs ? "%zu" : "", runs);
        const char *row[] = {k < 3 ? sd_name[k] : comm_sd_names[k - 3], "", v, "", n, archs, "",
                             k < 3 ? sd_meaning[k] : comm_sd_meaning[k - 3]};
        rc = ec_csv_row(wr, row, 8);
    }
    if (rc != EC_OK) {
        ec_csv_abort(wr);
        return rc;
    }
    return ec_csv_close(wr);
}

/* The architecture a profile cell names, as gpus.csv spells it; EC_EPARSE when no GPU has it. */
static int known_architecture(ec_ctx *ctx, const eci_table *t, size_t r, int col, const char **out)
{
    const char *cell = eci_table_cell(t, r, col);
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < ctx->n_gpus; i++) {
        if (eci_name_eq(ctx->gpus[i].architecture, cell)) {
            *out = ctx->gpus[i].architecture;
            return EC_OK;
        }
        if (n < sizeof names / sizeof names[0])
            names[n++] = ctx->gpus[i].architecture;
    }
    const char *near = eci_nearest(cell, names, n);
    return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: unknown architecture '%s' (did you mean '%s'?)", eci_table_name(t),
                     eci_table_line(t, r), col + 1, cell, near ? near : "");
}

/* The value of an error sd row (error_log_sd, _unseen_arch, _unseen_arch_host, _comm_*), in [0, ECI_ERROR_SD_MAX];
 * EC_EPARSE naming the file, line, column and the row's parameter. */
static int sd_cell(ec_ctx *ctx, const eci_table *t, size_t r, int col, const char *name, double *out)
{
    int rc = eci_table_number(ctx, t, r, col, 0, ECI_ERROR_SD_MAX, out);
    if (rc != EC_OK) {
        char why[EC_ERRMSG_MAX];
        eci_strlcpy(why, ec_ctx_errmsg(ctx), sizeof why);
        rc = eci_error(ctx, rc, "%s (%s is a log error sd: a number in [0, %g])", why, name, ECI_ERROR_SD_MAX);
    }
    return rc;
}

/* The kernels= class (EC_KERNELS_*) a word names, -1 for none (the context's message is then
 * replaced by the caller's). */
static int kernel_class_index(ec_ctx *ctx, const char *word)
{
    ec_config tmp;
    ec_config_init(&tmp);
    return ec_config_set(ctx, &tmp, "kernels", word) == EC_OK ? (int)tmp.kernels : -1;
}

/* The attention.csv kernel (ECI_AK_*) a word names, -1 for none. */
static int attn_kernel_index(ec_ctx *ctx, const char *word)
{
    (void)ctx;
    return eci_attn_class_index(word);
}

/* A kernels cell (space-separated words, each a kernel `index` knows) into *bits; EC_EPARSE naming
 * the file, line, column and the word, and what the words may be (`what`, listed by `names`):
 * an architecture's row names kernels= classes, attn_eff's attention.csv kernels. */
static int kernels_cell(ec_ctx *ctx, const eci_table *t, size_t r, int col, int (*index)(ec_ctx *, const char *),
                        const char *what, const char *names, unsigned *bits)
{
    const char *cell = eci_table_cell(t, r, col);
    for (const char *p = cell; *p != '\0';) {
        size_t len = strcspn(p, " ");
        char word[32];
        if (len > 0) {
            eci_strlcpy(word, p, len + 1 < sizeof word ? len + 1 : sizeof word);
            int k = index(ctx, word);
            if (k < 0)
                return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: unknown %s '%s' in column kernels (%s, space-separated)",
                                 eci_table_name(t), eci_table_line(t, r), col + 1, what, word, names);
            *bits |= 1u << k;
        }
        p += len;
        p += strspn(p, " ");
    }
    return EC_OK;
}

/* One row of a profile into out: a global parameter, an architecture's, or one of the error sds. */
static int read_profile_row(ec_ctx *ctx, const eci_table *t, size_t r, const int *col, size_t *seen_line,
                            ec_fit_report *out)
{
    int c_name = col[0], c_arch = col[1], c_value = col[2], c_runs = col[3], c_kernels = col[4];
    const char *name = eci_table_cell(t, r, c_name);
    const char *arch = c_arch >= 0 ? eci_table_cell(t, r, c_arch) : "";
    const char *path = eci_table_name(t);
    size_t line = eci_table_line(t, r);
    double runs = 0;
    int rc = c_runs >= 0 && eci_table_cell(t, r, c_runs)[0] ? eci_table_number(ctx, t, r, c_runs, 0, 1e12, &runs)
                                                              : EC_OK;
    if (rc != EC_OK)
        return rc;
    if (strcmp(name, ERROR_SD_NAME) == 0) {
        out->cv_runs = (size_t)runs;
        return sd_cell(ctx, t, r, c_value, name, &out->error_log_sd);
    }
    if (strcmp(name, UNSEEN_SD_NAME) == 0) {
        out->arch_cv_runs += (size_t)runs; /* with the host-bound row's: every run held out */
        return sd_cell(ctx, t, r, c_value, name, &out->arch_error_log_sd);
    }
    if (strcmp(name, UNSEEN_HOST_SD_NAME) == 0) {
        out->arch_host_cv_runs = (size_t)runs;
        out->arch_cv_runs += (size_t)runs;
        return sd_cell(ctx, t, r, c_value, name, &out->arch_host_error_log_sd);
    }
    for (int p = 0; p < EC_COMM_PATHS; p++)
        if (strcmp(name, comm_sd_names[p]) == 0) {
            out->comm_cv_runs[p] = (size_t)runs;
            return sd_cell(ctx, t, r, c_value, name, &out->comm_error_log_sd[p]);
        }
    int which = param_index(name, ECI_N_PARAMS);
    if (which < 0) {
        const char *names[ECI_N_PARAMS + 3 + EC_COMM_PATHS] = {ERROR_SD_NAME, UNSEEN_SD_NAME, UNSEEN_HOST_SD_NAME};
        for (int p = 0; p < EC_COMM_PATHS; p++)
            names[3 + p] = comm_sd_names[p];
        for (int j = 0; j < ECI_N_PARAMS; j++)
            names[3 + EC_COMM_PATHS + j] = param_names[j];
        const char *near = eci_nearest(name, names, sizeof names / sizeof names[0]);
        return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: unknown parameter '%s' (did you mean '%s'?)", path, line,
                         c_name + 1, name, near);
    }
    size_t j = (size_t)which;
    if (arch[0] != '\0') {
        if (which >= ECI_N_ARCH_PARAMS)
            return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: '%s' is global: only gemm_scale, simt_scale, mem_scale and mem_scale_cnn "
                             "take an architecture", path, line, c_arch + 1, name);
        if ((rc = known_architecture(ctx, t, r, c_arch, &arch)) != EC_OK)
            return rc;
        for (j = ECI_N_PARAMS; j < out->n_params; j++)
            if (out->names[j] == param_names[which] && eci_name_eq(out->architectures[j], arch))
                break;
        if (j == out->n_params) {
            if (j == EC_FIT_MAX_PARAMS)
                return eci_error(ctx, EC_EPARSE, "%s:%zu: more than %d parameters", path, line, EC_FIT_MAX_PARAMS);
            out->n_params++;
            out->names[j] = param_names[which];
            eci_strlcpy(out->architectures[j], arch, EC_NAME_MAX);
        }
    }
    if (seen_line[j] != 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: parameter '%s'%s%s already given on line %zu", path, line,
                         c_name + 1, name, arch[0] ? " of " : "", arch, seen_line[j]);
    if (c_kernels >= 0 && eci_table_cell(t, r, c_kernels)[0] != '\0') {
        char all[160];
        ec_fit_attn_kernels_names((1u << ECI_AK_CLASSES) - 1, all, sizeof all);
        if (arch[0] == '\0' && (which == ECI_P_ATTN || which == ECI_P_ATTN_MASK))
            rc = kernels_cell(ctx, t, r, c_kernels, attn_kernel_index, "attention kernel", all,
                              which == ECI_P_ATTN ? &out->attn_kernels : &out->attn_mask_kernels);
        else if (arch[0] == '\0')
            return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: '%s' is global: only an architecture's row names the kernel "
                             "classes it was fitted on (and attn_eff's and attn_mask_eff's the attention kernels)", path, line,
                             c_kernels + 1, name);
        else
            rc = kernels_cell(ctx, t, r, c_kernels, kernel_class_index, "kernel class",
                              "the kernels= values: eager, fused, te", &out->kernels[j]);
        if (rc != EC_OK)
            return rc;
    }
    seen_line[j] = line;
    out->runs[j] = (size_t)runs;
    double lo, hi;
    eci_params_bounds(which, &lo, &hi);
    return eci_table_number(ctx, t, r, c_value, lo, hi, &out->values[j]);
}

/* A profile written before mem_scale_cnn (no row of it at all) had one memory scale for every
 * network: CNNs keep it, globally and per architecture. */
static int one_memory_scale(ec_ctx *ctx, const char *path, const size_t *seen_line, ec_fit_report *out)
{
    for (size_t j = 0; j < out->n_params; j++)
        if (seen_line[j] != 0 && out->names[j] == param_names[ECI_P_MEM_CNN])
            return EC_OK;
    out->values[ECI_P_MEM_CNN] = out->values[ECI_P_MEM];
    out->runs[ECI_P_MEM_CNN] = out->runs[ECI_P_MEM];
    size_t n = out->n_params;
    for (size_t j = ECI_N_PARAMS; j < n; j++) {
        if (out->names[j] != param_names[ECI_P_MEM])
            continue;
        if (out->n_params == EC_FIT_MAX_PARAMS)
            return eci_error(ctx, EC_EPARSE, "%s: more than %d parameters once mem_scale_cnn copies mem_scale",
                             path, EC_FIT_MAX_PARAMS);
        size_t k = out->n_params++;
        out->names[k] = param_names[ECI_P_MEM_CNN];
        eci_strlcpy(out->architectures[k], out->architectures[j], EC_NAME_MAX);
        out->values[k] = out->values[j];
        out->stderrs[k] = out->stderrs[j];
        out->runs[k] = out->runs[j];
        out->kernels[k] = out->kernels[j];
    }
    return EC_OK;
}

int ec_profile_read(ec_ctx *ctx, const char *path, ec_fit_report *out)
{
    if (ctx == NULL || path == NULL || out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_profile_read: NULL argument") : EC_EMISUSE;
    memset(out, 0, sizeof *out);
    eci_table *t;
    int rc = eci_table_load(ctx, path, &t);
    if (rc != EC_OK)
        return rc;
    int c_name, c_value;
    if ((rc = eci_table_require(ctx, t, "parameter", &c_name)) != EC_OK ||
        (rc = eci_table_require(ctx, t, "value", &c_value)) != EC_OK) {
        eci_table_free(t);
        return rc;
    }
    /* architecture and runs: absent in profiles written before them (runs then 0: unknown) */
    /* kernels: absent in profiles written before it (every entry then applies to every kernel class) */
    const int col[5] = {c_name, eci_table_col(t, "architecture"), c_value, eci_table_col(t, "runs"),
                        eci_table_col(t, "kernels")};
    eci_params prior;
    eci_params_default(ctx, &prior);
    eci_params_to_array(&prior, out->values);
    if (eci_table_rows(t) == 0) /* ec_profile_write writes every parameter: nothing is a mistake */
        rc = eci_error(ctx, EC_EPARSE, "%s: no parameters (a profile lists parameter,value rows)", path);
    out->n_params = ECI_N_PARAMS;
    for (int j = 0; j < ECI_N_PARAMS; j++)
        out->names[j] = param_names[j];
    size_t seen_line[EC_FIT_MAX_PARAMS] = {0};
    for (size_t r = 0; r < eci_table_rows(t) && rc == EC_OK; r++)
        rc = read_profile_row(ctx, t, r, col, seen_line, out);
    eci_table_free(t);
    if (rc == EC_OK)
        rc = one_memory_scale(ctx, path, seen_line, out);
    return rc;
}
