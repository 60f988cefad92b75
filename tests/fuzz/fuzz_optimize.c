/*
 * fuzz_optimize.c: libFuzzer harness for the layout search's keys (ec_optimize_set,
 * ec_optimize_run; issue 42).  The bytes are key=value words separated by whitespace: a
 * search key or option (ec_optimize_is_key: gpu, num_gpus, global_batch(_tokens), tp, pp, cp,
 * ep, batch_per_gpu, checkpointing, strategy, goal, train_tokens, top, ...) goes to the
 * search, any other word to the base configuration.  A base of gpt2 at seq_len 1024 on 8
 * A100s with 524,288 tokens a step, DDP, tp and pp 1 or 2, micro-batches 1 or 4, with and
 * without checkpointing comes first (16 candidates), so most inputs search; threads is
 * always 1 and a list of more than 8 values is skipped, so an input stays quick.  What is ranked must
 * be finite (tokens/s, step, MFU, peak, train time, cost, behind_frac in [0, 1]); failures
 * must say why.
 */
#include "fuzz_common.h"

#include <ctype.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_WORDS 32
#define MAX_VALUES 8

static void check_layout(const ec_optimize_layout *l, int ranked)
{
    const double v[] = {l->tokens_per_s, l->mfu_frac, l->hfu_frac, l->step_s, l->peak_bytes, l->capacity_bytes,
                        l->train_s, l->cost, l->price_per_hour, l->exposed_comm_s, l->global_batch};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            abort();
    /* recompute_s is hfu - mfu of the kernels times the step: a rounding below 0 (-1.3e-16 s
     * for gpt2 without checkpointing) is not a finding */
    if (!isfinite(l->recompute_s) || l->recompute_s < -1e-9 * l->step_s)
        abort();
    if (ranked && !(l->behind_frac >= 0 && l->behind_frac <= 1))
        abort();
    if (!(l->step_s > 0) || l->dp < 1)
        abort();
}

/* Split data into at most MAX_WORDS NUL-terminated words in buf. */
static size_t split_words(const uint8_t *data, size_t size, char buf[][256])
{
    size_t n = 0, i = 0;
    while (i < size && n < MAX_WORDS) {
        while (i < size && isspace(data[i]))
            i++;
        size_t k = 0;
        while (i < size && !isspace(data[i]) && k + 1 < 256)
            buf[n][k++] = (char)data[i++];
        while (i < size && !isspace(data[i]))
            i++;
        if (k > 0) {
            buf[n][k] = '\0';
            n++;
        }
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ec_ctx *ctx;
    if (ctx == NULL && (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, fuzz_models_dir()) != EC_OK))
        abort();
    static char words[MAX_WORDS][256];
    size_t n = split_words(data, size, words);
    ec_config base;
    ec_config_init(&base);
    ec_config_set_word(ctx, &base, "model=gpt2");
    ec_config_set_word(ctx, &base, "seq_len=1024");
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(words[i], '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        int search = ec_optimize_is_key(words[i]);
        *eq = '=';
        if (!search)
            fuzz_check_error(ctx, ec_config_set_word(ctx, &base, words[i]));
    }
    ec_optimize *o;
    int rc = ec_optimize_new(ctx, &base, &o);
    fuzz_check_error(ctx, rc);
    if (rc != EC_OK)
        return 0;
    ec_optimize_set(o, "gpu", "a100-sxm4-80gb");
    ec_optimize_set(o, "num_gpus", "8");
    ec_optimize_set(o, "global_batch_tokens", "524288");
    /* a small search unless the input widens it: 16 candidates, not 216 */
    ec_optimize_set(o, "tp", "1,2");
    ec_optimize_set(o, "pp", "1,2");
    ec_optimize_set(o, "batch_per_gpu", "1,4");
    ec_optimize_set(o, "checkpointing", "0,1");
    ec_optimize_set(o, "strategy", "ddp");
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(words[i], '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        size_t values = 1;
        for (const char *p = eq + 1; *p != '\0'; p++)
            values += *p == ',';
        if (ec_optimize_is_key(words[i]) && strcmp(words[i], "threads") != 0 && strcmp(words[i], "parts") != 0 &&
            values <= MAX_VALUES)
            fuzz_check_error(ctx, ec_optimize_set(o, words[i], eq + 1));
    }
    ec_optimize_set(o, "threads", "1");
    rc = ec_optimize_run(o);
    fuzz_check_error(ctx, rc);
    if (rc == EC_OK) {
        ec_optimize_layout l;
        for (size_t i = 0; i < ec_optimize_count(o); i++)
            if (ec_optimize_get(o, 0, i, &l) == EC_OK)
                check_layout(&l, 1);
        for (size_t i = 0; i < ec_optimize_no_fit_count(o); i++)
            if (ec_optimize_get(o, 1, i, &l) == EC_OK)
                check_layout(&l, 0);
    }
    ec_optimize_free(o);
    return 0;
}
