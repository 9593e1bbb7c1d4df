/*
 * attach: what the loop does for an agent that came into a running process
 * (InitializeForAttach) or that leaves one that goes on running: the
 * catch-up on the code compiled before it came, the status it sends the
 * corscope command, and the detach.
 *
 * The detach runs at the end of the loop thread, after the sources have
 * stopped (every clock deleted, every perf fd closed, no more signals sent)
 * and everything taken was drained: the recording is closed with its
 * trailer, the EventPipe session and the event mask are turned off, and the
 * runtime is asked to detach (RequestProfilerDetach, from this thread of
 * ours, never from a callback).  The loop thread then ends; the runtime
 * calls ProfilerDetachSucceeded once no callback is running, and that
 * joins this thread and frees the rest (profiler.c).  When the runtime
 * refuses (a profiler that set something it cannot undo), the agent stays
 * loaded and dormant: no thread, no clock, no events asked for.
 */
#ifndef CORSCOPE_ATTACH_H
#define CORSCOPE_ATTACH_H

#include "agent/agent.h"
#include "common/visibility.h"

/* Loop: lists the code compiled before an attach. */
HIDDEN void attach_catch_up(struct agent *a);
/* Loop: tells the corscope command how the recording grows. */
HIDDEN void attach_send_status(struct agent *a);
/* Loop, last: closes the recording and asks the runtime to detach; sets
 * detach_requested, or dormant when it refused. */
HIDDEN void attach_detach(struct agent *a);

#endif
