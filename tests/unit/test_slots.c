/*
 * Tests of the signal sampler's reclamation (agent/signal/slots.c): nothing
 * a handler may still be using is freed under it.  A "handler" here is
 * slots_handler_enter/leave called on the test's thread for a made-up tid,
 * which is all the handler does with the slots; the interleavings that
 * matter are played in order: a thread or a table retired while a handler
 * that entered before is still in, and a tid that comes back (the kernel
 * reuses thread ids) while its old state waits to be freed.
 */
#include "agent/signal/slots.h"
#include "test.h"

#define TID_A 4001
#define TID_B 4002

static int objects_freed;

static void count_free(void *p)
{
    (void)p;
    objects_freed++;
}

/* A thread retired while a handler on it is in stays until it leaves. */
static void test_retired_thread_waits_for_handler(void)
{
    REQUIRE(slots_init() == 0);
    struct sthread *t = slots_add(TID_A, 1, 64);
    REQUIRE(t);
    CHECK(slots_handler_enter(TID_A) == t);
    slots_retire(t);
    CHECK(slots_lookup(TID_A) == NULL);
    slots_reclaim();
    CHECK_EQ(slots_retired_pending(), 1);
    CHECK_EQ(atomic_load(&t->state), STHREAD_DEAD); /* still there (ASan: not freed) */
    slots_handler_leave(TID_A);
    slots_reclaim();
    CHECK_EQ(slots_retired_pending(), 0);
    /* a signal that lands after the retirement finds nothing, and says so */
    uint64_t orphans = slots_orphan_signals();
    CHECK(slots_handler_enter(TID_A) == NULL);
    CHECK_EQ(slots_orphan_signals(), orphans + 1);
    slots_shutdown();
}

/* An object (a table) retired after its replacement was published is freed
 * only once every handler that entered before has left; handlers that
 * entered after cannot see it and do not hold it. */
static void test_retired_object_waits_for_older_handlers(void)
{
    REQUIRE(slots_init() == 0);
    struct sthread *a = slots_add(TID_A, 1, 64), *b = slots_add(TID_B, 2, 64);
    REQUIRE(a && b);
    objects_freed = 0;
    int table;
    CHECK(slots_handler_enter(TID_A) == a); /* in, at the old epoch */
    slots_retire_object(&table, count_free);
    CHECK(slots_handler_enter(TID_B) == b); /* in, at the new epoch */
    slots_reclaim();
    CHECK_EQ(objects_freed, 0);
    slots_handler_leave(TID_A);
    slots_reclaim();
    CHECK_EQ(objects_freed, 1); /* B entered after: it never saw the table */
    slots_handler_leave(TID_B);
    /* with no handler in, an object goes at the next reclaim */
    slots_retire_object(&table, count_free);
    slots_reclaim();
    CHECK_EQ(objects_freed, 2);
    slots_retire(a);
    slots_retire(b);
    slots_reclaim();
    CHECK_EQ(slots_retired_pending(), 0);
    slots_shutdown();
}

/* A tid retired and added again: the old state waits for the handler that
 * entered before, the new one is what handlers find, and the tid is still
 * watched for the objects a handler on the new thread may hold. */
static void test_tid_reused(void)
{
    REQUIRE(slots_init() == 0);
    struct sthread *old = slots_add(TID_A, 1, 64);
    REQUIRE(old);
    CHECK(slots_handler_enter(TID_A) == old); /* a handler in the old thread */
    slots_retire(old);
    struct sthread *young = slots_add(TID_A, 2, 64); /* the kernel gave the tid again */
    REQUIRE(young);
    CHECK(slots_lookup(TID_A) == young);
    slots_reclaim();
    CHECK_EQ(slots_retired_pending(), 1); /* old is still in use */
    CHECK_EQ(old->id, 1);
    slots_handler_leave(TID_A);
    slots_reclaim();
    CHECK_EQ(slots_retired_pending(), 0);

    /* the tid still belongs to a live thread: a handler there holds tables */
    objects_freed = 0;
    int table;
    CHECK(slots_handler_enter(TID_A) == young);
    slots_retire_object(&table, count_free);
    slots_reclaim();
    CHECK_EQ(objects_freed, 0);
    slots_handler_leave(TID_A);
    slots_reclaim();
    CHECK_EQ(objects_freed, 1);

    /* an old state retired late must not unregister the new one */
    struct sthread *third = slots_add(TID_A, 3, 64);
    REQUIRE(third);
    slots_retire(young);
    CHECK(slots_lookup(TID_A) == third);
    CHECK(slots_handler_enter(TID_A) == third);
    slots_handler_leave(TID_A);
    slots_retire(third);
    slots_reclaim();
    CHECK_EQ(slots_retired_pending(), 0);
    slots_shutdown();
}

void suite_slots(void)
{
    RUN(test_retired_thread_waits_for_handler);
    RUN(test_retired_object_waits_for_older_handlers);
    RUN(test_tid_reused);
}
