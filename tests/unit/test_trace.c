/*
 * test_trace.c: ec_trace_write (core/src/sim/trace.c): the file is one JSON object whose braces
 * and brackets balance outside strings, names every track, holds complete events with
 * non-negative ts and dur, follows the simulation (one "step" per traced step) and the step
 * model (forward, backward, optimizer phases that add up to the predicted step; every FSDP
 * unit's gathers and reduce-scatter (fp8_params: the FP8 weights gathered a byte each), every DDP
 * bucket, one track per pipeline stage; issue 41),
 * leaves no temporary file, and fails cleanly on a bad path, a bad config or no memory.
 * tests/cli/test_trace.sh checks the same files against the Trace Event Format in Python.
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
    static const char *const tracks[] = {"main thread (CPU dispatch)", "GPU compute (step phases)",
                                         "communication (collectives)", "pin-memory thread", "DataLoader worker 0",
                                         "DataLoader worker 2"};
    for (size_t i = 0; i < sizeof tracks / sizeof tracks[0]; i++)
        assert_contains(json, tracks[i]);
    assert_null(strstr(json, "DataLoader worker 3"));
    assert_null(strstr(json, "\"name\":\"kernels\"")); /* issue 41: no longer one block per step */
    int complete = count(json, "\"ph\":\"X\"");
    assert_int_equal(check_non_negative(json, "\"dur\":"), complete);
    assert_int_equal(check_non_negative(json, "\"ts\":"), complete + count(json, "\"ph\":\"M\""));
    /* the first 12 steps (grad_accum 1): the step model's phases on the GPU, each once a step */
    assert_int_equal(count(json, "\"name\":\"step\""), 12);
    assert_int_equal(count(json, "\"name\":\"copy batch\""), 12);
    assert_int_equal(count(json, "\"name\":\"forward\""), 12);
    assert_int_equal(count(json, "\"name\":\"backward\""), 12);
    assert_int_equal(count(json, "\"name\":\"optimizer step\""), 12);
    assert_int_equal(count(json, "\"name\":\"build batch\""), 12);
    assert_int_equal(count(json, "\"name\":\"all-reduce bucket 0\""), 12); /* DDP over 2 GPUs */
    char *tmp = ec_test_path(dir, "trace.json.tmp");
    assert_false(ec_test_exists(tmp));
    free(json);
    free(tmp);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    ec_ctx_free(ctx);
}

/* The trace of cfg's first `steps` micro-batches (the caller frees it). */
static char *trace_of(ec_ctx *ctx, const char *words, int steps)
{
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "t.json");
    ec_config cfg;
    ec_test_config(ctx, &cfg, words);
    assert_int_equal(ec_trace_write(ctx, &cfg, path, steps), EC_OK);
    size_t len;
    char *json = ec_test_read_file(path, &len);
    assert_non_null(json);
    check_balanced(json);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    return json;
}

/* The value of number key (e.g. "\"dur\":") on the line at p; -1 when the line has none. */
static double line_number(const char *line, const char *eol, const char *key)
{
    const char *k = strstr(line, key);
    if (k == NULL || k > eol)
        return -1;
    return strtod(k + strlen(key), NULL);
}

/* Over optimizer step `step`'s events (one a line, as trace.c writes them) that contain every
 * needle: how many, and the sum of the number after key (NULL: none). */
static int sum_events(const char *json, long step, const char *n1, const char *n2, const char *key, double *sum)
{
    char tag[40];
    snprintf(tag, sizeof tag, "\"step\":%ld", step);
    int n = 0;
    *sum = 0;
    for (const char *line = json; line != NULL && *line; ) {
        const char *eol = strchr(line, '\n');
        if (eol == NULL)
            eol = line + strlen(line);
        const char *t = strstr(line, tag), *a = strstr(line, n1), *b = n2 != NULL ? strstr(line, n2) : line;
        if (t != NULL && t < eol && (t[strlen(tag)] == ',' || t[strlen(tag)] == '}') && a != NULL && a < eol &&
            b != NULL && b < eol) {
            n++;
            if (key != NULL)
                *sum += line_number(line, eol, key);
        }
        line = *eol ? eol + 1 : NULL;
    }
    return n;
}

/* issue 41: FSDP on 8 GPUs: every unit's all-gather in forward and again in backward, and its
 * reduce-scatter, each a slice of its own on the communication track (Llama-3.2-1B: 16 units,
 * the root's apart); with grad_accum 2 each micro-step gathers again. */
static void test_trace_fsdp_units(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *json = trace_of(ctx, "model=llama-3.2-1b gpu=h100-sxm5-80gb batch_per_gpu=4 seq_len=2048 "
                          "precision=amp_bf16 num_gpus=8 strategy=fsdp data=synthetic grad_accum=2", 4);
    double sum;
    for (long step = 0; step < 2; step++) {
        assert_int_equal(sum_events(json, step, "\"name\":\"forward all-gather unit ", "\"pass\":\"forward\"", NULL,
                                    &sum), 2 * 16);
        assert_int_equal(sum_events(json, step, "\"name\":\"backward all-gather unit ", "\"pass\":\"backward\"", NULL,
                                    &sum), 2 * 16);
        assert_int_equal(sum_events(json, step, "\"name\":\"reduce-scatter unit ", "\"cat\":\"fsdp\"", NULL, &sum),
                         2 * 16);
        assert_int_equal(sum_events(json, step, "\"name\":\"forward all-gather root\"", NULL, NULL, &sum), 2);
        assert_int_equal(sum_events(json, step, "\"name\":\"reduce-scatter root\"", NULL, NULL, &sum), 2);
    }
    assert_int_equal(count(json, "\"name\":\"forward all-gather unit 15\""), 4);
    assert_int_equal(count(json, "\"name\":\"forward all-gather unit 16\""), 0);
    assert_contains(json, "\"name\":\"communication (collectives)\"");
    free(json);
    ec_ctx_free(ctx);
}

/* fp8_params under FSDP (Megatron's fp8_param_gather): each unit's all-gather moves the blocks'
 * FP8 weights a byte each, Llama 3.1 8B's layer 218.1M parameters at 1 byte instead of 2 (its norms
 * 8,192 at 2), so the gather's bandwidth term halves: its time ratio is 0.5 plus the collective's
 * fixed latency over the 16-bit time (0.55 on 16 H100s over 2 nodes), below FP8_GATHER_RATIO_MAX. */
#define FP8_GATHER_RATIO_MAX 0.6
static void test_trace_fsdp_fp8_gather(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *base = "model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=16 nodes=2 strategy=fsdp precision=amp_fp8 "
                       "kernels=te batch_per_gpu=1 seq_len=4096 data=synthetic fp8_params=";
    double sum[2];
    for (int f = 0; f < 2; f++) {
        char words[256];
        snprintf(words, sizeof words, "%s%d", base, f);
        char *json = trace_of(ctx, words, 1);
        assert_int_equal(sum_events(json, 0, "\"name\":\"forward all-gather unit ", "\"pass\":\"forward\"", "\"dur\":",
                                    &sum[f]), 32);
        free(json);
    }
    double ratio = sum[1] / sum[0];
    assert_true(ratio > 0.5 && ratio < FP8_GATHER_RATIO_MAX);
    ec_ctx_free(ctx);
}

/* issue 41: DDP's buckets, each its own all-reduce slice, together all of the fp32 gradients
 * (BERT-base's parameters x 4 bytes); under grad_accum 3 only the last micro-step reduces. */
static void test_trace_ddp_buckets(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    double params;
    assert_int_equal(ec_model_params(ctx, "bert-base", NULL, &params), EC_OK);
    char *json = trace_of(ctx, "model=bert-base gpu=a100-sxm4-40gb batch_per_gpu=32 seq_len=128 num_gpus=4 "
                          "strategy=ddp data=synthetic grad_accum=3", 6);
    double bytes;
    int buckets = sum_events(json, 0, "\"name\":\"all-reduce bucket ", "\"cat\":\"ddp\"", "\"bytes\":", &bytes);
    assert_true(buckets > 2); /* a first small bucket, then 25 MiB ones */
    assert_rel(bytes, 4 * params, EC_TOL_CLOSED_FORM);
    char last[64];
    snprintf(last, sizeof last, "\"name\":\"all-reduce bucket %d\"", buckets - 1);
    assert_int_equal(count(json, last), 2); /* two steps of three micro-batches */
    double unused;
    assert_int_equal(sum_events(json, 0, "\"name\":\"all-reduce bucket 0\"", "\"micro\":2", NULL, &unused), 1);
    assert_int_equal(sum_events(json, 0, "\"name\":\"all-reduce bucket 0\"", "\"micro\":1", NULL, &unused), 0);
    assert_int_equal(sum_events(json, 1, "\"name\":\"forward\"", NULL, NULL, &unused), 3);
    free(json);
    ec_ctx_free(ctx);
}

/* ZeRO-2 (the ZeRO paper's P_os+g; Megatron's distributed optimizer) reduce-scatters its gradient
 * buckets on every micro-step: slices named so in category "zero", no all-reduce among
 * them, each bucket shorter than DDP's all-reduce of the same bytes on the same 8 GPUs (half the
 * bus traffic: (n-1)/n of the bytes against 2(n-1)/n), together every gradient; then the
 * all-gather of the updated parameters once a step. */
static void test_trace_zero_buckets(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *base = "model=llama-3.2-1b gpu=h100-sxm5-80gb batch_per_gpu=1 seq_len=2048 precision=fp32 "
                       "num_gpus=8 data=synthetic grad_accum=2"; /* fp32: both reduce 4-byte gradients */
    char words[512];
    snprintf(words, sizeof words, "%s strategy=zero zero_stage=2", base);
    char *zero = trace_of(ctx, words, 4);
    snprintf(words, sizeof words, "%s strategy=ddp", base);
    char *ddp = trace_of(ctx, words, 4);
    assert_null(strstr(zero, "\"name\":\"all-reduce bucket"));
    double zero_bytes, ddp_bytes, unused;
    int buckets = sum_events(zero, 0, "\"name\":\"reduce-scatter bucket ", "\"cat\":\"zero\"", "\"bytes\":",
                             &zero_bytes);
    assert_true(buckets > 4);
    assert_int_equal(sum_events(zero, 0, "\"name\":\"reduce-scatter bucket 0\"", NULL, NULL, &unused), 2);
    assert_int_equal(sum_events(ddp, 0, "\"name\":\"all-reduce bucket ", "\"cat\":\"ddp\"", "\"bytes\":", &ddp_bytes),
                     buckets / 2);
    assert_rel(zero_bytes, 2 * ddp_bytes, EC_TOL_CLOSED_FORM); /* two micro-steps reduce, DDP's last alone */
    for (int b = 0; b < buckets / 2; b++) {
        char rs[64], ar[64];
        snprintf(rs, sizeof rs, "\"name\":\"reduce-scatter bucket %d\"", b);
        snprintf(ar, sizeof ar, "\"name\":\"all-reduce bucket %d\"", b);
        double rs_s, ar_s, rs_bytes, ar_bytes;
        assert_int_equal(sum_events(zero, 0, rs, "\"micro\":1", "\"dur\":", &rs_s), 1);
        assert_int_equal(sum_events(ddp, 0, ar, "\"micro\":1", "\"dur\":", &ar_s), 1);
        sum_events(zero, 0, rs, "\"micro\":1", "\"bytes\":", &rs_bytes);
        sum_events(ddp, 0, ar, "\"micro\":1", "\"bytes\":", &ar_bytes);
        assert_rel(rs_bytes, ar_bytes, EC_TOL_CLOSED_FORM);
        assert_true(rs_s > 0 && rs_s < 0.75 * ar_s);
    }
    assert_int_equal(sum_events(zero, 0, "\"name\":\"ZeRO all-gather of the parameters\"", NULL, NULL, &unused), 1);
    /* zero_reduce=all_reduce (DeepSpeed's stage_1_and_2.py): the same buckets, each all-reduced,
     * about twice the reduce-scatter's time (2 (n-1)/n against (n-1)/n of the bytes) */
    snprintf(words, sizeof words, "%s strategy=zero zero_stage=2 zero_reduce=all_reduce", base);
    char *ds = trace_of(ctx, words, 4);
    assert_null(strstr(ds, "\"name\":\"reduce-scatter bucket"));
    double ds_bytes, ds_total_s, zero_total_s;
    assert_int_equal(sum_events(ds, 0, "\"name\":\"all-reduce bucket ", NULL, "\"bytes\":", &ds_bytes), buckets);
    assert_rel(ds_bytes, zero_bytes, EC_TOL_CLOSED_FORM);
    sum_events(ds, 0, "\"name\":\"all-reduce bucket ", NULL, "\"dur\":", &ds_total_s);
    sum_events(zero, 0, "\"name\":\"reduce-scatter bucket ", NULL, "\"dur\":", &zero_total_s);
    assert_true(ds_total_s > 1.5 * zero_total_s);
    for (int b = 0; b < buckets / 2; b++) {
        char rs[64], ar[64];
        snprintf(rs, sizeof rs, "\"name\":\"reduce-scatter bucket %d\"", b);
        snprintf(ar, sizeof ar, "\"name\":\"all-reduce bucket %d\"", b);
        double rs_s, ar_s;
        assert_int_equal(sum_events(zero, 0, rs, "\"micro\":1", "\"dur\":", &rs_s), 1);
        assert_int_equal(sum_events(ds, 0, ar, "\"micro\":1", "\"dur\":", &ar_s), 1);
        assert_true(ar_s > 1.3 * rs_s);
    }
    ec_result rs_res, ar_res;
    snprintf(words, sizeof words, "%s strategy=zero zero_stage=2", base);
    ec_test_predict(ctx, words, &rs_res);
    snprintf(words, sizeof words, "%s strategy=zero zero_stage=2 zero_reduce=all_reduce", base);
    ec_test_predict(ctx, words, &ar_res);
    assert_true(ar_res.step_s >= rs_res.step_s);
    free(ds);
    free(zero);
    free(ddp);
    ec_ctx_free(ctx);
}

/* issue 41: the compute track's phases of a step tile it: their durations add up to the step
 * ec_predict gives (fixed lengths, no loader stall), to the file's 1 ns resolution; with
 * grad_accum 1, and 4 (the micro-steps the model repeats laid out), single GPU, DDP, FSDP, ZeRO-2. */
static void test_trace_phases_sum_to_step(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const cases[] = {
        "model=bert-base gpu=t4 batch_per_gpu=16 seq_len=128 data=synthetic",
        "model=bert-base gpu=a100-sxm4-40gb batch_per_gpu=32 seq_len=128 num_gpus=4 strategy=ddp data=synthetic "
        "grad_accum=4",
        "model=llama-3.2-1b gpu=h100-sxm5-80gb batch_per_gpu=4 seq_len=2048 precision=amp_bf16 num_gpus=8 "
        "strategy=fsdp data=synthetic grad_accum=4",
        "model=llama-3.2-1b gpu=h100-sxm5-80gb batch_per_gpu=4 seq_len=2048 precision=amp_bf16 num_gpus=8 "
        "strategy=zero zero_stage=2 data=synthetic grad_accum=3",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_result r;
        ec_test_predict(ctx, cases[i], &r);
        char *json = trace_of(ctx, cases[i], 8);
        double sum;
        int phases = sum_events(json, 0, "\"pid\":2,\"tid\":1,", "\"cat\":\"phase\"", "\"dur\":", &sum);
        assert_true(phases >= 3);
        assert_rel(sum * 1e-6, r.step_s, 1e-6);
        free(json);
    }
    ec_ctx_free(ctx);
}

/* issue 41: pipeline parallelism: one track per stage, each stage's micro-batches on it, a
 * forward and a backward inside each. */
static void test_trace_pipeline_stages(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *json = trace_of(ctx, "model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 "
                          "seq_len=2048 num_gpus=8 pp=4 grad_accum=8 data=synthetic", 8);
    assert_contains(json, "\"name\":\"pipeline stages\"");
    for (int s = 0; s < 4; s++) {
        char name[40];
        snprintf(name, sizeof name, "\"name\":\"stage %d (layers ", s);
        assert_contains(json, name);
        char tid[40];
        snprintf(tid, sizeof tid, "\"pid\":3,\"tid\":%d,", s + 1);
        double unused;
        assert_int_equal(sum_events(json, 0, tid, "\"name\":\"micro-batch ", NULL, &unused), 8);
        assert_int_equal(sum_events(json, 0, tid, "\"name\":\"forward\"", NULL, &unused), 8);
        assert_int_equal(sum_events(json, 0, tid, "\"name\":\"backward\"", NULL, &unused), 8);
    }
    assert_null(strstr(json, "\"name\":\"stage 4 "));
    free(json);
    ec_ctx_free(ctx);
}

/* A run with evaluation: one evaluation slice after the traced steps, its batches inside. */
static void test_trace_evaluation(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *json = trace_of(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 seq_len=128 dataset_samples=1000 "
                          "eval_samples=40 data=synthetic", 4);
    assert_int_equal(count(json, "\"name\":\"evaluation\""), 1);
    assert_int_equal(count(json, "\"name\":\"eval batch (forward)\""), 3); /* 40 samples, 16 a batch */
    free(json);
    ec_ctx_free(ctx);
}

/* Out of memory at every allocation of a trace: EC_ENOMEM and nothing leaked, or the file. */
static void test_trace_oom(void **state)
{
    (void)state;
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "oom.json");
    int succeeded = 0;
    long n;
    for (n = 1; n < 400 && !succeeded; n++) {
        ec_test_failalloc fa;
        ec_test_failalloc_init(&fa, 0, 0);
        ec_ctx *ctx = NULL;
        assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx), EC_OK);
        assert_int_equal(ec_ctx_load_models(ctx, getenv("EPOCHCAST_MODELS")), EC_OK);
        ec_config cfg;
        ec_test_config(ctx, &cfg, "model=bert-base gpu=a100-sxm4-40gb batch_per_gpu=32 seq_len=128 num_gpus=4 "
                       "strategy=ddp grad_accum=3 num_workers=2");
        fa.fail_at = fa.count + n;
        int rc = ec_trace_write(ctx, &cfg, path, 6);
        if (rc == EC_OK)
            succeeded = 1;
        else
            assert_int_equal(rc, EC_ENOMEM);
        ec_ctx_free(ctx);
        assert_int_equal(fa.live_bytes, 0);
        assert_int_equal(fa.bad_osize, 0);
    }
    assert_true(succeeded);
    print_message("trace: %ld allocations failed in turn before one succeeded\n", n - 2);
    assert_true(n - 2 >= 5); /* the record's, the loader's, the file's allocations */
    ec_test_rmtree(dir);
    free(path);
    free(dir);
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
        cmocka_unit_test(test_trace_fsdp_units),
        cmocka_unit_test(test_trace_fsdp_fp8_gather),
        cmocka_unit_test(test_trace_ddp_buckets),
        cmocka_unit_test(test_trace_zero_buckets),
        cmocka_unit_test(test_trace_phases_sum_to_step),
        cmocka_unit_test(test_trace_pipeline_stages),
        cmocka_unit_test(test_trace_evaluation),
        cmocka_unit_test(test_trace_oom),
        cmocka_unit_test(test_trace_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
