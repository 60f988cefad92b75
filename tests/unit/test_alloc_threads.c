/*
 * test_alloc_threads.c: ec_ctx_set_alloc_threadsafe (issue 42, defect 2): a host's counting
 * allocator sees the worker threads of a sweep only when it declares itself thread-safe;
 * then every block of every worker comes back through it, and a cap on it holds for the
 * workers too.  Without the declaration the workers keep realloc/free, as before.
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The block's size in a header (the library passes osize 0 when it does not know it). */
typedef union head {
    size_t size;
    max_align_t align;
} head;

typedef struct counter {
    atomic_size_t held;      /* bytes held now */
    atomic_size_t peak;      /* the most held at once */
    atomic_size_t cap;       /* 0: none */
    atomic_size_t foreign;   /* calls from a thread other than the one that made the counter */
    atomic_size_t refused;
    pthread_t owner;
} counter;

static void *counted(void *ud, void *ptr, size_t osize, size_t nsize)
{
    counter *c = ud;
    (void)osize;
    if (!pthread_equal(pthread_self(), c->owner))
        atomic_fetch_add(&c->foreign, 1);
    head *h = ptr != NULL ? (head *)ptr - 1 : NULL;
    size_t old = h != NULL ? h->size : 0;
    if (nsize == 0) {
        free(h);
        atomic_fetch_sub(&c->held, old);
        return NULL;
    }
    size_t more = nsize > old ? nsize - old : 0;
    size_t before = atomic_fetch_add(&c->held, more);
    size_t cap = atomic_load(&c->cap);
    if (cap > 0 && before + more > cap) {
        atomic_fetch_sub(&c->held, more);
        atomic_fetch_add(&c->refused, 1);
        return NULL;
    }
    size_t now = before + more, seen = atomic_load(&c->peak);
    while (now > seen && !atomic_compare_exchange_weak(&c->peak, &seen, now)) {
    }
    head *nh = realloc(h, sizeof *nh + nsize);
    if (nh == NULL) {
        atomic_fetch_sub(&c->held, more);
        return NULL;
    }
    nh->size = nsize;
    if (nsize < old)
        atomic_fetch_sub(&c->held, old - nsize);
    return nh + 1;
}

static ec_ctx *counted_ctx(counter *c, int threadsafe)
{
    memset(c, 0, sizeof *c);
    c->owner = pthread_self();
    ec_ctx *ctx = NULL;
    assert_int_equal(ec_ctx_new(counted, c, &ctx), EC_OK);
    assert_int_equal(ec_ctx_load_models(ctx, getenv("EPOCHCAST_MODELS")), EC_OK);
    ec_ctx_set_alloc_threadsafe(ctx, threadsafe);
    return ctx;
}

/* A 4-thread sweep of 2 x 64 points on ctx: its status (EC_OK or the first failure). */
static int sweep4(ec_ctx *ctx, int threads)
{
    static const char *const models[] = {"bert-base", "gpt2"};
    const char *batches[64];
    char buf[64][8];
    for (int i = 0; i < 64; i++) {
        snprintf(buf[i], sizeof buf[i], "%d", i + 1);
        batches[i] = buf[i];
    }
    ec_config base;
    ec_config_init(&base);
    snprintf(base.gpu, sizeof base.gpu, "%s", "a100-sxm4-80gb");
    ec_sweep_opts opts;
    ec_sweep_opts_init(&opts);
    opts.threads = threads;
    opts.block = 16;
    ec_sweep *sw = NULL;
    int st = ec_sweep_new(ctx, &base, &opts, &sw);
    if (st == EC_OK)
        st = ec_sweep_axis(sw, "model", models, 2);
    if (st == EC_OK)
        st = ec_sweep_axis(sw, "batch_per_gpu", batches, 64);
    while (st == EC_OK && !ec_sweep_done(sw)) {
        ec_sweep_point pt;
        st = ec_sweep_next(sw, &pt);
    }
    ec_sweep_free(sw);
    return st;
}

static void test_workers_keep_realloc_without_the_declaration(void **state)
{
    (void)state;
    counter c;
    ec_ctx *ctx = counted_ctx(&c, 0);
    assert_int_equal(sweep4(ctx, 4), EC_OK);
    assert_int_equal(atomic_load(&c.foreign), 0);
    ec_ctx_free(ctx);
    assert_int_equal(atomic_load(&c.held), 0);
}

static void test_workers_allocate_through_a_threadsafe_allocator(void **state)
{
    (void)state;
    counter c;
    ec_ctx *ctx = counted_ctx(&c, 1);
    assert_int_equal(sweep4(ctx, 4), EC_OK);
    assert_true(atomic_load(&c.foreign) > 0);
    assert_int_equal(sweep4(ctx, 4), EC_OK); /* the kept worker contexts again */
    ec_ctx_free(ctx);
    assert_int_equal(atomic_load(&c.held), 0); /* every worker block came back through it */
}

static void test_a_cap_holds_for_the_workers(void **state)
{
    (void)state;
    counter c;
    ec_ctx *ctx = counted_ctx(&c, 1);
    size_t loaded = atomic_load(&c.held);    /* a context with the models: what a worker copies */
    assert_int_equal(sweep4(ctx, 1), EC_OK); /* the caller's own predictions fit ... */
    size_t cap = atomic_load(&c.peak) + loaded / 2;
    atomic_store(&c.cap, cap);               /* ... with room for half a worker context more */
    assert_int_equal(sweep4(ctx, 1), EC_OK);
    int st = sweep4(ctx, 4);                 /* three more contexts cannot */
    assert_int_equal(st, EC_ENOMEM);
    assert_true(atomic_load(&c.refused) > 0);
    assert_true(atomic_load(&c.held) <= cap);
    assert_int_equal(sweep4(ctx, 1), EC_OK); /* and the context works on */
    ec_ctx_free(ctx);
    assert_int_equal(atomic_load(&c.held), 0);
}

static void test_null_is_a_no_op(void **state)
{
    (void)state;
    ec_ctx_set_alloc_threadsafe(NULL, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers_keep_realloc_without_the_declaration),
        cmocka_unit_test(test_workers_allocate_through_a_threadsafe_allocator),
        cmocka_unit_test(test_a_cap_holds_for_the_workers),
        cmocka_unit_test(test_null_is_a_no_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
