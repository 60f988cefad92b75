/*
 * test_locate.c: where ec_ctx_load_models(ctx, NULL) reads its data (locate.c,
 * ec_default_models_dir): $EPOCHCAST_MODELS wins when set and not empty, even when the folder
 * does not exist (the load then names it); run from the build tree, the library finds the
 * source tree's models/; a short buffer and a NULL buffer are refused.  The installed cases
 * (PREFIX/lib, PREFIX/bin, PREFIX/lib/lua/5.4 after the prefix moved) are checked by
 * tests/install/test_install.sh.
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The test runs with EPOCHCAST_MODELS set by ctest: each case sets its own and restores it. */
static char *saved_env;

static int save_env(void **state)
{
    (void)state;
    const char *v = getenv("EPOCHCAST_MODELS");
    saved_env = v != NULL ? strdup(v) : NULL;
    return 0;
}

static int restore_env(void **state)
{
    (void)state;
    if (saved_env != NULL)
        setenv("EPOCHCAST_MODELS", saved_env, 1);
    else
        unsetenv("EPOCHCAST_MODELS");
    free(saved_env);
    saved_env = NULL;
    return 0;
}

static void test_env_wins_as_given(void **state)
{
    (void)state;
    char buf[EC_PATH_MAX];
    setenv("EPOCHCAST_MODELS", "/nonexistent/epochcast-models", 1);
    assert_int_equal(ec_default_models_dir(buf, sizeof buf), EC_OK);
    assert_string_equal(buf, "/nonexistent/epochcast-models");

    /* ... and the load names the folder it could not read. */
    ec_ctx *ctx = ec_test_ctx_bare();
    assert_int_equal(ec_ctx_load_models(ctx, NULL), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "/nonexistent/epochcast-models/");
    ec_ctx_free(ctx);
}

static void test_build_tree_reads_source_models(void **state)
{
    (void)state;
    char buf[EC_PATH_MAX];
    const char *src = getenv("EC_SOURCE_DIR");
    for (int empty = 0; empty < 2; empty++) {
        if (empty)
            setenv("EPOCHCAST_MODELS", "", 1); /* empty counts as unset */
        else
            unsetenv("EPOCHCAST_MODELS");
        assert_int_equal(ec_default_models_dir(buf, sizeof buf), EC_OK);
        char *gpus = ec_test_path(buf, "gpus.csv");
        assert_true(ec_test_exists(gpus));
        free(gpus);
        if (src != NULL) { /* this test binary lives in the build tree */
            char *want = ec_test_path(src, "models");
            assert_string_equal(buf, want);
            free(want);
        }
    }
    ec_ctx *ctx = ec_test_ctx_bare();
    assert_int_equal(ec_ctx_load_models(ctx, NULL), EC_OK);
    assert_true(ec_gpu_count(ctx) > 0);
    ec_ctx_free(ctx);
}

static void test_short_and_null_buffers(void **state)
{
    (void)state;
    char buf[8] = "junk";
    setenv("EPOCHCAST_MODELS", "/a/folder/longer/than/eight/bytes", 1);
    assert_int_equal(ec_default_models_dir(buf, sizeof buf), EC_EINVAL);
    assert_string_equal(buf, "");
    assert_int_equal(ec_default_models_dir(NULL, 16), EC_EMISUSE);
    assert_int_equal(ec_default_models_dir(buf, 0), EC_EMISUSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_env_wins_as_given, save_env, restore_env),
        cmocka_unit_test_setup_teardown(test_build_tree_reads_source_models, save_env, restore_env),
        cmocka_unit_test_setup_teardown(test_short_and_null_buffers, save_env, restore_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
