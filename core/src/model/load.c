/*
 * load.c: a models/ folder into a context (ec_ctx_load_models): the catalog's tables
 * (constants, GPUs and their attention kernels of attention.csv, hosts, interconnects, NCCL's
 * tuner constants), the network presets of networks.csv, and when the folder has them the GPUs' reference systems
 * of reference_systems.csv, the fitted parameters of profile.csv and the prices of prices.csv;
 * and a context loaded as another is (ec_ctx_load_from: its folder, its fit, its defined networks).
 */
#include "catalog/params.h"
#include "catalog/price.h"
#include "model/net.h"

#include <stdio.h>

/* Free the models/ tables (a load that failed half way). */
static void unload(ec_ctx *ctx)
{
    eci_refsys_free(ctx);
    eci_hw_free(ctx);
    eci_host_free(ctx);
    eci_fabric_free(ctx);
    eci_nccl_free(ctx);
    eci_net_free(ctx);
    eci_consts_free(ctx);
    eci_sdpa_free(ctx);
    eci_conv_algos_free(ctx);
    eci_tp_overlap_free(ctx);
}

int ec_ctx_load_models(ec_ctx *ctx, const char *dir)
{
    if (ctx == NULL)
        return EC_EMISUSE;
    if (ctx->models_loaded)
        return eci_error(ctx, EC_EMISUSE, "models are already loaded in this context");
    char found[EC_PATH_MAX];
    if (dir == NULL) {
        int rc = ec_default_models_dir(found, sizeof found);
        if (rc == EC_EINVAL)
            return eci_error(ctx, EC_EINVAL, "models folder path longer than %d bytes", EC_PATH_MAX - 1);
        if (rc != EC_OK)
            return eci_error(ctx, EC_ENOTFOUND,
                             "no models/ folder found: set EPOCHCAST_MODELS or pass a folder "
                             "(an installed epochcast keeps it in PREFIX/share/epochcast/models)");
        dir = found;
    }
    int rc = eci_ctx_on_free(ctx, unload);
    if (rc != EC_OK)
        return rc;
    static const struct {
        const char *file;
        int (*load)(ec_ctx *, const char *);
    } tables[] = {
        {"constants.csv", eci_consts_load},
        {"gpus.csv", eci_hw_load},
        {"attention.csv", eci_attn_load}, /* each GPU's fused attention kernels (catalog/attention.c) */
        {"membw.csv", eci_membw_load},    /* each GPU's memory-bound kernel overhead (catalog/membw.c) */
        {"l2.csv", eci_l2_load},          /* each GPU's L2 read bandwidth and usable size (catalog/l2.c) */
        {"sdpa_backends.csv", eci_sdpa_load}, /* the kernel SDPA picks (catalog/sdpa.c) */
        {"conv_algos.csv", eci_conv_algos_load}, /* cuDNN's convolution algorithms (catalog/convalgo.c) */
        {"gemm.csv", eci_gemm_load},      /* each GPU's GEMM utilization curve (catalog/gemm.c) */
        {"gemm_shapes.csv", eci_gemm_shapes_load}, /* the public shape data behind it, checked */
        {"hosts.csv", eci_host_load},
        {"interconnects.csv", eci_fabric_load},
        {"nccl_tuning.csv", eci_nccl_load}, /* NCCL's algorithm choice for all-reduces (catalog/nccl.c) */
        {"networks.csv", eci_net_load},
        {"tp_overlap.csv", eci_tp_overlap_load}, /* TE's userbuffers configurations (catalog/tpoverlap.c) */
    };
    char path[EC_PATH_MAX + 32];
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        int n = snprintf(path, sizeof path, "%s/%s", dir, tables[i].file);
        if (n < 0 || (size_t)n >= sizeof path)
            return eci_error(ctx, EC_EINVAL, "models folder path too long: '%s'", dir);
        rc = tables[i].load(ctx, path);
        if (rc != EC_OK) {
            unload(ctx);
            return rc;
        }
    }
    /* reference_systems.csv, when present: each GPU's reference system and the network it
     * ships with, the default of a multi-node layout without network= (catalog/refsys.c). */
    int n = snprintf(path, sizeof path, "%s/reference_systems.csv", dir);
    FILE *probe = n > 0 && (size_t)n < sizeof path ? fopen(path, "r") : NULL;
    if (probe != NULL) {
        fclose(probe);
        if ((rc = eci_refsys_load(ctx, path)) != EC_OK) {
            unload(ctx);
            return rc;
        }
    }
    /* profile.csv, when present, holds parameters fitted on measured runs
     * (`epochcast calibrate`); it becomes this context's default fit. */
    n = snprintf(path, sizeof path, "%s/profile.csv", dir);
    probe = n > 0 && (size_t)n < sizeof path ? fopen(path, "r") : NULL;
    if (probe != NULL) {
        fclose(probe);
        ec_fit_report rep;
        rc = ec_profile_read(ctx, path, &rep);
        if (rc == EC_OK)
            rc = ec_ctx_set_fit(ctx, &rep);
        if (rc != EC_OK) {
            unload(ctx);
            return rc;
        }
    }
    /* prices.csv, when present: on-demand offers that price a run (price.c). */
    n = snprintf(path, sizeof path, "%s/prices.csv", dir);
    probe = n > 0 && (size_t)n < sizeof path ? fopen(path, "r") : NULL;
    if (probe != NULL) {
        fclose(probe);
        rc = eci_price_load_default(ctx, path);
        if (rc != EC_OK) {
            unload(ctx);
            eci_params_release(ctx);
            return rc;
        }
    }
    eci_config_keys_init(ctx);
    eci_strlcpy(ctx->models_dir, dir, sizeof ctx->models_dir);
    ctx->models_loaded = 1;
    eci_error_clear(ctx);
    return EC_OK;
}

int ec_ctx_load_from(ec_ctx *ctx, const ec_ctx *src)
{
    if (ctx == NULL)
        return EC_EMISUSE;
    if (src == NULL || src == ctx || !src->models_loaded)
        return eci_error(ctx, EC_EMISUSE, "ec_ctx_load_from: the source context %s",
                         src == NULL ? "is NULL" : src == ctx ? "is this one" : "has no models loaded");
    int rc = ec_ctx_load_models(ctx, src->models_dir);
    if (rc != EC_OK)
        return rc;
    /* The source's fit, whatever it is now (set, reset or the folder's profile.csv). */
    if (src->fit == NULL) {
        eci_free(ctx, ctx->fit, sizeof *ctx->fit);
        ctx->fit = NULL;
    } else {
        if (ctx->fit == NULL && (rc = eci_params_keep(ctx, &ctx->fit)) != EC_OK)
            return rc;
        *ctx->fit = *src->fit;
    }
    return eci_net_copy_defined(ctx, src);
}
