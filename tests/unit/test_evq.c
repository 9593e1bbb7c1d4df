/*
 * Tests of the event queues (agent/evq.h): entries from many threads
 * drained whole, a queue that grows, stacks sent once, time order across
 * threads, the queues across a detach, and a full queue once paused
 * (issue 20.3).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent/evq.h"
#include "test.h"

struct drained {
    uint64_t n, sum, last_time;
    uint32_t depth;
};

static void on_entry(void *ctx, const struct evq_entry *e)
{
    struct drained *d = ctx;
    d->n++;
    d->sum += e->payload[0];
    d->last_time = e->time;
    d->depth = e->depth;
}

static void *push_some(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= 100; i++)
        evq_push(3, 1, &i, 1, i == 100 ? 64 : 0);
    return NULL;
}

/* Event queues: entries from another thread arrive whole and in order, a
 * stack walked in place comes with the last, and a time bound keeps later
 * entries for the next drain. */
static void test_event_queues(void)
{
    evq_open();
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, push_some, NULL) == 0);
    pthread_join(t, NULL);
    struct drained d = {0, 0, 0, 0};
    CHECK_EQ(evq_drain(on_entry, &d, 0), 0); /* nothing before time 0 */
    CHECK_EQ(evq_drain(on_entry, &d, UINT64_MAX), 100);
    CHECK_EQ(d.sum, 5050);
    CHECK(d.depth > 1); /* push_some, and the thread's start */
    CHECK_EQ(evq_drain(on_entry, &d, UINT64_MAX), 0);
    CHECK_EQ(evq_dropped(), 0);
    evq_shutdown();
}

static void *push_one(void *arg)
{
    uint64_t v = 7;
    (void)arg;
    evq_push(0, 1, &v, 1, 0);
    return NULL;
}

static void count_entry(void *ctx, const struct evq_entry *e)
{
    (void)e;
    (*(int *)ctx)++;
}

/* After a detach every queue is freed, live threads' too; a thread that
 * appended before makes a new queue in the next attach, and its exit
 * touches nothing freed (ASan would say). */
static void test_event_queues_across_detach(void)
{
    evq_open();
    uint64_t v = 1;
    CHECK(evq_push(0, 1, &v, 1, 0) == 0); /* this thread's queue, live */
    evq_free_all();
    CHECK(evq_push(0, 1, &v, 1, 0) == -1); /* closed between runs */
    evq_open();
    CHECK_EQ(evq_dropped(), 0);
    CHECK(evq_push(0, 1, &v, 1, 0) == 0); /* a new queue, not the freed one */
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, push_one, NULL) == 0);
    pthread_join(t, NULL);
    int n = 0;
    evq_drain(count_entry, &n, UINT64_MAX);
    CHECK_EQ(n, 2);
    evq_free_all();
    evq_open();
    evq_shutdown();
}

/* Stacks a thread sent before go as their hash: the loop still gets every
 * entry's whole stack, the very addresses the walk found. */
struct stacks_seen {
    uint64_t n;
    uint32_t depth[8];
    uint64_t ips[8][64];
};

static void on_stack(void *ctx, const struct evq_entry *e)
{
    struct stacks_seen *d = ctx;
    if (d->n < 8) {
        d->depth[d->n] = e->depth;
        for (uint32_t i = 0; i < e->depth && i < 64; i++)
            d->ips[d->n][i] = e->ips[i];
    }
    d->n++;
}

__attribute__((noinline)) static void push_here(uint64_t i)
{
    evq_push(5, 2, &i, 1, 64);
}

__attribute__((noinline)) static void push_there(uint64_t i)
{
    evq_push(5, 2, &i, 1, 64);
    __asm__ volatile("" ::: "memory"); /* not a tail call: its own return address */
}

static void *push_stacks(void *arg)
{
    (void)arg;
    for (volatile uint64_t i = 0; i < 3; i++) /* one call site, not unrolled */
        push_here(i);
    push_there(3);
    push_here(4);
    return NULL;
}

static void test_stacks_sent_once(void)
{
    evq_open();
    uint64_t dropped = evq_dropped();
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, push_stacks, NULL) == 0);
    pthread_join(t, NULL);
    struct stacks_seen d;
    memset(&d, 0, sizeof d);
    CHECK_EQ(evq_drain(on_stack, &d, UINT64_MAX), 5);
    REQUIRE(d.n == 5);
    CHECK(d.depth[0] > 1);
    /* the loop's three: the same stack, sent once */
    for (int k = 1; k < 3; k++) {
        CHECK_EQ(d.depth[k], d.depth[0]);
        CHECK(memcmp(d.ips[k], d.ips[0], d.depth[0] * sizeof d.ips[0][0]) == 0);
    }
    /* another function, then the first from another line: their own */
    CHECK_EQ(d.depth[3], d.depth[0]);
    CHECK(d.ips[3][0] != d.ips[0][0]);
    CHECK_EQ(d.depth[4], d.depth[0]);
    CHECK_EQ(d.ips[4][0], d.ips[0][0]);
    CHECK(d.ips[4][1] != d.ips[0][1]);
    CHECK(memcmp(d.ips[4] + 2, d.ips[0] + 2, (d.depth[0] - 2) * sizeof d.ips[0][0]) == 0);
    CHECK_EQ(evq_dropped() - dropped, 0);
    evq_shutdown();
}

/* A queue that fills up grows (the storm of a thread that throws in a
 * loop): nothing is dropped, and the loop reads the old ring's entries
 * before the new one's, in order. */
struct in_order {
    uint64_t n, next, bad;
};

static void on_numbered(void *ctx, const struct evq_entry *e)
{
    struct in_order *d = ctx;
    if (e->payload[0] != d->next)
        d->bad++;
    d->next = e->payload[0] + 1;
    d->n++;
}

static void *push_numbered(void *arg)
{
    uint64_t *range = arg;
    for (uint64_t i = range[0]; i < range[1]; i++)
        evq_push(6, 1, &i, 1, 0);
    return NULL;
}

static void test_queue_grows(void)
{
    evq_open();
    uint64_t dropped = evq_dropped();
    struct in_order d = {0, 0, 0};
    /* one thread: 3,000 entries (15,000 words) into a ring of 8,192 */
    uint64_t first[2] = {0, 3000};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, push_numbered, first) == 0);
    pthread_join(t, NULL);
    CHECK_EQ(evq_drain(on_numbered, &d, UINT64_MAX), 3000);
    CHECK_EQ(d.bad, 0);
    CHECK_EQ(evq_dropped() - dropped, 0);
    evq_shutdown();

    /* drained while it is written and switched: every entry arrives once,
     * in order, or is counted as dropped (if this thread falls behind) */
    evq_open();
    dropped = evq_dropped();
    uint64_t second[2] = {1, 200001};
    REQUIRE(pthread_create(&t, NULL, push_numbered, second) == 0);
    struct in_order c = {0, 1, 0};
    uint64_t seen = 0;
    for (int rounds = 0; rounds < 1000000 && seen + (evq_dropped() - dropped) < 200000; rounds++)
        seen += evq_drain(on_numbered, &c, UINT64_MAX);
    pthread_join(t, NULL);
    seen += evq_drain(on_numbered, &c, UINT64_MAX);
    CHECK_EQ(seen + (evq_dropped() - dropped), 200000);
    CHECK(c.bad <= evq_dropped() - dropped); /* each gap is a drop */
    evq_shutdown();
}

/* ---- event queues: one time order across threads ------------------------------------ */

static _Atomic int turn;

static void *push_in_turns(void *arg)
{
    uint64_t me = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < 50; i++) {
        while (atomic_load(&turn) % 2 != (int)me)
            ;
        evq_push(1, 1, &me, 1, 0);
        atomic_fetch_add(&turn, 1);
    }
    return NULL;
}

struct order {
    uint64_t n, last, backwards, switches, prev_payload;
};

static void on_ordered(void *ctx, const struct evq_entry *e)
{
    struct order *o = ctx;
    if (o->n && e->time < o->last)
        o->backwards++;
    if (o->n && e->payload[0] != o->prev_payload)
        o->switches++;
    o->prev_payload = e->payload[0];
    o->last = e->time;
    o->n++;
}

/* Two threads push in turns: the drain hands their entries over in the
 * order they were taken, alternating, never going back in time (the
 * records' times are deltas: one out of order would be moved). */
static void test_queue_time_order(void)
{
    evq_open();
    atomic_store(&turn, 0);
    pthread_t a, b;
    REQUIRE(pthread_create(&a, NULL, push_in_turns, (void *)0) == 0);
    REQUIRE(pthread_create(&b, NULL, push_in_turns, (void *)1) == 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    struct order o = {0, 0, 0, 0, 0};
    CHECK_EQ(evq_drain(on_ordered, &o, UINT64_MAX), 100);
    CHECK_EQ(o.backwards, 0);
    CHECK_EQ(o.switches, 99);
    evq_shutdown();
}

/* ---- issue 20.3: --alloc exact waiting on a queue nothing drains ---------- */

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

void suite_evq(void)
{
    RUN(test_event_queues);
    RUN(test_event_queues_across_detach);
    RUN(test_stacks_sent_once);
    RUN(test_queue_grows);
    RUN(test_queue_time_order);
    RUN(test_no_wait_once_paused);
}
