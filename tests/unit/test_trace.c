/*
 * test_trace.c: ec_trace_write (core/src/sim/trace.c): the file is one JSON object whose braces
 * and brackets balance outside strings, names every track, holds complete events with
 * non-negative ts and dur, follows the simulation (one "step" per traced step), leaves no
 * temporary file, and fails cleanly on a bad path or a bad config.
 */
#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Braces and brackets balance outside strings, and never go negative. */
static void check_balanced(const char *s)
{
    int depth = 0, in_str = 0;
    for (const char *p = s; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
            continue;
        }
        if (*p == '"')
            in_str = 1;
        else if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']')
            assert_true(--depth >= 0);
    }
    assert_false(in_str);
    assert_int_equal(depth, 0);
}

/* Every value after key (e.g. "\"dur\":") is a number >= 0; returns how many. */
static int check_non_negative(const char *s, const char *key)
{
    int n = 0;
    for (const char *p = strstr(s, key); p != NULL; p = strstr(p + 1, key)) {
        char *end;
        double v = strtod(p + strlen(key), &end);
        assert_true(end != p + strlen(key));
        assert_true(v >= 0);
        n++;
    }
    return n;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_trace_structure(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "trace.json");
    ec_config cfg;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=16 seq_len=256 padding=dynamic "
                   "lengths=lognormal(80,0.8) num_workers=3 pin_memory=1 tokenize=on_the_fly "
                   "num_gpus=2 dataset_samples=10000");
    assert_int_equal(ec_trace_write(ctx, &cfg, path, 12), EC_OK);
    size_t len;
    char *json = ec_test_read_file(path, &len);
    assert_non_null(json);
    assert_true(strncmp(json, "{", 1) == 0);
    check_balanced(json);
    assert_non_null(strstr(json, "\"traceEvents\":["));
    static const char *const tracks[] = {"main thread (CPU dispatch)", "GPU compute", "H2D copy", "communication",
                                         "collectives "
                                         "overlapped", "pin-memory thread", "DataLoader worker 0", "DataLoader worker 2"};
    for (size_t i = 0; i < sizeof tracks / sizeof tracks[0]; i++)
        assert_contains(json, tracks[i]);
    assert_null(strstr(json, "DataLoader worker 3"));
    int complete = count(json, "\"ph\":\"X\"");
    assert_int_equal(check_non_negative(json, "\"dur\":"), complete);
    assert_int_equal(check_non_negative(json, "\"ts\":"), complete);
    /* the first 12 steps: one step event each, and one kernels event each */
    assert_int_equal(count(json, "\"name\":\"step\""), 12);
    assert_int_equal(count(json, "\"name\":\"kernels\""), 12);
    assert_int_equal(count(json, "\"name\":\"build batch\""), 12);
    assert_true(count(json, "\"name\":\"exposed communication\"") > 0); /* DDP over 2 GPUs */
    char *tmp = ec_test_path(dir, "trace.json.tmp");
    assert_false(ec_test_exists(tmp));
    free(json);
    free(tmp);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

/* FSDP on 8 GPUs: its gathers and reductions run beside the kernels (issue 18: the trace shows
 * the collectives overlapping compute), each span no longer than the kernels it sits under. */
static void test_trace_collectives_overlap(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "fsdp.json");
    ec_config cfg;
    ec_test_config(ctx, &cfg, "model=llama-3.2-1b gpu=h100-sxm5-80gb batch_per_gpu=4 seq_len=2048 precision=amp_bf16 "
                   "num_gpus=8 strategy=fsdp data=synthetic");
    assert_int_equal(ec_trace_write(ctx, &cfg, path, 5), EC_OK);
    size_t len;
    char *json = ec_test_read_file(path, &len);
    assert_non_null(json);
    check_balanced(json);
    assert_contains(json, "collectives overlapped");
    assert_int_equal(count(json, "\"name\":\"collectives beside compute\""), 5);
    ec_result r;
    assert_int_equal(ec_predict(ctx, &cfg, &r), EC_OK);
    assert_true(r.comm_total_s > r.comm.shard_wait_s); /* most of FSDP's traffic is hidden */
    free(json);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

static void test_trace_errors(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=16");
    assert_int_equal(ec_trace_write(ctx, &cfg, "/nonexistent-dir/trace.json", 5), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "/nonexistent-dir/trace.json");
    assert_int_equal(ec_trace_write(ctx, NULL, "x.json", 5), EC_EMISUSE);
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "t.json");
    ec_test_config(ctx, &cfg, "model=bert-bsae gpu=t4 batch_per_gpu=16");
    assert_int_equal(ec_trace_write(ctx, &cfg, path, 5), EC_ENOTFOUND);
    assert_false(ec_test_exists(path));
    /* max_steps <= 0: the default, and a config with no epoch length still traces */
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=16");
    assert_int_equal(ec_trace_write(ctx, &cfg, path, 0), EC_OK);
    size_t len;
    char *json = ec_test_read_file(path, &len);
    assert_int_equal(count(json, "\"name\":\"step\""), 20);
    assert_int_equal(count(json, "\"name\":\"load batch\""), 20); /* num_workers = 0 */
    free(json);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_structure),
        cmocka_unit_test(test_trace_collectives_overlap),
        cmocka_unit_test(test_trace_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
