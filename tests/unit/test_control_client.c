/*
 * Tests of the control line end to end: the agent's end (agent/control_client.h)
 * connected to the command's (cli/session.h), counts sent, stop asked.
 */
#include <signal.h>

#include "agent/control_client.h"
#include "cli/session.h"
#include "test.h"

/* The control line end to end: the agent's side connects, says hello and
 * how far it got, hears "stop", and corscope hears it hang up. */
static void test_control_line(void)
{
    struct session s;
    char err[256];
    REQUIRE(session_open(&s, getpid(), err, sizeof err) == 0);
    REQUIRE(control_client_connect(s.address) == 0);
    struct control_counts c = {7, 1, 0, 4096};
    control_client_send_counts(CONTROL_STATUS, &c);
    REQUIRE(session_accept_agent(&s, 2000) == 0);
    CHECK(s.peers[0].hello);
    CHECK_EQ(s.peers[0].pid, getpid());
    CHECK_EQ(s.peers[0].counts.samples, 7);
    CHECK(!control_client_stop_wanted());
    CHECK(send(s.peers[0].fd, "stop", 4, 0) == 4);
    usleep(10000);
    CHECK(control_client_stop_wanted());
    control_client_close();
    CHECK_EQ(session_print_pending(&s, 500), 0);
    CHECK_EQ(s.peers[0].fd, -1); /* it saw the end */
    session_close(&s);

    /* corscope gone: the agent stops */
    REQUIRE(session_open(&s, getpid(), err, sizeof err) == 0);
    REQUIRE(control_client_connect(s.address) == 0);
    session_close(&s);
    CHECK(control_client_stop_wanted());
    control_client_close();

    /* another process may not take the line of an attach */
    REQUIRE(session_open(&s, getpid() + 1, err, sizeof err) == 0);
    REQUIRE(control_client_connect(s.address) == 0);
    CHECK(session_accept_agent(&s, 200) == -1);
    CHECK_EQ(s.peer_count, 0);
    control_client_close();
    session_close(&s);
}

void suite_control_client(void)
{
    RUN(test_control_line);
}
