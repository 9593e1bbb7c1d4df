/*
 * Tests of stack_bounds (agent/signal/stack_bounds.h): a thread is looked up
 * only in a snapshot of /proc/self/maps read after it was added; where the
 * kernel answers for one address, it is asked instead and the file is
 * never read (the thread's own stack included).
 */
#include <fcntl.h>
#include <unistd.h>

#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/vma_query.h"
#include "common/procmaps.h"
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

/* With the kernel's answers: any generation is served at once, a refresh
 * reads nothing, and the thread's own stack is the mapping /proc/self/maps
 * would give (the snapshot's), without a read. */
static void test_stack_bounds_from_the_kernel(void)
{
    REQUIRE(thread_rings_init() == 0);
    REQUIRE(stack_bounds_refresh() == 0); /* the file's snapshot, to compare */
    int local = 0;
    uintptr_t at = (uintptr_t)&local, file_lo = 0, file_hi = 0, lo = 0, hi = 0;
    uint64_t g = stack_bounds_generation();
    REQUIRE(stack_bounds_find(at, &file_lo, &file_hi, g) == 1);
    uintptr_t own_lo = 0, own_hi = 0;
    CHECK(stack_bounds_own(&own_lo, &own_hi) == 1 && own_lo <= at && at < own_hi);
    if (!vma_query_start(open("/proc/self/maps", O_RDONLY | O_CLOEXEC))) {
        stack_bounds_shutdown();
        thread_rings_shutdown();
        return; /* an older kernel: test_vma_query says whether it should */
    }
    uint64_t reads = procmaps_reads();
    /* the main thread's stack may have grown down since: its end is fixed */
    CHECK(stack_bounds_find(at, &lo, &hi, g + 5) == 1 && lo <= at);
    CHECK_EQ(hi, file_hi);
    CHECK(!stack_bounds_wanted());
    CHECK(stack_bounds_find((uintptr_t)&stack_bounds_find, &lo, &hi, g) == 0); /* code: not rw */
    CHECK(!stack_bounds_wanted());
    CHECK(stack_bounds_refresh() == 0);
    CHECK_EQ(stack_bounds_generation(), g + 1);
    own_lo = own_hi = 0;
    CHECK(stack_bounds_own(&own_lo, &own_hi) == 1 && own_lo <= at);
    CHECK_EQ(own_hi, file_hi);
    CHECK_EQ(procmaps_reads(), reads);
    /* the kernel refusing (as before 6.11): the snapshot again */
    vma_query_test_refuse(1);
    CHECK(stack_bounds_find(at, &lo, &hi, g + 1) == 0); /* none of that generation yet */
    CHECK(stack_bounds_wanted());
    CHECK(stack_bounds_refresh() == 0);
    CHECK_EQ(procmaps_reads(), reads + 1);
    CHECK(stack_bounds_find(at, &lo, &hi, g + 1) == 1 && lo <= at && hi == file_hi);
    vma_query_test_refuse(0);
    vma_query_stop();
    stack_bounds_shutdown();
    thread_rings_shutdown();
}

void suite_stack_bounds(void)
{
    RUN(test_stack_bounds_need_a_recent_snapshot);
    RUN(test_stack_bounds_from_the_kernel);
}
