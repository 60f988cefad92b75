/*
 * bench_ir.c: a fixed amount of prediction work for counting instructions (callgrind), the
 * machine-independent twin of bench_speed's wall-clock rates.  It predicts one config over
 * bench_speed's sweep pattern (batch 1..32, seven GPUs in turn): first one pass over every
 * batch and GPU (the workload and op cost caches fill), then N more predictions inside
 * measured_loop.  bench/ir_per_prediction.sh runs it under callgrind for two N and divides
 * the difference by the difference of N: warm-up and loading cancel out.
 *
 *   bench_ir MODELS_DIR N [--layouts] key=value ...
 * --layouts: the 64-GPU section's sweep instead (ten dp x tp x pp layouts, micro-batch 1..4).
 */
#include "epochcast.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gpus[] = {"a100-sxm4-80gb", "t4", "rtx4090", "v100-sxm2-16gb", "h100-sxm5-80gb", "a16", "l4"};
#define N_GPUS (sizeof gpus / sizeof gpus[0])

/* --layouts: the layouts dp x tp x pp of bench_speed's 64-GPU section (tp within a node) and
 * micro-batches 1..4, instead of batches 1..32 on each GPU in turn. */
static const int layouts[][2] = {{1, 1}, {2, 1}, {8, 1}, {1, 4}, {2, 2}, {2, 4}, {4, 2}, {4, 4}, {8, 2}, {2, 8}};
#define N_LAYOUTS (sizeof layouts / sizeof layouts[0])

double measured_loop(ec_ctx *ctx, ec_config *c, long n, int by_layout);

/* noinline: callgrind counts this function by name */
__attribute__((noinline)) double measured_loop(ec_ctx *ctx, ec_config *c, long n, int by_layout)
{
    ec_result r;
    double sum = 0;
    for (long i = 0; i < n; i++) {
        if (by_layout) {
            c->tp = layouts[(size_t)i % N_LAYOUTS][0];
            c->pp = layouts[(size_t)i % N_LAYOUTS][1];
            c->sequence_parallel = c->tp > 1;
            c->batch_per_gpu = 1 + (int)((size_t)(i / (long)N_LAYOUTS) % 4);
        } else {
            c->batch_per_gpu = 1 + (int)(i % 32);
            if (i % 32 == 0) /* the GPU changes every 32 (a sweep sets a key when it changes) */
                snprintf(c->gpu, sizeof c->gpu, "%s", gpus[(size_t)(i / 32) % N_GPUS]);
        }
        if (ec_predict(ctx, c, &r) != EC_OK) {
            fprintf(stderr, "bench_ir: %s\n", ec_ctx_errmsg(ctx));
            exit(1);
        }
        sum += r.step_s;
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_ir MODELS_DIR N key=value ...\n");
        return 2;
    }
    gsl_set_error_handler_off();
    ec_ctx *ctx;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, argv[1]) != EC_OK) {
        fprintf(stderr, "bench_ir: %s\n", ctx != NULL ? ec_ctx_errmsg(ctx) : "out of memory");
        return 1;
    }
    ec_config c;
    ec_config_init(&c);
    int by_layout = argc > 3 && strcmp(argv[3], "--layouts") == 0;
    for (int i = 3 + by_layout; i < argc; i++)
        if (ec_config_set_word(ctx, &c, argv[i]) != EC_OK) {
            fprintf(stderr, "bench_ir: %s\n", ec_ctx_errmsg(ctx));
            return 1;
        }
    /* warm: every batch on every GPU (or every layout and batch) once */
    double sum = measured_loop(ctx, &c, by_layout ? 4 * (long)N_LAYOUTS : 32 * (long)N_GPUS, by_layout);
    sum += measured_loop(ctx, &c, atol(argv[2]), by_layout);
    printf("%.17g\n", sum);
    ec_ctx_free(ctx);
    return sum > 0 ? 0 : 1;
}
