/*
 * test_moe2026.c: the model types deepseek_v3 and gpt_oss of issue 41 as small configs whose
 * counts are worked out by hand from transformers' modeling files: DeepSeek's multi-head latent
 * attention (the low-rank query, the compressed key/value latent with its norm, the decoupled
 * rotary part, the up-projection) and what it keeps for backward (the latent, not every head's
 * key and value), its dense layers before the routed and shared experts; gpt-oss's attention
 * sinks (eager under SDPA, in the kernel under flash), its alternating sliding windows and its
 * experts and router with biases; expert parallelism's chunk sort.  The published counts of the real configs are
 * test_hfconfig's (tests/data/hf/MANIFEST.csv).
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/workload.h"
#include "sim/walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* V 1000, H 256, 4 layers, 4 heads; q_lora_rank 64, kv_lora_rank kv, nope 32 + rope 16, v 32;
 * intermediate 512 on the first dense layer, then 8 experts of 64 (top 2) and 1 shared. */
static char *write_deepseek(const char *dir, const char *name, int kv_rank, int dense)
{
    char text[1024], *path = ec_test_path(dir, name);
    int n = snprintf(text, sizeof text,
                     "{\"model_type\": \"deepseek_v3\", \"architectures\": [\"DeepseekV3ForCausalLM\"], "
                     "\"vocab_size\": 1000, \"hidden_size\": 256, \"intermediate_size\": 512, "
                     "\"moe_intermediate_size\": 64, \"num_hidden_layers\": 4, \"num_attention_heads\": 4, "
                     "\"num_key_value_heads\": 4, \"q_lora_rank\": 64, \"kv_lora_rank\": %d, \"qk_nope_head_dim\": 32, "
                     "\"qk_rope_head_dim\": 16, \"v_head_dim\": 32, \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
                     "\"n_shared_experts\": 1, \"first_k_dense_replace\": %d, \"moe_layer_freq\": 1, "
                     "\"num_nextn_predict_layers\": 1, \"tie_word_embeddings\": false}",
                     kv_rank, dense);
    ec_test_write_file(path, text, (size_t)n);
    return path;
}

/* V 1000, H 256, 4 layers, 4 heads of 64, 2 kv heads, 8 experts of 256 (top 2). */
static char *write_gpt_oss(const char *dir, const char *name)
{
    static const char text[] =
        "{\"model_type\": \"gpt_oss\", \"architectures\": [\"GptOssForCausalLM\"], \"vocab_size\": 1000, "
        "\"hidden_size\": 256, \"intermediate_size\": 256, \"num_hidden_layers\": 4, \"num_attention_heads\": 4, "
        "\"num_key_value_heads\": 2, \"head_dim\": 64, \"num_local_experts\": 8, \"num_experts_per_tok\": 2, "
        "\"attention_bias\": true, \"sliding_window\": 128, \"tie_word_embeddings\": false, \"layer_types\": "
        "[\"sliding_attention\", \"full_attention\", \"sliding_attention\", \"full_attention\"]}";
    char *path = ec_test_path(dir, name);
    ec_test_write_file(path, text, sizeof text - 1);
    return path;
}

static const eci_workload *workload_ep(ec_ctx *ctx, const char *model, int precision, int flash, int ep);

static const eci_workload *workload(ec_ctx *ctx, const char *model, int precision, int flash)
{
    return workload_ep(ctx, model, precision, flash, 1);
}

static const eci_workload *workload_te(ec_ctx *ctx, const char *model, int precision, int flash, int ep, int te);

static const eci_workload *workload_ep(ec_ctx *ctx, const char *model, int precision, int flash, int ep)
{
    return workload_te(ctx, model, precision, flash, ep, 0);
}

/* te: Megatron-Core's Transformer Engine layers (kernels=te) */
static const eci_workload *workload_te(ec_ctx *ctx, const char *model, int precision, int flash, int ep, int te)
{
    eci_shape sh = ec_test_lm_shape(precision, 2, 128);
    sh.flash = flash;
    sh.ep = ep;
    sh.te_layers = te > 0;
    return ec_test_lm_workload(ctx, model, &sh);
}

/* DeepseekV3ForCausalLM's parameters, term by term: embed + lm_head 2 x 1000 x 256; attention
 * q_a 256x64, q_a_layernorm 64, q_b 64 x 4x48, kv_a_proj_with_mqa 256 x (32+16), kv_a_layernorm
 * 32, kv_b 32 x 4x(32+32), o_proj 4x32 x 256 = 82,016; two RMSNorms 512 a layer; the dense MLP
 * 3 x 256 x 512; a MoE layer 8 x 3 x 256 x 64 + the shared 3 x 256 x 64 + the router 8 x 256;
 * the final norm 256.  The MTP layer (num_nextn_predict_layers) is not built. */
static void test_deepseek_params(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_deepseek(dir, "ds.json", 32, 1);
    double p = 0;
    assert_int_equal(ec_model_params(ctx, path, "lm", &p), EC_OK);
    double attn = 256.0 * 64 + 64 + 64.0 * 4 * 48 + 256.0 * 48 + 32 + 32.0 * 4 * 64 + 4.0 * 32 * 256;
    assert_true(attn == 82016);
    double moe = 8 * 3.0 * 256 * 64 + 3.0 * 256 * 64 + 8.0 * 256;
    double want = 2.0 * 1000 * 256 + 4 * (attn + 512) + 3.0 * 256 * 512 + 3 * moe + 256;
    if (p != want)
        fail_msg("deepseek_v3: %.0f parameters, by hand %.0f", p, want);
    /* the first layer dense, the other three MoE: two repeated blocks */
    const eci_net *net = eci_net_find(ctx, path);
    assert_non_null(net);
    int dense = 0, moes = 0;
    for (size_t i = 0; i < net->n_layers; i++) {
        const ec_layer *l = &net->layers[i];
        if (l->kind == EC_LAYER_REPEAT && i + 1 < net->n_layers) {
            for (int j = 1; j <= l->u.repeat.layers; j++) {
                dense += net->layers[i + j].kind == EC_LAYER_MLP ? l->u.repeat.times : 0;
                moes += net->layers[i + j].kind == EC_LAYER_MOE ? l->u.repeat.times : 0;
            }
        }
    }
    assert_int_equal(dense, 1);
    assert_int_equal(moes, 3);
    /* first_k_dense_replace past the last layer: every layer dense, as DeepseekV3DecoderLayer builds it */
    char *all = write_deepseek(dir, "dense.json", 32, 8);
    assert_int_equal(ec_model_params(ctx, all, "lm", &p), EC_OK);
    want = 2.0 * 1000 * 256 + 4 * (attn + 512 + 3.0 * 256 * 512) + 256;
    if (p != want)
        fail_msg("deepseek_v3 all dense: %.0f parameters, by hand %.0f", p, want);
    free(all);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* The projections as they run: q_a (256 -> 64), q_b (64 -> 4 x 48), kv_a (256 -> 32 + 16), kv_b
 * (32 -> 4 x 64), no per-head k or v projection of the stream; backward keeps the latent (kv_b's
 * input, 32 wide), not every head's key and value; the activations kept grow with kv_lora_rank
 * by the latent's bytes alone: the norm keeps its input and output, kv_b its input, in bf16
 * 2 + 2 + 2 bytes an element, rows x delta x 4 layers. */
static void test_mla_keeps_the_latent(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *small = write_deepseek(dir, "ds32.json", 32, 1), *big = write_deepseek(dir, "ds64.json", 64, 1);
    const eci_workload *wl = workload(ctx, small, EC_PREC_BF16, 0);
    double rows = 2.0 * 128;
    const eci_op *op = ec_test_first_op(wl, "q_a");
    assert_true(op->k == 256 && op->n == 64);
    op = ec_test_first_op(wl, "q_b");
    assert_true(op->k == 64 && op->n == 4 * 48);
    op = ec_test_first_op(wl, "kv_a");
    assert_true(op->k == 256 && op->n == 32 + 16);
    op = ec_test_first_op(wl, "kv_b");
    assert_true(op->k == 32 && op->n == 4 * 64);
    assert_true(op->saved_bytes == rows * 32 * 2.0); /* the normed latent */
    assert_true(op->saved_bytes < rows * 4 * 64 * 2.0 / 4);
    assert_int_equal(ec_test_count_ops(wl, "k"), 0);
    assert_int_equal(ec_test_count_ops(wl, "v"), 0);
    assert_int_equal(ec_test_count_ops(wl, "kv_a_norm"), 2); /* one in each repeated block */
    /* the core: QK^T over 48, PV over 32 */
    op = ec_test_first_op(wl, "sdpa");
    assert_true(op->k == 48 + 32);
    op = ec_test_first_op(wl, "attn_out");
    assert_true(op->k == 4 * 32);
    double kept_small = eci_workload_saved_bytes(wl, 0, 1);
    const eci_workload *wl_big = workload(ctx, big, EC_PREC_BF16, 0);
    double kept_big = eci_workload_saved_bytes(wl_big, 0, 1);
    if (kept_big - kept_small != rows * 32 * 6.0 * 4)
        fail_msg("kv_lora_rank 32 -> 64 keeps %.0f more bytes, the latent's %.0f", kept_big - kept_small,
                 rows * 32 * 6.0 * 4);
    free(small);
    free(big);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* GptOssForCausalLM: embed + lm_head 2 x 1000 x 256; attention q and o 256 x 256 + 256, k and v
 * 256 x 128 + 128, sinks 4; two RMSNorms; the router 8 x 256 + 8; experts 8 x (256 x 512 + 512 +
 * 256 x 256 + 256); the final norm.  SDPA has no sink: eager with the sink's cat; flash keeps it
 * in the kernel.  Sliding windows on the even layers. */
static void test_gpt_oss(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_gpt_oss(dir, "oss.json");
    double p = 0;
    assert_int_equal(ec_model_params(ctx, path, "lm", &p), EC_OK);
    double attn = 2 * (256.0 * 256 + 256) + 2 * (256.0 * 128 + 128) + 4;
    double moe = 8.0 * 256 + 8 + 8 * (256.0 * 512 + 512 + 256.0 * 256 + 256);
    double want = 2.0 * 1000 * 256 + 4 * (attn + 512 + moe) + 256;
    if (p != want)
        fail_msg("gpt_oss: %.0f parameters, by hand %.0f", p, want);
    const eci_workload *wl = workload(ctx, path, EC_PREC_AMP_BF16, 0);
    assert_true(ec_test_first_op(wl, "sinks")->params == 4);
    assert_int_equal(ec_test_count_ops(wl, "sdpa"), 0);
    assert_true(ec_test_count_ops(wl, "sinks_cat_max") > 0);
    wl = workload(ctx, path, EC_PREC_AMP_BF16, 1);
    assert_true(ec_test_count_ops(wl, "sdpa") > 0);
    assert_int_equal(ec_test_count_ops(wl, "sinks_cat_max"), 0);
    const eci_net *net = eci_net_find(ctx, path);
    int64_t windows[4];
    int n = 0;
    for (size_t i = 0; i < net->n_layers && n < 4; i++)
        if (net->layers[i].kind == EC_LAYER_ATTENTION)
            windows[n++] = net->layers[i].u.attention.window;
    assert_int_equal(n, 2); /* one sliding and one full layer, repeated twice */
    assert_true(windows[0] == 128 && windows[1] == 0);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Expert parallelism's chunk sort (Megatron-Core's sort_chunks_by_idxs, "Permutation 2"): the
 * all-to-all delivers the pairs in source-rank order, so with more than one local expert they are
 * copied into expert order before the experts and back before the combine: each a read and a
 * write of rows x top_k x hidden 16-bit elements, forward and backward.  gpt-oss above: 8 experts,
 * top 2, hidden 256; batch 2 x 128 tokens.  ep = 8 leaves one expert a GPU (nothing to sort),
 * ep = 1 has no all-to-all. */
static void test_ep_chunk_sort(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_gpt_oss(dir, "oss.json");
    const eci_workload *wl = workload_ep(ctx, path, EC_PREC_AMP_BF16, 1, 2);
    double pairs = 2.0 * 128 * 2 * 256 * 2; /* bytes of every token-expert pair's row */
    assert_int_equal(ec_test_count_ops(wl, "ep_sort"), 2); /* once per MoE layer of each repeated block */
    assert_int_equal(ec_test_count_ops(wl, "ep_unsort"), 2);
    const char *names[] = {"ep_sort", "ep_unsort"};
    for (int i = 0; i < 2; i++) {
        const eci_op *op = ec_test_first_op(wl, names[i]);
        if (op->fwd_bytes != 2 * pairs || op->bwd_bytes != 2 * pairs || op->saved_bytes != 0 || op->count != 1)
            fail_msg("%s: %.0f forward and %.0f backward bytes, %.0f kept, %d runs; want %.0f, %.0f, 0, 1",
                     names[i], op->fwd_bytes, op->bwd_bytes, op->saved_bytes, op->count, 2 * pairs, 2 * pairs);
    }
    /* the sort sits between the dispatch and the first expert, the unsort before the combine */
    size_t d = 0;
    while (d < wl->n_ops && strcmp(wl->ops[d].name, "ep_dispatch") != 0)
        d++;
    assert_true(d + 2 < wl->n_ops);
    assert_string_equal(wl->ops[d + 1].name, "ep_sort");
    assert_int_equal(ec_test_count_ops(workload_ep(ctx, path, EC_PREC_AMP_BF16, 1, 8), "ep_sort"), 0);
    assert_int_equal(ec_test_count_ops(workload_ep(ctx, path, EC_PREC_AMP_BF16, 1, 1), "ep_unsort"), 0);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Megatron-Core's token-dropless all-to-all dispatcher (kernels=te) copies the routing's split
 * sizes to the host and waits for them once per MoE layer's forward: before the all-to-all with
 * expert parallelism, before the experts without it (token_dispatcher.py @core_v0.15.0,
 * cuda_sync_point).  HF's eager experts (kernels other than te) are left without it.  The walk
 * then makes the host wait for the GPU there: run on ops of 100 us each issued in 1 us, the host
 * starts the op after the sync no earlier than the GPU ends every op before it, and the GPU idles
 * at least the copy's latency at each sync (without the sync the host ends far ahead of the GPU,
 * at 1 us an op, and the GPU never idles after the first op). */
static void test_dropless_sync(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_gpt_oss(dir, "oss.json");
    for (int ep = 1; ep <= 2; ep++) {
        const eci_workload *wl = workload_te(ctx, path, EC_PREC_AMP_BF16, 1, ep, 1);
        size_t syncs = 0;
        for (size_t i = 0; i < wl->n_ops; i++)
            if (wl->ops[i].host_sync) {
                syncs++;
                assert_string_equal(wl->ops[i].name, ep > 1 ? "ep_dispatch" : "expert_gather");
            }
        assert_int_equal(syncs, 2); /* the two MoE layers of the repeated block */
        assert_int_equal(wl->host_syncs, syncs);
        assert_int_equal(workload_te(ctx, path, EC_PREC_AMP_BF16, 1, ep, 0)->host_syncs, 0);
    }
    const eci_workload *wl = workload_te(ctx, path, EC_PREC_AMP_BF16, 1, 2, 1);
    eci_op_cost_t *cost = calloc(wl->n_ops, sizeof *cost);
    assert_non_null(cost);
    for (size_t i = 0; i < wl->n_ops; i++)
        cost[i] = (eci_op_cost_t){.fwd_s = 100e-6, .fwd_kernels = 1, .host_kernels = 1, .host_ops = 1};
    plan p = {.wl = wl, .cost = cost, .loop_block = -1, .dispatch_fwd_s = 1e-6, .dispatch_bwd_s = 1e-6,
              .op_fwd_s = 1e-6, .host_factor = 1, .loop_copy_s = 10e-6};
    size_t first = 0;
    while (!wl->ops[first].host_sync)
        first++;
    timeline t = {0};
    eci_walk_forward_ops(&t, &p, 0, first + 1);
    /* issued once the GPU ended ops 0..first-1 and the copy came back */
    assert_true(t.cpu >= first * 100e-6 + 10e-6 + 1e-6 - 1e-12);
    timeline w = {0};
    eci_walk_forward_ops(&w, &p, 0, wl->n_ops);
    assert_rel(w.gpu, wl->n_ops * 100e-6 + 1e-6 + wl->host_syncs * (10e-6 + 1e-6), 1e-9);
    assert_true(w.gap[CAUSE_DISPATCH] >= wl->host_syncs * 10e-6);
    free(cost);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Under FP8 with Megatron-Core's TE layers (kernels=te) the experts are Transformer Engine
 * GroupedLinear layers, which run FP8 grouped GEMMs (grouped_linear.py @v2.9), and the router
 * is Megatron's own matmul in the input's dtype (router.py @core_v0.15.0); without TE layers
 * the op list keeps what it had: the router marked as a layer's linear, the experts 16-bit. */
static void test_te_expert_fp8(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_gpt_oss(dir, "oss.json");
    for (int te = 0; te <= 1; te++) {
        const eci_workload *wl = workload_te(ctx, path, EC_PREC_AMP_FP8, 1, 2, te);
        assert_int_equal(ec_test_first_op(wl, "expert_up")->fp8, te);
        assert_int_equal(ec_test_first_op(wl, "expert_down")->fp8, te);
        assert_int_equal(ec_test_first_op(wl, "router")->fp8, !te);
        assert_int_equal(ec_test_first_op(wl, te ? "qkv" : "q")->fp8, 1); /* attention's linears either way */
    }
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepseek_params),
        cmocka_unit_test(test_mla_keeps_the_latent),
        cmocka_unit_test(test_gpt_oss),
        cmocka_unit_test(test_ep_chunk_sort),
        cmocka_unit_test(test_dropless_sync),
        cmocka_unit_test(test_te_expert_fp8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
