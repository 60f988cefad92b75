/*
 * cli_host.c: what the library leaves to its host (issue 20), the CLI process's own state.
 * SIGINT and SIGTERM set a flag that the contexts' progress callback turns into a cancellation
 * (the library then removes any temporary file) and, in a scenario, into an error raised by a
 * hook; a scenario's time budget is a timer whose signal installs that hook (a script cannot
 * remove it or catch its error for long) and ends the process if a C call does not return; its
 * memory budget counts the Lua heap and the library's allocations alike (every context
 * allocates through ctx_alloc: ecC_host_register).  Long validations and calibrations draw a
 * progress bar on a terminal.  This state is the process's, so it lives in this file's statics,
 * never in the library; epochcast.c installs it, cli_run.c (--max-seconds, --max-memory-mb)
 * starts and ends a scenario's budgets.
 */
#define _XOPEN_SOURCE 700 /* clock_gettime, sigaction, setitimer, isatty */

#include "cli.h"

#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

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

void ecC_install_signals(void)
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

void ecC_clear_bar(void)
{
    draw_bar(NULL, 0, 1);
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

int ecC_interrupt_status(void)
{
    return interrupted ? 128 + (int)interrupted : 0;
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

void ecC_host_register(lua_State *L)
{
    /* Every context the module creates, and every worker thread's, allocates through the budget;
     * the module's contexts report progress. */
    static const ecL_host host = {ctx_alloc, NULL, cli_progress, NULL, 1};
    lua_pushlightuserdata(L, (void *)(uintptr_t)&host);
    lua_setfield(L, LUA_REGISTRYINDEX, ECL_HOST_KEY);
}

void ecC_budget_begin(lua_State *L, double max_seconds, size_t max_bytes)
{
    limits.max_seconds = max_seconds;
    limits.deadline_s = monotonic_s() + max_seconds;
    limits.base = lua_getallocf(L, &limits.base_ud);
    /* From here the Lua heap counts too (its blocks so far are freed through limited_alloc). */
    atomic_fetch_add(&budget_bytes, (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024u + (size_t)lua_gc(L, LUA_GCCOUNTB, 0));
    atomic_store(&budget_max_bytes, max_bytes);
    lua_setallocf(L, limited_alloc, NULL);
    if (max_seconds > 0)
        arm_time_budget(L, max_seconds);
    script_L = L;
    phase = PHASE_SCRIPT;
    if (interrupted) /* a signal before the scenario began: it stops at its first instruction */
        arm_stop_hook();
}

int ecC_budget_end(lua_State *L, int status, size_t max_bytes)
{
    script_L = NULL;
    lua_sethook(L, NULL, 0, 0);
    /* The script's error first, then the closing phase: the budget's timer may fire just after
     * the count hook stopped the script, and an alarm in the closing phase ends the process at
     * once (a finalizer may loop), which before this order could come before the error was
     * written (1 of 40 plain loops under ASan on a loaded machine ended with the finalizers'
     * message).  Until the phase changes, that alarm only starts the grace. */
    fflush(stdout);
    if (status != LUA_OK && max_bytes > 0 && atomic_load(&budget_refused) > 0)
        say_budget(L, status, max_bytes);
    status = ecC_report(L, status);
    enter_closing();
    /* The limit holds while the state closes: its finalizers run under it (and the timer). */
    atomic_store(&budget_max_bytes, max_bytes);
    refused_at_close = atomic_load(&budget_refused);
    if (interrupted)
        return ecC_interrupt_status();
    return status == LUA_OK ? 0 : EXIT_FAILURE;
}

/* Close the state.  A scenario's finalizers (__gc) run here, under its budgets: its memory
 * limit still holds and its timer still runs (on_alarm, on_signal end the process at once
 * in PHASE_CLOSING).  0, or 1 when a finalizer was refused memory (said on stderr). */
int ecC_close_state(lua_State *L)
{
    int was_scenario = phase == PHASE_CLOSING;
    lua_close(L);
    if (!was_scenario)
        return 0;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    phase = PHASE_NONE;
    if (atomic_load(&budget_refused) > refused_at_close) {
        ecC_message("epochcast", "a finalizer (__gc) of the scenario ran out of memory (--max-memory-mb); stopped");
        return 1;
    }
    return 0;
}
