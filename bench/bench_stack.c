/*
 * bench_stack.c: accuracy on the ordinary PyTorch / Hugging Face stack (issue 19) from public
 * runs nobody fitted the model on: bench/data/stack_runs.csv (tools/data/make_stack_runs.py,
 * bench/data/stack/README.md), whose split column says which rows may be fitted.
 *
 *   bench_stack RUNS.csv [OUT.csv] [--profile P] [--also DLE.csv] [--write-profile P.csv]
 *
 * 1. fit: ec_calibrate's physical parameters (GEMM, CUDA-core and bandwidth efficiency scales,
 *    per architecture too; convolution and attention efficiencies; host dispatch time) on the
 *    time rows (samples_per_s, step_time_ms, epoch_time_s, train_time_s) of the fit split that
 *    the model can predict; with --also, together with the single-GPU runs of another
 *    run-record file (the DeepLearningExamples calibration runs), which anchor the GEMM and
 *    bandwidth scales of the architectures the stack's fit split lacks.  --write-profile
 *    writes the fitted parameters as a profile, with the held-out error sds; the other file's
 *    multi-GPU time rows are never fitted, only predicted in the leave-one-GPU-out folds, for
 *    the communication sds (ec_calibrate_cv), and a table says which architecture sets the
 *    unseen-architecture sds (each one's sample, ec_fit_report.arch_terms).  With --profile P
 *    the fit is skipped and P is used instead.
 * 2. held out: every predictable row of the holdout split, with those parameters: throughput
 *    (the time metrics) and peak memory (each reading: nvml, reserved, allocated) as MAPE by
 *    source, precision, GPU and model; runs that died of CUDA out-of-memory against `fits`;
 *    readings that are not a training step (no batch_per_gpu: the CUDA context alone, or the
 *    weights) against the context and weight terms.
 * 3. the same tables for the fit split (in sample), for reference.
 * Rows the model cannot predict (a model or GPU without a profile) are counted and named.
 * Prints a Markdown report; OUT.csv gets one row per predicted run.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "catalog/consts.h"
#include "epochcast.h"
#include "internal.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LEVELS 64

enum kind { K_TIME = 0, K_MEMORY, K_OOM, K_FIRST_STEP, K_NO_STEP, N_KINDS };

static enum kind kind_of(const ec_run *r)
{
    if (r->metric == EC_METRIC_OOM)
        return K_OOM;
    if (r->config.batch_per_gpu < 1)
        return K_NO_STEP;
    switch (r->metric) {
    case EC_METRIC_PEAK_BYTES:
    case EC_METRIC_RESERVED_BYTES:
    case EC_METRIC_ALLOCATED_BYTES:
        return K_MEMORY;
    case EC_METRIC_OOM:
        return K_OOM;
    case EC_METRIC_FIRST_STEP_S:
        return K_FIRST_STEP;
    default:
        return K_TIME;
    }
}

static const char *reading_name(ec_metric m)
{
    return m == EC_METRIC_RESERVED_BYTES ? "reserved" : m == EC_METRIC_ALLOCATED_BYTES ? "allocated" : "nvml";
}

/* A run that died of out-of-memory with its batch not stated (a model far larger than the GPU)
 * is predicted at batch 1: if that does not fit, no batch does. */
static const ec_config *config_of(const ec_run *r, ec_config *tmp)
{
    if (r->metric != EC_METRIC_OOM || r->config.batch_per_gpu >= 1)
        return &r->config;
    *tmp = r->config;
    tmp->batch_per_gpu = 1;
    return tmp;
}

/* "hf_sdpa_bert_a100: huggingface/..." -> "hf_sdpa_bert_a100" */
static void source_tag(const ec_run *r, char *buf, size_t n)
{
    const char *s = r->source != NULL ? r->source : "";
    size_t len = strcspn(s, ":");
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), s);
}

enum { F_SOURCE = 0, F_PRECISION, F_GPU, F_MODEL, F_METRIC, N_FACTORS };
static const char *const factor_names[N_FACTORS] = {"source", "precision", "GPU", "model", "metric"};

static void level_of(const ec_run *r, int f, char *buf, size_t n)
{
    switch (f) {
    case F_SOURCE:
        source_tag(r, buf, n);
        break;
    case F_PRECISION:
        ec_config_get(&r->config, "precision", buf, n);
        break;
    case F_GPU:
        snprintf(buf, n, "%s", r->config.gpu);
        break;
    case F_MODEL:
        snprintf(buf, n, "%.48s", r->config.model);
        break;
    default:
        if (kind_of(r) == K_MEMORY)
            snprintf(buf, n, "peak_bytes (%s)", reading_name(r->metric));
        else
            snprintf(buf, n, "%s", r->metric == EC_METRIC_SAMPLES_PER_S ? "samples_per_s"
                                   : r->metric == EC_METRIC_STEP_TIME_MS ? "step_time_ms"
                                   : r->metric == EC_METRIC_EPOCH_TIME_S ? "epoch_time_s"
                                   : r->metric == EC_METRIC_TRAIN_TIME_S ? "train_time_s" : "other");
        break;
    }
}

static void stats_row(const char *label, const double *p, const double *m, size_t n)
{
    ec_error_stats st;
    ec_error_stats_compute(p, m, n, &st);
    printf("| %-34s | %4zu | %6.1f | %5.0f%% | %5.0f%% | %+6.1f | %6.1f |\n", label, st.n, 100 * st.mape_frac,
           100 * st.within_10_frac, 100 * st.within_20_frac, 100 * st.bias_frac, 100 * st.max_abs_frac);
}

static void table_head(const char *what)
{
    printf("\n| %-34s |    n | MAPE %% | ±10%%  | ±20%%  | bias %% | max %% |\n", what);
    printf("|------------------------------------|------|--------|-------|-------|--------|--------|\n");
}

/* Errors of the rows of `split` and kind k, overall and by every factor. */
static void error_tables(const ec_runs *runs, const double *pred, const char *split, enum kind k, const char *title)
{
    size_t n = ec_runs_count(runs);
    double *p = calloc(n ? n : 1, sizeof *p), *m = calloc(n ? n : 1, sizeof *m);
    if (p == NULL || m == NULL)
        goto done;
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        const ec_run *r = ec_runs_get(runs, i);
        if (pred[i] > 0 && strcmp(r->split, split) == 0 && kind_of(r) == k) {
            p[c] = pred[i];
            m[c++] = r->value;
        }
    }
    printf("\n#### %s\n", title);
    if (c == 0) {
        printf("\n(no predictable rows)\n");
        goto done;
    }
    table_head("all");
    stats_row("all", p, m, c);
    for (int f = 0; f < N_FACTORS; f++) {
        char levels[MAX_LEVELS][64];
        size_t nl = 0;
        for (size_t i = 0; i < n; i++) {
            const ec_run *r = ec_runs_get(runs, i);
            if (!(pred[i] > 0 && strcmp(r->split, split) == 0 && kind_of(r) == k))
                continue;
            char lv[64];
            level_of(r, f, lv, sizeof lv);
            size_t j = 0;
            while (j < nl && strcmp(levels[j], lv) != 0)
                j++;
            if (j == nl && nl < MAX_LEVELS)
                snprintf(levels[nl++], sizeof levels[0], "%s", lv);
        }
        if (nl < 2)
            continue;
        table_head(factor_names[f]);
        for (size_t j = 0; j < nl; j++) {
            c = 0;
            for (size_t i = 0; i < n; i++) {
                const ec_run *r = ec_runs_get(runs, i);
                char lv[64];
                if (!(pred[i] > 0 && strcmp(r->split, split) == 0 && kind_of(r) == k))
                    continue;
                level_of(r, f, lv, sizeof lv);
                if (strcmp(lv, levels[j]) == 0) {
                    p[c] = pred[i];
                    m[c++] = r->value;
                }
            }
            stats_row(levels[j], p, m, c);
        }
    }
done:
    free(p);
    free(m);
}

/* Runs that died of out-of-memory (value 1) or ran (0), against the prediction's fits. */
static void oom_table(const ec_runs *runs, const double *pred, const int *ok, const char *split)
{
    size_t n = ec_runs_count(runs), agree = 0, total = 0, died = 0, died_caught = 0;
    printf("\n#### Out of memory (%s split)\n\n", split);
    printf("| run | GPU | measured | predicted | predicted peak / capacity |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const ec_run *r = ec_runs_get(runs, i);
        if (strcmp(r->split, split) != 0 || kind_of(r) != K_OOM)
            continue;
        if (!ok[i]) {
            printf("| %s | %s | %s | not predicted | |\n", r->id, r->config.gpu, r->value > 0 ? "OOM" : "ran");
            continue;
        }
        int pred_oom = pred[i] > 0.5;
        total++;
        agree += pred_oom == (r->value > 0.5);
        died += r->value > 0.5;
        died_caught += r->value > 0.5 && pred_oom;
        printf("| %s | %s | %s | %s | %s |\n", r->id, r->config.gpu, r->value > 0 ? "OOM" : "ran",
               pred_oom ? "does not fit" : "fits", "");
    }
    printf("\n%zu of %zu predictable runs agree; %zu of %zu measured out-of-memory runs predicted not to fit.\n",
           agree, total, died_caught, died);
}

/* Write the runs of a and b (b's with split "dle" when single-GPU, else "dle-multi", ids
 * prefixed "dle-") into one run-record CSV, every config key given explicitly. */
static int merge_runs(ec_ctx *ctx, const ec_runs *a, const ec_runs *b, const char *path)
{
    /* in ec_metric's order */
    static const char *const metric_names[] = {"samples_per_s", "step_time_ms", "epoch_time_s", "tokens_per_s",
                                               "peak_bytes", "reserved_bytes", "allocated_bytes", "oom",
                                               "train_time_s", "first_step_s"};
    _Static_assert(sizeof metric_names / sizeof metric_names[0] == EC_METRIC_FIRST_STEP_S + 1,
                   "ec_metric changed: name the new metric here");
    size_t nk = ec_config_key_count(), nc = nk + 5;
    const char **row = calloc(nc, sizeof *row);
    char (*cell)[EC_PATH_MAX + 8] = calloc(nc, sizeof *cell);
    ec_csv_writer *w;
    int rc = row != NULL && cell != NULL ? ec_csv_open(ctx, path, &w) : EC_ENOMEM;
    if (rc != EC_OK) {
        free(row);
        free(cell);
        return rc;
    }
    row[0] = "id";
    for (size_t k = 0; k < nk; k++)
        row[1 + k] = ec_config_key_name(k);
    row[nk + 1] = "metric";
    row[nk + 2] = "value";
    row[nk + 3] = "source";
    row[nk + 4] = "split";
    rc = ec_csv_row(w, row, nc);
    for (int f = 0; f < 2 && rc == EC_OK; f++) {
        const ec_runs *runs = f == 0 ? a : b;
        for (size_t i = 0; i < ec_runs_count(runs) && rc == EC_OK; i++) {
            const ec_run *r = ec_runs_get(runs, i);
            snprintf(cell[0], sizeof cell[0], "%s%s", f == 0 ? "" : "dle-", r->id);
            row[0] = cell[0];
            for (size_t k = 0; k < nk; k++) {
                cell[1 + k][0] = '\0';
                if (ec_config_is_set(&r->config, k))
                    ec_config_get(&r->config, ec_config_key_name(k), cell[1 + k], sizeof cell[1 + k]);
                row[1 + k] = cell[1 + k];
            }
            row[nk + 1] = metric_names[r->metric];
            snprintf(cell[nk + 2], sizeof cell[0], "%.17g", r->value);
            row[nk + 2] = cell[nk + 2];
            row[nk + 3] = r->source;
            row[nk + 4] = f == 0 ? r->split : r->config.num_gpus == 1 ? "dle" : "dle-multi";
            rc = ec_csv_row(w, row, nc);
        }
    }
    if (rc == EC_OK)
        rc = ec_csv_close(w);
    else
        ec_csv_abort(w);
    free(row);
    free(cell);
    return rc;
}

/* Which architecture sets the unseen-architecture sds: each one's sample (ec_fit_report.arch_terms)
 * and the class's sd without it.  No GPU-bound row at all: the GPU-bound sd is the pooled one,
 * each architecture's sample over both classes. */
static void arch_terms_table(const ec_fit_report *rep)
{
    int any_gpu = 0;
    for (size_t j = 0; j < rep->n_arch_terms; j++)
        any_gpu |= rep->arch_terms[j].runs[EC_CLASS_GPU] > 0;
    size_t all_rows[2] = {0, 0}, all_covered[2] = {0, 0};
    printf("\nWhich architecture sets the unseen-architecture sds: each architecture left out is one sample, its held-out "
           "rows of the class weighing as much as another's; rms = the root of their mean squared log error; bias = their "
           "mean log(predicted / measured) of the step time (a rate's sign turned: > 0, predicted slower); sd without = "
           "the class's sd (the 0.8 quantile of |log error| over z_0.9, times t_0.9,k / z_0.9) with that sample left "
           "out; covers = its rows inside p50 x exp(-+1.2816 x sd without), the architecture's fold of the 70-90%% "
           "check (the sd a prediction on that architecture takes).\n\n"
           "| architecture | GPU-bound rows | rms | bias | sd without | covers | host-bound rows | rms | bias | sd without "
           "| covers |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t j = 0; j < rep->n_arch_terms; j++) {
        const ec_fit_arch_term *t = &rep->arch_terms[j];
        printf("| %s", t->architecture);
        for (int h = 0; h < 2; h++) {
            int pooled = h == EC_CLASS_GPU && !any_gpu;
            size_t rows = pooled ? t->runs[0] + t->runs[1] : t->runs[h];
            all_rows[h] += rows;
            all_covered[h] += t->covered[h];
            if (rows == 0)
                printf(" | 0 | | | | ");
            else
                printf(" | %zu | %.3f | %+.3f | %.3f | %.0f%%", rows, sqrt(pooled ? t->msq_log_all : t->msq_log[h]),
                       pooled ? t->bias_log_all : t->bias_log[h], t->sd_without[h],
                       100.0 * (double)t->covered[h] / (double)rows);
        }
        printf(" |\n");
    }
    printf("| all: the sd | %zu | | | sd %.3f | %.0f%% | %zu | | | sd %.3f | %.0f%% |\n", all_rows[0], rep->arch_error_log_sd,
           all_rows[0] ? 100.0 * (double)all_covered[0] / (double)all_rows[0] : 0, all_rows[1],
           rep->arch_host_error_log_sd, all_rows[1] ? 100.0 * (double)all_covered[1] / (double)all_rows[1] : 0);
}

/* The profile written by ctx (whose models give the priors ec_profile_write checks it against)
 * into a temporary, then copied into place through a context that read nothing: ctx read
 * models/profile.csv, and a context never replaces a file it read (outfile.c), while replacing
 * it is the point.  (A bare context cannot write the profile itself: it has no priors.) */
static int write_profile_copy(ec_ctx *ctx, const ec_fit_report *rep, const char *path)
{
    char tmp[] = "/tmp/bench_stack_profile_XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) {
        perror("bench_stack: mkstemp");
        return 1;
    }
    close(fd);
    size_t len = 0;
    char *bytes = NULL;
    int rc = ec_profile_write(ctx, rep, tmp);
    FILE *f = rc == EC_OK ? fopen(tmp, "rb") : NULL;
    if (f != NULL && (bytes = malloc(1 << 20)) != NULL)
        len = fread(bytes, 1, 1 << 20, f);
    if (f != NULL)
        fclose(f);
    unlink(tmp);
    if (rc != EC_OK || bytes == NULL || len == 0 || len == 1 << 20) {
        free(bytes);
        return 1;
    }
    ec_ctx *wctx = NULL;
    ec_outfile *out = NULL;
    rc = ec_ctx_new(NULL, NULL, &wctx);
    if (rc == EC_OK)
        rc = ec_outfile_open(wctx, path, &out);
    if (rc == EC_OK && (rc = ec_outfile_write(out, bytes, len)) == EC_OK)
        rc = ec_outfile_commit(out);
    else
        ec_outfile_abort(out);
    if (rc != EC_OK)
        fprintf(stderr, "bench_stack: %s: %s\n", path, wctx != NULL ? ec_ctx_errmsg(wctx) : "out of memory");
    ec_ctx_free(wctx);
    free(bytes);
    return rc != EC_OK;
}

/* The rows of one run file and what main() learns of each. */
typedef struct rows {
    ec_runs *runs;
    size_t n;
    int *ok;                 /* predicted (or, without a step, a GPU with a profile) */
    double *pred;            /* the prediction of its metric */
    unsigned char *use;      /* fitted: a time row of the fit split or of --also */
    unsigned char *cv_use;   /* scored by the leave-one-GPU-out folds (also the dle-multi rows) */
    char (*why)[160];        /* why not predicted ("" when it is, or when its GPU has no profile) */
} rows;

#define USAGE "usage: bench_stack RUNS.csv [OUT.csv] [--profile P] [--also DLE.csv] [--write-profile P]\n"

typedef struct args {
    const char *runs_path, *out_path, *profile, *also, *write_profile;
} args;

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
            a->profile = argv[++i];
        else if (strcmp(argv[i], "--also") == 0 && i + 1 < argc)
            a->also = argv[++i];
        else if (strcmp(argv[i], "--write-profile") == 0 && i + 1 < argc)
            a->write_profile = argv[++i];
        else if (a->runs_path == NULL)
            a->runs_path = argv[i];
        else if (a->out_path == NULL)
            a->out_path = argv[i];
        else
            return -1;
    }
    return a->runs_path != NULL ? 0 : -1;
}

/* The runs of `path`, with those of `also` appended through the temporary run-record CSV `tmp`
 * (NULL: none).  The caller removes tmp at the end, not after reading it: the context keeps it as
 * an input by inode, and a later temporary (the profile) given its freed inode would be refused
 * as "an input of this run". */
static int load_rows(ec_ctx *ctx, const char *path, const char *also, char *tmp, rows *r)
{
    if (ec_runs_load(ctx, path, &r->runs) != EC_OK) {
        fprintf(stderr, "bench_stack: %s\n", ec_ctx_errmsg(ctx));
        return 1;
    }
    if (also != NULL) { /* the two files as one */
        ec_runs *other, *merged;
        int fd = mkstemp(tmp);
        if (fd < 0 || ec_runs_load(ctx, also, &other) != EC_OK || merge_runs(ctx, r->runs, other, tmp) != EC_OK ||
            ec_runs_load(ctx, tmp, &merged) != EC_OK) {
            fprintf(stderr, "bench_stack: --also %s: %s\n", also, ec_ctx_errmsg(ctx));
            return 1;
        }
        close(fd);
        ec_runs_free(other);
        ec_runs_free(r->runs);
        r->runs = merged;
    }
    size_t n = r->n = ec_runs_count(r->runs);
    r->ok = calloc(n ? n : 1, sizeof *r->ok);
    r->pred = calloc(n ? n : 1, sizeof *r->pred);
    r->use = calloc(n ? n : 1, 1);
    r->cv_use = calloc(n ? n : 1, 1);
    r->why = calloc(n ? n : 1, sizeof *r->why);
    return r->ok == NULL || r->pred == NULL || r->use == NULL || r->cv_use == NULL || r->why == NULL;
}

static void free_rows(rows *r)
{
    free(r->ok);
    free(r->pred);
    free(r->use);
    free(r->cv_use);
    free(r->why);
    ec_runs_free(r->runs);
}

/* Which rows the model can predict (with the priors: the parameters change no refusal), which it
 * fits and which the folds score. */
static void select_rows(ec_ctx *ctx, rows *rw)
{
    ec_ctx_set_fit(ctx, NULL);
    ec_config tmp;
    for (size_t i = 0; i < rw->n; i++) {
        const ec_run *r = ec_runs_get(rw->runs, i);
        enum kind k = kind_of(r);
        if (strcmp(r->split, "excluded") == 0)
            continue;
        if (strcmp(r->split, "dle-multi") == 0) { /* scored in the folds (the communication sd), not fitted */
            ec_result res;
            rw->cv_use[i] = k == K_TIME && ec_predict(ctx, &r->config, &res) == EC_OK;
            continue;
        }
        if (strcmp(r->split, "dle") == 0 && k != K_TIME)
            continue;
        if (k == K_NO_STEP) {
            rw->ok[i] = eci_hw_find(ctx, r->config.gpu) != NULL;
            continue;
        }
        ec_result res;
        if (ec_predict(ctx, config_of(r, &tmp), &res) == EC_OK) {
            rw->ok[i] = 1;
            rw->use[i] = (strcmp(r->split, "fit") == 0 || strcmp(r->split, "dle") == 0) && k == K_TIME;
            rw->cv_use[i] = rw->use[i];
        } else {
            snprintf(rw->why[i], sizeof rw->why[i], "%s", ec_ctx_errmsg(ctx));
        }
    }
}

/* The held-out spreads that widen intervals (leave-one-GPU-out, and leave-one-architecture-out
 * for an architecture the fit has not seen) into rep, the profile written to path, and what they
 * rest on printed. */
static int cross_validate_into(ec_ctx *ctx, const rows *rw, ec_fit_report *rep, const char *path)
{
    int cv = ec_calibrate_cv(ctx, rw->runs, rw->cv_use, rep);
    int cva = cv == EC_OK || cv == EC_EINVAL ? ec_calibrate_cv_arch(ctx, rw->runs, rw->use, rep) : cv;
    if (cva != EC_OK && cva != EC_EINVAL)
        cv = cva;
    if ((cv != EC_OK && cv != EC_EINVAL) || write_profile_copy(ctx, rep, path) != 0) {
        fprintf(stderr, "bench_stack: %s\n", ec_ctx_errmsg(ctx));
        return 1;
    }
    if (cv == EC_OK)
        printf("\nLeave-one-GPU-out over the fitted rows: MAPE %.1f%% on %zu held-out rows; log error sd "
               "%.3f for a p10-p90 (error_log_sd of %s).\n", 100 * rep->cv_mape_frac, rep->cv_runs, rep->error_log_sd,
               path);
    if (cva == EC_OK)
        printf("Leave-one-architecture-out: MAPE %.1f%% on %zu held-out rows of %zu architectures; "
               "log error sd %.3f for a p10-p90 (error_log_sd_unseen_arch).\n",
               100 * rep->arch_cv_mape_frac, rep->arch_cv_runs, rep->arch_cv_archs, rep->arch_error_log_sd);
    if (cva == EC_OK && rep->arch_host_cv_runs > 0)
        printf("Of those, predicted host-bound (the share of the step without host waits below constants.csv "
               "host_bound_util_frac): "
               "%zu rows of %zu architectures, log error sd %.3f (error_log_sd_unseen_arch_host; the sd "
               "above is the other rows').\n", rep->arch_host_cv_runs, rep->arch_host_cv_archs,
               rep->arch_host_error_log_sd);
    for (int p = 0; cv == EC_OK && p < EC_COMM_PATHS; p++) /* the multi-GPU rows of --also, never fitted */
        printf("Multi-GPU rows, gradients %s, left out with their GPU: %zu rows of %zu GPUs; communication "
               "sd %.3f (error_log_sd_comm_%s).\n", ec_comm_path_words(p), rep->comm_cv_runs[p],
               rep->comm_cv_gpus[p], rep->comm_error_log_sd[p], ec_comm_path_name(p));
    if (cva == EC_OK) /* which architecture sets the unseen-architecture sds above */
        arch_terms_table(rep);
    return 0;
}

/* The parameters in use: the profile's, or a fit on the rows it may fit (with its held-out
 * spreads when a profile is to be written); printed. */
static int set_parameters(ec_ctx *ctx, const args *a, const rows *rw)
{
    ec_fit_report rep;
    memset(&rep, 0, sizeof rep);
    if (a->profile != NULL) {
        if (ec_profile_read(ctx, a->profile, &rep) != EC_OK || ec_ctx_set_fit(ctx, &rep) != EC_OK) {
            fprintf(stderr, "bench_stack: %s\n", ec_ctx_errmsg(ctx));
            return 1;
        }
        printf("\n## Parameters: the profile %s (no fit)\n", a->profile);
        return 0;
    }
    if (ec_calibrate(ctx, rw->runs, rw->use, &rep) != EC_OK || ec_ctx_set_fit(ctx, &rep) != EC_OK) {
        fprintf(stderr, "bench_stack: fit: %s\n", ec_ctx_errmsg(ctx));
        return 1;
    }
    size_t n_dle = 0;
    for (size_t i = 0; i < rw->n; i++)
        n_dle += rw->use[i] && strcmp(ec_runs_get(rw->runs, i)->split, "dle") == 0;
    printf("\n## Fit on the fit split%s\n\n%zu time rows (%zu of the stack's fit split, %zu single-GPU runs of %s), "
           "%zu iterations; MAPE %.1f%% with the priors, %.1f%% fitted (in sample).\n\n"
           "| parameter | architecture | value | std. error |\n|---|---|---|---|\n",
           a->also ? " and the calibration runs" : "", rep.n_runs, rep.n_runs - n_dle, n_dle, a->also ? a->also : "-",
           rep.iterations, 100 * rep.mape_before_frac, 100 * rep.mape_after_frac);
    for (size_t j = 0; j < rep.n_params; j++)
        printf("| %s | %s | %.4g | %.2g |\n", rep.names[j], rep.architectures[j][0] ? rep.architectures[j] : "(all)",
               rep.values[j], rep.stderrs[j]);
    return a->write_profile != NULL ? cross_validate_into(ctx, rw, &rep, a->write_profile) : 0;
}

/* Every predictable row's prediction into rw->pred (a row the parameters in use refuse is dropped),
 * and per row into out_path when given. */
static void predict_rows(ec_ctx *ctx, rows *rw, const char *out_path)
{
    FILE *csv = out_path != NULL ? fopen(out_path, "w") : NULL;
    if (csv != NULL)
        fprintf(csv, "id,split,metric,gpu,model,predicted,measured,error_pct\n");
    double context = eci_const(ctx, EC_C_cuda_context_bytes);
    ec_config tmp;
    for (size_t i = 0; i < rw->n; i++) {
        const ec_run *r = ec_runs_get(rw->runs, i);
        if (!rw->ok[i])
            continue;
        if (kind_of(r) == K_NO_STEP) { /* the CUDA context alone, or with the weights loaded */
            rw->pred[i] = context;
            if (r->config.model[0] != '\0') {
                ec_model_summary sum;
                if (ec_model_summary_get(ctx, &r->config, &sum, NULL, 0) == EC_OK)
                    rw->pred[i] += sum.weights_bytes;
                else
                    rw->ok[i] = 0;
            }
        } else {
            ec_result res;
            if (ec_predict(ctx, config_of(r, &tmp), &res) != EC_OK) {
                rw->ok[i] = 0;
                continue;
            }
            rw->pred[i] = ec_result_metric(&res, r->metric);
        }
        if (csv != NULL) {
            char level[64];
            level_of(r, F_METRIC, level, sizeof level);
            fprintf(csv, "%s,%s,%s,%s,%s,%.6g,%.6g,%.2f\n", r->id, r->split, level, r->config.gpu, r->config.model,
                    rw->pred[i], r->value, r->value > 0 ? 100 * (rw->pred[i] - r->value) / r->value : 0);
        }
    }
    if (csv != NULL)
        fclose(csv);
}

/* Whether row i is one "Rows not predicted" lists (fit and holdout splits). */
static int unpredicted(const rows *rw, size_t i)
{
    const ec_run *r = ec_runs_get(rw->runs, i);
    return !rw->ok[i] && strcmp(r->split, "excluded") != 0 && strcmp(r->split, "dle-multi") != 0;
}

/* The rows not predicted: one line per reason, with its count and first run. */
static void print_unpredicted(const rows *rw)
{
    printf("\n## Rows not predicted (fit and holdout splits)\n\n");
    size_t skipped = 0;
    for (size_t i = 0; i < rw->n; i++) {
        if (!unpredicted(rw, i))
            continue;
        const ec_run *r = ec_runs_get(rw->runs, i);
        const char *reason = rw->why[i][0] ? rw->why[i] : "GPU without a profile";
        size_t first = 0, count = 0;
        for (size_t j = 0; j < rw->n; j++) {
            if (!unpredicted(rw, j) || strcmp(rw->why[j][0] ? rw->why[j] : "GPU without a profile", reason) != 0)
                continue;
            if (count++ == 0)
                first = j;
        }
        if (first == i)
            printf("- %zu rows (first: %s, %s split): %s\n", count, r->id, r->split, reason);
        skipped++;
    }
    if (skipped == 0)
        printf("(none)\n");
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    args a;
    if (parse_args(argc, argv, &a) != 0) {
        fprintf(stderr, USAGE);
        return 2;
    }
    ec_ctx *ctx;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, NULL) != EC_OK) {
        fprintf(stderr, "bench_stack: %s\n", ctx ? ec_ctx_errmsg(ctx) : "out of memory");
        return 1;
    }
    char merged_tmp[] = "/tmp/bench_stack_XXXXXX"; /* the merged --also file (load_rows) */
    rows rw = {0};
    if (load_rows(ctx, a.runs_path, a.also, merged_tmp, &rw) != 0) {
        ec_ctx_free(ctx);
        return 1;
    }
    select_rows(ctx, &rw);

    printf("# epochcast on the ordinary PyTorch / Hugging Face stack\n\n");
    printf("Generated by `bench_stack");
    for (int i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf("` (build/bench/bench_stack) from %zu public run records\n"
           "(bench/data/stack/README.md); the split column of the file decides what may be fitted.\n", rw.n);
    if (set_parameters(ctx, &a, &rw) != 0)
        return 1;
    predict_rows(ctx, &rw, a.out_path);

    const char *splits[] = {"holdout", "fit"};
    for (int s = 0; s < 2; s++) {
        printf("\n## %s split%s\n", splits[s], s == 0 ? " (held out: never fitted)" : " (in sample)");
        error_tables(rw.runs, rw.pred, splits[s], K_TIME, "Throughput (samples/s, step, epoch and run times)");
        error_tables(rw.runs, rw.pred, splits[s], K_MEMORY, "Peak memory (each row against the reading it reports)");
        oom_table(rw.runs, rw.pred, rw.ok, splits[s]);
        error_tables(rw.runs, rw.pred, splits[s], K_FIRST_STEP, "First step (torch.compile's compilation included)");
        error_tables(rw.runs, rw.pred, splits[s], K_NO_STEP, "Readings without a training step (CUDA context; weights)");
    }
    print_unpredicted(&rw);
    free_rows(&rw);
    ec_ctx_free(ctx);
    if (a.also != NULL)
        remove(merged_tmp);
    return 0;
}
