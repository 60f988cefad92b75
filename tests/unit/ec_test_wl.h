/*
 * ec_test_wl.h: lookups in a built workload (model/workload.h) shared by the unit tests that
 * check which ops a network's op list holds: how many ops carry a name, and the first of them.
 */
#ifndef EC_TEST_WL_H
#define EC_TEST_WL_H

#include "ec_test.h"
#include "model/workload.h"

#include <string.h>

static inline size_t ec_test_count_ops(const eci_workload *wl, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < wl->n_ops; i++)
        n += strcmp(wl->ops[i].name, name) == 0;
    return n;
}

/* The first op named `name`; fails the test when there is none. */
static inline const eci_op *ec_test_first_op(const eci_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->n_ops; i++)
        if (strcmp(wl->ops[i].name, name) == 0)
            return &wl->ops[i];
    fail_msg("no op '%s'", name);
    return NULL;
}

#endif
