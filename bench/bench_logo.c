/*
 * bench_logo.c: cross-validated accuracy of the model on measured runs (DESIGN section 6).
 *
 *   bench_logo RUNS.csv [OUT.csv]
 *
 * 1. priors: every run predicted with the constants.csv / gpus.csv priors (no fitting);
 * 2. leave-one-GPU-out: for each GPU, fit the calibration parameters on the single-GPU runs
 *    of the OTHER GPUs, then predict every run (single and multi-GPU) of the GPU left out;
 * 3. leave-one-model-out: the same with models.
 * Prints a Markdown report; OUT.csv gets one row per held-out prediction.  Fits use only
 * single-GPU runs: the multi-GPU runs also depend on the communication model.
 * Intervals (leave-one-GPU-out): the p10-p90 interval of a held-out GPU's prediction is
 * widened by a model error estimated WITHOUT that GPU: the held-out log error sd (0.8 quantile of
 * |log error| over z_0.9, fit/heldout.c) of an inner leave-one-GPU-out over the other GPUs (ec_calibrate_cv), nested inside the outer
 * fold; coverage is the share of measurements inside their interval.
 * 4. residuals by factor: the held-out errors split by model and task, sequence length,
 *    precision, GPU architecture, source and GPU count, one factor at a time, to show
 *    where the model is wrong in a systematic way rather than by scatter.
 *
 *   bench_logo --by-arch RUNS.csv [OUT.csv]
 *
 * Leave one architecture out instead (issue 39): for each GPU architecture, fit on the
 * single-GPU runs of the others and predict every run of the one left out, which the fit has
 * then never seen: the library's own p10-p90 (ec_predict), widened by the
 * leave-one-architecture-out sd of a nested leave-one-architecture-out over the other
 * architectures only (ec_calibrate_cv_arch: each architecture one sample, t-widened for how
 * few), and by a multi-GPU run's communication sd for its gradient path, from the multi-GPU
 * runs of the other architectures only (ec_calibrate_cv: predicted with their GPU left out,
 * never fitted), and its coverage and MAPE per fold; then the multi-GPU runs' coverage by gradient
 * path and by the exposed communication share of their held-out prediction.  OUT.csv's last
 * column, comm_share, is that share (both modes; 0 on one GPU).
 */
#include "model/compute.h" /* eci_interval_widen, eci_params_from_report: the library's own interval */
#include "epochcast.h"
#include "internal.h" /* eci_hw_find: a run's GPU architecture for the residual tables */

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 64


static int is_single(const ec_run *r)
{
    return r->config.num_gpus == 1;
}

static const char *group_of(const ec_run *r, int by_model)
{
    return by_model ? r->config.model : r->config.gpu;
}

/* covered == NULL: no interval column; extra: more cells after it (NULL: none). */
static void print_row(const char *label, const double *pred, const double *meas, const unsigned char *covered,
                      size_t n, const char *extra)
{
    ec_error_stats st;
    ec_error_stats_compute(pred, meas, n, &st);
    printf("| %-22s | %4zu | %6.1f | %5.0f%% | %5.0f%% | %+6.1f |", label, st.n, 100 * st.mape_frac,
           100 * st.within_10_frac, 100 * st.within_20_frac, 100 * st.bias_frac);
    if (covered != NULL) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            c += covered[i];
        printf(" %5.0f%% |", n ? 100.0 * (double)c / (double)n : 0.0);
    }
    printf("%s\n", extra != NULL ? extra : "");
}

/* The share of a prediction's step that is exposed communication (breakdown.comm_s without the
 * pipeline's bubble, over step_s; 0 on one GPU): how much of the step a communication error moves. */
static double comm_share(const ec_result *res)
{
    double comm_s = res->breakdown.comm_s - res->comm.pp_bubble_s;
    return res->step_s > 0 && comm_s > 0 ? (comm_s < res->step_s ? comm_s / res->step_s : 1) : 0;
}

static void print_stats(const char *label, const double *pred, const double *meas, const unsigned char *covered,
                        size_t n)
{
    print_row(label, pred, meas, covered, n, NULL);
}

static void table_header(int intervals)
{
    printf("| held out               |    n | MAPE %% | ±10%%  | ±20%%  | bias %% |%s\n",
           intervals ? " p10-p90 covers |" : "");
    printf("|------------------------|------|--------|-------|-------|--------|%s\n", intervals ? "-------|" : "");
}

/* The model-error sds for a fold, into rep: an inner leave-one-GPU-out on the fold's training
 * runs (cv_use: its single-GPU runs, which the inner folds fit, and its multi-GPU runs, which they
 * only predict), error_log_sd and the communication sds of each gradient path, as
 * ec_calibrate_cv writes them into a profile. */
static int nested_error_sds(ec_ctx *ctx, const ec_runs *runs, const unsigned char *cv_use, ec_fit_report *rep)
{
    ec_fit_report inner;
    memset(&inner, 0, sizeof inner);
    if (ec_calibrate_cv(ctx, runs, cv_use, &inner) != EC_OK)
        return 1;
    rep->error_log_sd = inner.error_log_sd;
    for (int p = 0; p < EC_COMM_PATHS; p++) {
        rep->comm_error_log_sd[p] = inner.comm_error_log_sd[p];
        rep->comm_cv_runs[p] = inner.comm_cv_runs[p];
        rep->comm_cv_gpus[p] = inner.comm_cv_gpus[p];
    }
    return 0;
}

/* The level of one factor for a run, for the residual tables. */
enum { F_MODEL, F_SEQ, F_PRECISION, F_ARCH, F_SOURCE, F_GPUS, N_FACTORS };
static const char *const factor_names[N_FACTORS] = {"model and task", "sequence length", "precision",
                                                    "architecture", "source", "GPUs"};

static void factor_level(ec_ctx *ctx, const ec_run *r, int f, char *buf, size_t n)
{
    char a[32], b[32];
    switch (f) {
    case F_MODEL:
        ec_config_get(&r->config, "task", a, sizeof a);
        snprintf(buf, n, "%s %s", r->config.model, a);
        break;
    case F_SEQ:
        ec_config_get(&r->config, "seq_len", a, sizeof a);
        ec_config_get(&r->config, "image_size", b, sizeof b);
        snprintf(buf, n, r->config.seq_len > 0 ? "seq %s" : "image %s", r->config.seq_len > 0 ? a : b);
        break;
    case F_PRECISION:
        ec_config_get(&r->config, "precision", buf, n);
        break;
    case F_ARCH: {
        const eci_gpu *g = eci_hw_find(ctx, r->config.gpu);
        snprintf(buf, n, "%s", g != NULL ? g->architecture : "?");
        break;
    }
    case F_SOURCE: { /* "median of N: lambda:path" -> "lambda" */
        const char *s = r->source != NULL ? r->source : "";
        const char *colon = strchr(s, ':');
        s = colon != NULL ? colon + 1 : s;
        while (*s == ' ')
            s++;
        size_t len = strcspn(s, ":");
        snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), s);
        break;
    }
    default:
        snprintf(buf, n, "%d", r->config.num_gpus);
        break;
    }
}

/* Error tables of the predictions pred[i] (0: none) by each factor: where the model is
 * wrong in a systematic way shows as a bias shared by one level of a factor. */
static void residual_tables(ec_ctx *ctx, const ec_runs *runs, const double *pred, int single_only)
{
    size_t n = ec_runs_count(runs);
    double *p = calloc(n ? n : 1, sizeof(double)), *m = calloc(n ? n : 1, sizeof(double));
    if (p == NULL || m == NULL) {
        free(p);
        free(m);
        return;
    }
    for (int f = 0; f < N_FACTORS; f++) {
        char levels[MAX_GROUPS][48];
        size_t n_levels = 0;
        for (size_t i = 0; i < n; i++) {
            char lv[48];
            factor_level(ctx, ec_runs_get(runs, i), f, lv, sizeof lv);
            size_t k = 0;
            while (k < n_levels && strcmp(levels[k], lv) != 0)
                k++;
            if (k == n_levels && n_levels < MAX_GROUPS)
                strcpy(levels[n_levels++], lv);
        }
        printf("\n| %-22s |    n | MAPE %% | ±10%%  | ±20%%  | bias %% |\n", factor_names[f]);
        printf("|------------------------|------|--------|-------|-------|--------|\n");
        for (size_t k = 0; k < n_levels; k++) {
            size_t c = 0;
            for (size_t i = 0; i < n; i++) {
                const ec_run *r = ec_runs_get(runs, i);
                char lv[48];
                factor_level(ctx, r, f, lv, sizeof lv);
                if (pred[i] > 0 && strcmp(lv, levels[k]) == 0 && (!single_only || is_single(r))) {
                    p[c] = pred[i];
                    m[c++] = r->value;
                }
            }
            if (c > 0)
                print_stats(levels[k], p, m, NULL, c);
        }
    }
    free(p);
    free(m);
}

static int path_of_run(ec_ctx *ctx, const ec_run *r);
static void print_path_row(const char *label, const ec_runs *runs, const char **arch_of, const char *arch,
                           const int *path_of, int path, const double *held, const unsigned char *covered,
                           const char *extra);
static const char *path_label(int path);

/* The state of one cross-validation (cross_validate, cross_validate_arch): per run its group, gradient path and
 * held-out prediction, the runs of the current fold, and the held-out predictions in the order they were made. */
typedef struct {
    ec_ctx *ctx;
    const ec_runs *runs;
    FILE *csv;                   /* one row per held-out prediction; NULL: none */
    size_t n;                    /* the number of runs */
    const char **group_of;       /* group_of[i]: run i's group (GPU, model or architecture) */
    int *path_of;                /* path_of[i]: run i's gradient path (path_of_run) */
    double *held;                /* held[i]: run i's held-out prediction */
    double *share;               /* share[i]: the exposed communication share of that prediction (comm_share) */
    unsigned char *run_cov;      /* run_cov[i]: whether run i's measurement is inside its interval */
    unsigned char *use, *cv_use; /* the fold's runs to fit (single-GPU) and to cross-validate (every one) */
    double *pred, *meas;         /* every held-out prediction and its measurement, in order, */
    unsigned char *cov;          /* and whether its interval covers the measurement */
    size_t n_all;
    double *s_pred, *s_meas;     /* the same for the single-GPU runs */
    unsigned char *s_cov;
    size_t n_s;
} cv_state;

/* Frees the arrays of s. */
static void cv_free(cv_state *s)
{
    free(s->group_of);
    free(s->path_of);
    free(s->share);
    free(s->run_cov);
    free(s->use);
    free(s->cv_use);
    free(s->pred);
    free(s->meas);
    free(s->cov);
    free(s->s_pred);
    free(s->s_meas);
    free(s->s_cov);
}

/* Allocates the arrays of s for the runs and takes each run's gradient path; 1 when out of memory. */
static int cv_open(cv_state *s, ec_ctx *ctx, const ec_runs *runs, FILE *csv, double *held)
{
    size_t n = ec_runs_count(runs), n1 = n ? n : 1;
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->runs = runs;
    s->csv = csv;
    s->n = n;
    s->held = held;
    s->group_of = calloc(n1, sizeof *s->group_of);
    s->path_of = calloc(n1, sizeof *s->path_of);
    s->share = calloc(n1, sizeof(double));
    s->run_cov = calloc(n1, 1);
    s->use = calloc(n1, 1);
    s->cv_use = calloc(n1, 1);
    s->pred = calloc(n1, sizeof(double));
    s->meas = calloc(n1, sizeof(double));
    s->cov = calloc(n1, 1);
    s->s_pred = calloc(n1, sizeof(double));
    s->s_meas = calloc(n1, sizeof(double));
    s->s_cov = calloc(n1, 1);
    if (s->group_of == NULL || s->path_of == NULL || s->share == NULL || s->run_cov == NULL || s->use == NULL ||
        s->cv_use == NULL || s->pred == NULL || s->meas == NULL || s->cov == NULL || s->s_pred == NULL ||
        s->s_meas == NULL || s->s_cov == NULL) {
        cv_free(s);
        return 1;
    }
    for (size_t i = 0; i < n; i++) /* the gradient path of each run, as its interval takes it */
        s->path_of[i] = path_of_run(ctx, ec_runs_get(runs, i));
    return 0;
}

/* The distinct groups of the runs (group_of) in the order they first appear, at most MAX_GROUPS; their count. */
static size_t cv_groups(const cv_state *s, const char **groups)
{
    size_t n_groups = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t k = 0;
        while (k < n_groups && strcmp(groups[k], s->group_of[i]) != 0)
            k++;
        if (k == n_groups && n_groups < MAX_GROUPS)
            groups[n_groups++] = s->group_of[i];
    }
    return n_groups;
}

/* Selects the fold without `group`: cv_use its other runs, use those of them on one GPU (the ones fitted). */
static void cv_select(cv_state *s, const char *group)
{
    for (size_t i = 0; i < s->n; i++) {
        s->cv_use[i] = strcmp(s->group_of[i], group) != 0; /* the multi-GPU runs: scored, never fitted */
        s->use[i] = s->cv_use[i] && is_single(ec_runs_get(s->runs, i));
    }
}

/* Predicts run i with the fold's fit into res and its p10-p90 (both the prediction without intervals), and
 * records the prediction in s; 1 when it fails. */
static int cv_predict(cv_state *s, size_t i, int intervals, ec_result *res, double *p10, double *p90)
{
    const ec_run *r = ec_runs_get(s->runs, i);
    if (ec_predict(s->ctx, &r->config, res) != EC_OK) {
        fprintf(stderr, "bench_logo: %s: %s\n", r->id, ec_ctx_errmsg(s->ctx));
        return 1;
    }
    double p = ec_result_metric(res, r->metric);
    *p10 = *p90 = p;
    if (intervals)
        ec_result_metric_interval(res, r->metric, p10, p90);
    s->held[i] = p;
    s->share[i] = comm_share(res);
    s->run_cov[i] = r->value >= *p10 && r->value <= *p90;
    s->cov[s->n_all] = s->run_cov[i];
    s->pred[s->n_all] = p;
    s->meas[s->n_all++] = r->value;
    if (is_single(r)) {
        s->s_cov[s->n_s] = s->run_cov[i];
        s->s_pred[s->n_s] = p;
        s->s_meas[s->n_s++] = r->value;
    }
    return 0;
}

/* Writes the csv row of run r's held-out prediction p in fold `group` of the cross-validation `by`. */
static void csv_row(FILE *csv, const char *by, const char *group, const ec_run *r, double p, double p10, double p90,
                    double sd, double share)
{
    if (csv != NULL)
        fprintf(csv, "%s,%s,%s,%s,%d,%.6g,%.6g,%.3f,%.6g,%.6g,%.4f,%.4f\n", by, group, r->id, r->config.gpu,
                r->config.num_gpus, p, r->value, 100.0 * (p - r->value) / r->value, p10, p90, sd, share);
}

/* Prints the heading and introduction of a leave-one-GPU-out or leave-one-model-out table, and its header. */
static void print_cv_intro(int by_model)
{
    int intervals = !by_model;
    printf("\n### Leave one %s out\n\n", by_model ? "model" : "GPU");
    printf("Fit on the single-GPU runs of the other %ss; predict every run of the one left out.\n",
           by_model ? "model" : "GPU");
    if (intervals)
        printf("The p10-p90 interval is the library's own (ec_predict) with the fold's profile: p50 x\n"
               "exp(-+1.2816 sd), sd the held-out log error sd (the 0.8 quantile of |log error| over 1.2816) of\n"
               "a nested leave-one-GPU-out over the other GPUs only (column sd), and on several GPUs the\n"
               "communication sd of the gradients' path from the other GPUs' multi-GPU runs in quadrature\n"
               "(ec_calibrate_cv).\n");
    printf("\n");
    table_header(intervals);
}

/* Fits the fold without `group` and sets it on the context, with the nested error sds when it has intervals;
 * 1 when that fails. */
static int cv_fit(cv_state *s, const char *group, int intervals, ec_fit_report *rep)
{
    cv_select(s, group);
    ec_ctx_set_fit(s->ctx, NULL);
    if (ec_calibrate(s->ctx, s->runs, s->use, rep) != EC_OK) {
        fprintf(stderr, "bench_logo: fit without %s failed: %s\n", group, ec_ctx_errmsg(s->ctx));
        return 1;
    }
    if (intervals && nested_error_sds(s->ctx, s->runs, s->cv_use, rep) != 0) {
        fprintf(stderr, "bench_logo: nested cross-validation without %s failed: %s\n", group,
                ec_ctx_errmsg(s->ctx));
        return 1;
    }
    if (ec_ctx_set_fit(s->ctx, rep) != EC_OK) {
        fprintf(stderr, "bench_logo: %s\n", ec_ctx_errmsg(s->ctx));
        return 1;
    }
    return 0;
}

/* One fold of cross_validate: fit without `group`, predict each of its runs (a csv row each), print its row. */
static int cv_fold(cv_state *s, int by_model, const char *group)
{
    int intervals = !by_model;
    ec_fit_report rep;
    if (cv_fit(s, group, intervals, &rep) != 0)
        return 1;
    double sd = intervals ? rep.error_log_sd : 0;
    size_t g0 = s->n_all;
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->group_of[i], group) != 0)
            continue;
        ec_result res;
        double p10, p90;
        if (cv_predict(s, i, intervals, &res, &p10, &p90) != 0)
            return 1;
        csv_row(s->csv, by_model ? "model" : "gpu", group, ec_runs_get(s->runs, i), s->held[i], p10, p90, sd,
                s->share[i]);
    }
    char label[64];
    if (intervals)
        snprintf(label, sizeof label, "%s (sd %.3f, comm %.2f/%.2f/%.2f)", group, sd,
                 rep.comm_error_log_sd[EC_COMM_DIRECT], rep.comm_error_log_sd[EC_COMM_HOST],
                 rep.comm_error_log_sd[EC_COMM_HOST_SHARED]);
    else
        snprintf(label, sizeof label, "%s", group);
    print_stats(label, s->pred + g0, s->meas + g0, intervals ? s->cov + g0 : NULL, s->n_all - g0);
    return 0;
}

/* Cross-validate over groups (GPUs or models).  Rows of held-out predictions go to csv;
 * held[i] gets run i's held-out prediction. */
static int cross_validate(ec_ctx *ctx, const ec_runs *runs, int by_model, FILE *csv, double *held)
{
    cv_state s;
    if (cv_open(&s, ctx, runs, csv, held) != 0)
        return 1;
    for (size_t i = 0; i < s.n; i++)
        s.group_of[i] = group_of(ec_runs_get(runs, i), by_model);
    const char *groups[MAX_GROUPS];
    size_t n_groups = cv_groups(&s, groups);
    int intervals = !by_model, rc = 0;
    print_cv_intro(by_model);
    for (size_t k = 0; k < n_groups && rc == 0; k++)
        rc = cv_fold(&s, by_model, groups[k]);
    if (rc == 0) {
        print_stats("all runs", s.pred, s.meas, intervals ? s.cov : NULL, s.n_all);
        print_stats("single-GPU runs", s.s_pred, s.s_meas, intervals ? s.s_cov : NULL, s.n_s);
        for (int p = 0; intervals && p < EC_COMM_PATHS; p++) /* the multi-GPU runs by their gradients' path */
            print_path_row(path_label(p), runs, NULL, NULL, s.path_of, p, held, s.run_cov, NULL);
    }
    ec_ctx_set_fit(ctx, NULL);
    cv_free(&s);
    return rc;
}

/* The gradient path of run r (EC_COMM_*, as the library's interval takes it), -1 for one GPU. */
static int path_of_run(ec_ctx *ctx, const ec_run *r)
{
    eci_resolved res;
    int path = -1;
    if (r->config.num_gpus > 1 && eci_resolve(ctx, &r->config, &res) == EC_OK &&
        eci_comm_path(ctx, res.gpu, res.topology, r->config.num_gpus, res.nodes, &path) != EC_OK)
        path = -1;
    return path;
}

/* A table row of the held-out runs of architecture arch (NULL: every one) on gradient path `path`
 * (-1: one GPU); nothing when there are none. */
static void print_path_row(const char *label, const ec_runs *runs, const char **arch_of, const char *arch,
                           const int *path_of, int path, const double *held, const unsigned char *covered,
                           const char *extra)
{
    size_t n = ec_runs_count(runs), c = 0;
    double *p = calloc(n ? n : 1, sizeof *p), *m = calloc(n ? n : 1, sizeof *m);
    unsigned char *cv = calloc(n ? n : 1, 1);
    for (size_t i = 0; p != NULL && m != NULL && cv != NULL && i < n; i++)
        if ((arch == NULL || strcmp(arch_of[i], arch) == 0) && path_of[i] == path && held[i] > 0) {
            p[c] = held[i];
            m[c] = ec_runs_get(runs, i)->value;
            cv[c++] = covered[i];
        }
    if (c > 0)
        print_row(label, p, m, cv, c, extra);
    free(p);
    free(m);
    free(cv);
}

static const char *path_label(int path)
{
    return path == EC_COMM_HOST_SHARED ? "multi-GPU, via host, 3+ a node"
           : path == EC_COMM_HOST      ? "multi-GPU, via host, 2 a node"
                                       : "multi-GPU, direct";
}

/* The short name of a gradient path in the exposed-share table. */
static const char *path_short(int path)
{
    return path == EC_COMM_HOST_SHARED ? "via host 3+" : path == EC_COMM_HOST ? "via host 2" : "direct";
}

/* Upper ends of the exposed-share classes of the coverage table (the last: every larger share). */
static const double share_edges[] = {0.02, 0.05, 0.10, 1.01};
#define N_SHARE_CLASSES (sizeof share_edges / sizeof share_edges[0])

/* The multi-GPU runs held out (held[i] > 0) by gradient path and exposed communication share of
 * their held-out prediction: whether the interval holds them where communication paces more of
 * the step (docs/accuracy.md, "The communication sd"). */
static void print_share_table(const ec_runs *runs, const int *path_of, const double *share, const double *held,
                              const unsigned char *covered)
{
    size_t n = ec_runs_count(runs);
    double *p = calloc(n ? n : 1, sizeof *p), *m = calloc(n ? n : 1, sizeof *m);
    unsigned char *cv = calloc(n ? n : 1, 1);
    printf("\nMulti-GPU runs by the share of their predicted step that is exposed communication (the\n"
           "pipeline's bubble left out): the same held-out predictions and intervals as above.\n\n");
    table_header(1);
    for (int path = 0; p != NULL && m != NULL && cv != NULL && path < EC_COMM_PATHS; path++)
        for (size_t b = 0; b < N_SHARE_CLASSES; b++) {
            double lo = b == 0 ? 0 : share_edges[b - 1];
            size_t c = 0;
            for (size_t i = 0; i < n; i++)
                if (path_of[i] == path && held[i] > 0 && share[i] >= lo && share[i] < share_edges[b]) {
                    p[c] = held[i];
                    m[c] = ec_runs_get(runs, i)->value;
                    cv[c++] = covered[i];
                }
            char label[64];
            if (b + 1 < N_SHARE_CLASSES)
                snprintf(label, sizeof label, "%s, %.0f-%.0f%%", path_short(path), 100 * lo, 100 * share_edges[b]);
            else
                snprintf(label, sizeof label, "%s, %.0f%% and more", path_short(path), 100 * lo);
            if (c > 0)
                print_stats(label, p, m, cv, c);
        }
    free(p);
    free(m);
    free(cv);
}

/* Prints the heading and introduction of the leave-one-architecture-out table, and its header. */
static void print_arch_intro(void)
{
    printf("\n### Leave one architecture out\n\n"
           "Fit on the single-GPU runs of the other architectures; predict every run of the one left out\n"
           "(which the fit has never seen: EC_WARN_UNCALIBRATED).  The p10-p90 is the library's own\n"
           "(ec_predict): p50 x exp(-+1.2816 sd), sd the unseen-architecture sd of a nested\n"
           "leave-one-architecture-out over the other\n"
           "architectures only (ec_calibrate_cv_arch: the 0.8 quantile of |log error| over 1.2816, each of\n"
           "those architectures weighing the same, times t_0.9/z_0.9 with as many degrees of freedom as\n"
           "architectures, column k; docs/accuracy.md), of the held-out runs its folds predicted\n"
           "GPU-bound (column sd) or host-bound (ec_result_host_util_frac below constants.csv host_bound_util_frac,\n"
           "column sd host, used when measured): each row left out takes the one of its own prediction's\n"
           "class (docs/accuracy.md, \"The host-bound unseen-architecture sd\"; column hb: its rows\n"
           "predicted host-bound), below the leave-one-GPU-out error (sd_gpu) or not (no\n"
           "floor).  With one other architecture there is nothing to nest and sd is sd_gpu.  A multi-GPU run's sd is sqrt(sd^2 + comm^2), comm the communication\n"
           "sd of its gradient path (comm direct: NVLink, PCIe peer-to-peer; comm host: through host\n"
           "memory, two GPUs a node / more) from the other architectures' multi-GPU runs,\n"
           "each predicted with its GPU left out of a nested leave-one-GPU-out and never fitted\n"
           "(ec_calibrate_cv; docs/accuracy.md, \"The communication sd\"; column GPUs: the GPUs,\n"
           "direct/host/host 3+, it rests on).\n\n");
    printf("| held out               |    n | MAPE %% | ±10%%  | ±20%%  | bias %% | p10-p90 covers | sd | sd host | hb "
           "| sd_gpu | k | comm direct | comm host | GPUs |\n");
    printf("|------------------------|------|--------|-------|-------|--------|-------|------|------|------|------|------"
           "|------|------|------|\n");
}

/* Fits the fold without architecture arch with its nested leave-one-GPU-out and leave-one-architecture-out
 * error sds, and sets it on the context; 1 when that fails. */
static int arch_fit(cv_state *s, const char *arch, ec_fit_report *rep)
{
    cv_select(s, arch);
    ec_ctx_set_fit(s->ctx, NULL);
    int cv = EC_OK;
    if (ec_calibrate(s->ctx, s->runs, s->use, rep) != EC_OK ||
        ((cv = ec_calibrate_cv(s->ctx, s->runs, s->cv_use, rep)) != EC_OK && cv != EC_EINVAL) ||
        ((cv = ec_calibrate_cv_arch(s->ctx, s->runs, s->use, rep)) != EC_OK && cv != EC_EINVAL) ||
        ec_ctx_set_fit(s->ctx, rep) != EC_OK) {
        fprintf(stderr, "bench_logo: the fit without %s: %s\n", arch, ec_ctx_errmsg(s->ctx));
        return 1;
    }
    return 0;
}

/* Prints the rows of the fold without arch: its runs from g0 on, its single-GPU runs from s0 on, and its runs by
 * gradient path, each ending in the fold's sds (extra). */
static void print_arch_rows(const cv_state *s, const char *arch, size_t g0, size_t s0, const char *extra)
{
    char label[64];
    snprintf(label, sizeof label, "%s", arch);
    print_row(label, s->pred + g0, s->meas + g0, s->cov + g0, s->n_all - g0, extra);
    snprintf(label, sizeof label, "%s, single-GPU", arch);
    print_row(label, s->s_pred + s0, s->s_meas + s0, s->s_cov + s0, s->n_s - s0, extra);
    for (int p = 0; p < EC_COMM_PATHS; p++) {
        snprintf(label, sizeof label, "%s, %s", arch, path_label(p));
        print_path_row(label, s->runs, s->group_of, arch, s->path_of, p, s->held, s->run_cov, extra);
    }
}

/* One fold of cross_validate_arch: fit without arch, predict each of its runs (a csv row each), print its rows. */
static int arch_fold(cv_state *s, const char *arch)
{
    ec_fit_report rep;
    if (arch_fit(s, arch, &rep) != 0)
        return 1;
    /* the unseen-architecture sd as the library takes it (catalog/params.c eci_params_error_sd):
     * error_log_sd only without one; a host-bound prediction's when measured */
    double sd = rep.arch_error_log_sd > 0 ? rep.arch_error_log_sd : rep.error_log_sd;
    double sd_host = rep.arch_host_error_log_sd > 0 ? rep.arch_host_error_log_sd : sd;
    double host_bound = eci_const(s->ctx, EC_C_host_bound_util_frac);
    size_t g0 = s->n_all, s0 = s->n_s, n_host = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->group_of[i], arch) != 0)
            continue;
        ec_result res;
        double p10, p90;
        if (cv_predict(s, i, 1, &res, &p10, &p90) != 0)
            return 1;
        int host = ec_result_host_util_frac(&res) < host_bound;
        n_host += host;
        csv_row(s->csv, "arch", arch, ec_runs_get(s->runs, i), s->held[i], p10, p90, host ? sd_host : sd,
                s->share[i]);
    }
    char extra[128];
    snprintf(extra, sizeof extra, " %.3f | %.3f | %zu | %.3f | %zu | %.3f | %.3f/%.3f | %zu/%zu/%zu |", sd,
             sd_host, n_host, rep.error_log_sd, rep.arch_cv_archs, rep.comm_error_log_sd[EC_COMM_DIRECT],
             rep.comm_error_log_sd[EC_COMM_HOST], rep.comm_error_log_sd[EC_COMM_HOST_SHARED],
             rep.comm_cv_gpus[EC_COMM_DIRECT], rep.comm_cv_gpus[EC_COMM_HOST], rep.comm_cv_gpus[EC_COMM_HOST_SHARED]);
    print_arch_rows(s, arch, g0, s0, extra);
    return 0;
}

/* Leave one architecture out (--by-arch): per fold the fit without the architecture, nested
 * leave-one-GPU-out and leave-one-architecture-out errors on its training runs, and the library's
 * interval of every run of the architecture left out.  held[i]: run i's held-out prediction. */
static int cross_validate_arch(ec_ctx *ctx, const ec_runs *runs, FILE *csv, double *held)
{
    cv_state s;
    if (cv_open(&s, ctx, runs, csv, held) != 0)
        return 1;
    for (size_t i = 0; i < s.n; i++) {
        const eci_gpu *g = eci_hw_find(ctx, ec_runs_get(runs, i)->config.gpu);
        s.group_of[i] = g != NULL ? g->architecture : "?";
    }
    const char *archs[MAX_GROUPS];
    size_t n_archs = cv_groups(&s, archs);
    int rc = 0;
    print_arch_intro();
    for (size_t k = 0; k < n_archs && rc == 0; k++)
        rc = arch_fold(&s, archs[k]);
    if (rc == 0) {
        print_row("all runs", s.pred, s.meas, s.cov, s.n_all, " | | | | | | | |");
        print_row("single-GPU runs", s.s_pred, s.s_meas, s.s_cov, s.n_s, " | | | | | | | |");
        for (int p = 0; p < EC_COMM_PATHS; p++)
            print_path_row(path_label(p), runs, s.group_of, NULL, s.path_of, p, held, s.run_cov, " | | | | | | | |");
        print_share_table(runs, s.path_of, s.share, held, s.run_cov);
    }
    ec_ctx_set_fit(ctx, NULL);
    cv_free(&s);
    return rc;
}

/* The context with the model catalog (EPOCHCAST_MODELS) and the runs of path, fit cleared; 1 when loading fails. */
static int load_runs(const char *path, ec_ctx **ctx, ec_runs **runs)
{
    const char *models = getenv("EPOCHCAST_MODELS");
    if (ec_ctx_new(NULL, NULL, ctx) != EC_OK || ec_ctx_load_models(*ctx, models) != EC_OK ||
        ec_runs_load(*ctx, path, runs) != EC_OK) {
        fprintf(stderr, "bench_logo: %s\n", *ctx ? ec_ctx_errmsg(*ctx) : "out of memory");
        return 1;
    }
    ec_ctx_set_fit(*ctx, NULL); /* start from the priors, not models/profile.csv */
    return 0;
}

/* Opens OUT.csv for writing and writes its header; NULL when it cannot be opened. */
static FILE *open_csv(const char *path)
{
    FILE *csv = fopen(path, "w");
    if (csv == NULL) {
        perror(path);
        return NULL;
    }
    fprintf(csv, "held_out_by,group,id,gpu,num_gpus,predicted,measured,error_pct,p10,p90,error_log_sd,"
                 "comm_share\n");
    return csv;
}

/* The --by-arch report: leave one architecture out, then its residuals by factor; 0 on success. */
static int report_by_arch(ec_ctx *ctx, const ec_runs *runs, FILE *csv)
{
    size_t n = ec_runs_count(runs);
    double *held = calloc(n ? n : 1, sizeof(double));
    int rc = held == NULL || cross_validate_arch(ctx, runs, csv, held);
    if (rc == 0) {
        printf("\n### Residuals by factor, leave one architecture out\n\nSingle-GPU runs:\n");
        residual_tables(ctx, runs, held, 1);
        printf("\nAll runs:\n");
        residual_tables(ctx, runs, held, 0);
    }
    free(held);
    return rc;
}

/* Predicts every run with the priors (no fitting) into pred and prints their table; 1 when a prediction fails. */
static int report_priors(ec_ctx *ctx, const ec_runs *runs, double *pred)
{
    size_t n = ec_runs_count(runs), ns = 0;
    double *meas = calloc(n, sizeof(double)), *sp = calloc(n, sizeof(double)), *sm = calloc(n, sizeof(double));
    int rc = meas == NULL || sp == NULL || sm == NULL;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const ec_run *r = ec_runs_get(runs, i);
        ec_result res;
        if (ec_predict(ctx, &r->config, &res) != EC_OK) {
            fprintf(stderr, "bench_logo: %s: %s\n", r->id, ec_ctx_errmsg(ctx));
            rc = 1;
            break;
        }
        pred[i] = ec_result_metric(&res, r->metric);
        meas[i] = r->value;
        if (is_single(r)) {
            sp[ns] = pred[i];
            sm[ns++] = r->value;
        }
    }
    if (rc == 0) {
        printf("\n### Priors only (no fitting)\n\n");
        table_header(0);
        print_stats("all runs", pred, meas, NULL, n);
        print_stats("single-GPU runs", sp, sm, NULL, ns);
    }
    free(meas);
    free(sp);
    free(sm);
    return rc;
}

/* Fits on every single-GPU run (in-sample) and prints the parameter values; 1 when the fit fails. */
static int report_fit_all(ec_ctx *ctx, const ec_runs *runs)
{
    size_t n = ec_runs_count(runs);
    unsigned char *use = calloc(n, 1);
    if (use == NULL)
        return 1;
    for (size_t i = 0; i < n; i++)
        use[i] = is_single(ec_runs_get(runs, i));
    ec_fit_report rep;
    int rc = ec_calibrate(ctx, runs, use, &rep) != EC_OK;
    free(use);
    if (rc != 0) {
        fprintf(stderr, "bench_logo: %s\n", ec_ctx_errmsg(ctx));
        return 1;
    }
    printf("\n### Fit on all single-GPU runs (in-sample, for the parameter values)\n\n");
    printf("%zu runs, %zu iterations; MAPE %.1f%% with the priors, %.1f%% fitted.\n\n", rep.n_runs,
           rep.iterations, 100 * rep.mape_before_frac, 100 * rep.mape_after_frac);
    printf("| parameter | architecture | value | std. error |\n|---|---|---|---|\n");
    for (size_t j = 0; j < rep.n_params; j++)
        printf("| %s | %s | %.4g | %.2g |\n", rep.names[j], rep.architectures[j][0] ? rep.architectures[j] : "(all)",
               rep.values[j], rep.stderrs[j]);
    return 0;
}

/* The default report: priors, the in-sample fit, leave one GPU out, leave one model out, then their residuals by
 * factor; 0 on success. */
static int report_by_group(ec_ctx *ctx, const ec_runs *runs, FILE *csv)
{
    size_t n = ec_runs_count(runs);
    double *pred = calloc(n, sizeof(double));
    if (pred == NULL || report_priors(ctx, runs, pred) != 0 || report_fit_all(ctx, runs) != 0) {
        free(pred);
        return 1;
    }
    double *held_gpu = calloc(n, sizeof(double)), *held_model = calloc(n, sizeof(double));
    int rc = held_gpu == NULL || held_model == NULL || cross_validate(ctx, runs, 0, csv, held_gpu) ||
             cross_validate(ctx, runs, 1, csv, held_model);
    if (rc == 0) {
        printf("\n### Residuals by factor\n\nWhere the model errs systematically: the held-out errors above "
               "(single-GPU runs) split by one factor at a time.\n\n#### Priors only\n");
        residual_tables(ctx, runs, pred, 1);
        printf("\n#### Leave one GPU out\n");
        residual_tables(ctx, runs, held_gpu, 1);
        printf("\n#### Leave one model out\n");
        residual_tables(ctx, runs, held_model, 1);
        printf("\n#### Leave one GPU out, multi-GPU runs included\n");
        residual_tables(ctx, runs, held_gpu, 0);
    }
    free(held_gpu);
    free(held_model);
    free(pred);
    return rc;
}

int main(int argc, char **argv)
{
    int by_arch = argc > 1 && strcmp(argv[1], "--by-arch") == 0;
    if (by_arch) {
        argv++;
        argc--;
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        fprintf(stderr, "usage: bench_logo [--by-arch] RUNS.csv [OUT.csv]\n");
        return argc < 2 ? 2 : 0;
    }
    gsl_set_error_handler_off();
    ec_ctx *ctx;
    ec_runs *runs;
    if (load_runs(argv[1], &ctx, &runs) != 0)
        return 1;
    FILE *csv = NULL;
    if (argc > 2 && (csv = open_csv(argv[2])) == NULL)
        return 1;
    printf("# epochcast accuracy on %s (%zu runs)\n\n", argv[1], ec_runs_count(runs));
    printf("Generated by `bench_logo %s%s%s%s` (build/bench/bench_logo).\n", by_arch ? "--by-arch " : "", argv[1],
           argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
    int rc = by_arch ? report_by_arch(ctx, runs, csv) : report_by_group(ctx, runs, csv);
    if (csv != NULL)
        fclose(csv);
    ec_runs_free(runs);
    ec_ctx_free(ctx);
    return rc;
}
