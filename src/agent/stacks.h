/*
 * stacks: frames in, a stack of the recording out, the same way for every
 * source.  A source resolves its instruction pointers (resolve.h) into a
 * builder, leaf first; stacks_finish then
 *   - drops the agent's own frames at the leaf (a stack walked in a
 *     callback starts inside corscope) and, when asked, the runtime's
 *     frames above the first managed one (the allocation or throw
 *     machinery an event's stack starts in);
 *   - adds label frames for what the runtime was doing on the thread
 *     (activity.h): how the thread entered the runtime ("[prepare]
 *     Type.Method", "[interface dispatch]"), placed just leafward of the
 *     managed frame that made the transition; then what the callbacks
 *     said it is doing ("[JIT] Type.Method", "[load type] T") and the
 *     collection it runs ("[GC gen0]"), placed just leafward of the
 *     innermost managed frame, where the program handed control to the
 *     runtime.  A sample in managed code gets none: it is the program's;
 *   - puts the event's own label at the leaf, when it has one ("[alloc]
 *     System.Byte[]": what an allocation made is the leaf of its stack);
 *   - ends a walk that stopped early in [unknown] and one cut at the depth
 *     limit in [truncated], counting both;
 *   - first of all, replaces what lies above a resumed async method with
 *     the methods awaiting it, when the walk read its chain
 *     (async/compose.h);
 *   - deduplicates the stack in the recording.
 */
#ifndef CORSCOPE_STACKS_H
#define CORSCOPE_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/signal/activity.h"
#include "common/visibility.h"

struct agent;
struct async_chain;

struct stackb {
    uint32_t *frames; /* leaf first */
    size_t cap;
    uint32_t n;
    int failed;       /* out of memory: the stack is dropped */
};

struct stack_meta {
    uint64_t seen_ns;        /* CLOCK_MONOTONIC time it was taken */
    pid_t tid;
    uint64_t activity;       /* the thread's innermost activity word, 0 = none */
    uint64_t activity_outer; /* its outermost one */
    uint64_t gc;             /* the process's GC word */
    uint32_t walk_flags;     /* enum walk_flags */
    int trim_runtime;        /* drop runtime frames above the first managed one (2: and
                              * every frame when there is none) */
    uint32_t leaf;           /* a label frame put at the leaf once the agent's and
                              * the runtime's frames are gone ("[alloc] System.Byte[]"), 0 = none */
    /* a logical async stack (async/compose.h): the chain the walk saw and
     * the addresses the frames were resolved from; NULL = none */
    const struct async_chain *chain;
    const uint64_t *ips;
};

HIDDEN void stackb_reset(struct stackb *b);
HIDDEN void stackb_put(struct stackb *b, uint32_t frame);
HIDDEN void stackb_free(struct stackb *b);
/* Whether a walk's frames (resolved, before stacks_finish trims the
 * agent's own at the leaf) pass through the agent's code: a sample taken
 * in its callbacks or hooks, or in the runtime's work they asked for. */
HIDDEN int stackb_in_agent(const struct agent *a, const struct stackb *b);

/* Loop: the recording's id of the built stack, or 0 when it was dropped
 * (counted). */
HIDDEN uint32_t stacks_finish(struct agent *a, struct stackb *b, const struct stack_meta *m);
/* The same for a sample that saw the thread's innermost runtime frame
 * (activity.h; NULL as none). */
HIDDEN uint32_t stacks_finish_sample(struct agent *a, struct stackb *b, const struct stack_meta *m,
                                     const struct activity_frame *frame);
struct evq_entry;
/* What stacks_of_event drops at the leaf of an event's stack, besides the
 * agent's own frames: the machinery that raised the event, not the code
 * the event is about. */
enum stacks_trim {
    STACKS_TRIM_RUNTIME = 1,   /* the runtime's native frames above the first managed one */
    STACKS_TRIM_NO_MANAGED = 2, /* every frame, when none is managed (a runtime thread) */
    STACKS_TRIM_MACHINERY = 4, /* and its managed machinery at the leaf: the exception
                                * dispatch (System.Runtime.EH), the runtime's event source */
};
/* Loop: the recording's stack of an event a callback queued with its
 * thread's stack (evq.h): its addresses resolved, trimmed (a set of enum
 * stacks_trim), then, when not 0, `leaf` (a label frame: "[throw]
 * System.IO.IOException") as the leaf.  0 when the stack was dropped
 * (counted). */
HIDDEN uint32_t stacks_of_event(struct agent *a, struct stackb *b, const struct evq_entry *e,
                                unsigned trim, uint32_t leaf);
/* Loop: runtime ids named in labels may be reused (code was unloaded). */
HIDDEN void stacks_forget(void);
HIDDEN void stacks_shutdown(void);

#endif
