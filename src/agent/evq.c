/*
 * evq: see evq.h.  Entry layout in the ring, in words:
 *   [0] total words of the entry
 *   [1] source (bits 0-15), kind (16-31), walk flags (32-63)
 *   [2] time, ns
 *   [3] payload words (0-31), stack depth (32-62), stack sent before (63)
 *   [4 ...] the payload; then, with a stack, its hash and (unless it was
 *           sent before) the stack's instruction pointers
 *
 * Stacks sent before: events come in storms from the same code (a loop
 * that throws, a lock waited for again and again), so a thread often walks
 * the very stack it walked a moment ago.  Each queue remembers the hashes
 * of the last stacks it sent in STACK_SLOTS slots (slot = hash % slots);
 * a stack whose hash is in its slot goes as the hash alone.  The loop
 * keeps the same slots per queue, filled from the entries in their order,
 * so it hands the source the very addresses the walk found.  An entry
 * that could not be queued leaves the slots as they were.
 *
 * For the same reason each queue keeps its thread's last walk (walk.h,
 * struct walk_memo): the next walk stops unwinding where it meets it, and
 * takes the frames above from it once their return addresses are checked
 * in place (a throw in a loop walks its ~30 frames as one or two steps).
 */
#include "agent/evq.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/signal/achain.h"
#include "agent/signal/loop_wake.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/ring.h"
#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/walk.h"
#include "common/clock.h"
#include "common/mem.h"

#define HEADER_WORDS 5
#define STACK_SLOTS 64u
#define SENT_BEFORE (1ull << 63)
/* Frames of a thread's last walk kept for the next (walk.h, struct
 * walk_memo): deeper walks are not remembered. */
#define MEMO_FRAMES 128u
#define MEMO_BYTES (2u * MEMO_FRAMES * sizeof(struct walk_memo_frame))
/* How long a callback waits for the agent's thread to parse an unwind
 * table its walk needed (once per library, in the program's first moments;
 * the waiting callback wakes the agent's thread, which parses libcoreclr.so
 * in 5 to 8 ms): long enough for a loaded machine, short enough to be no stall. */
#define PENDING_WAIT_NS 100000000ull

/* The loop's copy of a stack sent in full (a queue's slot). */
struct sent_stack {
    uint64_t hash;
    uint64_t *ips;
    size_t cap;
    uint32_t depth;
};

/* A ring and its size, swapped whole when the queue grows. */
struct ring {
    uint64_t mask;
    uint64_t w[];
};

struct evq {
    _Atomic uint64_t head; /* words written (the thread) */
    _Atomic uint64_t tail; /* words consumed (the loop) */
    struct ring *_Atomic ring; /* where the thread writes (it alone replaces it) */
    struct ring *_Atomic old;  /* the ring before, until the loop has read it to switch_at */
    uint64_t switch_at;        /* the first word written to `ring` rather than `old` */
    int grow;              /* the thread's: its ring filled up; a bigger one */
    pid_t tid;
    uint64_t generation;   /* of the agent run that made it */
    uintptr_t stack_hi;    /* top of the thread's stack, 0 when unknown */
    _Atomic int ended;     /* its thread has exited */
    struct evq *next;      /* the list, under list_lock */
    uint64_t sent[STACK_SLOTS];          /* the thread's: hashes of stacks sent in full */
    struct walk_memo memo;               /* the thread's: its last walk (frames NULL: none) */
    struct sent_stack *known;            /* the loop's: the same slots with their stacks */
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
static __thread uint64_t mine_generation; /* never read through `mine`: it may be freed */
static __thread int making; /* a queue is being made: nested callbacks drop */

static void free_queue(struct evq *q)
{
    if (q->known)
        for (uint32_t i = 0; i < STACK_SLOTS; i++)
            mem_free(q->known[i].ips);
    mem_free(q->known);
    mem_free(q->memo.frames);
    mem_free(atomic_load(&q->ring));
    mem_free(atomic_load(&q->old));
    mem_free(q);
}

static uint64_t ring_bytes(const struct ring *r)
{
    return r ? (r->mask + 1) * 8 : 0;
}

static uint64_t memo_bytes(const struct evq *q)
{
    return q->memo.frames ? MEMO_BYTES : 0;
}

static struct ring *new_ring(uint64_t words)
{
    struct ring *r = mem_alloc(sizeof *r + words * sizeof r->w[0]);
    if (r)
        r->mask = words - 1;
    return r;
}

/* The thread's own queue: a ring four times as big, if the budget allows.
 * What is in the old one stays there for the loop to read: the old ring is
 * read up to switch_at, the new one from there on (an entry is always
 * whole in one ring), and the loop frees the old one when it is past it.
 * One switch at a time. */
static void grow_ring(struct evq *q, uint64_t head)
{
    struct ring *cur = atomic_load_explicit(&q->ring, memory_order_relaxed);
    uint64_t words = cur->mask + 1;
    if (words >= EVQ_RING_WORDS_MAX) {
        q->grow = 0;
        return;
    }
    if (atomic_load_explicit(&q->old, memory_order_acquire))
        return; /* the loop has not finished with the last switch */
    uint64_t bigger = words * 4 < EVQ_RING_WORDS_MAX ? words * 4 : EVQ_RING_WORDS_MAX;
    pthread_mutex_lock(&list_lock);
    int ok = bytes_used + bigger * 8 <= EVQ_BUDGET;
    if (ok)
        bytes_used += bigger * 8;
    pthread_mutex_unlock(&list_lock);
    struct ring *r = ok ? new_ring(bigger) : NULL;
    if (!r) {
        if (ok) {
            pthread_mutex_lock(&list_lock);
            bytes_used -= bigger * 8;
            pthread_mutex_unlock(&list_lock);
        }
        q->grow = 0; /* no more memory: it stays as it is */
        return;
    }
    q->switch_at = head;
    atomic_store_explicit(&q->old, cur, memory_order_release);
    atomic_store_explicit(&q->ring, r, memory_order_release);
    q->grow = 0;
}

static uint64_t stack_hash(const struct ring *r, uint64_t at, uint64_t depth, uint32_t flags)
{
    uint64_t h = 0xcbf29ce484222325ull ^ depth ^ (uint64_t)flags << 40;
    for (uint64_t i = 0; i < depth; i++) {
        h ^= r->w[(at + i) & r->mask];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

/* The thread's own queue, found by its tid: the key's value is only a
 * marker, since after a detach (evq_free_all) the queue may be gone. */
static void on_thread_exit(void *p)
{
    (void)p;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    pthread_mutex_lock(&list_lock);
    for (struct evq *q = queues; q; q = q->next)
        if (q->tid == tid)
            atomic_store(&q->ended, 1);
    pthread_mutex_unlock(&list_lock);
}

static void make_key(void)
{
    pthread_key_create(&key, on_thread_exit);
}

static uintptr_t own_stack_top(void)
{
    uintptr_t lo, hi;
    return stack_bounds_own(&lo, &hi) ? hi : 0;
}

/* The calling thread's queue, made on first use; NULL when it cannot be. */
static struct evq *own_queue(void)
{
    uint64_t gen = atomic_load(&generation);
    if (mine && mine_generation == gen)
        return mine;
    if (making || atomic_load(&closed))
        return NULL;
    making = 1;
    pthread_once(&key_once, make_key);
    struct evq *q = mem_calloc(1, sizeof *q);
    struct ring *ring = new_ring(EVQ_RING_WORDS);
    int ok = q && ring;
#if defined(__x86_64__) /* the memo's check is x86-64's (walk.h) */
    if (ok && (q->memo.frames = mem_alloc(MEMO_BYTES)) != NULL)
        q->memo.cap = MEMO_FRAMES;
#endif
    if (ok) {
        pthread_mutex_lock(&list_lock);
        ok = !atomic_load(&closed) &&
             bytes_used + EVQ_RING_WORDS * 8 + memo_bytes(q) <= EVQ_BUDGET;
        if (ok) {
            atomic_store(&q->ring, ring);
            q->tid = (pid_t)syscall(SYS_gettid);
            q->generation = gen;
            q->next = queues;
            queues = q;
            bytes_used += EVQ_RING_WORDS * 8 + memo_bytes(q);
        }
        pthread_mutex_unlock(&list_lock);
    }
    if (!ok) {
        if (q)
            mem_free(q->memo.frames);
        mem_free(q);
        mem_free(ring);
        making = 0;
        return NULL;
    }
    q->stack_hi = own_stack_top();
    pthread_setspecific(key, (void *)1);
    mine = q;
    mine_generation = gen;
    making = 0;
    return q;
}

struct ring_cursor {
    struct ring *r;
    uint64_t at;
    uintptr_t local; /* the async slot's local (signal/achain.h), 0 none */
    uint64_t runner; /* the last frame whose sp is at or below it */
    int beyond;      /* a frame above it was reached */
};

static void put_pc(void *ctx, uint64_t index, uint64_t pc, uintptr_t sp)
{
    struct ring_cursor *c = ctx;
    c->r->w[(c->at + index) & c->r->mask] = pc;
    if (c->local && sp <= c->local)
        c->runner = index;
    else if (c->local)
        c->beyond = 1;
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
    if (q->grow)
        grow_ring(q, head);
    struct ring *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    uint64_t free_words = r->mask + 1 - (head - tail);
    if (free_words < HEADER_WORDS + words + (max_depth ? 1 : 0)) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        q->grow = 1;
        return -1;
    }
    uint64_t room = free_words - HEADER_WORDS - words;
    if (max_depth > room)
        max_depth = (uint32_t)room;
    if (max_depth && room > 0)
        max_depth = (uint32_t)(room - 1 < max_depth ? room - 1 : max_depth); /* and the hash */
    uint64_t at = head + HEADER_WORDS;
    for (uint32_t i = 0; i < words; i++)
        r->w[(at + i) & r->mask] = payload[i];
    at += words;
    uint32_t flags = 0;
    uint64_t depth = 0, hash = 0, sent = 0;
    uint64_t chain[ACHAIN_MAX];
    uint32_t chain_n = 0, chain_end = 0, runner = UINT32_MAX;
    if (max_depth) {
        uintptr_t *frame = __builtin_frame_address(0);
        /* the caller's SP is this function's CFA (not frame + 2 on arm64,
         * whose frame record lies at the bottom of the frame) */
        struct walk_regs regs = {(uintptr_t)frame[1], (uintptr_t)__builtin_dwarf_cfa(),
                                 (uintptr_t)frame[0], 0, 0};
        uintptr_t hi = q->stack_hi > regs.sp ? q->stack_hi : 0;
        /* the logical async stack, when the thread runs async code; its
         * words go last, when they fit */
        uintptr_t local = 0;
        chain_n = achain_read(regs.sp, hi, 0, chain, ACHAIN_MAX, &local, &chain_end);
        if (chain_n + 1 >= max_depth)
            chain_n = 0;
        max_depth -= chain_n;
        struct ring_cursor c = {r, at + 1, chain_n ? local : 0, 0, 0};
        uint32_t token = thread_rings_walker_enter();
        depth = walk_stack_memo(regs, hi, max_depth, put_pc, &c, &flags, &q->memo);
        thread_rings_walker_leave(token);
        if ((flags & WALK_PENDING) && nativeunwind_wait_tables(PENDING_WAIT_NS)) {
            /* a library on this stack had no table yet (the program's
             * first moments): by frame pointers the walk could skip a
             * frameless helper's caller; the same stack, walked again */
            flags = 0;
            c.at = at + 1;
            c.runner = 0;
            c.beyond = 0;
            token = thread_rings_walker_enter();
            depth = walk_stack_memo(regs, hi, max_depth, put_pc, &c, &flags, &q->memo);
            thread_rings_walker_leave(token);
        }
        if (chain_n && (c.beyond || !(flags & (WALK_FAILED | WALK_TRUNCATED))))
            runner = (uint32_t)c.runner;
        hash = stack_hash(r, at + 1, depth, flags);
        sent = q->sent[hash % STACK_SLOTS] == hash;
        r->w[at & r->mask] = hash;
        uint64_t chain_at = at + 1 + (sent ? 0 : depth);
        for (uint32_t i = 0; i < chain_n; i++)
            r->w[(chain_at + i) & r->mask] = chain[i];
    }
    uint64_t total = HEADER_WORDS + words + (max_depth ? 1 + (sent ? 0 : depth) + chain_n : 0);
    r->w[head & r->mask] = total;
    r->w[(head + 1) & r->mask] = (source & 0xffff) | (kind & 0xffff) << 16 | (uint64_t)flags << 32;
    r->w[(head + 2) & r->mask] = clock_now_ns();
    r->w[(head + 3) & r->mask] = words | depth << 32 | (sent ? SENT_BEFORE : 0);
    r->w[(head + 4) & r->mask] = ring_async_word(chain_n, chain_end, runner);
    atomic_store_explicit(&q->head, head + total, memory_order_release);
    loop_wake_if_quiet(LOOP_WAKE_WORK);
    if (max_depth)
        q->sent[hash % STACK_SLOTS] = hash;
    /* more than half full: a bigger ring next time it is empty */
    if (head + total - tail > (r->mask + 1) / 2)
        q->grow = 1;
    return 0;
}

uint64_t evq_drained(void)
{
    struct evq *q = atomic_load_explicit(&paused, memory_order_relaxed) ? NULL : own_queue();
    return q ? atomic_load_explicit(&q->tail, memory_order_acquire) : 0;
}

int evq_room(uint32_t words)
{
    if (atomic_load_explicit(&paused, memory_order_relaxed))
        return 1; /* nothing is queued any more, and nothing drains: never wait */
    struct evq *q = own_queue();
    if (!q)
        return 1; /* no queue (closed, or the budget spent): nothing to wait for */
    const struct ring *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
    if (q->grow && r->mask + 1 < EVQ_RING_WORDS_MAX &&
        !atomic_load_explicit(&q->old, memory_order_acquire))
        return 1; /* the next push moves to a bigger ring */
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    return r->mask + 1 - (head - tail) >= HEADER_WORDS + 1 + (uint64_t)words;
}

int evq_pressed(void)
{
    struct evq *q = mine;
    if (!q || mine_generation != atomic_load_explicit(&generation, memory_order_relaxed))
        return 0;
    const struct ring *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
    uint64_t used = atomic_load_explicit(&q->head, memory_order_relaxed) -
                    atomic_load_explicit(&q->tail, memory_order_relaxed);
    return used > (r->mask + 1) / 4;
}

uint64_t evq_dropped(void)
{
    return atomic_load(&dropped);
}

/* The stack of an entry: its addresses follow the hash, or were sent
 * before (the queue's slot).  Returns the addresses, or NULL when the
 * slot does not hold that stack (which a correct producer never causes). */
static const uint64_t *entry_stack(struct evq *q, const uint64_t *w, uint32_t depth, int sent,
                                   const uint64_t *ips)
{
    uint64_t hash = w[HEADER_WORDS + (uint32_t)w[3]];
    if (!q->known) {
        q->known = mem_calloc(STACK_SLOTS, sizeof *q->known);
        if (!q->known)
            return sent ? NULL : ips;
    }
    struct sent_stack *k = &q->known[hash % STACK_SLOTS];
    if (sent)
        return k->hash == hash && k->depth == depth ? k->ips : NULL;
    uint64_t *grown = mem_grow(k->ips, &k->cap, depth ? depth : 1, sizeof *grown);
    if (grown) {
        k->ips = grown;
        memcpy(k->ips, ips, depth * sizeof *ips);
        k->hash = hash;
        k->depth = depth;
    } else {
        k->hash = 0;
    }
    return ips;
}

/* A queue being drained: where its next entry starts, where the queue
 * ends, and the time of the entry at tail. */
struct cursor {
    struct evq *q;
    uint64_t tail, head;
    const struct ring *cur;
    struct ring *old;
    uint64_t time;
};

/* The ring the entry at the cursor's tail is in. */
static const struct ring *cursor_ring(const struct cursor *c)
{
    return c->old && c->tail < c->q->switch_at ? c->old : c->cur;
}

/* Loads the time of the cursor's next entry; 0 when there is none that
 * may be handed over (empty, or taken at or after `until`: after what the
 * code map knows, so the next time). */
static int cursor_peek(struct cursor *c, uint64_t until)
{
    if (c->tail >= c->head)
        return 0;
    const struct ring *r = cursor_ring(c);
    uint64_t total = r->w[c->tail & r->mask];
    if (total < HEADER_WORDS || total > c->head - c->tail) {
        c->tail = c->head; /* cannot happen with a correct producer; never loop on it */
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        return 0;
    }
    c->time = r->w[(c->tail + 2) & r->mask];
    return c->time < until;
}

/* Copies the cursor's next entry out of its ring, hands it over, steps. */
static void cursor_take(struct cursor *c, uint64_t **scratch, size_t *cap,
                        void (*fn)(void *ctx, const struct evq_entry *e), void *ctx)
{
    const struct ring *r = cursor_ring(c);
    uint64_t total = r->w[c->tail & r->mask];
    uint64_t *w = mem_grow(*scratch, cap, total, sizeof *w);
    if (!w) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        c->tail += total;
        return;
    }
    *scratch = w;
    for (uint64_t i = 0; i < total; i++)
        w[i] = r->w[(c->tail + i) & r->mask];
    c->tail += total;
    struct evq_entry e;
    e.source = (uint32_t)(w[1] & 0xffff);
    e.kind = (uint32_t)(w[1] >> 16 & 0xffff);
    e.walk_flags = (uint32_t)(w[1] >> 32);
    e.tid = c->q->tid;
    e.time = w[2];
    e.words = (uint32_t)w[3];
    e.depth = (uint32_t)(w[3] >> 32 & 0x7fffffff);
    int sent = (w[3] & SENT_BEFORE) != 0;
    e.chain_n = RING_ASYNC_COUNT(w[4]);
    e.chain_end = RING_ASYNC_END(w[4]);
    e.runner = RING_ASYNC_RUNNER(w[4]);
    uint64_t stack_words = e.depth || sent ? 1 + (sent ? 0 : e.depth) : 0;
    /* an entry walked with no frame still has its hash */
    if (!stack_words && HEADER_WORDS + (uint64_t)e.words + 1 + e.chain_n == total)
        stack_words = 1;
    if (HEADER_WORDS + (uint64_t)e.words + stack_words + e.chain_n != total)
        return;
    e.payload = w + HEADER_WORDS;
    e.chain = w + HEADER_WORDS + e.words + stack_words;
    e.ips = w + HEADER_WORDS + e.words + 1;
    if (stack_words)
        e.ips = entry_stack(c->q, w, e.depth, sent, e.ips);
    if (!e.ips) {
        /* cannot happen with a correct producer: no stack */
        e.ips = w;
        e.depth = 0;
        e.walk_flags |= WALK_FAILED;
    }
    fn(ctx, &e);
}

/* The heap of cursors with something to hand over, earliest first. */
static void heap_down(struct cursor **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l]->time < h[m]->time)
            m = l;
        if (r < n && h[r]->time < h[m]->time)
            m = r;
        if (m == i)
            return;
        struct cursor *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Every queue's entries are handed over in one time order across the
 * threads: sources that put together what several threads said (a
 * background collection starts on one thread and ends on another) see it
 * as it happened. */
uint64_t evq_drain(void (*fn)(void *ctx, const struct evq_entry *e), void *ctx, uint64_t until)
{
    static uint64_t *scratch;
    static size_t cap;
    static struct cursor *cursors;
    static struct cursor **heap;
    static size_t cursors_cap, heap_cap;
    uint64_t n = 0;
    pthread_mutex_lock(&list_lock);
    struct evq *list = queues;
    pthread_mutex_unlock(&list_lock);
    /* new queues go on the front; those after `list` stay put while the
     * list lock is not held, and only this thread removes any */
    size_t count = 0;
    for (struct evq *q = list; q; q = q->next) {
        struct cursor *grown = mem_grow(cursors, &cursors_cap, count + 1, sizeof *cursors);
        struct cursor **hgrown = grown ? mem_grow(heap, &heap_cap, count + 1, sizeof *heap) : NULL;
        if (grown)
            cursors = grown;
        if (!grown || !hgrown)
            break; /* out of memory: the rest waits for the next drain */
        heap = hgrown;
        struct cursor *c = &cursors[count++];
        c->q = q;
        c->tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
        c->head = atomic_load_explicit(&q->head, memory_order_acquire);
        /* after the head, so a new ring is seen with the entries written to
         * it, and the old one with it */
        c->cur = atomic_load_explicit(&q->ring, memory_order_acquire);
        c->old = atomic_load_explicit(&q->old, memory_order_acquire);
    }
    size_t live = 0;
    for (size_t i = 0; i < count; i++)
        if (cursor_peek(&cursors[i], until))
            heap[live++] = &cursors[i];
    for (size_t i = live; i-- > 0;)
        heap_down(heap, live, i);
    while (live) {
        struct cursor *c = heap[0];
        cursor_take(c, &scratch, &cap, fn, ctx);
        n++;
        if (!cursor_peek(c, until))
            heap[0] = heap[--live];
        heap_down(heap, live, 0);
    }
    for (size_t i = 0; i < count; i++) {
        struct cursor *c = &cursors[i];
        struct evq *q = c->q;
        atomic_store_explicit(&q->tail, c->tail, memory_order_release);
        if (c->old && c->tail >= q->switch_at) {
            /* past the switch: the thread may switch again */
            pthread_mutex_lock(&list_lock);
            bytes_used -= ring_bytes(c->old);
            pthread_mutex_unlock(&list_lock);
            atomic_store_explicit(&q->old, NULL, memory_order_release);
            mem_free(c->old);
        }
    }
    /* free the queues of ended threads, drained above (an ended thread
     * appends nothing more) */
    pthread_mutex_lock(&list_lock);
    for (struct evq **p = &queues; *p;) {
        struct evq *q = *p;
        if (atomic_load(&q->ended) &&
            atomic_load(&q->tail) == atomic_load(&q->head)) {
            *p = q->next;
            bytes_used -= ring_bytes(atomic_load(&q->ring)) + ring_bytes(atomic_load(&q->old)) +
                          memo_bytes(q);
            free_queue(q);
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
    atomic_store(&dropped, 0);
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
        if (atomic_load(&q->ended))
            free_queue(q);
    }
    bytes_used = 0;
    pthread_mutex_unlock(&list_lock);
}

void evq_free_all(void)
{
    pthread_mutex_lock(&list_lock);
    atomic_store(&closed, 1);
    atomic_fetch_add(&generation, 1);
    while (queues) {
        struct evq *q = queues;
        queues = q->next;
        free_queue(q);
    }
    bytes_used = 0;
    pthread_mutex_unlock(&list_lock);
}
