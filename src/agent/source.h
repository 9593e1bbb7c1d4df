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

/* The exception callbacks, in the order the runtime makes them on the
 * throwing thread (pass 1 searches for a catcher, pass 2 unwinds to it). */
enum source_exception_step {
    SOURCE_EX_THROWN,          /* ExceptionThrown(object): cooperative mode */
    SOURCE_EX_SEARCH_CATCHER,  /* ExceptionSearchCatcherFound(function) */
    SOURCE_EX_FILTER_ENTER,    /* ExceptionSearchFilterEnter(function): preemptive */
    SOURCE_EX_FILTER_LEAVE,
    SOURCE_EX_UNWIND_ENTER,    /* ExceptionUnwindFunctionEnter(function): cooperative */
    SOURCE_EX_UNWIND_LEAVE,
    SOURCE_EX_FINALLY_ENTER,   /* ExceptionUnwindFinallyEnter(function) */
    SOURCE_EX_CATCHER_ENTER,   /* ExceptionCatcherEnter(function, object) */
    SOURCE_EX_CATCHER_LEAVE,
    SOURCE_EX_SEARCH_ENTER,    /* ExceptionSearchFunctionEnter(function): preemptive */
};

/* What is being loaded (ClassLoad*, ModuleLoad*, AssemblyLoad*). */
enum source_load_kind { SOURCE_LOAD_ASSEMBLY = 1, SOURCE_LOAD_MODULE = 2, SOURCE_LOAD_CLASS = 3 };

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
    /* on the throwing thread; function and object 0 where the callback has none */
    void (*exception)(struct source *s, enum source_exception_step step, FunctionID function,
                      ObjectID object);
    /* JITCachedFunctionSearchStarted/Finished: ReadyToRun code looked up
     * (finished: result is the runtime's answer) */
    void (*jit_cache_search)(struct source *s, FunctionID f, int finished,
                             COR_PRF_JIT_CACHE result);
    /* *LoadStarted / *LoadFinished, on the loading thread */
    void (*load)(struct source *s, enum source_load_kind kind, int finished, uintptr_t id,
                 HRESULT status);
    /* ThreadNameChanged, on the thread that set the name */
    void (*thread_renamed)(struct source *s, ThreadID thread, const char *utf8_name);
    /* ModuleUnloadStarted: its ids (and its types' ClassIDs) will be reused */
    void (*module_unloading)(struct source *s, ModuleID module);
    /* every allocation (COR_PRF_MONITOR_OBJECT_ALLOCATED, claimed in init),
     * on the allocating thread, the object built and protected */
    void (*object_allocated)(struct source *s, ObjectID object, ClassID klass);
    /* JITInlining: a source may refuse (set *should_inline to FALSE),
     * never grant */
    void (*jit_inlining)(struct source *s, FunctionID caller, FunctionID callee,
                         BOOL *should_inline);
    /* GetReJITParameters for a method a source asked to be rejitted: it
     * gives the new body through control and returns S_OK; a failure
     * return means "not mine" */
    HRESULT (*rejit_parameters)(struct source *s, ModuleID module, mdMethodDef method,
                                ICorProfilerFunctionControl *control);
    /* ReJITError */
    void (*rejit_error)(struct source *s, ModuleID module, mdMethodDef method, HRESULT status);
    /* JITCachedFunctionSearchStarted: a source may refuse the method's
     * ReadyToRun code (set *use_cached to FALSE: it is compiled), never
     * grant it */
    void (*r2r_lookup)(struct source *s, FunctionID f, BOOL *use_cached);
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
HIDDEN extern const struct source_ops source_exceptions;  /* -e exceptions */
HIDDEN extern const struct source_ops source_lock;        /* -e lock */
HIDDEN extern const struct source_ops source_jit;         /* -e jit */
HIDDEN extern const struct source_ops source_thread_events;     /* always: threads' lives */
HIDDEN extern const struct source_ops source_alloc;       /* alloc and live: allocations, live objects */
HIDDEN extern const struct source_ops source_gc;          /* gc: collections, pauses, heap sizes */
HIDDEN extern const struct source_ops source_trace;       /* --trace: calls, Enter/Leave hooks */
HIDDEN extern const struct source_ops source_trace_flat;  /* --trace=flat: calls per method, IL */
HIDDEN extern const struct source_ops source_async;       /* --async: logical async stacks */
HIDDEN extern const struct source_ops source_async_snapshots; /* --async=snapshots: pending ops */
HIDDEN extern const struct source_ops source_cover;       /* corscope cover: IL probes, counters */
HIDDEN extern const struct source_ops source_watch;       /* corscope watch: live probes by ReJIT */

#endif
