/*
 * shadow: see shadow.h.  The slow paths here run inside a hook, called
 * from the assembly with every register the JIT expects kept already
 * saved; they run on the thread whose state they change.  Memory comes
 * from mmap (nodes in chunks, the slot table, the frames), never from the
 * C library's allocator, and is bounded by SHADOW_BUDGET.
 */
#include "agent/trace/shadow.h"

#include <pthread.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/log.h"
#include "agent/trace/layout.h"
#include "agent/trace/methods.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_HOOKS 1 /* elt_x64.S, elt_arm64.S */
#else
#define HAVE_HOOKS 0
#endif

_Static_assert(offsetof(struct trace_frame, node) == TRF_NODE, "layout");
_Static_assert(offsetof(struct trace_frame, sp) == TRF_SP, "layout");
_Static_assert(offsetof(struct trace_frame, t0) == TRF_T0, "layout");
_Static_assert(offsetof(struct trace_frame, child) == TRF_CHILD, "layout");
_Static_assert(sizeof(struct trace_frame) == TRF_SIZE && TRF_SIZE == 1 << TRF_SHIFT, "layout");
_Static_assert(offsetof(struct trace_node, method) == TRN_METHOD, "layout");
_Static_assert(offsetof(struct trace_node, parent) == TRN_PARENT, "layout");
_Static_assert(offsetof(struct trace_node, calls) == TRN_CALLS, "layout");
_Static_assert(offsetof(struct trace_node, incl) == TRN_INCL, "layout");
_Static_assert(offsetof(struct trace_node, self) == TRN_SELF, "layout");
_Static_assert(offsetof(struct trace_node, max) == TRN_MAX, "layout");
_Static_assert(offsetof(struct trace_node, active) == TRN_ACTIVE, "layout");
_Static_assert(sizeof(struct trace_node) == TRN_SIZE, "layout");
_Static_assert(sizeof(struct trace_slot) == 16, "layout");
_Static_assert(offsetof(struct trace_thread, depth) == TRT_DEPTH, "layout");
_Static_assert(offsetof(struct trace_thread, cap) == TRT_CAP, "layout");
_Static_assert(offsetof(struct trace_thread, frames) == TRT_FRAMES, "layout");
_Static_assert(offsetof(struct trace_thread, slots) == TRT_SLOTS, "layout");
_Static_assert(offsetof(struct trace_thread, mask) == TRT_MASK, "layout");
_Static_assert(offsetof(struct trace_thread, overflow) == TRT_OVERFLOW, "layout");

#define CHUNK_BYTES ((size_t)SHADOW_CHUNK_NODES * sizeof(struct trace_node))
#define FIRST_SLOTS 1024u

/* The hooks' way to the thread's state: one initial-exec TLS word, two
 * instructions from the assembly. */
HIDDEN __thread struct trace_thread *trace_self __attribute__((tls_model("initial-exec")));

/* The state of a thread that must not trace: no frames fit, so every hook
 * takes the slow path, which ignores it. */
static struct trace_thread dead;

static _Atomic int enabled;
static int timed;
static uint32_t path_depth = 2;
static _Atomic uint64_t budget_used;
static _Atomic uint64_t failed_threads;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trace_thread *threads;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_made;

#if HAVE_HOOKS
/* The assembly (elt_x64.S, elt_arm64.S). */
extern void trace_enter_timed(void), trace_leave_timed(void);
extern void trace_enter_counts(void), trace_leave_counts(void);
#endif

uint64_t shadow_ticks(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#elif defined(__aarch64__)
    uint64_t ticks;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(ticks));
    return ticks;
#else
    return 0;
#endif
}

int shadow_timed(void)
{
    return timed;
}

/* ---- memory ------------------------------------------------------------------ */

static void *map_bytes(size_t n, int reserve_only)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (reserve_only ? MAP_NORESERVE : 0), -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Takes n bytes of the budget; 0 or -1 when it is spent. */
static int budget_take(uint64_t n)
{
    uint64_t used = atomic_fetch_add(&budget_used, n) + n;
    if (used > SHADOW_BUDGET) {
        atomic_fetch_sub(&budget_used, n);
        return -1;
    }
    return 0;
}

static void budget_give(uint64_t n)
{
    atomic_fetch_sub(&budget_used, n);
}

static inline void count(uint64_t *counter)
{
    __atomic_store_n(counter, *counter + 1, __ATOMIC_RELAXED);
}

/* ---- the slot table ------------------------------------------------------------ */

static inline uint64_t slot_hash(const struct trace_node *parent, uint64_t method)
{
    uint64_t h = method * (uint64_t)TRACE_HASH_K;
    h ^= (uint64_t)(uintptr_t)parent;
    h *= (uint64_t)TRACE_HASH_K;
    return h >> 32;
}

static struct trace_node *slot_find(const struct trace_thread *t, const struct trace_node *parent,
                                    uint64_t method)
{
    for (uint64_t i = slot_hash(parent, method);; i++) {
        const struct trace_slot *s = &t->slots[i & t->mask];
        if (!s->node)
            return NULL;
        if (s->parent == parent && s->node->method == method)
            return s->node;
    }
}

static void slot_put(struct trace_slot *slots, uint64_t mask, struct trace_node *parent,
                     struct trace_node *node)
{
    for (uint64_t i = slot_hash(parent, node->method);; i++) {
        struct trace_slot *s = &slots[i & mask];
        if (!s->node) {
            s->parent = parent;
            s->node = node;
            return;
        }
    }
}

/* Adds (parent, node->method) -> node, growing the table when half full.
 * Returns 0, or -1 (budget or memory): the path is then found by the slow
 * path every time, which still works. */
static int slot_add(struct trace_thread *t, struct trace_node *parent, struct trace_node *node)
{
    if ((t->slot_used + 1) * 2 > t->mask + 1) {
        uint64_t cap = (t->mask + 1) * 2;
        size_t bytes = cap * sizeof(struct trace_slot);
        if (budget_take(bytes) < 0)
            return -1;
        struct trace_slot *grown = map_bytes(bytes, 0);
        if (!grown) {
            budget_give(bytes);
            return -1;
        }
        for (uint64_t i = 0; i <= t->mask; i++)
            if (t->slots[i].node)
                slot_put(grown, cap - 1, t->slots[i].parent, t->slots[i].node);
        struct trace_slot *old = t->slots;
        size_t old_bytes = (t->mask + 1) * sizeof(struct trace_slot);
        t->slots = grown;
        t->mask = cap - 1;
        munmap(old, old_bytes);
        budget_give(old_bytes);
    }
    slot_put(t->slots, t->mask, parent, node);
    t->slot_used++;
    return 0;
}

/* ---- nodes ---------------------------------------------------------------------- */

/* A new node (its counters zero), published to the loop; NULL when the
 * budget is spent or the thread has no more chunks. */
static struct trace_node *node_new(struct trace_thread *t, struct trace_node *parent,
                                   uint64_t method)
{
    uint32_t n = atomic_load_explicit(&t->node_count, memory_order_relaxed);
    uint32_t chunk = n / SHADOW_CHUNK_NODES;
    if (chunk >= SHADOW_MAX_CHUNKS)
        return NULL;
    if (!t->chunks[chunk]) {
        if (budget_take(CHUNK_BYTES) < 0)
            return NULL;
        struct trace_node *c = map_bytes(CHUNK_BYTES, 0);
        if (!c) {
            budget_give(CHUNK_BYTES);
            return NULL;
        }
        __atomic_store_n(&t->chunks[chunk], c, __ATOMIC_RELEASE);
    }
    struct trace_node *node = &t->chunks[chunk][n % SHADOW_CHUNK_NODES];
    memset(node, 0, sizeof *node);
    node->method = method;
    node->parent = parent;
    node->index = n;
    node->depth = parent ? parent->depth + 1 : 0;
    atomic_store_explicit(&t->node_count, n + 1, memory_order_release);
    return node;
}

/* The node of a call of `method` made from `parent`, created when new.
 * Paths are cut at path_depth: a call from a node at the limit is counted
 * as a child of that node's parent (the node at the limit stands for every
 * call at that depth and deeper under its parent). */
static struct trace_node *node_for(struct trace_thread *t, struct trace_node *parent,
                                   uint64_t method)
{
    struct trace_node *owner = parent;
    if (parent->depth >= path_depth && parent->parent)
        owner = parent->parent;
    struct trace_node *node = owner == parent ? NULL : slot_find(t, owner, method);
    if (!node) {
        node = node_new(t, owner, method);
        if (!node)
            return NULL;
        if (owner != parent && slot_add(t, owner, node) < 0)
            return node;
    }
    slot_add(t, parent, node);
    return node;
}

/* ---- threads ---------------------------------------------------------------------- */

static void thread_ended(void *p);

static void make_key(void)
{
    key_made = pthread_key_create(&key, thread_ended) == 0;
}

static size_t state_bytes(void)
{
    size_t head = (sizeof(struct trace_thread) + TRF_SIZE - 1) / TRF_SIZE * TRF_SIZE;
    return head + (size_t)(SHADOW_FRAMES + 1) * TRF_SIZE;
}

/* The calling thread's state, made now; &dead when it cannot be. */
static struct trace_thread *thread_make(void)
{
    if (!atomic_load(&enabled))
        return &dead;
    pthread_once(&key_once, make_key);
    size_t bytes = state_bytes();
    size_t slot_bytes = FIRST_SLOTS * sizeof(struct trace_slot);
    if (!key_made || budget_take(slot_bytes) < 0) {
        atomic_fetch_add(&failed_threads, 1);
        return &dead;
    }
    struct trace_thread *t = map_bytes(bytes, 1);
    struct trace_slot *slots = map_bytes(slot_bytes, 0);
    struct trace_node *root = NULL, *lost = NULL;
    if (t && slots) {
        /* the mappings are zero-filled: every counter starts at 0 */
        size_t head = (sizeof(struct trace_thread) + TRF_SIZE - 1) / TRF_SIZE * TRF_SIZE;
        t->map_bytes = bytes;
        t->frames = (struct trace_frame *)((char *)t + head) + 1;
        t->cap = SHADOW_FRAMES;
        t->slots = slots;
        t->mask = FIRST_SLOTS - 1;
        t->tid = (pid_t)syscall(SYS_gettid);
        root = node_new(t, NULL, 0);
        lost = root ? node_new(t, root, 0) : NULL;
    }
    if (!lost) {
        if (t && t->chunks[0]) {
            munmap(t->chunks[0], CHUNK_BYTES);
            budget_give(CHUNK_BYTES);
        }
        if (t)
            munmap(t, bytes);
        if (slots)
            munmap(slots, slot_bytes);
        budget_give(slot_bytes);
        atomic_fetch_add(&failed_threads, 1);
        return &dead;
    }
    t->frames[-1].node = root;
    t->frames[-1].sp = UINT64_MAX; /* never a returned frame, never matched */
    pthread_mutex_lock(&list_lock);
    t->next = threads;
    threads = t;
    pthread_mutex_unlock(&list_lock);
    pthread_setspecific(key, t);
    return t;
}

static void thread_free(struct trace_thread *t)
{
    for (uint32_t c = 0; c < SHADOW_MAX_CHUNKS && t->chunks[c]; c++) {
        munmap(t->chunks[c], CHUNK_BYTES);
        budget_give(CHUNK_BYTES);
    }
    size_t slot_bytes = (t->mask + 1) * sizeof(struct trace_slot);
    munmap(t->slots, slot_bytes);
    budget_give(slot_bytes);
    munmap(t, t->map_bytes);
}

/* ---- frames ------------------------------------------------------------------------- */

/* A Leave hook marks its frame returned (SP 0) instead of popping it; only
 * the top frame can be one.  Every path here pops it first. */
static void settle(struct trace_thread *t)
{
    if (t->depth && t->frames[t->depth - 1].sp == 0)
        t->depth--;
}

/* Closes the top frame at tick `now`: what a Leave hook does. */
static void frame_close(struct trace_thread *t, uint64_t now)
{
    struct trace_frame *f = &t->frames[t->depth - 1];
    struct trace_node *node = f->node;
    if (timed) {
        uint64_t incl = now > f->t0 ? now - f->t0 : 0;
        f[-1].child += incl;
        node->self += incl > f->child ? incl - f->child : 0;
        if (--node->active == 0) {
            node->incl += incl;
            if (incl > node->max)
                node->max = incl;
        }
    }
    t->depth--;
}

/* Closes frames down to (not including) index `keep`, counted as abandoned. */
static void close_above(struct trace_thread *t, uint64_t keep, uint64_t now)
{
    while (t->depth > keep) {
        frame_close(t, now);
        count(&t->abandoned);
    }
}

static int frame_is(const struct trace_thread *t, uint64_t i, uint64_t id, uint64_t sp)
{
    const struct trace_frame *f = &t->frames[i];
    return f->sp == sp && (f->node->method == id || f->node->index == SHADOW_LOST);
}

/* The top-most frame of a function (by its FunctionID), or UINT64_MAX. */
static uint64_t frame_of_function(const struct trace_thread *t, FunctionID function)
{
    for (uint64_t i = t->depth; i > 0; i--) {
        uint64_t method = t->frames[i - 1].node->method;
        if (method && methods_function(method) == function)
            return i - 1;
    }
    return UINT64_MAX;
}

/* The calling thread's state, its stack settled; NULL when it has none. */
static struct trace_thread *own_state(void)
{
    struct trace_thread *t = trace_self;
    if (!t || t == &dead)
        return NULL;
    settle(t);
    return t;
}

/* ---- the slow paths -------------------------------------------------------------------- */

void shadow_slow_enter(uint64_t id, uint64_t sp)
{
    struct trace_thread *t = trace_self;
    if (!t) {
        t = thread_make();
        trace_self = t;
    }
    if (t == &dead)
        return;
    settle(t);
    if (t->depth >= t->cap) {
        t->overflow++;
        count(&t->untracked);
        return;
    }
    struct trace_node *parent = t->frames[(int64_t)t->depth - 1].node;
    struct trace_node *node = slot_find(t, parent, id);
    if (!node)
        node = node_for(t, parent, id);
    if (!node) {
        node = shadow_node(t, SHADOW_LOST);
        count(&t->untracked);
    }
    node->calls++;
    if (timed)
        node->active++;
    struct trace_frame *f = &t->frames[t->depth];
    f->node = node;
    f->child = 0;
    f->t0 = timed ? shadow_ticks() : 0;
    __atomic_store_n(&f->sp, sp, __ATOMIC_RELEASE); /* last, as the hooks do */
    t->depth++;
}

void shadow_slow_leave(uint64_t id, uint64_t sp)
{
    struct trace_thread *t = own_state();
    if (!t)
        return;
    if (t->overflow) {
        t->overflow--;
        return;
    }
    uint64_t now = timed ? shadow_ticks() : 0;
    for (uint64_t i = t->depth; i > 0; i--) {
        if (frame_is(t, i - 1, id, sp)) {
            close_above(t, i, now);
            frame_close(t, now);
            return;
        }
    }
    count(&t->unmatched);
}

/* ---- exceptions --------------------------------------------------------------------------- */

void shadow_unwind_enter(FunctionID function)
{
    struct trace_thread *t = own_state();
    if (t)
        t->unwinding = function;
}

void shadow_unwind_leave(void)
{
    struct trace_thread *t = own_state();
    if (!t || !t->unwinding)
        return;
    if (t->overflow) {
        /* the deepest activations were never stacked: this is one of them
         * when its method is traced */
        t->overflow--;
        return;
    }
    uint64_t at = frame_of_function(t, t->unwinding);
    t->unwinding = 0;
    if (at == UINT64_MAX)
        return; /* not traced: nothing of it is on the stack */
    uint64_t now = timed ? shadow_ticks() : 0;
    close_above(t, at + 1, now);
    frame_close(t, now);
}

void shadow_catcher_enter(FunctionID function)
{
    struct trace_thread *t = own_state();
    if (!t)
        return;
    t->unwinding = 0;
    uint64_t at = frame_of_function(t, function);
    if (at != UINT64_MAX)
        close_above(t, at + 1, timed ? shadow_ticks() : 0);
}

/* ---- thread end ------------------------------------------------------------------------------ */

/* The key's destructor, on the ending thread: its open frames are closed
 * and counted, and the loop may free the state. */
static void thread_ended(void *p)
{
    struct trace_thread *t = p;
    if (!t || t == &dead)
        return;
    settle(t);
    uint64_t now = timed ? shadow_ticks() : 0;
    while (t->depth) {
        frame_close(t, now);
        count(&t->closed_at_end);
    }
    t->overflow = 0;
    /* any hook after this (another key's destructor running managed
     * code) finds the dead state, never the freed one */
    trace_self = &dead;
    atomic_store_explicit(&t->ended, 1, memory_order_release);
}

/* ---- the loop's side ---------------------------------------------------------------------------- */

void shadow_each(int (*fn)(void *ctx, struct trace_thread *t, int ended), void *ctx,
                 int ended_only, void (*loop_free)(void *loop_data))
{
    pthread_mutex_lock(&list_lock);
    struct trace_thread *list = threads;
    pthread_mutex_unlock(&list_lock);
    /* new states go on the front; those from `list` on stay put, and only
     * this thread removes any */
    int any_done = 0;
    for (struct trace_thread *t = list; t; t = t->next) {
        int ended = atomic_load_explicit(&t->ended, memory_order_acquire);
        if ((ended || !ended_only) && fn(ctx, t, ended) && ended) {
            t->reaped = 1;
            any_done = 1;
        }
    }
    if (!any_done)
        return;
    pthread_mutex_lock(&list_lock);
    for (struct trace_thread **p = &threads; *p;) {
        struct trace_thread *t = *p;
        if (t->reaped) {
            *p = t->next;
            if (loop_free)
                loop_free(t->loop_data);
            thread_free(t);
            continue;
        }
        p = &t->next;
    }
    pthread_mutex_unlock(&list_lock);
}

uint32_t shadow_open_frames(struct trace_thread *t, struct trace_frame *out, uint32_t max)
{
    uint64_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
    if (depth > t->cap)
        depth = t->cap;
    uint32_t n = 0;
    for (uint64_t i = 0; i < depth && n < max; i++) {
        /* a frame whose call returned (SP 0) is not open; the hooks store
         * the SP last, with a release (arm64's order is not x86-64's) */
        uint64_t sp = __atomic_load_n(&t->frames[i].sp, __ATOMIC_ACQUIRE);
        if (!sp)
            continue;
        out[n].node = __atomic_load_n(&t->frames[i].node, __ATOMIC_RELAXED);
        out[n].sp = sp;
        out[n].t0 = __atomic_load_n(&t->frames[i].t0, __ATOMIC_RELAXED);
        out[n].child = __atomic_load_n(&t->frames[i].child, __ATOMIC_RELAXED);
        n++;
    }
    return n;
}

uint64_t shadow_failed_threads(void)
{
    return atomic_load(&failed_threads);
}

/* ---- the hooks' own cost ------------------------------------------------------------------------ */

#if HAVE_HOOKS
extern void trace_calibrate_loop(uint64_t calls, uint64_t outer_id, uint64_t inner_id);

#define CALIBRATE_OUTER 0xFFFFFFF0ull
#define CALIBRATE_INNER 0xFFFFFFF1ull
#define CALIBRATE_ROUNDS_MAX 64u

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t node_incl(struct trace_thread *t, uint64_t parent_method, uint64_t method)
{
    struct trace_node *root = shadow_node(t, SHADOW_ROOT);
    struct trace_node *parent = parent_method ? slot_find(t, root, parent_method) : root;
    struct trace_node *n = parent ? slot_find(t, parent, method) : NULL;
    return n ? n->incl : 0;
}
#endif

int shadow_calibrate(uint32_t calls, uint32_t rounds, double *call_ticks, double *own_ticks)
{
#if HAVE_HOOKS
    if (!timed || !atomic_load(&enabled) || !calls || rounds < 1 || rounds > CALIBRATE_ROUNDS_MAX)
        return -1;
    struct trace_thread *saved = trace_self;
    trace_self = NULL;
    trace_calibrate_loop(calls, CALIBRATE_OUTER, CALIBRATE_INNER); /* paths made, caches warm */
    struct trace_thread *t = trace_self;
    int ok = t && t != &dead;
    double call[CALIBRATE_ROUNDS_MAX], own[CALIBRATE_ROUNDS_MAX];
    for (uint32_t r = 0; ok && r < rounds; r++) {
        uint64_t outer0 = node_incl(t, 0, CALIBRATE_OUTER);
        uint64_t inner0 = node_incl(t, CALIBRATE_OUTER, CALIBRATE_INNER);
        trace_calibrate_loop(calls, CALIBRATE_OUTER, CALIBRATE_INNER);
        call[r] = (double)(node_incl(t, 0, CALIBRATE_OUTER) - outer0) / calls;
        own[r] = (double)(node_incl(t, CALIBRATE_OUTER, CALIBRATE_INNER) - inner0) / calls;
    }
    if (t && t != &dead) {
        /* the measurement's state is no thread's: unlisted and freed */
        pthread_mutex_lock(&list_lock);
        for (struct trace_thread **p = &threads; *p; p = &(*p)->next) {
            if (*p == t) {
                *p = t->next;
                break;
            }
        }
        pthread_mutex_unlock(&list_lock);
        thread_free(t);
    }
    if (key_made)
        pthread_setspecific(key, saved == &dead ? NULL : saved);
    trace_self = saved;
    if (!ok)
        return -1;
    qsort(call, rounds, sizeof *call, by_value);
    qsort(own, rounds, sizeof *own, by_value);
    *call_ticks = call[rounds / 2];
    *own_ticks = own[rounds / 2];
    return 0;
#else
    (void)calls;
    (void)rounds;
    (void)call_ticks;
    (void)own_ticks;
    return -1;
#endif
}

/* ---- setup ------------------------------------------------------------------------------------ */

int shadow_init(int want_timed, uint32_t depth_limit)
{
#if HAVE_HOOKS
    timed = want_timed;
    path_depth = depth_limit < 2 ? 2 : depth_limit;
    dead.cap = 0;
    dead.frames = NULL;
    atomic_store(&enabled, 1);
    return 0;
#else
    (void)want_timed;
    (void)depth_limit;
    log_error("--trace needs an x86-64 or arm64 machine (its hooks are written for their JITs)");
    return -1;
#endif
}

void shadow_hooks(FunctionEnter3 **enter, FunctionLeave3 **leave, FunctionTailcall3 **tail)
{
#if HAVE_HOOKS
    void (*e)(void) = timed ? trace_enter_timed : trace_enter_counts;
    void (*l)(void) = timed ? trace_leave_timed : trace_leave_counts;
    *enter = (FunctionEnter3 *)(void *)e;
    *leave = (FunctionLeave3 *)(void *)l;
    /* a tail call ends the caller's activation: the same as a Leave */
    *tail = (FunctionTailcall3 *)(void *)l;
#else
    *enter = NULL;
    *leave = NULL;
    *tail = NULL;
#endif
}

/* ---- tests -------------------------------------------------------------------------------------- */

struct trace_thread *shadow_self(void)
{
    return own_state();
}

uint64_t shadow_depth(const struct trace_thread *t)
{
    return t->depth && t->frames[t->depth - 1].sp == 0 ? t->depth - 1 : t->depth;
}

void shadow_thread_end_for_test(void)
{
    struct trace_thread *t = own_state();
    if (t) {
        pthread_setspecific(key, NULL);
        thread_ended(t);
    }
    trace_self = NULL;
}

void shadow_reset_for_test(void)
{
    atomic_store(&enabled, 0);
    pthread_mutex_lock(&list_lock);
    for (struct trace_thread **p = &threads; *p;) {
        struct trace_thread *t = *p;
        if (atomic_load(&t->ended)) {
            *p = t->next;
            thread_free(t);
            continue;
        }
        p = &t->next;
    }
    threads = NULL; /* live ones leak, as after a Shutdown */
    pthread_mutex_unlock(&list_lock);
    trace_self = NULL;
}
