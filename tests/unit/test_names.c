/*
 * Tests of names (agent/names.h): the pure helpers of method naming, the
 * generic arity of a metadata name and the joining of nested types.
 */

#include "agent/codemap.h"
#include "test.h"

static void test_generic_arity(void)
{
    const uint8_t plain[] = {0x00, 0x00, 0x01};         /* default, 0 params, void */
    const uint8_t generic2[] = {0x10, 0x02, 0x01, 0x01}; /* GENERIC, 2 type params */
    const uint8_t generic_big[] = {0x30, 0x81, 0x02};    /* HASTHIS|GENERIC, 258 */
    const uint8_t cut[] = {0x10, 0x81};                  /* compressed int cut short */
    CHECK_EQ(names_generic_arity(plain, sizeof plain), 0);
    CHECK_EQ(names_generic_arity(generic2, sizeof generic2), 2);
    CHECK_EQ(names_generic_arity(generic_big, sizeof generic_big), 258);
    CHECK_EQ(names_generic_arity(cut, sizeof cut), 0);
    CHECK_EQ(names_generic_arity(generic2, 1), 0);
}

static void test_join_nested(void)
{
    const char *chain[] = {"Demo.Outer", "Middle", "Inner`1"};
    char out[64];
    names_join_nested(chain, 3, out, sizeof out);
    CHECK_STR(out, "Demo.Outer+Middle+Inner`1");
    names_join_nested(chain, 1, out, sizeof out);
    CHECK_STR(out, "Demo.Outer");
    names_join_nested(chain, 3, out, 8);
    CHECK_STR(out, "Demo.Ou");
}

void suite_names(void)
{
    RUN(test_generic_arity);
    RUN(test_join_nested);
}
