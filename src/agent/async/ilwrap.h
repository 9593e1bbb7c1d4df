/*
 * ilwrap: one rewrite of a method body, for logical async stacks: the
 * method publishes where its `this` is for as long as it runs.
 *
 * The runtime resumes every async method through a few methods of its own
 * (the state machine box's MoveNext, the thread pool's Task.Execute...):
 * their `this` is the box or task being run.  The rewritten body asks a
 * native function of the agent for the address of its thread's slot (one
 * initial-exec TLS word: signal/achain.h), stores `this` in a new local,
 * points the slot at that local, and puts the slot's previous value back in
 * a finally block around the whole original body, so the slot always names
 * the innermost such method still running on the thread.  The local is a
 * GC-reported object reference in the frame: a collection that moves the
 * object updates it, and a signal handler reading through the slot finds
 * the object where it is now.
 *
 *     ldc.i8 <address of the slot function>; conv.i        (entry code)
 *     calli  unmanaged native int()             (the caller's signature token)
 *     stloc  S;  ldloc S; ldind.i; stloc P;  ldarg.0; stloc B
 *     ldloc  S;  ldloca B; conv.u; stind.i
 *     .try { original body, each ret a leave to END }
 *     finally { ldloc S; ldloc P; stind.i; endfinally }
 *     END: ret
 *
 * Made by the IL engine (agent/il: IL_ENTRY for the entry code,
 * il_edit_wrap for the finally) and checked by il_check; pure functions
 * on bytes (no runtime calls).  Only methods that return nothing are
 * wrapped (the caller checks the signature).  A body the engine refuses
 * (an unknown opcode, a tail call, a jmp, a branch into the middle of an
 * instruction) is not rewritten.
 */
#ifndef CORSCOPE_ILWRAP_H
#define CORSCOPE_ILWRAP_H

#include <stddef.h>
#include <stdint.h>

#include "agent/il/il.h"
#include "common/visibility.h"

/* The new local signature: the original's locals (sig/len; len 0: none),
 * then S and P (native int) and B (object).  Writes it into out (at most
 * cap bytes) and its length to *out_len.  Returns the index of S, or -1
 * when the original is malformed or the new one does not fit. */
HIDDEN long ilwrap_locals(const uint8_t *sig, size_t len, uint8_t *out, size_t cap,
                          size_t *out_len);

struct ilwrap_in {
    const uint8_t *method; /* the header, code and sections, as GetILFunctionBody gives them */
    size_t size;           /* bytes available at method (sections may end before) */
    uint32_t first_local;  /* S, as ilwrap_locals returned it; P and B follow */
    uint32_t locals_token; /* the signature ilwrap_locals made */
    uint32_t calli_token;  /* StandAloneSig of `native int ()`, unmanaged */
    uint64_t slot_fn;      /* the native function returning the slot's address */
};

/* The wrapped method, rewritten and checked, into out (free with
 * il_rewritten_free).  Returns 0, or -1 with the engine's reason in why. */
HIDDEN int ilwrap_publish(const struct ilwrap_in *in, struct il_rewritten *out, char *why,
                          size_t why_size);

#endif
