/*
 * err.c: status codes, their static descriptions, and the detailed message kept on a
 * context.  Every error of the library goes through eci_error(), so one breakpoint there
 * catches all of them (the purpose of GSL_ERROR).  Nothing here prints.
 */
#include "base/base.h"

#include <stdio.h>
#include <string.h>

static const char *const status_text[] = {
    "success",
    "out of memory",
    "invalid argument",
    "outside the domain of the model",
    "malformed input",
    "input/output error",
    "not found",
    "not supported",
    "library misuse",
    "operation cancelled",
};

const char *ec_strerror(int status)
{
    if (status < 0 || (size_t)status >= sizeof status_text / sizeof status_text[0])
        return "unknown status";
    return status_text[status];
}

int eci_error(ec_ctx *ctx, int code, const char *fmt, ...)
{
    if (ctx != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int eci_error_key(ec_ctx *ctx, int code, const char *key)
{
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, "key '%s': ", key);
    if (ctx == NULL || n <= 0 || (size_t)n >= sizeof prefix || strncmp(ctx->errmsg, prefix, (size_t)n) == 0)
        return code;
    char msg[EC_ERRMSG_MAX];
    memcpy(msg, ctx->errmsg, sizeof msg);
    size_t room = sizeof ctx->errmsg - (size_t)n - 1, len = strlen(msg);
    if (len > room)
        len = room;
    memcpy(ctx->errmsg, prefix, (size_t)n);
    memcpy(ctx->errmsg + n, msg, len);
    ctx->errmsg[(size_t)n + len] = '\0';
    return code;
}

void eci_error_clear(ec_ctx *ctx)
{
    if (ctx != NULL)
        ctx->errmsg[0] = '\0';
}

const char *ec_ctx_errmsg(const ec_ctx *ctx)
{
    return ctx != NULL ? ctx->errmsg : "no context";
}

/* Levenshtein distance, case-insensitive, on the first 63 characters: enough to suggest
 * "batch_per_gpu" for "bach_per_gpu" or "a100-sxm4-80gb" for "a100-sxm-80gb". */
static size_t edit_distance(const char *a, const char *b)
{
    enum { MAXLEN = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAXLEN) la = MAXLEN - 1;
    if (lb >= MAXLEN) lb = MAXLEN - 1;
    size_t prev[MAXLEN], cur[MAXLEN];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1], cb = b[j - 1];
            if (ca >= 'A' && ca <= 'Z') ca += 'a' - 'A';
            if (cb >= 'A' && cb <= 'Z') cb += 'a' - 'A';
            size_t sub = prev[j - 1] + (ca != cb);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}

const char *eci_nearest(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    double best_d = 1e300;
    size_t wlen = strlen(word);
    for (size_t i = 0; i < n; i++) {
        double d = (double)edit_distance(word, names[i]);
        /* A name that starts with the word ("a100" or "A100" -> "a100-sxm4-80gb", compared as
         * eci_name_eq does) beats one a single edit away ("a10"); one that merely contains it
         * is nearly as good. */
        if (wlen > 0 && eci_name_prefix(names[i], word) && d > 0.5)
            d = 0.5;
        else if (wlen > 0 && strstr(names[i], word) != NULL && d > 1.5)
            d = 1.5;
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best;
}

const char *eci_nearest_close(const char *word, const char *const *names, size_t n)
{
    const char *best = eci_nearest(word, names, n);
    if (best == NULL)
        return NULL;
    size_t len = strlen(best), wlen = strlen(word);
    if (len > 48 || strspn(best, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. ") != len)
        return NULL;
    size_t d = edit_distance(word, best), longest = len > wlen ? len : wlen;
    return d <= 2 || 3 * d <= longest ? best : NULL;
}
