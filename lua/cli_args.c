/*
 * cli_args.c: the command line as the CLI's commands read it: --help, options with a value
 * ("--name VALUE", "--name=VALUE", a short alias), a key's comma-separated values, key=value
 * words into a config (ec_config_set_word), --threads, and the arguments of the commands on a
 * run-record file (validate, calibrate).  Messages and exit statuses: cli_message.c.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ecC_is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

size_t ecC_split(char *value, const char **parts, size_t max)
{
    size_t n = 0;
    int depth = 0;
    parts[n++] = value;
    for (char *p = value; *p != '\0'; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        else if (*p == ',' && depth == 0 && n < max) {
            *p = '\0';
            parts[n++] = p + 1;
        }
    }
    return n;
}

char *ecC_key_word(lua_State *L, const char *word, const char *eq, char **value)
{
    size_t len = strlen(word);
    char *key = (char *)lua_newuserdatauv(L, len + 1, 0);
    memcpy(key, word, len + 1);
    key[eq - word] = '\0';
    *value = key + (eq - word) + 1;
    return key;
}

size_t ecC_split_kept(lua_State *L, char *value, const char ***parts)
{
    size_t cap = strlen(value) / 2 + 2;
    *parts = (const char **)lua_newuserdatauv(L, cap * sizeof **parts, 0);
    return ecC_split(value, *parts, cap);
}

int ecC_config_words(lua_State *L, ec_ctx *ctx, const char *cmd, int argc, char **argv, ec_config *cfg)
{
    (void)L;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strchr(a, '=') == NULL)
            return ecC_usage_error(cmd, "%s: expected key=value, got '%s'", cmd, a);
        if (ec_config_set_word(ctx, cfg, a) != EC_OK)
            return ecC_error("%s", ec_ctx_errmsg(ctx));
    }
    return -1;
}

int ecC_threads_arg(const char *text)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (end == text || *end != '\0' || n < 0 || n > ECL_SWEEP_MAX_THREADS)
        return -1;
    return (int)n;
}

int ecC_opt_value(int argc, char **argv, int *i, const char *name, const char *alias, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (strcmp(a, name) != 0 && (alias == NULL || strcmp(a, alias) != 0))
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

/* Parse "RUNS.csv [-o FILE] [--profile P] [--plot F] [--all] [--allow-paths]" in any order,
 * each value also as --opt=VALUE (options as allowed).  Returns -1 when the command should
 * go on, else the exit status (0 after --help). */
int ecC_parse_runs_args(const char *cmd, const char *usage, int allowed, int argc, char **argv,
                        ecC_runs_args *ra)
{
    memset(ra, 0, sizeof *ra);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if (ecC_is_help(a)) {
            fputs(usage, stdout);
            return 0;
        } else if ((m = ecC_opt_value(argc, argv, &i, "--output", "-o", &v)) != 0) {
            if (m < 0)
                return ecC_usage_error(cmd, "%s: %s needs a file name", cmd, a);
            ra->out = v;
        } else if ((allowed & ECC_OPT_PROFILE) && (m = ecC_opt_value(argc, argv, &i, "--profile", NULL, &v)) != 0) {
            if (m < 0)
                return ecC_usage_error(cmd, "%s: --profile needs a file name", cmd);
            ra->profile = v;
        } else if ((allowed & ECC_OPT_PLOT) && (m = ecC_opt_value(argc, argv, &i, "--plot", NULL, &v)) != 0) {
            if (m < 0)
                return ecC_usage_error(cmd, "%s: --plot needs a file name", cmd);
            ra->plot = v;
        } else if ((allowed & ECC_OPT_ALL) && strcmp(a, "--all") == 0) {
            ra->all = 1;
        } else if (strcmp(a, "--allow-paths") == 0) {
            ra->flags |= EC_RUNS_ALLOW_PATHS;
        } else if (a[0] == '-' && a[1] != '\0') {
            return ecC_usage_error(cmd, "%s: unknown option '%s'", cmd, a);
        } else if (ra->runs_path == NULL) {
            ra->runs_path = a;
        } else {
            return ecC_usage_error(cmd, "%s: unexpected argument '%s'", cmd, a);
        }
    }
    if (ra->runs_path == NULL)
        return ecC_usage_error(cmd, "%s: missing RUNS.csv", cmd);
    return -1;
}
