/*
 * test_csvout.c: the CSV writer (core/src/base/csvout.c) and the output-file writer under it
 * (core/src/base/outfile.c): what it writes reads back identically through eci_table_parse; a
 * failed, abandoned or cancelled write leaves no file behind; and (issue 20, defect 2) it
 * cannot be turned against other files: a link planted at the old fixed temporary name, a
 * link or device at the target, the user's own PATH.tmp, a private file's mode, an input of
 * the run, two writers at once.
 */
#define _DEFAULT_SOURCE /* mknod, makedev, mkfifo, symlink, fork */

#include "ec_test.h"
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Entries of a folder other than . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Write rows of one field each ("x", then the given cells) to path; the status of close. */
static int write_rows(ec_ctx *ctx, const char *path, const char *cell, int n)
{
    ec_csv_writer *w = NULL;
    int rc = ec_csv_open(ctx, path, &w);
    if (rc != EC_OK)
        return rc;
    const char *row[] = {cell};
    for (int i = 0; i < n && rc == EC_OK; i++)
        rc = ec_csv_row(w, row, 1);
    if (rc != EC_OK) {
        ec_csv_abort(w);
        return rc;
    }
    return ec_csv_close(w);
}

static void test_round_trip(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "out.csv");
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
    assert_int_equal(dir_entries(dir), 1); /* the temporary only */
    assert_false(ec_test_exists(path));
    for (size_t r = 0; r < nrows; r++)
        assert_int_equal(ec_csv_row(w, rows[r], 4), EC_OK);
    assert_int_equal(ec_csv_close(w), EC_OK);
    assert_true(ec_test_exists(path));
    assert_int_equal(dir_entries(dir), 1); /* the file, no temporary */

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
    ec_csv_writer *w = NULL;
    static const char *const row[] = {"a", "b"};
    assert_int_equal(ec_csv_open(ctx, path, &w), EC_OK);
    assert_int_equal(ec_csv_row(w, row, 2), EC_OK);
    ec_csv_abort(w);
    assert_false(ec_test_exists(path));
    assert_int_equal(dir_entries(dir), 0);
    ec_csv_abort(NULL);

    /* Abort leaves an existing PATH as it was. */
    ec_test_write_file(path, "old\n", 4);
    assert_int_equal(ec_csv_open(ctx, path, &w), EC_OK);
    assert_int_equal(ec_csv_row(w, row, 2), EC_OK);
    ec_csv_abort(w);
    char *text = ec_test_read_file(path, NULL);
    assert_string_equal(text, "old\n");
    assert_int_equal(dir_entries(dir), 1);
    free(text);

    ec_test_rmtree(dir);
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
    /* A folder that does not exist: EC_EIO naming the path. */
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

    /* A folder as the target: refused at open, nothing created. */
    char *sub = ec_test_path(dir, "sub");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir '%s'", sub);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(ec_csv_open(ctx, sub, &w), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "not a regular file");
    assert_int_equal(dir_entries(dir), 1);
    remove(sub);

    ec_test_rmtree(dir);
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

/* ---- issue 20, defect 2: the writer cannot be turned against other files ---------------- */

static char *read_all(const char *path)
{
    char *text = ec_test_read_file(path, NULL);
    assert_non_null(text);
    return text;
}

static int is_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* A link planted at the old fixed temporary name PATH.tmp is neither followed nor consumed,
 * and neither is a file of the user's at that name. */
static void test_planted_temp_name(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *victim = ec_test_path(dir, "victim.txt");
    char *out = ec_test_path(dir, "out.csv");
    char *plant = ec_test_path(dir, "out.csv.tmp");
    ec_test_write_file(victim, "precious\n", 9);
    assert_int_equal(symlink(victim, plant), 0);
    assert_int_equal(write_rows(ctx, out, "row", 3), EC_OK);
    char *text = read_all(victim);
    assert_string_equal(text, "precious\n");
    free(text);
    assert_true(is_link(plant));
    text = read_all(out);
    assert_string_equal(text, "row\nrow\nrow\n");
    free(text);

    /* The user's own out.csv.tmp stays as it was. */
    remove(plant);
    ec_test_write_file(plant, "mine\n", 5);
    assert_int_equal(write_rows(ctx, out, "again", 1), EC_OK);
    text = read_all(plant);
    assert_string_equal(text, "mine\n");
    free(text);
    assert_int_equal(dir_entries(dir), 3);

    ec_test_rmtree(dir);
    free(plant);
    free(out);
    free(victim);
    free(dir);
    ec_ctx_free(ctx);
}

/* A target that is a link (to a file or to /dev/null), a FIFO or a device is refused and left
 * as it was; nothing is created beside it. */
static void test_target_not_regular(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *victim = ec_test_path(dir, "victim.txt");
    char *link = ec_test_path(dir, "link.csv");
    char *null_link = ec_test_path(dir, "null.csv");
    char *fifo = ec_test_path(dir, "fifo.csv");
    ec_test_write_file(victim, "precious\n", 9);
    assert_int_equal(symlink(victim, link), 0);
    assert_int_equal(symlink("/dev/null", null_link), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);

    assert_int_equal(write_rows(ctx, link, "x", 1), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "symbolic link");
    assert_true(is_link(link));
    char *text = read_all(victim);
    assert_string_equal(text, "precious\n");
    free(text);

    assert_int_equal(write_rows(ctx, null_link, "x", 1), EC_EIO);
    assert_true(is_link(null_link));

    assert_int_equal(write_rows(ctx, fifo, "x", 1), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "a FIFO");
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));

    /* A device node itself: our own null device where root can make one, never the system's
     * /dev/null (the old writer replaced it with a regular file when run as root). */
    char *dev = ec_test_path(dir, "dev");
    int own = mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0;
    if (own || geteuid() != 0) {
        const char *node = own ? dev : "/dev/null";
        assert_int_equal(write_rows(ctx, node, "x", 1), EC_EIO);
        assert_contains(ec_ctx_errmsg(ctx), "a device");
        assert_int_equal(lstat(node, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
    free(dev);

    assert_int_equal(dir_entries(dir), 4 + own);
    ec_test_rmtree(dir);
    free(fifo);
    free(null_link);
    free(link);
    free(victim);
    free(dir);
    ec_ctx_free(ctx);
}

/* A private file (mode 600) stays private; a new file gets 0666 less the umask. */
static void test_mode_kept(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *priv = ec_test_path(dir, "private.csv");
    char *fresh = ec_test_path(dir, "fresh.csv");
    ec_test_write_file(priv, "old\n", 4);
    assert_int_equal(chmod(priv, 0600), 0);
    assert_int_equal(write_rows(ctx, priv, "new", 1), EC_OK);
    struct stat st;
    assert_int_equal(stat(priv, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(chmod(priv, 0640), 0);
    assert_int_equal(write_rows(ctx, priv, "newer", 1), EC_OK);
    assert_int_equal(stat(priv, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);

    mode_t old = umask(027);
    assert_int_equal(write_rows(ctx, fresh, "x", 1), EC_OK);
    umask(old);
    assert_int_equal(stat(fresh, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);

    ec_test_rmtree(dir);
    free(fresh);
    free(priv);
    free(dir);
    ec_ctx_free(ctx);
}

/* A file the context read as an input (a run-record file) is never replaced. */
static void test_input_refused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *runs_path = ec_test_path(dir, "runs.csv");
    char *other = ec_test_path(dir, "other.csv");
    static const char runs_text[] = "id,model,gpu,batch_per_gpu,metric,value\n"
                                     "r1,bert-base,t4,16,samples_per_s,100\n";
    ec_test_write_file(runs_path, runs_text, sizeof runs_text - 1);
    ec_runs *runs = NULL;
    assert_int_equal(ec_runs_load(ctx, runs_path, &runs), EC_OK);
    assert_int_equal(write_rows(ctx, runs_path, "x", 1), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "input");
    char *text = read_all(runs_path);
    assert_string_equal(text, runs_text);
    free(text);
    /* Also under another name (a hard link). */
    assert_int_equal(link(runs_path, other), 0);
    assert_int_equal(write_rows(ctx, other, "x", 1), EC_EIO);
    assert_int_equal(dir_entries(dir), 2);
    ec_runs_free(runs);
    ec_test_rmtree(dir);
    free(other);
    free(runs_path);
    free(dir);
    ec_ctx_free(ctx);
}

/* Two processes writing one path at once: both succeed, and the file is one of the two
 * complete outputs, never a mix (with one shared PATH.tmp their rows interleaved). */
static void test_concurrent_writers(void **state)
{
    (void)state;
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "shared.csv");
    enum { ROWS = 20000 };
    static const char *const cells[2] = {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                         "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"};
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
        pid[k] = fork();
        assert_true(pid[k] >= 0);
        if (pid[k] == 0) {
            ec_ctx *ctx = NULL;
            if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK)
                _exit(2);
            int rc = write_rows(ctx, path, cells[k], ROWS);
            ec_ctx_free(ctx);
            _exit(rc == EC_OK ? 0 : 1);
        }
    }
    for (int k = 0; k < 2; k++) {
        int status = 0;
        assert_int_equal(waitpid(pid[k], &status, 0), pid[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    size_t len = 0;
    char *text = ec_test_read_file(path, &len);
    assert_non_null(text);
    size_t row_len = strlen(cells[0]) + 1;
    assert_int_equal(len, ROWS * row_len);
    int which = text[0] == 'a' ? 0 : 1;
    for (size_t i = 0; i < ROWS; i++)
        assert_true(strncmp(text + i * row_len, cells[which], row_len - 1) == 0 && text[i * row_len + row_len - 1] == '\n');
    free(text);
    assert_int_equal(dir_entries(dir), 1);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
}

static int cancel_after(void *ud, const char *what, double done, double total)
{
    (void)what;
    (void)done;
    (void)total;
    int *calls = ud;
    return ++*calls >= 2;
}

/* A cancellation from the progress callback (how a signal reaches the library) removes the
 * temporary; the old file stays. */
static void test_cancel_removes_temp(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    int calls = 0;
    ec_ctx_set_progress(ctx, cancel_after, &calls);
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "big.csv");
    ec_test_write_file(path, "old\n", 4);
    assert_int_equal(write_rows(ctx, path, "0123456789abcdef0123456789abcdef0123456789", 200000), EC_ECANCELED);
    assert_contains(ec_ctx_errmsg(ctx), "cancelled");
    assert_int_equal(calls, 2);
    char *text = read_all(path);
    assert_string_equal(text, "old\n");
    free(text);
    assert_int_equal(dir_entries(dir), 1);
    /* A control character in the path is refused before anything is created. */
    char *bad = ec_test_path(dir, "a\nb.csv");
    ec_ctx_set_progress(ctx, NULL, NULL);
    assert_int_equal(write_rows(ctx, bad, "x", 1), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "control character");
    assert_int_equal(dir_entries(dir), 1);
    ec_test_rmtree(dir);
    free(bad);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

/* ec_csv_print_row: the writer's quoting on any stream (the CLI's stdout): a comma, a quote
 * and a leading blank quoted, a lone empty field quoted, bad arguments refused. */
static void test_print_row(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    assert_non_null(fp);
    const char *row[] = {"plain", "a,b", "say \"hi\"", " padded", "1.5e+07"};
    assert_int_equal(ec_csv_print_row(fp, row, 5), EC_OK);
    const char *empty[] = {""};
    assert_int_equal(ec_csv_print_row(fp, empty, 1), EC_OK);
    const char *holed[] = {"x", NULL};
    assert_int_equal(ec_csv_print_row(fp, holed, 2), EC_EMISUSE);
    assert_int_equal(ec_csv_print_row(fp, row, 0), EC_EMISUSE);
    assert_int_equal(ec_csv_print_row(NULL, row, 1), EC_EMISUSE);
    fclose(fp);
    assert_string_equal(text, "plain,\"a,b\",\"say \"\"hi\"\"\",\" padded\",1.5e+07\n\"\"\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_print_row),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_planted_temp_name),
        cmocka_unit_test(test_target_not_regular),
        cmocka_unit_test(test_mode_kept),
        cmocka_unit_test(test_input_refused),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_cancel_removes_temp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
