/*
 * source: the one shape every source of events has (the signal sampler,
 * the stop-the-world sampler, allocations, collections, exceptions, ...).
 *
 * A source is a table of operations the agent drives; the agent owns the
 * only thread that records (the loop, agent.c) and the only dispatch of the
 * runtime's callbacks (profiler.c).  A source never calls another source,
 * and only the loop writes the recording.  Its life:
 *
 *   init      Initialize, on the runtime's thread: claims the event-mask
 *             bits and runtime hooks it needs; failure makes the agent
 *             decline to load (logged).
 *   start     the loop thread, before its first cycle: defines its events
 *             in the recording, starts clocks.
 *   cycle     the loop thread, every cycle: its periodic work (ticks);
 *             returns the latest time (CLOCK_MONOTONIC ns) it wants the next
 *             cycle at, or 0 for no wish.
 *   entry     the loop thread: one entry the source put in a thread's event
 *             queue (evq.h) from a callback, to be turned into records.
 *   poked     the loop thread, woken early: the runtime reported new
 *             threads (a cheap look, between cycles).
 *   drain     the loop thread: record everything buffered that was taken
 *             before `until` (CLOCK_MONOTONIC ns), and nothing later: the
 *             code map is current up to that time (every method that ran
 *             before it was reported), and an unload at that time must not
 *             be applied before what preceded it is named.
 *   stop      the loop thread: stop producing (clocks off); a drain follows.
 *   finish    the loop thread, last: release everything.
 * Every member may be NULL.  Callbacks reach a source through `hooks`:
 * they run on the program's threads, must return quickly, never wait for
 * the loop, and hand data to the loop through evq.h or the source's own
 * lock-free buffers.
 */
#ifndef CORSCOPE_SOURCE_H
#define CORSCOPE_SOURCE_H

#include <stdint.h>
#include <sys/types.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

struct agent;
struct source;
struct evq_entry;

/* The runtime's callbacks a source may take (any thread; see above). */
struct source_hooks {
    void (*thread_created)(struct source *s, ThreadID thread);
    void (*thread_destroyed)(struct source *s, ThreadID thread);
    void (*thread_os_assigned)(struct source *s, ThreadID thread, pid_t tid);
    void (*jit_started)(struct source *s, FunctionID f, int dynamic);
    void (*jit_finished)(struct source *s, FunctionID f, HRESULT status, int dynamic);
    void (*gc_started)(struct source *s, int generations, const BOOL *collected,
                       COR_PRF_GC_REASON reason);
    void (*gc_finished)(struct source *s);
    void (*eventpipe_event)(struct source *s, EVENTPIPE_PROVIDER provider, DWORD event_id,
                            DWORD version, const BYTE *payload, ULONG payload_size,
                            ThreadID thread);
    /* JITInlining: a source may refuse (set *should_inline to FALSE),
     * never grant */
    void (*jit_inlining)(struct source *s, FunctionID caller, FunctionID callee,
                         BOOL *should_inline);
    /* the exception unwinder (COR_PRF_MONITOR_EXCEPTIONS), on the thread */
    void (*exception_unwind_enter)(struct source *s, FunctionID function);
    void (*exception_unwind_leave)(struct source *s);
    void (*exception_catcher_enter)(struct source *s, FunctionID function);
};

struct source_ops {
    const char *name;
    int (*init)(struct agent *a, struct source *s, DWORD *mask, DWORD *high);
    int (*start)(struct agent *a, struct source *s);
    uint64_t (*cycle)(struct agent *a, struct source *s, uint64_t now);
    void (*entry)(struct agent *a, struct source *s, const struct evq_entry *e);
    void (*poked)(struct agent *a, struct source *s);
    void (*drain)(struct agent *a, struct source *s, uint64_t until);
    void (*stop)(struct agent *a, struct source *s);
    void (*finish)(struct agent *a, struct source *s);
    const struct source_hooks *hooks;
};

struct source {
    const struct source_ops *ops;
    struct agent *agent;
    uint32_t index; /* in agent.sources: the tag of its evq entries */
    void *state;    /* the source's own */
};

/* The sources, one table each (in src/agent/sources). */
HIDDEN extern const struct source_ops source_cpu_signal;  /* cpu or wall, signal sampler */
HIDDEN extern const struct source_ops source_cpu_suspend; /* cpu or wall, stop-the-world sampler */
HIDDEN extern const struct source_ops source_trace;       /* --trace: calls, Enter/Leave hooks */

#endif
