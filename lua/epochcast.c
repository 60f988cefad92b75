/*
 * epochcast.c: the command-line host, shaped like lua.c: main creates a Lua state and runs
 * pmain under lua_pcall, which reads the global options (--models, --profile, --help,
 * --version) and hands the command's words to it through the command table.  The commands
 * live in cli_<command>.c (cli.h lists them): thin C over the public API, every C object they
 * hold in a Lua box so that an error cannot leak it; run executes a Lua scenario with the
 * module preloaded.  The process's own state (signals, a scenario's budgets, the progress bar)
 * is cli_host.c's.  No model logic lives here.
 */
#include "cli.h"

#include <gsl/gsl_errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The commands but run (which takes the whole command line: ecC_cmd_run). */
static const struct {
    const char *name;
    int (*fn)(lua_State *L, int argc, char **argv);
} commands[] = {
    {"gpus", ecC_cmd_gpus},           {"models", ecC_cmd_models},       {"networks", ecC_cmd_networks},
    {"model-info", ecL_cli_model_info}, {"predict", ecC_cmd_predict},   {"sweep", ecC_cmd_sweep},
    {"validate", ecC_cmd_validate},   {"calibrate", ecC_cmd_calibrate}, {"plan", ecC_cmd_plan},
    {"compare", ecC_cmd_compare},     {"max-batch", ecC_cmd_max_batch}, {"optimize", ecC_cmd_optimize},
};

/* Read the global options, argv[*i] on while they start with '-'; *i then at the command.
 * -1 when the command should run, else the exit status (0 after --help and --version). */
static int global_options(lua_State *L, int argc, char **argv, int *i)
{
    for (; *i < argc && argv[*i][0] == '-'; ++*i) {
        const char *a = argv[*i];
        if (ecC_is_help(a)) {
            fputs(main_usage, stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
            char dir[EC_PATH_MAX];
            const char *models = ecL_models_dir(L); /* --models given before, or $EPOCHCAST_MODELS */
            if (models == NULL && ec_default_models_dir(dir, sizeof dir) == EC_OK)
                models = dir;
            printf("epochcast %s (%s)\n", EC_VERSION, LUA_RELEASE);
            if (models != NULL)
                printf("models: %s\n", models);
            return 0;
        } else if (strcmp(a, "--models") == 0 || strncmp(a, "--models=", 9) == 0) {
            const char *dir = a[8] == '=' ? a + 9 : (++*i < argc ? argv[*i] : NULL);
            if (dir == NULL || dir[0] == '\0')
                return ecC_usage_error(NULL, "--models needs a folder");
            lua_pushstring(L, dir);
            lua_setfield(L, LUA_REGISTRYINDEX, ECL_MODELS_DIR_KEY);
        } else if (strcmp(a, "--profile") == 0 || strncmp(a, "--profile=", 10) == 0) {
            const char *path = a[9] == '=' ? a + 10 : (++*i < argc ? argv[*i] : NULL);
            if (path == NULL || path[0] == '\0')
                return ecC_usage_error(NULL, "--profile needs a file name");
            ecC_set_profile(L, path);
        } else {
            return ecC_usage_error(NULL, "unknown option '%s'", a);
        }
    }
    return -1;
}

/* Run the command argv[i] with the words after it. */
static int run_command(lua_State *L, int argc, char **argv, int i)
{
    if (i >= argc)
        return ecC_usage_error(NULL, "missing command");
    const char *cmd = argv[i];
    if (strcmp(cmd, "run") == 0)
        return ecC_cmd_run(L, argc, argv, i + 1);
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (strcmp(cmd, commands[c].name) == 0)
            return commands[c].fn(L, argc - i - 1, argv + i + 1);
    return ecC_usage_error(NULL, "unknown command '%s'", cmd);
}

static int pmain(lua_State *L)
{
    int argc = (int)lua_tointeger(L, 1);
    char **argv = (char **)lua_touserdata(L, 2);
    int i = 1;
    luaL_checkversion(L);
    ecC_host_register(L);
    int code = global_options(L, argc, argv, &i);
    if (code >= 0) { /* as it was: no flush, no interrupt status */
        lua_pushinteger(L, code);
        return 1;
    }
    code = run_command(L, argc, argv, i);
    fflush(stdout);
    if (ferror(stdout) && code == 0)
        code = ecC_error("error writing to standard output");
    if (ecC_interrupt_status() != 0) /* stopped by SIGINT or SIGTERM: the shell's status for it */
        code = ecC_interrupt_status();
    lua_pushinteger(L, code);
    return 1;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    ecC_install_signals();
    ecC_mpi_init(&argc, &argv); /* under mpirun: join MPI (cli_mpi.c) */
    lua_State *L = luaL_newstate();
    if (L == NULL) {
        ecC_message(argv[0], "cannot create state: not enough memory");
        return ecC_mpi_finalize(EXIT_FAILURE);
    }
    lua_pushcfunction(L, pmain);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    int status = lua_pcall(L, 2, 1, 0);
    int code = status == LUA_OK ? (int)lua_tointeger(L, -1) : EXIT_FAILURE;
    ecC_report(L, status);
    fflush(stdout); /* what the scenario printed, before a finalizer can end the process */
    if (ecC_close_state(L) != 0 && code == 0)
        code = EXIT_FAILURE;
    int stopped = ecC_interrupt_status();
    return ecC_mpi_finalize(stopped != 0 ? stopped : code);
}
