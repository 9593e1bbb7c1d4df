/*
 * fatal_signal: the recording's last moments when a signal ends the process.
 *
 * A process that the runtime aborts (an unhandled exception, a fail-fast:
 * SIGABRT), that crashes (SIGSEGV, SIGBUS, SIGILL, SIGFPE the runtime does
 * not turn into a managed exception), or that a termination signal ends
 * (SIGTERM, SIGINT, SIGHUP, SIGQUIT, when the program does not handle it)
 * never calls the profiler's Shutdown: without help its recording would
 * end at the last flush, up to 250 ms before the end, without a word of why.
 *
 * So in Initialize the agent puts a handler in front of whatever handles
 * each of these signals then (the runtime's own, or the default action),
 * with the same flags and mask, and chains to it.  Our handler asks the
 * loop to finish the recording now (record everything taken so far, write
 * which signal ended the process as the INFO key ended_by, close it whole)
 * and waits for that, at most FATAL_SIGNAL_WAIT_NS, then lets the signal go on
 * as it would have without us.  A fault the runtime handles (a null
 * reference becoming a NullReferenceException) goes to the runtime first
 * and only when the runtime gives up (it restores the default action, so
 * the fault comes again and kills) does the recording end.  The wait is
 * bounded, so a loop stuck behind the dying thread (a runtime lock it
 * holds) delays the end by that much at most; the loop thread never waits
 * for itself.  Signals that were ignored at Initialize are left alone, and
 * a program that installs its own handler later (ASP.NET Core's host
 * cancels SIGTERM and shuts down normally) decides for itself.
 */
#ifndef CORSCOPE_FATAL_SIGNAL_H
#define CORSCOPE_FATAL_SIGNAL_H

#include <sys/types.h>

#include "common/visibility.h"

#define FATAL_SIGNAL_WAIT_NS 1000000000ull

/* Initialize: puts the handlers in place (once per process). */
HIDDEN void fatal_signal_install(void);
/* The loop, when it starts and when it is gone: whether a signal should
 * wait for it, and which thread it is (never waited for by itself). */
HIDDEN void fatal_signal_arm(pid_t loop_tid);
HIDDEN void fatal_signal_disarm(void);
/* Loop: the signal ending the process, 0 when none. */
HIDDEN int fatal_signal_signal(void);
/* Loop: the recording is finished; the signal may go on. */
HIDDEN void fatal_signal_done(void);
/* What ended_by says for a signal ("SIGABRT: the runtime aborted ..."). */
HIDDEN const char *fatal_signal_describe(int sig);

#endif
