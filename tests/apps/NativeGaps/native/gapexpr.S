/*
 * A native function whose unwind data corscope's walker does not follow: its
 * CFA is given by a DWARF expression (DW_CFA_def_cfa_expression: rsp + 16),
 * as hand-written assembly and some compilers' code have.  Samples that land
 * in its loop end their walk there; `check` counts them under this library.
 */
    .text
    .globl gap_spin_expr
    .type gap_spin_expr, @function
gap_spin_expr:              /* long gap_spin_expr(long n): n turns of a loop */
    .cfi_startproc
    push %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_offset %rbx, -16
    .cfi_escape 0x0f, 0x02, 0x77, 0x10  /* def_cfa_expression: breg7 (rsp) + 16 */
    mov %rdi, %rax
1:  dec %rax
    jnz 1b
    pop %rbx
    .cfi_def_cfa rsp, 8
    ret
    .cfi_endproc
    .size gap_spin_expr, .-gap_spin_expr
    .section .note.GNU-stack, "", @progbits
