/*
 * cli_calibrate.c: `epochcast calibrate RUNS.csv -o PROFILE.csv`: the model's physical
 * parameters fitted to the measured runs of a run-record file (ec_calibrate, nonlinear least
 * squares), their held-out error measured by leave-one-GPU-out (ec_calibrate_cv) and
 * leave-one-architecture-out (ec_calibrate_cv_arch), all written
 * as a profile CSV (ec_profile_write) that predict, validate and scenarios take as profile=.
 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char calibrate_usage[] =
    "usage: epochcast calibrate RUNS.csv -o PROFILE.csv [--all] [--allow-paths]\n"
    "\n"
    "Fit the model's physical parameters (GEMM and bandwidth efficiency scales, globally and\n"
    "per GPU architecture, convolution and fused-attention efficiency, host dispatch time,\n"
    "the collective efficiency between nodes)\n"
    "to measured runs with nonlinear least squares on log(predicted/measured); measure the\n"
    "held-out error by leave-one-GPU-out (when the runs cover two GPUs or more); write both\n"
    "as a profile CSV that predict, validate and scenarios use with profile=PROFILE.csv\n"
    "or --profile PROFILE.csv.\n"
    "\n"
    "  -o FILE   where to write the profile (written atomically; never over RUNS.csv)\n"
    "  --all     fit on every run; by default only single-GPU runs are fitted, since\n"
    "            multi-GPU runs also depend on the communication model (either way they\n"
    "            are predicted in the leave-one-GPU-out folds, never fitted there, for the\n"
    "            communication part of a multi-GPU prediction's interval)\n"
    "  --allow-paths  let lengths=/profile= cells name files outside RUNS.csv's folder\n"
    "A progress bar shows on a terminal; Ctrl-C stops cleanly (exit 130).\n";

/* Push the context and a box owning the loaded runs; NULL (message printed) on failure. */
static ec_runs *load_runs(lua_State *L, const char *path, unsigned flags, ec_ctx **ctx_out)
{
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    void **slot = ecL_newbox(L, ecL_free_runs);              /* ctx runs */
    ec_runs *runs = NULL;
    int st = ec_runs_load_v2(ctx, path, flags, &runs);
    *slot = runs;
    *ctx_out = ctx;
    if (st != EC_OK) {
        ecC_error("%s", ec_ctx_errmsg(ctx));
        return NULL;
    }
    return runs;
}

/* Which architecture sets the unseen-architecture sds: per architecture left out, its held-out runs
 * of each class, their rms and mean log error (bias), and the class's sd without it
 * (ec_fit_report.arch_terms).  No GPU-bound run at all: the GPU-bound sd is the pooled one, each
 * sample over both classes. */
static void print_arch_terms(const ec_fit_report *rep)
{
    int any_gpu = 0;
    for (size_t j = 0; j < rep->n_arch_terms; j++)
        any_gpu |= rep->arch_terms[j].runs[EC_CLASS_GPU] > 0;
    printf("  which architecture sets them (rms: the root of an architecture's mean squared log error; bias: its "
           "mean log error of the step time, > 0 predicted slower; sd without: the class's sd without it; covers: its "
           "runs inside the p10-p90 of that sd):\n"
           "  %-12s | %9s %6s %7s %10s %6s | %10s %6s %7s %10s %6s\n", "architecture", "GPU-bound", "rms", "bias",
           "sd without", "covers", "host-bound", "rms", "bias", "sd without", "covers");
    for (size_t j = 0; j < rep->n_arch_terms; j++) {
        const ec_fit_arch_term *t = &rep->arch_terms[j];
        printf("  %-12s", t->architecture);
        for (int h = 0; h < 2; h++) {
            int pooled = h == EC_CLASS_GPU && !any_gpu;
            size_t runs = pooled ? t->runs[0] + t->runs[1] : t->runs[h];
            double v = pooled ? t->msq_log_all : t->msq_log[h], mean = pooled ? t->bias_log_all : t->bias_log[h];
            printf(" | %*zu", 9 + h, runs);
            if (runs > 0)
                printf(" %6.3f %+7.3f %10.3f %5.0f%%", sqrt(v), mean, t->sd_without[h],
                       100.0 * (double)t->covered[h] / (double)runs);
            else if (h == 0)
                printf(" %6s %7s %10s %6s", "", "", "", "");
        }
        printf("\n");
    }
}

int ecC_cmd_calibrate(lua_State *L, int argc, char **argv)
{
    ecC_runs_args ra;
    int code = ecC_parse_runs_args("calibrate", calibrate_usage, ECC_OPT_ALL, argc, argv, &ra);
    if (code >= 0)
        return code;
    if (ra.out == NULL)
        return ecC_usage_error("calibrate", "calibrate: missing -o PROFILE.csv");
    const char *runs_path = ra.runs_path, *out = ra.out;
    int all = ra.all;
    ec_ctx *ctx;
    ec_runs *runs = load_runs(L, runs_path, ra.flags, &ctx);
    if (runs == NULL)
        return EXIT_FAILURE;
    size_t n = ec_runs_count(runs);
    unsigned char *use = (unsigned char *)lua_newuserdatauv(L, n + 1, 0);
    unsigned char *cv_use = (unsigned char *)lua_newuserdatauv(L, n + 1, 0);
    for (size_t i = 0; i < n; i++) {
        const ec_run *r = ec_runs_get(runs, i);
        ec_result res;
        use[i] = all || r->config.num_gpus == 1;
        /* the multi-GPU runs the model prices, scored (never fitted) in the leave-one-GPU-out folds */
        cv_use[i] = use[i] || ec_predict(ctx, &r->config, &res) == EC_OK;
    }
    ec_fit_report rep;
    if (ec_calibrate(ctx, runs, use, &rep) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    /* The held-out error that widens intervals: leave-one-GPU-out on the same runs. */
    int cv = ec_calibrate_cv(ctx, runs, cv_use, &rep);
    if (cv != EC_OK && cv != EC_EINVAL)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    char cv_why[512];
    snprintf(cv_why, sizeof cv_why, "%s", cv == EC_OK ? "" : ec_ctx_errmsg(ctx));
    /* ...and on an architecture left out, for GPUs of architectures the fit has no runs of */
    int cva = ec_calibrate_cv_arch(ctx, runs, use, &rep);
    if (cva != EC_OK && cva != EC_EINVAL)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    ecC_clear_bar();
    if (ec_profile_write(ctx, &rep, out) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    printf("%s: fitted %zu runs in %zu iterations; MAPE %.1f%% before, %.1f%% after (in-sample)\n",
           runs_path, rep.n_runs, rep.iterations, 100 * rep.mape_before_frac, 100 * rep.mape_after_frac);
    if (cv == EC_OK)
        printf("leave-one-GPU-out: MAPE %.1f%% on %zu held-out runs; log error sd %.3f for a p10-p90 (error_log_sd)\n",
               100 * rep.cv_mape_frac, rep.cv_runs, rep.error_log_sd);
    else
        printf("leave-one-GPU-out: not run (%s); the profile has no error_log_sd\n", cv_why);
    if (cva == EC_OK)
        printf("leave-one-architecture-out: MAPE %.1f%% on %zu held-out runs of %zu architectures; log error "
               "sd %.3f for a p10-p90 (error_log_sd_unseen_arch)\n",
               100 * rep.arch_cv_mape_frac, rep.arch_cv_runs, rep.arch_cv_archs, rep.arch_error_log_sd);
    if (cva == EC_OK && rep.arch_host_cv_runs > 0)
        printf("  of them host-bound (predicted share of the step without host waits below constants.csv "
               "host_bound_util_frac): %zu runs "
               "of %zu architectures; log error sd %.3f (error_log_sd_unseen_arch_host; the sd above: the "
               "others')\n", rep.arch_host_cv_runs, rep.arch_host_cv_archs, rep.arch_host_error_log_sd);
    if (cva == EC_OK)
        print_arch_terms(&rep);
    for (int p = 0; cv == EC_OK && p < EC_COMM_PATHS; p++)
        if (rep.comm_cv_runs[p] > 0)
            printf("multi-GPU runs, gradients %s: %zu held-out runs on %zu GPUs; communication sd %.3f "
                   "(error_log_sd_comm_%s)\n", ec_comm_path_words(p), rep.comm_cv_runs[p], rep.comm_cv_gpus[p],
                   rep.comm_error_log_sd[p], ec_comm_path_name(p));
    if (rep.n_left_out > 0)
        printf("%zu runs left out of these figures: their prediction is not a finite positive number\n",
               rep.n_left_out);
    printf("  %-16s %-14s %10s %10s  %s\n", "parameter", "architecture", "value", "std.error", "kernels");
    for (size_t j = 0; j < rep.n_params; j++) {
        /* an architecture's: the classes it prices; attn_eff's and attn_mask_eff's: the attention
         * kernels each scales (docs/accuracy.md, "Kernel classes") */
        char kernels[96];
        int mask = strcmp(rep.names[j], "attn_mask_eff") == 0;
        unsigned bits = mask ? rep.attn_mask_kernels : rep.attn_kernels;
        int attn = (mask || strcmp(rep.names[j], "attn_eff") == 0) && bits != 0;
        if (attn)
            ec_fit_attn_kernels_names(bits, kernels, sizeof kernels);
        else
            ec_fit_kernels_names(rep.kernels[j], kernels, sizeof kernels);
        printf("  %-16s %-14s %10.4g %10.2g  %s\n", rep.names[j], rep.architectures[j][0] ? rep.architectures[j] : "(all)",
               rep.values[j], rep.stderrs[j], rep.architectures[j][0] || attn ? kernels : "(all)");
    }
    printf("wrote %s; use it with profile=%s\n", out, out);
    return 0;
}
