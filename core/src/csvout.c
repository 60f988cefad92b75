/*
 * csvout.c: CSV output (run records, sweep results, the CLI's --csv) through libcsv's
 * writer.  Rows go to "PATH.tmp", which ec_csv_close renames over PATH, so a reader
 * never sees half a file and a failure leaves the old PATH untouched.
 */
#include "internal.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

struct ec_csv_writer {
    ec_ctx *ctx;
    FILE *fp;     /* NULL once closed after a failure */
    char *path;   /* points into the same block, after the struct */
    char *tmp;    /* path + ".tmp" */
    size_t size;  /* of the whole block */
};

static void writer_free(ec_csv_writer *w)
{
    eci_free(w->ctx, w, w->size);
}

/* A write failed: drop the temporary file and report it.  The writer stays allocated
 * until ec_csv_close or ec_csv_abort. */
static int write_failed(ec_csv_writer *w, int err, const char *what)
{
    if (w->fp != NULL) {
        fclose(w->fp);
        w->fp = NULL;
    }
    remove(w->tmp);
    return eci_error(w->ctx, EC_EIO, "%s: %s failed: %s", w->path, what,
                     err != 0 ? strerror(err) : "I/O error");
}

int ec_csv_open(ec_ctx *ctx, const char *path, ec_csv_writer **out)
{
    if (out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_csv_open: out is NULL") : EC_EMISUSE;
    *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL || path[0] == '\0')
        return eci_error(ctx, EC_EMISUSE, "ec_csv_open: empty or NULL path");
    size_t n = strlen(path);
    size_t size = sizeof(ec_csv_writer) + 2 * n + sizeof ".tmp" + 1;
    ec_csv_writer *w = eci_malloc(ctx, size);
    if (w == NULL)
        return EC_ENOMEM;
    w->ctx = ctx;
    w->size = size;
    w->path = (char *)(w + 1);
    memcpy(w->path, path, n + 1);
    w->tmp = w->path + n + 1;
    memcpy(w->tmp, path, n);
    memcpy(w->tmp + n, ".tmp", sizeof ".tmp");
    errno = 0;
    w->fp = fopen(w->tmp, "wb");
    if (w->fp == NULL) {
        int err = errno;
        int rc = eci_error(ctx, EC_EIO, "%s: cannot create: %s", w->tmp,
                           err != 0 ? strerror(err) : "I/O error");
        writer_free(w);
        return rc;
    }
    *out = w;
    return EC_OK;
}

/* libcsv's reader strips blanks around unquoted fields, so fields with leading or
 * trailing blanks are quoted as well as those with a comma, a quote or a line end. */
static int needs_quotes(const char *s, size_t n)
{
    if (n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

int ec_csv_row(ec_csv_writer *w, const char *const *fields, size_t n)
{
    if (w == NULL)
        return EC_EMISUSE;
    if (w->fp == NULL)
        return eci_error(w->ctx, EC_EIO, "%s: not written (an earlier write failed)", w->path);
    if (n == 0 || fields == NULL)
        return eci_error(w->ctx, EC_EMISUSE, "ec_csv_row: a row needs at least one field");
    for (size_t i = 0; i < n; i++)
        if (fields[i] == NULL)
            return eci_error(w->ctx, EC_EMISUSE, "ec_csv_row: field %zu is NULL", i);
    errno = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = fields[i];
        size_t len = strlen(s);
        if (i > 0 && fputc(',', w->fp) == EOF)
            return write_failed(w, errno, "write");
        /* A row of one empty field would be a blank line, which readers skip: quote it. */
        if (needs_quotes(s, len) || (n == 1 && len == 0)) {
            if (csv_fwrite(w->fp, s, len) != 0)
                return write_failed(w, errno, "write");
        } else if (len > 0 && fwrite(s, 1, len, w->fp) != len) {
            return write_failed(w, errno, "write");
        }
    }
    if (fputc('\n', w->fp) == EOF)
        return write_failed(w, errno, "write");
    return EC_OK;
}

int ec_csv_close(ec_csv_writer *w)
{
    if (w == NULL)
        return EC_EMISUSE;
    int rc;
    if (w->fp == NULL) {
        rc = eci_error(w->ctx, EC_EIO, "%s: not written (an earlier write failed)", w->path);
    } else {
        errno = 0;
        int bad = fflush(w->fp) != 0 || ferror(w->fp);
        int err = errno;
        if (fclose(w->fp) != 0 && !bad) {
            bad = 1;
            err = errno;
        }
        w->fp = NULL;
        if (bad) {
            rc = write_failed(w, err, "write");
        } else {
            errno = 0;
            if (rename(w->tmp, w->path) != 0) {
                err = errno;
                remove(w->tmp);
                rc = eci_error(w->ctx, EC_EIO, "%s: cannot rename %s into place: %s", w->path,
                               w->tmp, err != 0 ? strerror(err) : "I/O error");
            } else {
                rc = EC_OK;
            }
        }
    }
    writer_free(w);
    return rc;
}

void ec_csv_abort(ec_csv_writer *w)
{
    if (w == NULL)
        return;
    if (w->fp != NULL)
        fclose(w->fp);
    remove(w->tmp);
    writer_free(w);
}
