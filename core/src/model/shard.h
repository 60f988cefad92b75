/*
 * shard.h: sharded data parallelism (shard.c): FSDP's per-unit parameter all-gathers and
 * gradient reduce-scatters, and DeepSpeed ZeRO-3's, laid beside the compute of each unit.
 * sim/walk.c walks one unit (a repetition of a repeated block: a transformer layer) to learn
 * its compute time; this module schedules the collectives of all the block's units on the
 * communication stream and returns when the last unit's compute ends.
 */
#ifndef EC_SHARD_H
#define EC_SHARD_H

#include "model/comm.h"

typedef struct eci_shard {
    const eci_comm *comm;         /* the job's links and NCCL ramp */
    eci_group shard;              /* ranks a parameter is sharded over */
    eci_group replica;            /* hybrid sharding: ranks holding the same shard (n = 1: none) */
    int regather;                 /* parameters freed after forward: all-gathered again in backward */
    int limit;                    /* all-gathers in flight ahead of compute (FSDP's rate limiter) */
    double slowdown;              /* compute slowdown beside a collective (constants.csv) */
    double offload_bytes_per_s;   /* parameters fetched from host memory before each gather, 0: none */
    /* state, over one micro-step */
    double comm_free_s;           /* when the communication stream is next free */
    double gather_s, reduce_s;    /* collective time launched */
    double stretch_s;             /* compute time added by running beside collectives */
    double launches;              /* collectives launched (NCCL kernels) */
    /* a trace's recorder (sim/steprec.c), told of each collective launched with its unit (-1: the
     * root's, launched by eci_shard_launch), NULL (eci_setup_shard): none; unit_base numbers the
     * block's units after the blocks before it (set by the walk only when recording) */
    void (*on_launch)(void *arg, double start_s, double dur_s, int gather, int unit);
    void *on_launch_arg;
    int unit_base;
    /* Appended for issue 41: the units before this block's, so that its first gather is
     * prefetched as the one of the next unit in the same block is (a layer pattern's blocks) */
    double fwd_ends_s[8];         /* compute ends of the last units of the forward (a ring) */
    int fwd_done;                 /* forward units done this micro-step */
    double bwd_start_s;           /* start of the last backward unit; bwd_done: one was done */
    int bwd_done;
    /* FSDP2 (fully_shard, torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py; the same in
     * _composable/fsdp of April 2024): foreach_all_gather_copy_out's split_with_sizes_copy reads
     * the all-gather output and writes every parameter's unsharded tensor on the compute stream
     * before the unit runs; foreach_reduce(_scatter) copies the unsharded gradients (read in
     * their dtype) into one reduce-scatter input of the reduce dtype (torch.cat / _chunk_cat) on
     * the reduce-scatter stream before the collective.  0: none (FSDP1's FlatParameter is the
     * all-gather buffer itself; ZeRO-3). */
    double copy_bytes_per_s;      /* the GPU's memory-bound copy rate (compute.c's mem rate), 0: no copies */
    double grad_read_frac;        /* bytes of the unsharded gradient read per byte written to the reduce buffer */
    double copy_out_s;            /* state: copy-out time run on the compute stream this micro-step */
} eci_shard;

/* One all-gather of a unit's `bytes` (every rank's shard: the whole unit) over the shard group,
 * with the host fetch under offload. */
EC_INTERNAL double eci_shard_gather_s(const eci_shard *s, double bytes);
/* One reduction of a unit's gradients of `bytes`: reduce-scatter over the shard group, then
 * (hybrid) an all-reduce of the shard over the replicas. */
EC_INTERNAL double eci_shard_reduce_s(const eci_shard *s, double bytes);
/* FSDP2's copy-out of one gathered unit of `bytes` on the compute stream (0 without copies). */
EC_INTERNAL double eci_shard_copy_out_s(const eci_shard *s, double bytes);
/* Start a micro-step: the stream is free from t_s on; the running sums are cleared. */
EC_INTERNAL void eci_shard_begin(eci_shard *s, double t_s);
/* A collective launched at t_s on the stream: returns when it ends. */
EC_INTERNAL double eci_shard_launch(eci_shard *s, double t_s, double dur_s, int gather);
/* The forward of `reps` units of gather_bytes each, starting on the GPU at t0_s and computing
 * unit_s each: unit l waits for its all-gather, which the rate limiter issues once unit
 * l - limit has finished.  Returns when the last unit's compute ends. */
EC_INTERNAL double eci_shard_forward(eci_shard *s, double t0_s, double unit_s, int reps, double gather_bytes);
/* The backward of `reps` units (last first): each gathers again when regather (prefetched at the
 * start of the unit before it, BACKWARD_PRE) and reduce-scatters its reduce_bytes of gradients
 * when its compute ends.  Returns when the last unit's compute ends. */
EC_INTERNAL double eci_shard_backward(eci_shard *s, double t0_s, double unit_s, int reps, double gather_bytes,
                                      double reduce_bytes);

#endif /* EC_SHARD_H */
