/*
 * test_ctx.c: the context's cleanups (base/ctx.c, eci_ctx_on_free).  Each module that keeps
 * state on a context registers the function that frees it; ec_ctx_free calls each once, the
 * last registered first, and refuses more than ECI_CLEANUPS_MAX.  And the end to end check:
 * a context that loaded models, predicted on several GPUs, simulated an epoch, priced a run
 * and swept on threads gives every byte it took from its allocator back when freed (a module
 * that forgot to register would leave its bytes behind).
 */
#include "ec_test.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The context's user data: what the cleanups record and what the allocator holds. */
typedef struct probe {
    int calls[ECI_CLEANUPS_MAX + 2];
    int order[ECI_CLEANUPS_MAX + 2];
    int n_order;
    long long live_bytes;
} probe;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    probe *p = ud;
    if (ptr != NULL)
        p->live_bytes -= (long long)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    void *q = realloc(ptr, nsize);
    p->live_bytes += (long long)(q != NULL ? nsize : (ptr != NULL ? osize : 0));
    return q;
}

/* ECI_CLEANUPS_MAX + 1 distinct cleanups, each recording its number. */
#define CLEANUP(i)                             \
    static void cleanup_##i(ec_ctx *ctx)       \
    {                                          \
        probe *p = ctx->ud;                    \
        p->calls[i]++;                         \
        p->order[p->n_order++] = i;            \
    }
CLEANUP(0) CLEANUP(1) CLEANUP(2) CLEANUP(3) CLEANUP(4) CLEANUP(5) CLEANUP(6) CLEANUP(7) CLEANUP(8)
CLEANUP(9) CLEANUP(10) CLEANUP(11) CLEANUP(12) CLEANUP(13) CLEANUP(14) CLEANUP(15) CLEANUP(16)
CLEANUP(17) CLEANUP(18) CLEANUP(19) CLEANUP(20) CLEANUP(21) CLEANUP(22) CLEANUP(23) CLEANUP(24)
static const eci_cleanup_fn CLEANUPS[] = {
    cleanup_0,  cleanup_1,  cleanup_2,  cleanup_3,  cleanup_4,  cleanup_5,  cleanup_6,
    cleanup_7,  cleanup_8,  cleanup_9,  cleanup_10, cleanup_11, cleanup_12, cleanup_13,
    cleanup_14, cleanup_15, cleanup_16, cleanup_17, cleanup_18, cleanup_19, cleanup_20,
    cleanup_21, cleanup_22, cleanup_23, cleanup_24};
_Static_assert(sizeof CLEANUPS / sizeof CLEANUPS[0] == ECI_CLEANUPS_MAX + 1,
               "one cleanup more than a context takes");

static void test_once_last_first(void **state)
{
    (void)state;
    probe p = {0};
    ec_ctx *ctx;
    assert_int_equal(ec_ctx_new(counting_alloc, &p, &ctx), EC_OK);
    assert_int_equal(eci_ctx_on_free(ctx, cleanup_0), EC_OK);
    assert_int_equal(eci_ctx_on_free(ctx, cleanup_1), EC_OK);
    assert_int_equal(eci_ctx_on_free(ctx, cleanup_0), EC_OK); /* again: still once */
    assert_int_equal(eci_ctx_on_free(ctx, cleanup_2), EC_OK);
    ec_ctx_free(ctx);
    assert_int_equal(p.calls[0], 1);
    assert_int_equal(p.calls[1], 1);
    assert_int_equal(p.calls[2], 1);
    assert_int_equal(p.n_order, 3);
    assert_int_equal(p.order[0], 2); /* the last registered first */
    assert_int_equal(p.order[1], 1);
    assert_int_equal(p.order[2], 0);
    assert_true(p.live_bytes == 0);
}

static void test_full(void **state)
{
    (void)state;
    probe p = {0};
    ec_ctx *ctx;
    assert_int_equal(ec_ctx_new(counting_alloc, &p, &ctx), EC_OK);
    for (int i = 0; i < ECI_CLEANUPS_MAX; i++)
        assert_int_equal(eci_ctx_on_free(ctx, CLEANUPS[i]), EC_OK);
    assert_int_equal(eci_ctx_on_free(ctx, CLEANUPS[ECI_CLEANUPS_MAX]), EC_EMISUSE);
    assert_contains(ec_ctx_errmsg(ctx), "ECI_CLEANUPS_MAX");
    assert_int_equal(eci_ctx_on_free(ctx, CLEANUPS[0]), EC_OK); /* a known one still is */
    ec_ctx_free(ctx);
    for (int i = 0; i < ECI_CLEANUPS_MAX; i++)
        assert_int_equal(p.calls[i], 1);
    assert_int_equal(p.calls[ECI_CLEANUPS_MAX], 0);
}

static void predict_ok(ec_ctx *ctx, const char *const *words, size_t n)
{
    ec_config cfg;
    ec_config_init(&cfg);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ec_config_set_word(ctx, &cfg, words[i]), EC_OK);
    ec_result res;
    int rc = ec_predict(ctx, &cfg, &res);
    if (rc != EC_OK)
        fail_msg("%s", ec_ctx_errmsg(ctx));
}

/* Every module's state taken and given back: the allocator ends where it began. */
static void test_everything_freed(void **state)
{
    (void)state;
    probe p = {0};
    ec_ctx *ctx;
    assert_int_equal(ec_ctx_new(counting_alloc, &p, &ctx), EC_OK);
    assert_int_equal(ec_ctx_load_models(ctx, NULL), EC_OK);
    /* 8 GPUs with DDP (comm's ramp, the one-GPU reference), a priced epoch with dynamic
     * padding and workers (the loader's generators, the batch lengths), the profile= path */
    const char *ddp[] = {"model=bert-base", "gpu=a100-sxm4-80gb", "batch_per_gpu=16", "num_gpus=8",
                         "precision=amp_bf16", "dataset_samples=4096", "num_workers=2", "padding=dynamic",
                         "lengths=lognormal(60,0.7)", "price_per_gpu_hour=2"};
    predict_ok(ctx, ddp, sizeof ddp / sizeof ddp[0]);
    const char *fsdp[] = {"model=llama-3.2-1b", "gpu=h100-sxm5-80gb", "batch_per_gpu=4", "num_gpus=8",
                          "strategy=fsdp", "precision=amp_bf16", "data=synthetic"};
    predict_ok(ctx, fsdp, sizeof fsdp / sizeof fsdp[0]);
    /* a sweep on two threads: the worker pool and its contexts */
    ec_config base;
    ec_config_init(&base);
    assert_int_equal(ec_config_set_word(ctx, &base, "model=bert-base"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &base, "gpu=t4"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &base, "batch_per_gpu=8"), EC_OK);
    ec_sweep_opts opts;
    ec_sweep_opts_init(&opts);
    opts.threads = 2;
    ec_sweep *sw;
    assert_int_equal(ec_sweep_new(ctx, &base, &opts, &sw), EC_OK);
    const char *batches[] = {"8", "16", "32", "64"};
    assert_int_equal(ec_sweep_axis(sw, "batch_per_gpu", batches, 4), EC_OK);
    ec_sweep_point pt;
    int points = 0;
    while (!ec_sweep_done(sw) && ec_sweep_next(sw, &pt) == EC_OK)
        points += pt.status == EC_OK;
    assert_int_equal(points, 4);
    ec_sweep_free(sw);
    assert_true(p.live_bytes > 0);
    ec_ctx_free(ctx);
    assert_true(p.live_bytes == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_once_last_first),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_everything_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
