/*
 * cli_compare.c: `epochcast compare A -- B` and `epochcast max-batch`, the CLI faces of
 * ec.compare and ec.max_batch.  compare predicts two configurations, B starting from A's words
 * (give only what changes), and prints them side by side with the ratios; max-batch prints the
 * largest batch_per_gpu that fits (ec_max_batch) and the memory at it.  Nothing here models
 * anything: the numbers are ec_predict's and ec_max_batch's.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char compare_usage[] =
    "usage: epochcast compare key=value ... -- key=value ... [--csv]\n"
    "\n"
    "Predict configuration A (the words before --) and configuration B (A's words, then the\n"
    "words after --: give only what changes) and print both with B/A: step time (and each\n"
    "side's p10-p90 in ms, the interval from the profile's held-out errors), throughput,\n"
    "epoch and run time, cost, GPU utilization, MFU, peak memory, the bottleneck, and the keys\n"
    "that differ once each configuration's derived values are filled in.\n"
    "  --csv     print a CSV header and two rows (A, B): config keys, then results\n"
    "\n"
    "example: epochcast compare model=bert-base gpu=t4 batch_per_gpu=32 -- precision=amp_fp16\n";

static const char max_batch_usage[] =
    "usage: epochcast max-batch key=value ... [--limit N] [--csv]\n"
    "\n"
    "The largest batch_per_gpu (1..N, default 65536) whose predicted peak memory fits the GPU\n"
    "with the memory headroom left free (memory_headroom_gib, docs/memory.md), by bisection over\n"
    "the memory model, the memory at that batch, and the larger batches that would run only\n"
    "without the headroom (at the edge of out-of-memory).  batch_per_gpu may be left out.  0 when\n"
    "not even batch_per_gpu=1 fits.\n"
    "  --csv     print max_batch,peak_bytes,capacity_bytes,headroom_bytes,edge_max_batch\n"
    "\n"
    "example: epochcast max-batch model=bert-large gpu=t4 precision=amp_fp16 seq_len=512\n";

static double ratio(double b, double a)
{
    return a > 0 ? b / a : 0;
}

static void row_num(const char *label, double a, double b, double scale, const char *unit)
{
    if (a == 0 && b == 0) {
        printf("  %-22s %14s %14s %8s\n", label, "-", "-", "");
        return;
    }
    char r[32] = "";
    if (a > 0 && b > 0)
        snprintf(r, sizeof r, "%.3gx", b / a);
    printf("  %-22s %11.4g %-2s %11.4g %-2s %8s\n", label, a * scale, unit, b * scale, unit, r);
}

/* A row of two texts (a duration, an amount) and B/A of the numbers behind them. */
static void row_text(const char *label, const char *ta, const char *tb, double a, double b)
{
    char r[32] = "";
    if (a > 0 && b > 0)
        snprintf(r, sizeof r, "%.3gx", b / a);
    printf("  %-22s %14s %14s %8s\n", label, ta, tb, r);
}

static void row_duration(const char *label, double a, double b)
{
    char ta[32], tb[32];
    row_text(label, ec_format_duration(a, ta, sizeof ta), ec_format_duration(b, tb, sizeof tb), a, b);
}

static void row_money(const char *label, double a, const char *ca, double b, const char *cb)
{
    char ta[48], tb[48];
    row_text(label, ec_format_money(a, ca, ta, sizeof ta), ec_format_money(b, cb, tb, sizeof tb), a, b);
}

/* The CSV rows of the two predictions: every config key (as simulated), then the results. */
static void compare_csv(lua_State *L, ec_ctx *ctx, const ec_config *cfg, const ec_result *res, int header)
{
    size_t nk = ec_config_key_count(), nr = ecL_result_column_count(), n = nk + nr;
    const char **fields = (const char **)lua_newuserdatauv(L, n * sizeof *fields, 0);
    char *cells = (char *)lua_newuserdatauv(L, n * EC_WARNING_TEXT_MAX, 0);
    if (header) {
        for (size_t c = 0; c < n; c++)
            fields[c] = c < nk ? ec_config_key_name(c) : ecL_result_column_name(c - nk);
        (void)ec_csv_print_row(stdout, fields, n);
    }
    ec_config shown;
    if (ec_config_resolve(ctx, cfg, &shown) != EC_OK)
        shown = *cfg;
    for (size_t c = 0; c < n; c++) {
        char *cell = cells + c * EC_WARNING_TEXT_MAX;
        cell[0] = '\0';
        if (c < nk) {
            if (ec_config_get(&shown, ec_config_key_name(c), cell, EC_WARNING_TEXT_MAX) != EC_OK)
                cell[0] = '\0';
        } else {
            ecL_result_column_text(res, c - nk, cell, EC_WARNING_TEXT_MAX);
        }
        fields[c] = cell;
    }
    (void)ec_csv_print_row(stdout, fields, n);
    lua_pop(L, 2);
}

int ecC_cmd_compare(lua_State *L, int argc, char **argv)
{
    int csv = 0, split = -1;
    for (int i = 0; i < argc; i++) {
        if (ecC_is_help(argv[i]))
            return fputs(compare_usage, stdout), 0;
        if (strcmp(argv[i], "--") == 0 && split < 0)
            split = i;
    }
    if (split < 0)
        return ecC_usage_error("compare", "compare: expected A's words, then --, then what B changes");
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    ec_config a, b;
    ec_config_init(&a);
    for (int i = 0; i < argc; i++) {
        if (i == split)
            continue;
        if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
            continue;
        }
        if (argv[i][0] == '-')
            return ecC_usage_error("compare", "compare: unknown option '%s'", argv[i]);
        if (i == split + 1)
            b = a; /* B starts from A */
        if (strchr(argv[i], '=') == NULL)
            return ecC_usage_error("compare", "compare: expected key=value, got '%s'", argv[i]);
        if (ec_config_set_word(ctx, i < split ? &a : &b, argv[i]) != EC_OK)
            return ecC_error("%s: %s", i < split ? "A" : "B", ec_ctx_errmsg(ctx));
    }
    if (split + 1 >= argc || (argc == split + 2 && csv && strcmp(argv[argc - 1], "--csv") == 0))
        b = a; /* nothing after --: B is A */
    ec_result ra, rb;
    if (ec_predict(ctx, &a, &ra) != EC_OK)
        return ecC_error("A: %s", ec_ctx_errmsg(ctx));
    if (ec_predict(ctx, &b, &rb) != EC_OK)
        return ecC_error("B: %s", ec_ctx_errmsg(ctx));
    if (csv) {
        compare_csv(L, ctx, &a, &ra, 1);
        compare_csv(L, ctx, &b, &rb, 0);
        return 0;
    }
    ec_config sa, sb;
    if (ec_config_resolve(ctx, &a, &sa) != EC_OK || ec_config_resolve(ctx, &b, &sb) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    printf("changed (B against A):");
    int changed = 0;
    for (size_t k = 0; k < ec_config_key_count(); k++) {
        char va[EC_PATH_MAX], vb[EC_PATH_MAX];
        const char *key = ec_config_key_name(k);
        if (ec_config_get(&sa, key, va, sizeof va) == EC_OK && ec_config_get(&sb, key, vb, sizeof vb) == EC_OK &&
            strcmp(va, vb) != 0) {
            printf("%s %s: %s -> %s", changed++ ? "," : "", key, va[0] ? va : "(default)", vb[0] ? vb : "(default)");
        }
    }
    printf("%s\n", changed ? "" : " nothing");
    printf("  %-22s %14s %14s %8s\n", "", "A", "B", "B/A");
    row_num("step time", ra.step_s, rb.step_s, 1e3, "ms");
    char ba[48], bb[48]; /* each step's p10-p90: how far apart A and B must be to tell them apart */
    printf("  %-22s %14s %14s\n", "step p10-p90 (ms)", ecC_step_band(&ra, ba, sizeof ba), ecC_step_band(&rb, bb, sizeof bb));
    row_num("samples/s", ra.samples_per_s, rb.samples_per_s, 1, "");
    row_duration("epoch time", ra.epoch_s, rb.epoch_s);
    row_duration("run time", ra.run_s, rb.run_s);
    const char *ca = ra.price_currency, *cb = rb.price_currency;
    if (ra.cost_per_epoch > 0 || rb.cost_per_epoch > 0)
        row_money("cost per epoch", ra.cost_per_epoch, ca, rb.cost_per_epoch, cb);
    row_money("cost of the run", ra.cost_run, ca, rb.cost_run, cb);
    if (ra.tokens_per_s != ra.samples_per_s || rb.tokens_per_s != rb.samples_per_s)
        row_money("cost per 1M tokens", ra.cost_per_million_tokens, ca, rb.cost_per_million_tokens, cb);
    else /* a sample is one token (an image) */
        row_money("cost per 1k samples", ra.cost_per_million_tokens / 1000, ca, rb.cost_per_million_tokens / 1000, cb);
    row_money("price per hour", ra.price_per_hour, ca, rb.price_per_hour, cb);
    row_num("GPU busy", ra.gpu_util_frac, rb.gpu_util_frac, 100, "%");
    row_num("MFU", ra.mfu_frac, rb.mfu_frac, 100, "%");
    row_num("peak memory", ra.memory.peak_bytes, rb.memory.peak_bytes, 1 / GIB, "Gi");
    printf("  %-22s %14s %14s\n", "fits", ra.memory.fits ? "yes" : "no", rb.memory.fits ? "yes" : "no");
    printf("  %-22s %14s %14s\n", "bottleneck", ec_bottleneck_name(ra.bottleneck), ec_bottleneck_name(rb.bottleneck));
    printf("speedup (samples/s, B over A): %.3gx\n", ratio(rb.samples_per_s, ra.samples_per_s));
    printf("offer A: %s\noffer B: %s\n", ra.price_offer[0] ? ra.price_offer : "no price for this GPU",
           rb.price_offer[0] ? rb.price_offer : "no price for this GPU");
    if (ra.run_s == 0 && rb.run_s == 0 && (ra.price_per_hour > 0 || rb.price_per_hour > 0))
        printf("(run time and its cost: give dataset_samples=N, train_tokens=N or train_samples=N)\n");
    if (ra.warning_text[0] != '\0')
        printf("A warns: %s\n", ra.warning_text);
    if (rb.warning_text[0] != '\0')
        printf("B warns: %s\n", rb.warning_text);
    return 0;
}

int ecC_cmd_max_batch(lua_State *L, int argc, char **argv)
{
    int csv = 0, words = 0;
    long limit = 0;
    for (int i = 0; i < argc; i++)
        if (ecC_is_help(argv[i]))
            return fputs(max_batch_usage, stdout), 0;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    ec_config cfg;
    ec_config_init(&cfg);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--csv") == 0) {
            csv = 1;
        } else if (strcmp(a, "--limit") == 0) {
            char *end;
            if (++i >= argc)
                return ecC_usage_error("max-batch", "max-batch: --limit needs a number");
            limit = strtol(argv[i], &end, 10);
            if (*end != '\0' || limit < 1 || limit > 1048576)
                return ecC_usage_error("max-batch", "max-batch: --limit takes an integer in [1, 1048576], got '%s'", argv[i]);
        } else if (a[0] == '-') {
            return ecC_usage_error("max-batch", "max-batch: unknown option '%s'", a);
        } else {
            int code = ecC_config_words(L, ctx, "max-batch", 1, argv + i, &cfg);
            if (code >= 0)
                return code;
            words++;
        }
    }
    if (words == 0)
        return ecC_usage_error("max-batch", "max-batch: give the configuration as key=value words");
    int batch = 0;
    if (ec_max_batch(ctx, &cfg, (int)limit, &batch) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    ec_result res;
    char b[32]; /* the memory at the answer (at batch 1 when nothing fits) */
    snprintf(b, sizeof b, "%d", batch > 0 ? batch : 1);
    if (ec_config_set(ctx, &cfg, "batch_per_gpu", b) != EC_OK || ec_predict(ctx, &cfg, &res) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    /* the batches that run only without the headroom: at the edge of out-of-memory */
    ec_config edge = cfg;
    int edge_batch = 0;
    if (ec_config_set(ctx, &edge, "memory_headroom_gib", "0") != EC_OK ||
        ec_max_batch(ctx, &edge, (int)limit, &edge_batch) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    const ec_memory *m = &res.memory;
    if (csv) {
        printf("max_batch,peak_bytes,capacity_bytes,headroom_bytes,edge_max_batch\n%d,%.0f,%.0f,%.0f,%d\n", batch,
               m->peak_bytes, m->capacity_bytes, m->headroom_bytes, edge_batch);
        return 0;
    }
    if (batch == 0)
        printf("not even batch_per_gpu 1 fits: peak %.2f GiB of %.2f GiB\n", m->peak_bytes / GIB, m->capacity_bytes / GIB);
    else
        printf("max batch_per_gpu %d%s: needs %.2f of %.2f GiB, %.2f GiB free for the %.2f GiB headroom (%s); "
               "nvidia-smi would show %.2f GiB (%.0f%%)\n", batch, limit > 0 && batch == limit ? " (the --limit)" : "",
               m->needed_bytes / GIB, m->capacity_bytes / GIB, (m->capacity_bytes - m->needed_bytes) / GIB,
               m->headroom_bytes / GIB, cfg.memory_headroom_bytes >= 0 ? "memory_headroom_gib" : "default",
               m->peak_bytes / GIB, 100 * m->peak_bytes / m->capacity_bytes);
    if (edge_batch > batch + 1)
        printf("at the edge of out-of-memory, not recommended: batch_per_gpu %d-%d run only without the headroom\n",
               batch + 1, edge_batch);
    else if (edge_batch == batch + 1)
        printf("at the edge of out-of-memory, not recommended: batch_per_gpu %d runs only without the headroom\n",
               edge_batch);
    return 0;
}
