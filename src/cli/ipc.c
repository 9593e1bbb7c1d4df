/*
 * ipc: see ipc.h.
 */
#include "cli/ipc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
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

/* The process's TMPDIR as the runtime sees it (its initial environment),
 * with a trailing slash; /tmp/ when unset or unreadable. */
static void target_tmpdir(pid_t pid, char *out, size_t size)
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

int ipc_socket_path(pid_t pid, char *out, size_t size)
{
    char dir[PATH_MAX];
    target_tmpdir(pid, dir, sizeof dir);
    unsigned long long key;
    struct stat st;
    if (start_key(pid, &key) == 0) {
        int n = snprintf(out, size, "%sdotnet-diagnostic-%d-%llu-socket", dir, (int)pid, key);
        if (n > 0 && (size_t)n < size && stat(out, &st) == 0 && S_ISSOCK(st.st_mode))
            return 0;
    }
    /* the start time could not be read, or differs (a runtime that put the
     * socket elsewhere): the newest socket named for the pid */
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "dotnet-diagnostic-%d-", (int)pid);
    time_t newest = 0;
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0 || len < 7 ||
            strcmp(e->d_name + len - 7, "-socket") != 0)
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode) || (found == 0 && st.st_mtime < newest))
            continue;
        if ((size_t)snprintf(out, size, "%s", path) >= size)
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

/* Waits until fd is ready for `events` or the deadline passes. */
static int wait_fd(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {fd, events, 0};
        int r = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

static int read_full(int fd, uint8_t *buf, size_t n, long long deadline)
{
    size_t got = 0;
    while (got < n) {
        if (wait_fd(fd, POLLIN, deadline) < 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = ECONNRESET;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int ipc_request(const char *socket_path, const uint8_t *msg, size_t msg_len, int timeout_ms,
                uint8_t *reply_set, uint8_t *reply_id, uint8_t *payload, size_t cap,
                size_t *payload_len, char *err, size_t err_size)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof sa.sun_path) {
        snprintf(err, err_size, "the socket's path is too long: %s", socket_path);
        return -1;
    }
    memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
    long long deadline = now_ms() + timeout_ms;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        snprintf(err, err_size, "cannot connect to %s: %s", socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t sent = 0;
    while (sent < msg_len) {
        ssize_t w = send(fd, msg + sent, msg_len - sent, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, err_size, "cannot send to %s: %s", socket_path, strerror(errno));
            close(fd);
            return -1;
        }
        sent += (size_t)w;
    }
    uint8_t header[IPC_HEADER_SIZE];
    if (read_full(fd, header, sizeof header, deadline) < 0) {
        snprintf(err, err_size, "no answer from the runtime: %s",
                 errno == ETIMEDOUT ? "timed out" : strerror(errno));
        close(fd);
        return -1;
    }
    size_t size = (size_t)header[14] | (size_t)header[15] << 8;
    if (memcmp(header, magic, sizeof magic) != 0 || size < IPC_HEADER_SIZE) {
        snprintf(err, err_size, "the runtime's answer is not in the diagnostics protocol");
        close(fd);
        return -1;
    }
    size_t want = size - IPC_HEADER_SIZE;
    uint8_t scratch[IPC_MESSAGE_MAX];
    if (read_full(fd, scratch, want, deadline) < 0) {
        snprintf(err, err_size, "the runtime's answer was cut short: %s", strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    *reply_set = header[16];
    *reply_id = header[17];
    *payload_len = want < cap ? want : cap;
    memcpy(payload, scratch, *payload_len);
    return 0;
}

int ipc_process_info(const char *socket_path, struct ipc_info *out, char *err, size_t err_size)
{
    for (int version2 = 1; version2 >= 0; version2--) {
        uint8_t msg[IPC_HEADER_SIZE], reply[IPC_MESSAGE_MAX], set, id;
        size_t len;
        ipc_encode(msg, sizeof msg, IPC_SET_PROCESS, version2 ? IPC_PROCESS_INFO2 : IPC_PROCESS_INFO,
                   NULL, 0);
        if (ipc_request(socket_path, msg, sizeof msg, 5000, &set, &id, reply, sizeof reply, &len,
                        err, err_size) < 0)
            return -1;
        if (set == IPC_SET_SERVER && id == IPC_REPLY_OK) {
            if (ipc_decode_info(reply, len, version2, out) < 0) {
                snprintf(err, err_size, "the runtime's process information is malformed");
                return -1;
            }
            return 0;
        }
        uint32_t hr = len >= 4 ? get32(reply) : 0;
        if (!version2 || hr != IPC_E_UNKNOWN_COMMAND) {
            snprintf(err, err_size, "the runtime refused ProcessInfo (0x%08x)", (unsigned)hr);
            return -1;
        }
    }
    return -1;
}

int ipc_attach_profiler(const char *socket_path, const uint8_t clsid[16], const char *library,
                        const void *data, size_t data_len, int timeout_ms, uint32_t *hresult,
                        char *err, size_t err_size)
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
    if (ipc_request(socket_path, msg, (size_t)n, timeout_ms, &set, &id, reply, sizeof reply, &len,
                    err, err_size) < 0)
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
