/*
 * predict.h: what ec_predict resolves from a config before pricing it (predict.c), shared
 * with the other entry points that predict (max_batch, validation).
 */
#ifndef EC_PREDICT_H
#define EC_PREDICT_H

#include "compute.h"

typedef struct eci_resolved {
    const eci_gpu *gpu;
    const eci_host *host;
    const eci_net *net;
    int task;
    int seq, image_size;
    ec_strategy strategy;
    int nodes;
    const char *topology;
} eci_resolved;

/* ec_predict with explicit calibration parameters (NULL: the context's current ones). */
EC_INTERNAL int eci_predict(ec_ctx *ctx, const ec_config *cfg, const eci_calib *calib, ec_result *res);
EC_INTERNAL int eci_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r);
/* Ring all-reduce time of `bytes` over n ranks: alpha + 2(n-1)/n x bytes / busbw. */
EC_INTERNAL double eci_allreduce_s(double bytes, int n, double busbw_bytes_per_s, double alpha_s);

#endif /* EC_PREDICT_H */
