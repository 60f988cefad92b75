/*
 * cli_util.c: output shared by the CLI's commands: predict's cost lines (the result's cost and
 * price fields, models/prices.csv's offer), and a CSV file written through the library's atomic writer (ec_csv_open).  CSV lines on
 * stdout: ec_csv_print_row.
 */
#include "cli.h"

#include <csv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ecC_step_band(const ec_result *res, char *buf, size_t n)
{
    if (res->step_p10_s > 0 && res->step_p90_s > res->step_s)
        snprintf(buf, n, "%.4g-%.4g", res->step_p10_s * 1e3, res->step_p90_s * 1e3);
    else
        snprintf(buf, n, "-");
    return buf;
}

/* The run's cost and the offer it is priced at; without a run, the cost of a million tokens (a
 * thousand samples for a network without tokens) and of an hour; nothing without a price. */
void ecC_print_cost(const ec_config *cfg, const ec_result *res)
{
    if (!(res->price_per_hour > 0)) {
        printf("  cost               %12s   no offer for %s in the price table (price_per_gpu_hour=X prices it)\n", "-",
               cfg->gpu);
        return;
    }
    const char *cur = res->price_currency;
    char m1[48], m2[48];
    if (res->cost_run > 0) {
        printf("  cost               %12s   for the run", ec_format_money(res->cost_run, cur, m1, sizeof m1));
        if (res->cost_per_epoch > 0 && cfg->epochs > 1)
            printf(" (%s per epoch)", ec_format_money(res->cost_per_epoch, cur, m2, sizeof m2));
        printf("\n");
    } else if (res->tokens_per_s != res->samples_per_s && res->cost_per_million_tokens > 0) {
        printf("  cost               %12s   per 1M tokens (train_tokens=N prices the run)\n",
               ec_format_money(res->cost_per_million_tokens, cur, m1, sizeof m1));
    } else if (res->cost_per_million_tokens > 0) { /* a sample is one token here (an image) */
        printf("  cost               %12s   per 1k samples (train_samples=N or dataset_samples=N prices the run)\n",
               ec_format_money(res->cost_per_million_tokens / 1000.0, cur, m1, sizeof m1));
    }
    printf("  price              %12s   per hour: %s\n", ec_format_money(res->price_per_hour, cur, m1, sizeof m1),
           res->price_offer);
}

int ecC_write_csv_file(lua_State *L, ec_ctx *ctx, const char *path, const char *const *fields, size_t nrows,
                       size_t ncols)
{
    void **slot = ecL_newbox(L, ecL_abort_csv);       /* box */
    ec_csv_writer *w = NULL;
    int st = ec_csv_open(ctx, path, &w);
    *slot = w;
    for (size_t r = 0; st == EC_OK && r < nrows; r++)
        st = ec_csv_row(w, fields + r * ncols, ncols);
    w = (ec_csv_writer *)ecL_unbox(L, -1);
    lua_pop(L, 1);
    if (st == EC_OK)
        st = ec_csv_close(w);
    else
        ec_csv_abort(w);
    return st == EC_OK ? 0 : ecC_error("%s", ec_ctx_errmsg(ctx));
}
