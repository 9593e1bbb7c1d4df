/*
 * Tests of procmaps (common/procmaps.h): lines of /proc/self/maps are read
 * field by field (a path with blanks in it whole, none when the line ends
 * at the inode), malformed lines are skipped, and this process's own file
 * is read whole (every line, as many as stdio reads) and counted.
 */
#include <stdio.h>
#include <string.h>

#include "common/procmaps.h"
#include "test.h"

struct seen {
    size_t n;
    struct procmaps_line lines[8];
};

static int keep(void *ctx, const struct procmaps_line *line)
{
    struct seen *s = ctx;
    if (s->n < sizeof s->lines / sizeof s->lines[0])
        s->lines[s->n] = *line;
    s->n++;
    return 0;
}

static int path_is(const struct procmaps_line *line, const char *want)
{
    return line->path_len == strlen(want) && !memcmp(line->path, want, line->path_len);
}

static void test_fields(void)
{
    static const char text[] =
        "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234                       /usr/bin/dotnet\n"
        "7f0ee0840000-7f0ee0841000 r-xs 00000000 00:01 62                         /memfd:doublemapper (deleted)\n"
        "7f0ee2000000-7f0ee2001000 rw-p 00000000 00:00 0 \n"
        "7f0ee2001000-7f0ee2002000 ---p 00000000 00:00 0\n"
        "garbage\n"
        "7f00-7e00 r-xp 0 00:00 0\n"
        "10-20 r-xp zz\n"
        "10-20 r-xp 0 00:00 12x /a\n"
        "\n"
        "-\n"
        "ffffffffffffffffff-1 r-xp 0 00:00 0\n"
        "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]";
    struct seen s = {0};
    CHECK_EQ(procmaps_each(text, strlen(text), keep, &s), 0);
    REQUIRE(s.n == 5);
    CHECK_EQ(s.lines[0].start, 0x55d0c0a00000u);
    CHECK_EQ(s.lines[0].end, 0x55d0c0a21000u);
    CHECK_STR(s.lines[0].perms, "r--p");
    CHECK(path_is(&s.lines[0], "/usr/bin/dotnet"));
    CHECK(path_is(&s.lines[1], "/memfd:doublemapper (deleted)"));
    CHECK_STR(s.lines[1].perms, "r-xs");
    CHECK_EQ(s.lines[2].path_len, 0); /* a blank after the inode, no path */
    CHECK_EQ(s.lines[3].path_len, 0);
    CHECK_STR(s.lines[3].perms, "---p");
    CHECK(path_is(&s.lines[4], "[stack]")); /* the last line, without its newline */
}

static int stop_at_second(void *ctx, const struct procmaps_line *line)
{
    (void)line;
    return ++*(int *)ctx == 2 ? 7 : 0;
}

static int count_lines(void *ctx, const struct procmaps_line *line)
{
    (void)line;
    ++*(size_t *)ctx;
    return 0;
}

static void test_this_process(void)
{
    int calls = 0;
    uint64_t before = procmaps_reads();
    CHECK_EQ(procmaps_read_self(stop_at_second, &calls), 7);
    CHECK_EQ(calls, 2);
    size_t lines = 0;
    CHECK_EQ(procmaps_read_self(count_lines, &lines), 0);
    CHECK_EQ(procmaps_reads(), before + 2);
    size_t expected = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    REQUIRE(f != NULL);
    char line[4352];
    while (fgets(line, sizeof line, f))
        expected++;
    fclose(f);
    /* the mappings may change between two reads (stdio's buffer is one) */
    CHECK(lines + 2 >= expected && lines <= expected + 2);
    CHECK(lines > 5);
}

void suite_procmaps(void)
{
    RUN(test_fields);
    RUN(test_this_process);
}
