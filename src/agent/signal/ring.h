/*
 * ring: the layout of a sample entry in a thread's ring (thread_rings.h), written
 * by the signal handler and read by the signal source's collector side.
 * The only place that knows which word is which.
 *
 * An entry is RING_HEADER_WORDS words of header, then `depth` instruction
 * pointers, leaf first, then the MethodTables of the thread's async chain
 * (signal/achain.h), the running object first.
 */
#ifndef CORSCOPE_RING_H
#define CORSCOPE_RING_H

#include <stdint.h>

enum ring_word {
    RING_WORDS,          /* total words of the entry */
    RING_DEPTH,          /* instruction pointers (up to FMT_MAX_STACK_DEPTH) */
    RING_FLAGS,          /* enum walk_flags | RING_WALL_REQUEST */
    RING_TIME,           /* CLOCK_MONOTONIC, ns */
    RING_WEIGHT,         /* what the sample stands for: CPU ns (cpu clock), intervals (wall) */
    RING_CPU,            /* wall request: the thread's CPU time as the handler ends, ns */
    RING_ACTIVITY,       /* the thread's innermost activity (activity.h), 0 = none */
    RING_ACTIVITY_OUTER, /* its outermost one */
    RING_GC,             /* the process's garbage collection word (activity.h) */
    RING_FRAME_KIND,     /* the thread's innermost runtime frame (struct activity_frame) */
    RING_FRAME_RET,
    RING_FRAME_METHOD,
    RING_ASYNC,          /* the async chain: ring_async_word() */
    RING_HEADER_WORDS
};

/* RING_FLAGS bit, above enum walk_flags: the signal was a wall-clock
 * request (tgkill), not a CPU clock's. */
#define RING_WALL_REQUEST (1u << 16)

/* RING_ASYNC: how many MethodTables follow the pcs (bits 0-15), why the
 * chain ended (16-23, enum achain_end), and the index of the frame that
 * resumed the running object (32-63; 0xffffffff when the walk did not
 * reach it). */
static inline uint64_t ring_async_word(uint32_t count, uint32_t end, uint32_t runner)
{
    return (uint64_t)runner << 32 | (uint64_t)(end & 0xff) << 16 | (count & 0xffff);
}
#define RING_ASYNC_COUNT(w) ((uint32_t)((w) & 0xffff))
#define RING_ASYNC_END(w) ((uint32_t)((w) >> 16 & 0xff))
#define RING_ASYNC_RUNNER(w) ((uint32_t)((w) >> 32))

#endif
