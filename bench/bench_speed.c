/*
 * bench_speed.c: the simulator's own speed (issue 7): predictions per second for
 * single-GPU steps (BERT-large SQuAD, ResNet-50), an 8-GPU DDP step, and resident memory
 * before and after a sweep of a million configurations, on one thread.  Prints a Markdown
 * report with the machine it ran on.
 *
 *   bench_speed [MODELS_DIR] [SECONDS_PER_SECTION] [SWEEP_CONFIGS] [SECTION_NAME_PART]
 *
 * With SECTION_NAME_PART only the sections whose name contains it run (for profiling).
 * After the sections (issue 22): the same sweep through ec_sweep on 1, 2 and 4 threads
 * (points/s and the speed-up over one), ec.sweep with full rows from Lua, and the layout
 * search of the issue (Llama-3.1-70B on 64 H100s), each with the wall time it took.
 *
 * Each section is one entry of `sections` below: a name, a setup that fills a base config
 * and the axes it varies, and a body run in a timed loop.  To add a section (the epoch
 * simulation is one), write one function of type section_fn and add a line to the
 * table.  Every prediction varies the batch (and the GPU) so that nothing is a repeat of the
 * previous call; the context's workload and op cost caches are what a real sweep reuses.
 */
#define _POSIX_C_SOURCE 200809L

#include "epochcast.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Resident set size in bytes from /proc/self/statm (second field, in pages). */
static double rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f == NULL)
        return 0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static void print_machine(void)
{
    char model[256] = "unknown";
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL)
            if (strncmp(line, "model name", 10) == 0) {
                const char *p = strchr(line, ':');
                if (p != NULL) {
                    snprintf(model, sizeof model, "%s", p + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(f);
    }
    printf("machine: %s, %ld online cores; benchmark runs on one thread\n\n", model,
           sysconf(_SC_NPROCESSORS_ONLN));
}

/* ---- sections ------------------------------------------------------------------------ */
typedef struct bench {
    ec_ctx *ctx;
    double seconds;              /* minimum timed duration of a section */
    const char *gpus[8];         /* GPUs the sweep sections cycle through */
    size_t n_gpus;
} bench;

/* Run `iter` predictions; returns the number done or -1 on error. */
typedef long (*section_fn)(bench *b, ec_config *base, long iter);

static int must(ec_ctx *ctx, int rc, const char *what)
{
    if (rc != EC_OK) {
        fprintf(stderr, "bench_speed: %s: %s\n", what, ec_ctx_errmsg(ctx));
        exit(1);
    }
    return rc;
}

static void set(ec_ctx *ctx, ec_config *cfg, const char *word)
{
    must(ctx, ec_config_set_word(ctx, cfg, word), word);
}

/* Predictions with batch 1..32 and the GPUs of b->gpus in turn: a sweep over two axes. */
static long predict_sweep(bench *b, ec_config *base, long iter)
{
    ec_config c = *base;
    ec_result res;
    double sink = 0;
    for (long i = 0; i < iter; i++) {
        c.batch_per_gpu = 1 + (int)(i % 32);
        if (i % 32 == 0) /* the GPU changes every 32 (a sweep sets a key when it changes) */
            snprintf(c.gpu, sizeof c.gpu, "%s", b->gpus[(i / 32) % (long)b->n_gpus]);
        must(b->ctx, ec_predict(b->ctx, &c, &res), "ec_predict");
        sink += res.step_s;
    }
    return sink > 0 ? iter : -1;
}

/* Every call a batch size the context has not seen in its last ECI_WL_CACHE_ENTRIES calls:
 * the cost of a prediction when the workload cache misses. */
static long predict_cold(bench *b, ec_config *base, long iter)
{
    ec_config c = *base;
    ec_result res;
    double sink = 0;
    for (long i = 0; i < iter; i++) {
        c.batch_per_gpu = 1 + (int)(i % 1000);
        must(b->ctx, ec_predict(b->ctx, &c, &res), "ec_predict");
        sink += res.step_s;
    }
    return sink > 0 ? iter : -1;
}

/* One known epoch of 10,000 micro-steps that needs the discrete-event simulation (dynamic
 * padding with workers): every call another seed, so every epoch is simulated afresh. */
#define EPOCH_BATCH 32
#define EPOCH_STEPS 10000
static long predict_epoch(bench *b, ec_config *base, long iter)
{
    ec_config c = *base;
    ec_result res;
    double sink = 0;
    c.batch_per_gpu = EPOCH_BATCH;
    c.dataset_samples = (double)EPOCH_BATCH * EPOCH_STEPS;
    for (long i = 0; i < iter; i++) {
        c.seed = (uint64_t)i + 1;
        must(b->ctx, ec_predict(b->ctx, &c, &res), "ec_predict");
        sink += res.epoch_s;
    }
    return sink > 0 ? iter : -1;
}

static void setup_epoch(ec_ctx *ctx, ec_config *c)
{
    set(ctx, c, "model=bert-base");
    set(ctx, c, "seq_len=512");
    set(ctx, c, "padding=dynamic");
    set(ctx, c, "lengths=lognormal(120,0.6)");
    set(ctx, c, "num_workers=4");
    set(ctx, c, "precision=amp_fp16");
}

static void setup_bert_squad(ec_ctx *ctx, ec_config *c)
{
    set(ctx, c, "model=bert-large");
    set(ctx, c, "task=squad");
    set(ctx, c, "seq_len=384");
    set(ctx, c, "precision=amp_fp16");
}

static void setup_resnet(ec_ctx *ctx, ec_config *c)
{
    set(ctx, c, "model=resnet50");
    set(ctx, c, "precision=amp_fp16");
    set(ctx, c, "num_workers=8");
    set(ctx, c, "pin_memory=1");
}

/* The defaults, as BERT-large's section has them: real data loaded in the training loop
 * (num_workers=0, its closed form) and copied from pageable memory. */
static void setup_resnet_default(ec_ctx *ctx, ec_config *c)
{
    set(ctx, c, "model=resnet50");
    set(ctx, c, "precision=amp_fp16");
}

/* The step alone, as the model predicts it: synthetic data, so no loader is simulated. */
static void setup_resnet_step(ec_ctx *ctx, ec_config *c)
{
    set(ctx, c, "model=resnet50");
    set(ctx, c, "precision=amp_fp16");
    set(ctx, c, "data=synthetic");
}

/* A 32-layer decoder read from its config file (models/networks/llama-3.1-8b.json). */
static void setup_llama8b(ec_ctx *ctx, ec_config *c)
{
    set(ctx, c, "model=llama-3.1-8b");
    set(ctx, c, "seq_len=4096");
    set(ctx, c, "precision=amp_bf16");
    set(ctx, c, "data=synthetic");
}

/* torchvision resnet152: 50 bottlenecks, 155 convolutions, priced as four repeated blocks. */
static void setup_resnet152(ec_ctx *ctx, ec_config *c)
{
    set(ctx, c, "model=resnet152");
    set(ctx, c, "precision=amp_fp16");
    set(ctx, c, "data=synthetic");
}

static void setup_ddp8(ec_ctx *ctx, ec_config *c)
{
    setup_bert_squad(ctx, c);
    set(ctx, c, "num_gpus=8");
    set(ctx, c, "strategy=ddp");
}

/* Llama-3.1-8B on 64 H100s (8 nodes, InfiniBand NDR), 16 micro-batches of 4096 tokens: the
 * layouts of issue 18's speed goal, dp x tp x pp with sequence parallelism, in turn. */
static void setup_llama8b_64(ec_ctx *ctx, ec_config *c)
{
    setup_llama8b(ctx, c);
    set(ctx, c, "num_gpus=64");
    set(ctx, c, "network=ib-ndr-400");
    set(ctx, c, "grad_accum=16");
    set(ctx, c, "attention=flash");
}

/* The layouts dp x tp x pp of 64 GPUs with tp within a node, and micro-batches 1..4. */
static long predict_layouts(bench *b, ec_config *base, long iter)
{
    static const int layouts[][2] = {{1, 1}, {2, 1}, {8, 1}, {1, 4}, {2, 2}, {2, 4}, {4, 2}, {4, 4}, {8, 2}, {2, 8}};
    const long n_layouts = (long)(sizeof layouts / sizeof layouts[0]);
    ec_config c = *base;
    ec_result res;
    double sink = 0;
    for (long i = 0; i < iter; i++) {
        c.tp = layouts[i % n_layouts][0];
        c.pp = layouts[i % n_layouts][1];
        c.sequence_parallel = c.tp > 1;
        c.batch_per_gpu = 1 + (int)((i / n_layouts) % 4);
        must(b->ctx, ec_predict(b->ctx, &c, &res), "ec_predict");
        sink += res.step_s;
    }
    (void)b;
    return sink > 0 ? iter : -1;
}

typedef struct section {
    const char *name;
    void (*setup)(ec_ctx *ctx, ec_config *c);
    section_fn run;
} section;

static const section sections[] = {
    {"single-GPU step, BERT-large SQuAD (seq 384, amp_fp16)", setup_bert_squad, predict_sweep},
    {"single-GPU step, ResNet-50 ImageNet (amp_fp16, defaults: loaded in the loop)", setup_resnet_default,
     predict_sweep},
    {"single-GPU step, ResNet-50 ImageNet (amp_fp16, 8 workers, pin_memory)", setup_resnet, predict_sweep},
    {"single-GPU step, ResNet-50 ImageNet (amp_fp16, synthetic data: no loader)", setup_resnet_step, predict_sweep},
    {"single-GPU step, Llama-3.1-8B (seq 4096, amp_bf16, synthetic data)", setup_llama8b, predict_sweep},
    {"single-GPU step, ResNet-152 ImageNet (amp_fp16, synthetic data)", setup_resnet152, predict_sweep},
    {"8-GPU DDP step, BERT-large SQuAD", setup_ddp8, predict_sweep},
    {"64-GPU Llama-3.1-8B, dp x tp x pp (10 layouts, micro-batch 1-4, 16 micro-batches)", setup_llama8b_64,
     predict_layouts},
    {"single-GPU BERT-large, workload cache missed every call", setup_bert_squad, predict_cold},
    {"single-GPU ResNet-50, workload cache missed every call", setup_resnet, predict_cold},
    {"single-GPU Llama-3.1-8B, workload cache missed every call", setup_llama8b, predict_cold},
    {"epoch of 10,000 steps, full DES (BERT-base, dynamic padding, 4 workers)", setup_epoch, predict_epoch},
};

/* Time one section: calibrate the iteration count to at least b->seconds. */
static void run_section(bench *b, const section *s)
{
    ec_config base;
    ec_config_init(&base);
    set(b->ctx, &base, "gpu=a100-sxm4-80gb");
    s->setup(b->ctx, &base);
    base.batch_per_gpu = 1;
    long iter = 10; /* grown below until a section runs for b->seconds */
    double t = 0;
    for (;;) {
        double t0 = now_s();
        if (s->run(b, &base, iter) < 0)
            exit(1);
        t = now_s() - t0;
        if (t >= b->seconds)
            break;
        iter = (long)((double)iter * (t > 0 ? fmin(10.0, 1.2 * b->seconds / t) : 10.0));
    }
    printf("| %-72s | %10ld | %8.3f | %12.0f | %8.2f |\n", s->name, iter, t, (double)iter / t, 1e6 * t / (double)iter);
}

/* The same sweep in C (bench_sweep) and through the Lua module (bench_sweep.lua under lua5.4):
 * each prints "... = N points/s"; skipped when either cannot be run. */
static double sweep_rate(const char *cmd)
{
    char line[512];
    double rate = -1;
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    while (fgets(line, sizeof line, p) != NULL) {
        const char *eq = strstr(line, " = ");
        if (eq != NULL)
            rate = atof(eq + 3);
    }
    return pclose(p) == 0 ? rate : -1;
}

static void lua_vs_c(void)
{
#if defined(EC_BENCH_SWEEP) && defined(EC_LUA_CPATH) && defined(EC_SOURCE_DIR)
    /* 1,000 repeats (~1 s each) and the best of three alternating rounds: a 0.1 s run on a
     * shared 2-core machine swings by tens of percent either way. */
    const char *repeats = "1000";
    enum { ROUNDS = 3 };
    char c_cmd[1024], lua_cmd[1024];
    snprintf(c_cmd, sizeof c_cmd, "'%s' %s 2>&1", EC_BENCH_SWEEP, repeats);
    snprintf(lua_cmd, sizeof lua_cmd, "LUA_CPATH='%s' lua5.4 '%s/bench/bench_sweep.lua' %s 2>&1", EC_LUA_CPATH,
             EC_SOURCE_DIR, repeats);
    double c_best = -1, lua_best = -1;
    printf("\nsweep of bench_sweep.lua (144 points x %s), points/s per round:", repeats);
    for (int round = 0; round < ROUNDS; round++) {
        double c_rate = sweep_rate(c_cmd), lua_rate = sweep_rate(lua_cmd);
        if (c_rate <= 0 || lua_rate <= 0) {
            printf("\nLua sweep vs C: skipped (bench_sweep or lua5.4 with the epochcast module not runnable)\n");
            return;
        }
        printf(" C %.0f / Lua %.0f;", c_rate, lua_rate);
        c_best = fmax(c_best, c_rate);
        lua_best = fmax(lua_best, lua_rate);
    }
    printf("\nbest of %d: C %.0f points/s, Lua %.0f points/s, Lua %.0f%% slower\n", ROUNDS, c_best, lua_best,
           100.0 * (c_best / lua_best - 1.0));
#else
    printf("\nLua sweep vs C: skipped (built without the Lua module)\n");
#endif
}

/* Resident memory before and after a sweep of n configurations over every axis that the
 * sweep sections vary, plus precision and optimizer. */
static void memory_flat(bench *b, long n)
{
    static const char *const precisions[] = {"fp32", "amp_fp16", "amp_bf16", "tf32"};
    static const char *const optimizers[] = {"adamw", "sgd", "adamw_fused", "lamb"};
    static const char *const models[] = {"bert-base", "resnet50", "gpt2", "vit-b16"};
    ec_config base;
    ec_config_init(&base);
    ec_config c = base;
    ec_result res;
    double before = 0, t0 = 0, sink = 0;
    long failed = 0;
    for (long i = 0; i < n; i++) {
        if (i == 1000) { /* after warm-up: caches and allocator arenas in place */
            before = rss_bytes();
            t0 = now_s();
        }
        c = base;
        c.batch_per_gpu = 1 + (int)(i % 64);
        snprintf(c.model, sizeof c.model, "%s", models[(i / 64) % 4]);
        snprintf(c.gpu, sizeof c.gpu, "%s", b->gpus[(i / 256) % (long)b->n_gpus]);
        must(b->ctx, ec_config_set(b->ctx, &c, "precision", precisions[(i / 2048) % 4]), "precision");
        must(b->ctx, ec_config_set(b->ctx, &c, "optimizer", optimizers[(i / 8192) % 4]), "optimizer");
        if (ec_predict(b->ctx, &c, &res) != EC_OK)
            failed++; /* e.g. a model that cannot run at that precision: still a call */
        else
            sink += res.memory.peak_bytes;
    }
    double t = now_s() - t0, after = rss_bytes();
    printf("\nsweep of %ld configurations (4 models x 64 batches x %zu GPUs x 4 precisions x 4 optimizers, "
           "cycled): %.2f s, %.0f predictions/s, %ld rejected\n",
           n, b->n_gpus, t, (double)(n - 1000) / t, failed);
    printf("resident memory after 1,000 warm-up predictions: %.1f MiB; after all %ld: %.1f MiB (change %+.1f KiB)\n",
           before / 1048576.0, n, after / 1048576.0, (after - before) / 1024.0);
    (void)sink;
}

/* ec_sweep of BERT-large SQuAD over 8 GPUs x 64 batches x 4 accumulations x 4 precisions x 4
 * sequence lengths (32,768 points) repeated `reps` times on t threads: points per second of wall
 * time (after one untimed sweep, so that every thread's context has warm caches, as the
 * caller's has after the sections before). */
/* CPU seconds of the whole process (every thread). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double sweep_threads(bench *b, int t, int reps, int *used, double *cpu_per_point)
{
    static const char *const batches[] = {"1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",  "10", "11",
                                          "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22",
                                          "23", "24", "25", "26", "27", "28", "29", "30", "31", "32", "33",
                                          "34", "35", "36", "37", "38", "39", "40", "41", "42", "43", "44",
                                          "45", "46", "47", "48", "49", "50", "51", "52", "53", "54", "55",
                                          "56", "57", "58", "59", "60", "61", "62", "63", "64"};
    static const char *const accum[] = {"1", "2", "4", "8"};
    static const char *const precisions[] = {"fp32", "amp_fp16", "amp_bf16", "tf32"};
    static const char *const seqs[] = {"128", "256", "384", "512"};
    ec_config base;
    ec_config_init(&base);
    setup_bert_squad(b->ctx, &base);
    double t0 = now_s(), c0 = cpu_s(), sink = 0;
    size_t points = 0;
    for (int r = 0; r < reps; r++) {
        ec_sweep_opts o;
        ec_sweep_opts_init(&o);
        o.threads = t;
        ec_sweep *sw;
        must(b->ctx, ec_sweep_new(b->ctx, &base, &o, &sw), "ec_sweep_new");
        must(b->ctx, ec_sweep_axis(sw, "gpu", b->gpus, b->n_gpus), "axis");
        must(b->ctx, ec_sweep_axis(sw, "batch_per_gpu", batches, 64), "axis");
        must(b->ctx, ec_sweep_axis(sw, "grad_accum", accum, 4), "axis");
        must(b->ctx, ec_sweep_axis(sw, "precision", precisions, 4), "axis");
        must(b->ctx, ec_sweep_axis(sw, "seq_len", seqs, 4), "axis");
        while (!ec_sweep_done(sw)) {
            ec_sweep_point pt;
            must(b->ctx, ec_sweep_next(sw, &pt), "ec_sweep_next");
            if (pt.status == EC_OK)
                sink += pt.result->step_s;
            points++;
        }
        *used = ec_sweep_threads(sw);
        ec_sweep_free(sw);
    }
    double dt = now_s() - t0;
    *cpu_per_point = (cpu_s() - c0) / (double)points;
    return sink > 0 ? (double)points / dt : -1;
}

static void threads_scaling(bench *b)
{
    int reps = b->seconds >= 1 ? 4 : 2;
    printf("\nec_sweep of 32,768 points (BERT-large SQuAD: 8 GPUs x 64 batches x 4 grad_accum x 4 precisions x 4 "
           "seq_len) x %d, in order, wall time:\n", reps);
    /* On a machine whose cores are busy with other jobs the wall-clock speed-up says little; the
     * CPU time per point (all threads) says what the threads cost beyond one: with that overhead
     * o, t free cores would give t / (1 + o) times one thread's rate. */
    double one = 0, one_cpu = 0;
    for (int t = 1; t <= 4; t *= 2) {
        int used = 0;
        double cpu = 0;
        sweep_threads(b, t, 1, &used, &cpu); /* warm-up: the workers' kept contexts fill their caches */
        double rate = sweep_threads(b, t, reps, &used, &cpu);
        if (t == 1)
            one = rate, one_cpu = cpu;
        printf("  threads=%d (%d predicting): %10.0f points/s, x%.2f of one thread; CPU %.2f us per point (%+.1f %%)\n",
               t, used, rate, one > 0 ? rate / one : 0, 1e6 * cpu, one_cpu > 0 ? 100 * (cpu / one_cpu - 1) : 0);
    }
}

/* The layout search of issue 22, as `epochcast optimize` runs it. */
static void optimize_70b(bench *b, int threads)
{
    ec_config base;
    ec_config_init(&base);
    set(b->ctx, &base, "model=llama-3.1-70b");
    set(b->ctx, &base, "seq_len=8192");
    ec_optimize *o;
    must(b->ctx, ec_optimize_new(b->ctx, &base, &o), "ec_optimize_new");
    char t[16];
    snprintf(t, sizeof t, "%d", threads);
    must(b->ctx, ec_optimize_set(o, "gpu", "h100-sxm5-80gb"), "gpu");
    must(b->ctx, ec_optimize_set(o, "num_gpus", "64"), "num_gpus");
    must(b->ctx, ec_optimize_set(o, "global_batch_tokens", "4194304"), "global_batch_tokens");
    must(b->ctx, ec_optimize_set(o, "threads", t), "threads");
    must(b->ctx, ec_optimize_run(o), "ec_optimize_run");
    ec_optimize_stats s;
    ec_optimize_stats_get(o, &s);
    printf("  threads=%d: %zu considered, %zu pruned (divide), %zu pruned (memory), %zu priced, %zu fit: %.3f s, "
           "%.0f priced/s\n", s.threads, s.considered, s.pruned_divide, s.pruned_memory, s.priced, s.fit, s.search_s,
           (double)s.priced / s.search_s);
    ec_optimize_free(o);
}

static void lua_full_rows(void)
{
#if defined(EC_LUA_CPATH) && defined(EC_SOURCE_DIR)
    char cmd[1024];
    for (int t = 1; t <= 2; t++) {
        snprintf(cmd, sizeof cmd, "LUA_CPATH='%s' lua5.4 '%s/bench/bench_sweep_full.lua' 100 %d 2>&1", EC_LUA_CPATH,
                 EC_SOURCE_DIR, t);
        double rate = sweep_rate(cmd);
        if (rate <= 0) {
            printf("\nLua ec.sweep, full rows: skipped (lua5.4 with the epochcast module not runnable)\n");
            return;
        }
        printf("%sLua ec.sweep with full rows (bench_sweep_full.lua, 512 points x 100), threads=%d: %.0f points/s\n",
               t == 1 ? "\n" : "", t, rate);
    }
#endif
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    const char *dir = argc > 1 ? argv[1] : getenv("EPOCHCAST_MODELS");
    bench b = {.seconds = argc > 2 ? atof(argv[2]) : 2.0,
               .gpus = {"a100-sxm4-80gb", "t4", "rtx4090", "v100-sxm2-16gb", "h100-sxm5-80gb", "a16", "l4",
                        "a10"},
               .n_gpus = 8};
    if (ec_ctx_new(NULL, NULL, &b.ctx) != EC_OK)
        return 1;
    must(b.ctx, ec_ctx_load_models(b.ctx, dir), "ec_ctx_load_models");
    for (size_t i = 0; i < b.n_gpus; i++) {
        size_t idx;
        must(b.ctx, ec_gpu_find(b.ctx, b.gpus[i], &idx), b.gpus[i]);
    }
    print_machine();
    printf("| %-72s | predictions | seconds | predictions/s | us/pred  |\n", "section");
    printf("|%.74s|------------|----------|--------------|----------|\n", "------------------------------------------------------------------------------------------");
    const char *only = argc > 4 ? argv[4] : NULL; /* a part of a section's name, for profiling */
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (only == NULL || strstr(sections[i].name, only) != NULL)
            run_section(&b, &sections[i]);
    if (only == NULL) {
        lua_vs_c();
        lua_full_rows();
    }
    if (only == NULL || strstr("threads", only) != NULL)
        threads_scaling(&b);
    if (only == NULL || strstr("optimize", only) != NULL) {
        printf("\nlayout search, Llama-3.1-70B, 64 x h100-sxm5-80gb, seq 8192, 4,194,304 tokens per step:\n");
        optimize_70b(&b, 1);
        optimize_70b(&b, 0);
    }
    long sweep = argc > 3 ? atol(argv[3]) : 1000000;
    if (sweep > 1000)
        memory_flat(&b, sweep);
    ec_ctx_free(b.ctx);
    return 0;
}
