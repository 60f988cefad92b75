/*
 * cli_run.c: `epochcast run SCRIPT.lua [ARGS...]`: a Lua 5.4 scenario run as lua.c runs a
 * script (the global arg, ARGS as the chunk's "...", errors with a traceback), with the
 * standard libraries (cli_sandbox.c: whole, or the sandbox's for an untrusted scenario) and the
 * epochcast module preloaded, under the time and memory budgets of --max-seconds and
 * --max-memory-mb (or $EPOCHCAST_MAX_SECONDS, $EPOCHCAST_MAX_MEMORY_MB) that cli_host.c keeps.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char run_usage[] =
    "usage: epochcast run [--profile P] [--max-seconds N] [--max-memory-mb M] [--sandbox|--no-sandbox]\n"
    "                     SCRIPT.lua|- [ARGS...]\n"
    "\n"
    "Run a Lua 5.4 scenario with the standard libraries and the epochcast module\n"
    "preloaded (local ec = require \"epochcast\").  The global 'arg' holds the script\n"
    "name at 0 and ARGS from 1, as with lua; the chunk also receives ARGS as '...'.\n"
    "Options come before SCRIPT in any order, each value also as --opt=VALUE.\n"
    "  --profile P   every prediction of the script uses the calibrated profile P\n"
    "                (a config's profile= still wins)\n"
    "  --sandbox     run an untrusted scenario: no debug library, os.execute, io.popen,\n"
    "                package.loadlib, C modules, binary chunks, os.remove/rename/getenv/\n"
    "                setlocale, io.tmpfile or io.open for writing; files are read only\n"
    "                below the scenario's folder and written only below the current one.\n"
    "                The default for a SCRIPT you do not own and for one on stdin (-);\n"
    "                --no-sandbox trusts it.  A SCRIPT its group or anyone may change always\n"
    "                runs sandboxed.  Your own scenarios run with every library.\n"
    "\n"
    "Limits (0 = none): --max-seconds N stops a scenario that runs longer than N seconds\n"
    "(default $EPOCHCAST_MAX_SECONDS, else 3600): a timer raises an error at every\n"
    "instruction from then on (pcall and debug.sethook cannot hold it off), long library\n"
    "calls stop, and a C call that does not return within 2 s more ends the process.\n"
    "--max-memory-mb M stops one whose Lua heap and library allocations (worker threads\n"
    "included) together pass M MiB (default $EPOCHCAST_MAX_MEMORY_MB, else 8192; at\n"
    "least 1).  Both hold until the process ends: finalizers (__gc) run under them.\n";

/* Keep a profile path for every context the module creates (ecL_pushctx). */
void ecC_set_profile(lua_State *L, const char *path)
{
    lua_pushstring(L, path);
    lua_setfield(L, LUA_REGISTRYINDEX, ECL_PROFILE_KEY);
}

/* Message handler: add a traceback to the error message. */
static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Call the function below its narg arguments with the traceback handler. */
static int docall(lua_State *L, int narg, int nres)
{
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    int status = lua_pcall(L, narg, nres, base);
    lua_remove(L, base);
    return status;
}

/* arg = {[-k] = host and command, [0] = script, [1..] = script arguments} (lua.c). */
static void createargtable(lua_State *L, char **argv, int argc, int script)
{
    int narg = argc - (script + 1);
    lua_createtable(L, narg > 0 ? narg : 0, script + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

/* Push arg[1..n] for the main chunk's "..." (lua.c). */
static int pushargs(lua_State *L)
{
    if (lua_getglobal(L, "arg") != LUA_TTABLE)
        luaL_error(L, "'arg' is not a table");
    int n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    int i;
    for (i = 1; i <= n; i++)
        lua_rawgeti(L, -i, i);
    lua_remove(L, -i);
    return n;
}

/* A limit's text ("--max-seconds N" or the environment) as a number in [0, 1e9]; -1 when
 * it is not one, or when it is positive but below min (it would round to no limit). */
static double limit_arg(const char *value, const char *env, double fallback, double min)
{
    const char *text = value != NULL ? value : getenv(env);
    if (text == NULL || text[0] == '\0')
        return fallback;
    char *end;
    double v = strtod(text, &end);
    if (*end != '\0' || !(v >= 0 && v <= 1e9) || (v > 0 && v < min))
        return -1;
    return v;
}


/* run's options, before SCRIPT: the limits' texts (NULL: the environment's or the default) and
 * the sandbox (1 asked, 0 --no-sandbox, -1 the default).  --profile takes effect at once. */
typedef struct run_args {
    const char *secs, *mib;
    int sandbox;
} run_args;

/* Read run's options from argv[*script] on; *script then at SCRIPT.  -1 when the command
 * should go on, else the exit status (0 after --help). */
static int parse_run_args(lua_State *L, int argc, char **argv, int *script, run_args *ra)
{
    ra->secs = ra->mib = NULL;
    ra->sandbox = -1;
    for (; *script < argc; ++*script) {
        const char *a = argv[*script], *v = NULL;
        int m;
        if (ecC_is_help(a)) {
            return fputs(run_usage, stdout), 0;
        } else if ((m = ecC_opt_value(argc, argv, script, "--profile", NULL, &v)) != 0) {
            if (m < 0 || v[0] == '\0')
                return ecC_usage_error("run", "run: --profile needs a file name");
            ecC_set_profile(L, v);
        } else if ((m = ecC_opt_value(argc, argv, script, "--max-seconds", NULL, &v)) != 0) {
            if (m < 0)
                return ecC_usage_error("run", "run: --max-seconds needs a number");
            ra->secs = v;
        } else if ((m = ecC_opt_value(argc, argv, script, "--max-memory-mb", NULL, &v)) != 0) {
            if (m < 0)
                return ecC_usage_error("run", "run: --max-memory-mb needs a number");
            ra->mib = v;
        } else if (strcmp(a, "--sandbox") == 0) {
            ra->sandbox = 1;
        } else if (strcmp(a, "--no-sandbox") == 0) {
            ra->sandbox = 0;
        } else if (strcmp(a, "--") == 0) {
            ++*script;
            break;
        } else if (a[0] == '-' && a[1] != '\0') {
            return ecC_usage_error("run", "run: unknown option '%s'", a);
        } else {
            break;
        }
    }
    if (*script >= argc)
        return ecC_usage_error("run", "run: missing SCRIPT.lua");
    return -1;
}

int ecC_cmd_run(lua_State *L, int argc, char **argv, int script)
{
    run_args ra;
    int code = parse_run_args(L, argc, argv, &script, &ra);
    if (code >= 0)
        return code;
    double max_seconds = limit_arg(ra.secs, "EPOCHCAST_MAX_SECONDS", 3600, 1e-3);
    double max_mib = limit_arg(ra.mib, "EPOCHCAST_MAX_MEMORY_MB", 8192, 1);
    if (max_seconds < 0 || max_mib < 0)
        return ecC_usage_error("run", "run: --max-seconds takes 0 (none) or 0.001 to 1e9 seconds, --max-memory-mb "
                               "0 (none) or 1 to 1e9 MiB");
    int sandbox = ecC_open_run_libs(L, argv[script], ra.sandbox);
    if (sandbox < 0)
        return EXIT_FAILURE;
    /* The module first: an error opening it (a bad --profile) unwinds past this frame,
     * which must not have installed its allocator yet. */
    luaL_requiref(L, "epochcast", luaopen_epochcast, 1);
    lua_pop(L, 1);
    createargtable(L, argv, argc, script);
    lua_gc(L, LUA_GCGEN, 0, 0);

    size_t max_bytes = (size_t)(max_mib * 1048576.0);
    ecC_budget_begin(L, max_seconds, max_bytes);
    const char *fname = strcmp(argv[script], "-") == 0 ? NULL : argv[script]; /* "-": stdin */
    int status = luaL_loadfilex(L, fname, sandbox > 0 ? "t" : NULL);
    if (status == LUA_OK) {
        int n = pushargs(L);
        status = docall(L, n, 0);
    }
    return ecC_budget_end(L, status, max_bytes);
}
