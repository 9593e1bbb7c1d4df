/*
 * hijack: return addresses the runtime replaced to stop a thread for a
 * garbage collection, put right.
 *
 * To suspend a thread interrupted in managed code that is not at a safe
 * point, CoreCLR overwrites the return address of the thread's innermost
 * managed frame with the address of its stub OnHijackTripThread, keeping
 * the real one in the thread's Thread object (m_pvHJRetAddr, next to
 * m_ppvHJRetAddrPtr, the address of the slot it overwrote).  Until the
 * method returns, or the runtime takes the hijack back, a walk reads the
 * stub's address where the caller should be; once the method has returned
 * into the stub, the thread waits inside it for the collection to end,
 * and the stub's CFI, off by one slot, leads nowhere.
 *
 * The stub is not exported: the loop finds it once in libcoreclr.so by its
 * first instructions (which push every register it saves: a sequence found
 * nowhere else in the library), looked for at the function starts that
 * .eh_frame_hdr lists (every byte of the code only when that table is in
 * an unusual encoding).  The handler then recognises a slot holding
 * the stub's address and finds the real return address in the sampled
 * thread's Thread object, by looking for the pair (a return address, the
 * slot's own address) rather than trusting field offsets that change from
 * one runtime build to the next, reading the object through the kernel (a
 * Thread freed meanwhile answers EFAULT, never a fault).
 */
#ifndef CORSCOPE_HIJACK_H
#define CORSCOPE_HIJACK_H

#include <stdint.h>

#include "common/visibility.h"

/* Looks for the stub once libcoreclr.so is loaded (cheap afterwards; any
 * thread but a signal handler's; takes the loader's list lock, which
 * glibc holds only while it edits the list, never across a library's
 * constructors).  A thread is hijacked only while the runtime suspends:
 * a launched program's agent searches at its first suspension
 * (RuntimeSuspendStarted, before any thread is hijacked), so a process
 * that never suspends never pays for the search (0.5 ms of CPU, by perf
 * over 20 runs of Memory exact 200); an attached one at once, since a
 * suspension may be under way. */
HIDDEN void hijack_refresh(void);
/* The stub's range [lo, hi), 0/0 while unknown (log, tests). */
HIDDEN void hijack_range(uintptr_t *lo, uintptr_t *hi);

/* Handler: is this the stub's entry (what a hijacked slot holds)? */
HIDDEN int hijack_is_stub(uintptr_t pc);
/* Handler: does `at` (an exact pc, or a return address - 1) lie inside it? */
HIDDEN int hijack_in_stub(uintptr_t at);
/* Handler: the real return address of the slot at `slot`, from the Thread
 * object at `thread` (the runtime's Thread*, which is the profiling API's
 * ThreadID); `is_code` says whether a value is a return address into code
 * the walker knows.  0 when it cannot be found. */
HIDDEN uintptr_t hijack_real(uintptr_t thread, uintptr_t slot, int (*is_code)(uintptr_t));

/* Tests: use this range as the stub's. */
HIDDEN void hijack_set_range(uintptr_t lo, uintptr_t hi);

#endif
