/*
 * test_dp_chunk_overlap.c: the data-parallel collectives of Megatron's distributed optimizer
 * under an interleaved pipeline (sim/step.c interleaved_chunks, overlapped_gather_s;
 * model/comm.h eci_chunked_exposed_s) and overlap_param_gather.
 *
 * Megatron's interleaved schedule runs each of a stage's pp_chunks model chunks in groups of pp
 * micro-batches; a chunk's gradients are final once its last group's backward is through, and
 * the schedule then launches that chunk's reduce-scatter (grad_sync_func) while the other
 * chunks' backward goes on, so only the last chunk's is left after backward; with
 * overlap_param_gather each chunk's parameters are all-gathered while the chunk before it runs
 * its forward (param_sync_func).  MLPerf GPT-3 175B on 1,280 Eos nodes (TP 4, PP 8, 12 chunks
 * of one layer, 8 micro-batches) reduce-scatters 5.4e9 bf16 gradients per GPU over 320 ranks: the
 * old model left all of it but one micro-batch's backward exposed (252 ms of a 1.16 s step); the
 * chunked one leaves one chunk's (1/12).  Fails on the old code (no key overlap_param_gather, and
 * the exposed reduction is 10x the bound).
 */
#include "ec_test.h"
#include "model/comm.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* the model=... word is put in front by gpt3() (the config.json lies in the source tree) */
#define GPT3 \
    "gpu=h100-sxm5-80gb " \
    "gpus_per_node=8 network=ib-ndr-400 strategy=zero zero_stage=1 tp=4 pp=8 pp_schedule=interleaved " \
    "pp_chunks=12 sequence_parallel=1 precision=amp_fp8 optimizer=adam attention=flash kernels=te " \
    "batch_per_gpu=1 seq_len=2048 num_gpus=10240 grad_accum=8 "

/* MLPerf GPT-3 175B as bench/data/llm_runs.csv describes the 1,280-node Eos run, plus `extra`. */
static void gpt3(ec_ctx *ctx, const char *extra, ec_result *r)
{
    const char *src = getenv("EC_SOURCE_DIR");
    char w[1024];
    snprintf(w, sizeof w, "model=%s/bench/data/llm/models/mlperf-gpt3-175b.json %s%s", src != NULL ? src : "..",
             GPT3, extra);
    ec_test_predict(ctx, w, r);
}


/* The closed form: parts that fit their windows leave one part; else what the windows cannot hide. */
static void test_chunked_exposed_closed_form(void **state)
{
    (void)state;
    assert_rel(eci_chunked_exposed_s(12.0, 12, 2.0), 1.0, EC_TOL_CLOSED_FORM);  /* 1 s parts, 2 s windows */
    assert_rel(eci_chunked_exposed_s(12.0, 4, 1.0), 9.0, EC_TOL_CLOSED_FORM);   /* 3 s parts, 1 s windows */
    assert_rel(eci_chunked_exposed_s(12.0, 1, 100.0), 12.0, EC_TOL_CLOSED_FORM); /* one piece: all of it */
    assert_abs(eci_chunked_exposed_s(0.0, 12, 1.0), 0.0, EC_TOL_EXACT);
}

static void test_interleaved_reduction_one_chunk_exposed(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result r;
    gpt3(ctx, "", &r);
    print_message("exposed reduce-scatter %.1f ms, parameter all-gather %.1f ms, step %.1f ms\n",
                  r.comm.dp_reduce_s * 1e3, r.comm.shard_wait_s * 1e3, r.step_s * 1e3);
    /* the whole reduce-scatter takes about 0.3 s here; one chunk of 12 is left after backward */
    assert_true(r.comm.dp_reduce_s > 0);
    assert_true(r.comm.dp_reduce_s < 0.05);
    /* without overlap_param_gather the all-gather after the optimizer step is all exposed */
    assert_true(r.comm.shard_wait_s > 0.1);
    ec_ctx_free(ctx);
}

static void test_overlap_param_gather(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result off, on;
    gpt3(ctx, "", &off);
    gpt3(ctx, "overlap_param_gather=1", &on);
    print_message("all-gather wait: after the step %.1f ms, under the forward %.1f ms\n", off.comm.shard_wait_s * 1e3,
                  on.comm.shard_wait_s * 1e3);
    /* one chunk's all-gather (1/12) plus the forward slowed beside the rest (overlap_compute_slowdown_frac) */
    assert_true(on.comm.shard_wait_s < 0.35 * off.comm.shard_wait_s);
    assert_true(on.comm.shard_wait_s > off.comm.shard_wait_s / 12.0);
    assert_true(on.step_s < off.step_s);
    /* the compute and the gradient reduction are the same */
    assert_rel(on.breakdown.forward_s, off.breakdown.forward_s, EC_TOL_CLOSED_FORM);
    assert_rel(on.comm.dp_reduce_s, off.comm.dp_reduce_s, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

/* Without a pipeline the all-gather hides bucket by bucket under the first micro-batch's forward;
 * outside ZeRO-1/2 the key is ignored, and said so. */
static void test_overlap_param_gather_without_pipeline(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *base = "model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=16 gpus_per_node=8 network=ib-ndr-400 "
                       "precision=bf16 batch_per_gpu=2 seq_len=4096 attention=flash ";
    char w[512];
    ec_result off, on, fsdp;
    snprintf(w, sizeof w, "%sstrategy=zero zero_stage=1", base);
    ec_test_predict(ctx, w, &off);
    snprintf(w, sizeof w, "%sstrategy=zero zero_stage=1 overlap_param_gather=1", base);
    ec_test_predict(ctx, w, &on);
    assert_true(on.comm.shard_wait_s < off.comm.shard_wait_s);
    assert_true(on.step_s < off.step_s);
    snprintf(w, sizeof w, "%sstrategy=fsdp overlap_param_gather=1", base);
    ec_test_predict(ctx, w, &fsdp);
    assert_contains(fsdp.warning_text, "overlap_param_gather");
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunked_exposed_closed_form),
        cmocka_unit_test(test_interleaved_reduction_one_chunk_exposed),
        cmocka_unit_test(test_overlap_param_gather),
        cmocka_unit_test(test_overlap_param_gather_without_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
