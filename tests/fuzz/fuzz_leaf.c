/*
 * fuzz_leaf: the managed-frame decoders (agent/signal/mshape.c) over
 * arbitrary machine code and unwind data.
 *
 * The JIT callback decodes the first bytes of a compiled method into a
 * frame shape; the signal handler decodes a ReadyToRun function's unwind
 * codes, decodes the rest of an epilogue forward from an interrupted pc,
 * and steps a frame by its shape.  The input is a method's code from its
 * first byte (and, read as such, an UNWIND_INFO): it is decoded both ways,
 * and a frame of the shape is stepped on a small stack from every offset of
 * the first 256 bytes, the code around the pc given as the handler gives
 * it.  Nothing may be read outside the input or the stack (ASan), and a
 * decoded shape must be sound.  Seeds: methods' code bytes captured from
 * the runtime's JIT (tests/fuzz/seeds.sh); the corpus keeps its old name.
 * The same input, read as arm64 instructions, goes through the arm64
 * decoder (mshape_arm64.c) the same way.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/signal/mshape.h"
#include "agent/signal/mshape_arm64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct mshape *s)
{
    if (s->nsteps > MSHAPE_STEPS || s->fp_step > s->nsteps || s->rbp_step > s->nsteps)
        abort();
    for (int k = 1; k < s->nsteps; k++)
        if (s->end[k] < s->end[k - 1])
            abort(); /* steps in code order */
}

/* The arm64 decoder: a sound shape, and steps from every word. */
static void arm64(const uint8_t *data, size_t size, uint64_t *stack, uintptr_t hi)
{
    struct mshape_arm64 s;
    if (mshape_arm64_from_code(data, size < 96 ? size : 96, &s) == 0) {
        if (s.nsteps > MSHAPE_ARM64_STEPS || s.fp_step > s.nsteps || s.ra_step > s.nsteps ||
            !s.ra_step || (s.fp_step && s.fp_step < s.ra_step))
            abort();
        for (int k = 1; k < s.nsteps; k++)
            if (s.end[k] < s.end[k - 1])
                abort();
    } else {
        memset(&s, 0, sizeof s);
    }
    uintptr_t base = (uintptr_t)data;
    for (size_t off = 0; off + 4 <= size && off < 256; off += 4) {
        uint32_t before = 0;
        if (off)
            memcpy(&before, data + off - 4, 4);
        struct mshape_arm64_where w = {base, base, base + size, data + off, size - off, before};
        for (int leaf = 0; leaf < 2; leaf++) {
            struct walk_regs r = {base + off, (uintptr_t)&stack[8 + off % 16],
                                  (uintptr_t)&stack[off % 90], 0, 0x4242};
            uintptr_t slot;
            if (mshape_arm64_step(&s, &w, leaf, &r, &slot, r.sp, hi) == 0 && r.lr)
                abort(); /* the link register is spent by a step */
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mshape shapes[2];
    int ok[2];
    ok[0] = mshape_from_code(data, size < 128 ? size : 128, &shapes[0]) == 0;
    ok[1] = mshape_from_unwind(data, size, &shapes[1]) == 0;
    uint64_t stack[96];
    for (size_t i = 0; i < 96; i++)
        stack[i] = (uintptr_t)&stack[(i * 7) % 96] + (i & 1);
    uintptr_t lo = (uintptr_t)&stack[0], hi = (uintptr_t)&stack[96];
    uintptr_t base = (uintptr_t)data;
    for (int k = 0; k < 2; k++) {
        if (!ok[k])
            continue;
        check(&shapes[k]);
        for (size_t off = 0; off <= size && off < 256; off++) {
            struct mshape_where w = {base, base, base + size, off ? data + off - 1 : NULL,
                                     off ? size - off + 1 : 0};
            for (int leaf = 0; leaf < 2; leaf++) {
                uintptr_t pc = base + off, sp = (uintptr_t)&stack[8 + off % 16],
                          fp = (uintptr_t)&stack[off % 90];
                mshape_step(&shapes[k], &w, leaf, &pc, &sp, &fp, sp, hi);
                (void)lo;
            }
        }
    }
    arm64(data, size, stack, hi);
    for (size_t off = 0; off < size && off < 256; off++) {
        struct mshape_epilogue e;
        mshape_epilogue(data + off, size - off, base + off, base, base + size, &e);
        if (e.rbp_pop >= 0 && e.rbp_pop >= e.pops)
            abort();
    }
    return 0;
}
