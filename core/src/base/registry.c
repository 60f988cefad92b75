/*
 * registry.c: reads a models/ data table into an array of structs, driven by a list of
 * column descriptors (eci_field).  gpus.c, hosts.c and fabrics.c describe their columns; this
 * file does the reading, range checks, duplicate-id checks and cleanup once for all.
 */
#include "base/base.h"

#include <string.h>

static char **str_field(void *row, const eci_field *f)
{
    return (char **)((char *)row + f->offset);
}

/* Free the strings of the first n rows. */
static void free_strings(ec_ctx *ctx, const eci_field *fields, size_t nf, size_t size, void *rows, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        void *row = (char *)rows + r * size;
        for (size_t f = 0; f < nf; f++)
            if (fields[f].kind == ECI_F_STR)
                eci_strfree(ctx, *str_field(row, &fields[f]));
    }
}

void eci_rows_free(ec_ctx *ctx, const eci_field *fields, size_t nf, size_t size, void *rows, size_t n)
{
    if (rows == NULL)
        return;
    free_strings(ctx, fields, nf, size, rows, n);
    eci_free(ctx, rows, n * size);
}

static int read_field(ec_ctx *ctx, const eci_table *t, size_t r, int col, const eci_field *f, void *row)
{
    if (f->kind == ECI_F_LINE) {
        *(size_t *)((char *)row + f->offset) = eci_table_line(t, r);
        return EC_OK;
    }
    if (f->kind == ECI_F_STR) {
        char *s = eci_strdup(ctx, eci_table_cell(t, r, col));
        if (s == NULL)
            return EC_ENOMEM;
        *str_field(row, f) = s;
        return EC_OK;
    }
    if (f->kind == ECI_F_INT) {
        long v;
        int rc = eci_table_int(ctx, t, r, col, (long)f->lo, (long)f->hi, &v);
        if (rc == EC_OK)
            *(int *)((char *)row + f->offset) = (int)v;
        return rc;
    }
    double *out = (double *)((char *)row + f->offset);
    if (f->kind == ECI_F_DOUBLE_OPT && eci_table_cell(t, r, col)[0] == '\0') {
        *out = -1; /* not known */
        return EC_OK;
    }
    return eci_table_number(ctx, t, r, col, f->lo, f->hi, out);
}

int eci_rows_load(ec_ctx *ctx, const char *path, const eci_field *fields, size_t nf, size_t size,
                  void **rows_out, size_t *n_out)
{
    enum { MAX_FIELDS = 64 };
    eci_table *t = NULL;
    int cols[MAX_FIELDS];
    void *rows = NULL;
    size_t n = 0;
    int rc = eci_table_load(ctx, path, &t);
    if (rc != EC_OK)
        return rc;
    for (size_t f = 0; f < nf && f < MAX_FIELDS && rc == EC_OK; f++) {
        cols[f] = -1; /* ECI_F_LINE reads no cell */
        if (fields[f].kind != ECI_F_LINE)
            rc = eci_table_require(ctx, t, fields[f].column, &cols[f]);
    }
    if (rc == EC_OK && eci_table_rows(t) == 0)
        rc = eci_error(ctx, EC_EPARSE, "%s: no data rows", path);
    if (rc == EC_OK && (rows = eci_calloc(ctx, eci_table_rows(t), size)) == NULL)
        rc = EC_ENOMEM;
    for (size_t r = 0; rc == EC_OK && r < eci_table_rows(t); r++) {
        void *row = (char *)rows + r * size;
        n = r + 1; /* so that cleanup frees the strings of a partly read row */
        for (size_t f = 0; f < nf && rc == EC_OK; f++)
            rc = read_field(ctx, t, r, cols[f], &fields[f], row);
        if (rc != EC_OK)
            break;
        const char *id = *str_field(row, &fields[0]);
        if (id[0] == '\0') {
            rc = eci_error(ctx, EC_EPARSE, "%s:%zu:%d: empty id", path, eci_table_line(t, r), cols[0] + 1);
            break;
        }
        for (size_t q = 0; q < r; q++)
            if (strcmp(*str_field((char *)rows + q * size, &fields[0]), id) == 0) {
                rc = eci_error(ctx, EC_EPARSE, "%s:%zu:%d: duplicate id '%s' (first on line %zu)", path,
                               eci_table_line(t, r), cols[0] + 1, id, eci_table_line(t, q));
                break;
            }
    }
    size_t capacity = eci_table_rows(t);
    eci_table_free(t);
    if (rc != EC_OK) {
        if (rows != NULL) { /* the strings of the rows read so far, then the whole array */
            free_strings(ctx, fields, nf, size, rows, n);
            eci_free(ctx, rows, capacity * size);
        }
        return rc;
    }
    *rows_out = rows;
    *n_out = n;
    return EC_OK;
}
