/*
 * test_optimize.c: the layout search (ec_optimize, core/src/search/optimize.c).  The best layout
 * divides the GPUs and the global batch and fits, and ec_predict of its configuration gives
 * its figures; the ranking is sorted by the goal; the counts add up; a search whose answer is
 * known by construction (a small model on one node with free communication: pure data
 * parallelism wins, since tensor and pipeline parallelism only split the same kernels and add
 * a bubble); one thread, three threads and two merged parts give the same ranking; bad inputs
 * are refused naming the key; the model-state bound the search prunes with stays below the
 * bytes ec_predict allocates, whatever the strategy, sharding, precision and optimizer.
 */
#include "ec_test.h"
#include "search/optimize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ec_optimize *search(ec_ctx *ctx, const char *const *words, size_t n, const char *const *search_words,
                           size_t n_search)
{
    ec_config base;
    ec_config_init(&base);
    for (size_t i = 0; i < n; i++)
        if (ec_config_set_word(ctx, &base, words[i]) != EC_OK)
            fail_msg("%s: %s", words[i], ec_ctx_errmsg(ctx));
    ec_optimize *o = NULL;
    assert_int_equal(ec_optimize_new(ctx, &base, &o), EC_OK);
    for (size_t i = 0; i < n_search; i++) {
        char key[64];
        const char *eq = strchr(search_words[i], '=');
        memcpy(key, search_words[i], (size_t)(eq - search_words[i]));
        key[eq - search_words[i]] = '\0';
        if (ec_optimize_set(o, key, eq + 1) != EC_OK)
            fail_msg("%s: %s", search_words[i], ec_ctx_errmsg(ctx));
    }
    return o;
}

static const char *const llm[] = {"model=llama-3.1-8b", "seq_len=4096"};
static const char *const llm_search[] = {"gpu=h100-sxm5-80gb", "num_gpus=16", "global_batch_tokens=1048576",
                                         "threads=2"};

static void test_best_fits_and_divides(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_optimize *o = search(ctx, llm, 2, llm_search, 4);
    assert_int_equal(ec_optimize_run(o), EC_OK);
    ec_optimize_stats s;
    ec_optimize_stats_get(o, &s);
    assert_true(s.considered > 0);
    assert_int_equal(s.considered, s.pruned_divide + s.pruned_memory + s.priced);
    assert_true(s.pruned_divide > 0 && s.priced > 0 && s.fit > 0);
    assert_int_equal(ec_optimize_count(o), s.fit);
    ec_optimize_layout best, prev;
    assert_int_equal(ec_optimize_get(o, 0, 0, &best), EC_OK);
    const ec_config *c = &best.config;
    assert_true(best.fits);
    assert_int_equal(c->num_gpus, best.dp * c->tp * c->pp * c->cp);
    assert_int_equal(best.dp % c->ep, 0);
    assert_rel(best.global_batch, (double)best.dp * c->batch_per_gpu * c->grad_accum, EC_TOL_EXACT);
    assert_rel(best.global_batch * 4096, 1048576, EC_TOL_EXACT);
    assert_int_equal(best.lost, EC_LOSS_NONE);
    /* its figures are ec_predict's of its configuration */
    ec_result r;
    assert_int_equal(ec_predict(ctx, c, &r), EC_OK);
    assert_true(r.memory.fits);
    assert_rel(r.tokens_per_s, best.tokens_per_s, EC_TOL_EXACT);
    assert_rel(r.memory.peak_bytes, best.peak_bytes, EC_TOL_EXACT);
    assert_true(best.peak_bytes <= best.capacity_bytes);
    /* sorted by tokens/s; every rival says why it lost */
    prev = best;
    for (size_t i = 1; i < ec_optimize_count(o); i++) {
        ec_optimize_layout l;
        assert_int_equal(ec_optimize_get(o, 0, i, &l), EC_OK);
        assert_true(l.tokens_per_s <= prev.tokens_per_s);
        assert_true(l.fits);
        assert_true(l.reason[0] != '\0');
        assert_true(l.tokens_per_s == best.tokens_per_s || l.lost != EC_LOSS_NONE);
        prev = l;
    }
    assert_int_equal(ec_optimize_get(o, 0, ec_optimize_count(o), &prev), EC_EINVAL);
    for (size_t i = 0; i < ec_optimize_no_fit_count(o); i++) {
        ec_optimize_layout l;
        assert_int_equal(ec_optimize_get(o, 1, i, &l), EC_OK);
        assert_false(l.fits);
        assert_int_equal(l.lost, EC_LOSS_NO_FIT);
        /* a near miss above the best, or a layout at the edge of out-of-memory */
        assert_true(l.tokens_per_s > best.tokens_per_s || l.at_edge);
    }
    ec_optimize_free(o);
    ec_ctx_free(ctx);
}

/* With communication free (a measured bus bandwidth of 1e5 GB/s within one node, the most the key takes) and a model
 * that fits on one GPU, splitting a layer (tp, cp) or the network (pp) only adds work or a
 * bubble: the best layout is pure data parallelism, dp = num_gpus. */
static void test_pure_dp_wins_without_communication(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const words[] = {"model=gpt2", "seq_len=1024", "busbw_gbyte_per_s=100000"};
    static const char *const s[] = {"gpu=a100-sxm4-80gb", "num_gpus=8", "global_batch=64", "tp=1,2,4,8",
                                    "pp=1,2,4", "strategy=ddp", "checkpointing=0", "threads=1"};
    ec_optimize *o = search(ctx, words, 3, s, 8);
    assert_int_equal(ec_optimize_run(o), EC_OK);
    ec_optimize_layout best;
    assert_int_equal(ec_optimize_get(o, 0, 0, &best), EC_OK);
    assert_int_equal(best.config.tp, 1);
    assert_int_equal(best.config.pp, 1);
    assert_int_equal(best.dp, 8);
    ec_optimize_stats st;
    ec_optimize_stats_get(o, &st);
    assert_true(st.fit > 4); /* tp and pp layouts were priced and lost */
    ec_optimize_free(o);
    ec_ctx_free(ctx);
}

static void same_ranking(const ec_optimize *a, const ec_optimize *b)
{
    assert_int_equal(ec_optimize_count(a), ec_optimize_count(b));
    assert_int_equal(ec_optimize_no_fit_count(a), ec_optimize_no_fit_count(b));
    ec_optimize_stats sa, sb;
    ec_optimize_stats_get(a, &sa);
    ec_optimize_stats_get(b, &sb);
    assert_int_equal(sa.considered, sb.considered);
    assert_int_equal(sa.pruned_divide, sb.pruned_divide);
    assert_int_equal(sa.pruned_memory, sb.pruned_memory);
    assert_int_equal(sa.priced, sb.priced);
    assert_string_equal(sa.first_divide, sb.first_divide);
    for (int nf = 0; nf < 2; nf++)
        for (size_t i = 0; i < (nf ? ec_optimize_no_fit_count(a) : ec_optimize_count(a)); i++) {
            ec_optimize_layout x, y;
            assert_int_equal(ec_optimize_get(a, nf, i, &x), EC_OK);
            assert_int_equal(ec_optimize_get(b, nf, i, &y), EC_OK);
            assert_memory_equal(&x.config, &y.config, sizeof x.config);
            assert_true(x.tokens_per_s == y.tokens_per_s && x.peak_bytes == y.peak_bytes);
            assert_string_equal(x.reason, y.reason);
        }
}

static void test_threads_and_parts_agree(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const one[] = {"gpu=h100-sxm5-80gb", "num_gpus=16", "global_batch_tokens=1048576", "threads=1"};
    static const char *const three[] = {"gpu=h100-sxm5-80gb", "num_gpus=16", "global_batch_tokens=1048576",
                                        "threads=3"};
    ec_optimize *a = search(ctx, llm, 2, one, 4), *b = search(ctx, llm, 2, three, 4);
    assert_int_equal(ec_optimize_run(a), EC_OK);
    assert_int_equal(ec_optimize_run(b), EC_OK);
    same_ranking(a, b);
    /* two parts, packed and merged */
    ec_optimize *p0 = search(ctx, llm, 2, one, 4), *p1 = search(ctx, llm, 2, one, 4);
    assert_int_equal(ec_optimize_set(p0, "parts", "2"), EC_OK);
    assert_int_equal(ec_optimize_set(p1, "parts", "2"), EC_OK);
    assert_int_equal(ec_optimize_set(p1, "part", "1"), EC_OK);
    assert_int_equal(ec_optimize_run(p0), EC_OK);
    assert_int_equal(ec_optimize_run(p1), EC_OK);
    size_t bytes = 0;
    assert_int_equal(ec_optimize_pack(p1, NULL, &bytes), EC_OK);
    void *buf = malloc(bytes);
    assert_int_equal(ec_optimize_pack(p1, buf, &bytes), EC_OK);
    assert_int_equal(ec_optimize_merge(p0, buf, bytes - 1), EC_EINVAL); /* truncated */
    assert_int_equal(ec_optimize_merge(p0, buf, bytes), EC_OK);
    same_ranking(a, p0);
    free(buf);
    ec_optimize_free(a);
    ec_optimize_free(b);
    ec_optimize_free(p0);
    ec_optimize_free(p1);
    ec_ctx_free(ctx);
}

static void test_memory_pruning(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    /* 70B parameters with AdamW under DDP on 8 GPUs: 16 bytes a parameter over tp x pp <= 8 is
     * 140 GB a GPU at the least, so DDP layouts are pruned before pricing. */
    static const char *const words[] = {"model=llama-3.1-70b", "seq_len=4096"};
    static const char *const s[] = {"gpu=h100-sxm5-80gb", "num_gpus=8", "global_batch=64", "strategy=ddp",
                                    "threads=1"};
    ec_optimize *o = search(ctx, words, 2, s, 5);
    assert_int_equal(ec_optimize_run(o), EC_OK);
    ec_optimize_stats st;
    ec_optimize_stats_get(o, &st);
    assert_true(st.pruned_memory > 0);
    assert_int_equal(st.considered, st.pruned_divide + st.pruned_memory + st.priced);
    assert_int_equal(st.fit, 0);
    assert_int_equal(ec_optimize_count(o), 0);
    ec_optimize_free(o);
    ec_ctx_free(ctx);
}

/* The pruning bound must never exceed what the memory model allocates, or the search would
 * drop a layout that fits. */
static void test_state_bound_below_allocated(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const models[] = {"llama-3.1-8b", "mixtral-8x7b", "gpt2"};
    static const char *const strategies[][2] = {{"ddp", ""},          {"fsdp", "full_shard"},   {"fsdp", "shard_grad_op"},
                                                {"fsdp", "hybrid_shard"}, {"fsdp", "no_shard"}, {"zero", "1"},
                                                {"zero", "2"},          {"zero", "3"}};
    static const char *const precisions[] = {"amp_bf16", "bf16"};
    static const char *const optimizers[] = {"adamw", "paged_adamw_8bit", "adafactor"};
    static const int tps[] = {1, 2}, pps[] = {1, 2}, eps[] = {1, 2};
    size_t checked = 0;
    for (size_t m = 0; m < 3; m++) {
        double params;
        assert_int_equal(ec_model_params(ctx, models[m], "", &params), EC_OK);
        for (size_t s = 0; s < 8; s++)
            for (size_t p = 0; p < 2; p++)
                for (size_t o = 0; o < 3; o++)
                    for (size_t t = 0; t < 2; t++)
                        for (size_t q = 0; q < 2; q++)
                            for (size_t e = 0; e < 2; e++) {
                                ec_config c;
                                ec_config_init(&c);
                                char words[6][64];
                                snprintf(words[0], 64, "model=%s", models[m]);
                                snprintf(words[1], 64, "strategy=%s", strategies[s][0]);
                                snprintf(words[2], 64, "%s=%s", s == 0 ? "gpu" : strategies[s][0][0] == 'f' ? "sharding" : "zero_stage",
                                         s == 0 ? "h100-sxm5-80gb" : strategies[s][1]);
                                snprintf(words[3], 64, "precision=%s", precisions[p]);
                                snprintf(words[4], 64, "optimizer=%s", optimizers[o]);
                                snprintf(words[5], 64, "ep=%d", eps[e]);
                                int ok = ec_config_set_word(ctx, &c, "gpu=h100-sxm5-80gb") == EC_OK;
                                for (int w = 0; w < 6 && ok; w++)
                                    ok = ec_config_set_word(ctx, &c, words[w]) == EC_OK;
                                assert_true(ok);
                                c.num_gpus = 16;
                                c.tp = tps[t];
                                c.pp = pps[q];
                                c.seq_len = 1024;
                                c.batch_per_gpu = 1;
                                c.grad_accum = 4;
                                ec_result r;
                                if (ec_predict(ctx, &c, &r) != EC_OK)
                                    continue; /* a combination the model refuses */
                                double bound = eci_optimize_state_bound_bytes(ctx, &c, r.dp, params);
                                if (bound > r.memory.allocated_bytes)
                                    fail_msg("%s %s/%s %s %s tp %d pp %d ep %d: bound %.4g > allocated %.4g", models[m],
                                             strategies[s][0], strategies[s][1], precisions[p], optimizers[o], c.tp, c.pp,
                                             c.ep, bound, r.memory.allocated_bytes);
                                checked++;
                            }
    }
    assert_true(checked > 200);
    ec_ctx_free(ctx);
}

typedef struct progress_log {
    int calls, stop_at;
} progress_log;

static int on_progress(void *ud, const char *what, double done, double total)
{
    progress_log *p = ud;
    assert_string_equal(what, "optimize");
    assert_true(done >= 0 && done <= total);
    return ++p->calls >= p->stop_at;
}

/* The context's progress callback hears from the search and can stop it, on one thread or several. */
static void test_progress_and_cancel(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const one[] = {"gpu=h100-sxm5-80gb", "num_gpus=16", "global_batch_tokens=1048576", "threads=1"};
    static const char *const two[] = {"gpu=h100-sxm5-80gb", "num_gpus=16", "global_batch_tokens=1048576", "threads=2"};
    progress_log log = {0, 1000000};
    ec_ctx_set_progress(ctx, on_progress, &log);
    ec_optimize *o = search(ctx, llm, 2, one, 4);
    assert_int_equal(ec_optimize_run(o), EC_OK);
    assert_true(log.calls > 1); /* once per chunk of candidates */
    ec_optimize_free(o);
    for (int t = 0; t < 2; t++) {
        log = (progress_log){0, 1};
        o = search(ctx, llm, 2, t == 0 ? one : two, 4);
        assert_int_equal(ec_optimize_run(o), EC_ECANCELED);
        assert_contains(ec_ctx_errmsg(ctx), "cancelled");
        assert_int_equal(ec_optimize_count(o), 0);
        ec_optimize_free(o);
    }
    ec_ctx_set_progress(ctx, NULL, NULL);
    ec_ctx_free(ctx);
}

static void test_bad_inputs_name_the_key(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_optimize *o = search(ctx, llm, 2, llm_search, 3);
    assert_int_equal(ec_optimize_set(o, "bach", "1"), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "bach");
    assert_int_equal(ec_optimize_set(o, "tp", "1,0"), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "tp");
    assert_int_equal(ec_optimize_set(o, "goal", "fastest"), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "goal");
    assert_int_equal(ec_optimize_set(o, "top", "0"), EC_EINVAL);
    assert_int_equal(ec_optimize_set(o, "seq_len", "128"), EC_ENOTFOUND); /* a config key, not searched */
    assert_contains(ec_ctx_errmsg(ctx), "seq_len");
    assert_int_equal(ec_optimize_set(o, "global_batch_tokens", "1000000"), EC_OK);
    assert_int_equal(ec_optimize_run(o), EC_EINVAL); /* 1000000 / 4096 is not whole */
    assert_contains(ec_ctx_errmsg(ctx), "global_batch_tokens=1000000");
    assert_int_equal(ec_optimize_run(o), EC_EMISUSE); /* once */
    ec_optimize_free(o);
    /* no global batch */
    static const char *const nogb[] = {"gpu=h100-sxm5-80gb", "num_gpus=16"};
    o = search(ctx, llm, 2, nogb, 2);
    assert_int_equal(ec_optimize_run(o), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "global_batch");
    ec_optimize_free(o);
    /* train_time needs train_tokens */
    o = search(ctx, llm, 2, llm_search, 3);
    assert_int_equal(ec_optimize_set(o, "goal", "train_time"), EC_OK);
    assert_int_equal(ec_optimize_run(o), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(ctx), "train_tokens");
    ec_optimize_free(o);
    /* an unknown model names it */
    static const char *const bad_model[] = {"model=llama-9", "seq_len=4096"};
    o = search(ctx, bad_model, 0, llm_search, 3);
    ec_config base;
    ec_config_init(&base);
    ec_optimize_free(o);
    assert_int_equal(ec_optimize_new(ctx, NULL, &o), EC_EMISUSE);
    ec_optimize_free(NULL);
    (void)bad_model;
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_best_fits_and_divides),
        cmocka_unit_test(test_pure_dp_wins_without_communication),
        cmocka_unit_test(test_threads_and_parts_agree),
        cmocka_unit_test(test_memory_pruning),
        cmocka_unit_test(test_state_bound_below_allocated),
        cmocka_unit_test(test_progress_and_cancel),
        cmocka_unit_test(test_bad_inputs_name_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
