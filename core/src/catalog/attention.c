/*
 * attention.c: models/attention.csv, the achieved efficiency of each fused attention kernel
 * (FlashAttention-1 to -4, the Triton FlashAttention of 2023, cuDNN's fused attention,
 * PyTorch's memory-efficient SDPA backend, cuDNN's FP8 attention: fractions of the FP8 peak) per GPU
 * architecture, forward and backward, causal
 * and not, each row with its public source (papers' figures, the kernels' own benchmarks); a
 * row with a head_dim holds at that head dim, the kernel's fraction between two such rows is
 * interpolated in log2(head dim) (eci_attn_hd_interp), an empty head_dim holds at any; its
 * reference_gpu is the gpus.csv id of the part the source measured on (model/compute.c scales the
 * fraction by a GPU's measured GEMM efficiency over that part's); cudnn_version, on cuDNN's rows
 * only, the cuDNN release they were measured with (empty: any), so that a run names its release
 * (key cudnn_version) and gets the newest rows at or before it (model/attn_rates.c); derived_from,
 * the kernel whose measured rates a kernel's rows are ratios of (the Triton kernel of FlashAttention-2's,
 * FlashAttention-4 of FlashAttention-3's): a fitted attention scale of that kernel scales this one too
 * (model/attn_rates.c), one base for every row of a kernel; back_to_back, 1 where the source timed the
 * kernel back to back long enough for a power limit to hold the clock down (stas00's FA4/FA3 ratio,
 * 25 calls without a gap), so the GPU's gpus.csv sustained_tensor_frac is not applied again
 * (model/attn_rates.c); empty or 0: a short-run timing, as the GEMM efficiencies are.
 * Loaded after gpus.csv: every GPU gets its architecture's rows, else the prior rows
 * (architecture '*'), so a prediction reads its kernel's efficiency without a lookup
 * (model/compute.c, eci_rates_attention).  A kernel with neither has from = ECI_AK_NONE: the
 * GPU cannot run it (FlashAttention-3 off Hopper, FlashAttention-4 off Blackwell, FP8 attention before
 * Hopper), which model/layout.c refuses.
 */
#include "catalog/catalog.h"

#include <math.h>
#include <string.h>

static const char *const KERNELS[ECI_AK_N] = {"flash2", "flash3", "triton", "cudnn", "sdpa_mem_efficient",
                                               "flash1", "flash4", "cudnn_fp8"};

#define KERNEL_LIST "flash1, flash2, flash3, flash4, triton, cudnn, cudnn_fp8, sdpa_mem_efficient"

const char *eci_attn_kernel_name(int kernel)
{
    return kernel >= 0 && kernel < ECI_AK_N ? KERNELS[kernel] : "?";
}

int eci_attn_kernel_index(const char *name)
{
    for (int k = 0; k < ECI_AK_N; k++)
        if (strcmp(name, KERNELS[k]) == 0)
            return k;
    return -1;
}

int eci_attn_class(int kernel, int precision)
{
    int fp32 = precision == EC_PREC_FP32 || precision == EC_PREC_TF32;
    return kernel == ECI_AK_MEM_EFFICIENT && fp32 ? ECI_AK_CLASS_MEM_EFFICIENT_FP32 : kernel;
}

const char *eci_attn_class_name(int cls)
{
    return cls == ECI_AK_CLASS_MEM_EFFICIENT_FP32 ? "sdpa_mem_efficient_fp32" : eci_attn_kernel_name(cls);
}

int eci_attn_class_index(const char *name)
{
    return strcmp(name, "sdpa_mem_efficient_fp32") == 0 ? ECI_AK_CLASS_MEM_EFFICIENT_FP32 : eci_attn_kernel_index(name);
}

double eci_attn_hd_interp(const double *hd, const double *v, int n, double d)
{
    if (n < 1)
        return 1.0;
    if (!(d > hd[0]))
        return v[0];
    for (int i = 0; i + 1 < n; i++)
        if (d < hd[i + 1]) {
            double t = log2(d / hd[i]) / log2(hd[i + 1] / hd[i]);
            return v[i] + t * (v[i + 1] - v[i]);
        }
    return v[n - 1];
}

/* One data row, parsed. */
typedef struct attn_row {
    int kernel, pass, causal; /* causal -1: the row holds for both */
    const char *arch;
    double frac, head_dim;    /* head_dim 0: the row holds at any head dim */
    size_t line;
    int ref;                  /* ctx->gpus index of the GPU its source measured on */
    int release;              /* cudnn_version as EC_RELEASE, 0: any release */
    int derived;              /* derived_from: the kernel its rates are ratios of, -1: none */
    int back_to_back;         /* back_to_back: 1 timed back to back (the held clock), 0 short runs */
} attn_row;

static int parse_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, void *out)
{
    attn_row *row = out;
    size_t line = eci_table_line(t, r);
    const char *kernel = eci_table_cell(t, r, col[0]), *pass = eci_table_cell(t, r, col[2]);
    const char *causal = eci_table_cell(t, r, col[3]), *source = eci_table_cell(t, r, col[5]);
    const char *head_dim = eci_table_cell(t, r, col[6]), *ref = eci_table_cell(t, r, col[7]);
    char echo[48];
    const char *derived = eci_table_cell(t, r, col[9]), *b2b = eci_table_cell(t, r, col[10]);
    *row = (attn_row){.kernel = eci_attn_kernel_index(kernel), .arch = eci_table_cell(t, r, col[1]), .line = line,
                      .derived = derived[0] != '\0' ? eci_attn_kernel_index(derived) : -1};
    if (row->kernel < 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: unknown kernel '%s' (" KERNEL_LIST ")", path, line,
                         eci_echo(echo, sizeof echo, kernel));
    if (derived[0] != '\0' && (row->derived < 0 || row->derived == row->kernel))
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s': derived_from '%s' is not another kernel (" KERNEL_LIST
                         ", or empty)", path, line, kernel, eci_echo(echo, sizeof echo, derived));
    if (b2b[0] != '\0' && strcmp(b2b, "0") != 0 && strcmp(b2b, "1") != 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s': back_to_back '%s' is not 0, 1 or empty (0: timed in "
                         "short runs)", path, line, kernel, eci_echo(echo, sizeof echo, b2b));
    row->back_to_back = b2b[0] == '1';
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
    size_t g = eci_gpu_id_index(ctx, ref);
    if (g == ctx->n_gpus)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': reference_gpu '%s' is not a gpus.csv id (the "
                         "GPU its source measured on)", path, line, kernel, row->arch, eci_echo(echo, sizeof echo, ref));
    row->ref = (int)g;
    if (eci_table_cell(t, r, col[8])[0] != '\0') {
        if (row->kernel != ECI_AK_CUDNN)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s': cudnn_version is for kernel 'cudnn' rows only (leave "
                             "it empty)", path, line, kernel);
        int rc = eci_table_release(ctx, t, r, col[8], &row->release);
        if (rc != EC_OK)
            return rc;
    }
    if (head_dim[0] != '\0') { /* the head dims FlashAttention kernels are built for */
        long hd = 0;
        int rc = eci_table_int(ctx, t, r, col[6], 16, 512, &hd);
        if (rc != EC_OK)
            return rc;
        row->head_dim = (double)hd;
    }
    return eci_table_number(ctx, t, r, col[4], 0.01, 1.5, &row->frac);
}

/* The rows of one pass and causal case: their head dims (0: any), ascending, and fractions. */
typedef struct hd_points {
    int n;
    double hd[ECI_AK_HD_MAX], frac[ECI_AK_HD_MAX];
    size_t line[ECI_AK_HD_MAX];
} hd_points;

static int add_point(ec_ctx *ctx, const char *path, const attn_row *row, const char *arch, int c, hd_points *p)
{
    const char *pass = row->pass ? "bwd" : "fwd";
    for (int i = 0; i < p->n; i++) {
        if (p->hd[i] == row->head_dim && row->head_dim == 0)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': a second %s row for causal=%d (first on "
                             "line %zu)", path, row->line, KERNELS[row->kernel], arch, pass, c, p->line[i]);
        if (p->hd[i] == row->head_dim)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': a second %s row for causal=%d and "
                             "head_dim %.0f (first on line %zu)", path, row->line, KERNELS[row->kernel], arch, pass,
                             c, row->head_dim, p->line[i]);
        if (p->hd[i] == 0 || row->head_dim == 0)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': %s causal=%d has a row for every head dim "
                             "(empty head_dim) and one for head_dim %.0f (lines %zu and %zu)", path, row->line,
                             KERNELS[row->kernel], arch, pass, c, p->hd[i] + row->head_dim, p->line[i], row->line);
    }
    if (p->n == ECI_AK_HD_MAX)
        return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': more than %d head dims for %s causal=%d",
                         path, row->line, KERNELS[row->kernel], arch, ECI_AK_HD_MAX, pass, c);
    int at = p->n++;
    for (; at > 0 && p->hd[at - 1] > row->head_dim; at--) {
        p->hd[at] = p->hd[at - 1];
        p->frac[at] = p->frac[at - 1];
        p->line[at] = p->line[at - 1];
    }
    p->hd[at] = row->head_dim;
    p->frac[at] = row->frac;
    p->line[at] = row->line;
    return EC_OK;
}

/* The fraction of one case at head dim d (its only row when that holds at any head dim). */
static double points_at(const hd_points *p, double d)
{
    return p->hd[0] == 0 ? p->frac[0] : eci_attn_hd_interp(p->hd, p->frac, p->n, d);
}

/* e's fractions at the reference head dim and, when any row gives a head dim, their ratios at
 * every head dim that some case of this kernel and architecture gives. */
static int set_fracs(ec_ctx *ctx, const char *path, const char *kernel, const char *arch, hd_points pts[2][2],
                     eci_attn_eff *e)
{
    e->n_hd = 0;
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < 2; c++)
            for (int i = 0; i < pts[p][c].n; i++) {
                double d = pts[p][c].hd[i];
                int at = 0;
                while (at < e->n_hd && e->hd[at] < d)
                    at++;
                if (d == 0 || (at < e->n_hd && e->hd[at] == d))
                    continue;
                if (e->n_hd == ECI_AK_HD_MAX)
                    return eci_error(ctx, EC_EPARSE, "%s: kernel '%s' on '%s': more than %d head dims", path, kernel,
                                     arch, ECI_AK_HD_MAX);
                memmove(&e->hd[at + 1], &e->hd[at], (size_t)(e->n_hd - at) * sizeof e->hd[0]);
                e->hd[at] = d;
                e->n_hd++;
            }
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < 2; c++) {
            e->frac[p][c] = points_at(&pts[p][c], ECI_ATTN_REF_HEAD_DIM);
            for (int i = 0; i < e->n_hd; i++)
                e->hd_scale[p][c][i] = points_at(&pts[p][c], e->hd[i]) / e->frac[p][c];
        }
    return EC_OK;
}

/* Set e from the rows of one kernel, architecture and release; a located error when a pass or
 * causal case is missing or given twice (at one head dim, or at any and at one). */
static int fill(ec_ctx *ctx, const char *path, const attn_row *rows, size_t n, int kernel, const char *arch,
                int release, eci_attn_eff *e)
{
    e->release = release;
    hd_points pts[2][2];
    memset(pts, 0, sizeof pts);
    size_t ref_line = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].kernel != kernel || !eci_name_eq(rows[i].arch, arch) || rows[i].release != release)
            continue;
        if (ref_line != 0 && rows[i].ref != e->ref_gpu)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': reference_gpu '%s', but line %zu names "
                             "'%s' (one kernel on one architecture is measured on one GPU)", path, rows[i].line,
                             KERNELS[kernel], arch, ctx->gpus[rows[i].ref].id, ref_line, ctx->gpus[e->ref_gpu].id);
        if (ref_line != 0 && rows[i].back_to_back != e->back_to_back)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': back_to_back %d, but line %zu has %d (one "
                             "kernel on one architecture is timed one way)", path, rows[i].line, KERNELS[kernel], arch,
                             rows[i].back_to_back, ref_line, e->back_to_back);
        if (ref_line == 0) {
            ref_line = rows[i].line;
            e->ref_gpu = rows[i].ref;
            e->back_to_back = rows[i].back_to_back;
        }
        for (int c = 0; c < 2; c++) {
            if (rows[i].causal >= 0 && rows[i].causal != c)
                continue;
            int rc = add_point(ctx, path, &rows[i], arch, c, &pts[rows[i].pass][c]);
            if (rc != EC_OK)
                return rc;
        }
    }
    int any = 0, all = 1;
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < 2; c++) {
            any |= pts[p][c].n != 0;
            all &= pts[p][c].n != 0;
        }
    if (any && !all)
        return eci_error(ctx, EC_EPARSE, "%s: kernel '%s' on '%s': needs fwd and bwd rows for causal and "
                         "non-causal attention (an empty causal cell covers both)", path, KERNELS[kernel], arch);
    return any ? set_fracs(ctx, path, KERNELS[kernel], arch, pts, e) : EC_ENOTFOUND;
}

/* One kernel on one architecture (or GPU id, or '*'): its rows at each release they name, oldest
 * first, or one set (release 0) when they name none. */
typedef struct kernel_sets {
    int n;
    eci_attn_eff at[ECI_AK_RELEASES_MAX];
} kernel_sets;

/* The releases the rows of one kernel on arch name, ascending in v (n 0: none, or no row); an
 * error when some name one and others do not, or when there are too many. */
static int releases_of(ec_ctx *ctx, const char *path, const attn_row *rows, size_t n, int kernel, const char *arch,
                       int *v, int *nv)
{
    size_t any_line = 0, named_line = 0;
    *nv = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].kernel != kernel || !eci_name_eq(rows[i].arch, arch))
            continue;
        int r = rows[i].release, at = 0;
        if (r == 0)
            any_line = rows[i].line;
        else
            named_line = rows[i].line;
        if (any_line != 0 && named_line != 0)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': line %zu names a cudnn_version, line %zu "
                             "does not (name one on every row of a kernel on an architecture, or on none)", path,
                             rows[i].line, KERNELS[kernel], arch, named_line, any_line);
        while (at < *nv && v[at] < r)
            at++;
        if (r == 0 || (at < *nv && v[at] == r))
            continue;
        if (*nv == ECI_AK_RELEASES_MAX)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' on '%s': more than %d cuDNN releases", path,
                             rows[i].line, KERNELS[kernel], arch, ECI_AK_RELEASES_MAX);
        memmove(&v[at + 1], &v[at], (size_t)(*nv - at) * sizeof v[0]);
        v[at] = r;
        (*nv)++;
    }
    return EC_OK;
}

/* Fill ks from the rows of one kernel on arch (from: ECI_AK_OWN or _PRIOR); EC_ENOTFOUND when it
 * has none. */
static int fill_sets(ec_ctx *ctx, const char *path, const attn_row *rows, size_t n, int kernel, const char *arch,
                     int from, kernel_sets *ks)
{
    int v[ECI_AK_RELEASES_MAX], nv = 0;
    memset(ks, 0, sizeof *ks); /* the GPU keeps every slot (set_gpu_kernel): none uninitialised */
    int rc = releases_of(ctx, path, rows, n, kernel, arch, v, &nv);
    ks->n = nv > 0 ? nv : 1;
    for (int i = 0; rc == EC_OK && i < ks->n; i++) {
        ks->at[i] = (eci_attn_eff){.from = from};
        rc = fill(ctx, path, rows, n, kernel, arch, nv > 0 ? v[i] : 0, &ks->at[i]);
    }
    return rc;
}

/* g's kernel k from ks: the newest release as attn[k], and cuDNN's releases when they are named. */
static void set_gpu_kernel(eci_gpu *g, int k, const kernel_sets *ks)
{
    g->attn[k] = ks->at[ks->n - 1];
    if (k != ECI_AK_CUDNN)
        return;
    g->n_cudnn_releases = ks->at[0].release > 0 ? ks->n : 0;
    memcpy(g->cudnn_releases, ks->at, sizeof ks->at);
}

/* The kernel whose fitted scale scales kernel k: the one every row of k names in derived_from
 * (itself when they name none), into *base; an error naming both lines when two rows differ, or
 * when that kernel is derived in turn (a fitted scale reaches one step). */
static int kernel_base(ec_ctx *ctx, const char *path, const attn_row *rows, size_t n, int k, int *base)
{
    size_t first = 0;
    int derived = -1;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].kernel != k)
            continue;
        if (first == 0) {
            first = rows[i].line;
            derived = rows[i].derived;
        } else if (rows[i].derived != derived) {
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s': derived_from '%s', but line %zu has '%s' (every "
                             "row of a kernel is derived from the same kernel, or none is)", path, rows[i].line,
                             KERNELS[k], rows[i].derived < 0 ? "" : KERNELS[rows[i].derived], first,
                             derived < 0 ? "" : KERNELS[derived]);
        }
    }
    for (size_t i = 0; derived >= 0 && i < n; i++)
        if (rows[i].kernel == derived && rows[i].derived >= 0)
            return eci_error(ctx, EC_EPARSE, "%s:%zu: kernel '%s' is derived from '%s', itself derived from '%s' "
                             "(line %zu): name the kernel measured", path, first, KERNELS[k], KERNELS[derived],
                             KERNELS[rows[i].derived], rows[i].line);
    *base = derived >= 0 ? derived : k;
    return EC_OK;
}

/* Every kernel of every GPU: the rows for that part alone (architecture cell = its gpus.csv id),
 * else its architecture's, else the prior's, else none. */
static int link_gpus(ec_ctx *ctx, const char *path, const void *out, size_t n)
{
    const attn_row *rows = out;
    for (int k = 0; k < ECI_AK_N; k++) {
        kernel_sets prior;
        int base = k;
        int rc = kernel_base(ctx, path, rows, n, k, &base);
        if (rc != EC_OK)
            return rc;
        rc = fill_sets(ctx, path, rows, n, k, "*", ECI_AK_PRIOR, &prior);
        if (rc == EC_ENOTFOUND && (k == ECI_AK_FLASH2 || k == ECI_AK_MEM_EFFICIENT))
            return eci_error(ctx, EC_EPARSE, "%s: kernel '%s' needs prior rows (architecture '*'): attention=sdpa "
                             "runs it on any GPU", path, KERNELS[k]);
        if (rc == EC_ENOTFOUND)
            prior = (kernel_sets){.n = 1, .at = {{.from = ECI_AK_NONE}}};
        else if (rc != EC_OK)
            return rc;
        for (size_t g = 0; g < ctx->n_gpus; g++) {
            kernel_sets own;
            rc = fill_sets(ctx, path, rows, n, k, ctx->gpus[g].id, ECI_AK_OWN, &own);
            if (rc == EC_ENOTFOUND)
                rc = fill_sets(ctx, path, rows, n, k, ctx->gpus[g].architecture, ECI_AK_OWN, &own);
            if (rc != EC_OK && rc != EC_ENOTFOUND)
                return rc;
            kernel_sets *ks = rc == EC_OK ? &own : &prior;
            for (int i = 0; i < ks->n; i++)
                ks->at[i].base = base;
            set_gpu_kernel(&ctx->gpus[g], k, ks);
        }
    }
    return EC_OK;
}

static void reset_gpu(eci_gpu *g)
{
    memset(g->attn, 0, sizeof g->attn);
    memset(g->cudnn_releases, 0, sizeof g->cudnn_releases);
    g->n_cudnn_releases = 0;
}

int eci_attn_load(ec_ctx *ctx, const char *path)
{
    static const char *const COLUMNS[11] = {"kernel",        "architecture",  "pass",         "causal",
                                            "eff_frac",      "source",        "head_dim",     "reference_gpu",
                                            "cudnn_version", "derived_from",  "back_to_back"};
    static const eci_gpu_table SPEC = {COLUMNS, 11, sizeof(attn_row), parse_row, link_gpus, reset_gpu};
    return eci_gpu_table_load(ctx, path, &SPEC);
}
