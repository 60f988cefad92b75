/*
 * cli_util.c: helpers shared by the CLI commands of cli_*.c: messages and exit statuses in
 * the CLI's conventions (epochcast.c), splitting a key's comma-separated values, CSV lines on
 * stdout through libcsv's quoting, and key=value words into a config.
 */
#include "cli.h"

#include <csv.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ecC_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("epochcast: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int ecC_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("epochcast: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'epochcast %s --help'.\n", cmd);
    return 2;
}

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

void ecC_print_csv(const char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            fputc(',', stdout);
        size_t len = strlen(fields[i]);
        if (strcspn(fields[i], ",\"\r\n") < len)
            csv_fwrite(stdout, fields[i], len);
        else
            fputs(fields[i], stdout);
    }
    fputc('\n', stdout);
}

int ecC_config_words(lua_State *L, ec_ctx *ctx, const char *cmd, int argc, char **argv, ec_config *cfg)
{
    (void)L;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strchr(a, '=') == NULL)
            return ecC_usage(cmd, "%s: expected key=value, got '%s'", cmd, a);
        if (ec_config_set_word(ctx, cfg, a) != EC_OK)
            return ecC_fail("%s", ec_ctx_errmsg(ctx));
    }
    return -1;
}
