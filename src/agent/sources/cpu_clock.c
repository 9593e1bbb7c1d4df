/*
 * cpu_clock: see cpu_clock.h.
 */
#include "agent/sources/cpu_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/fds.h"
#include "agent/log.h"
#include "agent/os_thread.h"

void cpu_clock_init(struct cpu_clock *c, const struct config *cfg, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->interval_ns = cfg->interval_ns;
    c->signal = cfg->signal;
    c->asked_posix = cfg->cpu_clock == CONFIG_CPU_CLOCK_POSIX;
    c->random_periods = cfg->cpu_period != CONFIG_CPU_PERIOD_FIXED;
    c->posix = c->asked_posix;
    c->random = seed ^ 0x9e3779b97f4a7c15ull;
    if (!c->random)
        c->random = 1;
}

/* A random point in (0, interval] (xorshift64; no quality needed beyond
 * spreading phases). */
static uint64_t first_phase(struct cpu_clock *c)
{
    uint64_t x = c->random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->random = x;
    return 1 + x % c->interval_ns;
}

/* What the handler needs to arm the periods after the first. */
static void prepare(struct cpu_clock *c, struct sthread *t)
{
    t->interval_ns = c->interval_ns;
    t->random_periods = c->random_periods;
    t->random = c->random ^ ((uint64_t)t->tid * 0x9e3779b97f4a7c15ull);
    if (!t->random)
        t->random = 1;
    atomic_store(&t->clock_first, 1);
}

/* Refusals that will not change for this process (no permission, no
 * perf_event at all): every later thread goes to POSIX timers.  Others
 * (out of descriptors, of memory) are for this thread only. */
static int refused_for_good(int e)
{
    return e == EACCES || e == EPERM || e == ENOENT || e == ENOSYS || e == EINVAL ||
           e == EOPNOTSUPP || e == ENODEV;
}

static int start_perf(struct cpu_clock *c, struct sthread *t)
{
    if (c->posix)
        return -1;
    if (c->perf_open >= fds_clock_budget()) {
        c->fallback_errno = -1; /* the agent's share of the fd limit is used */
        return -1;
    }
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = first_phase(c);
    t->period_ns = attr.sample_period;
    prepare(c, t);
    attr.wakeup_events = 1;
    attr.exclude_kernel = (uint64_t)c->perf_exclude_kernel;
    attr.exclude_hv = 1;
    attr.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &attr, t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !c->perf_exclude_kernel) {
        c->perf_exclude_kernel = 1; /* perf_event_paranoid 2: user time only */
        return start_perf(c, t);
    }
    if (fd < 0) {
        if (errno != ESRCH && refused_for_good(errno)) {
            c->posix = 1;
            log_info("perf_event unavailable (%s): CPU timers instead", strerror(errno));
        } else if (errno != ESRCH) {
            c->fallback_errno = errno;
        }
        return -1;
    }
    fd = fds_move_high(fd);
    struct f_owner_ex owner = {F_OWNER_TID, t->tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, c->signal) < 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) < 0) {
        close(fd);
        return -1;
    }
    t->perf_fd = fd; /* before the first signal, which the handler checks it against */
    if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0) {
        t->perf_fd = -1;
        close(fd);
        return -1;
    }
    c->perf_open++;
    c->perf_threads++;
    return 0;
}

int cpu_clock_start(struct cpu_clock *c, struct sthread *t)
{
    if (start_perf(c, t) == 0)
        return 0;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = c->signal;
    sev._sigev_un._tid = t->tid;
    /* with random periods, a one-shot timer the handler re-arms */
    uint64_t ns = c->random_periods ? 0 : c->interval_ns;
    struct itimerspec its;
    its.it_interval.tv_sec = (time_t)(ns / 1000000000ull);
    its.it_interval.tv_nsec = (long)(ns % 1000000000ull);
    uint64_t phase = first_phase(c);
    its.it_value.tv_sec = (time_t)(phase / 1000000000ull);
    its.it_value.tv_nsec = (long)(phase % 1000000000ull);
    if (timer_create(os_thread_cpu_clock(t->tid), &sev, &t->timer) < 0) {
        t->clock_failed = 1;
        /* the thread is gone already (ESRCH/EINVAL), or no timers are left */
        return errno == EINVAL || errno == ESRCH ? 0 : -1;
    }
    t->has_timer = 1;
    prepare(c, t);
    t->cpu_mark_ns = os_thread_cpu_ns(t->tid);
    c->posix_threads++;
    timer_settime(t->timer, 0, &its, NULL);
    return 0;
}

void cpu_clock_stop(struct sthread *t)
{
    if (t->has_timer) {
        timer_delete(t->timer);
        t->has_timer = 0;
    }
    if (t->perf_fd >= 0) {
        ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
        close(t->perf_fd);
        t->perf_fd = -1;
    }
}

void cpu_clock_release(struct cpu_clock *c, struct sthread *t)
{
    if (t->perf_fd >= 0 && c->perf_open)
        c->perf_open--;
    cpu_clock_stop(t);
}

const char *cpu_clock_describe(struct cpu_clock *c)
{
    if (c->asked_posix)
        return "posix-cpu-timer (--cpu-clock posix; checked at the scheduler tick)";
    if (c->posix && !c->perf_threads)
        return "posix-cpu-timer (perf_event refused; checked at the scheduler tick)";
    const char *perf = c->perf_exclude_kernel ? "perf_event task-clock (user time only)"
                                              : "perf_event task-clock";
    if (!c->posix_threads)
        return perf;
    /* some threads fell back: say how many, and why */
    snprintf(c->text, sizeof c->text,
             "%s; posix-cpu-timer for %llu of %llu threads (%s; checked at the scheduler tick)",
             perf, (unsigned long long)c->posix_threads,
             (unsigned long long)(c->posix_threads + c->perf_threads),
             c->fallback_errno == -1 ? "the agent's share of the file descriptor limit was used"
             : c->fallback_errno     ? strerror(c->fallback_errno)
                                     : "perf_event refused");
    return c->text;
}
