/*
 * Tests of the recording's syntax (format/chunk.h), which both readers
 * stand on: the whole-file reader (format/recording.c) and the push
 * stream's (cli/pstream.c) read the same bytes alike -- the same events,
 * the same samples and records, the same chunk found bad; a chunk of an
 * unknown tag is skipped by both, whatever its record count (docs/
 * format.md; the whole-file reader used to call one with records corrupt);
 * framing: partial at every cut, a wrong checksum, a length past the limit.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/pstream.h"
#include "common/buf.h"
#include "common/crc32.h"
#include "fixture.h"
#include "format/chunk.h"
#include "format/recording.h"
#include "format/writer.h"
#include "test.h"

/* A finished stream of the push fixture: samples, alloc records. */
static void stream(struct buf *out)
{
    struct fixture_stream r;
    fixture_stream_begin(&r);
    for (uint64_t t = 0; t < 30; t++) {
        writer_sample(&r.w, FMT_EVENT_CPU, 1, t * 100000000ull, t & 1 ? r.stack_a : r.stack_b,
                      1000 + t);
        uint64_t values[] = {64 * (t + 1), 1}, fields[] = {0};
        writer_record(&r.w, r.alloc, 1, t * 100000000ull + 5, r.stack_a, values, 2, fields, 1);
    }
    writer_finish(&r.w, NULL, NULL, 0);
    writer_free(&r.w);
    *out = r.out;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Appends a chunk (its header and checksum made here). */
static void put_chunk(struct buf *b, uint32_t tag, uint32_t records, const uint8_t *payload,
                      uint32_t len)
{
    uint8_t h[16];
    put32(h, tag);
    put32(h + 4, len);
    put32(h + 8, records);
    put32(h + 12, crc32_update(crc32_update(0, h, 12), payload, len));
    buf_put(b, h, sizeof h);
    buf_put(b, payload, len);
}

static void test_chunk_both_readers_agree(void)
{
    struct buf b;
    stream(&b);
    REQUIRE(!b.failed);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_COMPLETE);
    struct pstream s;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    REQUIRE(fixture_stream_feed(&s, &b, 7) == 0);
    CHECK(s.ended);
    CHECK(!s.failed);
    CHECK_EQ(s.chunks, r.chunks + 1); /* the stream counts its trailer too */
    REQUIRE(s.event_count == r.event_count);
    for (size_t i = 0; i < r.event_count; i++) {
        CHECK(rec_str_eq(r.events[i].name, s.events[i].name));
        CHECK(rec_str_eq(r.events[i].unit, s.events[i].unit));
        CHECK_EQ(r.events[i].id, s.events[i].id);
        CHECK_EQ(r.events[i].recorded, s.events[i].recorded);
        CHECK_EQ(r.events[i].period, s.events[i].period);
        CHECK_EQ(r.events[i].value_count, s.events[i].value_count);
        CHECK_EQ(r.events[i].field_count, s.events[i].field_count);
        for (uint32_t k = 0; k < r.events[i].field_count; k++) {
            CHECK(rec_str_eq(r.events[i].field_names[k], s.events[i].field_names[k]));
            CHECK_EQ(r.events[i].field_types[k], s.events[i].field_types[k]);
        }
    }
    CHECK_EQ(s.items, 60);
    CHECK_EQ(r.record_count, 30);
    CHECK_EQ(r.sample_count, 60); /* the records have a stack */
    CHECK_EQ(s.info_count, r.info_count);
    rec_free(&r);
    pstream_free(&s);

    /* a record of an event never defined: both stop at the same chunk */
    size_t at = FMT_HEADER_SIZE, bad_at = 0;
    for (uint64_t n = 0; at < b.len; n++) {
        struct chunk ch;
        REQUIRE(chunk_frame(b.data + at, b.len - at, n, &ch, err, sizeof err) == CHUNK_WHOLE);
        if (ch.tag == FMT_TAG_RECORDS && !bad_at) {
            /* payload: base time, then event id: make it 99 and fix the checksum */
            const uint8_t *p = ch.payload;
            size_t skip = 0;
            while (p[skip] & 0x80)
                skip++;
            REQUIRE(p[skip + 1] < 0x80);
            b.data[at + FMT_CHUNK_HEADER_SIZE + skip + 1] = 99;
            put32(b.data + at + 12, crc32_update(crc32_update(0, b.data + at, 12),
                                                 ch.payload, ch.len));
            bad_at = at;
        }
        at += FMT_CHUNK_HEADER_SIZE + ch.len;
    }
    REQUIRE(bad_at);
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_CORRUPT);
    CHECK_EQ(r.problem_offset, bad_at);
    CHECK(strstr(r.problem, "record of an undefined event") != NULL);
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    CHECK(fixture_stream_feed(&s, &b, 64) < 0);
    CHECK(strstr(s.problem, "record of an undefined event") != NULL);
    char where[32];
    snprintf(where, sizeof where, "chunk %llu:", (unsigned long long)r.chunks + 1);
    CHECK(strstr(s.problem, where) == s.problem);
    rec_free(&r);
    pstream_free(&s);
    buf_free(&b);
}

static void test_chunk_unknown_tag_skipped(void)
{
    struct buf b;
    stream(&b);
    /* the stream again, with a chunk of a tag no reader knows (3 records)
     * before the trailer, whose chunk count grows by one */
    size_t at = FMT_HEADER_SIZE, trailer = 0;
    char err[256];
    for (uint64_t n = 0; at < b.len; n++) {
        struct chunk ch;
        REQUIRE(chunk_frame(b.data + at, b.len - at, n, &ch, err, sizeof err) == CHUNK_WHOLE);
        if (ch.tag == FMT_TAG_TRAILER)
            trailer = at;
        at += FMT_CHUNK_HEADER_SIZE + ch.len;
    }
    REQUIRE(trailer);
    struct chunk tr;
    REQUIRE(chunk_frame(b.data + trailer, b.len - trailer, 0, &tr, err, sizeof err) == CHUNK_WHOLE);
    REQUIRE(tr.payload[0] < 0x7f);
    struct buf x;
    buf_init(&x);
    buf_put(&x, b.data, trailer);
    static const uint8_t news[] = {1, 2, 3, 4, 5};
    put_chunk(&x, FMT_TAG('N', 'E', 'W', 'S'), 3, news, sizeof news);
    uint8_t *payload = malloc(tr.len);
    REQUIRE(payload);
    memcpy(payload, tr.payload, tr.len);
    payload[0]++;
    put_chunk(&x, FMT_TAG_TRAILER, tr.records, payload, tr.len);
    free(payload);
    REQUIRE(!x.failed);

    struct recording r;
    REQUIRE(rec_load_memory(x.data, x.len, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_COMPLETE);
    CHECK_EQ(r.record_count, 30);
    rec_free(&r);
    struct pstream s;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    CHECK(fixture_stream_feed(&s, &x, 5) == 0);
    CHECK(s.ended);
    CHECK_EQ(s.items, 60);
    pstream_free(&s);
    buf_free(&x);
    buf_free(&b);
}

static void test_chunk_framing(void)
{
    struct buf b;
    stream(&b);
    const uint8_t *first = b.data + FMT_HEADER_SIZE;
    size_t left = b.len - FMT_HEADER_SIZE;
    struct chunk ch;
    char why[200];
    REQUIRE(chunk_frame(first, left, 0, &ch, why, sizeof why) == CHUNK_WHOLE);
    CHECK_EQ(ch.tag, FMT_TAG_INFO);
    /* every cut of the first chunk is partial, and says where */
    for (size_t cut = 0; cut < FMT_CHUNK_HEADER_SIZE + ch.len; cut++) {
        if (chunk_frame(first, cut, 0, &ch, why, sizeof why) != CHUNK_PARTIAL) {
            test_fail(__FILE__, __LINE__, "a cut chunk was not partial");
            break;
        }
    }
    CHECK(strstr(why, "the file ends inside chunk 1 ('INFO')") != NULL);
    uint8_t *copy = malloc(left);
    REQUIRE(copy);
    memcpy(copy, first, left);
    copy[FMT_CHUNK_HEADER_SIZE] ^= 1;
    CHECK(chunk_frame(copy, left, 4, &ch, why, sizeof why) == CHUNK_BAD);
    CHECK(strstr(why, "chunk 5 ('INFO') fails its checksum") != NULL);
    memcpy(copy, first, left);
    put32(copy + 4, FMT_MAX_CHUNK_PAYLOAD + 1);
    CHECK(chunk_frame(copy, FMT_CHUNK_HEADER_SIZE, 0, &ch, why, sizeof why) == CHUNK_BAD);
    CHECK(strstr(why, "more than allowed") != NULL);
    free(copy);
    buf_free(&b);
}

void suite_chunk(void)
{
    RUN(test_chunk_both_readers_agree);
    RUN(test_chunk_unknown_tag_skipped);
    RUN(test_chunk_framing);
}
