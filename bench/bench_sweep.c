/*
 * bench_sweep.c: the speed of a sweep in C, the yardstick for ec.sweep in Lua
 * (bench/bench_sweep.lua runs the same sweep; issue 7 wants Lua within 20% of this).
 * Every point is built the way ec.sweep builds it: the base config copied, each axis value
 * set by ec_config_set from its text, then ec_predict.
 *   bench_sweep [REPEATS]      (EPOCHCAST_MODELS or the built-in models/ folder)
 * Prints points, seconds and points per second.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "epochcast.h"

#include <gsl/gsl_errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The sweep of bench_sweep.lua: 4 GPUs x 3 precisions x 6 batches x 2 worker counts. */
static const char *const gpus[] = {"t4", "v100-sxm2-16gb", "a100-sxm4-80gb", "rtx4090"};
static const char *const precisions[] = {"fp32", "amp_fp16", "amp_bf16"};
static const char *const batches[] = {"4", "8", "16", "32", "64", "128"};
static const char *const workers[] = {"0", "4"};
#define N(a) (sizeof a / sizeof a[0])

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time, as os.clock in bench_sweep.lua */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 5;
    gsl_set_error_handler_off();
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, getenv("EPOCHCAST_MODELS")) != EC_OK) {
        fprintf(stderr, "bench_sweep: %s\n", ctx != NULL ? ec_ctx_errmsg(ctx) : "no memory");
        ec_ctx_free(ctx);
        return 1;
    }
    ec_config base;
    ec_config_init(&base);
    if (ec_config_set(ctx, &base, "model", "bert-base") != EC_OK || ec_config_set(ctx, &base, "seq_len", "128") != EC_OK
        || ec_config_set(ctx, &base, "dataset_samples", "100000") != EC_OK) {
        fprintf(stderr, "bench_sweep: %s\n", ec_ctx_errmsg(ctx));
        ec_ctx_free(ctx);
        return 1;
    }
    size_t points = 0;
    double checksum = 0;
    double t0 = now_s();
    for (int r = 0; r < repeats; r++)
        for (size_t g = 0; g < N(gpus); g++)
            for (size_t p = 0; p < N(precisions); p++)
                for (size_t b = 0; b < N(batches); b++)
                    for (size_t w = 0; w < N(workers); w++) {
                        ec_config cfg = base;
                        ec_result res;
                        if (ec_config_set(ctx, &cfg, "gpu", gpus[g]) != EC_OK
                            || ec_config_set(ctx, &cfg, "precision", precisions[p]) != EC_OK
                            || ec_config_set(ctx, &cfg, "batch_per_gpu", batches[b]) != EC_OK
                            || ec_config_set(ctx, &cfg, "num_workers", workers[w]) != EC_OK)
                            return fprintf(stderr, "bench_sweep: %s\n", ec_ctx_errmsg(ctx)), 1;
                        if (ec_predict(ctx, &cfg, &res) == EC_OK)
                            checksum += res.step_s;
                        points++;
                    }
    double dt = now_s() - t0;
    printf("C sweep: %zu points in %.3f s = %.0f points/s (checksum %.6g)\n", points, dt, (double)points / dt, checksum);
    ec_ctx_free(ctx);
    return 0;
}
