/*
 * Tests of callback_activity: the activities a thread publishes for its
 * samples' labels, and loads that end on another thread than the one that
 * began them (the runtime finishes a load on whichever thread takes it
 * through its last step; the loser of a race gets only unload callbacks).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "agent/callback_activity.h"
#include "agent/signal/activity.h"
#include "test.h"

#define ASM 0x7faac008edc0ull
#define MOD 0x7feb9de024c8ull
#define FN 0x7f0012345678ull

static uintptr_t frame_at(uintptr_t depth)
{
    return (uintptr_t)0x7f0000100000ull - depth;
}

/* A second thread: ends the loads the first began, or begins them. */
struct other {
    int begin; /* 1: begin both loads, 0: end both (module first) */
    pid_t tid;
    uint64_t inner, outer; /* its own words after */
};

static void *other_thread(void *arg)
{
    struct other *o = arg;
    o->tid = callback_activity_tid();
    if (o->begin) {
        callback_activity_begin(ACTIVITY_LOAD_ASSEMBLY, ASM, frame_at(100));
        callback_activity_begin(ACTIVITY_LOAD_MODULE, MOD, frame_at(200));
    } else {
        callback_activity_end(ACTIVITY_LOAD_MODULE, MOD, frame_at(100));
        callback_activity_end(ACTIVITY_LOAD_ASSEMBLY, ASM, frame_at(100));
    }
    activity_get(o->tid, &o->inner, &o->outer);
    return NULL;
}

static void run_other(struct other *o)
{
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, other_thread, o) == 0);
    pthread_join(t, NULL);
}

/* A new run in which the calling thread has begun loading ASM and, inside
 * it, MOD; returns the thread's id. */
static pid_t loading(void)
{
    CHECK(activity_init() == 0);
    callback_activity_new_run();
    callback_activity_begin(ACTIVITY_LOAD_ASSEMBLY, ASM, frame_at(100));
    callback_activity_begin(ACTIVITY_LOAD_MODULE, MOD, frame_at(200));
    return callback_activity_tid();
}

/* Are these the words thread tid published? */
static int words_are(pid_t tid, uint64_t inner, uint64_t outer)
{
    uint64_t i, o;
    activity_get(tid, &i, &o);
    return i == inner && o == outer;
}

/* Started here, Finished on another thread: the words this thread
 * published are cleared at once, and its next callback drops the loads
 * from its stack (before the fix: "[load module]" on this thread until
 * it ended). */
static void test_load_finished_elsewhere(void)
{
    pid_t me = loading();
    CHECK(words_are(me, activity_word(ACTIVITY_LOAD_MODULE, MOD),
                    activity_word(ACTIVITY_LOAD_ASSEMBLY, ASM)));
    struct other o = {0};
    run_other(&o);
    CHECK(o.inner == 0 && o.outer == 0);
    CHECK(words_are(me, 0, 0));
    /* the next callback here: the stack holds its own work only */
    callback_activity_begin(ACTIVITY_JIT, FN, frame_at(50));
    uint64_t jit = activity_word(ACTIVITY_JIT, FN);
    CHECK(words_are(me, jit, jit));
    callback_activity_end(ACTIVITY_JIT, FN, frame_at(50));
    CHECK(words_are(me, 0, 0));
}

/* The loads handed over keep what this thread began inside them: a
 * compile begun after the load, still going when the load is ended
 * elsewhere, stays its label. */
static void test_load_ended_elsewhere_keeps_inner_work(void)
{
    pid_t me = loading();
    callback_activity_begin(ACTIVITY_JIT, FN, frame_at(300));
    struct other o = {0};
    run_other(&o);
    /* the published words (JIT inner, assembly outer) named a load: cleared */
    CHECK(words_are(me, 0, 0));
    callback_activity_end(ACTIVITY_LOAD_TYPE, 0x1234, frame_at(300)); /* any callback */
    uint64_t jit = activity_word(ACTIVITY_JIT, FN);
    CHECK(words_are(me, jit, jit));
    callback_activity_end(ACTIVITY_JIT, FN, frame_at(300));
    CHECK(words_are(me, 0, 0));
}

/* The loser of a race: Started, then the unload of its discarded copy on
 * the same thread (profiler.c ends the load there). */
static void test_load_dropped_by_unload(void)
{
    pid_t me = loading();
    callback_activity_end(ACTIVITY_LOAD_MODULE, MOD, frame_at(150));   /* ModuleUnloadStarted */
    callback_activity_end(ACTIVITY_LOAD_ASSEMBLY, ASM, frame_at(150)); /* AssemblyUnloadStarted */
    CHECK(words_are(me, 0, 0));
    /* the same ids loaded again here, and ended by another thread this
     * time: handed here, and gone at the next callback */
    callback_activity_begin(ACTIVITY_LOAD_ASSEMBLY, ASM, frame_at(100));
    struct other o = {0};
    run_other(&o); /* ends ASM (and MOD, not open): handed here */
    callback_activity_begin(ACTIVITY_JIT, FN, frame_at(50));
    uint64_t jit = activity_word(ACTIVITY_JIT, FN);
    CHECK(words_are(me, jit, jit));
}

/* A load begun and ended on one thread is ended there, as always; another
 * thread's own loads are its own. */
static void test_load_on_one_thread(void)
{
    REQUIRE(activity_init() == 0);
    callback_activity_new_run();
    pid_t me = callback_activity_tid();
    struct other o = {.begin = 1};
    run_other(&o);
    CHECK(o.inner == activity_word(ACTIVITY_LOAD_MODULE, MOD));
    callback_activity_begin(ACTIVITY_LOAD_ASSEMBLY, ASM + 64, frame_at(100));
    callback_activity_end(ACTIVITY_LOAD_ASSEMBLY, ASM + 64, frame_at(90));
    CHECK(words_are(me, 0, 0));
}

/* Hand-overs while the loading thread goes on with its callbacks, under
 * the thread sanitizer too (make unit-tsan runs the tsan_ tests): thread A
 * begins a load and compiles; thread B ends each load A began.  A's words
 * never keep a load B ended once A's next callback is over, and at the end
 * A's stack holds nothing. */
#define HANDOVERS 2000
static _Atomic int begun, ended;
static pid_t loader_tid;

static void *ender(void *arg)
{
    (void)arg;
    for (int i = 1; i <= HANDOVERS; i++) {
        while (atomic_load(&begun) < i)
            sched_yield();
        callback_activity_end(ACTIVITY_LOAD_ASSEMBLY, ASM + 64 * (uint64_t)i, frame_at(100));
        atomic_store(&ended, i);
    }
    return NULL;
}

static void test_tsan_load_handover(void)
{
    REQUIRE(activity_init() == 0);
    callback_activity_new_run();
    atomic_store(&begun, 0);
    atomic_store(&ended, 0);
    loader_tid = callback_activity_tid();
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, ender, NULL) == 0);
    int stale = 0;
    for (int i = 1; i <= HANDOVERS; i++) {
        callback_activity_begin(ACTIVITY_LOAD_ASSEMBLY, ASM + 64 * (uint64_t)i, frame_at(100));
        atomic_store(&begun, i);
        callback_activity_begin(ACTIVITY_JIT, FN, frame_at(200)); /* racing the end */
        while (atomic_load(&ended) < i)
            sched_yield();
        callback_activity_end(ACTIVITY_JIT, FN, frame_at(200));
        /* the load ended elsewhere, this thread's compile ended here */
        uint64_t inner, outer;
        activity_get(loader_tid, &inner, &outer);
        stale += inner != 0 || outer != 0;
    }
    pthread_join(t, NULL);
    CHECK_EQ(stale, 0);
    CHECK(words_are(loader_tid, 0, 0));
}

void suite_callback_activity(void)
{
    RUN(test_tsan_load_handover);
    RUN(test_load_finished_elsewhere);
    RUN(test_load_ended_elsewhere_keeps_inner_work);
    RUN(test_load_dropped_by_unload);
    RUN(test_load_on_one_thread);
}
