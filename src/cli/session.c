/*
 * session: see session.h.
 */
#include "cli/session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/termsafe.h"
#include "common/clock.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define REDRAW_MS 250
/* After a stop: how long the agent may take to close the recording (it
 * drains what was taken and writes the trailer: milliseconds, unless the
 * disk stalls) ... */
#define CLOSE_WAIT_NS 30000000000ull
/* ... and the runtime to confirm the detach (it waits at least 300 ms). */
#define DETACH_WAIT_NS 15000000000ull
/* Launched, after -d: how long the program may take to end after SIGTERM. */
#define TERM_WAIT_NS 10000000000ull

int session_open(struct session *s, pid_t only_pid, char *err, size_t err_size)
{
    memset(s, 0, sizeof *s);
    s->listen_fd = -1;
    s->only_pid = only_pid;
    for (int i = 0; i < SESSION_MAX_PEERS; i++)
        s->peers[i].fd = -1;
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = clock_now_ns() ^ ((uint64_t)getpid() << 32);
    snprintf(s->address, sizeof s->address, "@corscope-%d-%016llx", (int)getpid(),
             (unsigned long long)r);
    struct sockaddr_un sa;
    socklen_t len;
    control_sockaddr(s->address, &sa, &len);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, SOMAXCONN) < 0) {
        snprintf(err, err_size, "cannot open the control socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    s->listen_fd = fd;
    s->start_ns = clock_now_ns();
    return 0;
}

void session_close(struct session *s)
{
    status_end(&s->status);
    if (s->refused > 1)
        cli_warn("%llu control connections refused in all (processes neither of the recorded "
                 "program nor of your user)", (unsigned long long)s->refused);
    if (s->unfollowed > 1)
        cli_warn("%llu processes recorded on their own in all (more than %d at once)",
                 (unsigned long long)s->unfollowed, SESSION_MAX_PEERS);
    for (int i = 0; i < s->peer_count; i++) {
        if (s->peers[i].fd >= 0)
            close(s->peers[i].fd);
        s->peers[i].fd = -1;
    }
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    s->listen_fd = -1;
}

/* ---- the agents' messages ------------------------------------------------------ */

/* The parent of a process, from /proc/PID/stat (after the command's
 * closing parenthesis: the state, then the parent), or 0 when it is gone. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');
    char state;
    int parent;
    if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &parent) != 2)
        return 0;
    return (pid_t)parent;
}

/* Is pid the program or one of its descendants?  A process whose parent
 * ended was taken over by init (or a subreaper) and is no longer seen as
 * one. */
static int in_tree(pid_t pid, pid_t root)
{
    for (int depth = 0; pid > 1 && depth < 4096; depth++) {
        if (pid == root)
            return 1;
        pid = parent_of(pid);
    }
    return 0;
}

/* May the process at the other end talk to us?  Attached: the target, once.
 * Launched: the processes of the program's tree, whatever user they became
 * (a setuid program, su, a service dropping its privileges), and the
 * processes of corscope's own user (one that left the tree, as a daemon
 * does; a process of ours could do what it likes to corscope anyway).  No
 * one else: the socket is abstract, any local user can reach it, and
 * corscope may run as root. */
static int peer_allowed(const struct session *s, const struct ucred *cred)
{
    if (s->only_pid)
        return cred->pid == s->only_pid && s->peer_count == 0;
    return cred->uid == geteuid() || (s->tree_root > 0 && in_tree(cred->pid, s->tree_root));
}

/* A slot for a new agent: one whose process hung up (its counts kept in
 * s->gone), or a new one; NULL when SESSION_MAX_PEERS are connected. */
static struct session_peer *free_slot(struct session *s)
{
    for (int i = 0; i < s->peer_count; i++) {
        struct session_peer *p = &s->peers[i];
        if (p->fd < 0 && !s->only_pid) {
            s->gone.samples += p->counts.samples;
            s->gone.events += p->counts.events;
            s->gone.dropped += p->counts.dropped;
            s->gone.bytes += p->counts.bytes;
            return p;
        }
    }
    return s->peer_count < SESSION_MAX_PEERS ? &s->peers[s->peer_count++] : NULL;
}

/* An agent we do not follow goes on recording on its own: told so before
 * the hang-up, which it would otherwise take for corscope's end (a stop).
 * What it said is read first: a hang-up with its messages unread reaches
 * it as an error before our word. */
static void send_alone(int fd)
{
    char buf[CONTROL_MESSAGE_MAX];
    for (int i = 0; i < 64 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0; i++) {
    }
    send(fd, "alone", 5, MSG_DONTWAIT | MSG_NOSIGNAL);
    close(fd);
}

static void accept_peers(struct session *s)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0)
            return;
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
            !peer_allowed(s, &cred)) {
            if (s->only_pid) {
                close(fd);
                continue;
            }
            if (!s->refused++) {
                status_clear(&s->status);
                cli_warn("refused the control connection of process %d (uid %u): it is not a "
                         "process of the recorded program, nor of your user",
                         (int)cred.pid, (unsigned)cred.uid);
            }
            send_alone(fd);
            continue;
        }
        struct session_peer *p = free_slot(s);
        if (!p) {
            if (!s->unfollowed++) {
                status_clear(&s->status);
                cli_warn("more than %d .NET processes at once: process %d records on its own "
                         "(its recording is whole, but it is not in the status line, and -d "
                         "does not stop it)", SESSION_MAX_PEERS, (int)cred.pid);
            }
            send_alone(fd);
            continue;
        }
        memset(p, 0, sizeof *p);
        p->fd = fd;
        p->pid = cred.pid;
    }
}

/* One of an agent's log lines on our terminal: escaped, whoever sent it. */
static void print_agent_line(const char *text)
{
    char safe[4 * CONTROL_MESSAGE_MAX];
    fprintf(stderr, "corscope: %s\n", termsafe(text, safe, sizeof safe));
}

static void on_message(struct session *s, struct session_peer *p, const struct control_msg *m)
{
    switch (m->kind) {
    case CONTROL_HELLO:
        p->hello = 1;
        break;
    case CONTROL_LOG:
        status_clear(&s->status);
        print_agent_line(m->text);
        break;
    case CONTROL_STATUS:
        p->counts = m->counts;
        break;
    case CONTROL_CLOSED:
        p->counts = m->counts;
        p->closed = 1;
        break;
    case CONTROL_DETACHED:
        p->detached = 1;
        break;
    case CONTROL_CALL:
    case CONTROL_WATCH:
        if (s->on_watch) {
            status_clear(&s->status);
            s->on_watch(s->watch_ctx, m->kind, m->text);
        }
        break;
    case CONTROL_DORMANT:
        p->dormant = 1;
        status_clear(&s->status);
        print_agent_line(m->text);
        break;
    default:
        break;
    }
    if (!s->first_sample_ns && p->counts.samples)
        s->first_sample_ns = clock_now_ns();
}

/* Reads everything a peer sent; marks it gone at its end. */
static void read_peer(struct session *s, struct session_peer *p)
{
    while (p->fd >= 0) {
        char buf[CONTROL_MESSAGE_MAX];
        ssize_t n = recv(p->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            close(p->fd);
            p->fd = -1;
            return;
        }
        struct control_msg m;
        if (control_parse(buf, (size_t)n, &m) == 0)
            on_message(s, p, &m);
    }
}

static void send_stop(struct session *s)
{
    for (int i = 0; i < s->peer_count; i++)
        if (s->peers[i].fd >= 0)
            send(s->peers[i].fd, "stop", 4, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void totals(const struct session *s, struct control_counts *c)
{
    *c = s->gone;
    for (int i = 0; i < s->peer_count; i++) {
        c->samples += s->peers[i].counts.samples;
        c->events += s->peers[i].counts.events;
        c->dropped += s->peers[i].counts.dropped;
        c->bytes += s->peers[i].counts.bytes;
    }
}

/* Every agent that connected has closed its recording or is gone. */
static int all_closed(const struct session *s)
{
    for (int i = 0; i < s->peer_count; i++)
        if (!s->peers[i].closed && s->peers[i].fd >= 0)
            return 0;
    return 1;
}

static void draw(struct session *s, const char *note)
{
    struct control_counts c;
    totals(s, &c);
    status_draw(&s->status, clock_now_ns() - s->start_ns, &c, note);
}

/* One wait: up to timeout_ms for the control socket, the peers, and the
 * extra descriptors (each may be -1); what arrived is handled.  Returns
 * the poll flags seen on extra[0] and extra[1] (bit 0, bit 1). */
static int wait_once(struct session *s, int timeout_ms, int extra0, int extra1)
{
    struct pollfd p[2 + 1 + SESSION_MAX_PEERS];
    int n = 0;
    p[n++] = (struct pollfd){extra0, POLLIN, 0};
    p[n++] = (struct pollfd){extra1, POLLIN, 0};
    p[n++] = (struct pollfd){s->listen_fd, POLLIN, 0};
    for (int i = 0; i < s->peer_count; i++)
        p[n++] = (struct pollfd){s->peers[i].fd, POLLIN, 0};
    if (poll(p, (nfds_t)n, timeout_ms) <= 0)
        return 0;
    /* the agents that hung up first: their slots serve the new ones */
    int polled = s->peer_count;
    for (int i = 0; i < polled; i++)
        if (p[3 + i].revents)
            read_peer(s, &s->peers[i]);
    if (p[2].revents)
        accept_peers(s);
    return (p[0].revents ? 1 : 0) | (p[1].revents ? 2 : 0);
}

static int timeout_until(uint64_t now, uint64_t deadline, int most_ms)
{
    if (!deadline)
        return most_ms;
    if (deadline <= now)
        return 0;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms < (uint64_t)most_ms ? (int)ms : most_ms;
}

static int open_pidfd(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* ---- launched --------------------------------------------------------------------- */

int session_wait_child(struct session *s, pid_t child, uint64_t duration_ns, int quiet)
{
    status_begin(&s->status, STATUS_BOTTOM_ROW, quiet);
    s->tree_root = child;
    int pidfd = open_pidfd(child);
    uint64_t deadline = duration_ns ? s->start_ns + duration_ns : 0;
    uint64_t stop_at = 0, term_at = 0;
    int killed = 0;
    for (;;) {
        int status;
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child) {
            /* the agent's last words (the recording closed at Shutdown) */
            for (int i = 0; i < 20 && !all_closed(s); i++)
                wait_once(s, 10, -1, -1);
            if (pidfd >= 0)
                close(pidfd);
            status_end(&s->status);
            return status;
        }
        if (w < 0 && errno != EINTR) {
            status_end(&s->status);
            cli_error("waiting for the program: %s", strerror(errno));
            if (pidfd >= 0)
                close(pidfd);
            return -1;
        }
        uint64_t now = clock_now_ns();
        if (deadline && !stop_at && now >= deadline) {
            /* the recording ends now; the program is told to end after */
            send_stop(s);
            stop_at = now;
            s->ended_by_deadline = 1;
        }
        if (stop_at && !term_at && (all_closed(s) || now - stop_at >= CLOSE_WAIT_NS)) {
            kill(child, SIGTERM);
            term_at = now;
        }
        if (term_at && !killed && now - term_at >= TERM_WAIT_NS) {
            status_clear(&s->status);
            cli_warn("the program did not end %llu s after SIGTERM; killing it",
                     TERM_WAIT_NS / 1000000000ull);
            kill(child, SIGKILL);
            killed = 1;
        }
        int timeout = timeout_until(now, stop_at ? 0 : deadline, REDRAW_MS);
        if (pidfd < 0 && timeout > 50)
            timeout = 50; /* no pidfd: look for the child's end this often */
        wait_once(s, timeout, pidfd, -1);
        draw(s, stop_at ? "stopping" : NULL);
    }
}

/* ---- attached --------------------------------------------------------------------- */

static int wake_pipe[2] = {-1, -1};
static volatile sig_atomic_t interrupts;

static void drain_wake(void)
{
    char buf[64];
    while (wake_pipe[0] >= 0 && read(wake_pipe[0], buf, sizeof buf) > 0) {
    }
}

static void on_interrupt(int sig)
{
    (void)sig;
    interrupts++;
    int saved = errno;
    if (wake_pipe[1] >= 0) {
        ssize_t w = write(wake_pipe[1], "x", 1);
        (void)w;
    }
    errno = saved;
}

int session_accept_agent(struct session *s, int timeout_ms)
{
    uint64_t deadline = clock_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    for (;;) {
        accept_peers(s);
        if (s->peer_count > 0) {
            read_peer(s, &s->peers[0]);
            if (s->peers[0].fd >= 0)
                return 0;
            return -1; /* connected and gone: it declined */
        }
        uint64_t now = clock_now_ns();
        if (now >= deadline)
            return -1;
        struct pollfd p = {s->listen_fd, POLLIN, 0};
        poll(&p, 1, timeout_until(now, deadline, 100));
    }
}

int session_give_recording(struct session *s, int file)
{
    accept_peers(s);
    int given = 0;
    for (int i = 0; i < s->peer_count; i++) {
        struct session_peer *p = &s->peers[i];
        if (p->fd >= 0 && !p->given && control_send_fd(p->fd, CONTROL_RECORDING, file) == 0)
            p->given = 1;
        given |= p->given;
    }
    return given;
}

int session_print_pending(struct session *s, int timeout_ms)
{
    uint64_t deadline = clock_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    accept_peers(s);
    int printed = 0;
    for (int i = 0; i < s->peer_count; i++) {
        struct session_peer *p = &s->peers[i];
        while (p->fd >= 0 && clock_now_ns() < deadline) {
            char buf[CONTROL_MESSAGE_MAX];
            ssize_t n = recv(p->fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                struct pollfd pf = {p->fd, POLLIN, 0};
                poll(&pf, 1, 20);
                continue;
            }
            if (n <= 0) {
                close(p->fd);
                p->fd = -1;
                break;
            }
            struct control_msg m;
            if (control_parse(buf, (size_t)n, &m) == 0 && m.kind == CONTROL_LOG) {
                print_agent_line(m.text);
                printed++;
            }
        }
    }
    return printed;
}

int session_attached(struct session *s, pid_t target, uint64_t duration_ns, int quiet)
{
    struct session_peer *agent = &s->peers[0];
    s->start_ns = clock_now_ns();
    status_begin(&s->status, STATUS_INLINE, quiet);
    interrupts = 0;
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        wake_pipe[0] = wake_pipe[1] = -1;
    static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, saved[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(handled[i], &sa, &saved[i]);
    int pidfd = open_pidfd(target);
    uint64_t deadline = duration_ns ? s->start_ns + duration_ns : 0;
    int rc = 0, target_gone = 0;

    /* recording: until the deadline, a signal, or the end of the process
     * or of the agent */
    while (!interrupts && agent->fd >= 0 && !agent->closed && !s->stop_wanted) {
        uint64_t now = clock_now_ns();
        if (deadline && now >= deadline)
            break;
        int seen = wait_once(s, timeout_until(now, deadline, REDRAW_MS), pidfd, wake_pipe[0]);
        if (seen & 2)
            drain_wake();
        if (seen & 1) {
            target_gone = 1;
            break;
        }
        draw(s, NULL);
    }
    if (target_gone) {
        /* it ended on its own: its Shutdown closes the recording */
        for (int i = 0; i < 50 && agent->fd >= 0 && !agent->closed; i++)
            wait_once(s, 10, -1, -1);
        status_end(&s->status);
        cli_warn("process %d ended during the recording", (int)target);
        rc = agent->closed ? 0 : -1;
        goto out;
    }
    if (agent->fd < 0 && !agent->closed) {
        status_end(&s->status);
        cli_error("the agent in process %d went away without closing the recording", (int)target);
        rc = -1;
        goto out;
    }

    /* stopping: the agent closes the recording, then detaches */
    int interrupts_before = interrupts;
    send_stop(s);
    uint64_t stop_at = clock_now_ns();
    while (!agent->closed && agent->fd >= 0 && interrupts == interrupts_before &&
           clock_now_ns() - stop_at < CLOSE_WAIT_NS) {
        int seen = wait_once(s, REDRAW_MS, pidfd, wake_pipe[0]);
        if (seen & 2)
            drain_wake();
        draw(s, "stopping");
        if (seen & 1) {
            for (int i = 0; i < 50 && agent->fd >= 0 && !agent->closed; i++)
                wait_once(s, 10, -1, -1);
            break;
        }
    }
    if (!agent->closed) {
        status_end(&s->status);
        if (interrupts != interrupts_before)
            cli_error("interrupted again: not waiting for the agent, which closes the recording "
                      "on its own now that corscope is gone");
        else
            cli_error("the agent in process %d did not close the recording", (int)target);
        rc = -1;
        goto out;
    }
    uint64_t closed_at = clock_now_ns();
    while (!agent->detached && !agent->dormant && agent->fd >= 0 &&
           interrupts == interrupts_before && clock_now_ns() - closed_at < DETACH_WAIT_NS) {
        if (wait_once(s, REDRAW_MS, -1, wake_pipe[0]) & 2)
            drain_wake();
        draw(s, "detaching");
    }
    status_end(&s->status);
    if (!agent->detached && !agent->dormant && !quiet)
        cli_warn("the runtime has not confirmed the detach yet; the agent finishes it on its own");

out:
    if (pidfd >= 0)
        close(pidfd);
    for (int i = 0; i < 3; i++)
        sigaction(handled[i], &saved[i], NULL);
    if (wake_pipe[0] >= 0) {
        close(wake_pipe[0]);
        close(wake_pipe[1]);
    }
    wake_pipe[0] = wake_pipe[1] = -1;
    return rc;
}
