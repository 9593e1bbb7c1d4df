/*
 * mcjit: did the program ask for multicore JIT, which the runtime does not
 * give it while corscope watches compilations?
 *
 * ProfileOptimization.SetProfileRoot turns on the runtime's multicore JIT:
 * a background thread compiles, from a profile an earlier run wrote, the
 * methods the program is about to need, and the run writes its own profile
 * at its end.  The runtime ignores the call while a profiler has
 * COR_PRF_MONITOR_JIT_COMPILATION in its event mask
 * (MulticoreJitManager::SetProfileRoot), and corscope's code map needs that
 * bit from the program's start.  So such a program, under corscope,
 * compiles its start-up on its own threads and writes no profile: a change
 * in what it does, which the recording states (multicore_jit_off) and
 * `record` and `check` say in words.
 */
#ifndef CORSCOPE_MCJIT_H
#define CORSCOPE_MCJIT_H

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* 1 when the program called ProfileOptimization.SetProfileRoot, else 0.
 * The agent's thread, at the recording's end, while the runtime is still
 * up (not from a fatal signal's path).  Only meaningful for a profiler
 * loaded at the start: after an attach the call may have come first. */
HIDDEN int mcjit_asked(ICorProfilerInfo15 *info);

#endif
