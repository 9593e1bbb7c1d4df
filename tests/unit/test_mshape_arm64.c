/*
 * Tests of the arm64 frame decoder (mshape_arm64), on every machine: the
 * prologues and epilogues of the arm64 JIT's frame types run on a small
 * emulator of the instructions they use, and at every instruction the one
 * step from the interrupted frame must give the caller's pc, SP and x29
 * exactly; what is not an epilogue (a branch to cold code, a jump table)
 * must not be taken for one; prologues the decoder cannot follow are
 * refused.  With the arm64 CoreLib at hand (CORSCOPE_ARM64_CORELIB, or
 * build/aarch64/apps from tests/arm64/apps.sh), every function of its
 * ReadyToRun table: its range from the arm64 RUNTIME_FUNCTION entry, its
 * prologue decoded (qemu-user has no process_vm_readv, so the agent under
 * emulation never reads these tables: this is where they are tested).
 */
#include <stdlib.h>

#include "agent/signal/mshape_arm64.h"
#include "test.h"

/* ---- encodings --------------------------------------------------------------- */

#define NOP 0xD503201Fu
#define PACIASP 0xD503233Fu
#define AUTIASP 0xD50323BFu
#define RET 0xD65F03C0u
#define FP 29
#define LR 30

static uint32_t pair(uint32_t op, unsigned rt, unsigned rt2, int imm)
{
    return op | ((uint32_t)(imm / 8) & 0x7F) << 15 | rt2 << 10 | 31u << 5 | rt;
}
static uint32_t stp_pre(unsigned a, unsigned b, int imm) { return pair(0xA9800000u, a, b, imm); }
static uint32_t stp_off(unsigned a, unsigned b, int imm) { return pair(0xA9000000u, a, b, imm); }
static uint32_t ldp_post(unsigned a, unsigned b, int imm) { return pair(0xA8C00000u, a, b, imm); }
static uint32_t ldp_off(unsigned a, unsigned b, int imm) { return pair(0xA9400000u, a, b, imm); }
static uint32_t sub_sp(unsigned imm) { return 0xD10003FFu | imm << 10; }
static uint32_t add_sp(unsigned imm) { return 0x910003FFu | imm << 10; }
static uint32_t add_fp_sp(unsigned imm) { return 0x910003FDu | imm << 10; } /* mov x29, sp: 0 */
static uint32_t b_to(int words) { return 0x14000000u | ((uint32_t)words & 0x3FFFFFF); }
#define BR_X1 0xD61F0020u

/* ---- a little emulator ---------------------------------------------------------- */

struct machine {
    uint64_t x[32]; /* x[31]: SP */
    uint64_t stack[2048];
};

/* Runs one instruction of the subset above; returns 0 at a ret or branch. */
static int execute(struct machine *m, uint32_t w)
{
    if (w == NOP || w == PACIASP || w == AUTIASP)
        return 1;
    if (w == RET || (w & 0xFC000000u) == 0x14000000u || w == BR_X1)
        return 0;
    if ((w & 0xFF800000u) == 0xD2800000u || (w & 0xFF800000u) == 0x92800000u) { /* movz, movn */
        uint64_t v = (uint64_t)((w >> 5) & 0xFFFF) << (16 * ((w >> 21) & 3));
        m->x[w & 31] = (w & 0xFF800000u) == 0x92800000u ? ~v : v;
        return 1;
    }
    if ((w & 0xFFE0FFFFu) == 0xB8606BFFu) /* ldr wzr, [sp, xN]: the probe */
        return 1;
    if ((w & 0xFFE0FFFFu) == 0xCB2063FFu) { /* sub sp, sp, xN */
        m->x[31] -= m->x[(w >> 16) & 31];
        return 1;
    }
    if ((w & 0xFFE0FFFFu) == 0x8B2063FFu) { /* add sp, sp, xN */
        m->x[31] += m->x[(w >> 16) & 31];
        return 1;
    }
    if ((w & 0xFF8003FFu) == 0xD10003FFu) {
        m->x[31] -= (w >> 10) & 0xFFF;
        return 1;
    }
    if ((w & 0xFF8003FFu) == 0x910003FFu) {
        m->x[31] += (w >> 10) & 0xFFF;
        return 1;
    }
    if ((w & 0xFF8003FFu) == 0x910003FDu) {
        m->x[FP] = m->x[31] + ((w >> 10) & 0xFFF);
        return 1;
    }
    int64_t imm = (int64_t)((w >> 15) & 0x7F);
    if (imm & 0x40)
        imm -= 0x80;
    imm *= 8;
    unsigned rt = w & 31, rt2 = (w >> 10) & 31;
    uint32_t op = w & 0xFFC00000u;
    uint64_t at = op == 0xA8C00000u ? m->x[31] : m->x[31] + (uint64_t)imm;
    uint64_t *slot = (uint64_t *)(uintptr_t)at;
    if (op == 0xA9800000u || op == 0xA9000000u) {
        slot[0] = m->x[rt];
        slot[1] = m->x[rt2];
    } else {
        m->x[rt] = slot[0];
        m->x[rt2] = slot[1];
    }
    if (op == 0xA9800000u)
        m->x[31] = at;
    if (op == 0xA8C00000u)
        m->x[31] += (uint64_t)imm;
    return 1;
}

#define CALLER_PC 0x4242ull
#define BASE 0x100000ull

/* At every instruction of code (n words, a whole function at BASE), the
 * interrupted frame steps to the caller. */
static void check_function(const char *name, const uint32_t *code, size_t n, int funclet)
{
    struct mshape_arm64 s;
    REQUIRE(mshape_arm64_from_code((const uint8_t *)code, 4 * n, &s) == 0);
    CHECK(funclet ? !s.fp_step : s.fp_step);
    static struct machine m;
    memset(&m, 0, sizeof m);
    uint64_t caller_sp = (uint64_t)(uintptr_t)&m.stack[2000];
    uint64_t caller_fp = (uint64_t)(uintptr_t)&m.stack[2030];
    uintptr_t hi = (uintptr_t)&m.stack[2048];
    m.x[31] = caller_sp;
    m.x[FP] = caller_fp;
    m.x[LR] = CALLER_PC;
    for (unsigned r = 19; r <= 22; r++)
        m.x[r] = 0x1900 + r;
    for (size_t i = 0; i < n; i++) {
        struct walk_regs r = {BASE + 4 * i, m.x[31], m.x[FP], 0, m.x[LR]};
        struct mshape_arm64_where w = {BASE, BASE, BASE + 4 * n, (const uint8_t *)(code + i),
                                       4 * (n - i), i ? code[i - 1] : 0};
        uintptr_t slot;
        int rc = mshape_arm64_step(&s, &w, 1, &r, &slot, m.x[31], hi);
        if (rc != 0 || r.pc != CALLER_PC || r.sp != caller_sp || r.fp != caller_fp) {
            char what[160];
            snprintf(what, sizeof what, "%s: at instruction %zu: rc %d pc %#llx sp %+lld fp %s", name,
                     i, rc, (unsigned long long)r.pc, (long long)(r.sp - caller_sp),
                     r.fp == caller_fp ? "ok" : "wrong");
            test_fail(__FILE__, __LINE__, what);
        }
        CHECK(r.lr == 0);
        if (!execute(&m, code[i]))
            break;
    }
}

static void test_frame_types(void)
{
    /* type 1: small frame, the record at the bottom */
    const uint32_t t1[] = {stp_pre(FP, LR, -32), add_fp_sp(0), stp_off(19, 20, 16), NOP, NOP,
                           ldp_off(19, 20, 16), ldp_post(FP, LR, 32), RET};
    check_function("type 1", t1, sizeof t1 / 4, 0);
    /* type 2: the frame allocated first, the record above the outgoing area */
    const uint32_t t2[] = {sub_sp(64), stp_off(FP, LR, 32), add_fp_sp(32), stp_off(19, 20, 48), NOP,
                           ldp_off(19, 20, 48), ldp_off(FP, LR, 32), add_sp(64), RET};
    check_function("type 2", t2, sizeof t2 / 4, 0);
    /* callee-saved registers first, the record on top of them, then the rest */
    const uint32_t t5[] = {PACIASP, stp_pre(19, 20, -48), stp_off(21, 22, 16), stp_off(FP, LR, 32),
                           add_fp_sp(32), sub_sp(32), NOP, NOP, add_sp(32), ldp_off(FP, LR, 32),
                           ldp_off(21, 22, 16), ldp_post(19, 20, 48), AUTIASP, RET};
    check_function("callee-saved first", t5, sizeof t5 / 4, 0);
    /* a tail call out of the function */
    const uint32_t tail[] = {stp_pre(FP, LR, -16), add_fp_sp(0), NOP, ldp_post(FP, LR, 16), b_to(100)};
    check_function("tail call", tail, sizeof tail / 4, 0);
    /* a funclet: the record saved, x29 left as the parent's */
    const uint32_t fl[] = {stp_pre(FP, LR, -32), stp_off(19, 20, 16), NOP, NOP, ldp_off(19, 20, 16),
                           ldp_post(FP, LR, 32), RET};
    check_function("funclet", fl, sizeof fl / 4, 1);
    /* a frame beyond an immediate's reach: probed, SP moved by a register
     * (what the JIT gave a method with a 6 KB local) */
    const uint32_t big[] = {0x9281FFE9u /* movn x9, #0xfff */, 0xB8696BFFu /* ldr wzr, [sp, x9] */,
                            0xD282F001u /* mov x1, #0x1780 */, 0xCB2163FFu /* sub sp, sp, x1 */,
                            stp_off(FP, LR, 0), add_fp_sp(0), NOP, ldp_off(FP, LR, 0),
                            0xD282F011u /* mov x17, #0x1780 */, 0x8B3163FFu /* add sp, sp, x17 */, RET};
    check_function("large frame", big, sizeof big / 4, 0);
}

/* A branch to cold code or through a jump table in the body is not an
 * epilogue: the body's rule (the frame record) holds, not x30. */
static void test_not_epilogues(void)
{
    struct mshape_arm64_epilogue e;
    const uint32_t cold[] = {b_to(400)};
    mshape_arm64_epilogue((const uint8_t *)cold, sizeof cold, BASE + 8, BASE, BASE + 64, NOP, &e);
    CHECK(!e.found);
    const uint32_t table[] = {BR_X1};
    mshape_arm64_epilogue((const uint8_t *)table, sizeof table, BASE + 8, BASE, BASE + 64, NOP, &e);
    CHECK(!e.found);
    /* ... but after the epilogue's own instruction they are tail calls */
    mshape_arm64_epilogue((const uint8_t *)table, sizeof table, BASE + 8, BASE, BASE + 64,
                          ldp_post(FP, LR, 16), &e);
    CHECK(e.found && !e.record && e.sp_adjust == 0);
    /* a branch inside the function, even after an epilogue instruction */
    const uint32_t inside[] = {add_sp(16), b_to(2)};
    mshape_arm64_epilogue((const uint8_t *)inside, sizeof inside, BASE + 8, BASE, BASE + 64, NOP, &e);
    CHECK(!e.found);
    /* a ret is always one: x30 holds the return address there */
    const uint32_t ret[] = {RET};
    mshape_arm64_epilogue((const uint8_t *)ret, sizeof ret, BASE + 8, BASE, BASE + 64, NOP, &e);
    CHECK(e.found && !e.record);
}

static void test_refused_prologues(void)
{
    struct mshape_arm64 s;
    const uint32_t none[] = {sub_sp(32), NOP, RET}; /* no frame record */
    CHECK(mshape_arm64_from_code((const uint8_t *)none, sizeof none, &s) == -1);
    const uint32_t up[] = {ldp_post(19, 20, 16)}; /* SP moving up */
    CHECK(mshape_arm64_from_code((const uint8_t *)up, sizeof up, &s) == -1);
    const uint32_t reg[] = {stp_pre(FP, LR, -16), 0xCB2063FFu /* sub sp, sp, x0 */, add_fp_sp(0)};
    CHECK(mshape_arm64_from_code((const uint8_t *)reg, sizeof reg, &s) == -1);
    const uint32_t high[] = {stp_pre(FP, LR, -16), add_fp_sp(32)}; /* x29 above the CFA */
    CHECK(mshape_arm64_from_code((const uint8_t *)high, sizeof high, &s) == -1);
    CHECK(mshape_arm64_from_code((const uint8_t *)none, 2, &s) == -1); /* cut short */
}

/* The body of a caller (not a leaf): its return address is in its record. */
static void test_caller_frame(void)
{
    const uint32_t t1[] = {stp_pre(FP, LR, -32), add_fp_sp(0), NOP, ldp_post(FP, LR, 32), RET};
    struct mshape_arm64 s;
    REQUIRE(mshape_arm64_from_code((const uint8_t *)t1, sizeof t1, &s) == 0);
    uint64_t stack[8] = {0};
    stack[4] = 0x7777; /* the caller's x29 */
    stack[5] = CALLER_PC;
    struct walk_regs r = {BASE + 12, (uintptr_t)&stack[0], (uintptr_t)&stack[4], 0, 0};
    struct mshape_arm64_where w = {BASE, BASE, BASE + sizeof t1, NULL, 0, 0};
    uintptr_t slot;
    REQUIRE(mshape_arm64_step(&s, &w, 0, &r, &slot, (uintptr_t)&stack[0], (uintptr_t)&stack[8]) == 0);
    CHECK_EQ(r.pc, CALLER_PC);
    CHECK_EQ(r.fp, 0x7777);
    CHECK_EQ(r.sp, (uintptr_t)&stack[8]);
    CHECK_EQ(slot, (uintptr_t)&stack[5]);
    /* a return address in a prologue before x30 is saved cannot be */
    r = (struct walk_regs){BASE + 4, (uintptr_t)&stack[0], (uintptr_t)&stack[4], 0, 0};
    w.fn_start = BASE;
    struct mshape_arm64 early = s;
    early.ra_step = 0;
    CHECK(mshape_arm64_step(&early, &w, 0, &r, &slot, (uintptr_t)&stack[0], (uintptr_t)&stack[8]) == -1);
}

static void test_calls(void)
{
    CHECK(mshape_arm64_is_call(0x94000010u));  /* bl */
    CHECK(mshape_arm64_is_call(0xD63F0020u));  /* blr x1 */
    CHECK(mshape_arm64_is_call(0xD63F083Fu));  /* blraaz x1 */
    CHECK(mshape_arm64_is_call(0xD73F0821u));  /* blraa x1, x1 */
    CHECK(!mshape_arm64_is_call(0x14000010u)); /* b */
    CHECK(!mshape_arm64_is_call(BR_X1));
    CHECK(!mshape_arm64_is_call(RET));
    CHECK(mshape_arm64_is_ret(RET));
    CHECK(!mshape_arm64_is_ret(BR_X1));
}

/* ---- ReadyToRun: the arm64 CoreLib's function table ------------------------------ */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The file mapped as the runtime maps a ReadyToRun image: each section at
 * its RVA.  Returns the image (SizeOfImage bytes in *size) or NULL. */
static uint8_t *map_as_loaded(const uint8_t *file, size_t n, size_t *size)
{
    if (n < 64 || file[0] != 'M' || le32(file + 60) > n - 24 - 240)
        return NULL;
    const uint8_t *nt = file + le32(file + 60), *opt = nt + 24;
    if (memcmp(nt, "PE\0\0", 4) != 0 || opt[0] != 0x0b || opt[1] != 0x02)
        return NULL;
    *size = le32(opt + 56);
    size_t headers = le32(opt + 60), count = (size_t)(nt[6] | nt[7] << 8);
    uint8_t *img = calloc(1, *size);
    if (!img || headers > n || headers > *size) {
        free(img);
        return NULL;
    }
    memcpy(img, file, headers);
    const uint8_t *sh = opt + (nt[20] | nt[21] << 8);
    for (size_t i = 0; i < count; i++, sh += 40) {
        uint32_t vsize = le32(sh + 8), rva = le32(sh + 12), raw = le32(sh + 16), at = le32(sh + 20);
        uint32_t len = raw < vsize ? raw : vsize;
        if (at > n || len > n - at || rva > *size || len > *size - rva) {
            free(img);
            return NULL;
        }
        memcpy(img + rva, file + at, len);
    }
    return img;
}

static void test_corelib_r2r(void)
{
    const char *path = getenv("CORSCOPE_ARM64_CORELIB");
    if (!path)
        path = "build/aarch64/apps/System.Private.CoreLib.dll";
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("  mshape_arm64: no arm64 CoreLib at %s (tests/arm64/apps.sh): not checked\n", path);
        return;
    }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *file = malloc(n);
    REQUIRE(file && fread(file, 1, n, f) == n);
    fclose(f);
    size_t size = 0;
    uint8_t *img = map_as_loaded(file, n, &size);
    free(file);
    REQUIRE(img);
    /* the CLI header, then the ReadyToRun header and its sections */
    const uint8_t *opt = img + le32(img + 60) + 24;
    uint32_t cli = le32(opt + 112 + 14 * 8), rtr = le32(img + cli + 64);
    REQUIRE(le32(img + rtr) == 0x00525452u);
    uint32_t rf_rva = 0, rf_bytes = 0;
    for (uint32_t i = 0; i < le32(img + rtr + 12); i++) {
        const uint8_t *sec = img + rtr + 16 + 12 * i;
        if (le32(sec) == 102) {
            rf_rva = le32(sec + 4);
            rf_bytes = le32(sec + 8);
        }
    }
    REQUIRE(rf_rva && rf_bytes % 8 == 0);
    const uint32_t *rf = (const uint32_t *)(const void *)(img + rf_rva);
    size_t count = rf_bytes / 8, ranged = 0, decoded = 0, framed = 0;
    uint32_t last_end = 0;
    for (size_t i = 0; i < count; i++) {
        const uint32_t *e = rf + 2 * i;
        if (!(e[1] & 3) && e[1] > size - 4)
            continue;
        uint32_t end = mshape_arm64_rf_end(img, e);
        if (end <= e[0] || end > size || e[0] < last_end)
            continue; /* a range the agent would refuse */
        last_end = end;
        ranged++;
        struct mshape_arm64 s;
        size_t len = end - e[0] < 96 ? end - e[0] : 96;
        if (mshape_arm64_from_code(img + e[0], len, &s) == 0) {
            decoded++;
            framed += s.fp_step != 0;
        }
    }
    free(img);
    printf("  CoreLib (arm64): %zu functions, %zu ranges, %zu prologues decoded (%zu set x29)\n",
           count, ranged, decoded, framed);
    CHECK(count > 10000);
    CHECK_EQ(ranged, count);
    /* every function has a frame record (the JIT's rule); a few stubs and
     * fragments may not */
    CHECK(decoded >= count * 99 / 100);
}

void suite_mshape_arm64(void)
{
    test_run("mshape_arm64: CoreLib's ReadyToRun functions", test_corelib_r2r);
    test_run("mshape_arm64: the JIT's frame types, at every instruction", test_frame_types);
    test_run("mshape_arm64: branches that are not epilogues", test_not_epilogues);
    test_run("mshape_arm64: prologues refused", test_refused_prologues);
    test_run("mshape_arm64: a caller's frame", test_caller_frame);
    test_run("mshape_arm64: calls and returns", test_calls);
}
