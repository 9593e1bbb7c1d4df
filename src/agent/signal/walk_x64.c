/*
 * walk_x64: the walker's step on x86-64 (walk_step.h): managed frames by
 * their shape (mshape.h), native ones by CFI, the runtime's frameless stubs
 * by the return address on top of the stack, the hijack stub's slot put
 * right, anything else by the RBP chain.
 */
#include "agent/signal/walk_step.h"

#include <string.h>

#include "agent/signal/hijack.h"
#include "agent/signal/mcode.h"
#include "agent/signal/mshape.h"
#include "agent/signal/nativeunwind.h"

/* b: the 7 bytes before a return address.  Does a call end there? */
static int call_before(const uint8_t *b)
{
    if (b[2] == 0xE8)
        return 1; /* call rel32 */
    if (b[5] == 0xFF && ((b[6] & 0xF8) == 0xD0 ||
                         ((b[6] & 0xF8) == 0x10 && (b[6] & 7) != 4 && (b[6] & 7) != 5)))
        return 1; /* call reg, call [reg] */
    if (b[4] == 0xFF && (((b[5] & 0xF8) == 0x50 && (b[5] & 7) != 4) || b[5] == 0x14))
        return 1; /* call [reg+disp8], call [sib] */
    if (b[3] == 0xFF && b[4] == 0x54)
        return 1; /* call [sib+disp8] */
    if (b[1] == 0xFF && (b[2] == 0x15 || ((b[2] & 0xF8) == 0x90 && (b[2] & 7) != 4)))
        return 1; /* call [rip+disp32], call [reg+disp32] */
    return b[0] == 0xFF && b[1] == 0x94; /* call [sib+disp32] */
}

/* A return address: in known code, right after a call (or the signal
 * trampoline, where the kernel sends a signal handler back to). */
static int is_return_address(uintptr_t ra)
{
    if (ra < 8 || !walk_known_at(ra - 1))
        return 0;
    if (nativeunwind_is_sigreturn(ra))
        return 1;
    uint8_t b[8] = {0};
    int r = walk_read_code(ra - 7, b, 7);
    return r < 0 || (r > 0 && call_before(b));
}

/* A managed frame, by its shape. */
NO_ASAN int walk_managed_step(struct walk_regs *r, uintptr_t hi, int exact,
                              const struct mcode_hit *h)
{
    struct mshape_where w = {h->fn_start, h->lo, h->hi, NULL, 0};
    uint8_t code[40];
    if (exact && r->pc > h->lo) {
        /* the code at an interrupted pc is running: its bytes are there */
        size_t n = h->hi - (r->pc - 1) < sizeof code ? h->hi - (r->pc - 1) : sizeof code;
        memcpy(code, (const void *)(r->pc - 1), n);
        w.code = code;
        w.code_len = n;
    }
    uintptr_t lo = r->sp;
    enum mshape_status st = mshape_step(&h->shape, &w, exact, &r->pc, &r->sp, &r->fp, lo, hi);
    if (st == MSHAPE_BOUNDS)
        return 0;
    if (st == MSHAPE_OSR_PSEUDO) {
        /* the pseudo return address is the tier-0 frame's call of the
         * patchpoint helper; that frame, with its prologue done, lies at
         * the new RSP: the real caller is above it */
        struct mcode_hit t0;
        enum mcode_found f = mcode_find(r->pc - 1, &t0);
        if (f == MCODE_NONE)
            f = mcode_find_fresh(r->pc - 1, &t0);
        if (f == MCODE_FOUND && (t0.shape.flags & MSHAPE_FP) &&
            !(t0.shape.flags & MSHAPE_OSR)) {
            uintptr_t slot = r->sp + mshape_body_depth(&t0.shape), ret, fp = r->fp;
            if (!walk_read_word(slot, lo, hi, &ret) ||
                (t0.shape.rbp_step && !walk_read_word(slot - t0.shape.rbp_save, lo, hi, &fp)))
                return 0;
            r->pc = ret;
            r->sp = slot + 8;
            r->fp = fp;
        }
    }
    return 1;
}

NO_ASAN enum walk_step walk_other_step(struct walk_regs *r, uintptr_t hi, uintptr_t at,
                                       int was_exact, int *exact, uint32_t *flags)
{
    struct mcode_hit h;
    if (was_exact && nativeunwind_covers(r->pc) && *(const uint8_t *)r->pc == 0xC3) {
        /* at a ret (the code there is running: a library's mapped code,
         * never a faulting pc a signal frame saved), whatever the CFI says:
         * compilers often leave epilogues without CFI, so that after pop
         * rbp it still names RBP */
        uintptr_t ra;
        if (!walk_read_word(r->sp, r->sp, hi, &ra))
            return STEP_BOUNDS;
        r->pc = ra;
        r->sp += 8;
    } else {
        uintptr_t fp = r->fp, lo = r->sp;
        enum nu_status st = nativeunwind_step(&r->pc, &r->sp, &r->fp, &r->lr, lo, hi, was_exact);
        if (st == NU_PENDING) {
            *flags |= WALK_PENDING;
            st = NU_NO_CFI;
        }
        if (st == NU_OK && hijack_in_stub(at) && r->pc) {
            /* the hijack stub's CFI counts a slot too many: the real return
             * address is the one its worker wrote below the CFA (where the
             * hijacked slot was), and the stub leaves RBP alone */
            uintptr_t cfa = r->sp;
            r->sp = cfa - 8;
            r->fp = fp;
            if (!walk_read_word(cfa - 16, lo, hi, &r->pc))
                return STEP_BOUNDS;
            *flags |= WALK_HIJACKED;
            if (!hijack_is_stub(r->pc) && !walk_is_code(r->pc)) {
                /* its worker has not written it yet */
                uintptr_t real = hijack_real(r->thread, cfa - 16, walk_is_code);
                if (!real)
                    return STEP_HIJACK;
                r->pc = real;
            }
        } else if (st == NU_SIGNAL) {
            *exact = 1;
        } else if (st == NU_BOUNDS) {
            return STEP_BOUNDS;
        } else if (st == NU_RULE) {
            return STEP_RULE;
        } else if (st == NU_NO_TABLE) {
            /* a library without unwind data: not the runtime's stubs (whose
             * return address the code below looks for on top of the
             * stack), code built with frame pointers or nothing */
            *flags |= WALK_GUESSED;
            if (!walk_fp_step(r, hi))
                return STEP_BOUNDS;
        } else if (st == NU_NO_CFI && mcode_find_fresh(at, &h) == MCODE_FOUND) {
            /* code compiled since the table was last published */
            if (!walk_managed_step(r, hi, was_exact, &h))
                return STEP_BOUNDS;
        } else if (st == NU_NO_CFI) {
            /* code with no unwind data: where a sample lands in the
             * runtime's generated stubs (frameless: they jump, never call;
             * a dispatch stub may have pushed a word or two), the return
             * address is on top of the stack */
            int done = 0;
            for (uintptr_t d = 0; was_exact && !done && d <= 16; d += 8) {
                uintptr_t ra;
                if (walk_read_word(lo + d, lo, hi, &ra) && is_return_address(ra)) {
                    r->pc = ra;
                    r->sp = lo + d + 8;
                    done = 1;
                }
            }
            if (!done) {
                /* a library loaded since the objects were listed? */
                enum walk_step step;
                if (walk_by_cfi(nativeunwind_step_unlisted(&r->pc, &r->sp, &r->fp, &r->lr, lo,
                                                           hi, was_exact),
                                exact, &step))
                    return step;
                *flags |= WALK_GUESSED;
                if (!walk_fp_step(r, hi))
                    return STEP_BOUNDS;
            }
        }
    }
    return STEP_OK;
}

NO_ASAN enum walk_step walk_hijacked(struct walk_regs *r, uint32_t *flags)
{
    if (r->pc && hijack_is_stub(r->pc)) {
        /* a return address the runtime replaced to stop the thread */
        uintptr_t real = hijack_real(r->thread, r->sp - 8, walk_is_code);
        if (!real)
            return STEP_HIJACK;
        r->pc = real;
        *flags |= WALK_HIJACKED;
    }
    return STEP_OK;
}

