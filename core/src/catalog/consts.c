/*
 * consts.c: loads models/constants.csv, the software constants of the model (PyTorch,
 * CUDA runtime and training-loop behaviour), each with its unit and source.  Every name
 * in consts.h must be present exactly once, so lookups cannot fail after loading.
 */
#include "catalog/catalog.h"
#include "catalog/consts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const const_names[EC_C_COUNT] = {
#define EC_CONST_NAME(name) #name,
    EC_CONSTS(EC_CONST_NAME)
#undef EC_CONST_NAME
};

/* Constants the model divides by or converts to int must be positive and bounded; the
 * rest only non-negative.  {id, lo, hi}. */
static const struct {
    int id;
    double lo, hi;
} strict_ranges[] = {
    {EC_C_gemm_tile_large_m, 1, 4096},   {EC_C_gemm_tile_large_n, 1, 4096},
    {EC_C_gemm_tile_small_m, 1, 4096},   {EC_C_gemm_tile_small_n, 1, 4096},
    {EC_C_gemm_tile_small_eff_frac, 1e-3, 1},
    {EC_C_conv_eff_frac, 1e-3, 100},     {EC_C_sdpa_eff_frac, 1e-3, 100},
    {EC_C_foreach_tensors_per_kernel, 1, 1e6},
    {EC_C_ddp_bucket_bytes, 1, 1e15},    {EC_C_nvlink_busbw_frac, 1e-3, 1},
    {EC_C_pcie_host_busbw_frac, 1e-3, 1}, {EC_C_internode_bytes_per_s, 1, 1e15},
    {EC_C_internode_busbw_frac, 1e-3, 1},
    {EC_C_pcie_p2p_busbw_frac, 1e-3, 1}, {EC_C_nvlink_bridge_busbw_frac, 1e-3, 1},
    {EC_C_board_uplink_lanes, 1, 64},    {EC_C_nccl_ramp_ranks, 2, 65536},
    {EC_C_dp_coalesce_buffer_bytes, 1, 1e15},
    {EC_C_gpus_per_node, 1, 1024},       {EC_C_gelu_new_kernels, 1, 1024},
    {EC_C_gelu_python_kernels, 1, 1024},
    {EC_C_flash1_kernel_head_dim_min, 8, 512},
    {EC_C_megatron_bucket_min_params, 1, 1e12}, {EC_C_megatron_bucket_params_per_rank, 0, 1e12},
    {EC_C_rmsnorm_eager_kernels, 1, 1024}, {EC_C_rmsnorm_eager_passes, 1, 1024},
    {EC_C_rmsnorm_eager_fp32_passes, 0, 1024}, {EC_C_rmsnorm_eager_cast_kernels, 0, 1024},
    {EC_C_rope_eager_kernels, 1, 1024},  {EC_C_rmsnorm_fused_kernels, 1, 1024},
    {EC_C_rmsnorm_fused_passes, 1, 1024}, {EC_C_rope_fused_kernels, 1, 1024},
    {EC_C_accumulate_grad_passes, 0, 16}, {EC_C_te_accumulate_grad_passes, 0, 16},
    {EC_C_te_fp8_cast_transpose_bytes, 0, 64}, {EC_C_te_fp8_transpose_bytes, 0, 64},
    {EC_C_te_fp8_cast_bytes, 0, 64},     {EC_C_te_fp8_non_tn_min_cc, 1, 100},
    {EC_C_te_fp8_non_tn_below_cc, 1, 100}, {EC_C_te_fp8_non_tn_again_cc, 1, 100},
    {EC_C_te_fp8_amax_bytes, 0, 64},
    {EC_C_mlm_mask_frac, 0, 1},          {EC_C_bucket_mega_batch_mult, 1, 1e6},
    {EC_C_checkpoint_write_bytes_per_s, 1, 1e15},
    {EC_C_calib_run_log_sd, 1e-3, 10},   {EC_C_calib_arch_log_sd, 1e-3, 10},
    {EC_C_overlap_compute_slowdown_frac, 0, 1},
    {EC_C_pcie_host_copy_frac, 1e-3, 1}, {EC_C_near_capacity_warn_frac, 0.5, 1},
    {EC_C_fp32_conv_warn_frac, 1e-3, 1},
    {EC_C_fsdp_gathers_in_flight, 1, 8}, {EC_C_host_optimizer_bytes_per_s, 1, 1e15},
    {EC_C_host_bound_util_frac, 0, 1},
};

/* The constants that are software releases (unit version), read as "major.minor". */
static int is_release(size_t id)
{
    return id == EC_C_cuda_context_old_until_version || id == EC_C_cuda_context_eager_until_version ||
           id == EC_C_torch_version_known_max || id == EC_C_torch_version_known_min ||
           id == EC_C_linear_bias_epilogue_from_version || id == EC_C_clip_sync_until_version ||
           id == EC_C_clip_norm_stacked_from_version || id == EC_C_hf_compile_mask_from_version;
}

static void const_range(size_t id, double *lo, double *hi)
{
    *lo = 0.0;
    *hi = 1e15;
    for (size_t i = 0; i < sizeof strict_ranges / sizeof strict_ranges[0]; i++)
        if ((size_t)strict_ranges[i].id == id) {
            *lo = strict_ranges[i].lo;
            *hi = strict_ranges[i].hi;
        }
}

int eci_consts_load(ec_ctx *ctx, const char *path)
{
    eci_table *t = NULL;
    int rc = eci_table_load(ctx, path, &t);
    if (rc != EC_OK)
        return rc;
    int c_name, c_value;
    if ((rc = eci_table_require(ctx, t, "name", &c_name)) != EC_OK ||
        (rc = eci_table_require(ctx, t, "value", &c_value)) != EC_OK)
        goto done;
    struct eci_consts *k = eci_calloc(ctx, 1, sizeof *k);
    if (k == NULL) {
        rc = EC_ENOMEM;
        goto done;
    }
    size_t seen_line[EC_C_COUNT] = {0};
    for (size_t r = 0; r < eci_table_rows(t); r++) {
        const char *name = eci_table_cell(t, r, c_name);
        size_t id = 0;
        while (id < EC_C_COUNT && strcmp(const_names[id], name) != 0)
            id++;
        if (id == EC_C_COUNT) {
            const char *near = eci_nearest(name, const_names, EC_C_COUNT);
            rc = eci_error(ctx, EC_EPARSE, "%s:%zu:%d: unknown constant '%s' (did you mean '%s'?)",
                           path, eci_table_line(t, r), c_name + 1, name, near);
            break;
        }
        if (seen_line[id] != 0) {
            rc = eci_error(ctx, EC_EPARSE, "%s:%zu: constant '%s' already defined on line %zu", path,
                           eci_table_line(t, r), name, seen_line[id]);
            break;
        }
        seen_line[id] = eci_table_line(t, r);
        double lo, hi;
        const_range(id, &lo, &hi);
        if (is_release(id)) {
            int release; /* kept as EC_RELEASE: 2.10 after 2.9 */
            if ((rc = eci_table_release(ctx, t, r, c_value, &release)) != EC_OK)
                break;
            k->value[id] = release;
        } else if ((rc = eci_table_number(ctx, t, r, c_value, lo, hi, &k->value[id])) != EC_OK)
            break;
    }
    for (size_t id = 0; rc == EC_OK && id < EC_C_COUNT; id++)
        if (seen_line[id] == 0)
            rc = eci_error(ctx, EC_EPARSE, "%s: missing constant '%s'", path, const_names[id]);
    if (rc == EC_OK)
        ctx->consts = k;
    else
        eci_free(ctx, k, sizeof *k);
done:
    eci_table_free(t);
    return rc;
}

void eci_consts_free(ec_ctx *ctx)
{
    eci_free(ctx, ctx->consts, sizeof *ctx->consts);
    ctx->consts = NULL;
}

double eci_const(const ec_ctx *ctx, int which)
{
    return ctx->consts->value[which];
}
