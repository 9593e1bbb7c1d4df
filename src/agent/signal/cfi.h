/*
 * cfi: DWARF call frame information (.eh_frame) turned into a table a
 * signal handler can use.
 *
 * Native code built without frame pointers (Debian's glibc, most system
 * libraries) can only be unwound with the CFI its compiler left in
 * .eh_frame: a small program per function saying, at each instruction,
 * where the canonical frame address (CFA) is and where the caller's
 * registers were saved.  Interpreting those programs inside a signal
 * handler is slow and fragile, so, as async-profiler does, we run them
 * once, off the signal path, when a library is first seen, and keep only
 * what an x86-64 unwinder needs per address range: CFA = RSP or RBP plus an
 * offset, where RBP was saved, and whether the return address is defined
 * (on arm64 the same with SP and x29, and where x30, the return address,
 * was saved: until a function saves it, it is still in the register).
 * The rows are sorted by address; a lookup is a binary search.
 *
 * Everything the parser reads is bounded by the section's size: a corrupt
 * .eh_frame gives fewer rows, never a crash.  Rules we cannot express (DWARF
 * expressions, registers saved in other registers) become CFI_UNSUPPORTED
 * rows, where the unwinder stops (each counted, per function and reason, in
 * the table's gaps, so a user can see why a walk ended in a library); the
 * one expression every shared library
 * has, the PLT's, is recognised and kept as CFI_PLT10/11, and so is the C
 * library's signal return trampoline, whose rules point into the
 * ucontext the kernel saved (CFI_SIGFRAME; on arm64, every row of a CIE
 * marked as a signal frame, the kernel's vDSO trampoline's).
 */
#ifndef CORSCOPE_CFI_H
#define CORSCOPE_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/format.h"

enum cfi_cfa {
    CFI_NONE = 0,        /* no FDE covers this address */
    CFI_RSP = 1,         /* CFA = RSP + cfa_offset */
    CFI_RBP = 2,         /* CFA = RBP + cfa_offset */
    CFI_UNSUPPORTED = 3, /* an expression or rule we do not follow */
    CFI_PLT10 = 4,       /* a PLT entry: CFA = RSP + 8, + 8 more when (pc & 15) >= 10 */
    CFI_PLT11 = 5,       /* the same with 11 (the two expressions the linkers emit) */
    CFI_SIGFRAME = 6,    /* a signal frame (libc's __restore_rt): CFA = [RSP + 160], the
                          * interrupted registers in the ucontext at RSP */
};

/* The registers by their x86-64 names: on arm64, RSP is SP and RBP is
 * x29, the frame pointer. */
struct cfi_row {
    uint64_t pc;        /* first address the row applies to (link-time address) */
    int32_t cfa_offset;
    int16_t rbp_offset; /* RBP saved at CFA + rbp_offset; 0 = RBP unchanged */
    uint8_t cfa;        /* enum cfi_cfa */
    uint8_t outermost;  /* the return address is undefined: the first frame */
#if defined(__aarch64__)
    int16_t ra_offset;  /* x30 saved at CFA + ra_offset; 0: still in x30 */
#endif
};

/* What the parser met and could not turn into rows the walker follows,
 * counted per function (FDE), each reason at most once per function. */
enum cfi_gap {
#define CFI_GAP_ENUM(name, key, what) CFI_GAP_##name,
    FMT_UNWIND_GAPS(CFI_GAP_ENUM)
#undef CFI_GAP_ENUM
    CFI_GAP_COUNT
};

struct cfi_gaps {
    uint32_t functions; /* FDEs seen */
    uint32_t n[CFI_GAP_COUNT];
};

struct cfi_table {
    struct cfi_row *rows; /* sorted by pc */
    size_t count;
    struct cfi_gaps gaps;
};

/* Parses the .eh_frame section that `hdr` (a loaded object's
 * .eh_frame_hdr, from its PT_GNU_EH_FRAME header) points to, reading
 * nothing outside [lo, hi) (the object's mapped, readable segment holding
 * both).  `bias` is the object's load bias, subtracted from every pc so
 * rows hold link-time addresses.  Returns 0 (possibly with no rows), or -1
 * when out of memory. */
HIDDEN int cfi_parse_hdr(const uint8_t *hdr, const uint8_t *lo, const uint8_t *hi,
                         uintptr_t bias, struct cfi_table *out);
/* Parses `size` bytes of .eh_frame whose first byte lives at address
 * `address` (where pc-relative pointers resolve), up to its zero
 * terminator; pcs are stored minus `bias`. */
HIDDEN int cfi_parse_section(const uint8_t *eh_frame, size_t size, uint64_t address,
                             uintptr_t bias, struct cfi_table *out);
HIDDEN void cfi_free(struct cfi_table *t);

/* Async-signal-safe: the row for link-time address pc, or NULL when none
 * (or a CFI_NONE gap). */
HIDDEN const struct cfi_row *cfi_find(const struct cfi_table *t, uint64_t pc);

#endif
