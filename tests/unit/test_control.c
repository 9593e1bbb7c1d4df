/*
 * Tests of the control line's messages (common/control.h): the counts'
 * text form and the socket addresses.
 */

#include "agent/control_client.h"
#include "test.h"

static void test_control_messages(void)
{
    struct control_msg m;
    char buf[CONTROL_MESSAGE_MAX];
    struct control_counts c = {12, 3, 4, 123456789012ull};
    int n = control_format_counts(buf, sizeof buf, CONTROL_STATUS, &c);
    REQUIRE(n > 0);
    REQUIRE(control_parse(buf, (size_t)n, &m) == 0);
    CHECK_EQ(m.kind, CONTROL_STATUS);
    CHECK_EQ(m.counts.samples, 12);
    CHECK_EQ(m.counts.bytes, 123456789012ull);
    n = control_format_counts(buf, sizeof buf, CONTROL_CLOSED, &c);
    CHECK(control_parse(buf, (size_t)n, &m) == 0 && m.kind == CONTROL_CLOSED);
    CHECK(control_parse("hello 42", 8, &m) == 0 && m.kind == CONTROL_HELLO && m.pid == 42);
    CHECK(control_parse("log cannot do x", 15, &m) == 0 && m.kind == CONTROL_LOG);
    CHECK(!strcmp(m.text, "cannot do x"));
    CHECK(control_parse("stop", 4, &m) == 0 && m.kind == CONTROL_STOP);
    CHECK(control_parse("detached", 8, &m) == 0 && m.kind == CONTROL_DETACHED);
    CHECK(control_parse("dormant why", 11, &m) == 0 && m.kind == CONTROL_DORMANT);
    /* watch's messages carry their text whole */
    static const char call[] = "call 42 100 800 Pricing.Quote(sku=\"a b\", qty=4) = 9.00";
    CHECK(control_parse(call, strlen(call), &m) == 0 && m.kind == CONTROL_CALL);
    CHECK(!strcmp(m.text, call + 5));
    CHECK(control_parse("watch end 1 2 3 4 5 6 7 8", 25, &m) == 0 && m.kind == CONTROL_WATCH);
    CHECK(!strcmp(m.text, "end 1 2 3 4 5 6 7 8"));
    static const char *const bad[] = {"", "stop now", "status 1 2 3", "status 1 2 3 x",
                                      "status 1  2 3 4", "hello", "hello -1", "whatever"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(control_parse(bad[i], strlen(bad[i]), &m) == -1 && m.kind == CONTROL_UNKNOWN);
    CHECK(control_parse("stop\0x", 6, &m) == -1);
    struct sockaddr_un sa;
    socklen_t len;
    CHECK(control_sockaddr("@abc", &sa, &len) == 0 && sa.sun_path[0] == 0 &&
          !memcmp(sa.sun_path + 1, "abc", 3));
    CHECK(control_sockaddr("/tmp/x", &sa, &len) == -1);
    CHECK(control_sockaddr("@", &sa, &len) == -1);
}

void suite_control(void)
{
    RUN(test_control_messages);
}
