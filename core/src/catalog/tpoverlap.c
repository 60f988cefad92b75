/*
 * tpoverlap.c: loads models/tp_overlap.csv, Transformer Engine's userbuffers configurations
 * (tp_comm_overlap=1): per configuration and per GEMM that model/overlap.c prices (qkv_fprop,
 * proj_fprop, fc1_fprop, fc2_fprop, proj_dgrad, fc2_dgrad) the overlap method (ring_exchange,
 * pipeline, bulk), the SMs its communication holds, the chunks a pipelined GEMM is split into and
 * whether the GEMM gives those SMs up (set_sm_margin).  Rows come from NeMo-Framework-Launcher's
 * tp_overlap yaml files, Megatron-Bridge's userbuffers_* presets and TE's initialize_ub defaults (the
 * source column of each); the config key tp_overlap_cfg picks one by id.
 */
#include "catalog/catalog.h"

#include <stddef.h>
#include <string.h>

typedef struct ub_row {
    char *id, *method[ECI_UB_GEMMS], *source;
    double num_sm[ECI_UB_GEMMS], num_splits[ECI_UB_GEMMS];
    int margin[ECI_UB_GEMMS];
    size_t line; /* where the row starts, for the messages of build() */
} ub_row;

#define F(col, kind, field, lo, hi) {col, kind, offsetof(ub_row, field), lo, hi}
#define GEMM(name, g)                                                                                  \
    F(name "_method", ECI_F_STR, method[g], 0, 0), F(name "_num_sm", ECI_F_DOUBLE, num_sm[g], 0, 1024), \
        F(name "_num_splits", ECI_F_DOUBLE, num_splits[g], 0, 64), F(name "_set_sm_margin", ECI_F_INT, margin[g], 0, 1)
static const eci_field ub_fields[] = {
    F("id", ECI_F_STR, id, 0, 0),
    GEMM("qkv_fprop", ECI_UB_QKV_FPROP),
    GEMM("proj_fprop", ECI_UB_PROJ_FPROP),
    GEMM("fc1_fprop", ECI_UB_FC1_FPROP),
    GEMM("fc2_fprop", ECI_UB_FC2_FPROP),
    GEMM("proj_dgrad", ECI_UB_PROJ_DGRAD),
    GEMM("fc2_dgrad", ECI_UB_FC2_DGRAD),
    F("source", ECI_F_STR, source, 0, 0),
    F(NULL, ECI_F_LINE, line, 0, 0),
};
#undef GEMM
#undef F
#define N_UB_FIELDS (sizeof ub_fields / sizeof ub_fields[0])

static const char *const GEMM_NAMES[ECI_UB_GEMMS] = {"qkv_fprop", "proj_fprop", "fc1_fprop",
                                                     "fc2_fprop", "proj_dgrad", "fc2_dgrad"};
static const char *const METHODS[] = {"ring_exchange", "pipeline", "bulk"}; /* ECI_UB_RING ... */

struct eci_tp_overlaps {
    eci_tp_overlap *rows;
    size_t n;
};

static int build(ec_ctx *ctx, const char *path, const ub_row *rows, size_t n, eci_tp_overlap *out)
{
    char echo[64], echo2[64];
    for (size_t i = 0; i < n; i++) {
        snprintf(out[i].id, sizeof out[i].id, "%s", rows[i].id);
        if (strlen(rows[i].id) >= sizeof out[i].id)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: row %zu: id longer than %zu characters", path, rows[i].line,
                             i + 1, sizeof out[i].id - 1);
        for (int g = 0; g < ECI_UB_GEMMS; g++) {
            eci_ub_gemm *u = &out[i].gemm[g];
            u->method = -1;
            for (int m = 0; m < (int)(sizeof METHODS / sizeof METHODS[0]); m++)
                if (strcmp(rows[i].method[g], METHODS[m]) == 0)
                    u->method = m;
            if (u->method < 0)
                return eci_error(ctx, EC_EPARSE, "%s:%zu: row '%s': column '%s_method': '%s' is not ring_exchange, "
                                 "pipeline or bulk", path, rows[i].line, eci_echo(echo, sizeof echo, rows[i].id),
                                 GEMM_NAMES[g],
                                 eci_echo(echo2, sizeof echo2, rows[i].method[g]));
            u->num_sm = rows[i].num_sm[g];
            u->num_splits = rows[i].num_splits[g];
            u->set_sm_margin = rows[i].margin[g];
            if (u->method == ECI_UB_PIPELINE && g != ECI_UB_PROJ_FPROP && g != ECI_UB_FC2_FPROP)
                return eci_error(ctx, EC_EPARSE, "%s:%zu: row '%s': column '%s_method': pipeline overlaps only a "
                                 "reduce-scatter (proj_fprop, fc2_fprop; TransformerEngine@7d576ed2 "
                                 "transformer_engine/pytorch/module/base.py L130-132)", path, rows[i].line,
                                 eci_echo(echo, sizeof echo, rows[i].id), GEMM_NAMES[g]);
            if (u->method == ECI_UB_PIPELINE && u->num_splits < 1)
                return eci_error(ctx, EC_EPARSE, "%s:%zu: row '%s': column '%s_num_splits': a pipeline needs 1 or "
                                 "more chunks", path, rows[i].line, eci_echo(echo, sizeof echo, rows[i].id),
                                 GEMM_NAMES[g]);
        }
    }
    return EC_OK;
}

int eci_tp_overlap_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, ub_fields, N_UB_FIELDS, sizeof(ub_row), &rows, &n);
    if (rc != EC_OK)
        return rc;
    struct eci_tp_overlaps *t = eci_calloc(ctx, 1, sizeof *t);
    if (t != NULL && (t->rows = eci_calloc(ctx, n, sizeof *t->rows)) == NULL) {
        eci_free(ctx, t, sizeof *t);
        t = NULL;
    }
    rc = t == NULL ? EC_ENOMEM : build(ctx, path, rows, n, t->rows);
    eci_rows_free(ctx, ub_fields, N_UB_FIELDS, sizeof(ub_row), rows, n);
    int found = 0;
    for (size_t i = 0; rc == EC_OK && i < n; i++)
        found |= strcmp(t->rows[i].id, ECI_TP_OVERLAP_DEFAULT) == 0;
    if (rc == EC_OK && !found)
        rc = eci_error(ctx, EC_EPARSE, "%s: row '%s' is missing (tp_overlap_cfg's default)", path,
                       ECI_TP_OVERLAP_DEFAULT);
    if (rc != EC_OK) {
        if (t != NULL) {
            eci_free(ctx, t->rows, n * sizeof *t->rows);
            eci_free(ctx, t, sizeof *t);
        }
        return rc;
    }
    t->n = n;
    ctx->tp_overlaps = t;
    return EC_OK;
}

void eci_tp_overlap_free(ec_ctx *ctx)
{
    if (ctx->tp_overlaps == NULL)
        return;
    eci_free(ctx, ctx->tp_overlaps->rows, ctx->tp_overlaps->n * sizeof *ctx->tp_overlaps->rows);
    eci_free(ctx, ctx->tp_overlaps, sizeof *ctx->tp_overlaps);
    ctx->tp_overlaps = NULL;
}

int eci_tp_overlap_index(ec_ctx *ctx, const char *id)
{
    const struct eci_tp_overlaps *t = ctx->tp_overlaps;
    const char *want = id[0] != '\0' ? id : ECI_TP_OVERLAP_DEFAULT;
    for (size_t i = 0; t != NULL && i < t->n; i++)
        if (strcmp(t->rows[i].id, want) == 0)
            return (int)i;
    char list[512] = "", echo[64];
    size_t used = 0;
    for (size_t i = 0; t != NULL && i < t->n && used < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", t->rows[i].id);
        used += w > 0 ? (size_t)w : 0;
    }
    eci_error(ctx, EC_ENOTFOUND, "key 'tp_overlap_cfg': unknown configuration '%s' (models/tp_overlap.csv: %s)",
              eci_echo(echo, sizeof echo, want), list);
    return -1;
}

const eci_tp_overlap *eci_tp_overlap_at(const ec_ctx *ctx, int index)
{
    const struct eci_tp_overlaps *t = ctx->tp_overlaps;
    return t != NULL && index >= 0 && (size_t)index < t->n ? &t->rows[index] : NULL;
}
