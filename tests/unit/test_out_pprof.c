/*
 * Tests of out_pprof: the sample types of several events in one profile.
 */
#include <stdlib.h>
#include <zlib.h>

#include "fixture.h"
#include "test.h"

/* pprof: two sample types per event, named as go tool pprof knows them. */
static void test_pprof_types(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    f.event = "alloc";
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    struct report_options o = {0};
    char *gz = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&gz, &len);
    REQUIRE(out);
    CHECK(report_pprof(prof_current(&ps), &o, out) == 0);
    fclose(out);
    unsigned char raw[65536];
    z_stream z;
    memset(&z, 0, sizeof z);
    REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
    z.next_in = (unsigned char *)gz;
    z.avail_in = (uInt)len;
    z.next_out = raw;
    z.avail_out = sizeof raw;
    CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
    size_t n = sizeof raw - z.avail_out;
    inflateEnd(&z);
    free(gz);
    const char *want[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "bytes",
                          "count"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(memmem(raw, n, want[i], strlen(want[i])) != NULL);
    prof_free(&ps);
}

void suite_out_pprof(void)
{
    RUN(test_pprof_types);
}
