/*
 * test_oom.c: memory-failure injection (issue 7).  For each entry point, allocation k of the
 * call fails, for k = 1, 2, ... until the call succeeds without any failure: every failed
 * call must return EC_ENOMEM with a message (or succeed if it can do without that block),
 * and after freeing everything the test allocator must hold no live block (the ASan build's
 * LeakSanitizer checks the blocks of GSL and libcsv too, which do not go through it).
 * Setup (loading models, reading runs) runs before the failure point is armed.
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    ec_ctx *ctx;
    char *dir;          /* temporary folder for files */
    ec_runs *runs;
    ec_fit_report fit;
} fixture;

/* One operation under test: returns its status; may leave things in fx to free. */
typedef int (*op_fn)(fixture *fx);
typedef int (*setup_fn)(fixture *fx);

static const char runs_csv[] = "id,model,gpu,batch_per_gpu,precision,metric,value,source\n"
                               "r1,bert-base,t4,32,amp_fp16,samples_per_s,150,test\n"
                               "r2,bert-base,a100-sxm4-80gb,32,amp_fp16,samples_per_s,900,test\n"
                               "r3,resnet50,t4,64,amp_fp16,samples_per_s,500,test\n"
                               "r4,resnet50,v100-sxm2-16gb,64,fp32,step_time_ms,190,test\n";

static int setup_models(fixture *fx)
{
    return ec_ctx_load_models(fx->ctx, getenv("EPOCHCAST_MODELS"));
}

static char *file_in(fixture *fx, const char *name)
{
    return ec_test_path(fx->dir, name);
}

static int setup_runs(fixture *fx)
{
    int rc = setup_models(fx);
    char *p = file_in(fx, "runs.csv");
    ec_test_write_file(p, runs_csv, sizeof runs_csv - 1);
    if (rc == EC_OK)
        rc = ec_runs_load(fx->ctx, p, &fx->runs);
    free(p);
    return rc;
}

static int setup_fit(fixture *fx)
{
    int rc = setup_runs(fx);
    return rc == EC_OK ? ec_calibrate(fx->ctx, fx->runs, NULL, &fx->fit) : rc;
}

static int op_load_models(fixture *fx)
{
    return setup_models(fx);
}

static int predict_words(fixture *fx, const char *const *words, size_t n)
{
    ec_config c;
    ec_result res;
    ec_config_init(&c);
    for (size_t i = 0; i < n; i++) {
        int rc = ec_config_set_word(fx->ctx, &c, words[i]);
        if (rc != EC_OK)
            return rc;
    }
    return ec_predict(fx->ctx, &c, &res);
}

static int op_predict(fixture *fx)
{
    static const char *const bert[] = {"model=bert-large", "gpu=t4", "batch_per_gpu=8", "precision=amp_fp16"};
    static const char *const ddp[] = {"model=resnet50", "gpu=a100-sxm4-80gb", "batch_per_gpu=64", "num_gpus=8"};
    int rc = predict_words(fx, bert, 4);
    return rc == EC_OK ? predict_words(fx, ddp, 4) : rc;
}

static int op_predict_profile(fixture *fx)
{
    char word[EC_PATH_MAX + 16];
    snprintf(word, sizeof word, "profile=%s/profile.csv", getenv("EPOCHCAST_MODELS"));
    const char *const words[] = {"model=gpt2", "gpu=l4", "batch_per_gpu=4", word};
    return predict_words(fx, words, 4);
}

static int op_max_batch(fixture *fx)
{
    ec_config c;
    ec_config_init(&c);
    int rc = ec_config_set_word(fx->ctx, &c, "model=bert-base");
    if (rc == EC_OK)
        rc = ec_config_set_word(fx->ctx, &c, "gpu=t4");
    int best = 0;
    return rc == EC_OK ? ec_max_batch(fx->ctx, &c, 0, &best) : rc;
}

static int op_runs_load(fixture *fx)
{
    char *p = file_in(fx, "runs.csv");
    ec_test_write_file(p, runs_csv, sizeof runs_csv - 1);
    int rc = ec_runs_load(fx->ctx, p, &fx->runs);
    free(p);
    return rc;
}

static int op_calibrate(fixture *fx)
{
    return ec_calibrate(fx->ctx, fx->runs, NULL, &fx->fit);
}

static int op_profile_write_read(fixture *fx)
{
    char *p = file_in(fx, "profile.csv");
    int rc = ec_profile_write(fx->ctx, &fx->fit, p);
    ec_fit_report back;
    if (rc == EC_OK)
        rc = ec_profile_read(fx->ctx, p, &back);
    free(p);
    return rc;
}

static int op_csv(fixture *fx)
{
    char *p = file_in(fx, "out.csv");
    ec_csv_writer *w;
    const char *const row[] = {"a", "b,c", "d\"e"};
    int rc = ec_csv_open(fx->ctx, p, &w);
    for (int i = 0; rc == EC_OK && i < 100; i++)
        if ((rc = ec_csv_row(w, row, 3)) != EC_OK)
            ec_csv_abort(w);
    if (rc == EC_OK)
        rc = ec_csv_close(w);
    free(p);
    return rc;
}

/* Run op with allocation k (counted from the op's start) failing, for every k. */
static void fail_each_allocation(const char *name, setup_fn setup, op_fn op)
{
    long k;
    for (k = 1; k < 100000; k++) {
        ec_test_failalloc fa;
        fixture fx = {0};
        ec_test_failalloc_init(&fa, 0, 0);
        assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &fx.ctx), EC_OK);
        fx.dir = ec_test_tmpdir();
        if (setup != NULL && setup(&fx) != EC_OK)
            fail_msg("%s: setup: %s", name, ec_ctx_errmsg(fx.ctx));
        fa.fail_at = fa.count + k;
        int rc = op(&fx);
        long failures = fa.failures;
        if (failures > 0 && rc != EC_OK && rc != EC_ENOMEM)
            fail_msg("%s: allocation %ld failed, status %d (%s) instead of EC_ENOMEM", name, k, rc,
                     ec_ctx_errmsg(fx.ctx));
        if (rc == EC_ENOMEM && ec_ctx_errmsg(fx.ctx)[0] == '\0')
            fail_msg("%s: allocation %ld: EC_ENOMEM without a message", name, k);
        if (failures == 0 && rc != EC_OK)
            fail_msg("%s: failed without an injected failure: %s", name, ec_ctx_errmsg(fx.ctx));
        ec_runs_free(fx.runs);
        ec_ctx_free(fx.ctx);
        ec_test_rmtree(fx.dir);
        free(fx.dir);
        if (fa.live_blocks != 0 || fa.bad_osize != 0)
            fail_msg("%s: allocation %ld failed: %ld blocks (%zu bytes) leaked, %ld wrong sizes", name, k,
                     fa.live_blocks, fa.live_bytes, fa.bad_osize);
        if (failures == 0)
            break; /* the op needed fewer than k allocations: all failure points covered */
    }
    print_message("%s: %ld allocation failure points\n", name, k - 1);
}

static void test_ctx_new(void **state)
{
    (void)state;
    ec_test_failalloc fa;
    ec_test_failalloc_init(&fa, 1, 0);
    ec_ctx *ctx = (ec_ctx *)&fa; /* must be reset to NULL */
    assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx), EC_ENOMEM);
    assert_null(ctx);
    assert_int_equal(fa.live_blocks, 0);
}

static void test_load_models(void **state) { (void)state; fail_each_allocation("ec_ctx_load_models", NULL, op_load_models); }
static void test_predict(void **state) { (void)state; fail_each_allocation("ec_predict", setup_models, op_predict); }
static void test_predict_profile(void **state) { (void)state; fail_each_allocation("ec_predict profile=", setup_models, op_predict_profile); }
static void test_max_batch(void **state) { (void)state; fail_each_allocation("ec_max_batch", setup_models, op_max_batch); }
static void test_runs_load(void **state) { (void)state; fail_each_allocation("ec_runs_load", setup_models, op_runs_load); }
static void test_calibrate(void **state) { (void)state; fail_each_allocation("ec_calibrate", setup_runs, op_calibrate); }
static void test_profile(void **state) { (void)state; fail_each_allocation("ec_profile_write/read", setup_fit, op_profile_write_read); }
static void test_csv(void **state) { (void)state; fail_each_allocation("ec_csv_*", NULL, op_csv); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctx_new),      cmocka_unit_test(test_load_models), cmocka_unit_test(test_predict),
        cmocka_unit_test(test_predict_profile), cmocka_unit_test(test_max_batch), cmocka_unit_test(test_runs_load),
        cmocka_unit_test(test_calibrate),    cmocka_unit_test(test_profile),     cmocka_unit_test(test_csv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
