/*
 * Tests of the recording format: what the writer writes, the reader reads
 * back exactly, and every damaged variant is reported, never crashed on.
 */
#include <stdlib.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/mem.h"
#include "fixture.h"
#include <string.h>
#include "format/recording.h"
#include "format/writer.h"
#include "common/crc32.h"
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
    CHECK_EQ(rec_info_u64(&r, "pid"), 4242);
    CHECK_EQ(rec_info_u64(&r, "nope"), 0);
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

static int mem_sink(void *ctx, const void *p, size_t n)
{
    buf_put(ctx, p, n);
    return ((struct buf *)ctx)->failed ? -1 : 0;
}

/* A recording with a recorded event: two allocations (values bytes and
 * objects, a type name field, a stack whose leaf is a label frame) and one
 * record with no thread or stack.  `bad` damages one reference. */
static void recorded_events(struct buf *b, int bad)
{
    struct writer w;
    struct writer_sink sink = {mem_sink, b};
    writer_begin(&w, sink);
    struct writer_event_def d = {FMT_EVENT_FIRST_RECORDED, "alloc", 2,
                                 {"alloc_space", "alloc_objects"}, {"bytes", "count"},
                                 2, {"type", "size"}, {FMT_FIELD_STRING, FMT_FIELD_UINT}};
    writer_event_def(&w, &d);
    uint32_t mod = writer_string(&w, "App.dll", 7);
    uint32_t type = writer_string(&w, "App.Program", 11);
    uint32_t name = writer_string(&w, "Main", 4);
    uint32_t label = writer_string(&w, "alloc", 5);
    uint32_t bytes = writer_string(&w, "System.Byte[]", 13);
    uint32_t f_main = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, name, 0);
    uint32_t f_alloc = writer_frame(&w, FMT_FRAME_LABEL, 0, bytes, label, 0);
    uint32_t f_jit = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, writer_string(&w, "JIT", 3),
                                  bad == 1 ? 99 : f_main);
    uint32_t frames[] = {f_alloc, f_jit, f_main};
    uint32_t stack = writer_stack(&w, frames, 3);
    writer_thread(&w, 1, 100, 0);
    uint64_t v1[] = {102400, 4267}, f1[] = {bytes, 24};
    uint64_t v2[] = {2048, 1}, f2[] = {bad == 2 ? 999 : bytes, 2048};
    writer_record(&w, FMT_EVENT_FIRST_RECORDED, 1, 5000, stack, v1, 2, f1, 2);
    writer_record(&w, FMT_EVENT_FIRST_RECORDED, 1, 6000, stack, v2, 2, f2, 2);
    writer_record(&w, FMT_EVENT_FIRST_RECORDED, bad == 3 ? 7 : 0, 7000, 0, v2, 2, f2, 2);
    /* older than the record before it (another thread's queue): kept exact */
    writer_record(&w, FMT_EVENT_FIRST_RECORDED, 1, 5500, 0, v2, 2, f2, 2);
    const char *keys[] = {"events"};
    uint64_t values[] = {4};
    writer_finish(&w, keys, values, 1);
    writer_free(&w);
}

static void test_recorded_events(void)
{
    struct buf b;
    buf_init(&b);
    recorded_events(&b, 0);
    REQUIRE(!b.failed);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_COMPLETE);
    CHECK_EQ(r.event_count, 1);
    CHECK(r.events[0].recorded);
    CHECK_EQ(r.events[0].value_count, 2);
    CHECK(rec_str_eq(r.events[0].unit, "bytes"));
    /* the schema's alloc, as this (lesser) definition has it */
    CHECK_EQ(rec_event_of(&r, FMT_EV_ALLOC), 0);
    CHECK_EQ(rec_value_of(&r, FMT_EV_ALLOC, FMT_ALLOC_OBJECTS), 1);
    CHECK_EQ(rec_field_of(&r, FMT_EV_ALLOC, FMT_ALLOC_SIZE), 1);
    CHECK_EQ(rec_field_of(&r, FMT_EV_ALLOC, FMT_ALLOC_HEAP), -1);
    CHECK_EQ(rec_event_of(&r, FMT_EV_GC), -1);
    CHECK_EQ(rec_field(&r, &r.records[1], FMT_EV_ALLOC, FMT_ALLOC_SIZE), 2048);
    CHECK_EQ(rec_field(&r, &r.records[1], FMT_EV_ALLOC, FMT_ALLOC_HEAP), 0);
    CHECK_EQ(r.record_count, 4);
    CHECK_EQ(r.sample_count, 2); /* the records with a stack */
    CHECK_EQ(r.samples[0].weight, 102400);
    CHECK_EQ(r.samples[0].count, 4267);
    CHECK_EQ(rec_values(&r, &r.records[1])[0], 2048);
    CHECK_EQ(rec_fields(&r, &r.records[1])[1], 2048);
    CHECK(rec_str_eq(r.strings[rec_fields(&r, &r.records[0])[0]], "System.Byte[]"));
    CHECK_EQ(r.records[2].thread, 0);
    CHECK_EQ(r.records[2].stack, 0);
    CHECK_EQ(r.records[1].time, 6000);
    CHECK_EQ(r.records[2].time, 7000);
    CHECK_EQ(r.records[3].time, 5500); /* a negative delta */
    rec_free(&r);
    buf_free(&b);

    /* references to what does not exist: the chunk is corrupt, what came
     * before it stays */
    const char *why[] = {NULL, "label frame refers to an undefined frame",
                         "record field refers to something undefined",
                         "record on an undefined thread"};
    for (int bad = 1; bad <= 3; bad++) {
        buf_init(&b);
        recorded_events(&b, bad);
        REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
        CHECK_EQ(r.status, REC_CORRUPT);
        CHECK(strstr(r.problem, why[bad]) != NULL);
        rec_free(&r);
        buf_free(&b);
    }
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
    copy[8] = 3; /* major version 3, checksum now wrong too */
    CHECK(rec_load_memory(copy, b.len, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "checksum") != NULL);

    /* a newer major version with a good checksum: refused by name */
    uint32_t crc = crc32_update(0, copy, FMT_HEADER_SIZE - 4);
    for (int i = 0; i < 4; i++)
        copy[FMT_HEADER_SIZE - 4 + i] = (uint8_t)(crc >> (8 * i));
    CHECK(rec_load_memory(copy, b.len, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "format version 3.0 is not supported") != NULL);

    memcpy(copy, "GARBAGE!", 8);
    CHECK(rec_load_memory(copy, b.len, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "not a corscope recording") != NULL);
    free(copy);
    buf_free(&b);
}

/* What the reader, merge, fold and live build recordings with: ids as the
 * reader hands them out, and an addition that fails (allocation) leaves the
 * recording as it was. */
static void test_building_a_recording(void)
{
    for (long n = 1; n <= 24; n++) {
        struct recording r;
        memset(&r, 0, sizeof r);
        mem_fail_after(n, 1);
        if (rec_add_none(&r) < 0) {
            CHECK(r.string_count == 0 && r.frame_count == 0 && r.stack_count == 0);
            mem_fail_after(0, 0);
            rec_free(&r);
            continue;
        }
        CHECK(r.string_count == 1 && r.frame_count == 1 && r.stack_count == 1);
        uint32_t name = rec_add_string(&r, (struct rec_str){"Main", 4});
        CHECK_EQ(r.string_count, name ? 2 : 1);
        CHECK(!name || name == 1);
        uint32_t frame = rec_add_frame(&r, (struct rec_frame){FMT_FRAME_MANAGED, 0, 0, name, 0});
        CHECK_EQ(r.frame_count, frame ? 2 : 1);
        uint32_t stack = 0;
        uint32_t *frames = rec_add_stack(&r, 2, &stack);
        CHECK_EQ(r.stack_count, frames ? 2 : 1);
        CHECK_EQ(r.stack_frame_count, frames ? 2 : 0);
        if (frames) {
            CHECK_EQ(stack, 1);
            CHECK_EQ(r.stacks[stack].depth, 2);
            frames[0] = frames[1] = frame;
        }
        long lock = rec_add_schema_event(&r, FMT_EV_LOCK);
        CHECK_EQ(r.event_count, lock < 0 ? 0 : 1);
        CHECK_EQ(rec_event_of(&r, FMT_EV_LOCK), lock);
        int thread = rec_add_thread(&r, (struct rec_thread){1, 100, name});
        CHECK_EQ(r.thread_count, thread < 0 ? 0 : 1);
        struct rec_record x = {1000, 0, stack, 1, 0};
        size_t words = FMT_LOCK_VALUE_COUNT + FMT_LOCK_FIELD_COUNT;
        uint64_t *data = lock < 0 ? NULL : rec_add_record(&r, x, words);
        CHECK_EQ(r.record_count, data ? 1 : 0);
        CHECK_EQ(r.record_data_count, data ? words : 0);
        if (data) {
            memset(data, 0, words * sizeof *data);
            data[FMT_LOCK_WAIT] = 5000;
            data[FMT_LOCK_VALUE_COUNT + FMT_LOCK_LOCK] = 42;
            CHECK_EQ(rec_value(&r, &r.records[0], FMT_EV_LOCK, FMT_LOCK_WAIT), 5000);
            CHECK_EQ(rec_field(&r, &r.records[0], FMT_EV_LOCK, FMT_LOCK_LOCK), 42);
        }
        int sample = rec_add_sample(&r, (struct rec_sample){1000, 5, 1, stack, 0, 0});
        CHECK_EQ(r.sample_count, sample < 0 ? 0 : 1);
        int info = rec_add_info(&r, (struct rec_str){"pid", 3}, (struct rec_str){"42", 2});
        CHECK_EQ(r.info_count, info < 0 ? 0 : 1);
        struct rec_stat *st = rec_stat_slot(&r, (struct rec_str){"samples", 7});
        if (st) {
            st->value += 7;
            CHECK(rec_stat_slot(&r, (struct rec_str){"samples", 7}) == st); /* found, not made */
            CHECK_EQ(rec_stat(&r, "samples"), 7);
        }
        CHECK_EQ(r.stat_count, st ? 1 : 0);
        mem_fail_after(0, 0);
        rec_free(&r);
    }
}


/* The reader gives back the pages of the samples and stacks chunks once
 * they are decoded: a recording of many pages of them, loaded from a file
 * as the CLI loads it, keeps every sample, stack and string exact. */
static void test_big_chunks_released_intact(void)
{
    enum { FRAMES = 20, STACKS = 3000, SAMPLES = 60000 };
    struct buf b;
    buf_init(&b);
    struct writer w;
    struct writer_sink sink = {mem_sink, &b};
    REQUIRE(writer_begin(&w, sink) == 0);
    writer_event(&w, 1, "cpu", "ns", 1000);
    uint32_t mod = writer_string(&w, "App.dll", 7), type = writer_string(&w, "App.Type", 8);
    uint32_t frame[FRAMES], stack[STACKS], chain[32];
    for (uint32_t f = 0; f < FRAMES; f++) {
        char name[16];
        int n = snprintf(name, sizeof name, "M%u", f);
        frame[f] = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, writer_string(&w, name, (size_t)n), 0);
    }
    for (uint32_t i = 0; i < STACKS; i++) {
        uint32_t depth = 1 + i % 30;
        for (uint32_t d = 0; d < depth; d++)
            chain[d] = frame[(i * 7 + d) % FRAMES];
        stack[i] = writer_stack(&w, chain, depth);
    }
    writer_thread(&w, 1, 100, writer_string(&w, "main", 4));
    for (uint32_t i = 0; i < SAMPLES; i++)
        writer_sample(&w, 1, 1, (uint64_t)i * 1000, stack[(i * 13) % STACKS], 1 + i % 5);
    REQUIRE(writer_finish(&w, NULL, NULL, 0) == 0);
    writer_free(&w);
    REQUIRE(!b.failed);
    char path[] = "/tmp/corscope-unit-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, b.data, b.len) == (ssize_t)b.len);
    close(fd);
    buf_free(&b);
    struct recording r;
    char err[256];
    int rc = rec_load_file(path, &r, err, sizeof err);
    unlink(path);
    REQUIRE(rc == 0);
    CHECK(r.status == REC_COMPLETE);
    REQUIRE(r.sample_count == SAMPLES);
    size_t bad = 0;
    for (uint32_t i = 0; i < SAMPLES; i++) {
        const struct rec_sample *x = &r.samples[i];
        bad += x->time != (uint64_t)i * 1000 || x->weight != 1 + i % 5 || x->stack != stack[(i * 13) % STACKS];
    }
    CHECK(bad == 0);
    bad = 0;
    for (uint32_t i = 0; i < STACKS; i++) {
        const struct rec_stack *st = &r.stacks[stack[i]];
        bad += st->depth != 1 + i % 30;
        for (uint32_t d = 0; d < st->depth && d < 30; d++)
            bad += r.stack_frames[st->offset + d] != frame[(i * 7 + d) % FRAMES];
    }
    CHECK(bad == 0);
    CHECK(rec_str_eq(r.strings[type], "App.Type"));
    rec_free(&r);
}

void suite_format(void)
{
    RUN(test_big_chunks_released_intact);
    RUN(test_round_trip);
    RUN(test_recorded_events);
    RUN(test_building_a_recording);
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
