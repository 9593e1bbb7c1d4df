/*
 * Tests of the IL engine (agent/il): every body of the corpus
 * (tests/unit/data/il_corpus.bin, real bodies from our test programs and
 * the framework, chosen by tools/ilcorpus select) rewritten with probes at
 * every instruction, at entry and on every edge, and checked structurally
 * (il_check); bodies built here for the cases the corpus may lack (tiny
 * headers, small EH sections widened, short branches pushed out of reach,
 * switch, filters, prefixes, tail calls); malformed bodies refused; the
 * offset map; allocation failures.
 */
#include <stdio.h>
#include <stdlib.h>

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

static void test_il_corpus(void)
{
    size_t size;
    uint8_t *data = fixture_read_file("tests/unit/data/il_corpus.bin", &size);
    REQUIRE(data);
    unsigned bodies = 0, with_clauses = 0, with_switch = 0, tiny = 0;
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
        il_body_free(&b);
        at += n;
    }
    free(data);
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
        if (probe_everything(&b, &e, 1, 1, 1) == 0) {
            struct il_rewritten r;
            if (il_rewrite(&b, &e, &r, why, sizeof why) == 0)
                il_rewritten_free(&r);
        }
        il_edit_free(&e);
        il_body_free(&b);
    }
    mem_fail_after(0, 0);
}

void suite_il(void)
{
    RUN(test_il_corpus);
    RUN(test_il_tiny_and_small_eh);
    RUN(test_il_short_branch_widened);
    RUN(test_il_switch_filter_prefixes);
    RUN(test_il_refused);
    RUN(test_il_out_of_memory);
}
