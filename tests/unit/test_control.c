/*
 * Tests of the control line's messages (common/control.h): the counts'
 * text form, the socket addresses, and the recording's file passed open
 * (SCM_RIGHTS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

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

static void test_recording_passed_open(void)
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    char path[] = "/tmp/corscope-unit-fd-XXXXXX";
    int file = mkstemp(path);
    REQUIRE(file >= 0);
    unlink(path); /* the agent never needs the path */
    REQUIRE(control_send_fd(sv[0], CONTROL_RECORDING, file) == 0);
    struct control_msg m;
    int got = -1;
    REQUIRE(control_recv_fd(sv[1], 1000, &m, &got) == 0);
    CHECK_EQ(m.kind, CONTROL_RECORDING);
    REQUIRE(got >= 0 && got != file);
    CHECK((fcntl(got, F_GETFD) & FD_CLOEXEC) != 0);
    /* the same open file: what one writes, the other's offset sees */
    CHECK(write(got, "trailer", 7) == 7);
    CHECK_EQ(lseek(file, 0, SEEK_CUR), 7);
    close(got);

    /* a message without a descriptor, and a timeout */
    CHECK(send(sv[0], "stop", 4, 0) == 4);
    REQUIRE(control_recv_fd(sv[1], 1000, &m, &got) == 0);
    CHECK_EQ(m.kind, CONTROL_STOP);
    CHECK_EQ(got, -1);
    errno = 0;
    CHECK(control_recv_fd(sv[1], 10, &m, &got) < 0 && errno == ETIMEDOUT);
    /* the other end gone */
    close(sv[0]);
    CHECK(control_recv_fd(sv[1], 1000, &m, &got) < 0 && errno == ECONNRESET);
    close(sv[1]);
    close(file);
    /* "recording" takes no argument */
    CHECK(control_parse("recording x", 11, &m) < 0);
    CHECK(control_parse("recording", 9, &m) == 0 && m.kind == CONTROL_RECORDING);
}

void suite_control(void)
{
    RUN(test_control_messages);
    RUN(test_recording_passed_open);
}
