/*
 * csvout.c: CSV output (run records, sweep results, profiles, the CLI's -o) through libcsv's
 * quoting.  The file itself is an ec_outfile (outfile.c): rows go to a temporary beside PATH
 * that ec_csv_close renames over it, so a reader never sees half a file, a failure leaves the
 * old PATH untouched, and links, devices and the run's own inputs are never replaced.
 */
#define _POSIX_C_SOURCE 200809L /* flockfile, putc_unlocked */

#include "base/base.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

struct ec_csv_writer {
    ec_ctx *ctx;
    ec_outfile *out; /* NULL once closed after a failure */
    FILE *fp;        /* its stream */
};

int ec_csv_open(ec_ctx *ctx, const char *path, ec_csv_writer **out)
{
    if (out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_csv_open: out is NULL") : EC_EMISUSE;
    *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL || path[0] == '\0')
        return eci_error(ctx, EC_EMISUSE, "ec_csv_open: empty or NULL path");
    ec_csv_writer *w = eci_malloc(ctx, sizeof *w);
    if (w == NULL)
        return EC_ENOMEM;
    int rc = ec_outfile_open(ctx, path, &w->out);
    if (rc != EC_OK) {
        eci_free(ctx, w, sizeof *w);
        return rc;
    }
    w->ctx = ctx;
    w->fp = eci_outfile_stream(w->out);
    *out = w;
    return EC_OK;
}

/* A write failed: report it through the output file, which drops its temporary. */
static int write_failed(ec_csv_writer *w)
{
    return eci_outfile_fail(w->out, errno, "write");
}

/* libcsv's reader strips blanks around unquoted fields, so fields with leading or
 * trailing blanks are quoted as well as those with a comma, a quote or a line end. */
static int needs_quotes(const char *s, size_t n)
{
    if (n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

/* One field of a row, quoted by libcsv or as it is, into fp locked by the caller: a row takes
 * the stream's lock once, not once per character (most of a long sweep's writing time). */
static int put_field(FILE *fp, const char *s, size_t len, int quote)
{
    if (quote)
        return csv_fwrite(fp, s, len) != 0 ? EOF : 0;
    for (size_t i = 0; i < len; i++)
        if (putc_unlocked(s[i], fp) == EOF)
            return EOF;
    return 0;
}

int ec_csv_print_row(FILE *fp, const char *const *fields, size_t n)
{
    if (fp == NULL || fields == NULL || n == 0)
        return EC_EMISUSE;
    for (size_t i = 0; i < n; i++)
        if (fields[i] == NULL)
            return EC_EMISUSE;
    int bad = 0;
    flockfile(fp);
    for (size_t i = 0; i < n && !bad; i++) {
        const char *s = fields[i];
        size_t len = strlen(s);
        /* A row of one empty field would be a blank line, which readers skip: quote it. */
        bad = (i > 0 && putc_unlocked(',', fp) == EOF) ||
              put_field(fp, s, len, needs_quotes(s, len) || (n == 1 && len == 0)) == EOF;
    }
    bad = bad || putc_unlocked('\n', fp) == EOF;
    funlockfile(fp);
    return bad ? EC_EIO : EC_OK;
}

int ec_csv_row(ec_csv_writer *w, const char *const *fields, size_t n)
{
    if (w == NULL)
        return EC_EMISUSE;
    if (n == 0 || fields == NULL)
        return eci_error(w->ctx, EC_EMISUSE, "ec_csv_row: a row needs at least one field");
    for (size_t i = 0; i < n; i++)
        if (fields[i] == NULL)
            return eci_error(w->ctx, EC_EMISUSE, "ec_csv_row: field %zu is NULL", i);
    size_t bytes = n;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(fields[i]);
    int rc = eci_outfile_check(w->out, bytes);
    if (rc != EC_OK)
        return rc;
    errno = 0;
    return ec_csv_print_row(w->fp, fields, n) != EC_OK ? write_failed(w) : EC_OK;
}

int ec_csv_close(ec_csv_writer *w)
{
    if (w == NULL)
        return EC_EMISUSE;
    int rc = ec_outfile_commit(w->out);
    eci_free(w->ctx, w, sizeof *w);
    return rc;
}

void ec_csv_abort(ec_csv_writer *w)
{
    if (w == NULL)
        return;
    ec_outfile_abort(w->out);
    eci_free(w->ctx, w, sizeof *w);
}
