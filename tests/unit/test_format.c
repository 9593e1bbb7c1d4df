/*
 * Tests of the recording format: what the writer writes, the reader reads
 * back exactly, and every damaged variant is reported, never crashed on.
 */
#include <stdlib.h>

#include "common/buf.h"
#include "common/mem.h"
#include "fixture.h"
#include <string.h>
#include "format/recording.h"
#include "format/writer.h"
#include "test.h"

static void test_round_trip(void)
{
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_COMPLETE);
    CHECK_STR(r.problem, "");
    CHECK_EQ(r.sample_count, FIXTURE_SAMPLES);
    CHECK_EQ(r.thread_count, FIXTURE_THREADS);
    CHECK_EQ(r.stack_count - 1, FIXTURE_STACKS);
    CHECK_EQ(r.event_count, 1);
    CHECK_EQ(r.events[0].period, 10000000);
    CHECK(rec_str_eq(r.events[0].name, "cpu"));
    CHECK(rec_str_eq(*rec_info(&r, "pid"), "4242"));
    CHECK(rec_info(&r, "nope") == NULL);
    CHECK_EQ(rec_stat(&r, "samples"), 10);
    CHECK_EQ(rec_stat(&r, "dropped_samples"), 2);
    uint64_t weight = 0;
    for (size_t i = 0; i < r.sample_count; i++)
        weight += r.samples[i].weight;
    CHECK_EQ(weight, FIXTURE_WEIGHT);
    /* times strictly increase and survive the chunk boundary */
    for (size_t i = 1; i < r.sample_count; i++)
        CHECK(r.samples[i].time == r.samples[i - 1].time + 10000000);
    CHECK_EQ(r.samples[0].time, 1000 + 10000000);
    /* the last sample: stack 3, leaf memcpy, root Main */
    struct rec_sample last = r.samples[r.sample_count - 1];
    struct rec_stack s = r.stacks[last.stack];
    CHECK_EQ(s.depth, 3);
    struct rec_frame leaf = r.frames[r.stack_frames[s.offset]];
    CHECK_EQ(leaf.kind, FMT_FRAME_NATIVE);
    CHECK(rec_str_eq(r.strings[leaf.name], "memcpy"));
    CHECK(rec_str_eq(r.strings[leaf.module], "libc.so.6"));
    struct rec_frame root = r.frames[r.stack_frames[s.offset + 2]];
    CHECK(rec_str_eq(r.strings[root.type], "Demo.Program"));
    CHECK(rec_str_eq(r.strings[r.threads[r.samples[6].thread].name], "worker"));
    CHECK_EQ(r.threads[1].os_tid, 101);
    CHECK_EQ(r.chunks, r.trailer_chunks);
    rec_free(&r);
    buf_free(&b);
}

static void test_unclosed_recording_is_truncated(void)
{
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 0) == 0);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_TRUNCATED);
    CHECK(strstr(r.problem, "no trailer") != NULL);
    CHECK_EQ(r.sample_count, FIXTURE_SAMPLES);
    rec_free(&r);
    buf_free(&b);
}

static void test_writer_allocation_failures_are_clean(void)
{
    /* fail each allocation in turn until the fixture is written whole */
    for (long n = 1;; n++) {
        struct buf b;
        buf_init(&b);
        mem_fail_after(n, 0);
        int rc = fixture_recording(&b, 1);
        mem_fail_after(0, 0);
        if (rc == 0) {
            struct recording r;
            char err[256];
            int loaded = rec_load_memory(b.data, b.len, &r, err, sizeof err);
            CHECK(loaded == 0 && r.status == REC_COMPLETE);
            if (loaded == 0)
                rec_free(&r);
            buf_free(&b);
            CHECK(n > 1);
            break;
        }
        buf_free(&b);
        REQUIRE(n < 10000);
    }
}

static void test_reader_allocation_failures_are_clean(void)
{
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    for (long n = 1;; n++) {
        struct recording r;
        char err[256] = "";
        mem_fail_after(n, 0);
        int rc = rec_load_memory(b.data, b.len, &r, err, sizeof err);
        mem_fail_after(0, 0);
        if (rc < 0) {
            CHECK(err[0] != '\0');
        } else {
            int whole = r.status == REC_COMPLETE;
            if (!whole)
                CHECK(strstr(r.problem, "out of memory") != NULL);
            rec_free(&r);
            if (whole)
                break;
        }
        REQUIRE(n < 10000);
    }
    buf_free(&b);
}

static void test_header_checks(void)
{
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    struct recording r;
    char err[256];

    CHECK(rec_load_memory(b.data, 10, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "shorter than a header") != NULL);

    uint8_t *copy = malloc(b.len);
    REQUIRE(copy);
    memcpy(copy, b.data, b.len);
    copy[4] = '\n'; /* "\r\n" -> "\n\n": a text-mode copy */
    CHECK(rec_load_memory(copy, b.len, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "line endings") != NULL);

    memcpy(copy, b.data, b.len);
    copy[8] = 2; /* major version 2, checksum now wrong too */
    CHECK(rec_load_memory(copy, b.len, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "checksum") != NULL);

    memcpy(copy, "GARBAGE!", 8);
    CHECK(rec_load_memory(copy, b.len, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "not a corscope recording") != NULL);
    free(copy);
    buf_free(&b);
}

void suite_format(void)
{
    RUN(test_round_trip);
    RUN(test_unclosed_recording_is_truncated);
    RUN(test_writer_allocation_failures_are_clean);
    RUN(test_reader_allocation_failures_are_clean);
    RUN(test_header_checks);
}

/* ---- damage: every cut, every flipped byte ---------------------------- */

static void test_truncation_at_every_byte(void)
{
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    size_t prev_samples = 0;
    for (size_t cut = 0; cut < b.len; cut++) {
        struct recording r;
        char err[256];
        int rc = rec_load_memory(b.data, cut, &r, err, sizeof err);
        if (cut < 32) {
            CHECK(rc < 0);
            continue;
        }
        REQUIRE(rc == 0);
        CHECK(r.status == REC_TRUNCATED);
        /* a longer prefix never yields fewer samples */
        CHECK(r.sample_count >= prev_samples);
        prev_samples = r.sample_count;
        rec_free(&r);
    }
    CHECK(prev_samples == FIXTURE_SAMPLES || prev_samples == 9 || prev_samples == 6);
    buf_free(&b);
}

static void test_flipped_bytes(void)
{
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    uint8_t *copy = malloc(b.len);
    REQUIRE(copy);
    for (size_t at = 0; at < b.len; at++) {
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(copy, b.data, b.len);
            copy[at] ^= (uint8_t)(1u << bit);
            struct recording r;
            char err[256];
            int rc = rec_load_memory(copy, b.len, &r, err, sizeof err);
            if (rc == 0) {
                /* every flip is caught by a checksum */
                CHECK(r.status != REC_COMPLETE);
                CHECK(r.problem[0] != '\0');
                rec_free(&r);
            } else {
                CHECK(err[0] != '\0');
            }
        }
    }
    free(copy);
    buf_free(&b);
}

void suite_reader_damage(void)
{
    RUN(test_truncation_at_every_byte);
    RUN(test_flipped_bytes);
}
