/*
 * eventpipe: the one in-process EventPipe session every source shares.
 *
 * Several sources want the runtime's events (allocation samples, lock
 * contention, the tier of a compiled method ...).  Each says which in its
 * init (eventpipe_want); after every source's init, Initialize starts one
 * session with all of them (it costs microseconds there, tens of
 * milliseconds later).  The runtime then calls EventPipeEventDelivered
 * synchronously on the thread that raised the event, inside the code that
 * raised it (often in cooperative mode: a GC waits while the callback
 * runs), with no stack and no thread id: a source's hook must be quick,
 * take the thread's own stack itself if it needs one (evq.h), and never
 * wait.  The payloads of the runtime's own events carry no metadata: each
 * source knows the layouts it reads (docs/events.md) and checks sizes.
 */
#ifndef CORSCOPE_EVENTPIPE_H
#define CORSCOPE_EVENTPIPE_H

#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* The runtime's provider, the one most sources read. */
#define EVENTPIPE_RUNTIME "Microsoft-Windows-DotNETRuntime"

/* Initialize (a source's init): events of `provider` with any of
 * `keywords`, at `level` (0 LogAlways .. 5 Verbose) or below.  Returns 0,
 * or -1 when too many providers were asked for. */
HIDDEN int eventpipe_want(const char *provider, uint64_t keywords, uint32_t level);
/* Initialize, after every source's init: starts the session when anything
 * was asked for.  Returns 0, or -1 (logged) when the runtime refused. */
HIDDEN int eventpipe_start(ICorProfilerInfo15 *info, int info_version);
/* Shutdown (or detach): stops the session; no event is delivered after. */
HIDDEN void eventpipe_stop(ICorProfilerInfo15 *info);
/* Any thread (a hook): is this the runtime's own provider? */
HIDDEN int eventpipe_is_runtime(ICorProfilerInfo15 *info, EVENTPIPE_PROVIDER provider);

#endif
