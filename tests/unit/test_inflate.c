/*
 * Tests of inflate (common/inflate): raw deflate from zlib's own compressor
 * at every level, cut short, with too little room, and a reserved block
 * type.
 */
#include <stdlib.h>
#include <zlib.h>

#include "common/inflate.h"
#include "test.h"

static void test_inflate_against_zlib(void)
{
    size_t n = 200000;
    uint8_t *in = malloc(n), *z = malloc(n + 1024), *out = malloc(n);
    REQUIRE(in && z && out);
    /* text-like and random stretches: stored, fixed and dynamic blocks */
    uint32_t seed = 12345;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        in[i] = i % 3000 < 2000 ? (uint8_t)("corscope covers "[i % 16]) : (uint8_t)(seed >> 16);
    }
    for (int level = 0; level <= 9; level++) {
        z_stream s;
        memset(&s, 0, sizeof s);
        REQUIRE(deflateInit2(&s, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        s.next_in = in;
        s.avail_in = (uInt)n;
        s.next_out = z;
        s.avail_out = (uInt)(n + 1024);
        REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
        size_t zlen = s.total_out;
        deflateEnd(&s);
        size_t produced = 0;
        const char *why = NULL;
        CHECK(inflate_raw(z, zlen, out, n, &produced, &why) == 0);
        CHECK_EQ(produced, n);
        CHECK(!memcmp(in, out, n));
        /* cut short, or with too little room: refused */
        CHECK(inflate_raw(z, zlen / 2, out, n, &produced, &why) < 0);
        CHECK(why != NULL);
        CHECK(inflate_raw(z, zlen, out, n / 2, &produced, &why) < 0);
        CHECK(produced <= n / 2);
    }
    /* a reserved block type */
    uint8_t bad[] = {0x07};
    size_t produced;
    CHECK(inflate_raw(bad, 1, out, n, &produced, NULL) < 0);
    free(in);
    free(z);
    free(out);
}

void suite_inflate(void)
{
    RUN(test_inflate_against_zlib);
}
