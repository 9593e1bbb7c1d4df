/*
 * mcjit: see mcjit.h.  Found once, at the recording's end, so that no
 * callback pays for it: SetProfileRoot was called if its method has code,
 * as the runtime binds a method's code (ReadyToRun or compiled) at its
 * first call.  Its token comes from CoreLib's metadata read in place
 * (mdplace.h); GetFunctionFromToken fails while the method's type was
 * never loaded, i.e. when nothing touched ProfileOptimization.  The
 * whole look costs the program's exit about 50 us (measured: 43 to 57 us,
 * most of it the search of CoreLib's types by name).
 */
#include "agent/mcjit.h"

#include <sched.h>

#include "agent/async/rewrite.h"
#include "agent/mdplace.h"

int mcjit_asked(ICorProfilerInfo15 *info)
{
    /* on one CPU the runtime would not have started it either (its
     * MultiCoreJitMinNumCpus, 2): nothing was taken away */
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < 2)
        return 0;
    ModuleID corelib = rewrite_find_corelib(info);
    struct md md;
    if (!corelib || mdplace_open(info, corelib, &md) < 0)
        return 0;
    mdTypeDef type = mdplace_find_type(&md, "System.Runtime.ProfileOptimization");
    mdMethodDef method = type ? mdplace_find_method(&md, type, "SetProfileRoot", NULL, NULL) : 0;
    FunctionID function = 0;
    if (!method || info->lpVtbl->GetFunctionFromToken(info, corelib, method, &function) < 0 ||
        !function)
        return 0;
    COR_PRF_CODE_INFO part;
    ULONG32 parts = 0;
    return info->lpVtbl->GetCodeInfo2(info, function, 1, &parts, &part) >= 0 && parts > 0 &&
           part.size > 0;
}
