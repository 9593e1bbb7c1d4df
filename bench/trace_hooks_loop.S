/*
 * trace_hooks_loop: for bench/trace_hooks.c, calls an Enter hook and a
 * Leave hook PAIRS times the way a JIT-compiled caller in a loop does (id
 * in R14 and caller SP in R15 for Enter, in RDI and RSI for Leave).
 *   void trace_hooks_loop(void *enter, void *leave, uint64_t pairs, uint64_t id)
 */
    .intel_syntax noprefix
    .text
    .globl trace_hooks_loop
    .type trace_hooks_loop, @function
trace_hooks_loop:
    push rbx
    push rbp
    push r12
    push r13
    push r14
    push r15
    sub rsp, 8
    mov rbx, rdi
    mov rbp, rsi
    mov r12, rdx
    mov r13, rcx
1:
    mov r14, r13
    lea r15, [rsp + 64]
    call rbx
    mov rdi, r13
    lea rsi, [rsp + 64]
    call rbp
    dec r12
    jnz 1b
    add rsp, 8
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbp
    pop rbx
    ret
    .size trace_hooks_loop, . - trace_hooks_loop

    .globl trace_hooks_null
    .type trace_hooks_null, @function
trace_hooks_null:
    ret
    .size trace_hooks_null, . - trace_hooks_null

    .section .note.GNU-stack,"",@progbits
