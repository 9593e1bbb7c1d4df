/*
 * Tests of map64 (common/map.h), the hash table every cache and every
 * deduplication in corscope rests on.
 */
#include <stdlib.h>

#include "common/map.h"
#include "common/mem.h"
#include "test.h"

static void test_map_put_get_remove(void)
{
    struct map64 m;
    map64_init(&m);
    uint32_t v = 7;
    CHECK(!map64_get(&m, 1, &v));
    CHECK(!map64_remove(&m, 1));
    for (uint64_t k = 0; k < 5000; k++)
        REQUIRE(map64_put(&m, k * 0x10000, (uint32_t)k) == 0);
    CHECK_EQ(m.count, 5000);
    CHECK(map64_put(&m, 0, 99) == 0); /* replace */
    CHECK(map64_get(&m, 0, &v) && v == 99);
    CHECK_EQ(m.count, 5000);
    /* remove every third key; the rest stay findable across the holes */
    for (uint64_t k = 0; k < 5000; k += 3)
        CHECK(map64_remove(&m, k * 0x10000));
    for (uint64_t k = 1; k < 5000; k++) {
        int present = map64_get(&m, k * 0x10000, &v);
        if (k % 3 == 0)
            CHECK(!present);
        else
            CHECK(present && v == k);
    }
    map64_clear(&m);
    CHECK(!map64_get(&m, 0x10000, &v));
    map64_free(&m);
}

static void test_map_random_against_array(void)
{
    /* a map kept in step with a plain array through random puts/removes */
    enum { KEYS = 512 };
    uint32_t truth[KEYS];
    int present[KEYS] = {0};
    struct map64 m;
    map64_init(&m);
    srand(1);
    for (int step = 0; step < 100000; step++) {
        int k = rand() % KEYS;
        if (rand() % 3) {
            truth[k] = (uint32_t)step;
            present[k] = 1;
            REQUIRE(map64_put(&m, (uint64_t)k * 977, truth[k]) == 0);
        } else {
            CHECK(map64_remove(&m, (uint64_t)k * 977) == present[k]);
            present[k] = 0;
        }
    }
    for (int k = 0; k < KEYS; k++) {
        uint32_t v;
        int got = map64_get(&m, (uint64_t)k * 977, &v);
        CHECK(got == present[k]);
        if (got)
            CHECK(v == truth[k]);
    }
    map64_free(&m);
}

static void test_map_out_of_memory(void)
{
    struct map64 m;
    map64_init(&m);
    mem_fail_after(1, 1);
    CHECK(map64_put(&m, 1, 1) < 0);
    mem_fail_after(0, 0);
    uint32_t v;
    CHECK(!map64_get(&m, 1, &v));
    map64_free(&m);
}

void suite_map(void)
{
    RUN(test_map_put_get_remove);
    RUN(test_map_random_against_array);
    RUN(test_map_out_of_memory);
}
