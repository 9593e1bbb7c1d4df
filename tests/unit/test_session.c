/*
 * Tests of session (cli/session.h): record's control socket as agents use
 * it.  More agents than slots (issue 20.2: slots taken again, the one left
 * over told "alone"), and, as root, another user's process refused and
 * what the program's tree says escaped (issue 20.5).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/control_client.h"
#include "cli/session.h"
#include "common/control.h"
#include "test.h"

/* ---- issue 20.2: more agents than slots ----------------------------------- */

static int connect_to(const char *address)
{
    struct sockaddr_un sa;
    socklen_t len;
    if (control_sockaddr(address, &sa, &len) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct timeval bound = {2, 0}; /* a backlog nobody empties fails the test, not hangs it */
    if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound) < 0 ||
                    connect(fd, (struct sockaddr *)&sa, len) < 0)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The program record waits for: a child that lives until `until` is
 * written to (or closed), then ms milliseconds more. */
static pid_t child_until(int until, int ms)
{
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        ssize_t n = read(until, &c, 1);
        (void)n;
        struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
        nanosleep(&t, NULL);
        _exit(0);
    }
    return pid;
}

/* Agents that connect while record runs: n of them, one after the other,
 * from a thread; then the program is let go. */
struct connector {
    const char *address;
    int *clients, n, made, release;
};

static void *connect_all(void *arg)
{
    struct connector *c = arg;
    for (c->made = 0; c->made < c->n; c->made++)
        if ((c->clients[c->made] = connect_to(c->address)) < 0)
            break;
    ssize_t w = write(c->release, "x", 1);
    (void)w;
    return NULL;
}

/* Runs record's wait for a program while n agents connect; returns how
 * many could. */
static int record_while_connecting(struct session *s, int *clients, int n)
{
    int go[2];
    if (pipe(go) < 0)
        return -1;
    struct connector c = {s->address, clients, n, 0, go[1]};
    pid_t program = child_until(go[0], 50);
    pthread_t t;
    if (pthread_create(&t, NULL, connect_all, &c) != 0) {
        kill(program, SIGKILL);
        c.made = -1;
    }
    session_wait_child(s, program, 0, 1);
    if (c.made >= 0)
        pthread_join(t, NULL);
    close(go[0]);
    close(go[1]);
    return c.made;
}

/* What a client got from record: "alone" then the hang-up (2), the
 * hang-up alone (1), nothing (0), waiting up to wait_ms for the hang-up. */
static int heard(int fd, int wait_ms)
{
    char buf[64];
    int got_alone = 0;
    for (int waited = 0;; waited += 10) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 5 && !memcmp(buf, "alone", 5)) {
            got_alone = 1;
            continue;
        }
        if (n == 0)
            return got_alone ? 2 : 1;
        if (n < 0 && errno != EAGAIN)
            return -1;
        if (waited >= wait_ms)
            return got_alone ? 3 : 0;
        usleep(10000);
    }
}

static int connected_peers(const struct session *s)
{
    int n = 0;
    for (int i = 0; i < s->peer_count; i++)
        n += s->peers[i].fd >= 0;
    return n;
}

/* More agents than slots: the slot of one that hung up is taken again,
 * and one that finds none is told it records on its own ("alone") before
 * the hang-up, which it would take for a stop.  (Before: 64 slots, never
 * reused; the 65th agent of a run was hung up on at once.) */
static void test_session_slots(void)
{
    struct session s;
    char err[256];
    REQUIRE(session_open(&s, 0, err, sizeof err) == 0);
    static int clients[SESSION_MAX_PEERS + 1];
    int fd2 = dup(2), devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    dup2(devnull, 2); /* the warning */
    int made = record_while_connecting(&s, clients, SESSION_MAX_PEERS + 1);
    CHECK_EQ(made, SESSION_MAX_PEERS + 1);
    CHECK_EQ(connected_peers(&s), SESSION_MAX_PEERS);
    CHECK_EQ(s.unfollowed, 1);
    if (made == SESSION_MAX_PEERS + 1) {
        CHECK_EQ(heard(clients[SESSION_MAX_PEERS], 500), 2); /* the last in: alone, hang-up */
        CHECK_EQ(heard(clients[0], 0), 0);                   /* the others: followed */
    }
    /* all hang up; as many again find a slot each */
    for (int i = 0; i < made; i++)
        close(clients[i]);
    made = record_while_connecting(&s, clients, SESSION_MAX_PEERS);
    CHECK_EQ(made, SESSION_MAX_PEERS);
    CHECK_EQ(connected_peers(&s), SESSION_MAX_PEERS);
    CHECK_EQ(s.unfollowed, 1);
    int followed = 0;
    for (int i = 0; i < made; i++)
        followed += heard(clients[i], 0) == 0;
    CHECK_EQ(followed, SESSION_MAX_PEERS);
    dup2(fd2, 2);
    close(fd2);
    close(devnull);
    session_close(&s);
    for (int i = 0; i < made; i++)
        close(clients[i]);
}

/* ---- issue 20.5: other users' processes ----------------------------------- */

/* A process that becomes `nobody`, connects as an agent does, says `line`
 * (a log line), writes 1 to `ready`, and waits: it exits 2 when told to
 * record on its own, 1 when told to stop (or hung up on), 3 after 5 s. */
static void nobody_says(const char *address, const char *line, int ready)
{
    if (setgid(65534) < 0 || setuid(65534) < 0)
        _exit(9);
    if (control_client_connect(address) < 0)
        _exit(8);
    control_client_send("log %s", line);
    ssize_t w = write(ready, "1", 1);
    (void)w;
    for (int i = 0; i < 500; i++) {
        if (control_client_stop_wanted())
            _exit(1);
        if (!control_client_connected())
            _exit(2);
        usleep(10000);
    }
    _exit(3);
}

static int wait_ready(int fd)
{
    char c;
    ssize_t n;
    do
        n = read(fd, &c, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : -1;
}

/* As root, record took any local user's connection and printed what it
 * said, escape sequences and all.  Now: a process of the program's tree
 * is taken whatever user it became (its line printed, escaped); another
 * user's process outside the tree is refused (told to record on its own),
 * its line never printed. */
static void test_session_strangers(void)
{
    if (geteuid() != 0) {
        printf("  (not root: the other-user cases of the control socket are not tried)\n");
        return;
    }
    struct session s;
    char err[256];
    REQUIRE(session_open(&s, 0, err, sizeof err) == 0);
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    /* the stranger: a child of this test, not of the program */
    pid_t stranger = fork();
    if (stranger == 0)
        nobody_says(s.address, "a stranger's words \x1b]0;owned\x07", ready[1]);
    REQUIRE(stranger > 0 && wait_ready(ready[0]) == 0);
    /* the program: its child becomes nobody and connects */
    pid_t program = fork();
    if (program == 0) {
        pid_t child = fork();
        if (child == 0)
            nobody_says(s.address, "from the tree \x1b[2J\xc2\x9b" "31m", ready[1]);
        struct timespec t = {0, 600000000};
        nanosleep(&t, NULL);
        _exit(0);
    }
    REQUIRE(program > 0 && wait_ready(ready[0]) == 0);
    char path[] = "/tmp/corscope-unit-XXXXXX";
    int out = mkstemp(path);
    REQUIRE(out >= 0);
    unlink(path);
    int fd2 = dup(2);
    dup2(out, 2);
    session_wait_child(&s, program, 0, 1);
    dup2(fd2, 2);
    close(fd2);
    CHECK_EQ(s.refused, 1);
    int tree_peer = 0;
    for (int i = 0; i < s.peer_count; i++) {
        CHECK(s.peers[i].pid != stranger);
        tree_peer += s.peers[i].fd >= 0;
    }
    CHECK_EQ(tree_peer, 1);
    session_close(&s);
    int status = 0;
    CHECK(waitpid(stranger, &status, 0) == stranger);
    CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status), 2);
    char printed[4096];
    ssize_t n = pread(out, printed, sizeof printed - 1, 0);
    close(out);
    printed[n > 0 ? n : 0] = '\0';
    CHECK(strstr(printed, "corscope: from the tree \\x1b[2J\\u009b31m\n") != NULL);
    CHECK(strstr(printed, "stranger's words") == NULL);
    char want[128];
    snprintf(want, sizeof want, "refused the control connection of process %d (uid 65534)",
             (int)stranger);
    CHECK(strstr(printed, want) != NULL);
    CHECK(strchr(printed, '\x1b') == NULL);
    close(ready[0]);
    close(ready[1]);
}

void suite_session(void)
{
    RUN(test_session_slots);
    RUN(test_session_strangers);
}
