/*
 * loop_wake: how any thread, a signal handler included, wakes the agent's
 * loop (agent.c) early.
 *
 * The loop sleeps on a futex word, not on a condition variable: waking it
 * is an increment and a FUTEX_WAKE, which a signal handler may do (no
 * lock, no allocation).  While samples, events or code arrive the loop
 * wakes every 10 ms; when its cycles find nothing (an idle service) it
 * sleeps longer, and says so: it is then "quiet", and the first producer
 * that adds work (a sample into a thread's ring, an event into a queue,
 * newly compiled code) wakes it, so that a quiet loop delays nothing but a
 * lone item that nothing follows.  One system call per return from quiet,
 * none otherwise: a producer reads one shared word.
 */
#ifndef CORSCOPE_LOOP_WAKE_H
#define CORSCOPE_LOOP_WAKE_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/visibility.h"

/* Set while the loop sleeps quietly (loop_wake_if_quiet's only state). */
extern HIDDEN _Atomic int loop_wake_quiet;

/* The loop: the word as it is before the loop looks for work; then
 * loop_wake_wait sleeps only if nobody woke it since. */
HIDDEN uint32_t loop_wake_seen(void);
/* The loop: sleeps until loop_wake (after `seen` was read) or until
 * deadline_ns (CLOCK_MONOTONIC); quiet: the sleep is a long one, which the
 * next producer cuts short. */
HIDDEN void loop_wake_wait(uint32_t seen, uint64_t deadline_ns, int quiet);
/* Any thread, async-signal-safe: wakes the loop now. */
HIDDEN void loop_wake(void);
/* Producers, async-signal-safe: wakes the loop if it sleeps quietly (the
 * first caller after it went quiet makes the system call). */
static inline void loop_wake_if_quiet(void)
{
    if (atomic_load_explicit(&loop_wake_quiet, memory_order_relaxed) &&
        atomic_exchange(&loop_wake_quiet, 0))
        loop_wake();
}

#endif
