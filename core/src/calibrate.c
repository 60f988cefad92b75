/*
 * calibrate.c: fits the few physical parameters of eci_calib to measured runs (docs/DESIGN.md 6)
 * with GSL's trust-region nonlinear least squares (gsl_multifit_nlinear, Levenberg-
 * Marquardt, finite-difference Jacobian) on r_i = log(predicted_i / measured_i) / s, with s
 * = calib_run_log_sd the scatter of one run about the model, plus one prior residual per
 * parameter, so that parameters no run exercises stay at their prior:
 *   global parameters:   (log x_j - log x0_j) / 1          (one e-fold, weak);
 *   per architecture a:  log(x_aj / x_j) / calib_arch_log_sd  (a hierarchical prior: the
 *                        architecture's GEMM and bandwidth scales are pooled to the global
 *                        ones, the more so the fewer runs it has).
 * Parameters are fitted in log space so they stay positive.  Leave-one-GPU-out
 * cross-validation measures the held-out error that widens prediction intervals.  Also
 * reads and writes profile CSVs and picks the parameters a prediction uses.
 */
#include "consts.h"
#include "predict.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { P_GEMM, P_SIMT, P_MEM, P_CONV, P_ATTN, P_DISPATCH, P_NET, N_GLOBAL };

static const char *const param_names[N_GLOBAL] = {"gemm_scale", "simt_scale", "mem_scale", "conv_eff",
                                                  "attn_eff", "dispatch_scale", "internode_busbw_frac"};
static const char *const param_meaning[N_GLOBAL] = {
    "multiplies every GPU's measured large-GEMM efficiency on tensor cores (tf32, fp16, bf16)",
    "multiplies every GPU's measured large-GEMM efficiency on CUDA cores (fp32)",
    "multiplies every GPU's measured streaming-bandwidth efficiency",
    "cuDNN convolution throughput relative to a GEMM of the same shape",
    "fused attention (SDPA) throughput relative to a GEMM",
    "multiplies the host time of each eager forward op of the model (module calls and views around it)",
    "NCCL bus bandwidth between nodes over the NICs' link rate (networks without a measured efficiency_frac)",
};
/* The parameters that may take a per-architecture value: the first three. */
#define N_ARCH_PARAMS 3

#define ERROR_SD_NAME "error_log_sd"
#define ERROR_SD_MEANING                                                                                   \
    "root mean square of log(predicted/measured) on GPUs left out of the fit (leave-one-GPU-out); widens " \
    "the p10-p90 interval"

static void calib_to_array(const eci_calib *c, double *x)
{
    x[P_GEMM] = c->gemm_scale;
    x[P_SIMT] = c->simt_scale;
    x[P_MEM] = c->mem_scale;
    x[P_CONV] = c->conv_eff;
    x[P_ATTN] = c->attn_eff;
    x[P_DISPATCH] = c->dispatch_scale;
    x[P_NET] = c->internode_frac;
}

static void array_to_calib(const double *x, eci_calib *c)
{
    c->gemm_scale = x[P_GEMM];
    c->simt_scale = x[P_SIMT];
    c->mem_scale = x[P_MEM];
    c->conv_eff = x[P_CONV];
    c->attn_eff = x[P_ATTN];
    c->dispatch_scale = x[P_DISPATCH];
    c->internode_frac = x[P_NET];
}

static double *arch_field(eci_calib_arch *a, int which)
{
    return which == P_GEMM ? &a->gemm_scale : which == P_SIMT ? &a->simt_scale : &a->mem_scale;
}

const eci_calib_arch *eci_calib_arch_find(const eci_calib *c, const char *architecture)
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

/* The entry for an architecture, added with the global values when absent; NULL when full. */
static eci_calib_arch *arch_entry(eci_calib *c, const char *architecture)
{
    for (size_t i = 0; i < c->n_arch; i++)
        if (eci_name_eq(c->arch[i].name, architecture))
            return &c->arch[i];
    if (c->n_arch == ECI_CALIB_MAX_ARCH)
        return NULL;
    eci_calib_arch *a = &c->arch[c->n_arch++];
    eci_strlcpy(a->name, architecture, sizeof a->name);
    a->gemm_scale = c->gemm_scale;
    a->simt_scale = c->simt_scale;
    a->mem_scale = c->mem_scale;
    return a;
}

static int param_index(const char *name, int n)
{
    for (int j = 0; j < n; j++)
        if (strcmp(param_names[j], name) == 0)
            return j;
    return -1;
}

int eci_calib_from_report(ec_ctx *ctx, const ec_fit_report *rep, eci_calib *c)
{
    if (rep->n_params < N_GLOBAL || rep->n_params > EC_FIT_MAX_PARAMS)
        return eci_error(ctx, EC_EINVAL, "a fit report has %zu parameters, not %d to %d", rep->n_params, N_GLOBAL,
                         EC_FIT_MAX_PARAMS);
    for (size_t j = 0; j < rep->n_params; j++) /* check every value before using any */
        if (!(rep->values[j] > 0) || !isfinite(rep->values[j]))
            return eci_error(ctx, EC_EINVAL, "fitted parameter '%s'%s%s must be positive",
                             rep->names[j] ? rep->names[j] : "?", rep->architectures[j][0] ? " of " : "",
                             rep->architectures[j]);
    if (!(rep->error_log_sd >= 0) || !isfinite(rep->error_log_sd))
        return eci_error(ctx, EC_EINVAL, "error_log_sd must be >= 0 and finite");
    eci_calib_default(ctx, c);
    for (int j = 0; j < N_GLOBAL; j++)
        if (rep->names[j] == NULL || strcmp(rep->names[j], param_names[j]) != 0 || rep->architectures[j][0])
            return eci_error(ctx, EC_EINVAL, "fit report entry %d is '%s', expected the global '%s'", j,
                             rep->names[j] ? rep->names[j] : "(null)", param_names[j]);
    array_to_calib(rep->values, c);
    for (size_t j = N_GLOBAL; j < rep->n_params; j++) {
        int which = rep->names[j] ? param_index(rep->names[j], N_ARCH_PARAMS) : -1;
        if (which < 0 || rep->architectures[j][0] == '\0')
            return eci_error(ctx, EC_EINVAL,
                             "fit report entry %zu ('%s') must be gemm_scale, simt_scale or mem_scale of an "
                             "architecture",
                             j, rep->names[j] ? rep->names[j] : "(null)");
        eci_calib_arch *a = arch_entry(c, rep->architectures[j]);
        if (a == NULL)
            return eci_error(ctx, EC_EINVAL, "a fit report names more than %d architectures", ECI_CALIB_MAX_ARCH);
        *arch_field(a, which) = rep->values[j];
    }
    c->error_log_sd = rep->error_log_sd;
    return EC_OK;
}

void eci_calib_release(ec_ctx *ctx)
{
    eci_free(ctx, ctx->fit, sizeof *ctx->fit);
    eci_free(ctx, ctx->profile_fit, sizeof *ctx->profile_fit);
    ctx->fit = ctx->profile_fit = NULL;
    ctx->profile_path[0] = '\0';
}

int eci_calib_current(ec_ctx *ctx, const ec_config *cfg, eci_calib *c)
{
    const eci_calib *p;
    int rc = eci_calib_ref(ctx, cfg, c, &p);
    if (rc == EC_OK && p != c)
        *c = *p;
    return rc;
}

int eci_calib_ref(ec_ctx *ctx, const ec_config *cfg, eci_calib *buf, const eci_calib **out)
{
    *out = buf;
    if (cfg != NULL && cfg->profile[0] != '\0') {
        if (ctx->profile_fit == NULL || strcmp(ctx->profile_path, cfg->profile) != 0) {
            ec_fit_report rep;
            eci_calib parsed;
            int rc = ec_profile_read(ctx, cfg->profile, &rep);
            if (rc == EC_OK)
                rc = eci_calib_from_report(ctx, &rep, &parsed);
            if (rc != EC_OK)
                return eci_error_key(ctx, rc, "profile");
            eci_input_note(ctx, cfg->profile);
            if (ctx->profile_fit == NULL && (ctx->profile_fit = eci_malloc(ctx, sizeof *ctx->profile_fit)) == NULL)
                return EC_ENOMEM;
            *ctx->profile_fit = parsed;
            eci_strlcpy(ctx->profile_path, cfg->profile, sizeof ctx->profile_path);
        }
        *out = ctx->profile_fit;
    } else if (ctx->fit != NULL) {
        *out = ctx->fit;
    } else {
        eci_calib_default(ctx, buf);
    }
    return EC_OK;
}

void eci_interval_widen(const eci_calib *c, double p50, double *p10, double *p90)
{
    if (!(p50 > 0))
        return;
    double z = ECI_NORMAL_P90; /* p90 of a standard normal, 1.2816 */
    double model = z * c->error_log_sd;
    double lo = *p10 > 0 && *p10 < p50 ? log(p50 / *p10) : 0;
    double hi = *p90 > p50 ? log(*p90 / p50) : 0;
    *p10 = p50 * exp(-sqrt(lo * lo + model * model));
    *p90 = p50 * exp(sqrt(hi * hi + model * model));
}

/* ---- the fit ------------------------------------------------------------------------ */

/* One per-architecture parameter of the fit: log(architecture value / global value). */
typedef struct arch_slot {
    int arch;  /* index into fit_data.arch */
    int which; /* P_GEMM, P_SIMT or P_MEM */
} arch_slot;

#define MAX_SLOTS (ECI_CALIB_MAX_ARCH * N_ARCH_PARAMS)
/* Iterations of the trust-region driver at most. */
#define MAX_ITER 100

typedef struct fit_data {
    ec_ctx *ctx;
    const ec_runs *runs;
    const size_t *rows;   /* indices of the runs fitted */
    size_t n_rows;
    double prior_log[N_GLOBAL];
    char arch[ECI_CALIB_MAX_ARCH][EC_NAME_MAX];
    size_t n_arch;
    arch_slot slot[MAX_SLOTS];
    size_t n_slots;
    double arch_sd;       /* calib_arch_log_sd */
    double run_sd;        /* calib_run_log_sd */
    int failed;
    int cancelled;        /* the progress callback asked to stop (residuals then fail the fit) */
    size_t iter;          /* iterations so far (the driver's callback) */
} fit_data;

static size_t n_fit_params(const fit_data *d)
{
    return N_GLOBAL + d->n_slots;
}

/* Parameters from the fit's log-space vector. */
static void x_to_calib(const fit_data *d, const double *x, eci_calib *c)
{
    double v[N_GLOBAL];
    for (int j = 0; j < N_GLOBAL; j++)
        v[j] = exp(x[j]);
    eci_calib_default(d->ctx, c);
    array_to_calib(v, c);
    for (size_t a = 0; a < d->n_arch; a++)
        arch_entry(c, d->arch[a]);
    for (size_t s = 0; s < d->n_slots; s++)
        *arch_field(&c->arch[d->slot[s].arch], d->slot[s].which) = v[d->slot[s].which] * exp(x[N_GLOBAL + s]);
}

static int residuals(const gsl_vector *xv, void *params, gsl_vector *f)
{
    fit_data *d = params;
    double x[EC_FIT_MAX_PARAMS];
    for (size_t j = 0; j < n_fit_params(d); j++)
        x[j] = gsl_vector_get(xv, j);
    eci_calib c;
    x_to_calib(d, x, &c);
    if (eci_progress(d->ctx, "calibrate", (double)d->iter, MAX_ITER) != EC_OK) {
        d->cancelled = 1;
        return GSL_EBADFUNC; /* the driver stops and returns this */
    }
    for (size_t i = 0; i < d->n_rows; i++) {
        const ec_run *run = ec_runs_get(d->runs, d->rows[i]);
        ec_result res;
        double r = 0;
        if (eci_predict(d->ctx, &run->config, &c, &res) == EC_OK) {
            double pred = ec_result_metric(&res, run->metric);
            if (pred > 0 && isfinite(pred))
                r = log(pred / run->value) / d->run_sd;
        } else {
            d->failed = 1;
        }
        gsl_vector_set(f, i, r);
    }
    for (int j = 0; j < N_GLOBAL; j++)
        gsl_vector_set(f, d->n_rows + (size_t)j, x[j] - d->prior_log[j]);
    for (size_t s = 0; s < d->n_slots; s++)
        gsl_vector_set(f, d->n_rows + N_GLOBAL + s, x[N_GLOBAL + s] / d->arch_sd);
    return GSL_SUCCESS;
}

/* MAPE of the fitted rows under c; *left_out (when not NULL) counts the rows whose
 * prediction fails or is not a positive finite number, which are not counted. */
static double mape(fit_data *d, const eci_calib *c, size_t *left_out)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        const ec_run *run = ec_runs_get(d->runs, d->rows[i]);
        ec_result res;
        double pred = 0;
        if (eci_predict(d->ctx, &run->config, c, &res) == EC_OK)
            pred = ec_result_metric(&res, run->metric);
        if (!(pred > 0 && isfinite(pred)))
            continue;
        sum += fabs(pred - run->value) / run->value;
        n++;
    }
    if (left_out != NULL)
        *left_out = d->n_rows - n;
    return n ? sum / (double)n : 0;
}

static void driver_callback(const size_t iter, void *params, const gsl_multifit_nlinear_workspace *w)
{
    (void)w;
    ((fit_data *)params)->iter = iter;
}

/* Add the per-architecture parameters the run exercises: the GEMM scale of the unit its
 * precision runs on (tensor or CUDA cores) and the bandwidth scale. */
static void add_arch_slots(fit_data *d, const eci_gpu *g, int precision, const eci_calib *start)
{
    size_t a = 0;
    while (a < d->n_arch && !eci_name_eq(d->arch[a], g->architecture))
        a++;
    if (a == d->n_arch) {
        if (d->n_arch == ECI_CALIB_MAX_ARCH)
            return; /* more architectures than entries: the rest use the global values */
        eci_strlcpy(d->arch[d->n_arch++], g->architecture, EC_NAME_MAX);
    }
    eci_rates r;
    eci_rates_init(d->ctx, g, precision, start, &r);
    int used[2] = {r.tensor_cores ? P_GEMM : P_SIMT, P_MEM};
    for (int u = 0; u < 2; u++) {
        size_t s = 0;
        while (s < d->n_slots && !(d->slot[s].arch == (int)a && d->slot[s].which == used[u]))
            s++;
        if (s == d->n_slots)
            d->slot[d->n_slots++] = (arch_slot){.arch = (int)a, .which = used[u]};
    }
}

/* The rows to fit (use mask, each must be predictable) and the architectures they exercise. */
static int select_runs(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, const eci_calib *start,
                       size_t *rows, fit_data *d)
{
    size_t n_runs = ec_runs_count(runs);
    for (size_t i = 0; i < n_runs; i++) {
        if (use != NULL && !use[i])
            continue;
        ec_result res;
        const ec_run *run = ec_runs_get(runs, i);
        int prc = eci_predict(ctx, &run->config, start, &res);
        if (prc != EC_OK) {
            char why[EC_ERRMSG_MAX]; /* the message is rewritten below: copy it out first */
            eci_strlcpy(why, ec_ctx_errmsg(ctx), sizeof why);
            /* out of memory stays out of memory; anything else is a run the model refuses */
            return eci_error(ctx, prc == EC_ENOMEM ? EC_ENOMEM : EC_EINVAL, "run '%s' (line %zu) cannot be predicted: %s",
                             run->id, run->line, why);
        }
        rows[d->n_rows++] = i;
        add_arch_slots(d, eci_hw_find(ctx, run->config.gpu), run->config.precision, start);
    }
    if (d->n_rows == 0)
        return eci_error(ctx, EC_EINVAL, "no runs to calibrate on");
    return EC_OK;
}

/* Values and standard errors of the report from the fit's position and covariance.  A
 * per-architecture value is exp(x_global + x_slot): its log variance is
 * var_g + var_s + 2 cov_gs. */
static void fill_report(const fit_data *d, const gsl_vector *xf, const gsl_matrix *covar, double scale,
                        ec_fit_report *out)
{
    out->n_params = n_fit_params(d);
    for (int j = 0; j < N_GLOBAL; j++) {
        out->names[j] = param_names[j];
        out->architectures[j][0] = '\0';
        out->values[j] = exp(gsl_vector_get(xf, (size_t)j));
        out->stderrs[j] = out->values[j] * sqrt(gsl_matrix_get(covar, (size_t)j, (size_t)j) * scale);
    }
    for (size_t s = 0; s < d->n_slots; s++) {
        size_t j = N_GLOBAL + s, w = (size_t)d->slot[s].which;
        out->names[j] = param_names[w];
        eci_strlcpy(out->architectures[j], d->arch[d->slot[s].arch], EC_NAME_MAX);
        out->values[j] = exp(gsl_vector_get(xf, w) + gsl_vector_get(xf, j));
        double var = gsl_matrix_get(covar, w, w) + gsl_matrix_get(covar, j, j) + 2 * gsl_matrix_get(covar, w, j);
        out->stderrs[j] = out->values[j] * sqrt(var > 0 ? var * scale : 0);
    }
}

int ec_calibrate(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *out)
{
    if (ctx == NULL || runs == NULL || out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_calibrate: NULL argument") : EC_EMISUSE;
    memset(out, 0, sizeof *out);
    size_t n_runs = ec_runs_count(runs);
    size_t *rows = eci_calloc(ctx, n_runs ? n_runs : 1, sizeof *rows);
    if (rows == NULL)
        return EC_ENOMEM;
    eci_calib start; /* the priors of constants.csv, whatever fit the context uses now */
    eci_calib_default(ctx, &start);
    fit_data d = {.ctx = ctx, .runs = runs, .rows = rows, .arch_sd = eci_const(ctx, EC_C_calib_arch_log_sd),
                  .run_sd = eci_const(ctx, EC_C_calib_run_log_sd)};
    int rc = select_runs(ctx, runs, use, &start, rows, &d);
    if (rc != EC_OK) {
        eci_free(ctx, rows, n_runs * sizeof *rows);
        return rc;
    }
    size_t n = d.n_rows, p = n_fit_params(&d);
    double x0[N_GLOBAL];
    calib_to_array(&start, x0);
    for (int j = 0; j < N_GLOBAL; j++)
        d.prior_log[j] = log(x0[j]);

    const gsl_multifit_nlinear_type *T = gsl_multifit_nlinear_trust;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    size_t nres = n + p;
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(T, &fp, nres, p);
    gsl_vector *x = gsl_vector_alloc(p);
    gsl_matrix *covar = gsl_matrix_alloc(p, p);
    if (w == NULL || x == NULL || covar == NULL) {
        rc = eci_error(ctx, EC_ENOMEM, "out of memory allocating the fit workspace");
        goto done;
    }
    gsl_vector_set_zero(x); /* architecture ratios start at 1 */
    for (int j = 0; j < N_GLOBAL; j++)
        gsl_vector_set(x, (size_t)j, d.prior_log[j]);
    gsl_multifit_nlinear_fdf fdf = {.f = residuals, .df = NULL, .fvv = NULL, .n = nres, .p = p, .params = &d};
    if (gsl_multifit_nlinear_init(x, &fdf, w) != GSL_SUCCESS) {
        rc = d.cancelled ? EC_ECANCELED : eci_error(ctx, EC_EDOM, "the fit could not start");
        goto done;
    }
    int info = 0;
    int status = gsl_multifit_nlinear_driver(MAX_ITER, 1e-8, 1e-8, 1e-8, driver_callback, &d, &info, w);
    if (d.cancelled) {
        rc = EC_ECANCELED; /* the message is eci_progress's */
        goto done;
    }
    if (status != GSL_SUCCESS && status != GSL_EMAXITER) {
        rc = eci_error(ctx, EC_EDOM, "the fit did not converge: %s", gsl_strerror(status));
        goto done;
    }
    /* Standard errors: sqrt(diag((J^T J)^-1) x chi^2 / dof). */
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_multifit_nlinear_covar(J, 0.0, covar);
    double chi;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &chi);
    double dof = nres > p ? (double)(nres - p) : 1.0;
    fill_report(&d, gsl_multifit_nlinear_position(w), covar, chi / dof, out);
    out->n_runs = n;
    out->iterations = gsl_multifit_nlinear_niter(w);
    out->mape_before_frac = mape(&d, &start, NULL);
    /* Every value and standard error finite (issue 20: a profile of -nan standard errors was
     * written with exit 0), or the fit is refused naming the parameter. */
    for (size_t j = 0; j < out->n_params; j++)
        if (!isfinite(out->values[j]) || !isfinite(out->stderrs[j]) || out->stderrs[j] < 0) {
            rc = eci_error(ctx, EC_EDOM, "the fit's %s%s%s is %g with standard error %g: the runs do not "
                           "determine it", out->names[j], out->architectures[j][0] ? " for " : "",
                           out->architectures[j], out->values[j], out->stderrs[j]);
            goto done;
        }
    eci_calib fitted;
    if ((rc = eci_calib_from_report(ctx, out, &fitted)) == EC_OK)
        out->mape_after_frac = mape(&d, &fitted, &out->n_left_out);
done:
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_matrix_free(covar);
    eci_free(ctx, rows, n_runs * sizeof *rows);
    return rc;
}

/* ---- leave-one-GPU-out cross-validation ---------------------------------------------- */

int ec_calibrate_cv(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *report)
{
    if (ctx == NULL || runs == NULL || report == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_calibrate_cv: NULL argument") : EC_EMISUSE;
    size_t n = ec_runs_count(runs);
    /* gpu[i]: the profile of run i (aliases resolved), NULL when not used */
    const eci_gpu **gpu = eci_calloc(ctx, n ? n : 1, sizeof *gpu);
    unsigned char *train = eci_calloc(ctx, n ? n : 1, 1);
    int rc = gpu != NULL && train != NULL ? EC_OK : EC_ENOMEM;
    size_t n_gpus = 0;
    for (size_t i = 0; rc == EC_OK && i < n; i++) {
        if (use != NULL && !use[i])
            continue;
        const ec_run *run = ec_runs_get(runs, i);
        if ((gpu[i] = eci_hw_find(ctx, run->config.gpu)) == NULL) {
            rc = EC_ENOTFOUND;
            break;
        }
        size_t k = 0;
        while (k < i && gpu[k] != gpu[i])
            k++;
        n_gpus += k == i;
    }
    if (rc == EC_OK && n_gpus < 2)
        rc = eci_error(ctx, EC_EINVAL, "cross-validation needs runs on at least two GPUs (got %zu)", n_gpus);
    double sum_sq = 0, sum_abs = 0;
    size_t count = 0;
    for (size_t k = 0; rc == EC_OK && k < n; k++) {
        size_t first = 0; /* each GPU once: at its first run */
        while (first < k && gpu[first] != gpu[k])
            first++;
        if (gpu[k] == NULL || first != k)
            continue;
        for (size_t i = 0; i < n; i++)
            train[i] = gpu[i] != NULL && gpu[i] != gpu[k];
        ec_fit_report fold;
        eci_calib c;
        if ((rc = eci_progress(ctx, "cross-validate", (double)k, (double)n)) != EC_OK)
            break;
        if ((rc = ec_calibrate(ctx, runs, train, &fold)) != EC_OK || (rc = eci_calib_from_report(ctx, &fold, &c)) != EC_OK)
            break;
        for (size_t i = 0; rc == EC_OK && i < n; i++) {
            if (gpu[i] != gpu[k])
                continue;
            const ec_run *run = ec_runs_get(runs, i);
            ec_result res;
            if ((rc = eci_predict(ctx, &run->config, &c, &res)) != EC_OK)
                break;
            double pred = ec_result_metric(&res, run->metric);
            if (!(pred > 0 && isfinite(pred))) {
                report->n_left_out++; /* counted, not averaged */
                continue;
            }
            double r = log(pred / run->value);
            sum_sq += r * r;
            sum_abs += fabs(pred - run->value) / run->value;
            count++;
        }
    }
    if (rc == EC_OK) {
        report->error_log_sd = count ? sqrt(sum_sq / (double)count) : 0;
        report->cv_mape_frac = count ? sum_abs / (double)count : 0;
        report->cv_runs = count;
    }
    eci_free(ctx, gpu, (n ? n : 1) * sizeof *gpu);
    eci_free(ctx, train, n ? n : 1);
    return rc;
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
    eci_calib c; /* parse fully before replacing the fit in use */
    int rc = eci_calib_from_report(ctx, report, &c);
    if (rc != EC_OK)
        return rc;
    if (ctx->fit == NULL && (ctx->fit = eci_malloc(ctx, sizeof *ctx->fit)) == NULL)
        return EC_ENOMEM;
    *ctx->fit = c;
    return EC_OK;
}

/* ---- profiles --------------------------------------------------------------------------- */
int ec_profile_write(ec_ctx *ctx, const ec_fit_report *report, const char *path)
{
    if (ctx == NULL || report == NULL || path == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_profile_write: NULL argument") : EC_EMISUSE;
    eci_calib check; /* write only what can be read back */
    int rc = eci_calib_from_report(ctx, report, &check);
    if (rc != EC_OK)
        return rc;
    for (size_t j = 0; j < report->n_params; j++)
        if (!isfinite(report->stderrs[j]) || report->stderrs[j] < 0)
            return eci_error(ctx, EC_EINVAL, "%s: not written: the standard error of %s is %g", path,
                             report->names[j], report->stderrs[j]);
    if (!isfinite(report->error_log_sd) || report->error_log_sd < 0)
        return eci_error(ctx, EC_EINVAL, "%s: not written: error_log_sd is %g", path, report->error_log_sd);
    ec_csv_writer *wr;
    if ((rc = ec_csv_open(ctx, path, &wr)) != EC_OK)
        return rc;
    const char *header[] = {"parameter", "architecture", "value", "stderr", "meaning"};
    rc = ec_csv_row(wr, header, 5);
    for (size_t j = 0; rc == EC_OK && j < report->n_params; j++) {
        char v[32], e[32];
        snprintf(v, sizeof v, "%.6g", report->values[j]);
        snprintf(e, sizeof e, "%.3g", report->stderrs[j]);
        int which = param_index(report->names[j], N_GLOBAL);
        const char *row[] = {report->names[j], report->architectures[j], v, e, param_meaning[which]};
        rc = ec_csv_row(wr, row, 5);
    }
    if (rc == EC_OK && report->error_log_sd > 0) {
        char v[32];
        snprintf(v, sizeof v, "%.4g", report->error_log_sd);
        const char *row[] = {ERROR_SD_NAME, "", v, "", ERROR_SD_MEANING};
        rc = ec_csv_row(wr, row, 5);
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

/* One row of a profile into out: a global parameter, an architecture's, or error_log_sd. */
static int read_profile_row(ec_ctx *ctx, const eci_table *t, size_t r, int c_name, int c_arch, int c_value,
                            size_t *seen_line, ec_fit_report *out)
{
    const char *name = eci_table_cell(t, r, c_name);
    const char *arch = c_arch >= 0 ? eci_table_cell(t, r, c_arch) : "";
    const char *path = eci_table_name(t);
    size_t line = eci_table_line(t, r);
    if (strcmp(name, ERROR_SD_NAME) == 0)
        return eci_table_number(ctx, t, r, c_value, 0, 10, &out->error_log_sd);
    int which = param_index(name, N_GLOBAL);
    if (which < 0) {
        const char *near = eci_nearest(name, param_names, N_GLOBAL);
        return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: unknown parameter '%s' (did you mean '%s'?)", path, line,
                         c_name + 1, name, near);
    }
    size_t j = (size_t)which;
    if (arch[0] != '\0') {
        if (which >= N_ARCH_PARAMS)
            return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: '%s' is global: only gemm_scale, simt_scale and mem_scale "
                             "take an architecture", path, line, c_arch + 1, name);
        int rc = known_architecture(ctx, t, r, c_arch, &arch);
        if (rc != EC_OK)
            return rc;
        for (j = N_GLOBAL; j < out->n_params; j++)
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
    seen_line[j] = line;
    return eci_table_number(ctx, t, r, c_value, 1e-6, 1e6, &out->values[j]);
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
    int c_arch = eci_table_col(t, "architecture"); /* absent in profiles written before it */
    eci_calib prior;
    eci_calib_default(ctx, &prior);
    calib_to_array(&prior, out->values);
    if (eci_table_rows(t) == 0) /* ec_profile_write writes every parameter: nothing is a mistake */
        rc = eci_error(ctx, EC_EPARSE, "%s: no parameters (a profile lists parameter,value rows)", path);
    out->n_params = N_GLOBAL;
    for (int j = 0; j < N_GLOBAL; j++)
        out->names[j] = param_names[j];
    size_t seen_line[EC_FIT_MAX_PARAMS] = {0};
    for (size_t r = 0; r < eci_table_rows(t) && rc == EC_OK; r++)
        rc = read_profile_row(ctx, t, r, c_name, c_arch, c_value, seen_line, out);
    eci_table_free(t);
    return rc;
}
