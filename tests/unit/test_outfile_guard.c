/*
 * test_outfile_guard.c: the output writer's guard and the files it makes (issue 42, items 8
 * and 13), from the library's side: every table and config.json a context reads is an input
 * no writer of that context replaces (whatever name or hard link it is reached by), the files
 * a worker context read become the caller's inputs when merged, nothing is written into the
 * models folder, the remembered inputs are not capped (a ring of 16 forgot the first of 20),
 * and a replaced file is made afresh: no set-ID or execute bit, no more than the read and
 * write bits it had.
 */
#define _DEFAULT_SOURCE /* link, chmod */

#include "ec_test.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_through(ec_ctx *ctx, const char *path)
{
    ec_outfile *f;
    int rc = ec_outfile_open(ctx, path, &f);
    if (rc != EC_OK)
        return rc;
    rc = ec_outfile_write(f, "a,b\n1,2\n", 8);
    if (rc != EC_OK) {
        ec_outfile_abort(f);
        return rc;
    }
    return ec_outfile_commit(f);
}

static void test_inputs_are_kept(void **state)
{
    (void)state;
    char *dir = ec_test_tmpdir();
    ec_ctx *ctx = ec_test_ctx_bare();
    char name[64];
    /* 20 tables read: every one stays an input (the ring of 16 forgot the first four) */
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "t%02d.csv", i);
        char *p = ec_test_path(dir, name);
        ec_test_write_file(p, "a,b\n1,2\n", 8);
        eci_table *t;
        assert_int_equal(eci_table_load(ctx, p, &t), EC_OK);
        eci_table_free(t);
        free(p);
    }
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "t%02d.csv", i);
        char *p = ec_test_path(dir, name);
        assert_int_equal(write_through(ctx, p), EC_EIO);
        assert_contains(ec_ctx_errmsg(ctx), "is an input of this run");
        free(p);
    }
    /* a hard link to an input is the same file */
    char *p0 = ec_test_path(dir, "t00.csv"), *hard = ec_test_path(dir, "hard.csv");
    assert_int_equal(link(p0, hard), 0);
    assert_int_equal(write_through(ctx, hard), EC_EIO);
    /* a config.json read as a model is an input too */
    char *cfg = ec_test_path(dir, "config.json");
    static const char bert[] = "{\"model_type\":\"bert\",\"vocab_size\":30522,\"hidden_size\":768,"
                               "\"num_hidden_layers\":12,\"num_attention_heads\":12,\"intermediate_size\":3072}";
    ec_test_write_file(cfg, bert, sizeof bert - 1);
    eci_arch a;
    assert_int_equal(eci_hf_load(ctx, cfg, &a), EC_OK);
    assert_int_equal(write_through(ctx, cfg), EC_EIO);
    /* another context did not read them: it may write */
    ec_ctx *other = ec_test_ctx_bare();
    assert_int_equal(write_through(other, cfg), EC_OK);
    /* ... until it takes a worker's inputs */
    assert_int_equal(eci_inputs_merge(other, ctx), EC_OK);
    assert_int_equal(write_through(other, p0), EC_EIO);
    ec_ctx_free(other);
    ec_ctx_free(ctx);
    free(p0);
    free(hard);
    free(cfg);
    ec_test_rmtree(dir);
    free(dir);
}

static void test_models_folder(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char target[EC_PATH_MAX + 32];
    snprintf(target, sizeof target, "%s/gpus.csv", ctx->models_dir);
    assert_int_equal(write_through(ctx, target), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "models folder");
    snprintf(target, sizeof target, "%s/networks/new.csv", ctx->models_dir);
    assert_int_equal(write_through(ctx, target), EC_EIO);
    assert_false(ec_test_exists(target));
    ec_ctx_free(ctx);
}

static void test_fresh_file(void **state)
{
    (void)state;
    char *dir = ec_test_tmpdir(), *p = ec_test_path(dir, "out.csv");
    ec_ctx *ctx = ec_test_ctx_bare();
    mode_t mask = umask(022);
    static const struct { mode_t before, after; } cases[] = {
        {06755, 0644}, {04777, 0644}, {01666, 0644}, {0600, 0600}, {0640, 0640}, {0444, 0444}, {0755, 0644},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_test_write_file(p, "old\n", 4);
        assert_int_equal(chmod(p, cases[i].before), 0);
        assert_int_equal(write_through(ctx, p), EC_OK);
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        if ((st.st_mode & 07777) != cases[i].after)
            fail_msg("mode %o replaced by %o, expected %o", (unsigned)cases[i].before, (unsigned)(st.st_mode & 07777),
                     (unsigned)cases[i].after);
        assert_int_equal(st.st_uid, geteuid());
    }
    unlink(p);
    assert_int_equal(write_through(ctx, p), EC_OK); /* a new file: 0666 less the umask */
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    umask(mask);
    ec_ctx_free(ctx);
    free(p);
    ec_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inputs_are_kept),
        cmocka_unit_test(test_models_folder),
        cmocka_unit_test(test_fresh_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
