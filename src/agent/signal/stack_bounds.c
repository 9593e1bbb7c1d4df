/*
 * stack_bounds: see stack_bounds.h.
 */
#include "agent/signal/stack_bounds.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "agent/signal/thread_rings.h"
#include "common/mem.h"

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

int stack_bounds_refresh(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -1;
    struct range *r = NULL;
    size_t n = 0, cap = 0;
    char line[512];
    int ok = 1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
            continue;
        if (perms[0] != 'r' || perms[1] != 'w')
            continue;
        /* adjacent mappings are not merged: a walk gone astray must stop at
         * the end of the stack's own mapping, which lives as long as the
         * thread, and not run into a neighbour that may be unmapped */
        struct range *grown = mem_grow(r, &cap, n + 1, sizeof *r);
        if (!grown) {
            ok = 0;
            break;
        }
        r = grown;
        r[n].lo = lo;
        r[n].hi = hi;
        n++;
    }
    fclose(f);
    struct snapshot *s = ok ? mem_alloc(sizeof *s + n * sizeof(struct range)) : NULL;
    if (!s) {
        mem_free(r);
        return -1;
    }
    s->count = n;
    s->generation = atomic_load(&generation) + 1;
    if (n)
        memcpy(s->ranges, r, n * sizeof *r);
    mem_free(r);
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

int stack_bounds_find(uintptr_t addr, uintptr_t *lo, uintptr_t *hi, uint64_t min_generation)
{
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
