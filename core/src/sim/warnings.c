/*
 * warnings.c: a prediction's warnings (ec_result's warnings and warning_text): what it cannot
 * price or prices against the user's likely intent (fp32 convolutions, lengths without dynamic
 * padding, a default network), keys that have no effect, memory near or over capacity, a
 * parameter count off the published one.  From the config (config.c's given keys), its
 * resolution and the network (net.c); said, not refused.
 */
#include "catalog/consts.h"
#include "sim/setup.h"
#include "sim/warnings.h"
#include "model/comm.h"
#include "model/compute.h"
#include "model/optim.h"
#include "model/trainer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Set bit and append text unless that text is already there: two different warnings under
 * one bit (keys ignored by the model and by the configuration) are both said. */
void eci_warn_add(ec_result *res, unsigned bit, const char *text)
{
    if ((res->warnings & bit) == bit && strstr(res->warning_text, text) != NULL)
        return;
    res->warnings |= bit;
    /* "; " and text appended, cut as snprintf would cut them (copies: snprintf's format
     * parsing cost more than the rest of a prediction's warnings) */
    size_t len = strlen(res->warning_text), room = sizeof res->warning_text - len;
    char *end = res->warning_text + len;
    if (len > 0 && room > 1) {
        size_t sep = eci_strlcpy(end, "; ", room) < room ? 2 : room - 1;
        end += sep;
        room -= sep;
    }
    eci_strlcpy(end, text, room);
}

/* precision=fp32 prices IEEE fp32 everywhere, as torch.backends.cudnn.allow_tf32=False runs it
 * (the harness's fp32).  PyTorch's default (allow_tf32=True for cuDNN, False for matmuls since
 * 1.12; docs/modeling.md) runs convolutions on TF32 tensor cores from Ampere on, so a CNN kept
 * at the defaults runs much faster than this: said when convolutions carry most of the FLOPs
 * (constants.csv fp32_conv_warn_frac; a ViT's one patch convolution does not matter). */
void eci_warn_fp32_convs(const ec_ctx *ctx, const ec_config *cfg, const eci_gpu *g, const eci_workload *wl,
                         ec_result *res)
{
    if (cfg->precision != EC_PREC_FP32 || !eci_gpu_tf32(g) || wl->conv_flop <= 0 ||
        wl->conv_flop < eci_const(ctx, EC_C_fp32_conv_warn_frac) * wl->model_flop)
        return;
    eci_warn_add(res, EC_WARN_FP32_CONVS, "precision=fp32 prices the convolutions in IEEE fp32 "
                 "(torch.backends.cudnn.allow_tf32=False), while PyTorch's default runs them in TF32 on this GPU: "
                 "give precision=tf32 for a script that keeps the default");
}

/* 1 when the task's head is a causal LM (the head loss=fused_cross_entropy applies to). */
static int causal_lm_head(const eci_resolved *r)
{
    if (r->net == NULL)
        return 0;
    for (size_t i = 0; i < r->net->n_heads; i++)
        if (eci_task_parse(r->net->heads[i].task) == r->task)
            return r->net->heads[i].kind == EC_HEAD_CAUSAL_LM;
    return 0;
}

/* torch.compile with attn_mask=auto on a causal self-attention run through SDPA: auto made the mask
 * explicit for Hugging Face's masking_utils (model/attn_rates.c eci_sdpa_masked), which doubles the
 * attention's work; said, since code that calls SDPA with is_causal itself runs causal. */
static void compile_mask_warning(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    if (cfg->attn_mask != EC_ATTN_MASK_AUTO || cfg->compile == EC_COMPILE_OFF || cfg->lengths[0] != '\0' ||
        r->net == NULL || !eci_sdpa_masked(ctx, cfg) || !eci_attn_through_sdpa(ctx, r->gpu, r->net, cfg))
        return;
    for (size_t i = 0; i < r->net->n_layers; i++) {
        const ec_attention_layer *a = &r->net->layers[i].u.attention;
        if (r->net->layers[i].kind == EC_LAYER_ATTENTION && a->causal && !a->cross) {
            eci_warn_add(res, EC_WARN_COMPILE_MASK,
                         "torch.compile: Hugging Face (transformers 4.53 on) passes SDPA the causal mask as a tensor, "
                         "so every key block is computed (attn_mask=none if the model calls SDPA with is_causal)");
            return;
        }
    }
}

/* A network whose MLP or experts run a SwiGLU (gated SiLU) as the configuration computes it:
 * what fp8_act_store stores in FP8 (model/workload_blocks.c swiglu_fp8_store). */
static int has_swiglu(const ec_config *cfg, const eci_resolved *r)
{
    if (r->net == NULL || cfg->activation != EC_ACTIMPL_NETWORK)
        return 0;
    for (size_t i = 0; i < r->net->n_layers; i++) {
        const ec_layer *l = &r->net->layers[i];
        if ((l->kind == EC_LAYER_MLP && l->u.mlp.gated && l->u.mlp.act == EC_ACT_SILU) ||
            (l->kind == EC_LAYER_MOE && l->u.moe.gated && l->u.moe.act == EC_ACT_SILU))
            return 1;
    }
    return 0;
}

/* Whether the network repeats a checkpointable block (a transformer's layers): what
 * act_offload_layers moves to the host, one block at a time (eci_workload_offloaded_layers keeps
 * the last one on the GPU, so a block run once offloads nothing). */
static int has_repeated_layers(const eci_resolved *r)
{
    if (r->net == NULL)
        return 0;
    for (size_t i = 0; i < r->net->n_layers; i++) {
        const ec_layer *l = &r->net->layers[i];
        if (l->kind == EC_LAYER_REPEAT && l->u.repeat.checkpoint && l->u.repeat.times > 1)
            return 1;
    }
    return 0;
}

/* Keys given explicitly that this configuration never reads: one warning naming them. */
static void ignored_keys(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    char text[EC_WARNING_TEXT_MAX / 2] = "";
    size_t len = 0;
#define IGNORED(cond, what)                                                                          \
    do {                                                                                             \
        if ((cond) && len < sizeof text)                                                             \
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", len ? ", " : "", what);   \
    } while (0)
#define GIVEN(key) eci_config_given(ctx, cfg, ECI_KEY_##key)
    int no_epoch = cfg->dataset_samples <= 0;
    IGNORED(no_epoch && GIVEN(EPOCHS), "epochs (needs dataset_samples)");
    IGNORED(no_epoch && cfg->eval_samples > 0, "eval_samples (needs dataset_samples)");
    IGNORED(no_epoch && cfg->checkpoints_per_epoch > 0, "checkpoints_per_epoch (needs dataset_samples)");
    IGNORED(r->strategy != EC_STRATEGY_DDP && cfg->gradient_as_bucket_view, "gradient_as_bucket_view (ddp only)");
    IGNORED(r->task != ECI_TASK_PRETRAIN && cfg->mlm_all_positions, "mlm_all_positions (task=pretrain only)");
    IGNORED(r->strategy != EC_STRATEGY_FSDP && cfg->fsdp_no_sync, "fsdp_no_sync (fsdp only)");
    IGNORED(cfg->fp8_recipe != EC_FP8_DELAYED && (cfg->precision != EC_PREC_AMP_FP8 || cfg->kernels != EC_KERNELS_TE),
            "fp8_recipe (precision=amp_fp8 kernels=te only)");
    IGNORED(!cfg->tp_comm_overlap && cfg->tp_overlap_cfg[0] != '\0', "tp_overlap_cfg (tp_comm_overlap=1 only)");
    IGNORED(cfg->fp8_params && !eci_setup_fp8_params(cfg, r), "fp8_params (precision=amp_fp8 kernels=te, zero or fsdp only)");
    IGNORED(cfg->fp8_act_store && (cfg->kernels != EC_KERNELS_TE || !has_swiglu(cfg, r)),
            "fp8_act_store (kernels=te with a SwiGLU MLP only)");
    IGNORED(cfg->cp_comm_type != EC_CP_COMM_P2P && (cfg->kernels != EC_KERNELS_TE || r->cp <= 1),
            "cp_comm_type (kernels=te with cp > 1 only)");
    IGNORED(cfg->nccl_dp_ctas > 0 && r->dp * r->cp <= 1, "nccl_dp_ctas (dp x cp > 1 only)");
    IGNORED(cfg->nccl_cp_ctas > 0 && r->cp <= 1, "nccl_cp_ctas (cp > 1 only)");
    IGNORED(cfg->nccl_tp_ctas > 0 && r->tp <= 1, "nccl_tp_ctas (tp > 1 only)");
    IGNORED(cfg->act_offload_layers > 0 && !eci_setup_act_offload_allowed(cfg, r),
            "act_offload_layers (without checkpointing and pipeline parallelism only)");
    IGNORED(cfg->act_offload_layers > 0 && eci_setup_act_offload_allowed(cfg, r) && !has_repeated_layers(r),
            "act_offload_layers (a network of repeated layers only)");
    /* the kernel attention runs as the prediction picks it (a mask, attn_mask: SDPA's masked pick) */
    IGNORED(cfg->cudnn_release > 0 && (cfg->attention == EC_ATTN_EAGER || (r->net != NULL && r->net->cnn) ||
                                       eci_attn_kernel_for(ctx, r->gpu, cfg->attention, cfg->precision,
                                                           cfg->torch_release, eci_sdpa_masked(ctx, cfg)) != ECI_AK_CUDNN),
            "cudnn_version (attention running cuDNN's kernel only)");
    /* the mask is SDPA's (model/attn_rates.c): a fused attention through SDPA's dispatch */
    IGNORED(cfg->attn_mask != EC_ATTN_MASK_AUTO && !eci_attn_through_sdpa(ctx, r->gpu, r->net, cfg),
            "attn_mask (attention through SDPA only)");
    IGNORED(r->strategy != EC_STRATEGY_FSDP && cfg->fsdp_api != EC_FSDP_FLAT_PARAM, "fsdp_api (fsdp only)");
    IGNORED((r->strategy != EC_STRATEGY_FSDP || cfg->lora_r <= 0) && cfg->lora_fsdp_wrap != EC_LORA_FSDP_SEPARATE,
            "lora_fsdp_wrap (fsdp with lora_r)");
    IGNORED(cfg->quant_head && (cfg->lora_r <= 0 || (cfg->base_precision != EC_BASE_NF4 &&
                                                     cfg->base_precision != EC_BASE_NF4_NODQ &&
                                                     cfg->base_precision != EC_BASE_INT8)),
            "quant_head (needs a quantized base)");
    IGNORED(cfg->lora_r <= 0 && cfg->lora_dropout > 0, "lora_dropout (needs lora_r)");
    IGNORED(cfg->loss == EC_LOSS_KIND_FUSED_CROSS_ENTROPY && !causal_lm_head(r),
            "loss=fused_cross_entropy (a causal LM head only)");
    IGNORED(cfg->loss == EC_LOSS_KIND_FUSED_LINEAR_CROSS_ENTROPY && !causal_lm_head(r),
            "loss=fused_linear_cross_entropy (a causal LM head only)");
    IGNORED(cfg->overlap_param_gather && (r->strategy != EC_STRATEGY_ZERO || cfg->zero_stage >= 3),
            "overlap_param_gather (zero_stage 1 or 2 only)");
    IGNORED(cfg->zero_flat_copies && (r->strategy != EC_STRATEGY_ZERO || cfg->zero_stage >= 3),
            "zero_flat_copies (zero_stage 1 or 2 only)");
    /* DDP's or ZeRO-1/2's gradient buckets (sim/step.c) */
    int buckets = r->strategy == EC_STRATEGY_DDP || (r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage < 3);
    IGNORED(cfg->grad_buckets > 0 && !buckets, "grad_buckets (ddp or zero_stage 1-2)");
    IGNORED(cfg->bucket_cap_mb > 0 && (cfg->grad_buckets > 0 || !buckets),
            "bucket_cap_mb (ddp or zero_stage 1-2, without grad_buckets)");
    IGNORED(cfg->activation != EC_ACTIMPL_NETWORK && r->net != NULL && !r->net->mlp,
            "activation (a network with MLP or expert layers)");
    IGNORED(cfg->num_workers == 0 && GIVEN(PREFETCH_FACTOR), "prefetch_factor (needs num_workers > 0)");
    IGNORED(cfg->master_weights && cfg->precision != EC_PREC_FP16 && cfg->precision != EC_PREC_BF16,
            "master_weights (precision=fp16 or bf16 only)");
    IGNORED(cfg->clip_impl != EC_CLIP_TORCH && eci_trainer_max_grad_norm(ctx, cfg) <= 0,
            "clip_impl (needs max_grad_norm > 0)");
    int derived_loader = cfg->sample_cpu_s < 0 && !cfg->data_synthetic;
    IGNORED(!derived_loader && GIVEN(TOKENIZE), "tokenize (sample_cpu_s or data=synthetic replaces it)");
    IGNORED(!derived_loader && GIVEN(TOKENIZER), "tokenizer (sample_cpu_s or data=synthetic replaces it)");
    IGNORED(cfg->data_synthetic && cfg->sample_cpu_s >= 0, "sample_cpu_s (data=synthetic has no loader cost)");
#undef GIVEN
#undef IGNORED
    if (len > 0) {
        char msg[EC_WARNING_TEXT_MAX];
        snprintf(msg, sizeof msg, "keys with no effect in this configuration: %s", text);
        eci_warn_add(res, EC_WARN_KEY_IGNORED, msg);
    }
}

/* Keys given that this model does not use, a parameter count that disagrees with its
 * published one, and checkpointing on a network without checkpointed blocks: said, not ignored. */
/* Text pieces and GiB with two decimals, joined without printf (eci_format_fixed2). */
static char *put_text(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_gib(char *p, double bytes)
{
    return p + eci_format_fixed2(bytes / 1073741824.0, p);
}

/* Out of memory, or at its edge: what the step needs against the capacity, and the headroom. */
static void memory_warning(ec_result *res)
{
    const ec_memory *m = &res->memory;
    char text[256], *p = text;
    if (m->at_edge) {
        p = put_text(p, "at the edge of out-of-memory: needs ");
        p = put_gib(p, m->needed_bytes);
        p = put_text(p, " of ");
        p = put_gib(p, m->capacity_bytes);
        p = put_text(p, " GiB, leaving ");
        p = put_gib(p, m->capacity_bytes - m->needed_bytes);
        p = put_text(p, " GiB free, less than the ");
        p = put_gib(p, m->headroom_bytes);
        p = put_text(p, " GiB headroom (memory_headroom_gib): a smaller batch or checkpointing is safe");
    } else {
        p = put_text(p, "predicted peak memory exceeds the GPU's capacity (out of memory): needs ");
        p = put_gib(p, m->needed_bytes);
        p = put_text(p, " of ");
        p = put_gib(p, m->capacity_bytes);
        p = put_text(p, " GiB");
    }
    *p = '\0';
    eci_warn_add(res, m->at_edge ? EC_WARN_MEMORY_EDGE : EC_WARN_DOES_NOT_FIT, text);
}

/* A paged optimizer (bitsandbytes, optimizer=paged_*) keeps its states in CUDA unified memory, which
 * the driver evicts to host memory when the GPU runs short ("the Unified Memory driver may evict
 * pages from other cuMemAllocManaged allocations to host memory in order to make room",
 * cuMemPrefetchAsync); bitsandbytes prefetches each tensor's states before its update and
 * synchronizes after it (bitsandbytes/optim/optimizer.py step: prefetch_state, update_step,
 * torch.cuda.synchronize).  The states beyond the room left beside PyTorch's reserved memory
 * (memory.c memory_readings) come back over PCIe every step: at least that many bytes at the
 * link's pinned rate (gpus.csv h2d_pinned_bytes_per_s).  The migration is not priced, so it is said. */
static void paged_evicted_warning(const ec_ctx *ctx, const ec_config *cfg, const eci_gpu *g, ec_result *res)
{
    eci_optim o;
    eci_optim_get(ctx, cfg->optimizer, &o);
    const ec_memory *m = &res->memory;
    double resident = m->nvml_bytes - m->reserved_bytes - m->context_bytes;
    double evicted = m->optimizer_bytes - (resident > 0 ? resident : 0);
    if (!o.paged || !(evicted > 1048576.0) || !(g->h2d_pinned_bytes_per_s > 0))
        return;
    char text[400];
    snprintf(text, sizeof text, "optimizer=%s: %.2f of its %.2f GiB of states do not fit beside PyTorch's reserved "
             "memory, so the CUDA driver evicts them to host memory and every step's update pages them back over "
             "PCIe (at least %.2f s a step at the link's pinned rate, not in the step time)", o.name,
             evicted / 1073741824.0, m->optimizer_bytes / 1073741824.0, evicted / g->h2d_pinned_bytes_per_s);
    eci_warn_add(res, EC_WARN_PAGED_EVICTED, text);
}

/* torch_version outside the releases constants.csv describes: priced as the nearest it knows. */
static void torch_version_warning(const ec_ctx *ctx, const ec_config *cfg, ec_result *res)
{
    int hi = (int)eci_const(ctx, EC_C_torch_version_known_max), lo = (int)eci_const(ctx, EC_C_torch_version_known_min);
    int v = cfg->torch_release, newer = v > hi;
    if (v <= 0 || (v >= lo && !newer))
        return;
    char text[200], vs[24], los[24], his[24];
    snprintf(text, sizeof text, "key 'torch_version': %s is %s the releases models/constants.csv describes (%s-%s): "
             "priced as %s", eci_release_text(v, vs, sizeof vs), newer ? "newer than" : "older than",
             eci_release_text(lo, los, sizeof los), eci_release_text(hi, his, sizeof his), newer ? his : los);
    eci_warn_add(res, EC_WARN_TORCH_UNKNOWN, text);
}

/* Whether precision's matmuls run on tensor cores on g: the unit compute.c's pick_gemm_rate
 * picks (the fit's per-architecture GEMM scale is for tensor cores, its SIMT scale for CUDA
 * cores). */
static int matmul_tensor_cores(const eci_gpu *g, int precision)
{
    switch (precision) {
    case EC_PREC_FP32:
        return 0;
    case EC_PREC_TF32:
        return eci_gpu_tf32(g);
    case EC_PREC_AMP_FP16:
    case EC_PREC_FP16:
        return g->peak_fp16_flop_per_s > 0;
    case EC_PREC_AMP_BF16:
    case EC_PREC_AMP_FP8:
    case EC_PREC_BF16:
        return g->peak_bf16_flop_per_s > 0;
    default:
        return 0;
    }
}

/* EC_WARN_UNCALIBRATED: what a GPU of an architecture (or unit, or memory system) the fit has no
 * runs of is priced with and the unseen-architecture sd its interval is widened by.  A multi-GPU
 * job's communication part is not said here: every multi-GPU prediction has one, calibrated
 * architecture or not, and the text stays that of the same job on one GPU (a scenario names a
 * warning a step adds as its reason). */
static void warn_uncalibrated(const ec_config *cfg, const eci_gpu *g, const eci_params *c, int tensor, int cnn,
                              int host, double sd, ec_result *res)
{
    const eci_params_arch *fitted = eci_params_arch_find(c, g->architecture);
    const eci_params_arch *a = eci_params_arch_for(c, g->architecture, cfg->kernels);
    int gemm = tensor ? ECI_P_GEMM : ECI_P_SIMT, mem = cnn ? ECI_P_MEM_CNN : ECI_P_MEM;
    int gemm_seen = a != NULL && (a->fitted & 1u << gemm), mem_seen = a != NULL && (a->fitted & 1u << mem);
    /* joined without printf, as the memory warnings are: an uncalibrated GPU warns on every
     * prediction; the architecture's name (a gpus.csv cell) is cut at 32 bytes, so the longest text
     * (both parts unseen, sds 10.00, host-bound, below the leave-one-GPU-out sd, the kernel classes
     * named) is about 400 bytes */
    char text[EC_WARNING_TEXT_MAX], *p = text;
    p = put_text(p, "no calibration runs on ");
    for (size_t i = 0; i < 32 && g->architecture[i] != '\0'; i++)
        *p++ = g->architecture[i];
    if (fitted != NULL && a == NULL) { /* runs of it, with other kernels only (eci_params_arch_for) */
        char mine[32], theirs[64];
        ec_fit_kernels_names(1u << cfg->kernels, mine, sizeof mine);
        ec_fit_kernels_names(fitted->kernels, theirs, sizeof theirs);
        p = put_text(p, " with kernels=");
        p = put_text(p, mine);
        p = put_text(p, " (its fitted scales are of kernels=");
        p = put_text(p, theirs);
        p = put_text(p, " runs)");
    }
    if (a != NULL && !gemm_seen)
        p = put_text(p, tensor ? " with matmuls on tensor cores" : " with matmuls on CUDA cores (fp32)");
    if (a != NULL && !mem_seen)
        p = put_text(p, !gemm_seen ? (cnn ? " and for a CNN's memory bandwidth" : " and for its memory bandwidth")
                                   : (cnn ? " for a CNN's memory bandwidth" : " for its memory bandwidth"));
    /* what it is priced with instead (eci_params_scale): the GEMM prior, the global memory scale */
    p = put_text(p, !gemm_seen && !mem_seen ? ": GEMMs at gpus.csv's efficiency (prior), memory at the fit's global scale"
                    : !gemm_seen            ? ": GEMMs at gpus.csv's measured efficiency (prior)"
                                            : ": memory-bound kernels at the fit's global scale");
    /* the sd eci_params_error_sd chose: the leave-one-architecture-out one of the class, which
     * can be below the leave-one-GPU-out error_log_sd of a calibrated architecture (said so) */
    if (c->unseen_error_log_sd > 0) {
        p = put_text(p, sd < c->error_log_sd ? " (interval: leave-one-architecture-out log error sd "
                                             : " (interval widened: leave-one-architecture-out log error sd ");
        p += eci_format_fixed(sd, 3, p); /* three decimals: the two sds often agree to two */
        p = put_text(p, host ? " of host-bound predictions" : "");
        if (sd < c->error_log_sd) {
            p = put_text(p, ", below the ");
            p += eci_format_fixed(c->error_log_sd, 3, p);
            p = put_text(p, " of GPUs left out of calibrated architectures");
        }
        p = put_text(p, ")");
    } else {
        p = put_text(p, " (the profile has no leave-one-architecture-out error to widen the interval by)");
    }
    *p = '\0';
    eci_warn_add(res, EC_WARN_UNCALIBRATED, text);
}

double eci_calibration_sd(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, const eci_params *c,
                          double host_util_frac, ec_result *res)
{
    const eci_gpu *g = r->gpu;
    int tensor = 0, cnn = 0, unseen = 0, path = EC_COMM_DIRECT;
    /* host-bound: the GPU idles while the host paces the step (one comparison; the host row's
     * own sd only where the profile has it) */
    int host = c->unseen_host_error_log_sd > 0 && host_util_frac < eci_const(ctx, EC_C_host_bound_util_frac);
    double sd = c->error_log_sd; /* gpu_step_s (no network): the user's measured step, not the fit's */
    if (g != NULL && r->net != NULL) {
        tensor = matmul_tensor_cores(g, cfg->precision);
        cnn = r->net->cnn;
        sd = eci_params_error_sd(c, g->architecture, cfg->kernels, tensor, cnn, host, &unseen);
    }
    /* a multi-GPU job's communication part, by the path its gradients take (the prediction has
     * resolved the topology already: no error here); a few comparisons, and none without the rows */
    double total = sd;
    int comm = 0;
    for (int p = 0; p < EC_COMM_PATHS; p++)
        comm |= c->comm_error_log_sd[p] > 0;
    if (comm && g != NULL && cfg->num_gpus > 1 &&
        eci_comm_path(ctx, g, r->topology, cfg->num_gpus, r->nodes, &path) == EC_OK)
        total = eci_params_comm_sd(c, sd, cfg->num_gpus, path);
    if (unseen && res != NULL)
        warn_uncalibrated(cfg, g, c, tensor, cnn, host, sd, res);
    return total;
}

/* NCCL's ring through host memory (GeForce, topology=pcie-host) at the GPU's own link, where the
 * host named has no rate of its own: hosts.csv rows that have one are measured slower (the first
 * such row is named as the example), so the prediction says what it assumed. */
static void through_host_warning(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    int nccl = r->strategy == EC_STRATEGY_DDP || r->strategy == EC_STRATEGY_FSDP || r->strategy == EC_STRATEGY_ZERO;
    double link = !nccl || cfg->busbw_bytes_per_s > 0 ? 0
                  : eci_comm_through_host_link_bytes_per_s(ctx, r->gpu, r->host, r->topology, cfg->num_gpus, r->nodes);
    if (link <= 0)
        return;
    int per_node = (cfg->num_gpus + r->nodes - 1) / r->nodes;
    const eci_host *slow = NULL;
    for (size_t i = 0; i < ctx->n_hosts && slow == NULL; i++)
        if (ctx->hosts[i].through_host_busbw_bytes_per_s > 0)
            slow = &ctx->hosts[i];
    char example[96] = "";
    if (slow != NULL) /* that host's rate for a ring of as many GPUs (across its sockets when more than one holds) */
        snprintf(example, sizeof example, " (host=%s: %.2f GB/s)", slow->id,
                 eci_comm_host_ring_bytes_per_s(slow, per_node) / 1e9);
    char text[384];
    snprintf(text, sizeof text, "%d GPUs a node through host memory (GPUs without peer-to-peer, or topology=pcie-host): "
             "NCCL's ring priced at the GPU's link, %.1f GB/s; host=%s has no through-host rate of its own, and a "
             "host can be slower%s: name yours with host= or give busbw_gbyte_per_s= from a training run",
             per_node, link / 1e9, r->host->id, example);
    eci_warn_add(res, EC_WARN_THROUGH_HOST, text);
}

static void model_warnings(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    const eci_net *net = r->net;
    char text[EC_WARNING_TEXT_MAX];
    const char *ignored = NULL;
    /* a value off its default means the key was given (cheap: no key-name search per prediction) */
    if (!net->text && (cfg->seq_len > 0 || cfg->lengths[0] != '\0' || eci_config_given(ctx, cfg, ECI_KEY_TOKENIZE) ||
                       eci_config_given(ctx, cfg, ECI_KEY_TOKENIZER)))
        ignored = "seq_len, lengths, tokenize and tokenizer do not apply to an image network";
    else if (net->text && cfg->image_size > 0)
        ignored = "image_size does not apply to a text network";
    else if (!net->encdec && cfg->target_len > 0)
        ignored = "target_len applies to encoder-decoder networks only";
    else if (net->attention == EC_NET_ATTN_FUSED && cfg->attention == EC_ATTN_EAGER)
        ignored = "attention=eager has no effect: this network always runs a fused attention kernel (torchvision)";
    else if (net->attention == EC_NET_ATTN_EAGER && eci_config_given(ctx, cfg, ECI_KEY_ATTENTION) &&
             cfg->attention != EC_ATTN_EAGER)
        ignored = "attention= has no effect: this network has no fused attention path in its code (priced as eager)";
    if (ignored != NULL) {
        snprintf(text, sizeof text, "%s (model '%s'): ignored", ignored, net->id);
        eci_warn_add(res, EC_WARN_KEY_IGNORED, text);
    }
    if (cfg->checkpointing) {
        int units = 0;
        for (size_t i = 0; i < net->n_layers; i++)
            units |= net->layers[i].kind == EC_LAYER_REPEAT && net->layers[i].u.repeat.checkpoint;
        if (!units) {
            snprintf(text, sizeof text, "checkpointing=%s has no effect on '%s': it has no checkpointed blocks",
                     cfg->checkpointing == EC_CKPT_SELECTIVE ? "selective"
                     : cfg->checkpointing == EC_CKPT_OP      ? "selective_op"
                                                             : "1",
                     net->id);
            eci_warn_add(res, EC_WARN_KEY_IGNORED, text);
        } else if (cfg->checkpointing == EC_CKPT_SELECTIVE && net->attention != EC_NET_ATTN_EAGER &&
                   cfg->attention != EC_ATTN_EAGER) {
            snprintf(text, sizeof text, "checkpointing=selective has no effect with a fused attention kernel "
                     "(attention=%s): it recomputes its scores in backward already",
                     eci_attention_name(cfg->attention));
            eci_warn_add(res, EC_WARN_KEY_IGNORED, text);
        }
    }
    double pub = net->published_params;
    if (pub > 0 && fabs(net->params_published - pub) > 0.005 * pub) { /* |P_shapes - P_published| > 0.5% */
        snprintf(text, sizeof text, "'%s' (%s head): its shapes give %.4g parameters, its source states %.4g (%+.2f%%)",
                 net->id, net->published_task, net->params_published, pub,
                 100.0 * (net->params_published - pub) / pub);
        eci_warn_add(res, EC_WARN_PARAMS_MISMATCH, text);
    }
}

void eci_warn_all(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, ec_result *res)
{
    const eci_gpu *g = r->gpu;
    double near = eci_const(ctx, EC_C_near_capacity_warn_frac);
    if (r->net == NULL)
        eci_warn_add(res, EC_WARN_MEMORY_UNKNOWN, "gpu_step_s without a model: memory is not predicted");
    else if (!res->memory.fits)
        memory_warning(res);
    else if (cfg->num_gpus > 1 && res->memory.peak_bytes > near * res->memory.capacity_bytes) {
        /* a multi-GPU job holds more than one GPU (NCCL buffers, DDP's copies); when a step no
         * longer fits, the caching allocator frees its cache and retries, step after step, and
         * throughput collapses.  Nothing in the step model prices that, so it is a warning. */
        char text[200];
        snprintf(text, sizeof text, "peak memory above %.0f%% of capacity on several GPUs: leave headroom "
                 "(allocator retries can slow every step)", 100 * near);
        eci_warn_add(res, EC_WARN_NEAR_CAPACITY, text);
    }
    torch_version_warning(ctx, cfg, res);
    if (r->net != NULL && res->memory.fits)
        paged_evicted_warning(ctx, cfg, g, res);
    if (r->net != NULL && r->net->max_positions > 0 && r->seq > r->net->max_positions)
        eci_warn_add(res, EC_WARN_SEQ_TRUNCATED, "seq_len exceeds the model's position embeddings");
    if (r->net != NULL)
        model_warnings(ctx, cfg, r, res);
    if (g->compute_capability < 5.0)
        eci_warn_add(res, EC_WARN_UNSUPPORTED_GPU, "current PyTorch (CUDA 12) cannot run on Kepler GPUs");
    if (!g->measured && cfg->gpu_step_s <= 0)
        eci_warn_add(res, EC_WARN_MODEL_DEFAULTED, "no GEMM efficiency measured on this GPU: a sibling part's or the architecture's defaults (models/README.md, gpus.csv)");
    /* lengths= prices padding only with padding=dynamic or bucketed; with max_length it still
     * sets how many tokens the tokenizer reads, when tokenization is priced at all. */
    int tokens_priced = r->text && !cfg->data_synthetic && cfg->sample_cpu_s < 0;
    if (cfg->lengths[0] != '\0' && cfg->padding == EC_PAD_MAX_LENGTH)
        eci_warn_add(res, EC_WARN_LENGTHS_UNPADDED, tokens_priced
                     ? "lengths= with padding=max_length: every batch is padded to seq_len, so the lengths only set "
                       "the tokenizer's work (padding=dynamic pads each batch to its longest sample)"
                     : "lengths= has no effect here: padding=max_length pads every batch to seq_len and no tokenization "
                       "is priced (padding=dynamic pads each batch to its longest sample)");
    ignored_keys(ctx, cfg, r, res);
    if (r->nodes > 1 && r->fabric_defaulted) {
        const eci_refsys *sys = r->gpu->refsys;
        char text[384];
        snprintf(text, sizeof text, "no network= given: %s's %s assumed (network=%s, %.0f Gb/s per node of %d "
                 "GPUs, from models/reference_systems.csv): name yours with network= (epochcast networks) or "
                 "network_gbit_per_s=", sys->system, sys->fabric_text, sys->network,
                 r->node_net_bytes_per_s * 8 / 1e9, r->per_node);
        eci_warn_add(res, EC_WARN_NETWORK_DEFAULTED, text);
    } else if (r->nodes > 1 && r->fabric == NULL && cfg->network_bytes_per_s <= 0) {
        char text[240];
        snprintf(text, sizeof text, "%d nodes joined by the default network, %.0f Gb/s per node (constants.csv "
                 "internode_bytes_per_s; the GPU has no row in models/reference_systems.csv): name yours with "
                 "network= (epochcast networks) or network_gbit_per_s=",
                 r->nodes, r->node_net_bytes_per_s * 8 / 1e9);
        eci_warn_add(res, EC_WARN_NETWORK_DEFAULTED, text);
    }
    double hop = cfg->busbw_bytes_per_s > 0 ? 0
                 : eci_comm_host_hop_bytes_per_s(ctx, g, r->host, r->topology, cfg->num_gpus, r->nodes);
    if (hop > 0) {
        char text[256];
        snprintf(text, sizeof text, "%d GPUs a node over PCIe peer-to-peer: NCCL's ring crosses the host (root ports, "
                 "sockets) at %.1f GB/s (host=%s, hosts.csv host_hop_busbw_bytes_per_s), unless all sit behind one PCIe "
                 "switch (then give the measured busbw_gbyte_per_s=)", (cfg->num_gpus + r->nodes - 1) / r->nodes, hop / 1e9,
                 r->host->id);
        eci_warn_add(res, EC_WARN_PCIE_HOST_HOP, text);
    }
    through_host_warning(ctx, cfg, r, res);
    compile_mask_warning(ctx, cfg, r, res); /* last: the text of the others comes first */
}
