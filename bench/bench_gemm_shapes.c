/*
 * bench_gemm_shapes.c: the GEMM pricing (model/compute.c, eci_gemm_time_s) against the public
 * measurements of GEMM throughput by shape in models/gemm_shapes.csv (issue 39 item 1).  For
 * every row: the fraction of its series' best shape (same GPU, dtype and source: the row whose
 * achieved rate is the series' best) that the row reaches, measured and predicted, and the
 * relative error of the prediction; then the MAPE per architecture and per shape class.
 * Fractions of the best shape are independent of gpus.csv's best-shape efficiency: they test the
 * shape curve (tile and wave quantization, the short-reduction term, the roofline and the kernel
 * floor) as the shipped profile's fitted gemm_scale lifts it toward the best shape, never past it
 * (kernel_time.c eci_matmul_at: with a scale above 1 a mid-sized shape may price at
 * the best shape's rate), not the peak.  A row without a gpus.csv GPU is priced on
 * its architecture's stand-in (STAND_IN below), marked * in the table.
 *
 *   bench_gemm_shapes MODELS_DIR                 prints the Markdown report
 *   bench_gemm_shapes MODELS_DIR --check FILE    exit 1 when FILE differs from that report
 */
#include "epochcast.h"
#include "internal.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 1024
#define MAX_ARCH 16
#define REPORT_MAX (1 << 20)

/* GPUs a row of an architecture without a gpus.csv GPU of its own is priced on */
static const char *const STAND_IN[][2] = {{"hopper", "h100-sxm5-80gb"}, {"ada", "l40s"}};

enum { C_LARGE, C_SMALL, C_SKINNY, N_CLASS };
static const char *const CLASS_NAME[N_CLASS] = {"training-sized", "small", "skinny"};

typedef struct {
    const char *arch, *gpu, *dtype, *source;
    double m, n, k, b, achieved, best;
    double pred_rate; /* FLOP/s the pricing gives this shape */
    int ref;          /* index of the series' best-shape row, -1: none */
    int stand_in;
} row_t;

typedef struct {
    char *buf;
    size_t len;
} report_t;

static void out(report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(report_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->buf + r->len, REPORT_MAX - r->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        r->len += (size_t)n < REPORT_MAX - r->len ? (size_t)n : REPORT_MAX - r->len - 1;
}

static int precision_of(const char *dtype)
{
    static const char *const names[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
    static const int precs[] = {EC_PREC_FP32, EC_PREC_TF32, EC_PREC_FP16, EC_PREC_BF16, EC_PREC_AMP_FP8};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(dtype, names[i]) == 0)
            return precs[i];
    return -1;
}

static int class_of(const row_t *w)
{
    double lo = fmin(w->m, fmin(w->n, w->k));
    if (lo <= 512)
        return C_SKINNY;
    return 2.0 * w->m * w->n * w->k * w->b < 2.0 * 2048.0 * 2048.0 * 2048.0 ? C_SMALL : C_LARGE;
}

/* The pricing's rate for row w: FLOPs over eci_gemm_time_s on its GPU at its dtype. */
static int price(ec_ctx *ctx, const eci_params *calib, row_t *w)
{
    const char *gpu = w->gpu;
    w->stand_in = 0;
    if (gpu[0] == '\0') {
        for (size_t i = 0; i < sizeof STAND_IN / sizeof STAND_IN[0]; i++)
            if (strcmp(w->arch, STAND_IN[i][0]) == 0)
                gpu = STAND_IN[i][1];
        w->stand_in = 1;
    }
    const eci_gpu *g = gpu[0] ? eci_hw_find(ctx, gpu) : NULL;
    int prec = precision_of(w->dtype);
    if (g == NULL || prec < 0) {
        fprintf(stderr, "bench_gemm_shapes: no GPU or dtype to price %s %s %s on\n", w->arch, w->gpu, w->dtype);
        return -1;
    }
    eci_rates r;
    eci_rates_init(ctx, g, prec, calib, 0, EC_KERNELS_EAGER, &r);
    if (prec == EC_PREC_AMP_FP8 && r.fp8_flop_per_s > 0) {
        r.gemm_flop_per_s = r.fp8_flop_per_s;
        r.gemm_in_bytes = 1.0;
    }
    w->pred_rate = 2.0 * w->m * w->n * w->k * w->b / eci_gemm_time_s(&r, w->m, w->n, w->k, w->b, ECI_OP_GEMM);
    return 0;
}

static size_t load_rows(ec_ctx *ctx, const char *models, row_t *rows, eci_table **tp)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/gemm_shapes.csv", models);
    if (eci_table_load(ctx, path, tp) != EC_OK) {
        fprintf(stderr, "bench_gemm_shapes: %s\n", ec_ctx_errmsg(ctx));
        exit(1);
    }
    eci_table *t = *tp;
    static const char *const cols[] = {"architecture", "gpu", "dtype", "m", "n", "k", "batch",
                                       "achieved_flop_per_s", "best_flop_per_s", "source"};
    int c[10];
    for (int i = 0; i < 10; i++)
        if (eci_table_require(ctx, t, cols[i], &c[i]) != EC_OK) {
            fprintf(stderr, "bench_gemm_shapes: %s\n", ec_ctx_errmsg(ctx));
            exit(1);
        }
    size_t n = eci_table_rows(t) < MAX_ROWS ? eci_table_rows(t) : MAX_ROWS;
    for (size_t i = 0; i < n; i++) {
        row_t *w = &rows[i];
        w->arch = eci_table_cell(t, i, c[0]);
        w->gpu = eci_table_cell(t, i, c[1]);
        w->dtype = eci_table_cell(t, i, c[2]);
        w->source = eci_table_cell(t, i, c[9]);
        double *v[] = {&w->m, &w->n, &w->k, &w->b, &w->achieved, &w->best};
        for (int j = 0; j < 6; j++)
            *v[j] = strtod(eci_table_cell(t, i, c[3 + j]), NULL);
    }
    /* each row's series reference: the row of the same architecture, GPU, dtype and best rate
     * that reaches that best rate */
    for (size_t i = 0; i < n; i++) {
        rows[i].ref = -1;
        for (size_t j = 0; j < n && rows[i].ref < 0; j++)
            if (rows[j].achieved == rows[j].best && rows[j].best == rows[i].best &&
                strcmp(rows[j].arch, rows[i].arch) == 0 && strcmp(rows[j].gpu, rows[i].gpu) == 0 &&
                strcmp(rows[j].dtype, rows[i].dtype) == 0)
                rows[i].ref = (int)j;
    }
    return n;
}

/* Short name of a row's source: its first word (ZZC-79, XLA-MMT, ...). */
static void source_tag(const char *s, char *buf, size_t n)
{
    size_t i = 0;
    while (s[i] && s[i] != ' ' && s[i] != ',' && i + 1 < n) {
        buf[i] = s[i];
        i++;
    }
    buf[i] = '\0';
}

typedef struct {
    const char *arch;
    double sum[N_CLASS + 1];
    int cnt[N_CLASS + 1];
    double bias[N_CLASS + 1]; /* sum of log(pred / measured) */
} arch_stat;

static void report(const row_t *rows, size_t n, report_t *rep)
{
    out(rep, "# GEMM throughput by shape: pricing against public measurements\n\n"
             "Regenerate: `./build-h/bench/bench_gemm_shapes models > bench/results/gemm_shapes.md` "
             "(ctest `bench_gemm_shapes_fresh` fails when this file is stale).\n\n"
             "Each row of `models/gemm_shapes.csv`: the fraction of its series' best shape (same GPU, "
             "dtype and source) the shape reaches, measured and as `model/compute.c` prices it "
             "(`eci_gemm_time_s`: tile and wave quantization, the short-reduction term, the roofline, "
             "the kernel floor, x the fitted `gemm_scale` of `models/profile.csv` up to the best shape's rate; "
             "gpus.csv's best-shape efficiency cancels). "
             "Kernel time only: ZZC's eager `torch.matmul` timings include host dispatch (about 10 us a "
             "call), which epochcast prices apart. err = predicted / measured - 1. A GPU marked * is "
             "the architecture's stand-in (no gpus.csv row for the measured GPU). Classes: skinny (a "
             "dimension <= 512), small (under 2 x 2048^3 FLOPs), training-sized (the rest). The "
             "series' best-shape rows (fraction 1 by definition) are listed but not counted.\n\n");
    out(rep, "| arch | GPU | dtype | b x m x n x k | class | measured | predicted | err | source |\n"
             "| --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |\n");
    arch_stat st[MAX_ARCH];
    size_t na = 0;
    memset(st, 0, sizeof st);
    for (size_t i = 0; i < n; i++) {
        const row_t *w = &rows[i];
        char tag[32];
        source_tag(w->source, tag, sizeof tag);
        if (w->ref < 0) {
            out(rep, "| %s | %s | %s | %g x %g x %g x %g | - | %.3f | - | no best-shape row | %s |\n", w->arch,
                w->gpu, w->dtype, w->b, w->m, w->n, w->k, w->achieved / w->best, tag);
            continue;
        }
        double meas = w->achieved / w->best, pred = w->pred_rate / rows[w->ref].pred_rate;
        int cls = class_of(w), is_ref = w->ref == (int)i;
        const char *gpu = w->gpu[0] ? w->gpu : "(unnamed)";
        out(rep, "| %s | %s%s | %s | %g x %g x %g x %g | %s | %.3f | %.3f | %s%+.0f%% | %s |\n", w->arch, gpu,
            w->stand_in ? "*" : "", w->dtype, w->b, w->m, w->n, w->k, is_ref ? "best" : CLASS_NAME[cls], meas, pred,
            is_ref ? "(ref) " : "", 100.0 * (pred / meas - 1.0), tag);
        if (is_ref)
            continue;
        size_t a = 0;
        while (a < na && strcmp(st[a].arch, w->arch) != 0)
            a++;
        if (a == na && na < MAX_ARCH)
            st[na++].arch = w->arch;
        if (a >= MAX_ARCH)
            continue;
        double e = fabs(pred / meas - 1.0), lb = log(pred / meas);
        st[a].sum[cls] += e, st[a].cnt[cls]++, st[a].bias[cls] += lb;
        st[a].sum[N_CLASS] += e, st[a].cnt[N_CLASS]++, st[a].bias[N_CLASS] += lb;
    }
    out(rep, "\n## MAPE of the predicted fraction of the best shape, by architecture and class\n\n"
             "Cells: MAPE (geometric-mean bias: + the pricing is too fast), rows.\n\n"
             "| arch | all | training-sized | small | skinny |\n| --- | --- | --- | --- | --- |\n");
    for (size_t a = 0; a < na; a++) {
        out(rep, "| %s", st[a].arch);
        static const int order[] = {N_CLASS, C_LARGE, C_SMALL, C_SKINNY};
        for (int j = 0; j < 4; j++) {
            int c = order[j];
            if (st[a].cnt[c] == 0)
                out(rep, " | -");
            else
                out(rep, " | %.1f%% (%+.0f%%), %d", 100.0 * st[a].sum[c] / st[a].cnt[c],
                    100.0 * (exp(st[a].bias[c] / st[a].cnt[c]) - 1.0), st[a].cnt[c]);
        }
        out(rep, " |\n");
    }
}

static int check(const report_t *rep, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "bench_gemm_shapes: cannot read %s\n", path);
        return 1;
    }
    char *buf = malloc(REPORT_MAX);
    size_t len = buf ? fread(buf, 1, REPORT_MAX, f) : 0;
    fclose(f);
    int same = buf != NULL && len == rep->len && memcmp(buf, rep->buf, len) == 0;
    free(buf);
    if (!same)
        fprintf(stderr, "bench_gemm_shapes: %s is stale: regenerate it with "
                        "./build-h/bench/bench_gemm_shapes models > bench/results/gemm_shapes.md\n", path);
    return !same;
}

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--check") == 0)) {
        fprintf(stderr, "usage: bench_gemm_shapes MODELS_DIR [--check FILE]\n");
        return 2;
    }
    gsl_set_error_handler_off();
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, argv[1]) != EC_OK) {
        fprintf(stderr, "bench_gemm_shapes: %s\n", ctx ? ec_ctx_errmsg(ctx) : "out of memory");
        ec_ctx_free(ctx);
        return 1;
    }
    static row_t rows[MAX_ROWS];
    eci_table *t = NULL;
    size_t n = load_rows(ctx, argv[1], rows, &t);
    ec_config cfg;
    ec_config_init(&cfg);
    eci_params buf;
    const eci_params *calib = NULL;
    int rc = eci_params_ref(ctx, &cfg, &buf, &calib) == EC_OK ? 0 : 1;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = price(ctx, calib, &rows[i]) == 0 ? 0 : 1;
    report_t rep = {.buf = malloc(REPORT_MAX), .len = 0};
    if (rc == 0 && rep.buf != NULL) {
        rep.buf[0] = '\0';
        report(rows, n, &rep);
        rc = argc == 4 ? check(&rep, argv[3]) : (fwrite(rep.buf, 1, rep.len, stdout) == rep.len ? 0 : 1);
    }
    free(rep.buf);
    eci_table_free(t);
    ec_ctx_free(ctx);
    return rc;
}
