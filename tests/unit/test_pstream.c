/*
 * pstream: a recording read as a stream and cut into windows: windows that
 * tile the wall clock's grid, late events, stacks written twice, damage.
 */
#include <string.h>

#include "cli/pstream.h"
#include "fixture.h"
#include "format/recording.h"
#include "format/writer.h"
#include "test.h"

static void test_pstream_windows(void)
{
    struct fixture_stream r;
    fixture_stream_begin(&r);
    /* 35 samples, one every 100 ms from 0.05 s: windows [0, 0.7), [0.7, 1.7),
     * [1.7, 2.7), [2.7, 3.7) of stream time */
    uint64_t total = 0;
    for (int i = 0; i < 35; i++) {
        writer_sample(&r.w, FMT_EVENT_CPU, 1, 50000000ull + (uint64_t)i * 100000000ull,
                      i % 3 ? r.stack_a : r.stack_b, (uint64_t)i + 1);
        total += (uint64_t)i + 1;
        if (i % 7 == 6)
            writer_flush(&r.w);
    }
    uint64_t v[2] = {4096, 3}, f[1] = {0};
    writer_record(&r.w, r.alloc, 1, 1200000000ull, r.stack_a, v, 2, f, 1);
    writer_finish(&r.w, NULL, NULL, 0);
    writer_free(&r.w);

    struct pstream s;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    REQUIRE(fixture_stream_feed(&s, &r.out, 7) == 0); /* pieces that cut chunks anywhere */
    CHECK(s.ended);
    CHECK_EQ(pstream_now(&s, FIXTURE_START_MONO + 1234), 1234);
    /* nothing is due before the grace after the first window's end */
    struct pstream_window w;
    CHECK_EQ(pstream_next_window(&s, FIXTURE_START_MONO + 700000000ull, 0, &w), 0);
    CHECK_EQ(pstream_next_due(&s), FIXTURE_START_MONO + 700000000ull + PSTREAM_GRACE_NS);
    uint64_t expect_start[] = {FIXTURE_START_REAL, FIXTURE_START_REAL + 700000000ull, FIXTURE_START_REAL + 1700000000ull,
                               FIXTURE_START_REAL + 2700000000ull};
    uint64_t seen = 0, prev_end = 0;
    size_t samples_seen = 0;
    for (int k = 0; k < 4; k++) {
        REQUIRE(pstream_next_window(&s, UINT64_MAX / 2, k == 3, &w) == 1);
        CHECK_EQ(w.start_ns, expect_start[k]);
        if (k)
            CHECK_EQ(w.start_ns, prev_end); /* no gap */
        CHECK_EQ(w.start_ns % FIXTURE_EVERY == 0, k > 0); /* aligned to the wall clock but the first */
        prev_end = w.end_ns;
        size_t n;
        uint64_t weight = fixture_window_weight(&w, &n);
        REQUIRE(weight != UINT64_MAX);
        seen += weight;
        samples_seen += n;
        pstream_window_free(&w);
    }
    CHECK_EQ(seen, total + 4096); /* the alloc record's stack counts as a sample */
    CHECK_EQ(samples_seen, 36);
    /* the last window ends with the recording's last sample */
    CHECK_EQ(prev_end, FIXTURE_START_REAL + 50000000ull + 34 * 100000000ull + 1);
    CHECK_EQ(pstream_next_window(&s, UINT64_MAX / 2, 1, &w), 0);
    CHECK_EQ(s.late_items, 0);
    pstream_free(&s);
    buf_free(&r.out);
}

static void test_pstream_late(void)
{
    struct fixture_stream r;
    fixture_stream_begin(&r);
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 100000000ull, r.stack_a, 5);
    writer_flush(&r.w);
    size_t first_part = r.out.len;
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 1500000000ull, r.stack_a, 7);
    writer_flush(&r.w);
    size_t second_part = r.out.len;
    /* a record of the first window, written after it was made */
    uint64_t v[2] = {100, 1}, f[1] = {0};
    writer_record(&r.w, r.alloc, 1, 200000000ull, r.stack_b, v, 2, f, 1);
    writer_flush(&r.w);
    writer_free(&r.w);

    struct pstream s;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    REQUIRE(pstream_feed(&s, r.out.data, second_part) == 0);
    (void)first_part;
    struct pstream_window w;
    /* the first window [0, 0.7) is due at 0.7 + grace */
    REQUIRE(pstream_next_window(&s, FIXTURE_START_MONO + 700000000ull + PSTREAM_GRACE_NS, 0, &w) == 1);
    size_t n;
    CHECK_EQ(fixture_window_weight(&w, &n), 5);
    pstream_window_free(&w);
    REQUIRE(pstream_feed(&s, r.out.data + second_part, r.out.len - second_part) == 0);
    CHECK_EQ(s.late_items, 1);
    REQUIRE(pstream_next_window(&s, UINT64_MAX / 2, 1, &w) == 1);
    CHECK_EQ(w.start_ns, FIXTURE_START_REAL + 700000000ull);
    CHECK_EQ(fixture_window_weight(&w, &n), 7 + 100); /* the late one is in the next window */
    CHECK_EQ(n, 2);
    pstream_window_free(&w);
    pstream_free(&s);
    buf_free(&r.out);
}

static void test_pstream_dedupe_and_damage(void)
{
    struct fixture_stream r;
    fixture_stream_begin(&r);
    /* the agent forgot its stack table and writes the same stack again */
    uint32_t again[2] = {1, 2}; /* stack_a's frames: Hot, Cold */
    uint32_t s3 = writer_stack(&r.w, again, 2);
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 10, s3, 1);
    writer_flush(&r.w);
    writer_free(&r.w);
    struct pstream s;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    REQUIRE(fixture_stream_feed(&s, &r.out, r.out.len) == 0);
    CHECK_EQ(s.defs.pool_count, 3); /* stack_a's two frames and stack_b's one, kept once */
    CHECK_EQ(pdefs_find(&s.defs, &s.defs.stacks, s3)->a, pdefs_find(&s.defs, &s.defs.stacks, r.stack_a)->a);
    pstream_free(&s);

    /* a bit flipped in a chunk: the stream stops, saying where */
    r.out.data[r.out.len - 3] ^= 0x40;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    CHECK(fixture_stream_feed(&s, &r.out, 100) < 0);
    CHECK(s.failed);
    CHECK(strstr(s.problem, "checksum") != NULL);
    pstream_free(&s);
    /* not a recording at all */
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    const char *http = "GET / HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
    CHECK(pstream_feed(&s, http, strlen(http)) < 0);
    pstream_free(&s);
    buf_free(&r.out);
}

void suite_pstream(void)
{
    RUN(test_pstream_windows);
    RUN(test_pstream_late);
    RUN(test_pstream_dedupe_and_damage);
}
