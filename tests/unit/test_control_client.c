/*
 * Tests of the control line end to end: the agent's end (agent/control_client.h)
 * connected to the command's (cli/session.h), counts sent, stop asked; told
 * "alone" (issue 20.2) and a connect to a full backlog (issue 20.5).
 */
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/control_client.h"
#include "cli/session.h"
#include "common/control.h"
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

/* ---- issue 20.2 and 20.5: told "alone"; a connect with a time-out --------- */

/* The agent's side: told "alone", it stops talking and takes the hang-up
 * that follows for no stop (before, every hang-up was a stop). */
static void test_agent_told_alone(void)
{
    struct session s;
    char err[256];
    REQUIRE(session_open(&s, getpid(), err, sizeof err) == 0);
    REQUIRE(control_client_connect(s.address) == 0);
    REQUIRE(session_accept_agent(&s, 2000) == 0);
    CHECK(send(s.peers[0].fd, "alone", 5, 0) == 5);
    session_close(&s);
    usleep(10000);
    CHECK(!control_client_stop_wanted());
    CHECK(!control_client_connected());
    CHECK(!control_client_stop_wanted());
    control_client_close();
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* The agent's connect when record's backlog is full (another user filling
 * it, or record held up): bounded, so Initialize and InitializeForAttach go
 * on.  Before, it waited as long as the backlog stayed full (an alarm
 * after 5 s ends the wait here). */
static void test_agent_connect_bounded(void)
{
    char address[64];
    snprintf(address, sizeof address, "@corscope-unit-%d-full", (int)getpid());
    struct sockaddr_un sa;
    socklen_t len;
    REQUIRE(control_sockaddr(address, &sa, &len) == 0);
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    REQUIRE(listener >= 0 && bind(listener, (struct sockaddr *)&sa, len) == 0 &&
            listen(listener, 0) == 0);
    int fillers[16], filled = 0;
    for (; filled < 16; filled++) {
        fillers[filled] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (connect(fillers[filled], (struct sockaddr *)&sa, len) < 0) {
            close(fillers[filled]);
            break;
        }
    }
    REQUIRE(filled < 16); /* the backlog is full */
    struct sigaction sa_alarm, saved;
    memset(&sa_alarm, 0, sizeof sa_alarm);
    sa_alarm.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa_alarm, &saved);
    alarm(5);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = control_client_connect(address);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    alarm(0);
    sigaction(SIGALRM, &saved, NULL);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    CHECK_EQ(r, -1);
    CHECK(ms < CONTROL_CLIENT_CONNECT_TIMEOUT_MS + 1500);
    if (r == 0)
        control_client_close();
    for (int i = 0; i < filled; i++)
        close(fillers[i]);
    close(listener);
}

void suite_control_client(void)
{
    RUN(test_control_line);
    RUN(test_agent_told_alone);
    RUN(test_agent_connect_bounded);
}
