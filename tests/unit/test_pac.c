/*
 * Tests of pointer-authentication stripping (arch.h: arch_strip_pac, which
 * the walker's steps apply to every return address they read, walk_step.h).
 * On arm64 with pointer authentication -- qemu-user's default CPU has it,
 * and tests/arm64/t_trace.sh runs this suite there in build/aarch64/
 * shadow-tests -- a return address signed as PAC-RET code signs it
 * (PACIA1716, a stack pointer as the modifier) is not the address, and
 * stripped it is again; a frame record whose saved return address is
 * signed is stepped through to the plain address.  Where there is none
 * (x86-64, an arm64 core without it) stripping leaves addresses alone.
 * Needs nothing but the agent's objects (it is built for arm64 too).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_PACA
#define HWCAP_PACA (1 << 30)
#endif
#endif

#include "agent/signal/walk_step.h"
#include "test.h"

/* ra signed with the A key and `modifier`, as PACIASP signs x30 with SP */
static uintptr_t sign(uintptr_t ra, uintptr_t modifier)
{
#if defined(__aarch64__)
    register uintptr_t x17 __asm__("x17") = ra;
    register uintptr_t x16 __asm__("x16") = modifier;
    __asm__ volatile("hint #8" : "+r"(x17) : "r"(x16)); /* pacia1716 */
    return x17;
#else
    (void)modifier;
    return ra;
#endif
}

static int pac_active(void)
{
#if defined(__aarch64__)
    return (getauxval(AT_HWCAP) & HWCAP_PACA) != 0;
#else
    return 0;
#endif
}

static void test_pac_strip_signed_return_addresses(void)
{
    uintptr_t code[3] = {(uintptr_t)(void *)test_pac_strip_signed_return_addresses + 8,
                         (uintptr_t)(void *)sign + 4, (uintptr_t)(void *)pac_active + 12};
    uintptr_t modifiers[3] = {0x7ffff000, 0x7fffe010, (uintptr_t)&code};
    int differ = 0, stripped = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            uintptr_t s = sign(code[i], modifiers[j]);
            differ += s != code[i];
            stripped += arch_strip_pac(s) == code[i];
        }
    CHECK_EQ(stripped, 9);
    /* 15 bits of authentication code with 48-bit addresses: a signature
     * of zero, 1 in 32,768 with the process's random keys, so one of the
     * nine in about 3,600 runs (it happened: 8 of 9 in a make test); three
     * zero signatures, about 1 in 4e11 */
    if (pac_active())
        CHECK(differ >= 7);
    else
        CHECK_EQ(differ, 0);
    if (pac_active())
        printf("  pac: active: %d of 9 signed return addresses differ, each stripped back\n", differ);
    else
        printf("  pac: not on this CPU: stripping leaves addresses alone\n");
}

static void test_pac_step_through_signed_frame_record(void)
{
    /* a stack: the interrupted frame's record at [4], {the caller's frame
     * pointer, its return address signed with the caller's SP} */
    uintptr_t stack[16] __attribute__((aligned(16)));
    memset(stack, 0, sizeof stack);
    uintptr_t ra = (uintptr_t)(void *)sign + 24;
    stack[4] = (uintptr_t)&stack[8];
    stack[5] = sign(ra, (uintptr_t)&stack[6]);
    struct walk_regs r;
    memset(&r, 0, sizeof r);
    r.sp = (uintptr_t)&stack[0];
    r.fp = (uintptr_t)&stack[4];
    REQUIRE(walk_fp_step(&r, (uintptr_t)&stack[16]));
    CHECK_EQ(r.pc, ra);
    CHECK_EQ(r.fp, (uintptr_t)&stack[8]);
    CHECK_EQ(r.sp, (uintptr_t)&stack[6]);
}

void suite_pac(void)
{
    RUN(test_pac_strip_signed_return_addresses);
    RUN(test_pac_step_through_signed_frame_record);
}
