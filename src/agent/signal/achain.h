/*
 * achain: the logical async stack of a thread, read where it runs (the
 * signal handler, or a callback walking its own stack).
 *
 * After an `await` that yields, an async method goes on later on whatever
 * thread completes what it awaited: its real stack starts at the thread
 * pool's dispatch loop, and the methods that awaited it are on no stack.
 * They are in the heap: the runtime resumes a method through its state
 * machine box (a Task), and the box's m_continuationObject is what awaits
 * it (the box of the awaiting method, an Action whose target is that box,
 * a list of such, a combinator's promise...), and so on up.
 *
 * Where: the runtime methods that resume async code are rewritten
 * (async/rewrite.h) to point this thread's slot (one initial-exec TLS
 * word, set through async/enter.h) at the home of their `this`, the
 * object they run, in their frame, while they run, nesting.  The home is a
 * GC reference the runtime updates when a collection moves the object.
 *
 * How to follow each object: a table from MethodTable (the first word of
 * every object; the profiling API's ClassID) to what the object is and the
 * offsets of the reference to follow, filled by the loop (async/types.h)
 * with offsets the runtime gave by name.  The handler records the
 * MethodTables of the chain, the running object first; one the table does
 * not know yet ends the chain, and the loop learns it for the next
 * samples.
 *
 * Safety: objects move, and collections mark MethodTables, only while the
 * runtime is suspended (RuntimeSuspendStarted to RuntimeResumeFinished,
 * which move a sequence count): during a suspension nothing is read (the
 * thread that triggered a collection runs it, in cooperative mode, and
 * may be the one interrupted).  Otherwise a thread in cooperative mode
 * (running managed code: Thread::m_fPreemptiveGCDisabled, found through
 * the runtime's contract descriptor) cannot be interrupted by a suspension
 * that completes while it is in the handler, so the handler reads the heap
 * directly.  Elsewhere (native code, a wait, a runtime without the
 * descriptor) every read goes through process_vm_readv, which fails
 * instead of faulting.  Either way the read is kept only when no
 * suspension began meanwhile, and a MethodTable that is not aligned ends
 * the chain as a failed read.  So a chain is never read from a heap in
 * motion, and the MethodTables recorded (which the loop hands to the
 * runtime) are real ones.
 */
#ifndef CORSCOPE_ACHAIN_H
#define CORSCOPE_ACHAIN_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/visibility.h"

/* Most objects one chain holds (the running one included). */
#define ACHAIN_MAX 64

/* What an object of a type is, for the chain. */
enum achain_kind {
    ACHAIN_BOX = 1,     /* a state machine box: an async method (follow: its continuation) */
    ACHAIN_TASK = 2,    /* another Task (follow: its continuation) */
    ACHAIN_FOLLOW = 3,  /* a delegate, a continuation object, a wrapper: follow one reference */
    ACHAIN_LIST = 4,    /* List<object>: several continuations; follow the first */
    ACHAIN_END = 5,     /* something the chain ends at (a synchronous wait, the
                         * completion sentinel, an unknown kind of continuation) */
};

/* Why a chain ended (the entry's end). */
enum achain_end {
    ACHAIN_END_NONE = 0,    /* nothing awaits the last object (yet) */
    ACHAIN_END_KNOWN = 1,   /* at an object of an ACHAIN_END type */
    ACHAIN_END_UNKNOWN = 2, /* at a type the table does not know yet (the last MethodTable) */
    ACHAIN_END_LIMIT = 3,   /* ACHAIN_MAX objects */
    ACHAIN_END_FAULT = 4,   /* a read failed (an object went away under a guarded read) */
};

/* A type of the table.  `path` is read as: p = object; for each offset
 * until a negative one: p = *(p + offset).  `alt` is the same, tried when
 * `path` gives 0 (an async iterator's box: its consumer awaits a
 * ValueTask the state machine completes, not the box).  For a list,
 * path[0] is the items array's field and path[1] the count's. */
struct achain_type {
    _Atomic uintptr_t mt; /* 0: free; written last */
    uint32_t kind;        /* enum achain_kind */
    int32_t path[2];
    int32_t alt[2];
};

/* Where a list's items start in its array (x64 and arm64 alike: the
 * MethodTable, then the length, padded to 8 bytes). */
#define ACHAIN_ARRAY_DATA 16

/* The calling thread's slot, for async/enter.h, which the rewritten
 * methods call to set it (the handler reads it on the same thread). */
HIDDEN uintptr_t *achain_slot(void);

/* Loop: maps the table (once per process; kept across attaches). */
HIDDEN int achain_init(void);
/* Loop: a type (replacing one of the same MethodTable).  0, or -1 when
 * the table is full (counted by the caller). */
HIDDEN int achain_type_put(const struct achain_type *t);
/* Loop: forgets every type (classes were unloaded: MethodTables may be
 * reused). */
HIDDEN void achain_types_clear(void);
/* The offset of Thread::m_fPreemptiveGCDisabled (the contract descriptor),
 * or -1 when unknown. */
HIDDEN void achain_set_coop_offset(int32_t offset);
/* The runtime's suspension callbacks (any thread): Started, and Finished
 * or Aborted. */
HIDDEN void achain_suspend_begin(void);
HIDDEN void achain_suspend_end(void);
/* Chains read so far that were dropped because a suspension overlapped
 * them. */
HIDDEN uint64_t achain_discarded(void);
/* Tests: the system calls guarded reads have made. */
HIDDEN uint64_t achain_kernel_reads(void);

/* A thread in native code (a calli's GC transition) reading the runtime
 * type of the object whose reference is at home (in its caller's frame,
 * GC-reported): *mt its MethodTable (the profiling API's ClassID).  Read
 * through process_vm_readv, kept only when no suspension began meanwhile.
 * Returns 1, 0 while the runtime is suspended (a collection may be moving
 * it: ask again later), or -1 when the reads failed. */
HIDDEN int achain_object_type(uintptr_t home, uintptr_t *mt);

/* Handler or own-thread walker: reads the chain of the calling thread.
 * sp, hi: the thread's stack (the home the slot points at must lie
 * inside); thread: its runtime Thread* (0 unknown: guarded reads).  Writes
 * up to max MethodTables into mts; *local: the address of that home (in
 * the frame running the first object), *end: enum achain_end.  Returns
 * the count, 0 when nothing is running or the chain was dropped. */
HIDDEN uint32_t achain_read(uintptr_t sp, uintptr_t hi, uintptr_t thread, uint64_t *mts,
                            uint32_t max, uintptr_t *local, uint32_t *end);

#endif
