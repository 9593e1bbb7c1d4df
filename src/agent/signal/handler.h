/*
 * sighandler: the signal handler of the signal sampler, and the record it
 * leaves in the interrupted thread's ring (sigslots.h).
 *
 * The handler runs on the sampled thread, wherever it was: in managed code,
 * in the runtime, in libc, in another signal handler.  It is
 * async-signal-safe: no allocation, no lock, no runtime call, errno
 * preserved.  It walks the interrupted stack from the signal's ucontext:
 * native code with DWARF CFI through the unwind tables of its module
 * (nativeunwind.h), everything else (JIT'd code, stubs) through the RBP
 * frame chain; every address is checked against the thread's stack mapping
 * before it is read.  It also copies the top SLOTS_TOP_WORDS words of the
 * stack, so the collector can recover the caller of a managed leaf that was
 * caught before setting up its frame (or after tearing it down).
 *
 * Ring record, in 64-bit words:
 *   [0] total words (bits 0-31), depth (32-47), flags (48-63)
 *   [1] CLOCK_MONOTONIC time, ns
 *   [2] weight (bits 0-31), top words copied (32-63)
 *   [3] interrupted RSP   [4] interrupted RBP
 *   [5] for a wall-clock request (tgkill): the thread's CPU time, ns, as the
 *       handler ends; 0 for a CPU timer's signal
 *   [6 ...] the top words, then `depth` instruction pointers, leaf first
 */
#ifndef CORSCOPE_SIGHANDLER_H
#define CORSCOPE_SIGHANDLER_H

#include <stdint.h>

#include "common/visibility.h"

enum handler_flags {
    HANDLER_TRUNCATED = 1u << 0,   /* stopped at max depth or ring space */
    HANDLER_LEAF_CFI = 1u << 1,    /* the leaf was unwound by CFI: exact */
    HANDLER_NO_STACK = 1u << 2,    /* the stack pointer was in no known mapping */
    HANDLER_STOP_BOUNDS = 1u << 3, /* the walk left the stack mapping */
    HANDLER_STOP_RULE = 1u << 4,   /* a CFI rule we cannot follow */
};

/* Installs the handler for `signal`.  Returns 0, or -1 when the program
 * already handles that signal (we do not take it over) or sigaction fails. */
HIDDEN int handler_install(int signal);
/* The handler stays installed for the life of the process (a pending
 * signal after shutdown must not kill it); it simply finds no thread. */

/* Decodes a record header. */
static inline uint32_t handler_record_words(uint64_t w0) { return (uint32_t)w0; }
static inline uint32_t handler_record_depth(uint64_t w0) { return (uint32_t)(w0 >> 32) & 0xffff; }
static inline uint32_t handler_record_flags(uint64_t w0) { return (uint32_t)(w0 >> 48); }

#endif
