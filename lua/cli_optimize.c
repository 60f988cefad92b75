/*
 * cli_optimize.c: `epochcast optimize`, the CLI face of ec_optimize (core/src/search/optimize.c).
 * Words are key=value: the search keys (ec_optimize_is_key: gpu, num_gpus, global_batch or
 * global_batch_tokens, tp, pp, cp, ep, strategy, sharding, zero_stage, pp_schedule,
 * batch_per_gpu, checkpointing, goal, train_tokens or train_samples, top, threads) take one
 * value or a comma list; every other key fixes the base configuration (model, seq_len, precision, ...).  It
 * prints the best layouts with their tokens/s, MFU, step time and memory, why each rival
 * lost, the rivals memory rules out, and the search's size and time; -o writes every ranked
 * layout as CSV.  Under mpirun the candidates are split over the ranks (cli_mpi.c).  Exit
 * status 0 when a layout fits, 1 when none does or on error, 2 on a usage error.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char optimize_usage[] =
    "usage: epochcast optimize model=ID seq_len=N gpu=ID num_gpus=N global_batch_tokens=T [key=value ...]\n"
    "                          [--top N] [--threads N] [-o FILE]\n"
    "\n"
    "Search the parallel layouts of a model: every combination of the searched keys'\n"
    "values (dp x tp x pp x cp x ep, strategy and sharding, pipeline schedule, micro-batch\n"
    "and accumulation, checkpointing) for the global batch on the GPUs.  Layouts whose\n"
    "degrees cannot divide the GPUs, the batch or the network, and those whose model states\n"
    "alone exceed the GPU's memory, are pruned before their step is priced; the rest are\n"
    "predicted as `epochcast predict` would, on every core, and those that fit are ranked.\n"
    "Each rival's reason for losing to the best comes from its step's parts (exposed\n"
    "communication, pipeline bubble, recompute, compute), per token trained.\n"
    "\n"
    "searched keys (one value fixes it; a comma list searches it; left out: the default):\n"
    "%s"
    "other key=value words fix the base configuration (precision, attention, network, ...).\n"
    "\n"
    "  --top N       layouts listed [10] (top=N)\n"
    "  --threads N   threads that price, 0: the cores available [0] (threads=N)\n"
    "  -o FILE       write every ranked layout, and the rivals that do not fit, as CSV\n"
    "Under mpirun (mpirun -n K epochcast-mpi optimize ...) the candidates are split over the K\n"
    "processes and rank 0 prints what one process would.\n"
    "\n"
    "example: epochcast optimize model=llama-3.1-70b gpu=h100-sxm5-80gb num_gpus=64 seq_len=8192 \\\n"
    "             global_batch_tokens=4194304\n";

static void free_optimize(void *p)
{
    ec_optimize_free((ec_optimize *)p);
}

static void print_usage(void)
{
    char keys[4096];
    size_t used = 0;
    for (size_t i = 0; ec_optimize_key_name(i) != NULL && used < sizeof keys; i++) {
        if (strcmp(ec_optimize_key_name(i), "part") == 0 || strcmp(ec_optimize_key_name(i), "parts") == 0)
            continue; /* set by mpirun's split */
        int n = snprintf(keys + used, sizeof keys - used, "  %-20s %s\n", ec_optimize_key_name(i),
                         ec_optimize_key_help(i));
        used += n > 0 ? (size_t)n : 0;
    }
    printf(optimize_usage, keys);
}

static const char *ckpt_name(int c)
{
    return c == EC_CKPT_SELECTIVE ? "sel" : c ? "full" : "0";
}

/* "fsdp/full_shard", "zero-2", "ddp", "single". */
static void strategy_text(const ec_config *cfg, char *buf, size_t n)
{
    char s[EC_NAME_MAX], sh[EC_NAME_MAX];
    ec_config_get(cfg, "strategy", s, sizeof s);
    if (cfg->strategy == EC_STRATEGY_FSDP) {
        ec_config_get(cfg, "sharding", sh, sizeof sh);
        snprintf(buf, n, "fsdp/%s", sh);
    } else if (cfg->strategy == EC_STRATEGY_ZERO) {
        snprintf(buf, n, "zero-%d", cfg->zero_stage);
    } else {
        snprintf(buf, n, "%s", s);
    }
}

static void sched_text(const ec_config *cfg, char *buf, size_t n)
{
    if (cfg->pp <= 1)
        snprintf(buf, n, "-");
    else if (cfg->pp_schedule == EC_PP_INTERLEAVED)
        snprintf(buf, n, "interl.x%d", cfg->pp_chunks);
    else
        ec_config_get(cfg, "pp_schedule", buf, n);
}

static void print_row(const char *rank, const ec_optimize_layout *l, int show_gpu)
{
    char strat[2 * EC_NAME_MAX], sched[EC_NAME_MAX];
    strategy_text(&l->config, strat, sizeof strat);
    sched_text(&l->config, sched, sizeof sched);
    printf("%-4s", rank);
    if (show_gpu)
        printf(" %-16s %4d", l->config.gpu, l->config.num_gpus);
    printf(" %4d %2d %3d %2d %2d  %-20s %-10s %5d %5d %-4s %10.0f %5.1f %9.3f %6.1f/%-5.1f %s\n", l->dp, l->config.tp,
           l->config.pp, l->config.cp, l->config.ep, strat, sched, l->config.batch_per_gpu, l->config.grad_accum,
           ckpt_name(l->config.checkpointing), l->tokens_per_s, 100 * l->mfu_frac, l->step_s, l->peak_bytes / GIB,
           l->capacity_bytes / GIB, l->reason);
}

#define N_CSV 40
static int write_csv(ec_ctx *ctx, const ec_optimize *opt, const char *path)
{
    static const char *const head[N_CSV] = {
        "rank", "fits", "gpu", "num_gpus", "global_batch", "dp", "tp", "pp", "cp", "ep", "strategy", "sharding",
        "zero_stage", "pp_schedule", "pp_chunks", "batch_per_gpu", "grad_accum", "checkpointing", "tokens_per_s",
        "mfu_frac", "hfu_frac", "step_s", "peak_bytes", "capacity_bytes", "train_s", "cost", "exposed_comm_s",
        "pp_bubble_s", "recompute_s", "price_per_hour", "behind_frac", "lost", "reason", "at_edge", "needed_bytes",
        "headroom_bytes", "train_time_h", "cost_usd", "price_currency", "price_offer"};
    ec_csv_writer *w = NULL;
    int st = ec_csv_open(ctx, path, &w);
    if (st == EC_OK)
        st = ec_csv_row(w, head, N_CSV);
    char cells[N_CSV][192];
    const char *fields[N_CSV];
    for (int nf = 0; nf < 2 && st == EC_OK; nf++) {
        size_t n = nf ? ec_optimize_no_fit_count(opt) : ec_optimize_count(opt);
        for (size_t i = 0; i < n && st == EC_OK; i++) {
            ec_optimize_layout l;
            if ((st = ec_optimize_get(opt, nf, i, &l)) != EC_OK)
                break;
            const ec_config *c = &l.config;
            int k = 0;
            if (nf)
                cells[k++][0] = '\0';
            else
                snprintf(cells[k++], 192, "%zu", i + 1);
            snprintf(cells[k++], 192, "%d", l.fits);
            snprintf(cells[k++], 192, "%s", c->gpu);
            snprintf(cells[k++], 192, "%d", c->num_gpus);
            ec_format_number(l.global_batch, cells[k++], 192);
            snprintf(cells[k++], 192, "%d", l.dp);
            snprintf(cells[k++], 192, "%d", c->tp);
            snprintf(cells[k++], 192, "%d", c->pp);
            snprintf(cells[k++], 192, "%d", c->cp);
            snprintf(cells[k++], 192, "%d", c->ep);
            ec_config_get(c, "strategy", cells[k++], 192);
            if (c->strategy == EC_STRATEGY_FSDP)
                ec_config_get(c, "sharding", cells[k++], 192);
            else
                cells[k++][0] = '\0';
            snprintf(cells[k++], 192, "%d", c->zero_stage);
            ec_config_get(c, "pp_schedule", cells[k++], 192);
            snprintf(cells[k++], 192, "%d", c->pp_chunks);
            snprintf(cells[k++], 192, "%d", c->batch_per_gpu);
            snprintf(cells[k++], 192, "%d", c->grad_accum);
            ec_config_get(c, "checkpointing", cells[k++], 192);
            const double nums[] = {l.tokens_per_s, l.mfu_frac, l.hfu_frac, l.step_s, l.peak_bytes, l.capacity_bytes,
                                   l.train_s, l.cost, l.exposed_comm_s, l.comm.pp_bubble_s, l.recompute_s,
                                   l.price_per_hour, l.behind_frac};
            for (size_t j = 0; j < sizeof nums / sizeof nums[0]; j++)
                ec_format_number(nums[j], cells[k++], 192);
            snprintf(cells[k++], 192, "%s", ec_optimize_loss_name(l.lost));
            snprintf(cells[k++], 192, "%s", l.reason);
            snprintf(cells[k++], 192, "%d", l.at_edge);
            ec_format_number(l.needed_bytes, cells[k++], 192);
            ec_format_number(l.headroom_bytes, cells[k++], 192);
            ec_format_number(l.train_time_h, cells[k++], 192);
            ec_format_number(l.cost_usd, cells[k++], 192);
            snprintf(cells[k++], 192, "%s", l.price_currency);
            snprintf(cells[k++], 192, "%s", l.price_offer);
            for (int j = 0; j < N_CSV; j++)
                fields[j] = cells[j];
            st = ec_csv_row(w, fields, N_CSV);
        }
    }
    if (st == EC_OK)
        st = ec_csv_close(w);
    else
        ec_csv_abort(w);
    return st;
}

static void print_list(const char *title, const ec_optimize *opt, int no_fit, size_t top, int show_gpu)
{
    size_t n = no_fit ? ec_optimize_no_fit_count(opt) : ec_optimize_count(opt);
    if (n == 0)
        return;
    printf("\n%s\n", title);
    printf("%-4s", "#");
    if (show_gpu)
        printf(" %-16s %4s", "gpu", "gpus");
    printf(" %4s %2s %3s %2s %2s  %-20s %-10s %5s %5s %-4s %10s %5s %9s %12s %s\n", "dp", "tp", "pp", "cp", "ep",
           "strategy", "pp_sched", "micro", "accum", "ckpt", "tokens/s", "MFU%", "step_s", "peak/GiB", no_fit ? "" : "why it lost to #1");
    for (size_t i = 0; i < n && i < top; i++) {
        ec_optimize_layout l;
        if (ec_optimize_get(opt, no_fit, i, &l) != EC_OK)
            return;
        char rank[32];
        snprintf(rank, sizeof rank, no_fit ? "-" : "%zu", i + 1);
        print_row(rank, &l, show_gpu);
    }
    if (n > top)
        printf("... %zu more%s\n", n - top, no_fit ? "" : " (-o FILE writes them all)");
}

/* optimize's command line: the base config, the search keys' words (key=value, --top N and
 * --threads N as top=N and threads=N, their text on the stack), -o FILE. */
typedef struct optimize_args {
    ec_config base;
    const char *search_words[64];
    size_t n_search;
    const char *out;
} optimize_args;

/* Options and config keys first: the search keys are checked against the base (after this).
 * -1 when the command should go on, else the exit status. */
static int parse_optimize_args(lua_State *L, ec_ctx *ctx, int argc, char **argv, optimize_args *oa)
{
    ec_config_init(&oa->base);
    oa->n_search = 0;
    oa->out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--top") == 0 ||
            strcmp(a, "--threads") == 0 || strcmp(a, "-j") == 0) {
            if (++i >= argc)
                return ecC_usage_error("optimize", "optimize: %s needs a value", a);
            if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
                oa->out = argv[i];
            } else if (oa->n_search < 64) {
                /* --top N / --threads N are top=N / threads=N */
                lua_pushfstring(L, "%s=%s", strcmp(a, "--top") == 0 ? "top" : "threads", argv[i]);
                oa->search_words[oa->n_search++] = lua_tostring(L, -1);
            }
        } else if (a[0] == '-') {
            return ecC_usage_error("optimize", "optimize: unknown option '%s'", a);
        } else if (eq == NULL) {
            return ecC_usage_error("optimize", "optimize: expected key=value, got '%s'", a);
        } else {
            lua_pushlstring(L, a, (size_t)(eq - a));
            const char *key = lua_tostring(L, -1);
            if (ec_optimize_is_key(key)) {
                if (oa->n_search == 64)
                    return ecC_usage_error("optimize", "optimize: too many search keys");
                oa->search_words[oa->n_search++] = a;
            } else if (ec_config_set(ctx, &oa->base, key, eq + 1) != EC_OK) {
                return ecC_error("%s", ec_ctx_errmsg(ctx));
            }
            lua_pop(L, 1);
        }
    }
    return -1;
}

/* The best layout's model and batch (have: there is one), then what the search did. */
static void print_search(const ec_optimize_layout *best, int have, const ec_optimize_stats *s)
{
    char prec[EC_NAME_MAX] = "", model[EC_PATH_MAX] = "";
    if (have) {
        ec_config_get(&best->config, "precision", prec, sizeof prec);
        ec_config_get(&best->config, "model", model, sizeof model);
        printf("%s, seq_len %d, %s: global batch %.0f samples (%.0f tokens)\n", model,
               best->config.seq_len > 0 ? best->config.seq_len : 0, prec, best->global_batch,
               best->tokens_per_s * best->step_s);
    }
    printf("search: %zu layouts considered, %zu pruned (cannot divide), %zu pruned (model states exceed memory), "
           "%zu priced (%zu refused by the model), %zu fit; %.3f s on %d thread%s",
           s->considered, s->pruned_divide, s->pruned_memory, s->priced, s->refused, s->fit, s->search_s, s->threads,
           s->threads == 1 ? "" : "s");
    if (ecC_mpi_size() > 1)
        printf(" x %d MPI ranks", ecC_mpi_size());
    printf("\n");
}

/* The best layout's run: its time and cost, and the offer it is priced at. */
static void print_best(const ec_optimize_layout *best, const ec_optimize_stats *s)
{
    char d[32], m1[48], m2[48];
    if (best->train_s > 0)
    {
        printf("\nbest: %.0f tokens in %s", best->train_s * best->tokens_per_s,
               ec_format_duration(best->train_s, d, sizeof d));
        if (best->train_s >= 3 * 86400)
            printf(" (%.0f h)", best->train_time_h);
    }
    if (best->cost > 0)
        printf("%s%s %s at %s per hour", best->train_s > 0 ? ", " : "\nbest: ",
               ec_format_money(best->cost, best->price_currency, m1, sizeof m1),
               best->train_s > 0 ? "for the run" : "per million tokens",
               ec_format_money(best->price_per_hour, best->price_currency, m2, sizeof m2));
    if (best->train_s > 0 || best->cost > 0)
        printf("\n");
    if (best->price_offer[0] != '\0')
        printf("offer: %s\n", best->price_offer);
    else if (best->train_s > 0 || s->no_price > 0)
        printf("offer: none for %s in the price table (price_per_gpu_hour=X or prices=FILE prices it)\n",
               best->config.gpu);
}

/* The search's report: the best layouts (or the fastest that do not fit), the best one's run.
 * Whether a layout fits; *stats the search's. */
static int print_optimize(const ec_optimize *opt, const optimize_args *oa, ec_optimize_stats *stats)
{
    ec_optimize_stats_get(opt, stats);
    const ec_optimize_stats s = *stats;
    size_t top = 10;
    for (size_t i = 0; i < oa->n_search; i++)
        if (strncmp(oa->search_words[i], "top=", 4) == 0)
            top = (size_t)strtoul(oa->search_words[i] + 4, NULL, 10);
    ec_optimize_layout best;
    int have = ec_optimize_count(opt) > 0 && ec_optimize_get(opt, 0, 0, &best) == EC_OK;
    print_search(&best, have, &s);
    int show_gpu = 0;
    for (size_t i = 1; have && i < ec_optimize_count(opt) && i < top; i++) {
        ec_optimize_layout l;
        if (ec_optimize_get(opt, 0, i, &l) == EC_OK &&
            (strcmp(l.config.gpu, best.config.gpu) != 0 || l.config.num_gpus != best.config.num_gpus))
            show_gpu = 1;
    }
    if (have) {
        print_list("best layouts (tokens/s summed over the GPUs; MFU model FLOPs; peak memory per GPU of capacity):",
                   opt, 0, top, show_gpu);
        print_list("left out: faster but out of memory (peak within 25 % of capacity), or at the edge of "
                   "out-of-memory (they fit only without the memory headroom, docs/memory.md):", opt, 1, top < 5 ? top : 5,
                   show_gpu);
        print_best(&best, &s);
    } else {
        print_list("no layout fits; the fastest that do not:", opt, 1, top, show_gpu);
        if (s.priced == 0 && s.first_divide[0] != '\0')
            printf("first layout that cannot divide: %s\n", s.first_divide);
    }
    return have;
}

int ecC_cmd_optimize(lua_State *L, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (ecC_is_help(argv[i]))
            return print_usage(), 0;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    optimize_args oa;
    int code = parse_optimize_args(L, ctx, argc, argv, &oa);
    if (code >= 0)
        return code;
    const char *out = oa.out;
    void **slot = ecL_newbox(L, free_optimize);
    ec_optimize *opt = NULL;
    if (ec_optimize_new(ctx, &oa.base, &opt) != EC_OK)
        return ecC_error("%s", ec_ctx_errmsg(ctx));
    *slot = opt;
    for (size_t i = 0; i < oa.n_search; i++) {
        const char *eq = strchr(oa.search_words[i], '=');
        lua_pushlstring(L, oa.search_words[i], (size_t)(eq - oa.search_words[i]));
        if (ec_optimize_set(opt, lua_tostring(L, -1), eq + 1) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        lua_pop(L, 1);
    }
    /* Rank 0 writes -o after the search (where it is checked again against every file the
     * search read): a target it refuses now (a link, a FIFO, a folder, an input) stops every
     * rank before the search, not one of them after it. */
    int ready = EC_OK;
    if (out != NULL && ecC_mpi_rank() == 0) {
        ec_csv_writer *probe = NULL;
        if ((ready = ec_csv_open(ctx, out, &probe)) == EC_OK)
            ec_csv_abort(probe);
    }
    if (ecC_mpi_agree(ready != EC_OK))
        return ecC_error("%s", ready != EC_OK ? ec_ctx_errmsg(ctx) : "another MPI rank cannot start the search");
    char msg[1024];
    int st = ecC_optimize_run(ctx, opt, msg, sizeof msg);
    if (st != EC_OK)
        return ecC_error("%s", msg);
    if (ecC_mpi_rank() != 0)
        return 0;
    ec_optimize_stats s;
    int have = print_optimize(opt, &oa, &s);
    if (out != NULL) {
        if (write_csv(ctx, opt, out) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        printf("wrote %s\n", out);
    }
    if (!have)
        return ecC_error("optimize: no layout fits in memory (%zu priced)", s.priced);
    return 0;
}
