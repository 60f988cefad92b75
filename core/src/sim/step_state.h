/*
 * step_state.h: the state one training step's model runs over, phase to phase (step.c), and
 * the result it is turned into (step_result.c).  Private to step.c and step_result.c.
 */
#ifndef EC_SIM_STEP_STATE_H
#define EC_SIM_STEP_STATE_H

#include "model/trainer.h"
#include "sim/step.h"
#include "sim/steprec.h"

/* ---- the step's state, phase to phase ------------------------------------------------------
 * eci_step_model runs as phases over one state: the ops priced (step_price), the plan the walks
 * read and the sizes of what is exchanged (step_plan), the host's dispatch costs
 * (step_dispatch), the timeline set up (step_begin), the micro-steps (micro_steps: each one's
 * inputs, forward, backward, exchanges and trainer work), the optimizer and what follows the
 * update (step_optimizer, step_after_update), then the result: breakdown, rates, memory. */
typedef struct step {
    ec_ctx *ctx;
    const ec_config *cfg;
    eci_resolved r;              /* the caller's resolution (step_finish hands back what the step learned) */
    const eci_params *calib;
    double gpu_scale;            /* multiplies every compute kernel (gpu_step_s calibrates it) */
    const eci_gpu *g;
    const eci_host *host;
    int n, ga;                   /* GPUs, gradient accumulation */
    int dp;                      /* DataParallel: one process, every exchange through GPU 0 */
    const eci_workload *wl;
    eci_rates rates;
    layout_comm lc;
    const eci_comm *comm;        /* &lc.comm */
    const eci_op_cost_t *cost;
    plan p;
    /* what is exchanged (step_plan) */
    double grad_bytes, bcast_bytes, trained_tensors, reduce_bytes;
    eci_shard shard;             /* per_unit: FSDP / ZeRO-3's units */
    int per_unit, bucketed, reduce_each_micro;
    double busbw, hop_s, copy_bw;
    double dp_chunk_bytes, dp_chunks, bcast_chunks, output_grad_bytes;
    double root, root_trained, root_gather_s, root_reduce_s, root_copy_s;
    int pinned;
    double h2d_s;
    double offload_wait_s[2];    /* CPU offloading's copies not hidden, forward and backward (setup.h) */
    /* the host's dispatch costs (step_dispatch) */
    double eager_fwd_s, eager_bwd_s, eager_op_s, model_fwd_s, model_bwd_s, model_op_s, replay_s, op_s;
    /* the timeline and the simulated micro-steps (step_begin, micro_steps) */
    int copy_batch;
    double syncs;
    eci_trainer tr;
    timeline t;
    double micro_s[3];
    double steady_s;             /* one micro-step without the reduction: the pipeline's micro-batch
                                    (rp->micro_s; the reducing one when ga <= 2 and not micro_wanted) */
    timeline micro_start, rep_micro; /* rep_micro: what the micro-step that repeats (rep) added */
    int simulate, rep;           /* micro-steps walked; the one that micro-steps simulate+1..ga repeat */
    double dp_comm_s;            /* DataParallel exchanges of the simulated micro-steps */
    double shard_comm[3];        /* per simulated micro-step: gathers + reductions launched, stretch */
    eci_ddp_sched sched;         /* DDP: only the last micro-step all-reduces (no_sync before) */
    double exposed_total;        /* bucketed reductions left after backward, all micro-steps simulated */
    double micro_fwd0, micro_bwd0; /* kernel time before the micro-step being walked */
    double rep_fwd_s, rep_bwd_s; /* kernel time of the micro-step that repeats */
    fwd_memo fwd_once;           /* the first micro-step's forward pass, for the later ones */
    double micro_t0;             /* the micro-step being walked: when its host started */
    int all_reduce;              /* ...whether its buckets are reduced */
    double exposed;              /* ...the reductions it left exposed */
    double scale_rest, micro_weight;
    /* the optimizer and the result */
    double w_shards, g_shards, o_shards, opt_params, opt_gpu_s, zero_gather_s;
    double zero_gather_wait_s;   /* ...the part of ZeRO-1/2's parameter all-gather the GPU waits for */
    double step_s, busy;
    eci_step_rec *rec;           /* a trace's record of the step (steprec.h), NULL: none */
} step;

/* The step's time and its breakdown (the repeated micro-steps added, the slowest GPU's wait). */
EC_INTERNAL int eci_step_breakdown(step *s, ec_result *res);
/* The step's rates: busy and host time, throughput, utilization, FLOPs, MFU and HFU. */
EC_INTERNAL void eci_step_rates(step *s, ec_result *res, double *host_s);
/* Memory: GPU 0, and under DataParallel the other GPUs. */
EC_INTERNAL void eci_step_memory(step *s, ec_result *res);

#endif /* EC_SIM_STEP_STATE_H */
