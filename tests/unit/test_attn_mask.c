/*
 * test_attn_mask.c: the mask a causal self-attention hands PyTorch's SDPA (key attn_mask;
 * model/attn_rates.c eci_sdpa_masked).  With none SDPA runs is_causal and its kernels skip
 * the key blocks above the diagonal; with an explicit mask every block is computed, on a
 * backend that takes a mask (models/sdpa_backends.csv attn_mask).  auto is explicit for a
 * padded batch (lengths=) and under torch.compile from the PyTorch release of constants.csv
 * hf_compile_mask_from_version (HF transformers' masking_utils builds the causal mask whenever
 * Dynamo traces), none otherwise.  Each test states a relation the mechanism implies.
 */
#include "ec_test.h"
#include "internal.h"
#include "catalog/consts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLAMA "model=llama-3.2-1b gpu=a100-sxm4-80gb precision=bf16 batch_per_gpu=1 data=on_gpu "

static double step_s(ec_ctx *ctx, const char *more)
{
    char words[400];
    snprintf(words, sizeof words, LLAMA "%s", more);
    ec_result r;
    ec_test_predict(ctx, words, &r);
    return r.step_s;
}

/* auto follows the release: under compile an explicit mask from hf_compile_mask_from_version
 * (and with torch_version unset, the current stack), none before it and in eager. */
static void test_auto_follows_release(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char from[32], before[32];
    double v = eci_const(ctx, EC_C_hf_compile_mask_from_version);
    int major = (int)v / 1000, minor = (int)v % 1000; /* EC_RELEASE(major, minor) */
    snprintf(from, sizeof from, "torch_version=%d.%d ", major, minor);
    snprintf(before, sizeof before, "torch_version=%d.%d ", major, minor - 1);
    char w[160];
    snprintf(w, sizeof w, "seq_len=4096 compile=1 %s", from);
    double auto_from = step_s(ctx, w);
    snprintf(w, sizeof w, "seq_len=4096 compile=1 attn_mask=explicit %s", from);
    double explicit_from = step_s(ctx, w);
    snprintf(w, sizeof w, "seq_len=4096 compile=1 attn_mask=none %s", from);
    double none_from = step_s(ctx, w);
    snprintf(w, sizeof w, "seq_len=4096 compile=1 %s", before);
    double auto_before = step_s(ctx, w);
    snprintf(w, sizeof w, "seq_len=4096 compile=1 attn_mask=none %s", before);
    double none_before = step_s(ctx, w);
    assert_rel(auto_from, explicit_from, EC_TOL_EXACT);
    assert_true(explicit_from > none_from);
    assert_rel(auto_before, none_before, EC_TOL_EXACT);
    assert_rel(step_s(ctx, "seq_len=4096 compile=1"), step_s(ctx, "seq_len=4096 compile=1 attn_mask=explicit"),
               EC_TOL_EXACT);
    /* eager: HF skips the mask (is_causal) */
    assert_rel(step_s(ctx, "seq_len=4096"), step_s(ctx, "seq_len=4096 attn_mask=none"), EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* What the mask costs is attention's: every key block instead of those at or below the
 * diagonal (and the slower masked backend), a cost that grows as s^2 per sequence while the
 * rest of the step grows as s.  Doubling the sequence at one sample a batch at least triples
 * it (4x for attention alone, less what the backends' rates change with s). */
static void test_cost_grows_with_sequence(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    double d4 = step_s(ctx, "seq_len=4096 attn_mask=explicit") - step_s(ctx, "seq_len=4096 attn_mask=none");
    double d8 = step_s(ctx, "seq_len=8192 attn_mask=explicit") - step_s(ctx, "seq_len=8192 attn_mask=none");
    assert_true(d4 > 0);
    assert_true(d8 > 3.0 * d4);
    ec_ctx_free(ctx);
}

/* The mask is SDPA's: attention=flash (flash-attn called directly, as HF's flash_attention_2
 * does) runs its causal kernel whatever the key says; a padded batch is masked under auto. */
static void test_sdpa_only_and_padding(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    assert_rel(step_s(ctx, "seq_len=4096 attention=flash attn_mask=explicit"),
               step_s(ctx, "seq_len=4096 attention=flash attn_mask=none"), EC_TOL_EXACT);
    const char *pad = "seq_len=4096 lengths=fixed(4096) ";
    char a[160], e[160];
    snprintf(a, sizeof a, "%s", pad);
    snprintf(e, sizeof e, "%sattn_mask=explicit", pad);
    assert_rel(step_s(ctx, a), step_s(ctx, e), EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* attn_mask_eff scales the masked runs' kernels only (the profile's kernels cell, as attn_eff's):
 * a B200 compiled from torch 2.11 on runs SDPA through cuDNN masked, so a profile whose
 * attn_mask_eff names cudnn slows it, one that names another kernel leaves it at the prior 1 (as
 * a profile without the row does), and an unmasked run never takes it. */
static void test_mask_scale_gated_by_kernel(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    const char *names[3] = {"cudnn.csv", "flash2.csv", "none.csv"};
    const char *texts[3] = {"parameter,architecture,value,stderr,runs,fitted_on,kernels\nattn_mask_eff,,0.5,,,,cudnn\n",
                            "parameter,architecture,value,stderr,runs,fitted_on,kernels\nattn_mask_eff,,0.5,,,,flash2\n",
                            "parameter,architecture,value,stderr,runs,fitted_on,kernels\ngemm_scale,,1,,,,\n"};
    double masked[3], causal[3];
    for (int i = 0; i < 3; i++) {
        char *path = ec_test_path(dir, names[i]);
        ec_test_write_file(path, texts[i], strlen(texts[i]));
        char w[600];
        ec_result r;
        snprintf(w, sizeof w, "model=llama-3.2-1b gpu=b200 precision=bf16 batch_per_gpu=1 seq_len=4096 data=on_gpu "
                 "torch_version=2.13 compile=1 profile=%s", path);
        ec_test_predict(ctx, w, &r);
        masked[i] = r.step_s;
        snprintf(w, sizeof w, "model=llama-3.2-1b gpu=b200 precision=bf16 batch_per_gpu=1 seq_len=4096 data=on_gpu "
                 "torch_version=2.13 compile=1 attn_mask=none profile=%s", path);
        ec_test_predict(ctx, w, &r);
        causal[i] = r.step_s;
        free(path);
    }
    assert_true(masked[0] > masked[2]);
    assert_rel(masked[1], masked[2], EC_TOL_EXACT);
    assert_rel(causal[0], causal[2], EC_TOL_EXACT);
    assert_rel(causal[1], causal[2], EC_TOL_EXACT);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Where the key changes nothing it is named in the ignored-keys warning: a kernel named
 * explicitly, attention computed op by op (attention=eager on a network with an eager path), a
 * network without attention. */
static void test_ignored_where_no_sdpa(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *cases[] = {LLAMA "seq_len=1024 attention=flash attn_mask=explicit",
                           LLAMA "seq_len=1024 attention=eager attn_mask=none",
                           "model=resnet50 gpu=a100-sxm4-80gb batch_per_gpu=32 attn_mask=explicit"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_result r;
        ec_test_predict(ctx, cases[i], &r);
        assert_non_null(strstr(r.warning_text, "attn_mask (attention through SDPA only)"));
    }
    ec_result r;
    ec_test_predict(ctx, LLAMA "seq_len=1024 attn_mask=explicit", &r);
    assert_null(strstr(r.warning_text, "attn_mask ("));
    ec_ctx_free(ctx);
}

/* Under compile, auto's explicit mask is said (EC_WARN_COMPILE_MASK), not when the key is given,
 * in eager, or for a bidirectional network. */
static void test_compile_mask_warned(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result r;
    ec_test_predict(ctx, LLAMA "seq_len=1024 compile=1", &r);
    assert_true(r.warnings & EC_WARN_COMPILE_MASK);
    assert_non_null(strstr(r.warning_text, "attn_mask=none"));
    const char *quiet[] = {LLAMA "seq_len=1024 compile=1 attn_mask=explicit", LLAMA "seq_len=1024",
                           LLAMA "seq_len=1024 compile=1 torch_version=2.7",
                           "model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=8 seq_len=512 compile=1"};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++) {
        ec_test_predict(ctx, quiet[i], &r);
        assert_false(r.warnings & EC_WARN_COMPILE_MASK);
    }
    ec_ctx_free(ctx);
}

static void test_bad_value(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "attn_mask", "causal"), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "attn_mask"));
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_follows_release),
        cmocka_unit_test(test_cost_grows_with_sequence),
        cmocka_unit_test(test_sdpa_only_and_padding),
        cmocka_unit_test(test_mask_scale_gated_by_kernel),
        cmocka_unit_test(test_ignored_where_no_sdpa),
        cmocka_unit_test(test_compile_mask_warned),
        cmocka_unit_test(test_bad_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
