/*
 * gpus.c: GPU hardware profiles, one row of models/gpus.csv each (peaks per precision,
 * measured GEMM and bandwidth efficiencies, memory, PCIe and NVLink figures; sources in
 * the file).  Resolves ids, aliases and nvidia-smi names ("Tesla T4") to a profile.
 */
#include "catalog/catalog.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define G(col, kind, field, lo, hi) {col, kind, offsetof(eci_gpu, field), lo, hi}
static const eci_field gpu_fields[] = {
    G("id", ECI_F_STR, id, 0, 0),
    G("name", ECI_F_STR, name, 0, 0),
    G("aliases", ECI_F_STR, aliases, 0, 0),
    G("architecture", ECI_F_STR, architecture, 0, 0),
    G("compute_capability", ECI_F_DOUBLE, compute_capability, 1.0, 20.0),
    G("sm_count", ECI_F_INT, sm_count, 1, 10000),
    G("peak_fp32_flop_per_s", ECI_F_DOUBLE, peak_fp32_flop_per_s, 1e9, 1e17),
    G("peak_tf32_flop_per_s", ECI_F_DOUBLE, peak_tf32_flop_per_s, 0, 1e17),
    G("peak_fp16_flop_per_s", ECI_F_DOUBLE, peak_fp16_flop_per_s, 0, 1e17),
    G("peak_bf16_flop_per_s", ECI_F_DOUBLE, peak_bf16_flop_per_s, 0, 1e17),
    G("emulated_bf16_flop_per_s", ECI_F_DOUBLE, emulated_bf16_flop_per_s, 0, 1e17),
    G("gemm_eff_fp32_frac", ECI_F_DOUBLE, gemm_eff_fp32_frac, 0.01, 1.5),
    G("gemm_eff_tf32_frac", ECI_F_DOUBLE, gemm_eff_tf32_frac, 0.01, 1.5),
    G("gemm_eff_fp16_frac", ECI_F_DOUBLE, gemm_eff_fp16_frac, 0.01, 1.5),
    G("gemm_eff_bf16_frac", ECI_F_DOUBLE, gemm_eff_bf16_frac, 0.01, 1.5),
    G("peak_fp8_flop_per_s", ECI_F_DOUBLE, peak_fp8_flop_per_s, 0, 1e17),
    G("gemm_eff_fp8_frac", ECI_F_DOUBLE, gemm_eff_fp8_frac, 0, 1.5),
    G("sustained_tensor_frac", ECI_F_DOUBLE, sustained_tensor_frac, 0.3, 1.0),
    G("memory_bytes", ECI_F_DOUBLE, memory_bytes, 1e8, 1e13),
    G("memory_bandwidth_bytes_per_s", ECI_F_DOUBLE, memory_bandwidth_bytes_per_s, 1e9, 1e14),
    G("memory_eff_frac", ECI_F_DOUBLE, memory_eff_frac, 0.05, 1.0),
    G("l2_bytes", ECI_F_DOUBLE, l2_bytes, 0, 1e10),
    G("pcie_gen", ECI_F_INT, pcie_gen, 1, 8),
    G("pcie_lanes", ECI_F_INT, pcie_lanes, 1, 32),
    G("h2d_pinned_bytes_per_s", ECI_F_DOUBLE, h2d_pinned_bytes_per_s, 1e8, 1e12),
    G("h2d_pageable_bytes_per_s", ECI_F_DOUBLE, h2d_pageable_bytes_per_s, 1e8, 1e12),
    G("nvlink_bytes_per_s", ECI_F_DOUBLE, nvlink_bytes_per_s, 0, 1e13),
    G("p2p", ECI_F_INT, p2p, 0, 1),
    G("gpus_per_board", ECI_F_INT, gpus_per_board, 1, 16),
    G("default_topology", ECI_F_STR, default_topology, 0, 0),
    G("kernel_floor_s", ECI_F_DOUBLE, kernel_floor_s, 0, 1e-3),
    G("measured", ECI_F_INT, measured, 0, 1),
    G("refuse", ECI_F_STR, refuse, 0, 0),
    G("source", ECI_F_STR, source, 0, 0),
};
#undef G
#define N_GPU_FIELDS (sizeof gpu_fields / sizeof gpu_fields[0])

static int alias_match(const char *aliases, const char *name);

/* The interconnects comm.c's bus bandwidth knows. */
static const char *const topologies[] = {"nvlink", "pcie-switch", "pcie-host", "a16-board"};

/* The GPU other than `self` that `name` would also resolve to, or NULL: an id, a name or an
 * alias shared by two rows makes `gpu=NAME` ambiguous. */
static const eci_gpu *claimed_by_other(const ec_ctx *ctx, const eci_gpu *self, const char *name)
{
    for (size_t i = 0; i < ctx->n_gpus; i++) {
        const eci_gpu *o = &ctx->gpus[i];
        if (o != self && (eci_name_eq(o->id, name) || eci_name_eq(o->name, name) || alias_match(o->aliases, name)))
            return o;
    }
    return NULL;
}

/* The precisions a refuse cell may name: config.c's precision choices. */
static const char *const precisions[] = {"fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp16"};

/* Entry i of a refuse cell ("prec: reason|prec: reason"): its precision and reason spans. */
static int refusal_entry(const char *cell, size_t i, const char **prec, size_t *plen, const char **why,
                         size_t *wlen)
{
    const char *p = cell;
    for (size_t k = 0; *p != '\0'; k++) {
        size_t len = strcspn(p, "|");
        if (k == i) {
            const char *colon = memchr(p, ':', len);
            *prec = p;
            *plen = colon != NULL ? (size_t)(colon - p) : len;
            while (*plen > 0 && p[*plen - 1] == ' ')
                (*plen)--;
            *why = colon != NULL ? colon + 1 : p + len;
            while (*why < p + len && **why == ' ')
                (*why)++;
            *wlen = (size_t)(p + len - *why);
            return 1;
        }
        p += len + (p[len] == '|');
    }
    return 0;
}

const char *eci_hw_refusal(const eci_gpu *g, const char *precision, char *buf, size_t n)
{
    const char *prec, *why;
    size_t plen, wlen;
    for (size_t i = 0; refusal_entry(g->refuse, i, &prec, &plen, &why, &wlen); i++)
        if (plen == strlen(precision) && memcmp(prec, precision, plen) == 0) {
            snprintf(buf, n, "%.*s", (int)wlen, why);
            return buf;
        }
    return NULL;
}

int eci_hw_topology_known(const char *name)
{
    for (size_t t = 0; t < sizeof topologies / sizeof topologies[0]; t++)
        if (strcmp(topologies[t], name) == 0)
            return 1;
    return 0;
}

/* Checks across columns and rows that the column ranges cannot express. */
static int check_gpu(ec_ctx *ctx, const char *path, const eci_gpu *g)
{
    size_t t = 0;
    while (t < sizeof topologies / sizeof topologies[0] && strcmp(topologies[t], g->default_topology) != 0)
        t++;
    if (t == sizeof topologies / sizeof topologies[0])
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': unknown default_topology '%s' (nvlink, pcie-switch, "
                         "pcie-host, a16-board)", path, g->id, g->default_topology);
    if (strcmp(g->default_topology, "nvlink") == 0 && g->nvlink_bytes_per_s <= 0)
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': default_topology 'nvlink' needs nvlink_bytes_per_s > 0",
                         path, g->id);
    if ((g->peak_fp8_flop_per_s > 0) != (g->gemm_eff_fp8_frac > 0))
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': peak_fp8_flop_per_s and gemm_eff_fp8_frac must both be "
                         "0 (no FP8 tensor cores) or both positive", path, g->id);
    const char *prec, *why;
    size_t plen, wlen;
    for (size_t i = 0; refusal_entry(g->refuse, i, &prec, &plen, &why, &wlen); i++) {
        size_t k = 0;
        while (k < sizeof precisions / sizeof precisions[0] &&
               !(strlen(precisions[k]) == plen && memcmp(precisions[k], prec, plen) == 0))
            k++;
        if (k == sizeof precisions / sizeof precisions[0] || wlen == 0)
            return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': refuse must be 'precision: reason' entries separated "
                             "by '|', precision one of fp32, tf32, amp_fp16, amp_bf16, bf16, fp16 (got '%.*s')",
                             path, g->id, (int)(why + wlen - prec), prec);
    }
    const eci_gpu *o;
    if ((o = claimed_by_other(ctx, g, g->id)) != NULL)
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': its id also names gpu '%s'", path, g->id, o->id);
    if ((o = claimed_by_other(ctx, g, g->name)) != NULL)
        return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': its name '%s' also names gpu '%s'", path, g->id, g->name,
                         o->id);
    for (const char *p = g->aliases; *p != '\0';) {
        size_t len = strcspn(p, ";");
        char alias[EC_NAME_MAX];
        if (len == 0 || len >= sizeof alias)
            return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': aliases must be ';'-separated names of 1 to %d "
                             "characters", path, g->id, EC_NAME_MAX - 1);
        memcpy(alias, p, len);
        alias[len] = '\0';
        if ((o = claimed_by_other(ctx, g, alias)) != NULL)
            return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': alias '%s' also names gpu '%s'", path, g->id, alias,
                             o->id);
        p += len;
        if (*p == ';' && *++p == '\0')
            return eci_error(ctx, EC_EPARSE, "%s: gpu '%s': empty alias at the end of '%s'", path, g->id,
                             g->aliases);
    }
    return EC_OK;
}

int eci_hw_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, gpu_fields, N_GPU_FIELDS, sizeof(eci_gpu), &rows, &n);
    if (rc != EC_OK)
        return rc;
    ctx->gpus = rows;
    ctx->n_gpus = n;
    for (size_t i = 0; i < n && rc == EC_OK; i++)
        rc = check_gpu(ctx, path, &ctx->gpus[i]);
    if (rc != EC_OK)
        eci_hw_free(ctx);
    return rc;
}

void eci_hw_free(ec_ctx *ctx)
{
    eci_rows_free(ctx, gpu_fields, N_GPU_FIELDS, sizeof(eci_gpu), ctx->gpus, ctx->n_gpus);
    ctx->gpus = NULL;
    ctx->n_gpus = 0;
}

/* aliases is a ';'-separated list of other spellings. */
static int alias_match(const char *aliases, const char *name)
{
    char buf[EC_NAME_MAX];
    const char *p = aliases;
    while (*p != '\0') {
        size_t len = strcspn(p, ";");
        if (len < sizeof buf) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            if (eci_name_eq(buf, name))
                return 1;
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return 0;
}

static long gpu_index(const ec_ctx *ctx, const char *name)
{
    for (size_t i = 0; i < ctx->n_gpus; i++)
        if (strcmp(ctx->gpus[i].id, name) == 0)
            return (long)i;
    for (size_t i = 0; i < ctx->n_gpus; i++)
        if (eci_name_eq(ctx->gpus[i].id, name) || eci_name_eq(ctx->gpus[i].name, name) ||
            alias_match(ctx->gpus[i].aliases, name))
            return (long)i;
    return -1;
}

/* An unknown name: when it starts several profiles' ids ("A100": four A100 SKUs), list them
 * all, since the nearest by edit distance would pick one of them arbitrarily; else the nearest. */
static int not_found(ec_ctx *ctx, const char *name)
{
    enum { MAXN = 128, LIST_MAX = 400 };
    const char *ids[MAXN];
    size_t n = ctx->n_gpus < MAXN ? ctx->n_gpus : MAXN, n_prefix = 0;
    char list[LIST_MAX] = "";
    for (size_t i = 0; i < n; i++) {
        ids[i] = ctx->gpus[i].id;
        if (name[0] != '\0' && eci_name_prefix(ids[i], name)) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", n_prefix ? ", " : "", ids[i]);
            n_prefix++;
        }
    }
    if (n_prefix > 1)
        return eci_error(ctx, EC_ENOTFOUND, "unknown gpu '%s': it could be any of %s (give one; `epochcast gpus` "
                         "lists all)", name, list);
    const char *near = eci_nearest(name, ids, n);
    return eci_error(ctx, EC_ENOTFOUND, "unknown gpu '%s' (did you mean '%s'? `epochcast gpus` lists all)",
                     name, near ? near : "");
}

size_t eci_gpu_id_index(const ec_ctx *ctx, const char *id)
{
    size_t g = 0;
    while (g < ctx->n_gpus && !eci_name_eq(ctx->gpus[g].id, id))
        g++;
    return g;
}

const eci_gpu *eci_hw_find(ec_ctx *ctx, const char *name)
{
    size_t last = ctx->gpu_found; /* any index: checked against n_gpus and the id itself */
    if (last < ctx->n_gpus && strcmp(ctx->gpus[last].id, name) == 0)
        return &ctx->gpus[last];
    long i = gpu_index(ctx, name);
    if (i < 0) {
        not_found(ctx, name);
        return NULL;
    }
    ctx->gpu_found = (size_t)i;
    return &ctx->gpus[i];
}

size_t ec_gpu_count(const ec_ctx *ctx)
{
    return ctx != NULL ? ctx->n_gpus : 0;
}

int ec_gpu_get(const ec_ctx *ctx, size_t i, ec_gpu_info *out)
{
    if (ctx == NULL || out == NULL || i >= ctx->n_gpus)
        return EC_EINVAL;
    const eci_gpu *g = &ctx->gpus[i];
    out->id = g->id;
    out->name = g->name;
    out->architecture = g->architecture;
    out->compute_capability = g->compute_capability;
    out->sm_count = g->sm_count;
    out->memory_bytes = g->memory_bytes;
    out->memory_bandwidth_bytes_per_s = g->memory_bandwidth_bytes_per_s;
    out->peak_fp32_flop_per_s = g->peak_fp32_flop_per_s;
    out->peak_tf32_flop_per_s = g->peak_tf32_flop_per_s;
    out->peak_fp16_flop_per_s = g->peak_fp16_flop_per_s;
    out->peak_bf16_flop_per_s = g->peak_bf16_flop_per_s;
    out->default_topology = g->default_topology;
    out->peak_fp8_flop_per_s = g->peak_fp8_flop_per_s;
    return EC_OK;
}

int ec_gpu_find(ec_ctx *ctx, const char *name, size_t *index)
{
    if (ctx == NULL || name == NULL || index == NULL)
        return EC_EMISUSE;
    long i = gpu_index(ctx, name);
    if (i < 0)
        return not_found(ctx, name);
    *index = (size_t)i;
    return EC_OK;
}
