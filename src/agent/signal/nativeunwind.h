/*
 * nativeunwind: the handler's view of native code: for an instruction
 * pointer in a loaded ELF object with DWARF CFI, step to the caller's
 * registers.  The collector keeps the table of objects and their unwind
 * tables current (nativeunwind_refresh); the handler only reads published,
 * immutable tables (reclaimed through thread_rings.h).
 */
#ifndef CORSCOPE_NATIVEUNWIND_H
#define CORSCOPE_NATIVEUNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

enum nu_status {
    NU_OK,      /* stepped with CFI */
    NU_NO_CFI,  /* not native code we have tables for: use frame pointers */
    NU_PENDING, /* a function whose rows are not known yet (in a library
                 * that may be unloaded, read by the collector only; or
                 * whose table is parsed whole): frame pointers meanwhile */
    NU_NO_TABLE, /* a library with no unwind data at all (no .eh_frame_hdr):
                  * frame pointers are all there is */
    NU_BOUNDS,  /* the rule needs memory outside [lo, hi) */
    NU_RULE,    /* a rule we cannot follow */
    NU_SIGNAL,  /* stepped through a signal frame: *pc is the interrupted
                 * instruction, exact (not a return address) */
};

/* Handler (async-signal-safe).  `leaf` is set for the interrupted frame,
 * whose pc is exact; callers' pcs are return addresses, looked up at pc-1.
 * lr: arm64's link register, where a leaf's return address may still be
 * (read while `leaf`, set from a signal frame, spent otherwise); unused on
 * x86-64, where the return address is always on the stack. */
HIDDEN enum nu_status nativeunwind_step(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
                                        uintptr_t *lr, uintptr_t lo, uintptr_t hi, int leaf);

/* Handler, for a frame nativeunwind_step found in no listed object and
 * nothing cheaper placed (the walker would guess next): the object a
 * file's executable mapping there holds, loaded since the objects were
 * last listed (a library's initialization runs then), found through the
 * kernel and stepped by its CFI.  NU_NO_CFI when there is none, or the
 * kernel cannot say (its registers untouched); else as nativeunwind_step. */
HIDDEN enum nu_status nativeunwind_step_unlisted(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
                                                 uintptr_t *lr, uintptr_t lo, uintptr_t hi,
                                                 int leaf);

/* Handler: was at (an exact pc, or a return address - 1) stepped through
 * lately, by CFI of an object still loaded?  Then it is an object's code,
 * never the runtime's generated code: a walk need not search that first. */
HIDDEN int nativeunwind_seen(uintptr_t at);
/* Handler: does CFI cover this address (an exact pc, or a return address
 * - 1)? */
HIDDEN int nativeunwind_covers(uintptr_t at);
/* Handler: is ra the C library's signal trampoline (where the kernel makes
 * a signal handler return to)? */
HIDDEN int nativeunwind_is_sigreturn(uintptr_t ra);

/* Collector: notices loaded and unloaded objects and (re)publishes the
 * table, and decodes the functions walks asked for since (and parses the
 * whole tables of objects without a search table that a walk needed).
 * Cheap when nothing changed. */
HIDDEN void nativeunwind_refresh(void);
/* Initialize: the loaded objects listed, nothing decoded: from the first
 * walk, the runtime's libraries and the program's are read in place, and
 * others are known as pending (NU_PENDING), not as unknown code. */
HIDDEN void nativeunwind_list(void);
/* Every function of every object decoded now (tests). */
HIDDEN void nativeunwind_refresh_all(void);
/* Any thread: the recording ends; the collector stops decoding for walks
 * that will not be recorded (the program's exit does not wait for it). */
HIDDEN void nativeunwind_abandon(void);
/* A new session (lifecycle_resume): walks are decoded again. */
HIDDEN void nativeunwind_resume(void);
/* Collector: how to wake the collector when a callback waits for it. */
HIDDEN void nativeunwind_set_waker(void (*fn)(void *), void *ctx);
/* Is the object holding `at` read in place by walkers (never unloaded)? */
HIDDEN int nativeunwind_resident(uintptr_t at);
/* A runtime callback's thread (never a signal handler, never the
 * collector) whose walk met a table not parsed yet (WALK_PENDING): waits
 * until the collector has parsed what is wanted, at most timeout_ns.
 * Returns 1 when it has (walk again), 0 otherwise; after one wait that
 * timed out (the collector is held up) it returns 0 at once. */
HIDDEN int nativeunwind_wait_tables(uint64_t timeout_ns);
/* Collector: every library loaded now whose table is parsed whole (no
 * search table) is wanted. */
HIDDEN void nativeunwind_want_all(void);
HIDDEN void nativeunwind_shutdown(void);
/* Time spent decoding functions and parsing tables so far, ns. */
HIDDEN uint64_t nativeunwind_parse_ns(void);
/* Rows decoded and published (for the log and tests). */
HIDDEN size_t nativeunwind_rows(void);
/* Collector: each library whose unwind data the walker does not wholly
 * follow (rules it refused, walks that stopped there; with no_eh_frame, no
 * .eh_frame_hdr at all and `walks` the walks that went through it by frame
 * pointers, listed only when there were some), those unloaded since
 * included. */
struct cfi_gaps;
HIDDEN void nativeunwind_gaps(void (*fn)(void *ctx, const char *path, const struct cfi_gaps *gaps,
                                         uint32_t walks, int no_eh_frame),
                              void *ctx);

#endif
