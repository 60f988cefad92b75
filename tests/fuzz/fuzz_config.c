/*
 * fuzz_config.c: libFuzzer harness for ec_config_set_word, ec_predict and ec_max_batch over
 * arbitrary configs.  The bytes are key=value words separated by whitespace; a base of
 * model, gpu and batch comes first so most inputs predict.  Results must be finite and
 * non-negative, failures must say why, and max_batch must stay within its limit.
 */
#include "fuzz_common.h"

#include <ctype.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ec_ctx *ctx;
    if (ctx == NULL && (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, fuzz_models_dir()) != EC_OK))
        abort();
    ec_config c;
    ec_config_init(&c);
    ec_config_set_word(ctx, &c, "model=bert-base");
    ec_config_set_word(ctx, &c, "gpu=t4");
    ec_config_set_word(ctx, &c, "batch_per_gpu=8");
    char word[512];
    size_t i = 0;
    while (i < size) {
        while (i < size && isspace(data[i]))
            i++;
        size_t n = 0;
        while (i < size && !isspace(data[i]) && n + 1 < sizeof word)
            word[n++] = (char)data[i++];
        while (i < size && !isspace(data[i]))
            i++;
        if (n == 0)
            continue;
        word[n] = '\0';
        fuzz_check_error(ctx, ec_config_set_word(ctx, &c, word));
    }
    ec_result res;
    int rc = ec_predict(ctx, &c, &res);
    fuzz_check_error(ctx, rc);
    if (rc == EC_OK) {
        fuzz_check_result(&res);
        int best = -1;
        rc = ec_max_batch(ctx, &c, 256, &best);
        fuzz_check_error(ctx, rc);
        if (rc == EC_OK && (best < 0 || best > 256))
            abort();
    }
    return 0;
}
