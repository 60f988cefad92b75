/*
 * internal.h: every internal header of core/src at once, for the programs outside the library
 * that reach its internals (the unit tests, the benches, the Lua module and the CLI).  The
 * library's own files never include it: each includes the headers of its layer and the layers
 * below (core/src/README.md), which tools/check_layers.py checks.
 */
#ifndef EC_INTERNAL_H
#define EC_INTERNAL_H

#include "base/base.h"
#include "catalog/arch.h"
#include "catalog/catalog.h"
#include "catalog/consts.h"
#include "catalog/params.h"
#include "catalog/price.h"
#include "model/comm.h"
#include "model/compute.h"
#include "model/layout.h"
#include "model/memory.h"
#include "model/net.h"
#include "model/optim.h"
#include "model/shard.h"
#include "model/trainer.h"
#include "model/workload.h"
#include "sim/lengths.h"
#include "sim/pipeline.h"
#include "sim/predict.h"
#include "search/optimize.h"
#include "search/workers.h"

#endif /* EC_INTERNAL_H */
