/*
 * convalgo.c: models/conv_algos.csv, the algorithm class cuDNN runs a convolution pass on (fwd,
 * dgrad, wgrad), by the unit that multiplies (tensor cores or CUDA cores), the filter size, the
 * stride and grouping: Winograd, a 1x1 convolution's plain GEMM, implicit (precomputed) GEMM.
 * Each row says how the class prices against a GEMM of the convolution's shape (the share of the
 * direct FLOPs it executes, workspace bytes it moves over the input and output, whether the fitted
 * conv_eff applies) and the layout its kernels read (NHWC, NCHW or either), from which
 * model/compute.c charges cuDNN's layout transposes.  Rows are tried in file order and the first
 * that applies wins; every unit and pass needs a row for any filter, stride and grouping, so every
 * lookup finds one.  Every row names its public source (papers, cuDNN's documentation, kernel
 * names in public profiles); a row without one is refused with its file and line.
 */
#include "catalog/catalog.h"

#include <stdio.h>
#include <string.h>

struct eci_conv_algos {
    eci_conv_algo *rows;
    size_t n;
};

static const char *const PASSES[ECI_CONV_PASSES] = {"fwd", "dgrad", "wgrad"};

/* '*' (0: any) or a whole number in [1, hi]. */
static int any_or_count(ec_ctx *ctx, const eci_table *t, size_t r, int col, double hi, double *out)
{
    *out = 0;
    return strcmp(eci_table_cell(t, r, col), "*") == 0 ? EC_OK : eci_table_number(ctx, t, r, col, 1, hi, out);
}

/* "fwd dgrad wgrad" (any of them, space-separated) as bits 1 << ECI_CONV_FWD... */
static int parse_passes(ec_ctx *ctx, const char *path, size_t line, const char *cell, unsigned *out)
{
    char echo[48];
    *out = 0;
    for (const char *p = cell; *p != '\0';) {
        size_t len = strcspn(p, " ");
        int hit = -1;
        for (int k = 0; k < ECI_CONV_PASSES; k++)
            if (len == strlen(PASSES[k]) && strncmp(p, PASSES[k], len) == 0)
                hit = k;
        if (hit < 0 && len > 0) {
            char word[24];
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word - 1 ? len : sizeof word - 1), p);
            return eci_error(ctx, EC_EPARSE, "%s:%zu: pass '%s' is not fwd, dgrad or wgrad", path, line,
                             eci_echo(echo, sizeof echo, word));
        }
        if (hit >= 0)
            *out |= 1u << hit;
        p += len;
        p += strspn(p, " ");
    }
    if (*out == 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: no passes (fwd, dgrad, wgrad)", path, line);
    return EC_OK;
}

static int parse_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int col[11],
                     eci_conv_algo *row)
{
    size_t line = eci_table_line(t, r);
    const char *name = eci_table_cell(t, r, col[0]), *unit = eci_table_cell(t, r, col[1]),
               *layout = eci_table_cell(t, r, col[6]);
    char echo[48];
    int rc;
    *row = (eci_conv_algo){.line = line};
    if (name[0] == '\0' || strlen(name) >= sizeof row->name)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: algorithm '%s': a name of 1 to %zu characters", path, line,
                         eci_echo(echo, sizeof echo, name), sizeof row->name - 1);
    memcpy(row->name, name, strlen(name) + 1);
    row->unit = strcmp(unit, "*") == 0 ? ECI_CONV_ANY : strcmp(unit, "simt") == 0 ? ECI_CONV_SIMT
              : strcmp(unit, "tensor") == 0 ? ECI_CONV_TENSOR : -1;
    if (row->unit < 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: %s: unit '%s' is not simt, tensor or '*'", path, line, name,
                         eci_echo(echo, sizeof echo, unit));
    row->layout = strcmp(layout, "any") == 0 ? ECI_CONV_ANY : strcmp(layout, "nchw") == 0 ? ECI_CONV_NCHW
                : strcmp(layout, "nhwc") == 0 ? ECI_CONV_NHWC : -1;
    if (row->layout < 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: %s: layout '%s' is not nchw, nhwc or any", path, line, name,
                         eci_echo(echo, sizeof echo, layout));
    double eff;
    if ((rc = any_or_count(ctx, t, r, col[2], 15, &row->kernel)) != EC_OK ||
        (rc = any_or_count(ctx, t, r, col[3], 15, &row->stride)) != EC_OK ||
        (rc = any_or_count(ctx, t, r, col[4], 1, &row->groups)) != EC_OK ||
        (rc = parse_passes(ctx, path, line, eci_table_cell(t, r, col[5]), &row->passes)) != EC_OK ||
        (rc = eci_table_number(ctx, t, r, col[7], 0.01, 1, &row->flop_frac)) != EC_OK ||
        (rc = eci_table_number(ctx, t, r, col[8], 0, 100, &row->workspace_io_frac)) != EC_OK ||
        (rc = eci_table_number(ctx, t, r, col[9], 0, 1, &eff)) != EC_OK)
        return rc;
    if (eff != 0 && eff != 1)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: %s: conv_eff is 1 (the fitted conv_eff applies) or 0 (priced "
                         "as a GEMM)", path, line, name);
    row->conv_eff = eff == 1;
    if (eci_table_cell(t, r, col[10])[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s:%zu: %s: empty source (every convolution algorithm names its public "
                         "source)", path, line, name);
    return EC_OK;
}

static int applies(const eci_conv_algo *a, int tensor, double kernel, double stride, double groups, int pass)
{
    return (a->passes & (1u << pass)) != 0 &&
           (a->unit == ECI_CONV_ANY || a->unit == (tensor ? ECI_CONV_TENSOR : ECI_CONV_SIMT)) &&
           (a->kernel == 0 || a->kernel == kernel) && (a->stride == 0 || a->stride == stride) &&
           (a->groups == 0 || a->groups == groups);
}

const eci_conv_algo *eci_conv_algo_for(const ec_ctx *ctx, int tensor, double kernel, double stride, double groups,
                                       int pass)
{
    const struct eci_conv_algos *c = ctx->conv_algos;
    for (size_t i = 0; c != NULL && i < c->n; i++)
        if (applies(&c->rows[i], tensor, kernel, stride, groups, pass))
            return &c->rows[i];
    return NULL; /* not after a load: every unit and pass has a row for everything */
}

const char *eci_conv_pass_name(int pass)
{
    return pass >= 0 && pass < ECI_CONV_PASSES ? PASSES[pass] : "?";
}

/* Every unit and pass has a row for any filter, stride and grouping. */
static int check_cover(ec_ctx *ctx, const char *path, const struct eci_conv_algos *c)
{
    for (int tensor = 0; tensor <= 1; tensor++)
        for (int pass = 0; pass < ECI_CONV_PASSES; pass++) {
            int found = 0;
            for (size_t i = 0; i < c->n && !found; i++) {
                const eci_conv_algo *a = &c->rows[i];
                found = a->kernel == 0 && a->stride == 0 && a->groups == 0 && applies(a, tensor, 0, 0, 0, pass);
            }
            if (!found)
                return eci_error(ctx, EC_EPARSE, "%s: no row for unit %s, pass %s with kernel, stride and groups "
                                 "'*' (every convolution needs an algorithm)", path, tensor ? "tensor" : "simt",
                                 PASSES[pass]);
        }
    return EC_OK;
}

void eci_conv_algos_free(ec_ctx *ctx)
{
    if (ctx->conv_algos == NULL)
        return;
    eci_free(ctx, ctx->conv_algos->rows, ctx->conv_algos->n * sizeof *ctx->conv_algos->rows);
    eci_free(ctx, ctx->conv_algos, sizeof *ctx->conv_algos);
    ctx->conv_algos = NULL;
}

int eci_conv_algos_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[11] = {"algorithm", "unit", "kernel", "stride", "groups", "passes",
                                            "layout", "flop_frac", "workspace_io_frac", "conv_eff", "source"};
    eci_table *t = NULL;
    int col[11], rc = eci_table_load(ctx, path, &t);
    size_t n = 0;
    if (rc != EC_OK)
        return rc;
    for (int c = 0; c < 11 && rc == EC_OK; c++)
        rc = eci_table_require(ctx, t, COLUMNS[c], &col[c]);
    if (rc == EC_OK && (n = eci_table_rows(t)) == 0)
        rc = eci_error(ctx, EC_EPARSE, "%s: no data rows", path);
    if (rc == EC_OK && (ctx->conv_algos = eci_calloc(ctx, 1, sizeof *ctx->conv_algos)) == NULL)
        rc = EC_ENOMEM;
    if (rc == EC_OK && (ctx->conv_algos->rows = eci_calloc(ctx, n, sizeof *ctx->conv_algos->rows)) == NULL)
        rc = EC_ENOMEM;
    if (rc == EC_OK)
        ctx->conv_algos->n = n;
    for (size_t r = 0; rc == EC_OK && r < n; r++)
        rc = parse_row(ctx, path, t, r, col, &ctx->conv_algos->rows[r]);
    if (rc == EC_OK)
        rc = check_cover(ctx, path, ctx->conv_algos);
    eci_table_free(t);
    if (rc != EC_OK)
        eci_conv_algos_free(ctx);
    return rc;
}
