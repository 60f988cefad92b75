/*
 * test_pp_split.c: key pp_split, Megatron-Core's account_for_embedding_in_pipeline_split and
 * account_for_loss_in_pipeline_split (megatron/core/transformer/transformer_block.py
 * get_num_layers_to_build): the embedding and/or the loss count as one layer each, the L + e + l
 * "layers" split evenly over pp stages (x pp_chunks with the interleaved schedule), and the first
 * (last) stage builds one transformer layer fewer.  Expected stage tables are that arithmetic,
 * written out here for presets whose layer counts are public (Llama 3.2 1B: 16 layers, Llama 3.1
 * 8B: 32); bad values are refused naming the key.  Megatron-Bridge's Llama 3.1 405B recipe sets
 * both (126 + 2 = 128 = 8 stages x 8 chunks x 2), which an even split of 126 layers cannot run.
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

static void config_words(ec_ctx *ctx, ec_config *cfg, const char *words)
{
    char buf[1024];
    eci_strlcpy(buf, words, sizeof buf);
    ec_config_init(cfg);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        if (ec_config_set_word(ctx, cfg, w) != EC_OK)
            fail_msg("ec_config_set_word(%s): %s", w, ec_ctx_errmsg(ctx));
}

/* The stage table of words: n stages whose first layers and layer counts are first[] and count[]. */
static void stages_are(ec_ctx *ctx, const char *words, int n, const int *first, const int *count)
{
    ec_config cfg;
    ec_stage st[16];
    size_t got = 0;
    config_words(ctx, &cfg, words);
    if (ec_predict_stages(ctx, &cfg, st, 16, &got) != EC_OK)
        fail_msg("%s: %s", words, ec_ctx_errmsg(ctx));
    assert_int_equal((int)got, n);
    for (int s = 0; s < n; s++) {
        if (st[s].first_layer != first[s] || st[s].layers != count[s])
            fail_msg("%s: stage %d holds [%d, +%d), expected [%d, +%d)", words, s, st[s].first_layer, st[s].layers,
                     first[s], count[s]);
    }
}

/* EC_EINVAL from ec_predict with every needle in the message. */
static void refused(ec_ctx *ctx, const char *words, const char *needle1, const char *needle2)
{
    ec_config cfg;
    ec_result res;
    config_words(ctx, &cfg, words);
    int rc = ec_predict(ctx, &cfg, &res);
    if (rc != EC_EINVAL)
        fail_msg("%s: expected EC_EINVAL, got %d (%s)", words, rc, rc == EC_OK ? "a result" : ec_ctx_errmsg(ctx));
    const char *msg = ec_ctx_errmsg(ctx);
    if (strstr(msg, needle1) == NULL || (needle2 != NULL && strstr(msg, needle2) == NULL))
        fail_msg("%s: message '%s' lacks '%s' or '%s'", words, msg, needle1, needle2 ? needle2 : "");
}

#define B1 "model=llama-3.2-1b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=2048 grad_accum=8 "

/* Llama 3.2 1B, 16 layers + embedding + loss = 18 = 3 stages x 6: the first and last stages hold
 * 5 transformer layers, the middle one 6; interleaved over 3 x 2 chunks of 3 the same per rank
 * (chunk 0 holds 2, chunk 5 holds 2); 2 stages x 3 chunks: 8 and 8. */
static void test_embedding_loss_tables(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const int f3[] = {0, 5, 11}, c3[] = {5, 6, 5}, f2[] = {0, 8}, c2[] = {8, 8};
    stages_are(ctx, B1 "num_gpus=3 pp=3 pp_split=embedding_loss", 3, f3, c3);
    stages_are(ctx, B1 "num_gpus=3 pp=3 pp_schedule=interleaved pp_chunks=2 pp_split=embedding_loss", 3, f3, c3);
    stages_are(ctx, B1 "num_gpus=2 pp=2 pp_schedule=interleaved pp_chunks=3 pp_split=embedding_loss", 2, f2, c2);
    ec_ctx_free(ctx);
}

/* Llama 3.1 8B, 32 layers: with the embedding alone 33 = 3 x 11, the first stage 10 layers; with the
 * loss alone the last stage 10; the default (layers) splits 32 as 10, 11, 11 (Megatron's even
 * split rounds down: s x 32 / 3). */
static void test_embedding_or_loss_alone(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *base = "model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=2048 "
                       "grad_accum=8 num_gpus=3 pp=3 ";
    char words[512];
    const int fe[] = {0, 10, 21}, ce[] = {10, 11, 11}, fl[] = {0, 11, 22}, cl[] = {11, 11, 10};
    snprintf(words, sizeof words, "%spp_split=embedding", base);
    stages_are(ctx, words, 3, fe, ce);
    snprintf(words, sizeof words, "%spp_split=loss", base);
    stages_are(ctx, words, 3, fl, cl);
    ec_ctx_free(ctx);
}

/* What the split changes is priced: the first and last stages carry the embedding and the head,
 * so taking a layer off each shortens the slowest stage and with it the step. */
static void test_split_shortens_the_step(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config a, b;
    ec_result ra, rb;
    config_words(ctx, &a, B1 "num_gpus=3 pp=3");
    config_words(ctx, &b, B1 "num_gpus=3 pp=3 pp_split=embedding_loss");
    assert_int_equal(ec_predict(ctx, &a, &ra), EC_OK);
    assert_int_equal(ec_predict(ctx, &b, &rb), EC_OK);
    assert_true(rb.step_s < ra.step_s);
    ec_ctx_free(ctx);
}

/* Bad input: an unknown value names the key and its choices; pp_split without a pipeline, and a
 * count that does not divide, are refused naming pp_split; an interleaved layout whose layers do
 * not divide says that pp_split can count the embedding and the loss. */
static void test_bad_values_refused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "pp_split", "embeddings"), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "pp_split"));
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "embedding_loss"));
    refused(ctx, B1 "num_gpus=1 pp_split=embedding_loss", "pp_split=embedding_loss", "pp > 1");
    refused(ctx, B1 "num_gpus=4 pp=4 pp_split=embedding_loss", "pp_split=embedding_loss", "(18)");
    refused(ctx, B1 "num_gpus=3 pp=3 pp_schedule=interleaved pp_chunks=2", "must divide", "pp_split=embedding_loss");
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedding_loss_tables),
        cmocka_unit_test(test_embedding_or_loss_alone),
        cmocka_unit_test(test_split_shortens_the_step),
        cmocka_unit_test(test_bad_values_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
