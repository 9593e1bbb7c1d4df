/*
 * ilwrap: one rewrite of a method body, for logical async stacks: the
 * method publishes where its `this` is for as long as it runs.
 *
 * The runtime resumes every async method through a few methods of its own
 * (the state machine box's MoveNext, the thread pool's Task.Execute...):
 * their `this` is the box or task being run.  The rewritten body gives a
 * native function of the agent (async_enter, enter.h) the address
 * of the home of its `this` in its frame, which the function puts in its
 * thread's slot, keeping the slot's earlier value, and calls it again with
 * 0 in a finally block around the whole original body, which puts that
 * value back: so the slot always names the innermost such method still
 * running on the thread.  Taking the address of `this` makes the JIT keep
 * it in the frame, a GC-reported object reference: a collection that
 * moves the object updates it, and a signal handler reading through the
 * slot finds the object where it is now.
 *
 *     ldarga.s 0; conv.u; [ldc.i4.0; conv.i]...   (entry code: home, padding)
 *     ldc.i8 <async_enter>; conv.i; calli <sig>; [pop]
 *     .try { original body, each ret a leave to END }
 *     finally { ldc.i4.0; conv.i; [ldc.i4.0; conv.i]...; ldc.i8 <async_enter>;
 *               conv.i; calli <sig>; [pop]; endfinally }
 *     END: ret
 *
 * Nothing new in the module's metadata: no local is added (the body keeps
 * its local signature), and the calli's signature is one the module
 * already has (ilwrap_calli_fits picks it): opening a module's metadata
 * for writing costs CoreLib's runtime milliseconds and slows its own
 * metadata reads for the rest of the process (docs/async.md).
 *
 * Made by the IL engine (agent/il: IL_ENTRY for the entry code,
 * il_edit_wrap for the finally) and checked by il_check; pure functions
 * on bytes (no runtime calls).  Only instance methods of classes that
 * return nothing are wrapped (the caller checks the signature).  A body
 * the engine refuses (an unknown opcode, a tail call, a jmp, a branch
 * into the middle of an instruction) is not rewritten.
 */
#ifndef CORSCOPE_ILWRAP_H
#define CORSCOPE_ILWRAP_H

#include <stddef.h>
#include <stdint.h>

#include "agent/il/il.h"
#include "common/visibility.h"

/* Most parameters of a calli signature the wrapper uses (the first gets
 * the home, the others 0). */
#define ILWRAP_MAX_PARAMS 4

/* What a calli signature of the module can carry the call as. */
struct ilwrap_calli {
    uint32_t token;   /* StandAloneSig */
    uint32_t params;  /* 1..ILWRAP_MAX_PARAMS, each pointer-sized */
    int returns;      /* an integer comes back (popped) */
    int suppress;     /* CallConvSuppressGCTransition: no GC transition around it */
};

/* Whether a StandAloneSig blob is an unmanaged call the wrapper can make
 * to async_enter: the platform's C convention (C, stdcall, or unmanaged
 * with no modifier but CallConvSuppressGCTransition, the TypeDef
 * suppress_typedef; 0: none known), 1 to ILWRAP_MAX_PARAMS parameters each
 * a native integer or a pointer, returning nothing or an integer of at
 * most a pointer's size.  Fills *out (but its token) and returns 1, or 0. */
HIDDEN int ilwrap_calli_fits(const uint8_t *blob, size_t len, uint32_t suppress_typedef,
                             struct ilwrap_calli *out);
/* Whether candidate a is the better one: no GC transition first, then
 * fewer parameters. */
HIDDEN int ilwrap_calli_better(const struct ilwrap_calli *a, const struct ilwrap_calli *b);

struct ilwrap_in {
    const uint8_t *method; /* the header, code and sections, as GetILFunctionBody gives them */
    size_t size;           /* bytes available at method (sections may end before) */
    struct ilwrap_calli calli;
    uint64_t enter_fn;     /* the native function's address (async_enter, unhandled_hit) */
    int entry_only;        /* no finally: the function hears of the entry alone */
};

/* The wrapped method, rewritten and checked, into out (free with
 * il_rewritten_free).  Returns 0, or -1 with the engine's reason in why.
 * With entry_only the body gets the entry code alone (unhandled_probe.h:
 * the home of a static method's first argument, the rest unchanged). */
HIDDEN int ilwrap_publish(const struct ilwrap_in *in, struct il_rewritten *out, char *why,
                          size_t why_size);

#endif
