/*
 * resolve.c: what a config means before anything is priced (eci_resolve): the GPU, host and
 * network it names, the task, sequence and image sizes it defaults to, the strategy, the
 * checks that every product of counts fits, and the parallel layout (layout.c); and the
 * config with those derived values filled in (ec_config_resolve).
 */
#include "model/layout.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* Checks of eci_resolve beyond finding the ids (issue 20): every product of counts the models
 * multiply fits (the pipeline and the step walk hold some in int), with a message naming the
 * keys (a topology name is checked by config.c whatever the GPU count). */
static int resolve_checks(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r)
{
    /* 2^53: doubles count exactly up to here, and no real job comes near it */
    const int64_t exact = (int64_t)1 << 53;
    int64_t samples;
    const eci_factor step[] = {{"batch_per_gpu", cfg->batch_per_gpu}, {"num_gpus", cfg->num_gpus},
                               {"grad_accum", cfg->grad_accum}};
    int rc = eci_product(ctx, step, 3, INT_MAX, "samples per optimizer step", &samples);
    if (rc != EC_OK)
        return rc;
    if (r->text) {
        const eci_factor micro[] = {{"batch_per_gpu", cfg->batch_per_gpu}, {"seq_len", r->seq}};
        const eci_factor all[] = {{"batch_per_gpu", cfg->batch_per_gpu}, {"num_gpus", cfg->num_gpus},
                                  {"grad_accum", cfg->grad_accum}, {"seq_len", r->seq}};
        if ((rc = eci_product(ctx, micro, 2, INT_MAX, "tokens per GPU per micro-step", NULL)) != EC_OK ||
            (rc = eci_product(ctx, all, 4, exact, "tokens per optimizer step", NULL)) != EC_OK)
            return rc;
        /* the evaluation step takes eval_batch samples of the same length */
        const eci_factor eval[] = {{"eval_batch", cfg->eval_batch}, {"seq_len", r->seq}};
        if (cfg->eval_batch > 0 &&
            (rc = eci_product(ctx, eval, 2, INT_MAX, "tokens per GPU per evaluation step", NULL)) != EC_OK)
            return rc;
    }
    if (r->net != NULL && r->image_size > 0) {
        const eci_factor px[] = {{"batch_per_gpu", cfg->batch_per_gpu}, {"image_size", r->image_size},
                                 {"image_size", r->image_size}};
        if ((rc = eci_product(ctx, px, 3, (int64_t)1 << 40, "pixels per GPU per micro-step", NULL)) != EC_OK)
            return rc;
        const eci_factor epx[] = {{"eval_batch", cfg->eval_batch}, {"image_size", r->image_size},
                                  {"image_size", r->image_size}};
        if (cfg->eval_batch > 0 &&
            (rc = eci_product(ctx, epx, 3, (int64_t)1 << 40, "pixels per GPU per evaluation step", NULL)) != EC_OK)
            return rc;
        /* The first convolution (a ViT's patch embedding, a ResNet's stem) must fit the image;
         * the step model would refuse it too, without naming the key. */
        for (size_t i = 0; i < r->net->n_layers; i++) {
            const ec_layer *l = &r->net->layers[i];
            if (l->kind != EC_LAYER_CONV2D)
                continue;
            const ec_conv2d_layer *c = &l->u.conv2d;
            int pad = c->padding >= 0 ? c->padding : c->kernel / 2;
            if ((int64_t)r->image_size + 2 * (int64_t)pad < c->kernel)
                return eci_error(ctx, EC_EINVAL, "key 'image_size': %d pixels is smaller than the %d-pixel kernel of "
                                 "%s's first convolution (a patch of a vision transformer)", r->image_size, c->kernel,
                                 r->net->id);
            break;
        }
    }
    return EC_OK;
}

int eci_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r)
{
    memset(r, 0, sizeof *r);
    if (!ctx->models_loaded)
        return eci_error(ctx, EC_EMISUSE, "models are not loaded: call ec_ctx_load_models first");
    if (cfg->gpu[0] == '\0')
        return eci_error(ctx, EC_EINVAL, "key 'gpu' is required (`epochcast gpus` lists the ids)");
    if ((r->gpu = eci_hw_find(ctx, cfg->gpu)) == NULL)
        return EC_ENOTFOUND;
    if ((r->host = eci_host_find(ctx, cfg->host)) == NULL)
        return EC_ENOTFOUND;
    char prec[16], why[EC_ERRMSG_MAX / 2];
    if (r->gpu->refuse[0] != '\0' && ec_config_get(cfg, "precision", prec, sizeof prec) == EC_OK &&
        eci_hw_refusal(r->gpu, prec, why, sizeof why) != NULL) /* gpus.csv column refuse */
        return eci_error(ctx, EC_ENOTSUP, "gpu '%s' refuses precision=%s: %s", r->gpu->id, prec, why);
    if (cfg->batch_per_gpu < 1)
        return eci_error(ctx, EC_EINVAL, "key 'batch_per_gpu' is required: samples per GPU per micro-step (>= 1)");
    if (cfg->num_gpus < 1 || cfg->grad_accum < 1 || cfg->nodes < 1)
        return eci_error(ctx, EC_EINVAL, "num_gpus, grad_accum and nodes must be >= 1");
    if (cfg->model[0] == '\0' && cfg->gpu_step_s > 0) {
        /* a measured GPU step stands in for the model: no workload, no memory */
        r->seq = cfg->seq_len > 0 ? cfg->seq_len : 1;
        r->text = cfg->seq_len > 0;
    } else {
        if (cfg->model[0] == '\0')
            return eci_error(ctx, EC_EINVAL, "key 'model' is required (`epochcast models` lists the ids), "
                             "unless gpu_step_s gives a measured GPU step time");
        int rc;
        if ((r->net = eci_net_find_rc(ctx, cfg->model, &rc)) == NULL)
            return rc;
        const char *task = cfg->task[0] != '\0' ? cfg->task : r->net->default_task;
        if ((r->task = eci_task_parse(task)) < 0)
            return eci_error(ctx, EC_ENOTFOUND, "unknown task '%s' (%s)", task, eci_task_names());
        r->text = r->net->text;
        r->seq = r->text ? (cfg->seq_len > 0 ? cfg->seq_len : r->net->default_seq_len) : 0;
        r->image_size = r->text ? 0 : (cfg->image_size > 0 ? cfg->image_size : r->net->image_size);
        r->target_seq = r->net->encdec ? (cfg->target_len > 0 ? cfg->target_len : r->seq) : 0;
    }
    if (cfg->padding != EC_PAD_MAX_LENGTH && cfg->lengths[0] == '\0')
        return eci_error(ctx, EC_EINVAL, "key 'padding': padding=%s needs lengths= (a length histogram CSV or "
                         "lognormal(median,sigma), normal(mean,sd), uniform(lo,hi), fixed(n))",
                         cfg->padding == EC_PAD_DYNAMIC ? "dynamic" : "bucketed");
    if (cfg->lengths[0] != '\0' && (!r->text || r->seq < 1))
        return eci_error(ctx, EC_EINVAL, "key 'lengths': sequence lengths need a text model (or seq_len with gpu_step_s)");
    /* Packed sequences: a variable-length kernel (flash-attn's varlen functions, Transformer Engine's
     * THD layout with cu_seqlens) attends within each packed sequence; SDPA and eager attention
     * run the whole sample under a block-diagonal mask, and MPT's Triton kernel has no varlen form. */
    if (cfg->packed_seq_len > 0 && (!r->text || r->seq < 1))
        return eci_error(ctx, EC_EINVAL, "key 'packed_seq_len': packed sequences need a text model");
    if (cfg->packed_seq_len > 0 && (cfg->attention == EC_ATTN_SDPA || cfg->attention == EC_ATTN_EAGER ||
                                    cfg->attention == EC_ATTN_FLASH_TRITON))
        return eci_error(ctx, EC_EINVAL, "key 'packed_seq_len': packed sequences attend within each sequence only "
                         "with a variable-length kernel (attention=flash, flash1, flash3, flash4 or cudnn), not attention=%s",
                         cfg->attention == EC_ATTN_SDPA ? "sdpa" : cfg->attention == EC_ATTN_EAGER ? "eager" : "triton");
    if (cfg->packed_seq_len > 0 && cfg->padding != EC_PAD_MAX_LENGTH)
        return eci_error(ctx, EC_EINVAL, "key 'packed_seq_len': a pack is seq_len tokens long; padding=%s pads "
                         "single sequences instead", cfg->padding == EC_PAD_DYNAMIC ? "dynamic" : "bucketed");
    /* What torch.utils.data.DataLoader itself refuses (ValueError in its __init__).  Its
     * prefetch_factor with num_workers=0 is refused too, but run records (bench/harness)
     * write the column on every row: there it is a key with no effect (ignored_keys). */
    if (cfg->num_workers == 0 && cfg->persistent_workers)
        return eci_error(ctx, EC_EINVAL, "key 'persistent_workers': persistent_workers=1 needs num_workers > 0 "
                         "(PyTorch's DataLoader raises ValueError)");
    r->strategy = cfg->strategy;
    /* strategy is the docs/DESIGN.md default: single for one GPU, ddp for several unless given */
    if (cfg->num_gpus > 1 && r->strategy == EC_STRATEGY_SINGLE) {
        if (eci_config_given(ctx, cfg, ECI_KEY_STRATEGY))
            return eci_error(ctx, EC_EINVAL, "strategy=single with num_gpus=%d: use strategy=ddp or dp", cfg->num_gpus);
        r->strategy = EC_STRATEGY_DDP;
    }
    if (cfg->num_gpus == 1 && r->strategy != EC_STRATEGY_FSDP && r->strategy != EC_STRATEGY_ZERO)
        r->strategy = EC_STRATEGY_SINGLE; /* FSDP and ZeRO on one GPU still offload */
    r->topology = cfg->topology[0] != '\0' ? cfg->topology : r->gpu->default_topology;
    if (cfg->memory_headroom_bytes > r->gpu->memory_bytes)
        return eci_error(ctx, EC_EINVAL, "key 'memory_headroom_gib': %.2f GiB is more than the %.2f GiB of %s",
                         cfg->memory_headroom_bytes / 1073741824.0, r->gpu->memory_bytes / 1073741824.0, r->gpu->id);
    if (cfg->optimizer_in_bwd && cfg->grad_accum > 1) /* torchtune refuses it: the step would see one micro-step */
        return eci_error(ctx, EC_EINVAL, "key 'optimizer_in_bwd': optimizer_in_bwd=1 steps in every backward, so it "
                         "cannot accumulate gradients (grad_accum=%d); torchtune refuses the pair", cfg->grad_accum);
    int rc = resolve_checks(ctx, cfg, r);
    return rc != EC_OK ? rc : eci_layout_resolve(ctx, cfg, r);
}

void eci_resolved_config(const ec_config *cfg, const eci_resolved *r, ec_config *out)
{
    *out = *cfg;
    eci_strlcpy(out->gpu, r->gpu->id, sizeof out->gpu);
    eci_strlcpy(out->host, r->host->id, sizeof out->host);
    out->strategy = r->strategy;
    out->nodes = r->nodes;
    eci_strlcpy(out->topology, r->topology, sizeof out->topology);
    if (r->net != NULL) {
        if (out->task[0] == '\0')
            eci_strlcpy(out->task, r->net->default_task, sizeof out->task);
        if (r->text && r->seq > 0)
            out->seq_len = r->seq;
        if (r->image_size > 0)
            out->image_size = r->image_size;
        if (r->target_seq > 0)
            out->target_len = r->target_seq;
    }
}

int ec_config_resolve(ec_ctx *ctx, const ec_config *cfg, ec_config *out)
{
    if (ctx == NULL || cfg == NULL || out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_config_resolve: NULL argument") : EC_EMISUSE;
    eci_resolved r;
    int rc = eci_resolve(ctx, cfg, &r);
    if (rc != EC_OK)
        return rc;
    if (out != cfg) {
        eci_resolved_config(cfg, &r, out);
    } else { /* resolved in place: through a copy */
        ec_config c;
        eci_resolved_config(cfg, &r, &c);
        *out = c;
    }
    return EC_OK;
}
