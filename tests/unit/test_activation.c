/*
 * test_activation.c: the key activation, how the training code computes the MLP's activation when
 * that is not how the network's config names it.  DeepLearningExamples' BERT before commit a9e2c1d5
 * (2022-03) writes GELU as Python ops, x * 0.5 * (1 + erf(x / 1.41421)): five eager kernels over
 * the 4 x hidden intermediate where F.gelu is one (models/constants.csv gelu_python_kernels), which
 * the DLE calibration rows of that code say (tools/data/make_dle_runs.py).  transformers' own
 * "gelu_python" (GELUActivation(use_gelu_python=True)) is the same function, and a config.json that
 * names it is priced the same way.  Fails on the old code (no key; gelu_python read as F.gelu).
 */
#include "ec_test.h"

#include <stdio.h>
#include <stdlib.h>

/* Lambda's v0 A100 PCIe BERT-large SQuAD tf32 row (bench/data/calibration_dle.csv) */
#define SQUAD \
    "task=squad gpu=a100-pcie-40gb precision=tf32 batch_per_gpu=16 seq_len=384 attention=eager max_grad_norm=1 "

static void test_gelu_python_costs_more(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result net, f_gelu, python, gelu_new;
    ec_test_predict(ctx, "model=bert-large " SQUAD, &net);
    ec_test_predict(ctx, "model=bert-large " SQUAD "activation=gelu", &f_gelu);
    ec_test_predict(ctx, "model=bert-large " SQUAD "activation=gelu_python", &python);
    ec_test_predict(ctx, "model=bert-large " SQUAD "activation=gelu_new", &gelu_new);
    print_message("step: network %.1f ms, gelu_python %.1f ms, gelu_new %.1f ms\n", net.step_s * 1e3,
                  python.step_s * 1e3, gelu_new.step_s * 1e3);
    /* BERT's config says gelu: the key's gelu is the network's */
    assert_rel(f_gelu.step_s, net.step_s, EC_TOL_EXACT);
    /* four more memory-bound kernels over 24 layers' 16 x 384 x 4096 intermediate, each way: slower,
     * and by less than gelu_new's eight kernels */
    assert_true(python.step_s > 1.05 * net.step_s);
    assert_true(gelu_new.step_s > python.step_s);
    /* the optimizer step does not change (the parameters are the same) */
    assert_rel(python.breakdown.optimizer_s, net.breakdown.optimizer_s, EC_TOL_EXACT);
    /* and autograd keeps more of the activation's tensors */
    assert_true(python.memory.activations_bytes > net.memory.activations_bytes);
    ec_ctx_free(ctx);
}

/* A config.json whose hidden_act is transformers' gelu_python is priced as the key prices it. */
static void test_config_json_gelu_python(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = ec_test_path(dir, "config.json"), text[1024], cfg[1400];
    int n = snprintf(text, sizeof text,
                     "{\"model_type\": \"bert\", \"architectures\": [\"BertForMaskedLM\"], \"hidden_size\": 1024, "
                     "\"intermediate_size\": 4096, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
                     "\"vocab_size\": 30522, \"max_position_embeddings\": 512, \"type_vocab_size\": 2, "
                     "\"hidden_act\": \"gelu_python\"}");
    ec_test_write_file(path, text, (size_t)n);
    ec_result from_json, from_key;
    snprintf(cfg, sizeof cfg, "model=%s " SQUAD, path);
    ec_test_predict(ctx, cfg, &from_json);
    ec_test_predict(ctx, "model=bert-large " SQUAD "activation=gelu_python", &from_key);
    assert_rel(from_json.step_s, from_key.step_s, EC_TOL_EXACT);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* A CNN has no MLP: said and not priced; a bad value refused naming the key and its choices. */
static void test_ignored_or_refused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result plain, keyed;
    ec_test_predict(ctx, "model=resnet50 gpu=a100-pcie-40gb batch_per_gpu=64", &plain);
    ec_test_predict(ctx, "model=resnet50 gpu=a100-pcie-40gb batch_per_gpu=64 activation=gelu_python", &keyed);
    assert_rel(keyed.step_s, plain.step_s, EC_TOL_EXACT);
    assert_contains(keyed.warning_text, "activation (a network with MLP or expert layers)");
    ec_config c;
    ec_config_init(&c);
    assert_int_equal(ec_config_set(ctx, &c, "activation", "gelu_pyton"), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "activation");
    assert_contains(ec_ctx_errmsg(ctx), "gelu_python");
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gelu_python_costs_more),
        cmocka_unit_test(test_config_json_gelu_python),
        cmocka_unit_test(test_ignored_or_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
