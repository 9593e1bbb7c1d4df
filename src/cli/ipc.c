/*
 * ipc: see ipc.h.
 */
#include "cli/ipc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/container.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/utf.h"

static const char magic[14] = "DOTNET_IPC_V1";

/* ---- the socket's name ------------------------------------------------------ */

/* Field 22 of /proc/PID/stat (start time, jiffies after boot), read after
 * the last ')' since the command name may hold anything. */
static int start_key(pid_t pid, unsigned long long *key)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    /* fields 3 .. : state is field 3, start time field 22 */
    for (int field = 3; field <= 22; field++) {
        while (*p == ' ')
            p++;
        if (field == 22) {
            char *end;
            *key = strtoull(p, &end, 10);
            return end == p ? -1 : 0;
        }
        p = strchr(p, ' ');
        if (!p)
            return -1;
    }
    return -1;
}

void ipc_tmpdir(pid_t pid, char *out, size_t size)
{
    snprintf(out, size, "/tmp/");
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char *entry = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getdelim(&entry, &cap, '\0', f)) > 0) {
        if (!strncmp(entry, "TMPDIR=", 7) && entry[7]) {
            const char *dir = entry + 7;
            size_t len = strlen(dir);
            snprintf(out, size, "%s%s", dir, dir[len - 1] == '/' ? "" : "/");
            break;
        }
    }
    free(entry);
    fclose(f);
}

/* A socket file at path (under /proc/PID/root/: inside that root)? */
static int is_socket(const char *path)
{
    int fd = container_open(path, O_PATH | O_NOFOLLOW);
    struct stat st;
    int yes = fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
    if (fd >= 0)
        close(fd);
    return yes;
}

/* When the process started, in seconds of the wall clock (the boot time
 * plus its start in clock ticks); 0 when it cannot be read. */
static time_t started_at(pid_t pid)
{
    unsigned long long ticks;
    if (start_key(pid, &ticks) < 0)
        return 0;
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return 0;
    char line[256];
    unsigned long long boot = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %llu", &boot) == 1)
            break;
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return boot && hz > 0 ? (time_t)(boot + ticks / (unsigned long long)hz) : 0;
}

int ipc_socket_path(pid_t pid, char *out, size_t size)
{
    /* in a container: its /tmp (or TMPDIR), and the pid it knows itself by */
    char root[64], tmp[PATH_MAX], dir[PATH_MAX + 64];
    container_root(pid, root, sizeof root);
    ipc_tmpdir(pid, tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s%s", root, tmp);
    pid_t inner = container_inner_pid(pid);
    unsigned long long key;
    struct stat st;
    if (start_key(pid, &key) == 0) {
        int n = snprintf(out, size, "%sdotnet-diagnostic-%d-%llu-socket", dir, (int)inner, key);
        if (n > 0 && (size_t)n < size && is_socket(out))
            return 0;
    }
    /* the start time could not be read, or differs (a runtime that put the
     * socket elsewhere, a time namespace): the newest socket named for the
     * pid, made since the process started (an older one is an earlier
     * process's of the same pid, left by a kill: nobody answers on it) */
    time_t since = started_at(pid);
    int dfd = container_open(dir, O_RDONLY | O_DIRECTORY);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "dotnet-diagnostic-%d-", (int)inner);
    time_t newest = 0;
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0 || len < 7 ||
            strcmp(e->d_name + len - 7, "-socket") != 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode) ||
            (found == 0 && st.st_mtime < newest) || (since && st.st_mtime + 2 < since))
            continue;
        if ((size_t)snprintf(out, size, "%s%s", dir, e->d_name) >= size)
            continue;
        newest = st.st_mtime;
        found = 0;
    }
    closedir(d);
    return found;
}

/* ---- encoding ---------------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

long ipc_encode(uint8_t *buf, size_t size, uint8_t set, uint8_t id, const uint8_t *payload,
                size_t payload_len)
{
    size_t total = IPC_HEADER_SIZE + payload_len;
    if (total > IPC_MESSAGE_MAX || total > size)
        return -1;
    memcpy(buf, magic, sizeof magic);
    put16(buf + 14, (uint16_t)total);
    buf[16] = set;
    buf[17] = id;
    put16(buf + 18, 0);
    if (payload_len)
        memcpy(buf + IPC_HEADER_SIZE, payload, payload_len);
    return (long)total;
}

long ipc_encode_attach(uint8_t *buf, size_t size, uint32_t timeout_ms, const uint8_t clsid[16],
                       const char *library, const void *data, size_t data_len)
{
    uint16_t path[4096];
    long units = utf8_to_utf16(library, path, sizeof path / sizeof path[0]);
    if (units < 0)
        return -1;
    size_t n = (size_t)units + 1; /* the NUL travels too */
    size_t payload = 4 + 16 + 4 + 2 * n + 4 + data_len;
    if (IPC_HEADER_SIZE + payload > IPC_MESSAGE_MAX || IPC_HEADER_SIZE + payload > size)
        return -1;
    uint8_t *p = buf + IPC_HEADER_SIZE;
    put32(p, timeout_ms);
    memcpy(p + 4, clsid, 16);
    put32(p + 20, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        put16(p + 24 + 2 * i, path[i]);
    put32(p + 24 + 2 * n, (uint32_t)data_len);
    if (data_len)
        memcpy(p + 28 + 2 * n, data, data_len);
    /* the header last: ipc_encode with the payload already in place */
    memcpy(buf, magic, sizeof magic);
    put16(buf + 14, (uint16_t)(IPC_HEADER_SIZE + payload));
    buf[16] = IPC_SET_PROFILER;
    buf[17] = IPC_PROFILER_ATTACH;
    put16(buf + 18, 0);
    return (long)(IPC_HEADER_SIZE + payload);
}

/* ---- decoding ---------------------------------------------------------------- */

/* A string at *at: u32 units (NUL included; 0 for none), then the units. */
static int get_string(const uint8_t *p, size_t len, size_t *at, char *out, size_t size)
{
    if (*at + 4 > len)
        return -1;
    uint32_t units = get32(p + *at);
    *at += 4;
    if (units > (len - *at) / 2)
        return -1;
    uint16_t tmp[4096];
    size_t keep = units < sizeof tmp / sizeof tmp[0] ? units : sizeof tmp / sizeof tmp[0];
    for (size_t i = 0; i < keep; i++)
        tmp[i] = (uint16_t)(p[*at + 2 * i] | p[*at + 2 * i + 1] << 8);
    utf16_to_utf8(tmp, keep, out, size);
    *at += 2 * (size_t)units;
    return 0;
}

int ipc_decode_info(const uint8_t *p, size_t len, int version2, struct ipc_info *out)
{
    memset(out, 0, sizeof *out);
    if (len < 24)
        return -1;
    out->pid = get64(p);
    size_t at = 24; /* pid, then the 16-byte runtime cookie */
    if (get_string(p, len, &at, out->command, sizeof out->command) < 0 ||
        get_string(p, len, &at, out->os, sizeof out->os) < 0 ||
        get_string(p, len, &at, out->arch, sizeof out->arch) < 0)
        return -1;
    if (version2 && (get_string(p, len, &at, out->entry, sizeof out->entry) < 0 ||
                     get_string(p, len, &at, out->version, sizeof out->version) < 0))
        return -1;
    return 0;
}

/* ---- talking ----------------------------------------------------------------- */

static long long now_ms(void)
{
    return (long long)(clock_now_ns() / 1000000);
}

/* One command on a connection of its own, driven without blocking, so that
 * several go at once (ps asks every process together) and no step waits
 * past the deadline: connecting (a backlog that is full is tried again),
 * sending, reading the reply's header, then its payload. */
enum call_stage { CALL_CONNECT, CALL_SEND, CALL_HEADER, CALL_PAYLOAD, CALL_DONE, CALL_FAILED };

struct ipc_call {
    const char *path;
    const uint8_t *msg;
    size_t msg_len;
    uint8_t *payload; /* cap bytes kept of the answer's payload */
    size_t cap;
    /* the answer */
    uint8_t set, id;
    size_t len;
    char err[256];
    /* progress */
    enum call_stage stage;
    int fd;
    size_t sent, got, want;
    uint8_t header[IPC_HEADER_SIZE];
};

static void call_fail(struct ipc_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void call_fail(struct ipc_call *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->stage = CALL_FAILED;
}

static void call_connect(struct ipc_call *c)
{
    /* container_connect: a socket inside a container's root, or a path
     * longer than sun_path, is reached through a descriptor of it */
    if (container_connect(c->fd, c->path) == 0)
        c->stage = CALL_SEND;
    else if (errno != EAGAIN && errno != EINTR)
        call_fail(c, "cannot connect to %s: %s", c->path, strerror(errno));
}

static void call_start(struct ipc_call *c)
{
    c->fd = -1;
    c->sent = c->got = c->want = c->len = 0;
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->fd < 0) {
        call_fail(c, "cannot connect to %s: %s", c->path, strerror(errno));
        return;
    }
    c->stage = CALL_CONNECT;
    call_connect(c);
}

/* What was ready on the call's connection is done. */
static void call_step(struct ipc_call *c)
{
    if (c->stage == CALL_SEND) {
        ssize_t w = send(c->fd, c->msg + c->sent, c->msg_len - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (w <= 0) {
            call_fail(c, "cannot send to %s: %s", c->path, strerror(w < 0 ? errno : EPIPE));
            return;
        }
        c->sent += (size_t)w;
        if (c->sent == c->msg_len)
            c->stage = CALL_HEADER;
        return;
    }
    uint8_t scratch[4096];
    int header = c->stage == CALL_HEADER;
    size_t room = header ? sizeof c->header - c->got : c->want - c->got;
    if (room > sizeof scratch)
        room = sizeof scratch;
    ssize_t r = read(c->fd, header ? c->header + c->got : scratch, room);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        const char *why = strerror(r < 0 ? errno : ECONNRESET);
        if (header)
            call_fail(c, "no answer from the runtime at %s: %s", c->path, why);
        else
            call_fail(c, "the answer of the runtime at %s was cut short: %s", c->path, why);
        return;
    }
    if (!header) {
        if (c->got < c->cap)
            memcpy(c->payload + c->got, scratch,
                   (size_t)r < c->cap - c->got ? (size_t)r : c->cap - c->got);
        c->got += (size_t)r;
        if (c->got == c->want) {
            c->len = c->want < c->cap ? c->want : c->cap;
            c->stage = CALL_DONE;
        }
        return;
    }
    c->got += (size_t)r;
    if (c->got < sizeof c->header)
        return;
    size_t size = (size_t)c->header[14] | (size_t)c->header[15] << 8;
    if (memcmp(c->header, magic, sizeof magic) != 0 || size < IPC_HEADER_SIZE) {
        call_fail(c, "the answer of the runtime at %s is not in the diagnostics protocol", c->path);
        return;
    }
    c->set = c->header[16];
    c->id = c->header[17];
    c->want = size - IPC_HEADER_SIZE;
    c->got = 0;
    c->stage = c->want ? CALL_PAYLOAD : CALL_DONE;
}

/* Runs the calls together until each is done or failed, or the deadline
 * (CLOCK_MONOTONIC ms) passes: those not finished then fail. */
static void run_calls(struct ipc_call *calls, size_t n, long long deadline,
                      const struct ipc_waiter *w)
{
    for (size_t i = 0; i < n; i++)
        call_start(&calls[i]);
    struct pollfd one[2]; /* the call, and the waiter's descriptor */
    size_t one_at[1];
    struct pollfd *pfd = n == 1 ? one : mem_alloc((n + 1) * sizeof *pfd);
    size_t *at = n == 1 ? one_at : mem_alloc(n * sizeof *at);
    for (;;) {
        size_t k = 0;
        int connecting = 0;
        for (size_t i = 0; pfd && at && i < n; i++) {
            struct ipc_call *c = &calls[i];
            if (c->stage == CALL_CONNECT)
                call_connect(c);
            if (c->stage == CALL_CONNECT)
                connecting = 1;
            else if (c->stage == CALL_SEND || c->stage == CALL_HEADER || c->stage == CALL_PAYLOAD)
                pfd[k] = (struct pollfd){c->fd, c->stage == CALL_SEND ? POLLOUT : POLLIN, 0},
                at[k++] = i;
        }
        long long left = deadline - now_ms();
        if ((!k && !connecting) || left <= 0)
            break;
        /* a full backlog gives no event: it is tried again every 10 ms */
        int timeout = (int)(connecting && left > 10 ? 10 : left > 60000 ? 60000 : left);
        if (w)
            pfd[k] = (struct pollfd){w->fd, POLLIN, 0};
        int r = poll(pfd, (nfds_t)(k + (w != NULL)), timeout);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0 && w && (pfd[k].revents & POLLIN))
            w->ready(w->ctx);
        for (size_t j = 0; r > 0 && j < k; j++)
            if (pfd[j].revents)
                call_step(&calls[at[j]]);
    }
    for (size_t i = 0; i < n; i++) {
        struct ipc_call *c = &calls[i];
        if (!pfd || !at)
            call_fail(c, "cannot ask the runtime at %s: out of memory", c->path);
        else if (c->stage == CALL_CONNECT)
            call_fail(c, "cannot connect to %s: its backlog stays full (timed out)", c->path);
        else if (c->stage == CALL_SEND)
            call_fail(c, "cannot send to %s: timed out", c->path);
        else if (c->stage == CALL_HEADER)
            call_fail(c, "no answer from the runtime at %s: timed out", c->path);
        else if (c->stage == CALL_PAYLOAD)
            call_fail(c, "the answer of the runtime at %s was cut short: timed out", c->path);
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
    }
    if (n != 1) {
        mem_free(pfd);
        mem_free(at);
    }
}

int ipc_request(const char *socket_path, const uint8_t *msg, size_t msg_len, int timeout_ms,
                uint8_t *reply_set, uint8_t *reply_id, uint8_t *payload, size_t cap,
                size_t *payload_len, char *err, size_t err_size)
{
    return ipc_request_waiting(socket_path, msg, msg_len, timeout_ms, NULL, reply_set, reply_id,
                               payload, cap, payload_len, err, err_size);
}

int ipc_request_waiting(const char *socket_path, const uint8_t *msg, size_t msg_len,
                        int timeout_ms, const struct ipc_waiter *w, uint8_t *reply_set,
                        uint8_t *reply_id, uint8_t *payload, size_t cap, size_t *payload_len,
                        char *err, size_t err_size)
{
    struct ipc_call c;
    memset(&c, 0, sizeof c);
    c.path = socket_path;
    c.msg = msg;
    c.msg_len = msg_len;
    c.payload = payload;
    c.cap = cap;
    run_calls(&c, 1, now_ms() + timeout_ms, w);
    if (c.stage != CALL_DONE) {
        snprintf(err, err_size, "%s", c.err);
        return -1;
    }
    *reply_set = c.set;
    *reply_id = c.id;
    *payload_len = c.len;
    return 0;
}

/* ProcessInfo2 to every query not answered yet (ProcessInfo with
 * version2 0, to those that did not know ProcessInfo2); marks those it
 * answered, and those to ask again without ProcessInfo2 in *again. */
static void ask_info(struct ipc_query *q, size_t n, int version2, long long deadline,
                     int *again)
{
    uint8_t msg[IPC_HEADER_SIZE];
    ipc_encode(msg, sizeof msg, IPC_SET_PROCESS, version2 ? IPC_PROCESS_INFO2 : IPC_PROCESS_INFO,
               NULL, 0);
    struct ipc_call *calls = mem_calloc(n, sizeof *calls);
    uint8_t *replies = mem_alloc(n * (size_t)IPC_MESSAGE_MAX);
    size_t *of = mem_alloc(n * sizeof *of);
    size_t m = 0;
    for (size_t i = 0; calls && replies && of && i < n; i++) {
        if (q[i].ok || (!version2 && !again[i]))
            continue;
        again[i] = 0;
        calls[m] = (struct ipc_call){.path = q[i].socket_path, .msg = msg, .msg_len = sizeof msg,
                                     .payload = replies + m * (size_t)IPC_MESSAGE_MAX,
                                     .cap = IPC_MESSAGE_MAX};
        of[m++] = i;
    }
    if (!calls || !replies || !of) {
        for (size_t i = 0; i < n; i++)
            if (!q[i].ok)
                snprintf(q[i].err, sizeof q[i].err, "out of memory");
    }
    run_calls(calls, m, deadline, NULL);
    for (size_t j = 0; j < m; j++) {
        struct ipc_call *c = &calls[j];
        struct ipc_query *r = &q[of[j]];
        if (c->stage != CALL_DONE) {
            snprintf(r->err, sizeof r->err, "%s", c->err);
        } else if (c->set == IPC_SET_SERVER && c->id == IPC_REPLY_OK) {
            if (ipc_decode_info(c->payload, c->len, version2, r->info) == 0)
                r->ok = 1;
            else
                snprintf(r->err, sizeof r->err, "the runtime's process information is malformed");
        } else {
            uint32_t hr = c->len >= 4 ? get32(c->payload) : 0;
            if (version2 && hr == IPC_E_UNKNOWN_COMMAND)
                again[of[j]] = 1; /* .NET 5 */
            else
                snprintf(r->err, sizeof r->err, "the runtime refused ProcessInfo (0x%08x)",
                         (unsigned)hr);
        }
    }
    mem_free(calls);
    mem_free(replies);
    mem_free(of);
}

void ipc_process_info_many(struct ipc_query *q, size_t n, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    int *again = mem_calloc(n ? n : 1, sizeof *again);
    for (size_t i = 0; i < n; i++) {
        q[i].ok = 0;
        snprintf(q[i].err, sizeof q[i].err, "out of memory");
    }
    if (!again)
        return;
    ask_info(q, n, 1, deadline, again);
    ask_info(q, n, 0, deadline, again);
    mem_free(again);
}

int ipc_process_info(const char *socket_path, struct ipc_info *out, char *err, size_t err_size)
{
    struct ipc_query q = {.socket_path = socket_path, .info = out};
    ipc_process_info_many(&q, 1, 5000);
    if (!q.ok)
        snprintf(err, err_size, "%s", q.err);
    return q.ok ? 0 : -1;
}

int ipc_attach_profiler(const char *socket_path, const uint8_t clsid[16], const char *library,
                        const void *data, size_t data_len, int timeout_ms,
                        const struct ipc_waiter *w, uint32_t *hresult, char *err, size_t err_size)
{
    static uint8_t msg[IPC_MESSAGE_MAX];
    /* the timeout field bounds only the wait for a background GC when the
     * profiler turns on GC events in InitializeForAttach (ours does not) */
    long n = ipc_encode_attach(msg, sizeof msg, 5000, clsid, library, data, data_len);
    if (n < 0) {
        snprintf(err, err_size, "the attach request does not fit in one message (%zu bytes of "
                 "settings, and the agent's path)", data_len);
        return -1;
    }
    uint8_t reply[64], set, id;
    size_t len;
    if (ipc_request_waiting(socket_path, msg, (size_t)n, timeout_ms, w, &set, &id, reply,
                            sizeof reply, &len, err, err_size) < 0)
        return -1;
    if (set != IPC_SET_SERVER || len < 4) {
        snprintf(err, err_size, "unexpected answer to AttachProfiler (%02x %02x, %zu bytes)", set,
                 id, len);
        return -1;
    }
    *hresult = id == IPC_REPLY_OK ? 0 : get32(reply);
    if (id == IPC_REPLY_OK && get32(reply) != 0)
        *hresult = get32(reply);
    return 0;
}
