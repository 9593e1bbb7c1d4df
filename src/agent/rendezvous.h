/*
 * rendezvous: how an agent that could not detach takes the next session.
 *
 * After a watch has rejitted methods, the runtime refuses
 * RequestProfilerDetach (CORPROF_E_IRREVERSIBLE_INSTRUMENTATION_PRESENT),
 * and while our library is its profiler it refuses every new
 * AttachProfiler (one profiler at a time).  So the dormant agent itself
 * listens for the next `corscope watch -p`, on a socket of its own beside
 * the runtime's diagnostics socket: TMPDIR (or /tmp) /corscope-agent-PID,
 * PID as the process knows itself (corscope reaches the file through
 * /proc/PID/root, in a container too).
 *
 * One message per connection: the settings, the text InitializeForAttach
 * takes in its client data (config_to_text), with the new session's
 * control address.  The answer, one message: "ok" (the agent now
 * connects to that address and runs the session as after an attach:
 * lifecycle_resume), "busy" (a session runs), or "no REASON".
 *
 * Only the process's own user (or root) may ask: the socket is made 0600
 * between bind and listen (no connect can succeed before listen), and
 * each peer's SO_PEERCRED uid is checked again.  corscope checks the file
 * before it connects (a socket, of the process's uid, 0600).  The thread
 * (named corscope-idle) runs from the first dormancy until Shutdown, which
 * stops it and removes the file; it blocks every signal and never runs
 * managed code.
 */
#ifndef CORSCOPE_RENDEZVOUS_H
#define CORSCOPE_RENDEZVOUS_H

#include <stddef.h>

#include "agent/agent.h"
#include "common/config.h"
#include "common/visibility.h"

#define RENDEZVOUS_PREFIX "corscope-agent-"

/* take(a, cfg, why): starts the session cfg asks for; 0, or -1 with why
 * (then the agent stays dormant and listening). */
typedef int (*rendezvous_take_fn)(struct agent *a, const struct config *cfg, char *why,
                                  size_t why_size);

/* The loop, as it goes dormant: listens (the first time: makes the socket
 * and starts the thread) and takes the next session.  Returns 0, or -1
 * (logged: no further session can come). */
HIDDEN int rendezvous_listen(struct agent *a, rendezvous_take_fn take);
/* Shutdown: stops the thread (waiting for a session it is starting) and
 * removes the socket.  Nothing when it never listened. */
HIDDEN void rendezvous_close(void);

#endif
