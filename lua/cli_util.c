/*
 * cli_util.c: helpers shared by the CLI commands of cli_*.c: messages and exit statuses in
 * the CLI's conventions (epochcast.c), splitting a key's comma-separated values, and key=value
 * words into a config (CSV lines on stdout: ec_csv_print_row), durations and money as people
 * read them.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

int ecC_threads_arg(const char *text)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (end == text || *end != '\0' || n < 0 || n > ECL_SWEEP_MAX_THREADS)
        return -1;
    return (int)n;
}

const char *ecC_duration(double s, char *buf, size_t n)
{
    if (!(s > 0))
        snprintf(buf, n, "-");
    else if (s < 1)
        snprintf(buf, n, "%.3g ms", s * 1e3);
    else if (s < 120)
        snprintf(buf, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.1f min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, n, "%.1f h", s / 3600);
    else
        snprintf(buf, n, "%.1f days", s / 86400);
    return buf;
}

const char *ecC_money(double amount, const char *currency, char *buf, size_t n)
{
    const char *cur = currency != NULL && currency[0] != '\0' ? currency : "";
    const char *sep = cur[0] != '\0' ? " " : "";
    if (!(amount > 0)) {
        snprintf(buf, n, "-");
        return buf;
    }
    if (amount < 1) {
        snprintf(buf, n, "%s%s%.3g", cur, sep, amount);
        return buf;
    }
    /* cents below 100,000, whole units above, thousands separated: "USD 1,021.44", "USD 1,082,388" */
    char digits[64];
    int len = snprintf(digits, sizeof digits, amount < 1e5 ? "%.2f" : "%.0f", amount);
    int whole = len;
    for (int i = 0; i < len; i++)
        if (digits[i] == '.')
            whole = i;
    char grouped[96];
    size_t k = 0;
    for (int i = 0; i < len && k + 2 < sizeof grouped; i++) {
        if (i > 0 && i < whole && (whole - i) % 3 == 0)
            grouped[k++] = ',';
        grouped[k++] = digits[i];
    }
    grouped[k] = '\0';
    snprintf(buf, n, "%s%s%s", cur, sep, grouped);
    return buf;
}
