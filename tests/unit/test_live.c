/*
 * Tests of the live heap view (cli/live.h), over a recording with memory
 * events written the way the agent writes one (fixture.c): the heap as of a
 * time and at the end.
 */
#include <stdlib.h>

#include "fixture.h"
#include "test.h"

/* The live heap: at the end, 7 and 8 (Keep; 9 and 10 were not followed);
 * as of the first collection, 4-6 were still alive and 7 not judged yet
 * (allocated after the last handed-over allocation at that look). */
static void test_live_view(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    const struct profile *live = fixture_view(&ps, "live");
    REQUIRE(live);
    CHECK_EQ(live->selected_samples, 2);
    CHECK_EQ(live->total_weight, 2u << 20);
    CHECK_EQ(live->total_count, 8);
    CHECK(strstr(ps.shared.live_note, "2 sampled allocations still alive at the collection that "
                                      "ended at 0.200 s") != NULL);
    const struct profile *alloc = fixture_view(&ps, "alloc");
    REQUIRE(alloc);
    CHECK_EQ(alloc->total_weight, 10u << 20);
    /* top shows objects beside bytes */
    struct report_options o = {0};
    char *text = fixture_render(report_top, live, &o);
    CHECK(text && strstr(text, "self objects") && strstr(text, "App.Work.Keep"));
    CHECK(text && strstr(text, "# live: 2 sampled allocations") != NULL);
    free(text);
    prof_free(&ps);

    f.has_at = 1;
    f.at_ns = 150 * MS; /* the look after the first collection */
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    live = fixture_view(&ps, "live");
    REQUIRE(live);
    CHECK_EQ(live->selected_samples, 3); /* 4, 5, 6: allocated before 90 ms, alive at 100 */
    CHECK(strstr(ps.shared.live_note, "at the collection that ended at 0.100 s") != NULL);
    prof_free(&ps);

    f.at_ns = 50 * MS; /* before any look */
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    live = fixture_view(&ps, "live");
    CHECK(!live || live->selected_samples == 0);
    CHECK(strstr(ps.shared.live_note, "no look at the heap before that time") != NULL);
    prof_free(&ps);
}

void suite_live(void)
{
    RUN(test_live_view);
}
