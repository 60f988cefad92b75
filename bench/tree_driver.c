/*
 * tree_driver.c: the same BERT-large loop against any tree's library, for comparing the
 * simulator's speed across commits with one harness (bench_speed changed between them: the one
 * of 7c3c154 formats the GPU name before every prediction).  Batches 1..32 on the A100 (the GPU
 * name set once per 32, as a sweep sets a key when it changes), after a warm-up of 224 calls.
 * Not built by CMake: link it against the static library of the tree to measure, e.g.
 *
 *   gcc -O2 -flto bench/tree_driver.c -I TREE/core/include TREE/build/core/libepochcast.a \
 *       -lgsl -lgslcblas -lcsv -ljansson -lm -o /tmp/driver_TREE
 *   /tmp/driver_TREE TREE/models 100000
 *
 * (trees before issue 17, such as 7c3c154, build TREE/build/libepochcast_core.a, without LTO
 * and without jansson: drop -flto and -ljansson there)
 * and run the binaries in turn, many rounds (bench/results/speed.md, fifth and sixth sessions).
 */
#define _POSIX_C_SOURCE 200809L
#include "epochcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

__attribute__((noinline)) static double measured(ec_ctx *ctx, const ec_config *base, long n)
{
    ec_config c = *base;
    ec_result r;
    double sum = 0;
    for (long i = 0; i < n; i++) {
        c.batch_per_gpu = 1 + (int)(i % 32);
        if (i % 32 == 0)
            snprintf(c.gpu, sizeof c.gpu, "%s", "a100-sxm4-80gb");
        if (ec_predict(ctx, &c, &r) != EC_OK) {
            fprintf(stderr, "%s\n", ec_ctx_errmsg(ctx));
            exit(1);
        }
        sum += r.step_s;
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tree_driver MODELS_DIR PREDICTIONS\n");
        return 2;
    }
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, argv[1]) != EC_OK) {
        fprintf(stderr, "%s\n", ctx != NULL ? ec_ctx_errmsg(ctx) : "no context");
        return 1;
    }
    ec_config c;
    ec_config_init(&c);
    const char *words[] = {"model=bert-large", "task=squad", "seq_len=384", "precision=amp_fp16"};
    for (int i = 0; i < 4; i++)
        if (ec_config_set_word(ctx, &c, words[i]) != EC_OK) {
            fprintf(stderr, "%s\n", ec_ctx_errmsg(ctx));
            return 1;
        }
    long n = atol(argv[2]);
    measured(ctx, &c, 224);
    double t = now_s();
    double sum = measured(ctx, &c, n);
    t = now_s() - t;
    printf("%ld predictions %.3f s %.0f /s (checksum %.6g)\n", n, t, (double)n / t, sum);
    ec_ctx_free(ctx);
    return 0;
}
