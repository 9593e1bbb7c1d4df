/*
 * Tests of unhandled (agent/unhandled.h): a throw whose pass 2 begins with
 * no catcher found, after a gap, is taken for an unhandled one; a throw
 * seen by an earlier session of the agent (before a detach), or through
 * another interface than its pass 2's, is not, and the interface it was
 * seen with is never called (the attach stress crashed on it); with the
 * runtime's last call rewritten, that call asks instead.
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "agent/source.h"
#include "agent/unhandled.h"
#include "test.h"

static int asked;

/* Fake objects: word 0 the MethodTable. */
static uintptr_t objects[4][2] = {{0x11110}, {0x22220}, {0x33330}, {0x44440}};
#define OBJ(i) ((ObjectID)(uintptr_t)objects[i])

static HRESULT STDMETHODCALLTYPE class_from_object(ICorProfilerInfo15 *self, ObjectID object,
                                                   ClassID *klass)
{
    (void)self;
    (void)object;
    asked++;
    *klass = 0;
    return E_FAIL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Seen before a detach (the runtime interface of that session released),
 * its pass 2 after the next attach: not unhandled, and the old interface is
 * never called (it was: the attach stress crashed in this callback). */
static void test_unhandled_across_sessions(void)
{
    static ICorProfilerInfo15Vtbl vtbl;
    memset(&vtbl, 0, sizeof vtbl);
    vtbl.GetClassFromObject = class_from_object;
    ICorProfilerInfo15 old_session = {&vtbl}, new_session = {&vtbl};
    asked = 0;
    unhandled_arm();
    unhandled_step(&old_session, SOURCE_EX_THROWN, OBJ(0));
    unhandled_step(&old_session, SOURCE_EX_SEARCH_ENTER, 0);
    unhandled_disarm(); /* detached */
    unhandled_arm();    /* attached again */
    sleep_ms(3);        /* past the gap that tells an unhandled one */
    unhandled_step(&new_session, SOURCE_EX_UNWIND_ENTER, 0);
    CHECK_EQ(asked, 0);
    ClassID klass = 0;
    int by_probe = 0;
    CHECK_EQ(unhandled_pending(&klass, &by_probe), 0);
    /* a pass 2 that comes through another interface than its throw (a
     * profiler instance of another attach) is not taken up either */
    unhandled_step(&old_session, SOURCE_EX_THROWN, OBJ(2));
    sleep_ms(3);
    unhandled_step(&new_session, SOURCE_EX_UNWIND_ENTER, 0);
    CHECK_EQ(asked, 0);
    CHECK_EQ(unhandled_pending(&klass, &by_probe), 0);
    /* within one session, a throw caught in pass 1 is not asked about */
    unhandled_step(&new_session, SOURCE_EX_THROWN, OBJ(1));
    unhandled_step(&new_session, SOURCE_EX_SEARCH_CATCHER, 0);
    sleep_ms(3);
    unhandled_step(&new_session, SOURCE_EX_UNWIND_ENTER, 0);
    CHECK_EQ(asked, 0);
    CHECK_EQ(unhandled_pending(&klass, &by_probe), 0);
    unhandled_disarm();
}

static _Atomic int loop_stop;
static _Atomic uintptr_t loop_class; /* the class of the last one recorded */
static _Atomic int loop_by_probe;     /* and who told */

/* The agent's loop, as far as unhandled is concerned: records what waits. */
static void *loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&loop_stop)) {
        ClassID klass;
        int by_probe;
        if (unhandled_pending(&klass, &by_probe)) {
            atomic_store(&loop_class, (uintptr_t)klass);
            atomic_store(&loop_by_probe, by_probe);
            unhandled_recorded();
        }
        sleep_ms(1);
    }
    return NULL;
}

/* A runtime interface whose GetClassFromObject refuses (and counts), and
 * the loop started and the agent armed, as a session has them. */
static ICorProfilerInfo15Vtbl session_vtbl;
static ICorProfilerInfo15 session_info = {&session_vtbl};
static pthread_t session_loop;

static ICorProfilerInfo15 *session_begin(void)
{
    memset(&session_vtbl, 0, sizeof session_vtbl);
    session_vtbl.GetClassFromObject = class_from_object;
    asked = 0;
    atomic_store(&loop_class, 0);
    atomic_store(&loop_stop, 0);
    if (pthread_create(&session_loop, NULL, loop, NULL) != 0)
        abort(); /* no thread: nothing here can be tested */
    unhandled_arm();
    return &session_info;
}

static void session_end(void)
{
    unhandled_disarm();
    atomic_store(&loop_stop, 1);
    pthread_join(session_loop, NULL);
}

/* Thrown, searched without a catcher, pass 2 after the gap, all through
 * one interface in one session: unhandled, its class asked for once, and
 * the thread waits until the loop recorded it. */
static void test_unhandled_in_one_session(void)
{
    ICorProfilerInfo15 *info = session_begin();
    unhandled_step(info, SOURCE_EX_THROWN, OBJ(3));
    unhandled_step(info, SOURCE_EX_SEARCH_ENTER, 0);
    sleep_ms(3);
    unhandled_step(info, SOURCE_EX_UNWIND_ENTER, 0);
    CHECK_EQ(asked, 1);
    CHECK(unhandled_seen());
    /* the runtime refused to say its class then (.NET 9 does, in pass 2):
     * the MethodTable read at the throw is it */
    CHECK_EQ(atomic_load(&loop_class), objects[3][0]);
    CHECK_EQ(atomic_load(&loop_by_probe), 0);
    unhandled_step(info, SOURCE_EX_UNWIND_LEAVE, 0); /* once */
    CHECK_EQ(asked, 1);
    session_end();
}

/* With the runtime's last call rewritten (unhandled_probe.h): the passes'
 * rule stands aside, and the call itself asks for the recording, with the
 * class of the object its frame holds, and waits for it. */
static void test_unhandled_probed(void)
{
    ICorProfilerInfo15 *info = session_begin();
    unhandled_probed(1);
    ClassID klass = 0;
    int by_probe = 0;
    unhandled_step(info, SOURCE_EX_THROWN, OBJ(2));
    unhandled_step(info, SOURCE_EX_SEARCH_ENTER, 0);
    sleep_ms(3);
    unhandled_step(info, SOURCE_EX_UNWIND_ENTER, 0);
    CHECK_EQ(asked, 0);
    CHECK_EQ(atomic_load(&loop_class), 0);
    uint64_t thrown = unhandled_thrown();
    unhandled_step(info, SOURCE_EX_THROWN, OBJ(1)); /* still counted */
    CHECK_EQ(unhandled_thrown(), thrown + 1);
    uintptr_t home = (uintptr_t)objects[1];
    CHECK_EQ(unhandled_hit((uintptr_t)&home), 0);
    /* it returned once the loop had recorded it, with its class */
    CHECK_EQ(atomic_load(&loop_class), objects[1][0]);
    CHECK_EQ(atomic_load(&loop_by_probe), 1);
    CHECK_EQ(unhandled_pending(&klass, &by_probe), 0);
    unhandled_probed(0);
    session_end();
}

void suite_unhandled(void)
{
    RUN(test_unhandled_in_one_session);
    RUN(test_unhandled_across_sessions);
    RUN(test_unhandled_probed);
}
