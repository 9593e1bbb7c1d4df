/*
 * lifecycle: the agent's start-up, attach and end, behind the callbacks
 * that ask for them (profiler.c).
 *
 * Start-up (Initialize, or InitializeForAttach for a process that is
 * already running, with the settings from the attach's client data,
 * config_to_text): a bad value, a runtime that is too old, or an output
 * that cannot be opened makes it log one line and return a failure, and
 * the runtime then runs the program without us.  Otherwise it takes the
 * highest ICorProfilerInfo offered, sets up the core's tables (the signal
 * handler's, the code map, the event queues), lets the sources claim their
 * event-mask bits, sets the mask (cut to what the runtime allows after an
 * attach), opens the recording, removes corscope's variables from the
 * program's environment (so the program sees what it would see without
 * us), and starts the loop (agent.h).
 *
 * After an attach, ProfilerAttachComplete registers the threads that were
 * already there (the code compiled before is listed by the loop,
 * attach.h).  When the corscope command asks (or goes away), the loop
 * closes the recording and asks the runtime to detach;
 * ProfilerDetachSucceeded joins the loop and frees the rest.  The library
 * stays loaded after that (it is linked with -z nodelete, so a late signal
 * still finds its handler), with its globals: every start-up starts them
 * again.  Shutdown stops the loop and closes the recording.
 */
#ifndef CORSCOPE_LIFECYCLE_H
#define CORSCOPE_LIFECYCLE_H

#include <sys/types.h>

#include "agent/agent.h"
#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* Initialize and InitializeForAttach, the settings in a->cfg: returns S_OK
 * with *initialized set (before the last log line, as the loop runs
 * already) and *labels saying whether the callbacks follow what threads
 * do (callback_activity.h), or a failure (logged) with nothing of ours
 * left active. */
HIDDEN HRESULT lifecycle_start(struct agent *a, IUnknown *unk, int *labels, int *initialized);
/* ProfilerAttachComplete: registers the managed threads that were
 * running, calling adopted(ctx, ...) for each (its OS tid, 0 when not
 * known), and lets the loop list the code compiled before. */
HIDDEN void lifecycle_attach_complete(struct agent *a,
                                      void (*adopted)(void *ctx, ThreadID thread, pid_t tid),
                                      void *ctx);
/* The rendezvous thread, the agent dormant (the runtime refused to let
 * it detach, attach.h): starts a new attached session with cfg, as
 * InitializeForAttach would have, in the agent that is there: the
 * control line to cfg->control, the recording corscope sends, the sources
 * afresh, the event mask, the loop.  Returns 0, or -1 with why (the agent
 * stays dormant). */
HIDDEN int lifecycle_resume(struct agent *a, const struct config *cfg, char *why,
                            size_t why_size);
/* ProfilerDetachSucceeded and Shutdown: stop the loop and free what the
 * loop and the callbacks shared.  Return 0, or -1 when the loop would not
 * stop (then nothing is freed: the agent must never be). */
HIDDEN int lifecycle_detached(struct agent *a);
HIDDEN int lifecycle_shutdown(struct agent *a);

#endif
