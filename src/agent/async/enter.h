/*
 * enter: the native function the rewritten async methods call
 * (ilwrap.h), on their way in and on their way out.
 *
 * On the way in with the address of the home of their `this` in their
 * frame: the thread's slot (signal/achain.h) is pointed at it, and the
 * home kept in the thread's block (agent_thread.h) with those of the
 * rewritten frames further out.  On the way out, from a finally, with 0:
 * the slot goes back to the home of the next frame out, or to 0.  So the
 * slot names the innermost rewritten frame running, through synchronous
 * nesting (an async method resumed inline by another's completion) and
 * exceptions alike.  The homes live in the agent rather than in a new
 * local of each frame so that the rewrite adds nothing to CoreLib's
 * metadata (ilwrap.h says why that matters).
 *
 * Called from managed code by calli, through a GC transition or, where
 * CoreLib has a signature for it, without (CallConvSuppressGCTransition):
 * so no lock, no runtime call, nothing that blocks; it allocates only the
 * thread's block, once per thread (a thread without one, out of memory,
 * runs with no chains).
 */
#ifndef CORSCOPE_ASYNC_ENTER_H
#define CORSCOPE_ASYNC_ENTER_H

#include <stdint.h>

#include "common/visibility.h"

/* home: on the way in, where the frame keeps its object; 0 on the way
 * out.  Returns 0 (for the calli signatures that return an int). */
HIDDEN int32_t async_enter(uintptr_t home);
/* Frames entered deeper than AGENT_ASYNC_NEST (they ran with no chain). */
HIDDEN uint64_t async_enter_too_deep(void);

#endif
