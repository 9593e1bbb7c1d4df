/*
 * The findings of a code review (issue 20), each reproduced here as it
 * happened: an allocation failing at the wrong moment (mem_fail_after), a
 * library unloaded during a lookup, a queue nothing drains.  Each test
 * failed before its fix.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agent/evq.h"
#include "agent/signal/mcode.h"
#include "agent/signal/slots.h"
#include "common/mem.h"
#include "test.h"

/* ---- 1: a publication whose snapshot cannot be allocated ------------------ */

#define MANY_RANGES 8192u
#define RANGE_BASE ((uintptr_t)0x7a0000000000)

static struct mcode_entry range_at(size_t i)
{
    struct mcode_entry e;
    memset(&e, 0, sizeof e);
    e.start = RANGE_BASE + 16 * i;
    e.fn_start = e.start;
    e.len = 12;
    e.permanent = 1; /* known = 0: found, with no shape */
    return e;
}

/* Every range of the table is found but those below `removed` and, when
 * `and_next`, the range at `removed`. */
static int table_intact(size_t removed, int and_next)
{
    struct mcode_hit h;
    for (size_t i = 0; i < MANY_RANGES; i++) {
        enum mcode_found f = mcode_find(RANGE_BASE + 16 * i + 3, &h);
        enum mcode_found want =
            i < removed || (i == removed && and_next) ? MCODE_NONE : MCODE_NO_SHAPE;
        if (f != want || (f == MCODE_NO_SHAPE && h.lo != RANGE_BASE + 16 * i))
            return 0;
    }
    return 1;
}

/* The large array is over glibc's mmap threshold (fixed here, not dynamic),
 * so an array freed under the snapshot is unmapped: the lookup after it
 * crashes in the plain build too, not only under ASan. */
static void test_mcode_publish_out_of_memory(void)
{
    REQUIRE(slots_init() == 0);
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    for (size_t i = 0; i < MANY_RANGES; i++) {
        struct mcode_entry e = range_at(i);
        mcode_add(&e);
    }
    mcode_publish(); /* merged: one large array */
    CHECK_EQ(mcode_ranges(), MANY_RANGES);
    CHECK(table_intact(0, 0));
    /* a removal rebuilds the large array; fail each allocation of the
     * publication in turn (the snapshot and the array; a third would be the
     * reclaimer's record, whose failure leaks by design): the published
     * table stays whole and readable after the reclaimer has freed what it
     * was given */
    size_t gone = 0;
    for (long n = 1; n <= 2; n++, gone++) {
        mcode_remove(RANGE_BASE + 16 * gone);
        mem_fail_after(n, 0);
        mcode_publish();
        mem_fail_after(0, 0);
        slots_reclaim();
        /* earlier removals are visible; this one may or may not be */
        CHECK(table_intact(gone, 0) || table_intact(gone, 1));
        mcode_publish(); /* whatever failed is published now */
        slots_reclaim();
        CHECK(table_intact(gone, 1));
    }
    CHECK_EQ(mcode_ranges(), MANY_RANGES - gone);
    mcode_shutdown();
    slots_reclaim();
    slots_shutdown();
}

/* ---- 3: --alloc exact waiting on a queue nothing drains -------------------- */

/* A thread fills its queue (nothing drains it) until there is no room for
 * an entry; then the queues are paused, as a halted recording pauses them:
 * the room an allocation of --alloc exact waits for (evq_room) must be
 * there at once, or it waits its 50 ms at every allocation from then on. */
static void *fill_then_pause(void *arg)
{
    int *answers = arg;
    uint64_t v = 0;
    for (int i = 0; i < 1000000 && evq_room(64); i++, v++)
        evq_push(3, 1, &v, 1, 0);
    answers[0] = evq_room(64);
    evq_pause();
    answers[1] = evq_room(64);
    return NULL;
}

static void drop_entry(void *ctx, const struct evq_entry *e)
{
    (void)ctx, (void)e;
}

static void test_no_wait_once_paused(void)
{
    evq_open();
    int answers[2] = {-1, -1};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, fill_then_pause, answers) == 0);
    pthread_join(t, NULL);
    CHECK_EQ(answers[0], 0); /* full: an allocation would wait for the loop */
    CHECK_EQ(answers[1], 1); /* paused: nothing would ever drain it */
    evq_drain(drop_entry, NULL, UINT64_MAX);
    evq_shutdown();
}

void suite_review(void)
{
    RUN(test_mcode_publish_out_of_memory);
    RUN(test_no_wait_once_paused);
}
