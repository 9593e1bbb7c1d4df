/*
 * Tests of tracing mode (src/agent/trace, and the CLI's calls event): the
 * method filters, the tracing settings, and the calls reports.  The
 * shadow stacks and the hooks are test_shadow.c's.
 */
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
    /* the default scope: the program's own assemblies, by name and place */
    setenv("HOME", "/home/u", 1);
    unsetenv("NUGET_PACKAGES");
    REQUIRE(methods_init(NULL, 0, NULL, NULL, err, sizeof err) == 0);
    CHECK(methods_own_module("/app/bin/Shop.dll"));
    CHECK(methods_own_module("/app/bin/Systematic.dll"));
    CHECK(!methods_own_module("/app/bin/System.Text.Json.dll"));
    CHECK(!methods_own_module("/app/bin/Microsoft.Extensions.Logging.dll"));
    CHECK(!methods_own_module("/app/bin/netstandard.dll"));
    CHECK(!methods_own_module("[dynamic]"));
    CHECK(!methods_own_module("/home/u/.nuget/packages/newtonsoft.json/13.0.3/lib/Newtonsoft.Json.dll"));
    /* the installation's other places are known once the runtime's is seen */
    CHECK(methods_own_module("/opt/dotnet/sdk/10.0.100/NuGet.Frameworks.dll"));
    CHECK(!methods_own_module("/opt/dotnet/shared/Microsoft.NETCore.App/10.0.1/System.Private.CoreLib.dll"));
    CHECK(!methods_own_module("/opt/dotnet/sdk/10.0.100/NuGet.Frameworks.dll"));
    CHECK(!methods_own_module("/opt/dotnet/shared/Microsoft.AspNetCore.App/10.0.1/Other.dll"));
    CHECK(methods_own_module("/opt/app/Other.dll"));
    /* a self-contained program's runtime beside it says nothing of its place */
    methods_reset_for_test();
    REQUIRE(methods_init(NULL, 0, NULL, NULL, err, sizeof err) == 0);
    CHECK(!methods_own_module("/app/System.Private.CoreLib.dll"));
    CHECK(methods_own_module("/app/Shop.dll"));
    setenv("NUGET_PACKAGES", "/cache/nuget", 1);
    REQUIRE(methods_init(NULL, 0, NULL, NULL, err, sizeof err) == 0);
    CHECK(!methods_own_module("/cache/nuget/serilog/4.0.0/lib/net8.0/Serilog.dll"));
    unsetenv("NUGET_PACKAGES");
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
    CHECK(config_set(&c, "trace", "flat", err, sizeof err) == 0 && c.trace == CONFIG_TRACE_FLAT);
    config_value_text(&c, "trace", text, sizeof text);
    CHECK_STR(text, "flat");
    CHECK(config_attach_refusal(&c) &&
          strstr(config_attach_refusal(&c), "--trace=flat needs the agent"));
    CHECK(config_set(&c, "trace", "off", err, sizeof err) == 0);
    CHECK(config_attach_refusal(&c) == NULL);
}

/* A traced recording: Main calls Rec, which recurses once and calls Leaf;
 * Main calls Leaf on another thread too.  Records (values self, calls;
 * fields inclusive, max), the second of Main;Rec a later delta. */
static int calls_recording(struct buf *out, const char *cost)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, FMT_INFO_TRACE, "calls and times of every method; inlining was off");
    if (cost)
        writer_info(&w, FMT_INFO_TRACE_COST, cost);
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

/* calls_recording without a cost, for fixture_profiles_of. */
static int calls_recording_plain(struct buf *out)
{
    return calls_recording(out, NULL);
}

/* The calls table of calls_recording(cost), as report_calls writes it. */
struct calls_view {
    struct recording r;
    struct prof_filter f;
    struct profiles ps;
    struct report_options o;
};

static int calls_view_open(struct calls_view *v, const char *cost)
{
    struct buf b;
    char err[256];
    memset(v, 0, sizeof *v);
    buf_init(&b);
    int rc = calls_recording(&b, cost) == 0 && rec_load_memory(b.data, b.len, &v->r, err,
                                                               sizeof err) == 0 ? 0 : -1;
    buf_free(&b);
    if (rc < 0)
        return -1;
    v->f.event = "calls";
    if (prof_build(&v->ps, &v->r, &v->f, err, sizeof err) < 0)
        return -1;
    v->o.filter = &v->f;
    return 0;
}

static char *calls_text(struct calls_view *v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    int rc = report_calls(prof_current(&v->ps), &v->o, out);
    fclose(out);
    if (rc < 0) {
        free(text);
        return NULL;
    }
    return text;
}

static void test_trace_calls_table(void)
{
    struct calls_view v;
    REQUIRE(calls_view_open(&v, NULL) == 0);
    char *text = calls_text(&v);
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
    text = calls_text(&v);
    REQUIRE(text);
    CHECK(strstr(text, "Demo.Leaf") < strstr(text, "Demo.Rec") &&
          strstr(text, "Demo.Rec") < strstr(text, "Demo.Main"));
    free(text);
    report_calls_sort("self");
    prof_free(&v.ps);
}

/* The hooks' own cost taken out (trace_cost call_ns=10 own_ns=2): per path,
 * 2 ns per call from its own times, 10 ns per traced call below it from
 * its inclusive time and 8 ns per call it made from its self time. */
static void test_trace_calls_cost_taken_out(void)
{
    struct calls_view v;
    REQUIRE(calls_view_open(&v, "call_ns=10.000 own_ns=2.000 pairs=10000 rounds=9") == 0);
    char *text = calls_text(&v);
    REQUIRE(text);
    /* Main;Rec: 3 calls, 12 below, 2 made: incl 900-6-120, self 210-6-16;
     * Main;Rec;Rec (recursive: self only): 300-4-80; Leaf 150-30 */
    char want[256];
    snprintf(want, sizeof want, "%12u %12s %12s %12s %12s  %s\n", 5, "774 ns", "404 ns", "258 ns",
             "558 ns", "Demo.Rec");
    CHECK(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "%12u %12s %12s %12s %12s  %s\n", 15, "120 ns", "120 ns", "8 ns",
             "18 ns", "Demo.Leaf");
    CHECK(strstr(text, want) != NULL);
    /* Main: 20 calls below, 8 made; the longest calls as if they made
     * their path's mean number of calls (Rec: 600 - 2 - 12/3 * 10) */
    snprintf(want, sizeof want, "%12u %12s %12s %12s %12s  %s\n", 1, "798 ns", "34 ns", "798 ns",
             "798 ns", "Demo.Main");
    CHECK(strstr(text, want) != NULL);
    CHECK(strstr(text, "10.0 ns per traced call from its caller's time, 2.0 ns from the called "
                       "method's own; 202 ns of the 760 ns of self time measured") != NULL);
    CHECK(strstr(text, "waited that much") == NULL); /* no stretch given: none */
    free(text);
    prof_free(&v.ps);
}

/* The calls event where people look: the tree with each node's calls and
 * times, collapsed stacks by calls, the table of paths. */
static void test_trace_calls_tree_and_paths(void)
{
    struct prof_filter f = {0};
    f.event = "calls";
    struct profiles ps;
    REQUIRE(fixture_profiles_of(calls_recording_plain, &ps, &f) == 0);
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
    REQUIRE(fixture_profiles_of(calls_recording_plain, &ps, &f) == 0);
    text = fixture_render(report_calls, prof_current(&ps), &o);
    CHECK(text && strstr(text, "  [tid=101];Demo.Main;Demo.Leaf\n") != NULL);
    free(text);
    prof_free(&ps);
}

void suite_trace(void)
{
    RUN(test_trace_calls_table);
    RUN(test_trace_calls_cost_taken_out);
    RUN(test_trace_calls_tree_and_paths);
    RUN(test_trace_filters);
}
