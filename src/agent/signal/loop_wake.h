/*
 * loop_wake: how any thread, a signal handler included, wakes the agent's
 * loop (agent.c) early.
 *
 * The loop sleeps on a futex word, not on a condition variable: waking it
 * is an increment and a FUTEX_WAKE, which a signal handler may do (no
 * lock, no allocation).  While events or code arrive the loop wakes every
 * 10 ms.  When only samples arrive it sleeps longer (the threads' rings
 * hold many: agent.c), and the first event, compiled method or walk that
 * lacked unwind rows wakes it (LOOP_WAKE_WORK), as does a sample that
 * leaves its ring more than half full (loop_wake_for_room).  When its
 * cycles find nothing at all (an idle service) it sleeps longer still, and
 * the first producer of anything wakes it (LOOP_WAKE_WORK and
 * LOOP_WAKE_SAMPLES), so that a quiet loop delays nothing but a lone item
 * that nothing follows.  One system call per return from a long sleep,
 * none otherwise: a producer reads one shared word.
 */
#ifndef CORSCOPE_LOOP_WAKE_H
#define CORSCOPE_LOOP_WAKE_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/visibility.h"

/* What ends a long sleep early (loop_wake_quiet's bits). */
#define LOOP_WAKE_SAMPLES 1 /* a sample into a thread's ring */
#define LOOP_WAKE_WORK 2    /* an event, compiled code, unwind rows a walk lacked */

/* While the loop sleeps long: which producers end the sleep (0 when none:
 * it sleeps a short cycle).  loop_wake_if_quiet's only state. */
extern HIDDEN _Atomic int loop_wake_quiet;

/* The loop: the word as it is before the loop looks for work; then
 * loop_wake_wait sleeps only if nobody woke it since. */
HIDDEN uint32_t loop_wake_seen(void);
/* The loop: sleeps until loop_wake (after `seen` was read) or until
 * deadline_ns (CLOCK_MONOTONIC); quiet: the LOOP_WAKE_ bits of the
 * producers that cut this sleep short (0: none, a short sleep). */
HIDDEN void loop_wake_wait(uint32_t seen, uint64_t deadline_ns, int quiet);
/* Any thread, async-signal-safe: wakes the loop now. */
HIDDEN void loop_wake(void);
/* A signal handler whose sample left its thread's ring more than half
 * full: wakes the loop, once until it sleeps again. */
HIDDEN void loop_wake_for_room(void);
/* The loop's next sleep, decided after each cycle (not signal code: the
 * loop's alone).  A cycle that took events or applied compiled code
 * (`work`) sleeps short_ns and nothing but a wake (loop_wake) ends it:
 * more is coming, and letting the next method end it would cost the
 * compiling thread a system call per method (a build's tier-up thread
 * did, while its process recorded no samples).  A cycle that recorded
 * samples alone sleeps samples_ns, ended by work (LOOP_WAKE_WORK); one
 * that recorded nothing doubles the last sleep up to long_ns, ended by
 * anything. */
struct loop_pace {
    uint64_t sleep_ns;
    int quiet; /* loop_wake_wait's */
};
HIDDEN void loop_wake_pace(struct loop_pace *p, int work, int recorded, uint64_t short_ns,
                           uint64_t samples_ns, uint64_t long_ns);

/* Producers, async-signal-safe: wakes the loop if its sleep is one that
 * `what` (a LOOP_WAKE_ bit) ends (the first such caller makes the system
 * call). */
static inline void loop_wake_if_quiet(int what)
{
    int quiet = atomic_load_explicit(&loop_wake_quiet, memory_order_relaxed);
    while (quiet & what)
        if (atomic_compare_exchange_weak(&loop_wake_quiet, &quiet, 0)) {
            loop_wake();
            return;
        }
}

#endif
