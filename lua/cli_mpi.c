/*
 * cli_mpi.c: the CLI under mpirun.  Built without MPI (this file's stubs), a sweep runs in
 * one process; the MPI build (EC_HAVE_MPI) splits it over the ranks.
 */
#include "cli.h"

int ecC_mpi_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int ecC_mpi_finalize(int code)
{
    return code;
}

int ecC_mpi_rank(void)
{
    return 0;
}

int ecC_mpi_size(void)
{
    return 1;
}

int ecC_sweep_run(lua_State *L, ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                  ec_sweep_opts *opts, ecL_point_fn fn, void *ud, char *msg, size_t msg_size)
{
    return ecL_sweep_run(L, ctx, base, axes, n_axes, opts, 1, fn, ud, msg, msg_size);
}

int ecC_optimize_run(ec_ctx *ctx, ec_optimize *opt)
{
    (void)ctx;
    return ec_optimize_run(opt);
}
