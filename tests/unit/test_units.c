/*
 * Tests of units (common/units.h): the duration, size, count and percent
 * parsers that the CLI's options and the agent's environment share.
 */

#include "common/units.h"
#include "test.h"

static void test_sizes(void)
{
    uint64_t v = 0;
    const char *why = NULL;
    CHECK(units_parse_size("100000", UINT64_MAX, &v, &why) == 0 && v == 100000);
    CHECK(units_parse_size("100KiB", UINT64_MAX, &v, &why) == 0 && v == 102400);
    CHECK(units_parse_size("4MB", UINT64_MAX, &v, &why) == 0 && v == 4u << 20);
    CHECK(units_parse_size("1G", UINT64_MAX, &v, &why) == 0 && v == 1u << 30);
    CHECK(units_parse_size("12B", UINT64_MAX, &v, &why) == 0 && v == 12);
    CHECK(units_parse_size("1.5MiB", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("KiB", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("10kb", UINT64_MAX, &v, &why) < 0);
    CHECK_STR(why, "unknown unit (use B, KiB, MiB, GiB)");
    CHECK(units_parse_size("99999999999999999999", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("20000000000GiB", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("2GiB", 1u << 30, &v, &why) < 0);
}

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
    RUN(test_sizes);
}
