/*
 * fuzz_common.h: helpers shared by the file-level fuzz harnesses (header-only, so each
 * harness stays one .c file for the CMake glob): a per-process scratch folder, writing
 * the input to a file there, the models folder, and the check that a result is sane.
 */
#ifndef EC_FUZZ_COMMON_H
#define EC_FUZZ_COMMON_H

#define _XOPEN_SOURCE 700 /* realpath, symlink */

#include "epochcast.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_scratch_dir[256];

/* At exit: the scratch folder's files and links (the harnesses make no subfolders), then the
 * folder, so that fuzzing and the replay tests leave nothing in /tmp. */
static void fuzz_scratch_remove(void)
{
    DIR *d = opendir(fuzz_scratch_dir);
    if (d != NULL) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", fuzz_scratch_dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(fuzz_scratch_dir);
}

static const char *fuzz_scratch(void)
{
    char *dir = fuzz_scratch_dir;
    if (dir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof fuzz_scratch_dir, "%s/epochcast-fuzz-XXXXXX",
                 base != NULL && base[0] != '\0' ? base : "/tmp");
        if (mkdtemp(dir) == NULL)
            abort();
        atexit(fuzz_scratch_remove);
    }
    return dir;
}

/* Write data to scratch/name; returns the path (static buffer). */
static const char *fuzz_write(const char *name, const unsigned char *data, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_scratch(), name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
    return path;
}

static const char *fuzz_models_dir(void)
{
    static char dir[EC_PATH_MAX];
    return ec_default_models_dir(dir, sizeof dir) == EC_OK ? dir : "models";
}

/* A prediction must be finite and non-negative with a positive step: abort otherwise. */
static void fuzz_check_result(const ec_result *r)
{
    const double v[] = {r->step_s, r->samples_per_s, r->epoch_s, r->run_s, r->gpu_util_frac, r->gpu_busy_s,
                        r->cpu_issue_s, r->mfu_frac, r->breakdown.forward_s, r->breakdown.backward_s,
                        r->breakdown.optimizer_s, r->breakdown.h2d_s, r->breakdown.cpu_overhead_s,
                        r->breakdown.loader_s, r->breakdown.comm_s, r->memory.peak_bytes, r->memory.activations_bytes};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            abort();
    if (!(r->step_s > 0))
        abort();
}

/* A failure must leave a message. */
static void fuzz_check_error(const ec_ctx *ctx, int rc)
{
    if (rc != EC_OK && ec_ctx_errmsg(ctx)[0] == '\0')
        abort();
}

#endif
