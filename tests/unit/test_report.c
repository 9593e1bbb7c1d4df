/*
 * Tests of the report side: frame names (the same rules in every format),
 * the profile aggregate with its filters, and the collapsed and top writers,
 * over the fixture recording.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/frame_name.h"
#include "cli/json.h"
#include "cli/profile.h"
#include "cli/report.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

static int load(struct profiles *p, struct prof_filter *f)
{
    struct buf b;
    buf_init(&b);
    if (fixture_recording(&b, 1) < 0)
        return -1;
    struct recording r;
    char err[256];
    int rc = rec_load_memory(b.data, b.len, &r, err, sizeof err);
    buf_free(&b);
    if (rc < 0)
        return -1;
    return prof_build(p, &r, f, err, sizeof err);
}

/* Runs a writer into a string (caller frees). */
static char *render(report_writer w, const struct profile *p, const struct report_options *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    int rc = w(p, o, f);
    fclose(f);
    if (rc < 0) {
        free(text);
        return NULL;
    }
    return text;
}

static void test_frame_names(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(load(&ps, &f) == 0);
    p = prof_current(&ps);
    char name[128];
    /* frames of the fixture: 1 Main, 2 Hot, 3 Cold (generic arity 1), 4 memcpy */
    frame_name_format(p->rec, 1, name, sizeof name);
    CHECK_STR(name, "Demo.Program.Main");
    frame_name_format(p->rec, 3, name, sizeof name);
    CHECK_STR(name, "Demo.Work.Cold``1");
    frame_name_format(p->rec, 4, name, sizeof name);
    CHECK_STR(name, "libc.so.6!memcpy");
    CHECK_EQ(frame_name_format(p->rec, 3, name, 5), 17); /* cut, but says how long */
    CHECK_STR(name, "Demo");
    frame_name_format(p->rec, 99, name, sizeof name);
    CHECK_STR(name, "[invalid frame]");
    prof_free(&ps);
}

static void test_collapsed(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(load(&ps, &f) == 0);
    p = prof_current(&ps);
    CHECK_EQ(p->total_weight, FIXTURE_WEIGHT);
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = render(report_collapsed, p, &o);
    REQUIRE(text);
    CHECK_STR(text, "Demo.Program.Main;Demo.Work.Cold``1 3\n"
                    "Demo.Program.Main;Demo.Work.Hot 6\n"
                    "Demo.Program.Main;Demo.Work.Hot;libc.so.6!memcpy 3\n");
    free(text);
    prof_free(&ps);
}

static void test_filters(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text;

    f.thread_roots = 1;
    f.thread = "work"; /* the thread named "worker" */
    REQUIRE(load(&ps, &f) == 0);
    p = prof_current(&ps);
    text = render(report_collapsed, p, &o);
    CHECK_STR(text, "[worker tid=101];Demo.Program.Main;Demo.Work.Cold``1 3\n");
    free(text);
    prof_free(&ps);

    memset(&f, 0, sizeof f);
    f.reverse = 1;
    REQUIRE(regcomp(&f.exclude, "memcpy", REG_EXTENDED | REG_NOSUB) == 0);
    f.has_exclude = 1;
    REQUIRE(load(&ps, &f) == 0);
    p = prof_current(&ps);
    text = render(report_collapsed, p, &o);
    CHECK_STR(text, "Demo.Work.Cold``1;Demo.Program.Main 3\nDemo.Work.Hot;Demo.Program.Main 6\n");
    free(text);
    prof_free(&ps);
    prof_filter_free(&f);

    /* the time window: the fixture's samples are 10 ms apart from 10 ms on */
    memset(&f, 0, sizeof f);
    f.from_ns = 30000000;
    f.to_ns = 50000000;
    REQUIRE(load(&ps, &f) == 0);
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

static void test_top(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(load(&ps, &f) == 0);
    p = prof_current(&ps);
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = render(report_top, p, &o);
    REQUIRE(text);
    /* Hot: self 6 of 12, total 9 of 12; Main total 100% */
    CHECK(strstr(text, "  50.00%   75.00%") != NULL);
    CHECK(strstr(text, "   0.00%  100.00%") != NULL);
    CHECK(strstr(text, "# lost: 2 samples dropped (a buffer was full)") != NULL);
    char *hot = strstr(text, "Demo.Work.Hot"), *cold = strstr(text, "Demo.Work.Cold");
    CHECK(hot && cold && hot < cold); /* sorted by self */
    free(text);
    o.limit = 1;
    text = render(report_top, p, &o);
    CHECK(text && strstr(text, "Demo.Work.Hot") && !strstr(text, "Demo.Work.Cold"));
    free(text);
    prof_free(&ps);
}

static void test_tree(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(load(&ps, &f) == 0);
    p = prof_current(&ps);
    /* 12 weight: Main 12 (Hot 9 with memcpy 3, Cold 3) */
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = render(report_tree, p, &o);
    REQUIRE(text);
    CHECK(strstr(text, " 100.00%    0.00%  Demo.Program.Main\n"));
    CHECK(strstr(text, "  75.00%   50.00%    Demo.Work.Hot\n"));
    CHECK(strstr(text, "  25.00%   25.00%      libc.so.6!memcpy\n"));
    CHECK(strstr(text, "  25.00%   25.00%    Demo.Work.Cold``1\n"));
    /* the heavier callee first */
    CHECK(strstr(text, "Demo.Work.Hot") < strstr(text, "Demo.Work.Cold"));
    free(text);
    o.min_percent = 30; /* Cold and memcpy (25% each) go, and say so */
    text = render(report_tree, p, &o);
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

/* A label frame prints its label and its subject, a frame or a text. */
static void test_label_names(void)
{
    struct buf b;
    buf_init(&b);
    struct writer w;
    struct writer_sink sink = {fixture_sink, &b};
    REQUIRE(writer_begin(&w, sink) == 0);
    uint32_t f_m = writer_frame(&w, FMT_FRAME_MANAGED, writer_string(&w, "A.dll", 5),
                                writer_string(&w, "N.T", 3), writer_string(&w, "M", 1), 0);
    writer_frame(&w, FMT_FRAME_LABEL, 0, 0, writer_string(&w, "JIT", 3), f_m);
    writer_frame(&w, FMT_FRAME_LABEL, 0, writer_string(&w, "System.Byte[]", 13),
                 writer_string(&w, "alloc", 5), 0);
    writer_frame(&w, FMT_FRAME_LABEL, 0, 0, writer_string(&w, "GC gen2 induced", 15), 0);
    writer_finish(&w, NULL, NULL, 0);
    writer_free(&w);
    struct recording r;
    char err[256], name[128];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_COMPLETE);
    frame_name_format(&r, 2, name, sizeof name);
    CHECK_STR(name, "[JIT] N.T.M");
    frame_name_format(&r, 3, name, sizeof name);
    CHECK_STR(name, "[alloc] System.Byte[]");
    frame_name_format(&r, 4, name, sizeof name);
    CHECK_STR(name, "[GC gen2 induced]");
    rec_free(&r);
    buf_free(&b);
}

static void test_json_strings(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    REQUIRE(f);
    json_string(f, "a\"b\\c\n\t\x01</script>");
    fputc(' ', f);
    json_string(f, "caf\xc3\xa9 \xff\xfe ok \xe2\x82"); /* valid, invalid, cut short */
    fclose(f);
    CHECK_STR(text, "\"a\\\"b\\\\c\\n\\t\\u0001\\u003c/script>\" "
                    "\"caf\xc3\xa9 \\ufffd\\ufffd ok \\ufffd\\ufffd\"");
    free(text);
}

void suite_report(void)
{
    RUN(test_tree);
    RUN(test_label_names);
    RUN(test_json_strings);
    RUN(test_frame_names);
    RUN(test_collapsed);
    RUN(test_filters);
    RUN(test_top);
}
