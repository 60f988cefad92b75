/*
 * runs.c: run records (docs/DESIGN.md section 4) -- measured runs in the config vocabulary plus
 * a measurement -- and the error statistics of predictions against them (section 6).
 *
 * Input: a run-record CSV (e.g. bench/data/calibration_dle.csv) read through the CSV
 * table loader (table.c); every config column goes through ec_config_set (config.c), so a
 * run row accepts exactly what the CLI and Lua accept.  Predicting the rows is not done here.
 */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A runs object refers to its context for allocation: the context must outlive it. */
struct ec_runs {
    ec_ctx *ctx;
    ec_run *runs;
    size_t n;      /* rows loaded (on a failed load: rows touched) */
    size_t cap;    /* rows allocated */
};

/* char arrays, not pointers: a pointer table would be relocated data (see config.c). */
static const char METRIC_NAMES[][16] = { "samples_per_s", "step_time_ms", "epoch_time_s", "tokens_per_s",
                                         "peak_bytes", "reserved_bytes", "allocated_bytes", "oom",
                                         "train_time_s", "first_step_s" };
static const char READING_NAMES[][12] = { "nvml", "reserved", "allocated" };
#define N_READINGS (sizeof READING_NAMES / sizeof READING_NAMES[0])
#define N_METRICS (sizeof METRIC_NAMES / sizeof METRIC_NAMES[0])

/* Column roles besides config keys. */
enum { COL_CONFIG = 0, COL_ID, COL_METRIC, COL_VALUE, COL_SOURCE, COL_SPLIT, COL_READING, COL_NOTE };

static void free_runs(ec_ctx *ctx, ec_run *runs, size_t n, size_t cap)
{
    if (runs == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        if (runs[i].id != NULL)
            eci_strfree(ctx, (char *)(uintptr_t)runs[i].id);
        if (runs[i].source != NULL)
            eci_strfree(ctx, (char *)(uintptr_t)runs[i].source);
        if (runs[i].split != NULL)
            eci_strfree(ctx, (char *)(uintptr_t)runs[i].split);
    }
    eci_free(ctx, runs, cap * sizeof *runs);
}

/* Report an error at a cell: "file:line:col: what".  row is a data row, or (size_t)-1 for
 * the header.  The column is the field number (1-based): table.c keeps each cell's
 * character column but internal.h has no accessor for it yet, so numeric-cell errors from
 * eci_table_number count characters while these count fields. */
static int cell_error(ec_ctx *ctx, int code, const eci_table *t, size_t row, size_t col,
                      const char *fmt, ...) EC_PRINTF(6, 7);

static int cell_error(ec_ctx *ctx, int code, const eci_table *t, size_t row, size_t col,
                      const char *fmt, ...)
{
    char what[EC_ERRMSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return eci_error(ctx, code, "%s:%zu:%zu: %s", eci_table_name(t),
                     row == (size_t)-1 ? (size_t)1 : eci_table_line(t, row), col + 1, what);
}

/* Classify each column: a role, or a config key.  Unknown columns are an error;
 * duplicate header names were already rejected by the table loader. */
static int map_columns(ec_ctx *ctx, const eci_table *t, int *role)
{
    const char *names[64 + 4];
    size_t n_keys = ec_config_key_count(), n_names = 0, cols = eci_table_cols(t);

    for (size_t c = 0; c < cols; c++) {
        const char *h = eci_table_header(t, c);
        int found = 0;

        if (strcmp(h, "id") == 0)
            role[c] = COL_ID;
        else if (strcmp(h, "metric") == 0)
            role[c] = COL_METRIC;
        else if (strcmp(h, "value") == 0)
            role[c] = COL_VALUE;
        else if (strcmp(h, "source") == 0)
            role[c] = COL_SOURCE;
        else if (strcmp(h, "split") == 0)
            role[c] = COL_SPLIT;
        else if (strcmp(h, "memory_reading") == 0)
            role[c] = COL_READING;
        else if (strcmp(h, "note") == 0 || strncmp(h, "note_", 5) == 0)
            role[c] = COL_NOTE;
        else {
            role[c] = COL_CONFIG;
            for (size_t k = 0; k < n_keys && !found; k++)
                found = strcmp(ec_config_key_name(k), h) == 0;
            if (!found) {
                if (n_names == 0) {
                    for (size_t k = 0; k < n_keys && n_names < 64; k++)
                        names[n_names++] = ec_config_key_name(k);
                    names[n_names++] = "id";
                    names[n_names++] = "metric";
                    names[n_names++] = "value";
                    names[n_names++] = "source";
                }
                return cell_error(ctx, EC_ENOTFOUND, t, (size_t)-1, c,
                                  "unknown column '%s' (did you mean '%s'?)", h,
                                  eci_nearest(h, names, n_names));
            }
        }
    }
    return EC_OK;
}

static int parse_row(ec_ctx *ctx, const eci_table *t, size_t row, const int *role, ec_run *run)
{
    size_t cols = eci_table_cols(t);
    int rc, reading = -1;
    size_t value_col = 0, reading_col = 0;

    ec_config_init(&run->config);
    run->line = eci_table_line(t, row);
    for (size_t c = 0; c < cols; c++) {
        const char *cell = eci_table_cell(t, row, (int)c);

        switch (role[c]) {
        case COL_CONFIG:
            if (cell[0] == '\0')
                break; /* empty: the default */
            rc = ec_config_set(ctx, &run->config, eci_table_header(t, c), cell);
            if (rc != EC_OK) {
                char msg[EC_ERRMSG_MAX];
                eci_strlcpy(msg, ec_ctx_errmsg(ctx), sizeof msg);
                return cell_error(ctx, rc, t, row, c, "%s", msg);
            }
            break;
        case COL_ID:
            if (cell[0] == '\0')
                return cell_error(ctx, EC_EINVAL, t, row, c, "column 'id' is empty");
            run->id = eci_strdup(ctx, cell);
            if (run->id == NULL)
                return EC_ENOMEM;
            break;
        case COL_METRIC: {
            size_t m = 0;
            while (m < N_METRICS && strcmp(METRIC_NAMES[m], cell) != 0)
                m++;
            if (m == N_METRICS)
                return cell_error(ctx, EC_EINVAL, t, row, c,
                                  "column 'metric': '%s' is not one of samples_per_s, step_time_ms, "
                                  "epoch_time_s, tokens_per_s, peak_bytes, reserved_bytes, allocated_bytes, "
                                  "oom, train_time_s, first_step_s", cell);
            run->metric = (ec_metric)m;
            break;
        }
        case COL_VALUE:
            rc = eci_table_number(ctx, t, row, (int)c, -HUGE_VAL, HUGE_VAL, &run->value);
            if (rc != EC_OK)
                return rc;
            value_col = c;
            break;
        case COL_SOURCE:
            run->source = eci_strdup(ctx, cell);
            if (run->source == NULL)
                return EC_ENOMEM;
            break;
        case COL_SPLIT:
            run->split = eci_strdup(ctx, cell);
            if (run->split == NULL)
                return EC_ENOMEM;
            break;
        case COL_READING:
            if (cell[0] == '\0')
                break;
            for (reading = 0; reading < (int)N_READINGS && strcmp(READING_NAMES[reading], cell) != 0; reading++)
                ;
            if (reading == (int)N_READINGS)
                return cell_error(ctx, EC_EINVAL, t, row, c,
                                  "column 'memory_reading': '%s' is not one of nvml, reserved, allocated", cell);
            reading_col = c;
            break;
        case COL_NOTE:
            break;
        }
    }
    /* checks that need the whole row: columns come in any order */
    if (reading >= 0) {
        if (run->metric != EC_METRIC_PEAK_BYTES)
            return cell_error(ctx, EC_EINVAL, t, row, reading_col,
                              "column 'memory_reading' qualifies metric peak_bytes only");
        run->metric = (ec_metric)(EC_METRIC_PEAK_BYTES + reading);
    }
    if (run->metric == EC_METRIC_OOM ? !(run->value == 0 || run->value == 1) : !(run->value > 0))
        return cell_error(ctx, EC_EINVAL, t, row, value_col, "column 'value': '%s' is not %s",
                          eci_table_cell(t, row, (int)value_col),
                          run->metric == EC_METRIC_OOM ? "0 or 1 (metric oom)" : "a positive number");
    /* An epoch time can only be predicted from an epoch's size: without it the prediction
     * is 0 and the row would count as a -100% error. */
    if ((run->metric == EC_METRIC_EPOCH_TIME_S || run->metric == EC_METRIC_TRAIN_TIME_S) &&
        !(run->config.dataset_samples > 0)) {
        for (size_t c = 0; c < cols; c++)
            if (role[c] == COL_METRIC)
                return cell_error(ctx, EC_EINVAL, t, row, c, "metric %s needs dataset_samples "
                                  "(the samples of one epoch) in this row",
                                  run->metric == EC_METRIC_EPOCH_TIME_S ? "epoch_time_s" : "train_time_s");
    }
    if (run->source == NULL) {
        run->source = eci_strdup(ctx, "");
        if (run->source == NULL)
            return EC_ENOMEM;
    }
    if (run->split == NULL) {
        run->split = eci_strdup(ctx, "");
        if (run->split == NULL)
            return EC_ENOMEM;
    }
    return EC_OK;
}

static int cmp_run_id(const void *a, const void *b)
{
    const ec_run *ra = *(const ec_run *const *)a, *rb = *(const ec_run *const *)b;
    int c = strcmp(ra->id, rb->id);

    if (c != 0)
        return c;
    return (ra->line > rb->line) - (ra->line < rb->line);
}

/* Duplicate ids: sort pointers by (id, line) and compare neighbours; report the later line. */
static int check_unique_ids(ec_ctx *ctx, const eci_table *t, int id_col, ec_run *runs, size_t n)
{
    const ec_run **order;
    const ec_run *dup = NULL, *first = NULL;

    if (n < 2)
        return EC_OK;
    order = eci_malloc(ctx, n * sizeof *order);
    if (order == NULL)
        return EC_ENOMEM;
    for (size_t i = 0; i < n; i++)
        order[i] = &runs[i];
    qsort(order, n, sizeof *order, cmp_run_id);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(order[i - 1]->id, order[i]->id) == 0 &&
            (dup == NULL || order[i]->line < dup->line)) {
            first = order[i - 1];
            dup = order[i];
        }
    }
    eci_free(ctx, order, n * sizeof *order);
    if (dup != NULL)
        return eci_error(ctx, EC_EINVAL, "%s:%zu:%d: duplicate id '%s' (first on line %zu)",
                         eci_table_name(t), dup->line, id_col + 1, dup->id, first->line);
    return EC_OK;
}

int ec_runs_load(ec_ctx *ctx, const char *path, ec_runs **out)
{
    eci_table *t = NULL;
    ec_runs *runs = NULL;
    int *role = NULL;
    size_t rows, cols;
    int id_col, metric_col, value_col, rc;

    if (out != NULL)
        *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL || out == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_runs_load: NULL argument");

    rc = eci_table_load(ctx, path, &t);
    if (rc != EC_OK)
        return rc;
    if ((rc = eci_table_require(ctx, t, "id", &id_col)) != EC_OK ||
        (rc = eci_table_require(ctx, t, "metric", &metric_col)) != EC_OK ||
        (rc = eci_table_require(ctx, t, "value", &value_col)) != EC_OK)
        goto fail;
    rows = eci_table_rows(t);
    cols = eci_table_cols(t);

    role = eci_calloc(ctx, cols, sizeof *role);
    if (role == NULL) {
        rc = EC_ENOMEM;
        goto fail;
    }
    if ((rc = map_columns(ctx, t, role)) != EC_OK)
        goto fail;

    runs = eci_calloc(ctx, 1, sizeof *runs);
    if (runs == NULL) {
        rc = EC_ENOMEM;
        goto fail;
    }
    runs->ctx = ctx;
    if (rows > 0) {
        runs->runs = eci_calloc(ctx, rows, sizeof *runs->runs);
        if (runs->runs == NULL) {
            rc = EC_ENOMEM;
            goto fail;
        }
        runs->cap = rows;
    }
    for (size_t r = 0; r < rows; r++) {
        runs->n = r + 1; /* row r may hold partial allocations: free them on failure */
        if ((rc = parse_row(ctx, t, r, role, &runs->runs[r])) != EC_OK)
            goto fail;
    }
    if ((rc = check_unique_ids(ctx, t, id_col, runs->runs, runs->n)) != EC_OK)
        goto fail;

    eci_free(ctx, role, cols * sizeof *role);
    eci_table_free(t);
    *out = runs;
    return EC_OK;

fail:
    ec_runs_free(runs);
    if (role != NULL)
        eci_free(ctx, role, cols * sizeof *role);
    eci_table_free(t);
    return rc;
}

void ec_runs_free(ec_runs *runs)
{
    if (runs == NULL)
        return;
    free_runs(runs->ctx, runs->runs, runs->n, runs->cap);
    eci_free(runs->ctx, runs, sizeof *runs);
}

size_t ec_runs_count(const ec_runs *runs)
{
    return runs ? runs->n : 0;
}

const ec_run *ec_runs_get(const ec_runs *runs, size_t i)
{
    if (runs == NULL || i >= runs->n)
        return NULL;
    return &runs->runs[i];
}

double ec_result_metric(const ec_result *res, ec_metric metric)
{
    if (res == NULL)
        return NAN;
    switch (metric) {
    case EC_METRIC_SAMPLES_PER_S:
        return res->samples_per_s;
    case EC_METRIC_STEP_TIME_MS:
        return res->step_s * 1e3;
    case EC_METRIC_EPOCH_TIME_S:
        return res->epoch_s;
    case EC_METRIC_TOKENS_PER_S:
        return res->tokens_per_s;
    case EC_METRIC_PEAK_BYTES:
        return res->memory.nvml_bytes;
    case EC_METRIC_RESERVED_BYTES:
        return res->memory.reserved_bytes;
    case EC_METRIC_ALLOCATED_BYTES:
        return res->memory.allocated_bytes;
    case EC_METRIC_OOM:
        return res->memory.fits ? 0.0 : 1.0;
    case EC_METRIC_TRAIN_TIME_S: /* a trainer's train_runtime: the epochs and the compilation */
        return res->train_s;
    case EC_METRIC_FIRST_STEP_S:
        return res->first_step_s;
    }
    return NAN;
}

void ec_result_metric_interval(const ec_result *res, ec_metric metric, double *p10, double *p90)
{
    double lo = 0, hi = 0;
    if (res != NULL) {
        switch (metric) {
        case EC_METRIC_SAMPLES_PER_S: /* samples_per_s = k / step_s */
        case EC_METRIC_TOKENS_PER_S: {
            double rate = metric == EC_METRIC_TOKENS_PER_S ? res->tokens_per_s : res->samples_per_s;
            if (res->step_p10_s > 0 && res->step_p90_s > 0) {
                lo = rate * res->step_s / res->step_p90_s;
                hi = rate * res->step_s / res->step_p10_s;
            }
            break;
        }
        case EC_METRIC_STEP_TIME_MS:
            lo = res->step_p10_s * 1e3;
            hi = res->step_p90_s * 1e3;
            break;
        case EC_METRIC_PEAK_BYTES: /* a point prediction: no interval */
            break;
        case EC_METRIC_EPOCH_TIME_S:
            if (res->epoch_s > 0) {
                lo = res->epoch_p10_s;
                hi = res->epoch_p90_s;
            }
            break;
        case EC_METRIC_TRAIN_TIME_S: /* the epoch interval's spread, in proportion */
            if (res->epoch_s > 0 && res->train_s > 0) {
                lo = res->train_s * res->epoch_p10_s / res->epoch_s;
                hi = res->train_s * res->epoch_p90_s / res->epoch_s;
            }
            break;
        default: /* memory, oom, first step: no interval */
            break;
        }
    }
    if (p10 != NULL)
        *p10 = lo;
    if (p90 != NULL)
        *p90 = hi;
}

void ec_error_stats_compute(const double *predicted, const double *measured, size_t n,
                            ec_error_stats *out)
{
    double sum_abs = 0, sum = 0;
    size_t w10 = 0, w20 = 0;

    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (predicted == NULL || measured == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        double m = measured[i], p = predicted[i], e, a;

        /* measured <= 0 or non-finite, or a non-finite prediction: no error to count */
        if (!(m > 0) || !isfinite(m) || !isfinite(p))
            continue;
        e = (p - m) / m;
        a = fabs(e);
        out->n++;
        sum += e;
        sum_abs += a;
        if (a > out->max_abs_frac)
            out->max_abs_frac = a;
        w10 += a <= 0.10;
        w20 += a <= 0.20;
    }
    if (out->n > 0) {
        out->mape_frac = sum_abs / (double)out->n;
        out->bias_frac = sum / (double)out->n;
        out->within_10_frac = (double)w10 / (double)out->n;
        out->within_20_frac = (double)w20 / (double)out->n;
    }
}
