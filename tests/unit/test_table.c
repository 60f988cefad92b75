/*
 * test_table.c: the CSV table reader (core/src/base/table.c): good files, every error on
 * purpose with its line:col, libcsv's chunk-size sweep, number parsing, OOM injection,
 * and the corpus of broken files in tests/bad/csv (run from tests/).
 */
#include "ec_test.h"
#include "internal.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* table.c's parser with the size of the pieces handed to csv_parse as a parameter
 * (0: the default).  Declared here until internal.h carries it. */
int eci_table_parse_chunked(ec_ctx *ctx, const char *name, const char *buf, size_t len,
                            size_t chunk, eci_table **out);

static eci_table *parse_ok(ec_ctx *ctx, const char *text)
{
    eci_table *t = NULL;
    int rc = eci_table_parse(ctx, "t.csv", text, strlen(text), &t);
    if (rc != EC_OK)
        fail_msg("parse failed: %s", ec_ctx_errmsg(ctx));
    assert_non_null(t);
    return t;
}

/* Parse text that must fail with code and a message containing want. */
static void parse_bad(ec_ctx *ctx, const char *text, size_t len, int code, const char *want)
{
    eci_table *t = (eci_table *)1;
    int rc = eci_table_parse(ctx, "t.csv", text, len, &t);
    if (rc != code)
        fail_msg("input \"%s\": rc %d (%s), expected %d; message: %s", text, rc,
                 ec_strerror(rc), code, ec_ctx_errmsg(ctx));
    assert_null(t);
    assert_contains(ec_ctx_errmsg(ctx), want);
}

/* ---- good files ------------------------------------------------------------------------ */

static void test_good_quoting(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    /* Quoted fields keep commas, line ends and doubled quotes; blanks around unquoted
     * fields are dropped (libcsv), blanks inside quotes are kept. */
    const char *text = "id,name,note\n"
                       "a100,\"NVIDIA A100, 80GB\",plain\n"
                       "t4 , \"two\nlines\" ,\"say \"\"hi\"\"\"\n"
                       "v100,,\" padded \"\n";
    eci_table *t = parse_ok(ctx, text);
    assert_string_equal(eci_table_name(t), "t.csv");
    assert_int_equal(eci_table_cols(t), 3);
    assert_int_equal(eci_table_rows(t), 3);
    assert_string_equal(eci_table_header(t, 0), "id");
    assert_string_equal(eci_table_header(t, 2), "note");
    assert_null(eci_table_header(t, 3));
    assert_string_equal(eci_table_cell(t, 0, 1), "NVIDIA A100, 80GB");
    assert_string_equal(eci_table_cell(t, 1, 0), "t4");
    assert_string_equal(eci_table_cell(t, 1, 1), "two\nlines");
    assert_string_equal(eci_table_cell(t, 1, 2), "say \"hi\"");
    assert_string_equal(eci_table_cell(t, 2, 1), "");
    assert_string_equal(eci_table_cell(t, 2, 2), " padded ");
    /* Out-of-range cells are NULL, not a crash. */
    assert_null(eci_table_cell(t, 3, 0));
    assert_null(eci_table_cell(t, 0, 3));
    assert_null(eci_table_cell(t, 0, -1));
    /* Row lines: row 0 on line 2, row 1 on line 3 (two lines long), row 2 on line 5. */
    assert_int_equal(eci_table_line(t, 0), 2);
    assert_int_equal(eci_table_line(t, 1), 3);
    assert_int_equal(eci_table_line(t, 2), 5);
    assert_int_equal(eci_table_col(t, "name"), 1);
    assert_int_equal(eci_table_col(t, "nam"), -1);
    eci_table_free(t);
    ec_ctx_free(ctx);
}

static void test_good_bom_crlf_blank(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    /* A BOM is not part of the first header name nor of its column; CRLF and LF may mix;
     * blank and blank-looking trailing lines are ignored, with or without CR. */
    const char *text = "\xEF\xBB\xBFgpu,sm_count\r\n"
                       "a100,108\r\n"
                       "t4,x40\n"
                       "\r\n\n   \n\t\r\n";
    eci_table *t = parse_ok(ctx, text);
    assert_string_equal(eci_table_header(t, 0), "gpu");
    assert_int_equal(eci_table_rows(t), 2);
    assert_string_equal(eci_table_cell(t, 0, 1), "108");
    assert_int_equal(eci_table_line(t, 1), 3);
    long v = 0;
    /* The bad cell "x40" starts on line 3, column 4. */
    assert_int_equal(eci_table_int(ctx, t, 1, 1, 1, 1000, &v), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:3:4: column 'sm_count': 'x40' is not an integer");
    eci_table_free(t);

    /* A header alone is a table of zero rows; no final line end is needed. */
    t = parse_ok(ctx, "a,b,c");
    assert_int_equal(eci_table_cols(t), 3);
    assert_int_equal(eci_table_rows(t), 0);
    eci_table_free(t);

    /* A final row without a line end, and blank lines between rows. */
    t = parse_ok(ctx, "a,b\n\n1,2\n\n\n3,4");
    assert_int_equal(eci_table_rows(t), 2);
    assert_int_equal(eci_table_line(t, 0), 3);
    assert_int_equal(eci_table_line(t, 1), 6);
    assert_string_equal(eci_table_cell(t, 1, 1), "4");
    eci_table_free(t);

    /* UTF-8 text is kept as is; columns count characters, not bytes. */
    t = parse_ok(ctx, "name,val\n\"Größe, µs\",é1\n");
    assert_string_equal(eci_table_cell(t, 0, 0), "Größe, µs");
    double d;
    assert_int_equal(eci_table_number(ctx, t, 0, 1, 0, 1, &d), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:2:13: column 'val': 'é1' is not a number");
    eci_table_free(t);
    ec_ctx_free(ctx);
}

static void test_lines_after_multiline(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    /* The second field of row 0 spans lines 2-5 (three embedded LFs, one CRLF); row 1
     * therefore starts on line 6 and its bad number on line 6, column 3. */
    const char *text = "k,v\n"
                       "1,\"a\nb\r\nc\n\"\n"
                       "2,oops\n";
    eci_table *t = parse_ok(ctx, text);
    assert_int_equal(eci_table_rows(t), 2);
    assert_string_equal(eci_table_cell(t, 0, 1), "a\nb\r\nc\n");
    assert_int_equal(eci_table_line(t, 0), 2);
    assert_int_equal(eci_table_line(t, 1), 6);
    double d;
    assert_int_equal(eci_table_number(ctx, t, 1, 1, 0, 10, &d), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:6:3: column 'v': 'oops' is not a number");
    /* The multi-line cell itself is reported where its opening quote is. */
    assert_int_equal(eci_table_number(ctx, t, 0, 1, 0, 10, &d), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:2:3: column 'v':");
    eci_table_free(t);
    ec_ctx_free(ctx);
}

/* ---- every error on purpose -------------------------------------------------------------- */

typedef struct bad_case {
    const char *text;
    size_t len; /* 0: strlen(text) */
    int code;
    const char *want;
} bad_case;

static const bad_case bad_cases[] = {
    /* No header row. */
    {"", 0, EC_EPARSE, "t.csv:1: empty file, expected a header row"},
    {"\n\n  \r\n", 0, EC_EPARSE, "t.csv:1: empty file"},
    {"\xEF\xBB\xBF", 0, EC_EPARSE, "t.csv:1: empty file"},
    /* Header names. */
    {"a,b,a\n1,2,3\n", 0, EC_EPARSE, "t.csv:1:5: duplicate column name 'a' (columns 1 and 3)"},
    {"x,b,b,x\n", 0, EC_EPARSE, "t.csv:1:5: duplicate column name 'b' (columns 2 and 3)"},
    {"a,,c\n", 0, EC_EPARSE, "t.csv:1:3: empty column name (column 2)"},
    {"a,b,\n", 0, EC_EPARSE, "t.csv:1:5: empty column name (column 3)"},
    {"a, \"\" ,c\n", 0, EC_EPARSE, "t.csv:1:4: empty column name (column 2)"},
    /* Ragged rows; the line is the row's first line. */
    {"a,b,c\n1,2\n", 0, EC_EPARSE, "t.csv:2: expected 3 columns, found 2"},
    {"a,b\n1,2\n3,4,5\n", 0, EC_EPARSE, "t.csv:3: expected 2 columns, found 3"},
    {"a,b\n\"x\ny\",2,\n", 0, EC_EPARSE, "t.csv:2: expected 2 columns, found 3"},
    {"a,b\n1,2\n3", 0, EC_EPARSE, "t.csv:3: expected 2 columns, found 1"},
    {"a,b\n1,2\n,\n,,\n", 0, EC_EPARSE, "t.csv:4: expected 2 columns, found 3"},
    /* An unterminated quote is reported at its opening quote. */
    {"a,b\n1,\"open\n2,3\n", 0, EC_EPARSE, "t.csv:2:3: unterminated quoted field"},
    {"a,b\n1,  \"", 0, EC_EPARSE, "t.csv:2:5: unterminated quoted field"},
    /* Strict quoting, at the offending byte. */
    {"a,b\n1,\"b\"c\n", 0, EC_EPARSE, "t.csv:2:6: bad quoting: unexpected 'c' after a closing quote"},
    {"a,b\n1,\"b\" \"\n", 0, EC_EPARSE, "t.csv:2:7: bad quoting: unexpected '\"' after a closing quote"},
    {"a,b\n1,ab\"c\"\n", 0, EC_EPARSE, "t.csv:2:5: bad quoting: '\"' inside an unquoted field"},
    {"a\"\n", 0, EC_EPARSE, "t.csv:1:2: bad quoting"},
    {"a,b\n\"x\ny\" z,1\n", 0, EC_EPARSE, "t.csv:3:4: bad quoting: unexpected 'z'"},
    /* Bytes: invalid UTF-8 (stray continuation, overlong, surrogate, above U+10FFFF,
     * truncated at the end) and NUL. */
    {"a,b\n1,x\x80y\n", 0, EC_EPARSE, "t.csv:2:4: invalid UTF-8"},
    {"a,b\n1,\xC0\xAF\n", 0, EC_EPARSE, "t.csv:2:3: invalid UTF-8"},
    {"a,b\n\"\xC3\xA9\xED\xA0\x80\",2\n", 0, EC_EPARSE, "t.csv:2:3: invalid UTF-8"},
    {"a,b\n1,\xF4\x90\x80\x80\n", 0, EC_EPARSE, "t.csv:2:3: invalid UTF-8"},
    {"a,b\n1,\xE2\x82", 0, EC_EPARSE, "t.csv:2:3: invalid UTF-8"},
    {"\xEF\xBB\xBF" "a,\xFF\n", 0, EC_EPARSE, "t.csv:1:3: invalid UTF-8"},
    {"a,b\n1,2\0\n", 9, EC_EPARSE, "t.csv:2:4: NUL byte"},
    /* A lone CR ends a row for libcsv but not for editors: refused. */
    {"a,b\r1,2\n", 0, EC_EPARSE, "t.csv:1:4: carriage return without a line feed"},
    {"a,b\n1,2\r", 0, EC_EPARSE, "t.csv:2:4: carriage return without a line feed"},
    {"\xEF\xBB\xBFh\r", 0, EC_EPARSE, "t.csv:1:2: carriage return without a line feed"},
};

static void test_errors(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *b = &bad_cases[i];
        parse_bad(ctx, b->text, b->len ? b->len : strlen(b->text), b->code, b->want);
    }
    /* Misuse. */
    eci_table *t = NULL;
    assert_int_equal(eci_table_parse(ctx, "t.csv", NULL, 3, &t), EC_EMISUSE);
    assert_int_equal(eci_table_parse(ctx, NULL, "a", 1, &t), EC_EMISUSE);
    assert_int_equal(eci_table_parse(NULL, "t.csv", "a", 1, &t), EC_EMISUSE);
    assert_int_equal(eci_table_parse(ctx, "t.csv", "a", 1, NULL), EC_EMISUSE);
    eci_table_free(NULL);
    ec_ctx_free(ctx);
}

static void test_require(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    eci_table *t = parse_ok(ctx, "\n\nid,sm_count,memory_bytes\n");
    int col = -1;
    assert_int_equal(eci_table_require(ctx, t, "memory_bytes", &col), EC_OK);
    assert_int_equal(col, 2);
    /* The header is on line 3 here (blank lines before it). */
    assert_int_equal(eci_table_require(ctx, t, "sm_cnt", &col), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:3: missing column 'sm_cnt' (did you mean 'sm_count'?)");
    eci_table_free(t);
    ec_ctx_free(ctx);
}

/* ---- chunk-size sweep (libcsv's own test_csv.c idea) --------------------------------------- */

/* Everything observable about a parse, as text: status, message, and for each cell its
 * text and its position (taken from eci_table_int's message, which names line:col). */
static char *describe(ec_ctx *ctx, int rc, eci_table *t)
{
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    n += (size_t)snprintf(s + n, cap - n, "rc=%d msg=%s\n", rc, rc ? ec_ctx_errmsg(ctx) : "");
    if (t != NULL) {
        for (size_t c = 0; c < eci_table_cols(t); c++)
            n += (size_t)snprintf(s + n, cap - n, "h[%s]", eci_table_header(t, c));
        for (size_t r = 0; r < eci_table_rows(t); r++) {
            n += (size_t)snprintf(s + n, cap - n, "\nline %zu:", eci_table_line(t, r));
            for (size_t c = 0; c < eci_table_cols(t); c++) {
                long v;
                int irc = eci_table_int(ctx, t, r, (int)c, LONG_MIN, LONG_MAX, &v);
                n += (size_t)snprintf(s + n, cap - n, " [%s] %s", eci_table_cell(t, r, (int)c),
                                      irc ? ec_ctx_errmsg(ctx) : "int");
                assert_true(n < cap);
            }
        }
    }
    return s;
}

static const char *const sweep_inputs[] = {
    "\xEF\xBB\xBFid,\"na,me\",v\r\n  a , \"x\"\"y\nz\" ,1\r\n\r\nb,,\"\"\n\n",
    "k,v\n1,\"a\nb\r\nc\n\"\n2,oops\n3,  4  \n",
    "h1,h2\n\"\xC3\xA9t\xC3\xA9\",\xE2\x82\xAC" "5\n\xF0\x9F\x98\x80,x",
    "a,b\n1,\"open\n2,3\n",
    "a,b\n1,\"b\"c\n",
    "a,b,a\n",
    "a,b\n1,2\n3,4,5\n",
    "a,b\n1,x\x80y\n",
    "a,b\n1,2\r3,4\n",
    "a\n\"\"\"\"\n\"\"\n \" \" \n",
};

static void test_chunk_sweep(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    for (size_t k = 0; k < sizeof sweep_inputs / sizeof sweep_inputs[0]; k++) {
        const char *in = sweep_inputs[k];
        size_t len = strlen(in);
        eci_table *t = NULL;
        int rc = eci_table_parse_chunked(ctx, "s.csv", in, len, 0, &t);
        char *want = describe(ctx, rc, t);
        eci_table_free(t);
        for (size_t chunk = 1; chunk <= len; chunk++) {
            rc = eci_table_parse_chunked(ctx, "s.csv", in, len, chunk, &t);
            char *got = describe(ctx, rc, t);
            eci_table_free(t);
            if (strcmp(got, want) != 0)
                fail_msg("input %zu, chunk %zu:\n%s\n--- expected ---\n%s", k, chunk, got, want);
            free(got);
        }
        free(want);
    }
    ec_ctx_free(ctx);
}

/* ---- numbers ----------------------------------------------------------------------------- */

static void test_numbers(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    /* Column n holds, row by row, the texts below; quoting keeps their blanks. */
    const char *text = "id,n\n"
                       "r1,3.25e2\n"       /* 0: 325 */
                       "r2,-0.5\n"         /* 1 */
                       "r3,nan\n"          /* 2 */
                       "r4,inf\n"          /* 3 */
                       "r5,1e999\n"        /* 4 */
                       "r6,\n"             /* 5 */
                       "r7,\" 3\"\n"       /* 6 */
                       "r8,3x\n"           /* 7 */
                       "r9,-5\n"           /* 8 */
                       "r10,0x10\n"        /* 9 */
                       "r11,1e-999\n"      /* 10: underflow to 0 */
                       "r12,.5\n"          /* 11 */
                       "r13,5.\n"          /* 12 */
                       "r14,1e\n"          /* 13 */
                       "r15,+7\n"          /* 14 */
                       "r16,9223372036854775808\n" /* 15: LONG_MAX + 1 */
                       "r17,\"3 \"\n"      /* 16 */
                       "r18,-INFINITY\n"   /* 17 */
                       "r19,.\n";          /* 18 */
    eci_table *t = parse_ok(ctx, text);
    double d = -1;
    long l = -1;
    assert_int_equal(eci_table_number(ctx, t, 0, 1, 0, 1000, &d), EC_OK);
    assert_rel(d, 325.0, EC_TOL_EXACT);
    assert_int_equal(eci_table_number(ctx, t, 1, 1, -1, 1, &d), EC_OK);
    assert_rel(d, -0.5, EC_TOL_EXACT);

    /* Each failure names file:line:col, the column, the text and what is wrong. */
    static const struct {
        size_t row;
        const char *want;
    } bad[] = {
        {2, "t.csv:4:4: column 'n': 'nan' is not a number"},
        {3, "t.csv:5:4: column 'n': 'inf' is not a number"},
        {4, "t.csv:6:4: column 'n': '1e999' is too large for a double"},
        {5, "t.csv:7:4: column 'n': empty cell, expected a number"},
        {6, "t.csv:8:4: column 'n': ' 3' is not a number"},
        {7, "t.csv:9:4: column 'n': '3x' is not a number"},
        {8, "t.csv:10:4: column 'n': -5 is out of range [1, 1000]"},
        {9, "t.csv:11:5: column 'n': '0x10' is not a number"},
        {13, "t.csv:15:5: column 'n': '1e' is not a number"},
        {16, "t.csv:18:5: column 'n': '3 ' is not a number"},
        {17, "t.csv:19:5: column 'n': '-INFINITY' is not a number"},
        {18, "t.csv:20:5: column 'n': '.' is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = 42;
        assert_int_equal(eci_table_number(ctx, t, bad[i].row, 1, 1, 1000, &d), EC_EPARSE);
        assert_contains(ec_ctx_errmsg(ctx), bad[i].want);
        assert_rel(d, 42, EC_TOL_EXACT); /* *out untouched on failure */
    }
    /* Underflow rounds to zero rather than failing; ".5", "5." and "+7" are numbers. */
    assert_int_equal(eci_table_number(ctx, t, 10, 1, 0, 1, &d), EC_OK);
    assert_abs(d, 0.0, DBL_MIN);
    assert_int_equal(eci_table_number(ctx, t, 11, 1, 0, 1, &d), EC_OK);
    assert_rel(d, 0.5, EC_TOL_EXACT);
    assert_int_equal(eci_table_number(ctx, t, 12, 1, 0, 10, &d), EC_OK);
    assert_rel(d, 5.0, EC_TOL_EXACT);
    assert_int_equal(eci_table_number(ctx, t, 14, 1, 0, 10, &d), EC_OK);
    assert_rel(d, 7.0, EC_TOL_EXACT);
    /* The bounds are inclusive: 325 in [325, 325]. */
    assert_int_equal(eci_table_number(ctx, t, 0, 1, 325, 325, &d), EC_OK);

    /* Integers: decimal digits only, range checked, overflow caught. */
    assert_int_equal(eci_table_int(ctx, t, 8, 1, -10, 10, &l), EC_OK);
    assert_int_equal(l, -5);
    assert_int_equal(eci_table_int(ctx, t, 14, 1, 0, 10, &l), EC_OK);
    assert_int_equal(l, 7);
    assert_int_equal(eci_table_int(ctx, t, 8, 1, 1, 1000, &l), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:10:4: column 'n': -5 is out of range [1, 1000]");
    assert_int_equal(eci_table_int(ctx, t, 0, 1, 0, 1000, &l), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:2:4: column 'n': '3.25e2' is not an integer");
    assert_int_equal(eci_table_int(ctx, t, 15, 1, LONG_MIN, LONG_MAX, &l), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "'n': 9223372036854775808 is out of range");
    assert_int_equal(eci_table_int(ctx, t, 5, 1, 0, 1, &l), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "t.csv:7:4: column 'n': empty cell, expected an integer");
    assert_int_equal(eci_table_int(ctx, t, 6, 1, 0, 10, &l), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "' 3' is not an integer");

    /* Cells outside the table are misuse, not a crash. */
    assert_int_equal(eci_table_number(ctx, t, 19, 1, 0, 1, &d), EC_EMISUSE);
    assert_int_equal(eci_table_int(ctx, t, 0, 2, 0, 1, &l), EC_EMISUSE);
    assert_int_equal(eci_table_int(ctx, t, 0, -1, 0, 1, &l), EC_EMISUSE);
    eci_table_free(t);

    /* A long text is shortened in the message. */
    char big[400];
    memset(big, '9', sizeof big);
    memcpy(big, "id\n", 3);
    big[sizeof big - 2] = 'x';
    big[sizeof big - 1] = '\0';
    t = parse_ok(ctx, big);
    assert_int_equal(eci_table_number(ctx, t, 0, 0, 0, 1, &d), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "99...' is not a number");
    eci_table_free(t);
    ec_ctx_free(ctx);
}

/* ---- files ------------------------------------------------------------------------------- */

static void test_load(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "good.csv");
    ec_test_write_file(path, "a,b\n1,2\n", 8);
    eci_table *t = NULL;
    assert_int_equal(eci_table_load(ctx, path, &t), EC_OK);
    assert_string_equal(eci_table_name(t), path);
    assert_string_equal(eci_table_cell(t, 0, 1), "2");
    eci_table_free(t);

    /* A missing file: EC_EIO naming the path and the system's reason. */
    char *missing = ec_test_path(dir, "missing.csv");
    assert_int_equal(eci_table_load(ctx, missing, &t), EC_EIO);
    assert_null(t);
    assert_contains(ec_ctx_errmsg(ctx), missing);
    assert_contains(ec_ctx_errmsg(ctx), "No such file");
    /* A directory reads as an error too. */
    assert_int_equal(eci_table_load(ctx, dir, &t), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), dir);

    /* 16 MiB + 1 byte (a sparse file) is refused as a whole table. */
    char *huge = ec_test_path(dir, "huge.csv");
    FILE *f = fopen(huge, "wb");
    assert_non_null(f);
    assert_int_equal(fseek(f, (16L << 20), SEEK_SET), 0);
    assert_int_equal(fputc('\n', f), '\n');
    assert_int_equal(fclose(f), 0);
    assert_int_equal(eci_table_load(ctx, huge, &t), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "larger than the 16 MiB limit");

    /* Exactly 16 MiB is read (and fails later, as the data is NULs). */
    f = fopen(huge, "wb");
    assert_non_null(f);
    assert_int_equal(fseek(f, (16L << 20) - 2, SEEK_SET), 0);
    assert_true(fputs("\n\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(eci_table_load(ctx, huge, &t), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), ":1:1: NUL byte");

    ec_test_rmtree(dir);
    free(huge);
    free(missing);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

/* ---- OOM: every allocation failing in turn ------------------------------------------------- */

static void test_oom(void **state)
{
    (void)state;
    const char *text = "id,name,v\na,\"b,c\",1\nd,e,2\nf,g,3\n";
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "oom.csv");
    ec_test_write_file(path, text, strlen(text));
    for (int use_file = 0; use_file <= 1; use_file++) {
        int succeeded = 0;
        for (long n = 1; n < 1000 && !succeeded; n++) {
            ec_test_failalloc fa;
            ec_test_failalloc_init(&fa, 0, 0);
            ec_ctx *ctx = NULL;
            assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx), EC_OK);
            fa.fail_at = fa.count + n; /* count from after the context itself */
            eci_table *t = NULL;
            int rc = use_file ? eci_table_load(ctx, path, &t)
                              : eci_table_parse(ctx, "oom.csv", text, strlen(text), &t);
            if (rc == EC_OK) {
                succeeded = 1;
                assert_int_equal(eci_table_rows(t), 3);
                assert_string_equal(eci_table_cell(t, 0, 1), "b,c");
                eci_table_free(t);
            } else {
                assert_int_equal(rc, EC_ENOMEM);
                assert_null(t);
                assert_contains(ec_ctx_errmsg(ctx), "out of memory");
            }
            ec_ctx_free(ctx);
            assert_int_equal(fa.live_bytes, 0);
            assert_int_equal(fa.live_blocks, 0);
            assert_int_equal(fa.bad_osize, 0);
        }
        assert_true(succeeded);
    }
    ec_test_rmtree(dir);
    free(path);
    free(dir);
}

/* ---- the corpus of broken files --------------------------------------------------------------
 * tests/bad/csv/EXPECTED lists "file<TAB>message substring".  A file that parses is then
 * read cell by cell, row-major, with eci_table_number in [0, 1000]; the first failure is
 * the message.  Paths are relative to tests/, where ctest runs. */
static void test_bad_corpus(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    size_t len = 0;
    char *list = ec_test_read_file("bad/csv/EXPECTED", &len);
    if (list == NULL)
        fail_msg("cannot read bad/csv/EXPECTED (run from tests/)");
    int checked = 0;
    for (char *line = strtok(list, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *tab = strchr(line, '\t');
        if (tab == NULL)
            fail_msg("bad/csv/EXPECTED: no tab in \"%s\"", line);
        *tab = '\0';
        const char *want = tab + 1;
        char path[256];
        snprintf(path, sizeof path, "bad/csv/%s", line);
        eci_table *t = NULL;
        int rc = eci_table_load(ctx, path, &t);
        for (size_t r = 0; rc == EC_OK && r < eci_table_rows(t); r++)
            for (size_t c = 0; rc == EC_OK && c < eci_table_cols(t); c++) {
                double d;
                rc = eci_table_number(ctx, t, r, (int)c, 0, 1000, &d);
            }
        eci_table_free(t);
        if (rc != EC_EPARSE)
            fail_msg("%s: rc %d (%s), expected EC_EPARSE; message: %s", path, rc, ec_strerror(rc),
                     ec_ctx_errmsg(ctx));
        if (strstr(ec_ctx_errmsg(ctx), want) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", path, ec_ctx_errmsg(ctx), want);
        checked++;
    }
    free(list);
    assert_true(checked >= 15);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_quoting),
        cmocka_unit_test(test_good_bom_crlf_blank),
        cmocka_unit_test(test_lines_after_multiline),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_require),
        cmocka_unit_test(test_chunk_sweep),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_bad_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
