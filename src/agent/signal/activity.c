/*
 * activity: see activity.h.
 */
#include "agent/signal/activity.h"

#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>

struct pair {
    _Atomic uint64_t inner, outer;
};

static struct pair *table;
static size_t table_size;
static _Atomic uint64_t gc_word;

int activity_init(void)
{
    if (table) {
        /* an earlier attach's (the library stays loaded after a detach):
         * what threads were doing then is not what they do now */
        madvise(table, table_size * sizeof *table, MADV_DONTNEED);
        atomic_store(&gc_word, 0);
        return 0;
    }
    size_t n = 32768;
    FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
    if (f) {
        unsigned long v;
        if (fscanf(f, "%lu", &v) == 1 && v > 0 && v <= (1ul << 22))
            n = v;
        fclose(f);
    }
    n++;
    void *p = mmap(NULL, n * sizeof *table, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    table = p;
    table_size = n;
    return 0;
}

void activity_set(pid_t tid, uint64_t inner, uint64_t outer)
{
    if (!table || tid <= 0 || (size_t)tid >= table_size)
        return;
    /* outer first: a handler between the two stores sees an inner word
     * that is at worst the previous one, never an outer without its inner */
    atomic_store_explicit(&table[tid].outer, outer, memory_order_relaxed);
    atomic_store_explicit(&table[tid].inner, inner, memory_order_relaxed);
}

void activity_gc_set(uint64_t word)
{
    atomic_store_explicit(&gc_word, word, memory_order_relaxed);
}

void activity_get(pid_t tid, uint64_t *inner, uint64_t *outer)
{
    if (!table || tid <= 0 || (size_t)tid >= table_size) {
        *inner = *outer = 0;
        return;
    }
    *inner = atomic_load_explicit(&table[tid].inner, memory_order_relaxed);
    *outer = atomic_load_explicit(&table[tid].outer, memory_order_relaxed);
}

uint64_t activity_gc_get(void)
{
    return atomic_load_explicit(&gc_word, memory_order_relaxed);
}
