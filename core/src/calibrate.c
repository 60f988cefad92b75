/*
 * calibrate.c: fits the few physical parameters of eci_calib to measured runs (DESIGN 6)
 * with GSL's trust-region nonlinear least squares (gsl_multifit_nlinear, Levenberg-
 * Marquardt, finite-difference Jacobian) on r_i = log(predicted_i / measured_i), plus one
 * prior residual per parameter, (log x_j - log x0_j) / 1, so that parameters no run
 * exercises stay at their prior.  Parameters are fitted in log space so they stay positive.
 * Also reads and writes profile CSVs and picks the parameters a prediction uses.
 */
#include "predict.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { P_GEMM, P_SIMT, P_MEM, P_CONV, P_ATTN, P_DISPATCH, N_PARAMS };

static const char *const param_names[N_PARAMS] = {"gemm_scale", "simt_scale", "mem_scale", "conv_eff",
                                                  "attn_eff", "dispatch_scale"};
static const char *const param_meaning[N_PARAMS] = {
    "multiplies every GPU's measured large-GEMM efficiency on tensor cores (tf32, fp16, bf16)",
    "multiplies every GPU's measured large-GEMM efficiency on CUDA cores (fp32)",
    "multiplies every GPU's measured streaming-bandwidth efficiency",
    "cuDNN convolution throughput relative to a GEMM of the same shape",
    "fused attention (SDPA) throughput relative to a GEMM",
    "multiplies the host's per-op dispatch time",
};

static void calib_to_array(const eci_calib *c, double *x)
{
    x[P_GEMM] = c->gemm_scale;
    x[P_SIMT] = c->simt_scale;
    x[P_MEM] = c->mem_scale;
    x[P_CONV] = c->conv_eff;
    x[P_ATTN] = c->attn_eff;
    x[P_DISPATCH] = c->dispatch_scale;
}

static void array_to_calib(const double *x, eci_calib *c)
{
    c->gemm_scale = x[P_GEMM];
    c->simt_scale = x[P_SIMT];
    c->mem_scale = x[P_MEM];
    c->conv_eff = x[P_CONV];
    c->attn_eff = x[P_ATTN];
    c->dispatch_scale = x[P_DISPATCH];
}

int eci_calib_current(ec_ctx *ctx, const ec_config *cfg, eci_calib *c)
{
    eci_calib_default(ctx, c);
    if (cfg != NULL && cfg->profile[0] != '\0') {
        if (strcmp(ctx->profile_path, cfg->profile) != 0) {
            ec_fit_report rep;
            int rc = ec_profile_read(ctx, cfg->profile, &rep);
            if (rc != EC_OK)
                return rc;
            memcpy(ctx->profile_fit, rep.values, sizeof(double) * N_PARAMS);
            eci_strlcpy(ctx->profile_path, cfg->profile, sizeof ctx->profile_path);
        }
        array_to_calib(ctx->profile_fit, c);
    } else if (ctx->fit_set) {
        array_to_calib(ctx->fit, c);
    }
    return EC_OK;
}

/* ---- the fit ------------------------------------------------------------------------ */
typedef struct fit_data {
    ec_ctx *ctx;
    const ec_runs *runs;
    const size_t *rows;   /* indices of the runs fitted */
    size_t n_rows;
    double prior_log[N_PARAMS];
    int failed;
} fit_data;

static int residuals(const gsl_vector *x, void *params, gsl_vector *f)
{
    fit_data *d = params;
    double v[N_PARAMS];
    for (int j = 0; j < N_PARAMS; j++)
        v[j] = exp(gsl_vector_get(x, (size_t)j));
    eci_calib c;
    array_to_calib(v, &c);
    for (size_t i = 0; i < d->n_rows; i++) {
        const ec_run *run = ec_runs_get(d->runs, d->rows[i]);
        ec_result res;
        double r = 0;
        if (eci_predict(d->ctx, &run->config, &c, &res) == EC_OK) {
            double pred = ec_result_metric(&res, run->metric);
            if (pred > 0 && isfinite(pred))
                r = log(pred / run->value);
        } else {
            d->failed = 1;
        }
        gsl_vector_set(f, i, r);
    }
    for (int j = 0; j < N_PARAMS; j++)
        gsl_vector_set(f, d->n_rows + (size_t)j, gsl_vector_get(x, (size_t)j) - d->prior_log[j]);
    return GSL_SUCCESS;
}

static double mape(fit_data *d, const eci_calib *c)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        const ec_run *run = ec_runs_get(d->runs, d->rows[i]);
        ec_result res;
        if (eci_predict(d->ctx, &run->config, c, &res) != EC_OK)
            continue;
        sum += fabs(ec_result_metric(&res, run->metric) - run->value) / run->value;
        n++;
    }
    return n ? sum / (double)n : 0;
}

int ec_calibrate(ec_ctx *ctx, const ec_runs *runs, const unsigned char *use, ec_fit_report *out)
{
    if (ctx == NULL || runs == NULL || out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_calibrate: NULL argument") : EC_EMISUSE;
    memset(out, 0, sizeof *out);
    size_t n_runs = ec_runs_count(runs), n = 0;
    size_t *rows = eci_calloc(ctx, n_runs ? n_runs : 1, sizeof *rows);
    if (rows == NULL)
        return EC_ENOMEM;
    for (size_t i = 0; i < n_runs; i++) {
        if (use != NULL && !use[i])
            continue;
        ec_result res;
        const ec_run *run = ec_runs_get(runs, i);
        int prc = eci_predict(ctx, &run->config, NULL, &res);
        if (prc != EC_OK) {
            char why[EC_ERRMSG_MAX]; /* the message is rewritten below: copy it out first */
            eci_strlcpy(why, ec_ctx_errmsg(ctx), sizeof why);
            /* out of memory stays out of memory; anything else is a run the model refuses */
            int rc = eci_error(ctx, prc == EC_ENOMEM ? EC_ENOMEM : EC_EINVAL,
                               "run '%s' (line %zu) cannot be predicted: %s", run->id, run->line, why);
            eci_free(ctx, rows, n_runs * sizeof *rows);
            return rc;
        }
        rows[n++] = i;
    }
    if (n == 0) {
        eci_free(ctx, rows, n_runs * sizeof *rows);
        return eci_error(ctx, EC_EINVAL, "no runs to calibrate on");
    }
    eci_calib start; /* the priors of constants.csv, whatever fit the context uses now */
    eci_calib_default(ctx, &start);
    double x0[N_PARAMS];
    calib_to_array(&start, x0);
    fit_data d = {.ctx = ctx, .runs = runs, .rows = rows, .n_rows = n};
    for (int j = 0; j < N_PARAMS; j++)
        d.prior_log[j] = log(x0[j]);

    const gsl_multifit_nlinear_type *T = gsl_multifit_nlinear_trust;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    size_t nres = n + N_PARAMS;
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(T, &fp, nres, N_PARAMS);
    gsl_vector *x = gsl_vector_alloc(N_PARAMS);
    gsl_matrix *covar = gsl_matrix_alloc(N_PARAMS, N_PARAMS);
    int rc = EC_OK;
    if (w == NULL || x == NULL || covar == NULL) {
        rc = eci_error(ctx, EC_ENOMEM, "out of memory allocating the fit workspace");
        goto done;
    }
    for (int j = 0; j < N_PARAMS; j++)
        gsl_vector_set(x, (size_t)j, d.prior_log[j]);
    gsl_multifit_nlinear_fdf fdf = {.f = residuals, .df = NULL, .fvv = NULL, .n = nres, .p = N_PARAMS,
                                    .params = &d};
    if (gsl_multifit_nlinear_init(x, &fdf, w) != GSL_SUCCESS) {
        rc = eci_error(ctx, EC_EDOM, "the fit could not start");
        goto done;
    }
    int info = 0;
    int status = gsl_multifit_nlinear_driver(100, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, w);
    if (status != GSL_SUCCESS && status != GSL_EMAXITER) {
        rc = eci_error(ctx, EC_EDOM, "the fit did not converge: %s", gsl_strerror(status));
        goto done;
    }
    /* Standard errors: sqrt(diag((J^T J)^-1) x chi^2 / dof). */
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_multifit_nlinear_covar(J, 0.0, covar);
    double chi;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &chi);
    double dof = nres > N_PARAMS ? (double)(nres - N_PARAMS) : 1.0;
    const gsl_vector *xf = gsl_multifit_nlinear_position(w);
    out->n_params = N_PARAMS;
    for (int j = 0; j < N_PARAMS; j++) {
        out->names[j] = param_names[j];
        out->values[j] = exp(gsl_vector_get(xf, (size_t)j));
        out->stderrs[j] = out->values[j] * sqrt(gsl_matrix_get(covar, (size_t)j, (size_t)j) * chi / dof);
    }
    out->n_runs = n;
    out->iterations = gsl_multifit_nlinear_niter(w);
    out->mape_before_frac = mape(&d, &start);
    eci_calib fitted;
    array_to_calib(out->values, &fitted);
    out->mape_after_frac = mape(&d, &fitted);
done:
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_matrix_free(covar);
    eci_free(ctx, rows, n_runs * sizeof *rows);
    return rc;
}

int ec_ctx_set_fit(ec_ctx *ctx, const ec_fit_report *report)
{
    if (ctx == NULL)
        return EC_EMISUSE;
    if (report == NULL) {
        ctx->fit_set = 0;
        return EC_OK;
    }
    if (report->n_params != N_PARAMS)
        return eci_error(ctx, EC_EINVAL, "a fit report has %zu parameters, not %d", report->n_params, N_PARAMS);
    for (int j = 0; j < N_PARAMS; j++) /* check every value before using any */
        if (!(report->values[j] > 0) || !isfinite(report->values[j]))
            return eci_error(ctx, EC_EINVAL, "fitted parameter '%s' must be positive", param_names[j]);
    for (int j = 0; j < N_PARAMS; j++)
        ctx->fit[j] = report->values[j];
    ctx->fit_set = 1;
    return EC_OK;
}

/* ---- profiles --------------------------------------------------------------------------- */
int ec_profile_write(ec_ctx *ctx, const ec_fit_report *report, const char *path)
{
    if (ctx == NULL || report == NULL || path == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_profile_write: NULL argument") : EC_EMISUSE;
    ec_csv_writer *wr;
    int rc = ec_csv_open(ctx, path, &wr);
    if (rc != EC_OK)
        return rc;
    const char *header[] = {"parameter", "value", "stderr", "meaning"};
    rc = ec_csv_row(wr, header, 4);
    for (size_t j = 0; rc == EC_OK && j < report->n_params && j < N_PARAMS; j++) {
        char v[32], e[32];
        snprintf(v, sizeof v, "%.6g", report->values[j]);
        snprintf(e, sizeof e, "%.3g", report->stderrs[j]);
        const char *row[] = {param_names[j], v, e, param_meaning[j]};
        rc = ec_csv_row(wr, row, 4);
    }
    if (rc != EC_OK) {
        ec_csv_abort(wr);
        return rc;
    }
    return ec_csv_close(wr);
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
    eci_calib prior;
    eci_calib_default(ctx, &prior);
    calib_to_array(&prior, out->values);
    size_t seen_line[N_PARAMS] = {0};
    if (eci_table_rows(t) == 0) /* ec_profile_write writes every parameter: nothing is a mistake */
        rc = eci_error(ctx, EC_EPARSE, "%s: no parameters (a profile lists parameter,value rows)", path);
    for (size_t r = 0; r < eci_table_rows(t) && rc == EC_OK; r++) {
        const char *name = eci_table_cell(t, r, c_name);
        int j = 0;
        while (j < N_PARAMS && strcmp(param_names[j], name) != 0)
            j++;
        if (j == N_PARAMS) {
            const char *near = eci_nearest(name, param_names, N_PARAMS);
            rc = eci_error(ctx, EC_EPARSE, "%s:%zu:%d: unknown parameter '%s' (did you mean '%s'?)", path,
                           eci_table_line(t, r), c_name + 1, name, near);
            break;
        }
        if (seen_line[j] != 0) {
            rc = eci_error(ctx, EC_EPARSE, "%s:%zu:%d: parameter '%s' already given on line %zu", path,
                           eci_table_line(t, r), c_name + 1, name, seen_line[j]);
            break;
        }
        seen_line[j] = eci_table_line(t, r);
        rc = eci_table_number(ctx, t, r, c_value, 1e-6, 1e6, &out->values[j]);
    }
    eci_table_free(t);
    out->n_params = N_PARAMS;
    for (int j = 0; j < N_PARAMS; j++)
        out->names[j] = param_names[j];
    return rc;
}
