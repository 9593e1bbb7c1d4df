/*
 * perf_warm: the first per-task perf_event opened on a machine where none
 * exists makes the kernel switch on its scheduler hooks for perf and wait
 * for an RCU grace period (11 to 20 ms on this project's test machine)
 * before the open returns.  The agent's first CPU clock would pay it while
 * the program runs unsampled (its recording's sampling_start_ns).  So
 * corscope record, while the program it launches gets ready (the agent
 * loads tens of milliseconds later), opens one event of its own: a
 * disabled software dummy on itself, which counts nothing and signals
 * nothing, held until the program ends, so that the agent finds the hooks
 * on.  Only when the agent will use perf_event clocks (cpu sampled by
 * signals, no --cpu-clock posix); a refusal changes nothing (the agent's
 * own open is refused too, or pays the wait as before).
 */
#ifndef CORSCOPE_PERF_WARM_H
#define CORSCOPE_PERF_WARM_H

#include "common/config.h"
#include "common/visibility.h"

/* The event's descriptor, or -1 (not wanted, or refused). */
HIDDEN int perf_warm_open(const struct config *c);
/* Closes it (nothing for -1). */
HIDDEN void perf_warm_close(int fd);

#endif
