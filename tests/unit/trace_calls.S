/*
 * trace_calls: calls a tracing hook the way the JIT does (test_trace.c), and
 * records what the hook left in the registers it must keep.
 *
 *   void trace_test_enter(void *hook, uint64_t id, uint64_t sp, uint64_t out[32])
 *       R14 = id, R15 = sp; RDI RSI RDX RCX R8 R9 and XMM0-7 hold patterns;
 *       after the call out[] = RDI RSI RDX RCX R8 R9 RBX RBP R12 R13 R14 R15,
 *       then XMM0-7 (two words each)
 *   void trace_test_leave(void *hook, uint64_t id, uint64_t sp, uint64_t out[32])
 *       RDI = id, RSI = sp; RAX RDX XMM0 XMM1 hold patterns; after the call
 *       out[] = RAX RDX RBX RBP R12 R13 R14 R15, then XMM0 XMM1
 * The call is made with RSP = 8 (mod 16) at the hook's entry, as the JIT's.
 */
#if defined(__x86_64__)
    .intel_syntax noprefix
    .text

.macro SAVE_CALLEE
    push rbx
    push rbp
    push r12
    push r13
    push r14
    push r15
.endm

.macro RESTORE_CALLEE
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbp
    pop rbx
.endm

/* xmmN := (pattern N, pattern N + 0x100) */
.macro FILL_XMM n
    mov rax, 0x5100000000000000 + \n
    movq xmm\n, rax
    mov rax, 0x5100000000000100 + \n
    pinsrq xmm\n, rax, 1
.endm

    .globl trace_test_enter
    .type trace_test_enter, @function
trace_test_enter:
    SAVE_CALLEE
    mov r12, rcx                /* out */
    mov r13, rsp                /* to restore */
    mov rbx, 0xB0B0B0B0B0B0B0B0
    mov rbp, 0xB1B1B1B1B1B1B1B1
    mov r14, rsi
    mov r15, rdx
    mov rax, rdi                /* the hook */
    and rsp, -16
    sub rsp, 8
    push rax
    FILL_XMM 0
    FILL_XMM 1
    FILL_XMM 2
    FILL_XMM 3
    FILL_XMM 4
    FILL_XMM 5
    FILL_XMM 6
    FILL_XMM 7
    pop rax
    add rsp, 8
    mov rdi, 0xA0A0A0A0A0A0A0A0
    mov rsi, 0xA1A1A1A1A1A1A1A1
    mov rdx, 0xA2A2A2A2A2A2A2A2
    mov rcx, 0xA3A3A3A3A3A3A3A3
    mov r8, 0xA4A4A4A4A4A4A4A4
    mov r9, 0xA5A5A5A5A5A5A5A5
    call rax
    mov [r12], rdi
    mov [r12 + 8], rsi
    mov [r12 + 16], rdx
    mov [r12 + 24], rcx
    mov [r12 + 32], r8
    mov [r12 + 40], r9
    mov [r12 + 48], rbx
    mov [r12 + 56], rbp
    mov [r12 + 64], r12
    mov [r12 + 72], r13
    mov [r12 + 80], r14
    mov [r12 + 88], r15
    movdqu [r12 + 96], xmm0
    movdqu [r12 + 112], xmm1
    movdqu [r12 + 128], xmm2
    movdqu [r12 + 144], xmm3
    movdqu [r12 + 160], xmm4
    movdqu [r12 + 176], xmm5
    movdqu [r12 + 192], xmm6
    movdqu [r12 + 208], xmm7
    mov rsp, r13
    RESTORE_CALLEE
    ret
    .size trace_test_enter, . - trace_test_enter

    .globl trace_test_leave
    .type trace_test_leave, @function
trace_test_leave:
    SAVE_CALLEE
    mov r12, rcx
    mov r13, rsp
    mov rbx, 0xB0B0B0B0B0B0B0B0
    mov rbp, 0xB1B1B1B1B1B1B1B1
    mov r14, 0xB4B4B4B4B4B4B4B4
    mov r15, 0xB5B5B5B5B5B5B5B5
    mov r8, rdi                 /* the hook */
    mov rdi, rsi                /* id */
    mov rsi, rdx                /* sp */
    FILL_XMM 0
    FILL_XMM 1
    mov rax, 0xC0C0C0C0C0C0C0C0
    mov rdx, 0xC2C2C2C2C2C2C2C2
    and rsp, -16
    call r8
    mov [r12], rax
    mov [r12 + 8], rdx
    mov [r12 + 16], rbx
    mov [r12 + 24], rbp
    mov [r12 + 32], r12
    mov [r12 + 40], r13
    mov [r12 + 48], r14
    mov [r12 + 56], r15
    movdqu [r12 + 64], xmm0
    movdqu [r12 + 80], xmm1
    mov rsp, r13
    RESTORE_CALLEE
    ret
    .size trace_test_leave, . - trace_test_leave
#endif

    .section .note.GNU-stack,"",@progbits
