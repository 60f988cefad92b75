/*
 * gpu_table.c: the skeleton the per-GPU tables of models/ share (attention.csv, membw.csv,
 * gemm.csv, gemm_shapes.csv), loaded after gpus.csv: read the file (base/table.c), require its
 * columns, refuse a file without data rows, parse each row with the table's own callback into
 * an array of rows, hand the rows to its link callback (which sets the GPUs' fields), free them,
 * and on any error reset each GPU's fields so that no half-loaded table is left behind.
 */
#include "catalog/catalog.h"

int eci_gpu_table_load(ec_ctx *ctx, const char *path, const eci_gpu_table *spec)
{
    eci_table *t = NULL;
    int col[ECI_GPU_TABLE_COLS_MAX];
    unsigned char *rows = NULL;
    size_t n = 0;
    if (spec->n_columns > ECI_GPU_TABLE_COLS_MAX)
        return eci_error(ctx, EC_EMISUSE, "%s: %d columns, at most %d", path, spec->n_columns,
                         ECI_GPU_TABLE_COLS_MAX);
    int rc = eci_table_load(ctx, path, &t);
    if (rc != EC_OK)
        return rc;
    for (int c = 0; c < spec->n_columns && rc == EC_OK; c++)
        rc = eci_table_require(ctx, t, spec->columns[c], &col[c]);
    if (rc == EC_OK && (n = eci_table_rows(t)) == 0)
        rc = eci_error(ctx, EC_EPARSE, "%s: no data rows", path);
    if (rc == EC_OK && spec->row_size > 0 && (rows = eci_calloc(ctx, n, spec->row_size)) == NULL)
        rc = EC_ENOMEM;
    for (size_t r = 0; rc == EC_OK && r < n; r++)
        rc = spec->parse(ctx, path, t, r, col, rows != NULL ? rows + r * spec->row_size : NULL);
    if (rc == EC_OK && spec->link != NULL)
        rc = spec->link(ctx, path, rows, n);
    if (rows != NULL)
        eci_free(ctx, rows, n * spec->row_size);
    eci_table_free(t);
    if (rc != EC_OK && spec->reset != NULL)
        for (size_t g = 0; g < ctx->n_gpus; g++)
            spec->reset(&ctx->gpus[g]);
    return rc;
}
