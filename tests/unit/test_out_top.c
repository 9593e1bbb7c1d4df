/*
 * Tests of out_top: the flat table of the fixture recording.
 */
#include <stdlib.h>

#include "fixture.h"
#include "test.h"

static void test_top(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = fixture_render(report_top, p, &o);
    REQUIRE(text);
    /* Hot: self 6 of 12, total 9 of 12; Main total 100% */
    CHECK(strstr(text, "  50.00%   75.00%") != NULL);
    CHECK(strstr(text, "   0.00%  100.00%") != NULL);
    CHECK(strstr(text, "# lost: 2 samples dropped (a buffer was full)") != NULL);
    char *hot = strstr(text, "Demo.Work.Hot"), *cold = strstr(text, "Demo.Work.Cold");
    CHECK(hot && cold && hot < cold); /* sorted by self */
    free(text);
    o.limit = 1;
    text = fixture_render(report_top, p, &o);
    CHECK(text && strstr(text, "Demo.Work.Hot") && !strstr(text, "Demo.Work.Cold"));
    free(text);
    prof_free(&ps);
}

void suite_out_top(void)
{
    RUN(test_top);
}
