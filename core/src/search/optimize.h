/*
 * optimize.h: what the layout search (optimize.c) shares with its tests.
 */
#ifndef EC_OPTIMIZE_H
#define EC_OPTIMIZE_H

#include "catalog/catalog.h"

/* Model states per GPU of cfg (dp data-parallel ranks, params parameters): a lower bound of the
 * bytes the memory model allocates, below which the search does not prune. */
EC_INTERNAL double eci_optimize_state_bound_bytes(ec_ctx *ctx, const ec_config *cfg, int dp, double params);

#endif /* EC_OPTIMIZE_H */
