/*
 * table_cells.c: a CSV table's cells, once table.c has parsed them: the header's columns,
 * a cell's text and line, and a cell read as a number or an integer, every message naming
 * "file:line:col: column 'x'".  The tables are those of models/, run records and the CSVs a
 * user passes.
 */
#include "base/table_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Longest cell text accepted by eci_table_number / eci_table_int. */
#define NUMBER_MAX ECI_NUMBER_MAX
/* Longest cell text quoted in a message. */
#define SHOW_MAX 60

/* ---- accessors ------------------------------------------------------------------------- */

const char *eci_table_name(const eci_table *t)
{
    return t->name;
}

size_t eci_table_rows(const eci_table *t)
{
    return t->rows;
}

size_t eci_table_cols(const eci_table *t)
{
    return t->cols;
}

const char *eci_table_header(const eci_table *t, size_t col)
{
    return col < t->cols ? t->hdr[col] : NULL;
}

int eci_table_col(const eci_table *t, const char *name)
{
    for (size_t i = 0; i < t->cols; i++)
        if (strcmp(t->hdr[i], name) == 0)
            return (int)i; /* at most TABLE_MAX_COLS columns */
    return -1;
}

int eci_table_require(ec_ctx *ctx, const eci_table *t, const char *name, int *col)
{
    int c = eci_table_col(t, name);
    if (c < 0) {
        /* Only a header that could be a misspelling is suggested: a file that is not the CSV
         * asked for (a key's path pointing elsewhere) must not have its first line echoed. */
        const char *near = eci_nearest_close(name, t->hdr, t->cols);
        uint32_t line = t->n_cells > 0 ? t->cells[0].line : 1;
        if (near != NULL)
            return eci_error(ctx, EC_EPARSE, "%s:%lu: missing column '%s' (did you mean '%s'?)",
                             t->name, (unsigned long)line, name, near);
        return eci_error(ctx, EC_EPARSE, "%s:%lu: missing column '%s'", t->name,
                         (unsigned long)line, name);
    }
    if (col != NULL)
        *col = c;
    return EC_OK;
}

/* NULL when row or col is out of range (a caller bug). */
const char *eci_table_cell(const eci_table *t, size_t row, int col)
{
    if (row >= t->rows || col < 0 || (size_t)col >= t->cols)
        return NULL;
    return cell_text(t, (row + 1) * t->cols + (size_t)col);
}

size_t eci_table_line(const eci_table *t, size_t row)
{
    if (row >= t->rows)
        return 0;
    return t->cells[(row + 1) * t->cols].line;
}

/* ---- numbers --------------------------------------------------------------------------- */

/* Shared preamble of eci_table_number and eci_table_int: the cell and its position. */
static int number_cell(ec_ctx *ctx, const eci_table *t, size_t row, int col, const cell **out)
{
    if (row >= t->rows || col < 0 || (size_t)col >= t->cols)
        return eci_error(ctx, EC_EMISUSE, "%s: cell (%zu, %d) outside the table (%zu x %zu)",
                         t->name, row, col, t->rows, t->cols);
    *out = &t->cells[(row + 1) * t->cols + (size_t)col];
    return EC_OK;
}

#define CELL_FMT "%s:%lu:%lu: column '%s': "
#define CELL_ARGS(t, c, col) \
    (t)->name, (unsigned long)(c)->line, (unsigned long)(c)->col, (t)->hdr[col]


/* The text of a numeric cell, checked to be non-empty and of decimal syntax (integer: no
 * fraction or exponent); the message names the cell and what was expected. */
static int numeric_text(ec_ctx *ctx, const eci_table *t, size_t row, int col, int integer, const cell **c,
                        const char **text)
{
    const char *what = integer ? "an integer" : "a number";
    int rc = number_cell(ctx, t, row, col, c);
    if (rc != EC_OK)
        return rc;
    const char *s = t->arena + (*c)->off;
    size_t n = strlen(s);
    if (n == 0)
        return eci_error(ctx, EC_EPARSE, CELL_FMT "empty cell, expected %s", CELL_ARGS(t, *c, col), what);
    if (n > NUMBER_MAX || !eci_decimal_syntax(s, integer))
        return eci_error(ctx, EC_EPARSE, CELL_FMT "'%.*s%s' is not %s", CELL_ARGS(t, *c, col), SHOW_MAX, s,
                         n > SHOW_MAX ? "..." : "", what);
    *text = s;
    return EC_OK;
}

int eci_table_number(ec_ctx *ctx, const eci_table *t, size_t row, int col, double lo, double hi,
                     double *out)
{
    const cell *c = NULL; /* set when numeric_text succeeds; -O3 cannot see it */
    const char *s = NULL;
    int rc = numeric_text(ctx, t, row, col, 0, &c, &s);
    if (rc != EC_OK)
        return rc;
    int overflow;
    double v = eci_strtod_c(s, &overflow);
    if (overflow)
        return eci_error(ctx, EC_EPARSE, CELL_FMT "'%s' is too large for a double",
                         CELL_ARGS(t, c, col), s);
    if (!(v >= lo && v <= hi))
        return eci_error(ctx, EC_EPARSE, CELL_FMT "%s is out of range [%.15g, %.15g]",
                         CELL_ARGS(t, c, col), s, lo, hi);
    *out = v;
    return EC_OK;
}

int eci_table_int(ec_ctx *ctx, const eci_table *t, size_t row, int col, long lo, long hi,
                  long *out)
{
    const cell *c = NULL; /* set when numeric_text succeeds; -O3 cannot see it */
    const char *s = NULL;
    int rc = numeric_text(ctx, t, row, col, 1, &c, &s);
    if (rc != EC_OK)
        return rc;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end != '\0')
        return eci_error(ctx, EC_EPARSE, CELL_FMT "'%s' is not an integer", CELL_ARGS(t, c, col), s);
    if (errno == ERANGE || v < lo || v > hi)
        return eci_error(ctx, EC_EPARSE, CELL_FMT "%s is out of range [%ld, %ld]",
                         CELL_ARGS(t, c, col), s, lo, hi);
    *out = v;
    return EC_OK;
}

int eci_table_release(ec_ctx *ctx, const eci_table *t, size_t row, int col, int *out)
{
    const cell *c = NULL;
    int rc = number_cell(ctx, t, row, col, &c);
    if (rc != EC_OK)
        return rc;
    const char *s = t->arena + c->off;
    size_t n = strlen(s);
    if (eci_parse_release(s, out) != 0)
        return eci_error(ctx, EC_EPARSE, CELL_FMT "'%.*s%s' is not a release (major.minor, e.g. 2.10 or 9.13.1)",
                         CELL_ARGS(t, c, col), SHOW_MAX, s, n > SHOW_MAX ? "..." : "");
    return EC_OK;
}
