/*
 * fusion.c: what torch.compile (TorchInductor) does to the op list of one forward micro-step
 * (workload.c): every chain of elementwise, normalization and cast kernels between two
 * extern kernels (cuBLAS GEMMs, cuDNN convolutions, fused attention) becomes one generated
 * Triton kernel, forward and backward alike.  The fused kernel reads the chain's inputs once
 * and writes its output once: each tensor passed from one member to the next is neither
 * written nor read back, so the chain's traffic is
 *   bytes = sum(member bytes) - 2 x sum(bytes written by every member but the last),
 * never less than its largest member's.  What it keeps for backward, its parameters and its
 * launches are the members' (under torch.compile the builders already keep only what the
 * min-cut partitioner saves: eci_shape.remat; one launch forward; compute.c adds the
 * weight-gradient reduction of a norm in backward).  Weight casts (autocast's weight cache) stay kernels of
 * their own, one per weight, and never break a chain; gathers with a special backward
 * (embeddings), markers and ops of a Python loop (MoE experts) are left alone.  Chains never
 * cross a repeated block's boundary, so the blocks survive with new bounds.
 * Inputs: the op list; no constants (the rule is structural).
 */
#include "model/workload.h"

#include <string.h>

/* The autocast cast of a weight: workload.c names them "cast_w" (and "expert_cast_w"). */
static int weight_cast(const eci_op *op)
{
    size_t n = strlen(op->name);
    return op->kind == ECI_OP_CAST && n >= 6 && strcmp(op->name + n - 6, "cast_w") == 0;
}

static int fusable(const eci_op *op)
{
    return (op->kind == ECI_OP_MEM || op->kind == ECI_OP_CAST) && op->fwd_kernels > 0 && op->count == 1 &&
           op->bwd_bytes == 0 && !weight_cast(op);
}

typedef struct chain {
    size_t at;           /* index of the fused op in the compacted list */
    int open;
    int block;
    double bytes, internal, largest;
} chain;

static void close_chain(eci_workload *wl, chain *c)
{
    if (!c->open)
        return;
    eci_op *f = &wl->ops[c->at];
    double bytes = c->bytes - c->internal;
    f->fwd_bytes = bytes > c->largest ? bytes : c->largest;
    c->open = 0;
}

void eci_fusion_apply(eci_workload *wl)
{
    size_t w = 0, began = 0, ended = 0; /* blocks whose begin / end were rewritten (in op order) */
    chain c = {0};
    for (size_t i = 0; i < wl->n_ops; i++) {
        while (ended < began && wl->blocks[ended].end == i) {
            close_chain(wl, &c);
            wl->blocks[ended++].end = w;
        }
        while (began < wl->n_blocks && wl->blocks[began].begin == i) {
            close_chain(wl, &c);
            wl->blocks[began++].begin = w;
        }
        eci_op op = wl->ops[i];
        if (!fusable(&op)) {
            if (!weight_cast(&op))
                close_chain(wl, &c);
            wl->ops[w++] = op;
            continue;
        }
        if (c.open && c.block == op.block) {
            eci_op *f = &wl->ops[c.at];
            c.internal += 2.0 * f->out_bytes; /* the previous member's output stays on chip */
            c.bytes += op.fwd_bytes;
            if (op.fwd_bytes > c.largest)
                c.largest = op.fwd_bytes;
            f->saved_bytes += op.saved_bytes;
            f->params += op.params;
            f->param_tensors += op.param_tensors;
            f->bwd = f->bwd || op.bwd;
            f->out_bytes = op.out_bytes;
            continue;
        }
        close_chain(wl, &c);
        op.name = "fused";
        op.kind = ECI_OP_MEM;
        op.fwd_kernels = 1;
        op.linear_bias = 0; /* a generated kernel of its own, even where a bias pass begins the chain */
        wl->ops[w] = op;
        c = (chain){.at = w, .open = 1, .block = op.block, .bytes = op.fwd_bytes, .largest = op.fwd_bytes};
        w++;
    }
    close_chain(wl, &c);
    while (ended < wl->n_blocks)
        wl->blocks[ended++].end = w;
    wl->n_ops = w;
}
