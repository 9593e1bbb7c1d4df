/*
 * Tests of utf (common/utf.h): UTF-16 to UTF-8 and back, with bad and
 * cut input.
 */

#include "common/utf.h"
#include "test.h"

static void test_utf8_to_utf16(void)
{
    uint16_t out[8];
    CHECK(utf8_to_utf16("a\xc3\xa9\xf0\x9f\x98\x80", out, 8) == 4);
    CHECK(out[0] == 'a' && out[1] == 0xe9 && out[2] == 0xd83d && out[3] == 0xde00 && !out[4]);
    CHECK(utf8_to_utf16("\xc0\x80", out, 8) == -1);     /* overlong */
    CHECK(utf8_to_utf16("\xed\xa0\x80", out, 8) == -1); /* a surrogate */
    CHECK(utf8_to_utf16("abcdefgh", out, 8) == -1);     /* no room for the NUL */
    CHECK(utf8_to_utf16("\xe2\x82", out, 8) == -1);     /* cut short */
}

static void test_utf16_to_utf8(void)
{
    char out[32];
    const uint16_t ascii[] = {'M', 'a', 'i', 'n', 0};
    CHECK_EQ(utf16_to_utf8(ascii, 10, out, sizeof out), 4);
    CHECK_STR(out, "Main");
    const uint16_t mixed[] = {0x00E9, 0x4E2D, 0xD83D, 0xDE00, 0};
    utf16_to_utf8(mixed, 4, out, sizeof out);
    CHECK_STR(out, "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
    const uint16_t lone[] = {0xD800, 'x'};
    utf16_to_utf8(lone, 2, out, sizeof out);
    CHECK_STR(out, "\xEF\xBF\xBDx");
    /* never splits a character when the output is short */
    char small[3];
    CHECK_EQ(utf16_to_utf8(mixed, 4, small, sizeof small), 2);
    CHECK_STR(small, "\xC3\xA9");
}

void suite_utf(void)
{
    RUN(test_utf8_to_utf16);
    RUN(test_utf16_to_utf8);
}
