/*
 * clock_cost: see clock_cost.h.
 */
#include "agent/sources/clock_cost.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/sources/cpu_clock.h"
#include "common/clock.h"

/* A gap between two reads longer than this: something interrupted the
 * loop (the event's overflow, the tick, a preemption): look at once. */
#define COST_GAP_NS 2000ull

int clock_cost_prefers_posix(uint64_t cost_ns, uint64_t interval_ns)
{
    return cost_ns * 1000 > interval_ns * COST_SHARE_PERMILLE;
}

int clock_cost_worth_measuring(uint64_t interval_ns)
{
    return clock_cost_prefers_posix(COST_WORST_NS, interval_ns);
}

uint64_t clock_cost_permille(uint64_t cost_ns, uint64_t interval_ns)
{
    return interval_ns ? cost_ns * 1000 / interval_ns : UINT64_MAX;
}

uint32_t clock_cost_tick_hz(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || res.tv_sec || res.tv_nsec <= 0)
        return 0;
    return (uint32_t)(1000000000l / res.tv_nsec);
}

static uint64_t median(uint64_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n ? v[n / 2] : 0;
}

struct spin {
    sigset_t set;      /* the sampler's signal, blocked meanwhile */
    int signal;
    uint64_t deadline; /* CLOCK_MONOTONIC, ns */
};

/* Takes the event's signal if it is pending: 1 if it was. */
static int overflowed(const struct spin *s)
{
    static const struct timespec zero = {0, 0};
    siginfo_t si;
    return sigtimedwait(&s->set, &si, &zero) == s->signal;
}

/* The largest gap between two reads of the clock in ns of spinning. */
static uint64_t spin_for(uint64_t ns)
{
    uint64_t start = clock_now_ns(), prev = start, largest = 0;
    for (uint64_t t = start; t - start < ns; prev = t) {
        t = clock_now_ns();
        if (t - prev > largest)
            largest = t - prev;
    }
    return largest;
}

/* Spins until the event's overflow: the largest gap between two reads of
 * the clock meanwhile (the looks for the signal not counted), or 0 when
 * the deadline passed first. */
static uint64_t spin_to_overflow(const struct spin *s)
{
    uint64_t prev = clock_now_ns(), looked = prev, largest = 0;
    for (;;) {
        uint64_t t = clock_now_ns(), gap = t - prev;
        if (gap > largest)
            largest = gap;
        prev = t;
        if (gap > COST_GAP_NS || t - looked > COST_PERIOD_NS) {
            if (overflowed(s))
                return largest ? largest : 1;
            if (t > s->deadline)
                return 0;
            prev = looked = clock_now_ns();
        }
    }
}

/* What the signal handler does after each overflow (handler.c perf_tick):
 * a new period, and one more overflow allowed.  Its wall time, ns. */
static uint64_t rearm(int fd)
{
    uint64_t start = clock_now_ns();
    uint64_t period = COST_PERIOD_NS;
    ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
    return clock_now_ns() - start;
}

/* The overflows' costs into cost[]: how many fit the budget. */
static uint32_t measure_overflows(const struct spin *s, int fd, uint64_t *cost)
{
    uint32_t n = 0;
    rearm(fd); /* the first arming, not an overflow's */
    while (n < COST_PERIODS && clock_now_ns() < s->deadline) {
        uint64_t gap = spin_to_overflow(s);
        if (!gap)
            break;
        cost[n++] = gap + rearm(fd);
    }
    return n;
}

int clock_cost_measure(int signal, int exclude_kernel, struct clock_cost *out)
{
    memset(out, 0, sizeof *out);
    uint64_t start = clock_now_ns(), cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    struct spin s = {.signal = signal, .deadline = start + COST_BUDGET_NS};
    sigemptyset(&s.set);
    sigaddset(&s.set, signal);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &s.set, &old);
    int fd = cpu_clock_open_event((pid_t)syscall(SYS_gettid), COST_PERIOD_NS, signal,
                                  exclude_kernel);
    int err = errno;
    uint64_t base[COST_BASE_PERIODS], cost[COST_PERIODS];
    uint32_t n = 0;
    if (fd >= 0) {
        for (uint32_t i = 0; i < COST_BASE_PERIODS; i++)
            base[i] = spin_for(COST_PERIOD_NS);
        n = measure_overflows(&s, fd, cost);
        close(fd);
        while (overflowed(&s)) /* the last overflow's signal, if it came late */
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    out->spent_ns = clock_now_ns() - start;
    out->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
    out->periods = n;
    if (fd < 0) {
        errno = fd == -1 ? err : EIO;
        return -1;
    }
    if (n < COST_MIN_PERIODS) {
        errno = EBUSY;
        return -1;
    }
    uint64_t c = median(cost, n), b = median(base, COST_BASE_PERIODS);
    out->per_interrupt_ns = c > b ? c - b : 0;
    return 0;
}
