/*
 * fuzz_models.c: libFuzzer harness for the models/ table loaders (hw.c, host.c, net.c,
 * consts.c, the profile).  The first byte picks the table; the rest replaces that file in a
 * scratch copy of the shipped models/ folder, which ec_ctx_load_models then loads.  What
 * loads must predict sanely for every network on a few GPUs.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const tables[] = {"gpus.csv", "hosts.csv", "networks.csv", "constants.csv", "profile.csv",
                                     "interconnects.csv", "attention.csv", "membw.csv", "l2.csv",
                                     "gemm.csv", "gemm_shapes.csv", "sdpa_backends.csv", "conv_algos.csv",
        "nccl_tuning.csv", "tp_overlap.csv"};
/* the tables an input may replace (its first byte picks one): attention.csv, membw.csv and the gemm
 * tables, added later, are copied but not fuzzed, so the corpus's inputs keep their tables */
#define N_TABLES 6
#define N_COPIED (sizeof tables / sizeof tables[0])

/* Copy the shipped tables into scratch once. */
static void copy_models(void)
{
    static int done;
    if (done)
        return;
    for (size_t i = 0; i < N_COPIED; i++) {
        char from[1024];
        snprintf(from, sizeof from, "%s/%s", fuzz_models_dir(), tables[i]);
        FILE *f = fopen(from, "rb");
        if (f == NULL)
            abort();
        static unsigned char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        fuzz_write(tables[i], buf, n);
    }
    /* networks.csv names config files in networks/: link the shipped folder */
    char target[1024], link[1024];
    snprintf(target, sizeof target, "%s/networks", fuzz_models_dir());
    snprintf(link, sizeof link, "%s/networks", fuzz_scratch());
    char *real = realpath(target, NULL);
    if (real == NULL || (symlink(real, link) != 0 && errno != EEXIST))
        abort();
    free(real);
    done = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    copy_models();
    size_t which = data[0] % N_TABLES;
    char saved[1024];
    snprintf(saved, sizeof saved, "%s/%s", fuzz_models_dir(), tables[which]);
    fuzz_write(tables[which], data + 1, size - 1);
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK)
        abort();
    int rc = ec_ctx_load_models(ctx, fuzz_scratch());
    fuzz_check_error(ctx, rc);
    for (size_t m = 0; rc == EC_OK && m < ec_model_count(ctx); m++) {
        for (size_t g = 0; g < ec_gpu_count(ctx) && g < 3; g++) {
            ec_model_info mi;
            ec_gpu_info gi;
            ec_config c;
            ec_result res;
            ec_model_get(ctx, m, &mi);
            ec_gpu_get(ctx, g, &gi);
            ec_config_init(&c);
            snprintf(c.model, sizeof c.model, "%s", mi.id);
            snprintf(c.gpu, sizeof c.gpu, "%s", gi.id);
            c.batch_per_gpu = 4;
            int prc = ec_predict(ctx, &c, &res);
            fuzz_check_error(ctx, prc);
            if (prc == EC_OK)
                fuzz_check_result(&res);
        }
    }
    ec_ctx_free(ctx);
    /* put the shipped table back for the next input */
    FILE *f = fopen(saved, "rb");
    static unsigned char buf[1 << 20];
    size_t n = f != NULL ? fread(buf, 1, sizeof buf, f) : 0;
    if (f == NULL)
        abort();
    fclose(f);
    fuzz_write(tables[which], buf, n);
    return 0;
}
