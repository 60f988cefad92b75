/*
 * table.c: CSV tables, read through libcsv's callback parser.
 *
 * The input is a data table of models/ (gpus.csv, hosts.csv, ...), a run record, or any
 * CSV a user passes (length distributions, profiles): a header row, then data rows with
 * the header's column count.  Every cell remembers the line and column where it starts,
 * so every message of a loader can read "file:line:col: what".
 */
#include "internal.h"

#include <csv.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bigger files are refused: data tables are kilobytes, and 32-bit offsets suffice. */
#define TABLE_MAX_BYTES ((size_t)64 << 20)
/* Bytes handed to csv_parse at once when no chunk size is given. */
#define TABLE_CHUNK 65536
/* Longest cell text accepted by eci_table_number / eci_table_int. */
#define NUMBER_MAX ECI_NUMBER_MAX
/* Longest cell text quoted in a message. */
#define SHOW_MAX 60

typedef struct cell {
    uint32_t off;  /* offset of the NUL-terminated text in the arena */
    uint32_t line; /* 1-based line where the cell starts (its opening quote if quoted) */
    uint32_t col;  /* 1-based column, in characters, after a BOM */
} cell;

struct eci_table {
    ec_ctx *ctx;          /* the allocator the table was created with */
    char *name;           /* points into arena */
    char *arena;          /* name, then every cell's text, NUL-terminated */
    size_t arena_size, arena_used;
    cell *cells;          /* header row first, then data rows, row-major */
    size_t n_cells, cap_cells;
    const char **hdr;     /* header names, pointers into the arena */
    size_t cols, rows;    /* rows counts data rows only */
};

/* The state shared by the byte scanner and libcsv's callbacks, which return void: the
 * first error is kept in status and every later callback does nothing. */
typedef struct parse_state {
    eci_table *t;
    int status;
    const unsigned char *buf; /* whole input, BOM included */
    size_t len;
    size_t trig_off;          /* offset of the last byte fed, which fired any callback */
    int want_start;           /* the next non-blank byte starts a field */
    int row_start;            /* ... and a row, so line ends are blank too */
    uint32_t start_line, start_col; /* where the current field starts */
    size_t row_first;         /* index in t->cells of the current row's first cell */
} parse_state;

EC_INTERNAL int eci_table_parse_chunked(ec_ctx *ctx, const char *name, const char *buf,
                                        size_t len, size_t chunk, eci_table **out);

/* ---- storage ----------------------------------------------------------------------- */

void eci_table_free(eci_table *t)
{
    if (t == NULL)
        return;
    ec_ctx *ctx = t->ctx;
    eci_free(ctx, t->hdr, t->cols * sizeof t->hdr[0]);
    eci_free(ctx, t->cells, t->cap_cells * sizeof t->cells[0]);
    eci_free(ctx, t->arena, t->arena_size);
    eci_free(ctx, t, sizeof *t);
}

static const char *cell_text(const eci_table *t, size_t i)
{
    return t->arena + t->cells[i].off;
}

/* ---- libcsv callbacks ----------------------------------------------------------------- */

static void on_field(void *data, size_t len, void *ud)
{
    parse_state *st = ud;
    eci_table *t = st->t;
    ec_ctx *ctx = t->ctx;
    if (st->status != EC_OK)
        return;
    /* The arena holds len + 1 bytes of input: a field's text is never longer than the
     * bytes it came from, and its NUL takes the place of the byte that ended it (only
     * the last field of the file may end without one, hence the + 1). */
    if (len + 1 > t->arena_size - t->arena_used) {
        st->status = eci_error(ctx, EC_EPARSE, "%s: internal error: cell storage exhausted",
                               t->name);
        return;
    }
    if (t->n_cells == t->cap_cells) {
        size_t ncap = t->cap_cells ? 2 * t->cap_cells : 64;
        cell *nc = eci_realloc(ctx, t->cells, t->cap_cells * sizeof *nc, ncap * sizeof *nc);
        if (nc == NULL) {
            st->status = EC_ENOMEM;
            return;
        }
        t->cells = nc;
        t->cap_cells = ncap;
    }
    cell *c = &t->cells[t->n_cells++];
    c->off = (uint32_t)t->arena_used;
    c->line = st->start_line;
    c->col = st->start_col;
    if (len > 0)
        memcpy(t->arena + t->arena_used, data, len);
    t->arena[t->arena_used + len] = '\0';
    t->arena_used += len + 1;
    st->want_start = 1;
    st->row_start = 0;
}

typedef struct hdr_key {
    const char *name;
    size_t col;
} hdr_key;

static int hdr_key_cmp(const void *a, const void *b)
{
    const hdr_key *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return (x->col > y->col) - (x->col < y->col);
}

/* The header row: names must be non-empty and distinct.  Sorting keeps this
 * O(n log n) for the absurd headers a fuzzer writes. */
static int check_header(parse_state *st)
{
    eci_table *t = st->t;
    ec_ctx *ctx = t->ctx;
    size_t n = t->cols;
    for (size_t i = 0; i < n; i++) {
        if (t->hdr[i][0] == '\0')
            return eci_error(ctx, EC_EPARSE, "%s:%lu:%lu: empty column name (column %zu)",
                             t->name, (unsigned long)t->cells[i].line,
                             (unsigned long)t->cells[i].col, i + 1);
    }
    if (n < 2)
        return EC_OK;
    hdr_key *keys = eci_malloc(ctx, n * sizeof *keys);
    if (keys == NULL)
        return EC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        keys[i].name = t->hdr[i];
        keys[i].col = i;
    }
    qsort(keys, n, sizeof *keys, hdr_key_cmp);
    /* Among equal names the second occurrence is a duplicate; report the leftmost one. */
    size_t dup = (size_t)-1, first = 0;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(keys[i].name, keys[i - 1].name) == 0 &&
            (i < 2 || strcmp(keys[i - 1].name, keys[i - 2].name) != 0) && keys[i].col < dup) {
            dup = keys[i].col;
            first = keys[i - 1].col;
        }
    }
    eci_free(ctx, keys, n * sizeof *keys);
    if (dup == (size_t)-1)
        return EC_OK;
    return eci_error(ctx, EC_EPARSE, "%s:%lu:%lu: duplicate column name '%s' (columns %zu and %zu)",
                     t->name, (unsigned long)t->cells[dup].line, (unsigned long)t->cells[dup].col,
                     t->hdr[dup], first + 1, dup + 1);
}

static void on_row(int term, void *ud)
{
    parse_state *st = ud;
    eci_table *t = st->t;
    ec_ctx *ctx = t->ctx;
    if (st->status != EC_OK)
        return;
    size_t nfields = t->n_cells - st->row_first;
    uint32_t line = t->cells[st->row_first].line;
    /* libcsv takes a lone CR as a line end; we do not, so that our line numbers agree
     * with every editor's. */
    if (term == CSV_CR && (st->trig_off + 1 >= st->len || st->buf[st->trig_off + 1] != CSV_LF)) {
        const unsigned char *p = st->buf + st->trig_off;
        size_t col = 1;
        while (p > st->buf && p[-1] != CSV_LF) {
            p--;
            col += (*p & 0xC0) != 0x80;
        }
        /* col now counts characters before the CR on its line, plus one; a BOM is not a
         * character of line 1. */
        if (p == st->buf && st->len >= 3 && memcmp(st->buf, "\xEF\xBB\xBF", 3) == 0)
            col--;
        /* The line of the CR: count line feeds (this is the error path only). */
        unsigned long cr_line = 1;
        for (size_t i = 0; i < st->trig_off; i++)
            cr_line += st->buf[i] == CSV_LF;
        st->status = eci_error(ctx, EC_EPARSE,
                               "%s:%lu:%zu: carriage return without a line feed "
                               "(use LF or CRLF line ends)",
                               t->name, cr_line, col);
        return;
    }
    if (st->row_first == 0) {
        t->cols = nfields;
        t->hdr = eci_malloc(ctx, nfields * sizeof t->hdr[0]);
        if (t->hdr == NULL) {
            st->status = EC_ENOMEM;
            return;
        }
        for (size_t i = 0; i < nfields; i++)
            t->hdr[i] = cell_text(t, i);
        st->status = check_header(st);
    } else if (nfields != t->cols) {
        st->status = eci_error(ctx, EC_EPARSE, "%s:%lu: expected %zu columns, found %zu",
                               t->name, (unsigned long)line, t->cols, nfields);
        return;
    } else {
        t->rows++;
    }
    st->row_first = t->n_cells;
    st->want_start = 1;
    st->row_start = 1;
}

/* ---- the byte scanner ------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is invalid (overlong,
 * surrogate, above U+10FFFF, truncated) or a NUL byte. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (avail < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Feed buf[a, b) to libcsv in pieces that end on multiples of chunk (counted from base).
 * The scanner ends every segment right after the first ',', CR or LF, the only bytes
 * on which libcsv calls back, so any callback comes from byte b - 1 = st->trig_off.
 * On a libcsv error, *err_off is the offset of the offending byte. */
static int feed(struct csv_parser *p, parse_state *st, size_t base, size_t a, size_t b,
                size_t chunk, size_t *err_off)
{
    while (a < b) {
        size_t end = a + (chunk - (a - base) % chunk);
        if (end > b)
            end = b;
        size_t n = csv_parse(p, st->buf + a, end - a, on_field, on_row, st);
        if (st->status != EC_OK)
            return st->status;
        if (n != end - a) {
            *err_off = a + n;
            return csv_error(p) == CSV_EPARSE ? EC_EPARSE : EC_ENOMEM;
        }
        a = end;
    }
    return EC_OK;
}

/* Column (in characters) of byte off, given that seg_col is the column of byte seg and
 * no line feed lies between them. */
static uint32_t col_at(const unsigned char *buf, size_t seg, uint32_t seg_col, size_t off)
{
    uint32_t col = seg_col;
    for (size_t i = seg; i < off; i++)
        col += (buf[i] & 0xC0) != 0x80;
    return col;
}

/* The dialect, mostly libcsv's strict mode: RFC 4180 quoting; blanks around an unquoted
 * field are dropped; blank lines anywhere are skipped (libcsv reports no empty rows);
 * LF and CRLF line ends may mix, a lone CR is refused; a leading UTF-8 BOM is skipped.
 * Lines count LFs, columns count UTF-8 characters from 1 after the BOM.  Every byte must
 * be valid UTF-8 and not NUL. */
static int parse(ec_ctx *ctx, parse_state *st, const char *name, size_t chunk)
{
    eci_table *t = st->t;
    const unsigned char *buf = st->buf;
    size_t len = st->len;
    size_t i = 0;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    const size_t base = i;
    uint32_t line = 1, col = 1;        /* position of byte i */
    size_t seg = i;                    /* first byte not yet fed */
    uint32_t seg_line = 1, seg_col = 1;
    size_t err_off = (size_t)-1; /* set by feed on a libcsv error */
    int rc = EC_OK;

    /* libcsv's entry buffer grows with plain realloc: csv_set_realloc_func takes no user
     * data, so it cannot reach this context's allocator without a global.  Its size is
     * bounded by the longest field (at most TABLE_MAX_BYTES).  CSV_APPEND_NULL is not
     * needed: on_field copies by length. */
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0)
        return eci_error(ctx, EC_ENOMEM, "%s: out of memory initialising the CSV parser", name);

    st->want_start = 1;
    st->row_start = 1;
    while (i < len) {
        unsigned char c = buf[i];
        if (st->want_start && !(c == ' ' || c == '\t' ||
                                (st->row_start && (c == CSV_CR || c == CSV_LF)))) {
            st->start_line = line;
            st->start_col = col;
            st->want_start = 0;
        }
        size_t n = c < 0x80 && c != 0 ? 1 : utf8_len(buf + i, len - i);
        if (n == 0) {
            rc = feed(&p, st, base, seg, i, chunk, &err_off);
            if (rc == EC_OK) {
                rc = eci_error(ctx, EC_EPARSE, "%s:%lu:%lu: %s", name, (unsigned long)line,
                               (unsigned long)col, c == 0 ? "NUL byte" : "invalid UTF-8");
                goto done;
            }
            break;
        }
        if (c == CSV_COMMA || c == CSV_CR || c == CSV_LF) {
            st->trig_off = i;
            rc = feed(&p, st, base, seg, i + 1, chunk, &err_off);
            if (rc != EC_OK)
                break;
            seg = i + 1;
            if (c == CSV_LF) {
                line++;
                col = 1;
            } else {
                col++;
            }
            seg_line = line;
            seg_col = col;
        } else {
            col++;
        }
        i += n;
    }
    if (rc == EC_OK) {
        st->trig_off = len;
        rc = feed(&p, st, base, seg, len, chunk, &err_off);
    }
    if (rc == EC_OK) {
        if (csv_fini(&p, on_field, on_row, st) != 0) {
            if (st->status == EC_OK)
                rc = eci_error(ctx, EC_EPARSE, "%s:%lu:%lu: unterminated quoted field", name,
                               (unsigned long)st->start_line, (unsigned long)st->start_col);
        }
        if (rc == EC_OK)
            rc = st->status;
    }
    if (rc == EC_EPARSE && st->status == EC_OK && err_off != (size_t)-1) {
        /* csv_parse stopped at a byte that breaks strict quoting: a quote inside an
         * unquoted field, or text after a closing quote. */
        unsigned char b = buf[err_off];
        unsigned long ecol = (unsigned long)col_at(buf, seg, seg_col, err_off);
        if (p.quoted)
            rc = eci_error(ctx, EC_EPARSE,
                           "%s:%lu:%lu: bad quoting: unexpected '%c' after a closing quote "
                           "(double a quote inside a quoted field)",
                           name, (unsigned long)seg_line, ecol, b >= 0x20 && b < 0x7F ? (char)b : '?');
        else
            rc = eci_error(ctx, EC_EPARSE,
                           "%s:%lu:%lu: bad quoting: '\"' inside an unquoted field "
                           "(quote the whole field and double the quote)",
                           name, (unsigned long)seg_line, ecol);
    } else if (rc == EC_ENOMEM && st->status == EC_OK && err_off != (size_t)-1) {
        rc = eci_error(ctx, EC_ENOMEM, "%s: out of memory in the CSV parser (%s)", name,
                       csv_strerror(csv_error(&p)));
    }
    if (rc == EC_OK && t->n_cells == 0)
        rc = eci_error(ctx, EC_EPARSE, "%s:1: empty file, expected a header row", name);
done:
    csv_free(&p);
    return rc;
}

int eci_table_parse_chunked(ec_ctx *ctx, const char *name, const char *buf, size_t len,
                            size_t chunk, eci_table **out)
{
    if (out == NULL)
        return EC_EMISUSE;
    *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (name == NULL || (buf == NULL && len > 0))
        return eci_error(ctx, EC_EMISUSE, "eci_table_parse: NULL name or buffer");
    if (len > TABLE_MAX_BYTES)
        return eci_error(ctx, EC_EIO, "%s: larger than the %zu MiB limit for a table", name,
                         TABLE_MAX_BYTES >> 20);
    if (chunk == 0)
        chunk = TABLE_CHUNK;

    eci_table *t = eci_calloc(ctx, 1, sizeof *t);
    if (t == NULL)
        return EC_ENOMEM;
    t->ctx = ctx;
    size_t name_len = strlen(name);
    t->arena_size = name_len + 1 + len + 1;
    t->arena = eci_malloc(ctx, t->arena_size);
    if (t->arena == NULL) {
        t->arena_size = 0;
        eci_table_free(t);
        return EC_ENOMEM;
    }
    memcpy(t->arena, name, name_len + 1);
    t->name = t->arena;
    t->arena_used = name_len + 1;

    parse_state st;
    memset(&st, 0, sizeof st);
    st.t = t;
    st.buf = (const unsigned char *)buf;
    st.len = len;
    int rc = parse(ctx, &st, t->name, chunk);
    if (rc != EC_OK) {
        if (t->hdr == NULL)
            t->cols = 0; /* hdr was never allocated: free nothing for it */
        eci_table_free(t);
        return rc;
    }
    *out = t;
    return EC_OK;
}

int eci_table_parse(ec_ctx *ctx, const char *name, const char *buf, size_t len, eci_table **out)
{
    return eci_table_parse_chunked(ctx, name, buf, len, 0, out);
}

int eci_table_load(ec_ctx *ctx, const char *path, eci_table **out)
{
    if (out == NULL)
        return EC_EMISUSE;
    *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL)
        return eci_error(ctx, EC_EMISUSE, "eci_table_load: NULL path");
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return eci_error(ctx, EC_EIO, "%s: cannot open: %s", path, strerror(errno));
    /* Read the whole file into a growing buffer; one byte past the limit proves it too big. */
    size_t cap = 16384, n = 0;
    char *buf = eci_malloc(ctx, cap);
    int rc = buf == NULL ? EC_ENOMEM : EC_OK;
    while (rc == EC_OK) {
        if (n == cap) {
            if (cap > TABLE_MAX_BYTES) {
                rc = eci_error(ctx, EC_EIO, "%s: larger than the %zu MiB limit for a table",
                               path, TABLE_MAX_BYTES >> 20);
                break;
            }
            size_t ncap = 2 * cap > TABLE_MAX_BYTES + 1 ? TABLE_MAX_BYTES + 1 : 2 * cap;
            char *nb = eci_realloc(ctx, buf, cap, ncap);
            if (nb == NULL) {
                rc = EC_ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = eci_error(ctx, EC_EIO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc == EC_OK && n > TABLE_MAX_BYTES)
        rc = eci_error(ctx, EC_EIO, "%s: larger than the %zu MiB limit for a table", path,
                       TABLE_MAX_BYTES >> 20);
    if (rc == EC_OK)
        rc = eci_table_parse(ctx, path, buf, n, out);
    eci_free(ctx, buf, cap);
    return rc;
}

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
            return (int)i; /* a 64 MiB file has fewer than INT_MAX columns */
    return -1;
}

int eci_table_require(ec_ctx *ctx, const eci_table *t, const char *name, int *col)
{
    int c = eci_table_col(t, name);
    if (c < 0) {
        const char *near = eci_nearest(name, t->hdr, t->cols);
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
