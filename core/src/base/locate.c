/*
 * locate.c: where the models/ folder is when the caller names none (ec_default_models_dir,
 * used by ec_ctx_load_models(ctx, NULL)).  In order: $EPOCHCAST_MODELS; the installation
 * that holds this code, found at run time from the file it was loaded from (dladdr), so an
 * installed tree still works after it moves; the source tree when this code runs from the
 * build tree; the install prefix configured at build time; the source tree.
 *
 * Inputs are compile-time definitions made by core/CMakeLists.txt (install directories
 * relative to the prefix, the configured prefix, the source and build trees), the
 * environment and the file system.  Nothing here is cached: every call looks again.
 */
#define _GNU_SOURCE /* dladdr, realpath */
#include "base/base.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<dlfcn.h>)
#include <dlfcn.h>
#define EC_HAVE_DLADDR 1
#endif
#endif

/* Install directories relative to the prefix (GNUInstallDirs); "" when configured absolute. */
#ifndef EC_INSTALL_LIBDIR
#define EC_INSTALL_LIBDIR "lib"
#endif
#ifndef EC_INSTALL_BINDIR
#define EC_INSTALL_BINDIR "bin"
#endif
#ifndef EC_INSTALL_CMODDIR
#define EC_INSTALL_CMODDIR "lib/lua/5.4"
#endif
#ifndef EC_INSTALL_MODELSDIR
#define EC_INSTALL_MODELSDIR "share/epochcast/models"
#endif
/* Absolute folders known when the library was built; "" when unknown. */
#ifndef EC_CONFIGURED_MODELS_DIR
#define EC_CONFIGURED_MODELS_DIR ""
#endif
#ifndef EC_SOURCE_MODELS_DIR
#define EC_SOURCE_MODELS_DIR ""
#endif
#ifndef EC_BUILD_DIR
#define EC_BUILD_DIR ""
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* A models/ folder is one that holds gpus.csv. */
static int is_models_dir(const char *dir)
{
    char path[PATH_MAX + 16];
    int n = snprintf(path, sizeof path, "%s/gpus.csv", dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return 0;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    fclose(f);
    return 1;
}

static int copy_out(char *buf, size_t n, const char *dir)
{
    size_t len = strlen(dir);
    if (len >= n)
        return EC_EINVAL;
    memcpy(buf, dir, len + 1);
    return EC_OK;
}

#if defined(EC_HAVE_DLADDR)
/* An object of this library: dladdr names the file it was loaded from. */
static const char eci_locate_anchor = 1;

/* The folder of the file holding this code, resolved (no symlinks), into dir[PATH_MAX].
 * 0 when it cannot be found (static executables, exotic loaders). */
static int code_dir(char dir[PATH_MAX])
{
    Dl_info info;
    if (dladdr(&eci_locate_anchor, &info) == 0 || info.dli_fname == NULL)
        return 0;
    /* glibc names the main program by argv[0], which may carry no folder. */
    const char *file = strchr(info.dli_fname, '/') != NULL ? info.dli_fname : "/proc/self/exe";
    if (realpath(file, dir) == NULL)
        return 0;
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        return 0;
    *slash = '\0';
    return 1;
}

/* When dir is PREFIX/suffix, PREFIX/EC_INSTALL_MODELSDIR into out; 0 otherwise. */
static int beside_install(const char *dir, const char *suffix, char *out, size_t n)
{
    size_t ld = strlen(dir), ls = strlen(suffix);
    if (ls == 0 || EC_INSTALL_MODELSDIR[0] == '\0' || ld <= ls || dir[ld - ls - 1] != '/' ||
        strcmp(dir + ld - ls, suffix) != 0)
        return 0;
    int w = snprintf(out, n, "%.*s/%s", (int)(ld - ls - 1), dir, EC_INSTALL_MODELSDIR);
    return w > 0 && (size_t)w < n;
}

/* 1 when dir is the build tree or inside it. */
static int in_build_tree(const char *dir)
{
    size_t lb = strlen(EC_BUILD_DIR);
    return lb > 0 && strncmp(dir, EC_BUILD_DIR, lb) == 0 && (dir[lb] == '\0' || dir[lb] == '/');
}
#endif

int ec_default_models_dir(char *buf, size_t n)
{
    if (buf == NULL || n == 0)
        return EC_EMISUSE;
    buf[0] = '\0';
    const char *env = getenv("EPOCHCAST_MODELS");
    if (env != NULL && env[0] != '\0')
        return copy_out(buf, n, env);
#if defined(EC_HAVE_DLADDR)
    char dir[PATH_MAX];
    if (code_dir(dir)) {
        /* libepochcast.so in PREFIX/lib, the CLI in PREFIX/bin, the Lua module in PREFIX/lib/lua/5.4 */
        const char *const suffixes[] = {EC_INSTALL_LIBDIR, EC_INSTALL_BINDIR, EC_INSTALL_CMODDIR};
        char cand[PATH_MAX + 64];
        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
            if (beside_install(dir, suffixes[i], cand, sizeof cand) && is_models_dir(cand))
                return copy_out(buf, n, cand);
        /* Run from the build tree: its own sources, not an older installed copy. */
        if (in_build_tree(dir) && EC_SOURCE_MODELS_DIR[0] != '\0' && is_models_dir(EC_SOURCE_MODELS_DIR))
            return copy_out(buf, n, EC_SOURCE_MODELS_DIR);
    }
#endif
    /* A program that linked libepochcast.a, or a LuaRocks tree: where `cmake --install` put it. */
    if (EC_CONFIGURED_MODELS_DIR[0] != '\0' && is_models_dir(EC_CONFIGURED_MODELS_DIR))
        return copy_out(buf, n, EC_CONFIGURED_MODELS_DIR);
    if (EC_SOURCE_MODELS_DIR[0] != '\0' && is_models_dir(EC_SOURCE_MODELS_DIR))
        return copy_out(buf, n, EC_SOURCE_MODELS_DIR);
    return EC_ENOTFOUND;
}
