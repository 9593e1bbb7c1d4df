/*
 * rendezvous: see rendezvous.h.
 */
#include "cli/rendezvous.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/container.h"
#include "cli/ipc.h"

/* How long the agent may take to answer (it answers before the session
 * starts). */
#define ANSWER_WAIT_MS 5000

int rendezvous_find(pid_t pid, uid_t owner)
{
    char root[64], tmp[PATH_MAX], path[PATH_MAX + 128];
    container_root(pid, root, sizeof root);
    ipc_tmpdir(pid, tmp, sizeof tmp);
    int n = snprintf(path, sizeof path, "%s%scorscope-agent-%d", root, tmp,
                     (int)container_inner_pid(pid));
    if (n < 0 || (size_t)n >= sizeof path)
        return -1;
    int fd = container_open(path, O_PATH | O_NOFOLLOW);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != owner ||
        (st.st_mode & 077)) {
        close(fd);
        return -1;
    }
    return fd;
}

int rendezvous_ask(int file, const char *text, size_t len, char *answer, size_t size)
{
    answer[0] = '\0';
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) {
        snprintf(answer, size, "socket: %s", strerror(errno));
        close(file);
        return -1;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d", file);
    struct timeval wait = {ANSWER_WAIT_MS / 1000, (ANSWER_WAIT_MS % 1000) * 1000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
    int rc = -1;
    if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        snprintf(answer, size, "nobody listens (%s)", strerror(errno));
        goto out;
    }
    if (send(s, text, len, MSG_NOSIGNAL) != (ssize_t)len) {
        snprintf(answer, size, "cannot send: %s", strerror(errno));
        goto out;
    }
    ssize_t n;
    do
        n = recv(s, answer, size - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        snprintf(answer, size, "no answer%s%s", n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
        goto out;
    }
    answer[n] = '\0';
    rc = 0;
out:
    close(s);
    close(file);
    return rc;
}
