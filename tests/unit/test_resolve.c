/*
 * test_resolve.c: what a prediction says about its own inputs (issue 21, "no silent cases"):
 * ec_config_resolve fills in what was derived, keys that change nothing are named in a
 * warning, what PyTorch refuses is refused, the bottleneck names a loader the GPU waits on,
 * MFU is taken against the unit that really runs the matmuls.  Each test fails on the
 * behaviour before issue 21.
 */
#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *get(const ec_config *cfg, const char *key)
{
    static char buf[EC_PATH_MAX];
    assert_int_equal(ec_config_get(cfg, key, buf, sizeof buf), EC_OK);
    return buf;
}

/* Multi-GPU rows with the strategy left at its default said strategy=single although DDP was
 * simulated; task, seq_len, topology and nodes were blanks. */
static void test_resolve_fills_derived(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg, r;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=A100-SXM4-80GB num_gpus=4 batch_per_gpu=8");
    assert_string_equal(get(&cfg, "strategy"), "single"); /* the raw default */
    assert_int_equal(ec_config_resolve(ctx, &cfg, &r), EC_OK);
    assert_string_equal(get(&r, "strategy"), "ddp");
    assert_string_equal(get(&r, "gpu"), "a100-sxm4-80gb");
    assert_string_equal(get(&r, "topology"), "nvlink");
    assert_string_equal(get(&r, "task"), "classify");
    assert_string_equal(get(&r, "seq_len"), "128");
    assert_string_equal(get(&r, "nodes"), "1");
    assert_string_equal(get(&r, "host"), "default");
    assert_string_equal(get(&r, "image_size"), ""); /* not a vision model */
    /* derived values stay "not given", so the resolved config predicts the same */
    assert_false(ec_config_is_set(&r, (size_t)ec_config_key_index("strategy")));
    ec_result a, b;
    assert_int_equal(ec_predict(ctx, &cfg, &a), EC_OK);
    assert_int_equal(ec_predict(ctx, &r, &b), EC_OK);
    assert_rel(a.step_s, b.step_s, EC_TOL_EXACT);
    /* vision: image_size, no seq_len; 16 GPUs span two nodes */
    ec_test_config(ctx, &cfg, "model=resnet50 gpu=h100 num_gpus=16 batch_per_gpu=64");
    assert_int_equal(ec_config_resolve(ctx, &cfg, &cfg), EC_OK); /* in place */
    assert_string_equal(get(&cfg, "image_size"), "224");
    assert_string_equal(get(&cfg, "seq_len"), "");
    assert_string_equal(get(&cfg, "task"), "imagenet");
    assert_string_equal(get(&cfg, "nodes"), "2");
    assert_string_equal(get(&cfg, "gpu"), "h100-sxm5-80gb");
    /* encoder-decoder: the decoder's length (seq_len unless given) */
    ec_test_config(ctx, &cfg, "model=t5-base gpu=a100-sxm4-80gb batch_per_gpu=8 seq_len=256");
    assert_int_equal(ec_config_resolve(ctx, &cfg, &r), EC_OK);
    assert_string_equal(get(&r, "target_len"), "256");
    assert_string_equal(get(&cfg, "target_len"), "");
    /* failures are ec_predict's */
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4");
    assert_int_equal(ec_config_resolve(ctx, &cfg, &r), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "batch_per_gpu");
    assert_int_equal(ec_config_resolve(ctx, NULL, &r), EC_EMISUSE);
    ec_ctx_free(ctx);
}

/* lengths= with padding=max_length was ignored without a word. */
static void test_lengths_without_dynamic_padding_warns(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 seq_len=256 lengths=lognormal(60,0.7)", &res);
    assert_true(res.warnings & EC_WARN_LENGTHS_UNPADDED);
    assert_contains(res.warning_text, "padded to seq_len");
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 seq_len=256 lengths=lognormal(60,0.7) data=synthetic",
                    &res);
    assert_contains(res.warning_text, "lengths= has no effect here");
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 seq_len=256 padding=dynamic "
                    "lengths=lognormal(60,0.7)",
                    &res);
    assert_false(res.warnings & EC_WARN_LENGTHS_UNPADDED);
    ec_ctx_free(ctx);
}

/* Keys given explicitly that change nothing are named. */
static void test_ignored_keys_named(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 epochs=3 eval_samples=1000", &res);
    assert_true(res.warnings & EC_WARN_KEY_IGNORED);
    assert_contains(res.warning_text, "epochs (needs dataset_samples)");
    assert_contains(res.warning_text, "eval_samples (needs dataset_samples)");
    assert_true(res.epoch_s == 0 && res.run_s == 0);
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 gradient_as_bucket_view=1 prefetch_factor=4", &res);
    assert_contains(res.warning_text, "gradient_as_bucket_view (ddp only)");
    assert_contains(res.warning_text, "prefetch_factor (needs num_workers > 0)");
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 sample_cpu_s=0.001 tokenizer=python", &res);
    assert_contains(res.warning_text, "tokenizer (sample_cpu_s");
    /* nothing to say when every key given is used */
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=16 epochs=3 dataset_samples=1000 num_workers=2 "
                    "prefetch_factor=4", &res);
    assert_false(res.warnings & EC_WARN_KEY_IGNORED);
    ec_ctx_free(ctx);
}

/* torch.utils.data.DataLoader raises ValueError for persistent_workers without workers. */
static void test_dataloader_refusals(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result res;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=16 persistent_workers=1");
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "key 'persistent_workers'");
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=16 persistent_workers=1 num_workers=2");
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    ec_ctx_free(ctx);
}

/* tokenizer=python with tokenize=upfront used the fast tokenizer's rate. */
static void test_python_tokenizer_upfront(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result fast, slow;
    const char *base = "model=bert-base gpu=t4 batch_per_gpu=16 dataset_samples=100000 tokenize=upfront";
    char words[256];
    ec_test_predict(ctx, base, &fast);
    snprintf(words, sizeof words, "%s tokenizer=python", base);
    ec_test_predict(ctx, words, &slow);
    /* the same epoch; the one-time tokenization is slower by the tokenizers' rate ratio */
    assert_rel(slow.epoch_s, fast.epoch_s, EC_TOL_EXACT);
    assert_true(slow.run_s > fast.run_s);
    ec_ctx_free(ctx);
}

/* The GPU waiting 36% of the step on the loader was "compute" because kernels filled 64%. */
static void test_loader_bottleneck(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    ec_test_predict(ctx, "gpu=rtx4090 host=workstation batch_per_gpu=1 gpu_step_s=0.05 sample_cpu_s=0.2 "
                    "num_workers=4 pin_memory=1 dataset_samples=25 epochs=200", &res);
    const ec_breakdown *b = &res.breakdown;
    double compute_s = b->forward_s + b->backward_s + b->optimizer_s;
    assert_true(b->loader_s > 0.2 * res.step_s); /* constants.csv loader_bottleneck_frac */
    assert_true(b->loader_s < compute_s);          /* the old rule said compute */
    assert_int_equal(res.bottleneck, EC_BOTTLENECK_INPUT);
    /* a loader that barely stalls does not take the label */
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=32 num_workers=4", &res);
    assert_true(res.breakdown.loader_s <= 0.2 * res.step_s);
    assert_int_equal(res.bottleneck, EC_BOTTLENECK_COMPUTE);
    ec_ctx_free(ctx);
}

/* amp_bf16 on a T4 reported 79% MFU: MFU was taken against the measured emulated bf16 rate. */
static void test_mfu_against_the_unit_used(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    size_t i;
    ec_gpu_info t4;
    assert_int_equal(ec_gpu_find(ctx, "t4", &i), EC_OK);
    assert_int_equal(ec_gpu_get(ctx, i, &t4), EC_OK);
    ec_result bf16, fp16;
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=32 precision=amp_bf16 data=synthetic", &bf16);
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=32 precision=amp_fp16 data=synthetic", &fp16);
    /* emulated bf16 runs on the CUDA cores: MFU = model FLOPs / (step x dense fp32 peak) */
    assert_rel(bf16.mfu_frac, bf16.flop_per_step / (bf16.step_s * t4.peak_fp32_flop_per_s), EC_TOL_CLOSED_FORM);
    assert_rel(fp16.mfu_frac, fp16.flop_per_step / (fp16.step_s * t4.peak_fp16_flop_per_s), EC_TOL_CLOSED_FORM);
    assert_true(bf16.mfu_frac < 0.5);
    ec_ctx_free(ctx);
}

/* ec_result_metric_interval: the step's interval in each metric's unit. */
static void test_metric_interval(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res;
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=32 dataset_samples=10000", &res);
    double lo, hi;
    /* the shipped profile has an error_log_sd: a real interval around the step */
    assert_true(res.step_p10_s < res.step_s && res.step_s < res.step_p90_s);
    ec_result_metric_interval(&res, EC_METRIC_STEP_TIME_MS, &lo, &hi);
    assert_rel(lo, res.step_p10_s * 1e3, EC_TOL_EXACT);
    assert_rel(hi, res.step_p90_s * 1e3, EC_TOL_EXACT);
    ec_result_metric_interval(&res, EC_METRIC_SAMPLES_PER_S, &lo, &hi);
    /* samples/s = k / step: its p10 is k / step_p90 */
    assert_rel(lo, res.samples_per_s * res.step_s / res.step_p90_s, EC_TOL_EXACT);
    assert_true(lo < res.samples_per_s && res.samples_per_s < hi);
    ec_result_metric_interval(&res, EC_METRIC_EPOCH_TIME_S, &lo, &hi);
    assert_rel(lo, res.epoch_p10_s, EC_TOL_EXACT);
    assert_rel(hi, res.epoch_p90_s, EC_TOL_EXACT);
    ec_test_predict(ctx, "model=bert-base gpu=t4 batch_per_gpu=32", &res);
    ec_result_metric_interval(&res, EC_METRIC_EPOCH_TIME_S, &lo, &hi);
    assert_true(lo == 0 && hi == 0);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_fills_derived),
        cmocka_unit_test(test_lengths_without_dynamic_padding_warns),
        cmocka_unit_test(test_ignored_keys_named),
        cmocka_unit_test(test_dataloader_refusals),
        cmocka_unit_test(test_python_tokenizer_upfront),
        cmocka_unit_test(test_loader_bottleneck),
        cmocka_unit_test(test_mfu_against_the_unit_used),
        cmocka_unit_test(test_metric_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
