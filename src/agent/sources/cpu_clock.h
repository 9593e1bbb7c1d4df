/*
 * cpu_clock: each thread's CPU-time clock for the signal sampler in cpu
 * mode, which sends the thread the sampler's signal each time it has used
 * one interval of CPU, so a thread is sampled in proportion to the CPU it
 * uses and an idle one costs nothing.
 *
 * The precise clock is a perf_event counting the thread's task-clock,
 * signalling at each period to the nanosecond (user time only where
 * perf_event_paranoid allows no more).  Where perf_event is refused, or
 * `--cpu-clock posix` asks for it, a POSIX CPU timer (timer_create on the
 * thread's CPU clock, SIGEV_THREAD_ID) serves: checked at the scheduler's
 * tick.  The first period of every clock is a random part of the interval,
 * so a thread that lives for less than one interval is sampled with the
 * right probability instead of never.  Each later period is drawn afresh
 * between half and one and a half intervals (--cpu-period fixed: exactly
 * one), so that work repeating with a period near a multiple of the
 * interval is not sampled at the same phase each time; each sample is
 * weighted by the CPU time it stands for (the period that ran, or for POSIX
 * timers, which fire at the tick after their period, the thread's CPU time
 * since its last sample), in nanoseconds.
 */
#ifndef CORSCOPE_CPU_CLOCK_H
#define CORSCOPE_CPU_CLOCK_H

#include <stdint.h>
#include <sys/types.h>

#include "agent/signal/thread_rings.h"
#include "common/config.h"
#include "common/visibility.h"

struct cpu_clock {
    uint64_t interval_ns;
    int signal;
    int posix;               /* POSIX timers: asked for, or perf_event refused */
    int asked_posix;         /* --cpu-clock posix */
    int perf_exclude_kernel; /* perf_event_paranoid allows user time only */
    int random_periods;      /* --cpu-period random (the default) */
    uint64_t random;         /* state of the phase generator */
    /* what each thread got, for a truthful cpu_clock INFO */
    uint64_t perf_threads;   /* threads given a perf_event clock */
    uint64_t posix_threads;  /* threads given a POSIX timer */
    int fallback_errno;      /* why perf_event was refused for a thread (EMFILE ...),
                              * or -1 when the agent's fd budget said no */
    size_t perf_open;        /* perf_event fds open now */
    char text[256];          /* cpu_clock_describe's answer */
};

HIDDEN void cpu_clock_init(struct cpu_clock *c, const struct config *cfg, uint64_t seed);
/* Gives the thread its clock.  Returns 0, or -1 when none could be made
 * (the thread is gone, or no timers are left). */
HIDDEN int cpu_clock_start(struct cpu_clock *c, struct sthread *t);
HIDDEN void cpu_clock_stop(struct sthread *t);
/* Stops the thread's clock and gives its fd back to the budget. */
HIDDEN void cpu_clock_release(struct cpu_clock *c, struct sthread *t);
/* What the clock is, for the recording's INFO: which clock the threads
 * got, and why any fell back to POSIX timers. */
HIDDEN const char *cpu_clock_describe(struct cpu_clock *c);

#endif
