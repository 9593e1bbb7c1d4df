/*
 * clock_trial: see clock_trial.h.
 */
#include "agent/sources/clock_trial.h"

#include <stdatomic.h>

#include "agent/log.h"
#include "agent/os_thread.h"

int clock_trial_switchy(uint64_t switches, uint64_t cpu_ns, uint64_t rate)
{
    return cpu_ns >= CLOCK_TRIAL_MIN_CPU_NS && switches * 1000000000ull >= rate * cpu_ns;
}

int clock_trial_verdict(uint64_t ticks, uint64_t late_ns, uint32_t tick_hz)
{
    if (ticks < CLOCK_TRIAL_TICKS)
        return -1;
    uint64_t tick_ns = 1000000000ull / (tick_hz ? tick_hz : 250);
    return late_ns <= ticks * CLOCK_TRIAL_LATE_TICKS * tick_ns;
}

static void begin(struct cpu_clock *c, struct sthread *t)
{
    if (cpu_clock_posix_timer(c, t, 1) < 0) {
        t->stays_perf = 1; /* no timers left, or it ended: nothing to try */
        return;
    }
    t->on_trial = 1;
    c->trials++;
}

/* The POSIX timer sees it: it samples from now on, the perf_event clock
 * closed. */
static void pass(struct cpu_clock *c, struct sthread *t)
{
    /* the timer's next sample stands for one interval: the CPU since its
     * last tick was the perf_event clock's */
    atomic_store(&t->clock_first, 1);
    atomic_store(&t->posix_trial, 0);
    cpu_clock_leave_perf(c, t);
    t->on_trial = 0;
    t->switchy = 1;
    c->switchy_threads++;
}

/* The ticks came late: the perf_event clock stays, for good.  posix_trial
 * stays set, so that a tick already queued is no sample. */
static void fail(struct cpu_clock *c, struct sthread *t)
{
    if (!cpu_clock_retire_timer(t))
        return; /* a tick is re-arming it: the next look */
    t->on_trial = 0;
    t->stays_perf = 1;
    c->trials_failed++;
}

static void judge(struct cpu_clock *c, struct sthread *t)
{
    if (t->stays_perf) {
        fail(c, t); /* decided, the timer not yet gone */
        return;
    }
    uint64_t ticks = atomic_load_explicit(&t->trial_ticks, memory_order_acquire);
    int verdict =
        clock_trial_verdict(ticks, atomic_load_explicit(&t->trial_late_ns, memory_order_relaxed),
                            c->tick_hz);
    if (verdict < 0) {
        /* none lately for as much CPU as a POSIX timer may miss: no more
         * waiting for the ticks to tell */
        uint64_t cpu = os_thread_cpu_ns(t->tid);
        uint64_t mark = __atomic_load_n(&t->cpu_mark_ns, __ATOMIC_RELAXED);
        if (cpu == UINT64_MAX || cpu <= mark ||
            !cpu_clock_missed(cpu - mark, c->interval_ns, c->tick_hz))
            return;
        verdict = 0;
    }
    uint64_t late_ms = ticks ? atomic_load(&t->trial_late_ns) / ticks / 1000000u : 0;
    if (verdict) {
        log_info("thread %d switches often: a POSIX timer from now on (its trial's %llu ticks "
                 "%llu ms late on average)",
                 (int)t->tid, (unsigned long long)ticks, (unsigned long long)late_ms);
        pass(c, t);
        return;
    }
    log_info("thread %d switches often, but keeps its perf_event clock (its trial's %llu ticks "
             "%llu ms late on average)",
             (int)t->tid, (unsigned long long)ticks, (unsigned long long)late_ms);
    t->stays_perf = 1;
    fail(c, t);
}

/* The program's switches and CPU since the last look (the agent's own
 * thread, this one, left out): do they reach a quarter of the rate? */
static int process_switchy(struct cpu_clock *c, uint64_t now_ns)
{
    uint64_t sw = os_others_switches(), cpu = os_others_cpu_ns();
    int looked = c->proc_at_ns != 0;
    uint64_t d_sw = sw > c->proc_switches ? sw - c->proc_switches : 0;
    uint64_t d_cpu = cpu > c->proc_cpu_ns ? cpu - c->proc_cpu_ns : 0;
    c->proc_at_ns = now_ns;
    c->proc_switches = sw;
    c->proc_cpu_ns = cpu;
    return looked && clock_trial_switchy(d_sw, d_cpu, CLOCK_TRIAL_RATE / 4);
}

/* Did the thread switch more than the rate since its last reading?  A
 * reading older than two looks (the process went quiet meanwhile) starts
 * afresh. */
static int thread_switchy(struct sthread *t, uint64_t now_ns)
{
    /* a thread its clock did not fire for since the last look used less
     * than a period of CPU: not enough to tell, and its file is not read
     * (a program of 500 threads, most of them waiting) */
    uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
    if (t->switch_at_ns && head == t->switch_head)
        return 0;
    t->switch_head = head;
    struct os_schedstat now;
    if (os_thread_schedstat(t->tid, &now) < 0)
        return 0;
    int fresh = t->switch_at_ns && now_ns - t->switch_at_ns <= 3 * CLOCK_TRIAL_EVERY_NS &&
                now.run_ns >= t->switch_run_ns && now.slices >= t->switch_slices;
    uint64_t d_run = now.run_ns - t->switch_run_ns, d_slices = now.slices - t->switch_slices;
    t->switch_at_ns = now_ns;
    t->switch_run_ns = now.run_ns;
    t->switch_slices = now.slices;
    return fresh && clock_trial_switchy(d_slices, d_run, CLOCK_TRIAL_RATE);
}

void clock_trial_cycle(struct cpu_clock *c, struct sthread *threads, uint64_t now_ns)
{
    if (!c->switches_allowed || c->posix || now_ns < c->switch_next_ns)
        return;
    c->switch_next_ns = now_ns + CLOCK_TRIAL_EVERY_NS;
    for (struct sthread *t = threads; t; t = t->next)
        if (t->on_trial)
            judge(c, t);
    if (!process_switchy(c, now_ns))
        return;
    for (struct sthread *t = threads; t; t = t->next) {
        /* perf_event clocks settled at their high numbers, not on trial,
         * never kept for good */
        if (atomic_load(&t->perf_fd) < 0 || t->on_trial || t->stays_perf || t->perf_low ||
            t->perf_old_fd >= 0)
            continue;
        if (thread_switchy(t, now_ns))
            begin(c, t);
    }
}
