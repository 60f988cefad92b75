/*
 * test_mpt.c: llm-foundry's MPT as its benchmark runs built it (issue 18): learned positions of
 * max_seq_len rows (the count grows with it: V d + S d + L (12 d^2 + 13 d) + 2 d, the formula
 * that reproduces every NumParams of the benchmark table), norm_type low_precision_layernorm
 * (LPLayerNorm: the norm in 16 bits under autocast, no cast before the next linear), loss_fn
 * fused_crossentropy (flash-attn's xentropy on the 16-bit logits, no logit shift),
 * use_train_metrics (Composer's two no-grad cross-entropies per micro-step), no shift under
 * loss=sum (logits.sum(), no labels), the 16-bit
 * residual stream of FSDP mixed precision, and their bad values.
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An MPT config.json in dir: d_model 256, 4 heads, 3 layers, vocab 1000. */
static char *write_mpt(const char *dir, const char *name, int max_seq, const char *norm, const char *loss)
{
    char text[1024], *path = ec_test_path(dir, name);
    int n = snprintf(text, sizeof text,
                     "{\"model_type\": \"mpt\", \"d_model\": 256, \"n_heads\": 4, \"n_layers\": 3, "
                     "\"expansion_ratio\": 4, \"max_seq_len\": %d, \"vocab_size\": 1000, \"learned_pos_emb\": true, "
                     "\"no_bias\": false, \"norm_type\": \"%s\"%s%s%s, "
                     "\"attn_config\": {\"attn_impl\": \"triton\", \"alibi\": false, \"rope\": false}}",
                     max_seq, norm, loss ? ", \"loss_fn\": \"" : "", loss ? loss : "", loss ? "\"" : "");
    ec_test_write_file(path, text, (size_t)n);
    return path;
}

static const eci_workload *workload(ec_ctx *ctx, const char *model, int precision, int weights_16)
{
    eci_shape sh = ec_test_lm_shape(precision, 2, 128);
    sh.weights_16 = weights_16;
    return ec_test_lm_workload(ctx, model, &sh);
}

/* The count follows max_seq_len exactly: V d + S d + L (12 d^2 + 13 d) + 2 d. */
static void test_params_follow_max_seq_len(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    const double V = 1000, d = 256, L = 3;
    const int seqs[] = {512, 8192};
    for (size_t i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "mpt-s%d.json", seqs[i]);
        char *path = write_mpt(dir, name, seqs[i], "low_precision_layernorm", "fused_crossentropy");
        double p = 0;
        assert_int_equal(ec_model_params(ctx, path, "lm", &p), EC_OK);
        assert_rel(p, V * d + seqs[i] * d + L * (12 * d * d + 13 * d) + 2 * d, EC_TOL_EXACT);
        free(path);
    }
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* LPLayerNorm under autocast: no fp32 norm output, so no cast before the linears after it;
 * the stream's fp32 input is cast down once per norm (DDP: fp32 weights, fp32 stream).
 * Without autocast it is an ordinary LayerNorm. */
static void test_low_precision_norm(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *lp = write_mpt(dir, "lp.json", 128, "low_precision_layernorm", NULL);
    char *ln = write_mpt(dir, "ln.json", 128, "layernorm", NULL);
    const eci_workload *w = workload(ctx, lp, EC_PREC_AMP_BF16, 0);
    size_t lp_cast_in = ec_test_count_ops(w, "cast_in"), lp_norm_cast = ec_test_count_ops(w, "norm_cast_in");
    double lp_norm_bytes = ec_test_first_op(w, "norm")->fwd_bytes;
    w = workload(ctx, ln, EC_PREC_AMP_BF16, 0);
    size_t ln_cast_in = ec_test_count_ops(w, "cast_in"), ln_norm_cast = ec_test_count_ops(w, "norm_cast_in");
    double ln_norm_bytes = ec_test_first_op(w, "norm")->fwd_bytes, elems = 2.0 * 128 * 256;
    assert_int_equal(lp_cast_in, 0);               /* every linear reads a 16-bit input */
    assert_int_equal(ln_cast_in, 3);               /* qkv, mlp_in per block (block once) + lm_head */
    assert_int_equal(lp_norm_cast, 3);             /* norm_1, norm_2 (block once), norm_f */
    assert_int_equal(ln_norm_cast, 0);
    assert_rel(lp_norm_bytes, 2.0 * 2 * elems, EC_TOL_EXACT); /* 16-bit read and write */
    assert_rel(ln_norm_bytes, 2.0 * 4 * elems, EC_TOL_EXACT); /* fp32 read and write */
    /* fp32: the same network either way */
    const eci_workload *a = workload(ctx, lp, EC_PREC_FP32, 0);
    double a_bytes = ec_test_first_op(a, "norm")->fwd_bytes;
    size_t a_ops = a->n_ops;
    const eci_workload *b = workload(ctx, ln, EC_PREC_FP32, 0);
    assert_int_equal(a_ops, b->n_ops);
    assert_rel(a_bytes, ec_test_first_op(b, "norm")->fwd_bytes, EC_TOL_EXACT);
    /* FSDP mixed precision: 16-bit weights and stream, nothing to cast down */
    w = workload(ctx, lp, EC_PREC_AMP_BF16, 1);
    assert_int_equal(ec_test_count_ops(w, "norm_cast_in"), 0);
    assert_int_equal(ec_test_count_ops(w, "norm_cast_w"), 0);
    assert_rel(ec_test_first_op(w, "residual_add")->fwd_bytes, 3.0 * 2 * elems, EC_TOL_EXACT);
    /* ...where an ordinary LayerNorm is copied up to fp32 by autocast */
    w = workload(ctx, ln, EC_PREC_AMP_BF16, 1);
    assert_int_equal(ec_test_count_ops(w, "norm_cast_up"), 3);
    /* DDP under autocast keeps the fp32 stream: the add reads a 16-bit branch and the fp32 skip */
    w = workload(ctx, ln, EC_PREC_AMP_BF16, 0);
    assert_rel(ec_test_first_op(w, "residual_add")->fwd_bytes, (2.0 + 2 * 4) * elems, EC_TOL_EXACT);
    free(lp);
    free(ln);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* loss_fn fused_crossentropy: one kernel reading the 16-bit logits (T V act bytes), a
 * backward reading them and writing their gradient; no shift, cast or fp32 log_softmax. */
static void test_fused_loss(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *fused = write_mpt(dir, "fused.json", 128, "low_precision_layernorm", "fused_crossentropy");
    char *torch = write_mpt(dir, "torch.json", 128, "low_precision_layernorm", "torch_crossentropy");
    const double T = 2.0 * 128, V = 1000;
    const eci_workload *w = workload(ctx, fused, EC_PREC_AMP_BF16, 1);
    const eci_op *x = ec_test_first_op(w, "fused_xentropy");
    assert_rel(x->fwd_bytes, T * V * 2, EC_TOL_EXACT);
    assert_rel(x->bwd_bytes, 2.0 * T * V * 2, EC_TOL_EXACT);
    assert_int_equal(ec_test_count_ops(w, "shift_logits") + ec_test_count_ops(w, "log_softmax") + ec_test_count_ops(w, "cast_logits"), 0);
    w = workload(ctx, torch, EC_PREC_AMP_BF16, 1);
    assert_int_equal(ec_test_count_ops(w, "fused_xentropy"), 0);
    assert_int_equal(ec_test_count_ops(w, "shift_logits"), 1);
    assert_int_equal(ec_test_count_ops(w, "log_softmax"), 1);
    /* the shifted copy is read by the loss and dropped: autograd keeps only log_softmax's output
     * (derivatives.yaml: _log_softmax's backward takes `result`; contiguous's clone saves nothing) */
    assert_rel(ec_test_first_op(w, "shift_logits")->fwd_bytes, 2.0 * T * V * 2, EC_TOL_EXACT);
    assert_true(ec_test_first_op(w, "shift_logits")->saved_bytes == 0);
    assert_rel(ec_test_first_op(w, "log_softmax")->saved_bytes, T * V * 4, EC_TOL_EXACT);
    /* loss=sum (logits.sum() of model(input_ids, attention_mask): no labels): HF's causal-LM
     * forward shifts only inside `if labels is not None`, so no shifted copy, one read of the logits */
    eci_shape sum = ec_test_lm_shape(EC_PREC_AMP_BF16, 2, 128);
    sum.weights_16 = 1;
    sum.loss_sum = 1;
    w = ec_test_lm_workload(ctx, torch, &sum);
    assert_non_null(w);
    assert_int_equal(ec_test_count_ops(w, "shift_logits") + ec_test_count_ops(w, "log_softmax"), 0);
    assert_int_equal(ec_test_count_ops(w, "logits_sum"), 1);
    /* ...and the step is faster with it */
    ec_result a, b;
    ec_config cfg;
    const char *words[] = {"gpu=a100-sxm4-80gb", "precision=amp_bf16", "batch_per_gpu=8", "seq_len=128"};
    for (int k = 0; k < 2; k++) {
        ec_config_init(&cfg);
        assert_int_equal(ec_config_set(ctx, &cfg, "model", k == 0 ? fused : torch), EC_OK);
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            assert_int_equal(ec_config_set_word(ctx, &cfg, words[i]), EC_OK);
        assert_int_equal(ec_predict(ctx, &cfg, k == 0 ? &a : &b), EC_OK);
    }
    assert_true(a.step_s < b.step_s);
    free(fused);
    free(torch);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* use_train_metrics: Composer's two training metrics, each an fp32 cross-entropy of all the logits
 * after the micro-step (autocast copy T V x (2 + 4) bytes, log_softmax T V x (4 + 4)), no backward. */
static void test_train_metrics(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "metrics.json");
    static const char text[] = "{\"model_type\": \"mpt\", \"d_model\": 256, \"n_heads\": 4, \"n_layers\": 3, "
                               "\"max_seq_len\": 128, \"vocab_size\": 1000, \"no_bias\": false, "
                               "\"loss_fn\": \"fused_crossentropy\", \"use_train_metrics\": true}";
    ec_test_write_file(path, text, sizeof text - 1);
    const double T = 2.0 * 128, V = 1000;
    const eci_workload *w = workload(ctx, path, EC_PREC_AMP_BF16, 1);
    assert_int_equal(ec_test_count_ops(w, "metric_log_softmax"), 2);
    assert_int_equal(ec_test_count_ops(w, "metric_cast_logits"), 2);
    for (size_t i = 0; i < w->n_ops; i++)
        if (strncmp(w->ops[i].name, "metric_", 7) == 0) {
            assert_int_equal(w->ops[i].bwd, 0);
            assert_true(w->ops[i].saved_bytes == 0);
        }
    assert_rel(ec_test_first_op(w, "metric_log_softmax")->fwd_bytes, T * V * 8, EC_TOL_EXACT);
    assert_rel(ec_test_first_op(w, "metric_cast_logits")->fwd_bytes, T * V * 6, EC_TOL_EXACT);
    /* absent (a hub config): no metrics */
    char *plain = write_mpt(dir, "plain.json", 128, "layernorm", "fused_crossentropy");
    assert_int_equal(ec_test_count_ops(workload(ctx, plain, EC_PREC_AMP_BF16, 1), "metric_log_softmax"), 0);
    free(plain);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Bad norm_type and loss_fn: EC_EPARSE naming the file and the field. */
static void test_bad_values(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *a = write_mpt(dir, "badnorm.json", 128, "fancy_norm", NULL);
    char *b = write_mpt(dir, "badloss.json", 128, "layernorm", "fancy_loss");
    ec_model_info m;
    assert_int_equal(ec_model_find(ctx, a, &m), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "badnorm.json: field 'norm_type' must be layernorm");
    assert_int_equal(ec_model_find(ctx, b, &m), EC_EPARSE);
    assert_contains(ec_ctx_errmsg(ctx), "badloss.json: field 'loss_fn' must be fused_crossentropy or torch_crossentropy");
    free(a);
    free(b);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_follow_max_seq_len),
        cmocka_unit_test(test_low_precision_norm),
        cmocka_unit_test(test_fused_loss),
        cmocka_unit_test(test_train_metrics),
        cmocka_unit_test(test_bad_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
