/*
 * evq: the queues that carry events from the runtime's callbacks to the
 * loop (agent.c), one per thread that produces any.
 *
 * A callback runs on a program thread and must neither wait for the loop
 * nor write the recording; it appends an entry to its own thread's queue
 * and returns.  Each queue is a ring of 64-bit words with one producer (the
 * thread itself: callbacks on one thread nest but never interleave an
 * append) and one consumer (the loop), so it needs no lock.  An entry may
 * carry the thread's own stack, walked in place (walk.h) by the callback,
 * mixed managed and native frames as for CPU samples.  A full queue drops
 * the entry and counts it.
 *
 * A queue is made by its thread on first use and registered in a list the
 * loop walks; when the thread ends (a thread-specific key's destructor) the
 * queue is marked ended, and the loop frees it once it has drained it.
 * Memory is bounded: at most EVQ_BUDGET bytes of queues in all; past that,
 * new threads' events are dropped and counted, and full rings stay as
 * they are.
 */
#ifndef CORSCOPE_EVQ_H
#define CORSCOPE_EVQ_H

#include <stdint.h>
#include <sys/types.h>

#include "common/visibility.h"

/* Words of one thread's ring at first, and at most: a ring that fills up
 * (an exception storm) is replaced by one four times as big; and the
 * budget of all rings. */
#define EVQ_RING_WORDS 8192u
#define EVQ_RING_WORDS_MAX 131072u
#define EVQ_BUDGET (64u << 20)
/* Deepest stack an entry may carry (it must fit the ring twice over). */
#define EVQ_MAX_DEPTH 2048u

struct evq_entry {
    uint32_t source;         /* index of the source that appended it */
    uint32_t kind;           /* the source's own */
    pid_t tid;               /* the thread it came from */
    uint64_t time;           /* CLOCK_MONOTONIC, ns */
    const uint64_t *payload;
    uint32_t words;          /* of payload */
    const uint64_t *ips;     /* the stack, leaf first (the callback's own frames included) */
    uint32_t depth;
    uint32_t walk_flags;     /* enum walk_flags */
    /* the thread's async chain (signal/achain.h): MethodTables, why it
     * ended, the index in ips of the frame that resumed its first object
     * (UINT32_MAX unknown) */
    const uint64_t *chain;
    uint32_t chain_n, chain_end, runner;
};

/* Any thread (a callback).  Appends an entry; with max_depth > 0 the
 * calling thread's stack (from the caller of evq_push) goes with it.
 * Returns 0, or -1 when it was dropped. */
HIDDEN int evq_push(uint32_t source, uint32_t kind, const uint64_t *payload, uint32_t words,
                    uint32_t max_depth);

/* Loop thread: calls fn for every entry queued before `until` (CLOCK_MONOTONIC
 * ns), in time order across all the queues (a source may put together what
 * several threads said); frees the queues of threads that ended and were
 * drained.  Returns the number of entries. */
HIDDEN uint64_t evq_drain(void (*fn)(void *ctx, const struct evq_entry *e), void *ctx,
                          uint64_t until);
/* Any thread (a callback): does the calling thread's queue have room for
 * an entry of `words` words (payload and stack)?  0 only when it is too
 * full right now (a thread without a queue, or any thread once the queues
 * are paused, gets 1: waiting would not help). */
HIDDEN int evq_room(uint32_t words);
/* Any thread: how far the loop has emptied the calling thread's queue (a
 * count that grows with each drain of it; 0 without a queue). */
HIDDEN uint64_t evq_drained(void);
/* Any thread, after evq_push: is the calling thread's queue more than half
 * full?  Then the loop should drain soon (agent_hurry), or entries will be
 * dropped. */
HIDDEN int evq_pressed(void);
/* Entries dropped so far (full queue, or the budget spent). */
HIDDEN uint64_t evq_dropped(void);
/* Initialize: queues may be made (again, after a detach). */
HIDDEN void evq_open(void);
/* Any thread: nothing more is wanted (the recording failed): evq_push
 * returns at once, taking no stack. */
HIDDEN void evq_pause(void);
/* Loop thread, at the end: frees every queue (callbacks may no longer
 * append: their queues are unregistered and they drop). */
HIDDEN void evq_shutdown(void);
/* ProfilerDetachSucceeded: frees every queue, live threads' too: the
 * runtime makes no more callbacks and none is running, so nothing appends. */
HIDDEN void evq_free_all(void);

#endif
