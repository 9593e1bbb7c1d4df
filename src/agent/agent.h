/*
 * agent: the profiler inside the profiled process: its settings, the
 * sources of events it drives, and the one thread that records (the loop).
 *
 * The loop (agent.c) is a native thread started from Initialize with every
 * signal blocked; it never runs managed code.  Each cycle it brings the
 * shared tables up to date (native unwind tables, the code map, thread
 * names), lets every source do its periodic work, hands the entries the
 * callbacks queued (evq.h) to their sources, and writes the recording.
 * It holds no lock that a runtime callback waits for across I/O or other
 * unbounded work: the callbacks queue and return; the only lock they may
 * wait for (codemap's ids lock) is held for one method's questions to the
 * runtime at a time.  At the end it stops the sources, drains what is
 * left and closes the recording; a loop stuck in a write (a stalled disk)
 * is left behind rather than hold up the program's exit.
 *
 * One agent per process.  Fields are written during Initialize, before the
 * loop starts, and read-only afterwards, except where noted.
 */
#ifndef CORSCOPE_AGENT_H
#define CORSCOPE_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent/names.h"
#include "agent/recorder.h"
#include "agent/resolve.h"
#include "agent/source.h"
#include "agent/thread_ids.h"
#include "clr/clr_interfaces.h"
#include "common/config.h"
#include "common/visibility.h"

#define AGENT_MAX_SOURCES 16

/* The lowest ICorProfilerInfo the agent loads with (.NET Core 3.1): the
 * highest version whose methods it calls without asking.  A method of a
 * later version is called only where its function checks info_version, or
 * says "needs ICorProfilerInfoN" and its callers check (a unit test holds
 * every call to this). */
#define AGENT_INFO_MIN 11

struct agent {
    struct config cfg;
    char output[4096];         /* cfg.output with %p expanded */
    ICorProfilerInfo15 *info;  /* the highest version the runtime offers */
    int info_version;          /* at least AGENT_INFO_MIN: use only its slots */
    int runtime_major;         /* the runtime's major version (GetRuntimeInformation), 0 unknown */
    char runtime_text[192];    /* "10.0.0.0 (10.0.0), ICorProfilerInfo15" for the recording */
    struct source sources[AGENT_MAX_SOURCES];
    uint32_t source_count;
    DWORD mask, high_mask;     /* the event mask the sources asked for */

    /* the loop's own while it runs (Shutdown's after it stopped) */
    struct recorder out;
    struct names names;
    struct resolver resolver;
    struct thread_ids thread_ids;

    /* attach and detach (attach.c) */
    int attached;              /* InitializeForAttach: settings from its client data */
    uint64_t init_began_ns;    /* when Initialize (or InitializeForAttach) was called */
    uint64_t thrown_before;    /* unhandled_thrown() then: the recording counts from it */
    int thrown_counted;        /* the exception callbacks came from the start (the count holds) */
    uint64_t switches_before;  /* os_process_switches() then, likewise */
    _Atomic int catch_up;      /* the attach completed: list what was there before */
    _Atomic uint32_t threads_listed; /* ... of which these threads (AttachComplete) */
    _Atomic int detaching;     /* corscope asked to stop (or is gone): detach at the end */
    _Atomic pid_t loop_tid;    /* the loop thread's (0 before it runs): the runtime makes it
                                * one of its threads when it asks for a ReJIT, and it is
                                * not one of the program's */
    int detach_requested;      /* the runtime took the request (DetachSucceeded follows) */
    int dormant;               /* the runtime refused it: no loop, until the next session
                                * comes (rendezvous.h, lifecycle_resume) */

    pthread_t loop;
    int loop_started;
    int halted;                /* the recording failed: nothing more is collected */
    _Atomic int stopping;      /* Shutdown asked the loop to finish */
    _Atomic int poked;         /* threads appeared: the sources should look now */
    _Atomic int hurried;       /* a callback's queue fills: drain now */
    _Atomic uint64_t write_since_ns; /* the loop is inside a write since then, 0 when not */
    int wake_made;             /* wake_lock and the condition are made (once) */
    pthread_mutex_t wake_lock; /* guards agent_sync's counters; the loop sleeps in loop_wake */
    pthread_cond_t synced;     /* the loop wrote what agent_sync asked for */
    uint64_t sync_asked, sync_done; /* under wake_lock */
};

/* Initialize: picks the sources the settings ask for and lets each claim
 * its event-mask bits (a->mask, a->high_mask).  Returns 0, or -1 (logged). */
HIDDEN int agent_init_sources(struct agent *a);
/* Whether the signal sampler names the runtime's work (labels: the Frame
 * chain, class loads, ReadyToRun lookups, suspensions). */
HIDDEN int agent_labels(const struct agent *a);
/* Initialize, after the recording is open: starts the loop.  0 or -1. */
HIDDEN int agent_start(struct agent *a);
/* Shutdown: stops the loop and lets it close the recording.  Returns 0, or
 * -1 when it had to be left behind (then it still owns the recorder). */
HIDDEN int agent_stop(struct agent *a);

/* Any thread: wakes the loop early (a new thread to take care of).
 * Returns at once. */
HIDDEN void agent_poke(struct agent *a);
/* Any thread (a callback whose queue is filling, evq_pressed): wakes the
 * loop for a cycle now.  Returns at once. */
HIDDEN void agent_hurry(struct agent *a);
/* Any thread, only when the program is about to end without telling us
 * (an unhandled exception, which aborts the process): has the loop record
 * and write everything queued so far, waiting at most timeout_ns for it.
 * Every other callback never waits for the loop.  Returns 0 when written,
 * -1 when the loop is not running or did not finish in time. */
HIDDEN int agent_sync(struct agent *a, uint64_t timeout_ns);

/* Any thread: has the loop run a cycle (drain the queues) now rather than
 * at its next time.  Returns at once. */
HIDDEN void agent_hurry(struct agent *a);

/* Loop: applies what the callbacks reported about code (codemap_update),
 * recording what preceded each unload first.  Returns the time up to which
 * the code map is complete. */
HIDDEN uint64_t agent_update_code(struct agent *a);
/* Loop: has every source record what was taken before `until` (drain).
 * Returns the callbacks' events among it (evq_drain's count). */
HIDDEN uint64_t agent_drain(struct agent *a, uint64_t until);

#endif
