/*
 * l_plot_run.c: ec.plot's gnuplot: the process, its work folder, the kept script, the picture.
 *
 * The script and data (built by the kinds) go into a fresh temporary folder; the gnuplot
 * found on PATH (looked up at run time; a clear nil, message, "ENOTFOUND" when it is
 * missing) draws there, and the picture is copied into place through the library's
 * output-file writer (a temporary renamed), so a failure never leaves half an image.  gnuplot
 * runs in a process group of its own: a signal or a scenario's time budget (the host's
 * progress callback, polled while it draws) kills the group and removes the folder, and on
 * Linux it dies with epochcast.  spec.script / EPOCHCAST_PLOT_SCRIPT keep the script and its
 * data where the user says, runnable by hand, written before gnuplot is looked for.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, fork, waitpid, kill, nanosleep, dirfd */

#include "l_plot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

extern char **environ;

/* ---- running gnuplot ----------------------------------------------------------------------- */

/* Find an executable named name on PATH into buf; 0 when there is none. */
static int find_on_path(const char *name, char *buf, size_t n)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        return 0;
    while (*path != '\0') {
        size_t len = strcspn(path, ":");
        int w = len == 0 ? snprintf(buf, n, "./%s", name) : snprintf(buf, n, "%.*s/%s", (int)len, path, name);
        struct stat st;
        if (w > 0 && (size_t)w < n && stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 1;
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

static int write_file(const char *path, const char *content, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t w = fwrite(content, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

/* The child's side of run_gnuplot: its own process group (so the whole group can be
 * killed), killed itself when epochcast dies (Linux), stdin from /dev/null, stdout and
 * stderr into log.  Only async-signal-safe calls between fork and exec. */
static void exec_gnuplot(pid_t parent, char *const argv[], const char *log)
{
    setpgid(0, 0);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* epochcast died before the line above */
        _exit(127);
#else
    (void)parent;
#endif
    int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || in < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || dup2(in, 0) < 0)
        _exit(127);
    execve(argv[0], argv, environ);
    _exit(127);
}

/* Run gnuplot -e setdata script with stdout and stderr into log; the exit status, -1 when it
 * could not run, or PLOT_STOPPED when the host asked to stop (a signal, the scenario's time
 * budget: ctx's progress callback) while it drew: gnuplot's process group is then killed
 * and reaped, so nothing outlives the call. */
#define PLOT_STOPPED (-2)
static int run_gnuplot(ec_ctx *ctx, const char *gnuplot, const char *setdata, const char *script, const char *log)
{
    char *argv[5];
    /* execve takes char *const argv[]; it does not write to the strings. */
    argv[0] = (char *)(uintptr_t)gnuplot;
    argv[1] = (char *)(uintptr_t)"-e";
    argv[2] = (char *)(uintptr_t)setdata;
    argv[3] = (char *)(uintptr_t)script;
    argv[4] = NULL;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        exec_gnuplot(parent, argv, log);
    setpgid(pid, pid); /* also here: no kill(-pid) before the child's own call lands */
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        if (ec_ctx_progress(ctx, "plot", 0, 0) != EC_OK) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return PLOT_STOPPED;
        }
        struct timespec pause = {0, 10 * 1000 * 1000}; /* a signal cuts it short */
        nanosleep(&pause, NULL);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The first line of gnuplot's complaint, for the error message. */
static void read_log(const char *log, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(log, "rb");
    if (f == NULL)
        return;
    size_t len = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[len] = '\0';
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '\n' && p[1] != '\0')
            *p = ' ';
}

/* Remove the work folder: every file in it (what gnuplot wrote besides the picture too),
 * then the folder. */
static void cleanup(const char *work)
{
    DIR *d = opendir(work);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(work);
}

/* The context for writing the picture: the module's (upvalue 1, which knows the run's inputs)
 * or, for the plain C function the CLI calls, a bare one in a box on the stack. */
ec_ctx *plot_ctx(lua_State *L)
{
    void *box = lua_touserdata(L, lua_upvalueindex(1));
    if (box != NULL)
        return ecL_ctx(L);
    const ecL_host *host = NULL; /* the host's allocator and progress (signals stop gnuplot) */
    if (lua_getfield(L, LUA_REGISTRYINDEX, ECL_HOST_KEY) == LUA_TLIGHTUSERDATA)
        host = (const ecL_host *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    void **slot = ecL_newbox(L, ecL_free_ctx);
    ec_ctx *ctx = NULL;
    if (ec_ctx_new(host != NULL ? host->alloc : NULL, host != NULL ? host->alloc_ud : NULL, &ctx) != EC_OK)
        luaL_error(L, "plot: out of memory");
    *slot = ctx;
    if (host != NULL)
        ec_ctx_set_progress(ctx, host->progress, host->progress_ud);
    return ctx;
}

/* Commit out after st (EC_OK), else abort it (when it was opened); the status. */
static int outfile_finish(ec_outfile *out, int st)
{
    if (st == EC_OK)
        return ec_outfile_commit(out);
    if (out != NULL)
        ec_outfile_abort(out);
    return st;
}

/* Copy the picture gnuplot drew (a file of the work folder) to path through the library's
 * output-file writer: a temporary beside path renamed into place; links, devices and the
 * run's inputs are refused.  EC_OK, or a status with the message on ctx. */
static int put_picture(ec_ctx *ctx, const char *pic, const char *path)
{
    FILE *in = fopen(pic, "rb");
    if (in == NULL)
        return EC_EIO;
    ec_outfile *out;
    int st = ec_outfile_open(ctx, path, &out);
    char buf[65536];
    size_t n;
    while (st == EC_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        st = ec_outfile_write(out, buf, n);
    if (st == EC_OK && ferror(in))
        st = EC_EIO;
    fclose(in);
    return outfile_finish(out, st);
}

/* Write len bytes to path through the library's output-file writer (a temporary renamed into
 * place; links, devices and the run's inputs refused).  EC_OK, or a status with the message on ctx. */
static int put_text(ec_ctx *ctx, const char *path, const char *s, size_t len)
{
    ec_outfile *out;
    int st = ec_outfile_open(ctx, path, &out);
    if (st == EC_OK)
        st = ec_outfile_write(out, s, len);
    return outfile_finish(out, st);
}

/* spec.script, or EPOCHCAST_PLOT_SCRIPT in the environment: keep the gnuplot script at that
 * path and its data beside it (path .. ".dat"), runnable by hand (`gnuplot FILE` draws the
 * picture), written before gnuplot is looked for, so a machine without it can still show
 * what would be drawn.  EC_OK or a status with the message on ctx. */
int plot_keep_script(lua_State *L, ec_ctx *ctx, const char *picture, const char *script, size_t script_len,
                     const char *data, size_t data_len)
{
    const char *keep = plot_spec_string(L, P_SPEC, "script", getenv("EPOCHCAST_PLOT_SCRIPT"));
    if (keep == NULL || keep[0] == '\0')
        return EC_OK;
    ecL_check_output(L, keep);
    lua_pushfstring(L, "%s.dat", keep);
    const char *data_path = lua_tostring(L, -1);
    ecL_check_output(L, data_path);
    luaL_gsub(L, data_path, "'", "''");
    luaL_gsub(L, picture, "'", "''");
    lua_pushfstring(L, "# epochcast plot script: gnuplot %s draws %s from %s\n"
                    "ecdata = exists('ecdata') ? ecdata : '%s'\necout = exists('ecout') ? ecout : '%s'\n",
                    keep, picture, data_path, lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pushlstring(L, script, script_len);
    lua_concat(L, 2);
    size_t len;
    const char *body = lua_tolstring(L, -1, &len);
    int st = put_text(ctx, data_path, data, data_len);
    if (st == EC_OK)
        st = put_text(ctx, keep, body, len);
    lua_pop(L, 4);
    return st;
}

/* ec.plot's failure: nil, "CODE: msg", "CODE". */
int plot_fail(lua_State *L, const char *code, const char *msg)
{
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", code, msg);
    lua_pushstring(L, code);
    return 3;
}

/* Draw with the gnuplot on PATH in a fresh work folder (TMPDIR, else /tmp), removed after, and
 * put the picture at path: ec.plot's results (true; or nil, msg, code), or raises ECANCELED
 * when the host stops the run while gnuplot draws. */
int plot_draw(lua_State *L, ec_ctx *ctx, const char *path, int svg, const char *script, size_t script_len,
              const char *data, size_t data_len)
{
    char gnuplot[EC_PATH_MAX];
    if (!find_on_path("gnuplot", gnuplot, sizeof gnuplot))
        return plot_fail(L, "ENOTFOUND", "gnuplot was not found on PATH; plots need it "
                                         "(Debian: apt-get install gnuplot-nox)");

    const char *tmpdir = getenv("TMPDIR");
    if (tmpdir == NULL || tmpdir[0] == '\0')
        tmpdir = "/tmp";
    char work[EC_PATH_MAX], data_path[EC_PATH_MAX + 16], script_path[EC_PATH_MAX + 16],
        log_path[EC_PATH_MAX + 16], pic_path[EC_PATH_MAX + 16], msg[512];
    if (snprintf(work, sizeof work, "%s/epochcast-plot-XXXXXX", tmpdir) >= (int)sizeof work)
        return plot_fail(L, "EIO", "TMPDIR is too long");
    if (mkdtemp(work) == NULL) {
        snprintf(msg, sizeof msg, "cannot create a temporary folder in %s: %s", tmpdir, strerror(errno));
        return plot_fail(L, "EIO", msg);
    }
    snprintf(data_path, sizeof data_path, "%s/plot.dat", work);
    snprintf(script_path, sizeof script_path, "%s/plot.gp", work);
    snprintf(log_path, sizeof log_path, "%s/gnuplot.log", work);
    snprintf(pic_path, sizeof pic_path, "%s/plot.%s", work, svg ? "svg" : "png");
    luaL_gsub(L, data_path, "'", "''");
    luaL_gsub(L, pic_path, "'", "''");
    const char *setdata = lua_pushfstring(L, "ecdata='%s'; ecout='%s'", lua_tostring(L, -2), lua_tostring(L, -1));
    int rc = -1;
    if (write_file(data_path, data, data_len) == 0 && write_file(script_path, script, script_len) == 0)
        rc = run_gnuplot(ctx, gnuplot, setdata, script_path, log_path);
    if (rc == PLOT_STOPPED) {
        cleanup(work);
        return ecL_fail(L, ctx, EC_ECANCELED); /* raises: the run is being stopped */
    }
    if (rc != 0) {
        char log[400];
        read_log(log_path, log, sizeof log);
        snprintf(msg, sizeof msg, "gnuplot could not draw %s (exit %d): %s", path, rc,
                 log[0] != '\0' ? log : "no message");
        cleanup(work);
        return plot_fail(L, "EIO", msg);
    }
    int st = put_picture(ctx, pic_path, path);
    cleanup(work);
    if (st != EC_OK) {
        snprintf(msg, sizeof msg, "%s", st == EC_EIO && ec_ctx_errmsg(ctx)[0] == '\0'
                 ? "cannot read the picture gnuplot drew" : ec_ctx_errmsg(ctx));
        return plot_fail(L, ecL_status_name(st), msg);
    }
    lua_pushboolean(L, 1);
    return 1;
}
