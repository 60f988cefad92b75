/*
 * test_hostile.c: issue 20 ("Hostile inputs and outputs") at the library's level, one group
 * of tests per numbered defect the C API can show (the writer's, defect 2, are in
 * test_csvout.c; the CLI's and Lua's in tests/cli/test_hostile.sh):
 *   3  rates and times refuse subnormal values, every result field is finite and MFU is at
 *      most 1 (or the prediction is refused naming gpu_step_s), run values are measurements,
 *      a header-only run file is an error;
 *   4  products of counts are checked and named (eci_product at its exact boundary);
 *   6  paths in run records are taken from the run file's folder and confined to it;
 *   7  streamed tables and run readers hold a bounded amount of memory, refuse FIFOs, cap
 *      columns and cells, and a long load can be cancelled;
 *   8  topology= with one GPU, image_size below a ViT patch, fractional sample counts.
 */
#define _POSIX_C_SOURCE 200809L /* mkfifo, symlink */

#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------------ */

static int set_words(ec_ctx *ctx, ec_config *cfg, const char *words)
{
    char buf[512];
    ec_config_init(cfg);
    eci_strlcpy(buf, words, sizeof buf);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " ")) {
        int rc = ec_config_set_word(ctx, cfg, w);
        if (rc != EC_OK)
            return rc;
    }
    return EC_OK;
}

/* Predict words: the status; the message must contain want (when not NULL). */
static int predict_words(ec_ctx *ctx, const char *words, ec_result *res, const char *want)
{
    ec_config cfg;
    int rc = set_words(ctx, &cfg, words);
    if (rc == EC_OK)
        rc = ec_predict(ctx, &cfg, res);
    if (want != NULL)
        assert_contains(ec_ctx_errmsg(ctx), want);
    return rc;
}

/* An allocator that counts live and peak bytes (a header keeps each block's size). */
typedef struct peak_alloc {
    size_t live, peak;
} peak_alloc;

typedef union head {
    size_t size;
    max_align_t align;
} head;

static void *peak_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)osize;
    peak_alloc *pa = ud;
    head *h = ptr != NULL ? (head *)ptr - 1 : NULL;
    size_t old = h != NULL ? h->size : 0;
    if (nsize == 0) {
        pa->live -= old;
        free(h);
        return NULL;
    }
    head *nh = realloc(h, sizeof *nh + nsize);
    if (nh == NULL)
        return NULL;
    nh->size = nsize;
    pa->live = pa->live - old + nsize;
    if (pa->live > pa->peak)
        pa->peak = pa->live;
    return nh + 1;
}

static ec_ctx *peak_ctx(peak_alloc *pa, int models)
{
    ec_ctx *ctx = NULL;
    *pa = (peak_alloc){0, 0};
    assert_int_equal(ec_ctx_new(peak_fn, pa, &ctx), EC_OK);
    if (models && ec_ctx_load_models(ctx, getenv("EPOCHCAST_MODELS")) != EC_OK)
        fail_msg("models: %s", ec_ctx_errmsg(ctx));
    return ctx;
}

/* A run-record file of n rows: distinct ids, batch 1..64, one GPU and model. */
static void write_runs(const char *path, long n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("id,model,gpu,batch_per_gpu,seq_len,metric,value\n", f);
    for (long i = 0; i < n; i++)
        fprintf(f, "run-%ld,bert-base,t4,%ld,128,samples_per_s,%ld\n", i, i % 64 + 1, i % 900 + 100);
    assert_int_equal(fclose(f), 0);
}

/* ---- 3. no silent NaN, no absurd figure --------------------------------------------------- */

/* busbw 1e-320 GB/s made every step NaN: the value is refused, and the smallest accepted rate
 * still gives a finite prediction. */
static void test_rates_have_a_floor(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    const char *base = "model=bert-base gpu=t4 batch_per_gpu=16 num_gpus=16 nodes=2";
    char words[256];
    static const char *const bad[] = {"busbw_gbyte_per_s=1e-320", "busbw_gbyte_per_s=1e-300",
                                      "network_gbit_per_s=1e-320", "gpu_step_s=1e-9", "sample_cpu_s=4.9e-324",
                                      "max_grad_norm=1e-320", "price_per_gpu_hour=1e-310"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(words, sizeof words, "%s %s", base, bad[i]);
        char key[64];
        snprintf(key, sizeof key, "key '%.*s'", (int)strcspn(bad[i], "="), bad[i]);
        assert_int_equal(predict_words(ctx, words, &res, key), EC_EINVAL);
    }
    snprintf(words, sizeof words, "%s busbw_gbyte_per_s=0.001 network_gbit_per_s=0.001", base);
    assert_int_equal(predict_words(ctx, words, &res, NULL), EC_OK);
    assert_true(isfinite(res.step_s) && res.step_s > 0 && isfinite(res.comm_total_s));
    ec_ctx_free(ctx);
}

/* A measured step faster than the GPU's peak allows is refused naming gpu_step_s (it gave
 * 3274% MFU); random configurations, gpu_step_s included, never give MFU above 1 or a
 * figure that is not finite. */
static void test_mfu_at_most_one(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    assert_int_equal(predict_words(ctx, "model=bert-large gpu=t4 batch_per_gpu=32 seq_len=512 gpu_step_s=0.001", &res,
                                   "gpu_step_s=0.001"), EC_EDOM);
    assert_contains(ec_ctx_errmsg(ctx), "MFU above 100%");
    static const char *const models[] = {"bert-base", "gpt2", "resnet50", "vit-b16", "distilbert-base"};
    static const char *const gpus[] = {"t4", "a100-sxm4-80gb", "k80", "rtx4090", "v100-sxm2-16gb", "a16"};
    static const char *const precisions[] = {"fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp16"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20);
    int ok = 0, refused = 0;
    for (int i = 0; i < 300; i++) {
        char words[256];
        double step = exp(log(1e-6) + gsl_rng_uniform(r) * (log(10.0) - log(1e-6)));
        snprintf(words, sizeof words, "model=%s gpu=%s precision=%s batch_per_gpu=%lu num_gpus=%lu %s%.3g",
                 models[gsl_rng_uniform_int(r, 5)], gpus[gsl_rng_uniform_int(r, 6)],
                 precisions[gsl_rng_uniform_int(r, 6)], 1 + gsl_rng_uniform_int(r, 64), 1 + gsl_rng_uniform_int(r, 8),
                 gsl_rng_uniform(r) < 0.5 ? "gpu_step_s=" : "sample_cpu_s=", step);
        int rc = predict_words(ctx, words, &res, NULL);
        if (rc == EC_OK) {
            ok++;
            assert_true(res.mfu_frac >= 0 && res.mfu_frac <= 1);
            assert_true(res.gpu_util_frac >= 0 && res.gpu_util_frac <= 1);
            const double v[] = {res.step_s, res.samples_per_s, res.gpu_busy_s, res.flop_per_step, res.comm_total_s,
                                res.breakdown.loader_s, res.memory.peak_bytes, res.scaling_efficiency_frac};
            for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
                assert_true(isfinite(v[k]) && v[k] >= 0);
        } else if (rc == EC_EDOM) {
            refused++;
            assert_contains(ec_ctx_errmsg(ctx), "gpu_step_s");
        } else {
            assert_true(rc == EC_EINVAL || rc == EC_ENOTSUP);
        }
    }
    assert_true(ok > 100 && refused > 0);
    gsl_rng_free(r);
    ec_ctx_free(ctx);
}

/* A run value of 1e-320 made the MAPE infinite; a header-only file reported n 0 MAPE 0. */
static void test_run_values(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "runs.csv");
    static const char *const bad[][2] = {
        {"id,model,gpu,batch_per_gpu,metric,value\nr1,bert-base,t4,16,samples_per_s,1e-320\n", "runs.csv:2:6"},
        {"id,model,gpu,batch_per_gpu,metric,value\nr1,bert-base,t4,16,samples_per_s,1e300\n", "out of range"},
        {"id,model,gpu,batch_per_gpu,metric,value\n", "no runs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ec_test_write_file(path, bad[i][0], strlen(bad[i][0]));
        ec_runs *runs = (ec_runs *)&runs;
        assert_int_not_equal(ec_runs_load(ctx, path, &runs), EC_OK);
        assert_null(runs);
        assert_contains(ec_ctx_errmsg(ctx), bad[i][1]);
    }
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- 4. checked products of counts ------------------------------------------------------ */

static void test_products(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    int64_t p = 0;
    /* 46340^2 = 2147395600 <= INT_MAX = 2147483647 < 46341^2 = 2147488281 */
    const eci_factor fits[] = {{"a", 46340}, {"b", 46340}};
    const eci_factor over[] = {{"a", 46341}, {"b", 46341}};
    assert_int_equal(eci_product(ctx, fits, 2, INT_MAX, "things", &p), EC_OK);
    assert_true(p == (int64_t)46340 * 46340);
    assert_int_equal(eci_product(ctx, over, 2, INT_MAX, "things", &p), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "a x b = 46341 x 46341 is more than 2147483647 things");
    /* a zero factor makes any product fit; values near INT64_MAX never overflow */
    const eci_factor zero[] = {{"a", INT64_MAX}, {"b", INT64_MAX}, {"c", 0}};
    assert_int_equal(eci_product(ctx, zero, 3, INT_MAX, "things", &p), EC_OK);
    assert_true(p == 0);
    const eci_factor huge[] = {{"a", INT64_MAX}, {"b", INT64_MAX}, {"c", 3}};
    assert_int_equal(eci_product(ctx, huge, 3, INT64_MAX, "things", &p), EC_EINVAL);
    ec_ctx_free(ctx);

    /* The reproducer: batch_per_gpu x num_gpus overflowed int (UBSan aborted). */
    ctx = ec_test_ctx();
    ec_result res;
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=32768 num_gpus=65536 strategy=dp",
                                   &res, "batch_per_gpu x num_gpus x grad_accum = 32768 x 65536 x 1"), EC_EINVAL);
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=1048576 seq_len=1048576", &res,
                                   "batch_per_gpu x seq_len"), EC_EINVAL);
    assert_int_equal(predict_words(ctx, "model=resnet50 gpu=t4 batch_per_gpu=1048576 image_size=65536", &res,
                                   "image_size"), EC_EINVAL);
    /* the evaluation step's batch (issue 19's eval_batch) obeys the same bounds */
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 seq_len=1048576 eval_batch=4096 "
                                   "eval_samples=100 dataset_samples=100", &res,
                                   "eval_batch x seq_len = 4096 x 1048576"), EC_EINVAL);
    assert_int_equal(predict_words(ctx, "model=resnet50 gpu=t4 batch_per_gpu=8 image_size=65536 eval_batch=1048576 "
                                   "eval_samples=100 dataset_samples=100", &res,
                                   "eval_batch x image_size x image_size"), EC_EINVAL);
    /* ... and ec_max_batch never steps into it */
    ec_config cfg;
    assert_int_equal(set_words(ctx, &cfg, "model=bert-base gpu=a100-sxm4-80gb num_gpus=65536 strategy=dp"), EC_OK);
    int b = -1;
    int rc = ec_max_batch(ctx, &cfg, 1048576, &b);
    assert_true(rc == EC_OK || rc == EC_EINVAL);
    ec_ctx_free(ctx);
}

/* ---- 6. paths in run records ----------------------------------------------------------------- */

static void test_run_paths(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *sub = ec_test_path(dir, "sub");
    assert_int_equal(mkdir(sub, 0700), 0);
    char *hist = ec_test_path(sub, "hist.csv");
    ec_test_write_file(hist, "tokens,count\n40,3\n90,1\n", 23);
    char *runs_path = ec_test_path(sub, "runs.csv");
    char *link = ec_test_path(sub, "secret.csv");
    char *outside = ec_test_path(dir, "outside.csv");
    ec_test_write_file(outside, "password-123\n", 13);
    char *hist_out = ec_test_path(dir, "hist_out.csv");
    ec_test_write_file(hist_out, "tokens,count\n40,3\n90,1\n", 23);
    assert_int_equal(symlink(outside, link), 0);
    char *fifo = ec_test_path(sub, "fifo.csv");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    static const char header[] = "id,model,gpu,batch_per_gpu,seq_len,padding,lengths,metric,value\n";
    char text[1024];
    static const struct { const char *cell; unsigned flags; int code; const char *want; } cases[] = {
        {"hist.csv", 0, EC_OK, NULL},
        {"./hist.csv", 0, EC_OK, NULL},
        {"sub2/../hist.csv", 0, EC_EIO, "cannot open"}, /* no sub2: the path is looked at, inside */
        {"../sub/hist.csv", 0, EC_EINVAL, "is outside"}, /* climbs out, even to come back */
        {"../outside.csv", 0, EC_EINVAL, "is outside the run file's folder"},
        {"/etc/passwd", 0, EC_EINVAL, "is outside the run file's folder"},
        {"/dev/stdin", 0, EC_EINVAL, "is outside"},
        {"secret.csv", 0, EC_EINVAL, "through a link"},
        {"fifo.csv", 0, EC_EINVAL, "not a regular file (a FIFO or pipe)"},
        {"fifo.csv", EC_RUNS_ALLOW_PATHS, EC_EINVAL, "not a regular file"},
        {"../hist_out.csv", EC_RUNS_ALLOW_PATHS, EC_OK, NULL},
        {"missing.csv", 0, EC_EIO, "cannot open 'missing.csv'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text, "%sr1,bert-base,t4,16,128,dynamic,%s,samples_per_s,150\n", header, cases[i].cell);
        ec_test_write_file(runs_path, text, strlen(text));
        ec_runs *runs = NULL;
        int rc = ec_runs_load_v2(ctx, runs_path, cases[i].flags, &runs);
        if (rc != cases[i].code)
            fail_msg("lengths=%s: %d, want %d: %s", cases[i].cell, rc, cases[i].code, ec_ctx_errmsg(ctx));
        if (rc == EC_OK) {
            /* resolved: an absolute path, which predicts from any current folder */
            const ec_run *r = ec_runs_get(runs, 0);
            assert_true(r->config.lengths[0] == '/');
            ec_result res;
            if (ec_predict(ctx, &r->config, &res) != EC_OK)
                fail_msg("lengths=%s: %s", cases[i].cell, ec_ctx_errmsg(ctx));
        } else {
            assert_contains(ec_ctx_errmsg(ctx), cases[i].want);
            assert_contains(ec_ctx_errmsg(ctx), "key 'lengths'");
            assert_true(strstr(ec_ctx_errmsg(ctx), "password") == NULL);
        }
        ec_runs_free(runs);
    }
    /* A file that is not the CSV asked for: its first line is never suggested. */
    ec_config cfg;
    assert_int_equal(set_words(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=8 padding=dynamic"), EC_OK);
    eci_strlcpy(cfg.lengths, outside, sizeof cfg.lengths);
    ec_result res;
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "missing column 'tokens'");
    assert_true(strstr(ec_ctx_errmsg(ctx), "password") == NULL);
    /* A FIFO given straight (lengths=/dev/stdin) is refused without blocking. */
    eci_strlcpy(cfg.lengths, fifo, sizeof cfg.lengths);
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "not a regular file");

    remove(fifo);
    remove(link);
    remove(runs_path);
    remove(hist);
    rmdir(sub);
    ec_test_rmtree(dir);
    free(fifo);
    free(hist_out);
    free(outside);
    free(link);
    free(runs_path);
    free(hist);
    free(sub);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- 7. bounded memory ------------------------------------------------------------------------ */

/* A 64 MiB file of commas cost 1.44 GB: the header's empty name is refused at the first comma;
 * streamed rows hold one block's worth of memory whatever the file's size. */
static void test_stream_bounded(void **state)
{
    (void)state;
    peak_alloc pa;
    ec_ctx *ctx = peak_ctx(&pa, 0);
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "commas.csv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int i = 0; i < (8 << 20); i++)
        fputc(',', f);
    assert_int_equal(fclose(f), 0);
    eci_table *t = NULL;
    assert_int_equal(eci_table_open(ctx, path, &t), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "empty column name");
    assert_true(pa.peak < ((size_t)1 << 20));

    /* 200,000 rows (about 9 MB): rows come a block at a time with their own line numbers. */
    write_runs(path, 200000);
    pa.peak = pa.live;
    assert_int_equal(eci_table_open(ctx, path, &t), EC_OK);
    size_t rows = 0, windows = 0, max_window = 0;
    double frac = 0;
    while (eci_table_rows(t) > 0) {
        size_t n = eci_table_rows(t);
        for (size_t r = 0; r < n; r++) {
            /* data row k (from 0) is on line k + 2 and has id run-k */
            assert_int_equal(eci_table_line(t, r), rows + r + 2);
            char id[32];
            snprintf(id, sizeof id, "run-%zu", rows + r);
            assert_string_equal(eci_table_cell(t, r, 0), id);
        }
        rows += n;
        windows++;
        max_window = n > max_window ? n : max_window;
        assert_true(eci_table_read_frac(t) >= frac);
        frac = eci_table_read_frac(t);
        assert_int_equal(eci_table_next(t), EC_OK);
    }
    assert_int_equal(rows, 200000);
    assert_true(windows > 100);
    assert_true(max_window < 3000); /* a 64 KiB block of 45-byte rows */
    assert_rel(eci_table_read_frac(t), 1.0, EC_TOL_EXACT);
    eci_table_free(t);
    assert_true(pa.peak - 0 < ((size_t)2 << 20));

    /* The run reader over the same file: a block of rows and the ids seen (about 32 bytes
     * each, for the duplicate check), never the 2 KiB per run of ec_runs_load. */
    ec_ctx_free(ctx);
    ctx = peak_ctx(&pa, 1);
    size_t base = pa.live;
    ec_runs_reader *rd = NULL;
    assert_int_equal(ec_runs_open(ctx, path, 0, &rd), EC_OK);
    const ec_run *r = NULL;
    size_t n = 0;
    while (ec_runs_next(rd, &r) == EC_OK && r != NULL)
        n++;
    assert_null(r);
    assert_int_equal(n, 200000);
    ec_runs_close(rd);
    assert_true(pa.peak - base < ((size_t)24 << 20));
    assert_int_equal(pa.live, base);
    ec_ctx_free(ctx);

    ec_test_rmtree(dir);
    free(path);
    free(dir);
}

/* Columns and cells are capped as they are read; FIFOs and devices are refused at open. */
static void test_table_caps(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    size_t n = 1100 * 6;
    char *text = malloc(n + 2);
    assert_non_null(text);
    size_t k = 0;
    for (int c = 0; c < 1100; c++)
        k += (size_t)snprintf(text + k, n + 2 - k, "%sc%03d", c ? "," : "", c % 1000);
    eci_table *t = NULL;
    assert_int_equal(eci_table_parse(ctx, "wide.csv", text, k, &t), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "more than 1024 columns");
    free(text);

    size_t big = ((size_t)1 << 20) + 10;
    char *cell = malloc(big + 16);
    assert_non_null(cell);
    memcpy(cell, "a\n\"", 3);
    memset(cell + 3, 'x', big);
    assert_int_equal(eci_table_parse(ctx, "big.csv", cell, big + 3, &t), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "big.csv:2:1: a cell longer than");
    free(cell);

    char *dir = ec_test_tmpdir();
    char *fifo = ec_test_path(dir, "fifo.csv");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(eci_table_load(ctx, fifo, &t), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "not a regular file (a FIFO or pipe)");
    assert_int_equal(eci_table_open(ctx, "/dev/zero", &t), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "a device");
    remove(fifo);
    ec_test_rmtree(dir);
    free(fifo);
    free(dir);
    ec_ctx_free(ctx);
}

static int stop_at(void *ud, const char *what, double done, double total)
{
    (void)done;
    (void)total;
    const char *want = ((const char **)ud)[0];
    return strcmp(what, want) == 0;
}

/* Long loads and fits report progress and stop when asked (a time budget, Ctrl-C). */
static void test_cancel(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "runs.csv");
    write_runs(path, 5000);
    const char *what[] = {"load runs"};
    ec_ctx_set_progress(ctx, stop_at, what);
    ec_runs *runs = (ec_runs *)&runs;
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_ECANCELED);
    assert_null(runs);
    assert_contains(ec_ctx_errmsg(ctx), "load runs: cancelled");
    ec_ctx_set_progress(ctx, NULL, NULL);
    write_runs(path, 40);
    assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
    what[0] = "calibrate";
    ec_ctx_set_progress(ctx, stop_at, what);
    ec_fit_report rep;
    assert_int_equal(ec_calibrate(ctx, runs, NULL, &rep), EC_ECANCELED);
    assert_int_equal(ec_ctx_progress(ctx, "calibrate", 1, 2), EC_ECANCELED);
    assert_int_equal(ec_ctx_progress(ctx, "sweep", 1, 2), EC_OK);
    ec_runs_free(runs);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- 8. smaller ones ----------------------------------------------------------------------- */

static void test_small_checks(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    /* an unknown topology is refused with one GPU too (the hardware's own links only matter
     * from two GPUs: a sweep over num_gpus keeps its one-GPU point) */
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 topology=nvlnk", &res,
                                   "key 'topology'"), EC_EINVAL);
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 topology=pcie-host", &res, NULL), EC_OK);
    assert_int_equal(predict_words(ctx, "model=vit-b16 gpu=t4 batch_per_gpu=8 image_size=8", &res,
                                   "key 'image_size': 8 pixels is smaller than the 16-pixel kernel"), EC_EINVAL);
    assert_int_equal(predict_words(ctx, "model=vit-b16 gpu=t4 batch_per_gpu=8 image_size=16", &res, NULL), EC_OK);
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 dataset_samples=0.5", &res,
                                   "key 'dataset_samples'"), EC_EINVAL);
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 eval_samples=10.25", &res,
                                   "whole number"), EC_EINVAL);
    /* a lengths= file names its key */
    assert_int_equal(predict_words(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 padding=dynamic lengths=1e9", &res,
                                   "key 'lengths': 1e9: cannot open"), EC_EIO);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates_have_a_floor),
        cmocka_unit_test(test_mfu_at_most_one),
        cmocka_unit_test(test_run_values),
        cmocka_unit_test(test_products),
        cmocka_unit_test(test_run_paths),
        cmocka_unit_test(test_stream_bounded),
        cmocka_unit_test(test_table_caps),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_small_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
