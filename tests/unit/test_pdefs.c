/*
 * pdefs: a stream's definitions under a memory budget: a program that
 * names new code for ever stays bounded, what is in use is kept, what was
 * forgotten and then needed shows as [forgotten].
 */
#include <stdio.h>
#include <string.h>

#include "cli/pstream.h"
#include "fixture.h"
#include "format/recording.h"
#include "format/writer.h"
#include "test.h"

/* Does a window's recording name a frame "[forgotten]"? */
static int has_forgotten(const struct pstream_window *w)
{
    struct recording r;
    char err[200];
    if (rec_load_memory(w->recording.data, w->recording.len, &r, err, sizeof err) < 0)
        return -1;
    int found = 0;
    for (size_t i = 1; i < r.frame_count; i++)
        found |= rec_str_eq(r.strings[r.frames[i].name], "[forgotten]");
    rec_free(&r);
    return found;
}

static void test_pstream_forgets(void)
{
    /* a program that names new code for ever: one new method per window,
     * each sampled in its window only; Main is sampled in every window */
    struct fixture_stream r;
    fixture_stream_begin(&r);
    uint32_t mod = writer_string(&r.w, "Dyn.dll", 7);
    uint32_t main_ = writer_frame(&r.w, FMT_FRAME_MANAGED, mod, 0, writer_string(&r.w, "Main", 4), 0);
    uint32_t main_stack = writer_stack(&r.w, &main_, 1);
    uint32_t first_stack = 0;
    const int windows = 200;
    for (int k = 0; k < windows; k++) {
        char name[64];
        int n = snprintf(name, sizeof name, "lambda_method%d_with_a_long_generated_name", k);
        uint32_t f = writer_frame(&r.w, FMT_FRAME_MANAGED, mod, 0, writer_string(&r.w, name, (size_t)n), 0);
        uint32_t frames[2] = {f, main_};
        uint32_t st = writer_stack(&r.w, frames, 2);
        if (!first_stack)
            first_stack = st;
        uint64_t t = 800000000ull + (uint64_t)k * FIXTURE_EVERY;
        writer_sample(&r.w, FMT_EVENT_CPU, 1, t, st, 1);
        writer_sample(&r.w, FMT_EVENT_CPU, 1, t + 1, main_stack, 1);
        writer_flush(&r.w);
    }
    /* at the end, the first method's stack again (the agent cached it) */
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 800000000ull + (uint64_t)windows * FIXTURE_EVERY, first_stack, 1);
    writer_flush(&r.w);
    writer_free(&r.w);

    struct pstream s;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    s.defs.budget = s.defs.threshold = 16u << 10; /* 16 KiB */
    size_t at = 0;
    int made = 0, forgotten_shown = 0, main_forgotten = 0;
    uint64_t most = 0;
    while (at < r.out.len) {
        size_t n = r.out.len - at < 512 ? r.out.len - at : 512;
        REQUIRE(pstream_feed(&s, r.out.data + at, n) == 0);
        at += n;
        struct pstream_window w;
        int got;
        while ((got = pstream_next_window(&s, FIXTURE_START_MONO + s.last_time, at == r.out.len, &w)) == 1) {
            made++;
            int f = has_forgotten(&w);
            if (f && made < windows)
                main_forgotten = 1; /* a stack in use was forgotten */
            forgotten_shown += f > 0;
            pstream_window_free(&w);
        }
        REQUIRE(got == 0);
        if (pdefs_bytes(&s.defs) > most)
            most = pdefs_bytes(&s.defs);
    }
    CHECK(made >= windows);
    CHECK(s.defs.compactions > 0);
    CHECK(s.defs.forgotten > (uint64_t)windows); /* most methods, their names and stacks */
    CHECK(most < 64u << 10);                      /* bounded by the budget (and its doubling) */
    CHECK(!main_forgotten);
    CHECK_EQ(forgotten_shown, 1); /* the first method's stack, shown as [forgotten] */
    CHECK(s.defs.forgotten_refs >= 1);
    pstream_free(&s);
    buf_free(&r.out);
}

void suite_pdefs(void)
{
    RUN(test_pstream_forgets);
}
