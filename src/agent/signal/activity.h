/*
 * activity: what the runtime is doing on each thread, for the samples taken
 * meanwhile.  The runtime's own libraries have no symbols, so a sample in
 * them says nothing by its addresses; but the agent is told when a thread
 * starts and ends compiling a method, loading a type, an assembly or a
 * module, or collecting garbage.  Those callbacks run on the thread doing
 * the work and publish it here; the signal handler copies it into each
 * sample (ring.h), and the collector turns it into a label frame ("[JIT]
 * Type.Method", "[GC gen2 induced]").
 *
 * Per thread: a table indexed by thread id (sized by pid_max, mapped
 * lazily) of words: the innermost and the outermost activity, and the
 * thread's runtime Thread object (below); only the thread itself writes its
 * activities (callbacks on one thread nest but do not interleave), and the
 * handler reads them on that same thread, so plain atomic stores and loads
 * suffice.  An activity word is its kind in the
 * top 8 bits and a runtime id (FunctionID, ClassID, AssemblyID, ModuleID)
 * in the low 56.  Process-wide: the garbage collection in progress, one
 * word (its generation, reason, a sequence number and the collecting
 * thread), set from GarbageCollectionStarted to ...Finished.
 *
 * And what no callback says: how the thread entered the runtime.  The
 * handler reads the thread's innermost explicit frame of the runtime
 * (Thread::m_pFrame, with the layout the runtime describes: clrdesc.h):
 * its kind, the return address into the managed code that made the
 * transition, and the method a prestub or call-counting frame is for.
 * Each thread's Thread object is published here by the thread itself
 * (ThreadAssignedToOSThread) and withdrawn when it dies (ThreadDestroyed),
 * so the handler reads only a live Thread of its own thread, and frames
 * only inside the interrupted stack.
 */
#ifndef CORSCOPE_ACTIVITY_H
#define CORSCOPE_ACTIVITY_H

#include <stdint.h>
#include <sys/types.h>

#include "agent/clrdesc.h"
#include "common/visibility.h"

enum activity_kind {
    ACTIVITY_NONE = 0,
    ACTIVITY_JIT = 1,           /* subject: FunctionID being compiled */
    ACTIVITY_LOAD_TYPE = 2,     /* ClassID being loaded */
    ACTIVITY_LOAD_ASSEMBLY = 3, /* AssemblyID */
    ACTIVITY_LOAD_MODULE = 4,   /* ModuleID */
    ACTIVITY_R2R_LOOKUP = 5,    /* FunctionID whose ReadyToRun code is being looked up */
    ACTIVITY_PAUSE = 6,         /* this thread suspends the runtime (COR_PRF_SUSPEND_REASON) */
    ACTIVITY_KIND_COUNT
};

#define ACTIVITY_SUBJECT_MASK ((1ull << 56) - 1)

static inline uint64_t activity_word(enum activity_kind kind, uint64_t subject)
{
    return (uint64_t)kind << 56 | (subject & ACTIVITY_SUBJECT_MASK);
}
static inline enum activity_kind activity_kind_of(uint64_t word)
{
    return (enum activity_kind)(word >> 56);
}
static inline uint64_t activity_subject(uint64_t word)
{
    return word & ACTIVITY_SUBJECT_MASK;
}

/* The GC word: sequence (bits 32-63, never 0 while a GC runs), the
 * collecting thread's tid (8-31, truncated to 24 bits), reason (4-7) and
 * generation (0-3); 0 when no collection is in progress. */
static inline uint64_t activity_gc_word(uint32_t seq, pid_t tid, unsigned reason, unsigned gen)
{
    return (uint64_t)seq << 32 | ((uint64_t)tid & 0xffffff) << 8 | (reason & 15u) << 4 |
           (gen & 15u);
}

/* Maps the table (Initialize).  Returns 0 or -1. */
HIDDEN int activity_init(void);

/* The calling thread (a callback): its current activities. */
HIDDEN void activity_set(pid_t tid, uint64_t inner, uint64_t outer);
/* Another thread: the activity `word` of thread tid is over (the runtime
 * ended it on the calling thread).  If tid's published words name it,
 * they are cleared (its samples go unlabelled, not mislabelled, until it
 * publishes again). */
HIDDEN void activity_clear_named(pid_t tid, uint64_t word);
HIDDEN void activity_gc_set(uint64_t word);

/* The agent's thread, before its sampler starts: the runtime's frame
 * layout (copied; the first usable one stays).  Until then no frame is
 * read. */
HIDDEN void activity_set_frame_layout(const struct clrdesc_frames *layout);
/* The calling thread: its runtime Thread object; forgotten when the
 * Thread is destroyed (ThreadDestroyed, with the Thread still valid; tid
 * is the calling thread's), wherever a slot still holds it. */
HIDDEN void activity_set_thread(pid_t tid, uintptr_t thread);
HIDDEN void activity_forget_thread(pid_t tid, uintptr_t thread);

/* The innermost runtime frame of a thread, as the handler saw it. */
struct activity_frame {
    uint64_t kind;   /* enum clr_frame_kind */
    uint64_t ret;    /* return address into the managed caller, 0 unknown */
    uint64_t method; /* MethodDesc of a prestub or call-counting frame, 0 none; not validated */
};

/* Handler (async-signal-safe). */
HIDDEN void activity_get(pid_t tid, uint64_t *inner, uint64_t *outer);
HIDDEN uint64_t activity_gc_get(void);
/* Reads only inside [sp, hi), the interrupted thread's stack. */
HIDDEN void activity_frame_get(pid_t tid, uintptr_t sp, uintptr_t hi, struct activity_frame *out);

#endif
