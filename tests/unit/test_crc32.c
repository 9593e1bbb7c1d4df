/*
 * Tests of crc32 (common/crc32.h): known values.
 */

#include "common/crc32.h"
#include "test.h"

static void test_crc32_known_values(void)
{
    /* the standard check value of CRC-32/ISO-HDLC */
    CHECK_EQ(crc32_update(0, "123456789", 9), 0xCBF43926u);
    CHECK_EQ(crc32_update(0, "", 0), 0);
    uint32_t part = crc32_update(0, "12345", 5);
    CHECK_EQ(crc32_update(part, "6789", 4), 0xCBF43926u);
}

void suite_crc32(void)
{
    RUN(test_crc32_known_values);
}
