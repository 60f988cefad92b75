/*
 * cli.h: the epochcast CLI's private header.  lua/epochcast.c holds main(), the global options
 * and the command table; each command lives in its own cli_<command>.c (cli_catalog.c lists
 * gpus, models and networks), the process's state (signals, budgets, progress bar) in
 * cli_host.c, a scenario's sandbox in cli_sandbox.c, and the small helpers the commands share
 * in cli_message.c (messages), cli_args.c (the command line) and cli_util.c (output formats).
 * Not installed; the CLI only.
 * Each command returns the process exit status: 0 done, 1 an error or an unmet plan,
 * 2 a usage error.  Every C object a command holds sits in a Lua box, so an error cannot leak it.
 */
#ifndef EC_CLI_H
#define EC_CLI_H

#include "lec_priv.h"

#include <stdio.h>

#define GIB (1024.0 * 1024.0 * 1024.0)
/* A CSV cell's text: room for any config value or result column (predict, sweep). */
#define CELL_MAX EC_WARNING_TEXT_MAX

/* ---- the commands: argc words after the command's name ------------------------------------ */
int ecC_cmd_gpus(lua_State *L, int argc, char **argv);      /* cli_catalog.c */
int ecC_cmd_models(lua_State *L, int argc, char **argv);    /* cli_catalog.c */
int ecC_cmd_networks(lua_State *L, int argc, char **argv);  /* cli_catalog.c */
int ecC_cmd_predict(lua_State *L, int argc, char **argv);
int ecC_cmd_sweep(lua_State *L, int argc, char **argv);
int ecC_cmd_validate(lua_State *L, int argc, char **argv);
int ecC_cmd_calibrate(lua_State *L, int argc, char **argv);
int ecC_cmd_plan(lua_State *L, int argc, char **argv);
int ecC_cmd_compare(lua_State *L, int argc, char **argv);
int ecC_cmd_max_batch(lua_State *L, int argc, char **argv); /* cli_compare.c */
int ecC_cmd_optimize(lua_State *L, int argc, char **argv);
/* run: the whole command line, script the index of the first word after "run" (its arg table
 * has the host and the command at negative indices, as lua's has). */
int ecC_cmd_run(lua_State *L, int argc, char **argv, int script);
/* Keep a calibrated profile's path for every context the module creates (--profile). */
void ecC_set_profile(lua_State *L, const char *path);

/* ---- cli_message.c: messages on stderr ---------------------------------------------------- */
/* "epochcast: message" on stderr (control characters shown as \xNN, the progress bar cleared
 * first); returns 1. */
int ecC_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message, then "Try 'epochcast CMD --help'." ('epochcast --help' for cmd NULL); returns 2. */
int ecC_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "pname: msg" (pname NULL: msg alone) on stderr, escaped as ecC_error's. */
void ecC_message(const char *pname, const char *msg);
/* msg on f with control characters other than line feeds and tabs shown as \xNN, so a value
 * echoed in a message cannot drive the terminal. */
void ecC_put_escaped(FILE *f, const char *msg);
/* Print the error object on top (if status is an error) and pop it; returns status. */
int ecC_report(lua_State *L, int status);

/* ---- cli_args.c: the command line --------------------------------------------------------- */
int ecC_is_help(const char *arg);
/* An option with a value, "--name VALUE" or "--name=VALUE" (also "-o VALUE" for a short
 * alias): 1 and *value when argv[*i] is that option (*i then at its last word), 0 when it is
 * another word, -1 when the value is missing. */
int ecC_opt_value(int argc, char **argv, int *i, const char *name, const char *alias, const char **value);
/* Split value at the commas outside parentheses, in place; returns the number of parts. */
size_t ecC_split(char *value, const char **parts, size_t max);
/* Copy a word key=values (eq its '=') into userdata kept on the stack, cut at the '=': returns
 * the key, *value the text after it. */
char *ecC_key_word(lua_State *L, const char *word, const char *eq, char **value);
/* ecC_split of value into *parts, an array kept on the stack (userdata) with room for them all. */
size_t ecC_split_kept(lua_State *L, char *value, const char ***parts);
/* Read argc key=value words into cfg, which the caller has initialised (ec_config_init); the
 * caller splits off "--" and options first.  Returns -1 when every word was read, else the exit
 * status (message printed). */
int ecC_config_words(lua_State *L, ec_ctx *ctx, const char *cmd, int argc, char **argv, ec_config *cfg);
/* --threads N: N from 0 to ECL_SWEEP_MAX_THREADS, else -1. */
int ecC_threads_arg(const char *text);
/* The command line of a command on a run-record file (validate, calibrate). */
typedef struct ecC_runs_args {
    const char *runs_path, *out, *profile, *plot;
    int all;
    unsigned flags;   /* EC_RUNS_ALLOW_PATHS */
} ecC_runs_args;
enum { ECC_OPT_PROFILE = 1, ECC_OPT_ALL = 2, ECC_OPT_PLOT = 4 };
/* Parse "RUNS.csv [-o FILE] [--profile P] [--plot F] [--all] [--allow-paths]" in any order,
 * each value also as --opt=VALUE (options as allowed: ECC_OPT_*).  Returns -1 when the command
 * should go on, else the exit status (0 after --help, which prints usage). */
int ecC_parse_runs_args(const char *cmd, const char *usage, int allowed, int argc, char **argv, ecC_runs_args *ra);

/* ---- cli_util.c: output formats ----------------------------------------------------------- */
/* (durations and money as people read them: ec_format_duration, ec_format_money) */
/* predict's cost lines: the run's cost (and per epoch) or, without a run, per 1M tokens (1k
 * samples), then the hourly price and its offer; "no offer" without a price. */
void ecC_print_cost(const ec_config *cfg, const ec_result *res);
/* The step's p10-p90 in ms as "LO-HI" (%.4g each), "-" without an interval; returns buf. */
char *ecC_step_band(const ec_result *res, char *buf, size_t n);
/* Write rows (nrows x ncols fields) to path through the atomic writer; 0, or 1 (said). */
int ecC_write_csv_file(lua_State *L, ec_ctx *ctx, const char *path, const char *const *fields, size_t nrows,
                       size_t ncols);

/* ---- cli_host.c: the process's state ------------------------------------------------------ */
/* SIGINT and SIGTERM stop the work in hand; SIGALRM is a scenario's time budget. */
void ecC_install_signals(void);
/* Make every context the module creates allocate through the memory budget and report progress
 * (a bar for long validations and calibrations on a terminal; a stop after a signal). */
void ecC_host_register(lua_State *L);
/* Clear the progress bar, if one is drawn. */
void ecC_clear_bar(void);
/* The exit status after SIGINT or SIGTERM, 128 + the signal as a shell reports it; 0 without. */
int ecC_interrupt_status(void);
/* A scenario's budgets (0: none), from the first instruction of its script ... */
void ecC_budget_begin(lua_State *L, double max_seconds, size_t max_bytes);
/* ... to its return with status (its error, said here, on top): the exit status.  The budgets
 * hold on while the state closes (ecC_close_state): its finalizers run under them. */
int ecC_budget_end(lua_State *L, int status, size_t max_bytes);
/* Close the state: 0, or 1 when a scenario's finalizer was refused memory (said). */
int ecC_close_state(lua_State *L);

/* ---- cli_sandbox.c ------------------------------------------------------------------------ */
/* Open the standard libraries for script: sandboxed when asked (sandbox 1) or, by default
 * (sandbox -1), when the script is not to be trusted (with a note).  Whether it is sandboxed,
 * or -1 when it is refused (a file others may change, with --no-sandbox; said). */
int ecC_open_run_libs(lua_State *L, const char *script, int sandbox);

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
