/*
 * ec_test_wl.h: building a language model's workload (model/workload.h) straight from a shape,
 * and lookups in it, shared by the unit tests that check which ops a network's op list holds:
 * the shape the planner would hand an HF-eager LM, the workload of a preset or config, how many
 * ops carry a name, and the first of them.
 */
#ifndef EC_TEST_WL_H
#define EC_TEST_WL_H

#include "ec_test.h"
#include "model/workload.h"

#include <string.h>

/* The shape of an LM step as the planner fills it for HF's eager kernels (dropout masks of a
 * byte, BERT's 15% MLM rows, one kernel per GELU, RMSNorm and RoPE, RMSNorm's two passes);
 * every other field zero, for the test to set. */
static inline eci_shape ec_test_lm_shape(int precision, double batch, double seq)
{
    return (eci_shape){.precision = precision, .batch = batch, .seq = seq, .seq_sq = seq * seq, .target_seq = seq,
                       .mask_bytes = 1, .mlm_frac = 0.15, .gelu_new_kernels = 1, .rmsnorm_kernels = 1,
                       .rmsnorm_passes = 2, .rope_kernels = 1};
}

/* The causal-LM workload of `model` (a preset or a config the context resolves) at shape *sh;
 * fails the test when it cannot be built. */
static inline const eci_workload *ec_test_lm_workload(ec_ctx *ctx, const char *model, const eci_shape *sh)
{
    const eci_net *net = eci_net_find(ctx, model);
    if (net == NULL)
        fail_msg("%s: %s", model, ec_ctx_errmsg(ctx));
    const eci_workload *wl;
    if (eci_workload_get(ctx, net, eci_task_parse("lm"), sh, &wl) != EC_OK)
        fail_msg("%s: %s", model, ec_ctx_errmsg(ctx));
    return wl;
}

static inline size_t ec_test_count_ops(const eci_workload *wl, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < wl->n_ops; i++)
        n += strcmp(wl->ops[i].name, name) == 0;
    return n;
}

/* The first op named `name`; fails the test when there is none. */
static inline const eci_op *ec_test_first_op(const eci_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->n_ops; i++)
        if (strcmp(wl->ops[i].name, name) == 0)
            return &wl->ops[i];
    fail_msg("no op '%s'", name);
    return NULL;
}

#endif
