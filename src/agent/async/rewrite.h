/*
 * rewrite: the runtime methods through which async code is resumed, made
 * to publish what they run (ilwrap.h, signal/achain.h), by ReJIT.
 *
 *   AsyncTaskMethodBuilder<T>.AsyncStateMachineBox<TSM>.MoveNext(Thread)
 *       every async Task, Task<T>, ValueTask, ValueTask<T> and async void
 *       method after its first yield (the thread pool, a completed
 *       awaitable's continuation, a timer, a synchronization context all
 *       call it); `this` is the box, a Task whose StateMachine is the
 *       method's state machine
 *   PoolingAsyncValueTaskMethodBuilder<T>.StateMachineBox<TSM>.MoveNext()
 *       the same for methods built with [AsyncMethodBuilder(typeof(
 *       PoolingAsyncValueTaskMethodBuilder))]
 *   Task.ExecuteWithThreadLocal(ref Task, Thread)
 *       a task's delegate (Task.Run, StartNew, ContinueWith): `this` is
 *       the task, which its awaiters are continuations of
 *
 * All three are in System.Private.CoreLib, which is ReadyToRun-compiled:
 * RequestReJITWithInliners (COR_PRF_REJIT_BLOCK_INLINING) replaces their
 * code, precompiled or not, for every instantiation present and to come,
 * and the code of methods that inlined them; it works the same after an
 * attach.  The request waits for the first state machine box (an async
 * method that yielded): the ReJIT costs a process a few milliseconds of
 * CPU (docs/performance.md), which a program that never yields should not
 * pay.  The new bodies are made on the loop before the request, from
 * CoreLib's metadata read in place (mdplace.h), adding nothing to it
 * (ilwrap.h), and handed over in GetReJITParameters, which may come on
 * any thread.  The methods are put back (RequestRevert) when the agent
 * detaches.
 */
#ifndef CORSCOPE_ASYNC_REWRITE_H
#define CORSCOPE_ASYNC_REWRITE_H

#include "agent/async/ilwrap.h"
#include "clr/clr_interfaces.h"
#include "common/pdb/meta.h"
#include "common/visibility.h"

/* Loop: is this module System.Private.CoreLib? */
HIDDEN int rewrite_is_corelib(ICorProfilerInfo15 *info, ModuleID module);
/* CoreLib among the modules loaded so far (the runtime's list), 0 when it
 * is not there yet. */
HIDDEN ModuleID rewrite_find_corelib(ICorProfilerInfo15 *info);
/* Loop: the state machine boxes' types (the targets' owners that exist
 * only once an async method has yielded), at most `room` into `out`,
 * read in place.  Returns how many were found. */
HIDDEN size_t rewrite_box_types(ICorProfilerInfo15 *info, ModuleID corelib, mdTypeDef *out,
                                size_t room);
/* The calli signature a rewrite of CoreLib uses: the best one CoreLib has
 * for an unmanaged call (ilwrap_calli_fits), read in place (md).  Returns
 * 1 and fills *best (its token too), or 0 when it has none. */
HIDDEN int rewrite_find_calli(const struct md *md, struct ilwrap_calli *best);
/* Loop: a method rewritten to call fn at its entry (and, unless
 * entry_only, from a finally around its body: ilwrap.h) through calli:
 * *body (the caller's to keep) and *size.  0, or -1 with the reason in
 * why. */
HIDDEN int rewrite_wrap(ICorProfilerInfo15 *info, ModuleID module, mdMethodDef method,
                        const struct ilwrap_calli *calli, uint64_t fn, int entry_only,
                        uint8_t **body, size_t *size, char *why, size_t why_size);
/* Loop: makes the new bodies and asks for the ReJIT (once per agent run).
 * Returns how many methods were asked for (0: none could be; logged). */
HIDDEN int rewrite_request(ICorProfilerInfo15 *info, ModuleID corelib);
/* GetReJITParameters (any thread): hands over the body made for
 * (module, method).  Returns S_OK, or E_FAIL for a method not ours. */
HIDDEN HRESULT rewrite_parameters(ModuleID module, mdMethodDef method,
                                  ICorProfilerFunctionControl *control);
/* Methods the runtime said it could not rejit (ReJITError), counted. */
HIDDEN void rewrite_failed(ModuleID module, mdMethodDef method, HRESULT status);
/* Loop, at a detach: puts the original methods back. */
HIDDEN void rewrite_revert(ICorProfilerInfo15 *info);
/* Loop: how many methods run rewritten (asked for and not failed). */
HIDDEN int rewrite_active(void);

#endif
