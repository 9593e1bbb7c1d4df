/*
 * launch: starting the program `corscope record` profiles, and waiting
 * for it.  The program gets our standard input, output and error
 * unchanged and the profiler's settings in its environment (CORECLR_* to
 * load the agent, CORSCOPE_* for the agent's configuration, see
 * common/config.h).  Signals sent to corscope (TERM, HUP, USR1, USR2) are
 * passed on to the program; INT and QUIT from the terminal already reach
 * it through its process group, so corscope ignores them while it waits,
 * as system(3) does.
 */
#ifndef CORSCOPE_LAUNCH_H
#define CORSCOPE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "cli/session.h"
#include "common/config.h"
#include "common/visibility.h"

/* The agent: beside the executable (the build tree), or in
 * PREFIX/lib/corscope when installed as PREFIX/bin/corscope.  Returns 0
 * with its path in out, or -1. */
HIDDEN int launch_find_agent(char *out, size_t size);
/* Runs the command with the agent loaded, recording into output, the
 * status line and -d's deadline kept by sess; returns its wait status, or
 * -1 when it could not be started (after printing why; *exec_errno set
 * when exec failed). */
HIDDEN int launch_run(char **cmd, const struct config *c, const char *agent, const char *output,
                      int *exec_errno, struct session *sess, uint64_t duration_ns, int quiet);
/* corscope's exit status for the program's wait status: the program's
 * own, or 128+N when signal N ended it. */
HIDDEN int launch_exit_status(int status);

#endif
