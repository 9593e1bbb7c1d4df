/*
 * Tests of the thread registry (agent/thread_registry.h): a thread's life
 * through the runtime's callbacks, the stack-walk protocol (rule 2: a
 * destroyed thread waits for a walk in progress), and the catch-up after an
 * attach.
 */
#include <pthread.h>
#include <stdlib.h>

#include "agent/thread_registry.h"
#include "test.h"

static void test_registry_lifecycle(void)
{
    thread_registry_created(0x1000);
    thread_registry_assigned_os_thread(0x1000, 4242);
    thread_registry_renamed(0x1000, "worker");
    thread_registry_created(0x2000);
    struct thread_view *views = NULL;
    size_t cap = 0;
    long n = thread_registry_snapshot(&views, &cap);
    REQUIRE(n == 2);
    struct thread_view *w = views[0].managed == 0x1000 ? &views[0] : &views[1];
    CHECK_EQ(w->os_tid, 4242);
    CHECK_STR(w->name, "worker");
    CHECK(views[0].id != views[1].id);
    uint32_t old_id = w->id;
    /* the thread dies; its slot is reused, its recording id is not */
    thread_registry_destroyed(0x1000);
    CHECK(!thread_registry_begin_walk(w));
    thread_registry_created(0x3000);
    n = thread_registry_snapshot(&views, &cap);
    REQUIRE(n == 2);
    for (long i = 0; i < n; i++)
        CHECK(views[i].id != old_id && views[i].managed != 0x1000);
    thread_registry_destroyed(0x2000);
    thread_registry_destroyed(0x3000);
    thread_registry_destroyed(0x9999); /* unknown: ignored */
    CHECK_EQ(thread_registry_snapshot(&views, &cap), 0);
    free(views);
    thread_registry_shutdown();
}

struct destroyer {
    uintptr_t managed;
    int done;
    pthread_mutex_t lock;
};

static void *destroy(void *arg)
{
    struct destroyer *d = arg;
    thread_registry_destroyed(d->managed);
    pthread_mutex_lock(&d->lock);
    d->done = 1;
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static int is_done(struct destroyer *d)
{
    pthread_mutex_lock(&d->lock);
    int done = d->done;
    pthread_mutex_unlock(&d->lock);
    return done;
}

static void test_destroy_waits_for_walk(void)
{
    /* rule 2: ThreadDestroyed of a thread being walked returns only after
     * the walk ends */
    thread_registry_created(0x5000);
    struct thread_view *views = NULL;
    size_t cap = 0;
    REQUIRE(thread_registry_snapshot(&views, &cap) == 1);
    REQUIRE(thread_registry_begin_walk(&views[0]));
    uint64_t waits = thread_registry_destroy_waits();
    struct destroyer d = {0x5000, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, destroy, &d) == 0);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK(!is_done(&d)); /* still waiting for the walk */
    thread_registry_end_walk();
    pthread_join(t, NULL);
    CHECK(is_done(&d));
    CHECK_EQ(thread_registry_destroy_waits(), waits + 1);
    /* and a walk after the destroy is refused */
    CHECK(!thread_registry_begin_walk(&views[0]));
    free(views);
    thread_registry_shutdown();
}

/* Threads listed at an attach are registered, except one whose
 * ThreadDestroyed came between the listing and its registration. */
static void test_thread_catch_up(void)
{
    thread_registry_created(0x5000); /* reported by a callback meanwhile: known */
    thread_registry_adopt_begin();
    thread_registry_destroyed(0x7000); /* listed, then died before it was taken in */
    CHECK(thread_registry_adopt(0x5000, 501));
    CHECK(thread_registry_adopt(0x6000, 601));
    CHECK(!thread_registry_adopt(0x7000, 701));
    thread_registry_adopt_end();
    struct thread_view *views = NULL;
    size_t cap = 0;
    long n = thread_registry_snapshot(&views, &cap);
    REQUIRE(n == 2);
    for (long i = 0; i < n; i++) {
        CHECK(views[i].managed == 0x5000 || views[i].managed == 0x6000);
        CHECK_EQ(views[i].os_tid, views[i].managed == 0x5000 ? 501 : 601);
    }
    /* after the catch-up, an unknown id's death is forgotten again */
    thread_registry_destroyed(0x8000);
    free(views);
    thread_registry_shutdown();
}

void suite_thread_registry(void)
{
    RUN(test_registry_lifecycle);
    RUN(test_destroy_waits_for_walk);
    RUN(test_thread_catch_up);
}
