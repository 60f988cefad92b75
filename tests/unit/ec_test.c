/*
 * ec_test.c: the helpers of ec_test.h, linked into every unit test.  Depends only on
 * the public header, cmocka and POSIX (mkdtemp, opendir) for temporary directories.
 */
#define _XOPEN_SOURCE 700 /* realpath, symlink */

#include "ec_test.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

double ec_test_q80(const double *abs_log, const int *group, size_t n, int per_group, int without)
{
    /* the weight of each value: 1 / (values kept), or 1 / (groups kept x the group's values kept) */
    size_t kept = 0, groups = 0;
    for (size_t i = 0; i < n; i++) {
        if (group[i] == without)
            continue;
        kept++;
        size_t j = 0;
        while (j < i && (group[j] != group[i]))
            j++;
        groups += j == i;
    }
    double best = HUGE_VAL;
    for (size_t c = 0; c < n; c++) { /* each value a candidate: the weight at or below it */
        if (group[c] == without)
            continue;
        double mass = 0;
        for (size_t i = 0; i < n; i++) {
            if (group[i] == without || abs_log[i] > abs_log[c])
                continue;
            size_t in_group = 0;
            for (size_t j = 0; j < n; j++)
                in_group += group[j] == group[i];
            mass += per_group ? 1.0 / ((double)groups * (double)in_group) : 1.0 / (double)kept;
        }
        if (mass >= 0.8 - 1e-12 && abs_log[c] < best)
            best = abs_log[c];
    }
    return kept ? best : 0;
}

void ec_test_assert_rel(double x, double expected, double rtol, const char *expr,
                        const char *file, int line)
{
    double err = fabs(x - expected);
    double scale = expected != 0.0 ? fabs(expected) : 1.0;
    if (!(err <= rtol * scale)) {
        print_error("%s = %.17g, expected %.17g (relative error %.3g > %.3g)\n", expr, x,
                    expected, expected != 0.0 ? err / scale : err, rtol);
        _fail(file, line);
    }
}

void ec_test_assert_abs(double x, double expected, double atol, const char *expr,
                        const char *file, int line)
{
    double err = fabs(x - expected);
    if (!(err <= atol)) {
        print_error("%s = %.17g, expected %.17g (absolute error %.3g > %.3g)\n", expr, x,
                    expected, err, atol);
        _fail(file, line);
    }
}

void ec_test_assert_contains(const char *haystack, const char *needle, const char *file,
                             int line)
{
    if (haystack == NULL || needle == NULL || strstr(haystack, needle) == NULL) {
        print_error("\"%s\" does not contain \"%s\"\n", haystack ? haystack : "(null)",
                    needle ? needle : "(null)");
        _fail(file, line);
    }
}

ec_ctx *ec_test_ctx_bare(void)
{
    ec_ctx *ctx = NULL;
    int rc = ec_ctx_new(NULL, NULL, &ctx);
    if (rc != EC_OK || ctx == NULL)
        fail_msg("ec_ctx_new: %s", ec_strerror(rc));
    return ctx;
}

ec_ctx *ec_test_ctx(void)
{
    ec_ctx *ctx = ec_test_ctx_bare();
    const char *dir = getenv("EPOCHCAST_MODELS");
    int rc = ec_ctx_load_models(ctx, dir);
    if (rc != EC_OK) {
        print_error("ec_ctx_load_models(%s): %s\n", dir ? dir : "(default)", ec_ctx_errmsg(ctx));
        ec_ctx_free(ctx);
        fail();
    }
    return ctx;
}

/* ---- failing allocator ---------------------------------------------------------------- */

/* The header in front of every block: its size, aligned for any type. */
typedef union block_head {
    size_t size;
    max_align_t align;
} block_head;

void ec_test_failalloc_init(ec_test_failalloc *fa, long fail_at, int persistent)
{
    memset(fa, 0, sizeof *fa);
    fa->fail_at = fail_at;
    fa->persistent = persistent;
}

void *ec_test_failalloc_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
    ec_test_failalloc *fa = ud;
    block_head *h = ptr != NULL ? (block_head *)ptr - 1 : NULL;
    if (h != NULL && osize != 0 && osize != h->size)
        fa->bad_osize++;
    if (nsize == 0) {
        if (h != NULL) {
            fa->live_bytes -= h->size;
            fa->live_blocks--;
            free(h);
        }
        return NULL;
    }
    fa->count++;
    if (fa->fail_at > 0 &&
        (fa->count == fa->fail_at || (fa->persistent && fa->count > fa->fail_at))) {
        fa->failures++;
        return NULL;
    }
    if (nsize > (size_t)-1 - sizeof(block_head))
        return NULL;
    size_t old = h != NULL ? h->size : 0;
    block_head *nh = realloc(h, sizeof(block_head) + nsize);
    if (nh == NULL)
        return NULL;
    if (h == NULL)
        fa->live_blocks++;
    fa->live_bytes += nsize - old; /* wraps correctly when shrinking */
    nh->size = nsize;
    return nh + 1;
}

/* ---- temporary files ------------------------------------------------------------------ */

char *ec_test_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    assert_non_null(p);
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

char *ec_test_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    char *tmpl = ec_test_path(base, "epochcast-test-XXXXXX");
    if (mkdtemp(tmpl) == NULL)
        fail_msg("mkdtemp(%s): %s", tmpl, strerror(errno)); /* longjmps; tmpl leaks */
    return tmpl;
}

void ec_test_link_networks(const char *dir)
{
    char models[EC_PATH_MAX];
    if (ec_default_models_dir(models, sizeof models) != EC_OK)
        fail_msg("no models folder: set EPOCHCAST_MODELS");
    char *real = realpath(models, NULL);
    if (real == NULL)
        fail_msg("cannot resolve the models folder %s: %s", models, strerror(errno));
    char *target = ec_test_path(real, "networks"), *link = ec_test_path(dir, "networks");
    if (symlink(target, link) != 0)
        fail_msg("cannot link %s to %s: %s", link, target, strerror(errno));
    free(real);
    free(target);
    free(link);
}

void ec_test_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = ec_test_path(dir, e->d_name);
        remove(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

void ec_test_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        fail_msg("cannot create %s: %s", path, strerror(errno));
    size_t n = len > 0 ? fwrite(data, 1, len, f) : 0;
    int bad = fclose(f) != 0 || n != len;
    if (bad)
        fail_msg("cannot write %s", path);
}

char *ec_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL)
            break;
        if (cap - n < 2) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (buf != NULL && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        if (len != NULL)
            *len = n;
    }
    return buf;
}

int ec_test_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- configs from words ------------------------------------------------------------------ */
void ec_test_config(ec_ctx *ctx, ec_config *cfg, const char *words)
{
    char buf[1024];
    ec_config_init(cfg);
    if ((size_t)snprintf(buf, sizeof buf, "%s", words) >= sizeof buf)
        fail_msg("config words longer than %zu bytes: %s", sizeof buf - 1, words);
    char *save = NULL;
    for (char *w = strtok_r(buf, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save))
        if (ec_config_set_word(ctx, cfg, w) != EC_OK)
            fail_msg("ec_config_set_word(%s): %s", w, ec_ctx_errmsg(ctx));
}

void ec_test_predict(ec_ctx *ctx, const char *words, ec_result *res)
{
    ec_config cfg;
    ec_test_config(ctx, &cfg, words);
    if (ec_predict(ctx, &cfg, res) != EC_OK)
        fail_msg("ec_predict(%s): %s", words, ec_ctx_errmsg(ctx));
}

void ec_test_predict_words(ec_ctx *ctx, const char *const *words, size_t n, ec_result *res)
{
    ec_config cfg;
    ec_config_init(&cfg);
    for (size_t i = 0; i < n; i++)
        if (ec_config_set_word(ctx, &cfg, words[i]) != EC_OK)
            fail_msg("%s: %s", words[i], ec_ctx_errmsg(ctx));
    if (ec_predict(ctx, &cfg, res) != EC_OK)
        fail_msg("ec_predict: %s", ec_ctx_errmsg(ctx));
}
