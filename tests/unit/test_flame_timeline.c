/*
 * Tests of flame_timeline: what the flame graph page gets to draw time
 * with, from the memory fixture (allocations every 15 ms, three GC pauses).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/flame_timeline.h"
#include "cli/json.h"
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

/* The packed array `member` of text (json_pack) as a JSON array, "[1,2]",
 * its length checked against the number it begins with; into buf. */
static const char *unpacked(const char *text, const char *member, char *buf, size_t size)
{
    char head[32];
    snprintf(head, sizeof head, "\"%s\":\"", member);
    const char *s = strstr(text, head);
    if (!s)
        return "(missing)";
    s += strlen(head);
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
    size_t at = 0, n = 0, length = 0;
    int have_length = 0;
    uint64_t v = 0;
    at += (size_t)snprintf(buf + at, size - at, "[");
    for (; *s && *s != '"'; s++) {
        const char *d = strchr(digits, *s);
        if (!d)
            return "(bad digit)";
        unsigned x = (unsigned)(d - digits);
        if (x >= 32) {
            v = v * 32 + x - 32;
            continue;
        }
        v = v * 32 + x;
        if (!have_length) {
            length = (size_t)v;
            have_length = 1;
        } else if (at < size) {
            at += (size_t)snprintf(buf + at, size - at, n ? ",%llu" : "%llu", (unsigned long long)v);
            n++;
        }
        v = 0;
    }
    if (!have_length || n != length)
        return "(bad length)";
    if (at < size)
        snprintf(buf + at, size - at, "]");
    return buf;
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
    char buf[256];
    CHECK(strstr(text, "\"kl\":\"") == text);
    CHECK_STR(unpacked(text, "kt", buf, sizeof buf), "[0,0]");
    /* two leaves, ascending: the second as the difference from the first */
    const char *kl = unpacked(text, "kl", buf, sizeof buf);
    CHECK(kl[0] == '[' && strchr(kl, ',') && strncmp(strchr(kl, ','), ",0", 2) != 0);
    CHECK_STR(unpacked(text, "tt", buf, sizeof buf), "[15000,15000,15000,15000,15000,15000,15000,15000,15000,15000]");
    const char *tk = unpacked(text, "tk", buf, sizeof buf);
    CHECK(!strcmp(tk, "[0,0,0,0,0,0,1,1,1,1]") || !strcmp(tk, "[1,1,1,1,1,1,0,0,0,0]"));
    CHECK(strstr(text, "\"period\":1,\"w\":1048576,\"tc\":\""));
    CHECK_STR(unpacked(text, "tc", buf, sizeof buf), "[4,4,4,4,4,4,4,4,4,4]");
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
    CHECK_STR(text ? unpacked(text, "tt", buf, sizeof buf) : "", "[30000,15000]");
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
    char buf[256];
    CHECK_STR(unpacked(text, "tt", buf, sizeof buf), "[10001,10000,10000,10000,10000,10000,10000,10000,10000,10000]");
    CHECK_STR(unpacked(text, "tw", buf, sizeof buf), "[1,1,1,1,1,1,1,1,1,3]");
    CHECK(strstr(text, "\"period\":10000000"));
    CHECK(!strstr(text, "\"tc\""));
    free(text);
    prof_free(&ps);
}

/* json_pack: digits of 5 bits, the last from the first half of the
 * alphabet; 64-bit values whole. */
static void test_pack(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    REQUIRE(out);
    fputs("\"x\":\"", out);
    uint64_t values[] = {0, 31, 32, 1250, 1023, 1024, UINT64_MAX};
    json_pack(out, sizeof values / sizeof values[0]);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        json_pack(out, values[i]);
    fputc('"', out);
    fclose(out);
    CHECK_STR(text, "\"x\":\"70VX0Xd2_VXW0l___________V\"");
    char buf[256];
    CHECK_STR(unpacked(text, "x", buf, sizeof buf), "[0,31,32,1250,1023,1024,18446744073709551615]");
    free(text);
}

void suite_flame_timeline(void)
{
    RUN(test_pack);
    RUN(test_samples_and_marks);
    RUN(test_weights_each);
}
