/*
 * epochcast.c: the command-line host, shaped like lua.c: main creates a Lua state and runs
 * pmain under lua_pcall; scripts run through docall with a traceback msghandler; report
 * prints "epochcast: msg".  The subcommands gpus, models, predict and validate are thin C
 * over the public API (every C object they hold sits in a Lua box, so an error cannot leak
 * it); run executes a Lua scenario with the module preloaded.  No model logic lives here.
 *
 * The host owns what the library leaves to it (issue 20): SIGINT and SIGTERM set a flag that
 * the contexts' progress callback turns into a cancellation (the library then removes any
 * temporary file) and, in a scenario, into an error raised by a hook; a scenario's time budget
 * is a timer whose signal installs that hook (a script cannot remove it or catch its error for
 * long) and ends the process if a C call does not return; its memory budget counts the Lua
 * heap and the library's allocations alike.  This state is the process's, so it lives in this
 * file's statics, never in the library.
 */
#define _XOPEN_SOURCE 700 /* clock_gettime, sigaction, setitimer, isatty, realpath */

#include "cli.h"

#include <csv.h>
#include <gsl/gsl_errno.h>
#include <lualib.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char *const progname = "epochcast";

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- process state: signals, budgets, progress ---------------------------------------- */

/* A scenario's budget: wall time and bytes (the Lua heap and the library's contexts, the
 * worker threads' included).  The bytes are one atomic counter (budget_bytes below): worker
 * threads allocate through ctx_alloc while the caller's thread runs. */
typedef struct run_limits {
    lua_Alloc base;
    void *base_ud;
    double max_seconds, deadline_s;   /* 0: no time budget */
} run_limits;

/* Where a scenario is: a signal or the time budget's timer acts on it accordingly. */
enum { PHASE_NONE, PHASE_SCRIPT, PHASE_CLOSING };

/* Seconds a C call may run past the time budget before the process ends. */
#define GRACE_S 2.0
/* Progress bars: drawn for operations that last longer than this, at most this often. */
#define BAR_AFTER_S 0.5
#define BAR_EVERY_S 0.1
#define BAR_WIDTH 30

static volatile sig_atomic_t interrupted;    /* the signal that asked us to stop, or 0 */
static volatile sig_atomic_t budget_over;    /* 1: the time budget ran out; 2: grace too */
static volatile sig_atomic_t grace_started;  /* the grace runs: the next alarm ends the process */
static volatile sig_atomic_t phase;          /* PHASE_*: the script runs, or its state closes */
static lua_State *volatile script_L;         /* the state while a scenario runs, else NULL */
static run_limits limits;                    /* outlives the state: contexts free through it */
static atomic_size_t budget_bytes;           /* bytes held by the Lua heap (once a scenario runs) and
                                                every context, worker threads' included */
static atomic_size_t budget_max_bytes;       /* 0: no memory limit */
static atomic_int budget_refused;            /* allocations the memory budget refused */
static struct {
    double start_s, last_s;                  /* of the current operation, for the bar */
    const char *what;                        /* its name (static strings of the library) */
    int drawn;                               /* a bar is on the line */
} bar;

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The hook a signal installs in a running scenario: every call, return and instruction
 * raises, so a pcall that catches the error gets no further than its next instruction. */
static void stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (budget_over)
        luaL_error(L, "scenario exceeded its time budget of %f s (--max-seconds)", limits.max_seconds);
    luaL_error(L, "interrupted");
}

static void arm_stop_hook(void)
{
    lua_State *L = script_L;
    if (L != NULL) /* lua_sethook may be called from a signal handler (lua.c does) */
        lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* End the process from a signal handler: msg on stderr, then the status (128 + the signal
 * after an interrupt, as a shell reports it, else 1).  The library's writers live inside one
 * call that checks the progress callback, which stopped them already (a scenario holds no
 * writer open between calls: ec.write_csv, ec.trace and ec.plot each write a whole file). */
static void end_now(const char *msg, size_t len)
{
    if (write(STDERR_FILENO, msg, len) < 0) {
        /* nothing more to do */
    }
    _exit(interrupted ? 128 + (int)interrupted : EXIT_FAILURE);
}

/* Give a scenario GRACE_S more seconds to stop; the next alarm then ends the process. */
static void start_grace(void)
{
    grace_started = 1;
    struct itimerval grace = {{0, 0}, {(time_t)GRACE_S, 0}};
    setitimer(ITIMER_REAL, &grace, NULL);
}

/* A scenario's finalizers (__gc) run with hooks off (Lua's rule), so neither the stop hook
 * nor pcall's error reaches one that loops: once its state closes, a signal or the time
 * budget ends the process at once, and while the script runs, after the grace. */
static void on_signal(int sig)
{
    if (interrupted) { /* asked twice: stop now */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    interrupted = sig;
    if (phase == PHASE_CLOSING) {
        static const char msg[] = "epochcast: interrupted while the scenario's finalizers (__gc) ran; stopped\n";
        end_now(msg, sizeof msg - 1);
    }
    arm_stop_hook();
    if (phase == PHASE_SCRIPT && !grace_started)
        start_grace(); /* a finalizer or a C call that does not return cannot hold it off */
}

static void on_alarm(int sig)
{
    (void)sig;
    /* The first alarm starts the grace, even when the count hook saw the deadline first and
     * set budget_over already (the alarm comes microseconds later: taking that for the end of
     * the grace ended plain loops with the grace's message). */
    if (!grace_started && phase != PHASE_CLOSING) {
        budget_over = 1;
        arm_stop_hook();
        start_grace();
        return;
    }
    budget_over = 2;
    if (phase == PHASE_CLOSING && !interrupted) {
        static const char msg[] = "epochcast: scenario exceeded its time budget (--max-seconds) in its finalizers "
                                  "(__gc); stopped\n";
        end_now(msg, sizeof msg - 1);
    }
    /* Still running past the grace (a C call such as a pathological string.find or a blocking
     * read, a finalizer, or a script that cleared the stop hook with debug.sethook as the
     * signal came): end the process. */
    static const char over[] = "epochcast: scenario exceeded its time budget (--max-seconds) and ran on past the grace "
                               "(a long C call, a blocking call, a finalizer or its hook cleared); stopped\n";
    static const char intr[] = "epochcast: interrupted, and the scenario did not stop within the grace (a long C "
                               "call, a blocking call or a finalizer); stopped\n";
    if (interrupted)
        end_now(intr, sizeof intr - 1);
    end_now(over, sizeof over - 1);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_alarm; /* no SA_RESTART: a blocking read returns EINTR */
    sigaction(SIGALRM, &sa, NULL);
}

/* Draw or clear the progress bar of a long operation on a terminal. */
static void draw_bar(const char *what, double frac, int done)
{
    if (done) {
        if (bar.drawn)
            fprintf(stderr, "\r%*s\r", BAR_WIDTH + 40, "");
        bar.drawn = 0;
        return;
    }
    int filled = (int)(frac * BAR_WIDTH);
    if (filled > BAR_WIDTH)
        filled = BAR_WIDTH;
    fprintf(stderr, "\r%-14s [%.*s%*s] %3.0f%%", what, filled, "##############################", BAR_WIDTH - filled, "",
            100 * frac);
    fflush(stderr);
    bar.drawn = 1;
}

/* The progress callback of every context the CLI makes (ecL_host): stop on a signal or an
 * exhausted time budget; draw a bar for long validations and calibrations on a terminal. */
static int cli_progress(void *ud, const char *what, double done, double total)
{
    (void)ud;
    if (interrupted || budget_over)
        return 1;
    double now = monotonic_s();
    if (limits.max_seconds > 0 && script_L != NULL && now > limits.deadline_s)
        return 1;
    if (strcmp(what, "validate") != 0 && strcmp(what, "calibrate") != 0 && strcmp(what, "cross-validate") != 0)
        return 0;
    if (bar.what != what) { /* a new operation */
        bar.what = what;
        bar.start_s = now;
    }
    if (total > 0 && now - bar.start_s > BAR_AFTER_S && now - bar.last_s > BAR_EVERY_S && isatty(STDERR_FILENO)) {
        bar.last_s = now;
        draw_bar(what, done / total, 0);
    }
    return 0;
}

/* The exit status after an interrupt: 128 + the signal, as a shell reports it. */
static int interrupt_status(void)
{
    return interrupted ? 128 + (int)interrupted : 0;
}

/* ---- lua.c's machinery -------------------------------------------------------------- */

/* Write msg to f with control characters other than line feeds and tabs shown as \xNN,
 * so a value echoed in a message cannot drive the terminal. */
static void put_escaped(FILE *f, const char *msg)
{
    for (const unsigned char *p = (const unsigned char *)msg; *p != '\0'; p++) {
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

static void l_message(const char *pname, const char *msg)
{
    draw_bar(NULL, 0, 1);
    if (pname != NULL)
        fprintf(stderr, "%s: ", pname);
    put_escaped(stderr, msg);
    fputc('\n', stderr);
    fflush(stderr);
}

/* Print the error object on top (if status is an error) and pop it. */
static int report(lua_State *L, int status)
{
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        l_message(progname, msg != NULL ? msg : "(error object is not a string)");
        lua_pop(L, 1);
    }
    return status;
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

/* ---- messages ----------------------------------------------------------------------- */

/* A failure: "epochcast: message" on stderr (control characters escaped), exit status 1. */
static int fail(const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    l_message(progname, msg);
    return EXIT_FAILURE;
}

/* A usage error: the message and a hint, exit status 2. */
static int usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    l_message(progname, msg);
    fprintf(stderr, "Try '%s%s%s --help'.\n", progname, cmd != NULL ? " " : "", cmd != NULL ? cmd : "");
    return 2;
}

/* An option with a value, "--name VALUE" or "--name=VALUE" (also "-o VALUE" for a short
 * alias): 1 and *value when argv[*i] is that option (*i then at its last word), 0 when it is
 * another word, -1 when the value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char *alias, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (strcmp(a, name) != 0 && (alias == NULL || strcmp(a, alias) != 0))
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

static const char main_usage[] =
    "usage: epochcast [--models DIR] COMMAND [ARGS...]\n"
    "\n"
    "Predict deep-learning training step time, epoch time and GPU memory.\n"
    "\n"
    "commands:\n"
    "  gpus                          list the GPU profiles\n"
    "  models                        list the network presets and their families\n"
    "  networks                      list the inter-node network presets (network=...)\n"
    "  model-info model=ID|PATH      a network's parameters, FLOPs, memory and layers\n"
    "  predict key=value ...         predict one configuration (--csv, -o FILE)\n"
    "  sweep key=v1,v2 ... key=value predict every combination (--csv, -o FILE, --threads N)\n"
    "  validate RUNS.csv             predict measured runs and report the error\n"
    "  calibrate RUNS.csv -o P.csv   fit the model's physical parameters to measured runs\n"
    "  plan key=v1,v2 ... deadline_h=H  the cheapest configuration under constraints, the\n"
    "                                time-cost Pareto front (CSV and PNG)\n"
    "  compare A... -- B...          two configurations side by side (B changes A)\n"
    "  max-batch key=value ...       the largest batch_per_gpu that fits in memory\n"
    "  optimize model=ID gpu=ID num_gpus=N global_batch_tokens=T  the best parallel layouts\n"
    "                                (dp x tp x pp x cp x ep, sharding, micro-batch, checkpointing)\n"
    "  run SCRIPT.lua [ARGS...]      run a Lua scenario (require \"epochcast\")\n"
    "\n"
    "options:\n"
    "  --models DIR   the models/ folder (default: $EPOCHCAST_MODELS, else the one installed\n"
    "                 beside epochcast, PREFIX/share/epochcast/models; --version prints it)\n"
    "  --profile P    predict with the calibrated profile P (from calibrate) instead of\n"
    "                 the models/ folder's profile.csv; a config's profile= still wins\n"
    "  --help         this text; COMMAND --help describes a command\n"
    "  --version      print the version\n";

static const char gpus_usage[] =
    "usage: epochcast gpus\n"
    "\n"
    "List the GPU profiles: id, name, architecture, memory (GiB), memory bandwidth\n"
    "(GB/s = 1e9 bytes/s) and dense fp32 / fp16 tensor peaks (TFLOP/s).\n"
    "Any id, alias or nvidia-smi name works as gpu=... in a configuration.\n";

static const char networks_usage[] =
    "usage: epochcast networks\n"
    "\n"
    "List the inter-node network presets of models/interconnects.csv that network= names:\n"
    "the rate of each GPU's own NIC and of a node (Gb/s per direction), the measured\n"
    "collective efficiency where one is published (else constants.csv internode_busbw_frac),\n"
    "the NVLink switch domain, and the description.  Without network=, nodes are joined by\n"
    "network_gbit_per_s (per node), else by the network of the GPU's reference system\n"
    "(models/reference_systems.csv: DGX H100's NDR InfiniBand, a PCIe server's 100 GbE), else\n"
    "constants.csv internode_bytes_per_s.\n";

static const char models_usage[] =
    "usage: epochcast models\n"
    "\n"
    "List the network presets: id, family (the config's model_type), default task,\n"
    "parameters (millions, with the default task head) and the tasks it has heads for,\n"
    "then the model_types a config.json given as model=PATH may have.\n"
    "`epochcast model-info model=ID` describes one.\n";

static const char predict_usage[] =
    "usage: epochcast predict key=value ... [--csv] [-o FILE] [--trace FILE] [--profile P]\n"
    "\n"
    "Predict one training configuration and print the step-time breakdown, GPU\n"
    "utilization, bottleneck, memory by part and warnings.\n"
    "  --csv     print a CSV header and one row instead (config keys, then results)\n"
    "  -o FILE   write that CSV to FILE (atomically)\n"
    "  --trace FILE  write the first simulated steps as a Chrome trace (open in ui.perfetto.dev)\n"
    "  --profile P  predict with the calibrated profile P (the same as profile=P)\n"
    "\n"
    "example: epochcast predict model=bert-base gpu=t4 batch_per_gpu=32 seq_len=128\n"
    "\n"
    "keys:\n";

static const char sweep_usage[] =
    "usage: epochcast sweep key=v1,v2,... [key=value ...] [--csv] [-o FILE] [--plot FILE] [--threads N]\n"
    "\n"
    "Predict every combination of the listed values (the first axis varies slowest) over\n"
    "the fixed keys, and print one line per point: the axes' values, step time,\n"
    "throughput, GPU utilization, bottleneck, peak memory and whether it fits.  A point\n"
    "the model refuses (an unsupported combination) prints its reason and the sweep goes on.\n"
    "  --csv     print CSV instead: every config key, then the result columns, then error\n"
    "  -o FILE   write that CSV to FILE (atomically)\n"
    "  --plot FILE  draw the points (.png or .svg, needs gnuplot): epoch time (samples/s\n"
    "            without dataset_samples) against the numeric axis with the most values,\n"
    "            one line per combination of the other axes; no numeric axis: the step's\n"
    "            breakdown, one bar per point\n"
    "  --threads N, -j N  predict on N threads (default 0: the cores available, fewer for\n"
    "            a short sweep); the output is the same, row for row, on any number\n"
    "Under mpirun (mpirun -n K epochcast-mpi sweep ...) the points are split over the K\n"
    "processes and rank 0 writes the same output as one process.\n"
    "A comma inside parentheses does not split: lengths=lognormal(60,0.7) is one value.\n"
    "\n"
    "example: epochcast sweep model=bert-base gpu=t4,a100-sxm4-80gb precision=fp32,amp_fp16 batch_per_gpu=8,32\n";

static const char validate_usage[] =
    "usage: epochcast validate RUNS.csv [-o OUT.csv] [--profile P] [--plot F] [--allow-paths]\n"
    "\n"
    "Predict every measured run of RUNS.csv (columns: id, config keys, metric, value,\n"
    "source) and print the error: n, MAPE, share within +-10% and +-20%, bias, overall\n"
    "and per GPU and per model.\n"
    "  -o OUT.csv    also write id,gpu,model,metric,predicted,p10,p90,measured,error_pct,\n"
    "                in_p10_p90 per run (p10/p90: the prediction's interval in the run's metric)\n"
    "The p10-p90% column is the share of measured runs inside their predicted p10-p90\n"
    "interval: about 80% when the intervals can be trusted on this hardware.\n"
    "  --plot FILE   draw predicted against measured, one panel per metric with y = x, the\n"
    "                +-20% band and the p10-p90 bars (.png or .svg, needs gnuplot)\n"
    "  --profile P   predict with the calibrated profile P (overrides the runs' profile)\n"
    "  --allow-paths let lengths=/profile= cells name files outside RUNS.csv's folder\n"
    "                (they are taken from that folder and confined to it by default)\n"
    "Options go in any order, each value also as --opt=VALUE.  The file is read as a\n"
    "stream (any size); a progress bar shows on a terminal; Ctrl-C stops cleanly.\n";

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

static int is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* ---- CSV to stdout ------------------------------------------------------------------ */

/* Write rows (nrows x ncols fields) to path through the atomic writer; 0 or 1. */
static int write_csv_file(lua_State *L, ec_ctx *ctx, const char *path, const char *const *fields,
                          size_t nrows, size_t ncols)
{
    void **slot = ecL_newbox(L, ecL_abort_csv);       /* box */
    ec_csv_writer *w = NULL;
    int st = ec_csv_open(ctx, path, &w);
    *slot = w;
    for (size_t r = 0; st == EC_OK && r < nrows; r++)
        st = ec_csv_row(w, fields + r * ncols, ncols);
    w = (ec_csv_writer *)ecL_unbox(L, -1);
    lua_pop(L, 1);
    if (st == EC_OK)
        st = ec_csv_close(w);
    else
        ec_csv_abort(w);
    return st == EC_OK ? 0 : fail("%s", ec_ctx_errmsg(ctx));
}

/* ---- gpus, models ------------------------------------------------------------------- */

static int cmd_gpus(lua_State *L, int argc, char **argv)
{
    if (argc > 0 && is_help(argv[0]))
        return fputs(gpus_usage, stdout), 0;
    if (argc > 0)
        return usage_error("gpus", "gpus: unexpected argument '%s'", argv[0]);
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    size_t n = ec_gpu_count(ctx);
    int wid = 2, wname = 4;
    for (size_t i = 0; i < n; i++) {
        ec_gpu_info g;
        if (ec_gpu_get(ctx, i, &g) != EC_OK)
            return fail("%s", ec_ctx_errmsg(ctx));
        if ((int)strlen(g.id) > wid) wid = (int)strlen(g.id);
        if ((int)strlen(g.name) > wname) wname = (int)strlen(g.name);
    }
    printf("%-*s  %-*s  %-12s %8s %8s %12s %12s\n", wid, "id", wname, "name", "architecture",
           "mem_GiB", "GB/s", "fp32_TFLOP/s", "fp16_TFLOP/s");
    for (size_t i = 0; i < n; i++) {
        ec_gpu_info g;
        ec_gpu_get(ctx, i, &g);
        printf("%-*s  %-*s  %-12s %8.1f %8.0f %12.1f %12.1f\n", wid, g.id, wname, g.name,
               g.architecture, g.memory_bytes / GIB, g.memory_bandwidth_bytes_per_s / 1e9,
               g.peak_fp32_flop_per_s / 1e12, g.peak_fp16_flop_per_s / 1e12);
    }
    return 0;
}

static int cmd_networks(lua_State *L, int argc, char **argv)
{
    if (argc > 0 && is_help(argv[0]))
        return fputs(networks_usage, stdout), 0;
    if (argc > 0)
        return usage_error("networks", "networks: unexpected argument '%s'", argv[0]);
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    size_t n = ec_interconnect_count(ctx);
    int wid = 2;
    for (size_t i = 0; i < n; i++) {
        ec_interconnect_info f;
        if (ec_interconnect_get(ctx, i, &f) != EC_OK)
            return fail("%s", ec_ctx_errmsg(ctx));
        if ((int)strlen(f.id) > wid)
            wid = (int)strlen(f.id);
    }
    printf("%-*s  %9s %10s %6s %6s  %s\n", wid, "id", "Gb/s/GPU", "Gb/s/node", "eff", "domain", "description");
    for (size_t i = 0; i < n; i++) {
        ec_interconnect_info f;
        ec_interconnect_get(ctx, i, &f);
        char eff[16] = "-", dom[16] = "-", gpu[16] = "-";
        if (f.efficiency_frac > 0)
            snprintf(eff, sizeof eff, "%.2f", f.efficiency_frac);
        if (f.domain_gpus > 0)
            snprintf(dom, sizeof dom, "%d", f.domain_gpus);
        if (f.gpu_bytes_per_s > 0)
            snprintf(gpu, sizeof gpu, "%.0f", f.gpu_bytes_per_s * 8 / 1e9);
        printf("%-*s  %9s %10.0f %6s %6s  %s\n", wid, f.id, gpu, f.node_bytes_per_s * 8 / 1e9, eff, dom,
               f.description);
    }
    return 0;
}

static int cmd_models(lua_State *L, int argc, char **argv)
{
    if (argc > 0 && is_help(argv[0]))
        return fputs(models_usage, stdout), 0;
    if (argc > 0)
        return usage_error("models", "models: unexpected argument '%s'", argv[0]);
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    size_t n = ec_model_count(ctx);
    int wid = 2, fwid = 6;
    for (size_t i = 0; i < n; i++) {
        ec_model_info m;
        if (ec_model_get(ctx, i, &m) != EC_OK)
            return fail("%s", ec_ctx_errmsg(ctx));
        if ((int)strlen(m.id) > wid) wid = (int)strlen(m.id);
        if ((int)strlen(m.family) > fwid) fwid = (int)strlen(m.family);
    }
    printf("%-*s  %-*s %-14s %10s  %s\n", wid, "id", fwid, "family", "default_task", "params_M", "tasks");
    for (size_t i = 0; i < n; i++) {
        ec_model_info m;
        ec_model_get(ctx, i, &m);
        printf("%-*s  %-*s %-14s %10.1f  %s\n", wid, m.id, fwid, m.family, m.default_task, m.params / 1e6, m.tasks);
    }
    printf("\nmodel=PATH also takes a Hugging Face config.json (or a folder holding one) of model_type:\n  %s\n",
           ec_model_types());
    return 0;
}

/* ---- predict ------------------------------------------------------------------------ */

/* Header and row of a prediction: every config key (its text via ec_config_get), then
 * the result columns of l_result.c.  fields gets 2 x ncols pointers into text. */
#define CELL_MAX EC_WARNING_TEXT_MAX
static size_t predict_csv(lua_State *L, const ec_config *cfg, const ec_result *res,
                          const char ***fields_out)
{
    size_t nk = ec_config_key_count(), nr = ecL_result_column_count(), n = nk + nr;
    const char **fields = (const char **)lua_newuserdatauv(L, 2 * n * sizeof *fields, 0);
    char *text = (char *)lua_newuserdatauv(L, n * CELL_MAX, 0);
    for (size_t i = 0; i < n; i++) {
        char *cell = text + i * CELL_MAX;
        if (i < nk) {
            fields[i] = ec_config_key_name(i);
            if (ec_config_get(cfg, fields[i], cell, CELL_MAX) != EC_OK)
                cell[0] = '\0';
        } else {
            fields[i] = ecL_result_column_name(i - nk);
            ecL_result_column_text(res, i - nk, cell, CELL_MAX);
        }
        fields[n + i] = cell;
    }
    *fields_out = fields;
    return n;
}

/* A config value for the headline: "default" for an empty string or a 0 that means
 * "the preset's default" (task, seq_len). */
static const char *config_text(const ec_config *cfg, const char *key, char *buf, size_t n)
{
    if (ec_config_get(cfg, key, buf, n) != EC_OK || buf[0] == '\0'
        || (strcmp(key, "seq_len") == 0 && strcmp(buf, "0") == 0))
        snprintf(buf, n, "default");
    return buf;
}

static void print_breakdown(const ec_config *cfg, const ec_result *res)
{
    char model[EC_NAME_MAX + 1], task[EC_NAME_MAX + 1], gpu[EC_NAME_MAX + 1], ngpu[32],
        prec[32], batch[32], seq[32];
    printf("%s (%s task) on %s x %s, %s, batch_per_gpu %s, seq_len %s\n",
           config_text(cfg, "model", model, sizeof model), config_text(cfg, "task", task, sizeof task),
           config_text(cfg, "gpu", gpu, sizeof gpu), config_text(cfg, "num_gpus", ngpu, sizeof ngpu),
           config_text(cfg, "precision", prec, sizeof prec),
           config_text(cfg, "batch_per_gpu", batch, sizeof batch),
           config_text(cfg, "seq_len", seq, sizeof seq));
    if (res->tp > 1 || res->pp > 1 || res->cp > 1 || res->ep > 1)
        printf("  layout             dp %d x tp %d x pp %d x cp %d (ep %d)\n", res->dp, res->tp, res->pp, res->cp,
               res->ep);
    printf("  step time          %12.3f ms\n", res->step_s * 1e3);
    printf("  samples/s          %12.1f\n", res->samples_per_s);
    char seqbuf[32];
    if (ec_config_get(cfg, "seq_len", seqbuf, sizeof seqbuf) == EC_OK && res->tokens_per_s != res->samples_per_s)
        printf("  tokens/s           %12.0f   (%.3g GPU-s per 1M tokens)\n", res->tokens_per_s,
               res->gpu_s_per_token * 1e6);
    char d1[32], d2[32], d3[32];
    if (res->epoch_s > 0)
        printf("  epoch time         %12s   (%.1f s; p10 %s, p90 %s; %.0f steps)\n",
               ecC_duration(res->epoch_s, d1, sizeof d1), res->epoch_s,
               ecC_duration(res->epoch_p10_s, d2, sizeof d2), ecC_duration(res->epoch_p90_s, d3, sizeof d3),
               res->steps_per_epoch);
    if (res->run_s > 0)
        printf("  run time           %12s   (%.1f s%s)\n", ecC_duration(res->run_s, d1, sizeof d1), res->run_s,
               res->epoch_s > 0 ? "" : cfg->train_tokens > 0 ? ": train_tokens at the steady rate"
                                                             : ": train_samples at the steady rate");
    if (res->eval_s > 0)
        printf("  evaluation         %12.1f s per epoch (%.3f ms per batch)\n", res->eval_s, res->eval_step_s * 1e3);
    if (res->first_step_s > res->step_s * 1.001)
        printf("  first step         %12.1f s (torch.compile)\n", res->first_step_s);
    ecC_print_cost(cfg, res);
    const ec_breakdown *b = &res->breakdown;
    printf("per step (ms)\n");
    printf("  forward            %12.3f\n", b->forward_s * 1e3);
    printf("  backward           %12.3f\n", b->backward_s * 1e3);
    printf("  optimizer          %12.3f\n", b->optimizer_s * 1e3);
    printf("  transfer (H2D)     %12.3f\n", b->h2d_s * 1e3);
    printf("  CPU overhead       %12.3f\n", b->cpu_overhead_s * 1e3);
    printf("  loader             %12.3f\n", b->loader_s * 1e3);
    printf("  comm               %12.3f\n", b->comm_s * 1e3);
    const ec_comm_parts *c = &res->comm;
    const struct { const char *name; double s; } parts[] = {
        {"tensor parallel", c->tp_s}, {"context parallel", c->cp_s}, {"expert all-to-all", c->ep_s},
        {"gradient reduce", c->dp_reduce_s}, {"FSDP/ZeRO waits", c->shard_wait_s},
        {"overlap slowdown", c->overlap_s}, {"CPU offload", c->offload_s}, {"pipeline bubble", c->pp_bubble_s},
        {"pipeline p2p", c->pp_p2p_s}, {"slowest GPU", res->straggler_s}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].s > 0 && b->comm_s > 0)
            printf("    %-17s%12.3f\n", parts[i].name, parts[i].s * 1e3);
    printf("GPU busy             %12.1f %%\n", res->gpu_util_frac * 100);
    printf("bottleneck           %12s\n", ec_bottleneck_name(res->bottleneck));
    printf("MFU                  %12.1f %%\n", res->mfu_frac * 100);
    if (res->hfu_frac > res->mfu_frac * 1.0005)
        printf("HFU                  %12.1f %%   (checkpointing's recompute counted)\n", res->hfu_frac * 100);
    const ec_memory *m = &res->memory;
    printf("memory (GiB)\n");
    printf("  weights            %12.2f\n", m->weights_bytes / GIB);
    printf("  gradients          %12.2f\n", m->grads_bytes / GIB);
    printf("  optimizer states   %12.2f\n", m->optimizer_bytes / GIB);
    printf("  autocast cache     %12.2f\n", m->cast_cache_bytes / GIB);
    printf("  activations        %12.2f\n", m->activations_bytes / GIB);
    printf("  workspace          %12.2f\n", m->workspace_bytes / GIB);
    printf("  CUDA context       %12.2f\n", m->context_bytes / GIB);
    printf("  allocator          %12.2f\n", m->allocator_bytes / GIB);
    printf("  peak               %12.2f of %.2f   fits: %s\n", m->peak_bytes / GIB,
           m->capacity_bytes / GIB, m->fits ? "yes" : m->at_edge ? "at the edge" : "no");
    printf("  readings           %12.2f allocated, %.2f reserved, %.2f nvidia-smi%s\n", m->allocated_bytes / GIB,
           m->reserved_bytes / GIB, m->nvml_bytes / GIB, m->needed_bytes > m->capacity_bytes ? " (needed)" : "");
    printf("  peak at            %12s%s\n", "", ec_peak_phase_name(m->peak_phase));
    printf("  headroom           %12.2f   kept free (%s)\n", m->headroom_bytes / GIB,
           cfg->memory_headroom_bytes >= 0 ? "memory_headroom_gib" : "default: the allocator's usual slack and 5% for the model's error");
    if (res->host_pinned_bytes > 0)
        printf("  host (pinned)      %12.2f   per GPU, for CPU offload\n", res->host_pinned_bytes / GIB);
    if (res->warning_text[0] != '\0') {
        printf("warnings\n");
        const char *t = res->warning_text;
        while (*t != '\0') {
            const char *end = strstr(t, "; ");
            int len = end != NULL ? (int)(end - t) : (int)strlen(t);
            if (len > 0)
                printf("  - %.*s\n", len, t);
            t += len + (end != NULL ? 2 : 0);
        }
    }
}

/* A pipeline's stages: which layers, a micro-batch's time and the peak memory of each. */
static int print_stages(ec_ctx *ctx, const ec_config *cfg, int pp)
{
    ec_stage *st = calloc((size_t)pp, sizeof *st);
    size_t n = 0;
    if (st == NULL)
        return fail("out of memory");
    if (ec_predict_stages(ctx, cfg, st, (size_t)pp, &n) != EC_OK) {
        free(st);
        return fail("%s", ec_ctx_errmsg(ctx));
    }
    printf("pipeline stages\n  %-7s %-13s %12s %10s %12s %12s  %s\n", "stage", "layers", "micro (ms)", "in flight",
           "act (GiB)", "peak (GiB)", "peak at");
    for (size_t i = 0; i < n; i++) {
        const ec_memory *m = &st[i].memory;
        printf("  %-7zu %4d-%-8d %12.3f %10.1f %12.2f %12.2f  %s%s\n", i, st[i].first_layer,
               st[i].first_layer + st[i].layers - 1, st[i].micro_s * 1e3, st[i].in_flight,
               m->activations_bytes / GIB, m->peak_bytes / GIB, ec_peak_phase_name(m->peak_phase),
               m->fits ? "" : m->at_edge ? "  (at the edge)" : "  (does not fit)");
    }
    free(st);
    return 0;
}

static int cmd_predict(lua_State *L, int argc, char **argv)
{
    int csv = 0;
    const char *out = NULL, *trace = NULL;
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(predict_usage, stdout);
            for (size_t k = 0; k < ec_config_key_count(); k++)
                printf("  %-20s %s\n", ec_config_key_name(k), ec_config_key_help(k));
            return 0;
        }
    }
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    ec_config cfg;
    ec_config_init(&cfg);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if (strcmp(a, "--csv") == 0) {
            csv = 1;
        } else if ((m = opt_value(argc, argv, &i, "--output", "-o", &v)) != 0) {
            if (m < 0)
                return usage_error("predict", "predict: %s needs a file name", a);
            out = v;
        } else if ((m = opt_value(argc, argv, &i, "--trace", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error("predict", "predict: --trace needs a file name");
            trace = v;
        } else if ((m = opt_value(argc, argv, &i, "--profile", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error("predict", "predict: --profile needs a file name");
            if (ec_config_set(ctx, &cfg, "profile", v) != EC_OK)
                return fail("%s", ec_ctx_errmsg(ctx));
        } else if (a[0] == '-') {
            return usage_error("predict", "predict: unknown option '%s'", a);
        } else if (strchr(a, '=') == NULL) {
            return usage_error("predict", "predict: expected key=value, got '%s'", a);
        } else if (ec_config_set_word(ctx, &cfg, a) != EC_OK) {
            return fail("%s", ec_ctx_errmsg(ctx));
        }
    }
    ec_result res;
    ec_config shown; /* what was simulated: derived strategy, task, seq_len, ... (issue 21) */
    int st = ec_predict(ctx, &cfg, &res);
    if (st == EC_OK)
        st = ec_config_resolve(ctx, &cfg, &shown);
    if (st != EC_OK)
        return fail("%s", ec_ctx_errmsg(ctx));
    const char **fields = NULL;
    size_t n = predict_csv(L, &shown, &res, &fields);
    if (out != NULL && write_csv_file(L, ctx, out, fields, 2, n) != 0)
        return EXIT_FAILURE;
    if (trace != NULL && ec_trace_write(ctx, &cfg, trace, 0) != EC_OK)
        return fail("%s", ec_ctx_errmsg(ctx));
    if (csv) {
        (void)ec_csv_print_row(stdout, fields, n);
        (void)ec_csv_print_row(stdout, fields + n, n);
    } else {
        print_breakdown(&shown, &res);
        if (res.pp > 1 && print_stages(ctx, &cfg, res.pp) != 0)
            return EXIT_FAILURE;
    }
    return 0;
}

/* ---- sweep --------------------------------------------------------------------------- */

typedef struct cli_sweep {
    lua_State *L;
    ec_ctx *ctx;
    const ecL_axis *axes;
    size_t n_axes;
    int table, csv;            /* print the readable table; print CSV on stdout */
    int *widths;               /* column width of each axis */
    ec_csv_writer *w;          /* -o FILE, or NULL */
    const char **fields;       /* n_cols field pointers */
    char *cells;               /* n_cols x CELL_MAX */
    size_t n_cols;
    size_t refused;            /* points the library refused: listed at the end, exit status 1 */
    int refused_idx;           /* stack index of a table of "  key=v key=v: message" lines */
    int plot_rows;             /* --plot: stack index of the predicted points' rows, else 0 */
    int epoch_unknown;         /* a predicted point without an epoch time (no dataset_samples) */
} cli_sweep;

/* --plot: keep a predicted point as a row for ec.plot: the axes' values (numbers where they
 * read as numbers) and the few result fields a picture uses (a slim row: a long sweep keeps
 * every point until the end). */
static void sweep_plot_row(cli_sweep *sw, const ec_sweep_point *pt)
{
    lua_State *L = sw->L;
    const ec_result *res = pt->result;
    const ec_breakdown *b = &res->breakdown;
    const double fields[] = {res->epoch_s, res->samples_per_s, b->forward_s, b->backward_s, b->optimizer_s,
                             b->h2d_s, b->cpu_overhead_s, b->loader_s, b->comm_s};
    static const char *const names[] = {"epoch_s", "samples_per_s", "breakdown_forward_s", "breakdown_backward_s",
        "breakdown_optimizer_s", "breakdown_h2d_s", "breakdown_cpu_overhead_s", "breakdown_loader_s",
        "breakdown_comm_s"};
    lua_createtable(L, 0, (int)(sizeof names / sizeof names[0] + sw->n_axes + 1));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        lua_pushnumber(L, fields[i]);
        lua_setfield(L, -2, names[i]);
    }
    lua_pushboolean(L, res->memory.fits);
    lua_setfield(L, -2, "fits");
    for (size_t a = 0; a < sw->n_axes; a++) {
        const char *v = sw->axes[a].values[pt->values[a]];
        if (lua_stringtonumber(L, v) == 0)
            lua_pushstring(L, v);
        lua_setfield(L, -2, sw->axes[a].key);
    }
    lua_rawseti(L, sw->plot_rows, (lua_Integer)lua_rawlen(L, sw->plot_rows) + 1);
    sw->epoch_unknown |= !(pt->result->epoch_s > 0);
}

/* --plot FILE: the points through ec.plot.  An axis whose values are all numbers (the one
 * with the most values) is x, the other axes the series, y the epoch time (samples/s when
 * the epoch is unknown); with no numeric axis, the step's breakdown, one bar per point. */
static int sweep_plot(lua_State *L, int ctxbox, const cli_sweep *sw, const char *path)
{
    int x = -1;
    for (size_t a = 0; a < sw->n_axes; a++) {
        int numeric = 1;
        for (size_t v = 0; v < sw->axes[a].n && numeric; v++) {
            numeric = lua_stringtonumber(L, sw->axes[a].values[v]) != 0;
            if (numeric)
                lua_pop(L, 1);
        }
        if (numeric && (x < 0 || sw->axes[a].n > sw->axes[x].n))
            x = (int)a;
    }
    lua_pushvalue(L, ctxbox);                         /* ctx: the picture is written through it */
    lua_pushcclosure(L, ecL_plot, 1);                 /* f */
    lua_createtable(L, 0, 6);                         /* f spec */
    lua_pushstring(L, x >= 0 ? "line" : "breakdown");
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    lua_createtable(L, (int)sw->n_axes, 0);           /* f spec keys: the series (or the bars' labels) */
    for (size_t a = 0, k = 0; a < sw->n_axes; a++) {
        if ((int)a == x)
            continue;
        lua_pushstring(L, sw->axes[a].key);
        lua_rawseti(L, -2, (lua_Integer)++k);
    }
    lua_setfield(L, -2, x >= 0 ? "group" : "x");
    if (x >= 0) {
        lua_pushstring(L, sw->axes[x].key);
        lua_setfield(L, -2, "x");
        lua_pushstring(L, sw->epoch_unknown ? "samples_per_s" : "epoch_s");
        lua_setfield(L, -2, "y");
    }
    lua_pushvalue(L, sw->plot_rows);
    lua_setfield(L, -2, "rows");
    if (lua_rawlen(L, sw->plot_rows) == 0) {
        lua_pop(L, 2);
        return fail("--plot: no point was predicted, nothing to draw");
    }
    lua_call(L, 1, 2);                                /* ok msg */
    int rc = lua_toboolean(L, -2) ? (printf("wrote %s\n", path), 0) : fail("%s", lua_tostring(L, -1));
    lua_pop(L, 2); /* the stack as it was: the caller's text is on top */
    return rc;
}

/* The CSV row of a point: every config key, the result columns (empty after an error), error. */
static void sweep_csv_fields(cli_sweep *sw, const ec_sweep_point *pt)
{
    size_t nk = ec_config_key_count(), nr = ecL_result_column_count();
    /* a predicted point: the values it derived (strategy, task, ...) */
    const ec_config *cfg = pt->status == EC_OK ? pt->resolved : pt->config;
    for (size_t i = 0; i < nk; i++)
        if (ec_config_get_at(cfg, i, sw->cells + i * CELL_MAX, CELL_MAX) != EC_OK)
            sw->cells[i * CELL_MAX] = '\0';
    char *error = sw->cells + (nk + nr) * CELL_MAX;
    error[0] = '\0';
    if (pt->status == EC_OK)
        ecL_result_row_text(pt->result, sw->cells + nk * CELL_MAX, CELL_MAX);
    else {
        for (size_t i = nk; i < nk + nr; i++)
            sw->cells[i * CELL_MAX] = '\0';
        snprintf(error, CELL_MAX, "%s: %s", ecL_status_name(pt->status), pt->message);
    }
    for (size_t i = 0; i < sw->n_cols; i++)
        sw->fields[i] = sw->cells + i * CELL_MAX;
}

static int sweep_point_cli(void *ud, const ec_sweep_point *pt)
{
    cli_sweep *sw = (cli_sweep *)ud;
    const ec_result *res = pt->result;
    if (pt->status != EC_OK) { /* kept for the list at the end (a table: the sweep's box is on top) */
        lua_State *L = sw->L;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addstring(&b, " ");
        for (size_t a = 0; a < sw->n_axes; a++) {
            luaL_addchar(&b, ' ');
            luaL_addstring(&b, sw->axes[a].key);
            luaL_addchar(&b, '=');
            luaL_addstring(&b, sw->axes[a].values[pt->values[a]]);
        }
        luaL_addstring(&b, ": ");
        luaL_addstring(&b, pt->message);
        luaL_addchar(&b, '\n');
        luaL_pushresult(&b);
        lua_rawseti(L, sw->refused_idx, (lua_Integer)++sw->refused);
    }
    if (sw->table) {
        for (size_t a = 0; a < sw->n_axes; a++)
        {
            const char *v = sw->axes[a].values[pt->values[a]];
            put_escaped(stdout, v); /* a value from the command line, shown as it was given */
            printf("%*s  ", sw->widths[a] > (int)strlen(v) ? sw->widths[a] - (int)strlen(v) : 0, "");
        }
        if (pt->status == EC_OK) {
            char epoch[32], run[32], cost[64] = "-";
            ecC_duration(res->epoch_s, epoch, sizeof epoch);
            ecC_duration(res->run_s, run, sizeof run);
            if (res->cost_run > 0) {
                ecC_money(res->cost_run, res->price_currency, cost, sizeof cost);
            } else if (res->cost_per_million_tokens > 0) { /* no run: a million tokens' worth */
                ecC_money(res->cost_per_million_tokens, res->price_currency, cost, sizeof cost);
                strncat(cost, "/1Mtok", sizeof cost - strlen(cost) - 1);
            }
            printf("%10.3f %10.1f %10s %10s %16s %5.1f  %-10s %8.2f %-4s%s\n", res->step_s * 1e3, res->samples_per_s,
                   epoch, run, cost, res->gpu_util_frac * 100, ec_bottleneck_name(res->bottleneck),
                   res->memory.peak_bytes / GIB, res->memory.fits ? "yes" : "no",
                   res->warning_text[0] != '\0' ? "  *" : "");
        } else {
            fputs("error: ", stdout);
            put_escaped(stdout, pt->message);
            putchar('\n');
        }
    }
    if (sw->plot_rows != 0 && pt->status == EC_OK)
        sweep_plot_row(sw, pt);
    if (sw->csv || sw->w != NULL) {
        sweep_csv_fields(sw, pt);
        if (sw->csv)
            (void)ec_csv_print_row(stdout, sw->fields, sw->n_cols);
        if (sw->w != NULL)
            return ec_csv_row(sw->w, sw->fields, sw->n_cols);
    }
    return EC_OK;
}

/* sweep's command line: the fixed keys (key=value) set in base, the axes (key=v1,v2,...: their
 * words kept on the stack), the options. */
typedef struct sweep_args {
    ec_config base;
    ecL_axis axes[ECL_SWEEP_MAX_AXES];
    size_t n_axes;
    const char *out, *plot; /* -o FILE, --plot FILE; NULL without */
    int csv, threads;
} sweep_args;

/* Parse sweep's arguments into sa.  Returns -1 when the command should go on, else the exit
 * status (a usage error, a fixed key the library refuses). */
static int parse_sweep_args(lua_State *L, ec_ctx *ctx, int argc, char **argv, sweep_args *sa)
{
    ec_config_init(&sa->base);
    sa->n_axes = 0;
    sa->out = sa->plot = NULL;
    sa->csv = sa->threads = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const char *eq = strchr(a, '=');
        int m;
        if (strcmp(a, "--csv") == 0) {
            sa->csv = 1;
        } else if ((m = opt_value(argc, argv, &i, "--output", "-o", &v)) != 0) {
            if (m < 0)
                return usage_error("sweep", "sweep: %s needs a file name", a);
            sa->out = v;
        } else if ((m = opt_value(argc, argv, &i, "--plot", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error("sweep", "sweep: %s needs a file name (.png or .svg)", a);
            sa->plot = v;
            size_t len = strlen(v); /* said now, not after a long sweep */
            if (len < 5 || (strcasecmp(v + len - 4, ".png") != 0 && strcasecmp(v + len - 4, ".svg") != 0))
                return usage_error("sweep", "sweep: --plot '%s' must end in .png or .svg", v);
        } else if ((m = opt_value(argc, argv, &i, "--threads", "-j", &v)) != 0) {
            if (m < 0 || (sa->threads = ecC_threads_arg(v)) < 0)
                return usage_error("sweep", "sweep: %s needs a number of threads from 0 (the cores available) to %d",
                                   a, ECL_SWEEP_MAX_THREADS);
        } else if (a[0] == '-') {
            return usage_error("sweep", "sweep: unknown option '%s'", a);
        } else if (eq == NULL) {
            return usage_error("sweep", "sweep: expected key=value or key=v1,v2,..., got '%s'", a);
        } else {
            size_t len = strlen(a);
            char *word = (char *)lua_newuserdatauv(L, len + 1, 0); /* kept on the stack */
            memcpy(word, a, len + 1);
            word[eq - a] = '\0';
            char *value = word + (eq - a) + 1;
            size_t cap = strlen(value) / 2 + 2;
            const char **parts = (const char **)lua_newuserdatauv(L, cap * sizeof *parts, 0);
            size_t n = ecC_split(value, parts, cap);
            if (n == 1) {
                if (ec_config_set(ctx, &sa->base, word, value) != EC_OK)
                    return fail("%s", ec_ctx_errmsg(ctx));
            } else {
                if (sa->n_axes == ECL_SWEEP_MAX_AXES)
                    return usage_error("sweep", "sweep: at most %d axes", ECL_SWEEP_MAX_AXES);
                sa->axes[sa->n_axes++] = (ecL_axis){word, n, parts};
            }
        }
    }
    if (sa->n_axes == 0)
        return usage_error("sweep", "sweep: no axis; give at least one key=v1,v2,...");
    return -1;
}

/* The sweep's columns (every config key, the result columns, error: their names after the
 * n_cols cells' pointers in fields) and each axis's width in the table, in userdata on the stack. */
static void sweep_columns(lua_State *L, cli_sweep *sw)
{
    sw->n_cols = ec_config_key_count() + ecL_result_column_count() + 1;
    sw->fields = (const char **)lua_newuserdatauv(L, 2 * sw->n_cols * sizeof *sw->fields, 0);
    sw->cells = (char *)lua_newuserdatauv(L, sw->n_cols * CELL_MAX, 0);
    sw->widths = (int *)lua_newuserdatauv(L, sw->n_axes * sizeof *sw->widths, 0);
    for (size_t c = 0; c < sw->n_cols; c++) {
        size_t nk = ec_config_key_count(), nr = ecL_result_column_count();
        sw->fields[sw->n_cols + c] = c < nk        ? ec_config_key_name(c)
                                     : c < nk + nr ? ecL_result_column_name(c - nk)
                                                   : "error";
    }
    for (size_t a = 0; a < sw->n_axes; a++) {
        sw->widths[a] = (int)strlen(sw->axes[a].key);
        for (size_t v = 0; v < sw->axes[a].n; v++)
            if ((int)strlen(sw->axes[a].values[v]) > sw->widths[a])
                sw->widths[a] = (int)strlen(sw->axes[a].values[v]);
    }
}

/* Push the refused points' lines (sw->refused_idx) as one text, listed after the table. */
static void push_refused_text(lua_State *L, const cli_sweep *sw)
{
    luaL_Buffer refused_text;
    luaL_buffinit(L, &refused_text);
    for (size_t r = 1; r <= sw->refused; r++) {
        lua_rawgeti(L, sw->refused_idx, (lua_Integer)r);
        luaL_addvalue(&refused_text);
    }
    luaL_pushresult(&refused_text);
}

static int cmd_sweep(lua_State *L, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (is_help(argv[i]))
            return fputs(sweep_usage, stdout), 0;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    int ctxbox = lua_gettop(L);
    sweep_args sa;
    int code = parse_sweep_args(L, ctx, argc, argv, &sa);
    if (code >= 0)
        return code;
    const ec_config *base = &sa.base;
    const ecL_axis *axes = sa.axes;
    size_t n_axes = sa.n_axes;
    const char *out = sa.out, *plot = sa.plot;
    int csv = sa.csv, threads = sa.threads;
    char msg[EC_WARNING_TEXT_MAX];
    size_t total = 0;
    if (ecL_sweep_check(ctx, base, axes, n_axes, &total, msg, sizeof msg) != EC_OK)
        return fail("%s", msg);

    lua_newtable(L); /* the refused points' lines */
    cli_sweep sw = {L, ctx, axes, n_axes, !csv, csv, NULL, NULL, NULL, NULL, 0, 0, lua_gettop(L), 0, 0};
    if (plot != NULL && ecC_mpi_rank() == 0) { /* under mpirun rank 0 draws */
        lua_newtable(L);
        sw.plot_rows = lua_gettop(L);
    }
    sweep_columns(L, &sw);
    void **wslot = ecL_newbox(L, ecL_abort_csv);
    int wbox = lua_gettop(L);
    if (ecC_mpi_rank() != 0)
        out = NULL; /* under mpirun rank 0 writes the file */
    int ready = EC_OK;
    if (out != NULL) {
        ready = ec_csv_open(ctx, out, &sw.w);
        *wslot = sw.w;
        if (ready == EC_OK)
            ready = ec_csv_row(sw.w, sw.fields + sw.n_cols, sw.n_cols);
    }
    /* Under mpirun every rank learns whether rank 0 can write -o (a link, a FIFO, a folder or an
     * input is refused there) before any of them starts: none is left waiting for it. */
    if (ecC_mpi_agree(ready != EC_OK))
        return fail("%s", ready != EC_OK ? ec_ctx_errmsg(ctx) : "another MPI rank cannot start the sweep");
    if (csv)
        (void)ec_csv_print_row(stdout, sw.fields + sw.n_cols, sw.n_cols);
    if (sw.table) {
        for (size_t a = 0; a < n_axes; a++)
            printf("%-*s  ", sw.widths[a], axes[a].key);
        printf("%10s %10s %10s %10s %16s %5s  %-10s %8s %-4s\n", "step_ms", "samples/s", "epoch", "run", "cost",
               "GPU%", "bottleneck", "peak_GiB", "fits");
    }
    ec_sweep_opts so;
    ec_sweep_opts_init(&so);
    so.threads = threads;
    so.resolve = 1;
    int st = ecC_sweep_run(L, ctx, base, axes, n_axes, &so, sweep_point_cli, &sw, msg, sizeof msg);
    push_refused_text(L, &sw);
    if (st != EC_OK) {
        ec_csv_abort((ec_csv_writer *)ecL_unbox(L, wbox));
        return fail("%s", msg);
    }
    if (out != NULL && ec_csv_close((ec_csv_writer *)ecL_unbox(L, wbox)) != EC_OK)
        return fail("%s", ec_ctx_errmsg(ctx));
    if (sw.table) {
        printf("%zu points%s\n", total, " (* = see warnings with epochcast predict; epoch needs dataset_samples, "
               "run and cost need dataset_samples, train_tokens or train_samples, else cost is per 1M tokens)");
        if (out != NULL)
            printf("wrote %s\n", out);
    }
    int plot_rc = sw.plot_rows != 0 ? sweep_plot(L, ctxbox, &sw, plot) : 0; /* refused points listed still */
    if (sw.refused > 0) { /* a refused point is an error of the sweep: listed, exit status 1 */
        fprintf(stderr, "epochcast: %zu of %zu sweep points refused:\n", sw.refused, total);
        put_escaped(stderr, lua_tostring(L, -1));
        return EXIT_FAILURE;
    }
    return plot_rc != 0 ? EXIT_FAILURE : 0;
}

/* ---- commands on a run-record file (validate, calibrate) -------------------------------- */

typedef struct runs_args {
    const char *runs_path, *out, *profile, *plot;
    int all;
    unsigned flags;   /* EC_RUNS_ALLOW_PATHS */
} runs_args;

enum { OPT_PROFILE = 1, OPT_ALL = 2, OPT_PLOT = 4 };

/* Parse "RUNS.csv [-o FILE] [--profile P] [--plot F] [--all] [--allow-paths]" in any order,
 * each value also as --opt=VALUE (options as allowed).  Returns -1 when the command should
 * go on, else the exit status (0 after --help). */
static int parse_runs_args(const char *cmd, const char *usage, int allowed, int argc, char **argv, runs_args *ra)
{
    memset(ra, 0, sizeof *ra);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if (is_help(a)) {
            fputs(usage, stdout);
            return 0;
        } else if ((m = opt_value(argc, argv, &i, "--output", "-o", &v)) != 0) {
            if (m < 0)
                return usage_error(cmd, "%s: %s needs a file name", cmd, a);
            ra->out = v;
        } else if ((allowed & OPT_PROFILE) && (m = opt_value(argc, argv, &i, "--profile", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error(cmd, "%s: --profile needs a file name", cmd);
            ra->profile = v;
        } else if ((allowed & OPT_PLOT) && (m = opt_value(argc, argv, &i, "--plot", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error(cmd, "%s: --plot needs a file name", cmd);
            ra->plot = v;
        } else if ((allowed & OPT_ALL) && strcmp(a, "--all") == 0) {
            ra->all = 1;
        } else if (strcmp(a, "--allow-paths") == 0) {
            ra->flags |= EC_RUNS_ALLOW_PATHS;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error(cmd, "%s: unknown option '%s'", cmd, a);
        } else if (ra->runs_path == NULL) {
            ra->runs_path = a;
        } else {
            return usage_error(cmd, "%s: unexpected argument '%s'", cmd, a);
        }
    }
    if (ra->runs_path == NULL)
        return usage_error(cmd, "%s: missing RUNS.csv", cmd);
    return -1;
}

/* Push the context and a box owning the loaded runs; NULL (message printed) on failure. */
static ec_runs *load_runs(lua_State *L, const char *path, unsigned flags, ec_ctx **ctx_out)
{
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    void **slot = ecL_newbox(L, ecL_free_runs);              /* ctx runs */
    ec_runs *runs = NULL;
    int st = ec_runs_load_v2(ctx, path, flags, &runs);
    *slot = runs;
    *ctx_out = ctx;
    if (st != EC_OK) {
        fail("%s", ec_ctx_errmsg(ctx));
        return NULL;
    }
    return runs;
}

/* ---- validate ----------------------------------------------------------------------- */

typedef struct vrow {
    const char *key; /* GPU or model name of the group */
    double predicted, measured;
    int covered;     /* measured inside the prediction's p10-p90 interval: 1, outside 0, no interval -1 */
    const char *metric; /* ec_metric_name: the plot's panel */
    double p10, p90;    /* the prediction's interval (0 when it has none) */
} vrow;

static int compare_vrow(const void *a, const void *b)
{
    return strcmp(((const vrow *)a)->key, ((const vrow *)b)->key);
}

/* The error statistics of n runs, and the share of them inside their p10-p90 interval
 * (covered[i] 1 inside, 0 outside, -1 no interval). */
static void print_stats(const char *label, const double *p, const double *m, const int *covered, size_t n)
{
    ec_error_stats s;
    ec_error_stats_compute(p, m, n, &s);
    size_t with = 0, inside = 0;
    for (size_t i = 0; i < n; i++) {
        with += covered[i] >= 0;
        inside += covered[i] > 0;
    }
    char cov[16] = "-";
    if (with > 0)
        snprintf(cov, sizeof cov, "%.1f", 100.0 * (double)inside / (double)with);
    printf("  %-24s %6zu %8.1f %9.1f %9.1f %+8.1f %9s", label, s.n, s.mape_frac * 100,
           s.within_10_frac * 100, s.within_20_frac * 100, s.bias_frac * 100, cov);
    /* rows the statistics skip (a prediction or measurement that is not a positive finite
     * number) are said, never silently dropped */
    if (s.n < n)
        printf("  (%zu left out: not a finite positive number)", n - s.n);
    putchar('\n');
}

/* Sort rows by key and print one line per distinct key. */
static void print_groups(lua_State *L, const char *title, vrow *rows, size_t n)
{
    double *p = (double *)lua_newuserdatauv(L, (n + 1) * sizeof *p, 0);
    double *m = (double *)lua_newuserdatauv(L, (n + 1) * sizeof *m, 0);
    int *c = (int *)lua_newuserdatauv(L, (n + 1) * sizeof *c, 0);
    qsort(rows, n, sizeof *rows, compare_vrow);
    printf("by %s\n", title);
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        const char *key = rows[i].key;
        for (; i < n && strcmp(rows[i].key, key) == 0; i++, k++) {
            p[k] = rows[i].predicted;
            m[k] = rows[i].measured;
            c[k] = rows[i].covered;
        }
        print_stats(key, p, m, c, k);
    }
    lua_pop(L, 3);
}

/* Draw predicted against measured, one panel per metric and one colour per GPU, through
 * ec.plot's C function; the out-of-memory outcomes (ooms as cmd_validate counts them, scored
 * apart) are said in the title. */
static int plot_validate(lua_State *L, int ctxbox, const char *path, const vrow *rows, size_t n, const size_t ooms[4])
{
    char note[160] = "";
    if (ooms[0] + ooms[1] + ooms[2] + ooms[3] > 0)
        snprintf(note, sizeof note, "; out of memory (apart, not drawn): %zu caught, %zu missed, %zu false alarms",
                 ooms[3], ooms[2], ooms[1]);
    lua_pushvalue(L, ctxbox);                         /* ctx: the picture is written through it */
    lua_pushcclosure(L, ecL_plot, 1);                 /* f */
    lua_createtable(L, 0, 4);                         /* f spec */
    lua_pushliteral(L, "validate");
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, "gpu");
    lua_setfield(L, -2, "group");
    lua_pushstring(L, note);
    lua_setfield(L, -2, "note");
    lua_createtable(L, n < INT_MAX ? (int)n : 0, 0);  /* f spec rows */
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 6);
        lua_pushstring(L, rows[i].key);
        lua_setfield(L, -2, "gpu");
        lua_pushstring(L, rows[i].metric);
        lua_setfield(L, -2, "metric");
        if (rows[i].p90 > 0) {
            lua_pushnumber(L, rows[i].p10);
            lua_setfield(L, -2, "p10");
            lua_pushnumber(L, rows[i].p90);
            lua_setfield(L, -2, "p90");
        }
        lua_pushnumber(L, rows[i].predicted);
        lua_setfield(L, -2, "predicted");
        lua_pushnumber(L, rows[i].measured);
        lua_setfield(L, -2, "measured");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "rows");                      /* f spec */
    lua_call(L, 1, 2);                                /* ok msg */
    if (!lua_toboolean(L, -2))
        return fail("%s", lua_tostring(L, -1));
    lua_pop(L, 2);
    printf("wrote %s\n", path);
    return 0;
}

/* Growing arrays of a validation, in one box (freed with it): the groups' rows and the
 * predicted and measured values.  Model names live in the interning table beside it. */
typedef struct vdata {
    vrow *by_gpu, *by_model;
    double *pred, *meas;
    int *covered;
    size_t n, cap;
} vdata;

static void vdata_free(void *p)
{
    vdata *v = p;
    free(v->by_gpu);
    free(v->by_model);
    free(v->pred);
    free(v->meas);
    free(v->covered);
    free(v);
}

static int vdata_push(vdata *v, vrow g, vrow m)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        vrow *a = realloc(v->by_gpu, cap * sizeof *a);
        if (a != NULL)
            v->by_gpu = a;
        vrow *b = a != NULL ? realloc(v->by_model, cap * sizeof *b) : NULL;
        if (b != NULL)
            v->by_model = b;
        double *c = b != NULL ? realloc(v->pred, cap * sizeof *c) : NULL;
        if (c != NULL)
            v->pred = c;
        double *d = c != NULL ? realloc(v->meas, cap * sizeof *d) : NULL;
        if (d != NULL)
            v->meas = d;
        int *e = d != NULL ? realloc(v->covered, cap * sizeof *e) : NULL;
        if (e == NULL)
            return -1;
        v->covered = e;
        v->cap = cap;
    }
    v->by_gpu[v->n] = g;
    v->by_model[v->n] = m;
    v->pred[v->n] = g.predicted;
    v->meas[v->n] = g.measured;
    v->covered[v->n] = g.covered;
    v->n++;
    return 0;
}

/* The string s kept alive as a key of the table at idx; its stable pointer. */
static const char *intern(lua_State *L, int idx, const char *s)
{
    /* t[s] = s, and the text returned is the object the table holds as the value: a string over
     * 40 bytes is not interned by Lua, so an equal one pushed later is another object, collected
     * once popped (ASan found the earlier version reading such a one). */
    lua_pushstring(L, s);                 /* s */
    if (lua_rawget(L, idx) == LUA_TNIL) { /* t[s] or nil */
        lua_pop(L, 1);
        lua_pushstring(L, s);             /* s */
        lua_pushvalue(L, -1);             /* s s */
        lua_pushvalue(L, -1);             /* s s s */
        lua_rawset(L, idx);               /* s: t[s] = s */
    }
    const char *p = lua_tostring(L, -1);  /* alive as the table's value */
    lua_pop(L, 1);
    return p;
}

/* validate's per-run CSV (-o FILE): its columns. */
enum { VALIDATE_COLS = 10, NUM_MAX = 32 };
static const char *const validate_header[VALIDATE_COLS] = {"id", "gpu", "model", "metric", "predicted", "p10", "p90",
                                                           "measured", "error_pct", "in_p10_p90"};

/* What validate keeps while the runs stream by. */
typedef struct vstate {
    lua_State *L;
    ec_ctx *ctx;
    const char *runs_path, *profile;
    vdata *v;         /* the groups' rows */
    int names;        /* stack index of the model names' interning table */
    ec_csv_writer *w; /* -o FILE's writer, or NULL */
    int wbox;         /* stack index of its box */
    size_t ooms[4];   /* metric oom rows by (measured died) x 2 + (predicted not to fit) */
} vstate;

/* Abort -o FILE (nothing half-written is left): before a failure. */
static void validate_abort(vstate *vs)
{
    ec_csv_abort((ec_csv_writer *)ecL_unbox(vs->L, vs->wbox));
}

/* -o FILE's row of run r: g its row in the GPU group (prediction, interval, coverage), model
 * its model, oom whether its metric is the outcome (no error_pct). */
static int validate_csv_row(vstate *vs, const ec_run *r, const vrow *g, const char *model, int oom)
{
    char p[NUM_MAX], mv[NUM_MAX], e[NUM_MAX], p10[NUM_MAX] = "", p90[NUM_MAX] = "", in[4] = "";
    ec_format_number(g->predicted, p, sizeof p);
    ec_format_number(g->measured, mv, sizeof mv);
    if (oom)
        e[0] = '\0';
    else
        ec_format_number((g->predicted - g->measured) / g->measured * 100, e, sizeof e);
    if (g->covered >= 0) {
        ec_format_number(g->p10, p10, sizeof p10);
        ec_format_number(g->p90, p90, sizeof p90);
        snprintf(in, sizeof in, "%d", g->covered);
    }
    const char *fields[VALIDATE_COLS] = {r->id, g->key, model, g->metric, p, p10, p90, mv, e, in};
    return ec_csv_row(vs->w, fields, VALIDATE_COLS);
}

/* Predict run r (read_frac: the share of the file read, for the progress), add it to its GPU's
 * and model's groups or count its oom outcome, and write its -o row.  0, or the exit status
 * after a failure (said, -o aborted). */
static int validate_run(vstate *vs, const ec_run *r, double read_frac)
{
    lua_State *L = vs->L;
    ec_ctx *ctx = vs->ctx;
    ec_config cfg = r->config;
    ec_result res;
    int st = ec_ctx_progress(ctx, "validate", read_frac, 1);
    if (st == EC_OK && vs->profile != NULL)
        st = ec_config_set(ctx, &cfg, "profile", vs->profile);
    if (st == EC_OK)
        st = ec_predict(ctx, &cfg, &res);
    if (st != EC_OK) {
        validate_abort(vs);
        return st == EC_ECANCELED ? fail("%s", ec_ctx_errmsg(ctx))
                                  : fail("%s:%zu: %s", vs->runs_path, r->line, ec_ctx_errmsg(ctx));
    }
    /* Group GPUs by profile id, whatever alias the file used. */
    const char *gpu = NULL;
    size_t gi;
    ec_gpu_info info;
    if (ec_gpu_find(ctx, r->config.gpu, &gi) == EC_OK && ec_gpu_get(ctx, gi, &info) == EC_OK)
        gpu = info.id; /* owned by the context */
    else
        gpu = intern(L, vs->names, r->config.gpu);
    const char *model = intern(L, vs->names, r->config.model);
    double pred = ec_result_metric(&res, r->metric), meas = r->value;
    double lo, hi; /* the prediction's p10-p90 interval in the run's metric */
    ec_result_metric_interval(&res, r->metric, &lo, &hi);
    int covered = hi > 0 ? (meas >= lo && meas <= hi) : -1;
    vrow g = {gpu, pred, meas, covered, ec_metric_name(r->metric), lo, hi}, m = g;
    m.key = model;
    int oom = r->metric == EC_METRIC_OOM; /* an outcome, scored as caught or missed, never in the MAPE */
    if (oom)
        vs->ooms[(meas > 0.5) * 2 + (pred > 0.5)]++;
    else if (vdata_push(vs->v, g, m) != 0) {
        validate_abort(vs);
        return fail("out of memory");
    }
    if (vs->w != NULL && validate_csv_row(vs, r, &g, model, oom) != EC_OK) {
        validate_abort(vs);
        return fail("%s", ec_ctx_errmsg(ctx));
    }
    return 0;
}

/* validate's report: every run, then by GPU and by model, the oom outcomes on a line apart. */
static void print_validate_report(lua_State *L, const vstate *vs)
{
    const vdata *v = vs->v;
    const size_t *ooms = vs->ooms;
    size_t n = v->n;
    size_t n_oom = ooms[0] + ooms[1] + ooms[2] + ooms[3];
    printf("%s: %zu runs%s%s%s\n", vs->runs_path, n + n_oom, vs->profile != NULL ? ", profile " : "",
           vs->profile != NULL ? vs->profile : "", n_oom > 0 ? " (out-of-memory outcomes apart)" : "");
    printf("  %-24s %6s %8s %9s %9s %8s %9s\n", "", "n", "MAPE_%", "within10%", "within20%", "bias_%", "p10-p90%");
    print_stats("all", v->pred, v->meas, v->covered, n);
    print_groups(L, "GPU", v->by_gpu, n);
    print_groups(L, "model", v->by_model, n);
    if (n_oom > 0)
        printf("  out of memory (metric oom, not in the MAPE): %zu died, %zu predicted not to fit (caught), %zu "
               "predicted to fit (missed); %zu ran, %zu predicted not to fit (false alarm)\n",
               ooms[2] + ooms[3], ooms[3], ooms[2], ooms[0] + ooms[1], ooms[1]);
}

static int cmd_validate(lua_State *L, int argc, char **argv)
{
    runs_args ra;
    int code = parse_runs_args("validate", validate_usage, OPT_PROFILE | OPT_PLOT, argc, argv, &ra);
    if (code >= 0)
        return code;
    const char *runs_path = ra.runs_path, *out = ra.out, *profile = ra.profile;
    ec_ctx *ctx = ecL_pushctx(L, ecL_models_dir(L));
    int ctxbox = lua_gettop(L);
    /* The runs stream through a reader: memory for a block of rows, whatever the file's size. */
    void **rslot = ecL_newbox(L, ecL_close_runs_reader);
    int rbox = lua_gettop(L);
    ec_runs_reader *rd = NULL;
    int st = ec_runs_open(ctx, runs_path, ra.flags, &rd);
    *rslot = rd;
    if (st != EC_OK)
        return fail("%s", ec_ctx_errmsg(ctx));
    void **vslot = ecL_newbox(L, vdata_free);
    vdata *v = calloc(1, sizeof *v);
    if (v == NULL)
        return fail("out of memory");
    *vslot = v;
    lua_newtable(L);                                  /* model names */
    vstate vs = {L, ctx, runs_path, profile, v, lua_gettop(L), NULL, 0, {0, 0, 0, 0}};
    void **wslot = ecL_newbox(L, ecL_abort_csv);             /* ... writer */
    vs.wbox = lua_gettop(L);
    if (out != NULL) {
        st = ec_csv_open(ctx, out, &vs.w);
        *wslot = vs.w;
        if (st == EC_OK)
            st = ec_csv_row(vs.w, validate_header, VALIDATE_COLS);
        if (st != EC_OK)
            return fail("%s", ec_ctx_errmsg(ctx));
    }
    for (;;) {
        const ec_run *r = NULL;
        if ((st = ec_runs_next(rd, &r)) != EC_OK) {
            validate_abort(&vs);
            return fail("%s", ec_ctx_errmsg(ctx));
        }
        if (r == NULL)
            break;
        if ((code = validate_run(&vs, r, ec_runs_read_frac(rd))) != 0)
            return code;
    }
    draw_bar(NULL, 0, 1);
    ec_runs_close((ec_runs_reader *)ecL_unbox(L, rbox));
    if (vs.w != NULL && ec_csv_close((ec_csv_writer *)ecL_unbox(L, vs.wbox)) != EC_OK)
        return fail("%s", ec_ctx_errmsg(ctx));
    print_validate_report(L, &vs);
    return ra.plot != NULL ? plot_validate(L, ctxbox, ra.plot, v->by_gpu, v->n, vs.ooms) : 0;
}

/* ---- calibrate ---------------------------------------------------------------------- */

static const char calibrate_usage[] =
    "usage: epochcast calibrate RUNS.csv -o PROFILE.csv [--all] [--allow-paths]\n"
    "\n"
    "Fit the model's physical parameters (GEMM and bandwidth efficiency scales, globally and\n"
    "per GPU architecture, convolution and fused-attention efficiency, host dispatch time,\n"
    "the collective efficiency between nodes)\n"
    "to measured runs with nonlinear least squares on log(predicted/measured); measure the\n"
    "held-out error by leave-one-GPU-out (when the runs cover two GPUs or more); write both\n"
    "as a profile CSV that predict, validate and scenarios use with profile=PROFILE.csv\n"
    "or --profile PROFILE.csv.\n"
    "\n"
    "  -o FILE   where to write the profile (written atomically; never over RUNS.csv)\n"
    "  --all     fit on every run; by default only single-GPU runs are used, since\n"
    "            multi-GPU runs also depend on the communication model\n"
    "  --allow-paths  let lengths=/profile= cells name files outside RUNS.csv's folder\n"
    "A progress bar shows on a terminal; Ctrl-C stops cleanly (exit 130).\n";

static int cmd_calibrate(lua_State *L, int argc, char **argv)
{
    runs_args ra;
    int code = parse_runs_args("calibrate", calibrate_usage, OPT_ALL, argc, argv, &ra);
    if (code >= 0)
        return code;
    if (ra.out == NULL)
        return usage_error("calibrate", "calibrate: missing -o PROFILE.csv");
    const char *runs_path = ra.runs_path, *out = ra.out;
    int all = ra.all;
    ec_ctx *ctx;
    ec_runs *runs = load_runs(L, runs_path, ra.flags, &ctx);
    if (runs == NULL)
        return EXIT_FAILURE;
    size_t n = ec_runs_count(runs);
    unsigned char *use = (unsigned char *)lua_newuserdatauv(L, n + 1, 0);
    for (size_t i = 0; i < n; i++)
        use[i] = all || ec_runs_get(runs, i)->config.num_gpus == 1;
    ec_fit_report rep;
    if (ec_calibrate(ctx, runs, use, &rep) != EC_OK)
        return fail("%s", ec_ctx_errmsg(ctx));
    /* The held-out error that widens intervals: leave-one-GPU-out on the same runs. */
    int cv = ec_calibrate_cv(ctx, runs, use, &rep);
    if (cv != EC_OK && cv != EC_EINVAL)
        return fail("%s", ec_ctx_errmsg(ctx));
    char cv_why[512];
    snprintf(cv_why, sizeof cv_why, "%s", cv == EC_OK ? "" : ec_ctx_errmsg(ctx));
    /* ...and on an architecture left out, for GPUs of architectures the fit has no runs of */
    int cva = ec_calibrate_cv_arch(ctx, runs, use, &rep);
    if (cva != EC_OK && cva != EC_EINVAL)
        return fail("%s", ec_ctx_errmsg(ctx));
    draw_bar(NULL, 0, 1);
    if (ec_profile_write(ctx, &rep, out) != EC_OK)
        return fail("%s", ec_ctx_errmsg(ctx));
    printf("%s: fitted %zu runs in %zu iterations; MAPE %.1f%% before, %.1f%% after (in-sample)\n",
           runs_path, rep.n_runs, rep.iterations, 100 * rep.mape_before_frac, 100 * rep.mape_after_frac);
    if (cv == EC_OK)
        printf("leave-one-GPU-out: MAPE %.1f%% on %zu held-out runs; rms log error %.3f (error_log_sd)\n",
               100 * rep.cv_mape_frac, rep.cv_runs, rep.error_log_sd);
    else
        printf("leave-one-GPU-out: not run (%s); the profile has no error_log_sd\n", cv_why);
    if (cva == EC_OK)
        printf("leave-one-architecture-out: MAPE %.1f%% on %zu held-out runs; rms log error %.3f "
               "(error_log_sd_unseen_arch)\n", 100 * rep.arch_cv_mape_frac, rep.arch_cv_runs, rep.arch_error_log_sd);
    if (rep.n_left_out > 0)
        printf("%zu runs left out of these figures: their prediction is not a finite positive number\n",
               rep.n_left_out);
    printf("  %-16s %-14s %10s %10s\n", "parameter", "architecture", "value", "std.error");
    for (size_t j = 0; j < rep.n_params; j++)
        printf("  %-16s %-14s %10.4g %10.2g\n", rep.names[j], rep.architectures[j][0] ? rep.architectures[j] : "(all)",
               rep.values[j], rep.stderrs[j]);
    printf("wrote %s; use it with profile=%s\n", out, out);
    return 0;
}

/* ---- run ---------------------------------------------------------------------------- */

/* Keep a profile path for every context the module creates (ecL_pushctx). */
static void set_profile(lua_State *L, const char *path)
{
    lua_pushstring(L, path);
    lua_setfield(L, LUA_REGISTRYINDEX, ECL_PROFILE_KEY);
}

/* A scenario's budget: wall time, checked by a count hook every HOOK_INSTRUCTIONS VM
 * instructions and enforced by a timer (on_alarm) that a script cannot switch off; bytes of
 * the Lua heap (an allocator wrapped around Lua's own) and of the library's contexts
 * (ctx_alloc) against one limit. */
#define HOOK_INSTRUCTIONS 100000

/* Take the bytes a block grows by (old to nsize) from the budget: 0 when that would pass
 * the limit.  Lock-free (one atomic add, undone when over), so worker threads share it; two
 * threads near the limit may both be refused, never both let through. */
static int budget_take(size_t old, size_t nsize)
{
    if (nsize <= old)
        return 1;
    size_t more = nsize - old;
    size_t before = atomic_fetch_add_explicit(&budget_bytes, more, memory_order_relaxed);
    size_t max = atomic_load_explicit(&budget_max_bytes, memory_order_relaxed);
    if (max > 0 && (before + more > max || before + more < before)) {
        atomic_fetch_sub_explicit(&budget_bytes, more, memory_order_relaxed);
        atomic_fetch_add_explicit(&budget_refused, 1, memory_order_relaxed);
        return 0;
    }
    return 1;
}

static void budget_give(size_t n)
{
    atomic_fetch_sub_explicit(&budget_bytes, n, memory_order_relaxed);
}

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    size_t old = ptr != NULL ? osize : 0; /* with ptr NULL, osize is a type tag */
    if (!budget_take(old, nsize))
        return NULL; /* Lua collects garbage and retries, then raises LUA_ERRMEM */
    void *q = limits.base(limits.base_ud, ptr, osize, nsize);
    if (q == NULL && nsize > 0) {
        if (nsize > old)
            budget_give(nsize - old);
        return NULL;
    }
    if (nsize < old)
        budget_give(old - nsize);
    return q;
}

/* The library passes osize 0 when it does not know a block's size: a header keeps it. */
typedef union ctx_head {
    size_t size;
    max_align_t align;
} ctx_head;

/* Every context's allocator, the worker threads' too (the host declares it thread-safe:
 * ec_ctx_set_alloc_threadsafe), so --max-memory-mb covers them. */
static void *ctx_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    ctx_head *h = ptr != NULL ? (ctx_head *)ptr - 1 : NULL;
    size_t old = h != NULL ? h->size : 0;
    if (nsize == 0) {
        free(h);
        budget_give(old);
        return NULL;
    }
    if (nsize > (size_t)-1 - sizeof *h || !budget_take(old, nsize))
        return NULL; /* the library reports EC_ENOMEM */
    ctx_head *nh = realloc(h, sizeof *nh + nsize);
    if (nh == NULL) {
        if (nsize > old)
            budget_give(nsize - old);
        return NULL;
    }
    nh->size = nsize;
    if (nsize < old)
        budget_give(old - nsize);
    return nh + 1;
}

/* The script has returned: from now on its finalizers run, with hooks off.  A signal that
 * came while it ran gets the grace to let them finish; stdout is flushed first, since the
 * process may end from a signal handler (_exit). */
static int refused_at_close; /* budget_refused when the state began to close */

static void enter_closing(void)
{
    fflush(stdout);
    phase = PHASE_CLOSING;
    if (interrupted && !grace_started)
        start_grace();
}

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (interrupted || budget_over || (limits.max_seconds > 0 && monotonic_s() > limits.deadline_s)) {
        budget_over = budget_over || !interrupted;
        arm_stop_hook(); /* from now on every instruction raises */
        stop_hook(L, ar);
    }
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

/* debug.sethook under a time budget; upvalue 1 is the real one.  A script keeps its own
 * hooks until the budget runs out; from then on the call raises the budget's error, and so
 * does one the signal came during (the real sethook would have cleared the stop hook it
 * had just installed). */
static int budget_sethook(lua_State *L)
{
    if (budget_over)
        return luaL_error(L, "scenario exceeded its time budget of %f s (--max-seconds)", limits.max_seconds);
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, 0);
    if (budget_over)
        return luaL_error(L, "scenario exceeded its time budget of %f s (--max-seconds)", limits.max_seconds);
    return 0;
}

/* load(chunk [, name [, mode [, env]]]) of the sandbox: text chunks only (a crafted binary
 * chunk can crash the VM); upvalue 1 is the real load. */
static int sandbox_load(lua_State *L)
{
    int n = lua_gettop(L) >= 4 ? 4 : 3; /* an env given, even nil, is passed on; none is not */
    lua_settop(L, n);
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
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
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, LUA_MULTRET);
    return lua_gettop(L);
}

/* io.lines(name, ...) and io.input(name) of the sandbox: a file named is read only below the
 * scenario's folder, as with io.open; upvalue 1 is the real function. */
static int sandbox_named_read(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TSTRING)
        ecL_check_input(L, ecL_checkpath(L, 1));
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
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
static int open_run_libs(lua_State *L, const char *script, int sandbox)
{
    int writable;
    const char *why = untrusted_why(script, &writable);
    if (why != NULL && writable && sandbox == 0) {
        fail("run: '%s': %s, so --no-sandbox cannot trust it (chmod go-w '%s' first)", script, why, script);
        return -1;
    }
    if (why != NULL && sandbox < 0) {
        sandbox = 1;
        lua_pushfstring(L, "note: scenario '%s': %s: running it in the sandbox%s", script, why,
                        writable ? "" : " (--no-sandbox to trust it)");
        l_message(progname, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    if (sandbox <= 0) {
        luaL_openlibs(L);
        return 0;
    }
    char *root = sandbox_read_root(script);
    if (root == NULL) {
        fail("run: cannot resolve the folder of scenario '%s' for the sandbox", script);
        return -1;
    }
    lua_pushstring(L, root);
    free(root);
    open_sandbox_libs(L, lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
}

/* The time budget: debug.sethook wrapped, the count hook, and the timer (on_alarm). */
static void arm_time_budget(lua_State *L, double max_seconds)
{
    if (lua_getglobal(L, "debug") == LUA_TTABLE) { /* absent in the sandbox */
        lua_getfield(L, -1, "sethook");
        lua_pushcclosure(L, budget_sethook, 1);
        lua_setfield(L, -2, "sethook");
    }
    lua_pop(L, 1);
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
    double whole = floor(max_seconds);
    struct itimerval t = {{0, 0}, {(time_t)whole, (suseconds_t)((max_seconds - whole) * 1e6)}};
    if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0)
        t.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &t, NULL);
}

/* A scenario that failed after the memory budget refused an allocation: its message (on top)
 * says so, naming the limit.  The limit is lifted to make room for the message. */
static void say_budget(lua_State *L, int status, size_t max_bytes)
{
    atomic_store(&budget_max_bytes, 0);
    const char *msg = lua_tostring(L, -1);
    int mib = (int)(max_bytes / 1048576u);
    if (status == LUA_ERRMEM || msg == NULL)
        lua_pushfstring(L, "scenario ran out of memory: its Lua heap and the library's allocations exceeded "
                        "the limit of %d MiB (--max-memory-mb)", mib);
    else
        lua_pushfstring(L, "%s\n(the scenario's Lua heap and the library's allocations, worker threads "
                        "included, reached the limit of %d MiB, --max-memory-mb)", msg, mib);
    lua_remove(L, -2);
}

static int cmd_run(lua_State *L, int argc, char **argv, int script)
{
    const char *secs = NULL, *mib = NULL;
    int sandbox = -1;
    for (; script < argc; script++) {
        const char *a = argv[script], *v = NULL;
        int m;
        if (is_help(a)) {
            return fputs(run_usage, stdout), 0;
        } else if ((m = opt_value(argc, argv, &script, "--profile", NULL, &v)) != 0) {
            if (m < 0 || v[0] == '\0')
                return usage_error("run", "run: --profile needs a file name");
            set_profile(L, v);
        } else if ((m = opt_value(argc, argv, &script, "--max-seconds", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error("run", "run: --max-seconds needs a number");
            secs = v;
        } else if ((m = opt_value(argc, argv, &script, "--max-memory-mb", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error("run", "run: --max-memory-mb needs a number");
            mib = v;
        } else if (strcmp(a, "--sandbox") == 0) {
            sandbox = 1;
        } else if (strcmp(a, "--no-sandbox") == 0) {
            sandbox = 0;
        } else if (strcmp(a, "--") == 0) {
            script++;
            break;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("run", "run: unknown option '%s'", a);
        } else {
            break;
        }
    }
    if (script >= argc)
        return usage_error("run", "run: missing SCRIPT.lua");
    double max_seconds = limit_arg(secs, "EPOCHCAST_MAX_SECONDS", 3600, 1e-3);
    double max_mib = limit_arg(mib, "EPOCHCAST_MAX_MEMORY_MB", 8192, 1);
    if (max_seconds < 0 || max_mib < 0)
        return usage_error("run", "run: --max-seconds takes 0 (none) or 0.001 to 1e9 seconds, --max-memory-mb "
                           "0 (none) or 1 to 1e9 MiB");
    if ((sandbox = open_run_libs(L, argv[script], sandbox)) < 0)
        return EXIT_FAILURE;
    /* The module first: an error opening it (a bad --profile) unwinds past this frame,
     * which must not have installed its allocator yet. */
    luaL_requiref(L, "epochcast", luaopen_epochcast, 1);
    lua_pop(L, 1);
    createargtable(L, argv, argc, script);
    lua_gc(L, LUA_GCGEN, 0, 0);

    limits.max_seconds = max_seconds;
    limits.deadline_s = monotonic_s() + max_seconds;
    limits.base = lua_getallocf(L, &limits.base_ud);
    /* From here the Lua heap counts too (its blocks so far are freed through limited_alloc). */
    atomic_fetch_add(&budget_bytes, (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024u + (size_t)lua_gc(L, LUA_GCCOUNTB, 0));
    size_t max_bytes = (size_t)(max_mib * 1048576.0);
    atomic_store(&budget_max_bytes, max_bytes);
    lua_setallocf(L, limited_alloc, NULL);
    if (max_seconds > 0)
        arm_time_budget(L, max_seconds);
    script_L = L;
    phase = PHASE_SCRIPT;
    if (interrupted) /* a signal before the scenario began: it stops at its first instruction */
        arm_stop_hook();
    const char *fname = strcmp(argv[script], "-") == 0 ? NULL : argv[script]; /* "-": stdin */
    int status = luaL_loadfilex(L, fname, sandbox > 0 ? "t" : NULL);
    if (status == LUA_OK) {
        int n = pushargs(L);
        status = docall(L, n, 0);
    }
    script_L = NULL;
    lua_sethook(L, NULL, 0, 0);
    enter_closing();
    if (status != LUA_OK && max_bytes > 0 && atomic_load(&budget_refused) > 0)
        say_budget(L, status, max_bytes);
    status = report(L, status);
    /* The limit holds while the state closes: its finalizers run under it (and the timer). */
    atomic_store(&budget_max_bytes, max_bytes);
    refused_at_close = atomic_load(&budget_refused);
    if (interrupted)
        return interrupt_status();
    return status == LUA_OK ? 0 : EXIT_FAILURE;
}

/* ---- main --------------------------------------------------------------------------- */

/* Close the state.  A scenario's finalizers (__gc) run here, under its budgets: its memory
 * limit still holds and its timer still runs (on_alarm, on_signal end the process at once
 * in PHASE_CLOSING).  0, or 1 when a finalizer was refused memory (said on stderr). */
static int close_state(lua_State *L)
{
    int was_scenario = phase == PHASE_CLOSING;
    lua_close(L);
    if (!was_scenario)
        return 0;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    phase = PHASE_NONE;
    if (atomic_load(&budget_refused) > refused_at_close) {
        l_message(progname, "a finalizer (__gc) of the scenario ran out of memory (--max-memory-mb); stopped");
        return 1;
    }
    return 0;
}

static int pmain(lua_State *L)
{
    int argc = (int)lua_tointeger(L, 1);
    char **argv = (char **)lua_touserdata(L, 2);
    int code = 0;
    int i = 1;
    luaL_checkversion(L);
    /* Every context the module creates, and every worker thread's, allocates through the budget;
     * the module's contexts report progress. */
    static const ecL_host host = {ctx_alloc, NULL, cli_progress, NULL, 1};
    lua_pushlightuserdata(L, (void *)(uintptr_t)&host);
    lua_setfield(L, LUA_REGISTRYINDEX, ECL_HOST_KEY);
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(main_usage, stdout);
            lua_pushinteger(L, 0);
            return 1;
        } else if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
            char dir[EC_PATH_MAX];
            const char *models = ecL_models_dir(L); /* --models given before, or $EPOCHCAST_MODELS */
            if (models == NULL && ec_default_models_dir(dir, sizeof dir) == EC_OK)
                models = dir;
            printf("epochcast %s (%s)\n", EC_VERSION, LUA_RELEASE);
            if (models != NULL)
                printf("models: %s\n", models);
            lua_pushinteger(L, 0);
            return 1;
        } else if (strcmp(a, "--models") == 0 || strncmp(a, "--models=", 9) == 0) {
            const char *dir = a[8] == '=' ? a + 9 : (++i < argc ? argv[i] : NULL);
            if (dir == NULL || dir[0] == '\0') {
                lua_pushinteger(L, usage_error(NULL, "--models needs a folder"));
                return 1;
            }
            lua_pushstring(L, dir);
            lua_setfield(L, LUA_REGISTRYINDEX, ECL_MODELS_DIR_KEY);
        } else if (strcmp(a, "--profile") == 0 || strncmp(a, "--profile=", 10) == 0) {
            const char *path = a[9] == '=' ? a + 10 : (++i < argc ? argv[i] : NULL);
            if (path == NULL || path[0] == '\0') {
                lua_pushinteger(L, usage_error(NULL, "--profile needs a file name"));
                return 1;
            }
            set_profile(L, path);
        } else {
            lua_pushinteger(L, usage_error(NULL, "unknown option '%s'", a));
            return 1;
        }
    }
    if (i >= argc) {
        code = usage_error(NULL, "missing command");
    } else {
        const char *cmd = argv[i];
        int rest = argc - i - 1;
        char **args = argv + i + 1;
        if (strcmp(cmd, "gpus") == 0)
            code = cmd_gpus(L, rest, args);
        else if (strcmp(cmd, "models") == 0)
            code = cmd_models(L, rest, args);
        else if (strcmp(cmd, "networks") == 0)
            code = cmd_networks(L, rest, args);
        else if (strcmp(cmd, "model-info") == 0)
            code = ecL_cli_model_info(L, rest, args);
        else if (strcmp(cmd, "predict") == 0)
            code = cmd_predict(L, rest, args);
        else if (strcmp(cmd, "sweep") == 0)
            code = cmd_sweep(L, rest, args);
        else if (strcmp(cmd, "validate") == 0)
            code = cmd_validate(L, rest, args);
        else if (strcmp(cmd, "calibrate") == 0)
            code = cmd_calibrate(L, rest, args);
        else if (strcmp(cmd, "plan") == 0)
            code = ecC_cmd_plan(L, rest, args);
        else if (strcmp(cmd, "compare") == 0)
            code = ecC_cmd_compare(L, rest, args);
        else if (strcmp(cmd, "max-batch") == 0)
            code = ecC_cmd_max_batch(L, rest, args);
        else if (strcmp(cmd, "optimize") == 0)
            code = ecC_cmd_optimize(L, rest, args);
        else if (strcmp(cmd, "run") == 0)
            code = cmd_run(L, argc, argv, i + 1);
        else
            code = usage_error(NULL, "unknown command '%s'", cmd);
    }
    fflush(stdout);
    if (ferror(stdout) && code == 0)
        code = fail("error writing to standard output");
    if (interrupted) /* stopped by SIGINT or SIGTERM: the shell's status for it */
        code = interrupt_status();
    lua_pushinteger(L, code);
    return 1;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    install_signals();
    ecC_mpi_init(&argc, &argv); /* under mpirun: join MPI (cli_mpi.c) */
    lua_State *L = luaL_newstate();
    if (L == NULL) {
        l_message(argv[0], "cannot create state: not enough memory");
        return ecC_mpi_finalize(EXIT_FAILURE);
    }
    lua_pushcfunction(L, pmain);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    int status = lua_pcall(L, 2, 1, 0);
    int code = status == LUA_OK ? (int)lua_tointeger(L, -1) : EXIT_FAILURE;
    report(L, status);
    fflush(stdout); /* what the scenario printed, before a finalizer can end the process */
    if (close_state(L) != 0 && code == 0)
        code = EXIT_FAILURE;
    return ecC_mpi_finalize(interrupted ? interrupt_status() : code);
}
