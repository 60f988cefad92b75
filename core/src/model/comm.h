/*
 * comm.h: multi-GPU communication (comm.c): the ring's bus bandwidth from the topology,
 * NCCL all-reduce / broadcast / reduce times, DDP's gradient-bucket schedule overlapped
 * with backward, the straggler wait of synchronous steps, and host-to-device bandwidth
 * shared by GPUs behind one uplink.  sim/ lays the results on its step timeline.
 */
#ifndef EC_COMM_H
#define EC_COMM_H

#include "model/workload.h"

#include <gsl/gsl_interp.h>

#define ECI_RAMP_MAX 8

/* The GPUs of one job and the links their collectives run over. */
typedef struct eci_comm {
    int n;                        /* ranks (GPUs) */
    int nodes;                    /* machines */
    int boards;                   /* A16 boards per node (a16-board), else 1 */
    double busbw_bytes_per_s;     /* ring bus bandwidth: the slowest link of the ring */
    double intra_busbw_bytes_per_s; /* the same within one node (the network left out) */
    double copy_bytes_per_s;      /* GPU-to-GPU copies (DataParallel's scatter and gather): CUDA
                                     peer copies, not NCCL, so through host memory they run at
                                     the idle through-host rate, not the in-training NCCL one */
    double hop_latency_s;         /* alpha: latency of one ring step */
    double h2d_share_frac;        /* each GPU's share of its own H2D bandwidth when all copy at once */
    const char *bottleneck;       /* static name of the limiting link, for messages and reports */
    const eci_nccl_tuner *tuner;  /* NCCL's tuner constants (the ctx's nccl_tuning.csv); NULL: ring only */
    int through_host;             /* the ring within a node crosses host memory (no peer-to-peer on its
                                     slowest link): eci_comm_path's EC_COMM_HOST */
    int intra_pci;                /* the GPUs of a node talk over PCI (1) or NVLink (0), as NCCL's tuner
                                     sees it: its hwLatencies row and whether LL128 runs */
    double compute_capability;    /* the GPU's: NCCL's tuner enables protocols and scales latencies by it */
    /* Measured NCCL bus-bandwidth ramp over message size (constants.csv nccl_ramp_*): log of
     * the size and busbw as a fraction of the curve's plateau; ramp_points = 0: no ramp. */
    int ramp_points;
    double ramp_log_bytes[ECI_RAMP_MAX], ramp_frac[ECI_RAMP_MAX];
    double ramp_ref_busbw_bytes_per_s; /* the curve's plateau (its largest message) */
    double ramp_ref_ranks;
    const gsl_interp *ramp_fn;    /* Steffen interpolant of the ramp, owned by the ctx (built once) */
    struct eci_ramp_cache *cache; /* the ctx's ramp and recent collective times (NULL: none, no memo) */
} eci_comm;

/* Resolve the topology ("nvlink", "pcie-switch", "pcie-host", "a16-board") of n GPUs of
 * profile g in hosts like `host` (the rate of a ring hop it carries between PCIe GPUs; NULL:
 * none limits) on `nodes` machines joined by network_bytes_per_s each (0: constants.csv
 * default).  measured_busbw_bytes_per_s > 0 replaces the topology's bus bandwidth within
 * a node (a rate measured on the user's machine).  EC_EINVAL names the key for an unknown topology. */
EC_INTERNAL int eci_comm_init(ec_ctx *ctx, const eci_gpu *g, const eci_host *host, const char *topology, int n, int nodes,
                              double network_bytes_per_s, double measured_busbw_bytes_per_s, eci_comm *c);

/* The path the gradients of n GPUs of g on `nodes` machines over `topology` take, which keys the
 * communication part of a prediction's interval (catalog/params.h): EC_COMM_HOST when the ring
 * within a node crosses host memory (pcie-host; pcie-switch, bridged NVLink pairs or A16 boards of
 * a GPU without peer-to-peer; A16 boards' uplinks) between two GPUs a node, EC_COMM_HOST_SHARED
 * between more (the ring shares root ports, switch uplinks and sockets: a server's layout), else
 * EC_COMM_DIRECT (NVLink, PCIe peer-to-peer, one GPU per node over the network).  A measured busbw_gbyte_per_s changes the
 * rate, not the path.  Cheap (no ramp): per prediction.  EC_EINVAL as eci_comm_init's. */
EC_INTERNAL int eci_comm_path(ec_ctx *ctx, const eci_gpu *g, const char *topology, int n, int nodes, int *path);

/* The host's hop rate (hosts.csv host_hop_busbw_bytes_per_s) where it sets the bus bandwidth of
 * the ring within a node of n GPUs of g on `nodes` machines over `topology` (a peer-to-peer PCIe
 * ring of more than two GPUs a node), else 0 (also for a ring through host memory, which the host's
 * through-host rates slow instead).  Cheap (no ramp). */
EC_INTERNAL double eci_comm_host_hop_bytes_per_s(ec_ctx *ctx, const eci_gpu *g, const eci_host *host,
                                                 const char *topology, int n, int nodes);

/* A through-host ring's rate of per_node GPUs on `host` (hosts.csv through_host_busbw_bytes_per_s,
 * and cross_socket_busbw_bytes_per_s for more GPUs than socket_gpus), 0: not limited (host NULL,
 * or a host without such rates: the GPU's link sets it). */
EC_INTERNAL double eci_comm_host_ring_bytes_per_s(const eci_host *host, int per_node);

/* The GPU link's through-host rate (pcie_host_busbw_frac) where it sets the ring within a node of
 * n GPUs of g on `nodes` machines over `topology` (every byte through host memory) and `host` has no
 * through_host_busbw_bytes_per_s of its own, else 0.  Cheap (no ramp). */
EC_INTERNAL double eci_comm_through_host_link_bytes_per_s(ec_ctx *ctx, const eci_gpu *g, const eci_host *host,
                                                          const char *topology, int n, int nodes);

/* Ring all-reduce (docs/DESIGN.md 3.3, nccl-tests PERFORMANCE.md): alpha*2(n-1) + 2(n-1)/n * bytes / busbw. */
EC_INTERNAL double eci_allreduce_s(double bytes, int n, double busbw_bytes_per_s, double hop_latency_s);
/* Pipelined ring broadcast or reduce (nccl-tests: bus factor 1): alpha*(n-1) + bytes / busbw. */
EC_INTERNAL double eci_bcast_s(double bytes, int n, double busbw_bytes_per_s, double hop_latency_s);

/* Bus bandwidth a collective reaches on a message of `bytes` (ring_steps: ranks for an
 * all-reduce, ranks - 1 for a broadcast or reduce).  NCCL's ramp is set by latency against
 * bandwidth: the fraction of the plateau depends on the time to move one ring step's share
 * over the per-step latency, so the measured 8-rank NVSwitch curve is read at the size that
 * gives the same ratio: bytes x (ref_ranks / ring_steps) x (ref_busbw / this busbw).  Below
 * the first point busbw grows in proportion to the size (latency-bound); above the last it is
 * the plateau.  Monotone (Steffen) interpolation in log size, GSL. */
EC_INTERNAL double eci_comm_busbw_at(const eci_comm *c, double bytes, double ring_steps);
/* All-reduce of one message over every GPU of c, as NCCL runs it: across nodes NCCL's tuner
 * model of the algorithm it picks (eci_nccl_allreduce_algo: ring or tree); on one node the ring
 * at the measured size-dependent bus bandwidth, never below the ring's latency alpha x steps.
 * Pipelined broadcast or reduce: a ring (NCCL runs no other). */
EC_INTERNAL double eci_comm_allreduce_s(const eci_comm *c, double bytes);
EC_INTERNAL double eci_comm_bcast_s(const eci_comm *c, double bytes);
/* `bytes` in messages of at most chunk_bytes (torch's coalesced broadcast/reduce), one after another. */
EC_INTERNAL double eci_comm_bcast_chunked_s(const eci_comm *c, double bytes, double chunk_bytes);

/* A group of the job's ranks that runs its own collectives (tensor-, context-, data-,
 * expert-parallel, a pipeline neighbour): n ranks spaced `stride` apart in rank order
 * (Megatron: tensor parallel innermost).  Within one node it runs at the node's bus
 * bandwidth; across nodes each node reaches the network through as many NICs as it holds
 * members of the group (rail-optimized clusters: one NIC per GPU), times the network's
 * measured efficiency.  p2p: one GPU's send to a neighbour.  An all-to-all across nodes is no
 * ring: each member sends the share meant for other nodes through its own NIC (eci_coll_s). */
typedef struct eci_group {
    int n;                        /* ranks */
    int nodes;                    /* nodes it spans */
    int in_node;                  /* members one node holds (0: not set, taken as n / nodes) */
    double busbw_bytes_per_s;
    double p2p_bytes_per_s;
    double hop_latency_s;
} eci_group;

/* DDP's Reducer: gradients fill buckets in the order backward produces them (the first
 * bucket capped at first_cap_bytes, later ones at cap_bytes; a tensor never splits, so one
 * larger than the cap closes its bucket alone); a full bucket's all-reduce starts on the
 * communication stream when its last gradient is ready and the previous all-reduce is done. */
typedef struct eci_ddp_sched {
    const eci_comm *comm;
    double first_cap_bytes, cap_bytes;
    double open_bytes;            /* gradients in the bucket being filled */
    double comm_free_s;           /* when the communication stream is next free */
    double comm_busy_s;           /* all-reduce time launched so far */
    double first_start_s;         /* start of the first all-reduce (-1: none yet) */
    int launched;                 /* buckets reduced since the last eci_ddp_restart */
    const eci_group *group;       /* the data-parallel group; NULL: every GPU of comm (DDP's ring) */
    eci_coll coll;                /* with a group: all-reduce, or reduce-scatter (ZeRO-1/2) */
    const eci_group *replica;     /* with reduce-scatter over a shard group (zero_shard_size): the ranks holding
                                     the same shard, whose shards are then all-reduced; NULL: none */
    double memo_bytes[8], memo_s[8]; /* recent buckets' sizes and times: a layer's few sizes recur */
    unsigned memo_next;
    /* a trace's recorder (sim/steprec.c), told of each bucket launched; NULL (eci_ddp_begin): none */
    void (*on_launch)(void *arg, double start_s, double dur_s, double bytes, int coll, const char *algo);
    void *on_launch_arg;
} eci_ddp_sched;

EC_INTERNAL void eci_ddp_begin(eci_ddp_sched *s, const eci_comm *comm, double first_cap_bytes, double cap_bytes);
/* A new backward that reduces its gradients (FSDP without sharding and ZeRO-2 reduce on every
 * micro-step): buckets fill from empty again; the stream's clock and totals carry on, and so do
 * the group and its collective (ZeRO-1/2's reduce-scatter, set after eci_ddp_begin). */
EC_INTERNAL void eci_ddp_restart(eci_ddp_sched *s);
/* The open bucket's all-reduce starts at t_s or when the stream is free (eci_ddp_ready). */
EC_INTERNAL void eci_ddp_launch(eci_ddp_sched *s, double t_s);
/* Gradients of `bytes` became ready at time t_s (the GPU clock after the op's backward).
 * Inline: the backward walk calls it for every op. */
static inline void eci_ddp_ready(eci_ddp_sched *s, double t_s, double bytes)
{
    if (bytes <= 0)
        return;
    s->open_bytes += bytes;
    double cap = s->launched == 0 ? s->first_cap_bytes : s->cap_bytes;
    if (s->open_bytes >= cap)
        eci_ddp_launch(s, t_s);
}
/* A collective of total_s split into `pieces` equal parts on one stream, part k launched when
 * the k-th of `pieces` compute windows of window_s each ends (the last part after the last
 * window): the time left after the last window.  Each part waits for its window and for the
 * part before it, so the exposed time is one part when a part fits in a window, and whatever
 * the windows after the first launch cannot hide otherwise.  Megatron's interleaved pipeline
 * reduces each model chunk's gradients once its last micro-batch's backward is through, and
 * gathers each chunk's parameters while the chunk before it runs its forward. */
static inline double eci_chunked_exposed_s(double total_s, double pieces, double window_s)
{
    if (total_s <= 0 || pieces < 1)
        return total_s > 0 ? total_s : 0;
    double part = total_s / pieces, rest = total_s - (pieces - 1) * window_s;
    return rest > part ? rest : part;
}
/* Backward ended at backward_end_s: launch the last, partly filled bucket; return the
 * all-reduce time left after backward_end_s (the exposed part). */
EC_INTERNAL double eci_ddp_finish(eci_ddp_sched *s, double backward_end_s);
/* Extra time of a kernel (gpu_s, starting at start_s) that runs beside an all-reduce keeping
 * the communication stream busy until comm_busy_until_s, compute being (1 + slowdown) times
 * slower while both run: NCCL's kernels hold SMs and HBM bandwidth, so the part that runs
 * beside the all-reduce goes (1 + slowdown) times slower.  w wall seconds there do
 * w / (1 + slowdown) of the work, so the kernel ends w * slowdown / (1 + slowdown) later.
 * Inline: the backward walk calls it for every op under DDP. */
static inline double eci_overlap_stretch_s(double comm_busy_until_s, double start_s, double gpu_s, double slowdown)
{
    if (slowdown <= 0 || comm_busy_until_s <= start_s || gpu_s <= 0)
        return 0;
    double w = comm_busy_until_s - start_s, whole = gpu_s * (1 + slowdown);
    double beside = w < whole ? w : whole;
    return beside * slowdown / (1 + slowdown);
}


/* net_bytes_per_s: one GPU's share of the network (its NIC on a rail-optimized cluster);
 * net_frac: the collectives' bus bandwidth over it; per_node: GPUs per node. */
EC_INTERNAL void eci_comm_group(const eci_comm *c, int n, int stride, int per_node, double net_bytes_per_s,
                                double net_frac, eci_group *g);
/* NCCL's per-channel ring bandwidth over NVLink for a GPU generation (constants.csv nccl_channel_*),
 * and a group limited to `ctas` channels (0: no limit) capped at ctas x that. */
EC_INTERNAL double eci_nccl_channel_bytes_per_s(const ec_ctx *ctx, double compute_capability);
EC_INTERNAL void eci_group_cap_channels(eci_group *g, int ctas, double channel_bytes_per_s);
/* Time of one collective of `bytes` (the whole buffer: the all-gather's output, the
 * reduce-scatter's input) over group g, with the message-size ramp of c; an all-reduce runs
 * the algorithm NCCL's tuner picks (ring, or tree: log2 of the nodes in latency steps). */
EC_INTERNAL double eci_coll_s(const eci_comm *c, const eci_group *g, eci_coll coll, double bytes);
/* A reduction of `bytes` of gradients sharded over group `shard`: a reduce-scatter within it,
 * then (replica non-NULL with n > 1: FSDP's hybrid_shard, ZeRO's zero_shard_size, apex
 * DistributedFusedLAMB) an all-reduce of the shard's bytes / shard->n across the replicas. */
EC_INTERNAL double eci_coll_reduce_sharded_s(const eci_comm *c, const eci_group *shard, const eci_group *replica,
                                             double bytes);

/* NCCL's algorithm choice for an all-reduce of `bytes` over n ranks on `nodes` nodes at bus
 * bandwidth busbw (src/graph/tuning.cc: per algorithm and protocol, latency + bytes / bandwidth,
 * the smallest wins): ECI_NCCL_TREE or ECI_NCCL_RING (always the ring without c->tuner).
 * *model_s (may be NULL): the chosen algorithm's time in NCCL's model. */
EC_INTERNAL int eci_nccl_allreduce_algo(const eci_comm *c, double bytes, int n, int nodes, double busbw_bytes_per_s,
                                        double *model_s);
/* The algorithm of group g's all-reduce of `bytes` (g NULL: every GPU of c), "ring" or "tree". */
EC_INTERNAL const char *eci_allreduce_algo_name(const eci_comm *c, const eci_group *g, double bytes);

/* Expected maximum of n independent standard normal draws (GSL integration);
 * 0 for n <= 1.  The slowest of n GPUs whose speeds vary with coefficient of variation cv
 * takes (1 + cv * this) times the mean. */
EC_INTERNAL int eci_expected_max_normal(ec_ctx *ctx, int n, double *out);

/* Free the NCCL ramp interpolant (registered with eci_ctx_on_free). */
EC_INTERNAL void eci_comm_ctx_free(ec_ctx *ctx);

#endif /* EC_COMM_H */
