/*
 * os_thread: what the kernel knows about a thread of this process, read
 * without the runtime's help: its CPU clock, whether it is on a CPU, its
 * name, its time on a CPU and the switches to it, and the context switches
 * of the process and of the caller.  Both samplers use these from their
 * own thread; none of them is async-signal-safe and none is needed in a
 * handler.
 */
#ifndef CORSCOPE_OS_THREAD_H
#define CORSCOPE_OS_THREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "common/visibility.h"

/* The per-thread CPU clock of another thread of this process
 * (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) in the kernel). */
static inline clockid_t os_thread_cpu_clock(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

/* CPU time the thread has used, ns; UINT64_MAX when it is gone. */
HIDDEN uint64_t os_thread_cpu_ns(pid_t tid);
/* Is the thread on a CPU (or ready for one) right now? */
HIDDEN int os_thread_running(pid_t tid);
/* /proc/self/task/TID/schedstat: the thread's time on a CPU, its time
 * runnable but waiting for one, and how many times it was put on one (each
 * a switch to it). */
struct os_schedstat {
    uint64_t run_ns, wait_ns, slices;
};
/* 0, or -1 when the thread is gone or the kernel keeps no such counts. */
HIDDEN int os_thread_schedstat(pid_t tid, struct os_schedstat *out);
/* Context switches (voluntary and involuntary) of the whole process, every
 * thread living or ended (RUSAGE_SELF), or of the calling thread alone. */
HIDDEN uint64_t os_process_switches(void);
HIDDEN uint64_t os_own_switches(void);
/* The process's CPU time (ns) and context switches, every thread living
 * or gone but the calling one: the program's, read from the agent's loop. */
HIDDEN uint64_t os_others_cpu_ns(void);
HIDDEN uint64_t os_others_switches(void);
/* The name the OS knows the thread by (".NET TP Worker"), or "". */
HIDDEN void os_thread_name(pid_t tid, char *out, size_t size);

#endif
