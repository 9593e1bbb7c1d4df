/*
 * loop_wake: see loop_wake.h.
 */
#include "agent/signal/loop_wake.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint32_t word;
static _Atomic int woken_for_room; /* since the loop last began a sleep */
_Atomic int loop_wake_quiet;

uint32_t loop_wake_seen(void)
{
    return atomic_load(&word);
}

void loop_wake_wait(uint32_t seen, uint64_t deadline_ns, int quiet)
{
    struct timespec at = {(time_t)(deadline_ns / 1000000000ull),
                          (long)(deadline_ns % 1000000000ull)};
    atomic_store(&woken_for_room, 0);
    atomic_store(&loop_wake_quiet, quiet);
    /* absolute, on CLOCK_MONOTONIC (FUTEX_WAIT_BITSET without
     * FUTEX_CLOCK_REALTIME); returns at once when the word moved */
    syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, seen, &at, NULL, FUTEX_BITSET_MATCH_ANY);
    atomic_store(&loop_wake_quiet, 0);
}

void loop_wake(void)
{
    int saved = errno;
    atomic_fetch_add(&word, 1);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

void loop_wake_for_room(void)
{
    if (!atomic_exchange(&woken_for_room, 1))
        loop_wake();
}

void loop_wake_pace(struct loop_pace *p, int work, int recorded, uint64_t short_ns,
                    uint64_t samples_ns, uint64_t long_ns)
{
    if (work) {
        p->sleep_ns = short_ns;
        p->quiet = 0;
    } else if (recorded) {
        p->sleep_ns = samples_ns;
        p->quiet = LOOP_WAKE_WORK;
    } else {
        p->sleep_ns = p->sleep_ns * 2 > long_ns ? long_ns : p->sleep_ns * 2;
        p->quiet = LOOP_WAKE_WORK | LOOP_WAKE_SAMPLES;
    }
}
