/*
 * calibrate.c: fits the few physical parameters of eci_params to measured runs (docs/DESIGN.md 6)
 * with GSL's trust-region nonlinear least squares (gsl_multifit_nlinear, Levenberg-
 * Marquardt, finite-difference Jacobian) on r_i = log(predicted_i / measured_i) / s, with s
 * = calib_run_log_sd the scatter of one run about the model, plus one prior residual per
 * parameter, so that parameters no run exercises stay at their prior:
 *   global parameters:   (log x_j - log x0_j) / 1          (one e-fold, weak);
 *   per architecture a:  log(x_aj / x_j) / calib_arch_log_sd  (a hierarchical prior: the
 *                        architecture's GEMM and bandwidth scales are pooled to the global
 *                        ones, the more so the fewer runs it has).
 * Parameters are fitted in log space so they stay positive.  Leave-one-GPU-out
 * cross-validation measures the held-out error that widens prediction intervals, and
 * leave-one-architecture-out the wider error of an architecture the fit has not seen.  Each
 * per-architecture entry counts the runs that exercise it (the profile's runs column).  The
 * parameters themselves, their profile CSV and which a prediction uses are catalog/params.c's.
 */
#include "catalog/consts.h"
#include "fit/heldout.h"
#include "sim/predict.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the fit ------------------------------------------------------------------------ */

/* One per-architecture parameter of the fit: log(architecture value / global value). */
typedef struct arch_slot {
    int arch;  /* index into fit_data.arch */
    int which; /* ECI_P_GEMM, ECI_P_SIMT or ECI_P_MEM */
} arch_slot;

#define MAX_SLOTS (ECI_PARAMS_MAX_ARCH * ECI_N_ARCH_PARAMS)
/* Iterations of the trust-region driver at most. */
#define MAX_ITER 100
/* A run the model refuses to predict under some parameters (a step above 100 % of the peak, a
 * result that is not a positive number) counts as this many e-folds off, more than any two
 * finite doubles are apart (2 x 709), so the fit moves away from such parameters instead of
 * finding them perfect (a residual of 0 made one run at value=1e15 drive simt_scale to 5e10). */
#define REFUSED_RUN_LOG_ERROR 1500.0

typedef struct fit_data {
    ec_ctx *ctx;
    const ec_runs *runs;
    const size_t *rows;   /* indices of the runs fitted */
    size_t n_rows;
    double prior_log[ECI_N_PARAMS];
    char arch[ECI_PARAMS_MAX_ARCH][EC_NAME_MAX];
    size_t n_arch;
    arch_slot slot[MAX_SLOTS];
    size_t slot_runs[MAX_SLOTS]; /* runs that exercise each slot */
    unsigned slot_kernels[MAX_SLOTS]; /* bit 1 << EC_KERNELS_* of their kernel classes */
    size_t n_slots;
    unsigned attn_kernels; /* bit 1 << ECI_AK_*: the fused attention kernels the runs price (attn_eff's) */
    unsigned attn_mask_kernels; /* those of them run with an explicit mask (attn_mask_eff's) */
    double arch_sd;       /* calib_arch_log_sd */
    double run_sd;        /* calib_run_log_sd */
    int cancelled;        /* the progress callback asked to stop (residuals then fail the fit) */
    size_t iter;          /* iterations so far (the driver's callback) */
} fit_data;

static size_t n_fit_params(const fit_data *d)
{
    return ECI_N_PARAMS + d->n_slots;
}

/* Parameters from the fit's log-space vector. */
static void x_to_calib(const fit_data *d, const double *x, eci_params *c)
{
    double v[ECI_N_PARAMS];
    for (int j = 0; j < ECI_N_PARAMS; j++)
        v[j] = exp(x[j]);
    eci_params_default(d->ctx, c);
    eci_params_from_array(v, c);
    c->attn_mask_kernels = d->attn_mask_kernels; /* attn_mask_eff prices the masked runs' kernels */
    for (size_t a = 0; a < d->n_arch; a++)
        eci_params_arch_add(c, d->arch[a]);
    for (size_t s = 0; s < d->n_slots; s++) {
        eci_params_arch *a = &c->arch[d->slot[s].arch];
        *eci_params_arch_field(a, d->slot[s].which) = v[d->slot[s].which] * exp(x[ECI_N_PARAMS + s]);
        a->fitted |= 1u << d->slot[s].which;
        a->kernels |= d->slot_kernels[s];
    }
}

static int residuals(const gsl_vector *xv, void *params, gsl_vector *f)
{
    fit_data *d = params;
    double x[EC_FIT_MAX_PARAMS];
    for (size_t j = 0; j < n_fit_params(d); j++)
        x[j] = gsl_vector_get(xv, j);
    eci_params c;
    x_to_calib(d, x, &c);
    if (eci_progress(d->ctx, "calibrate", (double)d->iter, MAX_ITER) != EC_OK) {
        d->cancelled = 1;
        return GSL_EBADFUNC; /* the driver stops and returns this */
    }
    for (size_t i = 0; i < d->n_rows; i++) {
        const ec_run *run = ec_runs_get(d->runs, d->rows[i]);
        ec_result res;
        double r = REFUSED_RUN_LOG_ERROR / d->run_sd;
        if (eci_predict(d->ctx, &run->config, &c, &res) == EC_OK) {
            double pred = ec_result_metric(&res, run->metric);
            if (pred > 0 && isfinite(pred))
                r = log(pred / run->value) / d->run_sd;
        }
        gsl_vector_set(f, i, r);
    }
    for (int j = 0; j < ECI_N_PARAMS; j++)
        gsl_vector_set(f, d->n_rows + (size_t)j, x[j] - d->prior_log[j]);
    for (size_t s = 0; s < d->n_slots; s++)
        gsl_vector_set(f, d->n_rows + ECI_N_PARAMS + s, x[ECI_N_PARAMS + s] / d->arch_sd);
    return GSL_SUCCESS;
}

/* MAPE of the fitted rows under c; *left_out (when not NULL) counts the rows whose
 * prediction fails or is not a positive finite number, which are not counted. */
static double mape(fit_data *d, const eci_params *c, size_t *left_out)
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

/* Whether a fit may be kept (written as a profile, set on a context): inside the range the
 * profile reader enforces (eci_params_from_report holds the one definition), every fitted run
 * still predicted under it, and no worse than its start on them.  EC_EDOM naming why. */
static int keep_fit(fit_data *d, ec_fit_report *out)
{
    ec_ctx *ctx = d->ctx;
    for (size_t j = 0; j < out->n_params; j++) { /* the values as a profile keeps them */
        char v[32];
        snprintf(v, sizeof v, "%.*g", ECI_PROFILE_DIGITS, out->values[j]);
        out->values[j] = strtod(v, NULL);
    }
    eci_params fitted;
    int rc = eci_params_from_report(ctx, out, &fitted);
    if (rc != EC_OK) {
        char why[EC_ERRMSG_MAX];
        eci_strlcpy(why, ec_ctx_errmsg(ctx), sizeof why);
        return eci_error(ctx, EC_EDOM, "the fit is not kept: %s", why);
    }
    out->mape_after_frac = mape(d, &fitted, &out->n_left_out);
    if (out->n_left_out > 0)
        return eci_error(ctx, EC_EDOM, "the fit is not kept: under it %zu of the %zu runs fitted cannot be predicted "
                         "(a step above the GPU's peak, or no positive result)", out->n_left_out, d->n_rows);
    if (out->mape_after_frac > out->mape_before_frac)
        return eci_error(ctx, EC_EDOM, "the fit is not kept: it is worse than its start (MAPE %.1f%% after, %.1f%% "
                         "with the priors)", 100 * out->mape_after_frac, 100 * out->mape_before_frac);
    return EC_OK;
}

static void driver_callback(const size_t iter, void *params, const gsl_multifit_nlinear_workspace *w)
{
    (void)w;
    ((fit_data *)params)->iter = iter;
}

/* Add the per-architecture parameters the run exercises: the GEMM scale of the unit its
 * precision runs on (tensor or CUDA cores) and the bandwidth scale of its kind of network (a CNN's
 * or every other's), so CNN and transformer runs never set one memory scale together; each slot
 * records the kernel classes (kernels=) of its runs, the only ones its value will price. */
static void add_arch_slots(fit_data *d, const eci_gpu *g, int precision, int cnn, int kernels, const eci_params *start)
{
    size_t a = 0;
    while (a < d->n_arch && !eci_name_eq(d->arch[a], g->architecture))
        a++;
    if (a == d->n_arch) {
        if (d->n_arch == ECI_PARAMS_MAX_ARCH)
            return; /* more architectures than entries: the rest are priced as unseen (eci_params_scale) */
        eci_strlcpy(d->arch[d->n_arch++], g->architecture, EC_NAME_MAX);
    }
    eci_rates r;
    eci_rates_init(d->ctx, g, precision, start, cnn, kernels, &r);
    int used[2] = {r.tensor_cores ? ECI_P_GEMM : ECI_P_SIMT, cnn ? ECI_P_MEM_CNN : ECI_P_MEM};
    for (int u = 0; u < 2; u++) {
        size_t s = 0;
        while (s < d->n_slots && !(d->slot[s].arch == (int)a && d->slot[s].which == used[u]))
            s++;
        if (s == d->n_slots && ECI_N_PARAMS + d->n_slots == EC_FIT_MAX_PARAMS)
            continue; /* the report is full: priced as unseen on this unit (eci_params_scale) */
        if (s == d->n_slots)
            d->slot[d->n_slots++] = (arch_slot){.arch = (int)a, .which = used[u]};
        d->slot_runs[s]++;
        d->slot_kernels[s] |= 1u << kernels;
    }
}

/* The rows to fit (use mask, each must be predictable) and the architectures they exercise. */
static int select_runs(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, const eci_params *start,
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
        const eci_net *net = eci_net_find(ctx, run->config.model);
        const eci_gpu *g = eci_hw_find(ctx, run->config.gpu);
        add_arch_slots(d, g, run->config.precision, net != NULL && net->cnn, (int)run->config.kernels, start);
        int k = eci_attn_kernel_of(ctx, g, net, &run->config);
        if (k >= 0) {
            d->attn_kernels |= 1u << eci_attn_class(k, run->config.precision);
            if (eci_attn_through_sdpa(ctx, g, net, &run->config) && eci_sdpa_masked(ctx, &run->config))
                d->attn_mask_kernels |= 1u << eci_attn_class(k, run->config.precision);
        }
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
    out->attn_kernels = d->attn_kernels;
    out->attn_mask_kernels = d->attn_mask_kernels;
    for (int j = 0; j < ECI_N_PARAMS; j++) {
        out->names[j] = eci_params_name(j);
        out->architectures[j][0] = '\0';
        out->values[j] = exp(gsl_vector_get(xf, (size_t)j));
        out->stderrs[j] = out->values[j] * sqrt(gsl_matrix_get(covar, (size_t)j, (size_t)j) * scale);
        out->runs[j] = d->n_rows;
    }
    for (size_t s = 0; s < d->n_slots; s++) {
        size_t j = ECI_N_PARAMS + s, w = (size_t)d->slot[s].which;
        out->names[j] = eci_params_name(w);
        eci_strlcpy(out->architectures[j], d->arch[d->slot[s].arch], EC_NAME_MAX);
        out->values[j] = exp(gsl_vector_get(xf, w) + gsl_vector_get(xf, j));
        out->runs[j] = d->slot_runs[s];
        out->kernels[j] = d->slot_kernels[s];
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
    eci_params start; /* the priors of constants.csv, whatever fit the context uses now */
    eci_params_default(ctx, &start);
    fit_data d = {.ctx = ctx, .runs = runs, .rows = rows, .arch_sd = eci_const(ctx, EC_C_calib_arch_log_sd),
                  .run_sd = eci_const(ctx, EC_C_calib_run_log_sd)};
    int rc = select_runs(ctx, runs, use, &start, rows, &d);
    if (rc != EC_OK) {
        eci_free(ctx, rows, n_runs * sizeof *rows);
        return rc;
    }
    size_t n = d.n_rows, p = n_fit_params(&d);
    double x0[ECI_N_PARAMS];
    eci_params_to_array(&start, x0);
    for (int j = 0; j < ECI_N_PARAMS; j++)
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
    for (int j = 0; j < ECI_N_PARAMS; j++)
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
    rc = keep_fit(&d, out);
done:
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_matrix_free(covar);
    eci_free(ctx, rows, n_runs * sizeof *rows);
    return rc;
}

/* ---- cross-validation: leave one GPU, or one architecture, out -------------------------- */

/* Held-out errors of single-GPU runs: of the runs whose architecture (and matmul unit) the fold's
 * fit has runs of ([0]), and of the others ([1]), which the fit predicts as never seen
 * (EC_WARN_UNCALIBRATED).  Multi-GPU runs (leave-one-GPU-out only): by the path their gradients
 * take [p] and the same [u], per GPU left out (one sample each, as ec_calibrate_cv_arch explains).
 * Every scored run's error is also kept in err (heldout.c reads the sds from them). */
typedef struct cv_sums {
    eci_heldout *err; /* a buffer of ec_runs_count entries, shared by a fold's sums and the totals */
    size_t n_err;
    double sum_abs[2];
    size_t count[2], left_out;
    size_t groups; /* over the folds: the groups left out with runs scored */
    /* by the class of the fold's prediction ([1]: host-bound, ec_result_host_util_frac below
     * constants.csv host_bound_util_frac; [0]: GPU-bound): in a fold, its runs' sums; over the
     * folds, the groups with runs of the class and the runs */
    double class_sq[2];
    size_t class_count[2], class_groups[2];
    /* in a fold: the sum of its runs' log errors by class in the direction of time (an
     * architecture's bias, ec_fit_arch_term.bias_log); over the folds
     * that leave architectures out, each one's sample (ec_fit_arch_term), the first
     * EC_FIT_MAX_ARCHS of them */
    double class_sum[2];
    ec_fit_arch_term term[EC_FIT_MAX_ARCHS];
    size_t term_group[EC_FIT_MAX_ARCHS]; /* each term's group in err */
    size_t n_terms;
    /* multi-GPU runs: in a fold, their runs; over the folds, the GPUs with such runs and the runs */
    size_t comm_count[EC_COMM_PATHS][2], comm_groups[EC_COMM_PATHS][2];
} cv_sums;

/* Whether run i is fitted in the folds (and, leaving architectures out, scored): one GPU.  A
 * multi-GPU run's error holds its communication's too: it is only predicted, in the
 * leave-one-GPU-out folds, for the communication sd. */
static int single_gpu(const ec_run *run)
{
    return run->config.num_gpus <= 1;
}

static int same_group(const eci_gpu *a, const eci_gpu *b, int by_arch)
{
    return a != NULL && b != NULL && (by_arch ? eci_name_eq(a->architecture, b->architecture) : a == b);
}

/* The gradient path of a multi-GPU run (EC_COMM_*), as the prediction's interval takes it. */
static int run_path(ec_ctx *ctx, const ec_run *run, int *path)
{
    eci_resolved r;
    int rc = eci_resolve(ctx, &run->config, &r);
    return rc == EC_OK ? eci_comm_path(ctx, r.gpu, r.topology, run->config.num_gpus, r.nodes, path) : rc;
}

/* Predict the runs of group k (gpu[i] in k's group) with the fold's fit c into *sum. */
static int score_fold(ec_ctx *ctx, const ec_runs *runs, const eci_gpu **gpu, size_t k, int by_arch,
                      const eci_params *c, cv_sums *sum)
{
    double host_bound = eci_const(ctx, EC_C_host_bound_util_frac);
    for (size_t i = 0; i < ec_runs_count(runs); i++) {
        if (!same_group(gpu[i], gpu[k], by_arch))
            continue;
        const ec_run *run = ec_runs_get(runs, i);
        ec_result res;
        int prc = eci_predict(ctx, &run->config, c, &res), path = -1, rc;
        if (prc != EC_OK && prc != EC_EDOM) /* EC_EDOM: the fold's parameters price it above the peak */
            return prc;
        if (!single_gpu(run) && (rc = run_path(ctx, run, &path)) != EC_OK)
            return rc;
        double pred = prc == EC_OK ? ec_result_metric(&res, run->metric) : 0;
        if (!(pred > 0 && isfinite(pred))) {
            sum->left_out++; /* counted, not averaged */
            continue;
        }
        double r = log(pred / run->value);
        int u = (res.warnings & EC_WARN_UNCALIBRATED) != 0;
        int h = ec_result_host_util_frac(&res) < host_bound; /* as the prediction's interval takes it (sim/warnings.c) */
        sum->err[sum->n_err++] = (eci_heldout){fabs(r), k, h, path, u};
        if (path >= 0) {
            sum->comm_count[path][u]++;
            continue;
        }
        sum->sum_abs[u] += fabs(pred - run->value) / run->value;
        sum->count[u]++;
        sum->class_sq[h] += r * r;
        /* the bias in the direction of time: a rate's error turned */
        sum->class_sum[h] += run->metric == EC_METRIC_SAMPLES_PER_S || run->metric == EC_METRIC_TOKENS_PER_S ? -r : r;
        sum->class_count[h]++;
    }
    return EC_OK;
}

/* A fold's runs as its architecture's sample (arch: its name) into sum->term. */
static void add_term(const cv_sums *f, const char *arch, cv_sums *sum)
{
    size_t nf = f->class_count[0] + f->class_count[1];
    if (nf == 0 || sum->n_terms >= EC_FIT_MAX_ARCHS)
        return;
    ec_fit_arch_term *t = &sum->term[sum->n_terms++];
    memset(t, 0, sizeof *t);
    eci_strlcpy(t->architecture, arch, sizeof t->architecture);
    for (int h = 0; h < 2; h++)
        if ((t->runs[h] = f->class_count[h]) > 0) {
            t->msq_log[h] = f->class_sq[h] / (double)f->class_count[h];
            t->bias_log[h] = f->class_sum[h] / (double)f->class_count[h];
        }
    t->msq_log_all = (f->class_sq[0] + f->class_sq[1]) / (double)nf;
    t->bias_log_all = (f->class_sum[0] + f->class_sum[1]) / (double)nf;
}

/* A fold's sums into the totals (its errors are already in the shared err buffer): runs, and the
 * groups with runs of each kind. */
static void add_fold(const cv_sums *f, cv_sums *sum)
{
    for (int u = 0; u < 2; u++) {
        sum->sum_abs[u] += f->sum_abs[u];
        sum->count[u] += f->count[u];
        for (int p = 0; p < EC_COMM_PATHS; p++)
            if (f->comm_count[p][u] > 0) {
                sum->comm_count[p][u] += f->comm_count[p][u];
                sum->comm_groups[p][u]++;
            }
    }
    sum->left_out += f->left_out;
    sum->n_err += f->n_err;
    sum->groups += f->count[0] + f->count[1] > 0;
    for (int h = 0; h < 2; h++)
        if (f->class_count[h] > 0) {
            sum->class_count[h] += f->class_count[h];
            sum->class_groups[h]++;
        }
}

/* For each group (a GPU, or an architecture when by_arch) of the runs with use[i] != 0, fit on
 * the other groups' single-GPU runs and predict its runs into *sum (leaving architectures out:
 * its single-GPU runs only). */
static int cross_validate(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, int by_arch, cv_sums *sum)
{
    size_t n = ec_runs_count(runs);
    /* gpu[i]: the profile of run i (aliases resolved), NULL when not used */
    const eci_gpu **gpu = eci_calloc(ctx, n ? n : 1, sizeof *gpu);
    unsigned char *train = eci_calloc(ctx, n ? n : 1, 1);
    sum->err = eci_calloc(ctx, n ? n : 1, sizeof *sum->err); /* each run is scored in one fold at most */
    int rc = gpu != NULL && train != NULL && sum->err != NULL ? EC_OK : EC_ENOMEM;
    size_t n_groups = 0; /* with single-GPU runs, which the folds fit */
    for (size_t i = 0; rc == EC_OK && i < n; i++) {
        const ec_run *run = ec_runs_get(runs, i);
        if ((use != NULL && !use[i]) || (by_arch && !single_gpu(run)))
            continue;
        if ((gpu[i] = eci_hw_find(ctx, run->config.gpu)) == NULL) {
            rc = EC_ENOTFOUND;
            break;
        }
        size_t k = 0;
        while (k < i && !(single_gpu(ec_runs_get(runs, k)) && same_group(gpu[k], gpu[i], by_arch)))
            k++;
        n_groups += k == i && single_gpu(run);
    }
    const char *what = by_arch ? "architectures" : "GPUs";
    if (rc == EC_OK && n_groups < 2)
        rc = eci_error(ctx, EC_EINVAL, "cross-validation needs single-GPU runs on at least two %s (got %zu)", what,
                       n_groups);
    for (size_t k = 0; rc == EC_OK && k < n; k++) {
        size_t first = 0; /* each group once: at its first run */
        while (first < k && !same_group(gpu[first], gpu[k], by_arch))
            first++;
        if (gpu[k] == NULL || first != k)
            continue;
        for (size_t i = 0; i < n; i++)
            train[i] = gpu[i] != NULL && !same_group(gpu[i], gpu[k], by_arch) && single_gpu(ec_runs_get(runs, i));
        ec_fit_report fold;
        eci_params c;
        if ((rc = eci_progress(ctx, "cross-validate", (double)k, (double)n)) != EC_OK)
            break;
        if ((rc = ec_calibrate(ctx, runs, train, &fold)) == EC_EDOM) { /* a fold's fit not kept: no measure */
            char why[EC_ERRMSG_MAX];
            eci_strlcpy(why, ec_ctx_errmsg(ctx), sizeof why);
            rc = eci_error(ctx, EC_EINVAL, "the fit without the runs on %s: %s",
                           by_arch ? gpu[k]->architecture : gpu[k]->id, why);
        }
        if (rc != EC_OK || (rc = eci_params_from_report(ctx, &fold, &c)) != EC_OK)
            break;
        cv_sums f = {.err = sum->err + sum->n_err};
        if ((rc = score_fold(ctx, runs, gpu, k, by_arch, &c, &f)) != EC_OK)
            break;
        if (by_arch && sum->n_terms < EC_FIT_MAX_ARCHS)
            sum->term_group[sum->n_terms] = k; /* add_term's, when it keeps one */
        add_fold(&f, sum);
        if (by_arch)
            add_term(&f, gpu[k]->architecture, sum);
    }
    eci_free(ctx, gpu, (n ? n : 1) * sizeof *gpu);
    eci_free(ctx, train, n ? n : 1);
    return rc;
}

/* The communication part of a multi-GPU prediction's sd on path p (EC_COMM_*), from the held-out
 * multi-GPU runs of the folds whose fit had seen their architecture (u; as error_log_sd, every
 * GPU's when none had), given that error_log_sd, base (docs/accuracy.md, "The communication sd").
 * Its error is the base's plus the communication's, which is a shift shared by a machine's runs
 * (its links, its host, its NCCL settings) more than a scatter of each: the reasoning of the
 * unseen-architecture sd with a GPU for an architecture, each GPU left out one sample
 * (ECI_HELDOUT_PER_GROUP).  The part stored is what their total adds to the base in quadrature,
 * sqrt(max(0, total^2 - base^2)), so that the base (leave-one-GPU-out of single-GPU runs, per
 * run as it always was) with it gives the total back.  Only that part rests on the k GPUs, so
 * only it is widened by t_0.9,k / z_0.9: the base, from every GPU's single-GPU runs, is not
 * (widening the total instead gave runs that err exactly as one GPU does a communication part
 * of base x sqrt(w^2 - 1), 0.5 x base for six GPUs). */
static int comm_sd(ec_ctx *ctx, const cv_sums *sum, int p, int u, double base, double *out)
{
    eci_heldout_pick pick = {p, -1, u, ECI_HELDOUT_NONE};
    size_t k;
    double widened;
    int rc = eci_heldout_sd(ctx, sum->err, sum->n_err, &pick, ECI_HELDOUT_PER_GROUP, &widened, &k);
    double w = k > 0 ? eci_heldout_widen(k) : 1, total = widened / w;
    *out = total > base ? w * sqrt(total * total - base * base) : 0;
    return rc;
}

/* The errors cross_validate allocated (for every run of runs). */
static void free_errors(ec_ctx *ctx, const ec_runs *runs, cv_sums *sum)
{
    size_t n = ec_runs_count(runs);
    eci_free(ctx, sum->err, (n ? n : 1) * sizeof *sum->err);
    sum->err = NULL;
}

int ec_calibrate_cv(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *report)
{
    if (ctx == NULL || runs == NULL || report == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_calibrate_cv: NULL argument") : EC_EMISUSE;
    cv_sums sum = {0};
    int rc = cross_validate(ctx, runs, use, 0, &sum);
    /* the error of a new GPU of an architecture the fit has seen: a GPU alone in its
     * architecture is a leave-one-architecture-out fold (ec_calibrate_cv_arch's), unless every
     * GPU is */
    int k = sum.count[0] == 0 ? 1 : 0;
    if (rc == EC_OK) {
        size_t gpus;
        eci_heldout_pick pick = {-1, -1, k, ECI_HELDOUT_NONE};
        rc = eci_heldout_sd(ctx, sum.err, sum.n_err, &pick, ECI_HELDOUT_PER_RUN, &report->error_log_sd, &gpus);
        report->cv_mape_frac = sum.count[k] ? sum.sum_abs[k] / (double)sum.count[k] : 0;
        report->cv_runs = sum.count[k];
        report->n_left_out += sum.left_out;
        for (int p = 0; rc == EC_OK && p < EC_COMM_PATHS; p++) {
            rc = comm_sd(ctx, &sum, p, k, report->error_log_sd, &report->comm_error_log_sd[p]);
            report->comm_cv_runs[p] = sum.comm_count[p][k];
            report->comm_cv_gpus[p] = sum.comm_groups[p][k];
        }
    }
    free_errors(ctx, runs, &sum);
    return rc;
}

/* The sd that widens the p10-p90 of a prediction on an architecture the fit has not seen, from
 * the leave-one-architecture-out errors of the class c of the held-out predictions (0: GPU-bound,
 * 1: host-bound, -1: both), without group `without` (docs/accuracy.md, "The unseen-architecture
 * sd").  A held-out run's log error is its architecture's shift plus a scatter about it whose
 * size is the architecture's own; what is to be bounded is the error of a run on the NEXT
 * architecture.
 *  1. Each architecture left out is one sample: its runs share one weight however many they
 *     are.  Pooling over runs weighted each architecture by its run count: the error of a run
 *     drawn from the calibration set, dominated by its largest architecture (2 of 100 and 20
 *     runs: 1.4 effective samples, not 2) and by that one's own scatter.
 *  2. The sd is the 0.8 quantile of |log error| so weighted, over z_0.9 (heldout.c): the
 *     interval then holds 80% of the held-out errors, where the root mean square of each
 *     architecture's errors, averaged, was set by the one architecture far off (Blackwell's 13
 *     rows were 67% of the mean square of five).
 *  3. It rests on k samples, so it is widened by Student's t_0.9,k / z_0.9 (k = 2: x1.47, 5:
 *     x1.15, 30: x1.03), the predictive interval of a variance from k samples.
 * The leave-one-GPU-out error is not added in quadrature: each architecture's errors already hold
 * its scatter, and adding it would count it twice. */
static int unseen_arch_sd(ec_ctx *ctx, const cv_sums *sum, int c, size_t without, double *sd)
{
    eci_heldout_pick pick = {-1, c, -1, without};
    size_t k;
    return eci_heldout_sd(ctx, sum->err, sum->n_err, &pick, ECI_HELDOUT_PER_GROUP, sd, &k);
}

/* Each architecture's sample into the report, with the sd of each class it is a sample of as it
 * would be without it (the same rule on the others: which architecture sets the sd, and by how
 * much) and how many of its runs that sd's interval holds (its fold of the coverage check). */
static int set_terms(ec_ctx *ctx, const cv_sums *sum, ec_fit_report *report)
{
    int rc = EC_OK;
    report->n_arch_terms = sum->n_terms;
    for (size_t j = 0; rc == EC_OK && j < sum->n_terms; j++) {
        ec_fit_arch_term *t = &report->arch_terms[j];
        *t = sum->term[j];
        for (int h = 0; rc == EC_OK && h < 2; h++) {
            int pooled = h == 0 && sum->class_groups[0] == 0; /* the GPU-bound sd is then the pooled one */
            if (pooled || t->runs[h] > 0)
                rc = unseen_arch_sd(ctx, sum, pooled ? -1 : h, sum->term_group[j], &t->sd_without[h]);
            else
                t->sd_without[h] = h == 0 ? report->arch_error_log_sd : report->arch_host_error_log_sd;
            t->covered[h] = 0;
            for (size_t i = 0; i < sum->n_err; i++) {
                const eci_heldout *e = &sum->err[i];
                t->covered[h] += e->group == sum->term_group[j] && e->path < 0 && (pooled || e->host_bound == h) &&
                                 e->abs_log <= ECI_NORMAL_P90 * t->sd_without[h];
            }
        }
    }
    return rc;
}

int ec_calibrate_cv_arch(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *report)
{
    if (ctx == NULL || runs == NULL || report == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_calibrate_cv_arch: NULL argument") : EC_EMISUSE;
    cv_sums sum = {0};
    int rc = cross_validate(ctx, runs, use, 1, &sum);
    /* every held-out run: its architecture is never in its fold's fit */
    size_t n = sum.count[0] + sum.count[1];
    if (rc == EC_OK) {
        /* by the class of each held-out prediction (docs/accuracy.md, "The host-bound
         * unseen-architecture sd"): a host-bound run's error holds the host CPU's, which the runs
         * rarely state; each class is the rule above over the architectures with runs of it.  No
         * GPU-bound run at all: the pooled sd; no host-bound one: 0, a host-bound prediction then
         * takes the GPU-bound sd. */
        rc = unseen_arch_sd(ctx, &sum, sum.class_groups[0] > 0 ? 0 : -1, ECI_HELDOUT_NONE, &report->arch_error_log_sd);
        if (rc == EC_OK)
            rc = unseen_arch_sd(ctx, &sum, 1, ECI_HELDOUT_NONE, &report->arch_host_error_log_sd);
        report->arch_host_cv_runs = sum.class_count[1];
        report->arch_host_cv_archs = sum.class_groups[1];
        report->arch_cv_mape_frac = n ? (sum.sum_abs[0] + sum.sum_abs[1]) / (double)n : 0;
        report->arch_cv_runs = n;
        report->arch_cv_archs = sum.groups;
        if (rc == EC_OK)
            rc = set_terms(ctx, &sum, report);
    }
    free_errors(ctx, runs, &sum);
    return rc;
}
