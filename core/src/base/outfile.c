/*
 * outfile.c: the one way the library writes a file.  The CSV writer (csvout.c), the Chrome
 * trace (trace.c), profiles (calibrate.c through csvout.c) and, through ec_outfile, the Lua
 * layer's pictures and the CLI all go through it, so each of these holds for every output:
 *   - the bytes go to a fresh temporary file made by mkstemp in the target's folder
 *     (O_CREAT|O_EXCL: a planted file or link of that name is never opened, let alone
 *     followed), which is flushed, fsync'ed and renamed over the target, so a reader sees the
 *     old file or the whole new one, and two writers of one path each rename a complete file;
 *   - a target that is not a regular file (a link, a device, a FIFO, a folder) is refused, and
 *     so is one the context read as an input (eci_input_note_id: every table and config.json
 *     it read, the models folder's files included), so `validate runs.csv -o runs.csv` cannot
 *     destroy the measurements, and so is any file in the context's models folder;
 *   - the file is made afresh: 0666 less the process umask, narrowed to the read and write bits
 *     a replaced file had; never a set-ID or execute bit, never the replaced file's owner;
 *   - every failure, and a cancellation from the context's progress callback, removes the
 *     temporary file.
 * Nothing here prints.  Inputs: the path a caller gives and the file system.
 */
#define _DEFAULT_SOURCE /* mkstemp, fdopen, fsync, fchmod, lstat, realpath */

#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest part of the target's name kept in the temporary's ".NAME.XXXXXX". */
#define TEMP_NAME_KEEP 64
/* Bytes written between two calls of the context's progress callback. */
#define CANCEL_CHECK_BYTES ((size_t)1 << 20)

struct ec_outfile {
    ec_ctx *ctx;
    FILE *fp;           /* NULL once closed */
    char *path;         /* the target, in the same block as the struct */
    char *tmp;          /* the temporary file, "" once removed */
    size_t size;        /* of the whole block */
    unsigned mode;      /* permission bits the file gets */
    size_t unchecked;   /* bytes since the last cancellation check */
    int failed;         /* a write failed: only abort is left */
};

/* The process umask, read without changing it (umask() would, for every thread):
 * Linux shows it in /proc/self/status.  Where it cannot be read, 077 keeps new files private. */
static unsigned current_umask(void)
{
    unsigned mask = 077;
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return mask;
    char line[128];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "Umask:", 6) == 0) {
            char *end;
            unsigned long m = strtoul(line + 6, &end, 8);
            if (end != line + 6 && m <= 0777)
                mask = (unsigned)m;
            break;
        }
    }
    fclose(f);
    return mask;
}

int eci_path_has_control(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static void inputs_free(ec_ctx *ctx)
{
    eci_free(ctx, ctx->inputs, ctx->cap_inputs * sizeof *ctx->inputs);
    ctx->inputs = NULL;
    ctx->n_inputs = ctx->cap_inputs = 0;
}

int eci_input_note_id(ec_ctx *ctx, const char *path, uint64_t dev, uint64_t ino)
{
    for (size_t i = 0; i < ctx->n_inputs; i++)
        if (ctx->inputs[i].dev == dev && ctx->inputs[i].ino == ino)
            return EC_OK;
    if (ctx->n_inputs == ctx->cap_inputs) {
        size_t cap = ctx->cap_inputs > 0 ? 2 * ctx->cap_inputs : 16;
        int rc = ctx->inputs == NULL ? eci_ctx_on_free(ctx, inputs_free) : EC_OK;
        eci_input_id *grown = rc == EC_OK ? eci_realloc(ctx, ctx->inputs, ctx->cap_inputs * sizeof *grown,
                                                        cap * sizeof *grown) : NULL;
        if (grown == NULL)
            return eci_error(ctx, rc != EC_OK ? rc : EC_ENOMEM, "%s: out of memory remembering it as an input", path);
        ctx->inputs = grown;
        ctx->cap_inputs = cap;
    }
    ctx->inputs[ctx->n_inputs++] = (eci_input_id){dev, ino};
    return EC_OK;
}

int eci_inputs_merge(ec_ctx *dst, const ec_ctx *src)
{
    int rc = EC_OK;
    for (size_t i = 0; i < src->n_inputs && rc == EC_OK; i++)
        rc = eci_input_note_id(dst, "a worker's input", src->inputs[i].dev, src->inputs[i].ino);
    return rc;
}

void eci_input_note(ec_ctx *ctx, const char *path)
{
    struct stat st;
    if (ctx == NULL || path == NULL || stat(path, &st) != 0)
        return;
    char keep[EC_ERRMSG_MAX];
    memcpy(keep, ctx->errmsg, sizeof keep);
    if (eci_input_note_id(ctx, path, (uint64_t)st.st_dev, (uint64_t)st.st_ino) != EC_OK)
        memcpy(ctx->errmsg, keep, sizeof keep); /* best effort: the caller's message stands */
}

static int is_input(const ec_ctx *ctx, const struct stat *st)
{
    for (size_t i = 0; i < ctx->n_inputs; i++)
        if (ctx->inputs[i].dev == (uint64_t)st->st_dev && ctx->inputs[i].ino == (uint64_t)st->st_ino)
            return 1;
    return 0;
}

/* 1 when path's folder is the context's models folder or inside it: every command reads that
 * folder, so a file written there (a new profile.csv, a damaged gpus.csv) changes or breaks
 * every later command; the files read from it are inputs besides. */
static int in_models_dir(const ec_ctx *ctx, const char *path)
{
    char dir[EC_PATH_MAX], real_dir[PATH_MAX], real_models[PATH_MAX];
    if (ctx->models_dir[0] == '\0' || eci_dirname(path, dir, sizeof dir) != 0 ||
        realpath(dir, real_dir) == NULL || realpath(ctx->models_dir, real_models) == NULL)
        return 0;
    size_t n = strlen(real_models);
    return strncmp(real_dir, real_models, n) == 0 && (real_dir[n] == '\0' || real_dir[n] == '/' || n == 1);
}

/* Check the target (without following a link) and find the mode the file will have: a new
 * file's, 0666 less the umask, and for a replaced one no more than that and no more than the
 * read and write bits it had (a private file stays private).  Never a set-user-ID, set-group-ID,
 * sticky or execute bit, and never the replaced file's owner: the file is made afresh by this
 * process, and a copied set-ID bit on a file written from untrusted input would be a way in. */
static int check_target(ec_ctx *ctx, const char *path, unsigned *mode)
{
    struct stat st;
    *mode = 0666u & ~current_umask();
    if (in_models_dir(ctx, path))
        return eci_error(ctx, EC_EIO, "%s: is in the models folder %s, which every command reads: refusing to "
                         "write there (write the output to another folder)", path, ctx->models_dir);
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return EC_OK;
        return eci_error(ctx, EC_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    if (S_ISLNK(st.st_mode))
        return eci_error(ctx, EC_EIO, "%s: is a symbolic link: refusing to replace it (write to the file it "
                         "points to by its own name)", path);
    if (!S_ISREG(st.st_mode))
        return eci_error(ctx, EC_EIO, "%s: is not a regular file (%s): refusing to replace it", path,
                         S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO"
                         : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
    if (is_input(ctx, &st))
        return eci_error(ctx, EC_EIO, "%s: is an input of this run: refusing to overwrite it "
                         "(write the output to another file)", path);
    *mode &= (unsigned)st.st_mode & 0666u;
    return EC_OK;
}

/* Close and remove the temporary file (idempotent). */
static void drop_temp(ec_outfile *f)
{
    if (f->fp != NULL) {
        fclose(f->fp);
        f->fp = NULL;
    }
    if (f->tmp[0] != '\0') {
        unlink(f->tmp);
        f->tmp[0] = '\0';
    }
}

static void outfile_free(ec_outfile *f)
{
    eci_free(f->ctx, f, f->size);
}

/* A failed write: drop the temporary and report; the object stays until commit or abort. */
int eci_outfile_fail(ec_outfile *f, int err, const char *what)
{
    drop_temp(f);
    f->failed = 1;
    return eci_error(f->ctx, EC_EIO, "%s: %s failed: %s", f->path, what, err != 0 ? strerror(err) : "I/O error");
}

int ec_outfile_open(ec_ctx *ctx, const char *path, ec_outfile **out)
{
    if (out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_outfile_open: out is NULL") : EC_EMISUSE;
    *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (path == NULL || path[0] == '\0')
        return eci_error(ctx, EC_EMISUSE, "ec_outfile_open: empty or NULL path");
    if (eci_path_has_control(path))
        return eci_error(ctx, EC_EINVAL, "output path contains a control character (a byte below 0x20): refused");
    size_t n = strlen(path);
    if (path[n - 1] == '/')
        return eci_error(ctx, EC_EIO, "%s: is a folder, not a file name", path);
    unsigned mode;
    int rc = check_target(ctx, path, &mode);
    if (rc != EC_OK)
        return rc;

    /* The temporary: DIR/.NAME.XXXXXX beside the target (rename does not cross file systems). */
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    size_t base_len = strlen(base) < TEMP_NAME_KEEP ? strlen(base) : TEMP_NAME_KEEP;
    size_t tmp_cap = dir_len + 1 + base_len + sizeof ".XXXXXX";
    size_t size = sizeof(ec_outfile) + n + 1 + tmp_cap;
    ec_outfile *f = eci_malloc(ctx, size);
    if (f == NULL)
        return EC_ENOMEM;
    *f = (ec_outfile){.ctx = ctx, .size = size, .mode = mode};
    f->path = (char *)(f + 1);
    memcpy(f->path, path, n + 1);
    f->tmp = f->path + n + 1;
    memcpy(f->tmp, path, dir_len);
    f->tmp[dir_len] = '.';
    memcpy(f->tmp + dir_len + 1, base, base_len);
    memcpy(f->tmp + dir_len + 1 + base_len, ".XXXXXX", sizeof ".XXXXXX");

    errno = 0;
    int fd = mkstemp(f->tmp);
    if (fd < 0) {
        int err = errno;
        f->tmp[0] = '\0';
        rc = eci_error(ctx, EC_EIO, "%s: cannot create a temporary file beside it: %s", path,
                       err != 0 ? strerror(err) : "I/O error");
        outfile_free(f);
        return rc;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    f->fp = fdopen(fd, "wb");
    if (f->fp == NULL) {
        int err = errno;
        close(fd);
        unlink(f->tmp);
        rc = eci_error(ctx, EC_EIO, "%s: cannot write: %s", path, strerror(err));
        outfile_free(f);
        return rc;
    }
    *out = f;
    return EC_OK;
}

FILE *eci_outfile_stream(ec_outfile *f)
{
    return f->fp;
}

int eci_outfile_check(ec_outfile *f, size_t bytes)
{
    if (f->failed || f->fp == NULL)
        return eci_error(f->ctx, EC_EIO, "%s: not written (an earlier write failed)", f->path);
    if (ferror(f->fp))
        return eci_outfile_fail(f, errno, "write");
    f->unchecked += bytes;
    if (f->unchecked >= CANCEL_CHECK_BYTES) {
        f->unchecked = 0;
        int rc = eci_progress(f->ctx, "write", 0, 0);
        if (rc != EC_OK) {
            drop_temp(f);
            f->failed = 1;
            return rc;
        }
    }
    return EC_OK;
}

int ec_outfile_write(ec_outfile *f, const void *buf, size_t n)
{
    if (f == NULL)
        return EC_EMISUSE;
    if (buf == NULL && n > 0)
        return eci_error(f->ctx, EC_EMISUSE, "ec_outfile_write: NULL buffer");
    int rc = eci_outfile_check(f, n);
    if (rc != EC_OK)
        return rc;
    errno = 0;
    if (n > 0 && fwrite(buf, 1, n, f->fp) != n)
        return eci_outfile_fail(f, errno, "write");
    return EC_OK;
}

/* fsync the folder that holds path so the rename itself is durable; best effort (some file
 * systems refuse fsync on a folder, and the data are already safe). */
static void sync_folder(const char *path)
{
    char dir[EC_PATH_MAX];
    if (eci_dirname(path, dir, sizeof dir) != 0)
        return;
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int ec_outfile_commit(ec_outfile *f)
{
    if (f == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = f->ctx;
    int rc = EC_OK;
    if (f->failed || f->fp == NULL) {
        rc = eci_error(ctx, EC_EIO, "%s: not written (an earlier write failed)", f->path);
        drop_temp(f);
        outfile_free(f);
        return rc;
    }
    errno = 0;
    int fd = fileno(f->fp);
    if (fflush(f->fp) != 0 || ferror(f->fp))
        rc = eci_outfile_fail(f, errno, "write");
    else if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        rc = eci_outfile_fail(f, errno, "fsync");
    else if (fchmod(fd, (mode_t)f->mode) != 0)
        rc = eci_outfile_fail(f, errno, "chmod");
    if (rc == EC_OK) {
        int bad = fclose(f->fp);
        int err = errno;
        f->fp = NULL;
        if (bad != 0)
            rc = eci_outfile_fail(f, err, "close");
    }
    /* The target may have changed since open: check it again just before the rename. */
    unsigned mode;
    if (rc == EC_OK && (rc = check_target(ctx, f->path, &mode)) != EC_OK)
        drop_temp(f);
    if (rc == EC_OK) {
        errno = 0;
        if (rename(f->tmp, f->path) != 0) {
            int err = errno;
            drop_temp(f);
            rc = eci_error(ctx, EC_EIO, "%s: cannot rename the temporary file into place: %s", f->path,
                           err != 0 ? strerror(err) : "I/O error");
        } else {
            f->tmp[0] = '\0';
            sync_folder(f->path);
        }
    }
    outfile_free(f);
    return rc;
}

void ec_outfile_abort(ec_outfile *f)
{
    if (f == NULL)
        return;
    drop_temp(f);
    outfile_free(f);
}
