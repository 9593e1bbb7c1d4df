/*
 * cpu_clock: see cpu_clock.h.
 */
#include "agent/sources/cpu_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/fds.h"
#include "agent/log.h"
#include "agent/os_thread.h"
#include "agent/sources/clock_trial.h"
#include "common/clock.h"
#include "format/format.h"

/* Refusals that will not change for this process (no permission, no
 * perf_event at all): every later thread goes to POSIX timers.  Others
 * (out of descriptors, of memory) are for this thread only. */
static int refused_for_good(int e)
{
    return e == EACCES || e == EPERM || e == ENOENT || e == ENOSYS || e == EINVAL ||
           e == EOPNOTSUPP || e == ENODEV;
}

/* No clock asked for, and at this interval the perf_event clock's
 * interrupts could matter: measure what one costs here and take POSIX
 * timers if that is more than the rule allows (clock_cost.h). */
static void choose(struct cpu_clock *c)
{
    struct clock_cost cost;
    int rc = clock_cost_measure(c->signal, 0, &cost);
    if (rc < 0 && (errno == EACCES || errno == EPERM)) {
        c->perf_exclude_kernel = 1; /* perf_event_paranoid 2: user time only */
        rc = clock_cost_measure(c->signal, 1, &cost);
    }
    int err = rc < 0 ? errno : 0;
    cpu_clock_take_cost(c, &cost, err);
    if (err)
        log_info("the perf_event clock's cost was not measured (%s)", strerror(err));
    else
        log_info("a perf_event interrupt costs %llu ns here (%u overflows; the measure took "
                 "%llu us, %llu us of CPU)",
                 (unsigned long long)cost.per_interrupt_ns, cost.periods,
                 (unsigned long long)(cost.spent_ns / 1000),
                 (unsigned long long)(cost.cpu_ns / 1000));
}

void cpu_clock_take_cost(struct cpu_clock *c, const struct clock_cost *cost, int measure_errno)
{
    c->measured = 1;
    c->cost = *cost;
    c->measure_errno = measure_errno;
    if (measure_errno) /* refused: the first thread's clock finds it again and says so */
        return;
    c->tick_hz = clock_cost_tick_hz();
    c->chose_posix = clock_cost_prefers_posix(cost->per_interrupt_ns, c->interval_ns);
    c->posix = c->chose_posix;
}

void cpu_clock_init(struct cpu_clock *c, const struct config *cfg, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->interval_ns = cfg->interval_ns;
    c->signal = cfg->signal;
    c->asked_posix = cfg->cpu_clock == CONFIG_CPU_CLOCK_POSIX;
    c->random_periods = cfg->cpu_period != CONFIG_CPU_PERIOD_FIXED;
    c->asked_perf = cfg->cpu_clock == CONFIG_CPU_CLOCK_PERF;
    c->posix = c->asked_posix;
    c->random = seed ^ 0x9e3779b97f4a7c15ull;
    if (!c->random)
        c->random = 1;
    if (cfg->cpu_clock == CONFIG_CPU_CLOCK_AUTO && config_sampled(cfg) == CONFIG_EVENT_CPU &&
        cfg->sampler == CONFIG_SAMPLER_SIGNAL && clock_cost_worth_measuring(c->interval_ns))
        choose(c);
    c->switches_allowed = cfg->cpu_clock == CONFIG_CPU_CLOCK_AUTO &&
                          config_sampled(cfg) == CONFIG_EVENT_CPU &&
                          cfg->sampler == CONFIG_SAMPLER_SIGNAL && c->random_periods;
    if (c->switches_allowed && !c->tick_hz)
        c->tick_hz = clock_cost_tick_hz(); /* a trial's verdict is in ticks (clock_trial.h) */
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

int cpu_clock_open_event(pid_t tid, uint64_t period_ns, int signal, int exclude_kernel)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = period_ns;
    attr.wakeup_events = 1;
    attr.exclude_kernel = (uint64_t)(exclude_kernel != 0);
    attr.exclude_hv = 1;
    attr.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    /* high before O_ASYNC (the signal's si_fd is the number asked for
     * then), if that does not mean waiting for the table to grow */
    if (fds_high_ready())
        fd = fds_move_high(fd);
    struct f_owner_ex owner = {F_OWNER_TID, tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, signal) < 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) < 0) {
        close(fd);
        return -2;
    }
    return fd;
}

/* A perf_event clock for the thread, whichever clock the others have. */
static int open_perf(struct cpu_clock *c, struct sthread *t)
{
    if (c->perf_open >= fds_clock_budget()) {
        c->fallback_errno = -1; /* the agent's share of the fd limit is used */
        return -1;
    }
    t->period_ns = first_phase(c);
    prepare(c, t);
    int fd = cpu_clock_open_event(t->tid, t->period_ns, c->signal, c->perf_exclude_kernel);
    if (fd == -2)
        return -1;
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !c->perf_exclude_kernel) {
        c->perf_exclude_kernel = 1; /* perf_event_paranoid 2: user time only */
        return open_perf(c, t);
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
    /* before the first signal, which the handler checks against them */
    atomic_store(&t->perf_fd, fd);
    t->perf_sig_fd = fd;
    if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0) {
        atomic_store(&t->perf_fd, -1);
        t->perf_sig_fd = -1;
        close(fd);
        return -1;
    }
    t->perf_low = fds_is_low(fd);
    c->unsettled += (size_t)t->perf_low;
    c->perf_open++;
    c->perf_threads++;
    return 0;
}

static int start_perf(struct cpu_clock *c, struct sthread *t)
{
    return c->posix ? -1 : open_perf(c, t);
}

int cpu_clock_posix_timer(struct cpu_clock *c, struct sthread *t, int trial)
{
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
    if (timer_create(os_thread_cpu_clock(t->tid), &sev, &t->timer) < 0)
        return -1;
    t->has_timer = 1;
    /* a trial's timer leaves the perf_event clock's state alone */
    if (!trial)
        prepare(c, t);
    atomic_store(&t->posix_retired, 0);
    atomic_store(&t->trial_ticks, 0);
    atomic_store(&t->trial_late_ns, 0);
    atomic_store(&t->posix_trial, trial);
    t->posix_armed_ns = phase;
    t->cpu_mark_ns = os_thread_cpu_ns(t->tid);
    timer_settime(t->timer, 0, &its, NULL);
    return 0;
}

int cpu_clock_start(struct cpu_clock *c, struct sthread *t)
{
    if (start_perf(c, t) == 0)
        return 0;
    if (cpu_clock_posix_timer(c, t, 0) < 0) {
        t->clock_failed = 1;
        /* the thread is gone already (ESRCH/EINVAL), or no timers are left */
        return errno == EINVAL || errno == ESRCH ? 0 : -1;
    }
    c->posix_threads++;
    return 0;
}

/* Closes the low number a clock left once no tick can be using it:
 * 1 when it is closed (or there was none). */
static int close_old(struct sthread *t)
{
    if (t->perf_old_fd < 0)
        return 1;
    if (atomic_load(&t->perf_ticking))
        return 0;
    close(t->perf_old_fd);
    t->perf_old_fd = -1;
    return 1;
}

/* Moves one thread's clock from its low number to a high one: the
 * handler's next tick reads the new number; the old one stays open
 * until no tick that read it can still be in its ioctls (the store of
 * perf_fd, then the load of perf_ticking, against the handler's store of
 * perf_ticking, then its load of perf_fd: both sequentially consistent,
 * so a tick either reads the new number or is seen ticking).  1 when the
 * thread is settled. */
static int settle(struct sthread *t)
{
    if (t->perf_low) {
        int fd = atomic_load(&t->perf_fd);
        int high = fds_copy_high(fd);
        t->perf_low = 0;
        if (high == fd)
            return 1; /* no high number free: it stays low */
        atomic_store(&t->perf_fd, high);
        t->perf_old_fd = fd;
    }
    return close_old(t);
}

void cpu_clock_settle(struct cpu_clock *c, struct sthread *threads)
{
    if (!c->unsettled || !fds_high_ready())
        return;
    for (struct sthread *t = threads; t; t = t->next)
        if ((t->perf_low || t->perf_old_fd >= 0) && settle(t))
            c->unsettled--;
}

int cpu_clock_missed(uint64_t cpu_ns, uint64_t interval_ns, uint32_t tick_hz)
{
    uint64_t limit = CPU_CLOCK_MISSED_INTERVALS * interval_ns;
    uint64_t ticks = tick_hz ? CPU_CLOCK_MISSED_TICKS * (1000000000ull / tick_hz)
                             : CPU_CLOCK_MISSED_MIN_NS;
    return cpu_ns > (limit > ticks ? limit : ticks);
}

int cpu_clock_retire_timer(struct sthread *t)
{
    atomic_store(&t->posix_retired, 1);
    if (atomic_load(&t->posix_ticking))
        return 0;
    timer_delete(t->timer);
    t->has_timer = 0;
    return 1;
}

void cpu_clock_rescue(struct cpu_clock *c, struct sthread *threads, uint64_t now_ns)
{
    if ((!c->chose_posix && !c->switchy_threads) || !c->random_periods || c->rescue_refused ||
        now_ns < c->rescue_next_ns)
        return;
    c->rescue_next_ns = now_ns + CPU_CLOCK_RESCUE_EVERY_NS;
    for (struct sthread *t = threads; t; t = t->next) {
        /* the POSIX timers the agent chose (not those perf_event refused) */
        if (!t->has_timer || (!c->chose_posix && !t->switchy))
            continue;
        if (!atomic_load(&t->posix_retired)) {
            uint64_t cpu = os_thread_cpu_ns(t->tid);
            uint64_t mark = __atomic_load_n(&t->cpu_mark_ns, __ATOMIC_RELAXED);
            if (cpu == UINT64_MAX || cpu <= mark ||
                !cpu_clock_missed(cpu - mark, c->interval_ns, c->tick_hz))
                continue;
            c->rescued_missed_ns += cpu - mark;
        }
        if (!cpu_clock_retire_timer(t))
            continue; /* a tick is re-arming it: the next cycle */
        uint64_t *count = t->switchy ? &c->switchy_threads : &c->posix_threads;
        (*count)--;
        if (open_perf(c, t) == 0) {
            c->rescued_threads++;
            t->switchy = 0;
            t->stays_perf = 1;
            continue;
        }
        if (errno == ESRCH)
            continue; /* it ended meanwhile */
        /* no perf_event for it: the POSIX timer again, and no more tries */
        c->rescue_refused = 1;
        log_info("a thread the POSIX timers missed could not get a perf_event clock (%s)",
                 c->fallback_errno > 0 ? strerror(c->fallback_errno) : "refused");
        atomic_store(&t->posix_retired, 0);
        if (cpu_clock_posix_timer(c, t, 0) == 0)
            (*count)++;
        else
            t->clock_failed = 1;
    }
}

/* Closes the thread's perf_event clock, if any. */
static void stop_perf(struct sthread *t)
{
    int fd = atomic_exchange(&t->perf_fd, -1);
    if (fd >= 0) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        /* a tick of a live thread may still use a low number the program
         * could take next: it is closed when that tick is over */
        for (int i = 0; i < 1000 && atomic_load(&t->perf_ticking); i++)
            sched_yield();
        close(fd);
    }
    for (int i = 0; i < 1000 && !close_old(t); i++)
        sched_yield();
    t->perf_low = 0;
    t->perf_sig_fd = -1;
}

/* The perf_event clock closed and its fd given back to the budget. */
static void release_perf(struct cpu_clock *c, struct sthread *t)
{
    if (atomic_load(&t->perf_fd) >= 0 && c->perf_open)
        c->perf_open--;
    if ((t->perf_low || t->perf_old_fd >= 0) && c->unsettled)
        c->unsettled--;
    stop_perf(t);
}

void cpu_clock_release(struct cpu_clock *c, struct sthread *t)
{
    if (t->has_timer) {
        timer_delete(t->timer);
        t->has_timer = 0;
    }
    release_perf(c, t);
}

void cpu_clock_leave_perf(struct cpu_clock *c, struct sthread *t)
{
    int sig_fd = t->perf_sig_fd;
    release_perf(c, t);
    t->perf_left_fd = sig_fd;
    if (c->perf_threads)
        c->perf_threads--;
}

/* "1 ms", "500 us": an interval as the user gave it. */
static void interval_text(uint64_t ns, char *out, size_t size)
{
    if (ns % 1000000ull == 0)
        snprintf(out, size, "%llu ms", (unsigned long long)(ns / 1000000ull));
    else
        snprintf(out, size, "%llu us", (unsigned long long)(ns / 1000ull));
}

/* Why the measure chose as it did: "chosen at start: a perf_event interrupt
 * costs 55.1 us here, 5.5% of a core at 1 ms, more than the 1.0% allowed",
 * or why there is no measure. */
static void choice_text(const struct cpu_clock *c, char *out, size_t size)
{
    if (c->measure_errno == EBUSY) {
        snprintf(out, size, "its cost not measured at start: too few overflows in %llu ms, "
                 "the machine too busy", (unsigned long long)(c->cost.spent_ns / 1000000ull));
        return;
    }
    if (c->measure_errno) {
        snprintf(out, size, "its cost not measured at start: %s", strerror(c->measure_errno));
        return;
    }
    char at[32];
    interval_text(c->interval_ns, at, sizeof at);
    uint64_t share = clock_cost_permille(c->cost.per_interrupt_ns, c->interval_ns);
    snprintf(out, size,
             "chosen at start: a perf_event interrupt costs %llu.%llu us here, %llu.%llu%% of a "
             "core at %s, %s the %u.%u%% allowed",
             (unsigned long long)(c->cost.per_interrupt_ns / 1000),
             (unsigned long long)(c->cost.per_interrupt_ns % 1000 / 100),
             (unsigned long long)(share / 10), (unsigned long long)(share % 10), at,
             c->chose_posix ? "more than" : "within", COST_SHARE_PERMILLE / 10, COST_SHARE_PERMILLE % 10);
}

/* The POSIX timers' rate: one sample per tick at most. */
static void posix_rate_text(const struct cpu_clock *c, char *out, size_t size)
{
    uint64_t asked = 1000000000ull / c->interval_ns;
    if (!c->tick_hz)
        snprintf(out, size, "checked at the scheduler tick");
    else if (asked > c->tick_hz)
        snprintf(out, size,
                 "checked at the scheduler tick: at most %u samples per CPU-second per thread "
                 "(the %u Hz tick) for the %llu asked, each weighted by the CPU time it stands for",
                 c->tick_hz, c->tick_hz, (unsigned long long)asked);
    else
        snprintf(out, size, "checked at the scheduler tick (%u Hz)", c->tick_hz);
}

/* Appends to the clock's text at *n (cut at its end). */
__attribute__((format(printf, 3, 4))) static void append(struct cpu_clock *c, size_t *n,
                                                         const char *fmt, ...)
{
    if (*n >= sizeof c->text)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(c->text + *n, sizeof c->text - *n, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n += (size_t)k;
}

/* "perf_event task-clock (user time only; --cpu-clock perf)" */
static void perf_text(const struct cpu_clock *c, char *out, size_t size)
{
    char why[256] = "";
    if (c->measured)
        choice_text(c, why, sizeof why);
    const char *parts[3] = {c->perf_exclude_kernel ? "user time only" : NULL,
                            c->asked_perf ? "--cpu-clock perf" : NULL, why[0] ? why : NULL};
    size_t n = (size_t)snprintf(out, size, "perf_event task-clock");
    const char *sep = " (";
    for (int i = 0; i < 3 && n < size; i++)
        if (parts[i]) {
            n += (size_t)snprintf(out + n, size - n, "%s%s", sep, parts[i]);
            sep = "; ";
        }
    if (sep[0] == ';' && n < size)
        snprintf(out + n, size - n, ")");
}

const char *cpu_clock_describe(struct cpu_clock *c)
{
    if (c->asked_posix)
        return "posix-cpu-timer (--cpu-clock posix; checked at the scheduler tick)";
    if (c->chose_posix) {
        char why[256], rate[256];
        choice_text(c, why, sizeof why);
        posix_rate_text(c, rate, sizeof rate);
        int n = snprintf(c->text, sizeof c->text, "posix-cpu-timer (%s; %s)", why, rate);
        if (c->rescued_threads && n > 0 && (size_t)n < sizeof c->text)
            snprintf(c->text + n, sizeof c->text - (size_t)n,
                     "; perf_event task-clock for %llu thread%s the tick missed (%llu ms of CPU "
                     "unsampled before)",
                     (unsigned long long)c->rescued_threads, c->rescued_threads == 1 ? "" : "s",
                     (unsigned long long)(c->rescued_missed_ns / 1000000ull));
        return c->text;
    }
    if (c->posix && !c->perf_threads)
        return "posix-cpu-timer (perf_event refused; checked at the scheduler tick)";
    char perf[384];
    perf_text(c, perf, sizeof perf);
    size_t n = 0;
    append(c, &n, "%s", perf);
    if (c->switchy_threads)
        append(c, &n,
               "; posix-cpu-timer for %llu thread%s " FMT_CPU_CLOCK_SWITCHY
               " %u times a CPU-second (the perf_event clock pays each switch; tried first "
               "beside it; checked at the scheduler tick)",
               (unsigned long long)c->switchy_threads, c->switchy_threads == 1 ? "" : "s",
               CLOCK_TRIAL_RATE);
    if (c->trials_failed)
        append(c, &n,
               "; the perf_event task-clock kept for %llu thread%s that switched as often, a "
               "POSIX timer tried beside it finding %s late",
               (unsigned long long)c->trials_failed, c->trials_failed == 1 ? "" : "s",
               c->trials_failed == 1 ? "it" : "them");
    if (c->rescued_threads)
        append(c, &n,
               "; perf_event task-clock again for %llu thread%s the tick missed (%llu ms of CPU "
               "unsampled before)",
               (unsigned long long)c->rescued_threads, c->rescued_threads == 1 ? "" : "s",
               (unsigned long long)(c->rescued_missed_ns / 1000000ull));
    /* some threads fell back: say how many, and why */
    if (c->posix_threads)
        append(c, &n, "; posix-cpu-timer for %llu of %llu threads (%s; checked at the scheduler tick)",
               (unsigned long long)c->posix_threads,
               (unsigned long long)(c->posix_threads + c->perf_threads + c->switchy_threads),
               c->fallback_errno == -1 ? "the agent's share of the file descriptor limit was used"
               : c->fallback_errno     ? strerror(c->fallback_errno)
                                       : "perf_event refused");
    return c->text;
}
