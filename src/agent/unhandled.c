/*
 * unhandled: see unhandled.h.  One request at a time: the first thread
 * whose exception goes unhandled waits for the loop; another one meanwhile
 * waits for the same answer.
 */
#include "agent/unhandled.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "agent/agent_thread.h"
#include "agent/signal/achain.h"
#include "agent/signal/fatal_signal.h"
#include "agent/source.h"
#include "common/clock.h"

enum { NONE, SEARCHING, CAUGHT };

static _Atomic int armed;
/* The agent's session (one per load or attach; a detach ends one): each
 * thread's block outlives a detach, and a throw seen by the last session
 * must not be taken up by the next, whose runtime interface is another
 * (the stored one is gone: an attach's first pass 2 of a throw seen before
 * the detach called it, and crashed the program). */
static _Atomic uint32_t session;
static _Atomic uint64_t requested, recorded; /* request numbers */
static uint64_t taken;                        /* the loop's: the request it answers */
static _Atomic uintptr_t request_class;
static _Atomic int request_by_probe;
static _Atomic int seen;
static _Atomic uint64_t thrown;
/* the runtime's last call is rewritten to tell us (unhandled_probe.h):
 * the passes' rule is not needed */
static _Atomic int probed;

/* Between the passes the runtime printed the exception: longer than this. */
#define UNHANDLED_GAP_NS 1000000ull
/* Pass 1 reads the clock every so many frames searched, not at each (the
 * search enters every frame of the stack, and the clock costs more than
 * the rest of this callback; perf of Events throw-bench under -e
 * exceptions: the per-frame reads were 1.5% of all samples).  The gap then
 * looks longer by the search of a few frames, microseconds against the
 * millisecond it is compared with.  A filter runs the program's code: its
 * end is always read. */
#define STAMP_EVERY 8

static void unwinding(ICorProfilerInfo15 *info, struct agent_unhandled *current);
static void request_and_wait(ClassID klass, int by_probe);

void unhandled_step(ICorProfilerInfo15 *info, int step, ObjectID object)
{
    if (step == SOURCE_EX_THROWN)
        atomic_fetch_add_explicit(&thrown, 1, memory_order_relaxed);
    /* the thread's exception (agent_thread.h); without a block (out of
     * memory: counted there) an unhandled one is not waited for */
    struct agent_thread *t = agent_thread_get();
    if (!t)
        return;
    struct agent_unhandled *current = &t->unhandled;
    switch (step) {
    case SOURCE_EX_THROWN:
        current->state = SEARCHING;
        current->object = object;
        /* its MethodTable (the ClassID of any object but an array's, and
         * an exception is none), read while the thread is in cooperative
         * mode and the object cannot move: by pass 2 the runtime may
         * refuse to say it */
        current->klass = object ? *(const uintptr_t *)object : 0;
        current->info = info;
        current->session = atomic_load(&session);
        current->pass1_ns = clock_now_ns();
        current->frames = 0;
        break;
    case SOURCE_EX_SEARCH_ENTER:
        /* the search goes on: the gap counts from its last steps */
        if (current->state == SEARCHING && ++current->frames >= STAMP_EVERY) {
            current->pass1_ns = clock_now_ns();
            current->frames = 0;
        }
        break;
    case SOURCE_EX_FILTER_LEAVE:
        if (current->state == SEARCHING) {
            current->pass1_ns = clock_now_ns();
            current->frames = 0;
        }
        break;
    case SOURCE_EX_SEARCH_CATCHER:
        current->state = CAUGHT;
        break;
    case SOURCE_EX_UNWIND_ENTER:
    case SOURCE_EX_UNWIND_LEAVE:
        unwinding(info, current);
        break;
    default:
        break;
    }
}

/* info: the interface the callback came with, valid while it runs (the
 * one stored at the throw may be another session's, gone). */
static void unwinding(ICorProfilerInfo15 *info, struct agent_unhandled *current)
{
    if (current->state != SEARCHING)
        return;
    /* pass 2 with no catch clause found in pass 1: unhandled, unless the
     * runtime went straight on (it catches it itself) */
    current->state = NONE;
    if (atomic_load(&probed) || !atomic_load(&armed) || !info || current->info != info ||
        current->session != atomic_load(&session) ||
        clock_now_ns() - current->pass1_ns <= UNHANDLED_GAP_NS)
        return;
    ClassID klass = 0;
    if (info->lpVtbl->GetClassFromObject(info, current->object, &klass) < 0)
        klass = current->klass; /* .NET 9 refuses it here (CORPROF_E_UNSUPPORTED_CALL_SEQUENCE) */
    request_and_wait(klass, 0);
}

/* Asks the loop to record everything and what ends the program, and
 * waits for it (at most FATAL_SIGNAL_WAIT_NS). */
static void request_and_wait(ClassID klass, int by_probe)
{
    if (!atomic_load(&armed))
        return;
    atomic_store(&request_class, (uintptr_t)klass);
    atomic_store(&request_by_probe, by_probe);
    uint64_t mine = atomic_fetch_add(&requested, 1) + 1;
    struct timespec step = {0, 1000000};
    for (uint64_t waited = 0; waited < FATAL_SIGNAL_WAIT_NS && atomic_load(&armed) &&
                              atomic_load(&recorded) < mine;
         waited += 1000000)
        nanosleep(&step, NULL);
}

void unhandled_probed(int on)
{
    atomic_store(&probed, on);
}

/* A collection under way may be moving the exception: its type is read
 * again after it, for at most this long. */
#define HIT_TYPE_WAIT_MS 200

int32_t unhandled_hit(uintptr_t home)
{
    uintptr_t mt = 0;
    struct timespec step = {0, 1000000};
    int got = 0;
    for (int waited = 0; home && waited < HIT_TYPE_WAIT_MS &&
                         (got = achain_object_type(home, &mt)) == 0;
         waited++)
        nanosleep(&step, NULL);
    request_and_wait(got == 1 ? (ClassID)mt : 0, 1);
    return 0;
}

void unhandled_arm(void)
{
    atomic_store(&armed, 1);
}

void unhandled_disarm(void)
{
    atomic_store(&armed, 0);
    atomic_fetch_add(&session, 1); /* what was seen so far belongs to the session that ends */
}

int unhandled_pending(ClassID *klass, int *by_probe)
{
    taken = atomic_load(&requested);
    if (taken == atomic_load(&recorded))
        return 0;
    *klass = (ClassID)atomic_load(&request_class);
    *by_probe = atomic_load(&request_by_probe);
    return 1;
}

void unhandled_recorded(void)
{
    atomic_store(&seen, 1);
    atomic_store(&recorded, taken);
}

int unhandled_seen(void)
{
    return atomic_load(&seen);
}

uint64_t unhandled_thrown(void)
{
    return atomic_load_explicit(&thrown, memory_order_relaxed);
}
