/*
 * walk: the stack walker, one step at a time from a set of registers up to
 * the thread's first frame, async-signal-safe.  The signal handler walks
 * the interrupted thread with it; a callback walks its own thread with
 * walk_self (an allocation, a throw, a contended lock: the stack of the
 * thread where it happened, mixed frames as for CPU samples).
 *
 * Each step: native code with DWARF CFI through its module's unwind table
 * (nativeunwind.h); anything else by the RBP chain.  Every read is checked
 * against [sp, hi), the thread's stack, and every step must move up the
 * stack, so a walk gone wrong stops instead of faulting or looping.
 */
#ifndef CORSCOPE_WALK_H
#define CORSCOPE_WALK_H

#include <stdint.h>

#include "common/visibility.h"

enum walk_flags {
    WALK_TRUNCATED = 1u << 0,   /* stopped at the depth limit */
    WALK_LEAF_CFI = 1u << 1,    /* the first frame was unwound by CFI: exact */
    WALK_NO_STACK = 1u << 2,    /* the stack pointer was in no known mapping */
    WALK_STOP_BOUNDS = 1u << 3, /* the walk left the stack or made no progress */
    WALK_STOP_RULE = 1u << 4,   /* a CFI rule we cannot follow */
};
#define WALK_FAILED (WALK_NO_STACK | WALK_STOP_BOUNDS | WALK_STOP_RULE)

struct walk_regs {
    uintptr_t pc, sp, fp;
};

/* Receives the index-th instruction pointer (leaf first). */
typedef void (*walk_put)(void *ctx, uint64_t index, uint64_t pc);

/* Walks from `regs` (pc exact: an interrupted or current instruction), never
 * reading outside [regs->sp, hi); hi == 0 means the stack is unknown and only
 * the first frame is given.  Puts at most `max` pcs; returns how many, and
 * ORs enum walk_flags into *flags. */
HIDDEN uint64_t walk_stack(struct walk_regs regs, uintptr_t hi, uint64_t max, walk_put put,
                           void *ctx, uint32_t *flags);

/* The calling thread's own stack, from the caller of walk_self, into ips
 * (at most max).  stack_hi: the top of the thread's stack.  Returns the
 * depth; *flags as walk_stack. */
HIDDEN uint64_t walk_self(uintptr_t stack_hi, uint64_t *ips, uint64_t max, uint32_t *flags);

#endif
