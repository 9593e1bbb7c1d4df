/*
 * Unit tests of the IL rewrite of logical async stacks (async/ilwrap.h):
 * tiny and fat bodies, branches, switches and exception clauses moved,
 * what it refuses, the local signature.
 */
#include <stdint.h>
#include <string.h>

#include "agent/async/ilwrap.h"
#include "test.h"

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Decodes a wrapped method: code, code size, EH clauses. */
struct wrapped {
    const uint8_t *code;
    uint32_t code_size, locals_token, max_stack, clauses;
    const uint8_t *clause; /* the first, 24 bytes each */
};

static int parse(const uint8_t *m, size_t size, struct wrapped *w)
{
    if (size < 12 || (m[0] & 3) != 3 || !(m[0] & 8) || (m[1] >> 4) != 3)
        return 0;
    w->max_stack = (uint32_t)(m[2] | m[3] << 8);
    w->code_size = get32(m + 4);
    w->locals_token = get32(m + 8);
    w->code = m + 12;
    size_t at = (12 + w->code_size + 3) & ~(size_t)3;
    if (at + 4 > size || m[at] != 0x41)
        return 0;
    uint32_t len = (uint32_t)(m[at + 1] | m[at + 2] << 8 | m[at + 3] << 16);
    if ((len - 4) % 24 || at + len != size)
        return 0;
    w->clauses = (len - 4) / 24;
    w->clause = m + at + 4;
    return 1;
}

/* Walks the new code: every instruction decodes, and returns the offset of
 * the first instruction with opcode op at or after `from` (or ~0). */
static uint32_t find_op(const struct wrapped *w, uint32_t from, uint8_t op)
{
    uint32_t at = 0;
    while (at < w->code_size) {
        size_t n = ilwrap_insn_size(w->code + at, w->code_size - at);
        if (!n)
            return ~0u;
        if (at >= from && w->code[at] == op)
            return at;
        at += (uint32_t)n;
    }
    return ~0u;
}

static int decodes_whole(const struct wrapped *w);

/* Wraps a method and reads the result back; 0 when either failed or the
 * new code does not decode whole. */
static int wrap(const struct ilwrap_in *in, uint8_t *out, size_t cap, struct wrapped *w)
{
    size_t n = 0;
    return ilwrap_publish(in, out, cap, &n) == ILWRAP_OK && parse(out, n, w) && decodes_whole(w);
}

static int decodes_whole(const struct wrapped *w)
{
    uint32_t at = 0;
    while (at < w->code_size) {
        size_t n = ilwrap_insn_size(w->code + at, w->code_size - at);
        if (!n)
            return 0;
        at += (uint32_t)n;
    }
    return at == w->code_size;
}

static void test_ilwrap_tiny(void)
{
    /* ldarg.0; brfalse.s +1; nop; ret  (tiny: 5 bytes) */
    static const uint8_t m[] = {0x02 | (5 << 2), 0x02, 0x2C, 0x01, 0x00, 0x2A};
    struct ilwrap_in in = {m, sizeof m, 0, 0x11000042, 0x11000043, 0x1122334455667788ull};
    uint8_t out[512];
    struct wrapped w;
    REQUIRE(wrap(&in, out, sizeof out, &w));
    CHECK_EQ(w.locals_token, 0x11000042);
    CHECK(w.max_stack >= 3);
    /* the prologue: ldc.i8 <fn>; conv.i; calli <sig> */
    CHECK_EQ(w.code[0], 0x21);
    uint64_t fn = 0;
    memcpy(&fn, w.code + 1, 8);
    CHECK_EQ(fn, 0x1122334455667788ull);
    CHECK_EQ(w.code[9], 0xD3);
    CHECK_EQ(w.code[10], 0x29);
    CHECK_EQ(get32(w.code + 11), 0x11000043);
    /* new locals are 0, 1, 2 (no original ones): the slot, the previous
     * value, the object; the object is stored from ldarg.0 */
    uint32_t ldarg = find_op(&w, 15, 0x02);
    REQUIRE(ldarg != ~0u);
    CHECK(w.code[ldarg + 1] == 0xFE && w.code[ldarg + 2] == 0x0E && w.code[ldarg + 3] == 2);
    /* one clause: a finally around the original code */
    REQUIRE(w.clauses == 1);
    const uint8_t *c = w.clause;
    CHECK_EQ(get32(c), 2);
    uint32_t try_off = get32(c + 4), try_len = get32(c + 8), h_off = get32(c + 12),
             h_len = get32(c + 16);
    CHECK_EQ(h_off, try_off + try_len);
    CHECK_EQ(w.code[h_off + h_len - 1], 0xDC); /* endfinally */
    CHECK_EQ(w.code[h_off + h_len], 0x2A);     /* then the only ret */
    CHECK_EQ(h_off + h_len + 1, w.code_size);
    /* the original: ldarg.0, brtrue->long form to the nop, nop, leave END */
    CHECK_EQ(w.code[try_off], 0x02);
    CHECK_EQ(w.code[try_off + 1], 0x39); /* brfalse */
    CHECK_EQ((int32_t)get32(w.code + try_off + 2), 1);
    CHECK_EQ(w.code[try_off + 6], 0x00);
    CHECK_EQ(w.code[try_off + 7], 0xDD); /* leave */
    CHECK_EQ(try_off + 7 + 5 + (int32_t)get32(w.code + try_off + 8), h_off + h_len);
    CHECK_EQ(find_op(&w, 0, 0x2A), h_off + h_len);
}

/* A fat method with locals, a try/finally of its own, a switch and two
 * rets: offsets move, its clause moves and stays first. */
static void test_ilwrap_fat(void)
{
    uint8_t m[256] = {0};
    uint8_t code[] = {
        /* 0 */ 0x02,                               /* ldarg.0 */
        /* 1 */ 0x45, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, /* switch (L17, L18) from 14 */
        /* 14 */ 0x2B, 0x02,                        /* br.s L18 */
        /* 16 */ 0x00,                              /* nop */
        /* 17 */ 0x2A,                              /* ret */
        /* 18 */ 0x00,                              /* try { nop */
        /* 19 */ 0xDE, 0x02,                        /* leave.s L23 */
        /* 21 */ 0x00,                              /* finally { nop */
        /* 22 */ 0xDC,                              /* endfinally } */
        /* 23 */ 0x2A,                              /* ret */
    };
    m[0] = 0x3 | 0x8 | 0x10;
    m[1] = 3 << 4;
    m[2] = 2;
    uint32_t size = sizeof code;
    memcpy(m + 4, &size, 4);
    uint32_t locals = 0x11000007;
    memcpy(m + 8, &locals, 4);
    memcpy(m + 12, code, sizeof code);
    size_t at = (12 + sizeof code + 3) & ~(size_t)3;
    /* a small EH section: finally, try 18+3, handler 21+2 */
    m[at] = 0x01;
    m[at + 1] = 4 + 12;
    uint8_t *c = m + at + 4;
    c[0] = 2;                /* flags (u16) */
    c[2] = 18;               /* try offset (u16) */
    c[4] = 3;                /* try length (u8) */
    c[5] = 21;               /* handler offset (u16) */
    c[7] = 2;                /* handler length (u8) */
    size_t total = at + 16;
    struct ilwrap_in in = {m, total, 5, 0x11000099, 0x1100009A, 0x1000};
    uint8_t out[512];
    struct wrapped w;
    REQUIRE(wrap(&in, out, sizeof out, &w));
    CHECK_EQ(w.max_stack, 3);
    CHECK_EQ(out[0] & 0x10, 0x10); /* InitLocals kept */
    REQUIRE(w.clauses == 2);
    /* the original's clause first; ours after it, enclosing it */
    uint32_t t0 = get32(w.clause + 4), tl = get32(w.clause + 8), h0 = get32(w.clause + 12),
             hl = get32(w.clause + 16);
    uint32_t o_t0 = get32(w.clause + 24 + 4), o_tl = get32(w.clause + 24 + 8),
             o_h0 = get32(w.clause + 24 + 12);
    CHECK_EQ(get32(w.clause + 24), 2);
    CHECK(o_t0 <= t0 && h0 + hl <= o_t0 + o_tl);
    CHECK_EQ(o_h0, o_t0 + o_tl);
    CHECK_EQ(h0, t0 + tl);
    CHECK_EQ(w.code[t0], 0x00);       /* the try's nop */
    CHECK_EQ(w.code[t0 + 1], 0xDD);   /* leave.s became leave */
    CHECK_EQ(w.code[h0], 0x00);       /* the finally's nop */
    CHECK_EQ(w.code[h0 + 1], 0xDC);
    /* leave (from the original try) goes to where the original's second ret
     * was: now a leave to the end */
    uint32_t to = t0 + 1 + 5 + get32(w.code + t0 + 2);
    CHECK_EQ(w.code[to], 0xDD);
    CHECK_EQ(to + 5 + get32(w.code + to + 1), w.code_size - 1);
    /* the switch's targets: the first ret (now a leave) and the try */
    uint32_t sw = o_t0 + 1;
    CHECK_EQ(w.code[sw], 0x45);
    uint32_t base = sw + 13;
    CHECK_EQ(w.code[base + get32(w.code + sw + 5)], 0xDD);
    CHECK_EQ(base + get32(w.code + sw + 9), t0);
    /* the new locals are 5, 6, 7 */
    uint32_t st = find_op(&w, 0, 0xFE);
    REQUIRE(st != ~0u);
    CHECK(w.code[st + 1] == 0x0E && w.code[st + 2] == 5);
}

static void test_ilwrap_refuses(void)
{
    uint8_t out[256];
    size_t n;
    /* an unknown opcode */
    static const uint8_t bad[] = {0x02 | (2 << 2), 0xA6, 0x2A};
    struct ilwrap_in in = {bad, sizeof bad, 0, 1, 2, 3};
    CHECK(ilwrap_publish(&in, out, sizeof out, &n) == ILWRAP_UNSUPPORTED);
    /* tail. call: cannot sit in a try */
    static const uint8_t tail[] = {0x02 | (8 << 2), 0xFE, 0x14, 0x28, 1, 0, 0, 6, 0x2A};
    in.method = tail;
    in.size = sizeof tail;
    CHECK(ilwrap_publish(&in, out, sizeof out, &n) == ILWRAP_UNSUPPORTED);
    /* a branch into the middle of an instruction */
    static const uint8_t mid[] = {0x02 | (5 << 2), 0x2B, 0x01, 0x1F, 0x05, 0x2A};
    in.method = mid;
    in.size = sizeof mid;
    CHECK(ilwrap_publish(&in, out, sizeof out, &n) == ILWRAP_MALFORMED);
    /* a code size past the end */
    static const uint8_t cut[] = {0x02 | (9 << 2), 0x00, 0x2A};
    in.method = cut;
    in.size = sizeof cut;
    CHECK(ilwrap_publish(&in, out, sizeof out, &n) == ILWRAP_MALFORMED);
    /* no room */
    static const uint8_t ok[] = {0x02 | (1 << 2), 0x2A};
    in.method = ok;
    in.size = sizeof ok;
    CHECK(ilwrap_publish(&in, out, 16, &n) == ILWRAP_TOO_BIG);
}

static void test_ilwrap_locals_sig(void)
{
    static const uint8_t extra[] = {0x18, 0x18, 0x1C};
    uint8_t out[64];
    uint32_t count = 99;
    size_t n = ilwrap_locals_sig(NULL, 0, extra, 3, out, sizeof out, &count);
    CHECK_EQ(n, 5);
    CHECK_EQ(count, 0);
    CHECK(out[0] == 0x07 && out[1] == 3 && out[2] == 0x18 && out[4] == 0x1C);
    /* one local of class token 0x12 (ELEMENT_TYPE_CLASS, coded token) */
    static const uint8_t sig[] = {0x07, 0x01, 0x12, 0x49};
    n = ilwrap_locals_sig(sig, sizeof sig, extra, 3, out, sizeof out, &count);
    CHECK_EQ(n, 7);
    CHECK_EQ(count, 1);
    CHECK(out[1] == 4 && out[2] == 0x12 && out[3] == 0x49 && out[6] == 0x1C);
    /* 127 locals become 130: a two-byte count */
    uint8_t big[130] = {0x07, 127};
    memset(big + 2, 0x08, 127);
    n = ilwrap_locals_sig(big, 129, extra, 3, out, sizeof out, &count);
    CHECK_EQ(n, 0); /* out too small */
    uint8_t out2[256];
    n = ilwrap_locals_sig(big, 129, extra, 3, out2, sizeof out2, &count);
    CHECK_EQ(count, 127);
    CHECK(out2[1] == 0x80 && out2[2] == 130);
    CHECK_EQ(n, 3 + 127 + 3);
    static const uint8_t not_locals[] = {0x06, 0x08};
    CHECK_EQ(ilwrap_locals_sig(not_locals, 2, extra, 3, out2, sizeof out2, &count), 0);
}

void suite_ilwrap(void)
{
    RUN(test_ilwrap_tiny);
    RUN(test_ilwrap_fat);
    RUN(test_ilwrap_refuses);
    RUN(test_ilwrap_locals_sig);
}
