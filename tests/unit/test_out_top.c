/*
 * Tests of out_top: the flat table of the fixture recording.
 */
#include <stdlib.h>

#include "fixture.h"
#include "format/writer.h"
#include "test.h"

static void test_top(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    struct report_options o = {0};
    char *text = fixture_render(report_top, p, &o);
    REQUIRE(text);
    /* Hot: self 6 of 12, total 9 of 12; Main total 100% */
    CHECK(strstr(text, "  50.00%   75.00%") != NULL);
    CHECK(strstr(text, "   0.00%  100.00%") != NULL);
    CHECK(strstr(text, "# lost: 2 samples dropped (a buffer was full)") != NULL);
    char *hot = strstr(text, "Demo.Work.Hot"), *cold = strstr(text, "Demo.Work.Cold");
    CHECK(hot && cold && hot < cold); /* sorted by self */
    free(text);
    o.limit = 1;
    text = fixture_render(report_top, p, &o);
    CHECK(text && strstr(text, "Demo.Work.Hot") && !strstr(text, "Demo.Work.Cold"));
    free(text);
    prof_free(&ps);
}

/* The runtime's work by what it did: stacks (leaf first) that end in the
 * runtime under the agent's labels, or under none. */
static int labels_recording(struct buf *out)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, "event", "cpu");
    writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", 1000);
    uint32_t mod = writer_string(&w, "Demo.dll", 8), type = writer_string(&w, "Demo", 4);
    uint32_t coreclr = writer_string(&w, "libcoreclr.so", 13), libc = writer_string(&w, "libc.so.6", 9);
    uint32_t f_main = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, writer_string(&w, "Main", 4), 0);
    uint32_t f_parse = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, writer_string(&w, "Parse", 5), 0);
    uint32_t f_clr = writer_frame(&w, FMT_FRAME_RUNTIME, coreclr, 0, 0, 0x1234);
    uint32_t f_clr2 = writer_frame(&w, FMT_FRAME_RUNTIME, coreclr, 0, 0, 0x5678);
    uint32_t f_memset = writer_frame(&w, FMT_FRAME_NATIVE, libc, 0, writer_string(&w, "memset", 6), 0);
    uint32_t f_jit = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, writer_string(&w, "JIT", 3), f_parse);
    uint32_t f_gc = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, writer_string(&w, "GC gen0 other", 13), 0);
    uint32_t f_thread = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, writer_string(&w, "thread", 6), 0);
    uint32_t a[] = {f_clr, f_clr2, f_jit, f_main}, b[] = {f_clr, f_main}, c[] = {f_main},
             d[] = {f_memset, f_clr, f_gc, f_main}, e[] = {f_clr, f_thread};
    uint32_t sa = writer_stack(&w, a, 4), sb = writer_stack(&w, b, 2), sc = writer_stack(&w, c, 1),
             sd = writer_stack(&w, d, 4), se = writer_stack(&w, e, 2);
    writer_thread(&w, 1, 100, 0);
    struct { uint32_t stack, n; } samples[] = {{sa, 3}, {sb, 1}, {sc, 2}, {sd, 2}, {se, 1}};
    uint64_t t = 0;
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        for (uint32_t k = 0; k < samples[i].n; k++)
            writer_sample(&w, FMT_EVENT_CPU, 1, t += 1000000, samples[i].stack, 1);
    int rc = writer_finish(&w, NULL, NULL, 0);
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

static void test_top_runtime_by_label(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles_of(labels_recording, &ps, &f) == 0);
    struct report_options o = {0};
    char *text = fixture_render(report_top, prof_current(&ps), &o);
    REQUIRE(text);
    CHECK(strstr(text, "# the runtime's own work: 77.78% of cpu, by what it did: [JIT] 33.33%, "
                       "[GC gen0 other] 22.22%; no label 22.22%\n") != NULL);
    /* a label is the self of what ended in the runtime under it, the library
     * keeps what no label explains ([thread] is a root, not an explanation) */
    CHECK(strstr(text, "  33.33%   33.33%       3 us       3 us  [JIT] Demo.Parse\n") != NULL);
    CHECK(strstr(text, "  22.22%   22.22%       2 us       2 us  [GC gen0 other]\n") != NULL);
    CHECK(strstr(text, "  22.22%   88.89%       2 us       8 us  Demo.Main\n") != NULL);
    CHECK(strstr(text, "  22.22%   77.78%       2 us       7 us  libcoreclr.so\n") != NULL);
    CHECK(strstr(text, "   0.00%   22.22%") && strstr(text, "libc.so.6!memset\n"));
    if (!strstr(text, "[JIT] Demo.Parse\n"))
        printf("%s", text);
    free(text);
    prof_free(&ps);
}

void suite_out_top(void)
{
    RUN(test_top);
    RUN(test_top_runtime_by_label);
}
