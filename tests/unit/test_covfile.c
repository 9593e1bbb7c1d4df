/*
 * Tests of the counter file (format/covfile): written as the agent writes
 * it (modules, methods with their counters, a skipped method, enough
 * methods to grow the mapping, the first counters written after that),
 * read back whole, and read cut anywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "format/covfile.h"
#include "fixture.h"
#include "test.h"

static void test_covfile_round_trip(void)
{
    char dir[] = "/tmp/corscope-covfile-XXXXXX";
    REQUIRE(mkdtemp(dir));
    struct covfile f;
    REQUIRE(covfile_open(&f, dir, 4242, "dotnet test") == 0);
    uint8_t mvid[16] = {1, 2, 3};
    CHECK_EQ(covfile_module(&f, mvid, COVFILE_COVERED, 1, "/x/Lib.dll", "Lib", ""), 0);
    CHECK_EQ(covfile_module(&f, mvid, COVFILE_NO_PDB, 0, "/x/Other.dll", "Other", "no PDB"), 1);
    struct covfile_probe_desc probes[3] = {{0, COVFILE_PROBE_LINE, 0}, {4, COVFILE_PROBE_BRANCH, 0},
                                           {4, COVFILE_PROBE_BRANCH, 1}};
    uint64_t *counters;
    REQUIRE(covfile_method(&f, 0, 0x06000001, probes, 3, &counters) == 0);
    counters[0] = 7;
    counters[2] = 1;
    covfile_skipped(&f, 0, 0x06000002, COVFILE_SKIP_ENGINE, "refused");
    /* many methods: the file grows, earlier counters stay where they were */
    for (int i = 0; i < 20000; i++) {
        uint64_t *more;
        REQUIRE(covfile_method(&f, 0, 0x06000100 + (uint32_t)i, probes, 3, &more) == 0);
        more[1] = (uint64_t)i;
    }
    counters[1] = 3;
    covfile_close(&f);
    char path[128];
    snprintf(path, sizeof path, "%s/cover-4242.bin", dir);
    size_t size;
    uint8_t *data = fixture_read_file(path, &size);
    REQUIRE(data);
    struct covfile_view v;
    char why[160];
    REQUIRE(covfile_read(data, size, &v, why, sizeof why) == 0);
    CHECK_EQ(v.header->pid, 4242);
    CHECK_STR(v.header->command, "dotnet test");
    CHECK_EQ(v.module_count, 2);
    CHECK_STR(v.modules[1].why, "no PDB");
    CHECK_EQ(v.method_count, 20001);
    CHECK_EQ(v.methods[0].count, 3);
    CHECK_EQ(v.methods[0].counters[0], 7);
    CHECK_EQ(v.methods[0].counters[1], 3);
    CHECK_EQ(v.methods[0].counters[2], 1);
    CHECK_EQ(v.methods[20000].counters[1], 19999);
    CHECK_EQ(v.skipped_count, 1);
    CHECK_STR(v.skipped[0].why, "refused");
    CHECK(!v.truncated);
    covfile_view_free(&v);
    /* cut anywhere: what is whole is read, the rest said to be cut */
    for (size_t cut = 0; cut < size; cut += size / 61 + 1) {
        if (covfile_read(data, cut, &v, why, sizeof why) == 0) {
            CHECK(v.method_count <= 20001);
            covfile_view_free(&v);
        }
    }
    free(data);
    unlink(path);
    rmdir(dir);
}

void suite_covfile(void)
{
    RUN(test_covfile_round_trip);
}
