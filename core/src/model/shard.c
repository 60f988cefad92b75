/*
 * shard.c: FSDP (and ZeRO-3) collectives beside each unit's compute (docs/DESIGN.md 3.3).
 * Forward: unit l's parameters are all-gathered before it runs; the CPU runs ahead and issues
 * gathers early, but FSDP's rate limiter (limit_all_gathers) lets at most `limit` gathered units
 * exist, so gather l starts when unit l - limit has finished.  Backward (BACKWARD_PRE prefetch):
 * the next unit's gather is issued when a unit starts, its gradients are reduce-scattered when
 * it ends; gathers and reductions share the links, so they queue on one stream.  Compute that
 * runs beside a collective is slowed (eci_overlap_stretch_s, the same slowdown DDP uses).
 * Collective times come from comm.c over the groups sim/setup.c builds from the layout.
 * FSDP2 (fully_shard) adds its copies: each gathered unit copied out of the all-gather buffer
 * on the compute stream, each unit's gradients copied into the reduce-scatter buffer on the
 * communication stream (shard.h says where PyTorch runs them).
 */
#include "model/shard.h"

static double max2(double a, double b) { return a > b ? a : b; }

double eci_shard_gather_s(const eci_shard *s, double bytes)
{
    double t = eci_coll_s(s->comm, &s->shard, ECI_COLL_ALLGATHER, bytes);
    if (s->offload_bytes_per_s > 0) /* CPU offload: the local shard comes from pinned host memory first */
        t += bytes / s->shard.n / s->offload_bytes_per_s;
    return t;
}

double eci_shard_copy_out_s(const eci_shard *s, double bytes)
{
    /* split_with_sizes_copy: the all-gather output read, each parameter's tensor written */
    return s->copy_bytes_per_s > 0 ? 2.0 * bytes / s->copy_bytes_per_s : 0;
}

double eci_shard_reduce_s(const eci_shard *s, double bytes)
{
    double t = eci_coll_reduce_sharded_s(s->comm, &s->shard, &s->replica, bytes); /* HYBRID_SHARD: and across */
    if (s->copy_bytes_per_s > 0) /* FSDP2's copy-in: the gradients read, the reduce buffer written */
        t += (1.0 + s->grad_read_frac) * bytes / s->copy_bytes_per_s;
    if (s->offload_bytes_per_s > 0) /* the reduced shard goes to host memory for the CPU optimizer */
        t += bytes / s->shard.n / s->offload_bytes_per_s;
    return t;
}

void eci_shard_begin(eci_shard *s, double t_s)
{
    s->comm_free_s = t_s;
    s->gather_s = s->reduce_s = s->stretch_s = s->launches = s->copy_out_s = 0;
    s->fwd_done = s->bwd_done = 0;
}

/* A collective of unit `unit` (-1: the root) launched at t_s: returns when it ends. */
static double launch(eci_shard *s, double t_s, double dur_s, int gather, int unit)
{
    if (dur_s <= 0) /* nothing to move: ready at once */
        return t_s;
    if (s->on_launch != NULL)
        s->on_launch(s->on_launch_arg, max2(t_s, s->comm_free_s), dur_s, gather, unit < 0 ? -1 : s->unit_base + unit);
    s->comm_free_s = max2(t_s, s->comm_free_s) + dur_s;
    if (gather)
        s->gather_s += dur_s;
    else
        s->reduce_s += dur_s;
    s->launches += 1;
    return s->comm_free_s;
}

double eci_shard_launch(eci_shard *s, double t_s, double dur_s, int gather)
{
    return launch(s, t_s, dur_s, gather, -1);
}

/* Unit compute of unit_s from start_s while the stream is busy until comm_free_s. */
static double compute(eci_shard *s, double start_s, double unit_s)
{
    double slow = eci_overlap_stretch_s(s->comm_free_s, start_s, unit_s, s->slowdown);
    s->stretch_s += slow;
    return start_s + unit_s + slow;
}

double eci_shard_forward(eci_shard *s, double t0_s, double unit_s, int reps, double gather_bytes)
{
    double a = eci_shard_gather_s(s, gather_bytes), copy_s = eci_shard_copy_out_s(s, gather_bytes);
    int limit = s->limit > 0 ? s->limit : 1;
    if (limit > 8) /* compute ends of the last `limit` units are kept (limit <= 8) */
        limit = 8;
    /* unit g of the micro-step's forward (across blocks) is gathered once unit g - limit has freed
     * its parameters, and no later than its block starts */
    double gpu = t0_s, ready = 0;
    for (int l = 0; l < reps; l++) {
        int g = s->fwd_done;
        if (l == 0) {
            double issue = g >= limit ? s->fwd_ends_s[(g - limit) % limit] : t0_s;
            ready = launch(s, issue < t0_s ? issue : t0_s, a, 1, 0);
        }
        double start = max2(gpu, ready);
        if (l + 1 < reps) /* the next gather */
            ready = launch(s, g + 1 >= limit ? s->fwd_ends_s[(g + 1 - limit) % limit] : t0_s, a, 1, l + 1);
        gpu = compute(s, start, unit_s + copy_s);
        s->copy_out_s += copy_s;
        s->fwd_ends_s[g % limit] = gpu;
        s->fwd_done++;
    }
    return gpu;
}

double eci_shard_backward(eci_shard *s, double t0_s, double unit_s, int reps, double gather_bytes,
                          double reduce_bytes)
{
    double a = s->regather ? eci_shard_gather_s(s, gather_bytes) : 0;
    double copy_s = s->regather ? eci_shard_copy_out_s(s, gather_bytes) : 0;
    double r = eci_shard_reduce_s(s, reduce_bytes);
    /* BACKWARD_PRE: a unit's gather is issued as the unit before it (in backward order) starts,
     * the last one of the block before this one included */
    double issue = s->bwd_done && s->bwd_start_s < t0_s ? s->bwd_start_s : t0_s;
    double gpu = t0_s, ready = launch(s, issue, a, 1, reps - 1); /* last unit first */
    for (int l = 0; l < reps; l++) {
        double start = max2(gpu, ready);
        if (l + 1 < reps)
            ready = launch(s, start, a, 1, reps - 2 - l);
        gpu = compute(s, start, unit_s + copy_s);
        s->copy_out_s += copy_s;
        s->bwd_start_s = start;
        s->bwd_done = 1;
        launch(s, gpu, r, 0, reps - 1 - l); /* its gradients, reduce-scattered */
    }
    return gpu;
}
