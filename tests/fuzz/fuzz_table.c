/*
 * fuzz_table.c: libFuzzer harness for the CSV table reader (core/src/base/table.c).  The bytes
 * are a CSV file; the first byte also picks the size of the pieces fed to libcsv, so the
 * fuzzer explores chunk boundaries too.  On success every cell is read as text, number
 * and integer, and every header is looked up.  Checks for crashes, UB and leaks only.
 */
#include "internal.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int eci_table_parse_chunked(ec_ctx *ctx, const char *name, const char *buf, size_t len,
                            size_t chunk, eci_table **out);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK)
        return 0;
    size_t chunk = size > 0 ? data[0] % 17 : 0; /* 0: the default */
    eci_table *t = NULL;
    int rc = eci_table_parse_chunked(ctx, "fuzz.csv", (const char *)data, size, chunk, &t);
    if (rc == EC_OK) {
        size_t rows = eci_table_rows(t), cols = eci_table_cols(t);
        volatile size_t sink = strlen(eci_table_name(t));
        for (size_t c = 0; c < cols; c++) {
            const char *h = eci_table_header(t, c);
            int col = -1;
            sink += strlen(h);
            if (eci_table_require(ctx, t, h, &col) != EC_OK || col < 0 || (size_t)col > c)
                __builtin_trap(); /* a header must find itself (or an earlier twin: none) */
        }
        int missing = -1;
        (void)eci_table_require(ctx, t, "no such column", &missing);
        for (size_t r = 0; r < rows; r++) {
            sink += eci_table_line(t, r);
            for (size_t c = 0; c < cols; c++) {
                double d;
                long l;
                sink += strlen(eci_table_cell(t, r, (int)c));
                (void)eci_table_number(ctx, t, r, (int)c, -1e300, 1e300, &d);
                (void)eci_table_int(ctx, t, r, (int)c, LONG_MIN, LONG_MAX, &l);
                sink += strlen(ec_ctx_errmsg(ctx));
            }
        }
        (void)sink;
        eci_table_free(t);
    } else if (t != NULL || ec_ctx_errmsg(ctx)[0] == '\0') {
        __builtin_trap(); /* a failure leaves no table and always says why */
    }
    ec_ctx_free(ctx);
    return 0;
}
