/*
 * handler: the signal handler of the signal sampler, which leaves one entry
 * (ring.h) in the interrupted thread's ring (thread_rings.h) per signal.
 *
 * The handler runs on the sampled thread, wherever it was: in managed code,
 * in the runtime, in libc, in another signal handler.  It is
 * async-signal-safe: no allocation, no lock, no runtime call, errno
 * preserved.  It finds the thread's stack mapping (its cached bounds, or
 * the published snapshot of mappings), walks the stack (walk.h) straight
 * into the ring, and adds
 * what the thread and the runtime were doing (activity.h).  A full ring
 * drops the sample and counts the drop.
 *
 * The signal may be a CPU clock's (a POSIX timer: SI_TIMER with the periods
 * it missed as overrun; a perf_event: SIGIO-style si_code with the event's
 * fd, re-armed here for one more period) or a wall-clock request sent with
 * tgkill by the collector, which leaves the weight in the thread's
 * wall_weight and gets the thread's CPU time back in the entry.
 */
#ifndef CORSCOPE_HANDLER_H
#define CORSCOPE_HANDLER_H

#include <stdint.h>

#include "common/visibility.h"

/* Installs the handler for `signal`.  Returns 0, or -1 when the program
 * already handles that signal (we do not take it over) or sigaction fails.
 * The handler stays installed for the life of the process (a pending
 * signal after shutdown must not kill it); it simply finds no thread. */
HIDDEN int handler_install(int signal);

/* The time the program's threads have spent in the handler (from its entry
 * to its return, CLOCK_MONOTONIC: it does not block) since the last call,
 * ns; what the walks cost the program, for the recording's handler_ns. */
HIDDEN uint64_t handler_take_busy_ns(void);

#endif
