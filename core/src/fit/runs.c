/*
 * runs.c: run records (docs/DESIGN.md section 4) -- measured runs in the config vocabulary plus
 * a measurement -- and the error statistics of predictions against them (section 6).
 *
 * Input: a run-record CSV (e.g. bench/data/calibration_dle.csv) streamed through the
 * CSV table reader (table.c), so a file of any size costs memory for one block of rows and
 * the ids seen (ec_runs_open/next); ec_runs_load keeps every run.  Every config column goes
 * through ec_config_set (config.c), so a run row accepts exactly what the CLI and Lua
 * accept.  Paths in cells (lengths=, profile=, prices=, a model's config.json) are taken from the run
 * file's folder and must stay inside it (a run file from elsewhere must not read the user's
 * files), and must be regular files.  Predicting the rows is not done here.
 */
#define _XOPEN_SOURCE 700 /* realpath, stat */

#include "sim/lengths.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A measured value outside this range, in its metric's unit, is refused. */
#define VALUE_MIN 1e-6
#define VALUE_MAX 1e15
/* Rows between two calls of the progress callback (a power of two). */
#define PROGRESS_ROWS 256

/* A runs object refers to its context for allocation: the context must outlive it. */
struct ec_runs {
    ec_ctx *ctx;
    ec_run *runs;
    size_t n;      /* rows loaded (on a failed load: rows touched) */
    size_t cap;    /* rows allocated */
};

typedef struct id_slot {
    uint64_t hash;
    size_t off;   /* of the id in ids */
    size_t line;  /* 0: an empty slot */
} id_slot;

/* A streaming reader: the table's current window of rows and the run of the last
 * ec_runs_next (its id and source in buffers of the reader). */
struct ec_runs_reader {
    ec_ctx *ctx;
    eci_table *t;
    int *role;
    size_t cols;
    int id_col, col_lengths, col_profile, col_model, col_prices;
    unsigned flags;
    char *dir, *real_dir;    /* the run file's folder as given, and resolved */
    size_t row;              /* next row of the window */
    size_t count;            /* runs handed out */
    int failed;
    ec_run run;
    char *id_buf, *src_buf, *split_buf;
    size_t id_cap, src_cap, split_cap;
    id_slot *seen;           /* the ids so far (duplicates are an error) */
    size_t seen_cap, seen_n;
    char *ids;
    size_t ids_used, ids_cap;
};

/* char arrays, not pointers: a pointer table would be relocated data (see config.c). */
static const char METRIC_NAMES[][16] = { "samples_per_s", "step_time_ms", "epoch_time_s", "tokens_per_s",
                                         "peak_bytes", "reserved_bytes", "allocated_bytes", "oom",
                                         "train_time_s", "first_step_s" };
static const char READING_NAMES[][12] = { "nvml", "reserved", "allocated" };
#define N_READINGS (sizeof READING_NAMES / sizeof READING_NAMES[0])
#define N_METRICS (sizeof METRIC_NAMES / sizeof METRIC_NAMES[0])

const char *ec_metric_name(ec_metric m)
{
    return (size_t)m < N_METRICS ? METRIC_NAMES[m] : "unknown";
}

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
struct ec_runs_reader;

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

/* ---- paths inside run records -------------------------------------------------------- */

/* Does the model= cell name a file or folder (a config.json) rather than a preset id? */
static int model_is_path(const char *v)
{
    size_t n = strlen(v);
    return strchr(v, '/') != NULL || (n >= 5 && strcmp(v + n - 5, ".json") == 0);
}

/* Resolve the path a cell gave key (the text now in field, EC_PATH_MAX bytes) against the
 * run file's folder: a relative path is taken from that folder, not from the current one;
 * the file must lie inside it (links resolved) unless EC_RUNS_ALLOW_PATHS; it must be a
 * regular file (or, for model=, a folder); field gets the resolved absolute path.  Messages
 * name the cell and the key and never show the file's contents. */
static int confine_path(ec_runs_reader *rd, const eci_table *t, size_t row, size_t col, const char *key,
                        char *field, int folder_ok)
{
    ec_ctx *ctx = rd->ctx;
    int allow = (rd->flags & EC_RUNS_ALLOW_PATHS) != 0;
    /* Without the flag: relative, and not climbing out with ".." (checked on the text first,
     * so nothing outside is even looked at). */
    int depth = 0, out = field[0] == '/';
    for (const char *p = field; !out && *p != '\0'; p += strcspn(p, "/"), p += *p == '/') {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            out = --depth < 0;
        else if (n > 0 && !(n == 1 && p[0] == '.'))
            depth++;
    }
    if (out && !allow)
        return cell_error(ctx, EC_EINVAL, t, row, col, "key '%s': '%s' is outside the run file's folder %s "
                          "(paths in a run record are relative to it and stay inside it; --allow-paths, "
                          "EC_RUNS_ALLOW_PATHS, allows others)", key, field, rd->dir);
    char joined[2 * EC_PATH_MAX + 2];
    if (field[0] == '/')
        snprintf(joined, sizeof joined, "%s", field);
    else
        snprintf(joined, sizeof joined, "%s/%s", rd->dir, field);
    struct stat st;
    if (stat(joined, &st) != 0)
        return cell_error(ctx, EC_EIO, t, row, col, "key '%s': cannot open '%s' (paths are taken from the run "
                          "file's folder %s): %s", key, field, rd->dir, strerror(errno));
    if (!S_ISREG(st.st_mode) && !(folder_ok && S_ISDIR(st.st_mode)))
        return cell_error(ctx, EC_EINVAL, t, row, col, "key '%s': '%s' is not a regular file (%s)", key, field,
                          S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO or pipe" : "a device");
    /* A folder given as model= is read as FOLDER/config.json (net.c): that file is what must
     * stay inside, since a link there leads out as well as the folder's own. */
    if (S_ISDIR(st.st_mode)) {
        size_t len = strlen(joined);
        if (len + sizeof "/config.json" > sizeof joined)
            return cell_error(ctx, EC_EINVAL, t, row, col, "key '%s': '%s' is too long a path", key, field);
        memcpy(joined + len, "/config.json", sizeof "/config.json");
        if (stat(joined, &st) != 0 || !S_ISREG(st.st_mode))
            return cell_error(ctx, EC_EIO, t, row, col, "key '%s': the folder '%s' holds no config.json that is a "
                              "regular file", key, field);
    }
    char *real = realpath(joined, NULL);
    if (real == NULL)
        return cell_error(ctx, EC_EIO, t, row, col, "key '%s': cannot resolve '%s': %s", key, field,
                          strerror(errno));
    /* Inside once links are resolved: a link in the folder may not lead out of it. */
    size_t n = strlen(rd->real_dir);
    int inside = strncmp(real, rd->real_dir, n) == 0 && (real[n] == '/' || (n == 1 && rd->real_dir[0] == '/'));
    int rc = EC_OK;
    if (!inside && !allow)
        rc = cell_error(ctx, EC_EINVAL, t, row, col, "key '%s': '%s' leads outside the run file's folder %s "
                        "through a link (--allow-paths, EC_RUNS_ALLOW_PATHS, allows it)", key, field, rd->dir);
    else if (strlen(real) >= EC_PATH_MAX)
        rc = cell_error(ctx, EC_EINVAL, t, row, col, "key '%s': '%s' resolves to a path longer than %d bytes",
                        key, field, EC_PATH_MAX - 1);
    else
        memcpy(field, real, strlen(real) + 1);
    free(real);
    return rc;
}

/* The keys of a run record that name files, resolved and confined. */
static int resolve_paths(ec_runs_reader *rd, const eci_table *t, size_t row, ec_run *run)
{
    ec_config *c = &run->config;
    int rc = EC_OK;
    if (rd->col_lengths >= 0 && c->lengths[0] != '\0' && eci_lengths_is_path(c->lengths))
        rc = confine_path(rd, t, row, (size_t)rd->col_lengths, "lengths", c->lengths, 0);
    if (rc == EC_OK && rd->col_profile >= 0 && c->profile[0] != '\0')
        rc = confine_path(rd, t, row, (size_t)rd->col_profile, "profile", c->profile, 0);
    if (rc == EC_OK && rd->col_model >= 0 && model_is_path(c->model))
        rc = confine_path(rd, t, row, (size_t)rd->col_model, "model", c->model, 1);
    if (rc == EC_OK && rd->col_prices >= 0 && c->prices[0] != '\0')
        rc = confine_path(rd, t, row, (size_t)rd->col_prices, "prices", c->prices, 0);
    return rc;
}

/* ---- one row ------------------------------------------------------------------------------ */

/* Copy text into a growing buffer of the reader; NULL on ENOMEM. */
static const char *keep_text(ec_ctx *ctx, char **buf, size_t *cap, const char *text)
{
    size_t n = strlen(text) + 1;
    if (n > *cap) {
        size_t ncap = n < 64 ? 64 : n;
        char *b = eci_realloc(ctx, *buf, *cap, ncap);
        if (b == NULL)
            return NULL;
        *buf = b;
        *cap = ncap;
    }
    memcpy(*buf, text, n);
    return *buf;
}

/* The checks of parse_row that need the whole row (columns come in any order): the memory
 * reading qualifies peak_bytes, the value fits its metric, an epoch time has its epoch's size. */
static int check_row(ec_ctx *ctx, const eci_table *t, size_t row, ec_run *run, const int *role, int reading,
                     size_t reading_col, size_t value_col)
{
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
    /* A measurement no run can give (1e-320 samples/s made the MAPE infinite). */
    if (run->metric != EC_METRIC_OOM && (run->value < VALUE_MIN || run->value > VALUE_MAX))
        return cell_error(ctx, EC_EINVAL, t, row, value_col,
                          "column 'value': '%s' is out of range [%g, %g] (in the metric's unit)",
                          eci_table_cell(t, row, (int)value_col), VALUE_MIN, VALUE_MAX);
    /* An epoch time can only be predicted from an epoch's size: without it the prediction
     * is 0 and the row would count as a -100% error. */
    if ((run->metric == EC_METRIC_EPOCH_TIME_S || run->metric == EC_METRIC_TRAIN_TIME_S) &&
        !(run->config.dataset_samples > 0)) {
        for (size_t c = 0; c < eci_table_cols(t); c++)
            if (role[c] == COL_METRIC)
                return cell_error(ctx, EC_EINVAL, t, row, c, "metric %s needs dataset_samples "
                                  "(the samples of one epoch) in this row",
                                  run->metric == EC_METRIC_EPOCH_TIME_S ? "epoch_time_s" : "train_time_s");
    }
    return EC_OK;
}

static int parse_row(ec_runs_reader *rd, const eci_table *t, size_t row, ec_run *run)
{
    ec_ctx *ctx = rd->ctx;
    size_t cols = eci_table_cols(t);
    const int *role = rd->role;
    int rc, reading = -1;
    size_t value_col = 0, reading_col = 0;

    memset(run, 0, sizeof *run);
    ec_config_init(&run->config);
    run->line = eci_table_line(t, row);
    run->source = "";
    run->split = "";
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
            if ((run->id = keep_text(ctx, &rd->id_buf, &rd->id_cap, cell)) == NULL)
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
            if ((run->source = keep_text(ctx, &rd->src_buf, &rd->src_cap, cell)) == NULL)
                return EC_ENOMEM;
            break;
        case COL_SPLIT:
            if ((run->split = keep_text(ctx, &rd->split_buf, &rd->split_cap, cell)) == NULL)
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
    rc = check_row(ctx, t, row, run, role, reading, reading_col, value_col);
    return rc != EC_OK ? rc : resolve_paths(rd, t, row, run);
}

/* ---- ids seen: an open-addressing set of the ids so far ----------------------------------- */

static uint64_t hash_text(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* Record id (of a row on line); EC_EINVAL naming both lines when it was seen before. */
static int note_id(ec_runs_reader *rd, const eci_table *t, const char *id, size_t line)
{
    ec_ctx *ctx = rd->ctx;
    if (2 * (rd->seen_n + 1) > rd->seen_cap) { /* keep the load under one half */
        size_t ncap = rd->seen_cap ? 2 * rd->seen_cap : 1024;
        id_slot *ns = eci_calloc(ctx, ncap, sizeof *ns);
        if (ns == NULL)
            return EC_ENOMEM;
        for (size_t i = 0; i < rd->seen_cap; i++) {
            if (rd->seen[i].line == 0)
                continue;
            size_t j = (size_t)rd->seen[i].hash & (ncap - 1);
            while (ns[j].line != 0)
                j = (j + 1) & (ncap - 1);
            ns[j] = rd->seen[i];
        }
        eci_free(ctx, rd->seen, rd->seen_cap * sizeof *rd->seen);
        rd->seen = ns;
        rd->seen_cap = ncap;
    }
    uint64_t h = hash_text(id);
    size_t j = (size_t)h & (rd->seen_cap - 1);
    for (; rd->seen[j].line != 0; j = (j + 1) & (rd->seen_cap - 1))
        if (rd->seen[j].hash == h && strcmp(rd->ids + rd->seen[j].off, id) == 0)
            return eci_error(ctx, EC_EINVAL, "%s:%zu:%d: duplicate id '%s' (first on line %zu)", eci_table_name(t),
                             line, rd->id_col + 1, id, rd->seen[j].line);
    size_t n = strlen(id) + 1;
    if (rd->ids_used + n > rd->ids_cap) {
        size_t ncap = rd->ids_cap ? 2 * rd->ids_cap : 4096;
        while (ncap < rd->ids_used + n)
            ncap *= 2;
        char *b = eci_realloc(ctx, rd->ids, rd->ids_cap, ncap);
        if (b == NULL)
            return EC_ENOMEM;
        rd->ids = b;
        rd->ids_cap = ncap;
    }
    memcpy(rd->ids + rd->ids_used, id, n);
    rd->seen[j] = (id_slot){h, rd->ids_used, line};
    rd->ids_used += n;
    rd->seen_n++;
    return EC_OK;
}

/* ---- the reader ----------------------------------------------------------------------------- */

void ec_runs_close(ec_runs_reader *rd)
{
    if (rd == NULL)
        return;
    ec_ctx *ctx = rd->ctx;
    eci_table_free(rd->t);
    eci_free(ctx, rd->role, rd->cols * sizeof *rd->role);
    eci_strfree(ctx, rd->dir);
    eci_strfree(ctx, rd->real_dir);
    eci_free(ctx, rd->id_buf, rd->id_cap);
    eci_free(ctx, rd->src_buf, rd->src_cap);
    eci_free(ctx, rd->split_buf, rd->split_cap);
    eci_free(ctx, rd->seen, rd->seen_cap * sizeof *rd->seen);
    eci_free(ctx, rd->ids, rd->ids_cap);
    eci_free(ctx, rd, sizeof *rd);
}

/* The folder of path ("." for a bare name) and its real path. */
static int run_folder(ec_ctx *ctx, const char *path, ec_runs_reader *rd)
{
    char dir[EC_PATH_MAX];
    if (eci_dirname(path, dir, sizeof dir) != 0)
        return eci_error(ctx, EC_EINVAL, "%s: path too long", path);
    char *real = realpath(dir, NULL);
    if (real == NULL)
        return eci_error(ctx, EC_EIO, "%s: cannot resolve its folder: %s", path, strerror(errno));
    rd->dir = eci_strdup(ctx, dir);
    rd->real_dir = eci_strdup(ctx, real);
    free(real);
    return rd->dir != NULL && rd->real_dir != NULL ? EC_OK : EC_ENOMEM;
}

int ec_runs_open(ec_ctx *ctx, const char *path, unsigned flags, ec_runs_reader **out)
{
    if (out != NULL)
        *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL || out == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_runs_open: NULL argument");
    ec_runs_reader *rd = eci_calloc(ctx, 1, sizeof *rd);
    if (rd == NULL)
        return EC_ENOMEM;
    rd->ctx = ctx;
    rd->flags = flags;
    int rc = eci_table_open(ctx, path, &rd->t);
    if (rc == EC_OK) {
        eci_input_note(ctx, path);
        rc = run_folder(ctx, path, rd);
    }
    if (rc == EC_OK && (rc = eci_table_require(ctx, rd->t, "id", &rd->id_col)) == EC_OK &&
        (rc = eci_table_require(ctx, rd->t, "metric", NULL)) == EC_OK)
        rc = eci_table_require(ctx, rd->t, "value", NULL);
    if (rc == EC_OK) {
        rd->cols = eci_table_cols(rd->t);
        if ((rd->role = eci_calloc(ctx, rd->cols, sizeof *rd->role)) == NULL)
            rc = EC_ENOMEM;
    }
    if (rc == EC_OK)
        rc = map_columns(ctx, rd->t, rd->role);
    if (rc != EC_OK) {
        ec_runs_close(rd);
        return rc;
    }
    rd->col_lengths = eci_table_col(rd->t, "lengths");
    rd->col_profile = eci_table_col(rd->t, "profile");
    rd->col_model = eci_table_col(rd->t, "model");
    rd->col_prices = eci_table_col(rd->t, "prices");
    *out = rd;
    return EC_OK;
}

int ec_runs_next(ec_runs_reader *rd, const ec_run **run)
{
    if (run != NULL)
        *run = NULL;
    if (rd == NULL || run == NULL)
        return rd != NULL ? eci_error(rd->ctx, EC_EMISUSE, "ec_runs_next: NULL argument") : EC_EMISUSE;
    ec_ctx *ctx = rd->ctx;
    int rc;
    if (rd->failed)
        return eci_error(ctx, EC_EMISUSE, "ec_runs_next: the reader failed before");
    if (rd->row >= eci_table_rows(rd->t)) {
        if ((rc = eci_table_next(rd->t)) != EC_OK) {
            rd->failed = 1;
            return rc;
        }
        rd->row = 0;
        if (eci_table_rows(rd->t) == 0) {
            if (rd->count > 0)
                return EC_OK;
            rd->failed = 1;
            return eci_error(ctx, EC_EPARSE, "%s: no runs: a header and no data rows", eci_table_name(rd->t));
        }
    }
    if ((rd->count & (PROGRESS_ROWS - 1)) == 0 &&
        (rc = eci_progress(ctx, "load runs", eci_table_read_frac(rd->t), 1)) != EC_OK) {
        rd->failed = 1;
        return rc;
    }
    if ((rc = parse_row(rd, rd->t, rd->row, &rd->run)) != EC_OK ||
        (rc = note_id(rd, rd->t, rd->run.id, rd->run.line)) != EC_OK) {
        rd->failed = 1;
        return rc;
    }
    rd->row++;
    rd->count++;
    *run = &rd->run;
    return EC_OK;
}

double ec_runs_read_frac(const ec_runs_reader *rd)
{
    return rd != NULL ? eci_table_read_frac(rd->t) : 0;
}

/* ---- every run at once ---------------------------------------------------------------------- */

int ec_runs_load_v2(ec_ctx *ctx, const char *path, unsigned flags, ec_runs **out)
{
    if (out != NULL)
        *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL || out == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_runs_load: NULL argument");
    ec_runs_reader *rd = NULL;
    int rc = ec_runs_open(ctx, path, flags, &rd);
    if (rc != EC_OK)
        return rc;
    ec_runs *runs = eci_calloc(ctx, 1, sizeof *runs);
    if (runs == NULL) {
        ec_runs_close(rd);
        return EC_ENOMEM;
    }
    runs->ctx = ctx;
    const ec_run *r;
    while ((rc = ec_runs_next(rd, &r)) == EC_OK && r != NULL) {
        if (runs->n == EC_RUNS_LOAD_MAX) {
            rc = eci_error(ctx, EC_EINVAL, "%s:%zu: more than %d runs to hold at once (validate streams a file "
                           "of any size; split it to calibrate)", path, r->line, EC_RUNS_LOAD_MAX);
            break;
        }
        if (runs->n == runs->cap) {
            size_t ncap = runs->cap ? 2 * runs->cap : 64;
            ec_run *nr = eci_realloc(ctx, runs->runs, runs->cap * sizeof *nr, ncap * sizeof *nr);
            if (nr == NULL) {
                rc = EC_ENOMEM;
                break;
            }
            runs->runs = nr;
            runs->cap = ncap;
        }
        ec_run *dst = &runs->runs[runs->n];
        *dst = *r;
        dst->id = dst->source = dst->split = NULL;
        runs->n++; /* counted now, so that a failure below frees what was copied */
        if ((dst->id = eci_strdup(ctx, r->id)) == NULL || (dst->source = eci_strdup(ctx, r->source)) == NULL ||
            (dst->split = eci_strdup(ctx, r->split)) == NULL) {
            rc = EC_ENOMEM;
            break;
        }
    }
    ec_runs_close(rd);
    if (rc != EC_OK) {
        ec_runs_free(runs);
        return rc;
    }
    *out = runs;
    return EC_OK;
}

int ec_runs_load(ec_ctx *ctx, const char *path, ec_runs **out)
{
    return ec_runs_load_v2(ctx, path, 0, out);
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
