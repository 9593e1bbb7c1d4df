/*
 * Tests of ipc (cli/ipc.h): the diagnostics IPC encoding of AttachProfiler
 * against the layout seen on the real runtime, the process info answer,
 * and ps asking many runtimes at once within one bound (issue 20.7).
 */

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/ipc.h"
#include "test.h"

static void test_ipc_attach_layout(void)
{
    /* the request the experiment sent (trace_attach.md B5.3): a path of 43
     * UTF-16 units with its NUL, 28 bytes of client data: 162 bytes */
    static uint8_t msg[IPC_MESSAGE_MAX];
    const uint8_t clsid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const char *path = "/work/scratch/trace-lab/out/libtracelab.so"; /* 42 characters */
    REQUIRE(strlen(path) == 42);
    const char data[28] = "TL_OUT=/tmp/x;TL_DETACH=1;ab";
    long n = ipc_encode_attach(msg, sizeof msg, 5000, clsid, path, data, sizeof data);
    REQUIRE(n == 162);
    CHECK(!memcmp(msg, "DOTNET_IPC_V1\0", 14));
    CHECK_EQ(msg[14] | msg[15] << 8, 162);
    CHECK_EQ(msg[16], 0x03);
    CHECK_EQ(msg[17], 0x01);
    CHECK_EQ(msg[18] | msg[19] << 8, 0);
    CHECK_EQ(msg[20] | msg[21] << 8 | msg[22] << 16 | (uint32_t)msg[23] << 24, 5000);
    CHECK(!memcmp(msg + 24, clsid, 16));
    CHECK_EQ(msg[40], 43);           /* units, the NUL included */
    CHECK_EQ(msg[44], '/');          /* UTF-16LE */
    CHECK_EQ(msg[45], 0);
    CHECK_EQ(msg[44 + 2 * 42], 0);   /* the NUL */
    CHECK_EQ(msg[44 + 86], 28);      /* client data length */
    CHECK(!memcmp(msg + 44 + 90, data, 28));
    /* not UTF-8, or too big for one message: refused */
    CHECK(ipc_encode_attach(msg, sizeof msg, 0, clsid, "/a\xff", NULL, 0) == -1);
    static char big[70000];
    CHECK(ipc_encode_attach(msg, sizeof msg, 0, clsid, "/a", big, sizeof big) == -1);
    CHECK(ipc_encode(msg, 10, 4, 0, NULL, 0) == -1);
}

static size_t put_string(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s) + 1;
    memcpy(p, &n, 4);
    for (uint32_t i = 0; i < n; i++) {
        p[4 + 2 * i] = (uint8_t)s[i];
        p[5 + 2 * i] = 0;
    }
    return 4 + 2 * (size_t)n;
}

static void test_ipc_process_info(void)
{
    uint8_t p[1024];
    memset(p, 0, sizeof p);
    uint64_t pid = 4242;
    memcpy(p, &pid, 8);
    size_t at = 24;
    at += put_string(p + at, "dotnet /srv/App.dll");
    at += put_string(p + at, "Linux");
    at += put_string(p + at, "x64");
    size_t v1 = at;
    at += put_string(p + at, "App");
    at += put_string(p + at, "10.0.12");
    struct ipc_info info;
    REQUIRE(ipc_decode_info(p, at, 1, &info) == 0);
    CHECK_EQ(info.pid, 4242);
    CHECK(!strcmp(info.command, "dotnet /srv/App.dll"));
    CHECK_STR(info.arch, "x64");
    CHECK_STR(info.entry, "App");
    CHECK_STR(info.version, "10.0.12");
    REQUIRE(ipc_decode_info(p, v1, 0, &info) == 0);
    CHECK_STR(info.version, "");
    CHECK(ipc_decode_info(p, v1, 1, &info) == -1); /* version 2 fields missing */
    CHECK(ipc_decode_info(p, 30, 0, &info) == -1);
    /* a count past the end is refused, not read */
    uint32_t huge = 1000000;
    memcpy(p + 24, &huge, 4);
    CHECK(ipc_decode_info(p, at, 1, &info) == -1);
}

/* ---- issue 20.7: ps asking runtimes that do not answer -------------------- */

static void on_alarm(int sig)
{
    (void)sig;
}

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

void suite_ipc(void)
{
    RUN(test_ipc_attach_layout);
    RUN(test_ipc_process_info);
    RUN(test_runtimes_asked_together);
}
