/*
 * Tests of stack_bounds (agent/signal/stack_bounds.h): a thread is looked up
 * only in a snapshot of /proc/self/maps read after it was added.
 */

#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "test.h"

/* The stale-snapshot bug: a thread added after a snapshot of the mappings
 * was read must not take its stack bounds from it (an older snapshot may
 * hold a mapping since unmapped where the new stack now is, with other
 * bounds); it needs a snapshot read after it. */
static void test_stack_bounds_need_a_recent_snapshot(void)
{
    REQUIRE(thread_rings_init() == 0);
    REQUIRE(stack_bounds_refresh() == 0);
    uint64_t g = stack_bounds_generation();
    int local = 0;
    uintptr_t at = (uintptr_t)&local, lo = 0, hi = 0;
    CHECK(stack_bounds_find(at, &lo, &hi, g) == 1 && lo <= at && at < hi);
    lo = hi = 0;
    CHECK(stack_bounds_find(at, &lo, &hi, g + 1) == 0); /* a thread added since */
    CHECK(lo == 0 && hi == 0);
    CHECK(stack_bounds_wanted());                       /* and a refresh is asked for */
    REQUIRE(stack_bounds_refresh() == 0);
    CHECK_EQ(stack_bounds_generation(), g + 1);
    CHECK(!stack_bounds_wanted());
    CHECK(stack_bounds_find(at, &lo, &hi, g + 1) == 1 && lo <= at && at < hi);
    stack_bounds_shutdown();
    thread_rings_shutdown();
}

void suite_stack_bounds(void)
{
    RUN(test_stack_bounds_need_a_recent_snapshot);
}
