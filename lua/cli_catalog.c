/*
 * cli_catalog.c: `epochcast gpus`, `models` and `networks`: the catalog's GPU profiles, network
 * presets and inter-node network presets as tables, read from the models/ folder (--models,
 * $EPOCHCAST_MODELS or the installed one: ecL_models_dir) through the public listing API.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char gpus_usage[] =
    "usage: epochcast gpus\n"
    "\n"
    "List the GPU profiles: id, name, architecture, memory (GiB), memory bandwidth\n"
    "(GB/s = 1e9 bytes/s) and dense fp32 / fp16 tensor peaks (TFLOP/s).\n"
    "Any id, alias or nvidia-smi name works as gpu=... in a configuration.\n";

static const char networks_usage[] =
    "usage: epochcast networks\n"
    "\n"
    "List the inter-node network presets of models/interconnects.csv that network= names:\n"
    "the rate of each GPU's own NIC and of a node (Gb/s per direction), the measured\n"
    "collective efficiency where one is published (else constants.csv internode_busbw_frac),\n"
    "the NVLink switch domain, and the description.  Without network=, nodes are joined by\n"
    "network_gbit_per_s (per node), else by the network of the GPU's reference system\n"
    "(models/reference_systems.csv: DGX H100's NDR InfiniBand, a PCIe server's 100 GbE), else\n"
    "constants.csv internode_bytes_per_s.\n";

static const char models_usage[] =
    "usage: epochcast models\n"
    "\n"
    "List the network presets: id, family (the config's model_type), default task,\n"
    "parameters (millions, with the default task head) and the tasks it has heads for,\n"
    "then the model_types a config.json given as model=PATH may have.\n"
    "`epochcast model-info model=ID` describes one.\n";

int ecC_cmd_gpus(lua_State *L, int argc, char **argv)
{
    if (argc > 0 && ecC_is_help(argv[0]))
        return fputs(gpus_usage, stdout), 0;
    if (argc > 0)
        return ecC_usage_error("gpus", "gpus: unexpected argument '%s'", argv[0]);
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    size_t n = ec_gpu_count(ctx);
    int wid = 2, wname = 4;
    for (size_t i = 0; i < n; i++) {
        ec_gpu_info g;
        if (ec_gpu_get(ctx, i, &g) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        if ((int)strlen(g.id) > wid) wid = (int)strlen(g.id);
        if ((int)strlen(g.name) > wname) wname = (int)strlen(g.name);
    }
    printf("%-*s  %-*s  %-12s %8s %8s %12s %12s\n", wid, "id", wname, "name", "architecture",
           "mem_GiB", "GB/s", "fp32_TFLOP/s", "fp16_TFLOP/s");
    for (size_t i = 0; i < n; i++) {
        ec_gpu_info g;
        ec_gpu_get(ctx, i, &g);
        printf("%-*s  %-*s  %-12s %8.1f %8.0f %12.1f %12.1f\n", wid, g.id, wname, g.name,
               g.architecture, g.memory_bytes / GIB, g.memory_bandwidth_bytes_per_s / 1e9,
               g.peak_fp32_flop_per_s / 1e12, g.peak_fp16_flop_per_s / 1e12);
    }
    return 0;
}

int ecC_cmd_networks(lua_State *L, int argc, char **argv)
{
    if (argc > 0 && ecC_is_help(argv[0]))
        return fputs(networks_usage, stdout), 0;
    if (argc > 0)
        return ecC_usage_error("networks", "networks: unexpected argument '%s'", argv[0]);
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    size_t n = ec_interconnect_count(ctx);
    int wid = 2;
    for (size_t i = 0; i < n; i++) {
        ec_interconnect_info f;
        if (ec_interconnect_get(ctx, i, &f) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        if ((int)strlen(f.id) > wid)
            wid = (int)strlen(f.id);
    }
    printf("%-*s  %9s %10s %6s %6s  %s\n", wid, "id", "Gb/s/GPU", "Gb/s/node", "eff", "domain", "description");
    for (size_t i = 0; i < n; i++) {
        ec_interconnect_info f;
        ec_interconnect_get(ctx, i, &f);
        char eff[16] = "-", dom[16] = "-", gpu[16] = "-";
        if (f.efficiency_frac > 0)
            snprintf(eff, sizeof eff, "%.2f", f.efficiency_frac);
        if (f.domain_gpus > 0)
            snprintf(dom, sizeof dom, "%d", f.domain_gpus);
        if (f.gpu_bytes_per_s > 0)
            snprintf(gpu, sizeof gpu, "%.0f", f.gpu_bytes_per_s * 8 / 1e9);
        printf("%-*s  %9s %10.0f %6s %6s  %s\n", wid, f.id, gpu, f.node_bytes_per_s * 8 / 1e9, eff, dom,
               f.description);
    }
    return 0;
}

int ecC_cmd_models(lua_State *L, int argc, char **argv)
{
    if (argc > 0 && ecC_is_help(argv[0]))
        return fputs(models_usage, stdout), 0;
    if (argc > 0)
        return ecC_usage_error("models", "models: unexpected argument '%s'", argv[0]);
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    size_t n = ec_model_count(ctx);
    int wid = 2, fwid = 6;
    for (size_t i = 0; i < n; i++) {
        ec_model_info m;
        if (ec_model_get(ctx, i, &m) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
        if ((int)strlen(m.id) > wid) wid = (int)strlen(m.id);
        if ((int)strlen(m.family) > fwid) fwid = (int)strlen(m.family);
    }
    printf("%-*s  %-*s %-14s %10s  %s\n", wid, "id", fwid, "family", "default_task", "params_M", "tasks");
    for (size_t i = 0; i < n; i++) {
        ec_model_info m;
        ec_model_get(ctx, i, &m);
        printf("%-*s  %-*s %-14s %10.1f  %s\n", wid, m.id, fwid, m.family, m.default_task, m.params / 1e6, m.tasks);
    }
    printf("\nmodel=PATH also takes a Hugging Face config.json (or a folder holding one) of model_type:\n  %s\n",
           ec_model_types());
    return 0;
}
