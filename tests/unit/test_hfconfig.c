/*
 * test_hfconfig.c: Hugging Face config.json files as models (hfconfig.c, arch.c, net.c).
 * Every fixture of tests/data/hf/MANIFEST.csv (one public config.json per supported
 * model_type, with the parameter count its source publishes) must reproduce that count within
 * 0.5% through model=PATH; model=PATH and a preset with the same config predict the same; and
 * every file of the corpus tests/bad/json/ fails with the message tests/bad/json/EXPECTED
 * lists, naming the file, and leaves nothing registered.
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"
#include "internal.h"
#include "model/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cell(const eci_table *t, size_t row, const char *col)
{
    int c = eci_table_col(t, col);
    if (c < 0)
        fail_msg("MANIFEST.csv: no column '%s'", col);
    return eci_table_cell(t, row, c);
}

/* |P + adjust - P_published| <= 0.005 P_published for every fixture: P is the count of the
 * task named in the manifest through model=PATH; adjust (the manifest, derived from the
 * config's own shapes) turns that head into the class the published count is for. */
static void test_fixtures_published(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_table *t;
    assert_int_equal(eci_table_load(ctx, "data/hf/MANIFEST.csv", &t), EC_OK);
    assert_true(eci_table_rows(t) >= 29);
    char types[2048] = ",";
    for (size_t i = 0; i < eci_table_rows(t); i++) {
        char path[512];
        snprintf(path, sizeof path, "data/hf/%s/config.json", cell(t, i, "name"));
        double published = atof(cell(t, i, "published_params")), adjust = atof(cell(t, i, "head_adjust_params"));
        double p = 0;
        int rc = ec_model_params(ctx, path, cell(t, i, "task"), &p);
        if (rc != EC_OK)
            fail_msg("%s: %s", path, ec_ctx_errmsg(ctx));
        double err = (p + adjust - published) / published;
        printf("  %-30s %-18s %-15s %14.0f %14.0f %+.4f%%\n", cell(t, i, "name"), cell(t, i, "model_type"),
               cell(t, i, "task"), p + adjust, published, 100.0 * err);
        if (fabs(err) > 0.005)
            fail_msg("%s (%s head, adjusted by %.0f): %.0f parameters, published %.0f (%+.3f%%)", path,
                     cell(t, i, "task"), adjust, p + adjust, published, 100.0 * err);
        size_t len = strlen(types);
        snprintf(types + len, sizeof types - len, "%s,", cell(t, i, "model_type"));
    }
    /* one fixture per model_type the issue lists */
    static const char *const required[] = {"bert", "roberta", "distilbert", "albert", "deberta-v2", "gpt2", "gpt_neox",
                                           "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3_moe", "gemma",
                                           "gemma2", "phi3", "mpt", "falcon", "t5", "vit", "clip_vision_model",
                                           /* issue 41: the families of 2026 */
                                           "deepseek_v2", "deepseek_v3", "gpt_oss", "qwen3", "gemma3_text", "gemma3",
                                           "llama4"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        char key[64];
        snprintf(key, sizeof key, ",%s,", required[i]);
        if (strstr(types, key) == NULL)
            fail_msg("no fixture of model_type %s", required[i]);
    }
    eci_table_free(t);
    ec_ctx_free(ctx);
}

static void predict_or_fail(ec_ctx *ctx, const char *model, const char *words, ec_result *res)
{
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", model), EC_OK);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        if (ec_config_set_word(ctx, &cfg, w) != EC_OK)
            fail_msg("%s: %s", w, ec_ctx_errmsg(ctx));
    if (ec_predict(ctx, &cfg, res) != EC_OK)
        fail_msg("%s %s: %s", model, words, ec_ctx_errmsg(ctx));
}

static void predict_or_fail(ec_ctx *ctx, const char *model, const char *words, ec_result *res);

/* A hub gemma3 config.json lists only what differs from the class defaults (Gemma3TextConfig's
 * vocabulary of 262,208, 8/4 heads of 256, a 5 local : 1 global pattern ...): google/gemma-3-4b-it's
 * as quoted in public sources (text_config: search index id 70224130757; vision_config: id
 * 70892509106) and gemma-3-27b's text part (id 62559293678) under the same SigLIP tower give the
 * safetensors totals 4,300,079,472 (id 65969618575) and 27,432,406,640 (id 65787179704). */
static void test_gemma3_sparse_configs(void **state)
{
    (void)state;
    static const char *const vision =
        "\"vision_config\": {\"hidden_size\": 1152, \"image_size\": 896, \"intermediate_size\": 4304, "
        "\"model_type\": \"siglip_vision_model\", \"num_attention_heads\": 16, \"num_hidden_layers\": 27, "
        "\"patch_size\": 14, \"vision_use_head\": false}}";
    static const struct { const char *text; double published; } cases[] = {
        {"{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"model_type\": \"gemma3\", \"text_config\": "
         "{\"hidden_size\": 2560, \"intermediate_size\": 10240, \"model_type\": \"gemma3_text\", "
         "\"num_hidden_layers\": 34, \"rope_scaling\": {\"factor\": 8.0, \"rope_type\": \"linear\"}, "
         "\"sliding_window\": 1024}, ", 4300079472.0},
        {"{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"model_type\": \"gemma3\", \"text_config\": "
         "{\"head_dim\": 128, \"hidden_size\": 5376, \"intermediate_size\": 21504, \"model_type\": \"gemma3_text\", "
         "\"num_attention_heads\": 32, \"num_hidden_layers\": 62, \"num_key_value_heads\": 16, "
         "\"query_pre_attn_scalar\": 168, \"sliding_window\": 1024}, ", 27432406640.0},
    };
    char *dir = ec_test_tmpdir();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_ctx *ctx = ec_test_ctx();
        char path[512], text[2048];
        snprintf(path, sizeof path, "%s/gemma3_%zu.json", dir, i);
        snprintf(text, sizeof text, "%s%s", cases[i].text, vision);
        ec_test_write_file(path, text, strlen(text));
        double p = 0;
        if (ec_model_params(ctx, path, "lm", &p) != EC_OK)
            fail_msg("%s: %s", path, ec_ctx_errmsg(ctx));
        if (fabs(p - cases[i].published) > 0.005 * cases[i].published)
            fail_msg("case %zu: %.0f parameters, published %.0f", i, p, cases[i].published);
        assert_true(p == cases[i].published); /* the tower and the projector counted exactly */
        ec_ctx_free(ctx);
    }
    ec_test_rmtree(dir);
    free(dir);
}

/* Llama 4 as transformers runs it: Llama4TextMoe sends every token through all 16 experts of
 * Scout (scores zero off the top 1), so a token's forward does the work of ~108B parameters,
 * not of the 17B a routed kernel would touch; Gemma 3's layers are blocks of alike layers (a run
 * of 5 sliding-window layers, then 1 global), each decoder layer a unit of its own. */
static void test_llama4_gemma3_described(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_model_summary s;
    ec_layer_row rows[512];
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", "data/hf/llama-4-scout-17b-16e-instruct"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "seq_len", "1024"), EC_OK);
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s, NULL, 0), EC_OK);
    double per_token = s.fwd_flop_per_sample / s.tokens_per_sample;
    if (!(per_token > 2.0 * 100e9 && per_token < 2.0 * 115e9))
        fail_msg("Scout forward %.4g FLOP a token, wanted 2 x (100..115)e9 (every expert)", per_token);
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", "data/hf/gemma-3-1b-it"), EC_OK);
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s, rows, 512), EC_OK);
    assert_true(s.n_rows <= 512);
    int blocks = 0, layers = 0;
    for (size_t i = 0; i < s.n_rows; i++)
        if (rows[i].depth == 0 && strcmp(rows[i].kind, "repeat") == 0) {
            blocks++;
            layers += rows[i].times;
        }
    assert_int_equal(layers, 26);
    assert_int_equal(blocks, 9); /* 5 local, 1 global, x 4, then the 2 local layers left */
    /* Maverick alternates dense and MoE layers: 48 blocks of one layer, each a checkpointing
     * unit (checkpointing=1 keeps each layer's input and recomputes one layer at a time) */
    ec_result r0, r1;
    predict_or_fail(ctx, "data/hf/llama-4-maverick-17b-128e-instruct",
                    "gpu=h100-sxm5-80gb num_gpus=64 nodes=8 strategy=fsdp precision=amp_bf16 batch_per_gpu=1 seq_len=2048 "
                    "checkpointing=0", &r0);
    predict_or_fail(ctx, "data/hf/llama-4-maverick-17b-128e-instruct",
                    "gpu=h100-sxm5-80gb num_gpus=64 nodes=8 strategy=fsdp precision=amp_bf16 batch_per_gpu=1 seq_len=2048 "
                    "checkpointing=1", &r1);
    if (!(r1.memory.activations_bytes < 0.1 * r0.memory.activations_bytes))
        fail_msg("Maverick activations %.4g B with checkpointing, %.4g B without", r1.memory.activations_bytes,
                 r0.memory.activations_bytes);
    ec_ctx_free(ctx);
}

/* model=PATH (the file, or the folder holding it) and the preset built from the same config
 * give the same prediction, number for number. */
static void test_path_agrees_with_preset(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *words = "gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=4096";
    char *file = ec_test_path(getenv("EPOCHCAST_MODELS"), "networks/llama-3.1-8b.json");
    ec_result preset, path, folder;
    predict_or_fail(ctx, "llama-3.1-8b", words, &preset);
    predict_or_fail(ctx, file, words, &path);
    assert_true(preset.step_s > 0);
    assert_true(path.step_s == preset.step_s);
    assert_true(path.memory.peak_bytes == preset.memory.peak_bytes);
    predict_or_fail(ctx, "data/hf/gpt2", "gpu=t4 batch_per_gpu=4 seq_len=128", &folder);
    predict_or_fail(ctx, "gpt2", "gpu=t4 batch_per_gpu=4 seq_len=128", &preset);
    assert_true(folder.step_s == preset.step_s);
    /* read once per context: the second use is the same registry entry */
    ec_model_info a, b;
    assert_int_equal(ec_model_find(ctx, file, &a), EC_OK);
    assert_int_equal(ec_model_find(ctx, file, &b), EC_OK);
    assert_ptr_equal(a.id, b.id);
    assert_string_equal(a.family, "llama");
    /* paths are not listed as presets */
    for (size_t i = 0; i < ec_model_count(ctx); i++) {
        ec_model_info m;
        assert_int_equal(ec_model_get(ctx, i, &m), EC_OK);
        assert_null(strchr(m.id, '/'));
    }
    free(file);
    ec_ctx_free(ctx);
}

/* A missing path, a folder without config.json: ENOTFOUND naming the path. */
static void test_path_errors(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_model_info m;
    assert_int_equal(ec_model_find(ctx, "no/such/config.json", &m), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "model 'no/such/config.json': cannot open");
    assert_int_equal(ec_model_find(ctx, "data/hf", &m), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "data/hf/config.json is not a readable file");
    assert_int_equal(ec_model_find(ctx, "llama-3.1-8bb", &m), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "did you mean 'llama-3.1-8b'");
    size_t before = ec_model_count(ctx);
    assert_int_equal(ec_model_find(ctx, "bad/json/heads_not_dividing.json", &m), EC_EINVAL);
    assert_int_equal(ec_model_count(ctx), before);
    ec_ctx_free(ctx);
}

/* Every bad config: an error whose message names the file and holds EXPECTED's text. */
static void test_bad_json_corpus(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *expected = ec_test_read_file("bad/json/EXPECTED", NULL);
    assert_non_null(expected);
    size_t checked = 0;
    for (char *line = strtok(expected, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        if (tab == NULL)
            fail_msg("bad/json/EXPECTED: no tab in \"%s\"", line);
        *tab = '\0';
        char path[256];
        snprintf(path, sizeof path, "bad/json/%s", line);
        ec_model_info m;
        int rc = ec_model_find(ctx, path, &m);
        if (rc == EC_OK)
            fail_msg("%s: accepted", path);
        const char *msg = ec_ctx_errmsg(ctx);
        if (strstr(msg, tab + 1) == NULL || strstr(msg, path) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\" or the path", path, msg, tab + 1);
        checked++;
    }
    assert_true(checked >= 20);
    free(expected);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_published),
        cmocka_unit_test(test_gemma3_sparse_configs),
        cmocka_unit_test(test_llama4_gemma3_described),
        cmocka_unit_test(test_path_agrees_with_preset),
        cmocka_unit_test(test_path_errors),
        cmocka_unit_test(test_bad_json_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
