/*
 * session: `record`'s side of the control line (common/control.h) while a
 * recording runs, in both modes.  It listens on the control socket, takes
 * the agents' connections (attached: only the target's, checked with
 * SO_PEERCRED; launched: the processes of the program's tree, whatever
 * user they became, and processes of corscope's own user), prints their
 * log lines (escaped: termsafe.h), keeps their counts for the status line
 * (status.h), and
 * ends the recording: at the -d deadline or on Ctrl-C when attached, at the
 * deadline when launched (the program then gets SIGTERM, as from
 * `timeout`).
 *
 * The waits poll the control socket, the process (a pidfd: it wakes the
 * moment the process ends), and a self-pipe the signal handlers write to.
 */
#ifndef CORSCOPE_SESSION_H
#define CORSCOPE_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "cli/status.h"
#include "common/config.h"
#include "common/control.h"
#include "common/visibility.h"

/* Agents connected at once.  A slot is free again when its process hung
 * up; one more is told it records on its own ("alone", control.h) and the
 * user is warned. */
#define SESSION_MAX_PEERS 256

struct session_peer {
    int fd;      /* -1 once the agent hung up */
    pid_t pid;
    int hello, closed, detached, dormant;
    int given; /* attached: it has the recording's file (control.h) */
    struct control_counts counts;
};

struct session {
    int listen_fd;
    char address[CONFIG_CONTROL_MAX];
    pid_t only_pid; /* attached: the one process that may connect */
    pid_t tree_root; /* launched: the program, whose processes may connect */
    struct session_peer peers[SESSION_MAX_PEERS];
    int peer_count;  /* slots used so far (some may be free again: fd -1) */
    struct control_counts gone; /* of the agents whose slot was taken again */
    uint64_t refused;    /* connections of processes not ours */
    uint64_t unfollowed; /* agents told to record on their own: no slot free */
    struct status status;
    uint64_t start_ns;
    uint64_t first_sample_ns; /* when a count first showed a sample, 0 before */
    int ended_by_deadline;    /* launched: the program was stopped at -d */
    /* `watch`: its "call" and "watch" messages (NULL: ignored); setting
     * stop_wanted ends an attached session as -d would */
    void (*on_watch)(void *ctx, enum control_kind kind, const char *text);
    void *watch_ctx;
    int stop_wanted;
};

/* Listens on a fresh control address (s->address, for the settings).
 * Returns 0, or -1 with the reason in err. */
HIDDEN int session_open(struct session *s, pid_t only_pid, char *err, size_t err_size);
HIDDEN void session_close(struct session *s);

/* Launched: waits for the program (child) to end, with the status line and
 * the -d deadline (0: none).  Returns its wait status, or -1 when waiting
 * failed (printed). */
HIDDEN int session_wait_child(struct session *s, pid_t child, uint64_t duration_ns, int quiet);

/* Attached, after the runtime accepted the agent: takes its connection
 * (waiting up to timeout_ms for it).  Returns 0, or -1 when it never came
 * (the agent declined: its log lines, if any, are printed). */
HIDDEN int session_accept_agent(struct session *s, int timeout_ms);
/* Attached: takes the agent's connection if it came, and sends it the
 * recording's file (any agent that has none yet).  Returns 1 when an agent
 * has it, else 0. */
HIDDEN int session_give_recording(struct session *s, int file);
/* Prints what a declining agent said (its log lines).  Returns how many. */
HIDDEN int session_print_pending(struct session *s, int timeout_ms);
/* Attached: records until the deadline (0: none), Ctrl-C (SIGINT, TERM,
 * HUP) or the process's end; then asks the agent to stop and waits for the
 * recording to be closed and the detach to be confirmed.  Returns 0 when
 * the recording was closed (by the agent, or by the process's own end),
 * -1 when it was not (printed). */
HIDDEN int session_attached(struct session *s, pid_t target, uint64_t duration_ns, int quiet);

#endif
