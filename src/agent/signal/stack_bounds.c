/*
 * stack_bounds: see stack_bounds.h.
 */
#include "agent/signal/stack_bounds.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "agent/signal/thread_rings.h"
#include "agent/signal/vma_query.h"
#include "common/mem.h"
#include "common/procmaps.h"

struct range {
    uintptr_t lo, hi;
};

struct snapshot {
    uint64_t generation; /* of the /proc/self/maps read it holds */
    size_t count;
    struct range ranges[]; /* sorted, non-overlapping */
};

static _Atomic(struct snapshot *) current;
static _Atomic uint64_t generation;
static _Atomic int wanted;
static _Atomic int query_failed; /* the kernel refused a query: read snapshots */

struct collect {
    struct range *r;
    size_t n, cap;
};

static int add_writable(void *ctx, const struct procmaps_line *line)
{
    struct collect *c = ctx;
    if (line->perms[0] != 'r' || line->perms[1] != 'w')
        return 0;
    /* adjacent mappings are not merged: a walk gone astray must stop at
     * the end of the stack's own mapping, which lives as long as the
     * thread, and not run into a neighbour that may be unmapped */
    struct range *grown = mem_grow(c->r, &c->cap, c->n + 1, sizeof *c->r);
    if (!grown)
        return -1;
    c->r = grown;
    c->r[c->n].lo = line->start;
    c->r[c->n].hi = line->end;
    c->n++;
    return 0;
}

int stack_bounds_refresh(void)
{
    if (vma_query_available() && !atomic_load(&query_failed)) {
        /* every handler asks the kernel: no snapshot to read */
        atomic_fetch_add(&generation, 1);
        atomic_store(&wanted, 0);
        return 0;
    }
    struct collect c = {NULL, 0, 0};
    struct snapshot *s = NULL;
    if (procmaps_read_self(add_writable, &c) == 0)
        s = mem_alloc(sizeof *s + c.n * sizeof(struct range));
    if (!s) {
        mem_free(c.r);
        return -1;
    }
    s->count = c.n;
    s->generation = atomic_load(&generation) + 1;
    if (c.n)
        memcpy(s->ranges, c.r, c.n * sizeof *c.r);
    mem_free(c.r);
    atomic_store(&generation, s->generation);
    struct snapshot *old = atomic_exchange(&current, s);
    atomic_store(&wanted, 0);
    if (old)
        thread_rings_retire_object(old, mem_free);
    return 0;
}

int stack_bounds_wanted(void)
{
    return atomic_load(&wanted);
}

void stack_bounds_shutdown(void)
{
    struct snapshot *old = atomic_exchange(&current, NULL);
    if (old)
        thread_rings_retire_object(old, mem_free);
}

uint64_t stack_bounds_generation(void)
{
    return atomic_load(&generation);
}

/* The kernel's answer for addr: 1 (a readable, writable mapping holds
 * it), 0 (none does), -1 (not asked). */
static int ask_kernel(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    struct vma_query_mapping m;
    int rc = vma_query_find(addr, &m, NULL, 0);
    if (rc < 0) {
        if (vma_query_available())
            atomic_store(&query_failed, 1);
        return -1;
    }
    if (rc == 0 || (m.perms & (VMA_QUERY_READ | VMA_QUERY_WRITE)) !=
                       (VMA_QUERY_READ | VMA_QUERY_WRITE))
        return 0;
    *lo = m.start;
    *hi = m.end;
    return 1;
}

int stack_bounds_own(uintptr_t *lo, uintptr_t *hi)
{
    int here = 0;
    if (ask_kernel((uintptr_t)&here, lo, hi) == 1)
        return 1;
    /* for the main thread, glibc reads /proc/self/maps here */
    if (getpid() == gettid())
        procmaps_count_read();
    pthread_attr_t attr;
    void *addr;
    size_t size;
    int ok = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            *lo = (uintptr_t)addr;
            *hi = (uintptr_t)addr + size;
            ok = 1;
        }
        pthread_attr_destroy(&attr);
    }
    return ok;
}

int stack_bounds_find(uintptr_t addr, uintptr_t *lo, uintptr_t *hi, uint64_t min_generation)
{
    int asked = ask_kernel(addr, lo, hi);
    if (asked >= 0)
        return asked;
    const struct snapshot *s = atomic_load(&current);
    /* a snapshot older than the thread may hold a mapping that was since
     * unmapped where the thread's stack now is, with other bounds: never
     * trust it for that thread */
    if (s && s->generation >= min_generation) {
        size_t a = 0, b = s->count;
        while (a < b) {
            size_t m = a + (b - a) / 2;
            if (addr < s->ranges[m].lo)
                b = m;
            else if (addr >= s->ranges[m].hi)
                a = m + 1;
            else {
                *lo = s->ranges[m].lo;
                *hi = s->ranges[m].hi;
                return 1;
            }
        }
    }
    atomic_store(&wanted, 1);
    return 0;
}
