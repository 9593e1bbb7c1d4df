/*
 * Tests of tracing mode's shadow stacks (src/agent/trace): the assembly
 * hooks called the way the JIT calls them (trace_calls.S), with the
 * registers they must keep checked on the fast and the slow paths, and the
 * stack kept right through mismatched returns, exceptions, tail calls,
 * deep recursion, more frames than fit, many paths, and a thread that ends
 * with calls open.  Also the method filters and the tracing settings.
 */
#include <pthread.h>
#include <stdlib.h>

#include "agent/trace/methods.h"
#include "agent/trace/shadow.h"
#include "cli/profile.h"
#include "cli/report.h"
#include "common/buf.h"
#include "common/config.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

#if defined(__x86_64__)

void trace_test_enter(void *hook, uint64_t id, uint64_t sp, uint64_t out[32]);
void trace_test_leave(void *hook, uint64_t id, uint64_t sp, uint64_t out[32]);

static FunctionEnter3 *enter_hook;
static FunctionLeave3 *leave_hook;
static FunctionTailcall3 *tail_hook;
static int regs_bad;

static void setup(int timed, uint32_t depth)
{
    methods_reset_for_test();
    shadow_reset_for_test();
    shadow_init(timed, depth);
    shadow_hooks(&enter_hook, &leave_hook, &tail_hook);
}

static void done(void)
{
    shadow_thread_end_for_test();
    shadow_reset_for_test();
    methods_reset_for_test();
}

/* Enter, with every register the JIT keeps across it checked. */
static void enter(uint64_t id, uint64_t sp)
{
    uint64_t out[32];
    trace_test_enter((void *)enter_hook, id, sp, out);
    static const uint64_t want[] = {0xA0A0A0A0A0A0A0A0ull, 0xA1A1A1A1A1A1A1A1ull,
                                    0xA2A2A2A2A2A2A2A2ull, 0xA3A3A3A3A3A3A3A3ull,
                                    0xA4A4A4A4A4A4A4A4ull, 0xA5A5A5A5A5A5A5A5ull,
                                    0xB0B0B0B0B0B0B0B0ull, 0xB1B1B1B1B1B1B1B1ull};
    int bad = 0;
    for (int i = 0; i < 8; i++)
        bad |= out[i] != want[i];
    bad |= out[8] != (uint64_t)(uintptr_t)out || out[10] != id || out[11] != sp;
    for (int x = 0; x < 8; x++)
        bad |= out[12 + 2 * x] != 0x5100000000000000ull + (uint64_t)x ||
               out[13 + 2 * x] != 0x5100000000000100ull + (uint64_t)x;
    regs_bad += bad;
}

static void leave_with(void *hook, uint64_t id, uint64_t sp)
{
    uint64_t out[32];
    trace_test_leave(hook, id, sp, out);
    int bad = out[0] != 0xC0C0C0C0C0C0C0C0ull || out[1] != 0xC2C2C2C2C2C2C2C2ull ||
              out[2] != 0xB0B0B0B0B0B0B0B0ull || out[3] != 0xB1B1B1B1B1B1B1B1ull ||
              out[4] != (uint64_t)(uintptr_t)out || out[6] != 0xB4B4B4B4B4B4B4B4ull ||
              out[7] != 0xB5B5B5B5B5B5B5B5ull;
    for (int x = 0; x < 2; x++)
        bad |= out[8 + 2 * x] != 0x5100000000000000ull + (uint64_t)x ||
               out[9 + 2 * x] != 0x5100000000000100ull + (uint64_t)x;
    regs_bad += bad;
}

static void leave(uint64_t id, uint64_t sp)
{
    leave_with((void *)leave_hook, id, sp);
}

/* The node of a path given root first, or NULL. */
static struct trace_node *path(struct trace_thread *t, const uint64_t *ids, int n)
{
    struct trace_node *at = shadow_node(t, SHADOW_ROOT);
    for (int k = 0; k < n; k++) {
        struct trace_node *next = NULL;
        for (uint32_t i = 0; i < shadow_node_count(t) && !next; i++) {
            struct trace_node *c = shadow_node(t, i);
            if (c->parent == at && c->method == ids[k])
                next = c;
        }
        if (!next)
            return NULL;
        at = next;
    }
    return at;
}

static void test_trace_balanced_calls(void)
{
    for (int timed = 1; timed >= 0; timed--) {
        setup(timed, 64);
        regs_bad = 0;
        /* A calls B three times and C once; B calls C; twice over: the second
         * round runs on the fast path only */
        for (int round = 0; round < 2; round++) {
            enter(1, 1000);
            for (int i = 0; i < 3; i++) {
                enter(2, 900);
                enter(3, 800);
                leave(3, 800);
                leave(2, 900);
            }
            enter(3, 900);
            leave(3, 900);
            leave(1, 1000);
        }
        struct trace_thread *t = shadow_self();
        REQUIRE(t);
        CHECK_EQ(shadow_depth(t), 0);
        CHECK_EQ(regs_bad, 0);
        uint64_t a[] = {1}, ab[] = {1, 2}, abc[] = {1, 2, 3}, ac[] = {1, 3};
        REQUIRE(path(t, a, 1) && path(t, ab, 2) && path(t, abc, 3) && path(t, ac, 2));
        CHECK_EQ(path(t, a, 1)->calls, 2);
        CHECK_EQ(path(t, ab, 2)->calls, 6);
        CHECK_EQ(path(t, abc, 3)->calls, 6);
        CHECK_EQ(path(t, ac, 2)->calls, 2);
        CHECK_EQ(shadow_node_count(t), 2 + 4); /* root, lost, four paths */
        CHECK_EQ(t->unmatched + t->abandoned + t->untracked, 0);
        if (timed) {
            struct trace_node *na = path(t, a, 1), *nab = path(t, ab, 2), *nabc = path(t, abc, 3),
                              *nac = path(t, ac, 2);
            /* inclusive = self + the callees' inclusive, exactly */
            CHECK_EQ(na->incl, na->self + nab->incl + nac->incl);
            CHECK_EQ(nab->incl, nab->self + nabc->incl);
            CHECK(na->incl > 0 && na->max > 0 && na->max <= na->incl);
            CHECK_EQ(na->active + nab->active + nabc->active, 0);
        }
        done();
    }
}

static void test_trace_leave_mismatches(void)
{
    setup(1, 64);
    regs_bad = 0;
    /* B is left without its Leave: A's Leave closes it */
    enter(1, 1000);
    enter(2, 900);
    enter(3, 800);
    leave(1, 1000);
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(t->abandoned, 2);
    /* a Leave that matches nothing changes nothing */
    enter(1, 1000);
    leave(7, 1000);
    leave(1, 500);
    CHECK_EQ(shadow_depth(t), 1);
    CHECK_EQ(t->unmatched, 2);
    leave(1, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    /* a tail call ends the caller; the callee enters at the same SP */
    enter(1, 1000);
    enter(2, 900);
    leave_with((void *)tail_hook, 2, 900);
    enter(3, 900);
    leave(3, 900);
    leave(1, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    uint64_t ac[] = {1, 3};
    CHECK(path(t, ac, 2) && path(t, ac, 2)->calls == 1);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_trace_exceptions(void)
{
    setup(1, 64);
    regs_bad = 0;
    FunctionID fa = 0x1000, fb = 0x2000, fc = 0x3000, fd = 0x4000;
    uint32_t a = methods_add_for_test(fa, "T", "A"), b = methods_add_for_test(fb, "T", "B");
    uint32_t c = methods_add_for_test(fc, "T", "C"), d = methods_add_for_test(fd, "T", "D");
    REQUIRE(a && b && c && d);
    /* A (catches) -> B (finally calls D) -> C throws; C's frame, and an
     * EH frame entered and never left (.NET 9), go at C's unwind */
    enter(a, 1000);
    enter(b, 900);
    enter(c, 800);
    enter(d, 700); /* stands for the runtime's EH frame */
    shadow_unwind_enter(fc);
    shadow_unwind_leave();
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_depth(t), 2);
    /* B's finally calls D: under B */
    shadow_unwind_enter(fb);
    enter(d, 600);
    leave(d, 600);
    shadow_unwind_leave();
    CHECK_EQ(shadow_depth(t), 1);
    /* an untraced frame's unwind changes nothing */
    shadow_unwind_enter(0x9999);
    shadow_unwind_leave();
    CHECK_EQ(shadow_depth(t), 1);
    /* the catcher stays; its catch block's callees are its children */
    shadow_unwind_enter(fa);
    shadow_catcher_enter(fa);
    enter(d, 500);
    leave(d, 500);
    leave(a, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    uint64_t ab[] = {a, b}, abd[] = {a, b, d}, ad[] = {a, d}, abc[] = {a, b, c};
    CHECK(path(t, abd, 3) && path(t, abd, 3)->calls == 1);
    CHECK(path(t, ad, 2) && path(t, ad, 2)->calls == 1);
    CHECK(path(t, ab, 2) && path(t, abc, 3));
    /* the catcher left above the catch: a catch further up pops what the
     * unwinder left */
    enter(a, 1000);
    enter(b, 900);
    enter(c, 800);
    shadow_catcher_enter(fa);
    CHECK_EQ(shadow_depth(t), 1);
    leave(a, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_trace_recursion_and_capacity(void)
{
    setup(1, 100);
    regs_bad = 0;
    /* 10,000 deep: paths stop at depth 100, the counts do not */
    const int deep = 10000;
    for (int i = 0; i <= deep; i++)
        enter(5, 10000000 - 64 * (uint64_t)i);
    for (int i = deep; i >= 0; i--)
        leave(5, 10000000 - 64 * (uint64_t)i);
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_depth(t), 0);
    uint64_t calls = 0;
    for (uint32_t i = 2; i < shadow_node_count(t); i++) {
        struct trace_node *n = shadow_node(t, i);
        calls += n->calls;
        CHECK(n->depth <= 100);
        CHECK_EQ(n->active, 0);
    }
    CHECK_EQ(calls, deep + 1);
    CHECK_EQ(shadow_node_count(t), 2 + 100);
    /* the node at the limit holds the calls from there down, its
     * inclusive time that of the outermost of them only */
    struct trace_node *last = shadow_node(t, shadow_node_count(t) - 1);
    CHECK_EQ(last->depth, 100);
    CHECK_EQ(last->calls, deep + 1 - 99);
    CHECK(last->incl <= shadow_node(t, 2)->incl);
    /* more frames than fit: counted, not stacked, and left in order */
    const uint64_t many = SHADOW_FRAMES + 100;
    for (uint64_t i = 0; i < many; i++)
        enter(6, 100000000 - 64 * i);
    CHECK_EQ(shadow_depth(t), SHADOW_FRAMES);
    CHECK_EQ(t->overflow, 100);
    for (uint64_t i = many; i > 0; i--)
        leave(6, 100000000 - 64 * (i - 1));
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(t->overflow, 0);
    CHECK_EQ(t->untracked, 100);
    CHECK_EQ(t->unmatched, 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_trace_many_paths(void)
{
    setup(0, 64);
    regs_bad = 0;
    /* 5000 callees of one method: the slot table grows; the second round
     * finds them all */
    for (int round = 0; round < 2; round++) {
        enter(1, 1000);
        for (uint64_t m = 100; m < 5100; m++) {
            enter(m, 900);
            leave(m, 900);
        }
        leave(1, 1000);
    }
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_node_count(t), 2 + 1 + 5000);
    CHECK(t->mask + 1 >= 2 * 5001);
    for (uint32_t i = 3; i < shadow_node_count(t); i++)
        CHECK_EQ(shadow_node(t, i)->calls, 2);
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void *ends_with_calls_open(void *arg)
{
    (void)arg;
    enter(1, 1000);
    enter(2, 900);
    enter(3, 800);
    leave(3, 800);
    return NULL; /* the thread ends inside 1 and 2 */
}

struct seen_threads {
    int ended, live;
    uint64_t closed, calls;
};

static int look(void *ctx, struct trace_thread *t, int ended)
{
    struct seen_threads *s = ctx;
    if (ended) {
        s->ended++;
        s->closed += shadow_read(&t->closed_at_end);
        for (uint32_t i = 2; i < shadow_node_count(t); i++)
            s->calls += shadow_read(&shadow_node(t, i)->calls);
        CHECK_EQ(shadow_depth(t), 0);
        CHECK(shadow_node(t, 2)->incl > 0);
    } else {
        s->live++;
    }
    return 1;
}

static void test_trace_thread_end(void)
{
    setup(1, 64);
    regs_bad = 0;
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, ends_with_calls_open, NULL) == 0);
    pthread_join(th, NULL);
    struct seen_threads s = {0, 0, 0, 0};
    shadow_each(look, &s, 0, NULL);
    CHECK_EQ(s.ended, 1);
    CHECK_EQ(s.closed, 2);
    CHECK_EQ(s.calls, 3);
    /* the ended state was freed: a second look does not see it */
    struct seen_threads again = {0, 0, 0, 0};
    shadow_each(look, &again, 1, NULL);
    CHECK_EQ(again.ended, 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_trace_open_frames_read(void)
{
    setup(1, 64);
    enter(1, 1000);
    enter(2, 900);
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    struct trace_frame f[4];
    CHECK_EQ(shadow_open_frames(t, f, 4), 2);
    CHECK(f[0].node && f[0].node->method == 1 && f[0].sp == 1000);
    CHECK(f[1].node && f[1].node->method == 2 && f[1].t0 >= f[0].t0);
    CHECK_EQ(shadow_open_frames(t, f, 1), 1);
    leave(2, 900);
    leave(1, 1000);
    done();
}

#endif

static void test_trace_filters(void)
{
    char err[256], name[128];
    methods_display_name("NS.Outer+Inner", "Run", 0, name, sizeof name);
    CHECK_STR(name, "NS.Outer+Inner.Run");
    methods_display_name("", "Run", 2, name, sizeof name);
    CHECK_STR(name, "Run``2");
    methods_display_name("System.Collections.Generic.List`1", "Add", 0, name, sizeof name);
    CHECK_STR(name, "System.Collections.Generic.List`1.Add");
    REQUIRE(methods_init(NULL, 0, "^App\\.", "Middle|Helpers\\.", err, sizeof err) == 0);
    CHECK(methods_filtered());
    CHECK(methods_name_traced("App.Calls.Leaf"));
    CHECK(!methods_name_traced("App.Calls.Middle"));
    CHECK(!methods_name_traced("App.Helpers.Log"));
    CHECK(!methods_name_traced("System.String.Concat"));
    CHECK(methods_init(NULL, 0, "(", NULL, err, sizeof err) < 0);
    CHECK(strstr(err, "--include (") != NULL);
    REQUIRE(methods_init(NULL, 0, NULL, "", err, sizeof err) == 0);
    CHECK(!methods_filtered());
    CHECK(methods_name_traced("System.String.Concat"));
    methods_reset_for_test();

    struct config c;
    config_defaults(&c);
    CHECK_EQ(c.trace, CONFIG_TRACE_OFF);
    CHECK(config_set(&c, "trace", "times", err, sizeof err) == 0 && c.trace == CONFIG_TRACE_TIMES);
    CHECK(config_set(&c, "trace", "counts", err, sizeof err) == 0 && c.trace == CONFIG_TRACE_COUNTS);
    CHECK(config_set(&c, "trace", "sometimes", err, sizeof err) < 0);
    CHECK(config_set(&c, "trace_include", "^App\\.", err, sizeof err) == 0);
    CHECK(strcmp(c.trace_include, "^App\\.") == 0);
    CHECK(config_set(&c, "trace_exclude", "a[", err, sizeof err) < 0);
    CHECK(strstr(err, "not a regular expression") != NULL);
    CHECK(config_set(&c, "trace_exclude", "", err, sizeof err) == 0 && !c.trace_exclude[0]);
    char text[64];
    config_value_text(&c, "trace", text, sizeof text);
    CHECK_STR(text, "counts");
    /* an attached agent cannot trace */
    CHECK(config_attach_refusal(&c) && strstr(config_attach_refusal(&c), "--trace needs the agent"));
    CHECK(config_set(&c, "trace", "off", err, sizeof err) == 0);
    CHECK(config_attach_refusal(&c) == NULL);
}

/* A traced recording: Main calls Rec, which recurses once and calls Leaf;
 * Main calls Leaf on another thread too.  Records (values self, calls;
 * fields inclusive, max), the second of Main;Rec a later delta. */
static int calls_recording(struct buf *out)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, FMT_INFO_TRACE, "calls and times of every method; inlining was off");
    struct writer_event_def d;
    schema_event_def(&d, FMT_EV_CALLS);
    d.id = FMT_EVENT_FIRST_RECORDED;
    writer_event_def(&w, &d);
    uint32_t mod = writer_string(&w, "Demo.dll", 8), type = writer_string(&w, "Demo", 4);
    uint32_t fm = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, writer_string(&w, "Main", 4), 0);
    uint32_t fr = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, writer_string(&w, "Rec", 3), 0);
    uint32_t fl = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, writer_string(&w, "Leaf", 4), 0);
    uint32_t p1[] = {fm}, p2[] = {fr, fm}, p3[] = {fr, fr, fm}, p4[] = {fl, fr, fr, fm},
             p5[] = {fl, fm};
    uint32_t s1 = writer_stack(&w, p1, 1), s2 = writer_stack(&w, p2, 2),
             s3 = writer_stack(&w, p3, 3), s4 = writer_stack(&w, p4, 4),
             s5 = writer_stack(&w, p5, 2);
    writer_thread(&w, 1, 100, 0);
    writer_thread(&w, 2, 101, 0);
    struct {
        uint32_t thread, stack;
        uint64_t self, calls, incl, max;
    } rec[] = {
        {1, s1, 100, 1, 1000, 1000}, {1, s2, 200, 2, 800, 500}, {1, s3, 300, 2, 500, 300},
        {1, s4, 100, 10, 100, 20},   {2, s5, 50, 5, 50, 15},    {1, s2, 10, 1, 100, 600},
    };
    for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++) {
        uint64_t values[FMT_CALLS_VALUE_COUNT] = {[FMT_CALLS_SELF] = rec[i].self,
                                                  [FMT_CALLS_CALLS] = rec[i].calls};
        uint64_t fields[FMT_CALLS_FIELD_COUNT] = {[FMT_CALLS_INCLUSIVE] = rec[i].incl,
                                                  [FMT_CALLS_MAX] = rec[i].max};
        writer_record(&w, FMT_EVENT_FIRST_RECORDED, rec[i].thread, 1000 + i, rec[i].stack, values,
                      FMT_CALLS_VALUE_COUNT, fields, FMT_CALLS_FIELD_COUNT);
    }
    int rc = writer_finish(&w, NULL, NULL, 0);
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

/* Does the calls table have this row? */
static int has_row(const char *text, unsigned calls, const char *incl, const char *self,
                   const char *mean, const char *max, const char *what)
{
    char want[512];
    snprintf(want, sizeof want, "%12u %12s %12s %12s %12s  %s\n", calls, incl, self, mean, max, what);
    return strstr(text, want) != NULL;
}

static void test_trace_calls_table(void)
{
    struct prof_filter f = {0};
    f.event = "calls";
    struct profiles ps;
    REQUIRE(fixture_profiles_of(calls_recording, &ps, &f) == 0);
    struct report_options o = {.filter = &f};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    REQUIRE(out);
    CHECK(report_calls(prof_current(&ps), &o, out) == 0);
    fclose(out);
    REQUIRE(text);
    /* Rec: calls 2+2+1; inclusive of its outermost paths only (800+100),
     * over its 3 outermost calls; self everywhere; the longest call */
    CHECK(has_row(text, 5, "900 ns", "510 ns", "300 ns", "600 ns", "Demo.Rec"));
    CHECK(has_row(text, 15, "150 ns", "150 ns", "10 ns", "20 ns", "Demo.Leaf"));
    CHECK(has_row(text, 1, "1.00 us", "100 ns", "1.00 us", "1.00 us", "Demo.Main"));
    CHECK(strstr(text, "# calls: 21 calls of 3 methods on 2 threads") != NULL);
    CHECK(strstr(text, "# traced: calls and times of every method; inlining was off") != NULL);
    /* sorted by self, then by calls */
    CHECK(strstr(text, "Demo.Rec") < strstr(text, "Demo.Leaf") &&
          strstr(text, "Demo.Leaf") < strstr(text, "Demo.Main"));
    free(text);
    REQUIRE(report_calls_sort("calls") == 0);
    CHECK(report_calls_sort("bogus") < 0);
    out = open_memstream(&text, &len);
    REQUIRE(out);
    CHECK(report_calls(prof_current(&ps), &o, out) == 0);
    fclose(out);
    CHECK(strstr(text, "Demo.Leaf") < strstr(text, "Demo.Rec") &&
          strstr(text, "Demo.Rec") < strstr(text, "Demo.Main"));
    free(text);
    report_calls_sort("self");
    prof_free(&ps);
}

/* The calls event where people look: the tree with each node's calls and
 * times, collapsed stacks by calls, the table of paths. */
static void test_trace_calls_tree_and_paths(void)
{
    struct prof_filter f = {0};
    f.event = "calls";
    struct profiles ps;
    REQUIRE(fixture_profiles_of(calls_recording, &ps, &f) == 0);
    const struct profile *p = prof_current(&ps);
    struct report_options o = {.filter = &f};

    char *text = fixture_render(report_tree, p, &o);
    REQUIRE(text);
    CHECK(strstr(text, "# calls: 760 ns, 21 calls in 6 records;") != NULL);
    CHECK(strstr(text, "  total%    self%      total       self      calls  name\n") != NULL);
    CHECK(strstr(text, " 100.00%   13.16%     760 ns     100 ns          1  Demo.Main\n") != NULL);
    CHECK(strstr(text, "  80.26%   27.63%     610 ns     210 ns          3    Demo.Rec\n") != NULL);
    CHECK(strstr(text, "  52.63%   39.47%     400 ns     300 ns          2      Demo.Rec\n") != NULL);
    CHECK(strstr(text, "  13.16%   13.16%     100 ns     100 ns         10        Demo.Leaf\n") != NULL);
    CHECK(strstr(text, "   6.58%    6.58%      50 ns      50 ns          5    Demo.Leaf\n") != NULL);
    free(text);

    /* --weight calls, and what --weight takes */
    int by_count = -1;
    char why[256];
    CHECK(report_weight(p, "calls", &by_count, why, sizeof why) == 0 && by_count == 1);
    CHECK(report_weight(p, "time", &by_count, why, sizeof why) == 0 && by_count == 0);
    CHECK(report_weight(p, "self", &by_count, why, sizeof why) == 0 && by_count == 0);
    CHECK(report_weight(p, "bytes", &by_count, why, sizeof why) < 0);
    CHECK(strstr(why, "the calls event is weighed by self, time or by calls (count)") != NULL);
    o.by_count = 1;
    text = fixture_render(report_collapsed, p, &o);
    REQUIRE(text);
    CHECK_STR(text, "Demo.Main 1\n"
                    "Demo.Main;Demo.Leaf 5\n"
                    "Demo.Main;Demo.Rec 3\n"
                    "Demo.Main;Demo.Rec;Demo.Rec 2\n"
                    "Demo.Main;Demo.Rec;Demo.Rec;Demo.Leaf 10\n");
    free(text);
    o.by_count = 0;
    text = fixture_render(report_collapsed, p, &o);
    CHECK(text && strstr(text, "Demo.Main;Demo.Rec 210\n") != NULL);
    free(text);

    /* --paths: each path's own calls and times, by self time */
    o.paths = 1;
    text = fixture_render(report_calls, p, &o);
    REQUIRE(text);
    CHECK(strstr(text, "# 5 call paths, by self; each path root first, its method last\n") != NULL);
    CHECK(has_row(text, 2, "500 ns", "300 ns", "250 ns", "300 ns", "Demo.Main;Demo.Rec;Demo.Rec"));
    CHECK(has_row(text, 10, "100 ns", "100 ns", "10 ns", "20 ns", "Demo.Main;Demo.Rec;Demo.Rec;Demo.Leaf"));
    CHECK(has_row(text, 3, "900 ns", "210 ns", "300 ns", "600 ns", "Demo.Main;Demo.Rec"));
    const char *order[] = {"Demo.Main;Demo.Rec;Demo.Rec\n", "Demo.Main;Demo.Rec\n",
                           "Demo.Main;Demo.Rec;Demo.Rec;Demo.Leaf\n", "Demo.Main\n",
                           "Demo.Main;Demo.Leaf\n"};
    const char *at = text;
    for (size_t i = 0; i < sizeof order / sizeof order[0] && at; i++) {
        char line[128];
        snprintf(line, sizeof line, "  %s", order[i]);
        at = strstr(at, line);
        CHECK(at != NULL);
    }
    free(text);
    /* per thread with --threads: Main;Leaf is thread 2's */
    f.thread_roots = 1;
    prof_free(&ps);
    REQUIRE(fixture_profiles_of(calls_recording, &ps, &f) == 0);
    text = fixture_render(report_calls, prof_current(&ps), &o);
    CHECK(text && strstr(text, "  [tid=101];Demo.Main;Demo.Leaf\n") != NULL);
    free(text);
    prof_free(&ps);
}

void suite_trace(void)
{
    RUN(test_trace_calls_table);
    RUN(test_trace_calls_tree_and_paths);
#if defined(__x86_64__)
    RUN(test_trace_balanced_calls);
    RUN(test_trace_leave_mismatches);
    RUN(test_trace_exceptions);
    RUN(test_trace_recursion_and_capacity);
    RUN(test_trace_many_paths);
    RUN(test_trace_thread_end);
    RUN(test_trace_open_frames_read);
#endif
    RUN(test_trace_filters);
}
