/*
 * walk_step: the walker's one step from a frame to its caller, one file per
 * machine, chosen at build time (walk_x64.c, walk_arm64.c), and the pieces
 * they share with walk.c, which drives the steps (walk.h).  Everything here
 * is async-signal-safe.
 */
#ifndef CORSCOPE_WALK_STEP_H
#define CORSCOPE_WALK_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "agent/signal/arch.h"
#include "agent/signal/walk.h"
#include "common/visibility.h"

enum walk_step { STEP_OK, STEP_BOUNDS, STEP_RULE, STEP_HIJACK };

/* One step from r to its caller.  *exact: r->pc is an interrupted
 * instruction (in), the caller's pc is one (out: after a signal frame). */
HIDDEN enum walk_step walk_step(struct walk_regs *r, uintptr_t hi, int *exact, uint32_t *flags);

/* Reads the word at addr if [addr, addr+8) lies in [lo, hi). */
NO_ASAN static inline int walk_read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi,
                                         uintptr_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uintptr_t *)addr;
    return 1;
}

/* One step along the frame-pointer chain: the caller's return address is
 * at fp+8, its frame pointer at fp, its stack pointer fp+16 (the frame
 * record of arm64 has the same layout).  The chain must move up the
 * stack. */
NO_ASAN static inline int walk_fp_step(struct walk_regs *r, uintptr_t hi)
{
    uintptr_t ret, saved;
    if (r->fp < r->sp || !walk_read_word(r->fp + 8, r->sp, hi, &ret) ||
        !walk_read_word(r->fp, r->sp, hi, &saved))
        return 0;
    r->sp = r->fp + 16;
    r->fp = saved;
    r->pc = arch_strip_pac(ret);
    r->lr = 0;
    return 1;
}

/* Is `at` (an exact pc, or a return address - 1) in code the walker has
 * unwind data for? */
HIDDEN int walk_known_at(uintptr_t at);
/* A return address into code the walker knows. */
HIDDEN int walk_is_code(uintptr_t ra);
/* Code bytes through the kernel: code that is no longer mapped is an
 * error, not a fault.  Returns 1 read, 0 unmapped, -1 the kernel would not
 * say (then the caller decides without them). */
HIDDEN int walk_read_code(uintptr_t at, uint8_t *out, size_t n);

#endif
