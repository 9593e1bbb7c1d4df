/*
 * Unit tests of the IL rewrite of logical async stacks (async/ilwrap.h),
 * made by the IL engine: tiny and fat bodies, branches, switches and
 * exception clauses moved, what it refuses, the local signature.
 */
#include <stdint.h>
#include <string.h>

#include "agent/async/ilwrap.h"
#include "test.h"

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Wraps a method and parses the result back (the engine's parser: every
 * instruction decodes, clauses on boundaries); 0 when either failed. */
static int wrap(const struct ilwrap_in *in, struct il_rewritten *r, struct il_body *w)
{
    char why[200];
    if (ilwrap_publish(in, r, why, sizeof why) < 0)
        return 0;
    if (il_parse(r->body, r->size, w, why, sizeof why) < 0) {
        il_rewritten_free(r);
        return 0;
    }
    return 1;
}

/* The offset of the first instruction with opcode op at or after `from`
 * (or ~0). */
static uint32_t find_op(const struct il_body *w, uint32_t from, uint16_t op)
{
    for (uint32_t i = 0; i < w->count; i++)
        if (w->instrs[i].offset >= from && w->instrs[i].op == op)
            return w->instrs[i].offset;
    return ~0u;
}

static void test_ilwrap_tiny(void)
{
    /* ldarg.0; brfalse.s +1; nop; ret  (tiny: 5 bytes) */
    static const uint8_t m[] = {0x02 | (5 << 2), 0x02, 0x2C, 0x01, 0x00, 0x2A};
    struct ilwrap_in in = {m, sizeof m, 0, 0x11000042, 0x11000043, 0x1122334455667788ull};
    struct il_rewritten r;
    struct il_body w;
    REQUIRE(wrap(&in, &r, &w));
    CHECK_EQ(w.local_sig, 0x11000042);
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
    /* one clause: a finally around the original code, after the prologue */
    REQUIRE(w.clause_count == 1);
    const struct il_clause *c = &w.clauses[0];
    CHECK_EQ(c->flags, IL_CLAUSE_FINALLY);
    CHECK(c->try_offset > ldarg);
    uint32_t h_off = c->handler_offset, h_len = c->handler_length, try_off = c->try_offset;
    CHECK_EQ(h_off, try_off + c->try_length);
    CHECK_EQ(w.code[h_off + h_len - 1], 0xDC); /* endfinally */
    CHECK_EQ(w.code[h_off + h_len], 0x2A);     /* then the only ret */
    CHECK_EQ(h_off + h_len + 1, w.code_size);
    /* the original: ldarg.0, brfalse.s to the ret, now a leave (still in
     * reach: the engine widens only a branch whose target moved away), nop,
     * leave END */
    CHECK_EQ(w.code[try_off], 0x02);
    CHECK_EQ(w.code[try_off + 1], 0x2C); /* brfalse.s */
    CHECK_EQ((int8_t)w.code[try_off + 2], 1);
    CHECK_EQ(w.code[try_off + 3], 0x00);
    CHECK_EQ(w.code[try_off + 4], 0xDD); /* leave */
    CHECK_EQ(try_off + 4 + 5 + (int32_t)get32(w.code + try_off + 5), h_off + h_len);
    CHECK_EQ(find_op(&w, 0, 0x2A), h_off + h_len);
    il_body_free(&w);
    il_rewritten_free(&r);
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
    struct il_rewritten r;
    struct il_body w;
    REQUIRE(wrap(&in, &r, &w));
    CHECK(w.max_stack >= 3);
    CHECK(w.init_locals); /* InitLocals kept */
    REQUIRE(w.clause_count == 2);
    /* the original's clause first; ours after it, enclosing it */
    const struct il_clause *mine = &w.clauses[0], *ours = &w.clauses[1];
    uint32_t t0 = mine->try_offset, tl = mine->try_length, h0 = mine->handler_offset,
             hl = mine->handler_length;
    uint32_t o_t0 = ours->try_offset, o_tl = ours->try_length, o_h0 = ours->handler_offset;
    CHECK_EQ(ours->flags, IL_CLAUSE_FINALLY);
    CHECK(o_t0 <= t0 && h0 + hl <= o_t0 + o_tl);
    CHECK_EQ(o_h0, o_t0 + o_tl);
    CHECK_EQ(h0, t0 + tl);
    CHECK_EQ(w.code[t0], 0x00);       /* the try's nop */
    CHECK_EQ(w.code[t0 + 1], 0xDE);   /* leave.s, still in reach */
    CHECK_EQ(w.code[h0], 0x00);       /* the finally's nop */
    CHECK_EQ(w.code[h0 + 1], 0xDC);
    /* leave.s (from the original try) goes to where the original's second
     * ret was: now a leave to the end */
    uint32_t to = t0 + 1 + 2 + (uint32_t)(int8_t)w.code[t0 + 2];
    CHECK_EQ(w.code[to], 0xDD);
    CHECK_EQ(to + 5 + get32(w.code + to + 1), w.code_size - 1);
    /* the switch's targets: the first ret (now a leave) and the try */
    uint32_t sw = o_t0 + 1;
    CHECK_EQ(w.code[sw], 0x45);
    uint32_t base = sw + 13;
    CHECK_EQ(w.code[base + get32(w.code + sw + 5)], 0xDD);
    CHECK_EQ(base + get32(w.code + sw + 9), t0);
    /* the new locals are 5, 6, 7 */
    uint32_t st = find_op(&w, 0, 0xFE0E);
    REQUIRE(st != ~0u);
    CHECK(w.code[st + 2] == 5);
    il_body_free(&w);
    il_rewritten_free(&r);
}

static void test_ilwrap_refuses(void)
{
    struct il_rewritten r;
    char why[200];
    /* an unknown opcode */
    static const uint8_t bad[] = {0x02 | (2 << 2), 0xA6, 0x2A};
    struct ilwrap_in in = {bad, sizeof bad, 0, 1, 2, 3};
    CHECK(ilwrap_publish(&in, &r, why, sizeof why) < 0);
    /* tail. call: cannot sit in a try */
    static const uint8_t tail[] = {0x02 | (8 << 2), 0xFE, 0x14, 0x28, 1, 0, 0, 6, 0x2A};
    in.method = tail;
    in.size = sizeof tail;
    CHECK(ilwrap_publish(&in, &r, why, sizeof why) < 0);
    CHECK(strstr(why, "tail call") != NULL);
    /* jmp: leaves the frame without the finally */
    static const uint8_t jmp[] = {0x02 | (5 << 2), 0x27, 1, 0, 0, 6};
    in.method = jmp;
    in.size = sizeof jmp;
    CHECK(ilwrap_publish(&in, &r, why, sizeof why) < 0);
    CHECK(strstr(why, "jmp") != NULL);
    /* a branch into the middle of an instruction */
    static const uint8_t mid[] = {0x02 | (5 << 2), 0x2B, 0x01, 0x1F, 0x05, 0x2A};
    in.method = mid;
    in.size = sizeof mid;
    CHECK(ilwrap_publish(&in, &r, why, sizeof why) < 0);
    /* a code size past the end */
    static const uint8_t cut[] = {0x02 | (9 << 2), 0x00, 0x2A};
    in.method = cut;
    in.size = sizeof cut;
    CHECK(ilwrap_publish(&in, &r, why, sizeof why) < 0);
    /* no room for three more locals */
    static const uint8_t ok[] = {0x02 | (1 << 2), 0x2A};
    in.method = ok;
    in.size = sizeof ok;
    in.first_local = 0xfffe;
    CHECK(ilwrap_publish(&in, &r, why, sizeof why) < 0);
}

static void test_ilwrap_locals_sig(void)
{
    uint8_t out[64];
    size_t n = 0;
    CHECK_EQ(ilwrap_locals(NULL, 0, out, sizeof out, &n), 0);
    CHECK_EQ(n, 5);
    CHECK(out[0] == 0x07 && out[1] == 3 && out[2] == 0x18 && out[3] == 0x18 && out[4] == 0x1C);
    /* one local of class token 0x12 (ELEMENT_TYPE_CLASS, coded token) */
    static const uint8_t sig[] = {0x07, 0x01, 0x12, 0x49};
    CHECK_EQ(ilwrap_locals(sig, sizeof sig, out, sizeof out, &n), 1);
    CHECK_EQ(n, 7);
    CHECK(out[1] == 4 && out[2] == 0x12 && out[3] == 0x49 && out[6] == 0x1C);
    /* 127 locals become 130: a two-byte count */
    uint8_t big[130] = {0x07, 127};
    memset(big + 2, 0x08, 127);
    CHECK(ilwrap_locals(big, 129, out, sizeof out, &n) < 0); /* out too small */
    uint8_t out2[256];
    CHECK_EQ(ilwrap_locals(big, 129, out2, sizeof out2, &n), 127);
    CHECK(out2[1] == 0x80 && out2[2] == 130);
    CHECK_EQ(n, 3 + 127 + 3);
    static const uint8_t not_locals[] = {0x06, 0x08};
    CHECK(ilwrap_locals(not_locals, 2, out2, sizeof out2, &n) < 0);
}

void suite_ilwrap(void)
{
    RUN(test_ilwrap_tiny);
    RUN(test_ilwrap_fat);
    RUN(test_ilwrap_refuses);
    RUN(test_ilwrap_locals_sig);
}
