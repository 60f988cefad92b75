/*
 * sdpa.c: models/sdpa_backends.csv, the fused attention kernel PyTorch's scaled_dot_product_attention
 * dispatches to, by release (torch_version), the GPU's compute capability and 16-bit or fp32
 * inputs, each row with its public source (sdp_utils.cpp's priority order and checks, release
 * notes).  Rows are read in file order and the first that applies wins, as sdp_utils.cpp tries
 * its backends; a row with empty torch_from and torch_to also applies when torch_version is unset.
 * A last row for every release, GPU and dtype is required, so every lookup finds one.  The
 * optional attn_mask column says whether the backend takes an attn_mask: `none` (flash: a
 * batch with a padding mask skips the row, as sdp_utils.cpp's check_for_attn_mask does) or
 * `any` (empty: any); the last row must take one.  The kernel's efficiency is then
 * attention.csv's (model/compute.c, eci_attn_kernel_for).
 */
#include "catalog/catalog.h"

#include <string.h>

typedef struct sdpa_row {
    int from, to;        /* torch releases (EC_RELEASE), 0: open */
    double min_cc, max_cc; /* max 0: open */
    int dtype;           /* 0 both, 1 16-bit, 2 fp32 */
    int kernel;          /* ECI_AK_ */
    int unmasked_only;   /* attn_mask none: not with an attn_mask */
} sdpa_row;

struct eci_sdpa {
    sdpa_row *rows;
    size_t n;
};

/* An optional number: an empty cell is 0. */
static int opt_number(ec_ctx *ctx, const eci_table *t, size_t r, int col, double lo, double hi, double *out)
{
    *out = 0;
    return eci_table_cell(t, r, col)[0] == '\0' ? EC_OK : eci_table_number(ctx, t, r, col, lo, hi, out);
}

/* An optional release ("2.10"): an empty cell is 0, open. */
static int opt_release(ec_ctx *ctx, const eci_table *t, size_t r, int col, int *out)
{
    *out = 0;
    return eci_table_cell(t, r, col)[0] == '\0' ? EC_OK : eci_table_release(ctx, t, r, col, out);
}

static int parse_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int col[8], sdpa_row *row)
{
    size_t line = eci_table_line(t, r);
    const char *dtype = eci_table_cell(t, r, col[4]), *backend = eci_table_cell(t, r, col[5]);
    const char *mask = col[7] >= 0 ? eci_table_cell(t, r, col[7]) : "";
    char echo[48];
    int rc;
    *row = (sdpa_row){.kernel = -1};
    if ((rc = opt_release(ctx, t, r, col[0], &row->from)) != EC_OK ||
        (rc = opt_release(ctx, t, r, col[1], &row->to)) != EC_OK ||
        (rc = eci_table_number(ctx, t, r, col[2], 0, 99, &row->min_cc)) != EC_OK ||
        (rc = opt_number(ctx, t, r, col[3], row->min_cc, 99, &row->max_cc)) != EC_OK)
        return rc;
    if (row->from > 0 && row->to > 0 && row->from > row->to)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: torch_from %s is after torch_to %s", path, line,
                         eci_table_cell(t, r, col[0]), eci_table_cell(t, r, col[1]));
    row->dtype = strcmp(dtype, "*") == 0 ? 0 : strcmp(dtype, "16bit") == 0 ? 1 : strcmp(dtype, "fp32") == 0 ? 2 : -1;
    if (row->dtype < 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: dtype '%s' is not 16bit, fp32 or '*'", path, line,
                         eci_echo(echo, sizeof echo, dtype));
    if (strcmp(mask, "none") != 0 && strcmp(mask, "any") != 0 && mask[0] != '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: attn_mask '%s' is not none, any or empty", path, line,
                         eci_echo(echo, sizeof echo, mask));
    row->unmasked_only = strcmp(mask, "none") == 0;
    for (int k = 0; k < ECI_AK_N; k++)
        if (k != ECI_AK_FLASH3 && k != ECI_AK_FLASH4 && k != ECI_AK_TRITON && strcmp(backend, eci_attn_kernel_name(k)) == 0)
            row->kernel = k;
    if (row->kernel < 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: backend '%s' is not one SDPA prices (flash1, flash2, cudnn, "
                         "sdpa_mem_efficient; attention.csv has no math rows)", path, line,
                         eci_echo(echo, sizeof echo, backend));
    if (eci_table_cell(t, r, col[6])[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: backend '%s': empty source (every SDPA dispatch rule names its "
                         "public source)", path, line, backend);
    return EC_OK;
}

int eci_sdpa_kernel(const ec_ctx *ctx, int torch_release, double compute_capability, int half, int masked)
{
    const struct eci_sdpa *s = ctx->sdpa;
    for (size_t i = 0; s != NULL && i < s->n; i++) {
        const sdpa_row *w = &s->rows[i];
        int unset = torch_release <= 0;
        if ((w->from > 0 && (unset || torch_release < w->from)) || (w->to > 0 && (unset || torch_release > w->to)))
            continue;
        if (compute_capability < w->min_cc || (w->max_cc > 0 && compute_capability > w->max_cc) ||
            (masked && w->unmasked_only))
            continue;
        if (w->dtype == 0 || w->dtype == (half ? 1 : 2))
            return w->kernel;
    }
    return ECI_AK_MEM_EFFICIENT; /* not reached: the load requires a row for everything */
}

void eci_sdpa_free(ec_ctx *ctx)
{
    if (ctx->sdpa == NULL)
        return;
    eci_free(ctx, ctx->sdpa->rows, ctx->sdpa->n * sizeof *ctx->sdpa->rows);
    eci_free(ctx, ctx->sdpa, sizeof *ctx->sdpa);
    ctx->sdpa = NULL;
}

int eci_sdpa_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[7] = {"torch_from", "torch_to", "min_cc", "max_cc", "dtype", "backend", "source"};
    eci_table *t = NULL;
    int col[8], rc = eci_table_load(ctx, path, &t);
    size_t n = 0;
    if (rc != EC_OK)
        return rc;
    for (int c = 0; c < 7 && rc == EC_OK; c++)
        rc = eci_table_require(ctx, t, COLUMNS[c], &col[c]);
    col[7] = rc == EC_OK ? eci_table_col(t, "attn_mask") : -1; /* optional: absent, every row takes a mask */
    if (rc == EC_OK && (n = eci_table_rows(t)) == 0)
        rc = eci_error(ctx, EC_EPARSE, "%s: no data rows", path);
    if (rc == EC_OK && (ctx->sdpa = eci_calloc(ctx, 1, sizeof *ctx->sdpa)) == NULL)
        rc = EC_ENOMEM;
    if (rc == EC_OK && (ctx->sdpa->rows = eci_calloc(ctx, n, sizeof *ctx->sdpa->rows)) == NULL)
        rc = EC_ENOMEM;
    if (rc == EC_OK)
        ctx->sdpa->n = n;
    for (size_t r = 0; rc == EC_OK && r < n; r++)
        rc = parse_row(ctx, path, t, r, col, &ctx->sdpa->rows[r]);
    if (rc == EC_OK) {
        const sdpa_row *last = &ctx->sdpa->rows[n - 1];
        if (last->from > 0 || last->to > 0 || last->min_cc > 0 || last->max_cc > 0 || last->dtype != 0 ||
            last->unmasked_only)
            rc = eci_error(ctx, EC_EPARSE, "%s:%zu: the last row must apply to every release, GPU and dtype, "
                           "with a mask too (empty torch_from, torch_to and max_cc, min_cc 0, dtype '*', attn_mask "
                           "not none)", path,
                           eci_table_line(t, n - 1));
    }
    eci_table_free(t);
    if (rc != EC_OK)
        eci_sdpa_free(ctx);
    return rc;
}
