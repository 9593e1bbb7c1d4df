/*
 * walk_arm64: the walker's step on arm64 (walk_step.h).
 *
 *   - managed code: the frame's shape (mshape_arm64.h): the frame record
 *     in the body, the prologue's steps and the epilogue's rest for an
 *     interrupted frame, x30 while the record is not there;
 *   - native code with DWARF CFI (nativeunwind.h), including the kernel's
 *     signal trampoline in the vDSO; at a ret, whatever the CFI says, the
 *     return address is in x30;
 *   - a signal trampoline without CFI (a kernel without a vDSO, qemu-user's):
 *     `mov x8, #139; svc #0` (rt_sigreturn) at the return address, read
 *     through the kernel, the interrupted registers in the sigcontext
 *     above the stack pointer (qemu-user has no process_vm_readv: there
 *     the frame record the kernel pushed is followed instead, which skips
 *     the interrupted pc);
 *   - other code where the sample landed (the runtime's generated stubs:
 *     precode, dispatch stubs, thunks: leaf code that only branches): the
 *     return address is still in x30 when it is a call site in code the
 *     walker knows;
 *   - anything else: the frame-record chain, as a guess (WALK_GUESSED).
 * Every return address is stripped of its pointer-authentication code.
 *
 * Not done on arm64 (the x86-64 walker has them): return addresses the
 * runtime hijacked for a GC suspension are not put back (the stub of
 * libcoreclr.so is looked for by its x86-64 bytes only), and an
 * on-stack-replaced method is stepped by its frame record like any other.
 */
#include "agent/signal/walk_step.h"

#include <string.h>

#include "agent/signal/mcode.h"
#include "agent/signal/mshape_arm64.h"
#include "agent/signal/nativeunwind.h"

static uint32_t word_at(const uint8_t *p)
{
    uint32_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* A return address: in known code, right after a call. */
static int is_return_address(uintptr_t ra)
{
    if (ra < 8 || (ra & 3) || !walk_known_at(ra - 1))
        return 0;
    uint8_t b[4];
    int r = walk_read_code(ra - 4, b, 4);
    return r < 0 || (r > 0 && mshape_arm64_is_call(word_at(b)));
}

/* rt_sigreturn's two instructions, where a signal handler returns to. */
static int is_sigreturn(uintptr_t pc)
{
    uint8_t b[8];
    return !(pc & 3) && walk_read_code(pc, b, 8) > 0 && word_at(b) == 0xD2801168u &&
           word_at(b + 4) == 0xD4000001u;
}

/* A frame in code without unwind data: the frame-record chain, as a
 * guess; a caller whose x29 is 0 is the outermost frame (the AAPCS64's
 * end of the chain: _start clears x29, and its CFI is often left out). */
NO_ASAN static enum walk_step guess(struct walk_regs *r, uintptr_t hi, int exact, uint32_t *flags)
{
    if (!exact && r->fp == 0) {
        r->pc = 0;
        return STEP_OK;
    }
    *flags |= WALK_GUESSED;
    return walk_fp_step(r, hi) ? STEP_OK : STEP_BOUNDS;
}

/* A managed frame, by its shape. */
NO_ASAN int walk_managed_step(struct walk_regs *r, uintptr_t hi, int exact,
                              const struct mcode_hit *h)
{
    struct mshape_arm64_where w = {h->fn_start, h->lo, h->hi, NULL, 0, 0};
    uint8_t code[64];
    if (exact && r->pc >= h->lo && r->pc < h->hi && !(r->pc & 3)) {
        /* the code at an interrupted pc is running: its bytes are there */
        size_t n = h->hi - r->pc < sizeof code ? h->hi - r->pc : sizeof code;
        memcpy(code, (const void *)r->pc, n);
        w.code = code;
        w.code_len = n;
        if (r->pc >= h->lo + 4)
            w.before = word_at((const uint8_t *)(r->pc - 4));
    }
    uintptr_t slot;
    if (mshape_arm64_step(&h->shape, &w, exact, r, &slot, r->sp, hi) < 0)
        return 0;
    r->pc = arch_strip_pac(r->pc);
    return 1;
}

NO_ASAN enum walk_step walk_hijacked(struct walk_regs *r, uint32_t *flags)
{
    (void)r, (void)flags; /* not on arm64 (above) */
    return STEP_OK;
}

NO_ASAN enum walk_step walk_other_step(struct walk_regs *r, uintptr_t hi, uintptr_t at,
                                       int was_exact, int *exact, uint32_t *flags)
{
    struct mcode_hit h;
    if (was_exact && r->lr && !(r->pc & 3) && nativeunwind_covers(r->pc) &&
        mshape_arm64_is_ret(word_at((const uint8_t *)r->pc))) {
        /* at a ret (a library's mapped code, running): compilers may leave
         * an epilogue's last instructions without CFI */
        r->pc = r->lr;
        r->lr = 0;
        return STEP_OK;
    }
    uintptr_t lo = r->sp;
    enum nu_status st = nativeunwind_step(&r->pc, &r->sp, &r->fp, &r->lr, lo, hi, was_exact);
    if (st == NU_PENDING) {
        *flags |= WALK_PENDING;
        st = NU_NO_CFI;
    }
    enum walk_step step;
    if (walk_by_cfi(st, exact, &step))
        return step;
    if (st == NU_NO_TABLE) /* a library without unwind data: frame records or nothing */
        return guess(r, hi, was_exact, flags);
    if (mcode_find_fresh(at, &h) == MCODE_FOUND) {
        /* code compiled since the table was last published */
        return walk_managed_step(r, hi, was_exact, &h) ? STEP_OK : STEP_BOUNDS;
    }
    if (!was_exact && is_sigreturn(r->pc)) {
        if (!walk_sigcontext(r->sp, r->sp, hi, r))
            return STEP_BOUNDS;
        *exact = 1;
        return STEP_OK;
    }
    if (was_exact && r->lr && is_return_address(r->lr)) {
        /* the runtime's generated stubs branch, never call: the return
         * address is still in x30; but code that built a frame record
         * holding it (a body of code the walker has no shape for) is
         * stepped by the record, which has the caller's x29 too */
        uintptr_t saved;
        if (r->fp >= r->sp && walk_read_word(r->fp + 8, r->sp, hi, &saved) &&
            arch_strip_pac(saved) == r->lr)
            return walk_fp_step(r, hi) ? STEP_OK : STEP_BOUNDS;
        r->pc = r->lr;
        r->lr = 0;
        return STEP_OK;
    }
    /* a library loaded since the objects were listed? */
    st = nativeunwind_step_unlisted(&r->pc, &r->sp, &r->fp, &r->lr, lo, hi, was_exact);
    return walk_by_cfi(st, exact, &step) ? step : guess(r, hi, was_exact, flags);
}
