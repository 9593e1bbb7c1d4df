/*
 * unhandled_probe: the runtime's own last call for an exception no managed
 * code catches, made to tell the agent, so that no exception callback is
 * needed to see one coming.
 *
 * Before it prints an unhandled exception and aborts, .NET 10 raises
 * AppDomain.UnhandledException by calling
 * System.AppContext.OnUnhandledException(object) on the exception's thread
 * (through an [UnmanagedCallersOnly] wrapper; .NET 8 and 9 invoke the
 * event's delegate from native code, and have no such method); an
 * exception the runtime catches itself (a static constructor's) never
 * comes there.  That method is rewritten
 * by ReJIT (RequestReJITWithInliners, inlining blocked) to call
 * unhandled_hit with the home of its argument first, the rest of its body
 * unchanged (ilwrap.h, entry only; a calli signature CoreLib has: its
 * metadata is read in place, nothing is added to it).  The runtime
 * compiles the new body only if the method is ever called: a program pays
 * the request, once, at its start.  A program may raise the event itself
 * (ExceptionHandling.RaiseAppDomainUnhandledExceptionEvent) and go on:
 * the recording then goes on too, and its close clears ended_by
 * (unhandled.h), as for an exception the runtime caught after all.
 *
 * The runtime's exception callbacks (COR_PRF_MONITOR_EXCEPTIONS), which
 * unhandled.h otherwise reads, cost a program about 0.7 us an exception
 * thrown, every frame of each throw calling the agent (docs/performance.md:
 * 6.9% of a program throwing 100,000 times a CPU-second); with the probe
 * in place a recording takes them only when a source asks.  Where it
 * cannot be put in (.NET 8 and 9; no ReJIT: --async=off, an attach; no
 * usable calli signature, the method not found, the ReJIT refused or
 * failed) those callbacks are on instead: from the start where that is
 * known then (unhandled_probe_usable), else turned on by the loop.
 *
 * All but unhandled_probe_parameters and unhandled_probe_failed (any
 * thread, the runtime's ReJIT callbacks) run on the loop thread.
 */
#ifndef CORSCOPE_UNHANDLED_PROBE_H
#define CORSCOPE_UNHANDLED_PROBE_H

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* The runtime's major version from which it calls
 * AppContext.OnUnhandledException (8 and 9 raise the event from native
 * code: no managed method is called for every unhandled exception). */
#define UNHANDLED_PROBE_RUNTIME_MIN 10

enum unhandled_probe_state {
    UNHANDLED_PROBE_WAITING, /* CoreLib is not loaded yet */
    UNHANDLED_PROBE_ON,      /* asked for (a failure may still come: ReJITError) */
    UNHANDLED_PROBE_OFF,     /* cannot be: the callbacks must do it (logged) */
};

/* Can the probe be put in: ReJIT among the event mask's bits (which the
 * probe never asks for alone: the async source does by default, and watch),
 * a runtime that calls the method (runtime_major, 0 unknown). */
HIDDEN int unhandled_probe_usable(DWORD mask, int runtime_major);
/* Loop, each cycle: puts the probe in once CoreLib is loaded (then
 * unhandled_probed(1)); returns the state (OFF at once when not usable). */
HIDDEN enum unhandled_probe_state unhandled_probe_update(ICorProfilerInfo15 *info, DWORD mask,
                                                         int runtime_major);
/* GetReJITParameters: the new body for (module, method); S_OK, or E_FAIL
 * for a method not the probe's. */
HIDDEN HRESULT unhandled_probe_parameters(ModuleID module, mdMethodDef method,
                                          ICorProfilerFunctionControl *control);
/* ReJITError: the runtime could not rewrite it (the state turns OFF, the
 * passes' rule is back). */
HIDDEN void unhandled_probe_failed(ModuleID module, mdMethodDef method, HRESULT status);
/* Loop, at a detach: the original method back (when it was rewritten);
 * the next session decides again. */
HIDDEN void unhandled_probe_revert(ICorProfilerInfo15 *info);

#endif
