/*
 * l2.c: models/l2.csv, each GPU's achieved L2 read bandwidth and the share of its L2 a data set
 * can occupy and still be read at that rate (the largest footprint on the plateau of
 * te42kyfo/gpu-benches' gpu-l2-cache, which reads a footprint over and over: the usable
 * capacity), measured (1) or a documented prior from a measured GPU of the same die family (0).
 * A memory-bound kernel reading what the kernel just before it wrote reads it from L2 when that
 * fits (model/compute.c).  A GPU without a row has no L2 effect.  Loaded after gpus.csv: a row
 * must name a gpus.csv id, once, with a source, a bandwidth and a usable size no larger than its
 * l2_bytes; a bad row is refused naming file, line and column.  (An L2 no faster than the DRAM
 * is not refused: pricing never lets an L2 hit slow a kernel down.)
 */
#include "catalog/catalog.h"

#include <string.h>

/* 100 TB/s: no L2 of a GPU in gpus.csv reads faster. */
#define L2_BW_MAX 1e14

typedef struct l2_row {
    const char *gpu;
    double bytes_per_s, usable_bytes;
    size_t line;
} l2_row;

static int parse_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, void *out)
{
    l2_row *row = out;
    char echo[48];
    *row = (l2_row){.gpu = eci_table_cell(t, r, col[0]), .line = eci_table_line(t, r)};
    size_t g = eci_gpu_id_index(ctx, row->gpu);
    if (g == ctx->n_gpus)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: gpu '%s' is not a gpus.csv id", path, row->line,
                         eci_echo(echo, sizeof echo, row->gpu));
    if (eci_table_cell(t, r, col[4])[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: '%s': empty source (every L2 figure names its public source "
                         "or the measured row its prior scales)", path, row->line, ctx->gpus[g].id);
    long measured;
    int rc = eci_table_number(ctx, t, r, col[1], 1, L2_BW_MAX, &row->bytes_per_s);
    if (rc == EC_OK)
        rc = eci_table_number(ctx, t, r, col[2], 1, ctx->gpus[g].l2_bytes, &row->usable_bytes);
    if (rc == EC_OK)
        rc = eci_table_int(ctx, t, r, col[3], 0, 1, &measured);
    return rc;
}

static int link_gpus(ec_ctx *ctx, const char *path, const void *out, size_t n)
{
    const l2_row *rows = out;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (eci_name_eq(rows[i].gpu, rows[j].gpu))
                return eci_error(ctx, EC_EPARSE, "%s:%zu: a second row for '%s' (first on line %zu)", path,
                                 rows[i].line, rows[i].gpu, rows[j].line);
    for (size_t g = 0; g < ctx->n_gpus; g++)
        for (size_t i = 0; i < n; i++)
            if (eci_name_eq(rows[i].gpu, ctx->gpus[g].id)) {
                ctx->gpus[g].l2_read_bytes_per_s = rows[i].bytes_per_s;
                ctx->gpus[g].l2_usable_bytes = rows[i].usable_bytes;
            }
    return EC_OK;
}

static void reset_gpu(eci_gpu *g)
{
    g->l2_read_bytes_per_s = 0;
    g->l2_usable_bytes = 0;
}

int eci_l2_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[5] = {"gpu", "l2_read_bytes_per_s", "l2_usable_bytes", "measured", "source"};
    static const eci_gpu_table SPEC = {COLUMNS, 5, sizeof(l2_row), parse_row, link_gpus, reset_gpu};
    return eci_gpu_table_load(ctx, path, &SPEC);
}
