/*
 * attach: what the loop does for an agent that came into a running process
 * (InitializeForAttach) or that leaves one that goes on running: the
 * catch-up on the code compiled before it came, the status it sends the
 * corscope command, and the detach.
 *
 * The detach runs at the end of the loop thread, after the sources have
 * stopped (every clock deleted, every perf fd closed, no more signals sent)
 * and everything taken was drained: the recording is closed with its
 * trailer, the EventPipe session and the event mask are turned off, and the
 * runtime is asked to detach (RequestProfilerDetach, from this thread of
 * ours, never from a callback).  The loop thread then ends; the runtime
 * calls ProfilerDetachSucceeded once no callback is running, and that
 * joins this thread and frees the rest (profiler.c).  When the runtime
 * refuses (a profiler that set something it cannot undo), the agent stays
 * loaded and dormant: no thread, no clock, no events asked for.
 */
#include <stdio.h>

#include "agent/agent.h"
#include "agent/codemap.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "agent/log.h"
#include "agent/control_client.h"
#include "common/clock.h"

/* The hint RequestProfilerDetach takes: how long until no callback runs.
 * Ours return at once; the runtime waits at least 300 ms whatever this
 * says, and checks again every 2x this after that. */
#define DETACH_HINT_MS 100

void agent_catch_up(struct agent *a)
{
    uint64_t t0 = clock_now_ns();
    size_t methods = codemap_catch_up();
    recorder_count(&a->out, FMT_COUNTER_ATTACH_METHODS, methods);
    recorder_count(&a->out, FMT_COUNTER_ATTACH_THREADS, atomic_load(&a->threads_listed));
    log_info("attached: %zu methods compiled before the attach listed in %.1f ms", methods,
             (double)(clock_now_ns() - t0) / 1e6);
}

static void counts(struct agent *a, struct control_counts *c)
{
    c->samples = a->out.counters[FMT_COUNTER_SAMPLES];
    c->events = a->out.counters[FMT_COUNTER_EVENTS];
    c->dropped = a->out.counters[FMT_COUNTER_DROPPED] + a->out.counters[FMT_COUNTER_DROPPED_EVENTS];
    c->bytes = a->out.file_size;
}

void agent_send_status(struct agent *a)
{
    if (!control_client_connected())
        return;
    struct control_counts c;
    counts(a, &c);
    control_client_send_counts(CONTROL_STATUS, &c);
}

void agent_detach(struct agent *a)
{
    recorder_close(&a->out);
    struct control_counts c;
    counts(a, &c);
    control_client_send_counts(CONTROL_CLOSED, &c);
    log_info("recording closed: %s", a->output);
    eventpipe_stop(a->info);
    if (atomic_load(&a->stopping))
        return; /* Shutdown came meanwhile: the runtime is ending, not detaching us */
    /* no more callbacks wanted while the runtime waits for the last ones */
    HRESULT hr = a->info->lpVtbl->SetEventMask2(a->info, 0, 0);
    if (hr < 0)
        log_debug("SetEventMask2(0) before the detach: 0x%08x", (unsigned)hr);
    hr = a->info->lpVtbl->RequestProfilerDetach(a->info, DETACH_HINT_MS);
    if (hr >= 0) {
        a->detach_requested = 1;
        return;
    }
    const char *why = hr == CORPROF_E_IRREVERSIBLE_INSTRUMENTATION_PRESENT
                          ? "code was instrumented in a way the runtime cannot undo"
                      : hr == CORPROF_E_IMMUTABLE_FLAGS_SET
                          ? "settings were made that the runtime cannot undo"
                          : "the runtime refused";
    char text[160];
    snprintf(text, sizeof text, "the agent cannot detach (%s, 0x%08x); it stays loaded, doing "
             "nothing, until the process ends", why, (unsigned)hr);
    log_warn("%s", text);
    control_client_send("dormant %s", text);
    a->dormant = 1;
}
