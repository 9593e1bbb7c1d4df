/*
 * walk: see walk.h.
 */
#include "agent/signal/walk.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/signal/mcode.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/walk_step.h"

int walk_known_at(uintptr_t at)
{
    struct mcode_hit h;
    enum mcode_found f = mcode_find(at, &h);
    if (f == MCODE_NONE || f == MCODE_IMAGE)
        f = nativeunwind_covers(at) ? MCODE_FOUND : mcode_find_fresh(at, &h);
    return f == MCODE_FOUND || f == MCODE_NO_SHAPE;
}

int walk_is_code(uintptr_t ra)
{
    return ra > 1 && walk_known_at(ra - 1);
}

int walk_by_cfi(int st, int *exact, enum walk_step *step)
{
    switch (st) {
    case NU_SIGNAL:
        *exact = 1;
        *step = STEP_OK;
        return 1;
    case NU_OK:
        *step = STEP_OK;
        return 1;
    case NU_BOUNDS:
        *step = STEP_BOUNDS;
        return 1;
    case NU_RULE:
        *step = STEP_RULE;
        return 1;
    default:
        return 0;
    }
}

int walk_read_code(uintptr_t at, uint8_t *out, size_t n)
{
    int saved = errno;
    struct iovec local = {out, n}, remote = {(void *)at, n};
    long got = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1L, &remote, 1L, 0L);
    int r = got == (long)n ? 1 : got < 0 && errno != EFAULT ? -1 : 0;
    errno = saved;
    return r;
}

/* One step from r to its caller.  *exact: r->pc is an interrupted
 * instruction (in), the caller's pc is one (out: after a signal frame). */
NO_ASAN static enum walk_step step(struct walk_regs *r, uintptr_t hi, int *exact, uint32_t *flags)
{
    uintptr_t at = *exact ? r->pc : r->pc - 1;
    int was_exact = *exact;
    *exact = 0;
    struct mcode_hit h;
    /* a return address in a library's code walked through lately (the
     * frames at the root of every stack, the runtime's own around a
     * callback): no search of the managed code first */
    enum mcode_found found = !was_exact && nativeunwind_seen(at) ? MCODE_NONE : mcode_find(at, &h);
    enum walk_step st;
    if (found == MCODE_FOUND) {
        st = walk_managed_step(r, hi, was_exact, &h) ? STEP_OK : STEP_BOUNDS;
    } else if (found == MCODE_NO_SHAPE) {
        *flags |= WALK_GUESSED;
        st = walk_fp_step(r, hi) ? STEP_OK : STEP_BOUNDS;
    } else {
        st = walk_other_step(r, hi, at, was_exact, exact, flags);
    }
    return st == STEP_OK ? walk_hijacked(r, flags) : st;
}

/* The frames of the memo's last walk above its frame `from`, if each
 * return address is still in its slot: how many (0: none, or changed). */
NO_ASAN static uint32_t memo_tail(const struct walk_memo_frame *last, uint32_t count,
                                  uint32_t from, uintptr_t lo, uintptr_t hi)
{
#if defined(__x86_64__)
    for (uint32_t m = from + 1; m < count; m++) {
        const struct walk_memo_frame *f = &last[m];
        if (f->exact || f->sp < lo + 16 || f->sp > hi || *(const uintptr_t *)(f->sp - 8) != f->pc)
            return 0;
        /* a frame pointer the step restored: from the slot under the
         * return address, where a frame that keeps one saves it (any
         * other place: not taken, walked again) */
        if (f->fp != last[m - 1].fp && *(const uintptr_t *)(f->sp - 16) != f->fp)
            return 0;
    }
    return count - from - 1;
#else
    (void)last;
    (void)count;
    (void)from;
    (void)lo;
    (void)hi;
    return 0;
#endif
}

NO_ASAN uint64_t walk_stack_memo(struct walk_regs regs, uintptr_t hi, uint64_t max, walk_put put,
                                 void *ctx, uint32_t *flags, struct walk_memo *memo)
{
    if (max == 0) {
        *flags |= WALK_TRUNCATED;
        return 0;
    }
#if !defined(__x86_64__)
    memo = NULL;
#endif
    if (memo && (!memo->frames || !memo->cap))
        memo = NULL;
    const struct walk_memo_frame *last = NULL;
    struct walk_memo_frame *made = NULL;
    uint32_t last_count = 0, j = 0, n = 0;
    if (memo) {
        last = memo->frames + (size_t)memo->current * memo->cap;
        last_count = memo->count;
        made = memo->frames + (size_t)(memo->current ^ 1) * memo->cap;
    }
    uint32_t own = 0; /* this walk's flags */
    int trying = last_count > 0;
    uint64_t depth = 0;
    int exact = 1;
    if (made)
        made[n++] = (struct walk_memo_frame){regs.pc, regs.sp, regs.fp, (uintptr_t)exact};
    put(ctx, depth++, regs.pc, regs.sp);
    while (hi) {
        if (trying) {
            /* the last walk's frames lie in sp order: its frame at this sp */
            while (j < last_count && last[j].sp < regs.sp)
                j++;
            if (j < last_count && last[j].sp == regs.sp && last[j].pc == regs.pc &&
                last[j].fp == regs.fp && last[j].exact == (uintptr_t)exact) {
                uint32_t tail = memo_tail(last, last_count, j, regs.sp, hi);
                trying = 0;
                if (tail || j + 1 == last_count) {
                    for (uint32_t m = j + 1; m < last_count; m++) {
                        if (depth == max) {
                            own |= WALK_TRUNCATED;
                            break;
                        }
                        if (made && n < memo->cap)
                            made[n++] = last[m];
                        else
                            made = NULL;
                        put(ctx, depth++, last[m].pc, last[m].sp);
                        memo->reused++;
                    }
                    own |= memo->end_flags;
                    break;
                }
            } else if (j >= last_count) {
                trying = 0;
            }
        }
        struct walk_regs next = regs;
        enum walk_step st = step(&next, hi, &exact, &own);
        if (st != STEP_OK) {
            own |= st == STEP_BOUNDS ? WALK_STOP_BOUNDS
                   : st == STEP_RULE ? WALK_STOP_RULE
                                     : WALK_STOP_HIJACK;
            break;
        }
        if (next.pc == 0)
            break; /* the outermost frame */
        /* up the stack, or (arm64) the same SP once: a frameless leaf whose
         * return address was still in the link register, which the step spent */
        if (next.sp < regs.sp || (next.sp == regs.sp && !(regs.lr && !next.lr))) {
            own |= WALK_STOP_BOUNDS; /* no progress up the stack */
            break;
        }
        if (depth == max) {
            own |= WALK_TRUNCATED;
            break;
        }
        regs = next;
        if (made && n < memo->cap)
            made[n++] = (struct walk_memo_frame){regs.pc, regs.sp, regs.fp, (uintptr_t)exact};
        else
            made = NULL; /* deeper than the memo holds: not remembered */
        put(ctx, depth++, regs.pc, regs.sp);
    }
    *flags |= own;
    /* a walk not to be remembered leaves the last one (checked against
     * the stack each time it is used, it stays as good) */
    if (made && !(own & ~WALK_STOP_BOUNDS) && n == depth) {
        memo->current ^= 1;
        memo->count = n;
        memo->end_flags = own & WALK_STOP_BOUNDS;
    }
    return depth;
}

NO_ASAN uint64_t walk_stack(struct walk_regs regs, uintptr_t hi, uint64_t max, walk_put put,
                            void *ctx, uint32_t *flags)
{
    return walk_stack_memo(regs, hi, max, put, ctx, flags, NULL);
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
    /* the caller's SP is this function's CFA: frame + 2 on x86-64, but on
     * arm64 the frame record lies at the bottom of the frame */
    struct walk_regs regs = {(uintptr_t)frame[1], (uintptr_t)__builtin_dwarf_cfa(),
                             (uintptr_t)frame[0], 0, 0};
    if (regs.sp >= stack_hi)
        stack_hi = 0;
    return walk_stack(regs, stack_hi, max, put_array, ips, flags);
}
