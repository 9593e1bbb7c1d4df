/*
 * heap: the async operations pending in the process, read from its GC heap
 * (ICorProfilerInfo15::EnumerateGCHeapObjects, .NET 9 and later), like SOS
 * dumpasync on a live process.
 *
 * With the runtime suspended (the caller suspends it), every object of the
 * heap is looked at: a state machine box (types.h) that has not finished,
 * or a pending Task that shows in logical stacks (Task.WhenAll's promise),
 * is an operation; its state (<>1__state: which await it is stopped at,
 * -1 running) is read, and its chain of continuations is followed
 * (signal/achain.h's rules) to the next operation, which awaits it, or to
 * what ends the chain (a thread blocked in .Result: [blocking wait]).
 * Only types the loop classified before are followed: the walk makes no
 * runtime call but the enumeration itself; MethodTables it does not know
 * are handed back, for the loop to classify once the runtime runs again
 * (a first walk learns, a second one reads).
 *
 * A pooled ValueTask box is pending while something awaits it (its
 * continuation is set): a finished one goes back to its pool looking like
 * a fresh one.
 */
#ifndef CORSCOPE_ASYNC_HEAP_H
#define CORSCOPE_ASYNC_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/map.h"
#include "common/visibility.h"

struct heap_op {
    ObjectID object;
    uint64_t mt;
    int32_t state;      /* the state machine's <>1__state, INT32_MIN unknown (not a box) */
    ObjectID awaiter;   /* the next operation up the chain, 0 none */
    uint32_t end_frame; /* what the chain ends at when no operation awaits it ([blocking
                         * wait]), 0 none */
};

struct heap_snapshot {
    struct heap_op *ops;
    size_t count, cap;
    struct map64 unknown; /* MethodTables met that no type says anything of yet */
    uint64_t objects;     /* objects the walk looked at */
    int failed;           /* out of memory: the snapshot is partial */
};

HIDDEN void heap_snapshot_init(struct heap_snapshot *s);
HIDDEN void heap_snapshot_free(struct heap_snapshot *s);
/* The runtime suspended: walks the heap into s (emptied first).  Returns
 * the enumeration's HRESULT. */
HIDDEN HRESULT heap_walk(ICorProfilerInfo15 *info, struct heap_snapshot *s);

#endif
