/*
 * stack_bounds: where a thread's stack may be read.  The signal handler reads
 * return addresses and saved frame pointers from the interrupted stack; it
 * must never touch an address that is not mapped.  The collector parses
 * /proc/self/maps into a sorted snapshot of the readable and writable
 * mappings (thread stacks are such mappings) and publishes it; the handler
 * looks up the mapping that holds the interrupted stack pointer and reads
 * only between that pointer and the mapping's end.
 *
 * Snapshots are immutable.  A new one is published when the thread set
 * changes (a new thread has a new stack) or when a handler reports a stack
 * pointer it could not place; the old one goes to the reclaimer (thread_rings.h).
 * Each has a generation, and a thread is only looked up in snapshots read
 * after it was added: an older one may still hold a mapping, since
 * unmapped, whose range the new thread's stack now occupies with other
 * bounds, and reading to that old end could fault.
 *
 * Where the kernel answers for one address (vma_query.h, Linux 6.11), the
 * handler asks it instead, once per thread (and at each sample taken on
 * another stack): the answer is current, so no snapshot is read, no
 * refresh is ever wanted and generations only count.
 */
#ifndef CORSCOPE_STACK_BOUNDS_H
#define CORSCOPE_STACK_BOUNDS_H

#include <stdint.h>

#include "common/visibility.h"

/* Collector: reads /proc/self/maps and publishes a new snapshot (unless
 * the kernel answers queries).  Returns 0, or -1 (the previous snapshot
 * stays). */
HIDDEN int stack_bounds_refresh(void);
/* Collector: has a handler missed since the last refresh? */
HIDDEN int stack_bounds_wanted(void);
/* Retires the current snapshot (shutdown; before thread_rings_shutdown). */
HIDDEN void stack_bounds_shutdown(void);

/* Collector: the generation of the current snapshot (each refresh adds
 * one).  A thread added now needs a snapshot of a later generation. */
HIDDEN uint64_t stack_bounds_generation(void);

/* Handler (async-signal-safe; call between thread_rings_handler_enter/leave):
 * the bounds of the mapping holding addr, from a snapshot of at least
 * min_generation.  Returns 1, or 0 when unknown (and asks the collector for
 * a refresh). */
HIDDEN int stack_bounds_find(uintptr_t addr, uintptr_t *lo, uintptr_t *hi, uint64_t min_generation);

/* Not in a handler: the calling thread's own stack (the kernel's mapping,
 * else pthread_getattr_np's, which reads /proc/self/maps for the main
 * thread).  Returns 1, or 0 when unknown. */
HIDDEN int stack_bounds_own(uintptr_t *lo, uintptr_t *hi);

#endif
