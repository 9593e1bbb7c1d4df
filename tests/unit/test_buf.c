/*
 * Tests of buf (common/buf.h): varints, cursors and fixed-width fields, the
 * primitives every recording is made of.
 */

#include "agent/codemap.h"
#include "common/mem.h"
#include "test.h"

static void test_varint_round_trip(void)
{
    static const uint64_t values[] = {0, 1, 127, 128, 300, 16383, 16384, 1ull << 32,
                                      UINT64_MAX - 1, UINT64_MAX};
    struct buf b;
    buf_init(&b);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        buf_put_varint(&b, values[i]);
    buf_put_svarint(&b, -1);
    buf_put_svarint(&b, INT64_MIN);
    REQUIRE(!b.failed);
    struct cur c;
    cur_init(&c, b.data, b.len);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        CHECK_EQ(cur_varint(&c), values[i]);
    CHECK(cur_svarint(&c) == -1);
    CHECK(cur_svarint(&c) == INT64_MIN);
    CHECK(c.err == NULL);
    CHECK_EQ(cur_left(&c), 0);
    buf_free(&b);
}

static void test_varint_sizes(void)
{
    uint8_t out[10];
    CHECK_EQ(varint_encode(127, out), 1);
    CHECK_EQ(varint_encode(128, out), 2);
    CHECK_EQ(varint_encode(UINT64_MAX, out), 10);
}

static void test_cursor_rejects_overlong_and_truncated(void)
{
    /* eleven continuation bytes: longer than any 64-bit varint */
    uint8_t overlong[11];
    memset(overlong, 0x80, sizeof overlong);
    struct cur c;
    cur_init(&c, overlong, sizeof overlong);
    cur_varint(&c);
    CHECK(c.err != NULL);

    /* 10th byte may only carry the top bit */
    uint8_t overflow[10];
    memset(overflow, 0xff, 9);
    overflow[9] = 0x02;
    cur_init(&c, overflow, sizeof overflow);
    cur_varint(&c);
    CHECK(c.err != NULL);

    uint8_t cut[] = {0x80, 0x80};
    cur_init(&c, cut, sizeof cut);
    CHECK_EQ(cur_varint(&c), 0);
    CHECK(c.err != NULL);

    /* a string whose length runs past the end */
    uint8_t str[] = {5, 'a', 'b'};
    size_t n = 99;
    cur_init(&c, str, sizeof str);
    CHECK(cur_bytes(&c, &n) == NULL);
    CHECK_EQ(n, 0);
    CHECK(c.err != NULL);

    /* after an error every read returns 0 and does not move */
    uint8_t ok[] = {1, 2, 3, 4};
    cur_init(&c, ok, 1);
    cur_u32le(&c);
    CHECK(c.err != NULL);
    CHECK_EQ(cur_u8(&c), 0);
}

static void test_fixed_width_little_endian(void)
{
    struct buf b;
    buf_init(&b);
    buf_put_u16le(&b, 0x0102);
    buf_put_u32le(&b, 0x01020304);
    buf_put_u64le(&b, 0x0102030405060708ull);
    REQUIRE(b.len == 14);
    CHECK(b.data[0] == 0x02 && b.data[2] == 0x04 && b.data[6] == 0x08);
    struct cur c;
    cur_init(&c, b.data, b.len);
    CHECK_EQ(cur_u16le(&c), 0x0102);
    CHECK_EQ(cur_u32le(&c), 0x01020304);
    CHECK_EQ(cur_u64le(&c), 0x0102030405060708ull);
    buf_free(&b);
}

static void test_buf_allocation_failure_latches(void)
{
    struct buf b;
    buf_init(&b);
    mem_fail_after(1, 0);
    buf_put_u8(&b, 1);
    CHECK(b.failed);
    buf_put_u8(&b, 2); /* dropped: failed latches until reset */
    CHECK_EQ(b.len, 0);
    buf_reset(&b);
    buf_put_u8(&b, 3);
    CHECK(!b.failed);
    CHECK_EQ(b.len, 1);
    buf_free(&b);
}

void suite_buf(void)
{
    RUN(test_varint_round_trip);
    RUN(test_varint_sizes);
    RUN(test_cursor_rejects_overlong_and_truncated);
    RUN(test_fixed_width_little_endian);
    RUN(test_buf_allocation_failure_latches);
}
