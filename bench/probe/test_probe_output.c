/*
 * test_probe_output.c: the CSV side of epochcast-probe (probe_output.c), without a GPU.  A
 * made-up measurement of a known GPU and of an unknown one is written; the profile row has
 * the columns of models/gpus.csv, carries the measured values (efficiency = measured best
 * large GEMM / published peak), and drops into a models/ folder that ec_predict then uses.
 */
#include "ec_test.h"
#include "internal.h"
#include "probe_output.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ecp_gemm_point points[] = {
    {1024, 1024, 1024, "fp16", 1.1e14}, {4096, 4096, 4096, "fp16", 2.4e14}, {8192, 8192, 8192, "fp16", 2.5e14},
    {4096, 4096, 4096, "tf32", 1.2e14}, {4096, 4096, 4096, "fp32", 1.85e13}, {512, 512, 512, "bf16", 2e13},
};

static ecp_result measured(const char *name, double cc)
{
    ecp_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.compute_capability = cc;
    r.sm_count = 108;
    r.memory_bytes = 85899345920.0;
    r.l2_bytes = 41943040.0;
    r.n_gpus = 1;
    r.h2d_pinned_bytes_per_s = 2.45e10;
    r.h2d_pageable_bytes_per_s = 1.1e10;
    r.d2d_copy_bytes_per_s = 1.6e12;
    r.elementwise_bytes_per_s = 1.75e12;
    r.kernel_floor_s = 2.2e-6;
    r.launch_host_s = 4e-6;
    r.gemm = points;
    r.n_gemm = sizeof points / sizeof points[0];
    return r;
}

/* The models/ tables into dir, without profile.csv. */
static void copy_models(const char *dir)
{
    static const char *const files[] = {"constants.csv", "gpus.csv", "hosts.csv", "interconnects.csv", "networks.csv",
                                        "attention.csv", "membw.csv", "l2.csv", "gemm.csv",
                                        "gemm_shapes.csv", "sdpa_backends.csv", "conv_algos.csv",
        "nccl_tuning.csv", "tp_overlap.csv"};
    const char *models = getenv("EPOCHCAST_MODELS");
    assert_non_null(models);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *src = ec_test_path(models, files[i]), *dst = ec_test_path(dir, files[i]);
        size_t len = 0;
        char *text = ec_test_read_file(src, &len);
        assert_non_null(text);
        ec_test_write_file(dst, text, len);
        free(text);
        free(src);
        free(dst);
    }
    ec_test_link_networks(dir);
}

static double column(const eci_table *t, const char *name)
{
    int c = eci_table_col(t, name);
    assert_true(c >= 0);
    double v = 0;
    assert_int_equal(eci_parse_double(eci_table_cell(t, 0, c), &v), 0);
    return v;
}

static void test_known_gpu(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *gpus = ec_test_path(getenv("EPOCHCAST_MODELS"), "gpus.csv");
    ecp_result r = measured("NVIDIA A100-SXM4-80GB", 8.0);
    assert_int_equal(ecp_write(ctx, &r, gpus, dir), EC_OK);

    char *prof = ec_test_path(dir, "gpu_profile.csv");
    eci_table *t, *all;
    assert_int_equal(eci_table_load(ctx, prof, &t), EC_OK);
    assert_int_equal(eci_table_load(ctx, gpus, &all), EC_OK);
    assert_int_equal(eci_table_rows(t), 1);
    assert_int_equal(eci_table_cols(t), eci_table_cols(all)); /* the schema of models/gpus.csv */
    for (size_t c = 0; c < eci_table_cols(t); c++)
        assert_string_equal(eci_table_header(t, c), eci_table_header(all, c));
    assert_string_equal(eci_table_cell(t, 0, eci_table_col(t, "id")), "a100-sxm4-80gb-probed");
    /* efficiencies: best large-GEMM rate (m n k >= 4096^3) over the published peak */
    size_t idx;
    ec_gpu_info info;
    assert_int_equal(ec_gpu_find(ctx, "a100-sxm4-80gb", &idx), EC_OK);
    assert_int_equal(ec_gpu_get(ctx, idx, &info), EC_OK);
    assert_rel(column(t, "gemm_eff_fp16_frac"), 2.5e14 / info.peak_fp16_flop_per_s, 1e-5);
    assert_rel(column(t, "gemm_eff_tf32_frac"), 1.2e14 / info.peak_tf32_flop_per_s, 1e-5);
    assert_rel(column(t, "gemm_eff_fp32_frac"), 1.85e13 / info.peak_fp32_flop_per_s, 1e-5);
    assert_rel(column(t, "peak_fp16_flop_per_s"), info.peak_fp16_flop_per_s, 1e-5); /* kept */
    /* bf16 was measured only on a small shape: the published efficiency stays */
    int c_bf16 = eci_table_col(all, "gemm_eff_bf16_frac"), c_id = eci_table_col(all, "id");
    for (size_t row = 0; row < eci_table_rows(all); row++)
        if (strcmp(eci_table_cell(all, row, c_id), "a100-sxm4-80gb") == 0)
            assert_string_equal(eci_table_cell(t, 0, c_bf16), eci_table_cell(all, row, c_bf16));
    assert_rel(column(t, "memory_eff_frac"), 1.75e12 / info.memory_bandwidth_bytes_per_s, 1e-5);
    assert_rel(column(t, "h2d_pinned_bytes_per_s"), 2.45e10, 1e-5);
    assert_rel(column(t, "kernel_floor_s"), 2.2e-6, 1e-5);
    assert_rel(column(t, "measured"), 1, 0);
    eci_table_free(t);
    eci_table_free(all);

    /* the curve: one row per point, efficiency relative to the large-GEMM rate */
    char *curve_path = ec_test_path(dir, "gemm_curve.csv");
    char *curve = ec_test_read_file(curve_path, NULL);
    assert_non_null(curve);
    assert_contains(curve, "m,n,k,precision,flop_per_s,efficiency_frac\n");
    assert_contains(curve, "1024,1024,1024,fp16,1.1e+14,0.44\n"); /* 1.1e14 / 2.5e14 */
    free(curve);
    free(curve_path);

    /* Appended to a copy of models/, the row is a GPU that predict can use at once. */
    char *mdir = ec_test_path(dir, "models");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", mdir);
    assert_int_equal(system(cmd), 0);
    copy_models(mdir);
    char *mgpus = ec_test_path(mdir, "gpus.csv");
    size_t len_g = 0, len_p = 0;
    char *g = ec_test_read_file(mgpus, &len_g), *p = ec_test_read_file(prof, &len_p);
    char *row = strchr(p, '\n') + 1; /* skip the header */
    size_t len_row = len_p - (size_t)(row - p);
    char *joined = malloc(len_g + len_row + 1);
    memcpy(joined, g, len_g);
    memcpy(joined + len_g, row, len_row);
    ec_test_write_file(mgpus, joined, len_g + len_row);
    ec_ctx *ctx2;
    assert_int_equal(ec_ctx_new(NULL, NULL, &ctx2), EC_OK);
    if (ec_ctx_load_models(ctx2, mdir) != EC_OK)
        fail_msg("models with the probed row: %s", ec_ctx_errmsg(ctx2));
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set_word(ctx2, &cfg, "model=bert-base"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx2, &cfg, "gpu=a100-sxm4-80gb-probed"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx2, &cfg, "precision=amp_fp16"), EC_OK);
    assert_int_equal(ec_config_set_word(ctx2, &cfg, "batch_per_gpu=32"), EC_OK);
    ec_result res;
    assert_int_equal(ec_predict(ctx2, &cfg, &res), EC_OK);
    assert_true(res.step_s > 0);
    ec_ctx_free(ctx2);
    free(joined);
    free(g);
    free(p);
    free(mgpus);
    free(mdir);
    free(prof);
    free(gpus);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* A GPU with no row: the nearest compute capability's row is the template and the measured
 * best rates stand for the peaks. */
static void test_unknown_gpu(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir();
    char *gpus = ec_test_path(getenv("EPOCHCAST_MODELS"), "gpus.csv");
    ecp_result r = measured("NVIDIA Imaginary 9000 Ti", 8.9);
    assert_int_equal(ecp_write(ctx, &r, gpus, dir), EC_OK);
    char *prof = ec_test_path(dir, "gpu_profile.csv");
    eci_table *t;
    assert_int_equal(eci_table_load(ctx, prof, &t), EC_OK);
    assert_string_equal(eci_table_cell(t, 0, eci_table_col(t, "id")), "nvidia-imaginary-9000-ti-probed");
    assert_string_equal(eci_table_cell(t, 0, eci_table_col(t, "architecture")), "ada"); /* cc 8.9 */
    assert_rel(column(t, "peak_fp16_flop_per_s"), 2.5e14, 1e-5);
    assert_rel(column(t, "gemm_eff_fp16_frac"), 1.0, 0);
    assert_rel(column(t, "memory_bandwidth_bytes_per_s"), 1.75e12, 1e-5);
    assert_contains(eci_table_cell(t, 0, eci_table_col(t, "source")), "peaks = measured best");
    eci_table_free(t);
    /* an output folder that does not exist: an I/O error, no crash */
    assert_int_equal(ecp_write(ctx, &r, gpus, "/nonexistent/dir"), EC_EIO);
    free(prof);
    free(gpus);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_gpu),
        cmocka_unit_test(test_unknown_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
