/*
 * Tests of units: the duration, count and percent parsers that the CLI's
 * options and the agent's environment share.
 */
#include "common/units.h"
#include "common/utf.h"
#include "test.h"

static void test_durations(void)
{
    uint64_t ns = 0;
    const char *why = NULL;
    CHECK(units_parse_duration("10ms", 0, &ns, &why) == 0 && ns == 10000000);
    CHECK(units_parse_duration("1s", 0, &ns, &why) == 0 && ns == 1000000000);
    CHECK(units_parse_duration("250us", 0, &ns, &why) == 0 && ns == 250000);
    CHECK(units_parse_duration("1.5ms", 0, &ns, &why) == 0 && ns == 1500000);
    CHECK(units_parse_duration("5000000ns", 0, &ns, &why) == 0 && ns == 5000000);
    CHECK(units_parse_duration("2m", 0, &ns, &why) == 0 && ns == 120000000000ull);
    CHECK(units_parse_duration("7", 1000000, &ns, &why) == 0 && ns == 7000000);
    /* beyond a long long, within a uint64_t: was 2^63 */
    CHECK(units_parse_duration("10000000000s", 0, &ns, &why) == 0 &&
          ns == 10000000000000000000ull);
}

static void test_bad_durations(void)
{
    uint64_t ns = 42;
    const char *why = NULL;
    CHECK(units_parse_duration("10", 0, &ns, &why) < 0 && why);
    CHECK(units_parse_duration("", 0, &ns, &why) < 0);
    CHECK(units_parse_duration(NULL, 0, &ns, &why) < 0);
    CHECK(units_parse_duration("ms", 0, &ns, &why) < 0);
    CHECK(units_parse_duration("10 ms", 0, &ns, &why) < 0);
    CHECK(units_parse_duration("10xs", 0, &ns, &why) < 0);
    CHECK(units_parse_duration("-1ms", 0, &ns, &why) < 0);
    CHECK(units_parse_duration(".", 0, &ns, &why) < 0);
    CHECK(units_parse_duration("99999999999999999999s", 0, &ns, &why) < 0);
    CHECK_EQ(ns, 42); /* untouched on error */
}

static void test_counts_and_percents(void)
{
    uint64_t v = 0;
    const char *why = NULL;
    CHECK(units_parse_count("4096", 65536, &v, &why) == 0 && v == 4096);
    CHECK(units_parse_count("65537", 65536, &v, &why) < 0);
    CHECK(units_parse_count("12a", 100, &v, &why) < 0);
    CHECK(units_parse_count("-1", 100, &v, &why) < 0);
    CHECK(units_parse_count("99999999999999999999999", UINT64_MAX, &v, &why) < 0);
    double p = 0;
    CHECK(units_parse_percent("0.5%", &p, &why) == 0 && p == 0.5);
    CHECK(units_parse_percent("2", &p, &why) == 0 && p == 2);
    CHECK(units_parse_percent("101%", &p, &why) < 0);
    CHECK(units_parse_percent("x%", &p, &why) < 0);
}

static void test_format_duration(void)
{
    char s[32];
    units_format_duration(10000000, s, sizeof s);
    CHECK_STR(s, "10ms");
    units_format_duration(1000000000, s, sizeof s);
    CHECK_STR(s, "1s");
    units_format_duration(1500000, s, sizeof s);
    CHECK_STR(s, "1.5ms");
    units_format_duration(250000, s, sizeof s);
    CHECK_STR(s, "250us");
}

void suite_units(void)
{
    RUN(test_durations);
    RUN(test_bad_durations);
    RUN(test_counts_and_percents);
    RUN(test_format_duration);
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
    RUN(test_utf16_to_utf8);
}
