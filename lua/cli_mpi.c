/*
 * cli_mpi.c: the CLI under mpirun.  Built with MPI (EC_HAVE_MPI: CMake found Open MPI), a
 * process started by mpirun joins MPI and a sweep or a search is split over the K ranks:
 * rank r predicts the blocks b of points (or candidates) with b % K = r (ec_sweep_opts part /
 * parts, ec_optimize's part / parts) on its own threads; the other ranks send their blocks to
 * rank 0, which hands every point to the command in the product's order (receiving block b
 * from rank b % K when its turn comes, one block at a time) or merges the searches, so rank 0
 * writes what one process writes.  Ranks other than 0 write nothing (stdout and stderr go to
 * /dev/null).  Points travel as the bytes of their structs: every rank runs the same build on
 * the same kind of machine (mpirun's usual case).  Without MPI, or outside mpirun, a sweep and
 * a search run in this one process.
 *
 * No rank waits for one that has gone (issue 42): the ranks agree before the work starts that
 * it can start (rank 0's -o target included: a link, a FIFO, a folder or an input refused there
 * ends every rank with exit 1); a rank that fails during a split stops them all (MPI_Abort, its
 * message on its own stderr, kept for that); and a rank that leaves with a failure no other rank
 * shares waits at most EXIT_WAIT_S for the others at the exit, then stops them all.
 */
#define _POSIX_C_SOURCE 200809L /* with MPI: dup, nanosleep, clock_gettime */

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EC_HAVE_MPI

/* `epochcast` (no MPI) started by mpirun as one of K > 1 processes: each would run the whole
 * command and print or write the same output, so it stops and names epochcast-mpi, the build
 * that splits the work (lua/CMakeLists.txt). */
int ecC_mpi_init(int *argc, char ***argv)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (size == NULL)
        size = getenv("PMI_SIZE");
    if (size != NULL && strtol(size, NULL, 10) > 1) {
        fprintf(stderr,
                "%s: started by mpirun as one of %s processes, but this epochcast is built without MPI "
                "and each process would run the whole command: run epochcast-mpi under mpirun (the "
                "epochcast-mpi package, or a build where CMake finds MPI: docs/building.md)\n",
                *argc > 0 ? (*argv)[0] : "epochcast", size);
        exit(EXIT_FAILURE);
    }
    return 0;
}

int ecC_mpi_finalize(int code)
{
    return code;
}

int ecC_mpi_rank(void)
{
    return 0;
}

int ecC_mpi_size(void)
{
    return 1;
}

int ecC_sweep_run(lua_State *L, ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                  ec_sweep_opts *opts, ecL_point_fn fn, void *ud, char *msg, size_t msg_size)
{
    return ecL_sweep_run(L, ctx, base, axes, n_axes, opts, 1, fn, ud, msg, msg_size);
}

int ecC_mpi_agree(int failed)
{
    return failed;
}

int ecC_optimize_run(ec_ctx *ctx, ec_optimize *opt, char *msg, size_t msg_size)
{
    int st = ec_optimize_run(opt);
    if (st != EC_OK)
        snprintf(msg, msg_size, "%s", ec_ctx_errmsg(ctx));
    return st;
}

#else /* EC_HAVE_MPI */

#include <mpi.h>
#include <time.h>
#include <unistd.h>

/* How long a rank leaving with a failure of its own waits at the exit for the others before it
 * stops them: a failure every rank shares (a refused key) reaches the exit on all of them within
 * a moment; one that only this rank met leaves the others waiting for it forever. */
#define EXIT_WAIT_S 5.0

/* The CLI's process-wide MPI state (the library has none): set once by ecC_mpi_init. */
static MPI_Comm exit_comm = MPI_COMM_NULL; /* a copy of the world for the exit's barrier alone, so it
                                              never meets a command's collective */
static int fatal_fd = 2;                   /* where a rank's message that stops them all goes: rank 0's
                                              stderr, the others' own stderr kept before /dev/null */

/* Started by mpirun (Open MPI, or a PMI launcher): its environment says so. */
static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
}

static int active(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

int ecC_mpi_init(int *argc, char ***argv)
{
    if (!launched())
        return 0;
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &exit_comm);
    if (ecC_mpi_rank() != 0) { /* rank 0 speaks for all */
        fflush(stderr);
        fatal_fd = dup(2);
        if (freopen("/dev/null", "w", stdout) == NULL || freopen("/dev/null", "w", stderr) == NULL)
            return 1;
    }
    return 1;
}

/* A rank's last word before it stops every rank: on its own stderr (ranks other than 0 keep it
 * for this alone), then MPI_Abort, which ends every process of the job. */
static void abort_all(const char *why)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "epochcast: MPI rank %d: %s (stopping every MPI rank)\n", ecC_mpi_rank(), why);
    fflush(stderr);
    if (fatal_fd >= 0 && n > 0)
        (void)!write(fatal_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int ecC_mpi_finalize(int code)
{
    if (!active())
        return code;
    if (ecC_mpi_size() > 1 && exit_comm != MPI_COMM_NULL) {
        /* Every rank meets the others at the exit.  One that succeeded waits for them (a rank
         * still writing the result, or one that will stop them all); one that failed waits
         * EXIT_WAIT_S: the others are here too when they failed alike, else they wait for this
         * rank in a collective it will never join. */
        MPI_Request rq;
        int done = 0;
        MPI_Ibarrier(exit_comm, &rq);
        if (code == 0) {
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            done = 1;
        }
        for (double until = monotonic_s() + EXIT_WAIT_S; !done && monotonic_s() < until;) {
            MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            struct timespec nap = {0, 10000000}; /* 10 ms */
            if (!done)
                nanosleep(&nap, NULL);
        }
        if (!done)
            abort_all(ecC_mpi_rank() == 0 ? "failed on its own while the other ranks wait for it"
                                          : "failed on its own while the other ranks wait for it (rank 0 speaks "
                                            "for all: run the command without mpirun to see why)");
        MPI_Comm_free(&exit_comm);
    }
    MPI_Finalize();
    return code;
}

int ecC_mpi_rank(void)
{
    int r = 0;
    if (active())
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int ecC_mpi_size(void)
{
    int n = 1;
    if (active())
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

int ecC_mpi_agree(int failed)
{
    int any = failed != 0;
    if (active() && ecC_mpi_size() > 1)
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any != 0;
}

/* Every rank's status: 1 when any rank's is not EC_OK.  (A rank that fails in the middle of a
 * split cannot tell the others, who would wait for it: abort_all stops them all.) */
static int agree(int st)
{
    return ecC_mpi_agree(st != EC_OK);
}

/* ---- sweeps ------------------------------------------------------------------------------ */

/* A point as it travels. */
typedef struct wire {
    size_t index;
    int status;
    int resolved;
    size_t values[ECL_SWEEP_MAX_AXES];
    ec_config cfg, res_cfg;
    ec_result res;
    char msg[EC_WARNING_TEXT_MAX * 2];
} wire;

typedef struct split {
    int rank, size;
    size_t block, total, n_axes, n_blocks;
    wire *buf;                  /* one block */
    size_t n_buf;
    size_t next_block;          /* rank 0: the next block to hand out */
    ecL_point_fn fn;            /* rank 0: the command's */
    void *ud;
    int failed;
} split;

static void to_wire(const split *s, const ec_sweep_point *pt, wire *w)
{
    memset(w, 0, sizeof *w);
    w->index = pt->index;
    w->status = pt->status;
    memcpy(w->values, pt->values, s->n_axes * sizeof *w->values);
    w->cfg = *pt->config;
    w->resolved = pt->resolved != pt->config;
    if (w->resolved)
        w->res_cfg = *pt->resolved;
    if (pt->status == EC_OK)
        w->res = *pt->result;
    snprintf(w->msg, sizeof w->msg, "%s", pt->message);
}

static int from_wire(split *s, const wire *w)
{
    ec_sweep_point pt = {w->index, w->values, &w->cfg, w->resolved ? &w->res_cfg : &w->cfg, w->status, &w->res,
                         w->msg};
    return s->fn(s->ud, &pt);
}

static size_t block_points(const split *s, size_t b)
{
    size_t first = b * s->block;
    return s->total - first < s->block ? s->total - first : s->block;
}

/* Rank 0: receive block b from its rank and hand its points on. */
static int take_block(split *s, size_t b)
{
    int src = (int)(b % (size_t)s->size);
    MPI_Status status;
    size_t n = block_points(s, b);
    if (MPI_Recv(s->buf, (int)(n * sizeof *s->buf), MPI_BYTE, src, (int)(b % 32768), MPI_COMM_WORLD, &status) !=
        MPI_SUCCESS)
        abort_all("receiving a block of the sweep failed");
    for (size_t i = 0; i < n; i++) {
        int st = from_wire(s, &s->buf[i]);
        if (st != EC_OK)
            return st;
    }
    return EC_OK;
}

/* Rank 0's points: before each, the other ranks' earlier blocks. */
static int rank0_point(void *ud, const ec_sweep_point *pt)
{
    split *s = ud;
    size_t b = pt->index / s->block;
    while (s->next_block < b) {
        int st = take_block(s, s->next_block++);
        if (st != EC_OK)
            return st;
    }
    int st = s->fn(s->ud, pt);
    if (pt->index + 1 == (b + 1) * s->block || pt->index + 1 == s->total)
        s->next_block = b + 1;
    return st;
}

/* Another rank's points: a block at a time, to rank 0. */
static int sender_point(void *ud, const ec_sweep_point *pt)
{
    split *s = ud;
    to_wire(s, pt, &s->buf[s->n_buf++]);
    size_t b = pt->index / s->block;
    if (s->n_buf == block_points(s, b)) {
        if (MPI_Send(s->buf, (int)(s->n_buf * sizeof *s->buf), MPI_BYTE, 0, (int)(b % 32768), MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            abort_all("sending a block of the sweep failed");
        s->n_buf = 0;
    }
    return EC_OK;
}

int ecC_sweep_run(lua_State *L, ec_ctx *ctx, const ec_config *base, const ecL_axis *axes, size_t n_axes,
                  ec_sweep_opts *opts, ecL_point_fn fn, void *ud, char *msg, size_t msg_size)
{
    int size = ecC_mpi_size();
    if (size <= 1)
        return ecL_sweep_run(L, ctx, base, axes, n_axes, opts, 1, fn, ud, msg, msg_size);
    size_t total = 0;
    int st = ecL_sweep_check(ctx, base, axes, n_axes, &total, msg, msg_size);
    if (agree(st))
        return st != EC_OK ? st : (snprintf(msg, msg_size, "another MPI rank refused the sweep"), EC_EINVAL);
    split s = {ecC_mpi_rank(), size, opts->block, total, n_axes, 0, NULL, 0, 0, fn, ud, 0};
    s.n_blocks = total / s.block + (total % s.block != 0);
    s.buf = (wire *)lua_newuserdatauv(L, s.block * sizeof *s.buf, 0); /* freed with the stack */
    opts->part = (size_t)s.rank;
    opts->parts = (size_t)size;
    st = ecL_sweep_run(L, ctx, base, axes, n_axes, opts, 0, s.rank == 0 ? rank0_point : sender_point, &s, msg,
                       msg_size);
    while (st == EC_OK && s.rank == 0 && s.next_block < s.n_blocks)
        st = take_block(&s, s.next_block++);
    lua_pop(L, 1);
    if (st != EC_OK)
        abort_all(msg);
    return st;
}

/* ---- searches ---------------------------------------------------------------------------- */

int ecC_optimize_run(ec_ctx *ctx, ec_optimize *opt, char *msg, size_t msg_size)
{
    int size = ecC_mpi_size(), rank = ecC_mpi_rank();
    if (size <= 1) {
        int st = ec_optimize_run(opt);
        if (st != EC_OK)
            snprintf(msg, msg_size, "%s", ec_ctx_errmsg(ctx));
        return st;
    }
    char num[32];
    snprintf(num, sizeof num, "%d", size);
    int st = ec_optimize_set(opt, "parts", num);
    snprintf(num, sizeof num, "%d", rank);
    if (st == EC_OK)
        st = ec_optimize_set(opt, "part", num);
    if (st == EC_OK)
        st = ec_optimize_run(opt);
    if (agree(st)) { /* a refused search is refused on every rank alike; a stopped one on one rank */
        snprintf(msg, msg_size, "%s", st != EC_OK ? ec_ctx_errmsg(ctx) : "another MPI rank's part of the search "
                 "failed or was stopped (run the search without mpirun to see why)");
        return st != EC_OK ? st : EC_EINVAL;
    }
    if (rank != 0) {
        size_t bytes = 0;
        ec_optimize_pack(opt, NULL, &bytes);
        void *buf = malloc(bytes);
        if (buf == NULL || ec_optimize_pack(opt, buf, &bytes) != EC_OK)
            abort_all("out of memory packing the search");
        unsigned long long n = bytes;
        MPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
        MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        free(buf);
        return EC_OK;
    }
    for (int r = 1; r < size; r++) {
        unsigned long long n = 0;
        MPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        void *buf = malloc((size_t)n);
        if (buf == NULL)
            abort_all("out of memory receiving the search");
        MPI_Recv(buf, (int)n, MPI_BYTE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        st = ec_optimize_merge(opt, buf, (size_t)n);
        free(buf);
        if (st != EC_OK)
            abort_all(ec_ctx_errmsg(ctx));
    }
    return EC_OK;
}

#endif /* EC_HAVE_MPI */
