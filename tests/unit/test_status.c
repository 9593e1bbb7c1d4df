/*
 * Tests of status (cli/status.h): the status line's text.
 */

#include "cli/session.h"
#include "test.h"

static void test_status_text(void)
{
    char line[256];
    struct control_counts c = {1234, 5, 2, 3 * 1024 * 1024 + 100};
    status_format(line, sizeof line, 75500000000ull, &c, NULL);
    CHECK_STR(line, "corscope: 1:15  1234 samples  5 events  2 dropped  3.0 MiB");
    status_format(line, sizeof line, 3700ull * 1000000000ull, &c, "stopping");
    CHECK_STR(line, "corscope: 1:01:40  1234 samples  5 events  2 dropped  3.0 MiB  stopping");
}

void suite_status(void)
{
    RUN(test_status_text);
}
