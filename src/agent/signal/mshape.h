/*
 * mshape: how a managed function's frame is laid out at each of its
 * instructions, and the one step from such a frame to its caller.
 *
 * CoreCLR's code has no DWARF CFI.  About a quarter of optimized JIT code,
 * most of CoreLib's ReadyToRun code and [UnmanagedCallersOnly] methods
 * never set RBP: stepping them by the frame-pointer chain silently skips
 * their caller.  Their frames are simple, though (x64, both the JIT and
 * crossgen2): a prologue of pushes, one allocation (sub rsp, push rax, or a
 * stack probe ending in mov rsp,r11) and perhaps lea/mov rbp; a body that
 * never moves RSP (fixed outgoing-argument area) unless it set RBP; and
 * epilogues of add rsp or lea rsp,[rbp+d], pops, then ret or a tail jump.
 *
 * A shape is that prologue as steps: after the instruction ending at
 * offset end[k], RSP lies depth[k] bytes below the return address slot.
 * It comes from the code itself (mshape_from_code: the JIT's prologue
 * bytes) or from the function's Windows-x64 unwind codes (mshape_from_unwind:
 * ReadyToRun images carry them).  mshape_step then unwinds one frame:
 *   - in a prologue (an interrupted leaf, or the return address of the
 *     stack probe), by the steps done so far;
 *   - in the body, from RBP when the prologue set it (this also takes a
 *     funclet, which runs on its parent's RBP, to its parent's caller: the
 *     logical stack), else from RSP plus the frame's depth;
 *   - in an epilogue (an interrupted leaf only), by decoding the rest of
 *     the epilogue forward from pc, as the runtime's own unwinder does.
 * Everything here is pure and async-signal-safe; stack reads are bounded.
 */
#ifndef CORSCOPE_MSHAPE_H
#define CORSCOPE_MSHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

#define MSHAPE_STEPS 12

enum mshape_flag {
    MSHAPE_FP = 1u << 0,  /* the prologue sets RBP: the body's frame hangs off it */
    MSHAPE_OSR = 1u << 1, /* on-stack-replaced code: its return address is the tier-0
                           * frame's call of the patchpoint helper */
};

struct mshape {
    uint32_t depth[MSHAPE_STEPS]; /* after step k: bytes from RSP up to the return address slot */
    uint16_t end[MSHAPE_STEPS];   /* offset from the function start at which step k is done */
    uint8_t nsteps;
    uint8_t fp_step;   /* 1 + the step that sets RBP, 0: none */
    uint8_t rbp_step;  /* 1 + the step that saves the caller's RBP, 0: none */
    uint8_t flags;     /* enum mshape_flag */
    int32_t fp_to_ra;  /* once RBP is set: the return address slot is at RBP + fp_to_ra */
    uint32_t rbp_save; /* the caller's RBP is saved at (return address slot - rbp_save) */
};

/* Decodes the prologue at the start of a JIT-compiled function (n bytes of
 * its code).  Returns 0, or -1 when the code is not a prologue this module
 * knows. */
HIDDEN int mshape_from_code(const uint8_t *code, size_t n, struct mshape *s);

/* Decodes a Windows-x64 UNWIND_INFO (n bytes readable from ui).  Returns
 * 0, or -1 (a version, flag or code not supported: chained entries,
 * machine frames, a frame register other than RBP). */
HIDDEN int mshape_from_unwind(const uint8_t *ui, size_t n, struct mshape *s);

/* The rest of an epilogue, decoded forward from an interrupted pc. */
struct mshape_epilogue {
    int found;       /* the bytes at pc are (the rest of) an epilogue */
    int lea_rbp;     /* it starts with lea rsp,[rbp+disp] */
    int32_t adjust;  /* add rsp (or the lea's disp) */
    uint8_t pops;    /* pops before the ret or jump */
    int8_t rbp_pop;  /* index of pop rbp among them, -1: none */
};

/* code: the bytes at pc (n of them, within the function); lo, hi: the
 * function's range, for the rule that a jump out of it is a tail call. */
HIDDEN void mshape_epilogue(const uint8_t *code, size_t n, uintptr_t pc, uintptr_t lo,
                            uintptr_t hi, struct mshape_epilogue *e);

/* Where the function is, for one step. */
struct mshape_where {
    uintptr_t fn_start;   /* where the prologue is; 0: pc's part has none (cold code) */
    uintptr_t lo, hi;     /* the code range holding pc */
    const uint8_t *code;  /* leaf only: the bytes from pc - 1 (NULL: do not look) */
    size_t code_len;      /* bytes readable from code */
};

enum mshape_status {
    MSHAPE_OK,
    MSHAPE_BOUNDS, /* a read fell outside [lo, hi) of the stack */
    MSHAPE_OSR_PSEUDO, /* stepped an OSR frame to its pseudo return address: the
                        * tier-0 frame of the same call is next (see walk.c) */
};

/* One step from a frame of shape s: *pc, *sp, *fp become the caller's.
 * leaf: pc is an interrupted instruction (not a return address).  Stack
 * reads only in [lo, hi). */
HIDDEN enum mshape_status mshape_step(const struct mshape *s, const struct mshape_where *w,
                                      int leaf, uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
                                      uintptr_t lo, uintptr_t hi);

/* The depth of the body (all steps done). */
HIDDEN uint32_t mshape_body_depth(const struct mshape *s);

#endif
