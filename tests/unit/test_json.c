/*
 * Tests of json (cli/json.h): strings escaped as JSON wants them.
 */
#include <stdlib.h>

#include "cli/json.h"
#include "test.h"

static void test_json_strings(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    REQUIRE(f);
    json_string(f, "a\"b\\c\n\t\x01</script>");
    fputc(' ', f);
    json_string(f, "caf\xc3\xa9 \xff\xfe ok \xe2\x82"); /* valid, invalid, cut short */
    fclose(f);
    CHECK_STR(text, "\"a\\\"b\\\\c\\n\\t\\u0001\\u003c/script>\" "
                    "\"caf\xc3\xa9 \\ufffd\\ufffd ok \\ufffd\\ufffd\"");
    free(text);
}

void suite_json(void)
{
    RUN(test_json_strings);
}
