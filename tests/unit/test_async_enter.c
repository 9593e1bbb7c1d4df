/*
 * Unit tests of the function the rewritten async methods call
 * (async/enter.h): the slot while rewritten frames nest, past the depth
 * kept, and a leave with nothing entered.
 */
#include <stdint.h>

#include "agent/agent_thread.h"
#include "agent/async/enter.h"
#include "agent/signal/achain.h"
#include "test.h"

/* Each enter points the slot at its home, each leave puts back the one
 * further out; past AGENT_ASYNC_NEST frames the slot is 0 (no chain
 * rather than a wrong one), counted, and the frames inside the limit get
 * theirs back on the way out (seen: the first leave past the limit put 0
 * back instead of the home of the last frame kept). */
static void test_async_enter_nesting(void)
{
    enum { DEEP = AGENT_ASYNC_NEST + 4 };
    uintptr_t homes[DEEP];
    uintptr_t *slot = achain_slot();
    REQUIRE(*slot == 0);
    uint64_t too_deep = async_enter_too_deep();
    for (int i = 0; i < DEEP; i++) {
        CHECK_EQ(async_enter((uintptr_t)&homes[i]), 0);
        CHECK_EQ(*slot, i < AGENT_ASYNC_NEST ? (uintptr_t)&homes[i] : 0);
    }
    CHECK_EQ(async_enter_too_deep(), too_deep + DEEP - AGENT_ASYNC_NEST);
    for (int i = DEEP - 1; i >= 0; i--) {
        CHECK_EQ(async_enter(0), 0);
        uintptr_t outer = i == 0 ? 0 : i - 1 < AGENT_ASYNC_NEST ? (uintptr_t)&homes[i - 1] : 0;
        CHECK_EQ(*slot, outer);
    }
    CHECK_EQ(agent_thread_get()->async.depth, 0);
    /* a leave with nothing entered changes nothing, and the next enter
     * starts from the outside again */
    async_enter(0);
    CHECK_EQ(*slot, 0);
    CHECK_EQ(agent_thread_get()->async.depth, 0);
    async_enter((uintptr_t)&homes[0]);
    CHECK_EQ(*slot, (uintptr_t)&homes[0]);
    async_enter(0);
    CHECK_EQ(*slot, 0);
}

void suite_async_enter(void)
{
    RUN(test_async_enter_nesting);
}
