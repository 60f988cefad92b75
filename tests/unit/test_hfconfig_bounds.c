/*
 * test_hfconfig_bounds.c: what a config.json may cost and hold (issue 42, items 3 and 7).
 * eci_hf_tree_bytes bounds from above the bytes jansson holds at its peak while parsing (its
 * allocations counted here through json_set_alloc_funcs, which only this test process sets:
 * the library never does), for the shapes that cost most per byte and for every preset; a
 * file over the size cap is refused naming the file and the cap; under a host's budget, a
 * config whose tree would not fit is refused before it is parsed; real-valued integer fields
 * are range-checked before any conversion (1e300, -1e300, -0.0, 4096.0, 1.5, 9.3e18).
 */
#define _GNU_SOURCE /* malloc_usable_size */

#include "ec_test.h"
#include "internal.h"

#include <dirent.h>
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- jansson's bytes, counted in this process only -------------------------------------- */
static size_t jansson_now, jansson_peak;

static void *count_malloc(size_t n)
{
    void *p = malloc(n);
    if (p != NULL) {
        jansson_now += malloc_usable_size(p) + 16; /* glibc's header and alignment */
        if (jansson_now > jansson_peak)
            jansson_peak = jansson_now;
    }
    return p;
}

static void count_free(void *p)
{
    if (p != NULL)
        jansson_now -= malloc_usable_size(p) + 16;
    free(p);
}

static size_t parse_peak(const char *text, size_t len)
{
    jansson_now = jansson_peak = 0;
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL)
        fail_msg("test input does not parse: %s", err.text);
    json_decref(root);
    return jansson_peak;
}

/* open + n times unit (with %x for the index) + close, ','-separated. */
static char *repeat(const char *open, const char *unit, const char *close, size_t n, size_t *len)
{
    char *b = malloc(n * (strlen(unit) + 12) + strlen(open) + strlen(close) + 1);
    assert_non_null(b);
    size_t k = (size_t)sprintf(b, "%s", open);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            b[k++] = ',';
        k += (size_t)sprintf(b + k, unit, (unsigned)i);
    }
    k += (size_t)sprintf(b + k, "%s", close);
    *len = k;
    return b;
}

static void check_bound(const char *what, const char *text, size_t len)
{
    size_t peak = parse_peak(text, len), bound = eci_hf_tree_bytes(text, len);
    print_message("  %-22s %8zu bytes of text: jansson's peak %9zu, bound %9zu (%.2fx)\n", what, len, peak, bound,
                  (double)bound / (double)peak);
    if (peak > bound)
        fail_msg("%s: jansson held %zu bytes, over the bound %zu", what, peak, bound);
}

static void test_tree_bound(void **state)
{
    (void)state;
    json_set_alloc_funcs(count_malloc, count_free);
    static const struct { const char *what, *open, *unit, *close; } shapes[] = {
        {"integers", "[", "0", "]"}, {"empty arrays", "[", "[]", "]"}, {"empty objects", "[", "{}", "]"},
        {"arrays of one", "[", "[0]", "]"}, {"keys", "{", "\"%x\":0", "}"}, {"keys of objects", "{", "\"%x\":{}", "}"},
        {"keys of arrays", "{", "\"%x\":[]", "}"}, {"empty strings", "[", "\"\"", "]"}, {"reals", "[", "1e9", "]"},
        {"objects of one", "[", "{\"a\":0}", "]"}, {"labels", "{\"model_type\":\"vit\",\"id2label\":{", "\"%u\":\"a label\"", "}}"},
        {"nulls", "[", "null", "]"}, {"trues", "[", "true", "]"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t n = 1; n <= 100000; n *= 100) {
            size_t len;
            char *text = repeat(shapes[i].open, shapes[i].unit, shapes[i].close, n, &len);
            check_bound(shapes[i].what, text, len);
            free(text);
        }
    /* nesting to jansson's depth limit */
    char deep[4096];
    for (size_t i = 0; i < 2000; i++) {
        deep[i] = '[';
        deep[3999 - i] = ']';
    }
    check_bound("nested arrays", deep, 4000);
    /* every preset */
    const char *models = getenv("EPOCHCAST_MODELS");
    char dir[EC_PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/networks", models != NULL ? models : "../models");
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), len;
        if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char *path = ec_test_path(dir, e->d_name);
        char *text = ec_test_read_file(path, &len);
        assert_non_null(text);
        check_bound(e->d_name, text, len);
        free(text);
        free(path);
    }
    closedir(d);
    json_set_alloc_funcs(malloc, free);
}

/* ---- the size cap --------------------------------------------------------------------------- */
static void test_size_cap(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx_bare();
    char *dir = ec_test_tmpdir(), *path = ec_test_path(dir, "config.json");
    size_t len = ECI_HF_MAX_BYTES + 1;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, ' ', len);
    text[0] = '{';
    text[len - 1] = '}';
    ec_test_write_file(path, text, len);
    eci_arch a;
    assert_int_equal(eci_hf_load(ctx, path, &a), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), path);
    assert_contains(ec_ctx_errmsg(ctx), "over the 4 MiB cap for a config.json");
    assert_int_equal(eci_hf_parse(ctx, "mem", text, len, &a), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "mem: 4194305 bytes, over the 4 MiB cap");
    free(text);
    ec_test_rmtree(dir);
    free(dir);
    free(path);
    ec_ctx_free(ctx);
}

/* ---- the charge under a host's budget ----------------------------------------------------- */
typedef struct budget {
    size_t limit_bytes, live_bytes, peak_bytes;
} budget;

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    budget *b = ud;
    size_t old = ptr != NULL ? osize : 0;
    if (nsize == 0) {
        b->live_bytes -= old;
        free(ptr);
        return NULL;
    }
    if (nsize > old && b->live_bytes - old + nsize > b->limit_bytes)
        return NULL;
    void *q = realloc(ptr, nsize);
    if (q != NULL) {
        b->live_bytes = b->live_bytes - old + nsize;
        if (b->live_bytes > b->peak_bytes)
            b->peak_bytes = b->live_bytes;
    }
    return q;
}

static void test_budget_charge(void **state)
{
    (void)state;
    /* 300,000 empty objects: 900 KB of text, a tree of about 75 MB */
    size_t len;
    char *text = repeat("{\"model_type\":\"bert\",\"x\":[", "{}", "]}", 300000, &len);
    size_t tree = eci_hf_tree_bytes(text, len);
    assert_true(tree > (size_t)64 << 20);
    budget b = {.limit_bytes = (size_t)50 << 20};
    ec_ctx *ctx;
    assert_int_equal(ec_ctx_new(budget_alloc, &b, &ctx), EC_OK);
    eci_arch a;
    assert_int_equal(eci_hf_parse(ctx, "big.json", text, len, &a), EC_ENOMEM);
    assert_contains(ec_ctx_errmsg(ctx), "big.json: its JSON would take about");
    assert_contains(ec_ctx_errmsg(ctx), "over the memory budget");
    /* under a budget that holds it, it is parsed (and refused for its missing fields) and the
     * charge is given back */
    b.limit_bytes = (size_t)512 << 20;
    assert_int_equal(eci_hf_parse(ctx, "big.json", text, len, &a), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "field 'vocab_size' is missing");
    assert_true(b.peak_bytes >= tree);
    ec_ctx_free(ctx);
    assert_int_equal(b.live_bytes, 0);
    free(text);
}

/* ---- real-valued integer fields --------------------------------------------------------------- */
static void test_real_fields(void **state)
{
    (void)state;
    static const struct { const char *value; int rc; const char *msg; } cases[] = {
        {"4096.0", EC_OK, NULL},
        {"4.096e3", EC_OK, NULL},
        {"1e300", EC_EPARSE, "field 'hidden_size' is 1e+300, out of range [1, 1048576]"},
        {"-1e300", EC_EPARSE, "field 'hidden_size' is -1e+300, out of range [1, 1048576]"},
        {"9.3e18", EC_EPARSE, "field 'hidden_size' is 9.3e+18, out of range"},
        {"9223372036854775807", EC_EPARSE, "out of range [1, 1048576]"},
        {"-0.0", EC_EPARSE, "field 'hidden_size' is -0, out of range"},
        {"1e-320", EC_EPARSE, "field 'hidden_size' is 0, out of range"},
        {"4096.5", EC_EPARSE, "field 'hidden_size' must be an integer"},
    };
    ec_ctx *ctx = ec_test_ctx_bare();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        int n = snprintf(text, sizeof text, "{\"model_type\": \"llama\", \"vocab_size\": 32000, \"hidden_size\": %s, "
                         "\"intermediate_size\": 11008, \"num_hidden_layers\": 32.0, \"num_attention_heads\": 32}",
                         cases[i].value);
        eci_arch a;
        int rc = eci_hf_parse(ctx, "real.json", text, (size_t)n, &a);
        if (rc != cases[i].rc)
            fail_msg("hidden_size %s: status %d, expected %d (%s)", cases[i].value, rc, cases[i].rc, ec_ctx_errmsg(ctx));
        if (cases[i].msg != NULL)
            assert_contains(ec_ctx_errmsg(ctx), cases[i].msg);
        else
            assert_int_equal(a.hidden, 4096);
    }
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_bound),
        cmocka_unit_test(test_size_cap),
        cmocka_unit_test(test_budget_charge),
        cmocka_unit_test(test_real_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
