/*
 * table.c: CSV tables, read through libcsv's callback parser.
 *
 * The input is a data table of models/ (gpus.csv, hosts.csv, ...), a run record, or any
 * CSV a user passes (length distributions, profiles): a header row, then data rows with
 * the header's column count.  Every cell remembers the line and column where it starts,
 * so every message of a loader can read "file:line:col: what".
 *
 * The reader is incremental: a block of bytes at a time goes through a byte scanner (UTF-8,
 * line and column counting) into libcsv.  A whole table (eci_table_load, eci_table_parse)
 * keeps every row; a streamed one (eci_table_open, eci_table_next) keeps the header and the
 * rows of one block, so a run-record file of any size costs a bounded amount of memory.
 * Bounds on what one file can make us hold: TABLE_MAX_BYTES for a whole table, at most
 * TABLE_MAX_COLS columns and TABLE_MAX_CELL bytes in a cell, each refused as soon as it is
 * passed.  Only regular files are read: a FIFO or a device (/dev/stdin) is refused before
 * anything blocks on it.  This file parses; table_cells.c reads the cells, table_store.h
 * holds the table.
 */
#define _POSIX_C_SOURCE 200809L /* open flags, fstat, fdopen */

#include "base/table_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A whole table is at most this big: data tables are kilobytes, histograms and profiles
 * not much more, and the cells of a whole table cost up to 12 bytes per byte of input. */
#define TABLE_MAX_BYTES ((size_t)16 << 20)
/* A streamed file: line and column numbers are 32-bit. */
#define STREAM_MAX_BYTES ((uint64_t)UINT32_MAX)
/* Columns of a header; the config vocabulary has about fifty keys. */
#define TABLE_MAX_COLS 1024
/* Bytes of one cell (before unquoting). */
#define TABLE_MAX_CELL ((size_t)1 << 20)
/* Bytes read at once when no block size is given. */
#define TABLE_CHUNK 65536
/* libcsv grows its field buffer by this much at a time (its default is 128 bytes). */
#define CSV_BLOCK 16384

/* ---- storage ----------------------------------------------------------------------- */

static void close_source(eci_table *t)
{
    if (t->fp != NULL) {
        fclose(t->fp);
        t->fp = NULL;
    }
    if (t->p_live) {
        csv_free(&t->p);
        t->p_live = 0;
    }
    eci_free(t->ctx, t->buf, t->buf_cap);
    t->buf = NULL;
    t->buf_cap = 0;
}

void eci_table_free(eci_table *t)
{
    if (t == NULL)
        return;
    ec_ctx *ctx = t->ctx;
    close_source(t);
    eci_free(ctx, t->hdr, t->hdr != NULL ? t->cols * sizeof t->hdr[0] : 0);
    eci_free(ctx, t->cells, t->cap_cells * sizeof t->cells[0]);
    eci_free(ctx, t->arena, t->arena_size);
    eci_strfree(ctx, t->name);
    eci_free(ctx, t, sizeof *t);
}

/* The header pointers point into the arena: renew them when it moves. */
static void fix_hdr(eci_table *t)
{
    if (t->hdr != NULL)
        for (size_t i = 0; i < t->cols; i++)
            t->hdr[i] = cell_text(t, i);
}

/* Room for n more bytes in the arena; 0 or EC_ENOMEM. */
static int arena_room(eci_table *t, size_t n)
{
    if (n <= t->arena_size - t->arena_used)
        return EC_OK;
    size_t want = t->arena_used + n, cap = t->arena_size ? t->arena_size : 4096;
    while (cap < want)
        cap *= 2;
    if (cap > UINT32_MAX)
        return eci_error(t->ctx, EC_ENOMEM, "%s: table text beyond 4 GiB", t->name);
    char *a = eci_realloc(t->ctx, t->arena, t->arena_size, cap);
    if (a == NULL)
        return EC_ENOMEM;
    t->arena = a;
    t->arena_size = cap;
    fix_hdr(t);
    return EC_OK;
}

/* ---- libcsv callbacks ----------------------------------------------------------------- */

static void on_field(void *data, size_t len, void *ud)
{
    eci_table *t = ud;
    parse_state *st = &t->st;
    ec_ctx *ctx = t->ctx;
    if (st->status != EC_OK)
        return;
    size_t in_row = t->n_cells - st->row_first;
    if (t->hdr == NULL) { /* the header row: refuse at once what check_header would */
        if (len == 0) {
            st->status = eci_error(ctx, EC_EPARSE, "%s:%lu:%lu: empty column name (column %zu)", t->name,
                                   (unsigned long)st->start_line, (unsigned long)st->start_col, in_row + 1);
            return;
        }
        if (in_row >= TABLE_MAX_COLS) {
            st->status = eci_error(ctx, EC_EPARSE, "%s:%lu: more than %d columns", t->name,
                                   (unsigned long)st->start_line, TABLE_MAX_COLS);
            return;
        }
    } else if (in_row >= t->cols) {
        st->extra_fields++; /* counted for the message, not kept */
        st->want_start = 1;
        st->row_start = 0;
        st->field_bytes = 0;
        return;
    }
    int rc = arena_room(t, len + 1);
    if (rc != EC_OK) {
        st->status = rc;
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
    st->field_bytes = 0;
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
static int check_header(eci_table *t)
{
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
    eci_table *t = ud;
    parse_state *st = &t->st;
    ec_ctx *ctx = t->ctx;
    if (st->status != EC_OK)
        return;
    size_t nfields = t->n_cells - st->row_first + st->extra_fields;
    uint32_t line = t->cells[st->row_first].line;
    st->extra_fields = 0;
    /* libcsv takes a lone CR as a line end; we do not, so that our line numbers agree
     * with every editor's. */
    if (term == CSV_CR && st->next_byte != CSV_LF) {
        st->status = eci_error(ctx, EC_EPARSE,
                               "%s:%lu:%lu: carriage return without a line feed "
                               "(use LF or CRLF line ends)",
                               t->name, (unsigned long)st->trig_line, (unsigned long)st->trig_col);
        return;
    }
    if (t->hdr == NULL) {
        t->cols = nfields;
        t->hdr = eci_malloc(ctx, nfields * sizeof t->hdr[0]);
        if (t->hdr == NULL) {
            t->cols = 0;
            st->status = EC_ENOMEM;
            return;
        }
        fix_hdr(t);
        st->status = check_header(t);
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

/* Length of the valid UTF-8 sequence at p (1..4), 0 when it is invalid (overlong,
 * surrogate, above U+10FFFF) or a NUL byte, and -1 when it is a valid start cut off by the
 * end of the bytes at hand (more may follow in the next block). */
static int utf8_len(const unsigned char *p, size_t avail)
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
    for (size_t i = 1; i < n; i++) {
        if (i >= avail)
            return -1;
        if (i == 1 ? (p[1] < lo || p[1] > hi) : (p[i] & 0xC0) != 0x80)
            return 0;
    }
    return (int)n;
}

/* Feed buf[a, b) to libcsv.  The scanner ends every segment right after the first ',', CR
 * or LF, the only bytes on which libcsv calls back, so any callback comes from byte b - 1.
 * On a libcsv error, *err_off is the offset of the offending byte. */
static int feed(eci_table *t, const unsigned char *buf, size_t a, size_t b, size_t *err_off)
{
    parse_state *st = &t->st;
    if (a >= b)
        return EC_OK;
    st->field_bytes += b - a;
    if (st->field_bytes > TABLE_MAX_CELL)
        return eci_error(t->ctx, EC_EPARSE, "%s:%lu:%lu: a cell longer than %zu bytes", t->name,
                         (unsigned long)st->start_line, (unsigned long)st->start_col, TABLE_MAX_CELL);
    size_t n = csv_parse(&t->p, buf + a, b - a, on_field, on_row, t);
    if (st->status != EC_OK)
        return st->status;
    if (n != b - a) {
        *err_off = a + n;
        return csv_error(&t->p) == CSV_EPARSE ? EC_EPARSE : EC_ENOMEM;
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

/* Scan buf[0, len) of the input (eof: nothing follows).  The dialect, mostly libcsv's strict
 * mode: RFC 4180 quoting; blanks around an unquoted field are dropped; blank lines anywhere
 * are skipped (libcsv reports no empty rows); LF and CRLF line ends may mix, a lone CR is
 * refused; a leading UTF-8 BOM is skipped.  Lines count LFs, columns count UTF-8
 * characters from 1 after the BOM.  Every byte must be valid UTF-8 and not NUL.  *used is
 * the bytes consumed: short of len (by at most 3) when the block ends inside a character, a
 * CRLF or a BOM, which the next block completes. */
static int scan(eci_table *t, const unsigned char *buf, size_t len, int eof, size_t *used)
{
    parse_state *st = &t->st;
    const char *name = t->name;
    size_t i = 0;
    *used = 0;
    if (st->at_start) {
        static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};
        size_t k = len < 3 ? len : 3;
        if (!eof && len < 3 && memcmp(buf, bom, k) == 0)
            return EC_OK; /* maybe a BOM: wait for its end */
        if (len >= 3 && memcmp(buf, bom, 3) == 0)
            i = 3;
        st->at_start = 0;
    }
    size_t seg = i;                    /* first byte not yet fed */
    uint32_t seg_line = st->line, seg_col = st->col;
    size_t err_off = (size_t)-1;       /* set by feed on a libcsv error */
    int rc = EC_OK;
    while (i < len) {
        unsigned char c = buf[i];
        if (st->want_start && !(c == ' ' || c == '\t' ||
                                (st->row_start && (c == CSV_CR || c == CSV_LF)))) {
            st->start_line = st->line;
            st->start_col = st->col;
            st->want_start = 0;
        }
        int n = c < 0x80 && c != 0 ? 1 : utf8_len(buf + i, len - i);
        if (n < 0 && !eof)
            break; /* a character cut by the block's end */
        if (n <= 0) {
            rc = feed(t, buf, seg, i, &err_off);
            if (rc == EC_OK)
                return eci_error(t->ctx, EC_EPARSE, "%s:%lu:%lu: %s", name, (unsigned long)st->line,
                                 (unsigned long)st->col, c == 0 ? "NUL byte" : "invalid UTF-8");
            break;
        }
        if (c == CSV_COMMA || c == CSV_CR || c == CSV_LF) {
            if (c == CSV_CR && i + 1 == len && !eof)
                break; /* is it CRLF? the next block says */
            st->trig_line = st->line;
            st->trig_col = st->col;
            st->next_byte = i + 1 < len ? buf[i + 1] : -1;
            rc = feed(t, buf, seg, i + 1, &err_off);
            if (rc != EC_OK)
                break;
            seg = i + 1;
            if (c == CSV_LF) {
                st->line++;
                st->col = 1;
            } else {
                st->col++;
            }
            seg_line = st->line;
            seg_col = st->col;
        } else {
            st->col++;
        }
        i += (size_t)n;
    }
    if (rc == EC_OK) {
        rc = feed(t, buf, seg, i, &err_off);
        *used = i;
    }
    if (rc == EC_EPARSE && st->status == EC_OK && err_off != (size_t)-1) {
        /* csv_parse stopped at a byte that breaks strict quoting: a quote inside an
         * unquoted field, or text after a closing quote. */
        unsigned char b = buf[err_off];
        unsigned long ecol = (unsigned long)col_at(buf, seg, seg_col, err_off);
        if (t->p.quoted)
            rc = eci_error(t->ctx, EC_EPARSE,
                           "%s:%lu:%lu: bad quoting: unexpected '%c' after a closing quote "
                           "(double a quote inside a quoted field)",
                           name, (unsigned long)seg_line, ecol, b >= 0x20 && b < 0x7F ? (char)b : '?');
        else
            rc = eci_error(t->ctx, EC_EPARSE,
                           "%s:%lu:%lu: bad quoting: '\"' inside an unquoted field "
                           "(quote the whole field and double the quote)",
                           name, (unsigned long)seg_line, ecol);
    } else if (rc == EC_ENOMEM && st->status == EC_OK && err_off != (size_t)-1) {
        rc = eci_error(t->ctx, EC_ENOMEM, "%s: out of memory in the CSV parser (%s)", name,
                       csv_strerror(csv_error(&t->p)));
    }
    return rc;
}

/* ---- the source ------------------------------------------------------------------------- */

/* Read the next block of the source after the carried bytes into t->buf; *n is what is now
 * there in all. */
static int read_block(eci_table *t, size_t *n)
{
    size_t want = t->carry + t->block;
    if (t->buf_cap < want) {
        unsigned char *b = eci_realloc(t->ctx, t->buf, t->buf_cap, want);
        if (b == NULL)
            return EC_ENOMEM;
        t->buf = b;
        t->buf_cap = want;
    }
    size_t got;
    if (t->fp != NULL) {
        got = fread(t->buf + t->carry, 1, t->block, t->fp);
        if (got < t->block) {
            if (ferror(t->fp))
                return eci_error(t->ctx, EC_EIO, "%s: read error: %s", t->name, strerror(errno));
            t->source_done = 1;
        }
    } else {
        got = t->mem_len - t->mem_pos < t->block ? t->mem_len - t->mem_pos : t->block;
        memcpy(t->buf + t->carry, t->mem + t->mem_pos, got);
        t->mem_pos += got;
        t->source_done = t->mem_pos == t->mem_len;
    }
    t->read_bytes += got;
    uint64_t cap = t->whole ? TABLE_MAX_BYTES : STREAM_MAX_BYTES;
    if (t->read_bytes > cap)
        return eci_error(t->ctx, EC_EIO, "%s: larger than the %llu MiB limit for a table", t->name,
                         (unsigned long long)(cap >> 20));
    *n = t->carry + got;
    return EC_OK;
}

/* Scan one more block; at the end of the input, finish libcsv. */
static int pump(eci_table *t)
{
    parse_state *st = &t->st;
    size_t n = 0, used = 0;
    int rc = read_block(t, &n);
    if (rc == EC_OK)
        rc = scan(t, t->buf, n, t->source_done, &used);
    if (rc != EC_OK)
        return rc;
    t->carry = n - used;
    memmove(t->buf, t->buf + used, t->carry);
    if (!t->source_done)
        return EC_OK;
    /* Bytes left at the end of the input are a cut character or BOM: scanned as such. */
    if (t->carry > 0) {
        rc = scan(t, t->buf, t->carry, 1, &used);
        if (rc != EC_OK)
            return rc;
        t->carry = 0;
    }
    st->next_byte = -1;
    if (csv_fini(&t->p, on_field, on_row, t) != 0) {
        if (st->status == EC_OK)
            return eci_error(t->ctx, EC_EPARSE, "%s:%lu:%lu: unterminated quoted field", t->name,
                             (unsigned long)st->start_line, (unsigned long)st->start_col);
    }
    if (st->status != EC_OK)
        return st->status;
    t->done = 1;
    if (t->n_cells == 0 && t->hdr == NULL)
        return eci_error(t->ctx, EC_EPARSE, "%s:1: empty file, expected a header row", t->name);
    return EC_OK;
}

/* A new table reading from fp (a file, streamed unless whole) or from mem[0, len). */
static int table_new(ec_ctx *ctx, const char *name, FILE *fp, const char *mem, size_t len, uint64_t size,
                     size_t block, int whole, eci_table **out)
{
    eci_table *t = eci_calloc(ctx, 1, sizeof *t);
    if (t == NULL) {
        if (fp != NULL)
            fclose(fp);
        return EC_ENOMEM;
    }
    t->ctx = ctx;
    t->fp = fp;
    t->mem = (const unsigned char *)mem;
    t->mem_len = len;
    t->total_bytes = size;
    t->block = block > 0 ? block : TABLE_CHUNK;
    t->whole = whole;
    t->st = (parse_state){.at_start = 1, .want_start = 1, .row_start = 1, .line = 1, .col = 1, .next_byte = -1};
    if ((t->name = eci_strdup(ctx, name)) == NULL) {
        eci_table_free(t);
        return EC_ENOMEM;
    }
    /* libcsv's field buffer grows with plain realloc: csv_set_realloc_func takes no user
     * data, so it cannot reach this context's allocator without a global.  Its size is
     * bounded by TABLE_MAX_CELL.  CSV_APPEND_NULL is not needed: on_field copies by length. */
    if (csv_init(&t->p, CSV_STRICT | CSV_STRICT_FINI) != 0) {
        eci_table_free(t);
        return eci_error(ctx, EC_ENOMEM, "%s: out of memory initialising the CSV parser", name);
    }
    t->p_live = 1;
    csv_set_blk_size(&t->p, CSV_BLOCK);
    *out = t;
    return EC_OK;
}

/* Read blocks until the header row and (streaming) at least one data row, or the end. */
static int fill(eci_table *t)
{
    int rc = EC_OK;
    while (rc == EC_OK && !t->done && (t->whole || t->hdr == NULL || t->rows == 0))
        rc = pump(t);
    if (rc == EC_OK && t->done)
        close_source(t);
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
    eci_table *t = NULL;
    int rc = table_new(ctx, name, NULL, buf, len, len, chunk, 1, &t);
    if (rc == EC_OK)
        rc = fill(t);
    if (rc != EC_OK) {
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

/* Open path for reading: a regular file only.  O_NONBLOCK makes opening a FIFO return at
 * once (no writer needed) so that fstat can refuse it; a device or a folder is refused too. */
static int open_regular(ec_ctx *ctx, const char *path, FILE **fp, uint64_t *size)
{
    *fp = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return eci_error(ctx, EC_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return eci_error(ctx, EC_EIO, "%s: cannot open: %s", path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return eci_error(ctx, EC_EIO, "%s: is not a regular file (%s)", path,
                         S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO or pipe"
                         : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
    }
    int rc = eci_input_note_id(ctx, path, (uint64_t)st.st_dev, (uint64_t)st.st_ino); /* no output replaces it */
    if (rc != EC_OK) {
        close(fd);
        return rc;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if ((*fp = fdopen(fd, "rb")) == NULL) {
        int err = errno;
        close(fd);
        return eci_error(ctx, EC_EIO, "%s: cannot open: %s", path, strerror(err));
    }
    *size = (uint64_t)st.st_size;
    return EC_OK;
}

static int table_open(ec_ctx *ctx, const char *path, int whole, eci_table **out)
{
    if (out == NULL)
        return EC_EMISUSE;
    *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL)
        return eci_error(ctx, EC_EMISUSE, "eci_table_load: NULL path");
    FILE *fp;
    uint64_t size = 0;
    int rc = open_regular(ctx, path, &fp, &size);
    if (rc != EC_OK)
        return rc;
    if (whole && size > TABLE_MAX_BYTES) {
        fclose(fp);
        return eci_error(ctx, EC_EIO, "%s: larger than the %zu MiB limit for a table", path, TABLE_MAX_BYTES >> 20);
    }
    eci_table *t = NULL;
    rc = table_new(ctx, path, fp, NULL, 0, size, 0, whole, &t);
    if (rc == EC_OK)
        rc = fill(t);
    if (rc != EC_OK) {
        eci_table_free(t);
        return rc;
    }
    *out = t;
    return EC_OK;
}

int eci_table_load(ec_ctx *ctx, const char *path, eci_table **out)
{
    return table_open(ctx, path, 1, out);
}

int eci_table_open(ec_ctx *ctx, const char *path, eci_table **out)
{
    return table_open(ctx, path, 0, out);
}

int eci_table_next(eci_table *t)
{
    if (t->whole || t->hdr == NULL) {
        t->rows = 0; /* a whole table has nothing after its rows */
        return EC_OK;
    }
    /* Drop the rows handed out; the cells of a row still open move down after the header. */
    size_t keep = t->n_cells - t->st.row_first, hdr_end = t->cells[t->cols - 1].off +
                  (uint32_t)strlen(cell_text(t, t->cols - 1)) + 1;
    if (keep > 0) {
        size_t from = t->cells[t->st.row_first].off;
        memmove(t->arena + hdr_end, t->arena + from, t->arena_used - from);
        for (size_t i = 0; i < keep; i++) {
            t->cells[t->cols + i] = t->cells[t->st.row_first + i];
            t->cells[t->cols + i].off -= (uint32_t)(from - hdr_end);
        }
        t->arena_used = hdr_end + (t->arena_used - from);
    } else {
        t->arena_used = hdr_end;
    }
    t->n_cells = t->cols + keep;
    t->st.row_first = t->cols;
    t->rows = 0;
    return fill(t);
}

double eci_table_read_frac(const eci_table *t)
{
    if (t->done || t->total_bytes == 0)
        return 1.0;
    double f = (double)t->read_bytes / (double)t->total_bytes;
    return f < 1.0 ? f : 1.0;
}
