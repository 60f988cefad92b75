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

/* ---- cli_util.c ---------------------------------------------------------------------- */
/* "epochcast: message" on stderr; returns 1. */
int ecC_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message, then "Try 'epochcast CMD --help'."; returns 2. */
int ecC_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ecC_is_help(const char *arg);
/* Split value at the commas outside parentheses, in place; returns the number of parts. */
size_t ecC_split(char *value, const char **parts, size_t max);
/* One CSV line on stdout (libcsv quoting). */
void ecC_print_csv(const char *const *fields, size_t n);
/* Read argc key=value words into cfg, which the caller has initialised (ec_config_init); the
 * caller splits off "--" and options first.  Returns -1 when every word was read, else the exit
 * status (message printed). */
int ecC_config_words(lua_State *L, ec_ctx *ctx, const char *cmd, int argc, char **argv, ec_config *cfg);

#endif /* EC_CLI_H */
