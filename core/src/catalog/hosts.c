/*
 * hosts.c: host CPU profiles, one row of models/hosts.csv each: cores, the host time
 * PyTorch needs to issue an eager op, training-loop bookkeeping, tokenizer throughput,
 * DataLoader worker costs and the rate of an NCCL ring hop through the host between PCIe GPUs.
 * Priors with sources in the file; calibration can refine them.
 */
#include "catalog/catalog.h"

#include <stddef.h>
#include <string.h>

#define H(col, kind, field, lo, hi) {col, kind, offsetof(eci_host, field), lo, hi}
static const eci_field host_fields[] = {
    H("id", ECI_F_STR, id, 0, 0),
    H("description", ECI_F_STR, description, 0, 0),
    H("cores", ECI_F_INT, cores, 1, 4096),
    H("dispatch_fwd_s", ECI_F_DOUBLE, dispatch_fwd_s, 1e-8, 1e-2),
    H("dispatch_bwd_s", ECI_F_DOUBLE, dispatch_bwd_s, 1e-8, 1e-2),
    H("step_overhead_s", ECI_F_DOUBLE, step_overhead_s, 0, 10),
    H("memcpy_bytes_per_s", ECI_F_DOUBLE, memcpy_bytes_per_s, 1e8, 1e12),
    H("host_hop_busbw_bytes_per_s", ECI_F_DOUBLE, host_hop_busbw_bytes_per_s, 1e8, 1e12),
    H("through_host_busbw_bytes_per_s", ECI_F_DOUBLE, through_host_busbw_bytes_per_s, 0, 1e12),
    H("socket_gpus", ECI_F_INT, socket_gpus, 0, 1024),
    H("cross_socket_busbw_bytes_per_s", ECI_F_DOUBLE, cross_socket_busbw_bytes_per_s, 0, 1e12),
    H("fast_tokenizer_tokens_per_s", ECI_F_DOUBLE, fast_tokenizer_tokens_per_s, 1, 1e10),
    H("python_tokenizer_tokens_per_s", ECI_F_DOUBLE, python_tokenizer_tokens_per_s, 1, 1e10),
    H("worker_start_s", ECI_F_DOUBLE, worker_start_s, 0, 600),
    H("collate_per_sample_s", ECI_F_DOUBLE, collate_per_sample_s, 0, 10),
    H("source", ECI_F_STR, source, 0, 0),
};
#undef H
#define N_HOST_FIELDS (sizeof host_fields / sizeof host_fields[0])

int eci_host_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, host_fields, N_HOST_FIELDS, sizeof(eci_host), &rows, &n);
    if (rc != EC_OK)
        return rc;
    ctx->hosts = rows;
    ctx->n_hosts = n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ctx->hosts[i].id, "default") == 0)
            return EC_OK;
    eci_host_free(ctx);
    return eci_error(ctx, EC_EPARSE, "%s: no host with id 'default'", path);
}

void eci_host_free(ec_ctx *ctx)
{
    eci_rows_free(ctx, host_fields, N_HOST_FIELDS, sizeof(eci_host), ctx->hosts, ctx->n_hosts);
    ctx->hosts = NULL;
    ctx->n_hosts = 0;
}

const eci_host *eci_host_find(ec_ctx *ctx, const char *name)
{
    enum { MAXN = 128 };
    const char *ids[MAXN];
    if (name == NULL || name[0] == '\0')
        name = "default";
    for (size_t i = 0; i < ctx->n_hosts; i++) /* the exact id first: the common case, and cheap */
        if (strcmp(ctx->hosts[i].id, name) == 0)
            return &ctx->hosts[i];
    for (size_t i = 0; i < ctx->n_hosts; i++)
        if (eci_name_eq(ctx->hosts[i].id, name))
            return &ctx->hosts[i];
    size_t n = ctx->n_hosts < MAXN ? ctx->n_hosts : MAXN;
    for (size_t i = 0; i < n; i++)
        ids[i] = ctx->hosts[i].id;
    const char *near = eci_nearest(name, ids, n);
    eci_error(ctx, EC_ENOTFOUND, "unknown host '%s' (did you mean '%s'?)", name, near ? near : "");
    return NULL;
}
