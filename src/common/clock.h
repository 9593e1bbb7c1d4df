/*
 * clock: the time in nanoseconds, as every part of corscope reads it: one
 * function over clock_gettime, not a copy per file.  Header-only, so that
 * the signal handler (clock_gettime is async-signal-safe), the agent's
 * callbacks and loop, the CLI and the fuzz harnesses all use it without
 * linking anything.  A clock that cannot be read gives 0.
 */
#ifndef CORSCOPE_CLOCK_H
#define CORSCOPE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The clock's reading, ns (CLOCK_THREAD_CPUTIME_ID: the calling thread's
 * CPU time). */
static inline uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC, ns: the time of every event, sample and deadline. */
static inline uint64_t clock_now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

#endif
