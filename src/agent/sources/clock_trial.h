/*
 * clock_trial: gives a thread whose context switches make the perf_event
 * clock dear a POSIX timer instead, once a trial has shown that the POSIX
 * timer sees it.
 *
 * The perf_event clock is paid at every switch of its thread, however
 * rarely it fires: its timer is stopped when the thread leaves a CPU and
 * started when it comes back (about 2 us more a switch on virtual machines
 * that make timers dear: bench/sigcost.sh; an ASP.NET Core server under
 * load spent 5 to 16% more CPU a request at the default interval than with
 * POSIX timers), and the thread's time in switching, which the scheduler
 * charges to it, goes uncounted.  A POSIX timer pays neither, but fires only at a scheduler
 * tick that finds its thread running: work in step with the tick (a
 * service whose client sends from a timer) is found late or never, and
 * its CPU charged to wherever a tick lands.  So when no clock was asked
 * for, a thread that switched more than CLOCK_TRIAL_RATE times a
 * CPU-second between two looks (its bursts 100 us long on average: 2% of
 * its CPU at 2 us a switch) first gets a POSIX timer on trial beside its
 * perf_event clock: the trial's ticks are no samples, only counted with
 * how much CPU the thread used past each period before a tick found it
 * running.  A thread the ticks find at random times is found about one
 * tick's worth of its CPU late (it uses that much between two ticks that
 * find it running); after CLOCK_TRIAL_TICKS ticks no later than
 * CLOCK_TRIAL_LATE_TICKS ticks' worth on average, the perf_event clock is
 * closed and the POSIX timer samples (cpu_clock_rescue still watches it).
 * A trial whose ticks come later, or that sees none for as much CPU as
 * cpu_clock_missed allows, ends with the perf_event clock kept for good.
 *
 * Every CLOCK_TRIAL_EVERY_NS the program's switches a CPU-second are read
 * (getrusage), and only while they reach a quarter of the rate is each
 * sampled thread's schedstat read (a file each; not for a thread its clock
 * did not fire for since the last look).  The cpu_clock INFO says how many
 * threads were moved, and how many trials kept the perf_event clock.
 */
#ifndef CORSCOPE_CLOCK_TRIAL_H
#define CORSCOPE_CLOCK_TRIAL_H

#include <stdint.h>

#include "agent/signal/thread_rings.h"
#include "agent/sources/cpu_clock.h"
#include "common/visibility.h"

#define CLOCK_TRIAL_RATE 10000u
#define CLOCK_TRIAL_EVERY_NS 250000000ull
#define CLOCK_TRIAL_MIN_CPU_NS 10000000ull /* a thread's, between two looks */
#define CLOCK_TRIAL_TICKS 8u
#define CLOCK_TRIAL_LATE_TICKS 3u

/* From the loop, each cycle, in cpu mode with the signal sampler (a no-op
 * unless c->switches_allowed). */
HIDDEN void clock_trial_cycle(struct cpu_clock *c, struct sthread *threads, uint64_t now_ns);
/* Do `switches` in `cpu_ns` of CPU reach `rate` a CPU-second (with
 * CLOCK_TRIAL_MIN_CPU_NS of it to tell)? */
HIDDEN int clock_trial_switchy(uint64_t switches, uint64_t cpu_ns, uint64_t rate);
/* Does a trial of `ticks` ticks, `late_ns` late in all, pass (a tick of
 * tick_hz, 0 if unknown: 250 Hz assumed)?  1 yes, 0 no, -1 too few ticks
 * to tell. */
HIDDEN int clock_trial_verdict(uint64_t ticks, uint64_t late_ns, uint32_t tick_hz);

#endif
