/*
 * cli.h: the commands of the epochcast CLI that live outside lua/epochcast.c (plan, compare,
 * max-batch) and the small helpers they share (cli_util.c).  Not installed; the CLI only.
 * Each command returns the process exit status: 0 done, 1 an error or an unmet plan,
 * 2 a usage error.  Every C object a command holds sits in a Lua box, so an error cannot leak it.
 */
#ifndef EC_CLI_H
#define EC_CLI_H

#include "lec_priv.h"

int ecC_cmd_plan(lua_State *L, int argc, char **argv);
int ecC_cmd_compare(lua_State *L, int argc, char **argv);
int ecC_cmd_max_batch(lua_State *L, int argc, char **argv);
int ecC_cmd_optimize(lua_State *L, int argc, char **argv);

/* ---- cli_util.c ---------------------------------------------------------------------- */
/* "epochcast: message" on stderr; returns 1. */
int ecC_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message, then "Try 'epochcast CMD --help'."; returns 2. */
int ecC_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ecC_is_help(const char *arg);
/* Split value at the commas outside parentheses, in place; returns the number of parts. */
size_t ecC_split(char *value, const char **parts, size_t max);
/* Read argc key=value words into cfg, which the caller has initialised (ec_config_init); the
 * caller splits off "--" and options first.  Returns -1 when every word was read, else the exit
 * status (message printed). */
int ecC_config_words(lua_State *L, ec_ctx *ctx, const char *cmd, int argc, char **argv, ec_config *cfg);
/* --threads N: N from 0 to ECL_SWEEP_MAX_THREADS, else -1. */
int ecC_threads_arg(const char *text);
/* A duration as people plan with it: "850 ms", "42.0 s", "12.5 min", "4.2 h", "46.6 days"; "-" for
 * 0 or less (unknown).  Returns buf. */
const char *ecC_duration(double s, char *buf, size_t n);
/* An amount of money with its currency: "USD 0.0123", "USD 1,021.44" (cents below 100,000),
 * "USD 1,082,388"; "-" for 0 or less (unknown).  Returns buf. */
const char *ecC_money(double amount, const char *currency, char *buf, size_t n);
/* predict's cost lines: the run's cost (and per epoch) or, without a run, per 1M tokens (1k
 * samples), then the hourly price and its offer; "no offer" without a price. */
void ecC_print_cost(const ec_config *cfg, const ec_result *res);

/* ---- cli_mpi.c: the CLI under mpirun (Open MPI; stubs when built without MPI) ------------- */
/* Join MPI when the process was started by mpirun (its environment says so): 1 then, else 0.
 * Ranks other than 0 write nothing to stdout or stderr (rank 0 speaks for all). */
int ecC_mpi_init(int *argc, char ***argv);
/* Leave MPI with the process's exit code: a rank that fails alone (the others not at the exit
 * within a few seconds: they wait for it in a collective) stops every rank (MPI_Abort). */
int ecC_mpi_finalize(int code);
/* Whether any rank failed, each rank giving its own `failed` (a collective: every rank calls it
 * at the same point); without MPI, `failed`.  Before a split starts, so that a rank that cannot
 * start (rank 0 refusing its -o target) ends every rank rather than leaving them waiting. */
int ecC_mpi_agree(int failed);
int ecC_mpi_rank(void);   /* 0 without MPI */
int ecC_mpi_size(void);   /* 1 without MPI */
/* ecL_sweep_run split over the MPI ranks (rank r predicts blocks r, r + K, ...; rank 0
 * receives the others' points and hands every point to fn in order, as one process would;
 * fn is called on rank 0 only).  Without MPI or on one rank, ecL_sweep_run. */
int ecC_sweep_run(lua_State *L, ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                  ec_sweep_opts *opts, ecL_point_fn fn, void *ud, char *msg, size_t msg_size);
/* ec_optimize_run split over the MPI ranks (part = rank of parts = ranks; rank 0 merges the
 * others' candidates and ranks them all, as one process would).  Without MPI, ec_optimize_run.
 * On failure msg says why (this rank's message, or that another rank failed). */
int ecC_optimize_run(ec_ctx *ctx, ec_optimize *opt, char *msg, size_t msg_size);


#endif /* EC_CLI_H */
