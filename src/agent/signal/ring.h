/*
 * ring: the layout of a sample entry in a thread's ring (thread_rings.h), written
 * by the signal handler and read by the signal source's collector side.
 * The only place that knows which word is which.
 *
 * An entry is RING_HEADER_WORDS words of header, then `depth` instruction
 * pointers, leaf first.
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
    RING_HEADER_WORDS
};

/* RING_FLAGS bit, above enum walk_flags: the signal was a wall-clock
 * request (tgkill), not a CPU clock's. */
#define RING_WALL_REQUEST (1u << 16)

#endif
