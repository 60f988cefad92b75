/*
 * cli_model.c: `epochcast model-info`, what a model is: its architecture and heads, its
 * parameter count against the published one, model FLOPs per sample and per token, the
 * memory of its weights, gradients and optimizer states, and its layer table
 * (ec_model_summary_get).  It takes the same key=value words as predict; gpu and
 * batch_per_gpu are not needed.  Its messages go through cli_message.c, escaped as every command's.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char model_info_usage[] =
    "usage: epochcast model-info model=ID|PATH [task=T] [seq_len=N | image_size=N] [precision=P] [optimizer=O]\n"
    "\n"
    "Describe a network: its family and heads, its parameter count (and the published one),\n"
    "model FLOPs per sample and per token (2 per multiply-add; backward = 2 x forward), the\n"
    "memory of its weights, gradients and optimizer states at that precision and optimizer,\n"
    "the activations one sample keeps for backward, and a table of its layers (a repeat's\n"
    "numbers are for one repetition; FLOPs and saved bytes per sample).  model= takes a\n"
    "preset id (`epochcast models`), a Hugging Face config.json or a folder holding one.\n"
    "\n"
    "example: epochcast model-info model=llama-3.1-8b seq_len=4096 precision=amp_bf16\n";

/* 8030261248 -> "8,030,261,248" */
static const char *grouped(double v, char *buf, size_t n)
{
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", v);
    size_t len = strlen(digits), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0 && digits[i - 1] != '-')
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

static void print_rows(const ec_layer_row *rows, size_t n)
{
    printf("layers (one repetition; FLOPs and saved activations per sample)\n");
    printf("  %4s  %-22s %16s %12s %12s\n", "#", "kind", "params", "GFLOP fwd", "saved MiB");
    for (size_t i = 0; i < n; i++) {
        char kind[64], num[32];
        int indent = 2 * rows[i].depth;
        if (rows[i].times > 1)
            snprintf(kind, sizeof kind, "%*s%s x%d", indent, "", rows[i].kind, rows[i].times);
        else
            snprintf(kind, sizeof kind, "%*s%s", indent, "", rows[i].kind);
        char idx[16];
        if (rows[i].index > 0)
            snprintf(idx, sizeof idx, "%d", rows[i].index);
        else
            snprintf(idx, sizeof idx, "-");
        printf("  %4s  %-22s %16s %12.3f %12.2f\n", idx, kind, grouped(rows[i].params, num, sizeof num),
               rows[i].fwd_flop_per_sample / 1e9, rows[i].saved_bytes_per_sample / 1048576.0);
    }
}

int ecL_cli_model_info(lua_State *L, int argc, char **argv)
{
    if (argc == 0 || (argc > 0 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)))
        return fputs(model_info_usage, argc == 0 ? stderr : stdout), argc == 0 ? 2 : 0;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    ec_config cfg;
    ec_config_init(&cfg);
    for (int i = 0; i < argc; i++)
        if (ec_config_set_word(ctx, &cfg, argv[i]) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
    if (cfg.model[0] == '\0')
        return ecC_error("model-info: key 'model' is required (a preset id or a config.json path)");
    ec_model_info mi;
    if (ec_model_find(ctx, cfg.model, &mi) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    ec_model_summary s;
    if (ec_model_summary_get(ctx, &cfg, &s, NULL, 0) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    ec_layer_row *rows = lua_newuserdatauv(L, s.n_rows * sizeof *rows, 0);
    if (ec_model_summary_get(ctx, &cfg, &s, rows, s.n_rows) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    char buf[64], task[EC_NAME_MAX], prec[32], opt[32];
    ec_config_get(&cfg, "precision", prec, sizeof prec);
    ec_config_get(&cfg, "optimizer", opt, sizeof opt);
    snprintf(task, sizeof task, "%s", cfg.task[0] ? cfg.task : mi.default_task);
    printf("%s: %s, task %s (heads: %s)\n", mi.id, mi.family, task, mi.tasks);
    if (mi.source[0] != '\0')
        printf("source            %s\n", mi.source);
    printf("parameters        %s", grouped(s.params, buf, sizeof buf));
    if (mi.published_params > 0)
        printf("   (%s head %s; published %s: %+.3f%%)", mi.published_task,
               grouped(mi.published_task_params, buf, sizeof buf), grouped(mi.published_params, task, sizeof task),
               100.0 * (mi.published_task_params - mi.published_params) / mi.published_params);
    printf("\n");
    if (mi.default_seq_len > 0)
        printf("per sample        %.0f tokens: forward %.4g FLOP, backward %.4g FLOP\n"
               "per token         forward %.4g FLOP, backward %.4g FLOP (6N = %.4g)\n",
               s.tokens_per_sample, s.fwd_flop_per_sample, s.bwd_flop_per_sample,
               s.fwd_flop_per_sample / s.tokens_per_sample, s.bwd_flop_per_sample / s.tokens_per_sample,
               6.0 * s.params);
    else
        printf("per image         forward %.4g FLOP, backward %.4g FLOP\n", s.fwd_flop_per_sample,
               s.bwd_flop_per_sample);
    printf("memory            weights %.2f GiB, gradients %.2f GiB, optimizer states %.2f GiB (%s, %s)\n",
           s.weights_bytes / 1073741824.0, s.grads_bytes / 1073741824.0, s.optimizer_bytes / 1073741824.0, prec, opt);
    printf("activations       %.3f GiB per sample kept for backward (no checkpointing)\n",
           s.activations_bytes_per_sample / 1073741824.0);
    print_rows(rows, s.n_rows);
    return 0;
}
