/*
 * Tests of out_tree: the call tree of the fixture recording, its shares and
 * --min.
 */
#include <stdlib.h>

#include "fixture.h"
#include "test.h"

static void test_tree(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    /* 12 weight: Main 12 (Hot 9 with memcpy 3, Cold 3) */
    struct report_options o = {0};
    char *text = fixture_render(report_tree, p, &o);
    REQUIRE(text);
    CHECK(strstr(text, " 100.00%    0.00%  Demo.Program.Main\n"));
    CHECK(strstr(text, "  75.00%   50.00%    Demo.Work.Hot\n"));
    CHECK(strstr(text, "  25.00%   25.00%      libc.so.6!memcpy\n"));
    CHECK(strstr(text, "  25.00%   25.00%    Demo.Work.Cold``1\n"));
    /* the heavier callee first */
    CHECK(strstr(text, "Demo.Work.Hot") < strstr(text, "Demo.Work.Cold"));
    free(text);
    o.min_percent = 30; /* Cold and memcpy (25% each) go, and say so */
    text = fixture_render(report_tree, p, &o);
    REQUIRE(text);
    CHECK(!strstr(text, "Cold") && !strstr(text, "memcpy"));
    if (!strstr(text, "  25.00%             [1 more below 30.00%]\n") ||
        !strstr(text, "  25.00%               [1 more below 30.00%]\n"))
        printf("%s", text);
    CHECK(strstr(text, "  25.00%             [1 more below 30.00%]\n"));   /* under Main */
    CHECK(strstr(text, "  25.00%               [1 more below 30.00%]\n")); /* under Hot */
    free(text);
    prof_free(&ps);
}

void suite_out_tree(void)
{
    RUN(test_tree);
}
