/*
 * control_client: the agent's end of the control line to the corscope command
 * (common/control.h): connected in Initialize or InitializeForAttach when
 * the settings name a control socket, closed when the agent goes away.
 *
 * Sending never blocks: a message that does not fit in the socket's buffer
 * (a corscope that stopped reading) is dropped whole.  Any thread may send;
 * only the loop reads (control_client_stop_wanted).  When the agent is attached,
 * its log lines go here instead of to the service's stderr (log.c).
 */
#ifndef CORSCOPE_CONTROL_CLIENT_H
#define CORSCOPE_CONTROL_CLIENT_H

#include "common/control.h"
#include "common/visibility.h"

/* Connects to the control socket at address and says hello, waiting at
 * most CONTROL_CLIENT_CONNECT_TIMEOUT_MS for room in its backlog.  Returns 0, or
 * -1 (nothing to close). */
#define CONTROL_CLIENT_CONNECT_TIMEOUT_MS 1000
HIDDEN int control_client_connect(const char *address);
HIDDEN int control_client_connected(void);
/* Sends one message (printf-style); dropped when it cannot go now. */
HIDDEN void control_client_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sends one message of len bytes now if it fits: 0 sent, -1 the socket
 * is full (try again later), 1 it cannot go (no line, an error). */
HIDDEN int control_client_try_send(const char *text, size_t len);
HIDDEN void control_client_send_counts(enum control_kind kind, const struct control_counts *c);
/* Attached: waits up to timeout_ms for the file to record into, which
 * corscope sends first thing (control.h: "recording").  Returns its
 * descriptor, or -1 (corscope is gone, said something else, or is of
 * another version). */
HIDDEN int control_client_receive_recording(int timeout_ms);
/* Loop: has corscope asked the agent to stop, or gone away?  Reads what
 * arrived without waiting.  Told "alone", the agent ends the line and
 * records on (0, then and after). */
HIDDEN int control_client_stop_wanted(void);
/* Ends the line (corscope sees its end) but keeps the descriptor: a
 * thread still sending sends on a dead socket, never on a file that took
 * its number.  For when callbacks may still run (Shutdown). */
HIDDEN void control_client_hangup(void);
/* Ends the line and closes it: only when nothing can send any more. */
HIDDEN void control_client_close(void);

#endif
