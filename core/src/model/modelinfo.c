/*
 * modelinfo.c: a model described for people (ec_model_summary_get, behind `epochcast
 * model-info`): its parameter count with a task head, model FLOPs per sample and per token,
 * the memory of weights, gradients and optimizer states at a precision and optimizer, and a
 * table of its layers with each one's parameters, FLOPs and saved activations.  Everything is
 * read off one expansion of one sample (workload.c), per description layer.
 */
#include "model/memory.h"
#include "model/layout.h"
#include "catalog/consts.h"
#include "model/optim.h"

#include <string.h>

/* The shape of one sample of cfg's model, as step_model builds it. */
static void sample_shape(const ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r, eci_shape *sh)
{
    *sh = (eci_shape){.precision = cfg->precision, .batch = 1, .seq = r->seq, .seq_sq = (double)r->seq * r->seq,
                      .target_seq = r->target_seq > 0 ? r->target_seq : r->seq, .image_size = r->image_size,
                      .mask_bytes = eci_const(ctx, EC_C_dropout_mask_bytes_per_elem),
                      .mlm_frac = cfg->mlm_all_positions ? 1.0 : eci_const(ctx, EC_C_mlm_mask_frac),
                      .eager_attention = cfg->attention == EC_ATTN_EAGER,
                      .gelu_new_kernels = (int)eci_const(ctx, EC_C_gelu_new_kernels),
                      .gelu_python_kernels = (int)eci_const(ctx, EC_C_gelu_python_kernels),
                      .act_impl = cfg->activation,
                      .rmsnorm_kernels = (int)eci_const(ctx, EC_C_rmsnorm_eager_kernels),
                      .rmsnorm_passes = eci_const(ctx, EC_C_rmsnorm_eager_passes),
                      .rmsnorm_fp32_passes = eci_const(ctx, EC_C_rmsnorm_eager_fp32_passes),
                      .rmsnorm_cast_kernels = (int)eci_const(ctx, EC_C_rmsnorm_eager_cast_kernels),
                      .rope_kernels = (int)eci_const(ctx, EC_C_rope_eager_kernels)};
}

static double op_flop(const eci_op *op)
{
    int matmul = op->kind == ECI_OP_GEMM || op->kind == ECI_OP_CONV || op->kind == ECI_OP_ATTN;
    return matmul ? 2.0 * op->m * op->n * op->k * op->batch * op->count : 0;
}

/* The rows: every description layer in order (depth from the repeats around it), then the
 * head.  An op counts towards its own layer and every repeat that holds it (parent chain).
 * Only top-level repeats stay blocks; one nested inside another is unrolled by the expansion,
 * so its ops appear `unroll` times, the product of the nested repeats' times: divided out to
 * give one repetition per row. */
static int fill_rows(ec_ctx *ctx, const eci_net *net, const eci_workload *wl, ec_layer_row *rows, size_t max)
{
    size_t n = net->n_layers;
    int *parent = eci_malloc(ctx, (n + 1) * sizeof *parent);
    double *unroll = eci_malloc(ctx, (n + 1) * sizeof *unroll);
    ec_layer_row *all = eci_calloc(ctx, n + 1, sizeof *all);
    if (parent == NULL || unroll == NULL || all == NULL) {
        eci_free(ctx, parent, 0);
        eci_free(ctx, unroll, 0);
        eci_free(ctx, all, 0);
        return EC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int p = i > 0 ? (int)i - 1 : -1; /* the enclosing repeat: walk up from the previous layer */
        while (p >= 0 && !(net->layers[p].kind == EC_LAYER_REPEAT && i <= (size_t)p + (size_t)net->layers[p].u.repeat.layers))
            p = parent[p];
        parent[i] = p;
        all[i] = (ec_layer_row){.index = (int)i + 1, .depth = p >= 0 ? all[p].depth + 1 : 0,
                                .kind = ec_layer_kind_name(net->layers[i].kind), .times = 1};
        unroll[i] = p >= 0 && parent[p] >= 0 ? unroll[p] * net->layers[p].u.repeat.times : 1;
        if (net->layers[i].kind == EC_LAYER_REPEAT)
            all[i].times = net->layers[i].u.repeat.times;
    }
    parent[n] = -1;
    unroll[n] = 1;
    all[n] = (ec_layer_row){.index = 0, .kind = "head", .times = 1};
    for (size_t k = 0; k < wl->n_ops; k++) {
        const eci_op *op = &wl->ops[k];
        for (int i = op->layer; i >= 0; i = parent[i]) {
            all[i].params += op->params * op->count;
            all[i].fwd_flop_per_sample += op_flop(op);
            all[i].saved_bytes_per_sample += op->saved_bytes * op->count;
        }
    }
    for (size_t i = 0; i <= n && i < max; i++) {
        /* a nested repeat's own ops were unrolled by its times as well */
        double u = unroll[i] * (i < n && parent[i] >= 0 && net->layers[i].kind == EC_LAYER_REPEAT ? all[i].times : 1);
        rows[i] = all[i];
        rows[i].params /= u;
        rows[i].fwd_flop_per_sample /= u;
        rows[i].saved_bytes_per_sample /= u;
    }
    eci_free(ctx, parent, (n + 1) * sizeof *parent);
    eci_free(ctx, unroll, (n + 1) * sizeof *unroll);
    eci_free(ctx, all, (n + 1) * sizeof *all);
    return EC_OK;
}

int ec_model_summary_get(ec_ctx *ctx, const ec_config *cfg, ec_model_summary *out, ec_layer_row *rows,
                         size_t max_rows)
{
    if (ctx == NULL || cfg == NULL || out == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_model_summary_get: NULL argument") : EC_EMISUSE;
    memset(out, 0, sizeof *out);
    ec_config c = *cfg;
    if (c.gpu[0] == '\0') /* resolution wants a GPU and a batch; the summary uses neither */
        eci_strlcpy(c.gpu, ctx->n_gpus > 0 ? ctx->gpus[0].id : "", sizeof c.gpu);
    c.batch_per_gpu = 1;
    eci_resolved r;
    int rc = eci_resolve(ctx, &c, &r);
    if (rc != EC_OK)
        return rc;
    if (r.net == NULL)
        return eci_error(ctx, EC_EINVAL, "key 'model' is required");
    eci_shape sh;
    sample_shape(ctx, &c, &r, &sh);
    eci_workload wl = {0};
    if ((rc = eci_workload_expand(ctx, r.net, r.task, &sh, &wl)) != EC_OK) {
        eci_workload_release(ctx, &wl);
        return rc;
    }
    double w, g, o;
    eci_optim opt;
    eci_optim_get(ctx, cfg->optimizer, &opt);
    eci_memory_param_bytes(ctx, cfg->precision, cfg->optimizer, &w, &g, &o);
    out->params = wl.params;
    out->tokens_per_sample = r.net->text ? r.seq : 1;
    out->fwd_flop_per_sample = wl.model_flop;
    out->bwd_flop_per_sample = 2.0 * wl.model_flop;
    out->weights_bytes = wl.params * w;
    out->grads_bytes = wl.params * g;
    /* an fp32 master copy of a pure 16-bit model (apex amp O2): fp32 states beside the master weights */
    int master = cfg->master_weights && opt.steps && (cfg->precision == EC_PREC_FP16 || cfg->precision == EC_PREC_BF16);
    out->optimizer_bytes = eci_optim_state_bytes(ctx, &opt, &wl, master ? EC_PREC_FP32 : cfg->precision) +
                           (master ? 4.0 * wl.trainable_params : 0);
    out->activations_bytes_per_sample = eci_workload_saved_bytes(&wl, 0, 1.0);
    out->n_rows = r.net->n_layers + 1;
    if (rows != NULL && max_rows > 0)
        rc = fill_rows(ctx, r.net, &wl, rows, max_rows);
    eci_workload_release(ctx, &wl);
    return rc;
}
