/*
 * mem: the one allocation hook of corscope.
 *
 * Every allocation in the agent, the format code and the CLI goes through
 * mem_alloc / mem_realloc / mem_free, so that tests can make the N-th
 * allocation fail (SQLite-style fault injection) and check that each caller
 * answers with a clean error instead of crashing.  The functions never abort:
 * a NULL return is the caller's to handle.  Counting is relaxed-atomic so
 * the hook is usable from several threads; it is meant for tests, the
 * production path is one predictable branch.
 */
#ifndef CORSCOPE_MEM_H
#define CORSCOPE_MEM_H

#include <stddef.h>

#include "common/visibility.h"

HIDDEN void *mem_alloc(size_t size);
HIDDEN void *mem_calloc(size_t count, size_t size);
HIDDEN void *mem_realloc(void *ptr, size_t size);
/* Grows an array of `elem` bytes per entry to at least `need` entries,
 * doubling; updates *cap.  Returns the (possibly moved) array or NULL with
 * the old array still valid. */
HIDDEN void *mem_grow(void *ptr, size_t *cap, size_t need, size_t elem);
/* The same for the array *arr, which it updates: 0, or -1 with the array
 * unchanged. */
HIDDEN int mem_grow_array(void **arr, size_t *cap, size_t need, size_t elem);
HIDDEN char *mem_strndup(const char *s, size_t n);
HIDDEN char *mem_strdup(const char *s);
HIDDEN void mem_free(void *ptr);

/* Bytes the heap holds for what was allocated here and not yet freed (the
 * agent's own memory, by malloc_usable_size). */
HIDDEN size_t mem_live_bytes(void);
/* Test hook: the n-th allocation from now (1-based) and every later one
 * fail while `sticky` is set, otherwise only that one.  n = 0 disarms. */
HIDDEN void mem_fail_after(long n, int sticky);

#endif
