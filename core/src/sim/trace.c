/*
 * trace.c: ec_trace_write, a Chrome Trace Event file (chrome://tracing, ui.perfetto.dev) of
 * the first steps of a simulated epoch: the main thread's CPU dispatch and waits, the GPU's
 * kernels, the host-to-device copies, exposed communication, the pin-memory thread and each
 * DataLoader worker.  The events come from pipeline.c, which records them only when asked;
 * the per-step GPU, copy and communication times come from the step model (step.c).
 * Format: a JSON object {"traceEvents": [...]} of complete events ("ph":"X", ts and dur in
 * microseconds) and "M" metadata naming the processes and threads.  Written through the one
 * output-file writer (outfile.c), so a failure never leaves half a file.
 */
#include "sim/pipeline.h"
#include "sim/predict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#define DEFAULT_TRACE_STEPS 20
#define EVENTS_PER_STEP 10 /* wait/load + step + copy + kernels + comm + overlapped + pin + build, and slack */

enum { PID_HOST = 1, PID_GPU = 2 };

static int track_pid(int track)
{
    return track == ECI_TRACK_GPU || track == ECI_TRACK_H2D || track == ECI_TRACK_COMM || track == ECI_TRACK_OVERLAP
               ? PID_GPU
               : PID_HOST;
}

static void track_name(int track, char *buf, size_t n)
{
    static const char *const names[] = {"main thread (CPU dispatch)", "GPU compute", "H2D copy", "communication",
                                        "collectives overlapped", "pin-memory thread"};
    if (track < ECI_TRACK_WORKER0)
        snprintf(buf, n, "%s", names[track]);
    else
        snprintf(buf, n, "DataLoader worker %d", track - ECI_TRACK_WORKER0);
}

/* Microseconds with three decimals, whatever the C locale's decimal point. */
static void put_us(FILE *f, double seconds)
{
    long long ns = llround(seconds > 0 ? seconds * 1e9 : 0);
    fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000);
}

static int write_json(FILE *f, const eci_trace_buf *buf, int n_tracks)
{
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"host\"}},\n", PID_HOST);
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"GPU 0\"}}", PID_GPU);
    for (int t = 0; t < n_tracks; t++) {
        char name[64];
        track_name(t, name, sizeof name);
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                track_pid(t), t + 1, name);
        fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                track_pid(t), t + 1, t);
    }
    for (size_t i = 0; i < buf->n; i++) {
        const eci_trace_event *e = &buf->ev[i];
        fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"epochcast\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", e->name,
                track_pid(e->track), e->track + 1);
        put_us(f, e->start_s);
        fprintf(f, ",\"dur\":");
        put_us(f, e->dur_s);
        fprintf(f, ",\"args\":{\"step\":%ld}}", e->step);
    }
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}

/* Through the one output-file writer (outfile.c): a temporary beside path, renamed on commit. */
static int write_atomic(ec_ctx *ctx, const char *path, const eci_trace_buf *buf, int n_tracks)
{
    ec_outfile *out;
    int rc = ec_outfile_open(ctx, path, &out);
    if (rc != EC_OK)
        return rc;
    FILE *f = eci_outfile_stream(out);
    errno = 0;
    if (write_json(f, buf, n_tracks) != 0) {
        rc = eci_outfile_fail(out, errno, "write");
        ec_outfile_abort(out);
        return rc;
    }
    return ec_outfile_commit(out);
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
    if (in == NULL)
        return EC_ENOMEM;
    eci_lengths *l = NULL;
    ec_result top;
    eci_trace_buf buf = {0};
    int rc = eci_pipe_prepare(ctx, cfg, NULL, in, &top, &l);
    if (rc == EC_OK) {
        long steps = in->steps > 0 && in->steps < max_steps ? in->steps : max_steps;
        buf.cap = (size_t)steps * EVENTS_PER_STEP;
        buf.max_steps = steps;
        if ((buf.ev = eci_calloc(ctx, buf.cap, sizeof *buf.ev)) == NULL)
            rc = EC_ENOMEM;
        in->trace = &buf;
        eci_pipe_run_out o;
        if (rc == EC_OK)
            rc = eci_pipe_run(ctx, in, steps, 0, NULL, &o);
        if (rc == EC_OK)
            rc = write_atomic(ctx, path, &buf, ECI_TRACK_WORKER0 + in->num_workers);
    }
    eci_free(ctx, buf.ev, buf.cap * sizeof *buf.ev);
    eci_lengths_free(ctx, l);
    eci_free(ctx, in, sizeof *in);
    return rc;
}
