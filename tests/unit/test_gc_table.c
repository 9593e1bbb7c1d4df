/*
 * Tests of gc_table (cli/gc_table.h) and report -f gc, over a recording
 * with memory events (fixture.c): collections with their pauses.
 */
#include <stdlib.h>

#include "cli/gc_table.h"
#include "fixture.h"
#include "test.h"

static void test_gc_table_and_report(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    struct gc_table t;
    REQUIRE(gc_table_load(&ps.shared.rec, 0, 0, &t) == 1);
    REQUIRE(t.count == 2 && t.pause_count == 3);
    CHECK_EQ(t.rows[0].pause, 11 * MS);
    CHECK_EQ(t.rows[1].pause, 3 * MS); /* both of the background collection's pauses */
    CHECK_EQ(t.rows[1].pauses, 2);
    CHECK_EQ(t.rows[1].size[GC_GEN2], 8);
    CHECK_EQ(t.pauses[0].start, 89 * MS);
    CHECK_STR(gc_reason_name(1), "Induced");
    CHECK_STR(gc_kind_name(1), "background");
    gc_table_free(&t);
    /* a window keeps the collections that start in it */
    REQUIRE(gc_table_load(&ps.shared.rec, 100 * MS, 0, &t) == 1);
    CHECK_EQ(t.count, 1);
    gc_table_free(&t);
    /* one after every collection keeps none (nothing to sort: no array at
     * all, which UBSan's qsort would not take) */
    REQUIRE(gc_table_load(&ps.shared.rec, 1000 * MS, 0, &t) == 1);
    CHECK(t.count == 0 && t.pause_count == 0);
    gc_table_free(&t);

    struct report_options o = {0};
    char *text = fixture_render(report_gc, prof_current(&ps), &o);
    REQUIRE(text);
    CHECK(strstr(text, "# gc: 2 collections over 0.30 s: gen0 1, gen1 0, gen2 1; 1 background, 1 "
                       "compacting") != NULL);
    /* pauses 1, 2 and 11 ms: 14 ms of 300 */
    CHECK(strstr(text, "# pauses: 3, 14.00 ms in all, 4.67% of the run; p50 2.00 ms, p90 11.00 ms, "
                       "p99 11.00 ms, max 11.00 ms") != NULL);
    CHECK(strstr(text, "background AllocSmall") != NULL);
    CHECK(strstr(text, "# lost: 2 sampled allocations not followed (--live-max reached)") != NULL);
    free(text);
    prof_free(&ps);

    /* a recording without collections: one clear error */
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    buf_free(&b);
    struct profiles plain;
    REQUIRE(prof_build(&plain, &r, &f, err, sizeof err) == 0);
    CHECK(fixture_render(report_gc, prof_current(&plain), &o) == NULL);
    prof_free(&plain);
    prof_free(&ps);
}

void suite_gc_table(void)
{
    RUN(test_gc_table_and_report);
}
