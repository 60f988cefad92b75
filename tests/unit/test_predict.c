/*
 * test_predict.c: ec_predict and ec_max_batch (core/src/sim/predict.c).  The seed-000 check of
 * the issue (BERT-base on an A16), regimes that must come out CPU-bound, input-bound and
 * compute-bound, gradient checkpointing and accumulation, DDP (the communication model itself
 * is in test_comm.c), determinism, max_batch's contract, and every error return on purpose.
 */
#include "ec_test.h"
#include "internal.h"
#include "model/compute.h"
#include "catalog/consts.h"
#include "sim/predict.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

/* A config from CLI words: "model=bert-base gpu=a16 batch_per_gpu=16". */
/* Invariants every result must satisfy. */
static void check_result(const ec_config *cfg, const ec_result *r)
{
    assert_true(r->step_s > 0 && isfinite(r->step_s));
    /* samples/s = batch x grad_accum x GPUs / step */
    assert_rel(r->samples_per_s, (double)cfg->batch_per_gpu * cfg->grad_accum * cfg->num_gpus / r->step_s,
               EC_TOL_CLOSED_FORM);
    assert_true(r->gpu_util_frac > 0 && r->gpu_util_frac <= 1.0);
    assert_true(r->mfu_frac > 0 && r->mfu_frac < 1.0);
    /* The GPU cannot be busy longer than the step. */
    assert_true(r->gpu_busy_s <= r->step_s * (1 + EC_TOL_CLOSED_FORM));
    assert_true(r->breakdown.forward_s > 0 && r->breakdown.backward_s > r->breakdown.forward_s);
    assert_true(r->kernels_per_step > 0);
}

/* ---- the seed-000 check --------------------------------------------------------- */

/* A measured run: BERT-base fine-tuning (classification), one A16 GPU, fp32, batch 16,
 * seq 256: 40,000 samples in 45 min -> 40000 / (45 x 60 s) = 14.81 samples/s. */
static void test_seed000_bert_a16(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result res;
    ec_test_config(ctx, &cfg, "model=bert-base task=classify gpu=a16 precision=fp32 batch_per_gpu=16 seq_len=256 "
                   "dataset_samples=40000");
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    check_result(&cfg, &res);
    double measured = 40000.0 / (45.0 * 60.0);
    /* |predicted - 14.81| <= 20% */
    assert_rel(res.samples_per_s, measured, 0.20);
    assert_int_equal(res.bottleneck, EC_BOTTLENECK_COMPUTE);
    assert_string_equal(ec_bottleneck_name(res.bottleneck), "compute");
    /* steps per epoch = ceil(40000 / 16) = 2500; epoch = 2500 x step (no workers, no eval);
     * step_s is the simulated mean after the first step, whose loading time is its own draw */
    assert_rel(res.steps_per_epoch, 2500.0, EC_TOL_EXACT);
    assert_rel(res.epoch_s, 2500.0 * res.step_s, EC_TOL_SIMULATION);
    assert_rel(res.epoch_s, 45.0 * 60.0, 0.20);
    /* The A16 row has no measured GEMM efficiency: flagged. */
    assert_true(res.warnings & EC_WARN_MODEL_DEFAULTED);
    /* fp32 on the A16's CUDA cores: model FLOPs = 3 x forward, MFU against the fp32 peak. */
    assert_rel(res.mfu_frac, res.flop_per_step / (res.step_s * 4.5e12), EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* ---- regimes ------------------------------------------------------------------------------ */


/* The trend behind it: the host's share of the step grows as the batch shrinks, and a large
 * batch is compute-bound with the GPU nearly always busy. */
static void test_overhead_grows_as_batch_shrinks(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result small, large;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=1 seq_len=32");
    assert_int_equal(ec_predict(ctx, &cfg, &small), EC_OK);
    check_result(&cfg, &small);
    ec_test_config(ctx, &cfg, "model=bert-base gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=64 seq_len=512");
    assert_int_equal(ec_predict(ctx, &cfg, &large), EC_OK);
    check_result(&cfg, &large);
    assert_int_equal(large.bottleneck, EC_BOTTLENECK_COMPUTE);
    assert_true(large.gpu_util_frac > 0.9);
    assert_true(small.breakdown.cpu_overhead_s / small.step_s > large.breakdown.cpu_overhead_s / large.step_s);
    assert_true(small.gpu_util_frac < large.gpu_util_frac);
    /* At batch 1 the same number of kernels is issued as at batch 64 (shapes, not counts, change). */
    assert_rel(small.kernels_per_step, large.kernels_per_step, EC_TOL_EXACT);
    /* A GPT-2 step of 8 tokens on an H200 from a 2-vCPU notebook is CPU-bound. */
    ec_test_config(ctx, &cfg, "model=gpt2 gpu=h200-sxm-141gb precision=bf16 batch_per_gpu=1 seq_len=8 "
                   "optimizer=adamw_fused host=colab");
    assert_int_equal(ec_predict(ctx, &cfg, &small), EC_OK);
    assert_int_equal(small.bottleneck, EC_BOTTLENECK_CPU);
    assert_string_equal(ec_bottleneck_name(small.bottleneck), "cpu");
    assert_true(small.gpu_util_frac < 0.6);
    ec_ctx_free(ctx);
}

/* No DataLoader workers and a slow Python tokenizer run in the training loop: the GPU
 * waits for the input. */
static void test_input_bound(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result res, fast;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=32 "
                   "num_workers=0 tokenize=on_the_fly tokenizer=python");
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    check_result(&cfg, &res);
    assert_int_equal(res.bottleneck, EC_BOTTLENECK_INPUT);
    assert_true(res.breakdown.loader_s > res.gpu_busy_s);
    /* Tokenizing up front removes the stall. */
    ec_test_predict(ctx, "model=bert-base gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=32 num_workers=0", &fast);
    assert_true(fast.bottleneck != EC_BOTTLENECK_INPUT);
    assert_true(fast.step_s < res.step_s);
    /* synthetic data costs no input time at all */
    ec_test_predict(ctx, "model=bert-base gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=32 num_workers=0 "
                    "tokenize=on_the_fly tokenizer=python data=synthetic", &fast);
    assert_true(fast.breakdown.loader_s == 0);
    ec_ctx_free(ctx);
}

/* Checkpointing re-runs each layer's forward in backward: slower step, less activation memory. */
static void test_checkpointing(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result plain, ckpt;
    ec_test_predict(ctx, "model=bert-large gpu=v100-sxm2-32gb precision=fp32 batch_per_gpu=12 seq_len=384", &plain);
    ec_test_predict(ctx, "model=bert-large gpu=v100-sxm2-32gb precision=fp32 batch_per_gpu=12 seq_len=384 "
                    "checkpointing=1", &ckpt);
    assert_true(ckpt.step_s > plain.step_s);
    assert_true(ckpt.memory.activations_bytes < plain.memory.activations_bytes);
    /* The recompute is backward time, at most one more forward and, with 24 layers dominating,
     * most of one: forward < Δbackward... Δbackward <= forward. */
    double extra = ckpt.breakdown.backward_s - plain.breakdown.backward_s;
    assert_true(extra > 0.8 * plain.breakdown.forward_s);
    assert_true(extra <= plain.breakdown.forward_s * (1 + EC_TOL_CLOSED_FORM));
    /* the forward itself does not change */
    assert_rel(ckpt.breakdown.forward_s, plain.breakdown.forward_s, EC_TOL_CLOSED_FORM);
    /* Compute-bound: the step grows by about a third (HF: ~20-35%), not by 2x. */
    assert_true(ckpt.step_s / plain.step_s > 1.15 && ckpt.step_s / plain.step_s < 1.5);
    ec_ctx_free(ctx);
}

/* Accumulating 4 micro-batches of 8 amortises the optimizer and per-step overhead: its
 * throughput lies between batch 8 and batch 32 single steps. */
static void test_grad_accum(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result b8, b32, ga4;
    ec_test_predict(ctx, "model=roberta-base gpu=a10g precision=amp_bf16 batch_per_gpu=8 seq_len=256", &b8);
    ec_test_predict(ctx, "model=roberta-base gpu=a10g precision=amp_bf16 batch_per_gpu=32 seq_len=256", &b32);
    ec_test_config(ctx, &cfg, "model=roberta-base gpu=a10g precision=amp_bf16 batch_per_gpu=8 seq_len=256 "
                   "grad_accum=4");
    assert_int_equal(ec_predict(ctx, &cfg, &ga4), EC_OK);
    assert_true(ga4.samples_per_s > b8.samples_per_s);
    assert_true(ga4.samples_per_s < b32.samples_per_s);
    /* samples/s = 8 x 4 / step */
    assert_rel(ga4.samples_per_s, 32.0 / ga4.step_s, EC_TOL_CLOSED_FORM);
    /* 4 micro-steps of forward: forward = 4 x batch 8's */
    assert_rel(ga4.breakdown.forward_s, 4.0 * b8.breakdown.forward_s, EC_TOL_CLOSED_FORM);
    /* model FLOPs per optimizer step = 4 x (3 x forward FLOPs) */
    assert_rel(ga4.flop_per_step, 4.0 * b8.flop_per_step, EC_TOL_CLOSED_FORM);
    /* one optimizer step per optimizer step, whatever grad_accum */
    assert_rel(ga4.breakdown.optimizer_s, b8.breakdown.optimizer_s, EC_TOL_CLOSED_FORM);
    /* memory is that of batch 8, not 32, plus the gradients the earlier micro-steps leave
     * allocated through the later forwards */
    assert_true(ga4.memory.allocated_bytes > b8.memory.allocated_bytes);
    assert_true(ga4.memory.activations_bytes == b8.memory.activations_bytes ||
                b8.memory.activations_bytes == 0);
    assert_true(ga4.memory.activations_bytes > 0 && ga4.memory.grads_bytes > 0);
    /* Micro-steps after the first cost the same (each accumulates into .grad and syncs):
     * step(ga=7) - step(ga=5) = 2 x (step(ga=5) - step(ga=4)). */
    ec_result ga5, ga7;
    ec_test_predict(ctx, "model=roberta-base gpu=a10g precision=amp_bf16 batch_per_gpu=8 seq_len=256 "
                    "grad_accum=5", &ga5);
    ec_test_predict(ctx, "model=roberta-base gpu=a10g precision=amp_bf16 batch_per_gpu=8 seq_len=256 "
                    "grad_accum=7", &ga7);
    assert_rel(ga7.step_s - ga5.step_s, 2.0 * (ga5.step_s - ga4.step_s), EC_TOL_INTEGRAL);
    ec_ctx_free(ctx);
}

/* Kernel time can never exceed the step it is part of, with or without accumulation. */
static void test_grad_accum_busy_within_step(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result res;
    ec_test_config(ctx, &cfg, "model=roberta-base gpu=a10g precision=amp_bf16 batch_per_gpu=8 seq_len=256 "
                   "grad_accum=4");
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    check_result(&cfg, &res);
    ec_result one;
    ec_test_predict(ctx, "model=roberta-base gpu=a10g precision=amp_bf16 batch_per_gpu=8 seq_len=256", &one);
    /* Kernel time never exceeds the step; and the optimizer runs once per step, so
     * busy(ga=4) = 4 fwd/bwd + 3 AccumulateGrad adds (12 B/param) + 1 optimizer (84 B/param)
     * is strictly less than 4 x busy(ga=1) = 4 (fwd/bwd + optimizer).  (Kernel counts are not
     * below 4x: each AccumulateGrad add is one kernel per parameter tensor.) */
    assert_true(res.gpu_busy_s <= res.step_s * (1.0 + EC_TOL_CLOSED_FORM));
    assert_true(res.gpu_busy_s < 4.0 * one.gpu_busy_s);
    ec_ctx_free(ctx);
}

/* DDP on 8 NVLinked A100s: gradients are all-reduced (comm > 0) and 8 GPUs give less than 8x. */
static void test_ddp(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result one, eight, dp;
    ec_test_predict(ctx, "model=bert-large gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=8 seq_len=128", &one);
    ec_test_config(ctx, &cfg, "model=bert-large gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=8 "
                   "seq_len=128 num_gpus=8");
    assert_int_equal(ec_predict(ctx, &cfg, &eight), EC_OK);
    check_result(&cfg, &eight);
    assert_true(one.breakdown.comm_s == 0);
    assert_true(eight.breakdown.comm_s > 0);
    assert_true(eight.samples_per_s < 8.0 * one.samples_per_s);
    assert_true(eight.samples_per_s > 4.0 * one.samples_per_s);
    /* num_gpus > 1 defaults to ddp: the bucket copy of the gradients and NCCL's buffers */
    assert_true(eight.memory.peak_bytes > one.memory.peak_bytes);
    /* DataParallel, one process driving 8 replicas, is slower than DDP */
    ec_test_predict(ctx, "model=bert-large gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=8 seq_len=128 "
                    "num_gpus=8 "
                    "strategy=dp", &dp);
    assert_true(dp.samples_per_s < eight.samples_per_s);
    assert_true(dp.breakdown.comm_s > 0);
    /* The same GPUs over PCIe through the host expose more communication than over NVLink. */
    ec_result pcie;
    ec_test_predict(ctx, "model=bert-large gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=8 seq_len=128 "
                    "num_gpus=8 "
                    "topology=pcie-host", &pcie);
    assert_true(pcie.breakdown.comm_s > eight.breakdown.comm_s);
    ec_ctx_free(ctx);
}

/* Same config, same result, byte for byte. */
static void test_deterministic(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    static ec_result a, b;
    ec_test_config(ctx, &cfg, "model=gpt2 gpu=l4 precision=amp_bf16 batch_per_gpu=6 seq_len=1000 num_gpus=3 "
                   "num_workers=5 dataset_samples=37000 epochs=3 eval_samples=3700");
    assert_int_equal(ec_predict(ctx, &cfg, &a), EC_OK);
    assert_int_equal(ec_predict(ctx, &cfg, &b), EC_OK);
    assert_memory_equal(&a, &b, sizeof a);
    /* ...and from a second context. */
    ec_ctx *ctx2 = ec_test_ctx();
    assert_int_equal(ec_predict(ctx2, &cfg, &b), EC_OK);
    assert_memory_equal(&a, &b, sizeof a);
    ec_ctx_free(ctx2);
    ec_ctx_free(ctx);
}

/* The op cost cache (compute.c) end to end: a warm context that has priced the same
 * workloads on other GPUs, precisions, batches and gpu_step_s scales in between must give,
 * from its cache, exactly what a fresh context computes (a key without the GPU's rates
 * fails here; test_compute.c's test_op_costs_cache checks every input of the key). */
static void test_cost_cache(void **state)
{
    (void)state;
    static const char *const words[] = {
        "model=resnet50 gpu=a100-sxm4-80gb batch_per_gpu=32 precision=amp_fp16",
        "model=resnet50 gpu=t4 batch_per_gpu=32 precision=amp_fp16",
        "model=resnet50 gpu=a100-sxm4-80gb batch_per_gpu=32 precision=amp_fp16 gpu_step_s=0.2",
        "model=resnet50 gpu=a100-sxm4-80gb batch_per_gpu=32 precision=tf32",
        "model=resnet50 gpu=v100-sxm2-16gb batch_per_gpu=32 precision=tf32",
        "model=resnet50 gpu=a100-sxm4-80gb batch_per_gpu=16 precision=amp_fp16",
        "model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=8 precision=amp_bf16 num_workers=2",
        "model=bert-base gpu=l4 batch_per_gpu=8 precision=amp_bf16 num_workers=2",
        "model=bert-base gpu=l4 batch_per_gpu=8 precision=amp_bf16 num_workers=2 gpu_step_s=0.05",
    };
    enum { N = sizeof words / sizeof words[0] };
    static ec_result fresh[N], warm;
    for (size_t i = 0; i < N; i++) { /* every cache missed: a new context per config */
        ec_ctx *one = ec_test_ctx();
        ec_test_predict(one, words[i], &fresh[i]);
        ec_ctx_free(one);
    }
    ec_ctx *ctx = ec_test_ctx();
    for (int round = 0; round < 3; round++)
        for (size_t k = 0; k < N; k++) {
            size_t i = round == 1 ? N - 1 - k : k; /* forwards, backwards, forwards */
            ec_test_predict(ctx, words[i], &warm);
            if (memcmp(&warm, &fresh[i], sizeof warm) != 0)
                fail_msg("round %d, %s: step %.17g s from the cache, %.17g s fresh", round, words[i], warm.step_s,
                         fresh[i].step_s);
        }
    size_t hits, misses;
    eci_op_costs_stats(ctx, &hits, &misses);
    assert_true(hits >= 2 * N); /* rounds 2 and 3 priced nothing */
    assert_true(misses > 0 && misses <= 2 * N); /* gpu_step_s prices its reference step once more */
    ec_ctx_free(ctx);
}

/* A fit report holding the priors, read back from a one-row profile (so the test follows
 * the parameter list of calibrate.c), with `name` set to `value` for each pair given. */
static void prior_fit(ec_ctx *ctx, ec_fit_report *rep)
{
    char *dir = ec_test_tmpdir();
    char *path = ec_test_path(dir, "prior.csv");
    static const char text[] = "parameter,value\ndispatch_scale,1\n";
    ec_test_write_file(path, text, sizeof text - 1);
    int rc = ec_profile_read(ctx, path, rep);
    ec_test_rmtree(dir);
    free(path);
    free(dir);
    if (rc != EC_OK)
        fail_msg("ec_profile_read: %s", ec_ctx_errmsg(ctx));
}

static void fit_set_value(ec_fit_report *rep, const char *name, double value)
{
    for (size_t j = 0; j < rep->n_params; j++)
        if (strcmp(rep->names[j], name) == 0) {
            rep->values[j] = value;
            return;
        }
    fail_msg("no fitted parameter '%s'", name);
}

/* Faster hardware (fitted GEMM and bandwidth scales above 1) never slows a step. */
static void test_faster_never_slower(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const configs[] = {
        "model=bert-base gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=1 seq_len=32",
        "model=bert-base gpu=a16 precision=fp32 batch_per_gpu=16 seq_len=256",
        "model=gpt2 gpu=t4 precision=amp_fp16 batch_per_gpu=3 seq_len=1024 grad_accum=3",
        "model=resnet50 gpu=v100-sxm2-16gb precision=amp_fp16 batch_per_gpu=96 num_workers=6",
        "model=vit-b16 gpu=h100-sxm5-80gb precision=bf16 batch_per_gpu=64 num_gpus=4",
        "model=distilbert-base gpu=rtx3090 precision=tf32 batch_per_gpu=24 tokenize=on_the_fly num_workers=2",
    };
    ec_fit_report prior, fast_fit;
    prior_fit(ctx, &prior);
    fast_fit = prior;
    fit_set_value(&fast_fit, "gemm_scale", 1.31);
    fit_set_value(&fast_fit, "simt_scale", 1.23);
    fit_set_value(&fast_fit, "mem_scale", 1.17);
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        ec_result base, fast;
        assert_int_equal(ec_ctx_set_fit(ctx, &prior), EC_OK);
        ec_test_predict(ctx, configs[i], &base);
        assert_int_equal(ec_ctx_set_fit(ctx, &fast_fit), EC_OK);
        ec_test_predict(ctx, configs[i], &fast);
        if (fast.step_s > base.step_s)
            fail_msg("%s: faster GPU predicted slower (%g > %g)", configs[i], fast.step_s, base.step_s);
        assert_true(fast.gpu_busy_s < base.gpu_busy_s);
    }
    /* ec_ctx_set_fit(NULL) is the priors too: the same prediction as the prior report. */
    ec_result a, b;
    assert_int_equal(ec_ctx_set_fit(ctx, NULL), EC_OK);
    ec_test_predict(ctx, configs[2], &a);
    assert_int_equal(ec_ctx_set_fit(ctx, &prior), EC_OK);
    ec_test_predict(ctx, configs[2], &b);
    assert_rel(a.step_s, b.step_s, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* ---- ec_max_batch -------------------------------------------------------------------------- */

static void test_max_batch(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_config cfg;
    ec_result res;
    static const int seqs[] = {64, 128, 200, 384, 512};
    int prev = 1 << 30;
    for (int i = 0; i < 5; i++) {
        char words[256];
        snprintf(words, sizeof words, "model=bert-base gpu=t4 precision=amp_fp16 batch_per_gpu=1 seq_len=%d", seqs[i]);
        ec_test_config(ctx, &cfg, words);
        int b = -1;
        assert_int_equal(ec_max_batch(ctx, &cfg, 0, &b), EC_OK);
        assert_true(b >= 1);
        /* b fits ... */
        cfg.batch_per_gpu = b;
        assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
        assert_true(res.memory.fits);
        /* ... and b + 1 does not */
        cfg.batch_per_gpu = b + 1;
        assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
        assert_false(res.memory.fits);
        /* longer sequences never allow a larger batch */
        if (b > prev)
            fail_msg("max batch %d at seq %d above %d at a shorter seq", b, seqs[i], prev);
        prev = b;
    }
    /* A limit caps the answer. */
    int b = 0;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=1 seq_len=128");
    assert_int_equal(ec_max_batch(ctx, &cfg, 37, &b), EC_OK);
    assert_int_equal(b, 37);
    /* Not even batch 1 fits: 0, and still EC_OK. */
    ec_test_config(ctx, &cfg, "model=gpt2-medium gpu=t4 precision=fp32 batch_per_gpu=1 seq_len=16384");
    assert_int_equal(ec_max_batch(ctx, &cfg, 0, &b), EC_OK);
    assert_int_equal(b, 0);
    /* Errors propagate. */
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=1");
    eci_strlcpy(cfg.gpu, "a100-sxm4-80g", sizeof cfg.gpu); /* a field filled directly is checked at use */
    assert_int_equal(ec_max_batch(ctx, &cfg, 0, &b), EC_ENOTFOUND);
    assert_int_equal(ec_max_batch(ctx, NULL, 0, &b), EC_EMISUSE);
    assert_int_equal(ec_max_batch(ctx, &cfg, 0, NULL), EC_EMISUSE);
    assert_int_equal(ec_max_batch(NULL, &cfg, 0, &b), EC_EMISUSE);
    ec_ctx_free(ctx);
}

/* ec_predict of the words base + extra, which must succeed. */
static void predict_with(ec_ctx *ctx, const char *base, const char *extra, ec_result *res)
{
    ec_config cfg;
    char words[256];
    snprintf(words, sizeof words, "%s %s", base, extra);
    ec_test_config(ctx, &cfg, words);
    assert_int_equal(ec_predict(ctx, &cfg, res), EC_OK);
}

/* NCCL through host memory: four RTX 3090s (no peer-to-peer) are priced at the GPU's link on the
 * default host, which has no through-host rate, and the prediction says so; an AMD EPYC server
 * (hosts.csv server-epyc, a measured rate below the link) makes the step longer and silences it,
 * as a measured busbw_gbyte_per_s does; one GPU or NVLink has no such ring.  Eight of them span
 * both sockets (socket_gpus), slower still; neither is a PCIe peer-to-peer hop (EC_WARN_PCIE_HOST_HOP). */
static void test_through_host_rate(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result link, epyc, epyc8, link8, measured, one, nvlink;
    const char *rtx3090 = "model=bert-large gpu=rtx3090 seq_len=384 batch_per_gpu=8 precision=fp16";
    predict_with(ctx, rtx3090, "num_gpus=4", &link);
    assert_true(link.warnings & EC_WARN_THROUGH_HOST);
    predict_with(ctx, rtx3090, "num_gpus=4 host=server-epyc", &epyc);
    assert_false(epyc.warnings & EC_WARN_THROUGH_HOST);
    assert_true(epyc.breakdown.comm_s > link.breakdown.comm_s && epyc.step_s > link.step_s);
    assert_false(epyc.warnings & EC_WARN_PCIE_HOST_HOP);
    predict_with(ctx, rtx3090, "num_gpus=8 host=server-epyc", &epyc8);
    predict_with(ctx, rtx3090, "num_gpus=8", &link8);
    assert_false(epyc8.warnings & (EC_WARN_PCIE_HOST_HOP | EC_WARN_THROUGH_HOST));
    /* the ring's bus bandwidth is the cross-socket rate's, below the 4-GPU ring's; the default
     * host's warning quotes server-epyc's rate for a ring of as many GPUs */
    assert_true(epyc8.busbw_bytes_per_s < epyc.busbw_bytes_per_s && epyc8.busbw_bytes_per_s < link8.busbw_bytes_per_s);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "host=server-epyc: %.2f GB/s", epyc8.busbw_bytes_per_s / 1e9);
    assert_contains(link8.warning_text, quoted);
    snprintf(quoted, sizeof quoted, "host=server-epyc: %.2f GB/s", epyc.busbw_bytes_per_s / 1e9);
    assert_contains(link.warning_text, quoted);
    predict_with(ctx, rtx3090, "num_gpus=4 busbw_gbyte_per_s=3", &measured);
    assert_false(measured.warnings & EC_WARN_THROUGH_HOST);
    predict_with(ctx, rtx3090, "num_gpus=1", &one);
    assert_false(one.warnings & EC_WARN_THROUGH_HOST);
    predict_with(ctx, "model=bert-large gpu=a100-sxm4-80gb seq_len=384 batch_per_gpu=8", "num_gpus=8", &nvlink);
    assert_false(nvlink.warnings & EC_WARN_THROUGH_HOST);
    ec_ctx_free(ctx);
}

/* ---- errors -------------------------------------------------------------------------------- */

/* The first failure of setting the words (a name is checked when it is set) or of predicting. */
static void expect_error(ec_ctx *ctx, const char *words, int code, const char *msg)
{
    ec_config cfg;
    ec_result res;
    char buf[512];
    int rc = EC_OK;
    ec_config_init(&cfg);
    eci_strlcpy(buf, words, sizeof buf);
    for (char *w = strtok(buf, " "); w != NULL && rc == EC_OK; w = strtok(NULL, " "))
        rc = ec_config_set_word(ctx, &cfg, w);
    if (rc == EC_OK)
        rc = ec_predict(ctx, &cfg, &res);
    if (rc != code)
        fail_msg("%s: rc %d (%s), expected %d; message: %s", words, rc, ec_strerror(rc), code, ec_ctx_errmsg(ctx));
    assert_contains(ec_ctx_errmsg(ctx), msg);
}

static void test_errors(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    /* required keys */
    expect_error(ctx, "model=bert-base batch_per_gpu=8", EC_EINVAL, "'gpu' is required");
    expect_error(ctx, "gpu=t4 batch_per_gpu=8", EC_EINVAL, "'model' is required");
    expect_error(ctx, "model=bert-base gpu=t4", EC_EINVAL, "'batch_per_gpu' is required");
    /* unknown names, with the nearest valid id */
    expect_error(ctx, "model=bert-base gpu=a100-sxm4-80g batch_per_gpu=8", EC_ENOTFOUND, "did you mean 'a100-sxm4-80gb'");
    expect_error(ctx, "model=bert-base gpu=a100-sxm4-80g batch_per_gpu=8", EC_ENOTFOUND, "unknown gpu 'a100-sxm4-80g'");
    expect_error(ctx, "model=bert-bsae gpu=t4 batch_per_gpu=8", EC_ENOTFOUND, "did you mean 'bert-base'");
    expect_error(ctx, "model=bert-base task=squadv2 gpu=t4 batch_per_gpu=8", EC_ENOTFOUND, "unknown task 'squadv2'");
    expect_error(ctx, "model=bert-base gpu=t4 host=workstaton batch_per_gpu=8", EC_ENOTFOUND, "did you mean 'workstation'");
    /* impossible combinations */
    expect_error(ctx, "model=gpt2 task=pretrain gpu=t4 batch_per_gpu=8", EC_EINVAL, "cannot run task 'pretrain'");
    expect_error(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 num_gpus=4 strategy=single", EC_EINVAL, "strategy=single");
    expect_error(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 num_gpus=2 nodes=3", EC_EINVAL, "nodes=3 exceeds num_gpus=2");
    expect_error(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 padding=dynamic", EC_EINVAL, "padding=dynamic needs lengths=");
    expect_error(ctx, "model=resnet50 gpu=t4 batch_per_gpu=8 lengths=fixed(8)", EC_EINVAL, "text model");
    expect_error(ctx, "model=bert-base gpu=t4 batch_per_gpu=8 padding=dynamic lengths=gamma(3,4)", EC_EINVAL,
                 "unknown distribution");
    expect_error(ctx, "gpu=t4 batch_per_gpu=8", EC_EINVAL, "unless gpu_step_s");
    /* a field set directly to a value the text form would refuse */
    ec_config cfg;
    ec_result res;
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=8");
    cfg.grad_accum = 0;
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "grad_accum");
    /* a missing profile file */
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=8 profile=/nonexistent/epochcast-profile.csv");
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_EIO);

    /* NULL arguments */
    ec_test_config(ctx, &cfg, "model=bert-base gpu=t4 batch_per_gpu=8");
    assert_int_equal(ec_predict(ctx, NULL, &res), EC_EMISUSE);
    assert_int_equal(ec_predict(ctx, &cfg, NULL), EC_EMISUSE);
    assert_contains(ec_ctx_errmsg(ctx), "NULL");
    assert_int_equal(ec_predict(NULL, &cfg, &res), EC_EMISUSE);
    /* still works after all that */
    assert_int_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    ec_ctx_free(ctx);

    /* before models are loaded */
    ec_ctx *bare = ec_test_ctx_bare();
    assert_int_equal(ec_predict(bare, &cfg, &res), EC_EMISUSE);
    assert_contains(ec_ctx_errmsg(bare), "ec_ctx_load_models");
    int b;
    assert_int_equal(ec_max_batch(bare, &cfg, 0, &b), EC_EMISUSE);
    ec_ctx_free(bare);
}

/* A per-sample Python loop in forward (seed 002): every iteration creates a tensor on the
 * device (a blocking copy) and issues a few one-element kernels.  Forward iterations each end
 * in a sync, so they cost the same; backward ones are cheaper only while the host still has a
 * lead over the GPU's queue of layer kernels.  With loops long enough to use that lead up in
 * each case, the step is linear in the loop count: step(3k) - step(2k) = step(2k) - step(k)
 * (this also checks that simulating to the steady state and extrapolating is exact).  Each
 * extra sync costs the host at least the copy latency h2d_latency_s (models/constants.csv). */
static void test_python_loop(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *base = "model=distilbert-base gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=32 seq_len=128";
    char words[256];
    ec_result r0, r1, r2, r3;
    ec_test_predict(ctx, base, &r0);
    double syncs[] = {200, 400, 600};
    ec_result *rs[] = {&r1, &r2, &r3};
    for (int i = 0; i < 3; i++) {
        snprintf(words, sizeof words, "%s loop_syncs_per_sample=%g loop_ops_per_sample=%g", base, syncs[i],
                 3 * syncs[i]);
        ec_test_predict(ctx, words, rs[i]);
    }
    assert_rel(r3.step_s - r2.step_s, r2.step_s - r1.step_s, EC_TOL_CLOSED_FORM);
    double copy_s = eci_const(ctx, EC_C_h2d_latency_s);
    assert_true(r1.step_s - r0.step_s >= 32 * 200 * copy_s);
    /* 32 x 200 x 3 extra kernels forward and as many backward */
    assert_rel(r1.kernels_per_step - r0.kernels_per_step, 2.0 * 32 * 200 * 3, EC_TOL_CLOSED_FORM);
    assert_int_equal(r3.bottleneck, EC_BOTTLENECK_CPU);
    assert_true(r3.gpu_util_frac < r0.gpu_util_frac);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed000_bert_a16),
        cmocka_unit_test(test_overhead_grows_as_batch_shrinks),
        cmocka_unit_test(test_input_bound),
        cmocka_unit_test(test_checkpointing),
        cmocka_unit_test(test_grad_accum),
        cmocka_unit_test(test_grad_accum_busy_within_step),
        cmocka_unit_test(test_ddp),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_cost_cache),
        cmocka_unit_test(test_faster_never_slower),
        cmocka_unit_test(test_max_batch),
        cmocka_unit_test(test_python_loop),
        cmocka_unit_test(test_through_host_rate),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
