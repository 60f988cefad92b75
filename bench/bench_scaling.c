/*
 * bench_scaling.c: predicted against measured multi-GPU scaling efficiency (DESIGN 3.3, 6).
 *
 *   bench_scaling RUNS.csv [OUT.csv]
 *
 * Every multi-GPU run of RUNS.csv is paired with the single-GPU run of the same
 * configuration (model, task, gpu, precision, batch, sequence or image size, grad_accum,
 * optimizer, checkpointing, compile, data, metric) from the same publisher (the source text
 * up to its first '/': "lambda:pytorch", "nvidia:PyTorch"), so that both come from one
 * benchmark setup.  Measured efficiency = throughput_n / (n x throughput_1); predicted =
 * ec_result.scaling_efficiency_frac (the same config predicted on n GPUs and on one).
 * Prints a Markdown report; OUT.csv gets one row per pair.  Nothing is fitted here: the
 * predictions use the context's default models/ tables and fit, as `epochcast predict` does.
 */
#include "epochcast.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair {
    const ec_run *multi, *single;
    double measured, predicted; /* efficiencies */
    int nvlink;                 /* SXM GPUs on their NVLink/NVSwitch boards */
    int through_host;           /* GPU without peer-to-peer: default topology pcie-host */
    int p2p_off;                /* a GPU with peer-to-peer whose run put topology=pcie-host
                                 * (Lambda's v1 harness: NCCL_P2P_DISABLE=1) */
    double comm_floor;          /* efficiency if the whole all-reduce were exposed (no overlap) */
    int near_capacity;          /* predicted peak above near_capacity_warn_frac, or over capacity */
} pair;

/* The publisher part of a source cell: after "median of k: " up to the first '/'. */
static void publisher(const char *source, char *out, size_t n)
{
    const char *p = strstr(source, ": ");
    p = p != NULL ? p + 2 : source;
    size_t len = strcspn(p, "/");
    if (len >= n)
        len = n - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

static int same_setup(const ec_run *a, const ec_run *b)
{
    const ec_config *x = &a->config, *y = &b->config;
    char pa[64], pb[64];
    publisher(a->source, pa, sizeof pa);
    publisher(b->source, pb, sizeof pb);
    return strcmp(x->model, y->model) == 0 && strcmp(x->task, y->task) == 0 && strcmp(x->gpu, y->gpu) == 0 &&
           x->precision == y->precision && x->batch_per_gpu == y->batch_per_gpu && x->seq_len == y->seq_len &&
           x->image_size == y->image_size && x->grad_accum == y->grad_accum && x->optimizer == y->optimizer &&
           x->checkpointing == y->checkpointing && x->compile == y->compile &&
           x->data_synthetic == y->data_synthetic && a->metric == b->metric && strcmp(pa, pb) == 0;
}

/* Samples per second over all GPUs from a run's metric (0 when the metric cannot give it). */
static double throughput(const ec_run *r)
{
    const ec_config *c = &r->config;
    switch (r->metric) {
    case EC_METRIC_SAMPLES_PER_S: return r->value;
    case EC_METRIC_STEP_TIME_MS: return (double)c->batch_per_gpu * c->grad_accum * c->num_gpus / (r->value / 1e3);
    default: return 0;
    }
}

typedef int (*pair_filter)(const pair *p);

static int all_pairs(const pair *p) { (void)p; return 1; }
static int nvlink8(const pair *p) { return p->nvlink && p->multi->config.num_gpus == 8; }
static int from(const pair *p, const char *who)
{
    char pub[64];
    publisher(p->multi->source, pub, sizeof pub);
    return strncmp(pub, who, strlen(who)) == 0;
}
static int nvlink8_nvidia(const pair *p) { return nvlink8(p) && from(p, "nvidia:"); }
static int nvlink8_lambda(const pair *p) { return nvlink8(p) && from(p, "lambda:"); }
static int nvlink_any(const pair *p) { return p->nvlink && p->multi->config.num_gpus <= 8; }
static int pcie_any(const pair *p) { return !p->nvlink; }
/* GPUs without peer-to-peer (pcie-host), whose 2-GPU pairs fitted pcie_host_busbw_frac */
static int host_fit_set(const pair *p) { return p->through_host && p->multi->config.num_gpus == 2; }
static int host_held_out(const pair *p) { return p->through_host && p->multi->config.num_gpus > 2; }
static int p2p_off(const pair *p) { return p->p2p_off; }
static int multinode(const pair *p) { return p->multi->config.num_gpus > 8; }
/* Measured below the communication floor: slower than if every gradient byte were exchanged
 * after backward, not overlapped, at the model's bus bandwidth.  Gradient exchange cannot
 * explain such a loss; something else in the run (host, harness, timing) must. */
static int below_floor(const pair *p) { return p->measured < p->comm_floor; }
static int nvlink8_consistent(const pair *p) { return nvlink8(p) && !below_floor(p); }
static int nvlink8_lambda_consistent(const pair *p) { return nvlink8_lambda(p) && !below_floor(p); }
static int pcie_consistent(const pair *p) { return pcie_any(p) && !below_floor(p); }
static int all_consistent(const pair *p) { return !below_floor(p); }
static int nvlink8_near(const pair *p) { return nvlink8(p) && p->near_capacity; }
static int nvlink8_room(const pair *p) { return nvlink8(p) && !p->near_capacity; }
static int all_near(const pair *p) { return p->near_capacity; }
static int all_room(const pair *p) { return !p->near_capacity; }

/* One summary line: mean |predicted - measured| in percentage points, bias, median, and the
 * mean measured and predicted efficiencies. */
static void summary(const char *label, const pair *pairs, size_t n, pair_filter keep)
{
    double *d = calloc(n + 1, sizeof(double));
    size_t k = 0;
    double sum_abs = 0, sum = 0, meas = 0, pred = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep(&pairs[i]))
            continue;
        double diff = 100.0 * (pairs[i].predicted - pairs[i].measured);
        d[k++] = fabs(diff);
        sum_abs += fabs(diff);
        sum += diff;
        meas += pairs[i].measured;
        pred += pairs[i].predicted;
    }
    if (k == 0) {
        printf("| %-44s | %4d | — | — | — | — | — |\n", label, 0);
        free(d);
        return;
    }
    gsl_sort(d, 1, k);
    printf("| %-44s | %4zu | %5.1f | %+5.1f | %5.1f | %5.1f | %5.1f |\n", label, k, sum_abs / k, sum / k,
           gsl_stats_median_from_sorted_data(d, 1, k), 100 * meas / k, 100 * pred / k);
    free(d);
}

static int predict_words(ec_ctx *ctx, const char *words, ec_result *res)
{
    ec_config cfg;
    char buf[1024];
    ec_config_init(&cfg);
    if (strlen(words) >= sizeof buf)
        return 1;
    memcpy(buf, words, strlen(words) + 1);
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
        if (ec_config_set_word(ctx, &cfg, w) != EC_OK)
            return 1;
    return ec_predict(ctx, &cfg, res) != EC_OK;
}

/* Seed 000 (BERT-base on 8 A16): the "before" and the document's optimized setups. */
static int seed000(ec_ctx *ctx)
{
    static const char base[] = "model=bert-base task=classify gpu=a16 seq_len=256 dataset_samples=40000";
    static const struct { const char *label, *words; } setups[] = {
        {"before: 1 GPU, fp32, batch 16, num_workers 0", "precision=fp32 batch_per_gpu=16"},
        {"8 GPUs DataParallel, AMP, batch 32/GPU, 4 workers", "num_gpus=8 strategy=dp precision=amp_fp16 "
                                                             "batch_per_gpu=32 num_workers=4 pin_memory=1"},
        {"8 GPUs DDP, AMP, batch 32/GPU, 4 workers", "num_gpus=8 strategy=ddp precision=amp_fp16 batch_per_gpu=32 "
                                                    "num_workers=4 pin_memory=1"},
        {"8 GPUs DataParallel, fp32, batch 16/GPU", "num_gpus=8 strategy=dp precision=fp32 batch_per_gpu=16"},
        {"8 GPUs DDP, fp32, batch 16/GPU", "num_gpus=8 strategy=ddp precision=fp32 batch_per_gpu=16"},
        {"1 GPU, AMP, batch 32, 4 workers", "precision=amp_fp16 batch_per_gpu=32 num_workers=4 pin_memory=1"},
    };
    printf("\n## Seed 000: BERT-base on 8x A16 (40,000 samples, length 256, max_length padding)\n\n");
    printf("Common keys: `%s`; topology a16-board (two boards of 4 GPUs). The document claims 45 min\n"
           "before and ~5 min (~10x) after.\n\n", base);
    printf("| setup | epoch min | samples/s | speed-up vs before | scaling eff. %% | comm ms/step | GPU 0 / other peak GiB |\n");
    printf("|---|---|---|---|---|---|---|\n");
    double before = 0;
    for (size_t i = 0; i < sizeof setups / sizeof setups[0]; i++) {
        char words[512];
        ec_result r;
        snprintf(words, sizeof words, "%s %s", base, setups[i].words);
        if (predict_words(ctx, words, &r) != 0) {
            fprintf(stderr, "bench_scaling: %s: %s\n", words, ec_ctx_errmsg(ctx));
            return 1;
        }
        if (i == 0)
            before = r.epoch_s;
        printf("| %s | %.1f | %.1f | %.1fx | %.1f | %.1f | %.2f / %.2f |\n", setups[i].label, r.epoch_s / 60,
               r.samples_per_s, before / r.epoch_s, 100 * r.scaling_efficiency_frac, 1e3 * r.breakdown.comm_s,
               r.memory.peak_bytes / 1073741824.0, r.other_gpu_peak_bytes / 1073741824.0);
    }
    return 0;
}

/* The one measured DDP run with peer-to-peer turned off that is not in the calibration runs:
 * Hugging Face perf_train_gpu_many (modeling.md 6.4 [R9]), GPT-2 small run_clm, fp32, batch 4
 * per GPU, 200 steps on 2 TITAN RTX: DP 110 s, DDP over the NVLink bridge 101 s, DDP with
 * NCCL_P2P_DISABLE=1 131 s.  models/ has no TITAN RTX; the RTX 2080 Ti is the same TU102
 * chip on the same PCIe Gen3 x16 link and NVLink bridge (50 GB/s per direction), so the
 * ratios, not the seconds, are compared. */
static int hf_p2p_check(ec_ctx *ctx)
{
    static const char *const runs[][2] = {{"DDP, NVLink bridge", "strategy=ddp topology=nvlink"},
                                          {"DDP, P2P disabled", "strategy=ddp topology=pcie-host"},
                                          {"DataParallel, NVLink bridge", "strategy=dp topology=nvlink"}};
    static const double measured_s[] = {101, 131, 110};
    double predicted_s[3];
    for (int i = 0; i < 3; i++) {
        char w[300];
        ec_result r;
        snprintf(w, sizeof w, "model=gpt2 task=lm gpu=rtx2080ti num_gpus=2 precision=fp32 batch_per_gpu=4 seq_len=1024 %s",
                 runs[i][1]);
        if (predict_words(ctx, w, &r) != 0) {
            fprintf(stderr, "bench_scaling: %s: %s\n", w, ec_ctx_errmsg(ctx));
            return 1;
        }
        predicted_s[i] = 200 * r.step_s;
    }
    printf("\n## Cross-check: DDP with peer-to-peer off (not fitted)\n\n"
           "Hugging Face `perf_train_gpu_many` (modeling.md 6.4 [R9]): GPT-2 small, fp32, batch 4 per GPU,\n"
           "200 steps on 2 TITAN RTX. Predicted with the RTX 2080 Ti profile (same TU102 chip, PCIe Gen3 x16,\n"
           "NVLink bridge), so compare the ratios to the first row.\n\n"
           "| run | measured s | ratio | predicted s (2080 Ti) | ratio |\n|---|---|---|---|---|\n");
    for (int i = 0; i < 3; i++)
        printf("| %s | %.0f | %.2f | %.1f | %.2f |\n", runs[i][0], measured_s[i], measured_s[i] / measured_s[0],
               predicted_s[i], predicted_s[i] / predicted_s[0]);
    return 0;
}

/* One grid of DataParallel against DDP: topologies x batch sizes x GPU counts. */
static int dp_vs_ddp_grid(ec_ctx *ctx, const char *model_words, const int batches[3])
{
    static const struct { const char *topology, *gpu; } topo[] = {
        {"nvlink", "a100-sxm4-80gb"}, {"pcie-switch", "a100-pcie-80gb"}, {"pcie-host", "rtx4090"}, {"a16-board", "a16"}};
    static const int counts[] = {2, 4, 8};
    printf("| topology (gpu) | batch/GPU | 2 GPUs | 4 GPUs | 8 GPUs |\n|---|---|---|---|---|\n");
    for (size_t t = 0; t < sizeof topo / sizeof topo[0]; t++)
        for (size_t b = 0; b < 3; b++) {
            printf("| %s (%s) | %d |", topo[t].topology, topo[t].gpu, batches[b]);
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                ec_result dp, ddp;
                char w[512];
                snprintf(w, sizeof w, "%s precision=amp_fp16 gpu=%s topology=%s num_gpus=%d batch_per_gpu=%d strategy=",
                         model_words, topo[t].gpu, topo[t].topology, counts[c], batches[b]);
                char wdp[540], wddp[540];
                snprintf(wdp, sizeof wdp, "%sdp", w);
                snprintf(wddp, sizeof wddp, "%sddp", w);
                if (predict_words(ctx, wdp, &dp) != 0 || predict_words(ctx, wddp, &ddp) != 0) {
                    fprintf(stderr, "bench_scaling: %s: %s\n", w, ec_ctx_errmsg(ctx));
                    return 1;
                }
                printf(" %.2fx (%.0f / %.0f) |", ddp.samples_per_s / dp.samples_per_s, 100 * dp.scaling_efficiency_frac,
                       100 * ddp.scaling_efficiency_frac);
            }
            printf("\n");
        }
    return 0;
}

/* DataParallel against DDP over topologies, GPU counts and batch sizes, for a network whose
 * step is dominated by its gradient exchange (BERT-base, 440 MB) and one dominated by many
 * small kernels (ResNet-50, 100 MB). */
static int dp_vs_ddp(ec_ctx *ctx)
{
    static const int bert_batches[] = {4, 16, 64}, resnet_batches[] = {8, 32, 128};
    printf("\n## DataParallel vs DDP\n\n");
    printf("BERT-base classify, seq_len 128, amp_fp16 (fp32 on the A16 is slower still; the ratio is what\n"
           "matters). Cell: DDP samples/s over DP samples/s (> 1: DP slower), and in brackets the scaling\n"
           "efficiency of DP / DDP in %%.\n\n");
    if (dp_vs_ddp_grid(ctx, "model=bert-base task=classify seq_len=128", bert_batches) != 0)
        return 1;
    printf("\nResNet-50 ImageNet, amp_fp16 (the kind of network of the measured DP-vs-DDP report, a conv net\n"
           "on 3 PCIe GPUs, modeling.md 6.4).\n\n");
    return dp_vs_ddp_grid(ctx, "model=resnet50", resnet_batches);
}

/* The single-GPU run of the same setup as the multi-GPU run m, NULL when RUNS.csv has none. */
static const ec_run *single_of(const ec_runs *runs, const ec_run *m)
{
    size_t n_runs = ec_runs_count(runs);
    const ec_run *s = NULL;
    for (size_t j = 0; j < n_runs && s == NULL; j++) {
        const ec_run *c = ec_runs_get(runs, j);
        if (c->config.num_gpus == 1 && same_setup(m, c))
            s = c;
    }
    return s;
}

/* The pair of multi-GPU run m and its single-GPU run s: measured and predicted efficiency, the communication
 * floor and the topology class; 1 (with a message) when m cannot be predicted. */
static int make_pair(ec_ctx *ctx, const ec_run *m, const ec_run *s, pair *out)
{
    ec_result res;
    if (ec_predict(ctx, &m->config, &res) != EC_OK) {
        fprintf(stderr, "bench_scaling: %s: %s\n", m->id, ec_ctx_errmsg(ctx));
        return 1;
    }
    /* the measured single-GPU step, plus the whole exchange and straggler wait exposed */
    double t1 = m->config.batch_per_gpu * m->config.grad_accum / throughput(s);
    size_t gi;
    ec_gpu_info gpu;
    if (ec_gpu_find(ctx, m->config.gpu, &gi) != EC_OK || ec_gpu_get(ctx, gi, &gpu) != EC_OK) {
        fprintf(stderr, "bench_scaling: %s: %s\n", m->id, ec_ctx_errmsg(ctx));
        return 1;
    }
    int through_host = strcmp(gpu.default_topology, "pcie-host") == 0;
    int forced = m->config.topology[0] != '\0' && strcmp(m->config.topology, gpu.default_topology) != 0;
    *out = (pair){.multi = m, .single = s, .predicted = res.scaling_efficiency_frac,
                  .through_host = through_host,
                  .p2p_off = !through_host && strcmp(m->config.topology, "pcie-host") == 0,
                  .measured = throughput(m) / (m->config.num_gpus * throughput(s)),
                  .nvlink = strstr(m->config.gpu, "sxm") != NULL && !forced,
                  .comm_floor = t1 / (t1 + res.comm_total_s + res.straggler_s),
                  .near_capacity = (res.warnings & (EC_WARN_NEAR_CAPACITY | EC_WARN_DOES_NOT_FIT)) != 0};
    return 0;
}

/* Every multi-GPU run paired with its single-GPU run into pairs (room for one per run); 1 on a failure. */
static int make_pairs(ec_ctx *ctx, const ec_runs *runs, pair *pairs, size_t *n_pairs)
{
    size_t n_runs = ec_runs_count(runs), n = 0;
    for (size_t i = 0; i < n_runs; i++) {
        const ec_run *m = ec_runs_get(runs, i);
        if (m->config.num_gpus < 2 || throughput(m) <= 0)
            continue;
        const ec_run *s = single_of(runs, m);
        if (s == NULL || throughput(s) <= 0)
            continue;
        if (make_pair(ctx, m, s, &pairs[n]) != 0)
            return 1;
        n++;
    }
    *n_pairs = n;
    return 0;
}

/* The report's title and the paragraph on how the pairs were made and what was fitted. */
static void print_intro(const char *runs_path, const char *out_path)
{
    printf("# Multi-GPU scaling efficiency: predicted vs measured\n\n");
    printf("Generated by `bench_scaling %s%s%s` (build/bench/bench_scaling). Each multi-GPU run is paired\n"
           "with the single-GPU run of the same configuration from the same publisher; efficiency =\n"
           "throughput on n GPUs / (n x throughput on one). Predicted: `scaling_efficiency_frac` with\n"
           "the default models/ tables. Three rates come from multi-GPU runs: pcie_host_busbw_frac,\n"
           "fitted on the 21 two-GPU RTX 3090 / 2080 Ti pairs as their scripts ran them (tools/data/\n"
           "fit_pcie_host.py on bench/data/calibration_dle.csv); their 3-8 GPU pairs are held out (the\n"
           "GeForce rows of the table); and the default host's host_hop_busbw_bytes_per_s (models/\n"
           "hosts.csv: a peer-to-peer PCIe ring of more than two GPUs crosses the host), fitted on the\n"
           "10 four- and eight-GPU A100 PCIe pairs (tools/data/fit_pcie_p2p.py), which are in-sample\n"
           "here (its held-out pairs are holdout_runs.csv's); and server-epyc's\n"
           "through_host_busbw_bytes_per_s (models/hosts.csv: the rows run on Lambda's AMD EPYC servers\n"
           "with every byte through host memory carry host=server-epyc), fitted on the 12 two-GPU A100\n"
           "pairs of those rows (tools/data/fit_host_busbw.py); their 3-8 GPU pairs and the RTX 3090's\n"
           "are held out. All runs are DDP; SXM GPUs are\n"
           "NVLink boards, the others (A100 PCIe, RTX 3090, RTX 2080 Ti) their default PCIe topology,\n"
           "unless the run file's topology column says otherwise: calibration_dle.csv puts Lambda's\n"
           "v1-harness runs, which export NCCL_P2P_DISABLE=1, on pcie-host (tools/data/make_dle_runs.py);\n"
           "they are then not NVLink pairs, and the P2P-off row holds them out for pcie_host_busbw_frac.\n\n",
           runs_path, out_path != NULL ? " " : "", out_path != NULL ? out_path : "");
}

/* The summary table: the accuracy rows, then the diagnostic rows by communication floor and memory headroom. */
static void print_summary(const pair *pairs, size_t n)
{
    printf("| runs                                         |    n | mean abs pp | bias pp | median abs pp | "
           "measured %% | predicted %% |\n");
    printf("|----------------------------------------------|------|------|-------|------|------|------|\n");
    summary("DDP, 8 NVLink GPUs (A100/V100 SXM)", pairs, n, nvlink8);
    summary("  of which NVIDIA DeepLearningExamples", pairs, n, nvlink8_nvidia);
    summary("  of which Lambda benchmarks", pairs, n, nvlink8_lambda);
    summary("DDP, 2-8 NVLink GPUs", pairs, n, nvlink_any);
    summary("DDP, 2-8 GPUs over PCIe or host memory", pairs, n, pcie_any);
    summary("  GeForce (no P2P), 2 GPUs: fit set", pairs, n, host_fit_set);
    summary("  GeForce (no P2P), 3-8 GPUs: held out", pairs, n, host_held_out);
    summary("  A100/V100, P2P off (Lambda v1): held out", pairs, n, p2p_off);
    summary("DDP, more than 8 GPUs (several nodes)", pairs, n, multinode);
    summary("all pairs", pairs, n, all_pairs);
    printf("| %-44s |      |      |       |      |      |      |\n",
           "**diagnostic: pairs at or above the comm floor**");
    summary("DDP, 8 NVLink GPUs (A100/V100 SXM)", pairs, n, nvlink8_consistent);
    summary("  of which Lambda benchmarks", pairs, n, nvlink8_lambda_consistent);
    summary("DDP, 2-8 GPUs over PCIe or host memory", pairs, n, pcie_consistent);
    summary("all pairs", pairs, n, all_consistent);
    summary("pairs below the floor (loss not from comm)", pairs, n, below_floor);
    printf("| %-44s |      |      |       |      |      |      |\n", "**diagnostic: by predicted memory headroom**");
    summary("8 NVLink GPUs, near capacity (warned)", pairs, n, nvlink8_near);
    summary("8 NVLink GPUs, with headroom", pairs, n, nvlink8_room);
    summary("all pairs, near capacity (warned)", pairs, n, all_near);
    summary("all pairs, with headroom", pairs, n, all_room);
}

/* What the summary's units, communication floor and memory headroom mean. */
static void print_notes(void)
{
    printf("\npp = percentage points of scaling efficiency. Communication floor: the efficiency the run\n"
           "would have if every gradient byte were all-reduced after backward, not overlapped, at the\n"
           "model's bus bandwidth for its topology and message sizes, plus the straggler wait, on top of\n"
           "the *measured* single-GPU step. A pair measured below it lost time that gradient exchange\n"
           "cannot explain: host contention of n processes, input pipeline, clocks, or harness/timing\n"
           "effects (see the Lambda caveats in shared/data/measurements/README.md: runs of 100-400\n"
           "iterations, BERT SQuAD step-count artifacts). The diagnostic rows are NOT the accuracy\n"
           "figure (the rows above are); they show where the remaining error is not communication.\n"
           "Nothing was fitted to them. For PCIe boxes the floor rests on the topology's assumed\n"
           "busbw, itself not measured for 8x RTX 3090 / 2080 Ti.\n"
           "Memory headroom: \"near capacity\" pairs are those whose multi-GPU prediction carries the\n"
           "near-capacity warning (peak above near_capacity_warn_frac of the GPU's memory) or does not\n"
           "fit (this file's BERT rows have no gradient_as_bucket_view column, so DDP's bucket copy is\n"
           "counted although their apex DDP kept none; see bench/data/README.md). The threshold was set\n"
           "from these rows for a warning; it changes no prediction.\n");
}

/* The table of every pair. */
static void print_pairs(const pair *pairs, size_t n)
{
    printf("\n## Every pair\n\n| id | n | measured %% | predicted %% | diff pp | comm floor %% |\n"
           "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++)
        printf("| %s | %d | %.1f | %.1f | %+.1f | %.1f%s |\n", pairs[i].multi->id, pairs[i].multi->config.num_gpus,
               100 * pairs[i].measured, 100 * pairs[i].predicted, 100 * (pairs[i].predicted - pairs[i].measured),
               100 * pairs[i].comm_floor, below_floor(&pairs[i]) ? " (below)" : "");
}

/* OUT.csv: one row per pair; not EC_OK (with a message) when it cannot be written. */
static int write_csv(ec_ctx *ctx, const char *path, const pair *pairs, size_t n)
{
    ec_csv_writer *w;
    int rc = ec_csv_open(ctx, path, &w);
    if (rc != EC_OK) {
        fprintf(stderr, "bench_scaling: %s\n", ec_ctx_errmsg(ctx));
        return rc;
    }
    const char *head[] = {"id", "single_id", "gpu", "model", "num_gpus", "measured_frac", "predicted_frac", "diff_pp",
                          "comm_floor_frac"};
    rc = ec_csv_row(w, head, 9);
    for (size_t i = 0; i < n && rc == EC_OK; i++) {
        char ng[16], me[32], pr[32], di[32], fl[32];
        snprintf(fl, sizeof fl, "%.4f", pairs[i].comm_floor);
        snprintf(ng, sizeof ng, "%d", pairs[i].multi->config.num_gpus);
        snprintf(me, sizeof me, "%.4f", pairs[i].measured);
        snprintf(pr, sizeof pr, "%.4f", pairs[i].predicted);
        snprintf(di, sizeof di, "%.2f", 100 * (pairs[i].predicted - pairs[i].measured));
        const char *row[] = {pairs[i].multi->id, pairs[i].single->id, pairs[i].multi->config.gpu,
                             pairs[i].multi->config.model, ng, me, pr, di, fl};
        rc = ec_csv_row(w, row, 9);
    }
    if (rc == EC_OK)
        rc = ec_csv_close(w);
    else
        ec_csv_abort(w);
    if (rc != EC_OK)
        fprintf(stderr, "bench_scaling: %s\n", ec_ctx_errmsg(ctx));
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        fprintf(stderr, "usage: bench_scaling RUNS.csv [OUT.csv]\n");
        return argc < 2 ? 2 : 0;
    }
    gsl_set_error_handler_off();
    ec_ctx *ctx;
    ec_runs *runs;
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, getenv("EPOCHCAST_MODELS")) != EC_OK ||
        ec_runs_load(ctx, argv[1], &runs) != EC_OK) {
        fprintf(stderr, "bench_scaling: %s\n", ctx ? ec_ctx_errmsg(ctx) : "out of memory");
        return 1;
    }
    size_t n = 0;
    pair *pairs = calloc(ec_runs_count(runs), sizeof *pairs);
    if (pairs == NULL || make_pairs(ctx, runs, pairs, &n) != 0)
        return 1;
    const char *out_path = argc > 2 ? argv[2] : NULL;
    print_intro(argv[1], out_path);
    print_summary(pairs, n);
    print_notes();
    if (seed000(ctx) != 0 || dp_vs_ddp(ctx) != 0 || hf_p2p_check(ctx) != 0)
        return 1;
    print_pairs(pairs, n);
    int rc = out_path != NULL ? write_csv(ctx, out_path, pairs, n) : EC_OK;
    free(pairs);
    ec_runs_free(runs);
    ec_ctx_free(ctx);
    return rc != EC_OK;
}
