/*
 * trace_calls_arm64: calls a tracing hook the way the arm64 JIT does
 * (test_trace.c), and records what the hook left in the registers it must
 * keep.  The twin of trace_calls.S.
 *
 *   void trace_test_enter(void *hook, uint64_t id, uint64_t sp, uint64_t out[64])
 *   void trace_test_leave(void *hook, uint64_t id, uint64_t sp, uint64_t out[64])
 *       X10 = id, X11 = sp; X0-X8, X19-X29, Q0-Q7 and Q8-Q15 hold patterns
 *       (X0-X8 = 0xA0A0A0A0A0A0A000 + n, X19-X29 = 0xB0B0B0B0B0B0B000 + n,
 *       Qn = (0x5100000000000000 + n, 0x5100000000000100 + n) for n < 16);
 *       X12-X17 hold garbage; the hook is called by BLR with SP 16-byte
 *       aligned.  After the call out[] = X0-X8, X19-X28, X29, SP after,
 *       SP before, Q0-Q7 (two words each), D8-D15.
 * Enter and Leave keep the same registers on arm64, so one harness serves
 * both.
 */
#if defined(__aarch64__)
    .text

/* qN := (0x5100000000000000 + N, 0x5100000000000100 + N) */
.macro FILL_Q n
    ldr x9, =(0x5100000000000000 + \n)
    fmov d\n, x9
    ldr x9, =(0x5100000000000100 + \n)
    mov v\n\().d[1], x9
.endm

    .globl trace_test_enter
    .globl trace_test_leave
    .type trace_test_enter, %function
    .type trace_test_leave, %function
    .p2align 4
trace_test_enter:
trace_test_leave:
    stp x29, x30, [sp, #-192]!
    mov x29, sp
    stp x19, x20, [sp, #16]
    stp x21, x22, [sp, #32]
    stp x23, x24, [sp, #48]
    stp x25, x26, [sp, #64]
    stp x27, x28, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    stp x3, x0, [sp, #160]        /* out, the hook */
    mov x9, sp
    str x9, [sp, #176]            /* SP before */
    mov x10, x1                   /* id */
    mov x11, x2                   /* caller SP */
    FILL_Q 0
    FILL_Q 1
    FILL_Q 2
    FILL_Q 3
    FILL_Q 4
    FILL_Q 5
    FILL_Q 6
    FILL_Q 7
    FILL_Q 8
    FILL_Q 9
    FILL_Q 10
    FILL_Q 11
    FILL_Q 12
    FILL_Q 13
    FILL_Q 14
    FILL_Q 15
    ldr x19, =0xB0B0B0B0B0B0B013
    ldr x20, =0xB0B0B0B0B0B0B014
    ldr x21, =0xB0B0B0B0B0B0B015
    ldr x22, =0xB0B0B0B0B0B0B016
    ldr x23, =0xB0B0B0B0B0B0B017
    ldr x24, =0xB0B0B0B0B0B0B018
    ldr x25, =0xB0B0B0B0B0B0B019
    ldr x26, =0xB0B0B0B0B0B0B01A
    ldr x27, =0xB0B0B0B0B0B0B01B
    ldr x28, =0xB0B0B0B0B0B0B01C
    ldr x0, =0xA0A0A0A0A0A0A000
    ldr x1, =0xA0A0A0A0A0A0A001
    ldr x2, =0xA0A0A0A0A0A0A002
    ldr x3, =0xA0A0A0A0A0A0A003
    ldr x4, =0xA0A0A0A0A0A0A004
    ldr x5, =0xA0A0A0A0A0A0A005
    ldr x6, =0xA0A0A0A0A0A0A006
    ldr x7, =0xA0A0A0A0A0A0A007
    ldr x8, =0xA0A0A0A0A0A0A008
    ldr x12, =0xDEADDEADDEAD0012
    ldr x13, =0xDEADDEADDEAD0013
    ldr x14, =0xDEADDEADDEAD0014
    ldr x15, =0xDEADDEADDEAD0015
    ldr x16, =0xDEADDEADDEAD0016
    ldr x17, =0xDEADDEADDEAD0017
    ldr x9, [sp, #168]            /* the hook */
    ldr x29, =0xB0B0B0B0B0B0B01D  /* last: the frame record is not used until the end */
    blr x9
    ldr x9, [sp, #160]            /* out (SP is checked below) */
    stp x0, x1, [x9, #0]
    stp x2, x3, [x9, #16]
    stp x4, x5, [x9, #32]
    stp x6, x7, [x9, #48]
    str x8, [x9, #64]
    stp x19, x20, [x9, #72]
    stp x21, x22, [x9, #88]
    stp x23, x24, [x9, #104]
    stp x25, x26, [x9, #120]
    stp x27, x28, [x9, #136]
    str x29, [x9, #152]
    mov x10, sp
    str x10, [x9, #160]
    ldr x10, [sp, #176]
    str x10, [x9, #168]
    stp q0, q1, [x9, #176]
    stp q2, q3, [x9, #208]
    stp q4, q5, [x9, #240]
    stp q6, q7, [x9, #272]
    stp d8, d9, [x9, #304]
    stp d10, d11, [x9, #320]
    stp d12, d13, [x9, #336]
    stp d14, d15, [x9, #352]
    ldp x19, x20, [sp, #16]
    ldp x21, x22, [sp, #32]
    ldp x23, x24, [sp, #48]
    ldp x25, x26, [sp, #64]
    ldp x27, x28, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    ldp x29, x30, [sp], #192
    ret
    .ltorg
    .size trace_test_enter, . - trace_test_enter
    .size trace_test_leave, . - trace_test_leave
#endif

    .section .note.GNU-stack,"",%progbits
