/*
 * refsys.c: the reference system of each GPU, one row of models/reference_systems.csv each
 * (DGX A100, DGX H100, a PCIe server with 100 GbE, ...): the network of
 * models/interconnects.csv that system ships with, as the vendor's datasheet names it, and how
 * many GPUs one such machine holds where the datasheet says (16 on a DGX-2).  A layout across
 * nodes that names no network= takes its GPU's (model/layout.c) and says so in a warning
 * (sim/warnings.c); a layout that names no gpus_per_node fills machines of that size.  Loaded
 * after gpus.csv and interconnects.csv, whose ids it checks; each GPU points at its row, so a
 * prediction finds it without a lookup.
 */
#include "catalog/catalog.h"

#include <stddef.h>
#include <string.h>

#define F(col, kind, field, lo, hi) {col, kind, offsetof(eci_refsys, field), lo, hi}
static const eci_field refsys_fields[] = {
    F("gpu", ECI_F_STR, gpu, 0, 0),
    F("system", ECI_F_STR, system, 0, 0),
    F("network", ECI_F_STR, network, 0, 0),
    F("fabric", ECI_F_STR, fabric_text, 0, 0),
    F("gpus_per_node", ECI_F_DOUBLE_OPT, gpus_per_node, 1, 1024),
    F("source", ECI_F_STR, source, 0, 0),
};
#undef F
#define N_REFSYS_FIELDS (sizeof refsys_fields / sizeof refsys_fields[0])

/* Row i's GPU and network, found by their exact ids; a located error otherwise. */
static int link_row(ec_ctx *ctx, const char *path, eci_refsys *row)
{
    eci_gpu *g = NULL;
    for (size_t k = 0; k < ctx->n_gpus && g == NULL; k++)
        if (strcmp(ctx->gpus[k].id, row->gpu) == 0)
            g = &ctx->gpus[k];
    if (g == NULL)
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': not an id of gpus.csv", path, row->gpu);
    for (size_t k = 0; k < ctx->n_fabrics && row->fabric == NULL; k++)
        if (strcmp(ctx->fabrics[k].id, row->network) == 0)
            row->fabric = &ctx->fabrics[k];
    if (row->fabric == NULL)
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': network '%s' is not an id of interconnects.csv", path,
                         row->gpu, row->network);
    if (row->system[0] == '\0' || row->fabric_text[0] == '\0' || row->source[0] == '\0')
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': system, fabric and source must not be empty", path,
                         row->gpu);
    if (row->gpus_per_node > 0 && row->gpus_per_node != (int)row->gpus_per_node)
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': gpus_per_node %g is not a whole number of GPUs", path,
                         row->gpu, row->gpus_per_node);
    g->refsys = row;
    return EC_OK;
}

int eci_refsys_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, refsys_fields, N_REFSYS_FIELDS, sizeof(eci_refsys), &rows, &n);
    if (rc != EC_OK)
        return rc;
    ctx->refsys = rows;
    ctx->n_refsys = n;
    for (size_t i = 0; i < n && rc == EC_OK; i++)
        rc = link_row(ctx, path, &ctx->refsys[i]);
    if (rc != EC_OK)
        eci_refsys_free(ctx);
    return rc;
}

void eci_refsys_free(ec_ctx *ctx)
{
    for (size_t k = 0; k < ctx->n_gpus; k++)
        ctx->gpus[k].refsys = NULL;
    eci_rows_free(ctx, refsys_fields, N_REFSYS_FIELDS, sizeof(eci_refsys), ctx->refsys, ctx->n_refsys);
    ctx->refsys = NULL;
    ctx->n_refsys = 0;
}
