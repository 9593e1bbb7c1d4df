/*
 * sigcost: what the kernel (and the machine under it) charges a thread for
 * being interrupted by a CPU-time clock, with nothing of corscope involved.
 * A fixed busy loop runs on one thread with an empty signal handler, under
 * no clock, under a perf_event task-clock that signals every PERIOD ns of the
 * thread's CPU time (what the signal sampler uses), or under a POSIX
 * thread-CPU-time timer (its fallback).  bench/sigcost.sh runs it; the
 * difference between its times is the floor under the signal sampler's
 * overhead at that interval, whatever the handler does.
 *
 * The second measure is what a clock costs a thread that does not run
 * long: each context switch of a thread with a perf_event stops and
 * restarts the event (its hrtimer, on a virtual machine a VM exit each),
 * which a POSIX CPU timer, checked at the scheduler's tick, does not.  Two
 * threads pinned to one CPU hand a byte back and forth through two pipes
 * ROUNDS times (two context switches a round), each with its own clock.
 * With the perf_event clock it also says how much of the main thread's CPU
 * time (the scheduler's count) the event's own count did not see: a
 * thread's time in switching, its timer's stop and start included.
 *
 *   sigcost none|perf|posix PERIOD_NS ITERATIONS
 *   sigcost switch none|perf|posix PERIOD_NS ROUNDS
 *
 * Prints "seconds signals" (the first) or "seconds switches unseen_ns" (the
 * second; unseen_ns 0 but for the perf_event clock).
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t signals;

static void on_signal(int sig)
{
    (void)sig;
    signals = signals + 1;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* the calling thread's perf_event, for its count (one thread each) */
static __thread int perf_fd = -1;

static long long thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int start_perf(long period)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = (unsigned long long)period;
    attr.wakeup_events = 1;
    attr.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0)
        return -1;
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, SIGPROF) < 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
        return -1;
    perf_fd = fd;
    return 0;
}

static int start_posix(long period)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    struct itimerspec every = {{period / 1000000000, period % 1000000000},
                               {period / 1000000000, period % 1000000000}};
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer) < 0 ||
        timer_settime(timer, 0, &every, NULL) < 0)
        return -1;
    return 0;
}

static int start_clock(const char *clock, long period)
{
    if (strcmp(clock, "perf") == 0)
        return start_perf(period);
    if (strcmp(clock, "posix") == 0)
        return start_posix(period);
    return strcmp(clock, "none") == 0 ? 0 : -1;
}

struct partner {
    const char *clock;
    long period, rounds;
    int in, out;
    int failed;
};

static void *partner_main(void *arg)
{
    struct partner *p = arg;
    char byte;
    if (start_clock(p->clock, p->period) < 0) {
        p->failed = 1;
        close(p->out); /* the main thread's read then fails */
        return NULL;
    }
    for (long i = 0; i < p->rounds; i++)
        if (read(p->in, &byte, 1) != 1 || write(p->out, &byte, 1) != 1) {
            p->failed = 1;
            break;
        }
    return NULL;
}

static int switches(const char *clock, long period, long rounds)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    int to[2], back[2];
    if (sched_setaffinity(0, sizeof one, &one) < 0 || pipe(to) < 0 || pipe(back) < 0 ||
        start_clock(clock, period) < 0) {
        fprintf(stderr, "sigcost: cannot set up the switch measure with clock '%s'\n", clock);
        return 1;
    }
    struct partner p = {clock, period, rounds, to[0], back[1], 0};
    pthread_t thread;
    if (pthread_create(&thread, NULL, partner_main, &p) != 0) {
        fprintf(stderr, "sigcost: cannot start the partner thread\n");
        return 1;
    }
    char byte = 0;
    double t0 = now();
    long long cpu0 = thread_cpu_ns(), count0 = 0, count1 = 0;
    if (perf_fd >= 0 && read(perf_fd, &count0, sizeof count0) != sizeof count0)
        count0 = -1;
    long i = 0;
    for (; i < rounds; i++)
        if (write(to[1], &byte, 1) != 1 || read(back[0], &byte, 1) != 1)
            break;
    double t = now() - t0;
    if (perf_fd >= 0 && read(perf_fd, &count1, sizeof count1) != sizeof count1)
        count1 = -1;
    long long cpu = thread_cpu_ns() - cpu0;
    close(to[1]);
    pthread_join(thread, NULL);
    if (i < rounds || p.failed) {
        fprintf(stderr, "sigcost: the switch measure failed with clock '%s'\n", clock);
        return 1;
    }
    long long unseen = perf_fd >= 0 && count0 >= 0 && count1 >= 0 ? cpu - (count1 - count0) : 0;
    printf("%.4f %ld %lld\n", t, 2 * rounds, unseen);
    return 0;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    if (argc == 5 && strcmp(argv[1], "switch") == 0) {
        long period = atol(argv[3]), rounds = atol(argv[4]);
        if (period <= 0 || rounds <= 0) {
            fprintf(stderr, "sigcost: bad period or rounds\n");
            return 2;
        }
        return switches(argv[2], period, rounds);
    }
    if (argc != 4) {
        fprintf(stderr, "usage: sigcost none|perf|posix PERIOD_NS ITERATIONS\n"
                        "       sigcost switch none|perf|posix PERIOD_NS ROUNDS\n");
        return 2;
    }
    long period = atol(argv[2]), iterations = atol(argv[3]);
    int rc = period > 0 ? start_clock(argv[1], period) : -1;
    if (rc < 0 || period <= 0 || iterations <= 0) {
        fprintf(stderr, "sigcost: cannot start clock '%s'\n", argv[1]);
        return 1;
    }
    double t0 = now();
    volatile double x = 1;
    for (long i = 0; i < iterations; i++)
        x = x * 1.0000001 + 1e-9;
    printf("%.4f %ld\n", now() - t0, (long)signals);
    return 0;
}
