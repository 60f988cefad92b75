/*
 * test_network.c: networks defined from C (ec_network_define, net.c's checks, workload.c's
 * shape flow).  A small CNN and an encoder-decoder written as descriptions register and
 * predict; their parameter counts follow the closed forms of their layers; every refusal
 * names the layer and the field, and a refused network is not registered.
 */
#include "ec_test.h"

#include <stdio.h>
#include <string.h>

static ec_layer layer(ec_layer_kind kind)
{
    ec_layer l;
    memset(&l, 0, sizeof l);
    l.kind = kind;
    return l;
}

static ec_layer conv(int64_t out, int kernel, int stride)
{
    ec_layer l = layer(EC_LAYER_CONV2D);
    l.u.conv2d = (ec_conv2d_layer){.out = out, .kernel = kernel, .stride = stride, .padding = -1, .bias = 1};
    return l;
}

static ec_layer norm(ec_norm_kind kind)
{
    ec_layer l = layer(EC_LAYER_NORM);
    l.u.norm.kind = kind;
    return l;
}

static ec_layer act(ec_activation a)
{
    ec_layer l = layer(EC_LAYER_ACTIVATION);
    l.u.activation.act = a;
    return l;
}

static ec_layer residual(ec_residual_op op)
{
    ec_layer l = layer(EC_LAYER_RESIDUAL);
    l.u.residual.op = op;
    return l;
}

static ec_layer repeat(int layers, int times)
{
    ec_layer l = layer(EC_LAYER_REPEAT);
    l.u.repeat = (ec_repeat_layer){.layers = layers, .times = times};
    return l;
}

static double predict_step(ec_ctx *ctx, const char *model, const char *extra)
{
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", model), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu", "a100-sxm4-80gb"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "batch_per_gpu", "16"), EC_OK);
    if (extra != NULL)
        assert_int_equal(ec_config_set_word(ctx, &cfg, extra), EC_OK);
    ec_result res;
    if (ec_predict(ctx, &cfg, &res) != EC_OK)
        fail_msg("%s: %s", model, ec_ctx_errmsg(ctx));
    assert_true(res.step_s > 0 && res.memory.peak_bytes > 0);
    return res.step_s;
}

/* A small residual CNN on 32x32 images with 10 classes:
 *   stem conv 3->16 (3x3, bias) 3·16·9 + 16, BN 2·16;
 *   4 x [conv 16->16 3x3 + bias (2304 + 16), BN 32, relu, conv 16->16 + bias (2320), BN 32, add+relu];
 *   global average pool, classifier 16·10 + 10.
 * P = 448 + 32 + 4·(2320 + 32 + 2320 + 32) + 170 = 19466. */
static void test_custom_cnn(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_layer layers[] = {conv(16, 3, 1), norm(EC_NORM_BATCH), act(EC_ACT_RELU),
                         repeat(7, 4),
                         residual(EC_RESIDUAL_SAVE), conv(16, 3, 1), norm(EC_NORM_BATCH), act(EC_ACT_RELU),
                         conv(16, 3, 1), norm(EC_NORM_BATCH), residual(EC_RESIDUAL_ADD_RELU)};
    ec_head head = {.task = "imagenet", .kind = EC_HEAD_IMAGE_CLASSIFY, .classes = 10, .pool = 1, .bias = 1};
    ec_network_def def = {.id = "tiny-resnet", .layers = layers, .n_layers = sizeof layers / sizeof layers[0],
                          .heads = &head, .n_heads = 1, .image_size = 32, .published_params = 19466};
    assert_int_equal(ec_network_define(ctx, &def), EC_OK);
    ec_model_info m;
    assert_int_equal(ec_model_find(ctx, "tiny-resnet", &m), EC_OK);
    assert_rel(m.params, 19466.0, EC_TOL_EXACT);
    assert_string_equal(m.family, "custom");
    assert_string_equal(m.default_task, "imagenet");
    assert_int_equal(m.default_image_size, 32);
    /* the id is listed and predicts, at its own and at a larger image size */
    size_t n = ec_model_count(ctx);
    assert_int_equal(ec_model_get(ctx, n - 1, &m), EC_OK);
    assert_string_equal(m.id, "tiny-resnet");
    double s32 = predict_step(ctx, "tiny-resnet", NULL), s64 = predict_step(ctx, "tiny-resnet", "image_size=64");
    assert_true(s64 > s32);
    ec_ctx_free(ctx);
}

/* An encoder-decoder: a shared embedding, 2 encoder layers, a DECODER, 2 decoder layers with
 * cross-attention; target_len sets the decoder's tokens. */
static void test_encoder_decoder(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_layer emb = layer(EC_LAYER_EMBEDDING);
    emb.u.embedding = (ec_embedding_layer){.vocab = 1000, .dim = 64};
    ec_layer dec_emb = emb;
    dec_emb.u.embedding.shared = 1;
    ec_layer self = layer(EC_LAYER_ATTENTION), causal, cross, mlp = layer(EC_LAYER_MLP);
    self.u.attention = (ec_attention_layer){.heads = 4};
    causal = self;
    causal.u.attention.causal = 1;
    cross = self;
    cross.u.attention.cross = 1;
    mlp.u.mlp = (ec_mlp_layer){.ffn = 256, .act = EC_ACT_RELU};
    ec_layer rms = norm(EC_NORM_RMS);
    ec_layer layers[] = {emb, repeat(8, 2), residual(EC_RESIDUAL_SAVE), rms, self, residual(EC_RESIDUAL_ADD),
                         residual(EC_RESIDUAL_SAVE), rms, mlp, residual(EC_RESIDUAL_ADD), rms,
                         layer(EC_LAYER_DECODER), dec_emb,
                         repeat(12, 2), residual(EC_RESIDUAL_SAVE), rms, causal, residual(EC_RESIDUAL_ADD),
                         residual(EC_RESIDUAL_SAVE), rms, cross, residual(EC_RESIDUAL_ADD),
                         residual(EC_RESIDUAL_SAVE), rms, mlp, residual(EC_RESIDUAL_ADD), rms};
    ec_head head = {.task = "lm", .kind = EC_HEAD_CAUSAL_LM, .tied = 1};
    ec_network_def def = {.id = "tiny-t5", .layers = layers, .n_layers = sizeof layers / sizeof layers[0],
                          .heads = &head, .n_heads = 1, .default_seq_len = 128};
    assert_int_equal(ec_network_define(ctx, &def), EC_OK);
    /* P = V·h + enc 2·(4h² + h + 2hf + h) + h + dec 2·(8h² + 2h + 2hf + h) + h, tied head
     *   = 64000 + 2·(16384 + 64 + 32768 + 64) + 64 + 2·(32768 + 128 + 32768 + 64) + 64 = 294144 */
    double p = 0;
    assert_int_equal(ec_model_params(ctx, "tiny-t5", "lm", &p), EC_OK);
    assert_rel(p, 294144.0, EC_TOL_EXACT);
    /* a longer target costs more, a longer source too */
    double base = predict_step(ctx, "tiny-t5", NULL);
    assert_true(predict_step(ctx, "tiny-t5", "target_len=512") > base);
    assert_true(predict_step(ctx, "tiny-t5", "seq_len=512") > base);
    ec_ctx_free(ctx);
}

/* A 200-layer decoder: the parameters are 200 x one layer's, and the prediction walks one
 * layer's ops (the expansion holds the block once: 200 layers, the ops of 1). */
static void test_deep_decoder(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_layer emb = layer(EC_LAYER_EMBEDDING), att = layer(EC_LAYER_ATTENTION), mlp = layer(EC_LAYER_MLP);
    emb.u.embedding = (ec_embedding_layer){.vocab = 50000, .dim = 1024};
    att.u.attention = (ec_attention_layer){.heads = 16, .kv_heads = 4, .causal = 1, .position = EC_POS_ROPE};
    mlp.u.mlp = (ec_mlp_layer){.ffn = 4096, .act = EC_ACT_SILU, .gated = 1};
    ec_layer rms = norm(EC_NORM_RMS);
    ec_layer layers[] = {emb, repeat(8, 200), residual(EC_RESIDUAL_SAVE), rms, att, residual(EC_RESIDUAL_ADD),
                         residual(EC_RESIDUAL_SAVE), rms, mlp, residual(EC_RESIDUAL_ADD), rms};
    ec_head head = {.task = "lm", .kind = EC_HEAD_CAUSAL_LM};
    ec_network_def def = {.id = "deep-200", .layers = layers, .n_layers = sizeof layers / sizeof layers[0],
                          .heads = &head, .n_heads = 1, .default_seq_len = 1024};
    assert_int_equal(ec_network_define(ctx, &def), EC_OK);
    /* P = 2·V·h (untied head) + 200·(2h² + 2·h·(h/4) + 3·h·f + 2h) + h, h = 1024, f = 4096 */
    double h = 1024, f = 4096, V = 50000;
    double p = 0;
    assert_int_equal(ec_model_params(ctx, "deep-200", "", &p), EC_OK);
    assert_rel(p, 2 * V * h + 200 * (2 * h * h + 2 * h * (h / 4) + 3 * h * f + 2 * h) + h, EC_TOL_EXACT);
    ec_model_summary s;
    ec_layer_row rows[16];
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", "deep-200"), EC_OK);
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s, rows, 16), EC_OK);
    assert_int_equal(s.n_rows, 12);
    assert_int_equal(rows[1].times, 200);
    /* forward FLOPs per sample: 200 x the block's row + embedding and head rows */
    double sum = 0;
    for (size_t i = 0; i < s.n_rows; i++)
        sum += rows[i].depth == 0 ? rows[i].fwd_flop_per_sample * rows[i].times : 0;
    assert_rel(sum, s.fwd_flop_per_sample, EC_TOL_CLOSED_FORM);
    assert_true(predict_step(ctx, "deep-200", NULL) > 0);
    ec_ctx_free(ctx);
}

static void expect_refused(ec_ctx *ctx, ec_network_def *def, const char *want)
{
    size_t before = ec_model_count(ctx);
    int rc = ec_network_define(ctx, def);
    if (rc == EC_OK)
        fail_msg("%s: accepted, expected \"%s\"", def->id, want);
    assert_int_equal(rc, EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), want);
    assert_int_equal(ec_model_count(ctx), before);
}

/* A block repeated N times is priced by walking a few repetitions and multiplying the rest
 * (predict.c's repeat_layers and, under DDP, ddp_layers, once a repetition ends in the state it
 * began in, but for rounding).  The same decoder written out N times is walked op by op: both
 * must give the same step, kernels and breakdown up to rounding (EC_TOL_EXACT, relative), in
 * the host-bound regime (batch 1 on an H100), the GPU-bound one (batch 16 on a T4), and with
 * DDP's buckets filling over the layers (8 GPUs). */
#define UNROLL_LAYERS 12
static void test_repeat_as_unrolled(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_layer emb = layer(EC_LAYER_EMBEDDING), attn = layer(EC_LAYER_ATTENTION), mlp = layer(EC_LAYER_MLP);
    emb.u.embedding = (ec_embedding_layer){.vocab = 32000, .dim = 1024};
    attn.u.attention = (ec_attention_layer){.heads = 16, .causal = 1, .position = EC_POS_ROPE};
    mlp.u.mlp = (ec_mlp_layer){.ffn = 2816, .act = EC_ACT_SILU, .gated = 1};
    const ec_layer body[] = {residual(EC_RESIDUAL_SAVE), norm(EC_NORM_RMS), attn, residual(EC_RESIDUAL_ADD),
                             residual(EC_RESIDUAL_SAVE), norm(EC_NORM_RMS), mlp, residual(EC_RESIDUAL_ADD)};
    enum { BODY = sizeof body / sizeof body[0] };
    ec_layer rep[2 + BODY + 1], flat[1 + UNROLL_LAYERS * BODY + 1];
    size_t n_rep = 0, n_flat = 0;
    rep[n_rep++] = emb;
    rep[n_rep++] = repeat(BODY, UNROLL_LAYERS);
    flat[n_flat++] = emb;
    for (int k = 0; k < BODY; k++)
        rep[n_rep++] = body[k];
    for (int l = 0; l < UNROLL_LAYERS; l++)
        for (int k = 0; k < BODY; k++)
            flat[n_flat++] = body[k];
    rep[n_rep++] = norm(EC_NORM_RMS);
    flat[n_flat++] = norm(EC_NORM_RMS);
    ec_head head = {.task = "lm", .kind = EC_HEAD_CAUSAL_LM};
    ec_network_def def = {.id = "rep-decoder", .layers = rep, .n_layers = n_rep, .heads = &head, .n_heads = 1,
                          .default_seq_len = 1024};
    assert_int_equal(ec_network_define(ctx, &def), EC_OK);
    def.id = "flat-decoder";
    def.layers = flat;
    def.n_layers = n_flat;
    assert_int_equal(ec_network_define(ctx, &def), EC_OK);
    static const char *const cases[] = {"gpu=h100-sxm5-80gb batch_per_gpu=1", "gpu=t4 batch_per_gpu=16",
                                        "gpu=a100-sxm4-80gb batch_per_gpu=4 grad_accum=4",
                                        "gpu=a100-sxm4-80gb batch_per_gpu=2 num_gpus=8",
                                        "gpu=t4 batch_per_gpu=8 num_gpus=8"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char words[256];
        ec_result a, b;
        snprintf(words, sizeof words, "model=rep-decoder precision=amp_fp16 %s", cases[i]);
        ec_test_predict(ctx, words, &a);
        snprintf(words, sizeof words, "model=flat-decoder precision=amp_fp16 %s", cases[i]);
        ec_test_predict(ctx, words, &b);
        assert_rel(a.step_s, b.step_s, EC_TOL_EXACT);
        assert_rel(a.gpu_busy_s, b.gpu_busy_s, EC_TOL_EXACT);
        assert_rel(a.kernels_per_step, b.kernels_per_step, EC_TOL_EXACT);
        assert_rel(a.breakdown.cpu_overhead_s, b.breakdown.cpu_overhead_s, EC_TOL_EXACT);
        assert_rel(a.breakdown.backward_s, b.breakdown.backward_s, EC_TOL_EXACT);
        assert_rel(a.breakdown.comm_s, b.breakdown.comm_s, EC_TOL_EXACT);
        assert_rel(a.memory.peak_bytes, b.memory.peak_bytes, EC_TOL_EXACT);
    }
    ec_ctx_free(ctx);
}

static void test_refusals(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_layer emb = layer(EC_LAYER_EMBEDDING);
    emb.u.embedding = (ec_embedding_layer){.vocab = 100, .dim = 64};
    ec_head lm = {.task = "lm", .kind = EC_HEAD_CAUSAL_LM};
    ec_layer layers[5];
    ec_network_def def = {.id = "bad", .layers = layers, .heads = &lm, .n_heads = 1};

    layers[0] = emb;
    layers[1] = layer((ec_layer_kind)99);
    def.n_layers = 2;
    expect_refused(ctx, &def, "layer 2: unknown kind 99");
    layers[1] = layer(EC_LAYER_ATTENTION);
    layers[1].u.attention.heads = 8;
    layers[1].u.attention.kv_heads = 3;
    expect_refused(ctx, &def, "layer 2 (attention): field 'kv_heads' = 3 must divide heads");
    layers[1].u.attention.kv_heads = 0;
    layers[1].u.attention.heads = -1;
    expect_refused(ctx, &def, "field 'heads' = -1 is out of range");
    layers[1] = repeat(5, 2);
    expect_refused(ctx, &def, "layer 2 (repeat): field 'layers' = 5 is out of range [1, 0]");
    layers[1] = repeat(2, 2);
    layers[2] = repeat(2, 2);
    layers[3] = layer(EC_LAYER_DROPOUT);
    layers[4] = layer(EC_LAYER_DROPOUT);
    def.n_layers = 5;
    expect_refused(ctx, &def, "layer 3 (repeat): field 'layers' = 2 runs past the end of the repeat that holds it");
    layers[1] = layer(EC_LAYER_ATTENTION);
    layers[1].u.attention = (ec_attention_layer){.heads = 4, .cross = 1};
    def.n_layers = 2;
    expect_refused(ctx, &def, "cross-attention needs an encoder memory");
    layers[1] = conv(8, 3, 1);
    expect_refused(ctx, &def, "CONV2D needs a feature map, not a token stream");
    layers[1] = residual(EC_RESIDUAL_SAVE);
    expect_refused(ctx, &def, "a RESIDUAL save is never added back");
    def.n_layers = 1;
    ec_head heads[2] = {lm, lm};
    def.heads = heads;
    def.n_heads = 2;
    expect_refused(ctx, &def, "two heads for task 'lm'");
    def.n_heads = 1;
    def.default_task = "classify";
    expect_refused(ctx, &def, "default task 'classify' has no head (it has lm)");
    def.default_task = NULL;
    layers[0].u.embedding.dim = 1LL << 40;
    expect_refused(ctx, &def, "field 'dim' = 1099511627776 is out of range");
    layers[0].u.embedding.dim = 64;
    def.id = "";
    expect_refused(ctx, &def, "a network needs an id");
    /* misuse */
    assert_int_equal(ec_network_define(ctx, NULL), EC_EMISUSE);
    assert_int_equal(ec_network_define(NULL, &def), EC_EMISUSE);
    ec_ctx *bare = ec_test_ctx_bare();
    def.id = "fine";
    assert_int_equal(ec_network_define(bare, &def), EC_EMISUSE);
    assert_contains(ec_ctx_errmsg(bare), "models are not loaded");
    ec_ctx_free(bare);
    /* the same definition is fine once corrected, and only once */
    assert_int_equal(ec_network_define(ctx, &def), EC_OK);
    expect_refused(ctx, &def, "network 'fine' is already defined");
    assert_string_equal(ec_layer_kind_name(EC_LAYER_MOE), "moe");
    assert_string_equal(ec_layer_kind_name((ec_layer_kind)99), "unknown");
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_cnn),
        cmocka_unit_test(test_encoder_decoder),
        cmocka_unit_test(test_deep_decoder),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_repeat_as_unrolled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
