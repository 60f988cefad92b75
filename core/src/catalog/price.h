/*
 * price.h: the price of renting a configuration's GPUs (price.c), for the prediction's cost (sim/predict.c).
 */
#ifndef EC_PRICE_H
#define EC_PRICE_H

#include "catalog/catalog.h"

typedef struct eci_prices eci_prices;

/* The price a job pays per hour, and what it rents. */
typedef struct eci_quote {
    double per_hour;      /* the whole job (every node), in currency; 0 when no price is known */
    char offer[160];      /* "aws p5.48xlarge us-east-1 (8 x h100-sxm5-80gb, USD 55.04/h, 2026-01-19)" */
    char currency[16];    /* "USD": the table's (price_per_gpu_hour too; USD without a table); "" unpriced */
} eci_quote;

/* Load the models/ folder's price table (ec_ctx_load_models, when prices.csv exists). */
EC_INTERNAL int eci_price_load_default(ec_ctx *ctx, const char *path);
/* Free the context's price tables. */
EC_INTERNAL void eci_price_ctx_free(ec_ctx *ctx);
/* The price of cfg on gpu across nodes machines: price_per_gpu_hour, else the cheapest offer
 * of the config's table (prices=, else the default) with room for one node's GPUs, from
 * provider= when given.  q->per_hour is 0 when no offer fits.  Exceptional returns: a
 * prices= file that does not load (its error, prefixed with the key), EC_ENOTFOUND for a
 * provider the table does not name. */
EC_INTERNAL int eci_price_quote(ec_ctx *ctx, const ec_config *cfg, const eci_gpu *gpu, int nodes, eci_quote *q);

#endif /* EC_PRICE_H */
