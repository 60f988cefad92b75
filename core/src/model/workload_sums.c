/*
 * workload_sums.c: what an expanded op list adds up to.  A pipeline stage's share of it
 * (keep_stage, before the sums), the workload's and its blocks' parameters, FLOPs and saved
 * bytes, and the questions memory.c and sim/ ask of them: activation bytes kept under
 * checkpointing, FLOPs recomputed, the largest FSDP unit.  The op list comes from workload.c
 * (eci_workload_expand); the network from net.c.
 */
#include "model/workload_build.h"

int eci_net_pipeline_layers(const eci_net *net)
{
    int layers = 0;
    for (size_t i = 0; i < net->n_layers; i++) {
        if (net->layers[i].kind != EC_LAYER_REPEAT)
            continue;
        layers += net->layers[i].u.repeat.times;
        i += (size_t)net->layers[i].u.repeat.layers; /* a nested repeat is unrolled inside its block */
    }
    return layers;
}

/* Layers of [off, off + n) inside [lo, hi). */
static int overlap(int off, int n, int lo, int hi)
{
    int a = off > lo ? off : lo, z = off + n < hi ? off + n : hi;
    return z > a ? z - a : 0;
}

/* Keep the ops of pipeline stage [lo, hi) (Megatron's split of the layers): each block its
 * repetitions inside the range; an op outside the blocks goes with the layer after it (the
 * embeddings with the first stage), the head with the last layer.  A tied projection on a
 * stage without the embedding holds its own copy of the weights (Megatron keeps one on the last
 * stage and all-reduces the two copies' gradients). */
void eci_wl_keep_stage(eci_workload *wl, int lo, int hi)
{
    int total = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        total += wl->blocks[b].reps;
    size_t out = 0, nb = 0, b = 0, i = 0;
    int off = 0;
    while (i < wl->n_ops) {
        if (b < wl->n_blocks && i == wl->blocks[b].begin) {
            eci_block blk = wl->blocks[b];
            int k = overlap(off, blk.reps, lo, hi);
            off += blk.reps;
            i = blk.end;
            b++;
            if (k == 0)
                continue;
            size_t begin = out;
            for (size_t j = blk.begin; j < blk.end; j++) {
                wl->ops[out] = wl->ops[j];
                wl->ops[out++].block = (int)nb;
            }
            blk.begin = begin;
            blk.end = out;
            blk.reps = k;
            wl->blocks[nb++] = blk; /* nb < b: a block already read */
            continue;
        }
        int owner = b < wl->n_blocks ? off : total - 1;
        if (owner >= lo && owner < hi) {
            wl->ops[out] = wl->ops[i];
            if (wl->ops[out].tied && lo > 0) {
                eci_op *op = &wl->ops[out];
                op->params += op->n * op->k;
                op->param_tensors += 1;
            }
            out++;
        }
        i++;
    }
    wl->n_ops = out;
    wl->n_blocks = nb;
}

/* What checkpointing=selective_op keeps, as torchtitan's per-op selective activation checkpointing
 * runs (torchtitan/parallelisms/parallelize_llama.py at 9dec370, Dec 2024: _save_list and
 * _apply_ac_to_transformer_block; no_recompute_list at 157a12c, April 2024; later in
 * torchtitan/models/llama3/infra/parallelize.py): its policy saves the outputs of the ops in the
 * list (aten.mm, SDPA's flash and memory-efficient attention, c10d reduce_scatter_tensor; from late
 * 2024 also aten.abs and aten.max for float8's amax, not counted here) except every second mm of a block
 * (meta["forward_mm_count"] % 2 == 0 after the count: mm 1, 3, 5, ... kept; Llama's wq, wv, w1, w2 of
 * wq, wk, wv, wo, w1, w3, w2) and recomputes everything else in backward: norms, RoPE, SiLU and
 * the gate product, the other mms, batched matmuls (bmm is not aten.mm) and convolutions.  An op
 * run `count` times is kept when most of its runs are; the amax reductions are too small to count. */
static void mark_op_keep(eci_workload *wl)
{
    int last = -1;
    long mm = 0; /* mms of the current block so far */
    for (size_t i = 0; i < wl->n_ops; i++) {
        eci_op *op = &wl->ops[i];
        if (op->block != last) {
            last = op->block;
            mm = 0;
        }
        op->op_keep = 0;
        if (op->block < 0)
            continue;
        if (op->kind == ECI_OP_GEMM && op->batch == 1 && !op->attn_core) {
            long runs = op->count > 1 ? op->count : 1, kept = (mm + runs + 1) / 2 - (mm + 1) / 2; /* odd ones */
            op->op_keep = 2 * kept >= runs;
            mm += runs;
        } else if (op->kind == ECI_OP_ATTN || (op->kind == ECI_OP_COMM && op->fwd_coll == ECI_COLL_REDUCE_SCATTER)) {
            op->op_keep = 1;
        }
    }
}

void eci_wl_sum_up(eci_workload *wl)
{
    mark_op_keep(wl);
    wl->params = wl->param_tensors = wl->model_flop = wl->matmul_params = 0;
    wl->trainable_params = wl->trainable_tensors = wl->quant_params = wl->frozen_flop = wl->expert_params = 0;
    wl->fp8_trained_params = wl->fp8_frozen_params = 0;
    wl->saved_other_bytes = wl->table_params = 0;
    wl->tied_head = 0;
    wl->comm_begin = wl->comm_end = 0;
    wl->host_syncs = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        wl->blocks[b].saved_bytes = wl->blocks[b].params = wl->blocks[b].flop = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        wl->blocks[b].core_saved_bytes = wl->blocks[b].core_flop = wl->blocks[b].trainable = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        wl->blocks[b].fp8_trainable = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        wl->blocks[b].op_keep_bytes = wl->blocks[b].op_keep_flop = 0;
    for (size_t i = 0; i < wl->n_ops; i++) {
        if (wl->ops[i].params <= 0) /* frozen means frozen weights: an op without any computes as usual */
            wl->ops[i].frozen = 0;
        const eci_op *op = &wl->ops[i];
        const eci_block *blk = op->block >= 0 ? &wl->blocks[op->block] : NULL;
        double reps = blk != NULL ? blk->reps : 1, preps = blk != NULL && blk->shared_params ? 1 : reps;
        double saved = op->saved_bytes * op->count;
        if (blk != NULL)
            wl->blocks[op->block].saved_bytes += saved;
        else
            wl->saved_other_bytes += saved;
        /* an op run once per expert owns each expert's weights */
        wl->params += op->params * op->count * preps;
        wl->param_tensors += op->param_tensors * op->count * preps;
        if (!op->frozen) {
            wl->trainable_params += op->params * op->count * preps;
            wl->trainable_tensors += op->param_tensors * op->count * preps;
            if (op->expert)
                wl->expert_params += op->params * op->count * preps;
        } else if (op->quant) {
            wl->quant_params += op->params * op->count * preps;
        }
        wl->matmul_params += op->cast_params * op->count * preps;
        if (op->fp8 && op->kind == ECI_OP_GEMM)
            *(op->frozen ? &wl->fp8_frozen_params : &wl->fp8_trained_params) += op->params * op->count * preps;
        if (op->kind == ECI_OP_MEM && op->bwd_bytes > 0 && op->params > wl->table_params)
            wl->table_params = op->params;
        if (op->kind == ECI_OP_GEMM && op->cast_params > 2.0 * op->params)
            wl->tied_head = 1; /* a projection through a weight it does not own */
        wl->host_syncs += op->host_sync != 0;
        if (op->kind == ECI_OP_COMM) {
            if (wl->comm_end == 0)
                wl->comm_begin = i;
            wl->comm_end = i + 1;
        }
        double flop = 0;
        if (op->kind == ECI_OP_GEMM || op->kind == ECI_OP_CONV || op->kind == ECI_OP_ATTN)
            flop = 2.0 * op->m * op->n * op->k * op->batch * op->count;
        wl->model_flop += flop * reps;
        if (op->kind == ECI_OP_CONV)
            wl->conv_flop += flop * reps;
        if (op->frozen && op->kind != ECI_OP_MEM)
            wl->frozen_flop += flop * reps;
        if (blk != NULL) {
            wl->blocks[op->block].params += op->params * op->count;
            wl->blocks[op->block].trainable += op->frozen ? 0 : op->params * op->count;
            if (op->fp8 && op->kind == ECI_OP_GEMM && !op->frozen)
                wl->blocks[op->block].fp8_trainable += op->params * op->count;
            wl->blocks[op->block].flop += flop;
            if (op->op_keep) {
                wl->blocks[op->block].op_keep_bytes += op->keep_bytes * op->count;
                wl->blocks[op->block].op_keep_flop += flop;
            }
            if (op->attn_core && op->kind != ECI_OP_ATTN) { /* a fused kernel recomputes in its own backward */
                wl->blocks[op->block].core_saved_bytes += saved;
                wl->blocks[op->block].core_flop += flop;
            }
        }
    }
    size_t next = wl->comm_end; /* chain the collectives, last to first */
    for (size_t i = wl->comm_end; i-- > wl->comm_begin;)
        if (wl->ops[i].kind == ECI_OP_COMM) {
            wl->ops[i].next_comm = next;
            next = i;
        }
    wl->loop_block = -1;
    for (size_t b = 0; b < wl->n_blocks && wl->loop_block < 0; b++)
        if (wl->blocks[b].checkpoint)
            wl->loop_block = (int)b;
}

double eci_workload_saved_bytes(const eci_workload *wl, int checkpointing, double copies)
{
    double acts = wl->saved_other_bytes, live = 0;
    size_t units = 0; /* checkpointed blocks: a block of one repetition saves memory only beside others
                         (Gemma 3's and Llama 4's runs of alike layers) */
    for (size_t i = 0; i < wl->n_blocks; i++)
        units += wl->blocks[i].checkpoint && wl->blocks[i].reps >= 1;
    for (size_t i = 0; i < wl->n_blocks; i++) {
        const eci_block *blk = &wl->blocks[i];
        if (checkpointing == EC_CKPT_SELECTIVE && blk->checkpoint) {
            acts += blk->reps * (blk->saved_bytes - blk->core_saved_bytes);
        } else if (checkpointing && blk->checkpoint && (blk->reps > 1 || (blk->reps == 1 && units > 1))) {
            /* each repetition's input (selective_op: and the outputs it caches); one recomputed at a time */
            acts += blk->reps * (blk->input_bytes + (checkpointing == EC_CKPT_OP ? blk->op_keep_bytes : 0));
            if (blk->saved_bytes > live)
                live = blk->saved_bytes;
        } else {
            acts += blk->reps * blk->saved_bytes;
        }
    }
    return copies * acts + live;
}

const eci_block *eci_workload_layers(const eci_workload *wl)
{
    const eci_block *most = NULL;
    for (size_t b = 0; b < wl->n_blocks; b++)
        if (wl->blocks[b].checkpoint && (most == NULL || wl->blocks[b].reps > most->reps))
            most = &wl->blocks[b];
    return most;
}

int eci_workload_offloaded_layers(const eci_workload *wl, int asked)
{
    const eci_block *blk = eci_workload_layers(wl);
    int most = blk != NULL ? blk->reps - 1 : 0;
    return asked <= 0 || most <= 0 ? 0 : asked < most ? asked : most;
}

double eci_workload_recompute_flop(const eci_workload *wl, int checkpointing)
{
    double flop = 0;
    if (checkpointing)
        for (size_t b = 0; b < wl->n_blocks; b++)
            if (wl->blocks[b].checkpoint)
                flop += (checkpointing == EC_CKPT_SELECTIVE ? wl->blocks[b].core_flop
                         : checkpointing == EC_CKPT_OP      ? wl->blocks[b].flop - wl->blocks[b].op_keep_flop
                                                            : wl->blocks[b].flop) *
                        wl->blocks[b].reps;
    return flop;
}

double eci_workload_largest_unit(const eci_workload *wl)
{
    double most = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        if (wl->blocks[b].params > most)
            most = wl->blocks[b].params;
    return most;
}

/* Megatron's fp8_param_gather, which NeMo's fp8_params turns on beside TE's FP8 parameters: "keep
 * the compute param in fp8 (no intermediate dtype) and perform the param all-gather in fp8"
 * (megatron/core/distributed/distributed_data_parallel_config.py): the updated shard is cast and
 * the FP8 buffer gathered, a byte an element; the other trained parameters (norms, embeddings, the
 * head) are gathered in the compute dtype (workload.h). */
double eci_workload_gather_bytes(double elem_bytes, int fp8_gather, double trained, double fp8)
{
    double fewer = fp8_gather && elem_bytes > 1.0 ? fp8 * (elem_bytes - 1.0) : 0;
    return trained * elem_bytes - fewer;
}

/* What the blocks leave of fp8_trained_params, counted as eci_wl_sum_up counts it (workload.h). */
double eci_workload_root_fp8(const eci_workload *wl)
{
    double in_blocks = 0;
    for (size_t b = 0; b < wl->n_blocks; b++)
        in_blocks += wl->blocks[b].fp8_trainable * (wl->blocks[b].shared_params ? 1 : wl->blocks[b].reps);
    return wl->fp8_trained_params > in_blocks ? wl->fp8_trained_params - in_blocks : 0;
}
