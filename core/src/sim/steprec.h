/*
 * steprec.h: what the step model records of one optimizer step when a trace asks for it
 * (trace.c sets ctx->step_rec while it prepares the epoch; NULL, the default, records nothing
 * and costs a test per phase).  step.c closes each phase of the compute stream (copy, forward,
 * backward, exposed exchange, the trainer's sync, the optimizer, the bookkeeping) at the
 * timeline's clocks; the Reducer (comm.c) and the sharded units (shard.c) report each
 * collective they launch through their on_launch hooks; stages.c hands over each pipeline
 * stage's micro-batch.  The times run from the step's start, as the step model keeps them;
 * steprec.c lays micro-steps the model repeats by multiplication out one after another.
 */
#ifndef EC_SIM_STEPREC_H
#define EC_SIM_STEPREC_H

#include "base/base.h"

/* Tracks of the step's record (trace.c numbers them in the file). */
enum { ECI_REC_COMPUTE = 0, ECI_REC_COMM, ECI_REC_STAGE0 };

#define ECI_REC_NAME_MAX 48
#define ECI_REC_MAX_STAGES 256

typedef struct eci_rec_event {
    int track;                   /* ECI_REC_COMPUTE, ECI_REC_COMM, or ECI_REC_STAGE0 + stage */
    char name[ECI_REC_NAME_MAX];
    const char *cat;             /* static: "phase", "fsdp", "ddp", "zero", "pipeline" */
    const char *pass;            /* static: "forward", "backward", or NULL */
    int micro;                   /* micro-step (micro-batch), -1: once per step */
    int unit;                    /* FSDP unit, DDP bucket, pipeline micro-batch; -1: none (-2: FSDP's root) */
    double start_s, dur_s;       /* from the start of the optimizer step */
    double bytes;                /* collectives: bytes reduced (0: not known) */
    const char *algo;            /* static: NCCL's algorithm of a DDP/ZeRO bucket ("ring", "tree"); NULL: none */
} eci_rec_event;

typedef struct eci_step_rec {
    ec_ctx *ctx;                 /* allocates ev */
    eci_rec_event *ev;
    size_t n, cap;
    int nomem;                   /* an event could not be stored */
    /* while the step model runs */
    double boundary_s;           /* end of the last phase closed on the compute stream */
    int micro;                   /* the micro-step being walked */
    const char *pass;            /* its pass */
    int bucket;                  /* DDP buckets launched in this micro-step */
    int root;                    /* the next sharded launch is the root unit's */
    size_t micro_first[3];       /* first event of each simulated micro-step (at most three) */
    size_t micro_last[3];        /* ...one past its last */
    double micro_t0[3], micro_t1[3]; /* their starts and ends */
    int simulate, ga;            /* micro-steps walked, and in the step */
    int max_micro;               /* micro-steps worth laying out (the trace's length; 0: all) */
    double step_s;               /* the step's length (the straggler's wait included) */
    /* pipeline parallelism (stages.c): each stage's micro-batch */
    int pp;                      /* stages (0: none) */
    double stage_fwd_s[ECI_REC_MAX_STAGES], stage_bwd_s[ECI_REC_MAX_STAGES], stage_p2p_s[ECI_REC_MAX_STAGES];
    double stage_tail_s[ECI_REC_MAX_STAGES];
    int stage_first[ECI_REC_MAX_STAGES], stage_layers[ECI_REC_MAX_STAGES];
} eci_step_rec;

/* A new step: the record emptied (its allocation and max_micro kept). */
EC_INTERNAL void eci_rec_begin(eci_step_rec *r, int ga, int simulate);
/* Close the compute stream's phase `name` at end_s (from the last boundary; nothing when empty). */
EC_INTERNAL void eci_rec_phase(eci_step_rec *r, const char *name, double end_s);
/* A micro-step starts (at t0_s) or ends (at t1_s). */
EC_INTERNAL void eci_rec_micro_begin(eci_step_rec *r, int micro, double t0_s);
EC_INTERNAL void eci_rec_micro_end(eci_step_rec *r, double t1_s);
/* The Reducer's hook (eci_ddp_sched.on_launch): a bucket's all-reduce (or reduce-scatter). */
EC_INTERNAL void eci_rec_ddp_launch(void *rec, double start_s, double dur_s, double bytes, int coll, const char *algo);
/* The sharded units' hook (eci_shard.on_launch): unit's all-gather (gather) or reduction. */
EC_INTERNAL void eci_rec_shard_launch(void *rec, double start_s, double dur_s, int gather, int unit);
/* A collective on the communication track outside the hooks (ZeRO's gather after the step). */
EC_INTERNAL void eci_rec_comm(eci_step_rec *r, const char *name, const char *cat, double start_s, double dur_s,
                              double bytes);
/* The step ends at end_s before the wait for the slowest GPU (straggler_s): the micro-steps
 * 3..ga, which repeat the second, laid out before it, and the wait closed. */
EC_INTERNAL void eci_rec_step_end(eci_step_rec *r, double end_s, double repeat_s, double straggler_s);
/* A pipeline stage priced (stages.c): its layers, micro-batch forward and backward, p2p and tail. */
EC_INTERNAL void eci_rec_stage(eci_step_rec *r, int s, int first, int layers, double fwd_s, double bwd_s, double p2p_s,
                               double tail_s);
/* Pipeline parallelism: the stages' micro-batches laid out on their own tracks as the schedule
 * prices them (stages.c): stage s starts after the fill of the stages before it, its m
 * micro-batches paced by the slowest stage (u_max), the optimizer after the drain; step_s long. */
EC_INTERNAL void eci_rec_stages(eci_step_rec *r, int pp, int m, double v, double u_max, double step_s,
                                double tail_max_s);
/* Free the events. */
EC_INTERNAL void eci_rec_free(eci_step_rec *r);

#endif /* EC_SIM_STEPREC_H */
