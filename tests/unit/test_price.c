/*
 * test_price.c: the cost of a run (core/src/catalog/price.c): the cheapest offer with room for one
 * node's GPUs (a 1-GPU job on an offer sold only as 8 GPUs pays for 8), nodes x the offer,
 * provider=, price_per_gpu_hour=, a user's prices= file and its located errors.
 */
#include "ec_test.h"
#include "internal.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int predict(ec_ctx *ctx, const char *words, ec_result *res)
{
    ec_config cfg;
    char buf[1024];
    ec_config_init(&cfg);
    eci_strlcpy(buf, words, sizeof buf);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        if (ec_config_set_word(ctx, &cfg, w) != EC_OK)
            return -1;
    return ec_predict(ctx, &cfg, res);
}

static char *write_prices(const char *dir, const char *name, const char *text)
{
    char *path = ec_test_path(dir, name);
    ec_test_write_file(path, text, strlen(text));
    return path;
}

static void test_user_prices(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *p = write_prices(dir, "p.csv",
        "provider,instance,gpu,gpus,price_per_hour,currency,date,source\n"
        "acme,one,t4,1,1.00,EUR,2026-01-01,test\n"
        "acme,eight,t4,8,4.00,EUR,2026-01-01,test\n"
        "other,two,Tesla T4,2,1.50,EUR,2026-01-02,test\n");
    char words[1024];
    ec_result r;
    /* 1 GPU: the 1-GPU offer (1.00/h) beats renting 2 (1.50) or 8 (4.00) */
    snprintf(words, sizeof words, "model=bert-base gpu=t4 batch_per_gpu=8 dataset_samples=10000 prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_OK);
    assert_rel(r.price_per_hour, 1.0, EC_TOL_EXACT);
    assert_rel(r.cost_per_epoch, r.epoch_s * 1.0 / 3600, EC_TOL_EXACT);
    assert_rel(r.cost_run, r.run_s * 1.0 / 3600, EC_TOL_EXACT);
    assert_contains(r.price_offer, "acme one");
    /* 4 GPUs: only the 8-GPU offer holds them, and the job pays for all 8 */
    snprintf(words, sizeof words, "model=bert-base gpu=t4 num_gpus=4 batch_per_gpu=8 dataset_samples=10000 prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_OK);
    assert_rel(r.price_per_hour, 4.0, EC_TOL_EXACT);
    /* 16 GPUs: two nodes of 8, two instances */
    snprintf(words, sizeof words, "model=bert-base gpu=t4 num_gpus=16 batch_per_gpu=8 dataset_samples=10000 prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_OK);
    assert_rel(r.price_per_hour, 8.0, EC_TOL_EXACT);
    assert_contains(r.price_offer, " x 2");
    /* provider= keeps that provider's offers */
    snprintf(words, sizeof words, "model=bert-base gpu=t4 batch_per_gpu=8 dataset_samples=10000 provider=other prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_OK);
    assert_rel(r.price_per_hour, 1.5, EC_TOL_EXACT);
    snprintf(words, sizeof words, "model=bert-base gpu=t4 batch_per_gpu=8 dataset_samples=10000 provider=acne prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "did you mean 'acme'");
    /* a GPU the table does not price: cost unknown (0), not an error */
    snprintf(words, sizeof words, "model=bert-base gpu=a10 batch_per_gpu=8 dataset_samples=10000 prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_OK);
    assert_true(r.price_per_hour == 0 && r.cost_run == 0 && r.price_offer[0] == '\0');
    /* price_per_gpu_hour overrides any table: n x price */
    snprintf(words, sizeof words, "model=bert-base gpu=t4 num_gpus=4 batch_per_gpu=8 dataset_samples=10000 "
             "price_per_gpu_hour=2.5 prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_OK);
    assert_rel(r.price_per_hour, 10.0, EC_TOL_EXACT);
    /* no epoch: no cost, the hourly price still known */
    snprintf(words, sizeof words, "model=bert-base gpu=t4 batch_per_gpu=8 prices=%s", p);
    assert_int_equal(predict(ctx, words, &r), EC_OK);
    assert_true(r.cost_per_epoch == 0 && r.price_per_hour > 0);
    free(p);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

static void expect_bad(ec_ctx *ctx, const char *dir, const char *text, const char *msg)
{
    char *p = write_prices(dir, "bad.csv", text);
    char words[1024];
    ec_result r;
    snprintf(words, sizeof words, "model=bert-base gpu=t4 batch_per_gpu=8 prices=%s", p);
    int rc = predict(ctx, words, &r);
    assert_true(rc == EC_EPARSE || rc == EC_EIO);
    assert_contains(ec_ctx_errmsg(ctx), "key 'prices'");
    assert_contains(ec_ctx_errmsg(ctx), msg);
    free(p);
}

static void test_bad_prices(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    const char *h = "provider,instance,gpu,gpus,price_per_hour,currency,date,source\n";
    char t[512];
    snprintf(t, sizeof t, "%sacme,one,t44,1,1,USD,2026-01-01,x\n", h);
    expect_bad(ctx, dir, t, "bad.csv:2:3: column 'gpu': unknown gpu 't44'");
    snprintf(t, sizeof t, "%sacme,one,t4,1,1,USD,2026-13-01,x\n", h);
    expect_bad(ctx, dir, t, "bad.csv:2:7: column 'date'");
    snprintf(t, sizeof t, "%sacme,one,t4,1,1,USD,2026-01-01,x\nacme,two,t4,2,2,EUR,2026-01-01,x\n", h);
    expect_bad(ctx, dir, t, "bad.csv:3:6: column 'currency': 'EUR' differs from 'USD'");
    snprintf(t, sizeof t, "%sacme,one,t4,0,1,USD,2026-01-01,x\n", h);
    expect_bad(ctx, dir, t, "column 'gpus': 0 is out of range [1, 1024]");
    snprintf(t, sizeof t, "%sacme,one,t4,1,1,USD,2026-01-01,\n", h);
    expect_bad(ctx, dir, t, "column 'source': is empty");
    expect_bad(ctx, dir, "provider,instance,gpu,gpus,price_per_hour,currency,date\nacme,one,t4,1,1,USD,2026-01-01\n",
               "missing column 'source'");
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* The shipped table: every row's GPU is a profile, prices are positive; a plan's example GPUs
 * are all priced somewhere. */
static void test_shipped_prices(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const gpus[] = {"t4", "a10", "a100-sxm4-80gb", "h100-sxm5-80gb", "l4", "l40s", "b200", "gh200"};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        char words[256];
        ec_result r;
        snprintf(words, sizeof words, "model=bert-base gpu=%s batch_per_gpu=8 dataset_samples=1000", gpus[i]);
        assert_int_equal(predict(ctx, words, &r), EC_OK);
        if (!(r.price_per_hour > 0))
            fail_msg("%s has no price in models/prices.csv", gpus[i]);
        assert_contains(r.price_offer, "USD");
    }
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_prices),
        cmocka_unit_test(test_bad_prices),
        cmocka_unit_test(test_shipped_prices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
