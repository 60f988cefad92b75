/*
 * l2chain.c: which memory-bound kernels read what the kernel launched just before them wrote,
 * and how many bytes moved in between (the reuse distance), so that compute.c can read those
 * bytes at L2 speed where they are still in L2 (models/l2.csv).  The builders mark an op
 * (eci_op.l2_chain) whose first input is the output of the op before it: eager attention's
 * scale, mask, softmax, dropout and cast on the s x s scores and the context GEMM reading the
 * probabilities, and the stream's elementwise kernels (activation, dropout, gated product, and the
 * residual add and norm where their input comes from their own layer, as a norm's from its cast).
 * Forward, a marked MEM or CAST op reads min(producer's output, its own reads) from its producer
 * (a MEM/CAST op, or a GEMM: its m x n x batch output); backward, an op whose consumer is marked
 * reads the gradient of its output that the consumer's backward (run just before it) wrote.
 * The reuse distance of element x (0 first, 1 last) of that tensor grows linearly from the
 * producer's traffic (every byte it moves after writing the first element) to the tensor plus
 * the consumer's writes (every byte moved before the consumer reads the last one): the two ends
 * are kept per pass, the share of the tensor within the GPU's usable L2 is compute.c's.
 * A chain stays within one layer of the network description (eci_op.layer): which kernel runs
 * before a layer's first one depends on where the layer sits (the op before a repeated block is
 * the embedding's for the block that is priced once and stands for every repetition), so a
 * layer's first kernel reads its input from DRAM; a REPEAT then prices as its unrolled layers.
 * Runs on the final op list (after torch.compile's fusion, which keeps a chain's first member).
 * Inputs: the op list; constants.csv bwd_mem_bytes_factor (a memory-bound op's backward bytes).
 */
#include "model/workload.h"
#include "catalog/consts.h"

#include <string.h>

/* The op launched before ops[i] (markers launch nothing), or n when none. */
static size_t launched_before(const eci_workload *wl, size_t i)
{
    while (i-- > 0)
        if (wl->ops[i].fwd_kernels > 0)
            return i;
    return wl->n_ops;
}

static int elementwise(const eci_op *op)
{
    return op->kind == ECI_OP_MEM || op->kind == ECI_OP_CAST;
}

/* A producer's output bytes and the bytes its pass moves: forward (pass 0) or backward (1). */
static int produced(const eci_op *p, int pass, double bwd_factor, double *out, double *traffic)
{
    if (elementwise(p)) {
        *out = p->out_bytes;
        *traffic = pass == 0 ? p->fwd_bytes : (p->bwd_bytes > 0 ? p->bwd_bytes : p->fwd_bytes * bwd_factor);
        return *out > 0 && *traffic > 0;
    }
    double mn = p->m * p->n * p->batch;
    if (p->kind != ECI_OP_GEMM || mn <= 0 || p->keep_bytes <= 0)
        return 0;
    double e = p->keep_bytes / mn, mk = p->m * p->k * p->batch, kn = p->k * p->n * p->batch;
    *out = p->keep_bytes;
    /* forward: A, B read and C written; backward: the data gradient, then the weight gradient
     * (autograd computes the first input's gradient first) */
    *traffic = (pass == 0 ? 1.0 : 2.0) * (mk + kn + mn) * e;
    return 1;
}

void eci_wl_l2_chains(const ec_ctx *ctx, eci_workload *wl)
{
    double bwd_factor = eci_const(ctx, EC_C_bwd_mem_bytes_factor);
    for (size_t i = 0; i < wl->n_ops; i++) {
        eci_op *op = &wl->ops[i];
        memset(op->l2_in_bytes, 0, sizeof op->l2_in_bytes);
        memset(op->l2_reuse_bytes, 0, sizeof op->l2_reuse_bytes);
    }
    for (size_t i = 0; i < wl->n_ops; i++) {
        eci_op *op = &wl->ops[i];
        if (!op->l2_chain || op->fwd_kernels == 0)
            continue;
        size_t j = launched_before(wl, i);
        if (j == wl->n_ops)
            continue;
        eci_op *p = &wl->ops[j];
        if (p->layer != op->layer) /* within one layer of the description only */
            continue;
        double out, traffic;
        /* forward: this op reads its producer's output */
        if (elementwise(op) && op->count == 1 && produced(p, 0, bwd_factor, &out, &traffic)) {
            double reads = op->fwd_bytes - op->out_bytes;
            op->l2_in_bytes[0] = out < reads ? out : reads;
            op->l2_reuse_bytes[0][0] = traffic;
            op->l2_reuse_bytes[0][1] = out + op->out_bytes;
        }
        /* backward: the producer reads the gradient of its output, which this op's backward wrote */
        if (elementwise(p) && p->bwd && op->bwd && p->count == 1 && produced(op, 1, bwd_factor, &out, &traffic)) {
            double grad = p->out_bytes, bytes = p->bwd_bytes > 0 ? p->bwd_bytes : p->fwd_bytes * bwd_factor;
            p->l2_in_bytes[1] = grad < bytes ? grad : bytes;
            p->l2_reuse_bytes[1][0] = traffic;
            p->l2_reuse_bytes[1][1] = grad + (p->fwd_bytes - p->out_bytes); /* + its input's gradient */
        }
    }
}
