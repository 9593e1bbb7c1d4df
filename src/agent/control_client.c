/*
 * control_client: see control_client.h.  One socket, its descriptor in an atomic so that
 * a sender racing control_client_close either sends on it or sees -1; a send on a
 * descriptor closed meanwhile fails (EBADF), and the loop closes it only
 * after the callbacks that might send have stopped (ProfilerDetachSucceeded,
 * Shutdown).
 */
#include "agent/control_client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static _Atomic int fd = -1;
static int held = -1; /* the descriptor, until control_client_close: never reused meanwhile */
static int hung_up;

static uint64_t elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)((now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000);
}

int control_client_connect(const char *address)
{
    struct timespec began;
    clock_gettime(CLOCK_MONOTONIC, &began);
    struct sockaddr_un sa;
    socklen_t len;
    if (control_sockaddr(address, &sa, &len) < 0)
        return -1;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    /* the listener is there before the program starts (or the attach is
     * sent): connecting completes at once, or fails at once, unless its
     * backlog is full (corscope held up, or another local user filling it):
     * then the wait is bounded (a Unix socket's connect waits at most its
     * send time-out), and Initialize goes on without corscope */
    struct timeval bound = {CONTROL_CLIENT_CONNECT_TIMEOUT_MS / 1000,
                            (CONTROL_CLIENT_CONNECT_TIMEOUT_MS % 1000) * 1000};
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    int r;
    do
        r = connect(s, (struct sockaddr *)&sa, len);
    while (r < 0 && errno == EINTR && elapsed_ms(&began) < CONTROL_CLIENT_CONNECT_TIMEOUT_MS);
    if (r < 0) {
        close(s);
        return -1;
    }
    hung_up = 0;
    held = s;
    atomic_store(&fd, s);
    control_client_send("hello %ld", (long)getpid());
    return 0;
}

int control_client_connected(void)
{
    return atomic_load(&fd) >= 0;
}

static void send_text(const char *text, size_t len)
{
    int s = atomic_load(&fd);
    if (s < 0)
        return;
    int saved = errno;
    ssize_t n = send(s, text, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)n;
    errno = saved;
}

int control_client_try_send(const char *text, size_t len)
{
    int s = atomic_load(&fd);
    if (s < 0)
        return 1;
    int saved = errno;
    ssize_t n = send(s, text, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    int full = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS);
    errno = saved;
    return full ? -1 : n < 0 ? 1 : 0;
}

void control_client_send(const char *fmt, ...)
{
    char msg[CONTROL_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    send_text(msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

void control_client_send_counts(enum control_kind kind, const struct control_counts *c)
{
    char msg[CONTROL_MESSAGE_MAX];
    int n = control_format_counts(msg, sizeof msg, kind, c);
    if (n > 0 && (size_t)n < sizeof msg)
        send_text(msg, (size_t)n);
}

int control_client_receive_recording(int timeout_ms)
{
    int s = atomic_load(&fd);
    struct control_msg m;
    int file = -1;
    if (s < 0 || control_recv_fd(s, timeout_ms, &m, &file) < 0)
        return -1;
    if (m.kind == CONTROL_RECORDING && file >= 0)
        return file;
    if (file >= 0)
        close(file);
    if (m.kind == CONTROL_STOP)
        hung_up = 1; /* the loop that would have heard it never runs */
    return -1;
}

int control_client_stop_wanted(void)
{
    int s = atomic_load(&fd);
    if (s < 0)
        return 0;
    if (hung_up)
        return 1;
    for (;;) {
        char buf[CONTROL_MESSAGE_MAX];
        ssize_t n = recv(s, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0 && errno == ECONNRESET)
            continue; /* it hung up on a message of ours unread: what it sent before follows */
        if (n <= 0) {
            hung_up = 1; /* corscope is gone */
            return 1;
        }
        struct control_msg m;
        if (control_parse(buf, (size_t)n, &m) == 0 && m.kind == CONTROL_STOP)
            return 1;
        if (m.kind == CONTROL_ALONE) {
            /* corscope does not follow us: no more messages, and its
             * hang-up is not a stop */
            control_client_hangup();
            return 0;
        }
    }
}

void control_client_hangup(void)
{
    int s = atomic_exchange(&fd, -1);
    if (s >= 0)
        shutdown(s, SHUT_RDWR);
}

void control_client_close(void)
{
    control_client_hangup();
    if (held >= 0)
        close(held);
    held = -1;
}
