/*
 * Tests of out_collapsed: the collapsed stacks of the fixture recording.
 */
#include <stdlib.h>

#include "fixture.h"
#include "test.h"

static void test_collapsed(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    CHECK_EQ(p->total_weight, FIXTURE_WEIGHT);
    struct report_options o = {0};
    char *text = fixture_render(report_collapsed, p, &o);
    REQUIRE(text);
    CHECK_STR(text, "Demo.Program.Main;Demo.Work.Cold``1 3\n"
                    "Demo.Program.Main;Demo.Work.Hot 6\n"
                    "Demo.Program.Main;Demo.Work.Hot;libc.so.6!memcpy 3\n");
    free(text);
    prof_free(&ps);
}

void suite_out_collapsed(void)
{
    RUN(test_collapsed);
}
