/*
 * bench_pipeline.c: how long one prediction of a 10,000-step epoch takes (issue 7's target:
 * under 20 ms on one core).  Each prediction evaluates the step model at its padded-length
 * knots and runs the discrete-event simulation of the epoch (pipeline.c).
 *   ./build/bench/bench_pipeline [repetitions]
 */
#define _POSIX_C_SOURCE 200809L
#include "epochcast.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    static const char *const cases[][2] = {
        {"max_length, num_workers=0", "model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=32 seq_len=128 "
                                      "dataset_samples=320000"},
        {"dynamic lognormal, 4 workers, pinned", "model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=32 seq_len=512 "
                                                 "padding=dynamic lengths=lognormal(120,0.8) num_workers=4 "
                                                 "pin_memory=1 tokenize=on_the_fly dataset_samples=320000"},
        {"bucketed, 16 workers on 8 cores", "model=bert-base gpu=a100-sxm4-80gb batch_per_gpu=32 seq_len=512 "
                                            "padding=bucketed lengths=lognormal(120,0.8) num_workers=16 "
                                            "host=cloud-8vcpu tokenize=on_the_fly dataset_samples=320000"},
    };
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    gsl_set_error_handler_off();
    ec_ctx *ctx;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, NULL) != EC_OK) {
        fprintf(stderr, "bench_pipeline: %s\n", ctx ? ec_ctx_errmsg(ctx) : "out of memory");
        return 1;
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ec_config cfg;
        ec_result res;
        ec_config_init(&cfg);
        char words[512];
        snprintf(words, sizeof words, "%s", cases[c][1]);
        for (char *w = strtok(words, " "); w != NULL; w = strtok(NULL, " "))
            if (ec_config_set_word(ctx, &cfg, w) != EC_OK) {
                fprintf(stderr, "bench_pipeline: %s\n", ec_ctx_errmsg(ctx));
                return 1;
            }
        double t0 = now_s();
        for (int r = 0; r < reps; r++)
            if (ec_predict(ctx, &cfg, &res) != EC_OK) {
                fprintf(stderr, "bench_pipeline: %s\n", ec_ctx_errmsg(ctx));
                return 1;
            }
        double ms = (now_s() - t0) / reps * 1e3;
        printf("%-40s %6.0f steps/epoch  %7.2f ms per prediction  (epoch %.1f s, p10 %.1f, p90 %.1f)\n", cases[c][0],
               res.steps_per_epoch, ms, res.epoch_s, res.epoch_p10_s, res.epoch_p90_s);
    }
    ec_ctx_free(ctx);
    return 0;
}
