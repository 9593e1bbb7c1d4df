/*
 * ipc: the client side of the .NET runtime's diagnostics IPC, the
 * protocol dotnet-trace and dotnet-counters speak: a Unix socket each
 * runtime opens at $TMPDIR/dotnet-diagnostic-PID-KEY-socket (KEY is the
 * process's start time in jiffies, field 22 of /proc/PID/stat), one command
 * per connection, little-endian, strings as a count of UTF-16 units (the
 * NUL included) and the units.
 *
 *   header   "DOTNET_IPC_V1\0", u16 size (header included), u8 command set,
 *            u8 command id, u16 0
 *   ProcessInfo2   set 4, id 4 (.NET 6): pid, cookie, command line, OS,
 *                  architecture, entry assembly, runtime version
 *   ProcessInfo    set 4, id 0 (.NET 5): the first five of those
 *   AttachProfiler set 3, id 1: u32 timeout ms, the profiler's CLSID (16
 *                  bytes, GUID layout), its path, u32 n and n bytes of
 *                  client data (InitializeForAttach gets them)
 *   reply    set 0xFF, id 0 (OK) or 0xFF (error: an i32 HRESULT)
 *
 * The encoders and decoders are pure functions over buffers (unit-tested);
 * ipc_request does the talking, every step bounded by one deadline (the
 * connect included: a full backlog is tried again, never waited on).
 */
#ifndef CORSCOPE_IPC_H
#define CORSCOPE_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/visibility.h"

#define IPC_HEADER_SIZE 20
#define IPC_MESSAGE_MAX 65535

enum {
    IPC_SET_PROFILER = 0x03,
    IPC_SET_PROCESS = 0x04,
    IPC_SET_SERVER = 0xFF,
    IPC_PROFILER_ATTACH = 0x01,
    IPC_PROCESS_INFO = 0x00,
    IPC_PROCESS_INFO2 = 0x04,
    IPC_REPLY_OK = 0x00,
    IPC_REPLY_ERROR = 0xFF,
};

/* Errors the runtime answers with (corerror.h, ds-protocol.h). */
#define IPC_E_UNKNOWN_COMMAND 0x80131385u
#define IPC_E_PROFILER_ALREADY_ACTIVE 0x8013136Au
#define IPC_E_PROFILER_NOT_ATTACHABLE 0x80131368u
#define IPC_E_FILE_NOT_FOUND 0x8007007Eu
/* the runtime is still starting: it takes no profiler yet */
#define IPC_E_NOT_YET_AVAILABLE 0x8013135Bu
#define IPC_E_RUNTIME_UNINITIALIZED 0x80131371u

struct ipc_info {
    uint64_t pid;
    char command[4096];
    char os[32];
    char arch[32];
    char entry[256];   /* ProcessInfo2 on, "" before */
    char version[64];  /* the runtime's, ProcessInfo2 on, "" before */
};

/* The diagnostics socket of a process: where the runtime puts it for that
 * process's TMPDIR (read from /proc/PID/environ) and start time, else the
 * newest dotnet-diagnostic-PID-*-socket there.  Returns 0, or -1 when it
 * has none. */
HIDDEN int ipc_socket_path(pid_t pid, char *out, size_t size);
/* The process's TMPDIR as the runtime sees it (its initial environment,
 * a path in its own mount namespace), with a trailing slash; /tmp/ when
 * unset or unreadable. */
HIDDEN void ipc_tmpdir(pid_t pid, char *out, size_t size);

/* Encoders: the whole message into buf.  Return its size, or -1 when it
 * does not fit (or a string is not UTF-8). */
HIDDEN long ipc_encode(uint8_t *buf, size_t size, uint8_t set, uint8_t id, const uint8_t *payload,
                       size_t payload_len);
HIDDEN long ipc_encode_attach(uint8_t *buf, size_t size, uint32_t timeout_ms,
                              const uint8_t clsid[16], const char *library, const void *data,
                              size_t data_len);
/* Decoders of reply payloads.  Return 0, or -1 when malformed. */
HIDDEN int ipc_decode_info(const uint8_t *p, size_t len, int version2, struct ipc_info *out);

/* One command: connect, send, read the reply's header and payload (at
 * most cap bytes kept).  Returns 0 with the reply's set and id, or -1 with
 * the reason in err (errno-style text, or a timeout). */
HIDDEN int ipc_request(const char *socket_path, const uint8_t *msg, size_t msg_len, int timeout_ms,
                       uint8_t *reply_set, uint8_t *reply_id, uint8_t *payload, size_t cap,
                       size_t *payload_len, char *err, size_t err_size);

/* What a caller does while it waits for the runtime's answer: when fd is
 * readable, ready(ctx) runs (attach: the agent, loaded and initializing,
 * connects to corscope's control socket before the runtime answers). */
struct ipc_waiter {
    int fd;
    void (*ready)(void *ctx);
    void *ctx;
};
/* ipc_request with a waiter (NULL for none). */
HIDDEN int ipc_request_waiting(const char *socket_path, const uint8_t *msg, size_t msg_len,
                               int timeout_ms, const struct ipc_waiter *w, uint8_t *reply_set,
                               uint8_t *reply_id, uint8_t *payload, size_t cap,
                               size_t *payload_len, char *err, size_t err_size);

/* ProcessInfo2, or ProcessInfo on a runtime before .NET 6.  Returns 0 or
 * -1 with the reason in err. */
HIDDEN int ipc_process_info(const char *socket_path, struct ipc_info *out, char *err,
                            size_t err_size);
/* The same of several processes at once, all within timeout_ms (a runtime
 * that accepts and never answers holds up no one else, and nothing longer
 * than that).  Each query's ok says whether its info was filled, else err
 * says why. */
struct ipc_query {
    const char *socket_path; /* in */
    struct ipc_info *info;   /* out */
    int ok;
    char err[256];
};
HIDDEN void ipc_process_info_many(struct ipc_query *q, size_t n, int timeout_ms);
/* AttachProfiler.  Returns 0 when the runtime answered (*hresult is its
 * answer, 0 for success), -1 with the reason in err when it did not. */
HIDDEN int ipc_attach_profiler(const char *socket_path, const uint8_t clsid[16], const char *library,
                               const void *data, size_t data_len, int timeout_ms,
                               const struct ipc_waiter *w, uint32_t *hresult, char *err,
                               size_t err_size);

#endif
