/*
 * membw.c: models/membw.csv, the size curve of memory-bound kernels (elementwise, norms, softmax,
 * casts, the optimizer): a kernel moving V bytes takes overhead_s + V / (bandwidth x
 * memory_eff_frac), the form that te42kyfo/gpu-benches' gpu-small-kernels fits to 10,000
 * back-to-back streaming kernels of growing size (T = V / (a + V/b)), so a small kernel
 * achieves less of the bandwidth than a large one.  Each row names a GPU (its gpus.csv id) or an
 * architecture ('*': the prior) and its public source; a row without one is refused with its file
 * and line.  Loaded after gpus.csv: every GPU gets its own row, else its architecture's, else the
 * prior, so pricing (model/compute.c, eci_rates_init) reads one field per GPU.
 */
#include "catalog/catalog.h"

#include <string.h>

/* A start-up and tail longer than a millisecond is not a kernel's. */
#define OVERHEAD_MAX_S 1e-3

typedef struct membw_row {
    const char *gpu, *arch; /* gpu "" : the row is the architecture's */
    double overhead_s;
    size_t line;
} membw_row;

static int parse_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, void *out)
{
    membw_row *row = out;
    char echo[48];
    *row = (membw_row){.gpu = eci_table_cell(t, r, col[0]), .arch = eci_table_cell(t, r, col[1]),
                       .line = eci_table_line(t, r)};
    const char *source = eci_table_cell(t, r, col[3]), *what = row->gpu[0] ? row->gpu : row->arch;
    if (row->gpu[0] == '\0' && row->arch[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: neither a gpu nor an architecture (a gpus.csv id, or an "
                         "architecture, '*' for the prior)", path, row->line);
    if (row->gpu[0] != '\0') {
        size_t g = eci_gpu_id_index(ctx, row->gpu);
        if (g == ctx->n_gpus)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: gpu '%s' is not a gpus.csv id", path, row->line,
                             eci_echo(echo, sizeof echo, row->gpu));
    }
    if (source[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: '%s': empty source (every memory-bandwidth figure names its "
                         "public source)", path, row->line, eci_echo(echo, sizeof echo, what));
    return eci_table_number(ctx, t, r, col[2], 0, OVERHEAD_MAX_S, &row->overhead_s);
}

/* The row for a GPU id (gpu set) or an architecture; NULL when none.  A second one is an error. */
static int find(ec_ctx *ctx, const char *path, const membw_row *rows, size_t n, const char *gpu, const char *arch,
                const membw_row **out)
{
    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        int hit = gpu != NULL ? eci_name_eq(rows[i].gpu, gpu) : rows[i].gpu[0] == '\0' && eci_name_eq(rows[i].arch, arch);
        if (!hit)
            continue;
        if (*out != NULL)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: a second row for '%s' (first on line %zu)", path, rows[i].line,
                             gpu != NULL ? gpu : arch, (*out)->line);
        *out = &rows[i];
    }
    return EC_OK;
}

static int link_gpus(ec_ctx *ctx, const char *path, const void *out, size_t n)
{
    const membw_row *rows = out;
    const membw_row *prior;
    int rc = find(ctx, path, rows, n, NULL, "*", &prior);
    if (rc != EC_OK)
        return rc;
    if (prior == NULL)
        return eci_error(ctx, EC_EPARSE, "%s: no prior row (architecture '*'): a GPU of an architecture without "
                         "a row needs one", path);
    for (size_t g = 0; g < ctx->n_gpus; g++) {
        const membw_row *own, *arch;
        if ((rc = find(ctx, path, rows, n, ctx->gpus[g].id, NULL, &own)) != EC_OK ||
            (rc = find(ctx, path, rows, n, NULL, ctx->gpus[g].architecture, &arch)) != EC_OK)
            return rc;
        ctx->gpus[g].mem_overhead_s = (own != NULL ? own : arch != NULL ? arch : prior)->overhead_s;
    }
    return EC_OK;
}

static void reset_gpu(eci_gpu *g)
{
    g->mem_overhead_s = 0;
}

int eci_membw_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[4] = {"gpu", "architecture", "overhead_s", "source"};
    static const eci_gpu_table SPEC = {COLUMNS, 4, sizeof(membw_row), parse_row, link_gpus, reset_gpu};
    return eci_gpu_table_load(ctx, path, &SPEC);
}
