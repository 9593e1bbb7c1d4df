/*
 * walk_step: the parts of the walker's one step from a frame to its caller
 * that differ per machine, one file each, chosen at build time (walk_x64.c,
 * walk_arm64.c), and the pieces they share with walk.c, which drives the
 * steps (walk.h): walk.c looks the pc up in the code map and steps a
 * managed frame by its shape (walk_managed_step), or any other frame
 * (walk_other_step), then puts right a return address the runtime hijacked
 * (walk_hijacked).  Everything here is async-signal-safe.
 */
#ifndef CORSCOPE_WALK_STEP_H
#define CORSCOPE_WALK_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "agent/signal/arch.h"
#include "agent/signal/mcode.h"
#include "agent/signal/walk.h"
#include "common/visibility.h"

enum walk_step { STEP_OK, STEP_BOUNDS, STEP_RULE, STEP_HIJACK };

/* A managed frame with a decoded shape (h), one step.  exact: r->pc is an
 * interrupted instruction.  Returns 0 when a read fell outside the stack. */
HIDDEN int walk_managed_step(struct walk_regs *r, uintptr_t hi, int exact,
                             const struct mcode_hit *h);
/* What a step by CFI (nativeunwind_step's answer st) came to: 1 with
 * *step (and *exact set after a signal frame) when it stepped or must
 * stop; 0 when it did not step (no CFI there, no table, pending). */
HIDDEN int walk_by_cfi(int st, int *exact, enum walk_step *step);
/* Any frame the code map has no shape for: native code by its CFI, the
 * runtime's stubs, code compiled since the map was published.  at: the
 * address looked up (r->pc, or a return address - 1); was_exact: r->pc is
 * an interrupted instruction; *exact (out): the caller's pc is one (after
 * a signal frame). */
HIDDEN enum walk_step walk_other_step(struct walk_regs *r, uintptr_t hi, uintptr_t at,
                                      int was_exact, int *exact, uint32_t *flags);
/* After a step: the caller's pc, if the runtime replaced that return
 * address to stop the thread for a GC, put back. */
HIDDEN enum walk_step walk_hijacked(struct walk_regs *r, uint32_t *flags);

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

#if defined(__aarch64__)
/* The interrupted registers of an arm64 signal frame: a handler is called
 * with SP at the kernel's rt_sigframe {siginfo (128 bytes), ucontext},
 * whose uc_mcontext (at +176, <asm/ucontext.h>) is struct sigcontext
 * {fault_address, regs[31], sp, pc, pstate}.  frame: that SP; reads only
 * in [lo, hi).  Returns 0 when they lie outside. */
NO_ASAN static inline int walk_sigcontext(uintptr_t frame, uintptr_t lo, uintptr_t hi,
                                          struct walk_regs *r)
{
    uintptr_t mc = frame + 128 + 176, pc, sp, fp, lr;
    if (!walk_read_word(mc + 8 + 8 * 32, lo, hi, &pc) ||
        !walk_read_word(mc + 8 + 8 * 31, lo, hi, &sp) ||
        !walk_read_word(mc + 8 + 8 * 29, lo, hi, &fp) ||
        !walk_read_word(mc + 8 + 8 * 30, lo, hi, &lr))
        return 0;
    r->pc = pc;
    r->sp = sp;
    r->fp = fp;
    r->lr = arch_strip_pac(lr);
    return 1;
}
#endif

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
