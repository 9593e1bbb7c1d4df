/*
 * Tests of profile (cli/profile.h): the aggregate of a recording through
 * the report's filters.
 */
#include <stdlib.h>

#include "fixture.h"
#include "test.h"

static void test_filters(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    struct report_options o = {0};
    char *text;

    f.thread_roots = 1;
    f.thread = "work"; /* the thread named "worker" */
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    text = fixture_render(report_collapsed, p, &o);
    CHECK_STR(text, "[worker tid=101];Demo.Program.Main;Demo.Work.Cold``1 3\n");
    free(text);
    prof_free(&ps);

    memset(&f, 0, sizeof f);
    f.reverse = 1;
    REQUIRE(regcomp(&f.exclude, "memcpy", REG_EXTENDED | REG_NOSUB) == 0);
    f.has_exclude = 1;
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    text = fixture_render(report_collapsed, p, &o);
    CHECK_STR(text, "Demo.Work.Cold``1;Demo.Program.Main 3\nDemo.Work.Hot;Demo.Program.Main 6\n");
    free(text);
    prof_free(&ps);
    prof_filter_free(&f);

    /* the time window: the fixture's samples are 10 ms apart from 10 ms on */
    memset(&f, 0, sizeof f);
    f.from_ns = 30000000;
    f.to_ns = 50000000;
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    CHECK_EQ(p->selected_samples, 2);
    prof_free(&ps);

    memset(&f, 0, sizeof f);
    f.event = "wall";
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    CHECK(prof_build(&ps, &r, &f, err, sizeof err) < 0);
    CHECK_STR(err, "the recording has no 'wall' event (it has: cpu)");
    buf_free(&b);
}

void suite_profile(void)
{
    RUN(test_filters);
}
