/*
 * Tests of mshape (agent/signal/mshape.h): the prologue decoder and the step
 * it drives, on every prologue and epilogue shape CoreCLR's JIT emits on
 * x64, checked at every instruction against a small emulator of those
 * instructions; the unwind-code decoder against the prologue decoder on all
 * of CoreLib's ReadyToRun functions.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "agent/signal/mcode.h"
#include "agent/signal/thread_rings.h"
#include "test.h"

/* ---- an emulator of the prologue and epilogue instructions ------------------ */

#define RA 0x1111111111ull      /* the caller's return address */
#define PHYS_RA 0x2222222222ull /* a funclet's physical caller (the runtime) */

static uint64_t stack[2048];

struct cpu {
    uintptr_t rsp, rbp, r11;
};

/* Executes the instruction at c; returns its length, 0 at a ret or jump (the
 * end), -1 for an instruction the emulator does not know. */
static int emulate(const uint8_t *c, struct cpu *m)
{
    int32_t d;
    if (c[0] == 0x55) { m->rsp -= 8; *(uint64_t *)m->rsp = m->rbp; return 1; }
    if (c[0] >= 0x50 && c[0] <= 0x57) { m->rsp -= 8; *(uint64_t *)m->rsp = 0xdead; return 1; }
    if (c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) { m->rsp -= 8; *(uint64_t *)m->rsp = 0xdead; return 2; }
    if (c[0] == 0x5D) { m->rbp = *(uint64_t *)m->rsp; m->rsp += 8; return 1; }
    if (c[0] >= 0x58 && c[0] <= 0x5F) { m->rsp += 8; return 1; }
    if (c[0] == 0x41 && c[1] >= 0x58 && c[1] <= 0x5F) { m->rsp += 8; return 2; }
    if (c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xEC) { m->rsp -= c[3]; return 4; }
    if (c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xC4) { m->rsp += c[3]; return 4; }
    if (c[0] == 0x48 && (c[1] == 0x81) && (c[2] == 0xEC || c[2] == 0xC4)) {
        memcpy(&d, c + 3, 4);
        m->rsp += c[2] == 0xEC ? -(uintptr_t)d : (uintptr_t)d;
        return 7;
    }
    if (c[0] == 0x48 && ((c[1] == 0x8B && c[2] == 0xEC) || (c[1] == 0x89 && c[2] == 0xE5))) {
        m->rbp = m->rsp;
        return 3;
    }
    if (c[0] == 0x48 && c[1] == 0x8D && c[2] == 0x6C && c[3] == 0x24) { m->rbp = m->rsp + (int8_t)c[4]; return 5; }
    if (c[0] == 0x48 && c[1] == 0x8D && c[2] == 0xAC && c[3] == 0x24) {
        memcpy(&d, c + 4, 4);
        m->rbp = m->rsp + (uintptr_t)(intptr_t)d;
        return 8;
    }
    if (c[0] == 0x48 && c[1] == 0x8D && c[2] == 0x65) { m->rsp = m->rbp + (int8_t)c[3]; return 4; }
    if (c[0] == 0x4C && c[1] == 0x8D && c[2] == 0x5C && c[3] == 0x24) { m->r11 = m->rsp + (int8_t)c[4]; return 5; }
    if (c[0] == 0x4C && c[1] == 0x8D && c[2] == 0x9C && c[3] == 0x24) {
        memcpy(&d, c + 4, 4);
        m->r11 = m->rsp + (uintptr_t)(intptr_t)d;
        return 8;
    }
    if (c[0] == 0x49 && c[1] == 0x8B && c[2] == 0xE3) { m->rsp = m->r11; return 3; }
    if (c[0] == 0xE8) return 5;                                    /* a call that returned */
    if (c[0] == 0xFF && c[1] == 0x15) return 6;                    /* ... through a cell */
    if (c[0] == 0x85 && c[1] == 0x04 && c[2] == 0x24) return 3;    /* test [rsp], eax */
    if (c[0] == 0xC5 && c[1] == 0xF8 && c[2] == 0x77) return 3;    /* vzeroupper */
    if (c[0] == 0x90) return 1;                                    /* the body */
    if (c[0] == 0xB8) return 5;                                    /* mov eax, imm32: the body */
    if (c[0] == 0x33 && c[1] == 0xC0) return 2;                    /* xor eax, eax */
    if (c[0] == 0x48 && c[1] == 0x89 && c[2] == 0x44 && c[3] == 0x24) return 5; /* mov [rsp+d8], rax */
    if (c[0] == 0xC3 || c[0] == 0xE9 || c[0] == 0xEB || c[0] == 0xFF || c[0] == 0x48)
        return 0; /* ret or a tail jump (48 FF E0 and friends) */
    return -1;
}

struct shape_case {
    const char *name;
    uint8_t code[96];
    size_t len;
    int framed;     /* the prologue sets RBP */
    size_t funclet; /* offset of a funclet after the main body, 0: none */
};

/* 0xE9 jumps: rel32 0x40000000, far outside the buffer */
#define JMP_OUT 0xE9, 0x00, 0x00, 0x00, 0x40

static const struct shape_case cases[] = {
    {"frameless leaf", {0xB8, 1, 0, 0, 0, 0x90, 0xC3}, 7, 0, 0},
    {"frameless tail call", {0xB8, 1, 0, 0, 0, JMP_OUT}, 10, 0, 0},
    {"push rax", {0x50, 0x90, 0xB8, 1, 0, 0, 0, 0x48, 0x83, 0xC4, 0x08, 0xC3}, 12, 0, 0},
    {"push rbx; sub rsp (an UnmanagedCallersOnly method)",
     {0x53, 0x48, 0x83, 0xEC, 0x10, 0x90, 0x48, 0x83, 0xC4, 0x10, 0x5B, 0xC3}, 12, 0, 0},
    {"callee-saved pushes, push rax",
     {0x41, 0x57, 0x41, 0x56, 0x53, 0x50, 0x90, 0x90, 0x48, 0x83, 0xC4, 0x08, 0x5B, 0x41, 0x5E,
      0x41, 0x5F, 0xC3},
     18, 0, 0},
    {"rsp frame, tail call through a cell",
     {0x53, 0x48, 0x83, 0xEC, 0x20, 0x90, 0x48, 0x83, 0xC4, 0x20, 0x5B, 0xFF, 0x25, 0, 0, 0, 0},
     17, 0, 0},
    {"rsp frame, tail call through a register",
     {0x50, 0x90, 0x48, 0x83, 0xC4, 0x08, 0x48, 0xFF, 0xE0}, 9, 0, 0},
    {"rsp frame, sub rsp imm32 and a probe touch",
     {0x53, 0x48, 0x81, 0xEC, 0xD0, 0x0B, 0, 0, 0x85, 0x04, 0x24, 0x90, 0x48, 0x81, 0xC4, 0xD0,
      0x0B, 0, 0, 0x5B, 0xC3},
     21, 0, 0},
    {"push rbp; mov rbp, rsp", {0x55, 0x48, 0x8B, 0xEC, 0x90, 0xB8, 1, 0, 0, 0, 0x5D, 0xC3}, 12, 1, 0},
    {"rbp frame: pushes, sub, lea rbp",
     {0x55, 0x41, 0x57, 0x53, 0x48, 0x83, 0xEC, 0x28, 0x48, 0x8D, 0x6C, 0x24, 0x38, 0x90, 0x90,
      0x48, 0x83, 0xC4, 0x28, 0x5B, 0x41, 0x5F, 0x5D, 0xC3},
     24, 1, 0},
    {"rbp frame with vzeroupper",
     {0x55, 0x48, 0x83, 0xEC, 0x20, 0xC5, 0xF8, 0x77, 0x48, 0x8D, 0x6C, 0x24, 0x20, 0x90, 0xC5,
      0xF8, 0x77, 0x48, 0x83, 0xC4, 0x20, 0x5D, 0xC3},
     23, 1, 0},
    {"rbp frame, zero-init after the frame is set",
     {0x55, 0x48, 0x83, 0xEC, 0x10, 0x48, 0x8D, 0x6C, 0x24, 0x10, 0x33, 0xC0, 0x48, 0x89, 0x44,
      0x24, 0x08, 0x90, 0x48, 0x83, 0xC4, 0x10, 0x5D, 0xC3},
     24, 1, 0},
    {"rbp frame, large frame with the stack probe helper",
     {0x55, 0x41, 0x57, 0x53, 0x4C, 0x8D, 0x9C, 0x24, 0x00, 0xF0, 0xFF, 0xFF, 0xE8, 0, 0, 0, 0,
      0x49, 0x8B, 0xE3, 0x48, 0x8D, 0xAC, 0x24, 0x10, 0x10, 0, 0, 0x90, 0x48, 0x81, 0xC4, 0x00,
      0x10, 0, 0, 0x5B, 0x41, 0x5F, 0x5D, 0xC3},
     41, 1, 0},
    {"rbp frame, stack probe called through an indirection cell (ReadyToRun)",
     {0x55, 0x53, 0x4C, 0x8D, 0x9C, 0x24, 0x00, 0xE0, 0xFF, 0xFF, 0xFF, 0x15, 0, 0, 0, 0, 0x49,
      0x8B, 0xE3, 0x48, 0x8D, 0xAC, 0x24, 0x08, 0x20, 0, 0, 0x90, 0x48, 0x81, 0xC4, 0x00, 0x20, 0,
      0, 0x5B, 0x5D, 0xC3},
     38, 1, 0},
    {"rsp frame, large frame with the stack probe helper",
     {0x53, 0x4C, 0x8D, 0x9C, 0x24, 0x00, 0xF0, 0xFF, 0xFF, 0xE8, 0, 0, 0, 0, 0x49, 0x8B, 0xE3,
      0x90, 0x48, 0x81, 0xC4, 0x00, 0x10, 0, 0, 0x5B, 0xC3},
     27, 0, 0},
    {"rbp frame, localloc: epilogue lea rsp, [rbp-16]",
     {0x55, 0x41, 0x57, 0x53, 0x48, 0x8D, 0x6C, 0x24, 0x10, 0x90, 0x48, 0x83, 0xEC, 0x40, 0x90,
      0x48, 0x8D, 0x65, 0xF0, 0x5B, 0x41, 0x5F, 0x5D, 0xC3},
     24, 1, 0},
    {"rbp frame, tail call", {0x55, 0x48, 0x8B, 0xEC, 0x90, 0x5D, JMP_OUT}, 11, 1, 0},
    {"rbp frame with a catch funclet",
     {0x55, 0x48, 0x83, 0xEC, 0x10, 0x48, 0x8D, 0x6C, 0x24, 0x10, 0x90, 0x48, 0x83, 0xC4, 0x10,
      0x5D, 0xC3, 0xCC, /* funclet: */ 0x50, 0x90, 0xB8, 1, 0, 0, 0, 0x48, 0x83, 0xC4, 0x08, 0xC3},
     30, 1, 18},
    {"rbp frame with a finally funclet (sub rsp)",
     {0x55, 0x48, 0x8B, 0xEC, 0x90, 0x5D, 0xC3, /* funclet: */ 0x48, 0x83, 0xEC, 0x28, 0x90,
      0x48, 0x83, 0xC4, 0x28, 0xC3},
     17, 1, 7},
};

/* The instruction boundaries of a case, from `from` to its end. */
static int boundaries(const struct shape_case *k, size_t from, size_t to, size_t *out, int max)
{
    int n = 0;
    struct cpu scratch = {(uintptr_t)&stack[1500], (uintptr_t)&stack[1600], 0};
    for (size_t at = from; at < to && n < max;) {
        out[n++] = at;
        int len = emulate(k->code + at, &scratch);
        if (len <= 0)
            break;
        at += (size_t)len;
    }
    return n;
}

static void check_case(const struct shape_case *k)
{
    struct mshape s;
    size_t main_end = k->funclet ? k->funclet : k->len;
    CHECK(mshape_from_code(k->code, main_end, &s) == 0);
    CHECK_EQ(!!(s.flags & MSHAPE_FP), k->framed);
    uintptr_t code = (uintptr_t)k->code;
    size_t at[64];
    int n = boundaries(k, 0, main_end, at, 64);
    REQUIRE(n > 1);
    for (int i = 0; i < n; i++) {
        /* a fresh call: the return address at the entry RSP, the caller's
         * RBP somewhere above */
        memset(stack, 0, sizeof stack);
        uintptr_t entry = (uintptr_t)&stack[1000], caller_rbp = (uintptr_t)&stack[1100];
        *(uint64_t *)entry = RA;
        struct cpu m = {entry, caller_rbp, 0};
        for (size_t p = 0; p < at[i];) {
            int len = emulate(k->code + p, &m);
            REQUIRE(len > 0);
            p += (size_t)len;
        }
        struct mshape_where w = {code, code, code + k->len, k->code + at[i] - 1, k->len - at[i] + 1};
        if (at[i] == 0)
            w.code = NULL, w.code_len = 0;
        uintptr_t pc = code + at[i], sp = m.rsp, fp = m.rbp;
        enum mshape_status st = mshape_step(&s, &w, 1, &pc, &sp, &fp, m.rsp, (uintptr_t)&stack[2048]);
        char what[160];
        snprintf(what, sizeof what, "%s at +%zu", k->name, at[i]);
        if (st != MSHAPE_OK || pc != RA || sp != entry + 8 || fp != caller_rbp)
            test_fail(__FILE__, __LINE__, what);
        /* the return address of a call in the prologue (the stack probe):
         * the same answer, as a caller frame */
        if ((at[i] >= 5 && k->code[at[i] - 5] == 0xE8) ||
            (at[i] >= 6 && k->code[at[i] - 6] == 0xFF && k->code[at[i] - 5] == 0x15)) {
            pc = code + at[i], sp = m.rsp, fp = m.rbp;
            w.code = NULL;
            st = mshape_step(&s, &w, 0, &pc, &sp, &fp, m.rsp, (uintptr_t)&stack[2048]);
            if (st != MSHAPE_OK || pc != RA || sp != entry + 8 || fp != caller_rbp)
                test_fail(__FILE__, __LINE__, what);
        }
    }
    if (!k->funclet)
        return;
    /* a funclet runs on its parent's RBP: every instruction of it steps to
     * the parent's caller (the logical stack), not to the runtime that
     * called it */
    n = boundaries(k, k->funclet, k->len, at, 64);
    for (int i = 0; i < n; i++) {
        memset(stack, 0, sizeof stack);
        uintptr_t entry = (uintptr_t)&stack[1000], caller_rbp = (uintptr_t)&stack[1100];
        *(uint64_t *)entry = RA;
        struct cpu m = {entry, caller_rbp, 0};
        for (size_t p = 0; p < main_end;) { /* the parent's prologue and body */
            int len = emulate(k->code + p, &m);
            if (len <= 0 || k->code[p] == 0x90)
                break;
            p += (size_t)len;
        }
        m.rsp -= 256; /* the runtime's frames, then the call of the funclet */
        *(uint64_t *)m.rsp = PHYS_RA;
        for (size_t p = k->funclet; p < at[i];) {
            int len = emulate(k->code + p, &m);
            REQUIRE(len > 0);
            p += (size_t)len;
        }
        struct mshape_where w = {code, code, code + k->len, k->code + at[i] - 1, k->len - at[i] + 1};
        uintptr_t pc = code + at[i], sp = m.rsp, fp = m.rbp;
        enum mshape_status st = mshape_step(&s, &w, 1, &pc, &sp, &fp, m.rsp, (uintptr_t)&stack[2048]);
        char what[160];
        snprintf(what, sizeof what, "%s: funclet at +%zu", k->name, at[i]);
        if (st != MSHAPE_OK || pc != RA || sp != entry + 8 || fp != caller_rbp)
            test_fail(__FILE__, __LINE__, what);
    }
}

static void test_prologue_epilogue_shapes(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

static void test_not_a_prologue(void)
{
    struct mshape s;
    /* a probe sequence cut short, a negative frame */
    static const uint8_t cut[] = {0x53, 0x4C, 0x8D, 0x9C, 0x24, 0x00, 0xF0, 0xFF, 0xFF, 0x90};
    CHECK(mshape_from_code(cut, sizeof cut, &s) == -1);
    static const uint8_t neg[] = {0x55, 0x48, 0x8D, 0x6C, 0x24, 0xF0};
    CHECK(mshape_from_code(neg, sizeof neg, &s) == -1);
    /* OSR code: a copy of the caller's RBP pushed, RBP set on it */
    static const uint8_t osr[] = {0x48, 0x8B, 0x45, 0x00, 0x50, 0x48, 0x83, 0xEC, 0x20,
                                  0x4C, 0x89, 0xBC, 0x24, 0x10, 0, 0, 0,
                                  0x48, 0x8D, 0x6C, 0x24, 0x20, 0x90};
    REQUIRE(mshape_from_code(osr, sizeof osr, &s) == 0);
    CHECK(s.flags & MSHAPE_OSR);
    CHECK(s.flags & MSHAPE_FP);
    CHECK_EQ(s.fp_to_ra, 8);
    CHECK_EQ(s.rbp_save, 8);
}

/* ---- Windows-x64 unwind codes --------------------------------------------- */

static void test_unwind_codes(void)
{
    /* push rbp (1); push rbx (2); sub rsp,0x28 (6); lea rbp,[rsp+0x20] (11),
     * as crossgen2 writes them: last instruction first */
    static const uint8_t framed[] = {0x01, 11, 4, 0x25, /* v1, prolog 11, 4 codes, rbp, offset 2*16 */
                                     11, 0x03, 6, 0x42, 2, 0x30, 1, 0x50};
    struct mshape s;
    REQUIRE(mshape_from_unwind(framed, sizeof framed, &s) == 0);
    CHECK_EQ(s.nsteps, 4);
    CHECK_EQ(s.depth[0], 8);
    CHECK_EQ(s.depth[1], 16);
    CHECK_EQ(s.depth[2], 16 + 0x28);
    CHECK_EQ(s.end[2], 6);
    CHECK(s.flags & MSHAPE_FP);
    CHECK_EQ(s.fp_to_ra, 16 + 0x28 - 32);
    CHECK_EQ(s.rbp_save, 8);
    /* ALLOC_LARGE in both forms */
    static const uint8_t large[] = {0x01, 8, 3, 0x00, 8, 0x01, 0x00, 0x02, 1, 0x30};
    REQUIRE(mshape_from_unwind(large, sizeof large, &s) == 0);
    CHECK_EQ(s.depth[1], 8 + 0x200 * 8);
    static const uint8_t large32[] = {0x01, 12, 4, 0x00, 12, 0x11, 0x00, 0x00, 0x01, 0x00, 1, 0x30};
    REQUIRE(mshape_from_unwind(large32, sizeof large32, &s) == 0);
    CHECK_EQ(s.depth[1], 8 + 0x10000);
    /* chained entries and machine frames are refused */
    static const uint8_t chained[] = {0x21, 0, 0, 0};
    CHECK(mshape_from_unwind(chained, sizeof chained, &s) == -1);
    static const uint8_t machine[] = {0x01, 1, 1, 0, 1, 0x0A};
    CHECK(mshape_from_unwind(machine, sizeof machine, &s) == -1);
}

/* CoreLib mapped as the runtime maps a ReadyToRun image (sections at their
 * RVAs): every function's unwind codes must decode, and agree with what
 * the prologue decoder reads from the function's code. */
static void test_corelib_unwind_agrees_with_prologues(void)
{
    const char *path = "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/"
                       "System.Private.CoreLib.dll";
    const char *env = getenv("CORSCOPE_TEST_CORELIB");
    if (env)
        path = env;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "  (skipped: no %s)\n", path);
        return;
    }
    struct stat st;
    fstat(fd, &st);
    uint8_t *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    REQUIRE(file != MAP_FAILED);
    uint32_t lfanew, image_size;
    memcpy(&lfanew, file + 60, 4);
    memcpy(&image_size, file + lfanew + 24 + 56, 4);
    uint16_t nsec, opt_size;
    memcpy(&nsec, file + lfanew + 6, 2);
    memcpy(&opt_size, file + lfanew + 20, 2);
    uint8_t *image = mmap(NULL, image_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(image != MAP_FAILED);
    memcpy(image, file, 4096);
    for (uint16_t i = 0; i < nsec; i++) {
        const uint8_t *sh = file + lfanew + 24 + opt_size + 40 * i;
        uint32_t vsize, rva, raw_size, raw;
        memcpy(&vsize, sh + 8, 4);
        memcpy(&rva, sh + 12, 4);
        memcpy(&raw_size, sh + 16, 4);
        memcpy(&raw, sh + 20, 4);
        memcpy(image + rva, file + raw, raw_size < vsize ? raw_size : vsize);
    }
    munmap(file, (size_t)st.st_size);

    REQUIRE(thread_rings_init() == 0);
    size_t extent = 0;
    size_t count = mcode_add_image((uintptr_t)image, &extent);
    CHECK(count > 20000);
    CHECK_EQ(extent, image_size); /* read with the table, for the code map */
    mcode_publish();
    CHECK_EQ(mcode_images(), 1);
    /* walk the table through mcode_find, function by function */
    size_t found = 0, agree = 0, compared = 0;
    for (uintptr_t at = (uintptr_t)image + 4096; at < (uintptr_t)image + image_size; at++) {
        struct mcode_hit h;
        enum mcode_found f = mcode_find(at, &h);
        if (f == MCODE_NONE)
            break;
        if (f == MCODE_IMAGE)
            continue;
        found++;
        if (f == MCODE_FOUND) {
            struct mshape c;
            if (mshape_from_code((const uint8_t *)h.lo, h.hi - h.lo < 128 ? h.hi - h.lo : 128, &c) == 0) {
                /* the same frame depth after every step that moves RSP, and
                 * the caller's RBP in the same slot */
                compared++;
                int same = mshape_body_depth(&c) == mshape_body_depth(&h.shape) &&
                           c.rbp_save == h.shape.rbp_save;
                agree += same;
            }
        }
        at = h.hi - 1;
    }
    CHECK(found == count);
    CHECK(compared > count * 9 / 10);
    CHECK_EQ(agree, compared);
    fprintf(stderr, "  CoreLib: %zu functions, %zu prologues decoded, %zu agree\n", found, compared,
            agree);
#if defined(__x86_64__)
    /* the unwind data is checked when a walk first reads it, not all at
     * once when the image is added: an entry whose unwind data lies outside
     * the image's sections makes that function unknown, and only it */
    uintptr_t mid = 0;
    struct mcode_hit h;
    size_t seen = 0;
    for (uintptr_t at = (uintptr_t)image + 4096; at < (uintptr_t)image + image_size && !mid; at++) {
        enum mcode_found f = mcode_find(at, &h);
        if (f == MCODE_NONE)
            break;
        if (f == MCODE_IMAGE)
            continue;
        if (f == MCODE_FOUND && ++seen == 1000)
            mid = at;
        at = h.hi - 1;
    }
    REQUIRE(mid && mcode_find(mid, &h) == MCODE_FOUND);
    uint32_t *entry = NULL;
    for (uint32_t *w = (uint32_t *)image; (uint8_t *)(w + 3) <= image + image_size; w++)
        if (w[0] == (uint32_t)(h.lo - (uintptr_t)image) && w[1] == (uint32_t)(h.hi - (uintptr_t)image)) {
            entry = w;
            break;
        }
    REQUIRE(entry);
    uint32_t kept = entry[2];
    entry[2] = image_size + 4096; /* its unwind data: past every section */
    CHECK_EQ(mcode_find(mid, &h), MCODE_IMAGE);
    entry[2] = kept;
    CHECK_EQ(mcode_find(mid, &h), MCODE_FOUND);
    /* an entry is checked when it is found, not when the image is added:
     * one whose end runs past every section is not taken */
    kept = entry[1];
    entry[1] = image_size + 4096;
    CHECK_EQ(mcode_find(mid, &h), MCODE_IMAGE);
    entry[1] = kept;
    CHECK_EQ(mcode_find(mid, &h), MCODE_FOUND);
#endif
    mcode_shutdown();
    thread_rings_shutdown();
    munmap(image, image_size);
}

/* mcode_add_image reads a module's headers once for the code map and the
 * function table: an image with no ReadyToRun code (a PE32 or IL-only
 * assembly) still has its extent; what is not a PE image has none. */
static void test_image_extent_without_functions(void)
{
    uint8_t *image = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(image != MAP_FAILED);
    REQUIRE(thread_rings_init() == 0);
    size_t extent = 1;
    CHECK_EQ(mcode_add_image((uintptr_t)image, &extent), 0); /* zeros: no MZ */
    CHECK_EQ(extent, 0);
    image[0] = 'M';
    image[1] = 'Z';
    uint32_t lfanew = 128, size = 0x6000, past = 8192 - 100;
    memcpy(image + 60, &lfanew, 4);
    memcpy(image + lfanew, "PE\0\0", 4);
    image[lfanew + 24] = 0x0b; /* PE32: the extent, no table */
    image[lfanew + 25] = 0x01;
    memcpy(image + lfanew + 24 + 56, &size, 4);
    CHECK_EQ(mcode_add_image((uintptr_t)image, &extent), 0);
    CHECK_EQ(extent, 0x6000);
    image[lfanew + 25] = 0x02; /* PE32+ with no CLI header */
    CHECK_EQ(mcode_add_image((uintptr_t)image, &extent), 0);
    CHECK_EQ(extent, 0x6000);
    memcpy(image + 60, &past, 4); /* NT headers past the mapping: refused, no crash */
    CHECK_EQ(mcode_add_image((uintptr_t)image, &extent), 0);
    CHECK_EQ(extent, 0);
    CHECK_EQ(mcode_images(), 0);
    mcode_shutdown();
    thread_rings_shutdown();
    munmap(image, 8192);
}

void suite_mshape(void)
{
    RUN(test_image_extent_without_functions);
    RUN(test_prologue_epilogue_shapes);
    RUN(test_not_a_prologue);
    RUN(test_unwind_codes);
    RUN(test_corelib_unwind_agrees_with_prologues);
}
