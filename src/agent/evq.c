/*
 * evq: see evq.h.  Entry layout in the ring, in words:
 *   [0] total words of the entry
 *   [1] source (bits 0-15), kind (16-31), walk flags (32-63)
 *   [2] time, ns
 *   [3] payload words (0-31), stack depth (32-63)
 *   [4 ...] the payload, then the stack's instruction pointers
 */
#include "agent/evq.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/signal/slots.h"
#include "agent/signal/walk.h"
#include "common/mem.h"

#define HEADER_WORDS 4

struct evq {
    _Atomic uint64_t head; /* words written (the thread) */
    _Atomic uint64_t tail; /* words consumed (the loop) */
    uint64_t *ring;
    uint64_t mask;
    pid_t tid;
    uint64_t generation;   /* of the agent run that made it */
    uintptr_t stack_hi;    /* top of the thread's stack, 0 when unknown */
    _Atomic int ended;     /* its thread has exited */
    struct evq *next;      /* the list, under list_lock */
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct evq *queues;
static size_t bytes_used;
static _Atomic uint64_t dropped;
static _Atomic uint64_t generation = 1; /* bumped by evq_shutdown */
static _Atomic int closed;
static _Atomic int paused;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static __thread struct evq *mine;
static __thread int making; /* a queue is being made: nested callbacks drop */

static void on_thread_exit(void *p)
{
    struct evq *q = p;
    atomic_store(&q->ended, 1);
}

static void make_key(void)
{
    pthread_key_create(&key, on_thread_exit);
}

static uintptr_t own_stack_top(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    uintptr_t hi = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0)
            hi = (uintptr_t)addr + size;
        pthread_attr_destroy(&attr);
    }
    return hi;
}

/* The calling thread's queue, made on first use; NULL when it cannot be. */
static struct evq *own_queue(void)
{
    uint64_t gen = atomic_load(&generation);
    if (mine && mine->generation == gen)
        return mine;
    if (making || atomic_load(&closed))
        return NULL;
    making = 1;
    pthread_once(&key_once, make_key);
    struct evq *q = mem_calloc(1, sizeof *q);
    uint64_t *ring = mem_alloc(EVQ_RING_WORDS * sizeof *ring);
    int ok = q && ring;
    if (ok) {
        pthread_mutex_lock(&list_lock);
        ok = !atomic_load(&closed) && bytes_used + EVQ_RING_WORDS * 8 <= EVQ_BUDGET;
        if (ok) {
            q->ring = ring;
            q->mask = EVQ_RING_WORDS - 1;
            q->tid = (pid_t)syscall(SYS_gettid);
            q->generation = gen;
            q->next = queues;
            queues = q;
            bytes_used += EVQ_RING_WORDS * 8;
        }
        pthread_mutex_unlock(&list_lock);
    }
    if (!ok) {
        mem_free(q);
        mem_free(ring);
        making = 0;
        return NULL;
    }
    q->stack_hi = own_stack_top();
    pthread_setspecific(key, q);
    mine = q;
    making = 0;
    return q;
}

struct ring_cursor {
    struct evq *q;
    uint64_t at;
};

static void put_pc(void *ctx, uint64_t index, uint64_t pc)
{
    struct ring_cursor *c = ctx;
    c->q->ring[(c->at + index) & c->q->mask] = pc;
}

/* The walk starts in the caller of evq_push: its frame, and every frame
 * above, is named by a real return address. */
NO_ASAN __attribute__((noinline)) int evq_push(uint32_t source, uint32_t kind,
                                               const uint64_t *payload, uint32_t words,
                                               uint32_t max_depth)
{
    if (atomic_load_explicit(&paused, memory_order_relaxed))
        return -1;
    struct evq *q = own_queue();
    if (!q) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        return -1;
    }
    if (max_depth > EVQ_MAX_DEPTH)
        max_depth = EVQ_MAX_DEPTH;
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    uint64_t free_words = q->mask + 1 - (head - tail);
    if (free_words < HEADER_WORDS + words + (max_depth ? 1 : 0)) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        return -1;
    }
    uint64_t room = free_words - HEADER_WORDS - words;
    if (max_depth > room)
        max_depth = (uint32_t)room;
    uint64_t at = head + HEADER_WORDS;
    for (uint32_t i = 0; i < words; i++)
        q->ring[(at + i) & q->mask] = payload[i];
    at += words;
    uint32_t flags = 0;
    uint64_t depth = 0;
    if (max_depth) {
        uintptr_t *frame = __builtin_frame_address(0);
        struct walk_regs regs = {(uintptr_t)frame[1], (uintptr_t)(frame + 2),
                                 (uintptr_t)frame[0]};
        struct ring_cursor c = {q, at};
        uintptr_t hi = q->stack_hi > regs.sp ? q->stack_hi : 0;
        uint32_t token = slots_walker_enter();
        depth = walk_stack(regs, hi, max_depth, put_pc, &c, &flags);
        slots_walker_leave(token);
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t total = HEADER_WORDS + words + depth;
    q->ring[head & q->mask] = total;
    q->ring[(head + 1) & q->mask] = (source & 0xffff) | (kind & 0xffff) << 16 | (uint64_t)flags << 32;
    q->ring[(head + 2) & q->mask] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    q->ring[(head + 3) & q->mask] = words | depth << 32;
    atomic_store_explicit(&q->head, head + total, memory_order_release);
    return 0;
}

uint64_t evq_dropped(void)
{
    return atomic_load(&dropped);
}

/* Copies and hands over every complete entry of one queue. */
static uint64_t drain_one(struct evq *q, uint64_t **scratch, size_t *cap,
                          void (*fn)(void *ctx, const struct evq_entry *e), void *ctx,
                          uint64_t until)
{
    uint64_t n = 0;
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
    while (tail < head) {
        uint64_t total = q->ring[tail & q->mask];
        if (total < HEADER_WORDS || total > head - tail) {
            tail = head; /* cannot happen with a correct producer; never loop on it */
            atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
            break;
        }
        if (q->ring[(tail + 2) & q->mask] >= until)
            break; /* taken after what the code map knows: the next time */
        uint64_t *w = mem_grow(*scratch, cap, total, sizeof *w);
        if (w) {
            *scratch = w;
            for (uint64_t i = 0; i < total; i++)
                w[i] = q->ring[(tail + i) & q->mask];
            struct evq_entry e;
            e.source = (uint32_t)(w[1] & 0xffff);
            e.kind = (uint32_t)(w[1] >> 16 & 0xffff);
            e.walk_flags = (uint32_t)(w[1] >> 32);
            e.tid = q->tid;
            e.time = w[2];
            e.words = (uint32_t)w[3];
            e.depth = (uint32_t)(w[3] >> 32);
            if (HEADER_WORDS + (uint64_t)e.words + e.depth == total) {
                e.payload = w + HEADER_WORDS;
                e.ips = w + HEADER_WORDS + e.words;
                fn(ctx, &e);
                n++;
            }
        } else {
            atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        }
        tail += total;
    }
    atomic_store_explicit(&q->tail, tail, memory_order_release);
    return n;
}

uint64_t evq_drain(void (*fn)(void *ctx, const struct evq_entry *e), void *ctx, uint64_t until)
{
    static uint64_t *scratch;
    static size_t cap;
    uint64_t n = 0;
    pthread_mutex_lock(&list_lock);
    struct evq *list = queues;
    pthread_mutex_unlock(&list_lock);
    /* new queues go on the front; those after `list` stay put while the
     * list lock is not held, and only this thread removes any */
    for (struct evq *q = list; q; q = q->next)
        n += drain_one(q, &scratch, &cap, fn, ctx, until);
    /* free the queues of ended threads, drained above (an ended thread
     * appends nothing more) */
    pthread_mutex_lock(&list_lock);
    for (struct evq **p = &queues; *p;) {
        struct evq *q = *p;
        if (atomic_load(&q->ended) &&
            atomic_load(&q->tail) == atomic_load(&q->head)) {
            *p = q->next;
            bytes_used -= EVQ_RING_WORDS * 8;
            mem_free(q->ring);
            mem_free(q);
            continue;
        }
        p = &q->next;
    }
    pthread_mutex_unlock(&list_lock);
    return n;
}

void evq_pause(void)
{
    atomic_store(&paused, 1);
}

void evq_open(void)
{
    atomic_store(&closed, 0);
    atomic_store(&paused, 0);
}

void evq_shutdown(void)
{
    pthread_mutex_lock(&list_lock);
    atomic_store(&closed, 1);
    atomic_fetch_add(&generation, 1);
    /* a live thread may be appending to its queue right now: those are
     * left to the process (bounded by the budget); ended ones are freed */
    for (struct evq **p = &queues; *p;) {
        struct evq *q = *p;
        *p = q->next;
        if (atomic_load(&q->ended)) {
            mem_free(q->ring);
            mem_free(q);
        }
    }
    bytes_used = 0;
    pthread_mutex_unlock(&list_lock);
}
