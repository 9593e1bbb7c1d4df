/*
 * repair: the frames a frame-pointer walk gets wrong at the leaf, put
 * right from what the signal handler copied (the interrupted RSP and RBP
 * and the top words of the stack), on the loop thread.
 *
 * A managed leaf caught before its prologue set RBP, after its epilogue
 * popped it, or one the JIT left without a frame, still has its caller's
 * RBP: a plain walk skips the caller.  The leaf's code (leaf.h) says where
 * its return address is.  A leaf running on-stack-replaced (OSR) code sits
 * below its tier-0 frame and saved the frame pointer of the tier-0 frame's
 * caller: the walk skips that caller, which is found in the tier-0 frame.
 */
#ifndef CORSCOPE_REPAIR_H
#define CORSCOPE_REPAIR_H

#include <stdint.h>

#include "agent/codemap.h"
#include "common/visibility.h"

HIDDEN void repair_init(void);
HIDDEN void repair_free(void);
/* Code may have been unloaded: forget what was learnt per address. */
HIDDEN void repair_forget(void);

/* The return address a managed leaf has not (or no longer) framed, from
 * the words copied off the top of its stack; 0 when the walk was right. */
HIDDEN uintptr_t repair_leaf_caller(const struct code_range *range, uintptr_t pc,
                                    const uint64_t *top, uint32_t top_words);
/* For a leaf running OSR code: the caller's return address, to stand for
 * the tier-0 frame (the same call of the same method); 0 otherwise.
 * rsp, rbp: the interrupted registers. */
HIDDEN uintptr_t repair_osr_leaf_caller(uint64_t rsp, uint64_t rbp, const uint64_t *top,
                                        uint32_t top_words, const uint64_t *ips, uint32_t depth);
/* Is ips[k + 1] the pseudo return address of an OSR method's frame (the
 * same call again, in its tier-0 frame)? */
HIDDEN int repair_osr_pseudo_frame(const uint64_t *ips, uint32_t k);

#endif
