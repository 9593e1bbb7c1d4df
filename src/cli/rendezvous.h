/*
 * rendezvous: the CLI's side of a dormant agent's socket
 * (agent/rendezvous.h): an agent that stayed loaded after a watch (the
 * runtime does not let it detach) takes the next session itself, since
 * the runtime refuses a second AttachProfiler.
 *
 * rendezvous_find looks for TMPDIR/corscope-agent-PID under the process's
 * root (its TMPDIR, its own pid: a container's too) and takes it only
 * when it is a socket of the process's user, readable and writable by
 * that user alone (0600); the descriptor it returns pins that file, and
 * rendezvous_ask connects through it (no path looked up twice).
 */
#ifndef CORSCOPE_CLI_RENDEZVOUS_H
#define CORSCOPE_CLI_RENDEZVOUS_H

#include <stddef.h>
#include <sys/types.h>

#include "common/visibility.h"

/* An O_PATH descriptor of the agent's socket, or -1 when there is none
 * fit to use. */
HIDDEN int rendezvous_find(pid_t pid, uid_t owner);
/* Sends the settings (config_to_text) and reads the agent's one-message
 * answer into answer ("ok", "busy", "no REASON").  Closes file.  Returns
 * 0, or -1 with why in answer (nobody listens: a stale file). */
HIDDEN int rendezvous_ask(int file, const char *text, size_t len, char *answer, size_t size);

#endif
