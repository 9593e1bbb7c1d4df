/*
 * Tests of flame_timeline: what the flame graph page gets to draw time
 * with, from the memory fixture (allocations every 15 ms, three GC pauses).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/flame_timeline.h"
#include "fixture.h"
#include "test.h"

static char *render(int (*write)(FILE *, const struct profile *), const struct profile *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    int rc = write(out, p);
    fclose(out);
    if (rc < 0) {
        free(text);
        return NULL;
    }
    return text;
}

static int samples_of(FILE *out, const struct profile *p)
{
    return flame_timeline_samples(out, p, NULL);
}

static void test_samples_and_marks(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    f.event = "alloc";
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    const struct profile *p = prof_current(&ps);
    char *text = render(samples_of, p);
    REQUIRE(text);
    /* two stacks on one thread: two keys; ten samples 15 ms apart, each
     * 1 MiB of 4 objects; times in microseconds, each after the one before */
    CHECK(strstr(text, "\"keys\":[") == text);
    CHECK(strstr(text, "\"tt\":[15000,15000,15000,15000,15000,15000,15000,15000,15000,15000]"));
    CHECK(strstr(text, "\"tk\":[0,0,0,0,0,0,1,1,1,1]") || strstr(text, "\"tk\":[1,1,1,1,1,1,0,0,0,0]"));
    CHECK(strstr(text, "\"period\":1,\"w\":1048576,\"tc\":[4,4,4,4,4,4,4,4,4,4]"));
    free(text);
    /* the pauses: 89-100 ms, 181-182, 195-197; the recording ends at 300 ms */
    text = render(flame_timeline_marks, p);
    REQUIRE(text);
    CHECK_STR(text, "\"span\":300001,\"marks\":[{\"kind\":\"gc\",\"name\":\"GC pauses\",\"spans\":"
                    "[89000,100000,1,11000,181000,182000,1,1000,195000,197000,1,2000]}]");
    free(text);
    /* a range keeps what --from/--to keeps: the samples from 30 ms to 60 ms */
    prof_free(&ps);
    f.from_ns = 30000000;
    f.to_ns = 60000000;
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    text = render(samples_of, prof_current(&ps));
    CHECK(text && strstr(text, "\"tt\":[30000,15000]"));
    free(text);
    prof_free(&ps);
}

/* Samples with the same time keep their order in the file; different
 * weights are written one by one. */
static void test_weights_each(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    char *text = render(samples_of, prof_current(&ps));
    REQUIRE(text);
    /* nine samples of weight 1 and one of 3, 10 ms apart from 10.001 ms */
    CHECK(strstr(text, "\"tt\":[10001,10000,10000,10000,10000,10000,10000,10000,10000,10000]"));
    CHECK(strstr(text, "\"tw\":[1,1,1,1,1,1,1,1,1,3]"));
    CHECK(strstr(text, "\"period\":10000000"));
    CHECK(!strstr(text, "\"tc\""));
    free(text);
    prof_free(&ps);
}

void suite_flame_timeline(void)
{
    RUN(test_samples_and_marks);
    RUN(test_weights_each);
}
