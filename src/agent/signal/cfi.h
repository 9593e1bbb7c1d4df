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

/* One function at a time.  An object's .eh_frame_hdr holds a table of its
 * functions' start addresses sorted, each with its FDE: a binary search
 * finds the one FDE covering an address, whose program, run up to that
 * address, gives its row.  That takes a microsecond or less and allocates
 * nothing, so it can be done where a walk needs it, even in a signal
 * handler, instead of parsing every function of the object first (110,000
 * rows and 20 to 30 ms for libcoreclr.so).  The readers are those of the
 * whole-table parser: every byte read is checked to lie in [lo, hi). */
struct cfi_index {
    const uint8_t *hdr;      /* .eh_frame_hdr (its table's offsets are from here) */
    const uint8_t *table;    /* count pairs (start, FDE): 32-bit offsets from hdr */
    const uint8_t *eh_frame; /* .eh_frame */
    const uint8_t *hi;       /* the end of the segment holding both */
    size_t count;
    uintptr_t bias;
};

/* Collector: the search table of the .eh_frame_hdr at hdr, in the
 * readable segment [lo, hi) of an object loaded at bias.  Returns 1 when it
 * has one in the encoding linkers write, 0 otherwise (then only
 * cfi_parse_hdr reads its unwind data). */
HIDDEN int cfi_index_open(const uint8_t *hdr, const uint8_t *lo, const uint8_t *hi,
                          uintptr_t bias, struct cfi_index *out);
/* Async-signal-safe (no allocation, bounded reads; the object's segment
 * must stay mapped while it runs): the row for link-time address pc, as
 * cfi_find would give it from the whole table.  Returns 1 with *row, 0
 * when no function's CFI covers pc (or the row is CFI_NONE), -1 when the
 * covering FDE is longer than max_fde_bytes (left for cfi_index_function:
 * a handler's time is bounded). */
HIDDEN int cfi_index_row(const struct cfi_index *ix, uint64_t pc, size_t max_fde_bytes,
                         struct cfi_row *row);

/* Copies n bytes from the process's address src to dst: 0, or -1 when
 * they cannot be read (unmapped: no fault).  Async-signal-safe. */
typedef int (*cfi_copy_fn)(void *dst, uint64_t src, size_t n);
/* cfi_index_row for an object that may be unmapped while it runs (dlclose
 * on another thread): every byte of the table, the FDE and its CIE is
 * copied through `copy`, never read in place.  Returns as cfi_index_row,
 * and -1 too when a copy fails or the FDE (or its CIE) is too long to copy
 * onto a handler's stack. */
HIDDEN int cfi_index_row_copied(const struct cfi_index *ix, uint64_t pc, cfi_copy_fn copy,
                                struct cfi_row *row);

/* cfi_index_open for an object the walker has only an address of (loaded
 * since the loop last listed the objects): the .eh_frame_hdr at run-time
 * address hdr, in the segment [lo, hi), read through `copy`.  Takes the
 * encodings linkers write only.  Async-signal-safe; 1 or 0 as
 * cfi_index_open.  The index is for cfi_index_row_copied alone. */
HIDDEN int cfi_index_open_copied(uint64_t hdr, uint64_t lo, uint64_t hi, uintptr_t bias,
                                 cfi_copy_fn copy, struct cfi_index *out);

/* The function covering a link-time address, or the gap where none does. */
struct cfi_function {
    uint64_t lo, hi;      /* link-time range: the function's, or the gap's */
    struct cfi_row *rows; /* its rows (allocated; cfi_function_free), none for a gap */
    size_t count;
    uint32_t gaps;        /* 1 << enum cfi_gap its rules met */
    int counted;          /* an FDE of a function (not a linker's empty one) */
};

/* Collector: every row of the function covering pc (1), or the gap around
 * pc where no function's CFI is (0; rows NULL; gaps say why when its FDE
 * was refused); -1 when out of memory. */
HIDDEN int cfi_index_function(const struct cfi_index *ix, uint64_t pc, struct cfi_function *out);
HIDDEN void cfi_function_free(struct cfi_function *f);

#endif
