/*
 * il_install: hands a method body rewritten by the IL engine (agent/il) to
 * the runtime, for a method about to be compiled for the first time
 * (JITCompilationStarted): the bytes go into the module's IL allocator
 * (the runtime owns them from then on), SetILFunctionBody makes them the
 * method's IL for every later compilation (each generic instantiation,
 * tier 1, OSR), and the old-to-new offset map goes to
 * SetILInstrumentedCodeMap so that debuggers and stack traces keep the
 * original offsets.  One place for what coverage, live probes and flat
 * tracing each did by hand.  Any thread; no lock of the caller may be held
 * (these are runtime calls).
 */
#ifndef CORSCOPE_IL_INSTALL_H
#define CORSCOPE_IL_INSTALL_H

#include <stddef.h>

#include "agent/il/il.h"
#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* Installs out as the body of (module, token).  function: the method's
 * FunctionID, whose offset map is set too; 0 sets no map.  Returns 0, or -1
 * with the reason in why (no allocator, the runtime refused the body);
 * a refused map is not a failure (the method runs as rewritten). */
HIDDEN int il_install(ICorProfilerInfo15 *info, ModuleID module, mdToken token, FunctionID function,
                      const struct il_rewritten *out, char *why, size_t why_size);

#endif
