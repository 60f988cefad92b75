/*
 * sweep.c: a sweep, every point of a product of config-key values over a base configuration,
 * handed back in the product's order (the last axis fastest) by ec_sweep_next.  On one thread
 * the caller's context predicts runs of ONE_THREAD_AHEAD points, which the calls hand out.  On
 * t threads, t - 1 worker threads (workers.c, each with its own context) and the caller predict
 * chunks of consecutive points into a ring of a few chunks per thread: the caller hands the
 * chunks out in order, and when the next is not ready it predicts the next untaken chunk itself
 * rather than sleep (a sleeping caller made t + 1 threads on t cores and a wake-up per chunk).
 * A chunk is taken only when its slot of the ring is free, so memory stays bounded whatever the
 * sweep's size, and the points come back exactly as one thread gives them.  A sweep may also be
 * one part of a sweep split over processes (opts.part of opts.parts): it predicts every
 * parts-th block of points.  Axis values are config-key text (ec_config_set), parsed once when
 * the axis is added: each point's config gets each value's field as the config stores it.
 */
#include "sim/predict.h"
#include "search/workers.h"

#include <pthread.h>
#include <string.h>

#define MAX_AXES 16
/* opts.threads = 0: one thread per this many points at most (a worker's context takes about
 * as long to load as a few thousand predictions). */
#define AUTO_POINTS_PER_THREAD 2048
/* Points per chunk: at most CHUNK_MAX, and about CHUNKS_PER_THREAD chunks per thread. */
#define CHUNK_MAX 64
#define CHUNKS_PER_THREAD 16
#define DEFAULT_BLOCK 256
/* One thread: points predicted at a time before they are handed out.  A prediction's code is
 * about as large as the instruction cache, so a caller that builds a row per point (a Lua
 * table, a CSV line) and the prediction evict each other's code at every point when they take
 * turns; in runs of 16 each stays cached through its run (Lua sweep rows: callgrind's
 * instruction-cache misses per row 819 -> 425, results/speed.md). */
#define ONE_THREAD_AHEAD 16

typedef struct axis {
    char *key;
    size_t key_index; /* ec_config_key_index(key): looked up once, set at every point */
    char **values;
    size_t n;
    /* Each value as the config stores it, parsed once (set on the base when the axis is added):
     * value v's field is fields[v x field_size], given[v] whether the key counts as given. */
    unsigned char *fields, *given;
    size_t field_size;
} axis;

typedef struct item {
    size_t index;
    int status;
    ec_config cfg;
    ec_config resolved;
    ec_result res;
    char msg[EC_ERRMSG_MAX];
} item;

struct ec_sweep {
    ec_ctx *ctx;
    ec_config base;
    ec_sweep_opts opts;
    axis axes[MAX_AXES];
    size_t n_axes;
    size_t total;                 /* points of the product */
    size_t share;                 /* points of this part */
    size_t pos;                   /* points handed out */
    int started, done, threads;
    size_t values[MAX_AXES];      /* the last point's value indices */
    item *one;                    /* one thread: the run of points being handed out (chunk items) */
    /* several threads */
    eci_workers *workers;
    int sync;                     /* the mutex and conditions are initialised */
    pthread_mutex_t lock;
    pthread_cond_t free_cond;     /* the caller freed slots (signalled only to waiting workers) */
    pthread_cond_t ready_cond;    /* a worker finished a chunk (signalled only to a waiting caller) */
    int workers_waiting, caller_waiting;
    size_t chunk, n_chunks, n_slots;
    item *slots;                  /* n_slots x chunk items */
    size_t *slot_chunk;           /* k + 1 when the slot holds chunk k, finished */
    size_t next_chunk;            /* the next chunk a thread takes */
    size_t consumed;              /* chunks the caller has finished */
    size_t cur_item, cur_items;   /* the caller's place in chunk `consumed` (one thread: in the run) */
    int have_chunk;
    int stop;                     /* the caller stopped early: workers return */
};

void ec_sweep_opts_init(ec_sweep_opts *opts)
{
    if (opts != NULL)
        *opts = (ec_sweep_opts){.threads = 0, .resolve = 0, .part = 0, .parts = 1, .block = DEFAULT_BLOCK};
}

int ec_sweep_new(ec_ctx *ctx, const ec_config *base, const ec_sweep_opts *opts, ec_sweep **out)
{
    if (out != NULL)
        *out = NULL;
    if (ctx == NULL)
        return EC_EMISUSE;
    if (base == NULL || out == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_sweep_new: NULL argument");
    ec_sweep_opts o;
    ec_sweep_opts_init(&o);
    if (opts != NULL)
        o = *opts;
    if (o.threads < 0)
        return eci_error(ctx, EC_EINVAL, "sweep: threads must be >= 0 (0: the cores available), got %d", o.threads);
    if (o.parts < 1 || o.part >= o.parts)
        return eci_error(ctx, EC_EINVAL, "sweep: part %zu of %zu parts (0 <= part < parts)", o.part, o.parts);
    if (o.block < 1)
        return eci_error(ctx, EC_EINVAL, "sweep: a block of %zu points (at least 1)", o.block);
    ec_sweep *sw = eci_calloc(ctx, 1, sizeof *sw);
    if (sw == NULL)
        return EC_ENOMEM;
    sw->ctx = ctx;
    sw->base = *base;
    sw->opts = o;
    sw->total = 1;
    *out = sw;
    return EC_OK;
}

static void free_axis(ec_ctx *ctx, axis *a)
{
    for (size_t v = 0; a->values != NULL && v < a->n; v++)
        eci_strfree(ctx, a->values[v]);
    eci_free(ctx, a->values, a->n * sizeof *a->values);
    eci_free(ctx, a->fields, a->n * a->field_size + 1);
    eci_free(ctx, a->given, a->n);
    eci_strfree(ctx, a->key);
}

int ec_sweep_axis(ec_sweep *sw, const char *key, const char *const *values, size_t n)
{
    if (sw == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = sw->ctx;
    if (key == NULL || (values == NULL && n > 0))
        return eci_error(ctx, EC_EMISUSE, "ec_sweep_axis: NULL argument");
    if (sw->started)
        return eci_error(ctx, EC_EMISUSE, "sweep: an axis added after the first point");
    if (sw->n_axes == MAX_AXES)
        return eci_error(ctx, EC_EINVAL, "a sweep has 1 to %d axes; '%s' would be axis %d", MAX_AXES, key,
                         MAX_AXES + 1);
    if (n == 0)
        return eci_error(ctx, EC_EINVAL, "sweep axis '%s' has no values", key);
    for (size_t a = 0; a < sw->n_axes; a++)
        if (strcmp(sw->axes[a].key, key) == 0)
            return eci_error(ctx, EC_EINVAL, "sweep axis '%s' is given twice", key);
    /* Each value is set on the base here, once: a bad value is refused naming it, and its field
     * as the config stores it is what every point gets (fill), without parsing it again. */
    axis *a = &sw->axes[sw->n_axes];
    int ki = ec_config_key_index(key); /* < 0: ec_config_set below refuses the key, naming it */
    *a = (axis){.n = n, .key_index = ki >= 0 ? (size_t)ki : 0,
                .field_size = ki >= 0 ? eci_config_key_size((size_t)ki) : 0};
    a->fields = eci_malloc(ctx, n * a->field_size + 1);
    a->given = eci_malloc(ctx, n);
    a->values = eci_calloc(ctx, n, sizeof *a->values);
    int st = a->fields != NULL && a->given != NULL && a->values != NULL ? EC_OK : EC_ENOMEM;
    for (size_t v = 0; v < n && st == EC_OK; v++) {
        if (values[v] == NULL) {
            st = eci_error(ctx, EC_EMISUSE, "ec_sweep_axis: value %zu of '%s' is NULL", v + 1, key);
            break;
        }
        ec_config scratch = sw->base;
        if ((st = ec_config_set(ctx, &scratch, key, values[v])) != EC_OK)
            break;
        eci_config_key_get(&scratch, a->key_index, a->fields + v * a->field_size);
        a->given[v] = (unsigned char)ec_config_is_set(&scratch, a->key_index);
        if ((a->values[v] = eci_strdup(ctx, values[v])) == NULL)
            st = EC_ENOMEM;
    }
    if (st == EC_OK && sw->total > ((size_t)-1) / n)
        st = eci_error(ctx, EC_EINVAL, "sweep has too many points (more than %zu)", (size_t)-1);
    if (st == EC_OK && (a->key = eci_strdup(ctx, key)) == NULL)
        st = EC_ENOMEM;
    if (st != EC_OK) {
        free_axis(ctx, a);
        memset(a, 0, sizeof *a);
        return st == EC_ENOMEM ? eci_error(ctx, EC_ENOMEM, "out of memory copying sweep axis '%s'", key) : st;
    }
    sw->n_axes++;
    sw->total *= n;
    return EC_OK;
}

size_t ec_sweep_count(const ec_sweep *sw)
{
    return sw != NULL && sw->n_axes > 0 ? sw->total : 0;
}

/* Points of this part: blocks b = part, part + parts, ... of `block` points (the last short). */
static size_t share_of(const ec_sweep *sw)
{
    size_t total = ec_sweep_count(sw), b = sw->opts.block, p = sw->opts.parts, r = sw->opts.part;
    size_t blocks = total / b + (total % b != 0);
    if (blocks <= r)
        return 0;
    size_t mine = (blocks - r - 1) / p + 1;
    size_t last = r + (mine - 1) * p; /* this part's last block */
    return last == blocks - 1 ? (mine - 1) * b + (total - last * b) : mine * b;
}

size_t ec_sweep_share(const ec_sweep *sw)
{
    return sw != NULL ? share_of(sw) : 0;
}

int ec_sweep_threads(const ec_sweep *sw)
{
    return sw != NULL ? sw->threads : 0;
}

/* Position q among this part's points -> position in the product. */
static size_t owned_index(const ec_sweep *sw, size_t q)
{
    size_t b = sw->opts.block;
    return (sw->opts.part + (q / b) * sw->opts.parts) * b + q % b;
}

static void decompose(const ec_sweep *sw, size_t index, size_t *values)
{
    for (size_t a = sw->n_axes; a-- > 0;) {
        values[a] = index % sw->axes[a].n;
        index /= sw->axes[a].n;
    }
}

/* Predict point `index` on ctx into it.  it->cfg holds the base with some point's axis values
 * (set_base, when the sweep starts): putting every axis's value (its field and whether it counts
 * as given) makes it this point's config, without copying the 2.7 KB base again. */
static void fill(const ec_sweep *sw, ec_ctx *ctx, size_t index, item *it)
{
    size_t values[MAX_AXES];
    decompose(sw, index, values);
    it->index = index;
    for (size_t a = 0; a < sw->n_axes; a++) {
        const axis *ax = &sw->axes[a];
        eci_config_key_put(&it->cfg, ax->key_index, ax->fields + values[a] * ax->field_size, ax->given[values[a]]);
    }
    int st = eci_predict_resolved(ctx, &it->cfg, &it->res, sw->opts.resolve ? &it->resolved : NULL);
    it->status = st;
    if (st == EC_OK) {
        it->msg[0] = '\0';
    } else {
        eci_strlcpy(it->msg, ec_ctx_errmsg(ctx), sizeof it->msg);
    }
}

/* One thread: predict the next run of points (up to chunk) on the caller's context, stopping
 * after a point the library itself failed (ec_sweep_next stops the sweep there). */
static void predict_run(ec_sweep *sw)
{
    size_t n = sw->share - sw->pos < sw->chunk ? sw->share - sw->pos : sw->chunk;
    sw->cur_item = sw->cur_items = 0;
    while (sw->cur_items < n) {
        item *it = &sw->one[sw->cur_items];
        fill(sw, sw->ctx, owned_index(sw, sw->pos + sw->cur_items), it);
        sw->cur_items++;
        if (it->status == EC_ENOMEM || it->status == EC_EMISUSE)
            break;
    }
}

/* Predict chunk k into its slot on ctx (the lock not held). */
static void predict_chunk(const ec_sweep *sw, ec_ctx *ctx, size_t k)
{
    item *slot = sw->slots + (k % sw->n_slots) * sw->chunk;
    size_t first = k * sw->chunk, n = sw->share - first < sw->chunk ? sw->share - first : sw->chunk;
    for (size_t j = 0; j < n; j++)
        fill(sw, ctx, owned_index(sw, first + j), &slot[j]);
}

/* 1 when a thread may take chunk next_chunk: there is one, and its slot is free. */
static int can_take(const ec_sweep *sw)
{
    return sw->next_chunk < sw->n_chunks && sw->next_chunk < sw->consumed + sw->n_slots;
}

static int work(void *ud, ec_ctx *wctx, int worker)
{
    ec_sweep *sw = ud;
    (void)worker;
    pthread_mutex_lock(&sw->lock);
    for (;;) {
        while (!sw->stop && sw->next_chunk < sw->n_chunks && !can_take(sw)) {
            sw->workers_waiting++;
            pthread_cond_wait(&sw->free_cond, &sw->lock);
            sw->workers_waiting--;
        }
        if (sw->stop || sw->next_chunk >= sw->n_chunks) {
            pthread_mutex_unlock(&sw->lock);
            return EC_OK;
        }
        size_t k = sw->next_chunk++;
        pthread_mutex_unlock(&sw->lock);
        predict_chunk(sw, wctx, k);
        pthread_mutex_lock(&sw->lock);
        sw->slot_chunk[k % sw->n_slots] = k + 1;
        if (sw->caller_waiting)
            pthread_cond_signal(&sw->ready_cond);
    }
}

/* Every item's config starts as the base (fill puts only the axes' keys). */
static void set_base(const ec_sweep *sw, item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        items[i].cfg = sw->base;
}

static int start(ec_sweep *sw)
{
    ec_ctx *ctx = sw->ctx;
    sw->started = 1;
    if (sw->n_axes == 0)
        return eci_error(ctx, EC_EINVAL, "a sweep has 1 to %d axes, got none", MAX_AXES);
    sw->share = share_of(sw);
    size_t t = (size_t)sw->opts.threads;
    if (t == 0) {
        t = (size_t)eci_workers_available();
        size_t by_size = sw->share / AUTO_POINTS_PER_THREAD + 1;
        if (t > by_size)
            t = by_size;
    }
    sw->chunk = sw->share / (t * CHUNKS_PER_THREAD);
    sw->chunk = sw->chunk < 1 ? 1 : sw->chunk > CHUNK_MAX ? CHUNK_MAX : sw->chunk;
    sw->n_chunks = sw->share / sw->chunk + (sw->share % sw->chunk != 0);
    if (t > sw->n_chunks)
        t = sw->n_chunks;
    if (t <= 1) {
        sw->threads = 1;
        sw->chunk = sw->share < ONE_THREAD_AHEAD ? sw->share : ONE_THREAD_AHEAD;
        sw->one = eci_malloc(ctx, sw->chunk * sizeof *sw->one);
        if (sw->one == NULL)
            return EC_ENOMEM;
        set_base(sw, sw->one, sw->chunk);
        return EC_OK;
    }
    sw->threads = (int)t; /* t - 1 workers and the caller */
    sw->n_slots = 2 * t + 2;
    sw->slots = eci_malloc(ctx, sw->n_slots * sw->chunk * sizeof *sw->slots);
    sw->slot_chunk = eci_calloc(ctx, sw->n_slots, sizeof *sw->slot_chunk);
    if (sw->slots == NULL || sw->slot_chunk == NULL)
        return EC_ENOMEM;
    set_base(sw, sw->slots, sw->n_slots * sw->chunk);
    pthread_mutex_init(&sw->lock, NULL);
    pthread_cond_init(&sw->free_cond, NULL);
    pthread_cond_init(&sw->ready_cond, NULL);
    sw->sync = 1;
    return eci_workers_start(ctx, (int)t - 1, work, sw, &sw->workers);
}

/* Stop the workers (early or at the end) and join them: EC_OK or a worker's failure. */
static int finish(ec_sweep *sw)
{
    if (sw->workers == NULL)
        return EC_OK;
    pthread_mutex_lock(&sw->lock);
    sw->stop = 1;
    pthread_cond_broadcast(&sw->free_cond);
    pthread_mutex_unlock(&sw->lock);
    int st = eci_workers_join(sw->workers);
    sw->workers = NULL;
    return st;
}

/* Several threads: make chunk `consumed` (the next to hand out) the caller's, freeing the one
 * it handed out.  While that chunk is not ready the caller predicts the next untaken chunk on
 * its own context, and sleeps only when every chunk it could take is being predicted.  Workers
 * waiting for a free slot are woken once half the ring is free, not at every chunk. */
static void next_chunk(ec_sweep *sw)
{
    pthread_mutex_lock(&sw->lock);
    if (sw->have_chunk) {
        sw->consumed++;
        if (sw->workers_waiting > 0 && (sw->next_chunk >= sw->n_chunks ||
                                        sw->consumed + sw->n_slots - sw->next_chunk >= sw->n_slots / 2))
            pthread_cond_broadcast(&sw->free_cond);
    }
    size_t k = sw->consumed;
    while (sw->slot_chunk[k % sw->n_slots] != k + 1) {
        if (can_take(sw)) {
            size_t j = sw->next_chunk++;
            pthread_mutex_unlock(&sw->lock);
            predict_chunk(sw, sw->ctx, j);
            pthread_mutex_lock(&sw->lock);
            sw->slot_chunk[j % sw->n_slots] = j + 1;
        } else {
            sw->caller_waiting = 1;
            pthread_cond_wait(&sw->ready_cond, &sw->lock);
            sw->caller_waiting = 0;
        }
    }
    pthread_mutex_unlock(&sw->lock);
    sw->have_chunk = 1;
    sw->cur_item = 0;
    sw->cur_items = sw->share - k * sw->chunk < sw->chunk ? sw->share - k * sw->chunk : sw->chunk;
}

int ec_sweep_next(ec_sweep *sw, ec_sweep_point *out)
{
    if (sw == NULL)
        return EC_EMISUSE;
    ec_ctx *ctx = sw->ctx;
    if (out == NULL)
        return eci_error(ctx, EC_EMISUSE, "ec_sweep_next: NULL argument");
    if (!sw->started) {
        int st = start(sw);
        if (st != EC_OK) {
            sw->done = 1;
            return st;
        }
    }
    if (sw->done || sw->pos >= sw->share) {
        sw->done = 1;
        return eci_error(ctx, EC_EMISUSE, "ec_sweep_next: the sweep is done (%zu points)", sw->pos);
    }
    item *it;
    if (sw->one != NULL) {
        if (sw->cur_item == sw->cur_items) /* the run is handed out: predict the next */
            predict_run(sw);
        it = &sw->one[sw->cur_item++];
    } else {
        if (!sw->have_chunk || sw->cur_item == sw->cur_items)
            next_chunk(sw);
        it = sw->slots + (sw->consumed % sw->n_slots) * sw->chunk + sw->cur_item++;
    }
    sw->pos++;
    if (sw->pos == sw->share)
        sw->done = 1;
    if (it->status == EC_ENOMEM || it->status == EC_EMISUSE) { /* the library, not the point: stop */
        sw->done = 1;
        finish(sw);
        return eci_error(ctx, it->status, "%s", it->msg);
    }
    if (sw->done) {
        int st = finish(sw);
        if (st != EC_OK)
            return st;
    }
    decompose(sw, it->index, sw->values);
    out->index = it->index;
    out->values = sw->values;
    out->config = &it->cfg;
    out->resolved = sw->opts.resolve && it->status == EC_OK ? &it->resolved : &it->cfg;
    out->status = it->status;
    out->result = &it->res;
    out->message = it->msg;
    return EC_OK;
}

int ec_sweep_done(const ec_sweep *sw)
{
    return sw == NULL || sw->done || (sw->n_axes > 0 && share_of(sw) <= sw->pos);
}

void ec_sweep_free(ec_sweep *sw)
{
    if (sw == NULL)
        return;
    ec_ctx *ctx = sw->ctx;
    finish(sw);
    if (sw->sync) {
        pthread_mutex_destroy(&sw->lock);
        pthread_cond_destroy(&sw->free_cond);
        pthread_cond_destroy(&sw->ready_cond);
    }
    eci_free(ctx, sw->slots, sw->n_slots * sw->chunk * sizeof *sw->slots);
    eci_free(ctx, sw->slot_chunk, sw->n_slots * sizeof *sw->slot_chunk);
    eci_free(ctx, sw->one, sw->chunk * sizeof *sw->one);
    for (size_t a = 0; a < sw->n_axes; a++)
        free_axis(ctx, &sw->axes[a]);
    eci_free(ctx, sw, sizeof *sw);
}
