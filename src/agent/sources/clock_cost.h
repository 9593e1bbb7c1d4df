/*
 * clock_cost: what one interrupt of the perf_event CPU clock really costs a
 * thread on this machine, measured once at start, and the rule that picks
 * the cheaper clock from it (cpu_clock.c asks, when the user did not choose
 * one with --cpu-clock).
 *
 * On bare metal a task-clock interrupt costs a few microseconds.  On a
 * virtual machine, and far more under nested virtualisation, each expiry
 * and each reprogramming of the hrtimer behind the event is a VM exit:
 * bench/sigcost.sh found 55 us per signal on our CI machine (12 us on its
 * kernel of 26 November), 5.5% (1.2%) of a core at 1 ms, where the POSIX
 * CPU timer, checked at the scheduler tick and needing no timer of its
 * own, costs 1.4 us.  The hypervisor's share is not
 * in the thread's CPU time (the guest does not charge it to the thread), so
 * the measure is wall time: the calling thread spins reading
 * CLOCK_MONOTONIC under a task-clock event armed as the sampler arms it
 * (REFRESH 1, F_SETSIG, the PERIOD and REFRESH ioctls after each overflow),
 * with the signal blocked and taken synchronously instead of by a handler
 * (the same gaps as with a handler: 17.7 us against 15 to 17 us here).
 * One overflow costs the largest gap between two consecutive reads in its
 * period, plus the re-arming; the same loop without the event gives what a
 * period's largest gap is anyway.  A preemption or a scheduler tick in a
 * period inflates that one period only: the medians stand while fewer than
 * half are hit, so the measure holds on a loaded machine.  Bounded: at most
 * COST_PERIODS periods of COST_PERIOD_NS of CPU each and COST_BUDGET_NS of
 * wall time in all (about 2.5 ms of CPU here); never in a signal handler, no
 * runtime calls.
 *
 * The rule: the perf_event clock unless its interrupts take more than
 * COST_SHARE_PERMILLE of a busy core at the sampling interval; then POSIX
 * timers.  Nothing is measured where the rule cannot say POSIX even at the
 * dearest cost we know of (COST_WORST_NS): from the default 10 ms interval
 * up, that would take more than 100 us per interrupt.
 */
#ifndef CORSCOPE_CLOCK_COST_H
#define CORSCOPE_CLOCK_COST_H

#include <stdint.h>

#include "common/visibility.h"

/* 1% of a core, the whole budget of the default interval (issue 28: at
 * most +1%).  The interrupt is only the part of the perf_event clock's
 * cost that can be measured alone: where timers are dear, each context
 * switch of a thread with the event also stops and restarts its hrtimer,
 * and the clock gives up to four times the samples of the POSIX timers at
 * 1 ms (bench/web.sh: +24% against +0.3% for the POSIX timers on a web
 * server whose interrupts cost 12 to 17 us, 1.2 to 1.7%).  Bare metal
 * (2 to 5 us an interrupt, 0.2 to 0.5% at 1 ms) keeps perf_event. */
#define COST_SHARE_PERMILLE 10u
/* About twice the dearest interrupt measured (55 us on our CI machine in
 * an earlier kernel, bench/sigcost.sh; 12 us on its kernel of 26 Nov). */
#define COST_WORST_NS 100000ull
#define COST_PERIOD_NS 50000ull   /* each measured period, of the thread's CPU */
#define COST_PERIODS 24u          /* overflows measured */
#define COST_BASE_PERIODS 16u     /* periods of the same loop without the event */
#define COST_MIN_PERIODS 6u       /* fewer (a busy machine): not measured */
#define COST_BUDGET_NS 50000000ull /* wall time of the whole measure, at most */

struct clock_cost {
    uint64_t per_interrupt_ns; /* the median overflow's cost, less the base */
    uint32_t periods;          /* overflows measured */
    uint64_t spent_ns;         /* wall time the measure took */
    uint64_t cpu_ns;           /* the thread's CPU time it took */
};

/* Would the rule pick POSIX timers at this interval if an interrupt could
 * cost COST_WORST_NS?  If not, there is nothing to measure. */
HIDDEN int clock_cost_worth_measuring(uint64_t interval_ns);
/* The rule: does an interrupt of cost_ns take more than the allowed share
 * of a core at interval_ns? */
HIDDEN int clock_cost_prefers_posix(uint64_t cost_ns, uint64_t interval_ns);
/* Share of a core, in permille, that interrupts of cost_ns take at
 * interval_ns (for the cpu_clock INFO). */
HIDDEN uint64_t clock_cost_permille(uint64_t cost_ns, uint64_t interval_ns);
/* Measures on the calling thread, the sampler's `signal` blocked on it
 * meanwhile (and any instance the measure left drained).  0 with *out
 * filled; -1 when no event could be opened (errno from perf_event_open)
 * or too few periods fit the budget (errno EBUSY). */
HIDDEN int clock_cost_measure(int signal, int exclude_kernel, struct clock_cost *out);
/* The scheduler's tick rate, Hz (the coarse clocks' resolution), which
 * bounds how often a POSIX CPU timer can fire; 0 if unknown. */
HIDDEN uint32_t clock_cost_tick_hz(void);

#endif
