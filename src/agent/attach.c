/*
 * attach: see attach.h.
 */
#include "agent/attach.h"

#include <stdio.h>

#include "agent/codemap.h"
#include "agent/control_client.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "agent/log.h"
#include "common/clock.h"

/* The hint RequestProfilerDetach takes: how long until no callback runs.
 * Ours return at once; the runtime waits at least 300 ms whatever this
 * says, and checks again every 2x this after that. */
#define DETACH_HINT_MS 100

void attach_catch_up(struct agent *a)
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

void attach_send_status(struct agent *a)
{
    if (!control_client_connected())
        return;
    struct control_counts c;
    counts(a, &c);
    control_client_send_counts(CONTROL_STATUS, &c);
}

void attach_detach(struct agent *a)
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
    char text[256];
    snprintf(text, sizeof text, "the agent cannot detach (%s, 0x%08x); it stays loaded, "
             "dormant, and takes the next `corscope watch -p` of this process", why, (unsigned)hr);
    log_debug("%s", text); /* corscope shows the message below */
    control_client_send("dormant %s", text);
    a->dormant = 1;
}
