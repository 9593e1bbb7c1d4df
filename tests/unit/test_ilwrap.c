/*
 * Unit tests of the IL rewrite of logical async stacks (async/ilwrap.h),
 * made by the IL engine: tiny and fat bodies, branches, switches and
 * exception clauses moved, what it refuses, the calli signatures it can
 * use (those of .NET 8, 9 and 10's CoreLib among them).
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

/* The call: [ldc.i4.0; conv.i] for each parameter after the first, then
 * ldc.i8 <fn>; conv.i; calli <sig>; [pop].  Returns the offset after it,
 * or ~0 when the bytes at p are not that. */
static uint32_t check_call(const uint8_t *code, uint32_t p, const struct ilwrap_in *in)
{
    for (uint32_t i = 1; i < in->calli.params; i++, p += 2)
        if (code[p] != 0x16 || code[p + 1] != 0xD3)
            return ~0u;
    uint64_t fn = 0;
    memcpy(&fn, code + p + 1, 8);
    if (code[p] != 0x21 || fn != in->enter_fn || code[p + 9] != 0xD3 || code[p + 10] != 0x29 ||
        get32(code + p + 11) != in->calli.token)
        return ~0u;
    p += 15;
    if (in->calli.returns && code[p++] != 0x26)
        return ~0u;
    return p;
}

static void test_ilwrap_tiny(void)
{
    /* ldarg.0; brfalse.s +1; nop; ret  (tiny: 5 bytes) */
    static const uint8_t m[] = {0x02 | (5 << 2), 0x02, 0x2C, 0x01, 0x00, 0x2A};
    struct ilwrap_in in = {m, sizeof m, {0x11000043, 2, 1, 1}, 0x1122334455667788ull, 0};
    struct il_rewritten r;
    struct il_body w;
    REQUIRE(wrap(&in, &r, &w));
    CHECK_EQ(w.local_sig, 0); /* no locals added: none before, none after */
    CHECK(w.max_stack >= 3);
    /* the prologue: ldarga.s 0; conv.u; ldc.i4.0; conv.i; ldc.i8 <fn>;
     * conv.i; calli <sig>; pop */
    CHECK(w.code[0] == 0x0F && w.code[1] == 0 && w.code[2] == 0xE0);
    uint32_t after = check_call(w.code, 3, &in);
    REQUIRE(after != ~0u);
    /* one clause: a finally around the original code, after the prologue */
    REQUIRE(w.clause_count == 1);
    const struct il_clause *c = &w.clauses[0];
    CHECK_EQ(c->flags, IL_CLAUSE_FINALLY);
    CHECK_EQ(c->try_offset, after);
    uint32_t h_off = c->handler_offset, h_len = c->handler_length, try_off = c->try_offset;
    CHECK_EQ(h_off, try_off + c->try_length);
    /* the finally: ldc.i4.0; conv.i (the leave), the call, endfinally */
    CHECK(w.code[h_off] == 0x16 && w.code[h_off + 1] == 0xD3);
    CHECK_EQ(check_call(w.code, h_off + 2, &in), h_off + h_len - 1);
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
    /* a one-parameter signature returning nothing: no padding, no pop */
    struct ilwrap_in one = {m, sizeof m, {0x11000044, 1, 0, 0}, 0x1000, 0};
    REQUIRE(wrap(&one, &r, &w));
    REQUIRE(w.clause_count == 1);
    CHECK_EQ(check_call(w.code, 3, &one), w.clauses[0].try_offset);
    CHECK(w.max_stack >= 2);
    il_body_free(&w);
    il_rewritten_free(&r);
}

/* Entry only (unhandled_probe.h): the call before the original body, which
 * is left as it was: no clause, its own rets, its branches moved with it.
 * The shape of .NET 10's AppContext.OnUnhandledException(object): a static
 * field's delegate, null-checked, invoked. */
static void test_ilwrap_entry_only(void)
{
    /* ldsfld <f>; dup; brtrue.s +2; pop; ret; ldarg.0; callvirt <m>; ret */
    static const uint8_t code[] = {0x7E, 1, 0, 0, 0x04, 0x25, 0x2D, 0x02, 0x26, 0x2A,
                                   0x02, 0x6F, 2, 0, 0, 0x0A, 0x2A};
    uint8_t m[1 + sizeof code];
    m[0] = (uint8_t)(0x02 | (sizeof code << 2));
    memcpy(m + 1, code, sizeof code);
    struct ilwrap_in in = {m, sizeof m, {0x11000050, 1, 1, 0}, 0xABCDEF, 1};
    struct il_rewritten r;
    struct il_body w;
    REQUIRE(wrap(&in, &r, &w));
    CHECK_EQ(w.clause_count, 0);
    CHECK(w.code[0] == 0x0F && w.code[1] == 0 && w.code[2] == 0xE0); /* ldarga.s 0; conv.u */
    uint32_t after = check_call(w.code, 3, &in);
    REQUIRE(after != ~0u);
    /* the original, whole, after the call: its short branch still in reach */
    REQUIRE(w.code_size == after + sizeof code);
    CHECK(!memcmp(w.code + after, code, sizeof code));
    CHECK(w.max_stack >= 2);
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
    struct ilwrap_in in = {m, total, {0x1100009A, 1, 1, 0}, 0x1000, 0};
    struct il_rewritten r;
    struct il_body w;
    REQUIRE(wrap(&in, &r, &w));
    CHECK(w.max_stack >= 2);
    CHECK(w.init_locals); /* InitLocals kept */
    CHECK_EQ(w.local_sig, 0x11000007); /* and its locals */
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
    /* the entry code stores nothing in a local */
    CHECK_EQ(find_op(&w, 0, 0xFE0E), ~0u);
    il_body_free(&w);
    il_rewritten_free(&r);
}

static void test_ilwrap_refuses(void)
{
    struct il_rewritten r;
    char why[200];
    /* an unknown opcode */
    static const uint8_t bad[] = {0x02 | (2 << 2), 0xA6, 0x2A};
    struct ilwrap_in in = {bad, sizeof bad, {0x11000001, 1, 0, 0}, 3, 0};
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
    /* no signature to call with */
    static const uint8_t ok[] = {0x02 | (1 << 2), 0x2A};
    in.method = ok;
    in.size = sizeof ok;
    REQUIRE(ilwrap_publish(&in, &r, why, sizeof why) == 0);
    il_rewritten_free(&r);
    in.calli.token = 0;
    CHECK(ilwrap_publish(&in, &r, why, sizeof why) < 0);
}

/* Which StandAloneSig blobs the call can use, and which is best. */
static void test_ilwrap_calli_sigs(void)
{
    struct ilwrap_calli c;
    /* .NET 8, 9 and 10's CoreLib: unmanaged int (nint), a GC transition */
    static const uint8_t plain[] = {0x09, 0x01, 0x08, 0x18};
    REQUIRE(ilwrap_calli_fits(plain, sizeof plain, 0x020006cb, &c));
    CHECK(c.params == 1 && c.returns && !c.suppress);
    /* unmanaged[SuppressGCTransition] int (nint, nint): the modopt names
     * the TypeDef given (0x6cb, CallConvSuppressGCTransition's row in
     * .NET 10's CoreLib; coded 0x1b2c) */
    static const uint8_t suppress[] = {0x09, 0x02, 0x20, 0x9b, 0x2c, 0x08, 0x18, 0x18};
    REQUIRE(ilwrap_calli_fits(suppress, sizeof suppress, 0x020006cb, &c));
    CHECK(c.params == 2 && c.returns && c.suppress);
    struct ilwrap_calli p1 = {1, 1, 1, 0}, s2 = {2, 2, 1, 1};
    CHECK(ilwrap_calli_better(&s2, &p1));
    CHECK(!ilwrap_calli_better(&p1, &s2));
    /* .NET 10's CoreLib has the same shape with a modopt of TypeDef 0x6cd,
     * CallConvMemberFunction (a convention of other meaning): refused (an
     * early version of this test took it for SuppressGCTransition) */
    static const uint8_t member[] = {0x09, 0x02, 0x20, 0x9b, 0x34, 0x08, 0x18, 0x18};
    CHECK(!ilwrap_calli_fits(member, sizeof member, 0x020006cb, &c));
    /* and no modopt is taken for it when the type is not known */
    CHECK(!ilwrap_calli_fits(suppress, sizeof suppress, 0, &c));
    /* C convention, void (void*, nint) */
    static const uint8_t c_void[] = {0x01, 0x02, 0x01, 0x0f, 0x01, 0x18};
    REQUIRE(ilwrap_calli_fits(c_void, sizeof c_void, 0, &c));
    CHECK(c.params == 2 && !c.returns && !c.suppress);
    /* refused: managed (default convention), an int64 return on the first
     * parameter's place, a struct pointer parameter, no parameter, five
     * parameters, a modopt on a C call, trailing bytes, a cut blob, a
     * local signature */
    static const uint8_t managed[] = {0x00, 0x01, 0x01, 0x18};
    static const uint8_t i8_param[] = {0x09, 0x01, 0x08, 0x0a};
    static const uint8_t struct_ptr[] = {0x09, 0x01, 0x08, 0x0f, 0x11, 0x84, 0x3c};
    static const uint8_t none[] = {0x09, 0x00, 0x08};
    static const uint8_t five[] = {0x09, 0x05, 0x08, 0x18, 0x18, 0x18, 0x18, 0x18};
    static const uint8_t c_modopt[] = {0x01, 0x01, 0x20, 0x9b, 0x2c, 0x08, 0x18};
    static const uint8_t trailing[] = {0x09, 0x01, 0x08, 0x18, 0x18};
    static const uint8_t cut[] = {0x09, 0x02, 0x08, 0x18};
    static const uint8_t locals[] = {0x07, 0x01, 0x18};
    static const uint8_t ret_i8[] = {0x09, 0x01, 0x0a, 0x18};
    const struct {
        const uint8_t *b;
        size_t n;
    } refused[] = {{managed, sizeof managed},     {i8_param, sizeof i8_param},
                   {struct_ptr, sizeof struct_ptr}, {none, sizeof none},
                   {five, sizeof five},           {c_modopt, sizeof c_modopt},
                   {trailing, sizeof trailing},   {cut, sizeof cut},
                   {locals, sizeof locals},       {ret_i8, sizeof ret_i8}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        CHECK(!ilwrap_calli_fits(refused[i].b, refused[i].n, 0x020006cb, &c));
}

void suite_ilwrap(void)
{
    RUN(test_ilwrap_tiny);
    RUN(test_ilwrap_fat);
    RUN(test_ilwrap_entry_only);
    RUN(test_ilwrap_refuses);
    RUN(test_ilwrap_calli_sigs);
}
