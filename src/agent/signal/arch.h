/*
 * arch: what the signal path needs to know about the machine it runs on,
 * chosen at build time: the interrupted registers in a signal's ucontext,
 * the shape of managed frames the code map keeps (mshape.h on x86-64,
 * mshape_arm64.h on arm64) and how a return address read from the stack
 * becomes a plain address.
 *
 * On arm64 the link register (x30) is part of the registers a walk starts
 * from: an interrupted function that has not saved it yet (a leaf, a
 * prologue, a stub that only branches) still holds its return address
 * there.  A return address may carry a pointer-authentication code in its
 * top bits (code built with -mbranch-protection signs it before saving
 * it): arch_strip_pac removes it with XPACLRI, a hint that is a no-op on
 * cores without pointer authentication.
 */
#ifndef CORSCOPE_ARCH_H
#define CORSCOPE_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "agent/signal/walk.h"

#if defined(__aarch64__)

#include "agent/signal/mshape_arm64.h"

typedef struct mshape_arm64 arch_shape;

static inline int arch_shape_from_code(const uint8_t *code, size_t n, arch_shape *s)
{
    return mshape_arm64_from_code(code, n, s);
}

static inline uintptr_t arch_strip_pac(uintptr_t ra)
{
    register uintptr_t x30 __asm__("x30") = ra;
    __asm__("hint #7" : "+r"(x30)); /* xpaclri */
    return x30;
}

/* A ReadyToRun image's RUNTIME_FUNCTION entry is {begin, unwind}: unwind
 * is packed unwind data (low two bits non-zero; the function's length in
 * words in bits 2..12) or the RVA of its .xdata, whose first word has the
 * length in words in bits 0..17.  The frame's shape comes from the
 * prologue itself (the image's code stays mapped). */
#define ARCH_RF_WORDS 2

/* The unwind data of entry f: its RVA and the bytes of it read here (0:
 * none, packed in the entry). */
static inline uint32_t arch_rf_unwind(const uint32_t *f, uint32_t *rva)
{
    *rva = f[1];
    return (f[1] & 3) ? 0 : 4;
}

/* Entry f's end RVA; its unwind data's first bytes (arch_rf_unwind) must
 * be readable in the image at base. */
static inline uint32_t arch_rf_end(const uint8_t *base, const uint32_t *f)
{
    return mshape_arm64_rf_end(base, f);
}

/* The whole unwind data entry f needs readable (its first bytes are). */
static inline uint32_t arch_rf_unwind_size(const uint8_t *base, const uint32_t *f)
{
    (void)base;
    return (f[1] & 3) ? 0 : 4;
}

/* The shape of entry f's frame, in the image [im_lo, im_hi): the function
 * is [lo, hi). */
static inline int arch_rf_shape(uintptr_t im_lo, uintptr_t im_hi, const uint32_t *f, uintptr_t lo,
                                uintptr_t hi, arch_shape *s)
{
    (void)im_lo, (void)im_hi, (void)f;
    size_t n = hi - lo < 4 * 24 ? hi - lo : 4 * 24;
    return mshape_arm64_from_code((const uint8_t *)lo, n, s);
}

static inline void arch_regs(const ucontext_t *uc, struct walk_regs *r)
{
    r->pc = (uintptr_t)uc->uc_mcontext.pc;
    r->sp = (uintptr_t)uc->uc_mcontext.sp;
    r->fp = (uintptr_t)uc->uc_mcontext.regs[29];
    r->lr = arch_strip_pac((uintptr_t)uc->uc_mcontext.regs[30]);
}

#elif defined(__x86_64__)

#include "agent/signal/mshape.h"

typedef struct mshape arch_shape;

static inline int arch_shape_from_code(const uint8_t *code, size_t n, arch_shape *s)
{
    return mshape_from_code(code, n, s);
}

static inline uintptr_t arch_strip_pac(uintptr_t ra)
{
    return ra;
}

/* A ReadyToRun image's RUNTIME_FUNCTION entry is {begin, end, unwind}:
 * unwind is the RVA of Windows-x64 UNWIND_INFO, the frame's shape. */
#define ARCH_RF_WORDS 3

static inline uint32_t arch_rf_unwind(const uint32_t *f, uint32_t *rva)
{
    *rva = f[2];
    return 4;
}

static inline uint32_t arch_rf_end(const uint8_t *base, const uint32_t *f)
{
    (void)base;
    return f[1];
}

/* UNWIND_INFO's header and its codes (count in its third byte). */
static inline uint32_t arch_rf_unwind_size(const uint8_t *base, const uint32_t *f)
{
    return 4 + 2 * (uint32_t)base[f[2] + 2];
}

static inline int arch_rf_shape(uintptr_t im_lo, uintptr_t im_hi, const uint32_t *f, uintptr_t lo,
                                uintptr_t hi, arch_shape *s)
{
    (void)lo, (void)hi;
    uintptr_t ui = im_lo + f[2];
    if (ui < im_lo || ui + 4 > im_hi)
        return -1;
    size_t avail = im_hi - ui < 4 + 2 * 256 ? im_hi - ui : 4 + 2 * 256;
    return mshape_from_unwind((const uint8_t *)ui, avail, s);
}

static inline void arch_regs(const ucontext_t *uc, struct walk_regs *r)
{
    r->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    r->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    r->fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    r->lr = 0;
}

#else
#error "corscope's walker knows x86-64 and arm64"
#endif

#endif
