/*
 * trace.c: ec_trace_write, a Chrome Trace Event file (ui.perfetto.dev, chrome://tracing) of
 * the first steps of a simulated epoch.  The host's tracks (the main thread's waits and steps,
 * the pin-memory thread, each DataLoader worker) come from pipeline.c, which records them only
 * when asked.  The GPU's come from the step model itself: while the epoch is prepared, the
 * step model records one optimizer step (steprec.h: the compute stream's phases -- copy,
 * forward, backward, the exposed exchanges, the optimizer, the bookkeeping -- every FSDP unit's
 * all-gathers and reduce-scatter, every DDP bucket, each pipeline stage's micro-batches), and
 * each traced step is that record laid over the main thread's steps: the step's ga equal
 * slices of the record over its ga micro-batches, stretched to each one's simulated time (the
 * same when lengths are fixed), loader stalls between them.  An evaluation, when the run has
 * one, follows the traced steps.
 * Format: {"traceEvents": [...]} of complete events ("ph":"X", ts and dur in microseconds) and
 * "M" metadata naming every process and thread; written through the one output-file writer
 * (outfile.c), so a failure never leaves half a file.
 */
#include "sim/epoch.h"
#include "sim/predict.h"
#include "sim/steprec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_TRACE_STEPS 20
#define EVENTS_PER_STEP 8 /* wait/load + step + pin + build, and slack */

enum { PID_HOST = 1, PID_GPU = 2, PID_STAGES = 3 };
enum { TID_COMPUTE = 1, TID_COMM = 2 }; /* in PID_GPU */

/* The traced batches' spans (the main thread's "step" events) and the record laid over them. */
typedef struct layout {
    const eci_step_rec *rec;
    long steps;                  /* micro-batches traced */
    int ga;
    double *at_s, *wall_s;       /* per batch: start and length (-1: not traced) */
    double end_s;                /* end of the last traced batch */
} layout;

static int host_tid(int track)
{
    return track + 1;
}

/* Whole nanoseconds of a time (>= 0). */
static long long to_ns(double seconds)
{
    return llround(seconds > 0 ? seconds * 1e9 : 0);
}

/* Microseconds with three decimals, whatever the C locale's decimal point. */
static void put_us(FILE *f, long long ns)
{
    fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000);
}

static void meta(FILE *f, const char *what, int pid, int tid, const char *name)
{
    fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}", what, pid,
            tid, name);
}

static void sort_index(FILE *f, int pid, int tid, int index)
{
    fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":%d,"
               "\"args\":{\"sort_index\":%d}}", pid, tid, index);
}

/* A complete event's head up to its args' opening brace (names are the library's own texts).
 * Its start and end are rounded to the nanosecond each, so that slices that meet in the
 * simulation meet in the file (a viewer reads one that starts before the last ends as inside it). */
static void complete(FILE *f, const char *name, const char *cat, int pid, int tid, double start_s, double end_s)
{
    long long t0 = to_ns(start_s), t1 = to_ns(end_s);
    fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", name, cat, pid, tid);
    put_us(f, t0);
    fprintf(f, ",\"dur\":");
    put_us(f, t1 > t0 ? t1 - t0 : 0);
    fprintf(f, ",\"args\":{");
}

static void write_meta(FILE *f, const eci_pipe_in *in, const eci_step_rec *rec)
{
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"host\"}}",
            PID_HOST);
    meta(f, "process_name", PID_GPU, 0, "GPU 0");
    meta(f, "thread_name", PID_HOST, host_tid(ECI_TRACK_MAIN), "main thread (CPU dispatch)");
    sort_index(f, PID_HOST, host_tid(ECI_TRACK_MAIN), 0);
    if (in->pin_thread) {
        meta(f, "thread_name", PID_HOST, host_tid(ECI_TRACK_PIN), "pin-memory thread");
        sort_index(f, PID_HOST, host_tid(ECI_TRACK_PIN), 1);
    }
    for (int k = 0; k < in->num_workers; k++) {
        char name[40];
        snprintf(name, sizeof name, "DataLoader worker %d", k);
        meta(f, "thread_name", PID_HOST, host_tid(ECI_TRACK_WORKER0 + k), name);
        sort_index(f, PID_HOST, host_tid(ECI_TRACK_WORKER0 + k), 2 + k);
    }
    meta(f, "thread_name", PID_GPU, TID_COMPUTE, "GPU compute (step phases)");
    sort_index(f, PID_GPU, TID_COMPUTE, 0);
    meta(f, "thread_name", PID_GPU, TID_COMM, "communication (collectives)");
    sort_index(f, PID_GPU, TID_COMM, 1);
    if (rec->pp > 0) {
        meta(f, "process_name", PID_STAGES, 0, "pipeline stages");
        for (int s = 0; s < rec->pp; s++) {
            char name[64];
            snprintf(name, sizeof name, "stage %d (layers %d-%d)", s, rec->stage_first[s],
                     rec->stage_first[s] + rec->stage_layers[s] - 1);
            meta(f, "thread_name", PID_STAGES, s + 1, name);
            sort_index(f, PID_STAGES, s + 1, s);
        }
    }
}

/* Record time tau of optimizer step q on the trace's clock: slice k of the record (ga equal
 * slices) over batch q ga + k.  end: tau ends an event (a slice's end stays in its slice).
 * Beyond the traced batches: the last one's end. */
static double map_s(const layout *lo, long q, double tau, int end)
{
    double T = lo->rec->step_s, piece = T / lo->ga;
    double x = tau / piece;
    long k = end ? (long)ceil(x) - 1 : (long)floor(x);
    if (k < 0)
        k = 0;
    if (k > lo->ga - 1)
        k = lo->ga - 1;
    long j = q * lo->ga + k;
    if (j >= lo->steps || lo->at_s[j] < 0)
        return lo->end_s;
    double off = tau - k * piece;
    off = off < 0 ? 0 : off > piece ? piece : off;
    return lo->at_s[j] + off * lo->wall_s[j] / piece;
}

static void write_record_event(FILE *f, const layout *lo, long q, const eci_rec_event *e)
{
    long first = q * lo->ga + (e->micro >= 0 ? e->micro : 0);
    if (first >= lo->steps || lo->at_s[q * lo->ga] < 0)
        return;
    double t0 = map_s(lo, q, e->start_s, 0), t1 = map_s(lo, q, e->start_s + e->dur_s, e->dur_s > 0);
    if (t0 >= lo->end_s && e->dur_s > 0)
        return;
    int pid = e->track >= ECI_REC_STAGE0 ? PID_STAGES : PID_GPU;
    int tid = e->track >= ECI_REC_STAGE0 ? e->track - ECI_REC_STAGE0 + 1
              : e->track == ECI_REC_COMM  ? TID_COMM
                                          : TID_COMPUTE;
    complete(f, e->name, e->cat, pid, tid, t0, t1);
    fprintf(f, "\"step\":%ld", q);
    if (e->micro >= 0)
        fprintf(f, ",\"micro\":%d", e->micro);
    if (e->unit >= 0)
        fprintf(f, ",\"unit\":%d", e->unit);
    if (e->pass != NULL)
        fprintf(f, ",\"pass\":\"%s\"", e->pass);
    if (e->bytes > 0)
        fprintf(f, ",\"bytes\":%.0f", e->bytes);
    if (e->algo != NULL)
        fprintf(f, ",\"algorithm\":\"%s\"", e->algo);
    fprintf(f, ",\"model_dur_us\":");
    put_us(f, to_ns(e->dur_s));
    fprintf(f, "}}");
}

/* One evaluation after the traced steps: its batches at the model's evaluation step. */
static void write_eval(FILE *f, const layout *lo, const ec_config *cfg, const eci_resolved *r, double eval_step_s)
{
    if (cfg->eval_samples <= 0 || eval_step_s <= 0)
        return;
    double eval_batch = cfg->eval_batch > 0 ? cfg->eval_batch : cfg->batch_per_gpu;
    double batches = ceil(cfg->eval_samples / (eval_batch * r->dp));
    complete(f, "evaluation", "phase", PID_GPU, TID_COMPUTE, lo->end_s, lo->end_s + batches * eval_step_s);
    fprintf(f, "\"batches\":%.0f,\"every_steps\":%d}}", batches, cfg->eval_every_steps);
    for (long i = 0; i < batches && i < lo->steps; i++) {
        complete(f, "eval batch (forward)", "phase", PID_GPU, TID_COMPUTE, lo->end_s + i * eval_step_s,
                 lo->end_s + (i + 1) * eval_step_s);
        fprintf(f, "\"batch\":%ld,\"pass\":\"forward\"}}", i);
    }
}

static int write_json(FILE *f, const eci_trace_buf *buf, const eci_pipe_in *in, const layout *lo,
                      const ec_config *cfg, const eci_resolved *r, double eval_step_s)
{
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    write_meta(f, in, lo->rec);
    for (size_t i = 0; i < buf->n; i++) {
        const eci_trace_event *e = &buf->ev[i];
        complete(f, e->name, "host", PID_HOST, host_tid(e->track), e->start_s, e->start_s + e->dur_s);
        fprintf(f, "\"batch\":%ld}}", e->step);
    }
    const eci_step_rec *rec = lo->rec;
    for (long q = 0; q * lo->ga < lo->steps; q++) {
        if (rec->step_s > 0) {
            for (size_t i = 0; i < rec->n; i++)
                write_record_event(f, lo, q, &rec->ev[i]);
            continue;
        }
        for (long j = q * lo->ga; j < (q + 1) * lo->ga && j < lo->steps; j++) /* gpu_step_s without a model */
            if (lo->at_s[j] >= 0) {
                complete(f, "step (measured gpu_step_s)", "phase", PID_GPU, TID_COMPUTE, lo->at_s[j],
                         lo->at_s[j] + lo->wall_s[j]);
                fprintf(f, "\"step\":%ld,\"micro\":%ld}}", q, j - q * lo->ga);
            }
    }
    write_eval(f, lo, cfg, r, eval_step_s);
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}

/* Through the one output-file writer (outfile.c): a temporary beside path, renamed on commit. */
static int write_atomic(ec_ctx *ctx, const char *path, const eci_trace_buf *buf, const eci_pipe_in *in,
                        const layout *lo, const ec_config *cfg, const eci_resolved *r, double eval_step_s)
{
    ec_outfile *out;
    int rc = ec_outfile_open(ctx, path, &out);
    if (rc != EC_OK)
        return rc;
    FILE *f = eci_outfile_stream(out);
    errno = 0;
    if (write_json(f, buf, in, lo, cfg, r, eval_step_s) != 0) {
        rc = eci_outfile_fail(out, errno, "write");
        ec_outfile_abort(out);
        return rc;
    }
    return ec_outfile_commit(out);
}

/* Each traced batch's span from the main thread's "step" events. */
static void batch_spans(const eci_trace_buf *buf, layout *lo)
{
    for (long j = 0; j < lo->steps; j++)
        lo->at_s[j] = lo->wall_s[j] = -1;
    lo->end_s = 0;
    for (size_t i = 0; i < buf->n; i++) {
        const eci_trace_event *e = &buf->ev[i];
        if (e->track != ECI_TRACK_MAIN || strcmp(e->name, "step") != 0 || e->step >= lo->steps)
            continue;
        lo->at_s[e->step] = e->start_s;
        lo->wall_s[e->step] = e->dur_s;
        if (e->start_s + e->dur_s > lo->end_s)
            lo->end_s = e->start_s + e->dur_s;
    }
}

/* The epoch prepared with the step model recording (rec), the loader simulated for `steps`
 * batches (buf), the file written. */
static int trace_run(ec_ctx *ctx, const ec_config *cfg, const char *path, int max_steps, eci_pipe_in *in,
                     eci_step_rec *rec, eci_trace_buf *buf, layout *lo, eci_lengths **l)
{
    ec_result top;
    eci_resolved r;
    eci_params calib_buf;
    const eci_params *calib;
    rec->ctx = ctx;
    rec->max_micro = max_steps;
    ctx->step_rec = rec;
    int rc = eci_epoch_prepare(ctx, cfg, NULL, in, &top, l, &r, &calib_buf, &calib);
    ctx->step_rec = NULL;
    if (rc == EC_OK && rec->nomem)
        rc = eci_error(ctx, EC_ENOMEM, "trace: out of memory recording the step");
    if (rc != EC_OK)
        return rc;
    long steps = in->steps > 0 && in->steps < max_steps ? in->steps : max_steps;
    buf->cap = (size_t)steps * EVENTS_PER_STEP + (size_t)in->num_workers;
    buf->max_steps = steps;
    if ((buf->ev = eci_calloc(ctx, buf->cap, sizeof *buf->ev)) == NULL)
        return EC_ENOMEM;
    in->trace = buf;
    eci_pipe_run_out o;
    if ((rc = eci_pipe_run(ctx, in, steps, 0, NULL, &o)) != EC_OK)
        return rc;
    lo->rec = rec;
    lo->steps = steps;
    lo->ga = cfg->grad_accum > 0 ? cfg->grad_accum : 1;
    if ((lo->at_s = eci_calloc(ctx, 2 * (size_t)steps, sizeof *lo->at_s)) == NULL)
        return EC_ENOMEM;
    lo->wall_s = lo->at_s + steps;
    batch_spans(buf, lo);
    return write_atomic(ctx, path, buf, in, lo, cfg, &r, top.eval_step_s);
}

int ec_trace_write(ec_ctx *ctx, const ec_config *cfg, const char *path, int max_steps)
{
    if (ctx == NULL || cfg == NULL || path == NULL)
        return ctx != NULL ? eci_error(ctx, EC_EMISUSE, "ec_trace_write: NULL argument") : EC_EMISUSE;
    if (max_steps <= 0)
        max_steps = DEFAULT_TRACE_STEPS;
    if (max_steps > EC_TRACE_MAX_STEPS)
        return eci_error(ctx, EC_EINVAL, "trace: %d steps asked, at most %d (a trace that long is a file of "
                         "hundreds of MB no viewer opens)", max_steps, EC_TRACE_MAX_STEPS);
    eci_pipe_in *in = eci_malloc(ctx, sizeof *in);
    eci_step_rec *rec = eci_calloc(ctx, 1, sizeof *rec);
    int rc = EC_ENOMEM;
    eci_lengths *l = NULL;
    eci_trace_buf buf = {0};
    layout lo = {0};
    if (in != NULL && rec != NULL)
        rc = trace_run(ctx, cfg, path, max_steps, in, rec, &buf, &lo, &l);
    eci_free(ctx, lo.at_s, lo.steps * 2 * sizeof *lo.at_s);
    eci_free(ctx, buf.ev, buf.cap * sizeof *buf.ev);
    eci_lengths_free(ctx, l);
    if (rec != NULL)
        eci_rec_free(rec);
    eci_free(ctx, rec, sizeof *rec);
    eci_free(ctx, in, sizeof *in);
    return rc;
}
