/*
 * elt_arm64: the Enter/Leave/Tailcall hooks of tracing mode (the runtime's
 * fast path, SetEnterLeaveFunctionHooks3) for arm64, the twin of
 * elt_x64.S: the same shadow stack (shadow.h, layout.h), the same paths.
 *
 * The runtime gives ELT3 hooks without info straight to the JIT (its
 * DetermineAndSetEnterLeaveFunctionHooksForJit, vm/eetoprofinterfaceimpl.cpp:
 * its ProfileEnterNaked wrapper only for the WithInfo hooks), so the JIT's
 * code calls them with its own convention, not C's (src/coreclr/jit/
 * targetarm64.h: REG_PROFILER_ENTER_ARG_*, RBM_PROFILER_*_TRASH; the
 * runtime's own ProfileEnterNaked in vm/arm64/asmhelpers.S keeps the same
 * registers):
 *
 *   Enter, Leave, Tailcall: id in X10, caller SP in X11, called by BL/BLR
 *   from the method's prologue or epilogue with SP 16-byte aligned.  Must
 *   keep X0-X8 (arguments, X8 the return buffer; on Leave the return value
 *   in X0/X1), Q0-Q7 whole (arguments, HFA and vector returns), X29 (FP),
 *   and the callee-saved X19-X28, D8-D15 and SP; may destroy X9-X17, the
 *   flags and V16-V31 (RBM_PROFILER_*_TRASH: callee-trash minus arguments,
 *   return buffer and FP).  X30 is the return address the BL set.
 *
 * The fast paths use X9-X17 only and no stack: a leaf with its return
 * address in X30, which the default call-frame information describes.
 * What they cannot do jumps, with the registers as they came, to a slow
 * stub that saves X0-X8 and Q0-Q7 under a frame record and calls the C
 * slow path (which keeps X19-X28 and D8-D15 as every C function does).
 * The thread's state is one initial-exec TLS word.  The tick count is the
 * virtual counter CNTVCT_EL0 (constant rate by the architecture, the same
 * on every core), read without an ISB, as the x86-64 hooks read the TSC
 * without a fence.  A frame's SP is stored last with a release, so the
 * loop, reading it with an acquire (shadow_open_frames), sees the frame's
 * other words as the hook wrote them.
 */
#include "agent/trace/layout.h"

#if defined(__aarch64__)
    .text

/* x9 := the thread's state (NULL before its first call); x12 destroyed. */
.macro LOAD_STATE
    mrs x9, tpidr_el0
    adrp x12, :gottprel:trace_self
    ldr x12, [x12, #:gottprel_lo12:trace_self]
    ldr x9, [x9, x12]
.endm

/* Saves the registers a hook must keep that C may destroy (X0-X8, Q0-Q7)
 * under a frame record, calls \fn(x10, x11), restores them and returns. */
.macro CALL_C fn
    stp x29, x30, [sp, #-224]!
    .cfi_def_cfa_offset 224
    .cfi_offset x29, -224
    .cfi_offset x30, -216
    mov x29, sp
    stp x0, x1, [sp, #16]
    stp x2, x3, [sp, #32]
    stp x4, x5, [sp, #48]
    stp x6, x7, [sp, #64]
    str x8, [sp, #80]
    stp q0, q1, [sp, #96]
    stp q2, q3, [sp, #128]
    stp q4, q5, [sp, #160]
    stp q6, q7, [sp, #192]
    mov x0, x10
    mov x1, x11
    bl \fn
    ldp x0, x1, [sp, #16]
    ldp x2, x3, [sp, #32]
    ldp x4, x5, [sp, #48]
    ldp x6, x7, [sp, #64]
    ldr x8, [sp, #80]
    ldp q0, q1, [sp, #96]
    ldp q2, q3, [sp, #128]
    ldp q4, q5, [sp, #160]
    ldp q6, q7, [sp, #192]
    ldp x29, x30, [sp], #224
    .cfi_def_cfa_offset 0
    .cfi_restore x29
    .cfi_restore x30
    ret
.endm

    .p2align 4
    .type trace_enter_slow, %function
trace_enter_slow:
    .cfi_startproc
    CALL_C shadow_slow_enter
    .cfi_endproc
    .size trace_enter_slow, . - trace_enter_slow

    .p2align 4
    .type trace_leave_slow, %function
trace_leave_slow:
    .cfi_startproc
    CALL_C shadow_slow_leave
    .cfi_endproc
    .size trace_leave_slow, . - trace_leave_slow

/* With x9 = state, x15 = the parent node, x10 = id: x13 := the node of
 * (x15, x10), or a branch to \miss.  x14, x16, x17 destroyed. */
.macro FIND_NODE miss
    movz x14, #(TRACE_HASH_K & 0xFFFF)
    movk x14, #(TRACE_HASH_K >> 16), lsl #16
    mul x16, x10, x14
    eor x16, x16, x15
    mul x16, x16, x14
    lsr x16, x16, #32
    ldr x14, [x9, #TRT_SLOTS]
1:
    ldr x17, [x9, #TRT_MASK]
    and x16, x16, x17
    add x17, x14, x16, lsl #4             /* the slot: (parent, node) */
    ldp x13, x17, [x17]
    cmp x13, x15
    b.ne 2f
    ldr x13, [x17, #TRN_METHOD]
    cmp x13, x10
    b.eq 3f
    add x16, x16, #1
    b 1b
2:
    cbz x17, \miss                        /* an empty slot: a path not seen yet */
    add x16, x16, #1
    b 1b
3:
    mov x13, x17
.endm

/* With x13 = the node, x12 = the frame's slot: counts the call and fills
 * the frame, its SP last (a frame whose SP is 0 is one that returned). */
.macro FILL_FRAME timed
    ldr x14, [x13, #TRN_CALLS]
    add x14, x14, #1
    str x14, [x13, #TRN_CALLS]
    str x13, [x12, #TRF_NODE]
    .if \timed
    ldr x14, [x13, #TRN_ACTIVE]
    add x14, x14, #1
    str x14, [x13, #TRN_ACTIVE]
    mrs x16, cntvct_el0
    stp x16, xzr, [x12, #TRF_T0]          /* t0, and no callee time yet */
    .endif
    add x17, x12, #TRF_SP
    stlr x11, [x17]
.endm

/* Enter: the same paths as elt_x64.S's.  A Leave marks its frame returned
 * (SP 0) instead of popping it, so a method called again and again from
 * one caller takes the place of its last call; when the returned frame is
 * a call of the same method, its node is this call's too. */
.macro ENTER_HOOK timed
    LOAD_STATE
    cbz x9, trace_enter_slow
    ldp x12, x13, [x9, #TRT_DEPTH]        /* depth, cap */
    cmp x12, x13
    b.hs trace_enter_slow
    ldr x13, [x9, #TRT_FRAMES]
    add x12, x13, x12, lsl #TRF_SHIFT     /* the slot above the top */
    ldr x14, [x12, #(TRF_SP - TRF_SIZE)]
    cbnz x14, 5f
    sub x12, x12, #TRF_SIZE               /* the top returned: this call takes its place */
    ldr x13, [x12, #TRF_NODE]
    ldr x14, [x13, #TRN_METHOD]
    cmp x14, x10
    b.ne 6f
    .if \timed                            /* the same method again: the same node */
    FILL_FRAME 1
    .else
    ldr x14, [x13, #TRN_CALLS]
    add x14, x14, #1
    str x14, [x13, #TRN_CALLS]
    str x11, [x12, #TRF_SP]               /* the node is the one there: no order needed */
    .endif
    ret
6:
    ldr x15, [x12, #(TRF_NODE - TRF_SIZE)] /* the parent: the frame below */
    FIND_NODE trace_enter_slow
    FILL_FRAME \timed
    ret
5:                                        /* a call from the top frame */
    ldr x15, [x12, #(TRF_NODE - TRF_SIZE)] /* the top's node (the sentinel's is the root) */
    FIND_NODE trace_enter_slow
    FILL_FRAME \timed
    ldr x14, [x9, #TRT_DEPTH]
    add x14, x14, #1
    str x14, [x9, #TRT_DEPTH]
    ret
.endm

/* Leave and Tailcall: the top frame (or, when the top returned already,
 * the one below it, the top popped) must be (id, caller SP). */
.macro LEAVE_HOOK timed
    LOAD_STATE
    cbz x9, trace_leave_slow
    ldr x12, [x9, #TRT_DEPTH]
    cbz x12, trace_leave_slow
    ldr x13, [x9, #TRT_OVERFLOW]
    cbnz x13, trace_leave_slow
    ldr x13, [x9, #TRT_FRAMES]
    add x12, x13, x12, lsl #TRF_SHIFT
    sub x12, x12, #TRF_SIZE               /* the top frame */
    ldr x13, [x12, #TRF_SP]
    cbnz x13, 1f
    ldr x13, [x9, #TRT_DEPTH]             /* it returned: pop it, the caller is below */
    sub x13, x13, #1
    str x13, [x9, #TRT_DEPTH]
    sub x12, x12, #TRF_SIZE
    ldr x13, [x12, #TRF_SP]
1:
    cmp x13, x11
    b.ne trace_leave_slow
    ldr x14, [x12, #TRF_NODE]
    ldr x13, [x14, #TRN_METHOD]
    cmp x13, x10
    b.ne trace_leave_slow
    .if \timed
    mrs x13, cntvct_el0
    ldp x15, x16, [x12, #TRF_T0]          /* t0, callee ticks */
    subs x13, x13, x15
    csel x13, xzr, x13, lo                /* a clock that went back: 0 */
    ldr x15, [x12, #(TRF_CHILD - TRF_SIZE)] /* the caller's frame, or the sentinel */
    add x15, x15, x13
    str x15, [x12, #(TRF_CHILD - TRF_SIZE)]
    subs x16, x13, x16
    csel x16, xzr, x16, lo
    ldr x15, [x14, #TRN_SELF]
    add x15, x15, x16
    str x15, [x14, #TRN_SELF]
    ldr x15, [x14, #TRN_ACTIVE]
    subs x15, x15, #1
    str x15, [x14, #TRN_ACTIVE]
    b.ne 2f                               /* an inner activation of a cut path */
    ldr x15, [x14, #TRN_INCL]
    add x15, x15, x13
    str x15, [x14, #TRN_INCL]
    ldr x15, [x14, #TRN_MAX]
    cmp x13, x15
    b.ls 2f
    str x13, [x14, #TRN_MAX]
2:
    .endif
    str xzr, [x12, #TRF_SP]               /* returned */
    ret
.endm

/* ---- the four hooks ----------------------------------------------------------- */

.macro HOOK name, body, timed
    .globl \name
    .hidden \name
    .type \name, %function
    .p2align 4
\name:
    .cfi_startproc
    \body \timed
    .cfi_endproc
    .size \name, . - \name
.endm

    HOOK trace_enter_timed, ENTER_HOOK, 1
    HOOK trace_leave_timed, LEAVE_HOOK, 1
    HOOK trace_enter_counts, ENTER_HOOK, 0
    HOOK trace_leave_counts, LEAVE_HOOK, 0

/* ---- the hooks' own cost ---------------------------------------------------------- */

/* void trace_calibrate_loop(uint64_t calls, uint64_t outer_id, uint64_t inner_id):
 * Enter of outer_id, `calls` calls of an empty traced method, Leave of
 * outer_id, through the timed hooks (shadow_calibrate reads the nodes). */
    .globl trace_calibrate_loop
    .hidden trace_calibrate_loop
    .type trace_calibrate_loop, %function
    .p2align 4
trace_calibrate_loop:
    .cfi_startproc
    stp x29, x30, [sp, #-48]!
    .cfi_def_cfa_offset 48
    .cfi_offset x29, -48
    .cfi_offset x30, -40
    mov x29, sp
    stp x19, x20, [sp, #16]
    str x21, [sp, #32]
    .cfi_offset x19, -32
    .cfi_offset x20, -24
    .cfi_offset x21, -16
    mov x19, x0
    mov x20, x1
    mov x21, x2
    mov x10, x20
    add x11, x29, #48
    bl trace_enter_timed
    cbz x19, 2f
1:
    mov x0, x21
    bl trace_calibrate_method
    subs x19, x19, #1
    b.ne 1b
2:
    mov x10, x20
    add x11, x29, #48
    bl trace_leave_timed
    ldp x19, x20, [sp, #16]
    ldr x21, [sp, #32]
    ldp x29, x30, [sp], #48
    .cfi_def_cfa_offset 0
    .cfi_restore x29
    .cfi_restore x30
    .cfi_restore x19
    .cfi_restore x20
    .cfi_restore x21
    ret
    .cfi_endproc
    .size trace_calibrate_loop, . - trace_calibrate_loop

/* An empty traced method as the arm64 JIT compiles it (id in x0, kept by
 * the hooks as an argument register): a frame record, Enter, Leave. */
    .type trace_calibrate_method, %function
    .p2align 4
trace_calibrate_method:
    .cfi_startproc
    stp x29, x30, [sp, #-16]!
    .cfi_def_cfa_offset 16
    .cfi_offset x29, -16
    .cfi_offset x30, -8
    mov x29, sp
    mov x10, x0
    add x11, x29, #16
    bl trace_enter_timed
    mov x10, x0
    add x11, x29, #16
    bl trace_leave_timed
    ldp x29, x30, [sp], #16
    .cfi_def_cfa_offset 0
    .cfi_restore x29
    .cfi_restore x30
    ret
    .cfi_endproc
    .size trace_calibrate_method, . - trace_calibrate_method

#endif

    .section .note.GNU-stack,"",%progbits
