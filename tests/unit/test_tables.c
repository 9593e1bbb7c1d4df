/*
 * Tests of map64 and strtab, the tables every cache and every deduplication
 * in corscope rests on.
 */
#include <stdlib.h>

#include "common/map.h"
#include "common/mem.h"
#include "common/strtab.h"
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

static void test_strtab_interns(void)
{
    struct strtab t;
    REQUIRE(strtab_init(&t) == 0);
    int is_new;
    uint32_t a = strtab_intern(&t, "Main", 4, &is_new);
    CHECK(is_new && a == 1);
    uint32_t b = strtab_intern(&t, "Mainly", 4, &is_new); /* same 4 bytes */
    CHECK(!is_new && b == a);
    uint32_t c = strtab_intern(&t, "Work", 4, &is_new);
    CHECK(is_new && c == 2);
    CHECK_EQ(strtab_intern(&t, "", 0, &is_new), 0);
    CHECK_STR(t.strs[c], "Work");
    CHECK_EQ(strtab_find(&t, "Work", 4), c);
    CHECK_EQ(strtab_find(&t, "Nope", 4), UINT32_MAX);
    char key[32];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(key, sizeof key, "k%d", i);
        REQUIRE(strtab_intern(&t, key, (size_t)n, &is_new) == (uint32_t)(3 + i));
    }
    CHECK_EQ(strtab_find(&t, "k9999", 5), 3 + 9999);
    strtab_free(&t);
}

static void test_strtab_allocation_failures(void)
{
    for (long n = 1; n < 50; n++) {
        struct strtab t;
        mem_fail_after(n, 0);
        int ok = strtab_init(&t) == 0;
        int is_new;
        uint32_t id = ok ? strtab_intern(&t, "x", 1, &is_new) : 0;
        mem_fail_after(0, 0);
        if (ok) {
            CHECK(id == 1 || id == UINT32_MAX);
            if (id == UINT32_MAX) /* a failed intern leaves nothing behind */
                CHECK_EQ(strtab_find(&t, "x", 1), UINT32_MAX);
            strtab_free(&t);
        }
    }
}

void suite_tables(void)
{
    RUN(test_map_put_get_remove);
    RUN(test_map_random_against_array);
    RUN(test_map_out_of_memory);
    RUN(test_strtab_interns);
    RUN(test_strtab_allocation_failures);
}
