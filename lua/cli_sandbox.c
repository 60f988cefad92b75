/*
 * cli_sandbox.c: the standard libraries of `epochcast run`'s scenario, whole for a trusted
 * one, cut down and wrapped for one run in the sandbox (--sandbox; by default a scenario on
 * stdin, one the user does not own, or one others may change): no debug library, process,
 * environment or binary chunks; files read only below the scenario's folder (the module's
 * readers check ECL_SANDBOX_READ_KEY: ecL_check_input) and written only through the module's
 * writers below the current folder.
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "cli.h"

#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Call the real function (upvalue 1) with the n arguments on the stack; its results. */
static int call_real(lua_State *L, int n)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
}

/* load(chunk [, name [, mode [, env]]]) of the sandbox: text chunks only (a crafted binary
 * chunk can crash the VM); upvalue 1 is the real load. */
static int sandbox_load(lua_State *L)
{
    int n = lua_gettop(L) >= 4 ? 4 : 3; /* an env given, even nil, is passed on; none is not */
    lua_settop(L, n);
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    return call_real(L, n);
}

/* io.open(name [, mode]) of the sandbox: reading only, below the scenario's folder (links
 * resolved: ecL_check_input); upvalue 1 is the real io.open. */
static int sandbox_open(lua_State *L)
{
    const char *name = ecL_checkpath(L, 1);
    const char *mode = luaL_optstring(L, 2, "r");
    if (strcmp(mode, "r") != 0 && strcmp(mode, "rb") != 0)
        return luaL_error(L, "sandbox: io.open may only read (mode '%s' refused); write with ec.write_csv", mode);
    ecL_check_input(L, name);
    lua_settop(L, 2);
    return call_real(L, 2);
}

/* io.lines(name, ...) and io.input(name) of the sandbox: a file named is read only below the
 * scenario's folder, as with io.open; upvalue 1 is the real function. */
static int sandbox_named_read(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TSTRING)
        ecL_check_input(L, ecL_checkpath(L, 1));
    return call_real(L, lua_gettop(L));
}

/* The sandbox's second package searcher: Lua source files on package.path (a scenario's own
 * modules) below the scenario's folder, loaded as text only; upvalue 1 is the package table. */
static int sandbox_searcher(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, lua_upvalueindex(1), "searchpath");  /* name searchpath */
    lua_pushvalue(L, 1);
    lua_getfield(L, lua_upvalueindex(1), "path");        /* name searchpath name path */
    lua_call(L, 2, 2);                                   /* name file|nil msg */
    if (lua_isnil(L, -2))
        return 1;                                        /* the message: not found */
    const char *file = lua_tostring(L, -2);
    ecL_check_input(L, file); /* a file elsewhere would show its first token in the syntax error */
    if (luaL_loadfilex(L, file, "t") != LUA_OK)
        return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file, lua_tostring(L, -1));
    lua_pushvalue(L, -3);                                /* name file msg loader file */
    return 2;
}

/* Set t[name] = nil for each name in the table on top. */
static void drop_fields(lua_State *L, const char *const *names)
{
    for (; *names != NULL; names++) {
        lua_pushnil(L);
        lua_setfield(L, -2, *names);
    }
}

/* Replace t[name] (t on top) by a C closure of fn over the old value. */
static void wrap_field(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
}

/* The standard libraries of a sandboxed scenario: no debug library; no os.execute,
 * io.popen, package.loadlib or C modules (preloaded modules and Lua source on package.path,
 * loaded as text); no file
 * changes outside the module's writers (os.remove, os.rename, io.output, io.open for
 * writing, io.tmpfile); no environment (os.getenv) and no process-wide setting (os.setlocale,
 * which would change how every number is read); no binary chunks (dofile, loadfile, load
 * mode "b").  Files are read (io.open, io.lines, io.input, require, the module's readers)
 * only below read_root, the scenario's folder, links resolved. */
static void open_sandbox_libs(lua_State *L, const char *read_root)
{
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},         {LUA_LOADLIBNAME, luaopen_package}, {LUA_COLIBNAME, luaopen_coroutine},
        {LUA_TABLIBNAME, luaopen_table},   {LUA_IOLIBNAME, luaopen_io},        {LUA_OSLIBNAME, luaopen_os},
        {LUA_STRLIBNAME, luaopen_string},  {LUA_MATHLIBNAME, luaopen_math},    {LUA_UTF8LIBNAME, luaopen_utf8},
        {NULL, NULL},
    };
    for (const luaL_Reg *lib = libs; lib->func != NULL; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    static const char *const base_out[] = {"dofile", "loadfile", NULL};
    static const char *const os_out[] = {"execute", "remove", "rename", "tmpname", "getenv", "setlocale", NULL};
    static const char *const io_out[] = {"popen", "output", "tmpfile", NULL};
    static const char *const package_out[] = {"loadlib", NULL};
    lua_pushglobaltable(L);                               /* G */
    drop_fields(L, base_out);
    lua_getfield(L, -1, "load");                          /* G load */
    lua_pushcclosure(L, sandbox_load, 1);                 /* G sload */
    lua_setfield(L, -2, "load");                          /* G */
    lua_getfield(L, -1, "os");                            /* G os */
    drop_fields(L, os_out);
    lua_pop(L, 1);
    lua_getfield(L, -1, "io");                            /* G io */
    drop_fields(L, io_out);
    wrap_field(L, "open", sandbox_open);
    wrap_field(L, "lines", sandbox_named_read);
    wrap_field(L, "input", sandbox_named_read);
    lua_pop(L, 1);
    lua_getfield(L, -1, "package");                       /* G package */
    drop_fields(L, package_out);
    lua_getfield(L, -1, "searchers");                     /* G package searchers */
    for (lua_Integer i = (lua_Integer)luaL_len(L, -1); i > 1; i--) { /* keep the preload searcher */
        lua_pushnil(L);
        lua_rawseti(L, -2, i);
    }
    lua_pushvalue(L, -2);                                 /* G package searchers package */
    lua_pushcclosure(L, sandbox_searcher, 1);             /* G package searchers searcher */
    lua_rawseti(L, -2, 2);                                /* G package searchers */
    lua_pop(L, 1);
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "cpath");
    lua_pop(L, 2);                                        /* */
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, ECL_SANDBOX_KEY);
    lua_pushstring(L, read_root);
    lua_setfield(L, LUA_REGISTRYINDEX, ECL_SANDBOX_READ_KEY);
}

/* The folder a sandboxed scenario reads below: its own (links resolved), or the current one
 * for a scenario on stdin.  NULL when it cannot be resolved. */
static char *sandbox_read_root(const char *script)
{
    if (strcmp(script, "-") == 0)
        return realpath(".", NULL);
    const char *slash = strrchr(script, '/');
    if (slash == NULL)
        return realpath(".", NULL);
    if (slash == script)
        return realpath("/", NULL);
    size_t n = (size_t)(slash - script);
    char *dir = malloc(n + 1);
    if (dir == NULL)
        return NULL;
    memcpy(dir, script, n);
    dir[n] = '\0';
    char *real = realpath(dir, NULL);
    free(dir);
    return real;
}

/* Why a scenario is not to be trusted by default, or NULL: a scenario on stdin (its source is
 * unknown: curl ... | epochcast run -), a file the user does not own, or one others may
 * change (group- or world-writable).  Such a scenario runs in the sandbox unless --no-sandbox
 * trusts it; a file others may change is never trusted (refused with --no-sandbox). */
static const char *untrusted_why(const char *script, int *writable)
{
    struct stat st;
    *writable = 0;
    if (strcmp(script, "-") == 0)
        return "it comes from standard input";
    if (stat(script, &st) != 0)
        return NULL; /* loading it says why */
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        *writable = 1;
        return (st.st_mode & S_IWOTH) != 0 ? "anyone may change it (world-writable)"
                                            : "its group may change it (group-writable)";
    }
    if (st.st_uid != geteuid())
        return "it is not your own file";
    return NULL;
}

/* Open the standard libraries for script: sandboxed when asked (sandbox 1) or, by default
 * (sandbox -1), when the script is not to be trusted (untrusted_why, with a note).  Whether
 * it is sandboxed, or -1 when it is refused (a file others may change, with --no-sandbox). */
int ecC_open_run_libs(lua_State *L, const char *script, int sandbox)
{
    int writable;
    const char *why = untrusted_why(script, &writable);
    if (why != NULL && writable && sandbox == 0) {
        ecC_error("run: '%s': %s, so --no-sandbox cannot trust it (chmod go-w '%s' first)", script, why, script);
        return -1;
    }
    if (why != NULL && sandbox < 0) {
        sandbox = 1;
        lua_pushfstring(L, "note: scenario '%s': %s: running it in the sandbox%s", script, why,
                        writable ? "" : " (--no-sandbox to trust it)");
        ecC_message("epochcast", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    if (sandbox <= 0) {
        luaL_openlibs(L);
        return 0;
    }
    char *root = sandbox_read_root(script);
    if (root == NULL) {
        ecC_error("run: cannot resolve the folder of scenario '%s' for the sandbox", script);
        return -1;
    }
    lua_pushstring(L, root);
    free(root);
    open_sandbox_libs(L, lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
}
