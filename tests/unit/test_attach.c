/*
 * Unit tests of attach and detach: the settings' text form (the attach's
 * client data), the control line's messages and sockets, the diagnostics
 * IPC encoding against the layout seen on the real runtime, the thread
 * registry's catch-up, the event queues across a detach, and the status
 * line's text.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/control_client.h"
#include "agent/evq.h"
#include "agent/thread_registry.h"
#include "cli/ipc.h"
#include "cli/session.h"
#include "cli/status.h"
#include "common/config.h"
#include "common/control.h"
#include "common/utf.h"
#include "test.h"

static void test_config_text_round_trip(void)
{
    struct config a, b;
    char err[256], text[CONFIG_TEXT_MAX];
    config_defaults(&a);
    CHECK(config_set(&a, "output", "/tmp/x %p 100%%.corscope", err, sizeof err) == 0);
    CHECK(config_set(&a, "event", "wall", err, sizeof err) == 0);
    CHECK(config_set(&a, "interval", "3ms", err, sizeof err) == 0);
    CHECK(config_set(&a, "sampler", "suspend", err, sizeof err) == 0);
    CHECK(config_set(&a, "max_depth", "100", err, sizeof err) == 0);
    CHECK(config_set(&a, "control", "@corscope-1-abc", err, sizeof err) == 0);
    int n = config_to_text(&a, text, sizeof text);
    REQUIRE(n > 0);
    CHECK_EQ(strlen(text), (size_t)n);
    /* no NUL is needed: the client data has a length */
    REQUIRE(config_from_text(&b, text, (size_t)n, err, sizeof err) == 0);
    CHECK(!strcmp(b.output, a.output));
    CHECK_EQ(b.events, CONFIG_EVENT_WALL);
    CHECK_EQ(b.interval_ns, 3000000);
    CHECK_EQ(b.sampler, CONFIG_SAMPLER_SUSPEND);
    CHECK_EQ(b.max_depth, 100);
    CHECK_STR(b.control, "@corscope-1-abc");
    CHECK_EQ(b.signal, a.signal);
    CHECK_EQ(b.cpu_clock, a.cpu_clock);
    /* too small a buffer is refused, not cut */
    CHECK(config_to_text(&a, text, 20) == -1);
}

static void test_config_text_rejects(void)
{
    struct config c;
    char err[256];
    static const char *const bad[] = {
        "interval=abc\n", "nonsense=1\n", "no equals sign\n", "=5\n",
        "control=corscope\n", "control=@with space\n", "event=cpu,wall\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(config_from_text(&c, bad[i], strlen(bad[i]), err, sizeof err) == -1);
        CHECK(err[0] != '\0');
    }
    CHECK(config_from_text(&c, "log=info\0x", 10, err, sizeof err) == -1); /* a NUL inside */
    CHECK(config_set(&c, "output", "a\nb", err, sizeof err) == -1);
    /* empty lines and a missing last newline are fine; defaults fill in */
    REQUIRE(config_from_text(&c, "\nlog=debug", 10, err, sizeof err) == 0);
    CHECK_EQ(c.log, CONFIG_LOG_DEBUG);
    CHECK_EQ(c.events, CONFIG_EVENT_CPU);
    CHECK_STR(c.control, "");
}

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

static void test_utf8_to_utf16(void)
{
    uint16_t out[8];
    CHECK(utf8_to_utf16("a\xc3\xa9\xf0\x9f\x98\x80", out, 8) == 4);
    CHECK(out[0] == 'a' && out[1] == 0xe9 && out[2] == 0xd83d && out[3] == 0xde00 && !out[4]);
    CHECK(utf8_to_utf16("\xc0\x80", out, 8) == -1);     /* overlong */
    CHECK(utf8_to_utf16("\xed\xa0\x80", out, 8) == -1); /* a surrogate */
    CHECK(utf8_to_utf16("abcdefgh", out, 8) == -1);     /* no room for the NUL */
    CHECK(utf8_to_utf16("\xe2\x82", out, 8) == -1);     /* cut short */
}

/* Threads listed at an attach are registered, except one whose
 * ThreadDestroyed came between the listing and its registration. */
static void test_thread_catch_up(void)
{
    thread_registry_created(0x5000); /* reported by a callback meanwhile: known */
    thread_registry_adopt_begin();
    thread_registry_destroyed(0x7000); /* listed, then died before it was taken in */
    CHECK(thread_registry_adopt(0x5000, 501));
    CHECK(thread_registry_adopt(0x6000, 601));
    CHECK(!thread_registry_adopt(0x7000, 701));
    thread_registry_adopt_end();
    struct thread_view *views = NULL;
    size_t cap = 0;
    long n = thread_registry_snapshot(&views, &cap);
    REQUIRE(n == 2);
    for (long i = 0; i < n; i++) {
        CHECK(views[i].managed == 0x5000 || views[i].managed == 0x6000);
        CHECK_EQ(views[i].os_tid, views[i].managed == 0x5000 ? 501 : 601);
    }
    /* after the catch-up, an unknown id's death is forgotten again */
    thread_registry_destroyed(0x8000);
    free(views);
    thread_registry_shutdown();
}

static void *push_one(void *arg)
{
    uint64_t v = 7;
    (void)arg;
    evq_push(0, 1, &v, 1, 0);
    return NULL;
}

static void count_entry(void *ctx, const struct evq_entry *e)
{
    (void)e;
    (*(int *)ctx)++;
}

/* After a detach every queue is freed, live threads' too; a thread that
 * appended before makes a new queue in the next attach, and its exit
 * touches nothing freed (ASan would say). */
static void test_event_queues_across_detach(void)
{
    evq_open();
    uint64_t v = 1;
    CHECK(evq_push(0, 1, &v, 1, 0) == 0); /* this thread's queue, live */
    evq_free_all();
    CHECK(evq_push(0, 1, &v, 1, 0) == -1); /* closed between runs */
    evq_open();
    CHECK_EQ(evq_dropped(), 0);
    CHECK(evq_push(0, 1, &v, 1, 0) == 0); /* a new queue, not the freed one */
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, push_one, NULL) == 0);
    pthread_join(t, NULL);
    int n = 0;
    evq_drain(count_entry, &n, UINT64_MAX);
    CHECK_EQ(n, 2);
    evq_free_all();
    evq_open();
    evq_shutdown();
}

static void test_status_text(void)
{
    char line[256];
    struct control_counts c = {1234, 5, 2, 3 * 1024 * 1024 + 100};
    status_format(line, sizeof line, 75500000000ull, &c, NULL);
    CHECK_STR(line, "corscope: 1:15  1234 samples  5 events  2 dropped  3.0 MiB");
    status_format(line, sizeof line, 3700ull * 1000000000ull, &c, "stopping");
    CHECK_STR(line, "corscope: 1:01:40  1234 samples  5 events  2 dropped  3.0 MiB  stopping");
}

void suite_attach(void)
{
    RUN(test_config_text_round_trip);
    RUN(test_config_text_rejects);
    RUN(test_control_messages);
    RUN(test_control_line);
    RUN(test_ipc_attach_layout);
    RUN(test_ipc_process_info);
    RUN(test_utf8_to_utf16);
    RUN(test_thread_catch_up);
    RUN(test_event_queues_across_detach);
    RUN(test_status_text);
}
