/*
 * Tests of strtab (common/strtab.h), the string interning of the writer and
 * the agent's names.
 */

#include "common/mem.h"
#include "common/strtab.h"
#include "test.h"

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

void suite_strtab(void)
{
    RUN(test_strtab_interns);
    RUN(test_strtab_allocation_failures);
}
