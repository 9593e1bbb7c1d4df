/*
 * control: the line between the corscope command and an agent it started
 * or attached to.  `record` listens on an abstract AF_UNIX SOCK_SEQPACKET
 * socket ("@corscope-PID-RANDOM", in the network namespace, so it needs no
 * file both sides can see) and passes its address in the settings (the
 * `control` key); the agent connects to it first thing in Initialize or
 * InitializeForAttach.  Each message is one packet of text, a word and its
 * arguments, so several threads of the agent can send without framing and
 * a full socket drops a whole message, never half of one.
 *
 *   agent -> corscope
 *     hello PID                   connected, from this process
 *     log TEXT                    one of the agent's log lines (when
 *                                 attached, the agent never writes to the
 *                                 service's stderr)
 *     status S E D B              every flush: samples, events, dropped
 *                                 (samples and events), bytes written
 *     closed S E D B              the recording is closed with its trailer
 *     detached                    the runtime confirmed the detach
 *     dormant TEXT                the runtime refused the detach: the agent
 *                                 stays loaded and does nothing
 *     call TID START DUR RECORDS  `watch`: one call of a watched method: its
 *                                 thread, start (CLOCK_MONOTONIC ns),
 *                                 duration (ns), and its values as records
 *                                 separated by TAB, fields by US (0x1f):
 *                                 METHOD; "a" NAME TYPE VALUE per argument;
 *                                 "m" (more arguments than read); "r" TYPE
 *                                 VALUE (the result); "t" TYPE MESSAGE (it
 *                                 threw).  VALUE is the text shown ("4",
 *                                 "\"sku-1\"", "int[3] {1, 2, 3}"); see
 *                                 cli/watch_call.h, which reads them
 *     watch WORD ARGS             `watch`: methods N (rewritten by ReJIT),
 *                                 none NEAR-NAMES, too-many MATCHED MAX,
 *                                 note TEXT (said to the user),
 *                                 failed WHAT, bad-where WHY (--where names
 *                                 no argument of a method, or compares it
 *                                 with a literal of another kind: nothing
 *                                 is rewritten), end CALLS UNFINISHED
 *                                 OVER-COUNT OVER-RATE QUEUE-FULL
 *                                 REWRITTEN LEFT UNSENT FILTERED
 *   corscope -> agent
 *     recording                   attached: the file to record into, an
 *                                 open descriptor passed with the message
 *                                 (SCM_RIGHTS), sent as soon as the agent
 *                                 connects; the agent opens no path of its
 *                                 own, so the file is the one corscope
 *                                 created where the user asked, on the
 *                                 host, whatever mount namespace, /tmp or
 *                                 user the process has
 *     stop                        close the recording and detach
 *     alone                       corscope does not follow this process
 *                                 (too many at once, or not one it
 *                                 started): record on, end with the
 *                                 process, say nothing more; the hang-up
 *                                 that follows is no stop
 *
 * The agent also stops when the connection ends (corscope was killed): a
 * service is never left profiled by a command that is gone.
 */
#ifndef CORSCOPE_CONTROL_H
#define CORSCOPE_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/visibility.h"

#define CONTROL_MESSAGE_MAX 1024

enum control_kind {
    CONTROL_UNKNOWN,
    CONTROL_HELLO,
    CONTROL_LOG,
    CONTROL_STATUS,
    CONTROL_CLOSED,
    CONTROL_DETACHED,
    CONTROL_DORMANT,
    CONTROL_STOP,
    CONTROL_ALONE,
    CONTROL_CALL,
    CONTROL_WATCH,
    CONTROL_RECORDING,
};

struct control_counts {
    uint64_t samples, events, dropped, bytes;
};

struct control_msg {
    enum control_kind kind;
    long pid;                     /* hello */
    struct control_counts counts; /* status, closed */
    char text[CONTROL_MESSAGE_MAX]; /* log, dormant, call, watch: the arguments */
};

/* The socket address of "@name" (abstract).  Returns 0, or -1 when the
 * text is not such an address. */
HIDDEN int control_sockaddr(const char *address, struct sockaddr_un *sa, socklen_t *len);
/* Formats one message of a kind that carries counts ("status", "closed"). */
HIDDEN int control_format_counts(char *out, size_t size, enum control_kind kind,
                                 const struct control_counts *c);
/* Parses one message of len bytes (no NUL needed).  Returns 0, or -1 for
 * text that is no message (m->kind is then CONTROL_UNKNOWN). */
HIDDEN int control_parse(const char *msg, size_t len, struct control_msg *m);

/* Sends one message of kind `kind` (no arguments) with descriptor fd
 * attached.  Returns 0, or -1 with errno. */
HIDDEN int control_send_fd(int sock, enum control_kind kind, int fd);
/* Receives one message, waiting up to timeout_ms; a descriptor that came
 * with it goes to *fd (close-on-exec), else *fd is -1.  Returns 0 with m
 * filled in (CONTROL_UNKNOWN for text that is no message), or -1 with
 * errno (ETIMEDOUT, or ECONNRESET when the other end is gone). */
HIDDEN int control_recv_fd(int sock, int timeout_ms, struct control_msg *m, int *fd);

#endif
