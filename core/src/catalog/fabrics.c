/*
 * fabrics.c: inter-node network presets, one row of models/interconnects.csv each
 * (InfiniBand HDR/NDR, RoCE, AWS EFA, Ethernet, NVLink switch domains): the link rate per
 * GPU's own NIC (rail-optimized clusters) and per node, the hop latency and the measured
 * all-reduce efficiency where a public measurement exists, each with its source.  The
 * config's network= names one; comm.c turns it into the bandwidth of collectives that
 * cross nodes.
 */
#include "catalog/catalog.h"

#include <stddef.h>
#include <string.h>

#define F(col, kind, field, lo, hi) {col, kind, offsetof(eci_fabric, field), lo, hi}
static const eci_field fabric_fields[] = {
    F("id", ECI_F_STR, id, 0, 0),
    F("description", ECI_F_STR, description, 0, 0),
    F("gbit_per_s_per_gpu", ECI_F_DOUBLE_OPT, gpu_gbit_per_s, 0.1, 1e6),
    F("gbit_per_s_per_node", ECI_F_DOUBLE_OPT, node_gbit_per_s, 0.1, 1e7),
    F("latency_us", ECI_F_DOUBLE_OPT, latency_us, 0.01, 1e4),
    F("efficiency_frac", ECI_F_DOUBLE_OPT, efficiency_frac, 0.01, 1),
    F("domain_gpus", ECI_F_DOUBLE_OPT, domain_gpus, 2, 1e6),
    F("source", ECI_F_STR, source, 0, 0),
};
#undef F
#define N_FABRIC_FIELDS (sizeof fabric_fields / sizeof fabric_fields[0])

int eci_fabric_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, fabric_fields, N_FABRIC_FIELDS, sizeof(eci_fabric), &rows, &n);
    if (rc != EC_OK)
        return rc;
    ctx->fabrics = rows;
    ctx->n_fabrics = n;
    for (size_t i = 0; i < n; i++)
        if (ctx->fabrics[i].gpu_gbit_per_s < 0 && ctx->fabrics[i].node_gbit_per_s < 0) {
            rc = eci_error(ctx, EC_EPARSE, "%s: network '%s': needs gbit_per_s_per_gpu or gbit_per_s_per_node", path,
                           ctx->fabrics[i].id);
            eci_fabric_free(ctx);
            return rc;
        }
    return EC_OK;
}

void eci_fabric_free(ec_ctx *ctx)
{
    eci_rows_free(ctx, fabric_fields, N_FABRIC_FIELDS, sizeof(eci_fabric), ctx->fabrics, ctx->n_fabrics);
    ctx->fabrics = NULL;
    ctx->n_fabrics = 0;
}

const eci_fabric *eci_fabric_find(ec_ctx *ctx, const char *name)
{
    enum { MAXN = 128 };
    const char *ids[MAXN];
    for (size_t i = 0; i < ctx->n_fabrics; i++)
        if (strcmp(ctx->fabrics[i].id, name) == 0)
            return &ctx->fabrics[i];
    for (size_t i = 0; i < ctx->n_fabrics; i++)
        if (eci_name_eq(ctx->fabrics[i].id, name))
            return &ctx->fabrics[i];
    size_t n = ctx->n_fabrics < MAXN ? ctx->n_fabrics : MAXN;
    for (size_t i = 0; i < n; i++)
        ids[i] = ctx->fabrics[i].id;
    const char *near = eci_nearest(name, ids, n);
    eci_error(ctx, EC_ENOTFOUND, "key 'network': unknown network '%s' (did you mean '%s'? models/interconnects.csv "
              "lists them)", name, near ? near : "");
    return NULL;
}

size_t ec_interconnect_count(const ec_ctx *ctx)
{
    return ctx != NULL ? ctx->n_fabrics : 0;
}

int ec_interconnect_get(const ec_ctx *ctx, size_t i, ec_interconnect_info *out)
{
    if (ctx == NULL || out == NULL || i >= ctx->n_fabrics)
        return EC_EINVAL;
    const eci_fabric *f = &ctx->fabrics[i];
    double per_node = 8.0; /* only to state a per-node rate given per GPU; comm uses gpus_per_node */
    out->id = f->id;
    out->description = f->description;
    out->gpu_bytes_per_s = f->gpu_gbit_per_s > 0 ? f->gpu_gbit_per_s * 1e9 / 8 : 0;
    out->node_bytes_per_s = f->node_gbit_per_s > 0 ? f->node_gbit_per_s * 1e9 / 8 : out->gpu_bytes_per_s * per_node;
    out->efficiency_frac = f->efficiency_frac > 0 ? f->efficiency_frac : 0;
    out->domain_gpus = f->domain_gpus > 0 ? (int)f->domain_gpus : 0;
    out->source = f->source;
    return EC_OK;
}
