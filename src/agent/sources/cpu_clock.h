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
 * tick, so at most one sample per tick, each weighted by the CPU time it
 * stands for.  When the user chose no clock and the interval is short
 * enough for the perf_event clock's interrupts to matter, what one really
 * costs this machine is measured at start (clock_cost.h: tens of
 * microseconds on virtual machines, a few on bare metal) and the POSIX
 * timers are taken if it is too dear; and a thread that switches so often
 * that the perf_event clock's part in each switch is dear gets a POSIX
 * timer after a trial (clock_trial.h).  The cpu_clock INFO says which
 * clock was chosen and why.  The first period of every clock is a random part of the interval,
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
#include "agent/sources/clock_cost.h"
#include "common/config.h"
#include "common/visibility.h"

struct cpu_clock {
    uint64_t interval_ns;
    int signal;
    int posix;               /* POSIX timers: asked for, or perf_event refused */
    int asked_posix;         /* --cpu-clock posix */
    int asked_perf;          /* --cpu-clock perf */
    /* no clock asked for, and the interval short enough: the perf_event
     * clock's cost measured at start (clock_cost.h) */
    int measured;            /* tried */
    int measure_errno;       /* why it could not be, or 0 */
    int chose_posix;         /* the measure made us take POSIX timers */
    struct clock_cost cost;
    /* threads the POSIX timers missed, moved to perf_event clocks
     * (cpu_clock_rescue), and the CPU time of theirs no sample stood for */
    uint64_t rescued_threads;
    uint64_t rescued_missed_ns;
    int rescue_refused;      /* perf_event refused a rescue: no more tried */
    /* threads moved from perf_event clocks to POSIX timers for their
     * switches, each after a trial (clock_trial.h) */
    int switches_allowed;    /* no clock asked for; cpu mode, random periods */
    uint64_t switchy_threads; /* threads given a POSIX timer for that */
    uint64_t trials;         /* trials begun */
    uint64_t trials_failed;  /* ... that kept the perf_event clock: the ticks missed */
    uint64_t switch_next_ns; /* when the process is looked at next */
    uint64_t proc_at_ns;     /* the last look, 0 before the first: */
    uint64_t proc_switches;  /* the program's switches then (the agent's own left out) */
    uint64_t proc_cpu_ns;    /* and its CPU */
    uint64_t rescue_next_ns; /* when the threads are looked at next */
    uint32_t tick_hz;        /* the scheduler's tick, for the POSIX clock's rate */
    int perf_exclude_kernel; /* perf_event_paranoid allows user time only */
    int random_periods;      /* --cpu-period random (the default) */
    uint64_t random;         /* state of the phase generator */
    /* what each thread got, for a truthful cpu_clock INFO */
    uint64_t perf_threads;   /* threads given a perf_event clock */
    uint64_t posix_threads;  /* threads given a POSIX timer */
    int fallback_errno;      /* why perf_event was refused for a thread (EMFILE ...),
                              * or -1 when the agent's fd budget said no */
    size_t perf_open;        /* perf_event fds open now */
    size_t unsettled;        /* of them, opened low or leaving a low number (settle) */
    char text[1024];         /* cpu_clock_describe's answer */
};

HIDDEN void cpu_clock_init(struct cpu_clock *c, const struct config *cfg, uint64_t seed);
/* A perf_event task-clock for the thread, disabled, signalling `signal` to
 * it at each overflow (after PERF_EVENT_IOC_REFRESH), its fd high (fds.h)
 * unless the descriptor table has not grown yet (fds_high_ready): the
 * clock does not wait for that, it starts low.  Returns the fd; -1 when
 * perf_event_open refused (errno says why), -2 when the fd could not be
 * set up. */
HIDDEN int cpu_clock_open_event(pid_t tid, uint64_t period_ns, int signal, int exclude_kernel);
/* The clock the measure of the perf_event clock's cost chooses
 * (clock_cost.h), or why there is none (measure_errno, 0 if measured);
 * cpu_clock_init calls it, before any thread has a clock. */
HIDDEN void cpu_clock_take_cost(struct cpu_clock *c, const struct clock_cost *cost,
                                int measure_errno);
/* A POSIX timer fires only at a scheduler tick that finds its thread
 * running: a thread whose bursts fall between ticks (a service answering
 * requests that come every 10 ms, 0.4 ms of CPU each) is never sampled,
 * however much CPU it uses.  Where the agent chose the POSIX timers for
 * their cost (not asked for with --cpu-clock posix), the loop calls this
 * each cycle, and every CPU_CLOCK_RESCUE_EVERY_NS a thread that has used,
 * since its last sample, CPU_CLOCK_MISSED_INTERVALS intervals and
 * CPU_CLOCK_MISSED_TICKS ticks' worth of CPU gets a perf_event clock
 * instead; the cpu_clock INFO says how many threads and how much of their
 * CPU went unsampled before.  The ticks' part keeps chance out of it: a
 * thread whose bursts come at random times is found by a tick about once
 * per tick's worth of its CPU, so going 25 without one by chance is a
 * one-in-10^10 run.  Random periods only (the handler marks the CPU time
 * at each sample). */
#define CPU_CLOCK_MISSED_INTERVALS 10u
#define CPU_CLOCK_MISSED_TICKS 25u
#define CPU_CLOCK_MISSED_MIN_NS 20000000ull /* the tick unknown */
/* How often the threads are looked at: each look reads every POSIX-timed
 * thread's CPU clock (a system call each, about a microsecond). */
#define CPU_CLOCK_RESCUE_EVERY_NS 100000000ull
HIDDEN void cpu_clock_rescue(struct cpu_clock *c, struct sthread *threads, uint64_t now_ns);
/* Has a thread that used cpu_ns of CPU since its last sample been missed
 * (a tick of tick_hz, 0 if unknown)? */
HIDDEN int cpu_clock_missed(uint64_t cpu_ns, uint64_t interval_ns, uint32_t tick_hz);
/* Gives the thread its clock.  Returns 0, or -1 when none could be made
 * (the thread is gone, or no timers are left). */
HIDDEN int cpu_clock_start(struct cpu_clock *c, struct sthread *t);
/* For clock_trial.c, which moves threads between the clocks:
 * a POSIX timer for the thread (uncounted), on trial (its ticks no samples:
 * the perf_event clock's state is left alone) or for good: 0, or -1
 * (errno says why); */
HIDDEN int cpu_clock_posix_timer(struct cpu_clock *c, struct sthread *t, int trial);
/* takes the POSIX timer away once no tick of the handler can re-arm it: 1
 * when it is gone (0: try again later); */
HIDDEN int cpu_clock_retire_timer(struct sthread *t);
/* and closes the thread's perf_event clock for good, its fd given back to
 * the budget, a signal it queued before closing dropped by the handler. */
HIDDEN void cpu_clock_leave_perf(struct cpu_clock *c, struct sthread *t);
/* Once the table has grown (fds_high_ready), moves the clocks opened low
 * to high numbers, each thread's signals still carrying the number it was
 * set up with (perf_sig_fd), and closes a low number once no tick of the
 * handler can be using it (perf_ticking); call from each cycle (cheap when
 * none is left). */
HIDDEN void cpu_clock_settle(struct cpu_clock *c, struct sthread *threads);
/* Stops the thread's clock and gives its fd back to the budget. */
HIDDEN void cpu_clock_release(struct cpu_clock *c, struct sthread *t);
/* What the clock is, for the recording's INFO: which clock the threads
 * got, and why any fell back to POSIX timers. */
HIDDEN const char *cpu_clock_describe(struct cpu_clock *c);

#endif
