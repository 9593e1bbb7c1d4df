/*
 * os_thread: see os_thread.h.  Everything comes from the thread CPU clocks
 * and /proc/self/task/TID.
 */
#include "agent/os_thread.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"

uint64_t os_thread_cpu_ns(pid_t tid)
{
    struct timespec ts;
    if (clock_gettime(os_thread_cpu_clock(tid), &ts) < 0)
        return UINT64_MAX;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reads /proc/self/task/TID/FILE into out (NUL-terminated); bytes read or -1. */
static ssize_t read_task_file(pid_t tid, const char *file, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, out, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    out[n] = '\0';
    return n;
}

int os_thread_running(pid_t tid)
{
    /* the state field of stat follows the last ')' (the name may hold one) */
    char text[512];
    if (read_task_file(tid, "stat", text, sizeof text) <= 0)
        return 0;
    const char *paren = strrchr(text, ')');
    return paren && paren[1] == ' ' && paren[2] == 'R';
}

void os_thread_name(pid_t tid, char *out, size_t size)
{
    ssize_t n = read_task_file(tid, "comm", out, size);
    if (n < 0)
        n = 0;
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
        n--;
    out[n] = '\0';
}

int os_thread_schedstat(pid_t tid, struct os_schedstat *out)
{
    /* "run_ns wait_ns timeslices" */
    char text[96];
    if (read_task_file(tid, "schedstat", text, sizeof text) <= 0)
        return -1;
    unsigned long long run = 0, wait = 0, n = 0;
    if (sscanf(text, "%llu %llu %llu", &run, &wait, &n) != 3)
        return -1;
    out->run_ns = run;
    out->wait_ns = wait;
    out->slices = n;
    return 0;
}

static uint64_t switches_of(int who)
{
    struct rusage ru;
    if (getrusage(who, &ru) < 0)
        return 0;
    return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

uint64_t os_process_switches(void)
{
    return switches_of(RUSAGE_SELF);
}

uint64_t os_own_switches(void)
{
    return switches_of(RUSAGE_THREAD);
}

uint64_t os_others_cpu_ns(void)
{
    uint64_t all = clock_ns(CLOCK_PROCESS_CPUTIME_ID), mine = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return all > mine ? all - mine : 0;
}

uint64_t os_others_switches(void)
{
    uint64_t all = os_process_switches(), mine = os_own_switches();
    return all > mine ? all - mine : 0;
}
