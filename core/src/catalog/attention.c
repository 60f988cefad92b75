/*
 * attention.c: models/attention.csv, the achieved efficiency of each fused attention kernel
 * (FlashAttention-2 and -3, the Triton FlashAttention of 2023, cuDNN's fused attention,
 * PyTorch's memory-efficient SDPA backend) per GPU architecture, forward and backward, causal
 * and not, each row with its public source (papers' figures, the kernels' own benchmarks).
 * Loaded after gpus.csv: every GPU gets its architecture's rows, else the prior rows
 * (architecture '*'), so a prediction reads its kernel's efficiency without a lookup
 * (model/compute.c, eci_rates_attention).  A kernel with neither has from = ECI_AK_NONE: the
 * GPU cannot run it (FlashAttention-3 off Hopper), which model/layout.c refuses.
 */
#include "catalog/catalog.h"

#include <string.h>

static const char *const KERNELS[ECI_AK_N] = {"flash2", "flash3", "triton", "cudnn", "sdpa_mem_efficient"};

const char *eci_attn_kernel_name(int kernel)
{
    return kernel >= 0 && kernel < ECI_AK_N ? KERNELS[kernel] : "?";
}

/* One data row, parsed. */
typedef struct attn_row {
    int kernel, pass, causal; /* causal -1: the row holds for both */
    const char *arch;
    double frac;
    size_t line;
} attn_row;

static int parse_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, void *out)
{
    attn_row *row = out;
    size_t line = eci_table_line(t, r);
    const char *kernel = eci_table_cell(t, r, col[0]), *pass = eci_table_cell(t, r, col[2]);
    const char *causal = eci_table_cell(t, r, col[3]), *source = eci_table_cell(t, r, col[5]);
    char echo[48];
    *row = (attn_row){.kernel = -1, .arch = eci_table_cell(t, r, col[1]), .line = line};
    for (int k = 0; k < ECI_AK_N; k++)
        if (strcmp(kernel, KERNELS[k]) == 0)
            row->kernel = k;
    if (row->kernel < 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: unknown kernel '%s' (flash2, flash3, triton, cudnn, "
                         "sdpa_mem_efficient)", path, line, eci_echo(echo, sizeof echo, kernel));
    if (row->arch[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s': empty architecture (a gpus.csv architecture, or '*' "
                         "for the prior)", path, line, kernel);
    if (strcmp(pass, "fwd") != 0 && strcmp(pass, "bwd") != 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s': pass '%s' is not fwd or bwd", path, line, kernel,
                         eci_echo(echo, sizeof echo, pass));
    row->pass = pass[0] == 'b';
    if (causal[0] != '\0' && strcmp(causal, "0") != 0 && strcmp(causal, "1") != 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s': causal '%s' is not 0, 1 or empty (both)", path, line,
                         kernel, eci_echo(echo, sizeof echo, causal));
    row->causal = causal[0] == '\0' ? -1 : causal[0] - '0';
    if (source[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': empty source (every efficiency names its "
                         "public source)", path, line, kernel, eci_echo(echo, sizeof echo, row->arch));
    return eci_table_number(ctx, t, r, col[4], 0.01, 1.5, &row->frac);
}

/* Set e from the rows of one kernel and architecture; a located error when a pass or causal
 * case is missing or given twice. */
static int fill(ec_ctx *ctx, const char *path, const attn_row *rows, size_t n, int kernel, const char *arch,
                eci_attn_eff *e)
{
    size_t seen[2][2] = {{0, 0}, {0, 0}};
    for (size_t i = 0; i < n; i++) {
        if (rows[i].kernel != kernel || !eci_name_eq(rows[i].arch, arch))
            continue;
        for (int c = 0; c < 2; c++) {
            if (rows[i].causal >= 0 && rows[i].causal != c)
                continue;
            if (seen[rows[i].pass][c] != 0)
                return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': a second %s row for causal=%d "
                                 "(first on line %zu)", path, rows[i].line, KERNELS[kernel], arch,
                                 rows[i].pass ? "bwd" : "fwd", c, seen[rows[i].pass][c]);
            seen[rows[i].pass][c] = rows[i].line;
            e->frac[rows[i].pass][c] = rows[i].frac;
        }
    }
    int any = 0, all = 1;
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < 2; c++) {
            any |= seen[p][c] != 0;
            all &= seen[p][c] != 0;
        }
    if (any && !all)
        return eci_error(ctx, EC_EPARSE, "%s: kernel '%s' on '%s': needs fwd and bwd rows for causal and "
                         "non-causal attention (an empty causal cell covers both)", path, KERNELS[kernel], arch);
    return any ? EC_OK : EC_ENOTFOUND;
}

/* Every kernel of every GPU: its architecture's rows, else the prior's, else none. */
static int link_gpus(ec_ctx *ctx, const char *path, const void *out, size_t n)
{
    const attn_row *rows = out;
    for (int k = 0; k < ECI_AK_N; k++) {
        eci_attn_eff prior = {.from = ECI_AK_PRIOR};
        int rc = fill(ctx, path, rows, n, k, "*", &prior);
        if (rc == EC_ENOTFOUND && (k == ECI_AK_FLASH2 || k == ECI_AK_MEM_EFFICIENT))
            return eci_error(ctx, EC_EPARSE, "%s: kernel '%s' needs prior rows (architecture '*'): attention=sdpa "
                             "runs it on any GPU", path, KERNELS[k]);
        if (rc == EC_ENOTFOUND)
            prior.from = ECI_AK_NONE;
        else if (rc != EC_OK)
            return rc;
        for (size_t g = 0; g < ctx->n_gpus; g++) {
            eci_attn_eff own = {.from = ECI_AK_OWN};
            rc = fill(ctx, path, rows, n, k, ctx->gpus[g].architecture, &own);
            if (rc != EC_OK && rc != EC_ENOTFOUND)
                return rc;
            ctx->gpus[g].attn[k] = rc == EC_OK ? own : prior;
        }
    }
    return EC_OK;
}

static void reset_gpu(eci_gpu *g)
{
    memset(g->attn, 0, sizeof g->attn);
}

int eci_attn_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[6] = {"kernel", "architecture", "pass", "causal", "eff_frac", "source"};
    static const eci_gpu_table SPEC = {COLUMNS, 6, sizeof(attn_row), parse_row, link_gpus, reset_gpu};
    return eci_gpu_table_load(ctx, path, &SPEC);
}
