/*
 * codemap: which managed method owns a code address, without asking the
 * runtime each time.
 *
 * Fed from two directions: the JIT callbacks queue every compiled method
 * (codemap_note, any thread, a short lock and no runtime call), and the
 * collector adds the ranges of methods it resolved with GetFunctionFromIP
 * (ReadyToRun code, which is never JIT-compiled).  The collector turns
 * queued methods into code ranges (GetNativeCodeStartAddresses /
 * GetCodeInfo4: every code version, tier 0 and tier 1 alike) and looks up
 * addresses by binary search.  A range also gives the method's start,
 * which the leaf analysis needs.  When code is unloaded (a collectible
 * assembly or a DynamicMethod goes away) codemap_forget drops its ranges,
 * before the runtime reuses the addresses and the FunctionIDs.
 *
 * All but codemap_note run under the agent's ids_lock (agent.h).
 */
#ifndef CORSCOPE_CODEMAP_H
#define CORSCOPE_CODEMAP_H

#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

struct code_range {
    uintptr_t start, end;   /* [start, end) */
    uintptr_t method_start; /* first byte of the method's first range */
    FunctionID function;
};

/* Any thread: a method was compiled (or its code changed). */
HIDDEN void codemap_note(FunctionID function);

/* Collector. */
HIDDEN int codemap_init(ICorProfilerInfo15 *info, int info_version);
/* Turns queued methods into ranges. */
HIDDEN void codemap_update(void);
/* Drops the ranges of a function that is being unloaded, or every range
 * (function 0: a module is being unloaded). */
HIDDEN void codemap_forget(FunctionID function);
/* Adds every range of a function learned another way. */
HIDDEN void codemap_add_function(FunctionID function);
HIDDEN const struct code_range *codemap_find(uintptr_t address);
HIDDEN void codemap_shutdown(void);
HIDDEN size_t codemap_size(void);

#endif
