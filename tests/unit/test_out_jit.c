/*
 * Tests of out_jit (report -f jit) over a recording of compilations written
 * here the way the agent writes one: the table's totals and tiers, and
 * every allocation it makes may fail (a clean failure, never a crash or a
 * leak: its per-second arrays go through mem_*, so the fault injection
 * reaches them).
 */
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

enum { EV_JIT = 16 };

/* 20 compiles of 2 ms over 3 s, every fourth at tier 1 (the rest tier 0). */
static int jit_recording(struct buf *out)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, "events", "cpu,jit");
    writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", 10000000);
    struct writer_event_def jit;
    schema_event_def(&jit, FMT_EV_JIT);
    jit.id = EV_JIT;
    writer_event_def(&w, &jit);
    uint32_t mod = writer_string(&w, "App.dll", 7), type = writer_string(&w, "App.Work", 8);
    uint32_t name = writer_string(&w, "Compute", 7), tname = writer_string(&w, "main", 4);
    uint32_t method = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, name, 0);
    uint32_t stack = writer_stack(&w, &method, 1);
    writer_thread(&w, 1, 100, tname);
    for (uint64_t i = 0; i < 20; i++) {
        uint64_t v[FMT_JIT_VALUE_COUNT] = {[FMT_JIT_COMPILE] = 2000000, [FMT_JIT_COMPILES] = 1};
        uint64_t f[FMT_JIT_FIELD_COUNT] = {[FMT_JIT_METHOD] = method,
                                           [FMT_JIT_TIER] = i % 4 == 3 ? 1 : 0};
        writer_record(&w, EV_JIT, 1, 150000000 * (i + 1), stack, v, FMT_JIT_VALUE_COUNT, f,
                      FMT_JIT_FIELD_COUNT);
    }
    int rc = writer_finish(&w, NULL, NULL, 0);
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

static int load_jit(struct profiles *ps)
{
    struct prof_filter f = {0};
    return fixture_profiles_of(jit_recording, ps, &f);
}

static void test_jit_table(void)
{
    struct profiles ps;
    REQUIRE(load_jit(&ps) == 0);
    struct prof_filter f = {0};
    struct report_options o = {.limit = 50, .filter = &f};
    char *text = fixture_render(report_jit, prof_current(&ps), &o);
    REQUIRE(text);
    CHECK(strstr(text, "App.Work.Compute") != NULL);
    CHECK(strstr(text, "20 ") != NULL);
    free(text);
    prof_free(&ps);
}

static void test_jit_table_allocation_failures(void)
{
    struct profiles ps;
    REQUIRE(load_jit(&ps) == 0);
    struct prof_filter f = {0};
    struct report_options o = {.limit = 50, .filter = &f};
    char *whole = fixture_render(report_jit, prof_current(&ps), &o);
    REQUIRE(whole);
    int saved = fixture_stderr_off(); /* the failures' messages */
    long n;
    for (n = 1;; n++) {
        mem_fail_after(n, 0);
        char *text = fixture_render(report_jit, prof_current(&ps), &o);
        mem_fail_after(0, 0);
        if (text && !strcmp(text, whole)) {
            free(text);
            CHECK(n > 2); /* the two per-second arrays at least */
            break;
        }
        CHECK(text == NULL); /* failed whole, or not at all */
        free(text);
        if (n >= 10000)
            break;
    }
    fixture_stderr_on(saved);
    CHECK(n < 10000);
    free(whole);
    prof_free(&ps);
}

void suite_out_jit(void)
{
    RUN(test_jit_table);
    RUN(test_jit_table_allocation_failures);
}
