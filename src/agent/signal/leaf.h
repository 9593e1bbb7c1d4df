/*
 * leaf: where a JIT'd leaf method keeps its return address at the moment a
 * sample interrupted it.
 *
 * The handler walks managed code by the RBP chain.  That chain belongs to
 * the leaf only once its prologue has set RBP, and until its epilogue pops
 * it; a leaf caught before (at its first instructions), after (at `ret`),
 * or a leaf that never sets up a frame at all (small methods the JIT
 * leaves frameless) still has the caller's RBP, and a plain walk would
 * skip the caller.  Knowing the method's start, this module decodes the
 * few instruction forms CoreCLR's x64 prologues and epilogues are made of
 * (push, sub/add rsp, lea/mov rbp, pop, ret) and says whether RBP is the
 * leaf's own frame, or how far above the interrupted RSP the return
 * address is.  Runs in the collector, never in a signal handler.
 */
#ifndef CORSCOPE_LEAF_H
#define CORSCOPE_LEAF_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

enum leaf_answer {
    LEAF_OWN_FRAME,  /* RBP is the leaf's: the frame-pointer walk is right */
    LEAF_RA_AT,      /* the return address is at RSP + *offset */
    LEAF_UNKNOWN,    /* code we do not understand: leave the stack alone */
};

/* prologue: the first bytes of the method (from its start); at_pc: bytes
 * at the interrupted pc; pc_offset: pc - method start. */
HIDDEN enum leaf_answer leaf_analyze(const uint8_t *prologue, size_t prologue_len,
                                     const uint8_t *at_pc, size_t at_pc_len, size_t pc_offset,
                                     uint32_t *offset);

#endif
