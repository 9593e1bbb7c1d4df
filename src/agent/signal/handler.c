/*
 * handler: see handler.h.
 */
#include "agent/signal/handler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/signal/achain.h"
#include "agent/signal/activity.h"
#include "agent/signal/arch.h"
#include "agent/signal/loop_wake.h"
#include "agent/signal/mcode.h"
#include "agent/signal/ring.h"
#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/walk.h"
#include "common/clock.h"

static void put(struct sthread *t, uint64_t at, uint64_t word)
{
    t->ring[at & t->ring_mask] = word;
}

struct ring_cursor {
    struct sthread *t;
    uint64_t at;      /* where the first pc goes */
    uintptr_t local;  /* the async slot's local, 0 none */
    uint64_t runner;  /* the last frame whose sp is at or below it */
    int beyond;       /* a frame above it was reached */
};

static void put_pc(void *ctx, uint64_t index, uint64_t pc, uintptr_t sp)
{
    struct ring_cursor *c = ctx;
    put(c->t, c->at + index, pc);
    if (c->local && sp <= c->local)
        c->runner = index;
    else if (c->local)
        c->beyond = 1;
}

/* A period in [interval/2, 3*interval/2): its mean is the interval, and
 * any phase of work that repeats with the interval is as likely as any
 * other (xorshift64; spreading phases needs no better). */
static uint64_t draw_period(struct sthread *t)
{
    uint64_t x = t->random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->random = x;
    return t->interval_ns / 2 + x % t->interval_ns;
}

/* The perf_event clock signalled: arms the next period, returns the CPU
 * time (ns) the sample stands for: the period that just ran, or one
 * interval for the first (a random phase, taken with the probability its
 * length gives it). */
static uint64_t perf_tick(struct sthread *t)
{
    uint64_t weight = t->interval_ns;
    int first = atomic_exchange(&t->clock_first, 0);
    /* ticking before the read: the collector closes a number it moved
     * the clock from only when no tick may still be using it */
    atomic_store(&t->perf_ticking, 1);
    int fd = atomic_load(&t->perf_fd);
    if (t->random_periods) {
        if (!first)
            weight = t->period_ns;
        t->period_ns = draw_period(t);
        ioctl(fd, PERF_EVENT_IOC_PERIOD, &t->period_ns);
    } else if (first) {
        t->period_ns = t->interval_ns;
        ioctl(fd, PERF_EVENT_IOC_PERIOD, &t->period_ns);
    }
    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
    atomic_store(&t->perf_ticking, 0);
    return weight;
}

/* Arms the one-shot POSIX timer for a new random period, unless the
 * collector is taking it away. */
static void posix_rearm(struct sthread *t)
{
    uint64_t next = draw_period(t);
    t->posix_armed_ns = next;
    struct itimerspec its = {{0, 0}, {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)}};
    /* ticking before the check: the collector deletes a retired timer only
     * when no tick may still re-arm it (cpu_clock_rescue) */
    atomic_store(&t->posix_ticking, 1);
    if (!atomic_load(&t->posix_retired))
        timer_settime(t->timer, 0, &its, NULL);
    atomic_store(&t->posix_ticking, 0);
}

/* A POSIX CPU timer expired (at a scheduler tick, after its period): with
 * random periods, a one-shot timer re-armed here, the sample standing for
 * the thread's CPU time since the last one; else the periodic timer's
 * intervals, overruns included. */
static uint64_t posix_tick(struct sthread *t, uint64_t overrun)
{
    if (!t->random_periods)
        return (1 + overrun) * t->interval_ns;
    uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t weight = t->interval_ns;
    if (!atomic_exchange(&t->clock_first, 0) && cpu > t->cpu_mark_ns)
        weight = cpu - t->cpu_mark_ns;
    __atomic_store_n(&t->cpu_mark_ns, cpu, __ATOMIC_RELAXED); /* the collector reads it */
    posix_rearm(t);
    return weight;
}

/* A POSIX timer on trial (clock_trial.h) expired: no sample (the thread's
 * perf_event clock takes them), only how much CPU the thread used past the
 * period before a tick found it running. */
static void trial_tick(struct sthread *t)
{
    uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t used = cpu > t->cpu_mark_ns ? cpu - t->cpu_mark_ns : 0;
    uint64_t late = used > t->posix_armed_ns ? used - t->posix_armed_ns : 0;
    __atomic_store_n(&t->cpu_mark_ns, cpu, __ATOMIC_RELAXED);
    atomic_fetch_add_explicit(&t->trial_late_ns, late, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->trial_ticks, 1, memory_order_release);
    posix_rearm(t);
}

NO_ASAN static void sample(struct sthread *t, pid_t tid, const siginfo_t *si,
                           const ucontext_t *uc)
{
    struct walk_regs regs;
    arch_regs(uc, &regs);
    regs.thread = atomic_load_explicit(&t->clr_thread, memory_order_relaxed);
    uint64_t weight = 1;
    uint32_t flags = 0;
    if (si->si_code == SI_TIMER && atomic_load_explicit(&t->posix_trial, memory_order_relaxed)) {
        trial_tick(t);
        return;
    } else if (si->si_code == SI_TIMER) {
        weight = posix_tick(t, (uint64_t)(unsigned)si->si_overrun);
    } else if (si->si_code > 0 && si->si_fd == t->perf_sig_fd) {
        weight = perf_tick(t);
    } else if (si->si_code > 0 && si->si_fd == t->perf_left_fd) {
        return; /* its perf_event clock's, queued before the clock was closed */
    } else {
        flags |= RING_WALL_REQUEST;
        uint64_t w = atomic_exchange(&t->wall_weight, 0);
        if (w)
            weight = w;
    }
    uint64_t time = clock_ns(CLOCK_MONOTONIC);

    uintptr_t lo = 0, hi = 0;
    if (regs.sp >= t->stack_lo && regs.sp < t->stack_hi) {
        hi = t->stack_hi;
    } else if (stack_bounds_find(regs.sp, &lo, &hi, t->maps_generation) &&
               (!t->stack_hi || hi == t->stack_hi)) {
        /* the thread's own stack, placed now, or grown down (the main
         * thread's) */
        t->stack_lo = lo;
        t->stack_hi = hi;
    } else {
        /* not on its own stack (an alternate signal stack, a coroutine's
         * stack), or nowhere known: a mapping of the snapshot other than
         * its stack may have been unmapped since, and reading to its end
         * could fault; the leaf alone is kept, and the thread's bounds
         * stay those of its own stack */
        flags |= WALK_NO_STACK;
        hi = 0;
    }

    /* the logical async stack, when the thread runs async code */
    uint64_t chain[ACHAIN_MAX];
    uintptr_t local = 0;
    uint32_t chain_end = 0;
    uint32_t chain_n = achain_read(regs.sp, hi, regs.thread, chain, ACHAIN_MAX, &local, &chain_end);

    uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
    uint64_t free_words = t->ring_mask + 1 - (head - tail);
    if (free_words < RING_HEADER_WORDS + chain_n + 1) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t room = free_words - RING_HEADER_WORDS - chain_n;
    uint64_t max_depth = room < t->max_depth ? room : t->max_depth;

    struct ring_cursor cursor = {t, head + RING_HEADER_WORDS, chain_n ? local : 0, 0, 0};
    uint64_t depth = walk_stack(regs, hi, max_depth, put_pc, &cursor, &flags);
    if ((flags & WALK_TRUNCATED) && max_depth < t->max_depth) {
        /* cut by the ring's free room, not by the depth limit: the ring is
         * full for this stack (the collector is behind), a drop */
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }

    uint64_t inner, outer;
    activity_get(tid, &inner, &outer);
    /* the runtime's frame names only a sample taken in the runtime's code:
     * one at a leaf in managed code is the program's work (stacks.c), and
     * reading the Thread's fields is a system call (activity.c) */
    struct activity_frame frame = {CLR_FRAME_NONE, 0, 0};
    struct mcode_hit leaf;
    enum mcode_found at_leaf = mcode_find(regs.pc, &leaf);
    if (at_leaf != MCODE_FOUND && at_leaf != MCODE_NO_SHAPE)
        activity_frame_get(tid, regs.sp, hi, &frame);
    uint32_t runner = UINT32_MAX;
    if (chain_n && (cursor.beyond || !(flags & (WALK_FAILED | WALK_TRUNCATED))))
        runner = (uint32_t)cursor.runner;
    for (uint32_t i = 0; i < chain_n; i++)
        put(t, head + RING_HEADER_WORDS + depth + i, chain[i]);
    uint64_t total = RING_HEADER_WORDS + depth + chain_n;
    put(t, head + RING_WORDS, total);
    put(t, head + RING_DEPTH, depth);
    put(t, head + RING_FLAGS, flags);
    put(t, head + RING_TIME, time);
    put(t, head + RING_WEIGHT, weight);
    put(t, head + RING_CPU, (flags & RING_WALL_REQUEST) ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0);
    put(t, head + RING_ACTIVITY, inner);
    put(t, head + RING_ACTIVITY_OUTER, outer);
    put(t, head + RING_GC, activity_gc_get());
    put(t, head + RING_FRAME_KIND, frame.kind);
    put(t, head + RING_FRAME_RET, frame.ret);
    put(t, head + RING_FRAME_METHOD, frame.method);
    put(t, head + RING_ASYNC, ring_async_word(chain_n, chain_end, runner));
    atomic_store_explicit(&t->head, head + total, memory_order_release);
    if ((head + total - tail) * 2 > t->ring_mask + 1)
        loop_wake_for_room(); /* drained before the next sample finds it full */
    else
        loop_wake_if_quiet(LOOP_WAKE_SAMPLES);
}

/* the handler's time on the sampled threads, all together (one relaxed add
 * per signal: threads are signalled an interval apart) */
static _Atomic uint64_t busy_ns;

uint64_t handler_take_busy_ns(void)
{
    return atomic_exchange_explicit(&busy_ns, 0, memory_order_relaxed);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved_errno = errno;
    uint64_t began = clock_ns(CLOCK_MONOTONIC);
    pid_t tid = (pid_t)syscall(SYS_gettid);
    struct sthread *t = thread_rings_handler_enter(tid);
    if (t) {
        sample(t, tid, si, uc);
        thread_rings_handler_leave(tid);
        atomic_fetch_add_explicit(&busy_ns, clock_ns(CLOCK_MONOTONIC) - began,
                                  memory_order_relaxed);
    }
    errno = saved_errno;
}

int handler_install(int signal)
{
    struct sigaction old;
    if (sigaction(signal, NULL, &old) < 0)
        return -1;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_signal)
        return 0;
    if (old.sa_flags & SA_SIGINFO)
        return -1;
    if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(signal, &sa, NULL);
}
