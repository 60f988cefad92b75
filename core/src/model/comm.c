/*
 * comm.c: multi-GPU communication (docs/DESIGN.md 3.3, modeling.md 6).
 *   - Topology -> ring bus bandwidth: the slowest link a ring of the job's GPUs crosses,
 *     from the GPU's link figures (gpus.csv: NVLink per direction, measured pinned H2D for
 *     the PCIe link) times the measured NCCL bus-bandwidth fractions of constants.csv
 *     (NVSwitch, NVLink bridge, PCIe peer-to-peer, PCIe through host memory), the A16
 *     board's shared Gen4 x16 uplink, and the network between nodes.  The host can be slower
 *     (hosts.csv): a hop between peer-to-peer GPUs under different root ports, a ring with
 *     every byte through host memory, and such a ring spanning both sockets of a server.
 *   - DataParallel's scatter and gather are CUDA peer copies, not NCCL: over the ring's links
 *     where the GPUs have peer-to-peer, else staged through host memory at the idle rate
 *     (constants.csv pcie_host_copy_frac), not NCCL's fitted in-training one.
 *   - Collective times: ring all-reduce alpha*2(n-1) + 2(n-1)/n * S / busbw; broadcast and
 *     reduce alpha*(n-1) + S / busbw (nccl-tests PERFORMANCE.md bus factors).
 *   - Algorithm: an all-reduce runs as ring or tree, whichever NCCL's own tuner model finds
 *     faster (models/nccl_tuning.csv from NVIDIA/nccl src/graph/tuning.cc: per protocol LL,
 *     LL128, Simple a base latency, per-step latencies over NVLink, PCI and the network, and
 *     bandwidth factors).  A ring's latency grows with the ranks, a tree's with log2 of the
 *     nodes, so large jobs reduce small and medium messages by tree.  Across nodes the time is
 *     that model's; on one node (where the model picks the ring at every size) the ring keeps
 *     the measured ramp below, which was read on one node.
 *   - DDP's Reducer: buckets filled in gradient-ready order, all-reduced on a second stream
 *     while backward goes on; only what is left when backward ends is exposed, and the
 *     backward kernels that run beside an all-reduce are slowed by it (constants.csv
 *     overlap_compute_slowdown_frac, measured by Lee et al. 2025).
 *   - Message size: busbw ramps up with the message (NCCL latency and protocol); the
 *     measured 8x A100 NVSwitch curve (constants.csv nccl_ramp_*, stas00/ml-engineering) read
 *     at the size with the same latency-to-bandwidth ratio on this topology (comm.h).
 *   - Stragglers: a synchronous step waits for the slowest of n GPUs; the expected maximum
 *     of n normal draws comes from GSL integration of n x phi(x) Phi(x)^(n-1).
 */
#include "model/comm.h"
#include "catalog/consts.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const topologies[] = {"nvlink", "pcie-switch", "pcie-host", "a16-board"};
#define N_TOPOLOGIES (sizeof topologies / sizeof topologies[0])

static double min2(double a, double b)
{
    return a < b ? a : b;
}

/* Whether a through-host ring of per_node GPUs spans the host's sockets at a rate of its own:
 * more GPUs than one socket holds (hosts.csv socket_gpus, 0: not known). */
static int crosses_sockets(const eci_host *host, int per_node)
{
    return host != NULL && host->socket_gpus > 0 && per_node > host->socket_gpus &&
           host->cross_socket_busbw_bytes_per_s > 0;
}

/* A through-host ring's rate on this host (0: not limited): its own rate, and, across the
 * sockets, the slower rate of the socket link (hosts.csv cross_socket_busbw_bytes_per_s). */
double eci_comm_host_ring_bytes_per_s(const eci_host *host, int per_node)
{
    if (host == NULL)
        return 0;
    double rate = host->through_host_busbw_bytes_per_s;
    if (crosses_sockets(host, per_node))
        rate = rate > 0 ? min2(rate, host->cross_socket_busbw_bytes_per_s) : host->cross_socket_busbw_bytes_per_s;
    return rate;
}

/* One GPU's PCIe link as NCCL's ring of per_node GPUs sees it: peer-to-peer when the GPU allows
 * it; through host memory otherwise, where the host's own rate (eci_comm_host_ring_bytes_per_s;
 * host NULL: not limited) can be below the link's. */
static double pcie_busbw(const ec_ctx *ctx, const eci_gpu *g, int p2p, int per_node, const eci_host *host)
{
    if (p2p && g->p2p)
        return g->h2d_pinned_bytes_per_s * eci_const(ctx, EC_C_pcie_p2p_busbw_frac);
    double link = g->h2d_pinned_bytes_per_s * eci_const(ctx, EC_C_pcie_host_busbw_frac);
    double own = eci_comm_host_ring_bytes_per_s(host, per_node);
    return own > 0 ? min2(link, own) : link;
}

/* A peer-to-peer PCIe ring of per_node GPUs: NCCL takes P2P only between GPUs behind a common
 * PCIe switch (src/graph/paths.cc ncclTopoCheckP2p: p2pLevel PATH_PXB; across the CPU only for
 * two GPUs on AMD hosts), so a ring of more than two, which in a training server spans CPU root
 * ports or sockets, stages those hops through host memory at the host's rate (hosts.csv
 * host_hop_busbw_bytes_per_s; host NULL: not limited). */
static double pcie_ring_busbw(const ec_ctx *ctx, const eci_gpu *g, int per_node, const eci_host *host)
{
    double link = pcie_busbw(ctx, g, 1, per_node, host);
    return g->p2p && per_node > 2 && host != NULL ? min2(link, host->host_hop_busbw_bytes_per_s) : link;
}

/* A CUDA peer copy that the driver stages through host memory: the ring's links move the
 * same bytes, but the through-host rate of an idle copy, not of NCCL in a training job. */
static double host_copy_bytes_per_s(const ec_ctx *ctx, double link_bytes_per_s)
{
    return link_bytes_per_s * eci_const(ctx, EC_C_pcie_host_copy_frac);
}

/* NVLink: NVSwitch / SXM boards run every GPU at its NVLink rate; PCIe cards with a bridge
 * are joined in pairs, so a ring of more than two crosses PCIe between the pairs. */
static int nvlink_busbw(ec_ctx *ctx, const eci_gpu *g, int per_node, const eci_host *host, eci_comm *c)
{
    if (g->nvlink_bytes_per_s <= 0)
        return eci_error(ctx, EC_EINVAL, "key 'topology': %s has no NVLink; use pcie-switch or pcie-host", g->id);
    if (strcmp(g->default_topology, "nvlink") == 0) {
        c->busbw_bytes_per_s = g->nvlink_bytes_per_s * eci_const(ctx, EC_C_nvlink_busbw_frac);
        c->bottleneck = "nvlink";
        return EC_OK;
    }
    c->busbw_bytes_per_s = g->nvlink_bytes_per_s * eci_const(ctx, EC_C_nvlink_bridge_busbw_frac);
    c->bottleneck = "nvlink-bridge";
    if (per_node > 2 && pcie_ring_busbw(ctx, g, per_node, host) < c->busbw_bytes_per_s) {
        c->busbw_bytes_per_s = pcie_ring_busbw(ctx, g, per_node, host);
        if (!g->p2p)
            c->copy_bytes_per_s = host_copy_bytes_per_s(ctx, g->h2d_pinned_bytes_per_s);
        c->bottleneck = "pcie between bridged pairs";
        c->through_host = !g->p2p;
    }
    return EC_OK;
}

/* A16-style boards: each GPU's own link to the board's switch, and, with more than one
 * board, the board's uplink, which the ring crosses once each way through the host. */
static int board_busbw(ec_ctx *ctx, const eci_gpu *g, int per_node, const eci_host *host, eci_comm *c)
{
    if (g->gpus_per_board < 2)
        return eci_error(ctx, EC_EINVAL, "key 'topology': a16-board needs a multi-GPU board; %s has one GPU per board",
                         g->id);
    double lane_bytes_per_s = g->h2d_pinned_bytes_per_s / g->pcie_lanes;
    double uplink = lane_bytes_per_s * eci_const(ctx, EC_C_board_uplink_lanes);
    int on_board = per_node < g->gpus_per_board ? per_node : g->gpus_per_board;
    c->boards = (per_node + g->gpus_per_board - 1) / g->gpus_per_board;
    c->busbw_bytes_per_s = pcie_busbw(ctx, g, 1, per_node, host);
    c->copy_bytes_per_s = c->busbw_bytes_per_s;
    c->bottleneck = "gpu pcie link";
    c->through_host = !g->p2p;
    double across = uplink * eci_const(ctx, EC_C_pcie_host_busbw_frac);
    if (c->boards > 1 && across < c->busbw_bytes_per_s) {
        c->busbw_bytes_per_s = across;
        c->copy_bytes_per_s = min2(c->copy_bytes_per_s, host_copy_bytes_per_s(ctx, uplink));
        c->bottleneck = "board uplink";
        c->through_host = 1;
    }
    /* Host-to-device copies of the GPUs of one board share the uplink. */
    c->h2d_share_frac = min2(1.0, uplink / (on_board * g->h2d_pinned_bytes_per_s));
    return EC_OK;
}

/* The measured ramp from constants.csv, as log size and fraction of its plateau. */
/* The ramp's Steffen interpolant, one per context: every eci_comm of a sweep reads the
 * same constants.csv points, so it is built once (again only if the points change).
 * With it, the times of recent collectives: a sweep prices the same gradient buckets over
 * the same groups again and again (each costs two logarithms and an interpolation).  An
 * entry is keyed by every input of the time besides the ramp's points, which this cache
 * lives with (new points, a new cache). */
#define COLL_MEMO 256 /* a power of two: the slot is a hash of the key, masked */
typedef struct coll_memo {
    double bytes, n, busbw, hop, ref_busbw, ref_ranks; /* the message, the group, the ramp's reference */
    int kind, points, nodes, intra_pci;                /* an eci_coll, or -1: eci_comm_allreduce_s */
    const eci_nccl_tuner *tuner;                       /* NCCL's constants the time was priced with */
    double cc;                                         /* and the GPU's compute capability */
    int used;
    double s;
} coll_memo;

struct eci_ramp_cache {
    gsl_interp *fn;
    double log_bytes[ECI_RAMP_MAX], frac[ECI_RAMP_MAX];
    coll_memo memo[COLL_MEMO];
};

void eci_comm_ctx_free(ec_ctx *ctx)
{
    if (ctx->comm_ramp == NULL)
        return;
    gsl_interp_free(ctx->comm_ramp->fn);
    eci_free(ctx, ctx->comm_ramp, sizeof *ctx->comm_ramp);
    ctx->comm_ramp = NULL;
}

static int ramp_interp(ec_ctx *ctx, eci_comm *c)
{
    struct eci_ramp_cache *r = ctx->comm_ramp;
    if (r != NULL && memcmp(r->log_bytes, c->ramp_log_bytes, sizeof r->log_bytes) == 0 &&
        memcmp(r->frac, c->ramp_frac, sizeof r->frac) == 0) {
        c->ramp_fn = r->fn;
        return EC_OK;
    }
    eci_comm_ctx_free(ctx);
    int rc = eci_ctx_on_free(ctx, eci_comm_ctx_free);
    if (rc != EC_OK)
        return rc;
    if ((r = eci_calloc(ctx, 1, sizeof *r)) == NULL)
        return EC_ENOMEM;
    memcpy(r->log_bytes, c->ramp_log_bytes, sizeof r->log_bytes);
    memcpy(r->frac, c->ramp_frac, sizeof r->frac);
    r->fn = gsl_interp_alloc(gsl_interp_steffen, ECI_RAMP_MAX);
    if (r->fn == NULL || gsl_interp_init(r->fn, r->log_bytes, r->frac, ECI_RAMP_MAX) != GSL_SUCCESS) {
        if (r->fn != NULL)
            gsl_interp_free(r->fn);
        eci_free(ctx, r, sizeof *r);
        return eci_error(ctx, EC_ENOMEM, "comm: cannot set up the NCCL ramp interpolation");
    }
    ctx->comm_ramp = r;
    c->ramp_fn = r->fn;
    c->cache = r;
    return EC_OK;
}

static int load_ramp(ec_ctx *ctx, eci_comm *c)
{
    static const int bytes_id[ECI_RAMP_MAX] = {EC_C_nccl_ramp_bytes_1, EC_C_nccl_ramp_bytes_2, EC_C_nccl_ramp_bytes_3,
                                               EC_C_nccl_ramp_bytes_4, EC_C_nccl_ramp_bytes_5, EC_C_nccl_ramp_bytes_6,
                                               EC_C_nccl_ramp_bytes_7, EC_C_nccl_ramp_bytes_8};
    static const int busbw_id[ECI_RAMP_MAX] = {EC_C_nccl_ramp_busbw_1, EC_C_nccl_ramp_busbw_2, EC_C_nccl_ramp_busbw_3,
                                               EC_C_nccl_ramp_busbw_4, EC_C_nccl_ramp_busbw_5, EC_C_nccl_ramp_busbw_6,
                                               EC_C_nccl_ramp_busbw_7, EC_C_nccl_ramp_busbw_8};
    double plateau = eci_const(ctx, busbw_id[ECI_RAMP_MAX - 1]);
    const struct eci_ramp_cache *r = ctx->comm_ramp;
    if (r != NULL) { /* constants.csv is read once per context: the points it gave last time */
        memcpy(c->ramp_log_bytes, r->log_bytes, sizeof r->log_bytes);
        memcpy(c->ramp_frac, r->frac, sizeof r->frac);
        c->ramp_points = ECI_RAMP_MAX;
        c->ramp_ref_busbw_bytes_per_s = plateau;
        c->ramp_ref_ranks = eci_const(ctx, EC_C_nccl_ramp_ranks);
        c->ramp_fn = r->fn;
        c->cache = ctx->comm_ramp;
        return EC_OK;
    }
    for (int i = 0; i < ECI_RAMP_MAX; i++) {
        double s = eci_const(ctx, bytes_id[i]), b = eci_const(ctx, busbw_id[i]);
        if (s <= 0 || b <= 0 || b > plateau || (i > 0 && log(s) <= c->ramp_log_bytes[i - 1]))
            return eci_error(ctx, EC_EINVAL, "constants.csv: nccl_ramp_bytes_%d / nccl_ramp_busbw_%d must be positive, "
                             "sizes increasing, and no busbw above the last point's", i + 1, i + 1);
        c->ramp_log_bytes[i] = log(s);
        c->ramp_frac[i] = b / plateau;
    }
    c->ramp_points = ECI_RAMP_MAX;
    c->ramp_ref_busbw_bytes_per_s = plateau;
    c->ramp_ref_ranks = eci_const(ctx, EC_C_nccl_ramp_ranks);
    return ramp_interp(ctx, c);
}

/* The links of the ring within one node of per_node GPUs on `topology`: its bus bandwidth, the
 * peer copies' rate, the bottleneck's name, whether it crosses host memory; boards and the H2D
 * share on A16 boards.  c zeroed but for boards = 1 and h2d_share_frac = 1. */
static int node_links(ec_ctx *ctx, const eci_gpu *g, const char *topology, int per_node, const eci_host *host,
                      eci_comm *c)
{
    int rc = EC_OK;
    if (strcmp(topology, "nvlink") == 0) {
        rc = nvlink_busbw(ctx, g, per_node, host, c);
    } else if (strcmp(topology, "pcie-switch") == 0) {
        c->busbw_bytes_per_s = pcie_ring_busbw(ctx, g, per_node, host);
        c->copy_bytes_per_s = g->p2p ? pcie_busbw(ctx, g, 1, per_node, host)
                                     : host_copy_bytes_per_s(ctx, g->h2d_pinned_bytes_per_s);
        c->bottleneck = !g->p2p && crosses_sockets(host, per_node)   ? "pcie through host across sockets (no p2p)"
                        : !g->p2p                                    ? "pcie through host (no p2p)"
                        : c->busbw_bytes_per_s < c->copy_bytes_per_s ? "pcie peer-to-peer, hops through the host"
                                                                     : "pcie peer-to-peer";
        c->through_host = !g->p2p;
    } else if (strcmp(topology, "pcie-host") == 0) {
        c->busbw_bytes_per_s = pcie_busbw(ctx, g, 0, per_node, host);
        c->copy_bytes_per_s = host_copy_bytes_per_s(ctx, g->h2d_pinned_bytes_per_s);
        c->bottleneck = crosses_sockets(host, per_node) ? "pcie through host across sockets" : "pcie through host";
        c->through_host = 1;
    } else if (strcmp(topology, "a16-board") == 0) {
        rc = board_busbw(ctx, g, per_node, host, c);
    } else {
        const char *near = eci_nearest(topology, topologies, N_TOPOLOGIES);
        return eci_error(ctx, EC_EINVAL, "key 'topology': unknown topology '%s' (did you mean '%s'? choices: "
                         "nvlink, pcie-switch, pcie-host, a16-board)", topology, near);
    }
    return rc;
}

/* node_links on a fresh eci_comm, for n GPUs on `nodes` machines: their GPUs a node. */
static int node_links_of(ec_ctx *ctx, const eci_gpu *g, const char *topology, int n, int nodes, const eci_host *host,
                         eci_comm *c, int *per_node)
{
    memset(c, 0, sizeof *c);
    c->boards = 1;
    c->h2d_share_frac = 1.0;
    *per_node = nodes > 1 ? (n + nodes - 1) / nodes : n;
    return node_links(ctx, g, topology, *per_node, host, c);
}

int eci_comm_path(ec_ctx *ctx, const eci_gpu *g, const char *topology, int n, int nodes, int *path)
{
    eci_comm c;
    int per_node;
    int rc = node_links_of(ctx, g, topology, n, nodes, NULL, &c, &per_node);
    *path = rc != EC_OK || per_node < 2 || !c.through_host ? EC_COMM_DIRECT
            : per_node > 2                                 ? EC_COMM_HOST_SHARED
                                                           : EC_COMM_HOST;
    return rc;
}

double eci_comm_host_hop_bytes_per_s(ec_ctx *ctx, const eci_gpu *g, const eci_host *host, const char *topology, int n,
                                     int nodes)
{
    eci_comm with, without;
    int per_node;
    if (host == NULL || node_links_of(ctx, g, topology, n, nodes, host, &with, &per_node) != EC_OK ||
        node_links_of(ctx, g, topology, n, nodes, NULL, &without, &per_node) != EC_OK)
        return 0;
    /* a ring through host memory is slowed by the host's through-host rates instead (not a hop) */
    return !with.through_host && with.busbw_bytes_per_s < without.busbw_bytes_per_s ? with.busbw_bytes_per_s : 0;
}

double eci_comm_through_host_link_bytes_per_s(ec_ctx *ctx, const eci_gpu *g, const eci_host *host,
                                              const char *topology, int n, int nodes)
{
    eci_comm c;
    int per_node;
    if (node_links_of(ctx, g, topology, n, nodes, host, &c, &per_node) != EC_OK || per_node < 2 ||
        !c.through_host || eci_comm_host_ring_bytes_per_s(host, per_node) > 0)
        return 0;
    double link = pcie_busbw(ctx, g, 0, per_node, NULL);
    return c.busbw_bytes_per_s == link ? link : 0;
}

int eci_comm_init(ec_ctx *ctx, const eci_gpu *g, const eci_host *host, const char *topology, int n, int nodes,
                  double network_bytes_per_s, double measured_busbw_bytes_per_s, eci_comm *c)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->nodes = nodes;
    c->boards = 1;
    c->hop_latency_s = eci_const(ctx, EC_C_allreduce_hop_latency_s);
    c->h2d_share_frac = 1.0;
    c->tuner = ctx->nccl;
    c->compute_capability = g->compute_capability;
    int per_node = (n + nodes - 1) / nodes;
    int rc = node_links(ctx, g, topology, per_node, host, c);
    if (rc != EC_OK)
        return rc;
    /* NCCL's tuner: NVLink latencies where the ring's links within the node are NVLink */
    c->intra_pci = !(strcmp(topology, "nvlink") == 0 && strcmp(c->bottleneck, "pcie between bridged pairs") != 0);
    if (c->copy_bytes_per_s <= 0) /* peer-to-peer paths: copies and rings use the same links */
        c->copy_bytes_per_s = c->busbw_bytes_per_s;
    if (measured_busbw_bytes_per_s > 0) { /* the ring's rate as measured on the user's machine;
                                           * peer copies keep the topology's path */
        c->busbw_bytes_per_s = measured_busbw_bytes_per_s;
        c->bottleneck = "measured busbw (busbw_gbyte_per_s)";
    }
    c->intra_busbw_bytes_per_s = c->busbw_bytes_per_s;
    if (nodes > 1) { /* a ring over nodes crosses each node's network once each way */
        double net = network_bytes_per_s > 0 ? network_bytes_per_s : eci_const(ctx, EC_C_internode_bytes_per_s);
        if (net < c->busbw_bytes_per_s) {
            c->busbw_bytes_per_s = net;
            c->bottleneck = "network between nodes";
        }
        c->copy_bytes_per_s = min2(c->copy_bytes_per_s, net);
    }
    return load_ramp(ctx, c);
}

/* eci_comm_busbw_at on c's ramp at bus bandwidth busbw (a group's, or c's own). */
static double busbw_at(const eci_comm *c, double busbw, double bytes, double ring_steps)
{
    if (c->ramp_points < 2 || bytes <= 0 || ring_steps <= 0)
        return busbw;
    double equiv = bytes * (c->ramp_ref_ranks / ring_steps) * (c->ramp_ref_busbw_bytes_per_s / busbw);
    double x = log(equiv), frac;
    int last = c->ramp_points - 1;
    if (x >= c->ramp_log_bytes[last]) {
        frac = c->ramp_frac[last];
    } else if (x <= c->ramp_log_bytes[0]) { /* latency-bound: time flat, busbw grows with size */
        frac = c->ramp_frac[0] * exp(x - c->ramp_log_bytes[0]);
    } else {
        if (c->ramp_fn == NULL ||
            gsl_interp_eval_e(c->ramp_fn, c->ramp_log_bytes, c->ramp_frac, x, NULL, &frac) != GSL_SUCCESS)
            frac = c->ramp_frac[last];
    }
    return busbw * frac;
}

double eci_comm_busbw_at(const eci_comm *c, double bytes, double ring_steps)
{
    return busbw_at(c, c->busbw_bytes_per_s, bytes, ring_steps);
}

/* The cache entry of a collective of `bytes` over n ranks at busbw (kind: an eci_coll, -1 for
 * eci_comm_allreduce_s) on c's ramp: *hit when it holds the time, else the slot to fill
 * (memo_put).  NULL when c has no cache (an eci_comm made by hand). */
static coll_memo *memo_get(const eci_comm *c, int kind, double bytes, double n, int nodes, double busbw, double hop,
                           int *hit)
{
    *hit = 0;
    if (c->cache == NULL)
        return NULL;
    uint64_t b;
    memcpy(&b, &bytes, sizeof b);
    b ^= b >> 29;
    b = (b ^ ((uint64_t)n * 0x9e3779b97f4a7c15u) ^ (uint64_t)(kind + 2)) * 0xbf58476d1ce4e5b9u;
    coll_memo *m = &c->cache->memo[(b >> 40) & (COLL_MEMO - 1)];
    *hit = m->used && m->bytes == bytes && m->n == n && m->nodes == nodes && m->busbw == busbw && m->hop == hop &&
           m->kind == kind && m->ref_busbw == c->ramp_ref_busbw_bytes_per_s && m->ref_ranks == c->ramp_ref_ranks &&
           m->points == c->ramp_points && m->intra_pci == c->intra_pci && m->tuner == c->tuner &&
           m->cc == c->compute_capability;
    return m;
}

static double memo_put(const eci_comm *c, coll_memo *m, int kind, double bytes, double n, int nodes, double busbw,
                       double hop, double s)
{
    if (m != NULL)
        *m = (coll_memo){.bytes = bytes, .n = n, .nodes = nodes, .busbw = busbw, .hop = hop,
                         .ref_busbw = c->ramp_ref_busbw_bytes_per_s, .ref_ranks = c->ramp_ref_ranks, .kind = kind,
                         .points = c->ramp_points, .used = 1, .s = s, .intra_pci = c->intra_pci, .tuner = c->tuner,
                         .cc = c->compute_capability};
    return s;
}

/* ---- NCCL's algorithm choice ----------------------------------------------------------- */
/* floor(log2(x)) for x >= 1 (NCCL's log2i), -1 below. */
static int log2_floor(double x)
{
    if (x < 1)
        return -1;
    int e;
    frexp(x, &e);
    return e - 1;
}

/* NCCL's tuner model (src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime) of an
 * all-reduce: the fastest protocol's time of the ring (*ring_s) and of the tree (*tree_s).
 * Ring: 2(n-1) steps, 2(nodes-1) of them across nodes; tree: 2 x (ranks per node - 1) steps
 * within a node (a chain) and 2 log2(nodes) across.  One channel is assumed for the ring's
 * large-message test (bytes / ranks >= the row's net_large_min_bytes_per_rank); the per-channel and LL bandwidth caps are left out
 * (they need the channel count and the CPU vendor). */
static void nccl_model(const eci_comm *c, double bytes, int n, int nodes, double busbw, double *ring_s,
                       double *tree_s)
{
    const eci_nccl_tuner *t = c->tuner;
    int hw = c->intra_pci, multi = nodes > 1, ppn = n / nodes;
    double steps = 2.0 * (n - 1), net_steps = multi ? 2.0 * (nodes - 1) : 0;
    double tree_net_steps = 2.0 * log2_floor(nodes), tree_intra_steps = 2.0 * (ppn - 1);
    *ring_s = *tree_s = HUGE_VAL;
    for (int p = 0; p < ECI_NCCL_PROTOS; p++) {
        const eci_nccl_proto *r = &t->p[ECI_NCCL_RING][p], *q = &t->p[ECI_NCCL_TREE][p];
        if ((r->needs_nvlink && hw) || c->compute_capability < r->min_compute_capability)
            continue;
        double intra = r->intra_s[hw];
        if (multi && intra < r->net_step_floor_s)
            intra = r->net_step_floor_s;
        double net = ppn == 1 ? q->net_s : r->net_s; /* NCCL: one rank per node exposes the tree's */
        double lat = r->base_s + (steps - net_steps) * intra + net_steps * net;
        if (multi && bytes >= r->net_large_min_bytes_per_rank * n)
            lat *= c->compute_capability < 8.0 ? r->net_large_mult_before_sm80 : r->net_large_mult;
        double s = lat + bytes * steps / n / (busbw * (multi ? r->busbw_frac : r->busbw_frac_one_node));
        if (s < *ring_s)
            *ring_s = s;
        if ((q->needs_nvlink && hw) || c->compute_capability < q->min_compute_capability)
            continue;
        lat = q->base_s + tree_intra_steps * q->intra_s[hw] + tree_net_steps * q->net_s;
        int cls = log2_floor(bytes / q->corr_first_bytes);
        double corr = cls >= 0 && cls < q->n_corr ? q->corr[cls] : 1.0;
        s = lat + 2.0 * bytes / (busbw * (multi ? q->busbw_frac : q->busbw_frac_one_node) * corr);
        if (s < *tree_s)
            *tree_s = s;
    }
}

int eci_nccl_allreduce_algo(const eci_comm *c, double bytes, int n, int nodes, double busbw_bytes_per_s,
                            double *model_s)
{
    double ring = 0, tree = 0;
    int algo = ECI_NCCL_RING;
    if (c->tuner != NULL && n > 1 && nodes >= 1 && bytes > 0 && busbw_bytes_per_s > 0) {
        nccl_model(c, bytes, n, nodes, busbw_bytes_per_s, &ring, &tree);
        algo = tree < ring ? ECI_NCCL_TREE : ECI_NCCL_RING;
    }
    if (model_s != NULL)
        *model_s = algo == ECI_NCCL_TREE ? tree : ring;
    return algo;
}

/* An all-reduce as NCCL runs it.  Across nodes: NCCL's model of the algorithm it picks (ring
 * or tree).  On one node NCCL's model picks the ring at every size, which is priced by the
 * measured ramp (read on one node), with its latency 2(n-1) x hop_s added (a group's,
 * eci_coll_s) or as a floor (the whole job's DDP ring); a tree that won there would take
 * its model's time. */
static double allreduce_s(const eci_comm *c, double bytes, int n, int nodes, double busbw, double hop_s, int add)
{
    double model_s;
    int algo = eci_nccl_allreduce_algo(c, bytes, n, nodes, busbw, &model_s);
    if (algo == ECI_NCCL_TREE || (nodes > 1 && c->tuner != NULL))
        return model_s;
    double lat_s = hop_s * 2.0 * (n - 1);
    double bw_s = 2.0 * (n - 1) / n * bytes / busbw_at(c, busbw, bytes, n);
    return add ? lat_s + bw_s : bw_s > lat_s ? bw_s : lat_s;
}

const char *eci_allreduce_algo_name(const eci_comm *c, const eci_group *g, double bytes)
{
    int algo = g != NULL ? eci_nccl_allreduce_algo(c, bytes, g->n, g->nodes, g->busbw_bytes_per_s, NULL)
                         : eci_nccl_allreduce_algo(c, bytes, c->n, c->nodes, c->busbw_bytes_per_s, NULL);
    return algo == ECI_NCCL_TREE ? "tree" : "ring";
}

double eci_comm_allreduce_s(const eci_comm *c, double bytes)
{
    if (c->n <= 1 || bytes <= 0)
        return 0;
    int hit;
    coll_memo *m = memo_get(c, -1, bytes, c->n, c->nodes, c->busbw_bytes_per_s, c->hop_latency_s, &hit);
    if (hit)
        return m->s;
    double s = allreduce_s(c, bytes, c->n, c->nodes, c->busbw_bytes_per_s, c->hop_latency_s, 0);
    return memo_put(c, m, -1, bytes, c->n, c->nodes, c->busbw_bytes_per_s, c->hop_latency_s, s);
}

double eci_comm_bcast_s(const eci_comm *c, double bytes)
{
    if (c->n <= 1 || bytes <= 0)
        return 0;
    double floor_s = c->hop_latency_s * (c->n - 1);
    double bw_s = bytes / eci_comm_busbw_at(c, bytes, c->n - 1);
    return bw_s > floor_s ? bw_s : floor_s;
}

double eci_comm_bcast_chunked_s(const eci_comm *c, double bytes, double chunk_bytes)
{
    if (bytes <= 0)
        return 0;
    if (chunk_bytes <= 0 || chunk_bytes >= bytes)
        return eci_comm_bcast_s(c, bytes);
    double full = floor(bytes / chunk_bytes), rest = bytes - full * chunk_bytes;
    return full * eci_comm_bcast_s(c, chunk_bytes) + eci_comm_bcast_s(c, rest);
}

double eci_allreduce_s(double bytes, int n, double busbw_bytes_per_s, double hop_latency_s)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    return hop_latency_s * 2.0 * (n - 1) + 2.0 * (n - 1) / n * bytes / busbw_bytes_per_s;
}

double eci_bcast_s(double bytes, int n, double busbw_bytes_per_s, double hop_latency_s)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    return hop_latency_s * (n - 1) + bytes / busbw_bytes_per_s;
}

/* ---- groups and their collectives ----------------------------------------------------------- */
void eci_comm_group(const eci_comm *c, int n, int stride, int per_node, double net_bytes_per_s, double net_frac,
                    eci_group *g)
{
    g->n = n;
    g->hop_latency_s = c->hop_latency_s;
    int in_node = stride >= per_node ? 1 : per_node / stride; /* members a node holds */
    if (in_node > n)
        in_node = n;
    g->nodes = (n + in_node - 1) / in_node;
    g->in_node = in_node;
    g->busbw_bytes_per_s = c->intra_busbw_bytes_per_s;
    g->p2p_bytes_per_s = c->intra_busbw_bytes_per_s;
    if (g->nodes > 1) { /* the ring leaves each node through the NICs of its members there */
        double net = in_node * net_bytes_per_s * net_frac;
        g->busbw_bytes_per_s = min2(g->busbw_bytes_per_s, net);
        g->p2p_bytes_per_s = net_bytes_per_s * net_frac;
    }
}

/* NCCL's bandwidth per channel (one CTA) of a ring over NVLink for the GPU's generation, which
 * NCCL picks by the lowest compute capability (models/constants.csv nccl_channel_*: the rates and
 * the capabilities from which the Hopper and Blackwell rates hold, with their sources). */
double eci_nccl_channel_bytes_per_s(const ec_ctx *ctx, double compute_capability)
{
    if (compute_capability >= eci_const(ctx, EC_C_nccl_channel_sm100_from_cc))
        return eci_const(ctx, EC_C_nccl_channel_sm100_bytes_per_s);
    if (compute_capability >= eci_const(ctx, EC_C_nccl_channel_sm90_from_cc))
        return eci_const(ctx, EC_C_nccl_channel_sm90_bytes_per_s);
    return eci_const(ctx, EC_C_nccl_channel_bytes_per_s);
}

/* A communicator limited to `ctas` channels (NCCL max_ctas; 0: NCCL's own count): its ring and its
 * peer-to-peer sends at most ctas x channel_bytes_per_s. */
void eci_group_cap_channels(eci_group *g, int ctas, double channel_bytes_per_s)
{
    if (ctas <= 0 || g->n <= 1)
        return;
    double cap = ctas * channel_bytes_per_s;
    g->busbw_bytes_per_s = min2(g->busbw_bytes_per_s, cap);
    g->p2p_bytes_per_s = min2(g->p2p_bytes_per_s, cap);
}

/* An all-to-all over a group that spans nodes: each member sends bytes / n to every other member
 * at once (pairwise sends, no ring), the (n - in_node) / n of its bytes meant for other nodes
 * through its own NIC at one NIC's rate times the network's efficiency (p2p_bytes_per_s), the
 * (in_node - 1) / n for its node's members over NVLink at the node's bus bandwidth alongside: the
 * slower of the two, not a ring's busbw of in_node NICs.  DeepEP's normal kernels measure 43-58
 * GB/s of RDMA per H800 with one 400 Gb/s ConnectX-7 NIC ("~50 GB/s maximum") at EP 16-64 across
 * nodes, against 153-158 GB/s over NVLink at EP 8 (deepseek-ai/DeepEP docs/legacy.md @0297fc80,
 * "Normal kernels with NVLink and RDMA forwarding"). */
static double alltoall_across_s(const eci_comm *c, const eci_group *g, double bytes)
{
    double n = g->n, in_node = g->in_node > 0 ? g->in_node : ceil(n / g->nodes);
    double far_s = (n - in_node) / n * bytes / g->p2p_bytes_per_s;
    double near_s = in_node > 1 ? (in_node - 1) / n * bytes / c->intra_busbw_bytes_per_s : 0;
    return (n - 1) * g->hop_latency_s + (far_s > near_s ? far_s : near_s);
}

double eci_coll_s(const eci_comm *c, const eci_group *g, eci_coll coll, double bytes)
{
    if (g->n <= 1 || bytes <= 0 || coll == ECI_COLL_NONE)
        return 0;
    double n = g->n, a = g->hop_latency_s;
    if (coll == ECI_COLL_P2P)
        return a + bytes / g->p2p_bytes_per_s;
    if (coll == ECI_COLL_ALLTOALL && g->nodes > 1)
        return alltoall_across_s(c, g, bytes);
    int hit;
    coll_memo *m = memo_get(c, (int)coll, bytes, n, g->nodes, g->busbw_bytes_per_s, a, &hit);
    if (hit)
        return m->s;
    double s;
    if (coll == ECI_COLL_ALLREDUCE) {
        s = allreduce_s(c, bytes, g->n, g->nodes, g->busbw_bytes_per_s, a, 1);
    } else { /* the ramp of c at this group's size and rate */
        double bw = busbw_at(c, g->busbw_bytes_per_s, bytes, n - 1);
        s = (n - 1) * a + (n - 1) / n * bytes / bw;
    }
    return memo_put(c, m, (int)coll, bytes, n, g->nodes, g->busbw_bytes_per_s, a, s);
}

double eci_coll_reduce_sharded_s(const eci_comm *c, const eci_group *shard, const eci_group *replica, double bytes)
{
    double t = eci_coll_s(c, shard, ECI_COLL_REDUCE_SCATTER, bytes);
    if (replica != NULL && replica->n > 1 && shard->n > 0) /* the shard's sum across the replicas */
        t += eci_coll_s(c, replica, ECI_COLL_ALLREDUCE, bytes / shard->n);
    return t;
}

/* ---- DDP bucket schedule ------------------------------------------------------------------ */
void eci_ddp_begin(eci_ddp_sched *s, const eci_comm *comm, double first_cap_bytes, double cap_bytes)
{
    memset(s, 0, sizeof *s);
    s->comm = comm;
    s->first_cap_bytes = first_cap_bytes;
    s->cap_bytes = cap_bytes;
    s->first_start_s = -1;
    s->coll = ECI_COLL_ALLREDUCE; /* a caller with a group may set reduce-scatter (ZeRO-1/2) */
}

void eci_ddp_restart(eci_ddp_sched *s)
{
    s->open_bytes = 0;
    s->launched = 0;
    s->first_start_s = -1; /* the group and its collective stay as the caller set them */
}

void eci_ddp_launch(eci_ddp_sched *s, double t_s)
{
    double start = t_s > s->comm_free_s ? t_s : s->comm_free_s;
    const unsigned n_memo = sizeof s->memo_bytes / sizeof s->memo_bytes[0];
    unsigned m = 0;
    while (m < n_memo && s->memo_bytes[m] != s->open_bytes)
        m++;
    double ar;
    if (m < n_memo) {
        ar = s->memo_s[m];
    } else {
        if (s->group == NULL)
            ar = eci_comm_allreduce_s(s->comm, s->open_bytes);
        else if (s->coll == ECI_COLL_REDUCE_SCATTER) /* ZeRO-1/2, across the replicas too with a shard group */
            ar = eci_coll_reduce_sharded_s(s->comm, s->group, s->replica, s->open_bytes);
        else
            ar = eci_coll_s(s->comm, s->group, s->coll, s->open_bytes);
        m = s->memo_next++ % n_memo;
        s->memo_bytes[m] = s->open_bytes;
        s->memo_s[m] = ar;
    }
    if (s->first_start_s < 0)
        s->first_start_s = start;
    if (s->on_launch != NULL) { /* a trace: name the algorithm too */
        int coll = s->group != NULL ? (int)s->coll : ECI_COLL_ALLREDUCE;
        s->on_launch(s->on_launch_arg, start, ar, s->open_bytes, coll,
                     coll == ECI_COLL_ALLREDUCE ? eci_allreduce_algo_name(s->comm, s->group, s->open_bytes) : "ring");
    }
    s->comm_free_s = start + ar;
    s->comm_busy_s += ar;
    s->launched++;
    s->open_bytes = 0;
}

double eci_ddp_finish(eci_ddp_sched *s, double backward_end_s)
{
    if (s->open_bytes > 0)
        eci_ddp_launch(s, backward_end_s);
    return s->comm_free_s > backward_end_s ? s->comm_free_s - backward_end_s : 0;
}


/* ---- stragglers --------------------------------------------------------------------------- */
static double max_normal_integrand(double x, void *params)
{
    int n = *(const int *)params;
    return x * n * gsl_ran_ugaussian_pdf(x) * gsl_pow_int(gsl_cdf_ugaussian_P(x), n - 1);
}

int eci_expected_max_normal(ec_ctx *ctx, int n, double *out)
{
    *out = 0;
    if (n <= 1)
        return EC_OK;
    if (n <= ECI_MAX_NORMAL_CACHED && ctx->max_normal[n] > 0) { /* a sweep asks the same n again and again */
        *out = ctx->max_normal[n];
        return EC_OK;
    }
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
    if (w == NULL)
        return eci_error(ctx, EC_ENOMEM, "out of memory (integration workspace)");
    gsl_function f = {.function = max_normal_integrand, .params = &n};
    double err;
    int status = gsl_integration_qagi(&f, 1e-10, 1e-8, 200, w, out, &err);
    gsl_integration_workspace_free(w);
    if (status != GSL_SUCCESS)
        return eci_error(ctx, EC_EDOM, "expected maximum of %d normal draws: %s", n, gsl_strerror(status));
    if (n <= ECI_MAX_NORMAL_CACHED)
        ctx->max_normal[n] = *out;
    return EC_OK;
}
