/*
 * fuzz_json.c: libFuzzer harness for config.json models (hfconfig.c, arch.c, net.c and the
 * expansion in workload.c).  The input is a config file given as model=PATH; what builds must
 * register, report a finite parameter count and predict sanely on a GPU; what fails must
 * leave a message.  The context is made afresh every 256 inputs (each path registers once).
 */
#include "fuzz_common.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ec_ctx *ctx;
    static unsigned long n;
    if (ctx != NULL && n % 256 == 0) {
        ec_ctx_free(ctx);
        ctx = NULL;
    }
    if (ctx == NULL && (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, fuzz_models_dir()) != EC_OK))
        abort();
    char name[64];
    snprintf(name, sizeof name, "config-%lu.json", n++ % 256);
    const char *path = fuzz_write(name, data, size);
    ec_model_info m;
    int rc = ec_model_find(ctx, path, &m);
    fuzz_check_error(ctx, rc);
    if (rc != EC_OK)
        return 0;
    if (!(m.params >= 0 && m.params < 1e16))
        abort();
    ec_config c;
    ec_result res;
    ec_config_init(&c);
    snprintf(c.model, sizeof c.model, "%s", path);
    snprintf(c.gpu, sizeof c.gpu, "h100-sxm5-80gb");
    c.batch_per_gpu = 1;
    c.seq_len = 64;
    c.data_synthetic = 1;
    rc = ec_predict(ctx, &c, &res);
    fuzz_check_error(ctx, rc);
    if (rc == EC_OK)
        fuzz_check_result(&res);
    return 0;
}
