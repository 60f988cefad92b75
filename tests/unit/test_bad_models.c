/*
 * test_bad_models.c: the corpus of broken models/ tables (tests/bad/models/<table>/<case>.csv,
 * written by make_corpus.py).  For each line "<table>/<case>.csv<TAB>message" of
 * tests/bad/models/EXPECTED, the shipped models/ tables are copied into a temporary folder,
 * <table>.csv is replaced by the broken one, and ec_ctx_load_models must fail with a message
 * containing the expected text (file:line:column, or the file and the key or id at fault),
 * leave the context usable and leak nothing (LeakSanitizer in the ASan build).  Every file of
 * the corpus must be listed, so a new case cannot go unchecked.
 * EC_BAD_MODELS_PRINT=1 prints each case's message instead of checking it (to review new cases).
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tables[] = {"gpus", "hosts", "networks", "constants", "profile", "interconnects",
                                     "reference_systems", "attention", "membw", "l2", "gemm", "gemm_shapes",
                                     "sdpa_backends", "conv_algos", "nccl_tuning", "tp_overlap"};

/* A copy of the shipped models/ tables in a new temporary folder. */
static char *copy_models(void)
{
    const char *src = getenv("EPOCHCAST_MODELS");
    assert_non_null(src);
    char *dir = ec_test_tmpdir();
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.csv", tables[i]);
        char *from = ec_test_path(src, name), *to = ec_test_path(dir, name);
        size_t len;
        char *data = ec_test_read_file(from, &len);
        if (data == NULL)
            fail_msg("cannot read %s", from);
        ec_test_write_file(to, data, len);
        free(data);
        free(from);
        free(to);
    }
    ec_test_link_networks(dir);
    return dir;
}

/* Load models from a copy with <table>.csv replaced by bad/models/<case_path>; returns the
 * status and copies the message to msg. */
static int load_with(const char *case_path, char *msg, size_t n)
{
    char *dir = copy_models();
    char table[64];
    snprintf(table, sizeof table, "%.*s.csv", (int)strcspn(case_path, "/"), case_path);
    char src[512];
    snprintf(src, sizeof src, "bad/models/%s", case_path);
    size_t len;
    char *data = ec_test_read_file(src, &len);
    if (data == NULL)
        fail_msg("cannot read %s (run from tests/)", src);
    char *dst = ec_test_path(dir, table);
    ec_test_write_file(dst, data, len);
    free(data);
    free(dst);
    ec_ctx *ctx = ec_test_ctx_bare();
    int rc = ec_ctx_load_models(ctx, dir);
    snprintf(msg, n, "%s", ec_ctx_errmsg(ctx));
    /* A failed load leaves the context empty and reusable: the shipped tables still load. */
    if (rc != EC_OK && ec_ctx_load_models(ctx, getenv("EPOCHCAST_MODELS")) != EC_OK)
        fail_msg("%s: context unusable after a failed load: %s", case_path, ec_ctx_errmsg(ctx));
    ec_ctx_free(ctx);
    ec_test_rmtree(dir);
    free(dir);
    return rc;
}

/* 1 when "<table>/<file>" is a line's first field in the EXPECTED text. */
static int listed(const char *expected, const char *table, const char *file)
{
    char key[600];
    int kl = snprintf(key, sizeof key, "%.64s/%.500s\t", table, file);
    for (const char *p = expected; *p != '\0'; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
        if (strncmp(p, key, (size_t)kl) == 0)
            return 1;
    }
    return 0;
}

static void test_every_case_listed(void **state)
{
    (void)state;
    char *expected = ec_test_read_file("bad/models/EXPECTED", NULL);
    assert_non_null(expected);
    size_t n = 0;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char dir[128];
        snprintf(dir, sizeof dir, "bad/models/%s", tables[i]);
        DIR *d = opendir(dir);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            if (!listed(expected, tables[i], e->d_name))
                fail_msg("%s/%s is not listed in bad/models/EXPECTED", dir, e->d_name);
            n++;
        }
        closedir(d);
    }
    assert_true(n >= 100);
    free(expected);
}

static void test_bad_models_corpus(void **state)
{
    (void)state;
    int print = getenv("EC_BAD_MODELS_PRINT") != NULL;
    char *expected = ec_test_read_file("bad/models/EXPECTED", NULL);
    assert_non_null(expected);
    size_t checked = 0;
    for (char *line = strtok(expected, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *tab = strchr(line, '\t');
        if (tab == NULL)
            fail_msg("bad/models/EXPECTED: no tab in \"%s\"", line);
        *tab = '\0';
        char msg[1024];
        int rc = load_with(line, msg, sizeof msg);
        if (print) {
            printf("%s\t%s\n", line, msg);
            continue;
        }
        if (rc == EC_OK)
            fail_msg("%s: loaded without error", line);
        if (strstr(msg, tab + 1) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", line, msg, tab + 1);
        checked++;
    }
    free(expected);
    assert_true(print || checked >= 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_case_listed),
        cmocka_unit_test(test_bad_models_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
