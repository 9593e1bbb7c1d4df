/*
 * enter: see enter.h.
 */
#include "agent/async/enter.h"

#include <stdatomic.h>

#include "agent/agent_thread.h"
#include "agent/signal/achain.h"

static _Atomic uint64_t too_deep;

int32_t async_enter(uintptr_t home)
{
    uintptr_t *slot = achain_slot();
    if (home) {
        struct agent_thread *t = agent_thread_get();
        if (!t) {
            *slot = 0; /* counted by agent_thread_missing */
            return 0;
        }
        uint32_t d = t->async.depth++;
        if (d < AGENT_ASYNC_NEST) {
            t->async.homes[d] = home;
        } else {
            atomic_fetch_add_explicit(&too_deep, 1, memory_order_relaxed);
            home = 0; /* no chain rather than a wrong one: its home is not kept */
        }
    } else {
        struct agent_thread *t = agent_thread_peek();
        if (t && t->async.depth) {
            uint32_t d = --t->async.depth; /* frame d - 1 runs again */
            home = d && d - 1 < AGENT_ASYNC_NEST ? t->async.homes[d - 1] : 0;
        }
    }
    /* the handler reads the slot on this thread: the home is kept first */
    atomic_signal_fence(memory_order_seq_cst);
    *slot = home;
    return 0;
}

uint64_t async_enter_too_deep(void)
{
    return atomic_load_explicit(&too_deep, memory_order_relaxed);
}
