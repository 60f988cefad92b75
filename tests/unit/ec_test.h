/*
 * ec_test.h: helpers shared by every cmocka unit test (tests/unit/test_*.c): named
 * tolerances, assert_rel/assert_abs, a context with models loaded, a failing allocator
 * for OOM tests and temporary files.  ec_test.c is linked into every unit test.
 */
#ifndef EC_TEST_H
#define EC_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "epochcast.h"

/* ---- tolerances (named, as GSL's tests and SimGrid's sg_precision_*) ------------------ */
#define EC_TOL_EXACT        1e-12 /* the same arithmetic, up to rounding */
#define EC_TOL_CLOSED_FORM  1e-9  /* a closed form re-derived in the test */
#define EC_TOL_INTEGRAL     1e-6  /* numerical integration, series, iterative solvers */
#define EC_TOL_SIMULATION   1e-2  /* Monte-Carlo estimates with a fixed seed */

/* |x - expected| <= rtol * |expected| (absolute rtol when expected is 0); NaN fails. */
#define assert_rel(x, expected, rtol) \
    ec_test_assert_rel((x), (expected), (rtol), #x, __FILE__, __LINE__)
/* |x - expected| <= atol; NaN fails. */
#define assert_abs(x, expected, atol) \
    ec_test_assert_abs((x), (expected), (atol), #x, __FILE__, __LINE__)

void ec_test_assert_rel(double x, double expected, double rtol, const char *expr,
                        const char *file, int line);
void ec_test_assert_abs(double x, double expected, double atol, const char *expr,
                        const char *file, int line);

/* Fails the test unless haystack contains needle; prints both. */
#define assert_contains(haystack, needle) \
    ec_test_assert_contains((haystack), (needle), __FILE__, __LINE__)
void ec_test_assert_contains(const char *haystack, const char *needle, const char *file,
                             int line);

/* ---- held-out error quantiles ---------------------------------------------------------- */
/* The weighted 0.8 quantile of abs_log[0..n) (the smallest value with 0.8 of the weight at or
 * below it), recomputed apart from the library's fit/heldout.c: every value weighs the same, or
 * (per_group) every group of group[] does, its values sharing it; values of group `without` are
 * left out (-1: none).  The profile's sds are this over z_0.9, per group times t_0.9,k / z_0.9
 * (docs/accuracy.md, "The interval is a quantile"). */
double ec_test_q80(const double *abs_log, const int *group, size_t n, int per_group, int without);

/* ---- contexts ------------------------------------------------------------------------ */
/* A context with the models of getenv("EPOCHCAST_MODELS") (ec_default_models_dir() when
 * unset) loaded; fails the test with the error message otherwise.  Free with ec_ctx_free. */
ec_ctx *ec_test_ctx(void);
/* A context with nothing loaded. */
ec_ctx *ec_test_ctx_bare(void);

/* A default config with the space-separated key=value words of `words` set; fails the test,
 * naming the word, when one is refused. */
void ec_test_config(ec_ctx *ctx, ec_config *cfg, const char *words);
/* ec_predict of ec_test_config(words); fails the test with the context's message. */
void ec_test_predict(ec_ctx *ctx, const char *words, ec_result *res);
/* The same for an array of n key=value words (a value may hold spaces). */
void ec_test_predict_words(ec_ctx *ctx, const char *const *words, size_t n, ec_result *res);

/* ---- failing allocator (SQLite faultsim, Lua's testalloc) ------------------------------
 * Use as ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx).  Allocation number fail_at
 * (counting every call that allocates or grows, from 1) fails; with persistent set, all
 * later ones fail too.  Every block carries a header with its size, so live_bytes is
 * exact whatever osize the library passes, and a wrong non-zero osize is counted. */
typedef struct ec_test_failalloc {
    long fail_at;        /* 0: never fail */
    int persistent;
    long count;          /* allocating calls seen */
    long failures;       /* calls that were made to fail */
    size_t live_bytes;   /* bytes allocated and not yet freed */
    long live_blocks;
    long bad_osize;      /* frees or reallocs whose non-zero osize was wrong */
} ec_test_failalloc;

void ec_test_failalloc_init(ec_test_failalloc *fa, long fail_at, int persistent);
void *ec_test_failalloc_fn(void *ud, void *ptr, size_t osize, size_t nsize);

/* ---- temporary files ------------------------------------------------------------------ */
/* A new empty directory under $TMPDIR (or /tmp); free with ec_test_rmtree then free(). */
char *ec_test_tmpdir(void);
/* In a temp copy of models/ (dir), a link named networks to the real models/networks/ (the
 * config files networks.csv names), from $EPOCHCAST_MODELS or the default models folder. */
void ec_test_link_networks(const char *dir);
/* Remove a directory made by ec_test_tmpdir and the plain files in it. */
void ec_test_rmtree(const char *dir);
/* dir "/" name in a malloc'd string. */
char *ec_test_path(const char *dir, const char *name);
/* Write len bytes to path (fails the test on error). */
void ec_test_write_file(const char *path, const void *data, size_t len);
/* The whole file in a malloc'd NUL-terminated buffer, NULL if it cannot be read. */
char *ec_test_read_file(const char *path, size_t *len);
/* 1 when path exists. */
int ec_test_exists(const char *path);

#endif /* EC_TEST_H */
