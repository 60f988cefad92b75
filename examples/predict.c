/*
 * predict.c: the smallest program that embeds libepochcast.  It creates a context, loads the
 * models/ folder (the one given as the first argument, else $EPOCHCAST_MODELS, else the one
 * installed beside the library: see ec_default_models_dir in epochcast.h), predicts BERT-base
 * fine-tuning on one T4 and prints the step time.  It turns GSL's error handler off first, as
 * epochcast.h asks of every host (GSL's default handler aborts the process): GSL comes with
 * epochcast's link flags (epochcast.pc's Requires, the CMake targets' interface).
 *
 *   cc predict.c $(pkg-config --cflags --libs epochcast) -o predict     (pkg-config)
 *   cmake -S examples -B build-example && cmake --build build-example  (find_package)
 *   ./predict [MODELS_DIR]
 */
#include <epochcast.h>
#include <gsl/gsl_errno.h>

#include <stdio.h>

static int fail(ec_ctx *ctx, int rc)
{
    const char *msg = ctx != NULL ? ec_ctx_errmsg(ctx) : "";
    fprintf(stderr, "predict: %s\n", msg[0] != '\0' ? msg : ec_strerror(rc));
    ec_ctx_free(ctx);
    return 1;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    char dir[EC_PATH_MAX];
    ec_ctx *ctx = NULL;
    int rc = ec_ctx_new(NULL, NULL, &ctx);
    if (rc != EC_OK)
        return fail(NULL, rc);
    if (argc > 1)
        snprintf(dir, sizeof dir, "%s", argv[1]);
    else if ((rc = ec_default_models_dir(dir, sizeof dir)) != EC_OK)
        return fail(ctx, rc);
    if ((rc = ec_ctx_load_models(ctx, dir)) != EC_OK)
        return fail(ctx, rc);

    /* The same key=value words as `epochcast predict` and the Lua tables. */
    const char *const words[] = {"model=bert-base", "task=classify", "gpu=t4", "precision=amp_fp16",
                                 "batch_per_gpu=32", "seq_len=128"};
    ec_config cfg;
    ec_config_init(&cfg);
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if ((rc = ec_config_set_word(ctx, &cfg, words[i])) != EC_OK)
            return fail(ctx, rc);

    ec_result res;
    if ((rc = ec_predict(ctx, &cfg, &res)) != EC_OK)
        return fail(ctx, rc);
    printf("epochcast %s, models: %s\n", EC_VERSION, dir);
    /* the step's p10-p90: the interval the profile's held-out errors give */
    printf("bert-base on t4, amp_fp16, batch 32 x 128 tokens: step %.1f ms (p10 %.1f, p90 %.1f), %.1f samples/s, "
           "peak memory %.2f of %.2f GiB, bottleneck %s\n",
           res.step_s * 1e3, res.step_p10_s * 1e3, res.step_p90_s * 1e3, res.samples_per_s,
           res.memory.peak_bytes / 1073741824.0,
           res.memory.capacity_bytes / 1073741824.0, ec_bottleneck_name(res.bottleneck));
    ec_ctx_free(ctx);
    return 0;
}
