/*
 * ranges: binary search over an array of address ranges sorted by start,
 * the one search both indexes of managed code use: the loop's code index
 * (code_index.h: which method owns an address) and the signal handler's
 * (mcode.h: how to step its frame).  An element is any struct whose first
 * member is `uintptr_t start`; `size` is sizeof the element.
 *
 * Header-only and pure (no state, no allocation, no lock), so it is
 * async-signal-safe: the handler searches a published snapshot with it.
 * The two indexes share this and not their arrays: the handler's must be
 * immutable snapshots published for lock-free readers and reclaimed by
 * epoch (thread_rings.h), the loop's are edited in place with tombstones
 * and owner lists; one structure for both would make every loop-side
 * change a publication.
 */
#ifndef CORSCOPE_RANGES_H
#define CORSCOPE_RANGES_H

#include <stddef.h>
#include <stdint.h>

static inline uintptr_t ranges_start(const void *v, size_t size, size_t i)
{
    return *(const uintptr_t *)(const void *)((const char *)v + i * size);
}

/* Index of the first element of v[0..n) whose start is >= key (n: none). */
static inline size_t ranges_lower_bound(const void *v, size_t n, size_t size, uintptr_t key)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (ranges_start(v, size, m) < key)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* Index of the first element of v[0..n) whose start is > key (n: none):
 * the range that may hold key is the one before it. */
static inline size_t ranges_upper_bound(const void *v, size_t n, size_t size, uintptr_t key)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (ranges_start(v, size, m) <= key)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

#endif
