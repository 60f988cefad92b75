/*
 * test_threads.c: the library keeps no mutable globals, so contexts on different threads
 * do not interfere (issue 7): 4 threads, each with its own context, predict the same list
 * of configs as a serial run on one context; every result must be bit-identical.
 */
#define _POSIX_C_SOURCE 200809L

#include "ec_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 4
#define N_CFG 600

typedef struct job {
    const ec_config *cfg;
    ec_result *res;
    int *rc;
    int load_rc;
} job;

static void make_configs(ec_config *cfg)
{
    static const char *const models[] = {"bert-base", "bert-large", "gpt2", "resnet50", "vit-b16", "distilbert-base"};
    static const char *const gpus[] = {"t4", "a100-sxm4-80gb", "rtx4090", "v100-sxm2-16gb", "h100-sxm5-80gb", "a16"};
    static const ec_precision prec[] = {EC_PREC_FP32, EC_PREC_AMP_FP16, EC_PREC_AMP_BF16, EC_PREC_TF32};
    for (int i = 0; i < N_CFG; i++) {
        ec_config *c = &cfg[i];
        ec_config_init(c);
        snprintf(c->model, sizeof c->model, "%s", models[i % 6]);
        snprintf(c->gpu, sizeof c->gpu, "%s", gpus[(i / 6) % 6]);
        c->precision = prec[(i / 36) % 4];
        c->batch_per_gpu = 1 + (i * 7) % 96;
        c->num_gpus = i % 5 == 0 ? 8 : 1;
        c->strategy = c->num_gpus > 1 ? EC_STRATEGY_DDP : EC_STRATEGY_SINGLE;
        c->num_workers = i % 3;
        c->dataset_samples = 100000;
    }
}

static void run_all(ec_ctx *ctx, const ec_config *cfg, ec_result *res, int *rc)
{
    for (int i = 0; i < N_CFG; i++)
        rc[i] = ec_predict(ctx, &cfg[i], &res[i]);
}

static void *worker(void *arg)
{
    job *j = arg;
    ec_ctx *ctx = NULL;
    j->load_rc = ec_ctx_new(NULL, NULL, &ctx);
    if (j->load_rc == EC_OK)
        j->load_rc = ec_ctx_load_models(ctx, getenv("EPOCHCAST_MODELS"));
    if (j->load_rc == EC_OK)
        run_all(ctx, j->cfg, j->res, j->rc);
    ec_ctx_free(ctx);
    return NULL;
}

static void test_threads_match_serial(void **state)
{
    (void)state;
    ec_config *cfg = calloc(N_CFG, sizeof *cfg);
    ec_result *serial = calloc(N_CFG, sizeof *serial);
    int *serial_rc = calloc(N_CFG, sizeof *serial_rc);
    make_configs(cfg);
    ec_ctx *ctx = ec_test_ctx();
    run_all(ctx, cfg, serial, serial_rc);
    ec_ctx_free(ctx);

    pthread_t th[N_THREADS];
    job jobs[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        jobs[t] = (job){.cfg = cfg, .res = calloc(N_CFG, sizeof(ec_result)), .rc = calloc(N_CFG, sizeof(int))};
        assert_int_equal(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
    }
    size_t ok = 0;
    for (int t = 0; t < N_THREADS; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        assert_int_equal(jobs[t].load_rc, EC_OK);
        for (int i = 0; i < N_CFG; i++) {
            assert_int_equal(jobs[t].rc[i], serial_rc[i]);
            if (serial_rc[i] == EC_OK && memcmp(&jobs[t].res[i], &serial[i], sizeof serial[i]) != 0)
                fail_msg("thread %d, config %d: step %.17g s, serial %.17g s", t, i, jobs[t].res[i].step_s,
                         serial[i].step_s);
            ok += serial_rc[i] == EC_OK;
        }
        free(jobs[t].res);
        free(jobs[t].rc);
    }
    assert_true(ok > N_THREADS * N_CFG / 2);
    free(cfg);
    free(serial);
    free(serial_rc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads_match_serial)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
