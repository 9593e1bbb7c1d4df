/*
 * attach: `corscope record -p PID`: profiles a .NET process that is already
 * running, and leaves it running.
 *
 *   1. attach_check looks at the process (ps.h) and refuses, in one line,
 *      one that is gone, not .NET, another user's, without a diagnostics
 *      socket, on a runtime before .NET Core 3.1, that already has a profiler, or
 *      in another network namespace when corscope is not root.
 *      A process whose corscope agent stayed loaded after a watch (the
 *      runtime lets no profiler that rewrote code detach) is not refused:
 *      that agent takes the next watch session itself (rendezvous.h).
 *   2. attach_run listens on a control socket (session.h), sends the
 *      runtime AttachProfiler (ipc.h) with the agent's path and the
 *      settings as text in the client data (config_to_text: the agent
 *      reads no environment when attached), takes the agent's connection,
 *      and records until -d, Ctrl-C or the process's end; then the agent
 *      closes the recording and detaches, and the process runs on.
 *
 * A process in a container or with a private /tmp is reached across its
 * namespaces (container.h): its socket under its own root, its own pid,
 * the agent by a path it sees, the control line in its network namespace.
 * The recording is never opened by the process: record creates it where
 * it was asked, as the user who asked, and the agent gets it open over the
 * control line (common/control.h).
 */
#ifndef CORSCOPE_ATTACH_H
#define CORSCOPE_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/ps.h"
#include "common/config.h"
#include "common/visibility.h"

struct attach_target {
    struct dotnet_process proc;
    gid_t gid;
    int dormant; /* corscope's agent stayed loaded after a watch: it takes the next
                  * watch itself (cli/rendezvous.h), the runtime no new profiler */
};

/* Parses -p's value.  Returns 0, or -1 with the reason in err. */
HIDDEN int attach_parse_pid(const char *text, pid_t *pid, char *err, size_t err_size);
/* Returns 0 when corscope can attach to pid, else prints why and returns -1. */
HIDDEN int attach_check(pid_t pid, struct attach_target *t);
/* NAME-PID-YYYYmmdd-HHMMSS.corscope, NAME from the process. */
HIDDEN void attach_default_output(const struct attach_target *t, char *out, size_t size);
/* Attaches, records, detaches (see above).  Returns 0 when the recording
 * was closed, else 1 after printing why. */
HIDDEN int attach_run(const struct attach_target *t, const struct config *cfg, const char *agent,
                      const char *path, int file, uint64_t duration_ns, int quiet);
/* The same, with setup(session, ctx) called on the session before the
 * attach (`watch` takes the agent's call lines there). */
struct session;
HIDDEN int attach_run_with(const struct attach_target *t, const struct config *cfg,
                           const char *agent, const char *path, int file, uint64_t duration_ns,
                           int quiet, void (*setup)(struct session *s, void *ctx), void *ctx);

#endif
