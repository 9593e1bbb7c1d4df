/*
 * mem: the allocation hook (see mem.h).  The failure countdown lets a test
 * walk "fail the 1st, 2nd, ... N-th allocation" over an operation until it
 * completes, requiring a clean error each time.
 */
#include "common/mem.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static atomic_long fail_countdown;
static atomic_int fail_sticky;
static _Atomic size_t live_bytes; /* what the heap holds for us now */

size_t mem_live_bytes(void)
{
    return atomic_load_explicit(&live_bytes, memory_order_relaxed);
}

static void *counted(void *p)
{
    if (p)
        atomic_fetch_add_explicit(&live_bytes, malloc_usable_size(p), memory_order_relaxed);
    return p;
}

static void uncount(void *p)
{
    if (p)
        atomic_fetch_sub_explicit(&live_bytes, malloc_usable_size(p), memory_order_relaxed);
}

void mem_fail_after(long n, int sticky)
{
    atomic_store(&fail_sticky, sticky);
    atomic_store(&fail_countdown, n);
}

/* Returns 1 when this allocation must fail. */
static int should_fail(void)
{
    long left = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    if (left <= 0)
        return 0;
    if (left == 1) {
        if (!atomic_load(&fail_sticky))
            atomic_store(&fail_countdown, 0);
        return 1;
    }
    atomic_store_explicit(&fail_countdown, left - 1, memory_order_relaxed);
    return 0;
}

void *mem_alloc(size_t size)
{
    if (should_fail())
        return NULL;
    return counted(malloc(size ? size : 1));
}

void *mem_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    return counted(calloc(count ? count : 1, size ? size : 1));
}

void *mem_realloc(void *ptr, size_t size)
{
    if (should_fail())
        return NULL;
    size_t before = ptr ? malloc_usable_size(ptr) : 0;
    void *p = realloc(ptr, size ? size : 1);
    if (p) {
        atomic_fetch_sub_explicit(&live_bytes, before, memory_order_relaxed);
        counted(p);
    }
    return p;
}

void *mem_grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return ptr;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem)
        return NULL;
    void *p = mem_realloc(ptr, n * elem);
    if (!p)
        return NULL;
    *cap = n;
    return p;
}

int mem_grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
    void *p = mem_grow(*arr, cap, need, elem);
    if (!p)
        return -1;
    *arr = p;
    return 0;
}

char *mem_strndup(const char *s, size_t n)
{
    char *p = mem_alloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *mem_strdup(const char *s)
{
    return mem_strndup(s, strlen(s));
}

void mem_free(void *ptr)
{
    uncount(ptr);
    free(ptr);
}
