/*
 * fuzz_il: the IL engine (agent/il) over arbitrary method bodies.
 *
 * The agent hands the engine every method body the runtime is about to
 * compile in the assemblies it covers: a body it cannot rewrite safely
 * must be refused, never rewritten wrongly.  The input is a method body
 * (header, code, sections).  When it parses, it is rewritten with a probe
 * before every instruction that may take one, at entry, and on every edge
 * of every conditional branch, and the result must pass il_check (abort
 * otherwise: the control flow of the rewrite is not the original's plus
 * probes); then again with only edge probes, then wrapped in a finally
 * (il_edit_wrap, when it accepts the body) with the probes too, and once
 * with one allocation failing.  Seeds: the bodies of tests/unit/data/il_corpus.bin (real
 * bodies of our test programs and the framework), one file each.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/il/il.h"
#include "common/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void rewrite(const struct il_body *b, int before, int wrap, int must_pass)
{
    uint8_t probe[IL_COUNTER_PROBE_SIZE];
    il_counter_probe(probe, 0x00007f0011223344ull);
    struct il_edit e;
    il_edit_init(&e);
    char why[256];
    for (uint32_t i = 0; i < b->count; i++) {
        const struct il_instr *in = &b->instrs[i];
        if (before)
            il_edit_add(&e, b, i, IL_BEFORE, 0, probe, sizeof probe, 3, why, sizeof why);
        if (i == 0)
            il_edit_add(&e, b, 0, IL_ENTRY, 0, probe, sizeof probe, 3, why, sizeof why);
        for (uint32_t k = 0; k <= in->target_count && k < 8; k++)
            il_edit_add(&e, b, i, IL_EDGE, k, probe, sizeof probe, 3, why, sizeof why);
    }
    static const uint8_t handler[] = {0x16, 0x26}; /* ldc.i4.0; pop */
    if (wrap && il_edit_wrap(&e, b, wrap == 1 ? IL_CLAUSE_FINALLY : IL_CLAUSE_FAULT, handler,
                             sizeof handler, 1, wrap == 1 ? IL_NO_RESULT : 3, why,
                             sizeof why) < 0) {
        il_edit_free(&e);
        return;
    }
    struct il_rewritten r;
    if (il_rewrite(b, &e, &r, why, sizeof why) == 0) {
        if (il_check(b, &e, &r, why, sizeof why) < 0 && must_pass) {
            fprintf(stderr, "fuzz_il: the rewrite does not check: %s\n", why);
            abort();
        }
        il_rewritten_free(&r);
    } else if (must_pass && !e.count) {
        /* nothing to insert cannot make a body too big */
        fprintf(stderr, "fuzz_il: an empty edit failed: %s\n", why);
        abort();
    }
    il_edit_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct il_body b;
    char why[256];
    if (il_parse(data, size, &b, why, sizeof why) < 0)
        return 0;
    if (b.total_size > size)
        abort();
    for (uint32_t i = 0; i < b.count; i++)
        if (b.instrs[i].offset + b.instrs[i].size > b.code_size)
            abort();
    rewrite(&b, 1, 0, 1);
    rewrite(&b, 0, 0, 1);
    rewrite(&b, 1, 1 + (int)(size & 1), 1);
    il_body_free(&b);
    mem_fail_after(1 + (long)(size % 7), 0);
    if (il_parse(data, size, &b, why, sizeof why) == 0) {
        rewrite(&b, 1, 1, 0);
        il_body_free(&b);
    }
    mem_fail_after(0, 0);
    return 0;
}
