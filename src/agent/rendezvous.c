/*
 * rendezvous: see rendezvous.h.
 */
#include "agent/rendezvous.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/log.h"

/* How long a connected corscope may take to send its settings. */
#define REQUEST_WAIT_MS 2000

static struct {
    int fd;                   /* listening, -1 when not */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    pthread_t thread;
    int started;
    _Atomic int ready;        /* dormant: a session may start */
    _Atomic int closing;
    struct agent *agent;
    rendezvous_take_fn take;
} R = {.fd = -1};

static void reply(int c, const char *text)
{
    ssize_t n = send(c, text, strlen(text), MSG_NOSIGNAL);
    (void)n;
}

/* Answers one connection, and closes it. */
static void answer(int c)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
        (cred.uid != geteuid() && cred.uid != 0)) {
        log_debug("rendezvous: a peer of uid %u refused", (unsigned)cred.uid);
        close(c); /* not the process's user: no word */
        return;
    }
    struct timeval wait = {REQUEST_WAIT_MS / 1000, (REQUEST_WAIT_MS % 1000) * 1000};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    static char text[CONFIG_TEXT_MAX + 1];
    ssize_t n;
    do
        n = recv(c, text, sizeof text, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0 || (size_t)n > CONFIG_TEXT_MAX) {
        close(c);
        return;
    }
    if (!atomic_load(&R.ready)) {
        reply(c, "busy");
        close(c);
        return;
    }
    static struct config cfg;
    char err[256];
    if (config_from_text(&cfg, text, (size_t)n, err, sizeof err) < 0) {
        char why[400];
        snprintf(why, sizeof why, "no the settings are not this agent's (%.200s): is corscope of "
                 "another version?", err);
        reply(c, why);
        close(c);
        return;
    }
    if (!cfg.watch[0]) {
        reply(c, "no this agent stays loaded after a watch (the runtime does not let it "
                 "detach) and takes further watch sessions, not recordings");
        close(c);
        return;
    }
    /* said before the session starts: it waits for corscope, which
     * waits for this answer */
    atomic_store(&R.ready, 0);
    reply(c, "ok");
    close(c);
    char why[256] = "";
    if (R.take(R.agent, &cfg, why, sizeof why) < 0) {
        log_warn("the next session did not start: %s; the agent stays dormant", why);
        atomic_store(&R.ready, 1);
    }
}

static void *serve(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "corscope-idle");
    while (!atomic_load(&R.closing)) {
        int c = accept4(R.fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (atomic_load(&R.closing) || errno == EINVAL || errno == EBADF)
                break;
            struct timespec pause = {0, 100000000}; /* out of descriptors: later */
            nanosleep(&pause, NULL);
            continue;
        }
        answer(c);
    }
    return NULL;
}

/* TMPDIR/corscope-agent-PID, where the runtime puts its diagnostics
 * socket.  Returns 0, or -1 when it does not fit. */
static int socket_path(char *out, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !tmp[0])
        tmp = "/tmp";
    size_t len = strlen(tmp);
    int n = snprintf(out, size, "%s%s" RENDEZVOUS_PREFIX "%ld", tmp,
                     tmp[len - 1] == '/' ? "" : "/", (long)getpid());
    return n > 0 && (size_t)n < size ? 0 : -1;
}

static int make_socket(void)
{
    if (socket_path(R.path, sizeof R.path) < 0) {
        log_warn("rendezvous: the temporary directory's path is too long for a socket");
        return -1;
    }
    struct stat st;
    if (lstat(R.path, &st) == 0) {
        /* a process of ours with this pid before (ended without Shutdown) */
        if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid() || unlink(R.path) < 0) {
            log_warn("rendezvous: %s is there and not a socket of ours to replace", R.path);
            return -1;
        }
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, R.path, strlen(R.path) + 1);
    /* bound, made 0600, and only then listening: nobody else can connect
     * in between (a connect before listen is refused) */
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        log_warn("rendezvous: cannot make %s: %s", R.path, strerror(errno));
        close(fd);
        return -1;
    }
    if (chmod(R.path, 0600) < 0 || listen(fd, 4) < 0) {
        log_warn("rendezvous: cannot listen on %s: %s", R.path, strerror(errno));
        unlink(R.path);
        close(fd);
        return -1;
    }
    R.fd = fd;
    return 0;
}

int rendezvous_listen(struct agent *a, rendezvous_take_fn take)
{
    if (!R.started) {
        R.agent = a;
        R.take = take;
        if (make_socket() < 0)
            return -1;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&R.thread, NULL, serve, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0) {
            log_warn("rendezvous: cannot start its thread: %s", strerror(rc));
            unlink(R.path);
            close(R.fd);
            R.fd = -1;
            return -1;
        }
        R.started = 1;
    }
    atomic_store(&R.ready, 1);
    log_info("dormant: the next `corscope watch -p` is taken at %s", R.path);
    return 0;
}

void rendezvous_close(void)
{
    if (!R.started)
        return;
    atomic_store(&R.closing, 1);
    atomic_store(&R.ready, 0);
    shutdown(R.fd, SHUT_RDWR); /* accept returns */
    pthread_join(R.thread, NULL);
    unlink(R.path);
    close(R.fd);
    R.fd = -1;
    R.started = 0;
}
