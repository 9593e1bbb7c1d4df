/*
 * Tests of the IL engine (agent/il): every body of the corpus
 * (tests/unit/data/il_corpus.bin, real bodies from our test programs and
 * the framework, chosen by tools/ilcorpus select) rewritten with probes at
 * every instruction, at entry and on every edge, and checked structurally
 * (il_check); bodies built here for the cases the corpus may lack (tiny
 * headers, small EH sections widened, short branches pushed out of reach,
 * switch, filters, prefixes, tail calls); malformed bodies refused; the
 * offset map; allocation failures.  The wrap (il_edit_wrap): every corpus
 * body that can be wrapped, wrapped with probes too, and checked; its
 * shape; what it refuses; il_check catching a damaged wrap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/il/il.h"
#include "common/mem.h"
#include "fixture.h"
#include "test.h"

static uint8_t probe[IL_COUNTER_PROBE_SIZE];

/* Probes everywhere they may go: before each instruction (when allowed),
 * at entry, on every edge.  Returns 0 when every one was taken. */
static int probe_everything(const struct il_body *b, struct il_edit *e, int before, int entry,
                            int edges)
{
    char why[200];
    il_counter_probe(probe, 0x00007f1234560000ull);
    for (uint32_t i = 0; i < b->count; i++) {
        const struct il_instr *in = &b->instrs[i];
        if (before && !(in->flags & (IL_INSTR_PREFIXED | IL_INSTR_TAIL_RET)) &&
            il_edit_add(e, b, i, IL_BEFORE, 0, probe, sizeof probe, 3, why, sizeof why) < 0)
            return -1;
        if (entry && i == 0 && !(in->flags & IL_INSTR_PREFIXED) &&
            il_edit_add(e, b, 0, IL_ENTRY, 0, probe, sizeof probe, 3, why, sizeof why) < 0)
            return -1;
        if (edges && il_opcode(in->op)->flow == IL_FLOW_COND)
            for (uint32_t k = 0; k <= in->target_count; k++)
                if ((k > 0 || !(b->instrs[i + 1].flags & IL_INSTR_PREFIXED)) &&
                    il_edit_add(e, b, i, IL_EDGE, k, probe, sizeof probe, 3, why, sizeof why) < 0)
                    return -1;
    }
    return 0;
}

/* Rewrites with the given probes and checks; reports the reason. */
static int rewrite_checked(const struct il_body *b, int before, int entry, int edges, char *why,
                           size_t size)
{
    struct il_edit e;
    il_edit_init(&e);
    int rc = probe_everything(b, &e, before, entry, edges);
    if (rc < 0)
        snprintf(why, size, "an edit was refused");
    struct il_rewritten r;
    if (rc == 0 && (rc = il_rewrite(b, &e, &r, why, size)) == 0) {
        rc = il_check(b, &e, &r, why, size);
        /* the map: one entry per instruction, both offsets increasing */
        for (uint32_t i = 1; rc == 0 && i < r.map_count; i++)
            if (r.map[i].old_offset <= r.map[i - 1].old_offset ||
                r.map[i].new_offset < r.map[i - 1].new_offset) {
                snprintf(why, size, "the offset map is not increasing at %u", i);
                rc = -1;
            }
        il_rewritten_free(&r);
    }
    il_edit_free(&e);
    return rc;
}

static const uint8_t handler[] = {0x16, 0x26}; /* ldc.i4.0; pop */

/* Wraps b (a finally or a fault, with or without a result local, by
 * `variant`), with probes everywhere when variant is odd, rewrites and
 * checks.  Returns 1 when wrapped and checked, 0 when the engine refused
 * the wrap (a tail call, a jmp), -1 with why when something failed. */
static int wrap_checked(const struct il_body *b, unsigned variant, char *why, size_t size)
{
    struct il_edit e;
    il_edit_init(&e);
    int rc = -1;
    enum il_clause_kind kind = variant & 2 ? IL_CLAUSE_FAULT : IL_CLAUSE_FINALLY;
    uint32_t result = variant & 4 ? 7 : IL_NO_RESULT;
    if ((variant & 1) && probe_everything(b, &e, 1, 1, 1) < 0) {
        snprintf(why, size, "an edit was refused");
    } else if (il_edit_wrap(&e, b, kind, handler, sizeof handler, 1, result, why, size) < 0) {
        rc = 0;
    } else {
        struct il_rewritten r;
        if (il_rewrite(b, &e, &r, why, size) == 0) {
            rc = il_check(b, &e, &r, why, size) == 0 ? 1 : -1;
            il_rewritten_free(&r);
        }
    }
    il_edit_free(&e);
    return rc;
}

static void test_il_corpus(void)
{
    size_t size;
    uint8_t *data = fixture_read_file("tests/unit/data/il_corpus.bin", &size);
    REQUIRE(data);
    unsigned bodies = 0, with_clauses = 0, with_switch = 0, tiny = 0, wraps = 0;
    for (size_t at = 0; at + 4 <= size;) {
        uint32_t n = data[at] | (uint32_t)data[at + 1] << 8 | (uint32_t)data[at + 2] << 16 |
                     (uint32_t)data[at + 3] << 24;
        at += 4;
        REQUIRE(n <= size - at);
        struct il_body b;
        char why[256];
        if (il_parse(data + at, n, &b, why, sizeof why) < 0) {
            char m[320];
            snprintf(m, sizeof m, "corpus body %u does not parse: %s", bodies, why);
            test_fail(__FILE__, __LINE__, m);
            at += n;
            continue;
        }
        bodies++;
        with_clauses += b.clause_count > 0;
        with_switch += b.target_count > 0;
        tiny += b.tiny;
        static const int schemes[][3] = {{1, 1, 1}, {1, 0, 0}, {0, 0, 1}, {0, 0, 0}};
        for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++) {
            if (rewrite_checked(&b, schemes[s][0], schemes[s][1], schemes[s][2], why, sizeof why) < 0) {
                char m[320];
                snprintf(m, sizeof m, "corpus body %u, scheme %zu: %s", bodies, s, why);
                test_fail(__FILE__, __LINE__, m);
            }
        }
        int wrapped = wrap_checked(&b, bodies, why, sizeof why);
        if (wrapped < 0) {
            char m[320];
            snprintf(m, sizeof m, "corpus body %u, wrapped: %s", bodies, why);
            test_fail(__FILE__, __LINE__, m);
        }
        wraps += wrapped > 0;
        il_body_free(&b);
        at += n;
    }
    free(data);
    /* most bodies can be wrapped (not those with a tail call or a jmp) */
    CHECK(wraps >= bodies * 9 / 10);
    /* the corpus has what it is for */
    CHECK(bodies >= 600);
    CHECK(with_clauses >= 40);
    CHECK(with_switch >= 10);
    CHECK(tiny >= 20);
}

/* A body built here: a fat header over `code`, optionally a small EH
 * section with one clause. */
static size_t fat_body(uint8_t *out, const uint8_t *code, uint32_t len, int small_eh,
                       const uint32_t clause[6])
{
    out[0] = (uint8_t)(0x03 | (clause ? 0x08 : 0) | 0x10);
    out[1] = 0x30;
    out[2] = 8;
    out[3] = 0;
    for (int i = 0; i < 4; i++)
        out[4 + i] = (uint8_t)(len >> (8 * i));
    memset(out + 8, 0, 4);
    memcpy(out + 12, code, len);
    size_t at = (12 + len + 3) & ~(size_t)3;
    memset(out + 12 + len, 0, at - 12 - len);
    if (!clause)
        return 12 + len;
    if (small_eh) {
        out[at] = 0x01;
        out[at + 1] = 16;
        out[at + 2] = out[at + 3] = 0;
        uint8_t *c = out + at + 4;
        c[0] = (uint8_t)clause[0];
        c[1] = 0;
        c[2] = (uint8_t)clause[1];
        c[3] = (uint8_t)(clause[1] >> 8);
        c[4] = (uint8_t)clause[2];
        c[5] = (uint8_t)clause[3];
        c[6] = (uint8_t)(clause[3] >> 8);
        c[7] = (uint8_t)clause[4];
        for (int i = 0; i < 4; i++)
            c[8 + i] = (uint8_t)(clause[5] >> (8 * i));
        return at + 16;
    }
    out[at] = 0x41;
    out[at + 1] = 28;
    out[at + 2] = out[at + 3] = 0;
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 4; i++)
            out[at + 4 + 4 * k + i] = (uint8_t)(clause[k] >> (8 * i));
    return at + 28;
}

static void test_il_tiny_and_small_eh(void)
{
    /* tiny: ldarg.0; brtrue.s L; ldc.i4.1; ret; L: ldc.i4.2; ret */
    uint8_t tiny[] = {(uint8_t)(7 << 2 | 2), 0x02, 0x2d, 0x02, 0x17, 0x2a, 0x18, 0x2a};
    struct il_body b;
    char why[200];
    REQUIRE(il_parse(tiny, sizeof tiny, &b, why, sizeof why) == 0);
    CHECK(b.tiny);
    CHECK_EQ(b.count, 6);
    CHECK_EQ(b.max_stack, 8);
    CHECK(rewrite_checked(&b, 1, 1, 1, why, sizeof why) == 0);
    il_body_free(&b);

    /* try { nop; leave.s END } finally { nop; endfinally } END: ret, in a
     * small EH section */
    uint8_t code2[] = {0x00, 0xde, 0x02, 0x00, 0xdc, 0x2a};
    uint32_t clause[6] = {IL_CLAUSE_FINALLY, 0, 3, 3, 2, 0};
    uint8_t body[128];
    size_t n = fat_body(body, code2, sizeof code2, 1, clause);
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    CHECK_EQ(b.clause_count, 1);
    CHECK_EQ(b.clauses[0].handler_offset, 3);
    struct il_edit e;
    il_edit_init(&e);
    REQUIRE(probe_everything(&b, &e, 1, 1, 1) == 0);
    struct il_rewritten r;
    REQUIRE(il_rewrite(&b, &e, &r, why, sizeof why) == 0);
    CHECK(il_check(&b, &e, &r, why, sizeof why) == 0);
    /* the section became fat; the probe before the handler's first
     * instruction is inside the handler */
    struct il_body nb;
    REQUIRE(il_parse(r.body, r.size, &nb, why, sizeof why) == 0);
    size_t at = (nb.header_size + nb.code_size + 3) & ~(size_t)3;
    CHECK(r.body[at] & 0x40);
    CHECK_EQ(nb.clauses[0].handler_offset, r.landing[2]);
    CHECK(r.landing[2] < r.placed[2]);
    il_body_free(&nb);
    il_rewritten_free(&r);
    il_edit_free(&e);
    il_body_free(&b);
}

static void test_il_short_branch_widened(void)
{
    /* ldc.i4.0; brtrue.s END; 60 x nop; END: ret -- probes before every nop
     * push END 960 bytes away */
    uint8_t code[64 + 4];
    size_t len = 0;
    code[len++] = 0x16;
    code[len++] = 0x2d;
    code[len++] = 60;
    for (int i = 0; i < 60; i++)
        code[len++] = 0x00;
    code[len++] = 0x2a;
    uint8_t body[256];
    size_t n = fat_body(body, code, (uint32_t)len, 0, NULL);
    struct il_body b;
    char why[200];
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    struct il_edit e;
    il_edit_init(&e);
    REQUIRE(probe_everything(&b, &e, 1, 0, 1) == 0);
    struct il_rewritten r;
    REQUIRE(il_rewrite(&b, &e, &r, why, sizeof why) == 0);
    CHECK(il_check(&b, &e, &r, why, sizeof why) == 0);
    struct il_body nb;
    REQUIRE(il_parse(r.body, r.size, &nb, why, sizeof why) == 0);
    long j = il_index_at(&nb, r.placed[1]);
    REQUIRE(j >= 0);
    CHECK_EQ(nb.instrs[j].op, 0x3a); /* brtrue */
    il_body_free(&nb);
    il_rewritten_free(&r);
    il_edit_free(&e);
    il_body_free(&b);
}

static void test_il_switch_filter_prefixes(void)
{
    /* ldarg.0; switch (A, B); br.s END; A: nop; B: nop; END: ret */
    uint8_t code[] = {0x02, 0x45, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
                      0x2b, 0x02, 0x00, 0x00, 0x2a};
    /* after switch (ends at 14): A = 16, B = 17; br.s at 14 -> 18 */
    uint8_t body[256];
    size_t n = fat_body(body, code, sizeof code, 0, NULL);
    struct il_body b;
    char why[200];
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    CHECK_EQ(b.target_count, 2);
    CHECK_EQ(il_target(&b, &b.instrs[1], 1), 16);
    CHECK_EQ(il_target(&b, &b.instrs[1], 2), 17);
    CHECK(rewrite_checked(&b, 1, 1, 1, why, sizeof why) == 0);
    il_body_free(&b);

    /* filter: try { leave.s END } filter { pop; ldc.i4.1; endfilter } handler { pop; leave.s END } END: ret */
    uint8_t fcode[] = {0xde, 0x07, 0x26, 0x17, 0xfe, 0x11, 0x26, 0xde, 0x00, 0x2a};
    /* 0 leave.s -> 9; 2 pop; 3 ldc.i4.1; 4 endfilter; 6 pop; 7 leave.s -> 9; 9 ret */
    uint32_t clause[6] = {IL_CLAUSE_FILTER, 0, 2, 6, 3, 2};
    n = fat_body(body, fcode, sizeof fcode, 0, clause);
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    CHECK(rewrite_checked(&b, 1, 1, 1, why, sizeof why) == 0);
    il_body_free(&b);

    /* prefixes: ldarg.0; volatile. ldind.i4; pop; ldarg.0; tail. call T; ret */
    uint8_t pcode[] = {0x02, 0xfe, 0x13, 0x4a, 0x26, 0x02, 0xfe, 0x14, 0x28, 0x01, 0x00, 0x00, 0x0a, 0x2a};
    n = fat_body(body, pcode, sizeof pcode, 0, NULL);
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    REQUIRE(b.count == 8);
    CHECK(b.instrs[2].flags & IL_INSTR_PREFIXED);
    CHECK(b.instrs[6].flags & IL_INSTR_PREFIXED);
    CHECK(b.instrs[7].flags & IL_INSTR_TAIL_RET);
    CHECK(!(b.instrs[3].flags & (IL_INSTR_PREFIXED | IL_INSTR_TAIL_RET)));
    struct il_edit e;
    il_edit_init(&e);
    CHECK(il_edit_add(&e, &b, 2, IL_BEFORE, 0, probe, sizeof probe, 3, why, sizeof why) < 0);
    CHECK(il_edit_add(&e, &b, 6, IL_ENTRY, 0, probe, sizeof probe, 3, why, sizeof why) < 0);
    CHECK(il_edit_add(&e, &b, 7, IL_BEFORE, 0, probe, sizeof probe, 3, why, sizeof why) < 0);
    CHECK(il_edit_add(&e, &b, 1, IL_BEFORE, 0, probe, sizeof probe, 3, why, sizeof why) == 0);
    CHECK(il_edit_add(&e, &b, 1, IL_EDGE, 0, probe, sizeof probe, 3, why, sizeof why) < 0);
    /* snippets must be straight-line */
    static const uint8_t branchy[] = {0x2b, 0x00};
    static const uint8_t returning[] = {0x2a};
    static const uint8_t cut[] = {0x20, 0x01};
    CHECK(il_edit_add(&e, &b, 0, IL_BEFORE, 0, branchy, sizeof branchy, 0, why, sizeof why) < 0);
    CHECK(il_edit_add(&e, &b, 0, IL_BEFORE, 0, returning, sizeof returning, 0, why, sizeof why) < 0);
    CHECK(il_edit_add(&e, &b, 0, IL_BEFORE, 0, cut, sizeof cut, 0, why, sizeof why) < 0);
    il_edit_free(&e);
    CHECK(rewrite_checked(&b, 1, 1, 1, why, sizeof why) == 0);
    il_body_free(&b);
}

static void test_il_refused(void)
{
    struct il_body b;
    char why[200];
    uint8_t body[128];
    /* a branch into the middle of an instruction: ldc.i4 1; br.s -4; ret */
    uint8_t mid[] = {0x20, 0x01, 0x00, 0x00, 0x00, 0x2b, 0xfc, 0x2a};
    size_t n = fat_body(body, mid, sizeof mid, 0, NULL);
    CHECK(il_parse(body, n, &b, why, sizeof why) < 0);
    CHECK(strstr(why, "middle") != NULL);
    /* an unknown opcode */
    uint8_t unknown[] = {0x24, 0x2a};
    n = fat_body(body, unknown, sizeof unknown, 0, NULL);
    CHECK(il_parse(body, n, &b, why, sizeof why) < 0);
    /* a code size past the bytes */
    uint8_t cut[] = {0x03, 0x30, 0x08, 0x00, 0xff, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0x2a};
    CHECK(il_parse(cut, sizeof cut, &b, why, sizeof why) < 0);
    /* a clause boundary inside an instruction */
    uint8_t code[] = {0x20, 0x01, 0x00, 0x00, 0x00, 0xde, 0x00, 0x2a};
    uint32_t clause[6] = {IL_CLAUSE_FINALLY, 0, 3, 5, 2, 0};
    n = fat_body(body, code, sizeof code, 1, clause);
    CHECK(il_parse(body, n, &b, why, sizeof why) < 0);
    /* falling off the end, and out of a try block */
    uint8_t falls[] = {0x00, 0x00};
    n = fat_body(body, falls, sizeof falls, 0, NULL);
    CHECK(il_parse(body, n, &b, why, sizeof why) < 0);
    uint8_t out_of_try[] = {0x00, 0x00, 0xdc, 0x2a};
    uint32_t c2[6] = {IL_CLAUSE_FINALLY, 0, 1, 1, 2, 0};
    n = fat_body(body, out_of_try, sizeof out_of_try, 0, c2);
    CHECK(il_parse(body, n, &b, why, sizeof why) < 0);
    /* a prefix with nothing after it */
    uint8_t prefix[] = {0x2a, 0xfe, 0x13};
    n = fat_body(body, prefix, sizeof prefix, 0, NULL);
    CHECK(il_parse(body, n, &b, why, sizeof why) < 0);
    /* not a header */
    uint8_t junk[] = {0x00};
    CHECK(il_parse(junk, sizeof junk, &b, why, sizeof why) < 0);
}

static void test_il_out_of_memory(void)
{
    uint8_t code[] = {0x02, 0x2d, 0x02, 0x17, 0x2a, 0x18, 0x2a};
    uint8_t body[64];
    size_t n = fat_body(body, code, sizeof code, 0, NULL);
    for (long k = 1; k < 40; k++) {
        struct il_body b;
        char why[200];
        mem_fail_after(k, 0);
        if (il_parse(body, n, &b, why, sizeof why) < 0)
            continue;
        struct il_edit e;
        il_edit_init(&e);
        if (probe_everything(&b, &e, 1, 1, 1) == 0 &&
            il_edit_wrap(&e, &b, IL_CLAUSE_FINALLY, handler, sizeof handler, 1, 0, why,
                         sizeof why) == 0) {
            struct il_rewritten r;
            if (il_rewrite(&b, &e, &r, why, sizeof why) == 0)
                il_rewritten_free(&r);
        }
        il_edit_free(&e);
        il_body_free(&b);
    }
    mem_fail_after(0, 0);
}

/* try { ldarg.0; brtrue.s L; ldc.i4.1; ret; L: ldc.i4.2; ret } fault/finally
 * { ldc.i4.0; pop; endfinally } EPILOGUE: ldloc 3; ret -- and the checker
 * catches each way of getting it wrong. */
static void test_il_wrap(void)
{
    uint8_t code[] = {0x02, 0x2d, 0x02, 0x17, 0x2a, 0x18, 0x2a};
    uint8_t body[64];
    size_t n = fat_body(body, code, sizeof code, 0, NULL);
    struct il_body b;
    char why[200];
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    struct il_edit e;
    il_edit_init(&e);
    il_counter_probe(probe, 0x00007f1234560000ull);
    REQUIRE(il_edit_add(&e, &b, 0, IL_ENTRY, 0, probe, sizeof probe, 3, why, sizeof why) == 0);
    REQUIRE(il_edit_add(&e, &b, 3, IL_BEFORE, 0, probe, sizeof probe, 3, why, sizeof why) == 0);
    REQUIRE(il_edit_wrap(&e, &b, IL_CLAUSE_FAULT, handler, sizeof handler, 1, 3, why,
                         sizeof why) == 0);
    /* once per edit; a handler must be straight-line */
    CHECK(il_edit_wrap(&e, &b, IL_CLAUSE_FAULT, handler, sizeof handler, 1, 3, why, sizeof why) < 0);
    struct il_edit e2;
    il_edit_init(&e2);
    static const uint8_t returning[] = {0x2a};
    CHECK(il_edit_wrap(&e2, &b, IL_CLAUSE_FINALLY, returning, 1, 0, 3, why, sizeof why) < 0);
    CHECK(il_edit_wrap(&e2, &b, IL_CLAUSE_CATCH, handler, sizeof handler, 1, 3, why, sizeof why) < 0);
    il_edit_free(&e2);

    struct il_rewritten r;
    REQUIRE(il_rewrite(&b, &e, &r, why, sizeof why) == 0);
    CHECK(il_check(&b, &e, &r, why, sizeof why) == 0);
    struct il_body nb;
    REQUIRE(il_parse(r.body, r.size, &nb, why, sizeof why) == 0);
    REQUIRE(nb.clause_count == 1);
    const struct il_clause *w = &nb.clauses[0];
    CHECK_EQ(w->flags, IL_CLAUSE_FAULT);
    CHECK_EQ(w->try_offset, sizeof probe); /* the entry probe runs outside the try */
    CHECK_EQ(w->try_offset, r.landing[0]);
    CHECK_EQ(w->handler_offset, w->try_offset + w->try_length);
    CHECK_EQ(w->handler_length, sizeof handler + 1);
    uint32_t epilogue = w->handler_offset + w->handler_length;
    CHECK_EQ(nb.code[epilogue - 1], 0xdc);
    CHECK(nb.code[epilogue] == 0xfe && nb.code[epilogue + 1] == 0x0c && nb.code[epilogue + 2] == 3);
    CHECK_EQ(nb.code[epilogue + 4], 0x2a);
    CHECK_EQ(epilogue + 5, nb.code_size);
    /* each ret: stloc 3; leave EPILOGUE (the first after its probe) */
    for (uint32_t i = 3; i <= 5; i += 2) {
        uint32_t at = r.placed[i];
        CHECK(nb.code[at] == 0xfe && nb.code[at + 1] == 0x0e && nb.code[at + 2] == 3);
        CHECK_EQ(nb.code[at + 4], 0xdd);
        long j = il_index_at(&nb, at + 4);
        REQUIRE(j >= 0);
        CHECK_EQ(nb.instrs[j].value, epilogue);
    }
    CHECK(r.placed[3] - r.landing[3] == sizeof probe);
    CHECK(nb.max_stack >= b.max_stack + 3);

    /* il_check catches a damaged wrap: the handler, a leave's target, the
     * epilogue's local, the clause's kind, the try's start */
    static const char *const damages[] = {"handler", "leave", "epilogue", "kind", "start"};
    for (size_t d = 0; d < sizeof damages / sizeof damages[0]; d++) {
        struct il_rewritten bad = r;
        bad.body = malloc(r.size);
        REQUIRE(bad.body);
        memcpy(bad.body, r.body, r.size);
        uint8_t *c = bad.body + 12;
        size_t eh = (12 + r.code_size + 3) & ~(size_t)3;
        switch (d) {
        case 0: c[w->handler_offset] = 0x17; break;   /* ldc.i4.1, not ldc.i4.0 */
        case 1: c[r.placed[5] + 5] ^= 1; break;       /* the leave lands elsewhere */
        case 2: c[epilogue + 2] = 2; break;           /* ldloc 2 */
        case 3: bad.body[eh + 4] = IL_CLAUSE_FINALLY; break;
        default: bad.body[eh + 8] -= 1; bad.body[eh + 12] += 1; break; /* one byte earlier */
        }
        char m[300];
        snprintf(m, sizeof m, "damaged %s passed il_check", damages[d]);
        if (il_check(&b, &e, &bad, why, sizeof why) == 0)
            test_fail(__FILE__, __LINE__, m);
        free(bad.body);
    }
    il_body_free(&nb);
    il_rewritten_free(&r);
    il_edit_free(&e);
    il_body_free(&b);

    /* a method returning nothing: `leave`, epilogue `ret` */
    uint8_t vcode[] = {0x00, 0x2a};
    n = fat_body(body, vcode, sizeof vcode, 0, NULL);
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    il_edit_init(&e);
    REQUIRE(il_edit_wrap(&e, &b, IL_CLAUSE_FINALLY, handler, sizeof handler, 1, IL_NO_RESULT, why,
                         sizeof why) == 0);
    REQUIRE(il_rewrite(&b, &e, &r, why, sizeof why) == 0);
    CHECK(il_check(&b, &e, &r, why, sizeof why) == 0);
    CHECK_EQ(r.code_size, 1 + 5 + sizeof handler + 1 + 1);
    CHECK_EQ(r.body[12 + 1], 0xdd);
    CHECK_EQ(r.body[12 + r.code_size - 1], 0x2a);
    il_rewritten_free(&r);
    il_edit_free(&e);
    il_body_free(&b);
}

/* Does the wrap refuse this body (fat, with the clause when not NULL), for
 * the reason `because`? */
static int wrap_refuses(const uint8_t *code, uint32_t len, const uint32_t clause[6],
                        const char *because)
{
    uint8_t body[128];
    size_t n = fat_body(body, code, len, 0, clause);
    struct il_body b;
    char why[200] = "";
    if (il_parse(body, n, &b, why, sizeof why) < 0)
        return 0;
    struct il_edit e;
    il_edit_init(&e);
    int refused = il_edit_wrap(&e, &b, IL_CLAUSE_FINALLY, handler, sizeof handler, 1,
                               IL_NO_RESULT, why, sizeof why) < 0;
    il_edit_free(&e);
    il_body_free(&b);
    return refused && strstr(why, because) != NULL;
}

/* Bodies a wrap refuses; a wrap around a body with clauses of its own. */
static void test_il_wrap_refused(void)
{
    struct il_body b;
    char why[200];
    uint8_t body[128];
    /* a ret inside a try block (invalid IL, but parseable) */
    static const uint8_t in_try[] = {0x00, 0x2a, 0x00, 0xdc};
    static const uint32_t clause[6] = {IL_CLAUSE_FINALLY, 0, 2, 2, 2, 0};
    CHECK(wrap_refuses(in_try, sizeof in_try, clause, "inside an exception clause"));
    static const uint8_t tail[] = {0x02, 0xfe, 0x14, 0x28, 0x01, 0x00, 0x00, 0x0a, 0x2a};
    CHECK(wrap_refuses(tail, sizeof tail, NULL, "tail call"));
    static const uint8_t jmp[] = {0x27, 0x01, 0x00, 0x00, 0x06};
    CHECK(wrap_refuses(jmp, sizeof jmp, NULL, "jmp"));
    /* try { nop; leave.s END } finally { nop; endfinally } END: ret, wrapped:
     * its clause first, ours after, enclosing it */
    uint8_t code2[] = {0x00, 0xde, 0x02, 0x00, 0xdc, 0x2a};
    uint32_t c2[6] = {IL_CLAUSE_FINALLY, 0, 3, 3, 2, 0};
    size_t n = fat_body(body, code2, sizeof code2, 1, c2);
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    char m[300];
    for (unsigned v = 0; v < 8; v++)
        if (wrap_checked(&b, v, why, sizeof why) != 1) {
            snprintf(m, sizeof m, "variant %u: %s", v, why);
            test_fail(__FILE__, __LINE__, m);
        }
    il_body_free(&b);
}

/* The atomic counter probe (flat tracing): its bytes, and every corpus
 * body rewritten with it at entry checks. */
static void test_il_atomic_counter_probe(void)
{
    uint8_t p[IL_ATOMIC_COUNTER_PROBE_SIZE];
    il_atomic_counter_probe(p, 0x00007f1234560008ull, 0x0a00002a);
    static const uint8_t want[IL_ATOMIC_COUNTER_PROBE_SIZE] = {
        0x21, 0x08, 0x00, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, /* ldc.i8 address */
        0xe0, 0x17, 0x6a,                                     /* conv.u; ldc.i4.1; conv.i8 */
        0x28, 0x2a, 0x00, 0x00, 0x0a,                         /* call 0a00002a */
        0x26};                                                /* pop */
    CHECK(memcmp(p, want, sizeof want) == 0);
    /* a body of two instructions, the probe at entry: it parses back as
     * the probe's six instructions, then the body */
    uint8_t code[] = {0x00, 0x2a};
    uint8_t body[64];
    size_t n = fat_body(body, code, sizeof code, 0, NULL);
    struct il_body b;
    char why[200];
    REQUIRE(il_parse(body, n, &b, why, sizeof why) == 0);
    struct il_edit e;
    il_edit_init(&e);
    REQUIRE(il_edit_add(&e, &b, 0, IL_ENTRY, 0, p, sizeof p, IL_ATOMIC_COUNTER_PROBE_STACK, why,
                        sizeof why) == 0);
    struct il_rewritten r;
    REQUIRE(il_rewrite(&b, &e, &r, why, sizeof why) == 0);
    CHECK(il_check(&b, &e, &r, why, sizeof why) == 0);
    struct il_body nb;
    REQUIRE(il_parse(r.body, r.size, &nb, why, sizeof why) == 0);
    CHECK_EQ(nb.count, 8u);
    CHECK_EQ(nb.instrs[4].op, 0x28);
    CHECK_EQ(nb.instrs[4].value, 0x0a00002a);
    CHECK(nb.max_stack >= IL_ATOMIC_COUNTER_PROBE_STACK);
    il_body_free(&nb);
    il_rewritten_free(&r);
    il_edit_free(&e);
    il_body_free(&b);
}

void suite_il(void)
{
    RUN(test_il_atomic_counter_probe);
    RUN(test_il_corpus);
    RUN(test_il_tiny_and_small_eh);
    RUN(test_il_short_branch_widened);
    RUN(test_il_switch_filter_prefixes);
    RUN(test_il_refused);
    RUN(test_il_out_of_memory);
    RUN(test_il_wrap);
    RUN(test_il_wrap_refused);
}
