/*
 * elt_x64: the Enter/Leave/Tailcall hooks of tracing mode (the runtime's
 * fast path, SetEnterLeaveFunctionHooks3), x86-64 System V.  The project's
 * only assembly, because the JIT's calling convention for these hooks is
 * not C's (docs in /work/notes/trace_attach.md A1, the JIT's
 * targetamd64.h and codegenxarch.cpp):
 *
 *   Enter     id in R14, caller SP in R15.  Must keep RDI RSI RDX RCX R8 R9
 *             (arguments), XMM0-7, and the callee-saved registers; may
 *             destroy RAX, R10, R11 (and XMM8-15, upper vector halves).
 *   Leave     id in RDI, caller SP in RSI.  Must keep RAX, RDX, XMM0, XMM1
 *   Tailcall  (the return value) and the callee-saved registers; may destroy
 *             RCX RSI RDI R8-R11 and the other vector registers.  A tail
 *             call ends the caller's activation: the same hook as Leave.
 *   Every hook is entered by a `call` with RSP = 8 (mod 16).
 *
 * The fast paths keep the thread's shadow stack (shadow.h) in those
 * registers alone plus two pushed ones: find the (parent node, id) slot,
 * count the call, push a frame; on Leave check that the top frame is
 * (id, caller SP), add the activation's times and mark the frame returned
 * (the next Enter at that depth takes its place, so a loop of calls moves
 * no counter of depth).  Anything else
 * jumps, with the registers as they came, to a slow stub that saves every
 * register either hook must keep (128 bits of XMM0-7), aligns the stack and
 * calls the C slow path.  The thread's state is one initial-exec TLS word.
 * Two variants: timed (a TSC read at Enter and at Leave) and counts only.
 * Call-frame information is given throughout, so a sampled stack unwinds
 * through a hook.
 */
#include "agent/trace/layout.h"

#if defined(__x86_64__)
    .intel_syntax noprefix
    .text

/* Saves every register a hook must keep under an RBP frame and aligns the
 * stack for C. */
.macro SAVE_FOR_C
    push rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset rbp, 0
    mov rbp, rsp
    .cfi_def_cfa_register rbp
    sub rsp, 208
    mov [rbp - 8], rax
    mov [rbp - 16], rcx
    mov [rbp - 24], rdx
    mov [rbp - 32], rsi
    mov [rbp - 40], rdi
    mov [rbp - 48], r8
    mov [rbp - 56], r9
    mov [rbp - 64], r10
    mov [rbp - 72], r11
    movdqu [rbp - 96], xmm0
    movdqu [rbp - 112], xmm1
    movdqu [rbp - 128], xmm2
    movdqu [rbp - 144], xmm3
    movdqu [rbp - 160], xmm4
    movdqu [rbp - 176], xmm5
    movdqu [rbp - 192], xmm6
    movdqu [rbp - 208], xmm7
    and rsp, -16
.endm

.macro RESTORE_AND_RETURN
    mov rax, [rbp - 8]
    mov rcx, [rbp - 16]
    mov rdx, [rbp - 24]
    mov rsi, [rbp - 32]
    mov rdi, [rbp - 40]
    mov r8, [rbp - 48]
    mov r9, [rbp - 56]
    mov r10, [rbp - 64]
    mov r11, [rbp - 72]
    movdqu xmm0, [rbp - 96]
    movdqu xmm1, [rbp - 112]
    movdqu xmm2, [rbp - 128]
    movdqu xmm3, [rbp - 144]
    movdqu xmm4, [rbp - 160]
    movdqu xmm5, [rbp - 176]
    movdqu xmm6, [rbp - 192]
    movdqu xmm7, [rbp - 208]
    mov rsp, rbp
    pop rbp
    .cfi_def_cfa rsp, 8
    .cfi_restore rbp
    ret
.endm

/* r10 := the thread's state (NULL before its first call); r11 destroyed. */
.macro LOAD_STATE
    mov r11, qword ptr [rip + trace_self@gottpoff]
    mov r10, qword ptr fs:[r11]
.endm

/* With r10 = state, rax = the new frame, r11 = its parent node, rcx and rdx
 * pushed: rdx := the node of (r11, r14), or a jump to `miss`. */
.macro FIND_NODE miss
    mov rcx, r14
    imul rcx, rcx, TRACE_HASH_K
    xor rcx, r11
    imul rcx, rcx, TRACE_HASH_K
    shr rcx, 32
1:
    and rcx, [r10 + TRT_MASK]
    mov rdx, rcx
    shl rdx, 4
    add rdx, [r10 + TRT_SLOTS]
    cmp [rdx], r11
    jne 2f
    mov rdx, [rdx + 8]
    cmp [rdx + TRN_METHOD], r14
    je 3f
    inc rcx
    jmp 1b
2:
    cmp qword ptr [rdx + 8], 0
    je \miss
    inc rcx
    jmp 1b
3:
.endm

    .p2align 4
    .type trace_enter_slow, @function
trace_enter_slow:
    .cfi_startproc
    SAVE_FOR_C
    mov rdi, r14
    mov rsi, r15
    call shadow_slow_enter
    RESTORE_AND_RETURN
    .cfi_endproc
    .size trace_enter_slow, . - trace_enter_slow

    .p2align 4
    .type trace_leave_slow, @function
trace_leave_slow:
    .cfi_startproc
    SAVE_FOR_C
    call shadow_slow_leave
    RESTORE_AND_RETURN
    .cfi_endproc
    .size trace_leave_slow, . - trace_leave_slow

/* With rdx = the node, rax = the frame's slot: counts the call and fills
 * the frame (its SP last: a frame whose SP is 0 is one that returned). */
.macro FILL_FRAME timed
    inc qword ptr [rdx + TRN_CALLS]
    mov [rax + TRF_NODE], rdx
    .if \timed
    inc qword ptr [rdx + TRN_ACTIVE]
    mov qword ptr [rax + TRF_CHILD], 0
    mov rcx, rax
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [rcx + TRF_T0], rax
    mov [rcx + TRF_SP], r15
    .else
    mov [rax + TRF_SP], r15
    .endif
.endm

/* Enter.  A Leave does not pop its frame but marks it returned (SP 0), so
 * that a method called again and again from one caller takes the place of
 * its last call without moving the stack's depth: only the top frame can
 * be one that returned, and every other path pops it first.  When the
 * returned frame is a call of the same method (a loop calling it), its
 * node is this call's too (same method, same caller): no lookup, and the
 * counting hooks then touch no register but the three they may. */
.macro ENTER_HOOK timed
    LOAD_STATE
    test r10, r10
    jz trace_enter_slow
    mov rax, [r10 + TRT_DEPTH]
    cmp rax, [r10 + TRT_CAP]
    jae trace_enter_slow
    shl rax, TRF_SHIFT
    add rax, [r10 + TRT_FRAMES]          /* the slot above the top */
    cmp qword ptr [rax - TRF_SIZE + TRF_SP], 0
    jne 5f
    sub rax, TRF_SIZE                     /* the top returned: this call takes its place */
    mov r11, [rax + TRF_NODE]
    cmp [r11 + TRN_METHOD], r14
    jne 6f
    .if \timed                            /* the same method again: the same node */
    push rcx
    .cfi_adjust_cfa_offset 8
    push rdx
    .cfi_adjust_cfa_offset 8
    mov rdx, r11
    FILL_FRAME 1
    pop rdx
    .cfi_adjust_cfa_offset -8
    pop rcx
    .cfi_adjust_cfa_offset -8
    .else
    inc qword ptr [r11 + TRN_CALLS]
    mov [rax + TRF_SP], r15
    .endif
    ret
6:
    push rcx
    .cfi_adjust_cfa_offset 8
    push rdx
    .cfi_adjust_cfa_offset 8
    mov r11, [rax - TRF_SIZE + TRF_NODE]  /* the parent: the frame below */
    FIND_NODE 9f
    FILL_FRAME \timed
    pop rdx
    .cfi_adjust_cfa_offset -8
    pop rcx
    .cfi_adjust_cfa_offset -8
    ret
5:                                        /* a call from the top frame */
    push rcx
    .cfi_adjust_cfa_offset 8
    push rdx
    .cfi_adjust_cfa_offset 8
    mov r11, [rax - TRF_SIZE + TRF_NODE]  /* the parent: the top's node (the sentinel's is the root) */
    FIND_NODE 9f
    FILL_FRAME \timed
    inc qword ptr [r10 + TRT_DEPTH]
    pop rdx
    .cfi_adjust_cfa_offset -8
    pop rcx
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_adjust_cfa_offset 16
9:
    pop rdx
    .cfi_adjust_cfa_offset -8
    pop rcx
    .cfi_adjust_cfa_offset -8
    jmp trace_enter_slow
.endm

/* Leave and Tailcall: the top frame (or, when the top returned already,
 * the one below it, the top popped) must be (id, caller SP). */
.macro LEAVE_HOOK timed
    LOAD_STATE
    test r10, r10
    jz trace_leave_slow
    mov rcx, [r10 + TRT_DEPTH]
    test rcx, rcx
    jz trace_leave_slow
    cmp qword ptr [r10 + TRT_OVERFLOW], 0
    jne trace_leave_slow
    shl rcx, TRF_SHIFT
    add rcx, [r10 + TRT_FRAMES]
    sub rcx, TRF_SIZE                     /* the top frame */
    cmp qword ptr [rcx + TRF_SP], 0
    jne 1f
    dec qword ptr [r10 + TRT_DEPTH]       /* it returned: pop it, the caller is below */
    sub rcx, TRF_SIZE
1:
    cmp [rcx + TRF_SP], rsi
    jne trace_leave_slow
    mov r8, [rcx + TRF_NODE]
    cmp [r8 + TRN_METHOD], rdi
    jne trace_leave_slow
    .if \timed
    mov r9, rax                           /* the return value: rax and rdx */
    mov rdi, rdx
    rdtsc
    shl rdx, 32
    or rax, rdx
    xor edx, edx
    sub rax, [rcx + TRF_T0]
    cmovb rax, rdx                        /* a clock that went back: 0 */
    add [rcx - TRF_SIZE + TRF_CHILD], rax /* the caller's frame, or the sentinel */
    mov rsi, rax
    sub rsi, [rcx + TRF_CHILD]
    cmovb rsi, rdx
    add [r8 + TRN_SELF], rsi
    dec qword ptr [r8 + TRN_ACTIVE]
    jnz 2f                                /* an inner activation of a cut path */
    add [r8 + TRN_INCL], rax
    cmp rax, [r8 + TRN_MAX]
    jbe 2f
    mov [r8 + TRN_MAX], rax
2:
    mov rax, r9
    mov rdx, rdi
    .endif
    mov qword ptr [rcx + TRF_SP], 0       /* returned */
    ret
.endm

/* ---- the four hooks ----------------------------------------------------------- */

    .globl trace_enter_timed
    .hidden trace_enter_timed
    .type trace_enter_timed, @function
    .p2align 4
trace_enter_timed:
    .cfi_startproc
    ENTER_HOOK 1
    .cfi_endproc
    .size trace_enter_timed, . - trace_enter_timed

    .globl trace_leave_timed
    .hidden trace_leave_timed
    .type trace_leave_timed, @function
    .p2align 4
trace_leave_timed:
    .cfi_startproc
    LEAVE_HOOK 1
    .cfi_endproc
    .size trace_leave_timed, . - trace_leave_timed

    .globl trace_enter_counts
    .hidden trace_enter_counts
    .type trace_enter_counts, @function
    .p2align 4
trace_enter_counts:
    .cfi_startproc
    ENTER_HOOK 0
    .cfi_endproc
    .size trace_enter_counts, . - trace_enter_counts

    .globl trace_leave_counts
    .hidden trace_leave_counts
    .type trace_leave_counts, @function
    .p2align 4
trace_leave_counts:
    .cfi_startproc
    LEAVE_HOOK 0
    .cfi_endproc
    .size trace_leave_counts, . - trace_leave_counts

/* ---- the hooks' own cost ---------------------------------------------------------- */

/* void trace_calibrate_loop(uint64_t calls, uint64_t outer_id, uint64_t inner_id):
 * what a traced method that makes `calls` calls of an empty traced method
 * looks like to the timing hooks: Enter of outer_id, the calls, Leave of
 * outer_id, with the same hooks the runtime was given.  shadow_calibrate
 * reads the two nodes' times. */
    .globl trace_calibrate_loop
    .hidden trace_calibrate_loop
    .type trace_calibrate_loop, @function
    .p2align 4
trace_calibrate_loop:
    .cfi_startproc
    push rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset rbp, 0
    mov rbp, rsp
    .cfi_def_cfa_register rbp
    push rbx
    push r12
    push r13
    push r14
    push r15
    sub rsp, 8
    .cfi_rel_offset rbx, -8
    .cfi_rel_offset r12, -16
    .cfi_rel_offset r13, -24
    .cfi_rel_offset r14, -32
    .cfi_rel_offset r15, -40
    mov rbx, rdi
    mov r12, rsi
    mov r13, rdx
    mov r14, r12
    lea r15, [rbp + 16]
    call trace_enter_timed
    test rbx, rbx
    jz 2f
1:
    call trace_calibrate_method
    dec rbx
    jnz 1b
2:
    mov rdi, r12
    lea rsi, [rbp + 16]
    call trace_leave_timed
    add rsp, 8
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    pop rbp
    .cfi_def_cfa rsp, 8
    ret
    .cfi_endproc
    .size trace_calibrate_loop, . - trace_calibrate_loop

/* An empty traced method as the JIT compiles it (id in r13): a frame, the
 * callee-saved registers that carry the hooks' arguments kept, Enter and
 * Leave. */
    .type trace_calibrate_method, @function
    .p2align 4
trace_calibrate_method:
    .cfi_startproc
    push rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset rbp, 0
    mov rbp, rsp
    .cfi_def_cfa_register rbp
    push r14
    push r15
    .cfi_rel_offset r14, -8
    .cfi_rel_offset r15, -16
    mov r14, r13
    lea r15, [rbp + 16]
    call trace_enter_timed
    mov rdi, r13
    lea rsi, [rbp + 16]
    call trace_leave_timed
    pop r15
    pop r14
    pop rbp
    .cfi_def_cfa rsp, 8
    ret
    .cfi_endproc
    .size trace_calibrate_method, . - trace_calibrate_method

#endif

    .section .note.GNU-stack,"",@progbits
