/*
 * thread_rings: see thread_rings.h.
 */
#include "agent/signal/thread_rings.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/mem.h"

struct slot {
    _Atomic(struct sthread *) thread;
    _Atomic uint64_t epoch; /* of the handler running on this tid, 0 = none */
};

/* Something handed to the reclaimer, freed once the epoch has moved past
 * `epoch` everywhere. */
struct retired {
    void *object;
    void (*free_fn)(void *);
    uint64_t epoch;   /* the global epoch after its replacement was published */
    uint64_t wepoch;  /* the walker epoch then */
    pid_t tid;        /* for a thread: the only slot that can refer to it */
    struct retired *next;
};

static struct slot *slots;
static size_t slot_count;
static _Atomic uint64_t global_epoch = 1;
static _Atomic uint64_t orphans;
static struct retired *retired;
static _Atomic uint64_t walker_epoch;
static _Atomic uint64_t walkers[2];
/* tids whose slot may show a handler: those with a thread not yet freed */
static pid_t *live_tids;
static size_t live_count, live_cap;

size_t thread_rings_pid_max(void)
{
    size_t n = 32768;
    FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
    if (f) {
        unsigned long v;
        if (fscanf(f, "%lu", &v) == 1 && v > 0 && v <= (1ul << 22))
            n = v;
        fclose(f);
    }
    return n;
}

int thread_rings_init(void)
{
    if (slots) {
        /* an earlier attach's table (the library stays loaded after a
         * detach): emptied, every page back to zeros; no signal of ours is
         * pending any more, and one would find no thread either way */
        madvise(slots, slot_count * sizeof *slots, MADV_DONTNEED);
        atomic_store(&orphans, 0);
        return 0;
    }
    slot_count = thread_rings_pid_max() + 1;
    void *p = mmap(NULL, slot_count * sizeof *slots, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        slots = NULL;
        return -1;
    }
    slots = p;
    return 0;
}

static size_t ring_bytes; /* the collector's: rings of threads not yet freed */
static size_t ring_threads;

static void free_thread(void *p)
{
    struct sthread *t = p;
    ring_bytes -= (t->ring_mask + 1) * 8;
    ring_threads--;
    mem_free(t->ring);
    mem_free(t);
}

void thread_rings_shutdown(void)
{
    /* a handler that entered before its thread was retired finishes in
     * microseconds; wait up to 200 ms, then leak what is left rather than
     * free it under a handler */
    for (int i = 0; i < 200 && retired; i++) {
        thread_rings_reclaim();
        if (retired) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    /* the table stays mapped: a signal still pending after shutdown looks
     * its thread up, finds none, and returns */
    mem_free(live_tids);
    live_tids = NULL;
    live_count = live_cap = 0;
}

/* The rings of every thread together stay within RING_BUDGET bytes.  A
 * thread's ring holds one sample of the deepest stack allowed (and many
 * ordinary ones) while the budget is less than half used; past that, new
 * threads get a fair share (rings shrink as threads multiply, down to
 * RING_MIN_WORDS: a sample deeper than its ring is dropped and counted),
 * and once even that does not fit, a new thread is not sampled (counted). */
#define RING_BUDGET (4u << 20)
#define RING_MIN_WORDS 512u

static size_t ring_words_for(uint32_t max_depth)
{
    size_t record = RING_HEADER_WORDS + (size_t)max_depth;
    size_t words = 8192;
    while (words < 2 * record)
        words *= 2;
    if (ring_bytes + words * 8 > RING_BUDGET / 2) {
        size_t fair = RING_MIN_WORDS;
        while (fair * 2 * 8 * 2 * (ring_threads + 1) <= RING_BUDGET)
            fair *= 2;
        if (fair < words)
            words = fair;
    }
    while (ring_bytes + words * 8 > RING_BUDGET && words > RING_MIN_WORDS)
        words /= 2;
    return ring_bytes + words * 8 > RING_BUDGET ? 0 : words;
}

size_t thread_rings_ring_bytes(void)
{
    return ring_bytes;
}

struct sthread *thread_rings_add(pid_t tid, uint32_t id, uint32_t max_depth)
{
    if (!slots || tid <= 0 || (size_t)tid >= slot_count)
        return NULL;
    size_t words = ring_words_for(max_depth);
    if (!words)
        return NULL; /* the rings' budget is used up */
    struct sthread *t = mem_calloc(1, sizeof *t);
    uint64_t *ring = mem_alloc(words * sizeof *ring);
    pid_t *grown = mem_grow(live_tids, &live_cap, live_count + 1, sizeof *live_tids);
    if (!t || !ring || !grown) {
        mem_free(t);
        mem_free(ring);
        return NULL;
    }
    live_tids = grown;
    live_tids[live_count++] = tid;
    ring_bytes += words * 8;
    ring_threads++;
    t->ring = ring;
    t->ring_mask = words - 1;
    t->max_depth = max_depth;
    t->tid = tid;
    t->id = id;
    atomic_store(&t->perf_fd, -1);
    t->perf_sig_fd = -1;
    t->perf_left_fd = -1;
    t->perf_old_fd = -1;
    atomic_store(&t->state, STHREAD_LIVE);
    atomic_store(&slots[tid].thread, t);
    return t;
}

struct sthread *thread_rings_lookup(pid_t tid)
{
    if (!slots || tid <= 0 || (size_t)tid >= slot_count)
        return NULL;
    return atomic_load(&slots[tid].thread);
}

static void add_retired(void *object, void (*free_fn)(void *), pid_t tid)
{
    struct retired *r = mem_alloc(sizeof *r);
    if (!r)
        return; /* out of memory: leak rather than free too early */
    r->object = object;
    r->free_fn = free_fn;
    r->tid = tid;
    r->epoch = atomic_fetch_add(&global_epoch, 1) + 1;
    r->wepoch = atomic_load(&walker_epoch);
    r->next = retired;
    retired = r;
}

void thread_rings_retire(struct sthread *t)
{
    atomic_store(&t->state, STHREAD_DEAD);
    struct sthread *expected = t;
    atomic_compare_exchange_strong(&slots[t->tid].thread, &expected, NULL);
    add_retired(t, free_thread, t->tid);
}

void thread_rings_retire_object(void *object, void (*free_fn)(void *))
{
    add_retired(object, free_fn, 0);
}

/* A thread's tid stays among those checked for old epochs until its state
 * is freed: a handler that entered just before the thread was retired may
 * still be reading a table. */
static void forget_tid(pid_t tid)
{
    for (size_t i = 0; i < live_count; i++) {
        if (live_tids[i] == tid) {
            live_tids[i] = live_tids[--live_count];
            return;
        }
    }
}

/* May a handler still hold `r`?  Only one that entered at an epoch before
 * r's, on the slot that referred to it (for a thread) or on any live
 * thread's slot (for a table). */
static int still_visible(const struct retired *r)
{
    uint64_t w = atomic_load(&walker_epoch);
    if (r->wepoch >= w || atomic_load(&walkers[r->wepoch & 1]) != 0)
        return 1;
    if (r->tid) {
        uint64_t e = atomic_load(&slots[r->tid].epoch);
        return e != 0 && e < r->epoch;
    }
    for (size_t i = 0; i < live_count; i++) {
        uint64_t e = atomic_load(&slots[live_tids[i]].epoch);
        if (e != 0 && e < r->epoch)
            return 1;
    }
    return 0;
}

uint32_t thread_rings_walker_enter(void)
{
    uint32_t k = (uint32_t)(atomic_load(&walker_epoch) & 1);
    atomic_fetch_add(&walkers[k], 1);
    return k;
}

void thread_rings_walker_leave(uint32_t token)
{
    atomic_fetch_sub(&walkers[token & 1], 1);
}

/* Moves the walker epoch on when objects wait for it and the parity it
 * moves into holds no walker of an older epoch. */
static void advance_walker_epoch(void)
{
    uint64_t w = atomic_load(&walker_epoch);
    for (struct retired *r = retired; r; r = r->next) {
        if (r->wepoch >= w) {
            if (atomic_load(&walkers[(w + 1) & 1]) == 0)
                atomic_store(&walker_epoch, w + 1);
            return;
        }
    }
}

void thread_rings_reclaim(void)
{
    advance_walker_epoch();
    struct retired **p = &retired;
    while (*p) {
        struct retired *r = *p;
        if (still_visible(r)) {
            p = &r->next;
            continue;
        }
        *p = r->next;
        if (r->tid)
            forget_tid(r->tid);
        r->free_fn(r->object);
        mem_free(r);
    }
}

size_t thread_rings_retired_pending(void)
{
    size_t n = 0;
    for (const struct retired *r = retired; r; r = r->next)
        n++;
    return n;
}

struct sthread *thread_rings_handler_enter(pid_t tid)
{
    if (!slots || tid <= 0 || (size_t)tid >= slot_count)
        return NULL;
    struct slot *s = &slots[tid];
    atomic_store(&s->epoch, atomic_load(&global_epoch));
    struct sthread *t = atomic_load(&s->thread);
    if (!t || atomic_load(&t->state) != STHREAD_LIVE) {
        atomic_fetch_add_explicit(&orphans, 1, memory_order_relaxed);
        atomic_store(&s->epoch, 0);
        return NULL;
    }
    return t;
}

void thread_rings_handler_leave(pid_t tid)
{
    atomic_store(&slots[tid].epoch, 0);
}

uint64_t thread_rings_orphan_signals(void)
{
    return atomic_load(&orphans);
}
