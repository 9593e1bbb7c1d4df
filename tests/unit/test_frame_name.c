/*
 * Tests of frame_name (cli/frame_name.h): frame names, the same rules in
 * every format, labels included.
 */

#include <stdio.h>
#include <string.h>

#include "agent/codemap.h"
#include "cli/frame_name.h"
#include "fixture.h"
#include "test.h"

static void test_frame_names(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles(&ps, &f) == 0);
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

static void check_sm(const char *type, const char *method, const char *want)
{
    size_t outer, len;
    const char *name;
    int is = frame_name_state_machine(type, strlen(type), method, strlen(method), &outer, &name, &len);
    if (!want) {
        CHECK(!is);
        return;
    }
    REQUIRE(is);
    char got[256];
    snprintf(got, sizeof got, "%.*s.%.*s", (int)outer, type, (int)len, name);
    CHECK_STR(got, want);
}

static void test_state_machine_names(void)
{
    check_sm("Chain+<C>d__3", "MoveNext", "Chain.C");
    check_sm("NS.Chain+<C>d", "MoveNext", "NS.Chain.C");
    check_sm("NS.Gen`1+<Get>d__4`1", "MoveNext", "NS.Gen`1.Get");
    check_sm("P+<>c+<<Main>b__0_0>d", "MoveNext", "P+<>c.<Main>b__0_0");
    check_sm("P+<<Main>g__Local|0_0>d", "MoveNext", "P.<Main>g__Local|0_0");
    check_sm("Chain+<C>d__3", "SetStateMachine", NULL);
    check_sm("Chain+<C>d__3x", "MoveNext", NULL);
    check_sm("Chain+<C>e__3", "MoveNext", NULL);
    check_sm("<C>d__3", "MoveNext", NULL);
    check_sm("Chain+C", "MoveNext", NULL);
    check_sm("Chain+<>d", "MoveNext", NULL);
}

/* A recording made for async code names state machines as written, its
 * [async] labels too; any other keeps the metadata's names. */
static void test_async_names(void)
{
    for (int async = 0; async <= 2; async++) {
        struct buf b;
        buf_init(&b);
        struct writer w;
        struct writer_sink sink = {fixture_sink, &b};
        REQUIRE(writer_begin(&w, sink) == 0);
        if (async)
            writer_info(&w, FMT_INFO_ASYNC, async == 1 ? "on (3 runtime methods rewritten)"
                                                       : "off (not this runtime)");
        uint32_t f = writer_frame(&w, FMT_FRAME_MANAGED, writer_string(&w, "A.dll", 5),
                                  writer_string(&w, "NS.Chain+<C>d__3", 16),
                                  writer_string(&w, "MoveNext", 8), 0);
        writer_frame(&w, FMT_FRAME_LABEL, 0, 0, writer_string(&w, "async", 5), f);
        /* a label whose subject is a type as text: the box of a state
         * machine, nested, generic (t_async once found it in a report) */
        const char *box = "S.AsyncTaskMethodBuilder`1+AsyncStateMachineBox`1[S.VoidTaskResult,"
                          "NS.Chain+<C>d__2]";
        writer_frame(&w, FMT_FRAME_LABEL, 0, writer_string(&w, box, strlen(box)),
                     writer_string(&w, "load type", 9), 0);
        const char *odd = "NS.A+<>c,NS.B+<G>d__1`2+Inner,NS.C+<D>x,NS.E+<F>d";
        writer_frame(&w, FMT_FRAME_LABEL, 0, writer_string(&w, odd, strlen(odd)),
                     writer_string(&w, "load type", 9), 0);
        writer_finish(&w, NULL, NULL, 0);
        writer_free(&w);
        struct recording r;
        char err[256], name[128];
        REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
        frame_name_format(&r, 1, name, sizeof name);
        CHECK_STR(name, async == 1 ? "NS.Chain.C" : "NS.Chain+<C>d__3.MoveNext");
        frame_name_format(&r, 2, name, sizeof name);
        CHECK_STR(name, async == 1 ? "[async] NS.Chain.C" : "[async] NS.Chain+<C>d__3.MoveNext");
        char as_is[160];
        snprintf(as_is, sizeof as_is, "[load type] %s", box);
        const char *want = async == 1 ? "[load type] S.AsyncTaskMethodBuilder`1+"
                                        "AsyncStateMachineBox`1[S.VoidTaskResult,NS.Chain.C]"
                                      : as_is;
        frame_name_format(&r, 3, name, sizeof name);
        CHECK_STR(name, want);
        snprintf(as_is, sizeof as_is, "[load type] %s", odd);
        want = async == 1 ? "[load type] NS.A+<>c,NS.B.G+Inner,NS.C+<D>x,NS.E.F" : as_is;
        frame_name_format(&r, 4, name, sizeof name);
        CHECK_STR(name, want);
        rec_free(&r);
        buf_free(&b);
    }
}

void suite_frame_name(void)
{
    RUN(test_frame_names);
    RUN(test_label_names);
    RUN(test_state_machine_names);
    RUN(test_async_names);
}
