/*
 * The findings of a code review (issue 20), each reproduced here as it
 * happened: an allocation failing at the wrong moment (mem_fail_after), a
 * library unloaded during a lookup, a queue nothing drains.  Each test
 * failed before its fix.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/dynsym.h"
#include "agent/evq.h"
#include "agent/recorder.h"
#include "agent/control_client.h"
#include "agent/resolve.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/mcode.h"
#include "agent/signal/thread_rings.h"
#include "cli/fold.h"
#include "cli/frame_name.h"
#include "cli/ipc.h"
#include "cli/session.h"
#include "cli/termsafe.h"
#include "common/config.h"
#include "common/control.h"
#include "common/mem.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

/* ---- 1: a publication whose snapshot cannot be allocated ------------------ */

#define MANY_RANGES 8192u
#define RANGE_BASE ((uintptr_t)0x7a0000000000)

static struct mcode_entry range_at(size_t i)
{
    struct mcode_entry e;
    memset(&e, 0, sizeof e);
    e.start = RANGE_BASE + 16 * i;
    e.fn_start = e.start;
    e.len = 12;
    e.permanent = 1; /* known = 0: found, with no shape */
    return e;
}

/* Every range of the table is found but those below `removed` and, when
 * `and_next`, the range at `removed`. */
static int table_intact(size_t removed, int and_next)
{
    struct mcode_hit h;
    for (size_t i = 0; i < MANY_RANGES; i++) {
        enum mcode_found f = mcode_find(RANGE_BASE + 16 * i + 3, &h);
        enum mcode_found want =
            i < removed || (i == removed && and_next) ? MCODE_NONE : MCODE_NO_SHAPE;
        if (f != want || (f == MCODE_NO_SHAPE && h.lo != RANGE_BASE + 16 * i))
            return 0;
    }
    return 1;
}

/* The large array is over glibc's mmap threshold (fixed here, not dynamic),
 * so an array freed under the snapshot is unmapped: the lookup after it
 * crashes in the plain build too, not only under ASan. */
static void test_mcode_publish_out_of_memory(void)
{
    REQUIRE(thread_rings_init() == 0);
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    for (size_t i = 0; i < MANY_RANGES; i++) {
        struct mcode_entry e = range_at(i);
        mcode_add(&e);
    }
    mcode_publish(); /* merged: one large array */
    CHECK_EQ(mcode_ranges(), MANY_RANGES);
    CHECK(table_intact(0, 0));
    /* a removal rebuilds the large array; fail each allocation of the
     * publication in turn (the snapshot and the array; a third would be the
     * reclaimer's record, whose failure leaks by design): the published
     * table stays whole and readable after the reclaimer has freed what it
     * was given */
    size_t gone = 0;
    for (long n = 1; n <= 2; n++, gone++) {
        mcode_remove(RANGE_BASE + 16 * gone);
        mem_fail_after(n, 0);
        mcode_publish();
        mem_fail_after(0, 0);
        thread_rings_reclaim();
        /* earlier removals are visible; this one may or may not be */
        CHECK(table_intact(gone, 0) || table_intact(gone, 1));
        mcode_publish(); /* whatever failed is published now */
        thread_rings_reclaim();
        CHECK(table_intact(gone, 1));
    }
    CHECK_EQ(mcode_ranges(), MANY_RANGES - gone);
    mcode_shutdown();
    thread_rings_reclaim();
    thread_rings_shutdown();
}

/* ---- 3: --alloc exact waiting on a queue nothing drains -------------------- */

/* A thread fills its queue (nothing drains it) until there is no room for
 * an entry; then the queues are paused, as a halted recording pauses them:
 * the room an allocation of --alloc exact waits for (evq_room) must be
 * there at once, or it waits its 50 ms at every allocation from then on. */
static void *fill_then_pause(void *arg)
{
    int *answers = arg;
    uint64_t v = 0;
    for (int i = 0; i < 1000000 && evq_room(64); i++, v++)
        evq_push(3, 1, &v, 1, 0);
    answers[0] = evq_room(64);
    evq_pause();
    answers[1] = evq_room(64);
    return NULL;
}

static void drop_entry(void *ctx, const struct evq_entry *e)
{
    (void)ctx, (void)e;
}

static void test_no_wait_once_paused(void)
{
    evq_open();
    int answers[2] = {-1, -1};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, fill_then_pause, answers) == 0);
    pthread_join(t, NULL);
    CHECK_EQ(answers[0], 0); /* full: an allocation would wait for the loop */
    CHECK_EQ(answers[1], 1); /* paused: nothing would ever drain it */
    evq_drain(drop_entry, NULL, UINT64_MAX);
    evq_shutdown();
}

/* ---- 2 and 5: record's control socket ------------------------------------ */

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

static void test_termsafe(void)
{
    char out[64];
    CHECK_STR(termsafe("plain text, été, 名前", out, sizeof out), "plain text, été, 名前");
    CHECK_STR(termsafe("a\x1b[31mb\x07\x7f", out, sizeof out), "a\\x1b[31mb\\x07\\x7f");
    CHECK_STR(termsafe("\xc2\x9b" "2J \xe2\x80\xae" "abc", out, sizeof out), "\\u009b2J \\u202eabc");
    CHECK_STR(termsafe("bad \xff\xc3 \xe0\x80\x80 end", out, sizeof out),
              "bad \\xff\\xc3 \\xe0\\x80\\x80 end");
    CHECK_STR(termsafe("line\nnext\r", out, sizeof out), "line\\x0anext\\x0d");
    /* cut whole: never half an escape or a character */
    CHECK_STR(termsafe("abc\x1b", out, 7), "abc");
    CHECK_STR(termsafe("ab\xc3\xa9", out, 4), "ab");
    CHECK_STR(termsafe("ab\xc3\xa9", out, 5), "ab\xc3\xa9");
}

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

/* ---- 7: the unwind tables, read in a handler while the collector parses -- */

/* The handler's lookups read a library's table once it is published by the
 * release store of its `ready`, and only then (before, two of them read the
 * table with no acquire of `ready`: a formal race, a table's row count seen
 * with the row pointer of before).  No plain build can fail this; the
 * thread sanitizer does (make unit-tsan runs the tsan_ tests). */
static _Atomic int stop_reading;

static void *read_tables(void *arg)
{
    uintptr_t at = (uintptr_t)arg;
    uintptr_t found = 0;
    while (!atomic_load(&stop_reading))
        found += (uintptr_t)nativeunwind_covers(at) + (uintptr_t)nativeunwind_is_sigreturn(at);
    return (void *)found;
}

static void test_tsan_tables_published(void)
{
    REQUIRE(thread_rings_init() == 0);
    nativeunwind_list(); /* every library known, no table parsed */
    uintptr_t in_libc = (uintptr_t)(void *)getppid + 1;
    atomic_store(&stop_reading, 0);
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, read_tables, (void *)in_libc) == 0);
    nativeunwind_want_all();
    nativeunwind_refresh(); /* parsed and published while the thread reads */
    usleep(20000);
    atomic_store(&stop_reading, 1);
    pthread_join(t, NULL);
    CHECK(nativeunwind_covers(in_libc));
    nativeunwind_shutdown();
    thread_rings_reclaim();
}

/* ---- 7: asking runtimes that do not answer ---------------------------------- */

static int listen_at(const char *path, int backlog)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, backlog) < 0)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static size_t put_utf16(uint8_t *p, const char *text)
{
    uint32_t n = (uint32_t)strlen(text) + 1;
    memcpy(p, &n, 4);
    for (uint32_t i = 0; i < n; i++)
        p[4 + 2 * i] = (uint8_t)text[i], p[5 + 2 * i] = 0;
    return 4 + 2 * (size_t)n;
}

/* A runtime that answers one ProcessInfo2. */
static void *answer_once(void *arg)
{
    int listener = *(int *)arg;
    int fd = accept(listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    uint8_t request[IPC_HEADER_SIZE], reply[512];
    size_t got = 0;
    while (got < sizeof request) {
        ssize_t n = read(fd, request + got, sizeof request - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    uint8_t payload[400];
    memset(payload, 0, 24);
    payload[0] = 42;
    size_t len = 24;
    len += put_utf16(payload + len, "dotnet App.dll");
    len += put_utf16(payload + len, "Linux");
    len += put_utf16(payload + len, "x64");
    len += put_utf16(payload + len, "App");
    len += put_utf16(payload + len, "10.0.99");
    long n = ipc_encode(reply, sizeof reply, IPC_SET_SERVER, IPC_REPLY_OK, payload, len);
    if (n > 0 && write(fd, reply, (size_t)n) != n)
        n = -1;
    close(fd);
    return NULL;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ps asks every runtime at once, within one bound: a socket that accepts
 * and never answers, or whose backlog is full, costs no more than that
 * (before, 5 s each, one after the other; a full backlog, forever: the
 * connect blocked). */
static void test_runtimes_asked_together(void)
{
    char dir[] = "/tmp/corscope-unit-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char paths[5][64];
    const char *names[5] = {"answers", "silent1", "silent2", "full", "missing"};
    for (int i = 0; i < 5; i++)
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
    int answers = listen_at(paths[0], 4), silent1 = listen_at(paths[1], 4),
        silent2 = listen_at(paths[2], 4), full = listen_at(paths[3], 0);
    REQUIRE(answers >= 0 && silent1 >= 0 && silent2 >= 0 && full >= 0);
    int fillers[16], filled = 0;
    for (; filled < 16; filled++) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", paths[3]);
        fillers[filled] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (connect(fillers[filled], (struct sockaddr *)&sa, sizeof sa) < 0) {
            close(fillers[filled]);
            break;
        }
    }
    REQUIRE(filled < 16); /* its backlog is full */
    struct sigaction sa_alarm, saved;
    memset(&sa_alarm, 0, sizeof sa_alarm);
    sa_alarm.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa_alarm, &saved);
    alarm(5); /* ends a connect that would wait for good */

    /* one runtime, the full one */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint8_t msg[IPC_HEADER_SIZE], set, id, reply[64];
    size_t len;
    char err[256] = "";
    ipc_encode(msg, sizeof msg, IPC_SET_PROCESS, IPC_PROCESS_INFO2, NULL, 0);
    CHECK(ipc_request(paths[3], msg, sizeof msg, 300, &set, &id, reply, sizeof reply, &len, err,
                      sizeof err) == -1);
    CHECK(ms_since(&t0) < 300 + 700);

    /* all of them */
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, answer_once, &answers) == 0);
    struct ipc_info info[5];
    struct ipc_query q[5];
    for (int i = 0; i < 5; i++)
        q[i] = (struct ipc_query){.socket_path = paths[i], .info = &info[i]};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ipc_process_info_many(q, 5, 800);
    double ms = ms_since(&t0);
    alarm(0);
    sigaction(SIGALRM, &saved, NULL);
    pthread_join(t, NULL);
    CHECK(ms < 800 + 700);
    CHECK(q[0].ok);
    CHECK_STR(info[0].version, "10.0.99");
    for (int i = 1; i < 5; i++)
        CHECK(!q[i].ok);
    CHECK(strstr(q[1].err, "no answer") && strstr(q[1].err, "timed out"));
    CHECK(strstr(q[3].err, "backlog stays full") != NULL);
    CHECK(strstr(q[4].err, "cannot connect") != NULL);
    for (int i = 0; i < filled; i++)
        close(fillers[i]);
    close(answers), close(silent1), close(silent2), close(full);
    for (int i = 0; i < 5; i++)
        unlink(paths[i]);
    rmdir(dir);
}

/* ---- 6: a library unloaded while its address is named --------------------- */

static void *unloadable;

static void unload_it(void)
{
    if (unloadable)
        dlclose(unloadable);
    unloadable = NULL;
}

/* The collector names an address in a library the program unloads at that
 * moment (NativeLibrary.Free on another thread): the loader's answer must
 * not be read after the loader let go of the library.  Here it is unloaded
 * between the lookup and the use of its answer (before: the names and the
 * symbol entry dladdr1 pointed at were read there, unmapped: a crash). */
static void test_native_name_of_unloaded_library(void)
{
    char lib[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", lib, sizeof lib - 32);
    REQUIRE(n > 0);
    lib[n] = '\0';
    strcpy(strrchr(lib, '/') + 1, "unloadable.so");
    unloadable = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(unloadable != NULL);
    int (*work)(int) = (int (*)(int))dlsym(unloadable, "unloadable_work");
    REQUIRE(work != NULL);
    uintptr_t at = (uintptr_t)work + 4;
    char path[] = "/tmp/corscope-unit-unload.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    struct config cfg;
    config_defaults(&cfg);
    struct recorder rec;
    char err[256];
    REQUIRE(recorder_open(&rec, &cfg, path, err, sizeof err) == 0);
    struct resolver r;
    resolve_init(&r, NULL, NULL, &rec);
    resolve_test_after_lookup(unload_it);
    uint32_t frame = resolve_ip(&r, at, 0, 0);
    resolve_test_after_lookup(NULL);
    CHECK(unloadable == NULL); /* it was unloaded in between */
    Dl_info info;
    CHECK(!dladdr((void *)at, &info)); /* and is gone */
    CHECK(frame != 0);
    /* named from what was copied while it was there */
    int named = 0;
    for (size_t i = 1; i < r.native_keys.count; i++) {
        const char *key = r.native_keys.strs[i];
        const char *nl = strchr(key, '\n');
        named += nl && !strcmp(nl + 1, "unloadable_work") && nl - key == (ptrdiff_t)strlen(lib) &&
                 !strncmp(key, lib, strlen(lib));
    }
    CHECK_EQ(named, 1);
    resolve_free(&r);
    recorder_close(&rec);
    unlink(path);
}

/* What the copy says is what dladdr1 says (the object, where it is
 * mapped, the exported symbol covering the address), across libc's code
 * around qsort, the vDSO (whose dynamic section the loader does not
 * relocate) and this program; while nothing is unloaded. */
static int agrees_with_dladdr(uintptr_t at)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    struct dynsym_hit hit;
    int known = dladdr1((void *)at, &info, (void **)&sym, RTLD_DL_SYMENT) != 0;
    if (dynsym_lookup(at, &hit) != known)
        return 0;
    if (!known)
        return 1;
    const char *want = info.dli_sname && sym && (uintptr_t)info.dli_saddr <= at ? info.dli_sname : "";
    return !strcmp(hit.module, info.dli_fname) && hit.base == (uintptr_t)info.dli_fbase &&
           !strcmp(hit.symbol, want) && (!want[0] || hit.symbol_start == (uintptr_t)info.dli_saddr);
}

static void test_dynsym_agrees_with_the_loader(void)
{
    uintptr_t around[3] = {(uintptr_t)(void *)qsort, (uintptr_t)getauxval(AT_SYSINFO_EHDR),
                           (uintptr_t)(void *)test_dynsym_agrees_with_the_loader};
    uintptr_t span[3] = {1 << 18, 1 << 13, 1 << 12};
    for (int k = 0; k < 3; k++) {
        if (!around[k])
            continue;
        size_t tried = 0, differ = 0, named = 0;
        for (uintptr_t at = around[k] - span[k] / 2; at < around[k] + span[k] / 2; at += 7) {
            Dl_info info;
            if (!dladdr((void *)at, &info))
                continue;
            tried++;
            named += info.dli_sname != NULL;
            if (!agrees_with_dladdr(at)) {
                if (differ++ < 3) {
                    struct dynsym_hit hit;
                    dynsym_lookup(at, &hit);
                    printf("  differ at %#lx: dladdr %s %s, dynsym %s %s\n", (unsigned long)at,
                           info.dli_fname, info.dli_sname ? info.dli_sname : "-", hit.module,
                           hit.symbol);
                }
            }
        }
        CHECK(tried > 100);
        CHECK_EQ(differ, 0);
        if (k < 2)
            CHECK(named > 10);
    }
}

/* ---- 8: a start-up walk that failed at libc's start, with labels ---------- */

/* A main-thread sample in the runtime's start-up whose walk met libc's
 * unwind table before the agent had parsed it: the walk ends at
 * __libc_start_call_main and is marked failed ([unknown], after the labels
 * the agent put at the root).  Without labels the report folded it under
 * [start]; with one label it folded the label away; with two it left the
 * host's frames as they were, `dotnet` among them, which t_naming read as
 * a managed frame (issue 20.8).  The same walk now folds the same way
 * with or without labels, and keeps them. */
static void test_fold_failed_start_with_labels(void)
{
    struct buf b;
    buf_init(&b);
    struct writer w;
    struct writer_sink sink = {fixture_sink, &b};
    REQUIRE(writer_begin(&w, sink) == 0);
    writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", 1000000);
#define STR(t) writer_string(&w, t, strlen(t))
    uint32_t libc = STR("/lib/x86_64-linux-gnu/libc.so.6"), dotnet = STR("/usr/share/dotnet/dotnet"),
             coreclr = STR("/x/libcoreclr.so");
    uint32_t call_main = writer_frame(&w, FMT_FRAME_NATIVE, libc, 0, STR("__libc_start_call_main"), 0);
    uint32_t host1 = writer_frame(&w, FMT_FRAME_NATIVE, dotnet, 0, 0, 0x7bee);
    uint32_t host2 = writer_frame(&w, FMT_FRAME_NATIVE, dotnet, 0, 0, 0x7910);
    uint32_t init = writer_frame(&w, FMT_FRAME_RUNTIME, coreclr, 0, STR("coreclr_initialize"), 0);
    uint32_t inner = writer_frame(&w, FMT_FRAME_RUNTIME, coreclr, 0, 0, 0x3688db);
    uint32_t load = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, STR("load assembly"), 0);
    uint32_t module = writer_frame(&w, FMT_FRAME_LABEL, 0, 0, STR("load module"), 0);
    uint32_t failed = writer_frame(&w, FMT_FRAME_SYNTHETIC, 0, 0, STR("[unknown]"), 0);
#undef STR
    /* leaf first: the runtime, the host, libc's start; then the label, the mark */
    uint32_t with[] = {inner, init, host2, host1, call_main, load, failed};
    uint32_t without[] = {inner, init, host2, host1, call_main, failed};
    uint32_t two[] = {inner, init, host2, host1, call_main, module, load, failed};
    writer_thread(&w, 1, 100, writer_string(&w, "dotnet", 6));
    writer_sample(&w, FMT_EVENT_CPU, 1, 1000, writer_stack(&w, with, 7), 1);
    writer_sample(&w, FMT_EVENT_CPU, 1, 2000, writer_stack(&w, without, 6), 1);
    writer_sample(&w, FMT_EVENT_CPU, 1, 3000, writer_stack(&w, two, 8), 1);
    REQUIRE(writer_finish(&w, NULL, NULL, 0) == 0);
    writer_free(&w);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    buf_free(&b);
    REQUIRE(fold_recording(&r) == 0);
    char text[3][256];
    for (int i = 0; i < 3; i++) {
        struct rec_stack st = r.stacks[r.samples[i].stack];
        size_t used = 0;
        text[i][0] = 0;
        for (uint32_t k = st.depth; k > 0; k--) {
            char name[256];
            frame_name_format(&r, r.stack_frames[st.offset + k - 1], name, sizeof name);
            used += (size_t)snprintf(text[i] + used, sizeof text[i] - used, "%s%s",
                                     k == st.depth ? "" : ";", name);
        }
    }
    CHECK_STR(text[1], "[start];libcoreclr.so!coreclr_initialize;libcoreclr.so");
    CHECK_STR(text[0], "[start];[load assembly];libcoreclr.so!coreclr_initialize;libcoreclr.so");
    CHECK_STR(text[2], "[start];[load assembly];[load module];libcoreclr.so!coreclr_initialize;"
                       "libcoreclr.so");
    rec_free(&r);
}

void suite_review(void)
{
    RUN(test_mcode_publish_out_of_memory);
    RUN(test_no_wait_once_paused);
    RUN(test_session_slots);
    RUN(test_session_strangers);
    RUN(test_termsafe);
    RUN(test_agent_told_alone);
    RUN(test_agent_connect_bounded);
    RUN(test_tsan_tables_published);
    RUN(test_runtimes_asked_together);
    RUN(test_native_name_of_unloaded_library);
    RUN(test_dynsym_agrees_with_the_loader);
    RUN(test_fold_failed_start_with_labels);
}
