/*
 * mshape_arm64: how a managed function's frame is laid out at each of its
 * instructions on arm64, and the one step from such a frame to its caller
 * (mshape.h is the x86-64 counterpart).
 *
 * CoreCLR's JIT (and crossgen2, the same JIT) gives every arm64 method a
 * frame record: {caller's x29, return address} stored by one
 * stp x29, x30 and x29 pointed at it ("Temporary ARM64 force frame
 * pointer", src/coreclr/jit/lsra.cpp), so in a method's body the
 * frame-pointer chain is exact.  What needs a shape is the interrupted
 * frame (a leaf sample) while the record is not built yet or is being taken
 * down: before the stp the return address is still in x30 and x29 is the
 * caller's; between the stp and the mov x29 the record is at a known
 * depth below the caller's SP; in an epilogue (ldp x29, x30, add sp,
 * then ret or a tail branch) the state is read forward from pc, as the
 * runtime's own unwinder does.  Funclets save x29/x30 but run on their
 * parent's x29: their body is stepped from SP by the frame's depth, to
 * the runtime code that called them.
 *
 * The prologue forms decoded (the JIT's frame types 1 to 5, funclets):
 *   stp x29, x30, [sp, #-N]!      sub sp, sp, #N (lsl 12 too)
 *   stp x29, x30, [sp, #K]         stp/str other registers, [sp, #-N]! or [sp, #K]
 *   mov x29, sp / add x29, sp, #K  paciasp, pacibsp, bti, nop
 * A shape is the prologue as steps: after the instruction ending at
 * offset end[k], SP lies depth[k] bytes below the canonical frame address
 * (CFA: the caller's SP).
 *
 * Pure and async-signal-safe, built on every machine (its unit tests run
 * on the x86-64 build too); stack reads are bounded by [lo, hi).  Return
 * addresses are given as read: the caller strips pointer authentication.
 */
#ifndef CORSCOPE_MSHAPE_ARM64_H
#define CORSCOPE_MSHAPE_ARM64_H

#include <stddef.h>
#include <stdint.h>

#include "agent/signal/walk.h"
#include "common/visibility.h"

#define MSHAPE_ARM64_STEPS 8

struct mshape_arm64 {
    uint32_t depth[MSHAPE_ARM64_STEPS]; /* after step k: bytes from SP up to the CFA */
    uint16_t end[MSHAPE_ARM64_STEPS];   /* offset from the function start at which step k is done */
    uint8_t nsteps;
    uint8_t ra_step;    /* 1 + the step that saves x29/x30, 0: none */
    uint8_t fp_step;    /* 1 + the step that sets x29, 0: none (a funclet) */
    uint8_t pad;
    uint32_t ra_save;   /* x30 saved at CFA - ra_save, the caller's x29 8 bytes below */
    uint32_t fp_to_cfa; /* once x29 is set: CFA = x29 + fp_to_cfa */
};

/* Decodes the prologue at the start of a function (n bytes of its code,
 * little-endian instruction words).  Returns 0, or -1 when the code is not
 * a prologue this module knows (no frame record, or SP moved in a way it
 * cannot follow before x29 was set). */
HIDDEN int mshape_arm64_from_code(const uint8_t *code, size_t n, struct mshape_arm64 *s);

/* Where the function is, for one step. */
struct mshape_arm64_where {
    uintptr_t fn_start;  /* where the prologue is; 0: pc's part has none (cold code) */
    uintptr_t lo, hi;    /* the code range holding pc */
    const uint8_t *code; /* leaf only: the instructions at pc (NULL: do not look) */
    size_t code_len;     /* bytes readable from code */
    uint32_t before;     /* leaf only: the instruction before pc, 0: none */
};

/* The rest of an epilogue, decoded forward from an interrupted pc. */
struct mshape_arm64_epilogue {
    int found;         /* the words at pc are (the rest of) an epilogue */
    int from_fp;       /* SP is first set from x29 (mov sp, x29 / add sp, x29, #K) */
    int64_t fp_adjust; /* ... plus this */
    int64_t sp_adjust; /* then SP moves up by this */
    int record;        /* the frame record is still to be loaded ... */
    int64_t record_at; /* ... from SP (as set by from_fp) + record_at */
};

/* code: the words at pc (n bytes); lo, hi: the function's range (a branch
 * out of it, or to its start, is a tail call); before: the instruction
 * before pc, or 0 (a tail branch counts only after an epilogue's own
 * instruction: a branch to cold code is not one). */
HIDDEN void mshape_arm64_epilogue(const uint8_t *code, size_t n, uintptr_t pc, uintptr_t lo,
                                  uintptr_t hi, uint32_t before, struct mshape_arm64_epilogue *e);

/* One step from a frame of shape s: r's pc, sp, fp (and lr, consumed:
 * set to 0) become the caller's.  leaf: pc is an interrupted instruction
 * and r->lr the interrupted x30.  *ra_slot: where the return address was
 * read (0: from x30).  Returns 0, or -1 when a read falls outside [lo, hi)
 * or the return address is not known (not a leaf, and not saved yet). */
HIDDEN int mshape_arm64_step(const struct mshape_arm64 *s, const struct mshape_arm64_where *w,
                             int leaf, struct walk_regs *r, uintptr_t *ra_slot, uintptr_t lo,
                             uintptr_t hi);

/* A ReadyToRun image's arm64 RUNTIME_FUNCTION entry f = {begin, unwind}
 * (RVAs into the image mapped at `image`): the end RVA of its code.
 * unwind is packed unwind data (low two bits non-zero; the length in words
 * in bits 2..12) or the RVA of its .xdata, whose first word has the length
 * in words in bits 0..17 (read: it must be mapped). */
HIDDEN uint32_t mshape_arm64_rf_end(const uint8_t *image, const uint32_t *f);

/* Instruction classes the walker asks about. */
HIDDEN int mshape_arm64_is_call(uint32_t insn); /* bl, blr, blraa ... */
HIDDEN int mshape_arm64_is_ret(uint32_t insn);  /* ret (x30), retaa, retab */

#endif
