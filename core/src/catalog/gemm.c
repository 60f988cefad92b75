/*
 * gemm.c: models/gemm.csv, the parameters of the GEMM utilization curve per GPU architecture
 * (model/compute.c eci_gemm_util: tile and wave quantization x k / (k + k_half); and the fixed time
 * a GEMM kernel adds to its math or memory time, fixed_s), and
 * models/gemm_shapes.csv, the public measurements of GEMM throughput by shape, dtype and
 * architecture those parameters answer to.  Every row names its public source (file and line,
 * or the quoted line); a row without one is refused with its file and line.  gemm.csv is loaded
 * after gpus.csv: each GPU takes its architecture's row, else the prior ('*'), so pricing
 * (eci_rates_init) reads one field per GPU and looks nothing up per op.  gemm_shapes.csv is
 * checked (known architecture and GPU, dtype, sizes, achieved <= best) and not kept: it is the
 * evidence the curve is checked against (tests/cli/test_gemm_shapes.sh, models/README.md).
 */
#include "catalog/catalog.h"

#include <string.h>

/* A reduction whose half-rate point is beyond a million elements is not a GEMM curve. */
#define K_HALF_MAX 1e6
/* A fixed time per GEMM kernel beyond a millisecond is no kernel's start-up and tail. */
#define FIXED_S_MAX 1e-3
/* Above any GPU's dense matmul peak (B200 FP8 is 4.5e15). */
#define FLOP_PER_S_MAX 1e17
#define DIM_MAX 1e8

typedef struct gemm_row {
    const char *arch;
    double k_half, fixed_s;
    size_t line;
} gemm_row;

static int known_arch(const ec_ctx *ctx, const char *arch)
{
    for (size_t g = 0; g < ctx->n_gpus; g++)
        if (eci_name_eq(ctx->gpus[g].architecture, arch))
            return 1;
    return 0;
}

static int parse_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, void *out)
{
    gemm_row *row = out;
    char echo[48];
    *row = (gemm_row){.arch = eci_table_cell(t, r, col[0]), .line = eci_table_line(t, r)};
    if (row->arch[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: no architecture (a gpus.csv architecture, '*' for the prior)",
                         path, row->line);
    if (strcmp(row->arch, "*") != 0 && !known_arch(ctx, row->arch))
        return eci_error(ctx, EC_EPARSE, "%s:%zu: architecture '%s' has no GPU in gpus.csv", path, row->line,
                         eci_echo(echo, sizeof echo, row->arch));
    if (eci_table_cell(t, r, col[3])[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: '%s': empty source (every GEMM curve parameter names its "
                         "public source)", path, row->line, eci_echo(echo, sizeof echo, row->arch));
    for (size_t i = 0; i < r; i++)
        if (eci_name_eq(eci_table_cell(t, i, col[0]), row->arch))
            return eci_error(ctx, EC_EPARSE, "%s:%zu: a second row for '%s' (first on line %zu)", path, row->line,
                             eci_echo(echo, sizeof echo, row->arch), eci_table_line(t, i));
    int rc = eci_table_number(ctx, t, r, col[1], 0, K_HALF_MAX, &row->k_half);
    return rc == EC_OK ? eci_table_number(ctx, t, r, col[2], 0, FIXED_S_MAX, &row->fixed_s) : rc;
}

/* Each GPU takes its architecture's row, else the prior's. */
static int link_gpus(ec_ctx *ctx, const char *path, const void *out, size_t n)
{
    const gemm_row *rows = out, *prior = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].arch, "*") == 0)
            prior = &rows[i];
    if (prior == NULL)
        return eci_error(ctx, EC_EPARSE, "%s: no prior row (architecture '*'): a GPU of an architecture without "
                         "a row needs one", path);
    for (size_t g = 0; g < ctx->n_gpus; g++) {
        const gemm_row *use = prior;
        for (size_t i = 0; i < n; i++)
            if (eci_name_eq(rows[i].arch, ctx->gpus[g].architecture))
                use = &rows[i];
        ctx->gpus[g].gemm_k_half = use->k_half;
        ctx->gpus[g].gemm_fixed_s = use->fixed_s;
    }
    return EC_OK;
}

static void reset_gpu(eci_gpu *g)
{
    g->gemm_k_half = 0;
    g->gemm_fixed_s = 0;
}

int eci_gemm_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[4] = {"architecture", "k_half", "fixed_s", "source"};
    static const eci_gpu_table SPEC = {COLUMNS, 4, sizeof(gemm_row), parse_row, link_gpus, reset_gpu};
    return eci_gpu_table_load(ctx, path, &SPEC);
}

/* ---- gemm_shapes.csv -------------------------------------------------------------- */

enum { S_ARCH, S_GPU, S_DTYPE, S_M, S_N, S_K, S_BATCH, S_ACHIEVED, S_BEST, S_SOURCE, S_NCOL };

static int check_gpu(ec_ctx *ctx, const char *path, size_t line, const char *gpu, const char *arch)
{
    char echo[48];
    for (size_t g = 0; g < ctx->n_gpus; g++) {
        if (!eci_name_eq(ctx->gpus[g].id, gpu))
            continue;
        if (!eci_name_eq(ctx->gpus[g].architecture, arch))
            return eci_error(ctx, EC_EPARSE, "%s:%zu: gpu '%s' is a %s GPU in gpus.csv, not %s", path, line,
                             eci_echo(echo, sizeof echo, gpu), ctx->gpus[g].architecture, arch);
        return EC_OK;
    }
    return eci_error(ctx, EC_EPARSE, "%s:%zu: gpu '%s' is not a gpus.csv id", path, line,
                     eci_echo(echo, sizeof echo, gpu));
}

static int check_shape(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, void *unused)
{
    (void)unused;
    static const char *const DTYPES[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
    char echo[48];
    size_t line = eci_table_line(t, r);
    const char *arch = eci_table_cell(t, r, col[S_ARCH]), *gpu = eci_table_cell(t, r, col[S_GPU]);
    const char *dtype = eci_table_cell(t, r, col[S_DTYPE]);
    if (eci_table_cell(t, r, col[S_SOURCE])[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: '%s': empty source (every GEMM measurement names its public "
                         "source)", path, line, eci_echo(echo, sizeof echo, arch));
    if (!known_arch(ctx, arch))
        return eci_error(ctx, EC_EPARSE, "%s:%zu: architecture '%s' has no GPU in gpus.csv", path, line,
                         eci_echo(echo, sizeof echo, arch));
    int rc = gpu[0] != '\0' ? check_gpu(ctx, path, line, gpu, arch) : EC_OK;
    if (rc != EC_OK)
        return rc;
    size_t d = 0;
    while (d < sizeof DTYPES / sizeof DTYPES[0] && strcmp(DTYPES[d], dtype) != 0)
        d++;
    if (d == sizeof DTYPES / sizeof DTYPES[0])
        return eci_error(ctx, EC_EPARSE, "%s:%zu: dtype '%s' is not fp32, tf32, fp16, bf16 or fp8", path, line,
                         eci_echo(echo, sizeof echo, dtype));
    double v[4], achieved, best;
    for (int c = 0; c < 4 && rc == EC_OK; c++)
        rc = eci_table_number(ctx, t, r, col[S_M + c], 1, DIM_MAX, &v[c]);
    if (rc == EC_OK)
        rc = eci_table_number(ctx, t, r, col[S_ACHIEVED], 1, FLOP_PER_S_MAX, &achieved);
    if (rc == EC_OK)
        rc = eci_table_number(ctx, t, r, col[S_BEST], 1, FLOP_PER_S_MAX, &best);
    if (rc == EC_OK && achieved > best)
        rc = eci_error(ctx, EC_EPARSE, "%s:%zu: achieved_flop_per_s %g is above best_flop_per_s %g (the best "
                       "shape's rate on the same GPU and source)", path, line, achieved, best);
    return rc;
}

int eci_gemm_shapes_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[S_NCOL] = {"architecture", "gpu", "dtype", "m", "n", "k", "batch",
                                                "achieved_flop_per_s", "best_flop_per_s", "source"};
    static const eci_gpu_table SPEC = {COLUMNS, S_NCOL, 0, check_shape, NULL, NULL};
    return eci_gpu_table_load(ctx, path, &SPEC);
}
