/*
 * pipeline_draw.c: the random numbers of the input pipeline's simulation (modeling.md 5.1):
 * a seed per (seed, stream), mt19937 replayed from its first draws, and the batches of a
 * replica in sampler order -- padded lengths and token counts from lengths.c, CPU costs from
 * a gamma around their mean, pinning copies -- from the eci_pipe_in that epoch.c fills.
 */
#include "sim/pipeline_sim.h"

#include <string.h>

/* ---- random streams ---------------------------------------------------------------------- */
/* splitmix64: a well-mixed 64-bit seed per (seed, stream) for gsl_rng_set. */
static unsigned long stream_seed(uint64_t seed, uint64_t stream)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (unsigned long)(z ^ (z >> 31));
}

static double cpu_noise(const eci_pipe_in *in, gsl_rng *rng)
{
    if (in->cpu_cv <= 0)
        return 1.0;
    /* the sum of b i.i.d. per-sample costs with CV cv: mean 1, CV cv / sqrt(b), as a gamma */
    double shape = in->batch / (in->cpu_cv * in->cpu_cv);
    return gsl_ran_gamma(rng, shape, 1.0 / shape);
}

static void set_batch(const eci_pipe_in *in, gsl_rng *rng, batches *bt, long i, int padded, double tokens)
{
    bt->len[i] = padded;
    bt->cpu[i] = in->batch_fixed_s +
                 cpu_noise(in, rng) * (in->batch * in->sample_fixed_s + tokens * in->sample_token_s);
    bt->pin[i] = in->pin_s * padded / in->seq;
}

/* The n batches of a run: t is the whole-batch table (lengths.h), NULL when lengths are
 * bucketed or absent. */
static void draw_batches(const eci_pipe_in *in, const eci_batch_lengths *t, gsl_rng *rng, long n, int *scratch,
                         batches *bt)
{
    int b = in->batch;
    const eci_lengths *l = in->lengths;
    if (l != NULL && in->padding == EC_PAD_BUCKETED) {
        /* HF LengthGroupedSampler: mega-batches sorted longest first, cut into batches.  The
         * lengths are whole tokens in 1..cap, so the sort is a count per length (scratch). */
        int per = in->mega_batch / b > 0 ? in->mega_batch / b : 1;
        for (long i = 0; i < n;) {
            memset(scratch, 0, ((size_t)l->cap + 1) * sizeof *scratch);
            for (int s = 0; s < per * b; s++)
                scratch[eci_lengths_draw(l, rng)]++;
            int len = l->cap;
            for (int k = 0; k < per && i < n; k++, i++) {
                double tokens = 0;
                int longest = 0;
                for (int s = 0; s < b; s++) {
                    while (scratch[len] == 0)
                        len--;
                    scratch[len]--;
                    tokens += len;
                    if (longest == 0)
                        longest = len;
                }
                set_batch(in, rng, bt, i, longest, tokens);
            }
        }
        return;
    }
    for (long i = 0; i < n; i++) {
        if (l == NULL) {
            set_batch(in, rng, bt, i, in->seq, (double)b * in->seq);
            continue;
        }
        int longest;
        double tokens;
        eci_lengths_batch_draw(t, rng, &longest, &tokens);
        set_batch(in, rng, bt, i, in->padding == EC_PAD_MAX_LENGTH ? in->seq : longest, tokens);
    }
}

/* ---- the generator: mt19937, replayed ---------------------------------------------------
 * A run draws from mt19937 seeded with its stream's seed.  Seeding writes 624 words and the
 * first draw regenerates all 624 (the twist): more than a short run's ~80 draws, and a sweep
 * seeds the same few streams again and again.  So the first REPLAY_DRAWS outputs of each of
 * the last REPLAY_SEEDS seeds are kept with the generator's state after them, and a run draws
 * through a generator type of its own that returns those outputs, then continues from the
 * kept state: mt19937's numbers exactly (its get_double is get / 2^32, as GSL's mt.c). */
#define REPLAY_DRAWS 128
#define REPLAY_SEEDS 4

typedef struct replay_seed {
    unsigned long seed;
    int valid;
    unsigned long v[REPLAY_DRAWS];
    gsl_rng *after;          /* mt19937 after the REPLAY_DRAWS draws */
} replay_seed;

struct eci_pipe_rngs {
    replay_seed slot[REPLAY_SEEDS];
    unsigned next;           /* the slot a new seed takes (round robin) */
    gsl_rng *rng;            /* the replay generator runs draw from */
    gsl_rng *tail;           /* mt19937 continuing a replay past its kept draws */
};

typedef struct replay_state {
    const replay_seed *s;
    size_t pos;
    gsl_rng *tail;
} replay_state;

static unsigned long replay_get(void *vstate)
{
    replay_state *st = (replay_state *)vstate;
    if (st->pos < REPLAY_DRAWS)
        return st->s->v[st->pos++];
    if (st->pos == REPLAY_DRAWS) {
        gsl_rng_memcpy(st->tail, st->s->after);
        st->pos++;
    }
    return gsl_rng_get(st->tail);
}

static double replay_get_double(void *vstate)
{
    return (double)replay_get(vstate) / 4294967296.0;
}

static void replay_set(void *vstate, unsigned long seed)
{
    (void)seed; /* seeded by eci_pipe_rng, which points it at a kept seed */
    memset(vstate, 0, sizeof(replay_state));
}

static const gsl_rng_type replay_type = {"epochcast-mt19937-replay", 0xffffffffUL, 0, sizeof(replay_state),
                                         replay_set, replay_get, replay_get_double};

static int rngs_alloc(ec_ctx *ctx)
{
    struct eci_pipe_rngs *g;
    if (eci_ctx_on_free(ctx, eci_pipe_ctx_free) != EC_OK || (g = eci_calloc(ctx, 1, sizeof *g)) == NULL)
        return 0;
    ctx->pipe_rngs = g;
    g->rng = gsl_rng_alloc(&replay_type);
    g->tail = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < REPLAY_SEEDS && g->tail != NULL; i++)
        if ((g->slot[i].after = gsl_rng_alloc(gsl_rng_mt19937)) == NULL)
            return 0;
    return g->rng != NULL && g->tail != NULL;
}

gsl_rng *eci_pipe_rng(ec_ctx *ctx, unsigned long seed)
{
    if (ctx->pipe_rngs == NULL && !rngs_alloc(ctx)) {
        eci_pipe_ctx_free(ctx);
        return NULL;
    }
    struct eci_pipe_rngs *g = ctx->pipe_rngs;
    replay_seed *s = NULL;
    for (int i = 0; i < REPLAY_SEEDS && s == NULL; i++)
        if (g->slot[i].valid && g->slot[i].seed == seed)
            s = &g->slot[i];
    if (s == NULL) {
        s = &g->slot[g->next];
        g->next = (g->next + 1) % REPLAY_SEEDS;
        gsl_rng_set(s->after, seed);
        for (int k = 0; k < REPLAY_DRAWS; k++)
            s->v[k] = gsl_rng_get(s->after);
        s->seed = seed;
        s->valid = 1;
    }
    replay_state *st = (replay_state *)g->rng->state;
    *st = (replay_state){.s = s, .pos = 0, .tail = g->tail};
    return g->rng;
}

void eci_pipe_ctx_free(ec_ctx *ctx)
{
    struct eci_pipe_rngs *g = ctx->pipe_rngs;
    if (g == NULL)
        return;
    if (g->rng != NULL)
        gsl_rng_free(g->rng);
    if (g->tail != NULL)
        gsl_rng_free(g->tail);
    for (int i = 0; i < REPLAY_SEEDS; i++)
        if (g->slot[i].after != NULL)
            gsl_rng_free(g->slot[i].after);
    eci_free(ctx, g, sizeof *g);
    ctx->pipe_rngs = NULL;
}

/* What every run checks of its input. */
int eci_pipe_check(ec_ctx *ctx, const eci_pipe_in *in, long n)
{
    if (n < 1 || in->batch < 1 || in->seq < 1 || in->n_knots < 1 || in->cores < 1 ||
        (in->num_workers > 0 && in->prefetch_factor < 1))
        return eci_error(ctx, EC_EINVAL, "pipeline: steps, batch, seq_len, knots, cores and prefetch_factor must be >= 1");
    return EC_OK;
}

/* The n batches of a run in sampler order (context scratch: a sweep of epochs allocates
 * nothing after the first), from the context's generator set to stream `stream` of in->seed:
 * a run's numbers depend on (seed, stream) only. */
int eci_pipe_draw(ec_ctx *ctx, const eci_pipe_in *in, long n, uint64_t stream, batches *bt)
{
    size_t mb = in->lengths != NULL ? (size_t)in->lengths->cap + 1 : 1; /* bucketed: count per length */
    bt->len = eci_scratch(ctx, ECI_SCRATCH_RUN_LEN, (size_t)n, sizeof *bt->len);
    bt->cpu = eci_scratch(ctx, ECI_SCRATCH_RUN_CPU, (size_t)n, sizeof *bt->cpu);
    bt->pin = eci_scratch(ctx, ECI_SCRATCH_RUN_PIN, (size_t)n, sizeof *bt->pin);
    int *counts = eci_scratch(ctx, ECI_SCRATCH_RUN_COUNTS, mb, sizeof *counts);
    gsl_rng *rng = eci_pipe_rng(ctx, stream_seed(in->seed, stream));
    if (!bt->len || !bt->cpu || !bt->pin || !counts || !rng)
        return eci_error(ctx, EC_ENOMEM, "pipeline: out of memory for %ld steps", n);
    const eci_batch_lengths *whole = NULL;
    if (in->lengths != NULL && in->padding != EC_PAD_BUCKETED &&
        (whole = eci_lengths_batch(ctx, in->lengths, in->batch)) == NULL)
        return EC_ENOMEM;
    draw_batches(in, whole, rng, n, counts, bt);
    return EC_OK;
}

