/*
 * walk: see walk.h.
 */
#include "agent/signal/walk.h"

#include "agent/signal/nativeunwind.h"

/* Reads the word at addr if [addr, addr+8) lies in [lo, hi). */
NO_ASAN static int read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi, uint64_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uint64_t *)addr;
    return 1;
}

/* One step along the frame-pointer chain: the caller's return address is
 * at fp+8, its frame pointer at fp, its stack pointer fp+16.  The chain
 * must move up the stack. */
NO_ASAN static int fp_step(struct walk_regs *r, uintptr_t hi)
{
    uint64_t ret, saved;
    if (r->fp < r->sp || !read_word(r->fp + 8, r->sp, hi, &ret) ||
        !read_word(r->fp, r->sp, hi, &saved))
        return 0;
    r->sp = r->fp + 16;
    r->fp = (uintptr_t)saved;
    r->pc = (uintptr_t)ret;
    return 1;
}

NO_ASAN uint64_t walk_stack(struct walk_regs regs, uintptr_t hi, uint64_t max, walk_put put,
                            void *ctx, uint32_t *flags)
{
    if (max == 0) {
        *flags |= WALK_TRUNCATED;
        return 0;
    }
    uint64_t depth = 0;
    put(ctx, depth++, regs.pc);
    int leaf = 1;
    while (hi) {
        struct walk_regs next = regs;
        enum nu_status st = nativeunwind_step(&next.pc, &next.sp, &next.fp, regs.sp, hi, leaf);
        if (st == NU_NO_CFI) {
            if (!fp_step(&next, hi)) {
                *flags |= WALK_STOP_BOUNDS;
                break;
            }
        } else if (st != NU_OK) {
            *flags |= st == NU_BOUNDS ? WALK_STOP_BOUNDS : WALK_STOP_RULE;
            break;
        } else if (leaf) {
            *flags |= WALK_LEAF_CFI;
        }
        leaf = 0;
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
        put(ctx, depth++, regs.pc);
    }
    return depth;
}

static void put_array(void *ctx, uint64_t index, uint64_t pc)
{
    ((uint64_t *)ctx)[index] = pc;
}

NO_ASAN __attribute__((noinline)) uint64_t walk_self(uintptr_t stack_hi, uint64_t *ips,
                                                     uint64_t max, uint32_t *flags)
{
    /* this function keeps a frame pointer (the tree is built with
     * -fno-omit-frame-pointer): its frame names the caller exactly */
    uintptr_t *frame = __builtin_frame_address(0);
    struct walk_regs regs = {(uintptr_t)frame[1], (uintptr_t)(frame + 2), (uintptr_t)frame[0]};
    if (regs.sp >= stack_hi)
        stack_hi = 0;
    return walk_stack(regs, stack_hi, max, put_array, ips, flags);
}
