/*
 * test_nemotron.c: model_type nemotron (transformers' NemotronForCausalLM: NVIDIA's Nemotron-3/4
 * and Minitron) and the activation it brings, relu2 (squared ReLU).  A small config's parameters
 * worked out by hand from modeling_nemotron.py (LayerNorm1P with weight and bias, grouped-query
 * attention without biases, a non-gated MLP up_proj -> relu2 -> down_proj, an untied head); the
 * activation's kernels: transformers' ReLUSquaredActivation runs relu then square (two kernels),
 * Megatron-Core's squared_relu is one @jit_fuser kernel (megatron/core/activations.py), which is
 * what kernels=te (the TE layer spec) runs; a name epochcast does not know is refused naming the
 * field, with relu2 in the list.  The real configs' published sizes: tests/cli/test_llm_models.sh.
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* V 1000, H 256, 3 layers, 4 heads of 64, 2 kv heads, intermediate 1024. */
static char *write_nemotron(const char *dir, const char *name, const char *act, double rotary)
{
    char text[1024], *path = ec_test_path(dir, name);
    int n = snprintf(text, sizeof text,
                     "{\"model_type\": \"nemotron\", \"architectures\": [\"NemotronForCausalLM\"], "
                     "\"vocab_size\": 1000, \"hidden_size\": 256, \"intermediate_size\": 1024, "
                     "\"num_hidden_layers\": 3, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                     "\"hidden_act\": \"%s\", \"partial_rotary_factor\": %g, \"max_position_embeddings\": 4096, "
                     "\"tie_word_embeddings\": false}",
                     act, rotary);
    ec_test_write_file(path, text, (size_t)n);
    return path;
}

static const eci_workload *workload(ec_ctx *ctx, const char *model, int te)
{
    eci_shape sh = ec_test_lm_shape(EC_PREC_AMP_BF16, 2, 128);
    sh.flash = 1;
    sh.ep = 1;
    sh.te_layers = te;
    sh.remat = te;
    return ec_test_lm_workload(ctx, model, &sh);
}

/* embed_tokens + lm_head 2 x 1000 x 256; per layer q 256 x 256, k and v 256 x 128, o 256 x 256
 * (no biases), up 256 x 1024 and down 1024 x 256 (no gate, no biases), two LayerNorm1P of 2 x 256;
 * the final norm 2 x 256. */
static void test_params_and_mlp(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_nemotron(dir, "nemotron.json", "relu2", 0.5);
    double layer = 256.0 * 256 + 2 * 256.0 * 128 + 256.0 * 256 + 2 * 256.0 * 1024 + 2 * 2 * 256.0;
    double want = 2 * 1000.0 * 256 + 3 * layer + 2 * 256.0, got = 0;
    assert_int_equal(ec_model_params(ctx, path, "lm", &got), EC_OK);
    if (got != want)
        fail_msg("nemotron params %.0f, modeling_nemotron.py gives %.0f", got, want);
    const eci_workload *wl = workload(ctx, path, 0);
    assert_int_equal(ec_test_count_ops(wl, "gate"), 0);
    assert_int_equal(ec_test_count_ops(wl, "gate_mul"), 0);
    const eci_op *up = ec_test_first_op(wl, "mlp_in");
    assert_true(up->k == 256 && up->n == 1024);
    assert_int_equal(ec_test_first_op(wl, "relu2")->fwd_kernels, 2); /* relu, then square */
    assert_int_equal(ec_test_first_op(workload(ctx, path, 1), "relu2")->fwd_kernels, 1); /* Megatron's fused one */
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* An activation name epochcast does not know, and a rotary share outside (0, 1], are refused
 * naming the field; the list of known names holds relu2. */
static void test_bad_fields_refused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *act = write_nemotron(dir, "act.json", "relu3", 0.5),
         *rot = write_nemotron(dir, "rot.json", "relu2", 1.5);
    double p;
    assert_int_not_equal(ec_model_params(ctx, act, "lm", &p), EC_OK);
    const char *msg = ec_ctx_errmsg(ctx);
    if (strstr(msg, "'hidden_act'") == NULL || strstr(msg, "relu2") == NULL)
        fail_msg("message '%s' names neither the field nor relu2", msg);
    assert_int_not_equal(ec_model_params(ctx, rot, "lm", &p), EC_OK);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "'partial_rotary_factor'"));
    free(act);
    free(rot);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_and_mlp),
        cmocka_unit_test(test_bad_fields_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
