/*
 * fuzz_runs.c: libFuzzer harness for the run-record reader (core/src/fit/runs.c).  The bytes are
 * a run-record CSV; on success every run (up to 16) is predicted and the result checked.
 */
#include "fuzz_common.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ec_ctx *models; /* harness state, not the library's: loaded once */
    if (models == NULL && (ec_ctx_new(NULL, NULL, &models) != EC_OK ||
                           ec_ctx_load_models(models, fuzz_models_dir()) != EC_OK))
        abort();
    const char *path = fuzz_write("runs.csv", data, size);
    ec_runs *runs = NULL;
    int rc = ec_runs_load(models, path, &runs);
    fuzz_check_error(models, rc);
    for (size_t i = 0; rc == EC_OK && i < ec_runs_count(runs) && i < 16; i++) {
        ec_result res;
        int prc = ec_predict(models, &ec_runs_get(runs, i)->config, &res);
        fuzz_check_error(models, prc);
        if (prc == EC_OK)
            fuzz_check_result(&res);
    }
    ec_runs_free(runs);
    return 0;
}
