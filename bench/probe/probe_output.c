/*
 * probe_output.c: writes what epochcast-probe measured (probe_output.h) as a hardware-profile
 * row in the schema of models/gpus.csv, a GEMM-efficiency curve and the raw measurements.
 * The row starts from a template row of models/gpus.csv (read through the library's libcsv
 * table reader): the same GPU when its name resolves, else the row with the nearest compute
 * capability, whose peaks are then replaced by the measured best rates.  Every file goes
 * through the library's atomic CSV writer.
 */
#include "probe_output.h"

#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELL_MAX 512
#define MAX_COLS 64

static const char *const precisions[] = {"fp32", "tf32", "fp16", "bf16"};
#define N_PRECISIONS 4

/* Best measured rate of a precision over the large shapes (0 when none). */
static double best_large(const ecp_result *r, const char *precision)
{
    double best = 0;
    for (size_t i = 0; i < r->n_gemm; i++) {
        const ecp_gemm_point *p = &r->gemm[i];
        if (strcmp(p->precision, precision) == 0 && (double)p->m * p->n * p->k >= ECP_LARGE_GEMM_MNK &&
            p->flop_per_s > best)
            best = p->flop_per_s;
    }
    return best;
}

/* The template row: the GPU itself, else the nearest compute capability. */
static size_t template_row(ec_ctx *ctx, const eci_table *t, const ecp_result *r, int *same_gpu)
{
    int c_id = eci_table_col(t, "id"), c_cc = eci_table_col(t, "compute_capability");
    size_t index;
    *same_gpu = 0;
    if (ec_gpu_find(ctx, r->name, &index) == EC_OK) {
        ec_gpu_info info;
        ec_gpu_get(ctx, index, &info);
        for (size_t row = 0; row < eci_table_rows(t); row++)
            if (strcmp(eci_table_cell(t, row, c_id), info.id) == 0) {
                *same_gpu = 1;
                return row;
            }
    }
    size_t best = 0;
    double best_d = INFINITY;
    for (size_t row = 0; row < eci_table_rows(t); row++) {
        double cc;
        if (eci_parse_double(eci_table_cell(t, row, c_cc), &cc) != 0)
            continue;
        double d = fabs(cc - r->compute_capability);
        if (d < best_d) {
            best_d = d;
            best = row;
        }
    }
    return best;
}

typedef struct row_buf {
    const eci_table *t;
    size_t ncols;
    char cells[MAX_COLS][CELL_MAX];
} row_buf;

static char *cell(row_buf *b, const char *column)
{
    int c = eci_table_col(b->t, column);
    return c >= 0 && (size_t)c < b->ncols ? b->cells[c] : NULL;
}

static void set_num(row_buf *b, const char *column, double v)
{
    char *p = cell(b, column);
    if (p != NULL)
        snprintf(p, CELL_MAX, "%.6g", v);
}

static void set_text(row_buf *b, const char *column, const char *text)
{
    char *p = cell(b, column);
    if (p != NULL)
        snprintf(p, CELL_MAX, "%s", text);
}

static double get_num(row_buf *b, const char *column)
{
    double v = 0;
    const char *p = cell(b, column);
    return p != NULL && eci_parse_double(p, &v) == 0 ? v : 0;
}

/* Lower-case id from a device name: "NVIDIA GeForce RTX 4090" -> "nvidia-geforce-rtx-4090". */
static void slug(const char *name, char *out, size_t n)
{
    size_t j = 0;
    for (const char *p = name; *p != '\0' && j + 1 < n; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            out[j++] = c;
        else if (j > 0 && out[j - 1] != '-')
            out[j++] = '-';
    }
    while (j > 0 && out[j - 1] == '-')
        j--;
    out[j] = '\0';
}

static void fill_row(row_buf *b, const ecp_result *r, int same_gpu)
{
    char id[CELL_MAX], text[CELL_MAX];
    char *tid = cell(b, "id");
    char template_id[64]; /* ids are short; a longer one is cut */
    snprintf(template_id, sizeof template_id, "%s", tid != NULL ? tid : "?");
    if (same_gpu)
        snprintf(id, sizeof id, "%s-probed", template_id);
    else {
        char s[64];
        slug(r->name, s, sizeof s);
        snprintf(id, sizeof id, "%s-probed", s);
    }
    set_text(b, "id", id);
    snprintf(text, sizeof text, "%.256s (epochcast-probe)", r->name); /* a name no other row has */
    set_text(b, "name", text);
    set_text(b, "aliases", "");
    set_num(b, "compute_capability", r->compute_capability);
    set_num(b, "sm_count", r->sm_count);
    for (int p = 0; p < N_PRECISIONS; p++) {
        double best = best_large(r, precisions[p]);
        if (best <= 0)
            continue; /* precision not run: keep the template's efficiency */
        char peak_col[64], eff_col[64];
        snprintf(peak_col, sizeof peak_col, "peak_%s_flop_per_s", precisions[p]);
        snprintf(eff_col, sizeof eff_col, "gemm_eff_%s_frac", precisions[p]);
        double peak = get_num(b, peak_col);
        if (!same_gpu || peak <= 0) { /* no published peak: the measured best stands for it */
            set_num(b, peak_col, best);
            peak = best;
        }
        set_num(b, eff_col, best / peak);
    }
    set_num(b, "memory_bytes", r->memory_bytes);
    set_num(b, "l2_bytes", r->l2_bytes);
    double stream = r->elementwise_bytes_per_s > r->d2d_copy_bytes_per_s ? r->elementwise_bytes_per_s
                                                                          : r->d2d_copy_bytes_per_s;
    double spec = get_num(b, "memory_bandwidth_bytes_per_s");
    if (!same_gpu || spec <= 0) {
        set_num(b, "memory_bandwidth_bytes_per_s", stream);
        spec = stream;
    }
    if (stream > 0)
        set_num(b, "memory_eff_frac", stream / spec);
    if (r->h2d_pinned_bytes_per_s > 0)
        set_num(b, "h2d_pinned_bytes_per_s", r->h2d_pinned_bytes_per_s);
    if (r->h2d_pageable_bytes_per_s > 0)
        set_num(b, "h2d_pageable_bytes_per_s", r->h2d_pageable_bytes_per_s);
    if (r->kernel_floor_s > 0)
        set_num(b, "kernel_floor_s", r->kernel_floor_s);
    if (r->n_gpus > 1)
        set_num(b, "p2p", r->p2p_bytes_per_s > 0 ? 1 : 0);
    set_num(b, "measured", 1);
    snprintf(text, sizeof text,
             "epochcast-probe: measured GEMM efficiencies, streaming bandwidth, H2D, kernel floor, memory; "
             "other columns from the %s row '%s'%s",
             same_gpu ? "published" : "nearest-compute-capability", template_id,
             same_gpu ? "" : " (peaks = measured best)");
    set_text(b, "source", text);
}

static int write_rows(ec_ctx *ctx, const char *path, const char *const *header, size_t ncols,
                      const char *const *row)
{
    ec_csv_writer *w;
    int rc = ec_csv_open(ctx, path, &w);
    if (rc != EC_OK)
        return rc;
    if ((rc = ec_csv_row(w, header, ncols)) == EC_OK)
        rc = ec_csv_row(w, row, ncols);
    if (rc != EC_OK) {
        ec_csv_abort(w);
        return rc;
    }
    return ec_csv_close(w);
}

static int write_profile(ec_ctx *ctx, const ecp_result *r, const char *gpus_csv, const char *path)
{
    eci_table *t;
    int rc = eci_table_load(ctx, gpus_csv, &t);
    if (rc != EC_OK)
        return rc;
    row_buf *b = calloc(1, sizeof *b); /* 32 KiB of cells */
    if (b == NULL || eci_table_rows(t) == 0) {
        eci_table_free(t);
        free(b);
        return b == NULL ? EC_ENOMEM : EC_EPARSE;
    }
    b->t = t;
    b->ncols = eci_table_cols(t) < MAX_COLS ? eci_table_cols(t) : MAX_COLS;
    int same_gpu;
    size_t row = template_row(ctx, t, r, &same_gpu);
    const char *header[MAX_COLS], *cells[MAX_COLS];
    for (size_t c = 0; c < b->ncols; c++) {
        snprintf(b->cells[c], CELL_MAX, "%s", eci_table_cell(t, row, (int)c));
        header[c] = eci_table_header(t, c);
        cells[c] = b->cells[c];
    }
    fill_row(b, r, same_gpu);
    rc = write_rows(ctx, path, header, b->ncols, cells);
    eci_table_free(t);
    free(b);
    return rc;
}

static int write_curve(ec_ctx *ctx, const ecp_result *r, const char *path)
{
    ec_csv_writer *w;
    int rc = ec_csv_open(ctx, path, &w);
    if (rc != EC_OK)
        return rc;
    const char *header[] = {"m", "n", "k", "precision", "flop_per_s", "efficiency_frac"};
    rc = ec_csv_row(w, header, 6);
    for (size_t i = 0; rc == EC_OK && i < r->n_gemm; i++) {
        const ecp_gemm_point *p = &r->gemm[i];
        double best = best_large(r, p->precision);
        char m[16], n[16], k[16], f[32], e[32];
        snprintf(m, sizeof m, "%d", p->m);
        snprintf(n, sizeof n, "%d", p->n);
        snprintf(k, sizeof k, "%d", p->k);
        snprintf(f, sizeof f, "%.6g", p->flop_per_s);
        /* relative to the large-GEMM rate: the shape fall-off compute.c models */
        snprintf(e, sizeof e, "%.4g", best > 0 ? p->flop_per_s / best : 0.0);
        const char *row[] = {m, n, k, p->precision, f, e};
        rc = ec_csv_row(w, row, 6);
    }
    if (rc != EC_OK) {
        ec_csv_abort(w);
        return rc;
    }
    return ec_csv_close(w);
}

static int write_measurements(ec_ctx *ctx, const ecp_result *r, const char *path)
{
    const struct {
        const char *metric;
        double value;
        const char *unit;
    } m[] = {
        {"h2d_pinned", r->h2d_pinned_bytes_per_s, "bytes_per_s"},
        {"h2d_pageable", r->h2d_pageable_bytes_per_s, "bytes_per_s"},
        {"d2h_pinned", r->d2h_pinned_bytes_per_s, "bytes_per_s"},
        {"d2h_pageable", r->d2h_pageable_bytes_per_s, "bytes_per_s"},
        {"d2d_copy", r->d2d_copy_bytes_per_s, "bytes_per_s"},
        {"elementwise", r->elementwise_bytes_per_s, "bytes_per_s"},
        {"launch_host", r->launch_host_s, "s"},
        {"kernel_floor", r->kernel_floor_s, "s"},
        {"p2p", r->p2p_bytes_per_s, "bytes_per_s"},
        {"memory", r->memory_bytes, "bytes"},
        {"gpus", (double)r->n_gpus, "count"},
    };
    ec_csv_writer *w;
    int rc = ec_csv_open(ctx, path, &w);
    if (rc != EC_OK)
        return rc;
    const char *header[] = {"metric", "value", "unit"};
    rc = ec_csv_row(w, header, 3);
    for (size_t i = 0; rc == EC_OK && i < sizeof m / sizeof m[0]; i++) {
        char v[32];
        snprintf(v, sizeof v, "%.6g", m[i].value);
        const char *row[] = {m[i].metric, v, m[i].unit};
        rc = ec_csv_row(w, row, 3);
    }
    if (rc != EC_OK) {
        ec_csv_abort(w);
        return rc;
    }
    return ec_csv_close(w);
}

int ecp_write(ec_ctx *ctx, const ecp_result *r, const char *gpus_csv, const char *dir)
{
    char path[EC_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/gpu_profile.csv", dir);
    int rc = write_profile(ctx, r, gpus_csv, path);
    if (rc == EC_OK) {
        snprintf(path, sizeof path, "%s/gemm_curve.csv", dir);
        rc = write_curve(ctx, r, path);
    }
    if (rc == EC_OK) {
        snprintf(path, sizeof path, "%s/probe_measurements.csv", dir);
        rc = write_measurements(ctx, r, path);
    }
    return rc;
}
