/*
 * codemap: which managed method owns a code address, without asking the
 * runtime each time, and the rules that keep the agent away from runtime
 * ids that are about to be freed.
 *
 * The JIT callbacks report every compiled method (codemap_jitted, on the
 * compiling thread): its code ranges are read there and then (every code
 * version, tier 0 and tier 1 alike, hot and cold parts), and a method that
 * can be unloaded (a DynamicMethod, or one of a collectible assembly) is
 * described right away too, while its ids are certainly valid, so the
 * agent never has to ask the runtime about it again.  The loop also adds
 * the ranges of methods it found with GetFunctionFromIP (ReadyToRun code,
 * which is never JIT-compiled).  When code is unloaded the unload callback
 * queues a "forget" behind everything reported before it (codemap_unloading,
 * never waiting for anything but a short lock); the loop applies the queue
 * in order, recording everything sampled so far before each forget.
 *
 * The ranges are kept in the loop's index (code_index.h) and in the
 * signal handler's (signal/mcode.h); this module decides what goes in and
 * when it leaves, and when the runtime may be asked about an id.
 *
 * All but codemap_jitted, codemap_rejitted and codemap_unloading run on the
 * loop thread.
 */
#ifndef CORSCOPE_CODEMAP_H
#define CORSCOPE_CODEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "agent/code_index.h"
#include "agent/names.h"
#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* out: the recording, which codemap_ids_begin holds from writing while
 * the ids lock is held (may be NULL in tests). */
HIDDEN void codemap_init(ICorProfilerInfo15 *info, int info_version, struct recorder *out);
HIDDEN void codemap_shutdown(void);

/* Any thread (JIT callbacks): a method was compiled (or its code changed). */
HIDDEN void codemap_jitted(FunctionID function, int dynamic);
/* A ReJIT version's code (ReJITCompilationFinished), as codemap_jitted. */
HIDDEN void codemap_rejitted(FunctionID function, ReJITID rejit);
/* Any thread (ModuleLoadFinished): a module was loaded; when it cannot be
 * unloaded, its image's addresses (ReadyToRun code) are permanent: the
 * runtime may be asked about them at any time.  Returns 1 when the module
 * stays (neither collectible nor dynamic), 0 when it may go or cannot be
 * told. */
HIDDEN int codemap_module_loaded(ModuleID module);
/* Any thread (unload callbacks): the runtime is about to free a dynamic
 * method (function != 0) or a module (module != 0) and reuse its ids. */
HIDDEN void codemap_unloading(ModuleID module, FunctionID function);
/* The suspending thread (RuntimeSuspendStarted with reason
 * COR_PRF_SUSPEND_FOR_APPDOMAIN_SHUTDOWN, then the RuntimeResumeStarted
 * after it; any other resume is ignored at the cost of one atomic load).
 * A collectible module's code goes in steps (LoaderAllocator::
 * GCLoaderAllocators): its modules are deleted (ModuleUnloadStarted), the
 * runtime suspends itself for that reason to take the code out of its
 * lists, resumes, and only then frees the MethodDescs.  From the module's
 * unload to that resume, any list (EnumJITedFunctions2, GetFunctionFromIP)
 * may still hand out ids of the going code that are freed soon after:
 * every question is refused meanwhile, and ids obtained before the resume
 * count as stale after it.  (A reused ModuleID is what ModuleUnloadStarted
 * alone guarded; an attach's catch-up that listed the going code crashed
 * in GetFunctionInfo2 under the attach stress of tests/stress.) */
HIDDEN void codemap_unload_suspension(int begins);
/* Loop: brackets runtime calls about ids seen at `seen_ns` (CLOCK_MONOTONIC:
 * when a sample was taken).  Returns 1, holding the ids lock until
 * codemap_ids_end, when no unload was announced since then: no id can be
 * freed meanwhile, since an unload callback takes the lock first.  Returns
 * 0 (no lock held) when one was: ids seen then may be gone, do not ask.
 * The lock is held for one method's questions at a time, never across I/O
 * (the recording is held from writing meanwhile: recorder_hold), so an
 * unload callback waits microseconds at most, whatever the disk does. */
HIDDEN int codemap_ids_begin(uint64_t seen_ns);
HIDDEN void codemap_ids_end(void);
/* Was an unload announced at or after `ns`, or is one under way? */
HIDDEN int codemap_unloaded_since(uint64_t ns);

/* Loop, after an attach (the JIT callbacks missed everything compiled
 * before it): queues every module's image (EnumModules) and every method's
 * code (EnumJITedFunctions2) as if they had just been reported.  ReadyToRun
 * code is not listed; the resolver finds it with GetFunctionFromIP inside
 * the images.  Ids are asked about only while no unload was announced
 * since they were listed; an unload meanwhile starts the lists again (at
 * most three times; what is left is named the way unknown addresses are).
 * Returns the methods queued. */
HIDDEN size_t codemap_catch_up(void);
/* Loop: applies what the callbacks queued, in order.  Before a forget it
 * calls before_forget(ctx, t), which must record everything taken before
 * the unload's time t (and nothing after it: the code of methods compiled
 * since may not be applied yet); named methods get their frames through
 * names.  Returns the time up to which the map is now complete: every
 * method that ran before it was reported and applied. */
HIDDEN uint64_t codemap_update(struct names *names, void (*before_forget)(void *ctx, uint64_t t),
                               void *ctx);
/* Loop, within codemap_ids_begin/end: adds every range of a function
 * learned another way (ReadyToRun code found by GetFunctionFromIP). */
HIDDEN void codemap_add_function(FunctionID function);
/* Loop: does address lie in the image of a module that is never unloaded? */
HIDDEN int codemap_in_permanent_image(uintptr_t address);
/* Loop: is this a function whose ids are never freed (as far as the JIT
 * callbacks and GetFunctionFromIP told)?  Such a function may be asked
 * about at any time, without codemap_ids_begin. */
HIDDEN int codemap_permanent(FunctionID function);
/* Loop: nothing more is wanted (the recording failed): the callbacks
 * stop queuing, and what they queued is dropped.  For good. */
HIDDEN void codemap_stop(void);
/* Compiled methods the callbacks did not queue because the loop had not
 * taken the queue for too long (its byte budget). */
HIDDEN uint64_t codemap_refused(void);
/* Loop: how many queued items (methods, images, unloads) codemap_update
 * has applied so far. */
HIDDEN uint64_t codemap_applied(void);

/* Removes the ranges of code that can be unloaded (not permanent): of a
 * module, or of a DynamicMethod (tests and benchmarks: what an unload
 * does). */
HIDDEN void codemap_remove(ModuleID module, FunctionID function);

#endif
