/*
 * walk: see walk.h.
 */
#include "agent/signal/walk.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/signal/hijack.h"
#include "agent/signal/mcode.h"
#include "agent/signal/mshape.h"
#include "agent/signal/nativeunwind.h"

/* Reads the word at addr if [addr, addr+8) lies in [lo, hi). */
NO_ASAN static int read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi, uintptr_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uintptr_t *)addr;
    return 1;
}

/* Is `at` (an exact pc, or a return address - 1) in code the walker has
 * unwind data for? */
static int known_at(uintptr_t at)
{
    struct mcode_hit h;
    enum mcode_found f = mcode_find(at, &h);
    if (f == MCODE_NONE || f == MCODE_IMAGE)
        f = nativeunwind_covers(at) ? MCODE_FOUND : mcode_find_fresh(at, &h);
    return f == MCODE_FOUND || f == MCODE_NO_SHAPE;
}

static int is_code(uintptr_t ra)
{
    return ra > 1 && known_at(ra - 1);
}

/* Code bytes through the kernel: code that is no longer mapped is an
 * error, not a fault.  Returns 1 read, 0 unmapped, -1 the kernel would not
 * say (then the caller decides without them). */
static int read_code(uintptr_t at, uint8_t *out, size_t n)
{
    int saved = errno;
    struct iovec local = {out, n}, remote = {(void *)at, n};
    long got = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1L, &remote, 1L, 0L);
    int r = got == (long)n ? 1 : got < 0 && errno != EFAULT ? -1 : 0;
    errno = saved;
    return r;
}

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
    if (ra < 8 || !known_at(ra - 1))
        return 0;
    if (nativeunwind_is_sigreturn(ra))
        return 1;
    uint8_t b[8] = {0};
    int r = read_code(ra - 7, b, 7);
    return r < 0 || (r > 0 && call_before(b));
}

/* One step along the frame-pointer chain: the caller's return address is
 * at fp+8, its frame pointer at fp, its stack pointer fp+16.  The chain
 * must move up the stack. */
static int fp_step(struct walk_regs *r, uintptr_t hi)
{
    uintptr_t ret, saved;
    if (r->fp < r->sp || !read_word(r->fp + 8, r->sp, hi, &ret) ||
        !read_word(r->fp, r->sp, hi, &saved))
        return 0;
    r->sp = r->fp + 16;
    r->fp = saved;
    r->pc = ret;
    return 1;
}

/* A managed frame, by its shape. */
NO_ASAN static int managed_step(struct walk_regs *r, uintptr_t hi, int exact,
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
            if (!read_word(slot, lo, hi, &ret) ||
                (t0.shape.rbp_step && !read_word(slot - t0.shape.rbp_save, lo, hi, &fp)))
                return 0;
            r->pc = ret;
            r->sp = slot + 8;
            r->fp = fp;
        }
    }
    return 1;
}

enum step { STEP_OK, STEP_BOUNDS, STEP_RULE, STEP_HIJACK };

/* One step from r to its caller.  *exact: r->pc is an interrupted
 * instruction (in), the caller's pc is one (out: after a signal frame). */
NO_ASAN static enum step step(struct walk_regs *r, uintptr_t hi, int *exact, uint32_t *flags)
{
    uintptr_t at = *exact ? r->pc : r->pc - 1;
    int was_exact = *exact;
    *exact = 0;
    struct mcode_hit h;
    enum mcode_found found = mcode_find(at, &h);
    if (found == MCODE_FOUND) {
        if (!managed_step(r, hi, was_exact, &h))
            return STEP_BOUNDS;
    } else if (found == MCODE_NO_SHAPE) {
        *flags |= WALK_GUESSED;
        if (!fp_step(r, hi))
            return STEP_BOUNDS;
    } else if (was_exact && nativeunwind_covers(r->pc) && *(const uint8_t *)r->pc == 0xC3) {
        /* at a ret (the code there is running: a library's mapped code,
         * never a faulting pc a signal frame saved), whatever the CFI says:
         * compilers often leave epilogues without CFI, so that after pop
         * rbp it still names RBP */
        uintptr_t ra;
        if (!read_word(r->sp, r->sp, hi, &ra))
            return STEP_BOUNDS;
        r->pc = ra;
        r->sp += 8;
    } else {
        uintptr_t fp = r->fp, lo = r->sp;
        enum nu_status st = nativeunwind_step(&r->pc, &r->sp, &r->fp, lo, hi, was_exact);
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
            if (!read_word(cfa - 16, lo, hi, &r->pc))
                return STEP_BOUNDS;
            *flags |= WALK_HIJACKED;
            if (!hijack_is_stub(r->pc) && !is_code(r->pc)) {
                /* its worker has not written it yet */
                uintptr_t real = hijack_real(r->thread, cfa - 16, is_code);
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
            if (!fp_step(r, hi))
                return STEP_BOUNDS;
        } else if (st == NU_NO_CFI && mcode_find_fresh(at, &h) == MCODE_FOUND) {
            /* code compiled since the table was last published */
            if (!managed_step(r, hi, was_exact, &h))
                return STEP_BOUNDS;
        } else if (st == NU_NO_CFI) {
            /* code with no unwind data: where a sample lands in the
             * runtime's generated stubs (frameless: they jump, never call;
             * a dispatch stub may have pushed a word or two), the return
             * address is on top of the stack */
            int done = 0;
            for (uintptr_t d = 0; was_exact && !done && d <= 16; d += 8) {
                uintptr_t ra;
                if (read_word(lo + d, lo, hi, &ra) && is_return_address(ra)) {
                    r->pc = ra;
                    r->sp = lo + d + 8;
                    done = 1;
                }
            }
            if (!done) {
                *flags |= WALK_GUESSED;
                if (!fp_step(r, hi))
                    return STEP_BOUNDS;
            }
        }
    }
    if (r->pc && hijack_is_stub(r->pc)) {
        /* a return address the runtime replaced to stop the thread */
        uintptr_t real = hijack_real(r->thread, r->sp - 8, is_code);
        if (!real)
            return STEP_HIJACK;
        r->pc = real;
        *flags |= WALK_HIJACKED;
    }
    return STEP_OK;
}

NO_ASAN uint64_t walk_stack(struct walk_regs regs, uintptr_t hi, uint64_t max, walk_put put,
                            void *ctx, uint32_t *flags)
{
    if (max == 0) {
        *flags |= WALK_TRUNCATED;
        return 0;
    }
    uint64_t depth = 0;
    put(ctx, depth++, regs.pc, regs.sp);
    int exact = 1;
    while (hi) {
        struct walk_regs next = regs;
        enum step st = step(&next, hi, &exact, flags);
        if (st != STEP_OK) {
            *flags |= st == STEP_BOUNDS ? WALK_STOP_BOUNDS
                      : st == STEP_RULE ? WALK_STOP_RULE
                                        : WALK_STOP_HIJACK;
            break;
        }
        if (next.pc == 0)
            break; /* the outermost frame */
        if (next.sp <= regs.sp) {
            *flags |= WALK_STOP_BOUNDS; /* no progress up the stack */
            break;
        }
        if (depth == max) {
            *flags |= WALK_TRUNCATED;
            break;
        }
        regs = next;
        put(ctx, depth++, regs.pc, regs.sp);
    }
    return depth;
}

static void put_array(void *ctx, uint64_t index, uint64_t pc, uintptr_t sp)
{
    (void)sp;
    ((uint64_t *)ctx)[index] = pc;
}

NO_ASAN __attribute__((noinline)) uint64_t walk_self(uintptr_t stack_hi, uint64_t *ips,
                                                     uint64_t max, uint32_t *flags)
{
    /* this function keeps a frame pointer (the tree is built with
     * -fno-omit-frame-pointer): its frame names the caller exactly */
    uintptr_t *frame = __builtin_frame_address(0);
    struct walk_regs regs = {(uintptr_t)frame[1], (uintptr_t)(frame + 2), (uintptr_t)frame[0], 0};
    if (regs.sp >= stack_hi)
        stack_hi = 0;
    return walk_stack(regs, stack_hi, max, put_array, ips, flags);
}
