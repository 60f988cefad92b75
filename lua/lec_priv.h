/*
 * lec_priv.h: helpers shared by the Lua binding files and the CLI host (not installed).
 *
 * Each helper is defined once, in the file that owns its concern: lepochcast.c owns the
 * context box, owned-pointer boxes, the status-to-Lua conversion and the config-table
 * reader; l_result.c owns the result table and the result columns of every CSV we write;
 * l_runs.c owns metric names.  The binding files export one ecL_open_<x> each.
 */
#ifndef LEC_PRIV_H
#define LEC_PRIV_H

#include <stddef.h>

#include <lauxlib.h>
#include <lua.h>

#include "epochcast.h"

#if LUA_VERSION_NUM != 504
#error "epochcast's Lua binding needs Lua 5.4"
#endif

/* The module opener (lepochcast.c), for hosts that link the binding in statically. */
LUAMOD_API int luaopen_epochcast(lua_State *L);

/* Registry field a host may set to a models/ folder before opening the module; it wins
 * over the EPOCHCAST_MODELS environment variable and ec_default_models_dir(). */
#define ECL_MODELS_DIR_KEY "epochcast.models_dir"
/* Registry field a host may set to a profile CSV (`epochcast --profile P`, `run --profile P`)
 * before opening the module: every context it creates uses that fit (a config's profile=
 * still wins for its prediction). */
#define ECL_PROFILE_KEY "epochcast.profile"

/* Registry field a host may set (a light userdata pointing to an ecL_host that outlives the
 * state) before opening the module: every context ecL_pushctx creates then allocates through
 * its allocator (so a host's memory budget covers the library's allocations too) and reports
 * long operations to its progress callback (time budgets, interrupts, progress bars). */
#define ECL_HOST_KEY "epochcast.host"
typedef struct ecL_host {
    ec_alloc_fn alloc;      /* NULL: realloc/free */
    void *alloc_ud;
    ec_progress_fn progress; /* NULL: none */
    void *progress_ud;
    int alloc_threadsafe;    /* 1: alloc may be called from several threads at once, so the
                                worker threads of sweeps and searches allocate through it too
                                (ec_ctx_set_alloc_threadsafe) */
} ecL_host;
/* Registry field set to true by a host running an untrusted scenario (epochcast run
 * --sandbox): the module then writes files only below the current folder. */
#define ECL_SANDBOX_KEY "epochcast.sandbox"
/* Registry field a sandboxing host sets to the folder (links resolved) below which the
 * scenario may read files: the module's readers (ec.load_runs, config.json, lengths=,
 * profile= and prices= paths) check it through ecL_check_input, as the host's io.open does. */
#define ECL_SANDBOX_READ_KEY "epochcast.sandbox_read"

/* ---- lepochcast.c ------------------------------------------------------------------ */

/* The string argument at idx as a path or key: raises when it holds a NUL byte, which C
 * would silently cut there. */
const char *ecL_checkpath(lua_State *L, int idx);
/* An output path the module is about to write: in a sandbox (ECL_SANDBOX_KEY) it must be
 * relative, without "..", and its folder (links resolved) inside the current one; raises
 * otherwise. */
void ecL_check_output(lua_State *L, const char *path);
/* A file the module (or the host's io.open) is about to read: in a sandbox with a read folder
 * (ECL_SANDBOX_READ_KEY) it must lie below that folder, links resolved; raises otherwise.  A
 * path that does not exist passes (its reader says so). */
void ecL_check_input(lua_State *L, const char *path);

/* Push a box owning a pointer: __gc (and __close) call fn(p) once when p is not NULL.
 * Returns the slot, NULL at first; store the pointer right after creating the object,
 * with no Lua call in between, so a later error cannot leak it. */
void **ecL_newbox(lua_State *L, void (*fn)(void *));
/* Take ownership of the pointer in the box at idx back from Lua (the box becomes empty). */
void *ecL_unbox(lua_State *L, int idx);
/* Free functions of the core types, for ecL_newbox. */
void ecL_free_ctx(void *p);
void ecL_free_runs(void *p);
void ecL_close_runs_reader(void *p);
void ecL_abort_csv(void *p);
void ecL_free_plan(void *p);

/* The models/ folder to load: the registry field above, else $EPOCHCAST_MODELS when not
 * empty, else NULL (the library's default folder). */
const char *ecL_models_dir(lua_State *L);
/* Push a box holding a new context with the models of dir loaded; raises a Lua error with
 * the library's message when that fails. */
ec_ctx *ecL_pushctx(lua_State *L, const char *dir);
/* The context of the running binding function (upvalue 1). */
ec_ctx *ecL_ctx(lua_State *L);

/* "EINVAL" for EC_EINVAL and so on ("EUNKNOWN" outside the enum). */
const char *ecL_status_name(int status);
/* An expected failure, luv style: push nil, "ENAME: message", "ENAME" and return 3.
 * EC_EMISUSE is a programming error and raises instead. */
int ecL_fail(lua_State *L, ec_ctx *ctx, int status);

/* Read the config table at idx into cfg (initialised here).  Keys must be strings and
 * values numbers, booleans or strings; an unknown key or a bad value raises the
 * library's message ("unknown key 'bach' (did you mean 'batch_per_gpu'?)").  A name the
 * context's registries do not know (gpu=t44, host=...) is an expected failure: the status
 * (EC_ENOTFOUND, message on ctx) is returned for the caller's ecL_fail; else EC_OK.  Keys
 * after such a failure are still checked (so a bad key raises) but not set. */
int ecL_toconfig(lua_State *L, int idx, ec_ctx *ctx, ec_config *cfg);
/* Set the values a prediction of cfg derived (strategy, topology, nodes, task, seq_len,
 * image_size: ec_config_resolve) as keys of the table on top, so a result or a sweep row
 * says what was simulated (strategy = "ddp" on several GPUs, not a missing key). */
void ecL_setresolved(lua_State *L, ec_ctx *ctx, const ec_config *cfg);
/* The same from a configuration ec_config_resolve has already filled (ec_sweep_point.resolved). */
void ecL_setresolved_cfg(lua_State *L, const ec_config *resolved);
/* The same for many rows (a sweep): the keys' names pushed once as ECL_N_RESOLVED stack slots
 * (the first returned) and their config indices in index[ECL_N_RESOLVED]; then each row's with
 * those slots, without looking a key up by name (a key whose index the caller set to -1 is
 * skipped: a sweep row gets it from the point's own keys). */
#define ECL_N_RESOLVED 6
int ecL_resolved_names_push(lua_State *L, int *index);
void ecL_setresolved_named(lua_State *L, const ec_config *resolved, int names, const int *index);
/* The text form of the config value at idx, as ec_config_set reads it (integers without
 * ".0", floats that read back exactly, booleans as true/false, strings as they are); raises naming
 * key for another type.  The result is buf or a string on the Lua stack at idx. */
const char *ecL_config_text(lua_State *L, int idx, const char *key, char *buf, size_t n);

/* ---- l_result.c -------------------------------------------------------------------- */

/* Push a result as the plain table of docs/DESIGN.md section 5. */
void ecL_pushresult(lua_State *L, const ec_result *res);
/* The fields of an ec_memory as the result's memory subtable has them. */
void ecL_pushmemory(lua_State *L, const ec_memory *m);
/* The same, with room for `extra` more keys in the result table (ec.sweep's config keys). */
void ecL_pushresult_sized(lua_State *L, const ec_result *res, int extra);
/* The same for many rows (a sweep): the key names pushed once as stack slots (the first
 * returned), then each row's keys from those slots instead of the registry's table. */
int ecL_result_names_push(lua_State *L);
void ecL_pushresult_named(lua_State *L, const ec_result *res, int extra, int names);
/* Key of the result table: the field's index for a plain key, -2 - g for the subtable
 * groups[g] ("breakdown", "memory", "interval"), -1 for an unknown key. */
int ecL_result_key(const char *key);
/* Only the keys given (ecL_result_key values), with room for `extra` more. */
void ecL_pushresult_keys(lua_State *L, const ec_result *res, const int *keys, size_t n, int extra);
/* The result columns of a CSV row, in their documented order (step_s, samples_per_s, ...,
 * breakdown_*_s, memory_*_bytes, epoch_p10_s, ..., warnings), and their text. */
size_t ecL_result_column_count(void);
const char *ecL_result_column_name(size_t i);
void ecL_result_column_text(const ec_result *res, size_t i, char *buf, size_t n);
/* Every result column's text at once (a row of a long CSV: no search per column): column i
 * at cells + i x cell_max, each cut to cell_max - 1 bytes. */
void ecL_result_row_text(const ec_result *res, char *cells, size_t cell_max);
/* The CSV column a nested result field goes to ("memory", "weights_bytes" ->
 * "memory_weights_bytes"; "interval", "p10" -> "epoch_p10_s"), or NULL when the pair is
 * not a result field. */
const char *ecL_result_nested_column(const char *group, const char *key);
int ecL_open_result(lua_State *L);

/* ---- l_runs.c ---------------------------------------------------------------------- */

int ecL_open_runs(lua_State *L);
int ecL_open_optimize(lua_State *L); /* l_optimize.c: ec.optimize */

/* ---- l_sweep.c --------------------------------------------------------------------- */

/* One axis of a sweep: a config key and the text of its values. */
#define ECL_SWEEP_MAX_AXES 16
#define ECL_SWEEP_MAX_FIELDS 64 /* opts.fields of ec.sweep: more than the result has */
#define ECL_SWEEP_MAX_THREADS 1024 /* opts.threads / --threads: more than any machine's cores */
typedef struct ecL_axis {
    const char *key;
    size_t n;
    const char *const *values;
} ecL_axis;

/* Called for every point of a sweep, in order (first axis slowest); pt->status is
 * ec_predict's (pt->result is valid only for EC_OK, pt->message says why otherwise).  Return
 * EC_OK to go on; another status stops the sweep (its message is on the context). */
typedef int (*ecL_point_fn)(void *ud, const ec_sweep_point *pt);

/* Check every axis value against base through ec_config_set and count the points;
 * on failure msg names the key and value. */
int ecL_sweep_check(ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                    size_t *n_points, char *msg, size_t msg_size);
/* Predict every point of the product of the axes over base (ec_sweep, with opts: threads,
 * resolve, part of parts; NULL: the defaults) and hand it to fn; with show_progress, a bar on
 * stderr when stderr is a terminal and the sweep is long.  The sweep sits in a box on the
 * Lua stack while it runs (popped before returning), so fn may raise: the box stops the
 * threads when collected.  EC_EMISUSE and EC_ENOMEM from the library stop the sweep; other
 * failures go to fn. */
int ecL_sweep_run(lua_State *L, ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                  const ec_sweep_opts *opts, int show_progress, ecL_point_fn fn, void *ud, char *msg,
                  size_t msg_size);
/* Free function of an ec_sweep, for ecL_newbox. */
void ecL_free_sweep(void *p);

/* ---- l_plot.c ---------------------------------------------------------------------- */

/* ec.plot(spec) as a plain C function (it uses no upvalue), for the CLI's validate --plot. */
int ecL_plot(lua_State *L);

/* ---- the other binding files -------------------------------------------------------
 * Every ecL_open_<x> is called by luaopen_epochcast with the module table and the context
 * box on the stack top; it adds its functions with luaL_setfuncs(L, reg, 1), which makes
 * the box their upvalue 1 and pops it. */
int ecL_open_predict(lua_State *L);
int ecL_open_registry(lua_State *L);
int ecL_open_csv(lua_State *L);
int ecL_open_sweep(lua_State *L);
int ecL_open_plot(lua_State *L);
int ecL_open_trace(lua_State *L);
int ecL_open_plan(lua_State *L);
int ecL_open_network(lua_State *L);

/* ---- l_plan.c ---------------------------------------------------------------------- */

/* Push point i of a run plan as a row: the result (as ec.predict) when it was predicted, the
 * point's config keys (as set, plus the values it derived), verdict, message, on_front, best. */
void ecL_push_plan_row(lua_State *L, ec_ctx *ctx, const ec_plan *plan, size_t i);

/* ---- CLI commands in their own files (cli_<name>.c) -------------------------------------- */
int ecL_cli_model_info(lua_State *L, int argc, char **argv);

#endif /* LEC_PRIV_H */
