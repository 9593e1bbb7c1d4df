/*
 * Unit tests of loop_wake (agent/signal/loop_wake.h), the loop's sleep: it
 * ends at its deadline when nothing wakes it; loop_wake ends it early, and
 * so does a wake made before the sleep began, after the word was read (a
 * poke between the loop's last look and its sleep is not lost); a
 * producer's loop_wake_if_quiet ends only a long sleep that its kind of
 * work may end (a sleep while only samples arrive is ended by code and
 * events, not by samples), and only the first producer makes the system
 * call; a sample that fills its ring half ends any sleep, once.  The bounds are wide (seconds):
 * they tell a sleep that ended early from one that ran to its deadline,
 * on a busy machine too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "agent/signal/loop_wake.h"
#include "common/clock.h"
#include "test.h"

#define LONG_NS 20000000000ull /* a deadline the tests never reach */

struct producer {
    uint64_t delay_ns;
    int quiet_only; /* loop_wake_if_quiet(quiet_only), -1 loop_wake_for_room, else loop_wake */
    _Atomic int done;
};

static void *produce(void *p)
{
    struct producer *w = p;
    struct timespec d = {(time_t)(w->delay_ns / 1000000000ull), (long)(w->delay_ns % 1000000000ull)};
    nanosleep(&d, NULL);
    if (w->quiet_only > 0)
        loop_wake_if_quiet(w->quiet_only);
    else if (w->quiet_only < 0)
        loop_wake_for_room();
    else
        loop_wake();
    atomic_store(&w->done, 1);
    return NULL;
}

/* How long a sleep (deadline_ns away) lasted with a producer 0.1 s in;
 * UINT64_MAX (and a failed check) when the producer cannot start. */
static uint64_t sleep_with(int quiet, int quiet_only, uint64_t deadline_ns)
{
    struct producer w = {100000000ull, quiet_only, 0};
    pthread_t t;
    uint32_t seen = loop_wake_seen();
    uint64_t start = clock_now_ns();
    if (pthread_create(&t, NULL, produce, &w) != 0) {
        CHECK(!"a producer thread");
        return UINT64_MAX;
    }
    loop_wake_wait(seen, start + deadline_ns, quiet);
    uint64_t took = clock_now_ns() - start;
    pthread_join(t, NULL);
    return took;
}

static void test_loop_wake_deadline(void)
{
    uint64_t start = clock_now_ns();
    loop_wake_wait(loop_wake_seen(), start + 50000000ull, 0);
    CHECK(clock_now_ns() - start >= 45000000ull);
    CHECK_EQ(atomic_load(&loop_wake_quiet), 0);
}

static void test_loop_wake_woken(void)
{
    /* a wake ends any sleep, quiet or not */
    CHECK(sleep_with(0, 0, LONG_NS) < LONG_NS / 4);
    CHECK(sleep_with(LOOP_WAKE_WORK, 0, LONG_NS) < LONG_NS / 4);
    /* a wake after the word was read and before the sleep: no sleep */
    uint32_t seen = loop_wake_seen();
    loop_wake();
    uint64_t start = clock_now_ns();
    loop_wake_wait(seen, start + LONG_NS, LOOP_WAKE_WORK);
    CHECK(clock_now_ns() - start < LONG_NS / 4);
}

static void test_loop_wake_quiet_only(void)
{
    const int all = LOOP_WAKE_WORK | LOOP_WAKE_SAMPLES;
    /* a producer wakes a quiet sleep, and clears quiet so that the next
     * producer makes no system call */
    CHECK(sleep_with(all, LOOP_WAKE_SAMPLES, LONG_NS) < LONG_NS / 4);
    CHECK_EQ(atomic_load(&loop_wake_quiet), 0);
    CHECK(sleep_with(LOOP_WAKE_WORK, LOOP_WAKE_WORK, LONG_NS) < LONG_NS / 4);
    CHECK_EQ(atomic_load(&loop_wake_quiet), 0);
    /* a sleep that is not quiet is left to its deadline (2 s: the
     * producer came at 0.1 s), and so is a sleep while samples arrive,
     * by a sample */
    uint64_t took = sleep_with(0, LOOP_WAKE_WORK, 2000000000ull);
    CHECK(took >= 1900000000ull);
    took = sleep_with(LOOP_WAKE_WORK, LOOP_WAKE_SAMPLES, 2000000000ull);
    CHECK(took >= 1900000000ull);
    /* with nobody asleep, producers change nothing */
    uint32_t seen = loop_wake_seen();
    loop_wake_if_quiet(all);
    CHECK_EQ(loop_wake_seen(), seen);
}

/* A ring half full ends any sleep, a short one too; a second such sample
 * before the loop sleeps again makes no system call (the word moves once). */
static void test_loop_wake_for_room(void)
{
    CHECK(sleep_with(0, -1, LONG_NS) < LONG_NS / 4);
    /* woken once already since that sleep began: no more */
    uint32_t seen = loop_wake_seen();
    loop_wake_for_room();
    CHECK_EQ(loop_wake_seen(), seen);
    /* a new sleep (here one already over) lets the next one through */
    loop_wake_wait(seen, clock_now_ns(), 0);
    loop_wake_for_room();
    loop_wake_for_room();
    CHECK_EQ(loop_wake_seen(), seen + 1);
}

/* The sleep after a cycle.  A cycle that applied compiled code records
 * nothing (the code is named when a sample needs it): it was taken for an
 * idle one, and the next compiled method ended its sleep, a system call on
 * the compiling thread per method (perf of a `dotnet build` under record:
 * 0.18% of the tree's CPU in that call from the JIT callback). */
static void test_loop_wake_pace(void)
{
    const uint64_t short_ns = 10, samples_ns = 40, long_ns = 100;
    struct loop_pace p = {short_ns, 0};
    /* work without records: short, and no producer ends it */
    loop_wake_pace(&p, 1, 0, short_ns, samples_ns, long_ns);
    CHECK_EQ(p.sleep_ns, short_ns);
    CHECK_EQ(p.quiet, 0);
    /* work with records: the same */
    p.sleep_ns = 80;
    loop_wake_pace(&p, 1, 1, short_ns, samples_ns, long_ns);
    CHECK_EQ(p.sleep_ns, short_ns);
    CHECK_EQ(p.quiet, 0);
    /* samples alone: longer, ended by work */
    loop_wake_pace(&p, 0, 1, short_ns, samples_ns, long_ns);
    CHECK_EQ(p.sleep_ns, samples_ns);
    CHECK_EQ(p.quiet, LOOP_WAKE_WORK);
    /* nothing: doubling to the bound, ended by anything */
    loop_wake_pace(&p, 0, 0, short_ns, samples_ns, long_ns);
    CHECK_EQ(p.sleep_ns, 80);
    CHECK_EQ(p.quiet, LOOP_WAKE_WORK | LOOP_WAKE_SAMPLES);
    loop_wake_pace(&p, 0, 0, short_ns, samples_ns, long_ns);
    CHECK_EQ(p.sleep_ns, long_ns);
    loop_wake_pace(&p, 0, 0, short_ns, samples_ns, long_ns);
    CHECK_EQ(p.sleep_ns, long_ns);
}

void suite_loop_wake(void)
{
    RUN(test_loop_wake_pace);
    RUN(test_loop_wake_deadline);
    RUN(test_loop_wake_woken);
    RUN(test_loop_wake_quiet_only);
    RUN(test_loop_wake_for_room);
}
