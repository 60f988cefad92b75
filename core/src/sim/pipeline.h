/*
 * pipeline.h: the discrete-event simulation of an epoch's input pipeline and training loop
 * (pipeline.c, with pipeline_draw.c, _stats.c, _closed.c and _epoch.c; docs/DESIGN.md 3.2,
 * modeling.md 5).  epoch.c fills eci_pipe_in from the config, the host profile and the step
 * model evaluated at a few padded lengths (knots); trace.c asks it to record the events of the
 * first steps.
 */
#ifndef EC_PIPELINE_H
#define EC_PIPELINE_H

#include "sim/lengths.h"

#include <stdint.h>

/* What the step model says about one micro-step at a padded length, per knot. */
enum eci_series {
    ECI_S_WALL = 0, /* main-thread wall time of the micro-step once it has its batch */
    ECI_S_HOST,     /* host CPU time inside it (dispatch, syncs, bookkeeping) */
    ECI_S_BUSY,     /* GPU kernel time (nvidia-smi busy) */
    ECI_S_H2D,      /* host-to-device copy time */
    ECI_S_COMM,     /* exposed communication: collective kernels on the step's path and waits for them */
    ECI_S_MECHANICS /* series above drive the simulation; the caller may append more to average */
};
#define ECI_MAX_SERIES 16
#define ECI_MAX_KNOTS 24

/* Host tracks of a trace, in the order trace.c names them; workers follow from ECI_TRACK_WORKER0.
 * The main thread's "step" events give each batch's span, which trace.c fills with the GPU's
 * phases and collectives as the step model records them (steprec.h). */
enum { ECI_TRACK_MAIN = 0, ECI_TRACK_PIN, ECI_TRACK_WORKER0 };

typedef struct eci_trace_event {
    int track;
    const char *name;  /* static text */
    long step;         /* micro-step (batch) index */
    double start_s, dur_s;
} eci_trace_event;

/* Caller-owned buffer: events of batches < max_steps are appended while n < cap. */
typedef struct eci_trace_buf {
    eci_trace_event *ev;
    size_t n, cap;
    long max_steps;
} eci_trace_buf;

typedef struct eci_pipe_in {
    long steps;               /* micro-batches of one epoch per GPU; 0 = unknown (steady state only) */
    int batch;                /* samples per micro-batch */
    /* the DataLoader (PyTorch semantics) */
    int num_workers;          /* 0: the main process loads each batch itself */
    int prefetch_factor;      /* batches in flight per worker */
    int persistent;           /* workers already running when the epoch starts */
    double worker_start_s;    /* start-up of one worker; started one after another */
    int cores;                /* host cores shared by workers, main thread and pin thread */
    int pin_memory;           /* pin_memory: batches are copied into page-locked memory */
    int pin_thread;           /* ... by a pin-memory thread (num_workers > 0), else inline in the loop */
    double pin_s;             /* pinning copy time of a batch padded to seq (scaled by padded / seq) */
    /* CPU cost of a batch: batch_fixed_s + noise x sum over samples (sample_fixed_s + tokens x token_s) */
    double sample_fixed_s;
    double sample_token_s;
    double batch_fixed_s;
    double cpu_cv;            /* coefficient of variation of one sample's CPU time */
    /* lengths */
    int padding;              /* ec_padding */
    const eci_lengths *lengths; /* NULL: every sample has seq tokens */
    int seq;                  /* fixed length, or the cap */
    int mega_batch;           /* bucketed: samples per length-sorted mega-batch */
    /* the step model, per micro-step, at knots of the padded length */
    size_t n_knots;           /* 1..ECI_MAX_KNOTS, increasing lengths */
    double knot_len[ECI_MAX_KNOTS];
    size_t n_series;          /* ECI_S_MECHANICS..ECI_MAX_SERIES */
    double knot_val[ECI_MAX_SERIES][ECI_MAX_KNOTS];
    uint64_t seed;
    eci_trace_buf *trace;     /* NULL: record nothing */
    int force_des;            /* 1: simulate even where eci_pipe_simulate has a closed form (tests) */
} eci_pipe_in;

/* One simulated epoch (replica). */
typedef struct eci_pipe_run_out {
    double total_s;           /* iterator creation to the end of the last micro-step */
    double first_end_s;       /* end of the first micro-step */
    long warm_step;           /* first micro-step of the steady state (every worker started) */
    double warm_end_s;        /* its end */
    double stall_s;           /* main thread without a batch (or loading it), summed after warm_step */
    double busy_s;            /* GPU kernel time, summed */
    double var_sum_s2;        /* batch-means estimate of Var(total) per simulated step count */
    long steps;
    long settled_from;        /* i0: the loop took batch i0 - W pf with every worker started and
                               * batches < i0 available (-1: never; with workers only) */
} eci_pipe_run_out;

/* Simulate `steps` micro-batches with the random stream `stream` of in->seed.  When hist is
 * not NULL, hist[L - 1] counts micro-batches padded to L tokens (L = 1..in->seq). */
EC_INTERNAL int eci_pipe_run(ec_ctx *ctx, const eci_pipe_in *in, long steps, uint64_t stream, double *hist,
                             eci_pipe_run_out *out);

/* The same run (no hist), where nothing shares a core -- workers, the pin thread and the loop
 * each on a core of their own -- with one padded length, no trace and no force_des: as per-batch
 * recurrences instead of events (about an eighth of the instructions); else eci_pipe_run itself. */
EC_INTERNAL int eci_pipe_run_direct(ec_ctx *ctx, const eci_pipe_in *in, long steps, uint64_t stream,
                                    eci_pipe_run_out *out);

/* The context's generator, set to draw what gsl_rng_mt19937 seeded with seed draws (the first
 * draws of recent seeds kept: no reseeding); valid until the next call.  NULL: out of memory. */
EC_INTERNAL gsl_rng *eci_pipe_rng(ec_ctx *ctx, unsigned long seed);

/* An epoch: replicas of eci_pipe_run, extrapolated to in->steps when that is long. */
typedef struct eci_pipe_epoch {
    double step_s;            /* mean time between micro-step ends in steady state */
    double stall_s;           /* mean loader stall per micro-step */
    double busy_s;            /* mean GPU kernel time per micro-step */
    double mean_s[ECI_MAX_SERIES]; /* every series averaged over the simulated padded lengths */
    double padded_len;        /* mean padded length */
    double padded_sq;         /* mean squared padded length */
    int distinct_lengths;     /* padded lengths seen (torch.compile shapes) */
    double epoch_s;           /* mean train time of an epoch (0 when steps unknown) */
    double p10_s, p50_s, p90_s;
    double startup_once_s;    /* persistent workers: what their start-up adds to the first epoch */
    long simulated_steps;     /* per replica */
    int replicas;
    int closed_form;          /* the steady state came from a closed form, not the full simulation:
                               * 1 proven from the warm step on, 2 from a settled start (pin queue) */
} eci_pipe_epoch;

/* The epoch.  Where the simulation provably settles into a known steady state (constant
 * padded length and either the loop loading its own batches, or workers that never make it
 * wait once started and never compete for cores), the steady state is computed in closed
 * form and only the start-up steps are simulated; else every step is simulated. */
EC_INTERNAL int eci_pipe_simulate(ec_ctx *ctx, const eci_pipe_in *in, eci_pipe_epoch *out);

/* Free the loader simulation's generator (registered with eci_ctx_on_free). */
EC_INTERNAL void eci_pipe_ctx_free(ec_ctx *ctx);

#endif /* EC_PIPELINE_H */
