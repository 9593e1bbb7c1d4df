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
 *     ldc.i8 <address of the slot function>; conv.i
 *     calli  unmanaged native int()             (the caller's signature token)
 *     stloc  S;  ldloc S; ldind.i; stloc P;  ldarg.0; stloc B
 *     ldloc  S;  ldloca B; conv.u; stind.i
 *     .try { original body, each ret a leave to END }
 *     finally { ldloc S; ldloc P; stind.i; endfinally }
 *     END: ret
 *
 * Pure functions on bytes (no runtime calls): the method header (tiny or
 * fat), the code, and the exception sections are read, every branch is
 * re-encoded in its long form with targets moved, exception clauses are
 * moved, and a fat clause for the finally is added after the original ones
 * (an enclosing clause comes after those it encloses).  Only methods that
 * return nothing can be wrapped (a ret that leaves a value would need a
 * temporary); the caller checks the signature.  A body this code does not
 * understand (an unknown opcode, a tail call, a branch into the middle of
 * an instruction) is refused, never guessed at.
 */
#ifndef CORSCOPE_ILWRAP_H
#define CORSCOPE_ILWRAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

struct ilwrap_in {
    const uint8_t *method; /* the header, code and sections, as GetILFunctionBody gives them */
    size_t size;           /* bytes available at method (sections may end before) */
    uint32_t locals;       /* locals of the original signature (0 without one) */
    uint32_t locals_token; /* the new signature: the original locals, then native int,
                            * native int, object */
    uint32_t calli_token;  /* StandAloneSig of `native int ()`, unmanaged */
    uint64_t slot_fn;      /* the native function returning the slot's address */
};

enum ilwrap_status {
    ILWRAP_OK = 0,
    ILWRAP_MALFORMED,   /* the body is not what its header says */
    ILWRAP_UNSUPPORTED, /* an opcode or construct this rewrite does not handle */
    ILWRAP_TOO_BIG,     /* the result does not fit `cap` */
};

/* Writes the wrapped method (fat header, code, one fat EH section) into
 * out; *out_size its length.  Returns enum ilwrap_status. */
HIDDEN enum ilwrap_status ilwrap_publish(const struct ilwrap_in *in, uint8_t *out, size_t cap,
                                         size_t *out_size);

/* A local variable signature with `extra` appended: 0x07, count, the
 * original types, then each extra byte as one element type.  sig/len: the
 * original (len 0: none).  Returns the length written, 0 when malformed or
 * out too small.  *count: the original count. */
HIDDEN size_t ilwrap_locals_sig(const uint8_t *sig, size_t len, const uint8_t *extra,
                                size_t extra_len, uint8_t *out, size_t cap, uint32_t *count);

/* The byte length of the instruction at code[0] (opcode and operand),
 * 0 when the opcode is unknown or the operand runs past len. */
HIDDEN size_t ilwrap_insn_size(const uint8_t *code, size_t len);

#endif
