/*
 * compose: a sample's or an event's real stack and its async chain
 * (signal/achain.h) made into the logical stack the recording keeps.
 *
 * The real stack, leaf first, runs up to the frame that resumed the
 * running async method (the `runner`: the frame holding the slot's local,
 * a rewritten MoveNext or Task.ExecuteWithThreadLocal), and on to the
 * thread pool's dispatch loop or whatever completed the awaited operation.
 * What stays: the frames leafward of the runner, without the runtime's
 * glue between it and the method (ExecutionContext.RunInternal, the box's
 * callbacks, Task.InnerInvoke); the resumed method itself (its MoveNext,
 * put back from the box when the JIT inlined it into the glue); then, one
 * per object of the chain that shows, the methods awaiting it, innermost
 * first: "[async] Chain.B", "[async] Chain.A", "[async] Task.WhenAll",
 * "[blocking wait]".  What the runner's callers were is dropped: the
 * logical stack replaces it.
 *
 * A chain whose runner the walk did not reach (it stopped below) leaves
 * the stack as it was.
 */
#ifndef CORSCOPE_ASYNC_COMPOSE_H
#define CORSCOPE_ASYNC_COMPOSE_H

#include <stdint.h>

#include "common/visibility.h"

struct agent;
struct stackb;

struct async_chain {
    const uint64_t *mts; /* MethodTables, the running object first */
    uint32_t count;
    uint32_t end;        /* enum achain_end */
    uint32_t runner;     /* index of the runner's frame in the real stack; UINT32_MAX unknown */
};

/* Loop: b holds the real stack's frames (leaf first), resolved from ips
 * (the same count: b->n); seen_ns when it was taken.  Returns 1 when the
 * stack was replaced above the runner (so a walk's early stop above it no
 * longer matters), 0 when left as it was. */
HIDDEN int async_compose(struct agent *a, struct stackb *b, const uint64_t *ips,
                         const struct async_chain *c, uint64_t seen_ns);
HIDDEN void async_compose_forget(void);

#endif
