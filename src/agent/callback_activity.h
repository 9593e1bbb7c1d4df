/*
 * callback_activity: what each thread is doing inside the runtime, as the
 * runtime's callbacks tell it (a compile, a ReadyToRun lookup, a type,
 * assembly or module load, a suspension, a collection), kept per thread as
 * a small stack of activities and published to signal/activity.h, where
 * the signal handler reads it to label the samples taken in the runtime's
 * own code ([JIT] M, [load type] T, [GC gen0] ...).  Called only from the
 * callbacks (profiler.c), on the thread the activity happens on, and only
 * when labels are wanted (the signal sampler).
 *
 * A load may end on another thread than the one that began it (a load is
 * finished by the thread that takes it through its last step, and the
 * loser of a race to load an assembly gets only the unload callbacks of
 * its discarded copy): ends and unloads end it wherever it was begun
 * (callback_activity.c says how).
 *
 * Each activity is kept with the address of the callback frame that began
 * it.  The runtime does not always report an end: a ReadyToRun lookup
 * whose fixups fail or throw has no JITCachedFunctionSearchFinished, and
 * failed loads may lack theirs.  Two rules keep such work from being named
 * after it ended:
 *   - the stack discipline: a callback running shallower in the stack than
 *     the one that began an activity proves that the runtime function
 *     which began it has returned, so that activity is over;
 *   - a method whose ReadyToRun code was rejected is compiled next: its
 *     JITCompilationStarted ends its lookup.
 */
#ifndef CORSCOPE_CALLBACK_ACTIVITY_H
#define CORSCOPE_CALLBACK_ACTIVITY_H

#include <stdint.h>
#include <sys/types.h>

#include "agent/signal/activity.h"
#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* Initialize: a new run; what threads kept from an earlier attach (the
 * library and its thread-locals outlive a detach) is stale from now on. */
HIDDEN void callback_activity_new_run(void);
/* The calling thread's OS thread id (kept per thread). */
HIDDEN pid_t callback_activity_tid(void);
/* An activity begins or ends on the calling thread.  `frame` is the
 * calling callback's own frame address (__builtin_frame_address(0) in the
 * callback the runtime called), so the frames of two callbacks compare as
 * their callers' depths do. */
HIDDEN void callback_activity_begin(enum activity_kind kind, uint64_t subject, uintptr_t frame);
HIDDEN void callback_activity_end(enum activity_kind kind, uint64_t subject, uintptr_t frame);
/* The suspension begun on this thread is over (resumed or aborted). */
HIDDEN void callback_activity_pause_end(void);
/* A collection starts (GarbageCollectionStarted's arguments). */
HIDDEN void callback_activity_gc_started(int generations, const BOOL collected[],
                                         COR_PRF_GC_REASON reason);

#endif
