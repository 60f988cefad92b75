/*
 * test_csvout.c: the CSV writer (core/src/csvout.c): what it writes reads back
 * identically through eci_table_parse, and a failed or abandoned write leaves neither
 * PATH nor PATH.tmp behind.
 */
#include "ec_test.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp_name(const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + 5);
    assert_non_null(p);
    memcpy(p, path, n);
    memcpy(p + n, ".tmp", 5);
    return p;
}

static void test_round_trip(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "out.csv");
    char *tmp = tmp_name(path);
    /* Fields that need quoting (comma, quote, LF, CRLF, outer blanks), UTF-8, empty ones. */
    static const char *const rows[][4] = {
        {"id", "text", "value_s", "note"},
        {"a", "plain", "1.5", ""},
        {"b,c", "say \"hi\"", "2e-3", "two\nlines"},
        {" lead", "trail\t", "", "crlf\r\nend"},
        {"Größe", "µs, ≤ 5 €", "😀", "\"\""},
        {"", "", "", ""},
    };
    const size_t nrows = sizeof rows / sizeof rows[0];
    ec_csv_writer *w = NULL;
    assert_int_equal(ec_csv_open(ctx, path, &w), EC_OK);
    assert_non_null(w);
    assert_true(ec_test_exists(tmp));
    assert_false(ec_test_exists(path));
    for (size_t r = 0; r < nrows; r++)
        assert_int_equal(ec_csv_row(w, rows[r], 4), EC_OK);
    assert_int_equal(ec_csv_close(w), EC_OK);
    assert_true(ec_test_exists(path));
    assert_false(ec_test_exists(tmp));

    size_t len = 0;
    char *text = ec_test_read_file(path, &len);
    assert_non_null(text);
    /* Plain fields are written bare and rows end with LF. */
    assert_true(strncmp(text, "id,text,value_s,note\na,plain,1.5,\n", 34) == 0);
    eci_table *t = NULL;
    if (eci_table_parse(ctx, path, text, len, &t) != EC_OK)
        fail_msg("read back: %s", ec_ctx_errmsg(ctx));
    assert_int_equal(eci_table_rows(t), nrows - 1);
    for (size_t c = 0; c < 4; c++)
        assert_string_equal(eci_table_header(t, c), rows[0][c]);
    for (size_t r = 1; r < nrows; r++)
        for (int c = 0; c < 4; c++)
            assert_string_equal(eci_table_cell(t, r - 1, c), rows[r][c]);
    eci_table_free(t);
    free(text);

    /* A one-column table with an empty cell: the row must not become a blank line. */
    static const char *const one[][1] = {{"x"}, {""}, {"y"}};
    assert_int_equal(ec_csv_open(ctx, path, &w), EC_OK);
    for (size_t r = 0; r < 3; r++)
        assert_int_equal(ec_csv_row(w, one[r], 1), EC_OK);
    assert_int_equal(ec_csv_close(w), EC_OK);
    assert_int_equal(eci_table_load(ctx, path, &t), EC_OK);
    assert_int_equal(eci_table_rows(t), 2);
    assert_string_equal(eci_table_cell(t, 0, 0), "");
    assert_string_equal(eci_table_cell(t, 1, 0), "y");
    eci_table_free(t);

    ec_test_rmtree(dir);
    free(tmp);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

static void test_abort(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "aborted.csv");
    char *tmp = tmp_name(path);
    ec_csv_writer *w = NULL;
    static const char *const row[] = {"a", "b"};
    assert_int_equal(ec_csv_open(ctx, path, &w), EC_OK);
    assert_int_equal(ec_csv_row(w, row, 2), EC_OK);
    ec_csv_abort(w);
    assert_false(ec_test_exists(path));
    assert_false(ec_test_exists(tmp));
    ec_csv_abort(NULL);

    /* Abort leaves an existing PATH as it was. */
    ec_test_write_file(path, "old\n", 4);
    assert_int_equal(ec_csv_open(ctx, path, &w), EC_OK);
    assert_int_equal(ec_csv_row(w, row, 2), EC_OK);
    ec_csv_abort(w);
    char *text = ec_test_read_file(path, NULL);
    assert_string_equal(text, "old\n");
    assert_false(ec_test_exists(tmp));
    free(text);

    ec_test_rmtree(dir);
    free(tmp);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

static void test_errors(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *nodir = ec_test_path(dir, "no/such/dir/out.csv");
    ec_csv_writer *w = (ec_csv_writer *)1;
    /* A folder that does not exist: EC_EIO naming the temporary path. */
    assert_int_equal(ec_csv_open(ctx, nodir, &w), EC_EIO);
    assert_null(w);
    assert_contains(ec_ctx_errmsg(ctx), nodir);
    assert_contains(ec_ctx_errmsg(ctx), "No such file or directory");

    /* Misuse. */
    assert_int_equal(ec_csv_open(ctx, NULL, &w), EC_EMISUSE);
    assert_int_equal(ec_csv_open(ctx, "", &w), EC_EMISUSE);
    assert_int_equal(ec_csv_open(ctx, "x.csv", NULL), EC_EMISUSE);
    assert_int_equal(ec_csv_open(NULL, "x.csv", &w), EC_EMISUSE);
    assert_int_equal(ec_csv_row(NULL, NULL, 0), EC_EMISUSE);
    assert_int_equal(ec_csv_close(NULL), EC_EMISUSE);

    char *path = ec_test_path(dir, "m.csv");
    assert_int_equal(ec_csv_open(ctx, path, &w), EC_OK);
    static const char *const with_null[] = {"a", NULL};
    assert_int_equal(ec_csv_row(w, with_null, 2), EC_EMISUSE);
    assert_int_equal(ec_csv_row(w, with_null, 0), EC_EMISUSE);
    ec_csv_abort(w);

    /* Renaming onto a directory fails: EC_EIO naming PATH, and no .tmp is left. */
    char *sub = ec_test_path(dir, "sub");
    char *subfile = ec_test_path(sub, "f");
    char *subtmp = tmp_name(sub);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir '%s' && touch '%s'", sub, subfile);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(ec_csv_open(ctx, sub, &w), EC_OK);
    assert_int_equal(ec_csv_row(w, with_null, 1), EC_OK);
    assert_int_equal(ec_csv_close(w), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), sub);
    assert_false(ec_test_exists(subtmp));
    remove(subfile);
    remove(sub);

    /* A full device: every write fails at close at the latest, and nothing is left. */
    if (ec_test_exists("/dev/full")) {
        ec_csv_writer *wf = NULL;
        /* /dev/full.tmp cannot be created by a normal user; write through a link instead. */
        char *link = ec_test_path(dir, "full.csv");
        char *linktmp = tmp_name(link);
        snprintf(cmd, sizeof cmd, "ln -s /dev/full '%s'", linktmp);
        if (system(cmd) == 0) {
            assert_int_equal(ec_csv_open(ctx, link, &wf), EC_OK);
            int rc = EC_OK;
            static const char *const big[] = {"0123456789abcdef0123456789abcdef"};
            for (int i = 0; i < 100000 && rc == EC_OK; i++)
                rc = ec_csv_row(wf, big, 1);
            if (rc == EC_OK)
                rc = ec_csv_close(wf);
            else
                assert_int_equal(ec_csv_close(wf), EC_EIO);
            assert_int_equal(rc, EC_EIO);
            assert_contains(ec_ctx_errmsg(ctx), link);
            assert_false(ec_test_exists(link));
            remove(linktmp); /* the link itself, if remove() of a failed write kept it */
        }
        free(linktmp);
        free(link);
    }

    ec_test_rmtree(dir);
    free(subtmp);
    free(subfile);
    free(sub);
    free(path);
    free(nodir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Every allocation of open failing in turn gives EC_ENOMEM and leaks nothing. */
static void test_oom(void **state)
{
    (void)state;
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "oom.csv");
    int succeeded = 0;
    for (long n = 1; n < 100 && !succeeded; n++) {
        ec_test_failalloc fa;
        ec_test_failalloc_init(&fa, 0, 0);
        ec_ctx *ctx = NULL;
        assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx), EC_OK);
        fa.fail_at = fa.count + n;
        ec_csv_writer *w = NULL;
        int rc = ec_csv_open(ctx, path, &w);
        if (rc == EC_OK) {
            static const char *const row[] = {"a"};
            assert_int_equal(ec_csv_row(w, row, 1), EC_OK);
            assert_int_equal(ec_csv_close(w), EC_OK);
            succeeded = 1;
        } else {
            assert_int_equal(rc, EC_ENOMEM);
        }
        ec_ctx_free(ctx);
        assert_int_equal(fa.live_bytes, 0);
        assert_int_equal(fa.bad_osize, 0);
    }
    assert_true(succeeded);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
