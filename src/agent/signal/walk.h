/*
 * walk: the stack walker, one step at a time from a set of registers up to
 * the thread's first frame, async-signal-safe.  The signal handler walks
 * the interrupted thread with it; a callback walks its own thread with
 * walk_self (an allocation, a throw, a contended lock: the stack of the
 * thread where it happened, mixed frames as for CPU samples).
 *
 * What each step does depends on the code the frame is in:
 *   - managed code (mcode.h: JIT-compiled, or ReadyToRun with its unwind
 *     codes): the frame's shape (mshape.h) says where the return address
 *     is, in the prologue, the body or an epilogue alike; a funclet steps
 *     to its parent's caller; an on-stack-replaced method steps over the
 *     tier-0 frame it replaced, to the real caller;
 *   - native code with DWARF CFI (nativeunwind.h), including the C
 *     library's signal trampoline (the interrupted registers are in the
 *     ucontext the kernel saved) and the runtime's hijack stub (whose CFI
 *     is off by one slot);
 *   - any other code where the sample landed (precode and dispatch stubs,
 *     write barriers, thunks: the runtime's generated code, frameless): the
 *     return address on top of the stack, or one or two words above it,
 *     when it is a call site in code the walker knows;
 *   - anything else: the RBP chain, as a guess (WALK_GUESSED).
 * A return address the runtime replaced to stop the thread for a GC
 * (hijack.h) is put back from the thread's Thread object.  Every read is
 * checked against [sp, hi), the thread's stack, and every step must move
 * up the stack, so a walk gone wrong stops instead of faulting or looping.
 */
#ifndef CORSCOPE_WALK_H
#define CORSCOPE_WALK_H

#include <stdint.h>

#include "common/visibility.h"

enum walk_flags {
    WALK_TRUNCATED = 1u << 0,   /* stopped at the depth limit */
    WALK_GUESSED = 1u << 1,     /* a frame in code with no unwind data was stepped by RBP */
    WALK_NO_STACK = 1u << 2,    /* the stack pointer was in no known mapping */
    WALK_STOP_BOUNDS = 1u << 3, /* the walk left the stack or made no progress */
    WALK_STOP_RULE = 1u << 4,   /* a CFI rule we cannot follow */
    WALK_HIJACKED = 1u << 5,    /* a return address hijacked by the runtime was put right */
    WALK_STOP_HIJACK = 1u << 6, /* ... or could not be, and the walk stopped there */
    WALK_PENDING = 1u << 7,     /* it crossed a library whose table was not parsed yet */
};
#define WALK_FAILED (WALK_NO_STACK | WALK_STOP_BOUNDS | WALK_STOP_RULE | WALK_STOP_HIJACK)

struct walk_regs {
    uintptr_t pc, sp, fp;
    uintptr_t thread; /* the runtime's Thread* (the profiling API's ThreadID), 0: unknown */
    uintptr_t lr;     /* arm64: the interrupted x30, valid while pc is exact (0: spent) */
};

/* Receives the index-th instruction pointer (leaf first) and the stack
 * pointer in that frame (its lowest address: a frame's own memory lies
 * from there up to the next frame's sp). */
typedef void (*walk_put)(void *ctx, uint64_t index, uint64_t pc, uintptr_t sp);

/* Walks from `regs` (pc exact: an interrupted or current instruction), never
 * reading outside [regs->sp, hi); hi == 0 means the stack is unknown and only
 * the first frame is given.  Puts at most `max` pcs; returns how many, and
 * ORs enum walk_flags into *flags.  Call between thread_rings_handler_enter/leave
 * or thread_rings_walker_enter/leave. */
HIDDEN uint64_t walk_stack(struct walk_regs regs, uintptr_t hi, uint64_t max, walk_put put,
                           void *ctx, uint32_t *flags);

/* A thread's last walk of its own stack, so that the next one can stop
 * where the two stacks meet (x86-64; callbacks only, never the signal
 * handler).  Events come in storms from the same code (a loop that
 * throws, a lock waited for again and again): the frames at the root of
 * the stack, and often all of them, are the frames of the last walk.  A
 * walk that reaches a frame with the same pc, sp, frame pointer and
 * exactness as a frame of the last one, and finds every return address of
 * the last walk's frames above it still in its slot (8 bytes under the
 * frame's sp, where each step read it), takes those frames as they were
 * instead of unwinding them again: the same slots hold the same words, so
 * the unwinding would find the same frames (a frame pointer that changed
 * from one frame to the next must be in the slot under the return address
 * too).  A walk that crossed a signal frame, guessed, put back a hijacked
 * return address, waited for tables or was cut at the depth limit is not
 * remembered (the last one stays).  frames: 2 * cap entries (the last walk
 * and the one being made), owned by the caller; frames NULL: no memo. */
struct walk_memo_frame {
    uintptr_t pc, sp, fp;
    uintptr_t exact;
};
struct walk_memo {
    struct walk_memo_frame *frames;
    uint32_t cap;       /* frames of one walk */
    uint32_t count;     /* frames of the last walk, 0: none */
    uint32_t current;   /* which half holds the last walk */
    uint32_t end_flags; /* how the last walk stopped (WALK_STOP_BOUNDS or 0) */
    uint64_t reused;    /* frames taken from the memo (for tests and counters) */
};

/* walk_stack, remembering the walk in `memo` and taking the frames of the
 * last one where the two meet (memo NULL: walk_stack). */
HIDDEN uint64_t walk_stack_memo(struct walk_regs regs, uintptr_t hi, uint64_t max, walk_put put,
                                void *ctx, uint32_t *flags, struct walk_memo *memo);

/* The calling thread's own stack, from the caller of walk_self, into ips
 * (at most max).  stack_hi: the top of the thread's stack.  Returns the
 * depth; *flags as walk_stack. */
HIDDEN uint64_t walk_self(uintptr_t stack_hi, uint64_t *ips, uint64_t max, uint32_t *flags);

#endif
