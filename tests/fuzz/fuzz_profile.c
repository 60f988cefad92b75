/*
 * fuzz_profile.c: libFuzzer harness for the profile reader (ec_profile_read in calibrate.c).
 * A profile that reads must be accepted by ec_ctx_set_fit and give sane predictions.
 */
#include "fuzz_common.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ec_ctx *ctx;
    if (ctx == NULL && (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, fuzz_models_dir()) != EC_OK))
        abort();
    const char *path = fuzz_write("profile.csv", data, size);
    ec_fit_report rep;
    int rc = ec_profile_read(ctx, path, &rep);
    fuzz_check_error(ctx, rc);
    if (rc == EC_OK) {
        if (ec_ctx_set_fit(ctx, &rep) != EC_OK)
            abort(); /* what the reader accepts, the context must take */
        ec_config c;
        ec_result res;
        ec_config_init(&c);
        snprintf(c.model, sizeof c.model, "bert-base");
        snprintf(c.gpu, sizeof c.gpu, "t4");
        c.batch_per_gpu = 8;
        if (ec_predict(ctx, &c, &res) != EC_OK)
            abort();
        fuzz_check_result(&res);
        ec_ctx_set_fit(ctx, NULL);
    }
    return 0;
}
