/*
 * Tests of the signal sampler's reclamation (agent/signal/thread_rings.c): nothing
 * a handler may still be using is freed under it.  A "handler" here is
 * thread_rings_handler_enter/leave called on the test's thread for a made-up tid,
 * which is all the handler does with the slots; the interleavings that
 * matter are played in order: a thread or a table retired while a handler
 * that entered before is still in, and a tid that comes back (the kernel
 * reuses thread ids) while its old state waits to be freed.
 */
#include "agent/signal/thread_rings.h"
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
    REQUIRE(thread_rings_init() == 0);
    struct sthread *t = thread_rings_add(TID_A, 1, 64);
    REQUIRE(t);
    CHECK(thread_rings_handler_enter(TID_A) == t);
    thread_rings_retire(t);
    CHECK(thread_rings_lookup(TID_A) == NULL);
    thread_rings_reclaim();
    CHECK_EQ(thread_rings_retired_pending(), 1);
    CHECK_EQ(atomic_load(&t->state), STHREAD_DEAD); /* still there (ASan: not freed) */
    thread_rings_handler_leave(TID_A);
    thread_rings_reclaim();
    CHECK_EQ(thread_rings_retired_pending(), 0);
    /* a signal that lands after the retirement finds nothing, and says so */
    uint64_t orphans = thread_rings_orphan_signals();
    CHECK(thread_rings_handler_enter(TID_A) == NULL);
    CHECK_EQ(thread_rings_orphan_signals(), orphans + 1);
    thread_rings_shutdown();
}

/* An object (a table) retired after its replacement was published is freed
 * only once every handler that entered before has left; handlers that
 * entered after cannot see it and do not hold it. */
static void test_retired_object_waits_for_older_handlers(void)
{
    REQUIRE(thread_rings_init() == 0);
    struct sthread *a = thread_rings_add(TID_A, 1, 64), *b = thread_rings_add(TID_B, 2, 64);
    REQUIRE(a && b);
    objects_freed = 0;
    int table;
    CHECK(thread_rings_handler_enter(TID_A) == a); /* in, at the old epoch */
    thread_rings_retire_object(&table, count_free);
    CHECK(thread_rings_handler_enter(TID_B) == b); /* in, at the new epoch */
    thread_rings_reclaim();
    CHECK_EQ(objects_freed, 0);
    thread_rings_handler_leave(TID_A);
    thread_rings_reclaim();
    CHECK_EQ(objects_freed, 1); /* B entered after: it never saw the table */
    thread_rings_handler_leave(TID_B);
    /* with no handler in, an object goes at the next reclaim */
    thread_rings_retire_object(&table, count_free);
    thread_rings_reclaim();
    CHECK_EQ(objects_freed, 2);
    thread_rings_retire(a);
    thread_rings_retire(b);
    thread_rings_reclaim();
    CHECK_EQ(thread_rings_retired_pending(), 0);
    thread_rings_shutdown();
}

/* A tid retired and added again: the old state waits for the handler that
 * entered before, the new one is what handlers find, and the tid is still
 * watched for the objects a handler on the new thread may hold. */
static void test_tid_reused(void)
{
    REQUIRE(thread_rings_init() == 0);
    struct sthread *old = thread_rings_add(TID_A, 1, 64);
    REQUIRE(old);
    CHECK(thread_rings_handler_enter(TID_A) == old); /* a handler in the old thread */
    thread_rings_retire(old);
    struct sthread *young = thread_rings_add(TID_A, 2, 64); /* the kernel gave the tid again */
    REQUIRE(young);
    CHECK(thread_rings_lookup(TID_A) == young);
    thread_rings_reclaim();
    CHECK_EQ(thread_rings_retired_pending(), 1); /* old is still in use */
    CHECK_EQ(old->id, 1);
    thread_rings_handler_leave(TID_A);
    thread_rings_reclaim();
    CHECK_EQ(thread_rings_retired_pending(), 0);

    /* the tid still belongs to a live thread: a handler there holds tables */
    objects_freed = 0;
    int table;
    CHECK(thread_rings_handler_enter(TID_A) == young);
    thread_rings_retire_object(&table, count_free);
    thread_rings_reclaim();
    CHECK_EQ(objects_freed, 0);
    thread_rings_handler_leave(TID_A);
    thread_rings_reclaim();
    CHECK_EQ(objects_freed, 1);

    /* an old state retired late must not unregister the new one */
    struct sthread *third = thread_rings_add(TID_A, 3, 64);
    REQUIRE(third);
    thread_rings_retire(young);
    CHECK(thread_rings_lookup(TID_A) == third);
    CHECK(thread_rings_handler_enter(TID_A) == third);
    thread_rings_handler_leave(TID_A);
    thread_rings_retire(third);
    thread_rings_reclaim();
    CHECK_EQ(thread_rings_retired_pending(), 0);
    thread_rings_shutdown();
}

void suite_thread_rings(void)
{
    RUN(test_retired_thread_waits_for_handler);
    RUN(test_retired_object_waits_for_older_handlers);
    RUN(test_tid_reused);
}
