/*
 * interlocked_ref: a module's metadata token of
 * System.Threading.Interlocked.Add(ref long, long), for IL that adds to a
 * counter atomically (flat tracing, sources/trace_flat.c).  In CoreLib it
 * is CoreLib's own MethodDef (found by name and signature); in any other
 * module a MemberRef made through the module's metadata emitter, on a
 * TypeRef whose scope is a new AssemblyRef to System.Private.CoreLib
 * (version 0.0.0.0, its public key token): the runtime binds that name to
 * the one CoreLib there is, whatever the module references otherwise
 * (System.Runtime does not forward Interlocked; System.Threading does, but
 * a module may not reference it).  Runtime calls: no lock of the caller
 * may be held.
 */
#ifndef CORSCOPE_TRACE_INTERLOCKED_REF_H
#define CORSCOPE_TRACE_INTERLOCKED_REF_H

#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* The token (a new one each call for another module: call once per
 * module), 0 when the metadata refused. */
HIDDEN uint32_t interlocked_add_token(ICorProfilerInfo15 *info, ModuleID module, int corelib);

#endif
