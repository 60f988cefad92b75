/*
 * test_workload.c: the op lists of core/src/model/workload.c against closed forms: parameter
 * counts of every preset against the published counts in models/networks.csv and the exact
 * size of each task head; forward GEMM FLOPs of a BERT layer (Narayanan: 24·b·s·h² +
 * 4·b·s²·h); activation bytes per layer (Korthikanti: 66·sbh + 9·a·s²·b in fp32,
 * 42·sbh + 7·a·s²·b under autocast, HF eager attention); ResNet-50 forward FLOPs against
 * torchvision's _ops; deep networks expanded once per repeated block; task mismatches; the
 * context's workload cache (hits, evictions) against fresh expansions.
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "catalog/consts.h"
#include "model/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static const eci_net *net_or_fail(ec_ctx *ctx, const char *id)
{
    const eci_net *net = eci_net_find(ctx, id);
    if (net == NULL)
        fail_msg("eci_net_find(%s): %s", id, ec_ctx_errmsg(ctx));
    return net;
}

static eci_shape shape_of(int precision, double batch, double seq, int eager)
{
    eci_shape sh = {.precision = precision, .batch = batch, .seq = seq, .seq_sq = seq * seq, .target_seq = seq,
                    .image_size = 224, .mask_bytes = 1.0, .mlm_frac = 0.15, .eager_attention = eager,
                    .gelu_new_kernels = 8, .rmsnorm_kernels = 6, .rmsnorm_passes = 7, .rope_kernels = 10};
    return sh;
}

static void expand_or_fail(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *sh, eci_workload *wl)
{
    int rc = eci_workload_expand(ctx, net, task, sh, wl);
    if (rc != EC_OK)
        fail_msg("eci_workload_expand(%s, %s): %s", net->id, eci_task_name(task), ec_ctx_errmsg(ctx));
}

/* Sum of 2·m·n·k·batch·count over the ops of one kind in block `block` (-1: outside blocks),
 * one repetition. */
static double flops_of(const eci_workload *wl, eci_op_kind kind, int block)
{
    double f = 0;
    for (size_t i = 0; i < wl->n_ops; i++) {
        const eci_op *op = &wl->ops[i];
        if (op->kind == kind && op->block == block)
            f += 2.0 * op->m * op->n * op->k * op->batch * op->count;
    }
    return f;
}

/* Ops of a kind counted with their repetitions and launches. */
static double count_kind(const eci_workload *wl, eci_op_kind kind)
{
    double n = 0;
    for (size_t i = 0; i < wl->n_ops; i++)
        if (wl->ops[i].kind == kind)
            n += wl->ops[i].count * (wl->ops[i].block >= 0 ? wl->blocks[wl->ops[i].block].reps : 1);
    return n;
}

/* ---- task names ------------------------------------------------------------------------- */

static void test_task_parse(void **state)
{
    (void)state;
    static const char *const names[] = {"classify", "squad", "pretrain", "lm", "imagenet", "token_classify"};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(eci_task_parse(names[i]), i);
        assert_string_equal(eci_task_name(i), names[i]);
        assert_non_null(strstr(eci_task_names(), names[i]));
    }
    /* Unknown names, near misses, wrong case and NULL are all -1 (no fuzzy matching). */
    assert_int_equal(eci_task_parse("clasify"), -1);
    assert_int_equal(eci_task_parse("Classify"), -1);
    assert_int_equal(eci_task_parse(""), -1);
    assert_int_equal(eci_task_parse("squad2"), -1);
    assert_int_equal(eci_task_parse(NULL), -1);
    assert_string_equal(eci_task_name(-1), "?");
    assert_string_equal(eci_task_name(6), "?");
}

/* ---- parameter counts ------------------------------------------------------------------- */

/* Every preset with the head its published count is for (models/networks.csv published_task)
 * lands within 0.5% of that count: |P_shapes - P_published| <= 0.005 P_published. */
static void test_params_published(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    assert_true(ec_model_count(ctx) >= 8);
    for (size_t i = 0; i < ec_model_count(ctx); i++) {
        ec_model_info info;
        assert_int_equal(ec_model_get(ctx, i, &info), EC_OK);
        const eci_net *net = net_or_fail(ctx, info.id);
        double p = eci_workload_params(ctx, net, eci_task_parse(info.published_task));
        if (fabs(p - info.published_params) > 0.005 * info.published_params)
            fail_msg("%s (%s head): %.0f params, published %.0f (%.3f%%)", info.id, info.published_task, p,
                     info.published_params, 100.0 * (p - info.published_params) / info.published_params);
        /* ec_model_get reports the same counts */
        assert_rel(info.published_task_params, p, EC_TOL_EXACT);
        assert_rel(info.params, eci_workload_params(ctx, net, eci_task_parse(info.default_task)), EC_TOL_EXACT);
    }
    ec_ctx_free(ctx);
}

/* Exact counts where the published number is the whole trained model, and the exact size
 * of each head where it is the bare encoder (HF BertModel includes the pooler).  Shapes from
 * models/networks/bert-base.json: h = 768, V = 30522; classification heads have 2 labels. */
static void test_params_heads_exact(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *bert = net_or_fail(ctx, "bert-base");
    double h = 768, V = 30522, C = 2, P0 = bert->published_params;
    assert_int_equal((int)P0, 109482240);

    /* classify = BertModel (incl. pooler h² + h) + classifier h·C + C */
    double classify = eci_workload_params(ctx, bert, ECI_TASK_CLASSIFY);
    assert_rel(classify, P0 + h * C + C, EC_TOL_EXACT);
    /* squad = BertModel - pooler (h² + h) + qa_outputs 2h + 2 (BertForQuestionAnswering has no pooler) */
    double squad = eci_workload_params(ctx, bert, ECI_TASK_SQUAD);
    assert_rel(squad, P0 - (h * h + h) + 2.0 * h + 2.0, EC_TOL_EXACT);
    /* pretrain = BertModel + MLM transform (h² + h) + its LayerNorm 2h + decoder bias V
     * (decoder weight tied to word embeddings) + NSP 2h + 2 */
    double pretrain = eci_workload_params(ctx, bert, ECI_TASK_PRETRAIN);
    assert_rel(pretrain, P0 + (h * h + h) + 2.0 * h + V + 2.0 * h + 2.0, EC_TOL_EXACT);
    /* lm (MLM on every token) = BertModel - pooler + transform + LayerNorm + decoder bias V */
    double lm = eci_workload_params(ctx, bert, ECI_TASK_LM);
    assert_rel(lm, P0 - (h * h + h) + (h * h + h) + 2.0 * h + V, EC_TOL_EXACT);
    /* token_classify = BertModel - pooler + classifier h·C + C */
    double ner = eci_workload_params(ctx, bert, ECI_TASK_TOKEN_CLASSIFY);
    assert_rel(ner, P0 - (h * h + h) + h * C + C, EC_TOL_EXACT);
    /* BERT cannot run imagenet: no head, count 0. */
    assert_true(eci_workload_params(ctx, bert, ECI_TASK_IMAGENET) == 0);

    /* GPT-2: the LM head is tied, so lm = GPT2Model exactly (124,439,808). */
    const eci_net *gpt2 = net_or_fail(ctx, "gpt2");
    assert_rel(eci_workload_params(ctx, gpt2, ECI_TASK_LM), gpt2->published_params, EC_TOL_EXACT);
    /* classify adds GPT2ForSequenceClassification's score h·C, no bias. */
    assert_rel(eci_workload_params(ctx, gpt2, ECI_TASK_CLASSIFY), gpt2->published_params + 768 * 2.0, EC_TOL_EXACT);

    /* torchvision counts include the classifier: resnet50 and vit_b_16 are exact. */
    const eci_net *rn = net_or_fail(ctx, "resnet50");
    assert_rel(eci_workload_params(ctx, rn, ECI_TASK_IMAGENET), 25557032.0, EC_TOL_EXACT);
    const eci_net *vit = net_or_fail(ctx, "vit-b16");
    assert_rel(eci_workload_params(ctx, vit, ECI_TASK_IMAGENET), 86567656.0, EC_TOL_EXACT);

    /* The public entry point agrees and resolves "" to the default task. */
    double p = 0;
    assert_int_equal(ec_model_params(ctx, "bert-base", "squad", &p), EC_OK);
    assert_rel(p, squad, EC_TOL_EXACT);
    assert_int_equal(ec_model_params(ctx, "bert-base", "", &p), EC_OK);
    assert_rel(p, classify, EC_TOL_EXACT);
    assert_int_equal(ec_model_params(ctx, "bert-base", "squadd", &p), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "unknown task 'squadd'");
    assert_int_equal(ec_model_params(ctx, "bert-bsae", "", &p), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "did you mean 'bert-base'");
    assert_int_equal(ec_model_params(ctx, NULL, "", &p), EC_EMISUSE);
    assert_int_equal(ec_model_params(ctx, "bert-base", "", NULL), EC_EMISUSE);
    ec_ctx_free(ctx);
}

/* The count is independent of shape and precision (the weights do not change with them),
 * and the workload's own total matches eci_workload_params. */
static void test_params_shape_independent(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *bert = net_or_fail(ctx, "bert-large");
    double p = eci_workload_params(ctx, bert, ECI_TASK_SQUAD);
    static const int precs[] = {EC_PREC_FP32, EC_PREC_AMP_FP16, EC_PREC_BF16};
    eci_workload wl = {0};
    for (int i = 0; i < 3; i++) {
        eci_shape sh = shape_of(precs[i], 7, 384, i == 1);
        expand_or_fail(ctx, bert, ECI_TASK_SQUAD, &sh, &wl);
        assert_rel(wl.params, p, EC_TOL_EXACT);
    }
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* ---- FLOPs ------------------------------------------------------------------------------ */

/* One BERT layer's forward GEMMs: QKV 6·b·s·h², output 2·b·s·h², FFN 16·b·s·h² (f = 4h)
 * = 24·b·s·h²; the fused attention op adds QK^T + PV = 4·b·s²·h.  bert-base: h = 768,
 * 12 layers (one block of 12 repetitions), 2 labels. */
static void test_bert_layer_flops(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "bert-base");
    double h = 768, C = 2, L = 12;
    double b = 6, s = 173;
    eci_workload wl = {0};
    eci_shape sh = shape_of(EC_PREC_AMP_BF16, b, s, 0);
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &sh, &wl);
    assert_int_equal(wl.n_blocks, 1);
    assert_int_equal(wl.blocks[0].reps, 12);
    assert_true(wl.blocks[0].checkpoint);

    /* layer GEMMs = 24·b·s·h² */
    assert_rel(flops_of(&wl, ECI_OP_GEMM, 0), 24.0 * b * s * h * h, EC_TOL_CLOSED_FORM);
    /* sdpa = 2·(b·a)·s·s·(2·h/a) = 4·b·s²·h */
    assert_int_equal(ec_test_count_ops(&wl, "sdpa"), 1);
    assert_rel(flops_of(&wl, ECI_OP_ATTN, 0), 4.0 * b * s * s * h, EC_TOL_CLOSED_FORM);
    /* model_flop = L·(24·bsh² + 4·bs²h) + pooler 2·b·h² + classifier 2·b·h·C */
    assert_rel(wl.model_flop, L * (24.0 * b * s * h * h + 4.0 * b * s * s * h) + 2.0 * b * h * h + 2.0 * b * h * C,
               EC_TOL_CLOSED_FORM);

    /* Eager attention does the same FLOPs as two batched GEMMs (scores, context). */
    eci_shape eager = shape_of(EC_PREC_FP32, b, s, 1);
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &eager, &wl);
    assert_int_equal(ec_test_count_ops(&wl, "sdpa"), 0);
    /* layer GEMMs (eager) = 24·bsh² + 4·bs²h */
    assert_rel(flops_of(&wl, ECI_OP_GEMM, 0), 24.0 * b * s * h * h + 4.0 * b * s * s * h, EC_TOL_CLOSED_FORM);
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* GPT-2's LM head: 2·b·s·h·V forward on top of the layers; GEMMs tied (no params).
 * gpt2: h = 768, V = 50257, 12 layers. */
static void test_gpt2_head_flops(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "gpt2");
    double h = 768, V = 50257, L = 12, b = 3, s = 777;
    eci_workload wl = {0};
    eci_shape sh = shape_of(EC_PREC_AMP_FP16, b, s, 0);
    expand_or_fail(ctx, net, ECI_TASK_LM, &sh, &wl);
    /* head GEMM = 2·b·s·h·V */
    assert_rel(flops_of(&wl, ECI_OP_GEMM, -1), 2.0 * b * s * h * V, EC_TOL_CLOSED_FORM);
    /* model_flop = L·(24·bsh² + 4·bs²h) + 2·bshV */
    assert_rel(wl.model_flop, L * (24.0 * b * s * h * h + 4.0 * b * s * s * h) + 2.0 * b * s * h * V,
               EC_TOL_CLOSED_FORM);
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* torchvision resnet50 "_ops": 4.089 GMAC per 224² image -> 8.178 GFLOPs forward. */
static void test_resnet50_flops(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "resnet50");
    eci_workload wl = {0};
    eci_shape sh = shape_of(EC_PREC_FP32, 1, 0, 0);
    expand_or_fail(ctx, net, ECI_TASK_IMAGENET, &sh, &wl);
    /* forward FLOPs per image = 2 x 4.089e9 MAC, within 3% */
    assert_rel(wl.model_flop, 2.0 * 4.089e9, 0.03);
    double one = wl.model_flop;
    /* Linear in the batch: F(b = 11) = 11·F(1). */
    eci_shape sh11 = shape_of(EC_PREC_AMP_FP16, 11, 0, 0);
    expand_or_fail(ctx, net, ECI_TASK_IMAGENET, &sh11, &wl);
    assert_rel(wl.model_flop, 11.0 * one, EC_TOL_CLOSED_FORM);
    /* 53 convolutions: stem + 16 blocks x 3 + 4 downsamples; the identical blocks after each
     * stage's first are 4 blocks of 2, 3, 5 and 2 repetitions, not checkpointing units. */
    assert_rel(count_kind(&wl, ECI_OP_CONV), 53, EC_TOL_EXACT);
    assert_int_equal(wl.n_blocks, 4);
    static const int reps[] = {2, 3, 5, 2};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(wl.blocks[i].reps, reps[i]);
        assert_false(wl.blocks[i].checkpoint);
    }
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* ---- activations (Korthikanti et al., docs/model.md) -------------------------------------- */

/* fp32, HF eager attention, 1-byte dropout masks: per BERT layer
 *   66·s·b·h + 9·a·s²·b bytes,
 * plus what Korthikanti leaves out: the two LayerNorms keep a mean and a rstd in fp32 per
 * row, 2 x 8·b·s bytes.  bert-base: h = 768, a = 12. */
static void test_bert_activations_fp32(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "bert-base");
    double h = 768, a = 12;
    double b = 6, s = 203;
    eci_workload wl = {0};
    eci_shape sh = shape_of(EC_PREC_FP32, b, s, 1);
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &sh, &wl);
    /* A_layer = 66·sbh + 9·a·s²·b + 2·8·b·s */
    assert_rel(wl.blocks[0].saved_bytes, 66.0 * s * b * h + 9.0 * a * s * s * b + 2.0 * 8.0 * b * s,
               EC_TOL_CLOSED_FORM);
    /* tf32 changes the matmul unit, not the tensors: the same bytes. */
    eci_shape tf = shape_of(EC_PREC_TF32, b, s, 1);
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &tf, &wl);
    assert_rel(wl.blocks[0].saved_bytes, 66.0 * s * b * h + 9.0 * a * s * s * b + 2.0 * 8.0 * b * s,
               EC_TOL_CLOSED_FORM);
    /* What checkpointing keeps per layer: the fp32 layer input, 4·b·s·h. */
    assert_rel(wl.blocks[0].input_bytes, 4.0 * b * s * h, EC_TOL_CLOSED_FORM);
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* torch.autocast, eager attention: 16-bit GEMM inputs, but softmax, LayerNorm and the
 * residual stream in fp32 and a separate cast of the fp32 input for each of Q, K, V:
 *   42·s·b·h + 7·a·s²·b (+ 2·8·b·s LayerNorm statistics).  bert-large: h = 1024, a = 16. */
static void test_bert_activations_autocast(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "bert-large");
    double h = 1024, a = 16;
    double b = 3, s = 317;
    eci_workload wl = {0};
    static const int amp[] = {EC_PREC_AMP_FP16, EC_PREC_AMP_BF16};
    for (int i = 0; i < 2; i++) {
        eci_shape sh = shape_of(amp[i], b, s, 1);
        expand_or_fail(ctx, net, ECI_TASK_SQUAD, &sh, &wl);
        /* A_layer = 42·sbh + 7·a·s²·b + 2·8·b·s */
        assert_rel(wl.blocks[0].saved_bytes, 42.0 * s * b * h + 7.0 * a * s * s * b + 2.0 * 8.0 * b * s,
                   EC_TOL_CLOSED_FORM);
    }
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* Autocast casts every floating argument of F.linear (cached_cast in the lower_precision_fp
 * wrapper, aten/src/ATen/autocast_mode.h): a linear with a bias (BERT's) casts its weight and
 * its bias, two kernels moving 6 bytes per element; one without (Llama's) only its weight. */
static void test_autocast_casts_bias(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const struct {
        const char *net;
        int bias;
    } cases[] = {{"bert-base", 1}, {"llama-3.2-1b", 0}};
    eci_workload wl = {0};
    for (size_t c = 0; c < 2; c++) {
        eci_shape sh = shape_of(EC_PREC_AMP_BF16, 4, 128, 0);
        expand_or_fail(ctx, net_or_fail(ctx, cases[c].net), ECI_TASK_CLASSIFY, &sh, &wl);
        int linears = 0;
        for (size_t i = 0; i + 1 < wl.n_ops; i++) {
            const eci_op *cast = &wl.ops[i], *lin = &wl.ops[i + 1];
            if (strcmp(cast->name, "cast_w") != 0 || lin->kind != ECI_OP_GEMM)
                continue;
            linears++;
            assert_int_equal(lin->param_tensors, cases[c].bias ? 2 : 1);
            assert_int_equal(cast->fwd_kernels, cases[c].bias ? 2 : 1);
            assert_rel(cast->fwd_bytes, 6.0 * lin->params, EC_TOL_CLOSED_FORM);
        }
        assert_true(linears >= 4);
    }
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* GPT-2's gelu_new under autocast: torch.pow is on autocast's fp32 list, so the formula runs in
 * fp32 after a cast of its 16-bit input (one more kernel), moves 5 16-bit and 15 fp32 elements
 * per element, keeps 3 fp32 and 1 16-bit copies, and hands mlp_out an fp32 input, which it casts.
 * In fp32 it is the 8 kernels of the formula; pure 16 bits stays 16-bit. */
static void test_gelu_new_autocast(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "gpt2");
    double b = 2, s = 64, ffn = 3072;
    eci_workload wl = {0};
    static const int precs[] = {EC_PREC_AMP_BF16, EC_PREC_FP32, EC_PREC_BF16};
    for (int p = 0; p < 3; p++) {
        eci_shape sh = shape_of(precs[p], b, s, 0);
        sh.gelu_new_kernels = 8;
        expand_or_fail(ctx, net, ECI_TASK_LM, &sh, &wl);
        size_t i = 0;
        while (i < wl.n_ops && strcmp(wl.ops[i].name, "gelu_new") != 0)
            i++;
        assert_true(i + 1 < wl.n_ops);
        const eci_op *g = &wl.ops[i];
        double n = b * s * ffn;
        if (p == 0) {
            assert_int_equal(g->fwd_kernels, 9);
            assert_rel(g->fwd_bytes, (5.0 * 2 + 15.0 * 4) * n, EC_TOL_CLOSED_FORM);
            assert_rel(g->saved_bytes, (3.0 * 4 + 2) * n, EC_TOL_CLOSED_FORM);
            assert_string_equal(wl.ops[i + 1].name, "cast_in");
        } else {
            double e = p == 1 ? 4.0 : 2.0;
            assert_int_equal(g->fwd_kernels, 8);
            assert_rel(g->fwd_bytes, 8 * 2.5 * e * n, EC_TOL_CLOSED_FORM);
            assert_string_not_equal(wl.ops[i + 1].name, "cast_in");
        }
    }
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* HF's LlamaRMSNorm upcasts its input (hidden_states.to(torch.float32)), runs pow, mean and the
 * rsqrt product in fp32 and casts back before the weight's product (.to(input_dtype)).  On the
 * fp32 residual stream of autocast both casts are no-ops: 6 kernels, 7 fp32 passes.  In a model
 * held in bf16 they are copies (read 2, write 4; read 4, write 2) and the fp32 passes stay fp32:
 * 2 more kernels and 5 x 4 + 2 x 2 + 2 x (2 + 4) bytes per element, not 7 x 2. */
static void test_rmsnorm_casts(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "llama-3.2-1b");
    double b = 1, s = 64, d = 2048, n = b * s * d;
    double passes = eci_const(ctx, EC_C_rmsnorm_eager_passes), f32 = eci_const(ctx, EC_C_rmsnorm_eager_fp32_passes);
    int kernels = (int)eci_const(ctx, EC_C_rmsnorm_eager_kernels);
    int casts = (int)eci_const(ctx, EC_C_rmsnorm_eager_cast_kernels);
    assert_int_equal(casts, 2);
    eci_workload wl = {0};
    for (int c = 0; c < 2; c++) {
        eci_shape sh = shape_of(c == 0 ? EC_PREC_AMP_BF16 : EC_PREC_BF16, b, s, 0);
        sh.rmsnorm_fp32_passes = f32;
        sh.rmsnorm_cast_kernels = casts;
        expand_or_fail(ctx, net, ECI_TASK_LM, &sh, &wl);
        const eci_op *norm = NULL;
        for (size_t i = 0; i < wl.n_ops && norm == NULL; i++)
            if (wl.ops[i].block >= 0 && strcmp(wl.ops[i].name, "norm") == 0)
                norm = &wl.ops[i];
        assert_non_null(norm);
        if (c == 0) {
            assert_int_equal(norm->fwd_kernels, kernels);
            assert_rel(norm->fwd_bytes, passes * 4.0 * n, EC_TOL_CLOSED_FORM);
        } else {
            assert_int_equal(norm->fwd_kernels, kernels + casts);
            assert_rel(norm->fwd_bytes, (f32 * 4.0 + (passes - f32) * 2.0 + casts * 6.0) * n, EC_TOL_CLOSED_FORM);
        }
    }
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* gelu_new where its Python ops do not run one by one: flash-attn's FusedDenseGeluDense
 * (kernels=fused: shape fused, no remat) computes it in fc1's cuBLASLt epilogue, writing the
 * pre-activation beside the output (one pass), torch.compile (remat) in one Inductor kernel that
 * reads x and writes y (two passes); one kernel either way, keeping one 16-bit tensor.  Before,
 * both kept the eager formula's 8 kernels x 2.5 passes (40 bytes an element in 16 bits). */
static void test_gelu_new_fused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "gpt2");
    double b = 2, s = 64, n = b * s * 3072;
    eci_workload wl = {0};
    for (int remat = 0; remat < 2; remat++) {
        eci_shape sh = shape_of(EC_PREC_AMP_BF16, b, s, 0);
        sh.fused = 1;
        sh.remat = remat;
        expand_or_fail(ctx, net, ECI_TASK_LM, &sh, &wl);
        size_t i = 0;
        while (i < wl.n_ops && strcmp(wl.ops[i].name, "mlp_in") != 0)
            i++;
        while (i < wl.n_ops && wl.ops[i].kind != ECI_OP_MEM)
            i++;
        assert_true(i < wl.n_ops);
        const eci_op *g = &wl.ops[i];
        assert_int_equal(g->fwd_kernels, 1);
        assert_rel(g->fwd_bytes, (remat ? 2.0 : 1.0) * 2.0 * n, EC_TOL_CLOSED_FORM);
        assert_rel(g->saved_bytes, 2.0 * n, EC_TOL_CLOSED_FORM);
    }
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* loss=fused_cross_entropy (flash-attn's GPT training, apex/flash-attn xentropy on the 16-bit
 * logits, labels shifted by the data loader): one kernel reads the logits, keeps a log-sum-exp
 * per row, and its backward writes the gradient in place; no shifted copy, no fp32 cast, no
 * log-probabilities.  Without it, HF's shifted cross entropy. */
static void test_loss_fused(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "gpt2");
    double b = 2, s = 64, V = 50257, T = b * s;
    eci_workload wl = {0};
    eci_shape sh = shape_of(EC_PREC_AMP_BF16, b, s, 0);
    expand_or_fail(ctx, net, ECI_TASK_LM, &sh, &wl);
    assert_int_equal(ec_test_count_ops(&wl, "fused_xentropy"), 0);
    assert_int_equal(ec_test_count_ops(&wl, "log_softmax"), 1);
    sh.loss_fused = 1;
    expand_or_fail(ctx, net, ECI_TASK_LM, &sh, &wl);
    assert_int_equal(ec_test_count_ops(&wl, "fused_xentropy"), 1);
    assert_int_equal(ec_test_count_ops(&wl, "log_softmax") + ec_test_count_ops(&wl, "shift_logits") +
                         ec_test_count_ops(&wl, "cast_logits"), 0);
    const eci_op *x = ec_test_first_op(&wl, "fused_xentropy");
    assert_rel(x->fwd_bytes, T * V * 2.0, EC_TOL_CLOSED_FORM);
    assert_rel(x->bwd_bytes, 2.0 * T * V * 2.0, EC_TOL_CLOSED_FORM);
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* loss=fused_linear_cross_entropy (Liger): the projection and the loss chunk by chunk, chunks of
 * next_power_of_2(ceil(T / ceil(V / width))) rows (gpt2, T = 128: ceil(50257 / 768) = 66,
 * ceil(128 / 66) = 2, so 2 rows); the head's output is one chunk's logits, the loss kernel reads
 * and writes each 16-bit logit once in the forward and keeps 4 bytes per row, its backward scales
 * the input's gradient (T x width, 16 bits, read and written); no logits returned, no fp32 copy. */
static void test_loss_fused_linear(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "gpt2");
    double b = 2, s = 64, V = 50257, T = b * s, width = 768, rows = 2;
    eci_workload wl = {0};
    eci_shape sh = shape_of(EC_PREC_AMP_BF16, b, s, 0);
    sh.loss_fused = 2;
    expand_or_fail(ctx, net, ECI_TASK_LM, &sh, &wl);
    assert_int_equal(ec_test_count_ops(&wl, "fused_linear_xentropy"), 1);
    assert_int_equal(ec_test_count_ops(&wl, "log_softmax") + ec_test_count_ops(&wl, "shift_logits") +
                         ec_test_count_ops(&wl, "cast_logits") + ec_test_count_ops(&wl, "fused_xentropy"), 0);
    const eci_op *x = ec_test_first_op(&wl, "fused_linear_xentropy");
    assert_rel(x->fwd_bytes, T * V * 2.0 * 2.0, EC_TOL_CLOSED_FORM);
    assert_rel(x->bwd_bytes, 2.0 * T * width * 2.0, EC_TOL_CLOSED_FORM);
    assert_rel(x->saved_bytes, T * 4.0, EC_TOL_CLOSED_FORM);
    assert_rel(ec_test_first_op(&wl, "lm_head")->out_bytes, rows * V * 2.0, EC_TOL_CLOSED_FORM);
    assert_true(wl.output_bytes == 0);
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* Fused SDPA keeps no s x s tensor: activations are linear in s at fixed b·s. */
static void test_sdpa_no_quadratic_memory(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "bert-base");
    eci_workload wl = {0};
    /* Same tokens b·s = 2048, s x 4: eager grows by the s² term, fused does not. */
    eci_shape a1 = shape_of(EC_PREC_FP32, 16, 128, 0), a2 = shape_of(EC_PREC_FP32, 4, 512, 0);
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &a1, &wl);
    double f1 = wl.blocks[0].saved_bytes;
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &a2, &wl);
    double f2 = wl.blocks[0].saved_bytes;
    assert_rel(f2, f1, EC_TOL_CLOSED_FORM);
    eci_shape e1 = shape_of(EC_PREC_FP32, 16, 128, 1), e2 = shape_of(EC_PREC_FP32, 4, 512, 1);
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &e1, &wl);
    double g1 = wl.blocks[0].saved_bytes;
    expand_or_fail(ctx, net, ECI_TASK_CLASSIFY, &e2, &wl);
    double g2 = wl.blocks[0].saved_bytes;
    /* difference = 9·a·(s2²·b2 - s1²·b1), a = 12 */
    assert_rel(g2 - g1, 9.0 * 12 * (512.0 * 512.0 * 4.0 - 128.0 * 128.0 * 16.0), EC_TOL_CLOSED_FORM);
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* ---- deep networks: no op limit, a repeated block expanded once ---------------------------- */

/* A 152-layer ResNet and a 200-layer transformer expand to a few dozen ops each, however deep:
 * the repeated blocks carry their repetitions.  ResNet-152 (torchvision, 60,192,808 params). */
static void test_deep_networks(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_model_info info;
    assert_int_equal(ec_model_find(ctx, "resnet152", &info), EC_OK);
    /* |P - 60,192,808| <= 0.5% (torchvision weights metadata) */
    assert_rel(info.params, 60192808.0, 0.005);
    const eci_net *net = net_or_fail(ctx, "resnet152");
    eci_workload wl = {0};
    eci_shape sh = shape_of(EC_PREC_AMP_FP16, 32, 0, 0);
    expand_or_fail(ctx, net, ECI_TASK_IMAGENET, &sh, &wl);
    /* stem + (3 + 8 + 36 + 3) blocks x 3 convs + 4 downsamples = 155 convolutions */
    assert_rel(count_kind(&wl, ECI_OP_CONV), 1 + 50 * 3 + 4, EC_TOL_EXACT);
    /* the same op list as ResNet-50's: only the repetitions differ */
    size_t ops152 = wl.n_ops;
    expand_or_fail(ctx, net_or_fail(ctx, "resnet50"), ECI_TASK_IMAGENET, &sh, &wl);
    assert_int_equal(wl.n_ops, ops152);

    /* a 200-layer Llama-style decoder from a config in memory: 200 x its layer's params */
    eci_workload_release(ctx, &wl);
    ec_ctx_free(ctx);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void expect_mismatch(ec_ctx *ctx, const char *model, int task)
{
    eci_workload wl = {0};
    const eci_net *net = net_or_fail(ctx, model);
    eci_shape sh = shape_of(EC_PREC_FP32, 2, 64, 0);
    int rc = eci_workload_expand(ctx, net, task, &sh, &wl);
    eci_workload_release(ctx, &wl);
    if (rc != EC_EINVAL)
        fail_msg("%s with task %s: rc %d, expected EC_EINVAL", model, eci_task_name(task), rc);
    assert_contains(ec_ctx_errmsg(ctx), "cannot run task");
    assert_contains(ec_ctx_errmsg(ctx), model);
    assert_contains(ec_ctx_errmsg(ctx), eci_task_name(task));
    assert_contains(ec_ctx_errmsg(ctx), "it has heads for");
}

static void test_task_family_mismatch(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    expect_mismatch(ctx, "resnet50", ECI_TASK_SQUAD);
    expect_mismatch(ctx, "resnet50", ECI_TASK_CLASSIFY);
    expect_mismatch(ctx, "gpt2", ECI_TASK_PRETRAIN);
    expect_mismatch(ctx, "roberta-base", ECI_TASK_PRETRAIN); /* no NSP head: RobertaForPreTraining does not exist */
    expect_mismatch(ctx, "vit-b16", ECI_TASK_LM);
    expect_mismatch(ctx, "bert-base", ECI_TASK_IMAGENET);
    expect_mismatch(ctx, "bert-base", 17);
    /* The same through the public API. */
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", "resnet50"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "task", "squad"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu", "t4"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "batch_per_gpu", "8"), EC_OK);
    ec_result res;
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "cannot run task 'squad'");
    ec_ctx_free(ctx);
}

/* ---- the context's workload cache ---------------------------------------------------------- */

/* eci_workload_get against fresh expansions: 40 more shapes than the cache holds, twice over
 * in other orders, so that lookups hit through the hint, through the scan (128 keys share 256
 * hint bytes), and miss on evicted entries.  Every lookup must hand back the expansion of its
 * own shape (its FLOPs and input bytes grow with the batch), and the counts must add up: a
 * lookup that matched on the hash alone or on a stale slot would fail the first, a hint that
 * hid a cached entry the second. */
static void test_workload_cache(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_net *net = net_or_fail(ctx, "bert-base");
    int task = eci_task_parse("classify");
    enum { N = ECI_WL_CACHE_ENTRIES + 40 };
    static double flop[N + 1], input[N + 1];
    for (int b = 1; b <= N; b++) { /* what each shape expands to, outside the cache */
        eci_shape sh = shape_of(EC_PREC_AMP_FP16, b, 128, 0);
        eci_workload wl = {0};
        expand_or_fail(ctx, net, task, &sh, &wl);
        flop[b] = wl.model_flop;
        input[b] = wl.input_bytes;
        eci_workload_release(ctx, &wl);
    }
    size_t hits, misses, expect_hits = 0, expect_misses = 0;
    /* round 1: batch 1..N, every one new; round 2: the last ECI_WL_CACHE_ENTRIES backwards
     * (all cached); round 3: 1..40, evicted by round 1, each new again */
    for (int round = 1; round <= 3; round++) {
        int from = round == 1 ? 1 : round == 2 ? N : 1, to = round == 1 ? N : round == 2 ? N - ECI_WL_CACHE_ENTRIES + 1 : 40;
        int step = from <= to ? 1 : -1;
        for (int b = from; b != to + step; b += step) {
            eci_shape sh = shape_of(EC_PREC_AMP_FP16, b, 128, 0);
            const eci_workload *wl;
            assert_int_equal(eci_workload_get(ctx, net, task, &sh, &wl), EC_OK);
            if (wl->model_flop != flop[b] || wl->input_bytes != input[b])
                fail_msg("round %d, batch %d: the cache handed back %g FLOP and %g input bytes, the shape "
                         "expands to %g and %g", round, b, wl->model_flop, wl->input_bytes, flop[b], input[b]);
            if (round == 2)
                expect_hits++;
            else
                expect_misses++;
        }
    }
    eci_workload_cache_stats(ctx, &hits, &misses);
    assert_int_equal(hits, expect_hits);
    assert_int_equal(misses, expect_misses);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_parse),
        cmocka_unit_test(test_params_published),
        cmocka_unit_test(test_params_heads_exact),
        cmocka_unit_test(test_params_shape_independent),
        cmocka_unit_test(test_bert_layer_flops),
        cmocka_unit_test(test_gpt2_head_flops),
        cmocka_unit_test(test_resnet50_flops),
        cmocka_unit_test(test_bert_activations_fp32),
        cmocka_unit_test(test_bert_activations_autocast), cmocka_unit_test(test_autocast_casts_bias),
        cmocka_unit_test(test_gelu_new_autocast), cmocka_unit_test(test_rmsnorm_casts),
        cmocka_unit_test(test_gelu_new_fused),
        cmocka_unit_test(test_loss_fused),
        cmocka_unit_test(test_loss_fused_linear),
        cmocka_unit_test(test_sdpa_no_quadratic_memory),
        cmocka_unit_test(test_deep_networks),
        cmocka_unit_test(test_task_family_mismatch),
        cmocka_unit_test(test_workload_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
