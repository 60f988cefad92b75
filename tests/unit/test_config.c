/*
 * test_config.c: the config vocabulary (core/src/catalog/config.c): defaults, every key set and
 * read back through ec_config_get, every error path with its message, set_mask bits,
 * the nearest-key suggestion and the seed's full uint64 range.
 * Needs no models/ folder: a bare context from ec_ctx_new is enough.
 */
#include "ec_test.h"
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Fixture: a fresh context for each test. */
static int setup(void **state)
{
    *state = ec_test_ctx_bare();
    return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    ec_ctx_free(*state);
    return 0;
}

static size_t key_index(const char *name)
{
    for (size_t i = 0; i < ec_config_key_count(); i++)
        if (strcmp(ec_config_key_name(i), name) == 0)
            return i;
    fail_msg("no key '%s'", name);
    return 0;
}

/* Is key `name` marked as given? */
static int given(const ec_config *cfg, const char *name)
{
    return ec_config_is_set(cfg, (size_t)key_index(name));
}

/* How many keys are marked as given (every bit of every mask word, so a stray bit counts). */
static int given_count(const ec_config *cfg)
{
    int n = 0;
    for (size_t w = 0; w < EC_CONFIG_MASK_WORDS; w++)
        for (uint64_t m = cfg->set_mask[w]; m != 0; m &= m - 1)
            n++;
    return n;
}

static void clear_mask(ec_config *cfg)
{
    memset(cfg->set_mask, 0, sizeof cfg->set_mask);
}

/* Set key=value, expect failure `code` with every substring of `want` in the message,
 * and check cfg is left untouched. */
static void expect_set_error(ec_ctx *ctx, const char *key, const char *value, int code,
                             const char *want1, const char *want2)
{
    ec_config cfg, before;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "batch_per_gpu", "7"), EC_OK);
    before = cfg;
    int rc = ec_config_set(ctx, &cfg, key, value);
    if (rc != code)
        fail_msg("set %s=%s: got %d, want %d (%s)", key, value, rc, code, ec_ctx_errmsg(ctx));
    const char *msg = ec_ctx_errmsg(ctx);
    if (want1 != NULL && strstr(msg, want1) == NULL)
        fail_msg("set %s=%s: message '%s' lacks '%s'", key, value, msg, want1);
    if (want2 != NULL && strstr(msg, want2) == NULL)
        fail_msg("set %s=%s: message '%s' lacks '%s'", key, value, msg, want2);
    assert_memory_equal(&cfg, &before, sizeof cfg);
}

static void expect_get(const ec_config *cfg, const char *key, const char *want)
{
    char buf[EC_PATH_MAX];
    assert_int_equal(ec_config_get(cfg, key, buf, sizeof buf), EC_OK);
    if (strcmp(buf, want) != 0)
        fail_msg("get %s: '%s', want '%s'", key, buf, want);
}

/* ---- the key list ---------------------------------------------------------------------- */

static void test_key_list(void **state)
{
    (void)state;
    /* DESIGN.md section 2, in ec_config's field order. */
    static const char *const order[] = {
        "model", "task", "gpu", "num_gpus", "strategy", "topology", "nodes",
        "network_gbit_per_s", "busbw_gbyte_per_s", "gradient_as_bucket_view", "precision", "batch_per_gpu", "seq_len", "padding", "lengths",
        "image_size", "grad_accum", "optimizer", "checkpointing", "compile", "attention", "num_workers",
        "prefetch_factor", "pin_memory", "persistent_workers", "tokenize", "tokenizer",
        "sample_cpu_s", "host", "dataset_samples", "epochs", "eval_samples", "checkpoints_per_epoch", "data",
        "gpu_step_s", "profile", "seed", "loop_ops_per_sample", "loop_syncs_per_sample", "target_len",
        "sharding", "reduce_dtype", "zero_stage", "zero_reduce", "offload", "tp", "sequence_parallel", "pp", "pp_schedule",
        "pp_chunks", "ep", "cp", "gpus_per_node", "network", "lora_r", "lora_targets", "base_precision",
        "price_per_gpu_hour", "prices", "provider",
        "memory_format", "trainer", "max_grad_norm", "eval_batch", "eval_every_steps", "expandable_segments",
        "torch_version", "kernels", "memory_headroom_gib", "loss_chunks", "optimizer_in_bwd", "loss", "zero_grad",
        "train_tokens", "train_samples", "fsdp_no_sync", "lora_fsdp_wrap", "quant_head", "logits_held",
        "zero_shard_size", "lora_dropout", "packed_seq_len", "pp_split", "mlm_all_positions",
        "cuda_graphs", "overlap_param_gather", "grad_buckets", "fsdp_api", "etp", "zero_flat_copies",
        "moe_a2a_overlap",
        "fp8_recipe", "tp_comm_overlap", "tp_overlap_cfg", "bucket_cap_mb", "activation", "cudnn_version", "clip_impl", "master_weights",
        "attn_mask", "fp8_params", "fp8_act_store", "cp_comm_type", "act_offload_layers",
        "nccl_dp_ctas", "nccl_cp_ctas", "nccl_tp_ctas",
    };
    size_t n = sizeof order / sizeof order[0];
    assert_int_equal(ec_config_key_count(), n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ec_config_key_name(i), order[i]);
        const char *help = ec_config_key_help(i);
        assert_non_null(help);
        assert_true(strlen(help) > 10);
        assert_null(strchr(help, '\n'));
    }
    assert_null(ec_config_key_name(n));
    assert_null(ec_config_key_help(n));
    assert_null(ec_config_key_name((size_t)-1));
    /* help carries the unit where there is one */
    assert_non_null(strstr(ec_config_key_help(key_index("network_gbit_per_s")), "Gbit/s"));
    assert_non_null(strstr(ec_config_key_help(key_index("gpu_step_s")), "seconds"));
    assert_non_null(strstr(ec_config_key_help(key_index("batch_per_gpu")), "samples"));
}

/* ---- defaults ---------------------------------------------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    ec_config cfg;
    memset(&cfg, 0xab, sizeof cfg);
    ec_config_init(&cfg);
    assert_string_equal(cfg.model, "");
    assert_string_equal(cfg.task, "");
    assert_string_equal(cfg.gpu, "");
    assert_int_equal(cfg.num_gpus, 1);
    assert_int_equal(cfg.strategy, EC_STRATEGY_SINGLE);
    assert_string_equal(cfg.topology, "");
    assert_int_equal(cfg.nodes, 1);
    assert_true(cfg.network_bytes_per_s == 0.0);
    assert_int_equal(cfg.precision, EC_PREC_FP32);
    assert_int_equal(cfg.batch_per_gpu, 0);
    assert_int_equal(cfg.seq_len, 0);
    assert_int_equal(cfg.padding, EC_PAD_MAX_LENGTH);
    assert_string_equal(cfg.lengths, "");
    assert_int_equal(cfg.image_size, 0);
    assert_int_equal(cfg.grad_accum, 1);
    assert_int_equal(cfg.optimizer, EC_OPT_ADAMW);
    assert_int_equal(cfg.checkpointing, 0);
    assert_int_equal(cfg.compile, 0);
    assert_int_equal(cfg.num_workers, 0);
    assert_int_equal(cfg.prefetch_factor, 2);
    assert_int_equal(cfg.pin_memory, 0);
    assert_int_equal(cfg.persistent_workers, 0);
    assert_int_equal(cfg.tokenize, EC_TOKENIZE_UPFRONT);
    assert_int_equal(cfg.tokenizer, EC_TOKENIZER_FAST);
    assert_true(cfg.sample_cpu_s < 0);
    assert_string_equal(cfg.host, "");
    assert_true(cfg.dataset_samples == 0.0);
    assert_int_equal(cfg.epochs, 1);
    assert_true(cfg.eval_samples == 0.0);
    assert_int_equal(cfg.data_synthetic, 0);
    assert_true(cfg.gpu_step_s == 0.0);
    assert_string_equal(cfg.profile, "");
    assert_true(cfg.seed == 0x5eed);
    assert_int_equal(given_count(&cfg), 0);

    /* padding bytes too: two inits compare equal byte for byte */
    ec_config again;
    memset(&again, 0x5a, sizeof again);
    ec_config_init(&again);
    assert_memory_equal(&cfg, &again, sizeof cfg);

    /* the text form of the defaults; sample_cpu_s < 0 (derived) reads as "" */
    expect_get(&cfg, "num_gpus", "1");
    expect_get(&cfg, "strategy", "single");
    expect_get(&cfg, "optimizer", "adamw");
    expect_get(&cfg, "data", "real");
    expect_get(&cfg, "sample_cpu_s", "");
    expect_get(&cfg, "network_gbit_per_s", "0");
    expect_get(&cfg, "seed", "24301");
    expect_get(&cfg, "model", "");
    /* defaults outside the settable range read as "" too: unset, derived later */
    expect_get(&cfg, "batch_per_gpu", "");
    expect_get(&cfg, "seq_len", "");
    expect_get(&cfg, "image_size", "");
    expect_get(&cfg, "eval_samples", "0"); /* 0 is settable */
    expect_get(&cfg, "num_workers", "0");

    /* so the text of a fresh config sets back to the same config, no key marked given */
    ec_ctx *ctx = ec_test_ctx_bare();
    ec_config back;
    ec_config_init(&back);
    back.optimizer = EC_OPT_SGD;
    back.seq_len = 77;
    back.sample_cpu_s = 2.0;
    for (size_t i = 0; i < ec_config_key_count(); i++) {
        char buf[EC_PATH_MAX];
        assert_int_equal(ec_config_get(&cfg, ec_config_key_name(i), buf, sizeof buf), EC_OK);
        assert_int_equal(ec_config_set(ctx, &back, ec_config_key_name(i), buf), EC_OK);
        if (buf[0] == '\0')
            assert_false(ec_config_is_set(&back, i));
    }
    clear_mask(&back);
    assert_memory_equal(&cfg, &back, sizeof cfg);
    ec_ctx_free(ctx);
    ec_config_init(NULL); /* no-op */
}

/* ---- every key: set, read back, round trip ------------------------------------------------ */

typedef struct key_case {
    const char *key, *value, *canonical;
} key_case;

/* One case per key, in key order, with high-entropy values. */
static const key_case EVERY_KEY[] = {
    { "model", "bert-base", "bert-base" },
    { "task", "squad", "squad" },
    { "gpu", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB" },
    { "num_gpus", "6", "6" },
    { "strategy", "dp", "dp" },
    { "topology", "pcie-switch", "pcie-switch" },
    { "nodes", "3", "3" },
    { "network_gbit_per_s", "12.5", "12.5" },
    { "busbw_gbyte_per_s", "3.5", "3.5" },
    { "gradient_as_bucket_view", "yes", "1" },
    { "precision", "amp_bf16", "amp_bf16" },
    { "batch_per_gpu", "37", "37" },
    { "seq_len", "384", "384" },
    { "padding", "bucketed", "bucketed" },
    { "lengths", "lognormal(60,0.7)", "lognormal(60,0.7)" },
    { "image_size", "224", "224" },
    { "grad_accum", "13", "13" },
    { "optimizer", "adamw_fused", "adamw_fused" },
    { "checkpointing", "yes", "1" },
    { "compile", "true", "1" },
    { "attention", "EAGER", "eager" },
    { "num_workers", "7", "7" },
    { "prefetch_factor", "5", "5" },
    { "pin_memory", "1", "1" },
    { "persistent_workers", "TRUE", "1" },
    { "tokenize", "on_the_fly", "on_the_fly" },
    { "tokenizer", "python", "python" },
    { "sample_cpu_s", "0.00037", "0.00037" },
    { "host", "epyc-7742", "epyc-7742" },
    { "dataset_samples", "87599", "87599" },
    { "epochs", "3", "3" },
    { "eval_samples", "10570", "10570" },
    { "checkpoints_per_epoch", "2", "2" },
    { "data", "synthetic", "synthetic" },
    { "gpu_step_s", "0.1234", "0.1234" },
    { "profile", "profiles/a100.csv", "profiles/a100.csv" },
    { "seed", "987654321987", "987654321987" },
    { "loop_ops_per_sample", "240", "240" },
    { "loop_syncs_per_sample", "80.5", "80.5" },
    { "target_len", "64", "64" },
    { "sharding", "hybrid_shard", "hybrid_shard" },
    { "reduce_dtype", "BF16", "bf16" },
    { "zero_stage", "3", "3" },
    { "zero_reduce", "all_reduce", "all_reduce" },
    { "offload", "optimizer", "optimizer" },
    { "tp", "4", "4" },
    { "sequence_parallel", "yes", "1" },
    { "pp", "8", "8" },
    { "pp_schedule", "interleaved", "interleaved" },
    { "pp_chunks", "2", "2" },
    { "ep", "8", "8" },
    { "cp", "2", "2" },
    { "gpus_per_node", "4", "4" },
    { "network", "ib-ndr-400", "ib-ndr-400" },
    { "lora_r", "16", "16" },
    { "lora_targets", "all_linear", "all_linear" },
    { "base_precision", "nf4", "nf4" },
    { "price_per_gpu_hour", "2.49", "2.49" },
    { "prices", "my_prices.csv", "my_prices.csv" },
    { "provider", "lambda", "lambda" },
    { "memory_format", "CHANNELS-LAST", "channels_last" },
    { "trainer", "hf", "hf" },
    { "max_grad_norm", "0.5", "0.5" },
    { "eval_batch", "64", "64" },
    { "eval_every_steps", "500", "500" },
    { "expandable_segments", "true", "1" },
    { "torch_version", "1.10", "1.10" },
    { "kernels", "FUSED", "fused" },
    { "memory_headroom_gib", "1.75", "1.75" },
    { "loss_chunks", "8", "8" },
    { "optimizer_in_bwd", "yes", "1" },
    { "loss", "SUM", "sum" },
    { "zero_grad", "never", "never" },
    { "train_tokens", "1e12", "1000000000000" },
    { "train_samples", "250000", "250000" },
    { "fsdp_no_sync", "yes", "1" },
    { "lora_fsdp_wrap", "BLOCK", "block" },
    { "quant_head", "1", "1" },
    { "logits_held", "0", "0" },
    { "zero_shard_size", "8", "8" },
    { "lora_dropout", "0.1", "0.1" },
    { "packed_seq_len", "286", "286" },
    { "pp_split", "embedding_loss", "embedding_loss" },
    { "mlm_all_positions", "1", "1" },
    { "cuda_graphs", "1", "1" },
    { "overlap_param_gather", "1", "1" },
    { "grad_buckets", "5", "5" },
    { "fsdp_api", "FULLY_SHARD", "fully_shard" },
    { "etp", "2", "2" },
    { "zero_flat_copies", "1", "1" },
    { "moe_a2a_overlap", "1", "1" },
    { "fp8_recipe", "CURRENT", "current" },
    { "tp_comm_overlap", "1", "1" },
    { "tp_overlap_cfg", "te_defaults", "te_defaults" },
    { "bucket_cap_mb", "476.837", "476.837" },
    { "activation", "gelu_python", "gelu_python" },
    { "cudnn_version", "9.13.1", "9.13" },
    { "clip_impl", "multi_tensor", "multi_tensor" },
    { "master_weights", "1", "1" },
    { "attn_mask", "EXPLICIT", "explicit" },
    { "fp8_params", "1", "1" },
    { "fp8_act_store", "yes", "1" },
    { "cp_comm_type", "A2A", "a2a" },
    { "act_offload_layers", "40", "40" },
    { "nccl_dp_ctas", "8", "8" },
    { "nccl_cp_ctas", "1", "1" },
    { "nccl_tp_ctas", "16", "16" },
};

/* Names are checked when set (issue 21: gpu=a1000 used to pass and fail only at predict):
 * fixed lists at once, registry names once the context has models; a bare context defers. */
static void test_names_checked_when_set(void **state)
{
    ec_ctx *bare = *state;
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(bare, &cfg, "gpu", "a1000"), EC_OK); /* no models yet: deferred */
    assert_int_equal(ec_config_set(bare, &cfg, "task", "squadv2"), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(bare), "key 'task': unknown task 'squadv2'");
    assert_int_equal(ec_config_set_word(bare, &cfg, "topology=nvswitch"), EC_EINVAL);
    assert_contains(ec_ctx_errmsg(bare), "key 'topology': 'nvswitch' is not one of");
    assert_string_equal(cfg.topology, "");
    ec_ctx *ctx = ec_test_ctx();
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu", "a1000"), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "unknown gpu 'a1000'");
    assert_string_equal(cfg.gpu, "");
    assert_false(ec_config_is_set(&cfg, (size_t)ec_config_key_index("gpu")));
    assert_int_equal(ec_config_set_word(ctx, &cfg, "host=workstaton"), EC_ENOTFOUND);
    assert_contains(ec_ctx_errmsg(ctx), "did you mean 'workstation'");
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu", "Tesla T4"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu", ""), EC_OK); /* back to the default */
    ec_ctx_free(ctx);
}

static void test_every_key_round_trip(void **state)
{
    ec_ctx *ctx = *state;
    size_t n = sizeof EVERY_KEY / sizeof EVERY_KEY[0];
    ec_config cfg, copy;

    assert_int_equal(n, ec_config_key_count());
    ec_config_init(&cfg);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(EVERY_KEY[i].key, ec_config_key_name(i));
        int rc = ec_config_set(ctx, &cfg, EVERY_KEY[i].key, EVERY_KEY[i].value);
        if (rc != EC_OK)
            fail_msg("set %s: %s", EVERY_KEY[i].key, ec_ctx_errmsg(ctx));
        assert_true(ec_config_is_set(&cfg, i));
        expect_get(&cfg, EVERY_KEY[i].key, EVERY_KEY[i].canonical);
    }
    /* one bit per key, nothing else */
    assert_int_equal(given_count(&cfg), (int)n);
    /* by index, the same text as by name */
    for (size_t i = 0; i < n; i++) {
        char buf[EC_PATH_MAX];
        assert_int_equal(ec_config_get_at(&cfg, i, buf, sizeof buf), EC_OK);
        assert_string_equal(buf, EVERY_KEY[i].canonical);
    }

    /* the fields themselves */
    assert_string_equal(cfg.model, "bert-base");
    assert_string_equal(cfg.gpu, "NVIDIA A100-SXM4-80GB");
    assert_int_equal(cfg.num_gpus, 6);
    assert_int_equal(cfg.strategy, EC_STRATEGY_DP);
    assert_int_equal(cfg.nodes, 3);
    /* 12.5 Gbit/s x 1e9 bit / 8 bit per byte = 1.5625e9 bytes/s */
    assert_true(cfg.network_bytes_per_s == 1.5625e9);
    assert_int_equal(cfg.precision, EC_PREC_AMP_BF16);
    assert_int_equal(cfg.batch_per_gpu, 37);
    assert_int_equal(cfg.padding, EC_PAD_BUCKETED);
    assert_int_equal(cfg.optimizer, EC_OPT_ADAMW_FUSED);
    assert_int_equal(cfg.checkpointing, 1);
    assert_int_equal(cfg.compile, 1);
    assert_int_equal(cfg.persistent_workers, 1);
    assert_int_equal(cfg.tokenize, EC_TOKENIZE_ON_THE_FLY);
    assert_int_equal(cfg.tokenizer, EC_TOKENIZER_PYTHON);
    assert_true(cfg.sample_cpu_s == 0.00037);
    assert_true(cfg.dataset_samples == 87599.0);
    assert_int_equal(cfg.data_synthetic, 1);
    assert_true(cfg.gpu_step_s == 0.1234);
    assert_true(cfg.seed == 987654321987ull);

    /* text round trip of the whole config: get every key, set it into a fresh config */
    ec_config_init(&copy);
    for (size_t i = 0; i < n; i++) {
        char buf[EC_PATH_MAX];
        assert_int_equal(ec_config_get(&cfg, ec_config_key_name(i), buf, sizeof buf), EC_OK);
        assert_int_equal(ec_config_set(ctx, &copy, ec_config_key_name(i), buf), EC_OK);
    }
    assert_memory_equal(&cfg, &copy, sizeof cfg);
}

/* Doubles read back bit-exact, including values that have no short decimal form and
 * values written straight into the struct. */
static void test_double_round_trip(void **state)
{
    ec_ctx *ctx = *state;
    static const double values[] = { 1.0 / 3.0, 0.1, 2.5e-7, 3.7e8, 1e15, 0.0, 123456.789,
                                     6.02214076e-5, 4095.999999999999 };
    static const char *const keys[] = { "network_gbit_per_s", "gpu_step_s", "dataset_samples",
                                        "eval_samples", "sample_cpu_s" };
    char buf[EC_PATH_MAX];

    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            ec_config a, b;
            ec_config_init(&a);
            ec_config_init(&b);
            double x = values[v];
            /* Into each key's range: 0, or minpos + x mod (hi - minpos), whole for counts
             * (issue 20: no subnormal or absurdly small rates and times, samples are whole). */
            if (strcmp(keys[k], "network_gbit_per_s") == 0)
                a.network_bytes_per_s = x > 0 ? (1e-3 + fmod(x, 1e6 - 1e-3)) * 1.25e8 : 0;
            else if (strcmp(keys[k], "gpu_step_s") == 0)
                a.gpu_step_s = x > 0 ? 1e-6 + fmod(x, 3600 - 1e-6) : 0;
            else if (strcmp(keys[k], "dataset_samples") == 0)
                a.dataset_samples = x > 0 ? floor(1 + fmod(x, 1e15 - 1)) : 0;
            else if (strcmp(keys[k], "eval_samples") == 0)
                a.eval_samples = x > 0 ? floor(1 + fmod(x, 1e15 - 1)) : 0;
            else
                a.sample_cpu_s = x > 0 ? 1e-9 + fmod(x, 3600 - 1e-9) : 0;
            assert_int_equal(ec_config_get(&a, keys[k], buf, sizeof buf), EC_OK);
            if (ec_config_set(ctx, &b, keys[k], buf) != EC_OK)
                fail_msg("%s=%s: %s", keys[k], buf, ec_ctx_errmsg(ctx));
            clear_mask(&b);
            assert_memory_equal(&a, &b, sizeof a);
        }
    }
    /* shortest text: 0.1 reads back as "0.1", not 0.10000000000000001 */
    ec_config c;
    ec_config_init(&c);
    c.gpu_step_s = 0.1;
    expect_get(&c, "gpu_step_s", "0.1");
    /* 100 Gbit/s = 1.25e10 bytes/s, read back in Gbit/s */
    c.network_bytes_per_s = 1.25e10;
    expect_get(&c, "network_gbit_per_s", "100");
    assert_int_equal(ec_config_set(ctx, &c, "network_gbit_per_s", "400"), EC_OK);
    assert_true(c.network_bytes_per_s == 5e10);
}

static void test_enum_choices(void **state)
{
    ec_ctx *ctx = *state;
    static const struct { const char *key, *value; int want; } cases[] = {
        { "strategy", "single", EC_STRATEGY_SINGLE }, { "strategy", "dp", EC_STRATEGY_DP },
        { "strategy", "ddp", EC_STRATEGY_DDP },
        { "precision", "fp32", EC_PREC_FP32 }, { "precision", "tf32", EC_PREC_TF32 },
        { "precision", "amp_fp16", EC_PREC_AMP_FP16 }, { "precision", "amp_bf16", EC_PREC_AMP_BF16 },
        { "precision", "bf16", EC_PREC_BF16 }, { "precision", "fp16", EC_PREC_FP16 },
        { "precision", "AMP-FP16", EC_PREC_AMP_FP16 }, /* case and - vs _ are forgiven */
        { "padding", "max_length", EC_PAD_MAX_LENGTH }, { "padding", "dynamic", EC_PAD_DYNAMIC },
        { "padding", "bucketed", EC_PAD_BUCKETED },
        { "optimizer", "sgd", EC_OPT_SGD }, { "optimizer", "adam", EC_OPT_ADAM },
        { "optimizer", "adamw", EC_OPT_ADAMW }, { "optimizer", "adamw_foreach", EC_OPT_ADAMW_FOREACH },
        { "optimizer", "adamw_fused", EC_OPT_ADAMW_FUSED }, { "optimizer", "lamb", EC_OPT_LAMB },
        { "tokenize", "upfront", EC_TOKENIZE_UPFRONT }, { "tokenize", "on_the_fly", EC_TOKENIZE_ON_THE_FLY },
        { "tokenize", "on-the-fly", EC_TOKENIZE_ON_THE_FLY },
        { "tokenizer", "fast", EC_TOKENIZER_FAST }, { "tokenizer", "python", EC_TOKENIZER_PYTHON },
        { "data", "real", 0 }, { "data", "synthetic", 1 }, { "data", "on_gpu", EC_DATA_ON_GPU },
        { "optimizer", "adamw_torch", EC_OPT_ADAMW_TORCH }, { "optimizer", "adamw_torch_fused", EC_OPT_ADAMW_TORCH_FUSED },
        { "optimizer", "adamw_hf", EC_OPT_ADAMW_HF }, { "optimizer", "adafactor", EC_OPT_ADAFACTOR },
        { "optimizer", "adamw_8bit", EC_OPT_ADAMW_8BIT }, { "optimizer", "paged_adamw_8bit", EC_OPT_PAGED_ADAMW_8BIT },
        { "optimizer", "sgd_momentum", EC_OPT_SGD_MOMENTUM }, { "optimizer", "none", EC_OPT_NONE },
        { "optimizer", "paged_adamw", EC_OPT_PAGED_ADAMW },
        /* compile was a bool: 0/1 and the bool spellings still work, besides the modes */
        { "compile", "0", EC_COMPILE_OFF }, { "compile", "1", EC_COMPILE_DEFAULT },
        { "compile", "true", EC_COMPILE_DEFAULT }, { "compile", "no", EC_COMPILE_OFF },
        { "compile", "reduce-overhead", EC_COMPILE_REDUCE_OVERHEAD },
        { "compile", "max_autotune", EC_COMPILE_MAX_AUTOTUNE },
        { "compile", "max-autotune-no-cudagraphs", EC_COMPILE_MAX_AUTOTUNE_NO_CUDAGRAPHS },
        { "memory_format", "channels_last", EC_MEMFMT_CHANNELS_LAST }, { "memory_format", "contiguous", EC_MEMFMT_CONTIGUOUS },
        { "trainer", "plain", EC_TRAINER_PLAIN }, { "trainer", "hf", EC_TRAINER_HF },
        { "trainer", "lightning", EC_TRAINER_LIGHTNING },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_config cfg;
        int got = -1;
        ec_config_init(&cfg);
        /* start from a non-default so that the write is seen */
        cfg.strategy = EC_STRATEGY_DDP;
        cfg.precision = EC_PREC_FP16;
        cfg.padding = EC_PAD_BUCKETED;
        cfg.optimizer = EC_OPT_LAMB;
        cfg.tokenize = EC_TOKENIZE_ON_THE_FLY;
        cfg.tokenizer = EC_TOKENIZER_PYTHON;
        cfg.data_synthetic = 1;
        cfg.compile = EC_COMPILE_MAX_AUTOTUNE;
        cfg.memory_format = EC_MEMFMT_CHANNELS_LAST;
        cfg.trainer = EC_TRAINER_LIGHTNING;
        if (strcmp(cases[i].key, "optimizer") == 0 && cases[i].want == EC_OPT_LAMB)
            cfg.optimizer = EC_OPT_SGD;
        assert_int_equal(ec_config_set(ctx, &cfg, cases[i].key, cases[i].value), EC_OK);
        if (strcmp(cases[i].key, "strategy") == 0) got = (int)cfg.strategy;
        if (strcmp(cases[i].key, "precision") == 0) got = (int)cfg.precision;
        if (strcmp(cases[i].key, "padding") == 0) got = (int)cfg.padding;
        if (strcmp(cases[i].key, "optimizer") == 0) got = (int)cfg.optimizer;
        if (strcmp(cases[i].key, "tokenize") == 0) got = (int)cfg.tokenize;
        if (strcmp(cases[i].key, "tokenizer") == 0) got = (int)cfg.tokenizer;
        if (strcmp(cases[i].key, "data") == 0) got = cfg.data_synthetic;
        if (strcmp(cases[i].key, "compile") == 0) got = cfg.compile;
        if (strcmp(cases[i].key, "memory_format") == 0) got = (int)cfg.memory_format;
        if (strcmp(cases[i].key, "trainer") == 0) got = (int)cfg.trainer;
        if (got != cases[i].want)
            fail_msg("%s=%s: got %d, want %d", cases[i].key, cases[i].value, got, cases[i].want);
    }
    /* read back by the canonical name */
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "precision", "Amp-Fp16"), EC_OK);
    expect_get(&cfg, "precision", "amp_fp16");
}

static void test_bool_spellings(void **state)
{
    ec_ctx *ctx = *state;
    static const struct { const char *value; int want; } cases[] = {
        { "0", 0 }, { "1", 1 }, { "true", 1 }, { "false", 0 }, { "yes", 1 }, { "no", 0 },
        { "True", 1 }, { "NO", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_config cfg;
        ec_config_init(&cfg);
        cfg.pin_memory = !cases[i].want;
        assert_int_equal(ec_config_set(ctx, &cfg, "pin_memory", cases[i].value), EC_OK);
        assert_int_equal(cfg.pin_memory, cases[i].want);
        expect_get(&cfg, "pin_memory", cases[i].want ? "1" : "0");
    }
}

/* ---- ranges ------------------------------------------------------------------------------ */

static void test_int_ranges(void **state)
{
    ec_ctx *ctx = *state;
    static const struct { const char *key; const char *lo, *hi, *below, *above, *range; } cases[] = {
        { "num_gpus", "1", "65536", "0", "65537", "[1, 65536]" },
        { "nodes", "1", "4096", "0", "4097", "[1, 4096]" },
        { "batch_per_gpu", "1", "1048576", "0", "1048577", "[1, 1048576]" },
        { "seq_len", "1", "1048576", "0", "1048577", "[1, 1048576]" },
        { "image_size", "1", "65536", "0", "65537", "[1, 65536]" },
        { "grad_accum", "1", "1048576", "0", "1048577", "[1, 1048576]" },
        { "num_workers", "0", "1024", "-1", "1025", "[0, 1024]" },
        { "prefetch_factor", "1", "1024", "0", "1025", "[1, 1024]" },
        { "epochs", "1", "1000000", "0", "1000001", "[1, 1000000]" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ec_config cfg;
        ec_config_init(&cfg);
        assert_int_equal(ec_config_set(ctx, &cfg, cases[i].key, cases[i].lo), EC_OK);
        expect_get(&cfg, cases[i].key, cases[i].lo);
        assert_int_equal(ec_config_set(ctx, &cfg, cases[i].key, cases[i].hi), EC_OK);
        expect_get(&cfg, cases[i].key, cases[i].hi);
        expect_set_error(ctx, cases[i].key, cases[i].below, EC_EINVAL, "is out of range",
                         cases[i].range);
        expect_set_error(ctx, cases[i].key, cases[i].above, EC_EINVAL, cases[i].key,
                         cases[i].range);
    }
}

static void test_double_ranges(void **state)
{
    ec_ctx *ctx = *state;
    ec_config cfg;
    ec_config_init(&cfg);
    /* inclusive bounds */
    assert_int_equal(ec_config_set(ctx, &cfg, "dataset_samples", "1e15"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "eval_samples", "0"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "sample_cpu_s", "3600"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu_step_s", "0"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "network_gbit_per_s", "1e6"), EC_OK);
    /* 1e6 Gbit/s = 1e15 bit/s = 1.25e14 bytes/s */
    assert_true(cfg.network_bytes_per_s == 1.25e14);

    expect_set_error(ctx, "dataset_samples", "1.1e15", EC_EINVAL,
                     "key 'dataset_samples': '1.1e15' is out of range", "0 or [1, 1e+15]");
    expect_set_error(ctx, "eval_samples", "-3", EC_EINVAL, "key 'eval_samples'", "out of range");
    /* a negative sample_cpu_s is only the default, never given */
    expect_set_error(ctx, "sample_cpu_s", "-1", EC_EINVAL,
                     "key 'sample_cpu_s': '-1' is out of range: 0 or [1e-09, 3600]", NULL);
    expect_set_error(ctx, "gpu_step_s", "3600.5", EC_EINVAL, "key 'gpu_step_s'", "0 or [1e-06, 3600]");
    expect_set_error(ctx, "network_gbit_per_s", "-0.5", EC_EINVAL, "key 'network_gbit_per_s'",
                     "0 or [0.001, 1e+06]");
    /* Issue 20, defect 3: rates and times are 0 (their default) or above a physical minimum,
     * which rules out subnormals (1e-320 Gbit/s made every step NaN), and sample counts are
     * whole (dataset_samples=0.5 was accepted). */
    expect_set_error(ctx, "busbw_gbyte_per_s", "1e-320", EC_EINVAL, "key 'busbw_gbyte_per_s'", "0 or [0.001, 100000]");
    expect_set_error(ctx, "busbw_gbyte_per_s", "1e-300", EC_EINVAL, "key 'busbw_gbyte_per_s'", "out of range");
    expect_set_error(ctx, "network_gbit_per_s", "1e-320", EC_EINVAL, "key 'network_gbit_per_s'", "out of range");
    expect_set_error(ctx, "gpu_step_s", "1e-9", EC_EINVAL, "key 'gpu_step_s'", "out of range");
    expect_set_error(ctx, "sample_cpu_s", "4.9e-324", EC_EINVAL, "key 'sample_cpu_s'", "out of range");
    expect_set_error(ctx, "checkpoints_per_epoch", "1e-310", EC_EINVAL, "key 'checkpoints_per_epoch'", "out of range");
    expect_set_error(ctx, "loop_ops_per_sample", "1e-310", EC_EINVAL, "key 'loop_ops_per_sample'", "out of range");
    expect_set_error(ctx, "dataset_samples", "0.5", EC_EINVAL, "key 'dataset_samples'", "out of range");
    expect_set_error(ctx, "dataset_samples", "1000.5", EC_EINVAL, "key 'dataset_samples'", "whole number");
    expect_set_error(ctx, "eval_samples", "2.25", EC_EINVAL, "key 'eval_samples'", "whole number");
    assert_int_equal(ec_config_set(ctx, &cfg, "busbw_gbyte_per_s", "0.001"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "busbw_gbyte_per_s", "0"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu_step_s", "1e-6"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "sample_cpu_s", "0"), EC_OK);
    expect_set_error(ctx, "gpu_step_s", "fast", EC_EINVAL,
                     "key 'gpu_step_s': 'fast' is not a number", NULL);
    expect_set_error(ctx, "gpu_step_s", "nan", EC_EINVAL, "'nan' is not a number", NULL);
    expect_set_error(ctx, "dataset_samples", "inf", EC_EINVAL, "'inf' is not a number", NULL);
    expect_set_error(ctx, "dataset_samples", "1e999", EC_EINVAL, "is not a number", NULL);
    expect_set_error(ctx, "gpu_step_s", "0.5s", EC_EINVAL, "'0.5s' is not a number", NULL);
    /* one number syntax for keys and files: no hexadecimal floats, no leading blanks */
    expect_set_error(ctx, "sample_cpu_s", "0x1p-3", EC_EINVAL, "'0x1p-3' is not a number", NULL);
    expect_set_error(ctx, "sample_cpu_s", " 0.5", EC_EINVAL, "is not a number", NULL);
    expect_set_error(ctx, "gpu_step_s", " 0.5", EC_EINVAL, "is not a number", NULL);
}

/* ---- error paths ----------------------------------------------------------------------------- */

/* Releases (torch_version, cudnn_version) are "major.minor" with a whole-number minor, kept as
 * EC_RELEASE: 2.10 is not 2.1 (as the decimal 2.10 would be) and comes after 2.9. */
static void test_release_keys(void **state)
{
    ec_ctx *ctx = *state;
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "torch_version", "2.10"), EC_OK);
    assert_int_equal(cfg.torch_release, EC_RELEASE(2, 10));
    expect_get(&cfg, "torch_version", "2.10");
    assert_int_equal(ec_config_set(ctx, &cfg, "torch_version", "2.1"), EC_OK);
    assert_int_equal(cfg.torch_release, EC_RELEASE(2, 1));
    assert_true(EC_RELEASE(2, 9) < EC_RELEASE(2, 10));
    assert_int_equal(ec_config_set(ctx, &cfg, "torch_version", "2"), EC_OK);
    expect_get(&cfg, "torch_version", "2.0");
    assert_int_equal(ec_config_set(ctx, &cfg, "cudnn_version", "9.10.2"), EC_OK);
    assert_int_equal(cfg.cudnn_release, EC_RELEASE(9, 10));
    expect_set_error(ctx, "torch_version", "2.x", EC_EINVAL,
                     "key 'torch_version': '2.x' is not a release (major.minor, e.g. 2.10 or 9.13.1)", NULL);
    static const char *const not_releases[] = {"2.", ".5", "2.1.3.4", "2.1000", "-2.1", "2..1", "2.1 "};
    for (size_t i = 0; i < sizeof not_releases / sizeof not_releases[0]; i++)
        expect_set_error(ctx, "torch_version", not_releases[i], EC_EINVAL, "is not a release", NULL);
    expect_set_error(ctx, "cudnn_version", "6.5", EC_EINVAL, "key 'cudnn_version': '6.5' is out of range [7.0, 99.999]",
                     NULL);
    assert_int_equal(ec_config_set(ctx, &cfg, "cudnn_version", ""), EC_OK); /* back to the default */
    assert_int_equal(cfg.cudnn_release, 0);
    expect_get(&cfg, "cudnn_version", "");
}

static void test_unknown_key(void **state)
{
    ec_ctx *ctx = *state;
    expect_set_error(ctx, "bach_per_gpu", "16", EC_ENOTFOUND,
                     "unknown key 'bach_per_gpu' (did you mean 'batch_per_gpu'?)", NULL);
    expect_set_error(ctx, "precison", "fp32", EC_ENOTFOUND, "(did you mean 'precision'?)", NULL);
    expect_set_error(ctx, "num_worker", "4", EC_ENOTFOUND, "did you mean 'num_workers'", NULL);
    /* keys are exact: no case folding */
    expect_set_error(ctx, "Model", "gpt2", EC_ENOTFOUND, "unknown key 'Model'", "'model'");
    /* the core field name is not the boundary spelling */
    expect_set_error(ctx, "network_bytes_per_s", "1e9", EC_ENOTFOUND,
                     "unknown key 'network_bytes_per_s'", NULL);
    expect_set_error(ctx, "data_synthetic", "1", EC_ENOTFOUND, "unknown key", NULL);
    expect_set_error(ctx, "", "1", EC_ENOTFOUND, "unknown key ''", NULL);
}

static void test_bad_values(void **state)
{
    ec_ctx *ctx = *state;
    expect_set_error(ctx, "batch_per_gpu", "-4", EC_EINVAL,
                     "key 'batch_per_gpu': '-4' is out of range [1, 1048576]", NULL);
    expect_set_error(ctx, "batch_per_gpu", "sixteen", EC_EINVAL,
                     "key 'batch_per_gpu': 'sixteen' is not a number", NULL);
    expect_set_error(ctx, "batch_per_gpu", "16.5", EC_EINVAL,
                     "key 'batch_per_gpu': '16.5' is not an integer", NULL);
    expect_set_error(ctx, "batch_per_gpu", "0x10", EC_EINVAL, "key 'batch_per_gpu': '0x10' is not",
                     NULL);
    /* beyond long: still reported as a range error, not a parse error */
    expect_set_error(ctx, "batch_per_gpu", "99999999999999999999999", EC_EINVAL,
                     "is out of range [1, 1048576]", NULL);
    expect_set_error(ctx, "num_gpus", "4294967297", EC_EINVAL, "is out of range [1, 65536]", NULL);
    expect_set_error(ctx, "precision", "fp8", EC_EINVAL,
                     "key 'precision': 'fp8' is not one of fp32, tf32, amp_fp16, amp_bf16, bf16, fp16, amp_fp8",
                     NULL);
    expect_set_error(ctx, "strategy", "horovod", EC_EINVAL,
                     "key 'strategy': 'horovod' is not one of single, dp, ddp, fsdp, zero", NULL);
    expect_set_error(ctx, "checkpointing", "some", EC_EINVAL,
                     "key 'checkpointing': 'some' is not one of 0, 1, selective", NULL);
    expect_set_error(ctx, "padding", "longest", EC_EINVAL,
                     "is not one of max_length, dynamic, bucketed", NULL);
    expect_set_error(ctx, "optimizer", "adagrad", EC_EINVAL,
                     "is not one of sgd, adam, adamw, adamw_foreach, adamw_fused, lamb, adamw_torch, "
                     "adamw_torch_fused, adamw_hf, adafactor, adamw_8bit, paged_adamw_8bit, sgd_momentum, none, "
                     "paged_adamw",
                     NULL);
    expect_set_error(ctx, "compile", "sometimes", EC_EINVAL,
                     "is not one of 0, 1, reduce-overhead, max-autotune, max-autotune-no-cudagraphs", NULL);
    expect_set_error(ctx, "trainer", "keras", EC_EINVAL, "is not one of plain, hf, lightning", NULL);
    expect_set_error(ctx, "memory_format", "nchw", EC_EINVAL, "is not one of contiguous, channels_last", NULL);
    expect_set_error(ctx, "max_grad_norm", "-1", EC_EINVAL, "out of range", NULL);
    expect_set_error(ctx, "tokenize", "lazy", EC_EINVAL, "is not one of upfront, on_the_fly", NULL);
    expect_set_error(ctx, "tokenizer", "rust", EC_EINVAL, "is not one of fast, python", NULL);
    expect_set_error(ctx, "zero_reduce", "gather", EC_EINVAL,
                     "key 'zero_reduce': 'gather' is not one of reduce_scatter, all_reduce", NULL);
    expect_set_error(ctx, "zero_shard_size", "0", EC_EINVAL, "zero_shard_size", "out of range");
    expect_set_error(ctx, "zero_shard_size", "node", EC_EINVAL, "zero_shard_size", NULL);
    expect_set_error(ctx, "lora_dropout", "1", EC_EINVAL, "lora_dropout", "out of range");
    expect_set_error(ctx, "packed_seq_len", "0", EC_EINVAL, "packed_seq_len", "out of range");
    expect_set_error(ctx, "pp_split", "embeddings", EC_EINVAL, "pp_split", "embedding_loss");
    expect_set_error(ctx, "data", "fake", EC_EINVAL,
                     "key 'data': 'fake' is not one of real, synthetic, on_gpu", NULL);
    /* a prefix of a choice is not the choice */
    expect_set_error(ctx, "optimizer", "adamw_f", EC_EINVAL, "is not one of", NULL);
    expect_set_error(ctx, "pin_memory", "2", EC_EINVAL,
                     "key 'pin_memory': '2' is not one of 0, 1, true, false, yes, no", NULL);
    expect_set_error(ctx, "compile", "maybe", EC_EINVAL, "key 'compile'", "'maybe'");
}

static void test_string_too_long(void **state)
{
    ec_ctx *ctx = *state;
    char name[EC_NAME_MAX + 1], path[EC_PATH_MAX + 1];
    ec_config cfg;

    /* EC_NAME_MAX - 1 characters fit, EC_NAME_MAX do not */
    memset(name, 'g', sizeof name);
    name[EC_NAME_MAX - 1] = '\0';
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "gpu", name), EC_OK);
    assert_int_equal(strlen(cfg.gpu), EC_NAME_MAX - 1);
    expect_get(&cfg, "gpu", name);
    name[EC_NAME_MAX - 1] = 'g';
    name[EC_NAME_MAX] = '\0';
    expect_set_error(ctx, "gpu", name, EC_EINVAL, "key 'gpu': value is too long",
                     "(64 bytes, at most 63)");
    expect_set_error(ctx, "host", name, EC_EINVAL, "key 'host'", "too long");

    memset(path, 'p', sizeof path);
    path[EC_PATH_MAX - 1] = '\0';
    assert_int_equal(ec_config_set(ctx, &cfg, "model", path), EC_OK); /* a preset id or a config.json path */
    assert_int_equal(ec_config_set(ctx, &cfg, "profile", path), EC_OK);
    expect_get(&cfg, "profile", path);
    path[EC_PATH_MAX - 1] = 'p';
    path[EC_PATH_MAX] = '\0';
    expect_set_error(ctx, "lengths", path, EC_EINVAL, "key 'lengths'", "at most 511");
    expect_set_error(ctx, "profile", path, EC_EINVAL, "key 'profile'", "too long");
}

static void test_misuse(void **state)
{
    ec_ctx *ctx = *state;
    ec_config cfg;
    char buf[8];

    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(NULL, &cfg, "model", "gpt2"), EC_EMISUSE);
    assert_int_equal(ec_config_set(ctx, NULL, "model", "gpt2"), EC_EMISUSE);
    assert_int_equal(ec_config_set(ctx, &cfg, NULL, "gpt2"), EC_EMISUSE);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", NULL), EC_EMISUSE);
    assert_int_equal(ec_config_set_word(NULL, &cfg, "model=gpt2"), EC_EMISUSE);
    assert_int_equal(ec_config_set_word(ctx, &cfg, NULL), EC_EMISUSE);
    assert_int_equal(ec_config_get(NULL, "model", buf, sizeof buf), EC_EMISUSE);
    assert_int_equal(ec_config_get(&cfg, NULL, buf, sizeof buf), EC_EMISUSE);
    assert_int_equal(ec_config_get(&cfg, "model", NULL, 8), EC_EMISUSE);
    assert_int_equal(ec_config_get(&cfg, "model", buf, 0), EC_EMISUSE);
    assert_int_equal(given_count(&cfg), 0);
}

static void test_get_errors(void **state)
{
    (void)state;
    ec_config cfg;
    char buf[EC_PATH_MAX], small[4];

    ec_config_init(&cfg);
    assert_int_equal(ec_config_get(&cfg, "bach_per_gpu", buf, sizeof buf), EC_ENOTFOUND);
    assert_string_equal(buf, "");
    assert_int_equal(ec_config_get_at(&cfg, ec_config_key_count(), buf, sizeof buf), EC_ENOTFOUND);
    assert_string_equal(buf, "");
    assert_int_equal(ec_config_get_at(NULL, 0, buf, sizeof buf), EC_EMISUSE);
    /* whole doubles print as integers, "-0" as "%.0f" prints it */
    cfg.dataset_samples = -0.0;
    assert_int_equal(ec_config_get(&cfg, "dataset_samples", buf, sizeof buf), EC_OK);
    assert_string_equal(buf, "-0");
    cfg.dataset_samples = 87599;
    assert_int_equal(ec_config_get(&cfg, "dataset_samples", buf, sizeof buf), EC_OK);
    assert_string_equal(buf, "87599");
    ec_config_init(&cfg);
    /* truncated output is an error, the buffer still NUL-terminated */
    assert_int_equal(ec_config_get(&cfg, "optimizer", small, sizeof small), EC_EINVAL);
    assert_string_equal(small, "ada");
    assert_int_equal(ec_config_get(&cfg, "num_gpus", small, sizeof small), EC_OK);
    assert_string_equal(small, "1");
    /* an enum field written directly with a value outside the enum */
    cfg.precision = (ec_precision)17;
    assert_int_equal(ec_config_get(&cfg, "precision", buf, sizeof buf), EC_EINVAL);
    cfg.optimizer = (ec_optimizer)-1;
    assert_int_equal(ec_config_get(&cfg, "optimizer", buf, sizeof buf), EC_EINVAL);
    /* a string field filled without its NUL is read to its size and no further */
    ec_config_init(&cfg);
    memset(cfg.gpu, 'm', sizeof cfg.gpu);
    assert_int_equal(ec_config_get(&cfg, "gpu", buf, sizeof buf), EC_OK);
    assert_int_equal(strlen(buf), EC_NAME_MAX);
}

/* ---- set_word, set_mask, empty values -------------------------------------------------------- */

static void test_set_word(void **state)
{
    ec_ctx *ctx = *state;
    ec_config cfg, before;

    ec_config_init(&cfg);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "batch_per_gpu=16"), EC_OK);
    assert_int_equal(cfg.batch_per_gpu, 16);
    assert_true(given(&cfg, "batch_per_gpu") && given_count(&cfg) == 1);
    /* split at the first '=': the value may hold more */
    assert_int_equal(ec_config_set_word(ctx, &cfg, "lengths=data/len.csv?x=1"), EC_OK);
    assert_string_equal(cfg.lengths, "data/len.csv?x=1");
    assert_int_equal(ec_config_set_word(ctx, &cfg, "precision=tf32"), EC_OK);
    assert_int_equal(cfg.precision, EC_PREC_TF32);

    before = cfg;
    assert_int_equal(ec_config_set_word(ctx, &cfg, "batch_per_gpu"), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "'batch_per_gpu' is not key=value"));
    assert_int_equal(ec_config_set_word(ctx, &cfg, "bach_per_gpu=16"), EC_ENOTFOUND);
    assert_non_null(strstr(ec_ctx_errmsg(ctx),
                           "unknown key 'bach_per_gpu' (did you mean 'batch_per_gpu'?)"));
    assert_int_equal(ec_config_set_word(ctx, &cfg, "=16"), EC_ENOTFOUND);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "unknown key ''"));
    assert_int_equal(ec_config_set_word(ctx, &cfg, "num_gpus=0"), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "key 'num_gpus': '0' is out of range [1, 65536]"));
    /* a very long unknown key is cut short in the message, not overflowed */
    char word[300];
    memset(word, 'k', sizeof word);
    strcpy(word + 280, "=1");
    assert_int_equal(ec_config_set_word(ctx, &cfg, word), EC_ENOTFOUND);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "unknown key 'kkk"));
    assert_memory_equal(&cfg, &before, sizeof cfg);
}

static void test_set_mask(void **state)
{
    ec_ctx *ctx = *state;
    ec_config cfg;

    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "num_gpus", "4"), EC_OK);
    assert_true(given(&cfg, "num_gpus") && given_count(&cfg) == 1);
    /* strategy untouched: ec_predict may turn single into ddp (bit clear) */
    assert_false(given(&cfg, "strategy"));
    /* setting a key to its default value still marks it as given */
    assert_int_equal(ec_config_set(ctx, &cfg, "strategy", "single"), EC_OK);
    assert_true(given(&cfg, "num_gpus") && given(&cfg, "strategy") && given_count(&cfg) == 2);
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", "1"), EC_OK);
    assert_true(ec_config_is_set(&cfg, (size_t)ec_config_key_index("seed")));
    assert_int_equal(ec_config_key_index("no_such_key"), -1);
    assert_false(ec_config_is_set(&cfg, ec_config_key_count())); /* past the last key */
    /* a failed set leaves the mask alone */
    assert_int_equal(ec_config_set(ctx, &cfg, "nodes", "0"), EC_EINVAL);
    assert_false(given(&cfg, "nodes"));

    /* an empty value means the default, as an empty CSV cell does: value reset, bit cleared */
    assert_int_equal(ec_config_set(ctx, &cfg, "num_gpus", ""), EC_OK);
    assert_int_equal(cfg.num_gpus, 1);
    assert_false(given(&cfg, "num_gpus"));
    assert_int_equal(ec_config_set(ctx, &cfg, "optimizer", "sgd"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "optimizer", ""), EC_OK);
    assert_int_equal(cfg.optimizer, EC_OPT_ADAMW);
    assert_int_equal(ec_config_set(ctx, &cfg, "sample_cpu_s", "0.002"), EC_OK);
    assert_int_equal(ec_config_set(ctx, &cfg, "sample_cpu_s", ""), EC_OK);
    assert_true(cfg.sample_cpu_s < 0);
    assert_int_equal(ec_config_set(ctx, &cfg, "model", "gpt2"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx, &cfg, "model="), EC_OK);
    assert_string_equal(cfg.model, "");
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", ""), EC_OK);
    assert_true(cfg.seed == 0x5eed);
    assert_true(given(&cfg, "strategy") && given_count(&cfg) == 1);
}

/* The keys a prediction asks "given?" by index (eci_key): each resolves to its key in the
 * table and reads the set_mask bit of that key, not of another. */
static void test_given_by_index(void **state)
{
    ec_ctx *ctx = *state;
    static const char *const name[ECI_N_KEYS][2] = {
        [ECI_KEY_STRATEGY] = {"strategy", "ddp"}, [ECI_KEY_NODES] = {"nodes", "2"},
        [ECI_KEY_EPOCHS] = {"epochs", "2"}, [ECI_KEY_PREFETCH_FACTOR] = {"prefetch_factor", "4"},
        [ECI_KEY_TOKENIZE] = {"tokenize", "on_the_fly"}, [ECI_KEY_TOKENIZER] = {"tokenizer", "python"},
        [ECI_KEY_ATTENTION] = {"attention", "eager"}};
    eci_config_keys_init(ctx); /* as ec_ctx_load_models does: this context has no models */
    for (int k = 0; k < ECI_N_KEYS; k++) {
        ec_config cfg;
        ec_config_init(&cfg);
        assert_int_equal(ctx->key_index[k], ec_config_key_index(name[k][0]));
        assert_false(eci_config_given(ctx, &cfg, (eci_key)k));
        assert_int_equal(ec_config_set(ctx, &cfg, name[k][0], name[k][1]), EC_OK);
        for (int j = 0; j < ECI_N_KEYS; j++)
            assert_int_equal(eci_config_given(ctx, &cfg, (eci_key)j), j == k);
    }
}

/* ---- seed ------------------------------------------------------------------------------------ */

static void test_seed_full_range(void **state)
{
    ec_ctx *ctx = *state;
    ec_config cfg;

    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", "0"), EC_OK);
    assert_true(cfg.seed == 0);
    expect_get(&cfg, "seed", "0");
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", "18446744073709551615"), EC_OK);
    assert_true(cfg.seed == UINT64_MAX);
    expect_get(&cfg, "seed", "18446744073709551615");
    /* above 2^63 (where a signed parse would fail) and above 2^53 (where a double would round) */
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", "9223372036854775809"), EC_OK);
    assert_true(cfg.seed == 9223372036854775809ull);
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", "9007199254740993"), EC_OK);
    assert_true(cfg.seed == 9007199254740993ull);
    expect_get(&cfg, "seed", "9007199254740993");
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", "0x5eed"), EC_OK);
    assert_true(cfg.seed == 24301);
    assert_int_equal(ec_config_set(ctx, &cfg, "seed", "0xFFFFFFFFFFFFFFFF"), EC_OK);
    assert_true(cfg.seed == UINT64_MAX);

    expect_set_error(ctx, "seed", "18446744073709551616", EC_EINVAL,
                     "key 'seed': '18446744073709551616' is out of range [0, 18446744073709551615]",
                     NULL);
    expect_set_error(ctx, "seed", "0x10000000000000000", EC_EINVAL, "is out of range", NULL);
    /* strtoull would negate these or skip the blank; we do not */
    expect_set_error(ctx, "seed", "-1", EC_EINVAL, "key 'seed': '-1' is not a number", NULL);
    expect_set_error(ctx, "seed", "+1", EC_EINVAL, "is not a number", NULL);
    expect_set_error(ctx, "seed", " 1", EC_EINVAL, "is not a number", NULL);
    expect_set_error(ctx, "seed", "12ab", EC_EINVAL, "'12ab' is not a number", NULL);
    expect_set_error(ctx, "seed", "0x", EC_EINVAL, "is not a number", NULL);
    expect_set_error(ctx, "seed", "0x0x10", EC_EINVAL, "is not a number", NULL);
    expect_set_error(ctx, "seed", "1.5", EC_EINVAL, "is not a number", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_list),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test_setup_teardown(test_every_key_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_checked_when_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_double_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enum_choices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bool_spellings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_double_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_too_long, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misuse, setup, teardown),
        cmocka_unit_test(test_get_errors),
        cmocka_unit_test_setup_teardown(test_set_word, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_mask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_given_by_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seed_full_range, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
