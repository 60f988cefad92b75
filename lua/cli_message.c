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

/* Every message: "epochcast: " and the text with its control characters escaped (the values it
 * echoes come from the command line or a file), a line end, then for a usage error (code 2) the
 * hint "Try 'epochcast [CMD] --help'."; returns code.  A text longer than the buffer is formatted
 * again into one of its size (a path can be long); without the memory, the buffer's part. */
static int say(int code, const char *cmd, const char *fmt, va_list ap)
{
    char buf[4096], *msg = buf;
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(buf, sizeof buf, fmt, ap);
    if (len >= (int)sizeof buf && (msg = malloc((size_t)len + 1)) != NULL)
        vsnprintf(msg, (size_t)len + 1, fmt, again);
    else
        msg = buf;
    va_end(again);
    ecC_message(progname, len < 0 ? fmt : msg);
    if (msg != buf)
        free(msg);
    if (code == 2)
        fprintf(stderr, "Try '%s%s%s --help'.\n", progname, cmd != NULL ? " " : "", cmd != NULL ? cmd : "");
    return code;
}

int ecC_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = say(EXIT_FAILURE, NULL, fmt, ap);
    va_end(ap);
    return code;
}

int ecC_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = say(2, cmd, fmt, ap);
    va_end(ap);
    return code;
}
