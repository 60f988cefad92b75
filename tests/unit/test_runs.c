/*
 * test_runs.c: run records (core/src/fit/runs.c): loading ../shared/data/runs/calibration.csv
 * (via $EC_SHARED_DIR; skipped when absent), the bad files of tests/bad/runs/ against the
 * messages listed in tests/bad/runs/EXPECTED, small files written to a temporary folder,
 * OOM injection, ec_result_metric and ec_error_stats_compute on a hand-computed example;
 * bench/data/calibration_dle.csv (tools/data/make_dle_runs.py) against the shared file.
 */
#include "ec_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int setup(void **state)
{
    *state = ec_test_ctx_bare();
    return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    ec_ctx_free(*state);
    return 0;
}

/* dir/rel in a malloc'd string, dir from getenv(env) or fallback. */
static char *env_path(const char *env, const char *fallback, const char *rel)
{
    const char *dir = getenv(env);
    return ec_test_path(dir != NULL && dir[0] != '\0' ? dir : fallback, rel);
}

/* Write text to a fresh temporary file and load it. */
static int load_text(ec_ctx *ctx, const char *text, ec_runs **out)
{
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "runs.csv");
    ec_test_write_file(path, text, strlen(text));
    int rc = ec_runs_load(ctx, path, out);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    return rc;
}

/* ---- the shared calibration set ------------------------------------------------------------ */

static void test_calibration_csv(void **state)
{
    ec_ctx *ctx = *state;
    char *path = env_path("EC_SHARED_DIR", "../../shared", "data/runs/calibration.csv");
    ec_runs *runs = NULL;

    if (!ec_test_exists(path)) {
        print_message("skipping: %s not found\n", path);
        free(path);
        skip();
    }
    int rc = ec_runs_load(ctx, path, &runs);
    if (rc != EC_OK)
        fail_msg("%s", ec_ctx_errmsg(ctx));
    free(path);
    assert_int_equal(ec_runs_count(runs), 367);

    /* line 2: a100-pcie-40gb-bert-base-squad-1x-amp_fp16-b88-0,bert-base,squad,a100-pcie-40gb,
     * 1,single,amp_fp16,88,384,,1,adam,0,0,real,samples_per_s,289.0,median of 1: lambda:... */
    const ec_run *r = ec_runs_get(runs, 0);
    assert_non_null(r);
    assert_string_equal(r->id, "a100-pcie-40gb-bert-base-squad-1x-amp_fp16-b88-0");
    assert_string_equal(r->source, "median of 1: lambda:pytorch/pytorch-train-throughput-fp16.csv");
    assert_int_equal(r->line, 2);
    assert_string_equal(r->config.model, "bert-base");
    assert_string_equal(r->config.task, "squad");
    assert_string_equal(r->config.gpu, "a100-pcie-40gb");
    assert_int_equal(r->config.num_gpus, 1);
    assert_int_equal(r->config.strategy, EC_STRATEGY_SINGLE);
    assert_int_equal(r->config.precision, EC_PREC_AMP_FP16);
    assert_int_equal(r->config.batch_per_gpu, 88);
    assert_int_equal(r->config.seq_len, 384);
    assert_int_equal(r->config.image_size, 0); /* empty cell: default, bit clear */
    assert_int_equal(r->config.optimizer, EC_OPT_ADAM);
    assert_int_equal(r->config.data_synthetic, 0);
    assert_int_equal(r->metric, EC_METRIC_SAMPLES_PER_S);
    assert_rel(r->value, 289.0, EC_TOL_EXACT);
    for (size_t i = 0; i < ec_config_key_count(); i++) {
        const char *k = ec_config_key_name(i);
        int given = strcmp(k, "model") == 0 || strcmp(k, "task") == 0 || strcmp(k, "gpu") == 0 ||
                    strcmp(k, "num_gpus") == 0 || strcmp(k, "strategy") == 0 ||
                    strcmp(k, "precision") == 0 || strcmp(k, "batch_per_gpu") == 0 ||
                    strcmp(k, "seq_len") == 0 || strcmp(k, "grad_accum") == 0 ||
                    strcmp(k, "optimizer") == 0 || strcmp(k, "checkpointing") == 0 ||
                    strcmp(k, "compile") == 0 || strcmp(k, "data") == 0;
        if (ec_config_is_set(&r->config, i) != given)
            fail_msg("set_mask bit of '%s' is %d", k, !given);
    }

    /* line 87: ...-pretrain-1x-amp_fp16-b16-85, bert-large pretrain, lamb, seq 512, 78.0 */
    r = ec_runs_get(runs, 85);
    assert_int_equal(r->line, 87);
    assert_string_equal(r->id, "a100-sxm4-40gb-bert-large-pretrain-1x-amp_fp16-b16-85");
    assert_string_equal(r->config.model, "bert-large");
    assert_string_equal(r->config.task, "pretrain");
    assert_int_equal(r->config.optimizer, EC_OPT_LAMB);
    assert_int_equal(r->config.seq_len, 512);
    assert_rel(r->value, 78.0, EC_TOL_EXACT);

    /* line 264: resnet50 imagenet, image_size 224, no seq_len, sgd, synthetic data, 1396.0 */
    r = ec_runs_get(runs, 262);
    assert_int_equal(r->line, 264);
    assert_string_equal(r->config.model, "resnet50");
    assert_int_equal(r->config.image_size, 224);
    assert_int_equal(r->config.seq_len, 0);
    assert_int_equal(r->config.batch_per_gpu, 720);
    assert_int_equal(r->config.optimizer, EC_OPT_SGD);
    assert_int_equal(r->config.data_synthetic, 1);
    assert_rel(r->value, 1396.0, EC_TOL_EXACT);

    /* line 368 (last): v100-sxm2-32gb resnet50, 8 GPUs ddp fp32, b296, 2862.0 */
    r = ec_runs_get(runs, 366);
    assert_int_equal(r->line, 368);
    assert_string_equal(r->id, "v100-sxm2-32gb-resnet50-imagenet-8x-fp32-b296-366");
    assert_int_equal(r->config.num_gpus, 8);
    assert_int_equal(r->config.strategy, EC_STRATEGY_DDP);
    assert_int_equal(r->config.precision, EC_PREC_FP32);
    assert_int_equal(r->config.batch_per_gpu, 296);
    assert_rel(r->value, 2862.0, EC_TOL_EXACT);

    /* every row: a measured throughput, ids unique (checked by the loader), lines in order */
    size_t n_ddp = 0;
    for (size_t i = 0; i < ec_runs_count(runs); i++) {
        r = ec_runs_get(runs, i);
        assert_int_equal(r->line, i + 2);
        assert_int_equal(r->metric, EC_METRIC_SAMPLES_PER_S);
        assert_true(r->value > 0);
        assert_true(r->config.batch_per_gpu >= 1);
        n_ddp += r->config.strategy == EC_STRATEGY_DDP;
    }
    assert_int_equal(n_ddp, 259); /* grep -c ',ddp,' calibration.csv */
    assert_null(ec_runs_get(runs, 367));
    ec_runs_free(runs);
}

/* ---- bad files --------------------------------------------------------------------------- */

/* bench/data/calibration_dle.csv is the shared file row for row, with the two settings the
 * NVIDIA DLE BERT scripts imply: eager attention, and apex O2 (fp16) where it says amp_fp16;
 * less the 12 Lambda rows made on 4x / 8x RTX A4000 systems that the shared file names RTX 3090 and the
 * 18 sequence-512 pre-training rows of NVIDIA's 2021 tables, which ran on LDDL's binned phase-2 data,
 * and the 3 RTX 2080 Ti BERT-large "fp16" rows on 2-8 GPUs that ran one GPU in fp32 (Lambda's configs
 * shift run_squad.sh's arguments); 3 RTX 3090 BERT-base values are scaled to the steps their runs made
 * (run_squad.py counts max_steps); and the 8 medians of NVIDIA tables that ran differently (NCHW and NHWC
 * ResNet-50, BERT pre-training and SQuAD on two PyTorch releases) are split into one row per table, id
 * + "-L<line>", the median lying between their values; the 4 2x RTX 3090 BERT figures that are the
 * truncated means of two machines' logs into one row per log, id + "-r<date>"
 * (tools/data/make_dle_runs.py). */
static int is_split_of(const char *median_id, const char *id, const char *suffix)
{
    size_t n = strlen(median_id);
    return strncmp(id, median_id, n) == 0 && strncmp(id + n, suffix, 2) == 0;
}

static void test_calibration_dle_csv(void **state)
{
    ec_ctx *ctx = *state;
    char *shared = env_path("EC_SHARED_DIR", "../../shared", "data/runs/calibration.csv");
    char *dle = env_path("EPOCHCAST_MODELS", "../models", "../bench/data/calibration_dle.csv");
    ec_runs *a = NULL, *b = NULL;

    if (!ec_test_exists(shared) || !ec_test_exists(dle)) {
        print_message("skipping: %s or %s not found\n", shared, dle);
        free(shared);
        free(dle);
        skip();
    }
    if (ec_runs_load(ctx, shared, &a) != EC_OK || ec_runs_load(ctx, dle, &b) != EC_OK)
        fail_msg("%s", ec_ctx_errmsg(ctx));
    free(shared);
    free(dle);
    assert_int_equal(ec_runs_count(a) + 8 + 4, ec_runs_count(b) + 12 + 18 + 3);
    size_t a4000 = 0, binned = 0, one_gpu = 0, step_count = 0, split = 0, two_machines = 0, steady = 0;
    for (size_t i = 0, j = 0; i < ec_runs_count(a); i++) {
        const ec_run *x = ec_runs_get(a, i), *y = ec_runs_get(b, j);
        if (y != NULL && is_split_of(x->id, y->id, "-r")) { /* one row per log, the table their mean */
            double sum = 0;
            size_t parts = 0;
            for (; (y = ec_runs_get(b, j)) != NULL && is_split_of(x->id, y->id, "-r"); j++, parts++) {
                assert_int_equal(x->config.num_gpus, y->config.num_gpus);
                assert_int_equal(x->config.batch_per_gpu, y->config.batch_per_gpu);
                sum += y->value;
            }
            assert_int_equal(parts, 2);
            /* Lambda's table truncates: value = floor(mean), within the logs' 0.1 rounding */
            assert_true(fabs(floor(sum / 2) - x->value) <= 1.0);
            two_machines++;
            continue;
        }
        if (y != NULL && is_split_of(x->id, y->id, "-L")) { /* one row per table, the median between them */
            double lo = y->value, hi = y->value;
            size_t parts = 0;
            for (; (y = ec_runs_get(b, j)) != NULL && is_split_of(x->id, y->id, "-L"); j++, parts++) {
                assert_int_equal(x->config.num_gpus, y->config.num_gpus);
                assert_int_equal(x->config.batch_per_gpu, y->config.batch_per_gpu);
                lo = y->value < lo ? y->value : lo;
                hi = y->value > hi ? y->value : hi;
            }
            assert_int_equal(parts, 2);
            assert_true(lo <= x->value && x->value <= hi); /* equal where the tables agree (12.0 and 12.0) */
            split++;
            continue;
        }
        if (y == NULL || strcmp(x->id, y->id) != 0) { /* left out: RTX A4000 systems, LDDL-binned phase 2 */
            if (strncmp(x->id, "rtx3090-", 8) == 0) {
                assert_true(x->config.num_gpus == 4 || x->config.num_gpus == 8);
                a4000++;
            } else if (strncmp(x->id, "rtx2080ti-bert-large-", 21) == 0) {
                assert_true(x->config.num_gpus > 1 && x->config.precision == EC_PREC_AMP_FP16);
                one_gpu++;
            } else {
                assert_true(strstr(x->id, "-pretrain-") != NULL && x->config.seq_len == 512);
                binned++;
            }
            continue;
        }
        j++;
        int bert = strncmp(x->config.model, "bert", 4) == 0;
        assert_string_equal(x->id, y->id);
        if (x->value != y->value && strstr(y->source, "steady rate") != NULL) {
            /* NGC 20.01: the logs' steady rate for the epochs' start-up the figure held (0.54-1 of it) */
            assert_true(y->value > x->value && y->value < 1.9 * x->value);
            steady++;
        } else if (x->value != y->value) { /* 2 epochs ended before max_steps 1000 */
            assert_true(strncmp(x->id, "rtx3090-bert-base-", 18) == 0 && y->value < x->value &&
                        y->value > 0.4 * x->value);
            step_count++;
        }
        assert_int_equal(x->config.batch_per_gpu, y->config.batch_per_gpu);
        assert_int_equal(y->config.attention, bert ? EC_ATTN_EAGER : x->config.attention);
        assert_int_equal(y->config.precision,
                         bert && x->config.precision == EC_PREC_AMP_FP16 ? EC_PREC_FP16 : x->config.precision);
    }
    assert_int_equal(a4000, 12);
    assert_int_equal(binned, 18);
    assert_int_equal(one_gpu, 3);
    assert_int_equal(step_count, 3);
    assert_int_equal(steady, 33); /* tools/data/make_dle_runs.py, "Steady rates of the NGC 20.01 runs" */
    assert_int_equal(split, 8);
    assert_int_equal(two_machines, 4);
    ec_runs_free(a);
    ec_runs_free(b);
}

static void test_bad_files(void **state)
{
    ec_ctx *ctx = *state;
    char *dir = env_path("EC_SOURCE_DIR", "..", "tests/bad/runs");
    char *expected = ec_test_path(dir, "EXPECTED");
    char *text = ec_test_read_file(expected, NULL);
    size_t n_files = 0;

    if (text == NULL)
        fail_msg("cannot read %s", expected);
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (tab == NULL)
            fail_msg("EXPECTED: no tab in '%s'", line);
        *tab = '\0';
        char *path = ec_test_path(dir, line);
        ec_runs *runs = (ec_runs *)&runs; /* must come back NULL */
        int rc = ec_runs_load(ctx, path, &runs);
        if (rc == EC_OK)
            fail_msg("%s: loaded, expected an error", line);
        assert_null(runs);
        assert_true(rc == EC_EINVAL || rc == EC_ENOTFOUND || rc == EC_EPARSE);
        assert_contains(ec_ctx_errmsg(ctx), tab + 1);
        free(path);
        n_files++;
    }
    assert_true(n_files >= 7);
    free(text);
    free(expected);
    free(dir);
}

/* The status codes of the bad files that have a specific one. */
static void test_bad_codes(void **state)
{
    ec_ctx *ctx = *state;
    static const struct { const char *file; int code; } cases[] = {
        { "unknown_column.csv", EC_ENOTFOUND }, { "bad_metric.csv", EC_EINVAL },
        { "negative_value.csv", EC_EINVAL },    { "bad_enum.csv", EC_EINVAL },
        { "duplicate_id.csv", EC_EINVAL },      { "batch_range.csv", EC_EINVAL },
        { "missing_value.csv", EC_EPARSE },     { "value_not_number.csv", EC_EPARSE },
    };
    char *dir = env_path("EC_SOURCE_DIR", "..", "tests/bad/runs");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = ec_test_path(dir, cases[i].file);
        ec_runs *runs = NULL;
        assert_int_equal(ec_runs_load(ctx, path, &runs), cases[i].code);
        assert_null(runs);
        free(path);
    }
    free(dir);
}

/* ---- small files ---------------------------------------------------------------------------- */

static void test_small_file(void **state)
{
    ec_ctx *ctx = *state;
    ec_runs *runs = NULL;
    /* CRLF, a quoted source with a comma, no optional source on one row, all three metrics,
     * columns in an unusual order, and config keys of every kind. */
    const char *text =
        "value,metric,id,gpu,num_gpus,network_gbit_per_s,pin_memory,tokenize,sample_cpu_s,seed,dataset_samples,source\r\n"
        "412.5,samples_per_s,a,t4,6,100,yes,on_the_fly,0.0021,18446744073709551615,,\"bench, run 3\"\r\n"
        "37.25,step_time_ms,b,a16,,,,,,,,\r\n"
        "2700,epoch_time_s,c,rtx4090,1,,0,upfront,,7,100000,x\r\n";
    int rc = load_text(ctx, text, &runs);
    if (rc != EC_OK)
        fail_msg("%s", ec_ctx_errmsg(ctx));
    assert_int_equal(ec_runs_count(runs), 3);

    const ec_run *a = ec_runs_get(runs, 0), *b = ec_runs_get(runs, 1), *c = ec_runs_get(runs, 2);
    assert_string_equal(a->id, "a");
    assert_string_equal(a->source, "bench, run 3");
    assert_int_equal(a->metric, EC_METRIC_SAMPLES_PER_S);
    assert_rel(a->value, 412.5, EC_TOL_EXACT);
    assert_int_equal(a->config.num_gpus, 6);
    /* 100 Gbit/s x 1e9 / 8 = 1.25e10 bytes/s */
    assert_rel(a->config.network_bytes_per_s, 1.25e10, EC_TOL_EXACT);
    assert_int_equal(a->config.pin_memory, 1);
    assert_int_equal(a->config.tokenize, EC_TOKENIZE_ON_THE_FLY);
    assert_rel(a->config.sample_cpu_s, 0.0021, EC_TOL_EXACT);
    assert_true(a->config.seed == UINT64_MAX);

    assert_string_equal(b->id, "b");
    assert_string_equal(b->source, ""); /* empty cell */
    assert_int_equal(b->metric, EC_METRIC_STEP_TIME_MS);
    assert_rel(b->value, 37.25, EC_TOL_EXACT);
    assert_int_equal(b->line, 3);
    /* empty cells are defaults, not given */
    ec_config def;
    ec_config_init(&def);
    assert_int_equal(b->config.num_gpus, 1);
    assert_true(b->config.sample_cpu_s < 0);
    assert_true(b->config.seed == def.seed);
    for (size_t i = 0; i < ec_config_key_count(); i++) /* gpu only */
        assert_int_equal(ec_config_is_set(&b->config, i), strcmp(ec_config_key_name(i), "gpu") == 0);

    assert_int_equal(c->metric, EC_METRIC_EPOCH_TIME_S);
    assert_rel(c->value, 2700, EC_TOL_EXACT);
    assert_true(c->config.seed == 7);
    assert_int_equal(c->line, 4);
    ec_runs_free(runs);

    /* metric tokens_per_s */
    runs = NULL;
    assert_int_equal(load_text(ctx, "id,metric,value\nt,tokens_per_s,26274\n", &runs), EC_OK);
    assert_int_equal(ec_runs_get(runs, 0)->metric, EC_METRIC_TOKENS_PER_S);
    ec_runs_free(runs);

    /* no source column at all: sources are "" */
    runs = NULL;
    rc = load_text(ctx, "id,metric,value\nonly,samples_per_s,1e3\n", &runs);
    assert_int_equal(rc, EC_OK);
    assert_int_equal(ec_runs_count(runs), 1);
    assert_string_equal(ec_runs_get(runs, 0)->source, "");
    assert_rel(ec_runs_get(runs, 0)->value, 1000, EC_TOL_EXACT);
    ec_runs_free(runs);

    /* a header and no rows: an error (issue 20: it reported "n 0 MAPE 0.0" and exit 0) */
    runs = (ec_runs *)&runs;
    assert_int_equal(load_text(ctx, "id,gpu,metric,value,source\n", &runs), EC_EPARSE);
    assert_null(runs);
    assert_contains(ec_ctx_errmsg(ctx), "no runs");
}

static void test_small_errors(void **state)
{
    ec_ctx *ctx = *state;
    ec_runs *runs = NULL;

    /* three copies of one id: the second occurrence is reported against the first */
    assert_int_equal(load_text(ctx,
                               "id,metric,value\nx,samples_per_s,1\ny,samples_per_s,2\n"
                               "y,samples_per_s,3\nx,samples_per_s,4\nx,samples_per_s,5\n",
                               &runs),
                     EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), ":4:1: duplicate id 'y' (first on line 3)");
    assert_null(runs);
    /* a typo of a role column */
    assert_int_equal(load_text(ctx, "id,metric,value,sourc\nx,samples_per_s,1,a\n", &runs),
                     EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), ":1:4: unknown column 'sourc' (did you mean 'source'?)");
    /* value 1e999 overflows a double */
    assert_int_equal(load_text(ctx, "id,metric,value\nx,samples_per_s,1e999\n", &runs), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), ":2:17: column 'value': '1e999' is too large");
    /* an unreadable path */
    assert_int_equal(ec_runs_load(ctx, "no/such/runs.csv", &runs), EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "no/such/runs.csv");
    assert_null(runs);
}

/* Names are checked when a row is read, once the context has its models: an unknown GPU is
 * located at its cell (issue 21: it used to pass the load and fail only at predict). */
static void test_names_checked_at_load(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_runs *runs = NULL;
    assert_int_equal(load_text(ctx, "id,model,gpu,batch_per_gpu,metric,value\n"
                                    "a,bert-base,t4,8,samples_per_s,100\n"
                                    "b,bert-base,a1000,8,samples_per_s,100\n", &runs),
                     EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), ":3:3: unknown gpu 'a1000'");
    assert_null(runs);
    assert_int_equal(load_text(ctx, "id,gpu,host,metric,value\na,t4,workstaton,samples_per_s,1\n", &runs),
                     EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), ":2:3: unknown host 'workstaton'");
    assert_int_equal(load_text(ctx, "id,gpu,task,metric,value\na,t4,squadv2,samples_per_s,1\n", &runs),
                     EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), ":2:3: key 'task': unknown task 'squadv2'");
    ec_ctx_free(ctx);
}

static void test_misuse(void **state)
{
    ec_ctx *ctx = *state;
    ec_runs *runs = (ec_runs *)&runs;

    assert_int_equal(ec_runs_load(NULL, "x.csv", &runs), EC_EMISUSE);
    assert_null(runs);
    assert_int_equal(ec_runs_load(ctx, NULL, &runs), EC_EMISUSE);
    assert_int_equal(ec_runs_load(ctx, "x.csv", NULL), EC_EMISUSE);
    ec_runs_free(NULL);
    assert_int_equal(ec_runs_count(NULL), 0);
    assert_null(ec_runs_get(NULL, 0));
}

/* Allocation k fails, for k = 1, 2, ... until the load succeeds: every failure is
 * EC_ENOMEM with a message, *out NULL, and nothing leaks. */
static void test_oom(void **state)
{
    (void)state;
    const char *text = "id,gpu,precision,metric,value,dataset_samples,source\n"
                       "r1,t4,amp_fp16,samples_per_s,101.5,,a\n"
                       "r2,a16,bf16,step_time_ms,37.5,,bb\n"
                       "r3,rtx4090,fp32,epoch_time_s,2700,50000,\n";
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "runs.csv");
    ec_test_write_file(path, text, strlen(text));

    int ok = 0;
    for (long k = 1; k < 10000 && !ok; k++) {
        ec_test_failalloc fa;
        ec_ctx *ctx = NULL;
        ec_test_failalloc_init(&fa, 0, 0);
        assert_int_equal(ec_ctx_new(ec_test_failalloc_fn, &fa, &ctx), EC_OK);
        /* A first load: the context then remembers path as an input (outfile.c) for good. */
        ec_runs *runs = NULL;
        assert_int_equal(ec_runs_load(ctx, path, &runs), EC_OK);
        ec_runs_free(runs);
        size_t base_bytes = (size_t)fa.live_bytes;
        long base_blocks = fa.live_blocks;
        fa.fail_at = fa.count + k;
        fa.persistent = k % 2; /* alternate transient and persistent failure */
        runs = (ec_runs *)&runs;
        int rc = ec_runs_load(ctx, path, &runs);
        if (rc == EC_OK) {
            assert_int_equal(ec_runs_count(runs), 3);
            assert_string_equal(ec_runs_get(runs, 1)->source, "bb");
            ec_runs_free(runs);
            ok = fa.failures == 0;
        } else {
            if (rc != EC_ENOMEM)
                fail_msg("k=%ld: %d %s", k, rc, ec_ctx_errmsg(ctx));
            assert_null(runs);
            assert_true(ec_ctx_errmsg(ctx)[0] != '\0');
        }
        assert_int_equal(fa.live_bytes, base_bytes);
        assert_int_equal(fa.live_blocks, base_blocks);
        assert_int_equal(fa.bad_osize, 0);
        ec_ctx_free(ctx);
        assert_int_equal(fa.live_blocks, 0);
    }
    assert_true(ok);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
}

/* ---- metrics and error statistics ------------------------------------------------------------ */

static void test_result_metric(void **state)
{
    (void)state;
    ec_result res;
    memset(&res, 0, sizeof res);
    res.samples_per_s = 1234.5;
    res.step_s = 0.0375;
    res.epoch_s = 2718.28;
    assert_rel(ec_result_metric(&res, EC_METRIC_SAMPLES_PER_S), 1234.5, EC_TOL_EXACT);
    /* 0.0375 s x 1e3 = 37.5 ms */
    assert_rel(ec_result_metric(&res, EC_METRIC_STEP_TIME_MS), 37.5, EC_TOL_EXACT);
    assert_rel(ec_result_metric(&res, EC_METRIC_EPOCH_TIME_S), 2718.28, EC_TOL_EXACT);
    res.tokens_per_s = 632064.0;
    assert_rel(ec_result_metric(&res, EC_METRIC_TOKENS_PER_S), 632064.0, EC_TOL_EXACT);
    /* the interval of tokens/s scales like that of samples/s: k / step_p90 .. k / step_p10 */
    res.step_p10_s = 0.03;
    res.step_p90_s = 0.05;
    double lo, hi;
    ec_result_metric_interval(&res, EC_METRIC_TOKENS_PER_S, &lo, &hi);
    assert_rel(lo, 632064.0 * 0.0375 / 0.05, EC_TOL_EXACT);
    assert_rel(hi, 632064.0 * 0.0375 / 0.03, EC_TOL_EXACT);
    res.memory.nvml_bytes = 21474836480.0;
    assert_rel(ec_result_metric(&res, EC_METRIC_PEAK_BYTES), 21474836480.0, EC_TOL_EXACT);
    ec_result_metric_interval(&res, EC_METRIC_PEAK_BYTES, &lo, &hi);
    assert_true(lo == 0 && hi == 0);
    assert_true(isnan(ec_result_metric(&res, (ec_metric)(EC_METRIC_FIRST_STEP_S + 1))));
    assert_true(isnan(ec_result_metric(NULL, EC_METRIC_SAMPLES_PER_S)));
}

static void test_error_stats(void **state)
{
    (void)state;
    /* pairs (predicted, measured) and e = (p - m) / m:
     *   (110, 100)  e = +0.10   counted, within 10% (|e| <= 0.10 inclusive)
     *   ( 90, 100)  e = -0.10   counted, within 10%
     *   (130, 100)  e = +0.30   counted, outside 20%
     *   ( 50,  40)  e = +0.25   counted, outside 20%
     *   ( 85, 100)  e = -0.15   counted, within 20%
     *   (  7,   0)  skipped: measured <= 0
     *   (  3,  -5)  skipped: measured <= 0
     *   (  1, NaN)  skipped: measured not finite
     *   (inf,  10)  skipped: prediction not finite
     * n = 5
     * mape = (0.10 + 0.10 + 0.30 + 0.25 + 0.15) / 5 = 0.90 / 5 = 0.18
     * bias = (0.10 - 0.10 + 0.30 + 0.25 - 0.15) / 5 = 0.40 / 5 = 0.08
     * max |e| = 0.30;  within 10%: 2 / 5 = 0.4;  within 20%: 3 / 5 = 0.6 */
    const double predicted[] = { 110, 90, 130, 50, 85, 7, 3, 1, INFINITY };
    const double measured[] = { 100, 100, 100, 40, 100, 0, -5, NAN, 10 };
    ec_error_stats st;

    ec_error_stats_compute(predicted, measured, 9, &st);
    assert_int_equal(st.n, 5);
    assert_rel(st.mape_frac, 0.18, EC_TOL_EXACT);
    assert_rel(st.bias_frac, 0.08, EC_TOL_EXACT);
    assert_rel(st.max_abs_frac, 0.30, EC_TOL_EXACT);
    assert_rel(st.within_10_frac, 0.4, EC_TOL_EXACT);
    assert_rel(st.within_20_frac, 0.6, EC_TOL_EXACT);

    /* nothing countable: all zero */
    memset(&st, 0xff, sizeof st);
    ec_error_stats_compute(predicted + 5, measured + 5, 4, &st);
    assert_int_equal(st.n, 0);
    assert_true(st.mape_frac == 0 && st.bias_frac == 0 && st.max_abs_frac == 0);
    assert_true(st.within_10_frac == 0 && st.within_20_frac == 0);
    memset(&st, 0xff, sizeof st);
    ec_error_stats_compute(predicted, measured, 0, &st);
    assert_int_equal(st.n, 0);
    ec_error_stats_compute(NULL, measured, 3, &st);
    assert_int_equal(st.n, 0);
    ec_error_stats_compute(predicted, measured, 3, NULL); /* no-op */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_calibration_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calibration_dle_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_errors, setup, teardown),
        cmocka_unit_test(test_names_checked_at_load),
        cmocka_unit_test_setup_teardown(test_misuse, setup, teardown),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_result_metric),
        cmocka_unit_test(test_error_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
