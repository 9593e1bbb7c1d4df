/*
 * types: what each object of an async chain is, learned on the loop from
 * the MethodTables the handler recorded (a MethodTable is the profiling
 * API's ClassID), and taught to the handler (signal/achain.h's table).
 *
 * A type is classified once, by its name and its ancestors' names in the
 * metadata (GetClassIDInfo2, IMetaDataImport), and the offsets of the
 * fields to follow come from GetClassLayout by field name, never assumed:
 *
 *   AsyncStateMachineBox<T, TSM> (and its debugger subclass)
 *       an async method: its frame is TSM.MoveNext ("[async] Chain.B" once
 *       the report names it as written); it goes on to m_continuationObject,
 *       or, for an async iterator (a class TSM with <>v__promiseOfValueOrEnd),
 *       to whoever awaits the ValueTask<bool> of its MoveNextAsync
 *   PoolingAsyncValueTaskMethodBuilder<T>.StateMachineBox<TSM>
 *       the same; the awaiter is its ValueTask source's continuation state
 *   other Tasks                 m_continuationObject (WhenAll and WhenAny's
 *                               promises are shown as [async] Task.WhenAll...)
 *   delegates (Action)          _target
 *   AwaitTaskContinuation and its synchronization-context kinds: m_action
 *   ContinueWithTaskContinuation: m_task; ContinuationWrapper: _continuation
 *   List<object>                its first continuation
 *   SetOnInvokeMres             a thread blocked in Wait or .Result: the end,
 *                               shown as [blocking wait]
 *   anything else               the end, not shown
 *
 * Runtime calls happen inside codemap_ids_begin/end (a type of a
 * collectible assembly is asked about only if nothing was unloaded since
 * the sample), and what was learned is forgotten at every unload.
 */
#ifndef CORSCOPE_ASYNC_TYPES_H
#define CORSCOPE_ASYNC_TYPES_H

#include <stdint.h>

#include "agent/signal/achain.h"
#include "clr/clr_interfaces.h"
#include "common/visibility.h"

struct agent;

/* What the loop knows of one MethodTable. */
struct async_node {
    uint8_t kind;       /* enum achain_kind, 0 when it could not be classified */
    uint8_t pooling;    /* a pooled ValueTask box (not a Task) */
    uint8_t class_sm;   /* a box whose state machine is a class (state[0] holds a
                         * reference to it), not a struct inside the box */
    uint32_t frame;     /* the frame it shows as rootward of the sample, 0 none */
    uint32_t method;    /* a box: the frame of its state machine's MoveNext */
    FunctionID move_next; /* ... and its FunctionID, 0 unknown */
    struct achain_type how; /* how a chain goes on from it (path, alt) */
    int32_t flags;      /* a Task: where m_stateFlags is, -1 none */
    int32_t state[2];   /* a box: its StateMachine field, and <>1__state in the
                         * state machine; -1 unknown */
};

/* A Task's m_stateFlags bits of a finished task (RanToCompletion,
 * Faulted, Canceled: TaskStateFlags in Task.cs). */
#define ASYNC_TASK_DONE 0x1600000u

/* Loop: the node of a MethodTable a chain recorded at seen_ns (classified
 * now if new); NULL when it cannot be known (unloaded since, or the runtime
 * could not say). */
HIDDEN const struct async_node *async_node_of(struct agent *a, uint64_t mt, uint64_t seen_ns);
/* Loop or a heap walk (the runtime suspended): the node of a MethodTable
 * classified before, NULL when not (yet) known; no runtime call. */
HIDDEN const struct async_node *async_node_known(uint64_t mt);
/* Loop: classes were unloaded: forget every type (both tables). */
HIDDEN void async_types_forget(void);
HIDDEN void async_types_free(void);
/* Types the handler's table had no room for. */
HIDDEN uint64_t async_types_unplaced(void);

#endif
