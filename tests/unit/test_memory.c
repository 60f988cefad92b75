/*
 * test_memory.c: the peak-memory estimate of core/src/model/memory.c.  Bytes per parameter by
 * precision and optimizer (modeling.md 2.1 table), the DDP bucket copy, checkpointing, the
 * composition of the peak (DESIGN 3.4):
 *   persistent = weights + optimizer states
 *   backward peak  = cast cache + max(activations, gradients) + workspace
 *   optimizer peak = gradients + step temporaries (foreach AdamW's denom)
 *   peak = context + (persistent + max(backward, optimizer)) x (1 + allocator slack)
 * on a synthetic workload with high-entropy sizes, then invariants on real configurations:
 * the reported parts sum to peak_bytes, fits and at_edge against needed + headroom (issue 40;
 * test_memory_alloc.c tests each of its terms), peak is monotone in the batch, checkpointing
 * never raises memory.
 */
#include "ec_test.h"
#include "internal.h"
#include "catalog/consts.h"
#include "model/memory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- a synthetic workload --------------------------------------------------------------- */

enum { ACT_HEAVY = 0, PARAM_HEAVY = 1 };

static const double P = 37123457.0;   /* parameters */
static const double PM = 29876543.0;  /* of which matmul weights (the autocast cast cache) */
static const int LAYERS = 6;

/* ACT_HEAVY: head 1.1e8 bytes + 6 layers x (2.3e8 + 0.7e8) = 1.91e9 bytes of activations,
 * far above the 4P = 1.48e8 bytes of gradients.  PARAM_HEAVY: 1.1e5 + 6 x 3.0e5 bytes. */
static void synthetic(eci_workload *wl, int kind)
{
    static eci_op ops[3];
    static eci_block blocks[1];
    double scale = kind == ACT_HEAVY ? 1.0 : 1e-3;
    memset(wl, 0, sizeof *wl);
    memset(ops, 0, sizeof ops);
    wl->ops = ops;
    wl->cap_ops = 3;
    wl->blocks = blocks;
    wl->cap_blocks = 1;
    wl->params = P;
    wl->trainable_params = P; /* every parameter trained (no LoRA) */
    wl->matmul_params = PM;
    wl->n_ops = 3;
    wl->ops[0].name = "head";
    wl->ops[0].block = -1;
    wl->ops[0].saved_bytes = 1.1e8 * scale;
    wl->ops[1].name = "layer_a";
    wl->ops[1].saved_bytes = 2.3e8 * scale;
    wl->ops[2].name = "layer_b";
    wl->ops[2].saved_bytes = 0.7e8 * scale;
    wl->saved_other_bytes = wl->ops[0].saved_bytes; /* what workload.c sums from the ops */
    wl->n_blocks = 1;
    blocks[0] = (eci_block){.begin = 1, .end = 3, .reps = LAYERS, .checkpoint = 1, .input_bytes = 1.3e7 * scale,
                            .saved_bytes = wl->ops[1].saved_bytes + wl->ops[2].saved_bytes};
}

static double acts_of(int kind)
{
    double scale = kind == ACT_HEAVY ? 1.0 : 1e-3;
    /* A = head + L x (layer ops) */
    return (1.1e8 + LAYERS * (2.3e8 + 0.7e8)) * scale;
}

static eci_mem_in input(const eci_workload *wl, int precision, int optimizer)
{
    eci_mem_in in = {.wl = wl, .precision = precision, .optimizer = optimizer, .num_gpus = 1,
                     .capacity_bytes = 16106127360.0, .allocator_scale = 1.0};
    return in;
}

/* The closed form of the peak, written out independently of memory.c. */
static double expected_peak(const ec_ctx *ctx, double w, double g, double o, double temp, double cast, double acts,
                            int num_gpus, int dynamic)
{
    double ws = eci_const(ctx, EC_C_cublas_workspace_bytes);
    double context = eci_const(ctx, EC_C_cuda_context_bytes) +
                     (num_gpus > 1 ? eci_const(ctx, EC_C_nccl_context_bytes) : 0);
    double frac = eci_const(ctx, dynamic ? EC_C_allocator_frac_dynamic : EC_C_allocator_frac_static);
    double G = P * g;
    double bwd = cast + (acts > G ? acts : G) + ws;
    double opt = G + P * temp;
    double allocated = P * w + P * o + (bwd > opt ? bwd : opt);
    return context + allocated * (1.0 + frac);
}

static double parts_sum(const ec_memory *m)
{
    return m->weights_bytes + m->grads_bytes + m->optimizer_bytes + m->cast_cache_bytes + m->activations_bytes +
           m->workspace_bytes + m->context_bytes + m->allocator_bytes;
}

/* ---- bytes per parameter (modeling.md 2.1) ----------------------------------------------- */

static void test_fp32_adamw(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory m;
    synthetic(&wl, ACT_HEAVY);
    eci_mem_in in = input(&wl, EC_PREC_FP32, EC_OPT_ADAMW);
    eci_memory_estimate(ctx, &in, &m);
    /* fp32 AdamW: weights 4P, exp_avg + exp_avg_sq 8P */
    assert_rel(m.weights_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);
    assert_rel(m.optimizer_bytes, 8.0 * P, EC_TOL_CLOSED_FORM);
    assert_true(m.cast_cache_bytes == 0);
    /* activations at the backward peak: A = 1.1e8 + 6 x 3.0e8 */
    assert_rel(m.activations_bytes, acts_of(ACT_HEAVY), EC_TOL_CLOSED_FORM);
    /* A > 4P: the gradients are not yet there at the peak (A(1-t) + G t peaks at t = 0) */
    assert_true(m.grads_bytes == 0);
    /* workspace = cuBLAS workspace; context = CUDA context (one GPU) */
    assert_rel(m.workspace_bytes, eci_const(ctx, EC_C_cublas_workspace_bytes), EC_TOL_EXACT);
    assert_rel(m.context_bytes, eci_const(ctx, EC_C_cuda_context_bytes), EC_TOL_EXACT);
    /* peak = ctx + (4P + 8P + A + ws)(1 + frac_static) */
    assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 8, 4, 0, acts_of(ACT_HEAVY), 1, 0), EC_TOL_CLOSED_FORM);

    /* Parameter-heavy: the optimizer step is the peak, with foreach AdamW's denom (+4P):
     * reported optimizer = 8P + 4P, gradients 4P, no activations. */
    synthetic(&wl, PARAM_HEAVY);
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.optimizer_bytes, 12.0 * P, EC_TOL_CLOSED_FORM);
    assert_rel(m.grads_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);
    assert_true(m.activations_bytes == 0 && m.workspace_bytes == 0 && m.cast_cache_bytes == 0);
    /* peak = ctx + (4P + 8P + 4P + 4P)(1 + frac) */
    assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 8, 4, 0, acts_of(PARAM_HEAVY), 1, 0), EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* AMP keeps fp32 weights, grads and states (16 B/param) and adds a 2-byte cast of every
 * matmul weight during forward/backward (18 B/param at the peak, HF's figure). */
static void test_amp_cast_cache(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory m;
    synthetic(&wl, ACT_HEAVY);
    static const int amp[] = {EC_PREC_AMP_FP16, EC_PREC_AMP_BF16};
    for (int i = 0; i < 2; i++) {
        eci_mem_in in = input(&wl, amp[i], EC_OPT_ADAMW);
        eci_memory_estimate(ctx, &in, &m);
        /* weights 4P, optimizer 8P, cast cache 2·P_matmul */
        assert_rel(m.weights_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);
        assert_rel(m.optimizer_bytes, 8.0 * P, EC_TOL_CLOSED_FORM);
        assert_rel(m.cast_cache_bytes, 2.0 * PM, EC_TOL_CLOSED_FORM);
        /* peak = ctx + (4P + 8P + 2P_m + A + ws)(1 + frac) */
        assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 8, 4, 2.0 * PM, acts_of(ACT_HEAVY), 1, 0),
                   EC_TOL_CLOSED_FORM);
    }
    /* tf32 has no cast cache: fp32 tensors. */
    eci_mem_in in = input(&wl, EC_PREC_TF32, EC_OPT_ADAMW);
    eci_memory_estimate(ctx, &in, &m);
    assert_true(m.cast_cache_bytes == 0);
    ec_ctx_free(ctx);
}

/* Pure bf16/fp16: parameters, gradients and states in 2 bytes: half of fp32 everywhere. */
static void test_pure16_halves(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory m32, m16;
    synthetic(&wl, PARAM_HEAVY);
    eci_mem_in in = input(&wl, EC_PREC_FP32, EC_OPT_ADAMW);
    eci_memory_estimate(ctx, &in, &m32);
    static const int pure[] = {EC_PREC_BF16, EC_PREC_FP16};
    for (int i = 0; i < 2; i++) {
        in = input(&wl, pure[i], EC_OPT_ADAMW);
        eci_memory_estimate(ctx, &in, &m16);
        /* weights 2P, grads 2P, optimizer 4P + denom 2P (optimizer-step peak) */
        assert_rel(m16.weights_bytes, 2.0 * P, EC_TOL_CLOSED_FORM);
        assert_rel(m16.grads_bytes, 2.0 * P, EC_TOL_CLOSED_FORM);
        assert_rel(m16.optimizer_bytes, 6.0 * P, EC_TOL_CLOSED_FORM);
        assert_true(m16.cast_cache_bytes == 0);
        assert_rel(m16.weights_bytes, 0.5 * m32.weights_bytes, EC_TOL_CLOSED_FORM);
        assert_rel(m16.grads_bytes, 0.5 * m32.grads_bytes, EC_TOL_CLOSED_FORM);
        assert_rel(m16.optimizer_bytes, 0.5 * m32.optimizer_bytes, EC_TOL_CLOSED_FORM);
        assert_rel(m16.peak_bytes, expected_peak(ctx, 2, 2, 4, 2, 0, acts_of(PARAM_HEAVY), 1, 0),
                   EC_TOL_CLOSED_FORM);
    }
    ec_ctx_free(ctx);
}

/* SGD with momentum: one buffer, 4P, and no step temporary; fused AdamW: 8P, no denom. */
static void test_optimizers(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory m;
    synthetic(&wl, PARAM_HEAVY);
    eci_mem_in in = input(&wl, EC_PREC_FP32, EC_OPT_SGD);
    eci_memory_estimate(ctx, &in, &m);
    /* SGD: optimizer 4P */
    assert_rel(m.optimizer_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);
    /* peak = ctx + (4P + 4P + max(G + ws, G))(1 + frac): the backward peak wins by ws */
    assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 4, 0, 0, acts_of(PARAM_HEAVY), 1, 0), EC_TOL_CLOSED_FORM);
    assert_rel(m.grads_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);

    in = input(&wl, EC_PREC_FP32, EC_OPT_ADAMW_FUSED);
    eci_memory_estimate(ctx, &in, &m);
    /* fused AdamW: 8P, no denom */
    assert_rel(m.optimizer_bytes, 8.0 * P, EC_TOL_CLOSED_FORM);
    assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 8, 0, 0, acts_of(PARAM_HEAVY), 1, 0), EC_TOL_CLOSED_FORM);

    /* Adam, foreach AdamW and LAMB keep two states: 8P (LAMB has no denom temporary). */
    static const int two_states[] = {EC_OPT_ADAM, EC_OPT_ADAMW_FOREACH, EC_OPT_LAMB};
    static const double temp[] = {4, 4, 0};
    for (int i = 0; i < 3; i++) {
        in = input(&wl, EC_PREC_FP32, two_states[i]);
        eci_memory_estimate(ctx, &in, &m);
        assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 8, temp[i], 0, acts_of(PARAM_HEAVY), 1, 0),
                   EC_TOL_CLOSED_FORM);
    }
    ec_ctx_free(ctx);
}

/* DDP keeps a bucket copy of every gradient: gradients 2 x 4P; NCCL adds its buffers.
 * PARAM_HEAVY: the optimizer-step peak G + bucket copy + denom wins. */
static void test_ddp_doubles_grads(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory single, ddp;
    synthetic(&wl, PARAM_HEAVY);
    eci_mem_in in = input(&wl, EC_PREC_FP32, EC_OPT_ADAMW);
    eci_memory_estimate(ctx, &in, &single);
    in.ddp_bucket_copy = 1;
    in.num_gpus = 6;
    eci_memory_estimate(ctx, &in, &ddp);
    /* grads = 2 x 4P */
    assert_rel(single.grads_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);
    assert_rel(ddp.grads_bytes, 8.0 * P, EC_TOL_CLOSED_FORM);
    /* context = CUDA + NCCL */
    assert_rel(ddp.context_bytes,
               eci_const(ctx, EC_C_cuda_context_bytes) + eci_const(ctx, EC_C_nccl_context_bytes), EC_TOL_EXACT);
    /* peak = CUDA + NCCL + (4P + 8P + 8P + 4P)(1 + frac) */
    double peak = eci_const(ctx, EC_C_cuda_context_bytes) + eci_const(ctx, EC_C_nccl_context_bytes) +
                  (4.0 + 8.0 + 8.0 + 4.0) * P * (1.0 + eci_const(ctx, EC_C_allocator_frac_static));
    assert_rel(ddp.peak_bytes, peak, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* The bucket copy is persistent: it adds 4P beside the activations too, where the backward
 * peak is max(A, G) and the gradients alone would hide under A.  gradient_as_bucket_view
 * (ddp_bucket_copy = 0) leaves only the NCCL buffers:
 *   peak(ddp) - peak(view) = 4P (1 + frac). */
static void test_ddp_bucket_copy_beside_activations(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory view, copy;
    synthetic(&wl, ACT_HEAVY);
    eci_mem_in in = input(&wl, EC_PREC_FP32, EC_OPT_ADAMW);
    in.num_gpus = 2;
    eci_memory_estimate(ctx, &in, &view);
    assert_rel(view.peak_bytes, expected_peak(ctx, 4, 4, 8, 4, 0, acts_of(ACT_HEAVY), 2, 0), EC_TOL_CLOSED_FORM);
    in.ddp_bucket_copy = 1;
    eci_memory_estimate(ctx, &in, &copy);
    double frac = eci_const(ctx, EC_C_allocator_frac_static);
    assert_rel(copy.peak_bytes - view.peak_bytes, 4.0 * P * (1.0 + frac), EC_TOL_CLOSED_FORM);
    /* reported at the peak: the activations and the bucket copy */
    assert_rel(copy.activations_bytes, acts_of(ACT_HEAVY), EC_TOL_CLOSED_FORM);
    assert_rel(copy.grads_bytes, 4.0 * P, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* Checkpointing keeps each layer's input plus one layer's activations:
 *   A_ckpt = head + L·input + layer; with L = 1 it changes nothing. */
static void test_checkpointing_closed_form(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory m;
    synthetic(&wl, ACT_HEAVY);
    eci_mem_in in = input(&wl, EC_PREC_FP32, EC_OPT_ADAMW);
    in.checkpointing = 1;
    eci_memory_estimate(ctx, &in, &m);
    /* A_ckpt = 1.1e8 + 6 x 1.3e7 + (2.3e8 + 0.7e8) = 4.88e8 */
    double a_ckpt = 1.1e8 + 6.0 * 1.3e7 + 3.0e8;
    assert_rel(m.activations_bytes, a_ckpt, EC_TOL_CLOSED_FORM);
    assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 8, 4, 0, a_ckpt, 1, 0), EC_TOL_CLOSED_FORM);
    /* A block that is not a checkpointing unit (ResNet's identical bottlenecks) keeps
     * everything: A = head + L x layer. */
    wl.blocks[0].checkpoint = 0;
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.activations_bytes, acts_of(ACT_HEAVY), EC_TOL_CLOSED_FORM);
    /* One repetition: nothing to checkpoint. */
    wl.blocks[0].checkpoint = 1;
    wl.blocks[0].reps = 1;
    eci_memory_estimate(ctx, &in, &m);
    double a1 = 1.1e8 + 3.0e8;
    assert_rel(m.activations_bytes, a1, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* Dynamic shapes fragment the caching allocator more; allocator_scale multiplies the slack. */
static void test_allocator_slack(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static eci_workload wl;
    ec_memory m;
    synthetic(&wl, ACT_HEAVY);
    eci_mem_in in = input(&wl, EC_PREC_AMP_BF16, EC_OPT_ADAMW);
    in.dynamic_shapes = 1;
    eci_memory_estimate(ctx, &in, &m);
    assert_rel(m.peak_bytes, expected_peak(ctx, 4, 4, 8, 4, 2.0 * PM, acts_of(ACT_HEAVY), 1, 1),
               EC_TOL_CLOSED_FORM);
    /* allocator = (weights + optimizer + transient) x frac_dynamic x 1.7 */
    in.allocator_scale = 1.7;
    eci_memory_estimate(ctx, &in, &m);
    double allocated = 4.0 * P + 8.0 * P + 2.0 * PM + acts_of(ACT_HEAVY) + eci_const(ctx, EC_C_cublas_workspace_bytes);
    assert_rel(m.allocator_bytes, allocated * eci_const(ctx, EC_C_allocator_frac_dynamic) * 1.7, EC_TOL_CLOSED_FORM);
    /* extra workspace (DataParallel's gathered outputs) adds to workspace and peak. */
    in.allocator_scale = 1.0;
    in.dynamic_shapes = 0;
    in.extra_workspace_bytes = 3.7e8;
    ec_memory m2;
    eci_memory_estimate(ctx, &in, &m2);
    assert_rel(m2.workspace_bytes, eci_const(ctx, EC_C_cublas_workspace_bytes) + 3.7e8, EC_TOL_EXACT);
    assert_rel(m2.peak_bytes - expected_peak(ctx, 4, 4, 8, 4, 2.0 * PM, acts_of(ACT_HEAVY), 1, 0),
               3.7e8 * (1.0 + eci_const(ctx, EC_C_allocator_frac_static)), EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* ---- invariants on real configurations ---------------------------------------------------- */

typedef struct case_t {
    const char *model, *gpu, *precision, *optimizer;
    int seq;
    int num_gpus;
} case_t;

static const case_t CASES[] = {
    {"bert-base", "a100-sxm4-80gb", "amp_fp16", "adamw", 128, 1},
    {"bert-large", "v100-sxm2-16gb", "fp32", "adamw", 384, 1},
    {"gpt2", "t4", "amp_fp16", "adamw_fused", 1024, 1},
    {"gpt2-medium", "h100-sxm5-80gb", "bf16", "sgd", 512, 8},
    {"roberta-base", "a10g", "amp_bf16", "lamb", 256, 1},
    {"distilbert-base", "l4", "tf32", "adam", 200, 4},
    {"resnet50", "v100-sxm2-32gb", "amp_fp16", "sgd", 0, 1},
    {"vit-b16", "rtx4090", "amp_bf16", "adamw", 0, 1},
};
#define N_CASES (sizeof CASES / sizeof CASES[0])

static void config_of(ec_ctx *ctx, const case_t *c, int batch, int ckpt, ec_config *cfg)
{
    char num[32];
    ec_config_init(cfg);
    assert_int_equal(ec_config_set(ctx, cfg, "model", c->model), EC_OK);
    assert_int_equal(ec_config_set(ctx, cfg, "gpu", c->gpu), EC_OK);
    assert_int_equal(ec_config_set(ctx, cfg, "precision", c->precision), EC_OK);
    assert_int_equal(ec_config_set(ctx, cfg, "optimizer", c->optimizer), EC_OK);
    cfg->seq_len = c->seq;
    cfg->num_gpus = c->num_gpus;
    snprintf(num, sizeof num, "%d", batch);
    assert_int_equal(ec_config_set(ctx, cfg, "batch_per_gpu", num), EC_OK);
    cfg->checkpointing = ckpt;
}

static void predict_or_fail(ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    int rc = ec_predict(ctx, cfg, res);
    if (rc != EC_OK)
        fail_msg("ec_predict(%s on %s, batch %d): %s", cfg->model, cfg->gpu, cfg->batch_per_gpu, ec_ctx_errmsg(ctx));
}

/* The readings (docs/memory.md): allocated = the tensors (parts without context and allocator
 * slack), reserved = allocated + slack, nvml = reserved + context = the sum of the parts,
 * peak_bytes = nvml; needed = allocated x (1 + allocator_frac_min) + context; when the step can
 * run (needed <= capacity) allocated <= reserved <= capacity - context; fits <=> needed +
 * headroom <= capacity, at_edge <=> it runs but does not fit, and the warnings follow. */
static void test_parts_sum_and_fits(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const int batches[] = {1, 3, 17, 61, 250};
    int seen_fit = 0, seen_oom = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        const eci_gpu *g = eci_hw_find(ctx, CASES[i].gpu);
        assert_non_null(g);
        for (int j = 0; j < 5; j++)
            for (int ckpt = 0; ckpt < 2; ckpt++) {
                ec_config cfg;
                ec_result res;
                config_of(ctx, &CASES[i], batches[j], ckpt, &cfg);
                predict_or_fail(ctx, &cfg, &res);
                const ec_memory *m = &res.memory;
                double sum = parts_sum(m);
                assert_rel(m->allocated_bytes, sum - m->context_bytes - m->allocator_bytes, EC_TOL_CLOSED_FORM);
                assert_rel(m->reserved_bytes, m->allocated_bytes + m->allocator_bytes, EC_TOL_CLOSED_FORM);
                assert_rel(m->nvml_bytes, sum, EC_TOL_CLOSED_FORM);
                assert_rel(m->peak_bytes, m->nvml_bytes, EC_TOL_EXACT);
                assert_true(m->allocated_bytes <= m->reserved_bytes);
                assert_rel(m->capacity_bytes, g->memory_bytes, EC_TOL_EXACT);
                double needed = m->allocated_bytes * (1.0 + eci_const(ctx, EC_C_allocator_frac_min)) + m->context_bytes;
                assert_rel(m->needed_bytes, needed, EC_TOL_CLOSED_FORM);
                int runs = needed <= m->capacity_bytes;
                if (runs)
                    assert_true(m->nvml_bytes <= m->capacity_bytes * (1.0 + EC_TOL_CLOSED_FORM));
                assert_int_equal(m->fits, needed + m->headroom_bytes <= m->capacity_bytes);
                assert_int_equal(m->at_edge, runs && !m->fits);
                assert_int_equal(!!(res.warnings & EC_WARN_DOES_NOT_FIT), !runs);
                assert_int_equal(!!(res.warnings & EC_WARN_MEMORY_EDGE), m->at_edge);
                seen_fit |= m->fits;
                seen_oom |= !runs;
                assert_true(m->weights_bytes > 0 && m->context_bytes > 0 && m->allocator_bytes > 0);
            }
    }
    /* Both branches of fits were exercised. */
    assert_true(seen_fit && seen_oom);
    ec_ctx_free(ctx);
}

/* Several GPUs with the peak above near_capacity_warn_frac of capacity (and fitting) warn;
 * one GPU, or room to spare, does not.  Swept over batches up to the largest that fits:
 *   warn <=> num_gpus > 1 && frac x capacity < peak <= capacity */
static void test_near_capacity_warning(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "model=bert-base"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "gpu=v100-sxm2-16gb"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "seq_len=384"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "num_gpus=4"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "batch_per_gpu=1"), EC_OK);
    int max_b = 0;
    assert_int_equal(ec_max_batch(ctx, &cfg, 4096, &max_b), EC_OK);
    assert_true(max_b > 4);
    double frac = eci_const(ctx, EC_C_near_capacity_warn_frac);
    int seen_near = 0, seen_room = 0;
    for (int gpus = 1; gpus <= 4; gpus += 3)
        for (int b = 1; b <= max_b + 1; b += b < max_b - 3 ? (max_b + 7) / 8 : 1) {
            ec_result res;
            cfg.num_gpus = gpus;
            cfg.batch_per_gpu = b;
            predict_or_fail(ctx, &cfg, &res);
            const ec_memory *m = &res.memory;
            int want = gpus > 1 && m->fits && m->peak_bytes > frac * m->capacity_bytes;
            assert_int_equal(!!(res.warnings & EC_WARN_NEAR_CAPACITY), want);
            seen_near |= want;
            seen_room |= gpus > 1 && m->peak_bytes <= frac * m->capacity_bytes;
        }
    /* the largest batch that fits 4 GPUs warns; batch 1 has room */
    assert_true(seen_near && seen_room);
    ec_ctx_free(ctx);
}

/* A larger batch never needs less memory; checkpointing never needs more, and needs less
 * activation memory for every multi-layer model. */
static void test_monotone_batch_and_ckpt(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    for (size_t i = 0; i < N_CASES; i++) {
        double prev = 0;
        for (int b = 1; b <= 72; b += (b < 12 ? 1 : 7)) {
            ec_config cfg;
            ec_result plain, ckpt;
            config_of(ctx, &CASES[i], b, 0, &cfg);
            predict_or_fail(ctx, &cfg, &plain);
            if (plain.memory.peak_bytes < prev)
                fail_msg("%s: peak at batch %d (%.0f) below the previous batch's (%.0f)", CASES[i].model, b,
                         plain.memory.peak_bytes, prev);
            prev = plain.memory.peak_bytes;
            cfg.checkpointing = 1;
            predict_or_fail(ctx, &cfg, &ckpt);
            if (ckpt.memory.peak_bytes > plain.memory.peak_bytes)
                fail_msg("%s batch %d: checkpointing raised the peak (%.0f > %.0f)", CASES[i].model, b,
                         ckpt.memory.peak_bytes, plain.memory.peak_bytes);
            assert_true(ckpt.memory.activations_bytes <= plain.memory.activations_bytes);
        }
    }
    /* Strictly less for a transformer whose activations dominate: BERT-large, s = 384, b = 24. */
    ec_config cfg;
    ec_result plain, ckpt;
    config_of(ctx, &CASES[1], 24, 0, &cfg);
    predict_or_fail(ctx, &cfg, &plain);
    cfg.checkpointing = 1;
    predict_or_fail(ctx, &cfg, &ckpt);
    assert_true(plain.memory.activations_bytes > 0);
    assert_true(ckpt.memory.activations_bytes < 0.5 * plain.memory.activations_bytes);
    assert_true(ckpt.memory.peak_bytes < plain.memory.peak_bytes);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp32_adamw),
        cmocka_unit_test(test_amp_cast_cache),
        cmocka_unit_test(test_pure16_halves),
        cmocka_unit_test(test_optimizers),
        cmocka_unit_test(test_ddp_doubles_grads),
        cmocka_unit_test(test_ddp_bucket_copy_beside_activations),
        cmocka_unit_test(test_checkpointing_closed_form),
        cmocka_unit_test(test_allocator_slack),
        cmocka_unit_test(test_parts_sum_and_fits),
        cmocka_unit_test(test_near_capacity_warning),
        cmocka_unit_test(test_monotone_batch_and_ckpt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
