/*
 * cli_message.c: the CLI's messages on stderr, "epochcast: message", with the exit statuses
 * of its conventions (1 an error, 2 a usage error and a hint to --help).  The texts come from
 * the commands, the library's context (ec_ctx_errmsg) and Lua errors; any value they echo from
 * the command line or a file has its control characters shown as \xNN (ecC_put_escaped).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const progname = "epochcast";

void ecC_put_escaped(FILE *f, const char *msg)
{
    for (const unsigned char *p = (const unsigned char *)msg; *p != '\0'; p++) {
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

void ecC_message(const char *pname, const char *msg)
{
    ecC_clear_bar();
    if (pname != NULL)
        fprintf(stderr, "%s: ", pname);
    ecC_put_escaped(stderr, msg);
    fputc('\n', stderr);
    fflush(stderr);
}

int ecC_report(lua_State *L, int status)
{
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        ecC_message(progname, msg != NULL ? msg : "(error object is not a string)");
        lua_pop(L, 1);
    }
    return status;
}

/* Every message: "epochcast: " and the text (escaped, or as formatted), a line end, then for a
 * usage error (code 2) the hint "Try 'epochcast [CMD] --help'."; returns code. */
static int say(int code, int escaped, const char *cmd, const char *fmt, va_list ap)
{
    if (escaped) {
        char msg[4096];
        vsnprintf(msg, sizeof msg, fmt, ap);
        ecC_message(progname, msg);
    } else {
        fprintf(stderr, "%s: ", progname);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    if (code == 2)
        fprintf(stderr, "Try '%s%s%s --help'.\n", progname, cmd != NULL ? " " : "", cmd != NULL ? cmd : "");
    return code;
}

int ecC_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = say(EXIT_FAILURE, 1, NULL, fmt, ap);
    va_end(ap);
    return code;
}

int ecC_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = say(2, 1, cmd, fmt, ap);
    va_end(ap);
    return code;
}

int ecC_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = say(EXIT_FAILURE, 0, NULL, fmt, ap);
    va_end(ap);
    return code;
}

int ecC_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = say(2, 0, cmd, fmt, ap);
    va_end(ap);
    return code;
}
