/*
 * Tests of mcode (agent/signal/mcode.h): the handler's table of managed code,
 * its publication, the ring of just-compiled code, and removal.
 */

#include "agent/signal/thread_rings.h"
#include "fixture.h"
#include "test.h"

/* ---- the handler's code table --------------------------------------------- */

static void test_code_table(void)
{
    REQUIRE(thread_rings_init() == 0);
    static uint8_t code[4096];
    memset(code, 0x90, sizeof code);
    struct mcode_hit h;
    /* many methods: the small array is merged into the large one on the way */
    for (int i = 0; i < 200; i++) {
        struct mcode_entry e = fixture_mcode_entry(code + 16 * i, 12);
        mcode_add(&e);
        if (i % 7 == 0)
            mcode_publish();
    }
    CHECK(mcode_find((uintptr_t)code + 16 * 199 + 3, &h) == MCODE_NONE); /* not published yet */
    mcode_publish();
    CHECK_EQ(mcode_ranges(), 200);
    CHECK(mcode_find((uintptr_t)code + 16 * 150 + 11, &h) == MCODE_FOUND);
    CHECK_EQ(h.lo, (uintptr_t)code + 16 * 150);
    CHECK(mcode_find((uintptr_t)code + 16 * 150 + 12, &h) == MCODE_NONE); /* padding */
    /* unloaded code goes, a newer report of an address replaces the old one */
    mcode_remove((uintptr_t)code + 16 * 20);
    struct mcode_entry e = fixture_mcode_entry(code + 16 * 21, 14);
    e.known = 0;
    mcode_add(&e);
    mcode_publish();
    CHECK(mcode_find((uintptr_t)code + 16 * 20 + 1, &h) == MCODE_NONE);
    CHECK(mcode_find((uintptr_t)code + 16 * 21 + 13, &h) == MCODE_NO_SHAPE);
    CHECK_EQ(mcode_ranges(), 199);
    /* just-compiled code is found before it is published */
    static uint8_t fresh[64];
    struct mcode_entry f = fixture_mcode_entry(fresh, sizeof fresh);
    mcode_fresh(&f);
    CHECK(mcode_find((uintptr_t)fresh + 5, &h) == MCODE_NONE);
    CHECK(mcode_find_fresh((uintptr_t)fresh + 5, &h) == MCODE_FOUND);
    CHECK_EQ(h.hi, (uintptr_t)fresh + sizeof fresh);
    mcode_shutdown();
    thread_rings_reclaim();
    thread_rings_shutdown();
}

void suite_mcode(void)
{
    RUN(test_code_table);
}
