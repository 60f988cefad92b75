/*
 * cli_predict.c: `epochcast predict key=value ...`: one configuration (key=value words and
 * --profile, through ec_config_set_word) predicted with ec_predict and shown as the step's
 * breakdown, throughput, cost, memory by part and warnings (a pipeline's stages too), or as one
 * CSV row (--csv, -o FILE: every config key as resolved, then l_result.c's result columns);
 * --trace FILE writes the first simulated steps as a Chrome trace.
 */
#include "cli.h"

#include <csv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char predict_usage[] =
    "usage: epochcast predict key=value ... [--csv] [-o FILE] [--trace FILE] [--profile P]\n"
    "\n"
    "Predict one training configuration and print the step-time breakdown, GPU\n"
    "utilization, bottleneck, memory by part and warnings.\n"
    "  --csv     print a CSV header and one row instead (config keys, then results)\n"
    "  -o FILE   write that CSV to FILE (atomically)\n"
    "  --trace FILE  write the first simulated steps as a Chrome trace (open in ui.perfetto.dev)\n"
    "  --profile P  predict with the calibrated profile P (the same as profile=P)\n"
    "\n"
    "example: epochcast predict model=bert-base gpu=t4 batch_per_gpu=32 seq_len=128\n"
    "\n"
    "keys:\n";

/* Header and row of a prediction: every config key (its text via ec_config_get), then
 * the result columns of l_result.c.  fields gets 2 x ncols pointers into text. */
static size_t predict_csv(lua_State *L, const ec_config *cfg, const ec_result *res,
                          const char ***fields_out)
{
    size_t nk = ec_config_key_count(), nr = ecL_result_column_count(), n = nk + nr;
    const char **fields = (const char **)lua_newuserdatauv(L, 2 * n * sizeof *fields, 0);
    char *text = (char *)lua_newuserdatauv(L, n * CELL_MAX, 0);
    for (size_t i = 0; i < n; i++) {
        char *cell = text + i * CELL_MAX;
        if (i < nk) {
            fields[i] = ec_config_key_name(i);
            if (ec_config_get(cfg, fields[i], cell, CELL_MAX) != EC_OK)
                cell[0] = '\0';
        } else {
            fields[i] = ecL_result_column_name(i - nk);
            ecL_result_column_text(res, i - nk, cell, CELL_MAX);
        }
        fields[n + i] = cell;
    }
    *fields_out = fields;
    return n;
}

/* A config value for the headline: "default" for an empty string or a 0 that means
 * "the preset's default" (task, seq_len). */
static const char *config_text(const ec_config *cfg, const char *key, char *buf, size_t n)
{
    if (ec_config_get(cfg, key, buf, n) != EC_OK || buf[0] == '\0'
        || (strcmp(key, "seq_len") == 0 && strcmp(buf, "0") == 0))
        snprintf(buf, n, "default");
    return buf;
}

static void print_breakdown(const ec_config *cfg, const ec_result *res)
{
    char model[EC_NAME_MAX + 1], task[EC_NAME_MAX + 1], gpu[EC_NAME_MAX + 1], ngpu[32],
        prec[32], batch[32], seq[32];
    printf("%s (%s task) on %s x %s, %s, batch_per_gpu %s, seq_len %s\n",
           config_text(cfg, "model", model, sizeof model), config_text(cfg, "task", task, sizeof task),
           config_text(cfg, "gpu", gpu, sizeof gpu), config_text(cfg, "num_gpus", ngpu, sizeof ngpu),
           config_text(cfg, "precision", prec, sizeof prec),
           config_text(cfg, "batch_per_gpu", batch, sizeof batch),
           config_text(cfg, "seq_len", seq, sizeof seq));
    char etp[32] = ""; /* given: the expert layout */
    if (cfg->etp > 0)
        snprintf(etp, sizeof etp, ", etp %d", cfg->etp);
    if (res->tp > 1 || res->pp > 1 || res->cp > 1 || res->ep > 1)
        printf("  layout             dp %d x tp %d x pp %d x cp %d (ep %d%s)\n", res->dp, res->tp, res->pp, res->cp,
               res->ep, etp);
    /* the p10-p90 the profile's sds give (docs/accuracy.md, "The interval is a quantile"): what a
     * widened-interval warning refers to when no epoch is asked for */
    if (res->step_p10_s > 0 && res->step_p90_s > res->step_s)
        printf("  step time          %12.3f ms   (p10 %#.4g, p90 %#.4g ms)\n", res->step_s * 1e3, res->step_p10_s * 1e3,
               res->step_p90_s * 1e3);
    else
        printf("  step time          %12.3f ms\n", res->step_s * 1e3);
    printf("  samples/s          %12.1f\n", res->samples_per_s);
    char seqbuf[32];
    if (ec_config_get(cfg, "seq_len", seqbuf, sizeof seqbuf) == EC_OK && res->tokens_per_s != res->samples_per_s)
        printf("  tokens/s           %12.0f   (%.3g GPU-s per 1M tokens)\n", res->tokens_per_s,
               res->gpu_s_per_token * 1e6);
    char d1[32], d2[32], d3[32];
    if (res->epoch_s > 0)
        printf("  epoch time         %12s   (%.1f s; p10 %s, p90 %s; %.0f steps)\n",
               ec_format_duration(res->epoch_s, d1, sizeof d1), res->epoch_s,
               ec_format_duration(res->epoch_p10_s, d2, sizeof d2), ec_format_duration(res->epoch_p90_s, d3, sizeof d3),
               res->steps_per_epoch);
    if (res->run_s > 0)
        printf("  run time           %12s   (%.1f s%s)\n", ec_format_duration(res->run_s, d1, sizeof d1), res->run_s,
               res->epoch_s > 0 ? "" : cfg->train_tokens > 0 ? ": train_tokens at the steady rate"
                                                             : ": train_samples at the steady rate");
    if (res->eval_s > 0)
        printf("  evaluation         %12.1f s per epoch (%.3f ms per batch)\n", res->eval_s, res->eval_step_s * 1e3);
    if (res->first_step_s > res->step_s * 1.001)
        printf("  first step         %12.1f s (torch.compile)\n", res->first_step_s);
    ecC_print_cost(cfg, res);
    const ec_breakdown *b = &res->breakdown;
    printf("per step (ms)\n");
    printf("  forward            %12.3f\n", b->forward_s * 1e3);
    printf("  backward           %12.3f\n", b->backward_s * 1e3);
    printf("  optimizer          %12.3f\n", b->optimizer_s * 1e3);
    printf("  transfer (H2D)     %12.3f\n", b->h2d_s * 1e3);
    printf("  CPU overhead       %12.3f\n", b->cpu_overhead_s * 1e3);
    printf("  loader             %12.3f\n", b->loader_s * 1e3);
    printf("  comm               %12.3f\n", b->comm_s * 1e3);
    const ec_comm_parts *c = &res->comm;
    const struct { const char *name; double s; } parts[] = {
        {"tensor parallel", c->tp_s}, {"context parallel", c->cp_s}, {"expert all-to-all", c->ep_s},
        {"gradient reduce", c->dp_reduce_s}, {"FSDP/ZeRO waits", c->shard_wait_s},
        {"overlap slowdown", c->overlap_s}, {"CPU offload", c->offload_s}, {"pipeline bubble", c->pp_bubble_s},
        {"pipeline p2p", c->pp_p2p_s}, {"slowest GPU", res->straggler_s}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].s > 0 && b->comm_s > 0)
            printf("    %-17s%12.3f\n", parts[i].name, parts[i].s * 1e3);
    printf("GPU busy             %12.1f %%\n", res->gpu_util_frac * 100);
    printf("bottleneck           %12s\n", ec_bottleneck_name(res->bottleneck));
    printf("MFU                  %12.1f %%\n", res->mfu_frac * 100);
    if (res->hfu_frac > res->mfu_frac * 1.0005)
        printf("HFU                  %12.1f %%   (checkpointing's recompute counted)\n", res->hfu_frac * 100);
    const ec_memory *m = &res->memory;
    printf("memory (GiB)\n");
    printf("  weights            %12.2f\n", m->weights_bytes / GIB);
    printf("  gradients          %12.2f\n", m->grads_bytes / GIB);
    printf("  optimizer states   %12.2f\n", m->optimizer_bytes / GIB);
    printf("  autocast cache     %12.2f\n", m->cast_cache_bytes / GIB);
    printf("  activations        %12.2f\n", m->activations_bytes / GIB);
    printf("  workspace          %12.2f\n", m->workspace_bytes / GIB);
    printf("  CUDA context       %12.2f\n", m->context_bytes / GIB);
    printf("  allocator          %12.2f\n", m->allocator_bytes / GIB);
    printf("  peak               %12.2f of %.2f   fits: %s\n", m->peak_bytes / GIB,
           m->capacity_bytes / GIB, m->fits ? "yes" : m->at_edge ? "at the edge" : "no");
    printf("  readings           %12.2f allocated, %.2f reserved, %.2f nvidia-smi%s\n", m->allocated_bytes / GIB,
           m->reserved_bytes / GIB, m->nvml_bytes / GIB, m->needed_bytes > m->capacity_bytes ? " (needed)" : "");
    printf("  peak at            %12s%s\n", "", ec_peak_phase_name(m->peak_phase));
    printf("  headroom           %12.2f   kept free (%s)\n", m->headroom_bytes / GIB,
           cfg->memory_headroom_bytes >= 0 ? "memory_headroom_gib" : "default: the allocator's usual slack and 5% for the model's error");
    if (res->host_pinned_bytes > 0)
        printf("  host (pinned)      %12.2f   per GPU, for CPU offload\n", res->host_pinned_bytes / GIB);
    if (res->warning_text[0] != '\0') {
        printf("warnings\n");
        const char *t = res->warning_text;
        while (*t != '\0') {
            const char *end = strstr(t, "; ");
            int len = end != NULL ? (int)(end - t) : (int)strlen(t);
            if (len > 0)
                printf("  - %.*s\n", len, t);
            t += len + (end != NULL ? 2 : 0);
        }
    }
}

/* A pipeline's stages: which layers, a micro-batch's time and the peak memory of each. */
static int print_stages(ec_ctx *ctx, const ec_config *cfg, int pp)
{
    ec_stage *st = calloc((size_t)pp, sizeof *st);
    size_t n = 0;
    if (st == NULL)
        return ecC_error("out of memory");
    if (ec_predict_stages(ctx, cfg, st, (size_t)pp, &n) != EC_OK) {
        free(st);
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    }
    printf("pipeline stages\n  %-7s %-13s %12s %10s %12s %12s  %s\n", "stage", "layers", "micro (ms)", "in flight",
           "act (GiB)", "peak (GiB)", "peak at");
    for (size_t i = 0; i < n; i++) {
        const ec_memory *m = &st[i].memory;
        printf("  %-7zu %4d-%-8d %12.3f %10.1f %12.2f %12.2f  %s%s\n", i, st[i].first_layer,
               st[i].first_layer + st[i].layers - 1, st[i].micro_s * 1e3, st[i].in_flight,
               m->activations_bytes / GIB, m->peak_bytes / GIB, ec_peak_phase_name(m->peak_phase),
               m->fits ? "" : m->at_edge ? "  (at the edge)" : "  (does not fit)");
    }
    free(st);
    return 0;
}

int ecC_cmd_predict(lua_State *L, int argc, char **argv)
{
    int csv = 0;
    const char *out = NULL, *trace = NULL;
    for (int i = 0; i < argc; i++) {
        if (ecC_is_help(argv[i])) {
            fputs(predict_usage, stdout);
            for (size_t k = 0; k < ec_config_key_count(); k++)
                printf("  %-20s %s\n", ec_config_key_name(k), ec_config_key_help(k));
            return 0;
        }
    }
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    ec_config cfg;
    ec_config_init(&cfg);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if (strcmp(a, "--csv") == 0) {
            csv = 1;
        } else if ((m = ecC_opt_value(argc, argv, &i, "--output", "-o", &v)) != 0) {
            if (m < 0)
                return ecC_usage_error("predict", "predict: %s needs a file name", a);
            out = v;
        } else if ((m = ecC_opt_value(argc, argv, &i, "--trace", NULL, &v)) != 0) {
            if (m < 0)
                return ecC_usage_error("predict", "predict: --trace needs a file name");
            trace = v;
        } else if ((m = ecC_opt_value(argc, argv, &i, "--profile", NULL, &v)) != 0) {
            if (m < 0)
                return ecC_usage_error("predict", "predict: --profile needs a file name");
            if (ec_config_set(ctx, &cfg, "profile", v) != EC_OK)
                return ecC_error("%s", ec_ctx_errmsg(ctx));
        } else if (a[0] == '-') {
            return ecC_usage_error("predict", "predict: unknown option '%s'", a);
        } else if (strchr(a, '=') == NULL) {
            return ecC_usage_error("predict", "predict: expected key=value, got '%s'", a);
        } else if (ec_config_set_word(ctx, &cfg, a) != EC_OK) {
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        }
    }
    ec_result res;
    ec_config shown; /* what was simulated: derived strategy, task, seq_len, ... (issue 21) */
    int st = ec_predict(ctx, &cfg, &res);
    if (st == EC_OK)
        st = ec_config_resolve(ctx, &cfg, &shown);
    if (st != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    const char **fields = NULL;
    size_t n = predict_csv(L, &shown, &res, &fields);
    if (out != NULL && ecC_write_csv_file(L, ctx, out, fields, 2, n) != 0)
        return EXIT_FAILURE;
    if (trace != NULL && ec_trace_write(ctx, &cfg, trace, 0) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    if (csv) {
        (void)ec_csv_print_row(stdout, fields, n);
        (void)ec_csv_print_row(stdout, fields + n, n);
    } else {
        print_breakdown(&shown, &res);
        if (res.pp > 1 && print_stages(ctx, &cfg, res.pp) != 0)
            return EXIT_FAILURE;
    }
    return 0;
}
