/*
 * nccl.c: loads models/nccl_tuning.csv, the constants NCCL's tuner prices an all-reduce with
 * (NVIDIA/nccl src/graph/tuning.cc, the commit named in each row's source): per algorithm
 * (ring, tree) and protocol (LL, LL128, Simple) the base latency, the latency of one step over
 * NVLink, PCI and the network, the bus-bandwidth factor, and the tree's correction by message
 * size.  model/comm.c prices a collective with the algorithm this model finds fastest.
 */
#include "catalog/catalog.h"

#include <stddef.h>
#include <string.h>

typedef struct nccl_row {
    char *id, *size_correction, *source;
    double base_us, nvlink_us, pci_us, net_us, net_step_floor_us, net_large_mult, net_large_mult_old, min_cc;
    double busbw_frac, busbw_frac_one_node, large_min_bytes, corr_unit_bytes;
    int needs_nvlink;
} nccl_row;

#define F(col, kind, field, lo, hi) {col, kind, offsetof(nccl_row, field), lo, hi}
static const eci_field nccl_fields[] = {
    F("id", ECI_F_STR, id, 0, 0),
    F("base_latency_us", ECI_F_DOUBLE, base_us, 0, 1e4),
    F("nvlink_latency_us", ECI_F_DOUBLE, nvlink_us, 0, 1e4),
    F("pci_latency_us", ECI_F_DOUBLE, pci_us, 0, 1e4),
    F("net_latency_us", ECI_F_DOUBLE, net_us, 0, 1e4),
    F("net_step_floor_us", ECI_F_DOUBLE_OPT, net_step_floor_us, 0, 1e4),
    F("net_large_latency_mult", ECI_F_DOUBLE, net_large_mult, 1, 100),
    F("net_large_latency_mult_before_sm80", ECI_F_DOUBLE, net_large_mult_old, 1, 100),
    F("net_large_min_bytes_per_rank", ECI_F_DOUBLE, large_min_bytes, 0, 1e12),
    F("busbw_frac", ECI_F_DOUBLE, busbw_frac, 1e-3, 1),
    F("busbw_frac_one_node", ECI_F_DOUBLE, busbw_frac_one_node, 1e-3, 1),
    F("needs_nvlink", ECI_F_INT, needs_nvlink, 0, 1),
    F("min_compute_capability", ECI_F_DOUBLE, min_cc, 0, 100),
    F("size_correction", ECI_F_STR, size_correction, 0, 0),
    F("size_correction_first_bytes", ECI_F_DOUBLE, corr_unit_bytes, 1, 1e12),
    F("source", ECI_F_STR, source, 0, 0),
};
#undef F
#define N_NCCL_FIELDS (sizeof nccl_fields / sizeof nccl_fields[0])

static const char *const row_ids[ECI_NCCL_ALGOS][ECI_NCCL_PROTOS] = {
    {"ring_ll", "ring_ll128", "ring_simple"},
    {"tree_ll", "tree_ll128", "tree_simple"},
};

/* "0.9 0.9 ..." -> up to ECI_NCCL_SIZE_CLASSES factors in (0, 1] (more are allowed and unused:
 * NCCL's table has 24, of which it reads the first 23); empty: none. */
static int parse_corr(ec_ctx *ctx, const char *path, const char *id, const char *text, eci_nccl_proto *p)
{
    p->n_corr = 0;
    const char *s = text;
    while (*s != '\0') {
        while (*s == ' ')
            s++;
        if (*s == '\0')
            break;
        char num[ECI_NUMBER_MAX + 1];
        size_t n = strcspn(s, " ");
        int overflow = 0;
        double v = 0;
        if (n < sizeof num) {
            memcpy(num, s, n);
            num[n] = '\0';
            if (eci_decimal_syntax(num, 0))
                v = eci_strtod_c(num, &overflow);
        }
        if (n >= sizeof num || overflow || !(v > 0 && v <= 1))
            return eci_error(ctx, EC_EPARSE, "%s: row '%s': column 'size_correction': each factor must be a "
                             "number in (0, 1], separated by spaces", path, id);
        if (p->n_corr < ECI_NCCL_SIZE_CLASSES)
            p->corr[p->n_corr++] = v;
        s += n;
    }
    return EC_OK;
}

static int build(ec_ctx *ctx, const char *path, const nccl_row *rows, size_t n, eci_nccl_tuner *t)
{
    for (size_t i = 0; i < n; i++) {
        int known = 0;
        for (int a = 0; a < ECI_NCCL_ALGOS; a++)
            for (int p = 0; p < ECI_NCCL_PROTOS; p++)
                known |= strcmp(rows[i].id, row_ids[a][p]) == 0;
        if (!known) {
            char echo[64];
            return eci_error(ctx, EC_EPARSE, "%s: unknown row '%s' (rows: ring_ll, ring_ll128, ring_simple, tree_ll, "
                             "tree_ll128, tree_simple)", path, eci_echo(echo, sizeof echo, rows[i].id));
        }
    }
    for (int a = 0; a < ECI_NCCL_ALGOS; a++)
        for (int p = 0; p < ECI_NCCL_PROTOS; p++) {
            const nccl_row *r = NULL;
            for (size_t i = 0; i < n && r == NULL; i++)
                if (strcmp(rows[i].id, row_ids[a][p]) == 0)
                    r = &rows[i];
            if (r == NULL)
                return eci_error(ctx, EC_EPARSE, "%s: row '%s' is missing (NCCL's tuner needs all six: ring and tree "
                                 "x LL, LL128, Simple)", path, row_ids[a][p]);
            eci_nccl_proto *q = &t->p[a][p];
            q->base_s = r->base_us * 1e-6;
            q->intra_s[0] = r->nvlink_us * 1e-6;
            q->intra_s[1] = r->pci_us * 1e-6;
            q->net_s = r->net_us * 1e-6;
            q->net_step_floor_s = r->net_step_floor_us > 0 ? r->net_step_floor_us * 1e-6 : 0;
            q->net_large_mult = r->net_large_mult;
            q->net_large_mult_before_sm80 = r->net_large_mult_old;
            q->net_large_min_bytes_per_rank = r->large_min_bytes;
            q->corr_first_bytes = r->corr_unit_bytes;
            q->min_compute_capability = r->min_cc;
            q->busbw_frac = r->busbw_frac;
            q->busbw_frac_one_node = r->busbw_frac_one_node;
            q->needs_nvlink = r->needs_nvlink;
            int rc = parse_corr(ctx, path, r->id, r->size_correction, q);
            if (rc != EC_OK)
                return rc;
        }
    return EC_OK;
}

int eci_nccl_load(ec_ctx *ctx, const char *path)
{
    void *rows;
    size_t n;
    int rc = eci_rows_load(ctx, path, nccl_fields, N_NCCL_FIELDS, sizeof(nccl_row), &rows, &n);
    if (rc != EC_OK)
        return rc;
    eci_nccl_tuner *t = eci_calloc(ctx, 1, sizeof *t);
    rc = t == NULL ? EC_ENOMEM : build(ctx, path, rows, n, t);
    eci_rows_free(ctx, nccl_fields, N_NCCL_FIELDS, sizeof(nccl_row), rows, n);
    if (rc != EC_OK) {
        if (t != NULL)
            eci_free(ctx, t, sizeof *t);
        return rc;
    }
    ctx->nccl = t;
    return EC_OK;
}

void eci_nccl_free(ec_ctx *ctx)
{
    if (ctx->nccl != NULL)
        eci_free(ctx, ctx->nccl, sizeof *ctx->nccl);
    ctx->nccl = NULL;
}
