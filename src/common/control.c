/*
 * control: see control.h.
 */
#include "common/control.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const words[] = {
    [CONTROL_HELLO] = "hello",     [CONTROL_LOG] = "log",           [CONTROL_STATUS] = "status",
    [CONTROL_CLOSED] = "closed",   [CONTROL_DETACHED] = "detached", [CONTROL_DORMANT] = "dormant",
    [CONTROL_STOP] = "stop",       [CONTROL_ALONE] = "alone",       [CONTROL_CALL] = "call",
    [CONTROL_WATCH] = "watch",     [CONTROL_RECORDING] = "recording",
};

int control_sockaddr(const char *address, struct sockaddr_un *sa, socklen_t *len)
{
    size_t n = address ? strlen(address) : 0;
    if (n < 2 || address[0] != '@' || n > sizeof sa->sun_path)
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    /* abstract: a NUL, then the name (not NUL-terminated) */
    memcpy(sa->sun_path + 1, address + 1, n - 1);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    return 0;
}

int control_format_counts(char *out, size_t size, enum control_kind kind,
                          const struct control_counts *c)
{
    return snprintf(out, size, "%s %llu %llu %llu %llu", words[kind],
                    (unsigned long long)c->samples, (unsigned long long)c->events,
                    (unsigned long long)c->dropped, (unsigned long long)c->bytes);
}

/* Four unsigned decimal numbers separated by single spaces, nothing else. */
static int parse_counts(const char *s, struct control_counts *c)
{
    uint64_t v[4];
    for (int i = 0; i < 4; i++) {
        if (*s < '0' || *s > '9')
            return -1;
        char *end;
        v[i] = strtoull(s, &end, 10);
        s = end;
        if (i < 3 && *s++ != ' ')
            return -1;
    }
    if (*s)
        return -1;
    c->samples = v[0];
    c->events = v[1];
    c->dropped = v[2];
    c->bytes = v[3];
    return 0;
}

int control_parse(const char *msg, size_t len, struct control_msg *m)
{
    memset(m, 0, sizeof *m);
    m->kind = CONTROL_UNKNOWN;
    if (len >= sizeof m->text || memchr(msg, '\0', len))
        return -1;
    char buf[CONTROL_MESSAGE_MAX];
    memcpy(buf, msg, len);
    buf[len] = '\0';
    char *space = strchr(buf, ' ');
    const char *args = space ? space + 1 : "";
    if (space)
        *space = '\0';
    enum control_kind kind = CONTROL_UNKNOWN;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (words[i] && !strcmp(buf, words[i]))
            kind = (enum control_kind)i;
    switch (kind) {
    case CONTROL_HELLO: {
        char *end;
        long pid = strtol(args, &end, 10);
        if (!*args || *end || pid <= 0)
            return -1;
        m->pid = pid;
        break;
    }
    case CONTROL_STATUS:
    case CONTROL_CLOSED:
        if (parse_counts(args, &m->counts) < 0)
            return -1;
        break;
    case CONTROL_LOG:
    case CONTROL_DORMANT:
    case CONTROL_CALL:
    case CONTROL_WATCH:
        snprintf(m->text, sizeof m->text, "%s", args);
        break;
    case CONTROL_DETACHED:
    case CONTROL_STOP:
    case CONTROL_ALONE:
    case CONTROL_RECORDING:
        if (*args)
            return -1;
        break;
    default:
        return -1;
    }
    m->kind = kind;
    return 0;
}

int control_send_fd(int sock, enum control_kind kind, int fd)
{
    const char *word = words[kind];
    struct iovec iov = {(void *)word, strlen(word)};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    for (;;) {
        ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n >= 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

int control_recv_fd(int sock, int timeout_ms, struct control_msg *m, int *fd)
{
    *fd = -1;
    struct pollfd p = {sock, POLLIN, 0};
    int r;
    while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
        ;
    if (r <= 0) {
        if (r == 0)
            errno = ETIMEDOUT;
        return -1;
    }
    char text[CONTROL_MESSAGE_MAX];
    struct iovec iov = {text, sizeof text};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } u;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf};
    ssize_t n;
    while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
        ;
    if (n <= 0) {
        if (n == 0)
            errno = ECONNRESET;
        return -1;
    }
    /* keep one descriptor; close any others a confused peer sent */
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int got;
            memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            if (*fd < 0)
                *fd = got;
            else
                close(got);
        }
    }
    control_parse(text, (size_t)n, m);
    return 0;
}
