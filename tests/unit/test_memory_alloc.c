/*
 * test_memory_alloc.c: the allocations of issue 40 in core/src/model/memory.c, each a term that
 * a test here loses when it is removed (docs/memory.md):
 *   loss       the cross entropy's backward makes two tensors of the log-probabilities' size, at
 *              fp32 under autocast: transient += 2 x loss_bytes / loss_chunks (+ the returned
 *              logits, output_bytes, when the loop holds its outputs)
 *   cuDNN      reserved += cudnn_workspace_io_frac x conv_io_bytes (+ conv_layout_bytes for NCHW
 *              on tensor cores); what must be allocated does not change
 *   context    by PyTorch release: before 1.13 cuda_context_old_bytes, before 2.0
 *              cuda_context_eager_bytes, then cuda_context_bytes
 *   in-bwd     optimizer_in_bwd: the gradients alive are the largest parameter tensor's
 *   loop       PyTorch 1.x's per-tensor AdamW: two temporaries of the largest tensor, not foreach's
 *   ZeRO-3     DeepSpeed's contiguous gradient bucket, zero3_reduce_bucket_elems in the gradients' dtype
 *   upcast     loss=cross_entropy_fp32: fp32 log-probabilities and gradients in a 16-bit model
 *   held       logits_held=0/1 overrides whether the loop holds the returned logits
 *   headroom   needed = allocated x (1 + allocator_frac_min) + context;
 *              fits <=> needed + headroom <= capacity, at_edge <=> needed <= capacity < needed + headroom;
 *              allocated <= reserved <= capacity - context when the step can run
 *   phase      the moment of the peak follows the larger transient
 *   eager      eager attention keeps its probabilities once without dropout, and mask + output
 *              with it (workload_blocks.c); ALBERT's FFN has no dropout (hfconfig.c)
 * on a synthetic workload (the sizes of test_memory.c's kind), then on real configurations.
 */
#include "ec_test.h"
#include "internal.h"
#include "catalog/consts.h"
#include "model/memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double P = 37123457.0;  /* parameters */
static const double L = 5.3e8;       /* log-probabilities of the loss (bytes) */

/* 6 layers x 3.0e8 bytes of activations and a head of 1.1e8, far above the 4P bytes of gradients,
 * and the inputs of a one-GPU step on 80 GiB with the default headroom. */
typedef struct fixture {
    eci_workload wl;
    eci_op ops[3];
    eci_block blocks[1];
} fixture;

static eci_mem_in synthetic(fixture *f)
{
    eci_workload *wl = &f->wl;
    eci_op *ops = f->ops;
    memset(f, 0, sizeof *f);
    wl->ops = ops;
    wl->cap_ops = wl->n_ops = 3;
    wl->blocks = f->blocks;
    wl->cap_blocks = wl->n_blocks = 1;
    wl->params = wl->trainable_params = P;
    ops[0].block = -1;
    ops[0].saved_bytes = 1.1e8;
    ops[0].params = 0.6 * P; /* the largest parameter tensor */
    ops[1].saved_bytes = 2.3e8;
    ops[1].params = 0.1 * P;
    ops[2].saved_bytes = 0.7e8;
    ops[2].params = 0.3 * P;
    wl->saved_other_bytes = ops[0].saved_bytes;
    f->blocks[0] = (eci_block){.begin = 1, .end = 3, .reps = 6, .input_bytes = 1.3e7, .saved_bytes = 3.0e8};
    eci_mem_in in = {.wl = wl, .precision = EC_PREC_AMP_BF16, .optimizer = EC_OPT_ADAMW, .num_gpus = 1,
                     .capacity_bytes = 80.0 * 1073741824.0, .allocator_scale = 1.0, .headroom_bytes = -1};
    return in;
}

/* The loss's two fp32 gradients, one chunk at a time, and the logits a plain loop holds. */
static void test_loss_transient(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    fixture f;
    eci_mem_in in = synthetic(&f);
    ec_memory base, m;
    eci_memory_estimate(ctx, &in, &base);
    f.wl.loss_bytes = L;
    eci_memory_estimate(ctx, &in, &m);
    assert_int_equal(m.peak_phase, EC_PEAK_BACKWARD_START);
    assert_rel(m.allocated_bytes - base.allocated_bytes, 2.0 * L, EC_TOL_CLOSED_FORM);
    in.loss_chunks = 8;
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.allocated_bytes - base.allocated_bytes, 2.0 * L / 8.0, EC_TOL_CLOSED_FORM);
    f.wl.output_bytes = 2.65e8;
    in.outputs_held = 1;
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.allocated_bytes - base.allocated_bytes, 2.0 * L / 8.0 + 2.65e8, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* cuDNN's cached workspaces and NHWC copies raise reserved and nvidia-smi, not what must be allocated. */
static void test_conv_cache(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    fixture f;
    eci_mem_in in = synthetic(&f);
    ec_memory base, m;
    eci_memory_estimate(ctx, &in, &base);
    f.wl.conv_io_bytes = 4.1e8;
    f.wl.conv_layout_bytes = 7.7e8;
    eci_memory_estimate(ctx, &in, &m);
    double ws = eci_const(ctx, EC_C_cudnn_workspace_io_frac) * 4.1e8;
    assert_true(ws > 0);
    assert_rel(m.reserved_bytes - base.reserved_bytes, ws, EC_TOL_CLOSED_FORM);
    assert_rel(m.needed_bytes, base.needed_bytes, EC_TOL_EXACT);
    in.conv_transposes = 1;
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.reserved_bytes - base.reserved_bytes, ws + 7.7e8, EC_TOL_CLOSED_FORM);
    assert_rel(m.nvml_bytes - base.nvml_bytes, ws + 7.7e8, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* The CUDA context by release. */
static void test_context_by_version(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    fixture f;
    eci_mem_in in = synthetic(&f);
    static const struct { int release; int name; } rows[] = {
        {EC_RELEASE(1, 10), EC_C_cuda_context_old_bytes}, {EC_RELEASE(1, 12), EC_C_cuda_context_old_bytes},
        {EC_RELEASE(1, 9), EC_C_cuda_context_old_bytes}, {EC_RELEASE(1, 13), EC_C_cuda_context_eager_bytes},
        {EC_RELEASE(1, 99), EC_C_cuda_context_eager_bytes}, {EC_RELEASE(2, 0), EC_C_cuda_context_bytes},
        {EC_RELEASE(2, 5), EC_C_cuda_context_bytes}, {EC_RELEASE(2, 10), EC_C_cuda_context_bytes},
        {0, EC_C_cuda_context_bytes}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ec_memory m;
        in.torch_release = rows[i].release;
        eci_memory_estimate(ctx, &in, &m);
        assert_rel(m.context_bytes, eci_const(ctx, rows[i].name), EC_TOL_EXACT);
    }
    /* the releases differ: before 1.13 every kernel is loaded, from 2.0 lazily */
    assert_true(eci_const(ctx, EC_C_cuda_context_old_bytes) > eci_const(ctx, EC_C_cuda_context_eager_bytes));
    assert_true(eci_const(ctx, EC_C_cuda_context_eager_bytes) > eci_const(ctx, EC_C_cuda_context_bytes));
    ec_ctx_free(ctx);
}

/* optimizer_in_bwd: one parameter's gradient at a time, no separate optimizer step. */
static void test_optimizer_in_bwd(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    fixture f;
    eci_mem_in in = synthetic(&f);
    for (int k = 0; k < 3; k++) /* parameter-heavy: the optimizer step would hold the peak */
        f.ops[k].saved_bytes *= 1e-3;
    f.wl.saved_other_bytes = f.ops[0].saved_bytes;
    f.blocks[0].saved_bytes *= 1e-3;
    ec_memory m;
    eci_memory_estimate(ctx, &in, &m);
    assert_int_equal(m.peak_phase, EC_PEAK_OPTIMIZER);
    assert_rel(m.grads_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);
    in.optimizer_in_bwd = 1;
    eci_memory_estimate(ctx, &in, &m);
    assert_int_not_equal(m.peak_phase, EC_PEAK_OPTIMIZER);
    double acts = 1.1e5 + 6 * 3.0e5;
    /* backward end: the largest parameter's gradient beside the weights and states */
    assert_int_equal(m.peak_phase, acts > 0.6 * P * 4.0 ? EC_PEAK_BACKWARD_START : EC_PEAK_BACKWARD_END);
    assert_rel(m.grads_bytes, 0.6 * P * 4.0, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* needed, headroom, fits and at_edge, over capacities from ample to too small. */
static void test_headroom(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    fixture f;
    eci_mem_in in = synthetic(&f);
    f.wl.conv_io_bytes = 2e8;
    ec_memory m;
    int seen[3] = {0, 0, 0}; /* fits, at the edge, does not run */
    for (double cap_gib = 1.0; cap_gib < 5.0; cap_gib += 0.01) {
        in.capacity_bytes = cap_gib * 1073741824.0;
        for (int given = 0; given < 2; given++) {
            in.headroom_bytes = given ? 0.25 * 1073741824.0 : -1;
            eci_memory_estimate(ctx, &in, &m);
            double fmin = eci_const(ctx, EC_C_allocator_frac_min);
            double fstatic = eci_const(ctx, EC_C_allocator_frac_static);
            double needed = m.allocated_bytes * (1.0 + fmin) + m.context_bytes;
            double usual = m.allocated_bytes * (1.0 + fstatic) + eci_const(ctx, EC_C_cudnn_workspace_io_frac) * 2e8;
            double headroom = given ? in.headroom_bytes
                                    : usual - m.allocated_bytes * (1.0 + fmin) +
                                          eci_const(ctx, EC_C_memory_headroom_frac) * needed;
            assert_rel(m.needed_bytes, needed, EC_TOL_CLOSED_FORM);
            assert_rel(m.headroom_bytes, headroom, EC_TOL_CLOSED_FORM);
            int runs = needed <= m.capacity_bytes;
            assert_int_equal(m.fits, needed + headroom <= m.capacity_bytes);
            assert_int_equal(m.at_edge, runs && !m.fits);
            assert_true(m.allocated_bytes <= m.reserved_bytes);
            if (runs) {
                assert_true(m.reserved_bytes + m.context_bytes <= m.capacity_bytes * (1 + 1e-12));
                assert_true(m.nvml_bytes <= m.capacity_bytes * (1 + 1e-12));
            } else {
                assert_rel(m.reserved_bytes, usual, EC_TOL_CLOSED_FORM);
            }
            assert_rel(m.nvml_bytes, m.reserved_bytes + m.context_bytes, EC_TOL_CLOSED_FORM);
            seen[m.fits ? 0 : m.at_edge ? 1 : 2] = 1;
        }
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    ec_ctx_free(ctx);
}

/* ---- real configurations ---------------------------------------------------------------- */

/* BERT's masked-LM head under autocast: at the start of backward the workspace holds the cuBLAS
 * workspace and the loss's two fp32 gradients of (batch x seq) x vocabulary, 4 bytes each; a
 * plain loop also holds the 16-bit logits it got back. */
static void test_bert_mlm_loss_in_fp32(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *words[] = {"model=bert-base", "task=lm", "gpu=a100-sxm4-80gb", "precision=amp_fp16",
                           "batch_per_gpu=32", "seq_len=512", "trainer=hf"};
    ec_result res;
    ec_test_predict_words(ctx, words, 7, &res);
    double n = 32.0 * 512.0 * 30522.0; /* logits: rows x vocabulary */
    assert_int_equal(res.memory.peak_phase, EC_PEAK_BACKWARD_START);
    assert_rel(res.memory.workspace_bytes, eci_const(ctx, EC_C_cublas_workspace_bytes) + 2.0 * n * 4.0,
               EC_TOL_CLOSED_FORM);
    words[6] = "trainer=plain";
    ec_test_predict_words(ctx, words, 7, &res);
    assert_rel(res.memory.workspace_bytes, eci_const(ctx, EC_C_cublas_workspace_bytes) + 2.0 * n * 4.0 + n * 2.0,
               EC_TOL_CLOSED_FORM);
    /* loss=sum (logits.sum()): no log-probabilities kept, one 16-bit gradient beside the held logits */
    ec_result ce = res;
    const char *sum[] = {"model=bert-base", "task=lm", "gpu=a100-sxm4-80gb", "precision=amp_fp16",
                         "batch_per_gpu=32", "seq_len=512", "trainer=plain", "loss=sum"};
    ec_test_predict_words(ctx, sum, 8, &res);
    assert_rel(res.memory.workspace_bytes, eci_const(ctx, EC_C_cublas_workspace_bytes) + n * 2.0 + n * 2.0,
               EC_TOL_CLOSED_FORM);
    assert_rel(ce.memory.activations_bytes - res.memory.activations_bytes, n * 4.0, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* ALBERT (tests/data/hf/albert-base-v2: dropout 0) against the same config with dropout 0.1, in
 * fp16 at batch 8 x 512 (12 layers, 12 heads, hidden 768, embedding 128).  Eager attention
 * without dropout keeps its probabilities once (the softmax's output is what the context GEMM
 * reads); a p > 0 dropout adds its 1-byte mask and its 2-byte output per score, so beyond the
 * hidden dropouts' masks, which SDPA has as well, eager grows by 3 bytes per score.  And an
 * ALBERT layer has one hidden dropout, after attention (AlbertLayer adds the FFN's output as
 * it is): SDPA grows by one 1-byte mask of batch x seq x hidden per layer and one of the
 * embeddings' width. */
static void albert_acts(ec_ctx *ctx, const char *model, const char *attention, double *acts)
{
    const char *words[] = {model, "task=classify", "gpu=rtx2060-super", "precision=fp16", "batch_per_gpu=8",
                           "seq_len=512", "optimizer=none", "loss=sum", attention};
    ec_result res;
    ec_test_predict_words(ctx, words, 9, &res);
    *acts = res.memory.activations_bytes;
}

static void test_albert_dropout(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    size_t len = 0;
    char *text = ec_test_read_file("data/hf/albert-base-v2/config.json", &len);
    assert_non_null(text);
    char *dir = ec_test_tmpdir(), *path = ec_test_path(dir, "albert-dropout.json"), *at;
    char out[4096], word[4200];
    assert_true(len + 16 < sizeof out);
    /* "..._dropout_prob": 0, -> 0.1, for the hidden and the attention dropout */
    size_t n = 0;
    for (char *p = text; *p != '\0';) {
        at = strstr(p, "dropout_prob\": 0,");
        size_t k = at != NULL ? (size_t)(at - p) + strlen("dropout_prob\": 0") : strlen(p);
        memcpy(out + n, p, k);
        n += k;
        p += k;
        if (at != NULL) {
            memcpy(out + n, ".1", 2);
            n += 2;
        }
    }
    ec_test_write_file(path, out, n);
    snprintf(word, sizeof word, "model=%s", path);
    double e0, s0, e1, s1;
    albert_acts(ctx, "model=data/hf/albert-base-v2/config.json", "attention=eager", &e0);
    albert_acts(ctx, "model=data/hf/albert-base-v2/config.json", "attention=sdpa", &s0);
    albert_acts(ctx, word, "attention=eager", &e1);
    albert_acts(ctx, word, "attention=sdpa", &s1);
    double scores = 12.0 * 8.0 * 12.0 * 512.0 * 512.0, rows = 8.0 * 512.0;
    assert_rel((e1 - e0) - (s1 - s0), 3.0 * scores, EC_TOL_CLOSED_FORM);
    assert_rel(s1 - s0, 12.0 * rows * 768.0 + rows * 128.0, EC_TOL_CLOSED_FORM);
    ec_test_rmtree(dir);
    free(dir);
    free(path);
    free(text);
    ec_ctx_free(ctx);
}

/* PyTorch 1.x's AdamW loops over the tensors (foreach=None, _single_tensor_adamw): its step makes
 * sqrt(exp_avg_sq) and its quotient one tensor at a time, two of the largest tensor's size (BERT's
 * word embeddings, 30,522 x 768 in fp32) instead of foreach's one of every parameter's. */
static void test_adamw_loop_temporaries(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *words[] = {"model=bert-base", "task=classify", "gpu=a100-sxm4-80gb", "precision=fp32",
                           "batch_per_gpu=1", "seq_len=16", "zero_grad=set_to_none", "torch_version=2.1"};
    ec_result res;
    ec_model_summary s;
    ec_config cfg;
    ec_config_init(&cfg);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(ec_config_set_word(ctx, &cfg, words[i]), EC_OK);
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s, NULL, 0), EC_OK);
    ec_test_predict_words(ctx, words, 8, &res);
    assert_int_equal(res.memory.peak_phase, EC_PEAK_OPTIMIZER);
    assert_rel(res.memory.optimizer_bytes, 8.0 * s.params + 4.0 * s.params, EC_TOL_CLOSED_FORM);
    words[7] = "torch_version=1.13";
    ec_test_predict_words(ctx, words, 8, &res);
    assert_int_equal(res.memory.peak_phase, EC_PEAK_OPTIMIZER);
    assert_rel(res.memory.optimizer_bytes, 8.0 * s.params + 2.0 * 30522.0 * 768.0 * 4.0, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* DeepSpeed ZeRO-3 (contiguous_gradients, the default) copies gradients into a flat bucket of
 * reduce_bucket_size elements (constants.csv: 5e8) in the gradients' dtype, allocated with the
 * optimizer: beside everything, at any phase, on top of ZeRO-2's accounting. */
static void test_zero3_gradient_bucket(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *words[] = {"model=bert-base", "task=classify", "gpu=a100-sxm4-80gb", "precision=fp32",
                           "batch_per_gpu=8", "seq_len=128", "strategy=zero", "zero_stage=2"};
    double elems = eci_const(ctx, EC_C_zero3_reduce_bucket_elems);
    for (int amp = 0; amp < 2; amp++) {
        ec_result z2, z3;
        words[3] = amp ? "precision=amp_bf16" : "precision=fp32";
        words[7] = "zero_stage=2";
        ec_test_predict_words(ctx, words, 8, &z2);
        words[7] = "zero_stage=3";
        ec_test_predict_words(ctx, words, 8, &z3);
        assert_int_equal(z2.memory.peak_phase, z3.memory.peak_phase);
        assert_rel(z3.memory.grads_bytes - z2.memory.grads_bytes, elems * (amp ? 2.0 : 4.0), EC_TOL_CLOSED_FORM);
    }
    ec_ctx_free(ctx);
}

/* loss=cross_entropy_fp32: a bf16 model whose code upcasts its logits (torchtune) keeps fp32
 * log-probabilities (4 bytes, not 2), its loss backward makes two fp32 tensors of that size, and
 * the plain loop holds the fp32 copy the model returned.  Llama 3.2 1B, 2 x 512 tokens x 128,256. */
static void test_loss_upcast_in_bf16(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *words[] = {"model=llama-3.2-1b", "task=lm", "gpu=a100-sxm4-80gb", "precision=bf16",
                           "batch_per_gpu=2", "seq_len=512", "trainer=plain", "optimizer=adamw_fused",
                           "loss=cross_entropy"};
    ec_result bf, up;
    ec_test_predict_words(ctx, words, 9, &bf);
    words[8] = "loss=cross_entropy_fp32";
    ec_test_predict_words(ctx, words, 9, &up);
    double n = 2.0 * 512.0 * 128256.0;
    assert_int_equal(up.memory.peak_phase, EC_PEAK_BACKWARD_START);
    assert_rel(up.memory.activations_bytes - bf.memory.activations_bytes, n * (4.0 - 2.0), EC_TOL_CLOSED_FORM);
    assert_rel(up.memory.workspace_bytes - bf.memory.workspace_bytes, 2.0 * n * (4.0 - 2.0) + n * (4.0 - 2.0),
               EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* logits_held: a plain loop that deletes the logits before backward (torchtune's `del logits`)
 * holds none of them (logits_held=0); one that keeps them with a chunked loss does (=1). */
static void test_logits_held(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *words[] = {"model=bert-base", "task=lm", "gpu=a100-sxm4-80gb", "precision=amp_fp16",
                           "batch_per_gpu=32", "seq_len=512", "trainer=plain", "logits_held=0", "loss_chunks=1"};
    ec_result res;
    double n = 32.0 * 512.0 * 30522.0, cublas = eci_const(ctx, EC_C_cublas_workspace_bytes);
    ec_test_predict_words(ctx, words, 9, &res);
    assert_rel(res.memory.workspace_bytes, cublas + 2.0 * n * 4.0, EC_TOL_CLOSED_FORM);
    words[7] = "logits_held=1";
    words[8] = "loss_chunks=8";
    ec_test_predict_words(ctx, words, 9, &res);
    assert_rel(res.memory.workspace_bytes, cublas + 2.0 * n * 4.0 / 8.0 + n * 2.0, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* ResNet-50 NCHW on tensor cores keeps cuDNN's NHWC copies in the cache: more reserved than
 * channels_last, the same needed. */
static void test_resnet_layout_cache(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *words[] = {"model=resnet50", "gpu=a100-sxm4-80gb", "precision=amp_fp16", "batch_per_gpu=128",
                           "memory_format=contiguous"};
    ec_result nchw, nhwc;
    ec_test_predict_words(ctx, words, 5, &nchw);
    words[4] = "memory_format=channels_last";
    ec_test_predict_words(ctx, words, 5, &nhwc);
    assert_rel(nchw.memory.needed_bytes, nhwc.memory.needed_bytes, EC_TOL_CLOSED_FORM);
    assert_true(nchw.memory.reserved_bytes > nhwc.memory.reserved_bytes);
    /* and both above what the allocator's slack alone gives: the workspace is there */
    double fstatic = eci_const(ctx, EC_C_allocator_frac_static);
    assert_true(nhwc.memory.reserved_bytes > nhwc.memory.allocated_bytes * (1.0 + fstatic) * (1 + 1e-9));
    ec_ctx_free(ctx);
}

/* A headroom above the GPU's memory and optimizer_in_bwd with accumulation are refused by key. */
static void test_bad_keys(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result res;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "memory_headroom_gib=-1"), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "memory_headroom_gib"));
    const char *base[] = {"model=bert-base", "gpu=t4", "batch_per_gpu=8"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(ec_config_set_word(ctx, &cfg, base[i]), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "memory_headroom_gib=15.5"), EC_OK);
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "memory_headroom_gib"));
    assert_int_equal(ec_config_set_word(ctx, &cfg, "memory_headroom_gib=1"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "optimizer_in_bwd=1"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "grad_accum=4"), EC_OK);
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "optimizer_in_bwd"));
    /* a release the data does not describe: a warning naming the key, priced as the nearest known */
    assert_int_equal(ec_config_set_word(ctx, &cfg, "optimizer_in_bwd=0"), EC_OK);
    /* release numbers order by their minor as a whole number: 2.14 after 2.13 after 2.9 */
    static const char *const versions[] = {"torch_version=3.1", "torch_version=1.1", "torch_version=2.14",
                                           "torch_version=2.4", "torch_version=2.13", "torch_version=1.9"};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(ec_config_set_word(ctx, &cfg, versions[i]), EC_OK);
        assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
        assert_int_equal(!!(res.warnings & EC_WARN_TORCH_UNKNOWN), i < 3);
        if (i < 3)
            assert_non_null(strstr(res.warning_text, "key 'torch_version'"));
    }
    ec_ctx_free(ctx);
}

/* Gradients kept between steps (zero_grad=zeros or never, or auto before 2.0) sit beside the
 * next step's activations; set_to_none frees them. */
static void test_zero_grad_kept(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *w[] = {"model=bert-base", "gpu=a100-sxm4-80gb", "batch_per_gpu=16", "seq_len=128", "zero_grad=set_to_none"};
    ec_result none, zeros, never, old, old_none;
    ec_test_predict_words(ctx, w, 5, &none);
    w[4] = "zero_grad=zeros";
    ec_test_predict_words(ctx, w, 5, &zeros);
    w[4] = "zero_grad=never";
    ec_test_predict_words(ctx, w, 5, &never);
    w[4] = "torch_version=1.12";
    ec_test_predict_words(ctx, w, 5, &old);
    const char *w2[] = {"model=bert-base", "gpu=a100-sxm4-80gb", "batch_per_gpu=16", "seq_len=128",
                        "zero_grad=set_to_none", "torch_version=1.12"};
    ec_test_predict_words(ctx, w2, 6, &old_none);
    assert_int_equal(none.memory.peak_phase, EC_PEAK_BACKWARD_START);
    assert_int_equal(zeros.memory.peak_phase, EC_PEAK_ACCUMULATE);
    assert_int_equal(never.memory.peak_phase, EC_PEAK_ACCUMULATE);
    assert_int_equal(old.memory.peak_phase, EC_PEAK_ACCUMULATE);
    assert_int_equal(old_none.memory.peak_phase, EC_PEAK_BACKWARD_START);
    /* 110M fp32 gradients (> 400 MB) more, and the fill's kernels only with zeros */
    assert_true(zeros.memory.allocated_bytes - none.memory.allocated_bytes > 4.0e8);
    assert_rel(never.memory.allocated_bytes, zeros.memory.allocated_bytes, EC_TOL_EXACT);
    assert_true(zeros.kernels_per_step > never.kernels_per_step);
    assert_true(never.kernels_per_step == none.kernels_per_step);
    ec_ctx_free(ctx);
}

static void test_phase_names(void **state)
{
    (void)state;
    assert_string_equal(ec_peak_phase_name(EC_PEAK_BACKWARD_START), "backward start");
    assert_string_equal(ec_peak_phase_name(EC_PEAK_OPTIMIZER), "optimizer step");
    assert_string_equal(ec_peak_phase_name(-1), "unknown");
    assert_string_equal(ec_peak_phase_name(99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loss_transient),     cmocka_unit_test(test_conv_cache),
        cmocka_unit_test(test_context_by_version), cmocka_unit_test(test_optimizer_in_bwd),
        cmocka_unit_test(test_headroom),           cmocka_unit_test(test_bert_mlm_loss_in_fp32),
        cmocka_unit_test(test_resnet_layout_cache), cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_zero_grad_kept),     cmocka_unit_test(test_phase_names),
        cmocka_unit_test(test_albert_dropout),     cmocka_unit_test(test_adamw_loop_temporaries),
        cmocka_unit_test(test_zero3_gradient_bucket), cmocka_unit_test(test_loss_upcast_in_bf16),
        cmocka_unit_test(test_logits_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
